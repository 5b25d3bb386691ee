//! Options every workload takes: target, engine, output.

use dbmeter_workloads::options::{OptKind, OptSpec, opt};

pub const GENERAL: &[OptSpec] = &[
    opt(
        "db",
        OptKind::Str,
        "",
        "target URL: sqlite:PATH, mysql://user:pass@host:port/db (also mariadb://, ?socket=PATH), postgres://user@host:port/db (default: the SQLite file dbmeter.sqlite in the current directory)",
    ),
    opt(
        "db-driver",
        OptKind::Choice(&["mysql", "pgsql", "sqlite"]),
        "",
        "sysbench-style target, with the --mysql-* or --pgsql-* options instead of --db",
    ),
    opt(
        "mysql-host",
        OptKind::Str,
        "localhost",
        "MySQL/MariaDB host(s); a comma-separated list spreads connections round robin",
    ),
    opt(
        "mysql-port",
        OptKind::Str,
        "3306",
        "MySQL/MariaDB port(s), comma-separated",
    ),
    opt(
        "mysql-socket",
        OptKind::Str,
        "",
        "MySQL/MariaDB Unix socket, used instead of host and port",
    ),
    opt("mysql-user", OptKind::Str, "sbtest", "MySQL/MariaDB user"),
    opt(
        "mysql-password",
        OptKind::Str,
        "",
        "MySQL/MariaDB password (or MYSQL_PWD in the environment)",
    ),
    opt("mysql-db", OptKind::Str, "sbtest", "MySQL/MariaDB database"),
    opt(
        "pgsql-host",
        OptKind::Str,
        "localhost",
        "PostgreSQL host(s), comma-separated",
    ),
    opt(
        "pgsql-port",
        OptKind::Str,
        "5432",
        "PostgreSQL port(s), comma-separated",
    ),
    opt("pgsql-user", OptKind::Str, "sbtest", "PostgreSQL user"),
    opt(
        "pgsql-password",
        OptKind::Str,
        "",
        "PostgreSQL password (or PGPASSWORD in the environment)",
    ),
    opt("pgsql-db", OptKind::Str, "sbtest", "PostgreSQL database"),
    opt(
        "threads",
        OptKind::Size,
        "1",
        "number of virtual users (connections)",
    ),
    opt(
        "time",
        OptKind::Float,
        "10",
        "measured duration in seconds; 0 = no limit",
    ),
    opt(
        "events",
        OptKind::Size,
        "0",
        "stop after this many events; 0 = no limit",
    ),
    opt(
        "warmup-time",
        OptKind::Float,
        "0",
        "seconds of load before measuring, reported apart and left out of the results",
    ),
    opt(
        "rate",
        OptKind::Float,
        "0",
        "average events per second over all threads (Poisson arrivals); 0 = as fast as possible",
    ),
    opt(
        "report-interval",
        OptKind::Float,
        "0",
        "print interval statistics every N seconds, also the interval of the JSON/CSV series; 0 = no lines and a 1 s series",
    ),
    opt(
        "worker-threads",
        OptKind::Size,
        "0",
        "0 = one OS thread per user; N = all users as async tasks on N threads (servers only; for thousands of connections)",
    ),
    opt(
        "percentile",
        OptKind::FloatList,
        "50,95,99,99.9",
        "latency percentiles to report",
    ),
    opt(
        "histogram",
        OptKind::Bool,
        "off",
        "print a latency histogram after the report",
    ),
    opt(
        "rand-seed",
        OptKind::Size,
        "0",
        "seed of the random numbers; 0 = from the clock (the seed used is reported)",
    ),
    opt(
        "db-ps-mode",
        OptKind::Choice(&["auto", "disable"]),
        "auto",
        "prepared statements (auto) or plain SQL text (disable)",
    ),
    opt(
        "ignore-errors",
        OptKind::Str,
        "",
        "error codes that restart an event instead of stopping the run: a list, 'all' or 'none' (default: MySQL 1213,1020,1205; PostgreSQL 40P01,40001,23505; SQLite SQLITE_BUSY,SQLITE_LOCKED)",
    ),
    opt(
        "forced-shutdown",
        OptKind::Str,
        "1",
        "seconds to wait after --time before interrupting running events, or 'off'",
    ),
    opt(
        "client-cpus",
        OptKind::Str,
        "",
        "bind dbmeter itself to these CPUs, e.g. 2-3 (keep it off the server's)",
    ),
    opt(
        "format",
        OptKind::Choice(&["text", "json", "csv"]),
        "text",
        "result format: text report, JSON document, or CSV interval series",
    ),
    opt(
        "output",
        OptKind::Str,
        "",
        "write the result in --format to this file; the console still shows the text report",
    ),
    opt(
        "sqlite-journal-mode",
        OptKind::Choice(&["wal", "delete", "truncate", "persist", "memory", "off"]),
        "wal",
        "SQLite journal mode",
    ),
    opt(
        "sqlite-synchronous",
        OptKind::Choice(&["off", "normal", "full", "extra"]),
        "normal",
        "SQLite synchronous setting",
    ),
    opt(
        "sqlite-busy-timeout",
        OptKind::Size,
        "1000",
        "milliseconds an SQLite statement waits for a lock before SQLITE_BUSY",
    ),
];

/// Other names accepted for general options (sysbench's).
pub const ALIASES: &[(&str, &str)] = &[
    ("mysql-ignore-errors", "ignore-errors"),
    ("pgsql-ignore-errors", "ignore-errors"),
];
