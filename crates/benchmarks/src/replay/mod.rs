//! `replay`: a query log's recorded sessions run again against a target.
//!
//! The log is read through the digest crate's parsers
//! ([`dbmeter_digest::read_events`]) into sessions (MySQL/MariaDB thread
//! ids, PostgreSQL process or session ids; `Quit` and `Connect` end and
//! begin them), each with its statements in order and their recorded
//! start times ([`log`]). Each virtual user is a finite user that runs
//! sessions one after the other, each on a fresh server session, in the
//! order they started in the log; `--threads` caps how many run at once.
//! With `--speed` every statement has its own intended start (the engine's
//! [`dbmeter_engine::User::intended_start`]): latency counts from it and
//! the lag behind the schedule is measured. Statements are classed by the
//! digest's fingerprints; the most frequent classes are the run's named
//! kinds, the rest "other". docs/replay.md says what a user can do.

pub mod log;
mod user;

use crate::benchmark::{BenchError, Benchmark, Context, RunPlan, Verb, no_such_verb};
use crate::options::{OptKind, OptSpec, OptValues, bad_value, choice, opt};
use dbmeter_db::Dialect;
use dbmeter_digest::LogFormat;
use dbmeter_engine::{EngineConfig, RunResult, UserFactory};
use dbmeter_env::Warning;
use dbmeter_result::RunDocument;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use user::{ClassCounts, ReplayFactory, Shared};

/// The document's section key.
pub const SECTION: &str = "replay";
/// Sessions that run at once when `--threads` is not given.
pub const DEFAULT_CONCURRENCY: usize = 256;
/// The most classes that get a kind of their own.
pub const MAX_CLASSES: u64 = 1000;
/// The most classes the result lists one by one (the most frequent).
pub const LISTED_CLASSES: usize = 10_000;

pub const OPTIONS: &[OptSpec] = &[
    opt(
        "log",
        OptKind::Str,
        "",
        "the query log to replay: a MySQL/MariaDB slow or general log, or a PostgreSQL stderr, csv or json log (.gz, .zst too; - for standard input)",
    ),
    opt(
        "log-format",
        choice(&[
            "auto",
            "mysql-slow",
            "mysql-general",
            "postgres-stderr",
            "postgres-csv",
            "postgres-json",
        ]),
        "auto",
        "the log's format (auto: detected from its first lines)",
    ),
    opt(
        "log-line-prefix",
        OptKind::Str,
        "",
        "PostgreSQL stderr logs: the server's log_line_prefix (default: '%m [%p] ' or Debian's '%m [%p] %q%u@%d ', whichever reads the log)",
    ),
    opt(
        "speed",
        OptKind::Float,
        "0",
        "0: every session as fast as it can; X > 0: at the recorded times, X times as fast (1 = as recorded), latency counted from each statement's scheduled start and the lag behind the schedule reported",
    ),
    opt(
        "read-only",
        OptKind::Bool,
        "off",
        "leave out writes (INSERT, UPDATE, DELETE, DDL, ...), counted per class as skipped",
    ),
    opt(
        "classes",
        OptKind::Size,
        "50",
        "the most frequent classes (fingerprints) that get their own counts and latency; the rest are counted together as 'other'",
    ),
    opt(
        "log-database",
        OptKind::Bool,
        "on",
        "MySQL/MariaDB: each statement runs in the database the log gives it (USE); off: in --db's",
    ),
];

/// The replay's settings, read from the options.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayConfig {
    pub log: String,
    pub format: Option<LogFormat>,
    pub log_line_prefix: Option<String>,
    pub speed: Option<f64>,
    pub read_only: bool,
    pub classes: usize,
    pub log_database: bool,
    /// `--threads` when given: the most sessions at once.
    pub threads: Option<usize>,
    pub time_given: bool,
}

impl ReplayConfig {
    pub fn from_options(o: &OptValues) -> Result<Self, BenchError> {
        let log = o.str("log").trim().to_string();
        let format = match o.str("log-format") {
            "auto" => None,
            f => Some(
                LogFormat::parse(f)
                    .ok_or_else(|| bad_value("log-format", f, "auto or a log format"))?,
            ),
        };
        let prefix = o.str("log-line-prefix");
        let speed = o.f64_where(
            "speed",
            |s| s == 0.0 || (1e-6..=1e6).contains(&s),
            "0 (as fast as possible) or a speed factor from 0.000001 to 1000000 (1 = as recorded)",
        )?;
        let classes = o.u64_in(
            "classes",
            1..=MAX_CLASSES,
            &format!("a number of classes from 1 to {MAX_CLASSES}"),
        )?;
        let threads = o.u64_in(
            "threads",
            1..=100_000,
            "a number of sessions at once from 1 to 100000",
        )?;
        Ok(ReplayConfig {
            log,
            format,
            log_line_prefix: (!prefix.is_empty()).then(|| prefix.to_string()),
            speed: (speed > 0.0).then_some(speed),
            read_only: o.bool("read-only"),
            classes: classes as usize,
            log_database: o.bool("log-database"),
            threads: o.given("threads").then_some(threads as usize),
            time_given: o.given("time"),
        })
    }
}

/// One class in the result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClassResult {
    /// pt-query-digest's query ID.
    pub id: String,
    pub fingerprint: String,
    /// The run's kind that holds its latency (its fingerprint, or `other`).
    pub kind: String,
    /// Its statements in the log.
    pub logged: u64,
    /// Left out (`--read-only`).
    pub skipped: u64,
    /// Replayed without an error.
    pub replayed: u64,
    /// Refused by the target (or timed out).
    pub errors: u64,
    /// Reads compared with the log's Rows_sent, and of them those whose
    /// row count differed.
    pub rows_compared: u64,
    pub rows_differ: u64,
    /// The first error, as the target said it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
}

/// The replay's section of the result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReplayResult {
    pub log: String,
    pub format: String,
    /// None: as fast as possible.
    pub speed: Option<f64>,
    pub read_only: bool,
    pub sessions: u64,
    /// Sessions that ran at once, at most.
    pub concurrency: u64,
    /// Statements in the sessions, to replay.
    pub statements: u64,
    /// Statements the sessions did not get to (the run stopped).
    pub not_started_sessions: u64,
    pub skipped: u64,
    pub errors: u64,
    pub rows_differ: u64,
    pub admin_commands: u64,
    pub malformed_lines: u64,
    /// The recorded span, first statement to last, in seconds.
    pub log_span_s: f64,
    /// With --speed: the largest and the mean lag of a statement's start
    /// behind its schedule, in milliseconds.
    pub max_lag_ms: Option<f64>,
    pub mean_lag_ms: Option<f64>,
    /// Classes in the log, and those listed below (the most frequent).
    pub class_count: u64,
    pub classes: Vec<ClassResult>,
}

pub struct Replay;

impl Benchmark for Replay {
    fn name(&self) -> &str {
        "replay"
    }

    fn summary(&self) -> &str {
        "replays a query log's sessions (MySQL/MariaDB slow or general log, PostgreSQL log), each on its own connection"
    }

    fn options(&self) -> Vec<OptSpec> {
        OPTIONS.to_vec()
    }

    fn check_options(&self, options: &OptValues) -> Result<(), BenchError> {
        ReplayConfig::from_options(options).map(drop)
    }

    fn verbs(&self) -> Vec<Verb> {
        Vec::new()
    }

    fn dataset(&self) -> Option<String> {
        None
    }

    fn writes(&self) -> bool {
        true
    }

    fn command(&self, verb: &str, _ctx: &Context) -> Result<(), BenchError> {
        Err(no_such_verb(self, verb))
    }

    fn plan(&self, ctx: &Context) -> Result<Box<dyn RunPlan>, BenchError> {
        let cfg = ReplayConfig::from_options(ctx.options)?;
        if cfg.log.is_empty() {
            return Err(BenchError::Usage(
                "replay needs the log to replay: --log=FILE (a MySQL/MariaDB slow or general log, or a PostgreSQL log), e.g. dbmeter run replay --log=slow.log --db=URL"
                    .into(),
            ));
        }
        let connect = ctx.user_connection()?;
        let log = log::read(&log::ReadOptions {
            path: &cfg.log,
            format: cfg.format,
            log_line_prefix: cfg.log_line_prefix.as_deref(),
            read_only: cfg.read_only,
        })
        .map_err(|e| BenchError::Failed(e.0))?;
        // The target's version, and a first check that it answers.
        let version = dbmeter_db::Connection::connect(&ctx.setup_connection()?)
            .map(|c| c.server_version())
            .map_err(BenchError::from)?;
        let dialect = match &connect.target {
            dbmeter_db::Target::Postgres(_) => Dialect::Postgres,
            dbmeter_db::Target::Mysql(_) => Dialect::Mysql,
            dbmeter_db::Target::Sqlite { .. } => Dialect::Sqlite,
        };
        let mut log = log;
        let all_sessions = log.sessions.len();
        if let Some(shard) = ctx.shard {
            // Sessions dealt round in the order they start: session k to
            // shard k mod N. Each session is wholly in one shard (its
            // order kept), the shards' counts are within one, and at every
            // moment of the log the sessions then running are spread over
            // the shards (contiguous blocks would give shard 0 the log's
            // beginning and the last shard its end).
            if (all_sessions as u64) < shard.count {
                return Err(BenchError::Usage(format!(
                    "--shard={shard}: the log has {all_sessions} sessions; every shard needs one: run at most {all_sessions} shards"
                )));
            }
            log.keep_shard(shard);
            ctx.say(&format!(
                "Shard {shard}: {} of the log's {all_sessions} sessions (dealt round the {} shards in the order they start)",
                log.sessions.len(),
                shard.count
            ));
        }
        let sessions = log.sessions.len();
        ctx.say(&format!(
            "Replaying {} statements of {sessions} sessions from {} ({}, {:.1} s recorded){}",
            log.statements,
            cfg.log,
            log.format.name(),
            log.span_s,
            match cfg.speed {
                Some(s) => format!(", at {s}x the recorded speed"),
                None => ", as fast as possible".into(),
            }
        ));
        if log.without_session > 0 {
            ctx.say(&format!(
                "{} statements carry no session id (MySQL: Thread_id or Id; PostgreSQL: %p or %c in log_line_prefix): they replay as one session, in log order",
                log.without_session
            ));
        }
        if log.malformed.count > 0 {
            ctx.say(&format!(
                "{} malformed lines in the log left out (the first at line {})",
                log.malformed.count,
                log.malformed.first.first().map_or(0, |m| m.line)
            ));
        }
        if dialect == Dialect::Postgres && log.databases.len() > 1 {
            ctx.say(&format!(
                "The log's sessions use databases {}; on PostgreSQL every session replays in --db's database",
                log.databases.join(", ")
            ));
        }
        let skipped: u64 = log.classes.iter().map(|c| c.skipped).sum();
        if skipped > 0 {
            ctx.say(&format!("--read-only leaves out {skipped} writes"));
        }
        // Under --shard, the run's sessions at once are split as users
        // are: this shard's share of them.
        let concurrency = match cfg.threads {
            Some(t) => t.min(all_sessions),
            None => {
                if all_sessions > DEFAULT_CONCURRENCY {
                    ctx.say(&format!(
                        "{all_sessions} sessions, {DEFAULT_CONCURRENCY} at once (--threads sets how many)"
                    ));
                }
                all_sessions.min(DEFAULT_CONCURRENCY)
            }
        };
        let concurrency = ctx
            .shard
            .map_or(concurrency, |s| s.share(concurrency as u64) as usize)
            .min(sessions)
            .max(1);
        // The most frequent classes get kinds of their own.
        let mut order: Vec<usize> = (0..log.classes.len()).collect();
        order.sort_by_key(|&c| std::cmp::Reverse(log.classes[c].logged - log.classes[c].skipped));
        let own = cfg.classes.min(order.len());
        let mut kind_of = vec![own; log.classes.len()];
        let mut kinds = Vec::with_capacity(own + 1);
        for (k, &c) in order.iter().take(own).enumerate() {
            kind_of[c] = k;
            kinds.push(kind_name(&log.classes[c].fingerprint, &log.classes[c].id));
        }
        if order.len() > own {
            kinds.push("other".to_string());
        }
        let classes = log.classes.len();
        let shared = Arc::new(Shared {
            sessions: log.sessions,
            next: AtomicUsize::new(0),
            counts: (0..classes).map(|_| ClassCounts::default()).collect(),
            first_errors: Mutex::new(vec![None; classes]),
            kind_of,
            speed: cfg.speed,
            use_database: cfg.log_database,
            connect,
        });
        let mut result = ReplayResult {
            log: cfg.log.clone(),
            format: log.format.name().to_string(),
            speed: cfg.speed,
            read_only: cfg.read_only,
            sessions: sessions as u64,
            concurrency: concurrency as u64,
            statements: log.statements,
            skipped,
            admin_commands: log.admin,
            malformed_lines: log.malformed.count,
            log_span_s: log.span_s,
            class_count: classes as u64,
            ..Default::default()
        };
        result.classes = order
            .iter()
            .take(LISTED_CLASSES)
            .map(|&c| {
                let cl = &log.classes[c];
                ClassResult {
                    id: cl.id.clone(),
                    fingerprint: cl.fingerprint.clone(),
                    kind: kinds.get(shared.kind_of[c]).cloned().unwrap_or_default(),
                    logged: cl.logged,
                    skipped: cl.skipped,
                    ..Default::default()
                }
            })
            .collect();
        Ok(Box::new(ReplayPlan {
            version,
            kinds,
            order,
            concurrency,
            time_given: cfg.time_given,
            shared,
            result,
        }))
    }

    fn splits_own_users(&self) -> bool {
        true
    }

    /// The shards' replays together: what each replayed (sessions,
    /// statements, each class's counts) summed, what the log holds (its
    /// classes' logged and skipped statements, its span) as every shard
    /// read it, the largest lag, and the mean lag over all statements.
    fn merge_shards(&self, shards: &[RunDocument], merged: &mut RunDocument) -> Vec<String> {
        let parts: Vec<(ReplayResult, u64)> = shards
            .iter()
            .filter_map(|d| {
                d.section::<ReplayResult>(SECTION)
                    .map(|r| (r, d.totals.events))
            })
            .collect();
        let Some((first, _)) = parts.first() else {
            return Vec::new();
        };
        if parts.len() != shards.len() {
            return Vec::new();
        }
        let mut r = first.clone();
        let (mut lag_sum, mut lag_n) = (0.0, 0u64);
        for (i, (p, events)) in parts.iter().enumerate() {
            if let Some(l) = p.mean_lag_ms {
                lag_sum += l * *events as f64;
                lag_n += events;
            }
            if i == 0 {
                continue;
            }
            r.sessions += p.sessions;
            r.concurrency += p.concurrency;
            r.statements += p.statements;
            r.not_started_sessions += p.not_started_sessions;
            r.errors += p.errors;
            r.rows_differ += p.rows_differ;
            r.max_lag_ms = match (r.max_lag_ms, p.max_lag_ms) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
            for c in &p.classes {
                match r.classes.iter_mut().find(|x| x.id == c.id) {
                    Some(x) => {
                        x.replayed += c.replayed;
                        x.errors += c.errors;
                        x.rows_compared += c.rows_compared;
                        x.rows_differ += c.rows_differ;
                        if x.first_error.is_none() {
                            x.first_error = c.first_error.clone();
                        }
                    }
                    None => r.classes.push(c.clone()),
                }
            }
        }
        r.mean_lag_ms = (lag_n > 0).then(|| lag_sum / lag_n as f64);
        merged.set_section(SECTION, &r);
        vec![SECTION.to_string()]
    }

    fn report_text(&self, doc: &RunDocument) -> Option<String> {
        doc.section::<ReplayResult>(SECTION).map(|r| text(&r))
    }

    fn examples(&self) -> Vec<(String, String)> {
        [
            (
                "A MariaDB slow log's sessions, as fast as they go",
                "replay slow.log --db=mysql://root@127.0.0.1/test",
            ),
            (
                "A PostgreSQL log at its recorded timing, 32 sessions at a time, stored",
                "run replay --log=postgresql.log --db=postgres://postgres@127.0.0.1/app \
                 --speed=1 --threads=32 --store",
            ),
        ]
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .into()
    }

    fn headline(&self, doc: &RunDocument) -> Vec<(String, f64)> {
        let Some(r) = doc.section::<ReplayResult>(SECTION) else {
            return Vec::new();
        };
        let mut h = vec![("errors".to_string(), r.errors as f64)];
        if let Some(l) = r.max_lag_ms {
            h.push(("max lag ms".to_string(), l));
        }
        h
    }
}

/// A class's kind name: its fingerprint, cut to 120 characters (then with
/// its query ID's last digits, so that two long ones stay apart).
fn kind_name(fingerprint: &str, id: &str) -> String {
    const MAX: usize = 120;
    if fingerprint.chars().count() <= MAX {
        return fingerprint.to_string();
    }
    let cut: String = fingerprint.chars().take(MAX).collect();
    format!("{cut}... [{}]", &id[id.len().saturating_sub(8)..])
}

struct ReplayPlan {
    version: String,
    kinds: Vec<String>,
    /// Classes, most frequent first (the result's order).
    order: Vec<usize>,
    concurrency: usize,
    time_given: bool,
    shared: Arc<Shared>,
    result: ReplayResult,
}

impl RunPlan for ReplayPlan {
    fn server_version(&self) -> String {
        self.version.clone()
    }

    fn measures(&self) -> Vec<dbmeter_stats::Measure> {
        dbmeter_stats::measure::sql::MEASURES.to_vec()
    }

    fn kinds(&self) -> Vec<String> {
        self.kinds.clone()
    }

    fn users(&self) -> Arc<dyn UserFactory> {
        Arc::new(ReplayFactory(self.shared.clone()))
    }

    fn shape_engine(&self, engine: &mut EngineConfig) {
        engine.threads = self.concurrency;
        // The sessions end the run; --time only when given, as a cap.
        if !self.time_given {
            engine.time = None;
        }
        // A --rate has no meaning here: the log's times are the schedule.
        engine.rate = None;
        engine.own_schedule = self.shared.speed.is_some();
        engine.forced_shutdown = Some(Duration::from_secs(1));
    }

    fn finish(&mut self, result: &RunResult, doc: &mut RunDocument) -> Vec<Warning> {
        let mut r = self.result.clone();
        let first_errors = self
            .shared
            .first_errors
            .lock()
            .map(|f| f.clone())
            .unwrap_or_default();
        for (row, &c) in r.classes.iter_mut().zip(&self.order) {
            let n = &self.shared.counts[c];
            row.replayed = n.done.load(Relaxed);
            row.errors = n.errors.load(Relaxed);
            row.rows_compared = n.rows_compared.load(Relaxed);
            row.rows_differ = n.rows_differ.load(Relaxed);
            row.first_error = first_errors.get(c).cloned().flatten();
        }
        r.errors = self
            .shared
            .counts
            .iter()
            .map(|n| n.errors.load(Relaxed))
            .sum();
        r.rows_differ = self
            .shared
            .counts
            .iter()
            .map(|n| n.rows_differ.load(Relaxed))
            .sum();
        let started = self
            .shared
            .next
            .load(Relaxed)
            .min(self.shared.sessions.len());
        r.not_started_sessions = (self.shared.sessions.len() - started) as u64;
        if self.shared.speed.is_some() {
            r.max_lag_ms = result.max_lag.map(|l| l.as_secs_f64() * 1e3);
            let m = &result.measured;
            r.mean_lag_ms = m.service.as_ref().and_then(|s| {
                let n = m.latency.count();
                (n > 0).then(|| m.latency.sum().saturating_sub(s.sum()) as f64 / n as f64 / 1e6)
            });
        }
        let mut warnings = Vec::new();
        if r.errors > 0 {
            warnings.push(Warning::new(
                "replay_errors",
                format!(
                "{} of {} replayed statements were refused by the target (per class in the replay section)",
                    r.errors, r.statements
                ),
            ));
        }
        doc.set_section(SECTION, &r);
        warnings
    }
}

/// The replay's section as text.
pub fn text(r: &ReplayResult) -> String {
    use std::fmt::Write;
    let mut t = String::from("\nReplay:\n");
    let _ = writeln!(
        t,
        "    log:                             {} ({})",
        r.log, r.format
    );
    let _ = writeln!(
        t,
        "    sessions:                        {} ({} at once at most{})",
        r.sessions,
        r.concurrency,
        if r.not_started_sessions > 0 {
            format!(", {} not started", r.not_started_sessions)
        } else {
            String::new()
        }
    );
    let _ = writeln!(
        t,
        "    statements:                      {} ({} errors, {} skipped, {} row counts differ)",
        r.statements, r.errors, r.skipped, r.rows_differ
    );
    match r.speed {
        Some(s) => {
            let _ = writeln!(
                t,
                "    schedule:                        {s}x the recorded speed ({:.1} s recorded)",
                r.log_span_s
            );
            let _ = writeln!(
                t,
                "    lag behind schedule (max/mean):  {:.2}/{:.2} ms",
                r.max_lag_ms.unwrap_or(0.0),
                r.mean_lag_ms.unwrap_or(0.0)
            );
        }
        None => {
            let _ = writeln!(
                t,
                "    schedule:                        as fast as possible"
            );
        }
    }
    let _ = writeln!(
        t,
        "    classes:                         {}{}",
        r.class_count,
        if r.classes.len() < r.class_count as usize {
            format!(" ({} listed)", r.classes.len())
        } else {
            String::new()
        }
    );
    let _ = writeln!(
        t,
        "\n    {:>8} {:>8} {:>7} {:>7} {:>9}  {:<32}  fingerprint",
        "logged", "replayed", "errors", "skipped", "rows diff", "query ID"
    );
    for c in r.classes.iter().take(20) {
        let fp: String = c.fingerprint.chars().take(70).collect();
        let _ = writeln!(
            t,
            "    {:>8} {:>8} {:>7} {:>7} {:>9}  {:<32}  {fp}",
            c.logged, c.replayed, c.errors, c.skipped, c.rows_differ, c.id
        );
    }
    if r.classes.len() > 20 {
        let _ = writeln!(
            t,
            "    ... {} more classes in the JSON result",
            r.classes.len() - 20
        );
    }
    for c in r.classes.iter().filter(|c| c.first_error.is_some()).take(5) {
        let _ = writeln!(
            t,
            "    first error of {}: {}",
            c.id,
            c.first_error.as_deref().unwrap_or_default()
        );
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::testing::{refused, values};

    #[test]
    fn options_parse_and_refuse_bad_values() {
        let c = ReplayConfig::from_options(&values(OPTIONS, &[])).unwrap();
        assert_eq!(
            (c.speed, c.read_only, c.classes, c.threads),
            (None, false, 50, None)
        );
        assert!(c.log.is_empty() && c.log_database && c.format.is_none());
        let c = ReplayConfig::from_options(&values(
            OPTIONS,
            &[
                ("log", "x.log"),
                ("speed", "2"),
                ("threads", "4"),
                ("log-format", "postgres-csv"),
            ],
        ))
        .unwrap();
        assert_eq!((c.speed, c.threads), (Some(2.0), Some(4)));
        assert_eq!(c.format, Some(LogFormat::PgCsv));
        refused(OPTIONS, &[("speed", "-1")], ReplayConfig::from_options);
        refused(OPTIONS, &[("speed", "NaN")], ReplayConfig::from_options);
        refused(OPTIONS, &[("classes", "0")], ReplayConfig::from_options);
        refused(OPTIONS, &[("threads", "0")], ReplayConfig::from_options);
    }

    #[test]
    fn merged_shards_sum_what_they_replayed_and_keep_the_log_once() {
        let class = |replayed, errors| ClassResult {
            id: "A".into(),
            logged: 10,
            skipped: 1,
            replayed,
            errors,
            ..Default::default()
        };
        let shard = |sessions, statements, replayed, errors, lag: f64, events| {
            let mut d = RunDocument::failed_before_start("replay", 1, "", "");
            d.totals.events = events;
            d.set_section(
                SECTION,
                &ReplayResult {
                    sessions,
                    statements,
                    errors,
                    skipped: 1,
                    class_count: 1,
                    max_lag_ms: Some(lag),
                    mean_lag_ms: Some(lag),
                    classes: vec![class(replayed, errors)],
                    ..Default::default()
                },
            );
            d
        };
        let shards = [shard(3, 6, 5, 1, 2.0, 6), shard(2, 3, 3, 0, 8.0, 3)];
        let mut merged = RunDocument::failed_before_start("replay", 2, "", "");
        assert_eq!(Replay.merge_shards(&shards, &mut merged), vec!["replay"]);
        let r: ReplayResult = merged.section(SECTION).unwrap();
        assert_eq!(
            (r.sessions, r.statements, r.errors, r.skipped),
            (5, 9, 1, 1)
        );
        assert_eq!(r.classes.len(), 1);
        let c = &r.classes[0];
        assert_eq!((c.logged, c.skipped, c.replayed, c.errors), (10, 1, 8, 1));
        assert_eq!(r.max_lag_ms, Some(8.0));
        assert_eq!(r.mean_lag_ms, Some(4.0));
    }

    #[test]
    fn long_fingerprints_make_distinct_kind_names() {
        let a = "select ".repeat(40);
        let n = kind_name(&a, "0123456789ABCDEF0123456789ABCDEF");
        assert!(n.ends_with("[89ABCDEF]"), "{n}");
        assert_eq!(kind_name("select ?", "X"), "select ?");
    }
}
