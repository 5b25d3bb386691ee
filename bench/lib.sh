# Shared helpers of the bench/ scripts; source it after setting ROOT.
#   die MESSAGE                 print "error: MESSAGE" and exit 1
#   log MESSAGE                 timestamped line on standard error
#   require_positive VAR...     each variable must hold a positive integer
#   require_flag VAR...         each variable must be 0 or 1
#   check_servers LIST          each word must be mariadb or postgres
#   build_dbmeter               sets DBMETER_BIN (builds a release binary
#                               unless DBMETER_BIN is already set)
#   install_sysbench            apt-get installs sysbench when it is missing
#   fail_tool LOG MESSAGE       show the end of a tool's output, then die
#   start_managed SERVER NAME   `dbmeter server start` with MARIADB_SETTINGS or
#                               PG_SETTINGS; sets MANAGED_URL; stop_managed
#                               (trap it on EXIT) removes every one started
#   now / elapsed T0 T1         wall-clock seconds
# shellcheck shell=bash

die() { echo "error: $*" >&2; exit 1; }
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }

require_positive() {
    local v
    for v in "$@"; do
        [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive integer"
    done
}

require_flag() {
    local v
    for v in "$@"; do
        [[ "${!v}" =~ ^[01]$ ]] || die "$v must be 0 or 1"
    done
}

check_servers() { # LIST
    local s
    for s in $1; do
        case "$s" in
            mariadb|postgres) ;;
            *) die "SERVERS: unknown server $s (mariadb, postgres)" ;;
        esac
    done
}

build_dbmeter() {
    if [ -z "${DBMETER_BIN:-}" ]; then
        echo "building dbmeter (release)..." >&2
        (cd "$ROOT" && cargo build --release -p dbmeter >&2)
        DBMETER_BIN="$ROOT/target/release/dbmeter"
    fi
    [ -x "$DBMETER_BIN" ] || die "dbmeter binary not found: $DBMETER_BIN"
}

install_sysbench() {
    command -v sysbench >/dev/null 2>&1 && return 0
    echo "installing sysbench..." >&2
    export DEBIAN_FRONTEND=noninteractive
    local attempt
    for attempt in 1 2 3; do
        if apt-get -o DPkg::Lock::Timeout=600 install -y sysbench >&2 ||
           { apt-get -o DPkg::Lock::Timeout=600 update >&2 &&
             apt-get -o DPkg::Lock::Timeout=600 install -y sysbench >&2; }; then
            return 0
        fi
        echo "apt failed (attempt $attempt), retrying in 20s..." >&2
        sleep 20
    done
    die "could not install sysbench"
}

fail_tool() { # LOG MESSAGE
    echo "----- last lines of $1 -----" >&2
    tail -n 20 "$1" >&2 || true
    echo "-----" >&2
    die "$2 (full output: $1)"
}

MANAGED_STARTED=()
stop_managed() {
    local n
    for n in "${MANAGED_STARTED[@]}"; do
        "$DBMETER_BIN" server stop "$n" --remove >/dev/null 2>&1 || true
    done
}

start_managed() { # SERVER NAME; sets MANAGED_URL
    local srv="$1" name="$2" sets=() kv
    case "$srv" in
        mariadb) for kv in ${MARIADB_SETTINGS:-}; do sets+=(--set "$kv"); done ;;
        postgres) for kv in ${PG_SETTINGS:-}; do sets+=(--set "$kv"); done ;;
    esac
    log "starting a managed $srv server ($name)"
    MANAGED_URL="$("$DBMETER_BIN" server start "$srv" --name "$name" "${sets[@]}")" ||
        die "dbmeter server start $srv failed"
    MANAGED_STARTED+=("$name")
    log "  $MANAGED_URL"
}

now() { date +%s.%N; }
elapsed() { python3 -c 'import sys; print(f"{float(sys.argv[2]) - float(sys.argv[1]):.3f}")' "$1" "$2"; }
