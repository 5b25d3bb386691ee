//! `dbmeter campaign run FILE [--resume] [--dry-run] [--store=S]`.

use crate::CliError;
use dbmeter_campaign::{Campaign, RunOptions, describe, store_spec};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

pub const HELP: &str = "\
Usage: dbmeter campaign run FILE [--resume] [--dry-run] [--store=PATH|URL]

Runs the matrix a campaign file describes (targets x workloads x client
counts x repeats; see docs/campaigns.md): starts its managed servers,
prepares each dataset once per target, runs every cell and stores each
result in the results store the moment it ends.

  --resume      skip the cells already in the store (after Ctrl-C or a crash)
  --dry-run     print the plan and its estimated duration, run nothing
  --store=S     results store (default: the file's `store`, $DBMETER_STORE,
                or $DBMETER_HOME/results.db, as `dbmeter results`)

Exit codes: 0 every run stored, 1 some runs failed (they are stored as
failed, the others ran) or the file is wrong, 2 usage, 130 Ctrl-C.
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
        crate::general::GENERAL,
        crate::general::ALIASES,
    )
    .map_err(CliError::Failed)?;
    let store = store_spec(
        &campaign,
        store.as_deref(),
        &super::results::store_spec(None)?,
    );
    if dry_run {
        print!("{}", describe(&campaign, &store));
        return Ok(0);
    }
    let exe = std::env::current_exe()
        .map_err(|e| CliError::Failed(format!("cannot find the dbmeter binary: {e}")))?;
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        // The running cell gets the same Ctrl-C from the terminal and
        // stores its partial result; the campaign starts nothing after it.
        let _ = ctrlc::set_handler(move || stop.store(true, Ordering::Relaxed));
    }
    let opts = RunOptions {
        exe,
        store,
        resume,
        stop,
    };
    let mut say = |l: &str| println!("{l}");
    let s = dbmeter_campaign::run(&campaign, &opts, &mut say).map_err(CliError::Failed)?;
    println!(
        "campaign '{}': {} stored, {} failed, {} skipped of {} runs; results in {}",
        campaign.name, s.stored, s.failed, s.skipped, s.cells, s.store
    );
    Ok(if s.interrupted {
        130
    } else if s.failed > 0 {
        1
    } else {
        0
    })
}
