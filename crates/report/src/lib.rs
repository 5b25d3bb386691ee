//! Result documents and their formats.
//!
//! The run document itself is `dbmeter_result::RunDocument`.
//! - [`text`]: sysbench's section layout (interval lines, final report).
//! - [`present`]: presenters, turning a run's events into dbmeter's,
//!   sysbench's, pgbench's or mysqlslap's text, or JSON lines.
//! - [`slap`]: mysqlslap's blocks and CSV lines from a sweep's runs.
//! - [`csv`]: the interval series as CSV.
//! - [`html`]: the self-contained HTML report with SVG charts.
//! - [`compare`]: comparison tables (from the results store) as text,
//!   Markdown, CSV, HTML.
//! - [`stored`]: lists of stored runs as text and CSV.
//! - [`history`]: one configuration's runs over time with their change
//!   points, as text (the HTML is `html::history`).

pub mod compare;
pub mod csv;
pub mod history;
pub mod html;
pub mod junit;
pub mod present;
pub mod slap;
pub mod stored;
pub mod text;
