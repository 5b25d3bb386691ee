//! The database layer: what a workload talks to.
//!
//! - [`Target`]: where to connect, parsed from a `--db` URL.
//! - [`Connection`]: one connection to a target; statements are registered
//!   once ([`Connection::register`]) and executed by id with parameters.
//! - [`DbError`]: every failure, classified (lost connection, interrupted,
//!   other) and carrying the driver's error code for ignore lists.

mod connection;
mod error;
mod introspect;
mod mysql;
mod mysql_wire;
mod pg_wire;
mod postgres;
mod sqlite;
mod target;
mod tls;
mod wire_stream;

pub use connection::{ConnectOptions, Connection, Outcome, Param, PsMode, StmtId, Value};
pub use error::{DbError, ErrorKind, IgnoreList};
pub use introspect::{PidHint, Rows, TableStats, is_local};
pub use postgres::{PgArg, PgCell, PgClient};
pub use sqlite::SqliteOptions;
pub use target::{Dialect, ServerTarget, Target, mask_password};
pub use tls::{TlsMode, TlsSettings};
