//! Engine settings.

use crate::profile::Profile;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

#[derive(Clone, Debug)]
pub struct EngineConfig {
    /// Number of virtual users.
    pub threads: usize,
    /// How the users share OS threads: `None` = a thread of its own for
    /// each user (blocking I/O); `Some(j)` = pgbench's `-j`: `j` threads
    /// (at most one per user), each running its block of the users as
    /// tasks of one poll loop (`dbmeter_coop`): their sockets are read
    /// and written without blocking and their waits are the loop's.
    pub jobs: Option<usize>,
    /// Measured duration; `None` = no time limit.
    pub time: Option<Duration>,
    /// Measured event count limit; `None` = no limit.
    pub events: Option<u64>,
    /// Warm-up before measuring; measured separately and left out of the results.
    pub warmup: Duration,
    /// `--warmup-time=auto[:MAX]`: the warm-up lasts until the throughput
    /// of its intervals has become steady ([`dbmeter_stats::steady`]),
    /// at most this long; `warmup` is then ignored. The time limit counts
    /// from the end of the warm-up.
    pub auto_warmup: Option<Duration>,
    /// Poisson arrival rate in events per second (all users together); `None` = as fast as possible.
    /// With [`EngineConfig::rate_stages`], the mean of the staged rate
    /// (what the run's rate figures compare with).
    pub rate: Option<f64>,
    /// `--rate-stages`: the arrival rate changes over the run, stage by
    /// stage (needs `rate`); the time line starts when the users are let go.
    pub rate_stages: Option<Arc<Profile>>,
    /// `--stages`: how many of the `threads` users are active over the
    /// run, stage by stage; a user beyond the level waits, connected, until
    /// the level reaches it, and finishes the event it is in when the level
    /// falls below it.
    pub user_stages: Option<Arc<Profile>>,
    /// With a rate: an arrival whose user takes it up more than this
    /// after its intended start is skipped (counted in
    /// `Counters::skipped`, and told to the user through
    /// [`crate::User::skipped`]) and the user takes the next one, as
    /// pgbench's `-L` does under `-R`; `None` = no arrival is skipped.
    pub late_limit: Option<Duration>,
    /// With a rate: the most arrivals that may be due and not yet started
    /// (sysbench's event queue holds 131,072). A backlog beyond it fails
    /// the run with [`crate::QUEUE_FULL`], as sysbench's full queue does;
    /// `None` = the backlog grows as it will and each late event's lag
    /// counts in its latency (dbmeter's way).
    pub queue_limit: Option<u64>,
    /// Length of one interval of the time series.
    pub interval: Duration,
    /// Percentiles computed for every interval.
    pub percentiles: Vec<f64>,
    /// Seed of the arrival schedule.
    pub seed: u64,
    /// How long to wait for events still running at the end of `time`
    /// before interrupting them; `None` = wait for them.
    pub forced_shutdown: Option<Duration>,
    /// How long to wait for running events after a stop request (Ctrl-C) before interrupting them.
    pub stop_grace: Duration,
    /// How long to wait for users still in an event after interrupting
    /// them (at `forced_shutdown` after the time limit, or `stop_grace`
    /// after a stop). Users that have not come back by then are left
    /// behind, blocked on a server that does not answer (its host
    /// vanished, or it hangs; the interrupt could not reach it either),
    /// and the run ends with [`crate::EndReason::Failed`]: the engine
    /// returns without them ([`crate::RunResult::abandoned`]).
    pub abandon_after: Duration,
    /// The users give their own intended starts
    /// ([`crate::User::intended_start`]), each its own schedule (a
    /// replayed session's recorded times): an event waits for its intended
    /// start, its latency counts from it (so a server that falls behind
    /// is not hidden by the wait, no coordinated omission), its service
    /// time from its actual start is kept apart, and the lag behind the
    /// schedule is measured ([`crate::RunResult::max_lag`], the intervals'
    /// mean lag). Ignored with a rate, whose shared schedule comes first.
    pub own_schedule: bool,
    /// Kinds of events the workload tells apart ([`crate::Tally::kind`]);
    /// 0 = no per-kind statistics.
    pub kinds: usize,
    /// Users open their connections at most this many per second (user i
    /// starts connecting i / rate seconds after the first); `None` = all
    /// at once. Spares a server (or a connection pooler, or a firewall)
    /// that drops bursts of thousands of connects.
    pub connect_rate: Option<f64>,
    /// How long a user keeps trying to reconnect after it lost its
    /// connection. When its reconnect attempts have kept failing for longer
    /// than this (counted from the moment the loss was found), the run
    /// stops with [`crate::EndReason::Failed`]. A time limit that comes
    /// first still ends the run normally.
    pub reconnect_timeout: Duration,
    /// When the users are let go (wall clock): they connect and set up
    /// first, then wait for it, so that processes started apart (shards)
    /// begin together. A time already past lets them go at once. None:
    /// as soon as they are ready.
    pub start_at: Option<SystemTime>,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            threads: 1,
            jobs: None,
            time: Some(Duration::from_secs(10)),
            events: None,
            warmup: Duration::ZERO,
            auto_warmup: None,
            rate: None,
            rate_stages: None,
            user_stages: None,
            late_limit: None,
            queue_limit: None,
            interval: Duration::from_secs(1),
            percentiles: vec![50.0, 95.0, 99.0, 99.9],
            seed: 1,
            forced_shutdown: Some(Duration::from_secs(1)),
            stop_grace: Duration::from_millis(300),
            abandon_after: Duration::from_secs(10),
            own_schedule: false,
            kinds: 0,
            connect_rate: None,
            reconnect_timeout: Duration::from_secs(5),
            start_at: None,
        }
    }
}
