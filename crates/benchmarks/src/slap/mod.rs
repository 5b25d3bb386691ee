//! `slap`: mysqlslap's test behind the [`Benchmark`] interface.
//!
//! mysqlslap runs, for each `--engine` and each `--concurrency` level,
//! `--iterations` times: drop and create the schema, run the create
//! statements (generated with `--auto-generate-sql`, or `--create`'s),
//! `--pre-query`, then its clients, each running the query list (its
//! share of `--number-of-queries`, or the list once), then
//! `--post-query`; and it drops the schema after each engine's levels.
//!
//! Here one run is one iteration at one level: its plan does the set-up
//! (drop, create, keys, pre-query), its users are the clients (finite
//! users, one statement per event), its `finish` runs the post-query and
//! writes the [`SlapSection`] that mysqlslap's report is made of.
//! [`Benchmark::sweep`] lists the runs (and the `cleanup` commands between
//! engines) that a command line asks for; the run layer carries them out.
//! `print` is `--only-print`: what would run, without a server.
//!
//! - `config.rs`: the options, read once.
//! - `sql.rs`: the generated statements, `--delimiter` cutting, dialects.
//! - `client.rs`: the clients.

mod client;
pub mod config;
pub mod sql;

use crate::benchmark::{
    BenchError, Benchmark, Context, RunPlan, SweepStep, Verb, no_such_verb, verb,
};
use crate::options::{OptSpec, OptValues};
use client::{Clients, Shared};
use config::{Engine, SlapConfig, Source};
use dbmeter_db::{ConnectOptions, Connection, Dialect, Target};
use dbmeter_engine::{EngineConfig, RunResult, UserFactory};
use dbmeter_env::Warning;
use dbmeter_result::{RunDocument, SlapSection};
use dbmeter_stats::Measure;
use sql::{Kind, Statement};
use std::sync::Arc;

pub struct Slap;

/// The key mysqlslap puts in keyed statements under `--only-print`.
const PRINTED_KEY: &str = "796c4422-1d94-102a-9d6d-00e0812d";

fn failed(what: &str, sql: &str, e: dbmeter_db::DbError) -> BenchError {
    BenchError::Failed(format!("{what} {}: {}", client::short(sql), e.message))
}

/// The target's dialect, without connecting.
fn dialect_of(ctx: &Context) -> Dialect {
    ctx.connect.map_or(Dialect::Mysql, |c| c.target.dialect())
}

/// The connection options of the set-up connection (MariaDB/MySQL: no
/// database, as mysqlslap's) and of the clients (MariaDB/MySQL: the
/// schema's database).
fn connections(
    ctx: &Context,
    cfg: &SlapConfig,
) -> Result<(ConnectOptions, ConnectOptions), BenchError> {
    let mut setup = ctx.setup_connection()?;
    let mut users = ctx.user_connection()?;
    if let Target::Mysql(t) = &mut setup.target {
        t.database = String::new();
    }
    if let Target::Mysql(t) = &mut users.target {
        t.database = cfg.schema.clone();
    }
    Ok((setup, users))
}

/// The tables the create statements make (SQLite has no schema to drop:
/// these are dropped instead).
fn created_tables(create: &[Statement]) -> Vec<String> {
    create
        .iter()
        .filter_map(|s| {
            let words: Vec<&str> = s.sql.split_whitespace().collect();
            let upper: Vec<String> = words
                .iter()
                .take(6)
                .map(|w| w.to_ascii_uppercase())
                .collect();
            if upper.first().map(String::as_str) != Some("CREATE") {
                return None;
            }
            let at = upper.iter().position(|w| w == "TABLE")?;
            let mut i = at + 1;
            if upper.get(i).map(String::as_str) == Some("IF") {
                i += 3;
            }
            let name = words.get(i)?;
            let name = name.split('(').next()?;
            let name = name.trim_matches(|c| c == '`' || c == '"');
            (!name.is_empty()).then(|| name.to_string())
        })
        .collect()
}

/// The statements of the set-up step of one iteration, in order: drop the
/// schema, create it, use it, create the tables (with the engine on
/// MariaDB/MySQL).
fn setup_statements(cfg: &SlapConfig, engine: Option<&Engine>, dialect: Dialect) -> Vec<String> {
    let mut out = Vec::new();
    if cfg.drop {
        out.extend(drop_statements(cfg, dialect));
    }
    if cfg.creates() {
        if let Some(s) = sql::create_schema(&cfg.schema, dialect) {
            out.push(s);
        }
        match dialect {
            Dialect::Mysql => out.push(format!("USE `{}`", cfg.schema)),
            Dialect::Postgres => out.push(sql::use_schema_pg(&cfg.schema)),
            Dialect::Sqlite => {}
        }
        for s in &cfg.create {
            let mut text = s.sql.clone();
            if s.kind == Kind::CreateTable
                && dialect == Dialect::Mysql
                && let Some(e) = engine
            {
                text.push_str(&e.clause());
            }
            let (text, more) = sql::for_dialect(&text, dialect);
            out.push(text);
            out.extend(more);
        }
    }
    out
}

fn drop_statements(cfg: &SlapConfig, dialect: Dialect) -> Vec<String> {
    match sql::drop_schema(&cfg.schema, dialect) {
        Some(s) => vec![s],
        None => created_tables(&cfg.create)
            .into_iter()
            .map(|t| format!("DROP TABLE IF EXISTS \"{}\"", t.replace('"', "\"\"")))
            .collect(),
    }
}

/// The query list as `dialect` takes it.
fn queries_for(cfg: &SlapConfig, dialect: Dialect) -> Vec<Statement> {
    cfg.queries
        .iter()
        .map(|s| Statement {
            sql: sql::for_dialect(&s.sql, dialect).0,
            kind: s.kind,
        })
        .collect()
}

fn has_keys(cfg: &SlapConfig) -> bool {
    matches!(&cfg.source, Source::Generated { table, .. } if table.autoincrement || table.guid_primary)
}

/// Runs statements on the set-up connection, reading what they return.
fn run_all(conn: &mut Connection, list: &[String], what: &str) -> Result<(), BenchError> {
    let mut rows = Vec::new();
    for s in list {
        rows.clear();
        conn.query_values(s, &mut rows)
            .map_err(|e| failed(what, s, e))?;
    }
    Ok(())
}

/// The engine of this run: `--engine` holds one (a sweep's step) or none.
fn single_engine(cfg: &SlapConfig) -> Result<Option<Engine>, BenchError> {
    match cfg.engines.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(one.clone())),
        _ => Err(BenchError::Usage(format!(
            "--engine lists {} engines: a run is one engine; `dbmeter slap` runs the list in turn",
            cfg.engines.len()
        ))),
    }
}

struct SlapPlan {
    version: String,
    conn: Connection,
    post: Vec<String>,
    users: Arc<Shared>,
    section: SlapSection,
    concurrency: u32,
    /// `--engine` on a target that has no storage engines.
    engine_ignored: Option<String>,
    /// `--post-system`, and what `--pre-system` said when it failed.
    post_system: Option<String>,
    system_warnings: Vec<String>,
}

/// Runs `--pre-system`/`--post-system` (`sh -c`, without the
/// environment's passwords, its output on stderr): what mysqlslap warns
/// when it fails.
fn system(option: &str, command: &str) -> Option<String> {
    crate::pgbench::run_shell(command, false)
        .err()
        .map(|e| format!("--{option}: {e}"))
}

impl RunPlan for SlapPlan {
    fn server_version(&self) -> String {
        self.version.clone()
    }

    fn measures(&self) -> Vec<Measure> {
        dbmeter_stats::measure::sql::MEASURES.to_vec()
    }

    fn users(&self) -> Arc<dyn UserFactory> {
        Arc::new(Clients(Arc::clone(&self.users)))
    }

    fn shape_engine(&self, engine: &mut EngineConfig) {
        // Each client runs its share and stops; the run ends with the last.
        engine.threads = self.concurrency as usize;
        engine.time = None;
        engine.events = None;
    }

    fn finish(&mut self, result: &RunResult, doc: &mut RunDocument) -> Vec<Warning> {
        let mut warnings = Vec::new();
        if let Err(e) = run_all(&mut self.conn, &self.post, "--post-query failed:") {
            warnings.push(Warning::new("post_query", e.to_string()));
        }
        if let Some(w) = &self.engine_ignored {
            warnings.push(Warning::new("engine_ignored", w.clone()));
        }
        if let Some(c) = &self.post_system
            && let Some(w) = system("post-system", c)
        {
            self.system_warnings.push(w);
        }
        for w in self.system_warnings.drain(..) {
            warnings.push(Warning::new("system", w));
        }
        let mut section = self.section.clone();
        section.ms = result.measured.duration.as_millis() as u64;
        doc.set_section(SlapSection::KEY, &section);
        warnings
    }
}

impl Slap {
    fn plan_run(&self, ctx: &Context, cfg: &SlapConfig) -> Result<SlapPlan, BenchError> {
        let concurrency = match cfg.concurrency.as_slice() {
            [one] => *one,
            _ => {
                return Err(BenchError::Usage(format!(
                    "--concurrency={}: a run is one level; `dbmeter slap` runs the list in turn",
                    ctx.options.str("concurrency")
                )));
            }
        };
        if cfg.only_print {
            return Err(BenchError::Usage(
                "--only-print runs nothing: `dbmeter slap --only-print` prints the statements"
                    .into(),
            ));
        }
        if cfg.queries.is_empty() {
            return Err(BenchError::Usage(
                "nothing for the clients to run: give --query (statements or a file) or --auto-generate-sql".into(),
            ));
        }
        let engine = single_engine(cfg)?;
        let (setup, users) = connections(ctx, cfg)?;
        let dialect = setup.target.dialect();
        let mut conn = Connection::connect(&setup)?;
        let version = conn.server_version();
        run_all(
            &mut conn,
            &setup_statements(cfg, engine.as_ref(), dialect),
            "the create step failed:",
        )?;
        if !cfg.creates() && dialect == Dialect::Postgres {
            run_all(&mut conn, &[sql::use_schema_pg(&cfg.schema)], "")?;
        }
        let mut keys = Vec::new();
        if has_keys(cfg) {
            let mut rows = Vec::new();
            conn.query_values("SELECT id from t1", &mut rows)
                .map_err(|e| failed("cannot read the keys:", "SELECT id from t1", e))?;
            keys = rows
                .into_iter()
                .flatten()
                .map(|v| match v {
                    dbmeter_db::Value::Int(i) => i.to_string(),
                    dbmeter_db::Value::Text(t) => t,
                    dbmeter_db::Value::Bytes(b) => String::from_utf8_lossy(&b).into_owned(),
                })
                .collect();
        }
        if cfg.commit > 0 && dialect == Dialect::Mysql {
            run_all(&mut conn, &["SET AUTOCOMMIT=0".to_string()], "")?;
        }
        let system_warnings: Vec<String> = cfg
            .pre_system
            .as_deref()
            .and_then(|c| system("pre-system", c))
            .into_iter()
            .collect();
        run_all(&mut conn, &cfg.pre, "--pre-query failed:")?;
        let mut session_init = Vec::new();
        if dialect == Dialect::Postgres {
            session_init.push(format!("{}, public", sql::use_schema_pg(&cfg.schema)));
        }
        session_init.extend(cfg.init_command.clone());
        let limit = cfg.client_limit(concurrency);
        let engine_ignored = engine
            .as_ref()
            .filter(|_| dialect != Dialect::Mysql)
            .map(|e| {
                format!(
                    "--engine={}: storage engines are MariaDB/MySQL's; on {} the tables are the database's own",
                    e.name,
                    if dialect == Dialect::Postgres {
                        "PostgreSQL"
                    } else {
                        "SQLite"
                    }
                )
            });
        Ok(SlapPlan {
            version,
            conn,
            post: cfg.post.clone(),
            users: Arc::new(Shared {
                connect: users,
                queries: queries_for(cfg, dialect),
                limit,
                commit: cfg.commit,
                detach: cfg.detach,
                keys,
                session_init,
                ignore: ctx.ignore.clone(),
                seed: ctx.seed,
            }),
            section: SlapSection {
                engine: engine.map(|e| e.name),
                load_type: cfg.load_type.clone(),
                concurrency,
                iteration: cfg.iteration,
                iterations: cfg.iterations,
                queries_per_client: limit,
                ms: 0,
            },
            concurrency,
            engine_ignored,
            post_system: cfg.post_system.clone(),
            system_warnings,
        })
    }

    /// `--only-print`: what mysqlslap prints for the same options, the
    /// sweep's every step, on the target's dialect.
    fn print(&self, ctx: &Context, cfg: &SlapConfig) {
        let dialect = dialect_of(ctx);
        let engines: Vec<Option<&Engine>> = if cfg.engines.is_empty() {
            vec![None]
        } else {
            cfg.engines.iter().map(Some).collect()
        };
        let queries = queries_for(cfg, dialect);
        let line = |s: &str| ctx.say(&format!("{s};"));
        for engine in engines {
            for &c in &cfg.concurrency {
                for _ in 0..cfg.iterations {
                    for s in setup_statements(cfg, engine, dialect) {
                        // mysqlslap prints its change of database so.
                        if s.starts_with("USE `") {
                            ctx.say(&format!("use {};", cfg.schema));
                        } else {
                            line(&s);
                        }
                    }
                    if cfg.commit > 0 && dialect == Dialect::Mysql {
                        line("SET AUTOCOMMIT=0");
                    }
                    for s in &cfg.pre {
                        line(s);
                    }
                    for _ in 0..c {
                        self.print_client(cfg, &queries, c, dialect, &line);
                    }
                    for s in &cfg.post {
                        line(s);
                    }
                }
            }
            if cfg.drop {
                for s in drop_statements(cfg, dialect) {
                    line(&s);
                }
            }
        }
    }

    fn print_client(
        &self,
        cfg: &SlapConfig,
        queries: &[Statement],
        concurrency: u32,
        dialect: Dialect,
        line: &dyn Fn(&str),
    ) {
        let limit = cfg.client_limit(concurrency);
        let (begin, again) = match dialect {
            Dialect::Mysql => ("SET AUTOCOMMIT=0", false),
            _ => ("BEGIN", true),
        };
        if cfg.commit > 0 {
            line(begin);
        }
        let (mut done, mut at, mut counter) = (0u64, 0usize, 0u64);
        loop {
            if queries.is_empty() {
                break;
            }
            let s = &queries[at];
            if s.kind == Kind::NeedsKey && has_keys(cfg) {
                line(&format!("{} '{PRINTED_KEY}'", s.sql));
            } else {
                line(&s.sql);
            }
            done += 1;
            if cfg.commit > 0 {
                counter += 1;
                if counter == cfg.commit {
                    counter = 0;
                    line("COMMIT");
                    if again {
                        line("BEGIN");
                    }
                }
            }
            at += 1;
            if limit > 0 {
                if at == queries.len() {
                    at = 0;
                }
                if done >= limit {
                    break;
                }
            } else if at == queries.len() {
                break;
            }
        }
        if cfg.commit > 0 {
            line("COMMIT");
        }
    }
}

impl Benchmark for Slap {
    fn name(&self) -> &str {
        "slap"
    }

    fn summary(&self) -> &str {
        "mysqlslap: generated or given SQL run by N clients, per concurrency level and iteration"
    }

    fn options(&self) -> Vec<OptSpec> {
        config::specs()
    }

    fn check_options(&self, options: &OptValues) -> Result<(), BenchError> {
        SlapConfig::from_options(options).map(drop)
    }

    fn verbs(&self) -> Vec<Verb> {
        vec![
            verb(
                "cleanup",
                "drop the schema (--create-schema) the test ran in",
            ),
            verb(
                "print",
                "print the statements a run would send (--only-print)",
            ),
        ]
    }

    fn dataset(&self) -> Option<String> {
        None
    }

    fn writes(&self) -> bool {
        true
    }

    fn creates_its_data(&self) -> bool {
        true
    }

    fn sweep(&self, options: &OptValues) -> Result<Option<Vec<SweepStep>>, BenchError> {
        let cfg = SlapConfig::from_options(options)?;
        let engines: Vec<Option<String>> = if cfg.engines.is_empty() {
            vec![None]
        } else {
            cfg.engines
                .iter()
                .map(|e| {
                    Some(match &e.option {
                        Some(o) => format!("{}:{o}", e.name),
                        None => e.name.clone(),
                    })
                })
                .collect()
        };
        let mut steps = Vec::new();
        for engine in &engines {
            let mut set_engine = Vec::new();
            if let Some(e) = engine {
                set_engine.push(("engine".to_string(), e.clone()));
            }
            for &c in &cfg.concurrency {
                for i in 1..=cfg.iterations {
                    let mut set = set_engine.clone();
                    set.push(("concurrency".into(), c.to_string()));
                    set.push(("threads".into(), c.to_string()));
                    set.push(("iteration".into(), i.to_string()));
                    steps.push(SweepStep::Run { set });
                }
            }
            if cfg.drop {
                steps.push(SweepStep::Command {
                    verb: "cleanup".into(),
                    set: set_engine,
                });
            }
        }
        Ok(Some(steps))
    }

    fn command(&self, verb: &str, ctx: &Context) -> Result<(), BenchError> {
        let cfg = SlapConfig::from_options(ctx.options)?;
        match verb {
            "print" => {
                self.print(ctx, &cfg);
                Ok(())
            }
            "cleanup" => {
                let (setup, _) = connections(ctx, &cfg)?;
                let dialect = setup.target.dialect();
                let mut conn = Connection::connect(&setup)?;
                run_all(
                    &mut conn,
                    &drop_statements(&cfg, dialect),
                    "cannot drop the schema:",
                )
            }
            _ => Err(no_such_verb(self, verb)),
        }
    }

    fn known_kinds(&self, _options: &OptValues) -> Option<Vec<String>> {
        // Its users tell no kinds of events apart.
        Some(Vec::new())
    }

    fn plan(&self, ctx: &Context) -> Result<Box<dyn RunPlan>, BenchError> {
        let cfg = SlapConfig::from_options(ctx.options)?;
        Ok(Box::new(self.plan_run(ctx, &cfg)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn created_tables_are_found() {
        let st = |s: &str| Statement {
            sql: s.into(),
            kind: Kind::Plain,
        };
        assert_eq!(
            created_tables(&[
                st("CREATE TABLE `t1` (a int)"),
                st("create table if not exists b(x int)"),
                st("INSERT INTO a VALUES (1)"),
            ]),
            vec!["t1", "b"]
        );
    }
}
