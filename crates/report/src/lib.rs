//! Result documents and their formats.
//!
//! - [`RunReport`]: everything about one run, serialised as the versioned
//!   JSON document described in `docs/json-schema.md`.
//! - [`text`]: sysbench's section layout (interval lines, final report).
//! - [`csv`]: the interval series as CSV.
//! - [`html`]: the self-contained HTML report with SVG charts.
//! - [`compare`]: comparison tables (from the results store) as text,
//!   Markdown, CSV, HTML.
//! - [`stored`]: lists of stored runs as text and CSV.
//! - [`tpcc`]: the TPC-C-like workload's section (NOPM, TPM, transactions).

pub mod compare;
pub mod csv;
pub mod html;
mod model;
pub mod stored;
pub mod text;
pub mod tpcc;

pub use model::*;
