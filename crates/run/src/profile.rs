//! `--profile-server`: the local server's CPU profile during the measured
//! phase, by `perf record` on its processes (dbmeter_env::profile), started
//! when the measurement starts and stopped when it ends.

use dbmeter_db::Target;
use dbmeter_env::{ProfileRecord, Profiler};

/// A running profiler, or the record of why there is none.
pub(crate) type Started = Result<Profiler, ProfileRecord>;

/// What to profile: the local server's main process, or why nothing.
pub(crate) fn server(target: Option<&Target>, pid: Option<u32>) -> Result<u32, &'static str> {
    match (target, pid) {
        (Some(Target::Sqlite { .. }) | None, _) => Err(
            "--profile-server: SQLite runs inside dbmeter, there is no server process to profile",
        ),
        (_, Some(pid)) => Ok(pid),
        (_, None) => Err(
            "--profile-server: the server's process is not on this machine (or was not found), so it was not profiled",
        ),
    }
}

/// Starts perf on the server's processes, or keeps why not.
pub(crate) fn start(server: Result<u32, &'static str>) -> Started {
    match server {
        Ok(pid) => Profiler::start(pid),
        Err(why) => Err(ProfileRecord {
            tool: "perf".into(),
            note: Some(why.into()),
            ..ProfileRecord::default()
        }),
    }
}

/// Stops the profiler and returns what it found.
pub(crate) fn finish(started: Started) -> ProfileRecord {
    match started {
        Ok(p) => p.finish(),
        Err(r) => r,
    }
}
