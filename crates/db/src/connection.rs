//! One connection to a target, whatever the driver.

use crate::mysql::MysqlConn;
use crate::postgres::PgConn;
use crate::sqlite::{SqliteConn, SqliteOptions};
use crate::{DbError, Dialect, Target};
use std::sync::Arc;

/// A statement parameter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Param<'a> {
    Int(i64),
    Text(&'a str),
}

/// An owned value, for bulk loading.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Int(i64),
    Text(String),
}

impl Value {
    pub fn as_param(&self) -> Param<'_> {
        match self {
            Value::Int(i) => Param::Int(*i),
            Value::Text(s) => Param::Text(s),
        }
    }
}

/// What a statement did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It returned a result set with this many rows (all of them fetched).
    Rows(u64),
    /// It changed this many rows (or was not a DML statement).
    Affected(u64),
}

/// A statement registered on a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StmtId(pub(crate) usize);

/// The statements registered on a connection: their SQL, and the driver's
/// prepared handle once prepared (dropped when the connection is reopened).
pub(crate) struct Statements<S> {
    list: Vec<(String, Option<S>)>,
}

impl<S> Statements<S> {
    pub(crate) fn new() -> Self {
        Statements { list: Vec::new() }
    }

    pub(crate) fn register(&mut self, sql: &str) -> StmtId {
        self.list.push((sql.to_string(), None));
        StmtId(self.list.len() - 1)
    }

    /// The SQL of `id` and its prepared handle, if any.
    pub(crate) fn get_mut(&mut self, id: StmtId) -> Option<(&str, &mut Option<S>)> {
        self.list.get_mut(id.0).map(|(sql, s)| (sql.as_str(), s))
    }

    /// Forgets the prepared handles (they belonged to a closed connection).
    pub(crate) fn forget_prepared(&mut self) {
        for s in &mut self.list {
            s.1 = None;
        }
    }
}

/// Prepared statements (`auto`, the default) or plain SQL text with the
/// values written in (`disable`), as sysbench's `--db-ps-mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PsMode {
    Auto,
    Disable,
}

#[derive(Clone, Debug)]
pub struct ConnectOptions {
    pub target: Target,
    pub ps_mode: PsMode,
    pub sqlite: SqliteOptions,
    /// Each statement is cancelled by the server (SQLite: by dbmeter)
    /// after this long: MariaDB max_statement_time, MySQL
    /// max_execution_time (SELECTs only), PostgreSQL statement_timeout.
    pub query_timeout: Option<std::time::Duration>,
}

impl ConnectOptions {
    pub fn new(target: Target) -> Self {
        ConnectOptions {
            target,
            ps_mode: PsMode::Auto,
            sqlite: SqliteOptions::default(),
            query_timeout: None,
        }
    }
}

/// A connection. Statements use `?` placeholders in every dialect; the
/// driver translates them where needed.
// One per virtual user and long-lived: the variants' sizes do not matter.
#[allow(clippy::large_enum_variant)]
pub enum Connection {
    Sqlite(SqliteConn),
    Mysql(MysqlConn),
    Postgres(PgConn),
}

impl Connection {
    pub fn connect(opts: &ConnectOptions) -> Result<Connection, DbError> {
        Self::connect_nth(opts, 0)
    }

    /// Opens connection number `nth` of a run: with several hosts or ports,
    /// connections are spread over them round robin.
    pub fn connect_nth(opts: &ConnectOptions, nth: usize) -> Result<Connection, DbError> {
        let shown = opts.target.to_string();
        match &opts.target {
            Target::Sqlite { path, .. } => Ok(Connection::Sqlite(SqliteConn::open(
                path,
                &opts.sqlite,
                opts.ps_mode,
                opts.query_timeout,
            )?)),
            Target::Mysql(t) => Ok(Connection::Mysql(MysqlConn::connect(
                t,
                nth,
                opts.ps_mode,
                opts.query_timeout,
                shown,
            )?)),
            Target::Postgres(t) => Ok(Connection::Postgres(PgConn::connect(
                t,
                nth,
                opts.ps_mode,
                opts.query_timeout,
                shown,
            )?)),
        }
    }

    pub fn dialect(&self) -> Dialect {
        match self {
            Connection::Sqlite(_) => Dialect::Sqlite,
            Connection::Mysql(_) => Dialect::Mysql,
            Connection::Postgres(_) => Dialect::Postgres,
        }
    }

    /// The driver's name for messages (`SQLite`).
    pub fn dialect_name(&self) -> &'static str {
        match self {
            Connection::Sqlite(_) => "SQLite",
            Connection::Mysql(_) => "MySQL",
            Connection::Postgres(_) => "PostgreSQL",
        }
    }

    /// Registers a statement for [`Connection::run`]. With prepared
    /// statements it is prepared on first use and kept.
    pub fn register(&mut self, sql: &str) -> StmtId {
        match self {
            Connection::Sqlite(c) => c.register(sql),
            Connection::Mysql(c) => c.register(sql),
            Connection::Postgres(c) => c.register(sql),
        }
    }

    /// Runs a registered statement, fetching every row it returns.
    pub fn run(&mut self, id: StmtId, params: &[Param<'_>]) -> Result<Outcome, DbError> {
        match self {
            Connection::Sqlite(c) => c.run(id, params),
            Connection::Mysql(c) => c.run(id, params),
            Connection::Postgres(c) => c.run(id, params),
        }
    }

    /// Runs a registered statement and appends every value of every row it
    /// returns to `out`, row after row (NULL as None; integers as
    /// [`Value::Int`], everything else, decimals included, as its text).
    /// Returns the number of rows.
    pub fn fetch(
        &mut self,
        id: StmtId,
        params: &[Param<'_>],
        out: &mut Vec<Option<Value>>,
    ) -> Result<u64, DbError> {
        match self {
            Connection::Sqlite(c) => c.fetch(id, params, out),
            Connection::Mysql(c) => c.fetch(id, params, out),
            Connection::Postgres(c) => c.fetch(id, params, out),
        }
    }

    /// Runs one SQL statement given as text (DDL, BEGIN, ...).
    pub fn execute(&mut self, sql: &str) -> Result<Outcome, DbError> {
        match self {
            Connection::Sqlite(c) => c.execute(sql),
            Connection::Mysql(c) => c.execute(sql),
            Connection::Postgres(c) => c.execute(sql),
        }
    }

    /// Runs a query returning one integer (or NULL).
    pub fn query_i64(&mut self, sql: &str) -> Result<Option<i64>, DbError> {
        match self {
            Connection::Sqlite(c) => c.query_i64(sql),
            Connection::Mysql(c) => c.query_i64(sql),
            Connection::Postgres(c) => c.query_i64(sql),
        }
    }

    /// Names of the tables in the current database.
    pub fn tables(&mut self) -> Result<Vec<String>, DbError> {
        match self {
            Connection::Sqlite(c) => c.tables(),
            Connection::Mysql(c) => c.tables(),
            Connection::Postgres(c) => c.tables(),
        }
    }

    /// Loads rows into `table` as fast as the driver can. `next_row`
    /// fills the row buffer and returns false when there are no more rows.
    /// Returns the number of rows loaded.
    pub fn bulk_insert(
        &mut self,
        table: &str,
        columns: &[&str],
        next_row: &mut (dyn FnMut(&mut Vec<Value>) -> bool + Send),
    ) -> Result<u64, DbError> {
        match self {
            Connection::Sqlite(c) => c.bulk_insert(table, columns, next_row),
            Connection::Mysql(c) => c.bulk_insert(table, columns, next_row),
            Connection::Postgres(c) => c.copy_in(table, columns, next_row),
        }
    }

    /// How [`Connection::bulk_insert`] loads rows on this target.
    pub fn bulk_method(&mut self) -> Result<&'static str, DbError> {
        Ok(match self {
            Connection::Sqlite(_) => "prepared INSERTs in one transaction",
            Connection::Mysql(c) => c.bulk_method()?,
            Connection::Postgres(_) => "COPY",
        })
    }

    /// Re-opens the connection.
    pub fn reconnect(&mut self) -> Result<(), DbError> {
        match self {
            Connection::Sqlite(c) => c.reopen(),
            Connection::Mysql(c) => c.reopen(),
            Connection::Postgres(c) => c.reopen(),
        }
    }

    /// A handle that interrupts the statement running on this connection.
    pub fn interrupter(&self) -> Option<Arc<dyn Fn() + Send + Sync>> {
        match self {
            Connection::Sqlite(c) => Some(c.interrupter()),
            Connection::Mysql(c) => Some(c.interrupter()),
            Connection::Postgres(c) => Some(c.interrupter()),
        }
    }

    /// The server's (or library's) version string.
    pub fn server_version(&self) -> String {
        match self {
            Connection::Sqlite(_) => format!("SQLite {}", rusqlite::version()),
            Connection::Mysql(c) => c.version(),
            Connection::Postgres(c) => c.version(),
        }
    }
}

/// Copies `sql`, replacing each `?` placeholder outside string literals
/// with what `fill` writes for it (given its 0-based position).
pub(crate) fn replace_placeholders(sql: &str, mut fill: impl FnMut(usize, &mut String)) -> String {
    let mut out = String::with_capacity(sql.len() + 16);
    let mut n = 0;
    let mut in_string = false;
    for ch in sql.chars() {
        match ch {
            '\'' => {
                in_string = !in_string;
                out.push(ch);
            }
            '?' if !in_string => {
                fill(n, &mut out);
                n += 1;
            }
            _ => out.push(ch),
        }
    }
    out
}

/// Writes `params` into `sql` in place of its `?` placeholders, as SQL
/// literals (for `--db-ps-mode=disable`).
pub(crate) fn inline_params(sql: &str, params: &[Param<'_>]) -> String {
    replace_placeholders(sql, |i, out| match params.get(i) {
        Some(Param::Int(v)) => out.push_str(&v.to_string()),
        Some(Param::Text(t)) => {
            out.push('\'');
            out.push_str(&t.replace('\'', "''"));
            out.push('\'');
        }
        None => out.push('?'),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inlines_literals() {
        assert_eq!(
            inline_params(
                "UPDATE t SET c=? WHERE id=? AND x='?'",
                &[Param::Text("it's"), Param::Int(-7)]
            ),
            "UPDATE t SET c='it''s' WHERE id=-7 AND x='?'"
        );
    }
}

/// A result with every value as text (NULL as None), as the own MySQL and
/// PostgreSQL clients return a query sent as text.
#[derive(Debug, Default)]
pub(crate) struct TextResult {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Option<String>>>,
}

impl TextResult {
    /// The first value as an integer (the integer part of a decimal);
    /// None for no rows, NULL or text that is not a number.
    pub(crate) fn first_i64(self) -> Option<i64> {
        self.rows
            .into_iter()
            .next()
            .and_then(|row| row.into_iter().next().flatten())
            .and_then(|s| s.split('.').next().and_then(|x| x.parse().ok()))
    }

    /// The first column's non-NULL values.
    pub(crate) fn first_column(self) -> Vec<String> {
        self.rows
            .into_iter()
            .filter_map(|row| row.into_iter().next().flatten())
            .collect()
    }
}
