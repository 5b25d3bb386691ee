//! `--profile-server`: the local server's CPU profile during the measured
//! phase, by `perf record` on its processes (dbmeter_env::profile), started
//! when the measurement starts and stopped when it ends.

use dbmeter_env::{ProfileRecord, Profiler};

/// A running profiler, or the record of why there is none.
pub(crate) type Started = Result<Profiler, ProfileRecord>;

/// Starts perf on `server`'s processes; a server that is not on this
/// machine (or whose process was not found) cannot be profiled.
pub(crate) fn start(server: Option<u32>) -> Started {
    match server {
        Some(pid) => Profiler::start(pid),
        None => Err(ProfileRecord {
            tool: "perf".into(),
            note: Some(
                "--profile-server: the server's process is not on this machine (or was not found), so it was not profiled"
                    .into(),
            ),
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
