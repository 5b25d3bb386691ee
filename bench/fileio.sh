#!/usr/bin/env bash
# fileio against fio (the storage anchor) and sysbench 1.0.20's fileio test:
# random 4 KiB O_DIRECT reads and writes, one thread, at queue depth 1
# (fio's psync, dbmeter's and sysbench's sync mode) and 32 (fio's io_uring,
# dbmeter's async mode on io_uring, sysbench's async mode on libaio with a
# backlog of 32). The three tools alternate within each round; the table
# shows each tool's median over the rounds of IOPS and MiB/s, and the ratios
# dbmeter/fio and dbmeter/sysbench of the medians.
# Goals: dbmeter within 5% of fio's IOPS (ratio >= 0.95), not below sysbench's.
#
# The same job in the three tools: one file of SIZE made by `dbmeter prepare
# fileio`, blocks of 4 KiB at random offsets over the whole file (fio:
# --norandommap, no block visited once per pass), no fsync (sysbench and
# dbmeter: --file-fsync-freq=0 --file-fsync-end=off), TIME seconds each.
#
# The file goes in DIR, which must be on a real disk: the script refuses a
# tmpfs (O_DIRECT there measures memory). It is removed at the end.
#
# Environment overrides:
#   DIR=/var/tmp/dbmeter-fileio-bench   where the test file goes
#   SIZE=4G         the file's size (larger than the device's cache is better)
#   TIME=10         seconds per cell
#   ROUNDS=3        measurements of each cell; medians reported
#   DEPTHS="1 32"   queue depths
#   MODES="rndrd rndwr"
#   QUICK=1         smoke test: TIME=2 ROUNDS=1 SIZE=256M
#   DBMETER_BIN=path  use this binary instead of building one
# Raw output is kept in bench/out/fileio/<timestamp>/.
set -euo pipefail
shopt -s inherit_errexit

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"

if [ "${QUICK:-0}" = 1 ]; then
    TIME="${TIME:-2}"; ROUNDS="${ROUNDS:-1}"; SIZE="${SIZE:-256M}"
fi
DIR="${DIR:-/var/tmp/dbmeter-fileio-bench}"
SIZE="${SIZE:-4G}"
TIME="${TIME:-10}"
ROUNDS="${ROUNDS:-3}"
DEPTHS="${DEPTHS:-1 32}"
MODES="${MODES:-rndrd rndwr}"
require_positive TIME ROUNDS
for d in $DEPTHS; do [[ "$d" =~ ^[1-9][0-9]*$ ]] || die "DEPTHS must be positive integers: $d"; done
for m in $MODES; do
    case "$m" in rndrd|rndwr) ;; *) die "MODES: rndrd or rndwr, not $m" ;; esac
done
command -v fio >/dev/null 2>&1 || die "fio is required (apt-get install fio)"
command -v python3 >/dev/null 2>&1 || die "python3 is required"
install_sysbench
build_dbmeter

mkdir -p "$DIR"
fs="$(df --output=fstype "$DIR" | tail -n 1)"
case "$fs" in
    tmpfs|ramfs) die "$DIR is on $fs: put DIR on a disk (e.g. /var/tmp or /work)" ;;
esac
STAMP="$(date +%Y%m%d-%H%M%S)"
OUT="$ROOT/bench/out/fileio/$STAMP"
mkdir -p "$OUT"
RESULTS="$OUT/results.tsv"   # mode depth round tool iops mib_s
: > "$RESULTS"

SET=(--file-num=1 --file-total-size="$SIZE" --file-block-size=4096)
cleanup() { (cd "$DIR" && "$DBMETER_BIN" cleanup fileio "${SET[@]}" >/dev/null 2>&1) || true; }
trap cleanup EXIT
log "preparing one file of $SIZE in $DIR ($fs)"
(cd "$DIR" && "$DBMETER_BIN" prepare fileio "${SET[@]}" --file-extra-flags=direct >"$OUT/prepare.log") ||
    fail_tool "$OUT/prepare.log" "dbmeter prepare fileio failed"
bytes="$(stat -c %s "$DIR/test_file.0")"

load="$(cut -d' ' -f1-3 /proc/loadavg)"
log "load average before: $load"

fio_cell() { # MODE DEPTH LOG -> "iops mib_s"
    local rw engine
    case "$1" in rndrd) rw=randread ;; rndwr) rw=randwrite ;; esac
    if [ "$2" = 1 ]; then engine=psync; else engine=io_uring; fi
    fio --name=cell --filename="$DIR/test_file.0" --size="$bytes" --rw="$rw" --bs=4k \
        --direct=1 --ioengine="$engine" --iodepth="$2" --numjobs=1 --norandommap \
        --randrepeat=0 --time_based --runtime="$TIME" --output-format=json >"$3" 2>&1 ||
        fail_tool "$3" "fio failed"
    python3 - "$3" "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
j = d["jobs"][0]["read" if sys.argv[2] == "rndrd" else "write"]
print(f'{j["iops"]:.2f} {j["bw_bytes"] / 1048576:.2f}')
PY
}

common() { # MODE
    echo "${SET[@]}" --file-test-mode="$1" --file-extra-flags=direct \
        --file-fsync-freq=0 --file-fsync-end=off --threads=1 --time="$TIME" --events=0
}

dbmeter_cell() { # MODE DEPTH LOG
    local io=(--file-io-mode=sync)
    [ "$2" = 1 ] || io=(--file-io-mode=async --file-queue-depth="$2")
    # shellcheck disable=SC2046
    (cd "$DIR" && "$DBMETER_BIN" run fileio $(common "$1") "${io[@]}" --format=json >"$3" 2>"$3.err") ||
        fail_tool "$3.err" "dbmeter run fileio failed"
    python3 - "$3" "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = d["totals"]; s = t["duration_s"]; c = t["counts"]
n, b = (c["reads"], c["bytes_read"]) if sys.argv[2] == "rndrd" else (c["writes"], c["bytes_written"])
print(f'{n / s:.2f} {b / 1048576 / s:.2f}')
PY
}

sysbench_cell() { # MODE DEPTH LOG
    local io=(--file-io-mode=sync)
    [ "$2" = 1 ] || io=(--file-io-mode=async --file-async-backlog="$2")
    # shellcheck disable=SC2046
    (cd "$DIR" && sysbench fileio $(common "$1") "${io[@]}" run >"$3" 2>&1) ||
        fail_tool "$3" "sysbench fileio failed"
    python3 - "$3" "$1" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
def num(label):
    m = re.search(re.escape(label) + r"\s+([0-9.]+)", t)
    return float(m.group(1)) if m else 0.0
if sys.argv[2] == "rndrd":
    print(f'{num("reads/s:"):.2f} {num("read, MiB/s:"):.2f}')
else:
    print(f'{num("writes/s:"):.2f} {num("written, MiB/s:"):.2f}')
PY
}

for mode in $MODES; do
    for depth in $DEPTHS; do
        for round in $(seq 1 "$ROUNDS"); do
            for tool in fio dbmeter sysbench; do
                logf="$OUT/$mode.qd$depth.r$round.$tool"
                r="$("${tool}_cell" "$mode" "$depth" "$logf")"
                log "$mode qd$depth round $round $tool: $r (IOPS MiB/s)"
                echo "$mode $depth $round $tool $r" >>"$RESULTS"
            done
        done
    done
done

log "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$RESULTS" "$fs" "$SIZE" "$TIME" "$ROUNDS" "$load" <<'PY' | tee "$OUT/report.txt"
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
fs, size, time, rounds, load = sys.argv[2:7]
cells = {}
for mode, depth, rnd, tool, iops, mib in rows:
    cells.setdefault((mode, int(depth)), {}).setdefault(tool, []).append((float(iops), float(mib)))
print(f"fileio vs fio and sysbench: random 4 KiB O_DIRECT, 1 thread, one {size} file on {fs}, "
      f"{time} s a cell, median of {rounds}; load average before: {load}")
print(f'{"mode":6} {"qd":>3} {"fio IOPS":>10} {"dbmeter":>10} {"sysbench":>10} {"db/fio":>7} {"db/sb":>7} '
      f'{"fio MiB/s":>10} {"db MiB/s":>9} {"sb MiB/s":>9}')
for (mode, depth), t in sorted(cells.items()):
    med = {k: (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v)) for k, v in t.items()}
    f, d, s = med["fio"], med["dbmeter"], med["sysbench"]
    r = lambda a, b: f"{a / b:.3f}" if b else "-"
    print(f"{mode:6} {depth:>3} {f[0]:>10.0f} {d[0]:>10.0f} {s[0]:>10.0f} {r(d[0], f[0]):>7} {r(d[0], s[0]):>7} "
          f"{f[1]:>10.1f} {d[1]:>9.1f} {s[1]:>9.1f}")
PY
log "raw output in $OUT"
