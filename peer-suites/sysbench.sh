#!/usr/bin/env bash
# Runs sysbench 1.0.20's own test suite (its cram tests, tests/t/*.t) against
# `dbmeter sysbench` through a shim named `sysbench`, or against the real
# sysbench to compare. The tests are not changed; docs/sysbench.md lists the
# one normalisation applied to both tools alike (the suite's own mysql/psql
# inspection output, written for MySQL 5.x/PostgreSQL 9.x).
#
#   peer-suites/sysbench.sh [--tool dbmeter|sysbench] [--dbmeter BIN]
#                           [--expect FILE] [--keep] [TEST ...]
#                                         (TEST: api_basic or t/api_basic.t)
#
# --expect FILE: the tests known to fail, one name a line with its reason
# after a '#' (peer-suites/sysbench.expected); then only a failure not in the
# list fails the run, and a listed test that passes is reported.
#
# The suite comes from SYSBENCH_SUITE_SRC (a sysbench 1.0.20 source tree), or
# from the cache (~/.cache/dbmeter-peers/sysbench-1.0.20), filled once by
# `apt-get source sysbench` (deb-src must be enabled) or, where the mirror
# lacks that source package, from sysbench's git tag 1.0.20. It needs cram (python3-cram),
# the mariadb and psql clients and the MariaDB and PostgreSQL servers, which
# it starts itself as throwaway servers with `dbmeter server start`.
#
# Exit status: 0 when every selected test passes (or fails as expected), 1
# when one fails, 77 when the suite or a tool it needs is missing.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=peer-suites/lib.sh
. "$here/lib.sh"
parse_args "$@"

# --- the suite ----------------------------------------------------------------
cache="${XDG_CACHE_HOME:-$HOME/.cache}/dbmeter-peers"
src="${SYSBENCH_SUITE_SRC:-$cache/sysbench-1.0.20}"
if [ ! -d "$src/tests/t" ]; then
    mkdir -p "$cache"
    dl="$(mktemp -d "$cache/dl.XXXXXX")"
    if (cd "$dl" && apt-get source --download-only sysbench=1.0.20+ds-5 >/dev/null 2>&1) &&
       tarball="$(ls "$dl"/sysbench_1.0.20*.orig.tar.* 2>/dev/null | head -n 1)" && [ -n "$tarball" ]; then
        mkdir -p "$src" && tar xf "$tarball" -C "$src" --strip-components=1
    elif command -v git >/dev/null 2>&1 &&
         timeout 120 git clone -q --depth 1 -b 1.0.20 https://github.com/akopytov/sysbench "$dl/git" 2>/dev/null; then
        # Without Debian's source package (a mirror that lacks it), the
        # release's tag from sysbench's own repository.
        mkdir -p "$src" && cp -r "$dl/git/tests" "$dl/git/src" "$src/"
    fi
    rm -rf "$dl"
    [ -d "$src/tests/t" ] || skip "sysbench 1.0.20's test suite: set SYSBENCH_SUITE_SRC to a sysbench 1.0.20 source tree, or enable deb-src so that 'apt-get source sysbench' works"
fi
command -v mariadb >/dev/null 2>&1 || skip "the mariadb client (package mariadb-client)"
command -v psql >/dev/null 2>&1 || skip "psql (package postgresql-client)"
[ -x "$dbmeter" ] || skip "$dbmeter: build it first (cargo build -p dbmeter) or pass --dbmeter BIN"

# --- a work copy of the suite ---------------------------------------------------
work="$(mktemp -d "${TMPDIR:-/tmp}/sysbench-suite.XXXXXX")"
chmod 755 "$work"   # the servers run as the mysql and postgres users
export DBMETER_HOME="$work/home"
cleanup() {
    "$dbmeter" server stop --all --remove >/dev/null 2>&1 || true
    if [ "$keep" = 0 ]; then rm -rf "$work"; else echo "kept $work" >&2; fi
}
trap cleanup EXIT
mkdir -p "$work/src" "$work/bin" "$work/python"
cp -r "$src/tests" "$work/tests"
cp -r "$src/src/lua" "$work/src/lua"
cat >"$work/tests/include/config.sh" <<'EOF'
export SBTEST_VERSION_STRING="sysbench 1.0.20"
export SBTEST_VERSION="1.0.20"
export SBTEST_HAS_MYSQL=yes
export SBTEST_HAS_PGSQL=yes
EOF

# --- the normalisation, for both tools alike ------------------------------------
# The suite inspects tables with the mysql and psql clients and expects what
# MySQL 5.x and PostgreSQL 9.x servers print. Three differences of the servers
# here, none of them in sysbench's or dbmeter's own output:
# 1. MariaDB 10.11 prints `DEFAULT 0` where MySQL 5.x printed `DEFAULT '0'`,
#    and its client echoes a failing statement between dashes before the error;
# 2. the suite's column query for PostgreSQL has no ORDER BY, and PostgreSQL 15
#    returns the columns in another order: the psql shim adds ORDER BY attnum;
# 3. PostgreSQL 13+ names the relation in a not-null violation's message.
real_mysql="$(command -v mariadb)"
real_psql="$(command -v psql)"
cat >"$work/bin/mysql" <<EOF
#!/usr/bin/env bash
out="\$(mktemp)"; err="\$(mktemp)"
"$real_mysql" --socket="\$SBTEST_MYSQL_SOCKET" "\$@" >"\$out" 2>"\$err"; status=\$?
sed -e "s/ DEFAULT 0,\\\$/ DEFAULT '0',/" "\$out"
awk '/^--------------\$/ { dash++; next } dash == 1 { next } dash == 2 && /^\$/ { dash = 0; next } { dash = 0; print }' "\$err" >&2
rm -f "\$out" "\$err"
exit \$status
EOF
cat >"$work/bin/psql" <<EOF
#!/usr/bin/env bash
for a in "\$@"; do case "\$a" in -c|-c*|--command*) exec "$real_psql" "\$@" ;; esac; done
query="\$(cat)"
case "\$query" in *"FROM pg_attribute f"*) query="\$query
ORDER BY f.attnum" ;; esac
printf '%s\n' "\$query" | "$real_psql" "\$@"
EOF
chmod +x "$work/bin/mysql" "$work/bin/psql"
sed -i -e 's/null value in column "a" violates/null value in column "a" of relation "t" violates/' "$work/tests/t/"*.t

case "$tool" in
    dbmeter)
        printf '#!/bin/sh\nexec %q sysbench "$@"\n' "$dbmeter" >"$work/bin/sysbench" ;;
    sysbench)
        real="$(command -v sysbench)" || skip "sysbench (package sysbench)"
        ln -s "$real" "$work/bin/sysbench" ;;
    *) echo "--tool is dbmeter or sysbench" >&2; exit 2 ;;
esac
chmod +x "$work/bin/sysbench"
# test_run.sh runs `python $(command -v cram)`: both must be Python itself
# and a Python file (pyenv's shims are shell scripts), and that Python must
# have the cram module (Debian's python3-cram, or cram from PyPI).
py=""
for cand in "$(command -v python3 || true)" /usr/bin/python3; do
    [ -n "$cand" ] || continue
    if command -v pyenv >/dev/null 2>&1 && [ "$cand" = "$(command -v python3)" ]; then
        cand="$(pyenv which python3 2>/dev/null || echo "$cand")"
    fi
    if "$cand" -c 'import cram' 2>/dev/null; then py="$cand"; break; fi
done
[ -n "$py" ] || skip "cram (package python3-cram, or pip install cram)"
ln -s "$py" "$work/python/python"
printf 'import sys\nimport cram\nsys.exit(cram.main(sys.argv[1:]))\n' >"$work/python/cram"
chmod +x "$work/python/cram"

# --- throwaway servers ------------------------------------------------------------
url_of() { "$dbmeter" server start "$@" 2>>"$work/servers.log" | tail -n 1; }
my_url="$(url_of mariadb --name sbtest-mariadb)" || skip "could not start MariaDB (package mariadb-server)"
pg_url="$(url_of postgres --name sbtest-postgres)" || skip "could not start PostgreSQL (package postgresql)"
pg_port="${pg_url##*:}"; pg_port="${pg_port%%/*}"
# The suite's own inspection commands (`mysql -uroot sbtest`, `psql sbtest`)
# reach these servers: psql through its environment variables, mysql through
# the shim, which names the socket. MariaDB
# is reached on its socket, as the suite's authors ran it (a test prints the
# default port 3306 when it resets --mysql-socket to reach a missing host).
my_sock="$DBMETER_HOME/servers/sbtest-mariadb/run/mariadbd.sock"
[ -S "$my_sock" ] || skip "MariaDB's socket is not at $my_sock"
export SBTEST_MYSQL_SOCKET="$my_sock"
export PGHOST=127.0.0.1 PGPORT="$pg_port" PGUSER=postgres
mariadb --socket="$my_sock" -uroot -e 'CREATE DATABASE IF NOT EXISTS sbtest'
psql -q -d postgres -c 'CREATE DATABASE sbtest' >/dev/null
export SBTEST_MYSQL_ARGS="--mysql-socket=$my_sock --mysql-user=root --mysql-db=sbtest"
export SBTEST_PGSQL_ARGS="--pgsql-host=127.0.0.1 --pgsql-port=$pg_port --pgsql-user=postgres --pgsql-db=sbtest"

# --- run ---------------------------------------------------------------------------
sel=()
for t in "${tests[@]+"${tests[@]}"}"; do
    t="${t#t/}"; t="${t%.t}"; sel+=("t/$t.t")
done
cd "$work/tests"
set +e
PATH="$work/python:$PATH" ./test_run.sh "${sel[@]+"${sel[@]}"}" >"$work/cram.out" 2>&1
status=$?
set -e
cat "$work/cram.out"
sed -n 's|^t/\(.*\)\.t: failed$|\1|p' "$work/cram.out" | sort -u >"$work/failed"
if [ "$status" != 0 ] && [ ! -s "$work/failed" ]; then
    echo "the suite did not run (status $status)" >&2
    exit 1
fi
summarise "$work/failed" "$(sed -n 's|^t/\(.*\)\.t: passed$|\1|p' "$work/cram.out")"
