//! dbmeter's own PostgreSQL client: protocol 3.0 spoken directly,
//! blocking, one connection per OS thread (as the MariaDB/MySQL client in
//! `drivers/mysql/wire/`).
//!
//! A benchmark client's CPU is taken from the server it measures, so this
//! client does little per statement: a prepared statement's Bind, Execute
//! and Sync are built in one buffer and sent with one `write`; the answer
//! is usually taken in with one `read`; rows are counted where they lie in
//! the read buffer, not decoded.
//!
//! - [`messages`]: framing of backend messages, encoders of frontend
//!   messages, decoders of the backend messages the client reads.
//! - [`crate::wire_stream`]: TCP, Unix socket, or TLS (rustls) under the
//!   messages (shared with the MariaDB/MySQL client).
//! - [`startup`]: SSLRequest and TLS, the startup message,
//!   authentication (trust, cleartext, md5, SCRAM-SHA-256), cancel
//!   requests.
//! - [`conn`]: simple queries, named prepared statements (extended
//!   protocol), COPY FROM STDIN, results.
//! - [`values`]: values of result rows (binary or text format) as
//!   [`crate::Value`]s.

mod conn;
mod messages;
mod startup;
mod values;

pub(crate) use crate::wire_stream::{Addr, NetSettings, TlsParams};
pub use conn::{Arg, Cell};
pub(crate) use conn::{PgWire, Statement};
pub(crate) use startup::cancel;
pub(crate) use values::bytea_hex;

use std::fmt;

/// Where and how to connect.
#[derive(Clone)]
pub(crate) struct Params {
    pub addr: Addr,
    pub user: String,
    pub password: Option<String>,
    pub database: String,
    /// Command-line options for the backend (`-c name=value ...`).
    pub options: Option<String>,
    /// `application_name` of the session (in pg_stat_activity and logs).
    pub application_name: String,
    /// TLS over TCP; `None` for plain text.
    pub tls: Option<TlsParams>,
    /// Connect timeout (the TCP connect and each read of the startup
    /// phase), TCP keepalives and user timeout.
    pub net: NetSettings,
}

/// An ErrorResponse's fields.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ServerError {
    /// ERROR, FATAL or PANIC (never localized).
    pub severity: String,
    /// The SQLSTATE.
    pub code: String,
    pub message: String,
    pub detail: Option<Box<str>>,
    pub hint: Option<Box<str>>,
    /// Where it happened (the CONTEXT lines).
    pub context: Option<Box<str>>,
    /// Where in the statement the error is (1-based, in characters).
    pub position: Option<u32>,
}

impl ServerError {
    /// The error as libpq words it: `ERROR:  message`, then its
    /// `DETAIL:  `, `HINT:  ` and `CONTEXT:  ` lines.
    pub(crate) fn report(&self) -> String {
        let mut r = format!("{}:  {}", self.severity, self.message);
        for (label, v) in [
            ("DETAIL", self.detail.as_deref()),
            ("HINT", self.hint.as_deref()),
            ("CONTEXT", self.context.as_deref()),
        ] {
            if let Some(v) = v {
                r.push_str(&format!("\n{label}:  {v}"));
            }
        }
        r
    }

    /// True when the server ends the session after it.
    pub(crate) fn is_fatal(&self) -> bool {
        matches!(self.severity.as_str(), "FATAL" | "PANIC")
    }
}

/// Why a command failed.
#[derive(Debug)]
pub(crate) enum Error {
    /// The server's ErrorResponse.
    Server(Box<ServerError>),
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
            Error::Server(e) => {
                write!(f, "{}: {}", e.severity, e.message)?;
                if let Some(d) = &e.detail {
                    write!(f, " ({d})")?;
                }
                Ok(())
            }
            Error::Io(e) => write!(f, "{e}"),
            Error::Protocol(m) => write!(f, "protocol error: {m}"),
            Error::Tls(m) => write!(f, "TLS: {m}"),
            Error::NoServerTls => f.write_str("the server does not support TLS"),
            Error::Auth(m) | Error::Usage(m) => f.write_str(m),
        }
    }
}
