//! `dbmeter digest --format=html`: one self-contained page (inline CSS,
//! SVG charts, nothing fetched) of a query-log digest: statements and query
//! time over time (overall and the top classes), the top classes by total
//! time, each class's share of the time, then the profile and every shown
//! class as the text report has them.

use super::charts::{self, LineChart, Scale, Series};
use super::{STYLE, escape};
use dbmeter_digest::Digest;
use dbmeter_digest::aggregate::{ClassStats, QUERY_TIME};
use dbmeter_digest::event::format_ts;
use dbmeter_digest::report::{Ranked, ReportOptions, class_block, item, ranked, total_time, vm};
use std::fmt::Write as _;
use std::io::Write;

/// Classes drawn on their own in the charts (the rest is the overall line).
pub const TOP_CHARTED: usize = 5;

const COLORS: [&str; 8] = [
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f",
];

/// A class's name in the charts: its rank and item.
fn label(r: &Ranked<'_>) -> String {
    let sample = r
        .stats
        .sample
        .as_ref()
        .map(|s| String::from_utf8_lossy(&s.query).into_owned());
    let what = if r.fingerprint {
        item(&r.key(), sample.as_deref())
    } else {
        r.key()
    };
    let what: String = what.chars().take(48).collect();
    format!("#{} {what}", r.rank)
}

/// (start of the bucket in seconds since `origin`, events/s, query time/s)
/// for every bucket from `origin` to `end` at the overall width: empty
/// buckets are zeros, so that the lines drop to zero where nothing ran.
fn points(c: &ClassStats, shift: u8, origin: i64, end: i64) -> Vec<(f64, f64, f64)> {
    let mut s = c.series.clone();
    s.coarsen_to(shift);
    let w = 1i64 << shift;
    let mut out = Vec::new();
    let mut it = s.buckets.iter().peekable();
    let mut b = origin;
    while b <= end {
        let (n, t) = match it.peek() {
            Some(&&(i, n, t)) if i == b => {
                it.next();
                (n, t)
            }
            _ => (0, 0.0),
        };
        out.push((
            ((b - origin) * w) as f64 / 60.0,
            n as f64 / w as f64,
            t / w as f64,
        ));
        b += 1;
    }
    out
}

/// Horizontal bars with their labels and values, drawn by hand.
fn hbars(title: &str, rows: &[(String, f64, String)]) -> String {
    let (left, right, top, row_h) = (330.0, 110.0, 40.0, 26.0);
    let width = 900.0;
    let height = top + row_h * rows.len().max(1) as f64 + 16.0;
    let plot_w = width - left - right;
    let most = rows.iter().map(|r| r.1).fold(0.0_f64, f64::max);
    let mut svg = String::new();
    let _ = write!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" \
         viewBox=\"0 0 {width:.0} {height:.0}\" font-family=\"sans-serif\">\
         <rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\
         <text x=\"{:.0}\" y=\"22\" font-size=\"17\" text-anchor=\"middle\">{}</text>",
        width / 2.0,
        escape(title)
    );
    for (i, (name, v, text)) in rows.iter().enumerate() {
        let y = top + i as f64 * row_h;
        let w = if most > 0.0 { v / most * plot_w } else { 0.0 };
        let _ = write!(
            svg,
            "<text x=\"{:.0}\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"end\">{}</text>\
             <rect class=\"bar\" x=\"{left:.0}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{}\">\
             <title>{}: {}</title></rect>\
             <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"12\">{}</text>",
            left - 8.0,
            y + row_h / 2.0 + 4.0,
            escape(name),
            y + 3.0,
            w.max(1.0),
            row_h - 6.0,
            COLORS[i % COLORS.len()],
            escape(name),
            escape(text),
            left + w + 6.0,
            y + row_h / 2.0 + 4.0,
            escape(text)
        );
    }
    svg.push_str("</svg>");
    svg
}

fn chart_div(out: &mut String, id: &str, svg: &str) {
    let _ = writeln!(out, "<div class=\"chart\" id=\"{id}\">{svg}</div>");
}

/// Writes the page to `w`, a class at a time.
pub fn write_page(d: &Digest, o: &ReportOptions, w: &mut dyn Write) -> std::io::Result<()> {
    let agg = &d.aggregate;
    let g = &agg.global;
    let shown = ranked(d, o);
    let total = total_time(d);
    let mut h = String::new();
    let names: Vec<String> = d
        .files
        .iter()
        .map(|f| format!("{} ({})", f.name, f.format.name()))
        .collect();
    let title = format!("Query digest: {}", names.join(", "));
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"generator\" content=\"dbmeter {}\"><title>{}</title><style>{STYLE}\
         pre.class{{white-space:pre-wrap}}</style></head><body>\n<h1>{}</h1>\n",
        escape(&o.version),
        escape(&title),
        escape(&title)
    );
    let range = match (g.ts_min, g.ts_max) {
        (Some(a), Some(b)) => format!("{} to {} (UTC)", format_ts(a), format_ts(b)),
        _ => "no times in the log".into(),
    };
    let _ = writeln!(
        h,
        "<p class=\"sub\">{} statements in {} classes, {} of query time; {}. Grouped by {}, \
         ranked by {}; {} malformed line(s).</p>",
        g.count,
        agg.classes.len(),
        escape(&format!("{total:.3} s")),
        escape(&range),
        agg.group_by.name(),
        escape(&o.order_by.text()),
        d.malformed.count
    );
    h.push_str(
        "<nav><a href=\"#over-time\">Over time</a> · <a href=\"#top\">Top classes</a> · \
         <a href=\"#profile\">Profile</a> · <a href=\"#classes\">Classes</a></nav>\n",
    );

    // Over time: the overall line and the top classes', at the overall width.
    let top: Vec<&Ranked<'_>> = shown.iter().take(TOP_CHARTED).collect();
    h.push_str("<h2 id=\"over-time\">Over time</h2>\n");
    match (g.series.buckets.first(), g.series.buckets.last()) {
        (Some(first), Some(last)) => {
            let shift = g.series.shift;
            let (origin, end) = (first.0, last.0);
            let mut count_lines = Vec::new();
            let mut time_lines = Vec::new();
            let mut add = |name: String, c: &ClassStats| {
                let p = points(c, shift, origin, end);
                count_lines.push(Series {
                    name: name.clone(),
                    points: p.iter().map(|x| (x.0, x.1)).collect(),
                });
                time_lines.push(Series {
                    name,
                    points: p.iter().map(|x| (x.0, x.2)).collect(),
                });
            };
            add("all statements".into(), g);
            for r in &top {
                add(label(r), r.stats);
            }
            let start = format_ts(origin * (1i64 << shift) * 1_000_000);
            let width = g.series.width_s();
            let x_label = format!("minutes from {start} UTC ({width} s buckets)");
            for (id, what, y, lines) in [
                (
                    "statements-per-second",
                    "statements per second",
                    "statements/s",
                    count_lines,
                ),
                (
                    "query-time-per-second",
                    "query time per second (busy sessions)",
                    "query time s/s",
                    time_lines,
                ),
            ] {
                let svg = charts::render(&LineChart {
                    title: what.into(),
                    x_label: x_label.clone(),
                    y_label: y.into(),
                    x_scale: Scale::Linear,
                    y_scale: Scale::Linear,
                    series: lines,
                    markers: Vec::new(),
                })
                .map_err(std::io::Error::other)?;
                chart_div(&mut h, id, &svg);
            }
        }
        _ => {
            h.push_str("<p class=\"muted\">The log has no times: nothing to draw over time.</p>\n")
        }
    }

    // The top classes by total time, and their shares of it.
    h.push_str("<h2 id=\"top\">Top classes</h2>\n<div class=\"charts\">\n");
    let bars: Vec<(String, f64, String)> = shown
        .iter()
        .take(10)
        .map(|r| {
            let t = r.stats.num_summary(QUERY_TIME).map_or(0.0, |n| n.1);
            (label(r), t, format!("{t:.3} s"))
        })
        .collect();
    chart_div(
        &mut h,
        "top-classes",
        &hbars("total query time of the top classes", &bars),
    );
    let mut shares: Vec<(String, f64, String)> = bars
        .iter()
        .map(|(name, t, _)| {
            let p = if total > 0.0 { t / total * 100.0 } else { 0.0 };
            (name.clone(), p, format!("{p:.1}%"))
        })
        .collect();
    let rest = total - bars.iter().map(|b| b.1).sum::<f64>();
    if total > 0.0 && rest > total * 1e-9 {
        let p = rest / total * 100.0;
        shares.push(("all other classes".into(), p, format!("{p:.1}%")));
    }
    chart_div(
        &mut h,
        "time-share",
        &hbars("share of the total query time", &shares),
    );
    h.push_str("</div>\n");

    // The profile.
    let id_head = if agg.group_by == dbmeter_digest::GroupBy::Fingerprint {
        "Query ID"
    } else {
        agg.group_by.name()
    };
    let _ = writeln!(
        h,
        "<h2 id=\"profile\">Profile</h2>\n<table class=\"profile\"><tr><th>Rank</th><th>{id_head}</th>\
         <th>Response time (s)</th><th>%</th><th>Calls</th><th>R/Call (s)</th><th>V/M</th><th>Item</th></tr>"
    );
    for r in &shown {
        let n = r.stats.num_stats(QUERY_TIME);
        let n = n.as_deref();
        let sum = n.map_or(0.0, |n| n.sum);
        let key = r.key();
        let idcol = r.id().map_or_else(|| key.clone(), |id| format!("0x{id}"));
        let sample = r
            .stats
            .sample
            .as_ref()
            .map(|s| String::from_utf8_lossy(&s.query).into_owned());
        let _ = writeln!(
            h,
            "<tr class=\"class-row\"><td>{}</td><td><a href=\"#class-{}\">{}</a></td><td>{sum:.4}</td>\
             <td>{:.1}</td><td>{}</td><td>{:.4}</td><td>{:.2}</td><td>{}</td></tr>",
            r.rank,
            r.rank,
            escape(&idcol),
            if total > 0.0 {
                sum / total * 100.0
            } else {
                0.0
            },
            r.stats.count,
            n.map_or(0.0, |n| n.avg()),
            n.map_or(0.0, vm),
            escape(&if r.fingerprint {
                item(&key, sample.as_deref())
            } else {
                String::new()
            })
        );
    }
    let _ = writeln!(h, "</table>");
    if o.ids.is_empty() && shown.len() < agg.classes.len() {
        let _ = writeln!(
            h,
            "<p class=\"muted\">{} more classes (--limit=0 shows them all).</p>",
            agg.classes.len() - shown.len()
        );
    }
    h.push_str("<h2 id=\"classes\">Classes</h2>\n");
    w.write_all(h.as_bytes())?;
    for r in &shown {
        h.clear();
        let _ = writeln!(
            h,
            "<details id=\"class-{}\" class=\"class\"{}><summary>{}</summary><pre class=\"class\">{}</pre></details>",
            r.rank,
            if r.rank <= TOP_CHARTED { " open" } else { "" },
            escape(&label(r)),
            escape(class_block(d, r).trim_start())
        );
        w.write_all(h.as_bytes())?;
    }
    w.write_all(b"</body></html>\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use dbmeter_digest::{GroupBy, Options, TimeFilter};

    #[test]
    fn a_page_with_charts_profile_and_classes() {
        // A slow log of three classes, an event every 10 s.
        let mut log = String::new();
        for i in 0..600i64 {
            let q = match i % 3 {
                0 => format!("SELECT c FROM sbtest1 WHERE id = {i}"),
                1 => format!("UPDATE t SET a = {i} WHERE id < 3"),
                _ => "SELECT 'x' < \"y\"".to_string(),
            };
            log.push_str(&format!(
                "# User@Host: app[app] @ localhost []\n# Query_time: 0.00{}  Lock_time: 0.000001  \
                 Rows_sent: 1  Rows_examined: 1\nSET timestamp={};\n{q};\n",
                1 + i % 3,
                1_795_775_498 + i * 10
            ));
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("slow.log");
        std::fs::write(&path, log).unwrap();
        let d = dbmeter_digest::digest(
            &[path.to_str().unwrap().to_string()],
            &Options {
                group_by: GroupBy::Fingerprint,
                filter: TimeFilter::default(),
                threads: 2,
                format: None,
                log_line_prefix: None,
            },
            &|_| {},
        )
        .unwrap();
        let mut out = Vec::new();
        write_page(&d, &ReportOptions::default(), &mut out).unwrap();
        let html = String::from_utf8(out).unwrap();
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert_eq!(
            html.matches("<svg").count(),
            4,
            "two lines charts, two bar charts"
        );
        assert_eq!(html.matches("<tr class=\"class-row\">").count(), 3);
        assert_eq!(html.matches("<details id=\"class-").count(), 3);
        // 600 events 10 s apart: 6,000 s in buckets of 32 s (at most 240).
        assert_eq!(d.aggregate.global.series.width_s(), 32);
        assert!(html.contains("0x"), "query IDs");
        assert!(html.contains("&lt; &quot;y&quot;"), "text is escaped");
        assert!(!html.contains("src=\"http") && !html.contains("href=\"http"));
        assert!(html.contains("share of the total query time"));
        // The UPDATE took half of the time: the longest bar, 50%.
        assert!(html.contains(">50.0%</text>"), "{html}");
    }
}
