//! `list`, `help` and `help WORKLOAD`.

use super::VERSION;
use dbmeter_benchmarks::Benchmark;
use dbmeter_benchmarks::options::{OptKind, OptSpec};
use dbmeter_benchmarks::registry;
use dbmeter_run::options::GENERAL;
use std::fmt::Write as _;

pub fn list() -> String {
    let mut out = String::from("Workloads (dbmeter help WORKLOAD shows a workload's options):\n");
    for w in registry::all() {
        let _ = writeln!(out, "  {:<24}{}", w.name(), w.summary());
    }
    out
}

fn value_hint(kind: &OptKind) -> String {
    match kind {
        OptKind::Size | OptKind::Int => "N".into(),
        OptKind::Float => "X".into(),
        OptKind::Bool => "[on|off]".into(),
        OptKind::Str => "STRING".into(),
        OptKind::Choice(c) => c.join("|"),
        OptKind::FloatList => "LIST".into(),
    }
}

fn options_table(out: &mut String, specs: &[OptSpec]) {
    for s in specs {
        let left = format!("--{}={}", s.name, value_hint(&s.kind));
        let default = if s.default.is_empty() {
            String::new()
        } else {
            format!(" [{}]", s.default)
        };
        let _ = writeln!(out, "  {left:<38} {}{default}", s.help);
    }
}

pub fn help(w: Option<&dyn Benchmark>) -> String {
    let mut out = String::new();
    match w {
        Some(w) => {
            let _ = writeln!(out, "{}: {}\n", w.name(), w.summary());
            let verbs = w.verbs();
            let mut names: Vec<&str> = verbs.iter().map(|v| v.name.as_ref()).collect();
            // run comes after the commands that get the data ready.
            let at = names
                .iter()
                .rposition(|n| matches!(*n, "prepare" | "prewarm"))
                .map_or(0, |i| i + 1);
            names.insert(at, "run");
            let _ = writeln!(
                out,
                "Usage: dbmeter {} {} [options]\n",
                names.join("|"),
                w.name()
            );
            if !verbs.is_empty() {
                out.push_str("Commands:\n");
                for v in &verbs {
                    let _ = writeln!(out, "  {:<10} {}", v.name, v.help);
                }
                let _ = writeln!(
                    out,
                    "  {:<10} run the benchmark and report throughput and latency\n",
                    "run"
                );
            }
            let own = w.options();
            if own.is_empty() {
                out.push_str("This workload has no options of its own.\n");
            } else {
                let _ = writeln!(
                    out,
                    "{} options (dashes and underscores are interchangeable):",
                    w.name()
                );
                options_table(&mut out, &own);
            }
        }
        None => {
            let _ = writeln!(
                out,
                "dbmeter {VERSION}: benchmark databases with sysbench's workloads and more.\n\n\
                 Usage: dbmeter COMMAND [WORKLOAD] [--option=value ...]\n\n\
                 Commands:\n  \
                 prepare WORKLOAD   create and load the workload's tables\n  \
                 prewarm WORKLOAD   read the tables once so that a run starts with warm caches\n  \
                 run WORKLOAD       run the benchmark and report throughput and latency\n  \
                 cleanup WORKLOAD   drop the workload's tables\n  \
                 check WORKLOAD     verify the workload's data (e.g. consistency conditions, answers)\n  \
                 VERB WORKLOAD      a workload's own command (`dbmeter help WORKLOAD` lists them)\n  \
                 server COMMAND     managed MariaDB/PostgreSQL servers (`dbmeter server help`)\n  \
                 list               list the workloads\n  \
                 help [WORKLOAD]    this help, or a workload's options\n  \
                 env                the machine, with --db the server, and warnings (`dbmeter env --help`)\n  \
                 results COMMAND    stored runs: list, show, export, delete (`dbmeter help results`)\n  \
                 compare            stored runs against a baseline (`dbmeter help compare`)\n  \
                 report             an HTML report with charts of stored runs (`dbmeter help report`)\n  \
                 campaign run FILE  a matrix of runs from a TOML file, stored (`dbmeter help campaign`)\n  \
                 version            print the version\n\n\
                 With no --db, dbmeter uses the SQLite file dbmeter.sqlite in the current\n\
                 directory, and `run` prepares its tables when they are missing.\n\
                 `run --store` also saves the result in the results store.\n"
            );
        }
    }
    out.push_str("\nGeneral options:\n");
    options_table(&mut out, GENERAL);
    out
}
