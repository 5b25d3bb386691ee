#!/usr/bin/env bash
# Compare dbmeter with sysbench 1.0.20 against a local MariaDB and PostgreSQL.
#
# For each server:
#   1. Prepare: wall-clock time of `sysbench prepare` and of `dbmeter prepare`
#      of the same tables (cleanup in between). Goal: sysbench/dbmeter >= 3.
#   2. Runs (tables prepared once, by dbmeter): each workload at each client
#      count, sysbench then dbmeter for every cell. Per cell: throughput
#      (transactions/s) and client CPU per transaction = (user+sys CPU of the
#      client process, from /usr/bin/time) / transactions.
#      Goals: tps dbmeter/sysbench >= 1 (>= 1.3 for oltp_point_select at 4
#      clients); CPU per transaction dbmeter/sysbench <= 0.7.
#   3. Client peak RSS (/usr/bin/time %M) of a oltp_point_select run at 1,024
#      connections, when the server's max_connections allows that many.
#
# WARNING: the script drops the tables sbtest1..N (N = TABLES) in the target
# databases before it prepares, and again at the end.
#
# Servers: by default (MANAGED=1) the script starts its own MariaDB and
# PostgreSQL with `dbmeter server start` (sized for the benchmark: a 2 GB
# buffer pool / 1 GB shared_buffers, max_connections=1100 so that the 1,024
# connection cell can run, no TLS) and removes them at the end. MANAGED=0
# uses the servers named below instead.
#
# Environment overrides:
#   MANAGED=1                start and remove throwaway servers (default)
#   MARIADB_SETTINGS="innodb_buffer_pool_size=2G innodb_log_file_size=512M max_connections=1100"
#   PG_SETTINGS="shared_buffers=1GB max_wal_size=4GB max_connections=1100"
#   MYSQL_HOST=127.0.0.1 MYSQL_PORT=3306 MYSQL_USER=root MYSQL_DB=test   (MANAGED=0)
#   PG_HOST=127.0.0.1    PG_PORT=5432    PG_USER=postgres PG_DB=test     (MANAGED=0)
#   QUICK=1                  smoke test: TIME=2, TABLE_SIZE=20000, CLIENTS="1 4",
#                            MariaDB only, oltp_point_select and oltp_read_write
#   TIME=10                  seconds per run cell
#   TABLES=4 TABLE_SIZE=250000 PREPARE_THREADS=4
#   CLIENTS="1 4 16 64"
#   WORKLOADS="oltp_point_select oltp_read_only oltp_read_write"
#   SERVERS="mariadb postgres"
#   RSS_THREADS=1024 RSS_TIME=5
#   DBMETER_BIN=path         use this binary instead of building one
# Raw tool output is kept in bench/out/vs-sysbench/<timestamp>/.
set -euo pipefail
shopt -s inherit_errexit  # make failures inside $(...) stop the script

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

MYSQL_HOST="${MYSQL_HOST:-127.0.0.1}"
MYSQL_PORT="${MYSQL_PORT:-3306}"
MYSQL_USER="${MYSQL_USER:-root}"
MYSQL_DB="${MYSQL_DB:-test}"
PG_HOST="${PG_HOST:-127.0.0.1}"
PG_PORT="${PG_PORT:-5432}"
PG_USER="${PG_USER:-postgres}"
PG_DB="${PG_DB:-test}"

QUICK="${QUICK:-0}"
if [ "$QUICK" = 1 ]; then
    TIME="${TIME:-2}"
    TABLE_SIZE="${TABLE_SIZE:-20000}"
    CLIENTS="${CLIENTS:-1 4}"
    WORKLOADS="${WORKLOADS:-oltp_point_select oltp_read_write}"
    SERVERS="${SERVERS:-mariadb}"
fi
TIME="${TIME:-10}"
TABLES="${TABLES:-4}"
TABLE_SIZE="${TABLE_SIZE:-250000}"
PREPARE_THREADS="${PREPARE_THREADS:-4}"
CLIENTS="${CLIENTS:-1 4 16 64}"
WORKLOADS="${WORKLOADS:-oltp_point_select oltp_read_only oltp_read_write}"
SERVERS="${SERVERS:-mariadb postgres}"
RSS_THREADS="${RSS_THREADS:-1024}"
RSS_TIME="${RSS_TIME:-5}"

# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
require_positive TIME TABLES TABLE_SIZE PREPARE_THREADS RSS_THREADS RSS_TIME
for c in $CLIENTS; do
    [[ "$c" =~ ^[1-9][0-9]*$ ]] || die "CLIENTS must be positive integers: $c"
done
for w in $WORKLOADS; do
    case "$w" in
        oltp_point_select|oltp_read_only|oltp_read_write) ;;
        *) die "unknown workload in WORKLOADS: $w" ;;
    esac
done
check_servers "$SERVERS"
command -v python3 >/dev/null || die "python3 is required"
install_sysbench
[ -x /usr/bin/time ] || die "/usr/bin/time (GNU time) is required"

# 1,024 connections need more than 1,024 file descriptors.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

STAMP="$(date +%Y%m%d-%H%M%S)"
OUT="$ROOT/bench/out/vs-sysbench/$STAMP"
mkdir -p "$OUT"
RESULTS="$OUT/results.tsv"   # server workload clients sb_tx sb_tps sb_cpu_s db_tx db_tps db_cpu_s
: > "$RESULTS"
SUMMARY="$OUT/summary.tsv"   # server key value
: > "$SUMMARY"

build_dbmeter

# --- managed servers ---------------------------------------------------------------
MANAGED="${MANAGED:-1}"
MARIADB_SETTINGS="${MARIADB_SETTINGS:-innodb_buffer_pool_size=2G innodb_log_file_size=512M max_connections=1100}"
PG_SETTINGS="${PG_SETTINGS:-shared_buffers=1GB max_wal_size=4GB max_connections=1100}"
trap stop_managed EXIT
# Starts a server and points the MYSQL_* or PG_* variables at it.
start_server() { # SERVER
    local srv="$1" port
    start_managed "$srv" "bench-$srv-$STAMP"
    # MANAGED_URL: scheme://user@127.0.0.1:PORT/test
    port="${MANAGED_URL##*:}"; port="${port%%/*}"
    case "$srv" in
        mariadb) MYSQL_HOST=127.0.0.1 MYSQL_PORT="$port" MYSQL_USER=root MYSQL_DB=test ;;
        postgres) PG_HOST=127.0.0.1 PG_PORT="$port" PG_USER=postgres PG_DB=test ;;
    esac
}

# --- per-server settings: sets SB_ARGS (sysbench) and DB_URL (dbmeter) --------------
server_setup() { # SERVER
    case "$1" in
        mariadb)
            SB_ARGS=(--db-driver=mysql --mysql-host="$MYSQL_HOST" --mysql-port="$MYSQL_PORT"
                     --mysql-user="$MYSQL_USER" --mysql-db="$MYSQL_DB")
            DB_URL="mysql://$MYSQL_USER@$MYSQL_HOST:$MYSQL_PORT/$MYSQL_DB"
            SERVER_NAME="MariaDB ($MYSQL_HOST:$MYSQL_PORT/$MYSQL_DB)" ;;
        postgres)
            SB_ARGS=(--db-driver=pgsql --pgsql-host="$PG_HOST" --pgsql-port="$PG_PORT"
                     --pgsql-user="$PG_USER" --pgsql-db="$PG_DB")
            DB_URL="postgres://$PG_USER@$PG_HOST:$PG_PORT/$PG_DB"
            SERVER_NAME="PostgreSQL ($PG_HOST:$PG_PORT/$PG_DB)" ;;
    esac
}

# The server's max_connections, or an empty string if it cannot be read.
max_connections() { # SERVER
    case "$1" in
        mariadb)
            command -v mysql >/dev/null || return 0
            mysql -h "$MYSQL_HOST" -P "$MYSQL_PORT" -u "$MYSQL_USER" -N -B \
                -e 'SELECT @@max_connections' "$MYSQL_DB" 2>/dev/null || true ;;
        postgres)
            command -v psql >/dev/null || return 0
            psql -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d "$PG_DB" -X -A -t \
                -c 'SHOW max_connections' 2>/dev/null || true ;;
    esac
}

# --- tool invocations; all stop the script on a tool error --------------------
sb() { # LOG COMMAND WORKLOAD [OPTIONS...]
    local logf="$1" cmd="$2" wl="$3"; shift 3
    sysbench "$wl" "${SB_ARGS[@]}" --tables="$TABLES" --table-size="$TABLE_SIZE" "$@" "$cmd" \
        > "$logf" 2>&1 || fail_tool "$logf" "sysbench $cmd $wl failed on $SERVER_NAME"
}
dbm() { # LOG COMMAND WORKLOAD [OPTIONS...]
    local logf="$1" cmd="$2" wl="$3"; shift 3
    "$DBMETER_BIN" "$cmd" "$wl" --db="$DB_URL" --tables="$TABLES" --table-size="$TABLE_SIZE" "$@" \
        > "$logf" 2>&1 || fail_tool "$logf" "dbmeter $cmd $wl failed on $SERVER_NAME"
}


# Measured run of one tool; writes a line "TX TPS CPU_S MAXRSS_KB" on stdout.
# usage: measure_sysbench TAG WORKLOAD THREADS SECONDS
measure_sysbench() {
    local tag="$1" wl="$2" thr="$3" secs="$4"
    local logf="$OUT/$tag.sysbench.txt" tf="$OUT/$tag.sysbench.time"
    /usr/bin/time -f '%U %S %M' -o "$tf" \
        sysbench "$wl" "${SB_ARGS[@]}" --tables="$TABLES" --table-size="$TABLE_SIZE" \
            --threads="$thr" --time="$secs" --report-interval=0 run > "$logf" 2>&1 ||
        fail_tool "$logf" "sysbench run $wl --threads=$thr failed on $SERVER_NAME"
    python3 - "$logf" "$tf" <<'EOF' || fail_tool "$logf" "cannot parse sysbench output"
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"transactions:\s+(\d+)\s+\(([0-9.]+) per sec\.\)", text)
if not m:
    sys.exit("no 'transactions: N (X per sec.)' line in " + sys.argv[1])
u, s, rss = open(sys.argv[2]).read().split()[-3:]
print(m.group(1), m.group(2), float(u) + float(s), rss)
EOF
}
# usage: measure_dbmeter TAG WORKLOAD THREADS SECONDS
measure_dbmeter() {
    local tag="$1" wl="$2" thr="$3" secs="$4"
    local jf="$OUT/$tag.dbmeter.json" ef="$OUT/$tag.dbmeter.stderr.txt" tf="$OUT/$tag.dbmeter.time"
    /usr/bin/time -f '%U %S %M' -o "$tf" \
        "$DBMETER_BIN" run "$wl" --db="$DB_URL" --tables="$TABLES" --table-size="$TABLE_SIZE" \
            --threads="$thr" --time="$secs" --format=json > "$jf" 2> "$ef" ||
        fail_tool "$ef" "dbmeter run $wl --threads=$thr failed on $SERVER_NAME"
    python3 - "$jf" "$tf" <<'EOF' || fail_tool "$jf" "bad dbmeter JSON output"
import json, sys
doc = json.load(open(sys.argv[1]))
end = doc.get("end") or {}
if end.get("reason") not in ("time_limit", "event_limit"):
    sys.exit(f"dbmeter run ended with reason={end.get('reason')!r}: {end.get('error')}")
t = doc["totals"]
u, s, rss = open(sys.argv[2]).read().split()[-3:]
print(t["events"], t["events_per_s"], float(u) + float(s), rss)
EOF
}

# --- one server -------------------------------------------------------------------
bench_server() { # SERVER
    local srv="$1"
    if [ "$MANAGED" = 1 ]; then start_server "$srv"; fi
    server_setup "$srv"
    log "== $SERVER_NAME =="
    local pre="$OUT/$srv"

    # 1. prepare times
    log "cleanup (drops sbtest1..$TABLES)"
    dbm "$pre.cleanup0.txt" cleanup oltp_read_write
    log "sysbench prepare: $TABLES tables x $TABLE_SIZE rows, $PREPARE_THREADS threads"
    local t0 t1 sb_prep db_prep
    t0="$(now)"
    sb "$pre.prepare.sysbench.txt" prepare oltp_read_write --threads="$PREPARE_THREADS"
    t1="$(now)"
    sb_prep="$(elapsed "$t0" "$t1")"
    log "  ${sb_prep} s"
    sb "$pre.cleanup1.txt" cleanup oltp_read_write
    log "dbmeter prepare: $TABLES tables x $TABLE_SIZE rows, $PREPARE_THREADS threads"
    t0="$(now)"
    dbm "$pre.prepare.dbmeter.txt" prepare oltp_read_write --threads="$PREPARE_THREADS"
    t1="$(now)"
    db_prep="$(elapsed "$t0" "$t1")"
    log "  ${db_prep} s ($(grep -m1 '^Loaded' "$pre.prepare.dbmeter.txt" || echo 'no Loaded line'))"
    grep -q '^Loaded' "$pre.prepare.dbmeter.txt" ||
        fail_tool "$pre.prepare.dbmeter.txt" "dbmeter prepare printed no 'Loaded' line"
    printf '%s\tprepare_sysbench_s\t%s\n%s\tprepare_dbmeter_s\t%s\n' \
        "$srv" "$sb_prep" "$srv" "$db_prep" >> "$SUMMARY"

    # 2. runs, sysbench then dbmeter for each cell
    local wl c tag sbr dbr sb_tx sb_tps sb_cpu db_tx db_tps db_cpu
    for wl in $WORKLOADS; do
        for c in $CLIENTS; do
            tag="$srv.$wl.c$c"
            log "$wl, $c clients: sysbench"
            sbr="$(measure_sysbench "$tag" "$wl" "$c" "$TIME")"
            log "$wl, $c clients: dbmeter"
            dbr="$(measure_dbmeter "$tag" "$wl" "$c" "$TIME")"
            read -r sb_tx sb_tps sb_cpu _ <<< "$sbr"
            read -r db_tx db_tps db_cpu _ <<< "$dbr"
            printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$srv" "$wl" "$c" \
                "$sb_tx" "$sb_tps" "$sb_cpu" "$db_tx" "$db_tps" "$db_cpu" >> "$RESULTS"
        done
    done

    # 3. peak RSS at RSS_THREADS connections
    local maxc need r
    maxc="$(max_connections "$srv" | tr -d '[:space:]')"
    need=$((RSS_THREADS + 2))  # the tool may open one more connection; keep one spare
    if ! [[ "$maxc" =~ ^[0-9]+$ ]]; then
        printf '%s\trss\tskipped: could not read max_connections (mysql/psql client)\n' "$srv" >> "$SUMMARY"
    elif [ "$maxc" -lt "$need" ]; then
        printf '%s\trss\tskipped: max_connections=%s (%s connections need at least %s)\n' \
            "$srv" "$maxc" "$RSS_THREADS" "$need" >> "$SUMMARY"
    else
        log "peak RSS at $RSS_THREADS connections: sysbench"
        r="$(measure_sysbench "$srv.rss.t$RSS_THREADS" oltp_point_select "$RSS_THREADS" "$RSS_TIME")"
        printf '%s\trss_sysbench_kb\t%s\n' "$srv" "$(awk '{print $4}' <<< "$r")" >> "$SUMMARY"
        log "peak RSS at $RSS_THREADS connections: dbmeter"
        r="$(measure_dbmeter "$srv.rss.t$RSS_THREADS" oltp_point_select "$RSS_THREADS" "$RSS_TIME")"
        printf '%s\trss_dbmeter_kb\t%s\n' "$srv" "$(awk '{print $4}' <<< "$r")" >> "$SUMMARY"
    fi

    log "cleanup"
    dbm "$pre.cleanup2.txt" cleanup oltp_read_write
    if [ "$MANAGED" = 1 ]; then
        "$DBMETER_BIN" server stop "bench-$srv-$STAMP" --remove >/dev/null 2>&1 || true
    fi
}

log "raw output: $OUT"
log "tables=$TABLES table-size=$TABLE_SIZE time=${TIME}s clients=[$CLIENTS] workloads=[$WORKLOADS] servers=[$SERVERS]"
for srv in $SERVERS; do
    bench_server "$srv"
done

# --- report -------------------------------------------------------------------------
python3 - "$RESULTS" "$SUMMARY" "$TABLES" "$TABLE_SIZE" "$PREPARE_THREADS" "$RSS_THREADS" "$SERVERS" \
    <<'EOF' | tee "$OUT/report.txt"
import sys
results_f, summary_f, tables, table_size, prep_threads, rss_threads, servers = sys.argv[1:]
names = {"mariadb": "MariaDB", "postgres": "PostgreSQL"}
rows = [l.rstrip("\n").split("\t") for l in open(results_f) if l.strip()]
summary = {}
for l in open(summary_f):
    if l.strip():
        srv, key, val = l.rstrip("\n").split("\t", 2)
        summary[(srv, key)] = val

def ratio(a, b):
    return a / b if b else float("inf")

def fmt_ratio(r):
    return "inf" if r == float("inf") else f"{r:.2f}"

def pf(ok):
    return "PASS" if ok else "FAIL"

head = ["workload", "clients", "sysbench tps", "dbmeter tps", "tps ratio",
        "sysbench CPU us/tx", "dbmeter CPU us/tx", "CPU ratio"]
for srv in servers.split():
    print()
    print(f"=== {names[srv]} ({tables} tables x {int(table_size):,} rows) ===")
    table, cells = [], []
    for r in rows:
        if r[0] != srv:
            continue
        wl, c = r[1], int(r[2])
        sb_tx, sb_tps, sb_cpu = int(r[3]), float(r[4]), float(r[5])
        db_tx, db_tps, db_cpu = int(float(r[6])), float(r[7]), float(r[8])
        sb_us = sb_cpu / sb_tx * 1e6 if sb_tx else float("inf")
        db_us = db_cpu / db_tx * 1e6 if db_tx else float("inf")
        tps_r, cpu_r = ratio(db_tps, sb_tps), ratio(db_us, sb_us)
        cells.append((wl, c, tps_r, cpu_r))
        table.append([wl, str(c), f"{sb_tps:,.1f}", f"{db_tps:,.1f}", fmt_ratio(tps_r),
                      f"{sb_us:,.1f}", f"{db_us:,.1f}", fmt_ratio(cpu_r)])
    widths = [max(len(x) for x in col) for col in zip(head, *table)]
    line = lambda cols: " | ".join(
        x.ljust(w) if i < 1 else x.rjust(w) for i, (x, w) in enumerate(zip(cols, widths)))
    print(line(head))
    print("-+-".join("-" * w for w in widths))
    for t in table:
        print(line(t))
    print()

    sp = float(summary[(srv, "prepare_sysbench_s")])
    dp = float(summary[(srv, "prepare_dbmeter_s")])
    prep_r = ratio(sp, dp)
    print(f"prepare ({tables} x {int(table_size):,} rows, {prep_threads} threads): "
          f"sysbench {sp:.2f} s, dbmeter {dp:.2f} s, sysbench/dbmeter {fmt_ratio(prep_r)}")
    if (srv, "rss") in summary:
        print(f"peak RSS at {rss_threads} connections: {summary[(srv, 'rss')]}")
    else:
        sk = int(summary[(srv, "rss_sysbench_kb")])
        dk = int(summary[(srv, "rss_dbmeter_kb")])
        print(f"peak RSS at {rss_threads} connections: sysbench {sk / 1024:,.1f} MB, "
              f"dbmeter {dk / 1024:,.1f} MB, dbmeter/sysbench {fmt_ratio(ratio(dk, sk))}")

    print("goals:")
    print(f"  {pf(prep_r >= 3)}  prepare sysbench/dbmeter >= 3: {fmt_ratio(prep_r)}")
    bad = [f"{w}@{c}={fmt_ratio(t)}" for w, c, t, _ in cells if t < 1]
    lo = min((t for _, _, t, _ in cells), default=float("nan"))
    print(f"  {pf(not bad)}  tps ratio >= 1 in every cell (min {fmt_ratio(lo)})"
          + (f"; below: {', '.join(bad)}" if bad else ""))
    ps4 = [t for w, c, t, _ in cells if w == "oltp_point_select" and c == 4]
    if ps4:
        print(f"  {pf(ps4[0] >= 1.3)}  tps ratio >= 1.3 for oltp_point_select at 4 clients: "
              f"{fmt_ratio(ps4[0])}")
    else:
        print("  n/a   tps ratio >= 1.3 for oltp_point_select at 4 clients: not measured")
    bad = [f"{w}@{c}={fmt_ratio(u)}" for w, c, _, u in cells if u > 0.7]
    hi = max((u for _, _, _, u in cells), default=float("nan"))
    print(f"  {pf(not bad)}  CPU/tx ratio <= 0.7 in every cell (max {fmt_ratio(hi)})"
          + (f"; above: {', '.join(bad)}" if bad else ""))
EOF
log "raw output and report: $OUT"
