//! pgbench as a dbmeter benchmark: `prepare` is pgbench's `-i`, `run`
//! runs built-in scripts and script files with pgbench's options, and the
//! report has pgbench's lines (and `-r`'s statement latencies) beside
//! dbmeter's own.
//!
//! Each virtual user is one pgbench client ([`Client`]) over its own
//! connection ([`DbSession`]); one event is one transaction. The events'
//! kinds are the scripts; each command's latency and failures are kept by
//! its client and summed into the result's `pgbench` section at the end.

use super::builtin::find_builtin;
use super::client::{Client, ExecOptions, FailureKind, Setup, TxStatus};
use super::db_session::DbSession;
use super::host::SystemHost;
use super::init::{DEFAULT_STEPS, InitSpec, drop_tables, initialize};
use super::script::CommandKind;
use super::script_set::{ScriptSet, ScriptSetBuilder};
use super::session::QueryMode;
use super::variables::Definition;
use super::{CommandStats, parse_weight};
use crate::benchmark::{BenchError, Benchmark, Context, RunPlan, Verb, no_such_verb, verb};
use crate::options::{OptKind, OptSpec, choice, opt};
use dbmeter_db::{ConnectOptions, Connection, Dialect, ErrorKind, IgnoreList, PsMode};
use dbmeter_engine::{
    EngineConfig, EventError, Flow, Interrupter, RunResult, Tally, User, UserFactory,
};
use dbmeter_result::RunDocument;
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The key of the result's section.
const SECTION: &str = "pgbench";

pub struct Pgbench;

/// How a command counts in dbmeter's reads/writes/others.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    Read,
    Write,
    Other,
    /// A meta-command: no query.
    Meta,
}

fn class_of(kind: &CommandKind) -> Class {
    let CommandKind::Sql(q) = kind else {
        return Class::Meta;
    };
    let first = q
        .text
        .split(|c: char| !c.is_ascii_alphabetic())
        .find(|w| !w.is_empty())
        .unwrap_or("")
        .to_ascii_lowercase();
    match first.as_str() {
        "select" | "with" | "values" | "table" | "show" => Class::Read,
        "insert" | "update" | "delete" | "merge" | "replace" | "copy" => Class::Write,
        _ => Class::Other,
    }
}

/// The words of a comma-separated option, trimmed, empty ones left out.
fn list(s: &str) -> impl Iterator<Item = &str> {
    s.split(',').map(str::trim).filter(|w| !w.is_empty())
}

/// The result's `pgbench` section.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Section {
    pub scale: i64,
    pub query_mode: String,
    pub clients: usize,
    pub max_tries: u32,
    /// `--transactions` (per client); 0 when the run is timed.
    pub transactions_per_client: u64,
    pub latency_limit_ms: Option<f64>,
    /// Transactions over the latency limit.
    pub late: u64,
    /// Transactions that failed with a serialization error or a deadlock
    /// after their tries.
    pub failed: u64,
    /// Completed transactions (warm-up included) and their latencies.
    pub transactions: u64,
    pub latency_avg_ms: f64,
    pub latency_stddev_ms: f64,
    pub scripts: Vec<ScriptSection>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ScriptSection {
    pub name: String,
    pub weight: u32,
    pub transactions: u64,
    pub commands: Vec<CommandSection>,
}

/// One command's numbers (pgbench's `-r`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct CommandSection {
    pub line: usize,
    pub command: String,
    pub count: u64,
    pub latency_avg_ms: f64,
    pub failures: u64,
    pub retries: u64,
}

impl Pgbench {
    fn init_spec(ctx: &Context) -> Result<InitSpec, BenchError> {
        let o = ctx.options;
        InitSpec::new(
            o.i64("scale"),
            o.i64("fillfactor"),
            o.str("init-steps"),
            o.bool("foreign-keys"),
            o.bool("no-vacuum"),
            o.bool("unlogged-tables"),
        )
        .map_err(BenchError::Usage)
    }

    /// The scripts of `--builtin` and `--file`; whether a built-in one is
    /// among them.
    fn scripts(ctx: &Context) -> Result<(ScriptSet, bool), BenchError> {
        let o = ctx.options;
        let mut b = ScriptSetBuilder::new();
        let mut builtin = false;
        for spec in list(o.str("builtin")) {
            // Checked here for a message that names the option.
            let (name, _) = parse_weight(spec).map_err(BenchError::Usage)?;
            find_builtin(name).map_err(|e| BenchError::Usage(format!("--builtin: {e}")))?;
            b.add_builtin(spec).map_err(BenchError::Usage)?;
            builtin = true;
        }
        for spec in list(o.str("file")) {
            b.add_file(spec).map_err(BenchError::Failed)?;
        }
        if list(o.str("builtin")).next().is_none() && list(o.str("file")).next().is_none() {
            builtin = true;
        }
        let set = b.build().map_err(BenchError::Usage)?;
        Ok((set, builtin))
    }

    /// `:scale`: with a built-in script the number of branches (as
    /// pgbench), else `--scale`.
    fn scale(conn: &mut Connection, ctx: &Context, builtin: bool) -> Result<i64, BenchError> {
        if !builtin {
            return Ok(ctx.options.i64("scale").max(1));
        }
        let prepare = format!(
            "run `dbmeter prepare pgbench --scale=N{}` first",
            ctx.db_option()
        );
        let n = conn
            .query_i64("select count(*) from pgbench_branches")
            .map_err(|e| {
                BenchError::Failed(format!(
                    "cannot count the rows of pgbench_branches ({}): {prepare}",
                    e.message
                ))
            })?
            .unwrap_or(0);
        if n < 1 {
            return Err(BenchError::Failed(format!(
                "pgbench_branches is empty: {prepare}"
            )));
        }
        if ctx.options.given("scale") && ctx.options.i64("scale") != n {
            ctx.say(&format!(
                "scale option ignored, using count from pgbench_branches table ({n})"
            ));
        }
        Ok(n)
    }
}

impl Benchmark for Pgbench {
    fn name(&self) -> &str {
        "pgbench"
    }

    fn summary(&self) -> &str {
        "pgbench's tables and transactions (tpcb-like, simple-update, select-only) and pgbench script files"
    }

    fn options(&self) -> Vec<OptSpec> {
        vec![
            opt(
                "scale",
                OptKind::Int,
                "1",
                "scale factor: 100000 accounts, 10 tellers and 1 branch per unit (pgbench -s); runs of built-in scripts read it from pgbench_branches",
            )
            .shapes_data(),
            opt(
                "fillfactor",
                OptKind::Int,
                "100",
                "fill factor of the tables, 10 to 100 (pgbench -F; PostgreSQL only)",
            )
            .shapes_data(),
            opt(
                "foreign-keys",
                OptKind::Bool,
                "off",
                "create foreign keys between the tables (pgbench --foreign-keys)",
            )
            .shapes_data(),
            opt(
                "init-steps",
                OptKind::Str,
                DEFAULT_STEPS,
                "prepare's steps (pgbench -I): d drop, t create tables, g generate client-side, G generate server-side, v vacuum, p primary keys, f foreign keys",
            ),
            opt(
                "no-vacuum",
                OptKind::Bool,
                "off",
                "prepare: leave out the vacuum step; run: do not vacuum pgbench_branches and pgbench_tellers and empty pgbench_history first, as pgbench does unless -n",
            ),
            opt(
                "unlogged-tables",
                OptKind::Bool,
                "off",
                "create the tables unlogged (pgbench --unlogged-tables; PostgreSQL only)",
            )
            .shapes_data(),
            opt(
                "builtin",
                OptKind::Str,
                "",
                "built-in scripts, comma-separated NAME[@WEIGHT]: tpcb-like, simple-update, select-only or an unambiguous prefix (pgbench -b); tpcb-like when neither --builtin nor --file is given",
            ),
            opt(
                "file",
                OptKind::Str,
                "",
                "pgbench script files, comma-separated PATH[@WEIGHT] (pgbench -f)",
            ),
            opt(
                "define",
                OptKind::Str,
                "",
                "variables for the scripts, comma-separated NAME=VALUE (pgbench -D)",
            ),
            opt(
                "protocol",
                choice(&["simple", "extended", "prepared"]),
                "simple",
                "how statements are sent (pgbench -M)",
            ),
            opt(
                "transactions",
                OptKind::Int,
                "0",
                "transactions each client runs, then the run ends (pgbench -t); 0: run for --time",
            ),
            opt(
                "latency-limit",
                OptKind::Float,
                "0",
                "count transactions that take longer than this many milliseconds as late, and retry none past it (pgbench -L); 0: no limit",
            ),
            opt(
                "random-seed",
                OptKind::Str,
                "",
                "seed of the scripts' random functions (pgbench --random-seed): a number; empty: the run's seed (--rand-seed)",
            ),
            opt(
                "max-tries",
                OptKind::Int,
                "1",
                "runs of a transaction that fails with a serialization error or deadlock (pgbench --max-tries); 0: no limit (needs --latency-limit or --time)",
            ),
        ]
    }

    fn verbs(&self) -> Vec<Verb> {
        vec![
            verb(
                "prepare",
                "create and fill pgbench's tables as pgbench -i does",
            ),
            verb("cleanup", "drop pgbench's tables"),
        ]
    }

    fn dataset(&self) -> Option<String> {
        Some("pgbench".into())
    }

    fn writes(&self) -> bool {
        true
    }

    fn command(&self, verb: &str, ctx: &Context) -> Result<(), BenchError> {
        match verb {
            "prepare" => {
                let spec = Self::init_spec(ctx)?;
                let mut conn = Connection::connect(&ctx.setup_connection()?)?;
                initialize(&mut conn, &spec, ctx)
            }
            "cleanup" => {
                let mut conn = Connection::connect(&ctx.setup_connection()?)?;
                drop_tables(&mut conn)?;
                ctx.say(
                    "dropped pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers",
                );
                Ok(())
            }
            _ => Err(no_such_verb(self, verb)),
        }
    }

    fn plan(&self, ctx: &Context) -> Result<Box<dyn RunPlan>, BenchError> {
        let o = ctx.options;
        let (set, builtin) = Self::scripts(ctx)?;
        let defines = list(o.str("define"))
            .map(Definition::parse)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| BenchError::Usage(format!("--define: {e}")))?;
        let mode = QueryMode::parse(o.str("protocol")).map_err(BenchError::Usage)?;
        let seed = match o.str("random-seed").trim() {
            "" => ctx.seed,
            s => s.parse::<u64>().map_err(|_| {
                BenchError::Usage(format!(
                    "invalid --random-seed={s}: give a whole number (or leave it out to use the run's seed)"
                ))
            })?,
        };
        let transactions = o.i64("transactions");
        if transactions < 0 {
            return Err(BenchError::Usage(format!(
                "invalid --transactions={transactions}: give 0 or more"
            )));
        }
        let max_tries = o.i64("max-tries");
        let limit_ms = o.f64("latency-limit");
        if !(0..=u32::MAX as i64).contains(&max_tries) || limit_ms < 0.0 {
            return Err(BenchError::Usage(
                "--max-tries and --latency-limit take 0 or more".into(),
            ));
        }
        let latency_limit = (limit_ms > 0.0).then(|| Duration::from_secs_f64(limit_ms / 1000.0));
        if max_tries == 0 && latency_limit.is_none() && transactions > 0 {
            return Err(BenchError::Usage(
                "--max-tries=0 (no limit on tries) needs --latency-limit or a timed run (--time without --transactions)".into(),
            ));
        }
        let mut conn = Connection::connect(&ctx.setup_connection()?)?;
        let version = conn.server_version();
        let scale = Self::scale(&mut conn, ctx, builtin)?;
        if !o.bool("no-vacuum") {
            before_run(&mut conn, ctx);
        }
        drop(conn);
        let set = Arc::new(set);
        let setup = Setup::new(
            Arc::clone(&set),
            ctx.threads.max(1),
            seed,
            scale,
            defines,
            ExecOptions {
                mode,
                max_tries: max_tries as u32,
                latency_limit,
            },
        );
        let classes = set
            .scripts()
            .iter()
            .map(|s| s.commands.iter().map(|c| class_of(&c.kind)).collect())
            .collect();
        let mut connect = ctx.user_connection()?;
        if mode == QueryMode::Prepared {
            connect.ps_mode = PsMode::Auto;
        }
        let shared = Arc::new(Mutex::new(Totals::new(&set)));
        let section = Section {
            scale,
            query_mode: mode.name().into(),
            clients: ctx.threads.max(1),
            max_tries: max_tries as u32,
            transactions_per_client: transactions as u64,
            latency_limit_ms: (limit_ms > 0.0).then_some(limit_ms),
            ..Section::default()
        };
        Ok(Box::new(PgbenchPlan {
            version,
            set: Arc::clone(&set),
            time_given: o.given("time"),
            section,
            shared: Arc::clone(&shared),
            users: Arc::new(Users {
                setup,
                connect,
                classes: Arc::new(classes),
                ignore: ctx.ignore.clone(),
                transactions: transactions as u64,
                latency_limit,
                shared,
            }),
        }))
    }

    fn report_text(&self, doc: &RunDocument) -> Option<String> {
        let s: Section = doc.section(SECTION)?;
        Some(report(&s, doc))
    }
}

/// What pgbench does before a run unless `-n`: vacuums the small tables
/// and empties pgbench_history. Errors are ignored (a custom script's
/// database may have no such tables).
fn before_run(conn: &mut Connection, ctx: &Context) {
    let steps: &[&str] = match conn.dialect() {
        Dialect::Postgres => &[
            "vacuum pgbench_branches",
            "vacuum pgbench_tellers",
            "truncate pgbench_history",
        ],
        Dialect::Mysql => &["truncate table pgbench_history"],
        Dialect::Sqlite => &["delete from pgbench_history"],
    };
    let failed = steps
        .iter()
        .filter(|sql| conn.execute(sql).is_err())
        .count();
    if failed == 0 {
        ctx.say("vacuumed pgbench_branches and pgbench_tellers, emptied pgbench_history (--no-vacuum leaves them)");
    }
}

/// pgbench's report lines.
fn report(s: &Section, doc: &RunDocument) -> String {
    use std::fmt::Write;
    let mut t = String::new();
    let kind = match s.scripts.as_slice() {
        [one] => one.name.clone(),
        _ => "multiple scripts".into(),
    };
    let _ = writeln!(t, "transaction type: {kind}");
    let _ = writeln!(t, "scaling factor: {}", s.scale);
    let _ = writeln!(t, "query mode: {}", s.query_mode);
    let _ = writeln!(t, "number of clients: {}", s.clients);
    let _ = writeln!(t, "number of threads: {}", s.clients);
    let _ = writeln!(t, "maximum number of tries: {}", s.max_tries);
    let processed = doc.totals.events;
    if s.transactions_per_client > 0 {
        let _ = writeln!(
            t,
            "number of transactions per client: {}",
            s.transactions_per_client
        );
        let _ = writeln!(
            t,
            "number of transactions actually processed: {processed}/{}",
            s.transactions_per_client * s.clients as u64
        );
    } else {
        let _ = writeln!(t, "duration: {:.0} s", doc.totals.duration_s);
        let _ = writeln!(t, "number of transactions actually processed: {processed}");
    }
    let all = processed + s.failed;
    let pct = |n: u64| {
        if all > 0 {
            n as f64 * 100.0 / all as f64
        } else {
            0.0
        }
    };
    let _ = writeln!(
        t,
        "number of failed transactions: {} ({:.3}%)",
        s.failed,
        pct(s.failed)
    );
    if let Some(limit) = s.latency_limit_ms {
        let _ = writeln!(
            t,
            "number of transactions above the {limit:.1} ms latency limit: {}/{} ({:.3}%)",
            s.late,
            all,
            pct(s.late)
        );
    }
    let _ = writeln!(t, "latency average = {:.3} ms", doc.latency_ms.avg_ms);
    let _ = writeln!(t, "latency stddev = {:.3} ms", s.latency_stddev_ms);
    if let Some(r) = &doc.rate {
        let _ = writeln!(t, "rate limit: {:.1} tps", r.target_per_s);
    }
    let _ = writeln!(
        t,
        "tps = {:.6} (without initial connection time)",
        doc.totals.events_per_s
    );
    let many = s.scripts.len() > 1;
    let total_weight: u64 = s.scripts.iter().map(|x| x.weight as u64).sum();
    let total_tx: u64 = s.scripts.iter().map(|x| x.transactions).sum();
    if !many {
        let _ = writeln!(t, "statement latencies in milliseconds and failures:");
    }
    for (i, sc) in s.scripts.iter().enumerate() {
        if many {
            let share = |n: u64, of: u64| {
                if of > 0 {
                    n as f64 * 100.0 / of as f64
                } else {
                    0.0
                }
            };
            let _ = writeln!(t, "SQL script {}: {}", i + 1, sc.name);
            let _ = writeln!(
                t,
                " - weight: {} (targets {:.1}% of total)",
                sc.weight,
                share(sc.weight as u64, total_weight)
            );
            let tps = if doc.totals.duration_s > 0.0 {
                sc.transactions as f64 / doc.totals.duration_s
            } else {
                0.0
            };
            let _ = writeln!(
                t,
                " - {} transactions ({:.1}% of total, tps = {tps:.6})",
                sc.transactions,
                share(sc.transactions, total_tx)
            );
            let _ = writeln!(t, " - statement latencies in milliseconds and failures:");
        }
        for c in &sc.commands {
            let _ = writeln!(
                t,
                "   {:11.3}  {:10}  {}",
                c.latency_avg_ms, c.failures, c.command
            );
        }
    }
    t
}

/// What the users add up: each command's numbers and the transactions'.
struct Totals {
    commands: Vec<Vec<CommandStats>>,
    script_tx: Vec<u64>,
    tx: u64,
    sum: f64,
    sum_sq: f64,
    late: u64,
    failed: u64,
}

impl Totals {
    fn new(set: &ScriptSet) -> Totals {
        Totals {
            commands: set
                .scripts()
                .iter()
                .map(|s| vec![CommandStats::default(); s.commands.len()])
                .collect(),
            script_tx: vec![0; set.scripts().len()],
            tx: 0,
            sum: 0.0,
            sum_sq: 0.0,
            late: 0,
            failed: 0,
        }
    }
}

struct PgbenchPlan {
    version: String,
    set: Arc<ScriptSet>,
    time_given: bool,
    section: Section,
    shared: Arc<Mutex<Totals>>,
    users: Arc<Users>,
}

impl RunPlan for PgbenchPlan {
    fn server_version(&self) -> String {
        self.version.clone()
    }

    fn kinds(&self) -> Vec<String> {
        self.set.scripts().iter().map(|s| s.name.clone()).collect()
    }

    fn users(&self) -> Arc<dyn UserFactory> {
        self.users.clone()
    }

    fn shape_engine(&self, engine: &mut EngineConfig) {
        // -t: the clients' transactions end the run; --time only as a cap.
        if self.section.transactions_per_client > 0 && !self.time_given {
            engine.time = None;
        }
    }

    fn finish(&mut self, _result: &RunResult, doc: &mut RunDocument) {
        let mut s = self.section.clone();
        if let Ok(t) = self.shared.lock() {
            s.transactions = t.tx;
            s.late = t.late;
            s.failed = t.failed;
            if t.tx > 0 {
                let n = t.tx as f64;
                let mean = t.sum / n;
                s.latency_avg_ms = mean * 1e3;
                s.latency_stddev_ms = ((t.sum_sq / n - mean * mean).max(0.0)).sqrt() * 1e3;
            }
            s.scripts = self
                .set
                .scripts()
                .iter()
                .enumerate()
                .map(|(i, sc)| ScriptSection {
                    name: sc.name.clone(),
                    weight: sc.weight,
                    transactions: t.script_tx.get(i).copied().unwrap_or(0),
                    commands: sc
                        .commands
                        .iter()
                        .enumerate()
                        .map(|(j, c)| {
                            let st = t
                                .commands
                                .get(i)
                                .and_then(|v| v.get(j))
                                .copied()
                                .unwrap_or_default();
                            CommandSection {
                                line: c.line,
                                command: c.first_line.clone(),
                                count: st.count,
                                latency_avg_ms: st.mean().map_or(0.0, |d| d.as_secs_f64() * 1e3),
                                failures: st.failures,
                                retries: st.retries,
                            }
                        })
                        .collect(),
                })
                .collect();
        }
        doc.set_section(SECTION, &s);
    }
}

struct Users {
    setup: Setup,
    connect: ConnectOptions,
    classes: Arc<Vec<Vec<Class>>>,
    ignore: IgnoreList,
    transactions: u64,
    latency_limit: Option<Duration>,
    shared: Arc<Mutex<Totals>>,
}

impl UserFactory for Users {
    fn create(&self, user_id: usize) -> Result<Box<dyn User>, String> {
        let conn = Connection::connect_nth(&self.connect, user_id).map_err(|e| e.message)?;
        Ok(Box::new(PgbenchUser {
            client: self.setup.client(user_id),
            session: DbSession::new(conn, Arc::clone(self.setup.scripts())),
            host: SystemHost::new(),
            classes: Arc::clone(&self.classes),
            ignore: self.ignore.clone(),
            left: self.transactions,
            latency_limit: self.latency_limit,
            shared: Arc::clone(&self.shared),
            script_tx: vec![0; self.setup.scripts().scripts().len()],
            tx: 0,
            sum: 0.0,
            sum_sq: 0.0,
            late: 0,
            failed: 0,
        }))
    }
}

struct PgbenchUser {
    client: Client,
    session: DbSession,
    host: SystemHost,
    classes: Arc<Vec<Vec<Class>>>,
    ignore: IgnoreList,
    /// Transactions still to run with `--transactions` (0: no limit).
    left: u64,
    latency_limit: Option<Duration>,
    shared: Arc<Mutex<Totals>>,
    script_tx: Vec<u64>,
    tx: u64,
    sum: f64,
    sum_sq: f64,
    late: u64,
    failed: u64,
}

impl PgbenchUser {
    /// Counts one transaction toward `--transactions`: the flow after it.
    fn count_down(&mut self) -> Flow {
        if self.left == 0 {
            return Flow::Continue;
        }
        self.left -= 1;
        if self.left == 0 {
            Flow::UserDone
        } else {
            Flow::Continue
        }
    }

    /// Ends the transaction an error left open (errors of its own are of
    /// no interest: there may be none open).
    fn roll_back(&mut self) {
        let _ = self.session.connection().execute("ROLLBACK");
    }
}

impl User for PgbenchUser {
    fn event(&mut self, tally: &mut Tally) -> Result<Flow, EventError> {
        let out = self
            .client
            .run_transaction(&mut self.session, &mut self.host);
        tally.kind = out.script;
        if let Some(classes) = self.classes.get(out.script) {
            for run in self.client.last_commands() {
                match classes.get(run.command) {
                    Some(Class::Read) => tally.reads += 1,
                    Some(Class::Write) => tally.writes += 1,
                    Some(Class::Other) => tally.others += 1,
                    Some(Class::Meta) | None => {}
                }
            }
        }
        match out.status {
            TxStatus::Done => {
                let secs = out.latency.as_secs_f64();
                self.tx += 1;
                self.sum += secs;
                self.sum_sq += secs * secs;
                if let Some(n) = self.script_tx.get_mut(out.script) {
                    *n += 1;
                }
                if self.latency_limit.is_some_and(|l| out.latency > l) {
                    self.late += 1;
                }
                Ok(self.count_down())
            }
            TxStatus::Failed(f) => {
                self.failed += 1;
                let code = match f.kind {
                    FailureKind::Deadlock => "40P01",
                    _ => "40001",
                };
                self.count_down();
                Err(EventError::Ignorable { code: code.into() })
            }
            TxStatus::Aborted(f) => {
                let last = self.session.last_error();
                let (kind, code) = match &last {
                    Some((k, c)) => (Some(*k), c.clone()),
                    None => (None, String::new()),
                };
                match (f.kind, kind) {
                    (FailureKind::ConnectionLost, _) | (_, Some(ErrorKind::ConnectionLost)) => {
                        Err(EventError::ConnectionLost {
                            code,
                            message: f.message,
                        })
                    }
                    (_, Some(ErrorKind::Interrupted)) => Err(EventError::Cancelled),
                    (_, Some(ErrorKind::Timeout)) => {
                        self.roll_back();
                        Err(EventError::TimedOut { code })
                    }
                    (FailureKind::Sql, _) if self.ignore.contains(&code) => {
                        self.roll_back();
                        Err(EventError::Ignorable { code })
                    }
                    (FailureKind::Sql, _) => Err(EventError::Fatal {
                        code,
                        message: f.message,
                    }),
                    _ => Err(EventError::Fatal {
                        code: "pgbench".into(),
                        message: f.message,
                    }),
                }
            }
        }
    }

    fn reconnect(&mut self) -> Result<(), String> {
        self.session.reconnect().map_err(|e| e.message)
    }

    fn finish(&mut self, _tally: &mut Tally) -> Result<(), EventError> {
        if let Ok(mut t) = self.shared.lock() {
            for (i, per) in t.commands.iter_mut().enumerate() {
                for (j, s) in per.iter_mut().enumerate() {
                    if let Some(mine) = self.client.command_stats(i).get(j) {
                        s.merge(mine);
                    }
                }
            }
            for (a, b) in t.script_tx.iter_mut().zip(&self.script_tx) {
                *a += b;
            }
            t.tx += self.tx;
            t.sum += self.sum;
            t.sum_sq += self.sum_sq;
            t.late += self.late;
            t.failed += self.failed;
        }
        Ok(())
    }

    fn interrupter(&self) -> Option<Interrupter> {
        self.session.interrupter()
    }
}
