#!/usr/bin/env python3
"""Writes a synthetic MariaDB slow query log of about SIZE_MB megabytes to
standard output, as MariaDB 10.11 writes it with long_query_time=0 and
log_slow_verbosity=query_plan,innodb: '# Time:' when the second changes,
User@Host, Thread_id/Schema/QC_hit, the times and rows, the extended
attributes (Rows_affected, Bytes_sent, Pages_*, Full_scan, Filesort, ...),
'use db;' when a thread changes database, 'SET timestamp=N;', the statement.

The statements are sysbench's OLTP ones and others with literals, IN lists of
varying length, multi-row INSERTs, comments and strings, from a few dozen
classes, over several users, hosts and databases. Deterministic for a seed.

With CLASSES, every statement is instead one of CLASSES distinct classes (a
point select, update or range on its own table, named in letters so that the
fingerprints differ), taken in turn: a log of many classes, each seen
SIZE_MB / (CLASSES * ~0.9 KB) times.

usage: gen_slowlog.py SIZE_MB [SEED [CLASSES]]
"""
import random
import sys

size = int(sys.argv[1]) * 1_000_000
rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 42)
classes = int(sys.argv[3]) if len(sys.argv) > 3 else 0

TABLES = [f"sbtest{i}" for i in range(1, 9)]
DBS = ["shop", "sbtest", "reports", "auth"]
USERS = [("app", "web1", "10.0.0.1"), ("app", "web2", "10.0.0.2"), ("batch", "cron1", "10.0.1.9"),
         ("report", "bi", "10.0.2.4"), ("root", "localhost", "")]


def lit_str(n=12):
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789-") for _ in range(n))


def letters(n):
    """A name without digits (pt-query-digest's fingerprint makes digits ?)."""
    out = ""
    while True:
        out += chr(ord("a") + n % 26)
        n //= 26
        if n == 0:
            return out


def class_stmt(c):
    t = "t_" + letters(c)
    i = rng.randint(1, 1_000_000)
    shape = c % 3
    if shape == 0:
        return f"SELECT c FROM {t} WHERE id={i}", 1, 1, 0
    if shape == 1:
        return f"UPDATE {t} SET k=k+1 WHERE id={i}", 0, 1, 1
    return f"SELECT c FROM {t} WHERE id BETWEEN {i} AND {i + 99}", 100, 100, 0


def stmt():
    t = rng.choice(TABLES)
    i = rng.randint(1, 1_000_000)
    r = rng.random()
    if r < 0.40:
        return f"SELECT c FROM {t} WHERE id={i}", 1, 1, 0
    if r < 0.45:
        return f"SELECT c FROM {t} WHERE id BETWEEN {i} AND {i + 99}", 100, 100, 0
    if r < 0.49:
        return f"SELECT SUM(k) FROM {t} WHERE id BETWEEN {i} AND {i + 99}", 1, 100, 0
    if r < 0.53:
        return f"SELECT c FROM {t} WHERE id BETWEEN {i} AND {i + 99} ORDER BY c", 100, 200, 0
    if r < 0.57:
        return f"SELECT DISTINCT c FROM {t} WHERE id BETWEEN {i} AND {i + 99} ORDER BY c", 100, 300, 0
    if r < 0.61:
        return f"UPDATE {t} SET k=k+1 WHERE id={i}", 0, 1, 1
    if r < 0.65:
        return f"UPDATE {t} SET c='{lit_str(40)}' WHERE id={i}", 0, 1, 1
    if r < 0.68:
        return f"DELETE FROM {t} WHERE id={i}", 0, 1, 1
    if r < 0.71:
        return (f"INSERT INTO {t} (id, k, c, pad) VALUES ({i}, {rng.randint(1, 10**6)}, "
                f"'{lit_str(60)}', '{lit_str(30)}')"), 0, 0, 1
    if r < 0.75:
        ids = ", ".join(str(rng.randint(1, 10**6)) for _ in range(rng.randint(1, 30)))
        return f"SELECT id, k FROM {t} WHERE id IN ({ids})", 10, 10, 0
    if r < 0.78:
        rows = ", ".join(f"({rng.randint(1, 10**6)}, '{lit_str(8)}', NOW())" for _ in range(rng.randint(2, 20)))
        return f"INSERT INTO orders (customer_id, ref, created) VALUES {rows}", 0, 0, 5
    if r < 0.81:
        return (f"/* app:checkout user:{rng.randint(1, 999)} */ SELECT o.id, o.total FROM orders o "
                f"JOIN customers c ON c.id = o.customer_id WHERE c.email = '{lit_str(10)}@example.com' "
                f"AND o.status IN ('new', 'paid') ORDER BY o.created DESC LIMIT {rng.randint(1, 50)}"), 5, 400, 0
    if r < 0.83:
        return (f"SELECT COUNT(*) FROM events WHERE day >= '2026-11-{rng.randint(1, 27):02}' "
                f"AND kind = {rng.randint(1, 9)} -- dashboard\n"), 1, 50000, 0
    if r < 0.85:
        return (f"select u.name, count(*) from sessions s join users u on u.id = s.user_id\n"
                f"  where s.started > {rng.randint(10**9, 2 * 10**9)} and s.flag = {rng.choice(['TRUE', 'FALSE', 'NULL'])}\n"
                f"  group by u.name order by 2 ASC limit {rng.randint(0, 100)}, 20"), 20, 8000, 0
    if r < 0.87:
        return f"REPLACE INTO kv (k, v) VALUES ('{lit_str(6)}', 0x{rng.getrandbits(64):016x})", 0, 0, 1
    if r < 0.89:
        return f"CALL refresh_stats({rng.randint(1, 100)}, '{lit_str(5)}')", 0, 10, 3
    if r < 0.91:
        a = f"SELECT id FROM {t} WHERE k = {rng.randint(1, 1000)}"
        return f"{a} UNION {a} UNION ALL {a}", 3, 3000, 0
    if r < 0.95:
        return "BEGIN", 0, 0, 0
    return "COMMIT", 0, 0, 0


def main():
    out = sys.stdout
    ts = 1_795_775_498
    written = 0
    thread_db = {}
    buf = []
    last_second = None
    n = 0
    while written < size:
        n += 1
        if rng.random() < 0.002:
            ts += 1
        user, host, ip = USERS[n % len(USERS)]
        thread = 10 + (n * 7) % 64
        db = DBS[thread % len(DBS)]
        q, sent, examined, affected = class_stmt((n - 1) % classes) if classes else stmt()
        qt = rng.lognormvariate(-8.5, 1.6)
        parts = []
        if ts != last_second:
            secs = ts % 86400
            parts.append(f"# Time: 261127 {secs // 3600:2}:{secs % 3600 // 60:02}:{secs % 60:02}\n")
            last_second = ts
        parts.append(f"# User@Host: {user}[{user}] @ {host} [{ip}]\n")
        parts.append(f"# Thread_id: {thread}  Schema: {db}  QC_hit: No\n")
        parts.append(f"# Query_time: {qt:.6f}  Lock_time: {qt * rng.random() / 10:.6f}  "
                     f"Rows_sent: {sent}  Rows_examined: {examined}\n")
        parts.append(f"# Rows_affected: {affected}  Bytes_sent: {60 + sent * 120}\n")
        if q not in ("BEGIN", "COMMIT"):
            parts.append(f"# Pages_accessed: {examined // 50 + 1}  Pages_read: {rng.randint(0, 2)}  "
                         f"Pages_prefetched: 0  Pages_updated: {affected}  Old_rows_read: 0\n")
            parts.append(f"# Pages_read_time: {rng.random() / 10:.4f}  Engine_time: {qt * 900:.4f}\n")
            fs = "Yes" if examined > 1000 else "No"
            parts.append(f"# Full_scan: {fs}  Full_join: No  Tmp_table: No  Tmp_table_on_disk: No\n")
            parts.append(f"# Filesort: {'Yes' if 'ORDER' in q.upper() else 'No'}  Filesort_on_disk: No  "
                         f"Merge_passes: 0  Priority_queue: No\n")
        if thread_db.get(thread) != db:
            parts.append(f"use {db};\n")
            thread_db[thread] = db
        parts.append(f"SET timestamp={ts};\n{q};\n")
        e = "".join(parts)
        buf.append(e)
        written += len(e)
        if len(buf) >= 5000:
            out.write("".join(buf))
            buf = []
    out.write("".join(buf))


if __name__ == "__main__":
    main()
