//! Spikes in a load profile, and how the system took them.
//!
//! A spike is a lasting stage whose level differs from a flat stage before
//! it, followed by a stage that ends at that earlier level again
//! (`--stages=0s:4,60s:4,0s:64,30s:64,0s:4,120s:4`: stage 4 is a spike
//! between stages 2 and 6). Its impact is its throughput and p99 against
//! the stage before; its recovery time runs from the spike's end to the
//! end of the first interval after it whose throughput is back within the
//! tolerance of the stage before and whose p99 is at most the tolerance
//! above it. A system that never gets there "did not recover".

use crate::{Interval, RunDocument, StageResult};
use serde::{Deserialize, Serialize};

/// How one spike went.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Spike {
    /// The spike's stage, the flat stage before it and the stage after it
    /// (their places in the profile, from 1).
    pub stage: usize,
    pub before: usize,
    pub after: usize,
    /// `users` or `rate`.
    pub profile: String,
    /// The level before, and the spike's highest (or, for a dip, lowest).
    pub level_before: f64,
    pub level_spike: f64,
    pub events_per_s_before: f64,
    pub events_per_s_spike: f64,
    /// The spike's over the stage before's.
    pub throughput_ratio: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_ms_before: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_ms_spike: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_ratio: Option<f64>,
    /// The tolerance of the recovery, in percent.
    pub tolerance_pct: f64,
    /// Seconds from the spike's end until the system was back; None when
    /// it did not recover before the run ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery_s: Option<f64>,
}

impl Spike {
    /// `stage4 (users 4->64): throughput 2.01x, p99 17.9x of stage2;
    /// recovered 3.0 s after it ended`.
    pub fn line(&self) -> String {
        let level = |v: f64| {
            let s = format!("{v:.2}");
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        };
        let mut s = format!(
            "stage{} ({} {}->{}): ",
            self.stage,
            self.profile,
            level(self.level_before),
            level(self.level_spike)
        );
        match self.throughput_ratio {
            Some(r) => s.push_str(&format!("throughput {r:.2}x")),
            None => s.push_str("throughput n/a"),
        }
        if let Some(r) = self.p99_ratio {
            s.push_str(&format!(", p99 {r:.2}x"));
        }
        s.push_str(&format!(" of stage{}; ", self.before));
        match self.recovery_s {
            Some(t) => s.push_str(&format!(
                "recovered {t:.1} s after it ended (within {}%)",
                level(self.tolerance_pct)
            )),
            None => s.push_str(&format!(
                "did not recover by the end of the run (within {}%)",
                level(self.tolerance_pct)
            )),
        }
        s
    }
}

fn flat(s: &StageResult) -> bool {
    (s.from - s.to).abs() < 1e-9
}

/// The p99 of an interval or a stage, in ms (the closest percentile the
/// run kept at or below 99 when it has no 99th).
fn p99(l: &dbmeter_stats::LatencySummary) -> Option<f64> {
    l.get(99.0).or_else(|| {
        l.percentiles
            .iter()
            .filter(|p| p.percentile <= 99.0)
            .max_by(|a, b| a.percentile.total_cmp(&b.percentile))
            .map(|p| p.ms)
    })
}

fn ratio(a: f64, b: f64) -> Option<f64> {
    (b > 0.0 && a.is_finite()).then(|| a / b)
}

/// The spikes of a run's profiles, with their impact and recovery.
pub fn analyse(doc: &RunDocument, tolerance_pct: f64) -> Vec<Spike> {
    let mut out = Vec::new();
    for profile in ["users", "rate"] {
        let stages: Vec<&StageResult> =
            doc.stages.iter().filter(|s| s.profile == profile).collect();
        for w in stages.windows(3) {
            let (p, s, q) = (w[0], w[1], w[2]);
            let base = p.to;
            let spike_level = if s.from.max(s.to) > base {
                s.from.max(s.to)
            } else {
                s.from.min(s.to)
            };
            if !flat(p) || (spike_level - base).abs() < 1e-9 || (q.to - base).abs() > 1e-9 {
                continue;
            }
            let tol = tolerance_pct / 100.0;
            let before_p99 = p99(&p.latency_ms);
            let recovered = |i: &Interval| {
                let tps_ok = (i.events_per_s - p.events_per_s).abs() <= tol * p.events_per_s;
                let p99_ok = match (p99(&i.latency_ms), before_p99) {
                    (Some(now), Some(before)) => now <= before * (1.0 + tol),
                    _ => true,
                };
                tps_ok && p99_ok
            };
            let recovery_s = doc
                .intervals
                .iter()
                .filter(|i| i.t_s - i.duration_s >= s.end_s - 1e-9)
                .find(|i| recovered(i))
                .map(|i| i.t_s - s.end_s);
            let spike_p99 = p99(&s.latency_ms);
            out.push(Spike {
                stage: s.index,
                before: p.index,
                after: q.index,
                profile: profile.to_string(),
                level_before: base,
                level_spike: spike_level,
                events_per_s_before: p.events_per_s,
                events_per_s_spike: s.events_per_s,
                throughput_ratio: ratio(s.events_per_s, p.events_per_s),
                p99_ms_before: before_p99,
                p99_ms_spike: spike_p99,
                p99_ratio: spike_p99.zip(before_p99).and_then(|(a, b)| ratio(a, b)),
                tolerance_pct,
                recovery_s,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use dbmeter_stats::{LatencySummary, Percentile};

    fn lat(p99: f64) -> LatencySummary {
        LatencySummary {
            percentiles: vec![Percentile {
                percentile: 99.0,
                ms: p99,
            }],
            ..LatencySummary::default()
        }
    }

    fn stage(
        index: usize,
        from: f64,
        to: f64,
        start: f64,
        end: f64,
        tps: f64,
        p: f64,
    ) -> StageResult {
        StageResult {
            index,
            profile: "rate".into(),
            start_s: start,
            end_s: end,
            from,
            to,
            events_per_s: tps,
            latency_ms: lat(p),
            ..StageResult::default()
        }
    }

    fn interval(t: f64, tps: f64, p: f64) -> Interval {
        Interval {
            t_s: t,
            duration_s: 1.0,
            events_per_s: tps,
            latency_ms: lat(p),
            ..Interval::default()
        }
    }

    #[test]
    fn finds_the_spike_and_its_recovery() {
        let mut doc = RunDocument::default();
        doc.stages = vec![
            stage(2, 100.0, 100.0, 0.0, 3.0, 100.0, 2.0),
            stage(4, 400.0, 400.0, 3.0, 5.0, 200.0, 900.0),
            stage(6, 100.0, 100.0, 5.0, 12.0, 150.0, 1500.0),
        ];
        doc.intervals = vec![
            interval(4.0, 200.0, 500.0),
            interval(5.0, 200.0, 900.0),
            interval(6.0, 200.0, 1800.0),
            interval(7.0, 200.0, 1500.0),
            interval(8.0, 105.0, 2.1),
            interval(9.0, 100.0, 2.0),
        ];
        let s = analyse(&doc, 10.0);
        assert_eq!(s.len(), 1);
        let s = &s[0];
        assert_eq!((s.stage, s.before, s.after), (4, 2, 6));
        assert_eq!(s.throughput_ratio, Some(2.0));
        assert_eq!(s.p99_ratio, Some(450.0));
        assert_eq!(s.recovery_s, Some(3.0));
        assert!(
            s.line()
                .contains("recovered 3.0 s after it ended (within 10%)"),
            "{}",
            s.line()
        );
        // Never back within 1%: did not recover.
        doc.intervals.truncate(5);
        let s = analyse(&doc, 1.0);
        assert_eq!(s[0].recovery_s, None);
        assert!(s[0].line().contains("did not recover"), "{}", s[0].line());
    }

    #[test]
    fn no_spike_without_a_return() {
        let mut doc = RunDocument::default();
        doc.stages = vec![
            stage(1, 0.0, 100.0, 0.0, 3.0, 50.0, 2.0),
            stage(2, 100.0, 100.0, 3.0, 5.0, 100.0, 2.0),
            stage(3, 100.0, 300.0, 5.0, 8.0, 200.0, 3.0),
        ];
        assert!(analyse(&doc, 10.0).is_empty());
    }
}
