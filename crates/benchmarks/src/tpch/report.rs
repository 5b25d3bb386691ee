//! tpch's section of the result: every query of every stream with its
//! runs, the value extracted from them, its plan; the refresh functions;
//! the metrics (Power@Size, Throughput@Size, QphH@Size, or the geometric
//! mean when the refresh functions are off); and its text.

use dbmeter_env::MachineDelta;
use dbmeter_result::{Figure, HookRecord};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write;

/// One execution of a query.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct QueryRun {
    pub seconds: f64,
    /// Cancelled at --query-timeout (by the server or killed by dbmeter).
    #[serde(default)]
    pub timeout: bool,
    /// A hash of the plan this run had (best-plan extraction).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_hash: Option<String>,
    /// What the machine did during the run (all of it: a local server's
    /// work shows, and so do other streams').
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os: Option<MachineDelta>,
    /// The server's counters that moved during the run (MySQL/MariaDB
    /// `SHOW GLOBAL STATUS`, PostgreSQL `pg_stat_database`): after - before.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub counters: BTreeMap<String, f64>,
    /// The query hooks run around it (`before_query`, `after_query`), with
    /// their output.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hooks: Vec<HookRecord>,
}

/// One query of one stream.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct QueryResult {
    pub query: u8,
    pub stream: u32,
    /// Its place in the stream (1-based).
    pub position: u32,
    /// The substitution parameters.
    pub parameters: Vec<String>,
    /// Measured runs, in order (warm-up runs are not kept).
    pub runs: Vec<QueryRun>,
    /// ok, timeout, error, or interrupted (the run stopped during its
    /// runs; the runs it had are kept).
    pub status: String,
    /// The query's time by the extraction method; None for a timeout or
    /// an error.
    pub seconds: Option<f64>,
    pub min_seconds: Option<f64>,
    pub max_seconds: Option<f64>,
    /// Rows of its answer (last run).
    pub rows: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// EXPLAIN's text (of the fastest run's plan).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<String>,
}

/// One refresh function.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RefreshResult {
    /// RF1 or RF2.
    pub name: String,
    pub stream: u32,
    pub update_set: u32,
    pub seconds: f64,
    /// Orders inserted or deleted.
    pub rows: u64,
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The TPC-H metrics, each only when its test ran completely.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    pub power_at_size: Option<f64>,
    pub throughput_at_size: Option<f64>,
    pub qphh_at_size: Option<f64>,
    /// Geometric mean of the power stream's query times (s).
    pub geomean_seconds: Option<f64>,
    /// The throughput test's measurement interval Ts (s).
    pub throughput_seconds: Option<f64>,
    /// Why a metric is missing, or how it was computed.
    pub notes: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TpchResult {
    /// power or throughput.
    pub test: String,
    pub scale_factor: f64,
    /// Query streams (power: 1).
    pub streams: u32,
    pub refresh: bool,
    /// Validation parameters instead of drawn ones.
    pub validation: bool,
    /// The qgen seed of stream 0 (stream s uses seed + s).
    pub qgen_seed: u64,
    pub runs: u32,
    pub warmup_runs: u32,
    pub extract: String,
    pub query_timeout_seconds: Option<f64>,
    /// Cold: the server restarted and the page cache dropped before each
    /// measured run.
    #[serde(default)]
    pub cold: bool,
    #[serde(default)]
    pub restarts: u64,
    /// What the cold starts could not do.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cold_notes: Vec<String>,
    pub queries: Vec<QueryResult>,
    pub refreshes: Vec<RefreshResult>,
    pub metrics: Metrics,
}

/// The key of tpch's section in the run document.
pub const SECTION: &str = "tpch";

fn geomean(times: &[f64]) -> Option<f64> {
    if times.is_empty() || times.iter().any(|t| *t <= 0.0) {
        return None;
    }
    Some((times.iter().map(|t| t.ln()).sum::<f64>() / times.len() as f64).exp())
}

/// Power@Size (clause 5.4.1): 3600 x SF over the geometric mean of the
/// 22 query and 2 refresh times, times below max/1000 raised to it.
pub fn power_at_size(sf: f64, times: &[f64]) -> Option<f64> {
    let max = times.iter().copied().fold(0.0, f64::max);
    let floor = max / 1000.0;
    let raised: Vec<f64> = times.iter().map(|t| t.max(floor)).collect();
    geomean(&raised).map(|g| 3600.0 * sf / g)
}

/// Throughput@Size (clause 5.4.2): S x 22 x 3600 / Ts x SF.
pub fn throughput_at_size(sf: f64, streams: u32, ts: f64) -> Option<f64> {
    (ts > 0.0).then(|| f64::from(streams) * 22.0 * 3600.0 / ts * sf)
}

impl TpchResult {
    /// Fills in the metrics from the queries and refreshes; `ts` is the
    /// throughput test's measured time.
    pub fn compute_metrics(&mut self, ts: Option<f64>) {
        let mut m = Metrics::default();
        let has_power = self.test != "throughput";
        let has_throughput = self.test != "power";
        let times = |stream: u32| -> Vec<f64> {
            self.queries
                .iter()
                .filter(|q| q.stream == stream)
                .filter_map(|q| q.seconds)
                .collect()
        };
        let refreshes_ok = |stream: u32| -> Vec<f64> {
            self.refreshes
                .iter()
                .filter(|r| r.stream == stream && r.status == "ok")
                .map(|r| r.seconds)
                .collect()
        };
        if has_power {
            let q = times(0);
            m.geomean_seconds = geomean(&q);
            if q.len() != 22 {
                m.notes.push(format!(
                    "no Power@Size: {} of 22 queries have a time (a subset, timeouts or errors); geometric mean of those",
                    q.len()
                ));
            } else if !self.refresh {
                m.notes.push(
                    "refresh functions off: no Power@Size; the geometric mean of the 22 query times instead".into(),
                );
            } else {
                let rf = refreshes_ok(0);
                if rf.len() == 2 {
                    let all: Vec<f64> = q.iter().chain(&rf).copied().collect();
                    m.power_at_size = power_at_size(self.scale_factor, &all);
                } else {
                    m.notes
                        .push("no Power@Size: a refresh function did not complete".into());
                }
            }
        }
        if has_throughput {
            let complete = (1..=self.streams).all(|s| times(s).len() == 22);
            let refreshed =
                !self.refresh || refreshes_ok(self.streams + 1).len() == 2 * self.streams as usize;
            m.throughput_seconds = ts;
            if !has_power {
                let done: Vec<f64> = self.queries.iter().filter_map(|q| q.seconds).collect();
                m.geomean_seconds = geomean(&done);
            }
            match (complete, refreshed, ts) {
                (true, true, Some(ts)) => {
                    m.throughput_at_size = throughput_at_size(self.scale_factor, self.streams, ts);
                    if !self.refresh {
                        m.notes.push(
                            "refresh functions off: Throughput@Size of the query streams alone".into(),
                        );
                    }
                }
                _ => m.notes.push(
                    "no Throughput@Size: not every stream ran its 22 queries (and refresh pairs) to the end".into(),
                ),
            }
        }
        if let (Some(p), Some(t)) = (m.power_at_size, m.throughput_at_size) {
            m.qphh_at_size = Some((p * t).sqrt());
        } else if has_power && has_throughput {
            m.notes
                .push("no QphH@Size: it needs both Power@Size and Throughput@Size".into());
        }
        self.metrics = m;
    }
}

/// The figures a comparison reads, one per query in query order (over
/// the streams of a throughput test: the mean; a timeout in any stream
/// makes the query a timeout), then RF1 and RF2.
pub fn figures(r: &TpchResult) -> Vec<Figure> {
    let mut out = Vec::new();
    for q in 1..=22u8 {
        let runs: Vec<&QueryResult> = r.queries.iter().filter(|x| x.query == q).collect();
        if runs.is_empty() {
            continue;
        }
        let status = if runs.iter().any(|x| x.status == "error") {
            "error"
        } else if runs.iter().any(|x| x.status == "interrupted") {
            "interrupted"
        } else if runs.iter().any(|x| x.seconds.is_none()) {
            Figure::TIMEOUT
        } else {
            "ok"
        };
        let values: Vec<f64> = runs.iter().filter_map(|x| x.seconds).collect();
        let ok = status == "ok";
        out.push(Figure {
            name: format!("Q{q}"),
            value: ok.then(|| values.iter().sum::<f64>() / values.len() as f64),
            min: runs
                .iter()
                .filter_map(|x| x.min_seconds)
                .min_by(f64::total_cmp),
            max: runs
                .iter()
                .filter_map(|x| x.max_seconds)
                .max_by(f64::total_cmp),
            unit: "s".into(),
            lower_is_better: true,
            status: status.into(),
            detail: runs.iter().find_map(|x| x.plan.clone()),
        });
    }
    for name in ["RF1", "RF2"] {
        let done: Vec<&RefreshResult> = r.refreshes.iter().filter(|x| x.name == name).collect();
        if done.is_empty() {
            continue;
        }
        let ok = done.iter().all(|x| x.status == "ok");
        out.push(Figure {
            name: name.into(),
            value: ok.then(|| done.iter().map(|x| x.seconds).sum::<f64>() / done.len() as f64),
            min: None,
            max: None,
            unit: "s".into(),
            lower_is_better: true,
            status: if ok { "ok" } else { "error" }.into(),
            detail: None,
        });
    }
    out
}

fn fmt_s(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |s| format!("{s:.3}"))
}

/// The text of the section, after the common report.
pub fn text(r: &TpchResult) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "TPC-H {} test, SF {}, {} stream{}{}; {} run{} per query ({}){}{}",
        r.test,
        super::sf_text(r.scale_factor),
        r.streams,
        if r.streams == 1 { "" } else { "s" },
        if r.refresh {
            ", refresh functions on"
        } else {
            ", refresh functions off"
        },
        r.runs,
        if r.runs == 1 { "" } else { "s" },
        r.extract,
        if r.validation {
            ", validation parameters".to_string()
        } else {
            format!(", qgen seed {}", r.qgen_seed)
        },
        r.query_timeout_seconds
            .map_or(String::new(), |t| format!(", timeout {t} s")),
    );
    if r.cold {
        let _ = writeln!(
            s,
            "Cold: {} server restart{} and the page cache dropped before each measured run",
            r.restarts,
            if r.restarts == 1 { "" } else { "s" }
        );
        for n in &r.cold_notes {
            let _ = writeln!(s, "Note: {n}");
        }
    }
    let _ = writeln!(
        s,
        "{:>6} {:>6} {:>10} {:>10} {:>10} {:>8}  status",
        "stream", "query", "time (s)", "min (s)", "max (s)", "rows"
    );
    for q in &r.queries {
        let status = match (&q.status[..], &q.error) {
            ("timeout", _) => "TIMEOUT".to_string(),
            (_, Some(e)) => format!("ERROR: {e}"),
            (st, None) => st.to_string(),
        };
        let _ = writeln!(
            s,
            "{:>6} {:>6} {:>10} {:>10} {:>10} {:>8}  {status}",
            q.stream,
            format!("Q{}", q.query),
            fmt_s(q.seconds),
            fmt_s(q.min_seconds),
            fmt_s(q.max_seconds),
            q.rows,
        );
    }
    for f in &r.refreshes {
        let _ = writeln!(
            s,
            "{:>6} {:>6} {:>10} {:>10} {:>10} {:>8}  {}{}",
            f.stream,
            f.name,
            format!("{:.3}", f.seconds),
            "",
            "",
            f.rows,
            f.status,
            f.error.as_ref().map_or(String::new(), |e| format!(": {e}")),
        );
    }
    let m = &r.metrics;
    if let Some(p) = m.power_at_size {
        let _ = writeln!(s, "Power@{}: {p:.1}", super::sf_text(r.scale_factor));
    }
    if let Some(t) = m.throughput_at_size {
        let _ = writeln!(s, "Throughput@{}: {t:.1}", super::sf_text(r.scale_factor));
    }
    if let Some(ts) = m.throughput_seconds {
        let _ = writeln!(s, "Throughput interval Ts: {ts:.3} s");
    }
    if let Some(q) = m.qphh_at_size {
        let _ = writeln!(s, "QphH@{}: {q:.1}", super::sf_text(r.scale_factor));
    }
    if let Some(g) = m.geomean_seconds {
        let _ = writeln!(s, "Geometric mean of the query times: {g:.3} s");
    }
    for n in &m.notes {
        let _ = writeln!(s, "Note: {n}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn power_raises_tiny_times() {
        let mut t = vec![1.0; 23];
        t.push(1e-9);
        let p = power_at_size(1.0, &t).unwrap_or(0.0);
        let raised = {
            let mut v = vec![1.0; 23];
            v.push(0.001);
            power_at_size(1.0, &v).unwrap_or(0.0)
        };
        assert!((p - raised).abs() < 1e-9);
        assert_eq!(throughput_at_size(1.0, 2, 3600.0), Some(44.0));
        assert_eq!(throughput_at_size(1.0, 2, 0.0), None);
    }

    #[test]
    fn metrics_say_why_they_are_missing() {
        let q = |n: u8, s: Option<f64>| QueryResult {
            query: n,
            seconds: s,
            status: if s.is_some() { "ok" } else { "timeout" }.into(),
            ..Default::default()
        };
        let mut r = TpchResult {
            test: "power".into(),
            scale_factor: 1.0,
            streams: 1,
            refresh: false,
            queries: (1..=22).map(|n| q(n, Some(2.0))).collect(),
            ..Default::default()
        };
        r.compute_metrics(None);
        assert_eq!(r.metrics.power_at_size, None);
        assert!((r.metrics.geomean_seconds.unwrap_or(0.0) - 2.0).abs() < 1e-9);
        assert!(r.metrics.notes[0].contains("refresh functions off"));
        r.refresh = true;
        r.refreshes = ["RF1", "RF2"]
            .iter()
            .map(|n| RefreshResult {
                name: n.to_string(),
                seconds: 2.0,
                status: "ok".into(),
                ..Default::default()
            })
            .collect();
        r.compute_metrics(None);
        assert!((r.metrics.power_at_size.unwrap_or(0.0) - 1800.0).abs() < 1e-6);
        r.queries[3] = q(4, None);
        r.compute_metrics(None);
        assert_eq!(r.metrics.power_at_size, None);
        assert!(r.metrics.notes[0].contains("21 of 22"));
        let t = text(&r);
        assert!(t.contains("TIMEOUT"), "{t}");
    }
}
