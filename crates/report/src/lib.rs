//! Result documents and their formats.
//!
//! The run document itself is `dbmeter_result::RunDocument`.
//! - [`text`]: sysbench's section layout (interval lines, final report).
//! - [`present`]: presenters, turning a run's events into dbmeter's,
//!   sysbench's or pgbench's text, or JSON lines.
//! - [`csv`]: the interval series as CSV.
//! - [`html`]: the self-contained HTML report with SVG charts.
//! - [`compare`]: comparison tables (from the results store) as text,
//!   Markdown, CSV, HTML.
//! - [`stored`]: lists of stored runs as text and CSV.

pub mod compare;
pub mod csv;
pub mod html;
pub mod junit;
pub mod present;
pub mod stored;
pub mod text;
