//! The run document (JSON schema `dbmeter.run`).

use crate::KindSection;
use dbmeter_env::{
    CounterRecord, Environment, OsRecord, ProfileRecord, ServerRecord, WaitRecord, Warning,
};
use dbmeter_stats::measure::sql;
use dbmeter_stats::{LatencyHistogram, LatencySummary, MeasureInfo};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub const SCHEMA_NAME: &str = "dbmeter.run";
/// 2: named kinds (`kinds`), a run that lost its server ends `failed`,
/// counter deltas across a server restart are dropped and flagged
/// (`counters.restarted`), `counters.other_sessions`, `rate.max_lag_ms`,
/// interval `failed_reconnects_per_s`, end reason `work_done`.
/// 3: named measures: the run declares them (`measures`), totals and
/// intervals count them by name (`counts`); reads, writes and others are
/// the SQL benchmarks' measures (no longer `totals.reads` or interval
/// `reads_per_s`); every interval carries its latency histogram
/// (`latency_histogram`), so intervals merge exactly across processes.
/// Documents of versions 1 and 2 read as they are, their reads, writes and
/// others turned into counts when read ([`RunDocument::from_json`]).
pub const SCHEMA_VERSION: u32 = 3;

/// The end reasons of runs that ran to their end: the runs that count in
/// comparisons and medians.
pub const COMPLETED_REASONS: [&str; 3] = ["time_limit", "event_limit", "work_done"];

/// True for the end reason of a run that ran to its end (not interrupted,
/// not failed).
pub fn is_completed(end_reason: &str) -> bool {
    COMPLETED_REASONS.contains(&end_reason)
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RunDocument {
    pub schema: String,
    #[serde(default)]
    pub schema_version: u32,
    #[serde(default)]
    pub dbmeter: ToolInfo,
    /// UTC start time, RFC 3339.
    #[serde(default)]
    pub started_at: String,
    pub workload: String,
    #[serde(default)]
    pub target: TargetInfo,
    /// Every option with its value (defaults included), dash-separated names.
    #[serde(default)]
    pub options: BTreeMap<String, String>,
    /// The seed actually used (`--rand-seed=0` draws one from the clock).
    #[serde(default)]
    pub seed: u64,
    #[serde(default)]
    pub threads: usize,
    #[serde(default)]
    pub environment: Environment,
    pub end: EndInfo,
    /// The counters the benchmark declared beyond events (SQL benchmarks:
    /// reads, writes, others), in its order; `totals.counts` and each
    /// interval's `counts` count them by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub measures: Vec<MeasureInfo>,
    #[serde(default)]
    pub totals: Totals,
    #[serde(default)]
    pub latency_ms: LatencySummary,
    /// The HDR histogram of event latencies (ns), `BASE64;min;max;sum`.
    #[serde(default)]
    pub latency_histogram: String,
    /// With `--rate`: latency from the actual start of each event.
    #[serde(default)]
    pub service_latency_ms: Option<LatencySummary>,
    #[serde(default)]
    pub rate: Option<RateInfo>,
    /// Errors by driver code, over the measured phase.
    #[serde(default)]
    pub errors: BTreeMap<String, u64>,
    #[serde(default)]
    pub warmup: Option<WarmupInfo>,
    #[serde(default)]
    pub fairness: Fairness,
    #[serde(default)]
    pub intervals: Vec<Interval>,
    /// Per named kind (transaction, query, statement), for benchmarks that
    /// tell kinds apart.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kinds: Vec<KindSection>,
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
    /// The server's wait events sampled during the measured phase
    /// (PostgreSQL, MariaDB/MySQL; none for SQLite and older documents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waits: Option<WaitRecord>,
    /// The server's CPU profile during the measured phase
    /// (`--profile-server`): perf's busiest functions, or why there are none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<ProfileRecord>,
    /// Set-ups found to distort the run, and facts that could not be collected.
    #[serde(default)]
    pub warnings: Vec<Warning>,
    /// Commands a campaign ran around the run, with their output.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hooks: Vec<HookRecord>,
    /// The benchmark's own figures, each compared on its own across runs
    /// (TPC-H: one per query, its time); empty for most benchmarks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub figures: Vec<Figure>,
    /// Per stage of `--stages` / `--rate-stages`: what each measured.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<StageResult>,
    /// The trends of a long run's intervals (endurance): throughput, p99,
    /// memory; absent for runs of few intervals and for staged runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift: Option<crate::drift::Drift>,
    /// Events per second with a confidence interval that respects the
    /// correlation of neighbouring intervals (batch means); absent for
    /// runs of fewer than 9 intervals and for staged runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput_ci: Option<crate::throughput::ThroughputCi>,
    /// A capacity search's steps and result (`--find-capacity`): the
    /// document is then its capacity step's run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<crate::capacity::CapacityResult>,
    /// The spikes of the profiles: impact and recovery.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spikes: Vec<crate::spikes::Spike>,
    /// The times when the users could not reach the server: start,
    /// length, events lost, recovery.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outages: Vec<crate::outages::Outage>,
    /// With several hosts in the target: each host's users, events and
    /// errors.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<HostCount>,
    /// The verdicts on the run's `--assert`ions, in their order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub verdicts: Vec<crate::verdict::Verdict>,
    /// `--shard=I/N` or `--start-at`: which shard this run was, when its
    /// users were let go, and how late after `--start-at`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::shards::ShardInfo>,
    /// A run merged from its shards (`dbmeter merge`): the shards, the
    /// missing ones, differing options, the spread of their starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged: Option<crate::shards::MergeInfo>,
    /// Each benchmark's own section, under the key its benchmark chose
    /// (`tpcc`: NOPM, TPM, the transactions); the benchmark owns its type
    /// (see [`RunDocument::section`]).
    #[serde(flatten)]
    pub sections: BTreeMap<String, serde_json::Value>,
}

/// One host of a target with several: what went to it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HostCount {
    /// `host:port` (or a socket's path).
    pub host: String,
    /// The users whose connection was on this host at the end.
    pub users: u64,
    /// Their events and errors over the measured phase.
    pub events: u64,
    pub errors: u64,
    /// Connections opened to it: the users' first ones and reconnects,
    /// and dbmeter's own (set-up, server facts).
    pub connections: u64,
}

impl HostCount {
    /// `h1:5432: 4 users, 51234 events, 0 errors, 5 connections`.
    pub fn line(&self) -> String {
        format!(
            "{}: {} users, {} events, {} errors, {} connections",
            self.host, self.users, self.events, self.errors, self.connections
        )
    }
}

/// What one stage of a load profile measured: the intervals whose middle
/// falls in it, merged.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StageResult {
    /// Its place in the profile as given, from 1 (`stage2` in `--assert`).
    pub index: usize,
    /// `users` (`--stages`) or `rate` (`--rate-stages`).
    pub profile: String,
    /// Seconds since the measurement started.
    pub start_s: f64,
    pub end_s: f64,
    /// The level at its start and its end (users, or events per second).
    pub from: f64,
    pub to: f64,
    pub events: u64,
    pub events_per_s: f64,
    /// Ignored errors and lost connections.
    pub errors: u64,
    /// The most users that ran events in one of its intervals (`users`
    /// profiles).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_users_max: Option<usize>,
    pub latency_ms: LatencySummary,
    /// Its merged HDR histogram (ns), `BASE64;min;max;sum`.
    #[serde(default)]
    pub latency_histogram: String,
}

/// One of a benchmark's own figures (e.g. a TPC-H query's time).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// Its name, unique in the run, e.g. `Q1`; figures keep their order.
    pub name: String,
    /// None when it has no value (see `status`).
    pub value: Option<f64>,
    /// The slowest and fastest of its repeats within the run, when it has
    /// several (DBT3's min/max whiskers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
    /// e.g. `s`.
    pub unit: String,
    pub lower_is_better: bool,
    /// `ok`, `timeout` or `error`.
    pub status: String,
    /// Text that goes with it in reports (TPC-H: the query's plan).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl Figure {
    pub const TIMEOUT: &'static str = "timeout";
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
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

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TargetInfo {
    /// The target URL, password masked; empty for workloads without a database.
    #[serde(default)]
    pub url: String,
    #[serde(default)]
    pub driver: String,
    #[serde(default)]
    pub server_version: String,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct EndInfo {
    /// `time_limit`, `event_limit`, `work_done` (every user finished its
    /// work), `interrupted` or `failed`.
    pub reason: String,
    #[serde(default)]
    pub error: Option<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Totals {
    /// Length of the measured phase in seconds.
    pub duration_s: f64,
    pub events: u64,
    pub events_per_s: f64,
    /// SQL statements (the SQL measures' sum); 0 for a benchmark that
    /// issues none.
    pub queries: u64,
    pub queries_per_s: f64,
    /// The declared measures' totals, by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub counts: BTreeMap<String, u64>,
    /// Documents before version 3: the SQL measures (read into `counts`).
    #[serde(default, skip_serializing)]
    pub reads: u64,
    #[serde(default, skip_serializing)]
    pub writes: u64,
    #[serde(default, skip_serializing)]
    pub others: u64,
    pub ignored_errors: u64,
    pub reconnects: u64,
    pub cancelled: u64,
    /// Events whose statement ran past --query-timeout.
    #[serde(default)]
    pub timeouts: u64,
    /// Lost-connection errors.
    #[serde(default)]
    pub connection_errors: u64,
    /// Reconnect attempts that failed.
    #[serde(default)]
    pub failed_reconnects: u64,
    /// Arrivals skipped for being later than the late limit (pgbench's
    /// `-L` under `-R`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub skipped: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RateInfo {
    pub target_per_s: f64,
    pub achieved_per_s: f64,
    pub max_queue_length: u64,
    pub unstarted_at_end: u64,
    /// The largest delay of an event's start behind its scheduled arrival.
    #[serde(default)]
    pub max_lag_ms: f64,
}

impl RateInfo {
    /// The achieved rate as a share of the target, in percent.
    pub fn achieved_pct(&self) -> f64 {
        if self.target_per_s > 0.0 {
            self.achieved_per_s / self.target_per_s * 100.0
        } else {
            0.0
        }
    }

    /// True when the run did not keep up with its rate: it ended with a
    /// backlog, or achieved less than 98% of the target.
    pub fn fell_behind(&self) -> bool {
        self.unstarted_at_end > 0 || self.achieved_pct() < 98.0
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct WarmupInfo {
    pub duration_s: f64,
    pub events: u64,
    pub events_per_s: f64,
    pub latency_ms: LatencySummary,
    /// `--warmup-time=auto`: how the warm-up ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auto: Option<AutoWarmupInfo>,
}

/// How an automatic warm-up (`--warmup-time=auto[:MAX]`) ended.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct AutoWarmupInfo {
    /// The rule that decides: `mser+mann-kendall` (docs/test-types.md).
    pub rule: String,
    /// The longest the warm-up could last, in seconds.
    pub max_s: f64,
    /// Seconds into the warm-up from which throughput was steady; None:
    /// it was not steady when the warm-up ended (at `max_s`, or the run
    /// ended first).
    pub steady_since_s: Option<f64>,
    /// Length of one interval of `events_per_s`, in seconds.
    pub interval_s: f64,
    /// The warm-up's interval throughput, in order.
    pub events_per_s: Vec<f64>,
}

impl AutoWarmupInfo {
    /// The rule's name in documents.
    pub const RULE: &'static str = "mser+mann-kendall";
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Fairness {
    pub events_avg: f64,
    pub events_stddev: f64,
    pub time_avg_s: f64,
    pub time_stddev_s: f64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Interval {
    /// End of the interval, seconds since the measurement started.
    pub t_s: f64,
    pub duration_s: f64,
    pub threads: usize,
    /// Under `--stages`: the users that ran events in the interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_users: Option<usize>,
    pub events: u64,
    pub events_per_s: f64,
    /// The declared measures' counts in the interval, by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub counts: BTreeMap<String, u64>,
    /// Documents before version 3: the SQL measures per second (read into
    /// `counts`).
    #[serde(default, skip_serializing)]
    pub queries_per_s: f64,
    #[serde(default, skip_serializing)]
    pub reads_per_s: f64,
    #[serde(default, skip_serializing)]
    pub writes_per_s: f64,
    #[serde(default, skip_serializing)]
    pub others_per_s: f64,
    /// Ignorable errors and lost connections, per second.
    pub errors_per_s: f64,
    /// Successful reconnects per second.
    pub reconnects_per_s: f64,
    /// The interval's errors by driver code, as the run's `errors` counts
    /// them (absent before dbmeter counted them per interval, and when
    /// the interval had none).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub errors: BTreeMap<String, u64>,
    /// Reconnect attempts that failed, per second (a server that is down).
    #[serde(default)]
    pub failed_reconnects_per_s: f64,
    pub latency_ms: LatencySummary,
    /// The HDR histogram of the interval's event latencies (ns), in the
    /// form of the run's (`BASE64;min;max;sum`): intervals of several
    /// processes merge exactly. Empty in documents before version 3.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub latency_histogram: String,
    pub queue_length: Option<u64>,
    pub concurrency: Option<usize>,
    /// Completed events by kind, for workloads that tell kinds apart (tpcc:
    /// new_order, payment, order_status, delivery, stock_level).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events_by_kind: Vec<u64>,
    /// Intended rollbacks in the interval (tpcc's New-Orders), with kinds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollbacks: Option<u64>,
    /// With a rate: the mean lag of the interval's events behind their
    /// intended starts, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_ms: Option<f64>,
    /// Arrivals skipped in the interval (see [`Totals::skipped`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub skipped: u64,
}

impl Interval {
    /// The time label of an interval line: `10s`, or `2.5s` off the second.
    pub fn time_label(&self) -> String {
        if (self.t_s - self.t_s.round()).abs() < 0.005 {
            format!("{}s", self.t_s.round() as u64)
        } else {
            format!("{:.1}s", self.t_s)
        }
    }

    /// Measure `name` per second in the interval (0 when not counted).
    pub fn per_s(&self, name: &str) -> f64 {
        let n = self.counts.get(name).copied().unwrap_or(0);
        if self.duration_s > 0.0 {
            n as f64 / self.duration_s
        } else {
            0.0
        }
    }

    /// SQL statements per second (the SQL measures' sum).
    pub fn queries_per_s(&self) -> f64 {
        sql::MEASURES.iter().map(|m| self.per_s(m.name)).sum()
    }

    /// The interval's latency histogram (None in documents before version
    /// 3, or when it does not read).
    pub fn histogram(&self) -> Option<LatencyHistogram> {
        (!self.latency_histogram.is_empty())
            .then(|| LatencyHistogram::from_base64(&self.latency_histogram).ok())
            .flatten()
    }

    /// What an interval line adds while reconnects fail (the server is
    /// down): ` failed reconn/s: 9.00`, else nothing.
    pub fn failed_reconnects_note(&self) -> String {
        if self.failed_reconnects_per_s > 0.0 {
            format!(" failed reconn/s: {:.2}", self.failed_reconnects_per_s)
        } else {
            String::new()
        }
    }

    /// `n` over the interval's length, per minute.
    pub fn per_min(&self, n: u64) -> f64 {
        if self.duration_s > 0.0 {
            n as f64 * 60.0 / self.duration_s
        } else {
            0.0
        }
    }
}

/// A command a campaign ran around a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HookRecord {
    /// before_campaign, before_run, after_run, after_campaign.
    pub when: String,
    pub command: String,
    pub ok: bool,
    /// Exit code of a shell command.
    #[serde(default)]
    pub exit_code: Option<i32>,
    /// Standard output and error (shell), or the outcome (SQL).
    #[serde(default)]
    pub output: String,
}

impl RunDocument {
    /// Reads a document of any schema version; the error says what is wrong.
    pub fn from_json(json: &str) -> Result<RunDocument, String> {
        let v: serde_json::Value = serde_json::from_str(json)
            .map_err(|e| format!("not a dbmeter run document: the text is not JSON ({e})"))?;
        if !v.is_object() {
            return Err("not a dbmeter run document: expected a JSON object".into());
        }
        match v.get("schema").and_then(serde_json::Value::as_str) {
            Some(SCHEMA_NAME) => {}
            Some(other) => {
                return Err(format!(
                    "not a dbmeter run document: its schema is '{other}', expected '{SCHEMA_NAME}'"
                ));
            }
            None => {
                return Err(format!(
                    "not a dbmeter run document: it has no \"schema\": \"{SCHEMA_NAME}\" field"
                ));
            }
        }
        if v.get("workload")
            .and_then(serde_json::Value::as_str)
            .is_none_or(str::is_empty)
        {
            return Err("the run document names no workload (field \"workload\")".into());
        }
        if v.pointer("/end/reason")
            .and_then(serde_json::Value::as_str)
            .is_none_or(str::is_empty)
        {
            return Err(
                "the run document has no end reason (field \"end\": {\"reason\": ...})".into(),
            );
        }
        let mut doc: RunDocument =
            serde_json::from_value(v).map_err(|e| format!("a damaged run document: {e}"))?;
        doc.upgrade();
        Ok(doc)
    }

    /// A document before version 3 counted SQL statements in fixed fields
    /// (`totals.reads`, interval `reads_per_s`): they become the SQL
    /// measures' counts, as version 3 keeps them.
    fn upgrade(&mut self) {
        if self.schema_version >= 3 || !self.measures.is_empty() {
            return;
        }
        let t = &mut self.totals;
        if t.queries == 0 && t.reads + t.writes + t.others == 0 {
            return;
        }
        self.measures = sql::MEASURES.iter().map(|m| m.info()).collect();
        for (m, n) in sql::MEASURES.iter().zip([t.reads, t.writes, t.others]) {
            t.counts.insert(m.name.to_string(), n);
        }
        for i in &mut self.intervals {
            for (m, r) in sql::MEASURES
                .iter()
                .zip([i.reads_per_s, i.writes_per_s, i.others_per_s])
            {
                i.counts
                    .insert(m.name.to_string(), (r * i.duration_s).round() as u64);
            }
        }
    }

    /// True when the run declared the SQL measures: its reports speak of
    /// SQL statements and queries.
    pub fn issues_sql(&self) -> bool {
        sql::is_sql(self.measures.iter().map(|m| m.name.as_str()))
    }

    /// The total of measure `name` (0 when not counted).
    pub fn count(&self, name: &str) -> u64 {
        self.totals.counts.get(name).copied().unwrap_or(0)
    }

    pub fn to_json(&self) -> String {
        // A tree of plain data and maps with string keys always serialises.
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }

    /// The short document of a run that failed before it measured anything
    /// (it could not connect, say), so that the record stays complete.
    pub fn failed_before_start(workload: &str, threads: usize, url: &str, error: &str) -> Self {
        RunDocument {
            schema: SCHEMA_NAME.into(),
            schema_version: SCHEMA_VERSION,
            workload: workload.into(),
            threads,
            target: TargetInfo {
                url: url.into(),
                ..TargetInfo::default()
            },
            end: EndInfo {
                reason: "failed".into(),
                error: Some(error.into()),
            },
            ..RunDocument::default()
        }
    }

    /// True when the run ran to its end (see [`COMPLETED_REASONS`]).
    pub fn completed(&self) -> bool {
        is_completed(&self.end.reason)
    }

    /// The run's latency histogram (empty when the document has none).
    pub fn histogram(&self) -> Option<LatencyHistogram> {
        LatencyHistogram::from_base64(&self.latency_histogram).ok()
    }

    /// Percentile `p` of the run's event latency in ms: from the reported
    /// percentiles when `--percentile` included it, else from the HDR
    /// histogram. None when the run measured nothing.
    pub fn latency_percentile_ms(&self, p: f64) -> Option<f64> {
        self.latency_ms.get(p).or_else(|| {
            self.histogram()
                .filter(|h| h.count() > 0)
                .map(|h| h.percentile(p) as f64 / 1e6)
        })
    }

    /// The benchmark section under `key`, read as the benchmark's type.
    /// None when the document has no such section or it does not read.
    pub fn section<T: serde::de::DeserializeOwned>(&self, key: &str) -> Option<T> {
        serde_json::from_value(self.sections.get(key)?.clone()).ok()
    }

    /// Sets the benchmark section under `key`.
    pub fn set_section<T: Serialize>(&mut self, key: &str, value: &T) {
        if let Ok(v) = serde_json::to_value(value) {
            self.sections.insert(key.to_string(), v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_cell_needs_few_fields() {
        let d = RunDocument::from_json(
            r#"{"schema":"dbmeter.run","schema_version":1,"workload":"oltp_read_only","threads":4,
                "target":{"url":"mysql://u:***@h:3306/db"},"end":{"reason":"failed","error":"boom"}}"#,
        )
        .unwrap();
        assert_eq!(d.workload, "oltp_read_only");
        assert_eq!(d.threads, 4);
        assert_eq!(d.end.error.as_deref(), Some("boom"));
        assert!(!d.completed());
        assert_eq!(d.latency_percentile_ms(99.0), None);
    }

    #[test]
    fn percentiles_from_the_list_or_the_histogram() {
        let mut h = LatencyHistogram::new();
        for ms in 1..=1000u64 {
            h.record(ms * 1_000_000);
        }
        let doc = serde_json::json!({
            "schema": "dbmeter.run", "workload": "w", "end": {"reason": "time_limit"},
            "latency_ms": {"count": 1000, "min_ms": 1.0, "avg_ms": 500.5, "max_ms": 1000.0,
                "sum_ms": 1.0, "percentiles": [{"percentile": 95.0, "ms": 1.5}]},
            "latency_histogram": h.to_base64(),
        });
        let d = RunDocument::from_json(&doc.to_string()).unwrap();
        assert_eq!(d.latency_percentile_ms(95.0), Some(1.5));
        let p99 = d.latency_percentile_ms(99.0).unwrap();
        assert!((p99 - 990.0).abs() < 1.0, "{p99}");
    }

    #[test]
    fn sections_round_trip_under_their_key() {
        let mut d = RunDocument::failed_before_start("tpcc", 2, "", "x");
        d.set_section("tpcc", &serde_json::json!({"nopm": 12.5}));
        let back = RunDocument::from_json(&d.to_json()).unwrap();
        let v: serde_json::Value = back.section("tpcc").unwrap();
        assert_eq!(v["nopm"], 12.5);
        assert!(d.to_json().contains("\"tpcc\": {"));
    }

    #[test]
    fn refuses_other_text() {
        for (doc, want) in [
            ("hello", "not JSON"),
            ("[1]", "JSON object"),
            (r#"{"schema":"other"}"#, "'other'"),
            (r#"{"a":1}"#, "no \"schema\""),
            (r#"{"schema":"dbmeter.run"}"#, "no workload"),
            (r#"{"schema":"dbmeter.run","workload":"w"}"#, "end reason"),
        ] {
            let e = RunDocument::from_json(doc).unwrap_err();
            assert!(e.contains(want), "{doc}: {e}");
        }
    }
}
