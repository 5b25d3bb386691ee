//! Event counters: the engine's own, and the benchmark's named measures.

use crate::measure::MAX_MEASURES;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Counts of what the virtual users did. The named fields are the
/// engine's, the same for every benchmark; `measures` are the counters
/// the run's plan declared ([`crate::Measure`]), by index. Measures count
/// for events that completed, timed out or failed, not for events cut
/// short by a stop or a fatal error.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counters {
    /// Completed events (transactions).
    pub events: u64,
    /// The plan's declared measures, by index (SQL benchmarks: reads,
    /// writes, others; see [`crate::measure::sql`]).
    pub measures: [u64; MAX_MEASURES],
    /// Event attempts restarted because of an ignorable error.
    pub ignored_errors: u64,
    /// Connections re-established after a lost connection (successful
    /// reconnects only; see `failed_reconnects`).
    pub reconnects: u64,
    /// Events cut short because the run was stopped (Ctrl-C, timeout).
    pub cancelled: u64,
    /// Events whose statement ran past --query-timeout and was cancelled.
    #[serde(default)]
    pub timeouts: u64,
    /// Lost connections, counted when the loss is found (not when the
    /// event it interrupted ends), so that a server outage shows in the
    /// interval where it happens.
    #[serde(default)]
    pub connection_errors: u64,
    /// Reconnect attempts that failed, counted as they fail.
    #[serde(default)]
    pub failed_reconnects: u64,
    /// Arrivals of a rated run skipped because they were already later
    /// than the late limit when their turn came (pgbench's `-L` with `-R`).
    #[serde(default)]
    pub skipped: u64,
}

impl Counters {
    /// The errors an interval line reports: ignored statement errors and
    /// connection errors.
    pub fn errors(&self) -> u64 {
        self.ignored_errors + self.connection_errors
    }

    pub fn add(&mut self, o: &Counters) {
        self.events += o.events;
        for (a, b) in self.measures.iter_mut().zip(o.measures) {
            *a += b;
        }
        self.ignored_errors += o.ignored_errors;
        self.reconnects += o.reconnects;
        self.cancelled += o.cancelled;
        self.timeouts += o.timeouts;
        self.connection_errors += o.connection_errors;
        self.failed_reconnects += o.failed_reconnects;
        self.skipped += o.skipped;
    }
}

/// Errors by driver code (e.g. `SQLITE_BUSY`, `1213`, `40P01`).
pub type ErrorCounts = BTreeMap<String, u64>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_sums_every_field() {
        let one = Counters {
            events: 1,
            measures: [2, 3, 4, 0, 0, 0, 0, 1],
            ignored_errors: 5,
            reconnects: 6,
            cancelled: 7,
            timeouts: 8,
            connection_errors: 9,
            failed_reconnects: 10,
            skipped: 11,
        };
        let mut sum = Counters::default();
        sum.add(&one);
        sum.add(&one);
        assert_eq!(
            sum,
            Counters {
                events: 2,
                measures: [4, 6, 8, 0, 0, 0, 0, 2],
                ignored_errors: 10,
                reconnects: 12,
                cancelled: 14,
                timeouts: 16,
                connection_errors: 18,
                failed_reconnects: 20,
                skipped: 22,
            }
        );
    }
}
