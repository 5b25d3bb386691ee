//! What a capacity search (`--find-capacity`) found, step by step.

use serde::{Deserialize, Serialize};

/// One step of the search: a run at an offered rate (or flat out) with so
/// many users.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CapacityStep {
    /// The arrival rate offered; None for a flat-out step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offered_per_s: Option<f64>,
    pub users: usize,
    pub achieved_per_s: f64,
    /// From the intended start under a rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_ms: Option<f64>,
    pub errors: u64,
    /// Whether it met every target.
    pub met: bool,
    /// What it missed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missed: Option<String>,
}

impl CapacityStep {
    /// `400.00 per sec. offered, 2 users: 398.10 per sec., p99 12.100 ms: met`.
    pub fn line(&self) -> String {
        format!(
            "{}{} users: {:.2} per sec., p99 {}: {}",
            self.offered_per_s
                .map_or(String::from("flat out, "), |x| format!(
                    "{x:.2} per sec. offered, "
                )),
            self.users,
            self.achieved_per_s,
            self.p99_ms.map_or("n/a".into(), |p| format!("{p:.3} ms")),
            match &self.missed {
                None => "met".to_string(),
                Some(w) => format!("missed ({w})"),
            }
        )
    }
}

/// The search's result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CapacityResult {
    /// `rate` or `users`.
    pub mode: String,
    /// The service-level objectives, as `--assert` reads them.
    pub slos: Vec<String>,
    /// `rate`: the highest offered rate that met every target; `users`:
    /// the highest throughput of a step that met them. None when no step
    /// met them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<f64>,
    /// `users`: the users of the step with the peak throughput, and the
    /// most users of a step that met the targets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_users: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_users_met: Option<usize>,
    /// `rate`: the lowest offered rate whose p99 is more than twice the
    /// p99 of the lowest rate tried: where latency starts to climb.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knee_per_s: Option<f64>,
    pub steps: Vec<CapacityStep>,
}

impl CapacityResult {
    /// Works out the knee and the users' figures from the steps.
    pub fn settle(&mut self) {
        if self.mode == "users" {
            let met: Vec<&CapacityStep> = self.steps.iter().filter(|s| s.met).collect();
            self.peak_users = met
                .iter()
                .max_by(|a, b| a.achieved_per_s.total_cmp(&b.achieved_per_s))
                .map(|s| s.users);
            self.max_users_met = met.iter().map(|s| s.users).max();
            return;
        }
        let mut rated: Vec<(f64, f64)> = self
            .steps
            .iter()
            .filter_map(|s| Some((s.offered_per_s?, s.p99_ms?)))
            .collect();
        rated.sort_by(|a, b| a.0.total_cmp(&b.0));
        if let Some(&(_, base)) = rated.first() {
            self.knee_per_s = rated.iter().find(|(_, p)| *p > 2.0 * base).map(|(r, _)| *r);
        }
    }

    /// The report's lines: the result, then the steps by offered rate
    /// (or users).
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        let slos = if self.slos.is_empty() {
            String::new()
        } else {
            format!(" with {}", self.slos.join(", "))
        };
        match (self.mode.as_str(), self.capacity) {
            ("users", Some(c)) => out.push(format!(
                "peak {c:.2} per sec. at {} users{slos}; most users that met the targets: {}",
                self.peak_users.unwrap_or(0),
                self.max_users_met.unwrap_or(0)
            )),
            (_, Some(c)) => out.push(format!("capacity {c:.2} per sec.{slos}")),
            (_, None) => out.push(format!("no step met the targets{slos}")),
        }
        if let Some(k) = self.knee_per_s {
            out.push(format!(
                "knee: p99 climbs past twice its lowest at {k:.2} per sec."
            ));
        }
        let mut steps: Vec<&CapacityStep> = self.steps.iter().collect();
        steps.sort_by(|a, b| {
            a.offered_per_s
                .unwrap_or(f64::MAX)
                .total_cmp(&b.offered_per_s.unwrap_or(f64::MAX))
                .then(a.users.cmp(&b.users))
        });
        for s in steps {
            out.push(format!("  {}", s.line()));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(rate: f64, p99: f64, met: bool) -> CapacityStep {
        CapacityStep {
            offered_per_s: Some(rate),
            users: 2,
            achieved_per_s: rate,
            p99_ms: Some(p99),
            met,
            ..CapacityStep::default()
        }
    }

    #[test]
    fn knee_and_lines() {
        let mut r = CapacityResult {
            mode: "rate".into(),
            slos: vec!["p99<=50ms".into()],
            capacity: Some(180.0),
            steps: vec![
                step(50.0, 10.0, true),
                step(100.0, 11.0, true),
                step(200.0, 900.0, false),
                step(180.0, 25.0, true),
            ],
            ..CapacityResult::default()
        };
        r.settle();
        assert_eq!(r.knee_per_s, Some(180.0));
        let l = r.lines();
        assert_eq!(l[0], "capacity 180.00 per sec. with p99<=50ms");
        assert!(l[2].starts_with("  50.00 per sec. offered"), "{l:?}");
        assert!(
            l[5].contains("missed") || l[5].starts_with("  200.00"),
            "{l:?}"
        );
    }
}
