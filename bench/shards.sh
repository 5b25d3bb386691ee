#!/usr/bin/env bash
# One process against four shards (`--shard=I/4`), on this machine, against
# a managed MariaDB server (started by `dbmeter server start`, removed at the
# end), sysbench's oltp_read_only.
#
# The tables are prepared by four `prepare --shard=I/4` processes at once.
# Then, ALTERNATIONS times (the single process first in odd ones, the shards
# first in even ones): one process with THREADS users for TIME seconds,
# and four processes with --shard=0/4..3/4 and the same options, started
# with one --start-at a few seconds ahead and merged with `dbmeter merge`.
# Reported: the merged throughput relative to the single process (each
# alternation and the median), the shards' start skew (how late each let
# its users go after --start-at) and the spread of their measurement
# starts, and the maximum RSS of each process (GNU time).
#
# Environment overrides:
#   THREADS=8 TIME=20 ALTERNATIONS=3 TABLES=4 TABLE_SIZE=100000
#   DBMETER_BIN=path   use this binary instead of building one
# Raw output is kept in bench/out/shards/STAMP/.
set -euo pipefail
shopt -s inherit_errexit

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
THREADS="${THREADS:-8}"
TIME="${TIME:-20}"
ALTERNATIONS="${ALTERNATIONS:-3}"
TABLES="${TABLES:-4}"
TABLE_SIZE="${TABLE_SIZE:-100000}"
SHARDS=4

# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
require_positive THREADS TIME ALTERNATIONS TABLES TABLE_SIZE
command -v python3 >/dev/null || die "python3 is required"
[ -x /usr/bin/time ] || die "/usr/bin/time (GNU time) is required"
[ "$THREADS" -ge "$SHARDS" ] || die "THREADS must be at least $SHARDS (a user per shard)"

STAMP="$(date +%Y%m%d-%H%M%S)"
OUT="$ROOT/bench/out/shards/$STAMP"
mkdir -p "$OUT"

build_dbmeter
trap stop_managed EXIT
start_managed mariadb "shards-$STAMP"
URL="$MANAGED_URL"
COMMON=(oltp_read_only --db="$URL" --tables="$TABLES" --table-size="$TABLE_SIZE")
RUN=("${COMMON[@]}" --threads="$THREADS" --time="$TIME" --format=json)

log "prepare: $TABLES tables of $TABLE_SIZE rows by $SHARDS shards at once"
t0="$(now)"
pids=()
for i in $(seq 0 $((SHARDS - 1))); do
    "$DBMETER_BIN" prepare "${COMMON[@]}" --shard="$i/$SHARDS" > "$OUT/prepare-$i.txt" 2>&1 &
    pids+=($!)
done
for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || fail_tool "$OUT/prepare-$i.txt" "prepare shard $i failed"
done
t1="$(now)"
echo -e "prepare_s\t$(elapsed "$t0" "$t1")" > "$OUT/prepare.tsv"

single() { # ALTERNATION
    log "alternation $1: one process, $THREADS users, $TIME s"
    /usr/bin/time -f '%M' -o "$OUT/one-$1.rss" \
        "$DBMETER_BIN" run "${RUN[@]}" --output="$OUT/one-$1.json" > "$OUT/one-$1.txt" 2>&1 ||
        fail_tool "$OUT/one-$1.txt" "the single run failed"
}

for a in $(seq 1 "$ALTERNATIONS"); do
    # Odd alternations run the single process first, even ones the shards.
    if [ $((a % 2)) = 1 ]; then single "$a"; fi
    start=$(( $(date +%s) + 5 ))
    log "alternation $a: $SHARDS shards, starting at $start"
    pids=()
    for i in $(seq 0 $((SHARDS - 1))); do
        /usr/bin/time -f '%M' -o "$OUT/shard-$a-$i.rss" \
            "$DBMETER_BIN" run "${RUN[@]}" --shard="$i/$SHARDS" --start-at="$start" \
                --output="$OUT/shard-$a-$i.json" > "$OUT/shard-$a-$i.txt" 2>&1 &
        pids+=($!)
    done
    for i in "${!pids[@]}"; do
        wait "${pids[$i]}" || fail_tool "$OUT/shard-$a-$i.txt" "shard $i failed"
    done
    files=()
    for i in $(seq 0 $((SHARDS - 1))); do files+=("$OUT/shard-$a-$i.json"); done
    "$DBMETER_BIN" merge "${files[@]}" --format=json --output="$OUT/merged-$a.json" \
        > "$OUT/merged-$a.txt" 2> "$OUT/merged-$a.err" ||
        fail_tool "$OUT/merged-$a.err" "merge failed"
    if [ $((a % 2)) = 0 ]; then single "$a"; fi
done

python3 - "$OUT" "$ALTERNATIONS" "$SHARDS" "$(cut -f2 "$OUT/prepare.tsv")" <<'EOF' | tee "$OUT/summary.md"
import json, statistics, sys
out, alts, shards, prep = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
def load(p): return json.load(open(f"{out}/{p}"))
def rss(p): return int(open(f"{out}/{p}").read().split()[-1]) / 1024
rows, ratios, skews, spreads, shard_rss, one_rss = [], [], [], [], [], []
for a in range(1, alts + 1):
    one, m = load(f"one-{a}.json"), load(f"merged-{a}.json")
    for d in (one, m):
        if d["end"]["reason"] != "time_limit":
            sys.exit(f"alternation {a}: a run ended with {d['end']}")
    if m["merged"]["missing"]:
        sys.exit(f"alternation {a}: shards missing {m['merged']['missing']}")
    r = m["totals"]["events_per_s"] / one["totals"]["events_per_s"]
    ratios.append(r)
    sk = [s["start_skew_ms"] for s in m["merged"]["shards"]]
    skews += sk
    spreads.append(m["merged"]["start_spread_ms"])
    sr = [rss(f"shard-{a}-{i}.rss") for i in range(shards)]
    shard_rss += sr
    one_rss.append(rss(f"one-{a}.rss"))
    rows.append(f"| {a} | {one['totals']['events_per_s']:.1f} | {m['totals']['events_per_s']:.1f} | "
                f"{r * 100:.1f}% | {one['latency_ms']['percentiles'][2]['ms']:.2f} / {m['latency_ms']['percentiles'][2]['ms']:.2f} | "
                f"{min(sk):.2f} to {max(sk):.2f} | {m['merged']['start_spread_ms']:.2f} | "
                f"{one_rss[-1]:.1f} | {', '.join(f'{x:.1f}' for x in sr)} |")
print(f"prepare of the tables by {shards} shards at once: {float(prep):.1f} s\n")
print("| alternation | 1 process tx/s | 4 shards merged tx/s | merged / single | p99 ms (1 / merged) | shard start skew ms | start spread ms | RSS 1 process MiB | RSS per shard MiB |")
print("|---|---|---|---|---|---|---|---|---|")
print("\n".join(rows))
print(f"\nmedian merged / single: {statistics.median(ratios) * 100:.1f}%; "
      f"start skew: max {max(skews):.2f} ms; start spread: max {max(spreads):.2f} ms; "
      f"RSS: single {max(one_rss):.1f} MiB, shard max {max(shard_rss):.1f} MiB")
EOF
log "raw output: $OUT"
