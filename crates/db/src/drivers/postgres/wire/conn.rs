//! Commands on an open session: simple queries, named prepared
//! statements (Parse and Describe once; Bind, Execute and Sync in one
//! write per execution), unnamed statements with text parameters (the
//! results store), COPY FROM STDIN.
//!
//! After an error the server skips messages up to the next Sync and then
//! says it is ready again; every command here ends with a Sync, so an
//! error is returned once that ReadyForQuery is read and the session can
//! be used again (unless the error was FATAL: the server then closes it).

use super::messages::{self as m, Column, Messages};
use super::startup::{self, Session};
use super::values::{self, BYTEA, INT2, INT4, INT8};
use super::{Error, Params, ServerError};
use crate::types::TextResult;
use crate::types::{Outcome, Param, Value};
use std::io::Write as _;

pub(crate) struct PgWire {
    io: Messages,
    session: Session,
    /// Commands queued in pipeline mode, not yet sent (see
    /// [`PgWire::pipeline_queue`]).
    pipelined: usize,
    /// Statements prepared so far (their names are `s<n>`).
    prepared: u32,
    /// The connection failed: nothing more can be sent on it.
    broken: bool,
    /// The column types of the simple query being read (kept to reuse
    /// its room).
    types: Vec<u32>,
    /// The last error the server reported, as libpq words it.
    last_report: Option<String>,
    /// The notices and warnings the server sent since they were last
    /// taken (at most [`MAX_NOTICES`]).
    notices: Vec<String>,
}

/// Notices kept until taken; later ones are dropped.
const MAX_NOTICES: usize = 100;

/// Keeps a NoticeResponse as `SEVERITY CODE: message`.
#[cold]
#[inline(never)]
fn keep_notice(notices: &mut Vec<String>, body: &[u8]) {
    if notices.len() < MAX_NOTICES {
        let n = m::error_fields(body);
        notices.push(format!("{} {}: {}", n.severity, n.code, n.message));
    }
}

/// A named prepared statement.
#[derive(Clone, Debug)]
pub(crate) struct Statement {
    name: String,
    /// The type of each parameter, as the server inferred it.
    params: Vec<u32>,
    /// The type of each result column; none for a statement without rows.
    columns: Vec<u32>,
    /// The statement returns rows (a RowDescription, not NoData).
    returns_rows: bool,
    /// Bind's result format codes, encoded: binary for the columns
    /// [`values::binary_result`] picks, text for the others.
    result_formats: Vec<u8>,
}

/// A parameter of a statement run with [`PgWire::query_args`], sent in
/// text format (bytes in bytea's hex form) for the server to convert to
/// the type it infers.
#[derive(Clone, Copy, Debug)]
pub enum Arg<'a> {
    Null,
    Int(i64),
    Real(f64),
    Text(&'a str),
    Bytes(&'a [u8]),
}

/// A value of a row read by [`PgWire::query_args`].
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Bytes(Vec<u8>),
}

/// What to do with the rows of a result.
enum Rows<'a> {
    Count,
    Text(&'a mut TextResult),
    /// Values of the rows of a prepared statement with columns of these
    /// types (in the formats of its `result_formats`), or of a simple
    /// query (None: text, typed by its RowDescription).
    Values(&'a mut Vec<Option<Value>>, Option<&'a [u32]>),
}

/// Text of COPY FROM STDIN: appends some bytes to the buffer, returns
/// false when there is nothing more.
pub(crate) type CopySource<'a> = &'a mut dyn FnMut(&mut Vec<u8>) -> bool;

/// Nothing to do with a message during a command.
#[inline]
fn is_async(tag: u8) -> bool {
    matches!(
        tag,
        m::NOTICE_RESPONSE | m::PARAMETER_STATUS | m::NOTIFICATION_RESPONSE
    )
}

#[cold]
#[inline(never)]
fn unexpected(tag: u8, during: &str) -> Error {
    Error::Protocol(format!(
        "unexpected message '{}' during {during}",
        tag.escape_ascii()
    ))
}

/// A DataRow's values into `rows`' vector: out of line, so that a
/// statement whose rows are only counted keeps no room for it on the
/// stack.
#[inline(never)]
fn row_values(rows: &mut Rows<'_>, body: &[u8]) -> Result<(), Error> {
    match rows {
        Rows::Values(out, Some(types)) => m::data_row(body, |i, v| {
            out.push(match v {
                Some(raw) => Some(values::result_value(
                    types.get(i).copied().unwrap_or(0),
                    raw,
                )?),
                None => None,
            });
            Ok(())
        }),
        Rows::Values(out, None) => m::data_row(body, |_, v| {
            out.push(v.map(|raw| values::text_value(0, raw)));
            Ok(())
        }),
        Rows::Count | Rows::Text(_) => Ok(()),
    }
}

impl Statement {
    /// The number of columns of its rows.
    pub(crate) fn column_count(&self) -> usize {
        self.columns.len()
    }
}

impl PgWire {
    /// Connects and authenticates.
    pub(crate) fn connect(p: &Params) -> Result<PgWire, Error> {
        // A connect blocks its thread, timeouts and all, even for a client
        // that runs as a task of a thread's loop (as pgbench's does).
        let (io, session) = dbmeter_coop::blocking(|| startup::connect(p))?;
        Ok(PgWire {
            io,
            session,
            pipelined: 0,
            prepared: 0,
            broken: false,
            types: Vec::new(),
            last_report: None,
            notices: Vec::new(),
        })
    }

    /// The backend's process id and secret key, for cancel requests.
    pub(crate) fn backend_key(&self) -> (i32, i32) {
        (self.session.pid, self.session.key)
    }

    /// The server's version, as `SHOW server_version` gives it.
    pub(crate) fn server_version(&self) -> &str {
        &self.session.version
    }

    /// Whether the session is in a transaction block (ReadyForQuery's
    /// status `T` or `E`).
    pub(crate) fn in_transaction(&self) -> bool {
        self.io.tx_status != b'I'
    }

    /// True once the connection has failed.
    pub(crate) fn is_broken(&self) -> bool {
        self.broken
    }

    /// Sends what is in the output buffer.
    fn send(&mut self) -> Result<(), Error> {
        if self.broken {
            self.io.out.clear();
            return Err(Error::Io(std::io::Error::new(
                std::io::ErrorKind::NotConnected,
                "the connection was lost",
            )));
        }
        let r = self.io.send();
        self.check(r)
    }

    /// Marks the connection broken when `r` says it is.
    #[inline]
    fn check<T>(&mut self, r: Result<T, Error>) -> Result<T, Error> {
        if let Err(e) = &r {
            self.note(e);
        }
        r
    }

    /// [`PgWire::check`]'s error: out of line, as errors are rare.
    #[cold]
    #[inline(never)]
    fn note(&mut self, e: &Error) {
        match e {
            Error::Io(_) | Error::Protocol(_) => self.broken = true,
            Error::Server(s) if s.is_fatal() => self.broken = true,
            _ => {}
        }
        if let Error::Server(s) = e {
            self.last_report = Some(s.report());
        }
    }

    /// The last error the server reported (`ERROR:  ...` with its
    /// DETAIL, HINT and CONTEXT lines).
    pub(crate) fn last_report(&self) -> Option<&str> {
        self.last_report.as_deref()
    }

    /// The notices and warnings the server sent since the last call.
    pub(crate) fn take_notices(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notices)
    }

    /// Reads up to ReadyForQuery after an error and returns the error.
    #[cold]
    #[inline(never)]
    fn fail<T>(&mut self, e: ServerError) -> Result<T, Error> {
        if !e.is_fatal() {
            self.ready()?;
        }
        Err(Error::Server(Box::new(e)))
    }

    /// Skips messages up to ReadyForQuery.
    fn ready(&mut self) -> Result<(), Error> {
        loop {
            let (tag, _) = self.io.read()?;
            if tag == m::READY_FOR_QUERY {
                self.io.shrink();
                return Ok(());
            }
        }
    }

    /// Runs SQL text (the simple query protocol); rows are counted.
    pub(crate) fn query(&mut self, sql: &str) -> Result<Outcome, Error> {
        self.simple(sql, Rows::Count, None)
    }

    /// Runs SQL text; returns the first result's columns and every row.
    pub(crate) fn query_text(&mut self, sql: &str) -> Result<TextResult, Error> {
        let mut out = TextResult::default();
        self.simple(sql, Rows::Text(&mut out), None)?;
        Ok(out)
    }

    /// Runs SQL text; appends every value of every row to `out` (integers
    /// as such, everything else as text).
    pub(crate) fn query_values(
        &mut self,
        sql: &str,
        out: &mut Vec<Option<Value>>,
    ) -> Result<u64, Error> {
        match self.simple(sql, Rows::Values(out, None), None)? {
            Outcome::Rows(n) => Ok(n),
            Outcome::Affected(_) => Ok(0),
        }
    }

    /// Runs a COPY ... FROM STDIN statement, sending what `source`
    /// produces; returns the rows the server copied.
    pub(crate) fn copy_in(&mut self, sql: &str, source: CopySource<'_>) -> Result<u64, Error> {
        match self.simple(sql, Rows::Count, Some(source))? {
            Outcome::Affected(n) | Outcome::Rows(n) => Ok(n),
        }
    }

    fn simple(
        &mut self,
        sql: &str,
        rows: Rows<'_>,
        copy: Option<CopySource<'_>>,
    ) -> Result<Outcome, Error> {
        no_nul(sql)?;
        m::query(&mut self.io.out, sql);
        self.send()?;
        let mut types = std::mem::take(&mut self.types);
        types.clear();
        let r = self.simple_results(rows, copy, &mut types);
        self.types = types;
        self.check(r)
    }

    /// Reads the results of a simple query; `types` is room for the
    /// column types of its rows.
    fn simple_results(
        &mut self,
        mut rows: Rows<'_>,
        mut copy: Option<CopySource<'_>>,
        types: &mut Vec<u32>,
    ) -> Result<Outcome, Error> {
        let mut n = 0u64;
        let mut described = false;
        let mut affected = 0u64;
        let mut error = None;
        // Text results: the current result's columns and rows so far.
        let mut set: (Option<Vec<String>>, usize) = (None, 0);
        loop {
            let (tag, body) = self.io.read()?;
            match tag {
                m::DATA_ROW => {
                    n += 1;
                    set.1 += 1;
                    match &mut rows {
                        Rows::Count => {}
                        Rows::Text(t) => {
                            let mut row = Vec::with_capacity(t.columns.len());
                            m::data_row(body, |_, v| {
                                row.push(v.map(crate::types::text_of));
                                Ok(())
                            })?;
                            t.rows.push(row);
                        }
                        Rows::Values(out, _) => m::data_row(body, |i, v| {
                            let oid = types.get(i).copied().unwrap_or(0);
                            out.push(v.map(|raw| values::text_value(oid, raw)));
                            Ok(())
                        })?,
                    }
                }
                m::ROW_DESCRIPTION => {
                    match &mut rows {
                        Rows::Text(t) => {
                            let names: Vec<String> = m::row_description(body)?
                                .into_iter()
                                .map(|c| c.name)
                                .collect();
                            if !described {
                                t.columns = names.clone();
                            }
                            set.0 = Some(names);
                        }
                        Rows::Values(..) => m::row_types(body, types)?,
                        _ => {}
                    }
                    described = true;
                }
                m::COMMAND_COMPLETE | m::EMPTY_QUERY_RESPONSE => {
                    if tag == m::COMMAND_COMPLETE {
                        affected = m::command_rows(body);
                    }
                    if let Rows::Text(t) = &mut rows {
                        t.sets.push((set.0.take().unwrap_or_default(), set.1));
                    }
                    set.1 = 0;
                }
                m::ERROR_RESPONSE => {
                    let e = m::error_fields(body);
                    if e.is_fatal() {
                        return Err(Error::Server(Box::new(e)));
                    }
                    error.get_or_insert(e);
                }
                m::READY_FOR_QUERY => {
                    self.io.shrink();
                    if let Some(e) = error {
                        return Err(Error::Server(Box::new(e)));
                    }
                    return Ok(if described || n > 0 {
                        Outcome::Rows(n)
                    } else {
                        Outcome::Affected(affected)
                    });
                }
                m::COPY_IN_RESPONSE => match copy.take() {
                    Some(source) => self.send_copy(source)?,
                    None => {
                        m::copy_fail(&mut self.io.out, "dbmeter has no data for COPY FROM STDIN");
                        self.send()?;
                    }
                },
                // COPY TO STDOUT: the data is dropped.
                m::COPY_OUT_RESPONSE | m::COPY_DATA | m::COPY_DONE => {}
                m::COPY_BOTH_RESPONSE => {
                    return Err(Error::Usage(
                        "replication commands are not supported".into(),
                    ));
                }
                m::NOTICE_RESPONSE => keep_notice(&mut self.notices, body),
                t if is_async(t) => {}
                t => return Err(unexpected(t, "a query")),
            }
        }
    }

    /// Sends COPY data in messages of what `source` adds per call, each
    /// written as it is made; then CopyDone.
    fn send_copy(&mut self, source: CopySource<'_>) -> Result<(), Error> {
        loop {
            let at = m::begin(&mut self.io.out, m::COPY_DATA);
            let more = source(&mut self.io.out);
            if self.io.out.len() == at + 4 {
                // Nothing this time: no empty message.
                self.io.out.truncate(at - 1);
            } else {
                m::end(&mut self.io.out, at);
            }
            if !more {
                m::copy_done(&mut self.io.out);
                return self.send();
            }
            self.send()?;
            // The server refused the data already (a bad row, say): stop
            // sending; the error is read with the results.
            if self.io.poll_read() {
                m::copy_fail(&mut self.io.out, "the server reported an error");
                return self.send();
            }
        }
    }

    /// Prepares `sql` (with `$n` placeholders) as a named statement and
    /// learns its parameter and column types.
    pub(crate) fn prepare(&mut self, sql: &str) -> Result<Statement, Error> {
        no_nul(sql)?;
        self.prepared += 1;
        let name = format!("s{}", self.prepared);
        m::parse(&mut self.io.out, &name, sql);
        m::describe(&mut self.io.out, b'S', &name);
        m::sync(&mut self.io.out);
        self.send()?;
        let r = self.prepare_results(name);
        self.check(r)
    }

    fn prepare_results(&mut self, name: String) -> Result<Statement, Error> {
        let mut st = Statement {
            name,
            params: Vec::new(),
            columns: Vec::new(),
            returns_rows: false,
            result_formats: Vec::new(),
        };
        loop {
            let (tag, body) = self.io.read()?;
            match tag {
                m::PARSE_COMPLETE | m::NO_DATA => {}
                m::PARAMETER_DESCRIPTION => st.params = m::parameter_description(body)?,
                m::ROW_DESCRIPTION => {
                    st.columns = m::row_description(body)?
                        .into_iter()
                        .map(|c: Column| c.type_oid)
                        .collect();
                    st.returns_rows = true;
                }
                m::ERROR_RESPONSE => {
                    let e = m::error_fields(body);
                    return self.fail(e);
                }
                m::READY_FOR_QUERY => {
                    st.result_formats = result_formats(&st.columns);
                    return Ok(st);
                }
                m::NOTICE_RESPONSE => keep_notice(&mut self.notices, body),
                t if is_async(t) => {}
                t => return Err(unexpected(t, "prepare")),
            }
        }
    }

    /// Runs a prepared statement; rows are counted.
    #[inline]
    pub(crate) fn execute(
        &mut self,
        st: &Statement,
        params: &[Param<'_>],
    ) -> Result<Outcome, Error> {
        self.run(st, params, Rows::Count)
    }

    /// Runs a prepared statement; appends every value of every row to
    /// `out`. Returns the number of rows.
    /// The number of columns of the last simple query's rows (read with
    /// [`PgWire::query_values`]).
    pub(crate) fn simple_columns(&self) -> usize {
        self.types.len()
    }

    pub(crate) fn execute_values(
        &mut self,
        st: &Statement,
        params: &[Param<'_>],
        out: &mut Vec<Option<Value>>,
    ) -> Result<u64, Error> {
        match self.run(st, params, Rows::Values(out, Some(&st.columns)))? {
            Outcome::Rows(n) => Ok(n),
            Outcome::Affected(_) => Ok(0),
        }
    }

    fn run(
        &mut self,
        st: &Statement,
        params: &[Param<'_>],
        rows: Rows<'_>,
    ) -> Result<Outcome, Error> {
        if params.len() != st.params.len() {
            return Err(wrong_params(st.params.len(), params.len()));
        }
        let start = self.io.out.len();
        let values = matches!(rows, Rows::Values(..));
        if let Err(e) = self.bind(st, params, values) {
            // Nothing of the refused statement is sent.
            self.io.out.truncate(start);
            return Err(e);
        }
        m::execute(&mut self.io.out);
        m::sync(&mut self.io.out);
        self.send()?;
        let r = self.extended_results(rows, st.returns_rows);
        self.check(r)
    }

    /// Bind of the unnamed portal to `st`: integers in binary where the
    /// parameter is an integer, bytes in binary where it is a bytea, NULL
    /// as such, the rest as text. Results in the statement's formats when
    /// their `values` are read; else (rows only counted) all in binary,
    /// the least work for the server.
    fn bind(&mut self, st: &Statement, params: &[Param<'_>], values: bool) -> Result<(), Error> {
        let out = &mut self.io.out;
        let at = m::begin(out, b'B');
        out.push(0); // the unnamed portal
        m::put_cstr(out, st.name.as_bytes());
        m::put_i16(out, params.len() as i16);
        for (p, ty) in params.iter().zip(&st.params) {
            let binary = match p {
                Param::Int(_) => matches!(*ty, INT2 | INT4 | INT8),
                Param::Bytes(_) => *ty == BYTEA,
                Param::Null | Param::Text(_) => false,
            };
            m::put_i16(out, binary as i16);
        }
        m::put_i16(out, params.len() as i16);
        for (i, (p, ty)) in params.iter().zip(&st.params).enumerate() {
            match *p {
                Param::Null => m::put_i32(out, -1),
                Param::Int(v) => match *ty {
                    INT4 => {
                        let v = i32::try_from(v).map_err(|_| out_of_range(i, v, "integer"))?;
                        m::put_i32(out, 4);
                        m::put_i32(out, v);
                    }
                    INT8 => {
                        m::put_i32(out, 8);
                        out.extend_from_slice(&v.to_be_bytes());
                    }
                    INT2 => {
                        let v = i16::try_from(v).map_err(|_| out_of_range(i, v, "smallint"))?;
                        m::put_i32(out, 2);
                        m::put_i16(out, v);
                    }
                    _ => {
                        let len_at = out.len();
                        m::put_i32(out, 0);
                        let _ = write!(out, "{v}");
                        let len = (out.len() - len_at - 4) as i32;
                        out[len_at..len_at + 4].copy_from_slice(&len.to_be_bytes());
                    }
                },
                Param::Text(s) => put_bytes(out, i, s.as_bytes())?,
                // Raw bytes: binary for a bytea, else text the server
                // checks against the parameter's type.
                Param::Bytes(b) => put_bytes(out, i, b)?,
            }
        }
        if values {
            out.extend_from_slice(&st.result_formats);
        } else if st.returns_rows {
            m::put_i16(out, 1);
            m::put_i16(out, 1);
        } else {
            m::put_i16(out, 0);
        }
        m::end(out, at);
        Ok(())
    }

    fn extended_results(
        &mut self,
        mut rows: Rows<'_>,
        returns_rows: bool,
    ) -> Result<Outcome, Error> {
        let mut n = 0u64;
        let mut affected = 0u64;
        loop {
            let (tag, body) = self.io.read()?;
            match tag {
                m::DATA_ROW => {
                    n += 1;
                    if let Rows::Values(..) = rows {
                        row_values(&mut rows, body)?;
                    }
                }
                m::BIND_COMPLETE | m::PARSE_COMPLETE | m::EMPTY_QUERY_RESPONSE => {}
                m::COMMAND_COMPLETE | m::PORTAL_SUSPENDED => affected = m::command_rows(body),
                m::ERROR_RESPONSE => {
                    let e = m::error_fields(body);
                    return self.fail(e);
                }
                m::READY_FOR_QUERY => {
                    self.io.shrink();
                    return Ok(if returns_rows {
                        Outcome::Rows(n)
                    } else {
                        Outcome::Affected(affected)
                    });
                }
                m::NOTICE_RESPONSE => keep_notice(&mut self.notices, body),
                t if is_async(t) => {}
                t => return Err(unexpected(t, "a statement")),
            }
        }
    }

    /// Pipeline mode: queues `sql` (with `$n` placeholders) as the
    /// unnamed statement with its arguments as text (Parse, Bind,
    /// Execute), without a Sync; nothing is sent before
    /// [`PgWire::pipeline_sync`]. The commands up to the Sync run as one
    /// implicit transaction (unless they hold BEGIN/COMMIT themselves).
    pub(crate) fn pipeline_queue(&mut self, sql: &str, args: &[Option<&str>]) -> Result<(), Error> {
        no_nul(sql)?;
        // The whole pipeline is written before its results are read: a
        // bound keeps it well inside what the socket buffers hold.
        if self.pipelined >= MAX_PIPELINE {
            return Err(Error::Usage(format!(
                "more than {MAX_PIPELINE} commands in one pipeline"
            )));
        }
        let start = self.io.out.len();
        let out = &mut self.io.out;
        m::parse(out, "", sql);
        let at = m::begin(out, b'B');
        out.push(0);
        out.push(0);
        m::put_i16(out, 0); // every parameter in text
        m::put_i16(out, args.len() as i16);
        for (i, a) in args.iter().enumerate() {
            match a {
                None => m::put_i32(out, -1),
                Some(t) => {
                    if let Err(e) = put_bytes(out, i, t.as_bytes()) {
                        self.io.out.truncate(start);
                        return Err(e);
                    }
                }
            }
        }
        m::put_i16(out, 1); // rows in binary: they are only counted
        m::put_i16(out, 1);
        m::end(out, at);
        m::execute(out);
        self.pipelined += 1;
        Ok(())
    }

    /// Ends a pipeline: sends the queued commands with one Sync and reads
    /// every result; returns the first error (the server skips the
    /// commands after it, up to the Sync).
    pub(crate) fn pipeline_sync(&mut self) -> Result<(), Error> {
        self.pipelined = 0;
        m::sync(&mut self.io.out);
        self.send()?;
        let r = self.pipeline_results();
        self.check(r)
    }

    fn pipeline_results(&mut self) -> Result<(), Error> {
        loop {
            let (tag, body) = self.io.read()?;
            match tag {
                m::PARSE_COMPLETE
                | m::BIND_COMPLETE
                | m::DATA_ROW
                | m::NO_DATA
                | m::COMMAND_COMPLETE
                | m::EMPTY_QUERY_RESPONSE => {}
                m::ERROR_RESPONSE => {
                    let e = m::error_fields(body);
                    return self.fail(e);
                }
                m::READY_FOR_QUERY => {
                    self.io.shrink();
                    return Ok(());
                }
                m::NOTICE_RESPONSE => keep_notice(&mut self.notices, body),
                t if is_async(t) => {}
                t => return Err(unexpected(t, "a pipeline")),
            }
        }
    }

    /// Runs `sql` (with `$n` placeholders) as the unnamed statement, the
    /// arguments as text for the server to convert, and returns its rows
    /// (text format, typed by their columns' types) and the rows it
    /// changed. One round trip; for tools around the benchmark.
    pub(crate) fn query_args(
        &mut self,
        sql: &str,
        args: &[Arg<'_>],
    ) -> Result<(Vec<Vec<Cell>>, u64), Error> {
        no_nul(sql)?;
        let out = &mut self.io.out;
        m::parse(out, "", sql);
        let at = m::begin(out, b'B');
        out.push(0);
        out.push(0);
        m::put_i16(out, 0); // every parameter in text
        m::put_i16(out, args.len() as i16);
        for a in args {
            let len_at = out.len();
            m::put_i32(out, 0);
            match *a {
                Arg::Null => {
                    out[len_at..len_at + 4].copy_from_slice(&(-1i32).to_be_bytes());
                    continue;
                }
                Arg::Int(v) => {
                    let _ = write!(out, "{v}");
                }
                Arg::Real(v) => {
                    let _ = write!(out, "{v:?}");
                }
                Arg::Text(s) => out.extend_from_slice(s.as_bytes()),
                Arg::Bytes(b) => values::bytea_hex(b, out),
            }
            let len = (out.len() - len_at - 4) as i32;
            out[len_at..len_at + 4].copy_from_slice(&len.to_be_bytes());
        }
        m::put_i16(out, 0); // results in text
        m::end(out, at);
        m::describe(out, b'P', "");
        m::execute(out);
        m::sync(out);
        self.send()?;
        let r = self.cell_results();
        self.check(r)
    }

    fn cell_results(&mut self) -> Result<(Vec<Vec<Cell>>, u64), Error> {
        let mut types: Vec<u32> = Vec::new();
        let mut rows = Vec::new();
        let mut affected = 0;
        loop {
            let (tag, body) = self.io.read()?;
            match tag {
                m::ROW_DESCRIPTION => {
                    types = m::row_description(body)?
                        .into_iter()
                        .map(|c| c.type_oid)
                        .collect();
                }
                m::DATA_ROW => {
                    let mut row = Vec::with_capacity(types.len());
                    m::data_row(body, |i, v| {
                        row.push(match v {
                            None => Cell::Null,
                            Some(raw) => {
                                values::text_cell(types.get(i).copied().unwrap_or(0), raw)?
                            }
                        });
                        Ok(())
                    })?;
                    rows.push(row);
                }
                m::PARSE_COMPLETE | m::BIND_COMPLETE | m::NO_DATA | m::EMPTY_QUERY_RESPONSE => {}
                m::COMMAND_COMPLETE => affected = m::command_rows(body),
                m::ERROR_RESPONSE => {
                    let e = m::error_fields(body);
                    return self.fail(e);
                }
                m::READY_FOR_QUERY => {
                    self.io.shrink();
                    return Ok((rows, affected));
                }
                m::NOTICE_RESPONSE => keep_notice(&mut self.notices, body),
                t if is_async(t) => {}
                t => return Err(unexpected(t, "a statement")),
            }
        }
    }
}

impl Drop for PgWire {
    /// Says goodbye (the server then logs no "unexpected EOF"), without
    /// waiting for a server that does not read.
    fn drop(&mut self) {
        if !self.broken && self.io.stream.set_nonblocking(true).is_ok() {
            self.io.out.clear();
            m::terminate(&mut self.io.out);
            let _ = self.io.send();
        }
    }
}

/// Most commands one pipeline holds ([`PgWire::pipeline_queue`]).
const MAX_PIPELINE: usize = 1000;

/// SQL text is sent NUL-terminated: a NUL inside would cut it short.
fn no_nul(sql: &str) -> Result<(), Error> {
    if sql.as_bytes().contains(&0) {
        return Err(Error::Usage(
            "SQL text cannot contain a NUL character".into(),
        ));
    }
    Ok(())
}

/// Bind's result format codes for columns of these types: none (all
/// text) when no column is read in binary, one (binary for all) when
/// every column is, else one per column.
fn result_formats(columns: &[u32]) -> Vec<u8> {
    let binary = columns
        .iter()
        .filter(|&&t| values::binary_result(t))
        .count();
    let mut out = Vec::with_capacity(2 + 2 * columns.len());
    if binary == 0 {
        m::put_i16(&mut out, 0);
    } else if binary == columns.len() {
        m::put_i16(&mut out, 1);
        m::put_i16(&mut out, 1);
    } else {
        m::put_i16(&mut out, columns.len() as i16);
        for &t in columns {
            m::put_i16(&mut out, values::binary_result(t) as i16);
        }
    }
    out
}

/// Appends a parameter value of these bytes, length first.
fn put_bytes(out: &mut Vec<u8>, i: usize, b: &[u8]) -> Result<(), Error> {
    let len = i32::try_from(b.len()).map_err(|_| {
        Error::Usage(format!(
            "parameter ${}: {} bytes is more than a value can hold (1 GB)",
            i + 1,
            b.len()
        ))
    })?;
    m::put_i32(out, len);
    out.extend_from_slice(b);
    Ok(())
}

#[cold]
#[inline(never)]
fn wrong_params(wanted: usize, given: usize) -> Error {
    Error::Usage(format!(
        "the statement has {wanted} parameters, {given} given"
    ))
}

#[cold]
#[inline(never)]
fn out_of_range(i: usize, v: i64, ty: &str) -> Error {
    Error::Usage(format!(
        "parameter ${}: {v} is out of range for type {ty}",
        i + 1
    ))
}
