//! What the report reads from stored run documents: the numbers behind its
//! charts and tables, taken from the JSON (`docs/json-schema.md`) rather
//! than typed structs, so documents of older or newer schema versions and
//! the minimal documents of failed runs can be shown side by side.

use dbmeter_stats::LatencyHistogram;
use serde_json::Value;

/// A run to show, as the caller found it (in the results store, say).
#[derive(Clone, Debug)]
pub struct ReportRun {
    /// The store's run id.
    pub id: i64,
    /// What the run stands for in comparisons: a campaign variant, a tag,
    /// or the run itself.
    pub variant: String,
    pub repeat: Option<u32>,
    pub doc: Value,
}

impl ReportRun {
    pub fn workload(&self) -> &str {
        self.doc["workload"].as_str().unwrap_or("?")
    }

    pub fn threads(&self) -> u64 {
        self.doc["threads"].as_u64().unwrap_or(0)
    }

    pub fn end_reason(&self) -> &str {
        self.doc["end"]["reason"].as_str().unwrap_or("unknown")
    }

    /// A run that ran to its limit; interrupted and failed runs are shown
    /// but not counted in medians.
    pub fn completed(&self) -> bool {
        matches!(self.end_reason(), "time_limit" | "event_limit")
    }

    pub fn tps(&self) -> Option<f64> {
        self.doc["totals"]["events_per_s"].as_f64()
    }

    /// A latency percentile of the whole run in ms: from the document's
    /// percentile list when it has it, else from the stored histogram.
    pub fn latency_ms(&self, p: f64) -> Option<f64> {
        percentile_of(&self.doc["latency_ms"], p).or_else(|| {
            self.histogram()
                .filter(|h| h.count() > 0)
                .map(|h| h.percentile(p) as f64 / 1e6)
        })
    }

    pub fn histogram(&self) -> Option<LatencyHistogram> {
        self.doc["latency_histogram"]
            .as_str()
            .and_then(|s| LatencyHistogram::from_base64(s).ok())
    }

    /// (end of interval s, events/s, p99 ms or else max ms) per interval.
    pub fn intervals(&self) -> Vec<(f64, f64, Option<f64>)> {
        self.doc["intervals"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|i| {
                        let t = i["t_s"].as_f64()?;
                        let tps = i["events_per_s"].as_f64()?;
                        let lat = &i["latency_ms"];
                        let p99 = percentile_of(lat, 99.0).or_else(|| lat["max_ms"].as_f64());
                        Some((t, tps, p99.filter(|_| lat["count"].as_u64() != Some(0))))
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The OS samples taken during the run.
    pub fn os_samples(&self) -> Vec<OsPoint> {
        self.doc["os"]["samples"]
            .as_array()
            .map(|a| a.iter().filter_map(OsPoint::of).collect())
            .unwrap_or_default()
    }
}

/// The value at percentile `p` in a latency summary object, if listed.
fn percentile_of(summary: &Value, p: f64) -> Option<f64> {
    summary["percentiles"].as_array()?.iter().find_map(|e| {
        let q = e["percentile"].as_f64()?;
        if (q - p).abs() < 1e-9 {
            e["ms"].as_f64()
        } else {
            None
        }
    })
}

/// One OS sample, reduced to what the charts show.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OsPoint {
    pub t_s: f64,
    pub user: f64,
    pub system: f64,
    pub iowait: f64,
    pub client_cpu: Option<f64>,
    pub server_cpu: Option<f64>,
    /// Summed over disks.
    pub read_kb_s: f64,
    pub write_kb_s: f64,
}

impl OsPoint {
    fn of(s: &Value) -> Option<OsPoint> {
        let disks = s["disks"].as_array();
        let sum = |field: &str| {
            disks
                .map(|d| d.iter().filter_map(|x| x[field].as_f64()).sum())
                .unwrap_or(0.0)
        };
        Some(OsPoint {
            t_s: s["t_s"].as_f64()?,
            user: s["cpu"]["user"].as_f64().unwrap_or(0.0),
            system: s["cpu"]["system"].as_f64().unwrap_or(0.0),
            iowait: s["cpu"]["iowait"].as_f64().unwrap_or(0.0),
            client_cpu: s["client_cpu_pct"].as_f64(),
            server_cpu: s["server_cpu_pct"].as_f64(),
            read_kb_s: sum("rkb_per_s"),
            write_kb_s: sum("wkb_per_s"),
        })
    }
}

/// The median of some numbers (the mean of the middle two for an even count).
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// A latency spectrum from a histogram: (1/(1-q), ms) for quantiles from
/// the median up to the last one the sample size supports.
pub fn spectrum(h: &LatencyHistogram) -> Vec<(f64, f64)> {
    let n = h.count();
    if n == 0 {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut nines = 1.0_f64; // q = 1 - 10^-nines, in steps of a third of a decade
    let steps = [0.5, 0.75, 0.8, 0.9];
    for q in steps {
        out.push((1.0 / (1.0 - q), h.percentile(q * 100.0) as f64 / 1e6));
    }
    loop {
        nines += 1.0 / 3.0;
        let tail = 10f64.powf(-nines);
        if tail * (n as f64) < 1.0 || nines > 6.0 {
            break;
        }
        out.push((1.0 / tail, h.percentile((1.0 - tail) * 100.0) as f64 / 1e6));
    }
    out.push((n as f64, h.max() as f64 / 1e6));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn medians() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
    }

    #[test]
    fn reads_a_document_and_a_failed_one() {
        let mut h = LatencyHistogram::new();
        for i in 1..=1000u64 {
            h.record(i * 1_000_000);
        }
        let r = ReportRun {
            id: 1,
            variant: "a".into(),
            repeat: Some(1),
            doc: json!({
                "workload": "oltp_read_only", "threads": 4,
                "end": {"reason": "time_limit"},
                "totals": {"events_per_s": 100.5},
                "latency_ms": {"percentiles": [{"percentile": 95.0, "ms": 2.0}]},
                "latency_histogram": h.to_base64(),
                "intervals": [{"t_s": 1.0, "events_per_s": 99.0,
                    "latency_ms": {"count": 5, "max_ms": 3.0, "percentiles": [{"percentile": 99.0, "ms": 2.5}]}}],
                "os": {"samples": [{"t_s": 1.0, "cpu": {"user": 10.0, "system": 5.0, "iowait": 1.0},
                    "disks": [{"rkb_per_s": 1.0, "wkb_per_s": 2.0}, {"rkb_per_s": 3.0, "wkb_per_s": 4.0}],
                    "client_cpu_pct": 20.0}]}
            }),
        };
        assert!(r.completed());
        assert_eq!(r.threads(), 4);
        assert_eq!(r.tps(), Some(100.5));
        assert_eq!(r.latency_ms(95.0), Some(2.0));
        let p99 = r.latency_ms(99.0).unwrap();
        assert!((989.0..=991.0).contains(&p99), "{p99}");
        assert_eq!(r.intervals(), vec![(1.0, 99.0, Some(2.5))]);
        let os = r.os_samples();
        assert_eq!(os[0].read_kb_s, 4.0);
        assert_eq!(os[0].write_kb_s, 6.0);
        assert_eq!(os[0].server_cpu, None);
        let s = spectrum(&r.histogram().unwrap());
        assert_eq!(s.first().map(|p| p.0), Some(2.0));
        assert_eq!(s.last(), Some(&(1000.0, 1000.0)));

        let failed = ReportRun {
            id: 2,
            variant: "a".into(),
            repeat: None,
            doc: json!({"workload": "w", "end": {"reason": "failed", "error": "x"}}),
        };
        assert!(!failed.completed());
        assert_eq!(failed.tps(), None);
        assert_eq!(failed.latency_ms(99.0), None);
        assert!(failed.intervals().is_empty());
    }
}
