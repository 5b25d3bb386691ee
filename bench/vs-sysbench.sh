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
# Before/after: with DBMETER_BEFORE_BIN set (an older dbmeter build), every run
# cell measures sysbench, the "before" dbmeter and the dbmeter under test
# (DBMETER_BIN), in that order, and the table adds the before binary's tps and
# CPU us/tx and the after/before ratios. With ROUNDS=N each cell is measured N
# times (the tools alternating within each round) and the table shows, for each
# tool, the median over the rounds of tps and of CPU per transaction; the
# ratios are those of the medians. Prepare, cleanup and the peak-RSS cell
# always use the dbmeter under test.
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
#   DBMETER_BEFORE_BIN=path  also measure this (older) dbmeter in every run cell
#   ROUNDS=1                 measurements of each run cell; medians reported
#   SKIP_PREPARE_TIMING=1    no sysbench prepare, no prepare-time comparison (the
#                            tables are still prepared once, by DBMETER_BIN)
#   SKIP_RSS=1               no peak-RSS cell
# Raw tool output is kept in bench/out/vs-sysbench/<timestamp>/: per run cell
# <server>.<workload>.c<clients>[.r<round>].{sysbench,dbmeter,dbmeter-before}.*
# (.r<round> when ROUNDS > 1).
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
ROUNDS="${ROUNDS:-1}"
DBMETER_BEFORE_BIN="${DBMETER_BEFORE_BIN:-}"
SKIP_PREPARE_TIMING="${SKIP_PREPARE_TIMING:-0}"
SKIP_RSS="${SKIP_RSS:-0}"

# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
require_positive TIME TABLES TABLE_SIZE PREPARE_THREADS RSS_THREADS RSS_TIME ROUNDS
require_flag SKIP_PREPARE_TIMING SKIP_RSS
if [ -n "$DBMETER_BEFORE_BIN" ]; then
    [ -x "$DBMETER_BEFORE_BIN" ] || die "DBMETER_BEFORE_BIN: not an executable: $DBMETER_BEFORE_BIN"
fi
# Several rounds or a before binary: results.tsv gets the columns round and
# bf_tx bf_tps bf_cpu_s, and the report medians and after/before ratios.
EXTENDED=0
if [ "$ROUNDS" -gt 1 ] || [ -n "$DBMETER_BEFORE_BIN" ]; then EXTENDED=1; fi
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
                             # [round bf_tx bf_tps bf_cpu_s] (when EXTENDED=1; one line per round)
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
# usage: measure_dbmeter TAG WORKLOAD THREADS SECONDS [BINARY LABEL]
# (default: DBMETER_BIN, label "dbmeter"; the label names the output files)
measure_dbmeter() {
    local tag="$1" wl="$2" thr="$3" secs="$4" bin="${5:-$DBMETER_BIN}" label="${6:-dbmeter}"
    local jf="$OUT/$tag.$label.json" ef="$OUT/$tag.$label.stderr.txt" tf="$OUT/$tag.$label.time"
    /usr/bin/time -f '%U %S %M' -o "$tf" \
        "$bin" run "$wl" --db="$DB_URL" --tables="$TABLES" --table-size="$TABLE_SIZE" \
            --threads="$thr" --time="$secs" --format=json > "$jf" 2> "$ef" ||
        fail_tool "$ef" "$label run $wl --threads=$thr failed on $SERVER_NAME"
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

    # 1. prepare times (SKIP_PREPARE_TIMING=1: dbmeter's prepare only)
    log "cleanup (drops sbtest1..$TABLES)"
    dbm "$pre.cleanup0.txt" cleanup oltp_read_write
    local t0 t1 sb_prep db_prep
    if [ "$SKIP_PREPARE_TIMING" != 1 ]; then
        log "sysbench prepare: $TABLES tables x $TABLE_SIZE rows, $PREPARE_THREADS threads"
        t0="$(now)"
        sb "$pre.prepare.sysbench.txt" prepare oltp_read_write --threads="$PREPARE_THREADS"
        t1="$(now)"
        sb_prep="$(elapsed "$t0" "$t1")"
        log "  ${sb_prep} s"
        sb "$pre.cleanup1.txt" cleanup oltp_read_write
    fi
    log "dbmeter prepare: $TABLES tables x $TABLE_SIZE rows, $PREPARE_THREADS threads"
    t0="$(now)"
    dbm "$pre.prepare.dbmeter.txt" prepare oltp_read_write --threads="$PREPARE_THREADS"
    t1="$(now)"
    db_prep="$(elapsed "$t0" "$t1")"
    log "  ${db_prep} s ($(grep -m1 '^Loaded' "$pre.prepare.dbmeter.txt" || echo 'no Loaded line'))"
    grep -q '^Loaded' "$pre.prepare.dbmeter.txt" ||
        fail_tool "$pre.prepare.dbmeter.txt" "dbmeter prepare printed no 'Loaded' line"
    if [ "$SKIP_PREPARE_TIMING" != 1 ]; then
        printf '%s\tprepare_sysbench_s\t%s\n' "$srv" "$sb_prep" >> "$SUMMARY"
    fi
    printf '%s\tprepare_dbmeter_s\t%s\n' "$srv" "$db_prep" >> "$SUMMARY"

    # 2. runs: for each cell ROUNDS rounds of sysbench, [dbmeter before,] dbmeter
    local wl c rd tag at sbr bfr dbr sb_tx sb_tps sb_cpu bf_tx bf_tps bf_cpu db_tx db_tps db_cpu
    for wl in $WORKLOADS; do
        for c in $CLIENTS; do
            for ((rd = 1; rd <= ROUNDS; rd++)); do
                tag="$srv.$wl.c$c" at="$wl, $c clients"
                if [ "$ROUNDS" -gt 1 ]; then tag+=".r$rd" at+=", round $rd/$ROUNDS"; fi
                log "$at: sysbench"
                sbr="$(measure_sysbench "$tag" "$wl" "$c" "$TIME")"
                bf_tx="" bf_tps="" bf_cpu=""
                if [ -n "$DBMETER_BEFORE_BIN" ]; then
                    log "$at: dbmeter before"
                    bfr="$(measure_dbmeter "$tag" "$wl" "$c" "$TIME" "$DBMETER_BEFORE_BIN" dbmeter-before)"
                    read -r bf_tx bf_tps bf_cpu _ <<< "$bfr"
                fi
                log "$at: dbmeter"
                dbr="$(measure_dbmeter "$tag" "$wl" "$c" "$TIME")"
                read -r sb_tx sb_tps sb_cpu _ <<< "$sbr"
                read -r db_tx db_tps db_cpu _ <<< "$dbr"
                printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s' "$srv" "$wl" "$c" \
                    "$sb_tx" "$sb_tps" "$sb_cpu" "$db_tx" "$db_tps" "$db_cpu" >> "$RESULTS"
                if [ "$EXTENDED" = 1 ]; then
                    printf '\t%s\t%s\t%s\t%s' "$rd" "$bf_tx" "$bf_tps" "$bf_cpu" >> "$RESULTS"
                fi
                printf '\n' >> "$RESULTS"
            done
        done
    done

    # 3. peak RSS at RSS_THREADS connections
    local maxc="" need r
    if [ "$SKIP_RSS" != 1 ]; then
        maxc="$(max_connections "$srv" | tr -d '[:space:]')"
    fi
    need=$((RSS_THREADS + 2))  # the tool may open one more connection; keep one spare
    if [ "$SKIP_RSS" = 1 ]; then
        printf '%s\trss\tskipped (SKIP_RSS=1)\n' "$srv" >> "$SUMMARY"
    elif ! [[ "$maxc" =~ ^[0-9]+$ ]]; then
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
if [ "$EXTENDED" = 1 ]; then
    log "rounds=$ROUNDS dbmeter=$DBMETER_BIN before=${DBMETER_BEFORE_BIN:-(none)}"
fi
for srv in $SERVERS; do
    bench_server "$srv"
done

# --- report -------------------------------------------------------------------------
python3 - "$RESULTS" "$SUMMARY" "$TABLES" "$TABLE_SIZE" "$PREPARE_THREADS" "$RSS_THREADS" "$SERVERS" \
    "$ROUNDS" "$EXTENDED" "$DBMETER_BIN" "$DBMETER_BEFORE_BIN" <<'EOF' | tee "$OUT/report.txt"
import math, statistics, sys
(results_f, summary_f, tables, table_size, prep_threads, rss_threads, servers,
 rounds, extended, db_bin, before_bin) = sys.argv[1:]
rounds, extended = int(rounds), extended == "1"
before = bool(before_bin)
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

def us_per_tx(cpu, tx):
    return cpu / tx * 1e6 if tx else float("inf")

def spread(xs):  # (max - min) / median, in percent
    m = statistics.median(xs)
    return (max(xs) - min(xs)) / m * 100 if m else float("inf")

# One entry per cell (server, workload, clients), in run order: the rounds'
# tps and CPU us/tx of each tool ("sb", "bf" = before, "db" = under test).
cells_of = {}
for r in rows:
    cell = cells_of.setdefault((r[0], r[1], int(r[2])), {"sb": [], "bf": [], "db": []})
    cell["sb"].append((float(r[4]), us_per_tx(float(r[5]), int(r[3]))))
    cell["db"].append((float(r[7]), us_per_tx(float(r[8]), int(float(r[6])))))
    if len(r) > 9 and r[11]:
        cell["bf"].append((float(r[11]), us_per_tx(float(r[12]), int(float(r[10])))))

def med(pairs, i):
    return statistics.median(p[i] for p in pairs)

if before:
    head = ["workload", "clients", "sysbench tps", "before tps", "dbmeter tps", "tps ratio",
            "tps after/before", "sysbench CPU us/tx", "before CPU us/tx", "dbmeter CPU us/tx",
            "CPU ratio", "CPU after/before"]
else:
    head = ["workload", "clients", "sysbench tps", "dbmeter tps", "tps ratio",
            "sysbench CPU us/tx", "dbmeter CPU us/tx", "CPU ratio"]
if before:
    print()
    print(f"dbmeter (after): {db_bin}")
    print(f"before:          {before_bin}")
    print("tps ratio, CPU ratio: dbmeter/sysbench; after/before: dbmeter/before")
for srv in servers.split():
    print()
    over = ""
    if extended:
        over = (f"; tps and CPU us/tx: medians of {rounds} rounds" if rounds > 1
                else "; 1 round")
    print(f"=== {names[srv]} ({tables} tables x {int(table_size):,} rows{over}) ===")
    table, cells, spreads, ab = [], [], {"sb": [], "bf": [], "db": []}, []
    for (s, wl, c), m in cells_of.items():
        if s != srv:
            continue
        sb_tps, sb_us = med(m["sb"], 0), med(m["sb"], 1)
        db_tps, db_us = med(m["db"], 0), med(m["db"], 1)
        tps_r, cpu_r = ratio(db_tps, sb_tps), ratio(db_us, sb_us)
        cells.append((wl, c, tps_r, cpu_r))
        for k in spreads:
            if len(m[k]) > 1:
                spreads[k].append((spread([p[0] for p in m[k]]), f"{wl}@{c}"))
        if before:
            bf_tps, bf_us = med(m["bf"], 0), med(m["bf"], 1)
            ab_tps, ab_cpu = ratio(db_tps, bf_tps), ratio(db_us, bf_us)
            ab.append((ab_tps, ab_cpu))
            table.append([wl, str(c), f"{sb_tps:,.1f}", f"{bf_tps:,.1f}", f"{db_tps:,.1f}",
                          fmt_ratio(tps_r), fmt_ratio(ab_tps), f"{sb_us:,.1f}", f"{bf_us:,.1f}",
                          f"{db_us:,.1f}", fmt_ratio(cpu_r), fmt_ratio(ab_cpu)])
        else:
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

    if rounds > 1:
        tool = {"sb": "sysbench", "bf": "before", "db": "dbmeter"}
        parts = [f"{tool[k]} {v:.1f}% ({at})" for k, (v, at) in
                 ((k, max(spreads[k])) for k in ("sb", "bf", "db") if spreads[k])]
        print("largest tps spread over the rounds of a cell, (max-min)/median: "
              + ", ".join(parts))
    if before and ab:
        def gm(xs):
            xs = [x for x in xs if 0 < x < float("inf")]
            return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")
        t, u = [a for a, _ in ab], [b for _, b in ab]
        print(f"after/before over {len(ab)} cells: tps geomean {gm(t):.3f} "
              f"(min {fmt_ratio(min(t))}, max {fmt_ratio(max(t))}), CPU/tx geomean {gm(u):.3f} "
              f"(min {fmt_ratio(min(u))}, max {fmt_ratio(max(u))})")

    dp = float(summary[(srv, "prepare_dbmeter_s")])
    if (srv, "prepare_sysbench_s") in summary:
        sp = float(summary[(srv, "prepare_sysbench_s")])
        prep_r = ratio(sp, dp)
        print(f"prepare ({tables} x {int(table_size):,} rows, {prep_threads} threads): "
              f"sysbench {sp:.2f} s, dbmeter {dp:.2f} s, sysbench/dbmeter {fmt_ratio(prep_r)}")
    else:
        prep_r = None
        print(f"prepare ({tables} x {int(table_size):,} rows, {prep_threads} threads): "
              f"dbmeter {dp:.2f} s; sysbench not timed (SKIP_PREPARE_TIMING=1)")
    if (srv, "rss") in summary:
        print(f"peak RSS at {rss_threads} connections: {summary[(srv, 'rss')]}")
    else:
        sk = int(summary[(srv, "rss_sysbench_kb")])
        dk = int(summary[(srv, "rss_dbmeter_kb")])
        print(f"peak RSS at {rss_threads} connections: sysbench {sk / 1024:,.1f} MB, "
              f"dbmeter {dk / 1024:,.1f} MB, dbmeter/sysbench {fmt_ratio(ratio(dk, sk))}")

    print("goals:")
    if prep_r is None:
        print("  n/a   prepare sysbench/dbmeter >= 3: not measured (SKIP_PREPARE_TIMING=1)")
    else:
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
