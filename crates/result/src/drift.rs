//! Drift over a long run (endurance tests): the trend of throughput, p99,
//! memory and the data's size on disk over the measured intervals, as a robust slope with a
//! confidence interval, and a plain word: stable, degrading or improving.
//!
//! The slope is Theil-Sen's (the median of the slopes between every pair
//! of intervals: a few outliers do not move it) and its 95% confidence
//! interval Sen's (1968), from the ordered pairwise slopes around the
//! median at ranks given by the variance of Kendall's S. A trend counts
//! only when its interval excludes 0; it is given in percent of the
//! series' median per hour.

use crate::RunDocument;
use serde::{Deserialize, Serialize};

/// The fewest measured intervals a run needs for its drift to be told.
pub const MIN_INTERVALS: usize = 20;
/// Series longer than this are averaged into this many bins first (the
/// pairwise slopes grow with the square of the length).
const MAX_POINTS: usize = 600;

/// The trend of one series.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Trend {
    /// `events_per_s`, `p99_ms`, `mem_used_bytes`, `server_rss_bytes`,
    /// `data_bytes`.
    pub metric: String,
    /// The series' median.
    pub median: f64,
    /// Change per hour, in the series' unit, and its 95% interval.
    pub slope_per_h: f64,
    pub slope_low_per_h: f64,
    pub slope_high_per_h: f64,
    /// The same in percent of the median per hour.
    pub pct_per_h: f64,
    pub pct_low_per_h: f64,
    pub pct_high_per_h: f64,
    /// `stable` (the interval holds 0), `rising` or `falling`.
    pub direction: String,
}

/// A run's drift.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Drift {
    /// Intervals the trends are made of.
    pub intervals: usize,
    pub trends: Vec<Trend>,
    /// `stable`, `degrading` (throughput falling or p99 rising) or
    /// `improving`.
    pub verdict: String,
}

impl Drift {
    /// The report's lines.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![format!(
            "{} over {} intervals",
            match self.verdict.as_str() {
                "degrading" => "DEGRADING",
                v => v,
            },
            self.intervals
        )];
        for t in &self.trends {
            out.push(format!(
                "{}: {:+.2}% per hour (95% CI {:+.2}% to {:+.2}%), {} (median {})",
                t.metric,
                t.pct_per_h,
                t.pct_low_per_h,
                t.pct_high_per_h,
                t.direction,
                shown(t.median)
            ));
        }
        out
    }
}

fn shown(v: f64) -> String {
    if v.abs() >= 1e6 {
        format!("{v:.3e}")
    } else {
        format!("{v:.2}")
    }
}

/// Theil-Sen's slope of `(x, y)` and Sen's 95% interval for it.
pub fn theil_sen(points: &[(f64, f64)]) -> Option<(f64, f64, f64)> {
    let n = points.len();
    if n < 3 {
        return None;
    }
    let mut slopes = Vec::with_capacity(n * (n - 1) / 2);
    for i in 0..n {
        for j in i + 1..n {
            let dx = points[j].0 - points[i].0;
            if dx > 0.0 {
                slopes.push((points[j].1 - points[i].1) / dx);
            }
        }
    }
    if slopes.is_empty() {
        return None;
    }
    slopes.sort_by(f64::total_cmp);
    let m = slopes.len();
    let median = if m % 2 == 1 {
        slopes[m / 2]
    } else {
        (slopes[m / 2 - 1] + slopes[m / 2]) / 2.0
    };
    // Var(S) without ties: n (n - 1) (2n + 5) / 18.
    let nf = n as f64;
    let c = 1.96 * (nf * (nf - 1.0) * (2.0 * nf + 5.0) / 18.0).sqrt();
    let lo = ((m as f64 - c) / 2.0).floor().max(0.0) as usize;
    let hi = (((m as f64 + c) / 2.0).ceil() as usize).min(m - 1);
    Some((median, slopes[lo.min(m - 1)], slopes[hi]))
}

/// Averages a long series into at most [`MAX_POINTS`] bins.
fn binned(points: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    if points.len() <= MAX_POINTS {
        return points;
    }
    let per = points.len().div_ceil(MAX_POINTS);
    points
        .chunks(per)
        .map(|c| {
            let k = c.len() as f64;
            (
                c.iter().map(|p| p.0).sum::<f64>() / k,
                c.iter().map(|p| p.1).sum::<f64>() / k,
            )
        })
        .collect()
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

fn trend(metric: &str, points: Vec<(f64, f64)>) -> Option<Trend> {
    let points = binned(points);
    let (slope, lo, hi) = theil_sen(&points)?;
    let med = median(&points.iter().map(|p| p.1).collect::<Vec<_>>());
    let pct = |v: f64| {
        if med.abs() > 0.0 {
            v * 3600.0 / med.abs() * 100.0
        } else {
            0.0
        }
    };
    let direction = if lo > 0.0 {
        "rising"
    } else if hi < 0.0 {
        "falling"
    } else {
        "stable"
    };
    Some(Trend {
        metric: metric.to_string(),
        median: med,
        slope_per_h: slope * 3600.0,
        slope_low_per_h: lo * 3600.0,
        slope_high_per_h: hi * 3600.0,
        pct_per_h: pct(slope),
        pct_low_per_h: pct(lo),
        pct_high_per_h: pct(hi),
        direction: direction.to_string(),
    })
}

/// The drift of a run's measured intervals, when it has enough of them
/// (a last interval shorter than half the others is left out).
pub fn analyse(doc: &RunDocument) -> Option<Drift> {
    let full = doc.intervals.first().map_or(0.0, |i| i.duration_s);
    let intervals: Vec<_> = doc
        .intervals
        .iter()
        .filter(|i| i.duration_s >= full / 2.0)
        .collect();
    if intervals.len() < MIN_INTERVALS {
        return None;
    }
    let mut trends = Vec::new();
    let tps = trend(
        "events_per_s",
        intervals.iter().map(|i| (i.t_s, i.events_per_s)).collect(),
    )?;
    trends.push(tps);
    let p99: Vec<(f64, f64)> = intervals
        .iter()
        .filter(|i| i.events > 0)
        .filter_map(|i| i.latency_ms.get(99.0).map(|p| (i.t_s, p)))
        .collect();
    if p99.len() >= MIN_INTERVALS {
        trends.extend(trend("p99_ms", p99));
    }
    if let Some(os) = &doc.os {
        // The OS series, each from the samples that have it.
        type Series = fn(&dbmeter_env::OsSample) -> Option<u64>;
        let series: [(&str, Series); 3] = [
            ("mem_used_bytes", |s| Some(s.mem_used_bytes)),
            ("server_rss_bytes", |s| s.server_rss_bytes),
            ("data_bytes", |s| s.data_bytes),
        ];
        for (metric, value) in series {
            let points: Vec<(f64, f64)> = os
                .samples
                .iter()
                .filter_map(|s| value(s).map(|v| (s.t_s, v as f64)))
                .collect();
            if points.len() >= MIN_INTERVALS {
                trends.extend(trend(metric, points));
            }
        }
    }
    let dir = |m: &str| {
        trends
            .iter()
            .find(|t| t.metric == m)
            .map(|t| t.direction.as_str())
    };
    let worse = dir("events_per_s") == Some("falling") || dir("p99_ms") == Some("rising");
    let better = dir("events_per_s") == Some("rising") || dir("p99_ms") == Some("falling");
    let verdict = if worse {
        "degrading"
    } else if better {
        "improving"
    } else {
        "stable"
    };
    Some(Drift {
        intervals: intervals.len(),
        trends,
        verdict: verdict.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn theil_sen_ignores_outliers_and_brackets_the_slope() {
        // y = 2x + 1 with two wild outliers.
        let mut p: Vec<(f64, f64)> = (0..30).map(|x| (x as f64, 2.0 * x as f64 + 1.0)).collect();
        p[5].1 = 1000.0;
        p[20].1 = -500.0;
        let (s, lo, hi) = theil_sen(&p).unwrap();
        assert!((s - 2.0).abs() < 1e-9, "{s}");
        assert!(lo <= 2.0 && hi >= 2.0, "{lo} {hi}");
        // Pure noise around a flat line: the interval holds 0.
        let flat: Vec<(f64, f64)> = (0..40)
            .map(|x| (x as f64, if x % 2 == 0 { 10.0 } else { 11.0 }))
            .collect();
        let (_, lo, hi) = theil_sen(&flat).unwrap();
        assert!(lo <= 0.0 && hi >= 0.0, "{lo} {hi}");
        assert!(theil_sen(&[(0.0, 1.0), (1.0, 2.0)]).is_none());
    }

    #[test]
    fn verdicts() {
        let mut doc = RunDocument::default();
        for i in 1..=40 {
            doc.intervals.push(crate::Interval {
                t_s: i as f64,
                duration_s: 1.0,
                events: 10,
                events_per_s: 1000.0 - 10.0 * i as f64,
                ..crate::Interval::default()
            });
        }
        let d = analyse(&doc).unwrap();
        assert_eq!(d.verdict, "degrading");
        assert_eq!(d.intervals, 40);
        let t = &d.trends[0];
        assert_eq!(t.direction, "falling");
        assert!((t.slope_per_h + 36_000.0).abs() < 1e-6, "{t:?}");
        assert!(
            d.lines()[0].starts_with("DEGRADING over 40 intervals"),
            "{:?}",
            d.lines()
        );
        doc.intervals.truncate(10);
        assert!(analyse(&doc).is_none());
    }

    #[test]
    fn memory_and_data_size_have_their_trends() {
        let mut doc = RunDocument::default();
        let mut os = dbmeter_env::sampler::OsRecord::default();
        for i in 1..=30 {
            doc.intervals.push(crate::Interval {
                t_s: i as f64,
                duration_s: 1.0,
                events: 10,
                events_per_s: if i % 2 == 0 { 100.0 } else { 101.0 },
                ..crate::Interval::default()
            });
            os.samples.push(dbmeter_env::sampler::OsSample {
                t_s: i as f64,
                mem_used_bytes: 1 << 30,
                server_rss_bytes: Some(500_000_000 + 1000 * i),
                // The data grows by 1 MB a second, and was not measured
                // every time.
                data_bytes: (i % 3 != 0).then_some(100_000_000 + 1_000_000 * i),
                ..Default::default()
            });
        }
        doc.os = Some(os);
        let d = analyse(&doc).unwrap();
        assert_eq!(d.verdict, "stable", "{d:?}");
        let t = |m: &str| {
            d.trends
                .iter()
                .find(|t| t.metric == m)
                .unwrap_or_else(|| panic!("{m}: {d:?}"))
        };
        assert_eq!(t("mem_used_bytes").direction, "stable");
        assert_eq!(t("server_rss_bytes").direction, "rising");
        let data = t("data_bytes");
        assert_eq!(data.direction, "rising");
        assert!((data.slope_per_h - 3.6e9).abs() < 1.0, "{data:?}");
        assert!(
            d.lines().iter().any(|l| l.contains("data_bytes")),
            "{:?}",
            d.lines()
        );
    }
}
