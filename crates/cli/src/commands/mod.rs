//! The commands: list, help, version, prepare, prewarm, cleanup, run.

mod data;
mod env;
mod info;
mod record;
mod run;
mod server;

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
    let inv = args::parse(&args, specs_for)?;
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
    };
    match inv.command {
        Command::Prepare => data::prepare(&ctx),
        Command::Prewarm => data::prewarm(&ctx),
        Command::Cleanup => data::cleanup(&ctx),
        _ => run::run(&ctx),
    }
}

/// Runs a future to completion on a runtime of the calling thread (with
/// worker threads, so that concurrent loaders and drivers run in parallel).
pub(crate) fn block_on<F: std::future::Future>(f: F) -> Result<F::Output, CliError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Failed(format!("cannot start the async runtime: {e}")))?;
    Ok(rt.block_on(f))
}
