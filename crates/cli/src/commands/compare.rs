//! `dbmeter compare`: a candidate against a baseline, from the results
//! store (computed by `dbmeter_store::compare`, laid out by
//! `dbmeter_report::compare`).

use super::results::{campaign_selection, filter_of, noise_pct, open_existing, parse_args};
use crate::CliError;
use crate::help::{Example, Page, flag, opt};
use dbmeter_report::compare as fmt;
use dbmeter_store::{CompareMode, CompareOptions, Filter, Metric};

pub const PAGE: Page = Page {
    usage: &["compare --baseline SELECTORS [--candidate SELECTORS] [--option=value ...]"],
    about: &[
        "Compares stored runs (`dbmeter run ... --store`, campaigns) with a baseline, \
              as the MariaDB benchmark pages do: one row per workload (and per candidate \
              variant when the candidate holds several), one column per thread count, and \
              in each cell candidate / baseline x 100 of the medians over repeats (each \
              side's runs of that workload and thread count). Only runs that completed \
              (time or event limit reached) count. With one run on a side, the spread \
              of repeats cannot be measured: the table says so instead of marking noise.",
    ],
    options: &[
        opt(
            "baseline",
            "SELECTORS",
            "the baseline runs, e.g. variant:A or tag:phase=before; repeat the option or \
             separate selectors with spaces (all must hold); they must be of one variant",
        ),
        opt(
            "candidate",
            "SELECTORS",
            "the runs to compare with it [every other run of the baseline's campaign(s); \
             runs without a campaign need --candidate]",
        ),
        opt(
            "metric",
            "auto|tps|qps|p95|p99|avg|figures",
            "transactions/s, queries/s, latency (95th or 99th percentile, average), or the \
             benchmark's own figures, a row each (tpch: each query's time; a timeout on \
             either side shows as 'timeout'); auto: figures when the baseline's runs have \
             them, else tps; for latency and figures lower is better, so below 100 the \
             candidate is faster",
        )
        .default("auto"),
        flag(
            "diff",
            "cells are the difference in %, (candidate - baseline) / baseline x 100, \
             signed, instead of the ratio",
        ),
        opt(
            "noise",
            "PCT",
            "mark a cell with * when the spread over repeats of either side, \
             (max - min) / median, is above PCT %",
        )
        .default("5"),
        opt(
            "format",
            "text|markdown|csv|html",
            "csv: one row per cell with both medians, ranges, spreads and run ids; html: a \
             page with the table",
        )
        .default("text"),
        opt("output", "FILE", "write to FILE instead of standard output"),
        super::results::STORE,
    ],
    sections: &[super::results::SELECTORS],
    examples: &[
        Example {
            what: "Two phases of a tuning session",
            command: "compare --baseline tag:phase=before --candidate tag:phase=after",
        },
        Example {
            what: "Every variant of a campaign against one, in p99 latency, for a wiki page",
            command: "compare --baseline variant:mariadb-10.11 --metric=p99 --format=markdown",
        },
    ],
    exit: "0 ok, 1 failed (no store, no matching runs, bad selector), 2 usage error.",
    ..Page::new(
        "compare",
        "stored runs against a baseline, as a table of ratios",
    )
};

/// The selector words of a repeatable option (each value may hold several,
/// separated by spaces).
fn selectors(values: Vec<&str>) -> Result<Filter, CliError> {
    let words: Vec<&str> = values.iter().flat_map(|v| v.split_whitespace()).collect();
    filter_of(&words)
}

pub fn main(args: &[String]) -> Result<i32, CliError> {
    if args
        .iter()
        .any(|a| a == "--help" || a == "-h" || a == "help")
    {
        return crate::help::print_page(&PAGE);
    }
    let a = parse_args(args, &PAGE, None)?;
    if let Some(w) = a.words.first() {
        return Err(CliError::Usage(format!(
            "unexpected argument '{w}': selectors go after --baseline or --candidate (`dbmeter help compare`)"
        )));
    }
    let split = |name: &str| -> Vec<String> {
        a.all(name)
            .flat_map(|v| v.split_whitespace())
            .map(str::to_string)
            .collect()
    };
    // Campaign files become campaign:NAME, and may name the store.
    let (groups, store) =
        campaign_selection(a.get("store"), &[split("baseline"), split("candidate")])?;
    let base_words: Vec<&str> = groups[0].iter().map(String::as_str).collect();
    if base_words.is_empty() {
        return Err(CliError::Usage(
            "which runs are the baseline? e.g. `dbmeter compare --baseline variant:A` (`dbmeter help compare`)"
                .into(),
        ));
    }
    let metric = match a.get("metric") {
        None => Metric::Auto,
        Some(m) => Metric::parse(m).ok_or_else(|| {
            CliError::Usage(format!(
                "--metric={m}: expected one of {}",
                fmt::metric_names()
            ))
        })?,
    };
    let noise_pct = noise_pct(a.get("noise"))?;
    let format = match a.get("format").map(str::to_ascii_lowercase).as_deref() {
        None | Some("text") => "text",
        Some("markdown" | "md") => "markdown",
        Some("csv") => "csv",
        Some("html") => "html",
        Some(f) => {
            return Err(CliError::Usage(format!(
                "--format={f}: `dbmeter compare` writes text, markdown, csv or html"
            )));
        }
    };
    let baseline = selectors(base_words)?;
    let cand_words: Vec<&str> = groups[1].iter().map(String::as_str).collect();
    let candidate = if cand_words.is_empty() {
        None
    } else {
        let f = selectors(cand_words)?;
        if f.is_empty() {
            return Err(CliError::Usage(
                "--candidate needs selectors, e.g. --candidate variant:B".into(),
            ));
        }
        Some(f)
    };
    let opts = CompareOptions {
        metric,
        mode: if a.flag("diff") {
            CompareMode::Diff
        } else {
            CompareMode::Ratio
        },
        noise_pct,
    };
    let mut store = open_existing(Some(&store))?;
    let table = store
        .compare(&baseline, candidate.as_ref(), &opts)
        .map_err(|e| CliError::Failed(e.0))?;
    let out = match format {
        "markdown" => fmt::markdown(&table),
        "csv" => fmt::csv(&table),
        "html" => fmt::html(&table),
        _ => fmt::text(&table),
    };
    match a.get("output") {
        Some(path) => std::fs::write(path, out)
            .map_err(|e| CliError::Failed(format!("cannot write --output {path}: {e}")))?,
        None => print!("{out}"),
    }
    Ok(0)
}
