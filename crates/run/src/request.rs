//! What the run layer is asked to do, and where it reports as it goes.

use crate::store::StoreRequest;
use dbmeter_benchmarks::Benchmark;
use dbmeter_benchmarks::Console;
use dbmeter_benchmarks::options::OptValues;
use dbmeter_result::verdict::Assertion;
use dbmeter_result::{Layout, RunEvent};
use std::sync::Arc;

/// One run, or one command of a benchmark, fully described.
#[derive(Clone)]
pub struct Request {
    pub benchmark: Arc<dyn Benchmark>,
    /// Every option (general and the benchmark's), defaults filled in.
    /// The target is `--db` (or sysbench's `--mysql-*`/`--pgsql-*`).
    pub options: OptValues,
    /// Keep the result in a results store (runs only).
    pub store: Option<StoreRequest>,
    /// How the run is presented (the benchmark words its notes for it).
    pub layout: Layout,
    /// Targets the result must meet (`--assert`), judged at the end into
    /// the document's verdicts.
    pub assertions: Vec<Assertion>,
}

/// Where a run reports while it goes on: the run's events, in order
/// (see [`dbmeter_result::events`]). As a [`Console`], the benchmark's
/// lines arrive as [`RunEvent::Note`]s and a loader's rows as progress.
pub trait Observer: Console {
    fn event(&self, event: &RunEvent);
}
