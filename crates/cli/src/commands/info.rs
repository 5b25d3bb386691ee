//! `list` (help is in `crate::help`).

use dbmeter_benchmarks::registry;
use std::fmt::Write as _;

pub fn list() -> String {
    let mut out = String::from("Workloads (dbmeter help WORKLOAD shows a workload's options):\n");
    for w in registry::all() {
        let _ = writeln!(out, "  {:<24}{}", w.name(), w.summary());
    }
    out
}
