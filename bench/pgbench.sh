#!/usr/bin/env bash
# `dbmeter pgbench` against real pgbench on a managed PostgreSQL: the same
# command line to both, alternating.
#
# One managed server (started by `dbmeter server start postgres`, removed at
# the end), its tables made once by `pgbench -i -s SCALE`. For each workload
# (-S, and tpcb-like) at each client count, RUNS rounds; each round runs
# both tools with the same arguments (`-M prepared -c C -j J -T TIME`,
# which vacuum and empty pgbench_history first, as pgbench does), the one
# that went second last round going first. Per cell: the median of each
# tool's `tps = ` lines and dbmeter/pgbench. Goal: >= 1 in every cell.
# Each run also counts its process's voluntary context switches (its
# threads waiting: on a socket, a poll, a lock) and its CPU time (user +
# system), both shown per transaction: on a busy machine, where tps
# wander, CPU per transaction still compares the tools' own costs.
#
# Environment overrides:
#   TIME=10 RUNS=3 SCALE=16 CLIENTS="1 4 16 64"
#   WORKLOADS="select-only tpcb-like"
#   JOBS=                    -j for both (default: the clients, at most the
#                            CPUs)
#   PG_SETTINGS="shared_buffers=1GB max_wal_size=4GB synchronous_commit=off max_connections=200"
#   PGBENCH=pgbench          the pgbench to compare with
#   DBMETER_BIN=path         use this binary instead of building one (release)
# Raw output is kept in bench/out/pgbench/<timestamp>/.
set -euo pipefail
shopt -s inherit_errexit

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TIME="${TIME:-10}"
RUNS="${RUNS:-3}"
SCALE="${SCALE:-16}"
CLIENTS="${CLIENTS:-1 4 16 64}"
WORKLOADS="${WORKLOADS:-select-only tpcb-like}"
JOBS="${JOBS:-}"
PG_SETTINGS="${PG_SETTINGS:-shared_buffers=1GB max_wal_size=4GB synchronous_commit=off max_connections=200}"

# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
require_positive TIME RUNS SCALE
for c in $CLIENTS; do
    [[ "$c" =~ ^[1-9][0-9]*$ ]] || die "CLIENTS must be positive integers: $c"
done
for w in $WORKLOADS; do
    case "$w" in select-only|tpcb-like) ;; *) die "WORKLOADS: unknown $w (select-only, tpcb-like)" ;; esac
done
if [ -z "${PGBENCH:-}" ]; then
    PGBENCH="$(command -v pgbench || ls /usr/lib/postgresql/*/bin/pgbench 2>/dev/null | tail -1 || true)"
fi
[ -n "$PGBENCH" ] && [ -x "$PGBENCH" ] || die "pgbench not found (PGBENCH=path)"
command -v python3 >/dev/null || die "python3 is required"
[ -x /usr/bin/time ] || die "/usr/bin/time (GNU time) is required: it counts the context switches"
CPUS="$(nproc)"

STAMP="$(date +%Y%m%d-%H%M%S)"
OUT="$ROOT/bench/out/pgbench/$STAMP"
mkdir -p "$OUT"
RESULTS="$OUT/results.tsv"   # workload clients round tool tps vcsw transactions cpu_s
: > "$RESULTS"

build_dbmeter
trap stop_managed EXIT
start_managed postgres "bench-pgbench-$STAMP"
port="${MANAGED_URL##*:}"; port="${port%%/*}"
CONN=(-h 127.0.0.1 -p "$port" -U postgres)
DB=test

log "pgbench: $("$PGBENCH" --version); dbmeter: $("$DBMETER_BIN" version)"
log "pgbench -i -s $SCALE"
"$PGBENCH" "${CONN[@]}" -i -s "$SCALE" -q "$DB" > "$OUT/init.txt" 2>&1 ||
    fail_tool "$OUT/init.txt" "pgbench -i failed"

# One run; prints its tps, voluntary context switches, transactions and
# CPU seconds.
# usage: one TOOL TAG ARGS...
one() {
    local tool="$1" tag="$2"; shift 2
    local logf="$OUT/$tag.$tool.txt" tps vcsw tx cpu
    local timed=(/usr/bin/time -f '%w %U %S' -o "$logf.vcsw")
    case "$tool" in
        pgbench) "${timed[@]}" "$PGBENCH" "${CONN[@]}" "$@" "$DB" > "$logf" 2>&1 ;;
        dbmeter) "${timed[@]}" "$DBMETER_BIN" pgbench "${CONN[@]}" "$@" "$DB" > "$logf" 2>&1 ;;
    esac || fail_tool "$logf" "$tool $* failed"
    tps="$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$logf" | head -1)"
    [ -n "$tps" ] || fail_tool "$logf" "no 'tps = ' line from $tool"
    tx="$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$logf" | head -1)"
    read -r vcsw user sys < <(tail -1 "$logf.vcsw")
    cpu="$(python3 -c 'import sys; print(float(sys.argv[1]) + float(sys.argv[2]))' "${user:-0}" "${sys:-0}")"
    echo "$tps ${vcsw:-0} ${tx:-0} $cpu"
}

log "raw output: $OUT"
log "scale=$SCALE time=${TIME}s runs=$RUNS clients=[$CLIENTS] workloads=[$WORKLOADS]"
first=pgbench
for w in $WORKLOADS; do
    for c in $CLIENTS; do
        j="${JOBS:-$(( c < CPUS ? c : CPUS ))}"
        args=(-M prepared -c "$c" -j "$j" -T "$TIME")
        [ "$w" = select-only ] && args+=(-S)
        for r in $(seq 1 "$RUNS"); do
            if [ "$first" = pgbench ]; then order="pgbench dbmeter"; else order="dbmeter pgbench"; fi
            for tool in $order; do
                read -r tps vcsw tx cpu < <(one "$tool" "$w.c$c.r$r" "${args[@]}")
                log "$w c=$c round $r $tool: $tps tps, $vcsw voluntary context switches, $tx transactions, ${cpu} s CPU"
                printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$w" "$c" "$r" "$tool" "$tps" "$vcsw" "$tx" "$cpu" >> "$RESULTS"
            done
            if [ "$first" = pgbench ]; then first=dbmeter; else first=pgbench; fi
        done
    done
done

python3 - "$RESULTS" "$SCALE" "$TIME" "$RUNS" <<'EOF' | tee "$OUT/report.txt"
import statistics, sys
results, scale, secs, runs = sys.argv[1:]
cells, switches, cpu = {}, {}, {}
for line in open(results):
    if line.strip():
        w, c, r, tool, tps, vcsw, tx, cpu_s = line.split("\t")
        cells.setdefault((w, int(c)), {}).setdefault(tool, []).append(float(tps))
        n = int(tx)
        switches.setdefault((w, int(c)), {}).setdefault(tool, []).append(int(vcsw) / n if n else 0.0)
        cpu.setdefault((w, int(c)), {}).setdefault(tool, []).append(float(cpu_s) * 1e6 / n if n else 0.0)
print(f"pgbench -M prepared, scale {scale}, {secs} s runs, median of {runs}; "
      "cs/tx: voluntary context switches of the process per transaction; "
      "CPU us/tx: the process's user + system CPU per transaction")
head = ["workload", "clients", "pgbench tps", "dbmeter tps", "dbmeter/pgbench",
        "pgbench cs/tx", "dbmeter cs/tx", "pgbench CPU us/tx", "dbmeter CPU us/tx"]
rows, below = [], []
for (w, c), t in cells.items():
    p, d = statistics.median(t["pgbench"]), statistics.median(t["dbmeter"])
    ratio = d / p if p else float("inf")
    if ratio < 1:
        below.append(f"{w}@{c}={ratio:.2f}")
    sw = switches[(w, c)]
    rows.append([w, str(c), f"{p:,.0f}", f"{d:,.0f}", f"{ratio:.2f}",
                 f"{statistics.median(sw['pgbench']):.2f}",
                 f"{statistics.median(sw['dbmeter']):.2f}",
                 f"{statistics.median(cpu[(w, c)]['pgbench']):.1f}",
                 f"{statistics.median(cpu[(w, c)]['dbmeter']):.1f}"])
widths = [max(len(x) for x in col) for col in zip(head, *rows)]
fmt = lambda cols: "| " + " | ".join(
    x.ljust(wd) if i == 0 else x.rjust(wd) for i, (x, wd) in enumerate(zip(cols, widths))) + " |"
print(fmt(head))
print("|" + "|".join("-" * (wd + 2) for wd in widths) + "|")
for r in rows:
    print(fmt(r))
print(("PASS" if not below else "FAIL") + "  dbmeter/pgbench >= 1 in every cell"
      + (f"; below: {', '.join(below)}" if below else ""))
EOF
log "raw output and report: $OUT"
