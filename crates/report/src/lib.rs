//! Result documents and their formats.
//!
//! - [`RunReport`]: everything about one run, serialised as the versioned
//!   JSON document described in `docs/json-schema.md`.
//! - [`text`]: sysbench's section layout (interval lines, final report).
//! - [`csv`]: the interval series as CSV.

pub mod csv;
mod model;
pub mod text;

pub use model::*;
