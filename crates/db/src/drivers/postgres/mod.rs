//! PostgreSQL through dbmeter's own blocking client ([`wire`]):
//! named prepared statements by default (Parse once; Bind, Execute, Sync
//! in one write per execution), COPY FROM STDIN for bulk loads, one
//! connection per OS thread.

mod wire;

use crate::hosts::{HostList, HostPolicy, HostUse};
use crate::target::ServerTarget;
use crate::tls::{TlsMode, TlsSettings};
use crate::types::{
    Outcome, Param, PsMode, Statements, StmtId, TextResult, Value, inline_params,
    replace_placeholders,
};
use crate::{DbError, Dialect, ErrorKind};
use std::io::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use wire::{Addr, NetSettings, Params, PgWire, Statement};

pub struct PgConn {
    conn: PgWire,
    hosts: Arc<Hosts>,
    stmts: Statements<Statement>,
    ps: bool,
    version: String,
    /// The backend's process id (high half) and secret key (low half) of
    /// the current connection, for the interrupter (they change on
    /// reconnect).
    key: Arc<AtomicU64>,
    /// The number of columns of the last fetch's or query_values' rows.
    columns: usize,
}

/// Error code of a lost connection (connection_failure).
const LOST: &str = "08006";

#[cold]
#[inline(never)]
pub(crate) fn map_err(e: wire::Error) -> DbError {
    use wire::Error as E;
    match e {
        E::Server(db) => {
            let kind = match db.code.as_str() {
                "57014" if db.message.contains("statement timeout") => ErrorKind::Timeout,
                "57014" => ErrorKind::Interrupted,
                "57P01" | "57P02" | "57P03" => ErrorKind::ConnectionLost,
                _ if db.is_fatal() => ErrorKind::ConnectionLost,
                _ => ErrorKind::Other,
            };
            DbError {
                kind,
                code: db.code,
                message: db.message,
                sqlstate: String::new(),
                position: db.position,
            }
        }
        E::Io(io) => DbError {
            kind: ErrorKind::ConnectionLost,
            code: LOST.into(),
            message: format!("lost connection: {io}"),
            sqlstate: String::new(),
            position: None,
        },
        // The session is in an unknown state: start a new one.
        E::Protocol(m) => DbError {
            kind: ErrorKind::ConnectionLost,
            code: "08P01".into(),
            message: format!("protocol error: {m}"),
            sqlstate: String::new(),
            position: None,
        },
        E::Tls(m) => DbError::other("08001", format!("TLS: {m}")),
        E::NoServerTls => DbError::other("08001", "the server does not support TLS"),
        E::Auth(m) => DbError::other("28000", m),
        E::Usage(m) => DbError::other("22023", m),
    }
}

/// `?` placeholders to `$1, $2, ...` (outside string literals).
pub(crate) fn numbered(sql: &str) -> String {
    replace_placeholders(sql, |i, out| {
        out.push('$');
        out.push_str(&(i + 1).to_string());
    })
}

/// What connection `nth` to `t` needs: address, credentials, TLS (libpq's
/// default mode: prefer), backend options, application name.
fn wire_params(
    t: &ServerTarget,
    nth: usize,
    timeout: Option<Duration>,
) -> Result<(Params, TlsMode), DbError> {
    let tls = TlsSettings::of(t, TlsMode::Prefer)?;
    let port = t.port(nth);
    let addr = match &t.socket {
        // A directory holds .s.PGSQL.<port>, as libpq's host=/dir.
        Some(dir) if dir.is_dir() => Addr::Unix(dir.join(format!(".s.PGSQL.{port}"))),
        Some(path) => Addr::Unix(path.clone()),
        None => Addr::Tcp {
            host: t
                .host(nth)
                .trim_matches(|c| c == '[' || c == ']')
                .to_string(),
            port,
        },
    };
    let tls_params = tls.wire_params(t, nth, TlsSettings::client_config)?;
    // The user's backend options (options=, PGOPTIONS), then the timeout.
    let options = [
        t.param("options").map(str::to_string),
        timeout.map(|l| format!("-c statement_timeout={}", l.as_millis().max(1))),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join(" ");
    Ok((
        Params {
            addr,
            user: t.user.clone(),
            password: t.password.clone(),
            database: t.database.clone(),
            options: (!options.trim().is_empty()).then_some(options),
            application_name: t.param("application_name").unwrap_or("dbmeter").to_string(),
            tls: tls_params,
            net: NetSettings::of(t)?,
        },
        tls.mode,
    ))
}

fn connect_error(e: wire::Error, shown: &str, mode: TlsMode) -> DbError {
    let message = match &e {
        wire::Error::NoServerTls => format!(
            "cannot connect to {shown}: the server does not support TLS (sslmode={mode}); use sslmode=disable or prefer, or enable TLS on the server"
        ),
        wire::Error::Server(db) => match db.code.as_str() {
            "28P01" | "28000" => format!(
                "cannot connect to {shown}: authentication failed (wrong user or password?): {}",
                db.message
            ),
            "3D000" => format!(
                "cannot connect to {shown}: the database does not exist: {}",
                db.message
            ),
            _ => format!("cannot connect to {shown}: {}", db.message),
        },
        other => format!("cannot connect to {shown}: {other}"),
    };
    let mut d = map_err(e);
    d.message = message;
    d.kind = ErrorKind::Other;
    d
}

fn pack(key: (i32, i32)) -> u64 {
    ((key.0 as u32 as u64) << 32) | key.1 as u32 as u64
}

/// libpq's `target_session_attrs`: what a host's session must be for a
/// connection to keep it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SessionAttrs {
    Any,
    ReadWrite,
    ReadOnly,
    Primary,
    Standby,
    PreferStandby,
}

impl SessionAttrs {
    fn of(t: &ServerTarget) -> Result<SessionAttrs, DbError> {
        Ok(match t.param("target_session_attrs").unwrap_or("any") {
            "any" => SessionAttrs::Any,
            "read-write" => SessionAttrs::ReadWrite,
            "read-only" => SessionAttrs::ReadOnly,
            "primary" => SessionAttrs::Primary,
            "standby" => SessionAttrs::Standby,
            "prefer-standby" => SessionAttrs::PreferStandby,
            other => {
                return Err(DbError::usage(format!(
                    "target_session_attrs={other}: unknown (expected any, read-write, read-only, primary, standby or prefer-standby)"
                )));
            }
        })
    }

    fn name(self) -> &'static str {
        match self {
            SessionAttrs::Any => "any",
            SessionAttrs::ReadWrite => "read-write",
            SessionAttrs::ReadOnly => "read-only",
            SessionAttrs::Primary => "primary",
            SessionAttrs::Standby => "standby",
            SessionAttrs::PreferStandby => "prefer-standby",
        }
    }

    /// Whether the session `conn` suits; None when it does, else why not.
    fn refusal(self, conn: &mut PgWire) -> Result<Option<&'static str>, wire::Error> {
        let (sql, want, why) = match self {
            SessionAttrs::Any | SessionAttrs::PreferStandby => return Ok(None),
            SessionAttrs::ReadWrite => ("SHOW transaction_read_only", "off", "it is read-only"),
            SessionAttrs::ReadOnly => ("SHOW transaction_read_only", "on", "it is not read-only"),
            SessionAttrs::Primary => ("SELECT pg_is_in_recovery()", "f", "it is a standby"),
            SessionAttrs::Standby => ("SELECT pg_is_in_recovery()", "t", "it is not a standby"),
        };
        let r = conn.query_text(sql)?;
        let got = r
            .rows
            .first()
            .and_then(|row| row.first().cloned().flatten());
        Ok((got.as_deref() != Some(want)).then_some(why))
    }
}

/// The hosts a connection may use, and the session it needs
/// (`target_session_attrs`).
struct Hosts {
    list: HostList<Params>,
    attrs: SessionAttrs,
}

impl Hosts {
    fn of(
        t: &ServerTarget,
        nth: usize,
        timeout: Option<Duration>,
        policy: HostPolicy,
        host_use: Option<Arc<HostUse>>,
        shown: &str,
    ) -> Result<(Hosts, TlsMode), DbError> {
        let mut mode = TlsMode::Prefer;
        let list = HostList::of(t, nth, policy, host_use, shown, |k| {
            let (p, m) = wire_params(t, k, timeout)?;
            mode = m;
            Ok(p)
        })?;
        let attrs = SessionAttrs::of(t)?;
        Ok((Hosts { list, attrs }, mode))
    }

    fn params(&self) -> &Params {
        self.list.params()
    }

    /// Connects to the first host that answers and suits the session
    /// attributes (prefer-standby: a standby if one answers, else any).
    fn open(&self, mode: impl Fn(&Params) -> TlsMode) -> Result<PgWire, DbError> {
        let pass = |attrs: SessionAttrs| {
            self.list.open(|p, name| {
                let mut conn = PgWire::connect(p).map_err(|e| connect_error(e, name, mode(p)))?;
                match attrs.refusal(&mut conn) {
                    Ok(None) => Ok(conn),
                    Ok(Some(why)) => Err(DbError::other(
                        "08001",
                        format!(
                            "cannot connect to {name}: target_session_attrs={}: {why}",
                            attrs.name()
                        ),
                    )),
                    Err(e) => Err(connect_error(e, name, mode(p))),
                }
            })
        };
        match self.attrs {
            SessionAttrs::PreferStandby => {
                pass(SessionAttrs::Standby).or_else(|_| pass(SessionAttrs::Any))
            }
            a => pass(a),
        }
    }
}

impl PgConn {
    pub(crate) fn connect(
        t: &ServerTarget,
        nth: usize,
        ps: PsMode,
        timeout: Option<Duration>,
        shown: String,
        policy: HostPolicy,
        host_use: Option<Arc<HostUse>>,
    ) -> Result<Self, DbError> {
        let (hosts, mode) = Hosts::of(t, nth, timeout, policy, host_use, &shown)?;
        let conn = hosts.open(|_| mode)?;
        let version = format!("PostgreSQL {}", conn.server_version());
        Ok(PgConn {
            hosts: Arc::new(hosts),
            stmts: Statements::new(),
            ps: ps == PsMode::Auto,
            version,
            key: Arc::new(AtomicU64::new(pack(conn.backend_key()))),
            conn,
            columns: 0,
        })
    }

    pub(crate) fn reopen(&mut self) -> Result<(), DbError> {
        let conn = self.hosts.open(|p| {
            if p.tls.is_some() {
                TlsMode::Require
            } else {
                TlsMode::Disable
            }
        })?;
        self.key.store(pack(conn.backend_key()), Ordering::Relaxed);
        self.conn = conn;
        self.stmts.forget_prepared();
        Ok(())
    }

    pub(crate) fn register(&mut self, sql: &str) -> StmtId {
        self.stmts.register(sql)
    }

    /// Whether the session is in a transaction block.
    pub(crate) fn in_transaction(&self) -> bool {
        self.conn.in_transaction()
    }

    /// The last error the server reported, as libpq words it.
    pub(crate) fn last_report(&self) -> Option<&str> {
        self.conn.last_report()
    }

    /// The notices and warnings (`WARNING 01000: ...`) the server sent
    /// since the last call.
    pub(crate) fn take_notices(&mut self) -> Vec<String> {
        self.conn.take_notices()
    }

    /// Prepares registered statement `id` now (with prepared statements
    /// on), so that a statement the server refuses fails here.
    pub(crate) fn prepare_now(&mut self, id: StmtId) -> Result<(), DbError> {
        if !self.ps {
            return Ok(());
        }
        if let Some((sql, cached)) = self.stmts.get_mut(id)
            && cached.is_none()
        {
            *cached = Some(self.conn.prepare(&numbered(sql)).map_err(map_err)?);
        }
        Ok(())
    }

    /// Runs a registered statement: Bind, Execute and Sync of its
    /// prepared statement once it is prepared (the rest, out of line, is
    /// [`PgConn::run_first`]: the stack of every execution stays shallow).
    #[inline]
    pub(crate) fn run(&mut self, id: StmtId, params: &[Param<'_>]) -> Result<Outcome, DbError> {
        if self.ps
            && let Some((_, Some(st))) = self.stmts.get_mut(id)
        {
            return self.conn.execute(st, params).map_err(map_err);
        }
        self.run_first(id, params)
    }

    /// [`PgConn::run`] of a statement not prepared yet, or without
    /// prepared statements (the parameters inlined into the text).
    #[inline(never)]
    fn run_first(&mut self, id: StmtId, params: &[Param<'_>]) -> Result<Outcome, DbError> {
        let Some((sql, cached)) = self.stmts.get_mut(id) else {
            return Err(DbError::other("XX000", "unknown statement id"));
        };
        if !self.ps {
            let text = inline_params(sql, params, Dialect::Postgres);
            return self.conn.query(&text).map_err(map_err);
        }
        let st = match cached {
            Some(st) => st,
            None => cached.insert(self.conn.prepare(&numbered(sql)).map_err(map_err)?),
        };
        self.conn.execute(st, params).map_err(map_err)
    }

    /// Runs a registered statement and appends every value of every row
    /// to `out`, row after row; returns the number of rows.
    pub(crate) fn fetch(
        &mut self,
        id: StmtId,
        params: &[Param<'_>],
        out: &mut Vec<Option<Value>>,
    ) -> Result<u64, DbError> {
        let Some((sql, cached)) = self.stmts.get_mut(id) else {
            return Err(DbError::other("XX000", "unknown statement id"));
        };
        if !self.ps {
            let text = inline_params(sql, params, Dialect::Postgres);
            let r = self.conn.query_values(&text, out).map_err(map_err);
            self.columns = self.conn.simple_columns();
            return r;
        }
        let st = match cached {
            Some(st) => st,
            None => cached.insert(self.conn.prepare(&numbered(sql)).map_err(map_err)?),
        };
        self.columns = st.column_count();
        self.conn.execute_values(st, params, out).map_err(map_err)
    }

    pub(crate) fn execute(&mut self, sql: &str) -> Result<Outcome, DbError> {
        self.conn.query(sql).map_err(map_err)
    }

    /// Runs SQL text, appending its rows' values to `out`.
    pub(crate) fn query_values(
        &mut self,
        sql: &str,
        out: &mut Vec<Option<Value>>,
    ) -> Result<u64, DbError> {
        let r = self.conn.query_values(sql, out).map_err(map_err);
        self.columns = self.conn.simple_columns();
        r
    }

    /// The number of columns of the rows the last `fetch` or
    /// `query_values` read (whether or not any row came).
    pub(crate) fn last_columns(&self) -> usize {
        self.columns
    }

    /// Every row of `sql`, values as text.
    pub(crate) fn query_rows(&mut self, sql: &str) -> Result<TextResult, DbError> {
        self.conn.query_text(sql).map_err(map_err)
    }

    /// Runs `sql` (`$n` placeholders) once as the unnamed statement of
    /// the extended protocol, parameters as text (None for NULL); returns
    /// the rows it returned or changed.
    pub(crate) fn execute_unnamed(
        &mut self,
        sql: &str,
        params: &[Option<&str>],
    ) -> Result<u64, DbError> {
        let args: Vec<wire::Arg<'_>> = params
            .iter()
            .map(|p| p.map_or(wire::Arg::Null, wire::Arg::Text))
            .collect();
        self.conn
            .query_args(sql, &args)
            .map(|(_, n)| n)
            .map_err(map_err)
    }

    /// Pipeline mode: queues `sql` as the unnamed statement, parameters
    /// as text (see [`crate::Connection::pipeline_queue`]).
    pub(crate) fn pipeline_queue(
        &mut self,
        sql: &str,
        params: &[Option<&str>],
    ) -> Result<(), DbError> {
        self.conn.pipeline_queue(sql, params).map_err(map_err)
    }

    /// Sends the queued commands with a Sync and reads their results.
    pub(crate) fn pipeline_sync(&mut self) -> Result<(), DbError> {
        self.conn.pipeline_sync().map_err(map_err)
    }

    pub(crate) fn query_i64(&mut self, sql: &str) -> Result<Option<i64>, DbError> {
        Ok(self.query_rows(sql)?.first_i64())
    }

    pub(crate) fn tables(&mut self) -> Result<Vec<String>, DbError> {
        let r = self.query_rows(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1",
        )?;
        Ok(r.first_column())
    }

    pub(crate) fn version(&self) -> String {
        self.version.clone()
    }

    /// Loads rows with COPY FROM STDIN (text format), streamed as they
    /// are generated, 256 KiB per CopyData message.
    pub(crate) fn copy_in(
        &mut self,
        table: &str,
        columns: &[&str],
        next_row: &mut (dyn FnMut(&mut Vec<Value>) -> bool + Send),
    ) -> Result<u64, DbError> {
        const CHUNK: usize = 256 * 1024;
        let sql = format!("COPY {table} ({}) FROM STDIN", columns.join(","));
        let mut produced = 0u64;
        let mut row = Vec::with_capacity(columns.len());
        let mut fill = |buf: &mut Vec<u8>| -> bool {
            let start = buf.len();
            while buf.len() - start < CHUNK {
                row.clear();
                if !next_row(&mut row) {
                    return false;
                }
                produced += 1;
                for (i, v) in row.iter().enumerate() {
                    if i > 0 {
                        buf.push(b'\t');
                    }
                    match v {
                        Value::Int(x) => {
                            let _ = write!(buf, "{x}");
                        }
                        Value::Text(s) => copy_text(buf, s),
                        // bytea's hex form, its backslash escaped.
                        Value::Bytes(b) => {
                            buf.extend_from_slice(b"\\");
                            wire::bytea_hex(b, buf);
                        }
                    }
                }
                buf.push(b'\n');
            }
            true
        };
        self.conn.copy_in(&sql, &mut fill).map_err(map_err)?;
        Ok(produced)
    }

    /// Loads lines of `delimiter`-separated text (see
    /// [`crate::Connection::load_delimited`]) with COPY FROM STDIN.
    pub(crate) fn copy_delimited(
        &mut self,
        table: &str,
        columns: &[&str],
        delimiter: u8,
        fill: &mut (dyn FnMut(&mut Vec<u8>) -> bool + Send),
    ) -> Result<u64, DbError> {
        let sql = format!(
            "COPY {table} ({}) FROM STDIN WITH (FORMAT text, DELIMITER '{}')",
            columns.join(","),
            delimiter as char
        );
        self.conn.copy_in(&sql, fill).map_err(map_err)
    }

    /// Interrupts the running statement with a cancel request (from a
    /// thread of its own: the caller does not wait).
    pub(crate) fn interrupter(&self) -> Arc<dyn Fn() + Send + Sync> {
        let hosts = self.hosts.clone();
        let key = self.key.clone();
        Arc::new(move || {
            let hosts = hosts.clone();
            let k = key.load(Ordering::Relaxed);
            std::thread::spawn(move || {
                let _ = wire::cancel(hosts.params(), (k >> 32) as u32 as i32, k as u32 as i32);
            });
        })
    }
}

/// A blocking PostgreSQL client for tools around the benchmark (the
/// results store): the same TLS, socket and password handling as
/// benchmark connections, statements with `$n` placeholders and typed
/// arguments, rows of typed cells.
pub struct PgClient {
    conn: PgWire,
}

/// An argument of [`PgClient::query`], sent as text for the server to
/// convert to the type it infers (bytes as bytea).
pub use wire::Arg as PgArg;
/// A value of a row of [`PgClient::query`] (by the column's type:
/// integers and booleans as Int, floats as Real, bytea as Bytes, the rest
/// as Text).
pub use wire::Cell as PgCell;

impl PgClient {
    /// Connects; errors name `shown` (the masked URL).
    pub fn connect(t: &ServerTarget, shown: &str) -> Result<PgClient, DbError> {
        let (params, mode) = wire_params(t, 0, None)?;
        let conn = PgWire::connect(&params).map_err(|e| connect_error(e, shown, mode))?;
        Ok(PgClient { conn })
    }

    /// Runs SQL text: one or several statements without parameters.
    pub fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.conn.query(sql).map(|_| ()).map_err(map_err)
    }

    /// Runs one statement; returns its rows and the number of rows it
    /// changed (or returned).
    pub fn query(
        &mut self,
        sql: &str,
        args: &[PgArg<'_>],
    ) -> Result<(Vec<Vec<PgCell>>, u64), DbError> {
        self.conn.query_args(sql, args).map_err(map_err)
    }

    /// True once the connection has failed.
    pub fn is_closed(&self) -> bool {
        self.conn.is_broken()
    }
}

/// Appends `s` as a field of COPY's text format: backslash, tab, newline
/// and carriage return escaped. Most values have none of them and are
/// copied as they are.
fn copy_text(buf: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    if !bytes
        .iter()
        .any(|b| matches!(b, b'\\' | b'\t' | b'\n' | b'\r'))
    {
        buf.extend_from_slice(bytes);
        return;
    }
    for &b in bytes {
        match b {
            b'\\' => buf.extend_from_slice(b"\\\\"),
            b'\t' => buf.extend_from_slice(b"\\t"),
            b'\n' => buf.extend_from_slice(b"\\n"),
            b'\r' => buf.extend_from_slice(b"\\r"),
            _ => buf.push(b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_text_escapes() {
        let mut b = Vec::new();
        copy_text(&mut b, "12-34");
        copy_text(&mut b, "a\\b\tc\nd\re");
        assert_eq!(&b[..], b"12-34a\\\\b\\tc\\nd\\re");
    }

    #[test]
    fn numbers_placeholders() {
        assert_eq!(
            numbered("SELECT c FROM t WHERE id BETWEEN ? AND ? AND x='?'"),
            "SELECT c FROM t WHERE id BETWEEN $1 AND $2 AND x='?'"
        );
    }
}
