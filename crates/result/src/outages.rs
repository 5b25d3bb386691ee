//! Outages: the times when the users could not reach the server, and how
//! the throughput came back after each.
//!
//! The engine finds them (a lost connection whose reconnects fail, until
//! one succeeds); here each gets its recovery time: from the outage's end
//! to the end of the first interval that starts after it and whose
//! throughput is back within the tolerance of the level before (the mean
//! of the full intervals of the last `BEFORE` that ended before the
//! outage started), as a spike's recovery ([`crate::spikes`]). With no
//! interval before it (an outage in the first interval or the warm-up)
//! there is no level to come back to, and no recovery time.

use crate::{Interval, RunDocument};
use serde::{Deserialize, Serialize};

/// The intervals before an outage whose throughput is its level before.
const BEFORE: usize = 5;

/// One outage of a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Outage {
    /// When it started, in seconds from the start of the measurement
    /// (negative: in the warm-up).
    pub start_s: f64,
    /// How long no user could connect; absent when the run ended before
    /// any did again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub length_s: Option<f64>,
    /// Events cut short by the lost connections, or failed, while it
    /// lasted.
    pub events_lost: u64,
    /// Reconnect attempts that failed while it lasted, every user's.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failed_attempts: u64,
    /// Their distinct errors (at most four are kept; the attempts past
    /// them count in `failed_attempts` only), in the order they came.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<AttemptError>,
    /// How long the reconnect attempt that ended it took, from its start
    /// until the connection was ready (part of `length_s`): what the
    /// server or the machine took to let a client in once it was back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_s: Option<f64>,
    /// The interval throughput before it (events per second), when there
    /// was an interval before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events_per_s_before: Option<f64>,
    /// The tolerance of the recovery, in percent.
    pub tolerance_pct: f64,
    /// Seconds from its end until the throughput was back; absent when it
    /// did not come back before the run ended (or there was no level
    /// before to come back to).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery_s: Option<f64>,
}

/// One error of failed reconnect attempts, and how many failed with it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AttemptError {
    pub error: String,
    pub attempts: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The distinct errors an outage keeps.
pub const MAX_ATTEMPT_ERRORS: usize = 4;

/// Adds `attempts` failed with `error` to `errors`, keeping at most
/// [`MAX_ATTEMPT_ERRORS`] distinct ones.
pub fn add_attempt_error(errors: &mut Vec<AttemptError>, error: &str, attempts: u64) {
    if let Some(e) = errors.iter_mut().find(|e| e.error == error) {
        e.attempts += attempts;
    } else if errors.len() < MAX_ATTEMPT_ERRORS {
        errors.push(AttemptError {
            error: error.to_string(),
            attempts,
        });
    }
}

impl Outage {
    /// When it ended, in seconds from the start of the measurement.
    pub fn end_s(&self) -> Option<f64> {
        self.length_s.map(|l| self.start_s + l)
    }

    /// `at 12.3 s for 4.1 s: 37 events lost; throughput back within 10%
    /// 2.0 s after it ended`.
    pub fn line(&self) -> String {
        let when = if self.start_s < 0.0 {
            "in the warm-up".to_string()
        } else {
            format!("at {:.1} s", self.start_s)
        };
        let how_long = match self.length_s {
            Some(l) => format!("for {l:.1} s"),
            None => "until the end of the run".to_string(),
        };
        let lost = match self.events_lost {
            1 => "1 event lost".to_string(),
            n => format!("{n} events lost"),
        };
        let attempts = match self.failed_attempts {
            0 => String::new(),
            n => {
                let noun = if n == 1 { "attempt" } else { "attempts" };
                let most = self
                    .errors
                    .iter()
                    .max_by_key(|e| e.attempts)
                    .map(|e| format!(" ({} of them: {})", e.attempts, e.error))
                    .unwrap_or_default();
                format!("; {n} reconnect {noun} failed{most}")
            }
        };
        let connect = match self.connect_s {
            Some(c) => format!("; the connection that ended it took {c:.2} s"),
            None => String::new(),
        };
        let tol = {
            let s = format!("{:.2}", self.tolerance_pct);
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        };
        let back = match (self.length_s, self.events_per_s_before, self.recovery_s) {
            (None, _, _) => String::new(),
            (Some(_), None, _) => "; no throughput before it to come back to".to_string(),
            (Some(_), Some(_), Some(r)) => {
                format!("; throughput back within {tol}% {r:.1} s after it ended")
            }
            (Some(_), Some(_), None) => {
                format!("; throughput not back within {tol}% by the end of the run")
            }
        };
        format!("{when} {how_long}: {lost}{attempts}{connect}{back}")
    }
}

/// Gives each outage its level before and its recovery time from the
/// run's intervals.
pub fn recover(doc: &RunDocument, outages: &mut [Outage], tolerance_pct: f64) {
    let tol = tolerance_pct / 100.0;
    for o in outages.iter_mut() {
        o.tolerance_pct = tolerance_pct;
        let before: Vec<&Interval> = doc
            .intervals
            .iter()
            .filter(|i| i.t_s <= o.start_s + 1e-9 && i.duration_s > 0.0)
            .collect();
        let last = &before[before.len().saturating_sub(BEFORE)..];
        let secs: f64 = last.iter().map(|i| i.duration_s).sum();
        o.events_per_s_before = (secs > 0.0).then(|| {
            last.iter()
                .map(|i| i.events_per_s * i.duration_s)
                .sum::<f64>()
                / secs
        });
        let (Some(level), Some(end)) = (o.events_per_s_before, o.end_s()) else {
            o.recovery_s = None;
            continue;
        };
        o.recovery_s = doc
            .intervals
            .iter()
            .filter(|i| i.t_s - i.duration_s >= end - 1e-9)
            .find(|i| i.events_per_s >= level * (1.0 - tol))
            .map(|i| i.t_s - end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(tps: &[f64]) -> RunDocument {
        RunDocument {
            intervals: tps
                .iter()
                .enumerate()
                .map(|(i, &t)| Interval {
                    t_s: (i + 1) as f64,
                    duration_s: 1.0,
                    events_per_s: t,
                    ..Interval::default()
                })
                .collect(),
            ..RunDocument::default()
        }
    }

    #[test]
    fn recovery_runs_to_the_first_interval_back_at_the_level_before() {
        // 100/s, down from 3.5 s to 5.2 s, 60/s then 95/s after.
        let d = doc(&[100.0, 100.0, 100.0, 50.0, 0.0, 10.0, 60.0, 95.0, 100.0]);
        let mut o = vec![Outage {
            start_s: 3.5,
            length_s: Some(1.7),
            events_lost: 8,
            ..Outage::default()
        }];
        recover(&d, &mut o, 10.0);
        assert_eq!(o[0].events_per_s_before, Some(100.0));
        // The interval 7-8 s is the first back within 10%.
        let r = o[0].recovery_s.unwrap();
        assert!((r - 2.8).abs() < 1e-9, "{r}");
        let line = o[0].line();
        assert!(
            line.contains("at 3.5 s for 1.7 s: 8 events lost; throughput"),
            "{line}"
        );
        // With its failed attempts and the connect that ended it.
        o[0].failed_attempts = 9;
        add_attempt_error(&mut o[0].errors, "connection refused", 7);
        add_attempt_error(&mut o[0].errors, "starting up", 2);
        o[0].connect_s = Some(0.031);
        let line = o[0].line();
        assert!(
            line.contains(
                "8 events lost; 9 reconnect attempts failed (7 of them: connection refused); \
                 the connection that ended it took 0.03 s; throughput"
            ),
            "{line}"
        );
        assert!(line.contains("back within 10% 2.8 s after"), "{line}");
        // Never back within 1% (without the last interval): not recovered.
        let d = doc(&[100.0, 100.0, 100.0, 50.0, 0.0, 10.0, 60.0, 95.0]);
        recover(&d, &mut o, 1.0);
        assert_eq!(o[0].recovery_s, None);
        assert!(
            o[0].line().contains("not back within 1%"),
            "{}",
            o[0].line()
        );
    }

    #[test]
    fn an_outage_with_nothing_before_or_not_over_has_no_recovery() {
        let d = doc(&[0.0, 100.0]);
        let mut o = vec![
            Outage {
                start_s: -1.0,
                length_s: Some(1.5),
                ..Outage::default()
            },
            Outage {
                start_s: 1.5,
                length_s: None,
                events_lost: 1,
                ..Outage::default()
            },
        ];
        recover(&d, &mut o, 10.0);
        assert_eq!(o[0].events_per_s_before, None);
        assert_eq!(o[0].recovery_s, None);
        assert!(o[0].line().starts_with("in the warm-up for 1.5 s"));
        assert_eq!(o[1].recovery_s, None);
        assert_eq!(
            o[1].line(),
            "at 1.5 s until the end of the run: 1 event lost"
        );
    }
}
