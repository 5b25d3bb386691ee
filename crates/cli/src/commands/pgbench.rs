//! `dbmeter pgbench [OPTION]... [DBNAME]`: pgbench 15's command line,
//! read as pgbench reads it (short options clustered or with their values
//! attached, long options and their unambiguous prefixes, the database
//! name last, libpq's PG* variables), turned into the request `run
//! pgbench` or `prepare pgbench` makes, and printed in pgbench's layout:
//! its header and progress lines, its report, and dbmeter's percentiles.
//! Bad options end with one line and exit code 1, as pgbench's do.

use crate::CliError;
use crate::help::{Example, Opt, Page, Section, flag, opt};
use crate::progress::Printer;
use dbmeter_benchmarks::Benchmark;
use dbmeter_benchmarks::pgbench::{BUILTINS, find_builtin};
use dbmeter_benchmarks::registry;
use dbmeter_result::Layout;
use dbmeter_run::Request;
use dbmeter_run::options::specs_for;
use std::fmt::Write as _;
use std::sync::Arc;

const OPTIONS: &[Opt] = &[
    flag(
        "initialize",
        "-i: create and fill pgbench's tables (prepare)",
    ),
    opt("init-steps", "[dtgGvpf]+", "-I: the steps of -i").default("dtgvp"),
    opt("fillfactor", "NUM", "-F: fill factor of the tables (-i)"),
    flag("no-vacuum", "-n: no vacuum, in -i and before a run"),
    flag("quiet", "-q: accepted (-i prints no per-row lines)"),
    opt("scale", "NUM", "-s: scale factor (-i; a run's :scale)"),
    flag("foreign-keys", "foreign keys between the tables (-i)"),
    flag("unlogged-tables", "unlogged tables (-i)"),
    opt("builtin", "NAME[@W]", "-b: a built-in script (-b list)"),
    opt("file", "FILE[@W]", "-f: a script file"),
    flag("skip-some-updates", "-N: as -b simple-update"),
    flag("select-only", "-S: as -b select-only"),
    opt("client", "NUM", "-c: clients, each a connection").default("1"),
    flag("connect", "-C: a new connection per transaction"),
    opt("define", "NAME=VALUE", "-D: a variable for the scripts"),
    opt(
        "jobs",
        "NUM",
        "-j: threads that run the clients (default 1)",
    ),
    flag("log", "-l: per-transaction log, pgbench_log.PID[.N]"),
    opt(
        "latency-limit",
        "MS",
        "-L: late limit; with -R, skip the late",
    ),
    opt("protocol", "MODE", "-M: simple, extended or prepared").default("simple"),
    opt("progress", "SEC", "-P: a progress line every SEC seconds"),
    flag("report-per-command", "-r: statement latencies and failures"),
    opt("rate", "TPS", "-R: target rate (Poisson arrivals)"),
    opt("transactions", "NUM", "-t: transactions per client").default("10"),
    opt("time", "SEC", "-T: run for SEC seconds"),
    flag("vacuum-all", "-v: vacuum all four tables first"),
    opt("aggregate-interval", "SEC", "-l: a line per SEC seconds"),
    flag("failures-detailed", "failures by kind"),
    opt("log-prefix", "PREFIX", "-l: file name prefix").default("pgbench_log"),
    opt("max-tries", "NUM", "tries of a failed transaction").default("1"),
    flag("progress-timestamp", "-P lines with the Unix time"),
    opt("random-seed", "SEED", "time, rand or a number"),
    opt("sampling-rate", "NUM", "-l: the share of lines written"),
    opt("show-script", "NAME", "print a built-in script"),
    opt("host", "HOST", "-h: server host or socket directory"),
    opt("port", "PORT", "-p: server port"),
    opt("username", "USER", "-U: user name"),
    flag("version", "-V: dbmeter's version"),
    flag("help", "-?: this page"),
];

pub const PAGE: Page = Page {
    usage: &[
        "pgbench [OPTION]... [DBNAME]",
        "pgbench -i [OPTION]... [DBNAME]",
    ],
    about: &[
        "Takes pgbench 15's command line and runs it as `dbmeter run pgbench` (or, with \
         -i, `dbmeter prepare pgbench`) does, against a PostgreSQL server found as libpq \
         finds it: -h, -p, -U, DBNAME (a name, a postgres:// URI or key=value pairs), \
         then PGHOST, PGPORT, PGUSER, PGDATABASE, PGPASSWORD, ~/.pgpass and the \
         service file.",
        "It prints what pgbench prints: its first line (naming dbmeter and the server), \
         `starting vacuum...end.`, -P's progress lines (on standard error), the report \
         (`tps = ` and `latency average = ` as pgbench writes them, -r's statement \
         latencies), then a line of dbmeter's latency percentiles. -l writes pgbench's \
         log files. Options take pgbench's forms: -c4, -c 4, --client=4, -nS.",
        "Every client has its own thread and connection, so -j changes nothing but the \
         number of -l files. Refused with one line: -d, --index-tablespace, \
         --tablespace, --partitions, --partition-method, --verbose-errors. \
         `dbmeter help run pgbench` lists the benchmark's own options.",
    ],
    options: OPTIONS,
    sections: &[Section {
        title: "Differences from pgbench",
        body: &[
            "No `initial connection time` line. `latency average` is the mean of the \
             completed transactions (pgbench's, without -P, -R or -L, is derived from \
             the duration); `latency stddev` is always printed. --aggregate-interval \
             also writes the last, partial interval. docs/pgbench.md says more.",
        ],
    }],
    examples: &[
        Example {
            what: "Create the tables at scale 10",
            command: "pgbench -i -s 10 -h 127.0.0.1 -U postgres bench",
        },
        Example {
            what: "Select-only, 16 clients, prepared statements, a minute",
            command: "pgbench -S -M prepared -c 16 -T 60 -P 5 bench",
        },
    ],
    exit: "0 ok; 1 bad options, or the server could not be reached; 2 the run \
           stopped on an error (the report shows what was measured); 130 \
           interrupted by Ctrl-C (SIGINT), 143 stopped by SIGTERM.",
    ..Page::new("pgbench", "pgbench's command line, report and logs")
};

/// One of pgbench's options.
struct Spec {
    long: &'static str,
    short: Option<char>,
    /// It takes a value.
    value: bool,
}

const fn s(long: &'static str, short: char, value: bool) -> Spec {
    Spec {
        long,
        short: Some(short),
        value,
    }
}

const fn l(long: &'static str, value: bool) -> Spec {
    Spec {
        long,
        short: None,
        value,
    }
}

/// pgbench 15's options.
const SPECS: &[Spec] = &[
    s("builtin", 'b', true),
    s("client", 'c', true),
    s("connect", 'C', false),
    s("debug", 'd', false),
    s("define", 'D', true),
    s("file", 'f', true),
    s("fillfactor", 'F', true),
    s("host", 'h', true),
    s("initialize", 'i', false),
    s("init-steps", 'I', true),
    s("jobs", 'j', true),
    s("log", 'l', false),
    s("latency-limit", 'L', true),
    s("no-vacuum", 'n', false),
    s("port", 'p', true),
    s("progress", 'P', true),
    s("protocol", 'M', true),
    s("quiet", 'q', false),
    s("report-per-command", 'r', false),
    l("report-latencies", false),
    s("rate", 'R', true),
    s("scale", 's', true),
    s("select-only", 'S', false),
    s("skip-some-updates", 'N', false),
    s("time", 'T', true),
    s("transactions", 't', true),
    s("username", 'U', true),
    s("vacuum-all", 'v', false),
    s("version", 'V', false),
    s("help", '?', false),
    l("aggregate-interval", true),
    l("failures-detailed", false),
    l("foreign-keys", false),
    l("index-tablespace", true),
    l("log-prefix", true),
    l("max-tries", true),
    l("partition-method", true),
    l("partitions", true),
    l("progress-timestamp", false),
    l("random-seed", true),
    l("sampling-rate", true),
    l("show-script", true),
    l("tablespace", true),
    l("unlogged-tables", false),
    l("verbose-errors", false),
];

/// Options only `-i` takes, and options only a run takes.
const INIT_ONLY: &[&str] = &[
    "init-steps",
    "fillfactor",
    "quiet",
    "foreign-keys",
    "unlogged-tables",
    "index-tablespace",
    "tablespace",
    "partitions",
    "partition-method",
];
const RUN_ONLY: &[&str] = &[
    "builtin",
    "file",
    "skip-some-updates",
    "select-only",
    "client",
    "connect",
    "define",
    "jobs",
    "log",
    "latency-limit",
    "protocol",
    "progress",
    "report-per-command",
    "report-latencies",
    "rate",
    "transactions",
    "time",
    "vacuum-all",
    "aggregate-interval",
    "failures-detailed",
    "log-prefix",
    "max-tries",
    "progress-timestamp",
    "sampling-rate",
    "verbose-errors",
];

/// What dbmeter does not do, and why, for the one-line refusal.
const REFUSED: &[(&str, &str)] = &[
    (
        "debug",
        "dbmeter has no debug output of the client protocol",
    ),
    (
        "index-tablespace",
        "prepare creates the indexes in the default tablespace",
    ),
    (
        "tablespace",
        "prepare creates the tables in the default tablespace",
    ),
    ("partitions", "prepare does not partition pgbench_accounts"),
    (
        "partition-method",
        "prepare does not partition pgbench_accounts",
    ),
    (
        "verbose-errors",
        "failures are counted (-r shows them per statement), their messages are not printed",
    ),
];

fn bad(m: impl Into<String>) -> CliError {
    CliError::Failed(m.into())
}

/// How a user names an option in messages: `-c/--client` or `--max-tries`.
fn shown(spec: &Spec) -> String {
    match spec.short {
        Some(c) => format!("-{c}/--{}", spec.long),
        None => format!("--{}", spec.long),
    }
}

fn spec(long: &str) -> &'static Spec {
    SPECS.iter().find(|s| s.long == long).unwrap_or(&SPECS[0])
}

/// Options by long name, with their values (empty for a flag), in order.
type Given = Vec<(&'static str, String)>;

/// The command line split as pgbench's getopt_long splits it: the
/// options, and the other words.
fn split(args: &[String]) -> Result<(Given, Vec<String>), CliError> {
    let mut opts = Vec::new();
    let mut words = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if a == "--" {
            words.extend(args[i..].iter().cloned());
            break;
        }
        if let Some(body) = a.strip_prefix("--") {
            let (name, inline) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (body, None),
            };
            let exact = SPECS.iter().find(|s| s.long == name);
            let sp = match exact {
                Some(s) => s,
                None => {
                    let found: Vec<&'static Spec> = SPECS
                        .iter()
                        .filter(|s| !name.is_empty() && s.long.starts_with(name))
                        .collect();
                    match found.as_slice() {
                        [one] => *one,
                        [] => return Err(bad(format!("unrecognized option '--{name}'"))),
                        _ => return Err(bad(format!("option '--{name}' is ambiguous"))),
                    }
                }
            };
            let value = match (sp.value, inline) {
                (true, Some(v)) => v,
                (true, None) => match args.get(i) {
                    Some(v) => {
                        i += 1;
                        v.clone()
                    }
                    None => {
                        return Err(bad(format!("option '--{}' requires an argument", sp.long)));
                    }
                },
                (false, Some(_)) => {
                    return Err(bad(format!(
                        "option '--{}' doesn't allow an argument",
                        sp.long
                    )));
                }
                (false, None) => String::new(),
            };
            opts.push((sp.long, value));
            continue;
        }
        let Some(cluster) = a.strip_prefix('-').filter(|c| !c.is_empty()) else {
            words.push(a.clone());
            continue;
        };
        let chars: Vec<char> = cluster.chars().collect();
        let mut k = 0;
        while k < chars.len() {
            let c = chars[k];
            k += 1;
            let Some(sp) = SPECS.iter().find(|s| s.short == Some(c)) else {
                return Err(bad(format!("invalid option -- '{c}'")));
            };
            if !sp.value {
                opts.push((sp.long, String::new()));
                continue;
            }
            let value = if k < chars.len() {
                chars[k..].iter().collect()
            } else if let Some(v) = args.get(i) {
                i += 1;
                v.clone()
            } else {
                return Err(bad(format!("option requires an argument -- '{c}'")));
            };
            opts.push((sp.long, value));
            break;
        }
    }
    Ok((opts, words))
}

/// An integer option's value within `lo..=hi`, with pgbench's messages.
fn int(long: &str, v: &str, lo: i64, hi: i64) -> Result<i64, CliError> {
    let sp = spec(long);
    let n: i64 = v
        .trim()
        .parse()
        .map_err(|_| bad(format!("invalid value \"{v}\" for option {}", shown(sp))))?;
    if !(lo..=hi).contains(&n) {
        return Err(bad(format!("{} must be in range {lo}..{hi}", shown(sp))));
    }
    Ok(n)
}

/// A number above 0 (at most `max`).
fn positive(long: &str, v: &str, max: f64) -> Result<f64, CliError> {
    let x: f64 = v
        .trim()
        .parse()
        .ok()
        .filter(|x: &f64| x.is_finite() && *x > 0.0 && *x <= max)
        .ok_or_else(|| {
            bad(format!(
                "invalid value \"{v}\" for option {}",
                shown(spec(long))
            ))
        })?;
    Ok(x)
}

/// An item of a comma-separated list option: its commas and backslashes
/// escaped (the benchmark reads `\,` and `\\`).
fn item(v: &str) -> String {
    v.replace('\\', "\\\\").replace(',', "\\,")
}

/// `postgres://` with the connection settings as its parameters, each
/// percent-encoded: what is not given is looked up as libpq does.
fn target_url(
    host: Option<&str>,
    port: Option<&str>,
    user: Option<&str>,
    dbname: Option<&str>,
) -> Result<String, CliError> {
    fn enc(s: &str) -> String {
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
    let mut params: Vec<(String, String)> = Vec::new();
    let mut base = "postgres://".to_string();
    match dbname {
        Some(d) if d.starts_with("postgres://") || d.starts_with("postgresql://") => {
            base = d.to_string();
        }
        Some(d) if d.contains('=') => params.extend(conninfo_pairs(d)?),
        Some(d) => params.push(("dbname".into(), d.to_string())),
        None => {}
    }
    for (k, v) in [("host", host), ("port", port), ("user", user)] {
        if let Some(v) = v.filter(|v| !v.is_empty()) {
            params.push((k.into(), v.to_string()));
        }
    }
    let query: Vec<String> = params
        .iter()
        .map(|(k, v)| format!("{}={}", enc(k), enc(v)))
        .collect();
    if query.is_empty() {
        return Ok(base);
    }
    let sep = if base.contains('?') { '&' } else { '?' };
    Ok(format!("{base}{sep}{}", query.join("&")))
}

/// libpq's `key=value key='a value'` connection string.
fn conninfo_pairs(s: &str) -> Result<Vec<(String, String)>, CliError> {
    let mut out = Vec::new();
    let mut chars = s.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.peek().is_none() {
            return Ok(out);
        }
        let mut key = String::new();
        while let Some(c) = chars.next_if(|c| *c != '=' && !c.is_whitespace()) {
            key.push(c);
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.next() != Some('=') {
            return Err(bad(format!(
                "invalid connection string: missing \"=\" after \"{key}\""
            )));
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let mut value = String::new();
        if chars.next_if_eq(&'\'').is_some() {
            loop {
                match chars.next() {
                    Some('\\') => value.extend(chars.next()),
                    Some('\'') => break,
                    Some(c) => value.push(c),
                    None => {
                        return Err(bad("invalid connection string: unterminated quoted string"));
                    }
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                if c == '\\' {
                    value.extend(chars.next());
                } else {
                    value.push(c);
                }
            }
        }
        out.push((key, value));
    }
}

/// `-b list`: pgbench's list of built-in scripts.
fn builtin_list() -> String {
    let mut t = String::from("Available builtin scripts:\n");
    for b in BUILTINS {
        let _ = writeln!(t, "{:>15}: {}", b.name, b.description);
    }
    t
}

/// What the command line asks for.
enum Asked {
    /// A message and exit code 0 (help, version, lists).
    Print { stdout: bool, text: String },
    /// A benchmark command: `prepare` or `run`, with its options.
    Command {
        verb: &'static str,
        given: Vec<(String, String)>,
    },
}

fn parse(args: &[String]) -> Result<Asked, CliError> {
    let (opts, words) = split(args)?;
    let has = |name: &str| opts.iter().any(|(n, _)| *n == name);
    let last = |name: &str| {
        opts.iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    };
    if has("help") {
        let text = crate::help::pages::page_text(&PAGE, crate::help::width());
        return Ok(Asked::Print { stdout: true, text });
    }
    if has("version") {
        return Ok(Asked::Print {
            stdout: true,
            text: format!(
                "pgbench (dbmeter) {} (pgbench 15's options)\n",
                super::VERSION
            ),
        });
    }
    if let Some(name) = last("show-script") {
        let b =
            find_builtin(name).map_err(|e| bad(format!("{e}\n{}", builtin_list().trim_end())))?;
        return Ok(Asked::Print {
            stdout: false,
            text: format!("-- {}: {}\n{}", b.name, b.description, b.text),
        });
    }
    if opts.iter().any(|(n, v)| *n == "builtin" && v == "list") {
        return Ok(Asked::Print {
            stdout: false,
            text: builtin_list(),
        });
    }
    for (name, why) in REFUSED {
        if has(name) {
            return Err(bad(format!(
                "{} is not supported by dbmeter pgbench: {why}",
                shown(spec(name))
            )));
        }
    }
    if words.len() > 1 {
        return Err(bad(format!(
            "too many command-line arguments (first is \"{}\")",
            words[1]
        )));
    }
    let init = has("initialize");
    if init && opts.iter().any(|(n, _)| RUN_ONLY.contains(n)) {
        return Err(bad(
            "some of the specified options cannot be used in initialization (-i) mode",
        ));
    }
    if !init && opts.iter().any(|(n, _)| INIT_ONLY.contains(n)) {
        return Err(bad(
            "some of the specified options cannot be used in benchmarking mode",
        ));
    }
    let db = target_url(
        last("host"),
        last("port"),
        last("username"),
        words.first().map(String::as_str),
    )?;
    let mut given: Vec<(String, String)> = vec![("db".into(), db)];
    let mut set = |k: &str, v: String| given.push((k.to_string(), v));
    if let Some(p) = last("port")
        && p.parse::<u16>().is_err()
    {
        return Err(bad(format!("invalid port number: \"{p}\"")));
    }
    if let Some(v) = last("scale") {
        set("scale", int("scale", v, 1, i32::MAX as i64)?.to_string());
    }
    if has("no-vacuum") {
        set("no-vacuum", "on".into());
    }
    if init {
        if let Some(v) = last("fillfactor") {
            set("fillfactor", int("fillfactor", v, 10, 100)?.to_string());
        }
        if let Some(v) = last("init-steps") {
            set("init-steps", v.to_string());
        }
        if has("foreign-keys") {
            set("foreign-keys", "on".into());
        }
        if has("unlogged-tables") {
            set("unlogged-tables", "on".into());
        }
        return Ok(Asked::Command {
            verb: "prepare",
            given,
        });
    }
    let clients = match last("client") {
        Some(v) => int("client", v, 1, i32::MAX as i64)?,
        None => 1,
    };
    set("threads", clients.to_string());
    if let Some(v) = last("jobs") {
        set("jobs", int("jobs", v, 1, i32::MAX as i64)?.to_string());
    }
    match (last("transactions"), last("time")) {
        (Some(_), Some(_)) => {
            return Err(bad(
                "specify either a number of transactions (-t) or a duration (-T), not both",
            ));
        }
        (Some(t), None) => set(
            "transactions",
            int("transactions", t, 1, i32::MAX as i64)?.to_string(),
        ),
        (None, Some(t)) => set("time", int("time", t, 1, i32::MAX as i64)?.to_string()),
        (None, None) => set("transactions", "10".into()),
    }
    if let Some(v) = last("rate") {
        set("rate", positive("rate", v, 1e9)?.to_string());
    }
    if let Some(v) = last("latency-limit") {
        set(
            "latency-limit",
            positive("latency-limit", v, 1e12)?.to_string(),
        );
    }
    if let Some(v) = last("progress") {
        set(
            "report-interval",
            int("progress", v, 1, i32::MAX as i64)?.to_string(),
        );
    }
    if let Some(v) = last("protocol") {
        if !["simple", "extended", "prepared"].contains(&v) {
            return Err(bad(format!("invalid query mode (-M): \"{v}\"")));
        }
        set("protocol", v.to_string());
    }
    let per_command = has("report-per-command") || has("report-latencies");
    set(
        "report-per-command",
        if per_command { "on" } else { "off" }.into(),
    );
    let log = has("log");
    if log {
        set("log", "on".into());
    }
    if has("log-prefix") && !log {
        return Err(bad(
            "log file prefix (--log-prefix) is allowed only when logging transactions (-l)",
        ));
    }
    if let Some(v) = last("log-prefix") {
        set("log-prefix", v.to_string());
    }
    if let Some(v) = last("aggregate-interval") {
        if !log {
            return Err(bad(
                "log aggregation is allowed only when actually logging transactions",
            ));
        }
        set(
            "aggregate-interval",
            int("aggregate-interval", v, 1, i32::MAX as i64)?.to_string(),
        );
    }
    if let Some(v) = last("sampling-rate") {
        if !log {
            return Err(bad(
                "log sampling (--sampling-rate) is allowed only when logging transactions (-l)",
            ));
        }
        if has("aggregate-interval") {
            return Err(bad(
                "log sampling (--sampling-rate) and aggregation (--aggregate-interval) cannot be used at the same time",
            ));
        }
        set(
            "sampling-rate",
            positive("sampling-rate", v, 1.0)?.to_string(),
        );
    }
    if let Some(v) = last("max-tries") {
        let n = int("max-tries", v, 0, i32::MAX as i64)?;
        if n == 0 && !has("latency-limit") && !has("time") {
            return Err(bad(
                "an unlimited number of transaction tries can only be used with --latency-limit or a duration (-T)",
            ));
        }
        set("max-tries", n.to_string());
    }
    if let Some(v) = last("random-seed") {
        match v {
            // A seed from the clock: the run's own.
            "time" | "rand" => {}
            v => match v.parse::<u64>() {
                Ok(n) => set("random-seed", n.to_string()),
                Err(_) => {
                    return Err(bad(format!(
                        "unrecognized random seed option \"{v}\": expected \"time\", \"rand\" or an unsigned integer"
                    )));
                }
            },
        }
    }
    for (flag, name) in [
        ("failures-detailed", "failures-detailed"),
        ("progress-timestamp", "progress-timestamp"),
        ("vacuum-all", "vacuum-all"),
        ("connect", "connect"),
    ] {
        if has(flag) {
            set(name, "on".into());
        }
    }
    // Scripts in the order given, built-in ones among the files.
    let mut scripts = Vec::new();
    let mut defines = Vec::new();
    for (name, v) in &opts {
        match *name {
            "builtin" => scripts.push(item(&format!("builtin:{v}"))),
            "select-only" => scripts.push("builtin:select-only".into()),
            "skip-some-updates" => scripts.push("builtin:simple-update".into()),
            "file" => scripts.push(item(v)),
            "define" => {
                if !v.contains('=') {
                    return Err(bad(format!("invalid variable definition: \"{v}\"")));
                }
                defines.push(item(v));
            }
            _ => {}
        }
    }
    if !scripts.is_empty() {
        set("file", scripts.join(","));
    }
    if !defines.is_empty() {
        set("define", defines.join(","));
    }
    Ok(Asked::Command { verb: "run", given })
}

pub fn main(args: &[String]) -> Result<i32, CliError> {
    let (verb, given) = match parse(args)? {
        Asked::Print { stdout, text } => {
            if stdout {
                print!("{text}");
            } else {
                eprint!("{text}");
            }
            return Ok(0);
        }
        Asked::Command { verb, given } => (verb, given),
    };
    let bench: Arc<dyn Benchmark> = registry::find("pgbench")
        .ok_or_else(|| CliError::Failed("the pgbench benchmark is missing".into()))?;
    let specs = specs_for(Some(bench.as_ref()));
    let progress_timestamp = given.iter().any(|(k, v)| {
        k == "progress-timestamp" && dbmeter_benchmarks::options::parse_bool(v) == Some(true)
    });
    let given: Vec<(String, String)> = given
        .into_iter()
        .filter(|(k, _)| k != "progress-timestamp")
        .collect();
    let request = Request {
        benchmark: bench,
        options: crate::args::values(&specs, &given),
        store: None,
        layout: Layout::Pgbench { progress_timestamp },
    };
    // pgbench ends with 1 for what is wrong before a run.
    let failed = |e: dbmeter_run::RunError| CliError::Failed(e.to_string());
    if verb == "prepare" {
        let printer = Printer::for_load();
        let r = dbmeter_run::command("prepare", &request, &printer);
        let _ = printer.finish();
        r.map_err(failed)?;
        return Ok(0);
    }
    // pgbench's layout: the header and report on stdout, the rest on
    // stderr; the report ends with dbmeter's latency percentiles.
    let printer = Printer::for_run(
        dbmeter_report::present::for_layout(
            request.layout,
            dbmeter_report::present::TextOptions {
                lines: dbmeter_report::present::Stream::Err,
                histogram: false,
            },
        ),
        false,
    );
    let stop = crate::signals::stop_handle();
    let outcome = dbmeter_run::run(&request, &printer, &stop).map_err(failed)?;
    let _ = printer.finish();
    let doc = &outcome.document;
    use std::io::Write as _;
    let _ = std::io::stdout().flush();
    match doc.end.reason.as_str() {
        "failed" => {
            eprintln!(
                "dbmeter: error: {}",
                doc.end.error.as_deref().unwrap_or("the run failed")
            );
            eprintln!("Run was aborted; the above results are incomplete.");
            Ok(2)
        }
        "interrupted" => Ok(crate::signals::interrupted_code()),
        _ => Ok(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    fn given(s: &str) -> Vec<(String, String)> {
        match parse(&args(s)) {
            Ok(Asked::Command { given, .. }) => given,
            Ok(Asked::Print { text, .. }) => panic!("printed {text}"),
            Err(e) => panic!("{e}"),
        }
    }

    fn get<'a>(g: &'a [(String, String)], k: &str) -> Option<&'a str> {
        g.iter()
            .rev()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.as_str())
    }

    #[test]
    fn short_long_attached_and_clustered_forms() {
        for line in [
            "-c4 -T60 -nS bench",
            "-c 4 -T 60 -n -S bench",
            "--client=4 --time 60 --no-vacuum --select-only bench",
            "--cl=4 --ti=60 -n --select bench",
            "bench -c 4 -T 60 -Sn",
        ] {
            let g = given(line);
            assert_eq!(get(&g, "threads"), Some("4"), "{line}");
            assert_eq!(get(&g, "time"), Some("60"), "{line}");
            assert_eq!(get(&g, "no-vacuum"), Some("on"), "{line}");
            assert_eq!(get(&g, "file"), Some("builtin:select-only"), "{line}");
            assert_eq!(get(&g, "db"), Some("postgres://?dbname=bench"), "{line}");
        }
        // Neither -t nor -T: pgbench's 10 transactions per client.
        assert_eq!(get(&given(""), "transactions"), Some("10"));
    }

    #[test]
    fn scripts_keep_their_order_and_values_their_commas() {
        let g = given("-b simple@2 -f a,b.sql@3 -S -D x=1,2 -D y=a\\b");
        assert_eq!(
            get(&g, "file"),
            Some("builtin:simple@2,a\\,b.sql@3,builtin:select-only")
        );
        assert_eq!(get(&g, "define"), Some("x=1\\,2,y=a\\\\b"));
    }

    #[test]
    fn connection_settings() {
        let g = given("-h db1 -p 5433 -U bob shop");
        assert_eq!(
            get(&g, "db"),
            Some("postgres://?dbname=shop&host=db1&port=5433&user=bob")
        );
        let g = given("postgres://a@b/c");
        assert_eq!(get(&g, "db"), Some("postgres://a@b/c"));
        let g = match parse(&["-U".into(), "x".into(), "host='h 1' dbname=d".into()]) {
            Ok(Asked::Command { given, .. }) => given,
            _ => panic!("not a run"),
        };
        assert_eq!(
            get(&g, "db"),
            Some("postgres://?host=h%201&dbname=d&user=x")
        );
    }

    #[test]
    fn bad_options_are_one_line() {
        for (line, want) in [
            ("-c x", "invalid value \"x\" for option -c/--client"),
            ("-c 0", "-c/--client must be in range 1..2147483647"),
            ("--bogus", "unrecognized option '--bogus'"),
            ("-c", "option requires an argument -- 'c'"),
            ("-x", "invalid option -- 'x'"),
            ("--p=1", "ambiguous"),
            ("-t 5 -T 5", "not both"),
            ("-i -c 2", "initialization (-i) mode"),
            ("-F 90", "benchmarking mode"),
            ("--sampling-rate=0.5", "only when logging"),
            ("-d", "not supported"),
            ("a b", "too many command-line arguments (first is \"b\")"),
            ("-M fast", "invalid query mode"),
            ("--max-tries=0", "unlimited number of transaction tries"),
        ] {
            let e = match parse(&args(line)) {
                Err(e) => e.to_string(),
                Ok(_) => panic!("{line} was accepted"),
            };
            assert!(e.contains(want), "{line}: {e}");
            assert!(!e.contains('\n'), "{line}: {e}");
        }
    }
}
