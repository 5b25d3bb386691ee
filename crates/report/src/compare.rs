//! A comparison table ([`dbmeter_store::Comparison`]) as text, Markdown,
//! CSV or HTML. The numbers are computed in `dbmeter_store::compare`; this
//! only lays them out.

use crate::csv::field as csv_field;
use crate::html::escape;
use crate::junit::{Case, CaseEnd, Suite};
use dbmeter_store::gate::{Check, Outcome};
use dbmeter_store::{CellStats, CompareMode, Comparison, ComparisonCell, Metric, Verdict};
use serde::Serialize;
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

/// A ratio (1.05) in the table's mode: `105.0` (x 100) or `+5.0%`.
fn in_mode(c: &Comparison, ratio: f64) -> String {
    match c.options.mode {
        CompareMode::Ratio => format!("{:.1}", ratio * 100.0),
        CompareMode::Diff => format!("{:+.1}%", (ratio - 1.0) * 100.0),
    }
}

/// A p-value: 4 decimals, or `< 0.0001`.
pub fn p_value(p: f64) -> String {
    if p < 0.0001 {
        "< 0.0001".into()
    } else {
        format!("{p:.4}")
    }
}

/// A cell's verdict in words, with the repeats that would settle it:
/// `slower`, `too noisy: about 12 repeats a side would settle it`.
pub fn verdict_words(st: &CellStats) -> String {
    match (st.verdict, st.repeats_needed) {
        (Verdict::TooNoisy | Verdict::TooFewRepeats, Some(n)) => {
            let more = if n >= dbmeter_stats::inference::MAX_REPEATS {
                format!("more than {n}")
            } else {
                format!("about {n}")
            };
            format!(
                "{}: {more} repeats a side would settle it",
                st.verdict.words()
            )
        }
        (v, _) => v.words().to_string(),
    }
}

/// A cell's interval in the table's mode: `95% CI 89.5 to 90.8`.
pub fn interval(c: &Comparison, st: &CellStats) -> String {
    format!(
        "{}% CI {} to {}",
        fmt_num(st.confidence * 100.0),
        in_mode(c, st.ratio_low),
        in_mode(c, st.ratio_high)
    )
}

fn cell_name(c: &Comparison, workload: &str, variant: &Option<String>, threads: u32) -> String {
    let v = match variant {
        Some(v) if c.by_variant => format!(" {v}"),
        _ => String::new(),
    };
    format!(
        "{workload}{v}, {threads} thread{}",
        plural(threads as usize)
    )
}

/// The statistics of each cell, a line each: the ratio, its interval, the
/// p-value and the verdict.
pub fn statistics_lines(c: &Comparison) -> Vec<String> {
    let mut out = Vec::new();
    for r in &c.rows {
        for (t, cell) in c.threads.iter().zip(&r.cells) {
            let Some(x) = cell else { continue };
            let name = cell_name(c, &r.workload, &r.variant, *t);
            match &x.stats {
                Some(st) => out.push(format!(
                    "{name}: {} ({}), p = {}: {}",
                    in_mode(c, st.ratio),
                    interval(c, st),
                    p_value(st.p_value),
                    verdict_words(st)
                )),
                None if x.timeout => out.push(format!("{name}: timeout, not judged")),
                None => out.push(format!(
                    "{name}: no ratio (a baseline value of 0), not judged"
                )),
            }
        }
    }
    out
}

/// The title of the statistics section.
pub fn statistics_title(c: &Comparison) -> String {
    format!(
        "Statistics ({}% bootstrap interval of the ratio of medians, two-sided Mann-Whitney p; \
         no significant difference: the interval within ±{}%)",
        fmt_num(c.options.confidence * 100.0),
        fmt_num(c.options.min_effect_pct)
    )
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
    let _ = writeln!(out, "\n{}:", statistics_title(c));
    for l in statistics_lines(c) {
        let _ = writeln!(out, "    {l}");
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
    out.push('\n');
    out.push_str(&markdown_statistics(c));
    out
}

/// The statistics as a Markdown table: a row per cell.
pub fn markdown_statistics(c: &Comparison) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}\n", md_escape(&statistics_title(c)));
    let _ = writeln!(
        out,
        "| cell | {} | {}% CI | p | verdict |\n|---|---:|---|---:|---|",
        match c.options.mode {
            CompareMode::Ratio => "ratio x 100",
            CompareMode::Diff => "change",
        },
        fmt_num(c.options.confidence * 100.0)
    );
    for r in &c.rows {
        for (t, cell) in c.threads.iter().zip(&r.cells) {
            let Some(x) = cell else { continue };
            let name = md_escape(&cell_name(c, &r.workload, &r.variant, *t));
            match &x.stats {
                Some(st) => {
                    let _ = writeln!(
                        out,
                        "| {name} | {} | {} to {} | {} | {} |",
                        in_mode(c, st.ratio),
                        in_mode(c, st.ratio_low),
                        in_mode(c, st.ratio_high),
                        md_escape(&p_value(st.p_value)),
                        md_escape(&verdict_words(st))
                    );
                }
                None => {
                    let _ = writeln!(
                        out,
                        "| {name} | {} | - | - | not judged |",
                        cell_value(c, x)
                    );
                }
            }
        }
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
         baseline_runs,candidate_runs,value_low,value_high,confidence,p_value,verdict,repeats_needed\n",
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
            let in_value = |ratio: f64| match c.options.mode {
                CompareMode::Ratio => num(ratio * 100.0),
                CompareMode::Diff => num((ratio - 1.0) * 100.0),
            };
            let st = x.stats.as_ref();
            let _ = writeln!(
                out,
                "{},{},{t},{},{mode},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
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
                st.map(|s| in_value(s.ratio_low)).unwrap_or_default(),
                st.map(|s| in_value(s.ratio_high)).unwrap_or_default(),
                st.map(|s| num(s.confidence)).unwrap_or_default(),
                st.map(|s| num(s.p_value)).unwrap_or_default(),
                st.map(|s| s.verdict.words()).unwrap_or("not judged"),
                st.and_then(|s| s.repeats_needed)
                    .map(|n| n.to_string())
                    .unwrap_or_default(),
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
                    if x.stats.as_ref().is_some_and(CellStats::significant) {
                        classes.push("significant");
                    }
                    let mut tip = format!(
                        "baseline median {:.3}{unit} over {} run(s), spread {:.1}%; candidate median {:.3}{unit} over {} run(s), spread {:.1}%",
                        x.baseline.median,
                        x.baseline.values.len(),
                        x.baseline.spread_pct,
                        x.candidate.median,
                        x.candidate.values.len(),
                        x.candidate.spread_pct
                    );
                    if let Some(st) = &x.stats {
                        let _ = write!(
                            tip,
                            "; {}, p = {}: {}",
                            interval(c, st),
                            p_value(st.p_value),
                            verdict_words(st)
                        );
                    }
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
         table.dbmeter-compare .significant { font-weight: bold; }\n\
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
    let _ = writeln!(out, "<h2>{}</h2>\n<ul>", escape(&statistics_title(c)));
    for l in statistics_lines(c) {
        let _ = writeln!(out, "<li>{}</li>", escape(&l));
    }
    out.push_str("</ul>\n</body>\n</html>\n");
    out
}

/// The JSON document of `compare --format=json` (schema
/// `dbmeter.compare`, docs/json-schema.md): the table with every cell's
/// sides and statistics, and the gate's checks when `--fail-on` was given.
pub fn json(c: &Comparison, gate: Option<&[Check]>) -> String {
    #[derive(Serialize)]
    struct Doc<'a> {
        schema: &'static str,
        schema_version: u32,
        #[serde(flatten)]
        table: &'a Comparison,
        #[serde(skip_serializing_if = "Option::is_none")]
        gate: Option<Gate<'a>>,
    }
    #[derive(Serialize)]
    struct Gate<'a> {
        failed: bool,
        checks: &'a [Check],
    }
    let doc = Doc {
        schema: "dbmeter.compare",
        schema_version: 1,
        table: c,
        gate: gate.map(|checks| Gate {
            failed: checks.iter().any(|k| k.outcome == Outcome::Fail),
            checks,
        }),
    };
    // Plain data: serialising it cannot fail, but say so if it did.
    serde_json::to_string_pretty(&doc)
        .map(|mut s| {
            s.push('\n');
            s
        })
        .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}\n"))
}

/// The gate's summary line: `gate passed: 4 checks` or `gate FAILED: 1 of
/// 4 checks`, with how many were not judged and how many failed as
/// inconclusive (`--fail-on-inconclusive`).
pub fn gate_summary(checks: &[Check]) -> String {
    let failed = checks.iter().filter(|k| k.outcome == Outcome::Fail).count();
    let unjudged = checks
        .iter()
        .filter(|k| k.outcome == Outcome::NotJudged)
        .count();
    // Inconclusive checks that failed (--fail-on-inconclusive); those that
    // passed leave the line as it was.
    let inconclusive = checks
        .iter()
        .filter(|k| k.inconclusive && k.outcome == Outcome::Fail)
        .count();
    let mut notes = Vec::new();
    if unjudged > 0 {
        notes.push(format!("{unjudged} not judged"));
    }
    if inconclusive > 0 {
        notes.push(format!("{inconclusive} inconclusive"));
    }
    let extra = if notes.is_empty() {
        String::new()
    } else {
        format!(" ({})", notes.join(", "))
    };
    if failed > 0 {
        format!(
            "gate FAILED: {failed} of {} check{} failed{extra}",
            checks.len(),
            plural(checks.len())
        )
    } else {
        format!(
            "gate passed: {} check{}{extra}",
            checks.len(),
            plural(checks.len())
        )
    }
}

fn check_line(k: &Check) -> String {
    format!("{} on {}: {}", k.fail_on, k.cell(), k.line)
}

/// The gate as text: its summary and a line per check.
pub fn gate_text(checks: &[Check]) -> String {
    let mut out = format!("\n{}\n", gate_summary(checks));
    for k in checks {
        let _ = writeln!(out, "    {}", check_line(k));
    }
    out
}

/// A Markdown summary for a pull-request comment: the gate's result and
/// checks (when there is a gate), then each table with its statistics.
pub fn summary_markdown(tables: &[&Comparison], gate: Option<&[Check]>) -> String {
    let mut out = String::from("## dbmeter compare\n\n");
    if let Some(checks) = gate {
        let failed = checks.iter().any(|k| k.outcome == Outcome::Fail);
        let _ = writeln!(
            out,
            "**{}**\n",
            md_escape(&gate_summary(checks).replacen("gate ", "Performance gate ", 1))
        );
        let _ = writeln!(
            out,
            "| threshold | cell | change | interval | p | verdict | result |\n|---|---|---:|---|---:|---|---|"
        );
        for k in checks {
            let pct = |r: Option<f64>| {
                r.map_or("-".to_string(), |r| format!("{:+.2}%", (r - 1.0) * 100.0))
            };
            let _ = writeln!(
                out,
                "| `{}` | {} | {} | {} to {} | {} | {} | {} |",
                k.fail_on.replace('`', "'"),
                md_escape(&k.cell()),
                pct(k.ratio),
                pct(k.ratio_low),
                pct(k.ratio_high),
                k.p_value.map_or("-".into(), |p| md_escape(&p_value(p))),
                md_escape(k.verdict.as_deref().unwrap_or("not judged")),
                match (k.outcome, k.inconclusive) {
                    (Outcome::Fail, false) => "**FAIL**",
                    (Outcome::Fail, true) => "**FAIL** (inconclusive)",
                    (Outcome::Pass, false) => "pass",
                    (Outcome::Pass, true) => "pass (inconclusive)",
                    (Outcome::NotJudged, _) => "not judged",
                }
            );
        }
        if failed {
            out.push_str(
                "\nA check fails when the change is statistically significant and beyond its threshold",
            );
            out.push_str(
                if checks
                    .iter()
                    .any(|k| k.outcome == Outcome::Fail && k.inconclusive)
                {
                    ", or (--fail-on-inconclusive) when it cannot tell whether the threshold was crossed.\n"
                } else {
                    ".\n"
                },
            );
        }
        out.push('\n');
    }
    for t in tables {
        let _ = writeln!(out, "### {}\n", md_escape(t.options.metric.describe()));
        out.push_str(&markdown(t));
        out.push('\n');
    }
    out
}

/// The gate's checks as JUnit XML: a test case per threshold and cell.
pub fn gate_junit(checks: &[Check], baseline: &str, candidate: &str) -> String {
    let cases = checks
        .iter()
        .map(|k| Case {
            name: format!("{} {}", k.fail_on, k.cell()),
            classname: format!("dbmeter.compare.{}", k.workload),
            time_s: 0.0,
            end: match k.outcome {
                Outcome::Pass => CaseEnd::Passed,
                Outcome::Fail => CaseEnd::Failure {
                    kind: if k.inconclusive {
                        "inconclusive".into()
                    } else {
                        "regression".into()
                    },
                    message: check_line(k),
                },
                Outcome::NotJudged => CaseEnd::Skipped {
                    message: check_line(k),
                },
            },
            output: Some(check_line(k)),
        })
        .collect();
    Suite {
        name: "dbmeter.compare".into(),
        properties: vec![
            ("baseline".into(), baseline.to_string()),
            ("candidate".into(), candidate.to_string()),
        ],
        cases,
        ..Suite::default()
    }
    .xml()
}

/// The metric names `--metric` takes.
pub fn metric_names() -> String {
    Metric::ALL
        .iter()
        .map(|m| m.name())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use dbmeter_store::gate::{self, FailOn};
    use dbmeter_store::{CompareOptions, RunSummary};

    fn runs(first_id: i64, variant: &str, tps: &[f64]) -> Vec<RunSummary> {
        tps.iter()
            .enumerate()
            .map(|(i, &t)| RunSummary {
                id: first_id + i as i64,
                workload: "w".into(),
                variant: Some(variant.into()),
                threads: Some(1),
                end_reason: "time_limit".into(),
                events_per_s: Some(t),
                ..RunSummary::default()
            })
            .collect()
    }

    fn table(cand: &[f64]) -> Comparison {
        dbmeter_store::compare(
            &runs(1, "A", &[100.0, 101.0, 99.0, 100.5, 99.5]),
            &runs(10, "B", cand),
            &CompareOptions::default(),
        )
        .unwrap()
    }

    #[test]
    fn statistics_and_gate_in_every_layout() {
        let slow = table(&[90.0, 91.0, 89.0, 90.5, 89.5]);
        let lines = statistics_lines(&slow);
        assert_eq!(lines.len(), 1);
        assert!(
            lines[0].starts_with("w, 1 thread: 90.0 (95% CI ")
                && lines[0].ends_with("p = 0.0079: slower"),
            "{lines:?}"
        );
        assert!(text(&slow).contains("\nStatistics (95% bootstrap interval"));
        let csv = csv(&slow);
        assert!(
            csv.lines()
                .next()
                .unwrap()
                .ends_with(",p_value,verdict,repeats_needed")
        );
        assert!(csv.lines().nth(1).unwrap().contains(",slower,"), "{csv}");

        let rule = FailOn::parse("tps:-3%").unwrap();
        let checks = gate::check(&rule, &slow);
        assert_eq!(checks[0].outcome, Outcome::Fail);
        assert_eq!(gate_summary(&checks), "gate FAILED: 1 of 1 check failed");
        let x = gate_junit(&checks, "variant:A", "variant:B");
        assert!(
            x.contains("tests=\"1\" failures=\"1\" errors=\"0\" skipped=\"0\""),
            "{x}"
        );
        assert!(
            x.contains("<property name=\"baseline\" value=\"variant:A\"/>"),
            "{x}"
        );
        let md = summary_markdown(&[&slow], Some(&checks));
        assert!(
            md.contains("**Performance gate FAILED: 1 of 1 check failed**"),
            "{md}"
        );
        assert!(md.contains("| `tps:-3%` | w, 1 thread | -10.00% |"), "{md}");
        let j: serde_json::Value = serde_json::from_str(&json(&slow, Some(&checks))).unwrap();
        assert_eq!(j["schema"], "dbmeter.compare");
        assert_eq!(j["gate"]["failed"], true);
        assert_eq!(j["rows"][0]["cells"][0]["stats"]["verdict"], "slower");

        // Within 1%: passes, and a drop beyond 20% is not asked for.
        let same = table(&[100.2, 100.7, 99.2, 100.1, 99.9]);
        let checks = gate::check(&FailOn::parse("tps:-20%").unwrap(), &slow);
        assert_eq!(checks[0].outcome, Outcome::Pass);
        assert!(
            checks[0].line.ends_with("slower), within the threshold"),
            "{}",
            checks[0].line
        );
        let checks = gate::check(&rule, &same);
        assert_eq!(checks[0].outcome, Outcome::Pass);
        assert!(statistics_lines(&same)[0].ends_with(": no significant difference"));
        // Diff mode gives the interval as a difference.
        let mut d = slow.clone();
        d.options.mode = CompareMode::Diff;
        assert!(statistics_lines(&d)[0].starts_with("w, 1 thread: -10.0% (95% CI -"));
    }

    #[test]
    fn statistics_in_markdown_and_html() {
        // A significant drop: its interval, p and verdict in each layout.
        let slow = table(&[90.0, 91.0, 89.0, 90.5, 89.5]);
        let st = slow.rows[0].cells[0].as_ref().unwrap().stats.unwrap();
        let ci = format!(
            "{} to {}",
            in_mode(&slow, st.ratio_low),
            in_mode(&slow, st.ratio_high)
        );
        let md = markdown(&slow);
        assert!(md.contains("\nStatistics (95% bootstrap interval"), "{md}");
        assert!(
            md.contains("| cell | ratio x 100 | 95% CI | p | verdict |"),
            "{md}"
        );
        assert!(
            md.contains(&format!("| w, 1 thread | 90.0 | {ci} | 0.0079 | slower |")),
            "{md}"
        );
        let page = html(&slow);
        assert!(
            page.contains("<h2>Statistics (95% bootstrap interval"),
            "{page}"
        );
        assert!(
            page.contains(&format!(
                "<li>w, 1 thread: 90.0 (95% CI {ci}), p = 0.0079: slower</li>"
            )),
            "{page}"
        );
        // The table's cell carries them in its tooltip (the table `dbmeter
        // report` embeds), and is marked significant.
        let t = html_table(&slow);
        assert!(t.contains("significant"), "{t}");
        assert!(
            t.contains(&format!("; 95% CI {ci}, p = 0.0079: slower\"")),
            "{t}"
        );

        // Too noisy: the repeats that would settle it, in words, in each
        // layout.
        let noisy = table(&[60.0, 140.0, 80.0, 125.0, 100.0]);
        let st = noisy.rows[0].cells[0].as_ref().unwrap().stats.unwrap();
        assert_eq!(st.verdict, Verdict::TooNoisy);
        let words = verdict_words(&st);
        let n = st.repeats_needed.unwrap();
        assert!(
            words == format!("too noisy: about {n} repeats a side would settle it")
                || words == format!("too noisy: more than {n} repeats a side would settle it"),
            "{words}"
        );
        assert!(markdown(&noisy).contains(&format!("| {words} |")));
        assert!(html(&noisy).contains(&format!(": {words}</li>")));
        assert!(html_table(&noisy).contains(&format!(": {words}\"")));

        // Two repeats a side: too few, and how many would do.
        let few = dbmeter_store::compare(
            &runs(1, "A", &[100.0, 101.0]),
            &runs(10, "B", &[90.0, 91.0]),
            &CompareOptions::default(),
        )
        .unwrap();
        let st = few.rows[0].cells[0].as_ref().unwrap().stats.unwrap();
        assert_eq!(st.verdict, Verdict::TooFewRepeats);
        let words = verdict_words(&st);
        assert!(words.starts_with("too few repeats: about "), "{words}");
        assert!(markdown(&few).contains(&format!("| {words} |")));
        assert!(html(&few).contains(&format!(": {words}</li>")));
    }

    #[test]
    fn inconclusive_checks_fail_only_when_asked() {
        let rule = FailOn::parse("tps:-3%").unwrap();
        // Two repeats a side: passes, inconclusive.
        let few = dbmeter_store::compare(
            &runs(1, "A", &[100.0, 101.0]),
            &runs(10, "B", &[90.0, 91.0]),
            &CompareOptions::default(),
        )
        .unwrap();
        let mut checks = gate::check(&rule, &few);
        assert_eq!(checks[0].outcome, Outcome::Pass);
        assert!(checks[0].inconclusive);
        assert!(
            checks[0].line.ends_with("too few repeats)"),
            "{}",
            checks[0].line
        );
        assert_eq!(gate_summary(&checks), "gate passed: 1 check");
        assert!(summary_markdown(&[&few], Some(&checks)).contains("| pass (inconclusive) |"));
        // Asked to, it fails, and every layout says why.
        assert_eq!(gate::fail_inconclusive(&mut checks), 1);
        assert_eq!(checks[0].outcome, Outcome::Fail);
        assert!(
            checks[0]
                .line
                .starts_with("FAIL (inconclusive, --fail-on-inconclusive): tps -9.95% ("),
            "{}",
            checks[0].line
        );
        assert_eq!(
            gate_summary(&checks),
            "gate FAILED: 1 of 1 check failed (1 inconclusive)"
        );
        let md = summary_markdown(&[&few], Some(&checks));
        assert!(md.contains("| **FAIL** (inconclusive) |"), "{md}");
        assert!(
            md.contains("or (--fail-on-inconclusive) when it cannot tell"),
            "{md}"
        );
        let x = gate_junit(&checks, "variant:A", "variant:B");
        assert!(x.contains("type=\"inconclusive\""), "{x}");
        let j: serde_json::Value = serde_json::from_str(&json(&few, Some(&checks))).unwrap();
        assert_eq!(j["gate"]["failed"], true);
        assert_eq!(j["gate"]["checks"][0]["inconclusive"], true);

        // Too noisy, the interval reaching past -3%: inconclusive; too
        // noisy but the interval well above -3% (a threshold of -50%):
        // conclusive, it cannot have crossed it.
        let noisy = table(&[60.0, 140.0, 80.0, 125.0, 100.0]);
        let k = &gate::check(&rule, &noisy)[0];
        assert!(k.inconclusive && k.outcome == Outcome::Pass, "{k:?}");
        let mut wide = gate::check(&FailOn::parse("tps:-50%").unwrap(), &noisy);
        assert!(!wide[0].inconclusive, "{:?}", wide[0]);
        assert_eq!(gate::fail_inconclusive(&mut wide), 0);
        assert_eq!(wide[0].outcome, Outcome::Pass);
        // Significant or within the smallest change that matters: conclusive.
        let slow = table(&[90.0, 91.0, 89.0, 90.5, 89.5]);
        assert!(!gate::check(&rule, &slow)[0].inconclusive);
        let same = table(&[100.2, 100.7, 99.2, 100.1, 99.9]);
        let mut k = gate::check(&rule, &same);
        assert!(!k[0].inconclusive);
        assert_eq!(gate::fail_inconclusive(&mut k), 0);
        assert_eq!(gate_summary(&k), "gate passed: 1 check");
    }
}
