//! Stored runs ([`dbmeter_store::RunSummary`]) as a text table and as CSV,
//! and a stored run's description for `dbmeter results show`; the
//! adaptive repeats of stored campaigns ([`dbmeter_store::AdaptiveCell`]) as
//! text and as an HTML table.

use crate::csv::field as csv_field;
use dbmeter_store::{AdaptiveCell, CellStop, RunSummary};
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// `2026-11-22T04:54:33Z` as `2026-11-22 04:54:33`.
pub fn short_time(t: &str) -> String {
    t.trim_end_matches('Z').replacen('T', " ", 1)
}

fn opt_num(v: Option<f64>, decimals: usize) -> String {
    v.map_or("-".into(), |x| format!("{x:.decimals$}"))
}

fn opt_text(v: &Option<String>) -> String {
    v.clone().unwrap_or_else(|| "-".into())
}

fn tags_text(r: &RunSummary) -> String {
    r.tags
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// One line per run: id, when stored, workload, threads, campaign,
/// variant, repeat, how it ended, tps, qps, p95/p99 latency, tags.
pub fn list_text(runs: &[RunSummary]) -> String {
    let mut grid: Vec<Vec<String>> = vec![
        [
            "id", "stored", "workload", "threads", "campaign", "variant", "rep", "end", "tps",
            "qps", "p95_ms", "p99_ms", "tags",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
    ];
    for r in runs {
        grid.push(vec![
            r.id.to_string(),
            short_time(&r.stored_at),
            r.workload.clone(),
            r.threads.map_or("-".into(), |t| t.to_string()),
            opt_text(&r.campaign),
            opt_text(&r.variant),
            r.repeat.map_or("-".into(), |t| t.to_string()),
            r.end_reason.clone(),
            opt_num(r.events_per_s, 2),
            opt_num(r.queries_per_s, 2),
            opt_num(r.latency_p95_ms, 3),
            opt_num(r.latency_p99_ms, 3),
            tags_text(r),
        ]);
    }
    let cols = grid[0].len();
    let widths: Vec<usize> = (0..cols)
        .map(|i| grid.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    // Numbers right-aligned, words left-aligned.
    let right = [0, 3, 6, 8, 9, 10, 11];
    let mut out = String::new();
    for row in &grid {
        let mut line = String::new();
        for (i, v) in row.iter().enumerate() {
            let w = widths[i];
            if right.contains(&i) {
                let _ = write!(line, "{v:>w$}  ");
            } else {
                let _ = write!(line, "{v:<w$}  ");
            }
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
    out
}

/// The CSV columns before the tags.
pub const CSV_COLUMNS: &str = "id,stored_at,started_at,campaign,variant,cell,repeat,workload,threads,\
target_url,driver,server_version,end_reason,end_error,duration_s,events,tps,queries,qps,\
lat_avg_ms,lat_p95_ms,lat_p99_ms,lat_max_ms,errors,reconnects,hostname,dbmeter_version";

/// CSV: a header, then one row per run with its main numbers; each tag key
/// found in any run is a column `tag.KEY`. Missing values are empty.
pub fn list_csv(runs: &[RunSummary]) -> String {
    let keys: BTreeSet<&str> = runs
        .iter()
        .flat_map(|r| r.tags.iter().map(|(k, _)| k.as_str()))
        .collect();
    let mut out = String::from(CSV_COLUMNS);
    for k in &keys {
        let _ = write!(out, ",{}", csv_field(&format!("tag.{k}")));
    }
    out.push('\n');
    let t = |v: &Option<String>| csv_field(v.as_deref().unwrap_or(""));
    let n = |v: Option<f64>| v.map_or(String::new(), |x| x.to_string());
    let i = |v: Option<i64>| v.map_or(String::new(), |x| x.to_string());
    for r in runs {
        let fields = [
            r.id.to_string(),
            csv_field(&r.stored_at),
            t(&r.started_at),
            t(&r.campaign),
            t(&r.variant),
            t(&r.cell),
            i(r.repeat.map(i64::from)),
            csv_field(&r.workload),
            i(r.threads.map(i64::from)),
            t(&r.target_url),
            t(&r.driver),
            t(&r.server_version),
            csv_field(&r.end_reason),
            t(&r.end_error),
            n(r.duration_s),
            i(r.events),
            n(r.events_per_s),
            i(r.queries),
            n(r.queries_per_s),
            n(r.latency_avg_ms),
            n(r.latency_p95_ms),
            n(r.latency_p99_ms),
            n(r.latency_max_ms),
            i(r.errors),
            i(r.reconnects),
            t(&r.hostname),
            t(&r.dbmeter_version),
        ];
        out.push_str(&fields.join(","));
        for k in &keys {
            let _ = write!(out, ",{}", csv_field(r.tag(k).unwrap_or("")));
        }
        out.push('\n');
    }
    out
}

/// The lines `dbmeter results show` prints above a stored run's report:
/// where it came from and how it ended.
pub fn describe(r: &RunSummary) -> String {
    let mut out = String::new();
    let mut row = |label: &str, value: String| {
        let _ = writeln!(out, "{label:<16}{value}");
    };
    row("run:", format!("#{}", r.id));
    row("stored at:", short_time(&r.stored_at));
    if let Some(s) = &r.started_at {
        row("started at:", short_time(s));
    }
    row("workload:", r.workload.clone());
    if let Some(t) = r.threads {
        row("threads:", t.to_string());
    }
    if let Some(u) = r.target_url.as_ref().filter(|u| !u.is_empty()) {
        let version = r
            .server_version
            .as_ref()
            .filter(|v| !v.is_empty())
            .map_or(String::new(), |v| format!(" ({v})"));
        row("target:", format!("{u}{version}"));
    }
    for (label, v) in [
        ("campaign:", &r.campaign),
        ("variant:", &r.variant),
        ("cell:", &r.cell),
    ] {
        if let Some(v) = v {
            row(label, v.clone());
        }
    }
    if let Some(rep) = r.repeat {
        row("repeat:", rep.to_string());
    }
    if !r.tags.is_empty() {
        row("tags:", tags_text(r));
    }
    let end = match &r.end_error {
        Some(e) => format!("{} ({e})", r.end_reason),
        None => r.end_reason.clone(),
    };
    row("end:", end);
    if let Some(h) = &r.hostname {
        row("host:", h.clone());
    }
    out
}

/// "campaign 'auto', adaptive repeats per cell:" and a line per cell (its
/// `describe`), per campaign; empty without cells.
pub fn adaptive_text(cells: &[AdaptiveCell]) -> String {
    let mut out = String::new();
    let mut campaign: Option<&str> = None;
    for c in cells {
        if campaign != Some(c.campaign.as_str()) {
            let _ = writeln!(out, "campaign '{}', adaptive repeats per cell:", c.campaign);
            campaign = Some(&c.campaign);
        }
        let _ = writeln!(out, "  {}: {}", c.cell, c.describe());
    }
    out
}

/// The cells' adaptive repeats as an HTML table: cell, runs, completed
/// runs, the interval's width reached, the target and why it stopped.
pub fn adaptive_html(cells: &[AdaptiveCell]) -> String {
    use crate::html::escape;
    let mut out = String::from(
        "<table class=\"dbmeter-compare\">\n<thead><tr><th class=\"label\">cell</th><th>runs</th>\
         <th>completed</th><th>95% CI width</th><th>target</th><th class=\"label\">stopped</th></tr></thead>\n<tbody>\n",
    );
    for c in cells {
        let why = match c.stop {
            CellStop::Settled => "settled".to_string(),
            CellStop::MaxRepeats => format!("at max_repeats ({})", c.max_repeats),
            CellStop::Open => "not yet (open)".to_string(),
        };
        let _ = writeln!(
            out,
            "<tr><td class=\"label\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"label\">{}</td></tr>",
            escape(&c.cell),
            c.runs,
            c.completed,
            c.ci_width
                .map_or("-".to_string(), dbmeter_store::adaptive::pct),
            dbmeter_store::adaptive::pct(c.target_width),
            escape(&why)
        );
    }
    out.push_str("</tbody></table>\n");
    out
}
