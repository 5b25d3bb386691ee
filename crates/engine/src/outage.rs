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

/// One outage, in the engine's clock ticks.
#[derive(Clone, Debug, PartialEq)]
struct Closed {
    start: u64,
    /// None: it was not over when the run ended.
    end: Option<u64>,
    events_lost: u64,
}

#[derive(Default)]
struct State {
    /// Per user: when it found its connection lost, until it has one again.
    down_since: Vec<Option<u64>>,
    /// The outage going on: its start and the events lost so far.
    open: Option<(u64, u64)>,
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
            Some((_, events)) => *events += 1,
            None => s.pending_lost += 1,
        }
    }

    /// An attempt to connect again failed: the server is gone, an outage
    /// goes on (it starts now if none did).
    pub(crate) fn attempt_failed(&self, at: u64) {
        let mut s = self.state.lock();
        if s.open.is_some() {
            return;
        }
        let earliest = s.down_since.iter().flatten().min().copied();
        let start = earliest.unwrap_or(at).max(s.last_end);
        let events = std::mem::take(&mut s.pending_lost);
        s.open = Some((start, events));
        self.open.store(true, Ordering::Release);
    }

    /// User `id` has a connection again, at tick `at`: an outage going on
    /// ends.
    pub(crate) fn reconnected(&self, id: usize, at: u64) {
        let mut s = self.state.lock();
        if let Some(d) = s.down_since.get_mut(id) {
            *d = None;
        }
        if let Some((start, events_lost)) = s.open.take() {
            self.open.store(false, Ordering::Release);
            s.closed.push(Closed {
                start,
                end: Some(at),
                events_lost,
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
        if let Some((_, events)) = self.state.lock().open.as_mut() {
            *events += 1;
        }
    }

    /// The run's outages, with the measurement's start at `measure_start`;
    /// one still going on is reported as not over.
    pub(crate) fn finish(&self, ticks: &Ticks, measure_start: u64) -> Vec<OutageSample> {
        let s = self.state.lock();
        let open = s.open.map(|(start, events_lost)| Closed {
            start,
            end: None,
            events_lost,
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
                start_s: secs(o.start),
                length_s: o.end.map(|e| ticks.secs(o.start, e)),
                events_lost: o.events_lost,
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
        o.attempt_failed(at(&t, 1210));
        o.lost(2, at(&t, 1500));
        o.attempt_failed(at(&t, 2000));
        o.event_failed();
        o.reconnected(2, at(&t, 4000));
        // The others come back after the outage ended: no new one.
        o.reconnected(0, at(&t, 4100));
        o.reconnected(1, at(&t, 4300));
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
        o.reconnected(0, at(&t, 101));
        assert!(o.finish(&t, 0).is_empty());
        o.lost(1, at(&t, 3000));
        o.attempt_failed(at(&t, 3010));
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
        o.attempt_failed(at(&t, 1100));
        o.event_failed();
        o.event_failed();
        o.reconnected(0, at(&t, 2000));
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
        o.attempt_failed(at(&t, 1100));
        o.reconnected(0, at(&t, 2000));
        // User 1 is still down, and its next attempt fails: the server
        // went away again.
        o.attempt_failed(at(&t, 2500));
        o.reconnected(1, at(&t, 3000));
        let got = o.finish(&t, 0);
        assert_eq!(got.len(), 2, "{got:?}");
        assert!((got[1].start_s - 2.0).abs() < 1e-6, "{got:?}");
        assert!((got[1].length_s.unwrap() - 1.0).abs() < 1e-6, "{got:?}");
    }
}
