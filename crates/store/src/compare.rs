//! Comparing a candidate with a baseline: the tables of the MariaDB
//! benchmark pages ("candidate / baseline x 100" per workload and client
//! count), as data for the text, Markdown, CSV and HTML formatters.
//!
//! For each workload (and candidate variant, when the candidate holds
//! several) and each thread count, each side's value is the median over its
//! completed runs (its repeats) of the chosen metric. The cell is
//! `candidate / baseline x 100`, or with [`CompareMode::Diff`] the signed
//! difference in percent, `(candidate - baseline) / baseline x 100`. A cell
//! is marked noisy when either side's spread, `(max - min) / median x 100`,
//! is above the noise threshold. Latency metrics are compared the same way
//! (a value above 100 then means the candidate is slower).
//!
//! Each cell also carries its statistics ([`CellStats`], from
//! `dbmeter_stats::inference::compare_samples`): the ratio of the medians
//! with a bootstrap confidence interval, the Mann-Whitney test's p-value,
//! and a verdict in words: faster, slower, no significant difference, too
//! noisy or too few repeats (with the repeats per side that would settle
//! it).

use crate::{Filter, RunSummary, Store, StoreError};
use dbmeter_stats::inference::{self, Change, Judging};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// What is compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    /// Transactions (events) per second.
    Tps,
    /// Queries per second.
    Qps,
    /// 95th percentile latency.
    P95,
    /// 99th percentile latency.
    P99,
    /// Average latency.
    Avg,
    /// The benchmark's own figures, a row each (TPC-H: each query's time).
    Figures,
    /// Figures when the baseline's runs have them, else tps.
    Auto,
}

impl Metric {
    pub const ALL: [Metric; 7] = [
        Metric::Auto,
        Metric::Tps,
        Metric::Qps,
        Metric::P95,
        Metric::P99,
        Metric::Avg,
        Metric::Figures,
    ];

    /// `tps`, `qps`, `p95`, `p99` or `avg`.
    pub fn parse(s: &str) -> Option<Metric> {
        Metric::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(s))
    }

    pub fn name(self) -> &'static str {
        match self {
            Metric::Tps => "tps",
            Metric::Qps => "qps",
            Metric::P95 => "p95",
            Metric::P99 => "p99",
            Metric::Avg => "avg",
            Metric::Figures => "figures",
            Metric::Auto => "auto",
        }
    }

    /// In words, e.g. `transactions per second`.
    pub fn describe(self) -> &'static str {
        match self {
            Metric::Tps => "transactions per second",
            Metric::Qps => "queries per second",
            Metric::P95 => "95th percentile latency",
            Metric::P99 => "99th percentile latency",
            Metric::Avg => "average latency",
            Metric::Figures => "the benchmark's own figures (e.g. query times)",
            Metric::Auto => "figures, or transactions per second",
        }
    }

    /// True for latencies.
    pub fn lower_is_better(self) -> bool {
        matches!(
            self,
            Metric::P95 | Metric::P99 | Metric::Avg | Metric::Figures
        )
    }

    /// The run's value of this metric (ms for latencies), if stored.
    pub fn value(self, r: &RunSummary) -> Option<f64> {
        match self {
            Metric::Tps => r.events_per_s,
            Metric::Qps => r.queries_per_s,
            Metric::P95 => r.latency_p95_ms,
            Metric::P99 => r.latency_p99_ms,
            Metric::Avg => r.latency_avg_ms,
            Metric::Figures => r.figure.as_ref().and_then(|f| f.value),
            Metric::Auto => None,
        }
    }
}

/// How a cell relates the two medians.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CompareMode {
    /// `candidate / baseline x 100`.
    #[default]
    Ratio,
    /// `(candidate - baseline) / baseline x 100`, signed.
    Diff,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct CompareOptions {
    pub metric: Metric,
    pub mode: CompareMode,
    /// A cell is noisy when a side's spread is above this, in percent.
    pub noise_pct: f64,
    /// The confidence level of the cells' intervals, and 1 - the test's
    /// significance level (0.95).
    pub confidence: f64,
    /// The smallest change that matters, in percent (5): a cell whose
    /// interval lies within 100 ± this is "no significant difference".
    pub min_effect_pct: f64,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            metric: Metric::Tps,
            mode: CompareMode::Ratio,
            noise_pct: 5.0,
            confidence: 0.95,
            min_effect_pct: 5.0,
        }
    }
}

impl CompareOptions {
    /// How the cells are judged: the level, the smallest change, the
    /// bootstrap's default resamples and seed.
    pub fn judging(&self) -> Judging {
        Judging {
            level: self.confidence,
            min_effect: self.min_effect_pct / 100.0,
            ..Judging::default()
        }
    }
}

/// A cell's verdict, in the metric's terms (for latencies, lower is
/// faster).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// A significant change for the better.
    Faster,
    /// A significant change for the worse.
    Slower,
    /// Not significant, and the interval lies within the smallest change
    /// that matters.
    NoSignificantDifference,
    /// Not significant, but a change that matters cannot be ruled out.
    TooNoisy,
    /// A side has fewer repeats than the test needs to ever be significant.
    TooFewRepeats,
}

impl Verdict {
    /// The verdict in words: `faster`, `no significant difference`, ...
    pub fn words(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::NoSignificantDifference => "no significant difference",
            Verdict::TooNoisy => "too noisy",
            Verdict::TooFewRepeats => "too few repeats",
        }
    }
}

/// A cell's statistics over its repeats.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct CellStats {
    /// median(candidate) / median(baseline), and the bounds of its
    /// bootstrap confidence interval at `confidence`.
    pub ratio: f64,
    pub ratio_low: f64,
    pub ratio_high: f64,
    pub confidence: f64,
    /// The two-sided Mann-Whitney test's p-value, and whether it is exact.
    pub p_value: f64,
    pub p_exact: bool,
    pub verdict: Verdict,
    /// Repeats per side that would likely settle a cell that is too noisy
    /// or has too few repeats.
    pub repeats_needed: Option<usize>,
}

impl CellStats {
    /// The statistics of a cell's two sides; None when they cannot be
    /// computed (a baseline value of 0, no values).
    pub fn of(
        baseline: &[f64],
        candidate: &[f64],
        metric: Metric,
        opts: &CompareOptions,
    ) -> Option<CellStats> {
        let r = inference::compare_samples(baseline, candidate, &opts.judging())?;
        let better = |higher: bool| {
            if higher != metric.lower_is_better() {
                Verdict::Faster
            } else {
                Verdict::Slower
            }
        };
        let verdict = match r.change {
            Change::Higher => better(true),
            Change::Lower => better(false),
            Change::NoDifference => Verdict::NoSignificantDifference,
            Change::TooNoisy => Verdict::TooNoisy,
            Change::TooFewRepeats => Verdict::TooFewRepeats,
        };
        Some(CellStats {
            ratio: r.ratio.estimate,
            ratio_low: r.ratio.low,
            ratio_high: r.ratio.high,
            confidence: r.ratio.level,
            p_value: r.test.p_value,
            p_exact: r.test.exact,
            verdict,
            repeats_needed: r.repeats_needed,
        })
    }

    /// True when the change is significant.
    pub fn significant(&self) -> bool {
        matches!(self.verdict, Verdict::Faster | Verdict::Slower)
    }
}

/// One side of a cell: the runs (repeats) and their values.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Side {
    /// Run ids, in the order of `values`.
    pub runs: Vec<i64>,
    pub values: Vec<f64>,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// `(max - min) / median x 100`; 0 for one run; infinite when the
    /// median is 0 but the values differ.
    pub spread_pct: f64,
    /// Runs whose figure timed out (they have no value).
    #[serde(default)]
    pub timeouts: usize,
}

impl Side {
    /// The statistics of `values` (not empty) of runs `runs`.
    pub fn new(runs: Vec<i64>, values: Vec<f64>) -> Side {
        let mut sorted = values.clone();
        sorted.sort_by(f64::total_cmp);
        let min = sorted.first().copied().unwrap_or(0.0);
        let max = sorted.last().copied().unwrap_or(0.0);
        let median = median(&sorted);
        let spread_pct = if max == min {
            0.0
        } else if median == 0.0 {
            f64::INFINITY
        } else {
            (max - min) / median.abs() * 100.0
        };
        Side {
            runs,
            values,
            median,
            min,
            max,
            spread_pct,
            timeouts: 0,
        }
    }
}

/// The median of sorted values: the middle one, or the mean of the two
/// middle ones; 0 for none.
pub fn median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    match n {
        0 => 0.0,
        _ if n % 2 == 1 => sorted[n / 2],
        _ => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ComparisonCell {
    pub baseline: Side,
    pub candidate: Side,
    /// The ratio x 100 or the difference in %; None when the baseline's
    /// median is 0.
    pub value: Option<f64>,
    /// Either side's spread is above the noise threshold.
    pub noisy: bool,
    /// A run of either side timed out: the cell has no value (as in
    /// DBT3, one timeout makes the result a timeout).
    #[serde(default)]
    pub timeout: bool,
    /// The interval, test and verdict; None for a timeout or a baseline
    /// value of 0.
    pub stats: Option<CellStats>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ComparisonRow {
    pub workload: String,
    /// The candidate variant of this row, when the table has a row per
    /// variant ([`Comparison::by_variant`]); None in other tables and for
    /// runs stored without a variant.
    pub variant: Option<String>,
    /// One per [`Comparison::threads`]; None where either side has no run.
    pub cells: Vec<Option<ComparisonCell>>,
}

/// A comparison table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    pub options: CompareOptions,
    /// What the baseline is, e.g. `variant:A`.
    pub baseline_label: String,
    /// What the candidate is.
    pub candidate_label: String,
    /// The baseline's variant, when its runs have one.
    pub baseline_variant: Option<String>,
    /// The columns: thread counts, ascending.
    pub threads: Vec<u32>,
    /// Rows by workload, then variant.
    pub rows: Vec<ComparisonRow>,
    /// True when the candidate holds several variants (a row per variant).
    pub by_variant: bool,
    /// Completed runs used on each side.
    pub baseline_runs: usize,
    pub candidate_runs: usize,
    /// Runs of either side left out of the medians because they did not
    /// complete (failed or interrupted): id and end reason.
    #[serde(default)]
    pub left_out: Vec<(i64, String)>,
    /// Whether any compared run issued SQL: without, its events are not
    /// transactions (cpu, fileio).
    pub sql: bool,
}

impl Comparison {
    /// The metric in words, e.g. `transactions per second`, or `events
    /// per second` for runs that issued no SQL.
    pub fn metric_words(&self) -> &'static str {
        match self.options.metric {
            Metric::Tps if !self.sql => "events per second",
            m => m.describe(),
        }
    }

    /// How many cells have a single run on a side (where the spread, and
    /// so the noise, cannot be judged), and how many cells there are.
    pub fn single_run_cells(&self) -> (usize, usize) {
        let cells: Vec<&ComparisonCell> = self
            .rows
            .iter()
            .flat_map(|r| r.cells.iter().flatten())
            .collect();
        let single = cells
            .iter()
            .filter(|c| c.baseline.runs.len() < 2 || c.candidate.runs.len() < 2)
            .count();
        (single, cells.len())
    }

    /// True when some cell is noisy.
    pub fn any_noisy(&self) -> bool {
        self.rows
            .iter()
            .flat_map(|r| r.cells.iter().flatten())
            .any(|c| c.noisy)
    }
}

/// The runs of either side that did not complete, once each, by id.
fn not_completed(baseline: &[RunSummary], candidate: &[RunSummary]) -> Vec<(i64, String)> {
    let mut m: BTreeMap<i64, String> = BTreeMap::new();
    for r in baseline.iter().chain(candidate) {
        if !r.completed() {
            m.insert(r.id, r.end_reason.clone());
        }
    }
    m.into_iter().collect()
}

/// Runs that count: completed, with a thread count and a value (or a
/// figure that timed out).
fn usable(runs: &[RunSummary], metric: Metric) -> Vec<&RunSummary> {
    runs.iter()
        .filter(|r| {
            r.completed()
                && r.threads.is_some()
                && (metric.value(r).is_some() || r.figure.as_ref().is_some_and(|f| f.timed_out()))
        })
        .collect()
}

/// Metric::Auto for these baseline runs: figures when they all have some.
fn resolve(metric: Metric, baseline: &[RunSummary]) -> Metric {
    match metric {
        Metric::Auto => {
            let done: Vec<&RunSummary> = baseline.iter().filter(|r| r.completed()).collect();
            if !done.is_empty() && done.iter().all(|r| !r.figures.is_empty()) {
                Metric::Figures
            } else {
                Metric::Tps
            }
        }
        m => m,
    }
}

/// A row per run and figure, the figure named after the workload
/// (`tpch Q1`); and each label's place in its run's figure order.
fn by_figure(runs: &[RunSummary], order: &mut BTreeMap<String, usize>) -> Vec<RunSummary> {
    let mut out = Vec::new();
    for r in runs {
        for (i, f) in r.figures.iter().enumerate() {
            let label = format!("{} {}", r.workload, f.name);
            order.entry(label.clone()).or_insert(i);
            out.push(RunSummary {
                workload: label,
                figures: Vec::new(),
                figure: Some(f.clone()),
                ..r.clone()
            });
        }
    }
    out
}

type Key = (String, Option<String>, u32);

fn group<'a>(runs: &[&'a RunSummary], by_variant: bool) -> BTreeMap<Key, Vec<&'a RunSummary>> {
    let mut m: BTreeMap<Key, Vec<&RunSummary>> = BTreeMap::new();
    for r in runs {
        let variant = if by_variant { r.variant.clone() } else { None };
        m.entry((r.workload.clone(), variant, r.threads.unwrap_or(0)))
            .or_default()
            .push(r);
    }
    m
}

fn side(runs: &[&RunSummary], metric: Metric) -> Side {
    let mut s = Side::new(
        runs.iter().map(|r| r.id).collect(),
        runs.iter().filter_map(|r| metric.value(r)).collect(),
    );
    s.timeouts = runs
        .iter()
        .filter(|r| r.figure.as_ref().is_some_and(|f| f.timed_out()))
        .count();
    s
}

/// Compares `candidate` runs with `baseline` runs. Only completed runs with
/// a value of the metric count; candidate runs that are also in the
/// baseline are left out. Errors when the baseline holds several variants,
/// or when no workload and thread count has runs on both sides.
pub fn compare(
    baseline: &[RunSummary],
    candidate: &[RunSummary],
    opts: &CompareOptions,
) -> Result<Comparison, StoreError> {
    let metric = resolve(opts.metric, baseline);
    let opts = &CompareOptions { metric, ..*opts };
    let mut order = BTreeMap::new();
    let (expanded_base, expanded_cand);
    let (baseline, candidate) = if metric == Metric::Figures {
        expanded_base = by_figure(baseline, &mut order);
        expanded_cand = by_figure(candidate, &mut order);
        (&expanded_base[..], &expanded_cand[..])
    } else {
        (baseline, candidate)
    };
    let base = usable(baseline, metric);
    if base.is_empty() {
        return Err(StoreError::new(format!(
            "the baseline has no completed run with a {} value",
            metric.name()
        )));
    }
    let base_variants: BTreeSet<Option<String>> = base.iter().map(|r| r.variant.clone()).collect();
    if base_variants.len() > 1 {
        let names: Vec<String> = base_variants
            .iter()
            .map(|v| v.clone().unwrap_or_else(|| "(none)".into()))
            .collect();
        return Err(StoreError::new(format!(
            "the baseline holds runs of several variants ({}); narrow it, e.g. with variant:{}",
            names.join(", "),
            names
                .iter()
                .find(|n| *n != "(none)")
                .map_or("NAME", String::as_str)
        )));
    }
    let base_ids: BTreeSet<i64> = base.iter().map(|r| r.id).collect();
    let cand: Vec<&RunSummary> = usable(candidate, metric)
        .into_iter()
        .filter(|r| !base_ids.contains(&r.id))
        .collect();
    if cand.is_empty() {
        return Err(StoreError::new(format!(
            "the candidate has no completed run with a {} value outside the baseline",
            metric.name()
        )));
    }
    let cand_variants: BTreeSet<Option<String>> = cand.iter().map(|r| r.variant.clone()).collect();
    let by_variant = cand_variants.len() > 1;
    let base_groups = group(&base, false);
    let cand_groups = group(&cand, by_variant);
    let base_workloads: BTreeSet<&str> = base.iter().map(|r| r.workload.as_str()).collect();
    let threads: Vec<u32> = cand_groups
        .keys()
        .filter(|(w, _, _)| base_workloads.contains(w.as_str()))
        .map(|(_, _, t)| *t)
        .collect::<BTreeSet<u32>>()
        .into_iter()
        .collect();
    let row_keys: BTreeSet<(String, Option<String>)> = cand_groups
        .keys()
        .filter(|(w, _, _)| base_workloads.contains(w.as_str()))
        .map(|(w, v, _)| (w.clone(), v.clone()))
        .collect();
    let mut rows = Vec::new();
    let mut filled = 0;
    for (workload, variant) in row_keys {
        let cells = threads
            .iter()
            .map(|&t| {
                let b = base_groups.get(&(workload.clone(), None, t))?;
                let c = cand_groups.get(&(workload.clone(), variant.clone(), t))?;
                let (b, c) = (side(b, metric), side(c, metric));
                let timeout = b.timeouts > 0 || c.timeouts > 0;
                let value = (b.median != 0.0 && !timeout).then(|| match opts.mode {
                    CompareMode::Ratio => c.median / b.median * 100.0,
                    CompareMode::Diff => (c.median - b.median) / b.median * 100.0,
                });
                let noisy = b.spread_pct > opts.noise_pct || c.spread_pct > opts.noise_pct;
                let stats = if timeout {
                    None
                } else {
                    CellStats::of(&b.values, &c.values, metric, opts)
                };
                Some(ComparisonCell {
                    baseline: b,
                    candidate: c,
                    value,
                    noisy: noisy && !timeout,
                    timeout,
                    stats,
                })
            })
            .collect::<Vec<_>>();
        filled += cells.iter().flatten().count();
        rows.push(ComparisonRow {
            workload,
            variant,
            cells,
        });
    }
    // Figures keep their order (Q2 before Q10).
    rows.sort_by_key(|r| order.get(&r.workload).copied().unwrap_or(0));
    if filled == 0 {
        return Err(StoreError::new(
            "no workload and thread count has completed runs in both the baseline and the candidate",
        ));
    }
    Ok(Comparison {
        options: *opts,
        baseline_label: String::new(),
        candidate_label: String::new(),
        baseline_variant: base_variants.into_iter().next().flatten(),
        threads,
        rows,
        by_variant,
        // Runs, not rows: with figures a run is a row per figure.
        baseline_runs: base.iter().map(|r| r.id).collect::<BTreeSet<_>>().len(),
        candidate_runs: cand.iter().map(|r| r.id).collect::<BTreeSet<_>>().len(),
        left_out: not_completed(baseline, candidate),
        sql: base
            .iter()
            .chain(&cand)
            .any(|r| r.queries.is_some_and(|q| q > 0)),
    })
}

impl Store {
    /// Compares the runs `candidate` selects with those `baseline` selects
    /// (see [`compare`]). Without a candidate selection, the candidate is
    /// every other stored run of the baseline's campaign(s); an error when
    /// the baseline's runs belong to no campaign.
    pub fn compare(
        &mut self,
        baseline: &Filter,
        candidate: Option<&Filter>,
        opts: &CompareOptions,
    ) -> Result<Comparison, StoreError> {
        let base = self.runs(baseline)?;
        if base.is_empty() {
            return Err(StoreError::new(format!(
                "no stored run matches the baseline ({baseline}) in '{}'",
                self.location()
            )));
        }
        let (cand, candidate_label) = match candidate {
            Some(f) => {
                let runs = self.runs(f)?;
                if runs.is_empty() {
                    return Err(StoreError::new(format!(
                        "no stored run matches the candidate ({f}) in '{}'",
                        self.location()
                    )));
                }
                (runs, f.to_string())
            }
            None => {
                let campaigns: BTreeSet<String> =
                    base.iter().filter_map(|r| r.campaign.clone()).collect();
                if campaigns.is_empty() {
                    return Err(StoreError::new(
                        "the baseline's runs belong to no campaign, so there is no default candidate: give --candidate SELECTORS",
                    ));
                }
                let base_ids: BTreeSet<i64> = base.iter().map(|r| r.id).collect();
                let mut runs = Vec::new();
                for c in &campaigns {
                    let f = Filter {
                        selectors: vec![crate::Selector::Campaign(c.clone())],
                    };
                    runs.extend(
                        self.runs(&f)?
                            .into_iter()
                            .filter(|r| !base_ids.contains(&r.id)),
                    );
                }
                let names: Vec<String> = campaigns.into_iter().collect();
                (
                    runs,
                    format!("the other runs of campaign {}", names.join(", ")),
                )
            }
        };
        let mut table = compare(&base, &cand, opts)?;
        table.baseline_label = baseline.to_string();
        table.candidate_label = candidate_label;
        Ok(table)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(id: i64, workload: &str, variant: &str, threads: u32, tps: f64) -> RunSummary {
        RunSummary {
            id,
            workload: workload.into(),
            variant: Some(variant.into()),
            threads: Some(threads),
            end_reason: "time_limit".into(),
            events_per_s: Some(tps),
            ..RunSummary::default()
        }
    }

    #[test]
    fn medians_and_spread() {
        let s = Side::new(vec![1, 2, 3], vec![110.0, 100.0, 90.0]);
        assert_eq!(s.median, 100.0);
        assert_eq!(s.spread_pct, 20.0);
        assert_eq!(median(&[1.0, 2.0, 3.0, 10.0]), 2.5);
        assert_eq!(Side::new(vec![1], vec![5.0]).spread_pct, 0.0);
    }

    #[test]
    fn ratio_diff_and_noise() {
        let base = vec![
            run(1, "w", "A", 1, 100.0),
            run(2, "w", "A", 1, 102.0),
            run(3, "w", "A", 4, 400.0),
        ];
        let cand = vec![
            run(4, "w", "B", 1, 110.0),
            run(5, "w", "B", 1, 110.0),
            run(6, "w", "B", 4, 300.0),
            run(7, "w", "B", 4, 500.0),
            run(8, "w", "B", 4, 380.0),
        ];
        let t = compare(&base, &cand, &CompareOptions::default()).unwrap();
        assert_eq!(t.threads, vec![1, 4]);
        assert_eq!(t.rows.len(), 1);
        assert!(!t.by_variant);
        let c1 = t.rows[0].cells[0].as_ref().unwrap();
        assert!((c1.value.unwrap() - 110.0 / 101.0 * 100.0).abs() < 1e-9);
        assert!(!c1.noisy, "spread 2/101 < 5%");
        let c4 = t.rows[0].cells[1].as_ref().unwrap();
        assert_eq!(c4.candidate.median, 380.0);
        assert!((c4.value.unwrap() - 95.0).abs() < 1e-9);
        assert!(c4.noisy);
        // One baseline run: never significant.
        let st = c4.stats.unwrap();
        assert_eq!(st.verdict, Verdict::TooFewRepeats);
        assert_eq!(st.repeats_needed, Some(4));
        let d = compare(
            &base,
            &cand,
            &CompareOptions {
                mode: CompareMode::Diff,
                ..CompareOptions::default()
            },
        )
        .unwrap();
        let v = d.rows[0].cells[1].as_ref().unwrap().value.unwrap();
        assert!((v + 5.0).abs() < 1e-9, "{v}");
    }

    #[test]
    fn verdicts_follow_the_metric_direction() {
        let base: Vec<RunSummary> = (0..5)
            .map(|i| run(i, "w", "A", 1, 100.0 + i as f64))
            .collect();
        let cand: Vec<RunSummary> = (0..5)
            .map(|i| run(10 + i, "w", "B", 1, 90.0 + i as f64))
            .collect();
        let t = compare(&base, &cand, &CompareOptions::default()).unwrap();
        let st = t.rows[0].cells[0].as_ref().unwrap().stats.unwrap();
        assert_eq!(st.verdict, Verdict::Slower);
        assert!(st.ratio_high < 1.0 && (st.p_value - 2.0 / 252.0).abs() < 1e-12);
        // The same numbers as latencies: lower is faster.
        let lat = |r: RunSummary| RunSummary {
            latency_p99_ms: r.events_per_s,
            ..r
        };
        let t = compare(
            &base.into_iter().map(lat).collect::<Vec<_>>(),
            &cand.into_iter().map(lat).collect::<Vec<_>>(),
            &CompareOptions {
                metric: Metric::P99,
                ..CompareOptions::default()
            },
        )
        .unwrap();
        let st = t.rows[0].cells[0].as_ref().unwrap().stats.unwrap();
        assert_eq!(st.verdict, Verdict::Faster);
    }

    #[test]
    fn a_row_per_candidate_variant() {
        let base = vec![run(1, "w", "A", 1, 100.0)];
        let cand = vec![run(2, "w", "B", 1, 50.0), run(3, "w", "C", 1, 200.0)];
        let t = compare(&base, &cand, &CompareOptions::default()).unwrap();
        assert!(t.by_variant);
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.rows[0].variant.as_deref(), Some("B"));
        assert_eq!(t.rows[1].cells[0].as_ref().unwrap().value, Some(200.0));
    }

    #[test]
    fn refuses_mixed_baselines_and_no_overlap() {
        let base = vec![run(1, "w", "A", 1, 100.0), run(2, "w", "B", 1, 100.0)];
        let e = compare(
            &base,
            &[run(3, "w", "C", 1, 1.0)],
            &CompareOptions::default(),
        )
        .unwrap_err()
        .0;
        assert!(e.contains("several variants (A, B)"), "{e}");
        let e = compare(
            &[run(1, "w", "A", 1, 100.0)],
            &[run(3, "w", "C", 8, 1.0)],
            &CompareOptions::default(),
        )
        .unwrap_err()
        .0;
        assert!(e.contains("no workload and thread count"), "{e}");
        let mut failed = run(4, "w", "C", 1, 1.0);
        failed.end_reason = "failed".into();
        let e = compare(
            &[run(1, "w", "A", 1, 100.0)],
            &[failed],
            &CompareOptions::default(),
        )
        .unwrap_err()
        .0;
        assert!(e.contains("no completed run"), "{e}");
    }
}
