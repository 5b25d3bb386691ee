//! Engine behaviour with in-process users (no database involved: the
//! engine knows nothing of SQL).

use dbmeter_engine::*;
use dbmeter_stats::Counters;
use dbmeter_stats::measure::sql;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A user whose event sleeps for `sleep` and can fail on a given event number.
struct Sleeper {
    sleep: Duration,
    fail_at: Option<u64>,
    ignorable_every: Option<u64>,
    n: u64,
    counter: Arc<AtomicU64>,
}

impl User for Sleeper {
    fn event(&mut self, tally: &mut Tally) -> Result<Flow, EventError> {
        self.n += 1;
        self.counter.fetch_add(1, Ordering::Relaxed);
        if !self.sleep.is_zero() {
            std::thread::sleep(self.sleep);
        }
        tally.measures[sql::READS] += 2;
        tally.measures[sql::OTHERS] += 1;
        if self.fail_at == Some(self.n) {
            return Err(EventError::Fatal {
                code: "X1".into(),
                message: "boom".into(),
            });
        }
        if self
            .ignorable_every
            .is_some_and(|k| self.n.is_multiple_of(k))
        {
            return Err(EventError::Ignorable {
                code: "BUSY".into(),
            });
        }
        Ok(Flow::Continue)
    }
}

struct Factory {
    sleep: Duration,
    fail_at: Option<u64>,
    ignorable_every: Option<u64>,
    counter: Arc<AtomicU64>,
}

impl UserFactory for Factory {
    fn create(&self, user_id: usize) -> Result<Box<dyn User>, String> {
        if self.fail_at == Some(u64::MAX) && user_id == 1 {
            return Err("cannot connect".into());
        }
        Ok(Box::new(Sleeper {
            sleep: self.sleep,
            fail_at: self.fail_at,
            ignorable_every: self.ignorable_every,
            n: 0,
            counter: self.counter.clone(),
        }))
    }
}

fn factory(sleep_us: u64) -> Arc<Factory> {
    Arc::new(Factory {
        sleep: Duration::from_micros(sleep_us),
        fail_at: None,
        ignorable_every: None,
        counter: Arc::default(),
    })
}

fn cfg() -> EngineConfig {
    EngineConfig {
        threads: 2,
        time: None,
        ..Default::default()
    }
}

#[test]
fn event_limit_is_exact_and_counts_queries() {
    {
        let c = EngineConfig {
            events: Some(1000),
            ..cfg()
        };
        let r = run(&c, factory(0), &StopHandle::new(), &mut |_| {}).unwrap();
        assert_eq!(r.measured.counters.events, 1000);
        assert_eq!(r.measured.counters.measures[sql::READS], 2000);
        assert_eq!(r.measured.counters.measures[sql::OTHERS], 1000);
        assert_eq!(r.measured.latency.count(), 1000);
        assert_eq!(r.end, EndReason::EventLimit);
        assert_eq!(r.users.iter().map(|u| u.events).sum::<u64>(), 1000);
        let in_series: u64 = r.intervals.iter().map(|i| i.counters.events).sum();
        assert_eq!(in_series, 1000);
    }
}

#[test]
fn time_limit_and_intervals() {
    let c = EngineConfig {
        time: Some(Duration::from_millis(1200)),
        interval: Duration::from_millis(200),
        ..cfg()
    };
    let mut seen = 0;
    let r = run(&c, factory(500), &StopHandle::new(), &mut |_| seen += 1).unwrap();
    assert_eq!(r.end, EndReason::TimeLimit);
    assert!((5..=6).contains(&seen), "{seen} interval callbacks");
    let secs = r.measured.duration.as_secs_f64();
    assert!((1.19..1.4).contains(&secs), "{secs}");
    let sum: u64 = r.intervals.iter().map(|i| i.counters.events).sum();
    assert_eq!(sum, r.measured.counters.events);
    let p50 = r.measured.latency.percentile(50.0);
    assert!(p50 >= 500_000, "p50 {p50} ns is below the 0.5 ms sleep");
}

#[test]
fn warmup_is_measured_apart() {
    let c = EngineConfig {
        time: Some(Duration::from_millis(500)),
        warmup: Duration::from_millis(500),
        ..cfg()
    };
    let f = factory(1000);
    let r = run(&c, f.clone(), &StopHandle::new(), &mut |_| {}).unwrap();
    let w = r.warmup.expect("warm-up phase");
    let total = f.counter.load(Ordering::Relaxed);
    assert!(w.counters.events > 100, "{}", w.counters.events);
    assert_eq!(w.counters.events + r.measured.counters.events, total);
    assert!(r.measured.counters.events > 100);
}

#[test]
fn rate_is_followed_and_latency_counts_from_intended_start() {
    let c = EngineConfig {
        time: Some(Duration::from_secs(2)),
        rate: Some(500.0),
        ..cfg()
    };
    let r = run(&c, factory(100), &StopHandle::new(), &mut |_| {}).unwrap();
    let tps = r.measured.counters.events as f64 / r.measured.duration.as_secs_f64();
    assert!((tps - 500.0).abs() / 500.0 < 0.1, "{tps}");
    assert!(r.measured.service.is_some());
    assert!(r.rate.is_some());
}

#[test]
fn overload_reports_backlog_instead_of_aborting() {
    // One user, 2 ms per event, asked for 2000/s: the queue grows.
    let c = EngineConfig {
        threads: 1,
        time: Some(Duration::from_millis(800)),
        rate: Some(2000.0),
        interval: Duration::from_millis(200),
        ..cfg()
    };
    let r = run(&c, factory(2000), &StopHandle::new(), &mut |_| {}).unwrap();
    assert_eq!(r.end, EndReason::TimeLimit);
    let rate = r.rate.unwrap();
    assert!(rate.max_queue_length > 100, "{rate:?}");
    assert!(rate.unstarted_at_end > 100, "{rate:?}");
    // Latency from the intended start grows far beyond the 2 ms service time.
    assert!(r.measured.latency.max() > 100_000_000);
}

#[test]
fn a_queue_limit_fails_a_run_that_cannot_keep_up() {
    // sysbench's way: one user, 2 ms per event, asked for 100,000/s; more
    // than 1,000 arrivals waiting fails the run long before its time.
    let c = EngineConfig {
        threads: 1,
        time: Some(Duration::from_secs(60)),
        rate: Some(100_000.0),
        queue_limit: Some(1000),
        ..cfg()
    };
    let t = std::time::Instant::now();
    let r = run(&c, factory(2000), &StopHandle::new(), &mut |_| {}).unwrap();
    assert_eq!(r.end, EndReason::Failed(dbmeter_engine::QUEUE_FULL.into()));
    assert!(t.elapsed() < Duration::from_secs(30), "{:?}", t.elapsed());
    // A rate the user keeps up with never fills it.
    let c = EngineConfig {
        threads: 1,
        time: Some(Duration::from_millis(300)),
        rate: Some(50.0),
        queue_limit: Some(1000),
        ..cfg()
    };
    let r = run(&c, factory(1000), &StopHandle::new(), &mut |_| {}).unwrap();
    assert_eq!(r.end, EndReason::TimeLimit);
}

#[test]
fn stop_handle_ends_the_run_quickly_and_keeps_results() {
    let c = cfg();
    let stop = StopHandle::new();
    let s2 = stop.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        s2.stop();
    });
    let t = Instant::now();
    let r = run(&c, factory(200), &stop, &mut |_| {}).unwrap();
    assert!(t.elapsed() < Duration::from_secs(1));
    assert_eq!(r.end, EndReason::Interrupted);
    assert!(r.measured.counters.events > 10);
}

#[test]
fn fatal_error_stops_with_partial_results() {
    let f = Arc::new(Factory {
        sleep: Duration::ZERO,
        fail_at: Some(50),
        ignorable_every: None,
        counter: Arc::default(),
    });
    let r = run(&cfg(), f, &StopHandle::new(), &mut |_| {}).unwrap();
    assert_eq!(r.end, EndReason::Failed("boom".into()));
    assert!(r.measured.counters.events >= 49);
    assert!(r.measured.errors.get("X1").is_some_and(|&n| n >= 1));
}

#[test]
fn ignorable_errors_restart_the_event_and_are_counted() {
    let f = Arc::new(Factory {
        sleep: Duration::ZERO,
        fail_at: None,
        ignorable_every: Some(10),
        counter: Arc::default(),
    });
    let c = EngineConfig {
        threads: 1,
        events: Some(900),
        ..cfg()
    };
    let r = run(&c, f, &StopHandle::new(), &mut |_| {}).unwrap();
    assert_eq!(r.measured.counters.events, 900);
    // 900 successes take calls 1..=999, of which 99 failed.
    assert_eq!(r.measured.counters.ignored_errors, 99);
    assert_eq!(r.measured.errors.get("BUSY"), Some(&99));
}

#[test]
fn setup_failure_is_an_error() {
    let f = Arc::new(Factory {
        sleep: Duration::ZERO,
        fail_at: Some(u64::MAX),
        ignorable_every: None,
        counter: Arc::default(),
    });
    let e = run(&cfg(), f, &StopHandle::new(), &mut |_| {}).unwrap_err();
    assert!(e.to_string().contains("cannot connect"));
}

/// What a [`Flaky`] user does; every user of a run gets a copy.
#[derive(Clone, Default)]
struct Spec {
    /// How long an event takes.
    sleep: Duration,
    /// The event call (1-based, per user) at which the connection is lost, once.
    lose_at: Option<u64>,
    /// Only users with a lower id lose their connection (`None`: all).
    losing_users: Option<usize>,
    /// Reconnect attempts that fail before one succeeds (`u64::MAX`: all).
    failing_reconnects: u64,
    /// How long a reconnect attempt takes.
    reconnect_takes: Duration,
    /// Completed events after which a user's work is done (`None`: never).
    work: Option<u64>,
    /// Only users with a lower id have finite work (`None`: all).
    finite_users: Option<usize>,
}

/// A user of a pretend server that can go down: while `down` is set its
/// events fail with a lost connection and its reconnects fail.
struct Flaky {
    spec: Spec,
    id: usize,
    calls: u64,
    completed: u64,
    reconnect_failures: u64,
    down: Arc<AtomicBool>,
}

impl User for Flaky {
    fn event(&mut self, tally: &mut Tally) -> Result<Flow, EventError> {
        self.calls += 1;
        if !self.spec.sleep.is_zero() {
            std::thread::sleep(self.spec.sleep);
        }
        let loses = self.spec.losing_users.is_none_or(|n| self.id < n);
        if self.down.load(Ordering::Relaxed) || (loses && self.spec.lose_at == Some(self.calls)) {
            return Err(EventError::ConnectionLost {
                code: "LOST".into(),
                message: "server closed the connection".into(),
            });
        }
        tally.measures[sql::READS] += 2;
        self.completed += 1;
        let finite = self.spec.finite_users.is_none_or(|n| self.id < n);
        if finite && self.spec.work == Some(self.completed) {
            return Ok(Flow::UserDone);
        }
        Ok(Flow::Continue)
    }

    fn reconnect(&mut self) -> Result<(), String> {
        if !self.spec.reconnect_takes.is_zero() {
            std::thread::sleep(self.spec.reconnect_takes);
        }
        if self.down.load(Ordering::Relaxed)
            || self.reconnect_failures < self.spec.failing_reconnects
        {
            self.reconnect_failures += 1;
            return Err("connection refused".into());
        }
        Ok(())
    }
}

struct FlakyFactory {
    spec: Spec,
    down: Arc<AtomicBool>,
}

impl UserFactory for FlakyFactory {
    fn create(&self, user_id: usize) -> Result<Box<dyn User>, String> {
        Ok(Box::new(Flaky {
            spec: self.spec.clone(),
            id: user_id,
            calls: 0,
            completed: 0,
            reconnect_failures: 0,
            down: self.down.clone(),
        }))
    }
}

fn flaky(spec: Spec) -> Arc<FlakyFactory> {
    Arc::new(FlakyFactory {
        spec,
        down: Arc::default(),
    })
}

/// Splits `lost the server at 3.2 s; 14 reconnect attempts failed: <error>`
/// into the time, the count and the error.
fn parse_lost_server(msg: &str) -> (f64, u64, &str) {
    let rest = msg.strip_prefix("lost the server at ").expect(msg);
    let (secs, rest) = rest.split_once(" s; ").expect(msg);
    let (count, error) = rest.split_once(" reconnect attempts failed: ").expect(msg);
    // One decimal.
    assert_eq!(secs.split_once('.').map(|(_, d)| d.len()), Some(1), "{msg}");
    (secs.parse().expect(msg), count.parse().expect(msg), error)
}

#[test]
fn a_server_lost_for_good_fails_the_run() {
    let c = EngineConfig {
        threads: 2,
        time: Some(Duration::from_secs(30)),
        reconnect_timeout: Duration::from_millis(300),
        ..cfg()
    };
    // User 0 loses its connection on its third event and never gets it
    // back; user 1 goes on working until the run fails.
    let f = flaky(Spec {
        sleep: Duration::from_millis(1),
        lose_at: Some(3),
        losing_users: Some(1),
        failing_reconnects: u64::MAX,
        ..Default::default()
    });
    let t = Instant::now();
    let r = run(&c, f, &StopHandle::new(), &mut |_| {}).unwrap();
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    let EndReason::Failed(msg) = &r.end else {
        panic!("{:?}", r.end);
    };
    let (secs, count, error) = parse_lost_server(msg);
    assert!((0.0..30.0).contains(&secs), "{msg}");
    assert_eq!(error, "connection refused");
    // Only user 0 failed to reconnect: its count is the run's.
    assert!(count >= 1, "{msg}");
    let k = &r.measured.counters;
    assert_eq!(k.failed_reconnects, count, "{msg}");
    assert_eq!(k.connection_errors, 1);
    assert_eq!(k.reconnects, 0);
    assert_eq!(r.measured.errors.get("LOST"), Some(&1));
    // User 0 completed two events before the loss; user 1 kept going.
    assert_eq!(r.users[0].events, 2);
    assert!(r.users[1].events >= 1);
    assert_eq!(k.measures[sql::READS], 2 * k.events);
}

#[test]
fn a_server_lost_during_the_warmup_says_so() {
    let c = EngineConfig {
        threads: 1,
        warmup: Duration::from_secs(20),
        time: Some(Duration::from_secs(30)),
        reconnect_timeout: Duration::from_millis(200),
        ..cfg()
    };
    let f = flaky(Spec {
        lose_at: Some(1),
        failing_reconnects: u64::MAX,
        ..Default::default()
    });
    let t = Instant::now();
    let r = run(&c, f, &StopHandle::new(), &mut |_| {}).unwrap();
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    let EndReason::Failed(msg) = &r.end else {
        panic!("{:?}", r.end);
    };
    let rest = msg
        .strip_prefix("lost the server during the warm-up; ")
        .expect(msg);
    assert!(
        rest.ends_with(" reconnect attempts failed: connection refused"),
        "{msg}"
    );
    let w = r.warmup.expect("warm-up phase");
    assert_eq!(w.counters.connection_errors, 1);
    assert!(w.counters.failed_reconnects >= 1);
}

/// The reconnect timeout ran out before the time limit, even though the
/// attempt that saw it ended after the time limit: the run failed.
#[test]
fn a_reconnect_timeout_before_the_time_limit_fails_the_run() {
    let c = EngineConfig {
        threads: 1,
        time: Some(Duration::from_secs(2)),
        reconnect_timeout: Duration::from_millis(200),
        ..cfg()
    };
    let f = flaky(Spec {
        lose_at: Some(1),
        failing_reconnects: u64::MAX,
        reconnect_takes: Duration::from_secs(3),
        ..Default::default()
    });
    let r = run(&c, f, &StopHandle::new(), &mut |_| {}).unwrap();
    let EndReason::Failed(msg) = &r.end else {
        panic!("{:?}", r.end);
    };
    assert!(msg.starts_with("lost the server at "), "{msg}");
    assert!(
        msg.ends_with(" s; 1 reconnect attempt failed: connection refused"),
        "{msg}"
    );
    assert_eq!(r.measured.counters.failed_reconnects, 1);
}

/// The time limit comes before the reconnect timeout, with the server
/// still gone: the run did not end healthy, so it fails (and says when the
/// server was lost) rather than pass as a good one.
#[test]
fn a_server_still_gone_at_the_time_limit_fails_the_run() {
    let c = EngineConfig {
        threads: 2,
        time: Some(Duration::from_secs(1)),
        reconnect_timeout: Duration::from_secs(60),
        ..cfg()
    };
    let f = flaky(Spec {
        sleep: Duration::from_millis(1),
        lose_at: Some(5),
        failing_reconnects: u64::MAX,
        ..Default::default()
    });
    let t = Instant::now();
    let r = run(&c, f, &StopHandle::new(), &mut |_| {}).unwrap();
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    match &r.end {
        EndReason::Failed(m) => assert!(m.starts_with("lost the server at "), "{m}"),
        other => panic!("{other:?}"),
    }
    let k = &r.measured.counters;
    assert_eq!(k.events, 8);
    assert_eq!(k.measures[sql::READS], 16);
    assert_eq!(k.connection_errors, 2);
    assert!(k.failed_reconnects >= 2, "{k:?}");
    assert_eq!(k.reconnects, 0);
    assert_eq!(r.measured.errors.get("LOST"), Some(&2));
}

/// While the server is down, the intervals show the lost connections and
/// the failed reconnect attempts; once it is back, the reconnects.
#[test]
fn an_outage_shows_in_the_intervals() {
    let c = EngineConfig {
        threads: 2,
        time: Some(Duration::from_secs(30)),
        interval: Duration::from_millis(100),
        reconnect_timeout: Duration::from_secs(60),
        ..cfg()
    };
    let f = flaky(Spec {
        sleep: Duration::from_millis(1),
        ..Default::default()
    });
    let down = f.down.clone();
    let stop = StopHandle::new();
    let s2 = stop.clone();
    // The test drives the outage from the interval reports: down after the
    // first interval with events, up once both users lost their connection
    // and an interval had failed reconnects and no events, stop after an
    // interval with events again.
    #[derive(Debug, PartialEq)]
    enum Phase {
        Before,
        Down,
        Up,
    }
    let mut phase = Phase::Before;
    let mut seen_down: Vec<Counters> = Vec::new();
    let r = run(&c, f, &stop, &mut |i| match phase {
        Phase::Before if i.counters.events > 0 => {
            down.store(true, Ordering::Relaxed);
            phase = Phase::Down;
        }
        Phase::Down => {
            seen_down.push(i.counters);
            let lost: u64 = seen_down.iter().map(|k| k.connection_errors).sum();
            if lost == 2 && i.counters.events == 0 && i.counters.failed_reconnects > 0 {
                down.store(false, Ordering::Relaxed);
                phase = Phase::Up;
            }
        }
        Phase::Up if i.counters.events > 0 => s2.stop(),
        _ => {}
    })
    .unwrap();
    assert_eq!(r.end, EndReason::Interrupted);
    assert_eq!(phase, Phase::Up);
    // Both users lost their connection once, and it showed in an interval
    // reported while the server was down.
    let lost: u64 = seen_down.iter().map(|k| k.connection_errors).sum();
    assert_eq!(lost, 2, "{seen_down:?}");
    assert!(
        seen_down
            .iter()
            .any(|k| k.events == 0 && k.failed_reconnects > 0),
        "{seen_down:?}"
    );
    let k = &r.measured.counters;
    assert_eq!(k.connection_errors, 2);
    assert_eq!(k.reconnects, 2);
    assert!(k.failed_reconnects >= 2, "{k:?}");
    assert_eq!(r.measured.errors.get("LOST"), Some(&2));
    // The series adds up to the totals.
    let mut sum = Counters::default();
    for i in &r.intervals {
        sum.add(&i.counters);
    }
    assert_eq!(&sum, k);
}

#[test]
fn users_reconnect_after_failed_attempts_and_the_run_completes() {
    let c = EngineConfig {
        events: Some(200),
        reconnect_timeout: Duration::from_secs(60),
        ..cfg()
    };
    let f = flaky(Spec {
        lose_at: Some(10),
        failing_reconnects: 3,
        ..Default::default()
    });
    let r = run(&c, f, &StopHandle::new(), &mut |_| {}).unwrap();
    assert_eq!(r.end, EndReason::EventLimit);
    let k = &r.measured.counters;
    assert_eq!(k.events, 200);
    assert_eq!(k.measures[sql::READS], 400);
    assert_eq!(k.connection_errors, 2);
    assert_eq!(k.failed_reconnects, 6);
    assert_eq!(k.reconnects, 2);
    assert_eq!(k.cancelled, 0);
    assert_eq!(r.measured.errors.get("LOST"), Some(&2));
}

/// A user whose events after the first `fast` ones wait until interrupted.
struct Stuck {
    fast: u64,
    n: u64,
    interrupted: Arc<AtomicBool>,
    stuck: Arc<AtomicU64>,
}

impl User for Stuck {
    fn event(&mut self, tally: &mut Tally) -> Result<Flow, EventError> {
        self.n += 1;
        tally.measures[sql::READS] += 2;
        tally.measures[sql::WRITES] += 1;
        if self.n <= self.fast {
            return Ok(Flow::Continue);
        }
        self.stuck.fetch_add(1, Ordering::Relaxed);
        let t = Instant::now();
        while !self.interrupted.load(Ordering::Relaxed) && t.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(5));
        }
        Err(EventError::Cancelled)
    }

    fn interrupter(&self) -> Option<Interrupter> {
        let i = self.interrupted.clone();
        Some(Arc::new(move || i.store(true, Ordering::Relaxed)))
    }
}

struct StuckFactory {
    fast: u64,
    stuck: Arc<AtomicU64>,
}

impl UserFactory for StuckFactory {
    fn create(&self, _user_id: usize) -> Result<Box<dyn User>, String> {
        Ok(Box::new(Stuck {
            fast: self.fast,
            n: 0,
            interrupted: Arc::default(),
            stuck: self.stuck.clone(),
        }))
    }
}

#[test]
fn cancelled_events_do_not_count_their_queries() {
    let c = EngineConfig {
        threads: 2,
        time: Some(Duration::from_secs(30)),
        ..cfg()
    };
    let stuck = Arc::new(AtomicU64::new(0));
    let f = Arc::new(StuckFactory {
        fast: 7,
        stuck: stuck.clone(),
    });
    let stop = StopHandle::new();
    let s2 = stop.clone();
    // Stop once both users are stuck in their eighth event.
    std::thread::spawn(move || {
        while stuck.load(Ordering::Relaxed) < 2 {
            std::thread::sleep(Duration::from_millis(5));
        }
        s2.stop();
    });
    let r = run(&c, f, &stop, &mut |_| {}).unwrap();
    assert_eq!(r.end, EndReason::Interrupted);
    let k = &r.measured.counters;
    assert_eq!(k.events, 14);
    assert_eq!(k.cancelled, 2);
    assert_eq!(k.measures[sql::READS], 28);
    assert_eq!(k.measures[sql::WRITES], 14);
}

#[test]
fn failed_events_do_not_count_their_queries() {
    let f = Arc::new(Factory {
        sleep: Duration::ZERO,
        fail_at: Some(50),
        ignorable_every: None,
        counter: Arc::default(),
    });
    let c = EngineConfig {
        threads: 1,
        ..cfg()
    };
    let r = run(&c, f, &StopHandle::new(), &mut |_| {}).unwrap();
    assert_eq!(r.end, EndReason::Failed("boom".into()));
    let k = &r.measured.counters;
    assert_eq!(k.events, 49);
    assert_eq!(k.measures[sql::READS], 98);
    assert_eq!(k.measures[sql::OTHERS], 49);
    assert_eq!(r.measured.errors.get("X1"), Some(&1));
}

#[test]
fn finite_users_end_the_run_with_work_done() {
    for time in [None, Some(Duration::from_secs(30))] {
        let c = EngineConfig {
            threads: 3,
            time,
            events: None,
            ..cfg()
        };
        let f = flaky(Spec {
            work: Some(5),
            ..Default::default()
        });
        let t = Instant::now();
        let r = run(&c, f, &StopHandle::new(), &mut |_| {}).unwrap();
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
        assert_eq!(r.end, EndReason::WorkDone, "time {time:?}");
        assert_eq!(r.measured.counters.events, 15);
        assert_eq!(r.measured.counters.measures[sql::READS], 30);
        assert!(r.users.iter().all(|u| u.events == 5), "{:?}", r.users);
    }
}

/// Work done by some users only: the time limit ends the run.
#[test]
fn partly_finite_users_end_with_the_time_limit() {
    let c = EngineConfig {
        threads: 2,
        time: Some(Duration::from_millis(500)),
        ..cfg()
    };
    let f = flaky(Spec {
        sleep: Duration::from_millis(1),
        work: Some(5),
        finite_users: Some(1),
        ..Default::default()
    });
    let r = run(&c, f, &StopHandle::new(), &mut |_| {}).unwrap();
    assert_eq!(r.end, EndReason::TimeLimit);
    assert_eq!(r.users[0].events, 5);
    assert!(r.users[1].events > 5, "{:?}", r.users);
}

#[test]
fn rate_lag_is_recorded_when_users_fall_behind() {
    // One user, 20 ms per event, asked for 200/s: every event starts later
    // than intended, more and more so.
    let c = EngineConfig {
        threads: 1,
        time: Some(Duration::from_secs(1)),
        rate: Some(200.0),
        ..cfg()
    };
    let r = run(&c, factory(20_000), &StopHandle::new(), &mut |_| {}).unwrap();
    let rate = r.rate.unwrap();
    assert!(rate.max_lag > Duration::from_millis(50), "{rate:?}");
    assert!(rate.max_lag < r.measured.duration, "{rate:?}");
    // Without a rate there is no lag to tell.
    let r = run(&cfg_events(10), factory(0), &StopHandle::new(), &mut |_| {}).unwrap();
    assert!(r.rate.is_none());
}

fn cfg_events(n: u64) -> EngineConfig {
    EngineConfig {
        events: Some(n),
        ..cfg()
    }
}

/// A user that, after `fast` events, blocks in its event for good: its
/// interrupter is called but reaches nothing (a server host that
/// vanished, or a hung server).
struct Deaf {
    fast: u64,
    n: u64,
    interrupts: Arc<AtomicU64>,
}

impl User for Deaf {
    fn event(&mut self, tally: &mut Tally) -> Result<Flow, EventError> {
        self.n += 1;
        tally.measures[sql::READS] += 1;
        if self.n <= self.fast {
            std::thread::sleep(Duration::from_millis(1));
            return Ok(Flow::Continue);
        }
        loop {
            std::thread::park();
        }
    }

    fn interrupter(&self) -> Option<Interrupter> {
        let n = self.interrupts.clone();
        Some(Arc::new(move || {
            n.fetch_add(1, Ordering::Relaxed);
        }))
    }
}

/// Users 0 and 1 block for good after 5 events; the others work on.
struct DeafFactory {
    interrupts: Arc<AtomicU64>,
}

impl UserFactory for DeafFactory {
    fn create(&self, user_id: usize) -> Result<Box<dyn User>, String> {
        Ok(Box::new(Deaf {
            fast: if user_id < 2 { 5 } else { u64::MAX },
            n: 0,
            interrupts: self.interrupts.clone(),
        }))
    }
}

/// At the time limit, users that neither finish nor answer their
/// interrupt are abandoned `abandon_after` after it: the run returns
/// (their threads left behind) and fails, saying how many there were.
#[test]
fn users_stuck_past_the_time_limit_are_abandoned_and_fail_the_run() {
    let c = EngineConfig {
        threads: 3,
        time: Some(Duration::from_millis(300)),
        forced_shutdown: Some(Duration::from_millis(100)),
        abandon_after: Duration::from_millis(400),
        ..cfg()
    };
    let interrupts = Arc::new(AtomicU64::new(0));
    let f = Arc::new(DeafFactory {
        interrupts: interrupts.clone(),
    });
    let t = Instant::now();
    let r = run(&c, f, &StopHandle::new(), &mut |_| {}).unwrap();
    // 0.8 s expected; the bound leaves room for a loaded machine.
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    assert_eq!(r.abandoned, 2);
    assert_eq!(
        r.end,
        EndReason::Failed(
            "2 users still waiting on the server 0.4 s after being interrupted; abandoned them (the server, or its host, may be unreachable)".into()
        )
    );
    assert_eq!(interrupts.load(Ordering::Relaxed), 2);
    // What the users did before is kept.
    assert_eq!(r.users[0].events, 5);
    assert_eq!(r.users[1].events, 5);
    assert!(r.users[2].events > 5, "{:?}", r.users);
}

/// After a stop request too; a run whose users come back is not failed.
#[test]
fn users_stuck_after_a_stop_are_abandoned() {
    let c = EngineConfig {
        threads: 2,
        time: Some(Duration::from_secs(60)),
        stop_grace: Duration::from_millis(50),
        abandon_after: Duration::from_millis(200),
        ..cfg()
    };
    let stop = StopHandle::new();
    let s2 = stop.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        s2.stop();
    });
    let f = Arc::new(DeafFactory {
        interrupts: Arc::default(),
    });
    let t = Instant::now();
    let r = run(&c, f, &stop, &mut |_| {}).unwrap();
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    assert_eq!(r.abandoned, 2);
    let EndReason::Failed(m) = &r.end else {
        panic!("{:?}", r.end)
    };
    assert!(m.starts_with("2 users still waiting"), "{m}");
    // A run whose users come back in time is not failed.
    let r = run(&cfg_events(50), factory(0), &StopHandle::new(), &mut |_| {}).unwrap();
    assert_eq!((r.abandoned, r.end), (0, EndReason::EventLimit));
}

/// A finite user of a rated run: each event sleeps; it counts the
/// arrivals the engine skipped, and with `fail_every` fails every so
/// many events for good; it stops after `work` events and skips.
struct Late {
    sleep: Duration,
    work: u64,
    fail_every: Option<u64>,
    n: u64,
    skipped: Arc<AtomicU64>,
}

impl Late {
    fn step(&mut self) -> bool {
        self.n += 1;
        self.n == self.work
    }
}

impl User for Late {
    fn event(&mut self, _tally: &mut Tally) -> Result<Flow, EventError> {
        std::thread::sleep(self.sleep);
        let last = self.step();
        if self.fail_every.is_some_and(|k| self.n.is_multiple_of(k)) {
            return Err(EventError::Failed {
                code: "40001".into(),
                last,
            });
        }
        Ok(if last { Flow::UserDone } else { Flow::Continue })
    }

    fn skipped(&mut self, lag: Duration) -> Flow {
        assert!(lag > Duration::from_micros(10));
        self.skipped.fetch_add(1, Ordering::Relaxed);
        if self.step() {
            Flow::UserDone
        } else {
            Flow::Continue
        }
    }
}

struct LateFactory {
    sleep: Duration,
    work: u64,
    fail_every: Option<u64>,
    skipped: Arc<AtomicU64>,
}

impl UserFactory for LateFactory {
    fn create(&self, _user_id: usize) -> Result<Box<dyn User>, String> {
        Ok(Box::new(Late {
            sleep: self.sleep,
            work: self.work,
            fail_every: self.fail_every,
            n: 0,
            skipped: self.skipped.clone(),
        }))
    }
}

#[test]
fn late_arrivals_are_skipped_and_told_to_the_user() {
    let skipped = Arc::new(AtomicU64::new(0));
    let f = Arc::new(LateFactory {
        sleep: Duration::from_millis(1),
        work: 100,
        fail_every: None,
        skipped: skipped.clone(),
    });
    // 100,000 arrivals a second, events of 1 ms, a late limit of 10 µs:
    // most arrivals are late when their turn comes.
    let c = EngineConfig {
        threads: 2,
        rate: Some(100_000.0),
        late_limit: Some(Duration::from_micros(10)),
        ..cfg()
    };
    let r = run(&c, f, &StopHandle::new(), &mut |_| {}).unwrap();
    let n = &r.measured.counters;
    assert_eq!(r.end, EndReason::WorkDone);
    assert!(n.skipped > 0, "{n:?}");
    assert_eq!(n.skipped, skipped.load(Ordering::Relaxed));
    // Skips count toward the users' finite work.
    assert_eq!(n.events + n.skipped, 200, "{n:?}");
    let in_series: u64 = r.intervals.iter().map(|i| i.counters.skipped).sum();
    assert_eq!(in_series, n.skipped);
    assert!(r.intervals.iter().all(|i| i.lag_ms.is_some()));
    // Without a limit nothing is skipped.
    let f = Arc::new(LateFactory {
        sleep: Duration::from_micros(100),
        work: 20,
        fail_every: None,
        skipped: Arc::default(),
    });
    let c = EngineConfig {
        threads: 2,
        rate: Some(100_000.0),
        ..cfg()
    };
    let r = run(&c, f, &StopHandle::new(), &mut |_| {}).unwrap();
    assert_eq!(r.measured.counters.skipped, 0);
    assert_eq!(r.measured.counters.events, 40);
}

#[test]
fn events_failed_for_good_are_counted_and_not_restarted() {
    let f = Arc::new(LateFactory {
        sleep: Duration::ZERO,
        work: 30,
        fail_every: Some(3),
        skipped: Arc::default(),
    });
    let c = EngineConfig {
        threads: 2,
        ..cfg()
    };
    let r = run(&c, f, &StopHandle::new(), &mut |_| {}).unwrap();
    // Each user: 30 events, every third failed (the last one too).
    assert_eq!(r.end, EndReason::WorkDone);
    assert_eq!(r.measured.counters.events, 40);
    assert_eq!(r.measured.counters.ignored_errors, 20);
    assert_eq!(r.measured.errors.get("40001"), Some(&20));
}

/// A user that notes its thread and how many users are inside an event
/// at once, sleeping through the engine's cooperative sleep.
struct Multiplexed {
    inside: Arc<AtomicU64>,
    most: Arc<AtomicU64>,
    threads: Arc<parking_lot::Mutex<Vec<(usize, String)>>>,
    id: usize,
}

impl User for Multiplexed {
    fn event(&mut self, _tally: &mut Tally) -> Result<Flow, EventError> {
        let now = self.inside.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        let name = std::thread::current().name().unwrap_or("").to_string();
        self.threads.lock().push((self.id, name));
        dbmeter_coop::sleep(Duration::from_millis(5));
        self.inside.fetch_sub(1, Ordering::SeqCst);
        Ok(Flow::Continue)
    }
}

struct MultiplexedFactory(Multiplexed);

impl UserFactory for MultiplexedFactory {
    fn create(&self, id: usize) -> Result<Box<dyn User>, String> {
        Ok(Box::new(Multiplexed {
            inside: self.0.inside.clone(),
            most: self.0.most.clone(),
            threads: self.0.threads.clone(),
            id,
        }))
    }
}

/// `jobs`: 5 users on 2 threads, dealt in blocks (3 and 2) as pgbench
/// deals its clients; the users of a thread are in their events at once
/// (each sleep lets the thread run the others), and the event limit stays
/// exact.
#[test]
fn jobs_run_blocks_of_users_on_shared_threads() {
    let seen = Multiplexed {
        inside: Arc::default(),
        most: Arc::default(),
        threads: Arc::default(),
        id: 0,
    };
    let (most, threads) = (seen.most.clone(), seen.threads.clone());
    let c = EngineConfig {
        threads: 5,
        jobs: Some(2),
        events: Some(40),
        ..cfg()
    };
    let r = run(
        &c,
        Arc::new(MultiplexedFactory(seen)),
        &StopHandle::new(),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(r.measured.counters.events, 40);
    assert_eq!(r.threads, 5);
    assert!(most.load(Ordering::SeqCst) >= 3, "{most:?}");
    let mut by_user = std::collections::BTreeMap::new();
    for (id, name) in threads.lock().iter() {
        by_user
            .entry(*id)
            .or_insert_with(std::collections::BTreeSet::new)
            .insert(name.clone());
    }
    let names: Vec<Vec<String>> = by_user
        .values()
        .map(|s| s.iter().cloned().collect())
        .collect();
    assert_eq!(
        names,
        [
            vec!["dbmeter-job-0"],
            vec!["dbmeter-job-0"],
            vec!["dbmeter-job-0"],
            vec!["dbmeter-job-1"],
            vec!["dbmeter-job-1"]
        ]
    );
}

/// A user whose events take turns among kinds 0, 1 and 2 (the run tells
/// two apart: kind 2 is none of them), 0.2 ms each; kind 1 rolls back.
struct Kinds {
    n: usize,
}

impl User for Kinds {
    fn event(&mut self, tally: &mut Tally) -> Result<Flow, EventError> {
        tally.kind = self.n % 3;
        tally.rolled_back = self.n % 3 == 1;
        self.n += 1;
        std::thread::sleep(Duration::from_micros(200));
        Ok(Flow::Continue)
    }
}

struct KindsFactory;

impl UserFactory for KindsFactory {
    fn create(&self, _: usize) -> Result<Box<dyn User>, String> {
        Ok(Box::new(Kinds { n: 0 }))
    }
}

/// Events of every kind, and of none, are counted once each in the totals,
/// the latency and the users' busy time, interval after interval (the
/// slots' recorders are emptied and used again at every interval).
#[test]
fn kinds_are_counted_apart_and_together_across_intervals() {
    let c = EngineConfig {
        threads: 3,
        time: Some(Duration::from_millis(600)),
        interval: Duration::from_millis(50),
        kinds: 2,
        ..cfg()
    };
    let r = run(&c, Arc::new(KindsFactory), &StopHandle::new(), &mut |_| {}).unwrap();
    let events = r.measured.counters.events;
    assert!(events >= 30, "{events} events");
    assert!(r.intervals.len() >= 5, "{} intervals", r.intervals.len());
    assert_eq!(r.measured.latency.count(), events);
    assert_eq!(r.measured.kinds.len(), 2);
    let (k0, k1) = (&r.measured.kinds[0], &r.measured.kinds[1]);
    assert_eq!(k0.latency.count(), k0.events);
    assert_eq!(k1.latency.count(), k1.events);
    assert_eq!(k1.rolled_back, k1.events);
    assert_eq!(k0.rolled_back, 0);
    // Each user's events go 0, 1, 2, 0, ...: a third of them (to one per
    // user) of each kind.
    let none = events - k0.events - k1.events;
    for n in [k0.events, k1.events, none] {
        assert!(
            n * 3 + 6 >= events && n * 3 <= events + 6,
            "{n} of {events}"
        );
    }
    let kind_sum = k0.latency.sum() + k1.latency.sum();
    assert!(r.measured.latency.sum() > kind_sum);
    assert!(r.measured.latency.min() >= 200_000);
    let busy: Duration = r.users.iter().map(|u| u.busy).sum();
    let sum = r.measured.latency.sum();
    let busy_ns = busy.as_nanos();
    // Each user's busy time is added whole nanoseconds per interval.
    assert!(busy_ns <= sum && busy_ns + 1000 >= sum, "{busy_ns} {sum}");
    let in_series: u64 = r.intervals.iter().map(|i| i.counters.events).sum();
    assert_eq!(in_series, events);
    let kinds_in_series: u64 = r
        .intervals
        .iter()
        .flat_map(|i| i.kinds.iter().map(|k| k.events))
        .sum();
    assert_eq!(kinds_in_series, k0.events + k1.events);
}

/// A finite user with its own schedule: event i is intended `gap * i`
/// after the start (user 1's schedule starts `offset` later), and takes
/// `sleep`.
struct Scheduled {
    gap: Duration,
    offset: Duration,
    sleep: Duration,
    n: u32,
    of: u32,
}

impl User for Scheduled {
    fn intended_start(&mut self) -> Option<Duration> {
        Some(self.offset + self.gap * self.n)
    }

    fn event(&mut self, tally: &mut Tally) -> Result<Flow, EventError> {
        self.n += 1;
        std::thread::sleep(self.sleep);
        tally.measures[sql::READS] += 1;
        Ok(if self.n == self.of {
            Flow::UserDone
        } else {
            Flow::Continue
        })
    }
}

struct ScheduledUsers {
    gap: Duration,
    sleep: Duration,
}

impl UserFactory for ScheduledUsers {
    fn create(&self, user_id: usize) -> Result<Box<dyn User>, String> {
        Ok(Box::new(Scheduled {
            gap: self.gap,
            offset: Duration::from_millis(200) * user_id as u32,
            sleep: self.sleep,
            n: 0,
            of: 10,
        }))
    }
}

#[test]
fn users_own_schedules_are_kept_and_their_lag_measured() {
    let c = EngineConfig {
        threads: 2,
        time: None,
        own_schedule: true,
        ..cfg()
    };
    // Events far shorter than their gaps: the schedule sets the pace (10
    // events 40 ms apart, the second user 200 ms later: at least 560 ms).
    let t = Instant::now();
    let f = Arc::new(ScheduledUsers {
        gap: Duration::from_millis(40),
        sleep: Duration::from_millis(1),
    });
    let r = run(&c, f, &StopHandle::new(), &mut |_| {}).unwrap();
    assert_eq!(r.end, EndReason::WorkDone);
    assert_eq!(r.measured.counters.events, 20);
    assert!(
        t.elapsed() >= Duration::from_millis(560),
        "{:?}",
        t.elapsed()
    );
    assert!(r.rate.is_none());
    let service = r.measured.service.as_ref().expect("service times kept");
    assert_eq!(service.count(), 20);
    assert!(r.max_lag.is_some());
    // Events longer than their gaps: each starts later than intended, more
    // and more so (the tenth about 9 * 30 ms late), and the latency counts
    // the lag.
    let f = Arc::new(ScheduledUsers {
        gap: Duration::from_millis(10),
        sleep: Duration::from_millis(40),
    });
    let r = run(&c, f, &StopHandle::new(), &mut |_| {}).unwrap();
    assert_eq!(r.measured.counters.events, 20);
    let lag = r.max_lag.expect("the lag is measured");
    assert!(lag > Duration::from_millis(100), "{lag:?}");
    let service = r.measured.service.as_ref().expect("service times kept");
    assert!(
        r.measured.latency.sum() > service.sum() + 500_000_000,
        "lag in the latency"
    );
    assert!(
        r.intervals
            .iter()
            .any(|i| i.lag_ms.is_some_and(|l| l > 10.0))
    );
    // Without own schedules the engine asks nothing (the 1000 s gaps
    // would outlast the test) and measures no lag.
    let c = EngineConfig {
        own_schedule: false,
        ..c
    };
    let f = Arc::new(ScheduledUsers {
        gap: Duration::from_secs(1000),
        sleep: Duration::ZERO,
    });
    let r = run(&c, f, &StopHandle::new(), &mut |_| {}).unwrap();
    assert_eq!(r.end, EndReason::WorkDone);
    assert_eq!(r.measured.counters.events, 20);
    assert!(r.max_lag.is_none() && r.measured.service.is_none());
}

/// A user whose throughput climbs linearly from 50 events per second at
/// `t0` to 1,000 at `t0 + ramp`, and stays there (a cold cache warming);
/// with `stall`, its first event lasts until `t0 + stall`.
struct Warming {
    t0: Instant,
    ramp: Duration,
    stall: Option<Duration>,
}

impl User for Warming {
    fn event(&mut self, _tally: &mut Tally) -> Result<Flow, EventError> {
        if let Some(stall) = self.stall.take() {
            std::thread::sleep(stall.saturating_sub(self.t0.elapsed()));
        }
        let done = (self.t0.elapsed().as_secs_f64() / self.ramp.as_secs_f64()).min(1.0);
        std::thread::sleep(Duration::from_secs_f64(1.0 / (50.0 + 950.0 * done)));
        Ok(Flow::Continue)
    }
}

struct WarmingFactory(Instant, Duration, Option<Duration>);

impl UserFactory for WarmingFactory {
    fn create(&self, _user_id: usize) -> Result<Box<dyn User>, String> {
        Ok(Box::new(Warming {
            t0: self.0,
            ramp: self.1,
            stall: self.2,
        }))
    }
}

#[test]
fn an_automatic_warmup_ends_when_a_slow_start_is_over() {
    let c = EngineConfig {
        time: Some(Duration::from_millis(600)),
        interval: Duration::from_millis(200),
        auto_warmup: Some(Duration::from_secs(60)),
        ..cfg()
    };
    let f = Arc::new(WarmingFactory(Instant::now(), Duration::from_secs(2), None));
    let r = run(&c, f, &StopHandle::new(), &mut |_| {}).unwrap();
    let a = r.auto_warmup.expect("the automatic warm-up's account");
    let since = a.steady_since.expect("it became steady");
    let w = r.warmup.expect("warm-up phase");
    // Steady from half the climb or later (5 intervals of 0.2 s), and the
    // warm-up ended after it, well before its limit.
    assert!(since >= 5, "steady since interval {since}: {:?}", a.series);
    assert!(a.series.len() > 2 * since, "{since} {:?}", a.series);
    assert!(w.duration >= Duration::from_secs(2), "{:?}", w.duration);
    assert!(w.duration < Duration::from_secs(30), "{:?}", w.duration);
    // The measurement lasts its --time from there, faster than the start.
    assert_eq!(r.end, EndReason::TimeLimit);
    let secs = r.measured.duration.as_secs_f64();
    assert!((0.59..3.0).contains(&secs), "{secs}");
    // (about 10 times the first interval's rate on an idle machine)
    let rate = r.measured.counters.events as f64 / secs;
    assert!(rate > 2.0 * a.series[0], "{rate} against {:?}", a.series);
}

#[test]
fn an_automatic_warmup_that_never_settles_ends_at_its_limit() {
    let c = EngineConfig {
        time: Some(Duration::from_millis(300)),
        interval: Duration::from_millis(100),
        auto_warmup: Some(Duration::from_millis(1500)),
        ..cfg()
    };
    // No event ends before 1.6 s: nothing to call steady in 1.5 s.
    let f = Arc::new(WarmingFactory(
        Instant::now(),
        Duration::from_secs(2),
        Some(Duration::from_millis(1600)),
    ));
    let r = run(&c, f, &StopHandle::new(), &mut |_| {}).unwrap();
    let a = r.auto_warmup.expect("the automatic warm-up's account");
    assert_eq!(a.steady_since, None, "{:?}", a.series);
    assert_eq!(a.series.len(), 15, "{:?}", a.series);
    assert!(a.series.iter().all(|v| *v == 0.0), "{:?}", a.series);
    let w = r.warmup.expect("warm-up phase");
    assert!(
        w.duration >= Duration::from_millis(1490),
        "{:?}",
        w.duration
    );
    assert_eq!(r.end, EndReason::TimeLimit);
    assert!(r.measured.counters.events > 0);
}

#[test]
fn users_wait_for_the_start_time() {
    let at = std::time::SystemTime::now() + Duration::from_millis(400);
    let c = EngineConfig {
        start_at: Some(at),
        ..cfg_events(100)
    };
    let r = run(&c, factory(0), &StopHandle::new(), &mut |_| {}).unwrap();
    assert!(r.released_at >= at, "let go before the start time");
    assert_eq!(r.measured.counters.events, 100);
    // A start already past: at once.
    let past = std::time::SystemTime::now() - Duration::from_secs(60);
    let c = EngineConfig {
        start_at: Some(past),
        ..cfg_events(10)
    };
    let before = std::time::SystemTime::now();
    let r = run(&c, factory(0), &StopHandle::new(), &mut |_| {}).unwrap();
    assert!(r.released_at >= before);
    assert_eq!(r.measured.counters.events, 10);
}
