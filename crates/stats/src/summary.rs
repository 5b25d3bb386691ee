//! A compact, serialisable view of a latency histogram.

use crate::LatencyHistogram;
use serde::{Deserialize, Serialize};

/// One percentile value, in milliseconds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Percentile {
    pub percentile: f64,
    pub ms: f64,
}

/// Latency summary in milliseconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LatencySummary {
    pub count: u64,
    pub min_ms: f64,
    pub avg_ms: f64,
    pub max_ms: f64,
    pub sum_ms: f64,
    /// Standard deviation (from the histogram's buckets: within 0.1%).
    pub stddev_ms: f64,
    pub percentiles: Vec<Percentile>,
}

pub(crate) fn ns_to_ms(ns: f64) -> f64 {
    ns / 1e6
}

impl LatencySummary {
    pub fn from_histogram(h: &LatencyHistogram, percentiles: &[f64]) -> Self {
        LatencySummary {
            count: h.count(),
            min_ms: ns_to_ms(h.min() as f64),
            avg_ms: ns_to_ms(h.mean()),
            max_ms: ns_to_ms(h.max() as f64),
            sum_ms: ns_to_ms(h.sum() as f64),
            stddev_ms: ns_to_ms(h.stddev()),
            percentiles: percentiles
                .iter()
                .map(|&p| Percentile {
                    percentile: p,
                    ms: ns_to_ms(h.percentile(p) as f64),
                })
                .collect(),
        }
    }

    /// The value of percentile `p`, if it was computed.
    pub fn get(&self, p: f64) -> Option<f64> {
        self.percentiles
            .iter()
            .find(|x| (x.percentile - p).abs() < 1e-9)
            .map(|x| x.ms)
    }
}
