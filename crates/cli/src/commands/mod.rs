//! The commands: list, help, version, prepare, prewarm, cleanup, check, run,
//! env, server, results, compare, report, merge, campaign, digest, capture, compare-queries,
//! slap, and sysbench, pgbench and mysqlslap (those tools' own command lines, turned
//! into the same requests).

pub(crate) mod campaign;
pub(crate) mod capture;
pub(crate) mod compare;
pub(crate) mod compare_queries;
pub(crate) mod digest;
pub(crate) mod env;
pub(crate) mod history;
mod info;
pub(crate) mod merge;
pub(crate) mod pgbench;
pub(crate) mod report;
pub(crate) mod results;
pub(crate) mod run;
pub(crate) mod server;
pub(crate) mod slap;
pub(crate) mod sysbench;

use crate::CliError;
use crate::args::{self, Command, Invocation};
use dbmeter_result::Layout;
use dbmeter_result::verdict::Assertion;
use dbmeter_run::options::specs_for;
use dbmeter_run::{Request, StoreRequest};
use dbmeter_store::RunMeta;

pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// A benchmark command as the command line asks for it.
pub(crate) struct Ctx {
    pub request: Request,
    /// How the run is presented (chosen by the command: dbmeter's, or
    /// the peer's whose command line it took).
    pub layout: Layout,
}

/// What `dbmeter` alone prints (on standard error, with exit code 2).
fn short_usage() -> String {
    let names: Vec<&str> = crate::help::pages::all().iter().map(|p| p.name).collect();
    format!(
        "Usage: dbmeter COMMAND [WORKLOAD] [--option=value ...]\n  \
         e.g. dbmeter run oltp_read_write --threads=4 --time=60\n\
         Commands: {}.\n`dbmeter help` says more.\n",
        names.join(", ")
    )
}

pub fn dispatch(args: Vec<String>) -> Result<i32, CliError> {
    if args.is_empty() {
        eprint!("{}", short_usage());
        return Ok(2);
    }
    // pgbench's own command line: -h is its host, -? its help.
    if args.first().is_some_and(|a| a == "pgbench") {
        return pgbench::main(&args[1..]);
    }
    // sysbench's: its --help is sysbench's own (`dbmeter help sysbench`
    // is dbmeter's page for it).
    if args.first().is_some_and(|a| a == "sysbench") {
        return sysbench::main(&args[1..]);
    }
    // mysqlslap's: -h is its host, -? its help.
    if args.first().is_some_and(|a| a == "mysqlslap") {
        return slap::mysqlslap_main(&args[1..]);
    }
    let args = replay_short_form(args);
    if let Some(text) = crate::help::help_request(&args)? {
        print!("{text}");
        return Ok(0);
    }
    match args.first().map(String::as_str) {
        Some("env") => return env::env(&args[1..]),
        Some("server") => return server::main(&args[1..]),
        Some("campaign") => return campaign::main(&args[1..]),
        Some("results") => return results::main(&args[1..]),
        Some("compare") => return compare::main(&args[1..]),
        Some("report") => return report::main(&args[1..]),
        Some("merge") => return merge::main(&args[1..]),
        Some("digest") => return digest::main(&args[1..]),
        Some("compare-queries") => return compare_queries::main(&args[1..]),
        Some("capture") => return capture::main(&args[1..]),
        Some("slap") => return slap::main(&args[1..]),
        Some("completions") => return completions(&args[1..]),
        Some("man") => return man(&args[1..]),
        _ => {}
    }
    let args = store_option(args);
    let inv = args::parse(&args, specs_for)?;
    execute(inv, Layout::Dbmeter)
}

/// `dbmeter replay LOG [--option=value ...]` is `dbmeter run replay
/// --log=LOG [--option=value ...]` (without LOG, --log says which).
fn replay_short_form(args: Vec<String>) -> Vec<String> {
    if args.first().is_none_or(|a| a != "replay") {
        return args;
    }
    let mut out = vec!["run".to_string(), "replay".to_string()];
    let mut rest = args.into_iter().skip(1).peekable();
    if let Some(log) = rest.next_if(|a| !a.starts_with('-') || a == "-") {
        out.push(format!("--log={log}"));
    }
    out.extend(rest);
    out
}

/// Carries out a parsed workload command line: version, list, help, or a
/// benchmark's command through the run layer.
pub(crate) fn execute(inv: Invocation, layout: Layout) -> Result<i32, CliError> {
    let tags = results::parse_tags(
        inv.given
            .iter()
            .filter(|(k, _)| k == "tag")
            .map(|(_, v)| v.as_str()),
    )?;
    let assertions = inv
        .given
        .iter()
        .filter(|(k, v)| k == "assert" && !v.trim().is_empty())
        .map(|(_, v)| Assertion::parse(v).map_err(CliError::Usage))
        .collect::<Result<Vec<_>, _>>()?;
    // `--slo=p99:10ms` is the target `p99<=10ms` for every step.
    let slos = inv
        .given
        .iter()
        .filter(|(k, v)| k == "slo" && !v.trim().is_empty())
        .map(|(_, v)| match v.split_once(':') {
            Some((m, limit)) if !m.trim().is_empty() => {
                Assertion::parse(&format!("{}<={}", m.trim(), limit.trim())).map_err(|e| {
                    CliError::Usage(e.replacen("--assert", "--slo", 1).replace(
                        "write [KIND.]METRIC OP VALUE, e.g. 'p99<10ms', 'tps>=5000', 'errors<=0.1%', 'NewOrder.p90<5s'",
                        "write METRIC:LIMIT, e.g. p99:10ms or errors:0.1%",
                    ))
                })
            }
            _ => Err(CliError::Usage(format!(
                "--slo={v}: write METRIC:LIMIT, e.g. p99:10ms or errors:0.1%"
            ))),
        })
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(s) = slos.iter().find(|s| {
        !matches!(
            s.metric,
            dbmeter_result::verdict::Metric::Latency(_) | dbmeter_result::verdict::Metric::Errors
        )
    }) {
        return Err(CliError::Usage(format!(
            "--slo: '{}' limits no latency or errors; an SLO is a latency (p99, p95, avg, max, pN, or KIND.p99) or errors (a count, or a share with %)",
            s.text
        )));
    }
    match inv.command {
        Command::Version => {
            println!("dbmeter {VERSION}");
            return Ok(0);
        }
        Command::List => {
            print!("{}", info::list());
            return Ok(0);
        }
        Command::Help => {
            let width = crate::help::width();
            match inv.workload.as_deref() {
                Some(w) => print!("{}", crate::help::workload_help(w, width)),
                None => print!("{}", crate::help::general_help(width)),
            }
            return Ok(0);
        }
        _ => {}
    }
    let Some(w) = inv.workload else {
        return Err(CliError::Usage(format!(
            "which workload? e.g. `dbmeter {} oltp_read_write` (`dbmeter list` shows them)",
            inv.command.name()
        )));
    };
    let values = args::values(&specs_for(Some(w.as_ref())), &inv.given);
    let store = (values.given("store") || !tags.is_empty()).then(|| StoreRequest {
        spec: values.str("store").to_string(),
        meta: RunMeta {
            tags,
            ..RunMeta::default()
        },
    });
    let ctx = Ctx {
        request: Request {
            benchmark: w,
            options: values,
            store,
            layout,
            assertions,
            slos,
        },
        layout,
    };
    if !ctx.request.assertions.is_empty() && !matches!(inv.command, Command::Run) {
        return Err(CliError::Usage(format!(
            "--assert judges a run's result; `{}` makes none (use it with `dbmeter run`)",
            inv.command.name()
        )));
    }
    if let Some(name) = dbmeter_run::options::METRICS_OPTIONS
        .iter()
        .find(|n| ctx.request.options.given(n))
        && !matches!(inv.command, Command::Run)
    {
        return Err(CliError::Usage(format!(
            "--{name} serves a run's metrics; `{}` makes no run (use it with `dbmeter run` or `dbmeter campaign run`)",
            inv.command.name()
        )));
    }
    match (inv.command, &inv.verb) {
        (Command::Run, _) => run::run(&ctx),
        (Command::Own, Some(verb)) => run::verb(verb, &ctx),
        (other, _) => run::verb(other.name(), &ctx),
    }
}

/// `--store` alone means the default store, so its value must follow `=`
/// or be a word that is not a command or a workload: `--store=r.db`,
/// `--store r.db` and `--store oltp_read_only` (default store, then the
/// workload) all work. The default is passed on as `--store=`.
pub(crate) fn store_option(args: Vec<String>) -> Vec<String> {
    let taken = |w: &str| {
        w.starts_with("--")
            || [
                "run", "prepare", "prewarm", "cleanup", "list", "help", "version",
            ]
            .contains(&w)
            || dbmeter_benchmarks::registry::find(w).is_some()
    };
    let mut out = Vec::with_capacity(args.len());
    let mut it = args.into_iter().peekable();
    while let Some(a) = it.next() {
        if a == "--find-capacity" {
            // Alone, the open model's search.
            out.push("--find-capacity=rate".into());
        } else if a == "--store" {
            match it.next_if(|next| !taken(next)) {
                Some(v) => out.push(format!("--store={v}")),
                None => out.push("--store=".into()),
            }
        } else {
            out.push(a);
        }
    }
    out
}

/// `dbmeter completions bash|zsh|fish`.
fn completions(args: &[String]) -> Result<i32, CliError> {
    match args {
        [shell] => match crate::help::completions(shell) {
            Some(script) => {
                print!("{script}");
                Ok(0)
            }
            None => Err(CliError::Usage(format!(
                "completions for '{shell}': dbmeter writes them for bash, zsh and fish"
            ))),
        },
        [] => Err(CliError::Usage(
            "which shell? `dbmeter completions bash` (or zsh, fish)".into(),
        )),
        [_, extra, ..] => Err(CliError::Usage(format!(
            "completions: one shell only ('{extra}' is extra)"
        ))),
    }
}

/// `dbmeter man`.
fn man(args: &[String]) -> Result<i32, CliError> {
    if let Some(extra) = args.first() {
        return Err(CliError::Usage(format!(
            "`dbmeter man` takes no arguments ('{extra}' is extra)"
        )));
    }
    print!("{}", crate::help::man_page());
    Ok(0)
}
