//! What the events of the runs say, kept as Prometheus metrics, and their
//! exposition text.
//!
//! Series are keyed by their labels: `workload` and `target` (the run's
//! target, its password masked; a campaign's target name in a campaign,
//! which adds `campaign`). Counters add up every run with the same labels
//! (a campaign's repeats, a capacity search's steps), as Prometheus
//! counters do; gauges say what the last interval measured.
//!
//! Counters grow with each interval. When a run finishes, its document's
//! totals are the truth: whatever the intervals had not counted yet is
//! added then, so that a counter's last value matches the run's result.

use dbmeter_result::{Interval, RunDocument, RunEvent, RunHeader};
use dbmeter_stats::LatencyHistogram;
use dbmeter_stats::measure::sql;
use prometheus::proto::{
    Bucket, Counter, Gauge, Histogram, LabelPair, Metric, MetricFamily, MetricType, Quantile,
    Summary,
};
use std::collections::BTreeMap;

/// The upper bounds of the latency histogram's buckets, in seconds: 100
/// µs to a minute, about three a decade (`+Inf` is added).
pub const BUCKETS_S: [f64; 18] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    5.0, 10.0, 30.0, 60.0,
];

/// The cell a campaign runs now, as its labels say it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CellLabels {
    /// The campaign target's name.
    pub target: String,
    pub workload: String,
    pub clients: u32,
    /// From 1.
    pub repeat: u32,
}

/// Where a campaign stands.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CampaignProgress {
    pub campaign: String,
    /// Cells ended (stored, failed) of those this invocation runs.
    pub done: usize,
    /// Cells this invocation runs (without those `--resume` skips).
    pub total: usize,
    /// The cell running now, if one is.
    pub current: Option<CellLabels>,
}

/// The labels of a run's series, in order.
type Labels = Vec<(&'static str, String)>;

/// The latency histogram of a series: cumulative bucket counts (one per
/// [`BUCKETS_S`]), count and sum.
#[derive(Clone, Debug, Default, PartialEq)]
struct Buckets {
    counts: Vec<u64>,
    count: u64,
    sum_s: f64,
}

impl Buckets {
    fn of(h: &LatencyHistogram) -> Buckets {
        Buckets {
            counts: BUCKETS_S
                .iter()
                .map(|s| h.count_up_to((s * 1e9).round() as u64))
                .collect(),
            count: h.count(),
            sum_s: h.sum() as f64 / 1e9,
        }
    }

    fn add(&mut self, o: &Buckets) {
        self.counts.resize(BUCKETS_S.len(), 0);
        for (a, b) in self.counts.iter_mut().zip(&o.counts) {
            *a += b;
        }
        self.count += o.count;
        self.sum_s += o.sum_s;
    }

    /// What `whole` has beyond `part` (bucket by bucket, none below 0).
    fn beyond(whole: &Buckets, part: &Buckets) -> Buckets {
        Buckets {
            counts: whole
                .counts
                .iter()
                .enumerate()
                .map(|(i, w)| w.saturating_sub(part.counts.get(i).copied().unwrap_or(0)))
                .collect(),
            count: whole.count.saturating_sub(part.count),
            sum_s: (whole.sum_s - part.sum_s).max(0.0),
        }
    }
}

/// The counters of a series (or of one run, to settle with its document).
#[derive(Clone, Debug, Default, PartialEq)]
struct Counts {
    events: u64,
    kinds: BTreeMap<String, u64>,
    /// SQL statements by type (read, write, other).
    queries: BTreeMap<&'static str, u64>,
    /// Other declared measures, by name.
    measures: BTreeMap<String, u64>,
    errors: BTreeMap<String, u64>,
    reconnects: u64,
    reconnect_failures: u64,
    latency: Buckets,
}

/// The type label of an SQL measure (`reads` → `read`), if it is one.
fn query_type(measure: &str) -> Option<&'static str> {
    sql::MEASURES
        .iter()
        .find(|m| m.name == measure)
        .map(|m| m.label)
}

fn add_map<K: Ord + Clone>(into: &mut BTreeMap<K, u64>, k: &K, n: u64) {
    *into.entry(k.clone()).or_insert(0) += n;
}

/// What `whole` has beyond `part`, key by key.
fn beyond_map<K: Ord + Clone>(
    whole: &BTreeMap<K, u64>,
    part: &BTreeMap<K, u64>,
) -> BTreeMap<K, u64> {
    whole
        .iter()
        .map(|(k, n)| {
            (
                k.clone(),
                n.saturating_sub(part.get(k).copied().unwrap_or(0)),
            )
        })
        .filter(|(_, n)| *n > 0)
        .collect()
}

impl Counts {
    fn add(&mut self, o: &Counts) {
        self.events += o.events;
        for (k, n) in &o.kinds {
            add_map(&mut self.kinds, k, *n);
        }
        for (k, n) in &o.queries {
            add_map(&mut self.queries, k, *n);
        }
        for (k, n) in &o.measures {
            add_map(&mut self.measures, k, *n);
        }
        for (k, n) in &o.errors {
            add_map(&mut self.errors, k, *n);
        }
        self.reconnects += o.reconnects;
        self.reconnect_failures += o.reconnect_failures;
        self.latency.add(&o.latency);
    }

    fn beyond(whole: &Counts, part: &Counts) -> Counts {
        Counts {
            events: whole.events.saturating_sub(part.events),
            kinds: beyond_map(&whole.kinds, &part.kinds),
            queries: beyond_map(&whole.queries, &part.queries),
            measures: beyond_map(&whole.measures, &part.measures),
            errors: beyond_map(&whole.errors, &part.errors),
            reconnects: whole.reconnects.saturating_sub(part.reconnects),
            reconnect_failures: whole
                .reconnect_failures
                .saturating_sub(part.reconnect_failures),
            latency: Buckets::beyond(&whole.latency, &part.latency),
        }
    }

    fn measure(&mut self, name: &str, n: u64) {
        match query_type(name) {
            Some(t) => add_map(&mut self.queries, &t, n),
            None => add_map(&mut self.measures, &name.to_string(), n),
        }
    }

    /// What one interval counted; `kinds`: the run's kind names.
    fn of_interval(i: &Interval, kinds: &[String]) -> Counts {
        let mut c = Counts {
            events: i.events,
            errors: i.errors.clone(),
            // Intervals keep reconnects per second: back to a count.
            reconnects: (i.reconnects_per_s * i.duration_s).round() as u64,
            reconnect_failures: (i.failed_reconnects_per_s * i.duration_s).round() as u64,
            latency: i.histogram().map(|h| Buckets::of(&h)).unwrap_or_default(),
            ..Counts::default()
        };
        for (name, n) in kinds.iter().zip(&i.events_by_kind) {
            c.kinds.insert(name.clone(), *n);
        }
        for (name, n) in &i.counts {
            c.measure(name, *n);
        }
        c
    }

    /// What a run's document counts over its measured time.
    fn of_document(d: &RunDocument) -> Counts {
        let mut c = Counts {
            events: d.totals.events,
            errors: d.errors.clone(),
            reconnects: d.totals.reconnects,
            reconnect_failures: d.totals.failed_reconnects,
            latency: LatencyHistogram::from_base64(&d.latency_histogram)
                .map(|h| Buckets::of(&h))
                .unwrap_or_default(),
            kinds: d.kinds.iter().map(|k| (k.name.clone(), k.events)).collect(),
            ..Counts::default()
        };
        for (name, n) in &d.totals.counts {
            c.measure(name, *n);
        }
        c
    }
}

/// The gauges of a series: what its last interval measured.
#[derive(Clone, Debug, Default)]
struct Gauges {
    /// Whether the series' run is measuring now.
    measuring: bool,
    active_users: Option<f64>,
    /// (quantile from 0 to 1, seconds).
    quantiles: Vec<(f64, f64)>,
    lag_s: Option<f64>,
    queue: Option<u64>,
}

#[derive(Clone, Debug, Default)]
struct Series {
    counts: Counts,
    gauges: Gauges,
    /// Runs ended, by end reason.
    runs: BTreeMap<String, u64>,
}

/// The run going on: its series, and what its intervals counted so far.
#[derive(Debug)]
struct Current {
    labels: Labels,
    kinds: Vec<String>,
    counted: Counts,
}

/// Every series of the process, and the campaign's progress.
#[derive(Debug)]
pub struct State {
    version: String,
    series: BTreeMap<Labels, Series>,
    current: Option<Current>,
    campaign: Option<CampaignProgress>,
    runs_started: u64,
}

/// Milliseconds to seconds, through whole nanoseconds (the histograms'
/// unit): 0.000240639, not 0.00024063899999999998.
fn ms_to_s(ms: f64) -> f64 {
    (ms * 1e6).round() / 1e9
}

/// The quantile of percentile `p`: 0.999 for 99.9, without the float
/// noise of a division (0.9990000000000001), which the label would show.
fn quantile_of(p: f64) -> f64 {
    let q = (p / 100.0 * 1e6).round() / 1e6;
    format!("{q}").parse().unwrap_or(q)
}

impl State {
    pub fn new(version: &str) -> State {
        State {
            version: version.to_string(),
            series: BTreeMap::new(),
            current: None,
            campaign: None,
            runs_started: 0,
        }
    }

    pub fn saw_a_run(&self) -> bool {
        self.runs_started > 0
    }

    pub fn campaign(&mut self, p: CampaignProgress) {
        self.campaign = Some(p);
    }

    fn labels_for(&self, h: &RunHeader) -> Labels {
        match &self.campaign {
            Some(CampaignProgress {
                campaign,
                current: Some(cell),
                ..
            }) => vec![
                ("campaign", campaign.clone()),
                ("target", cell.target.clone()),
                ("workload", h.benchmark.clone()),
            ],
            _ => vec![
                ("target", h.target.clone()),
                ("workload", h.benchmark.clone()),
            ],
        }
    }

    pub fn event(&mut self, event: &RunEvent) {
        match event {
            RunEvent::Started(h) => {
                self.finish_current(None);
                let labels = self.labels_for(h);
                self.series.entry(labels.clone()).or_default();
                self.current = Some(Current {
                    labels,
                    kinds: h.kinds.clone(),
                    counted: Counts::default(),
                });
                self.runs_started += 1;
            }
            RunEvent::Measuring => {
                if let Some(s) = self.current_series() {
                    s.gauges.measuring = true;
                }
            }
            RunEvent::Interval { interval, .. } => self.interval(interval),
            RunEvent::Live(live) => self.interval(&live.interval),
            RunEvent::MeasurementEnded { .. } => {
                if let Some(s) = self.current_series() {
                    s.gauges.measuring = false;
                }
            }
            RunEvent::Finished { doc, .. } => self.finish_current(Some(doc)),
            RunEvent::Note(_) | RunEvent::Warning(_) => {}
        }
    }

    fn current_series(&mut self) -> Option<&mut Series> {
        let c = self.current.as_ref()?;
        self.series.get_mut(&c.labels)
    }

    fn interval(&mut self, i: &Interval) {
        let Some(cur) = self.current.as_mut() else {
            return;
        };
        let counts = Counts::of_interval(i, &cur.kinds);
        cur.counted.add(&counts);
        let labels = cur.labels.clone();
        let s = self.series.entry(labels).or_default();
        s.counts.add(&counts);
        s.gauges.active_users = Some(i.active_users.unwrap_or(i.threads) as f64);
        s.gauges.quantiles = i
            .latency_ms
            .percentiles
            .iter()
            .map(|p| (quantile_of(p.percentile), ms_to_s(p.ms)))
            .collect();
        s.gauges.lag_s = i.lag_ms.map(ms_to_s);
        s.gauges.queue = i.queue_length;
    }

    /// Ends the current run: with its document, what its intervals left
    /// uncounted is added and its end counted.
    fn finish_current(&mut self, doc: Option<&RunDocument>) {
        let Some(cur) = self.current.take() else {
            return;
        };
        let s = self.series.entry(cur.labels).or_default();
        s.gauges.measuring = false;
        s.gauges.active_users = Some(0.0);
        if let Some(d) = doc {
            let rest = Counts::beyond(&Counts::of_document(d), &cur.counted);
            s.counts.add(&rest);
            *s.runs.entry(d.end.reason.clone()).or_insert(0) += 1;
        }
    }

    /// The metric families, in Prometheus' data model.
    pub fn families(&self) -> Vec<MetricFamily> {
        let mut out = Families::default();
        out.gauge(
            "dbmeter_build_info",
            "dbmeter's version (always 1)",
            &[("version", self.version.clone())],
            1.0,
        );
        out.counter(
            "dbmeter_runs_started_total",
            "Runs started by this process",
            &[],
            self.runs_started as f64,
        );
        for (labels, s) in &self.series {
            let with = |k: &'static str, v: &str| -> Labels {
                let mut l = labels.clone();
                l.push((k, v.to_string()));
                l
            };
            let c = &s.counts;
            out.counter(
                "dbmeter_events_total",
                "Events (transactions) completed in the measured time",
                labels,
                c.events as f64,
            );
            for (kind, n) in &c.kinds {
                out.counter(
                    "dbmeter_kind_events_total",
                    "Events completed, by the benchmark's kind of event (tpcc's transactions)",
                    &with("kind", kind),
                    *n as f64,
                );
            }
            for (t, n) in &c.queries {
                out.counter(
                    "dbmeter_queries_total",
                    "SQL statements by type: read (returned rows), write (changed rows), other",
                    &with("type", t),
                    *n as f64,
                );
            }
            for (m, n) in &c.measures {
                out.counter(
                    "dbmeter_measure_total",
                    "The benchmark's own counts beyond events, in the measure's unit (fileio's requests and bytes, pgbench's failures and retries)",
                    &with("measure", m),
                    *n as f64,
                );
            }
            for (code, n) in &c.errors {
                out.counter(
                    "dbmeter_errors_total",
                    "Errors by driver code: ignored errors, lost connections, timeouts",
                    &with("code", code),
                    *n as f64,
                );
            }
            out.counter(
                "dbmeter_reconnects_total",
                "Connections re-established after a lost connection",
                labels,
                c.reconnects as f64,
            );
            out.counter(
                "dbmeter_reconnect_failures_total",
                "Reconnect attempts that failed (the server is down)",
                labels,
                c.reconnect_failures as f64,
            );
            out.histogram(
                "dbmeter_latency_seconds",
                "Event latency (from the intended start under a rate)",
                labels,
                &c.latency,
            );
            for (reason, n) in &s.runs {
                out.counter(
                    "dbmeter_runs_ended_total",
                    "Runs ended, by end reason (time_limit, event_limit, work_done, interrupted, failed)",
                    &with("end", reason),
                    *n as f64,
                );
            }
            let g = &s.gauges;
            out.gauge(
                "dbmeter_measuring",
                "1 while the run measures, else 0",
                labels,
                if g.measuring { 1.0 } else { 0.0 },
            );
            if let Some(u) = g.active_users {
                out.gauge(
                    "dbmeter_active_users",
                    "Virtual users running in the last interval (under --stages: those that ran events)",
                    labels,
                    u,
                );
            }
            if !g.quantiles.is_empty() {
                out.summary(
                    "dbmeter_interval_latency_seconds",
                    "Event latency: the last interval's percentiles (--percentile); count and sum over the whole measured time",
                    labels,
                    &g.quantiles,
                    &c.latency,
                );
            }
            if let Some(lag) = g.lag_s {
                out.gauge(
                    "dbmeter_rate_lag_seconds",
                    "Under --rate: the last interval's mean lag of events behind their intended start",
                    labels,
                    lag,
                );
            }
            if let Some(q) = g.queue {
                out.gauge(
                    "dbmeter_rate_backlog",
                    "Under --rate: arrivals due but not started at the end of the last interval",
                    labels,
                    q as f64,
                );
            }
        }
        if let Some(p) = &self.campaign {
            let l = vec![("campaign", p.campaign.clone())];
            out.gauge(
                "dbmeter_campaign_cells",
                "Cells this campaign invocation runs",
                &l,
                p.total as f64,
            );
            out.gauge(
                "dbmeter_campaign_cells_done",
                "Cells of this invocation that ended (stored or failed)",
                &l,
                p.done as f64,
            );
            if let Some(cell) = &p.current {
                out.gauge(
                    "dbmeter_campaign_cell_info",
                    "The cell running now (always 1; its labels say which)",
                    &[
                        ("campaign", p.campaign.clone()),
                        ("target", cell.target.clone()),
                        ("workload", cell.workload.clone()),
                        ("clients", cell.clients.to_string()),
                        ("repeat", cell.repeat.to_string()),
                    ],
                    1.0,
                );
            }
        }
        out.into_families()
    }

    /// The exposition text (Prometheus' text format 0.0.4).
    pub fn render(&self) -> String {
        prometheus::TextEncoder::new()
            .encode_to_string(&self.families())
            .unwrap_or_else(|e| format!("# dbmeter could not encode its metrics: {e}\n"))
    }
}

/// Metric families being filled, in the order of their first sample.
#[derive(Default)]
struct Families {
    list: Vec<MetricFamily>,
}

fn label_pairs(labels: &[(&'static str, String)]) -> Vec<LabelPair> {
    labels
        .iter()
        .map(|(k, v)| {
            let mut p = LabelPair::default();
            p.set_name(k.to_string());
            p.set_value(v.clone());
            p
        })
        .collect()
}

impl Families {
    fn family(&mut self, name: &str, help: &str, kind: MetricType) -> &mut MetricFamily {
        let at = match self.list.iter().position(|f| f.name() == name) {
            Some(i) => i,
            None => {
                let mut f = MetricFamily::default();
                f.set_name(name.to_string());
                f.set_help(help.to_string());
                f.set_field_type(kind);
                self.list.push(f);
                self.list.len() - 1
            }
        };
        &mut self.list[at]
    }

    fn push(&mut self, name: &str, help: &str, kind: MetricType, m: Metric) {
        self.family(name, help, kind).mut_metric().push(m);
    }

    fn counter(&mut self, name: &str, help: &str, labels: &[(&'static str, String)], v: f64) {
        let mut c = Counter::default();
        c.set_value(v);
        let mut m = Metric::default();
        m.set_label(label_pairs(labels));
        m.set_counter(c);
        self.push(name, help, MetricType::COUNTER, m);
    }

    fn gauge(&mut self, name: &str, help: &str, labels: &[(&'static str, String)], v: f64) {
        let mut g = Gauge::default();
        g.set_value(v);
        let mut m = Metric::default();
        m.set_label(label_pairs(labels));
        m.set_gauge(g);
        self.push(name, help, MetricType::GAUGE, m);
    }

    /// A summary: the quantiles of the last interval, with the count and
    /// sum of the whole histogram `b`.
    fn summary(
        &mut self,
        name: &str,
        help: &str,
        labels: &[(&'static str, String)],
        quantiles: &[(f64, f64)],
        b: &Buckets,
    ) {
        let mut s = Summary::default();
        s.set_sample_count(b.count);
        s.set_sample_sum(b.sum_s);
        s.set_quantile(
            quantiles
                .iter()
                .map(|(q, v)| {
                    let mut x = Quantile::default();
                    x.set_quantile(*q);
                    x.set_value(*v);
                    x
                })
                .collect(),
        );
        let mut m = Metric::default();
        m.set_label(label_pairs(labels));
        m.set_summary(s);
        self.push(name, help, MetricType::SUMMARY, m);
    }

    fn histogram(
        &mut self,
        name: &str,
        help: &str,
        labels: &[(&'static str, String)],
        b: &Buckets,
    ) {
        let mut h = Histogram::default();
        h.set_sample_count(b.count);
        h.set_sample_sum(b.sum_s);
        h.set_bucket(
            BUCKETS_S
                .iter()
                .enumerate()
                .map(|(i, le)| {
                    let mut x = Bucket::default();
                    x.set_upper_bound(*le);
                    x.set_cumulative_count(b.counts.get(i).copied().unwrap_or(0));
                    x
                })
                .collect(),
        );
        let mut m = Metric::default();
        m.set_label(label_pairs(labels));
        m.set_histogram(h);
        self.push(name, help, MetricType::HISTOGRAM, m);
    }

    fn into_families(self) -> Vec<MetricFamily> {
        self.list
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dbmeter_stats::{LatencySummary, Percentile};

    fn header() -> RunHeader {
        RunHeader {
            benchmark: "oltp_read_only".into(),
            target: "sqlite:t.sqlite".into(),
            kinds: vec!["a".into(), "b".into()],
            ..RunHeader::default()
        }
    }

    fn interval(events: u64, latencies_ns: &[u64]) -> Interval {
        let mut h = LatencyHistogram::default();
        for ns in latencies_ns {
            h.record(*ns);
        }
        let mut i = Interval {
            t_s: 1.0,
            duration_s: 1.0,
            threads: 4,
            events,
            reconnects_per_s: 2.0,
            latency_ms: LatencySummary {
                percentiles: vec![Percentile {
                    percentile: 99.9,
                    ms: 2.0,
                }],
                ..LatencySummary::default()
            },
            latency_histogram: h.to_base64(),
            events_by_kind: vec![events - 1, 1],
            ..Interval::default()
        };
        i.counts.insert("reads".into(), 10 * events);
        i.errors.insert("1213".into(), 3);
        i
    }

    fn sample<'a>(text: &'a str, line_start: &str) -> Option<&'a str> {
        text.lines()
            .find(|l| l.starts_with(line_start))
            .and_then(|l| l.rsplit(' ').next())
    }

    #[test]
    fn intervals_add_up_and_the_document_settles_the_rest() {
        let mut s = State::new("1.2.3");
        let h = header();
        s.event(&RunEvent::Started(&h));
        s.event(&RunEvent::Measuring);
        let i = interval(5, &[50_000, 2_000_000, 3_000_000_000]);
        s.event(&RunEvent::Interval {
            interval: &i,
            percentile: 95.0,
            words: None,
        });
        let text = s.render();
        let l = r#"{target="sqlite:t.sqlite",workload="oltp_read_only"}"#;
        assert_eq!(
            sample(&text, &format!("dbmeter_events_total{l}")),
            Some("5")
        );
        assert_eq!(sample(&text, &format!("dbmeter_measuring{l}")), Some("1"));
        assert_eq!(
            sample(&text, &format!("dbmeter_active_users{l}")),
            Some("4")
        );
        assert_eq!(
            sample(&text, &format!("dbmeter_reconnects_total{l}")),
            Some("2")
        );
        assert!(text.contains(r#"dbmeter_queries_total{target="sqlite:t.sqlite",workload="oltp_read_only",type="read"} 50"#), "{text}");
        assert!(text.contains(r#"code="1213"} 3"#), "{text}");
        assert!(text.contains(r#"kind="a"} 4"#), "{text}");
        assert!(text.contains(r#"quantile="0.999"} 0.002"#), "{text}");
        // Buckets: 50 µs, 2 ms and 3 s.
        assert!(text.contains(r#"le="0.0001"} 1"#), "{text}");
        assert!(text.contains(r#"le="0.0025"} 2"#), "{text}");
        assert!(text.contains(r#"le="2.5"} 2"#), "{text}");
        assert!(text.contains(r#"le="5"} 3"#), "{text}");
        assert!(text.contains(r#"le="+Inf"} 3"#), "{text}");

        // The document has 2 events more than the intervals said.
        let mut doc = RunDocument::default();
        doc.totals.events = 7;
        doc.totals.reconnects = 2;
        doc.end.reason = "time_limit".into();
        s.event(&RunEvent::MeasurementEnded { words: None });
        s.event(&RunEvent::Finished {
            doc: &doc,
            section: None,
            lead: None,
        });
        let text = s.render();
        assert_eq!(
            sample(&text, &format!("dbmeter_events_total{l}")),
            Some("7")
        );
        assert_eq!(
            sample(&text, &format!("dbmeter_reconnects_total{l}")),
            Some("2")
        );
        assert_eq!(sample(&text, &format!("dbmeter_measuring{l}")), Some("0"));
        assert!(text.contains(r#"end="time_limit"} 1"#), "{text}");

        // A second run with the same labels adds to the counters.
        s.event(&RunEvent::Started(&h));
        s.event(&RunEvent::Interval {
            interval: &i,
            percentile: 95.0,
            words: None,
        });
        let text = s.render();
        assert_eq!(
            sample(&text, &format!("dbmeter_events_total{l}")),
            Some("12")
        );
        assert_eq!(sample(&text, "dbmeter_runs_started_total"), Some("2"));
    }

    #[test]
    fn a_campaign_labels_its_cells() {
        let mut s = State::new("1");
        s.campaign(CampaignProgress {
            campaign: "bp".into(),
            done: 1,
            total: 4,
            current: Some(CellLabels {
                target: "maria".into(),
                workload: "oltp_read_only".into(),
                clients: 8,
                repeat: 2,
            }),
        });
        s.event(&RunEvent::Started(&header()));
        let text = s.render();
        assert!(
            text.contains(r#"dbmeter_campaign_cells{campaign="bp"} 4"#),
            "{text}"
        );
        assert!(
            text.contains(r#"dbmeter_campaign_cells_done{campaign="bp"} 1"#),
            "{text}"
        );
        assert!(text.contains(r#"dbmeter_campaign_cell_info{campaign="bp",target="maria",workload="oltp_read_only",clients="8",repeat="2"} 1"#), "{text}");
        assert!(
            text.contains(
                r#"dbmeter_events_total{campaign="bp",target="maria",workload="oltp_read_only"} 0"#
            ),
            "{text}"
        );
    }

    #[test]
    fn quantiles_have_no_float_noise() {
        assert_eq!(quantile_of(99.9).to_string(), "0.999");
        assert_eq!(quantile_of(50.0).to_string(), "0.5");
        assert_eq!(quantile_of(100.0).to_string(), "1");
    }
}
