#!/usr/bin/env bash
# Scripted workloads: sysbench's own bundled Lua scripts run by dbmeter,
# against dbmeter's native workload of the same name and against sysbench
# 1.0.20 running the same script, on one managed server.
#
# For each workload and client count, ROUNDS rounds; in each round the three
# runs follow one another in a rotating order (native, scripted, sysbench;
# then scripted, sysbench, native; ...), so that none always runs first.
# Per cell: the median throughput (transactions/s) of each.
# Goals (issue 15):
#   scripted/sysbench >= 1 in every cell;
#   scripted/native >= 0.8 in every cell (within 20% of the native workload);
#   RSS_THREADS scripted users (sysbench's limit, 4,096) with a peak RSS
#   below sysbench's at the same thread count.
#
# Servers: `dbmeter server start` starts a throwaway server (sized with
# MARIADB_SETTINGS / PG_SETTINGS, max_connections for the RSS cell) and
# removes it at the end.
#
# Environment overrides:
#   SERVERS="mariadb"        or "postgres", or both
#   WORKLOADS="oltp_point_select oltp_read_write"
#   CLIENTS="1 4 16 64"      TIME=10   ROUNDS=3
#   TABLES=4 TABLE_SIZE=100000
#   RSS_THREADS=4096 RSS_TIME=10   (RSS_THREADS=0 skips the RSS cell; the
#                            servers allow that many connections, and
#                            MariaDB 4 prepared statements per connection)
#   SCRIPTS=/usr/share/sysbench   where sysbench's bundled scripts are
#   QUICK=1                  smoke test: TIME=2, ROUNDS=1, CLIENTS="1 4",
#                            TABLE_SIZE=10000, RSS_THREADS=256 RSS_TIME=3
#   DBMETER_BIN=path         use this binary instead of building one
# Raw tool output is kept in bench/out/lua/<timestamp>/.
set -euo pipefail
shopt -s inherit_errexit

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

QUICK="${QUICK:-0}"
if [ "$QUICK" = 1 ]; then
    TIME="${TIME:-2}"; ROUNDS="${ROUNDS:-1}"; CLIENTS="${CLIENTS:-1 4}"
    TABLE_SIZE="${TABLE_SIZE:-10000}"; RSS_THREADS="${RSS_THREADS:-256}"; RSS_TIME="${RSS_TIME:-3}"
fi
SERVERS="${SERVERS:-mariadb}"
WORKLOADS="${WORKLOADS:-oltp_point_select oltp_read_write}"
CLIENTS="${CLIENTS:-1 4 16 64}"
TIME="${TIME:-10}"
ROUNDS="${ROUNDS:-3}"
TABLES="${TABLES:-4}"
TABLE_SIZE="${TABLE_SIZE:-100000}"
RSS_THREADS="${RSS_THREADS:-4096}"
RSS_TIME="${RSS_TIME:-10}"
SCRIPTS="${SCRIPTS:-/usr/share/sysbench}"

# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
require_positive TIME ROUNDS TABLES TABLE_SIZE RSS_TIME
[[ "$RSS_THREADS" =~ ^[0-9]+$ ]] || die "RSS_THREADS must be a number"
for c in $CLIENTS; do
    [[ "$c" =~ ^[1-9][0-9]*$ ]] || die "CLIENTS must be positive integers: $c"
done
check_servers "$SERVERS"
install_sysbench
for w in $WORKLOADS; do
    [ -f "$SCRIPTS/$w.lua" ] || die "no $SCRIPTS/$w.lua (sysbench's bundled scripts)"
done
[ -x /usr/bin/time ] || die "/usr/bin/time (GNU time) is required"
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

STAMP="$(date +%Y%m%d-%H%M%S)"
OUT="$ROOT/bench/out/lua/$STAMP"
mkdir -p "$OUT"
RESULTS="$OUT/results.tsv"   # server workload clients round tool tps
: > "$RESULTS"
RSS="$OUT/rss.tsv"           # server tool peak_kb status
: > "$RSS"

build_dbmeter
MARIADB_SETTINGS="${MARIADB_SETTINGS:-innodb_buffer_pool_size=2G innodb_log_file_size=512M max_connections=$((RSS_THREADS + 100)) max_prepared_stmt_count=1048576}"
PG_SETTINGS="${PG_SETTINGS:-shared_buffers=1GB max_wal_size=4GB max_connections=$((RSS_THREADS + 100))}"
trap stop_managed EXIT

# Sets SB_ARGS and DB_URL for the managed server MANAGED_URL.
server_setup() { # SERVER
    local port="${MANAGED_URL##*:}"; port="${port%%/*}"
    case "$1" in
        mariadb)
            SB_ARGS=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$port"
                     --mysql-user=root --mysql-db=test)
            DB_URL="mysql://root@127.0.0.1:$port/test" ;;
        postgres)
            SB_ARGS=(--db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-port="$port"
                     --pgsql-user=postgres --pgsql-db=test)
            DB_URL="postgres://postgres@127.0.0.1:$port/test" ;;
    esac
}

# One measured run; prints "TPS PEAK_RSS_KB". TOOL: native, scripted, sysbench.
measure() { # TAG TOOL WORKLOAD THREADS SECONDS
    local tag="$1" tool="$2" wl="$3" thr="$4" secs="$5"
    local logf="$OUT/$tag.$tool.txt" tf="$OUT/$tag.$tool.time" target
    case "$tool" in
        sysbench)
            /usr/bin/time -f '%M' -o "$tf" sysbench "$SCRIPTS/$wl.lua" "${SB_ARGS[@]}" \
                --tables="$TABLES" --table-size="$TABLE_SIZE" --threads="$thr" \
                --time="$secs" --report-interval=0 run > "$logf" 2>&1 || return 1 ;;
        native|scripted)
            target="$wl"; [ "$tool" = scripted ] && target="$SCRIPTS/$wl.lua"
            /usr/bin/time -f '%M' -o "$tf" "$DBMETER_BIN" run "$target" --db="$DB_URL" \
                --tables="$TABLES" --table-size="$TABLE_SIZE" --threads="$thr" \
                --time="$secs" > "$logf" 2>&1 || return 1 ;;
    esac
    python3 - "$logf" "$tf" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"transactions:\s+(\d+)\s+\(([0-9.]+) per sec\.\)", text)
if not m:
    sys.exit("no 'transactions: N (X per sec.)' line in " + sys.argv[1])
print(m.group(2), open(sys.argv[2]).read().split()[-1])
EOF
}

bench_server() { # SERVER
    local srv="$1"
    start_managed "$srv" "bench-lua-$srv-$STAMP"
    server_setup "$srv"
    log "prepare: $TABLES tables x $TABLE_SIZE rows (dbmeter, native)"
    "$DBMETER_BIN" cleanup oltp_read_write --db="$DB_URL" --tables="$TABLES" > "$OUT/$srv.cleanup.txt" 2>&1 ||
        fail_tool "$OUT/$srv.cleanup.txt" "dbmeter cleanup failed"
    "$DBMETER_BIN" prepare oltp_read_write --db="$DB_URL" --tables="$TABLES" \
        --table-size="$TABLE_SIZE" --threads=2 > "$OUT/$srv.prepare.txt" 2>&1 ||
        fail_tool "$OUT/$srv.prepare.txt" "dbmeter prepare failed"
    local tools=(native scripted sysbench) wl c r i tool tag res
    for wl in $WORKLOADS; do
        for c in $CLIENTS; do
            for r in $(seq 1 "$ROUNDS"); do
                for i in 0 1 2; do
                    tool="${tools[$(( (i + r - 1) % 3 ))]}"
                    tag="$srv.$wl.c$c.r$r"
                    log "$srv $wl, $c clients, round $r: $tool"
                    res="$(measure "$tag" "$tool" "$wl" "$c" "$TIME")" ||
                        fail_tool "$OUT/$tag.$tool.txt" "$tool $wl --threads=$c failed"
                    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$srv" "$wl" "$c" "$r" "$tool" \
                        "${res%% *}" >> "$RESULTS"
                done
            done
        done
    done
    if [ "$RSS_THREADS" -gt 0 ]; then
        for tool in scripted sysbench; do
            log "$srv peak RSS at $RSS_THREADS threads: $tool"
            if res="$(measure "$srv.rss" "$tool" oltp_point_select "$RSS_THREADS" "$RSS_TIME")"; then
                printf '%s\t%s\t%s\tok\n' "$srv" "$tool" "${res##* }" >> "$RSS"
            else
                printf '%s\t%s\t0\tfailed: %s\n' "$srv" "$tool" \
                    "$(grep -v '^\s*$' "$OUT/$srv.rss.$tool.txt" | tail -n 1 | cut -c1-160)" >> "$RSS"
            fi
        done
    fi
    "$DBMETER_BIN" server stop "bench-lua-$srv-$STAMP" --remove >/dev/null 2>&1 || true
}

log "raw output: $OUT"
log "tables=$TABLES table-size=$TABLE_SIZE time=${TIME}s rounds=$ROUNDS clients=[$CLIENTS] workloads=[$WORKLOADS] servers=[$SERVERS]"
for srv in $SERVERS; do
    bench_server "$srv"
done

python3 - "$RESULTS" "$RSS" "$RSS_THREADS" <<'EOF' | tee "$OUT/report.txt"
import statistics, sys
from collections import defaultdict
results_f, rss_f, rss_threads = sys.argv[1:]
cells = defaultdict(lambda: defaultdict(list))
order = []
for l in open(results_f):
    if not l.strip():
        continue
    srv, wl, c, _r, tool, tps = l.rstrip("\n").split("\t")
    key = (srv, wl, int(c))
    if key not in order:
        order.append(key)
    cells[key][tool].append(float(tps))
names = {"mariadb": "MariaDB", "postgres": "PostgreSQL"}
head = ["server", "workload", "clients", "native tps", "scripted tps", "sysbench tps",
        "scripted/sysbench", "scripted/native"]
rows, fails = [], []
for key in order:
    srv, wl, c = key
    med = {t: statistics.median(v) for t, v in cells[key].items()}
    vs_sb = med["scripted"] / med["sysbench"] if med["sysbench"] else float("inf")
    vs_nat = med["scripted"] / med["native"] if med["native"] else float("inf")
    rows.append([names[srv], wl, str(c), f"{med['native']:,.0f}", f"{med['scripted']:,.0f}",
                 f"{med['sysbench']:,.0f}", f"{vs_sb:.2f}", f"{vs_nat:.2f}"])
    if vs_sb < 1:
        fails.append(f"{srv} {wl}@{c}: scripted/sysbench {vs_sb:.2f}")
    if vs_nat < 0.8:
        fails.append(f"{srv} {wl}@{c}: scripted/native {vs_nat:.2f}")
widths = [max(len(x) for x in col) for col in zip(head, *rows)]
fmt = lambda cols: " | ".join(x.ljust(w) if i < 2 else x.rjust(w)
                              for i, (x, w) in enumerate(zip(cols, widths)))
print("median transactions/s per cell")
print(fmt(head))
print("-+-".join("-" * w for w in widths))
for r in rows:
    print(fmt(r))
rss = defaultdict(dict)
for l in open(rss_f):
    if l.strip():
        srv, tool, kb, status = l.rstrip("\n").split("\t", 3)
        rss[srv][tool] = (int(kb), status)
for srv, t in rss.items():
    s_kb, s_st = t.get("scripted", (0, "not run"))
    b_kb, b_st = t.get("sysbench", (0, "not run"))
    print(f"{names[srv]}: peak RSS at {rss_threads} threads: scripted dbmeter "
          + (f"{s_kb / 1024:,.0f} MB" if s_st == "ok" else s_st) + ", sysbench "
          + (f"{b_kb / 1024:,.0f} MB" if b_st == "ok" else b_st))
    if s_st != "ok":
        fails.append(f"{srv}: dbmeter at {rss_threads} threads {s_st}")
    elif b_st == "ok" and s_kb >= b_kb:
        fails.append(f"{srv}: RSS at {rss_threads} threads not below sysbench's")
print("goals: " + ("PASS" if not fails else "FAIL: " + "; ".join(fails)))
EOF
log "raw output and report: $OUT"
