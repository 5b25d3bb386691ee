//! Line charts as SVG text, drawn with `plotters`: scaling curves (log-log),
//! time series and latency distributions. The SVG stands alone (no fonts or
//! scripts to fetch), so it can be embedded in the HTML report or saved as a
//! file.

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;

/// One named line.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub name: String,
    /// (x, y) points, in x order.
    pub points: Vec<(f64, f64)>,
}

/// How an axis maps values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    Linear,
    Log,
    /// A logarithmic axis of 1/(1-q) for quantiles q, labelled as
    /// percentiles ("90", "99", "99.9"): the usual latency-spectrum axis.
    Nines,
}

/// A chart to draw.
#[derive(Clone, Debug)]
pub struct LineChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x_scale: Scale,
    pub y_scale: Scale,
    pub series: Vec<Series>,
    /// Vertical lines at these x values, each with its label (the
    /// boundaries of a load profile's stages on a time axis).
    pub markers: Vec<(f64, String)>,
}

pub const WIDTH: u32 = 760;
pub const HEIGHT: u32 = 400;

/// The chart as an SVG document. Points that a log axis cannot show
/// (zero or negative) are left out; a chart with nothing to show says so.
pub fn render(chart: &LineChart) -> Result<String, String> {
    let series: Vec<Series> = chart
        .series
        .iter()
        .map(|s| Series {
            name: s.name.clone(),
            points: s
                .points
                .iter()
                .copied()
                .filter(|&(x, y)| {
                    x.is_finite()
                        && y.is_finite()
                        && (chart.x_scale == Scale::Linear || x > 0.0)
                        && (chart.y_scale == Scale::Linear || y > 0.0)
                })
                .collect(),
        })
        .collect();
    let (xs, ys): (Vec<f64>, Vec<f64>) =
        series.iter().flat_map(|s| s.points.iter()).copied().unzip();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        if xs.is_empty() {
            root.draw(&Text::new(
                format!("{}: no data", chart.title),
                (20, (HEIGHT / 2) as i32),
                ("sans-serif", 16),
            ))
            .map_err(err)?;
        } else {
            let x = span(&xs, chart.x_scale);
            let y = span(&ys, chart.y_scale);
            let chart = &LineChart {
                markers: chart
                    .markers
                    .iter()
                    .filter(|(m, _)| *m > x.0 && *m < x.1)
                    .cloned()
                    .collect(),
                series: Vec::new(),
                ..chart.clone()
            };
            let y_span = y;
            match (chart.x_scale, chart.y_scale) {
                (Scale::Linear, Scale::Linear) => {
                    draw(&root, chart, &series, x.0..x.1, y.0..y.1, y_span)
                }
                (Scale::Linear, _) => draw(
                    &root,
                    chart,
                    &series,
                    x.0..x.1,
                    (y.0..y.1).log_scale(),
                    y_span,
                ),
                (_, Scale::Linear) => draw(
                    &root,
                    chart,
                    &series,
                    (x.0..x.1).log_scale(),
                    y.0..y.1,
                    y_span,
                ),
                (_, _) => draw(
                    &root,
                    chart,
                    &series,
                    (x.0..x.1).log_scale(),
                    (y.0..y.1).log_scale(),
                    y_span,
                ),
            }?;
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

fn err<E: std::fmt::Display>(e: E) -> String {
    format!("cannot draw the chart: {e}")
}

/// The axis range for these values, with some room around them.
fn span(values: &[f64], scale: Scale) -> (f64, f64) {
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    match scale {
        Scale::Linear => {
            let lo = lo.min(0.0);
            let hi = if hi <= lo { lo + 1.0 } else { hi * 1.08 };
            (lo, hi)
        }
        Scale::Log | Scale::Nines => {
            let (lo, hi) = if hi <= lo {
                (lo / 2.0, hi * 2.0)
            } else {
                (lo / 1.25, hi * 1.25)
            };
            // A log axis is labelled at powers of ten: take in the nearest
            // one so the axis always carries a label where the data is.
            let below = 10f64.powf(lo.log10().floor());
            let above = 10f64.powf(hi.log10().ceil());
            if below * 10.0 > hi && scale == Scale::Log {
                if lo / below <= above / hi {
                    (below, hi)
                } else {
                    (lo, above)
                }
            } else {
                (lo, hi)
            }
        }
    }
}

/// A number as an axis label: short, no needless decimals.
pub fn tick(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 1e6 {
        trim(format!("{:.2}", v / 1e6)) + "M"
    } else if a >= 1e4 {
        trim(format!("{:.1}", v / 1e3)) + "k"
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        trim(format!("{v:.2}"))
    } else {
        trim(format!("{v:.4}"))
    }
}

fn trim(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// The percentile that a Nines-axis value stands for.
pub fn nines_label(v: f64) -> String {
    let p = 100.0 * (1.0 - 1.0 / v);
    trim(format!("{p:.4}"))
}

fn draw<X, Y>(
    root: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    chart: &LineChart,
    series: &[Series],
    x: X,
    y: Y,
    (y_low, y_high): (f64, f64),
) -> Result<(), String>
where
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let mut ctx = ChartBuilder::on(root)
        .caption(&chart.title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(42)
        .y_label_area_size(64)
        .build_cartesian_2d(x, y)
        .map_err(err)?;
    let nines_x = chart.x_scale == Scale::Nines;
    let x_fmt = move |v: &f64| if nines_x { nines_label(*v) } else { tick(*v) };
    let y_fmt = |v: &f64| tick(*v);
    ctx.configure_mesh()
        .x_desc(&chart.x_label)
        .y_desc(&chart.y_label)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .x_labels(12)
        .y_labels(10)
        .light_line_style(TRANSPARENT)
        .bold_line_style(RGBColor(225, 225, 225))
        .draw()
        .map_err(err)?;
    let marker = ShapeStyle::from(RGBColor(150, 150, 150)).stroke_width(1);
    for (at, label) in &chart.markers {
        ctx.draw_series(std::iter::once(PathElement::new(
            vec![(*at, y_low), (*at, y_high)],
            marker,
        )))
        .map_err(err)?;
        ctx.draw_series(std::iter::once(Text::new(
            label.clone(),
            (*at, y_high),
            ("sans-serif", 11)
                .into_font()
                .color(&RGBColor(110, 110, 110)),
        )))
        .map_err(err)?;
    }
    for (i, s) in series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let style = ShapeStyle::from(color).stroke_width(2);
        ctx.draw_series(LineSeries::new(s.points.iter().copied(), style))
            .map_err(err)?
            .label(&s.name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], style));
        if s.points.len() <= 40 {
            ctx.draw_series(
                s.points
                    .iter()
                    .map(|&p| Circle::new(p, 3, ShapeStyle::from(color).filled())),
            )
            .map_err(err)?;
        }
    }
    if series.len() > 1 || series.iter().any(|s| !s.name.is_empty()) {
        ctx.configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(200, 200, 200))
            .position(SeriesLabelPosition::UpperLeft)
            .draw()
            .map_err(err)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(x: Scale, y: Scale) -> LineChart {
        LineChart {
            title: "tps vs clients".into(),
            x_label: "clients".into(),
            y_label: "transactions/s".into(),
            x_scale: x,
            y_scale: y,
            series: vec![
                Series {
                    name: "A".into(),
                    points: vec![(1.0, 100.0), (4.0, 380.0), (16.0, 900.0)],
                },
                Series {
                    name: "B".into(),
                    points: vec![(1.0, 120.0), (4.0, 0.0), (16.0, 1000.0)],
                },
            ],
            markers: vec![(8.0, "stage 2".into())],
        }
    }

    #[test]
    fn every_scale_gives_an_svg_with_lines_and_legend() {
        for (x, y) in [
            (Scale::Linear, Scale::Linear),
            (Scale::Log, Scale::Log),
            (Scale::Nines, Scale::Linear),
            (Scale::Linear, Scale::Log),
        ] {
            let svg = render(&chart(x, y)).unwrap();
            assert!(svg.starts_with("<svg"), "{svg}");
            assert!(svg.contains("<polyline"), "{x:?} {y:?}");
            assert!(svg.contains("stage 2"), "the marker's label: {x:?} {y:?}");
            assert!(
                svg.contains("\nA\n</text>") && svg.contains("\nB\n</text>"),
                "legend: {svg}"
            );
            assert!(svg.contains("tps vs clients"));
        }
    }

    #[test]
    fn a_narrow_log_axis_still_has_labels() {
        let mut c = chart(Scale::Log, Scale::Log);
        c.series = vec![Series {
            name: "A".into(),
            points: vec![(1.0, 32.0), (2.0, 41.0), (4.0, 48.0)],
        }];
        let (lo, hi) = span(&[32.0, 41.0, 48.0], Scale::Log);
        assert!(lo <= 10.0 || hi >= 100.0, "{lo}..{hi}");
        let svg = render(&c).unwrap();
        let has = |label: &str| svg.contains(&format!("\n{label}\n</text>"));
        assert!(has("10") || has("100"), "no y label: {svg}");
    }

    #[test]
    fn an_empty_chart_says_so() {
        let mut c = chart(Scale::Log, Scale::Log);
        c.series.iter_mut().for_each(|s| s.points.clear());
        let svg = render(&c).unwrap();
        assert!(svg.contains("no data"));
    }

    #[test]
    fn labels() {
        assert_eq!(tick(12_345.0), "12.3k");
        assert_eq!(tick(2_500_000.0), "2.5M");
        assert_eq!(tick(0.25), "0.25");
        assert_eq!(tick(150.0), "150");
        assert_eq!(nines_label(10.0), "90");
        assert_eq!(nines_label(1000.0), "99.9");
    }
}
