//! `dbmeter sysbench ARGS...`: sysbench 1.0's command lines (and the
//! option names of sysbench 0.5 and 0.4), so that a wrapper script works
//! with `dbmeter sysbench` in place of `sysbench`.
//!
//! The words are turned into the command line `run`, `prepare`... take
//! (`COMMAND WORKLOAD --option=value ...`), parsed by the same parser and
//! carried out by the same code ([`super::execute`]): this file only
//! translates. [`OPTIONS`] says what becomes of each of sysbench's options;
//! docs/sysbench.md is its table for users (a test below keeps the two
//! together).

use super::VERSION;
use crate::CliError;
use crate::args;
use crate::help::{Example, Page, Section, opt};
use dbmeter_benchmarks::options::{canonical, parse_bool};
use dbmeter_benchmarks::{Benchmark, registry};
use dbmeter_result::Layout;
use dbmeter_run::options::{ALIASES, specs_for};
use std::path::Path;
use std::sync::Arc;

/// The sysbench release whose command line `dbmeter sysbench` follows.
pub const SYSBENCH_VERSION: &str = "1.0.20";

/// Where Debian's sysbench keeps its bundled scripts; sysbench looks
/// there for `NAME.lua` when NAME is no file.
const SYSBENCH_SCRIPTS: &str = "/usr/share/sysbench";

/// sysbench's bundled database tests: dbmeter runs them natively (the
/// same statements, counted the same way).
const BUNDLED: &[&str] = &[
    "oltp_read_write",
    "oltp_read_only",
    "oltp_write_only",
    "oltp_point_select",
    "oltp_update_index",
    "oltp_update_non_index",
    "oltp_delete",
    "oltp_insert",
    "select_random_points",
    "select_random_ranges",
    "bulk_insert",
];

/// What dbmeter does with one of sysbench's options.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Treat {
    /// dbmeter's option of the same name and meaning.
    Same,
    /// dbmeter's option of another name, same meaning.
    As(&'static str),
    /// A deprecated name of dbmeter's option (sysbench 1.0 keeps it from
    /// 0.5): when given it wins over the new name, as in sysbench.
    Deprecated(&'static str),
    /// Accepted and without effect in dbmeter, for this reason (said on
    /// standard error).
    NoEffect(&'static str),
    /// Accepted when off (its default); refused when on, for this reason.
    OffOnly(&'static str),
    /// Refused, for this reason.
    Refused(&'static str),
    /// A sysbench 0.5/0.4 OLTP option: dbmeter's option of this name for
    /// the built-in workloads; a 0.5 script reads it as a global variable.
    Old(&'static str),
    /// Handled by this file itself (test, config-file, version, help,
    /// percentile=0, init-rng/rand-init).
    Own,
}

use Treat::*;

/// Every option `sysbench --help` and `sysbench oltp_read_write help`
/// list, and the 0.5 and 0.4 names wrapper scripts still use. Options not
/// here are dbmeter's own (`--db`, `--format`, `--store`...) or a
/// script's, and go to the parser as they are.
pub(crate) const OPTIONS: &[(&str, Treat)] = &[
    // General options.
    ("threads", Same),
    ("events", Same),
    ("time", Same),
    ("forced-shutdown", Same),
    (
        "thread-stack-size",
        NoEffect("dbmeter's virtual users are OS threads whose stacks dbmeter sizes itself"),
    ),
    ("rate", Same),
    ("report-interval", Same),
    // Same; empty (sysbench's default) is none.
    ("report-checkpoints", Own),
    (
        "debug",
        NoEffect("dbmeter has no debug trace; errors are reported as they happen"),
    ),
    (
        "validate",
        // fileio's own option (a checksum in every block); the other
        // tests validate nothing, as in sysbench.
        NoEffect("sysbench validates only in its fileio test"),
    ),
    ("help", Own),
    ("version", Own),
    ("config-file", Own),
    ("tx-rate", Deprecated("rate")),
    ("max-requests", Deprecated("events")),
    ("max-time", Deprecated("time")),
    ("num-threads", Deprecated("threads")),
    ("test", Own),
    // Pseudo-random numbers.
    ("rand-type", Same),
    ("rand-spec-iter", Same),
    ("rand-spec-pct", Same),
    ("rand-spec-res", Same),
    ("rand-seed", Same),
    ("rand-pareto-h", Same),
    ("rand-init", Own),
    ("init-rng", Own),
    // Log options.
    ("verbosity", Own),
    ("percentile", Own),
    ("histogram", Same),
    // General database options.
    ("db-driver", Same),
    ("db-ps-mode", Same),
    (
        "db-debug",
        NoEffect("dbmeter's drivers have no debug trace"),
    ),
    // MySQL.
    ("mysql-host", Same),
    ("mysql-port", Same),
    ("mysql-socket", Same),
    ("mysql-user", Same),
    ("mysql-password", Same),
    ("mysql-db", Same),
    ("mysql-ssl", As("ssl-mode")),
    ("mysql-ssl-ca", As("ssl-ca")),
    ("mysql-ssl-cert", As("ssl-cert")),
    ("mysql-ssl-key", As("ssl-key")),
    (
        "mysql-ssl-cipher",
        Refused("dbmeter's TLS (rustls) offers its own cipher suites and cannot be limited to one"),
    ),
    (
        "mysql-compression",
        OffOnly("dbmeter's MySQL client does not compress the protocol"),
    ),
    (
        "mysql-debug",
        NoEffect("it traces libmysqlclient, which dbmeter does not use (it has its own client)"),
    ),
    // --ignore-errors when the target is MySQL (see translate).
    ("mysql-ignore-errors", Own),
    ("mysql-dry-run", Same),
    // PostgreSQL.
    ("pgsql-host", Same),
    ("pgsql-port", Same),
    ("pgsql-user", Same),
    ("pgsql-password", Same),
    ("pgsql-db", Same),
    // The OLTP tests' options of sysbench 1.0 are the built-in workloads'
    // own (dashes or underscores), except these.
    (
        "pgsql-variant",
        Refused("dbmeter does not run the OLTP tests on Redshift"),
    ),
    // sysbench 0.5 (oltp.lua) and 0.4 names.
    ("mysql-table-engine", Old("mysql-storage-engine")),
    ("oltp-table-size", Old("table-size")),
    ("oltp-tables-count", Old("tables")),
    ("oltp-range-size", Old("range-size")),
    ("oltp-point-selects", Old("point-selects")),
    ("oltp-simple-ranges", Old("simple-ranges")),
    ("oltp-sum-ranges", Old("sum-ranges")),
    ("oltp-order-ranges", Old("order-ranges")),
    ("oltp-distinct-ranges", Old("distinct-ranges")),
    ("oltp-index-updates", Old("index-updates")),
    ("oltp-non-index-updates", Old("non-index-updates")),
    ("oltp-delete-inserts", Old("delete-inserts")),
    ("oltp-range-selects", Old("range-selects")),
    ("oltp-skip-trx", Old("skip-trx")),
    ("oltp-auto-inc", Old("auto-inc")),
    ("oltp-secondary", Old("secondary")),
    ("oltp-create-secondary", Old("create-secondary")),
    ("oltp-dist-type", Old("rand-type")),
    ("oltp-dist-pct", Old("rand-spec-pct")),
    ("oltp-dist-res", Old("rand-spec-res")),
    ("oltp-read-only", Own),
    ("mysql-engine-trx", Old("")),
    ("myisam-max-rows", Old("")),
];

/// Why `mysql-engine-trx` and `myisam-max-rows` do nothing for the
/// built-in workloads.
const OLD_NO_EFFECT: &str = "sysbench 1.0's OLTP tables, and dbmeter's, use transactions on \
    every engine and set no MAX_ROWS";

fn treat(name: &str) -> Option<Treat> {
    OPTIONS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

pub const PAGE: Page = Page {
    usage: &[
        "sysbench [OPTIONS] TEST COMMAND",
        "sysbench [OPTIONS] --test=TEST COMMAND",
        "sysbench TEST help",
    ],
    about: &[
        "Takes sysbench's own command lines, so that a wrapper script works with \
         `dbmeter sysbench` in place of `sysbench`. TEST is one of sysbench's OLTP \
         tests (oltp_read_write, oltp_point_select...: dbmeter runs them natively, same \
         statements and counts), a Lua script's path or name (./NAME.lua, then \
         /usr/share/sysbench/NAME.lua), or sysbench 0.5's oltp.lua. COMMAND is prepare, \
         prewarm, run, cleanup, help or the script's own.",
        "Options are written --name=value, anywhere on the line; sysbench's defaults \
         hold (--db-driver=mysql, user and database sbtest, --percentile=95, \
         --forced-shutdown=off). sysbench 0.5 names (--test, --num-threads, \
         --max-requests, --max-time, --tx-rate, --oltp-*) are taken. An option \
         without effect in dbmeter is said so on standard error; one dbmeter cannot \
         honour is refused. dbmeter's own options (--db, --format, --store...) work \
         too. docs/sysbench.md has the table of every option.",
        "It prints as sysbench 1.0.20 prints: its banner, header, report, help \
         (`dbmeter sysbench --help`, `dbmeter sysbench TEST help`), error texts and \
         exit codes; this page is `dbmeter help sysbench`. sysbench's tests without a \
         database (cpu, memory, threads, mutex, fileio) are dbmeter's benchmarks of \
         those names, found first, as sysbench finds its built-in tests.",
    ],
    options: &[
        opt("test", "TEST", "the test, as the word TEST (0.5's way)"),
        opt(
            "config-file",
            "FILE",
            "more options, one name=value a line (# comments)",
        ),
        opt("num-threads", "N", "0.5's --threads"),
        opt("max-requests", "N", "0.5's --events"),
        opt("max-time", "SECONDS", "0.5's --time; 0 is no limit"),
        opt("tx-rate", "N", "0.5's --rate"),
        opt(
            "version",
            "",
            "prints `sysbench 1.0.20`, the version it follows (dbmeter's: `dbmeter --version`)",
        ),
    ],
    sections: &[Section {
        title: "Output",
        body: &[
            "sysbench's, line for line, on standard output: the banner (`sysbench \
             1.0.20 (using dbmeter VERSION)`), the header, the [ 10s ] interval lines, \
             the report. --verbosity as sysbench's (0: only errors and what a script \
             prints); from --verbosity=4 on, dbmeter's additions (all percentiles, the \
             environment) follow sysbench's last line. Passwords never appear in output \
             or results.",
        ],
    }],
    examples: &[
        Example {
            what: "sysbench 1.0's way, on a local MariaDB",
            command: "sysbench oltp_read_write --mysql-user=root --tables=4 \
                      --threads=8 --time=60 --report-interval=10 run",
        },
        Example {
            what: "sysbench 0.5's way (no oltp.lua here: runs as oltp_read_write)",
            command: "sysbench --test=oltp.lua --oltp-table-size=100000 \
                      --num-threads=8 --max-time=300 --max-requests=0 run",
        },
        Example {
            what: "A script, on PostgreSQL",
            command: "sysbench ./my.lua --db-driver=pgsql --pgsql-host=127.0.0.1 \
                      --events=1000 run",
        },
    ],
    exit: "0 ok; 1 failed, or a bad command line (1 as sysbench, where other \
           commands give 2); 130 or 143 stopped by SIGINT or SIGTERM.",
    ..Page::new(
        "sysbench",
        "sysbench's own command lines (a drop-in for wrapper scripts)",
    )
};

/// One `--name[=value]` of the command line or of a config file.
#[derive(Clone, Debug)]
struct Arg {
    /// As written (`--name=value`), for sysbench's "invalid option".
    raw: String,
    /// Canonical (dashes, lower case).
    name: String,
    value: Option<String>,
    /// `FILE:LINE` when it comes from --config-file.
    from: Option<String>,
}

impl Arg {
    /// `--name=value` as the user would write it, the value left out for
    /// a password.
    fn shown(&self) -> String {
        match &self.value {
            Some(_) if self.name.ends_with("password") => format!("--{}=...", self.name),
            Some(v) => format!("--{}={v}", self.name),
            None => format!("--{}", self.name),
        }
    }

    fn is_on(&self) -> bool {
        self.value
            .as_deref()
            .is_none_or(|v| parse_bool(v) != Some(false))
    }
}

fn usage(m: impl Into<String>) -> CliError {
    CliError::SysbenchUsage(m.into())
}

/// Options read from a sysbench config file: `name=value` a line, blank
/// lines and `#` comments skipped (a leading `--` is allowed).
fn config_file(path: &str) -> Result<Vec<Arg>, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::Failed(format!("--config-file={path}: {e}")))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (name, value) = match line.split_once('=') {
            Some((n, v)) => (n.trim(), Some(v.trim().to_string())),
            None => (line, None),
        };
        let name = canonical(name);
        if name == "config-file" {
            return Err(usage(format!(
                "{path}:{}: a config file cannot name another one",
                i + 1
            )));
        }
        out.push(Arg {
            raw: format!("--{line}"),
            name,
            value,
            from: Some(format!("{path}:{}", i + 1)),
        });
    }
    Ok(out)
}

/// The options (config files read in their place) and the other words.
fn split(args: &[String]) -> Result<(Vec<Arg>, Vec<String>), CliError> {
    let mut opts = Vec::new();
    let mut words = Vec::new();
    for a in args {
        let Some(body) = a.strip_prefix("--").filter(|b| !b.is_empty()) else {
            words.push(a.clone());
            continue;
        };
        let (name, value) = match body.split_once('=') {
            Some((n, v)) => (canonical(n), Some(v.to_string())),
            None => (canonical(body), None),
        };
        if name == "config-file" {
            let Some(path) = value.filter(|v| !v.is_empty()) else {
                return Err(usage("--config-file needs a file: --config-file=FILE"));
            };
            opts.extend(config_file(&path)?);
            continue;
        }
        opts.push(Arg {
            raw: a.clone(),
            name,
            value,
            from: None,
        });
    }
    Ok((opts, words))
}

/// What a test word names.
struct Found {
    bench: Arc<dyn Benchmark>,
    /// The workload as dbmeter's command line names it.
    word: String,
    /// Said on standard error: what runs when it is not what the word
    /// literally names.
    note: Option<String>,
    /// A script (its commands are the ones it defines), not one of
    /// dbmeter's native workloads.
    script: bool,
}

impl Found {
    /// One of sysbench's built-in tests, which touch no database (cpu,
    /// memory...): dbmeter's benchmark of that name. sysbench requires a
    /// command for them, and knows only the commands they implement.
    fn built_in(&self) -> bool {
        !self.script && !self.bench.needs_database()
    }
}

/// The benchmark a sysbench test word names, found as sysbench finds
/// tests: its built-in tests first (dbmeter's benchmarks without a
/// database, by their exact name), then scripts. The error is sysbench's
/// message (printed after `FATAL: `).
fn find_test(word: &str) -> Result<Found, String> {
    if let Some(b) = registry::find(word).filter(|b| !b.needs_database() && b.name() == word) {
        return Ok(Found {
            bench: b,
            word: word.to_string(),
            note: None,
            script: false,
        });
    }
    let load = |path: &str| -> Result<Found, String> {
        Ok(Found {
            bench: registry::resolve(path)?,
            word: path.to_string(),
            note: None,
            script: true,
        })
    };
    let local = format!("./{word}.lua");
    if Path::new(word).is_file() {
        if !word.contains('/') && !word.ends_with(".lua") {
            // dbmeter takes a word for a path when it has a / or .lua.
            return load(&format!("./{word}"));
        }
        return load(word);
    }
    if !word.contains('/') && !word.ends_with(".lua") && Path::new(&local).is_file() {
        return load(&local);
    }
    if BUNDLED.contains(&word)
        && let Some(b) = registry::find(word)
    {
        return Ok(Found {
            bench: b,
            word: word.to_string(),
            note: None,
            script: false,
        });
    }
    let shared = format!("{SYSBENCH_SCRIPTS}/{word}.lua");
    if !word.contains('/') && Path::new(&shared).is_file() {
        return load(&shared);
    }
    if Path::new(word).file_name().is_some_and(|f| f == "oltp.lua")
        && let Some(b) = registry::find("oltp_read_write")
    {
        let note = format!(
            "{word} (sysbench 0.5's OLTP script) is not here: running dbmeter's \
             native workload, the same statements per transaction"
        );
        return Ok(Found {
            bench: b,
            word: "oltp_read_write".into(),
            note: Some(note),
            script: false,
        });
    }
    Err(format!(
        "Cannot find benchmark '{word}': no such built-in test, file or module"
    ))
}

/// sysbench's `--verbosity` levels: notices (the header, the report) and
/// warnings.
const NOTICE: u8 = 3;
const WARNING: u8 = 2;

/// A failure as sysbench reports it: `FATAL: ` and the message on
/// standard output (sysbench's log), exit code 1.
fn fatal(message: &str) -> i32 {
    println!("FATAL: {message}");
    1
}

/// The general options sysbench itself takes before it knows the test.
fn sysbench_general(name: &str) -> bool {
    OPTIONS
        .iter()
        .any(|(n, t)| *n == name && !matches!(t, Old(_)) && *n != "oltp-read-only")
}

/// The last value given for `name`, if any.
fn last<'a>(opts: &'a [Arg], name: &str) -> Option<&'a Arg> {
    opts.iter().rev().find(|o| o.name == name)
}

/// `dbmeter sysbench ARGS...`: what sysbench 1.0.20's `main` does, in its
/// order: the command line, `--help`, `--version`, the warnings of its
/// options, the banner, the test, the test's options, the command.
pub fn main(args: &[String]) -> Result<i32, CliError> {
    let (opts, words) = match split(args) {
        Ok(x) => x,
        Err(e) => return Ok(fatal(e.message())),
    };
    let test_opt = last(&opts, "test").map(|o| o.value.clone().unwrap_or_default());
    if test_opt.is_some() {
        eprintln!(
            "WARNING: the --test option is deprecated. You can pass a script name or path on \
             the command line without any options."
        );
    }
    // The test (unless --test names it) and the command; a third word is
    // an error, as in sysbench.
    let mut words = words.into_iter();
    let test = test_opt.or_else(|| words.next());
    let command = words.next();
    if let Some(extra) = words.next() {
        eprintln!("Unrecognized command line argument: {extra}");
        return Ok(1);
    }
    let flag = |name: &str| last(&opts, name).is_some_and(|o| o.from.is_none() && o.is_on());
    if flag("help") {
        print!("{}", crate::help::sysbench::help());
        return Ok(0);
    }
    if flag("version") {
        println!("sysbench {SYSBENCH_VERSION}");
        return Ok(0);
    }
    let verbosity = match last(&opts, "verbosity").and_then(|o| o.value.as_deref()) {
        None => NOTICE,
        Some(v) => match v.trim().parse::<u8>() {
            Ok(n) if n <= 5 => n,
            _ => {
                eprintln!("invalid option: --verbosity={v}");
                return Ok(1);
            }
        },
    };
    // sysbench's warnings about its options come before its banner, and
    // before it reads --verbosity: at every verbosity.
    {
        let positive = |name: &str, above: f64| {
            last(&opts, name)
                .and_then(|o| o.value.as_deref())
                .and_then(|v| v.trim().parse::<f64>().ok())
                .is_some_and(|v| v > above)
        };
        for (old, new, above) in [
            ("num-threads", "threads", 1.0),
            ("max-requests", "events", 0.0),
            ("max-time", "time", 0.0),
        ] {
            if positive(old, above) {
                println!("WARNING: --{old} is deprecated, use --{new} instead");
            }
        }
        if positive("tx-rate", 0.0) {
            println!("WARNING: --tx-rate is deprecated, use --rate instead");
        }
        // The limits the run gets: a deprecated name given wins (dbmeter
        // reads --max-time=0 as no time limit, 0.5's meaning).
        let value = |name: &str| {
            last(&opts, name)
                .and_then(|o| o.value.as_deref())
                .map(|v| v.trim().parse::<f64>().unwrap_or(-1.0))
        };
        let events = value("max-requests")
            .filter(|v| *v > 0.0)
            .or(value("events"))
            .unwrap_or(0.0);
        let time = value("max-time").or(value("time")).unwrap_or(10.0);
        if events == 0.0 && time == 0.0 {
            println!("WARNING: Both event and time limits are disabled, running an endless test");
        }
    }
    if verbosity >= NOTICE {
        println!("sysbench {SYSBENCH_VERSION} (using dbmeter {VERSION})\n");
    }

    // The test: a script on standard input, one of sysbench's tests
    // without a database, a script or one of the bundled OLTP tests.
    let test = match test.as_deref() {
        None | Some("-") => return stdin_script(verbosity),
        Some(t) => t.to_string(),
    };
    let found = match find_test(&test) {
        Ok(f) => f,
        Err(m) => return Ok(fatal(&m)),
    };
    let built_in = found.built_in();
    if built_in && command.is_none() {
        eprintln!("The '{test}' test requires a command argument. See 'sysbench {test} help'");
        return Ok(1);
    }
    let Found {
        mut bench,
        mut word,
        mut note,
        script,
    } = found;
    // Without a command sysbench loads the script (its body runs) and
    // stops there; a body that needs the database runs now, with it.
    let command = match command {
        Some(c) => c,
        None => match bench.default_command() {
            Some(c) if !c.is_empty() => c,
            _ => return Ok(0),
        },
    };
    let name = Path::new(&test)
        .file_name()
        .map_or(test.clone(), |n| n.to_string_lossy().into_owned());
    let legacy = bench.takes_any_option();
    let specs = specs_for(Some(bench.as_ref()));
    let own: Vec<String> = bench.options().iter().map(|s| canonical(&s.name)).collect();
    let spec_of = |name: &str| {
        let name = ALIASES
            .iter()
            .find(|(a, _)| *a == name)
            .map_or(name, |(_, to)| to);
        specs.iter().find(|s| canonical(&s.name) == name)
    };

    // The test's options, checked as sysbench checks them: an option
    // neither sysbench's, dbmeter's nor the test's is invalid (a 0.5
    // script takes any); a flag takes on/off, true/false, 1/0.
    for o in &opts {
        let spec = spec_of(&o.name);
        // A built-in test takes sysbench's general options, not the OLTP
        // tests' old names.
        let known = spec.is_some()
            || if built_in {
                sysbench_general(&o.name)
            } else {
                treat(&o.name).is_some()
            };
        let bad_flag = spec.is_some_and(|s| {
            s.kind == dbmeter_benchmarks::options::OptKind::Bool
                && o.value.as_deref().is_some_and(|v| parse_bool(v).is_none())
        });
        if o.from.is_none() && ((!known && !legacy) || bad_flag) {
            eprintln!("invalid option: {}", o.raw);
            return Ok(1);
        }
    }

    // The command, as sysbench's main takes it.
    let verbs: Vec<String> = bench.verbs().iter().map(|v| v.name.to_string()).collect();
    match command.as_str() {
        c if verbs.iter().any(|v| v == c) => {}
        "help" => {
            // A bundled test's options as sysbench lists them: from its
            // script, where sysbench's package keeps it.
            let shared = format!("{SYSBENCH_SCRIPTS}/{word}.lua");
            let listed = match script {
                false if Path::new(&shared).is_file() => registry::resolve(&shared).ok(),
                _ => None,
            };
            return test_help(listed.as_deref().unwrap_or(bench.as_ref()), &name);
        }
        "run" => {}
        "prepare" | "cleanup" if script || built_in => {
            eprintln!("'{name}' test does not implement the '{command}' command.");
            return Ok(1);
        }
        "check" if !built_in => {}
        "prepare" | "prewarm" | "cleanup" if !script && !built_in => {}
        _ => {
            eprintln!("Unknown command: {command}");
            return Ok(1);
        }
    }

    // Each option: what it becomes.
    let mut out: Vec<(String, Option<String>)> = Vec::new();
    let mut late: Vec<(String, Option<String>)> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let mut percentile_off = false;
    let mut fixed_seed = false;
    let mut read_only = None;
    // --mysql-ignore-errors: MySQL's error codes, for the mysql driver.
    let mut mysql_ignore = None;
    for o in &opts {
        // The workload's (a script's) own option of that name is its own.
        let t = if own.contains(&o.name) {
            Some(Same)
        } else {
            treat(&o.name)
        };
        let value = o.value.clone();
        match t {
            Some(Same) => out.push((o.name.clone(), value)),
            Some(As(to)) => out.push((to.to_string(), value)),
            Some(Deprecated(to)) => late.push((to.to_string(), value)),
            Some(NoEffect(why)) => notes.push(format!("{} has no effect: {why}", o.shown())),
            Some(OffOnly(_)) if !o.is_on() => {}
            Some(OffOnly(why)) | Some(Refused(why)) => {
                return Ok(fatal(&format!(
                    "{}: not supported in dbmeter: {why}",
                    o.shown()
                )));
            }
            Some(Old(_)) if legacy => out.push((o.name.clone(), value)),
            Some(Old("")) => notes.push(format!("{} has no effect: {OLD_NO_EFFECT}", o.shown())),
            Some(Old(to)) => out.push((to.to_string(), value)),
            Some(Own) => match o.name.as_str() {
                "percentile" => match value.as_deref().map(str::trim) {
                    Some("0") => percentile_off = true,
                    _ => {
                        percentile_off = false;
                        out.push((o.name.clone(), value));
                    }
                },
                // 0.4's --init-rng and 0.5's --rand-init: off (their
                // default) draws the same numbers in every run.
                "init-rng" | "rand-init" => fixed_seed = !o.is_on(),
                "oltp-read-only" if legacy => out.push((o.name.clone(), value)),
                "oltp-read-only" => read_only = Some(o.is_on()),
                "mysql-ignore-errors" => mysql_ignore = Some(o),
                "report-checkpoints" if value.as_deref().is_some_and(|v| !v.trim().is_empty()) => {
                    out.push((o.name.clone(), value))
                }
                // test, version, help, verbosity: read above.
                _ => {}
            },
            None if o.from.is_some() && !legacy && spec_of(&o.name).is_none() => {
                // As sysbench, which ignores what it does not know in a
                // config file; but say so.
                notes.push(format!(
                    "{}: ignoring the unknown option '{}'",
                    o.from.as_deref().unwrap_or_default(),
                    o.name
                ));
            }
            None => out.push((o.name.clone(), value)),
        }
    }
    if read_only == Some(true) {
        if bench.name() != "oltp_read_write" {
            return Ok(fatal(&format!(
                "--oltp-read-only=on: sysbench 0.5's option of oltp.lua; with {} use the \
                 test oltp_read_only",
                bench.name()
            )));
        }
        bench = registry::find("oltp_read_only").unwrap_or(bench);
        word = bench.name().to_string();
    }
    if let Some(n) = note.take() {
        notes.insert(0, format!("{n} ({word})"));
    }
    let last_out = |out: &[(String, Option<String>)], name: &str| {
        out.iter()
            .rev()
            .find(|(n, _)| n == name)
            .and_then(|(_, v)| v.clone())
    };
    // sysbench knows two drivers (dbmeter a third, sqlite).
    if let Some(driver) = last_out(&out, "db-driver")
        && !["mysql", "pgsql", "sqlite"].contains(&driver.trim())
    {
        fatal(&format!("invalid database driver name: '{driver}'"));
        if script {
            let function = if command == "run" {
                "thread_init"
            } else {
                &command
            };
            fatal(&format!(
                "`{function}' function failed: {test}: failed to initialize the DB driver"
            ));
        }
        return Ok(1);
    }
    // As in sysbench, --mysql-ignore-errors concerns the mysql driver only:
    // MySQL's codes mean nothing to another target (and are refused there).
    if let Some(o) = mysql_ignore {
        let mysql = match (last_out(&out, "db"), last_out(&out, "db-driver")) {
            (Some(url), _) if !url.trim().is_empty() => {
                let url = url.trim().to_ascii_lowercase();
                url.starts_with("mysql:") || url.starts_with("mariadb:")
            }
            (_, Some(driver)) => driver.eq_ignore_ascii_case("mysql"),
            (_, None) => true,
        };
        if mysql {
            out.push(("ignore-errors".into(), o.value.clone()));
        } else {
            notes.push(format!(
                "{} has no effect: it is for the mysql driver",
                o.shown()
            ));
        }
    }
    let given = |name: &str| {
        out.iter()
            .chain(late.iter())
            .any(|(n, _)| n == name || ALIASES.iter().any(|(a, to)| *a == n && *to == name))
    };
    // sysbench's defaults where dbmeter's differ.
    let mut defaults: Vec<(String, Option<String>)> = Vec::new();
    if bench.needs_database() && !given("db") && !given("db-driver") {
        defaults.push(("db-driver".into(), Some("mysql".into())));
    }
    if !given("percentile") {
        defaults.push(("percentile".into(), Some("95".into())));
    }
    if !given("forced-shutdown") {
        defaults.push(("forced-shutdown".into(), Some("off".into())));
    }
    if fixed_seed && !given("rand-seed") {
        defaults.push(("rand-seed".into(), Some("1".into())));
    }
    if verbosity >= WARNING {
        for n in &notes {
            eprintln!("dbmeter: {n}");
        }
    }

    // The command line of `dbmeter COMMAND WORKLOAD`, parsed as ever.
    let mut argv = vec![command, word];
    for (name, value) in defaults.into_iter().chain(out).chain(late) {
        argv.push(match value {
            Some(v) => format!("--{name}={v}"),
            // `--store` alone: the default store.
            None if name == "store" => "--store=".into(),
            None => format!("--{name}"),
        });
    }
    let layout = Layout::Sysbench {
        percentile_off,
        verbosity,
    };
    // What fails is reported as sysbench reports it: FATAL on stdout.
    match args::parse(&argv, specs_for).and_then(|inv| super::execute(inv, layout)) {
        Ok(code) => Ok(code),
        Err(e) => {
            // sysbench ends with 1 for a bad command line too.
            fatal(e.message());
            Ok(1)
        }
    }
}

/// `sysbench TEST help`: the test's own help (a script's `help()`), else
/// its options as sysbench lists them, else sysbench's word that it has
/// no help.
fn test_help(bench: &dyn Benchmark, name: &str) -> Result<i32, CliError> {
    match bench.own_help() {
        Ok(true) => return Ok(0),
        Ok(false) => {}
        Err(e) => return Ok(fatal(&e.to_string())),
    }
    // The options dbmeter adds to every script and workload are sysbench's
    // general ones (`sysbench --help`), or dbmeter's.
    let added: Vec<String> = dbmeter_benchmarks::oltp::RAND_OPTIONS
        .iter()
        .map(|o| canonical(&o.name))
        .chain([canonical(dbmeter_benchmarks::script::REPORT_STATEMENTS)])
        .collect();
    let specs: Vec<_> = bench
        .sysbench_options()
        .into_iter()
        .filter(|s| !added.contains(&canonical(&s.name)))
        .collect();
    if specs.is_empty() {
        eprintln!("'{name}' test does not implement the 'help' command.");
        return Ok(1);
    }
    print!("{}", crate::help::sysbench::test_options(name, &specs));
    Ok(0)
}

/// A script on standard input (`sysbench` with no test, or `-`): sysbench
/// runs its body and stops, whatever the command.
fn stdin_script(verbosity: u8) -> Result<i32, CliError> {
    use std::io::IsTerminal;
    if verbosity >= NOTICE && std::io::stdin().is_terminal() {
        println!("Reading the script from the standard input:\n");
    }
    // The registry reads and loads it (`-`), as for `dbmeter run -`.
    match registry::resolve("-") {
        Ok(_) => Ok(0),
        Err(m) => Ok(fatal(&m)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/sysbench.md names every option of the table, and the table
    /// every option the doc names as sysbench's.
    #[test]
    fn the_doc_lists_every_option() {
        let doc = include_str!("../../../../docs/sysbench.md");
        for (name, _) in OPTIONS {
            assert!(
                doc.contains(&format!("`--{name}")),
                "docs/sysbench.md does not mention --{name}"
            );
        }
    }

    #[test]
    fn config_lines() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("cfg");
        std::fs::write(
            &p,
            "threads = 2\n# no\n\n--time=0\nmysql_port=3307\ndebug\n",
        )
        .unwrap();
        let a = config_file(p.to_str().unwrap()).unwrap();
        let got: Vec<(&str, Option<&str>)> = a
            .iter()
            .map(|a| (a.name.as_str(), a.value.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                ("threads", Some("2")),
                ("time", Some("0")),
                ("mysql-port", Some("3307")),
                ("debug", None)
            ]
        );
        assert!(a[1].from.as_deref().unwrap().ends_with(":4"));
    }

    #[test]
    fn passwords_are_not_shown() {
        let a = Arg {
            raw: "--mysql-password=s3cret".into(),
            name: "mysql-password".into(),
            value: Some("s3cret".into()),
            from: None,
        };
        assert!(!a.shown().contains("s3cret"));
    }
}
