#!/usr/bin/env python3
"""Writes a PostgreSQL 15 stderr log of about SIZE_MB megabytes to standard
output, deterministic for a seed: Debian's log_line_prefix ('%m [%p] %q%u@%d '),
log_min_duration_statement=0 entries from 40 sessions: simple-protocol
statements with literals, IN lists and multi-line statements, the extended
protocol's parse/bind/execute with their DETAIL parameters, connection lines,
errors with their STATEMENT, checkpoints.

With STYLE `pairs`, the same statements as log_statement=all with
log_duration=on writes them: `statement: Q` (or `execute NAME: Q` and its
DETAIL parameters), and the `duration: X ms` of the same process at its next
turn, other sessions' entries in between; parse and bind as bare durations.

usage: gen_pglog.py SIZE_MB SEED [STYLE]   (STYLE: min-duration, the default, or pairs)
"""
import random
import sys

size = int(sys.argv[1]) * 1_000_000
rng = random.Random(int(sys.argv[2]))
pairs = len(sys.argv) > 3 and sys.argv[3] == "pairs"
if len(sys.argv) > 3 and sys.argv[3] not in ("pairs", "min-duration"):
    sys.exit(f"STYLE {sys.argv[3]}: expected min-duration or pairs")
# pairs: a process's duration waiting for its next turn.
pending = {}
out = sys.stdout
users = ["app", "report", "batch", "admin"]
dbs = ["shop", "crm", "stats"]
tables = [f"sbtest{i}" for i in range(1, 9)] + ["orders", "customers", "items"]
sessions = [(10_000 + i, users[i % 4], dbs[i % 3]) for i in range(40)]
ts = 1_795_775_498_000  # ms

written = 0
lines = []


def emit(s):
    global written
    out.write(s)
    written += len(s)


def stamp():
    global ts
    ts += rng.randint(0, 3)
    secs, ms = divmod(ts, 1000)
    import time

    t = time.gmtime(secs)
    return f"{t.tm_year:04}-{t.tm_mon:02}-{t.tm_mday:02} {t.tm_hour:02}:{t.tm_min:02}:{t.tm_sec:02}.{ms:03} UTC"


def dur():
    return f"{rng.expovariate(2.0):.3f}"


def stmt(pre, pid, d, text):
    """One statement run, that took d ms, logged the way of the style."""
    if pairs:
        emit(f"{pre}LOG:  statement: {text}")
        pending[pid] = f"LOG:  duration: {d} ms\n"
    else:
        emit(f"{pre}LOG:  duration: {d} ms  statement: {text}")


while written < size:
    pid, user, db = rng.choice(sessions)
    pre = f"{stamp()} [{pid}] {user}@{db} "
    if pid in pending:
        emit(pre + pending.pop(pid))
    t = rng.choice(tables)
    k = rng.random()
    if k < 0.35:
        stmt(pre, pid, dur(), f"SELECT c FROM {t} WHERE id = {rng.randint(1, 10**6)}\n")
    elif k < 0.45:
        ids = ", ".join(str(rng.randint(1, 10**6)) for _ in range(rng.randint(1, 12)))
        stmt(pre, pid, dur(), f"SELECT id, k FROM {t} WHERE id IN ({ids})\n")
    elif k < 0.55:
        a = rng.randint(1, 10**6)
        stmt(
            pre,
            pid,
            dur(),
            f"SELECT c, sum(k)\n"
            f"\t  FROM {t}\n\t WHERE id BETWEEN {a} AND {a + 99}\n\t   AND c <> 'x''{a}'\n\t GROUP BY c\n",
        )
    elif k < 0.8:
        name = f"S_{rng.randint(1, 5)}"
        q = f"UPDATE {t} SET k = k + 1 WHERE id = $1" if rng.random() < 0.5 else f"SELECT pad FROM {t} WHERE k = $1 AND c = $2"
        v = rng.randint(1, 10**6)
        if pairs:
            # Parse and bind: bare durations; the execute, then its time.
            if rng.random() < 0.1:
                emit(f"{pre}LOG:  duration: {dur()} ms\n")
            emit(f"{pre}LOG:  duration: {dur()} ms\n")
            emit(f"{pre}LOG:  execute {name}: {q}\n")
            emit(f"{pre}DETAIL:  parameters: $1 = '{v}', $2 = 'abc'\n")
            pending[pid] = f"LOG:  duration: {dur()} ms\n"
        else:
            if rng.random() < 0.1:
                emit(f"{pre}LOG:  duration: {dur()} ms  parse {name}: {q}\n")
            emit(f"{pre}LOG:  duration: {dur()} ms  bind {name}: {q}\n")
            emit(f"{pre}DETAIL:  parameters: $1 = '{v}', $2 = 'abc'\n")
            emit(f"{pre}LOG:  duration: {dur()} ms  execute {name}: {q}\n")
            emit(f"{pre}DETAIL:  parameters: $1 = '{v}', $2 = 'abc'\n")
    elif k < 0.95:
        stmt(
            pre,
            pid,
            dur(),
            f"INSERT INTO {t} (id, k, c, pad) VALUES "
            f"({rng.randint(1, 10**6)}, {rng.randint(1, 10**6)}, E'c\\'{rng.randint(1, 99)}', $$pad$$)\n",
        )
    elif k < 0.97:
        if pairs:
            # Logged before it ran, then failed: no duration.
            emit(f"{pre}LOG:  statement: INSERT INTO {t} (id) VALUES (1)\n")
        emit(f"{pre}ERROR:  duplicate key value violates unique constraint \"{t}_pkey\"\n")
        emit(f"{pre}DETAIL:  Key (id)=({rng.randint(1, 10**6)}) already exists.\n")
        emit(f"{pre}STATEMENT:  INSERT INTO {t} (id) VALUES (1)\n")
    elif k < 0.99:
        emit(f"{stamp()} [{pid}] LOG:  connection received: host=10.0.0.{pid % 250} port={rng.randint(1024, 65535)}\n")
        emit(f"{pre}LOG:  connection authorized: user={user} database={db} application_name=app\n")
    else:
        emit(f"{stamp()} [99] LOG:  checkpoint starting: time\n")

# The durations still waiting.
for pid, line in sorted(pending.items()):
    emit(f"{stamp()} [{pid}] {line}")
