#!/usr/bin/env bash
# Digest throughput: `dbmeter digest` against pt-query-digest (percona-toolkit)
# on a generated MariaDB slow log, with wall time, CPU time (user + system)
# and peak RSS of each from /usr/bin/time -v; MB/s and the ratios; and a check
# that both found the same classes (query IDs, fingerprints) with the same
# counts.
#
# The log is made by bench/gen_slowlog.py (deterministic for a seed), never
# committed: bench/out/logs/slow-SIZE.log. pt-query-digest reads about 3 MB
# per CPU second, so it runs on the first PT_MB of the log (cut at an event
# boundary) and dbmeter on that part too for the comparison; dbmeter alone
# also digests the whole log, to show its memory does not grow with the size.
#
# On a machine shared with other work, wall times say little: compare CPU
# times (MB per CPU second), which the load does not inflate as much.
#
# Environment overrides:
#   SIZE_MB=1024         size of the generated log
#   PT_MB=256            the part both tools digest (at most SIZE_MB)
#   SEED=42              the generator's seed
#   DBMETER_BIN=path     use this binary instead of building one
#   SKIP_PT=1            dbmeter only
#   PG_MB=200            size of the generated PostgreSQL stderr log (0: no PostgreSQL case)
#   PG_STYLE=min-duration  its entries: min-duration (log_min_duration_statement=0) or
#                        pairs (log_statement=all with log_duration=on)
#   SKIP_PGBADGER=1      dbmeter only on the PostgreSQL log
#   MANY_CLASSES=200000  classes of the many-classes log (0: no such case)
#   MANY_MB=110          its size (110 MB: each class about once)
#   GEN_MB=200           size of the generated general log (0: no general-log case)
#   GEN_STYLE=mariadb    its lines: mariadb (the time when the second changes) or
#                        mysql (MySQL 5.7+'s ISO time on every line)
#
# The many-classes case: bench/gen_slowlog.py's CLASSES mode writes a log of
# MANY_CLASSES distinct fingerprints taken in turn; dbmeter digests it with
# --limit=0 (every class written out) and its peak RSS is shown; the classes
# it found must be the ones written.
#
# The general-log case: bench/gen_genlog.py writes a MySQL/MariaDB general log
# (about 40 interleaved connections that come and go: Connect, Init DB, Query
# over one or several lines, Quit); dbmeter digest reads it with every CPU and
# with --threads=1 (the reader follows the time and the threads' users and
# databases, and hands each chunk the state at its start); both must give the
# same classes, counts, databases, users and hosts.
#
# The PostgreSQL case: bench/gen_pglog.py writes a stderr log (Debian's
# log_line_prefix, log_min_duration_statement=0, simple and extended protocol,
# multi-line statements, errors; PG_STYLE=pairs: log_statement=all with
# log_duration=on, each duration at its process's next turn); dbmeter digest
# (every CPU, then --threads=1: one thread parsing while the reader cuts) and
# pgBadger -j 2 read it; dbmeter's two runs must give the same classes and
# counts, and pgBadger the same statements (pgBadger's classes keep digits
# in names, so the totals are compared, not the classes).
#
# The replay case: a managed PostgreSQL server logs pgbench's select-only
# transactions (-S -M simple, REPLAY_CLIENTS clients x REPLAY_TX transactions;
# REPLAY_PGBENCH gives other pgbench options: pgreplay, which keeps the log's
# global order, hangs on TPC-B's row locks at scale 1, a session waiting for a
# lock whose holder's next statement comes later in the log)
# with pgreplay's settings (log_statement=all, log_connections,
# log_disconnections, log_line_prefix '%m|%u|%d|%c|'); then `dbmeter replay`
# (as fast as possible, each session's order kept) and pgreplay (-j and a
# speed factor of 1e6: as fast as its one process, which keeps the log's
# global order, goes) replay that log into the same server, alternately,
# REPLAY_ROUNDS times each. Statements per second: the log's statements over
# the wall time of the whole command (reading the log included); the median
# of each and their ratio.
#   REPLAY_CLIENTS=8 REPLAY_TX=5000 REPLAY_ROUNDS=5 REPLAY_PGBENCH=-S
#   SKIP_REPLAY=1        no replay case;  REPLAY_ONLY=1  the replay case alone
# Raw outputs are kept in bench/out/logs/.
set -euo pipefail
shopt -s inherit_errexit

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SIZE_MB="${SIZE_MB:-1024}"
PT_MB="${PT_MB:-256}"
SEED="${SEED:-42}"
SKIP_PT="${SKIP_PT:-0}"
PG_MB="${PG_MB:-200}"
PG_STYLE="${PG_STYLE:-min-duration}"
SKIP_PGBADGER="${SKIP_PGBADGER:-0}"
MANY_CLASSES="${MANY_CLASSES:-200000}"
MANY_MB="${MANY_MB:-110}"
OUT="$ROOT/bench/out/logs"

# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
require_positive SIZE_MB PT_MB SEED
require_flag SKIP_PT
require_flag SKIP_PGBADGER
case "$PG_MB" in '' | *[!0-9]*) die "PG_MB=$PG_MB: expected a number of MB (0 for none)" ;; esac
case "$MANY_CLASSES" in '' | *[!0-9]*) die "MANY_CLASSES=$MANY_CLASSES: expected a number (0 for none)" ;; esac
require_positive MANY_MB
GEN_MB="${GEN_MB:-200}"
GEN_STYLE="${GEN_STYLE:-mariadb}"
case "$GEN_MB" in '' | *[!0-9]*) die "GEN_MB=$GEN_MB: expected a number of MB (0 for none)" ;; esac
case "$GEN_STYLE" in mariadb | mysql) ;; *) die "GEN_STYLE=$GEN_STYLE: expected mariadb or mysql" ;; esac
case "$PG_STYLE" in min-duration | pairs) ;; *) die "PG_STYLE=$PG_STYLE: expected min-duration or pairs" ;; esac
if [ "$PG_MB" -gt 0 ] && [ "$SKIP_PGBADGER" != 1 ] && [ "${REPLAY_ONLY:-0}" != 1 ]; then
    command -v pgbadger >/dev/null ||
        die "pgbadger not found (Debian package pgbadger), or SKIP_PGBADGER=1 or PG_MB=0"
fi
command -v python3 >/dev/null || die "python3 is required"
[ -x /usr/bin/time ] || die "/usr/bin/time is required (Debian package time)"
if [ "$SKIP_PT" != 1 ] && [ "${REPLAY_ONLY:-0}" != 1 ]; then
    command -v pt-query-digest >/dev/null ||
        die "pt-query-digest not found (Debian package percona-toolkit), or SKIP_PT=1"
fi
[ "$PT_MB" -le "$SIZE_MB" ] || PT_MB="$SIZE_MB"
mkdir -p "$OUT"
build_dbmeter

REPLAY_CLIENTS="${REPLAY_CLIENTS:-8}"
REPLAY_TX="${REPLAY_TX:-5000}"
REPLAY_PGBENCH="${REPLAY_PGBENCH:--S}"
REPLAY_ROUNDS="${REPLAY_ROUNDS:-5}"
SKIP_REPLAY="${SKIP_REPLAY:-0}"
REPLAY_ONLY="${REPLAY_ONLY:-0}"
require_positive REPLAY_CLIENTS REPLAY_TX REPLAY_ROUNDS
require_flag SKIP_REPLAY REPLAY_ONLY

mb_of() { python3 -c 'import os,sys; print(f"{os.path.getsize(sys.argv[1]) / 1e6:.1f}")' "$1"; }

replay_case() {
    command -v pgreplay >/dev/null || die "pgreplay not found (Debian package pgreplay), or SKIP_REPLAY=1"
    command -v pgbench >/dev/null || die "pgbench not found (Debian package postgresql), or SKIP_REPLAY=1"
    local dir="$OUT/replay" prefix='%m|%u|%d|%c|'
    rm -rf "$dir"
    mkdir -p "$dir"
    # The server writes its log into $dir (its service user must reach it).
    chmod 777 "$dir"
    PG_SETTINGS="logging_collector=on log_directory=$dir log_filename=pg.log log_line_prefix=$prefix \
log_connections=on log_disconnections=on lc_messages=C log_min_messages=error log_min_error_statement=log"
    trap stop_managed EXIT
    start_managed postgres "replay-bench-$$"
    local url="$MANAGED_URL" host port user db
    read -r host port user db < <(python3 -c '
import sys, urllib.parse as u
p = u.urlparse(sys.argv[1])
print(p.hostname or "127.0.0.1", p.port or 5432, p.username or "postgres", (p.path or "/postgres").lstrip("/") or "postgres")' "$url")
    local conn=(-h "$host" -p "$port" -U "$user")
    log "pgbench -i on $db"
    pgbench -i -s 1 -q "${conn[@]}" "$db" > "$dir/pgbench-init.out" 2>&1 ||
        fail_tool "$dir/pgbench-init.out" "pgbench -i failed"
    psql -X -q "${conn[@]}" -d "$db" -c "ALTER DATABASE \"$db\" SET log_statement = 'all'" > /dev/null
    local before
    before="$(stat -c %s "$dir/pg.log")"
    log "capturing: pgbench $REPLAY_PGBENCH -M simple -c $REPLAY_CLIENTS -t $REPLAY_TX"
    # shellcheck disable=SC2086
    pgbench -n $REPLAY_PGBENCH -M simple -c "$REPLAY_CLIENTS" -j 2 -t "$REPLAY_TX" "${conn[@]}" "$db" \
        > "$dir/pgbench.out" 2>&1 || fail_tool "$dir/pgbench.out" "pgbench failed"
    psql -X -q "${conn[@]}" -d "$db" -c "SELECT 'end of the capture'" > /dev/null
    local t=0
    until grep -q "end of the capture" "$dir/pg.log"; do
        sleep 0.2
        t=$((t + 1))
        [ "$t" -lt 300 ] || die "$dir/pg.log lacks the end of the capture"
    done
    # The replays are not logged.
    psql -X -q "${conn[@]}" -d "$db" -c "ALTER DATABASE \"$db\" RESET log_statement" > /dev/null
    tail -c +"$((before + 1))" "$dir/pg.log" > "$dir/capture.log"
    local statements
    statements="$(grep -c '|LOG:  statement: ' "$dir/capture.log" || true)"
    log "captured $statements statements: $dir/capture.log ($(mb_of "$dir/capture.log") MB)"
    local round d0 d1 p0 p1 results="$dir/rounds.txt"
    : > "$results"
    for round in $(seq "$REPLAY_ROUNDS"); do
        d0="$(now)"
        "$DBMETER_BIN" replay "$dir/capture.log" --db="$url" "--log-line-prefix=$prefix" \
            --format=json --output="$dir/dbmeter-$round.json" > "$dir/dbmeter-$round.out" 2>&1 ||
            fail_tool "$dir/dbmeter-$round.out" "dbmeter replay failed"
        d1="$(now)"
        p0="$(now)"
        timeout 600 pgreplay -h "$host" -p "$port" -j -s 1000000 "$dir/capture.log" \
            > "$dir/pgreplay-$round.out" 2>&1 ||
            fail_tool "$dir/pgreplay-$round.out" "pgreplay failed"
        p1="$(now)"
        echo "$round $(elapsed "$d0" "$d1") $(elapsed "$p0" "$p1")" >> "$results"
        log "round $round: dbmeter $(elapsed "$d0" "$d1") s, pgreplay $(elapsed "$p0" "$p1") s"
    done
    python3 - "$statements" "$results" "$dir" <<'EOF'
import json, re, statistics, sys
n, results, d = int(sys.argv[1]), sys.argv[2], sys.argv[3]
rows = [l.split() for l in open(results) if l.strip()]
ours = [n / float(r[1]) for r in rows]
theirs = [n / float(r[2]) for r in rows]
doc = json.load(open(f"{d}/dbmeter-1.json"))["replay"]
print(f"\nReplay of one PostgreSQL log ({n} statements, {doc['sessions']} sessions), "
      f"{len(rows)} alternating rounds")
print(f"{'':28} {'median stmt/s':>14} {'min':>9} {'max':>9}")
for name, v in (("dbmeter replay", ours), ("pgreplay -j -s 1e6", theirs)):
    print(f"{name:28} {statistics.median(v):14.0f} {min(v):9.0f} {max(v):9.0f}")
print(f"dbmeter / pgreplay: {statistics.median(ours) / statistics.median(theirs):.2f}x")
print(f"dbmeter: {doc['statements']} replayed, {doc['errors']} refused (first round)")
m = re.search(r"SQL statements executed:\s*(\d+)", open(f"{d}/pgreplay-1.out").read())
print(f"pgreplay: {m.group(1) if m else '?'} statements (its report: {d}/pgreplay-1.out)")
if doc["statements"] != n:
    print(f"dbmeter read {doc['statements']} statements, the log has {n}")
    sys.exit(1)
EOF
}

if [ "$SKIP_REPLAY" != 1 ] || [ "$REPLAY_ONLY" = 1 ]; then
    REPLAY_STATUS=0
    replay_case || REPLAY_STATUS=1
    [ "$REPLAY_ONLY" != 1 ] || exit "$REPLAY_STATUS"
    [ "$REPLAY_STATUS" = 0 ] || die "the replay case failed"
fi

LOG="$OUT/slow-${SIZE_MB}MB-s$SEED.log"
PART="$OUT/slow-${PT_MB}MB-of-${SIZE_MB}MB-s$SEED.log"
[ "$PT_MB" -lt "$SIZE_MB" ] || PART="$LOG"
if [ ! -s "$LOG" ]; then
    log "generating a ${SIZE_MB} MB slow log: $LOG"
    python3 "$ROOT/bench/gen_slowlog.py" "$SIZE_MB" "$SEED" > "$LOG.tmp"
    mv "$LOG.tmp" "$LOG"
fi
if [ ! -s "$PART" ]; then
    # The first PT_MB, up to the end of the event that crosses it.
    python3 - "$LOG" "$PART" "$PT_MB" <<'EOF'
import sys
src, dst, mb = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(src, "rb") as f:
    data = f.read(mb * 1_000_000)
    rest = f.read(1 << 20)
cut = (data + rest).find(b";\n#", len(data))
data = (data + rest)[: cut + 2] if cut >= 0 else data + rest
open(dst, "wb").write(data)
EOF
fi

# usage: measure NAME OUTFILE COMMAND...; prints "wall cpu rss_kb"
measure() {
    local name="$1" out="$2" tv="$OUT/$1.time"
    shift 2
    log "running $name"
    /usr/bin/time -v -o "$tv" "$@" > "$out" 2> "$OUT/$name.stderr" ||
        fail_tool "$OUT/$name.stderr" "$name failed"
    python3 - "$tv" <<'EOF'
import re, sys
t = open(sys.argv[1]).read()
def f(label):
    m = re.search(re.escape(label) + r":\s*(\S+)", t)
    return m.group(1) if m else "0"
wall = f("Elapsed (wall clock) time (h:mm:ss or m:ss)")
parts = [float(p) for p in wall.split(":")]
secs = sum(p * 60 ** i for i, p in enumerate(reversed(parts)))
cpu = float(f("User time (seconds)")) + float(f("System time (seconds)"))
print(f"{secs:.2f} {cpu:.2f} {f('Maximum resident set size (kbytes)')}")
EOF
}


CPUS="$(nproc)"
echo "machine: $CPUS CPUs ($(uname -r)); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "dbmeter: $DBMETER_BIN"
read -r FULL_WALL FULL_CPU FULL_RSS < <(measure dbmeter-full "$OUT/dbmeter-full.json" \
    "$DBMETER_BIN" digest "$LOG" --format=json --limit=0)
FULL_MB="$(mb_of "$LOG")"
read -r D_WALL D_CPU D_RSS < <(measure dbmeter-part "$OUT/dbmeter-part.json" \
    "$DBMETER_BIN" digest "$PART" --format=json --limit=0)
PART_MB="$(mb_of "$PART")"

if [ "$SKIP_PT" != 1 ]; then
    read -r P_WALL P_CPU P_RSS < <(measure pt-query-digest "$OUT/pt-query-digest.json" \
        pt-query-digest --limit=100%:100000000 --output=json --no-version-check "$PART")
else
    P_WALL=0 P_CPU=0 P_RSS=0
fi

SLOW_STATUS=0
python3 - "$FULL_MB" "$FULL_WALL" "$FULL_CPU" "$FULL_RSS" "$PART_MB" "$D_WALL" "$D_CPU" "$D_RSS" \
    "$P_WALL" "$P_CPU" "$P_RSS" "$OUT/dbmeter-part.json" "$OUT/pt-query-digest.json" "$SKIP_PT" <<'EOF' || SLOW_STATUS=1
import json, sys
(full_mb, fw, fc, frss, part_mb, dw, dc, drss, pw, pc, prss) = map(float, sys.argv[1:12])
ours_f, theirs_f, skip_pt = sys.argv[12], sys.argv[13], sys.argv[14] == "1"
rate = lambda mb, s: mb / s if s > 0 else float("inf")
print(f"\n{'':26} {'MB':>8} {'wall s':>8} {'CPU s':>8} {'MB/s wall':>10} {'MB/CPU-s':>9} {'peak RSS':>9}")
def row(name, mb, w, c, rss):
    print(f"{name:26} {mb:8.1f} {w:8.2f} {c:8.2f} {rate(mb, w):10.1f} {rate(mb, c):9.1f} {rss / 1024:7.1f}MB")
row("dbmeter digest (all)", full_mb, fw, fc, frss)
row("dbmeter digest (part)", part_mb, dw, dc, drss)
if skip_pt:
    sys.exit(0)
row("pt-query-digest (part)", part_mb, pw, pc, prss)
print(f"\nthroughput, dbmeter / pt-query-digest: {rate(part_mb, dw) / rate(part_mb, pw):.1f}x wall, "
      f"{rate(part_mb, dc) / rate(part_mb, pc):.1f}x per CPU second")
ours = {c["id"]: (c["key"], c["query_count"]) for c in json.load(open(ours_f))["classes"]}
theirs = {c["checksum"]: (c["fingerprint"], c["query_count"]) for c in json.load(open(theirs_f))["classes"]}
if ours == theirs:
    print(f"classes: identical ({len(ours)} classes, {sum(n for _, n in ours.values())} events)")
else:
    diff = sorted(set(ours.items()) ^ set(theirs.items()))
    print(f"classes DIFFER: ours {len(ours)}, pt-query-digest's {len(theirs)}; first differences:")
    for d in diff[:10]:
        print("  ", d)
    sys.exit(1)
EOF

MANY_STATUS=0
if [ "$MANY_CLASSES" -gt 0 ]; then
    MANY="$OUT/slow-${MANY_MB}MB-${MANY_CLASSES}classes-s$SEED.log"
    if [ ! -s "$MANY" ]; then
        log "generating a ${MANY_MB} MB slow log of ${MANY_CLASSES} classes: $MANY"
        python3 "$ROOT/bench/gen_slowlog.py" "$MANY_MB" "$SEED" "$MANY_CLASSES" > "$MANY.tmp"
        mv "$MANY.tmp" "$MANY"
    fi
    read -r M_WALL M_CPU M_RSS < <(measure dbmeter-many "$OUT/dbmeter-many.stdout" \
        "$DBMETER_BIN" digest "$MANY" --format=json --limit=0 --output=/dev/null)
    "$DBMETER_BIN" digest "$MANY" --format=json --limit=1 > "$OUT/dbmeter-many.json"
    python3 - "$(mb_of "$MANY")" "$M_WALL" "$M_CPU" "$M_RSS" "$MANY" "$MANY_CLASSES" \
        "$OUT/dbmeter-many.json" <<'EOF' || MANY_STATUS=1
import json, sys
(mb, w, c, rss) = map(float, sys.argv[1:5])
log, classes, ours = sys.argv[5], int(sys.argv[6]), json.load(open(sys.argv[7]))["global"]
events = sum(1 for line in open(log, "rb") if line.startswith(b"SET timestamp="))
want = min(events, classes)
print(f"\nmany classes: {mb:.1f} MB, {events} events of {want} classes, --limit=0")
print(f"{'dbmeter digest':26} {mb:8.1f} {w:8.2f} {c:8.2f} {mb / w if w else 0:10.1f} "
      f"{mb / c if c else 0:9.1f} {rss / 1024:7.1f}MB")
if (ours["query_count"], ours["unique_query_count"]) == (events, want):
    print(f"classes: {want} as written")
else:
    print(f"classes DIFFER: {ours['unique_query_count']} found, {want} written")
    sys.exit(1)
EOF
fi
[ "$MANY_STATUS" = 0 ] || SLOW_STATUS=1

if [ "$GEN_MB" -gt 0 ]; then
    GENLOG="$OUT/general-$GEN_STYLE-${GEN_MB}MB-s$SEED.log"
    if [ ! -s "$GENLOG" ]; then
        log "generating a ${GEN_MB} MB general log ($GEN_STYLE): $GENLOG"
        python3 "$ROOT/bench/gen_genlog.py" "$GEN_MB" "$SEED" "$GEN_STYLE" > "$GENLOG.tmp"
        mv "$GENLOG.tmp" "$GENLOG"
    fi
    read -r Q_WALL Q_CPU Q_RSS < <(measure dbmeter-general "$OUT/dbmeter-general.json" \
        "$DBMETER_BIN" digest "$GENLOG" --format=json --limit=0)
    read -r Q1_WALL Q1_CPU Q1_RSS < <(measure dbmeter-general-1 "$OUT/dbmeter-general-1.json" \
        "$DBMETER_BIN" digest "$GENLOG" --format=json --limit=0 --threads=1)
    python3 - "$(mb_of "$GENLOG")" "$Q_WALL" "$Q_CPU" "$Q_RSS" "$Q1_WALL" "$Q1_CPU" "$Q1_RSS" \
        "$OUT/dbmeter-general.json" "$OUT/dbmeter-general-1.json" "$CPUS" "$GEN_STYLE" <<'EOF' || SLOW_STATUS=1
import json, sys
(mb, w, c, rss, w1, c1, rss1) = map(float, sys.argv[1:8])
many_f, one_f, cpus, style = sys.argv[8], sys.argv[9], sys.argv[10], sys.argv[11]
rate = lambda mb, s: mb / s if s > 0 else float("inf")
print(f"\ngeneral log ({style})")
print(f"{'':26} {'MB':>8} {'wall s':>8} {'CPU s':>8} {'MB/s wall':>10} {'MB/CPU-s':>9} {'peak RSS':>9}")
def row(name, w, c, rss):
    print(f"{name:26} {mb:8.1f} {w:8.2f} {c:8.2f} {rate(mb, w):10.1f} {rate(mb, c):9.1f} {rss / 1024:7.1f}MB")
row(f"dbmeter digest ({cpus} thr)", w, c, rss)
row("dbmeter digest --threads=1", w1, c1, rss1)
print(f"dbmeter, {cpus} threads / 1: {rate(mb, w) / rate(mb, w1):.2f}x wall")
def facts(f):
    d = json.load(open(f))
    return (d["global"]["query_count"], d["malformed"]["count"],
            {c["id"]: (c["query_count"], c["databases"], c["users"], c["hosts"]) for c in d["classes"]})
many, one = facts(many_f), facts(one_f)
print(f"dbmeter: {many[0]} events in {len(many[2])} classes, {many[1]} malformed lines")
if many != one:
    print("dbmeter DIFFERS with --threads=1")
    sys.exit(1)
print("dbmeter --threads=1: the same classes, counts, databases, users and hosts")
EOF
fi

[ "$PG_MB" -gt 0 ] || exit "$SLOW_STATUS"
PGLOG="$OUT/pg-stderr-$PG_STYLE-${PG_MB}MB-s$SEED.log"
if [ ! -s "$PGLOG" ]; then
    log "generating a ${PG_MB} MB PostgreSQL stderr log ($PG_STYLE): $PGLOG"
    python3 "$ROOT/bench/gen_pglog.py" "$PG_MB" "$SEED" "$PG_STYLE" > "$PGLOG.tmp"
    mv "$PGLOG.tmp" "$PGLOG"
fi
PG_SIZE="$(mb_of "$PGLOG")"
read -r G_WALL G_CPU G_RSS < <(measure dbmeter-pg "$OUT/dbmeter-pg.json" \
    "$DBMETER_BIN" digest "$PGLOG" --format=json --limit=0)
read -r G1_WALL G1_CPU G1_RSS < <(measure dbmeter-pg-1 "$OUT/dbmeter-pg-1.json" \
    "$DBMETER_BIN" digest "$PGLOG" --format=json --limit=0 --threads=1)
if [ "$SKIP_PGBADGER" != 1 ]; then
    read -r B_WALL B_CPU B_RSS < <(measure pgbadger "$OUT/pgbadger.stdout" \
        pgbadger -j 2 -q -f stderr --prefix '%m [%p] %q%u@%d ' -o "$OUT/pgbadger.json" "$PGLOG")
else
    B_WALL=0 B_CPU=0 B_RSS=0
fi
PG_STATUS=0
python3 - "$PG_SIZE" "$G_WALL" "$G_CPU" "$G_RSS" "$B_WALL" "$B_CPU" "$B_RSS" \
    "$OUT/dbmeter-pg.json" "$OUT/pgbadger.json" "$SKIP_PGBADGER" \
    "$G1_WALL" "$G1_CPU" "$G1_RSS" "$OUT/dbmeter-pg-1.json" "$PG_STYLE" "$CPUS" "$PGLOG" <<'EOF' || PG_STATUS=1
import json, sys
(mb, gw, gc, grss, bw, bc, brss) = map(float, sys.argv[1:8])
ours_f, theirs_f, skip = sys.argv[8], sys.argv[9], sys.argv[10] == "1"
(g1w, g1c, g1rss) = map(float, sys.argv[11:14])
one_f, style, cpus, log = sys.argv[14], sys.argv[15], sys.argv[16], sys.argv[17]
rate = lambda mb, s: mb / s if s > 0 else float("inf")
print(f"\nPostgreSQL stderr log ({style})")
print(f"{'':26} {'MB':>8} {'wall s':>8} {'CPU s':>8} {'MB/s wall':>10} {'MB/CPU-s':>9} {'peak RSS':>9}")
def row(name, w, c, rss):
    print(f"{name:26} {mb:8.1f} {w:8.2f} {c:8.2f} {rate(mb, w):10.1f} {rate(mb, c):9.1f} {rss / 1024:7.1f}MB")
row(f"dbmeter digest ({cpus} thr)", gw, gc, grss)
row("dbmeter digest --threads=1", g1w, g1c, g1rss)
print(f"dbmeter, {cpus} threads / 1: {rate(mb, gw) / rate(mb, g1w):.2f}x wall")
ours = json.load(open(ours_f))
n = ours["global"]["query_count"]
print(f"dbmeter: {n} statements in {len(ours['classes'])} classes, "
      f"{ours['malformed']['count']} malformed lines")
classes = lambda d: {c["id"]: (c["query_count"], c["attributes"].get("Query_time", {}).get("numbers", {}).get("count"))
                     for c in d["classes"]}
one = json.load(open(one_f))
if classes(one) != classes(ours) or one["global"]["query_count"] != n:
    print(f"dbmeter DIFFERS with --threads=1: {one['global']['query_count']} statements")
    sys.exit(1)
print("dbmeter --threads=1: the same classes, counts and timed counts")
if skip:
    sys.exit(0)
row("pgbadger -j 2", bw, bc, brss)
print(f"throughput, dbmeter / pgbadger -j 2: {rate(mb, gw) / rate(mb, bw):.1f}x wall, "
      f"{rate(mb, gc) / rate(mb, bc):.1f}x per CPU second")
theirs = json.load(open(theirs_f))["overall_stat"]["queries_number"]
if style == "pairs":
    # pgBadger counts every duration line, parse's and bind's too: the
    # statements are the log's `statement:` and `execute` entries.
    want = sum(1 for l in open(log, "rb") if b"LOG:  statement: " in l or b"LOG:  execute " in l)
    print(f"statements: dbmeter {n}, the log's statement and execute entries {want}; "
          f"pgBadger {theirs} (it counts each parse and bind duration as a query)")
    sys.exit(0 if n == want else 1)
if theirs == n:
    print(f"statements: identical ({n})")
else:
    print(f"statements DIFFER: dbmeter {n}, pgbadger {theirs}")
    sys.exit(1)
EOF
[ "$SLOW_STATUS" = 0 ] && [ "$PG_STATUS" = 0 ]
