//! The run document: everything about one run, typed once and read by
//! everyone (the run layer writes it; the store, campaigns, `compare`, the
//! text, CSV and HTML reports read it). Serialised as the versioned JSON
//! document described in `docs/json-schema.md` (`dbmeter.run`).
//!
//! - [`document`]: the common sections (target, options, totals, latency,
//!   intervals, environment, server record and counters, warnings, how
//!   the run ended).
//! - [`kinds`]: the generic "named kinds" section: per transaction, query
//!   or statement kind, its counts and latency histogram. TPC-C's
//!   transactions, TPC-H's queries and a replay's classes are this shape.
//! - [`events`]: the events of a run as the run layer emits them to the
//!   presenters (header, notes, warnings, intervals, the document).
//! - Each benchmark adds its own typed section under its own key
//!   ([`RunDocument::sections`]); the benchmark owns the section's type.
//!
//! Documents of every earlier schema version still read: new fields have
//! defaults, and a failed run's short document needs only `schema`,
//! `workload` and `end`.

pub mod capacity;
mod document;
pub mod drift;
pub mod events;
mod kinds;
pub mod outages;
pub mod shards;
mod slap;
pub mod spikes;
pub mod throughput;
pub mod verdict;

pub use document::*;
pub use events::{Layout, Live, RunEvent, RunHeader};
pub use kinds::KindSection;
pub use slap::SlapSection;
