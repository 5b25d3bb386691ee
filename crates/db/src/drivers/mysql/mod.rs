//! MariaDB and MySQL through dbmeter's own blocking client ([`wire`]):
//! server-side prepared statements by default, one connection per OS
//! thread.

mod wire;

use crate::hosts::{HostList, HostPolicy, HostUse};
use crate::target::ServerTarget;
use crate::tls::{TlsMode, TlsSettings};
use crate::types::{
    Outcome, Param, PsMode, Statements, StmtId, TextResult, Value, inline_params, push_literal,
};
use crate::{DbError, Dialect, ErrorKind, ResultRows};
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;
pub(crate) use wire::RawRows;
use wire::{Addr, BulkRows, NetSettings, Params, Prepared, WireConn};

/// How `prepare` loads rows: the target's `load=` parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LoadMethod {
    /// The fastest the server takes: bulk, else infile, else insert.
    Auto,
    /// One prepared INSERT run for thousands of rows per command (MariaDB's
    /// COM_STMT_BULK_EXECUTE): no SQL or text to parse on the server.
    Bulk,
    /// LOAD DATA LOCAL INFILE, the rows streamed from memory.
    Infile,
    /// Multi-row INSERTs of about 512 KiB, as sysbench loads.
    Insert,
}

impl LoadMethod {
    fn of(t: &ServerTarget) -> Result<LoadMethod, DbError> {
        Ok(match t.param("load") {
            None | Some("auto") => LoadMethod::Auto,
            Some("bulk") => LoadMethod::Bulk,
            Some("infile") => LoadMethod::Infile,
            Some("insert") => LoadMethod::Insert,
            Some(other) => {
                return Err(DbError::usage(format!(
                    "load={other}: unknown loading method (expected auto, bulk, infile or insert)"
                )));
            }
        })
    }
}

pub struct MysqlConn {
    conn: WireConn,
    load: LoadMethod,
    hosts: Arc<HostList<Params>>,
    /// Session settings made on connect and on every reconnect.
    init: Vec<String>,
    stmts: Statements<Prepared>,
    ps: bool,
    version: String,
    /// The server's id of the current connection, for the interrupter
    /// (it changes on reconnect).
    id: Arc<AtomicU32>,
}

/// Client-side error codes sysbench users know for a lost connection.
const LOST: &str = "2013";

pub(crate) fn map_err(e: wire::Error) -> DbError {
    use wire::Error as E;
    match e {
        E::Server {
            code,
            message,
            state,
        } => {
            let kind = match code {
                // Query execution was interrupted (KILL QUERY), statement timeouts.
                1317 => ErrorKind::Interrupted,
                // max_execution_time (MySQL), max_statement_time (MariaDB).
                3024 | 1969 => ErrorKind::Timeout,
                // Server shutdown in progress, connection killed.
                1053 | 1927 | 4031 => ErrorKind::ConnectionLost,
                _ => ErrorKind::Other,
            };
            DbError {
                kind,
                code: code.to_string(),
                message,
                sqlstate: state,
                position: None,
            }
        }
        E::Io(io) => DbError {
            kind: ErrorKind::ConnectionLost,
            code: LOST.into(),
            message: format!("lost connection: {io}"),
            sqlstate: "HY000".into(),
            position: None,
        },
        // The connection is in an unknown state: start a new one.
        E::Protocol(m) => DbError {
            kind: ErrorKind::ConnectionLost,
            code: "2027".into(),
            message: format!("malformed packet from the server: {m}"),
            sqlstate: "HY000".into(),
            position: None,
        },
        E::Tls(m) => DbError::other("2026", format!("TLS: {m}")),
        E::NoServerTls => DbError::other("2026", "the server does not support TLS"),
        E::Auth(m) => DbError::other("2059", m),
        E::Usage(m) => DbError::other("2000", m),
    }
}

/// What connection `nth` to `t` needs: address, credentials, TLS.
fn wire_params(t: &ServerTarget, nth: usize, tls: &TlsSettings) -> Result<Params, DbError> {
    let addr = match &t.socket {
        Some(s) => Addr::Unix(s.clone()),
        None => Addr::Tcp {
            host: t.host(nth).to_string(),
            port: t.port(nth),
        },
    };
    let tls = tls.wire_params(t, nth, TlsSettings::mysql_config)?;
    Ok(Params {
        addr,
        user: t.user.clone(),
        password: t.password.clone(),
        database: t.database.clone(),
        tls,
        net: NetSettings::of(t)?,
    })
}

/// Connects to one host; an error says which (`name`) and, on a TLS
/// failure, what `mode` asked for.
fn connect(p: &Params, name: &str, mode: TlsMode) -> Result<WireConn, DbError> {
    WireConn::connect(p).map_err(|e| connect_error(e, name, mode))
}

impl MysqlConn {
    pub(crate) fn connect(
        t: &ServerTarget,
        nth: usize,
        ps: PsMode,
        timeout: Option<Duration>,
        shown: String,
        policy: HostPolicy,
        host_use: Option<Arc<HostUse>>,
    ) -> Result<Self, DbError> {
        let tls = TlsSettings::of(t, TlsMode::Disable)?;
        let load = LoadMethod::of(t)?;
        let hosts = Arc::new(HostList::of(t, nth, policy, host_use, &shown, |k| {
            wire_params(t, k, &tls)
        })?);
        let mut conn = hosts.open(|p, name| connect(p, name, tls.mode))?;
        let version = conn.server_version().to_string();
        let mariadb = version.to_ascii_lowercase().contains("mariadb");
        let flavor = if mariadb { "MariaDB" } else { "MySQL" };
        let mut init = Vec::new();
        if let Some(limit) = timeout {
            let set = if mariadb {
                format!("SET SESSION max_statement_time = {}", limit.as_secs_f64())
            } else {
                format!(
                    "SET SESSION max_execution_time = {}",
                    limit.as_millis().max(1)
                )
            };
            conn.query(&set).map_err(|e| {
                let d = map_err(e);
                DbError::other(
                    d.code,
                    format!("cannot set --query-timeout on {shown}: {}", d.message),
                )
            })?;
            init.push(set);
        }
        Ok(MysqlConn {
            load,
            hosts,
            init,
            stmts: Statements::new(),
            ps: ps == PsMode::Auto,
            version: format!("{flavor} {version}"),
            id: Arc::new(AtomicU32::new(conn.connection_id())),
            conn,
        })
    }

    pub(crate) fn reopen(&mut self) -> Result<(), DbError> {
        let mut conn = self.hosts.open(|p, name| {
            let mode = if p.tls.is_some() {
                TlsMode::Require
            } else {
                TlsMode::Disable
            };
            connect(p, name, mode)
        })?;
        for s in &self.init {
            conn.query(s).map_err(map_err)?;
        }
        self.id.store(conn.connection_id(), Ordering::Relaxed);
        self.conn = conn;
        self.stmts.forget_prepared();
        Ok(())
    }

    pub(crate) fn register(&mut self, sql: &str) -> StmtId {
        self.stmts.register(sql)
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
            *cached = Some(self.conn.prepare(sql).map_err(map_err)?);
        }
        Ok(())
    }

    /// Runs registered statement `id`: `exec` on its prepared form
    /// (prepared on first use; when the table changed under it (DDL, error
    /// 1615) prepared again and `exec` retried once), or, with prepared
    /// statements off, `text` on its SQL with the parameters written in.
    /// Both get `out`, where the result goes.
    #[inline]
    fn with_statement<T, O: ?Sized>(
        &mut self,
        id: StmtId,
        params: &[Param<'_>],
        out: &mut O,
        mut exec: impl FnMut(&mut WireConn, &mut Prepared, &mut O) -> Result<T, wire::Error>,
        text: impl FnOnce(&mut WireConn, &str, &mut O) -> Result<T, wire::Error>,
    ) -> Result<T, DbError> {
        let Some((sql, cached)) = self.stmts.get_mut(id) else {
            return Err(DbError::other("2000", "unknown statement id"));
        };
        if !self.ps {
            let sql = inline_params(sql, params, Dialect::Mysql);
            return text(&mut self.conn, &sql, out).map_err(map_err);
        }
        let st = match cached {
            Some(st) => st,
            None => cached.insert(self.conn.prepare(sql).map_err(map_err)?),
        };
        match exec(&mut self.conn, st, out) {
            Err(wire::Error::Server { code: 1615, .. }) => {
                self.conn.close_statement(st).map_err(map_err)?;
                *st = self.conn.prepare(sql).map_err(map_err)?;
                exec(&mut self.conn, st, out).map_err(map_err)
            }
            r => r.map_err(map_err),
        }
    }

    // Out of line: `Connection::run`, which dispatches to every driver,
    // then keeps no room on its stack for this one's locals.
    #[inline(never)]
    pub(crate) fn run(&mut self, id: StmtId, params: &[Param<'_>]) -> Result<Outcome, DbError> {
        self.with_statement(
            id,
            params,
            &mut (),
            |conn, st, _| conn.execute(st, params),
            |conn, text, _| conn.query(text),
        )
    }

    /// Runs a registered statement and appends every value of every row
    /// to `out`, row after row; returns the number of rows.
    pub(crate) fn fetch(
        &mut self,
        id: StmtId,
        params: &[Param<'_>],
        out: &mut Vec<Option<Value>>,
    ) -> Result<u64, DbError> {
        let mark = out.len();
        self.with_statement(
            id,
            params,
            out,
            |conn, st, out| {
                // A retry starts again from the values before the first try.
                out.truncate(mark);
                conn.execute_values(st, params, out)
            },
            |conn, text, out| conn.query_values(text, out),
        )
    }

    /// Runs a registered statement and keeps its rows undecoded in `out`.
    pub(crate) fn fetch_rows(
        &mut self,
        id: StmtId,
        params: &[Param<'_>],
        out: &mut ResultRows,
    ) -> Result<u64, DbError> {
        let r = self.with_statement(
            id,
            params,
            out,
            |conn, st, out| conn.execute_raw(st, params, out.raw()),
            |conn, text, out| conn.query_raw(text, out.raw()),
        );
        out.set_raw();
        r
    }

    /// Runs SQL text and keeps its rows undecoded in `out`.
    pub(crate) fn query_result(&mut self, sql: &str, out: &mut ResultRows) -> Result<u64, DbError> {
        let r = self.conn.query_raw(sql, out.raw());
        out.set_raw();
        r.map_err(map_err)
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
        self.conn.query_values(sql, out).map_err(map_err)
    }

    /// Every row of `sql`, values as text.
    pub(crate) fn query_rows(&mut self, sql: &str) -> Result<TextResult, DbError> {
        self.conn.query_text(sql).map_err(map_err)
    }

    pub(crate) fn query_i64(&mut self, sql: &str) -> Result<Option<i64>, DbError> {
        Ok(self.query_rows(sql)?.first_i64())
    }

    pub(crate) fn tables(&mut self) -> Result<Vec<String>, DbError> {
        let r = self.query_rows(
            "SELECT CAST(table_name AS CHAR) FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY 1",
        )?;
        Ok(r.first_column())
    }

    pub(crate) fn version(&self) -> String {
        self.version.clone()
    }

    /// True when the server accepts LOAD DATA LOCAL INFILE.
    fn local_infile_allowed(&mut self) -> Result<bool, DbError> {
        Ok(self.query_i64("SELECT @@GLOBAL.local_infile")?.unwrap_or(0) != 0)
    }

    /// Loads rows with the method the target asks for and the server
    /// takes (see [`MysqlConn::bulk_method`]).
    pub(crate) fn bulk_insert(
        &mut self,
        table: &str,
        columns: &[&str],
        next_row: &mut (dyn FnMut(&mut Vec<Value>) -> bool + Send),
    ) -> Result<u64, DbError> {
        match self.bulk_plan()?.0 {
            LoadMethod::Bulk => self.insert_bulk(table, columns, next_row),
            LoadMethod::Infile => self.load_data(table, columns, next_row),
            _ => self.insert_rows(table, columns, next_row),
        }
    }

    /// How [`MysqlConn::bulk_insert`] loads rows, said the way `prepare` prints it.
    pub(crate) fn bulk_method(&mut self) -> Result<&'static str, DbError> {
        Ok(self.bulk_plan()?.1)
    }

    /// The loading method used (Bulk, Infile or Insert) and its description.
    fn bulk_plan(&mut self) -> Result<(LoadMethod, &'static str), DbError> {
        const BULK: &str = "prepared INSERTs run in bulk (MariaDB's COM_STMT_BULK_EXECUTE)";
        let bulk = self.conn.can_bulk();
        Ok(match self.load {
            LoadMethod::Auto | LoadMethod::Bulk if bulk => (LoadMethod::Bulk, BULK),
            LoadMethod::Insert => (LoadMethod::Insert, "multi-row INSERTs"),
            asked => match (self.local_infile_allowed()?, asked) {
                (true, LoadMethod::Bulk) => (
                    LoadMethod::Infile,
                    "LOAD DATA LOCAL INFILE (load=bulk: the server cannot run bulk INSERTs, only MariaDB can)",
                ),
                (true, _) => (LoadMethod::Infile, "LOAD DATA LOCAL INFILE"),
                (false, LoadMethod::Bulk) => (
                    LoadMethod::Insert,
                    "multi-row INSERTs (load=bulk: the server cannot run bulk INSERTs, only MariaDB can, and refuses LOAD DATA LOCAL INFILE: local_infile=OFF)",
                ),
                (false, _) => (
                    LoadMethod::Insert,
                    "multi-row INSERTs (the server refuses LOAD DATA LOCAL INFILE: local_infile=OFF)",
                ),
            },
        })
    }

    /// Loads rows with one prepared INSERT run in bulk: each
    /// COM_STMT_BULK_EXECUTE carries about 512 KiB of rows in the binary
    /// protocol, and is one autocommitted statement.
    fn insert_bulk(
        &mut self,
        table: &str,
        columns: &[&str],
        next_row: &mut (dyn FnMut(&mut Vec<Value>) -> bool + Send),
    ) -> Result<u64, DbError> {
        const CHUNK: usize = 512 * 1024;
        let marks = vec!["?"; columns.len()].join(",");
        let sql = format!(
            "INSERT INTO {table} ({}) VALUES ({marks})",
            columns.join(",")
        );
        let st = self.conn.prepare(&sql).map_err(map_err)?;
        let mut rows = BulkRows::default();
        let mut row = Vec::with_capacity(columns.len());
        let mut n = 0u64;
        let loaded = loop {
            row.clear();
            let more = next_row(&mut row);
            let pushed = if more { rows.push(&row) } else { Ok(true) };
            let pushed = match pushed {
                Ok(pushed) => pushed,
                Err(e) => break Err(map_err(e)),
            };
            if !pushed || rows.len() >= CHUNK || (!more && rows.rows() > 0) {
                if let Err(e) = self.conn.bulk_execute(&st, &rows) {
                    break Err(map_err(e));
                }
                rows.clear();
            }
            if !pushed {
                // The row starts a batch of its own types.
                if let Err(e) = rows.push(&row) {
                    break Err(map_err(e));
                }
            }
            if more {
                n += 1;
            } else {
                break Ok(n);
            }
        };
        self.conn.close_statement(&st).map_err(map_err)?;
        loaded
    }

    /// Whether [`MysqlConn::load_delimited`] sends the text as it is
    /// (LOAD DATA LOCAL INFILE): unless the target asks for another
    /// method (`load=`) or the server refuses it.
    pub(crate) fn text_by_infile(&mut self) -> Result<bool, DbError> {
        Ok(!matches!(self.load, LoadMethod::Insert | LoadMethod::Bulk)
            && self.local_infile_allowed()?)
    }

    /// Loads lines of `delimiter`-separated text (see
    /// [`crate::Connection::load_delimited`]) with LOAD DATA LOCAL INFILE;
    /// None when the server refuses it (local_infile=OFF) or the target
    /// asks for another method, and the caller falls back to rows.
    pub(crate) fn load_delimited(
        &mut self,
        table: &str,
        columns: &[&str],
        delimiter: u8,
        fill: &mut (dyn FnMut(&mut Vec<u8>) -> bool + Send),
    ) -> Result<Option<u64>, DbError> {
        if !self.text_by_infile()? {
            return Ok(None);
        }
        let sql = format!(
            "LOAD DATA LOCAL INFILE 'dbmeter-{table}' INTO TABLE {table} CHARACTER SET latin1 \
             FIELDS TERMINATED BY '{}' ESCAPED BY '' LINES TERMINATED BY '\\n' ({})",
            delimiter as char,
            columns.join(",")
        );
        let mut lines = 0u64;
        let mut counted = |buf: &mut Vec<u8>| -> bool {
            let start = buf.len();
            let more = fill(buf);
            lines += buf[start..].iter().filter(|&&b| b == b'\n').count() as u64;
            more
        };
        self.conn.load_local(&sql, &mut counted).map_err(map_err)?;
        Ok(Some(lines))
    }

    /// Loads rows with LOAD DATA LOCAL INFILE, streamed from memory as the
    /// rows are generated (256 KiB per packet). The file's character set
    /// is binary: the server stores the bytes of text and of bytes as they
    /// are, whatever the column's character set; backslash, tab and
    /// newline are escaped.
    fn load_data(
        &mut self,
        table: &str,
        columns: &[&str],
        next_row: &mut (dyn FnMut(&mut Vec<Value>) -> bool + Send),
    ) -> Result<u64, DbError> {
        const CHUNK: usize = 256 * 1024;
        let sql = format!(
            "LOAD DATA LOCAL INFILE 'dbmeter-{table}' INTO TABLE {table} CHARACTER SET binary \
             FIELDS TERMINATED BY '\\t' ESCAPED BY '\\\\' LINES TERMINATED BY '\\n' ({})",
            columns.join(",")
        );
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
                        Value::Text(s) => infile_field(buf, s.as_bytes()),
                        Value::Bytes(b) => infile_field(buf, b),
                    }
                }
                buf.push(b'\n');
            }
            true
        };
        self.conn.load_local(&sql, &mut fill).map_err(map_err)?;
        Ok(produced)
    }

    /// Multi-row INSERTs of about 512 KiB each.
    fn insert_rows(
        &mut self,
        table: &str,
        columns: &[&str],
        next_row: &mut (dyn FnMut(&mut Vec<Value>) -> bool + Send),
    ) -> Result<u64, DbError> {
        let head = format!("INSERT INTO {table} ({}) VALUES ", columns.join(","));
        let mut sql = String::with_capacity(600 * 1024);
        let mut row = Vec::with_capacity(columns.len());
        let mut n = 0u64;
        loop {
            row.clear();
            let more = next_row(&mut row);
            if more {
                sql.push_str(if sql.is_empty() { &head } else { "," });
                sql.push('(');
                for (i, v) in row.iter().enumerate() {
                    if i > 0 {
                        sql.push(',');
                    }
                    push_literal(&mut sql, &v.as_param(), Dialect::Mysql);
                }
                sql.push(')');
                n += 1;
            }
            if (!more && !sql.is_empty()) || sql.len() >= 512 * 1024 {
                self.conn.query(&sql).map_err(map_err)?;
                sql.clear();
            }
            if !more {
                return Ok(n);
            }
        }
    }

    /// Interrupts the running statement with KILL QUERY from a new connection.
    pub(crate) fn interrupter(&self) -> Arc<dyn Fn() + Send + Sync> {
        let hosts = self.hosts.clone();
        let current = self.id.clone();
        Arc::new(move || {
            let hosts = hosts.clone();
            let id = current.load(Ordering::Relaxed);
            std::thread::spawn(move || {
                if let Ok(mut c) = WireConn::connect(hosts.params()) {
                    let _ = c.query(&format!("KILL QUERY {id}"));
                }
            });
        })
    }
}

/// Appends a field of LOAD DATA's text (escaped by a backslash, fields
/// ended by a tab, lines by a newline): those three characters escaped.
/// Most values have none of them and are copied as they are.
fn infile_field(buf: &mut Vec<u8>, b: &[u8]) {
    if !b.iter().any(|c| matches!(c, b'\\' | b'\t' | b'\n')) {
        buf.extend_from_slice(b);
        return;
    }
    for &c in b {
        match c {
            b'\\' => buf.extend_from_slice(b"\\\\"),
            b'\t' => buf.extend_from_slice(b"\\t"),
            b'\n' => buf.extend_from_slice(b"\\n"),
            _ => buf.push(c),
        }
    }
}

fn connect_error(e: wire::Error, shown: &str, mode: TlsMode) -> DbError {
    let message = match &e {
        wire::Error::NoServerTls => format!(
            "cannot connect to {shown}: the server does not support TLS (ssl-mode={mode}); use ssl-mode=disable or preferred, or enable TLS on the server"
        ),
        wire::Error::Server {
            code: 1045,
            message,
            ..
        } => {
            format!("cannot connect to {shown}: access denied (wrong user or password?): {message}")
        }
        wire::Error::Server {
            code: 1049,
            message,
            ..
        } => {
            format!("cannot connect to {shown}: the database does not exist: {message}")
        }
        wire::Error::Server { message, .. } => {
            format!("cannot connect to {shown}: {message}")
        }
        other => format!("cannot connect to {shown}: {other}"),
    };
    let io = matches!(e, wire::Error::Io(_));
    let mut d = map_err(e);
    if io {
        // Can't connect to MySQL server.
        d.code = "2003".into();
    }
    d.message = message;
    d.kind = ErrorKind::Other;
    d
}
