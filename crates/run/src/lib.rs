//! The run layer: takes a typed [`Request`] and owns a run end to end
//! (the target, the benchmark's plan, the record of the environment and
//! the server, the OS sampler, the engine, the result document, the
//! store), and a benchmark's other commands. The command line and the
//! campaign both call it; neither assembles a run itself.
//!
//! - [`options`]: the options every run takes (target, engine, output, store).
//! - [`settings`]: from option values to the target, its connection
//!   options and the engine's configuration.
//! - `execute.rs`: [`run`], one run.
//! - `verbs.rs`: [`command`], prepare / prewarm / check / cleanup / a
//!   benchmark's own.
//! - `sweep.rs`: [`sweep`], the series of runs and commands a benchmark
//!   makes of one request (mysqlslap's levels and iterations).
//! - [`record`]: the environment, the server's facts and counters (a
//!   restart between the two readings is flagged, other clients' sessions
//!   too), the OS sampler.
//! - `document.rs`: the run document from the engine's result.
//! - The run's events go to an [`Observer`] (`dbmeter_result::events`):
//!   presenters turn them into text, JSON lines, a live line.
//! - [`store`]: where results are kept.
//! - `managed.rs`: the target's server when dbmeter manages it (restart,
//!   drop the page cache: cold runs).

mod capacity;
mod document;
mod error;
mod execute;
mod managed;
pub mod options;
pub mod pinning;
mod profile;
pub mod record;
mod request;
pub mod settings;
pub mod store;
mod sweep;
mod verbs;
mod waits;

pub use capacity::find_capacity;
pub use error::RunError;
pub use execute::{Outcome, run};
pub use managed::control_for;
pub use request::{Observer, Request};
pub use store::{StoreRequest, Stored, store_spec};
pub use sweep::sweep;
pub use verbs::command;
