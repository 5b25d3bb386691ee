#!/usr/bin/env bash
# dbmeter's tpcc workload against managed MariaDB and PostgreSQL servers.
#
# For each server (started by `dbmeter server start`, removed at the end):
#   1. prepare: W warehouses (default 4) with PREPARE_THREADS loaders; prints the
#      wall-clock load time per warehouse. Goal: <= 1.5 s per warehouse
#      (go-tpc measured 3.0 s per warehouse on this kind of machine).
#   2. run: CLIENTS terminals (default 4) for TIME seconds (default 60), client-side
#      SQL; prints NOPM, TPM and the client's CPU per transaction = (user+sys
#      CPU of the dbmeter process, from /usr/bin/time) / transactions.
#      Goal: <= 0.25 ms per transaction (go-tpc: 0.47 ms).
#   3. check: the consistency conditions after the run.
# MODES="client procedures" adds a run with --stored-procedures (default: client).
#
# Environment overrides:
#   WAREHOUSES=4 PREPARE_THREADS=3 CLIENTS=4 TIME=60 SERVERS="mariadb postgres"
#   MODES="client"
#   MARIADB_SETTINGS="innodb_buffer_pool_size=2G innodb_log_file_size=512M"
#   PG_SETTINGS="shared_buffers=1GB max_wal_size=4GB"
#   DBMETER_BIN=path         use this binary instead of building one (release)
# Raw output is kept in bench/out/tpcc/<timestamp>/.
set -euo pipefail
shopt -s inherit_errexit

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WAREHOUSES="${WAREHOUSES:-4}"
PREPARE_THREADS="${PREPARE_THREADS:-3}"
CLIENTS="${CLIENTS:-4}"
TIME="${TIME:-60}"
SERVERS="${SERVERS:-mariadb postgres}"
MODES="${MODES:-client}"
MARIADB_SETTINGS="${MARIADB_SETTINGS:-innodb_buffer_pool_size=2G innodb_log_file_size=512M}"
PG_SETTINGS="${PG_SETTINGS:-shared_buffers=1GB max_wal_size=4GB}"

# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
require_positive WAREHOUSES PREPARE_THREADS CLIENTS TIME
check_servers "$SERVERS"
for m in $MODES; do
    case "$m" in client|procedures) ;; *) die "MODES: unknown mode $m (client, procedures)" ;; esac
done
command -v python3 >/dev/null || die "python3 is required"
[ -x /usr/bin/time ] || die "/usr/bin/time (GNU time) is required"

STAMP="$(date +%Y%m%d-%H%M%S)"
OUT="$ROOT/bench/out/tpcc/$STAMP"
mkdir -p "$OUT"
RESULTS="$OUT/results.tsv"   # server key value
: > "$RESULTS"

build_dbmeter
trap stop_managed EXIT

bench_server() { # SERVER
    local srv="$1" name="tpcc-$1-$STAMP" url
    start_managed "$srv" "$name"
    url="$MANAGED_URL"
    local pre="$OUT/$srv" t0 t1
    log "prepare: $WAREHOUSES warehouses, $PREPARE_THREADS threads"
    t0="$(now)"
    "$DBMETER_BIN" prepare tpcc --db="$url" --warehouses="$WAREHOUSES" \
        --threads="$PREPARE_THREADS" > "$pre.prepare.txt" 2>&1 ||
        fail_tool "$pre.prepare.txt" "prepare failed on $srv"
    t1="$(now)"
    python3 -c 'import sys; print(sys.argv[1], "load_s_per_warehouse", (float(sys.argv[3]) - float(sys.argv[2])) / int(sys.argv[4]))' \
        "$srv" "$t0" "$t1" "$WAREHOUSES" | tr ' ' '\t' >> "$RESULTS"
    local mode flag
    for mode in $MODES; do
        flag=off
        [ "$mode" = procedures ] && flag=on
        log "run: $CLIENTS clients, $TIME s, $mode"
        /usr/bin/time -f '%U %S' -o "$pre.$mode.time" \
            "$DBMETER_BIN" run tpcc --db="$url" --threads="$CLIENTS" --time="$TIME" \
                --stored-procedures="$flag" --format=json --output="$pre.$mode.json" \
                > "$pre.$mode.txt" 2>&1 || fail_tool "$pre.$mode.txt" "run failed on $srv"
        python3 - "$srv" "$mode" "$pre.$mode.json" "$pre.$mode.time" >> "$RESULTS" <<'EOF' ||
import json, sys
srv, mode, jf, tf = sys.argv[1:]
doc = json.load(open(jf))
if doc["end"]["reason"] not in ("time_limit", "event_limit"):
    sys.exit(f"run ended with {doc['end']}")
t = doc["tpcc"]
tx = sum(x["count"] for x in t["transactions"])
u, s = open(tf).read().split()[-2:]
cpu_ms = (float(u) + float(s)) * 1000 / tx if tx else float("inf")
for k, v in [("nopm", t["nopm"]), ("tpm", t["tpm"]), ("transactions", tx),
             ("cpu_ms_per_tx", cpu_ms), ("retries", sum(x["retries"] for x in t["transactions"]))]:
    print(f"{srv}\t{mode}.{k}\t{v}")
EOF
            fail_tool "$pre.$mode.json" "bad JSON from the run on $srv"
        "$DBMETER_BIN" check tpcc --db="$url" > "$pre.$mode.check.txt" 2>&1 ||
            fail_tool "$pre.$mode.check.txt" "check failed after the $mode run on $srv"
    done
    "$DBMETER_BIN" server stop "$name" --remove >/dev/null 2>&1 || true
}

log "raw output: $OUT"
for srv in $SERVERS; do
    bench_server "$srv"
done

python3 - "$RESULTS" "$WAREHOUSES" "$PREPARE_THREADS" "$CLIENTS" "$TIME" "$MODES" <<'EOF' | tee "$OUT/report.txt"
import sys
f, w, pt, clients, secs, modes = sys.argv[1:]
names = {"mariadb": "MariaDB", "postgres": "PostgreSQL"}
r = {}
for line in open(f):
    if line.strip():
        srv, k, v = line.rstrip("\n").split("\t")
        r.setdefault(srv, {})[k] = float(v)
pf = lambda ok: "PASS" if ok else "FAIL"
for srv, v in r.items():
    print(f"\n=== {names[srv]}: tpcc, {w} warehouses ===")
    load = v["load_s_per_warehouse"]
    print(f"load: {load:.2f} s per warehouse ({pt} threads); go-tpc 3.0 s; "
          f"go-tpc/dbmeter {3.0 / load:.2f}")
    print(f"  {pf(load <= 1.5)}  load <= 1.5 s per warehouse")
    for m in modes.split():
        cpu = v[f"{m}.cpu_ms_per_tx"]
        print(f"run ({m}, {clients} clients, {secs} s): NOPM {v[f'{m}.nopm']:,.0f}, "
              f"TPM {v[f'{m}.tpm']:,.0f}, {v[f'{m}.transactions']:,.0f} transactions, "
              f"{v[f'{m}.retries']:,.0f} retries, client CPU {cpu:.3f} ms per transaction "
              f"(go-tpc 0.47 ms; go-tpc/dbmeter {0.47 / cpu:.2f})")
        print(f"  {pf(cpu <= 0.25)}  client CPU <= 0.25 ms per transaction ({m})")
EOF
log "raw output and report: $OUT"
