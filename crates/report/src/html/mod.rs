//! The HTML report: one self-contained page (inline CSS, charts inline as
//! SVG, nothing fetched) with the environment of each variant, comparison
//! tables, throughput and p99 latency against clients on log-log axes, and
//! per cell (workload x clients) the runs' time series (throughput, p99,
//! CPU, I/O) and latency distributions. Every chart is also returned as an
//! SVG document of its own, for `--charts DIR`.

pub mod bars;
pub mod charts;
mod data;
pub mod digest;
pub mod history;

pub use data::{OsPoint, ReportRun, spectrum};
use dbmeter_stats::median;

use charts::{LineChart, Scale, Series};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// A ready-made HTML section (a comparison table, say) to include.
#[derive(Clone, Debug)]
pub struct Section {
    pub title: String,
    pub html: String,
}

/// What to put in the report.
#[derive(Clone, Debug, Default)]
pub struct ReportInput {
    pub title: String,
    /// One line under the title (where the runs come from, say).
    pub subtitle: String,
    pub runs: Vec<ReportRun>,
    pub sections: Vec<Section>,
}

/// The page, and each chart on its own as (file name, SVG).
#[derive(Clone, Debug)]
pub struct Report {
    pub html: String,
    pub charts: Vec<(String, String)>,
}

/// Escapes text for HTML element content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A name safe for a file and an HTML id.
fn slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

fn num(v: Option<f64>) -> String {
    match v {
        None => "–".into(),
        Some(v) if v.abs() >= 100.0 => format!("{v:.0}"),
        Some(v) if v.abs() >= 1.0 => format!("{v:.2}"),
        Some(v) => format!("{v:.3}"),
    }
}

pub(crate) const STYLE: &str = "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px auto;max-width:1120px;color:#222;padding:0 16px}\
h1{font-size:1.6em;margin-bottom:0}h2{margin-top:2em;border-bottom:1px solid #ddd;padding-bottom:4px}h3{margin-top:1.4em}\
.sub{color:#666;margin-top:4px}table{border-collapse:collapse;margin:8px 0;font-size:0.92em}\
td,th{border:1px solid #ddd;padding:3px 8px;text-align:right;vertical-align:top}th{background:#f4f4f4}\
td:first-child,th:first-child{text-align:left}.charts{display:flex;flex-wrap:wrap;gap:8px}\
.chart svg{max-width:100%;height:auto;border:1px solid #eee}details{margin:6px 0}summary{cursor:pointer;font-weight:600}\
.bad{color:#b00}.muted{color:#888}.plans{display:flex;gap:8px}.plans>div{flex:1;min-width:0}\
pre{font-size:0.8em;overflow-x:auto;background:#fafafa;border:1px solid #eee;padding:4px}";

/// Builds the report.
pub fn render(input: &ReportInput) -> Result<Report, String> {
    let mut page = Page::default();
    let runs = &input.runs;
    let workloads: BTreeSet<&str> = runs.iter().map(|r| r.workload()).collect();
    let variants = variants_in_order(runs);
    let _ = write!(
        page.html,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"generator\" content=\"dbmeter\"><title>{}</title><style>{STYLE}</style></head><body>\n\
         <h1>{}</h1><p class=\"sub\">{}</p>\n<p>{} runs ({} completed) of {} workload(s) on {} variant(s): {}.</p>\n",
        escape(&input.title),
        escape(&input.title),
        escape(&input.subtitle),
        runs.len(),
        runs.iter().filter(|r| r.completed()).count(),
        workloads.len(),
        variants.len(),
        escape(&variants.join(", ")),
    );
    page.html
        .push_str("<nav><a href=\"#environment\">Environment</a>");
    for s in &input.sections {
        let _ = write!(
            page.html,
            " · <a href=\"#{}\">{}</a>",
            slug(&s.title),
            escape(&s.title)
        );
    }
    for w in &workloads {
        let _ = write!(page.html, " · <a href=\"#w-{}\">{}</a>", slug(w), escape(w));
    }
    page.html.push_str("</nav>\n");

    environment(&mut page, runs, &variants);
    for s in &input.sections {
        let _ = write!(
            page.html,
            "<h2 id=\"{}\">{}</h2>\n{}\n",
            slug(&s.title),
            escape(&s.title),
            s.html
        );
    }
    for w in &workloads {
        workload(&mut page, runs, &variants, w)?;
    }
    page.html.push_str("</body></html>\n");
    Ok(Report {
        html: page.html,
        charts: page.charts,
    })
}

#[derive(Default)]
struct Page {
    html: String,
    charts: Vec<(String, String)>,
}

impl Page {
    /// Puts a drawn chart into the page and keeps it as a file too.
    fn svg(&mut self, file: String, svg: String) {
        let _ = writeln!(
            self.html,
            "<div class=\"chart\" id=\"{}\">{}</div>",
            slug(&file),
            svg
        );
        self.charts.push((format!("{}.svg", slug(&file)), svg));
    }

    /// Draws a chart into the page and keeps it as a file too.
    fn chart(&mut self, file: String, chart: &LineChart) -> Result<(), String> {
        self.svg(file, charts::render(chart)?);
        Ok(())
    }
}

/// The variants, in the order their first run appears.
pub fn variants_in_order(runs: &[ReportRun]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in runs {
        if !out.contains(&r.variant) {
            out.push(r.variant.clone());
        }
    }
    out
}

/// A table of each variant's machine and server, then the server variables
/// whose values differ between variants (the change under test, usually).
fn environment(page: &mut Page, runs: &[ReportRun], variants: &[String]) {
    let first: Vec<&ReportRun> = variants
        .iter()
        .filter_map(|v| {
            runs.iter()
                .filter(|r| &r.variant == v)
                .find(|r| r.completed())
                .or_else(|| runs.iter().find(|r| &r.variant == v))
        })
        .collect();
    page.html
        .push_str("<h2 id=\"environment\">Environment</h2>\n<table><tr><th></th>");
    for r in &first {
        let _ = write!(page.html, "<th>{}</th>", escape(&r.variant));
    }
    page.html.push_str("</tr>\n");
    type Field<'a> = (&'a str, &'a dyn Fn(&ReportRun) -> String);
    let fields: [Field; 9] = [
        ("host", &|r| or_dash(&r.doc.environment.hostname)),
        ("operating system", &|r| or_dash(&r.doc.environment.os)),
        ("kernel", &|r| or_dash(&r.doc.environment.kernel)),
        ("CPU", &|r| or_dash(&r.doc.environment.cpu_model)),
        ("CPUs", &|r| r.doc.environment.cpus.to_string()),
        ("memory", &|r| match r.doc.environment.memory_bytes {
            0 => "–".into(),
            b => format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64),
        }),
        ("target", &|r| or_dash(&r.doc.target.url)),
        ("server", &|r| or_dash(&r.doc.target.server_version)),
        ("dbmeter", &|r| {
            format!(
                "{} {}",
                or_dash(&r.doc.dbmeter.version),
                or_dash(&r.doc.dbmeter.build)
            )
        }),
    ];
    for (name, f) in fields.iter() {
        let _ = write!(page.html, "<tr><td>{name}</td>");
        for r in &first {
            let _ = write!(page.html, "<td>{}</td>", escape(&f(r)));
        }
        page.html.push_str("</tr>\n");
    }
    page.html.push_str("<tr><td>runs</td>");
    for r in &first {
        let n = runs.iter().filter(|x| x.variant == r.variant).count();
        let _ = write!(page.html, "<td>{n}</td>");
    }
    page.html.push_str("</tr>\n");
    page.html.push_str("</table>\n");

    // Variables that differ between the variants.
    if first.len() > 1 {
        let names: BTreeSet<&String> = first
            .iter()
            .filter_map(|r| r.doc.server.as_ref())
            .flat_map(|s| s.variables.keys())
            .collect();
        let mut rows = String::new();
        let mut n = 0;
        for name in names {
            let values: Vec<String> = first
                .iter()
                .map(|r| {
                    r.doc
                        .server
                        .as_ref()
                        .and_then(|s| s.variables.get(name.as_str()))
                        .map_or_else(|| "–".to_string(), |v| or_dash(v))
                })
                .collect();
            if values.iter().all(|v| v == &values[0]) || volatile(name, &values) {
                continue;
            }
            n += 1;
            let _ = write!(rows, "<tr><td>{}</td>", escape(name));
            for v in values {
                let _ = write!(rows, "<td>{}</td>", escape(&v));
            }
            rows.push_str("</tr>\n");
        }
        if n > 0 {
            let _ = write!(
                page.html,
                "<h3>Server variables that differ ({n})</h3>\n<table><tr><th>variable</th>"
            );
            for r in &first {
                let _ = write!(page.html, "<th>{}</th>", escape(&r.variant));
            }
            let _ = write!(page.html, "</tr>\n{rows}</table>\n");
        }
    }
    // Every variable, folded away: long lists stay off the page.
    let names: BTreeSet<&String> = first
        .iter()
        .filter_map(|r| r.doc.server.as_ref())
        .flat_map(|s| s.variables.keys())
        .collect();
    if !names.is_empty() {
        let _ = write!(
            page.html,
            "<details><summary>All server variables ({})</summary><table><tr><th>variable</th>",
            names.len()
        );
        for r in &first {
            let _ = write!(page.html, "<th>{}</th>", escape(&r.variant));
        }
        page.html.push_str("</tr>\n");
        for name in names {
            let _ = write!(page.html, "<tr><td>{}</td>", escape(name));
            for r in &first {
                let v = r
                    .doc
                    .server
                    .as_ref()
                    .and_then(|s| s.variables.get(name.as_str()))
                    .map_or_else(|| "–".to_string(), |v| or_dash(v));
                let _ = write!(page.html, "<td>{}</td>", escape(&v));
            }
            page.html.push_str("</tr>\n");
        }
        page.html.push_str("</table></details>\n");
    }
}

/// Variables that differ between any two servers without being settings:
/// ports, sockets, identities, and paths (a throwaway server's directories
/// always differ; a path is rarely the setting under test).
fn volatile(name: &str, values: &[String]) -> bool {
    const NAMES: [&str; 7] = [
        "port",
        "socket",
        "pid_file",
        "hostname",
        "server_uid",
        "server_uuid",
        "server_id",
    ];
    NAMES.iter().any(|p| name.contains(p))
        || values
            .iter()
            .all(|v| v.starts_with('/') || v == "–" || v.is_empty())
}

/// The text, or a dash when there is none.
fn or_dash(v: &str) -> String {
    if v.is_empty() {
        "–".into()
    } else {
        v.to_string()
    }
}

/// One workload: scaling charts and their table, then its cells' details.
fn workload(
    page: &mut Page,
    runs: &[ReportRun],
    variants: &[String],
    w: &str,
) -> Result<(), String> {
    let mine: Vec<&ReportRun> = runs.iter().filter(|r| r.workload() == w).collect();
    let clients: BTreeSet<u64> = mine.iter().map(|r| r.threads()).collect();
    let _ = writeln!(page.html, "<h2 id=\"w-{}\">{}</h2>", slug(w), escape(w));
    if mine.iter().any(|r| !r.doc.figures.is_empty()) {
        figures(page, &mine, variants, w);
        for &c in &clients {
            let cell: Vec<&ReportRun> = mine.iter().copied().filter(|r| r.threads() == c).collect();
            cell_details(page, w, c, &cell)?;
        }
        return Ok(());
    }

    // Transactions where the runs issue SQL, events otherwise.
    let (rate, rate_axis) = rate_words(&mine);
    // Medians over repeats per variant and client count.
    let mut tps: BTreeMap<&str, Vec<(f64, f64)>> = BTreeMap::new();
    let mut p99: BTreeMap<&str, Vec<(f64, f64)>> = BTreeMap::new();
    let mut table = String::from("<table><tr><th>variant</th>");
    for c in &clients {
        let _ = write!(
            table,
            "<th>{c} client{}</th>",
            if *c == 1 { "" } else { "s" }
        );
    }
    table.push_str("</tr>\n");
    for v in variants {
        let of_v: Vec<&&ReportRun> = mine.iter().filter(|r| &r.variant == v).collect();
        if of_v.is_empty() {
            continue;
        }
        let _ = write!(table, "<tr><td>{}</td>", escape(v));
        for &c in &clients {
            let done: Vec<&&&ReportRun> = of_v
                .iter()
                .filter(|r| r.threads() == c && r.completed())
                .collect();
            let t = median(&done.iter().filter_map(|r| r.tps()).collect::<Vec<_>>());
            let l = median(
                &done
                    .iter()
                    .filter_map(|r| r.latency_ms(99.0))
                    .collect::<Vec<_>>(),
            );
            if let Some(t) = t {
                tps.entry(v).or_default().push((c as f64, t));
            }
            if let Some(l) = l {
                p99.entry(v).or_default().push((c as f64, l));
            }
            let failed = of_v
                .iter()
                .filter(|r| r.threads() == c && !r.completed())
                .count();
            let _ = write!(
                table,
                "<td>{} {rate}<br>{} ms p99<br><span class=\"muted\">{} run(s)</span>{}</td>",
                num(t),
                num(l),
                done.len(),
                if failed > 0 {
                    format!(" <span class=\"bad\">{failed} not completed</span>")
                } else {
                    String::new()
                }
            );
        }
        table.push_str("</tr>\n");
    }
    table.push_str("</table>\n");
    let series = |m: &BTreeMap<&str, Vec<(f64, f64)>>| -> Vec<Series> {
        variants
            .iter()
            .filter_map(|v| {
                m.get(v.as_str()).map(|p| Series {
                    name: v.clone(),
                    points: p.clone(),
                })
            })
            .collect()
    };
    page.html.push_str("<div class=\"charts\">");
    page.chart(
        format!("{w}-tps-vs-clients"),
        &LineChart {
            title: format!("{w}: throughput (median of repeats)"),
            x_label: "clients".into(),
            y_label: rate_axis.into(),
            x_scale: Scale::Log,
            y_scale: Scale::Log,
            series: series(&tps),
            markers: Vec::new(),
        },
    )?;
    page.chart(
        format!("{w}-p99-vs-clients"),
        &LineChart {
            title: format!("{w}: 99th percentile latency (median of repeats)"),
            x_label: "clients".into(),
            y_label: "ms".into(),
            x_scale: Scale::Log,
            y_scale: Scale::Log,
            series: series(&p99),
            markers: Vec::new(),
        },
    )?;
    page.html.push_str("</div>\n");
    page.html.push_str(&table);

    for &c in &clients {
        let cell: Vec<&ReportRun> = mine.iter().copied().filter(|r| r.threads() == c).collect();
        cell_details(page, w, c, &cell)?;
    }
    Ok(())
}

/// One figure of one variant over its completed runs.
#[derive(Default)]
struct FigureAgg {
    median: Option<f64>,
    low: Option<f64>,
    high: Option<f64>,
    timeout: bool,
    runs: usize,
    detail: Option<String>,
}

/// Bars above this many percent of the first variant are cut off.
const FIGURE_CAP: f64 = 400.0;

/// A workload with figures of its own (TPC-H's queries): DBT3's chart, a
/// bar per figure and variant normalised to the first variant = 100%,
/// min/max whiskers, timeouts as cut-off bars; a table of the values; the
/// figures' details (plans) side by side.
fn figures(page: &mut Page, mine: &[&ReportRun], variants: &[String], w: &str) {
    let mut names: Vec<String> = Vec::new();
    for r in mine {
        for f in &r.doc.figures {
            if !names.contains(&f.name) {
                names.push(f.name.clone());
            }
        }
    }
    let shown: Vec<&String> = variants
        .iter()
        .filter(|v| mine.iter().any(|r| &r.variant == *v))
        .collect();
    let agg = |v: &str, name: &str| -> FigureAgg {
        let figs: Vec<&dbmeter_result::Figure> = mine
            .iter()
            .filter(|r| r.variant == v && r.completed())
            .flat_map(|r| r.doc.figures.iter().filter(|f| f.name == name))
            .collect();
        let values: Vec<f64> = figs.iter().filter_map(|f| f.value).collect();
        let lows = figs.iter().filter_map(|f| f.min.or(f.value));
        let highs = figs.iter().filter_map(|f| f.max.or(f.value));
        FigureAgg {
            median: median(&values),
            low: lows.min_by(f64::total_cmp),
            high: highs.max_by(f64::total_cmp),
            timeout: figs
                .iter()
                .any(|f| f.status == dbmeter_result::Figure::TIMEOUT),
            runs: figs.len(),
            detail: figs.iter().find_map(|f| f.detail.clone()),
        }
    };
    let table: Vec<Vec<FigureAgg>> = names
        .iter()
        .map(|n| shown.iter().map(|v| agg(v, n)).collect())
        .collect();
    let unit = mine
        .iter()
        .flat_map(|r| r.doc.figures.iter())
        .map(|f| f.unit.clone())
        .next()
        .unwrap_or_default();
    let base_name = shown.first().map_or("", |v| v.as_str());
    let groups: Vec<bars::Group> = names
        .iter()
        .zip(&table)
        .map(|(n, row)| {
            let base = row
                .first()
                .and_then(|b| (!b.timeout).then_some(b.median).flatten());
            let pct = |x: Option<f64>| match (x, base) {
                (Some(x), Some(b)) if b > 0.0 => Some(x / b * 100.0),
                _ => None,
            };
            bars::Group {
                label: n.clone(),
                bars: row
                    .iter()
                    .map(|a| bars::Bar {
                        value: if a.timeout { None } else { pct(a.median) },
                        low: pct(a.low),
                        high: pct(a.high),
                        timeout: a.timeout,
                    })
                    .collect(),
            }
        })
        .collect();
    let chart = bars::BarChart {
        title: format!("{w}: each figure relative to {base_name} (median of repeats)"),
        y_label: format!("% of {base_name}"),
        series: shown.iter().map(|v| v.to_string()).collect(),
        groups,
        cap: FIGURE_CAP,
    };
    page.svg(format!("{w}-figures"), bars::render(&chart));
    let _ = write!(page.html, "<table><tr><th>figure</th>");
    for v in &shown {
        let _ = write!(page.html, "<th>{}</th>", escape(v));
    }
    page.html.push_str("</tr>\n");
    for (n, row) in names.iter().zip(&table) {
        let _ = write!(page.html, "<tr><td>{}</td>", escape(n));
        let base = row.first().and_then(|b| b.median);
        for (i, a) in row.iter().enumerate() {
            let text = if a.timeout {
                "<span class=\"bad\">timeout</span>".to_string()
            } else {
                match (a.median, base) {
                    (Some(m), Some(b)) if i > 0 && b > 0.0 => {
                        format!("{} {unit} ({:.1}%)", num(Some(m)), m / b * 100.0)
                    }
                    (Some(m), _) => format!("{} {unit}", num(Some(m))),
                    (None, _) => "–".into(),
                }
            };
            let _ = write!(
                page.html,
                "<td>{text}<br><span class=\"muted\">{} run(s)</span></td>",
                a.runs
            );
        }
        page.html.push_str("</tr>\n");
    }
    page.html.push_str("</table>\n");
    if table.iter().flatten().any(|a| a.detail.is_some()) {
        page.html
            .push_str("<details><summary>Plans (EXPLAIN), variants side by side</summary>\n");
        for (n, row) in names.iter().zip(&table) {
            if row.iter().all(|a| a.detail.is_none()) {
                continue;
            }
            let _ = write!(page.html, "<h4>{}</h4><div class=\"plans\">", escape(n));
            for (v, a) in shown.iter().zip(row) {
                let _ = write!(
                    page.html,
                    "<div><b>{}</b><pre>{}</pre></div>",
                    escape(v),
                    escape(a.detail.as_deref().unwrap_or("–"))
                );
            }
            page.html.push_str("</div>\n");
        }
        page.html.push_str("</details>\n");
    }
}

/// How a workload's rate reads: transactions where its runs issue SQL
/// (`tps`, `transactions/s`), events otherwise (`events/s`: cpu, fileio).
fn rate_words(runs: &[&ReportRun]) -> (&'static str, &'static str) {
    if runs.iter().any(|r| r.doc.issues_sql()) {
        ("tps", "transactions/s")
    } else {
        ("events/s", "events/s")
    }
}

fn run_label(r: &ReportRun) -> String {
    match r.repeat {
        Some(n) => format!("{} #{n}", r.variant),
        None => format!("{} (run {})", r.variant, r.id),
    }
}

/// The runs of one workload at one client count: a table, and their time
/// series and latency distributions overlaid.
fn cell_details(page: &mut Page, w: &str, clients: u64, cell: &[&ReportRun]) -> Result<(), String> {
    let (rate, rate_axis) = rate_words(cell);
    let _ = write!(
        page.html,
        "<details><summary>{} at {clients} clients: {} run(s)</summary>\n<table><tr><th>run</th><th>variant</th><th>repeat</th><th>end</th><th>{rate}</th><th>p95 ms</th><th>p99 ms</th><th>max ms</th><th>errors</th></tr>\n",
        escape(w),
        cell.len()
    );
    for r in cell {
        let errors: u64 = r.doc.errors.values().sum();
        let end = match r.doc.end.error.as_deref() {
            Some(e) => format!(
                "<span class=\"bad\">{}: {}</span>",
                escape(r.end_reason()),
                escape(e)
            ),
            None => escape(r.end_reason()),
        };
        let _ = writeln!(
            page.html,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{end}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{errors}</td></tr>",
            r.id,
            escape(&r.variant),
            r.repeat.map(|n| n.to_string()).unwrap_or_default(),
            num(r.tps()),
            num(r.latency_ms(95.0)),
            num(r.latency_ms(99.0)),
            num(r.max_latency_ms()),
        );
    }
    page.html.push_str("</table>\n<div class=\"charts\">");
    let base = format!("{w}-{clients}");
    let each = |f: &dyn Fn(&ReportRun) -> Vec<(f64, f64)>| -> Vec<Series> {
        cell.iter()
            .map(|r| Series {
                name: run_label(r),
                points: f(r),
            })
            .filter(|s| !s.points.is_empty())
            .collect()
    };
    let charts = [
        (
            "tps",
            "throughput over time",
            rate_axis,
            Scale::Linear,
            Scale::Linear,
            each(&|r| r.intervals().iter().map(|i| (i.0, i.1)).collect()),
        ),
        (
            "p99",
            "99th percentile latency over time",
            "ms",
            Scale::Linear,
            Scale::Log,
            each(&|r| {
                r.intervals()
                    .iter()
                    .filter_map(|i| i.2.map(|l| (i.0, l)))
                    .collect()
            }),
        ),
        (
            "cpu",
            "CPU busy (user+system+iowait, all CPUs)",
            "%",
            Scale::Linear,
            Scale::Linear,
            each(&|r| {
                r.os_samples()
                    .iter()
                    .map(|s| (s.t_s, s.user + s.system + s.iowait))
                    .collect()
            }),
        ),
        (
            "io",
            "disk reads+writes",
            "kB/s",
            Scale::Linear,
            Scale::Linear,
            each(&|r| {
                r.os_samples()
                    .iter()
                    .map(|s| (s.t_s, s.read_kb_s + s.write_kb_s))
                    .collect()
            }),
        ),
        (
            "latency",
            "latency distribution",
            "ms",
            Scale::Nines,
            Scale::Log,
            each(&|r| r.histogram().map(|h| spectrum(&h)).unwrap_or_default()),
        ),
    ];
    // The boundaries of a load profile's stages, on the time charts.
    let mut stage_marks: Vec<(f64, String)> = Vec::new();
    for r in cell {
        for s in &r.doc.stages {
            if s.start_s > 0.0
                && !stage_marks
                    .iter()
                    .any(|(at, _)| (*at - s.start_s).abs() < 1e-9)
            {
                stage_marks.push((s.start_s, format!("stage {}", s.index)));
            }
        }
    }
    // Each outage's start and end (when it ended), with its runs' lines
    // under the table.
    let mut outage_lines = String::new();
    for r in cell {
        for o in &r.doc.outages {
            stage_marks.push((o.start_s, "outage".to_string()));
            if let Some(end) = o.end_s() {
                stage_marks.push((end, "outage end".to_string()));
            }
            let _ = writeln!(
                outage_lines,
                "<li>{}: outage {}</li>",
                escape(&run_label(r)),
                escape(&o.line())
            );
        }
    }
    if !outage_lines.is_empty() {
        page.html.push_str("</div><ul class=\"outages\">\n");
        page.html.push_str(&outage_lines);
        page.html.push_str("</ul><div class=\"charts\">");
    }
    for (name, what, y, xs, ys, series) in charts {
        if series.is_empty() {
            continue;
        }
        page.chart(
            format!("{base}-{name}"),
            &LineChart {
                title: format!("{w}, {clients} clients: {what}"),
                x_label: if xs == Scale::Nines {
                    "percentile".into()
                } else {
                    "seconds".into()
                },
                y_label: y.into(),
                x_scale: xs,
                y_scale: ys,
                series,
                markers: if xs == Scale::Nines {
                    Vec::new()
                } else {
                    stage_marks.clone()
                },
            },
        )?;
    }
    capacity_charts(page, &base, w, cell)?;
    page.html.push_str("</div></details>\n");
    Ok(())
}

/// A capacity search's steps (`--find-capacity`): achieved throughput and
/// p99 against the offered rate (or the users), a line per run.
fn capacity_charts(
    page: &mut Page,
    base: &str,
    w: &str,
    cell: &[&ReportRun],
) -> Result<(), String> {
    let searches: Vec<(&ReportRun, &dbmeter_result::capacity::CapacityResult)> = cell
        .iter()
        .filter_map(|r| r.doc.capacity.as_ref().map(|c| (*r, c)))
        .collect();
    let Some((_, first)) = searches.first() else {
        return Ok(());
    };
    let users = first.mode == "users";
    let x_of = |s: &dbmeter_result::capacity::CapacityStep| {
        if users {
            Some(s.users as f64)
        } else {
            s.offered_per_s
        }
    };
    let lines =
        |y: &dyn Fn(&dbmeter_result::capacity::CapacityStep) -> Option<f64>| -> Vec<Series> {
            searches
                .iter()
                .map(|(r, c)| {
                    let mut points: Vec<(f64, f64)> = c
                        .steps
                        .iter()
                        .filter_map(|s| Some((x_of(s)?, y(s)?)))
                        .collect();
                    points.sort_by(|a, b| a.0.total_cmp(&b.0));
                    Series {
                        name: run_label(r),
                        points,
                    }
                })
                .filter(|s| !s.points.is_empty())
                .collect()
        };
    let x_label = if users { "users" } else { "offered per second" };
    for (name, what, y_label, y_scale, series) in [
        (
            "capacity-throughput",
            "capacity search: achieved throughput",
            "per second",
            Scale::Linear,
            lines(&|s| Some(s.achieved_per_s)),
        ),
        (
            "capacity-p99",
            "capacity search: 99th percentile latency",
            "ms",
            Scale::Log,
            lines(&|s| s.p99_ms),
        ),
    ] {
        if series.is_empty() {
            continue;
        }
        page.chart(
            format!("{base}-{name}"),
            &LineChart {
                title: format!("{w}: {what}"),
                x_label: x_label.into(),
                y_label: y_label.into(),
                x_scale: Scale::Linear,
                y_scale,
                series,
                markers: searches
                    .iter()
                    .filter(|_| !users)
                    .filter_map(|(_, c)| c.capacity.map(|v| (v, format!("capacity {v:.0}/s"))))
                    .collect(),
            },
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(id: i64, variant: &str, threads: u64, tps: f64) -> ReportRun {
        ReportRun {
            id,
            variant: variant.into(),
            repeat: Some(1),
            doc: dbmeter_result::RunDocument::from_json(&json!({
                "schema": "dbmeter.run", "workload": "point_lookups", "threads": threads,
                "target": {"url": "mysql://root:***@h/test", "server_version": "MariaDB <x>"},
                "environment": {"hostname": "vm", "cpus": 2, "memory_bytes": 1073741824u64},
                "server": {"variables": {"innodb_buffer_pool_size": variant, "port": id.to_string(), "tmpdir": format!("/tmp/{variant}"), "server_uid": id.to_string()}},
                "end": {"reason": "time_limit"},
                "measures": [{"name": "reads", "label": "read", "unit": "statement"},
                             {"name": "writes", "label": "write", "unit": "statement"},
                             {"name": "others", "label": "other", "unit": "statement"}],
                "totals": {"duration_s": 10.0, "events_per_s": tps},
                "latency_ms": {"count": 10, "max_ms": 4.0, "percentiles": [{"percentile": 99.0, "ms": 1.5}]},
                "intervals": [{"t_s": 1.0, "events_per_s": tps, "latency_ms": {"count": 3, "percentiles": [{"percentile": 99.0, "ms": 1.5}]}}]
            }).to_string())
            .unwrap(),
        }
    }

    #[test]
    fn a_page_with_environment_scaling_and_cells() {
        let input = ReportInput {
            title: "A & B".into(),
            subtitle: "store x".into(),
            runs: vec![
                run(1, "a", 1, 100.0),
                run(2, "b", 1, 150.0),
                run(3, "a", 4, 300.0),
                run(4, "b", 4, 450.0),
            ],
            sections: vec![Section {
                title: "Throughput, b vs a".into(),
                html: "<table><tr><td>150</td></tr></table>".into(),
            }],
        };
        let r = render(&input).unwrap();
        assert!(r.html.starts_with("<!DOCTYPE html>"));
        assert!(r.html.contains("<title>A &amp; B</title>"));
        assert!(r.html.contains("Server variables that differ (1)"));
        assert!(r.html.contains("innodb_buffer_pool_size"));
        let (differ, all) = r
            .html
            .split_once("All server variables")
            .unwrap_or((&r.html, ""));
        assert!(!differ.contains("<td>port</td>") && !differ.contains("<td>tmpdir</td>"));
        assert!(!differ.contains("<td>server_uid</td>"));
        // The full lists are there, folded away.
        assert!(all.contains("<td>port</td>"), "{all}");
        assert!(r.html.contains("MariaDB &lt;x&gt;"));
        assert!(r.html.contains("Throughput, b vs a"));
        // Self-contained: nothing to fetch.
        assert!(!r.html.contains("src=\"http") && !r.html.contains("href=\"http"));
        let names: Vec<&str> = r.charts.iter().map(|c| c.0.as_str()).collect();
        assert!(
            names.contains(&"point_lookups-tps-vs-clients.svg"),
            "{names:?}"
        );
        assert!(names.contains(&"point_lookups-4-tps.svg"), "{names:?}");
        assert_eq!(r.html.matches("<svg").count(), r.charts.len());
        assert!(r.html.contains("150 tps"));
    }

    #[test]
    fn a_capacity_search_has_its_charts_and_stages_their_marks() {
        let mut searched = run(1, "a", 2, 180.0);
        searched.doc.capacity = Some(dbmeter_result::capacity::CapacityResult {
            mode: "rate".into(),
            capacity: Some(180.0),
            steps: [(50.0, 12.0), (100.0, 14.0), (200.0, 900.0), (180.0, 30.0)]
                .iter()
                .map(|&(r, p)| dbmeter_result::capacity::CapacityStep {
                    offered_per_s: Some(r),
                    users: 2,
                    achieved_per_s: r.min(190.0),
                    p99_ms: Some(p),
                    met: p < 100.0,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        });
        searched.doc.stages = vec![dbmeter_result::StageResult {
            index: 2,
            start_s: 0.5,
            end_s: 1.0,
            ..Default::default()
        }];
        let r = render(&ReportInput {
            title: "cap".into(),
            subtitle: String::new(),
            runs: vec![searched],
            sections: Vec::new(),
        })
        .unwrap();
        let names: Vec<&str> = r.charts.iter().map(|c| c.0.as_str()).collect();
        assert!(
            names.contains(&"point_lookups-2-capacity-throughput.svg"),
            "{names:?}"
        );
        assert!(
            names.contains(&"point_lookups-2-capacity-p99.svg"),
            "{names:?}"
        );
        assert!(r.html.contains("capacity 180/s"), "the capacity's mark");
        assert!(
            r.html.contains("stage 2"),
            "the stage's mark on the time charts"
        );
    }

    #[test]
    fn outages_are_marked_on_the_time_charts_and_listed() {
        let mut down = run(1, "a", 2, 100.0);
        down.doc.intervals = (1..=8)
            .map(|t| dbmeter_result::Interval {
                t_s: t as f64,
                duration_s: 1.0,
                events_per_s: if (3..=4).contains(&t) { 0.0 } else { 100.0 },
                ..Default::default()
            })
            .collect();
        down.doc.outages = vec![dbmeter_result::outages::Outage {
            start_s: 2.5,
            length_s: Some(1.75),
            events_lost: 3,
            tolerance_pct: 10.0,
            ..Default::default()
        }];
        let r = render(&ReportInput {
            title: "down".into(),
            subtitle: String::new(),
            runs: vec![down],
            sections: Vec::new(),
        })
        .unwrap();
        let tps = &r
            .charts
            .iter()
            .find(|c| c.0 == "point_lookups-2-tps.svg")
            .expect("the throughput chart")
            .1;
        assert!(tps.contains("outage end"), "the end's mark: {tps}");
        assert_eq!(tps.matches("outage").count(), 2, "the start's mark: {tps}");
        assert!(
            r.html.contains("outage at 2.5 s for 1.8 s: 3 events lost"),
            "the outage's line"
        );
    }
}
