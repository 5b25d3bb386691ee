//! `dbmeter results history`: the stored runs of one configuration over
//! time, one value each, with their change points (`dbmeter_store::history`,
//! `dbmeter_stats::changepoint`), as text, JSON and an HTML chart; and the
//! history sections of `dbmeter report` when its runs are of one
//! configuration.

use super::results::{PAGE, filter_of, open_existing, parse_args};
use crate::CliError;
use crate::help::{Sub, opt};
use dbmeter_report::history as text;
use dbmeter_report::html::history as html;
use dbmeter_stats::changepoint::Params;
use dbmeter_store::Metric;
use dbmeter_store::history::{HistoryOptions, RunOptions, Series, history};
use std::time::SystemTime;

/// `results history`, as the results page lists it.
pub(crate) const SUB: Sub = Sub {
    name: "history",
    args: "[SELECTORS]",
    help: "the completed runs of one configuration (workload, threads, variant, target, \
           options) oldest first, one value each, with change points marked: where the \
           series changed level, by E-Divisive with means and a permutation test \
           (docs/results.md)",
    options: &[
        opt(
            "metric",
            "tps|qps|p95|p99|avg|FIGURE",
            "the value followed: transactions/s, queries/s, a latency in ms (95th or 99th \
             percentile, average), or one of the benchmark's figures by name (tpch: Q1)",
        )
        .default("tps"),
        opt(
            "since",
            "DATE|DURATION",
            "only runs started since then: 2026-11-01, 2026-11-01T08:00:00Z, or a time back \
             from now, e.g. 30d, 12h",
        ),
        opt("last", "N", "only the last N runs (after --since)"),
        opt(
            "format",
            "text|json",
            "json: the runs, change points, segments and the method's parameters",
        )
        .default("text"),
        opt(
            "html",
            "FILE",
            "also write a page with the chart (change points marked) and the table",
        ),
        opt(
            "significance",
            "P",
            "a change point is kept when its permutation test's p-value is at most P",
        )
        .default("0.05"),
        opt(
            "permutations",
            "N",
            "shuffles per permutation test (a fixed seed: the same runs give the same \
             change points)",
        )
        .default("199"),
        opt(
            "min-segment",
            "N",
            "the fewest runs between two change points (and before the first, after the \
             last)",
        )
        .default("3"),
    ],
};

/// `--since`: a date, a date and time (UTC unless it says otherwise), or a
/// duration back from `now`.
fn since(v: &str, now: SystemTime) -> Result<SystemTime, CliError> {
    let t = v.trim();
    let bad = || {
        CliError::Usage(format!(
            "--since={v}: expected a date (2026-11-01), a date and time (2026-11-01T08:00:00Z) \
             or a time back from now (30d, 12h)"
        ))
    };
    if t.is_empty() {
        return Err(bad());
    }
    if let Ok(d) = humantime::parse_duration(t) {
        // Before 1970 is the same as 1970 for stored runs (and a time
        // before the epoch cannot be written as a date).
        return Ok(now
            .checked_sub(d)
            .filter(|t| *t > SystemTime::UNIX_EPOCH)
            .unwrap_or(SystemTime::UNIX_EPOCH));
    }
    let full = if t.len() == 10 {
        format!("{t}T00:00:00Z")
    } else {
        t.to_string()
    };
    humantime::parse_rfc3339_weak(&full).map_err(|_| bad())
}

/// A whole number option in `lo..=hi`.
fn count(
    a: &crate::subcommand_args::SubArgs,
    name: &str,
    lo: u64,
    hi: u64,
) -> Result<Option<u64>, CliError> {
    let Some(v) = a.get(name) else {
        return Ok(None);
    };
    v.trim()
        .parse::<u64>()
        .ok()
        .filter(|n| (lo..=hi).contains(n))
        .map(Some)
        .ok_or_else(|| {
            CliError::Usage(format!(
                "--{name}={v}: expected a whole number from {lo} to {hi}"
            ))
        })
}

pub(crate) fn main(args: &[String]) -> Result<i32, CliError> {
    let a = parse_args(args, &PAGE, Some("history"))?;
    let format = a.format(&["text", "json"], "results history")?;
    let filter = filter_of(&a.words)?;
    let mut params = Params::default();
    if let Some(v) = a.get("significance") {
        params.significance = v
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|p| *p > 0.0 && *p < 1.0)
            .ok_or_else(|| {
                CliError::Usage(format!(
                    "--significance={v}: expected a probability above 0 and below 1, e.g. 0.05"
                ))
            })?;
    }
    if let Some(n) = count(&a, "permutations", 1, 1_000_000)? {
        params.permutations = n as u32;
    }
    if let Some(n) = count(&a, "min-segment", 2, 1_000_000)? {
        params.min_segment = n as usize;
    }
    // What is left to check: enough permutations for the significance.
    params.check().map_err(|e| {
        CliError::Usage(format!(
            "--permutations={}: {e} (or raise --significance)",
            params.permutations
        ))
    })?;
    let last = count(&a, "last", 1, u64::from(u32::MAX))?.map(|n| n as usize);
    let since = a
        .get("since")
        .map(|v| since(v, SystemTime::now()))
        .transpose()?;

    let mut store = open_existing(a.get("store"))?;
    let runs = store.runs(&filter).map_err(|e| CliError::Failed(e.0))?;
    if runs.is_empty() {
        return Err(super::results::no_match(&store, &filter));
    }
    let series = Series::parse(a.get("metric").unwrap_or("tps"), &runs).map_err(CliError::Usage)?;
    let selection = if filter.is_empty() {
        "all runs".to_string()
    } else {
        a.words.join(" ")
    };
    let h = history(
        &runs,
        &mut |ids| store.run_options(ids),
        &selection,
        &HistoryOptions {
            series,
            since,
            last,
            params,
        },
    )
    .map_err(|e| CliError::Failed(e.0))?;

    if let Some(path) = a.get("html") {
        let title = format!("History of {}: {}", h.metric, text::configuration_words(&h));
        let page = html::page(&h, &title).map_err(CliError::Failed)?;
        std::fs::write(path, page)
            .map_err(|e| CliError::Failed(format!("cannot write --html {path}: {e}")))?;
        eprintln!("wrote the history of {} runs to {path}", h.runs.len());
    }
    if format == "json" {
        let json = serde_json::to_string_pretty(&h)
            .map_err(|e| CliError::Failed(format!("cannot write JSON: {e}")))?;
        println!("{json}");
    } else {
        print!("{}", text::text(&h));
    }
    Ok(0)
}

/// For `dbmeter report`: when the report's runs are of one configuration
/// and enough of them for a change point, a section each for the history
/// of their throughput and p99 latency; else none.
pub(crate) fn report_sections(
    runs: &[dbmeter_store::RunSummary],
    options: &RunOptions,
    selection: &str,
) -> Vec<dbmeter_report::html::Section> {
    let mut out = Vec::new();
    for metric in [Metric::Tps, Metric::P99] {
        let opts = HistoryOptions {
            series: Series::Metric(metric),
            since: None,
            last: None,
            params: Params::default(),
        };
        let Ok(h) = history(runs, &mut |_| Ok(options.clone()), selection, &opts) else {
            return out;
        };
        if h.runs.len() < h.runs_needed() {
            return out;
        }
        match html::section(&h) {
            Ok(body) => out.push(dbmeter_report::html::Section {
                title: format!("History of {}", h.metric),
                html: body,
            }),
            Err(e) => out.push(dbmeter_report::html::Section {
                title: format!("History of {}", h.metric),
                html: format!("<p class=\"bad\">{}</p>", dbmeter_report::html::escape(&e)),
            }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_takes_dates_times_and_durations() {
        let now = humantime::parse_rfc3339("2026-11-27T12:00:00Z").unwrap();
        let at = |s: &str| humantime::format_rfc3339_seconds(since(s, now).unwrap()).to_string();
        assert_eq!(at("2026-11-01"), "2026-11-01T00:00:00Z");
        assert_eq!(at("2026-11-01T08:30:00Z"), "2026-11-01T08:30:00Z");
        assert_eq!(at("2026-11-01 08:30:00"), "2026-11-01T08:30:00Z");
        assert_eq!(at("7d"), "2026-11-20T12:00:00Z");
        assert_eq!(at("12h"), "2026-11-27T00:00:00Z");
        assert_eq!(at("100000years"), "1970-01-01T00:00:00Z");
        for bad in ["", "yesterday", "2026-13-01", "-3d"] {
            assert!(matches!(since(bad, now), Err(CliError::Usage(_))), "{bad}");
        }
    }
}
