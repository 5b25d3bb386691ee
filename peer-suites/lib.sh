# Shared by the peer-suite runners: their command line, and the comparison
# of what failed with the list of expected failures (--expect FILE).

# parse_args "$@": sets tool, dbmeter, expect (an absolute path), keep and
# tests (the test names); --help prints the calling script's header.
parse_args() {
    local repo
    repo="$(cd "$here/.." && pwd)"
    tool=dbmeter
    dbmeter="${DBMETER_BIN:-$repo/target/debug/dbmeter}"
    keep=0
    expect=""
    tests=()
    while [ $# -gt 0 ]; do
        case "$1" in
            --tool) tool="$2"; shift 2 ;;
            --tool=*) tool="${1#*=}"; shift ;;
            --dbmeter) dbmeter="$2"; shift 2 ;;
            --dbmeter=*) dbmeter="${1#*=}"; shift ;;
            --expect) expect="$2"; shift 2 ;;
            --expect=*) expect="${1#*=}"; shift ;;
            --keep) keep=1; shift ;;
            -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
            -*) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
            *) tests+=("$1"); shift ;;
        esac
    done
    [ -z "$expect" ] || expect="$(realpath "$expect")"
    # The shims run it from other directories.
    dbmeter="$(realpath -m "$dbmeter")"
}

skip() { echo "SKIP: $*" >&2; exit 77; }
#
# summarise FAILED_FILE PASSED_NAMES: FAILED_FILE holds one failed test a
# line; PASSED_NAMES the names that passed, one a line. Uses $expect.
summarise() {
    local failed="$1" passed="$2" known unexpected fixed
    known="$(mktemp)"
    if [ -n "$expect" ]; then
        sed -e '/^[[:space:]]*#/d' -e 's/[[:space:]][[:space:]]*# .*$//' -e '/^[[:space:]]*$/d' "$expect" | sort -u >"$known"
    fi
    unexpected="$(comm -23 "$failed" "$known")"
    fixed="$(printf '%s\n' "$passed" | sort -u | comm -12 - "$known")"
    rm -f "$known"
    echo
    echo "== $(wc -l <"$failed") failed, $(printf '%s' "$passed" | grep -c .) passed"
    if [ -n "$fixed" ]; then
        echo "== listed in $expect as failing, but passed (remove them from the list):"
        printf '   %s\n' $fixed
    fi
    if [ -n "$unexpected" ]; then
        echo "== FAILED, not expected to:"
        printf '%s\n' "$unexpected" | sed 's/^/   /'
        return 1
    fi
    echo "== no unexpected failure"
    return 0
}
