#!/usr/bin/env bash
# sysbench 1.0.20's machine tests (cpu, threads, mutex, memory) run by
# sysbench itself and by dbmeter, with the same options, to check that an
# event is the same work: events per second (and MiB/s for memory) should
# be within 5% of sysbench's.
#
# Each cell (a test's option set at a thread count) is measured ROUNDS times,
# the tools alternating within each round (sysbench, then dbmeter); the table
# shows each tool's median over the rounds and the ratio dbmeter/sysbench of
# the medians. events/s is the tool's own report: total number of events /
# total time (sysbench's general statistics, which `dbmeter sysbench` prints
# the same way; `dbmeter run`'s totals.events_per_s). Goal: every ratio
# within 0.95-1.05.
#
# DBMETER_MODE picks how dbmeter runs: `sysbench` (default: `dbmeter sysbench`
# with sysbench's very command line) or `run` (`dbmeter run TEST ... 
# --format=json`, dbmeter's own layout: the same events, another front end).
#
# The machine's load matters more than anything here (the cpu and memory
# tests measure it): the summary prints the load average before and after.
#
# Environment overrides:
#   TIME=5                   seconds per timed run
#   ROUNDS=3                 measurements of each cell; medians reported
#   THREADS="1 2"            thread counts
#   CASES="cpu threads mutex mem-write mem-read mem-rnd mem-read-l2 mem-read-ram mem-write-ram mem-local"
#   DBMETER_MODE=sysbench    or run
#   DBMETER_BIN=path         use this binary instead of building one
#   SKIP_FILEIO=1            do not run bench/fileio.sh at the end
# Raw tool output is kept in bench/out/micro/<timestamp>/.
set -euo pipefail
shopt -s inherit_errexit  # make failures inside $(...) stop the script

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TIME="${TIME:-5}"
ROUNDS="${ROUNDS:-3}"
THREADS="${THREADS:-1 2}"
CASES="${CASES:-cpu threads mutex mem-write mem-read mem-rnd mem-read-l2 mem-read-ram mem-write-ram mem-local}"
DBMETER_MODE="${DBMETER_MODE:-sysbench}"
SKIP_FILEIO="${SKIP_FILEIO:-0}"

# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
require_positive TIME ROUNDS
require_flag SKIP_FILEIO
case "$DBMETER_MODE" in sysbench|run) ;; *) die "DBMETER_MODE: sysbench or run" ;; esac
for t in $THREADS; do
    [[ "$t" =~ ^[1-9][0-9]*$ ]] || die "THREADS must be positive integers: $t"
done
command -v python3 >/dev/null || die "python3 is required"
install_sysbench
build_dbmeter

STAMP="$(date +%Y%m%d-%H%M%S)"
OUT="$ROOT/bench/out/micro/$STAMP"
mkdir -p "$OUT"
RESULTS="$OUT/results.tsv"   # case threads round tool events_per_s mib_per_s
: > "$RESULTS"

# The option set of a case (sysbench's command line, test first), and
# whether it is timed (--time=TIME) or ends with its own work.
case_args() { # CASE
    case "$1" in
        cpu)           echo "cpu --cpu-max-prime=10000" ;;
        threads)       echo "threads --thread-yields=1000 --thread-locks=8" ;;
        # One event per thread: the run lasts as long as the work.
        mutex)         echo "mutex --mutex-num=4096 --mutex-locks=50000 --mutex-loops=10000" ;;
        mem-write)     echo "memory --memory-block-size=1K --memory-total-size=0 --memory-oper=write" ;;
        mem-read)      echo "memory --memory-block-size=1K --memory-total-size=0 --memory-oper=read" ;;
        mem-rnd)       echo "memory --memory-block-size=1K --memory-total-size=0 --memory-oper=read --memory-access-mode=rnd" ;;
        mem-read-l2)   echo "memory --memory-block-size=256K --memory-total-size=0 --memory-oper=read" ;;
        mem-read-ram)  echo "memory --memory-block-size=256M --memory-total-size=0 --memory-oper=read" ;;
        mem-write-ram) echo "memory --memory-block-size=256M --memory-total-size=0 --memory-oper=write" ;;
        mem-local)     echo "memory --memory-block-size=64K --memory-total-size=0 --memory-oper=write --memory-scope=local" ;;
        *) die "unknown case in CASES: $1" ;;
    esac
}
limits() { # CASE
    case "$1" in
        mutex) echo "--time=0" ;;
        *) echo "--time=$TIME" ;;
    esac
}

# sysbench's layout (sysbench, `dbmeter sysbench`): "EVENTS_PER_S MIB_PER_S".
parse_text() { # LOG
    python3 - "$1" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
t = re.search(r"total time:\s*([0-9.]+)s", text)
n = re.search(r"total number of events:\s*(\d+)", text)
if not t or not n:
    sys.exit(f"cannot parse {sys.argv[1]}")
eps = int(n.group(1)) / float(t.group(1))
m = re.search(r"MiB transferred \(([0-9.]+) MiB/sec\)", text)
print(f"{eps:.2f} {m.group(1) if m else '-'}")
EOF
}

# `dbmeter run --format=json`: the same two numbers from the document.
parse_json() { # LOG
    python3 - "$1" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
t = d["totals"]
b = t["counts"].get("bytes_transferred")
mib = f"{b / 1048576 / t['duration_s']:.2f}" if b is not None and t["duration_s"] > 0 else "-"
print(f"{t['events_per_s']:.2f} {mib}")
EOF
}

run_sysbench() { # TAG CASE THREADS
    local logf="$OUT/$1.sysbench.txt"
    # shellcheck disable=SC2046
    sysbench $(case_args "$2") --threads="$3" $(limits "$2") --percentile=95 run > "$logf" 2>&1 ||
        fail_tool "$logf" "sysbench $2 --threads=$3 failed"
    parse_text "$logf"
}
run_dbmeter() { # TAG CASE THREADS
    local logf="$OUT/$1.dbmeter.$DBMETER_MODE"
    if [ "$DBMETER_MODE" = sysbench ]; then
        # shellcheck disable=SC2046
        "$DBMETER_BIN" sysbench $(case_args "$2") --threads="$3" $(limits "$2") --percentile=95 run \
            > "$logf.txt" 2>&1 || fail_tool "$logf.txt" "dbmeter sysbench $2 --threads=$3 failed"
        parse_text "$logf.txt"
    else
        local args test
        read -r test args <<< "$(case_args "$2")"
        # shellcheck disable=SC2086
        "$DBMETER_BIN" run "$test" $args --threads="$3" $(limits "$2") --format=json \
            > "$logf.json" 2> "$logf.stderr" || fail_tool "$logf.stderr" "dbmeter run $2 --threads=$3 failed"
        parse_json "$logf.json"
    fi
}

load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
for c in $CASES; do
    case_args "$c" > /dev/null
    for t in $THREADS; do
        for ((r = 1; r <= ROUNDS; r++)); do
            tag="$c.t$t.r$r"
            log "$tag: sysbench"
            read -r eps mib <<< "$(run_sysbench "$tag" "$c" "$t")"
            printf '%s\t%s\t%s\tsysbench\t%s\t%s\n' "$c" "$t" "$r" "$eps" "$mib" >> "$RESULTS"
            log "$tag: dbmeter ($DBMETER_MODE)"
            read -r eps mib <<< "$(run_dbmeter "$tag" "$c" "$t")"
            printf '%s\t%s\t%s\tdbmeter\t%s\t%s\n' "$c" "$t" "$r" "$eps" "$mib" >> "$RESULTS"
        done
    done
done
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"

cpu="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
{
    echo
    echo "sysbench's machine tests: sysbench 1.0.20 vs dbmeter ($(date -u +%Y-%m-%dT%H:%MZ))"
    echo "machine: ${cpu:-unknown CPU}, nproc=$(nproc), kernel $(uname -r)"
    echo "load average (1/5/15 min): before $load_before, after $load_after"
    echo "dbmeter: $DBMETER_BIN ($DBMETER_MODE); sysbench: $(sysbench --version 2>/dev/null)"
    echo "method: median of $ROUNDS rounds (tools alternating), ${TIME}s runs (mutex: its work)"
    echo
    python3 - "$RESULTS" <<'EOF'
import collections, statistics, sys
cells = collections.OrderedDict()
for line in open(sys.argv[1]):
    case, threads, _round, tool, eps, mib = line.rstrip("\n").split("\t")
    cell = cells.setdefault((case, threads), {"sysbench": ([], []), "dbmeter": ([], [])})
    cell[tool][0].append(float(eps))
    if mib != "-":
        cell[tool][1].append(float(mib))
def med(v):
    return statistics.median(v) if v else None
def fmt(v):
    return "-" if v is None else f"{v:.2f}"
def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b
print(f"{'case':<14} {'thr':>3} | {'sysbench ev/s':>14} {'dbmeter ev/s':>14} {'ratio':>6} | {'sysbench MiB/s':>14} {'dbmeter MiB/s':>14} {'ratio':>6}")
print("-" * 98)
worst = None
for (case, threads), c in cells.items():
    se, de = med(c["sysbench"][0]), med(c["dbmeter"][0])
    sm, dm = med(c["sysbench"][1]), med(c["dbmeter"][1])
    re_, rm = ratio(de, se), ratio(dm, sm)
    if re_ is not None and (worst is None or abs(re_ - 1) > abs(worst[0] - 1)):
        worst = (re_, case, threads)
    print(f"{case:<14} {threads:>3} | {fmt(se):>14} {fmt(de):>14} {fmt(re_):>6} | {fmt(sm):>14} {fmt(dm):>14} {fmt(rm):>6}")
print()
if worst:
    ok = 0.95 <= worst[0] <= 1.05
    print(f"goal: events/s ratio within 0.95-1.05: {'PASS' if ok else 'FAIL'} (furthest: {worst[1]} at {worst[2]} threads, {worst[0]:.2f})")
EOF
} | tee "$OUT/summary.txt"

# --- fileio ----------------------------------------------------------------------------
# The fileio test is bench/fileio.sh's (sysbench's fileio and fio jobs against
# dbmeter's); it runs here when it is present.
if [ "$SKIP_FILEIO" != 1 ] && [ -x "$ROOT/bench/fileio.sh" ]; then
    log "fileio: bench/fileio.sh"
    DBMETER_BIN="$DBMETER_BIN" "$ROOT/bench/fileio.sh"
fi
