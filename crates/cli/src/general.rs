//! Options every workload takes: target, engine, output.

use dbmeter_workloads::options::{OptKind, OptSpec, opt};

pub const GENERAL: &[OptSpec] = &[
    opt(
        "db",
        OptKind::Str,
        "",
        "target URL: sqlite:PATH (default: the file dbmeter.sqlite in the current directory)",
    ),
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
        "error codes that restart an event instead of stopping the run: a list, 'all' or 'none' (default: SQLITE_BUSY,SQLITE_LOCKED)",
    ),
    opt(
        "forced-shutdown",
        OptKind::Str,
        "1",
        "seconds to wait after --time before interrupting running events, or 'off'",
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
