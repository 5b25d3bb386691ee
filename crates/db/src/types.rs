//! The value types shared by the [`Connection`](crate::Connection)
//! dispatcher and every driver: statement parameters and owned values,
//! what a statement did, statement ids and the per-connection statement
//! list, connect options, the `?` placeholder helpers, and the text result
//! of the own MySQL and PostgreSQL clients.

use crate::drivers::sqlite::SqliteOptions;
use crate::{Dialect, Target};

/// A statement parameter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Param<'a> {
    /// SQL NULL.
    Null,
    Int(i64),
    Text(&'a str),
    /// Bytes stored as they are, whatever they hold: a binary string on
    /// MariaDB/MySQL (BLOB, VARBINARY, BINARY, BIT columns), a bytea on
    /// PostgreSQL, a blob on SQLite.
    Bytes(&'a [u8]),
}

/// An owned value: a value of a row read by
/// [`Connection::fetch`](crate::Connection::fetch) (NULL is None there),
/// or of a row to load.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Int(i64),
    Text(String),
    /// The bytes of a binary column (MariaDB/MySQL binary strings and BIT,
    /// PostgreSQL bytea, SQLite blobs), exactly as stored. (A boxed slice
    /// rather than a Vec keeps a Value 24 bytes long, as without it: rows
    /// are read into long vectors of values.)
    Bytes(Box<[u8]>),
}

impl Value {
    pub fn as_param(&self) -> Param<'_> {
        match self {
            Value::Int(i) => Param::Int(*i),
            Value::Text(s) => Param::Text(s),
            Value::Bytes(b) => Param::Bytes(b),
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
    /// sysbench's `--mysql-dry-run`: on a MySQL target, connect to nothing
    /// and take every statement as done, without rows
    /// ([`crate::Connection::Dry`]).
    pub dry_run: bool,
    /// How connections choose among the target's hosts (`--hosts`).
    pub hosts: crate::hosts::HostPolicy,
    /// Where the connections note which host each went to (the run's
    /// per-host counts); None elsewhere.
    pub host_use: Option<std::sync::Arc<crate::hosts::HostUse>>,
}

impl ConnectOptions {
    pub fn new(target: Target) -> Self {
        ConnectOptions {
            target,
            ps_mode: PsMode::Auto,
            sqlite: SqliteOptions::default(),
            query_timeout: None,
            dry_run: false,
            hosts: crate::hosts::HostPolicy::default(),
            host_use: None,
        }
    }
}

/// Copies `sql`, replacing each `?` placeholder outside string literals
/// with what `fill` writes for it (given its 0-based position).
pub(crate) fn replace_placeholders(sql: &str, mut fill: impl FnMut(usize, &mut String)) -> String {
    let mut out = String::with_capacity(sql.len() + 16);
    let mut n = 0;
    let mut in_string = false;
    // The text between placeholders is copied a run at a time (`'` and
    // `?` are ASCII: never part of another character's UTF-8 bytes).
    let mut copied = 0;
    for (i, b) in sql.bytes().enumerate() {
        match b {
            b'\'' => in_string = !in_string,
            b'?' if !in_string => {
                out.push_str(&sql[copied..i]);
                fill(n, &mut out);
                n += 1;
                copied = i + 1;
            }
            _ => {}
        }
    }
    out.push_str(&sql[copied..]);
    out
}

/// Writes `params` into `sql` in place of its `?` placeholders, as SQL
/// literals of `dialect` (for `--db-ps-mode=disable`).
// Kept out of the drivers' `run`, which stay small enough to be inlined
// into `Connection::run` (the prepared statements' hot path).
#[inline(never)]
pub(crate) fn inline_params(sql: &str, params: &[Param<'_>], dialect: Dialect) -> String {
    replace_placeholders(sql, |i, out| match params.get(i) {
        Some(p) => push_literal(out, p, dialect),
        None => out.push('?'),
    })
}

/// Appends `p` as an SQL literal of `dialect`. Text is quoted, `'`
/// doubled; on MariaDB/MySQL, where a backslash in a quoted string is an
/// escape unless the sql_mode says otherwise, text holding one is written
/// as hexadecimal UTF-8 instead, which reads the same in every sql_mode.
/// Bytes are hexadecimal: `X'00ff'` (MariaDB/MySQL, SQLite),
/// `'\x00ff'::bytea` (PostgreSQL).
pub(crate) fn push_literal(out: &mut String, p: &Param<'_>, dialect: Dialect) {
    match *p {
        Param::Null => out.push_str("NULL"),
        // Not write!: the formatting machinery costs several times more.
        Param::Int(v) => out.push_str(itoa::Buffer::new().format(v)),
        Param::Text(t) if dialect == Dialect::Mysql && t.contains('\\') => {
            out.push_str("_utf8mb4 X'");
            push_hex(out, t.as_bytes());
            out.push('\'');
        }
        Param::Text(t) => {
            out.reserve(t.len() + 2);
            out.push('\'');
            for part in t.split_inclusive('\'') {
                out.push_str(part);
                if part.ends_with('\'') {
                    out.push('\'');
                }
            }
            out.push('\'');
        }
        Param::Bytes(b) if dialect == Dialect::Postgres => {
            out.push_str("'\\x");
            push_hex(out, b);
            out.push_str("'::bytea");
        }
        Param::Bytes(b) => {
            out.push_str("X'");
            push_hex(out, b);
            out.push('\'');
        }
    }
}

/// Appends `b` in lowercase hexadecimal, two digits a byte.
pub(crate) fn push_hex(out: &mut String, b: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.reserve(2 * b.len());
    for &x in b {
        out.push(HEX[(x >> 4) as usize] as char);
        out.push(HEX[(x & 15) as usize] as char);
    }
}

/// A result with every value as text (NULL as None), as the own MySQL and
/// PostgreSQL clients return a query sent as text.
#[derive(Debug, Default)]
pub(crate) struct TextResult {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Option<String>>>,
    /// Each result of the query in order (several for `a; b` sent as one
    /// simple query): its columns and how many of `rows` are its own.
    /// Empty where the driver does not tell results apart.
    pub sets: Vec<(Vec<String>, usize)>,
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

/// The text of a value the server sent: its bytes when they are UTF-8
/// (checked word by word, as almost all are), else with U+FFFD for each
/// bad sequence.
pub(crate) fn text_of(b: &[u8]) -> String {
    match std::str::from_utf8(b) {
        Ok(s) => s.to_owned(),
        Err(_) => String::from_utf8_lossy(b).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_stay_small() {
        assert_eq!(std::mem::size_of::<Option<Value>>(), 24);
    }

    #[test]
    fn inlines_literals() {
        for d in [Dialect::Mysql, Dialect::Postgres, Dialect::Sqlite] {
            assert_eq!(
                inline_params(
                    "UPDATE t SET c=? WHERE id=? AND x='?' AND n IS ?",
                    &[Param::Text("it's ''"), Param::Int(-7), Param::Null],
                    d
                ),
                "UPDATE t SET c='it''s ''''' WHERE id=-7 AND x='?' AND n IS NULL"
            );
        }
        let b = [Param::Bytes(&[0, 0xAB, 0xFF]), Param::Bytes(&[])];
        let sql = "VALUES (?, ?)";
        assert_eq!(
            inline_params(sql, &b, Dialect::Mysql),
            "VALUES (X'00abff', X'')"
        );
        assert_eq!(
            inline_params(sql, &b, Dialect::Sqlite),
            "VALUES (X'00abff', X'')"
        );
        assert_eq!(
            inline_params(sql, &b, Dialect::Postgres),
            r"VALUES ('\x00abff'::bytea, '\x'::bytea)"
        );
        // A backslash: hexadecimal on MySQL, as it is elsewhere.
        let t = [Param::Text(r"a\b")];
        assert_eq!(
            inline_params("SELECT ?", &t, Dialect::Mysql),
            "SELECT _utf8mb4 X'615c62'"
        );
        assert_eq!(
            inline_params("SELECT ?", &t, Dialect::Postgres),
            r"SELECT 'a\b'"
        );
    }
}
