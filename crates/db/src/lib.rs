//! The database layer: what a workload talks to.
//!
//! - [`Target`]: where to connect, parsed from a `--db` URL.
//! - [`Connection`]: one connection to a target; statements are registered
//!   once ([`Connection::register`]) and executed by id with parameters.
//! - [`DbError`]: every failure, classified (lost connection, interrupted,
//!   other) and carrying the driver's error code for ignore lists.
//!
//! Where things are:
//!
//! - `connection.rs`: the [`Connection`] enum, which hands each call to
//!   its driver.
//! - `types.rs`: the values shared by [`Connection`] and the drivers
//!   ([`Param`], [`Value`], [`Outcome`], [`StmtId`], [`PsMode`],
//!   [`ConnectOptions`], the `?` placeholder helpers).
//! - `drivers/`: one folder per database:
//!   - `drivers/mysql/`: MariaDB and MySQL; `drivers/mysql/wire/` is
//!     dbmeter's own client for their wire protocol.
//!   - `drivers/postgres/`: PostgreSQL and [`PgClient`];
//!     `drivers/postgres/wire/` is dbmeter's own client for its wire
//!     protocol.
//!   - `drivers/sqlite/`: embedded SQLite through rusqlite
//!     ([`SqliteOptions`]).
//! - `wire_stream.rs`: TCP, Unix socket or TLS under both own clients.
//! - `tls.rs`: TLS modes and settings ([`TlsMode`], [`TlsSettings`]).
//! - `net.rs`: connect timeout, TCP keepalives and user timeout, from
//!   the URL's libpq-named parameters.
//! - `target.rs`: [`Target`] and [`Dialect`], parsed from URLs.
//! - `hosts.rs`: targets with several hosts: which host each connection
//!   tries, in what order ([`HostPolicy`]), and where each went
//!   ([`HostUse`]).
//! - `conninfo/`: how a server target is completed from the environment
//!   and the client files (`~/.pgpass`, `pg_service.conf`, `~/.my.cnf`),
//!   as libpq and the MySQL clients do ([`Given::resolve`]).
//! - `error.rs`: [`DbError`], [`ErrorKind`], [`IgnoreList`].
//! - `introspect.rs`: questions about the server rather than the
//!   benchmark ([`Rows`], [`TableStats`], [`PidHint`]).

mod connection;
pub mod conninfo;
mod drivers;
mod error;
mod hosts;
mod introspect;
mod net;
mod result_rows;
mod target;
mod tls;
mod types;
mod wire_stream;

pub use connection::Connection;
pub use conninfo::{Env, Given, Resolved, ServerKind, Spec};
pub use drivers::postgres::{PgArg, PgCell, PgClient};
pub use drivers::sqlite::SqliteOptions;
pub use error::{DbError, ErrorKind, IgnoreList};
pub use hosts::{HostPolicy, HostUse};
pub use introspect::{PidHint, Rows, TableStats, is_local};
pub use result_rows::ResultRows;
pub use target::{Dialect, ServerTarget, Target, mask_password};
pub use tls::{TlsMode, TlsSettings};
pub use types::{ConnectOptions, Outcome, Param, PsMode, StmtId, Value};
