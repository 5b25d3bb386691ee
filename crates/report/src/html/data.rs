//! What the report reads from stored run documents (the typed
//! `RunDocument`, which reads every schema version and the short documents
//! of failed runs): the numbers behind its charts and tables.

use dbmeter_env::OsSample;
use dbmeter_result::RunDocument;
use dbmeter_stats::LatencyHistogram;

/// A run to show, as the caller found it (in the results store, say).
#[derive(Clone, Debug)]
pub struct ReportRun {
    /// The store's run id.
    pub id: i64,
    /// What the run stands for in comparisons: a campaign variant, a tag,
    /// or the run itself.
    pub variant: String,
    pub repeat: Option<u32>,
    pub doc: RunDocument,
}

impl ReportRun {
    pub fn workload(&self) -> &str {
        &self.doc.workload
    }

    pub fn threads(&self) -> u64 {
        self.doc.threads as u64
    }

    pub fn end_reason(&self) -> &str {
        &self.doc.end.reason
    }

    /// A run that ran to its end; interrupted and failed runs are shown
    /// but not counted in medians.
    pub fn completed(&self) -> bool {
        self.doc.completed()
    }

    /// Events per second (None for a run that measured nothing).
    pub fn tps(&self) -> Option<f64> {
        (self.doc.totals.duration_s > 0.0).then_some(self.doc.totals.events_per_s)
    }

    /// A latency percentile of the whole run in ms.
    pub fn latency_ms(&self, p: f64) -> Option<f64> {
        self.doc.latency_percentile_ms(p)
    }

    pub fn max_latency_ms(&self) -> Option<f64> {
        (self.doc.latency_ms.count > 0).then_some(self.doc.latency_ms.max_ms)
    }

    pub fn histogram(&self) -> Option<LatencyHistogram> {
        self.doc.histogram()
    }

    /// (end of interval s, events/s, p99 ms or else max ms) per interval.
    pub fn intervals(&self) -> Vec<(f64, f64, Option<f64>)> {
        self.doc
            .intervals
            .iter()
            .map(|i| {
                let lat = &i.latency_ms;
                let p99 = lat.get(99.0).unwrap_or(lat.max_ms);
                (i.t_s, i.events_per_s, (lat.count != 0).then_some(p99))
            })
            .collect()
    }

    /// The OS samples taken during the run.
    pub fn os_samples(&self) -> Vec<OsPoint> {
        self.doc
            .os
            .as_ref()
            .map(|os| os.samples.iter().map(OsPoint::of).collect())
            .unwrap_or_default()
    }
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
    fn of(s: &OsSample) -> OsPoint {
        OsPoint {
            t_s: s.t_s,
            user: s.cpu.user,
            system: s.cpu.system,
            iowait: s.cpu.iowait,
            client_cpu: s.client_cpu_pct,
            server_cpu: s.server_cpu_pct,
            read_kb_s: s.disks.iter().map(|d| d.rkb_per_s).sum(),
            write_kb_s: s.disks.iter().map(|d| d.wkb_per_s).sum(),
        }
    }
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

    fn doc(v: serde_json::Value) -> RunDocument {
        RunDocument::from_json(&v.to_string()).unwrap()
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
            doc: doc(json!({
                "schema": "dbmeter.run", "workload": "read_mostly", "threads": 4,
                "end": {"reason": "time_limit"},
                "totals": {"duration_s": 10.0, "events_per_s": 100.5},
                "latency_ms": {"percentiles": [{"percentile": 95.0, "ms": 2.0}]},
                "latency_histogram": h.to_base64(),
                "intervals": [{"t_s": 1.0, "events_per_s": 99.0,
                    "latency_ms": {"count": 5, "max_ms": 3.0, "percentiles": [{"percentile": 99.0, "ms": 2.5}]}}],
                "os": {"samples": [{"t_s": 1.0, "cpu": {"user": 10.0, "system": 5.0, "iowait": 1.0},
                    "disks": [{"rkb_per_s": 1.0, "wkb_per_s": 2.0}, {"rkb_per_s": 3.0, "wkb_per_s": 4.0}],
                    "client_cpu_pct": 20.0}]}
            })),
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
            doc: doc(json!({"schema": "dbmeter.run", "workload": "w",
                "end": {"reason": "failed", "error": "x"}})),
        };
        assert!(!failed.completed());
        assert_eq!(failed.tps(), None);
        assert_eq!(failed.latency_ms(99.0), None);
        assert!(failed.intervals().is_empty());
    }
}
