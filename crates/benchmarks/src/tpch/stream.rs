//! A virtual user of a TPC-H run: a query stream (the power test's, or
//! one of the throughput test's) or the refresh stream. Each event is one
//! step: a measured run of a query, a warm-up run, an EXPLAIN, or a
//! refresh function. Query timeouts are enforced by the server and, should
//! it not stop the query, by killing it; a timed-out query is recorded and
//! the stream goes on.

use super::queries::{self, QuerySql};
use super::refresh::{self, Rf};
use super::report::{QueryResult, QueryRun, RefreshResult};
use super::{Dialect, qgen};
use crate::benchmark::ServerControl;
use dbmeter_db::{ConnectOptions, Connection, DbError, ErrorKind};
use dbmeter_engine::{EventError, Flow, Interrupter, Tally, User, UserFactory};
use dbmeter_env::process::HookCommand;
use dbmeter_env::{MachineCounters, MachineDelta};
use dbmeter_result::HookRecord;
use dbmeter_stats::measure::sql;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How a query's runs become its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extract {
    Average,
    MinMax,
    BestPlan,
}

/// Whether and how plans are captured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Explain {
    Off,
    Plan,
    Analyze,
}

/// The run as every stream sees it.
#[derive(Clone, Debug)]
pub struct RunSpec {
    pub dialect: Dialect,
    pub mariadb: bool,
    pub sf: f64,
    /// The power test's stream (user 0) runs.
    pub power: bool,
    /// The throughput test's query streams and refresh stream run (after
    /// the power stream when both do: the full test).
    pub throughput: bool,
    pub streams: u32,
    pub queries: Vec<u8>,
    pub refresh: bool,
    pub first_set: u32,
    pub runs: u32,
    pub warmup_runs: u32,
    pub extract: Extract,
    pub best_plan_count: u32,
    pub explain: Explain,
    pub timeout: Option<Duration>,
    pub validation: bool,
    pub seed: u64,
    /// Restart the server and drop the page cache before each measured run.
    pub cold: bool,
    /// Hooks around each measured run ("" for none).
    pub hook_before: String,
    pub hook_after: String,
    /// The target with its password masked, for the hooks.
    pub shown_target: String,
    /// The refresh functions' statements by update set, made before the run.
    pub update_sets: BTreeMap<u32, refresh::Prepared>,
    /// Under `--shard=I/N`: this process's block of the run's users
    /// (numbered as in [`RunSpec::users`]); None: all of them.
    pub mine: Option<std::ops::Range<usize>>,
}

impl RunSpec {
    /// The most runs a query gets with best-plan extraction.
    fn best_plan_cap(&self) -> u32 {
        self.runs.max(3 * self.best_plan_count)
    }
}

/// qgen's seeds are below 2^31 - 1 (the specification takes a time stamp,
/// mmddhhmmss; larger ones overflow qgen's arithmetic): dbmeter's seed
/// folded into 1..=2147483646.
pub fn qgen_seed(seed: u64) -> u64 {
    const MOD: u64 = 2_147_483_646;
    (seed.wrapping_sub(1)) % MOD + 1
}

/// The qgen seed of `stream`: the run's seed + the stream (the
/// specification seeds each stream so), folded into qgen's range.
pub fn stream_seed(seed: u64, stream: u32) -> u64 {
    qgen_seed(seed.wrapping_add(u64::from(stream)))
}

/// The parameters of query `q` in `stream`: the validation ones, or
/// qgen's from [`stream_seed`]; `seed` is a qgen seed ([`qgen_seed`]).
pub fn parameters(spec_validation: bool, q: u8, stream: u32, seed: u64, sf: f64) -> Vec<String> {
    if spec_validation {
        let mut p = qgen::validation_parameters(q);
        // qgen -d divides Q11's fraction by the scale factor too.
        if q == 11
            && let Some(f) = p.get_mut(1)
        {
            *f = qgen::q11_fraction(sf);
        }
        p
    } else {
        qgen::parameters(q, stream, stream_seed(seed, stream), sf)
    }
}

/// What the streams report, read by the plan after the run.
#[derive(Debug, Default)]
pub struct Shared {
    pub queries: Mutex<Vec<QueryResult>>,
    pub refreshes: Mutex<Vec<RefreshResult>>,
    /// Server restarts of a cold run.
    pub restarts: AtomicU64,
    /// What a cold run could not do (the page cache not dropped, say),
    /// once each.
    pub cold_notes: Mutex<Vec<String>>,
    /// The full test: when the power stream ended (the throughput test
    /// starts), and when the last throughput stream ended.
    pub power_done: Mutex<Option<Instant>>,
    pub throughput_end: Mutex<Option<Instant>>,
    /// Wakes the waiting throughput streams when the power stream ends.
    pub power_over: Condvar,
    /// The power stream ended without finishing (the run is stopping).
    pub power_aborted: AtomicBool,
}

impl Shared {
    /// The full test's throughput interval Ts, once both ends are known.
    pub fn throughput_seconds(&self) -> Option<f64> {
        let start = (*self.power_done.lock().ok()?)?;
        let end = (*self.throughput_end.lock().ok()?)?;
        Some(end.saturating_duration_since(start).as_secs_f64())
    }
}

/// The event kinds, in order: Q1..Q22, RF1, RF2, warm-up, explain, and
/// the restarts of a cold run.
pub fn kinds() -> Vec<String> {
    (1..=22)
        .map(|q| format!("Q{q}"))
        .chain(["RF1", "RF2", "warm-up", "explain", "cold restart"].map(String::from))
        .collect()
}
const KIND_RF1: usize = 22;
const KIND_WARMUP: usize = 24;
const KIND_EXPLAIN: usize = 25;
const KIND_COLD: usize = 26;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Step {
    Query { q: u8, position: u32 },
    Refresh { rf: Rf, set: u32 },
}

/// The stream user `user` runs, and its steps.
fn steps(spec: &RunSpec, user: usize) -> (u32, Vec<Step>) {
    let order = |stream: u32| -> Vec<Step> {
        qgen::stream_order(stream)
            .iter()
            .filter(|q| spec.queries.contains(q))
            .enumerate()
            .map(|(i, &q)| Step::Query {
                q,
                position: i as u32 + 1,
            })
            .collect()
    };
    let mut user = user as u32;
    if spec.power {
        if user == 0 || !spec.throughput {
            let mut v = Vec::new();
            if spec.refresh {
                v.push(Step::Refresh {
                    rf: Rf::Rf1,
                    set: spec.first_set,
                });
            }
            v.extend(order(0));
            if spec.refresh {
                v.push(Step::Refresh {
                    rf: Rf::Rf2,
                    set: spec.first_set,
                });
            }
            return (0, v);
        }
        user -= 1;
    }
    if user < spec.streams {
        return (user + 1, order(user + 1));
    }
    // The refresh stream (numbered after the query streams): one RF1/RF2
    // pair per query stream, on the sets after the power test's.
    let first = spec.first_set + u32::from(spec.power && spec.refresh);
    let v = (0..spec.streams)
        .flat_map(|i| {
            let set = first + i;
            [
                Step::Refresh { rf: Rf::Rf1, set },
                Step::Refresh { rf: Rf::Rf2, set },
            ]
        })
        .collect();
    (spec.streams + 1, v)
}

impl RunSpec {
    /// Query streams: the power test's and the throughput test's.
    pub fn query_streams(&self) -> u32 {
        u32::from(self.power) + if self.throughput { self.streams } else { 0 }
    }

    /// The update sets the run takes: one per query stream; none in a
    /// shard whose block has no refresh function (the shard with the
    /// refresh stream takes them all).
    pub fn sets_needed(&self) -> u32 {
        if !self.refresh || !self.runs_refreshes() {
            return 0;
        }
        self.query_streams()
    }

    /// Whether this process runs refresh functions: the power stream's or
    /// the refresh stream's (the run's last user).
    pub fn runs_refreshes(&self) -> bool {
        let mine = self.own_users();
        (self.power && mine.contains(&0)) || (self.throughput && mine.contains(&(self.users() - 1)))
    }

    /// Virtual users of the run: the query streams and the throughput
    /// test's refresh stream.
    pub fn users(&self) -> usize {
        self.query_streams() as usize + usize::from(self.throughput && self.refresh)
    }

    /// The run's users this process runs: all of them, or under `--shard`
    /// its block.
    pub fn own_users(&self) -> std::ops::Range<usize> {
        self.mine.clone().unwrap_or(0..self.users())
    }

    /// The query streams this process runs, by stream number.
    pub fn own_streams(&self) -> Vec<u32> {
        // Users 0.. are the query streams; the refresh stream is last.
        self.own_users()
            .filter(|&u| u < self.query_streams() as usize)
            .map(|u| steps(self, u).0)
            .collect()
    }
}

/// Interrupts the running statement when it outlives its deadline: the
/// kill behind the server's own timeout.
struct Watchdog {
    deadline: Mutex<Option<Instant>>,
    wake: Condvar,
    fired: AtomicBool,
    done: AtomicBool,
}

impl Watchdog {
    fn start(interrupt: Option<Interrupter>) -> Arc<Watchdog> {
        let w = Arc::new(Watchdog {
            deadline: Mutex::new(None),
            wake: Condvar::new(),
            fired: AtomicBool::new(false),
            done: AtomicBool::new(false),
        });
        let Some(interrupt) = interrupt else {
            return w;
        };
        let me = w.clone();
        let _ = std::thread::Builder::new()
            .name("dbmeter-tpch-watchdog".into())
            .spawn(move || {
                let Ok(mut g) = me.deadline.lock() else {
                    return;
                };
                while !me.done.load(Ordering::Relaxed) {
                    match *g {
                        None => {
                            g = match me.wake.wait(g) {
                                Ok(g) => g,
                                Err(_) => return,
                            };
                        }
                        Some(at) if Instant::now() >= at => {
                            me.fired.store(true, Ordering::Relaxed);
                            *g = None;
                            interrupt();
                        }
                        Some(at) => {
                            let wait = at.saturating_duration_since(Instant::now());
                            g = match me.wake.wait_timeout(g, wait) {
                                Ok((g, _)) => g,
                                Err(_) => return,
                            };
                        }
                    }
                }
            });
        w
    }

    fn arm(&self, after: Option<Duration>) {
        self.fired.store(false, Ordering::Relaxed);
        if let (Some(after), Ok(mut g)) = (after, self.deadline.lock()) {
            *g = Some(Instant::now() + after);
            self.wake.notify_all();
        }
    }

    /// Disarms; true when it killed the statement.
    fn disarm(&self) -> bool {
        if let Ok(mut g) = self.deadline.lock() {
            *g = None;
        }
        self.fired.load(Ordering::Relaxed)
    }

    fn stop(&self) {
        self.done.store(true, Ordering::Relaxed);
        if let Ok(mut g) = self.deadline.lock() {
            *g = None;
        }
        self.wake.notify_all();
    }
}

/// Counters read around a measured run.
struct Probe {
    machine: Option<MachineCounters>,
    counters: BTreeMap<String, String>,
}

/// The query in progress: its SQL, runs so far and plans seen.
struct Current {
    q: u8,
    position: u32,
    params: Vec<String>,
    sql: QuerySql,
    warmups_left: u32,
    runs: Vec<QueryRun>,
    /// The plan to capture before the next measured run.
    explain_next: bool,
    /// A cold start (restart, page cache) is due before the next run.
    cold_next: bool,
    plan_hash: Option<String>,
    plans: BTreeMap<String, String>,
    rows: u64,
    error: Option<String>,
}

pub struct StreamUser {
    conn: Connection,
    server: Option<Arc<dyn ServerControl>>,
    spec: Arc<RunSpec>,
    shared: Arc<Shared>,
    stream: u32,
    steps: Vec<Step>,
    at: usize,
    current: Option<Current>,
    watchdog: Arc<Watchdog>,
}

impl Drop for StreamUser {
    fn drop(&mut self) {
        self.watchdog.stop();
        // A query the stop cut short keeps the runs it had, marked so.
        if let Some(cur) = self.current.take()
            && !cur.runs.is_empty()
        {
            self.finish_query(cur, true);
        }
        // A power stream that stops before its end releases the waiting
        // throughput streams (the run is stopping).
        if self.stream == 0 && self.spec.power && self.spec.throughput {
            self.shared.power_aborted.store(true, Ordering::Relaxed);
            self.shared.power_over.notify_all();
        }
    }
}

/// The statement's outcome in the terms of a run.
enum Ran {
    Rows(u64),
    TimedOut,
}

impl StreamUser {
    /// How long past --query-timeout the watchdog waits for the server
    /// to cancel the statement itself before killing it.
    fn kill_after(&self) -> Option<Duration> {
        self.spec
            .timeout
            .map(|t| t + Duration::from_secs_f64((t.as_secs_f64() * 0.1).clamp(1.0, 10.0)))
    }

    /// Runs the statements of one execution of a query.
    fn execute(&mut self, sql: &QuerySql) -> Result<Ran, DbError> {
        self.watchdog.arm(self.kill_after());
        let r = sql.run_with(&mut self.conn, &sql.query);
        let killed = self.watchdog.disarm();
        match r {
            Ok(rows) => Ok(Ran::Rows(rows.rows.len() as u64)),
            Err(e) if e.kind == ErrorKind::Timeout => Ok(Ran::TimedOut),
            Err(e) if e.kind == ErrorKind::Interrupted && killed => Ok(Ran::TimedOut),
            Err(e) => Err(e),
        }
    }

    fn explain_sql(&self, query: &str) -> String {
        match (self.spec.dialect, self.spec.explain) {
            (Dialect::Sqlite, _) => format!("EXPLAIN QUERY PLAN {query}"),
            (Dialect::Postgres, Explain::Analyze) => {
                format!("EXPLAIN (ANALYZE, BUFFERS) {query}")
            }
            (Dialect::Mysql, Explain::Analyze) if self.spec.mariadb => {
                format!("ANALYZE FORMAT=JSON {query}")
            }
            (Dialect::Mysql, Explain::Analyze) => format!("EXPLAIN ANALYZE {query}"),
            _ => format!("EXPLAIN {query}"),
        }
    }

    /// Captures the plan of `sql`; returns (hash, text).
    fn explain(&mut self, sql: &QuerySql) -> Result<(String, String), DbError> {
        let stmt = self.explain_sql(&sql.query);
        self.watchdog.arm(self.kill_after());
        let r = sql.run_with(&mut self.conn, &stmt);
        self.watchdog.disarm();
        let rows = r?;
        let mut text = String::new();
        if rows.columns.len() > 1 {
            text.push_str(&rows.columns.join(" | "));
            text.push('\n');
        }
        for row in &rows.rows {
            let cells: Vec<&str> = row.iter().map(|c| c.as_deref().unwrap_or("NULL")).collect();
            text.push_str(&cells.join(" | "));
            text.push('\n');
        }
        Ok((plan_hash(&text), text))
    }

    /// Runs a query hook (outside the timed span): `sh: COMMAND` with the
    /// query's facts in its environment, or `sql: STATEMENT` on this
    /// stream's connection.
    fn hook(&mut self, when: &str, command: &str, q: u8, run: usize) -> HookRecord {
        let mut r = HookRecord {
            when: when.into(),
            command: command.into(),
            ok: false,
            exit_code: None,
            output: String::new(),
        };
        let body = match HookCommand::parse(command) {
            HookCommand::Sql(sql) => {
                match self.conn.execute(sql) {
                    Ok(_) => {
                        r.ok = true;
                        r.output = "ok".into();
                    }
                    Err(e) => r.output = format!("{} ({})", e.message, e.code),
                }
                return r;
            }
            HookCommand::Shell(body) => body,
        };
        let out = dbmeter_env::process::shell(
            body,
            &[
                ("DBMETER_WORKLOAD", "tpch".into()),
                ("DBMETER_QUERY", format!("Q{q}")),
                ("DBMETER_STREAM", self.stream.to_string()),
                ("DBMETER_RUN", run.to_string()),
                ("DBMETER_DB", self.spec.shown_target.clone()),
            ],
        );
        r.exit_code = out.exit_code;
        r.ok = out.ok;
        r.output = out.output;
        r
    }

    /// The machine's and the server's counters now (outside the timed
    /// span); what cannot be read is left out.
    fn probe(&mut self) -> Probe {
        let counters = self.conn.server_counters().unwrap_or_default();
        Probe {
            machine: MachineCounters::now(),
            counters,
        }
    }

    /// What moved since `before`: the machine's work and the server's
    /// numeric counters that changed.
    fn delta(&mut self, before: &Probe) -> (Option<MachineDelta>, BTreeMap<String, f64>) {
        let after = self.probe();
        let os = match (&before.machine, &after.machine) {
            (Some(b), Some(a)) => Some(a.since(b)),
            _ => None,
        };
        let counters = after
            .counters
            .iter()
            .filter(|(k, _)| !k.to_ascii_lowercase().contains("uptime"))
            .filter_map(|(k, v)| {
                let a: f64 = v.trim().parse().ok()?;
                let b: f64 = before.counters.get(k)?.trim().parse().ok()?;
                (a != b).then(|| (k.clone(), a - b))
            })
            .collect();
        (os, counters)
    }

    /// Restarts the server (when there is one) and drops the OS page
    /// cache, then reconnects: the next run starts cold.
    fn cold_start(&mut self) -> Result<(), EventError> {
        let Some(server) = self.server.clone() else {
            return Err(EventError::Fatal {
                code: "tpch".into(),
                message: "--cold: no server control".into(),
            });
        };
        let fatal = |message: String| EventError::Fatal {
            code: "cold".into(),
            message,
        };
        if server.restart_server().map_err(fatal)? {
            self.shared.restarts.fetch_add(1, Ordering::Relaxed);
        }
        if let Err(e) = server.drop_page_cache()
            && let Ok(mut notes) = self.shared.cold_notes.lock()
            && !notes.contains(&e)
        {
            notes.push(e);
        }
        self.conn
            .reconnect()
            .map_err(|e| fatal(format!("cannot reconnect after the restart: {}", e.message)))
    }

    fn event_error(e: DbError) -> EventError {
        match e.kind {
            ErrorKind::Interrupted => EventError::Cancelled,
            ErrorKind::ConnectionLost => EventError::ConnectionLost {
                code: e.code,
                message: e.message,
            },
            _ => EventError::Fatal {
                code: e.code,
                message: e.message,
            },
        }
    }

    fn next_step(&mut self) -> Flow {
        self.at += 1;
        if self.at < self.steps.len() {
            return Flow::Continue;
        }
        // The full test: the power stream's end starts the throughput
        // test; the last throughput stream's end ends it.
        let at = if self.stream == 0 {
            &self.shared.power_done
        } else {
            &self.shared.throughput_end
        };
        if let Ok(mut t) = at.lock() {
            *t = Some(Instant::now());
        }
        if self.stream == 0 {
            self.shared.power_over.notify_all();
        }
        Flow::UserDone
    }

    fn refresh(&mut self, rf: Rf, set: u32, tally: &mut Tally) -> Result<Flow, EventError> {
        let spec = self.spec.clone();
        let Some(prepared) = spec.update_sets.get(&set) else {
            return Err(EventError::Fatal {
                code: "tpch".into(),
                message: format!("update set {set} was not prepared"),
            });
        };
        let t = Instant::now();
        let r = refresh::run(&mut self.conn, rf, prepared);
        let seconds = t.elapsed().as_secs_f64();
        tally.kind = KIND_RF1 + if rf == Rf::Rf1 { 0 } else { 1 };
        let (status, rows, error) = match r {
            Ok(n) => {
                tally.measures[sql::WRITES] += 1;
                ("ok", n, None)
            }
            Err(e) if e.kind == ErrorKind::ConnectionLost || e.kind == ErrorKind::Interrupted => {
                return Err(Self::event_error(e));
            }
            Err(e) => ("error", 0, Some(e.message)),
        };
        if let Ok(mut v) = self.shared.refreshes.lock() {
            v.push(RefreshResult {
                name: rf.name().into(),
                stream: self.stream,
                update_set: set,
                seconds,
                rows,
                status: status.into(),
                error,
            });
        }
        Ok(self.next_step())
    }

    fn start_query(&self, q: u8, position: u32) -> Result<Current, EventError> {
        let s = &self.spec;
        let params = parameters(s.validation, q, self.stream, s.seed, s.sf);
        let sql = queries::query(q, s.dialect, &params, self.stream).ok_or_else(|| {
            EventError::Fatal {
                code: "tpch".into(),
                message: format!("Q{q}: no SQL for these parameters: {params:?}"),
            }
        })?;
        Ok(Current {
            q,
            position,
            params,
            sql,
            warmups_left: s.warmup_runs,
            runs: Vec::new(),
            explain_next: s.explain != Explain::Off || s.extract == Extract::BestPlan,
            cold_next: s.cold,
            plan_hash: None,
            plans: BTreeMap::new(),
            rows: 0,
            error: None,
        })
    }

    /// Whether the query has had all the runs it gets.
    fn query_done(&self, c: &Current) -> bool {
        let s = &self.spec;
        if c.error.is_some() {
            return true;
        }
        match s.extract {
            Extract::BestPlan => {
                let n = c.runs.len() as u32;
                if n >= s.best_plan_cap() {
                    return true;
                }
                let fastest = c
                    .runs
                    .iter()
                    .filter(|r| !r.timeout)
                    .min_by(|a, b| a.seconds.total_cmp(&b.seconds));
                match fastest {
                    Some(f) => {
                        let seen =
                            c.runs.iter().filter(|r| r.plan_hash == f.plan_hash).count() as u32;
                        seen >= s.best_plan_count
                    }
                    None => c.runs.iter().all(|r| r.timeout) && n >= s.runs.max(1),
                }
            }
            _ => c.runs.len() as u32 >= s.runs.max(1),
        }
    }

    fn query(&mut self, q: u8, position: u32, tally: &mut Tally) -> Result<Flow, EventError> {
        let mut cur = match self.current.take() {
            Some(c) => c,
            None => self.start_query(q, position)?,
        };
        let result = self.query_step(&mut cur, tally);
        match result {
            Ok(()) | Err(EventError::TimedOut { .. }) if self.query_done(&cur) => {
                self.finish_query(cur, false);
                match (self.next_step(), result) {
                    // The engine counts the timeout; the stream goes on.
                    (Flow::Continue, Err(e)) => Err(e),
                    (flow, _) => Ok(flow),
                }
            }
            Ok(()) => {
                self.current = Some(cur);
                Ok(Flow::Continue)
            }
            Err(e) => {
                // A timeout before the last run, a restart after a
                // reconnect, or a stop: the query goes on from here.
                self.current = Some(cur);
                Err(e)
            }
        }
    }

    /// One event of a query: an EXPLAIN, a warm-up run or a measured run.
    fn query_step(&mut self, cur: &mut Current, tally: &mut Tally) -> Result<(), EventError> {
        if cur.cold_next {
            tally.kind = KIND_COLD;
            tally.measures[sql::OTHERS] += 1;
            self.cold_start()?;
            cur.cold_next = false;
            return Ok(());
        }
        if cur.explain_next {
            tally.kind = KIND_EXPLAIN;
            tally.measures[sql::OTHERS] += 1;
            let sql = cur.sql.clone();
            match self.explain(&sql) {
                Ok((hash, text)) => {
                    cur.plans.entry(hash.clone()).or_insert(text);
                    cur.plan_hash = Some(hash);
                }
                Err(e) if matches!(e.kind, ErrorKind::ConnectionLost | ErrorKind::Interrupted) => {
                    return Err(Self::event_error(e));
                }
                // A plan that cannot be had (a timeout of EXPLAIN ANALYZE)
                // does not stop the query.
                Err(_) => cur.plan_hash = None,
            }
            cur.explain_next = false;
            return Ok(());
        }
        let warmup = cur.warmups_left > 0;
        tally.kind = if warmup {
            KIND_WARMUP
        } else {
            usize::from(cur.q - 1)
        };
        tally.measures[sql::READS] += 1;
        let sql = cur.sql.clone();
        let run_no = cur.runs.len() + 1;
        let mut hooks = Vec::new();
        if !warmup && !self.spec.hook_before.is_empty() {
            let h = self.spec.hook_before.clone();
            hooks.push(self.hook("before_query", &h, cur.q, run_no));
        }
        let before = (!warmup).then(|| self.probe());
        let t = Instant::now();
        let ran = self.execute(&sql);
        let seconds = t.elapsed().as_secs_f64();
        let (os, counters) = match &before {
            Some(b) => self.delta(b),
            None => (None, BTreeMap::new()),
        };
        if !warmup && !self.spec.hook_after.is_empty() {
            let h = self.spec.hook_after.clone();
            hooks.push(self.hook("after_query", &h, cur.q, run_no));
        }
        let ran = match ran {
            Ok(r) => r,
            Err(e) if matches!(e.kind, ErrorKind::ConnectionLost | ErrorKind::Interrupted) => {
                return Err(Self::event_error(e));
            }
            Err(e) => {
                cur.error = Some(format!("{} ({})", e.message, e.code));
                return Ok(());
            }
        };
        if warmup {
            cur.warmups_left -= 1;
            return Ok(());
        }
        let timeout = matches!(ran, Ran::TimedOut);
        if let Ran::Rows(n) = ran {
            cur.rows = n;
        }
        cur.runs.push(QueryRun {
            seconds,
            timeout,
            plan_hash: cur.plan_hash.clone(),
            os,
            counters,
            hooks,
        });
        cur.explain_next = self.spec.extract == Extract::BestPlan;
        cur.cold_next = self.spec.cold;
        if timeout {
            return Err(EventError::TimedOut {
                code: "query-timeout".into(),
            });
        }
        Ok(())
    }

    /// Records query `cur` with the value its runs give, or as
    /// `interrupted` (no value) when the run stopped during its runs.
    fn finish_query(&mut self, cur: Current, interrupted: bool) {
        let s = &self.spec;
        let done: Vec<&QueryRun> = cur.runs.iter().filter(|r| !r.timeout).collect();
        let min = done.iter().map(|r| r.seconds).min_by(f64::total_cmp);
        let max = done.iter().map(|r| r.seconds).max_by(f64::total_cmp);
        let any_timeout = cur.runs.iter().any(|r| r.timeout);
        let fastest_plan = done
            .iter()
            .min_by(|a, b| a.seconds.total_cmp(&b.seconds))
            .and_then(|r| r.plan_hash.clone());
        let (seconds, status) = if cur.error.is_some() {
            (None, "error")
        } else if interrupted {
            (None, "interrupted")
        } else {
            match s.extract {
                Extract::Average if any_timeout || done.is_empty() => (None, "timeout"),
                Extract::Average => (
                    Some(done.iter().map(|r| r.seconds).sum::<f64>() / done.len() as f64),
                    "ok",
                ),
                _ if done.is_empty() => (None, "timeout"),
                Extract::MinMax => (min, "ok"),
                Extract::BestPlan => (
                    done.iter()
                        .filter(|r| r.plan_hash == fastest_plan)
                        .map(|r| r.seconds)
                        .min_by(f64::total_cmp),
                    "ok",
                ),
            }
        };
        let plan = fastest_plan
            .as_ref()
            .and_then(|h| cur.plans.get(h))
            .or_else(|| cur.plans.values().next())
            .cloned();
        let r = QueryResult {
            query: cur.q,
            stream: self.stream,
            position: cur.position,
            parameters: cur.params,
            runs: cur.runs,
            status: status.into(),
            seconds,
            min_seconds: min,
            max_seconds: max,
            rows: cur.rows,
            error: cur.error,
            plan,
        };
        if let Ok(mut v) = self.shared.queries.lock() {
            v.push(r);
        }
    }
}

/// A plan's identity: its text without numbers (estimates and costs
/// change from run to run; the operators and their order do not).
fn plan_hash(text: &str) -> String {
    use std::hash::{Hash, Hasher};
    let shape: String = text.chars().filter(|c| !c.is_ascii_digit()).collect();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    shape.hash(&mut h);
    format!("{:016x}", h.finish())
}

impl User for StreamUser {
    fn event(&mut self, tally: &mut Tally) -> Result<Flow, EventError> {
        match self.steps.get(self.at).copied() {
            None => Ok(Flow::UserDone),
            Some(Step::Refresh { rf, set }) => self.refresh(rf, set, tally),
            Some(Step::Query { q, position }) => self.query(q, position, tally),
        }
    }

    fn reconnect(&mut self) -> Result<(), String> {
        self.conn.reconnect().map_err(|e| e.message)
    }

    fn interrupter(&self) -> Option<Interrupter> {
        self.conn.interrupter()
    }

    /// In the full test the throughput streams wait for the power stream
    /// before their first event. Should it stop without finishing, they
    /// wait out the run instead (the engine ends the wait when it stops).
    fn pause(&mut self) -> Duration {
        if !(self.spec.power && self.spec.throughput && self.stream != 0 && self.at == 0) {
            return Duration::ZERO;
        }
        let Ok(mut done) = self.shared.power_done.lock() else {
            return Duration::ZERO;
        };
        while done.is_none() && !self.shared.power_aborted.load(Ordering::Relaxed) {
            done = match self
                .shared
                .power_over
                .wait_timeout(done, Duration::from_millis(200))
            {
                Ok((d, _)) => d,
                Err(_) => return Duration::ZERO,
            };
        }
        if done.is_some() {
            Duration::ZERO
        } else {
            Duration::from_secs(24 * 3600)
        }
    }
}

pub struct StreamFactory {
    pub server: Option<Arc<dyn ServerControl>>,
    pub spec: Arc<RunSpec>,
    pub shared: Arc<Shared>,
    pub connect: ConnectOptions,
}

impl UserFactory for StreamFactory {
    fn create(&self, user_id: usize) -> Result<Box<dyn User>, String> {
        let conn = Connection::connect_nth(&self.connect, user_id).map_err(|e| e.message)?;
        // Under --shard, user 0 of this process is the first of its block.
        let (stream, steps) = steps(&self.spec, self.spec.own_users().start + user_id);
        let watchdog = Watchdog::start(conn.interrupter());
        Ok(Box::new(StreamUser {
            conn,
            server: self.server.clone(),
            spec: self.spec.clone(),
            shared: self.shared.clone(),
            stream,
            steps,
            at: 0,
            current: None,
            watchdog,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(throughput: bool, refresh: bool) -> RunSpec {
        RunSpec {
            dialect: Dialect::Sqlite,
            mariadb: false,
            sf: 1.0,
            power: !throughput,
            throughput,
            streams: 2,
            queries: (1..=22).collect(),
            refresh,
            first_set: 5,
            runs: 1,
            warmup_runs: 0,
            extract: Extract::Average,
            best_plan_count: 3,
            explain: Explain::Plan,
            timeout: None,
            validation: false,
            seed: 1,
            cold: false,
            hook_before: String::new(),
            hook_after: String::new(),
            shown_target: String::new(),
            update_sets: BTreeMap::new(),
            mine: None,
        }
    }

    #[test]
    fn power_and_throughput_steps() {
        let (s, v) = steps(&spec(false, true), 0);
        assert_eq!(s, 0);
        assert_eq!(v.len(), 24);
        assert_eq!(
            v[0],
            Step::Refresh {
                rf: Rf::Rf1,
                set: 5
            }
        );
        assert_eq!(v[1], Step::Query { q: 14, position: 1 });
        assert_eq!(
            v[23],
            Step::Refresh {
                rf: Rf::Rf2,
                set: 5
            }
        );
        let (s, v) = steps(&spec(true, true), 1);
        assert_eq!((s, v.len()), (2, 22));
        let (s, v) = steps(&spec(true, true), 2);
        assert_eq!(s, 3, "the refresh stream comes after the query streams");
        assert_eq!(v.len(), 4);
        assert_eq!(
            v[2],
            Step::Refresh {
                rf: Rf::Rf1,
                set: 6
            }
        );
        // The full test: the power stream (set 5), then 2 query streams and
        // the refresh stream (sets 6 and 7).
        let mut full = spec(true, true);
        full.power = true;
        assert_eq!((full.users(), full.sets_needed()), (4, 3));
        assert_eq!(steps(&full, 0).0, 0);
        assert_eq!(
            steps(&full, 0).1[0],
            Step::Refresh {
                rf: Rf::Rf1,
                set: 5
            }
        );
        assert_eq!(steps(&full, 2).0, 2);
        let (s, v) = steps(&full, 3);
        assert_eq!(
            (s, v[0]),
            (
                3,
                Step::Refresh {
                    rf: Rf::Rf1,
                    set: 6
                }
            )
        );
        // Shards of a throughput test with 3 streams and the refresh
        // stream: blocks of the 4 users, the refresh stream in the last.
        let mut three = spec(true, true);
        three.streams = 3;
        three.mine = Some(0..2);
        assert_eq!(three.own_streams(), vec![1, 2]);
        assert_eq!((three.runs_refreshes(), three.sets_needed()), (false, 0));
        three.mine = Some(2..4);
        assert_eq!(three.own_streams(), vec![3]);
        assert_eq!((three.runs_refreshes(), three.sets_needed()), (true, 3));
        assert_eq!(steps(&three, 3).0, 4, "the refresh stream");
        let mut sub = spec(false, false);
        sub.queries = vec![1, 3];
        let (_, v) = steps(&sub, 0);
        assert_eq!(v.len(), 2);
        assert_eq!(kinds().len(), 27);
    }

    #[test]
    fn plan_identity_ignores_numbers() {
        assert_eq!(
            plan_hash("Seq Scan rows=100"),
            plan_hash("Seq Scan rows=250")
        );
        assert_ne!(plan_hash("Seq Scan"), plan_hash("Index Scan"));
    }

    #[test]
    fn stream_parameters() {
        assert_eq!(qgen_seed(1), 1);
        assert_eq!(qgen_seed(2_147_483_646), 2_147_483_646);
        assert_eq!(qgen_seed(2_147_483_647), 1);
        assert!((1..=2_147_483_646).contains(&qgen_seed(0)));
        for seed in [0, 1, u64::MAX, 1_795_533_316_262_114_701] {
            for q in 1..=22 {
                let p = parameters(false, q, 3, qgen_seed(seed), 1.0);
                assert!(
                    p.iter().all(|x| !x.contains(".-") && !x.contains("#-")),
                    "{seed} Q{q}: {p:?}"
                );
            }
        }
        assert_eq!(parameters(true, 1, 0, 7, 1.0), vec!["90".to_string()]);
        assert_eq!(parameters(true, 11, 0, 7, 0.01)[1], "0.0100000000");
    }
}
