//! One connection to a target, whatever the driver: the [`Connection`]
//! enum hands each call to the driver in [`crate::drivers`]. The values it
//! takes and returns are in [`crate::types`].

use crate::drivers::mysql::MysqlConn;
use crate::drivers::postgres::PgConn;
use crate::drivers::sqlite::SqliteConn;
use crate::types::{ConnectOptions, Outcome, Param, StmtId, Value};
use crate::{DbError, Dialect, ResultRows, Target};
use std::sync::Arc;

/// A connection. Statements use `?` placeholders in every dialect; the
/// driver translates them where needed.
// One per virtual user and long-lived: the variants' sizes do not matter.
#[allow(clippy::large_enum_variant)]
pub enum Connection {
    Sqlite(SqliteConn),
    Mysql(MysqlConn),
    Postgres(PgConn),
    /// sysbench's `--mysql-dry-run`: a MySQL connection that connects to
    /// nothing and takes every statement as done at once, without rows
    /// (the number of statements registered so far).
    Dry(usize),
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
            Target::Mysql(_) if opts.dry_run => Ok(Connection::Dry(0)),
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
                opts.hosts,
                opts.host_use.clone(),
            )?)),
            Target::Postgres(t) => Ok(Connection::Postgres(PgConn::connect(
                t,
                nth,
                opts.ps_mode,
                opts.query_timeout,
                shown,
                opts.hosts,
                opts.host_use.clone(),
            )?)),
        }
    }

    pub fn dialect(&self) -> Dialect {
        match self {
            Connection::Sqlite(_) => Dialect::Sqlite,
            Connection::Mysql(_) | Connection::Dry(_) => Dialect::Mysql,
            Connection::Postgres(_) => Dialect::Postgres,
        }
    }

    /// Whether the session is inside a transaction block, where the
    /// driver knows it (PostgreSQL's ReadyForQuery status); None elsewhere.
    pub fn in_transaction(&self) -> Option<bool> {
        match self {
            Connection::Postgres(c) => Some(c.in_transaction()),
            Connection::Sqlite(_) | Connection::Mysql(_) | Connection::Dry(_) => None,
        }
    }

    /// The last error the server reported, in full as libpq words it
    /// (`ERROR:  ...` and its DETAIL, HINT and CONTEXT lines), where the
    /// driver keeps it (PostgreSQL).
    pub fn last_error_report(&self) -> Option<String> {
        match self {
            Connection::Postgres(c) => c.last_report().map(str::to_string),
            Connection::Sqlite(_) | Connection::Mysql(_) | Connection::Dry(_) => None,
        }
    }

    /// The driver's name for messages (`SQLite`).
    pub fn dialect_name(&self) -> &'static str {
        match self {
            Connection::Sqlite(_) => "SQLite",
            Connection::Mysql(_) | Connection::Dry(_) => "MySQL",
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
            Connection::Dry(n) => {
                *n += 1;
                StmtId(*n - 1)
            }
        }
    }

    /// Prepares a registered statement on the server now, where the
    /// driver prepares statements (MySQL/MariaDB, PostgreSQL with prepared
    /// statements on): an error the server finds in it comes here.
    pub fn prepare_now(&mut self, id: StmtId) -> Result<(), DbError> {
        match self {
            Connection::Sqlite(_) | Connection::Dry(_) => Ok(()),
            Connection::Mysql(c) => c.prepare_now(id),
            Connection::Postgres(c) => c.prepare_now(id),
        }
    }

    /// Runs a registered statement, fetching every row it returns.
    pub fn run(&mut self, id: StmtId, params: &[Param<'_>]) -> Result<Outcome, DbError> {
        match self {
            Connection::Sqlite(c) => c.run(id, params),
            Connection::Mysql(c) => c.run(id, params),
            Connection::Postgres(c) => c.run(id, params),
            Connection::Dry(_) => Ok(Outcome::Affected(0)),
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
            Connection::Dry(_) => Ok(0),
        }
    }

    /// Runs SQL text (not prepared, nothing kept) and appends every value
    /// of every row it returns to `out`, as [`Connection::fetch`] does;
    /// returns the number of rows (0 for a statement without rows).
    pub fn query_values(
        &mut self,
        sql: &str,
        out: &mut Vec<Option<Value>>,
    ) -> Result<u64, DbError> {
        match self {
            Connection::Sqlite(c) => c.query_values(sql, out),
            Connection::Mysql(c) => c.query_values(sql, out),
            Connection::Postgres(c) => c.query_values(sql, out),
            Connection::Dry(_) => Ok(0),
        }
    }

    /// Runs a registered statement and keeps its result in `out` (rows
    /// decoded only when read: [`ResultRows::value`]); returns the number
    /// of rows.
    pub fn fetch_rows(
        &mut self,
        id: StmtId,
        params: &[Param<'_>],
        out: &mut ResultRows,
    ) -> Result<u64, DbError> {
        if let Connection::Mysql(c) = self {
            return c.fetch_rows(id, params, out);
        }
        let n = self.fetch(id, params, out.decoded());
        out.set_decoded(n.as_ref().map_or(0, |n| *n), self.decoded_columns());
        n
    }

    /// Runs SQL text and keeps its first result in `out`, as
    /// [`Connection::fetch_rows`]; returns the number of rows.
    pub fn query_result(&mut self, sql: &str, out: &mut ResultRows) -> Result<u64, DbError> {
        if let Connection::Mysql(c) = self {
            return c.query_result(sql, out);
        }
        let n = self.query_values(sql, out.decoded());
        out.set_decoded(n.as_ref().map_or(0, |n| *n), self.decoded_columns());
        n
    }

    /// The number of columns of the rows the last `fetch` or
    /// `query_values` read, whether or not any row came (for the drivers
    /// whose results [`ResultRows`] holds decoded; MariaDB/MySQL results
    /// carry their own).
    fn decoded_columns(&self) -> usize {
        match self {
            Connection::Sqlite(c) => c.last_columns(),
            Connection::Postgres(c) => c.last_columns(),
            Connection::Mysql(_) | Connection::Dry(_) => 0,
        }
    }

    /// SQLite's own counters of the statement [`Connection::query_result`]
    /// or [`Connection::query_values`] ran last (`Sqlite_fullscan_step`,
    /// `Sqlite_sort`, `Sqlite_autoindex`, `Sqlite_vm_step`); empty on the
    /// other targets, whose counters are the server's.
    pub fn statement_counters(&self) -> Vec<(&'static str, i64)> {
        match self {
            Connection::Sqlite(c) => c
                .last_status()
                .iter()
                .filter(|(name, _)| !name.is_empty())
                .copied()
                .collect(),
            Connection::Mysql(_) | Connection::Postgres(_) | Connection::Dry(_) => Vec::new(),
        }
    }

    /// The notices and warnings PostgreSQL sent since the last call
    /// (`WARNING 01000: message`, at most 100 kept); empty elsewhere
    /// (MariaDB/MySQL's are `SHOW WARNINGS`).
    pub fn take_notices(&mut self) -> Vec<String> {
        match self {
            Connection::Postgres(c) => c.take_notices(),
            Connection::Sqlite(_) | Connection::Mysql(_) | Connection::Dry(_) => Vec::new(),
        }
    }

    /// Runs one SQL statement given as text (DDL, BEGIN, ...).
    pub fn execute(&mut self, sql: &str) -> Result<Outcome, DbError> {
        match self {
            Connection::Sqlite(c) => c.execute(sql),
            Connection::Mysql(c) => c.execute(sql),
            Connection::Postgres(c) => c.execute(sql),
            Connection::Dry(_) => Ok(Outcome::Affected(0)),
        }
    }

    /// Runs `sql` (with `$1, $2, ...` placeholders) once as PostgreSQL's
    /// unnamed statement (Parse, Bind, Execute in one round trip: pgbench's
    /// extended mode), the parameters as text for the server to convert
    /// (None for NULL). Returns the rows it returned or changed; None on
    /// targets that have no unnamed statement (MySQL, SQLite).
    pub fn execute_unnamed(
        &mut self,
        sql: &str,
        params: &[Option<&str>],
    ) -> Option<Result<u64, DbError>> {
        match self {
            Connection::Postgres(c) => Some(c.execute_unnamed(sql, params)),
            Connection::Sqlite(_) | Connection::Mysql(_) | Connection::Dry(_) => None,
        }
    }

    /// PostgreSQL's pipeline mode (pgbench's `\startpipeline`): queues
    /// `sql` (with `$1, $2, ...`) as the unnamed statement, its parameters
    /// as text (None for NULL), without sending it; [`Self::pipeline_sync`]
    /// sends what is queued with one Sync (one round trip, one implicit
    /// transaction) and reads the results. None on targets without
    /// pipelines (MySQL, SQLite).
    pub fn pipeline_queue(
        &mut self,
        sql: &str,
        params: &[Option<&str>],
    ) -> Option<Result<(), DbError>> {
        match self {
            Connection::Postgres(c) => Some(c.pipeline_queue(sql, params)),
            Connection::Sqlite(_) | Connection::Mysql(_) | Connection::Dry(_) => None,
        }
    }

    /// Ends a pipeline (see [`Self::pipeline_queue`]): the first error of
    /// its commands, if any.
    pub fn pipeline_sync(&mut self) -> Option<Result<(), DbError>> {
        match self {
            Connection::Postgres(c) => Some(c.pipeline_sync()),
            Connection::Sqlite(_) | Connection::Mysql(_) | Connection::Dry(_) => None,
        }
    }

    /// Runs a query returning one integer (or NULL).
    pub fn query_i64(&mut self, sql: &str) -> Result<Option<i64>, DbError> {
        match self {
            Connection::Sqlite(c) => c.query_i64(sql),
            Connection::Mysql(c) => c.query_i64(sql),
            Connection::Postgres(c) => c.query_i64(sql),
            Connection::Dry(_) => Ok(None),
        }
    }

    /// Names of the tables in the current database.
    pub fn tables(&mut self) -> Result<Vec<String>, DbError> {
        match self {
            Connection::Sqlite(c) => c.tables(),
            Connection::Mysql(c) => c.tables(),
            Connection::Postgres(c) => c.tables(),
            Connection::Dry(_) => Ok(Vec::new()),
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
            Connection::Dry(_) => {
                let mut row = Vec::new();
                let mut n = 0;
                while {
                    row.clear();
                    next_row(&mut row)
                } {
                    n += 1;
                }
                Ok(n)
            }
        }
    }

    /// Loads rows given as lines of text, fields separated by `delimiter`
    /// (e.g. TPC-H's `.tbl` rows without their trailing `|`): `fill`
    /// appends whole lines, each ending in `\n`, and returns false when it
    /// has no more. Fields are taken as they are (no escapes, no NULLs), so
    /// they must not contain the delimiter, a newline or a backslash.
    /// PostgreSQL loads them with COPY, MySQL/MariaDB with LOAD DATA LOCAL
    /// INFILE, both streamed; SQLite (and a MySQL server that refuses
    /// LOCAL INFILE) gets the fields as text values through
    /// [`Connection::bulk_insert`]. Returns the number of rows loaded.
    pub fn load_delimited(
        &mut self,
        table: &str,
        columns: &[&str],
        delimiter: u8,
        fill: &mut (dyn FnMut(&mut Vec<u8>) -> bool + Send),
    ) -> Result<u64, DbError> {
        match self {
            Connection::Postgres(c) => return c.copy_delimited(table, columns, delimiter, fill),
            Connection::Mysql(c) => {
                if let Some(n) = c.load_delimited(table, columns, delimiter, fill)? {
                    return Ok(n);
                }
            }
            Connection::Sqlite(_) | Connection::Dry(_) => {}
        }
        let mut text = Vec::new();
        let mut at = 0usize;
        let mut more = true;
        let mut next_row = |row: &mut Vec<Value>| -> bool {
            loop {
                if let Some(end) = text[at..].iter().position(|&b| b == b'\n') {
                    let line = &text[at..at + end];
                    row.extend(
                        line.split(|&b| b == delimiter)
                            .map(|f| Value::Text(crate::types::text_of(f))),
                    );
                    at += end + 1;
                    return true;
                }
                if !more {
                    return false;
                }
                text.drain(..at);
                at = 0;
                more = fill(&mut text);
            }
        };
        self.bulk_insert(table, columns, &mut next_row)
    }

    /// How [`Connection::load_delimited`] loads text on this target.
    pub fn delimited_method(&mut self) -> Result<&'static str, DbError> {
        match self {
            Connection::Postgres(_) => return Ok("COPY"),
            Connection::Mysql(c) => {
                if c.text_by_infile()? {
                    return Ok("LOAD DATA LOCAL INFILE");
                }
            }
            Connection::Sqlite(_) | Connection::Dry(_) => {}
        }
        self.bulk_method()
    }

    /// How [`Connection::bulk_insert`] loads rows on this target.
    pub fn bulk_method(&mut self) -> Result<&'static str, DbError> {
        Ok(match self {
            Connection::Sqlite(_) => "prepared INSERTs in one transaction",
            Connection::Mysql(c) => c.bulk_method()?,
            Connection::Postgres(_) => "COPY",
            Connection::Dry(_) => "nothing (a dry run)",
        })
    }

    /// Re-opens the connection.
    pub fn reconnect(&mut self) -> Result<(), DbError> {
        match self {
            Connection::Sqlite(c) => c.reopen(),
            Connection::Mysql(c) => c.reopen(),
            Connection::Postgres(c) => c.reopen(),
            Connection::Dry(_) => Ok(()),
        }
    }

    /// A handle that interrupts the statement running on this connection.
    pub fn interrupter(&self) -> Option<Arc<dyn Fn() + Send + Sync>> {
        match self {
            Connection::Sqlite(c) => Some(c.interrupter()),
            Connection::Mysql(c) => Some(c.interrupter()),
            Connection::Postgres(c) => Some(c.interrupter()),
            Connection::Dry(_) => None,
        }
    }

    /// The server's (or library's) version string.
    pub fn server_version(&self) -> String {
        match self {
            Connection::Sqlite(_) => format!("SQLite {}", rusqlite::version()),
            Connection::Mysql(c) => c.version(),
            Connection::Postgres(c) => c.version(),
            Connection::Dry(_) => String::new(),
        }
    }
}
