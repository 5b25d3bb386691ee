//! The one error type of this crate. Every message is a single line; when a
//! server or helper fails, the line ends with the last lines of its log.

use std::fmt;
use std::io;

#[derive(Debug)]
#[non_exhaustive]
pub enum ServerError {
    /// This machine lacks the binaries, or (running as root) the unprivileged
    /// user to run them as. Tests skip on this; see [`crate::available`].
    Unavailable(String),
    /// Something else listens on this TCP port of 127.0.0.1.
    PortInUse(u16),
    /// A server or helper process failed, did not become ready in time or did
    /// not stop in time. The message says which and quotes its log.
    Failed(String),
    /// A file or process operation of ours failed.
    Io { context: String, source: io::Error },
}

impl ServerError {
    pub(crate) fn io(context: impl Into<String>) -> impl FnOnce(io::Error) -> ServerError {
        let context = context.into();
        move |source| ServerError::Io { context, source }
    }
}

impl fmt::Display for ServerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServerError::Unavailable(why) | ServerError::Failed(why) => f.write_str(why),
            ServerError::PortInUse(port) => write!(f, "port {port} on 127.0.0.1 is already in use"),
            ServerError::Io { context, source } => write!(f, "{context}: {source}"),
        }
    }
}

impl std::error::Error for ServerError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ServerError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}
