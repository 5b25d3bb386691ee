//! `dbmeter campaign run FILE [--resume] [--dry-run] [--store=S]`.

use crate::CliError;
use crate::help::{Example, Page, Sub, flag, opt};
use crate::subcommand_args::{Grammar, SubArgs};
use dbmeter_benchmarks::options::OptValues;
use dbmeter_campaign::{Campaign, RunOptions, check, describe, store_spec, todo};
use dbmeter_store::Store;
use std::path::Path;
use std::sync::Arc;

pub const PAGE: Page = Page {
    usage: &[
        "campaign run FILE [--resume] [--dry-run] [--store=PATH|URL] [--prometheus=ADDR] [--shard=I/N]",
    ],
    about: &[
        "Runs the matrix a campaign file describes (targets x workloads x client \
              counts x repeats; see docs/campaigns.md): starts its managed servers, \
              prepares each dataset once per target, runs every cell and stores each \
              result in the results store the moment it ends.",
    ],
    subs: &[Sub {
        name: "run",
        args: "FILE",
        help: "run the campaign FILE (TOML)",
        options: &[
            flag(
                "resume",
                "skip the cells already stored as completed (after Ctrl-C, SIGTERM or a \
                 crash; an interrupted or failed cell runs again)",
            ),
            flag(
                "dry-run",
                "check every target and workload, print the plan (with --resume: the \
                 cells still to run) and its estimated duration; run nothing",
            ),
            opt("store", "PATH|URL", "results store")
                .default("the file's `store`, $DBMETER_STORE, or $DBMETER_HOME/results.db"),
            opt(
                "shard",
                "I/N",
                "run the campaign as N processes, this one shard I (0 to N-1): every cell \
                 with its share of the users and events, all shards started together by a \
                 barrier in the shared results store, and shard 0 storing the merged run \
                 (docs/shards.md)",
            ),
            opt(
                "prometheus",
                "ADDR",
                "serve live metrics for Prometheus at http://ADDR/metrics while the campaign \
                 runs: every cell's run and the campaign's progress (cells done, the cell \
                 running); ADDR is HOST:PORT or :PORT (docs/metrics.md)",
            ),
            opt(
                "prometheus-linger",
                "SECS",
                "with --prometheus: seconds the endpoint stays up after the last cell",
            )
            .default("0"),
        ],
    }],
    examples: &[
        Example {
            what: "See what a campaign would run and how long it would take",
            command: "campaign run bp-size.toml --dry-run",
        },
        Example {
            what: "Go on after an interruption",
            command: "campaign run bp-size.toml --resume",
        },
        Example {
            what: "Shard 1 of 4 processes that run one campaign together",
            command: "campaign run bp-size.toml --shard=1/4 --store=postgres://dbmeter@results/dbmeter",
        },
    ],
    exit: "0 every run stored, 1 some runs failed (they are stored as failed, the others \
           ran) or the file is wrong, 2 usage, 3 every run stored but some missed their \
           `assert` targets, 130 Ctrl-C (SIGINT), 143 SIGTERM: the running cell stops within \
           a second and is stored as interrupted.",
    ..Page::new("campaign", "a matrix of runs from a TOML file, stored")
};

pub fn main(args: &[String]) -> Result<i32, CliError> {
    let Some(sub) = args.first() else {
        return Err(CliError::Usage(
            "campaign: which subcommand? `dbmeter campaign run FILE`".into(),
        ));
    };
    match sub.as_str() {
        "run" => {}
        "-h" | "--help" | "help" => return crate::help::print_page(&PAGE),
        other => {
            return Err(CliError::Usage(format!(
                "campaign {other}: unknown subcommand (expected `campaign run FILE`)"
            )));
        }
    }
    let a = SubArgs::parse(
        &args[1..],
        &Grammar {
            options: &PAGE.options_of(Some("run")),
            command: "campaign run",
            help: "`dbmeter help campaign`",
        },
    )?;
    let (resume, dry_run, store) = (a.flag("resume"), a.flag("dry-run"), a.get("store"));
    let prometheus = {
        let mut o = OptValues::from_defaults(dbmeter_run::options::GENERAL);
        for name in dbmeter_run::options::METRICS_OPTIONS {
            if let Some(v) = a.get(name) {
                o.set(name, v);
            }
        }
        dbmeter_run::settings::prometheus(&o)?
    };
    let file = match a.words.as_slice() {
        [] => {
            return Err(CliError::Usage(
                "campaign run: which file? `dbmeter campaign run FILE`".into(),
            ));
        }
        [file] => file.clone(),
        [_, extra, ..] => {
            return Err(CliError::Usage(format!(
                "campaign run: one campaign file only ('{extra}' is extra)"
            )));
        }
    };
    let campaign = Campaign::load(
        Path::new(&file),
        dbmeter_run::options::GENERAL,
        dbmeter_run::options::ALIASES,
    )
    .map_err(CliError::Failed)?;
    check(&campaign).map_err(CliError::Failed)?;
    let shard = a
        .get("shard")
        .map(dbmeter_benchmarks::shard::Shard::parse)
        .transpose()
        .map_err(CliError::Usage)?;
    dbmeter_campaign::check_shards(&campaign, shard).map_err(CliError::Failed)?;
    let store = store_spec(&campaign, store, &super::results::store_spec(None)?);
    if dry_run {
        let (cells, skipped) = if resume {
            let mut st = Store::open(&store).map_err(|e| CliError::Failed(e.0))?;
            todo(&campaign, &mut st, true).map_err(CliError::Failed)?
        } else {
            (dbmeter_campaign::plan::cells(&campaign), 0)
        };
        print!("{}", describe(&campaign, &store, &cells, skipped));
        if let Some(s) = shard {
            println!(
                "shard {s}: each cell with this shard's share of its clients, all {} shards started together at a barrier in the store (shard_timeout {} s, start_margin {} s); shard 0 prepares, runs the hooks and stores each cell merged",
                s.count, campaign.shard_timeout, campaign.start_margin
            );
        }
        return Ok(0);
    }
    let metrics = crate::metrics::open(prometheus.as_ref())?;
    let opts = RunOptions {
        store,
        resume,
        shard,
        stop: crate::signals::stop_handle(),
        prepare_threads: std::thread::available_parallelism().map_or(2, |n| n.get()),
        watch: metrics.clone().map(|m| {
            Arc::new(crate::metrics::CampaignWatch(m)) as Arc<dyn dbmeter_campaign::Watch>
        }),
    };
    let mut say = |l: &str| println!("{l}");
    let s = dbmeter_campaign::run(&campaign, &opts, &mut say);
    drop(opts);
    crate::metrics::close(metrics, prometheus.as_ref());
    let s = s.map_err(CliError::Failed)?;
    let missed = if s.missed > 0 {
        format!(" ({} missed their assert targets)", s.missed)
    } else {
        String::new()
    };
    println!(
        "campaign '{}': {} stored{missed}, {} failed, {} skipped of {} runs; results in {}",
        campaign.name, s.stored, s.failed, s.skipped, s.cells, s.store
    );
    if !s.adaptive.is_empty() {
        println!("adaptive repeats, per cell:");
        for (cell, how) in &s.adaptive {
            println!("  {cell}: {how}");
        }
    }
    Ok(if s.interrupted {
        crate::signals::interrupted_code()
    } else if s.failed > 0 {
        1
    } else if s.missed > 0 {
        super::run::TARGETS_MISSED
    } else {
        0
    })
}
