//! sysbench's text layout, so DBAs (and their scripts) feel at home, with
//! every requested percentile instead of one.

use dbmeter_result::{Interval, RunDocument, RunHeader};
use dbmeter_stats::LatencyHistogram;
use std::fmt::Write as _;

/// The unit of a measure that counts bytes: text shows it in MiB.
const BYTE: &str = dbmeter_stats::measure::BYTE;
const MIB: f64 = 1024.0 * 1024.0;

/// "95th", "99.9th", "50th".
pub fn ordinal(p: f64) -> String {
    format!("{p}th")
}

/// One interval line, e.g.
/// `[ 10s ] thds: 16 tps: 1668.88 qps: 33377.55 (r/w/o: 23364.30/6675.50/3337.75) lat (ms,95%): 7.98 err/s: 0.00 reconn/s: 0.00`
///
/// For a benchmark that issues no SQL, events per second and its own
/// measures per second instead of transactions and queries, as sysbench's
/// non-SQL tests print them:
/// `[ 10s ] thds: 2 eps: 1995.87 lat (ms,95%): 1.01`
///
/// Under `--stages`, `thds` is the users that ran events in the interval.
pub fn interval_line(i: &Interval, h: &RunHeader, percentile: f64) -> String {
    let t = i.time_label();
    let sql = dbmeter_stats::measure::sql::is_sql(h.measures.iter().map(|m| m.name.as_str()));
    let lat = i.latency_ms.get(percentile).unwrap_or(0.0);
    let mut s = if sql {
        format!(
            "[ {t} ] thds: {} tps: {:.2} qps: {:.2} (r/w/o: {:.2}/{:.2}/{:.2}) lat (ms,{percentile}%): {lat:.2} err/s: {:.2} reconn/s: {:.2}{}",
            i.active_users.unwrap_or(i.threads),
            i.events_per_s,
            i.queries_per_s(),
            i.per_s("reads"),
            i.per_s("writes"),
            i.per_s("others"),
            i.errors_per_s,
            i.reconnects_per_s,
            i.failed_reconnects_note(),
        )
    } else {
        let mut s = format!(
            "[ {t} ] thds: {} eps: {:.2}",
            i.active_users.unwrap_or(i.threads),
            i.events_per_s
        );
        for m in h.measures.iter().filter(|m| m.per_second) {
            if m.unit == BYTE {
                let _ = write!(s, " {} MiB/s: {:.2}", m.label, i.per_s(&m.name) / MIB);
            } else {
                let _ = write!(s, " {}/s: {:.2}", m.label, i.per_s(&m.name));
            }
        }
        let _ = write!(s, " lat (ms,{percentile}%): {lat:.2}");
        if i.errors_per_s > 0.0 || i.reconnects_per_s > 0.0 {
            let _ = write!(
                s,
                " err/s: {:.2} reconn/s: {:.2}",
                i.errors_per_s, i.reconnects_per_s
            );
        }
        s.push_str(&i.failed_reconnects_note());
        s
    };
    if let (Some(q), Some(c)) = (i.queue_length, i.concurrency) {
        let _ = write!(s, "\n[ {t} ] queue length: {q}, concurrency: {c}");
    }
    s
}

fn row(out: &mut String, indent: usize, label: &str, value: &str) {
    let pad = 41usize.saturating_sub(indent + label.len());
    let _ = writeln!(out, "{:indent$}{label}{:pad$}{value}", "", "");
}

/// The header of a run: what runs where, with which options.
pub fn header(h: &RunHeader) -> Vec<String> {
    let about = match (h.target.is_empty(), h.server_version.is_empty()) {
        (false, false) => format!(" ({}, {})", h.target, h.server_version),
        (false, true) => format!(" ({})", h.target),
        (true, _) => " (no database)".to_string(),
    };
    let mut lines = vec![
        format!("dbmeter {}{about}\n", h.version),
        format!("Running {} with the following options:", h.benchmark),
        format!("Number of threads: {}", h.threads),
    ];
    if let Some(r) = h.rate {
        lines.push(format!("Target transaction rate: {r}/sec"));
    }
    if let Some(every) = h.report_interval_s {
        lines.push(format!(
            "Report intermediate results every {every} second(s)"
        ));
    }
    if let Some(max) = h.warmup_auto_max_s {
        lines.push(format!(
            "Warming up until throughput is steady, at most {max} second(s), before measuring"
        ));
    } else if h.warmup_s > 0.0 {
        lines.push(format!(
            "Warming up for {} second(s) before measuring",
            h.warmup_s
        ));
    }
    lines.push(format!("Random seed: {}\n", h.seed));
    // What the benchmark says of its settings.
    if let Some(p) = h.preamble.as_deref().filter(|p| !p.trim().is_empty()) {
        lines.push(format!("{}\n", p.trim_end_matches('\n')));
    }
    lines.push("Threads started!\n".to_string());
    lines
}

/// The final report: SQL statistics (for a benchmark that issues SQL; its
/// own measures otherwise), General statistics, Latency, the benchmark's
/// own `section` (its text, when it has one), Threads fairness,
/// Environment.
pub fn final_report(r: &RunDocument, section: Option<&str>) -> String {
    final_report_with(r, section, true)
}

/// [`final_report`], with `percentiles` false as sysbench's
/// `--percentile=0` prints it ("percentile stats: disabled").
pub fn final_report_with(r: &RunDocument, section: Option<&str>, percentiles: bool) -> String {
    let t = &r.totals;
    let mut out = String::new();
    let per = |n: u64| {
        let v = if t.duration_s > 0.0 {
            n as f64 / t.duration_s
        } else {
            0.0
        };
        format!("{n:<6} ({v:.2} per sec.)")
    };
    let sql = r.issues_sql();
    if sql {
        out.push_str("SQL statistics:\n    queries performed:\n");
        row(&mut out, 8, "read:", &r.count("reads").to_string());
        row(&mut out, 8, "write:", &r.count("writes").to_string());
        row(&mut out, 8, "other:", &r.count("others").to_string());
        row(&mut out, 8, "total:", &t.queries.to_string());
        row(&mut out, 4, "transactions:", &per(t.events));
        row(&mut out, 4, "queries:", &per(t.queries));
    } else if !r.measures.is_empty() {
        out.push_str("Counters:\n");
        for m in &r.measures {
            let n = r.count(&m.name);
            let v = if m.unit == BYTE {
                // Bytes as MiB, and MiB/s when the measure is a rate.
                let mib = n as f64 / MIB;
                if m.per_second && t.duration_s > 0.0 {
                    format!("{mib:.2} MiB ({:.2} MiB/s)", mib / t.duration_s)
                } else {
                    format!("{mib:.2} MiB")
                }
            } else if m.per_second {
                per(n)
            } else {
                n.to_string()
            };
            row(&mut out, 4, &format!("{}:", m.label), &v);
        }
    }
    if sql || t.ignored_errors > 0 {
        row(&mut out, 4, "ignored errors:", &per(t.ignored_errors));
    }
    if sql || t.reconnects > 0 {
        row(&mut out, 4, "reconnects:", &per(t.reconnects));
    }
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
    if !out.is_empty() {
        out.push('\n');
    }
    out.push_str("General statistics:\n");
    row(&mut out, 4, "total time:", &format!("{:.4}s", t.duration_s));
    row(
        &mut out,
        4,
        "total number of events:",
        &t.events.to_string(),
    );
    if !sql {
        // Without SQL there is no transactions line to give the rate.
        row(
            &mut out,
            4,
            "events per second:",
            &format!("{:.2}", t.events_per_s),
        );
    }
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
        if let Some(a) = &w.auto {
            row(
                &mut out,
                4,
                "warm-up ended:",
                &auto_warmup_words(a, w.duration_s),
            );
        }
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
    let shown: &[dbmeter_stats::Percentile] = if percentiles { &l.percentiles } else { &[] };
    for p in shown {
        lat(
            &mut out,
            &format!("{} percentile:", ordinal(p.percentile)),
            p.ms,
        );
    }
    if shown.is_empty() {
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
    out.push_str(&stages(r));
    out.push_str(&spikes(r));
    out.push_str(&throughput(r));
    out.push_str(&outages(r));
    out.push_str(&block("Hosts", r.hosts.iter().map(|h| h.line())));
    out.push_str(&drift(r));
    out.push_str(&capacity(r));
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
    out.push_str(&verdicts(r));
    out
}

/// What each stage of `--stages` / `--rate-stages` measured, a line each.
pub fn stages(r: &RunDocument) -> String {
    let level = |v: f64| {
        let s = format!("{v:.2}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    };
    block(
        "Stages",
        r.stages.iter().map(|s| {
            let what = if s.profile == "rate" { "rate" } else { "users" };
            let p95 = s
                .latency_ms
                .get(95.0)
                .map_or(String::new(), |p| format!(", p95 {p:.3} ms"));
            format!(
                "stage{} {:.1}-{:.1}s {what} {}->{}: {} events ({:.2} per sec.){p95}, {} errors{}",
                s.index,
                s.start_s,
                s.end_s,
                level(s.from),
                level(s.to),
                s.events,
                s.events_per_s,
                s.errors,
                s.active_users_max
                    .map_or(String::new(), |a| format!(", up to {a} users active"))
            )
        }),
    )
}

/// A titled block of the final report, a line each, indented; nothing
/// when there are no lines.
fn block(title: &str, lines: impl IntoIterator<Item = String>) -> String {
    let mut out = String::new();
    for l in lines {
        if out.is_empty() {
            out = format!("\n{title}:\n");
        }
        out.push_str("    ");
        out.push_str(&l);
        out.push('\n');
    }
    out
}

/// A capacity search's result and steps.
pub fn capacity(r: &RunDocument) -> String {
    block("Capacity search", r.capacity.iter().flat_map(|c| c.lines()))
}

/// The run's throughput with its confidence interval (batch means).
pub fn throughput(r: &RunDocument) -> String {
    block(
        "Throughput interval",
        r.throughput_ci.iter().map(|t| t.line()),
    )
}

/// The trends of a long run (endurance).
pub fn drift(r: &RunDocument) -> String {
    block("Drift", r.drift.iter().flat_map(|d| d.lines()))
}

/// The spikes of the run's profiles: impact and recovery, a line each.
pub fn spikes(r: &RunDocument) -> String {
    block("Spikes", r.spikes.iter().map(|s| s.line()))
}

/// The run's outages: start, length, events lost, recovery, a line each.
pub fn outages(r: &RunDocument) -> String {
    block("Outages", r.outages.iter().map(|o| o.line()))
}

/// The verdicts on the run's `--assert` targets, one line each.
pub fn verdicts(r: &RunDocument) -> String {
    let met = r.verdicts.iter().filter(|v| v.passed()).count();
    block(
        &format!("Targets ({met} of {} met)", r.verdicts.len()),
        r.verdicts.iter().map(|v| v.line()),
    )
}

/// The final report exactly as sysbench 1.0.20 lays it out (its
/// `report_cumulative`): SQL statistics for a run that issued SQL (and
/// sent some: a script that never queried has none), General
/// statistics, Latency (one line per percentile, or "percentile stats:
/// disabled" when `percentiles` is false), Threads fairness, and the blank
/// line sysbench ends with. Nothing of dbmeter's: that is
/// [`sysbench_extras`], printed after it on request.
pub fn sysbench_report(r: &RunDocument, percentiles: bool) -> String {
    sysbench_report_at(r, percentiles, r.totals.duration_s)
}

/// [`sysbench_report`] of a part of a run (a checkpoint report): its
/// rates over the part's `totals.duration_s`, its "total time" `total_s`,
/// the time since the measurement started, as sysbench prints them.
pub fn sysbench_report_at(r: &RunDocument, percentiles: bool, total_s: f64) -> String {
    let t = &r.totals;
    let mut out = String::new();
    let per_s = |n: u64| {
        if t.duration_s > 0.0 {
            n as f64 / t.duration_s
        } else {
            0.0
        }
    };
    // sysbench prints SQL statistics once a script has used its SQL
    // driver; a script that never queried gets the general report only.
    if r.issues_sql() && (t.queries > 0 || t.ignored_errors > 0 || t.reconnects > 0) {
        let line = |out: &mut String, label: &str, n: u64| {
            let _ = writeln!(out, "    {label:<37}{n:<6} ({:.2} per sec.)", per_s(n));
        };
        out.push_str("SQL statistics:\n    queries performed:\n");
        let _ = writeln!(
            out,
            "        read:                            {}",
            r.count("reads")
        );
        let _ = writeln!(
            out,
            "        write:                           {}",
            r.count("writes")
        );
        let _ = writeln!(
            out,
            "        other:                           {}",
            r.count("others")
        );
        let _ = writeln!(
            out,
            "        total:                           {}",
            t.queries
        );
        line(&mut out, "transactions:", t.events);
        line(&mut out, "queries:", t.queries);
        line(&mut out, "ignored errors:", t.ignored_errors);
        line(&mut out, "reconnects:", t.reconnects);
    }
    out.push_str("\nGeneral statistics:\n");
    let _ = writeln!(
        out,
        "    total time:                          {total_s:.4}s"
    );
    let _ = writeln!(out, "    total number of events:              {}", t.events);
    let l = &r.latency_ms;
    out.push_str("\nLatency (ms):\n");
    let _ = writeln!(out, "         min: {:39.2}", l.min_ms);
    let _ = writeln!(out, "         avg: {:39.2}", l.avg_ms);
    let _ = writeln!(out, "         max: {:39.2}", l.max_ms);
    if percentiles && !l.percentiles.is_empty() {
        for p in &l.percentiles {
            let label = format!("{:>3}th percentile:", p.percentile);
            let _ = writeln!(out, "        {label} {:>w$.2}", p.ms, w = 44 - label.len());
        }
    } else {
        out.push_str("         percentile stats:               disabled\n");
    }
    let _ = writeln!(out, "         sum: {:39.2}", l.sum_ms);
    let f = &r.fairness;
    out.push_str("\nThreads fairness:\n");
    let _ = writeln!(
        out,
        "    events (avg/stddev):           {:.4}/{:3.2}",
        f.events_avg, f.events_stddev
    );
    let _ = writeln!(
        out,
        "    execution time (avg/stddev):   {:.4}/{:3.2}",
        f.time_avg_s, f.time_stddev_s
    );
    out.push('\n');
    out
}

/// What dbmeter's report has beyond sysbench's (the lines
/// [`final_report`] adds to sysbench's sections, and the environment), for
/// `dbmeter sysbench` to print after sysbench's last line when asked
/// (`--verbosity=4` or more). Empty when there is nothing to add.
pub fn sysbench_extras(r: &RunDocument) -> String {
    let t = &r.totals;
    let mut out = String::new();
    if t.timeouts > 0 {
        row(&mut out, 4, "timed out events:", &t.timeouts.to_string());
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
    for (code, n) in &r.errors {
        row(&mut out, 4, &format!("errors {code}:"), &n.to_string());
    }
    if let Some(w) = &r.warmup {
        row(
            &mut out,
            4,
            "warm-up (not counted):",
            &format!("{} events in {:.2}s", w.events, w.duration_s),
        );
        if let Some(a) = &w.auto {
            row(
                &mut out,
                4,
                "warm-up ended:",
                &auto_warmup_words(a, w.duration_s),
            );
        }
    }
    if let Some(rate) = &r.rate {
        row(
            &mut out,
            4,
            "achieved rate:",
            &format!(
                "{:.2} per sec. of {:.2}; max start lag {:.2} ms",
                rate.achieved_per_s, rate.target_per_s, rate.max_lag_ms
            ),
        );
    }
    let l = &r.latency_ms;
    if !l.percentiles.is_empty() {
        let all: Vec<String> = l
            .percentiles
            .iter()
            .map(|p| format!("{}% {:.2}", p.percentile, p.ms))
            .collect();
        row(&mut out, 4, "latency percentiles (ms):", &all.join(", "));
    }
    if !out.is_empty() {
        out.insert_str(0, "dbmeter:\n");
    }
    out.push_str(&environment_summary(r));
    out.trim_start_matches('\n').to_string()
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

/// When and why an automatic warm-up ended, after `duration_s`:
/// "at 14.0s: throughput steady since 4.0s (MSER, Mann-Kendall)", "at
/// 300.0s: throughput not steady by the limit of 300s; measured from
/// there", or that the run ended first.
fn auto_warmup_words(a: &dbmeter_result::AutoWarmupInfo, duration_s: f64) -> String {
    match a.steady_since_s {
        Some(since) => {
            format!("at {duration_s:.1}s: throughput steady since {since:.1}s (MSER, Mann-Kendall)")
        }
        None if duration_s + a.interval_s / 2.0 >= a.max_s => format!(
            "at {duration_s:.1}s: throughput not steady by the limit of {}s; measured from there",
            a.max_s
        ),
        None => format!("at {duration_s:.1}s: the run ended before throughput was steady"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinals() {
        assert_eq!(ordinal(99.9), "99.9th");
    }

    /// A measure in bytes reads in MiB, and MiB/s where it is a rate, in
    /// the report and the interval lines; other measures as counts.
    #[test]
    fn byte_measures_read_in_mib() {
        use dbmeter_stats::MeasureInfo;
        let measures = vec![
            MeasureInfo {
                name: "bytes_read".into(),
                label: "read".into(),
                unit: BYTE.into(),
                per_second: true,
            },
            MeasureInfo {
                name: "fsyncs".into(),
                label: "fsync".into(),
                unit: "call".into(),
                per_second: true,
            },
        ];
        let mut doc = RunDocument {
            measures: measures.clone(),
            ..RunDocument::default()
        };
        doc.totals.duration_s = 2.0;
        doc.totals.counts.insert("bytes_read".into(), 8 << 20);
        doc.totals.counts.insert("fsyncs".into(), 10);
        let report = final_report(&doc, None);
        assert!(
            report.contains("    read:                                8.00 MiB (4.00 MiB/s)\n"),
            "{report}"
        );
        assert!(
            report.contains("    fsync:                               10     (5.00 per sec.)\n"),
            "{report}"
        );
        let h = RunHeader {
            measures,
            ..RunHeader::default()
        };
        let mut i = Interval {
            t_s: 1.0,
            duration_s: 1.0,
            threads: 1,
            events_per_s: 3.0,
            ..Interval::default()
        };
        i.counts.insert("bytes_read".into(), 3 << 20);
        i.counts.insert("fsyncs".into(), 1);
        let line = interval_line(&i, &h, 95.0);
        assert!(
            line.starts_with(
                "[ 1s ] thds: 1 eps: 3.00 read MiB/s: 3.00 fsync/s: 1.00 lat (ms,95%)"
            ),
            "{line}"
        );
    }
}
