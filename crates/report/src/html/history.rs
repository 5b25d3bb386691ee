//! The history of one configuration in HTML: a line chart of the runs'
//! values in time order with the segment means and a marker at each change
//! point, and the table of runs. [`page`] stands alone (`dbmeter results
//! history --html`); [`section`] goes into `dbmeter report`.

use super::charts::{self, LineChart, Scale, Series};
use super::{STYLE, escape};
use crate::history::{
    change_text, configuration_words, direction, mark, method_words, value_text, verdict,
};
use crate::stored::short_time;
use dbmeter_store::history::History;
use std::fmt::Write as _;

/// The chart: x is the run's place in time order (1 = the oldest).
pub fn chart(h: &History) -> LineChart {
    let points: Vec<(f64, f64)> = h
        .runs
        .iter()
        .enumerate()
        .map(|(i, r)| ((i + 1) as f64, r.value))
        .collect();
    // The segment means as steps, changing half-way between two runs.
    let mut steps: Vec<(f64, f64)> = Vec::new();
    let mut start = 0usize;
    for s in &h.segments {
        let end = start + s.runs;
        let from = if start == 0 { 1.0 } else { start as f64 + 0.5 };
        let to = if end == h.runs.len() {
            end as f64
        } else {
            end as f64 + 0.5
        };
        steps.push((from, s.mean));
        steps.push((to, s.mean));
        start = end;
    }
    let markers = h
        .change_points
        .iter()
        .map(|c| {
            (
                c.index as f64 + 0.5,
                format!("#{} {}", c.run, change_text(c)),
            )
        })
        .collect();
    LineChart {
        title: format!("{} of {}", h.metric, h.configuration.workload),
        x_label: "run, oldest first (ids in the table)".into(),
        y_label: match h.unit.as_str() {
            "/s" => h.metric_words.clone(),
            "" => h.metric.clone(),
            u => format!("{} ({u})", h.metric),
        },
        x_scale: Scale::Linear,
        y_scale: Scale::Linear,
        series: vec![
            Series {
                name: h.metric.clone(),
                points,
            },
            Series {
                name: "segment mean".into(),
                points: steps,
            },
        ],
        markers,
    }
}

/// The chart, the verdict, the method and the table of runs.
pub fn section(h: &History) -> Result<String, String> {
    let svg = charts::render(&chart(h))?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<p>{} ({}) of {} run(s) of {}.</p>\n<p><b>{}</b></p>\n<div class=\"chart\" id=\"history-{}\">{svg}</div>",
        escape(&h.metric),
        escape(&h.metric_words),
        h.runs.len(),
        escape(&configuration_words(h)),
        escape(&verdict(h)),
        h.metric
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect::<String>(),
    );
    let _ = writeln!(
        out,
        "<p class=\"muted\">Change points: {}. Selection: {}.</p>",
        escape(&method_words(h)),
        escape(&h.selection)
    );
    let _ = writeln!(
        out,
        "<table><tr><th>run</th><th>started</th><th>{}</th><th>change point</th><th>server</th></tr>",
        escape(&h.metric)
    );
    for r in &h.runs {
        let (class, note) = match &r.change_point {
            Some(c) => (
                if direction(h, c) == Some("slower") {
                    " class=\"bad\""
                } else {
                    ""
                },
                mark(h, c),
            ),
            None => ("", String::new()),
        };
        let _ = writeln!(
            out,
            "<tr{class}><td>#{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            r.id,
            escape(&short_time(&r.time)),
            value_text(h, r.value),
            escape(&note),
            escape(r.server_version.as_deref().unwrap_or("–")),
        );
    }
    out.push_str("</table>\n");
    if !h.left_out.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"muted\">Left out: {}.</p>",
            escape(
                &h.left_out
                    .iter()
                    .map(|(id, why)| format!("#{id} {why}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        );
    }
    Ok(out)
}

/// A page of its own.
pub fn page(h: &History, title: &str) -> Result<String, String> {
    Ok(format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"generator\" content=\"dbmeter\"><title>{t}</title><style>{STYLE}</style></head><body>\n\
         <h1>{t}</h1>\n{}</body></html>\n",
        section(h)?,
        t = escape(title),
    ))
}
