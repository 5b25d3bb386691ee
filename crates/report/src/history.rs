//! The history of one configuration ([`dbmeter_store::history::History`])
//! as text: a line per run, oldest first, with the change points marked.
//! The HTML page and section are `html::history`.

use crate::stored::short_time;
use dbmeter_store::history::{Change, History};
use std::fmt::Write as _;

/// A value as the table shows it: rates with 2 decimals, times with 3.
pub fn value_text(h: &History, v: f64) -> String {
    if h.unit == "/s" {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// `faster` or `slower` for a change of this sign, or None for none.
pub fn direction(h: &History, c: &Change) -> Option<&'static str> {
    let pct = c.change_pct?;
    if pct == 0.0 {
        return None;
    }
    Some(if (pct > 0.0) == h.higher_is_better {
        "faster"
    } else {
        "slower"
    })
}

/// The relative change as `+48.1%` (or `n/a` for a mean before of 0).
pub fn change_text(c: &Change) -> String {
    match c.change_pct {
        Some(p) => format!("{p:+.1}%"),
        None => "n/a".into(),
    }
}

/// A change point's mark in a run's line: `-31.0% change point (slower,
/// p=0.005)`.
pub fn mark(h: &History, c: &Change) -> String {
    let dir = direction(h, c).map_or(String::new(), |d| format!("{d}, "));
    format!("{} change point ({dir}p={:.3})", change_text(c), c.p_value)
}

/// What the runs are: `oltp_point_select, 1 thread, on sqlite:x.db, tags
/// job=nightly`.
pub fn configuration_words(h: &History) -> String {
    let c = &h.configuration;
    let mut s = c.workload.clone();
    match c.threads {
        Some(1) => s.push_str(", 1 thread"),
        Some(n) => {
            let _ = write!(s, ", {n} threads");
        }
        None => {}
    }
    if let Some(v) = &c.variant {
        let _ = write!(s, ", variant {v}");
    }
    if let Some(t) = &c.target {
        let _ = write!(s, ", on {t}");
    }
    if !c.tags.is_empty() {
        let tags: Vec<String> = c.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let _ = write!(s, ", tags {}", tags.join(","));
    }
    s
}

/// The method and its parameters in one line.
pub fn method_words(h: &History) -> String {
    let m = &h.method;
    format!(
        "E-Divisive with means (significance {}, {} permutations, seed {}, minimum segment {} runs, alpha {})",
        m.significance, m.permutations, m.seed, m.min_segment, m.alpha
    )
}

/// The unit in a column header: `tps`, `p99_ms`, `Q1_s`.
fn column(h: &History) -> String {
    match h.unit.as_str() {
        "/s" | "" => h.metric.clone(),
        u => format!("{}_{u}", h.metric),
    }
}

/// The summary under the table: the change points, or why there are none.
pub fn verdict(h: &History) -> String {
    let n = h.runs.len();
    if n < h.runs_needed() {
        return format!(
            "too few runs for a change point to be significant: {n} of the {} needed at significance {} with segments of at least {} runs",
            h.runs_needed(),
            h.method.significance,
            h.method.min_segment
        );
    }
    match h.change_points.len() {
        0 => format!("no change point in {n} runs"),
        k => format!(
            "{k} change point{}: {}",
            if k == 1 { "" } else { "s" },
            h.change_points
                .iter()
                .map(|c| {
                    let dir = direction(h, c).map_or(String::new(), |d| format!(" ({d})"));
                    format!("run #{} {}{dir}", c.run, change_text(c))
                })
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The history as text.
pub fn text(h: &History) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} ({}) over time: {} run{} of {}",
        h.metric,
        h.metric_words,
        h.runs.len(),
        if h.runs.len() == 1 { "" } else { "s" },
        configuration_words(h)
    );
    let _ = writeln!(out, "selection: {}", h.selection);
    let _ = writeln!(out, "change points: {}", method_words(h));
    out.push('\n');
    let mut grid: Vec<[String; 4]> =
        vec![["id".into(), "started".into(), column(h), String::new()]];
    for r in &h.runs {
        grid.push([
            r.id.to_string(),
            short_time(&r.time),
            value_text(h, r.value),
            r.change_point
                .as_ref()
                .map_or(String::new(), |c| mark(h, c)),
        ]);
    }
    let width = |i: usize| grid.iter().map(|r| r[i].chars().count()).max().unwrap_or(0);
    let (w0, w1, w2) = (width(0), width(1), width(2));
    for row in &grid {
        let line = format!(
            "{:>w0$}  {:<w1$}  {:>w2$}  {}",
            row[0], row[1], row[2], row[3]
        );
        let _ = writeln!(out, "{}", line.trim_end());
    }
    out.push('\n');
    let _ = writeln!(out, "{}", verdict(h));
    if h.segments.len() > 1 {
        let _ = writeln!(
            out,
            "segments: {}",
            h.segments
                .iter()
                .map(|s| format!(
                    "#{}-#{} ({} runs) mean {}",
                    s.first_run,
                    s.last_run,
                    s.runs,
                    value_text(h, s.mean)
                ))
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
    if !h.left_out.is_empty() {
        let n = h.left_out.len();
        let _ = writeln!(
            out,
            "{n} run{} left out: {}",
            if n == 1 { "" } else { "s" },
            h.left_out
                .iter()
                .map(|(id, why)| format!("#{id} {why}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use dbmeter_stats::changepoint::Params;
    use dbmeter_store::history::{HistoryOptions, Series, history};
    use dbmeter_store::{Metric, RunSummary};
    use std::collections::BTreeMap;

    fn nightly(drop_at: i64) -> History {
        let noise = [
            0.01, -0.02, 0.015, 0.0, -0.01, 0.02, -0.015, 0.01, 0.0, -0.02, 0.01, 0.005,
        ];
        let runs: Vec<RunSummary> = (1..=12)
            .map(|i| RunSummary {
                id: i,
                stored_at: format!("2026-11-{i:02}T03:00:00Z"),
                started_at: Some(format!("2026-11-{i:02}T02:00:00Z")),
                workload: "oltp_point_select".into(),
                threads: Some(1),
                end_reason: "time_limit".into(),
                queries: Some(10),
                events_per_s: Some(
                    if i < drop_at { 1000.0 } else { 700.0 } * (1.0 + noise[i as usize - 1]),
                ),
                tags: vec![("job".into(), "nightly".into())],
                ..RunSummary::default()
            })
            .collect();
        history(
            &runs,
            &mut |_| Ok(BTreeMap::new()),
            "tag:job=nightly",
            &HistoryOptions {
                series: Series::Metric(Metric::Tps),
                since: None,
                last: None,
                params: Params::default(),
            },
        )
        .unwrap()
    }

    #[test]
    fn the_change_point_is_marked_on_its_run_only() {
        let h = nightly(7);
        let t = text(&h);
        let marked: Vec<&str> = t.lines().filter(|l| l.contains("change point (")).collect();
        assert_eq!(marked.len(), 1, "{t}");
        assert!(
            marked[0].trim_start().starts_with("7  2026-11-07 02:00:00"),
            "{t}"
        );
        assert!(marked[0].contains("change point (slower, p=0.0"), "{t}");
        assert!(t.contains("1 change point: run #7 -3"), "{t}");
        assert!(t.contains("segments: #1-#6 (6 runs) mean 1"), "{t}");
        assert!(t.starts_with("tps (transactions per second) over time: 12 runs of oltp_point_select, 1 thread, tags job=nightly\n"), "{t}");
    }

    #[test]
    fn no_step_no_mark() {
        let h = nightly(100);
        let t = text(&h);
        assert!(!t.contains("change point ("), "{t}");
        assert!(t.contains("no change point in 12 runs"), "{t}");
    }

    #[test]
    fn the_page_has_the_chart_with_its_marker() {
        let h = nightly(7);
        let html = crate::html::history::page(&h, "nightly").unwrap();
        assert!(html.contains("<svg"), "{html}");
        assert!(html.contains("#7 -3"), "the marker's label: {html}");
        assert!(html.contains("segment mean"));
        assert!(html.contains("<tr class=\"bad\"><td>#7</td>"), "{html}");
    }
}
