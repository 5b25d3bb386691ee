//! Commands on an open connection: COM_QUERY (text protocol),
//! COM_STMT_PREPARE / EXECUTE / CLOSE (binary protocol), MariaDB's
//! COM_STMT_BULK_EXECUTE, LOAD DATA LOCAL INFILE answered from memory,
//! COM_QUIT.

use super::handshake::{
    self, CLIENT_DEPRECATE_EOF, MARIADB_CLIENT_CACHE_METADATA, MARIADB_CLIENT_STMT_BULK_OPERATIONS,
};
use super::packet::{Cursor, MAX_PAYLOAD, Packets, put_lenenc_bytes};
use super::values::{ColumnType, RawRows, binary_row, column_type, text_row};
use super::{Error, Params, parse_err};
use crate::types::TextResult;
use crate::types::{Outcome, Param, Value};

const COM_QUIT: u8 = 0x01;
const COM_QUERY: u8 = 0x03;
const COM_STMT_PREPARE: u8 = 0x16;
const COM_STMT_EXECUTE: u8 = 0x17;
const COM_STMT_CLOSE: u8 = 0x19;
const COM_STMT_BULK_EXECUTE: u8 = 0xFA;
/// Bulk flag: the parameter types come with the command.
const BULK_SEND_TYPES_TO_SERVER: u16 = 128;

const SERVER_MORE_RESULTS_EXISTS: u16 = 0x0008;

/// Parameter types of the binary protocol.
const TYPE_NULL: u8 = 0x06;
const TYPE_LONGLONG: u8 = 0x08;
const TYPE_BLOB: u8 = 0xFC;
const TYPE_STRING: u8 = 0xFE;

pub(crate) struct WireConn {
    io: Packets,
    caps: u64,
    id: u32,
    version: String,
    /// The column types of the result being read (kept to reuse its room).
    types: Vec<ColumnType>,
}

/// A statement prepared on the server.
#[derive(Clone, Debug)]
pub(crate) struct Prepared {
    id: u32,
    params: usize,
    /// The parameter types last sent; sent again only when they change.
    types: Vec<u8>,
    /// The result's column types (for reading values of binary rows when
    /// the server leaves the column definitions out).
    columns: Vec<ColumnType>,
}

/// Rows of parameter values for [`WireConn::bulk_execute`], encoded in
/// the binary protocol as they are added. The parameter types are those of
/// the first row; a row of other types goes into the next batch.
///
/// Text that is all ASCII is sent as binary strings (BLOB): the server
/// stores their bytes as they are, while a string in the connection's
/// character set (utf8mb4) is converted to the column's, which costs the
/// server as much again as the rest of the insert when the column is
/// latin1. ASCII is the same in both; other text is sent as text.
#[derive(Debug, Default)]
pub(crate) struct BulkRows {
    /// Type and flag byte of each parameter, from the first row.
    types: Vec<u8>,
    /// Per row and parameter: an indicator byte (0: a value follows) and the value.
    data: Vec<u8>,
    rows: usize,
}

impl BulkRows {
    /// Adds a row; false (and nothing added) when its types differ from
    /// the batch's: send the batch, clear it, and push the row again.
    pub(crate) fn push(&mut self, row: &[Value]) -> Result<bool, Error> {
        if self.rows == 0 {
            self.types.clear();
            for v in row {
                self.types.extend_from_slice(&[bulk_type(v), 0]);
            }
        } else if self.types.len() != 2 * row.len() {
            return Err(Error::Usage(
                "bulk rows differ in their number of values".into(),
            ));
        } else if row
            .iter()
            .zip(self.types.chunks_exact(2))
            .any(|(v, t)| t[0] != bulk_type(v))
        {
            return Ok(false);
        }
        for v in row {
            self.data.push(0);
            match v {
                Value::Int(i) => self.data.extend_from_slice(&i.to_le_bytes()),
                Value::Text(s) => put_lenenc_bytes(&mut self.data, s.as_bytes()),
                Value::Bytes(b) => put_lenenc_bytes(&mut self.data, b),
            }
        }
        self.rows += 1;
        Ok(true)
    }

    /// Bytes encoded so far.
    pub(crate) fn len(&self) -> usize {
        self.data.len()
    }

    pub(crate) fn rows(&self) -> usize {
        self.rows
    }

    pub(crate) fn clear(&mut self) {
        self.data.clear();
        self.rows = 0;
    }
}

/// The binary protocol's type of a parameter: bytes are a BLOB, which
/// the server takes as a binary string (no character set conversion).
fn type_of(p: &Param<'_>) -> u8 {
    match p {
        Param::Null => TYPE_NULL,
        Param::Int(_) => TYPE_LONGLONG,
        Param::Text(_) => TYPE_STRING,
        Param::Bytes(_) => TYPE_BLOB,
    }
}

fn bulk_type(v: &Value) -> u8 {
    match v {
        Value::Int(_) => TYPE_LONGLONG,
        Value::Text(s) if s.is_ascii() => TYPE_BLOB,
        Value::Text(_) => TYPE_STRING,
        Value::Bytes(_) => TYPE_BLOB,
    }
}

/// What to do with the rows of a result set.
enum Rows<'a> {
    Count,
    Text(&'a mut TextResult),
    /// Values appended row after row: binary rows of a statement with
    /// these column types (used when the server leaves the column
    /// definitions out), or text rows (None).
    Values(&'a mut Vec<Option<Value>>, Option<&'a [ColumnType]>),
    /// Rows kept as they came, for decoding later; the column types as
    /// for `Values`.
    Raw(&'a mut RawRows, Option<&'a [ColumnType]>),
}

/// Produces LOAD DATA LOCAL INFILE contents: appends some bytes to the
/// buffer, returns false when there is nothing more.
pub(crate) type Infile<'a> = &'a mut dyn FnMut(&mut Vec<u8>) -> bool;

impl WireConn {
    /// Connects and authenticates.
    pub(crate) fn connect(p: &Params) -> Result<WireConn, Error> {
        // A connect blocks its thread, timeouts and all, even for a client
        // that runs as a task of a thread's loop.
        dbmeter_coop::blocking(|| Self::open(p))
    }

    fn open(p: &Params) -> Result<WireConn, Error> {
        let stream = crate::wire_stream::connect(&p.addr, &p.net)?;
        let mut io = Packets::new(stream);
        let (greeting, caps) = handshake::connect(&mut io, p).map_err(|e| match e {
            Error::Io(err) => Error::Io(crate::wire_stream::no_answer(err, &p.net)),
            e => e,
        })?;
        io.stream.clear_timeout()?;
        // MariaDB announces itself as 5.5.5-VERSION to old clients.
        let version = greeting
            .version
            .strip_prefix("5.5.5-")
            .unwrap_or(&greeting.version)
            .to_string();
        Ok(WireConn {
            io,
            caps,
            id: greeting.connection_id,
            version,
            types: Vec::new(),
        })
    }

    /// The server's id for this connection (for KILL QUERY).
    pub(crate) fn connection_id(&self) -> u32 {
        self.id
    }

    /// The server's version, as `SELECT VERSION()` gives it.
    pub(crate) fn server_version(&self) -> &str {
        &self.version
    }

    /// Runs SQL text; rows are counted, not kept.
    pub(crate) fn query(&mut self, sql: &str) -> Result<Outcome, Error> {
        self.send_query(sql)?;
        self.results(Rows::Count, None)
    }

    /// Runs SQL text and returns the first result's columns and rows.
    pub(crate) fn query_text(&mut self, sql: &str) -> Result<TextResult, Error> {
        self.send_query(sql)?;
        let mut out = TextResult::default();
        self.results(Rows::Text(&mut out), None)?;
        Ok(out)
    }

    /// Runs a LOAD DATA LOCAL INFILE statement, answering the server's
    /// request for the file with what `infile` produces.
    pub(crate) fn load_local(&mut self, sql: &str, infile: Infile<'_>) -> Result<Outcome, Error> {
        self.send_query(sql)?;
        self.results(Rows::Count, Some(infile))
    }

    fn send_query(&mut self, sql: &str) -> Result<(), Error> {
        let out = self.io.command();
        out.push(COM_QUERY);
        out.extend_from_slice(sql.as_bytes());
        self.io.send()
    }

    pub(crate) fn prepare(&mut self, sql: &str) -> Result<Prepared, Error> {
        let out = self.io.command();
        out.push(COM_STMT_PREPARE);
        out.extend_from_slice(sql.as_bytes());
        self.io.send()?;
        let p = self.io.read()?;
        if p.first() == Some(&0xFF) {
            return Err(parse_err(p));
        }
        let mut c = Cursor::new(p);
        if c.u8()? != 0 {
            return Err(Error::Protocol("unexpected answer to a prepare".into()));
        }
        let id = c.u32()?;
        let columns = c.u16()? as usize;
        let params = c.u16()? as usize;
        // Parameter and column definitions, each list ended by an EOF
        // unless the server dropped those.
        let mut types = Vec::with_capacity(columns);
        for (n, keep) in [(params, false), (columns, true)] {
            if n > 0 {
                for _ in 0..n {
                    let def = self.io.read()?;
                    if keep {
                        types.push(column_type(def)?);
                    }
                }
                if self.caps & CLIENT_DEPRECATE_EOF == 0 {
                    self.io.read()?;
                }
            }
        }
        Ok(Prepared {
            id,
            params,
            types: Vec::new(),
            columns: types,
        })
    }

    /// Executes a prepared statement; rows are counted, not kept.
    pub(crate) fn execute(
        &mut self,
        st: &mut Prepared,
        params: &[Param<'_>],
    ) -> Result<Outcome, Error> {
        self.execute_into(st, params, Rows::Count)
    }

    /// Executes a prepared statement and appends the values of its rows
    /// to `out`; returns the number of rows.
    pub(crate) fn execute_values(
        &mut self,
        st: &mut Prepared,
        params: &[Param<'_>],
        out: &mut Vec<Option<Value>>,
    ) -> Result<u64, Error> {
        // Lent to the row decoder for the call (execute_into never reads
        // them from `st`), rather than cloned on every execution.
        let columns = std::mem::take(&mut st.columns);
        let r = self.execute_into(st, params, Rows::Values(out, Some(&columns)));
        st.columns = columns;
        Ok(rows_of(r?))
    }

    /// Executes a prepared statement and keeps its rows, undecoded, in
    /// `raw` (cleared first); returns the number of rows.
    pub(crate) fn execute_raw(
        &mut self,
        st: &mut Prepared,
        params: &[Param<'_>],
        raw: &mut RawRows,
    ) -> Result<u64, Error> {
        raw.clear();
        let columns = std::mem::take(&mut st.columns);
        let r = self.execute_into(st, params, Rows::Raw(raw, Some(&columns)));
        st.columns = columns;
        Ok(rows_of(r?))
    }

    /// Runs SQL text and keeps its first result's rows, undecoded, in `raw`
    /// (cleared first); returns the number of rows.
    pub(crate) fn query_raw(&mut self, sql: &str, raw: &mut RawRows) -> Result<u64, Error> {
        raw.clear();
        self.send_query(sql)?;
        let r = self.results(Rows::Raw(raw, None), None)?;
        Ok(rows_of(r))
    }

    /// Runs SQL text and appends the values of its first result's rows
    /// (as text) to `out`; returns the number of rows.
    pub(crate) fn query_values(
        &mut self,
        sql: &str,
        out: &mut Vec<Option<Value>>,
    ) -> Result<u64, Error> {
        self.send_query(sql)?;
        let r = self.results(Rows::Values(out, None), None)?;
        Ok(rows_of(r))
    }

    fn execute_into(
        &mut self,
        st: &mut Prepared,
        params: &[Param<'_>],
        rows: Rows<'_>,
    ) -> Result<Outcome, Error> {
        if params.len() != st.params {
            return Err(Error::Usage(format!(
                "the statement has {} parameters, {} given",
                st.params,
                params.len()
            )));
        }
        let out = self.io.command();
        out.push(COM_STMT_EXECUTE);
        out.extend_from_slice(&st.id.to_le_bytes());
        out.push(0); // no cursor
        out.extend_from_slice(&1u32.to_le_bytes());
        if !params.is_empty() {
            // The NULL bitmap (bit i set when parameter i is NULL), filled
            // in with the values.
            let nulls = out.len();
            out.resize(nulls + params.len().div_ceil(8), 0);
            let same = st.types.len() == 2 * params.len()
                && params
                    .iter()
                    .zip(st.types.chunks_exact(2))
                    .all(|(p, t)| t[0] == type_of(p));
            if same {
                out.push(0);
            } else {
                out.push(1);
                st.types.clear();
                for p in params {
                    st.types.extend_from_slice(&[type_of(p), 0]);
                }
                out.extend_from_slice(&st.types);
            }
            for (i, p) in params.iter().enumerate() {
                match p {
                    Param::Null => out[nulls + i / 8] |= 1 << (i % 8),
                    Param::Int(v) => out.extend_from_slice(&v.to_le_bytes()),
                    Param::Text(s) => put_lenenc_bytes(out, s.as_bytes()),
                    Param::Bytes(b) => put_lenenc_bytes(out, b),
                }
            }
        }
        let r = self.io.send().and_then(|()| self.results(rows, None));
        if r.is_err() {
            // Send the types again next time, whatever the server kept.
            st.types.clear();
        }
        r
    }

    /// True when the server runs [`WireConn::bulk_execute`] (MariaDB 10.2 and later).
    pub(crate) fn can_bulk(&self) -> bool {
        self.caps & MARIADB_CLIENT_STMT_BULK_OPERATIONS != 0
    }

    /// Runs a prepared statement (an INSERT) once for each row of `rows`,
    /// in one command: COM_STMT_BULK_EXECUTE. Returns the rows affected in
    /// total. The whole command must fit the server's max_allowed_packet.
    pub(crate) fn bulk_execute(
        &mut self,
        st: &Prepared,
        rows: &BulkRows,
    ) -> Result<Outcome, Error> {
        if rows.rows == 0 {
            return Ok(Outcome::Affected(0));
        }
        if rows.types.len() != 2 * st.params {
            return Err(Error::Usage(format!(
                "the statement has {} parameters, {} given",
                st.params,
                rows.types.len() / 2
            )));
        }
        let out = self.io.command();
        out.push(COM_STMT_BULK_EXECUTE);
        out.extend_from_slice(&st.id.to_le_bytes());
        out.extend_from_slice(&BULK_SEND_TYPES_TO_SERVER.to_le_bytes());
        out.extend_from_slice(&rows.types);
        out.extend_from_slice(&rows.data);
        self.io.send()?;
        self.results(Rows::Count, None)
    }

    /// Frees a prepared statement on the server (no answer comes back).
    pub(crate) fn close_statement(&mut self, st: &Prepared) -> Result<(), Error> {
        let out = self.io.command();
        out.push(COM_STMT_CLOSE);
        out.extend_from_slice(&st.id.to_le_bytes());
        self.io.send()
    }

    /// Reads every result of a command; returns what the first one did.
    fn results(
        &mut self,
        mut rows: Rows<'_>,
        mut infile: Option<Infile<'_>>,
    ) -> Result<Outcome, Error> {
        let (first, mut more) = self.result(&mut rows, infile.take())?;
        while more {
            more = self.result(&mut Rows::Count, None)?.1;
        }
        Ok(first)
    }

    /// Reads one result: an OK, an ERR, a request for a local file, or a
    /// result set. Returns it and whether more results follow.
    fn result(
        &mut self,
        rows: &mut Rows<'_>,
        infile: Option<Infile<'_>>,
    ) -> Result<(Outcome, bool), Error> {
        let caps = self.caps;
        let p = self.io.read()?;
        let count = match p.first().copied() {
            Some(0x00) => {
                let (affected, status) = ok_packet(p)?;
                return Ok((
                    Outcome::Affected(affected),
                    status & SERVER_MORE_RESULTS_EXISTS != 0,
                ));
            }
            Some(0xFF) => return Err(parse_err(p)),
            Some(0xFB) => {
                // The server asks for a local file: only a LOAD DATA we
                // sent gets data, anything else an empty file.
                if let Some(fill) = infile {
                    loop {
                        let buf = self.io.packet();
                        let more = fill(buf);
                        if buf.len() > 4 {
                            self.io.send()?;
                        }
                        if !more {
                            break;
                        }
                    }
                }
                self.io.packet();
                self.io.send()?;
                return self.result(rows, None);
            }
            _ => {
                let mut c = Cursor::new(p);
                let n = c.lenenc_int()? as usize;
                let metadata = caps & MARIADB_CLIENT_CACHE_METADATA == 0 || c.u8()? != 0;
                (n, metadata)
            }
        };
        let (n, metadata) = count;
        // The column types sent with this result (when left out, a
        // prepared statement's own are used).
        self.types.clear();
        if metadata {
            for _ in 0..n {
                let def = self.io.read()?;
                match rows {
                    Rows::Text(t) => t.columns.push(column_name(def)?),
                    Rows::Values(..) | Rows::Raw(..) => self.types.push(column_type(def)?),
                    Rows::Count => {}
                }
            }
        }
        if let Rows::Raw(raw, binary) = rows {
            let types = match binary {
                Some(known) if !metadata => known,
                _ => &self.types[..],
            };
            if types.len() != n {
                return Err(Error::Protocol(format!(
                    "a result of {n} columns for a statement of {}",
                    types.len()
                )));
            }
            raw.set_columns(types, binary.is_some());
        }
        let deprecate_eof = caps & CLIENT_DEPRECATE_EOF != 0;
        if !deprecate_eof {
            self.io.read()?;
        }
        let mut counted = 0u64;
        if let Rows::Count = rows {
            counted = self.io.skip_rows()?;
        }
        loop {
            let p = self.io.read()?;
            match p.first().copied() {
                Some(0xFE) if p.len() < MAX_PAYLOAD => {
                    let status = if deprecate_eof {
                        ok_packet(p)?.1
                    } else {
                        let mut c = Cursor::new(p);
                        c.skip(3)?;
                        c.u16()?
                    };
                    return Ok((
                        Outcome::Rows(counted),
                        status & SERVER_MORE_RESULTS_EXISTS != 0,
                    ));
                }
                Some(0xFF) => return Err(parse_err(p)),
                _ => {
                    counted += 1;
                    if let Rows::Values(out, binary) = rows {
                        let types = match binary {
                            Some(known) if !metadata => known,
                            _ => &self.types[..],
                        };
                        if types.len() != n {
                            return Err(Error::Protocol(format!(
                                "a row of {n} columns for a statement of {}",
                                types.len()
                            )));
                        }
                        match binary {
                            Some(_) => binary_row(p, types, out)?,
                            None => text_row(p, types, out)?,
                        }
                    } else if let Rows::Raw(raw, _) = rows {
                        raw.push(p);
                    } else if let Rows::Text(t) = rows {
                        let mut c = Cursor::new(p);
                        let mut row = Vec::with_capacity(n);
                        for _ in 0..n {
                            row.push(c.lenenc_bytes_or_null()?.map(crate::types::text_of));
                        }
                        t.rows.push(row);
                    }
                }
            }
        }
    }
}

fn rows_of(o: Outcome) -> u64 {
    match o {
        Outcome::Rows(n) => n,
        Outcome::Affected(_) => 0,
    }
}

/// Affected rows and status flags of an OK packet (0x00 or 0xFE header).
fn ok_packet(p: &[u8]) -> Result<(u64, u16), Error> {
    let mut c = Cursor::new(p);
    c.skip(1)?;
    let affected = c.lenenc_int()?;
    c.lenenc_int()?; // last insert id
    let status = if c.remaining() >= 2 { c.u16()? } else { 0 };
    Ok((affected, status))
}

/// The name of a column from its definition packet.
fn column_name(def: &[u8]) -> Result<String, Error> {
    let mut c = Cursor::new(def);
    for _ in 0..4 {
        c.lenenc_bytes()?; // catalog, schema, table, original table
    }
    Ok(String::from_utf8_lossy(c.lenenc_bytes()?).into_owned())
}

impl Drop for WireConn {
    /// Says goodbye (COM_QUIT) so that the server does not count an
    /// aborted connection.
    fn drop(&mut self) {
        if self.io.buffered() == 0 {
            self.io.command().push(COM_QUIT);
            let _ = self.io.send();
        }
        self.io.stream.shutdown();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: i64, c: &str) -> Vec<Value> {
        vec![Value::Int(id), Value::Text(c.into())]
    }

    #[test]
    fn bulk_rows_encode_and_split_on_other_types() {
        let mut b = BulkRows::default();
        assert!(b.push(&row(1, "12-34")).unwrap());
        assert!(b.push(&row(2, "56")).unwrap());
        assert_eq!(b.types, [TYPE_LONGLONG, 0, TYPE_BLOB, 0]);
        assert_eq!(b.rows(), 2);
        let mut one = vec![0];
        one.extend_from_slice(&1i64.to_le_bytes());
        one.extend_from_slice(&[0, 5]);
        one.extend_from_slice(b"12-34");
        assert_eq!(&b.data[..one.len()], &one[..]);
        // Text that is not ASCII is sent as text, in a batch of its own.
        assert!(!b.push(&row(3, "é")).unwrap());
        assert_eq!(b.rows(), 2);
        b.clear();
        assert!(b.push(&row(3, "é")).unwrap());
        assert_eq!(b.types, [TYPE_LONGLONG, 0, TYPE_STRING, 0]);
        assert!(b.push(&[Value::Int(4)]).is_err());
    }
}
