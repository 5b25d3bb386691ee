//! `dbmeter campaign run FILE [--resume] [--dry-run] [--store=S]`.

use crate::CliError;
use dbmeter_campaign::{Campaign, RunOptions, check, describe, store_spec, todo};
use dbmeter_store::Store;
use std::path::Path;

pub const HELP: &str = "\
Usage: dbmeter campaign run FILE [--resume] [--dry-run] [--store=PATH|URL]

Runs the matrix a campaign file describes (targets x workloads x client
counts x repeats; see docs/campaigns.md): starts its managed servers,
prepares each dataset once per target, runs every cell and stores each
result in the results store the moment it ends.

  --resume      skip the cells already stored as completed (after Ctrl-C,
                SIGTERM or a crash; an interrupted or failed cell runs again)
  --dry-run     check every target and workload, print the plan (with
                --resume: the cells still to run) and its estimated
                duration; run nothing
  --store=S     results store (default: the file's `store`, $DBMETER_STORE,
                or $DBMETER_HOME/results.db, as `dbmeter results`)

Exit codes: 0 every run stored, 1 some runs failed (they are stored as
failed, the others ran) or the file is wrong, 2 usage, 130 Ctrl-C (SIGINT),
143 SIGTERM: the running cell stops within a second and is stored as
interrupted.
";

pub fn main(args: &[String]) -> Result<i32, CliError> {
    let mut file = None;
    let (mut resume, mut dry_run, mut store) = (false, false, None);
    let mut it = args.iter();
    let Some(sub) = it.next() else {
        return Err(CliError::Usage(
            "campaign: which subcommand? `dbmeter campaign run FILE`".into(),
        ));
    };
    match sub.as_str() {
        "run" => {}
        "-h" | "--help" | "help" => {
            print!("{HELP}");
            return Ok(0);
        }
        other => {
            return Err(CliError::Usage(format!(
                "campaign {other}: unknown subcommand (expected `campaign run FILE`)"
            )));
        }
    }
    while let Some(a) = it.next() {
        match a.as_str() {
            "--resume" => resume = true,
            "--dry-run" => dry_run = true,
            "-h" | "--help" => {
                print!("{HELP}");
                return Ok(0);
            }
            "--store" => {
                store = Some(
                    it.next()
                        .ok_or_else(|| CliError::Usage("--store needs a path or URL".into()))?
                        .clone(),
                )
            }
            s if s.starts_with("--store=") => store = Some(s["--store=".len()..].to_string()),
            s if s.starts_with('-') => {
                return Err(CliError::Usage(format!(
                    "campaign run: unknown option {s} (--resume, --dry-run, --store)"
                )));
            }
            s if file.is_none() => file = Some(s.to_string()),
            s => {
                return Err(CliError::Usage(format!(
                    "campaign run: one campaign file only ('{s}' is extra)"
                )));
            }
        }
    }
    let Some(file) = file else {
        return Err(CliError::Usage(
            "campaign run: which file? `dbmeter campaign run FILE`".into(),
        ));
    };
    let campaign = Campaign::load(
        Path::new(&file),
        dbmeter_run::options::GENERAL,
        dbmeter_run::options::ALIASES,
    )
    .map_err(CliError::Failed)?;
    check(&campaign).map_err(CliError::Failed)?;
    let store = store_spec(
        &campaign,
        store.as_deref(),
        &super::results::store_spec(None)?,
    );
    if dry_run {
        let (cells, skipped) = if resume {
            let mut st = Store::open(&store).map_err(|e| CliError::Failed(e.0))?;
            todo(&campaign, &mut st, true).map_err(CliError::Failed)?
        } else {
            (dbmeter_campaign::plan::cells(&campaign), 0)
        };
        print!("{}", describe(&campaign, &store, &cells, skipped));
        return Ok(0);
    }
    let opts = RunOptions {
        store,
        resume,
        stop: crate::signals::stop_handle(),
        prepare_threads: std::thread::available_parallelism().map_or(2, |n| n.get()),
    };
    let mut say = |l: &str| println!("{l}");
    let s = dbmeter_campaign::run(&campaign, &opts, &mut say).map_err(CliError::Failed)?;
    println!(
        "campaign '{}': {} stored, {} failed, {} skipped of {} runs; results in {}",
        campaign.name, s.stored, s.failed, s.skipped, s.cells, s.store
    );
    Ok(if s.interrupted {
        crate::signals::interrupted_code()
    } else if s.failed > 0 {
        1
    } else {
        0
    })
}
