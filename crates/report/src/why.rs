//! `dbmeter compare --why` in text, Markdown and HTML: for each compared
//! cell, the server counters, OS figures and wait events of both sides,
//! ranked (the data is `dbmeter_store::why`'s).

use crate::html::escape;
use dbmeter_store::{WhyCell, WhyRow, WhyUnit};
use std::fmt::Write;

/// Rows shown per list; the rest moved less and are counted in one line.
pub const SHOWN: usize = 15;

/// A value in its unit, short.
pub fn value(unit: WhyUnit, v: Option<f64>) -> String {
    let Some(v) = v else { return "-".into() };
    match unit {
        WhyUnit::Bytes => {
            let a = v.abs();
            if a >= 1048576.0 {
                format!("{:.2} MiB", v / 1048576.0)
            } else if a >= 1024.0 {
                format!("{:.2} KiB", v / 1024.0)
            } else {
                format!("{v:.0} B")
            }
        }
        WhyUnit::Ms => format!("{} ms", number(v)),
        WhyUnit::Pct => format!("{v:.1}%"),
        WhyUnit::Count => number(v),
    }
}

/// A number with three significant digits or so.
fn number(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else if a >= 0.001 {
        format!("{v:.4}")
    } else {
        format!("{v:.2e}")
    }
}

/// The change in words: `+12.5%`, `x1000`, `new`, `gone`.
pub fn change(r: &WhyRow) -> String {
    match (r.baseline, r.candidate) {
        (Some(b), Some(c)) if b == 0.0 && c != 0.0 => "new".into(),
        (Some(b), Some(c)) if b != 0.0 && c == 0.0 => "gone".into(),
        (Some(b), Some(c)) if b > 0.0 && c > 0.0 && (c / b >= 10.0 || b / c >= 10.0) => {
            let x = c / b;
            if x >= 1.0 {
                format!("x{}", number(x))
            } else {
                format!("x1/{}", number(1.0 / x))
            }
        }
        _ => r.change_pct().map_or("-".into(), |p| format!("{p:+.1}%")),
    }
}

/// A cell's heading: workload (variant), threads, the runs of each side.
pub fn heading(c: &WhyCell) -> String {
    let ids = |v: &[i64]| {
        v.iter()
            .map(|i| format!("#{i}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "{}{}, {} threads (baseline runs {}; candidate runs {})",
        c.workload,
        c.variant
            .as_ref()
            .map_or(String::new(), |v| format!(" [{v}]")),
        c.threads,
        ids(&c.baseline_runs),
        ids(&c.candidate_runs)
    )
}

/// The lists of a cell, with their titles (the profile only when a side
/// was profiled).
fn lists(c: &WhyCell) -> Vec<(&'static str, &[WhyRow])> {
    let mut v: Vec<(&'static str, &[WhyRow])> = vec![
        ("Server counters per transaction", &c.counters),
        ("OS per transaction", &c.os),
        ("Wait events (sampled during the measured phase)", &c.waits),
    ];
    if !c.profile.is_empty() {
        v.push(("Server CPU by function (perf)", &c.profile));
    }
    v
}

const INTRO: &str = "Per transaction (event, warm-up included), the median over each side's \
     runs; each list ranked by relative change, the largest first.";

/// The text report.
pub fn text(cells: &[WhyCell]) -> String {
    let mut out = String::new();
    for c in cells {
        let _ = writeln!(out, "\nWhy it changed: {}", heading(c));
        let _ = writeln!(out, "{INTRO}");
        for (title, rows) in lists(c) {
            let _ = writeln!(out, "\n{title}:");
            if rows.is_empty() {
                let _ = writeln!(out, "    (none recorded)");
                continue;
            }
            let w = rows
                .iter()
                .take(SHOWN)
                .map(|r| r.name.len())
                .max()
                .unwrap_or(0)
                .max(4);
            let _ = writeln!(
                out,
                "    {:<w$}  {:>12}  {:>12}  {:>10}",
                "name", "baseline", "candidate", "change"
            );
            for r in rows.iter().take(SHOWN) {
                let _ = writeln!(
                    out,
                    "    {:<w$}  {:>12}  {:>12}  {:>10}  {}",
                    r.name,
                    value(r.unit, r.baseline),
                    value(r.unit, r.candidate),
                    change(r),
                    r.what
                );
            }
            if rows.len() > SHOWN {
                let _ = writeln!(out, "    ... {} more that moved less", rows.len() - SHOWN);
            }
        }
        for n in c.wait_notes.iter().chain(&c.notes) {
            let _ = writeln!(out, "note: {n}");
        }
    }
    out
}

/// The Markdown report.
pub fn markdown(cells: &[WhyCell]) -> String {
    let mut out = String::new();
    let md = |s: &str| s.replace('|', "\\|");
    for c in cells {
        let _ = writeln!(out, "\n## Why it changed: {}\n\n{INTRO}", md(&heading(c)));
        for (title, rows) in lists(c) {
            let _ = writeln!(out, "\n### {title}\n");
            if rows.is_empty() {
                let _ = writeln!(out, "(none recorded)");
                continue;
            }
            out.push_str(
                "| name | baseline | candidate | change | what |\n|---|---:|---:|---:|---|\n",
            );
            for r in rows.iter().take(SHOWN) {
                let _ = writeln!(
                    out,
                    "| `{}` | {} | {} | {} | {} |",
                    md(&r.name),
                    value(r.unit, r.baseline),
                    value(r.unit, r.candidate),
                    change(r),
                    md(&r.what)
                );
            }
            if rows.len() > SHOWN {
                let _ = writeln!(out, "\n{} more moved less.", rows.len() - SHOWN);
            }
        }
        if !c.wait_notes.is_empty() || !c.notes.is_empty() {
            out.push('\n');
        }
        for n in c.wait_notes.iter().chain(&c.notes) {
            let _ = writeln!(out, "- {}", md(n));
        }
    }
    out
}

/// The HTML section: a heading and a table per list, per cell.
pub fn html(cells: &[WhyCell]) -> String {
    let mut out = String::from("<section class=\"dbmeter-why\">\n");
    for c in cells {
        let _ = writeln!(
            out,
            "<h2>Why it changed: {}</h2>\n<p>{}</p>",
            escape(&heading(c)),
            escape(INTRO)
        );
        for (title, rows) in lists(c) {
            let _ = writeln!(out, "<h3>{}</h3>", escape(title));
            if rows.is_empty() {
                out.push_str("<p>(none recorded)</p>\n");
                continue;
            }
            out.push_str(
                "<table class=\"dbmeter-compare\">\n<thead><tr><th class=\"label\">name</th>\
                 <th class=\"num\">baseline</th><th class=\"num\">candidate</th>\
                 <th class=\"num\">change</th><th class=\"label\">what</th></tr></thead>\n<tbody>\n",
            );
            for r in rows.iter().take(SHOWN) {
                let _ = writeln!(
                    out,
                    "<tr><th class=\"label\">{}</th><td class=\"num\">{}</td><td class=\"num\">{}</td>\
                     <td class=\"num\">{}</td><td class=\"label\">{}</td></tr>",
                    escape(&r.name),
                    escape(&value(r.unit, r.baseline)),
                    escape(&value(r.unit, r.candidate)),
                    escape(&change(r)),
                    escape(&r.what)
                );
            }
            out.push_str("</tbody></table>\n");
            if rows.len() > SHOWN {
                let _ = writeln!(out, "<p>{} more moved less.</p>", rows.len() - SHOWN);
            }
        }
        for n in c.wait_notes.iter().chain(&c.notes) {
            let _ = writeln!(out, "<p class=\"muted\">{}</p>", escape(n));
        }
    }
    out.push_str("</section>\n");
    out
}

/// `page` (a whole HTML page) with the section before its end.
pub fn into_page(page: String, cells: &[WhyCell]) -> String {
    let section = html(cells);
    match page.rfind("</body>") {
        Some(at) => {
            let mut p = page;
            p.insert_str(at, &section);
            p
        }
        None => page + &section,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(b: f64, c: f64) -> WhyRow {
        WhyRow {
            name: "Innodb_rows_read".into(),
            what: "rows".into(),
            unit: WhyUnit::Count,
            baseline: Some(b),
            candidate: Some(c),
        }
    }

    #[test]
    fn changes_in_words() {
        assert_eq!(change(&row(10.0, 10000.0)), "x1000");
        assert_eq!(change(&row(10000.0, 10.0)), "x1/1000");
        assert_eq!(change(&row(0.0, 3.0)), "new");
        assert_eq!(change(&row(3.0, 0.0)), "gone");
        assert_eq!(change(&row(10.0, 12.5)), "+25.0%");
        assert_eq!(value(WhyUnit::Bytes, Some(2048.0)), "2.00 KiB");
        assert_eq!(value(WhyUnit::Pct, Some(12.34)), "12.3%");
        assert_eq!(value(WhyUnit::Ms, None), "-");
    }

    #[test]
    fn html_goes_before_the_end_of_the_page() {
        let page = into_page("<html><body><p>x</p></body></html>".into(), &[]);
        assert!(page.starts_with("<html><body><p>x</p><section"), "{page}");
        assert!(page.ends_with("</section>\n</body></html>"), "{page}");
    }
}
