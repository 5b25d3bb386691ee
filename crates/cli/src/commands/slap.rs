//! `dbmeter slap [--option=value ...]` (dbmeter's form) and `dbmeter
//! mysqlslap [OPTIONS]` (mysqlslap's own command line, read as MariaDB's
//! my_getopt reads it: short options with their values attached or next,
//! long options and their unique prefixes, `--skip-`/`--enable-` for
//! flags, the `[mysqlslap]` and `[mariadb-slap]` groups of the option
//! file first). Both become one request of the `slap` benchmark, whose
//! sweep (engines, concurrency levels, iterations) the run layer carries
//! out; the presenter prints mysqlslap's blocks (and `dbmeter slap` its
//! latency line in each).

use crate::CliError;
use crate::args;
use crate::help::{Example, Opt, Page, Section, flag, opt};
use crate::progress::Printer;
use dbmeter_benchmarks::Benchmark;
use dbmeter_benchmarks::registry;
use dbmeter_report::present::{Stream, TextOptions, for_layout};
use dbmeter_result::Layout;
use dbmeter_run::options::specs_for;
use dbmeter_run::{Request, StoreRequest};
use dbmeter_store::RunMeta;
use std::fmt::Write as _;
use std::io::Write as _;
use std::sync::Arc;

const SLAP_OPTIONS: &[Opt] = &[
    opt(
        "csv",
        "FILE",
        "mysqlslap's CSV line per block, appended to FILE (alone or -: stdout, no blocks)",
    )
    .bare(),
    flag("silent", "no report (errors only)"),
];

pub const PAGE: Page = Page {
    usage: &["slap [--option=value ...]"],
    about: &[
        "mysqlslap's test as dbmeter runs it, on MariaDB/MySQL, PostgreSQL and SQLite \
         (--db, or sysbench's --mysql-* and --pgsql-* options). With --auto-generate-sql \
         it makes table t1 (--number-int-cols, --number-char-cols, an id with \
         --auto-generate-sql-add-autoincrement or --auto-generate-sql-guid-primary) and \
         the queries of --auto-generate-sql-load-type; else it runs --create and --query \
         (files, or statements cut at --delimiter).",
        "For each --engine and each --concurrency level (1,8,32), --iterations times: the \
         schema (--create-schema) is dropped and created with the tables, --pre-query \
         runs, every client runs its statements (the query list once, or its share of \
         --number-of-queries), --post-query runs. Each iteration is one dbmeter run (its \
         clients are the run's users; --store keeps each). After the last iteration of a \
         level comes mysqlslap's `Benchmark` block (average, minimum and maximum seconds \
         to run all queries, clients, queries per client) with dbmeter's statement \
         latencies in it. --only-print prints the statements instead.",
        "`dbmeter mysqlslap` takes mysqlslap's own command line. docs/slap.md has the \
         option table and what differs from mysqlslap.",
    ],
    options: SLAP_OPTIONS,
    specs: dbmeter_benchmarks::slap::config::SPECS,
    general: true,
    sections: &[Section {
        title: "Other databases",
        body: &[
            "On PostgreSQL the schema is a schema (the clients' search_path); on SQLite \
             there is none and the tables the create statements name are dropped \
             instead. The generated SQL is made valid for each (INTEGER for INT(32), \
             CREATE INDEX for inline indexes, DEFAULT for the serial id, their uuid). \
             --engine applies to MariaDB/MySQL only.",
        ],
    }],
    examples: &[
        Example {
            what: "Generated mixed load, 1, 8 and 32 clients, 3 iterations",
            command: "slap --db=mysql://root@127.0.0.1/ --auto-generate-sql --concurrency=1,8,32 --iterations=3",
        },
        Example {
            what: "Your own statements, 50 clients, 1000 queries in all",
            command: "slap --db=postgres://localhost/bench --create=schema.sql --query=q.sql --delimiter=';' --concurrency=50 --number-of-queries=1000",
        },
    ],
    exit: "0 ok; 1 a step failed (the blocks before it are printed); 2 bad options; \
           130 interrupted by Ctrl-C (SIGINT), 143 stopped by SIGTERM.",
    ..Page::new(
        "slap",
        "mysqlslap's test: concurrency levels, iterations, its report",
    )
};

const MYSQLSLAP_OPTIONS: &[Opt] = &[
    flag("auto-generate-sql", "-a: generate the table and queries"),
    flag(
        "auto-generate-sql-add-autoincrement",
        "an AUTO_INCREMENT id",
    ),
    opt(
        "auto-generate-sql-execute-number",
        "N",
        "queries per client",
    ),
    flag("auto-generate-sql-guid-primary", "a GUID primary key"),
    opt(
        "auto-generate-sql-load-type",
        "TYPE",
        "mixed, update, write, key or read",
    )
    .default("mixed"),
    opt(
        "auto-generate-sql-secondary-indexes",
        "N",
        "unique varchar(36) columns",
    ),
    opt(
        "auto-generate-sql-unique-query-number",
        "N",
        "distinct queries",
    )
    .default("10"),
    opt(
        "auto-generate-sql-unique-write-number",
        "N",
        "distinct INSERTs",
    )
    .default("10"),
    opt(
        "auto-generate-sql-write-number",
        "N",
        "statements of the create step",
    )
    .default("100"),
    opt("commit", "N", "COMMIT every N statements"),
    opt("concurrency", "N,...", "-c: clients per level").default("1"),
    opt("create", "FILE|SQL", "the create statements"),
    opt("create-schema", "NAME", "the schema").default("mysqlslap"),
    opt("csv", "FILE", "CSV lines to FILE (alone: stdout)").bare(),
    opt("delimiter", "C", "-F: statement separator"),
    opt("detach", "N", "reconnect every N statements"),
    opt("engine", "E,...", "-e: storage engines, each in turn"),
    opt("host", "HOST", "-h: server host"),
    opt("init-command", "SQL", "run by each client on connecting"),
    opt("iterations", "N", "-i: runs per level").default("1"),
    flag("no-drop", "keep the schema"),
    opt("number-char-cols", "N[:1]", "-x: VARCHAR columns").default("1"),
    opt("number-int-cols", "N[:1]", "-y: INT columns").default("1"),
    opt("number-of-queries", "N", "queries of all clients"),
    flag("only-print", "print the statements, run nothing"),
    opt("password", "PW", "-p: password (alone: asked)").bare(),
    opt("port", "PORT", "-P: server port"),
    opt("post-query", "FILE|SQL", "after each iteration"),
    opt("pre-query", "FILE|SQL", "before each iteration"),
    opt("pre-system", "CMD", "shell command before each iteration"),
    opt("post-system", "CMD", "shell command after each iteration"),
    opt("protocol", "tcp|socket", "how to connect"),
    opt("query", "FILE|SQL", "-q: the clients' statements"),
    flag("silent", "-s: no report"),
    opt("socket", "PATH", "-S: Unix socket"),
    flag("ssl", "TLS to the server"),
    opt("ssl-ca", "FILE", "CA certificates (turns TLS on)"),
    opt("ssl-cert", "FILE", "client certificate (turns TLS on)"),
    opt("ssl-key", "FILE", "client key (turns TLS on)"),
    flag(
        "ssl-verify-server-cert",
        "check the server's certificate and name",
    ),
    opt("user", "USER", "-u: user name"),
    flag("verbose", "-v: accepted (from -vv on, dbmeter's notes)"),
    flag("version", "-V: dbmeter's version"),
    flag("help", "-?: this page"),
];

pub const MYSQLSLAP_PAGE: Page = Page {
    usage: &["mysqlslap [OPTIONS]"],
    about: &[
        "mysqlslap (MariaDB's mariadb-slap) as dbmeter runs it: its command line, read \
         as MariaDB's clients read theirs (-c8, -c 8, --concurrency=8, --concurrency 8, \
         unique prefixes, --skip-NAME), after the [mysqlslap] and [mariadb-slap] groups \
         of ~/.my.cnf (or --defaults-file; --no-defaults reads none). The server is \
         found as the mariadb client finds it: -h, -P, -S, -u, -p, --protocol, then \
         ~/.my.cnf's [client] groups and MYSQL_HOST, MYSQL_TCP_PORT, MYSQL_UNIX_PORT, \
         MYSQL_PWD.",
        "It runs what `dbmeter slap` runs and prints mysqlslap's report alone: a \
         `Benchmark` block per engine and concurrency level, or with --csv its CSV \
         lines; --only-print prints the statements. Errors are one line \
         (`mysqlslap: ...`).",
    ],
    options: MYSQLSLAP_OPTIONS,
    sections: &[Section {
        title: "Not taken",
        body: &[
            "-C (--compress), --plugin-dir, --default-auth, --debug, --ssl-capath, \
             --ssl-cipher, --ssl-crl, --ssl-crlpath, --tls-version: each is refused with \
             one line.",
        ],
    }],
    examples: &[Example {
        what: "The mysqlslap classic",
        command: "mysqlslap -h 127.0.0.1 -u root -a -c 1,50,100 -i 3 --number-of-queries=1000",
    }],
    exit: "0 ok; 1 a step failed; 2 bad options; 130 interrupted by Ctrl-C.",
    ..Page::new("mysqlslap", "mysqlslap's command line and report")
};

/// What is printed besides the blocks.
#[derive(Clone, Debug, Default)]
struct Output {
    /// `--csv`: a file, or "-" for stdout.
    csv: Option<String>,
    silent: bool,
    verbose: u8,
    /// dbmeter's latency line in each block.
    dbmeter: bool,
}

fn slap() -> Result<Arc<dyn Benchmark>, CliError> {
    registry::find("slap").ok_or_else(|| CliError::Failed("the slap benchmark is missing".into()))
}

/// `dbmeter slap ...`.
pub fn main(args: &[String]) -> Result<i32, CliError> {
    let mut out = Output {
        dbmeter: true,
        ..Output::default()
    };
    let mut rest = Vec::new();
    for a in args {
        match a.as_str() {
            "--csv" => out.csv = Some("-".into()),
            "--silent" => out.silent = true,
            _ => match a.strip_prefix("--csv=") {
                Some("") => out.csv = Some("-".into()),
                Some(v) => out.csv = Some(v.to_string()),
                None => rest.push(a.clone()),
            },
        }
    }
    let mut argv = vec!["run".to_string(), "slap".to_string()];
    argv.extend(super::store_option(rest));
    let inv = args::parse(&argv, specs_for)?;
    let tags = super::results::parse_tags(
        inv.given
            .iter()
            .filter(|(k, _)| k == "tag")
            .map(|(_, v)| v.as_str()),
    )?;
    let bench = slap()?;
    let values = args::values(&specs_for(Some(bench.as_ref())), &inv.given);
    for name in ["prometheus", "prometheus-linger"] {
        if values.given(name) {
            return Err(CliError::Usage(format!(
                "--{name}: dbmeter slap serves no live metrics; use --prometheus with `dbmeter run` or `dbmeter campaign run`"
            )));
        }
    }
    for name in ["format", "output", "assert", "junit"] {
        if values.given(name) {
            return Err(CliError::Usage(format!(
                "--{name}: dbmeter slap prints mysqlslap's report (--csv for its CSV lines); --store keeps each iteration's document"
            )));
        }
    }
    let store = (values.given("store") || !tags.is_empty()).then(|| StoreRequest {
        spec: values.str("store").to_string(),
        meta: RunMeta {
            tags,
            ..RunMeta::default()
        },
    });
    execute(
        Request {
            benchmark: bench,
            options: values,
            store,
            layout: Layout::Dbmeter,
            assertions: Vec::new(),
            slos: Vec::new(),
        },
        &out,
    )
}

/// Runs the request's sweep (or prints it) and the report.
fn execute(mut request: Request, out: &Output) -> Result<i32, CliError> {
    let only_print = request.options.bool("only-print");
    if only_print {
        let printer = Printer::for_load_on(Stream::Out);
        let r = dbmeter_run::command("print", &request, &printer);
        printer.finish();
        r?;
        return Ok(0);
    }
    let csv_stdout = out.csv.as_deref() == Some("-");
    let layout = Layout::Slap {
        dbmeter: out.dbmeter,
        silent: out.silent || out.csv.is_some(),
        csv: csv_stdout,
        verbose: out.verbose,
    };
    request.layout = layout;
    // A CSV file that cannot be written fails before any run.
    let mut csv_file = match out.csv.as_deref() {
        Some(path) if path != "-" => Some(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| CliError::Failed(format!("cannot write --csv {path}: {e}")))?,
        ),
        _ => None,
    };
    let printer = Printer::for_run(
        for_layout(
            layout,
            TextOptions {
                lines: Stream::Out,
                histogram: false,
            },
        ),
        false,
    );
    let stop = crate::signals::stop_handle();
    let outcomes = dbmeter_run::sweep(&request, &printer, &stop);
    let _ = printer.finish();
    let outcomes = outcomes?;
    let _ = std::io::stdout().flush();
    let docs: Vec<dbmeter_result::RunDocument> =
        outcomes.iter().map(|o| o.document.clone()).collect();
    if let Some(f) = csv_file.as_mut() {
        let mut text = String::new();
        for b in dbmeter_report::slap::blocks(&docs) {
            let _ = writeln!(text, "{}", b.csv());
        }
        f.write_all(text.as_bytes())
            .map_err(|e| CliError::Failed(format!("cannot write --csv: {e}")))?;
    }
    let mut stored_ok = true;
    let mut ids = Vec::new();
    let mut location = String::new();
    for o in &outcomes {
        match &o.stored {
            Some(Ok(s)) => {
                ids.push(s.id.to_string());
                location = s.location.to_string();
            }
            Some(Err(e)) => {
                eprintln!("dbmeter: {e}");
                stored_ok = false;
            }
            None => {}
        }
    }
    if !ids.is_empty() {
        eprintln!("stored as runs #{} in {location}", ids.join(", #"));
    }
    let Some(last) = docs.last() else {
        return Ok(0);
    };
    match last.end.reason.as_str() {
        "failed" => Err(CliError::Failed(
            last.end
                .error
                .as_deref()
                .unwrap_or("a run failed")
                .trim_end()
                .to_string(),
        )),
        "interrupted" => Ok(crate::signals::interrupted_code()),
        _ if !stored_ok => Ok(1),
        _ => Ok(0),
    }
}

/// `dbmeter mysqlslap ...`: errors end as one `mysqlslap: ` line.
pub fn mysqlslap_main(args: &[String]) -> Result<i32, CliError> {
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let r = translate(args, home.as_deref()).and_then(|asked| match asked {
        Asked::Print(text) => {
            print!("{text}");
            Ok(0)
        }
        Asked::Run { given, out } => {
            let bench = slap()?;
            let values = args::values(&specs_for(Some(bench.as_ref())), &given);
            execute(
                Request {
                    benchmark: bench,
                    options: values,
                    store: None,
                    layout: Layout::Dbmeter,
                    assertions: Vec::new(),
                    slos: Vec::new(),
                },
                &out,
            )
        }
    });
    match r {
        Ok(code) => Ok(code),
        Err(e) => {
            eprintln!("mysqlslap: {}", e.message());
            Ok(e.exit_code())
        }
    }
}

/// What a mysqlslap command line asks for.
#[derive(Debug)]
enum Asked {
    /// Help or the version.
    Print(String),
    Run {
        given: Vec<(String, String)>,
        out: Output,
    },
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Arg {
    None,
    Required,
    Optional,
}

/// mysqlslap's options: long name, short letter, argument.
const SPECS: &[(&str, Option<char>, Arg)] = &[
    ("auto-generate-sql", Some('a'), Arg::None),
    ("auto-generate-sql-add-autoincrement", None, Arg::None),
    ("auto-generate-sql-execute-number", None, Arg::Required),
    ("auto-generate-sql-guid-primary", None, Arg::None),
    ("auto-generate-sql-load-type", None, Arg::Required),
    ("auto-generate-sql-secondary-indexes", None, Arg::Required),
    ("auto-generate-sql-unique-query-number", None, Arg::Required),
    ("auto-generate-sql-unique-write-number", None, Arg::Required),
    ("auto-generate-sql-write-number", None, Arg::Required),
    ("character-sets-dir", None, Arg::Required),
    ("commit", None, Arg::Required),
    ("compress", Some('C'), Arg::None),
    ("concurrency", Some('c'), Arg::Required),
    ("create", None, Arg::Required),
    ("create-schema", None, Arg::Required),
    ("csv", None, Arg::Optional),
    ("debug", Some('#'), Arg::Optional),
    ("debug-check", None, Arg::None),
    ("debug-info", Some('T'), Arg::None),
    ("default_auth", None, Arg::Required),
    ("delimiter", Some('F'), Arg::Required),
    ("detach", None, Arg::Required),
    ("engine", Some('e'), Arg::Required),
    ("host", Some('h'), Arg::Required),
    ("init-command", None, Arg::Required),
    ("iterations", Some('i'), Arg::Required),
    ("no-drop", None, Arg::None),
    ("number-char-cols", Some('x'), Arg::Required),
    ("number-int-cols", Some('y'), Arg::Required),
    ("number-of-queries", None, Arg::Required),
    ("only-print", None, Arg::None),
    ("password", Some('p'), Arg::Optional),
    ("plugin_dir", None, Arg::Required),
    ("port", Some('P'), Arg::Required),
    ("post-query", None, Arg::Required),
    ("post-system", None, Arg::Required),
    ("pre-query", None, Arg::Required),
    ("pre-system", None, Arg::Required),
    ("protocol", None, Arg::Required),
    ("query", Some('q'), Arg::Required),
    ("silent", Some('s'), Arg::None),
    ("socket", Some('S'), Arg::Required),
    ("ssl", None, Arg::None),
    ("ssl-ca", None, Arg::Required),
    ("ssl-cert", None, Arg::Required),
    ("ssl-key", None, Arg::Required),
    ("ssl-verify-server-cert", None, Arg::None),
    ("ssl-capath", None, Arg::Required),
    ("ssl-cipher", None, Arg::Required),
    ("ssl-crl", None, Arg::Required),
    ("ssl-crlpath", None, Arg::Required),
    ("tls-version", None, Arg::Required),
    ("user", Some('u'), Arg::Required),
    ("verbose", Some('v'), Arg::None),
    ("version", Some('V'), Arg::None),
    ("help", Some('?'), Arg::None),
];

/// Options dbmeter does not take, and why.
fn refused(long: &str) -> Option<&'static str> {
    Some(match long {
        "compress" => "dbmeter's MariaDB client does not compress; leave out -C",
        "plugin_dir" | "default_auth" => "dbmeter authenticates with its own client's methods",
        "debug" | "debug-check" | "debug-info" | "character-sets-dir" => {
            "a libmysqlclient option dbmeter has no use for"
        }
        "ssl-capath" | "ssl-cipher" | "ssl-crl" | "ssl-crlpath" | "tls-version" => {
            "not taken; dbmeter's TLS takes --ssl, --ssl-ca, --ssl-cert, --ssl-key and --ssl-verify-server-cert"
        }
        _ => return None,
    })
}

fn usage(m: impl Into<String>) -> CliError {
    CliError::Usage(m.into())
}

/// The long name `name` stands for: itself, or the one option it is a
/// prefix of (dashes and underscores alike).
fn find_long(name: &str) -> Result<&'static (&'static str, Option<char>, Arg), CliError> {
    let norm = |s: &str| s.replace('_', "-");
    let n = norm(name);
    if let Some(s) = SPECS.iter().find(|s| norm(s.0) == n) {
        return Ok(s);
    }
    let found: Vec<_> = SPECS
        .iter()
        .filter(|s| !n.is_empty() && norm(s.0).starts_with(&n))
        .collect();
    match found.as_slice() {
        [one] => Ok(one),
        [] => Err(usage(format!("unknown option '--{name}'"))),
        more => Err(usage(format!(
            "ambiguous option '--{name}' ({})",
            more.iter().map(|s| s.0).collect::<Vec<_>>().join(", ")
        ))),
    }
}

/// The `[mysqlslap]` and `[mariadb-slap]` groups of an option file, as
/// `--key=value` arguments.
fn option_file_args(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_group = false;
    for line in text.lines() {
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') || l.starts_with(';') {
            continue;
        }
        if let Some(g) = l.strip_prefix('[').and_then(|g| g.strip_suffix(']')) {
            in_group = matches!(g.trim(), "mysqlslap" | "mariadb-slap");
            continue;
        }
        if !in_group {
            continue;
        }
        match l.split_once('=') {
            Some((k, v)) => {
                let v = v.trim();
                let v = v
                    .strip_prefix('"')
                    .and_then(|v| v.strip_suffix('"'))
                    .or_else(|| v.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
                    .unwrap_or(v);
                out.push(format!("--{}={v}", k.trim()));
            }
            None => out.push(format!("--{l}")),
        }
    }
    out
}

/// A flag's value: `--x`, `--x=1|0|on|off|true|false`.
fn flag_value(long: &str, v: Option<&str>) -> Result<bool, CliError> {
    match v.map(str::to_ascii_lowercase).as_deref() {
        None | Some("1" | "on" | "true") => Ok(true),
        Some("0" | "off" | "false") => Ok(false),
        Some(other) => Err(usage(format!(
            "option '--{long}' takes no value or 0/1, not '{other}'"
        ))),
    }
}

fn percent(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// Reads mysqlslap's command line (after the option file's groups) into
/// the `slap` benchmark's options and the output settings.
fn translate(args: &[String], home: Option<&std::path::Path>) -> Result<Asked, CliError> {
    let mut args: Vec<String> = args.to_vec();
    // The option file: --no-defaults and --defaults-file come first.
    let mut file: Option<std::path::PathBuf> = home.map(|h| h.join(".my.cnf"));
    let mut defaults_file = None;
    while let Some(first) = args.first() {
        if first == "--no-defaults" {
            file = None;
            defaults_file = Some("/dev/null".to_string());
        } else if let Some(f) = first.strip_prefix("--defaults-file=") {
            file = Some(f.into());
            defaults_file = Some(f.to_string());
        } else if first == "--print-defaults" {
            return Err(usage("--print-defaults is not taken"));
        } else {
            break;
        }
        args.remove(0);
    }
    if let Some(f) = &file
        && let Ok(text) = std::fs::read_to_string(f)
    {
        let mut all = option_file_args(&text);
        all.extend(args);
        args = all;
    } else if defaults_file.as_deref().is_some_and(|f| f != "/dev/null") {
        return Err(CliError::Failed(format!(
            "cannot read --defaults-file={}",
            defaults_file.as_deref().unwrap_or_default()
        )));
    }

    // (long name, value) as given, in order.
    let mut opts: Vec<(&'static str, Option<String>)> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].clone();
        i += 1;
        if let Some(body) = a.strip_prefix("--") {
            let (name, inline) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (body, None),
            };
            let name = name.strip_prefix("loose-").unwrap_or(name);
            // --skip-x, --disable-x, --enable-x for flags.
            let mut negated = None;
            for (p, neg) in [("skip-", true), ("disable-", true), ("enable-", false)] {
                if let Some(n) = name.strip_prefix(p)
                    && let Ok(s) = find_long(n)
                    && s.2 == Arg::None
                {
                    negated = Some((s, neg));
                }
            }
            if let Some((s, neg)) = negated {
                if inline.is_some() {
                    return Err(usage(format!("option '--{name}' takes no value")));
                }
                opts.push((s.0, Some(if neg { "0" } else { "1" }.into())));
                continue;
            }
            let s = find_long(name)?;
            let value = match (s.2, inline) {
                (Arg::Required, Some(v)) => Some(v),
                (Arg::Required, None) => match args.get(i) {
                    Some(v) => {
                        i += 1;
                        Some(v.clone())
                    }
                    None => return Err(usage(format!("option '--{}' requires an argument", s.0))),
                },
                (_, v) => v,
            };
            opts.push((s.0, value));
            continue;
        }
        let Some(cluster) = a.strip_prefix('-').filter(|c| !c.is_empty()) else {
            return Err(usage(format!(
                "'{a}': mysqlslap takes options only (a database is --create-schema)"
            )));
        };
        let chars: Vec<char> = cluster.chars().collect();
        let mut k = 0;
        while k < chars.len() {
            let c = chars[k];
            k += 1;
            let Some(s) = SPECS.iter().find(|s| s.1 == Some(c)) else {
                return Err(usage(format!("unknown option '-{c}'")));
            };
            match s.2 {
                Arg::None => opts.push((s.0, None)),
                Arg::Optional => {
                    let v: String = chars[k..].iter().collect();
                    opts.push((s.0, (!v.is_empty()).then_some(v)));
                    break;
                }
                Arg::Required => {
                    let v = if k < chars.len() {
                        chars[k..].iter().collect()
                    } else if let Some(v) = args.get(i) {
                        i += 1;
                        v.clone()
                    } else {
                        return Err(usage(format!("option '-{c}' requires an argument")));
                    };
                    opts.push((s.0, Some(v)));
                    break;
                }
            }
        }
    }

    let mut given: Vec<(String, String)> = Vec::new();
    let mut out = Output::default();
    let mut url: Vec<(String, String)> = Vec::new();
    let mut ask_password = false;
    let mut tls_mode: Option<&str> = None;
    for (long, value) in opts {
        if let Some(why) = refused(long) {
            return Err(usage(format!("--{long}: {why}")));
        }
        match long {
            "help" => {
                let width = crate::help::width();
                return Ok(Asked::Print(crate::help::pages::page_text(
                    &MYSQLSLAP_PAGE,
                    width,
                )));
            }
            "version" => {
                return Ok(Asked::Print(format!(
                    "mysqlslap (dbmeter {})\n",
                    super::VERSION
                )));
            }
            "verbose" => out.verbose = out.verbose.saturating_add(1),
            "silent" => out.silent = flag_value(long, value.as_deref())?,
            "csv" => {
                out.csv = Some(
                    value
                        .filter(|v| !v.is_empty())
                        .unwrap_or_else(|| "-".into()),
                )
            }
            "host" | "port" | "socket" | "user" | "protocol" => {
                url.retain(|(k, _)| k != long);
                url.push((long.to_string(), value.unwrap_or_default()));
            }
            "ssl" => {
                let mode = if flag_value(long, value.as_deref())? {
                    "required"
                } else {
                    "disabled"
                };
                tls_mode.get_or_insert(mode);
            }
            "ssl-verify-server-cert" => {
                if flag_value(long, value.as_deref())? {
                    tls_mode = Some("verify-full");
                }
            }
            "ssl-ca" | "ssl-cert" | "ssl-key" => {
                // Each of them turns TLS on, as in MariaDB's clients.
                tls_mode.get_or_insert("required");
                url.retain(|(k, _)| k != long);
                url.push((long.to_string(), value.unwrap_or_default()));
            }
            "password" => match value {
                Some(v) => {
                    url.retain(|(k, _)| k != "password");
                    url.push(("password".into(), v));
                    ask_password = false;
                }
                None => ask_password = true,
            },
            _ => {
                let v = match SPECS.iter().find(|s| s.0 == long).map(|s| s.2) {
                    Some(Arg::None) => {
                        if flag_value(long, value.as_deref())? {
                            "on".to_string()
                        } else {
                            "off".to_string()
                        }
                    }
                    _ => value.unwrap_or_default(),
                };
                given.retain(|(k, _)| k != long);
                given.push((long.to_string(), v));
            }
        }
    }
    if let Some(m) = tls_mode {
        url.push(("ssl-mode".into(), m.into()));
    }
    if let Some(f) = defaults_file {
        url.push(("defaults-file".into(), f));
    }
    let query: Vec<String> = url
        .iter()
        .map(|(k, v)| format!("{}={}", percent(k), percent(v)))
        .collect();
    let db = if query.is_empty() {
        "mysql://".to_string()
    } else {
        format!("mysql://?{}", query.join("&"))
    };
    given.push(("db".into(), db));
    if ask_password {
        given.push(("ask-password".into(), "on".into()));
    }
    Ok(Asked::Run { given, out })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn run(s: &str) -> (Vec<(String, String)>, Output) {
        match translate(&args(s), None) {
            Ok(Asked::Run { given, out }) => (given, out),
            other => panic!("{s}: {other:?}"),
        }
    }

    fn get<'a>(g: &'a [(String, String)], k: &str) -> Option<&'a str> {
        g.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str())
    }

    #[test]
    fn short_long_attached_and_next() {
        let (g, out) =
            run("-a -c8 -i 2 --number-of-queries 100 --auto-generate-sql-load=write -vv --csv");
        assert_eq!(get(&g, "auto-generate-sql"), Some("on"));
        assert_eq!(get(&g, "concurrency"), Some("8"));
        assert_eq!(get(&g, "iterations"), Some("2"));
        assert_eq!(get(&g, "number-of-queries"), Some("100"));
        assert_eq!(get(&g, "auto-generate-sql-load-type"), Some("write"));
        assert_eq!(out.verbose, 2);
        assert_eq!(out.csv.as_deref(), Some("-"));
        let (g, _) = run("-h 127.0.0.1 -P 3307 -u root -psecret --skip-no-drop");
        assert_eq!(
            get(&g, "db"),
            Some("mysql://?host=127.0.0.1&port=3307&user=root&password=secret")
        );
        assert_eq!(get(&g, "no-drop"), Some("off"));
        let (g, _) = run("-h db1 --ssl-ca=/ca.pem");
        assert_eq!(
            get(&g, "db"),
            Some("mysql://?host=db1&ssl-ca=/ca.pem&ssl-mode=required")
        );
        let (g, _) = run("--ssl --ssl-verify-server-cert");
        assert_eq!(get(&g, "db"), Some("mysql://?ssl-mode=verify-full"));
        let (g, _) = run("--skip-ssl");
        assert_eq!(get(&g, "db"), Some("mysql://?ssl-mode=disabled"));
    }

    #[test]
    fn option_file_groups_come_first() {
        let text =
            "[client]\nuser=x\n[mysqlslap]\nconcurrency=4\nauto-generate-sql\n[mysqld]\nport=1\n";
        assert_eq!(
            option_file_args(text),
            vec!["--concurrency=4", "--auto-generate-sql"]
        );
    }

    #[test]
    fn bad_command_lines_are_one_line() {
        for bad in [
            "--nope",
            "-Z",
            "-c",
            "--auto",
            "-C",
            "--plugin_dir=/x",
            "extra",
        ] {
            let e = translate(&args(bad), None).unwrap_err();
            assert!(!e.message().contains('\n'), "{bad}: {e:?}");
            assert_eq!(e.exit_code(), 2, "{bad}");
        }
    }
}
