//! pgbench as a dbmeter benchmark: `prepare` is pgbench's `-i`, `run`
//! runs built-in scripts and script files with pgbench's options, and the
//! report has pgbench's lines (and `-r`'s statement latencies) beside
//! dbmeter's own.
//!
//! Each virtual user is one pgbench client ([`Client`]) over its own
//! connection ([`DbSession`]); one event is one transaction. As in
//! pgbench, `--jobs` threads run the clients, each its block of them as
//! tasks of one poll loop over their sockets (the engine's
//! `EngineConfig::jobs`). The events'
//! kinds are the scripts; each command's latency and failures are kept by
//! its client and summed into the result's `pgbench` section at the end.

use super::builtin::find_builtin;
use super::client::{Client, ExecOptions, FailureKind, Setup, TxStatus};
use super::config::PgbenchConfig;
use super::db_session::DbSession;
use super::host::SystemHost;
use super::init::{DEFAULT_STEPS, drop_tables, initialize};
use super::log::{Ending, Entry, LogSpec, Sampler, TxLogs};
use super::script::CommandKind;
use super::script_set::{ScriptSet, ScriptSetBuilder};
use super::session::QueryMode;
use super::{CommandStats, parse_weight};
use crate::benchmark::{
    BenchError, Benchmark, Console, Context, RunPlan, Verb, no_such_verb, verb,
};
use crate::options::{OptKind, OptSpec, OptValues, choice, opt};
use dbmeter_db::{ConnectOptions, Connection, Dialect, ErrorKind, IgnoreList, PsMode};
use dbmeter_engine::{
    EngineConfig, EventError, Flow, Interrupter, RunResult, Tally, User, UserFactory,
};
use dbmeter_env::Warning;
use dbmeter_result::{Layout, RunDocument};
use dbmeter_stats::Measure;
use dbmeter_stats::measure::sql;
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

fn yes() -> bool {
    true
}

/// The result's `pgbench` section.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Section {
    pub scale: i64,
    /// How pgbench_accounts is partitioned (`range`, `hash`), and into
    /// how many partitions; None when it is not.
    pub partition_method: Option<String>,
    pub partitions: i64,
    pub query_mode: String,
    pub clients: usize,
    /// The threads that ran the clients (`--jobs`, at most one per
    /// client); 0 in documents from before it was kept: one per client.
    pub threads: usize,
    pub max_tries: u32,
    /// `--transactions` (per client); 0 when the run is timed.
    pub transactions_per_client: u64,
    /// `--time` when it was given (pgbench's `duration`).
    pub duration_s: Option<f64>,
    pub latency_limit_ms: Option<f64>,
    /// `--rate`, when given.
    pub rate_per_s: Option<f64>,
    /// Transactions over the latency limit.
    pub late: u64,
    /// Transactions skipped for being late before they started (`-L`
    /// under `-R`).
    pub skipped: u64,
    /// Transactions that failed with a serialization error or a deadlock
    /// after their tries...
    pub failed: u64,
    /// ...of them, serialization failures and deadlocks.
    pub serialization_failures: u64,
    pub deadlock_failures: u64,
    /// Transactions retried at least once, and the retries.
    pub retried: u64,
    pub retries: u64,
    /// Completed transactions (warm-up included) and their latencies
    /// (from the scheduled start under a rate).
    pub transactions: u64,
    pub latency_avg_ms: f64,
    pub latency_stddev_ms: f64,
    /// Under a rate: how late transactions started, on average and at most.
    pub lag_avg_ms: Option<f64>,
    pub lag_max_ms: Option<f64>,
    /// `--connect` (pgbench -C): the average time to connect.
    pub connection_avg_ms: Option<f64>,
    /// Print the statement latencies (pgbench's `-r`).
    #[serde(default = "yes")]
    pub statement_latencies: bool,
    /// `--failures-detailed`.
    pub failures_detailed: bool,
    pub scripts: Vec<ScriptSection>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ScriptSection {
    pub name: String,
    pub weight: u32,
    pub transactions: u64,
    pub failed: u64,
    pub skipped: u64,
    pub retried: u64,
    pub retries: u64,
    pub latency_avg_ms: f64,
    pub latency_stddev_ms: f64,
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
    /// The scripts of `--builtin` and `--file` (in that order; a
    /// `builtin:NAME[@W]` item of `--file` is a built-in script in its
    /// place among the files); whether a built-in one is among them.
    fn scripts(cfg: &PgbenchConfig) -> Result<(ScriptSet, bool), BenchError> {
        let mut b = ScriptSetBuilder::new();
        let mut builtin = false;
        let mut add_builtin = |b: &mut ScriptSetBuilder, spec: &str| {
            // Checked here for a message that names the option.
            let (name, _) = parse_weight(spec).map_err(BenchError::Usage)?;
            find_builtin(name).map_err(|e| BenchError::Usage(format!("--builtin: {e}")))?;
            b.add_builtin(spec).map_err(BenchError::Usage)?;
            builtin = true;
            Ok::<(), BenchError>(())
        };
        let mut any = false;
        for spec in &cfg.builtin {
            add_builtin(&mut b, spec)?;
            any = true;
        }
        for spec in &cfg.files {
            match spec.strip_prefix("builtin:") {
                Some(name) => add_builtin(&mut b, name)?,
                None => b.add_file(spec).map_err(BenchError::Failed)?,
            }
            any = true;
        }
        if !any {
            builtin = true;
        }
        let set = b.build().map_err(BenchError::Usage)?;
        Ok((set, builtin))
    }

    /// `:scale`: with a built-in script the number of branches (as
    /// pgbench), else `--scale`.
    fn scale(
        conn: &mut Connection,
        ctx: &Context,
        cfg: &PgbenchConfig,
        builtin: bool,
    ) -> Result<i64, BenchError> {
        if !builtin {
            return Ok(cfg.scale);
        }
        let pgbench_layout = matches!(ctx.layout, Layout::Pgbench { .. });
        let prepare = if pgbench_layout {
            "\npgbench: hint: Perhaps you need to do initialization (\"pgbench -i\") in this database.".to_string()
        } else {
            format!(
                ": run `dbmeter prepare pgbench --scale=N{}` first",
                ctx.db_option()
            )
        };
        let n = conn
            .query_i64("select count(*) from pgbench_branches")
            .map_err(|e| {
                BenchError::Failed(if pgbench_layout {
                    format!(
                        "could not count number of branches: ERROR:  {}{prepare}",
                        e.message
                    )
                } else {
                    format!(
                        "cannot count the rows of pgbench_branches ({}){prepare}",
                        e.message
                    )
                })
            })?
            .unwrap_or(0);
        if n < 1 {
            return Err(BenchError::Failed(format!(
                "pgbench_branches is empty{prepare}"
            )));
        }
        // pgbench warns whenever -s is given with a built-in script.
        if cfg.scale_given && (pgbench_layout || cfg.scale != n) {
            let warning = if pgbench_layout {
                "pgbench: warning: "
            } else {
                ""
            };
            ctx.say(&format!(
                "{warning}scale option ignored, using count from pgbench_branches table ({n})"
            ));
        }
        Ok(n)
    }

    /// The `-l` logs, when asked for.
    fn logs(ctx: &Context, cfg: &PgbenchConfig) -> Result<Option<Arc<TxLogs>>, BenchError> {
        let Some(log) = &cfg.log else {
            return Ok(None);
        };
        let spec = LogSpec {
            prefix: log.prefix.clone(),
            jobs: log.jobs,
            clients: ctx.threads.max(1),
            sampling_rate: log.sampling_rate,
            aggregate: log.aggregate,
            with_lag: cfg.rate.is_some(),
            with_retries: cfg.max_tries != 1,
            failures_detailed: cfg.failures_detailed,
        };
        TxLogs::create(spec).map(Some).map_err(BenchError::Failed)
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
                "vacuum-all",
                OptKind::Bool,
                "off",
                "run: also vacuum pgbench_accounts and pgbench_history first (pgbench -v)",
            ),
            opt(
                "unlogged-tables",
                OptKind::Bool,
                "off",
                "create the tables unlogged (pgbench --unlogged-tables; PostgreSQL only)",
            )
            .shapes_data(),
            opt(
                "partitions",
                OptKind::Int,
                "0",
                "prepare: partition pgbench_accounts into this many partitions (pgbench --partitions); 0: not partitioned",
            )
            .shapes_data(),
            opt(
                "partition-method",
                choice(&["range", "hash"]),
                "range",
                "prepare: how pgbench_accounts is partitioned (pgbench --partition-method)",
            )
            .shapes_data(),
            opt(
                "tablespace",
                OptKind::Str,
                "",
                "prepare: the tablespace of the tables (pgbench --tablespace); empty: the default",
            ),
            opt(
                "index-tablespace",
                OptKind::Str,
                "",
                "prepare: the tablespace of the primary keys (pgbench --index-tablespace); empty: the default",
            ),
            opt(
                "debug",
                OptKind::Bool,
                "off",
                "print each client's statements, results and steps on stderr (pgbench -d)",
            ),
            opt(
                "verbose-errors",
                OptKind::Bool,
                "off",
                "print the error of each failed or retried transaction on stderr (pgbench --verbose-errors)",
            ),
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
                "pgbench script files, comma-separated PATH[@WEIGHT] (pgbench -f); an item builtin:NAME[@WEIGHT] puts a built-in script in its place among them",
            ),
            opt(
                "define",
                OptKind::Str,
                "",
                "variables for the scripts, comma-separated NAME=VALUE (pgbench -D; \\, is a comma in a value)",
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
                "count transactions that take longer than this many milliseconds as late, and retry none past it (pgbench -L); with --rate, skip those already this late when their turn comes; 0: no limit",
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
            opt(
                "failures-detailed",
                OptKind::Bool,
                "off",
                "report failed transactions by kind: serialization failures and deadlocks (pgbench --failures-detailed)",
            ),
            opt(
                "connect",
                OptKind::Bool,
                "off",
                "open a new connection for each transaction, its time counted in the transaction's (pgbench -C)",
            ),
            opt(
                "report-per-command",
                OptKind::Bool,
                "on",
                "print each statement's average latency and failures after the report (pgbench -r)",
            ),
            opt(
                "log",
                OptKind::Bool,
                "off",
                "write a line per transaction to files PREFIX.PID[.N] in pgbench's format (pgbench -l)",
            ),
            opt(
                "log-prefix",
                OptKind::Str,
                "pgbench_log",
                "the log files' name before .PID (pgbench --log-prefix)",
            ),
            opt(
                "aggregate-interval",
                OptKind::Int,
                "0",
                "--log: a line per this many seconds instead of one per transaction (pgbench --aggregate-interval); 0: per transaction",
            ),
            opt(
                "sampling-rate",
                OptKind::Float,
                "1",
                "--log: the share of transactions logged, e.g. 0.01 (pgbench --sampling-rate)",
            ),
            opt(
                "jobs",
                OptKind::Int,
                "1",
                "threads that run the clients (pgbench -j): the clients are dealt to them in blocks as pgbench deals them, each thread running its clients over non-blocking connections in one poll loop; at most one per client; --log writes one file per thread",
            ),
        ]
    }

    fn check_options(&self, options: &OptValues) -> Result<(), BenchError> {
        PgbenchConfig::from_options(options).map(drop)
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
                let cfg = PgbenchConfig::from_options(ctx.options)?;
                let mut conn = connect(ctx)?;
                initialize(&mut conn, &cfg.init, ctx)
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

    fn known_kinds(&self, options: &OptValues) -> Option<Vec<String>> {
        // Its scripts' names: read from the options and the script files.
        let cfg = PgbenchConfig::from_options(options).ok()?;
        let (set, _) = Self::scripts(&cfg).ok()?;
        Some(set.scripts().iter().map(|s| s.name.clone()).collect())
    }

    fn plan(&self, ctx: &Context) -> Result<Box<dyn RunPlan>, BenchError> {
        let cfg = PgbenchConfig::from_options(ctx.options)?;
        let (set, builtin) = Self::scripts(&cfg)?;
        let defines = cfg.defines.clone();
        let mode = cfg.mode;
        let seed = cfg.random_seed.unwrap_or(ctx.seed);
        let transactions = cfg.transactions;
        let max_tries = cfg.max_tries;
        let latency_limit = cfg.latency_limit();
        let rate = cfg.rate;
        let pgbench_layout = matches!(ctx.layout, Layout::Pgbench { .. });
        super::host::shell_output_to_stdout(pgbench_layout);
        let logs = Self::logs(ctx, &cfg)?;
        let mut conn = connect(ctx)?;
        let version = conn.server_version();
        let scale = Self::scale(&mut conn, ctx, &cfg, builtin)?;
        let partitioning = if builtin {
            partitioning(&mut conn)
        } else {
            None
        };
        drop(conn);
        // pgbench vacuums after its first line (the run's header).
        let vacuum = (!cfg.no_vacuum).then(|| Vacuum {
            connect: ctx.setup_connection(),
            pgbench_layout,
            all: cfg.vacuum_all,
        });
        let set = Arc::new(set);
        let clients = ctx.threads.max(1);
        let jobs = cfg.jobs.clamp(1, clients);
        let setup = Setup::new(
            Arc::clone(&set),
            clients,
            seed,
            scale,
            defines,
            ExecOptions {
                mode,
                max_tries,
                latency_limit,
                pgbench_messages: pgbench_layout,
                debug: cfg.debug,
                verbose_errors: cfg.verbose_errors,
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
            clients,
            threads: jobs,
            max_tries,
            transactions_per_client: transactions,
            duration_s: cfg.time,
            latency_limit_ms: cfg.latency_limit_ms,
            rate_per_s: rate,
            statement_latencies: cfg.report_per_command,
            failures_detailed: cfg.failures_detailed,
            partition_method: partitioning.as_ref().map(|p| p.0.clone()),
            partitions: partitioning.map_or(0, |p| p.1),
            ..Section::default()
        };
        Ok(Box::new(PgbenchPlan {
            version,
            set: Arc::clone(&set),
            time_given: cfg.time.is_some(),
            late_limit: latency_limit.filter(|_| rate.is_some()),
            section,
            shared: Arc::clone(&shared),
            logs: logs.clone(),
            vacuum,
            users: Arc::new(Users {
                setup,
                connect,
                classes: Arc::new(classes),
                ignore: ctx.ignore.clone(),
                transactions,
                latency_limit,
                connect_each: cfg.connect,
                logs,
                seed,
                shared,
            }),
        }))
    }

    fn report_text(&self, doc: &RunDocument) -> Option<String> {
        let s: Section = doc.section(SECTION)?;
        Some(report(&s, doc))
    }
}

/// How pgbench_accounts is partitioned, as pgbench reports it: `range`
/// or `hash` and the number of partitions; None when it is not (or the
/// server cannot tell).
fn partitioning(conn: &mut Connection) -> Option<(String, i64)> {
    if conn.dialect() != Dialect::Postgres {
        return None;
    }
    let rows = conn
        .query_rows(
            "SELECT p.partstrat, (SELECT count(*) FROM pg_catalog.pg_inherits i WHERE i.inhparent = p.partrelid) \
             FROM pg_catalog.pg_partitioned_table p WHERE p.partrelid = to_regclass('pgbench_accounts')",
        )
        .ok()?;
    let row = rows.rows.first()?;
    let method = match row.first()?.as_deref()? {
        "r" => "range",
        "h" => "hash",
        _ => return None,
    };
    let n = row.get(1)?.as_deref()?.parse().ok()?;
    Some((method.to_string(), n))
}

/// The set-up connection; in pgbench's layout a failure reads as libpq's
/// (`connection to server ... failed: FATAL:  ...`).
fn connect(ctx: &Context) -> Result<Connection, BenchError> {
    let e = match Connection::connect(&ctx.setup_connection()?) {
        Ok(c) => return Ok(c),
        Err(e) => e,
    };
    if !matches!(ctx.layout, Layout::Pgbench { .. }) {
        return Err(e.into());
    }
    let Some((shown, why)) = e
        .message
        .strip_prefix("cannot connect to ")
        .and_then(|r| r.split_once(": "))
    else {
        return Err(e.into());
    };
    // The server's own words, without dbmeter's explanation before them.
    let why = [
        "the database does not exist: ",
        "authentication failed (wrong user or password?): ",
    ]
    .iter()
    .find_map(|p| why.strip_prefix(p))
    .unwrap_or(why);
    let from_server = e.code.len() == 5 && e.code.chars().all(|c| c.is_ascii_alphanumeric());
    let fatal = if from_server { "FATAL:  " } else { "" };
    Err(BenchError::Failed(format!(
        "connection to server {shown} failed: {fatal}{why}"
    )))
}

/// What pgbench does before a run unless `-n`: vacuums the small tables
/// and empties pgbench_history (with `-v`, vacuums the other two as
/// well). Errors are ignored (a custom script's database may have no such
/// tables).
fn before_run(conn: &mut Connection, ctx: &dyn Console, pgbench_layout: bool, all: bool) {
    let steps: &[&str] = match conn.dialect() {
        Dialect::Postgres => &[
            "vacuum pgbench_branches",
            "vacuum pgbench_tellers",
            "truncate pgbench_history",
        ],
        Dialect::Mysql => &["truncate table pgbench_history"],
        Dialect::Sqlite => &["delete from pgbench_history"],
    };
    let mut first_error = None;
    for sql in steps {
        if let Err(e) = conn.execute(sql) {
            first_error.get_or_insert(e.message);
        }
    }
    if pgbench_layout {
        match &first_error {
            None => ctx.line("starting vacuum...end."),
            Some(e) => ctx.line(&format!(
                "starting vacuum...{e} (ignoring this error and continuing anyway)"
            )),
        }
    } else if first_error.is_none() {
        ctx.line("vacuumed pgbench_branches and pgbench_tellers, emptied pgbench_history (--no-vacuum leaves them)");
    }
    if all && conn.dialect() == Dialect::Postgres {
        let mut error = None;
        for sql in [
            "vacuum analyze pgbench_accounts",
            "vacuum analyze pgbench_history",
        ] {
            if let Err(e) = conn.execute(sql) {
                error.get_or_insert(e.message);
            }
        }
        match error {
            None if pgbench_layout => ctx.line("starting vacuum pgbench_accounts...end."),
            None => ctx.line("vacuumed pgbench_accounts and pgbench_history (--vacuum-all)"),
            Some(e) => ctx.line(&format!(
                "vacuum of pgbench_accounts failed: {e} (ignoring this error and continuing anyway)"
            )),
        }
    }
}

fn pct(n: u64, of: u64) -> f64 {
    if of > 0 {
        n as f64 * 100.0 / of as f64
    } else {
        0.0
    }
}

/// pgbench's report lines.
/// pgbench's lines of retried transactions and retries (when there may be
/// retries) and of skipped ones (under a rate with a latency limit), for
/// the run (`prefix` "") or one script (" - "); `counts` are retried,
/// retries and skipped, `all` the transactions they are a share of.
fn retried_and_skipped(t: &mut String, prefix: &str, s: &Section, counts: [u64; 3], all: u64) {
    use std::fmt::Write as _;
    let [retried, retries, skipped] = counts;
    if s.max_tries != 1 {
        let _ = writeln!(
            t,
            "{prefix}number of transactions retried: {retried} ({:.3}%)",
            pct(retried, all)
        );
        let _ = writeln!(t, "{prefix}total number of retries: {retries}");
    }
    if s.rate_per_s.is_some() && s.latency_limit_ms.is_some() {
        let _ = writeln!(
            t,
            "{prefix}number of transactions skipped: {skipped} ({:.3}%)",
            pct(skipped, all)
        );
    }
}

fn report(s: &Section, doc: &RunDocument) -> String {
    use std::fmt::Write;
    let mut t = String::new();
    let kind = match s.scripts.as_slice() {
        [one] => one.name.clone(),
        _ => "multiple scripts".into(),
    };
    let _ = writeln!(t, "transaction type: {kind}");
    let _ = writeln!(t, "scaling factor: {}", s.scale);
    if let Some(method) = &s.partition_method {
        let _ = writeln!(
            t,
            "partition method: {method}\npartitions: {}",
            s.partitions
        );
    }
    let _ = writeln!(t, "query mode: {}", s.query_mode);
    let _ = writeln!(t, "number of clients: {}", s.clients);
    let threads = if s.threads > 0 { s.threads } else { s.clients };
    let _ = writeln!(t, "number of threads: {threads}");
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
        let secs = s.duration_s.unwrap_or(doc.totals.duration_s);
        let _ = writeln!(t, "duration: {secs:.0} s");
        let _ = writeln!(t, "number of transactions actually processed: {processed}");
    }
    let all = processed + s.failed + s.skipped;
    let _ = writeln!(
        t,
        "number of failed transactions: {} ({:.3}%)",
        s.failed,
        pct(s.failed, all)
    );
    if s.failures_detailed {
        let _ = writeln!(
            t,
            "number of serialization failures: {} ({:.3}%)",
            s.serialization_failures,
            pct(s.serialization_failures, all)
        );
        let _ = writeln!(
            t,
            "number of deadlock failures: {} ({:.3}%)",
            s.deadlock_failures,
            pct(s.deadlock_failures, all)
        );
    }
    retried_and_skipped(&mut t, "", s, [s.retried, s.retries, s.skipped], all);
    if let Some(limit) = s.latency_limit_ms {
        let _ = writeln!(
            t,
            "number of transactions above the {limit:.1} ms latency limit: {}/{} ({:.3}%)",
            s.late,
            processed,
            pct(s.late, processed)
        );
    }
    let _ = writeln!(t, "latency average = {:.3} ms", s.latency_avg_ms);
    let _ = writeln!(t, "latency stddev = {:.3} ms", s.latency_stddev_ms);
    if let (Some(avg), Some(max)) = (s.lag_avg_ms, s.lag_max_ms) {
        let _ = writeln!(t, "rate limit schedule lag: avg {avg:.3} (max {max:.3}) ms");
    }
    if let Some(c) = s.connection_avg_ms {
        let _ = writeln!(t, "average connection time = {c:.3} ms");
        let _ = writeln!(
            t,
            "tps = {:.6} (including reconnection times)",
            doc.totals.events_per_s
        );
    } else {
        let _ = writeln!(
            t,
            "tps = {:.6} (without initial connection time)",
            doc.totals.events_per_s
        );
    }
    let many = s.scripts.len() > 1;
    let total_weight: u64 = s.scripts.iter().map(|x| x.weight as u64).sum();
    let total_tx: u64 = s.scripts.iter().map(|x| x.transactions).sum();
    let heading = if s.max_tries == 1 {
        "statement latencies in milliseconds and failures:"
    } else {
        "statement latencies in milliseconds, failures and retries:"
    };
    if !many && s.statement_latencies {
        let _ = writeln!(t, "{heading}");
    }
    for (i, sc) in s.scripts.iter().enumerate() {
        if many {
            let tps = if doc.totals.duration_s > 0.0 {
                sc.transactions as f64 / doc.totals.duration_s
            } else {
                0.0
            };
            let all = sc.transactions + sc.failed + sc.skipped;
            let _ = writeln!(t, "SQL script {}: {}", i + 1, sc.name);
            let _ = writeln!(
                t,
                " - weight: {} (targets {:.1}% of total)",
                sc.weight,
                pct(sc.weight as u64, total_weight)
            );
            let _ = writeln!(
                t,
                " - {} transactions ({:.1}% of total, tps = {tps:.6})",
                sc.transactions,
                pct(sc.transactions, total_tx)
            );
            let _ = writeln!(
                t,
                " - number of failed transactions: {} ({:.3}%)",
                sc.failed,
                pct(sc.failed, all)
            );
            retried_and_skipped(&mut t, " - ", s, [sc.retried, sc.retries, sc.skipped], all);
            let _ = writeln!(t, " - latency average = {:.3} ms", sc.latency_avg_ms);
            let _ = writeln!(t, " - latency stddev = {:.3} ms", sc.latency_stddev_ms);
            if s.statement_latencies {
                let _ = writeln!(t, " - {heading}");
            }
        }
        if !s.statement_latencies {
            continue;
        }
        for c in &sc.commands {
            if s.max_tries == 1 {
                let _ = writeln!(
                    t,
                    "   {:11.3}  {:10}  {}",
                    c.latency_avg_ms, c.failures, c.command
                );
            } else {
                let _ = writeln!(
                    t,
                    "   {:11.3}  {:10}  {:10}  {}",
                    c.latency_avg_ms, c.failures, c.retries, c.command
                );
            }
        }
    }
    t
}

/// What one client (or all, summed) did in one script's transactions.
#[derive(Clone, Copy, Debug, Default)]
struct Acc {
    tx: u64,
    /// Sum and sum of squares of the latencies, in seconds.
    sum: f64,
    sum_sq: f64,
    late: u64,
    failed: u64,
    serialization: u64,
    deadlock: u64,
    retried: u64,
    retries: u64,
    skipped: u64,
    lag_sum: f64,
    lag_max: f64,
}

impl Acc {
    fn merge(&mut self, o: &Acc) {
        self.tx += o.tx;
        self.sum += o.sum;
        self.sum_sq += o.sum_sq;
        self.late += o.late;
        self.failed += o.failed;
        self.serialization += o.serialization;
        self.deadlock += o.deadlock;
        self.retried += o.retried;
        self.retries += o.retries;
        self.skipped += o.skipped;
        self.lag_sum += o.lag_sum;
        self.lag_max = self.lag_max.max(o.lag_max);
    }

    /// Mean and deviation of the latencies, in milliseconds.
    fn latency_ms(&self) -> (f64, f64) {
        if self.tx == 0 {
            return (0.0, 0.0);
        }
        let n = self.tx as f64;
        let mean = self.sum / n;
        let sd = ((self.sum_sq / n - mean * mean).max(0.0)).sqrt();
        (mean * 1e3, sd * 1e3)
    }
}

/// What the users add up: each command's numbers and each script's.
struct Totals {
    commands: Vec<Vec<CommandStats>>,
    scripts: Vec<Acc>,
    /// `--connect`: connections made and their time in seconds.
    connects: u64,
    connect_secs: f64,
}

impl Totals {
    fn new(set: &ScriptSet) -> Totals {
        Totals {
            commands: set
                .scripts()
                .iter()
                .map(|s| vec![CommandStats::default(); s.commands.len()])
                .collect(),
            scripts: vec![Acc::default(); set.scripts().len()],
            connects: 0,
            connect_secs: 0.0,
        }
    }
}

/// Counts the users bump as things happen (rare things only: failures and
/// retries), for the progress lines.
/// pgbench's vacuum before a run (unless `-n`), done after the header.
struct Vacuum {
    connect: Result<ConnectOptions, BenchError>,
    pgbench_layout: bool,
    all: bool,
}

/// What pgbench's users count beyond events: the SQL statements, failed
/// transactions, and (with `--max-tries` above 1) retried transactions and
/// their retries. pgbench's progress lines show them per interval.
const MEASURES: [Measure; 6] = [
    sql::MEASURES[0],
    sql::MEASURES[1],
    sql::MEASURES[2],
    Measure::new("failed", "failed transactions", "transaction", true),
    Measure::new("retried", "retried transactions", "transaction", true),
    Measure::new("retries", "retries", "retry", true),
];
const FAILED: usize = 3;
const RETRIED: usize = 4;
const RETRIES: usize = 5;

struct PgbenchPlan {
    version: String,
    set: Arc<ScriptSet>,
    time_given: bool,
    /// With a rate: `--latency-limit`, for the engine to skip late arrivals.
    late_limit: Option<Duration>,
    section: Section,
    shared: Arc<Mutex<Totals>>,
    logs: Option<Arc<TxLogs>>,
    vacuum: Option<Vacuum>,
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

    fn measures(&self) -> Vec<Measure> {
        // Retries only where there may be some, as pgbench shows them.
        let n = if self.section.max_tries == 1 { 4 } else { 6 };
        MEASURES[..n].to_vec()
    }

    fn before_run(&mut self, console: &dyn Console) {
        let Some(v) = self.vacuum.take() else {
            return;
        };
        match v.connect.map(|c| Connection::connect(&c)) {
            Ok(Ok(mut conn)) => before_run(&mut conn, console, v.pgbench_layout, v.all),
            Ok(Err(e)) => console.line(&format!(
                "starting vacuum...{} (ignoring this error and continuing anyway)",
                e.message
            )),
            Err(e) => console.line(&format!(
                "starting vacuum...{e} (ignoring this error and continuing anyway)"
            )),
        }
    }

    fn shape_engine(&self, engine: &mut EngineConfig) {
        // -t: the clients' transactions end the run; --time only as a cap.
        if self.section.transactions_per_client > 0 && !self.time_given {
            engine.time = None;
        }
        engine.late_limit = self.late_limit;
        engine.jobs = Some(self.section.threads.max(1));
    }

    fn finish(&mut self, _result: &RunResult, doc: &mut RunDocument) -> Vec<Warning> {
        let mut warnings = Vec::new();
        let mut s = self.section.clone();
        if let Some(logs) = &self.logs
            && let Some(e) = logs.finish()
        {
            warnings.push(dbmeter_env::Warning::new("pgbench_log", e.to_string()));
        }
        if let Ok(t) = self.shared.lock() {
            let mut all = Acc::default();
            for a in &t.scripts {
                all.merge(a);
            }
            s.transactions = all.tx;
            s.late = all.late;
            s.failed = all.failed;
            s.serialization_failures = all.serialization;
            s.deadlock_failures = all.deadlock;
            s.retried = all.retried;
            s.retries = all.retries;
            s.skipped = all.skipped;
            (s.latency_avg_ms, s.latency_stddev_ms) = all.latency_ms();
            if s.rate_per_s.is_some() {
                s.lag_avg_ms = Some(if all.tx > 0 {
                    all.lag_sum / all.tx as f64 * 1e3
                } else {
                    0.0
                });
                s.lag_max_ms = Some(all.lag_max * 1e3);
            }
            if t.connects > 0 {
                s.connection_avg_ms = Some(t.connect_secs / t.connects as f64 * 1e3);
            }
            s.scripts = self
                .set
                .scripts()
                .iter()
                .enumerate()
                .map(|(i, sc)| {
                    let a = t.scripts.get(i).copied().unwrap_or_default();
                    let (avg, sd) = a.latency_ms();
                    ScriptSection {
                        name: sc.name.clone(),
                        weight: sc.weight,
                        transactions: a.tx,
                        failed: a.failed,
                        skipped: a.skipped,
                        retried: a.retried,
                        retries: a.retries,
                        latency_avg_ms: avg,
                        latency_stddev_ms: sd,
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
                                    latency_avg_ms: st
                                        .mean()
                                        .map_or(0.0, |d| d.as_secs_f64() * 1e3),
                                    failures: st.failures,
                                    retries: st.retries,
                                }
                            })
                            .collect(),
                    }
                })
                .collect();
        }
        doc.set_section(SECTION, &s);
        warnings
    }
}

struct Users {
    setup: Setup,
    connect: ConnectOptions,
    classes: Arc<Vec<Vec<Class>>>,
    ignore: IgnoreList,
    transactions: u64,
    latency_limit: Option<Duration>,
    connect_each: bool,
    logs: Option<Arc<TxLogs>>,
    seed: u64,
    shared: Arc<Mutex<Totals>>,
}

impl UserFactory for Users {
    fn create(&self, user_id: usize) -> Result<Box<dyn User>, String> {
        let conn = Connection::connect_nth(&self.connect, user_id).map_err(|e| e.message)?;
        let scripts = self.setup.scripts().scripts().len();
        Ok(Box::new(PgbenchUser {
            client: self.setup.client(user_id),
            session: DbSession::new(conn, Arc::clone(self.setup.scripts())),
            host: SystemHost::new(),
            classes: Arc::clone(&self.classes),
            ignore: self.ignore.clone(),
            left: self.transactions,
            latency_limit: self.latency_limit,
            connect_each: self.connect_each,
            first: true,
            log: self.logs.as_ref().map(|l| UserLog {
                file: l.file_of(user_id),
                logs: Arc::clone(l),
                sampler: Sampler::new(self.seed, user_id),
            }),
            number: 0,
            pending: None,
            shared: Arc::clone(&self.shared),
            acc: vec![Acc::default(); scripts],
            connects: 0,
            connect_secs: 0.0,
        }))
    }
}

/// A client's share of the `-l` logs.
struct UserLog {
    logs: Arc<TxLogs>,
    file: usize,
    sampler: Sampler,
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
    /// `--connect`: a new connection before each transaction but the first.
    connect_each: bool,
    first: bool,
    log: Option<UserLog>,
    /// This client's transactions so far (skipped and failed ones too).
    number: u64,
    /// The script chosen for a transaction that was skipped: the next
    /// one runs it (pgbench chooses before it waits for the schedule).
    pending: Option<usize>,
    shared: Arc<Mutex<Totals>>,
    acc: Vec<Acc>,
    connects: u64,
    connect_secs: f64,
}

impl PgbenchUser {
    /// Counts one transaction toward `--transactions`: whether it was the
    /// client's last.
    fn count_down(&mut self) -> bool {
        if self.left == 0 {
            return false;
        }
        self.left -= 1;
        self.left == 0
    }

    /// Ends the transaction an error left open (errors of its own are of
    /// no interest: there may be none open).
    fn roll_back(&mut self) {
        let _ = self.session.connection().execute("ROLLBACK");
    }

    fn log(&mut self, script: usize, ending: Ending, latency: Duration, lag: Duration, tries: u32) {
        self.number += 1;
        if let Some(l) = &mut self.log
            && l.sampler.take(l.logs.spec().sampling_rate)
        {
            l.logs.put(
                l.file,
                &Entry {
                    client: self.client.id(),
                    number: self.number,
                    script,
                    ending,
                    latency,
                    lag,
                    retries: tries.saturating_sub(1),
                },
            );
        }
    }

    /// `--connect`: a new connection for this transaction.
    fn connect_again(&mut self) -> Result<(), EventError> {
        if !self.connect_each || std::mem::take(&mut self.first) {
            return Ok(());
        }
        let t = std::time::Instant::now();
        self.session
            .reconnect()
            .map_err(|e| EventError::ConnectionLost {
                code: e.code,
                message: e.message,
            })?;
        self.connects += 1;
        self.connect_secs += t.elapsed().as_secs_f64();
        Ok(())
    }
}

impl PgbenchUser {
    /// [`User::event`]'s transaction that failed or aborted: out of line,
    /// so that the frame of every event keeps no room for it.
    #[cold]
    #[inline(never)]
    fn not_done(
        &mut self,
        status: TxStatus,
        script: usize,
        latency: Duration,
        tries: u32,
        tally: &mut Tally,
    ) -> Result<Flow, EventError> {
        match status {
            // `event` counts a transaction done itself.
            TxStatus::Done => Ok(Flow::Continue),
            TxStatus::Failed(f) => {
                let (code, ending) = match f.kind {
                    FailureKind::Deadlock => ("40P01", Ending::Deadlock),
                    _ => ("40001", Ending::Serialization),
                };
                if let Some(a) = self.acc.get_mut(script) {
                    a.failed += 1;
                    match ending {
                        Ending::Deadlock => a.deadlock += 1,
                        _ => a.serialization += 1,
                    }
                }
                tally.measures[FAILED] += 1;
                self.log(script, ending, latency, tally.lag, tries);
                let last = self.count_down();
                Err(EventError::Failed {
                    code: code.into(),
                    last,
                })
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
}

impl User for PgbenchUser {
    fn event(&mut self, tally: &mut Tally) -> Result<Flow, EventError> {
        self.connect_again()?;
        let script = match self.pending.take() {
            Some(s) => s,
            None => self.client.choose_script(),
        };
        let out = self
            .client
            .run_script(script, &mut self.session, &mut self.host);
        tally.kind = out.script;
        if let Some(classes) = self.classes.get(out.script) {
            for run in self.client.last_commands() {
                match classes.get(run.command) {
                    Some(Class::Read) => tally.measures[sql::READS] += 1,
                    Some(Class::Write) => tally.measures[sql::WRITES] += 1,
                    Some(Class::Other) => tally.measures[sql::OTHERS] += 1,
                    Some(Class::Meta) | None => {}
                }
            }
        }
        let latency = tally.lag + out.latency;
        if out.tries > 1
            && let Some(a) = self.acc.get_mut(out.script)
        {
            a.retried += 1;
            a.retries += u64::from(out.tries - 1);
        }
        if out.tries > 1 {
            tally.measures[RETRIED] += 1;
            tally.measures[RETRIES] += u64::from(out.tries - 1);
        }
        match out.status {
            TxStatus::Done => {
                let secs = latency.as_secs_f64();
                let late = self.latency_limit.is_some_and(|l| latency > l);
                if let Some(a) = self.acc.get_mut(out.script) {
                    a.tx += 1;
                    a.sum += secs;
                    a.sum_sq += secs * secs;
                    a.late += u64::from(late);
                    let lag = tally.lag.as_secs_f64();
                    a.lag_sum += lag;
                    a.lag_max = a.lag_max.max(lag);
                }
                self.log(out.script, Ending::Done, latency, tally.lag, out.tries);
                Ok(if self.count_down() {
                    Flow::UserDone
                } else {
                    Flow::Continue
                })
            }
            status => self.not_done(status, out.script, latency, out.tries, tally),
        }
    }

    fn skipped(&mut self, lag: Duration) -> Flow {
        let script = match self.pending {
            Some(s) => s,
            None => {
                let s = self.client.choose_script();
                self.pending = Some(s);
                s
            }
        };
        if let Some(a) = self.acc.get_mut(script) {
            a.skipped += 1;
        }
        self.log(script, Ending::Skipped, Duration::ZERO, lag, 1);
        if self.count_down() {
            Flow::UserDone
        } else {
            Flow::Continue
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
            for (a, b) in t.scripts.iter_mut().zip(&self.acc) {
                a.merge(b);
            }
            t.connects += self.connects;
            t.connect_secs += self.connect_secs;
        }
        // A script that left its last transaction open: counted, then the
        // client aborts (pgbench's order).
        if let Some(f) = self.client.take_pending_abort() {
            return Err(EventError::Fatal {
                code: "pgbench".into(),
                message: f.message,
            });
        }
        Ok(())
    }

    fn interrupter(&self) -> Option<Interrupter> {
        self.session.interrupter()
    }
}
