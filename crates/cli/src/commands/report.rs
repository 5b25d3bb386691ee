//! `dbmeter report`: one self-contained HTML page from stored runs
//! (`dbmeter_report::html`), with comparison tables against a baseline
//! (`dbmeter_store::compare`) and every chart also as an SVG file.

use super::results::{campaign_selection, filter_of, noise_pct, open_existing, parse_args};
use crate::CliError;
use crate::help::{Example, Page, opt};
use dbmeter_report::compare as fmt;
use dbmeter_report::html::{ReportInput, ReportRun, Section, render};
use dbmeter_store::{CompareMode, CompareOptions, Filter, Metric, RunSummary};

pub const PAGE: Page = Page {
    usage: &["report [SELECTORS...] [--option=value ...]"],
    about: &[
        "Writes one HTML file that stands alone (no scripts, fonts or images to fetch; \
         charts are inline SVG) from runs in the results store: the environment of each \
         variant and the server variables that differ between them, tables of candidate \
         / baseline x 100 for throughput and for p95 and p99 latency (noisy cells \
         marked) and why the candidate differs (the lists of `compare --why`), throughput and p99 latency against clients on log-log axes, and per \
         workload and client count the runs' throughput, p99, CPU and disk I/O over time \
         and their latency distributions; for benchmarks with figures of their own \
         (tpch's queries), a bar chart per figure. When the runs are all of one \
         configuration (a nightly job's, say) and enough of them, the history of their \
         throughput and p99 latency with its change points, as `dbmeter results history` \
         shows it. For a campaign with adaptive repeats (repeats = \"auto\"), why each \
         cell stopped: settled at its interval's width, or at max_repeats (also printed \
         on standard output).",
        "Without selectors every stored run is in the report; `campaign:NAME` (or any \
         other selectors, as in `dbmeter results`) narrows it.",
    ],
    options: &[
        opt("output", "FILE", "the HTML file").default("dbmeter-report.html"),
        opt(
            "charts",
            "DIR",
            "also write each chart as an SVG file in DIR",
        ),
        opt("title", "TEXT", "the page's title")
            .default("the campaign's name, or \"dbmeter report\""),
        opt(
            "baseline",
            "SELECTORS",
            "the baseline of the comparison tables",
        )
        .default("the first variant stored, when the runs hold several"),
        opt("candidate", "SELECTORS", "the runs compared with it").default("the other runs"),
        opt(
            "noise",
            "PCT",
            "mark cells whose repeats spread more than PCT %",
        )
        .default("5"),
        super::results::STORE,
    ],
    sections: &[super::results::SELECTORS],
    examples: &[
        Example {
            what: "The report of one campaign",
            command: "report campaign:bp-size --output=bp-size.html",
        },
        Example {
            what: "Before against after",
            command: "report tag:phase=before tag:phase=after --baseline=tag:phase=before",
        },
    ],
    exit: "0 written, 1 failed (no store, no matching runs, cannot write), 2 usage error.",
    ..Page::new("report", "an HTML report with charts of stored runs")
};

/// The name a run goes by in the report: its variant, else its tags, else
/// its id.
fn variant_of(s: &RunSummary) -> String {
    if let Some(v) = s.variant.as_deref().filter(|v| !v.is_empty()) {
        return v.to_string();
    }
    if !s.tags.is_empty() {
        return s
            .tags
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",");
    }
    format!("run {}", s.id)
}

/// Why the candidate differs from the baseline (`compare --why`'s lists).
fn why_section(c: &dbmeter_store::Comparison, runs: &[ReportRun], name: &str) -> Section {
    let docs = runs.iter().map(|r| (r.id, r.doc.clone())).collect();
    Section {
        title: format!("Why it changed against {name}"),
        html: dbmeter_report::why::html(&dbmeter_store::why::why(c, &docs)),
    }
}

pub fn main(args: &[String]) -> Result<i32, CliError> {
    if args
        .iter()
        .any(|a| a == "--help" || a == "-h" || a == "help")
    {
        return crate::help::print_page(&PAGE);
    }
    let mut a = parse_args(args, &PAGE, None)?;
    let words = |name: &str| -> Vec<String> {
        a.all(name)
            .flat_map(|v| v.split_whitespace())
            .map(str::to_string)
            .collect()
    };
    // Campaign files become campaign:NAME, and may name the store.
    let (groups, store) = campaign_selection(
        a.get("store"),
        &[a.words.clone(), words("baseline"), words("candidate")],
    )?;
    let [selected, base_words, cand_words] = <[Vec<String>; 3]>::try_from(groups)
        .map_err(|_| CliError::Failed("internal error: selector groups".into()))?;
    a.words = selected;
    let filter = filter_of(&a.words)?;
    let noise_pct = noise_pct(a.get("noise"))?;
    if base_words.is_empty() && !cand_words.is_empty() {
        return Err(CliError::Usage(
            "--candidate needs --baseline (`dbmeter help report`)".into(),
        ));
    }

    let mut store = open_existing(Some(&store))?;
    let summaries = store.runs(&filter).map_err(|e| CliError::Failed(e.0))?;
    if summaries.is_empty() {
        return Err(CliError::Failed(format!(
            "no stored run matches {} in '{}' (`dbmeter results list` shows them)",
            if a.words.is_empty() {
                "anything".to_string()
            } else {
                a.words.join(" ")
            },
            store.location()
        )));
    }
    let mut runs = Vec::with_capacity(summaries.len());
    for s in &summaries {
        let Some(stored) = store.run(s.id).map_err(|e| CliError::Failed(e.0))? else {
            continue;
        };
        let doc = dbmeter_result::RunDocument::from_json(&stored.document)
            .map_err(|e| CliError::Failed(format!("run {} in the store: {e}", s.id)))?;
        runs.push(ReportRun {
            id: s.id,
            variant: variant_of(s),
            repeat: s.repeat,
            doc,
        });
    }

    // Comparison tables: the given baseline, else the first variant
    // against the others when there are several.
    let mut sections = Vec::new();
    let variants = dbmeter_report::html::variants_in_order(&runs);
    let sides: Option<(Vec<RunSummary>, Vec<RunSummary>, String)> = if !base_words.is_empty() {
        let base_filter = filter_of(&base_words)?;
        let base = store
            .runs(&with(&filter, &base_filter))
            .map_err(|e| CliError::Failed(e.0))?;
        if base.is_empty() {
            return Err(CliError::Failed(format!(
                "no stored run matches the baseline {} (`dbmeter results list` shows them)",
                base_words.join(" ")
            )));
        }
        let cand = if cand_words.is_empty() {
            summaries
                .iter()
                .filter(|s| !base.iter().any(|b| b.id == s.id))
                .cloned()
                .collect()
        } else {
            store
                .runs(&with(&filter, &filter_of(&cand_words)?))
                .map_err(|e| CliError::Failed(e.0))?
        };
        Some((base, cand, base_words.join(" ")))
    } else if variants.len() > 1 {
        let first = &variants[0];
        let (base, cand): (Vec<RunSummary>, Vec<RunSummary>) = summaries
            .iter()
            .cloned()
            .partition(|s| &variant_of(s) == first);
        Some((base, cand, first.clone()))
    } else {
        None
    };
    if let Some((base, cand, name)) = sides {
        // Runs with figures of their own (TPC-H's queries) are compared
        // figure by figure; events per second mean little there.
        let with_figures = base.iter().chain(&cand).all(|r| !r.figures.is_empty());
        let metrics: &[Metric] = if with_figures {
            &[Metric::Figures]
        } else {
            &[Metric::Tps, Metric::P95, Metric::P99]
        };
        for &metric in metrics {
            let opts = CompareOptions {
                metric,
                mode: CompareMode::Ratio,
                noise_pct,
                ..CompareOptions::default()
            };
            match dbmeter_store::compare(&base, &cand, &opts) {
                Ok(c) => sections.push(Section {
                    title: capitalised(&format!("{} against {name}", c.metric_words())),
                    html: format!(
                        "<p>{}</p>\n{}\n<p class=\"muted\">{}</p>{}",
                        dbmeter_report::html::escape(&fmt::title(&c)),
                        fmt::html_table(&c),
                        dbmeter_report::html::escape(&fmt::legend(&c)),
                        fmt::single_run_note(&c)
                            .map(|n| format!(
                                "\n<p class=\"muted\">{}</p>",
                                dbmeter_report::html::escape(&n)
                            ))
                            .unwrap_or_default()
                    ),
                }),
                Err(e) => {
                    sections.push(Section {
                        title: format!("Comparison with {name} ({})", metric.name()),
                        html: format!(
                            "<p class=\"bad\">{}</p>",
                            dbmeter_report::html::escape(&e.0)
                        ),
                    });
                    break;
                }
            }
        }
        let opts = CompareOptions {
            metric: metrics[0],
            mode: CompareMode::Ratio,
            noise_pct,
            ..CompareOptions::default()
        };
        if let Ok(c) = dbmeter_store::compare(&base, &cand, &opts) {
            sections.push(why_section(&c, &runs, &name));
        }
    }

    // Runs of one configuration over time: their history and change points.
    let options = runs.iter().map(|r| (r.id, r.doc.options.clone())).collect();
    let selection = if a.words.is_empty() {
        "all runs".to_string()
    } else {
        a.words.join(" ")
    };
    sections.extend(super::history::report_sections(
        &summaries, &options, &selection,
    ));

    let campaigns: Vec<&str> = {
        let mut c: Vec<&str> = summaries
            .iter()
            .filter_map(|s| s.campaign.as_deref())
            .collect();
        c.sort_unstable();
        c.dedup();
        c
    };
    // With adaptive repeats: why each cell stopped.
    let adaptive = store
        .adaptive_cells(&campaigns)
        .map_err(|e| CliError::Failed(e.0))?;
    if !adaptive.is_empty() {
        sections.push(Section {
            title: "Adaptive repeats".to_string(),
            html: format!(
                "<p>Each cell ran until the 95% confidence interval of its median throughput was within its target width (settled), or it had run <code>max_repeats</code> times.</p>\n{}",
                dbmeter_report::stored::adaptive_html(&adaptive)
            ),
        });
    }
    let title = match a.get("title") {
        Some(t) => t.to_string(),
        None if campaigns.len() == 1 => format!("Campaign {}", campaigns[0]),
        None => "dbmeter report".to_string(),
    };
    let input = ReportInput {
        title,
        subtitle: format!(
            "{} runs from {}{}",
            runs.len(),
            store.location(),
            if a.words.is_empty() {
                String::new()
            } else {
                format!(" ({})", a.words.join(" "))
            }
        ),
        runs,
        sections,
    };
    let report = render(&input).map_err(CliError::Failed)?;
    let out = a.get("output").unwrap_or("dbmeter-report.html");
    std::fs::write(out, &report.html)
        .map_err(|e| CliError::Failed(format!("cannot write --output {out}: {e}")))?;
    if let Some(dir) = a.get("charts") {
        std::fs::create_dir_all(dir)
            .map_err(|e| CliError::Failed(format!("cannot create --charts {dir}: {e}")))?;
        for (name, svg) in &report.charts {
            let p = std::path::Path::new(dir).join(name);
            std::fs::write(&p, svg)
                .map_err(|e| CliError::Failed(format!("cannot write {}: {e}", p.display())))?;
        }
    }
    print!("{}", dbmeter_report::stored::adaptive_text(&adaptive));
    eprintln!(
        "wrote {out}: {} runs, {} charts{}",
        input.runs.len(),
        report.charts.len(),
        a.get("charts")
            .map(|d| format!(" (also as SVG files in {d})"))
            .unwrap_or_default()
    );
    Ok(0)
}

/// Both filters' selectors (all must hold).
fn with(a: &Filter, b: &Filter) -> Filter {
    let mut f = a.clone();
    f.selectors.extend(b.selectors.iter().cloned());
    f
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}
