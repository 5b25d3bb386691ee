#!/usr/bin/env bash
# Measure the load engine's own cost per event: dbmeter's `noop` workload
# beside sysbench running an empty Lua event, on the same machine.
#
# Method: for each tool, run N and 2N events and take
#   cost/event = (t(2N) - t(N)) / N
# which cancels fixed start-up and tear-down costs. t is the measured time the
# tool itself reports (dbmeter: .totals.duration_s, sysbench: "total time:").
# Each t is the median of REPEATS runs (N and 2N runs are interleaved).
#
# Environment overrides:
#   SYSBENCH_N=5000000     events N for sysbench
#   DBMETER_N=20000000     events N for dbmeter
#   REPEATS=3              runs per measurement (median taken)
#   THREADS="1 2"          thread counts to measure
#   DBMETER_BIN=path       use this binary instead of building one
#   SKIP_DBMETER=1         measure sysbench only (before dbmeter exists)
# Raw tool output is kept in bench/out/engine/.
set -euo pipefail
shopt -s inherit_errexit  # make failures inside $(...) stop the script

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SYSBENCH_N="${SYSBENCH_N:-5000000}"
DBMETER_N="${DBMETER_N:-20000000}"
REPEATS="${REPEATS:-3}"
THREADS="${THREADS:-1 2}"
SKIP_DBMETER="${SKIP_DBMETER:-0}"
OUT="$ROOT/bench/out/engine"

# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
require_positive SYSBENCH_N DBMETER_N REPEATS
command -v python3 >/dev/null || die "python3 is required"
mkdir -p "$OUT"

install_sysbench

# Empty sysbench event, in a temporary Lua script.
LUA="$(mktemp /tmp/dbmeter-bench-XXXXXX.lua)"
trap 'rm -f "$LUA"' EXIT
echo 'function event() end' > "$LUA"

if [ "$SKIP_DBMETER" != 1 ]; then
    build_dbmeter
fi

# --- one run of each tool; prints the measured seconds ------------------------------
# usage: time_sysbench THREADS EVENTS
time_sysbench() {
    local log="$OUT/sysbench-t$1-n$2.txt"
    sysbench "$LUA" --threads="$1" --events="$2" --time=0 run > "$log" 2>&1 ||
        die "sysbench failed, see $log"
    # "total time:  1.2345s" and "total number of events:  N"
    python3 - "$log" "$2" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
t = re.search(r"total time:\s*([0-9.]+)s", text)
n = re.search(r"total number of events:\s*(\d+)", text)
if not t or not n:
    sys.exit(f"cannot parse sysbench output in {sys.argv[1]}")
if int(n.group(1)) != int(sys.argv[2]):
    sys.exit(f"sysbench ran {n.group(1)} events, expected {sys.argv[2]}")
print(t.group(1))
EOF
}

# usage: time_dbmeter THREADS EVENTS
time_dbmeter() {
    local log="$OUT/dbmeter-t$1-n$2.json"
    "$DBMETER_BIN" run noop --threads="$1" --events="$2" --time=0 --format=json \
        > "$log" 2> "$OUT/dbmeter-t$1-n$2.stderr" ||
        die "dbmeter failed, see $log and $OUT/dbmeter-t$1-n$2.stderr"
    python3 - "$log" "$2" <<'EOF'
import json, sys
totals = json.load(open(sys.argv[1]))["totals"]
if int(totals["events"]) != int(sys.argv[2]):
    sys.exit(f"dbmeter ran {totals['events']} events, expected {sys.argv[2]}")
print(totals["duration_s"])
EOF
}

# --- cost per event in ns: median of REPEATS for N and 2N -----------------------------
# usage: ns_per_event TOOL THREADS N
ns_per_event() {
    local tool="$1" threads="$2" n="$3" i t1=() t2=()
    for ((i = 0; i < REPEATS; i++)); do
        t1+=("$("time_$tool" "$threads" "$n")")
        t2+=("$("time_$tool" "$threads" $((2 * n)))")
    done
    echo "  $tool threads=$threads: t(N=$n)=[${t1[*]}]s t(2N)=[${t2[*]}]s" >&2
    python3 - "$n" "${t1[*]}" "${t2[*]}" <<'EOF'
import statistics, sys
n = int(sys.argv[1])
t1 = statistics.median(map(float, sys.argv[2].split()))
t2 = statistics.median(map(float, sys.argv[3].split()))
print(f"{(t2 - t1) / n * 1e9:.1f}")
EOF
}

# --- measure ---------------------------------------------------------------------------
declare -A SB DM
for t in $THREADS; do
    echo "measuring threads=$t ..." >&2
    SB[$t]="$(ns_per_event sysbench "$t" "$SYSBENCH_N")"
    if [ "$SKIP_DBMETER" != 1 ]; then
        DM[$t]="$(ns_per_event dbmeter "$t" "$DBMETER_N")"
    else
        DM[$t]="n/a"
    fi
done

# --- report ----------------------------------------------------------------------------
ratio() {  # dbmeter/sysbench, or n/a
    python3 -c 'import sys
try: print(f"{float(sys.argv[1]) / float(sys.argv[2]):.2f}")
except (ValueError, ZeroDivisionError): print("n/a")' "$1" "$2"
}

cpu="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
{
    echo
    echo "dbmeter engine cost per event vs sysbench ($(date -u +%Y-%m-%dT%H:%MZ))"
    echo "machine: ${cpu:-unknown CPU}, nproc=$(nproc), kernel $(uname -r)"
    echo "sysbench: $(sysbench --version 2>/dev/null)"
    if [ "$SKIP_DBMETER" != 1 ]; then
        echo "dbmeter:  $DBMETER_BIN"
    fi
    echo "method: ns/event = (t(2N) - t(N)) / N, t = tool-reported measured time"
    echo "        (not wall clock), median of $REPEATS runs;" \
         "N: sysbench=$SYSBENCH_N, dbmeter=$DBMETER_N"
    echo
    printf '%7s | %17s | %16s | %16s\n' threads "sysbench ns/event" "dbmeter ns/event" "dbmeter/sysbench"
    printf '%7s-|-%17s-|-%16s-|-%16s\n' ------- ----------------- ---------------- ----------------
    for t in $THREADS; do
        printf '%7s | %17s | %16s | %16s\n' "$t" "${SB[$t]}" "${DM[$t]}" "$(ratio "${DM[$t]}" "${SB[$t]}")"
    done
    echo
    r1="n/a"
    [ -n "${SB[1]:-}" ] && r1="$(ratio "${DM[1]}" "${SB[1]}")"
    verdict="$(python3 -c 'import sys
try: print("PASS" if float(sys.argv[1]) <= 0.50 else "FAIL")
except ValueError: print("n/a (not measured)")' "$r1")"
    echo "goal: dbmeter/sysbench <= 0.50 (1 thread): $verdict"
} | tee "$OUT/summary.txt"
