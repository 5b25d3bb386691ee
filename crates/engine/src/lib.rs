//! The load engine: runs N virtual users against anything that implements
//! [`User`], for a time or an event count, optionally at a Poisson arrival
//! rate, and measures every event into per-user HDR histograms that a
//! collector merges per interval and in total.
//!
//! The engine knows nothing of SQL: workloads implement [`User`].

mod arrivals;
mod clock;
mod collector;
mod config;
mod outage;
mod profile;
mod result;
mod run;
mod user;

pub use config::EngineConfig;
pub use outage::OutageSample;
pub use profile::{Piece, Profile, Stage};
pub use result::{
    AutoWarmup, EndReason, IntervalSample, KindCounts, KindResult, PhaseResult, RateResult,
    RunResult, UserTotals,
};
pub use run::{EngineError, QUEUE_FULL, StopHandle, run, run_observed};
pub use user::{EventError, Flow, Interrupter, Tally, User, UserFactory};
