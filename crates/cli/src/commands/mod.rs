//! The commands: list, help, version, prepare, prewarm, cleanup, check, run,
//! env, server, results, compare, report, campaign.

mod campaign;
mod compare;
mod data;
mod env;
mod info;
mod record;
mod report;
mod results;
mod run;
mod server;
mod tpcc;

use crate::CliError;
use crate::args::{self, Command};
use crate::general::GENERAL;
use crate::setup;
use dbmeter_db::Target;
use dbmeter_workloads::options::{OptSpec, OptValues};
use dbmeter_workloads::registry::WorkloadInfo;

pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Everything a workload command needs from the command line.
pub(crate) struct Ctx {
    pub info: &'static WorkloadInfo,
    pub values: OptValues,
    /// None for workloads without a database.
    pub target: Option<Target>,
    /// `--tag KEY=VALUE` (repeatable), for the results store.
    pub tags: Vec<(String, String)>,
}

fn specs_for(w: Option<&WorkloadInfo>) -> Vec<OptSpec> {
    let mut v = GENERAL.to_vec();
    if let Some(w) = w {
        v.extend(w.workload.options());
    }
    v
}

pub fn dispatch(args: Vec<String>) -> Result<i32, CliError> {
    match (
        args.first().map(String::as_str),
        args.get(1).map(String::as_str),
    ) {
        (Some("env"), _) => return env::env(&args[1..]),
        (Some("server"), _) => return server::main(&args[1..]),
        (Some("campaign"), _) => return campaign::main(&args[1..]),
        (Some("help"), Some("campaign")) if args.len() == 2 => {
            print!("{}", campaign::HELP);
            return Ok(0);
        }
        (Some("results"), _) => return results::main(&args[1..]),
        (Some("compare"), _) => return compare::main(&args[1..]),
        (Some("report"), _) => return report::main(&args[1..]),
        (Some("help"), Some("report")) if args.len() == 2 => {
            print!("{}", report::HELP);
            return Ok(0);
        }
        (Some("help"), Some("results")) if args.len() == 2 => {
            print!("{}", results::HELP);
            return Ok(0);
        }
        (Some("help"), Some("compare")) if args.len() == 2 => {
            print!("{}", compare::HELP);
            return Ok(0);
        }
        (Some("help"), Some("env")) if args.len() == 2 => {
            print!("{}", env::USAGE);
            return Ok(0);
        }
        (Some("help"), Some("server")) if args.len() == 2 => {
            print!("{}", server::HELP);
            return Ok(0);
        }
        _ => {}
    }
    let args = store_option(args);
    let inv = args::parse(&args, specs_for)?;
    let tags = results::parse_tags(
        inv.given
            .iter()
            .filter(|(k, _)| k == "tag")
            .map(|(_, v)| v.as_str()),
    )?;
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
            print!("{}", info::help(inv.workload));
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
    let values = args::values(&specs_for(Some(w)), &inv.given);
    let target = if w.workload.needs_database() {
        Some(setup::target(&values)?)
    } else {
        None
    };
    crate::pinning::pin_client(&values)?;
    let ctx = Ctx {
        info: w,
        values,
        target,
        tags,
    };
    match inv.command {
        Command::Prepare => data::prepare(&ctx),
        Command::Prewarm => data::prewarm(&ctx),
        Command::Cleanup => data::cleanup(&ctx),
        Command::Check => tpcc::check(&ctx),
        _ => run::run(&ctx),
    }
}

/// `--store` alone means the default store, so its value must follow `=`
/// or be a word that is not a command or a workload: `--store=r.db`,
/// `--store r.db` and `--store oltp_read_only` (default store, then the
/// workload) all work. The default is passed on as `--store=`.
fn store_option(args: Vec<String>) -> Vec<String> {
    let taken = |w: &str| {
        w.starts_with("--")
            || [
                "run", "prepare", "prewarm", "cleanup", "list", "help", "version",
            ]
            .contains(&w)
            || dbmeter_workloads::registry::find(w).is_some()
    };
    let mut out = Vec::with_capacity(args.len());
    let mut it = args.into_iter().peekable();
    while let Some(a) = it.next() {
        if a == "--store" {
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

/// Wraps a value in Ok (a stand-in while the commands move to the run layer).
pub(crate) fn block_on<T>(x: T) -> Result<T, CliError> {
    Ok(x)
}
