//! Running scripts: a [`Setup`] holds what every client of a run starts
//! from (the scripts, the seeds, `-D` values, the scale, the options), and
//! a [`Client`] runs one transaction at a time against a [`Session`]:
//! chooses a script by weight, runs its commands in order (taking `\if`
//! branches, sleeping through the [`Host`], storing `\gset` rows), times
//! each command, and on a serialization failure or deadlock rolls back and
//! runs the script again (up to `max_tries`) with the random state it
//! started with, as pgbench does.
//!
//! A client reuses its buffers: after the first transactions, running one
//! allocates nothing on the client's side.

use super::expr_eval::Evaluator;
use super::expr_parse::{DEFAULT_SEED, Expr};
use super::host::Host;
use super::prng::{PgPrng, Seeds};
use super::script::{CaptureKind, CommandKind, ShellWord, SleepAmount, SqlCommand, atoi};
use super::script_set::ScriptSet;
use super::session::{
    Captured, Params, Query, QueryMode, ROLLBACK_COMMAND, Session, SqlError, SqlErrorKind,
};
use super::value::{EvalError, Value};
use super::variables::{Definition, Variables, valid_variable_name};
use std::sync::Arc;
use std::time::Duration;

/// How clients run their scripts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExecOptions {
    pub mode: QueryMode,
    /// `--max-tries`: runs of a transaction that fails with a
    /// serialization error or a deadlock; 0 for no limit (then the run must
    /// end some other way: `latency_limit` or [`Host::stopping`]).
    pub max_tries: u32,
    /// `--latency-limit`: no retry once a transaction has taken this long.
    pub latency_limit: Option<Duration>,
    /// A failure's message as pgbench words it (`dbmeter pgbench`), not
    /// as dbmeter does (the script's file and line).
    pub pgbench_messages: bool,
    /// `-d`: each step on stderr (what is sent, received, executed).
    pub debug: bool,
    /// `--verbose-errors`: each error of a retried or failed transaction
    /// on stderr.
    pub verbose_errors: bool,
}

impl Default for ExecOptions {
    fn default() -> Self {
        ExecOptions {
            mode: QueryMode::Simple,
            max_tries: 1,
            latency_limit: None,
            pgbench_messages: false,
            debug: false,
            verbose_errors: false,
        }
    }
}

/// What the clients of a run start from.
#[derive(Clone, Debug)]
pub struct Setup {
    set: Arc<ScriptSet>,
    seeds: Seeds,
    scale: i64,
    defines: Vec<Definition>,
    options: ExecOptions,
}

impl Setup {
    /// `clients` clients; `random_seed` as pgbench's `--random-seed`;
    /// `scale` for `:scale`; `defines` from `-D`.
    pub fn new(
        set: Arc<ScriptSet>,
        clients: usize,
        random_seed: u64,
        scale: i64,
        defines: Vec<Definition>,
        options: ExecOptions,
    ) -> Setup {
        Setup {
            set,
            seeds: Seeds::new(random_seed, clients),
            scale,
            defines,
            options,
        }
    }

    pub fn scripts(&self) -> &Arc<ScriptSet> {
        &self.set
    }

    /// Client number `id` (0-based), with its variables set: the `-D`
    /// values, then `scale`, `client_id`, `default_seed` and `random_seed`
    /// unless `-D` gave them.
    pub fn client(&self, id: usize) -> Client {
        let names = self.set.names();
        let mut vars = Variables::new(names);
        for d in &self.defines {
            if let Some(v) = names.get(&d.name) {
                vars.set_text(v, &d.value);
            }
        }
        let defined = |n: &str| self.defines.iter().any(|d| d.name == n);
        let automatic = [
            ("scale", self.scale),
            ("client_id", id as i64),
            (DEFAULT_SEED, self.seeds.default_seed()),
            ("random_seed", self.seeds.random_seed() as i64),
        ];
        for (name, value) in automatic {
            if let Some(v) = names.get(name).filter(|_| !defined(name)) {
                vars.set_value(v, Value::Int(value));
            }
        }
        let stats = self
            .set
            .scripts()
            .iter()
            .map(|s| vec![CommandStats::default(); s.commands.len()])
            .collect();
        Client {
            id,
            set: Arc::clone(&self.set),
            vars,
            rng: self.seeds.functions(id),
            chooser: self.seeds.chooser(id),
            options: self.options,
            sql: String::new(),
            params: Params::default(),
            captured: Captured::default(),
            name_buf: String::new(),
            runs: Vec::new(),
            stats,
            pending_abort: None,
        }
    }
}

/// Time and errors of one command over a run (pgbench's `-r`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CommandStats {
    /// Times it ran to completion.
    pub count: u64,
    pub total: Duration,
    pub min: Duration,
    pub max: Duration,
    /// Sum of the squared latencies in seconds², for the deviation.
    pub sum_squares: f64,
    /// Serialization failures and deadlocks here that were retried...
    pub retries: u64,
    /// ...and that ended the transaction as failed.
    pub failures: u64,
}

impl CommandStats {
    fn add(&mut self, d: Duration) {
        if self.count == 0 || d < self.min {
            self.min = d;
        }
        if d > self.max {
            self.max = d;
        }
        self.count += 1;
        self.total += d;
        self.sum_squares += d.as_secs_f64() * d.as_secs_f64();
    }

    /// Merges another client's numbers into these.
    pub fn merge(&mut self, other: &CommandStats) {
        if other.count > 0 {
            if self.count == 0 || other.min < self.min {
                self.min = other.min;
            }
            self.max = self.max.max(other.max);
        }
        self.count += other.count;
        self.total += other.total;
        self.sum_squares += other.sum_squares;
        self.retries += other.retries;
        self.failures += other.failures;
    }

    pub fn mean(&self) -> Option<Duration> {
        (self.count > 0).then(|| self.total.div_f64(self.count as f64))
    }
}

/// One command run in the last transaction, and how long it took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CommandRun {
    pub command: usize,
    pub latency: Duration,
}

/// What stopped a transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailureKind {
    Serialization,
    Deadlock,
    /// Any other SQL error.
    Sql,
    ConnectionLost,
    /// A meta-command failed (an expression, `\shell`, `\gset`...).
    Meta,
    /// The script left a transaction or a pipeline open.
    Script,
}

/// Where and why a transaction stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub kind: FailureKind,
    /// The command (index in its script), or None for the end of the script.
    pub command: Option<usize>,
    /// A line saying what went wrong, with the script and line.
    pub message: String,
    /// What pgbench prints for it (after `pgbench: error: `): the client,
    /// script and command by number, the server's `ERROR:  ` message or
    /// the meta-command's error; may be several lines.
    pub pgbench: String,
}

/// How a transaction ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TxStatus {
    Done,
    /// A serialization failure or deadlock, not retried (any more): the
    /// client goes on with the next transaction.
    Failed(Failure),
    /// Any other error: the client cannot go on (pgbench aborts it).
    Aborted(Failure),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TxOutcome {
    pub script: usize,
    pub status: TxStatus,
    /// Runs of the script (more than 1 after retries).
    pub tries: u32,
    /// From the start of the first run to the end of the last.
    pub latency: Duration,
}

/// Why a run of a script stopped early.
struct Stop {
    kind: FailureKind,
    command: Option<usize>,
    message: String,
    /// pgbench's words for it: the server's report (`ERROR:  ...`), the
    /// meta-command's error, or why the script's end aborts.
    pgbench: String,
    /// An error pgbench prints before its abort line (a failed PREPARE).
    before: Option<String>,
    /// The script ended inside a transaction block.
    open_transaction: bool,
}

impl Stop {
    /// A meta-command's error: dbmeter says `\word: error`, pgbench
    /// `word: error` (or the bare error, which it words the same).
    fn meta(command: usize, message: String) -> Stop {
        let pgbench = message.trim_start_matches('\\').to_string();
        Stop {
            before: None,
            open_transaction: false,
            kind: FailureKind::Meta,
            command: Some(command),
            message,
            pgbench,
        }
    }
}

/// A meta-command's name as pgbench names it in messages.
fn meta_word(kind: &CommandKind) -> &'static str {
    match kind {
        CommandKind::Sql(_) => "SQL",
        CommandKind::Set { .. } => "set",
        CommandKind::If { .. } => "if",
        CommandKind::Elif { .. } => "elif",
        CommandKind::Else { .. } => "else",
        CommandKind::Endif => "endif",
        CommandKind::Sleep { .. } => "sleep",
        CommandKind::SetShell { .. } => "setshell",
        CommandKind::Shell { .. } => "shell",
        CommandKind::StartPipeline => "startpipeline",
        CommandKind::EndPipeline => "endpipeline",
    }
}

impl Stop {
    fn retryable(&self) -> bool {
        matches!(
            self.kind,
            FailureKind::Serialization | FailureKind::Deadlock
        )
    }
}

/// One client: its variables, random generators and buffers.
#[derive(Debug)]
pub struct Client {
    id: usize,
    set: Arc<ScriptSet>,
    vars: Variables,
    /// For `random()` and friends (pgbench's per-client generator).
    rng: PgPrng,
    /// For choosing a script.
    chooser: PgPrng,
    options: ExecOptions,
    sql: String,
    params: Params,
    captured: Captured,
    name_buf: String,
    runs: Vec<CommandRun>,
    stats: Vec<Vec<CommandStats>>,
    /// A transaction that ended inside a transaction block counts as done
    /// (as pgbench counts it), and then the client aborts: this is why.
    pending_abort: Option<Failure>,
}

impl Client {
    /// Why the client must stop after its last transaction (a script that
    /// ended inside a transaction block), if it must.
    pub fn take_pending_abort(&mut self) -> Option<Failure> {
        self.pending_abort.take()
    }

    pub fn id(&self) -> usize {
        self.id
    }

    /// A script by weight.
    pub fn choose_script(&mut self) -> usize {
        self.set.choose(&mut self.chooser)
    }

    /// Chooses a script and runs it.
    pub fn run_transaction(&mut self, session: &mut dyn Session, host: &mut dyn Host) -> TxOutcome {
        let script = self.choose_script();
        self.run_script(script, session, host)
    }

    /// The commands run by the last transaction, with their latencies
    /// (those of every try after a retry).
    pub fn last_commands(&self) -> &[CommandRun] {
        &self.runs
    }

    /// Per-command numbers of script `script` so far.
    pub fn command_stats(&self, script: usize) -> &[CommandStats] {
        self.stats.get(script).map_or(&[], |s| s.as_slice())
    }

    /// A variable's text form, if it is set (for tests and reports).
    pub fn variable(&self, name: &str) -> Option<String> {
        self.set.names().get(name).and_then(|id| self.vars.text(id))
    }

    /// Runs script number `script` as one transaction.
    ///
    /// What a transaction rarely does (a retry, a failure, `-d`) is in
    /// functions of its own, out of line: the stack this one keeps while
    /// its commands run, and every client's calls go on below it, stays
    /// small.
    pub fn run_script(
        &mut self,
        script: usize,
        session: &mut dyn Session,
        host: &mut dyn Host,
    ) -> TxOutcome {
        self.runs.clear();
        if self.pending_abort.is_some() {
            return self.refuse(script);
        }
        let start = host.now();
        if script >= self.set.scripts().len() {
            return self.refuse(script);
        }
        if self.options.debug {
            self.debug_script(script, host);
        }
        let first_state = self.rng.clone();
        // The first try's first command starts with the transaction; the
        // end of the last command of a try that ran to the end is the
        // transaction's end, without another clock reading.
        let (status, tries, end) = match self.run_once(script, session, host, Some(start)) {
            Ok(end) => (TxStatus::Done, 1, end),
            Err(stop) => self.after_stop(script, session, host, start, first_state, stop),
        };
        let end = match end {
            Some(t) => t,
            None => host.now(),
        };
        TxOutcome {
            script,
            status,
            tries,
            latency: end.saturating_sub(start),
        }
    }

    /// The transaction a client cannot run: it must abort (its last one
    /// ended in a transaction block), or there is no script `script`.
    #[cold]
    #[inline(never)]
    fn refuse(&mut self, script: usize) -> TxOutcome {
        let failure = match self.pending_abort.take() {
            Some(f) => f,
            None => {
                let message = format!(
                    "there is no script number {script} (the run has {})",
                    self.set.scripts().len()
                );
                Failure {
                    kind: FailureKind::Script,
                    command: None,
                    pgbench: message.clone(),
                    message,
                }
            }
        };
        TxOutcome {
            script,
            status: TxStatus::Aborted(failure),
            tries: 0,
            latency: Duration::ZERO,
        }
    }

    #[cold]
    #[inline(never)]
    fn debug_script(&self, script: usize, host: &mut dyn Host) {
        host.debug(&format!(
            "pgbench: client {} executing script \"{}\"",
            self.id,
            self.set.scripts()[script].name
        ));
    }

    /// A try of the transaction begun at `start` stopped with `stop`:
    /// retries it (rolled back first, with the random state it started
    /// with, `first_state`) while that is allowed and it stops with a
    /// serialization failure or a deadlock. Returns how it ended, its
    /// tries and the end of the last try's last command when known.
    #[cold]
    #[inline(never)]
    fn after_stop(
        &mut self,
        script: usize,
        session: &mut dyn Session,
        host: &mut dyn Host,
        start: Duration,
        first_state: PgPrng,
        mut stop: Stop,
    ) -> (TxStatus, u32, Option<Duration>) {
        let mut tries = 1;
        let status = loop {
            if stop.kind == FailureKind::Script && stop.open_transaction {
                self.pending_abort = Some(self.failure(script, stop));
                break TxStatus::Done;
            }
            if !stop.retryable() {
                break TxStatus::Aborted(self.failure(script, stop));
            }
            if let Err(e) = self.roll_back(script, session) {
                break TxStatus::Aborted(e);
            }
            let command = stop.command.unwrap_or(0);
            let within_tries = self.options.max_tries == 0 || tries < self.options.max_tries;
            let within_time = self
                .options
                .latency_limit
                .is_none_or(|limit| host.now().saturating_sub(start) <= limit);
            let retry = within_tries && within_time && !host.stopping();
            if self.options.verbose_errors {
                let what = if retry {
                    "repeats the transaction after the error"
                } else {
                    "ends the failed transaction"
                };
                let mut line = format!("pgbench: client {} {what} (try {tries}", self.id);
                if self.options.max_tries > 0 {
                    line.push_str(&format!("/{}", self.options.max_tries));
                }
                if let Some(limit) = self.options.latency_limit {
                    let used = host.now().saturating_sub(start).as_secs_f64() / limit.as_secs_f64();
                    line.push_str(&format!(
                        ", {:.3}% of the maximum time of tries was used",
                        100.0 * used
                    ));
                }
                line.push(')');
                host.debug(&line);
            }
            if retry {
                tries += 1;
                if let Some(s) = self.stat_mut(script, command) {
                    s.retries += 1;
                }
                // The retry draws the same random numbers; its first
                // command reads the clock again.
                self.rng = first_state.clone();
                match self.run_once(script, session, host, None) {
                    Ok(end) => return (TxStatus::Done, tries, end),
                    Err(next) => stop = next,
                }
                continue;
            }
            if let Some(s) = self.stat_mut(script, command) {
                s.failures += 1;
            }
            break TxStatus::Failed(self.failure(script, stop));
        };
        (status, tries, None)
    }

    fn stat_mut(&mut self, script: usize, command: usize) -> Option<&mut CommandStats> {
        self.stats.get_mut(script).and_then(|s| s.get_mut(command))
    }

    /// The failure, its message prefixed with the script and line.
    fn failure(&self, script: usize, stop: Stop) -> Failure {
        let s = &self.set.scripts()[script];
        let command = stop.command.and_then(|c| s.commands.get(c));
        let message = match command {
            Some(c) => format!("{}:{}: {}", s.name, c.line, stop.message),
            None => format!("{}: {}", s.name, stop.message),
        };
        let id = self.id;
        let n = stop.command.unwrap_or(0);
        let pgbench = match (stop.kind, command.map(|c| &c.kind)) {
            (FailureKind::Script, _) => format!("client {id} aborted: {}", stop.pgbench),
            (FailureKind::Meta, Some(CommandKind::Sql(_))) => format!(
                "client {id} script {script} command {n} query 0: {}",
                stop.pgbench
            ),
            (FailureKind::Meta, Some(kind)) => {
                let word = meta_word(kind);
                let generic = match kind {
                    CommandKind::Set { .. } | CommandKind::If { .. } | CommandKind::Elif { .. } => {
                        "evaluation of meta-command failed".to_string()
                    }
                    CommandKind::Sleep { .. }
                    | CommandKind::Shell { .. }
                    | CommandKind::SetShell { .. } => "execution of meta-command failed".into(),
                    _ => stop.pgbench.clone(),
                };
                let aborted = format!(
                    "client {id} aborted in command {n} ({word}) of script {script}; {generic}"
                );
                if generic == stop.pgbench {
                    aborted
                } else {
                    format!("{}\npgbench: error: {aborted}", stop.pgbench)
                }
            }
            _ => format!(
                "client {id} script {script} aborted in command {n} query 0: {}",
                stop.pgbench
            ),
        };
        let pgbench = match &stop.before {
            Some(b) => format!("{b}\npgbench: error: {pgbench}"),
            None => pgbench,
        };
        Failure {
            kind: stop.kind,
            command: stop.command,
            message: if self.options.pgbench_messages {
                pgbench.clone()
            } else {
                message
            },
            pgbench,
        }
    }

    /// After a retryable error: rolls back the transaction the script had
    /// open (unless the session knows there is none).
    fn roll_back(&mut self, script: usize, session: &mut dyn Session) -> Result<(), Failure> {
        if session.in_transaction() == Some(false) {
            return Ok(());
        }
        self.params.clear();
        let q = Query {
            script,
            command: ROLLBACK_COMMAND,
            mode: QueryMode::Simple,
            sql: "ROLLBACK",
            params: &self.params,
        };
        session.query(&q, None).map_err(|e| Failure {
            kind: if e.kind == SqlErrorKind::ConnectionLost {
                FailureKind::ConnectionLost
            } else {
                FailureKind::Sql
            },
            command: None,
            message: format!(
                "{}: cannot roll back the failed transaction: {e}",
                self.set.scripts()[script].name
            ),
            pgbench: format!(
                "client {} aborted while rolling back the transaction after an error; ERROR:  {}",
                self.id, e.message
            ),
        })
    }

    /// One try of script `script`; `start`: when its first command starts
    /// (None: now). Returns when its last command ended, when known.
    fn run_once(
        &mut self,
        script: usize,
        session: &mut dyn Session,
        host: &mut dyn Host,
        start: Option<Duration>,
    ) -> Result<Option<Duration>, Stop> {
        let mut in_pipeline = false;
        let result = self.run_commands(script, session, host, &mut in_pipeline, start);
        if result.is_err() && in_pipeline {
            // Whatever the pipeline still holds is discarded.
            let _ = session.end_pipeline();
        }
        result
    }

    fn run_commands(
        &mut self,
        script: usize,
        session: &mut dyn Session,
        host: &mut dyn Host,
        in_pipeline: &mut bool,
        start: Option<Duration>,
    ) -> Result<Option<Duration>, Stop> {
        let set = Arc::clone(&self.set);
        let commands = &set.scripts()[script].commands;
        let mut pc = 0;
        // The end of the command before, when the next one starts right
        // after it: one clock reading less per command. The first one
        // starts at `start`.
        let mut last_end = start;
        while pc < commands.len() {
            let started = match last_end.take() {
                Some(t) => t,
                None => host.now(),
            };
            let meta = |message: String| Stop::meta(pc, message);
            let mut next = pc + 1;
            if self.options.debug && !matches!(commands[pc].kind, CommandKind::Sql(_)) {
                host.debug(&format!(
                    "pgbench: client {} executing {}",
                    self.id, commands[pc].first_line
                ));
            }
            match &commands[pc].kind {
                CommandKind::Sql(q) => {
                    self.run_sql(q, script, pc, *in_pipeline, session, host)?;
                }
                CommandKind::Set { var, expr } => {
                    let v = self
                        .eval(expr, script, pc, host)
                        .map_err(|e| meta(format!("\\set: {e}")))?;
                    let name = set.names().name(*var);
                    if !valid_variable_name(name) {
                        return Err(meta(format!("\\set: invalid variable name: \"{name}\"")));
                    }
                    self.vars.set_value(*var, v);
                }
                CommandKind::If {
                    cond,
                    next: on_false,
                } => {
                    let v = self
                        .eval(cond, script, pc, host)
                        .map_err(|e| meta(format!("\\if: {e}")))?;
                    if !v.truth() {
                        let _ = self.record(script, pc, started, host);
                        pc = self.enter_branch(commands, *on_false, script, host)?;
                        continue;
                    }
                }
                // Reached at the end of a branch that ran: skip to the \endif.
                CommandKind::Elif { end, .. } | CommandKind::Else { end } => next = end + 1,
                CommandKind::Endif => {}
                CommandKind::Sleep { amount, unit_us } => {
                    let us = self.sleep_micros(amount, *unit_us).map_err(meta)?;
                    if us > 0 {
                        host.sleep(Duration::from_micros(us as u64));
                    }
                }
                CommandKind::SetShell { var, words } => {
                    let out = self
                        .shell(words, true, host)
                        .map_err(|e| meta(format!("\\setshell: {e}")))?;
                    let v =
                        parse_shell_integer(&out).map_err(|e| meta(format!("\\setshell: {e}")))?;
                    self.vars.set_value(*var, Value::Int(v));
                }
                CommandKind::Shell { words } => {
                    self.shell(words, false, host)
                        .map_err(|e| meta(format!("\\shell: {e}")))?;
                }
                CommandKind::StartPipeline => {
                    if self.options.mode == QueryMode::Simple {
                        return Err(meta(
                            "\\startpipeline: cannot use pipeline mode with the simple query protocol (use the extended or prepared mode)".into(),
                        ));
                    }
                    if *in_pipeline {
                        return Err(meta("\\startpipeline: already in pipeline mode".into()));
                    }
                    session.begin_pipeline().map_err(|e| sql_stop(e, pc))?;
                    *in_pipeline = true;
                }
                CommandKind::EndPipeline => {
                    if !*in_pipeline {
                        return Err(meta("\\endpipeline: not in pipeline mode".into()));
                    }
                    *in_pipeline = false;
                    session.end_pipeline().map_err(|e| sql_stop(e, pc))?;
                }
            }
            last_end = Some(self.record(script, pc, started, host));
            pc = next;
        }
        if *in_pipeline {
            return Err(Stop {
                before: None,
                open_transaction: false,
                kind: FailureKind::Script,
                command: None,
                message: "end of script reached with a pipeline open (missing \\endpipeline)"
                    .into(),
                pgbench: "end of script reached with pipeline open".into(),
            });
        }
        if session.in_transaction() == Some(true) {
            return Err(Stop {
                before: None,
                open_transaction: true,
                kind: FailureKind::Script,
                command: None,
                message: "end of script reached without completing the last transaction (missing COMMIT or END)".into(),
                pgbench: "end of script reached without completing the last transaction".into(),
            });
        }
        Ok(last_end)
    }

    /// Goes to a false `\if`'s next branch: evaluates `\elif`s until one is
    /// true, enters an `\else`, or leaves at the `\endif`. Returns the
    /// command to run next.
    fn enter_branch(
        &mut self,
        commands: &[super::script::Command],
        mut at: usize,
        script: usize,
        host: &mut dyn Host,
    ) -> Result<usize, Stop> {
        loop {
            match commands.get(at).map(|c| &c.kind) {
                Some(CommandKind::Elif { cond, next, .. }) => {
                    let started = host.now();
                    let v = self
                        .eval(cond, script, at, host)
                        .map_err(|e| Stop::meta(at, format!("\\elif: {e}")))?;
                    let _ = self.record(script, at, started, host);
                    if v.truth() {
                        return Ok(at + 1);
                    }
                    at = *next;
                }
                // \else and \endif are passed, not run, from a false branch.
                _ => return Ok(at + 1),
            }
        }
    }

    /// Records a command that ran from `started` to now; returns now.
    fn record(
        &mut self,
        script: usize,
        command: usize,
        started: Duration,
        host: &mut dyn Host,
    ) -> Duration {
        let now = host.now();
        let latency = now.saturating_sub(started);
        self.runs.push(CommandRun { command, latency });
        if let Some(s) = self.stat_mut(script, command) {
            s.add(latency);
        }
        now
    }

    fn eval(
        &mut self,
        expr: &Expr,
        script: usize,
        command: usize,
        host: &mut dyn Host,
    ) -> Result<Value, EvalError> {
        let mut debug = |v: &Value| {
            host.debug(&format!(
                "debug(script={script},command={}): {}",
                command + 1,
                v.describe()
            ))
        };
        Evaluator {
            vars: &mut self.vars,
            names: self.set.names(),
            rng: &mut self.rng,
            debug: &mut debug,
        }
        .eval(expr)
    }

    fn run_sql(
        &mut self,
        q: &SqlCommand,
        script: usize,
        command: usize,
        in_pipeline: bool,
        session: &mut dyn Session,
        host: &mut dyn Host,
    ) -> Result<(), Stop> {
        let meta = |message: String| Stop::meta(command, message);
        if in_pipeline && let Some(c) = &q.capture {
            let what = if c.kind == CaptureKind::Gset {
                "gset"
            } else {
                "aset"
            };
            return Err(meta(format!("\\{what} is not allowed in pipeline mode")));
        }
        if q.copies_through_client {
            // pgbench cannot feed or drain a COPY: it refuses it.
            return Err(Stop {
                before: None,
                open_transaction: false,
                kind: FailureKind::Sql,
                command: Some(command),
                message: "COPY FROM STDIN and COPY TO STDOUT are not supported in scripts".into(),
                pgbench: "COPY is not supported in pgbench, aborting".into(),
            });
        }
        let mode = self.options.mode;
        self.params.clear();
        let sql: &str = match mode {
            QueryMode::Simple => {
                self.sql.clear();
                q.write_substituted(&self.vars, &mut self.sql);
                &self.sql
            }
            QueryMode::Extended | QueryMode::Prepared => {
                for &id in &q.params {
                    let vars = &self.vars;
                    self.params.push_with(|out| vars.write_text(id, out));
                }
                &q.numbered
            }
        };
        let query = Query {
            script,
            command,
            mode,
            sql,
            params: &self.params,
        };
        let capture = match q.capture {
            Some(_) => {
                self.captured.clear();
                Some(&mut self.captured)
            }
            None => None,
        };
        let id = self.id;
        if self.options.debug {
            let shown = match mode {
                QueryMode::Prepared => format!("P_{}", self.set.sql_number(script, command)),
                _ => sql.to_string(),
            };
            host.debug(&format!("pgbench: client {id} sending {shown}"));
        }
        let result = session.query(&query, capture);
        if self.options.debug {
            host.debug(&format!("pgbench: client {id} receiving"));
        }
        result.map_err(|e| {
            let code = e.code.clone();
            if self.options.verbose_errors && e.retryable() {
                host.debug(&format!(
                    "pgbench: client {id} got an error in command {command} (SQL) of script {script}; ERROR:  {}",
                    e.message
                ));
            }
            let mut stop = sql_stop(e, command);
            // Under -M prepared pgbench prepares first: a statement the
            // server cannot parse fails there, and then its run fails for
            // want of the statement. pgbench prints both.
            if mode == QueryMode::Prepared
                && code.starts_with("42")
                && code != "42501"
                && stop.kind == FailureKind::Sql
            {
                stop.before = Some(std::mem::replace(
                    &mut stop.pgbench,
                    format!(
                        "ERROR:  prepared statement \"P_{}\" does not exist",
                        self.set.sql_number(script, command)
                    ),
                ));
            }
            stop
        })?;
        if let Some(c) = &q.capture {
            self.store_captured(c.kind, &c.prefix).map_err(|e| {
                let what = if c.kind == CaptureKind::Gset {
                    "gset"
                } else {
                    "aset"
                };
                Stop {
                    before: None,
                    open_transaction: false,
                    message: format!("\\{what}: {e}"),
                    pgbench: e,
                    ..meta(String::new())
                }
            })?;
        }
        Ok(())
    }

    /// Stores `\gset` (the last result, which must have one row) or
    /// `\aset` (the last row of every result with rows) into variables.
    fn store_captured(&mut self, kind: CaptureKind, prefix: &str) -> Result<(), String> {
        let results = self.captured.results();
        let chosen = match kind {
            CaptureKind::Gset => {
                let last = results.last();
                let rows = last.map_or(0, |r| r.rows);
                if rows != 1 {
                    return Err(format!("expected one row, got {rows}"));
                }
                results.len() - 1..results.len()
            }
            CaptureKind::Aset => 0..results.len(),
        };
        let what = if kind == CaptureKind::Gset {
            "gset"
        } else {
            "aset"
        };
        for r in &results[chosen] {
            if r.rows == 0 {
                continue;
            }
            for (column, value) in r.last_row() {
                self.name_buf.clear();
                self.name_buf.push_str(prefix);
                self.name_buf.push_str(column);
                match self.set.names().get(&self.name_buf) {
                    Some(id) => self.vars.set_text(id, value),
                    // No script reads it: only check the name.
                    None if valid_variable_name(&self.name_buf) => {}
                    None => {
                        return Err(format!(
                            "error storing into variable {} (\\{what}: name the column with AS)",
                            self.name_buf
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// The length of a `\sleep` in microseconds.
    fn sleep_micros(&self, amount: &SleepAmount, unit_us: i64) -> Result<i64, String> {
        let n = match amount {
            SleepAmount::Number(n) => *n,
            SleepAmount::Var(id) => {
                let name = self.set.names().name(*id);
                let Some(text) = self.vars.text(*id) else {
                    return Err(format!("\\sleep: undefined variable \"{name}\""));
                };
                let n = atoi(&text);
                if n == 0 && !text.starts_with(|c: char| c.is_ascii_digit()) {
                    return Err(format!(
                        "\\sleep: invalid sleep time \"{text}\" for variable \"{name}\""
                    ));
                }
                n
            }
        };
        Ok(n.saturating_mul(unit_us))
    }

    /// Runs a `\shell`/`\setshell` command line.
    fn shell(
        &mut self,
        words: &[ShellWord],
        capture: bool,
        host: &mut dyn Host,
    ) -> Result<String, String> {
        let mut line = String::new();
        for (i, w) in words.iter().enumerate() {
            if i > 0 {
                line.push(' ');
            }
            match w {
                ShellWord::Text(t) => line.push_str(t),
                ShellWord::Var(id) => {
                    if !self.vars.write_text(*id, &mut line) {
                        return Err(format!(
                            "undefined variable \":{}\"",
                            self.set.names().name(*id)
                        ));
                    }
                }
            }
        }
        host.shell(&line, capture)
    }
}

/// `\setshell`'s output: an integer on the first line, blanks allowed.
fn parse_shell_integer(out: &str) -> Result<i64, String> {
    if out.is_empty() {
        return Err("could not read result of shell command".into());
    }
    let first = out.lines().next().unwrap_or("");
    first.trim().parse::<i64>().map_err(|_| {
        format!(
            "shell command must return an integer (not \"{}\")",
            first.trim_end()
        )
    })
}

fn sql_stop(e: SqlError, command: usize) -> Stop {
    let kind = match e.kind {
        SqlErrorKind::Serialization => FailureKind::Serialization,
        SqlErrorKind::Deadlock => FailureKind::Deadlock,
        SqlErrorKind::ConnectionLost => FailureKind::ConnectionLost,
        SqlErrorKind::Other => FailureKind::Sql,
    };
    Stop {
        before: None,
        open_transaction: false,
        kind,
        command: Some(command),
        pgbench: e
            .report
            .clone()
            .unwrap_or_else(|| format!("ERROR:  {}", e.message)),
        message: e.to_string(),
    }
}

/// The client's control flow with a session that records what it is sent
/// (the database side is tested against a real PostgreSQL in
/// `tests/pgbench_lang.rs`).
#[cfg(test)]
mod tests {
    use super::super::script_set::ScriptSetBuilder;
    use super::*;
    use std::collections::VecDeque;

    /// A result's last row: (column, value) pairs.
    type Row = Vec<(&'static str, Option<&'static str>)>;

    /// Records queries; answers `\gset` queries from `rows`; fails a query
    /// whose text starts with a key of `fail` (code, times left).
    #[derive(Default)]
    struct Recorder {
        log: Vec<String>,
        rows: Vec<(&'static str, Row)>,
        fail: Vec<(&'static str, &'static str, u32)>,
        pipelines: bool,
        in_tx: Option<bool>,
    }

    impl Session for Recorder {
        fn query(&mut self, q: &Query<'_>, capture: Option<&mut Captured>) -> Result<(), SqlError> {
            let params: Vec<String> = q
                .params
                .iter()
                .map(|p| p.unwrap_or("NULL").to_string())
                .collect();
            if params.is_empty() {
                self.log.push(q.sql.to_string());
            } else {
                self.log.push(format!("{} [{}]", q.sql, params.join(", ")));
            }
            for (prefix, code, left) in &mut self.fail {
                if q.sql.starts_with(*prefix) && *left > 0 {
                    *left -= 1;
                    return Err(SqlError::from_sqlstate(code, format!("{prefix} failed")));
                }
            }
            if let Some(c) = capture {
                for (prefix, row) in &self.rows {
                    if q.sql.starts_with(prefix) {
                        c.begin_result(if row.is_empty() { 0 } else { 1 });
                        for (col, v) in row {
                            c.push_value(col, *v);
                        }
                    }
                }
            }
            Ok(())
        }

        fn begin_pipeline(&mut self) -> Result<bool, SqlError> {
            self.log.push("<begin pipeline>".into());
            Ok(self.pipelines)
        }

        fn end_pipeline(&mut self) -> Result<(), SqlError> {
            self.log.push("<end pipeline>".into());
            Ok(())
        }

        fn in_transaction(&mut self) -> Option<bool> {
            self.in_tx
        }
    }

    /// A clock that only moves when slept on (and 1 µs per reading).
    #[derive(Default)]
    struct FakeHost {
        now: Duration,
        events: Vec<String>,
        shell_out: VecDeque<String>,
    }

    impl Host for FakeHost {
        fn now(&mut self) -> Duration {
            self.now += Duration::from_micros(1);
            self.now
        }

        fn sleep(&mut self, d: Duration) {
            self.events.push(format!("sleep {}us", d.as_micros()));
            self.now += d;
        }

        fn debug(&mut self, line: &str) {
            self.events.push(line.to_string());
        }

        fn shell(&mut self, command: &str, capture: bool) -> Result<String, String> {
            self.events.push(format!("shell {command}"));
            if capture {
                Ok(self.shell_out.pop_front().unwrap_or_default())
            } else {
                Ok(String::new())
            }
        }
    }

    fn setup_with(text: &str, defines: &[&str], options: ExecOptions) -> Setup {
        let mut b = ScriptSetBuilder::new();
        if let Err(e) = b.add_text("t.sql", text, 1) {
            panic!("{e}");
        }
        let set = b.build().unwrap_or_else(|e| panic!("{e}"));
        let defines = defines
            .iter()
            .map(|d| Definition::parse(d).unwrap_or_else(|e| panic!("{e}")))
            .collect();
        Setup::new(Arc::new(set), 2, 42, 3, defines, options)
    }

    fn setup(text: &str, defines: &[&str]) -> Setup {
        setup_with(text, defines, ExecOptions::default())
    }

    fn run(setup: &Setup, session: &mut Recorder, host: &mut FakeHost) -> TxOutcome {
        let mut c = setup.client(0);
        c.run_transaction(session, host)
    }

    const BRANCHES: &str = "\\if :x = 1\nSELECT 'one';\n\\elif :x = 2\nSELECT 'two';\n\
                            \\if :y\nSELECT 'two-y';\n\\else\nSELECT 'two-not-y';\n\\endif\n\
                            \\elif :x = 3\nSELECT 'three';\n\\else\nSELECT 'other';\n\\endif\nSELECT 'after';\n";

    #[test]
    fn if_branches() {
        for (x, y, want) in [
            ("1", "1", vec!["SELECT 'one';", "SELECT 'after';"]),
            (
                "2",
                "1",
                vec!["SELECT 'two';", "SELECT 'two-y';", "SELECT 'after';"],
            ),
            (
                "2",
                "0",
                vec!["SELECT 'two';", "SELECT 'two-not-y';", "SELECT 'after';"],
            ),
            ("3", "0", vec!["SELECT 'three';", "SELECT 'after';"]),
            ("9", "0", vec!["SELECT 'other';", "SELECT 'after';"]),
        ] {
            let s = setup(BRANCHES, &[&format!("x={x}"), &format!("y={y}")]);
            let mut session = Recorder::default();
            let out = run(&s, &mut session, &mut FakeHost::default());
            assert_eq!(out.status, TxStatus::Done, "x={x}");
            assert_eq!(session.log, want, "x={x} y={y}");
        }
    }

    #[test]
    fn commands_run_and_timed_in_order_with_sleeps() {
        let s = setup(
            "SELECT 1;\n\\sleep 10 ms\nSELECT 2;\n\\set d 250\n\\sleep :d us\n\\sleep 0\n",
            &[],
        );
        let mut session = Recorder::default();
        let mut host = FakeHost::default();
        let mut c = s.client(0);
        let out = c.run_transaction(&mut session, &mut host);
        assert_eq!(out.status, TxStatus::Done);
        assert_eq!(host.events, ["sleep 10000us", "sleep 250us"]);
        let ran: Vec<usize> = c.last_commands().iter().map(|r| r.command).collect();
        assert_eq!(ran, [0, 1, 2, 3, 4, 5]);
        // The sleeps' latency is the time slept (plus the clock's 1 µs).
        assert_eq!(c.last_commands()[1].latency, Duration::from_micros(10_001));
        assert_eq!(c.last_commands()[4].latency, Duration::from_micros(251));
        assert!(out.latency >= Duration::from_micros(10_250));
        c.run_transaction(&mut session, &mut host);
        assert_eq!(c.command_stats(0)[1].count, 2);
        assert_eq!(c.command_stats(0)[1].total, Duration::from_micros(20_002));
    }

    #[test]
    fn sleep_errors() {
        let s = setup("\\sleep :nope\n", &[]);
        let out = run(&s, &mut Recorder::default(), &mut FakeHost::default());
        assert!(
            matches!(&out.status, TxStatus::Aborted(f) if f.message == "t.sql:1: \\sleep: undefined variable \"nope\""),
            "{out:?}"
        );
        let s = setup("\\sleep :v\n", &["v=abc"]);
        let out = run(&s, &mut Recorder::default(), &mut FakeHost::default());
        assert!(
            matches!(&out.status, TxStatus::Aborted(f) if f.message.contains("invalid sleep time \"abc\" for variable \"v\"")),
            "{out:?}"
        );
    }

    #[test]
    fn variables_in_sql_and_automatic_ones() {
        let s = setup(
            "\\set r random(1, 1000)\nSELECT :scale, :client_id, :random_seed, :r, ':x', :undefined::int;\n",
            &["x=hello"],
        );
        let mut session = Recorder::default();
        let mut c = s.client(1);
        c.run_transaction(&mut session, &mut FakeHost::default());
        let r = c.variable("r").unwrap_or_default();
        assert_eq!(
            session.log,
            [format!("SELECT 3, 1, 42, {r}, 'hello', :undefined::int;")]
        );
        // -D wins over the automatic ones.
        let s = setup("SELECT :scale;\n", &["scale=7"]);
        let mut session = Recorder::default();
        run(&s, &mut session, &mut FakeHost::default());
        assert_eq!(session.log, ["SELECT 7;"]);
    }

    #[test]
    fn extended_mode_sends_parameters() {
        let options = ExecOptions {
            mode: QueryMode::Extended,
            ..ExecOptions::default()
        };
        let s = setup_with("\\set a 5\nSELECT :a, :a + 1, :missing;\n", &[], options);
        let mut session = Recorder::default();
        run(&s, &mut session, &mut FakeHost::default());
        assert_eq!(session.log, ["SELECT $1, $2 + 1, $3; [5, 5, NULL]"]);
    }

    #[test]
    fn same_seed_same_numbers_and_clients_differ() {
        let s = setup("\\set r random(1, 1000000000)\nSELECT :r;\n", &[]);
        let draws = |client: usize| {
            let mut c = s.client(client);
            let mut session = Recorder::default();
            for _ in 0..5 {
                c.run_transaction(&mut session, &mut FakeHost::default());
            }
            session.log
        };
        assert_eq!(draws(0), draws(0));
        assert_ne!(draws(0), draws(1));
    }

    #[test]
    fn gset_and_aset_store_rows() {
        let s = setup(
            "SELECT 1 AS a, 2 AS b \\gset\nSELECT x \\gset p_\nSELECT y \\; SELECT z \\aset\nSELECT :a, :b, :p_c, :y1, :z1;\n",
            &[],
        );
        let mut session = Recorder {
            rows: vec![
                ("SELECT 1", vec![("a", Some("10")), ("b", None)]),
                ("SELECT x", vec![("c", Some("x!"))]),
                ("SELECT y", vec![("y1", Some("Y"))]),
                ("SELECT y", vec![]),
                ("SELECT y", vec![("z1", Some("Z"))]),
            ],
            ..Recorder::default()
        };
        let out = run(&s, &mut session, &mut FakeHost::default());
        assert_eq!(out.status, TxStatus::Done);
        assert_eq!(session.log[3], "SELECT 10, , x!, Y, Z;");
    }

    #[test]
    fn gset_needs_exactly_one_row_and_good_names() {
        let s = setup("SELECT 1 \\gset\n", &[]);
        let mut session = Recorder {
            rows: vec![("SELECT 1", vec![])],
            ..Recorder::default()
        };
        let out = run(&s, &mut session, &mut FakeHost::default());
        assert!(
            matches!(&out.status, TxStatus::Aborted(f) if f.message == "t.sql:1: \\gset: expected one row, got 0" && f.kind == FailureKind::Meta),
            "{out:?}"
        );
        let mut session = Recorder {
            rows: vec![("SELECT 1", vec![("?column?", Some("1"))])],
            ..Recorder::default()
        };
        let out = run(&s, &mut session, &mut FakeHost::default());
        assert!(
            matches!(&out.status, TxStatus::Aborted(f) if f.message.contains("error storing into variable ?column?")),
            "{out:?}"
        );
    }

    const TRANSFER: &str = "\\set v random(1, 1000000)\nBEGIN;\nUPDATE t SET v = :v;\nEND;\n";

    #[test]
    fn serialization_failures_are_retried_with_the_same_numbers() {
        let options = ExecOptions {
            max_tries: 3,
            ..ExecOptions::default()
        };
        let s = setup_with(TRANSFER, &[], options);
        let mut session = Recorder {
            fail: vec![("UPDATE", "40001", 2)],
            ..Recorder::default()
        };
        let mut c = s.client(0);
        let out = c.run_transaction(&mut session, &mut FakeHost::default());
        assert_eq!(out.status, TxStatus::Done);
        assert_eq!(out.tries, 3);
        let update = session.log[1].clone();
        assert!(update.starts_with("UPDATE t SET v = "));
        assert_eq!(
            session.log,
            [
                "BEGIN;", &update, "ROLLBACK", "BEGIN;", &update, "ROLLBACK", "BEGIN;", &update,
                "END;"
            ]
        );
        assert_eq!(c.command_stats(0)[2].retries, 2);
        assert_eq!(c.command_stats(0)[2].failures, 0);
    }

    #[test]
    fn failures_past_max_tries_and_other_errors() {
        let s = setup(TRANSFER, &[]);
        let mut session = Recorder {
            fail: vec![("UPDATE", "40P01", 1)],
            in_tx: Some(true),
            ..Recorder::default()
        };
        let mut c = s.client(0);
        let out = c.run_transaction(&mut session, &mut FakeHost::default());
        assert!(
            matches!(&out.status, TxStatus::Failed(f) if f.kind == FailureKind::Deadlock && f.command == Some(2)),
            "{out:?}"
        );
        assert_eq!(c.command_stats(0)[2].failures, 1);
        assert_eq!(session.log.last().map(String::as_str), Some("ROLLBACK"));

        let mut session = Recorder {
            fail: vec![("UPDATE", "23505", 1)],
            ..Recorder::default()
        };
        let out = run(&s, &mut session, &mut FakeHost::default());
        assert!(
            matches!(&out.status, TxStatus::Aborted(f) if f.kind == FailureKind::Sql && f.message.starts_with("t.sql:3: UPDATE failed")),
            "{out:?}"
        );
    }

    #[test]
    fn open_transaction_at_the_end_aborts() {
        let s = setup("BEGIN;\nSELECT 1;\n", &[]);
        let mut session = Recorder {
            in_tx: Some(true),
            ..Recorder::default()
        };
        // As pgbench: the transaction counts, then the client aborts (at
        // its next transaction, or when it finishes).
        let mut c = s.client(0);
        let mut host = FakeHost::default();
        let out = c.run_transaction(&mut session, &mut host);
        assert_eq!(out.status, TxStatus::Done, "{out:?}");
        let out = c.run_transaction(&mut session, &mut host);
        assert!(
            matches!(&out.status, TxStatus::Aborted(f) if f.kind == FailureKind::Script && f.command.is_none()),
            "{out:?}"
        );
        assert!(c.take_pending_abort().is_none());
        c.run_transaction(&mut session, &mut host);
        assert!(c.take_pending_abort().is_some());
    }

    #[test]
    fn pipelines() {
        let text = "\\startpipeline\nSELECT 1;\nSELECT 2;\n\\endpipeline\n";
        let s = setup(text, &[]);
        let out = run(&s, &mut Recorder::default(), &mut FakeHost::default());
        assert!(
            matches!(&out.status, TxStatus::Aborted(f) if f.message.contains("cannot use pipeline mode with the simple query protocol")),
            "{out:?}"
        );
        let extended = ExecOptions {
            mode: QueryMode::Extended,
            ..ExecOptions::default()
        };
        for pipelines in [false, true] {
            let s = setup_with(text, &[], extended);
            let mut session = Recorder {
                pipelines,
                ..Recorder::default()
            };
            let out = run(&s, &mut session, &mut FakeHost::default());
            assert_eq!(out.status, TxStatus::Done);
            assert_eq!(
                session.log,
                [
                    "<begin pipeline>",
                    "SELECT 1;",
                    "SELECT 2;",
                    "<end pipeline>"
                ]
            );
        }
        let s = setup_with(
            "\\startpipeline\nSELECT 1 \\gset\n\\endpipeline\n",
            &[],
            extended,
        );
        let mut session = Recorder::default();
        let out = run(&s, &mut session, &mut FakeHost::default());
        assert!(
            matches!(&out.status, TxStatus::Aborted(f) if f.message == "t.sql:2: \\gset is not allowed in pipeline mode"),
            "{out:?}"
        );
        assert_eq!(session.log, ["<begin pipeline>", "<end pipeline>"]);
        let s = setup_with("\\startpipeline\nSELECT 1;\n", &[], extended);
        let out = run(&s, &mut Recorder::default(), &mut FakeHost::default());
        assert!(
            matches!(&out.status, TxStatus::Aborted(f) if f.message.contains("pipeline open")),
            "{out:?}"
        );
    }

    #[test]
    fn shell_commands_and_debug() {
        let s = setup(
            "\\set n 4\n\\setshell x echo :n ::lit\n\\shell touch :x\n\\set y debug(:x * 2)\n",
            &[],
        );
        let mut host = FakeHost::default();
        host.shell_out.push_back(" 17 \n".into());
        let mut c = s.client(0);
        let out = c.run_transaction(&mut Recorder::default(), &mut host);
        assert_eq!(out.status, TxStatus::Done);
        assert_eq!(
            host.events,
            [
                "shell echo 4 :lit",
                "shell touch 17",
                "debug(script=0,command=4): int 34"
            ]
        );
        assert_eq!(c.variable("x").as_deref(), Some("17"));
        host.shell_out.push_back("seventeen\n".into());
        let out = c.run_transaction(&mut Recorder::default(), &mut host);
        assert!(
            matches!(&out.status, TxStatus::Aborted(f) if f.message == "t.sql:2: \\setshell: shell command must return an integer (not \"seventeen\")"),
            "{out:?}"
        );
    }

    #[test]
    fn expression_errors_abort_with_the_line() {
        let s = setup("SELECT 1;\n\\set x 1 / 0\n", &[]);
        let out = run(&s, &mut Recorder::default(), &mut FakeHost::default());
        assert!(
            matches!(&out.status, TxStatus::Aborted(f) if f.message == "t.sql:2: \\set: division by zero" && f.command == Some(1)),
            "{out:?}"
        );
    }
}
