//! Grouped bar charts as SVG text, drawn by hand: DBT3's chart of one bar
//! per query (group) and configuration (series), normalised to the first
//! configuration = 100%, with min/max whiskers, timeouts as cut-off
//! hatched bars, and bars beyond the axis cut off with their value written.

use super::escape;
use std::fmt::Write as _;

/// One bar: its height (None: no value), whiskers, and whether it stands
/// for a timeout.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Bar {
    pub value: Option<f64>,
    pub low: Option<f64>,
    pub high: Option<f64>,
    pub timeout: bool,
}

/// The bars of one group (one query), a bar per series.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    pub label: String,
    pub bars: Vec<Bar>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct BarChart {
    pub title: String,
    pub y_label: String,
    pub series: Vec<String>,
    pub groups: Vec<Group>,
    /// The axis never goes above this; taller bars are cut off.
    pub cap: f64,
}

const COLORS: [&str; 8] = [
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f",
];

/// A step for about `n` ticks up to `top`: 1, 2 or 5 times a power of ten.
fn step(top: f64, n: f64) -> f64 {
    let raw = (top / n).max(1e-9);
    let p = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * p)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * p)
}

/// The chart as an SVG document.
pub fn render(c: &BarChart) -> String {
    let n_groups = c.groups.len().max(1) as f64;
    let n_series = c.series.len().max(1) as f64;
    let (left, right, top_m, bottom) = (64.0, 16.0, 56.0, 48.0);
    let width = (left + right + n_groups * (n_series * 12.0 + 14.0)).max(760.0);
    let height = 400.0;
    let plot_w = width - left - right;
    let plot_h = height - top_m - bottom;
    let highest = c
        .groups
        .iter()
        .flat_map(|g| g.bars.iter())
        .flat_map(|b| [b.value, b.high])
        .flatten()
        .fold(100.0_f64, f64::max);
    let axis_top = {
        let want = (highest * 1.1).min(c.cap);
        let s = step(want, 6.0);
        (want / s).ceil() * s
    };
    let tick = step(axis_top, 6.0);
    let y = |v: f64| top_m + plot_h * (1.0 - (v / axis_top).clamp(0.0, 1.0));
    let mut svg = String::new();
    let _ = write!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\" font-family=\"sans-serif\">\
         <defs><pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">\
         <rect width=\"6\" height=\"6\" fill=\"#fff\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#b00\" stroke-width=\"3\"/></pattern></defs>\
         <rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\
         <text x=\"{:.0}\" y=\"22\" font-size=\"17\" text-anchor=\"middle\">{}</text>",
        width / 2.0,
        escape(&c.title)
    );
    // Y axis: grid lines and labels at every tick, 100% drawn darker.
    let mut v = 0.0;
    while v <= axis_top + 1e-9 {
        let yy = y(v);
        let color = if (v - 100.0).abs() < 1e-9 {
            "#888"
        } else {
            "#e4e4e4"
        };
        let _ = write!(
            svg,
            "<line x1=\"{left}\" y1=\"{yy:.1}\" x2=\"{:.1}\" y2=\"{yy:.1}\" stroke=\"{color}\"/>\
             <text x=\"{:.0}\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"end\">{}</text>",
            left + plot_w,
            left - 6.0,
            yy + 4.0,
            super::charts::tick(v)
        );
        v += tick;
    }
    let _ = write!(
        svg,
        "<text x=\"16\" y=\"{:.0}\" font-size=\"13\" text-anchor=\"middle\" transform=\"rotate(-90 16 {:.0})\">{}</text>",
        top_m + plot_h / 2.0,
        top_m + plot_h / 2.0,
        escape(&c.y_label)
    );
    let group_w = plot_w / n_groups;
    let bar_w = ((group_w - 10.0) / n_series).max(2.0);
    for (gi, g) in c.groups.iter().enumerate() {
        let gx = left + gi as f64 * group_w + 5.0;
        for (si, b) in g.bars.iter().enumerate() {
            let x = gx + si as f64 * bar_w;
            let color = COLORS[si % COLORS.len()];
            if b.timeout {
                let _ = write!(
                    svg,
                    "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"url(#hatch)\" stroke=\"{color}\"><title>{}: {}: timeout</title></rect>\
                     <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" fill=\"#b00\" text-anchor=\"middle\">T/O</text>",
                    y(axis_top),
                    bar_w - 1.0,
                    plot_h,
                    escape(&g.label),
                    escape(&c.series[si.min(c.series.len().saturating_sub(1))]),
                    x + bar_w / 2.0,
                    top_m - 4.0
                );
                continue;
            }
            let Some(value) = b.value else { continue };
            let cut = value > axis_top;
            let _ = write!(
                svg,
                "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{color}\"><title>{}: {}: {:.1}%</title></rect>",
                y(value),
                bar_w - 1.0,
                y(0.0) - y(value),
                escape(&g.label),
                escape(c.series.get(si).map_or("", String::as_str)),
                value
            );
            if cut {
                // The bar runs off the axis: a break and its value.
                let _ = write!(
                    svg,
                    "<line x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#fff\" stroke-width=\"3\"/>\
                     <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"middle\">{:.0}%</text>",
                    y(axis_top) + 10.0,
                    x + bar_w - 1.0,
                    y(axis_top) + 6.0,
                    x + bar_w / 2.0,
                    top_m - 4.0,
                    value
                );
            }
            if let (Some(lo), Some(hi)) = (b.low, b.high) {
                let cx = x + bar_w / 2.0 - 0.5;
                let _ = write!(
                    svg,
                    "<line x1=\"{cx:.1}\" y1=\"{:.1}\" x2=\"{cx:.1}\" y2=\"{:.1}\" stroke=\"#333\"/>\
                     <line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#333\"/>\
                     <line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#333\"/>",
                    y(lo),
                    y(hi),
                    cx - 2.0,
                    y(lo),
                    cx + 2.0,
                    y(lo),
                    cx - 2.0,
                    y(hi),
                    cx + 2.0,
                    y(hi)
                );
            }
        }
        let _ = write!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"middle\">{}</text>",
            gx + (group_w - 10.0) / 2.0,
            top_m + plot_h + 16.0,
            escape(&g.label)
        );
    }
    let _ = write!(
        svg,
        "<line x1=\"{left}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#333\"/>",
        y(0.0),
        left + plot_w,
        y(0.0)
    );
    // Legend, under the axis.
    let mut lx = left;
    for (i, s) in c.series.iter().enumerate() {
        let _ = write!(
            svg,
            "<rect x=\"{lx:.0}\" y=\"{:.0}\" width=\"12\" height=\"12\" fill=\"{}\"/>\
             <text x=\"{:.0}\" y=\"{:.0}\" font-size=\"12\">{}</text>",
            height - 18.0,
            COLORS[i % COLORS.len()],
            lx + 16.0,
            height - 8.0,
            escape(s)
        );
        lx += 28.0 + 7.0 * s.chars().count() as f64;
    }
    svg.push_str("</svg>");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_whiskers_timeouts_and_cut_offs() {
        let bar = |v: f64| Bar {
            value: Some(v),
            low: Some(v * 0.9),
            high: Some(v * 1.1),
            timeout: false,
        };
        let c = BarChart {
            title: "tpch: query time relative to A".into(),
            y_label: "% of A".into(),
            series: vec!["A".into(), "B".into()],
            groups: vec![
                Group {
                    label: "Q1".into(),
                    bars: vec![bar(100.0), bar(80.0)],
                },
                Group {
                    label: "Q2".into(),
                    bars: vec![
                        bar(100.0),
                        Bar {
                            timeout: true,
                            ..Bar::default()
                        },
                    ],
                },
                Group {
                    label: "Q3".into(),
                    bars: vec![bar(100.0), bar(900.0)],
                },
            ],
            cap: 300.0,
        };
        let svg = render(&c);
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert!(svg.contains(">T/O</text>"));
        assert!(
            svg.contains(">900%</text>"),
            "the cut-off bar says its value"
        );
        assert!(
            svg.contains(">100</text>") && svg.contains(">0</text>"),
            "y labels"
        );
        assert!(svg.contains(">Q3</text>") && svg.contains(">B</text>"));
        assert_eq!(step(300.0, 6.0), 50.0);
    }
}
