//! What `dbmeter sysbench` prints as sysbench 1.0.20 prints it: `--help`
//! (its general options, its drivers' options, its tests) and `TEST help`
//! (a test's options). Wrapper scripts grep these, so the option lines
//! are sysbench's own, column for column; dbmeter's page for the command
//! is `dbmeter help sysbench`.

use dbmeter_benchmarks::options::{OptKind, OptSpec};
use std::fmt::Write as _;

/// One option line as sysbench's option table holds it: name, the form of
/// its value (`=N`, `[=on|off]`...), description, default (None: shown
/// without one).
struct Line<'a> {
    name: &'a str,
    form: &'a str,
    desc: &'a str,
    default: Option<&'a str>,
}

const fn l<'a>(name: &'a str, form: &'a str, desc: &'a str, default: Option<&'a str>) -> Line<'a> {
    Line {
        name,
        form,
        desc,
        default,
    }
}

/// A table of options, aligned as sysbench aligns them (the widest name
/// and form, plus one space), then a blank line.
fn table(out: &mut String, lines: &[Line<'_>]) {
    let width = lines
        .iter()
        .map(|o| o.name.len() + o.form.len())
        .max()
        .unwrap_or(0);
    for o in lines {
        let pad = width - o.name.len() + 1;
        let _ = write!(out, "  --{}{:<pad$}{}", o.name, o.form, o.desc);
        if let Some(d) = o.default {
            let _ = write!(out, " [{d}]");
        }
        out.push('\n');
    }
    out.push('\n');
}

const GENERAL: &[Line<'static>] = &[
    l("threads", "=N", "number of threads to use", Some("1")),
    l(
        "events",
        "=N",
        "limit for total number of events",
        Some("0"),
    ),
    l(
        "time",
        "=N",
        "limit for total execution time in seconds",
        Some("10"),
    ),
    l(
        "forced-shutdown",
        "=STRING",
        "number of seconds to wait after the --time limit before forcing shutdown, or 'off' to disable",
        Some("off"),
    ),
    l(
        "thread-stack-size",
        "=SIZE",
        "size of stack per thread",
        Some("64K"),
    ),
    l(
        "rate",
        "=N",
        "average transactions rate. 0 for unlimited rate",
        Some("0"),
    ),
    l(
        "report-interval",
        "=N",
        "periodically report intermediate statistics with a specified interval in seconds. 0 disables intermediate reports",
        Some("0"),
    ),
    l(
        "report-checkpoints",
        "=[LIST,...]",
        "dump full statistics and reset all counters at specified points in time. The argument is a list of comma-separated values representing the amount of time in seconds elapsed from start of test when report checkpoint(s) must be performed. Report checkpoints are off by default.",
        Some(""),
    ),
    l(
        "debug",
        "[=on|off]",
        "print more debugging info",
        Some("off"),
    ),
    l(
        "validate",
        "[=on|off]",
        "perform validation checks where possible",
        Some("off"),
    ),
    l("help", "[=on|off]", "print help and exit", Some("off")),
    l(
        "version",
        "[=on|off]",
        "print version and exit",
        Some("off"),
    ),
    l(
        "config-file",
        "=FILENAME",
        "File containing command line options",
        None,
    ),
    l("tx-rate", "=N", "deprecated alias for --rate", Some("0")),
    l(
        "max-requests",
        "=N",
        "deprecated alias for --events",
        Some("0"),
    ),
    l("max-time", "=N", "deprecated alias for --time", Some("0")),
    l(
        "num-threads",
        "=N",
        "deprecated alias for --threads",
        Some("1"),
    ),
];

const RANDOM: &[Line<'static>] = &[
    l(
        "rand-type",
        "=STRING",
        "random numbers distribution {uniform,gaussian,special,pareto}",
        Some("special"),
    ),
    l(
        "rand-spec-iter",
        "=N",
        "number of iterations used for numbers generation",
        Some("12"),
    ),
    l(
        "rand-spec-pct",
        "=N",
        "percentage of values to be treated as 'special' (for special distribution)",
        Some("1"),
    ),
    l(
        "rand-spec-res",
        "=N",
        "percentage of 'special' values to use (for special distribution)",
        Some("75"),
    ),
    l(
        "rand-seed",
        "=N",
        "seed for random number generator. When 0, the current time is used as a RNG seed.",
        Some("0"),
    ),
    l(
        "rand-pareto-h",
        "=N",
        "parameter h for pareto distribution",
        Some("0.2"),
    ),
];

const VERBOSITY: &[Line<'static>] = &[l(
    "verbosity",
    "=N",
    "verbosity level {5 - debug, 0 - only critical messages}",
    Some("3"),
)];

const REPORT: &[Line<'static>] = &[
    l(
        "percentile",
        "=N",
        "percentile to calculate in latency statistics (1-100). Use the special value of 0 to disable percentile calculations",
        Some("95"),
    ),
    l(
        "histogram",
        "[=on|off]",
        "print latency histogram in report",
        Some("off"),
    ),
];

const DATABASE: &[Line<'static>] = &[
    l(
        "db-driver",
        "=STRING",
        "specifies database driver to use ('help' to get list of available drivers)",
        Some("mysql"),
    ),
    l(
        "db-ps-mode",
        "=STRING",
        "prepared statements usage mode {auto, disable}",
        Some("auto"),
    ),
    l(
        "db-debug",
        "[=on|off]",
        "print database-specific debug information",
        Some("off"),
    ),
];

const MYSQL: &[Line<'static>] = &[
    l(
        "mysql-host",
        "=[LIST,...]",
        "MySQL server host",
        Some("localhost"),
    ),
    l(
        "mysql-port",
        "=[LIST,...]",
        "MySQL server port",
        Some("3306"),
    ),
    l("mysql-socket", "=[LIST,...]", "MySQL socket", None),
    l("mysql-user", "=STRING", "MySQL user", Some("sbtest")),
    l("mysql-password", "=STRING", "MySQL password", Some("")),
    l("mysql-db", "=STRING", "MySQL database name", Some("sbtest")),
    l(
        "mysql-ssl",
        "[=on|off]",
        "use SSL connections, if available in the client library",
        Some("off"),
    ),
    l(
        "mysql-ssl-cipher",
        "=STRING",
        "use specific cipher for SSL connections",
        Some(""),
    ),
    l(
        "mysql-compression",
        "[=on|off]",
        "use compression, if available in the client library",
        Some("off"),
    ),
    l(
        "mysql-debug",
        "[=on|off]",
        "trace all client library calls",
        Some("off"),
    ),
    l(
        "mysql-ignore-errors",
        "=[LIST,...]",
        "list of errors to ignore, or \"all\"",
        Some("1213,1020,1205"),
    ),
    l(
        "mysql-dry-run",
        "[=on|off]",
        "Dry run, pretend that all MySQL client API calls are successful without executing them",
        Some("off"),
    ),
];

const PGSQL: &[Line<'static>] = &[
    l(
        "pgsql-host",
        "=STRING",
        "PostgreSQL server host",
        Some("localhost"),
    ),
    l("pgsql-port", "=N", "PostgreSQL server port", Some("5432")),
    l("pgsql-user", "=STRING", "PostgreSQL user", Some("sbtest")),
    l("pgsql-password", "=STRING", "PostgreSQL password", Some("")),
    l(
        "pgsql-db",
        "=STRING",
        "PostgreSQL database name",
        Some("sbtest"),
    ),
];

/// sysbench's tests without a database, as `--help` lists them.
pub const NON_DATABASE_TESTS: &[(&str, &str)] = &[
    ("fileio", "File I/O test"),
    ("cpu", "CPU performance test"),
    ("memory", "Memory functions speed test"),
    ("threads", "Threads subsystem performance test"),
    ("mutex", "Mutex performance test"),
];

/// `sysbench --help`.
pub fn help() -> String {
    let mut out = String::from(
        "Usage:\n  sysbench [options]... [testname] [command]\n\n\
         Commands implemented by most tests: prepare run cleanup help\n\n\
         General options:\n",
    );
    table(&mut out, GENERAL);
    out.push_str("Pseudo-Random Numbers Generator options:\n");
    table(&mut out, RANDOM);
    out.push_str("Log options:\n");
    table(&mut out, VERBOSITY);
    table(&mut out, REPORT);
    out.push_str("General database options:\n\n");
    table(&mut out, DATABASE);
    out.push_str("\nCompiled-in database drivers:\n");
    out.push_str("  mysql - MySQL driver\n  pgsql - PostgreSQL driver\n\n");
    out.push_str("mysql options:\n");
    table(&mut out, MYSQL);
    out.push_str("pgsql options:\n");
    table(&mut out, PGSQL);
    out.push_str("Compiled-in tests:\n");
    for (name, what) in NON_DATABASE_TESTS {
        let _ = writeln!(out, "  {name} - {what}");
    }
    out.push_str("\nSee 'sysbench <testname> help' for a list of options for each test.\n\n");
    out
}

/// `sysbench TEST help` for a test with options: `NAME options:` and the
/// table, in the order given.
pub fn test_options(name: &str, specs: &[OptSpec]) -> String {
    let lines: Vec<Line<'_>> = specs
        .iter()
        .map(|s| Line {
            name: &s.name,
            form: match s.kind {
                OptKind::Bool => "[=on|off]",
                OptKind::Int | OptKind::Float => "=N",
                OptKind::Size => "=SIZE",
                OptKind::FloatList => "=[LIST,...]",
                OptKind::Str | OptKind::Choice(_) => "=STRING",
            },
            desc: &s.help,
            default: (!s.default.is_empty()).then_some(&*s.default),
        })
        .collect();
    let mut out = format!("{name} options:\n");
    table(&mut out, &lines);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_as_sysbench() {
        let h = help();
        assert!(h.contains("\n  --threads=N                     number of threads to use [1]\n"));
        assert!(h.contains("\n  --rand-pareto-h=N  parameter h for pareto distribution [0.2]\n"));
        assert!(h.contains("\n  --pgsql-port=N          PostgreSQL server port [5432]\n"));
        assert!(h.contains(
            "\n  --config-file=FILENAME          File containing command line options\n"
        ));
        assert!(h.ends_with("for each test.\n\n"));
    }
}
