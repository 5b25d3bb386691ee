//! Campaigns: a matrix of targets (managed server variants or external
//! URLs) x workloads x client counts x repeats, described in a TOML file
//! and run end to end, each result stored the moment it lands.
//!
//! - `spec.rs`: the file format and its checks (errors name the line).
//! - `plan.rs`: the ordered cells and the time they will take.
//! - `runner.rs`: servers, datasets, resets, runs (through the run layer,
//!   in this process), the store.
//! - `hooks.rs`: shell and SQL commands around the campaign and each run.
//! - `sharded.rs`: a campaign run as N processes (`--shard=I/N`): the
//!   start barrier before each cell, the shards' results, their merge.
//! - `adaptive.rs`: `repeats = "auto"`, when a cell has run often enough.

pub mod adaptive;
pub mod hooks;
pub mod plan;
pub mod runner;
pub mod sharded;
pub mod spec;

pub use runner::{
    CellInfo, Progress, RunOptions, Summary, Watch, check, describe, run, store_spec, todo,
};
pub use sharded::check_shards;
pub use spec::Campaign;
