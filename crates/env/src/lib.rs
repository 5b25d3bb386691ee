//! The environment of a run: hardware, OS and build facts read from /proc,
//! /sys, uname and getrlimit; the storage under a data directory; OS
//! statistics sampled while a run goes on; the server's wait events
//! sampled during one (as data); the server's CPU profile by perf; server records (variables,
//! counters, table sizes) as plain data; and benchmark-hygiene warnings.
//!
//! Nothing here fails: a fact that cannot be read stays empty or `None`.

mod build;
mod machine;
pub mod process;
pub mod procfs;
pub mod profile;
pub mod record;
pub mod sampler;
pub mod storage;
pub mod waits;
pub mod warnings;

pub use build::BuildInfo;
pub use machine::{Cache, Environment, FileLimit, hostname, last_level_cache};
pub use profile::{ProfileEntry, ProfileRecord, Profiler};
pub use record::{CounterRecord, Number, ServerRecord, TableSize, restarted_between};
pub use sampler::{MachineCounters, MachineDelta, OsRecord, OsSample, Sampler};
pub use storage::Storage;
pub use waits::WaitRecord;
pub use warnings::{Checks, Warning};
