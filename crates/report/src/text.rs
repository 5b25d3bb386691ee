//! sysbench's text layout, so DBAs (and their scripts) feel at home, with
//! every requested percentile instead of one.

use dbmeter_result::{Interval, RunDocument};
use dbmeter_stats::LatencyHistogram;
use std::fmt::Write as _;

/// "95th", "99.9th", "50th".
pub fn ordinal(p: f64) -> String {
    format!("{p}th")
}

/// The percentile shown on interval lines: 95 when requested (as
/// sysbench), otherwise the highest requested.
pub fn line_percentile(percentiles: &[f64]) -> f64 {
    if percentiles.iter().any(|p| (*p - 95.0).abs() < 1e-9) {
        95.0
    } else {
        percentiles.iter().copied().reduce(f64::max).unwrap_or(95.0)
    }
}

/// One interval line, e.g.
/// `[ 10s ] thds: 16 tps: 1668.88 qps: 33377.55 (r/w/o: 23364.30/6675.50/3337.75) lat (ms,95%): 7.98 err/s: 0.00 reconn/s: 0.00`
pub fn interval_line(i: &Interval, percentile: f64) -> String {
    let t = i.time_label();
    let mut s = format!(
        "[ {t} ] thds: {} tps: {:.2} qps: {:.2} (r/w/o: {:.2}/{:.2}/{:.2}) lat (ms,{percentile}%): {:.2} err/s: {:.2} reconn/s: {:.2}{}",
        i.threads,
        i.events_per_s,
        i.queries_per_s,
        i.reads_per_s,
        i.writes_per_s,
        i.others_per_s,
        i.latency_ms.get(percentile).unwrap_or(0.0),
        i.errors_per_s,
        i.reconnects_per_s,
        i.failed_reconnects_note(),
    );
    if let (Some(q), Some(c)) = (i.queue_length, i.concurrency) {
        let _ = write!(s, "\n[ {t} ] queue length: {q}, concurrency: {c}");
    }
    s
}

fn row(out: &mut String, indent: usize, label: &str, value: &str) {
    let pad = 41usize.saturating_sub(indent + label.len());
    let _ = writeln!(out, "{:indent$}{label}{:pad$}{value}", "", "");
}

/// The final report: SQL statistics, General statistics, Latency, the
/// benchmark's own `section` (its text, when it has one), Threads
/// fairness, Environment.
pub fn final_report(r: &RunDocument, section: Option<&str>) -> String {
    let t = &r.totals;
    let mut out = String::new();
    out.push_str("SQL statistics:\n    queries performed:\n");
    row(&mut out, 8, "read:", &t.reads.to_string());
    row(&mut out, 8, "write:", &t.writes.to_string());
    row(&mut out, 8, "other:", &t.others.to_string());
    row(&mut out, 8, "total:", &t.queries.to_string());
    let per = |n: u64| {
        let v = if t.duration_s > 0.0 {
            n as f64 / t.duration_s
        } else {
            0.0
        };
        format!("{n:<6} ({v:.2} per sec.)")
    };
    row(&mut out, 4, "transactions:", &per(t.events));
    row(&mut out, 4, "queries:", &per(t.queries));
    row(&mut out, 4, "ignored errors:", &per(t.ignored_errors));
    row(&mut out, 4, "reconnects:", &per(t.reconnects));
    if t.timeouts > 0 {
        row(&mut out, 4, "timed out events:", &per(t.timeouts));
    }
    if t.cancelled > 0 {
        row(&mut out, 4, "cancelled events:", &t.cancelled.to_string());
    }
    if t.connection_errors > 0 || t.failed_reconnects > 0 {
        row(
            &mut out,
            4,
            "lost connections:",
            &format!(
                "{} ({} reconnect attempts failed)",
                t.connection_errors, t.failed_reconnects
            ),
        );
    }
    if !r.errors.is_empty() {
        out.push_str("    errors by code:\n");
        for (code, n) in &r.errors {
            row(&mut out, 8, &format!("{code}:"), &n.to_string());
        }
    }
    out.push_str("\nGeneral statistics:\n");
    row(&mut out, 4, "total time:", &format!("{:.4}s", t.duration_s));
    row(
        &mut out,
        4,
        "total number of events:",
        &t.events.to_string(),
    );
    if let Some(w) = &r.warmup {
        row(
            &mut out,
            4,
            "warm-up (not counted):",
            &format!(
                "{} events in {:.2}s ({:.2} per sec.)",
                w.events, w.duration_s, w.events_per_s
            ),
        );
    }
    if let Some(rate) = &r.rate {
        row(
            &mut out,
            4,
            "target rate:",
            &format!("{:.2} per sec.", rate.target_per_s),
        );
        row(
            &mut out,
            4,
            "achieved rate:",
            &format!("{:.2} per sec.", rate.achieved_per_s),
        );
        row(
            &mut out,
            4,
            "max queue length:",
            &rate.max_queue_length.to_string(),
        );
        row(
            &mut out,
            4,
            "events not started at end:",
            &rate.unstarted_at_end.to_string(),
        );
        row(
            &mut out,
            4,
            "max start lag:",
            &format!("{:.2} ms", rate.max_lag_ms),
        );
        if rate.fell_behind() {
            row(
                &mut out,
                4,
                "fell behind the rate:",
                &format!(
                    "achieved {:.1}% of the target; {} events not started at the end",
                    rate.achieved_pct(),
                    rate.unstarted_at_end
                ),
            );
        }
    }
    let l = &r.latency_ms;
    out.push_str("\nLatency (ms):\n");
    let lat = |out: &mut String, label: &str, v: f64| {
        let _ = writeln!(out, "{:9}{label:<24}{v:>16.2}", "");
    };
    lat(&mut out, "min:", l.min_ms);
    lat(&mut out, "avg:", l.avg_ms);
    lat(&mut out, "max:", l.max_ms);
    for p in &l.percentiles {
        lat(
            &mut out,
            &format!("{} percentile:", ordinal(p.percentile)),
            p.ms,
        );
    }
    if l.percentiles.is_empty() {
        // As sysbench with --percentile=0.
        let _ = writeln!(out, "{:9}{:<24}{:>16}", "", "percentile stats:", "disabled");
    }
    lat(&mut out, "sum:", l.sum_ms);
    if let Some(s) = &r.service_latency_ms {
        out.push_str("\nService time, from the actual start of each event (ms):\n");
        lat(&mut out, "avg:", s.avg_ms);
        lat(&mut out, "max:", s.max_ms);
        for p in &s.percentiles {
            lat(
                &mut out,
                &format!("{} percentile:", ordinal(p.percentile)),
                p.ms,
            );
        }
    }
    if let Some(text) = section {
        out.push_str(text);
    }
    let f = &r.fairness;
    out.push_str("\nThreads fairness:\n");
    row(
        &mut out,
        4,
        "events (avg/stddev):",
        &format!("{:.4}/{:.2}", f.events_avg, f.events_stddev),
    );
    row(
        &mut out,
        4,
        "execution time (avg/stddev):",
        &format!("{:.4}/{:.2}", f.time_avg_s, f.time_stddev_s),
    );
    out.push_str(&environment_summary(r));
    out
}

/// Counters worth a line in the text report, by server.
const KEY_COUNTERS: &[&str] = &[
    // MySQL / MariaDB
    "Questions",
    "Com_commit",
    "Innodb_rows_read",
    "Innodb_data_read",
    "Innodb_data_written",
    "Innodb_buffer_pool_reads",
    // PostgreSQL
    "database.xact_commit",
    "database.xact_rollback",
    "database.blks_read",
    "database.blks_hit",
    "wal.wal_bytes",
];

/// A few lines on where the run happened: machine, server, OS load,
/// key server counters and the warnings. Empty for old documents.
pub fn environment_summary(r: &RunDocument) -> String {
    let mut out = String::from("\nEnvironment:\n");
    let e = &r.environment;
    if e.hostname.is_empty() && e.kernel.is_empty() {
        return String::new();
    }
    row(&mut out, 4, "machine:", &e.summary());
    if let Some(s) = &r.server {
        let mut v = s.version.clone();
        if let Some(d) = &e.datadir {
            let _ = write!(v, "; data on {} ({}", d.mount_point, d.filesystem);
            if let Some(dev) = &d.device {
                let _ = write!(v, ", {dev}");
                if let Some(sch) = &d.scheduler {
                    let _ = write!(v, ", scheduler {sch}");
                }
            }
            v.push(')');
        }
        row(&mut out, 4, "server:", &v);
        let sized: Vec<_> = s.tables.iter().filter_map(|t| t.total_bytes).collect();
        if !sized.is_empty() {
            let total: u64 = sized.iter().sum();
            row(
                &mut out,
                4,
                "tables:",
                &format!("{} ({:.1} MiB)", s.tables.len(), total as f64 / 1048576.0),
            );
        }
    }
    if let Some(os) = &r.os
        && let Some(c) = os.mean_cpu()
    {
        let mut line = format!(
            "user {:.1}% sys {:.1}% iowait {:.1}% steal {:.1}% idle {:.1}%",
            c.user, c.system, c.iowait, c.steal, c.idle
        );
        if let Some(x) = os.mean_client_cpu() {
            let _ = write!(line, "; dbmeter {x:.0}%");
        }
        if let Some(x) = os.mean_server_cpu() {
            let _ = write!(line, "; server {x:.0}%");
        }
        row(&mut out, 4, "CPU (avg of samples):", &line);
    }
    if let Some(c) = &r.counters {
        let shown: Vec<String> = KEY_COUNTERS
            .iter()
            .filter_map(|k| c.delta.get(*k).map(|d| format!("{k} {d}")))
            .collect();
        if !shown.is_empty() {
            row(&mut out, 4, "server counters (delta):", &shown.join(", "));
        }
    }
    for w in &r.warnings {
        row(&mut out, 4, "warning:", &w.message);
    }
    out
}

/// A latency histogram table (`--histogram`): value, bar, count.
pub fn histogram(h: &LatencyHistogram) -> String {
    let buckets = h.log_buckets();
    let mut out = String::from(
        "Latency histogram (values are in milliseconds)\n       value  ------------- distribution ------------- count\n",
    );
    let max = buckets.iter().map(|b| b.1).max().unwrap_or(1).max(1);
    for (v, n) in buckets {
        let bar = "*".repeat(((n as f64 / max as f64) * 40.0).ceil() as usize);
        let _ = writeln!(out, "{:>12.3} |{bar:<40} {n}", v as f64 / 1e6);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_for_lines() {
        assert_eq!(line_percentile(&[50.0, 95.0, 99.0]), 95.0);
        assert_eq!(line_percentile(&[50.0, 99.0]), 99.0);
        assert_eq!(ordinal(99.9), "99.9th");
    }
}
