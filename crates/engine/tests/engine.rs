//! Engine behaviour with in-process users (no database involved: the
//! engine knows nothing of SQL).

use dbmeter_engine::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
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
        tally.reads += 2;
        tally.others += 1;
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
        assert_eq!(r.measured.counters.reads, 2000);
        assert_eq!(r.measured.counters.others, 1000);
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
