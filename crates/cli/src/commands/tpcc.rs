//! `prepare`, `cleanup`, `check` and `run` of the tpcc workload.

use super::data::{print_load, require_database_file};
use super::record::Recorder;
use super::run::Console;
use super::{Ctx, block_on};
use crate::CliError;
use crate::progress::with_load_bar;
use crate::setup;
use dbmeter_db::{ConnectOptions, Connection, Dialect};
use dbmeter_engine::{EngineConfig, IntervalSample, RunResult, StopHandle};
use dbmeter_report::tpcc::{self as tpcc_report, TpccResult, TpccTransaction};
use dbmeter_report::{Interval, text};
use dbmeter_stats::LatencySummary;
use dbmeter_workloads::tpcc::metrics::{self, Snapshot};
use dbmeter_workloads::tpcc::random::NuConstants;
use dbmeter_workloads::tpcc::terminal::TpccFactory;
use dbmeter_workloads::tpcc::{TpccConfig, TxKind, check as tpcc_check, load, procedures, schema};
use std::sync::Arc;
use std::time::Duration;

/// The tpcc settings and connection options of a command.
pub(crate) fn settings(ctx: &Ctx) -> Result<(TpccConfig, ConnectOptions), CliError> {
    let cfg = TpccConfig::from_options(&ctx.values).map_err(CliError::Usage)?;
    let Some(target) = ctx.target.clone() else {
        return Err(CliError::Failed("tpcc needs a database".into()));
    };
    Ok((cfg, setup::connect_options(&ctx.values, target)))
}

/// The command that loads what a tpcc command misses.
pub(crate) fn prepare_hint(ctx: &Ctx) -> String {
    let db = ctx.values.str("db");
    let db = if db.is_empty() {
        String::new()
    } else {
        format!(" --db={}", dbmeter_db::mask_password(db))
    };
    format!(
        "run `dbmeter prepare tpcc --warehouses={}{db}` first",
        ctx.values.u64("warehouses")
    )
}

pub fn prepare(ctx: &Ctx) -> Result<i32, CliError> {
    let (cfg, opts) = settings(ctx)?;
    let seed = setup::seed(&ctx.values);
    let workers = setup::threads(&ctx.values)?;
    let r = with_load_bar(|say, progress| {
        block_on(load::prepare(&opts, &cfg, seed, workers, say, progress))
    })??;
    print_load("Loaded", &r);
    let n = cfg.end - cfg.start + 1;
    println!(
        "Load time per warehouse: {:.2} s ({} warehouse{}, {} thread{})",
        r.elapsed.as_secs_f64() / n as f64,
        n,
        if n == 1 { "" } else { "s" },
        workers,
        if workers == 1 { "" } else { "s" },
    );
    Ok(0)
}

pub fn cleanup(ctx: &Ctx) -> Result<i32, CliError> {
    let (_, opts) = settings(ctx)?;
    let say = |l: String| println!("{l}");
    let dropped = block_on(load::cleanup(&opts, &say))??;
    if dropped.is_empty() {
        println!("No tpcc tables in {}: nothing to drop", opts.target);
    } else {
        println!("Dropped {} table(s)", dropped.len());
    }
    Ok(0)
}

/// The warehouses a run or check covers: `--warehouses` when given
/// (they must all be loaded), otherwise every loaded one. Fails with the
/// prepare hint when the tables or the warehouses are missing.
pub(crate) fn loaded_warehouses(
    conn: &mut Connection,
    cfg: &TpccConfig,
    hint: &str,
) -> Result<u64, CliError> {
    let have = schema::existing_tables(conn)?;
    if let Some(missing) = schema::TABLES.iter().find(|t| !have.contains(t)) {
        return Err(CliError::Failed(format!(
            "table {missing} does not exist; {hint}"
        )));
    }
    let count = conn
        .query_i64("SELECT COUNT(*) FROM warehouse")?
        .unwrap_or(0) as u64;
    let max = conn
        .query_i64("SELECT MAX(w_id) FROM warehouse")?
        .unwrap_or(0) as u64;
    if count == 0 {
        return Err(CliError::Failed(format!("no warehouse is loaded; {hint}")));
    }
    let want = if cfg.warehouses_given {
        cfg.warehouses
    } else {
        max
    };
    if max < want || count < want {
        return Err(CliError::Failed(format!(
            "{count} warehouse(s) loaded (largest id {max}), {want} needed; {hint}"
        )));
    }
    Ok(want)
}

pub fn check(ctx: &Ctx) -> Result<i32, CliError> {
    if ctx.info.workload != dbmeter_workloads::Workload::Tpcc {
        return Err(CliError::Usage(format!(
            "`check` verifies tpcc's tables; {} has no check",
            ctx.info.name
        )));
    }
    require_database_file(ctx)?;
    let (cfg, opts) = settings(ctx)?;
    let hint = prepare_hint(ctx);
    let report = block_on((|| {
        let mut conn = Connection::connect(&opts)?;
        let w = loaded_warehouses(&mut conn, &cfg, &hint)?;
        let (start, end) =
            if ctx.values.given("warehouse-start") || ctx.values.given("warehouse-end") {
                (cfg.start, cfg.end)
            } else {
                (1, w)
            };
        Ok::<_, CliError>(tpcc_check::check(&mut conn, start, end)?)
    })())??;
    for l in &report.lines {
        println!(
            "{} {}: {}",
            if l.ok { "ok    " } else { "FAILED" },
            l.name,
            l.detail
        );
    }
    match report.failed().first() {
        None => {
            println!("All checks passed");
            Ok(0)
        }
        Some(first) => Err(CliError::Failed(format!(
            "tpcc check failed: {} ({})",
            first.name, first.detail
        ))),
    }
}

/// What a tpcc run needs before its users start.
pub(crate) struct RunSetup {
    pub version: String,
    factory: TpccFactory,
    connect: ConnectOptions,
}

/// What a tpcc run keeps for its section of the report.
pub(crate) struct TpccRun {
    cfg: TpccConfig,
    warehouses: u64,
    dialect: Dialect,
    before: Option<Snapshot>,
    after: Option<Snapshot>,
}

/// Checks the tables (one line with the prepare command when they are
/// missing), installs the stored procedures when asked for, and makes the
/// terminals' factory.
pub(crate) fn run_setup(
    ctx: &Ctx,
    seed: u64,
    query_timeout: Option<Duration>,
    engine: &mut EngineConfig,
) -> Result<RunSetup, CliError> {
    require_database_file(ctx)?;
    let (cfg, connect) = settings(ctx)?;
    if cfg.procedures && connect.target.dialect() == Dialect::Sqlite {
        return Err(CliError::Usage(
            "--stored-procedures: SQLite has no stored procedures; use MySQL/MariaDB or PostgreSQL, or leave it off".into(),
        ));
    }
    let hint = prepare_hint(ctx);
    let (warehouses, version) = block_on((|| {
        let mut conn = Connection::connect(&connect)?;
        let w = loaded_warehouses(&mut conn, &cfg, &hint)?;
        if cfg.procedures {
            procedures::install(&mut conn).map_err(|e| {
                CliError::Failed(format!(
                    "--stored-procedures: cannot create the procedures: {e}"
                ))
            })?;
        }
        Ok::<_, CliError>((w, conn.server_version()))
    })())??;
    engine.kinds = TxKind::ALL.len();
    let factory = TpccFactory {
        cfg: Arc::new(TpccConfig { warehouses, ..cfg }),
        warehouses,
        connect: ConnectOptions {
            query_timeout,
            ..connect.clone()
        },
        ignore: setup::ignore_list(&ctx.values, &connect.target),
        seed,
        nu: NuConstants::for_run(seed),
    };
    Ok(RunSetup {
        version,
        factory,
        connect,
    })
}

/// Runs the terminals, reading the database's counters when the
/// measurement starts and after it ends.
pub(crate) fn drive(
    engine: &EngineConfig,
    setup: RunSetup,
    stop: &StopHandle,
    console: &Console,
    ctx: &Ctx,
) -> Result<((RunResult, Recorder), TpccRun), CliError> {
    let o = &ctx.values;
    let warehouses = setup.factory.warehouses;
    let cfg = (*setup.factory.cfg).clone();
    let dialect = setup.connect.target.dialect();
    let recorder = Recorder::start(o, ctx.target.as_ref(), engine);
    let mut conn = Connection::connect(&setup.connect)?;
    let sessions_before = conn.other_sessions().unwrap_or(0);
    let print = o.f64("report-interval") > 0.0;
    let pct = text::line_percentile(&engine.percentiles);
    let mut on_interval = |s: &IntervalSample| {
        if print {
            console.line(&text::tpcc_interval_line(&Interval::from_sample(s), pct));
        }
    };
    let mut before = None;
    let result = {
        let mut on_start = || match metrics::snapshot(&mut conn, warehouses) {
            Ok(s) => before = Some(s),
            Err(e) => eprintln!(
                "WARNING: could not read the counters at the start of the measurement: {e}"
            ),
        };
        dbmeter_engine::run_observed(
            engine,
            Arc::new(setup.factory),
            stop,
            &mut on_interval,
            &mut on_start,
        )
        .map_err(|e| CliError::Failed(e.to_string()))?
    };
    // PostgreSQL publishes a session's statistics when it ends.
    let _ = conn.settle_statistics(sessions_before, Duration::from_secs(3));
    let after = metrics::snapshot(&mut conn, warehouses);
    let after = match after {
        Ok(s) => Some(s),
        Err(e) => {
            eprintln!("WARNING: could not read the counters after the run: {e}");
            None
        }
    };
    drop(conn);
    Ok((
        (result, recorder),
        TpccRun {
            cfg,
            warehouses,
            dialect,
            before,
            after,
        },
    ))
}

/// The tpcc section of the report.
pub(crate) fn section(x: &TpccRun, r: &RunResult) -> TpccResult {
    let secs = r.measured.duration.as_secs_f64();
    let per_min = |n: f64| if secs > 0.0 { n * 60.0 / secs } else { 0.0 };
    let rates = match (&x.before, &x.after) {
        (Some(b), Some(a)) => Some(metrics::rates(b, a, secs)),
        _ => None,
    };
    let total: u64 = r.measured.kinds.iter().map(|k| k.events).sum();
    let client_tpm = per_min(total as f64);
    let server = rates.and_then(|r| r.server_transactions.zip(r.tpm));
    let tpm_source = match (x.dialect, server) {
        (Dialect::Mysql, Some(_)) => "Com_commit+Com_rollback",
        (Dialect::Postgres, Some(_)) => "xact_commit+xact_rollback",
        _ => "client",
    };
    let nopm = rates.map_or(0.0, |r| r.nopm);
    let transactions: Vec<TpccTransaction> = TxKind::ALL
        .iter()
        .map(|&k| {
            let kr = r
                .measured
                .kinds
                .get(k as usize)
                .cloned()
                .unwrap_or_default();
            let latency = LatencySummary::from_histogram(&kr.latency, &tpcc_report::PERCENTILES);
            let limit_ms = k.p90_limit_s() * 1000.0;
            TpccTransaction {
                name: k.name().to_string(),
                count: kr.events,
                share_pct: if total > 0 {
                    kr.events as f64 * 100.0 / total as f64
                } else {
                    0.0
                },
                min_share_pct: k.min_share(),
                rollbacks: kr.rolled_back,
                retries: kr.retries,
                p90_ok: latency.get(90.0).unwrap_or(0.0) <= limit_ms,
                latency_ms: latency,
                p90_limit_ms: limit_ms,
            }
        })
        .collect();
    TpccResult {
        warehouses: x.warehouses,
        mode: if x.cfg.procedures {
            "procedures"
        } else {
            "client"
        }
        .into(),
        new_orders: rates.map_or(0, |r| r.new_orders),
        nopm,
        tpm: server.map_or(client_tpm, |(_, tpm)| tpm),
        tpm_source: tpm_source.into(),
        server_transactions: server.map(|(n, _)| n),
        client_tpm,
        // Only at the specification's own times (12.86 is their maximum).
        efficiency_pct: (x.cfg.keying == 1.0 && x.cfg.think == 1.0)
            .then(|| nopm * 100.0 / (12.86 * x.warehouses as f64)),
        mix_ok: total > 0 && transactions.iter().all(|t| t.share_pct >= t.min_share_pct),
        response_times_ok: transactions.iter().all(|t| t.p90_ok),
        transactions,
    }
}
