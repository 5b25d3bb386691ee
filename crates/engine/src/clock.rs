//! The engine's clock: raw CPU time-stamp counter ticks (through quanta,
//! calibrated against the monotonic clock, falling back to it where the
//! counter is not reliable). Reading it costs about a third of
//! clock_gettime, and deltas convert to nanoseconds with one multiply.

use std::time::Duration;

#[derive(Clone)]
pub(crate) struct Ticks {
    clock: quanta::Clock,
    per_sec: f64,
}

impl Ticks {
    pub(crate) fn new() -> Self {
        let clock = quanta::Clock::new();
        let probe = 1u64 << 40;
        let ns = clock.delta_as_nanos(0, probe).max(1);
        Ticks {
            clock,
            per_sec: probe as f64 / ns as f64 * 1e9,
        }
    }

    #[inline]
    pub(crate) fn now(&self) -> u64 {
        self.clock.raw()
    }

    /// Nanoseconds from `from` to `to` (0 when `to` is not later).
    #[inline]
    pub(crate) fn ns(&self, from: u64, to: u64) -> u64 {
        self.clock.delta_as_nanos(from, to)
    }

    pub(crate) fn between(&self, from: u64, to: u64) -> Duration {
        Duration::from_nanos(self.ns(from, to))
    }

    pub(crate) fn secs(&self, from: u64, to: u64) -> f64 {
        self.ns(from, to) as f64 / 1e9
    }

    /// The tick `d` after `t`.
    pub(crate) fn add(&self, t: u64, d: Duration) -> u64 {
        t.saturating_add((d.as_secs_f64() * self.per_sec) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_measure_real_time() {
        let t = Ticks::new();
        let a = t.now();
        std::thread::sleep(Duration::from_millis(50));
        let b = t.now();
        let ms = t.ns(a, b) as f64 / 1e6;
        assert!((49.0..80.0).contains(&ms), "{ms}");
        let later = t.add(a, Duration::from_millis(50));
        let back = t.ns(a, later) as f64 / 1e6;
        assert!((back - 50.0).abs() < 0.1, "{back}");
        assert_eq!(t.ns(b, a), 0);
    }
}
