//! The report: a summary table of every query and temperature, then the
//! queries the filter keeps with their differing measures side by side;
//! as text or as a self-contained HTML page. JSON is the model itself.

use crate::collect::one_line;
use crate::model::{Comparison, QueryResult, SideResult, TemperatureResult};
use crate::vars::{self, ratio};
use dbmeter_filter::Expr;
use std::fmt::Write as _;

/// Marks what `filter` keeps (`text` is how it was written).
pub fn apply_filter(c: &mut Comparison, filter: &Expr, text: &str) {
    c.filter = Some(text.to_string());
    for q in &mut c.queries {
        let mut any = false;
        for i in 0..q.temperatures.len() {
            let v = vars::variables(q, &q.temperatures[i]);
            let kept = filter.eval(&|n: &str| v.get(n).cloned());
            q.temperatures[i].kept = kept;
            any |= kept;
        }
        q.kept = any;
    }
}

/// Seconds in the unit that suits them.
pub fn fmt_time(s: f64) -> String {
    if !s.is_finite() {
        return "-".into();
    }
    let a = s.abs();
    if a >= 1.0 {
        format!("{s:.3} s")
    } else if a >= 1e-3 {
        format!("{:.3} ms", s * 1e3)
    } else {
        format!("{:.1} us", s * 1e6)
    }
}

fn fmt_num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

fn fmt_ratio(r: f64) -> String {
    if r.is_infinite() {
        "inf".into()
    } else {
        format!("{r:.2}x")
    }
}

/// How a measure's values are written: times as times.
fn fmt_value(name: &str, x: f64) -> String {
    if name.ends_with("_time") || name == "Execution_time" {
        fmt_time(x)
    } else {
        fmt_num(x)
    }
}

fn opt(x: Option<f64>, name: &str) -> String {
    x.map_or_else(|| "-".into(), |v| fmt_value(name, v))
}

/// The result in a word: same, or what differs.
fn result_word(t: &TemperatureResult) -> &'static str {
    let (a, b) = (&t.a, &t.b);
    match (&a.error, &b.error) {
        (Some(_), Some(_)) => return "both failed",
        (Some(_), None) => return "A failed",
        (None, Some(_)) => return "B failed",
        _ => {}
    }
    if a.rows != b.rows {
        "rows differ"
    } else if a.checksum != b.checksum {
        "values differ"
    } else {
        "same"
    }
}

/// The rows of a kept temperature's detail: (name, A, B, delta, ratio),
/// the measures that differ.
fn detail_rows(t: &TemperatureResult) -> Vec<[String; 5]> {
    let mut out = Vec::new();
    let mut push = |name: &str, a: Option<f64>, b: Option<f64>, always: bool| {
        if !always && a == b {
            return;
        }
        if !always && a.unwrap_or(0.0) == 0.0 && b.unwrap_or(0.0) == 0.0 {
            return;
        }
        let (delta, r) = match (a, b) {
            (Some(x), Some(y)) => (fmt_value(name, y - x), fmt_ratio(ratio(x, y))),
            _ => (String::new(), String::new()),
        };
        out.push([name.to_string(), opt(a, name), opt(b, name), delta, r]);
    };
    push("Execution_time", t.a.time_s, t.b.time_s, true);
    push(
        "Rows",
        t.a.rows.map(|r| r as f64),
        t.b.rows.map(|r| r as f64),
        true,
    );
    let names: std::collections::BTreeSet<&String> =
        t.a.counters.keys().chain(t.b.counters.keys()).collect();
    for n in names {
        push(
            n,
            t.a.counters.get(n).copied(),
            t.b.counters.get(n).copied(),
            false,
        );
    }
    out
}

fn side_notes(label: &str, r: &SideResult) -> Vec<String> {
    let mut v = Vec::new();
    if let Some(e) = &r.error {
        v.push(format!("error on {label}: {}", one_line(e, 200)));
    }
    for w in &r.warnings {
        v.push(format!("warning on {label}: {}", one_line(w, 200)));
    }
    v
}

fn header_lines(c: &Comparison) -> Vec<String> {
    let runs = match c.runs {
        0 => "each cold only".to_string(),
        1 => "each cold and warm (1 warm run)".to_string(),
        n => format!("each cold and warm ({n} warm runs, median)"),
    };
    let n = c.queries.len();
    let mut out = vec![format!(
        "dbmeter compare-queries: {n} quer{}, {runs}, on",
        if n == 1 { "y" } else { "ies" }
    )];
    for s in &c.sides {
        out.push(format!("  {}  {}  {}", s.label, s.version, s.target));
        out.push(format!("     {}", s.cold_note));
    }
    out
}

fn summary_rows(c: &Comparison) -> Vec<[String; 9]> {
    let mut rows = Vec::new();
    for q in &c.queries {
        for t in &q.temperatures {
            let slower = match (t.a.time_s, t.b.time_s) {
                (Some(x), Some(y)) if x > y => "A",
                (Some(x), Some(y)) if y > x => "B",
                _ => "",
            };
            let r = match (t.a.time_s, t.b.time_s) {
                (Some(x), Some(y)) => format!("{} {slower}", fmt_ratio(ratio(x, y))),
                _ => "-".into(),
            };
            rows.push([
                if t.kept { "*".into() } else { String::new() },
                q.id.clone(),
                t.temperature.clone(),
                opt(t.a.time_s, "Execution_time"),
                opt(t.b.time_s, "Execution_time"),
                r.trim_end().to_string(),
                t.a.rows.map_or("-".into(), |r| r.to_string()),
                t.b.rows.map_or("-".into(), |r| r.to_string()),
                result_word(t).into(),
            ]);
        }
    }
    rows
}

const SUMMARY_HEAD: [&str; 9] = [
    "", "query", "temp", "time A", "time B", "ratio", "rows A", "rows B", "result",
];

fn table<const N: usize>(head: [&str; N], rows: &[[String; N]], right: &[usize]) -> String {
    let mut w = [0usize; N];
    for (i, h) in head.iter().enumerate() {
        w[i] = h.chars().count();
    }
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let mut out = String::new();
    let line = |cells: Vec<&str>, out: &mut String| {
        let mut l = String::from(" ");
        for (i, c) in cells.iter().enumerate() {
            let pad = w[i] - c.chars().count();
            l.push(' ');
            if right.contains(&i) {
                l.push_str(&" ".repeat(pad));
                l.push_str(c);
            } else {
                l.push_str(c);
                l.push_str(&" ".repeat(pad));
            }
        }
        out.push_str(l.trim_end());
        out.push('\n');
    };
    line(head.to_vec(), &mut out);
    for r in rows {
        line(r.iter().map(String::as_str).collect(), &mut out);
    }
    out
}

fn counts(c: &Comparison) -> String {
    let kept_q = c.queries.iter().filter(|q| q.kept).count();
    let kept_t: usize = c
        .queries
        .iter()
        .map(|q| q.temperatures.iter().filter(|t| t.kept).count())
        .sum();
    let all_t: usize = c.queries.iter().map(|q| q.temperatures.len()).sum();
    format!(
        "{kept_q} of {} queries differ ({kept_t} of {all_t} query-temperatures kept by the filter)",
        c.queries.len()
    )
}

fn kept_queries(c: &Comparison) -> impl Iterator<Item = &QueryResult> {
    c.queries.iter().filter(|q| q.kept)
}

/// The text report.
pub fn text(c: &Comparison) -> String {
    let mut out = header_lines(c).join("\n");
    out.push('\n');
    if let Some(f) = &c.filter {
        let _ = writeln!(out, "filter: {f}");
    }
    for n in &c.notes {
        let _ = writeln!(out, "note: {n}");
    }
    out.push_str(
        "\nSummary (* = kept by the filter; ratio: the slower side's time over the other's)\n",
    );
    out.push_str(&table(SUMMARY_HEAD, &summary_rows(c), &[3, 4, 5, 6, 7]));
    let _ = writeln!(out, "{}", counts(c));
    for q in kept_queries(c) {
        let _ = writeln!(out, "\n{}  {}", q.id, one_line(&q.sql, 200));
        let _ = writeln!(out, "    {} (query ID {})", q.origin, q.query_id);
        for t in q.temperatures.iter().filter(|t| t.kept) {
            let head = [t.temperature.as_str(), "A", "B", "B - A", "ratio"];
            let body = detail_rows(t);
            for l in table(head, &body, &[1, 2, 3, 4]).lines() {
                let _ = writeln!(out, "  {l}");
            }
            for n in side_notes("A", &t.a)
                .into_iter()
                .chain(side_notes("B", &t.b))
            {
                let _ = writeln!(out, "    {n}");
            }
            if t.a.checksum != t.b.checksum && t.a.error.is_none() && t.b.error.is_none() {
                let _ = writeln!(
                    out,
                    "    result checksums: A {}  B {}",
                    t.a.checksum.as_deref().unwrap_or("-"),
                    t.b.checksum.as_deref().unwrap_or("-")
                );
            }
        }
    }
    out
}

fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            _ => o.push(ch),
        }
    }
    o
}

fn html_table<const N: usize>(head: [&str; N], rows: &[[String; N]], marked: &[bool]) -> String {
    let mut o = String::from("<table><thead><tr>");
    for h in head {
        let _ = write!(o, "<th>{}</th>", esc(h));
    }
    o.push_str("</tr></thead><tbody>");
    for (i, r) in rows.iter().enumerate() {
        let class = if marked.get(i).copied().unwrap_or(false) {
            " class=\"kept\""
        } else {
            ""
        };
        let _ = write!(o, "<tr{class}>");
        for c in r {
            let _ = write!(o, "<td>{}</td>", esc(c));
        }
        o.push_str("</tr>");
    }
    o.push_str("</tbody></table>\n");
    o
}

/// Two bars, A's and B's time, as inline SVG scaled to the slower.
fn time_bars(t: &TemperatureResult) -> String {
    let (Some(a), Some(b)) = (t.a.time_s, t.b.time_s) else {
        return String::new();
    };
    let max = a.max(b);
    if max <= 0.0 {
        return String::new();
    }
    let w = |x: f64| (x / max * 300.0).max(1.0);
    format!(
        "<svg width=\"420\" height=\"44\" role=\"img\" aria-label=\"time A and B\">\
         <rect x=\"20\" y=\"4\" width=\"{:.1}\" height=\"16\" fill=\"#4477aa\"/>\
         <text x=\"4\" y=\"16\" font-size=\"12\">A</text>\
         <text x=\"{:.1}\" y=\"16\" font-size=\"12\">{}</text>\
         <rect x=\"20\" y=\"24\" width=\"{:.1}\" height=\"16\" fill=\"#ee6677\"/>\
         <text x=\"4\" y=\"36\" font-size=\"12\">B</text>\
         <text x=\"{:.1}\" y=\"36\" font-size=\"12\">{}</text></svg>",
        w(a),
        w(a) + 24.0,
        esc(&fmt_time(a)),
        w(b),
        w(b) + 24.0,
        esc(&fmt_time(b))
    )
}

/// A self-contained HTML page (no scripts, no outside files).
pub fn html(c: &Comparison) -> String {
    let mut o = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>dbmeter compare-queries</title><style>\
         body{font-family:sans-serif;margin:2em;max-width:72em}\
         table{border-collapse:collapse;margin:.5em 0 1em}\
         th,td{border:1px solid #ccc;padding:.2em .6em;text-align:right}\
         th:first-child,td:first-child{text-align:left}\
         tr.kept td{background:#fff3cd}\
         pre{background:#f6f6f6;padding:.5em;white-space:pre-wrap}\
         .note{color:#555}</style></head><body>\n",
    );
    let _ = writeln!(o, "<h1>dbmeter compare-queries</h1>");
    o.push_str("<ul>");
    for s in &c.sides {
        let _ = write!(
            o,
            "<li><b>{}</b>: {} <code>{}</code><br><span class=\"note\">{}</span></li>",
            esc(&s.label),
            esc(&s.version),
            esc(&s.target),
            esc(&s.cold_note)
        );
    }
    o.push_str("</ul>\n");
    let _ = writeln!(
        o,
        "<p>{} queries; {} warm runs of each on each side (median).</p>",
        c.queries.len(),
        c.runs
    );
    if let Some(f) = &c.filter {
        let _ = writeln!(o, "<p>Filter: <code>{}</code></p>", esc(f));
    }
    for n in &c.notes {
        let _ = writeln!(o, "<p class=\"note\">{}</p>", esc(n));
    }
    o.push_str("<h2>Summary</h2>\n");
    let rows = summary_rows(c);
    let marked: Vec<bool> = c
        .queries
        .iter()
        .flat_map(|q| q.temperatures.iter().map(|t| t.kept))
        .collect();
    o.push_str(&html_table(SUMMARY_HEAD, &rows, &marked));
    let _ = writeln!(o, "<p>{}</p>", esc(&counts(c)));
    for q in kept_queries(c) {
        let _ = writeln!(
            o,
            "<h2 id=\"{0}\">{0}</h2><pre>{1}</pre><p class=\"note\">{2} (query ID {3})</p>",
            esc(&q.id),
            esc(&q.sql),
            esc(&q.origin),
            esc(&q.query_id)
        );
        for t in q.temperatures.iter().filter(|t| t.kept) {
            let _ = writeln!(o, "<h3>{}</h3>{}", esc(&t.temperature), time_bars(t));
            o.push_str(&html_table(
                ["measure", "A", "B", "B - A", "ratio"],
                &detail_rows(t),
                &[],
            ));
            let notes: Vec<String> = side_notes("A", &t.a)
                .into_iter()
                .chain(side_notes("B", &t.b))
                .collect();
            if !notes.is_empty() {
                o.push_str("<ul>");
                for n in notes {
                    let _ = write!(o, "<li>{}</li>", esc(&n));
                }
                o.push_str("</ul>\n");
            }
        }
    }
    o.push_str("</body></html>\n");
    o
}

/// The JSON document (pretty).
pub fn json(c: &Comparison) -> Result<String, String> {
    serde_json::to_string_pretty(c)
        .map(|s| s + "\n")
        .map_err(|e| format!("cannot write JSON: {e}"))
}

/// A saved result, read back; its filter marks are dropped.
pub fn read_saved(text: &str, name: &str) -> Result<Comparison, String> {
    let mut c: Comparison = serde_json::from_str(text).map_err(|e| {
        format!("{name} is not a compare-queries result (written by --save or --format=json): {e}")
    })?;
    if c.schema != crate::model::SCHEMA {
        return Err(format!(
            "{name} has schema '{}', not {}",
            c.schema,
            crate::model::SCHEMA
        ));
    }
    if c.sides.len() != 2 {
        return Err(format!("{name} does not hold two sides"));
    }
    c.filter = None;
    for q in &mut c.queries {
        q.kept = false;
        for t in &mut q.temperatures {
            t.kept = false;
        }
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times() {
        assert_eq!(fmt_time(1.5), "1.500 s");
        assert_eq!(fmt_time(0.0123), "12.300 ms");
        assert_eq!(fmt_time(0.0000123), "12.3 us");
    }

    #[test]
    fn escapes() {
        assert_eq!(
            esc("<a href='x'>&</a>"),
            "&lt;a href=&#39;x&#39;&gt;&amp;&lt;/a&gt;"
        );
    }
}
