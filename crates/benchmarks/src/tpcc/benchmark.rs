//! tpcc behind the [`Benchmark`] interface: prepare, check, cleanup, and a
//! run that reads the database's counters around the measurement for NOPM
//! and TPM, with its own section of the result.

use super::metrics::{self, Snapshot};
use super::random::NuConstants;
use super::report::{self as tpcc_report, PERCENTILES, TpccResult, TpccTransaction};
use super::schema::{self, TABLES};
use super::terminal::TpccFactory;
use super::{TpccConfig, TxKind, check, load, procedures};
use crate::benchmark::{BenchError, Benchmark, Context, RunPlan, Verb, no_such_verb, verb};
use crate::oltp::load_line;
use crate::options::{OptSpec, OptValues};
use dbmeter_db::{Connection, Dialect};
use dbmeter_engine::{RunResult, UserFactory};
use dbmeter_env::Warning;
use dbmeter_result::{RunDocument, RunEvent};
use dbmeter_stats::LatencySummary;
use std::sync::Arc;
use std::time::Duration;

/// The key of tpcc's section in the run document.
pub const SECTION: &str = "tpcc";

pub struct Tpcc;

impl Tpcc {
    fn config(ctx: &Context) -> Result<TpccConfig, BenchError> {
        TpccConfig::from_options(ctx.options)
    }

    /// The command that loads what a tpcc command misses.
    fn prepare_hint(ctx: &Context, cfg: &TpccConfig) -> String {
        format!(
            "run `dbmeter prepare tpcc --warehouses={}{}` first",
            cfg.warehouses,
            ctx.db_option()
        )
    }
}

/// The warehouses a run or check covers: `--warehouses` when given (they
/// must all be loaded), otherwise every loaded one. Fails with the prepare
/// hint when the tables or the warehouses are missing.
fn loaded_warehouses(
    conn: &mut Connection,
    cfg: &TpccConfig,
    hint: &str,
) -> Result<u64, BenchError> {
    let have = schema::existing_tables(conn)?;
    if let Some(missing) = TABLES.iter().find(|t| !have.contains(t)) {
        return Err(BenchError::Failed(format!(
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
        return Err(BenchError::Failed(format!(
            "no warehouse is loaded; {hint}"
        )));
    }
    let want = if cfg.warehouses_given {
        cfg.warehouses
    } else {
        max
    };
    if max < want || count < want {
        return Err(BenchError::Failed(format!(
            "{count} warehouse(s) loaded (largest id {max}), {want} needed; {hint}"
        )));
    }
    Ok(want)
}

impl Benchmark for Tpcc {
    fn name(&self) -> &str {
        "tpcc"
    }

    fn summary(&self) -> &str {
        "TPC-C-like: warehouses, the five transactions with the specification's mix; NOPM and TPM"
    }

    fn options(&self) -> Vec<OptSpec> {
        super::options()
    }

    fn check_options(&self, options: &OptValues) -> Result<(), BenchError> {
        TpccConfig::from_options(options).map(drop)
    }

    fn verbs(&self) -> Vec<Verb> {
        vec![
            verb(
                "prepare",
                "create and load the nine tables, in parallel by warehouse",
            ),
            verb(
                "check",
                "verify the row counts and the consistency conditions",
            ),
            verb("cleanup", "drop the tables and the stored procedures"),
        ]
    }

    fn dataset(&self) -> Option<String> {
        Some("tpcc".into())
    }

    fn writes(&self) -> bool {
        true
    }

    fn shards_prepare(&self) -> bool {
        true
    }

    fn command(&self, verb: &str, ctx: &Context) -> Result<(), BenchError> {
        match verb {
            "prepare" => prepare(ctx),
            "check" => run_check(ctx),
            "cleanup" => {
                let opts = ctx.setup_connection()?;
                let say = |l: String| ctx.say(&l);
                let dropped = load::cleanup(&opts, &say)?;
                if dropped.is_empty() {
                    ctx.say(&format!(
                        "No tpcc tables in {}: nothing to drop",
                        opts.target
                    ));
                } else {
                    ctx.say(&format!("Dropped {} table(s)", dropped.len()));
                }
                Ok(())
            }
            "prewarm" => Err(BenchError::Usage(
                "tpcc has no prewarm step; its warm-up is `dbmeter run tpcc --warmup-time=N`"
                    .into(),
            )),
            _ => Err(no_such_verb(self, verb)),
        }
    }

    fn known_kinds(&self, _options: &OptValues) -> Option<Vec<String>> {
        Some(kind_names())
    }

    fn plan(&self, ctx: &Context) -> Result<Box<dyn RunPlan>, BenchError> {
        let cfg = Self::config(ctx)?;
        let connect = ctx.setup_connection()?;
        if cfg.procedures && connect.target.dialect() == Dialect::Sqlite {
            return Err(BenchError::Usage(
                "--stored-procedures: SQLite has no stored procedures; use MySQL/MariaDB or PostgreSQL, or leave it off".into(),
            ));
        }
        let hint = Self::prepare_hint(ctx, &cfg);
        let mut conn = Connection::connect(&connect)?;
        let warehouses = loaded_warehouses(&mut conn, &cfg, &hint)?;
        if cfg.procedures {
            procedures::install(&mut conn).map_err(|e| {
                BenchError::Failed(format!(
                    "--stored-procedures: cannot create the procedures: {e}"
                ))
            })?;
        }
        let sessions_before = conn.other_sessions().unwrap_or(0);
        let users = TpccFactory {
            cfg: Arc::new(TpccConfig {
                warehouses,
                ..cfg.clone()
            }),
            warehouses,
            connect: ctx.user_connection()?,
            ignore: ctx.ignore.clone(),
            seed: ctx.seed,
            nu: NuConstants::for_run(ctx.seed),
            first_terminal: ctx.first_user(),
        };
        Ok(Box::new(TpccPlan {
            version: conn.server_version(),
            conn,
            cfg,
            warehouses,
            dialect: connect.target.dialect(),
            sessions_before,
            users: Arc::new(users),
            before: None,
            before_error: None,
        }))
    }

    fn report_text(&self, doc: &RunDocument) -> Option<String> {
        doc.section::<TpccResult>(SECTION)
            .map(|t| tpcc_report::text(&t))
    }

    fn headline(&self, doc: &RunDocument) -> Vec<(String, f64)> {
        doc.section::<TpccResult>(SECTION)
            .map(|t| vec![("NOPM".to_string(), t.nopm)])
            .unwrap_or_default()
    }
}

fn prepare(ctx: &Context) -> Result<(), BenchError> {
    let mut cfg = Tpcc::config(ctx)?;
    if let Some(shard) = ctx.shard {
        // The shard's block of the warehouses, as --warehouse-start and
        // --warehouse-end would give it.
        if cfg.range_given {
            return Err(BenchError::Usage(format!(
                "--shard={shard} picks the shard's warehouses itself: leave --warehouse-start and --warehouse-end out"
            )));
        }
        let r = shard.range(cfg.warehouses);
        if r.is_empty() {
            ctx.say(&format!(
                "Shard {shard}: no warehouse to load (--warehouses={} is split over {} shards)",
                cfg.warehouses, shard.count
            ));
            return Ok(());
        }
        (cfg.start, cfg.end) = (r.start + 1, r.end);
        ctx.say(&format!(
            "Shard {shard}: loading warehouses {} to {}",
            cfg.start, cfg.end
        ));
    }
    let opts = ctx.setup_connection()?;
    let say = |l: String| ctx.say(&l);
    let workers = ctx.threads;
    let r = load::prepare(&opts, &cfg, ctx.seed, workers, &say, ctx.console.progress())?;
    ctx.say(&load_line("Loaded", &r));
    let n = cfg.end - cfg.start + 1;
    ctx.say(&format!(
        "Load time per warehouse: {:.2} s ({} warehouse{}, {} thread{})",
        r.elapsed.as_secs_f64() / n as f64,
        n,
        if n == 1 { "" } else { "s" },
        workers,
        if workers == 1 { "" } else { "s" },
    ));
    Ok(())
}

fn run_check(ctx: &Context) -> Result<(), BenchError> {
    let cfg = Tpcc::config(ctx)?;
    let opts = ctx.setup_connection()?;
    let hint = Tpcc::prepare_hint(ctx, &cfg);
    let mut conn = Connection::connect(&opts)?;
    let w = loaded_warehouses(&mut conn, &cfg, &hint)?;
    let (start, end) = if cfg.range_given {
        (cfg.start, cfg.end)
    } else {
        (1, w)
    };
    let report = check::check(&mut conn, start, end)?;
    for l in &report.lines {
        ctx.say(&format!(
            "{} {}: {}",
            if l.ok { "ok    " } else { "FAILED" },
            l.name,
            l.detail
        ));
    }
    match report.failed().first() {
        None => {
            ctx.say("All checks passed");
            Ok(())
        }
        Some(first) => Err(BenchError::Failed(format!(
            "tpcc check failed: {} ({})",
            first.name, first.detail
        ))),
    }
}

/// A tpcc run: the terminals, and the counters read on a connection of its
/// own when the measurement starts and after it ends.
struct TpccPlan {
    version: String,
    conn: Connection,
    cfg: TpccConfig,
    warehouses: u64,
    dialect: Dialect,
    sessions_before: u64,
    users: Arc<TpccFactory>,
    before: Option<Snapshot>,
    before_error: Option<String>,
}

/// Its kinds: the five transactions, in [`TxKind::ALL`]'s order.
fn kind_names() -> Vec<String> {
    TxKind::ALL.iter().map(|k| k.name().to_string()).collect()
}

impl RunPlan for TpccPlan {
    fn server_version(&self) -> String {
        self.version.clone()
    }

    fn measures(&self) -> Vec<dbmeter_stats::Measure> {
        dbmeter_stats::measure::sql::MEASURES.to_vec()
    }

    /// tpcc's interval line: tpm and NOPM instead of tps and qps.
    fn own_words(&mut self, event: &RunEvent) -> Option<String> {
        match event {
            RunEvent::Interval {
                interval,
                percentile,
                ..
            } => Some(tpcc_report::interval_line(interval, *percentile)),
            _ => None,
        }
    }

    fn kinds(&self) -> Vec<String> {
        kind_names()
    }

    fn users(&self) -> Arc<dyn UserFactory> {
        self.users.clone()
    }

    fn measure_start(&mut self) {
        match metrics::snapshot(&mut self.conn, self.warehouses) {
            Ok(s) => self.before = Some(s),
            Err(e) => self.before_error = Some(e.to_string()),
        }
    }

    fn finish(&mut self, result: &RunResult, doc: &mut RunDocument) -> Vec<Warning> {
        let mut warnings = Vec::new();
        if let Some(e) = self.before_error.take() {
            warnings.push(Warning::new(
                "collection",
                format!("could not read the counters at the start of the measurement: {e}"),
            ));
        }
        let after = if result.abandoned > 0 {
            // Users were left waiting on a server that did not answer:
            // this connection would wait too.
            warnings.push(Warning::new(
                "collection",
                "could not read the counters after the run: the server did not answer at the end of the run",
            ));
            None
        } else {
            // PostgreSQL publishes a session's statistics when it ends.
            let _ = self
                .conn
                .settle_statistics(self.sessions_before, Duration::from_secs(3));
            match metrics::snapshot(&mut self.conn, self.warehouses) {
                Ok(s) => Some(s),
                Err(e) => {
                    warnings.push(Warning::new(
                        "collection",
                        format!("could not read the counters after the run: {e}"),
                    ));
                    None
                }
            }
        };
        // A server that restarted started its transaction counters again.
        let restarted = doc.counters.as_ref().is_some_and(|c| c.restarted);
        let section = section(self, result, after, restarted);
        doc.set_section(SECTION, &section);
        warnings
    }
}

/// tpcc's section of the result.
fn section(x: &TpccPlan, r: &RunResult, after: Option<Snapshot>, restarted: bool) -> TpccResult {
    let secs = r.measured.duration.as_secs_f64();
    let per_min = |n: f64| if secs > 0.0 { n * 60.0 / secs } else { 0.0 };
    let rates = match (&x.before, &after) {
        (Some(b), Some(a)) => Some(metrics::rates(b, a, secs)),
        _ => None,
    };
    let total: u64 = r.measured.kinds.iter().map(|k| k.events).sum();
    let client_tpm = per_min(total as f64);
    let server = rates
        .and_then(|r| r.server_transactions.zip(r.tpm))
        .filter(|_| !restarted);
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
            let latency = LatencySummary::from_histogram(&kr.latency, &PERCENTILES);
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
