//! Workloads: each is a schema, a loader, per-event logic and checks, and
//! talks to the database only through `dbmeter-db`.
//!
//! - [`options`]: declarative option specs (sysbench's names; dashes and
//!   underscores alike) and the parsed values.
//! - [`random`]: sysbench's id distributions and value generators.
//! - [`oltp`]: the sysbench OLTP family.
//! - [`tpcc`]: the TPC-C-like workload.
//! - [`noop`]: an event that does nothing, to measure the engine itself.
//! - [`registry`]: which workloads exist and their options.

pub mod noop;
pub mod oltp;
pub mod options;
pub mod parallel;
pub mod random;
pub mod registry;
pub mod tpcc;

pub use registry::{Workload, WorkloadInfo};
