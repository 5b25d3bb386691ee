//! What a run measured.

use dbmeter_stats::{Counters, ErrorCounts, LatencyHistogram, LatencySummary};
use std::time::{Duration, SystemTime};

/// What the events of one kind did ([`crate::Tally::kind`]).
#[derive(Clone, Debug, Default)]
pub struct KindResult {
    /// Completed events, intended rollbacks included.
    pub events: u64,
    /// Completed events that rolled back as the workload intends.
    pub rolled_back: u64,
    /// Attempts restarted after an ignorable error (deadlocks, ...).
    pub retries: u64,
    /// Latency of the completed events.
    pub latency: LatencyHistogram,
}

impl KindResult {
    pub fn add(&mut self, o: &KindResult) {
        self.events += o.events;
        self.rolled_back += o.rolled_back;
        self.retries += o.retries;
        self.latency.merge(&o.latency);
    }
}

/// Adds `part` into `into`, kind by kind.
pub(crate) fn add_kinds(into: &mut Vec<KindResult>, part: &[KindResult]) {
    if into.len() < part.len() {
        into.resize_with(part.len(), KindResult::default);
    }
    for (a, b) in into.iter_mut().zip(part) {
        a.add(b);
    }
}

/// How a warm-up of [`crate::EngineConfig::auto_warmup`] ended.
#[derive(Clone, Debug, PartialEq)]
pub struct AutoWarmup {
    /// Its intervals' throughput (events per second), in order.
    pub series: Vec<f64>,
    /// The interval from which the throughput was steady (0-based index
    /// into `series`): the warm-up ended after the last of them. `None`:
    /// it never became steady and the warm-up ended at its limit (or the
    /// run ended first).
    pub steady_since: Option<usize>,
    /// The longest the warm-up could last.
    pub max: Duration,
    /// Length of one interval of `series`, in seconds.
    pub interval_s: f64,
}

/// Totals of one phase (warm-up or measurement).
#[derive(Clone, Debug, Default)]
pub struct PhaseResult {
    pub duration: Duration,
    pub counters: Counters,
    pub errors: ErrorCounts,
    /// Event latency: from the intended start when a rate is set, from the
    /// actual start otherwise.
    pub latency: LatencyHistogram,
    /// With a rate: latency from the actual start (service time).
    pub service: Option<LatencyHistogram>,
    /// Per kind of event, when the run tells kinds apart.
    pub kinds: Vec<KindResult>,
}

/// One point of the time series.
#[derive(Clone, Debug)]
pub struct IntervalSample {
    /// End of the interval, in seconds since the measurement started.
    pub t_s: f64,
    /// Length of the interval in seconds (the last one may be shorter).
    pub duration_s: f64,
    /// Users still running.
    pub threads: usize,
    /// With `EngineConfig::user_stages`: the users that ended (or failed)
    /// an event in the interval, as measured.
    pub active_users: Option<usize>,
    pub counters: Counters,
    /// The interval's errors by driver code (ignored, lost connections,
    /// timeouts, the error that failed the run), counted when they
    /// happened.
    pub errors: ErrorCounts,
    pub latency: LatencySummary,
    /// The interval's latency histogram, serialised
    /// ([`LatencyHistogram::to_base64`]): compact enough to keep one per
    /// interval of a long run, and mergeable with other processes'.
    pub histogram: String,
    /// With a rate: arrivals due but not started at the end of the interval.
    pub queue_length: Option<u64>,
    /// With a rate: users busy with an event at the end of the interval.
    pub concurrency: Option<usize>,
    /// With a rate: the mean lag, in milliseconds, of the interval's
    /// completed events (actual start minus intended start).
    pub lag_ms: Option<f64>,
    /// Per kind of event: completed events and intended rollbacks.
    pub kinds: Vec<KindCounts>,
}

/// One kind's counts in an interval.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KindCounts {
    pub events: u64,
    pub rolled_back: u64,
    pub retries: u64,
}

impl IntervalSample {
    pub fn per_sec(&self, n: u64) -> f64 {
        if self.duration_s > 0.0 {
            n as f64 / self.duration_s
        } else {
            0.0
        }
    }
}

/// One user's share of the measured phase (threads fairness).
#[derive(Clone, Copy, Debug, Default)]
pub struct UserTotals {
    pub events: u64,
    /// Errors of the user's events (ignored, lost connections, ...).
    pub errors: u64,
    /// Sum of the user's event latencies.
    pub busy: Duration,
}

/// With a rate: how well the database kept up.
#[derive(Clone, Copy, Debug, Default)]
pub struct RateResult {
    /// Requested events per second.
    pub target: f64,
    /// Largest backlog seen at an interval boundary.
    pub max_queue_length: u64,
    /// Arrivals due before the end that never started.
    pub unstarted_at_end: u64,
    /// The largest delay between an event's intended start (its arrival
    /// time) and its actual start, over the events that started in the
    /// measured phase (the warm-up is left out). Large when the users
    /// could not keep up with the rate.
    pub max_lag: Duration,
}

/// Why the run ended.
#[derive(Clone, Debug, PartialEq)]
pub enum EndReason {
    TimeLimit,
    EventLimit,
    /// Stopped by the user (Ctrl-C).
    Interrupted,
    /// Stopped by an error that is not ignorable, with its message. A user
    /// that could not reconnect within
    /// [`crate::EngineConfig::reconnect_timeout`] fails the run with a
    /// message like `lost the server at 3.2 s; 14 reconnect attempts
    /// failed: <the last reconnect error>`: the time is when that user
    /// found its connection lost, in seconds since the measurement started
    /// (`during the warm-up` when it was earlier), and the count is that
    /// user's failed attempts since then (other users' are not included).
    Failed(String),
    /// Every user finished its work ([`crate::Flow::UserDone`]) before any
    /// limit was reached and without a stop or an error.
    WorkDone,
}

#[derive(Clone, Debug)]
pub struct RunResult {
    pub threads: usize,
    /// The times when the users could not reach the server, in order.
    pub outages: Vec<crate::outage::OutageSample>,
    pub measured: PhaseResult,
    pub warmup: Option<PhaseResult>,
    /// With [`crate::EngineConfig::auto_warmup`]: how the warm-up ended.
    pub auto_warmup: Option<AutoWarmup>,
    pub intervals: Vec<IntervalSample>,
    pub users: Vec<UserTotals>,
    pub rate: Option<RateResult>,
    /// With a rate or the users' own schedules
    /// ([`crate::EngineConfig::own_schedule`]): the largest delay between
    /// an event's intended start and its actual start, over the events
    /// that started in the measured phase (the rate's is also
    /// [`RateResult::max_lag`]); None without either.
    pub max_lag: Option<Duration>,
    pub end: EndReason,
    /// Users still blocked on the server when the engine gave up waiting
    /// for them ([`crate::EngineConfig::abandon_after`]); their threads are
    /// left behind. Above 0, `end` is [`EndReason::Failed`], and the
    /// server should not be asked anything more (it does not answer).
    pub abandoned: usize,
    /// The wall-clock time the users were let go (after
    /// [`crate::EngineConfig::start_at`], when there is one).
    pub released_at: SystemTime,
}
