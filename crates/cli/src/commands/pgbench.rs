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
use dbmeter_benchmarks::pgbench::{
    BUILTINS, CommandKind, ScriptSetBuilder, find_builtin, parse_weight,
};
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
    opt(
        "partitions",
        "NUM",
        "partition pgbench_accounts into NUM partitions (-i)",
    ),
    opt(
        "partition-method",
        "range|hash",
        "how pgbench_accounts is partitioned (-i)",
    ),
    opt("tablespace", "NAME", "tablespace of the tables (-i)"),
    opt("index-tablespace", "NAME", "tablespace of the indexes (-i)"),
    flag(
        "debug",
        "-d: each client's statements and results on stderr",
    ),
    flag(
        "verbose-errors",
        "each failed or retried transaction's error on stderr",
    ),
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
        "pgbench, the benchmarking tool for PostgreSQL, as dbmeter runs it. \
         Takes pgbench 15's command line and runs it as `dbmeter run pgbench` (or, with \
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
         number of -l files. `dbmeter help run pgbench` lists the benchmark's own \
         options. Errors are pgbench's (`pgbench: error: ...`).",
    ],
    options: OPTIONS,
    sections: &[
        Section {
            title: "Initialization options",
            body: &[
                "With -i: -I, -F, -n, -q, -s, --foreign-keys, --unlogged-tables, \
                 --partitions, --partition-method, --tablespace, --index-tablespace.",
            ],
        },
        Section {
            title: "Benchmarking options",
            body: &[
                "Without -i: -b, -f, -S, -N, -c, -C, -D, -j, -l, -L, -M, -n, -P, -r, -R, -s, \
                 -t, -T, -v, --aggregate-interval, --failures-detailed, --log-prefix, \
                 --max-tries, --progress-timestamp, --random-seed, --sampling-rate, \
                 --verbose-errors.",
            ],
        },
        Section {
            title: "Common options",
            body: &["-d, -h, -p, -U, -V, -?."],
        },
        Section {
            title: "Differences from pgbench",
            body: &[
                "No `initial connection time` line. `latency average` is the mean of the \
                 completed transactions (pgbench's, without -P, -R or -L, is derived from \
                 the duration); `latency stddev` is always printed. --aggregate-interval \
                 also writes the last, partial interval. docs/pgbench.md says more.",
            ],
        },
        Section {
            title: "Bugs",
            body: &["Report bugs to the dbmeter project, with the command line and its output."],
        },
    ],
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

/// Options only `-i` takes (pgbench's "initialization options"), and
/// options only a run takes (its "benchmarking options").
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
    "random-seed",
    "sampling-rate",
    "verbose-errors",
];

fn bad(m: impl Into<String>) -> CliError {
    CliError::Failed(m.into())
}

/// A command line that getopt refuses: printed with pgbench's hint.
fn usage(m: impl Into<String>) -> CliError {
    CliError::Usage(m.into())
}

/// How a user names an option in messages: `-c/--client` or `--max-tries`.
fn shown(spec: &Spec) -> String {
    // pgbench 15 names -c so in its messages.
    if spec.long == "client" {
        return "-c/--clients".into();
    }
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
                        [] => return Err(usage(format!("unrecognized option '--{name}'"))),
                        _ => return Err(usage(format!("option '--{name}' is ambiguous"))),
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
                        return Err(usage(format!(
                            "option '--{}' requires an argument",
                            sp.long
                        )));
                    }
                },
                (false, Some(_)) => {
                    return Err(usage(format!(
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
                return Err(usage(format!("invalid option -- '{c}'")));
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
                return Err(usage(format!("option requires an argument -- '{c}'")));
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

/// A floating-point option value read as C's atof reads it: the longest
/// number at the start, 0 when there is none.
fn atof(v: &str) -> f64 {
    let t = v.trim_start();
    (1..=t.len())
        .rev()
        .filter(|&n| t.is_char_boundary(n))
        .find_map(|n| t[..n].parse::<f64>().ok())
        .unwrap_or(0.0)
}

/// An integer option value read as C's atoi reads it.
fn atoi(v: &str) -> i64 {
    let t = v.trim_start();
    let end = t
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && (c == '-' || c == '+'))))
        .map_or(t.len(), |(i, _)| i);
    t[..end].parse().unwrap_or(0)
}

/// `--random-seed`: a number, or one drawn from the clock (`time`) or at
/// random (`rand`), as pgbench draws them.
fn random_seed(v: &str) -> Result<u64, CliError> {
    match v {
        "time" => Ok(std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_micros() as u64)),
        "rand" => {
            use std::hash::{BuildHasher, Hasher};
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u64(std::process::id() as u64);
            Ok(h.finish())
        }
        v => v.parse::<u64>().map_err(|_| {
            bad(format!(
                "unrecognized random seed option \"{v}\"\n\
                 pgbench: detail: Expecting an unsigned integer, \"time\" or \"rand\".\n\
                 pgbench: error: error while setting random seed from --random-seed option"
            ))
        }),
    }
}

/// `-b NAME[@WEIGHT]` checked as pgbench checks it: the weight, then the
/// name (exact, or the prefix of exactly one built-in script).
fn check_builtin(spec: &str) -> Result<(), CliError> {
    let (name, _) = parse_weight(spec).map_err(bad)?;
    if BUILTINS.iter().any(|b| b.name == name) {
        return Ok(());
    }
    match BUILTINS.iter().filter(|b| b.name.starts_with(name)).count() {
        1 => Ok(()),
        0 => Err(bad(format!(
            "no builtin script found for name \"{name}\"\n{}",
            builtin_list().trim_end()
        ))),
        n => Err(bad(format!(
            "ambiguous builtin name: {n} builtin scripts found for prefix \"{name}\"\n{}",
            builtin_list().trim_end()
        ))),
    }
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
            text: format!("pgbench (PostgreSQL) 15 (dbmeter {})\n", super::VERSION),
        });
    }
    // Each option checked where pgbench checks it, in the order given;
    // the scripts are read and parsed here too, for pgbench's messages.
    let mut scripts = ScriptSetBuilder::new();
    let mut script_items = Vec::new();
    let mut defines = Vec::new();
    let mut seed = None;
    let mut partitions = None;
    let mut partition_method = None;
    let mut init_steps = None;
    let mut max_tries = None;
    for (name, v) in &opts {
        let v = v.as_str();
        match *name {
            "builtin" | "select-only" | "skip-some-updates" => {
                let item = match *name {
                    "select-only" => "select-only",
                    "skip-some-updates" => "simple-update",
                    _ if v == "list" => {
                        return Ok(Asked::Print {
                            stdout: false,
                            text: builtin_list(),
                        });
                    }
                    _ => v,
                };
                check_builtin(item)?;
                scripts.add_builtin(item).map_err(bad)?;
                script_items.push(self::item(&format!("builtin:{item}")));
            }
            "file" => {
                scripts.add_file(v).map_err(bad)?;
                script_items.push(self::item(v));
            }
            "show-script" => {
                let b = find_builtin(v).map_err(|_| match check_builtin(v) {
                    Err(e) => e,
                    Ok(()) => bad(format!("no builtin script found for name \"{v}\"")),
                })?;
                return Ok(Asked::Print {
                    stdout: false,
                    text: format!("-- {}: {}\n{}", b.name, b.description, b.text),
                });
            }
            "client" | "jobs" | "scale" | "transactions" | "time" | "progress"
            | "aggregate-interval" => {
                int(name, v, 1, i32::MAX as i64)?;
            }
            "fillfactor" => {
                int(name, v, 10, 100)?;
            }
            "partitions" => partitions = Some(int(name, v, 0, i32::MAX as i64)?),
            "partition-method" => {
                if v != "range" && v != "hash" {
                    return Err(bad(format!(
                        "invalid partition method, expecting \"range\" or \"hash\", got: \"{v}\""
                    )));
                }
                partition_method = Some(v);
            }
            "init-steps" => {
                if let Some(c) = v.chars().find(|c| !"dtgGvpf ".contains(*c)) {
                    return Err(bad(format!(
                        "unrecognized initialization step \"{c}\"\n\
                         pgbench: detail: Allowed step characters are: \"dtgGvpf\"."
                    )));
                }
                init_steps = Some(v.replace(' ', ""));
            }
            "rate" if atof(v) <= 0.0 => {
                return Err(bad(format!("invalid rate limit: \"{v}\"")));
            }
            "latency-limit" if atof(v) <= 0.0 => {
                return Err(bad(format!("invalid latency limit: \"{v}\"")));
            }
            "sampling-rate" if !(atof(v) > 0.0 && atof(v) <= 1.0) => {
                return Err(bad(format!("invalid sampling rate: \"{v}\"")));
            }
            "protocol" if !["simple", "extended", "prepared"].contains(&v) => {
                return Err(bad(format!("invalid query mode (-M): \"{v}\"")));
            }
            "define" => {
                if !v.contains('=') {
                    return Err(bad(format!("invalid variable definition: \"{v}\"")));
                }
                defines.push(item(v));
            }
            "max-tries" => {
                let n = atoi(v);
                if n < 0 || n > i32::MAX as i64 {
                    return Err(bad(format!("invalid number of maximum tries: \"{v}\"")));
                }
                max_tries = Some(n);
            }
            "random-seed" => {
                let n = random_seed(v)?;
                eprintln!("pgbench: setting random seed to {n}");
                seed = Some(n);
            }
            _ => {}
        }
    }
    if words.len() > 1 {
        return Err(CliError::Usage(format!(
            "error: too many command-line arguments (first is \"{}\")",
            words[1]
        )));
    }
    let init = has("initialize");
    if init {
        if opts.iter().any(|(n, _)| RUN_ONLY.contains(n)) {
            return Err(bad(
                "some of the specified options cannot be used in initialization (-i) mode",
            ));
        }
        if partitions.unwrap_or(0) == 0 && partition_method.is_some() {
            return Err(bad(
                "--partition-method requires greater than zero --partitions",
            ));
        }
    } else if opts.iter().any(|(n, _)| INIT_ONLY.contains(n)) {
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
        set("scale", atoi(v).to_string());
    }
    if has("no-vacuum") {
        set("no-vacuum", "on".into());
    }
    if has("debug") {
        set("debug", "on".into());
    }
    if init {
        if let Some(v) = last("fillfactor") {
            set("fillfactor", atoi(v).to_string());
        }
        if let Some(v) = init_steps {
            set("init-steps", v);
        }
        for flag in ["foreign-keys", "unlogged-tables"] {
            if has(flag) {
                set(flag, "on".into());
            }
        }
        for name in ["tablespace", "index-tablespace"] {
            if let Some(v) = last(name) {
                set(name, v.to_string());
            }
        }
        if let Some(n) = partitions {
            set("partitions", n.to_string());
            set(
                "partition-method",
                partition_method.unwrap_or("range").to_string(),
            );
        }
        return Ok(Asked::Command {
            verb: "prepare",
            given,
        });
    }
    let time = last("time").map(atoi);
    match (last("transactions"), time) {
        (Some(_), Some(_)) => {
            return Err(bad(
                "specify either a number of transactions (-t) or a duration (-T), not both",
            ));
        }
        (Some(t), None) => set("transactions", atoi(t).to_string()),
        (None, Some(t)) => set("time", t.to_string()),
        (None, None) => set("transactions", "10".into()),
    }
    let log = has("log");
    let aggregate = last("aggregate-interval").map(atoi);
    if has("sampling-rate") && !log {
        return Err(bad(
            "log sampling (--sampling-rate) is allowed only when logging transactions (-l)",
        ));
    }
    if has("sampling-rate") && aggregate.is_some() {
        return Err(bad(
            "log sampling (--sampling-rate) and aggregation (--aggregate-interval) cannot be used at the same time",
        ));
    }
    if aggregate.is_some() && !log {
        return Err(bad(
            "log aggregation is allowed only when actually logging transactions",
        ));
    }
    if has("log-prefix") && !log {
        return Err(bad(
            "log file prefix (--log-prefix) is allowed only when logging transactions (-l)",
        ));
    }
    if let (Some(t), Some(a)) = (time, aggregate) {
        if a > t {
            return Err(bad(format!(
                "number of seconds for aggregation ({a}) must not be higher than test duration ({t})"
            )));
        }
        if t % a != 0 {
            return Err(bad(format!(
                "duration ({t}) must be a multiple of aggregation interval ({a})"
            )));
        }
    }
    if has("progress-timestamp") && !has("progress") {
        return Err(bad("--progress-timestamp is allowed only under --progress"));
    }
    if max_tries == Some(0) && !has("latency-limit") && time.is_none() {
        return Err(bad(
            "an unlimited number of transaction tries can only be used with --latency-limit or a duration (-T)",
        ));
    }
    // The scripts' weights (tpcb-like when none is given).
    let built = scripts.build().map_err(bad)?;
    // pgbench's limit on a statement's parameters, when it sends them.
    if last("protocol").is_some_and(|m| m != "simple") {
        for script in built.scripts() {
            for c in &script.commands {
                if let CommandKind::Sql(q) = &c.kind
                    && q.params.len() >= 255
                {
                    return Err(bad(format!(
                        "statement has too many arguments (maximum is 255): {}",
                        q.text
                    )));
                }
            }
        }
    }
    let clients = last("client").map_or(1, atoi);
    set("threads", clients.to_string());
    if let Some(v) = last("jobs") {
        set("jobs", atoi(v).to_string());
    }
    if let Some(v) = last("rate") {
        set("rate", atof(v).to_string());
    }
    if let Some(v) = last("latency-limit") {
        set("latency-limit", atof(v).to_string());
    }
    if let Some(v) = last("progress") {
        set("report-interval", atoi(v).to_string());
    }
    if let Some(v) = last("protocol") {
        set("protocol", v.to_string());
    }
    let per_command = has("report-per-command") || has("report-latencies");
    set(
        "report-per-command",
        if per_command { "on" } else { "off" }.into(),
    );
    if log {
        set("log", "on".into());
    }
    if let Some(v) = last("log-prefix") {
        set("log-prefix", v.to_string());
    }
    if let Some(a) = aggregate {
        set("aggregate-interval", a.to_string());
    }
    if let Some(v) = last("sampling-rate") {
        set("sampling-rate", atof(v).to_string());
    }
    if let Some(n) = max_tries {
        set("max-tries", n.to_string());
    }
    if let Some(n) = seed {
        set("random-seed", n.to_string());
    }
    for flag in [
        "failures-detailed",
        "progress-timestamp",
        "vacuum-all",
        "connect",
        "verbose-errors",
    ] {
        if has(flag) {
            set(flag, "on".into());
        }
    }
    if !script_items.is_empty() {
        set("file", script_items.join(","));
    }
    if !defines.is_empty() {
        set("define", defines.join(","));
    }
    Ok(Asked::Command { verb: "run", given })
}

/// Runs pgbench's command line; its errors end as pgbench's do, one
/// `pgbench: error: ` line (and its detail lines), exit code 1.
pub fn main(args: &[String]) -> Result<i32, CliError> {
    match drop_in(args) {
        Ok(code) => Ok(code),
        Err(CliError::Usage(m)) => {
            eprintln!("pgbench: {m}");
            eprintln!("pgbench: hint: Try \"pgbench --help\" for more information.");
            Ok(1)
        }
        Err(e) => {
            let m = match &e {
                CliError::Failed(m) | CliError::SysbenchUsage(m) => m.clone(),
                other => other.to_string(),
            };
            eprintln!("pgbench: error: {m}");
            Ok(e.exit_code())
        }
    }
}

fn drop_in(args: &[String]) -> Result<i32, CliError> {
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
        assertions: Vec::new(),
    };
    // pgbench ends with 1 for what is wrong before a run.
    let failed = |e: dbmeter_run::RunError| CliError::Failed(e.to_string());
    if verb == "prepare" {
        // pgbench -i writes its steps on stderr.
        let printer = Printer::for_load_on(dbmeter_report::present::Stream::Err);
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
                "pgbench: error: {}",
                doc.end
                    .error
                    .as_deref()
                    .unwrap_or("the run failed")
                    .trim_end()
            );
            eprintln!("pgbench: error: Run was aborted; the above results are incomplete.");
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
        // The script files are read while the options are.
        let dir = std::env::temp_dir().join(format!("dbmeter-pgbench-cli-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        let file = dir.join("a,b.sql");
        std::fs::write(&file, "SELECT 1;\n").unwrap_or_else(|e| panic!("{e}"));
        let path = file.display().to_string();
        let g = given(&format!("-b simple@2 -f {path}@3 -S -D x=1,2 -D y=a\\b"));
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(
            get(&g, "file"),
            Some(
                format!(
                    "builtin:simple@2,{},builtin:select-only",
                    path.replace(',', "\\,") + "@3"
                )
                .as_str()
            )
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
            ("-c 0", "-c/--clients must be in range 1..2147483647"),
            ("--bogus", "unrecognized option '--bogus'"),
            ("-c", "option requires an argument -- 'c'"),
            ("-x", "invalid option -- 'x'"),
            ("--p=1", "ambiguous"),
            ("-t 5 -T 5", "not both"),
            ("-i -c 2", "initialization (-i) mode"),
            ("-F 90", "benchmarking mode"),
            ("--sampling-rate=0.5", "only when logging"),
            ("--progress-timestamp", "allowed only under --progress"),
            ("-l -T 5 --aggregate-interval=3", "must be a multiple"),
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
