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

/// sysbench's tests that touch no database; dbmeter has none of them yet.
const NON_DATABASE_TESTS: &[&str] = &["cpu", "memory", "fileio", "threads", "mutex"];

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
    (
        "report-checkpoints",
        Refused(
            "dbmeter does not reset its statistics during a run; --report-interval prints \
             interval lines and --format=csv writes the whole series",
        ),
    ),
    (
        "debug",
        NoEffect("dbmeter has no debug trace; errors are reported as they happen"),
    ),
    (
        "validate",
        NoEffect("sysbench validates only in its fileio test, which dbmeter does not have"),
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
    (
        "verbosity",
        NoEffect("dbmeter prints its report at every level, and its messages on standard error"),
    ),
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
    (
        "mysql-dry-run",
        OffOnly("dbmeter always sends its statements to the server"),
    ),
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
        "`dbmeter sysbench TEST help` lists the test's options, as sysbench does; \
         `dbmeter sysbench --help` shows this page. sysbench's cpu, memory, fileio, \
         threads and mutex tests are not in dbmeter.",
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
            "dbmeter's version, and the sysbench it follows",
        ),
    ],
    sections: &[Section {
        title: "Output",
        body: &[
            "The report has sysbench's lines (transactions:, queries:, 95th \
             percentile:, total time:, the [ 10s ] interval lines), then dbmeter's \
             environment summary; --histogram=on prints the histogram before it, as \
             sysbench. The header names dbmeter. Passwords never appear in output or \
             results.",
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
}

/// The benchmark a sysbench test word names, found as sysbench finds
/// tests.
fn find_test(word: &str) -> Result<Found, CliError> {
    if NON_DATABASE_TESTS.contains(&word) {
        return Err(CliError::Failed(format!(
            "sysbench's {word} test is not in dbmeter yet (dbmeter has none of cpu, \
             memory, fileio, threads, mutex); run it with sysbench itself"
        )));
    }
    let load = |path: &str| -> Result<Found, CliError> {
        Ok(Found {
            bench: registry::resolve(path).map_err(CliError::Failed)?,
            word: path.to_string(),
            note: None,
        })
    };
    if word == "-" {
        return load(word);
    }
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
        });
    }
    Err(usage(format!(
        "cannot find test '{word}': no such sysbench test, file or module"
    )))
}

/// `dbmeter sysbench ARGS...`.
pub fn main(args: &[String]) -> Result<i32, CliError> {
    let (opts, words) = split(args)?;
    if opts
        .iter()
        .any(|o| o.name == "version" && o.from.is_none() && o.is_on())
    {
        println!("dbmeter {VERSION} (sysbench {SYSBENCH_VERSION} command lines)");
        return Ok(0);
    }
    if opts
        .iter()
        .any(|o| o.name == "help" && o.from.is_none() && o.is_on())
        || (words.first().is_some_and(|w| w == "help") && !opts.iter().any(|o| o.name == "test"))
    {
        return crate::help::print_page(&PAGE);
    }
    // The test: --test=TEST (then every word is the command), else the
    // first word.
    let test_opt = opts
        .iter()
        .rev()
        .find(|o| o.name == "test")
        .map(|o| o.value.clone().unwrap_or_default());
    let mut words = words.into_iter();
    // No test named and a script piped in: sysbench reads it (as `-`).
    let piped = || (!std::io::IsTerminal::is_terminal(&std::io::stdin())).then(|| "-".to_string());
    let Some(test) = test_opt.or_else(|| words.next()).or_else(piped) else {
        return Err(usage(
            "which test? e.g. `dbmeter sysbench oltp_read_write run` (dbmeter reads \
             no script from standard input)",
        ));
    };
    let command = words.next();
    if let Some(extra) = words.next() {
        return Err(usage(format!(
            "unrecognized command line argument: {extra}"
        )));
    }
    let Found {
        mut bench,
        mut word,
        mut note,
    } = find_test(&test)?;
    let legacy = bench.takes_any_option();
    let specs = specs_for(Some(bench.as_ref()));
    let own: Vec<String> = bench.options().iter().map(|s| canonical(&s.name)).collect();
    let known = |name: &str| {
        let name = ALIASES
            .iter()
            .find(|(a, _)| *a == name)
            .map_or(name, |(_, to)| to);
        specs.iter().any(|s| canonical(&s.name) == name)
    };

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
                return Err(usage(format!("{}: not supported: {why}", o.shown())));
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
                // test, version, help: read above.
                _ => {}
            },
            None if o.from.is_some() && !legacy && !known(&o.name) => {
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
            return Err(usage(format!(
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
    // As in sysbench, --mysql-ignore-errors concerns the mysql driver only:
    // MySQL's codes mean nothing to another target (and are refused there).
    if let Some(o) = mysql_ignore {
        let last = |name: &str| {
            out.iter()
                .rev()
                .find(|(n, _)| n == name)
                .and_then(|(_, v)| v.clone())
        };
        let mysql = match (last("db"), last("db-driver")) {
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
    if !given("db") && !given("db-driver") {
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

    // The command.
    let command = match command {
        // A script's body ran when it was loaded: that is all (or it
        // runs now, with the database).
        None if bench.default_command().is_some_and(|c| c.is_empty()) => return Ok(0),
        None if bench.default_command().is_some() => bench.default_command().unwrap_or_default(),
        None => {
            return Err(usage(format!(
                "missing command: say what to do with {test} (prepare, prewarm, run, \
                 cleanup or help)"
            )));
        }
        Some(c) if c == "help" && !bench.verbs().iter().any(|v| v.name == "help") => {
            print!(
                "{}",
                crate::help::test_options_help(bench.as_ref(), crate::help::width())
            );
            return Ok(0);
        }
        Some(c) => c,
    };
    let ok_command = ["prepare", "prewarm", "run", "cleanup", "check"].contains(&command.as_str())
        || bench.verbs().iter().any(|v| v.name == command);
    if !ok_command {
        return Err(usage(format!(
            "unknown command '{command}' for {test} (prepare, prewarm, run, cleanup, help{})",
            own_verbs(bench.as_ref())
        )));
    }
    for n in &notes {
        eprintln!("dbmeter: {n}");
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
    let inv = args::parse(&argv, specs_for).map_err(|e| match e {
        CliError::Usage(m) => CliError::SysbenchUsage(m),
        other => other,
    })?;
    super::execute(inv, Layout::Sysbench { percentile_off }).map_err(|e| match e {
        CliError::Usage(m) => CliError::SysbenchUsage(m),
        other => other,
    })
}

/// `, name, name` of a benchmark's own commands besides the usual ones.
fn own_verbs(b: &dyn Benchmark) -> String {
    b.verbs()
        .iter()
        .filter(|v| !["prepare", "prewarm", "run", "cleanup", "check"].contains(&v.name.as_ref()))
        .map(|v| format!(", {}", v.name))
        .collect()
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
            name: "mysql-password".into(),
            value: Some("s3cret".into()),
            from: None,
        };
        assert!(!a.shown().contains("s3cret"));
    }
}
