//! Outages: the times when the users could not reach the server.
//!
//! An outage starts when a user finds its connection lost and at least one
//! attempt to connect again fails: a connection that drops and reopens at
//! once (a killed session, a server restarted between two events) is a
//! reconnect, not an outage. It ends with the first reconnect that
//! succeeds, whichever user's (with several hosts, on whichever host).
//! Users that lose their connections while it lasts are part of it, so
//! overlapping losses make one outage. Its start is the earliest loss of
//! the users still down when it was confirmed (never before the previous
//! outage's end).
//!
//! Only users whose connections fail come here, and rarely: one lock for
//! the lot is cheaper to get right than atomics. Failed events come here
//! too, and may be many (an error the run ignores, on every event): a flag
//! that says whether an outage is open lets them pass without the lock
//! while none is.

use crate::clock::Ticks;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// The distinct errors of failed reconnect attempts an outage keeps; the
/// attempts past them are counted all the same.
const MAX_ERRORS: usize = 4;

/// The outage going on, in the engine's clock ticks.
#[derive(Clone, Debug, Default, PartialEq)]
struct Open {
    start: u64,
    events_lost: u64,
    /// Reconnect attempts that failed while it lasted, every user's.
    failed_attempts: u64,
    /// Their distinct errors (at most [`MAX_ERRORS`]), with how many
    /// attempts failed with each, in the order they first came.
    errors: Vec<(String, u64)>,
}

/// One outage, in the engine's clock ticks.
#[derive(Clone, Debug, PartialEq)]
struct Closed {
    open: Open,
    /// None: it was not over when the run ended.
    end: Option<u64>,
    /// When the reconnect attempt that ended it began.
    ended_by_attempt_from: Option<u64>,
}

#[derive(Default)]
struct State {
    /// Per user: when it found its connection lost, until it has one again.
    down_since: Vec<Option<u64>>,
    /// The outage going on.
    open: Option<Open>,
    /// Events cut short by lost connections of users still down, before
    /// an outage was confirmed: they become its own if one is.
    pending_lost: u64,
    /// When the last outage ended.
    last_end: u64,
    closed: Vec<Closed>,
}

/// The outages of a run, fed by the users as their connections fail.
pub(crate) struct Outages {
    state: Mutex<State>,
    /// `state.open.is_some()`, written under the lock whenever it changes:
    /// [`Outages::event_failed`] reads it first, without the lock.
    open: AtomicBool,
}

/// One outage as the run reports it, in seconds from the start of the
/// measurement (negative: in the warm-up).
#[derive(Clone, Debug, PartialEq)]
pub struct OutageSample {
    pub start_s: f64,
    /// How long no user could connect; None when the run ended before any
    /// did again.
    pub length_s: Option<f64>,
    /// The events cut short by the lost connections, or failed, while it
    /// lasted.
    pub events_lost: u64,
    /// Reconnect attempts that failed while it lasted (every user's).
    pub failed_attempts: u64,
    /// Their distinct errors (at most four) and how many attempts failed
    /// with each, in the order they first came.
    pub errors: Vec<(String, u64)>,
    /// How long the reconnect attempt that ended it took, from its start
    /// to the connection ready (part of `length_s`); None when it is not
    /// over.
    pub connect_s: Option<f64>,
}

impl Outages {
    pub(crate) fn new(users: usize) -> Outages {
        Outages {
            state: Mutex::new(State {
                down_since: vec![None; users],
                ..State::default()
            }),
            open: AtomicBool::new(false),
        }
    }

    /// User `id` found its connection lost at tick `at`, in an event that
    /// is cut short.
    pub(crate) fn lost(&self, id: usize, at: u64) {
        let mut s = self.state.lock();
        if let Some(d) = s.down_since.get_mut(id)
            && d.is_none()
        {
            *d = Some(at);
        }
        match s.open.as_mut() {
            Some(o) => o.events_lost += 1,
            None => s.pending_lost += 1,
        }
    }

    /// An attempt to connect again failed at tick `at` with `error`: the
    /// server is gone, an outage goes on (it starts now if none did) and
    /// counts the attempt.
    pub(crate) fn attempt_failed(&self, at: u64, error: &str) {
        let mut s = self.state.lock();
        if s.open.is_none() {
            let earliest = s.down_since.iter().flatten().min().copied();
            let start = earliest.unwrap_or(at).max(s.last_end);
            let events_lost = std::mem::take(&mut s.pending_lost);
            s.open = Some(Open {
                start,
                events_lost,
                ..Open::default()
            });
            self.open.store(true, Ordering::Release);
        }
        if let Some(o) = s.open.as_mut() {
            o.failed_attempts += 1;
            if let Some(e) = o.errors.iter_mut().find(|(e, _)| e == error) {
                e.1 += 1;
            } else if o.errors.len() < MAX_ERRORS {
                o.errors.push((error.to_string(), 1));
            }
        }
    }

    /// User `id` has a connection again, at tick `at`, from an attempt
    /// that began at tick `began`: an outage going on ends.
    pub(crate) fn reconnected(&self, id: usize, began: u64, at: u64) {
        let mut s = self.state.lock();
        if let Some(d) = s.down_since.get_mut(id) {
            *d = None;
        }
        if let Some(open) = s.open.take() {
            self.open.store(false, Ordering::Release);
            s.closed.push(Closed {
                open,
                end: Some(at),
                ended_by_attempt_from: Some(began.min(at)),
            });
            s.last_end = at;
        }
        if s.down_since.iter().all(Option::is_none) {
            s.pending_lost = 0;
        }
    }

    /// An event failed (other than by a lost connection): counted as lost
    /// when an outage goes on.
    /// While none does, it takes no lock: an event that fails as an outage
    /// opens or closes counts as the lock would have ordered it, before
    /// or after, since the state is read again under the lock.
    pub(crate) fn event_failed(&self) {
        if !self.open.load(Ordering::Acquire) {
            return;
        }
        if let Some(o) = self.state.lock().open.as_mut() {
            o.events_lost += 1;
        }
    }

    /// The run's outages, with the measurement's start at `measure_start`;
    /// one still going on is reported as not over.
    pub(crate) fn finish(&self, ticks: &Ticks, measure_start: u64) -> Vec<OutageSample> {
        let s = self.state.lock();
        let open = s.open.clone().map(|open| Closed {
            open,
            end: None,
            ended_by_attempt_from: None,
        });
        let secs = |t: u64| {
            if t >= measure_start {
                ticks.secs(measure_start, t)
            } else {
                -ticks.secs(t, measure_start)
            }
        };
        s.closed
            .iter()
            .chain(open.iter())
            .map(|o| OutageSample {
                start_s: secs(o.open.start),
                length_s: o.end.map(|e| ticks.secs(o.open.start, e)),
                events_lost: o.open.events_lost,
                failed_attempts: o.open.failed_attempts,
                errors: o.open.errors.clone(),
                connect_s: o
                    .end
                    .zip(o.ended_by_attempt_from)
                    .map(|(e, b)| ticks.secs(b, e)),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn at(ticks: &Ticks, ms: u64) -> u64 {
        ticks.add(0, Duration::from_millis(ms))
    }

    #[test]
    fn overlapping_losses_make_one_outage() {
        let t = Ticks::new();
        let o = Outages::new(3);
        o.lost(0, at(&t, 1000));
        o.lost(1, at(&t, 1200));
        o.attempt_failed(at(&t, 1210), "refused");
        o.lost(2, at(&t, 1500));
        o.attempt_failed(at(&t, 2000), "refused");
        o.event_failed();
        o.reconnected(2, at(&t, 4000), at(&t, 4000));
        // The others come back after the outage ended: no new one.
        o.reconnected(0, at(&t, 4100), at(&t, 4100));
        o.reconnected(1, at(&t, 4300), at(&t, 4300));
        let got = o.finish(&t, at(&t, 500));
        assert_eq!(got.len(), 1, "{got:?}");
        assert!((got[0].start_s - 0.5).abs() < 1e-6, "{got:?}");
        assert!((got[0].length_s.unwrap() - 3.0).abs() < 1e-6, "{got:?}");
        assert_eq!(got[0].events_lost, 4);
    }

    #[test]
    fn a_loss_reconnected_at_once_is_no_outage_and_an_open_one_is_not_over() {
        let t = Ticks::new();
        let o = Outages::new(2);
        o.lost(0, at(&t, 100));
        o.reconnected(0, at(&t, 101), at(&t, 101));
        assert!(o.finish(&t, 0).is_empty());
        o.lost(1, at(&t, 3000));
        o.attempt_failed(at(&t, 3010), "refused");
        let got = o.finish(&t, at(&t, 4000));
        assert_eq!(got.len(), 1);
        assert!((got[0].start_s + 1.0).abs() < 1e-6, "{got:?}");
        assert_eq!(got[0].length_s, None);
        assert_eq!(got[0].events_lost, 1);
    }

    #[test]
    fn failed_events_count_only_while_an_outage_is_open() {
        let t = Ticks::new();
        let o = Outages::new(1);
        o.event_failed();
        o.lost(0, at(&t, 1000));
        // Lost but not yet an outage: a failed event is not counted.
        o.event_failed();
        o.attempt_failed(at(&t, 1100), "refused");
        o.event_failed();
        o.event_failed();
        o.reconnected(0, at(&t, 2000), at(&t, 2000));
        o.event_failed();
        let got = o.finish(&t, 0);
        assert_eq!(got.len(), 1, "{got:?}");
        // The loss and the two failures while it was open.
        assert_eq!(got[0].events_lost, 3);
    }

    #[test]
    fn a_second_outage_starts_no_earlier_than_the_first_ended() {
        let t = Ticks::new();
        let o = Outages::new(2);
        o.lost(0, at(&t, 1000));
        o.lost(1, at(&t, 1000));
        o.attempt_failed(at(&t, 1100), "refused");
        o.reconnected(0, at(&t, 2000), at(&t, 2000));
        // User 1 is still down, and its next attempt fails: the server
        // went away again.
        o.attempt_failed(at(&t, 2500), "refused");
        o.reconnected(1, at(&t, 3000), at(&t, 3000));
        let got = o.finish(&t, 0);
        assert_eq!(got.len(), 2, "{got:?}");
        assert!((got[1].start_s - 2.0).abs() < 1e-6, "{got:?}");
        assert!((got[1].length_s.unwrap() - 1.0).abs() < 1e-6, "{got:?}");
    }

    #[test]
    fn attempts_are_counted_with_their_errors_and_the_last_connect_timed() {
        let t = Ticks::new();
        let o = Outages::new(2);
        o.lost(0, at(&t, 1000));
        o.lost(1, at(&t, 1000));
        for (ms, e) in [
            (1010, "refused"),
            (1020, "refused"),
            (1500, "starting up"),
            (1600, "e3"),
            (1700, "e4"),
            (1800, "e5"),
            (1900, "refused"),
        ] {
            o.attempt_failed(at(&t, ms), e);
        }
        // The attempt that ends it began at 2.5 s and took 0.75 s.
        o.reconnected(1, at(&t, 2500), at(&t, 3250));
        o.reconnected(0, at(&t, 3300), at(&t, 3300));
        let got = o.finish(&t, 0);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].failed_attempts, 7);
        let errors: Vec<(&str, u64)> = got[0]
            .errors
            .iter()
            .map(|(e, n)| (e.as_str(), *n))
            .collect();
        // Four distinct errors are kept; the fifth is only counted.
        assert_eq!(
            errors,
            [("refused", 3), ("starting up", 1), ("e3", 1), ("e4", 1)]
        );
        assert!((got[0].connect_s.unwrap() - 0.75).abs() < 1e-6, "{got:?}");
        assert!((got[0].length_s.unwrap() - 2.25).abs() < 1e-6, "{got:?}");
        // One not over has no connect time.
        o.lost(0, at(&t, 5000));
        o.attempt_failed(at(&t, 5010), "refused");
        let got = o.finish(&t, 0);
        assert_eq!(got[1].connect_s, None);
        assert_eq!(got[1].failed_attempts, 1);
    }
}
