//! PostgreSQL protocol 3.0 messages.
//!
//! A message is a type byte, a 4-byte big-endian length (counting itself,
//! not the type byte) and the body; only the client's first messages
//! (startup, SSLRequest, CancelRequest) have no type byte.
//!
//! [`Messages`] reads through its own buffer (one `read` syscall usually
//! brings a whole response) and sends what was written into its write
//! buffer with one `write`.

use super::{Error, ServerError};
use crate::wire_stream::{ReadBuf, Stream};
use std::io::Write;

/// A write buffer grown past this is shrunk back after it is sent.
const KEEP_WBUF: usize = 1024 * 1024;

/// Protocol version 3.0.
pub(crate) const PROTOCOL_3_0: i32 = 196_608;
/// The "version" numbers of SSLRequest and CancelRequest.
pub(crate) const SSL_REQUEST: i32 = 80_877_103;
pub(crate) const CANCEL_REQUEST: i32 = 80_877_102;

// Backend message types.
pub(crate) const AUTHENTICATION: u8 = b'R';
pub(crate) const BACKEND_KEY_DATA: u8 = b'K';
pub(crate) const BIND_COMPLETE: u8 = b'2';
pub(crate) const COMMAND_COMPLETE: u8 = b'C';
pub(crate) const COPY_DATA: u8 = b'd';
pub(crate) const COPY_DONE: u8 = b'c';
pub(crate) const COPY_IN_RESPONSE: u8 = b'G';
pub(crate) const COPY_OUT_RESPONSE: u8 = b'H';
pub(crate) const COPY_BOTH_RESPONSE: u8 = b'W';
pub(crate) const DATA_ROW: u8 = b'D';
pub(crate) const EMPTY_QUERY_RESPONSE: u8 = b'I';
pub(crate) const ERROR_RESPONSE: u8 = b'E';
pub(crate) const NEGOTIATE_PROTOCOL_VERSION: u8 = b'v';
pub(crate) const NO_DATA: u8 = b'n';
pub(crate) const NOTICE_RESPONSE: u8 = b'N';
pub(crate) const NOTIFICATION_RESPONSE: u8 = b'A';
pub(crate) const PARAMETER_DESCRIPTION: u8 = b't';
pub(crate) const PARAMETER_STATUS: u8 = b'S';
pub(crate) const PARSE_COMPLETE: u8 = b'1';
pub(crate) const PORTAL_SUSPENDED: u8 = b's';
pub(crate) const READY_FOR_QUERY: u8 = b'Z';
pub(crate) const ROW_DESCRIPTION: u8 = b'T';

pub(crate) struct Messages {
    pub(crate) stream: Stream,
    rb: ReadBuf,
    /// What the next [`Messages::send`] writes.
    pub(crate) out: Vec<u8>,
    /// The transaction status of the last ReadyForQuery: `I` idle, `T` in
    /// a transaction block, `E` in a failed one.
    pub(crate) tx_status: u8,
}

impl Messages {
    pub(crate) fn new(stream: Stream) -> Self {
        Messages {
            stream,
            rb: ReadBuf::new(),
            out: Vec::with_capacity(256),
            tx_status: b'I',
        }
    }

    /// Bytes received and not read yet.
    pub(crate) fn buffered(&self) -> usize {
        self.rb.buffered()
    }

    /// Makes sure `need` bytes are buffered, reading from the stream.
    #[inline]
    fn fill(&mut self, need: usize) -> Result<(), Error> {
        Ok(self.rb.fill(&mut self.stream, need)?)
    }

    /// Reads the next message: its type and body.
    #[inline]
    pub(crate) fn read(&mut self) -> Result<(u8, &[u8]), Error> {
        self.fill(5)?;
        let h = &self.rb.buf[self.rb.pos..self.rb.pos + 5];
        let tag = h[0];
        let len = u32::from_be_bytes([h[1], h[2], h[3], h[4]]) as usize;
        if len < 4 {
            return Err(Error::Protocol(format!(
                "a message of type '{}' with length {len}",
                tag.escape_ascii()
            )));
        }
        let body = len - 4;
        self.fill(5 + body)?;
        let start = self.rb.pos + 5;
        self.rb.pos = start + body;
        if tag == READY_FOR_QUERY && body == 1 {
            self.tx_status = self.rb.buf[start];
        }
        Ok((tag, &self.rb.buf[start..start + body]))
    }

    /// True when the server has sent something, read without waiting
    /// (over TCP or a Unix socket; with TLS: false).
    pub(crate) fn poll_read(&mut self) -> bool {
        if self.buffered() > 0 {
            return true;
        }
        if self.stream.is_tls() {
            return false;
        }
        if self.rb.buf.len() == self.rb.end {
            self.rb.buf.resize(self.rb.buf.len() * 2, 0);
        }
        if let Ok(n) = self.stream.read_now(&mut self.rb.buf[self.rb.end..]) {
            self.rb.end += n;
        }
        self.buffered() > 0
    }

    /// Gives back memory taken by a large result, once it is all read.
    pub(crate) fn shrink(&mut self) {
        self.rb.shrink_when_idle();
    }

    /// Writes the output buffer (one `write` as a rule) and empties it.
    pub(crate) fn send(&mut self) -> Result<(), Error> {
        let r = self
            .stream
            .write_all(&self.out)
            .and_then(|_| self.stream.flush());
        self.out.clear();
        if self.out.capacity() > KEEP_WBUF {
            self.out = Vec::with_capacity(256);
        }
        r.map_err(Error::Io)
    }
}

// ---- Frontend messages: written into a buffer. ----

/// Starts a message of type `tag`; returns where its length goes
/// (patched by [`end`]).
#[inline]
pub(crate) fn begin(out: &mut Vec<u8>, tag: u8) -> usize {
    out.push(tag);
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    at
}

/// Writes the length of the message begun at `at`.
#[inline]
pub(crate) fn end(out: &mut [u8], at: usize) {
    let len = (out.len() - at) as u32;
    out[at..at + 4].copy_from_slice(&len.to_be_bytes());
}

#[inline]
pub(crate) fn put_cstr(out: &mut Vec<u8>, s: &[u8]) {
    out.extend_from_slice(s);
    out.push(0);
}

#[inline]
pub(crate) fn put_i16(out: &mut Vec<u8>, v: i16) {
    out.extend_from_slice(&v.to_be_bytes());
}

#[inline]
pub(crate) fn put_i32(out: &mut Vec<u8>, v: i32) {
    out.extend_from_slice(&v.to_be_bytes());
}

/// StartupMessage: protocol 3.0 and `name`, `value` pairs.
pub(crate) fn startup(out: &mut Vec<u8>, params: &[(&str, &str)]) {
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    put_i32(out, PROTOCOL_3_0);
    for (k, v) in params {
        put_cstr(out, k.as_bytes());
        put_cstr(out, v.as_bytes());
    }
    out.push(0);
    end(out, at);
}

/// SSLRequest.
pub(crate) fn ssl_request(out: &mut Vec<u8>) {
    put_i32(out, 8);
    put_i32(out, SSL_REQUEST);
}

/// CancelRequest for the backend `pid` with its secret `key`.
pub(crate) fn cancel_request(out: &mut Vec<u8>, pid: i32, key: i32) {
    put_i32(out, 16);
    put_i32(out, CANCEL_REQUEST);
    put_i32(out, pid);
    put_i32(out, key);
}

/// PasswordMessage (also the answer to an md5 request).
pub(crate) fn password(out: &mut Vec<u8>, password: &[u8]) {
    let at = begin(out, b'p');
    put_cstr(out, password);
    end(out, at);
}

/// SASLInitialResponse: the mechanism chosen and its first message.
pub(crate) fn sasl_initial(out: &mut Vec<u8>, mechanism: &str, data: &[u8]) {
    let at = begin(out, b'p');
    put_cstr(out, mechanism.as_bytes());
    put_i32(out, data.len() as i32);
    out.extend_from_slice(data);
    end(out, at);
}

/// SASLResponse.
pub(crate) fn sasl_response(out: &mut Vec<u8>, data: &[u8]) {
    let at = begin(out, b'p');
    out.extend_from_slice(data);
    end(out, at);
}

/// Query (the simple query protocol).
pub(crate) fn query(out: &mut Vec<u8>, sql: &str) {
    let at = begin(out, b'Q');
    put_cstr(out, sql.as_bytes());
    end(out, at);
}

/// Parse: a statement `name` ("" for the unnamed one), parameter types
/// left to the server.
pub(crate) fn parse(out: &mut Vec<u8>, name: &str, sql: &str) {
    let at = begin(out, b'P');
    put_cstr(out, name.as_bytes());
    put_cstr(out, sql.as_bytes());
    put_i16(out, 0);
    end(out, at);
}

/// Describe of a statement (`b'S'`) or portal (`b'P'`).
pub(crate) fn describe(out: &mut Vec<u8>, what: u8, name: &str) {
    let at = begin(out, b'D');
    out.push(what);
    put_cstr(out, name.as_bytes());
    end(out, at);
}

/// Execute of the unnamed portal, all its rows.
#[inline]
pub(crate) fn execute(out: &mut Vec<u8>) {
    out.extend_from_slice(&[b'E', 0, 0, 0, 9, 0, 0, 0, 0, 0]);
}

/// Sync.
#[inline]
pub(crate) fn sync(out: &mut Vec<u8>) {
    out.extend_from_slice(&[b'S', 0, 0, 0, 4]);
}

/// CopyDone.
pub(crate) fn copy_done(out: &mut Vec<u8>) {
    out.extend_from_slice(&[b'c', 0, 0, 0, 4]);
}

/// CopyFail with a reason.
pub(crate) fn copy_fail(out: &mut Vec<u8>, why: &str) {
    let at = begin(out, b'f');
    put_cstr(out, why.as_bytes());
    end(out, at);
}

/// Terminate.
pub(crate) fn terminate(out: &mut Vec<u8>) {
    out.extend_from_slice(&[b'X', 0, 0, 0, 4]);
}

// ---- Backend messages: decoded from their bodies. ----

/// Reads big-endian integers and strings off a message body.
pub(crate) struct Cursor<'a> {
    b: &'a [u8],
}

fn short() -> Error {
    Error::Protocol("a truncated message".into())
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(b: &'a [u8]) -> Self {
        Cursor { b }
    }

    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], Error> {
        if self.b.len() < n {
            return Err(short());
        }
        let (head, rest) = self.b.split_at(n);
        self.b = rest;
        Ok(head)
    }

    pub(crate) fn u8(&mut self) -> Result<u8, Error> {
        Ok(self.take(1)?[0])
    }

    pub(crate) fn i16(&mut self) -> Result<i16, Error> {
        let b = self.take(2)?;
        Ok(i16::from_be_bytes([b[0], b[1]]))
    }

    pub(crate) fn i32(&mut self) -> Result<i32, Error> {
        let b = self.take(4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A NUL-terminated string (without its NUL).
    pub(crate) fn cstr(&mut self) -> Result<&'a [u8], Error> {
        let n = self.b.iter().position(|&c| c == 0).ok_or_else(short)?;
        let s = &self.b[..n];
        self.b = &self.b[n + 1..];
        Ok(s)
    }

    pub(crate) fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.b)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.b.is_empty()
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// ErrorResponse (and NoticeResponse): fields, each a type byte and a
/// string, ended by a zero byte.
#[cold]
#[inline(never)]
pub(crate) fn error_fields(body: &[u8]) -> ServerError {
    let mut e = ServerError::default();
    let mut localized_severity = String::new();
    let mut c = Cursor::new(body);
    while let Ok(kind) = c.u8() {
        if kind == 0 {
            break;
        }
        let Ok(v) = c.cstr() else { break };
        match kind {
            b'V' => e.severity = text(v),
            b'S' => localized_severity = text(v),
            b'C' => e.code = text(v),
            b'M' => e.message = text(v),
            b'D' => e.detail = Some(text(v).into()),
            b'H' => e.hint = Some(text(v).into()),
            b'W' => e.context = Some(text(v).into()),
            b'P' => e.position = text(v).parse().ok(),
            _ => {}
        }
    }
    // Servers before 9.6 send only the localized severity.
    if e.severity.is_empty() {
        e.severity = localized_severity;
    }
    if e.code.is_empty() {
        e.code = "XX000".into();
    }
    e
}

/// A column of a RowDescription.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Column {
    pub name: String,
    pub type_oid: u32,
}

/// RowDescription: the columns of the rows that follow.
pub(crate) fn row_description(body: &[u8]) -> Result<Vec<Column>, Error> {
    let mut c = Cursor::new(body);
    let n = c.i16()?.max(0) as usize;
    let mut cols = Vec::with_capacity(n);
    for _ in 0..n {
        let name = text(c.cstr()?);
        c.take(4 + 2)?; // table oid, column number
        let type_oid = c.i32()? as u32;
        c.take(2 + 4 + 2)?; // type size, modifier, format
        cols.push(Column { name, type_oid });
    }
    Ok(cols)
}

/// The type of each column of a RowDescription, into `types` (cleared
/// first).
pub(crate) fn row_types(body: &[u8], types: &mut Vec<u32>) -> Result<(), Error> {
    types.clear();
    let mut c = Cursor::new(body);
    let n = c.i16()?.max(0) as usize;
    for _ in 0..n {
        c.cstr()?; // name
        c.take(4 + 2)?; // table oid, column number
        types.push(c.i32()? as u32);
        c.take(2 + 4 + 2)?; // type size, modifier, format
    }
    Ok(())
}

/// ParameterDescription: the type of each parameter.
pub(crate) fn parameter_description(body: &[u8]) -> Result<Vec<u32>, Error> {
    let mut c = Cursor::new(body);
    let n = c.i16()?.max(0) as usize;
    (0..n).map(|_| Ok(c.i32()? as u32)).collect()
}

/// Calls `each` with every value of a DataRow (None for NULL).
#[inline]
pub(crate) fn data_row<'a>(
    body: &'a [u8],
    mut each: impl FnMut(usize, Option<&'a [u8]>) -> Result<(), Error>,
) -> Result<(), Error> {
    let mut c = Cursor::new(body);
    let n = c.i16()?.max(0) as usize;
    for i in 0..n {
        let len = c.i32()?;
        let v = if len < 0 {
            None
        } else {
            Some(c.take(len as usize)?)
        };
        each(i, v)?;
    }
    Ok(())
}

/// The row count of a CommandComplete's tag (`INSERT 0 5`, `UPDATE 3`,
/// `SELECT 2`, `COPY 100`); 0 for tags without one (`CREATE TABLE`).
pub(crate) fn command_rows(body: &[u8]) -> u64 {
    let tag = body.strip_suffix(&[0]).unwrap_or(body);
    let last = tag.rsplit(|&c| c == b' ').next().unwrap_or_default();
    if tag.len() == last.len() {
        return 0;
    }
    std::str::from_utf8(last)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// ParameterStatus: a setting's name and value.
pub(crate) fn parameter_status(body: &[u8]) -> Result<(String, String), Error> {
    let mut c = Cursor::new(body);
    Ok((text(c.cstr()?), text(c.cstr()?)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(tag: u8, body: &[u8]) -> Vec<u8> {
        let mut m = vec![tag];
        m.extend_from_slice(&((body.len() + 4) as u32).to_be_bytes());
        m.extend_from_slice(body);
        m
    }

    #[test]
    fn reads_error_fields() {
        let body = b"SERREUR\0VERROR\0C40P01\0Mdeadlock detected\0DProcess 1 waits\0Rfile.c\0\0";
        let e = error_fields(body);
        assert_eq!(e.severity, "ERROR");
        assert_eq!(e.code, "40P01");
        assert_eq!(e.message, "deadlock detected");
        assert_eq!(e.detail.as_deref(), Some("Process 1 waits"));
        assert!(!e.is_fatal());
        let e = error_fields(b"SFATAL\0C57P01\0Mterminating connection\0\0");
        assert_eq!(e.severity, "FATAL");
        assert!(e.is_fatal());
        // Truncated: what was read is kept.
        let e = error_fields(b"C23505\0Mdupl");
        assert_eq!(e.code, "23505");
        assert_eq!(e.message, "");
    }

    #[test]
    fn reads_row_descriptions_and_rows() {
        let mut body = Vec::new();
        put_i16(&mut body, 2);
        for (name, oid) in [("id", 23), ("c", 1042)] {
            put_cstr(&mut body, name.as_bytes());
            put_i32(&mut body, 16384);
            put_i16(&mut body, 1);
            put_i32(&mut body, oid);
            put_i16(&mut body, 4);
            put_i32(&mut body, -1);
            put_i16(&mut body, 1);
        }
        let cols = row_description(&body).unwrap();
        assert_eq!(cols.len(), 2);
        assert_eq!(cols[1].name, "c");
        assert_eq!(cols[1].type_oid, 1042);
        assert!(row_description(&body[..body.len() - 1]).is_err());

        let mut row = Vec::new();
        put_i16(&mut row, 3);
        put_i32(&mut row, 4);
        row.extend_from_slice(&7i32.to_be_bytes());
        put_i32(&mut row, -1);
        put_i32(&mut row, 2);
        row.extend_from_slice(b"ab");
        let mut seen = Vec::new();
        data_row(&row, |i, v| {
            seen.push((i, v.map(<[u8]>::to_vec)));
            Ok(())
        })
        .unwrap();
        assert_eq!(
            seen,
            vec![
                (0, Some(vec![0, 0, 0, 7])),
                (1, None),
                (2, Some(b"ab".to_vec()))
            ]
        );
        assert!(data_row(&row[..row.len() - 1], |_, _| Ok(())).is_err());

        let mut params = Vec::new();
        put_i16(&mut params, 2);
        put_i32(&mut params, 23);
        put_i32(&mut params, 25);
        assert_eq!(parameter_description(&params).unwrap(), vec![23, 25]);
    }

    #[test]
    fn reads_command_tags() {
        assert_eq!(command_rows(b"INSERT 0 5\0"), 5);
        assert_eq!(command_rows(b"UPDATE 3\0"), 3);
        assert_eq!(command_rows(b"SELECT 12\0"), 12);
        assert_eq!(command_rows(b"COPY 100000\0"), 100000);
        assert_eq!(command_rows(b"CREATE TABLE\0"), 0);
        assert_eq!(command_rows(b"BEGIN\0"), 0);
        assert_eq!(
            parameter_status(b"server_version\x0016.4\0").unwrap(),
            ("server_version".into(), "16.4".into())
        );
    }

    #[test]
    fn encodes_frontend_messages() {
        let mut out = Vec::new();
        parse(&mut out, "s1", "SELECT $1");
        assert_eq!(out, message(b'P', b"s1\0SELECT $1\0\0\0"));
        out.clear();
        execute(&mut out);
        sync(&mut out);
        let mut want = message(b'E', b"\0\0\0\0\0");
        want.extend(message(b'S', b""));
        assert_eq!(out, want);
        out.clear();
        startup(&mut out, &[("user", "u")]);
        let mut want = Vec::new();
        put_i32(&mut want, 4 + 4 + 7 + 1);
        put_i32(&mut want, PROTOCOL_3_0);
        want.extend_from_slice(b"user\0u\0\0");
        assert_eq!(out, want);
        out.clear();
        cancel_request(&mut out, 42, -7);
        assert_eq!(out.len(), 16);
        assert_eq!(&out[8..12], &42i32.to_be_bytes());
        out.clear();
        sasl_initial(&mut out, "SCRAM-SHA-256", b"n,,n=,r=abc");
        let mut body = b"SCRAM-SHA-256\0".to_vec();
        put_i32(&mut body, 11);
        body.extend_from_slice(b"n,,n=,r=abc");
        assert_eq!(out, message(b'p', &body));
    }
}
