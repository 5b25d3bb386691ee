//! Adaptive repeats (`repeats = "auto"`): a cell runs again until the
//! confidence interval of its median throughput is narrow enough, or it
//! has had `max_repeats` runs. The campaign's order is kept (interleaved:
//! a round of every cell still open, then the next round), so that the
//! cells' repeats stay spread over the campaign's time as fixed repeats
//! are.
//!
//! The interval is the percentile bootstrap of the median at 95%
//! (`dbmeter_stats::inference::median_ci`, seeded, as `compare` draws its
//! intervals), over the cell's completed runs' events per second; its
//! width is relative to the median.

use crate::spec::Adaptive;
use dbmeter_stats::inference::{DEFAULT_RESAMPLES, DEFAULT_SEED, median_ci};
use dbmeter_store::{AdaptiveCell, CellStop};
use std::collections::BTreeMap;

/// Why a cell stopped repeating.
#[derive(Clone, Debug, PartialEq)]
pub enum Stop {
    /// Its interval's relative width came within the target.
    Settled,
    /// It had its `max_repeats` runs first.
    MaxRepeats,
}

/// One cell's runs so far.
#[derive(Clone, Debug, Default)]
pub struct CellRuns {
    /// Runs made (completed or not).
    pub runs: u32,
    /// Events per second of the completed ones.
    pub values: Vec<f64>,
    /// The interval's relative width after the last completed run, once
    /// there are two.
    pub width: Option<f64>,
    pub stop: Option<Stop>,
}

/// The cells of a campaign with adaptive repeats, by cell key.
pub struct Judge {
    settings: Adaptive,
    cells: BTreeMap<String, CellRuns>,
}

impl Judge {
    pub fn new(settings: Adaptive) -> Judge {
        Judge {
            settings,
            cells: BTreeMap::new(),
        }
    }

    /// Whether the cell has stopped repeating.
    pub fn stopped(&self, key: &str) -> bool {
        self.cells.get(key).is_some_and(|c| c.stop.is_some())
    }

    /// Counts a run of the cell: `events_per_s` when it completed. Returns
    /// the cell's state after it.
    pub fn add(&mut self, key: &str, events_per_s: Option<f64>) -> &CellRuns {
        let s = self.settings;
        let c = self.cells.entry(key.to_string()).or_default();
        c.runs += 1;
        if let Some(v) = events_per_s.filter(|v| v.is_finite()) {
            c.values.push(v);
            if c.values.len() >= 2 {
                c.width = median_ci(&c.values, Adaptive::LEVEL, DEFAULT_RESAMPLES, DEFAULT_SEED)
                    .map(|i| i.relative_width());
            }
        }
        if c.stop.is_none() {
            if c.values.len() as u32 >= s.min && c.width.is_some_and(|w| w <= s.ci_width) {
                c.stop = Some(Stop::Settled);
            } else if c.runs >= s.max {
                c.stop = Some(Stop::MaxRepeats);
            }
        }
        c
    }

    /// Every cell judged so far, by key.
    pub fn cells(&self) -> &BTreeMap<String, CellRuns> {
        &self.cells
    }

    /// The cell's state as the store keeps it (`campaign`'s cell `key`).
    pub fn record(&self, campaign: &str, key: &str, c: &CellRuns) -> AdaptiveCell {
        AdaptiveCell {
            campaign: campaign.to_string(),
            cell: key.to_string(),
            runs: c.runs,
            completed: u32::try_from(c.values.len()).unwrap_or(u32::MAX),
            ci_width: c.width,
            target_width: self.settings.ci_width,
            max_repeats: self.settings.max,
            stop: match c.stop {
                Some(Stop::Settled) => CellStop::Settled,
                Some(Stop::MaxRepeats) => CellStop::MaxRepeats,
                None => CellStop::Open,
            },
            updated_at: String::new(),
        }
    }

    /// "4 runs (4 completed), 95% CI width 1.8% (target 5%): settled".
    pub fn describe(&self, c: &CellRuns) -> String {
        self.record("", "", c).describe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judge() -> Judge {
        Judge::new(Adaptive {
            ci_width: 0.05,
            min: 4,
            max: 6,
        })
    }

    #[test]
    fn a_quiet_cell_settles_after_its_minimum() {
        let mut j = judge();
        for (i, v) in [1000.0, 1004.0, 998.0].into_iter().enumerate() {
            let c = j.add("a", Some(v));
            assert_eq!(c.runs, i as u32 + 1);
            assert_eq!(c.stop, None);
        }
        let c = j.add("a", Some(1001.0)).clone();
        assert_eq!(c.stop, Some(Stop::Settled));
        assert!(c.width.unwrap() <= 0.05);
        assert!(j.stopped("a"));
        assert!(!j.stopped("b"));
        assert!(
            j.describe(&c).ends_with("(target 5%): settled"),
            "{}",
            j.describe(&c)
        );
    }

    #[test]
    fn a_noisy_cell_stops_at_its_maximum() {
        let mut j = judge();
        for v in [1000.0, 1500.0, 700.0, 1300.0, 900.0] {
            assert_eq!(j.add("a", Some(v)).stop, None);
        }
        let c = j.add("a", Some(1200.0)).clone();
        assert_eq!(c.stop, Some(Stop::MaxRepeats));
        assert!(c.width.unwrap() > 0.05);
        assert!(j.describe(&c).contains("stopped at max_repeats (6)"));
    }

    #[test]
    fn failed_runs_count_as_runs_without_a_value() {
        let mut j = judge();
        for _ in 0..5 {
            j.add("a", None);
        }
        let c = j.add("a", None).clone();
        assert_eq!((c.runs, c.values.len(), c.width), (6, 0, None));
        assert_eq!(c.stop, Some(Stop::MaxRepeats));
    }
}
