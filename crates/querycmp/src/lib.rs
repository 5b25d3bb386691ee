//! `dbmeter compare-queries`: the same queries on two targets, query by
//! query, as MariaDB's RQG perfrun/perfreport compare two servers.
//!
//! - `sources.rs`: the queries: statements of a file (cut at `;` outside
//!   quotes and comments), the `.sql` files of a directory, `--query`
//!   texts, or the classes of query logs through the digest crate (one
//!   query per class, its worst sample).
//! - `collect.rs`: both targets, each query cold (a managed server
//!   restarted and the page cache dropped, an SQLite file opened again,
//!   or else its first execution), then warm runs alternating A and B:
//!   time, rows, result checksum, warnings and errors; MariaDB/MySQL's
//!   session status deltas; PostgreSQL's EXPLAIN (ANALYZE, BUFFERS).
//! - `model.rs`: the result (`dbmeter.compare-queries/1`), what JSON
//!   writes and `--from` reads back.
//! - `vars.rs`: the filter's variables for a query at one temperature
//!   (each side's value, delta, ratio), and the default filter.
//! - `render.rs`: text and HTML.
//! - `stored.rs`: the results store: a run document per side, each
//!   query's time at each temperature a figure.

pub mod collect;
pub mod model;
pub mod render;
pub mod sources;
pub mod stored;
pub mod vars;

pub use collect::{Setup, collect};
pub use model::Comparison;
