//! The record of a run beyond its measurements: the environment, the
//! server's facts and counters, OS statistics during the run, warnings.
//! Nothing here fails a run: what cannot be collected becomes a warning.

use super::block_on;
use crate::setup;
use dbmeter_db::{ConnectOptions, Connection, DbError, PidHint, Target, is_local};
use dbmeter_engine::EngineConfig;
use dbmeter_env::record::masked;
use dbmeter_env::warnings::{self, Checks};
use dbmeter_env::{
    BuildInfo, CounterRecord, Environment, Sampler, ServerRecord, TableSize, Warning, process,
};
use dbmeter_report::RunReport;
use dbmeter_workloads::options::OptValues;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// Prints a warning the way every warning is printed: on stderr.
pub(crate) fn print_warning(w: &Warning) {
    eprintln!("WARNING: {}", w.message);
}

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
pub(crate) struct ServerFacts {
    pub record: ServerRecord,
    pub counters: BTreeMap<String, String>,
    pub sessions: u64,
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
    Ok(ServerFacts {
        record,
        counters,
        sessions,
        warnings,
    })
}

/// Reads the server's facts; a failure becomes a warning.
pub(crate) fn server_facts(connect: &ConnectOptions) -> Result<ServerFacts, Warning> {
    let c = connect.clone();
    match within_timeout(move || block_on(read_facts(&c))) {
        Some(Ok(Ok(f))) => Ok(f),
        Some(Ok(Err(e))) => Err(collection("the server's facts", e)),
        None => Err(collection("the server's facts", "no answer in 30 s")),
        Some(Err(e)) => Err(collection("the server's facts", e)),
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
pub(crate) fn environment(target: Option<&Target>, server: Option<&ServerRecord>) -> Environment {
    let datadir = match (target, server.and_then(|s| s.datadir.as_deref())) {
        (Some(t), Some(d)) if is_local(t) => Some(Path::new(d)),
        _ => None,
    };
    Environment::collect_for(datadir)
}

/// File descriptors one connection takes.
pub(crate) fn fds_per_connection(target: Option<&Target>) -> usize {
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
    sessions_before: u64,
    connect: Option<ConnectOptions>,
    warnings: Vec<Warning>,
    sampler: Sampler,
}

impl Recorder {
    /// Collects the facts, prints the warnings and starts the OS sampler.
    pub(crate) fn start(o: &OptValues, target: Option<&Target>, engine: &EngineConfig) -> Recorder {
        let connect = target.map(|t| setup::connect_options(o, t.clone()));
        let mut warnings = Vec::new();
        let mut server = None;
        let mut before = None;
        let mut sessions_before = 0;
        if let Some(c) = &connect {
            match server_facts(c) {
                Ok(f) => {
                    warnings.extend(f.warnings);
                    if !matches!(c.target, Target::Sqlite { .. }) {
                        before = Some(f.counters);
                    }
                    sessions_before = f.sessions;
                    server = Some(f.record);
                }
                Err(w) => warnings.push(w),
            }
        }
        let environment = environment(target, server.as_ref());
        warnings.extend(warnings::check(&Checks {
            env: &environment,
            threads: engine.threads,
            fds_per_connection: fds_per_connection(target),
            time_s: engine.time.map(|d| d.as_secs_f64()),
            warmup_s: engine.warmup.as_secs_f64(),
            server: server.as_ref(),
        }));
        for w in &warnings {
            print_warning(w);
        }
        let pid = server.as_ref().and_then(|s| s.pid);
        Recorder {
            environment,
            server,
            before,
            sessions_before,
            connect,
            warnings,
            sampler: Sampler::start(engine.interval, pid),
        }
    }

    /// Stops the sampler, reads the counters again and puts everything
    /// into the report.
    pub(crate) fn finish(self, report: &mut RunReport) {
        let os = self.sampler.finish();
        let mut warnings = self.warnings;
        let mut late = Vec::new();
        if let Some(w) = warnings::steal(&os) {
            late.push(w);
        }
        let counters = match (self.before, &self.connect) {
            (Some(before), Some(c)) => match within_timeout({
                let (c, sessions) = (c.clone(), self.sessions_before);
                move || block_on(counters_after(&c, sessions))
            }) {
                Some(Ok(Ok(after))) => Some(CounterRecord::new(before, after)),
                Some(Ok(Err(e))) => {
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
                Some(Err(e)) => {
                    late.push(collection("the server's counters after the run", e));
                    None
                }
            },
            _ => None,
        };
        for w in &late {
            print_warning(w);
        }
        warnings.extend(late);
        let build = BuildInfo::current();
        report.dbmeter.commit = build.commit;
        report.dbmeter.rustc = build.rustc;
        report.environment = self.environment;
        report.server = self.server;
        report.counters = counters;
        report.os = Some(os);
        report.warnings = warnings;
    }
}

/// The counters once the server has published the run's statistics
/// (PostgreSQL: when its sessions end), waiting at most 3 s for that.
fn counters_after(
    connect: &ConnectOptions,
    sessions_before: u64,
) -> Result<BTreeMap<String, String>, DbError> {
    let mut c = Connection::connect(connect)?;
    c.settle_statistics(sessions_before, Duration::from_secs(3))?;
    c.server_counters()
}
