//! A Poisson arrival schedule shared by all users.
//!
//! Users take intended start times in order from the [`Schedule`]. The
//! collector walks a second cursor over the same random sequence
//! ([`DueCounter`]) to count how many arrivals are due at a given moment,
//! so the backlog (due but not started) is known without storing it and
//! without holding the users' lock.

use crate::profile::Profile;
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::sync::Arc;

/// The arrival rate: constant, or changing in stages (`--rate-stages`).
#[derive(Clone, Debug)]
pub(crate) enum Rate {
    Constant(f64),
    Staged(Arc<Profile>),
}

impl Rate {
    /// The rate at `t` seconds.
    fn at(&self, t: f64) -> f64 {
        match self {
            Rate::Constant(r) => *r,
            Rate::Staged(p) => p.level(t),
        }
    }
}

struct Cursor {
    rng: Xoshiro256PlusPlus,
    rate: Rate,
    next_s: f64,
    count: u64,
}

impl Cursor {
    fn new(rate: Rate, seed: u64) -> Self {
        let mut c = Cursor {
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            rate,
            next_s: 0.0,
            count: 0,
        };
        // A constant rate's first arrival is at 0; a staged one's comes
        // when its rate has made the first one due.
        if let Rate::Staged(p) = c.rate.clone() {
            let e = c.exponential();
            c.next_s = p.next_arrival(0.0, e);
        }
        c
    }

    /// A draw of the exponential distribution with mean 1.
    fn exponential(&mut self) -> f64 {
        // 53 random bits make u in [0, 1); 1 - u is in (0, 1].
        let u = (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        -(1.0 - u).ln()
    }

    fn advance(&mut self) -> f64 {
        let t = self.next_s;
        let e = self.exponential();
        self.next_s = match &self.rate {
            Rate::Constant(r) => t + e / r,
            Rate::Staged(p) => p.next_arrival(t, e),
        };
        self.count += 1;
        t
    }
}

/// The most arrivals [`DueCounter::due`] walks one by one in a call.
const WALK_LIMIT: u32 = 1_000_000;

/// The intended start times, taken by the users.
pub(crate) struct Schedule(Cursor);

impl Schedule {
    pub(crate) fn new(rate: Rate, seed: u64) -> Self {
        Schedule(Cursor::new(rate, seed))
    }

    /// The next intended start time, in seconds from the start of the run,
    /// and how many have been taken with it.
    pub(crate) fn take(&mut self) -> (f64, u64) {
        let t = self.0.advance();
        (t, self.0.count)
    }
}

/// Counts the arrivals of a [`Schedule`] with the same rate and seed.
pub(crate) struct DueCounter(Cursor);

impl DueCounter {
    pub(crate) fn new(rate: Rate, seed: u64) -> Self {
        DueCounter(Cursor::new(rate, seed))
    }

    /// Arrivals whose intended time is at or before `now_s`.
    ///
    /// It walks the arrivals one by one, at most [`WALK_LIMIT`] of them
    /// per call: past that (a rate far above what the engine can start,
    /// or seconds of a huge rate), the rest up to `now_s` are counted by
    /// their expected number, so that the count never holds up the run.
    pub(crate) fn due(&mut self, now_s: f64) -> u64 {
        let c = &mut self.0;
        let mut walked = 0;
        while c.next_s <= now_s {
            if walked == WALK_LIMIT {
                let rate = c.rate.at(now_s).max(f64::MIN_POSITIVE);
                let rest = match &c.rate {
                    Rate::Constant(r) => (now_s - c.next_s) * r,
                    Rate::Staged(p) => p.expected(c.next_s, now_s),
                };
                c.count = c.count.saturating_add(rest as u64).saturating_add(1);
                let next = now_s + 1.0 / rate;
                // A rate so high that the gap vanishes next to now_s.
                c.next_s = if next > now_s { next } else { now_s.next_up() };
                break;
            }
            c.advance();
            walked += 1;
        }
        c.count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_gap_matches_rate() {
        let mut a = Schedule::new(Rate::Constant(1000.0), 7);
        let mut last = 0.0;
        for _ in 0..100_000 {
            last = a.take().0;
        }
        // 100,000 arrivals at 1000/s take about 100 s.
        assert!((last - 100.0).abs() < 2.0, "{last}");
    }

    #[test]
    fn due_counts_the_same_sequence() {
        let mut s = Schedule::new(Rate::Constant(100.0), 3);
        let mut d = DueCounter::new(Rate::Constant(100.0), 3);
        assert_eq!(d.due(0.0), 1); // the arrival at t=0
        let due = d.due(10.0);
        assert!((900..1100).contains(&due), "{due}");
        let mut taken = 0;
        for _ in 0..due {
            let (t, n) = s.take();
            assert!(t <= 10.0);
            taken = n;
        }
        assert_eq!(taken, due);
        assert!(s.take().0 > 10.0);
    }

    #[test]
    fn absurd_rates_neither_hang_nor_overflow() {
        // Every gap rounds to nothing next to the time: the count goes by
        // the expected number instead of walking forever.
        let mut d = DueCounter::new(Rate::Constant(1e300), 5);
        assert_eq!(d.due(1.0), u64::MAX);
        let mut d = DueCounter::new(Rate::Constant(1e9), 5);
        let due = d.due(2.0) as f64;
        assert!((due - 2e9).abs() < 1e6, "{due}");
        // A vanishing rate: the next arrival is out of reach, not a panic.
        let mut s = Schedule::new(Rate::Constant(1e-300), 5);
        s.take();
        assert!(s.take().0 > 1e290);
        assert_eq!(DueCounter::new(Rate::Constant(1e-300), 5).due(1e9), 1);
    }

    #[test]
    fn staged_rates_follow_their_stages() {
        // 10 s at 100/s, a step to 1000/s for 5 s, then 0.
        let p = Arc::new(Profile::parse("0s:100,10s:100,0s:1000,5s:1000,0s:0", 1e9).unwrap());
        let mut s = Schedule::new(Rate::Staged(p.clone()), 9);
        let mut per_s = [0u32; 16];
        loop {
            let (t, _) = s.take();
            if t >= 16.0 {
                assert!(t.is_infinite(), "{t}");
                break;
            }
            per_s[t as usize] += 1;
        }
        // Poisson noise: sd 10 at 100/s, 32 at 1000/s; 5 sd of margin.
        for (i, n) in per_s.iter().enumerate() {
            let want = if i < 10 {
                100.0
            } else if i < 15 {
                1000.0
            } else {
                0.0
            };
            assert!(
                (f64::from(*n) - want).abs() <= 5.0 * want.sqrt(),
                "second {i}: {n}"
            );
        }
        let mut d = DueCounter::new(Rate::Staged(p), 9);
        let due = d.due(15.5);
        let total: u32 = per_s.iter().sum();
        assert_eq!(due, u64::from(total));
    }
}
