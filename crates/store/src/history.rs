//! The history of one configuration: its stored runs in time order, one
//! value each (tps, p99, a figure, ...), and where that series changed
//! (change points by E-Divisive with means, `dbmeter_stats::changepoint`),
//! as data for the text, JSON and HTML of `dbmeter results history`.
//!
//! A configuration is what a run measured, not when or how it was written
//! down: the workload, the thread count, the variant, the target (its URL,
//! password masked) and the run's options, except those that only shape
//! the output ([`OUTPUT_OPTIONS`]). An option that one run has and another
//! does not (a newer dbmeter added it with its default) does not make them
//! different. The server's version, the dbmeter version, the machine and
//! the tags are not part of it: a history is there to show what they did.

use crate::compare::{Metric, median};
use crate::{RunSummary, StoreError};
use dbmeter_stats::changepoint::{self, Params};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::time::SystemTime;

/// Run options that change what is written, not what is measured.
pub const OUTPUT_OPTIONS: &[&str] = &[
    "format",
    "output",
    "report-interval",
    "report-checkpoints",
    "percentile",
    "histogram",
    "ask-password",
    "verbosity",
];

/// What a history follows.
#[derive(Clone, Debug, PartialEq)]
pub enum Series {
    /// One of the run's numbers (tps, qps, p95, p99, avg).
    Metric(Metric),
    /// One of the benchmark's own figures, by name (tpch: `Q1`).
    Figure(String),
}

/// The metric names a history takes besides figures.
pub const SERIES_METRICS: [Metric; 5] = [
    Metric::Tps,
    Metric::Qps,
    Metric::P95,
    Metric::P99,
    Metric::Avg,
];

impl Series {
    /// `tps`, `qps`, `p95`, `p99`, `avg`, or the name of a figure that a
    /// run of `runs` has (case as stored, matched without case). The error
    /// says what the names are.
    pub fn parse(name: &str, runs: &[RunSummary]) -> Result<Series, String> {
        if let Some(m) = SERIES_METRICS
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(name))
        {
            return Ok(Series::Metric(m));
        }
        let figures = figure_names(runs);
        if let Some(f) = figures.iter().find(|f| f.eq_ignore_ascii_case(name)) {
            return Ok(Series::Figure(f.clone()));
        }
        let metrics: Vec<&str> = SERIES_METRICS.iter().map(|m| m.name()).collect();
        Err(if figures.is_empty() {
            format!("--metric={name}: expected one of {}", metrics.join(", "))
        } else {
            format!(
                "--metric={name}: expected one of {}, or a figure of the selected runs: {}",
                metrics.join(", "),
                figures.join(", ")
            )
        })
    }

    pub fn name(&self) -> &str {
        match self {
            Series::Metric(m) => m.name(),
            Series::Figure(f) => f,
        }
    }

    fn value(&self, r: &RunSummary) -> Result<f64, &'static str> {
        match self {
            Series::Metric(m) => m.value(r).ok_or("no value"),
            Series::Figure(name) => match r.figures.iter().find(|f| &f.name == name) {
                None => Err("no such figure"),
                Some(f) if f.timed_out() => Err("timed out"),
                Some(f) => f.value.ok_or("no value"),
            },
        }
    }
}

/// The figure names of these runs, in their first run's order.
fn figure_names(runs: &[RunSummary]) -> Vec<String> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for f in runs.iter().flat_map(|r| &r.figures) {
        if seen.insert(f.name.clone()) {
            out.push(f.name.clone());
        }
    }
    out
}

/// What to include and how to look for change points.
#[derive(Clone, Debug)]
pub struct HistoryOptions {
    pub series: Series,
    /// Only runs that started at or after this.
    pub since: Option<SystemTime>,
    /// Only the last N runs (after `since`).
    pub last: Option<usize>,
    pub params: Params,
}

/// The configuration the runs share.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Configuration {
    pub workload: String,
    pub threads: Option<u32>,
    pub variant: Option<String>,
    /// The target's URL, password masked.
    pub target: Option<String>,
    /// The tags every run of the history has.
    #[serde(serialize_with = "pairs_as_object")]
    pub tags: Vec<(String, String)>,
}

/// The change-point method and its parameters.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Method {
    pub name: &'static str,
    pub significance: f64,
    pub permutations: u32,
    pub seed: u64,
    pub min_segment: usize,
    pub alpha: f64,
}

/// A change point: the first run of a new segment.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Change {
    /// The run it is at.
    pub run: i64,
    /// Its place in the history, from 0.
    pub index: usize,
    /// The means of the segments before and from it.
    pub mean_before: f64,
    pub mean_after: f64,
    /// `(mean_after - mean_before) / mean_before x 100`; None when the
    /// mean before is 0.
    pub change_pct: Option<f64>,
    /// The permutation test's p-value.
    pub p_value: f64,
}

/// One run of the history.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HistoryRun {
    pub id: i64,
    /// When it started (when it was stored, for a run without a start).
    pub time: String,
    pub value: f64,
    /// Set when a new segment starts at this run.
    pub change_point: Option<Change>,
    pub server_version: Option<String>,
    pub dbmeter_version: Option<String>,
}

/// Runs between two change points (or an end).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Segment {
    pub first_run: i64,
    pub last_run: i64,
    pub runs: usize,
    pub mean: f64,
    pub median: f64,
}

/// The history of one configuration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct History {
    /// `tps`, `p99`, ..., or a figure's name.
    pub metric: String,
    /// In words, e.g. `transactions per second`.
    pub metric_words: String,
    /// `/s`, `ms`, or the figure's unit.
    pub unit: String,
    pub higher_is_better: bool,
    /// The selectors, as given.
    pub selection: String,
    pub configuration: Configuration,
    pub method: Method,
    /// Oldest first.
    pub runs: Vec<HistoryRun>,
    pub change_points: Vec<Change>,
    pub segments: Vec<Segment>,
    /// Selected runs left out: id and why (interrupted, failed, no value,
    /// timed out).
    pub left_out: Vec<(i64, String)>,
}

impl History {
    /// The fewest runs in which a change point can be significant
    /// ([`Params::fewest_values`]).
    pub fn runs_needed(&self) -> usize {
        Params {
            significance: self.method.significance,
            permutations: self.method.permutations,
            min_segment: self.method.min_segment,
            alpha: self.method.alpha,
            seed: self.method.seed,
        }
        .fewest_values()
    }
}

fn pairs_as_object<S: serde::Serializer>(
    pairs: &[(String, String)],
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut m = s.serialize_map(Some(pairs.len()))?;
    for (k, v) in pairs {
        m.serialize_entry(k, v)?;
    }
    m.end()
}

/// When a run started, else when it was stored.
fn time_of(r: &RunSummary) -> (Option<SystemTime>, String) {
    let text = r
        .started_at
        .clone()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| r.stored_at.clone());
    (humantime::parse_rfc3339_weak(&text).ok(), text)
}

/// Run options by run id.
pub type RunOptions = BTreeMap<i64, BTreeMap<String, String>>;

/// The history of `runs` (the selected runs), described as `selection`;
/// `options` gives the run options of the runs it keeps (asked once, for
/// those only: a store reads them from the documents). Errors when no run
/// is left,
/// or the runs left are of more than one configuration.
pub fn history(
    runs: &[RunSummary],
    options: &mut dyn FnMut(&[i64]) -> Result<RunOptions, StoreError>,
    selection: &str,
    opts: &HistoryOptions,
) -> Result<History, StoreError> {
    opts.params.check().map_err(StoreError::new)?;
    let mut timed: Vec<(Option<SystemTime>, String, &RunSummary)> = runs
        .iter()
        .map(|r| {
            let (t, text) = time_of(r);
            (t, text, r)
        })
        .collect();
    timed.sort_by(|a, b| a.0.cmp(&b.0).then(a.2.id.cmp(&b.2.id)));
    if let Some(since) = opts.since {
        timed.retain(|(t, _, _)| t.is_some_and(|t| t >= since));
    }
    // Runs left out, with their place in time order.
    let mut left_out: Vec<(usize, i64, String)> = Vec::new();
    let mut kept: Vec<(usize, String, &RunSummary, f64)> = Vec::new();
    for (place, (_, text, r)) in timed.into_iter().enumerate() {
        if !r.completed() {
            left_out.push((place, r.id, r.end_reason.clone()));
            continue;
        }
        match opts.series.value(r) {
            Ok(v) if v.is_finite() => kept.push((place, text, r, v)),
            Ok(_) => left_out.push((place, r.id, "no value".into())),
            Err(why) => left_out.push((place, r.id, why.into())),
        }
    }
    if let Some(n) = opts.last {
        kept.drain(..kept.len().saturating_sub(n));
        // Runs left out before the first of the last N are outside too.
        let from = kept.first().map_or(usize::MAX, |k| k.0);
        left_out.retain(|l| l.0 > from);
    }
    let mut left_out: Vec<(i64, String)> =
        left_out.into_iter().map(|(_, id, why)| (id, why)).collect();
    left_out.sort();
    if kept.is_empty() {
        let since = opts.since.map_or(String::new(), |t| {
            format!(
                " since {}",
                humantime::format_rfc3339_seconds(t.max(SystemTime::UNIX_EPOCH))
            )
        });
        let why = if left_out.is_empty() {
            String::new()
        } else {
            format!(
                " ({} left out: {})",
                left_out.len(),
                left_out
                    .iter()
                    .map(|(id, why)| format!("#{id} {why}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        return Err(StoreError::new(format!(
            "no completed run with a {} value among {selection}{since}{why}",
            opts.series.name()
        )));
    }
    let selected: Vec<&RunSummary> = kept.iter().map(|k| k.2).collect();
    let ids: Vec<i64> = selected.iter().map(|r| r.id).collect();
    let configuration = one_configuration(&selected, &options(&ids)?)?;

    let values: Vec<f64> = kept.iter().map(|k| k.3).collect();
    let found = changepoint::e_divisive(&values, &opts.params).map_err(StoreError::new)?;
    let mut bounds: Vec<usize> = vec![0];
    bounds.extend(found.iter().map(|c| c.index));
    bounds.push(values.len());
    let mean = |a: usize, b: usize| values[a..b].iter().sum::<f64>() / (b - a) as f64;
    let segments: Vec<Segment> = bounds
        .windows(2)
        .map(|w| {
            let mut sorted = values[w[0]..w[1]].to_vec();
            sorted.sort_by(f64::total_cmp);
            Segment {
                first_run: kept[w[0]].2.id,
                last_run: kept[w[1] - 1].2.id,
                runs: w[1] - w[0],
                mean: mean(w[0], w[1]),
                median: median(&sorted),
            }
        })
        .collect();
    let changes: Vec<Change> = found
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let (before, after) = (&segments[i], &segments[i + 1]);
            Change {
                run: kept[c.index].2.id,
                index: c.index,
                mean_before: before.mean,
                mean_after: after.mean,
                change_pct: (before.mean != 0.0)
                    .then(|| (after.mean - before.mean) / before.mean.abs() * 100.0),
                p_value: c.p_value,
            }
        })
        .collect();
    let history_runs = kept
        .iter()
        .enumerate()
        .map(|(i, (_, time, r, v))| HistoryRun {
            id: r.id,
            time: time.clone(),
            value: *v,
            change_point: changes.iter().find(|c| c.index == i).cloned(),
            server_version: r.server_version.clone(),
            dbmeter_version: r.dbmeter_version.clone(),
        })
        .collect();
    let sql = selected.iter().any(|r| r.queries.is_some_and(|q| q > 0));
    let (metric_words, unit, higher_is_better) = match &opts.series {
        Series::Metric(Metric::Tps) if !sql => ("events per second".to_string(), "/s", true),
        Series::Metric(m) => (
            m.describe().to_string(),
            if m.lower_is_better() { "ms" } else { "/s" },
            !m.lower_is_better(),
        ),
        Series::Figure(name) => (
            format!("the figure {name}"),
            selected
                .iter()
                .flat_map(|r| &r.figures)
                .find(|f| &f.name == name)
                .map_or("", |f| f.unit.as_str()),
            false,
        ),
    };
    let p = &opts.params;
    Ok(History {
        metric: opts.series.name().to_string(),
        metric_words,
        unit: unit.to_string(),
        higher_is_better,
        selection: selection.to_string(),
        configuration,
        method: Method {
            name: "e-divisive means",
            significance: p.significance,
            permutations: p.permutations,
            seed: p.seed,
            min_segment: p.min_segment,
            alpha: p.alpha,
        },
        runs: history_runs,
        change_points: changes,
        segments,
        left_out,
    })
}

/// The configuration `runs` share, or an error naming what differs.
fn one_configuration(
    runs: &[&RunSummary],
    options: &RunOptions,
) -> Result<Configuration, StoreError> {
    let key = |r: &RunSummary| {
        let mut k = format!("{}, {}", r.workload, threads_words(r.threads));
        if let Some(v) = &r.variant {
            k.push_str(&format!(", variant {v}"));
        }
        if let Some(t) = r.target_url.as_deref().filter(|t| !t.is_empty()) {
            k.push_str(&format!(", on {t}"));
        }
        k
    };
    let mut groups: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for r in runs {
        groups.entry(key(r)).or_default().push(r.id);
    }
    if groups.len() > 1 {
        let hint = narrowing_hint(runs);
        return Err(StoreError::new(format!(
            "the selected runs are of {} configurations, a history follows one: {}; narrow the selection{hint}",
            groups.len(),
            groups
                .iter()
                .map(|(k, ids)| format!("{k} ({})", ids_words(ids)))
                .collect::<Vec<_>>()
                .join("; ")
        )));
    }
    // Options: a name whose values differ between runs that both have it.
    let mut values: BTreeMap<&str, BTreeMap<&str, Vec<i64>>> = BTreeMap::new();
    for r in runs {
        for (k, v) in options.get(&r.id).into_iter().flatten() {
            if OUTPUT_OPTIONS.contains(&k.as_str()) {
                continue;
            }
            values
                .entry(k)
                .or_default()
                .entry(v)
                .or_default()
                .push(r.id);
        }
    }
    if let Some((name, by_value)) = values.iter().find(|(_, v)| v.len() > 1) {
        return Err(StoreError::new(format!(
            "the selected runs are not of one configuration, a history follows one: --{name} is {}; \
             narrow the selection (run:ID,..., or a tag that only one configuration's runs have)",
            by_value
                .iter()
                .map(|(v, ids)| format!(
                    "{} in {}",
                    if v.is_empty() { "''" } else { v },
                    ids_words(ids)
                ))
                .collect::<Vec<_>>()
                .join(" and ")
        )));
    }
    let first = runs[0];
    let tags = first
        .tags
        .iter()
        .filter(|(k, v)| runs.iter().all(|r| r.tag(k) == Some(v.as_str())))
        .cloned()
        .collect();
    Ok(Configuration {
        workload: first.workload.clone(),
        threads: first.threads,
        variant: first.variant.clone(),
        target: first.target_url.clone().filter(|t| !t.is_empty()),
        tags,
    })
}

fn threads_words(t: Option<u32>) -> String {
    match t {
        Some(1) => "1 thread".into(),
        Some(n) => format!("{n} threads"),
        None => "no thread count".into(),
    }
}

/// A selector that would narrow these runs, as ", e.g. with threads:N".
fn narrowing_hint(runs: &[&RunSummary]) -> String {
    let workloads: BTreeSet<&str> = runs.iter().map(|r| r.workload.as_str()).collect();
    if workloads.len() > 1 {
        return format!(
            ", e.g. with workload:{}",
            workloads.first().copied().unwrap_or("NAME")
        );
    }
    let threads: BTreeSet<u32> = runs.iter().filter_map(|r| r.threads).collect();
    if threads.len() > 1 {
        return format!(
            ", e.g. with threads:{}",
            threads.first().copied().unwrap_or(1)
        );
    }
    let variants: BTreeSet<&str> = runs.iter().filter_map(|r| r.variant.as_deref()).collect();
    if let Some(v) = variants.first().filter(|_| variants.len() > 1) {
        return format!(", e.g. with variant:{v}");
    }
    " (run:ID,..., or a tag that only one configuration's runs have)".into()
}

/// Run ids as `#1-#6, #9` (consecutive ids as a range).
fn ids_words(ids: &[i64]) -> String {
    let mut sorted = ids.to_vec();
    sorted.sort_unstable();
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i;
        while j + 1 < sorted.len() && sorted[j + 1] == sorted[j] + 1 {
            j += 1;
        }
        parts.push(if j > i + 1 {
            format!("#{}-#{}", sorted[i], sorted[j])
        } else if j == i + 1 {
            format!("#{}, #{}", sorted[i], sorted[j])
        } else {
            format!("#{}", sorted[i])
        });
        i = j + 1;
    }
    let n = sorted.len();
    format!(
        "{n} run{}: {}",
        if n == 1 { "" } else { "s" },
        parts.join(", ")
    )
}

impl crate::Store {
    /// The run options (the document's `options`) of these runs, by run
    /// id.
    pub fn run_options(&mut self, ids: &[i64]) -> Result<RunOptions, StoreError> {
        Ok(self
            .documents(&crate::Filter::ids(ids))?
            .iter()
            .map(|r| (r.summary.id, options_of(&r.document)))
            .collect())
    }
}

/// The run options of stored documents, read without the rest.
pub(crate) fn options_of(document: &str) -> BTreeMap<String, String> {
    #[derive(serde::Deserialize)]
    struct Options {
        #[serde(default)]
        options: BTreeMap<String, serde_json::Value>,
    }
    serde_json::from_str::<Options>(document)
        .map(|o| {
            o.options
                .into_iter()
                .map(|(k, v)| {
                    let v = match v {
                        serde_json::Value::String(s) => s,
                        other => other.to_string(),
                    };
                    (k, v)
                })
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn given(o: &RunOptions) -> impl FnMut(&[i64]) -> Result<RunOptions, StoreError> + '_ {
        move |_| Ok(o.clone())
    }

    fn run(id: i64, tps: f64) -> RunSummary {
        RunSummary {
            id,
            stored_at: format!("2026-11-{:02}T03:00:00Z", id),
            started_at: Some(format!("2026-11-{:02}T02:00:00Z", id)),
            workload: "oltp_point_select".into(),
            threads: Some(4),
            end_reason: "time_limit".into(),
            events_per_s: Some(tps),
            latency_p99_ms: Some(1000.0 / tps),
            queries: Some(100),
            target_url: Some("sqlite:/tmp/x.db".into()),
            tags: vec![("job".into(), "nightly".into())],
            ..RunSummary::default()
        }
    }

    fn nightly() -> Vec<RunSummary> {
        let noise = [
            0.01, -0.02, 0.015, 0.0, -0.01, 0.02, -0.015, 0.01, 0.0, -0.02, 0.01, 0.005,
        ];
        (1..=12)
            .map(|i| {
                let level = if i < 7 { 1000.0 } else { 700.0 };
                run(i, level * (1.0 + noise[i as usize - 1]))
            })
            .collect()
    }

    fn opts(series: Series) -> HistoryOptions {
        HistoryOptions {
            series,
            since: None,
            last: None,
            params: Params::default(),
        }
    }

    #[test]
    fn a_drop_at_run_7_is_its_change_point() {
        let runs = nightly();
        let h = history(
            &runs,
            &mut given(&BTreeMap::new()),
            "tag:job=nightly",
            &opts(Series::Metric(Metric::Tps)),
        )
        .unwrap();
        assert_eq!(h.runs.len(), 12);
        assert_eq!(h.change_points.len(), 1, "{:?}", h.change_points);
        let c = &h.change_points[0];
        assert_eq!((c.run, c.index), (7, 6));
        assert!(
            c.change_pct.is_some_and(|p| (-32.0..-28.0).contains(&p)),
            "{c:?}"
        );
        assert_eq!(h.runs[6].change_point.as_ref(), Some(c));
        assert_eq!(h.segments.len(), 2);
        assert_eq!(
            (
                h.segments[1].first_run,
                h.segments[1].last_run,
                h.segments[1].runs
            ),
            (7, 12, 6)
        );
        assert_eq!(
            h.configuration.tags,
            vec![("job".to_string(), "nightly".to_string())]
        );
        assert_eq!(h.metric_words, "transactions per second");
        // The same in p99: up, lower is better.
        let h = history(
            &runs,
            &mut given(&BTreeMap::new()),
            "x",
            &opts(Series::Metric(Metric::P99)),
        )
        .unwrap();
        assert_eq!(
            h.change_points.iter().map(|c| c.run).collect::<Vec<_>>(),
            vec![7]
        );
        assert!(h.change_points[0].change_pct.unwrap() > 35.0);
        assert!(!h.higher_is_better);
    }

    #[test]
    fn since_last_and_runs_left_out() {
        let mut runs = nightly();
        runs[2].end_reason = "interrupted".into();
        let mut o = opts(Series::Metric(Metric::Tps));
        let h = history(&runs, &mut given(&BTreeMap::new()), "x", &o).unwrap();
        assert_eq!(h.runs.len(), 11);
        assert_eq!(h.left_out, vec![(3, "interrupted".to_string())]);
        o.last = Some(5);
        let h = history(&runs, &mut given(&BTreeMap::new()), "x", &o).unwrap();
        assert_eq!(
            h.runs.iter().map(|r| r.id).collect::<Vec<_>>(),
            vec![8, 9, 10, 11, 12]
        );
        assert!(h.left_out.is_empty(), "{:?}", h.left_out);
        assert!(h.change_points.is_empty());
        o.last = None;
        o.since = humantime::parse_rfc3339_weak("2026-11-10T00:00:00Z").ok();
        let h = history(&runs, &mut given(&BTreeMap::new()), "x", &o).unwrap();
        assert_eq!(
            h.runs.iter().map(|r| r.id).collect::<Vec<_>>(),
            vec![10, 11, 12]
        );
        o.since = humantime::parse_rfc3339_weak("2027-01-01T00:00:00Z").ok();
        let e = history(&runs, &mut given(&BTreeMap::new()), "x", &o)
            .unwrap_err()
            .0;
        assert!(
            e.contains("no completed run with a tps value among x since 2027-01-01T00:00:00Z"),
            "{e}"
        );
    }

    #[test]
    fn several_configurations_are_refused_with_what_differs() {
        let mut runs = nightly();
        runs[11].threads = Some(8);
        let e = history(
            &runs,
            &mut given(&BTreeMap::new()),
            "x",
            &opts(Series::Metric(Metric::Tps)),
        )
        .unwrap_err()
        .0;
        assert!(e.contains("2 configurations"), "{e}");
        assert!(
            e.contains("oltp_point_select, 4 threads, on sqlite:/tmp/x.db (11 runs: #1-#11)"),
            "{e}"
        );
        assert!(e.contains("threads:4"), "{e}");

        let runs = nightly();
        let mut options: BTreeMap<i64, BTreeMap<String, String>> = BTreeMap::new();
        for r in &runs {
            let rate = if r.id < 7 { "100" } else { "200" };
            let mut o = BTreeMap::from([
                ("rate".to_string(), rate.to_string()),
                ("report-interval".to_string(), r.id.to_string()),
            ]);
            if r.id == 12 {
                // A newer dbmeter's option: not a difference.
                o.insert("new-option".into(), "x".into());
            }
            options.insert(r.id, o);
        }
        let e = history(
            &runs,
            &mut given(&options),
            "x",
            &opts(Series::Metric(Metric::Tps)),
        )
        .unwrap_err()
        .0;
        assert!(
            e.contains("--rate is 100 in 6 runs: #1-#6 and 200 in 6 runs: #7-#12"),
            "{e}"
        );
        for o in options.values_mut() {
            o.insert("rate".into(), "100".into());
        }
        assert!(
            history(
                &runs,
                &mut given(&options),
                "x",
                &opts(Series::Metric(Metric::Tps))
            )
            .is_ok()
        );
    }

    #[test]
    fn figures_by_name() {
        let mut runs = nightly();
        for r in &mut runs {
            r.figures = vec![crate::FigureValue {
                name: "Q1".into(),
                value: r.events_per_s.map(|v| 1e6 / v),
                unit: "ms".into(),
                status: "ok".into(),
            }];
        }
        runs[4].figures[0].status = "timeout".into();
        runs[4].figures[0].value = None;
        let s = Series::parse("q1", &runs).unwrap();
        assert_eq!(s, Series::Figure("Q1".into()));
        let h = history(&runs, &mut given(&BTreeMap::new()), "x", &opts(s)).unwrap();
        assert_eq!(h.runs.len(), 11);
        assert_eq!(h.left_out, vec![(5, "timed out".to_string())]);
        assert_eq!(h.unit, "ms");
        let e = Series::parse("q9", &runs).unwrap_err();
        assert_eq!(
            e,
            "--metric=q9: expected one of tps, qps, p95, p99, avg, or a figure of the selected runs: Q1"
        );
        assert_eq!(
            Series::parse("P99", &runs).unwrap(),
            Series::Metric(Metric::P99)
        );
    }

    #[test]
    fn ids_as_ranges() {
        assert_eq!(ids_words(&[3, 1, 2, 5, 7, 8]), "6 runs: #1-#3, #5, #7, #8");
        assert_eq!(ids_words(&[4]), "1 run: #4");
    }

    #[test]
    fn options_read_from_a_document() {
        let o =
            options_of(r#"{"schema":"dbmeter.run","options":{"rate":"10","threads":4},"x":[1]}"#);
        assert_eq!(o.get("rate").map(String::as_str), Some("10"));
        assert_eq!(o.get("threads").map(String::as_str), Some("4"));
        assert!(options_of("not json").is_empty());
    }
}
