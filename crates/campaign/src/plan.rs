//! The matrix of a campaign as an ordered list of cells, and how long it
//! will take.

use crate::spec::{Campaign, Order};
use dbmeter_benchmarks::options::canonical;
use std::time::Duration;

/// One run of the matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cell {
    pub target: usize,
    pub workload: usize,
    pub clients: u32,
    /// From 1.
    pub repeat: u32,
}

impl Cell {
    /// The cell's name in the store (without the repeat):
    /// `workload/target/clients`.
    pub fn key(&self, c: &Campaign) -> String {
        format!(
            "{}/{}/{}",
            c.workloads[self.workload].name, c.targets[self.target].name, self.clients
        )
    }
}

/// Every cell, in the order the campaign runs them.
pub fn cells(c: &Campaign) -> Vec<Cell> {
    let mut out = Vec::new();
    let (nt, nw) = (c.targets.len(), c.workloads.len());
    match c.order {
        Order::Interleaved => {
            for repeat in 1..=c.repeats {
                for workload in 0..nw {
                    for &clients in &c.clients {
                        for target in 0..nt {
                            out.push(Cell {
                                target,
                                workload,
                                clients,
                                repeat,
                            });
                        }
                    }
                }
            }
        }
        Order::Sequential => {
            for target in 0..nt {
                for workload in 0..nw {
                    for &clients in &c.clients {
                        for repeat in 1..=c.repeats {
                            out.push(Cell {
                                target,
                                workload,
                                clients,
                                repeat,
                            });
                        }
                    }
                }
            }
        }
    }
    out
}

/// Time for `n` runs: warm-up, measurement, the pause after each, and a
/// few seconds to connect and report.
pub fn estimate(c: &Campaign, cells: &[Cell]) -> Duration {
    const OVERHEAD_S: f64 = 2.0;
    let secs: f64 = cells
        .iter()
        .map(|cell| run_seconds(c, cell) + c.pause + OVERHEAD_S)
        .sum();
    Duration::from_secs_f64(secs)
}

/// How long a cell's run lasts: the campaign's warm-up and duration, or
/// the length of the load profile (`stages`, `rate-stages`) its options
/// give, which replaces them.
fn run_seconds(c: &Campaign, cell: &Cell) -> f64 {
    let own = c
        .options
        .iter()
        .chain(&c.workloads[cell.workload].options)
        .chain(&c.targets[cell.target].options);
    let profile = own
        .filter(|(k, v)| {
            matches!(canonical(k).as_str(), "stages" | "rate-stages") && !v.trim().is_empty()
        })
        .filter_map(|(_, v)| dbmeter_engine::Profile::parse(v, f64::MAX).ok())
        .map(|p| p.duration_s())
        .next_back();
    profile.unwrap_or(c.warmup + c.duration)
}

/// `1h02m`, `4m05s`, `12s`.
pub fn human(d: Duration) -> String {
    let s = d.as_secs();
    match (s / 3600, (s % 3600) / 60, s % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, s) => format!("{m}m{s:02}s"),
        (h, m, _) => format!("{h}h{m:02}m"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn campaign(order: &str) -> Campaign {
        let text = format!(
            r#"
name = "t"
duration = 10
warmup = 5
pause = 1
repeats = 2
clients = [1, 4]
order = "{order}"
[[target]]
name = "a"
url = "sqlite:a.sqlite"
[[target]]
name = "b"
url = "sqlite:b.sqlite"
[[workload]]
name = "noop"
"#
        );
        Campaign::parse(&text, Path::new("t.toml"), &[], &[]).unwrap()
    }

    #[test]
    fn interleaves_targets_innermost() {
        let c = campaign("interleaved");
        let cs = cells(&c);
        assert_eq!(cs.len(), 8);
        let targets: Vec<usize> = cs.iter().map(|x| x.target).collect();
        assert_eq!(targets, vec![0, 1, 0, 1, 0, 1, 0, 1]);
        assert_eq!(cs[4].repeat, 2);
        assert_eq!(cs[0].key(&c), "noop/a/1");
    }

    #[test]
    fn sequential_keeps_a_target_together() {
        let c = campaign("sequential");
        let cs = cells(&c);
        assert!(cs[..4].iter().all(|x| x.target == 0));
        assert_eq!(estimate(&c, &cs), Duration::from_secs(8 * 18));
        assert_eq!(human(Duration::from_secs(3725)), "1h02m");
    }
}
