//! The record of a run beyond its measurements: the environment, the
//! server's facts and counters, OS statistics during the run, warnings.
//! Nothing here fails a run: what cannot be collected becomes a warning.

use crate::settings;
use dbmeter_benchmarks::options::OptValues;
use dbmeter_db::{ConnectOptions, Connection, DbError, PidHint, Target, is_local};
use dbmeter_engine::EngineConfig;
use dbmeter_env::record::masked;
use dbmeter_env::warnings::{self, Checks};
use dbmeter_env::{
    BuildInfo, CounterRecord, Environment, Sampler, ServerRecord, TableSize, Warning, process,
};
use dbmeter_result::RunDocument;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn collection(what: &str, e: impl std::fmt::Display) -> Warning {
    Warning::new("collection", format!("could not read {what}: {e}"))
}

/// The server process on this machine, if it runs here.
fn server_pid(target: &Target, hint: &PidHint) -> Option<u32> {
    let (Target::Mysql(t) | Target::Postgres(t)) = target else {
        return None;
    };
    if !is_local(target) {
        return None;
    }
    let named = |pid: u32, names: &[&str]| {
        process::comm(pid).is_some_and(|c| names.iter().any(|n| c.contains(n)))
    };
    let by_hint = match hint {
        PidHint::File(f) => {
            process::pid_from_file(f).filter(|p| named(*p, &["mysqld", "mariadbd"]))
        }
        // Only when our backend is visible here (not in a container).
        PidHint::ChildOf(backend) if named(*backend, &["postgres", "postmaster"]) => {
            process::parent(*backend).filter(|p| named(*p, &["postgres", "postmaster"]))
        }
        _ => None,
    };
    by_hint.or_else(|| {
        if t.socket.is_some() {
            None
        } else {
            process::listener_pid(t.port(0))
        }
    })
}

/// The server's facts and its counters, read on one connection.
pub struct ServerFacts {
    pub record: ServerRecord,
    pub counters: BTreeMap<String, String>,
    /// Sessions on the database (PostgreSQL), to wait for after a run.
    pub sessions: u64,
    /// Other clients' sessions busy with a statement right now.
    pub active_sessions: u64,
    pub warnings: Vec<Warning>,
}

fn read_facts(connect: &ConnectOptions) -> Result<ServerFacts, DbError> {
    let mut c = Connection::connect(connect)?;
    let mut warnings = Vec::new();
    let mut record = ServerRecord {
        version: c.server_version(),
        ..ServerRecord::default()
    };
    match c.server_variables() {
        Ok(v) => {
            record.variables = v
                .into_iter()
                .map(|(k, v)| {
                    let v = masked(&k, v);
                    (k, v)
                })
                .collect()
        }
        Err(e) => warnings.push(collection("the server's variables", e)),
    }
    match c.datadir() {
        Ok(d) => record.datadir = d,
        Err(e) => warnings.push(collection("the server's data directory", e)),
    }
    match c.pid_hint() {
        Ok(h) => record.pid = server_pid(&connect.target, &h),
        Err(e) => warnings.push(collection("the server's process", e)),
    }
    match c.table_stats() {
        Ok(t) => {
            record.tables = t
                .into_iter()
                .map(|t| TableSize {
                    name: t.name,
                    rows: t.rows,
                    data_bytes: t.data_bytes,
                    index_bytes: t.index_bytes,
                    total_bytes: t.total_bytes,
                })
                .collect()
        }
        Err(e) => warnings.push(collection("the table sizes", e)),
    }
    if let Ok(Some(b)) = c.database_bytes() {
        record
            .variables
            .insert("database_bytes".into(), b.to_string());
    }
    let counters = match c.server_counters() {
        Ok(m) => m,
        Err(e) => {
            warnings.push(collection("the server's counters", e));
            BTreeMap::new()
        }
    };
    let sessions = c.other_sessions().unwrap_or(0);
    let active_sessions = c.active_other_sessions().unwrap_or(0);
    Ok(ServerFacts {
        record,
        counters,
        sessions,
        active_sessions,
        warnings,
    })
}

/// Reads the server's facts; a failure becomes a warning.
pub fn server_facts(connect: &ConnectOptions) -> Result<ServerFacts, Warning> {
    let c = connect.clone();
    match within_timeout(move || read_facts(&c)) {
        Some(Ok(f)) => Ok(f),
        Some(Err(e)) => Err(collection("the server's facts", e)),
        None => Err(collection("the server's facts", "no answer in 30 s")),
    }
}

/// Runs `job` on a thread of its own and waits for it at most [`TIMEOUT`].
/// A blocking driver cannot be cancelled: on a hung server the thread is
/// left behind and ends with the process.
fn within_timeout<T: Send + 'static>(job: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("dbmeter-facts".into())
        .spawn(move || {
            let _ = tx.send(job());
        })
        .ok()?;
    rx.recv_timeout(TIMEOUT).ok()
}

/// How long collecting facts or counters may take: a hung server must not
/// hang dbmeter after its run.
const TIMEOUT: Duration = Duration::from_secs(30);

/// The environment, with the storage under the server's data directory
/// when the server is local.
pub fn environment(target: Option<&Target>, server: Option<&ServerRecord>) -> Environment {
    let datadir = match (target, server.and_then(|s| s.datadir.as_deref())) {
        (Some(t), Some(d)) if is_local(t) => Some(Path::new(d)),
        _ => None,
    };
    Environment::collect_for(datadir)
}

/// What the OS sampler measures as the database's size: a local server's
/// data directory, or the SQLite file.
fn data_path(target: Option<&Target>, server: Option<&ServerRecord>) -> Option<PathBuf> {
    match target? {
        Target::Sqlite { path, .. } => Some(path.clone()),
        t if is_local(t) => server?
            .datadir
            .as_deref()
            .filter(|d| !d.is_empty())
            .map(PathBuf::from),
        _ => None,
    }
}

/// File descriptors one connection takes.
pub fn fds_per_connection(target: Option<&Target>) -> usize {
    match target {
        Some(Target::Sqlite { .. }) => 3,
        Some(_) => 1,
        None => 0,
    }
}

/// Started before the run, finished after it.
pub(crate) struct Recorder {
    environment: Environment,
    server: Option<ServerRecord>,
    before: Option<BTreeMap<String, String>>,
    /// When the counters were read before the run.
    before_at: std::time::Instant,
    sessions_before: u64,
    active_before: u64,
    connect: Option<ConnectOptions>,
    warnings: Vec<Warning>,
    sampler: Sampler,
    /// The server's wait events during the measured phase (not SQLite).
    waits: Option<crate::waits::WaitSampler>,
}

/// The counters read after a run, and how many other clients' sessions
/// were busy then.
struct After {
    counters: BTreeMap<String, String>,
    read_at: std::time::Instant,
    active_sessions: u64,
}

impl Recorder {
    /// Collects the facts and starts the OS sampler; `warn` gets each
    /// warning found so far.
    pub(crate) fn start(
        o: &OptValues,
        target: Option<&Target>,
        engine: &EngineConfig,
        warn: &dyn Fn(&Warning),
        server_optional: bool,
    ) -> Recorder {
        let connect = target.map(|t| settings::connect_options(o, t.clone()));
        let mut warnings = Vec::new();
        let mut server = None;
        let mut before = None;
        let mut sessions_before = 0;
        let mut active_before = 0;
        let before_at = std::time::Instant::now();
        if let Some(c) = &connect {
            match server_facts(c) {
                Ok(f) => {
                    warnings.extend(f.warnings);
                    if !matches!(c.target, Target::Sqlite { .. }) {
                        before = Some(f.counters);
                    }
                    sessions_before = f.sessions;
                    active_before = f.active_sessions;
                    server = Some(f.record);
                }
                Err(w) if !server_optional => warnings.push(w),
                Err(_) => {}
            }
        }
        let environment = environment(target, server.as_ref());
        warnings.extend(warnings::check(&Checks {
            env: &environment,
            threads: engine.threads,
            os_threads: engine
                .jobs
                .map_or(engine.threads, |j| j.clamp(1, engine.threads.max(1))),
            fds_per_connection: fds_per_connection(target),
            time_s: engine.time.map(|d| d.as_secs_f64()),
            // An automatic warm-up's limit is no length to warn about.
            warmup_s: engine.warmup.as_secs_f64(),
            server: server.as_ref(),
        }));
        for w in &warnings {
            warn(w);
        }
        let pid = server.as_ref().and_then(|s| s.pid);
        let data = data_path(target, server.as_ref());
        let waits = match (&connect, &server) {
            (Some(c), Some(_)) => crate::waits::WaitSampler::start(c),
            _ => None,
        };
        Recorder {
            environment,
            server,
            before,
            before_at,
            sessions_before,
            active_before,
            connect,
            warnings,
            sampler: Sampler::start(engine.interval, pid, data),
            waits,
        }
    }

    /// The local server's main process, when it runs on this machine.
    pub(crate) fn server_pid(&self) -> Option<u32> {
        self.server.as_ref().and_then(|s| s.pid)
    }

    /// A flag to raise when the measured phase starts (the wait-event
    /// sampler counts from then on); None without a sampler.
    pub(crate) fn measuring_flag(&self) -> Option<std::sync::Arc<std::sync::atomic::AtomicBool>> {
        self.waits.as_ref().map(crate::waits::WaitSampler::flag)
    }

    /// Stops the sampler, reads the counters again and puts everything
    /// into the document; `warn` gets each new warning. `server_gone`:
    /// the run left users behind on a server that did not answer, so it
    /// is not asked for its counters (the document says so; the run's
    /// failure already tells the user).
    pub(crate) fn finish(self, doc: &mut RunDocument, server_gone: bool, warn: &dyn Fn(&Warning)) {
        let os = self.sampler.finish();
        let waits = self.waits.map(crate::waits::WaitSampler::finish);
        let mut warnings = self.warnings;
        let mut late = Vec::new();
        if let Some(w) = warnings::steal(&os) {
            late.push(w);
        }
        let counters = match (self.before, &self.connect) {
            (Some(_), Some(_)) if server_gone => {
                warnings.push(collection(
                    "the server's counters after the run",
                    "the server did not answer at the end of the run",
                ));
                None
            }
            (Some(before), Some(c)) => match within_timeout({
                let (c, sessions) = (c.clone(), self.sessions_before);
                move || counters_after(&c, sessions)
            }) {
                Some(Ok(after)) => {
                    let elapsed = after.read_at.duration_since(self.before_at);
                    let mut record =
                        CounterRecord::new(before, after.counters, elapsed.as_secs_f64());
                    record.other_sessions = self.active_before.max(after.active_sessions);
                    if record.restarted {
                        late.push(Warning::new(
                            "counters",
                            "the server restarted during the run: its counters cannot be compared across the restart, so their deltas are left out",
                        ));
                    }
                    if record.other_sessions > 0 {
                        late.push(Warning::new(
                            "counters",
                            format!(
                                "{} other sessions were busy on the server around the run: its global counters include their work",
                                record.other_sessions
                            ),
                        ));
                    }
                    Some(record)
                }
                Some(Err(e)) => {
                    late.push(collection("the server's counters after the run", e));
                    None
                }
                None => {
                    late.push(collection(
                        "the server's counters after the run",
                        "no answer in 30 s",
                    ));
                    None
                }
            },
            _ => None,
        };
        for w in &late {
            warn(w);
        }
        warnings.extend(late);
        let build = BuildInfo::current();
        doc.dbmeter.commit = build.commit;
        doc.dbmeter.rustc = build.rustc;
        doc.environment = self.environment;
        doc.server = self.server;
        doc.counters = counters;
        doc.os = Some(os);
        doc.waits = waits;
        doc.warnings = warnings;
    }
}

/// The counters once the server has published the run's statistics
/// (PostgreSQL: when its sessions end), waiting at most 3 s for that.
fn counters_after(connect: &ConnectOptions, sessions_before: u64) -> Result<After, DbError> {
    let mut c = Connection::connect(connect)?;
    c.settle_statistics(sessions_before, Duration::from_secs(3))?;
    let counters = c.server_counters()?;
    Ok(After {
        counters,
        read_at: std::time::Instant::now(),
        active_sessions: c.active_other_sessions().unwrap_or(0),
    })
}
