//! A Poisson arrival schedule shared by all users.
//!
//! Users take intended start times in order. A second cursor over the same
//! random sequence counts how many arrivals are due at a given moment, so
//! the backlog (due but not started) is known without storing it.

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

struct Cursor {
    rng: Xoshiro256PlusPlus,
    next_s: f64,
    count: u64,
}

impl Cursor {
    fn new(seed: u64) -> Self {
        Cursor {
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            next_s: 0.0,
            count: 0,
        }
    }

    fn advance(&mut self, rate: f64) -> f64 {
        let t = self.next_s;
        // 53 random bits make u in [0, 1); 1 - u is in (0, 1].
        let u = (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        self.next_s += -(1.0 - u).ln() / rate;
        self.count += 1;
        t
    }
}

pub(crate) struct Arrivals {
    rate: f64,
    taken: Cursor,
    due: Cursor,
}

impl Arrivals {
    pub(crate) fn new(rate: f64, seed: u64) -> Self {
        Arrivals {
            rate,
            taken: Cursor::new(seed),
            due: Cursor::new(seed),
        }
    }

    /// The next intended start time, in seconds from the start of the run.
    pub(crate) fn take(&mut self) -> f64 {
        self.taken.advance(self.rate)
    }

    /// Arrivals due by `now_s` that no user has taken yet.
    pub(crate) fn backlog(&mut self, now_s: f64) -> u64 {
        while self.due.next_s <= now_s {
            self.due.advance(self.rate);
        }
        self.due.count.saturating_sub(self.taken.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_gap_matches_rate() {
        let mut a = Arrivals::new(1000.0, 7);
        let mut last = 0.0;
        for _ in 0..100_000 {
            last = a.take();
        }
        // 100,000 arrivals at 1000/s take about 100 s.
        assert!((last - 100.0).abs() < 2.0, "{last}");
    }

    #[test]
    fn backlog_counts_due_but_not_taken() {
        let mut a = Arrivals::new(100.0, 3);
        assert_eq!(a.backlog(0.0), 1); // the arrival at t=0
        let due = a.backlog(10.0);
        assert!((900..1100).contains(&due), "{due}");
        for _ in 0..due {
            a.take();
        }
        assert_eq!(a.backlog(10.0), 0);
    }
}
