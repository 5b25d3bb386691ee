//! The two databases a store can live in, behind one small interface:
//! statements written once with `?` placeholders, typed parameters, rows of
//! plain values.
//!
//! SQLite runs in-process (rusqlite). PostgreSQL goes through dbmeter's own
//! blocking client ([`dbmeter_db::PgClient`], with the benchmarks' TLS,
//! socket and password handling).

use crate::StoreError;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long an SQLite statement waits for another process's write lock.
const SQLITE_BUSY_TIMEOUT: Duration = Duration::from_secs(60);

/// A statement parameter; `None` is SQL NULL of that type.
#[derive(Clone, Debug)]
pub(crate) enum Param {
    Int(Option<i64>),
    Real(Option<f64>),
    Text(Option<String>),
    Blob(Option<Vec<u8>>),
}

/// A value read from a row.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum SqlValue {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

impl SqlValue {
    pub fn int(&self) -> Option<i64> {
        match self {
            SqlValue::Int(i) => Some(*i),
            SqlValue::Real(f) => Some(*f as i64),
            _ => None,
        }
    }

    pub fn real(&self) -> Option<f64> {
        match self {
            SqlValue::Int(i) => Some(*i as f64),
            SqlValue::Real(f) => Some(*f),
            _ => None,
        }
    }

    pub fn text(&self) -> Option<String> {
        match self {
            SqlValue::Text(s) => Some(s.clone()),
            SqlValue::Int(i) => Some(i.to_string()),
            SqlValue::Real(f) => Some(f.to_string()),
            SqlValue::Blob(b) => Some(String::from_utf8_lossy(b).into_owned()),
            SqlValue::Null => None,
        }
    }

    pub fn bytes(&self) -> Option<Vec<u8>> {
        match self {
            SqlValue::Blob(b) => Some(b.clone()),
            SqlValue::Text(s) => Some(s.clone().into_bytes()),
            _ => None,
        }
    }
}

pub(crate) type Row = Vec<SqlValue>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Sqlite,
    Postgres,
}

pub(crate) enum Backend {
    Sqlite(rusqlite::Connection),
    Postgres(dbmeter_db::PgClient),
}

/// What a store spec names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Location {
    File(PathBuf),
    Postgres(String),
}

impl Location {
    pub fn parse(spec: &str) -> Result<Location, StoreError> {
        let spec = spec.trim();
        if spec.is_empty() {
            return Err(StoreError::new(
                "the results store is empty: give a file path or a postgres:// URL",
            ));
        }
        let lower = spec.to_ascii_lowercase();
        if lower.starts_with("postgres://") || lower.starts_with("postgresql://") {
            return Ok(Location::Postgres(spec.to_string()));
        }
        if let Some(rest) = spec
            .strip_prefix("sqlite://")
            .or_else(|| spec.strip_prefix("sqlite:"))
        {
            if rest.is_empty() {
                return Err(StoreError::new(format!(
                    "the results store '{spec}' names no file (e.g. sqlite:results.db)"
                )));
            }
            return Ok(Location::File(PathBuf::from(rest)));
        }
        if let Some((scheme, _)) = spec.split_once("://") {
            return Err(StoreError::new(format!(
                "the results store '{}' is a {scheme}:// URL; a store is a file path (SQLite) or a postgres:// URL",
                dbmeter_db::mask_password(spec)
            )));
        }
        Ok(Location::File(PathBuf::from(spec)))
    }

    /// How the store is named in messages (password masked).
    pub fn shown(&self) -> String {
        match self {
            Location::File(p) => p.display().to_string(),
            Location::Postgres(url) => dbmeter_db::mask_password(url),
        }
    }
}

fn cannot_open(shown: &str, why: impl std::fmt::Display) -> StoreError {
    StoreError::new(format!("cannot open the results store '{shown}': {why}"))
}

fn pg_error(e: dbmeter_db::DbError) -> String {
    format!("{} ({})", e.message, e.code)
}

impl Backend {
    pub fn open(loc: &Location) -> Result<Backend, StoreError> {
        let shown = loc.shown();
        match loc {
            Location::File(path) => open_sqlite(path, &shown),
            Location::Postgres(url) => {
                let target = match dbmeter_db::Target::parse(url) {
                    Ok(dbmeter_db::Target::Postgres(t)) => t,
                    Ok(_) => return Err(cannot_open(&shown, "not a PostgreSQL URL")),
                    Err(e) => return Err(cannot_open(&shown, e.message)),
                };
                let client = dbmeter_db::PgClient::connect(&target, &shown).map_err(|e| {
                    // The driver's message already names the URL.
                    StoreError::new(format!("cannot open the results store: {}", e.message))
                })?;
                Ok(Backend::Postgres(client))
            }
        }
    }

    /// True when a PostgreSQL connection has been closed.
    pub fn is_closed(&self) -> bool {
        match self {
            Backend::Sqlite(_) => false,
            Backend::Postgres(client) => client.is_closed(),
        }
    }

    pub fn kind(&self) -> Kind {
        match self {
            Backend::Sqlite(_) => Kind::Sqlite,
            Backend::Postgres(_) => Kind::Postgres,
        }
    }

    /// Runs statements without parameters (DDL, BEGIN/COMMIT).
    pub fn batch(&mut self, sql: &str) -> Result<(), String> {
        match self {
            Backend::Sqlite(c) => c.execute_batch(sql).map_err(|e| e.to_string()),
            Backend::Postgres(client) => client.batch(sql).map_err(pg_error),
        }
    }

    /// Runs one statement; returns the rows it changed.
    pub fn execute(&mut self, sql: &str, params: &[Param]) -> Result<u64, String> {
        match self {
            Backend::Sqlite(c) => {
                let mut st = c.prepare_cached(sql).map_err(|e| e.to_string())?;
                let n = st
                    .execute(rusqlite::params_from_iter(params.iter().map(sqlite_value)))
                    .map_err(|e| e.to_string())?;
                Ok(n as u64)
            }
            Backend::Postgres(client) => {
                let (_, n) = client
                    .query(&numbered(sql), &pg_args(params))
                    .map_err(pg_error)?;
                Ok(n)
            }
        }
    }

    /// Runs one query and reads all its rows.
    pub fn query(&mut self, sql: &str, params: &[Param]) -> Result<Vec<Row>, String> {
        match self {
            Backend::Sqlite(c) => {
                let mut st = c.prepare_cached(sql).map_err(|e| e.to_string())?;
                let n = st.column_count();
                let mut rows = st
                    .query(rusqlite::params_from_iter(params.iter().map(sqlite_value)))
                    .map_err(|e| e.to_string())?;
                let mut out = Vec::new();
                while let Some(r) = rows.next().map_err(|e| e.to_string())? {
                    let mut row = Vec::with_capacity(n);
                    for i in 0..n {
                        use rusqlite::types::ValueRef;
                        row.push(match r.get_ref(i).map_err(|e| e.to_string())? {
                            ValueRef::Null => SqlValue::Null,
                            ValueRef::Integer(i) => SqlValue::Int(i),
                            ValueRef::Real(f) => SqlValue::Real(f),
                            ValueRef::Text(t) => SqlValue::Text(String::from_utf8_lossy(t).into()),
                            ValueRef::Blob(b) => SqlValue::Blob(b.to_vec()),
                        });
                    }
                    out.push(row);
                }
                Ok(out)
            }
            Backend::Postgres(client) => {
                let (rows, _) = client
                    .query(&numbered(sql), &pg_args(params))
                    .map_err(pg_error)?;
                Ok(rows.into_iter().map(pg_row).collect())
            }
        }
    }
}

/// Runs `f` again while SQLite answers "busy" without waiting, for at most
/// the busy timeout. Switching a new file to WAL takes an exclusive lock
/// and, as the first reads after it may run WAL recovery, SQLite reports
/// those conflicts at once instead of calling the busy handler: two
/// processes creating one store at the same moment meet them.
fn retry_busy<T>(mut f: impl FnMut() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
    let began = std::time::Instant::now();
    loop {
        match f() {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if matches!(
                    e.code,
                    rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                ) && began.elapsed() < SQLITE_BUSY_TIMEOUT =>
            {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            r => return r,
        }
    }
}

fn open_sqlite(path: &Path, shown: &str) -> Result<Backend, StoreError> {
    if path.is_dir() {
        return Err(cannot_open(shown, "it is a directory"));
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| cannot_open(shown, format!("cannot create {}: {e}", dir.display())))?;
    }
    let conn = rusqlite::Connection::open(path).map_err(|e| cannot_open(shown, e))?;
    conn.busy_timeout(SQLITE_BUSY_TIMEOUT)
        .map_err(|e| cannot_open(shown, e))?;
    // A new store is an empty file. Refuse to touch some other SQLite
    // database (a benchmark's data given by mistake, say); the first read
    // also finds files that are not databases.
    let names: Vec<String> = retry_busy(|| {
        conn.prepare(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
        )
        .and_then(|mut st| {
            st.query_map([], |r| r.get::<_, String>(0))?
                .collect::<Result<Vec<_>, _>>()
        })
    })
    .map_err(|e| cannot_open(shown, e))?;
    if !names.is_empty() && !names.iter().any(|n| n == "store_migrations") {
        return Err(StoreError::new(format!(
            "'{shown}' is an SQLite database but not a dbmeter results store (it holds tables {}{}); give another file",
            names[..names.len().min(3)].join(", "),
            if names.len() > 3 { ", ..." } else { "" }
        )));
    }
    // WAL lets readers and one writer work at once; several processes
    // saving runs wait for each other (busy timeout) instead of failing.
    // Reading the mode also finds files that are not databases.
    // (On a file system without shared memory SQLite keeps its rollback
    // journal, which works too.)
    let _mode: String = retry_busy(|| conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0)))
        .map_err(|e| cannot_open(shown, e))?;
    retry_busy(|| conn.execute_batch("PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL;"))
        .map_err(|e| cannot_open(shown, e))?;
    Ok(Backend::Sqlite(conn))
}

fn sqlite_value(p: &Param) -> rusqlite::types::Value {
    use rusqlite::types::Value;
    match p {
        Param::Int(Some(i)) => Value::Integer(*i),
        Param::Real(Some(f)) => Value::Real(*f),
        Param::Text(Some(s)) => Value::Text(s.clone()),
        Param::Blob(Some(b)) => Value::Blob(b.clone()),
        _ => Value::Null,
    }
}

/// Parameters go as text (bytes as bytea) for the server to convert to
/// the type it infers for each placeholder.
fn pg_args(params: &[Param]) -> Vec<dbmeter_db::PgArg<'_>> {
    use dbmeter_db::PgArg;
    params
        .iter()
        .map(|p| match p {
            Param::Int(Some(i)) => PgArg::Int(*i),
            Param::Real(Some(f)) => PgArg::Real(*f),
            Param::Text(Some(s)) => PgArg::Text(s),
            Param::Blob(Some(b)) => PgArg::Bytes(b),
            _ => PgArg::Null,
        })
        .collect()
}

fn pg_row(r: Vec<dbmeter_db::PgCell>) -> Row {
    use dbmeter_db::PgCell;
    r.into_iter()
        .map(|c| match c {
            PgCell::Null => SqlValue::Null,
            PgCell::Int(i) => SqlValue::Int(i),
            PgCell::Real(f) => SqlValue::Real(f),
            PgCell::Text(s) => SqlValue::Text(s),
            PgCell::Bytes(b) => SqlValue::Blob(b),
        })
        .collect()
}

/// `?` placeholders to PostgreSQL's `$1, $2, ...`. The store's own SQL has
/// no `?` inside string literals.
fn numbered(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut n = 0;
    for c in sql.chars() {
        if c == '?' {
            n += 1;
            out.push('$');
            out.push_str(&n.to_string());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_numbered() {
        assert_eq!(
            numbered("SELECT a FROM t WHERE b = ? AND c IN (?, ?)"),
            "SELECT a FROM t WHERE b = $1 AND c IN ($2, $3)"
        );
    }

    #[test]
    fn specs() {
        assert_eq!(
            Location::parse("x/y.db").unwrap(),
            Location::File("x/y.db".into())
        );
        assert_eq!(
            Location::parse("sqlite:r.db").unwrap(),
            Location::File("r.db".into())
        );
        assert!(matches!(
            Location::parse("postgresql://u:pw@h/db").unwrap(),
            Location::Postgres(_)
        ));
        let e = Location::parse("mysql://u:secret@h/db").unwrap_err().0;
        assert!(e.contains("mysql://") && !e.contains("secret"), "{e}");
        assert!(Location::parse("  ").is_err());
    }
}
