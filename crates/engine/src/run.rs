//! Running the virtual users and collecting what they measure.

use crate::arrivals::{DueCounter, Rate, Schedule};
use crate::clock::Ticks;
use crate::collector::{Slot, SlotStats, add_into, add_user_totals};
use crate::config::EngineConfig;
use crate::result::{
    AutoWarmup, EndReason, IntervalSample, KindCounts, PhaseResult, RateResult, RunResult,
    UserTotals, add_kinds,
};
use crate::user::{EventError, Flow, Interrupter, Tally, User, UserFactory};
use dbmeter_stats::LatencySummary;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::mpsc;
use std::sync::{Arc, Barrier, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

/// Stops a run from another thread (e.g. a Ctrl-C handler). The run keeps
/// and returns what it measured.
#[derive(Clone, Debug, Default)]
pub struct StopHandle(Arc<AtomicBool>);

impl StopHandle {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn stop(&self) {
        self.0.store(true, Relaxed);
    }
    pub fn is_stopped(&self) -> bool {
        self.0.load(Relaxed)
    }
}

/// The run could not start.
#[derive(Debug, Clone, PartialEq)]
pub enum EngineError {
    /// Users could not be created (e.g. a connection failed); the first
    /// message and how many users failed.
    Setup { message: String, failed: usize },
    /// The engine could not start its threads.
    Runtime(String),
}

impl std::fmt::Display for EngineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EngineError::Setup { message, failed } if *failed > 1 => {
                write!(f, "{message} (and {} more connections failed)", failed - 1)
            }
            EngineError::Setup { message, .. } => write!(f, "{message}"),
            EngineError::Runtime(m) => write!(f, "cannot start the load engine: {m}"),
        }
    }
}

impl std::error::Error for EngineError {}

/// The first wait between reconnect attempts; it doubles after every
/// failed attempt, up to `RECONNECT_MAX_BACKOFF`.
const RECONNECT_FIRST_BACKOFF: Duration = Duration::from_millis(10);
const RECONNECT_MAX_BACKOFF: Duration = Duration::from_secs(1);
/// How often the collector looks at stop requests and finished users.
const POLL: Duration = Duration::from_millis(20);
/// How often the wait for [`EngineConfig::start_at`] looks at the stop
/// handle (the last step sleeps exactly until the start).
const START_POLL: Duration = Duration::from_millis(50);

/// Why a run with [`EngineConfig::queue_limit`] failed: its users could not
/// keep up with the rate (sysbench's words for its full event queue).
pub const QUEUE_FULL: &str = "The event queue is full. This means the worker threads are unable \
                              to keep up with the specified event generation rate";
/// The run's last interval, when shorter than this part of an interval,
/// is folded into the one before it.
const SHORTEST_LAST: f64 = 0.1;

/// Users open at most this many connections at once. A thousand connects
/// in the same instant overflow a server's listen queue (MariaDB's
/// back_log is 50 + max_connections / 5): the kernel then drops the
/// handshake's last packets and the unlucky connections wait for
/// retransmissions, up to half a minute. 32 at a time stays under every
/// default queue and still opens 1,024 connections in about half a second
/// (measured against a local MariaDB).
const CONNECTS_IN_FLIGHT: usize = 32;

/// Moments of the run, in clock ticks. Under an automatic warm-up the
/// measurement's start and the time limit are not known when the users
/// are let go: the collector sets them when the warm-up ends.
struct Timing {
    begin: u64,
    measure_start: AtomicU64,
    deadline: AtomicU64,
}

/// `Timing::deadline`: the run has no time limit.
const NO_DEADLINE: u64 = u64::MAX;
/// `Timing::deadline` and `Timing::measure_start`: not known yet (an
/// automatic warm-up goes on).
const NOT_YET: u64 = u64::MAX - 1;

impl Timing {
    fn new(begin: u64, measure_start: Option<u64>, deadline: Option<u64>) -> Timing {
        Timing {
            begin,
            measure_start: AtomicU64::new(measure_start.unwrap_or(NOT_YET)),
            deadline: AtomicU64::new(match (measure_start, deadline) {
                (None, _) => NOT_YET,
                (Some(_), d) => d.unwrap_or(NO_DEADLINE),
            }),
        }
    }

    /// When the measurement starts (a tick later than any while the
    /// warm-up goes on).
    fn measure_start(&self) -> u64 {
        self.measure_start.load(Relaxed)
    }

    /// The time limit, when there is one and it is known.
    fn deadline(&self) -> Option<u64> {
        match self.deadline.load(Relaxed) {
            NO_DEADLINE | NOT_YET => None,
            d => Some(d),
        }
    }

    /// Whether the time limit is still to be set (an automatic warm-up
    /// goes on).
    fn deadline_pending(&self) -> bool {
        self.deadline.load(Relaxed) == NOT_YET
    }

    /// The warm-up ended at `at`: the measurement starts, and lasts until
    /// `deadline` (None: no time limit).
    fn start_measuring(&self, at: u64, deadline: Option<u64>) {
        self.deadline
            .store(deadline.unwrap_or(NO_DEADLINE), Relaxed);
        self.measure_start.store(at, Relaxed);
    }
}

struct Shared {
    ticks: Ticks,
    stop: AtomicBool,
    /// Some user could not be created: the run does not start.
    setup_failed: AtomicBool,
    timing: OnceLock<Timing>,
    started: AtomicU64,
    max_events: u64,
    event_limit_hit: AtomicBool,
    arrivals: Option<Mutex<Schedule>>,
    /// Arrivals taken by users so far (with a rate).
    taken: AtomicU64,
    /// The collector's count of due arrivals (with a rate).
    due: Option<Mutex<DueCounter>>,
    in_event: AtomicUsize,
    live: AtomicUsize,
    fatal: Mutex<Option<String>>,
    last_exit: Mutex<Option<u64>>,
    /// Users that stopped because their work was done, before any limit.
    work_done: AtomicUsize,
    /// With a rate: the largest lag (actual start minus intended start), in
    /// nanoseconds, of the events that started in the measured phase.
    max_lag_ns: AtomicU64,
    /// See `EngineConfig::reconnect_timeout`.
    reconnect_timeout: Duration,
    /// See `EngineConfig::late_limit` (with a rate only).
    late_limit: Option<Duration>,
    /// The users give their own intended starts (`EngineConfig::own_schedule`,
    /// without a rate).
    own_schedule: bool,
    /// See `EngineConfig::user_stages`.
    user_stages: Option<Arc<crate::profile::Profile>>,
    /// The times when the users could not reach the server.
    outages: crate::outage::Outages,
    slots: Vec<Slot>,
}

/// The run's arrival rate, if it has one.
fn rate_of(cfg: &EngineConfig) -> Option<Rate> {
    match (&cfg.rate_stages, cfg.rate) {
        (Some(p), _) => Some(Rate::Staged(p.clone())),
        (None, Some(r)) => Some(Rate::Constant(r)),
        (None, None) => None,
    }
}

impl Shared {
    /// Records that a user finished now (the run ends with the last one).
    fn mark_exit(&self) {
        let now = self.ticks.now();
        let mut last = self.last_exit.lock();
        if last.is_none_or(|l| l < now) {
            *last = Some(now);
        }
    }

    /// Arrivals due but not yet started, `at` ticks into the run.
    fn backlog(&self, at: u64) -> Option<u64> {
        let (due, timing) = (self.due.as_ref()?, self.timing.get()?);
        let due = due.lock().due(self.ticks.secs(timing.begin, at));
        Some(due.saturating_sub(self.taken.load(Relaxed)))
    }

    fn fail(&self, message: String) {
        let mut f = self.fatal.lock();
        if f.is_none() {
            *f = Some(message);
        }
        self.stop.store(true, Relaxed);
    }

    /// Fails the run for users left behind: after the error that stopped
    /// it, if any.
    fn fail_abandoned(&self, message: String) {
        let mut f = self.fatal.lock();
        *f = Some(match f.take() {
            Some(first) => format!("{first}; then {message}"),
            None => message,
        });
        self.stop.store(true, Relaxed);
    }
}

/// Marks a user as finished even if it panics.
struct ExitGuard {
    shared: Arc<Shared>,
    done: mpsc::Sender<()>,
}

impl Drop for ExitGuard {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.shared
                .fail("internal error: a virtual user panicked".into());
        }
        if std::thread::panicking() {
            self.shared.mark_exit();
        }
        self.shared.live.fetch_sub(1, Relaxed);
        let _ = self.done.send(());
    }
}

/// Runs the users of `factory` as `cfg` says, calling `on_interval` at the
/// end of every full interval, and returns everything measured. A stop
/// request, a fatal error or a limit ends the run; the result is returned
/// in every case once the users are running.
pub fn run(
    cfg: &EngineConfig,
    factory: Arc<dyn UserFactory>,
    stop: &StopHandle,
    on_interval: &mut dyn FnMut(&IntervalSample),
) -> Result<RunResult, EngineError> {
    run_observed(cfg, factory, stop, on_interval, &mut || {})
}

/// [`run`], calling `on_measure_start` (on the calling thread) when the
/// measurement begins: at the end of the warm-up, or without one just
/// before the users are let go (so no event precedes it). Workloads that read counters from the database take their
/// first reading there.
pub fn run_observed(
    cfg: &EngineConfig,
    factory: Arc<dyn UserFactory>,
    stop: &StopHandle,
    on_interval: &mut dyn FnMut(&IntervalSample),
    on_measure_start: &mut dyn FnMut(),
) -> Result<RunResult, EngineError> {
    let n = cfg.threads.max(1);
    let own_schedule = cfg.own_schedule && cfg.rate.is_none();
    let with_service = cfg.rate.is_some() || own_schedule;
    let ticks = Ticks::new();
    let shared = Arc::new(Shared {
        ticks: ticks.clone(),
        stop: AtomicBool::new(false),
        setup_failed: AtomicBool::new(false),
        timing: OnceLock::new(),
        started: AtomicU64::new(0),
        max_events: cfg.events.unwrap_or(0),
        event_limit_hit: AtomicBool::new(false),
        arrivals: rate_of(cfg).map(|r| Mutex::new(Schedule::new(r, cfg.seed ^ 0x5eed_a441))),
        taken: AtomicU64::new(0),
        due: rate_of(cfg).map(|r| Mutex::new(DueCounter::new(r, cfg.seed ^ 0x5eed_a441))),
        user_stages: cfg.user_stages.clone(),
        in_event: AtomicUsize::new(0),
        live: AtomicUsize::new(n),
        fatal: Mutex::new(None),
        last_exit: Mutex::new(None),
        work_done: AtomicUsize::new(0),
        max_lag_ns: AtomicU64::new(0),
        reconnect_timeout: cfg.reconnect_timeout,
        late_limit: cfg.late_limit.filter(|_| cfg.rate.is_some()),
        own_schedule,
        outages: crate::outage::Outages::new(n),
        slots: (0..n).map(|_| Slot::new(with_service, cfg.kinds)).collect(),
    });
    let (done_tx, done_rx) = mpsc::channel();
    let os_threads = cfg.jobs.map_or(n, |j| j.clamp(1, n));
    let parties = os_threads + 1;
    let created = Arc::new(Barrier::new(parties));
    let go = Arc::new(Barrier::new(parties));
    let setup_errors: Arc<Mutex<Vec<String>>> = Arc::default();
    let interrupters: Arc<Mutex<Vec<(usize, Interrupter)>>> = Arc::default();
    let launch = Launch {
        shared: shared.clone(),
        connecting: Turns::new(CONNECTS_IN_FLIGHT),
        connect_pace: cfg
            .connect_rate
            .filter(|r| *r > 0.0 && r.is_finite())
            .map(|r| (Instant::now(), r)),
        created: created.clone(),
        go: go.clone(),
        setup_errors: setup_errors.clone(),
        interrupters: interrupters.clone(),
        done: done_tx,
    };
    // A job of one user is a thread of its own: it blocks on its socket
    // instead of going through a poll loop for nothing to share.
    let handles = match cfg.jobs {
        Some(_) if os_threads < n => launch_jobs(n, os_threads, factory, launch)?,
        _ => launch_threads(n, factory, launch)?,
    };

    created.wait();
    {
        let errors = setup_errors.lock();
        if let Some(first) = errors.first() {
            let err = EngineError::Setup {
                message: first.clone(),
                failed: errors.len(),
            };
            drop(errors);
            shared.setup_failed.store(true, Relaxed);
            go.wait();
            join_all(handles);
            return Err(err);
        }
    }
    // Everyone is connected: wait for the common start, if any (a stop
    // request ends the wait; the run then stops at once).
    if let Some(at) = cfg.start_at {
        while let Ok(left) = at.duration_since(SystemTime::now()) {
            if stop.is_stopped() || left.is_zero() {
                break;
            }
            std::thread::sleep(left.min(START_POLL));
        }
    }
    // Without a warm-up the measurement starts with the users: readings
    // taken at its start (a benchmark's counters) come before any user
    // is let go, so that no event slips in ahead of them.
    let fixed_warmup = if cfg.auto_warmup.is_some() {
        Duration::ZERO
    } else {
        cfg.warmup
    };
    if cfg.warmup.is_zero() && cfg.auto_warmup.is_none() {
        on_measure_start();
    }
    let begin = ticks.now();
    // Under an automatic warm-up both are set when it ends.
    let mut measure_start = ticks.add(begin, fixed_warmup);
    let mut deadline = cfg
        .time
        .filter(|_| cfg.auto_warmup.is_none())
        .map(|t| ticks.add(measure_start, t));
    let _ = shared.timing.set(Timing::new(
        begin,
        cfg.auto_warmup.is_none().then_some(measure_start),
        deadline,
    ));
    let released_at = SystemTime::now();
    go.wait();

    let interrupters = std::mem::take(&mut *interrupters.lock());
    let mut c = Collector {
        cfg,
        shared: &shared,
        users: vec![UserTotals::default(); n],
        rate: cfg.rate.map(|target| RateResult {
            target,
            ..Default::default()
        }),
        index: 0,
        begin,
        threads_at_start: n,
        intervals: Vec::new(),
        last: None,
        spare: (0..n)
            .map(|_| SlotStats::fresh(with_service, cfg.kinds))
            .collect(),
        active: 0,
    };
    let tick = cfg.interval.max(Duration::from_millis(10));
    let mut warmup: Option<PhaseResult> = None;
    let mut measured = PhaseResult::default();
    let mut in_warmup = !fixed_warmup.is_zero() || cfg.auto_warmup.is_some();
    let mut interval_start = measure_start;
    // The automatic warm-up's intervals and what they measured so far.
    let mut auto = cfg.auto_warmup.map(|max| AutoWarmup {
        series: Vec::new(),
        steady_since: None,
        max,
        interval_s: tick.as_secs_f64(),
    });
    let mut warm = PhaseResult::default();
    let mut boundary = if auto.is_some() {
        interval_start = begin;
        ticks.add(begin, tick)
    } else if in_warmup {
        measure_start
    } else {
        ticks.add(measure_start, tick)
    };
    let mut stop_seen: Option<u64> = None;
    let mut interrupted: Option<u64> = None;
    let mut abandoned = 0;
    // The CPU time of each user's thread when the users were interrupted.
    let mut cpu_at_interrupt: Vec<Option<Duration>> = Vec::new();
    let tick_s = tick.as_secs_f64();

    while shared.live.load(Relaxed) > 0 {
        let now = ticks.now();
        if now < boundary {
            let wait = ticks.between(now, boundary).min(POLL);
            if let Err(mpsc::RecvTimeoutError::Disconnected) = done_rx.recv_timeout(wait) {
                std::thread::sleep(wait);
            }
            if stop.is_stopped() {
                shared.stop.store(true, Relaxed);
            }
            let now = ticks.now();
            if let Some(limit) = cfg.queue_limit
                && stop_seen.is_none()
                && shared.backlog(now).is_some_and(|q| q > limit)
            {
                shared.fail(QUEUE_FULL.to_string());
            }
            if shared.stop.load(Relaxed) && stop_seen.is_none() {
                stop_seen = Some(now);
            }
            let interrupt_at = match (stop_seen, deadline, cfg.forced_shutdown) {
                (Some(s), _, _) => Some(ticks.add(s, cfg.stop_grace)),
                (None, Some(d), Some(grace)) => Some(ticks.add(d, grace)),
                _ => None,
            };
            if interrupted.is_none() && interrupt_at.is_some_and(|at| now >= at) {
                interrupted = Some(now);
                cpu_at_interrupt = handles.iter().map(thread_cpu).collect();
                // Only users still at work: a finished one has nothing to
                // cancel (and each interrupt may open a connection).
                for (id, i) in &interrupters {
                    if !shared.slots[*id].finished.load(Relaxed) {
                        i();
                    }
                }
            }
            // Users still blocked long after their interrupt wait on a
            // server that answers neither them nor the interrupt: the run
            // does not wait for them forever.
            if let Some(at) = interrupted
                && now >= ticks.add(at, cfg.abandon_after)
            {
                abandoned = shared.live.load(Relaxed);
                if abandoned > 0 {
                    let busy = busy_users(&handles, &cpu_at_interrupt, ticks.between(at, now));
                    shared.fail_abandoned(abandoned_message(abandoned, busy, cfg.abandon_after));
                    break;
                }
            }
            continue;
        }
        if in_warmup {
            if let Some(a) = auto.as_mut() {
                let mut part = PhaseResult::default();
                c.collect_into(&mut part, false);
                let secs = ticks.secs(interval_start, boundary).max(1e-9);
                a.series.push(part.counters.events as f64 / secs);
                add_into_phase(&mut warm, part);
                a.steady_since = dbmeter_stats::steady::steady_since(&a.series);
                // A last piece shorter than half an interval is not
                // waited for.
                let limit = ticks.add(begin, a.max);
                if a.steady_since.is_none() && ticks.add(boundary, tick / 2) < limit {
                    interval_start = boundary;
                    boundary = ticks.add(boundary, tick).min(limit);
                    continue;
                }
                measure_start = boundary;
                deadline = cfg.time.map(|t| ticks.add(measure_start, t));
                if let Some(t) = shared.timing.get() {
                    t.start_measuring(measure_start, deadline);
                }
                warm.duration = ticks.between(begin, measure_start);
                warmup = Some(std::mem::take(&mut warm));
            } else {
                let mut w = PhaseResult {
                    duration: cfg.warmup,
                    ..Default::default()
                };
                c.collect_into(&mut w, false);
                warmup = Some(w);
            }
            in_warmup = false;
            on_measure_start();
            interval_start = measure_start;
            boundary = ticks.add(measure_start, tick);
            continue;
        }
        c.close_full(&mut measured, boundary, tick_s, on_interval);
        interval_start = boundary;
        boundary = ticks.add(boundary, tick);
    }
    let end = if abandoned > 0 {
        // The threads left behind are blocked in reads that may never
        // return; they end with the process.
        for h in handles {
            if h.is_finished() {
                let _ = h.join();
            }
        }
        ticks.now()
    } else {
        join_all(handles);
        shared.last_exit.lock().unwrap_or_else(|| ticks.now())
    };
    let mut end_measured = end;
    // Intervals that ended before the last user did are full ones.
    while !in_warmup && boundary <= end {
        c.close_full(&mut measured, boundary, tick_s, on_interval);
        interval_start = boundary;
        boundary = ticks.add(boundary, tick);
    }
    if in_warmup {
        let mut w = std::mem::take(&mut warm);
        w.duration = ticks.between(begin, end);
        c.collect_into(&mut w, false);
        warmup = Some(w);
    } else {
        let t_s = ticks.secs(measure_start, end.max(interval_start));
        let duration_s = ticks.secs(interval_start, end);
        if !c.close_last(&mut measured, end, t_s, duration_s, tick_s) {
            // Nothing ended in the fragment left out (the users were only
            // exiting, slowly on a loaded machine): the measurement ends
            // with the last interval, so that the series and the total
            // time agree.
            end_measured = interval_start;
        }
    }
    measured.duration = ticks.between(measure_start, end_measured);
    if let (Some(r), Some(q)) = (
        c.rate.as_mut(),
        shared.backlog(deadline.map_or(end, |d| d.min(end))),
    ) {
        r.unstarted_at_end = q;
    }
    let max_lag = with_service.then(|| Duration::from_nanos(shared.max_lag_ns.load(Relaxed)));
    if let (Some(r), Some(lag)) = (c.rate.as_mut(), max_lag) {
        r.max_lag = lag;
    }
    let reason = if let Some(msg) = shared.fatal.lock().clone() {
        EndReason::Failed(msg)
    } else if stop.is_stopped() {
        EndReason::Interrupted
    } else if shared.event_limit_hit.load(Relaxed) {
        EndReason::EventLimit
    } else if shared.work_done.load(Relaxed) == n {
        EndReason::WorkDone
    } else {
        EndReason::TimeLimit
    };
    let outages = shared.outages.finish(&ticks, measure_start);
    Ok(RunResult {
        threads: n,
        outages,
        measured,
        warmup,
        auto_warmup: auto,
        intervals: c.intervals,
        users: c.users,
        rate: c.rate,
        max_lag,
        end: reason,
        abandoned,
        released_at,
    })
}

struct Collector<'a> {
    cfg: &'a EngineConfig,
    shared: &'a Shared,
    users: Vec<UserTotals>,
    rate: Option<RateResult>,
    /// Full intervals closed so far.
    index: u64,
    /// When the users were let go: the load profiles' 0 s.
    begin: u64,
    /// Users alive when the current interval began.
    threads_at_start: usize,
    intervals: Vec<IntervalSample>,
    /// What the last full interval collected, and its users at its start:
    /// a short fragment after it is folded into it (`close_last`).
    last: Option<(PhaseResult, usize)>,
    /// Per slot, what the collector took from it last time, emptied and
    /// given back at the next collection (`Slot::take_into`).
    spare: Vec<SlotStats>,
    /// Users that ended an event (or failed one) since the last interval.
    active: usize,
}

impl Collector<'_> {
    /// Closes the full interval that ends at tick `boundary`: collects it,
    /// reports it and adds it to the series.
    fn close_full(
        &mut self,
        measured: &mut PhaseResult,
        boundary: u64,
        tick_s: f64,
        on_interval: &mut dyn FnMut(&IntervalSample),
    ) {
        self.index += 1;
        let t_s = self.index as f64 * tick_s;
        let part = self.collect_part();
        let sample = self.describe(&part, boundary, t_s, tick_s, self.threads_at_start);
        self.last = Some((part.clone(), self.threads_at_start));
        add_into_phase(measured, part);
        self.threads_at_start = self.shared.live.load(Relaxed);
        on_interval(&sample);
        self.intervals.push(sample);
    }

    /// Closes the run's last interval, from the last boundary to `end`
    /// (`duration_s` long, at `t_s`): the series stops where the
    /// measurement did. A fragment shorter than a tenth of an interval
    /// (the events that ended just after the time limit) is folded into
    /// the interval before it, which then lasts until `end`: alone, a
    /// few events in a millisecond would read as a rate spike. An empty
    /// fragment shorter than half an interval is left out: then it
    /// returns false.
    fn close_last(
        &mut self,
        measured: &mut PhaseResult,
        end: u64,
        t_s: f64,
        duration_s: f64,
        tick_s: f64,
    ) -> bool {
        let part = self.collect_part();
        // The interval before it, when there is one to fold into.
        let before = self.intervals.last().map(|i| i.duration_s);
        if duration_s < tick_s * SHORTEST_LAST
            && let Some(before_s) = before
            && let Some((mut prev, threads)) = self.last.take()
        {
            add_into_phase(&mut prev, part.clone());
            // The users of the interval folded into: those of both parts.
            let before_active = self.intervals.last().and_then(|i| i.active_users);
            let mut sample = self.describe(&prev, end, t_s, before_s + duration_s, threads);
            if let (Some(a), Some(b)) = (sample.active_users.as_mut(), before_active) {
                *a = (*a).max(b);
            }
            if let Some(i) = self.intervals.last_mut() {
                *i = sample;
            }
            add_into_phase(measured, part);
            return true;
        }
        let sample = self.describe(&part, end, t_s, duration_s, self.threads_at_start);
        add_into_phase(measured, part);
        if sample.counters != Default::default() || duration_s >= tick_s / 2.0 {
            self.intervals.push(sample);
            return true;
        }
        false
    }

    /// Moves what every user recorded since the last collection into `phase`.
    fn collect_into(&mut self, phase: &mut PhaseResult, measured: bool) {
        for (i, slot) in self.shared.slots.iter().enumerate() {
            let part = &mut self.spare[i];
            slot.take_into(part);
            if part.counters.events + part.counters.errors() > 0 {
                self.active += 1;
            }
            add_into(phase, part);
            if measured {
                add_user_totals(&mut self.users[i], part);
            }
        }
    }

    /// Moves what the users measured since the last collection out of
    /// their slots.
    fn collect_part(&mut self) -> PhaseResult {
        let mut part = PhaseResult::default();
        self.collect_into(&mut part, true);
        part
    }

    /// Describes `part`, the interval that ends at tick `to` (at `t_s`
    /// seconds into the measurement, `duration_s` long).
    fn describe(
        &mut self,
        part: &PhaseResult,
        to: u64,
        t_s: f64,
        duration_s: f64,
        threads: usize,
    ) -> IntervalSample {
        let queue_length = self.shared.backlog(to);
        // Latency runs from the intended start, service time from the
        // actual one: their difference is the lag.
        let lag_ms = part.service.as_ref().map(|sv| {
            let n = part.latency.count();
            if n == 0 {
                0.0
            } else {
                part.latency.sum().saturating_sub(sv.sum()) as f64 / n as f64 / 1e6
            }
        });
        if let (Some(r), Some(q)) = (self.rate.as_mut(), queue_length) {
            r.max_queue_length = r.max_queue_length.max(q);
        }
        let active = std::mem::take(&mut self.active);
        // A user let go by a step at the interval's end may end an event
        // before the collector takes the interval: it belongs to the next.
        let ticks = &self.shared.ticks;
        let profile_end = ticks.secs(self.begin, to);
        let active_users = self
            .cfg
            .user_stages
            .as_ref()
            .map(|p| active.min(p.most_users(profile_end - duration_s, profile_end)));
        IntervalSample {
            active_users,
            t_s,
            duration_s,
            threads,
            counters: part.counters,
            errors: part.errors.clone(),
            latency: LatencySummary::from_histogram(&part.latency, &self.cfg.percentiles),
            histogram: part.latency.to_base64(),
            queue_length,
            concurrency: queue_length.map(|_| self.shared.in_event.load(Relaxed)),
            lag_ms,
            kinds: part
                .kinds
                .iter()
                .map(|k| KindCounts {
                    events: k.events,
                    rolled_back: k.rolled_back,
                    retries: k.retries,
                })
                .collect(),
        }
    }
}

fn add_into_phase(into: &mut PhaseResult, part: PhaseResult) {
    into.counters.add(&part.counters);
    for (code, n) in part.errors {
        *into.errors.entry(code).or_insert(0) += n;
    }
    into.latency.merge(&part.latency);
    if let Some(s) = part.service {
        match into.service.as_mut() {
            Some(x) => x.merge(&s),
            None => into.service = Some(s),
        }
    }
    add_kinds(&mut into.kinds, &part.kinds);
}

struct Launch {
    shared: Arc<Shared>,
    /// When user i may start connecting: `start + i / rate`.
    connect_pace: Option<(Instant, f64)>,
    /// Bounds the connections being opened at once (see
    /// `CONNECTS_IN_FLIGHT`).
    connecting: Turns,
    created: Arc<Barrier>,
    go: Arc<Barrier>,
    setup_errors: Arc<Mutex<Vec<String>>>,
    interrupters: Arc<Mutex<Vec<(usize, Interrupter)>>>,
    done: mpsc::Sender<()>,
}

impl Launch {
    /// How long user `id` waits before it connects (see
    /// `EngineConfig::connect_rate`).
    fn connect_delay(&self, id: usize) -> Duration {
        match self.connect_pace {
            Some((start, rate)) => {
                let after = Duration::try_from_secs_f64(id as f64 / rate).unwrap_or(Duration::MAX);
                start.checked_add(after).map_or(Duration::MAX, |at| {
                    at.saturating_duration_since(Instant::now())
                })
            }
            None => Duration::ZERO,
        }
    }

    fn register(&self, id: usize, created: Result<Box<dyn User>, String>) -> Option<Box<dyn User>> {
        match created {
            Ok(u) => {
                if let Some(i) = u.interrupter() {
                    self.interrupters.lock().push((id, i));
                }
                Some(u)
            }
            Err(e) => {
                let _ = id;
                self.setup_errors.lock().push(e);
                None
            }
        }
    }
}

fn launch_threads(
    n: usize,
    factory: Arc<dyn UserFactory>,
    launch: Launch,
) -> Result<Vec<JoinHandle<()>>, EngineError> {
    let launch = Arc::new(launch);
    let mut handles = Vec::with_capacity(n);
    for id in 0..n {
        let factory = factory.clone();
        let l = launch.clone();
        let h = std::thread::Builder::new()
            .name(format!("dbmeter-user-{id}"))
            .spawn(move || {
                std::thread::sleep(l.connect_delay(id));
                let created = {
                    let _turn = l.connecting.take();
                    factory.create(id)
                };
                let user = l.register(id, created);
                l.created.wait();
                l.go.wait();
                if let (Some(user), false) = (user, l.shared.setup_failed.load(Relaxed)) {
                    let guard = ExitGuard {
                        shared: l.shared.clone(),
                        done: l.done.clone(),
                    };
                    user_loop(user, id, &l.shared);
                    drop(guard);
                }
            })
            .map_err(|e| EngineError::Runtime(format!("cannot start thread {id}: {e}")))?;
        handles.push(h);
    }
    Ok(handles)
}

/// pgbench's `-j`: `jobs` threads, each with its block of the users (the
/// first threads take the larger blocks, as pgbench deals its clients).
/// A thread opens its users' connections one after the other, then runs
/// them as tasks of its poll loop: a user waiting on its socket or
/// sleeping lets the thread run the others.
fn launch_jobs(
    n: usize,
    jobs: usize,
    factory: Arc<dyn UserFactory>,
    launch: Launch,
) -> Result<Vec<JoinHandle<()>>, EngineError> {
    let launch = Arc::new(launch);
    let mut handles = Vec::with_capacity(jobs);
    let mut first = 0;
    for job in 0..jobs {
        let count = (n - first).div_ceil(jobs - job);
        let ids = first..first + count;
        first += count;
        let factory = factory.clone();
        let l = launch.clone();
        let h = std::thread::Builder::new()
            .name(format!("dbmeter-job-{job}"))
            .spawn(move || {
                let mut tasks = dbmeter_coop::Scheduler::new();
                for id in ids {
                    std::thread::sleep(l.connect_delay(id));
                    let created = {
                        let _turn = l.connecting.take();
                        factory.create(id)
                    };
                    let Some(user) = l.register(id, created) else {
                        continue;
                    };
                    let lt = l.clone();
                    let spawned = tasks.spawn(move || {
                        if lt.shared.setup_failed.load(Relaxed) {
                            return;
                        }
                        let guard = ExitGuard {
                            shared: lt.shared.clone(),
                            done: lt.done.clone(),
                        };
                        user_loop(user, id, &lt.shared);
                        drop(guard);
                    });
                    if let Err(e) = spawned {
                        l.setup_errors
                            .lock()
                            .push(format!("cannot make the stack of user {id}: {e}"));
                    }
                }
                l.created.wait();
                l.go.wait();
                tasks.run();
            })
            .map_err(|e| EngineError::Runtime(format!("cannot start thread {job}: {e}")))?;
        handles.push(h);
    }
    Ok(handles)
}

/// A counting semaphore: at most N holders of a turn at once.
#[derive(Clone)]
struct Turns(Arc<(Mutex<usize>, parking_lot::Condvar)>);

struct Turn(Arc<(Mutex<usize>, parking_lot::Condvar)>);

impl Turns {
    fn new(n: usize) -> Self {
        Turns(Arc::new((Mutex::new(n), parking_lot::Condvar::new())))
    }

    /// Waits for a free turn; the turn is given back when dropped.
    fn take(&self) -> Turn {
        let (free, cv) = &*self.0;
        let mut f = free.lock();
        while *f == 0 {
            cv.wait(&mut f);
        }
        *f -= 1;
        Turn(self.0.clone())
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        let (free, cv) = &*self.0;
        *free.lock() += 1;
        cv.notify_one();
    }
}

fn join_all(handles: Vec<JoinHandle<()>>) {
    for h in handles {
        let _ = h.join();
    }
}

/// Waits until the run's time limit (or a stop); returns at once when the
/// run has none. Under an automatic warm-up the limit is set when the
/// warm-up ends: until then the user waits for it to be known.
fn sleep_to_end(timing: &Timing, shared: &Shared) {
    while timing.deadline_pending() {
        if shared.stop.load(Relaxed) {
            return;
        }
        dbmeter_coop::sleep(Duration::from_millis(50));
    }
    if let Some(d) = timing.deadline() {
        sleep_until(d, shared);
    }
}

/// Sleeps until `at`, waking early when the run stops. Returns false when it stopped.
fn sleep_until(at: u64, shared: &Shared) -> bool {
    loop {
        if shared.stop.load(Relaxed) {
            return false;
        }
        let now = shared.ticks.now();
        if now >= at {
            return true;
        }
        let d = shared.ticks.between(now, at).min(Duration::from_millis(50));
        // A user run as a task (pgbench's -j) lets its thread run the others.
        dbmeter_coop::sleep(d);
    }
}

/// How a user's attempts to reconnect ended.
enum Reconnect {
    /// The user has a connection again.
    Done,
    /// The run stopped before a reconnect succeeded: the event in progress
    /// is cancelled.
    Cancelled,
    /// The attempts kept failing for longer than the reconnect timeout:
    /// the run fails with this message.
    GaveUp(String),
}

/// Reconnects a user whose connection was found lost at tick `lost_at`,
/// retrying with a doubling backoff. Every failed attempt is counted in
/// the user's slot as it fails. Gives up (the run fails) when the attempts
/// have kept failing for `Shared::reconnect_timeout` after `lost_at`, or
/// when the run's time limit comes with the server still gone: the last
/// attempt is made at whichever comes first.
fn reconnect(
    user: &mut dyn User,
    id: usize,
    shared: &Shared,
    slot: &Slot,
    lost_at: u64,
) -> Reconnect {
    let Some(timing) = shared.timing.get() else {
        return Reconnect::Cancelled;
    };
    let ticks = &shared.ticks;
    let give_up = ticks.add(lost_at, shared.reconnect_timeout);
    let mut backoff = RECONNECT_FIRST_BACKOFF;
    let mut failed = 0u64;
    loop {
        if shared.stop.load(Relaxed) {
            return Reconnect::Cancelled;
        }
        let began = ticks.now();
        let error = match user.reconnect() {
            Ok(()) => {
                shared.outages.reconnected(id, began, ticks.now());
                return Reconnect::Done;
            }
            Err(e) => e,
        };
        failed += 1;
        slot.stats.lock().counters.failed_reconnects += 1;
        let now = ticks.now();
        shared.outages.attempt_failed(now, &error);
        // Given up after the timeout, or the time limit came with the
        // server still gone: either way the run did not end healthy.
        if now >= give_up || timing.deadline().is_some_and(|d| now >= d) {
            return Reconnect::GaveUp(lost_server_message(timing, ticks, lost_at, failed, &error));
        }
        // The last attempt is made when the timeout runs out, or at the
        // time limit, whichever comes first.
        let mut wake = ticks.add(now, backoff).min(give_up);
        if let Some(d) = timing.deadline() {
            wake = wake.min(d);
        }
        if !sleep_until(wake, shared) {
            return Reconnect::Cancelled;
        }
        backoff = (backoff * 2).min(RECONNECT_MAX_BACKOFF);
    }
}

/// The message of a run that failed because a user could not reconnect:
/// `lost the server at 3.2 s; 14 reconnect attempts failed: <error>`.
fn lost_server_message(
    timing: &Timing,
    ticks: &Ticks,
    lost_at: u64,
    failed: u64,
    error: &str,
) -> String {
    let start = timing.measure_start();
    let when = if lost_at < start {
        "during the warm-up".to_string()
    } else {
        format!("at {:.1} s", ticks.secs(start, lost_at))
    };
    let attempts = if failed == 1 {
        "1 reconnect attempt failed".to_string()
    } else {
        format!("{failed} reconnect attempts failed")
    };
    format!("lost the server {when}; {attempts}: {error}")
}

/// The CPU time a thread has used so far; None where it cannot be read
/// (the thread is gone).
fn thread_cpu(h: &JoinHandle<()>) -> Option<Duration> {
    use std::os::unix::thread::JoinHandleExt;
    let mut clock: libc::clockid_t = 0;
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: the handle is not joined, so its pthread_t is valid; the
    // out pointers point to live locals.
    let ok = unsafe {
        libc::pthread_getcpuclockid(h.as_pthread_t() as libc::pthread_t, &mut clock) == 0
            && libc::clock_gettime(clock, &mut ts) == 0
    };
    ok.then(|| Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32))
}

/// Of the users still running, how many used a CPU for more than a tenth
/// of the `waited` since `before` was read: they run their event's own
/// code (a loop in a script), where a user that waits on the database
/// uses next to none. A tenth, so that a loaded machine that gives the
/// looping thread a small share of a CPU still tells them apart.
fn busy_users(handles: &[JoinHandle<()>], before: &[Option<Duration>], waited: Duration) -> usize {
    handles
        .iter()
        .zip(before)
        .filter(|(h, _)| !h.is_finished())
        .filter(|(h, b)| match (b, thread_cpu(h)) {
            (Some(b), Some(now)) => now.saturating_sub(*b) > waited / 10,
            _ => false,
        })
        .count()
}

/// The message of a run that left behind `users` users `after` their
/// interrupt, `busy` of them running the workload's own code and the
/// others waiting on the database.
fn abandoned_message(users: usize, busy: usize, after: Duration) -> String {
    let n = |k: usize| {
        if k == 1 {
            "1 user".to_string()
        } else {
            format!("{k} users")
        }
    };
    let them = if users == 1 { "it" } else { "them" };
    let after = after.as_secs_f64();
    if busy == users {
        format!(
            "{} still busy in the script (running the event's own code, not waiting on the database) {after} s after being interrupted; abandoned {them} (does the event loop forever?)",
            n(users)
        )
    } else if busy > 0 {
        format!(
            "{} still waiting on the server and {} busy in the script (running the event's own code) {after} s after being interrupted; abandoned {them}",
            n(users - busy),
            busy
        )
    } else {
        format!(
            "{} still waiting on the server {after} s after being interrupted; abandoned {them} (the server, or its host, may be unreachable)",
            n(users)
        )
    }
}

/// Reserves a chunk of the --events budget for one user: large while much
/// is left, down to one event at a time near the end, so the total stays
/// exact and the users finish together. Returns 0 when nothing is left.
fn reserve_events(shared: &Shared) -> u64 {
    let users = shared.slots.len() as u64;
    loop {
        let started = shared.started.load(Relaxed);
        let left = shared.max_events.saturating_sub(started);
        if left == 0 {
            return 0;
        }
        let chunk = (left / (users * 8)).clamp(1, 256);
        if shared
            .started
            .compare_exchange_weak(started, started + chunk, Relaxed, Relaxed)
            .is_ok()
        {
            return chunk;
        }
    }
}

enum Outcome {
    Done,
    TimedOut,
    /// Failed for good ([`EventError::Failed`]).
    Failed,
    Cancelled,
    Fatal,
}

/// What an event's error means for its user's loop: counted (in the
/// interval where it happened), the user reconnected after a lost
/// connection; Some(outcome) ends the event, None runs it again. Out of
/// line: the loop's frame, on the stack under every event, stays small.
#[cold]
#[inline(never)]
fn event_error(
    e: EventError,
    user: &mut dyn User,
    id: usize,
    shared: &Shared,
    tally: &Tally,
    errors: &mut Vec<String>,
    last_event: &mut bool,
) -> Option<Outcome> {
    let slot = &shared.slots[id];
    let ticks = &shared.ticks;
    // Set before any user runs (under an automatic warm-up, when it ends).
    let past_deadline = || {
        shared
            .timing
            .get()
            .and_then(Timing::deadline)
            .is_some_and(|d| ticks.now() >= d)
    };
    match e {
        EventError::Ignorable { code } => {
            // Counted now, in the interval where it happened.
            let mut s = slot.stats.lock();
            s.counters.ignored_errors += 1;
            *s.errors.entry(code).or_insert(0) += 1;
            if let Some(k) = s.kind(tally.kind) {
                k.retries += 1;
            }
            drop(s);
            // Retry until the run stops or its time is up.
            if shared.stop.load(Relaxed) || past_deadline() {
                return Some(Outcome::Cancelled);
            }
        }
        EventError::ConnectionLost { code, .. } => {
            let lost_at = ticks.now();
            {
                // Counted now, in the interval where it happened.
                let mut s = slot.stats.lock();
                s.counters.connection_errors += 1;
                *s.errors.entry(code).or_insert(0) += 1;
            }
            shared.outages.lost(id, lost_at);
            match reconnect(user, id, shared, slot, lost_at) {
                Reconnect::Done => {
                    slot.stats.lock().counters.reconnects += 1;
                    // Restart the event only while the run goes on.
                    if shared.stop.load(Relaxed) || past_deadline() {
                        return Some(Outcome::Cancelled);
                    }
                }
                Reconnect::Cancelled => return Some(Outcome::Cancelled),
                Reconnect::GaveUp(message) => {
                    shared.fail(message);
                    return Some(Outcome::Fatal);
                }
            }
        }
        EventError::Fatal { code, message } => {
            errors.push(code);
            shared.fail(message);
            return Some(Outcome::Fatal);
        }
        EventError::Failed { code, last } => {
            // Counted now, in the interval where it happened.
            let mut s = slot.stats.lock();
            s.counters.ignored_errors += 1;
            *s.errors.entry(code).or_insert(0) += 1;
            drop(s);
            shared.outages.event_failed();
            *last_event = last;
            return Some(Outcome::Failed);
        }
        EventError::Cancelled => return Some(Outcome::Cancelled),
        EventError::TimedOut { code } => {
            shared.outages.event_failed();
            errors.push(code);
            return Some(Outcome::TimedOut);
        }
    }
    None
}

fn user_loop(mut user: Box<dyn User>, id: usize, shared: &Shared) {
    let Some(timing) = shared.timing.get() else {
        return;
    };
    let slot = &shared.slots[id];
    let ticks = &shared.ticks;
    let mut prev_end = ticks.now();
    let mut errors: Vec<String> = Vec::new();
    // Events this user may still start under --events (reserved in chunks).
    let mut budget = 0u64;
    // The user said its work is done.
    let mut last_event = false;
    loop {
        if shared.stop.load(Relaxed) {
            break;
        }
        // Under --stages, a user beyond the active level waits until the
        // level reaches it (or the run ends).
        if let Some(p) = &shared.user_stages {
            let now_s = ticks.secs(timing.begin, ticks.now());
            if p.users(now_s) <= id {
                let Some(at_s) = p.when_users(id + 1, now_s) else {
                    sleep_to_end(timing, shared);
                    break;
                };
                let at = ticks.add(
                    timing.begin,
                    Duration::try_from_secs_f64(at_s).unwrap_or(Duration::MAX),
                );
                if let Some(d) = timing.deadline()
                    && at >= d
                {
                    sleep_until(d, shared);
                    break;
                }
                if !sleep_until(at, shared) {
                    break;
                }
                prev_end = ticks.now();
                continue;
            }
        }
        let pause = user.pause();
        if !pause.is_zero() {
            let at = ticks.add(ticks.now(), pause);
            if let Some(d) = timing.deadline()
                && at >= d
            {
                // The wait outlasts the run: the user is done.
                sleep_until(d, shared);
                break;
            }
            if !sleep_until(at, shared) {
                break;
            }
            prev_end = ticks.now();
        }
        let intended = match &shared.arrivals {
            Some(arr) => {
                let mut user_done = false;
                let at = loop {
                    let (at_s, taken) = arr.lock().take();
                    shared.taken.store(taken, Relaxed);
                    // Beyond any duration (a vanishing rate): never.
                    let after = Duration::try_from_secs_f64(at_s).unwrap_or(Duration::MAX);
                    let at = ticks.add(timing.begin, after);
                    // Already later than the late limit: skipped.
                    if let Some(limit) = shared.late_limit
                        && timing.deadline().is_none_or(|d| at < d)
                    {
                        let now = ticks.now();
                        if now > ticks.add(at, limit) {
                            slot.stats.lock().counters.skipped += 1;
                            let lag = Duration::from_nanos(ticks.ns(at, now));
                            if user.skipped(lag) == Flow::UserDone {
                                user_done = true;
                                break at;
                            }
                            if shared.stop.load(Relaxed) {
                                break at;
                            }
                            continue;
                        }
                    }
                    break at;
                };
                if user_done {
                    if timing.deadline().is_none_or(|d| ticks.now() < d) {
                        shared.work_done.fetch_add(1, Relaxed);
                    }
                    break;
                }
                if let Some(d) = timing.deadline()
                    && at >= d
                {
                    // No arrival for this user before the end: it stays
                    // until the end, as the run lasts --time.
                    sleep_until(d, shared);
                    break;
                }
                if !sleep_until(at, shared) {
                    break;
                }
                Some(at)
            }
            None if shared.own_schedule => match user.intended_start() {
                Some(after) => {
                    let at = ticks.add(timing.begin, after);
                    if let Some(d) = timing.deadline()
                        && at >= d
                    {
                        // Its next event is due after the end.
                        sleep_until(d, shared);
                        break;
                    }
                    if !sleep_until(at, shared) {
                        break;
                    }
                    Some(at)
                }
                None => None,
            },
            None => None,
        };
        let start = if intended.is_some() {
            ticks.now()
        } else {
            prev_end
        };
        if let Some(at) = intended
            && start >= timing.measure_start()
        {
            let lag = ticks.ns(at, start);
            // Read first: the shared maximum is written only when it grows.
            if lag > shared.max_lag_ns.load(Relaxed) {
                shared.max_lag_ns.fetch_max(lag, Relaxed);
            }
        }
        if shared.max_events > 0 && start >= timing.measure_start() {
            if budget == 0 {
                budget = reserve_events(shared);
            }
            if budget == 0 {
                // Other users finish the events they started (and retry
                // them after ignorable errors): only this user stops here.
                shared.event_limit_hit.store(true, Relaxed);
                break;
            }
            budget -= 1;
        }
        if intended.is_some() {
            shared.in_event.fetch_add(1, Relaxed);
        }
        let mut tally = Tally {
            lag: intended.map_or(Duration::ZERO, |at| {
                Duration::from_nanos(ticks.ns(at, start))
            }),
            ..Tally::default()
        };
        let outcome = loop {
            match user.event(&mut tally) {
                Ok(Flow::Continue) => break Outcome::Done,
                Ok(Flow::UserDone) => {
                    last_event = true;
                    break Outcome::Done;
                }
                Err(e) => {
                    if let Some(outcome) = event_error(
                        e,
                        user.as_mut(),
                        id,
                        shared,
                        &tally,
                        &mut errors,
                        &mut last_event,
                    ) {
                        break outcome;
                    }
                }
            }
        };
        if intended.is_some() {
            shared.in_event.fetch_sub(1, Relaxed);
        }
        let end = ticks.now();
        {
            let mut s = slot.stats.lock();
            match outcome {
                Outcome::Done => {
                    let ns = ticks.ns(intended.unwrap_or(start), end);
                    s.record_done(tally.kind, ns, tally.rolled_back);
                    if let Some(sv) = s.service.as_mut() {
                        sv.record(ticks.ns(start, end));
                    }
                    s.counters.events += 1;
                }
                Outcome::TimedOut => s.counters.timeouts += 1,
                Outcome::Cancelled => s.counters.cancelled += 1,
                Outcome::Failed | Outcome::Fatal => {}
            }
            // The statements of an event cut short are not queries done.
            if matches!(outcome, Outcome::Done | Outcome::TimedOut | Outcome::Failed) {
                add_measures(&mut s.counters, &tally);
            }
            for code in errors.drain(..) {
                *s.errors.entry(code).or_insert(0) += 1;
            }
        }
        prev_end = end;
        if last_event {
            // Work done before the time limit: the run may end with
            // EndReason::WorkDone (a last event that ended after the time
            // limit leaves the time limit as the reason).
            if timing.deadline().is_none_or(|d| end < d) {
                shared.work_done.fetch_add(1, Relaxed);
            }
            break;
        }
        if !matches!(outcome, Outcome::Done | Outcome::TimedOut | Outcome::Failed)
            || timing.deadline().is_some_and(|d| end >= d)
        {
            break;
        }
    }
    let mut tally = Tally::default();
    let finished = user.finish(&mut tally);
    let mut s = slot.stats.lock();
    add_measures(&mut s.counters, &tally);
    if let Err(EventError::Fatal { code, message }) = finished {
        *s.errors.entry(code).or_insert(0) += 1;
        drop(s);
        shared.fail(message);
    } else {
        drop(s);
    }
    // The run's end is the last user's end, not counting closing connections.
    shared.mark_exit();
    slot.finished.store(true, Relaxed);
}

/// Adds what an event did to its user's counters.
#[inline]
fn add_measures(c: &mut dbmeter_stats::Counters, t: &Tally) {
    for (a, b) in c.measures.iter_mut().zip(t.measures) {
        *a += b;
    }
}
