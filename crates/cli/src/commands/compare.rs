//! `dbmeter compare`: a candidate against a baseline, from the results
//! store (computed by `dbmeter_store::compare`, laid out by
//! `dbmeter_report::compare`).

use super::results::{campaign_selection, filter_of, noise_pct, open_existing, parse_args};
use crate::CliError;
use crate::help::{Example, Page, flag, opt};
use dbmeter_report::compare as fmt;
use dbmeter_store::gate::{self, Check, FailOn, Outcome};
use dbmeter_store::{CompareMode, CompareOptions, Comparison, Filter, Metric, Store};

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
        "Each cell is also judged: the ratio of the medians with a bootstrap confidence \
              interval (--confidence), the two-sided Mann-Whitney test's p-value, and a \
              verdict: faster, slower (significant: p below 1 - the confidence, and the \
              interval excludes 100), no significant difference (the interval lies within \
              100 ± --min-effect), too noisy or too few repeats, with the repeats a side \
              that would likely settle it (docs/results.md).",
        "With --fail-on, compare is a regression gate for CI: it exits 3 when a cell's \
              change is significant and beyond a threshold in its direction.",
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
            "confidence",
            "PCT",
            "the confidence level of the intervals, and 100 - the significance level of \
             the test in %: from 50 to 99.9 (0.95 also reads as 95)",
        )
        .default("95"),
        opt(
            "min-effect",
            "PCT",
            "the smallest change that matters: a cell that is not significant and whose \
             interval lies within 100 ± PCT is 'no significant difference', else 'too noisy'",
        )
        .default("5"),
        opt(
            "fail-on",
            "METRIC:CHANGE%",
            "a gate threshold, e.g. tps:-3% or p99:+10% (repeatable): exit 3 when a cell's \
             METRIC changed significantly and beyond CHANGE in its direction; without a sign, \
             the metric's bad direction",
        ),
        flag(
            "fail-on-inconclusive",
            "with --fail-on: also fail the gate (exit 3) when a check cannot tell whether its \
             threshold was crossed: the cell was not judged, a side has too few repeats, or the \
             change is not significant but its interval reaches past the threshold",
        ),
        opt(
            "markdown",
            "FILE",
            "also write a Markdown summary for a pull-request comment: the gate's checks and \
             each metric's table with its statistics",
        ),
        opt(
            "junit",
            "FILE",
            "also write the gate's checks as JUnit XML (a test case per threshold and cell)",
        ),
        opt(
            "format",
            "text|markdown|csv|html|json",
            "csv: one row per cell with both medians, ranges, spreads, run ids, interval, \
             p-value and verdict; html: a page with the table; json: the table and the gate \
             (dbmeter.compare, docs/json-schema.md)",
        )
        .default("text"),
        flag(
            "why",
            "after the table, why each cell differs: per transaction, the medians of each \
             side's server counters (rows read, handler calls, buffer pool and block reads, \
             temporary tables, log and WAL), CPU of dbmeter and of the server, context \
             switches, disk I/O, and the wait events sampled during the runs, each list \
             ranked by relative change (text, markdown, html)",
        ),
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
            what: "Why the runs tagged after are slower: the counters that moved first",
            command: "compare --baseline tag:phase=before --candidate tag:phase=after --why",
        },
        Example {
            what: "Every variant of a campaign against one, in p99 latency, for a wiki page",
            command: "compare --baseline variant:mariadb-10.11 --metric=p99 --format=markdown",
        },
        Example {
            what: "A CI gate: fail on a significant drop of tps over 3% or rise of p99 over 10%",
            command: "compare --baseline tag:git=main --candidate tag:git=pr --fail-on tps:-3% \
                      --fail-on p99:+10% --markdown gate.md --junit gate.xml",
        },
    ],
    exit: "0 ok (and the gate passed), 1 failed (no store, no matching runs, bad selector), \
           2 usage error, 3 the gate failed (--fail-on; with --fail-on-inconclusive also a \
           check that could not be judged).",
    ..Page::new(
        "compare",
        "stored runs against a baseline, as a table of ratios",
    )
};

/// `out` with the `--why` lists of `table` after the table.
fn why(
    store: &mut dbmeter_store::Store,
    table: &dbmeter_store::Comparison,
    format: &str,
    out: String,
) -> Result<String, CliError> {
    let cells = store.why(table).map_err(|e| CliError::Failed(e.0))?;
    Ok(match format {
        "markdown" => out + &dbmeter_report::why::markdown(&cells),
        "html" => dbmeter_report::why::into_page(out, &cells),
        _ => out + &dbmeter_report::why::text(&cells),
    })
}

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
        Some("json") => "json",
        Some(f) => {
            return Err(CliError::Usage(format!(
                "--format={f}: `dbmeter compare` writes text, markdown, csv, html or json"
            )));
        }
    };
    let confidence = confidence(a.get("confidence"))?;
    let min_effect_pct = min_effect(a.get("min-effect"))?;
    let rules = a
        .all("fail-on")
        .map(FailOn::parse)
        .collect::<Result<Vec<_>, _>>()
        .map_err(CliError::Usage)?;
    let fail_inconclusive = a.flag("fail-on-inconclusive");
    if fail_inconclusive && rules.is_empty() {
        return Err(CliError::Usage(
            "--fail-on-inconclusive needs --fail-on, e.g. --fail-on tps:-3%".into(),
        ));
    }
    if a.flag("why") && matches!(format, "csv" | "json") {
        return Err(CliError::Usage(format!(
            "--why writes text, markdown or html, not {format}"
        )));
    }
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
        confidence,
        min_effect_pct,
    };
    let mut store = open_existing(Some(&store))?;
    let table = store
        .compare(&baseline, candidate.as_ref(), &opts)
        .map_err(|e| CliError::Failed(e.0))?;
    let gate = if rules.is_empty() {
        None
    } else {
        let (mut checks, more) = run_gate(
            &mut store,
            &baseline,
            candidate.as_ref(),
            &opts,
            &table,
            &rules,
        )?;
        if fail_inconclusive {
            gate::fail_inconclusive(&mut checks);
        }
        Some((checks, more))
    };
    let checks = gate.as_ref().map(|(checks, _)| checks.as_slice());
    let mut out = match format {
        "markdown" => fmt::markdown(&table),
        "csv" => fmt::csv(&table),
        "html" => fmt::html(&table),
        "json" => fmt::json(&table, checks),
        _ => fmt::text(&table),
    };
    if let (Some(checks), "text") = (checks, format) {
        out.push_str(&fmt::gate_text(checks));
    }
    if a.flag("why") {
        out = why(&mut store, &table, format, out)?;
    }
    if let Some(path) = a.get("markdown") {
        let mut tables = vec![&table];
        if let Some((_, more)) = &gate {
            tables.extend(more.iter());
        }
        write_file("--markdown", path, &fmt::summary_markdown(&tables, checks))?;
    }
    if let Some(path) = a.get("junit") {
        let Some(checks) = checks else {
            return Err(CliError::Usage(
                "--junit writes the gate's checks: give --fail-on too, e.g. --fail-on tps:-3%"
                    .into(),
            ));
        };
        write_file(
            "--junit",
            path,
            &fmt::gate_junit(checks, &table.baseline_label, &table.candidate_label),
        )?;
    }
    match a.get("output") {
        Some(path) => write_file("--output", path, &out)?,
        None => print!("{out}"),
    }
    if let Some(checks) = checks
        && checks.iter().any(|k| k.outcome == Outcome::Fail)
    {
        eprintln!("dbmeter: {} (exit code 3)", fmt::gate_summary(checks));
        return Ok(3);
    }
    Ok(0)
}

fn write_file(option: &str, path: &str, text: &str) -> Result<(), CliError> {
    std::fs::write(path, text)
        .map_err(|e| CliError::Failed(format!("cannot write {option} {path}: {e}")))
}

/// `--confidence`: a percentage from 50 to 99.9, or the same as a
/// fraction (0.95); returned as a fraction.
fn confidence(given: Option<&str>) -> Result<f64, CliError> {
    let Some(v) = given else { return Ok(0.95) };
    let x = v
        .trim()
        .trim_end_matches('%')
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
        .map(|x| if x < 1.0 { x * 100.0 } else { x })
        .filter(|x| (50.0..=99.9).contains(x))
        .ok_or_else(|| {
            CliError::Usage(format!(
                "--confidence={v}: expected a level in % from 50 to 99.9, e.g. 95"
            ))
        })?;
    Ok(x / 100.0)
}

/// `--min-effect`: a percentage from 0 to 100.
fn min_effect(given: Option<&str>) -> Result<f64, CliError> {
    let Some(v) = given else { return Ok(5.0) };
    v.trim()
        .trim_end_matches('%')
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && (0.0..=100.0).contains(x))
        .ok_or_else(|| {
            CliError::Usage(format!(
                "--min-effect={v}: expected a percentage from 0 to 100, e.g. 5"
            ))
        })
}

/// The gate's checks: each threshold against the table of its metric
/// (`table` when it is the same metric, else a comparison made for it,
/// returned too so that the Markdown summary can show it).
fn run_gate(
    store: &mut Store,
    baseline: &Filter,
    candidate: Option<&Filter>,
    opts: &CompareOptions,
    table: &Comparison,
    rules: &[FailOn],
) -> Result<(Vec<Check>, Vec<Comparison>), CliError> {
    let mut more: Vec<Comparison> = Vec::new();
    let mut checks = Vec::new();
    for rule in rules {
        let t = if rule.metric == table.options.metric {
            table
        } else if let Some(i) = more.iter().position(|t| t.options.metric == rule.metric) {
            &more[i]
        } else {
            let t = store
                .compare(
                    baseline,
                    candidate,
                    &CompareOptions {
                        metric: rule.metric,
                        mode: CompareMode::Ratio,
                        ..*opts
                    },
                )
                .map_err(|e| CliError::Failed(format!("--fail-on={}: {}", rule.text, e.0)))?;
            more.push(t);
            &more[more.len() - 1]
        };
        checks.extend(gate::check(rule, t));
    }
    Ok((checks, more))
}
