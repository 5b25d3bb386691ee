//! A run's throughput with its confidence interval, from its intervals.
//!
//! Neighbouring intervals of a run are correlated (a checkpoint, a purge
//! or a cache warming lasts several seconds), so the spread of the
//! per-interval rates understates the uncertainty of their mean. The
//! interval here is by non-overlapping batch means
//! (`dbmeter_stats::inference::batch_means_ci`): the measured intervals,
//! a short last one left out, are cut into floor(sqrt(n)) batches' worth
//! of floor(sqrt(n)) intervals each, and the mean of the batch means gets
//! Student's t interval over the batches.

use crate::RunDocument;
use dbmeter_stats::inference::{MIN_BATCH_VALUES, batch_means_ci};
use serde::{Deserialize, Serialize};

/// The confidence level of a run's throughput interval.
pub const LEVEL: f64 = 0.95;

/// A run's events per second with its confidence interval.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ThroughputCi {
    /// How it was computed: `batch_means`.
    pub method: String,
    /// The confidence level, e.g. 0.95.
    pub confidence: f64,
    /// The mean of the batch means, events per second.
    pub events_per_s: f64,
    pub low: f64,
    pub high: f64,
    /// The intervals used, the batches and the intervals per batch.
    pub intervals: usize,
    pub batches: usize,
    pub batch_size: usize,
}

impl ThroughputCi {
    /// The report's line.
    pub fn line(&self) -> String {
        format!(
            "events per second: {:.2} ({:.0}% CI {:.2} to {:.2}, ±{:.2}%; batch means: {} batches of {} intervals)",
            self.events_per_s,
            self.confidence * 100.0,
            self.low,
            self.high,
            if self.events_per_s > 0.0 {
                (self.high - self.events_per_s) / self.events_per_s * 100.0
            } else {
                0.0
            },
            self.batches,
            self.batch_size
        )
    }
}

/// The throughput interval of a run's measured intervals; None for fewer
/// than [`MIN_BATCH_VALUES`] of them (a last interval shorter than half
/// the first is left out).
pub fn analyse(doc: &RunDocument) -> Option<ThroughputCi> {
    let full = doc.intervals.first().map_or(0.0, |i| i.duration_s);
    let rates: Vec<f64> = doc
        .intervals
        .iter()
        .filter(|i| i.duration_s >= full / 2.0 && i.duration_s > 0.0)
        .map(|i| i.events_per_s)
        .collect();
    if rates.len() < MIN_BATCH_VALUES {
        return None;
    }
    let bm = batch_means_ci(&rates, LEVEL)?;
    Some(ThroughputCi {
        method: "batch_means".into(),
        confidence: LEVEL,
        events_per_s: bm.mean.estimate,
        low: bm.mean.low,
        high: bm.mean.high,
        intervals: rates.len(),
        batches: bm.batches,
        batch_size: bm.batch_size,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Interval;

    fn doc(rates: &[f64], last_s: f64) -> RunDocument {
        let n = rates.len();
        RunDocument {
            intervals: rates
                .iter()
                .enumerate()
                .map(|(i, &r)| Interval {
                    t_s: (i + 1) as f64,
                    duration_s: if i + 1 == n { last_s } else { 1.0 },
                    events_per_s: r,
                    ..Interval::default()
                })
                .collect(),
            ..RunDocument::default()
        }
    }

    #[test]
    fn needs_nine_full_intervals_and_brackets_the_mean() {
        assert!(analyse(&doc(&[100.0; 9], 0.2)).is_none());
        let rates: Vec<f64> = (0..16).map(|i| 100.0 + (i % 4) as f64).collect();
        let t = analyse(&doc(&rates, 1.0)).unwrap();
        assert_eq!((t.intervals, t.batches, t.batch_size), (16, 4, 4));
        assert!((t.events_per_s - 101.5).abs() < 1e-9);
        // Every batch holds one whole cycle: the batch means agree.
        assert!((t.high - t.low).abs() < 1e-9, "{t:?}");
        assert!(t.line().starts_with("events per second: 101.50 (95% CI"));
    }
}
