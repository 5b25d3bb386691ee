//! Embedded SQLite through rusqlite (the library is compiled in).

use crate::types::{Outcome, Param, PsMode, Statements, StmtId, Value, inline_params};
use crate::{DbError, Dialect, ErrorKind};
use rusqlite::{OpenFlags, Statement};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Set when the run interrupts its statements: lock waits give up at once.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// The busy timeout, for the busy handler (one value per process).
static BUSY_TIMEOUT_MS: AtomicU64 = AtomicU64::new(1000);

/// Waits for a lock in 1 ms steps up to the busy timeout, unless the run is
/// being interrupted (sqlite3_interrupt does not end lock waits).
fn busy_handler(attempt: i32) -> bool {
    if INTERRUPTED.load(Ordering::Relaxed)
        || attempt as u64 >= BUSY_TIMEOUT_MS.load(Ordering::Relaxed)
    {
        return false;
    }
    // A client run as a task of a thread's loop (pgbench's -j) lets the
    // thread's other clients run meanwhile: one of them may hold the lock.
    dbmeter_coop::sleep(std::time::Duration::from_millis(1));
    true
}

/// SQLite settings applied to every connection.
#[derive(Clone, Debug, PartialEq)]
pub struct SqliteOptions {
    /// `PRAGMA journal_mode` (default `wal`).
    pub journal_mode: String,
    /// `PRAGMA synchronous` (default `normal`).
    pub synchronous: String,
    /// How long a statement waits for a lock before failing with SQLITE_BUSY.
    pub busy_timeout_ms: u64,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        SqliteOptions {
            journal_mode: "wal".into(),
            synchronous: "normal".into(),
            busy_timeout_ms: 1000,
        }
    }
}

pub struct SqliteConn {
    pub(crate) conn: rusqlite::Connection,
    pub(crate) path: PathBuf,
    opts: SqliteOptions,
    timeout: Option<StatementTimer>,
    /// SQL by id; rusqlite's own cache keeps the prepared statements.
    stmts: Statements<()>,
    ps: bool,
    /// The number of columns of the last fetch's or query_values' rows.
    columns: usize,
    /// SQLite's counters of the last statement `query_values` ran.
    last_status: [(&'static str, i64); 4],
}

/// --query-timeout for SQLite, which has no server to enforce it: a
/// progress handler interrupts a statement that runs past its deadline.
struct StatementTimer {
    limit: Duration,
    /// Deadline of the running statement, in ns since `epoch`.
    deadline: Arc<AtomicU64>,
    /// Set by the handler when it interrupts for the deadline.
    fired: Arc<AtomicBool>,
    epoch: Instant,
}

impl StatementTimer {
    /// SQLite virtual machine steps between two looks at the clock.
    const STEPS: i32 = 1000;

    fn new(limit: Duration) -> StatementTimer {
        StatementTimer {
            limit,
            deadline: Arc::new(AtomicU64::new(u64::MAX)),
            fired: Arc::new(AtomicBool::new(false)),
            epoch: Instant::now(),
        }
    }

    fn install(&self, conn: &mut rusqlite::Connection) -> Result<(), DbError> {
        let (deadline, fired, epoch) = (self.deadline.clone(), self.fired.clone(), self.epoch);
        conn.progress_handler(
            Self::STEPS,
            Some(move || {
                let late = epoch.elapsed().as_nanos() as u64 > deadline.load(Ordering::Relaxed);
                if late {
                    fired.store(true, Ordering::Relaxed);
                }
                late
            }),
        )
        .map_err(map_err)
    }

    fn arm(&self) {
        self.fired.store(false, Ordering::Relaxed);
        let at = (self.epoch.elapsed() + self.limit).as_nanos() as u64;
        self.deadline.store(at, Ordering::Relaxed);
    }

    /// Ends the statement's deadline and turns an interrupt caused by it
    /// into a timeout.
    fn finish<T>(&self, r: Result<T, DbError>) -> Result<T, DbError> {
        self.deadline.store(u64::MAX, Ordering::Relaxed);
        r.map_err(|e| self.classify(e))
    }

    fn classify(&self, mut e: DbError) -> DbError {
        if e.kind == ErrorKind::Interrupted && self.fired.load(Ordering::Relaxed) {
            e.kind = ErrorKind::Timeout;
            e.message = format!("statement cancelled after --query-timeout={:?}", self.limit);
        }
        e
    }
}

/// SQLite's primary result codes by name.
fn code_name(primary: i32) -> String {
    match crate::error::SQLITE_CODES
        .iter()
        .find(|(n, _)| *n == primary)
    {
        Some((_, name)) => name.to_string(),
        None => format!("SQLITE_{primary}"),
    }
}

pub(crate) fn map_err(e: rusqlite::Error) -> DbError {
    match e {
        rusqlite::Error::SqliteFailure(f, msg) => {
            let primary = f.extended_code & 0xff;
            DbError {
                kind: if primary == 9 {
                    ErrorKind::Interrupted
                } else {
                    ErrorKind::Other
                },
                code: code_name(primary),
                message: msg.unwrap_or_else(|| f.to_string()),
                sqlstate: String::new(),
                position: None,
            }
        }
        other => DbError::other("SQLITE_MISUSE", other.to_string()),
    }
}

fn bind(stmt: &mut Statement<'_>, params: &[Param<'_>]) -> Result<(), DbError> {
    for (i, p) in params.iter().enumerate() {
        bind_one(stmt, i + 1, p)?;
    }
    Ok(())
}

/// Binds parameter number `n` (from 1): bytes as a blob.
fn bind_one(stmt: &mut Statement<'_>, n: usize, p: &Param<'_>) -> Result<(), DbError> {
    match p {
        Param::Null => stmt.raw_bind_parameter(n, rusqlite::types::Null),
        Param::Int(v) => stmt.raw_bind_parameter(n, v),
        Param::Text(s) => stmt.raw_bind_parameter(n, s),
        Param::Bytes(b) => stmt.raw_bind_parameter(n, b),
    }
    .map_err(map_err)
}

/// Steps a statement to the end, reading every column of every row.
fn step(stmt: &mut Statement<'_>) -> Result<Outcome, DbError> {
    let cols = stmt.column_count();
    if cols == 0 {
        return stmt
            .raw_execute()
            .map(|n| Outcome::Affected(n as u64))
            .map_err(map_err);
    }
    let mut rows = stmt.raw_query();
    let mut n = 0u64;
    while let Some(row) = rows.next().map_err(map_err)? {
        for i in 0..cols {
            std::hint::black_box(row.get_ref(i).map_err(map_err)?);
        }
        n += 1;
    }
    Ok(Outcome::Rows(n))
}

impl SqliteConn {
    pub(crate) fn open(
        path: &Path,
        opts: &SqliteOptions,
        ps: PsMode,
        timeout: Option<Duration>,
    ) -> Result<Self, DbError> {
        let mut conn = Self::open_conn(path, opts)?;
        let timeout = timeout.map(StatementTimer::new);
        if let Some(t) = &timeout {
            t.install(&mut conn)?;
        }
        Ok(SqliteConn {
            conn,
            path: path.to_path_buf(),
            opts: opts.clone(),
            timeout,
            stmts: Statements::new(),
            ps: ps == PsMode::Auto,
            columns: 0,
            last_status: [("", 0); 4],
        })
    }

    fn open_conn(path: &Path, opts: &SqliteOptions) -> Result<rusqlite::Connection, DbError> {
        let shown = path.display();
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut conn = rusqlite::Connection::open_with_flags(path, flags).map_err(|e| {
            map_err(e).context(format!(
                "cannot open SQLite database {shown} (does its directory exist and is it writable?)"
            ))
        })?;
        let mut setup = || -> Result<(), rusqlite::Error> {
            BUSY_TIMEOUT_MS.store(opts.busy_timeout_ms, Ordering::Relaxed);
            conn.busy_handler(Some(busy_handler))?;
            // Reading the mode back checks that the file is an SQLite database.
            let _: String = conn.query_row(
                &format!("PRAGMA journal_mode={}", opts.journal_mode),
                [],
                |r| r.get(0),
            )?;
            conn.execute_batch(&format!("PRAGMA synchronous={}", opts.synchronous))?;
            conn.set_prepared_statement_cache_capacity(1024);
            Ok(())
        };
        setup().map_err(|e| {
            let e = map_err(e);
            if e.code == "SQLITE_NOTADB" {
                DbError::other(
                    e.code,
                    format!(
                        "{shown} is not an SQLite database ({}); point --db at another file",
                        e.message
                    ),
                )
            } else {
                e.context(format!("cannot set up SQLite database {shown}"))
            }
        })?;
        Ok(conn)
    }

    pub(crate) fn reopen(&mut self) -> Result<(), DbError> {
        self.conn = Self::open_conn(&self.path, &self.opts)?;
        if let Some(t) = &self.timeout {
            t.install(&mut self.conn)?;
        }
        Ok(())
    }

    pub(crate) fn register(&mut self, sql: &str) -> StmtId {
        self.stmts.register(sql)
    }

    // Out of line: `Connection::run`, which dispatches to every driver,
    // then keeps no room on its stack for this one's locals.
    #[inline(never)]
    pub(crate) fn run(&mut self, id: StmtId, params: &[Param<'_>]) -> Result<Outcome, DbError> {
        if let Some(t) = &self.timeout {
            t.arm();
        }
        let r = self.run_inner(id, params);
        match &self.timeout {
            Some(t) => t.finish(r),
            None => r,
        }
    }

    fn run_inner(&mut self, id: StmtId, params: &[Param<'_>]) -> Result<Outcome, DbError> {
        let Some((sql, _)) = self.stmts.get_mut(id) else {
            return Err(DbError::other("SQLITE_MISUSE", "unknown statement id"));
        };
        if self.ps {
            let mut stmt = self.conn.prepare_cached(sql).map_err(map_err)?;
            bind(&mut stmt, params)?;
            step(&mut stmt)
        } else {
            let text = inline_params(sql, params, Dialect::Sqlite);
            let mut stmt = self.conn.prepare(&text).map_err(map_err)?;
            step(&mut stmt)
        }
    }

    /// Runs a registered statement and appends every value of every row
    /// to `out`, row after row; returns the number of rows.
    /// Runs `f` on the connection under the statement timeout.
    pub(crate) fn with_timeout<T>(
        &mut self,
        f: impl FnOnce(&rusqlite::Connection) -> Result<T, DbError>,
    ) -> Result<T, DbError> {
        if let Some(t) = &self.timeout {
            t.arm();
        }
        let r = f(&self.conn);
        match &self.timeout {
            Some(t) => t.finish(r),
            None => r,
        }
    }

    pub(crate) fn fetch(
        &mut self,
        id: StmtId,
        params: &[Param<'_>],
        out: &mut Vec<Option<Value>>,
    ) -> Result<u64, DbError> {
        if let Some(t) = &self.timeout {
            t.arm();
        }
        let r = self.fetch_inner(id, params, out);
        match &self.timeout {
            Some(t) => t.finish(r),
            None => r,
        }
    }

    fn fetch_inner(
        &mut self,
        id: StmtId,
        params: &[Param<'_>],
        out: &mut Vec<Option<Value>>,
    ) -> Result<u64, DbError> {
        let Some((sql, _)) = self.stmts.get_mut(id) else {
            return Err(DbError::other("SQLITE_MISUSE", "unknown statement id"));
        };
        let mut stmt = if self.ps {
            let mut stmt = self.conn.prepare_cached(sql).map_err(map_err)?;
            bind(&mut stmt, params)?;
            stmt
        } else {
            let text = inline_params(sql, params, Dialect::Sqlite);
            self.conn.prepare_cached(&text).map_err(map_err)?
        };
        self.columns = stmt.column_count();
        rows_into(&mut stmt, out)
    }

    /// Runs SQL text (prepared once, not cached), appending its rows'
    /// values to `out`.
    pub(crate) fn query_values(
        &mut self,
        sql: &str,
        out: &mut Vec<Option<Value>>,
    ) -> Result<u64, DbError> {
        let mut columns = 0;
        let mut status = [("", 0); 4];
        let r = self.with_timeout(|conn| {
            let mut stmt = conn.prepare(sql).map_err(map_err)?;
            columns = stmt.column_count();
            let n = rows_into(&mut stmt, out);
            use rusqlite::StatementStatus as S;
            status = [
                ("Sqlite_fullscan_step", S::FullscanStep),
                ("Sqlite_sort", S::Sort),
                ("Sqlite_autoindex", S::AutoIndex),
                ("Sqlite_vm_step", S::VmStep),
            ]
            .map(|(name, s)| (name, i64::from(stmt.get_status(s))));
            n
        });
        self.columns = columns;
        self.last_status = status;
        r
    }

    /// SQLite's counters of the statement `query_values` ran last: rows
    /// stepped through by full scans, sorts, automatic indexes, virtual
    /// machine steps.
    pub(crate) fn last_status(&self) -> &[(&'static str, i64)] {
        &self.last_status
    }

    /// The number of columns of the rows the last `fetch` or
    /// `query_values` read (whether or not any row came).
    pub(crate) fn last_columns(&self) -> usize {
        self.columns
    }

    pub(crate) fn execute(&mut self, sql: &str) -> Result<Outcome, DbError> {
        if let Some(t) = &self.timeout {
            t.arm();
        }
        let r = self
            .conn
            .prepare(sql)
            .map_err(map_err)
            .and_then(|mut stmt| step(&mut stmt));
        match &self.timeout {
            Some(t) => t.finish(r),
            None => r,
        }
    }

    pub(crate) fn query_i64(&mut self, sql: &str) -> Result<Option<i64>, DbError> {
        self.conn
            .query_row(sql, [], |r| r.get::<_, Option<i64>>(0))
            .map_err(map_err)
    }

    pub(crate) fn tables(&mut self) -> Result<Vec<String>, DbError> {
        let mut stmt = self
            .conn
            .prepare("SELECT name FROM sqlite_schema WHERE type='table' ORDER BY name")
            .map_err(map_err)?;
        let rows = stmt
            .query_map([], |r| r.get::<_, String>(0))
            .map_err(map_err)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(map_err)
    }

    pub(crate) fn bulk_insert(
        &mut self,
        table: &str,
        columns: &[&str],
        next_row: &mut (dyn FnMut(&mut Vec<Value>) -> bool + Send),
    ) -> Result<u64, DbError> {
        const ROWS_PER_COMMIT: u64 = 500_000;
        let marks = vec!["?"; columns.len()].join(",");
        let sql = format!(
            "INSERT INTO {table} ({}) VALUES ({marks})",
            columns.join(",")
        );
        let mut row = Vec::with_capacity(columns.len());
        let mut n = 0u64;
        self.conn.execute_batch("BEGIN").map_err(map_err)?;
        let result = (|| {
            let mut stmt = self.conn.prepare_cached(&sql).map_err(map_err)?;
            loop {
                row.clear();
                if !next_row(&mut row) {
                    break;
                }
                for (i, v) in row.iter().enumerate() {
                    bind_one(&mut stmt, i + 1, &v.as_param())?;
                }
                stmt.raw_execute().map_err(map_err)?;
                n += 1;
                if n.is_multiple_of(ROWS_PER_COMMIT) {
                    self.conn.execute_batch("COMMIT; BEGIN").map_err(map_err)?;
                }
            }
            Ok(n)
        })();
        match result {
            Ok(n) => {
                self.conn.execute_batch("COMMIT").map_err(map_err)?;
                Ok(n)
            }
            Err(e) => {
                let _ = self.conn.execute_batch("ROLLBACK");
                Err(e)
            }
        }
    }

    pub(crate) fn interrupter(&self) -> Arc<dyn Fn() + Send + Sync> {
        let h = self.conn.get_interrupt_handle();
        Arc::new(move || {
            INTERRUPTED.store(true, Ordering::Relaxed);
            h.interrupt()
        })
    }
}

/// Steps `stmt`, appending every value of every row to `out`; returns the
/// number of rows.
fn rows_into(stmt: &mut Statement<'_>, out: &mut Vec<Option<Value>>) -> Result<u64, DbError> {
    let cols = stmt.column_count();
    let mut rows = stmt.raw_query();
    let mut n = 0u64;
    while let Some(row) = rows.next().map_err(map_err)? {
        for i in 0..cols {
            use rusqlite::types::ValueRef as V;
            out.push(match row.get_ref(i).map_err(map_err)? {
                V::Null => None,
                V::Integer(x) => Some(Value::Int(x)),
                V::Real(x) => Some(Value::Text(x.to_string())),
                V::Text(t) => Some(Value::Text(crate::types::text_of(t))),
                V::Blob(b) => Some(Value::Bytes(b.into())),
            });
        }
        n += 1;
    }
    Ok(n)
}
