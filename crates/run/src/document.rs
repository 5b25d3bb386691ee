//! The run document from what the engine measured: the common sections
//! (totals, latency, intervals, fairness, rate) and the named kinds.

use dbmeter_engine::{EndReason, IntervalSample, PhaseResult, Profile, RunResult};
use dbmeter_result::{
    AutoWarmupInfo, EndInfo, Fairness, Interval, KindSection, RateInfo, RunDocument, SCHEMA_NAME,
    SCHEMA_VERSION, StageResult, TargetInfo, ToolInfo, Totals, WarmupInfo,
};
use dbmeter_stats::measure::sql;
use dbmeter_stats::{Counters, LatencyHistogram, LatencySummary, Measure};
use std::collections::BTreeMap;

/// The declared measures' counts by name.
fn counts(measures: &[Measure], c: &Counters) -> BTreeMap<String, u64> {
    measures
        .iter()
        .zip(c.measures)
        .map(|(m, n)| (m.name.to_string(), n))
        .collect()
}

/// SQL statements: the SQL measures' sum, for a plan that declared them.
fn queries(measures: &[Measure], c: &Counters) -> u64 {
    if !sql::is_sql(measures.iter().map(|m| m.name)) {
        return 0;
    }
    measures
        .iter()
        .zip(c.measures)
        .filter(|(m, _)| sql::MEASURES.contains(m))
        .map(|(_, n)| n)
        .sum()
}

/// An interval of the engine's series as the document keeps it.
pub fn interval(s: &IntervalSample, measures: &[Measure]) -> Interval {
    let c = &s.counters;
    Interval {
        t_s: s.t_s,
        duration_s: s.duration_s,
        threads: s.threads,
        active_users: s.active_users,
        events: c.events,
        events_per_s: s.per_sec(c.events),
        counts: counts(measures, c),
        errors_per_s: s.per_sec(c.errors()),
        errors: s.errors.clone(),
        reconnects_per_s: s.per_sec(c.reconnects),
        failed_reconnects_per_s: s.per_sec(c.failed_reconnects),
        latency_ms: s.latency.clone(),
        latency_histogram: s.histogram.clone(),
        queue_length: s.queue_length,
        concurrency: s.concurrency,
        events_by_kind: s.kinds.iter().map(|k| k.events).collect(),
        rollbacks: (!s.kinds.is_empty()).then(|| s.kinds.iter().map(|k| k.rolled_back).sum()),
        lag_ms: s.lag_ms,
        skipped: c.skipped,
        ..Interval::default()
    }
}

fn per_sec(n: u64, secs: f64) -> f64 {
    if secs > 0.0 { n as f64 / secs } else { 0.0 }
}

fn totals(p: &PhaseResult, measures: &[Measure]) -> Totals {
    let c: &Counters = &p.counters;
    let secs = p.duration.as_secs_f64();
    let queries = queries(measures, c);
    Totals {
        duration_s: secs,
        events: c.events,
        events_per_s: per_sec(c.events, secs),
        queries,
        queries_per_s: per_sec(queries, secs),
        counts: counts(measures, c),
        ignored_errors: c.ignored_errors,
        reconnects: c.reconnects,
        cancelled: c.cancelled,
        timeouts: c.timeouts,
        connection_errors: c.connection_errors,
        failed_reconnects: c.failed_reconnects,
        skipped: c.skipped,
        ..Totals::default()
    }
}

fn mean_stddev(xs: impl Iterator<Item = f64> + Clone) -> (f64, f64) {
    let n = xs.clone().count();
    if n == 0 {
        return (0.0, 0.0);
    }
    let mean = xs.clone().sum::<f64>() / n as f64;
    let var = xs.map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
    (mean, var.sqrt())
}

/// What the run layer knows beyond the engine's result.
pub struct Facts<'a> {
    pub workload: String,
    pub target: TargetInfo,
    pub options: BTreeMap<String, String>,
    pub seed: u64,
    pub started_at: String,
    pub kinds: Vec<String>,
    /// The plan's declared measures.
    pub measures: &'a [Measure],
}

/// The end reason as the document names it.
pub fn end_info(end: &EndReason) -> EndInfo {
    let (reason, error) = match end {
        EndReason::TimeLimit => ("time_limit", None),
        EndReason::EventLimit => ("event_limit", None),
        EndReason::WorkDone => ("work_done", None),
        EndReason::Interrupted => ("interrupted", None),
        EndReason::Failed(m) => ("failed", Some(m.clone())),
    };
    EndInfo {
        reason: reason.into(),
        error,
    }
}

fn build_info() -> String {
    format!(
        "{} {}-{}",
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        },
        std::env::consts::ARCH,
        std::env::consts::OS
    )
}

/// The document of a run from the engine's result.
pub fn build(f: Facts, r: &RunResult, percentiles: &[f64]) -> RunDocument {
    let (events_avg, events_stddev) = mean_stddev(r.users.iter().map(|u| u.events as f64));
    let (time_avg_s, time_stddev_s) = mean_stddev(r.users.iter().map(|u| u.busy.as_secs_f64()));
    let totals = totals(&r.measured, f.measures);
    let kinds = f
        .kinds
        .iter()
        .zip(&r.measured.kinds)
        .map(|(name, k)| KindSection {
            name: name.clone(),
            events: k.events,
            rolled_back: k.rolled_back,
            retries: k.retries,
            latency_ms: LatencySummary::from_histogram(&k.latency, percentiles),
            latency_histogram: k.latency.to_base64(),
        })
        .collect();
    RunDocument {
        schema: SCHEMA_NAME.into(),
        schema_version: SCHEMA_VERSION,
        dbmeter: ToolInfo {
            version: env!("CARGO_PKG_VERSION").to_string(),
            build: build_info(),
            commit: None,
            rustc: String::new(),
        },
        started_at: f.started_at,
        workload: f.workload,
        target: f.target,
        options: f.options,
        seed: f.seed,
        threads: r.threads,
        end: end_info(&r.end),
        latency_ms: LatencySummary::from_histogram(&r.measured.latency, percentiles),
        latency_histogram: r.measured.latency.to_base64(),
        service_latency_ms: r
            .measured
            .service
            .as_ref()
            .map(|h| LatencySummary::from_histogram(h, percentiles)),
        rate: r.rate.map(|x| RateInfo {
            target_per_s: x.target,
            achieved_per_s: totals.events_per_s,
            max_queue_length: x.max_queue_length,
            unstarted_at_end: x.unstarted_at_end,
            max_lag_ms: x.max_lag.as_secs_f64() * 1e3,
        }),
        totals,
        errors: r.measured.errors.clone(),
        warmup: r.warmup.as_ref().map(|w| {
            let t = self::totals(w, f.measures);
            WarmupInfo {
                duration_s: t.duration_s,
                events: t.events,
                events_per_s: t.events_per_s,
                latency_ms: LatencySummary::from_histogram(&w.latency, percentiles),
                auto: r.auto_warmup.as_ref().map(|a| AutoWarmupInfo {
                    rule: AutoWarmupInfo::RULE.to_string(),
                    max_s: a.max.as_secs_f64(),
                    steady_since_s: a.steady_since.map(|i| i as f64 * a.interval_s),
                    interval_s: a.interval_s,
                    events_per_s: a.series.clone(),
                }),
            }
        }),
        fairness: Fairness {
            events_avg,
            events_stddev,
            time_avg_s,
            time_stddev_s,
        },
        intervals: r
            .intervals
            .iter()
            .map(|s| interval(s, f.measures))
            .collect(),
        measures: f.measures.iter().map(Measure::info).collect(),
        kinds,
        ..RunDocument::default()
    }
}

/// What each stage of the run's load profiles measured: the intervals whose
/// middle falls in the stage, merged. A 0 s stage (a step) has none and is
/// left out; the others keep their place in the profile as `index`.
pub fn stage_results(
    profiles: &[(&str, &Profile)],
    intervals: &[Interval],
    percentiles: &[f64],
) -> Vec<StageResult> {
    let mut out = Vec::new();
    for (name, profile) in profiles {
        for (i, piece) in profile.pieces().iter().enumerate() {
            if piece.t1 <= piece.t0 {
                continue;
            }
            let mut h = LatencyHistogram::new();
            let (mut events, mut errors, mut secs) = (0u64, 0f64, 0f64);
            let mut active: Option<usize> = None;
            for iv in intervals {
                let mid = iv.t_s - iv.duration_s / 2.0;
                if mid < piece.t0 || mid >= piece.t1 {
                    continue;
                }
                events += iv.events;
                errors += iv.errors_per_s * iv.duration_s;
                secs += iv.duration_s;
                if let Some(a) = iv.active_users {
                    active = Some(active.map_or(a, |m| m.max(a)));
                }
                if let Ok(x) = LatencyHistogram::from_base64(&iv.latency_histogram) {
                    h.merge(&x);
                }
            }
            out.push(StageResult {
                index: i + 1,
                profile: name.to_string(),
                start_s: piece.t0,
                end_s: piece.t1,
                from: piece.l0,
                to: piece.l1,
                events,
                events_per_s: per_sec(events, secs),
                errors: errors.round() as u64,
                active_users_max: active,
                latency_ms: LatencySummary::from_histogram(&h, percentiles),
                latency_histogram: h.to_base64(),
            });
        }
    }
    out
}
