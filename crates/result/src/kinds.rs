//! The named kinds of a run: per transaction, query or statement kind.

use dbmeter_stats::{LatencyHistogram, LatencySummary};
use serde::{Deserialize, Serialize};

/// What the events of one named kind did over the measured phase.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KindSection {
    /// The kind's name as its benchmark gives it (`new_order`, `Q1`, ...).
    pub name: String,
    /// Completed events, intended rollbacks included.
    pub events: u64,
    /// Completed events that rolled back as the benchmark intends.
    #[serde(default)]
    pub rolled_back: u64,
    /// Attempts restarted after an ignorable error.
    #[serde(default)]
    pub retries: u64,
    pub latency_ms: LatencySummary,
    /// The HDR histogram of the kind's latencies (ns), `BASE64;min;max;sum`:
    /// merges exactly with other runs' and shards'.
    #[serde(default)]
    pub latency_histogram: String,
}

impl KindSection {
    /// The kind's latency histogram (empty when the document has none).
    pub fn histogram(&self) -> LatencyHistogram {
        LatencyHistogram::from_base64(&self.latency_histogram).unwrap_or_default()
    }
}
