//! What `dbmeter merge` carries over beyond counts and histograms: the
//! shards' warm-ups, their client machines' OS figures, the server's
//! counters, the outages and the hosts' counts. Each has its own rule
//! (docs/shards.md, "What else the merge carries over"): what adds up
//! across client processes is summed, what one server or one machine
//! counted once is not counted N times, and what is a shard's own is
//! kept per shard.

use super::{MAX_START_SPREAD_S, MergeInfo};
use crate::outages::Outage;
use crate::{AutoWarmupInfo, HostCount, RunDocument, WarmupInfo};
use dbmeter_env::record::UPTIME_COUNTERS;
use dbmeter_env::sampler::CpuPct;
use dbmeter_env::{CounterRecord, Number, OsRecord, OsSample};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The shards' warm-ups (`merged.warmup`): each shard's, and whether
/// they agree.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MergedWarmup {
    /// Every shard warmed up the same way: none did; or each for the same
    /// time (within [`MAX_START_SPREAD_S`]); or each automatically with
    /// the same limit, all steady (or none), their warm-ups' lengths
    /// within one interval (at least [`MAX_START_SPREAD_S`]) of each other.
    pub agree: bool,
    /// Why they do not agree (absent when they do).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disagreement: Option<String>,
    /// In shard order.
    pub shards: Vec<ShardWarmup>,
}

/// One shard's warm-up.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ShardWarmup {
    pub index: u64,
    /// `none`, `fixed` (`--warmup-time=S`) or `auto`
    /// (`--warmup-time=auto[:MAX]`).
    pub mode: String,
    pub duration_s: f64,
    pub events: u64,
    pub events_per_s: f64,
    /// `auto`: the rule that decided.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// `auto`: the longest it could last, in seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_s: Option<f64>,
    /// `auto`: seconds into the warm-up from which throughput was
    /// steady; absent when it was not steady.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steady_since_s: Option<f64>,
}

/// The client machines' OS figures (`merged.os`): each shard's summary,
/// and the sums of what adds up across client machines.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MergedOs {
    /// Client machines, told apart by host name (shards without one count
    /// as a machine each).
    pub machines: usize,
    /// The CPU of every shard's dbmeter process, in percent of one CPU:
    /// each shard's mean, summed (absent when no shard measured it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_cpu_pct: Option<f64>,
    /// Network and disk traffic of the client machines, summed over the
    /// machines (each machine counted once, from its first shard).
    pub net_rx_bytes_per_s: f64,
    pub net_tx_bytes_per_s: f64,
    pub disk_read_kb_per_s: f64,
    pub disk_write_kb_per_s: f64,
    /// In shard order; the shards without OS figures are absent.
    pub shards: Vec<ShardOs>,
}

/// One shard's OS figures: the means of its samples (machine-wide,
/// unless said otherwise).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ShardOs {
    pub index: u64,
    /// The client machine's host name.
    pub host: String,
    pub samples: usize,
    pub interval_s: f64,
    pub cpu: CpuPct,
    pub max_steal_pct: f64,
    /// This shard's dbmeter process, in percent of one CPU.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_cpu_pct: Option<f64>,
    /// A server on this machine, in percent of one CPU.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_cpu_pct: Option<f64>,
    pub context_switches_per_s: f64,
    pub run_queue: f64,
    pub mem_used_bytes_max: u64,
    pub swap_used_bytes_max: u64,
    pub net_rx_bytes_per_s: f64,
    pub net_tx_bytes_per_s: f64,
    pub disk_read_kb_per_s: f64,
    pub disk_write_kb_per_s: f64,
}

/// How the server's counters were merged (`merged.counters`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MergedCounters {
    /// `union`: the shards read one server, and the document's `counters`
    /// span from the earliest reading before the run to the latest after
    /// it; `per_shard`: they read different servers, the document has no
    /// `counters` and each shard's deltas are in `shards`.
    pub rule: String,
    /// `union`: the shards whose readings before and after make the window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before_from_shard: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after_from_shard: Option<u64>,
    /// Shards that have no counters (they could not read them).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub without: Vec<u64>,
    /// `per_shard`: each shard's server and deltas.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub shards: Vec<ShardCounters>,
}

/// One shard's server counters, when the shards read different servers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ShardCounters {
    pub index: u64,
    /// What tells its server apart (target, version, identity variables).
    pub server: String,
    pub restarted: bool,
    pub other_sessions: u64,
    pub delta: BTreeMap<String, Number>,
}

fn index(d: &RunDocument) -> u64 {
    d.shard.as_ref().map_or(0, |s| s.index)
}

/// Carries the warm-ups, OS figures, server counters, outages and hosts
/// of the shards (`input`, in shard order, whose measurements started at
/// `starts`, the earliest at `origin`) into the merged document `doc`,
/// whose intervals are already merged, and into `info`.
pub(super) fn carry_over(
    input: &[(String, RunDocument)],
    starts: &[f64],
    origin: f64,
    doc: &mut RunDocument,
    info: &mut MergeInfo,
) {
    let docs: Vec<&RunDocument> = input.iter().map(|(_, d)| d).collect();
    if let Some((w, m)) = merge_warmups(&docs, starts) {
        if let Some(why) = &m.disagreement {
            info.notes
                .push(format!("the shards' warm-ups differ: {why}"));
        }
        doc.warmup = Some(w);
        info.warmup = Some(m);
    }
    info.os = merge_os(&docs);
    let (counters, merged) = merge_counters(&docs, starts);
    if let Some(m) = &merged
        && m.rule == "per_shard"
    {
        info.notes.push(
            "the shards read different servers' counters: they are kept per shard (merged.counters), not summed"
                .into(),
        );
    }
    doc.counters = counters;
    info.counters = merged;
    doc.outages = merge_outages(&docs, starts, origin);
    let tolerance = docs
        .iter()
        .flat_map(|d| d.outages.first())
        .map(|o| o.tolerance_pct)
        .next()
        .unwrap_or(0.0);
    let mut outages = std::mem::take(&mut doc.outages);
    crate::outages::recover(doc, &mut outages, tolerance);
    doc.outages = outages;
    doc.hosts = merge_hosts(&docs);
}

fn warmup_mode(w: Option<&WarmupInfo>) -> &'static str {
    match w {
        None => "none",
        Some(w) if w.auto.is_some() => "auto",
        Some(_) => "fixed",
    }
}

/// The merged run's warm-up (events summed, from the earliest shard's
/// warm-up start to the latest measurement start by the wall clock) and
/// each shard's; None when no shard warmed up.
pub fn merge_warmups(docs: &[&RunDocument], starts: &[f64]) -> Option<(WarmupInfo, MergedWarmup)> {
    if docs.iter().all(|d| d.warmup.is_none()) {
        return None;
    }
    let shards: Vec<ShardWarmup> = docs
        .iter()
        .map(|d| {
            let w = d.warmup.as_ref();
            let a = w.and_then(|w| w.auto.as_ref());
            ShardWarmup {
                index: index(d),
                mode: warmup_mode(w).into(),
                duration_s: w.map_or(0.0, |w| w.duration_s),
                events: w.map_or(0, |w| w.events),
                events_per_s: w.map_or(0.0, |w| w.events_per_s),
                rule: a.map(|a| a.rule.clone()),
                max_s: a.map(|a| a.max_s),
                steady_since_s: a.and_then(|a| a.steady_since_s),
            }
        })
        .collect();
    let disagreement = warmup_disagreement(docs, &shards);
    // The span: from the earliest warm-up start to the latest
    // measurement start.
    let first = docs
        .iter()
        .zip(starts)
        .map(|(d, s)| s - d.warmup.as_ref().map_or(0.0, |w| w.duration_s))
        .fold(f64::INFINITY, f64::min);
    let last = starts.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let duration_s = (last - first).max(0.0);
    let events: u64 = shards.iter().map(|s| s.events).sum();
    let autos: Vec<&AutoWarmupInfo> = docs
        .iter()
        .filter_map(|d| d.warmup.as_ref().and_then(|w| w.auto.as_ref()))
        .collect();
    let auto = (autos.len() == docs.len()).then(|| {
        // Summed interval by interval from each shard's release: the
        // merged run's throughput when the shards were let go together.
        let mut series: Vec<f64> = Vec::new();
        for a in &autos {
            if series.len() < a.events_per_s.len() {
                series.resize(a.events_per_s.len(), 0.0);
            }
            for (x, y) in series.iter_mut().zip(&a.events_per_s) {
                *x += y;
            }
        }
        let steady: Option<Vec<f64>> = autos.iter().map(|a| a.steady_since_s).collect();
        AutoWarmupInfo {
            rule: autos[0].rule.clone(),
            max_s: autos.iter().map(|a| a.max_s).fold(0.0, f64::max),
            // Steady once every shard was.
            steady_since_s: steady.map(|v| v.into_iter().fold(0.0, f64::max)),
            interval_s: autos[0].interval_s,
            events_per_s: series,
        }
    });
    let merged = WarmupInfo {
        duration_s,
        events,
        events_per_s: super::per_s(events, duration_s),
        latency_ms: Default::default(),
        auto,
    };
    Some((
        merged,
        MergedWarmup {
            agree: disagreement.is_none(),
            disagreement,
            shards,
        },
    ))
}

/// Why the shards' warm-ups do not agree, or None.
fn warmup_disagreement(docs: &[&RunDocument], shards: &[ShardWarmup]) -> Option<String> {
    let list = |f: &dyn Fn(&ShardWarmup) -> String| {
        shards
            .iter()
            .map(|s| format!("shard {}: {}", s.index, f(s)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let first = &shards[0].mode;
    if shards.iter().any(|s| &s.mode != first) {
        return Some(format!(
            "not all warmed up the same way ({})",
            list(&|s| match s.mode.as_str() {
                "none" => "none".into(),
                m => format!("{m}, {:.3} s", s.duration_s),
            })
        ));
    }
    let spread = |v: &mut dyn Iterator<Item = f64>| {
        let v: Vec<f64> = v.collect();
        v.iter().copied().fold(f64::NEG_INFINITY, f64::max)
            - v.iter().copied().fold(f64::INFINITY, f64::min)
    };
    match first.as_str() {
        "fixed" => {
            (spread(&mut shards.iter().map(|s| s.duration_s)) > MAX_START_SPREAD_S).then(|| {
                format!(
                    "their lengths differ by more than {MAX_START_SPREAD_S} s ({})",
                    list(&|s| format!("{:.3} s", s.duration_s))
                )
            })
        }
        "auto" => {
            let interval = docs
                .iter()
                .filter_map(|d| d.warmup.as_ref()?.auto.as_ref().map(|a| a.interval_s))
                .fold(MAX_START_SPREAD_S, f64::max);
            let steady = shards.iter().filter(|s| s.steady_since_s.is_some()).count();
            if spread(&mut shards.iter().map(|s| s.max_s.unwrap_or(0.0))) > 0.0 {
                Some(format!(
                    "their limits differ ({})",
                    list(&|s| format!("at most {} s", s.max_s.unwrap_or(0.0)))
                ))
            } else if steady != 0 && steady != shards.len() {
                Some(format!(
                    "some became steady and some did not ({})",
                    list(&|s| match s.steady_since_s {
                        Some(t) => format!("steady from {t:.1} s"),
                        None => format!("not steady after {:.1} s", s.duration_s),
                    })
                ))
            } else if spread(&mut shards.iter().map(|s| s.duration_s)) > interval {
                Some(format!(
                    "their lengths differ by more than {interval} s ({})",
                    list(&|s| format!("{:.3} s", s.duration_s))
                ))
            } else {
                None
            }
        }
        _ => None,
    }
}

fn shard_os(index: u64, host: &str, os: &OsRecord) -> ShardOs {
    let s = &os.samples;
    let mean = |f: fn(&OsSample) -> f64| os.mean(|x| Some(f(x))).unwrap_or(0.0);
    ShardOs {
        index,
        host: host.to_string(),
        samples: s.len(),
        interval_s: os.interval_s,
        cpu: os.mean_cpu().unwrap_or_default(),
        max_steal_pct: os.max_steal(),
        client_cpu_pct: os.mean_client_cpu(),
        server_cpu_pct: os.mean_server_cpu(),
        context_switches_per_s: mean(|x| x.context_switches_per_s),
        run_queue: mean(|x| x.run_queue as f64),
        mem_used_bytes_max: s.iter().map(|x| x.mem_used_bytes).max().unwrap_or(0),
        swap_used_bytes_max: s.iter().map(|x| x.swap_used_bytes).max().unwrap_or(0),
        net_rx_bytes_per_s: mean(|x| x.net.iter().map(|n| n.rx_bytes_per_s).sum()),
        net_tx_bytes_per_s: mean(|x| x.net.iter().map(|n| n.tx_bytes_per_s).sum()),
        disk_read_kb_per_s: mean(|x| x.disks.iter().map(|d| d.rkb_per_s).sum()),
        disk_write_kb_per_s: mean(|x| x.disks.iter().map(|d| d.wkb_per_s).sum()),
    }
}

/// Each shard's OS figures summed up, and the sums of what adds up
/// across client machines; None when no shard has OS figures.
pub fn merge_os(docs: &[&RunDocument]) -> Option<MergedOs> {
    let shards: Vec<ShardOs> = docs
        .iter()
        .filter_map(|d| {
            let os = d.os.as_ref()?;
            Some(shard_os(index(d), &d.environment.hostname, os))
        })
        .collect();
    if shards.is_empty() {
        return None;
    }
    let mut m = MergedOs::default();
    let mut seen: Vec<&str> = Vec::new();
    for s in &shards {
        if !s.host.is_empty() && seen.contains(&s.host.as_str()) {
            continue;
        }
        seen.push(&s.host);
        m.machines += 1;
        m.net_rx_bytes_per_s += s.net_rx_bytes_per_s;
        m.net_tx_bytes_per_s += s.net_tx_bytes_per_s;
        m.disk_read_kb_per_s += s.disk_read_kb_per_s;
        m.disk_write_kb_per_s += s.disk_write_kb_per_s;
    }
    let cpu: Vec<f64> = shards.iter().filter_map(|s| s.client_cpu_pct).collect();
    m.client_cpu_pct = (!cpu.is_empty()).then(|| cpu.iter().sum());
    m.shards = shards;
    Some(m)
}

/// The server variables that tell one server from another.
const IDENTITY_VARIABLES: &[&str] = &[
    "server_uuid",
    "hostname",
    "port",
    "datadir",
    "data_directory",
    "cluster_name",
];

/// What tells the server a shard read apart: its target, version and
/// identity variables (whichever it has).
pub fn server_identity(d: &RunDocument) -> String {
    let mut parts = vec![d.target.url.clone()];
    if let Some(s) = &d.server {
        parts.push(s.version.clone());
        for v in IDENTITY_VARIABLES {
            if let Some(x) = s.variables.get(*v) {
                parts.push(format!("{v}={x}"));
            }
        }
    }
    parts.join(" ")
}

fn uptime(m: &BTreeMap<String, String>) -> Option<f64> {
    UPTIME_COUNTERS
        .iter()
        .find_map(|k| m.get(*k)?.trim().parse::<f64>().ok())
}

/// The server counters of the merged run and how they were merged.
/// Shards that read one server: one window, from the earliest reading
/// before to the latest after (ordered by the server's uptime when every
/// reading has it, else by the shards' clocks); a server restart in any
/// shard's window, or across the union, leaves the deltas out. Shards
/// that read different servers: no counters, each shard's in
/// [`MergedCounters::shards`].
pub fn merge_counters(
    docs: &[&RunDocument],
    starts: &[f64],
) -> (Option<CounterRecord>, Option<MergedCounters>) {
    let have: Vec<(usize, &CounterRecord)> = docs
        .iter()
        .enumerate()
        .filter_map(|(i, d)| d.counters.as_ref().map(|c| (i, c)))
        .collect();
    if have.is_empty() {
        return (None, None);
    }
    let without: Vec<u64> = docs
        .iter()
        .filter(|d| d.counters.is_none())
        .map(|d| index(d))
        .collect();
    let servers: Vec<String> = have
        .iter()
        .map(|(i, _)| server_identity(docs[*i]))
        .collect();
    if servers.iter().any(|s| *s != servers[0]) {
        let shards = have
            .iter()
            .zip(servers)
            .map(|((i, c), server)| ShardCounters {
                index: index(docs[*i]),
                server,
                restarted: c.restarted,
                other_sessions: c.other_sessions,
                delta: c.delta.clone(),
            })
            .collect();
        return (
            None,
            Some(MergedCounters {
                rule: "per_shard".into(),
                without,
                shards,
                ..MergedCounters::default()
            }),
        );
    }
    // The shards' clocks: when each read before (its warm-up's start at
    // the latest) and after (its measurement's end at the earliest).
    let before_at = |i: usize| starts[i] - docs[i].warmup.as_ref().map_or(0.0, |w| w.duration_s);
    let after_at = |i: usize| starts[i] + docs[i].totals.duration_s;
    let by_uptime = have
        .iter()
        .all(|(_, c)| uptime(&c.before).is_some() && uptime(&c.after).is_some());
    let key = |t: Option<f64>, clock: f64| (if by_uptime { t.unwrap_or(0.0) } else { 0.0 }, clock);
    let first = have
        .iter()
        .min_by(|a, b| {
            key(uptime(&a.1.before), before_at(a.0))
                .partial_cmp(&key(uptime(&b.1.before), before_at(b.0)))
                .unwrap_or(std::cmp::Ordering::Equal)
        })
        .map(|(i, c)| (*i, *c));
    let last = have
        .iter()
        .max_by(|a, b| {
            key(uptime(&a.1.after), after_at(a.0))
                .partial_cmp(&key(uptime(&b.1.after), after_at(b.0)))
                .unwrap_or(std::cmp::Ordering::Equal)
        })
        .map(|(i, c)| (*i, *c));
    let (Some((fi, fc)), Some((li, lc))) = (first, last) else {
        return (None, None);
    };
    // The shards' clocks say at least this much passed between the two
    // readings (less than really did: no false restart).
    let elapsed = (after_at(li) - before_at(fi)).max(0.0);
    let mut record = CounterRecord::new(fc.before.clone(), lc.after.clone(), elapsed);
    let across = by_uptime && restarted_across(&have, &before_at, &after_at);
    if (across || have.iter().any(|(_, c)| c.restarted)) && !record.restarted {
        record.restarted = true;
        record.delta.clear();
    }
    // Each shard's count includes the other shards' busy sessions: the
    // fewest any shard saw is the most that were not the run's own.
    record.other_sessions = have
        .iter()
        .map(|(_, c)| c.other_sessions)
        .min()
        .unwrap_or(0);
    (
        Some(record),
        Some(MergedCounters {
            rule: "union".into(),
            before_from_shard: Some(index(docs[fi])),
            after_from_shard: Some(index(docs[li])),
            without,
            shards: Vec::new(),
        }),
    )
}

/// How far apart (in seconds) the server's start may seem from two
/// readings of one server's life: the shards' clocks tell only roughly
/// when a reading was taken (before the users were let go, after the
/// measurement ended).
const SERVER_START_SLACK_S: f64 = 30.0;

/// Whether the readings of `have` come from different lives of the
/// server (it restarted between two shards' windows): the server's start
/// that each reading implies (its time by the shard's clock less its
/// uptime) differs by more than [`SERVER_START_SLACK_S`].
fn restarted_across(
    have: &[(usize, &CounterRecord)],
    before_at: &dyn Fn(usize) -> f64,
    after_at: &dyn Fn(usize) -> f64,
) -> bool {
    let starts: Vec<f64> = have
        .iter()
        .flat_map(|(i, c)| {
            [
                uptime(&c.before).map(|u| before_at(*i) - u),
                uptime(&c.after).map(|u| after_at(*i) - u),
            ]
        })
        .flatten()
        .collect();
    let lo = starts.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = starts.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    hi - lo > SERVER_START_SLACK_S
}

/// The shards' outages by the wall clock: outages whose spans overlap
/// (an outage still going on when its shard ended lasts until that end)
/// are one, from the earliest start to the latest end, with their events
/// lost summed; it is not over when a shard still down at its end ended
/// after every other shard's outage in it was over. Their starts are
/// from the merged measurement's start (`origin`); the recovery is left
/// to [`crate::outages::recover`] on the merged intervals.
pub fn merge_outages(docs: &[&RunDocument], starts: &[f64], origin: f64) -> Vec<Outage> {
    struct Span<'a> {
        start: f64,
        /// Its end, or (not over) its shard's end.
        until: f64,
        open: bool,
        outage: &'a Outage,
    }
    /// The outage being made of overlapping spans.
    struct Group {
        start: f64,
        /// The latest end of its spans that were over, and of those that
        /// were not.
        closed: Option<f64>,
        open: Option<f64>,
        /// The sums and the errors of its spans; the connect time of the
        /// span that was over last.
        merged: Outage,
    }
    impl Group {
        fn end(&self) -> f64 {
            self.closed
                .unwrap_or(f64::NEG_INFINITY)
                .max(self.open.unwrap_or(f64::NEG_INFINITY))
        }
        fn add(&mut self, sp: &Span) {
            let slot = if sp.open {
                &mut self.open
            } else {
                &mut self.closed
            };
            let later = slot.is_none_or(|x| sp.until > x);
            *slot = Some(slot.map_or(sp.until, |x| x.max(sp.until)));
            if !sp.open && later {
                self.merged.connect_s = sp.outage.connect_s;
            }
            self.merged.events_lost += sp.outage.events_lost;
            self.merged.failed_attempts += sp.outage.failed_attempts;
            for e in &sp.outage.errors {
                crate::outages::add_attempt_error(&mut self.merged.errors, &e.error, e.attempts);
            }
        }
        fn close(mut self, origin: f64) -> Outage {
            let over = match (self.closed, self.open) {
                (Some(c), Some(o)) => (c >= o).then_some(c),
                (c, None) => c,
                (None, Some(_)) => None,
            };
            self.merged.start_s = self.start - origin;
            self.merged.length_s = over.map(|e| (e - self.start).max(0.0));
            if over.is_none() {
                self.merged.connect_s = None;
            }
            self.merged
        }
    }
    let mut spans: Vec<Span> = docs
        .iter()
        .zip(starts)
        .flat_map(|(d, s)| {
            let shard_end = s + d.totals.duration_s;
            d.outages.iter().map(move |o| {
                let start = s + o.start_s;
                Span {
                    start,
                    until: o.end_s().map_or(shard_end.max(start), |e| s + e),
                    open: o.length_s.is_none(),
                    outage: o,
                }
            })
        })
        .collect();
    spans.sort_by(|a, b| a.start.total_cmp(&b.start));
    let mut out: Vec<Outage> = Vec::new();
    let mut group: Option<Group> = None;
    for sp in spans {
        match group.as_mut() {
            Some(g) if sp.start <= g.end() + 1e-9 => g.add(&sp),
            _ => {
                if let Some(g) = group.take() {
                    out.push(g.close(origin));
                }
                let mut g = Group {
                    start: sp.start,
                    closed: None,
                    open: None,
                    merged: Outage::default(),
                };
                g.add(&sp);
                group = Some(g);
            }
        }
    }
    if let Some(g) = group {
        out.push(g.close(origin));
    }
    out
}

/// The hosts' counts summed by host, in the order the shards name them.
pub fn merge_hosts(docs: &[&RunDocument]) -> Vec<HostCount> {
    let mut out: Vec<HostCount> = Vec::new();
    for h in docs.iter().flat_map(|d| &d.hosts) {
        match out.iter_mut().find(|x| x.host == h.host) {
            Some(x) => {
                x.users += h.users;
                x.events += h.events;
                x.errors += h.errors;
                x.connections += h.connections;
            }
            None => out.push(h.clone()),
        }
    }
    out
}

#[cfg(test)]
mod tests;
