//! What the run layer is asked to do, and where it reports as it goes.

use crate::store::StoreRequest;
use dbmeter_benchmarks::options::OptValues;
use dbmeter_benchmarks::{Benchmark, Console};
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
}

/// Where a run reports while it goes on: lines for the user (the header,
/// interval lines, notes of the benchmark), warnings, and the rows a
/// loader has done.
pub trait Observer: Console {
    /// A warning about the run (a distorting set-up, a fact that could not
    /// be read).
    fn warning(&self, message: &str);

    /// Where a run stands, once a second, when it prints no interval
    /// lines (no --report-interval): for a live status line.
    fn live(&self, _status: &Live) {}
}

/// Where a run stands: the last interval and the run so far.
#[derive(Clone, Debug)]
pub struct Live {
    /// The last interval (its time is the end of the measured time so far).
    pub interval: dbmeter_result::Interval,
    /// The measured time the run is to last (--time), if it has one.
    pub limit_s: Option<f64>,
    /// The percentile interval lines show (95 unless --percentile says
    /// otherwise).
    pub percentile: f64,
    /// Errors since the measurement started.
    pub errors: u64,
}
