//! The benchmarks: each one folder (or file) behind one interface,
//! [`Benchmark`], talking to databases only through `dbmeter-db` and to
//! the load engine through its `User` trait.
//!
//! - [`benchmark`]: the interface (options, commands, dataset, run plan,
//!   its section of the result and of the text report).
//! - [`registry`]: which benchmarks exist; found by name or path.
//! - [`options`]: option specs (sysbench's names; dashes and underscores
//!   alike, owned so a script can declare its own) and parsed values.
//! - [`micro`]: sysbench's tests of the machine (cpu, threads, mutex,
//!   memory), event for event.
//! - [`noop`]: an event that does nothing; the one-file example of a whole
//!   benchmark.
//! - [`oltp`]: the sysbench OLTP family.
//! - [`fileio`]: sysbench's file I/O test (sync, io_uring, mmap; O_DIRECT).
//! - [`tpcc`]: the TPC-C-like workload.
//! - [`script`]: sysbench Lua scripts, run unmodified.
//! - [`pgbench`]: pgbench's script language (scripts, expressions,
//!   built-in scripts) and a client that runs them.
//! - [`slap`]: mysqlslap's test: generated or given statements, run by
//!   each concurrency level's clients, iteration after iteration.
//! - [`random`]: sysbench's id distributions and value generators.
//! - [`parallel`]: work spread over threads, one connection each.
//! - [`shard`]: `--shard=I/N`, one process's share of a split run.

pub mod benchmark;
pub mod fileio;
pub mod micro;
pub mod noop;
pub mod oltp;
pub mod options;
pub mod parallel;
pub mod pgbench;
pub mod random;
pub mod registry;
pub mod replay;
pub mod script;
pub mod shard;
pub mod slap;
pub mod tpcc;
pub mod tpch;

pub use benchmark::{
    BenchError, Benchmark, Console, Context, LoadProgress, RunPlan, ServerControl, SweepStep, Verb,
};
