//! The commands: list, help, version, prepare, prewarm, cleanup, check, run,
//! env, server, results, compare, report, campaign.

mod campaign;
mod compare;
mod env;
mod info;
mod report;
mod results;
mod run;
mod server;

use crate::CliError;
use crate::args::{self, Command};
use dbmeter_run::options::specs_for;
use dbmeter_run::{Request, StoreRequest};
use dbmeter_store::RunMeta;

pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// A benchmark command as the command line asks for it.
pub(crate) struct Ctx {
    pub request: Request,
}

/// What `dbmeter` alone prints (on standard error, with exit code 2).
const SHORT_USAGE: &str = "\
Usage: dbmeter COMMAND [WORKLOAD] [--option=value ...]
  e.g. dbmeter run oltp_read_write --threads=4 --time=60
Commands: prepare, prewarm, run, check, cleanup WORKLOAD; list; help [WORKLOAD];
env; server; results; compare; report; campaign; version.
`dbmeter help` says more.
";

pub fn dispatch(args: Vec<String>) -> Result<i32, CliError> {
    if args.is_empty() {
        eprint!("{SHORT_USAGE}");
        return Ok(2);
    }
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
            print!("{}", info::help(inv.workload.as_deref()));
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
        },
    };
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
fn store_option(args: Vec<String>) -> Vec<String> {
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
