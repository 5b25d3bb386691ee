//! The interval series as CSV (one row per interval, a header first).

use dbmeter_result::RunDocument;
use std::fmt::Write as _;

/// One CSV field: quoted (with doubled quotes) when it holds a comma, a
/// quote or a line break (RFC 4180).
pub fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn pct_label(p: f64) -> String {
    format!("p{}", p.to_string().replace('.', "_"))
}

/// The interval series: time, threads, events, then the run's declared
/// measures per second (SQL benchmarks: `qps` and reads, writes and others
/// per second), errors, reconnects, latency.
pub fn intervals(report: &RunDocument, percentiles: &[f64]) -> String {
    let sql = report.issues_sql();
    let mut out = String::from("t_s,duration_s,threads,events,tps");
    if sql {
        out.push_str(",qps");
    }
    for m in &report.measures {
        let _ = write!(out, ",{}_per_s", m.name);
    }
    out.push_str(",errors_per_s,reconnects_per_s,lat_min_ms,lat_avg_ms,lat_max_ms");
    for p in percentiles {
        let _ = write!(out, ",lat_{}_ms", pct_label(*p));
    }
    out.push_str(",queue_length,concurrency\n");
    for i in &report.intervals {
        let _ = write!(
            out,
            "{:.3},{:.3},{},{},{:.2}",
            i.t_s, i.duration_s, i.threads, i.events, i.events_per_s
        );
        if sql {
            let _ = write!(out, ",{:.2}", i.queries_per_s());
        }
        for m in &report.measures {
            let _ = write!(out, ",{:.2}", i.per_s(&m.name));
        }
        let _ = write!(
            out,
            ",{:.2},{:.2},{:.3},{:.3},{:.3}",
            i.errors_per_s,
            i.reconnects_per_s,
            i.latency_ms.min_ms,
            i.latency_ms.avg_ms,
            i.latency_ms.max_ms,
        );
        for p in percentiles {
            let _ = write!(out, ",{:.3}", i.latency_ms.get(*p).unwrap_or(0.0));
        }
        let opt = |v: Option<String>| v.unwrap_or_default();
        let _ = writeln!(
            out,
            ",{},{}",
            opt(i.queue_length.map(|q| q.to_string())),
            opt(i.concurrency.map(|c| c.to_string()))
        );
    }
    out
}
