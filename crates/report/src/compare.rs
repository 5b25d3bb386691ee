//! A comparison table ([`dbmeter_store::Comparison`]) as text, Markdown,
//! CSV or HTML. The numbers are computed in `dbmeter_store::compare`; this
//! only lays them out.

use crate::csv::field as csv_field;
use crate::html::escape;
use dbmeter_store::{CompareMode, Comparison, ComparisonCell, Metric};
use std::fmt::Write as _;

/// The mark on cells whose repeats spread too much.
pub const NOISE_MARK: &str = "*";

/// What the cells are, in one line, e.g. `tps (transactions per second):
/// candidate / baseline x 100 of the medians over repeats; above 100 the
/// candidate is better`.
pub fn title(c: &Comparison) -> String {
    let m = c.options.metric;
    let what = match c.options.mode {
        CompareMode::Ratio => "candidate / baseline x 100",
        CompareMode::Diff => "difference in %, (candidate - baseline) / baseline x 100",
    };
    let better = match (c.options.mode, m.lower_is_better()) {
        (CompareMode::Ratio, false) => "above 100 the candidate is faster",
        (CompareMode::Ratio, true) => "lower is better: below 100 the candidate is faster",
        (CompareMode::Diff, false) => "positive: the candidate is faster",
        (CompareMode::Diff, true) => "lower is better: negative, the candidate is faster",
    };
    format!(
        "{} ({}{}): {what} of the medians over repeats; {better}",
        m.name(),
        c.metric_words(),
        match m {
            Metric::Figures => ", each in its own unit",
            _ if m.lower_is_better() => ", ms",
            _ => "",
        }
    )
}

/// The baseline and candidate lines.
pub fn sides(c: &Comparison) -> [String; 2] {
    let variant = c
        .baseline_variant
        .as_ref()
        .filter(|v| !c.baseline_label.contains(&format!("variant:{v}")))
        .map_or(String::new(), |v| format!(", variant {v}"));
    [
        format!(
            "baseline:  {}{variant} ({} completed run{})",
            c.baseline_label,
            c.baseline_runs,
            plural(c.baseline_runs)
        ),
        format!(
            "candidate: {} ({} completed run{})",
            c.candidate_label,
            c.candidate_runs,
            plural(c.candidate_runs)
        ),
    ]
}

/// The line on runs left out of the medians because they did not
/// complete; None when every run completed.
pub fn left_out(c: &Comparison) -> Option<String> {
    if c.left_out.is_empty() {
        return None;
    }
    let list: Vec<String> = c
        .left_out
        .iter()
        .map(|(id, reason)| format!("#{id} {reason}"))
        .collect();
    Some(format!(
        "{} run{} left out of the medians: did not complete ({})",
        c.left_out.len(),
        plural(c.left_out.len()),
        list.join(", ")
    ))
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The legend for the noise mark.
pub fn legend(c: &Comparison) -> String {
    format!(
        "{NOISE_MARK} the spread over repeats, (max - min) / median, is above {}% on either side: do not trust the cell",
        fmt_num(c.options.noise_pct)
    )
}

/// The note for cells with one run on a side, where noise cannot be
/// judged; None when every cell has repeats on both sides.
pub fn single_run_note(c: &Comparison) -> Option<String> {
    let (single, all) = c.single_run_cells();
    (single > 0).then(|| {
        let which = if single == all {
            "Every cell has".to_string()
        } else {
            format!("{single} of {all} cells have")
        };
        format!(
            "{which} one run on a side: noise cannot be judged there (the spread over \
             repeats needs two runs or more, so no {NOISE_MARK} can appear); store more \
             repeats to know whether a difference is real"
        )
    })
}

fn fmt_num(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        format!("{x}")
    }
}

/// A cell's number: `101.3` (ratio) or `+1.3` / `-4.0` (difference);
/// `n/a` when the baseline's median is 0.
pub fn cell_value(c: &Comparison, cell: &ComparisonCell) -> String {
    if cell.timeout {
        return "timeout".into();
    }
    match (cell.value, c.options.mode) {
        (None, _) => "n/a".into(),
        (Some(v), CompareMode::Ratio) => format!("{v:.1}"),
        (Some(v), CompareMode::Diff) => format!("{v:+.1}"),
    }
}

fn cell_text(c: &Comparison, cell: &Option<ComparisonCell>) -> String {
    match cell {
        None => "-".into(),
        Some(x) if x.noisy => format!("{}{NOISE_MARK}", cell_value(c, x)),
        Some(x) => cell_value(c, x),
    }
}

fn row_label(c: &Comparison, workload: &str, variant: &Option<String>) -> Vec<String> {
    let mut v = vec![workload.to_string()];
    if c.by_variant {
        v.push(variant.clone().unwrap_or_else(|| "-".into()));
    }
    v
}

fn header(c: &Comparison) -> Vec<String> {
    let mut h = vec!["workload".to_string()];
    if c.by_variant {
        h.push("variant".into());
    }
    h.extend(c.threads.iter().map(|t| t.to_string()));
    h
}

/// A plain-text table: rows are workloads (and variants), columns thread
/// counts.
pub fn text(c: &Comparison) -> String {
    let mut grid = vec![header(c)];
    for r in &c.rows {
        let mut line = row_label(c, &r.workload, &r.variant);
        line.extend(r.cells.iter().map(|x| cell_text(c, x)));
        grid.push(line);
    }
    let labels = if c.by_variant { 2 } else { 1 };
    let cols = grid[0].len();
    // Number columns: the width without the mark, which hangs right.
    let widths: Vec<usize> = (0..cols)
        .map(|i| {
            grid.iter()
                .map(|r| {
                    r[i].strip_suffix(NOISE_MARK)
                        .unwrap_or(&r[i])
                        .chars()
                        .count()
                })
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    let _ = writeln!(out, "{}", title(c));
    for s in sides(c) {
        let _ = writeln!(out, "{s}");
    }
    if let Some(l) = left_out(c) {
        let _ = writeln!(out, "{l}");
    }
    let _ = writeln!(out, "columns: threads (client connections)\n");
    for row in &grid {
        let mut line = String::new();
        for (i, v) in row.iter().enumerate() {
            let w = widths[i];
            if i < labels {
                let _ = write!(line, "{v:<w$}  ");
            } else {
                // Numbers line up on their digits; the mark hangs right.
                let (num, mark) = match v.strip_suffix(NOISE_MARK) {
                    Some(n) => (n, NOISE_MARK),
                    None => (v.as_str(), " "),
                };
                let _ = write!(line, "{num:>w$}{mark}  ");
            }
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
    if c.any_noisy() {
        let _ = writeln!(out, "\n{}", legend(c));
    }
    if let Some(note) = single_run_note(c) {
        let _ = writeln!(out, "\n{note}");
    }
    out
}

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|").replace('*', "\\*")
}

/// A Markdown table with its title and legend.
pub fn markdown(c: &Comparison) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}\n", md_escape(&title(c)));
    for s in sides(c) {
        let _ = writeln!(out, "- {}", md_escape(&s));
    }
    if let Some(l) = left_out(c) {
        let _ = writeln!(out, "- {}", md_escape(&l));
    }
    let _ = writeln!(out, "- columns: threads (client connections)\n");
    let h = header(c);
    let labels = if c.by_variant { 2 } else { 1 };
    let _ = writeln!(
        out,
        "| {} |",
        h.iter()
            .map(|x| md_escape(x))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    let align: Vec<&str> = (0..h.len())
        .map(|i| if i < labels { "---" } else { "---:" })
        .collect();
    let _ = writeln!(out, "|{}|", align.join("|"));
    for r in &c.rows {
        let mut line: Vec<String> = row_label(c, &r.workload, &r.variant)
            .iter()
            .map(|x| md_escape(x))
            .collect();
        line.extend(r.cells.iter().map(|x| md_escape(&cell_text(c, x))));
        let _ = writeln!(out, "| {} |", line.join(" | "));
    }
    if c.any_noisy() {
        let _ = writeln!(out, "\n{}", md_escape(&legend(c)));
    }
    if let Some(note) = single_run_note(c) {
        let _ = writeln!(out, "\n{}", md_escape(&note));
    }
    out
}

fn ids(v: &[i64]) -> String {
    v.iter()
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// CSV, one row per cell (workload, variant, threads) with both sides'
/// medians, ranges, spreads and run ids.
pub fn csv(c: &Comparison) -> String {
    let mut out = String::from(
        "workload,variant,threads,metric,mode,value,noisy,baseline_median,candidate_median,\
         baseline_min,baseline_max,candidate_min,candidate_max,baseline_spread_pct,candidate_spread_pct,\
         baseline_runs,candidate_runs\n",
    );
    let mode = match c.options.mode {
        CompareMode::Ratio => "ratio",
        CompareMode::Diff => "diff",
    };
    let num = |x: f64| {
        if x.is_finite() {
            format!("{x}")
        } else {
            "inf".into()
        }
    };
    for r in &c.rows {
        for (t, cell) in c.threads.iter().zip(&r.cells) {
            let Some(x) = cell else { continue };
            let _ = writeln!(
                out,
                "{},{},{t},{},{mode},{},{},{},{},{},{},{},{},{},{},{},{}",
                csv_field(&r.workload),
                csv_field(r.variant.as_deref().unwrap_or("")),
                c.options.metric.name(),
                x.value.map(num).unwrap_or_default(),
                x.noisy,
                num(x.baseline.median),
                num(x.candidate.median),
                num(x.baseline.min),
                num(x.baseline.max),
                num(x.candidate.min),
                num(x.candidate.max),
                num(x.baseline.spread_pct),
                num(x.candidate.spread_pct),
                ids(&x.baseline.runs),
                ids(&x.candidate.runs),
            );
        }
    }
    out
}

/// Whether a cell says the candidate is better (+1), worse (-1) or about
/// the same (0, within 1%).
fn direction(c: &Comparison, cell: &ComparisonCell) -> i32 {
    let Some(v) = cell.value else { return 0 };
    let change = match c.options.mode {
        CompareMode::Ratio => v - 100.0,
        CompareMode::Diff => v,
    };
    let change = if c.options.metric.lower_is_better() {
        -change
    } else {
        change
    };
    if change > 1.0 {
        1
    } else if change < -1.0 {
        -1
    } else {
        0
    }
}

/// The table alone (`<table class="dbmeter-compare">`), for embedding in a
/// page. Cells carry classes `better`, `worse`, `noisy` and a tooltip with
/// both medians and spreads.
pub fn html_table(c: &Comparison) -> String {
    let mut out = String::from("<table class=\"dbmeter-compare\">\n<thead><tr>");
    let labels = if c.by_variant { 2 } else { 1 };
    for (i, h) in header(c).iter().enumerate() {
        let class = if i < labels { "label" } else { "num" };
        let _ = write!(out, "<th class=\"{class}\">{}</th>", escape(h));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    let unit = if c.options.metric.lower_is_better() {
        " ms"
    } else {
        ""
    };
    for r in &c.rows {
        out.push_str("<tr>");
        for l in row_label(c, &r.workload, &r.variant) {
            let _ = write!(out, "<th class=\"label\">{}</th>", escape(&l));
        }
        for cell in &r.cells {
            match cell {
                None => out.push_str("<td class=\"num empty\">-</td>"),
                Some(x) => {
                    let mut classes = vec!["num"];
                    match direction(c, x) {
                        1 => classes.push("better"),
                        -1 => classes.push("worse"),
                        _ => {}
                    }
                    if x.noisy {
                        classes.push("noisy");
                    }
                    let tip = format!(
                        "baseline median {:.3}{unit} over {} run(s), spread {:.1}%; candidate median {:.3}{unit} over {} run(s), spread {:.1}%",
                        x.baseline.median,
                        x.baseline.values.len(),
                        x.baseline.spread_pct,
                        x.candidate.median,
                        x.candidate.values.len(),
                        x.candidate.spread_pct
                    );
                    let _ = write!(
                        out,
                        "<td class=\"{}\" title=\"{}\">{}</td>",
                        classes.join(" "),
                        escape(&tip),
                        escape(&cell_text(c, cell))
                    );
                }
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n");
    out
}

/// A self-contained HTML page: title, sides, the table and the legend.
pub fn html(c: &Comparison) -> String {
    let mut out = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>dbmeter compare</title>\n<style>\n\
         body { font-family: sans-serif; margin: 2em; }\n\
         table.dbmeter-compare { border-collapse: collapse; }\n\
         table.dbmeter-compare th, table.dbmeter-compare td { border: 1px solid #ccc; padding: 0.25em 0.6em; }\n\
         table.dbmeter-compare .num { text-align: right; font-variant-numeric: tabular-nums; }\n\
         table.dbmeter-compare .label { text-align: left; }\n\
         table.dbmeter-compare .better { background: #e3f4e3; }\n\
         table.dbmeter-compare .worse { background: #fbe3e3; }\n\
         table.dbmeter-compare .noisy { font-style: italic; color: #777; }\n\
         </style>\n</head>\n<body>\n",
    );
    let _ = writeln!(out, "<h1>{}</h1>", escape(&title(c)));
    let [b, k] = sides(c);
    let l = left_out(c).map_or(String::new(), |l| format!("{}<br>\n", escape(&l)));
    let _ = writeln!(
        out,
        "<p>{}<br>\n{}<br>\n{l}columns: threads (client connections)</p>",
        escape(&b),
        escape(&k)
    );
    out.push_str(&html_table(c));
    if c.any_noisy() {
        let _ = writeln!(out, "<p>{}</p>", escape(&legend(c)));
    }
    if let Some(note) = single_run_note(c) {
        let _ = writeln!(out, "<p>{}</p>", escape(&note));
    }
    out.push_str("</body>\n</html>\n");
    out
}

/// The metric names `--metric` takes.
pub fn metric_names() -> String {
    Metric::ALL
        .iter()
        .map(|m| m.name())
        .collect::<Vec<_>>()
        .join(", ")
}
