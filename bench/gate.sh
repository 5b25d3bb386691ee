#!/usr/bin/env bash
# The false-positive rate of `dbmeter compare --fail-on` on this machine:
# PAIRS pairs of REPEATS runs against REPEATS runs of one and the same
# configuration (oltp_point_select on an SQLite file, full speed, the two
# sides alternating run by run), each pair compared with the gate's
# thresholds. Every pair that fails the gate is a false positive, since
# nothing differs between its sides. Also counted: the cells whose verdict
# is significant (faster or slower) whatever the threshold, and the other
# verdicts, for tps and p99; and, for contrast, how many pairs a gate on
# the thresholds alone (the ratio of medians beyond a threshold, no test)
# would have failed.
#
# Environment overrides:
#   PAIRS=20            comparisons
#   REPEATS=5           runs a side in each comparison
#   TIME=2              seconds measured per run
#   THREADS=1           --threads of every run
#   RATE=0              --rate of every run (0: as fast as possible, where
#                       the machine's noise shows; e.g. 2000: throughput
#                       follows the Poisson arrivals, each run with its own
#                       seed, so only the sampling noise is left)
#   FAIL_ON="tps:-3% p99:+10%"   the gate's thresholds
#   DBMETER_BIN=path    use this binary instead of building a release one
#   AGAIN=dir           no runs: compare the pairs stored in an earlier
#                       output directory again (its params.env gives PAIRS,
#                       REPEATS, TIME, THREADS and RATE)
# The store and the raw output are kept in bench/out/gate/<timestamp>/.
set -euo pipefail
shopt -s inherit_errexit

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"

PAIRS="${PAIRS:-20}"
REPEATS="${REPEATS:-5}"
TIME="${TIME:-2}"
THREADS="${THREADS:-1}"
RATE="${RATE:-0}"
FAIL_ON="${FAIL_ON:-tps:-3% p99:+10%}"
require_positive PAIRS REPEATS THREADS
[[ "$RATE" =~ ^[0-9]+$ ]] || die "RATE must be a whole number of events per second"
[[ "$TIME" =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "TIME must be a number of seconds"
build_dbmeter

if [ -n "${AGAIN:-}" ]; then
    OUT="$(cd "$AGAIN" && pwd)"
    [ -f "$OUT/params.env" ] && [ -f "$OUT/gate.db" ] || die "AGAIN=$AGAIN: no params.env and gate.db there"
    # shellcheck source=/dev/null
    . "$OUT/params.env"
    rm -f "$OUT/verdicts.csv"
else
    OUT="$ROOT/bench/out/gate/$(date +%Y%m%d-%H%M%S)"
    mkdir -p "$OUT"
    printf 'PAIRS=%s\nREPEATS=%s\nTIME=%s\nTHREADS=%s\nRATE=%s\n' \
        "$PAIRS" "$REPEATS" "$TIME" "$THREADS" "$RATE" >"$OUT/params.env"
fi
DB="sqlite:$OUT/t.sqlite"
STORE="$OUT/gate.db"
log "output in $OUT"

gate_args=()
for f in $FAIL_ON; do gate_args+=(--fail-on "$f"); done

t0=$(now)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
if [ -z "${AGAIN:-}" ]; then
"$DBMETER_BIN" prepare oltp_point_select --db="$DB" --table-size=10000 >"$OUT/prepare.log" 2>&1 ||
    fail_tool "$OUT/prepare.log" "prepare failed"
for ((p = 1; p <= PAIRS; p++)); do
    for ((r = 1; r <= REPEATS; r++)); do
        for side in A B; do
            "$DBMETER_BIN" run oltp_point_select --db="$DB" --table-size=10000 \
                --threads="$THREADS" --time="$TIME" --rate="$RATE" --store="$STORE" \
                --tag="pair=$p" --tag="side=$side" >>"$OUT/runs.log" 2>&1 ||
                fail_tool "$OUT/runs.log" "a run failed"
        done
    done
    log "pair $p of $PAIRS stored"
done
fi

# A column of a comparison's one cell, from compare's CSV.
column_of() { # CSV NAME
    awk -F, -v name="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) c = i; next }
                          { print $c }' <<<"$1"
}

gate_failed=0
naive_failed=0
declare -A verdicts
for ((p = 1; p <= PAIRS; p++)); do
    base="tag:pair=$p tag:side=A"
    cand="tag:pair=$p tag:side=B"
    set +e
    "$DBMETER_BIN" compare --store="$STORE" --baseline "$base" --candidate "$cand" \
        "${gate_args[@]}" >"$OUT/gate-$p.txt" 2>&1
    code=$?
    set -e
    case "$code" in
        0) ;;
        3) gate_failed=$((gate_failed + 1)) ;;
        *) fail_tool "$OUT/gate-$p.txt" "compare failed (exit $code)" ;;
    esac
    declare -A csv=()
    for m in tps p99 $(for f in $FAIL_ON; do echo "${f%%:*}"; done); do
        [ -n "${csv[$m]:-}" ] && continue
        csv[$m]=$("$DBMETER_BIN" compare --store="$STORE" --baseline "$base" --candidate "$cand" \
            --metric="$m" --format=csv)
    done
    for m in tps p99; do
        v=$(column_of "${csv[$m]}" verdict)
        verdicts["$m/$v"]=$((${verdicts["$m/$v"]:-0} + 1))
        echo "$p,$m,$(column_of "${csv[$m]}" value),$v" >>"$OUT/verdicts.csv"
    done
    # The thresholds alone: the ratio x 100 beyond 100 + CHANGE.
    naive=0
    for f in $FAIL_ON; do
        m=${f%%:*}
        change=${f#*:}
        change=${change%\%}
        value=$(column_of "${csv[$m]}" value)
        if awk -v v="$value" -v c="$change" 'BEGIN { exit !((c < 0 && v < 100 + c) || (c > 0 && v > 100 + c)) }'; then
            naive=1
        fi
    done
    naive_failed=$((naive_failed + naive))
    unset csv
done
t1=$(now)
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

echo
echo "gate false positives on same-configuration repeats ($(nproc) CPUs)"
echo "  $PAIRS pairs of $REPEATS vs $REPEATS runs, oltp_point_select on SQLite, --threads=$THREADS --time=$TIME --rate=$RATE, sides alternating"
echo "  thresholds: $FAIL_ON (a check fails only for a significant change beyond it)"
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", 100 * a / b }'; }
echo "  gate failed: $gate_failed of $PAIRS pairs ($(pct "$gate_failed" "$PAIRS")%)"
echo "  the thresholds alone (no test) would have failed: $naive_failed of $PAIRS pairs ($(pct "$naive_failed" "$PAIRS")%)"
for m in tps p99; do
    line="  $m verdicts:"
    for v in "faster" "slower" "no significant difference" "too noisy" "too few repeats"; do
        n=${verdicts["$m/$v"]:-0}
        [ "$n" -gt 0 ] && line+=" $v $n,"
    done
    echo "${line%,}"
done
if [ -z "${AGAIN:-}" ]; then
    echo "  elapsed: $(elapsed "$t0" "$t1") s; load average before $load_before, after $load_after"
fi
