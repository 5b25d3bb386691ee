//! Event and query counters.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Counts of what the virtual users did. Query classes follow sysbench:
/// a read returned a result set, a write changed rows, anything else
/// (BEGIN, COMMIT, DML that touched no row) is "other".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counters {
    /// Completed events (transactions).
    pub events: u64,
    pub reads: u64,
    pub writes: u64,
    pub others: u64,
    /// Event attempts restarted because of an ignorable error.
    pub ignored_errors: u64,
    /// Connections re-established after a lost connection.
    pub reconnects: u64,
    /// Events cut short because the run was stopped (Ctrl-C, timeout).
    pub cancelled: u64,
    /// Events whose statement ran past --query-timeout and was cancelled.
    #[serde(default)]
    pub timeouts: u64,
}

impl Counters {
    pub fn queries(&self) -> u64 {
        self.reads + self.writes + self.others
    }

    pub fn add(&mut self, o: &Counters) {
        self.events += o.events;
        self.reads += o.reads;
        self.writes += o.writes;
        self.others += o.others;
        self.ignored_errors += o.ignored_errors;
        self.reconnects += o.reconnects;
        self.cancelled += o.cancelled;
        self.timeouts += o.timeouts;
    }
}

/// Errors by driver code (e.g. `SQLITE_BUSY`, `1213`, `40P01`).
pub type ErrorCounts = BTreeMap<String, u64>;
