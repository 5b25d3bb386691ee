//! The sysbench OLTP tests behind the [`Benchmark`] interface: one
//! benchmark per test (`oltp_read_write`, `oltp_point_select`, ...).

use super::{
    LoadReport, OltpConfig, OltpFactory, OltpKind, check_ready, cleanup, prepare, prewarm,
};
use crate::benchmark::{BenchError, Benchmark, Context, RunPlan, Verb, no_such_verb, verb};
use crate::options::{OptSpec, OptValues};
use dbmeter_db::Connection;
use dbmeter_engine::UserFactory;
use std::sync::Arc;
use std::sync::atomic::AtomicI64;

/// One sysbench OLTP test.
pub struct Oltp {
    pub kind: OltpKind,
    pub name: &'static str,
    pub summary: &'static str,
}

/// The line a load ends with: `Loaded 10000 rows in 1 table in 0.12 s (83333 rows/s)`.
pub fn load_line(what: &str, r: &LoadReport) -> String {
    format!(
        "{what} {} rows in {} table{} in {:.2} s ({:.0} rows/s)",
        r.rows,
        r.tables,
        if r.tables == 1 { "" } else { "s" },
        r.elapsed.as_secs_f64(),
        r.rows_per_sec()
    )
}

impl Oltp {
    fn config(&self, ctx: &Context) -> Result<OltpConfig, BenchError> {
        if let Some(s) = ctx.shard
            && self.kind == OltpKind::BulkInsert
        {
            // Its users each fill a table of their own, numbered by user.
            return Err(BenchError::Usage(format!(
                "--shard={s}: bulk_insert's users each fill their own table and are not split over shards; run it in one process"
            )));
        }
        OltpConfig::from_options(self.kind, ctx.options, ctx.threads as u32)
    }
}

struct OltpPlan {
    version: String,
    users: Arc<OltpFactory>,
}

impl RunPlan for OltpPlan {
    fn server_version(&self) -> String {
        self.version.clone()
    }

    fn measures(&self) -> Vec<dbmeter_stats::Measure> {
        dbmeter_stats::measure::sql::MEASURES.to_vec()
    }

    fn users(&self) -> Arc<dyn UserFactory> {
        self.users.clone()
    }
}

impl Benchmark for Oltp {
    fn name(&self) -> &str {
        self.name
    }

    fn summary(&self) -> &str {
        self.summary
    }

    fn options(&self) -> Vec<OptSpec> {
        super::options(self.kind)
    }

    fn check_options(&self, options: &OptValues) -> Result<(), BenchError> {
        OltpConfig::from_options(self.kind, options, 1).map(drop)
    }

    fn verbs(&self) -> Vec<Verb> {
        vec![
            verb("prepare", "create and load the sbtest tables"),
            verb(
                "prewarm",
                "read the tables once so that a run starts with warm caches",
            ),
            verb("cleanup", "drop the sbtest tables"),
        ]
    }

    fn dataset(&self) -> Option<String> {
        Some(match self.kind {
            OltpKind::BulkInsert => "bulk".into(),
            _ => "oltp".into(),
        })
    }

    fn shards_prepare(&self) -> bool {
        true
    }

    fn writes(&self) -> bool {
        !matches!(
            self.kind,
            OltpKind::ReadOnly
                | OltpKind::PointSelect
                | OltpKind::RandomPoints
                | OltpKind::RandomRanges
        )
    }

    fn command(&self, verb: &str, ctx: &Context) -> Result<(), BenchError> {
        let cfg = self.config(ctx)?;
        let opts = ctx.setup_connection()?;
        // Under `dbmeter sysbench`, sysbench's words and only those.
        let sysbench = matches!(ctx.layout, dbmeter_result::Layout::Sysbench { .. });
        let say = |l: String| match sysbench {
            false => ctx.say(&l),
            true => {
                if let Some(l) = sysbench_words(&l) {
                    ctx.say(&l);
                }
            }
        };
        let summary = |l: &str| {
            if !sysbench {
                ctx.say(l);
            }
        };
        match verb {
            "prepare" => {
                let only = match ctx.shard {
                    None => None,
                    Some(shard) => {
                        let r = shard.range(u64::from(cfg.table_count()));
                        if r.is_empty() {
                            summary(&format!(
                                "Shard {shard}: no table to load (--tables={} is split over {} shards)",
                                cfg.table_count(),
                                shard.count
                            ));
                            return Ok(());
                        }
                        summary(&format!(
                            "Shard {shard}: loading tables sbtest{} to sbtest{}",
                            r.start + 1,
                            r.end
                        ));
                        Some(r.start as usize..r.end as usize)
                    }
                };
                let r = prepare(
                    &opts,
                    &cfg,
                    ctx.seed,
                    only,
                    false,
                    ctx.threads,
                    &say,
                    ctx.console.progress(),
                )?;
                summary(&load_line("Loaded", &r));
            }
            "prewarm" => {
                let r = prewarm(&opts, &cfg, &say)?;
                summary(&load_line("Read", &r));
            }
            "cleanup" => {
                let dropped = cleanup(&opts, &say)?;
                if dropped.is_empty() {
                    summary(&format!(
                        "No sbtest tables in {}: nothing to drop",
                        opts.target
                    ));
                } else {
                    summary(&format!("Dropped {} table(s)", dropped.len()));
                }
            }
            _ => return Err(no_such_verb(self, verb)),
        }
        Ok(())
    }

    fn known_kinds(&self, _options: &OptValues) -> Option<Vec<String>> {
        // Its users tell no kinds of events apart.
        Some(Vec::new())
    }

    fn plan(&self, ctx: &Context) -> Result<Box<dyn RunPlan>, BenchError> {
        let cfg = self.config(ctx)?;
        let connect = ctx.setup_connection()?;
        let mut conn = Connection::connect(&connect)?;
        let version = conn.server_version();
        let mut readiness = check_ready(&mut conn, &cfg)?;
        if !readiness.missing.is_empty() {
            if !connect.target.is_implicit() {
                return Err(BenchError::Failed(format!(
                    "table {} does not exist in {}; run `dbmeter prepare {}` with the same options first",
                    readiness.missing[0], connect.target, self.name
                )));
            }
            let one = readiness.missing.len() == 1;
            ctx.say(&format!(
                "No {} table{} in {} yet: preparing {} now (as `dbmeter prepare {}` would).",
                readiness.missing.join(", "),
                if one { "" } else { "s" },
                connect.target,
                if one { "it" } else { "them" },
                self.name
            ));
            let say = |l: String| ctx.say(&l);
            let r = prepare(
                &connect,
                &cfg,
                ctx.seed,
                None,
                true,
                ctx.threads,
                &say,
                ctx.console.progress(),
            )?;
            ctx.say(&load_line("Loaded", &r));
            readiness = check_ready(&mut conn, &cfg)?;
        }
        if let Some(rows) = readiness.first_table_rows
            && rows as u64 != cfg.table_size
            && cfg.table_size > 0
            && cfg.kind != OltpKind::BulkInsert
        {
            ctx.say(&format!(
                "note: sbtest1 has {rows} rows but --table-size is {}; ids are drawn from 1..{}",
                cfg.table_size, cfg.table_size
            ));
        }
        let users = OltpFactory {
            cfg: Arc::new(cfg),
            ignore: ctx.ignore.clone(),
            seed: ctx.seed,
            next_insert_id: Arc::new(AtomicI64::new(readiness.max_id + 1)),
            connect: ctx.user_connection()?,
        };
        Ok(Box::new(OltpPlan {
            version,
            users: Arc::new(users),
        }))
    }
}

/// A step line of the loader as sysbench's OLTP scripts word it (None: a
/// line of dbmeter's that sysbench does not print).
fn sysbench_words(line: &str) -> Option<String> {
    if line.starts_with("Loading rows with ") {
        return None;
    }
    if let Some(rest) = line.strip_prefix("Inserting ")
        && let Some((n, table)) = rest.split_once(" rows into ")
    {
        return Some(format!("Inserting {n} records into {table}"));
    }
    if let Some(table) = line
        .strip_prefix("Prewarming '")
        .and_then(|t| t.strip_suffix("'..."))
    {
        return Some(format!("Prewarming table {table}"));
    }
    Some(line.to_string())
}
