//! Options every run and benchmark command takes: target, engine, output,
//! store. A benchmark adds its own ([`dbmeter_benchmarks::Benchmark::options`]).

use dbmeter_benchmarks::Benchmark;
use dbmeter_benchmarks::options::{OptKind, OptSpec, choice, opt};

/// Options whose value is a password: never printed or stored.
pub const SECRET_OPTIONS: &[&str] = &["mysql-password", "pgsql-password"];

/// Options of `run` that belong to the store and stay out of the run
/// document's `options` (the store keeps the tags itself).
pub const STORE_OPTIONS: &[&str] = &["store", "tag"];

/// Options of `run` that judge the result: the document keeps the
/// verdicts instead (`RunDocument::verdicts`).
pub const VERDICT_OPTIONS: &[&str] = &["assert", "junit"];

/// Options that serve a run's metrics while it goes on (`--prometheus`):
/// they change nothing measured and stay out of the run document.
pub const METRICS_OPTIONS: &[&str] = &["prometheus", "prometheus-linger"];

/// Options that say which part of a split run a process is and when it
/// starts: shards of one run differ in them alone. The document records
/// them apart (`RunDocument::shard`), and `dbmeter merge` ignores them
/// when it compares the shards' options. Named once, in the result
/// layer (`dbmeter_result::shards`), whose merge uses them too.
pub use dbmeter_result::shards::SHARD_OPTIONS;

/// The general options and then `benchmark`'s own.
pub fn specs_for(benchmark: Option<&dyn Benchmark>) -> Vec<OptSpec> {
    let mut v = GENERAL.to_vec();
    if let Some(b) = benchmark {
        v.extend(b.options());
    }
    v
}

pub const GENERAL: &[OptSpec] = &[
    opt(
        "db",
        OptKind::Str,
        "",
        "target URL: sqlite:PATH, mysql://user:pass@host:port/db (also mariadb://, ?socket=PATH), postgres://user@host:port/db (default: the SQLite file dbmeter.sqlite in the current directory)",
    ),
    opt(
        "db-driver",
        choice(&["mysql", "pgsql", "sqlite"]),
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
        "MySQL/MariaDB Unix socket, used instead of host and port (default: MYSQL_UNIX_PORT, ~/.my.cnf, then the usual places when the host is localhost)",
    ),
    opt("mysql-user", OptKind::Str, "sbtest", "MySQL/MariaDB user"),
    opt(
        "mysql-dry-run",
        OptKind::Bool,
        "off",
        "MySQL/MariaDB target: connect to nothing and take every statement as done at once, without rows (sysbench's dry run: measures the client alone)",
    ),
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
        "defaults-file",
        OptKind::Str,
        "",
        "MySQL/MariaDB option file read instead of ~/.my.cnf ([client] user, password, host, port, socket, database, ssl-*); also defaults-file= in the URL",
    ),
    opt(
        "ssl-mode",
        OptKind::Str,
        "",
        "TLS: disable, prefer, require, verify-ca or verify-full (MySQL's DISABLED..VERIFY_IDENTITY too); default disable for MySQL (as sysbench), prefer for PostgreSQL (as libpq); also sslmode= in the URL",
    ),
    opt(
        "ssl-ca",
        OptKind::Str,
        "",
        "CA certificate(s), PEM, for verify-ca/verify-full (URL: sslrootcert= or ssl-ca=)",
    ),
    opt(
        "ssl-cert",
        OptKind::Str,
        "",
        "client certificate, PEM (URL: sslcert= or ssl-cert=)",
    ),
    opt(
        "ssl-key",
        OptKind::Str,
        "",
        "client private key, PEM (URL: sslkey= or ssl-key=)",
    ),
    opt(
        "ask-password",
        OptKind::Bool,
        "off",
        "read the server password from the terminal (or one line of standard input) before connecting",
    ),
    opt(
        "query-timeout",
        OptKind::Float,
        "0",
        "seconds after which the server cancels a statement (MariaDB max_statement_time, MySQL max_execution_time for SELECTs, PostgreSQL statement_timeout); the event counts as timed out; 0 = none",
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
    // `auto[:MAX]` too: run/src/settings.rs checks the value.
    opt(
        "warmup-time",
        OptKind::Float,
        "0",
        "seconds of load before measuring, reported apart and left out of the results; auto[:MAX]: until interval throughput is steady (MSER, then a Mann-Kendall trend test; docs/test-types.md), at most MAX seconds (300)",
    )
    .checked_by_benchmark(),
    opt(
        "rate",
        OptKind::Float,
        "0",
        "average events per second over all threads (Poisson arrivals); 0 = as fast as possible",
    ),
    opt(
        "reconnect-timeout",
        OptKind::Float,
        "5",
        "seconds a user's reconnects may fail before the run stops as failed (the server is gone)",
    ),
    opt(
        "hosts",
        choice(&["failover", "spread"]),
        "failover",
        "with several hosts in --db: failover (each connection takes the first host that answers, in order, on reconnect too) or spread (users round robin over the hosts); see docs/connections.md",
    ),
    opt(
        "connect-rate",
        OptKind::Float,
        "0",
        "open at most N connections per second at the start (for servers or poolers that refuse bursts); 0 = all at once, in parallel",
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
        "ignored: every driver blocks, so each user has its own OS thread",
    ),
    opt(
        "percentile",
        OptKind::FloatList,
        "50,95,99,99.9",
        "latency percentiles to report",
    ),
    opt(
        "report-checkpoints",
        OptKind::FloatList,
        "",
        "seconds into the measurement (e.g. 60,120) at which to print a full report of the time since the previous one, as sysbench's checkpoint reports",
    ),
    opt(
        "profile-server",
        OptKind::Bool,
        "off",
        "sample the CPU of the server's processes (a server on this machine) with perf record during the measured phase; the document keeps the busiest functions and `compare --why` compares them (needs perf, Debian package linux-perf, and the right to watch the server's processes)",
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
        "shard",
        OptKind::Str,
        "",
        "run, prepare: I/N, do shard I's share (0-based, 0 to N-1) of what one process would: the users, --events and --rate split exactly (tpch's throughput streams and replay's sessions too), a different seed per shard; prepare loads its share of the tables or warehouses; `dbmeter merge` makes one run of the shards' results (docs/shards.md)",
    ),
    opt(
        "start-at",
        OptKind::Str,
        "",
        "run: connect the users, then let them go at TIME (RFC 3339 UTC, 2026-11-27T18:00:00Z, or unix seconds, 1795802400.5), so that shards start together; a TIME already past starts at once with a warning",
    ),
    opt(
        "start-barrier",
        OptKind::Str,
        "",
        "run, with --shard and --store: meet the other shards at the barrier NAME in the results store they share, then all start together, 3 s after the last one arrived (instead of --start-at)",
    ),
    opt(
        "barrier-timeout",
        OptKind::Float,
        "600",
        "with --start-barrier: seconds to wait for the other shards; then the run fails naming the missing ones",
    ),
    opt(
        "db-ps-mode",
        choice(&["auto", "disable"]),
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
        "abandon-timeout",
        OptKind::Float,
        "10",
        "seconds to wait for events that were interrupted (--forced-shutdown, Ctrl-C, an error) before abandoning them: the run then fails (the server or its host may be unreachable)",
    ),
    opt(
        "client-cpus",
        OptKind::Str,
        "",
        "bind dbmeter itself to these CPUs, e.g. 2-3 (keep it off the server's)",
    ),
    opt(
        "format",
        choice(&["text", "json", "csv", "jsonl"]),
        "text",
        "result format: text report, JSON document, CSV interval series, or JSON lines (one object per event as the run goes: started, interval, warning, finished with the document)",
    ),
    opt(
        "output",
        OptKind::Str,
        "",
        "write the result in --format to this file; the console still shows the text report",
    ),
    opt(
        "prometheus",
        OptKind::Str,
        "",
        "run: serve live metrics for Prometheus at http://ADDR/metrics while the run goes on; ADDR is HOST:PORT (127.0.0.1:9464) or :PORT (every interface); see docs/metrics.md",
    ),
    opt(
        "prometheus-linger",
        OptKind::Float,
        "0",
        "with --prometheus: seconds the endpoint stays up after the run, so that a last scrape sees the final counts",
    ),
    opt(
        "store",
        OptKind::Str,
        "",
        "run: also save the result in the results store; --store alone: $DBMETER_STORE, else $DBMETER_HOME/results.db; --store=PATH (SQLite file) or --store=postgres://... (`dbmeter help results`)",
    ),
    opt(
        "stages",
        OptKind::Str,
        "",
        "a load profile of active users, DURATION:USERS,...: e.g. 30s:4,60s:64,30s:4; each stage ramps linearly from the level before it (0 at the start) to its own over its duration, a 0s stage steps; the run lasts the stages (no --time, --threads or --warmup-time with it); per-stage figures in the report (docs/test-types.md)",
    ),
    opt(
        "rate-stages",
        OptKind::Str,
        "",
        "a profile of the arrival rate (open model), DURATION:RATE,...: e.g. 30s:1000,0s:5000,60s:5000,0s:1000; ramps and steps as --stages; latency from each event's intended start; the run lasts the stages; with --threads users to serve the arrivals (docs/test-types.md)",
    ),
    opt(
        "find-capacity",
        choice(&["off", "rate", "users"]),
        "off",
        "run: search the capacity in steps instead of one run: rate (--find-capacity alone) raises the arrival rate, doubling then bisecting, to the highest that meets every --slo; users doubles the users up to --threads to the peak of throughput (docs/test-types.md)",
    ),
    opt(
        "slo",
        OptKind::Str,
        "",
        "with --find-capacity: a target every step must meet, METRIC:LIMIT (at most): p99:10ms, errors:0.1%, p95:5ms; repeat for more",
    ),
    opt(
        "step-time",
        OptKind::Float,
        "10",
        "with --find-capacity: seconds each step is measured",
    ),
    opt(
        "settle-time",
        OptKind::Float,
        "5",
        "with --find-capacity: seconds each step runs before it is measured",
    ),
    opt(
        "recovery-tolerance",
        OptKind::Float,
        "10",
        "with --stages or --rate-stages: a spike (a stage that leaves a level and comes back to it) has recovered when an interval's throughput is within this many percent of the stage before it, and its p99 at most this many percent above",
    ),
    opt(
        "assert",
        OptKind::Str,
        "",
        "run: a target the result must meet, [KIND.]METRIC OP VALUE: 'p99<10ms', 'tps>=5000', 'errors<=0.1%', 'NewOrder.p90<5s'; repeat for more; each is printed pass or FAIL and a failed one ends dbmeter with exit code 3; see docs/test-types.md",
    ),
    opt(
        "junit",
        OptKind::Str,
        "",
        "run: write the verdicts on the --assert targets to FILE as JUnit XML, for CI systems",
    ),
    opt(
        "tag",
        OptKind::Str,
        "",
        "run: label the stored run KEY=VALUE; repeat for more; implies --store",
    ),
    opt(
        "sqlite-journal-mode",
        choice(&["wal", "delete", "truncate", "persist", "memory", "off"]),
        "wal",
        "SQLite journal mode",
    ),
    opt(
        "sqlite-synchronous",
        choice(&["off", "normal", "full", "extra"]),
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
    ("warmup", "warmup-time"),
    ("pgsql-ignore-errors", "ignore-errors"),
    ("mysql-ssl", "ssl-mode"),
    ("pgsql-sslmode", "ssl-mode"),
    ("mysql-ssl-ca", "ssl-ca"),
    ("mysql-ssl-cert", "ssl-cert"),
    ("mysql-ssl-key", "ssl-key"),
];
