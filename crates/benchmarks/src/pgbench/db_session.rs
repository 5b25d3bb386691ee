//! A [`Session`] over one of dbmeter's connections, in pgbench's three
//! query modes:
//!
//! - simple: the SQL text with the variables written in, sent as text;
//! - extended: on PostgreSQL the unnamed statement of the extended
//!   protocol each time (Parse, Bind, Execute, Sync), parameters as text,
//!   as pgbench sends them; elsewhere as prepared;
//! - prepared: each command prepared once per connection and executed
//!   with its parameters.
//!
//! A command whose rows `\gset`/`\aset` store is sent as text with its
//! parameters written in as quoted literals (the connection reads column
//! names only from text queries). On MySQL/MariaDB, `END` (which MySQL
//! does not know) is sent as `COMMIT`.

use super::script::CommandKind;
use super::script_set::ScriptSet;
use super::session::{Captured, Params, Query, QueryMode, Session, SqlError, SqlErrorKind};
use dbmeter_db::{Connection, DbError, Dialect, ErrorKind, Param, StmtId};
use std::sync::Arc;

pub struct DbSession {
    conn: Connection,
    set: Arc<ScriptSet>,
    /// Prepared statements by script and command.
    prepared: Vec<Vec<Option<StmtId>>>,
    text: String,
    /// The kind and code of the last error, for the user's handling.
    last_error: Option<(ErrorKind, String)>,
    /// Between `\startpipeline` and `\endpipeline` on PostgreSQL: commands
    /// are queued and sent together.
    in_pipeline: bool,
}

/// A driver's error as the client sorts it.
pub fn sql_error(e: DbError) -> SqlError {
    if e.kind == ErrorKind::ConnectionLost {
        return SqlError {
            kind: SqlErrorKind::ConnectionLost,
            code: e.code,
            message: e.message,
            report: None,
        };
    }
    let mut s = SqlError::from_sqlstate(&e.code, e.message);
    // MySQL/MariaDB's codes for a deadlock and a lock wait timeout.
    if s.code == "1213" {
        s.kind = SqlErrorKind::Deadlock;
    }
    s
}

/// Whether `sql` is pgbench's `END` (MySQL has no such statement).
fn is_end(sql: &str) -> bool {
    sql.trim()
        .trim_end_matches(';')
        .trim()
        .eq_ignore_ascii_case("end")
}

/// The integer `t` writes, when `t` is exactly how that integer is
/// written (no sign but `-`, no leading zero): such a parameter is sent
/// as an integer, anything else as text.
fn canonical_int(t: &str) -> Option<i64> {
    let digits = t.strip_prefix('-').unwrap_or(t);
    if digits.is_empty()
        || !digits.bytes().all(|b| b.is_ascii_digit())
        || (digits.len() > 1 && digits.starts_with('0'))
        || (digits == "0" && t.len() > 1)
    {
        return None;
    }
    t.parse().ok()
}

/// `sql` with each `$n` replaced by parameter n as a quoted literal
/// (NULL when unset).
fn inline(sql: &str, params: &super::session::Params, out: &mut String) {
    let b = sql.as_bytes();
    let mut i = 0;
    let mut copied = 0;
    while i < b.len() {
        if b[i] == b'$' && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
            let mut end = i + 1;
            while b.get(end).is_some_and(u8::is_ascii_digit) {
                end += 1;
            }
            let n: usize = sql[i + 1..end].parse().unwrap_or(0);
            if n >= 1 && n <= params.len() {
                out.push_str(&sql[copied..i]);
                match params.get(n - 1) {
                    Some(v) => {
                        out.push('\'');
                        out.push_str(&v.replace('\'', "''"));
                        out.push('\'');
                    }
                    None => out.push_str("NULL"),
                }
                copied = end;
            }
            i = end;
            continue;
        }
        i += 1;
    }
    out.push_str(&sql[copied..]);
}

impl DbSession {
    pub fn new(conn: Connection, set: Arc<ScriptSet>) -> DbSession {
        let prepared = set
            .scripts()
            .iter()
            .map(|s| vec![None; s.commands.len()])
            .collect();
        DbSession {
            conn,
            set,
            prepared,
            text: String::new(),
            last_error: None,
            in_pipeline: false,
        }
    }

    /// The kind and code of the last failed command.
    pub fn last_error(&self) -> Option<(ErrorKind, String)> {
        self.last_error.clone()
    }

    /// A handle that interrupts the command running on the connection.
    pub fn interrupter(&self) -> Option<Arc<dyn Fn() + Send + Sync>> {
        self.conn.interrupter()
    }

    pub fn connection(&mut self) -> &mut Connection {
        &mut self.conn
    }

    /// After a reconnect: the new connection has no prepared statements
    /// (the connection prepares registered ones again on first use).
    pub fn reconnect(&mut self) -> Result<(), DbError> {
        self.conn.reconnect()
    }

    /// Each result of `sql` (several for `a \; b`): its row count and
    /// its last row.
    fn capture(&mut self, sql: &str, captured: &mut Captured) -> Result<(), DbError> {
        let rows = self.conn.query_rows(sql)?;
        let mut start = 0;
        for (columns, n) in &rows.sets {
            captured.begin_result(*n as u64);
            if *n > 0
                && let Some(last) = rows.rows.get(start + n - 1)
            {
                for (c, v) in columns.iter().zip(last) {
                    captured.push_value(c, v.as_deref());
                }
            }
            start += n;
        }
        Ok(())
    }

    fn prepared(&mut self, q: &Query<'_>) -> Result<(), DbError> {
        let id = match self
            .prepared
            .get(q.script)
            .and_then(|s| s.get(q.command))
            .copied()
        {
            Some(Some(id)) => id,
            Some(None) => {
                let sql = match self.set.scripts()[q.script].commands[q.command].kind {
                    CommandKind::Sql(ref c) => c.question.clone(),
                    _ => q.sql.to_string(),
                };
                let id = self.conn.register(&sql);
                self.prepared[q.script][q.command] = Some(id);
                id
            }
            None => {
                return Err(DbError::other(
                    "XX000",
                    "no such command in the run's scripts",
                ));
            }
        };
        // The parameters on the stack (no allocation per command), in an
        // array no larger than they need: it is written whole, and each
        // of its cache lines is one more to touch per command.
        match q.params.len() {
            0..=2 => run_with::<2>(&mut self.conn, id, q.params),
            3..=4 => run_with::<4>(&mut self.conn, id, q.params),
            5..=8 => run_with::<8>(&mut self.conn, id, q.params),
            9..=16 => run_with::<16>(&mut self.conn, id, q.params),
            _ => {
                let params: Vec<Param<'_>> = q.params.iter().map(param).collect();
                self.conn.run(id, &params).map(|_| ())
            }
        }
    }
}

/// A parameter's text as bound: an unset variable as NULL (as pgbench
/// binds it), an integer's canonical text as the integer.
fn param(t: Option<&str>) -> Param<'_> {
    let Some(t) = t else {
        return Param::Null;
    };
    match canonical_int(t) {
        Some(i) => Param::Int(i),
        None => Param::Text(t),
    }
}

/// Runs statement `id` with `params` (at most `N`) from an array of `N`
/// on the stack.
#[inline(never)]
fn run_with<const N: usize>(
    conn: &mut Connection,
    id: StmtId,
    params: &Params,
) -> Result<(), DbError> {
    let mut on_stack = [Param::Null; N];
    for (slot, p) in on_stack.iter_mut().zip(params.iter()) {
        *slot = param(p);
    }
    conn.run(id, &on_stack[..params.len()]).map(|_| ())
}

impl Session for DbSession {
    fn query(&mut self, q: &Query<'_>, capture: Option<&mut Captured>) -> Result<(), SqlError> {
        let r = if self.in_pipeline && capture.is_none() {
            self.queue(q)
        } else {
            self.send(q, capture)
        };
        r.map_err(|e| self.failed(e))
    }

    /// On PostgreSQL in the extended and prepared modes, the commands up
    /// to `\endpipeline` are queued and sent together with one Sync, as
    /// pgbench's pipeline mode sends them (as unnamed statements, the
    /// prepared mode too); elsewhere they run one by one.
    fn begin_pipeline(&mut self) -> Result<bool, SqlError> {
        self.in_pipeline = self.conn.dialect() == Dialect::Postgres;
        Ok(self.in_pipeline)
    }

    fn end_pipeline(&mut self) -> Result<(), SqlError> {
        if !std::mem::take(&mut self.in_pipeline) {
            return Ok(());
        }
        match self.conn.pipeline_sync() {
            Some(Ok(())) | None => Ok(()),
            Some(Err(e)) => Err(self.failed(e)),
        }
    }

    fn in_transaction(&mut self) -> Option<bool> {
        if self.in_pipeline {
            return None;
        }
        self.conn.in_transaction()
    }
}

impl DbSession {
    fn failed(&mut self, e: DbError) -> SqlError {
        self.last_error = Some((e.kind, e.code.clone()));
        let mut s = sql_error(e);
        if s.kind != SqlErrorKind::ConnectionLost {
            // Only the report of this very error (not an older one's).
            s.report = self
                .conn
                .last_error_report()
                .filter(|r| r.contains(&s.message));
        }
        s
    }

    /// Queues a command of a pipeline (its `$n` form and parameters; in
    /// the simple mode, which pgbench refuses in pipelines, its text).
    fn queue(&mut self, q: &Query<'_>) -> Result<(), DbError> {
        let params: Vec<Option<&str>> = q.params.iter().collect();
        match self.conn.pipeline_queue(q.sql, &params) {
            Some(r) => r,
            None => self.send(q, None),
        }
    }

    fn send(&mut self, q: &Query<'_>, capture: Option<&mut Captured>) -> Result<(), DbError> {
        let mysql = self.conn.dialect() == Dialect::Mysql;
        if mysql && is_end(q.sql) {
            return self.conn.execute("COMMIT").map(|_| ());
        }
        if let Some(captured) = capture {
            let mut text = std::mem::take(&mut self.text);
            text.clear();
            let sql = match q.mode {
                QueryMode::Simple => q.sql,
                QueryMode::Extended | QueryMode::Prepared => {
                    inline(q.sql, q.params, &mut text);
                    &text
                }
            };
            let r = self.capture(sql, captured);
            self.text = text;
            return r;
        }
        match q.mode {
            QueryMode::Simple => self.conn.execute(q.sql).map(|_| ()),
            QueryMode::Extended => {
                let params: Vec<Option<&str>> = q.params.iter().collect();
                let r = self.conn.execute_unnamed(q.sql, &params);
                match r {
                    Some(r) => r.map(|_| ()),
                    None => self.prepared(q),
                }
            }
            QueryMode::Prepared => self.prepared(q),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::session::Params;
    use super::*;

    #[test]
    fn parameters_written_in() {
        let mut p = Params::default();
        p.push_with(|s| {
            s.push_str("it's");
            true
        });
        p.push_with(|_| false);
        let mut out = String::new();
        inline("SELECT $1, $2, $3, '$'", &p, &mut out);
        assert_eq!(out, "SELECT 'it''s', NULL, $3, '$'");
        for (t, want) in [
            ("12", Some(12)),
            ("-7", Some(-7)),
            ("0", Some(0)),
            ("-0", None),
            ("007", None),
            ("+1", None),
            ("", None),
            ("1.5", None),
            ("99999999999999999999", None),
        ] {
            assert_eq!(canonical_int(t), want, "{t}");
        }
        assert!(is_end("END;"));
        assert!(is_end(" end "));
        assert!(!is_end("ENDX"));
    }
}
