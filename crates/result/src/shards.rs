//! Shards of one run (`--shard=I/N`) and their merge into one run
//! document (`dbmeter merge`).
//!
//! Everything that adds up is summed; every latency figure comes from
//! the shards' HDR histograms merged (never from averaged percentiles);
//! intervals are aligned by wall-clock time, from each shard's
//! measurement start.

use crate::{
    EndInfo, Fairness, Figure, Interval, KindSection, RateInfo, RunDocument, Totals, is_completed,
};
use dbmeter_env::Warning;
use dbmeter_stats::{LatencyHistogram, LatencySummary};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

mod extras;
pub use extras::{
    MergedCounters, MergedOs, MergedWarmup, ShardCounters, ShardOs, ShardWarmup, merge_counters,
    merge_hosts, merge_os, merge_outages, merge_warmups, server_identity,
};

/// Which shard of a split run a document is, and when it started.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ShardInfo {
    /// From 0 to `count - 1`.
    pub index: u64,
    pub count: u64,
    /// `--start-at` as asked (RFC 3339, UTC, milliseconds); None without.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_at: Option<String>,
    /// When the users were let go (RFC 3339, UTC, milliseconds).
    pub released_at: String,
    /// The measurement's start (after any warm-up), seconds since the
    /// Unix epoch: `dbmeter merge` aligns the shards' intervals on it.
    pub measure_start_unix_s: f64,
    /// How late the users were let go after `--start-at`, in
    /// milliseconds (negative: early; None without `--start-at`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_skew_ms: Option<f64>,
}

/// The options that say which shard a run is and when its users start:
/// shards of one run differ in them alone. The run layer leaves them out
/// of the document's options and records them apart ([`ShardInfo`]).
pub const SHARD_OPTIONS: &[&str] = &["shard", "start-at", "start-barrier", "barrier-timeout"];

/// Options that may differ between the shards of one run: which shard,
/// its start ([`SHARD_OPTIONS`]), and where each writes its own result.
fn shard_specific(option: &str) -> bool {
    SHARD_OPTIONS.contains(&option) || ["output", "format"].contains(&option)
}

/// Two shards whose measurements started further apart than this (in
/// seconds) are reported: their clocks drifted, or they did not share
/// one `--start-at`.
pub const MAX_START_SPREAD_S: f64 = 1.0;

/// How a merged document was made (`dbmeter merge`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MergeInfo {
    /// The number of shards the run was split into (N of `--shard=I/N`).
    pub count: u64,
    /// The shards merged, in shard order.
    pub shards: Vec<MergedShard>,
    /// The shards of `count` that were not given, by index.
    pub missing: Vec<u64>,
    /// Options whose values differ between shards (shard, start and
    /// output aside): `NAME: VALUE (shard I), VALUE (shard J)`.
    pub differing_options: Vec<String>,
    /// The spread of the shards' measurement starts, in milliseconds.
    pub start_spread_ms: f64,
    /// What the merge says about its input, one line each (also printed
    /// on stderr and kept among the document's warnings): missing shards,
    /// differing options, drifted clocks, shards that did not complete.
    pub notes: Vec<String>,
    /// The parts of the shards' documents that do not merge exactly and
    /// are left out of the merged one (the service latency, ...).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<String>,
    /// Each shard's warm-up, and whether they agree; absent when no shard
    /// warmed up.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warmup: Option<MergedWarmup>,
    /// Each shard's OS figures, and the sums over the client machines;
    /// absent when no shard has OS figures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub os: Option<MergedOs>,
    /// How the server's counters were merged; absent when no shard has
    /// counters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counters: Option<MergedCounters>,
}

/// One shard as merged.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MergedShard {
    pub index: u64,
    /// The file (or stored run) it came from.
    pub source: String,
    pub threads: usize,
    pub events: u64,
    pub end_reason: String,
    pub measure_start_unix_s: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_skew_ms: Option<f64>,
}

/// What stops a merge: the documents are not shards of one run.
#[derive(Clone, Debug, PartialEq)]
pub enum MergeError {
    /// The input cannot make one run (no shard, different benchmarks, a
    /// shard twice, documents without histograms).
    Invalid(String),
}

impl std::fmt::Display for MergeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MergeError::Invalid(m) => f.write_str(m),
        }
    }
}

fn histogram(text: &str, what: &str) -> Result<LatencyHistogram, MergeError> {
    LatencyHistogram::from_base64(text).map_err(|e| {
        MergeError::Invalid(format!(
            "{what}: its latency histogram does not read ({e:?})"
        ))
    })
}

fn rfc3339_ms(unix_s: f64) -> String {
    // A document's time may be anything (1e300, infinity): the latest
    // time written stands for what is beyond it.
    let d =
        std::time::Duration::try_from_secs_f64(unix_s.max(0.0)).unwrap_or(std::time::Duration::MAX);
    format_rfc3339_millis(
        std::time::UNIX_EPOCH
            .checked_add(d)
            .unwrap_or_else(latest_rfc3339),
    )
}

/// The latest time RFC 3339 writes, 9999-12-31T23:59:59.999Z.
fn latest_rfc3339() -> std::time::SystemTime {
    std::time::UNIX_EPOCH + std::time::Duration::from_millis(253_402_300_799_999)
}

/// A time as RFC 3339 in UTC with milliseconds (humantime's format; times
/// before 1970 or after 9999 are written as the nearest it can write).
pub fn format_rfc3339_millis(t: std::time::SystemTime) -> String {
    humantime::format_rfc3339_millis(t.clamp(std::time::UNIX_EPOCH, latest_rfc3339())).to_string()
}

fn per_s(n: u64, secs: f64) -> f64 {
    if secs > 0.0 { n as f64 / secs } else { 0.0 }
}

fn add_map(into: &mut BTreeMap<String, u64>, from: &BTreeMap<String, u64>) {
    for (k, v) in from {
        *into.entry(k.clone()).or_default() += v;
    }
}

/// The percentiles a document reports (its `latency_ms`), or the default.
fn percentiles_of(doc: &RunDocument) -> Vec<f64> {
    let p: Vec<f64> = doc
        .latency_ms
        .percentiles
        .iter()
        .map(|p| p.percentile)
        .collect();
    if p.is_empty() {
        vec![50.0, 95.0, 99.0, 99.9]
    } else {
        p
    }
}

/// Merges the documents of a run's shards (`(source, document)`, in any
/// order) into one run document. The input must be shards of one
/// benchmark and one split (same N, each shard once); what merges but
/// deserves a word (a missing shard, different options, drifted clocks)
/// is in the result's `merged.notes`. Refusing a merge of shards with
/// different options is the caller's choice
/// (`MergeInfo::differing_options`).
pub fn merge(mut input: Vec<(String, RunDocument)>) -> Result<RunDocument, MergeError> {
    input.sort_by_key(|(_, d)| d.shard.as_ref().map_or(0, |s| s.index));
    let Some((first_src, first)) = input.first() else {
        return Err(MergeError::Invalid("no document to merge".into()));
    };
    let Some(count) = first.shard.as_ref().map(|s| s.count) else {
        return Err(MergeError::Invalid(format!(
            "{first_src} is not a shard's result (it ran without --shard=I/N)"
        )));
    };
    let workload = first.workload.clone();
    for (src, d) in &input {
        let Some(s) = &d.shard else {
            return Err(MergeError::Invalid(format!(
                "{src} is not a shard's result (it ran without --shard=I/N)"
            )));
        };
        if s.count != count {
            return Err(MergeError::Invalid(format!(
                "{src} is shard {}/{} but {first_src} is of {count} shards: they are not one run",
                s.index, s.count
            )));
        }
        if d.workload != workload {
            return Err(MergeError::Invalid(format!(
                "{src} ran {} but {first_src} ran {workload}: they are not one run",
                d.workload
            )));
        }
        if d.latency_histogram.is_empty() && d.totals.events > 0 {
            return Err(MergeError::Invalid(format!(
                "{src} has no latency histogram (a document older than schema version 3): it cannot merge exactly"
            )));
        }
    }
    for w in input.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        let i = a.1.shard.as_ref().map_or(0, |s| s.index);
        if Some(i) == b.1.shard.as_ref().map(|s| s.index) {
            return Err(MergeError::Invalid(format!(
                "shard {i}/{count} is given twice ({} and {})",
                a.0, b.0
            )));
        }
    }
    let mut info = MergeInfo {
        count,
        ..MergeInfo::default()
    };
    let have: Vec<u64> = input
        .iter()
        .filter_map(|(_, d)| d.shard.as_ref().map(|s| s.index))
        .collect();
    info.missing = (0..count).filter(|i| !have.contains(i)).collect();
    if !info.missing.is_empty() {
        let names: Vec<String> = info
            .missing
            .iter()
            .map(|i| format!("{i}/{count}"))
            .collect();
        info.notes.push(format!(
            "shard{} {} missing: the merged run is {} of {count} shards' work",
            if names.len() == 1 { "" } else { "s" },
            names.join(", "),
            input.len()
        ));
    }
    // Options, shard-specific ones aside.
    let mut names: Vec<&String> = input.iter().flat_map(|(_, d)| d.options.keys()).collect();
    names.sort();
    names.dedup();
    for name in names {
        if shard_specific(name) {
            continue;
        }
        let mut values: Vec<(String, u64)> = Vec::new();
        for (_, d) in &input {
            let v = d.options.get(name).cloned().unwrap_or_default();
            if !values.iter().any(|(x, _)| *x == v) {
                values.push((v, d.shard.as_ref().map_or(0, |s| s.index)));
            }
        }
        if values.len() > 1 {
            let shown: Vec<String> = values
                .iter()
                .map(|(v, i)| format!("{v:?} (shard {i})"))
                .collect();
            info.differing_options
                .push(format!("--{name}: {}", shown.join(", ")));
        }
    }
    if !info.differing_options.is_empty() {
        info.notes.push(format!(
            "the shards ran different options: {}",
            info.differing_options.join("; ")
        ));
    }
    let starts: Vec<f64> = input
        .iter()
        .map(|(_, d)| d.shard.as_ref().map_or(0.0, |s| s.measure_start_unix_s))
        .collect();
    let origin = starts.iter().copied().fold(f64::INFINITY, f64::min);
    let latest = starts.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    info.start_spread_ms = (latest - origin) * 1e3;
    if latest - origin > MAX_START_SPREAD_S {
        info.notes.push(format!(
            "the shards' measurements started {:.3} s apart (more than {MAX_START_SPREAD_S} s): their clocks drifted or they did not share one --start-at; intervals are aligned by each shard's own clock",
            latest - origin
        ));
    }

    let percentiles = percentiles_of(first);
    let mut doc = RunDocument {
        schema: first.schema.clone(),
        schema_version: crate::SCHEMA_VERSION,
        dbmeter: first.dbmeter.clone(),
        started_at: rfc3339_ms(origin)
            .split('.')
            .next()
            .unwrap_or_default()
            .to_string()
            + "Z",
        workload,
        target: first.target.clone(),
        options: first
            .options
            .iter()
            .filter(|(k, _)| !shard_specific(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        seed: first.seed,
        environment: first.environment.clone(),
        measures: first.measures.clone(),
        server: first.server.clone(),
        ..RunDocument::default()
    };
    // Totals, the latency, the rate, errors and the end.
    let mut all = LatencyHistogram::new();
    let mut t = Totals::default();
    let mut end_s = f64::NEG_INFINITY;
    let mut rate: Option<RateInfo> = None;
    let (mut fair_n, mut ev_sum, mut ev_sq, mut tm_sum, mut tm_sq) = (0.0, 0.0, 0.0, 0.0, 0.0);
    let mut ends: Vec<EndInfo> = Vec::new();
    for (i, (src, d)) in input.iter().enumerate() {
        all.merge(&histogram(&d.latency_histogram, src)?);
        let o = &d.totals;
        t.events += o.events;
        t.queries += o.queries;
        add_map(&mut t.counts, &o.counts);
        t.ignored_errors += o.ignored_errors;
        t.reconnects += o.reconnects;
        t.cancelled += o.cancelled;
        t.timeouts += o.timeouts;
        t.connection_errors += o.connection_errors;
        t.failed_reconnects += o.failed_reconnects;
        t.skipped += o.skipped;
        end_s = end_s.max(starts[i] + o.duration_s);
        add_map(&mut doc.errors, &d.errors);
        doc.threads += d.threads;
        if let Some(r) = &d.rate {
            let m = rate.get_or_insert_with(RateInfo::default);
            m.target_per_s += r.target_per_s;
            m.max_queue_length = m.max_queue_length.max(r.max_queue_length);
            m.unstarted_at_end += r.unstarted_at_end;
            m.max_lag_ms = m.max_lag_ms.max(r.max_lag_ms);
        }
        // The users' mean and spread, pooled over the shards.
        let n = d.threads as f64;
        let f = &d.fairness;
        fair_n += n;
        ev_sum += n * f.events_avg;
        ev_sq += n * (f.events_stddev.powi(2) + f.events_avg.powi(2));
        tm_sum += n * f.time_avg_s;
        tm_sq += n * (f.time_stddev_s.powi(2) + f.time_avg_s.powi(2));
        if !ends
            .iter()
            .any(|e| e.reason == d.end.reason && e.error == d.end.error)
        {
            ends.push(d.end.clone());
        }
        for w in &d.warnings {
            if !doc.warnings.iter().any(|x| x.message == w.message) {
                doc.warnings.push(w.clone());
            }
        }
        info.shards.push(MergedShard {
            index: d.shard.as_ref().map_or(0, |s| s.index),
            source: src.clone(),
            threads: d.threads,
            events: o.events,
            end_reason: d.end.reason.clone(),
            measure_start_unix_s: starts[i],
            start_skew_ms: d.shard.as_ref().and_then(|s| s.start_skew_ms),
        });
    }
    // The run lasts from the first shard's measurement start to the last
    // one's end.
    t.duration_s = (end_s - origin).max(0.0);
    t.events_per_s = per_s(t.events, t.duration_s);
    t.queries_per_s = per_s(t.queries, t.duration_s);
    if let Some(r) = &mut rate {
        r.achieved_per_s = t.events_per_s;
    }
    doc.rate = rate;
    doc.totals = t;
    doc.latency_ms = LatencySummary::from_histogram(&all, &percentiles);
    doc.latency_histogram = all.to_base64();
    if fair_n > 0.0 {
        let (ea, ta) = (ev_sum / fair_n, tm_sum / fair_n);
        doc.fairness = Fairness {
            events_avg: ea,
            events_stddev: (ev_sq / fair_n - ea * ea).max(0.0).sqrt(),
            time_avg_s: ta,
            time_stddev_s: (tm_sq / fair_n - ta * ta).max(0.0).sqrt(),
        };
    }
    // The worst end: failed, then interrupted, then the completed ones.
    doc.end = ends
        .iter()
        .max_by_key(|e| match e.reason.as_str() {
            "failed" => 2,
            "interrupted" => 1,
            _ => 0,
        })
        .cloned()
        .unwrap_or_default();
    if ends.iter().any(|e| !is_completed(&e.reason)) {
        let bad: Vec<String> = info
            .shards
            .iter()
            .filter(|s| !is_completed(&s.end_reason))
            .map(|s| format!("{}/{count} {}", s.index, s.end_reason))
            .collect();
        info.notes
            .push(format!("shards that did not complete: {}", bad.join(", ")));
    }
    doc.intervals = merge_intervals(&input, &starts, origin, &percentiles)?;
    doc.kinds = merge_kinds(&input, &percentiles)?;
    doc.figures = merge_figures(&input);
    // The warm-ups, OS figures, server counters, outages and hosts.
    extras::carry_over(&input, &starts, origin, &mut doc, &mut info);
    // What does not merge exactly is left out, and said.
    let mut left_out: Vec<&str> = Vec::new();
    if input.iter().any(|(_, d)| d.service_latency_ms.is_some()) {
        left_out.push("service latency (no histogram is kept)");
    }
    if input.iter().any(|(_, d)| d.os.is_some()) {
        left_out.push("the OS series (each shard's means are in merged.os)");
    }
    if input.iter().any(|(_, d)| d.waits.is_some()) {
        left_out.push("the server's wait events (each shard sampled the whole server's)");
    }
    if input.iter().any(|(_, d)| d.profile.is_some()) {
        left_out.push("the server's CPU profile");
    }
    let mut sections: Vec<&String> = input.iter().flat_map(|(_, d)| d.sections.keys()).collect();
    sections.sort();
    sections.dedup();
    let sections: Vec<String> = sections
        .into_iter()
        .map(|s| format!("the {s} section"))
        .collect();
    left_out.extend(sections.iter().map(String::as_str));
    info.left_out = left_out.into_iter().map(str::to_string).collect();
    for n in &info.notes {
        doc.warnings.push(Warning {
            code: "merge".into(),
            message: n.clone(),
        });
    }
    doc.merged = Some(info);
    doc.drift = crate::drift::analyse(&doc);
    Ok(doc)
}

/// The shards' intervals aligned by wall-clock time: shard s's interval j
/// falls in the merged interval `j + round(offset / length)`, its offset
/// being how much later than the first shard's its measurement started.
fn merge_intervals(
    input: &[(String, RunDocument)],
    starts: &[f64],
    origin: f64,
    percentiles: &[f64],
) -> Result<Vec<Interval>, MergeError> {
    struct Acc {
        iv: Interval,
        hist: LatencyHistogram,
        lag_weighted: f64,
        lag_events: u64,
    }
    let mut acc: BTreeMap<usize, Acc> = BTreeMap::new();
    for (s, (src, d)) in input.iter().enumerate() {
        let offset = starts[s] - origin;
        let length = d
            .intervals
            .first()
            .map(|i| i.duration_s)
            .filter(|l| *l > 0.0)
            .unwrap_or(1.0);
        let shift = (offset / length).round() as usize;
        for (j, iv) in d.intervals.iter().enumerate() {
            if !iv.latency_histogram.is_empty() || iv.events == 0 {
                // Checked below.
            } else {
                return Err(MergeError::Invalid(format!(
                    "{src}: its intervals carry no latency histogram (a document older than schema version 3)"
                )));
            }
            let a = acc.entry(j + shift).or_insert_with(|| Acc {
                iv: Interval::default(),
                hist: LatencyHistogram::new(),
                lag_weighted: 0.0,
                lag_events: 0,
            });
            if !iv.latency_histogram.is_empty() {
                a.hist.merge(&histogram(&iv.latency_histogram, src)?);
            }
            let m = &mut a.iv;
            m.t_s = m.t_s.max(offset + iv.t_s);
            m.duration_s = m.duration_s.max(iv.duration_s);
            m.threads += iv.threads;
            m.active_users = match (m.active_users, iv.active_users) {
                (None, None) => None,
                (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
            };
            m.events += iv.events;
            add_map(&mut m.counts, &iv.counts);
            m.errors_per_s += iv.errors_per_s;
            m.reconnects_per_s += iv.reconnects_per_s;
            m.failed_reconnects_per_s += iv.failed_reconnects_per_s;
            add_map(&mut m.errors, &iv.errors);
            m.queue_length = match (m.queue_length, iv.queue_length) {
                (None, None) => None,
                (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
            };
            m.concurrency = match (m.concurrency, iv.concurrency) {
                (None, None) => None,
                (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
            };
            if m.events_by_kind.len() < iv.events_by_kind.len() {
                m.events_by_kind.resize(iv.events_by_kind.len(), 0);
            }
            for (x, y) in m.events_by_kind.iter_mut().zip(&iv.events_by_kind) {
                *x += y;
            }
            m.rollbacks = match (m.rollbacks, iv.rollbacks) {
                (None, None) => None,
                (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
            };
            if let Some(l) = iv.lag_ms {
                a.lag_weighted += l * iv.events as f64;
                a.lag_events += iv.events;
            }
            m.skipped += iv.skipped;
        }
    }
    Ok(acc
        .into_values()
        .map(|mut a| {
            a.iv.events_per_s = per_s(a.iv.events, a.iv.duration_s);
            a.iv.latency_ms = LatencySummary::from_histogram(&a.hist, percentiles);
            a.iv.latency_histogram = a.hist.to_base64();
            if a.lag_events > 0 {
                a.iv.lag_ms = Some(a.lag_weighted / a.lag_events as f64);
            }
            a.iv
        })
        .collect())
}

/// The named kinds by name, in the first shard's order.
fn merge_kinds(
    input: &[(String, RunDocument)],
    percentiles: &[f64],
) -> Result<Vec<KindSection>, MergeError> {
    let mut out: Vec<(KindSection, LatencyHistogram)> = Vec::new();
    for (src, d) in input {
        for k in &d.kinds {
            let h = histogram(&k.latency_histogram, src)?;
            match out.iter_mut().find(|(x, _)| x.name == k.name) {
                Some((x, xh)) => {
                    x.events += k.events;
                    x.rolled_back += k.rolled_back;
                    x.retries += k.retries;
                    xh.merge(&h);
                }
                None => out.push((k.clone(), h)),
            }
        }
    }
    Ok(out
        .into_iter()
        .map(|(mut k, h)| {
            k.latency_ms = LatencySummary::from_histogram(&h, percentiles);
            k.latency_histogram = h.to_base64();
            k
        })
        .collect())
}

/// The benchmark's figures by name: the mean of the shards' values, with
/// the lowest and highest as `min` and `max`; a figure whose status is
/// not `ok` on some shard keeps that status.
fn merge_figures(input: &[(String, RunDocument)]) -> Vec<Figure> {
    let mut out: Vec<(Figure, Vec<f64>)> = Vec::new();
    for (_, d) in input {
        for f in &d.figures {
            let i = match out.iter().position(|(x, _)| x.name == f.name) {
                Some(i) => i,
                None => {
                    out.push((f.clone(), Vec::new()));
                    out.len() - 1
                }
            };
            let (x, values) = &mut out[i];
            if f.status != "ok" {
                x.status = f.status.clone();
            }
            values.extend(f.value);
        }
    }
    out.into_iter()
        .map(|(mut f, v)| {
            if !v.is_empty() {
                f.value = Some(v.iter().sum::<f64>() / v.len() as f64);
                if v.len() > 1 {
                    f.min = v.iter().copied().reduce(f64::min);
                    f.max = v.iter().copied().reduce(f64::max);
                }
            }
            f
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_in_rfc3339() {
        assert_eq!(rfc3339_ms(0.0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339_ms(1_795_802_400.25), "2026-11-27T18:00:00.250Z");
        assert_eq!(rfc3339_ms(951_825_600.0), "2000-02-29T12:00:00.000Z");
        assert_eq!(rfc3339_ms(1e300), "9999-12-31T23:59:59.999Z");
        assert_eq!(rfc3339_ms(f64::INFINITY), "9999-12-31T23:59:59.999Z");
    }

    fn shard(index: u64, count: u64, start: f64, lat_ns: &[u64]) -> (String, RunDocument) {
        let mut h = LatencyHistogram::new();
        for &ns in lat_ns {
            h.record(ns);
        }
        let mut d = RunDocument {
            schema: crate::SCHEMA_NAME.into(),
            workload: "noop".into(),
            threads: 1,
            shard: Some(ShardInfo {
                index,
                count,
                measure_start_unix_s: start,
                ..ShardInfo::default()
            }),
            latency_histogram: h.to_base64(),
            intervals: vec![Interval {
                t_s: 1.0,
                duration_s: 1.0,
                threads: 1,
                events: lat_ns.len() as u64,
                latency_histogram: h.to_base64(),
                ..Interval::default()
            }],
            ..RunDocument::default()
        };
        d.end.reason = "event_limit".into();
        d.totals.events = lat_ns.len() as u64;
        d.totals.duration_s = 1.0;
        d.options.insert("threads".into(), "3".into());
        d.options.insert("shard".into(), format!("{index}/{count}"));
        (format!("s{index}.json"), d)
    }

    #[test]
    fn merges_counts_and_histograms() {
        let m = merge(vec![
            shard(1, 3, 100.0, &[2_000_000, 3_000_000]),
            shard(0, 3, 100.0, &[1_000_000]),
            shard(2, 3, 100.01, &[4_000_000, 9_000_000]),
        ])
        .unwrap();
        assert_eq!(m.totals.events, 5);
        assert_eq!(m.threads, 3);
        assert_eq!(m.latency_ms.count, 5);
        assert_eq!(m.intervals.len(), 1);
        assert_eq!(m.intervals[0].events, 5);
        let info = m.merged.unwrap();
        assert!(info.missing.is_empty() && info.notes.is_empty(), "{info:?}");
        assert_eq!(
            info.shards.iter().map(|s| s.index).collect::<Vec<_>>(),
            [0, 1, 2]
        );
        assert!(!m.options.contains_key("shard"));
    }

    #[test]
    fn says_what_is_wrong() {
        let m = merge(vec![
            shard(0, 4, 1.0, &[1]),
            shard(1, 4, 1.0, &[1]),
            shard(3, 4, 3.5, &[1]),
        ])
        .unwrap();
        let info = m.merged.unwrap();
        assert_eq!(info.missing, [2]);
        assert!(
            info.notes[0].starts_with("shard 2/4 missing"),
            "{:?}",
            info.notes
        );
        assert!(
            info.notes.iter().any(|n| n.contains("2.500 s apart")),
            "{:?}",
            info.notes
        );
        let mut other = shard(1, 2, 1.0, &[1]);
        other.1.options.insert("threads".into(), "4".into());
        let m = merge(vec![shard(0, 2, 1.0, &[1]), other]).unwrap();
        assert_eq!(
            m.merged.unwrap().differing_options,
            ["--threads: \"3\" (shard 0), \"4\" (shard 1)"]
        );
        for bad in [
            vec![shard(0, 2, 1.0, &[1]), shard(0, 2, 1.0, &[1])],
            vec![shard(0, 2, 1.0, &[1]), shard(1, 3, 1.0, &[1])],
        ] {
            assert!(merge(bad).is_err());
        }
        let mut plain = shard(0, 2, 1.0, &[1]);
        plain.1.shard = None;
        assert!(
            matches!(merge(vec![plain]), Err(MergeError::Invalid(m)) if m.contains("without --shard"))
        );
    }
}
