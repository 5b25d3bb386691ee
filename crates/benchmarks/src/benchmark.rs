//! The one interface every benchmark implements, in its own folder.
//!
//! A benchmark says what it is (name, summary, options), which commands it
//! has besides `run` (prepare, prewarm, check, cleanup, or its own), which
//! of its options shape its data and whether its runs write (campaigns
//! share prepared data by this), how a run is planned (its users, their
//! named kinds, what it reads before and after), and how its own section
//! of the result reads as text. The run layer (`dbmeter-run`) drives it;
//! nothing above knows any benchmark by name.

use crate::options::{OptSpec, OptValues, Text};
use dbmeter_db::{ConnectOptions, DbError, ErrorKind, IgnoreList};
use dbmeter_engine::{EngineConfig, RunResult, UserFactory};
use dbmeter_env::Warning;
use dbmeter_result::{Layout, RunDocument, RunEvent};
use dbmeter_stats::Measure;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

/// A command of a benchmark besides `run`.
#[derive(Clone, Debug, PartialEq)]
pub struct Verb {
    pub name: Text,
    pub help: Text,
}

pub const fn verb(name: &'static str, help: &'static str) -> Verb {
    Verb {
        name: Text::Borrowed(name),
        help: Text::Borrowed(help),
    }
}

/// Rows a prepare will load and has loaded so far, for a progress bar
/// drawn by another thread.
#[derive(Debug, Default)]
pub struct LoadProgress {
    pub total: AtomicU64,
    pub done: AtomicU64,
}

/// Where a benchmark's commands report to the user: step and result lines
/// (called from concurrent loaders too) and the rows loaded so far.
pub trait Console: Send + Sync {
    /// One line for the user.
    fn line(&self, text: &str);
    /// The counter a loader advances (a progress bar may show it).
    fn progress(&self) -> &LoadProgress;
}

/// What a run may do to the machine and the server around its queries:
/// restart a server dbmeter manages, drop the OS page cache (cold runs).
pub trait ServerControl: Send + Sync {
    /// What is restarted, for messages (`managed server 'pg1'`, or `no
    /// server (SQLite)`).
    fn describe(&self) -> String;
    /// Stops the server cleanly and starts it again with the same data,
    /// settings and port; Ok(false) when there is no server to restart.
    fn restart_server(&self) -> Result<bool, String>;
    /// Writes dirty pages out and drops the OS page cache.
    fn drop_page_cache(&self) -> Result<(), String>;
}

/// What a benchmark's command or run plan gets to work with.
pub struct Context<'a> {
    /// Every option, the general ones included, defaults filled in.
    pub options: &'a OptValues,
    /// Where to connect (None for a benchmark without a database). Its
    /// `query_timeout` is the one for the virtual users' connections;
    /// the benchmark's own set-up connections should not use it.
    pub connect: Option<&'a ConnectOptions>,
    /// Error codes that restart an event instead of stopping the run.
    pub ignore: IgnoreList,
    /// The seed of this command (drawn from the clock when not given).
    pub seed: u64,
    /// `--threads`: virtual users of a run, loaders of a prepare.
    pub threads: usize,
    /// The server's control, when dbmeter manages the target's server (or
    /// the target is an SQLite file); None otherwise.
    pub server: Option<Arc<dyn ServerControl>>,
    pub console: &'a dyn Console,
    /// How the run is presented: a benchmark words its own notes as the
    /// peer whose layout this is would (the presenters do the header,
    /// interval lines and report).
    pub layout: Layout,
    /// `--shard=I/N`: this process does its share of the work (a run's
    /// users are already its share in `threads`; a prepare loads its
    /// share of the data, see [`Benchmark::shards_prepare`]).
    pub shard: Option<crate::shard::Shard>,
}

impl Context<'_> {
    /// The number, in the whole run, of this process's first user: 0, or
    /// under `--shard` the users of the shards before it (a benchmark
    /// that gives each user a place, tpcc's home warehouses, numbers its
    /// users from here so that the shards cover what one process would).
    pub fn first_user(&self) -> usize {
        self.shard
            .map_or(0, |s| s.range(self.options.u64("threads")).start as usize)
    }

    /// The target's connection options, without the users' query timeout;
    /// an error for a benchmark that needs a database and has none.
    pub fn setup_connection(&self) -> Result<ConnectOptions, BenchError> {
        match self.connect {
            Some(c) => Ok(ConnectOptions {
                query_timeout: None,
                ..c.clone()
            }),
            None => Err(BenchError::Failed("this benchmark needs a database".into())),
        }
    }

    /// The users' connection options (with `--query-timeout`).
    pub fn user_connection(&self) -> Result<ConnectOptions, BenchError> {
        self.connect
            .cloned()
            .ok_or_else(|| BenchError::Failed("this benchmark needs a database".into()))
    }

    /// Says one line.
    pub fn say(&self, line: &str) {
        self.console.line(line);
    }

    /// ` --db=URL` (password masked) when the user gave one, for the
    /// command lines that errors suggest; empty otherwise.
    pub fn db_option(&self) -> String {
        let db = self.options.str("db");
        if db.is_empty() {
            String::new()
        } else {
            format!(" --db={}", dbmeter_db::mask_password(db))
        }
    }
}

/// Why a benchmark's command failed.
#[derive(Clone, Debug, PartialEq)]
pub enum BenchError {
    /// The command line asks for something the benchmark cannot do.
    Usage(String),
    /// Anything else.
    Failed(String),
}

impl std::fmt::Display for BenchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BenchError::Usage(m) | BenchError::Failed(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for BenchError {}

impl From<DbError> for BenchError {
    fn from(e: DbError) -> Self {
        match e.kind {
            ErrorKind::Usage => BenchError::Usage(e.message),
            _ => BenchError::Failed(e.message),
        }
    }
}

/// A run as its benchmark planned it: the users and what the benchmark
/// measures around them.
pub trait RunPlan: Send {
    /// The server's (or library's) version, for the header and the record.
    fn server_version(&self) -> String;

    /// True for a plan whose users may never touch the server (a sysbench
    /// script connects only if it wants to): the run then reads the
    /// server's facts only if it answers, and says nothing when it does not.
    fn server_optional(&self) -> bool {
        false
    }

    /// The counters its users add to beyond events ([`Tally::measures`]
    /// by index), in that order: the SQL benchmarks'
    /// [`dbmeter_stats::measure::sql::MEASURES`] (reads, writes, others),
    /// none for a benchmark that only counts events.
    ///
    /// [`Tally::measures`]: dbmeter_engine::Tally::measures
    fn measures(&self) -> Vec<Measure>;

    /// The names of the kinds of events its users tell apart
    /// (`Tally::kind` indexes this list); empty when they tell none apart.
    fn kinds(&self) -> Vec<String> {
        Vec::new()
    }

    /// The virtual users.
    fn users(&self) -> Arc<dyn UserFactory>;

    /// What the benchmark says of its settings as the run starts, in the
    /// words of [`Context::layout`]'s peer: sysbench's machine tests print
    /// theirs after the run header and before "Initializing worker
    /// threads..." (`Prime numbers limit: 10000`). One or more lines, each
    /// ended by a newline; None (the default) says nothing.
    fn preamble(&self) -> Option<String> {
        None
    }

    /// Shapes the engine to the plan before the run starts: a benchmark
    /// whose users have finite work (query streams) sets how many users
    /// there are and lifts the default time limit here.
    fn shape_engine(&self, engine: &mut EngineConfig) {
        let _ = engine;
    }

    /// Set-up steps that follow the run's header (pgbench's vacuum), with
    /// their notes on `console`. Errors here are the plan's to report as
    /// notes; the run goes on.
    fn before_run(&mut self, console: &dyn Console) {
        let _ = console;
    }

    /// Called as the measurement starts (at the end of the warm-up): a
    /// benchmark that reads counters from the database takes its first
    /// reading here.
    fn measure_start(&mut self) {}

    /// The plan's own words for an event, where the presenters' do not
    /// fit: called on the thread that runs the plan (the one that called
    /// [`Benchmark::plan`]) for each [`RunEvent::Interval`] (with `words`
    /// None) and for [`RunEvent::MeasurementEnded`]. Text presenters print
    /// what it returns instead of their own rendering ("" prints
    /// nothing); None leaves the event to them. A script's
    /// `report_intermediate` hook and tpcc's interval line are this.
    fn own_words(&mut self, event: &RunEvent) -> Option<String> {
        let _ = event;
        None
    }

    /// Called after the run: the benchmark reads what it measures after a
    /// run and puts its own section into the document
    /// ([`RunDocument::set_section`]). It returns its warnings; the run
    /// layer adds them to the document and reports them.
    fn finish(&mut self, result: &RunResult, doc: &mut RunDocument) -> Vec<Warning> {
        let _ = (result, doc);
        Vec::new()
    }

    /// Called once the final report is out (a sysbench script's `done()`,
    /// which sysbench calls after its report): its warnings, said but no
    /// longer part of the stored result.
    fn after_report(&mut self) -> Vec<Warning> {
        Vec::new()
    }
}

/// One step of a sweep ([`Benchmark::sweep`]): a run or a command of the
/// benchmark, with options set over the request's.
#[derive(Clone, Debug, PartialEq)]
pub enum SweepStep {
    Run {
        set: Vec<(String, String)>,
    },
    Command {
        verb: String,
        set: Vec<(String, String)>,
    },
}

/// One benchmark.
pub trait Benchmark: Send + Sync {
    fn name(&self) -> &str;

    /// One line on what it does.
    fn summary(&self) -> &str;

    /// Its own options (the general ones come from the run layer).
    fn options(&self) -> Vec<OptSpec>;

    /// Parses the options into the benchmark's typed settings and checks
    /// them, as its [`Benchmark::command`] and [`Benchmark::plan`] do
    /// before anything else: a bad value is a [`BenchError::Usage`] of
    /// one line that names the option, the value and what it takes. It
    /// reads every option the benchmark uses, its own and the general
    /// ones, whatever their values, so that a test calling it with the
    /// defaults finds a misspelled name (an undeclared name panics in a
    /// debug build, see [`OptValues`]).
    fn check_options(&self, options: &OptValues) -> Result<(), BenchError>;

    /// Its commands besides `run`, in the order help shows them.
    fn verbs(&self) -> Vec<Verb>;

    /// True for a benchmark that takes options it does not declare (a
    /// sysbench 0.5 script reads any `--name=value` as a global variable).
    fn takes_any_option(&self) -> bool {
        false
    }

    /// sysbench's `TEST help` for a benchmark that words its own help (a
    /// sysbench script's `help()` function): prints it and returns true.
    /// False (the default) when it has none; then `dbmeter sysbench`
    /// lists [`Benchmark::sysbench_options`].
    fn own_help(&self) -> Result<bool, BenchError> {
        Ok(false)
    }

    /// The options sysbench's `TEST help` lists for it: its own options
    /// as sysbench would list them (a script: the ones it declares, not
    /// those dbmeter adds to every script). Empty: the test has none, and
    /// sysbench says it "does not implement the 'help' command".
    fn sysbench_options(&self) -> Vec<OptSpec> {
        if self.takes_any_option() {
            return Vec::new();
        }
        self.options()
    }

    /// True for a benchmark whose runs create what they need (mysqlslap's
    /// create step): a run may then make the SQLite file it is pointed at.
    /// False (the default): only `prepare` makes one.
    fn creates_its_data(&self) -> bool {
        false
    }

    /// True for a benchmark whose `prepare` loads only its share of the
    /// data under `--shard=I/N` ([`Context::shard`]: sysbench's tables,
    /// TPC-C's warehouses). False (the default): a sharded prepare is
    /// refused, prepare once without `--shard`.
    fn shards_prepare(&self) -> bool {
        false
    }

    /// True for a benchmark that sets its own users (its
    /// [`RunPlan::shape_engine`] sets `threads`) and under `--shard=I/N`
    /// takes its share of them itself ([`Context::shard`]: tpch's query
    /// streams, replay's sessions). False (the default): a sharded run
    /// whose plan changes the number of users is refused.
    fn splits_own_users(&self) -> bool {
        false
    }

    /// `dbmeter merge`: the benchmark's own section of the merged run (and
    /// the figures made from it) from the shards' documents, when the
    /// shards' sections add up to the section one process would have
    /// written. Returns the sections it merged (the others are left out
    /// of the merged run, and said so). The default merges none.
    fn merge_shards(&self, _shards: &[RunDocument], _merged: &mut RunDocument) -> Vec<String> {
        Vec::new()
    }

    /// False for a benchmark that touches no database.
    fn needs_database(&self) -> bool {
        true
    }

    /// What a command line that names no command does: None, nothing (it
    /// is a usage error); "" when loading did it all (a sysbench script:
    /// its body ran); else the command to run.
    fn default_command(&self) -> Option<String> {
        None
    }

    /// The family of data its `prepare` makes: benchmarks of one family
    /// with equal data-shaping options (`OptSpec::shapes_data`) share one
    /// prepared dataset. None for a benchmark without data.
    fn dataset(&self) -> Option<String>;

    /// Whether its runs change the data (a campaign that wants each run to
    /// start from the same data resets it before them).
    fn writes(&self) -> bool;

    /// Runs command `verb` (one of [`Benchmark::verbs`]).
    fn command(&self, verb: &str, ctx: &Context) -> Result<(), BenchError>;

    /// Plans a run: checks (or, where the benchmark does that, prepares)
    /// its data and makes its users. Lines for the user go to the console.
    fn plan(&self, ctx: &Context) -> Result<Box<dyn RunPlan>, BenchError>;

    /// The names its plan's [`RunPlan::kinds`] will have with these
    /// options, when they can be known without planning (no database, no
    /// input read): a campaign checks its cells' `assert` kinds with them
    /// before anything runs, and a run before it connects. Some(empty)
    /// for a benchmark whose users tell no kinds apart. None (the
    /// default) when only the plan knows them (replay's kinds are the
    /// most frequent classes of its log), or when the options are bad
    /// ([`Benchmark::check_options`] says why). A debug build checks,
    /// on every run, that the plan's kinds are these.
    fn known_kinds(&self, options: &OptValues) -> Option<Vec<String>> {
        let _ = options;
        None
    }

    /// The runs (and commands between them) that one request of it makes,
    /// in order, for a benchmark whose request is a series of runs
    /// (mysqlslap's engines, concurrency levels and iterations); the run
    /// layer's `sweep` carries them out. None (the default): one run.
    fn sweep(&self, options: &OptValues) -> Result<Option<Vec<SweepStep>>, BenchError> {
        let _ = options;
        Ok(None)
    }

    /// Its own section of the text report, read from the document.
    fn report_text(&self, doc: &RunDocument) -> Option<String> {
        let _ = doc;
        None
    }

    /// Its part of sysbench's final report, which sysbench's layout prints
    /// before "General statistics:" (sysbench's cpu test: `CPU speed:` and
    /// its events per second; fileio: its operations and throughput), read
    /// from the document. None (the default): sysbench prints nothing
    /// there for this test.
    fn sysbench_lead(&self, doc: &RunDocument) -> Option<String> {
        let _ = doc;
        None
    }

    /// Examples for its help page, as (what it does, the command line
    /// without `dbmeter`); empty (the default): the help shows a run of four
    /// clients for a minute (and a prepare, when it has one).
    fn examples(&self) -> Vec<(String, String)> {
        Vec::new()
    }

    /// The figures it is judged by, beyond events per second (e.g. NOPM),
    /// as (label, value), for one-line summaries.
    fn headline(&self, doc: &RunDocument) -> Vec<(String, f64)> {
        let _ = doc;
        Vec::new()
    }
}

/// The error for a command a benchmark does not have.
pub fn no_such_verb(b: &dyn Benchmark, verb: &str) -> BenchError {
    let have: Vec<String> = std::iter::once("run".to_string())
        .chain(b.verbs().into_iter().map(|v| v.name.to_string()))
        .collect();
    BenchError::Usage(format!(
        "{} has no {verb} command (its commands: {})",
        b.name(),
        have.join(", ")
    ))
}
