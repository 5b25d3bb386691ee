#!/usr/bin/env python3
"""Writes a synthetic MySQL/MariaDB general query log of about SIZE_MB
megabytes to standard output.

STYLE mariadb (the default) writes it as MariaDB 10.11 does: the server's
three header lines, then `TIME\\t    ID Command\\tArgument` with the time
(`261127 10:31:38`) only when the second changes, `\\t\\t` otherwise; mysql
writes MySQL 5.7+'s ISO time (`2026-11-27T10:31:38.123456Z`) on every line.

Connections come and go: each opens with `Connect user@host on db using
TCP/IP`, sometimes changes database (`Init DB`), runs statements (sysbench's
OLTP ones and others, with literals, IN lists, multi-row INSERTs, comments,
some over several lines) and ends with `Quit`; about 40 are open at a time,
interleaved, so a thread's user, host and database come from lines far
before its statements. Some connections are refused (`Access denied`).
Deterministic for a seed.

usage: gen_genlog.py SIZE_MB [SEED [STYLE]]
"""
import random
import sys

size = int(sys.argv[1]) * 1_000_000
rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 42)
style = sys.argv[3] if len(sys.argv) > 3 else "mariadb"
if style not in ("mariadb", "mysql"):
    sys.exit(f"STYLE={style}: expected mariadb or mysql")

TABLES = [f"sbtest{i}" for i in range(1, 9)]
DBS = ["shop", "sbtest", "reports", "auth"]
USERS = [("app", "web1"), ("app", "web2"), ("batch", "cron1"), ("report", "bi"), ("root", "localhost")]


def lit_str(n=12):
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789-") for _ in range(n))


def stmt():
    t = rng.choice(TABLES)
    i = rng.randint(1, 1_000_000)
    r = rng.random()
    if r < 0.40:
        return f"SELECT c FROM {t} WHERE id={i}"
    if r < 0.46:
        return f"SELECT c FROM {t} WHERE id BETWEEN {i} AND {i + 99} ORDER BY c"
    if r < 0.50:
        return f"SELECT SUM(k) FROM {t} WHERE id BETWEEN {i} AND {i + 99}"
    if r < 0.56:
        return f"UPDATE {t} SET k=k+1 WHERE id={i}"
    if r < 0.60:
        return f"UPDATE {t} SET c='{lit_str(40)}' WHERE id={i}"
    if r < 0.63:
        return f"DELETE FROM {t} WHERE id={i}"
    if r < 0.67:
        return (f"INSERT INTO {t} (id, k, c, pad) VALUES ({i}, {rng.randint(1, 10**6)}, "
                f"'{lit_str(60)}', '{lit_str(30)}')")
    if r < 0.71:
        ids = ", ".join(str(rng.randint(1, 10**6)) for _ in range(rng.randint(1, 30)))
        return f"SELECT id, k FROM {t} WHERE id IN ({ids})"
    if r < 0.74:
        rows = ", ".join(f"({rng.randint(1, 10**6)}, '{lit_str(8)}', NOW())" for _ in range(rng.randint(2, 20)))
        return f"INSERT INTO orders (customer_id, ref, created) VALUES {rows}"
    if r < 0.77:
        return (f"/* app:checkout user:{rng.randint(1, 999)} */ SELECT o.id, o.total FROM orders o "
                f"JOIN customers c ON c.id = o.customer_id WHERE c.email = '{lit_str(10)}@example.com' "
                f"AND o.status IN ('new', 'paid') ORDER BY o.created DESC LIMIT {rng.randint(1, 50)}")
    if r < 0.80:
        return (f"select u.name, count(*) from sessions s join users u on u.id = s.user_id\n"
                f"  where s.started > {rng.randint(10**9, 2 * 10**9)} and s.flag = {rng.choice(['TRUE', 'FALSE'])}\n"
                f"  group by u.name order by 2 ASC limit {rng.randint(0, 100)}, 20")
    if r < 0.83:
        return f"REPLACE INTO kv (k, v) VALUES ('{lit_str(6)}', 0x{rng.getrandbits(64):016x})"
    if r < 0.86:
        return f"SET autocommit={rng.randint(0, 1)}"
    if r < 0.93:
        return "BEGIN"
    return "COMMIT"


def main():
    out = sys.stdout
    us = 1_795_775_498 * 1_000_000
    last_second = None
    written = 0
    buf = []
    if style == "mariadb":
        head = ("/usr/sbin/mariadbd, Version: 10.11.19-MariaDB-0+deb12u1-log (Debian 12). started with:\n"
                "Tcp port: 3306  Unix socket: /run/mysqld/mysqld.sock\n"
                "Time\t\t    Id Command\tArgument\n")
    else:
        head = ("/usr/sbin/mysqld, Version: 8.0.36 (MySQL Community Server - GPL). started with:\n"
                "Tcp port: 3306  Unix socket: /var/run/mysqld/mysqld.sock\n"
                "Time                 Id Command    Argument\n")
    buf.append(head)
    written += len(head)
    # Open connections: thread id -> statements left.
    open_ = {}
    next_id = 10

    def line(thread, command, arg):
        nonlocal last_second
        if style == "mysql":
            secs = us // 1_000_000
            s = secs % 86400
            t = f"2026-11-27T{s // 3600:02}:{s % 3600 // 60:02}:{s % 60:02}.{us % 1_000_000:06}Z\t"
            return f"{t}{thread:>6} {command}\t{arg}\n"
        secs = us // 1_000_000
        if secs != last_second:
            last_second = secs
            s = secs % 86400
            t = f"261127 {s // 3600:2}:{s % 3600 // 60:02}:{s % 60:02}\t"
        else:
            t = "\t\t"
        return f"{t}{thread:>6} {command}\t{arg}\n"

    while written < size:
        us += rng.randint(1, 400)
        if len(open_) < 40 or rng.random() < 0.01:
            thread = next_id
            next_id += 1
            user, host = USERS[thread % len(USERS)]
            if rng.random() < 0.01:
                e = line(thread, "Connect", f"Access denied for user '{user}'@'{host}' (using password: YES)")
            else:
                db = DBS[thread % len(DBS)]
                e = line(thread, "Connect", f"{user}@{host} on {db} using TCP/IP")
                open_[thread] = rng.randint(1, 400)
        else:
            thread = rng.choice(list(open_))
            open_[thread] -= 1
            if open_[thread] <= 0:
                e = line(thread, "Quit", "")
                del open_[thread]
            elif rng.random() < 0.01:
                e = line(thread, "Init DB", rng.choice(DBS))
            else:
                e = line(thread, "Query", stmt())
        buf.append(e)
        written += len(e)
        if len(buf) >= 5000:
            out.write("".join(buf))
            buf = []
    out.write("".join(buf))


if __name__ == "__main__":
    main()
