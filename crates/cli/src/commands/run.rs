//! `run`: drive the workload, print progress and the report, write results.

use super::data::{oltp_settings, print_load};
use super::record::Recorder;
use super::{Ctx, VERSION, block_on};
use crate::CliError;
use crate::setup;
use dbmeter_db::{ConnectOptions, Connection};
use dbmeter_engine::{EndReason, EngineConfig, IntervalSample, RunResult, StopHandle, UserFactory};
use dbmeter_env::Environment;
use dbmeter_report::{Interval, ReportContext, RunReport, TargetInfo, csv, text};
use dbmeter_workloads::Workload;
use dbmeter_workloads::noop::NoopFactory;
use dbmeter_workloads::oltp::{self, OltpFactory};
use std::fs::File;
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::AtomicI64;
use std::time::SystemTime;

/// Where the human-readable lines go: stdout, unless stdout carries the
/// JSON or CSV document.
pub(crate) struct Console {
    pub(crate) to_stdout: bool,
}

impl Console {
    pub(crate) fn line(&self, s: &str) {
        if self.to_stdout {
            println!("{s}");
        } else {
            eprintln!("{s}");
        }
    }
}

pub(crate) fn install_ctrl_c(stop: &StopHandle) {
    let stop = stop.clone();
    // A second Ctrl-C ends the program at once.
    let _ = ctrlc::set_handler(move || {
        if stop.is_stopped() {
            std::process::exit(130);
        }
        stop.stop();
    });
}

pub fn run(ctx: &Ctx) -> Result<i32, CliError> {
    let o = &ctx.values;
    let format = o.str("format").to_ascii_lowercase();
    let output_path = o.str("output").to_string();
    let console = Console {
        to_stdout: format == "text" || !output_path.is_empty(),
    };
    // Check the output path before spending time on a run.
    let mut output =
        if output_path.is_empty() {
            None
        } else {
            Some(File::create(&output_path).map_err(|e| {
                CliError::Failed(format!("cannot write --output {output_path}: {e}"))
            })?)
        };
    // Open the results store first too: a bad one fails before the run.
    let mut run_store = super::results::RunStore::open(o, &ctx.tags)?;
    let seed = setup::seed(o);
    let mut engine = setup::engine_config(o, ctx.target.as_ref(), seed)?;
    let query_timeout = setup::query_timeout(o)?;
    let stop = StopHandle::new();

    let mut tpcc_run = None;
    let ((result, recorder), server_version) = match ctx.info.workload {
        Workload::Noop => {
            header(&console, ctx, &engine, "none");
            install_ctrl_c(&stop);
            (
                drive(&engine, Arc::new(NoopFactory), &stop, &console, ctx)?,
                String::new(),
            )
        }
        Workload::Tpcc => {
            let setup = super::tpcc::run_setup(ctx, seed, query_timeout, &mut engine)?;
            let version = setup.version.clone();
            header(&console, ctx, &engine, &version);
            install_ctrl_c(&stop);
            let (r, x) = super::tpcc::drive(&engine, setup, &stop, &console, ctx)?;
            tpcc_run = Some(x);
            (r, version)
        }
        Workload::Oltp(_) => {
            let Some((cfg, connect)) = oltp_settings(ctx)? else {
                return Err(CliError::Failed("this workload needs a database".into()));
            };
            super::data::require_database_file(ctx)?;
            let (readiness, version) = block_on((|| {
                let mut conn = Connection::connect(&connect)?;
                let r = oltp::check_ready(&mut conn, &cfg)?;
                Ok::<_, dbmeter_db::DbError>((r, conn.server_version()))
            })())??;
            let mut readiness = readiness;
            if !readiness.missing.is_empty() {
                if !connect.target.is_implicit() {
                    return Err(CliError::Failed(format!(
                        "table {} does not exist in {}; run `dbmeter prepare {}` with the same options first",
                        readiness.missing[0], connect.target, ctx.info.name
                    )));
                }
                console.line(&format!(
                    "No {} table{} in {} yet: preparing {} now (as `dbmeter prepare {}` would).",
                    readiness.missing.join(", "),
                    if readiness.missing.len() == 1 {
                        ""
                    } else {
                        "s"
                    },
                    connect.target,
                    if readiness.missing.len() == 1 {
                        "it"
                    } else {
                        "them"
                    },
                    ctx.info.name
                ));
                let say = |l: String| console.line(&l);
                let r = block_on(oltp::prepare(
                    &connect,
                    &cfg,
                    seed,
                    true,
                    engine.threads,
                    &say,
                    &oltp::LoadProgress::default(),
                ))??;
                if console.to_stdout {
                    print_load("Loaded", &r);
                }
                readiness = block_on((|| {
                    let mut conn = Connection::connect(&connect)?;
                    oltp::check_ready(&mut conn, &cfg)
                })())??;
            }
            if let Some(rows) = readiness.first_table_rows
                && rows as u64 != cfg.table_size
                && cfg.table_size > 0
                && !matches!(cfg.kind, oltp::OltpKind::BulkInsert)
            {
                console.line(&format!(
                    "note: sbtest1 has {rows} rows but --table-size is {}; ids are drawn from 1..{}",
                    cfg.table_size, cfg.table_size
                ));
            }
            let factory = OltpFactory {
                cfg: Arc::new(cfg),
                ignore: setup::ignore_list(o, &connect.target),
                seed,
                next_insert_id: Arc::new(AtomicI64::new(readiness.max_id + 1)),
                connect: ConnectOptions {
                    query_timeout,
                    ..connect
                },
            };
            header(&console, ctx, &engine, &version);
            install_ctrl_c(&stop);
            (
                drive(&engine, Arc::new(factory), &stop, &console, ctx)?,
                version,
            )
        }
    };

    let mut report = RunReport::new(
        ReportContext {
            workload: ctx.info.name.to_string(),
            target: TargetInfo {
                url: ctx.target.as_ref().map_or(String::new(), |t| t.to_string()),
                driver: ctx
                    .target
                    .as_ref()
                    .map_or("none", |t| t.driver())
                    .to_string(),
                server_version,
            },
            options: o
                .all()
                .iter()
                .filter(|(k, _)| {
                    !super::data::SECRET_OPTIONS.contains(&k.as_str())
                        && !super::results::STORE_OPTIONS.contains(&k.as_str())
                })
                .map(|(k, v)| match (k.as_str(), &ctx.target) {
                    ("ignore-errors", Some(t)) => {
                        (k.clone(), setup::ignore_list(o, t).to_option_value())
                    }
                    ("db", _) => (k.clone(), dbmeter_db::mask_password(v)),
                    _ => (k.clone(), v.clone()),
                })
                .collect(),
            seed,
            started_at: humantime::format_rfc3339_seconds(
                SystemTime::now() - result.measured.duration - engine.warmup,
            )
            .to_string(),
            environment: Environment::collect(),
            version: VERSION.to_string(),
            build: format!(
                "{} {}-{}",
                if cfg!(debug_assertions) {
                    "debug"
                } else {
                    "release"
                },
                std::env::consts::ARCH,
                std::env::consts::OS
            ),
        },
        &result,
        &engine.percentiles,
    );
    recorder.finish(&mut report);
    if let Some(x) = tpcc_run {
        report.tpcc = Some(super::tpcc::section(&x, &result));
    }
    let document = match format.as_str() {
        "json" => report.to_json() + "\n",
        "csv" => csv::intervals(&report, &engine.percentiles),
        _ => String::new(),
    };
    if console.to_stdout {
        println!();
        print!("{}", text::final_report(&report));
        if o.bool("histogram") {
            println!();
            print!("{}", text::histogram(&result.measured.latency));
        }
    }
    let doc_text = if format == "text" {
        text::final_report(&report)
    } else {
        document
    };
    match output.as_mut() {
        Some(f) => f
            .write_all(doc_text.as_bytes())
            .and_then(|_| f.flush())
            .map_err(|e| CliError::Failed(format!("cannot write --output {output_path}: {e}")))?,
        None if !console.to_stdout => print!("{doc_text}"),
        None => {}
    }
    let _ = std::io::stdout().flush();
    // Interrupted and failed runs are stored too: what they measured.
    let stored = match run_store.as_mut().map(|st| st.save(&report.to_json())) {
        Some(Err(e)) => {
            eprintln!("dbmeter: {e}");
            false
        }
        _ => true,
    };
    match result.end {
        EndReason::Failed(m) => Err(CliError::Failed(format!(
            "{m} (the run stopped; the report above covers what was measured before)"
        ))),
        EndReason::Interrupted => {
            eprintln!(
                "dbmeter: interrupted: the report covers the {:.1} s measured before the stop",
                result.measured.duration.as_secs_f64()
            );
            Ok(130)
        }
        _ if !stored => Ok(1),
        _ => Ok(0),
    }
}

pub(crate) fn header(console: &Console, ctx: &Ctx, engine: &EngineConfig, version: &str) {
    let about = match (&ctx.target, version.is_empty()) {
        (Some(t), false) => format!(" ({t}, {version})"),
        (Some(t), true) => format!(" ({t})"),
        (None, _) => " (no database)".to_string(),
    };
    console.line(&format!("dbmeter {VERSION}{about}\n"));
    console.line(&format!(
        "Running {} with the following options:",
        ctx.info.name
    ));
    console.line(&format!("Number of threads: {}", engine.threads));
    if let Some(r) = engine.rate {
        console.line(&format!("Target transaction rate: {r}/sec"));
    }
    if ctx.values.f64("report-interval") > 0.0 {
        console.line(&format!(
            "Report intermediate results every {} second(s)",
            ctx.values.f64("report-interval")
        ));
    }
    if !engine.warmup.is_zero() {
        console.line(&format!(
            "Warming up for {} second(s) before measuring",
            engine.warmup.as_secs_f64()
        ));
    }
    console.line(&format!("Random seed: {}\n", engine.seed));
    console.line("Threads started!\n");
}

pub(crate) fn drive<F: UserFactory + 'static>(
    engine: &EngineConfig,
    factory: Arc<F>,
    stop: &StopHandle,
    console: &Console,
    ctx: &Ctx,
) -> Result<(RunResult, Recorder), CliError> {
    let o = &ctx.values;
    let recorder = Recorder::start(o, ctx.target.as_ref(), engine);
    let print = o.f64("report-interval") > 0.0;
    let pct = text::line_percentile(&engine.percentiles);
    let mut on_interval = |s: &IntervalSample| {
        if print {
            console.line(&text::interval_line(&Interval::from_sample(s), pct));
        }
    };
    let result = dbmeter_engine::run(engine, factory, stop, &mut on_interval)
        .map_err(|e| CliError::Failed(e.to_string()))?;
    Ok((result, recorder))
}
