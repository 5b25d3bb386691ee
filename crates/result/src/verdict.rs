//! Assertions on a run's result and their verdicts (`--assert 'p99<10ms'`).
//!
//! An assertion is `[KIND.]METRIC OP VALUE[UNIT]`:
//! - METRIC: `tps` (also `eps`, `events/s`: events per second), `qps`
//!   (`queries/s`), `events`, `queries`, `errors` (a count; with `%`, the
//!   share of attempts: errors / (events + errors)), `errors/s`,
//!   `reconnects`, a latency (`avg`, `min`, `max`, `stddev`, `pN` for any
//!   percentile N in (0, 100], e.g. `p99.9`), a declared measure by name
//!   (`reads`, `writes`, `bytes_read`: its count, `reads/s`: its rate), or
//!   one of the benchmark's figures by name (`Q1`: TPC-H's time of Q1).
//! - KIND (optional): a named kind of the run (`NewOrder.p90<5s`); a
//!   kind has `events`, `tps`, the latencies, `retries` and `rolled_back`.
//! - OP: `<`, `<=`, `>`, `>=`, `=` (or `==`), `!=`.
//! - VALUE: a number; latencies and figures in time take a unit (`ns`,
//!   `us`, `ms`, `s`, `min`, `h`; a bare number is milliseconds), `errors` takes
//!   `%`.
//!
//! Each assertion is checked against the finished document: a verdict
//! with the measured value. A value that cannot be measured (no events, a
//! figure without a value) fails, and so does every assertion of a run
//! that did not complete: a number from a broken run never passes.

use crate::{KindSection, RunDocument, StageResult};
use dbmeter_stats::LatencyHistogram;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

impl Op {
    fn holds(self, a: f64, b: f64) -> bool {
        match self {
            Op::Lt => a < b,
            Op::Le => a <= b,
            Op::Gt => a > b,
            Op::Ge => a >= b,
            // Equal within rounding (values come from divisions).
            Op::Eq => (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0),
            Op::Ne => (a - b).abs() > 1e-9 * a.abs().max(b.abs()).max(1.0),
        }
    }

    fn symbol(self) -> &'static str {
        match self {
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::Eq => "=",
            Op::Ne => "!=",
        }
    }
}

/// A latency statistic.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Latency {
    Avg,
    Min,
    Max,
    Stddev,
    Percentile(f64),
}

/// What an assertion measures.
#[derive(Clone, Debug, PartialEq)]
pub enum Metric {
    EventsPerSec,
    QueriesPerSec,
    Events,
    Queries,
    Errors,
    ErrorsPerSec,
    Reconnects,
    Retries,
    RolledBack,
    Latency(Latency),
    /// A declared measure, or a figure, by name: its count or value.
    Named(String),
    /// A declared measure's rate.
    NamedPerSec(String),
}

/// How the threshold was written: it decides the unit of the value.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Unit {
    None,
    /// Nanoseconds per unit written (`ms`: 1e6).
    Time(f64),
    Percent,
}

/// One `--assert`.
#[derive(Clone, Debug, PartialEq)]
pub struct Assertion {
    /// As the user wrote it (spaces removed).
    pub text: String,
    pub kind: Option<String>,
    pub metric: Metric,
    pub op: Op,
    value: f64,
    unit: Unit,
}

/// The verdict on one assertion.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// The assertion, e.g. `p99<10ms`.
    pub assertion: String,
    /// `pass`, `fail`, or `not_judged` (the run did not complete, or the
    /// value could not be measured); only `pass` passes.
    pub status: String,
    /// The value measured, in `unit`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured: Option<f64>,
    /// `ms`, `%`, `/s`, a figure's unit, or empty for counts.
    #[serde(default)]
    pub unit: String,
    /// Why it is not judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Verdict {
    pub fn passed(&self) -> bool {
        self.status == "pass"
    }

    /// `p99<10ms: pass (measured 4.21 ms)`.
    pub fn line(&self) -> String {
        let measured = match self.measured {
            Some(v) => format!("measured {}{}", shown(v), unit_suffix(&self.unit)),
            None => "no value".to_string(),
        };
        let status = match self.status.as_str() {
            "pass" => "pass",
            "fail" => "FAIL",
            _ => "NOT JUDGED",
        };
        match &self.reason {
            Some(r) => format!("{}: {status} ({measured}; {r})", self.assertion),
            None => format!("{}: {status} ({measured})", self.assertion),
        }
    }
}

fn unit_suffix(unit: &str) -> String {
    match unit {
        "" => String::new(),
        "%" | "/s" => unit.to_string(),
        u => format!(" {u}"),
    }
}

/// A number for a line: up to 3 decimals, no trailing zeros.
fn shown(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

impl fmt::Display for Assertion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

const OPS: [(&str, Op); 7] = [
    ("<=", Op::Le),
    (">=", Op::Ge),
    ("==", Op::Eq),
    ("!=", Op::Ne),
    ("<", Op::Lt),
    (">", Op::Gt),
    ("=", Op::Eq),
];

const SYNTAX: &str =
    "write [KIND.]METRIC OP VALUE, e.g. 'p99<10ms', 'tps>=5000', 'errors<=0.1%', 'NewOrder.p90<5s'";

fn parse_latency(m: &str) -> Option<Latency> {
    match m {
        "avg" | "mean" => Some(Latency::Avg),
        "min" => Some(Latency::Min),
        "max" => Some(Latency::Max),
        "stddev" => Some(Latency::Stddev),
        _ => {
            let p: f64 = m.strip_prefix('p')?.parse().ok()?;
            (p > 0.0 && p <= 100.0).then_some(Latency::Percentile(p))
        }
    }
}

/// The metric a name stands for (names of measures and figures are taken
/// as written; they are checked against the run later).
fn parse_metric(m: &str) -> Option<Metric> {
    let lower = m.to_ascii_lowercase();
    Some(match lower.as_str() {
        "tps" | "eps" | "events/s" => Metric::EventsPerSec,
        "qps" | "queries/s" => Metric::QueriesPerSec,
        "events" => Metric::Events,
        "queries" => Metric::Queries,
        "errors" => Metric::Errors,
        "errors/s" => Metric::ErrorsPerSec,
        "reconnects" => Metric::Reconnects,
        "retries" => Metric::Retries,
        "rolled_back" => Metric::RolledBack,
        _ => match parse_latency(&lower) {
            Some(l) => Metric::Latency(l),
            // `p101`, `p0`: a percentile out of range, not a name.
            None if lower.len() > 1
                && lower.starts_with('p')
                && lower[1..].chars().all(|c| c.is_ascii_digit() || c == '.') =>
            {
                return None;
            }
            None => {
                let name_ok = |s: &str| {
                    !s.is_empty()
                        && s.chars()
                            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | ':'))
                };
                match m.strip_suffix("/s") {
                    Some(n) if name_ok(n) => Metric::NamedPerSec(n.to_string()),
                    _ if name_ok(m) => Metric::Named(m.to_string()),
                    _ => return None,
                }
            }
        },
    })
}

fn parse_threshold(v: &str) -> Option<(f64, Unit)> {
    let split = v
        .char_indices()
        .find(|&(i, c)| {
            !(c.is_ascii_digit()
                || c == '.'
                || ((c == '-' || c == '+') && (i == 0 || v[..i].ends_with(['e', 'E'])))
                || ((c == 'e' || c == 'E') && i > 0))
        })
        .map_or(v.len(), |(i, _)| i);
    // `5e` would swallow the `e` of nothing: let the unit have it.
    let (mut num, mut unit) = v.split_at(split);
    if num.ends_with(['e', 'E']) {
        num = &v[..split - 1];
        unit = &v[split - 1..];
    }
    let value: f64 = num.parse().ok().filter(|x: &f64| x.is_finite())?;
    let unit = match unit {
        "" => Unit::None,
        "ns" => Unit::Time(1.0),
        "us" | "µs" => Unit::Time(1e3),
        "ms" => Unit::Time(1e6),
        "s" => Unit::Time(1e9),
        "min" | "m" => Unit::Time(60e9),
        "h" => Unit::Time(3600e9),
        "%" => Unit::Percent,
        _ => return None,
    };
    Some((value, unit))
}

impl Assertion {
    /// Parses one assertion; the error is one line saying what is wrong.
    pub fn parse(text: &str) -> Result<Assertion, String> {
        let bad = |why: &str| format!("--assert '{text}': {why}; {SYNTAX}");
        let Some((at, op_text, op)) = OPS
            .iter()
            .filter_map(|&(s, op)| text.find(s).map(|i| (i, s, op)))
            .min_by_key(|&(i, s, _)| (i, std::cmp::Reverse(s.len())))
        else {
            return Err(bad("no comparison (<, <=, >, >=, =, !=)"));
        };
        let lhs = text[..at].trim();
        let rhs: String = text[at + op_text.len()..]
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        let rhs = rhs.as_str();
        if lhs.is_empty() {
            return Err(bad("nothing to compare before the comparison"));
        }
        let compact = format!("{lhs}{op_text}{rhs}");
        let Some((value, unit)) = parse_threshold(rhs) else {
            return Err(bad(&format!(
                "'{rhs}' is not a number with an optional unit (ns, us, ms, s, min, h, %)"
            )));
        };
        // The metric is the whole left side, or what follows a kind's name
        // and a dot (a percentile's own dot, `p99.9`, stays with it).
        let (kind, metric) = match parse_metric(lhs) {
            Some(m) if !lhs.contains('.') || matches!(m, Metric::Latency(_)) => (None, m),
            _ => {
                let found = lhs.match_indices('.').find_map(|(i, _)| {
                    let (k, m) = (&lhs[..i], &lhs[i + 1..]);
                    parse_metric(m)
                        .filter(|m| {
                            !k.is_empty() && !matches!(m, Metric::Named(_) | Metric::NamedPerSec(_))
                        })
                        .map(|m| (Some(k.to_string()), m))
                });
                match found {
                    Some(f) => f,
                    None => {
                        return Err(bad(&format!(
                            "'{lhs}' is not a metric (tps, qps, events, errors, avg, max, p99, a measure's or figure's name, or KIND.METRIC)"
                        )));
                    }
                }
            }
        };
        let stage = kind.as_deref().and_then(stage_index).is_some();
        if kind.is_some()
            && !matches!(
                metric,
                Metric::EventsPerSec
                    | Metric::Events
                    | Metric::Retries
                    | Metric::RolledBack
                    | Metric::Latency(_)
            )
            && !(stage && metric == Metric::Errors)
        {
            return Err(bad(
                "a kind has events, tps, retries, rolled_back and latencies (avg, min, max, stddev, pN)",
            ));
        }
        match (&metric, unit) {
            (Metric::Latency(_) | Metric::Named(_), Unit::Time(_)) => {}
            (Metric::Latency(_), Unit::Percent) => {
                return Err(bad(
                    "a latency takes a time unit (ns, us, ms, s, min, h), not %",
                ));
            }
            (Metric::Errors, Unit::Percent) => {}
            (_, Unit::None) => {}
            (Metric::Errors, Unit::Time(_)) => {
                return Err(bad("errors are a count, or a share of attempts with %"));
            }
            (_, Unit::Percent) => return Err(bad("only errors take %")),
            (_, Unit::Time(_)) => {
                return Err(bad("only latencies and figures in time take a time unit"));
            }
        }
        if unit == Unit::Percent && !(0.0..=100.0).contains(&value) {
            return Err(bad("a share is from 0% to 100%"));
        }
        Ok(Assertion {
            text: compact.clone(),
            kind,
            metric,
            op,
            value,
            unit,
        })
    }

    /// Checks that what the assertion names exists in a run of a benchmark
    /// with these kinds and measures (before the run starts). Figures are
    /// only known at the end: a name that is no measure is taken as one.
    pub fn check_names(
        &self,
        kinds: &[String],
        measures: &[String],
        stages: &[usize],
    ) -> Result<(), String> {
        self.check_kind(kinds, stages)?;
        self.check_measure(measures)
    }

    /// The kind (or stage) part of [`Assertion::check_names`]: a campaign
    /// checks it before anything runs, where a benchmark's kinds are known
    /// from its options alone.
    pub fn check_kind(&self, kinds: &[String], stages: &[usize]) -> Result<(), String> {
        if let Some(k) = &self.kind
            && !kinds.iter().any(|n| n == k)
            && !stage_index(k).is_some_and(|i| stages.contains(&i))
        {
            if let Some(i) = stage_index(k) {
                return Err(format!(
                    "--assert '{}': the run has no stage {i} with a duration ({})",
                    self.text,
                    if stages.is_empty() {
                        "it has no --stages or --rate-stages".to_string()
                    } else {
                        format!(
                            "its stages that last are {}",
                            stages
                                .iter()
                                .map(|i| format!("stage{i}"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    }
                ));
            }
            let known = if kinds.is_empty() {
                "this workload has no named kinds".to_string()
            } else {
                format!("its kinds are {}", kinds.join(", "))
            };
            return Err(format!(
                "--assert '{}': no kind named '{k}': {known}",
                self.text
            ));
        }
        Ok(())
    }

    /// The measure part of [`Assertion::check_names`].
    pub fn check_measure(&self, measures: &[String]) -> Result<(), String> {
        if let Metric::NamedPerSec(n) = &self.metric
            && !measures.iter().any(|m| m == n)
        {
            return Err(format!(
                "--assert '{}': '{n}' is not a measure of this workload ({})",
                self.text,
                if measures.is_empty() {
                    "it declares none".to_string()
                } else {
                    format!("it counts {}", measures.join(", "))
                }
            ));
        }
        Ok(())
    }

    /// The verdict on a finished run.
    pub fn judge(&self, doc: &RunDocument) -> Verdict {
        let (measured, unit) = match self.measure(doc) {
            Ok(v) => v,
            Err(reason) => {
                return Verdict {
                    assertion: self.text.clone(),
                    status: "not_judged".into(),
                    measured: None,
                    unit: String::new(),
                    reason: Some(reason),
                };
            }
        };
        let completed = matches!(
            doc.end.reason.as_str(),
            "time_limit" | "event_limit" | "work_done"
        );
        let threshold = match (self.unit, &self.metric) {
            (Unit::Time(ns), Metric::Latency(_)) => self.value * ns / 1e6,
            (Unit::Time(ns), Metric::Named(_)) => {
                self.value * ns / time_unit_ns(&unit).unwrap_or(1e6)
            }
            _ => self.value,
        };
        let holds = self.op.holds(measured, threshold);
        let (status, reason) = if !completed {
            (
                "not_judged",
                Some(format!(
                    "the run ended {}",
                    doc.end.reason.replace('_', " ")
                )),
            )
        } else if holds {
            ("pass", None)
        } else {
            ("fail", None)
        };
        Verdict {
            assertion: self.text.clone(),
            status: status.into(),
            measured: Some(measured),
            unit,
            reason,
        }
    }

    fn measure(&self, doc: &RunDocument) -> Result<(f64, String), String> {
        let t = &doc.totals;
        let per_s = |n: u64| {
            if t.duration_s > 0.0 {
                Ok(n as f64 / t.duration_s)
            } else {
                Err("nothing was measured".to_string())
            }
        };
        if let Some(k) = &self.kind {
            if let Some(section) = doc.kinds.iter().find(|s| &s.name == k) {
                return self.measure_kind(section, &per_s);
            }
            if let Some(stage) =
                stage_index(k).and_then(|i| doc.stages.iter().find(|s| s.index == i))
            {
                return self.measure_stage(stage);
            }
            return Err(format!("the run has no kind or stage named '{k}'"));
        }
        let errors = t.ignored_errors + t.connection_errors;
        Ok(match &self.metric {
            Metric::EventsPerSec => (t.events_per_s, "/s".into()),
            Metric::QueriesPerSec => (t.queries_per_s, "/s".into()),
            Metric::Events => (t.events as f64, String::new()),
            Metric::Queries => (t.queries as f64, String::new()),
            Metric::Errors if self.unit == Unit::Percent => {
                let attempts = t.events + errors;
                if attempts == 0 {
                    return Err("nothing was attempted".into());
                }
                (errors as f64 * 100.0 / attempts as f64, "%".into())
            }
            Metric::Errors => (errors as f64, String::new()),
            Metric::ErrorsPerSec => (per_s(errors)?, "/s".into()),
            Metric::Reconnects => (t.reconnects as f64, String::new()),
            Metric::Retries | Metric::RolledBack => {
                return Err("retries and rolled_back are counted per kind (KIND.retries)".into());
            }
            Metric::Latency(l) => (latency(&doc.latency_histogram, *l, t.events)?, "ms".into()),
            Metric::NamedPerSec(n) => match t.counts.get(n) {
                Some(&c) => (per_s(c)?, "/s".into()),
                None => return Err(format!("the run counted no '{n}'")),
            },
            Metric::Named(n) => {
                if let Some(&c) = t.counts.get(n) {
                    (c as f64, String::new())
                } else if let Some(f) = doc.figures.iter().find(|f| &f.name == n) {
                    match f.value {
                        Some(v) => (v, f.unit.clone()),
                        None => return Err(format!("figure {n} has no value ({})", f.status)),
                    }
                } else {
                    return Err(format!("the run has no measure or figure named '{n}'"));
                }
            }
        })
    }

    fn measure_kind(
        &self,
        k: &KindSection,
        per_s: &dyn Fn(u64) -> Result<f64, String>,
    ) -> Result<(f64, String), String> {
        Ok(match &self.metric {
            Metric::EventsPerSec => (per_s(k.events)?, "/s".into()),
            Metric::Events => (k.events as f64, String::new()),
            Metric::Retries => (k.retries as f64, String::new()),
            Metric::RolledBack => (k.rolled_back as f64, String::new()),
            Metric::Latency(l) => (latency(&k.latency_histogram, *l, k.events)?, "ms".into()),
            _ => return Err("not measured per kind".into()),
        })
    }

    fn measure_stage(&self, s: &StageResult) -> Result<(f64, String), String> {
        Ok(match &self.metric {
            Metric::EventsPerSec => (s.events_per_s, "/s".into()),
            Metric::Events => (s.events as f64, String::new()),
            Metric::Errors if self.unit == Unit::Percent => {
                let attempts = s.events + s.errors;
                if attempts == 0 {
                    return Err("nothing was attempted in the stage".into());
                }
                (s.errors as f64 * 100.0 / attempts as f64, "%".into())
            }
            Metric::Errors => (s.errors as f64, String::new()),
            Metric::Latency(l) => (latency(&s.latency_histogram, *l, s.events)?, "ms".into()),
            _ => return Err("a stage has events, tps, errors and latencies".into()),
        })
    }

    /// The comparison in words for a JUnit message: `p99 < 10 ms`.
    pub fn op_symbol(&self) -> &'static str {
        self.op.symbol()
    }
}

/// `stage3` is 3.
fn stage_index(name: &str) -> Option<usize> {
    name.strip_prefix("stage")?.parse().ok().filter(|&i| i > 0)
}

fn time_unit_ns(unit: &str) -> Option<f64> {
    match unit {
        "ns" => Some(1.0),
        "us" => Some(1e3),
        "ms" => Some(1e6),
        "s" => Some(1e9),
        "min" => Some(60e9),
        "h" => Some(3600e9),
        _ => None,
    }
}

/// A latency statistic in ms from a histogram.
fn latency(histogram: &str, l: Latency, events: u64) -> Result<f64, String> {
    let h = LatencyHistogram::from_base64(histogram)
        .map_err(|_| "the run kept no latency histogram".to_string())?;
    if h.count() == 0 || events == 0 {
        return Err("no events were measured".into());
    }
    let ns = match l {
        Latency::Avg => h.mean(),
        Latency::Min => h.min() as f64,
        Latency::Max => h.max() as f64,
        Latency::Stddev => h.stddev(),
        Latency::Percentile(p) => h.percentile(p) as f64,
    };
    Ok(ns / 1e6)
}

/// Parses a list of assertions separated by commas (a campaign file's
/// `assert = ["p99<10ms", "tps>=100"]` arrives joined so).
pub fn parse_list(text: &str) -> Result<Vec<Assertion>, String> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(Assertion::parse)
        .collect()
}

/// The verdicts of a document, all of them, and whether every one passed.
pub fn all_passed(verdicts: &[Verdict]) -> bool {
    verdicts.iter().all(Verdict::passed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Assertion {
        Assertion::parse(s).unwrap()
    }

    #[test]
    fn parses_forms() {
        let a = p("p99 < 10ms");
        assert_eq!(a.metric, Metric::Latency(Latency::Percentile(99.0)));
        assert_eq!(a.op, Op::Lt);
        assert_eq!((a.value, a.unit), (10.0, Unit::Time(1e6)));
        assert_eq!(a.text, "p99<10ms");
        let a = p("tps>=5000");
        assert_eq!(
            (a.metric, a.op, a.value),
            (Metric::EventsPerSec, Op::Ge, 5000.0)
        );
        let a = p("errors<=0.1%");
        assert_eq!((a.metric, a.unit), (Metric::Errors, Unit::Percent));
        let a = p("NewOrder.p90<5s");
        assert_eq!(a.kind.as_deref(), Some("NewOrder"));
        assert_eq!(a.metric, Metric::Latency(Latency::Percentile(90.0)));
        let a = p("p99.9<=2.5e1ms");
        assert_eq!(a.metric, Metric::Latency(Latency::Percentile(99.9)));
        assert_eq!(a.value, 25.0);
        let a = p("new_order.p99.9<1s");
        assert_eq!(a.kind.as_deref(), Some("new_order"));
        assert_eq!(a.metric, Metric::Latency(Latency::Percentile(99.9)));
        assert_eq!(p("reads/s>100").metric, Metric::NamedPerSec("reads".into()));
        assert_eq!(p("Q1<30s").metric, Metric::Named("Q1".into()));
        assert_eq!(p("events!=0").op, Op::Ne);
        assert_eq!(p("events==10").op, Op::Eq);
        assert_eq!(p("avg<1").unit, Unit::None);
    }

    #[test]
    fn refuses_with_one_line() {
        for (s, why) in [
            ("p99", "no comparison"),
            ("<10ms", "nothing to compare"),
            ("p99<fast", "not a number"),
            ("p99<10parsecs", "not a number"),
            ("p99<1%", "time unit"),
            ("tps>5ms", "only latencies"),
            ("errors<3ms", "count"),
            ("tps>5%", "only errors"),
            ("errors<120%", "0% to 100%"),
            ("a b c>3", "not a metric"),
            ("k.qps>3", "a kind has"),
            ("p101<3", "not a metric"),
        ] {
            let e = Assertion::parse(s).unwrap_err();
            assert!(e.contains(why), "{s}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn checks_names() {
        let kinds = vec!["NewOrder".to_string()];
        let measures = vec!["reads".to_string()];
        assert!(
            p("NewOrder.p90<5s")
                .check_names(&kinds, &measures, &[])
                .is_ok()
        );
        let e = p("Payment.p90<5s")
            .check_names(&kinds, &measures, &[])
            .unwrap_err();
        assert!(e.contains("its kinds are NewOrder"), "{e}");
        let e = p("fsyncs/s>1")
            .check_names(&kinds, &measures, &[])
            .unwrap_err();
        assert!(
            p("stage2.p99<1s")
                .check_names(&kinds, &measures, &[2, 3])
                .is_ok()
        );
        assert!(
            p("stage2.errors<=1%")
                .check_names(&kinds, &measures, &[2])
                .is_ok()
        );
        let e1 = p("stage1.p99<1s")
            .check_names(&kinds, &measures, &[2, 3])
            .unwrap_err();
        assert!(
            e1.contains("no stage 1 with a duration (its stages that last are stage2, stage3)"),
            "{e1}"
        );
        assert!(e.contains("it counts reads"), "{e}");
    }

    fn doc(reason: &str) -> RunDocument {
        let mut h = LatencyHistogram::new();
        for ms in 1..=100u64 {
            h.record(ms * 1_000_000);
        }
        let mut d = RunDocument {
            workload: "w".into(),
            ..RunDocument::default()
        };
        d.end.reason = reason.into();
        d.totals.duration_s = 10.0;
        d.totals.events = 100;
        d.totals.events_per_s = 10.0;
        d.totals.ignored_errors = 1;
        d.totals.counts.insert("reads".into(), 500);
        d.latency_histogram = h.to_base64();
        d.kinds.push(KindSection {
            name: "k".into(),
            events: 100,
            latency_histogram: h.to_base64(),
            ..KindSection::default()
        });
        d
    }

    #[test]
    fn judges() {
        let d = doc("time_limit");
        let v = p("p99<=100ms").judge(&d);
        assert!(v.passed(), "{v:?}");
        let m = v.measured.unwrap();
        assert!((98.0..=100.5).contains(&m), "{m}");
        assert!(!p("p99<0.05s").judge(&d).passed());
        assert!(p("p50<=51ms").judge(&d).passed());
        assert!(p("tps=10").judge(&d).passed());
        assert!(p("tps>10").judge(&d).status == "fail");
        let v = p("errors<=1%").judge(&d);
        assert!(v.passed(), "{v:?}");
        assert!((v.measured.unwrap() - 100.0 / 101.0).abs() < 1e-9);
        assert!(!p("errors<1").judge(&d).passed());
        assert!(p("reads/s=50").judge(&d).passed());
        assert!(p("reads=500").judge(&d).passed());
        assert!(p("k.max>=0.09s").judge(&d).passed());
        assert!(p("k.tps=10").judge(&d).passed());
        let v = p("nothing>1").judge(&d);
        assert_eq!(v.status, "not_judged");
        assert!(v.line().contains("NOT JUDGED"), "{}", v.line());
        // A broken run never passes, whatever its numbers.
        let v = p("tps>1").judge(&doc("interrupted"));
        assert_eq!(v.status, "not_judged");
        assert!(v.line().contains("ended interrupted"), "{}", v.line());
        assert_eq!(
            p("p99<10ms").judge(&d).line(),
            format!("p99<10ms: FAIL (measured {} ms)", shown(d_p99(&d)))
        );
    }

    fn d_p99(d: &RunDocument) -> f64 {
        LatencyHistogram::from_base64(&d.latency_histogram)
            .unwrap()
            .percentile(99.0) as f64
            / 1e6
    }

    #[test]
    fn figures_in_their_unit() {
        let mut d = doc("work_done");
        d.figures.push(crate::Figure {
            name: "Q1".into(),
            value: Some(12.5),
            unit: "s".into(),
            status: "ok".into(),
            ..crate::Figure::default()
        });
        assert!(p("Q1<13s").judge(&d).passed());
        assert!(p("Q1<13000ms").judge(&d).passed());
        assert!(!p("Q1<12s").judge(&d).passed());
        assert!(p("Q1>12").judge(&d).passed());
    }
}
