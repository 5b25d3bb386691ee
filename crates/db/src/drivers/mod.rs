//! The drivers behind [`Connection`](crate::Connection), one folder each:
//!
//! - [`mysql`]: MariaDB and MySQL; `mysql/wire/` is dbmeter's own client
//!   for their wire protocol.
//! - [`postgres`]: PostgreSQL, and [`PgClient`](crate::PgClient) for tools
//!   around the benchmark; `postgres/wire/` is dbmeter's own client for
//!   its wire protocol.
//! - [`sqlite`]: embedded SQLite through rusqlite.
//!
//! Every driver takes and returns the values of [`crate::types`]; the
//! byte stream under both own clients is [`crate::wire_stream`].

pub(crate) mod mysql;
pub(crate) mod postgres;
pub(crate) mod sqlite;
