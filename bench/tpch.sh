#!/usr/bin/env bash
# dbmeter's tpch benchmark at scale factor SF (default 1) against managed
# MariaDB and PostgreSQL servers, and dbmeter's generator against tpchgen-cli.
#
#   1. generation: `dbmeter prepare tpch --output=DIR` against `tpchgen-cli`
#      (cargo install), both with every CPU, alternating, REPEAT times each;
#      the files must be byte for byte the same. Goal: dbmeter within 1.2x.
#   2. for each server:
#      a. load: dbmeter's load phase (rows generated and streamed: COPY /
#         LOAD DATA LOCAL INFILE, THREADS loaders; the "Loaded ..." line)
#         against the floor: the server's own bulk load of the same rows from
#         the .tbl files (psql \copy / LOAD DATA LOCAL INFILE by the mariadb
#         client), THREADS sessions at once over the files cut in THREADS
#         pieces, into the same empty tables. Alternating, REPEAT times each.
#         Goal: dbmeter within 1.2x of the floor.
#      b. `check tpch --validation` (SF 1 only): all 22 answers must match
#         the official SF1 answers; then the 22 query times of a power test
#         with the validation parameters (refresh functions on).
#
# Environment overrides:
#   SF=1 THREADS=<CPUs> REPEAT=2 SERVERS="mariadb postgres"
#   MARIADB_SETTINGS="innodb_buffer_pool_size=4G innodb_log_file_size=1G"
#   PG_SETTINGS="shared_buffers=2GB max_wal_size=8GB"
#   DBMETER_BIN=path   use this binary instead of building one (release)
# Raw output is kept in bench/out/tpch/<timestamp>/.
set -euo pipefail
shopt -s inherit_errexit

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SF="${SF:-1}"
THREADS="${THREADS:-$(nproc)}"
REPEAT="${REPEAT:-2}"
SERVERS="${SERVERS:-mariadb postgres}"
MARIADB_SETTINGS="${MARIADB_SETTINGS:-innodb_buffer_pool_size=4G innodb_log_file_size=1G}"
PG_SETTINGS="${PG_SETTINGS:-shared_buffers=2GB max_wal_size=8GB}"

# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
require_positive THREADS REPEAT
check_servers "$SERVERS"
command -v python3 >/dev/null || die "python3 is required"

STAMP="$(date +%Y%m%d-%H%M%S)"
OUT="$ROOT/bench/out/tpch/$STAMP"
mkdir -p "$OUT"
RESULTS="$OUT/results.tsv"   # server key value
: > "$RESULTS"
TABLES="region nation part supplier partsupp customer orders lineitem"

build_dbmeter
trap 'stop_managed; rm -rf "$OUT/gen-a" "$OUT/gen-b" "$OUT/tbl" "$OUT/pieces"' EXIT
if ! command -v tpchgen-cli >/dev/null 2>&1; then
    log "installing tpchgen-cli (cargo install --locked)"
    cargo install --locked tpchgen-cli >&2 || die "cannot install tpchgen-cli"
fi
PATH="$PATH:$HOME/.cargo/bin"

record() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >> "$RESULTS"; }

# 1. Generation.
for i in $(seq "$REPEAT"); do
    rm -rf "$OUT/gen-a" "$OUT/gen-b"
    log "generation $i: tpchgen-cli -s $SF"
    t0="$(now)"
    tpchgen-cli -s "$SF" --output-dir="$OUT/gen-a" > "$OUT/tpchgen.txt" 2>&1 ||
        fail_tool "$OUT/tpchgen.txt" "tpchgen-cli failed"
    t1="$(now)"
    record gen "tpchgen_s" "$(elapsed "$t0" "$t1")"
    log "generation $i: dbmeter prepare tpch --output"
    t0="$(now)"
    "$DBMETER_BIN" prepare tpch --scale-factor="$SF" --output="$OUT/gen-b" \
        > "$OUT/gen.txt" 2>&1 || fail_tool "$OUT/gen.txt" "dbmeter --output failed"
    t1="$(now)"
    record gen "dbmeter_s" "$(elapsed "$t0" "$t1")"
done
for t in $TABLES; do
    cmp -s "$OUT/gen-a/$t.tbl" "$OUT/gen-b/$t.tbl" || die "$t.tbl differs from tpchgen-cli's"
done
record gen identical 1
mv "$OUT/gen-b" "$OUT/tbl"
rm -rf "$OUT/gen-a"

# The floor's input: each table in THREADS pieces of whole lines; without
# dbgen's trailing '|' for PostgreSQL's COPY.
mkdir -p "$OUT/pieces/my" "$OUT/pieces/pg"
for t in $TABLES; do
    split -n "l/$THREADS" -d "$OUT/tbl/$t.tbl" "$OUT/pieces/my/$t."
    for p in "$OUT/pieces/my/$t."*; do
        sed 's/|$//' "$p" > "$OUT/pieces/pg/$(basename "$p")"
    done
done
chmod -R a+rX "$OUT/pieces"

url_part() { python3 -c 'import sys, urllib.parse as u; p = u.urlsplit(sys.argv[1]); print({"host": p.hostname, "port": p.port, "user": p.username, "db": p.path.lstrip("/")}[sys.argv[2]])' "$1" "$2"; }

sql() { # SERVER URL SQL
    local host port user db
    host="$(url_part "$2" host)"; port="$(url_part "$2" port)"
    user="$(url_part "$2" user)"; db="$(url_part "$2" db)"
    case "$1" in
        mariadb) mariadb --local-infile=1 -h"$host" -P"$port" -u"$user" "$db" -N -B -e "$3" ;;
        postgres) psql -h "$host" -p "$port" -U "$user" -d "$db" -v ON_ERROR_STOP=1 -qtAc "$3" ;;
    esac
}

# Empty tables as dbmeter's load phase finds them: dbmeter makes them (a
# tiny prepare), then the rows, the secondary indexes, the foreign keys and
# (PostgreSQL) the primary keys go.
empty_tables() { # SERVER URL
    "$DBMETER_BIN" cleanup tpch --db="$2" > /dev/null
    "$DBMETER_BIN" prepare tpch --db="$2" --scale-factor=0.01 --foreign-keys=off > /dev/null
    local t idx
    for t in $TABLES; do
        case "$1" in
            mariadb)
                for idx in $(sql "$1" "$2" "SELECT DISTINCT index_name FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = '$t' AND index_name <> 'PRIMARY'"); do
                    sql "$1" "$2" "DROP INDEX $idx ON $t"
                done
                sql "$1" "$2" "TRUNCATE TABLE $t" ;;
            postgres)
                for idx in $(sql "$1" "$2" "SELECT indexname FROM pg_indexes WHERE schemaname = 'public' AND tablename = '$t' AND indexname NOT LIKE '%_pkey'"); do
                    sql "$1" "$2" "DROP INDEX $idx"
                done
                sql "$1" "$2" "ALTER TABLE $t DROP CONSTRAINT IF EXISTS ${t}_pkey"
                sql "$1" "$2" "TRUNCATE TABLE $t" ;;
        esac
    done
}

floor_load() { # SERVER URL
    local t p i pids=()
    for i in $(seq 0 $((THREADS - 1))); do
        (
            for t in $TABLES; do
                case "$1" in
                    mariadb)
                        p="$OUT/pieces/my/$t.$(printf '%02d' "$i")"
                        sql "$1" "$2" "SET foreign_key_checks = 0, unique_checks = 0; LOAD DATA LOCAL INFILE '$p' INTO TABLE $t CHARACTER SET latin1 FIELDS TERMINATED BY '|' ESCAPED BY '' LINES TERMINATED BY '|\n'" ;;
                    postgres)
                        p="$OUT/pieces/pg/$t.$(printf '%02d' "$i")"
                        sql "$1" "$2" "\\copy $t FROM '$p' WITH (FORMAT text, DELIMITER '|')" ;;
                esac
            done
        ) &
        pids+=("$!")
    done
    for p in "${pids[@]}"; do wait "$p" || die "a floor load failed"; done
}

bench_server() { # SERVER
    local srv="$1" name="tpch-$1-$STAMP" url pre="$OUT/$1" t0 t1 i
    start_managed "$srv" "$name"
    url="$MANAGED_URL"
    for i in $(seq "$REPEAT"); do
        log "$srv load $i: floor ($THREADS sessions, the server's own bulk load of the files)"
        empty_tables "$srv" "$url"
        t0="$(now)"
        floor_load "$srv" "$url"
        t1="$(now)"
        record "$srv" floor_s "$(elapsed "$t0" "$t1")"
        [ "$(sql "$srv" "$url" "SELECT COUNT(*) FROM lineitem")" -gt 0 ] || die "the floor loaded nothing"
        log "$srv load $i: dbmeter prepare tpch ($THREADS loaders)"
        "$DBMETER_BIN" cleanup tpch --db="$url" > /dev/null
        "$DBMETER_BIN" prepare tpch --db="$url" --scale-factor="$SF" --threads="$THREADS" \
            > "$pre.prepare.$i.txt" 2>&1 || fail_tool "$pre.prepare.$i.txt" "prepare failed on $srv"
        python3 - "$srv" "$pre.prepare.$i.txt" >> "$RESULTS" <<'EOF'
import re, sys
srv, f = sys.argv[1:]
text = open(f).read()
load = re.search(r"Loaded (\d+) rows in 8 tables in ([0-9.]+) s", text)
ready = re.search(r"ready in ([0-9.]+) s", text)
if not (load and ready):
    sys.exit(f"no load line in {f}")
print(f"{srv}\tdbmeter_load_s\t{load.group(2)}")
print(f"{srv}\tdbmeter_ready_s\t{ready.group(1)}")
print(f"{srv}\trows\t{load.group(1)}")
EOF
    done
    # The official answers are for the data as loaded: check before the
    # refresh functions of the power test change it.
    if [ "$SF" = 1 ]; then
        log "$srv: check tpch --validation"
        "$DBMETER_BIN" check tpch --db="$url" --validation > "$pre.check.txt" 2>&1 || true
        record "$srv" valid "$(grep -c '^ok     Q' "$pre.check.txt" || true)"
    fi
    log "$srv: power test, validation parameters"
    "$DBMETER_BIN" run tpch --db="$url" --validation --format=json --output="$pre.power.json" \
        > "$pre.power.txt" 2>&1 || fail_tool "$pre.power.txt" "the power test failed on $srv"
    python3 - "$srv" "$pre.power.json" >> "$RESULTS" <<'EOF'
import json, sys
srv, f = sys.argv[1:]
t = json.load(open(f))["tpch"]
for q in t["queries"]:
    print(f"{srv}\tQ{q['query']}\t{q['seconds'] if q['seconds'] is not None else q['status']}")
for r in t["refreshes"]:
    print(f"{srv}\t{r['name']}\t{r['seconds']}")
m = t["metrics"]
print(f"{srv}\tpower\t{m.get('power_at_size')}")
print(f"{srv}\tgeomean\t{m.get('geomean_seconds')}")
EOF
    "$DBMETER_BIN" server stop "$name" --remove >/dev/null 2>&1 || true
}

log "raw output: $OUT"
for srv in $SERVERS; do
    bench_server "$srv"
done

python3 - "$RESULTS" "$SF" "$THREADS" <<'EOF' | tee "$OUT/report.txt"
import statistics, sys
f, sf, threads = sys.argv[1:]
r = {}
for line in open(f):
    if line.strip():
        srv, k, v = line.rstrip("\n").split("\t")
        r.setdefault(srv, {}).setdefault(k, []).append(v)
pf = lambda ok: "PASS" if ok else "FAIL"
med = lambda xs: statistics.median(float(x) for x in xs)
g = r["gen"]
a, b = med(g["tpchgen_s"]), med(g["dbmeter_s"])
print(f"=== generation, SF {sf}, {threads} threads ===")
print(f"tpchgen-cli {a:.2f} s, dbmeter {b:.2f} s (medians of {len(g['dbmeter_s'])}); dbmeter/tpchgen {b / a:.2f}")
print(f"  {pf(b / a <= 1.2)}  generation within 1.2x of tpchgen-cli; files identical")
names = {"mariadb": "MariaDB", "postgres": "PostgreSQL"}
for srv, v in r.items():
    if srv == "gen":
        continue
    floor, load = med(v["floor_s"]), med(v["dbmeter_load_s"])
    print(f"\n=== {names[srv]}: SF {sf} ===")
    print(f"load: dbmeter {load:.1f} s ({int(float(v['rows'][0])):,} rows; ready with indexes and "
          f"statistics in {med(v['dbmeter_ready_s']):.1f} s), floor {floor:.1f} s; "
          f"dbmeter/floor {load / floor:.2f}")
    print(f"  {pf(load / floor <= 1.2)}  load within 1.2x of the server's own bulk load")
    qs = [(f"Q{i}", v.get(f"Q{i}", ["-"])[0]) for i in range(1, 23)]
    print("query times (s): " + ", ".join(f"{k} {float(x):.2f}" if x[0].isdigit() else f"{k} {x}" for k, x in qs))
    print(f"RF1 {v.get('RF1', ['-'])[0]} s, RF2 {v.get('RF2', ['-'])[0]} s, Power@{sf} {v['power'][0]}, "
          f"geometric mean {v['geomean'][0]} s")
    if "valid" in v:
        n = int(v["valid"][0])
        print(f"  {pf(n == 22)}  {n} of 22 answers match the official SF1 answers")
EOF
log "raw output and report: $OUT"
