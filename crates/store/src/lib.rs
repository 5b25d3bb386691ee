//! The results store: every run's document with its campaign, variant,
//! cell, repeat and tags, in an SQLite file (the default) or a PostgreSQL
//! database (for a team).
//!
//! - [`Store`]: open (creating and migrating the schema), save, list, read,
//!   delete, and [`Store::compare`].
//! - [`Filter`] / [`Selector`]: which runs (`tag:k=v variant:A ...`).
//! - [`compare`]: baseline vs candidate tables (median over repeats, noise
//!   marks), as data; formatting is the report crate's.
//! - [`history`]: one configuration's runs over time and their change
//!   points, as data.
//! - [`why`]: why a comparison's cells differ (`compare --why`): the runs'
//!   server counters, OS figures and wait events per transaction, ranked.
//! - [`AdaptiveCell`]: why each cell of a campaign with adaptive repeats
//!   stopped (`Store::save_adaptive_cell`, `Store::adaptive_cells`).
//! - [`Barrier`]: the start barrier of a sharded run: every shard records
//!   its arrival and waits for the others, then all start at one instant.
//! - The schema and its migrations are in `schema.rs`; the columns read out
//!   of run documents in `document.rs`; the two databases in `backend.rs`.
//!
//! The API is blocking (PostgreSQL through dbmeter's own blocking client).

pub mod adaptive;
mod backend;
mod barrier;
pub mod compare;
mod document;
mod error;
mod filter;
pub mod gate;
pub mod history;
mod schema;
mod store;
mod summary;
pub mod why;

pub use adaptive::{AdaptiveCell, CellStop};
pub use barrier::{Barrier, BarrierError, Meeting};
pub use compare::{
    CellStats, CompareMode, CompareOptions, Comparison, ComparisonCell, ComparisonRow, Metric,
    Side, Verdict, compare,
};
pub use error::StoreError;
pub use filter::{Filter, SELECTOR_FORMS, Selector};
pub use schema::SCHEMA_VERSION;

pub use dbmeter_result::{COMPLETED_REASONS, is_completed};
pub use store::{Store, StoredRun};
pub use summary::{FigureValue, RunMeta, RunSummary};
pub use why::{WhyCell, WhyRow, WhyUnit};
