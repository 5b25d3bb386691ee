//! The server's wait events, sampled during a run's measured phase: how
//! many busy sessions of the run were in each wait at each sample.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What the wait-event sampler saw (PostgreSQL `pg_stat_activity`;
/// MariaDB/MySQL `performance_schema.events_waits_current`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct WaitRecord {
    /// Where the samples come from, e.g. `pg_stat_activity`.
    pub source: String,
    /// Time between two samples.
    pub interval_ms: u64,
    /// Samples taken during the measured phase.
    pub samples: u64,
    /// Busy sessions seen, summed over the samples (the run's own
    /// sessions and any other client's; not the sampler's).
    pub busy: u64,
    /// Sessions seen per event, summed over the samples. PostgreSQL:
    /// `TYPE:Event` (`IO:DataFileRead`), and `CPU` for an active session
    /// in no wait; MariaDB/MySQL: the instrument's name
    /// (`wait/io/file/innodb/innodb_data_file`), and `no instrumented
    /// wait` for a busy session in none.
    pub events: BTreeMap<String, u64>,
    /// Why the samples tell less than they could, or nothing: the
    /// server has no such view on, a consumer is disabled, a query failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl WaitRecord {
    /// The share of the busy sessions' samples in `event`, in percent.
    pub fn share_pct(&self, event: &str) -> Option<f64> {
        let n = *self.events.get(event)?;
        (self.busy > 0).then(|| n as f64 * 100.0 / self.busy as f64)
    }

    /// Busy sessions per sample, on average.
    pub fn mean_busy(&self) -> Option<f64> {
        (self.samples > 0).then(|| self.busy as f64 / self.samples as f64)
    }
}
