//! The run document (JSON schema `dbmeter.run`, version 1).

use dbmeter_engine::{EndReason, IntervalSample, PhaseResult, RunResult};
use dbmeter_env::{CounterRecord, Environment, OsRecord, ServerRecord, Warning};
use dbmeter_stats::{Counters, ErrorCounts, LatencySummary};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub const SCHEMA_NAME: &str = "dbmeter.run";
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunReport {
    pub schema: String,
    pub schema_version: u32,
    pub dbmeter: ToolInfo,
    /// UTC start time, RFC 3339.
    pub started_at: String,
    pub workload: String,
    pub target: TargetInfo,
    /// Every option with its value (defaults included), dash-separated names.
    pub options: BTreeMap<String, String>,
    /// The seed actually used (`--rand-seed=0` draws one from the clock).
    pub seed: u64,
    pub threads: usize,
    pub environment: Environment,
    pub end: EndInfo,
    pub totals: Totals,
    pub latency_ms: LatencySummary,
    /// The HDR histogram of event latencies (ns), `BASE64;min;max;sum`.
    pub latency_histogram: String,
    /// With `--rate`: latency from the actual start of each event.
    pub service_latency_ms: Option<LatencySummary>,
    pub rate: Option<RateInfo>,
    /// Errors by driver code, over the measured phase.
    pub errors: BTreeMap<String, u64>,
    pub warmup: Option<WarmupInfo>,
    pub fairness: Fairness,
    pub intervals: Vec<Interval>,
    /// The server: version, variables, data directory, table sizes (none
    /// without a database).
    #[serde(default)]
    pub server: Option<ServerRecord>,
    /// Server counters before and after the run (MySQL/MariaDB, PostgreSQL).
    #[serde(default)]
    pub counters: Option<CounterRecord>,
    /// OS statistics sampled during the run.
    #[serde(default)]
    pub os: Option<OsRecord>,
    /// Set-ups found to distort the run, and facts that could not be collected.
    #[serde(default)]
    pub warnings: Vec<Warning>,
    /// The tpcc workload's results (only in its runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpcc: Option<crate::tpcc::TpccResult>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ToolInfo {
    pub version: String,
    /// Build profile and target, e.g. `release x86_64-linux`.
    pub build: String,
    /// The git commit built, when known.
    #[serde(default)]
    pub commit: Option<String>,
    /// The compiler, `rustc --version`.
    #[serde(default)]
    pub rustc: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TargetInfo {
    /// The target URL, password masked; empty for workloads without a database.
    pub url: String,
    pub driver: String,
    pub server_version: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EndInfo {
    /// `time_limit`, `event_limit`, `interrupted` or `failed`.
    pub reason: String,
    pub error: Option<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Totals {
    /// Length of the measured phase in seconds.
    pub duration_s: f64,
    pub events: u64,
    pub events_per_s: f64,
    pub queries: u64,
    pub queries_per_s: f64,
    pub reads: u64,
    pub writes: u64,
    pub others: u64,
    pub ignored_errors: u64,
    pub reconnects: u64,
    pub cancelled: u64,
    /// Events whose statement ran past --query-timeout.
    #[serde(default)]
    pub timeouts: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RateInfo {
    pub target_per_s: f64,
    pub achieved_per_s: f64,
    pub max_queue_length: u64,
    pub unstarted_at_end: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WarmupInfo {
    pub duration_s: f64,
    pub events: u64,
    pub events_per_s: f64,
    pub latency_ms: LatencySummary,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Fairness {
    pub events_avg: f64,
    pub events_stddev: f64,
    pub time_avg_s: f64,
    pub time_stddev_s: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Interval {
    /// End of the interval, seconds since the measurement started.
    pub t_s: f64,
    pub duration_s: f64,
    pub threads: usize,
    pub events: u64,
    pub events_per_s: f64,
    pub queries_per_s: f64,
    pub reads_per_s: f64,
    pub writes_per_s: f64,
    pub others_per_s: f64,
    pub errors_per_s: f64,
    pub reconnects_per_s: f64,
    pub latency_ms: LatencySummary,
    pub queue_length: Option<u64>,
    pub concurrency: Option<usize>,
    /// Completed events by kind, for workloads that tell kinds apart (tpcc:
    /// new_order, payment, order_status, delivery, stock_level).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events_by_kind: Vec<u64>,
    /// Intended rollbacks in the interval (tpcc's New-Orders), with kinds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollbacks: Option<u64>,
}

impl Interval {
    pub fn from_sample(s: &IntervalSample) -> Self {
        let c = &s.counters;
        Interval {
            t_s: s.t_s,
            duration_s: s.duration_s,
            threads: s.threads,
            events: c.events,
            events_per_s: s.per_sec(c.events),
            queries_per_s: s.per_sec(c.queries()),
            reads_per_s: s.per_sec(c.reads),
            writes_per_s: s.per_sec(c.writes),
            others_per_s: s.per_sec(c.others),
            errors_per_s: s.per_sec(c.ignored_errors),
            reconnects_per_s: s.per_sec(c.reconnects),
            latency_ms: s.latency.clone(),
            queue_length: s.queue_length,
            concurrency: s.concurrency,
            events_by_kind: s.kinds.iter().map(|k| k.events).collect(),
            rollbacks: (!s.kinds.is_empty()).then(|| s.kinds.iter().map(|k| k.rolled_back).sum()),
        }
    }
}

fn per_sec(n: u64, secs: f64) -> f64 {
    if secs > 0.0 { n as f64 / secs } else { 0.0 }
}

fn totals(p: &PhaseResult) -> Totals {
    let c: &Counters = &p.counters;
    let secs = p.duration.as_secs_f64();
    Totals {
        duration_s: secs,
        events: c.events,
        events_per_s: per_sec(c.events, secs),
        queries: c.queries(),
        queries_per_s: per_sec(c.queries(), secs),
        reads: c.reads,
        writes: c.writes,
        others: c.others,
        ignored_errors: c.ignored_errors,
        reconnects: c.reconnects,
        cancelled: c.cancelled,
        timeouts: c.timeouts,
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

/// What the caller knows beyond the engine's result.
pub struct ReportContext {
    pub workload: String,
    pub target: TargetInfo,
    pub options: BTreeMap<String, String>,
    pub seed: u64,
    pub started_at: String,
    pub environment: Environment,
    pub version: String,
    pub build: String,
}

impl RunReport {
    pub fn new(ctx: ReportContext, r: &RunResult, percentiles: &[f64]) -> RunReport {
        let (reason, error) = match &r.end {
            EndReason::TimeLimit => ("time_limit", None),
            EndReason::EventLimit => ("event_limit", None),
            EndReason::Interrupted => ("interrupted", None),
            EndReason::Failed(m) => ("failed", Some(m.clone())),
        };
        let (events_avg, events_stddev) = mean_stddev(r.users.iter().map(|u| u.events as f64));
        let (time_avg_s, time_stddev_s) = mean_stddev(r.users.iter().map(|u| u.busy.as_secs_f64()));
        let totals = totals(&r.measured);
        let errors: ErrorCounts = r.measured.errors.clone();
        RunReport {
            schema: SCHEMA_NAME.into(),
            schema_version: SCHEMA_VERSION,
            dbmeter: ToolInfo {
                version: ctx.version,
                build: ctx.build,
                commit: None,
                rustc: String::new(),
            },
            started_at: ctx.started_at,
            workload: ctx.workload,
            target: ctx.target,
            options: ctx.options,
            seed: ctx.seed,
            threads: r.threads,
            environment: ctx.environment,
            end: EndInfo {
                reason: reason.into(),
                error,
            },
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
            }),
            totals,
            errors,
            warmup: r.warmup.as_ref().map(|w| {
                let t = self::totals(w);
                WarmupInfo {
                    duration_s: t.duration_s,
                    events: t.events,
                    events_per_s: t.events_per_s,
                    latency_ms: LatencySummary::from_histogram(&w.latency, percentiles),
                }
            }),
            fairness: Fairness {
                events_avg,
                events_stddev,
                time_avg_s,
                time_stddev_s,
            },
            intervals: r.intervals.iter().map(Interval::from_sample).collect(),
            server: None,
            counters: None,
            os: None,
            warnings: Vec::new(),
            tpcc: None,
        }
    }

    pub fn to_json(&self) -> String {
        // A tree of plain data and maps with string keys always serialises.
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }
}
