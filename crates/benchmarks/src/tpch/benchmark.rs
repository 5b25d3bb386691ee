//! tpch behind the [`Benchmark`] interface: prepare (into a database or
//! .tbl files), check (row counts, the official answers, another
//! engine's answers), cleanup, queries (the SQL of a stream), and a run:
//! the power or throughput test with the DBT3 automation's options.

use super::check::{self, CheckConfig};
use super::load::{self, PrepareConfig};
use super::report::{self as tpch_report, SECTION, TpchResult};
use super::stream::{self, Extract, RunSpec, Shared, StreamFactory};
use super::{Dialect, TpchConfig, min_streams, qgen, queries, refresh, sf_text};
use crate::benchmark::{BenchError, Benchmark, Context, RunPlan, Verb, no_such_verb, verb};
use crate::options::{OptSpec, OptValues};
use dbmeter_db::Connection;
use dbmeter_engine::{EngineConfig, RunResult, UserFactory};
use dbmeter_env::Warning;
use dbmeter_result::RunDocument;
use std::sync::Arc;
use std::time::Duration;

pub struct Tpch;

/// The command that loads what a tpch command misses.
fn prepare_hint(ctx: &Context, cfg: &TpchConfig) -> String {
    let db = ctx.db_option();
    let sf = if cfg.sf_given {
        format!(" --scale-factor={}", sf_text(cfg.sf))
    } else {
        String::new()
    };
    format!("run `dbmeter prepare tpch{sf}{db}` first")
}

fn usage(e: String) -> BenchError {
    BenchError::Usage(e)
}

/// Loaders of a prepare: `--threads` when given, else one per CPU.
fn workers(ctx: &Context, cfg: &TpchConfig) -> usize {
    if cfg.threads_given {
        ctx.threads.max(1)
    } else {
        std::thread::available_parallelism().map_or(2, |n| n.get())
    }
}

impl Benchmark for Tpch {
    fn name(&self) -> &str {
        "tpch"
    }

    fn summary(&self) -> &str {
        "TPC-H-like: the 22 analytic queries, refresh functions, power and throughput tests; DBT3's per-query runs"
    }

    fn options(&self) -> Vec<OptSpec> {
        super::options()
    }

    fn check_options(&self, options: &OptValues) -> Result<(), BenchError> {
        TpchConfig::from_options(options).map(drop)
    }

    fn verbs(&self) -> Vec<Verb> {
        vec![
            verb(
                "prepare",
                "create and load the eight tables, then keys, indexes and statistics (--output=DIR: write .tbl files instead)",
            ),
            verb(
                "check",
                "verify the row counts; --validation: the answers against the official SF1 answers; --against=URL: against another target's",
            ),
            verb("cleanup", "drop the tables"),
            verb(
                "queries",
                "print the SQL a query stream runs (--stream=N, --db for the dialect)",
            ),
        ]
    }

    fn dataset(&self) -> Option<String> {
        Some("tpch".into())
    }

    fn writes(&self) -> bool {
        // The refresh functions insert and delete orders.
        true
    }

    fn command(&self, verb: &str, ctx: &Context) -> Result<(), BenchError> {
        let cfg = TpchConfig::from_options(ctx.options)?;
        match verb {
            "prepare" => {
                if !cfg.output.is_empty() {
                    return load::write_files(
                        ctx,
                        std::path::Path::new(&cfg.output),
                        cfg.sf,
                        workers(ctx, &cfg),
                        cfg.update_sets,
                    );
                }
                if cfg.update_sets > 0 {
                    return Err(usage(
                        "--update-sets writes files: give --output=DIR too (runs make their update sets themselves)".into(),
                    ));
                }
                let prepare = PrepareConfig {
                    sf: cfg.sf,
                    index_time: cfg.index_time,
                    foreign_keys: cfg.foreign_keys,
                    workers: workers(ctx, &cfg),
                };
                load::prepare(ctx, &ctx.setup_connection()?, &prepare)
            }
            "check" => {
                let opts = ctx.setup_connection()?;
                let against = match &cfg.against {
                    None => None,
                    Some(url) => Some(dbmeter_db::ConnectOptions {
                        target: dbmeter_db::Target::parse(url)?,
                        ..opts.clone()
                    }),
                };
                let check = CheckConfig {
                    queries: cfg.queries.clone(),
                    validation: cfg.validation,
                    seed: stream::qgen_seed(ctx.seed),
                    against,
                };
                check::check(ctx, &opts, &check, &prepare_hint(ctx, &cfg))
            }
            "cleanup" => {
                let opts = ctx.setup_connection()?;
                let dropped = load::cleanup(&opts)?;
                if dropped.is_empty() {
                    ctx.say(&format!(
                        "No TPC-H tables in {}: nothing to drop",
                        opts.target
                    ));
                } else {
                    ctx.say(&format!("Dropped {} table(s)", dropped.len()));
                }
                Ok(())
            }
            "queries" => print_queries(ctx, &cfg),
            _ => Err(no_such_verb(self, verb)),
        }
    }

    fn known_kinds(&self, _options: &OptValues) -> Option<Vec<String>> {
        Some(stream::kinds())
    }

    fn plan(&self, ctx: &Context) -> Result<Box<dyn RunPlan>, BenchError> {
        let cfg = TpchConfig::from_options(ctx.options)?;
        let connect = ctx.setup_connection()?;
        let mut conn = Connection::connect(&connect)?;
        let (sf, next_set) = load::read_state(&mut conn, &prepare_hint(ctx, &cfg))?;
        if cfg.sf_given && (cfg.sf - sf).abs() > 1e-9 {
            return Err(BenchError::Failed(format!(
                "--scale-factor={}: the database holds SF {}; leave the option out or prepare SF {} elsewhere",
                sf_text(cfg.sf),
                sf_text(sf),
                sf_text(cfg.sf)
            )));
        }
        let streams = match (cfg.throughput, cfg.streams) {
            (false, _) => 1,
            (true, 0) => min_streams(sf),
            (true, n) => n,
        };
        if cfg.cold {
            if cfg.throughput {
                return Err(usage(
                    "--cold restarts the server before each query: it goes with the power test, not --test=throughput or full".into(),
                ));
            }
            if cfg.warmup_runs > 0 {
                return Err(usage(
                    "--cold and --warmup-runs contradict each other: a warm-up run warms what the restart empties".into(),
                ));
            }
            if ctx.server.is_none() {
                return Err(BenchError::Failed(format!(
                    "--cold restarts the server, and {} is not a server dbmeter manages: start one with `dbmeter server start`, or use a campaign's managed target",
                    connect.target
                )));
            }
        }
        if let Some(shard) = ctx.shard {
            if cfg.power {
                return Err(usage(if cfg.throughput {
                    format!(
                        "--shard={shard} with --test=full: its throughput test starts when the power test ends, which shards in other processes do not see; run --test=power in one process and --test=throughput with --shard"
                    )
                } else {
                    format!(
                        "--shard={shard} with --test=power: the power test is one stream, nothing to split; run it in one process (--test=throughput splits its streams over shards)"
                    )
                }));
            }
            if !cfg.validation && ctx.options.u64("rand-seed") == 0 {
                return Err(usage(format!(
                    "--shard={shard} with tpch: give every shard the same --rand-seed (or --validation), so that each stream gets the parameters one process would give it"
                )));
            }
        }
        let version = conn.server_version();
        let mut spec = RunSpec {
            dialect: conn.dialect(),
            mariadb: version.contains("MariaDB"),
            sf,
            power: cfg.power,
            throughput: cfg.throughput,
            streams,
            queries: cfg.queries.clone(),
            refresh: cfg.refresh,
            first_set: next_set,
            runs: cfg.runs,
            warmup_runs: cfg.warmup_runs,
            extract: cfg.extract,
            best_plan_count: cfg.best_plan_count,
            explain: cfg.explain,
            timeout: cfg.query_timeout,
            validation: cfg.validation,
            // A shard's seed is its own (derived from the run's); the
            // streams' parameters come from the run's, as in one process.
            seed: stream::qgen_seed(match ctx.shard {
                Some(_) => ctx.options.u64("rand-seed"),
                None => ctx.seed,
            }),
            cold: cfg.cold,
            hook_before: cfg.hook_before.clone(),
            hook_after: cfg.hook_after.clone(),
            shown_target: dbmeter_db::mask_password(&connect.target.to_string()),
            update_sets: Default::default(),
            mine: None,
        };
        if let Some(shard) = ctx.shard {
            // The run's users in order (query streams 1..S, then the
            // refresh stream): this shard's contiguous block of them, each
            // stream keeping its number (its query order and parameters).
            let users = spec.users();
            let r = shard.range(users as u64);
            if r.is_empty() {
                return Err(usage(format!(
                    "--shard={shard}: tpch's throughput test has {users} users ({streams} query streams{}); every shard needs one: give at least --streams={} or run fewer shards",
                    if spec.refresh {
                        " and the refresh stream"
                    } else {
                        ""
                    },
                    shard.count - u64::from(spec.refresh)
                )));
            }
            spec.mine = Some(r.start as usize..r.end as usize);
            let streams = spec.own_streams();
            ctx.say(&format!(
                "Shard {shard}: {}{}",
                match (streams.first(), streams.last()) {
                    (Some(a), Some(b)) if a == b => format!("query stream {a} of {}", spec.streams),
                    (Some(a), Some(b)) => format!("query streams {a} to {b} of {}", spec.streams),
                    _ => "no query stream".into(),
                },
                if spec.runs_refreshes() {
                    if streams.is_empty() {
                        "; the refresh stream"
                    } else {
                        " and the refresh stream"
                    }
                } else {
                    ""
                }
            ));
        }
        let sets = spec.sets_needed();
        if sets > 0 {
            refresh::reserve(&mut conn, next_set, sets)?;
            spec.update_sets = (next_set..next_set + sets)
                .map(|set| (set, refresh::prepare(sf, set)))
                .collect();
            let which = if sets == 1 {
                format!("update set {next_set}")
            } else {
                format!("update sets {next_set}..{}", next_set + sets - 1)
            };
            ctx.say(&format!(
                "Refresh functions use {which} (the next run goes on after it)"
            ));
        }
        let shared = Arc::new(Shared::default());
        let spec = Arc::new(spec);
        Ok(Box::new(TpchPlan {
            version,
            time_given: cfg.time_given,
            users: Arc::new(StreamFactory {
                server: ctx.server.clone(),
                spec: spec.clone(),
                shared: shared.clone(),
                connect: ctx.user_connection()?,
            }),
            spec,
            shared,
        }))
    }

    fn splits_own_users(&self) -> bool {
        true
    }

    /// The shards' streams together: every query and refresh function as
    /// one process records them, the figures made from them, and
    /// Throughput@Size over the merged run's measured time (the first
    /// shard's start to the last one's end, Ts of one process).
    fn merge_shards(&self, shards: &[RunDocument], merged: &mut RunDocument) -> Vec<String> {
        let parts: Vec<TpchResult> = shards
            .iter()
            .filter_map(|d| d.section::<TpchResult>(SECTION))
            .collect();
        let Some(first) = parts.first() else {
            return Vec::new();
        };
        if parts.len() != shards.len() || first.test != "throughput" {
            return Vec::new();
        }
        let mut r = TpchResult {
            queries: Vec::new(),
            refreshes: Vec::new(),
            cold_notes: Vec::new(),
            restarts: 0,
            ..first.clone()
        };
        for p in &parts {
            r.queries.extend(p.queries.iter().cloned());
            r.refreshes.extend(p.refreshes.iter().cloned());
            r.restarts += p.restarts;
            for n in &p.cold_notes {
                if !r.cold_notes.contains(n) {
                    r.cold_notes.push(n.clone());
                }
            }
        }
        r.queries.sort_by_key(|q| (q.stream, q.position));
        r.refreshes.sort_by_key(|x| (x.update_set, x.name.clone()));
        r.compute_metrics(Some(merged.totals.duration_s));
        merged.figures = tpch_report::figures(&r);
        merged.set_section(SECTION, &r);
        vec![SECTION.to_string()]
    }

    fn report_text(&self, doc: &RunDocument) -> Option<String> {
        doc.section::<TpchResult>(SECTION)
            .map(|t| tpch_report::text(&t))
    }

    fn headline(&self, doc: &RunDocument) -> Vec<(String, f64)> {
        let Some(t) = doc.section::<TpchResult>(SECTION) else {
            return Vec::new();
        };
        let sf = sf_text(t.scale_factor);
        let m = &t.metrics;
        [
            (format!("Power@{sf}"), m.power_at_size),
            (format!("Throughput@{sf}"), m.throughput_at_size),
            (format!("QphH@{sf}"), m.qphh_at_size),
            ("geomean s".to_string(), m.geomean_seconds),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k, v)))
        .collect()
    }
}

struct TpchPlan {
    version: String,
    time_given: bool,
    users: Arc<StreamFactory>,
    spec: Arc<RunSpec>,
    shared: Arc<Shared>,
}

impl RunPlan for TpchPlan {
    fn server_version(&self) -> String {
        self.version.clone()
    }

    fn measures(&self) -> Vec<dbmeter_stats::Measure> {
        dbmeter_stats::measure::sql::MEASURES.to_vec()
    }

    fn kinds(&self) -> Vec<String> {
        stream::kinds()
    }

    fn users(&self) -> Arc<dyn UserFactory> {
        self.users.clone()
    }

    fn shape_engine(&self, engine: &mut EngineConfig) {
        // The power stream, a query stream per user, the refresh stream
        // (under --shard, this shard's block of them).
        engine.threads = self.spec.own_users().len();
        // The streams end the run; --time only when given, as a cap.
        if !self.time_given {
            engine.time = None;
        }
        // A stream's query runs for minutes: at a stop, interrupt it soon.
        engine.forced_shutdown = Some(Duration::from_secs(1));
    }

    fn finish(&mut self, result: &RunResult, doc: &mut RunDocument) -> Vec<Warning> {
        let mut warnings = Vec::new();
        let s = &self.spec;
        let mut queries = self
            .shared
            .queries
            .lock()
            .map(|v| v.clone())
            .unwrap_or_default();
        queries.sort_by_key(|q| (q.stream, q.position));
        let mut refreshes = self
            .shared
            .refreshes
            .lock()
            .map(|v| v.clone())
            .unwrap_or_default();
        refreshes.sort_by_key(|r| (r.update_set, r.name.clone()));
        let mut r = TpchResult {
            test: match (s.power, s.throughput) {
                (true, true) => "full",
                (false, _) => "throughput",
                _ => "power",
            }
            .into(),
            scale_factor: s.sf,
            streams: s.streams,
            refresh: s.refresh,
            validation: s.validation,
            qgen_seed: s.seed,
            runs: s.runs,
            warmup_runs: s.warmup_runs,
            extract: match s.extract {
                Extract::Average => "average",
                Extract::MinMax => "min-max",
                Extract::BestPlan => "best-plan",
            }
            .into(),
            query_timeout_seconds: s.timeout.map(|t| t.as_secs_f64()),
            cold: s.cold,
            restarts: self
                .shared
                .restarts
                .load(std::sync::atomic::Ordering::Relaxed),
            cold_notes: self
                .shared
                .cold_notes
                .lock()
                .map(|v| v.clone())
                .unwrap_or_default(),
            queries,
            refreshes,
            metrics: Default::default(),
        };
        let ts = match (s.power, s.throughput) {
            (true, true) => self.shared.throughput_seconds(),
            (false, true) => Some(result.measured.duration.as_secs_f64()),
            _ => None,
        };
        r.compute_metrics(ts);
        let own = s.own_streams();
        if s.mine.is_some() {
            // A shard's streams are not the test: the metrics are the
            // merged run's.
            r.metrics.throughput_at_size = None;
            r.metrics.notes = vec![format!(
                "a shard's result ({} of {} query streams): `dbmeter merge` the shards for Throughput@Size",
                own.len(),
                s.streams
            )];
        }
        let planned = s.queries.len() * own.len();
        if r.queries.len() < planned {
            warnings.push(Warning::new(
                "tpch",
                format!(
                    "{} of {planned} queries ran before the run ended; the metrics need them all",
                    r.queries.len()
                ),
            ));
        }
        doc.figures = tpch_report::figures(&r);
        doc.set_section(SECTION, &r);
        warnings
    }
}

/// `dbmeter queries tpch`: the SQL of stream `--stream` in the dialect of
/// `--db`, with its parameters.
fn print_queries(ctx: &Context, cfg: &TpchConfig) -> Result<(), BenchError> {
    let (stream, sf, validation) = (cfg.stream, cfg.sf, cfg.validation);
    let wanted = &cfg.queries;
    let dialect = ctx.connect.map_or(Dialect::Sqlite, |c| c.target.dialect());
    ctx.say(&format!(
        "-- TPC-H stream {stream}, SF {}, {}, {} dialect",
        sf_text(sf),
        if validation {
            "validation parameters".to_string()
        } else {
            format!(
                "qgen seed {} (this stream's: {})",
                stream::qgen_seed(ctx.seed),
                stream::stream_seed(stream::qgen_seed(ctx.seed), stream)
            )
        },
        match dialect {
            Dialect::Mysql => "MySQL/MariaDB",
            Dialect::Postgres => "PostgreSQL",
            Dialect::Sqlite => "SQLite",
        }
    ));
    let order = qgen::stream_order(stream);
    for (i, q) in order.iter().filter(|q| wanted.contains(q)).enumerate() {
        let params = stream::parameters(validation, *q, stream, stream::qgen_seed(ctx.seed), sf);
        let Some(sql) = queries::query(*q, dialect, &params, stream) else {
            return Err(BenchError::Failed(format!("Q{q}: no SQL for {params:?}")));
        };
        ctx.say(&format!(
            "\n-- Q{q} (position {} of stream {stream}); parameters: {}",
            i + 1,
            params.join(", ")
        ));
        for s in sql.before.iter().chain([&sql.query]).chain(&sql.after) {
            ctx.say(&format!("{};", s.trim_end().trim_end_matches(';')));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tpch::report::{QueryResult, RefreshResult};

    fn shard(streams: &[u32], refresh: bool) -> RunDocument {
        let mut d = RunDocument::failed_before_start("tpch", 1, "", "");
        let r = TpchResult {
            test: "throughput".into(),
            scale_factor: 0.01,
            streams: 3,
            refresh: true,
            queries: streams
                .iter()
                .flat_map(|&stream| {
                    (1..=22u8).map(move |q| QueryResult {
                        query: q,
                        stream,
                        position: u32::from(q),
                        status: "ok".into(),
                        // Stream s's queries take s seconds.
                        seconds: Some(f64::from(stream)),
                        ..Default::default()
                    })
                })
                .collect(),
            refreshes: if refresh {
                (1..=3u32)
                    .flat_map(|set| {
                        ["RF1", "RF2"].map(|name| RefreshResult {
                            name: name.into(),
                            stream: 4,
                            update_set: set,
                            seconds: 0.5,
                            status: "ok".into(),
                            ..Default::default()
                        })
                    })
                    .collect()
            } else {
                Vec::new()
            },
            ..Default::default()
        };
        d.set_section(SECTION, &r);
        d
    }

    #[test]
    fn merged_shards_give_one_process_figures_and_throughput() {
        // Streams 1 and 2 in shard 0; stream 3 and the refresh stream in
        // shard 1: per query the mean over the 3 streams is 2 s (the mean
        // of the shards' means would be 2.25 s).
        let shards = [shard(&[1, 2], false), shard(&[3], true)];
        let mut merged = RunDocument::failed_before_start("tpch", 2, "", "");
        merged.totals.duration_s = 100.0;
        assert_eq!(Tpch.merge_shards(&shards, &mut merged), vec!["tpch"]);
        let r: TpchResult = merged.section(SECTION).unwrap();
        assert_eq!(r.queries.len(), 66);
        assert_eq!(r.refreshes.len(), 6);
        let q1 = merged.figures.iter().find(|f| f.name == "Q1").unwrap();
        assert_eq!(q1.value, Some(2.0));
        let want = 3.0 * 22.0 * 3600.0 / 100.0 * 0.01;
        assert_eq!(r.metrics.throughput_at_size, Some(want));
        // A missing shard: no metric, and the merge says why.
        let mut part = RunDocument::failed_before_start("tpch", 1, "", "");
        part.totals.duration_s = 100.0;
        Tpch.merge_shards(&shards[..1], &mut part);
        let r: TpchResult = part.section(SECTION).unwrap();
        assert_eq!(r.metrics.throughput_at_size, None);
        assert!(
            r.metrics.notes[0].contains("not every stream"),
            "{:?}",
            r.metrics
        );
    }
}
