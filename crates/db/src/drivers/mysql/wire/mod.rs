//! dbmeter's own MariaDB/MySQL client: the wire protocol spoken directly,
//! blocking, one connection per OS thread.
//!
//! A benchmark client's CPU is taken from the server it measures, so this
//! client does little per statement: a request is built in one buffer and
//! sent with one `write`; a response is usually taken in with one `read`;
//! rows are counted where they lie in the read buffer, not decoded.
//!
//! - [`packet`]: framing, sequence ids, 16 MiB split packets,
//!   length-encoded integers and strings.
//! - [`crate::wire_stream`]: TCP, Unix socket, or TLS (rustls) under the
//!   packets (shared with the PostgreSQL client).
//! - [`handshake`]: greeting, capabilities, TLS upgrade, authentication.
//! - [`auth`]: the password proofs of each authentication plugin.
//! - [`conn`]: commands: text queries, prepared statements (binary
//!   protocol), LOAD DATA LOCAL INFILE, quit.

mod auth;
mod conn;
mod handshake;
mod packet;
mod values;

pub(crate) use conn::{BulkRows, Prepared, WireConn};
pub(crate) use values::RawRows;

pub(crate) use crate::wire_stream::{Addr, NetSettings, TlsParams};
use std::fmt;

/// Where and how to connect.
#[derive(Clone)]
pub(crate) struct Params {
    pub addr: Addr,
    pub user: String,
    pub password: Option<String>,
    pub database: String,
    /// TLS over TCP; `None` for plain text.
    pub tls: Option<TlsParams>,
    /// Connect timeout (the TCP connect and each read of the connection
    /// phase), TCP keepalives and user timeout.
    pub net: NetSettings,
}

/// Why a command failed.
#[derive(Debug)]
pub(crate) enum Error {
    /// The server's ERR packet.
    Server {
        code: u16,
        state: String,
        message: String,
    },
    /// The connection failed or was closed.
    Io(std::io::Error),
    /// The server sent something this client does not understand.
    Protocol(String),
    /// TLS could not be set up (handshake, certificate).
    Tls(String),
    /// TLS is required and the server does not offer it.
    NoServerTls,
    /// Authentication could not proceed on the client's side.
    Auth(String),
    /// A mistake of the caller (e.g. the wrong number of parameters).
    Usage(String),
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(e)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Server {
                code,
                state,
                message,
            } => {
                if state.is_empty() {
                    write!(f, "ERROR {code}: {message}")
                } else {
                    write!(f, "ERROR {code} ({state}): {message}")
                }
            }
            Error::Io(e) => write!(f, "{e}"),
            Error::Protocol(m) => write!(f, "protocol error: {m}"),
            Error::Tls(m) => write!(f, "TLS: {m}"),
            Error::NoServerTls => f.write_str("the server does not support TLS"),
            Error::Auth(m) | Error::Usage(m) => f.write_str(m),
        }
    }
}

/// Reads an ERR packet: 0xFF, the error code, `#` and the SQLSTATE (when
/// the client speaks protocol 4.1), the message.
pub(crate) fn parse_err(p: &[u8]) -> Error {
    let mut c = packet::Cursor::new(p.get(1..).unwrap_or_default());
    let Ok(code) = c.u16() else {
        return Error::Protocol("a truncated error packet".into());
    };
    let rest = c.rest();
    let (state, message) = match rest.split_first() {
        Some((b'#', r)) if r.len() >= 5 => (&r[..5], &r[5..]),
        _ => (&[][..], rest),
    };
    Error::Server {
        code,
        state: String::from_utf8_lossy(state).into_owned(),
        message: String::from_utf8_lossy(message).into_owned(),
    }
}
