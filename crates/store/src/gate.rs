//! The regression gate of `dbmeter compare --fail-on`: thresholds such as
//! `tps:-3%` or `p99:+10%`, each checked against every cell of its
//! metric's comparison. A check fails only when the cell's change is
//! statistically significant (its verdict is faster or slower, see
//! [`crate::CellStats`]) and its ratio of medians lies beyond the
//! threshold in the threshold's direction.
//!
//! A check is *inconclusive* when it cannot tell whether the threshold was
//! crossed: its cell has no statistics, a side has too few repeats, or the
//! change is not significant but its interval reaches past the threshold
//! (a too noisy cell, usually). Such a
//! check passes, unless `compare --fail-on-inconclusive` makes it fail
//! ([`fail_inconclusive`]).

use crate::compare::{Comparison, Metric, Verdict};
use serde::Serialize;

/// One `--fail-on` threshold.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FailOn {
    /// As the user wrote it, e.g. `tps:-3%`.
    pub text: String,
    pub metric: Metric,
    /// The change in percent that fails, with its sign: -3 means a drop
    /// of more than 3%, +10 a rise of more than 10%.
    pub change_pct: f64,
}

impl FailOn {
    /// Parses `METRIC:CHANGE%`: a metric `compare --metric` takes (not
    /// `auto`), and a change in percent, `-3%` or `+10%`. Without a sign
    /// the change is in the metric's bad direction: down for tps and qps,
    /// up for latencies and figures. The error is one line.
    pub fn parse(text: &str) -> Result<FailOn, String> {
        let hint = "expected METRIC:CHANGE%, e.g. tps:-3% or p99:+10%";
        let (name, change) = text
            .split_once(':')
            .ok_or_else(|| format!("--fail-on={text}: {hint}"))?;
        let metric = Metric::parse(name.trim())
            .filter(|m| *m != Metric::Auto)
            .ok_or_else(|| {
                format!(
                    "--fail-on={text}: unknown metric '{}'; one of tps, qps, p95, p99, avg, figures",
                    name.trim()
                )
            })?;
        let change = change.trim();
        let number = change.strip_suffix('%').unwrap_or(change).trim();
        let signed = number.starts_with('+') || number.starts_with('-');
        let value: f64 = number
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite())
            .ok_or_else(|| format!("--fail-on={text}: '{change}' is not a change in %; {hint}"))?;
        let change_pct = if signed {
            value
        } else if metric.lower_is_better() {
            value.abs()
        } else {
            -value.abs()
        };
        if change_pct <= -100.0 || change_pct.abs() > 1e6 {
            return Err(format!(
                "--fail-on={text}: a change must lie above -100% and within ±1000000%"
            ));
        }
        Ok(FailOn {
            text: text.to_string(),
            metric,
            change_pct,
        })
    }

    /// True when the threshold is a rise (the metric going up fails).
    pub fn rising(&self) -> bool {
        self.change_pct > 0.0 || (self.change_pct == 0.0 && self.metric.lower_is_better())
    }

    /// The threshold in words, e.g. `tps down by more than 3%`.
    pub fn describe(&self) -> String {
        format!(
            "{} {} by more than {}%",
            self.metric.name(),
            if self.rising() { "up" } else { "down" },
            trim(self.change_pct.abs())
        )
    }
}

fn trim(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// What one check found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Pass,
    Fail,
    /// The cell has no statistics (a timeout, a baseline of 0).
    NotJudged,
}

/// One threshold checked against one cell.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Check {
    /// The threshold, as written.
    pub fail_on: String,
    pub metric: Metric,
    pub workload: String,
    pub variant: Option<String>,
    pub threads: u32,
    pub outcome: Outcome,
    /// The cell's ratio of medians and its interval, when it has them.
    pub ratio: Option<f64>,
    pub ratio_low: Option<f64>,
    pub ratio_high: Option<f64>,
    pub p_value: Option<f64>,
    /// The cell's verdict in words.
    pub verdict: Option<String>,
    /// True when the check cannot tell whether the threshold was crossed
    /// (see the module's documentation).
    pub inconclusive: bool,
    /// One line saying why it passed or failed.
    pub line: String,
}

impl Check {
    /// The cell's name, e.g. `oltp_read_only, 8 threads` (with the
    /// variant when the table has one).
    pub fn cell(&self) -> String {
        let threads = if self.threads == 1 {
            "1 thread".to_string()
        } else {
            format!("{} threads", self.threads)
        };
        match &self.variant {
            Some(v) => format!("{} {v}, {threads}", self.workload),
            None => format!("{}, {threads}", self.workload),
        }
    }
}

/// Checks a threshold against every cell of `table` (a comparison in the
/// threshold's metric).
pub fn check(rule: &FailOn, table: &Comparison) -> Vec<Check> {
    let limit = 1.0 + rule.change_pct / 100.0;
    let rising = rule.rising();
    let mut out = Vec::new();
    for row in &table.rows {
        for (t, cell) in table.threads.iter().zip(&row.cells) {
            let Some(cell) = cell else { continue };
            let mut c = Check {
                fail_on: rule.text.clone(),
                metric: table.options.metric,
                workload: row.workload.clone(),
                variant: row.variant.clone(),
                threads: *t,
                outcome: Outcome::NotJudged,
                ratio: None,
                ratio_low: None,
                ratio_high: None,
                p_value: None,
                verdict: None,
                inconclusive: true,
                line: String::new(),
            };
            let Some(st) = &cell.stats else {
                c.line = if cell.timeout {
                    "not judged: a run timed out".into()
                } else {
                    "not judged: no ratio (a baseline value of 0)".into()
                };
                out.push(c);
                continue;
            };
            c.ratio = Some(st.ratio);
            c.ratio_low = Some(st.ratio_low);
            c.ratio_high = Some(st.ratio_high);
            c.p_value = Some(st.p_value);
            c.verdict = Some(st.verdict.words().to_string());
            let change = (st.ratio - 1.0) * 100.0;
            let beyond = if rising {
                st.ratio > limit
            } else {
                st.ratio < limit
            };
            let same_way = if rising {
                st.ratio > 1.0
            } else {
                st.ratio < 1.0
            };
            let failed = st.significant() && same_way && beyond;
            // Whether the interval reaches past the threshold.
            let may_cross = if rising {
                st.ratio_high > limit
            } else {
                st.ratio_low < limit
            };
            c.inconclusive = match st.verdict {
                Verdict::TooFewRepeats => true,
                Verdict::TooNoisy | Verdict::NoSignificantDifference => may_cross,
                Verdict::Faster | Verdict::Slower => false,
            };
            c.outcome = if failed { Outcome::Fail } else { Outcome::Pass };
            let measured = format!(
                "{change:+.2}% ({:.0}% CI {:+.2}% to {:+.2}%, p = {:.4}, {})",
                st.confidence * 100.0,
                (st.ratio_low - 1.0) * 100.0,
                (st.ratio_high - 1.0) * 100.0,
                st.p_value,
                st.verdict.words()
            );
            c.line = if failed {
                format!("FAIL: {} {measured}", rule.metric.name())
            } else if !st.significant() || !same_way {
                format!("pass: {} {measured}", rule.metric.name())
            } else {
                format!(
                    "pass: {} {measured}, within the threshold",
                    rule.metric.name()
                )
            };
            out.push(c);
        }
    }
    out
}

/// `--fail-on-inconclusive`: every inconclusive check fails, its line
/// saying so. Returns how many did.
pub fn fail_inconclusive(checks: &mut [Check]) -> usize {
    let mut n = 0;
    for c in checks
        .iter_mut()
        .filter(|c| c.inconclusive && c.outcome != Outcome::Fail)
    {
        let why = c.line.strip_prefix("pass: ").unwrap_or(&c.line);
        c.line = format!("FAIL (inconclusive, --fail-on-inconclusive): {why}");
        c.outcome = Outcome::Fail;
        n += 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_refuses() {
        let f = FailOn::parse("tps:-3%").unwrap();
        assert_eq!((f.metric, f.change_pct), (Metric::Tps, -3.0));
        assert_eq!(f.describe(), "tps down by more than 3%");
        let f = FailOn::parse("p99:+10%").unwrap();
        assert_eq!((f.metric, f.change_pct), (Metric::P99, 10.0));
        assert!(f.rising());
        // No sign: the bad direction.
        assert_eq!(FailOn::parse("tps:5").unwrap().change_pct, -5.0);
        assert_eq!(FailOn::parse("P95:2.5%").unwrap().change_pct, 2.5);
        assert!(FailOn::parse("p99:0%").unwrap().rising());
        assert!(!FailOn::parse("tps:0%").unwrap().rising());
        for (bad, want) in [
            ("tps", "expected METRIC:CHANGE%"),
            ("tpm:-3%", "unknown metric 'tpm'"),
            ("auto:-3%", "unknown metric 'auto'"),
            ("tps:x%", "is not a change in %"),
            ("tps:NaN%", "is not a change in %"),
            ("tps:-100%", "above -100%"),
            ("tps:", "is not a change in %"),
        ] {
            let e = FailOn::parse(bad).unwrap_err();
            assert!(e.contains(want), "{bad}: {e}");
            assert!(!e.contains('\n'));
        }
    }
}
