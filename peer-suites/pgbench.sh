#!/usr/bin/env bash
# Runs pgbench 15's own TAP tests (src/bin/pgbench/t/*.pl of PostgreSQL 15)
# against `dbmeter pgbench` through a shim named `pgbench`, or against the
# real pgbench to compare. The tests are not changed: they run under prove
# with PostgreSQL's own Perl test modules (src/test/perl), which start their
# own throwaway PostgreSQL server.
#
#   peer-suites/pgbench.sh [--tool dbmeter|pgbench] [--dbmeter BIN]
#                          [--expect FILE] [--keep] [TEST ...]
#                          (TEST: 001_pgbench_with_server or t/001_...pl)
#
# --expect FILE: the subtests known to fail, one a line as this script names
# them ("002_pgbench_no_server: <its description>"), a reason after ' #'
# (peer-suites/pgbench.expected); then only a failure not in the list fails
# the run, and a listed subtest that passes is reported.
#
# The suite comes from PGBENCH_SUITE_SRC (a PostgreSQL 15 source tree), or
# from the cache (~/.cache/dbmeter-peers/postgresql-15), filled once from
# Debian's source package postgresql-15 (deb-src must be enabled). It needs
# prove (perl), IPC::Run (libipc-run-perl), PostgreSQL 15's server binaries
# and pg_regress (postgresql-15, postgresql-client-15). initdb refuses root,
# so as root the tests run as the postgres user.
#
# Exit status: 0 when every test passes, 1 when one fails, 77 when the suite
# or a tool it needs is missing.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=peer-suites/lib.sh
. "$here/lib.sh"
parse_args "$@"

# --- the suite ----------------------------------------------------------------
cache="${XDG_CACHE_HOME:-$HOME/.cache}/dbmeter-peers"
src="${PGBENCH_SUITE_SRC:-$cache/postgresql-15}"
if [ ! -d "$src/src/bin/pgbench/t" ]; then
    mkdir -p "$cache"
    dl="$(mktemp -d "$cache/dl.XXXXXX")"
    # The newest version first; a mirror may have dropped some source files.
    for v in $(apt-cache showsrc postgresql-15 2>/dev/null | sed -n 's/^Version: //p' | sort -rV); do
        if (cd "$dl" && apt-get source --download-only "postgresql-15=$v" >/dev/null 2>&1); then
            tarball="$(ls "$dl"/postgresql-15_*.orig.tar.* | head -n 1)"
            mkdir -p "$src"
            tar xf "$tarball" -C "$src" --strip-components=1 --wildcards \
                '*/src/bin/pgbench/t/*' '*/src/test/perl/*'
            echo "$v" >"$src/DEBIAN_VERSION"
            break
        fi
    done
    rm -rf "$dl"
    [ -d "$src/src/bin/pgbench/t" ] || skip "pgbench 15's tests: set PGBENCH_SUITE_SRC to a PostgreSQL 15 source tree, or enable deb-src so that 'apt-get source postgresql-15' works"
fi
command -v prove >/dev/null 2>&1 || skip "prove (package perl)"
perl -MIPC::Run -e 1 2>/dev/null || skip "IPC::Run (package libipc-run-perl)"
pgbin=""
for d in /usr/lib/postgresql/15/bin; do [ -x "$d/initdb" ] && pgbin="$d"; done
[ -n "$pgbin" ] || pgbin="$(dirname "$(command -v initdb 2>/dev/null || echo /nonexistent/initdb)")"
[ -x "$pgbin/initdb" ] || skip "PostgreSQL 15's initdb (package postgresql-15)"
pg_regress="$(ls /usr/lib/postgresql/15/lib/pgxs/src/test/regress/pg_regress 2>/dev/null || true)"
[ -n "$pg_regress" ] || skip "pg_regress (package postgresql-client-15)"

# --- a work copy -------------------------------------------------------------------
work="$(mktemp -d "${TMPDIR:-/tmp}/pgbench-suite.XXXXXX")"
cleanup() { if [ "$keep" = 0 ]; then rm -rf "$work"; else echo "kept $work" >&2; fi; }
trap cleanup EXIT
cp -r "$src/src/bin/pgbench/t" "$work/t"
cp -r "$src/src/test/perl" "$work/perl"
mkdir -p "$work/bin"
case "$tool" in
    dbmeter)
        [ -x "$dbmeter" ] || skip "$dbmeter: build it first (cargo build -p dbmeter) or pass --dbmeter BIN"
        printf '#!/bin/sh\nexec %q pgbench "$@"\n' "$dbmeter" >"$work/bin/pgbench" ;;
    pgbench)
        printf '#!/bin/sh\nexec %q "$@"\n' "$pgbin/pgbench" >"$work/bin/pgbench" ;;
    *) echo "--tool is dbmeter or pgbench" >&2; exit 2 ;;
esac
chmod 755 "$work" "$work/bin/pgbench"

sel=()
for t in "${tests[@]+"${tests[@]}"}"; do
    t="${t#t/}"; t="${t%.pl}"; sel+=("t/$t.pl")
done
[ "${#sel[@]}" -gt 0 ] || sel=($(cd "$work" && echo t/*.pl))

run=(env TESTDIR="$work" PG_REGRESS="$pg_regress" PATH="$work/bin:$pgbin:$PATH"
     prove -v -I perl "${sel[@]}")
cd "$work"
set +e
if [ "$(id -u)" = 0 ]; then
    chown -R postgres "$work"
    # The dbmeter binary must be reachable by the postgres user.
    su postgres -s /bin/bash -c "cd $(printf %q "$work") && $(printf '%q ' "${run[@]}")" >"$work/prove.out" 2>&1
else
    "${run[@]}" >"$work/prove.out" 2>&1
fi
status=$?
set -e
# The diagnostics of the failed subtests, and prove's summary.
grep -v '^ok ' "$work/prove.out" | grep -v '^t/.*\.pl \.\.* $' || true
# Each subtest by name: "FILE: description" (TODO subtests don't count).
awk '
    /^t\/.*\.pl \.\./ { file = $1; sub(/^t\//, "", file); sub(/\.pl$/, "", file) }
    /^(not )?ok [0-9]+/ {
        if ($0 ~ /# TODO/) next
        line = $0; ok = (line !~ /^not /)
        sub(/^(not )?ok [0-9]+( - )?/, "", line)
        print (ok ? "P\t" : "F\t") file ": " line
    }
    /No plan found|Bad plan|Dubious, test returned/ { if (file != "") print "X\t" file }
' "$work/prove.out" >"$work/subtests"
sed -n 's/^F\t//p' "$work/subtests" | sort -u >"$work/failed"
# A file that died before its plan ran out: each missing subtest is unknown,
# so the file itself fails, unless its every run subtest passed as listed.
for f in $(sed -n 's/^X\t//p' "$work/subtests" | sort -u); do
    if ! grep -q "^F.$f: " "$work/subtests"; then echo "$f: did not finish" >>"$work/failed"; fi
done
sort -u -o "$work/failed" "$work/failed"
[ "$status" = 0 ] || [ "$keep" = 0 ] || echo "logs: $work/tmp_check/log" >&2
summarise "$work/failed" "$(sed -n 's/^P\t//p' "$work/subtests")"
