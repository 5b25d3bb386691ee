//! The byte stream under dbmeter's own database clients (MariaDB/MySQL in
//! `drivers/mysql/wire/`, PostgreSQL in `drivers/postgres/wire/`): TCP
//! (with TCP_NODELAY), a Unix socket, or TLS over TCP (rustls); and what
//! both clients do to open one: connect with a timeout, upgrade to TLS.

use dbmeter_coop::Interest;
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, StreamOwned};
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream, ToSocketAddrs};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::Arc;

pub(crate) use crate::net::NetSettings;

/// Where a server listens.
#[derive(Clone, Debug)]
pub(crate) enum Addr {
    Tcp { host: String, port: u16 },
    Unix(PathBuf),
}

/// How to speak TLS to a server.
#[derive(Clone)]
pub(crate) struct TlsParams {
    pub config: Arc<ClientConfig>,
    pub server_name: ServerName<'static>,
    /// Fail when the server does not offer TLS (otherwise: plain text).
    pub required: bool,
    /// The CAs trusted, in words, when certificates are verified: named
    /// when one does not verify.
    pub trusted: Option<Arc<str>>,
}

/// Connects to `addr` with the target's network settings (TCP keepalives
/// and user timeout on TCP); reads time out after the connect timeout
/// until [`Stream::clear_timeout`] (the connection phase is bounded,
/// queries not).
pub(crate) fn connect(addr: &Addr, net: &NetSettings) -> io::Result<Stream> {
    let timeout = net.connect_timeout;
    match addr {
        Addr::Tcp { host, port } => {
            let mut last = None;
            for a in (host.as_str(), *port).to_socket_addrs()? {
                let tcp = match timeout {
                    Some(t) => TcpStream::connect_timeout(&a, t),
                    None => TcpStream::connect(a),
                };
                match tcp {
                    Ok(s) => {
                        s.set_nodelay(true)?;
                        net.apply(&s)?;
                        s.set_read_timeout(timeout)?;
                        return Ok(Stream::Tcp(s));
                    }
                    Err(e) => last = Some(e),
                }
            }
            Err(last.unwrap_or_else(|| {
                io::Error::new(io::ErrorKind::NotFound, format!("{host}: no address found"))
            }))
        }
        Addr::Unix(path) => {
            let s = UnixStream::connect(path)
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
            s.set_read_timeout(timeout)?;
            Ok(Stream::Unix(s))
        }
    }
}

/// A read of the connection phase that ran out of time (EAGAIN on Linux)
/// becomes an error that says so; other errors stay as they are.
pub(crate) fn no_answer(e: io::Error, net: &NetSettings) -> io::Error {
    match (e.kind(), net.connect_timeout) {
        (io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut, Some(t)) => io::Error::new(
            io::ErrorKind::TimedOut,
            format!(
                "the server accepted the connection but did not answer within {} s: \
                 it may be hung or its host unreachable, or its listen queue overflowed \
                 (raise back_log, or open fewer connections at once with --connect-rate); \
                 connect_timeout= in the URL sets this limit",
                t.as_secs_f64()
            ),
        ),
        _ => e,
    }
}

/// Runs a TLS handshake over `sock` to completion (so that its errors
/// say they are TLS's); returns the encrypted stream or the handshake's
/// error message.
pub(crate) fn start_tls(sock: Stream, tls: &TlsParams) -> Result<Stream, String> {
    let conn = ClientConnection::new(tls.config.clone(), tls.server_name.clone())
        .map_err(|e| e.to_string())?;
    let mut s = StreamOwned::new(conn, sock);
    while s.conn.is_handshaking() {
        s.conn
            .complete_io(&mut s.sock)
            .map_err(|e| handshake_error(&e, tls))?;
    }
    Ok(Stream::Tls(Box::new(s)))
}

/// A failed handshake in words; a certificate from an unknown CA says
/// which CAs were trusted and how to name the right one.
fn handshake_error(e: &io::Error, tls: &TlsParams) -> String {
    let unknown_ca = e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        .is_some_and(|r| {
            matches!(
                r,
                rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer)
            )
        });
    match &tls.trusted {
        Some(trusted) if unknown_ca => format!(
            "{e}: the server's certificate is not signed by a CA trusted here ({trusted}); name its CA with sslrootcert=FILE (ssl-ca=FILE)"
        ),
        _ => e.to_string(),
    }
}

pub(crate) enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
    Tls(Box<StreamOwned<ClientConnection, Stream>>),
    /// Between taking the socket out for TLS and putting the TLS stream in.
    Closed,
}

fn closed() -> io::Error {
    io::Error::new(io::ErrorKind::NotConnected, "the connection is closed")
}

impl Stream {
    pub(crate) fn is_tls(&self) -> bool {
        matches!(self, Stream::Tls(_))
    }

    pub(crate) fn is_unix(&self) -> bool {
        matches!(self, Stream::Unix(_))
    }

    /// Lets reads wait for as long as it takes.
    pub(crate) fn clear_timeout(&self) -> io::Result<()> {
        match self {
            Stream::Tcp(t) => t.set_read_timeout(None),
            Stream::Unix(u) => u.set_read_timeout(None),
            Stream::Tls(t) => t.sock.clear_timeout(),
            Stream::Closed => Ok(()),
        }
    }

    /// Makes reads and writes return at once (WouldBlock) instead of
    /// waiting, or wait again.
    pub(crate) fn set_nonblocking(&self, yes: bool) -> io::Result<()> {
        match self {
            Stream::Tcp(t) => t.set_nonblocking(yes),
            Stream::Unix(u) => u.set_nonblocking(yes),
            Stream::Tls(t) => t.sock.set_nonblocking(yes),
            Stream::Closed => Ok(()),
        }
    }

    /// Shuts the socket down both ways (wakes a blocked reader too).
    pub(crate) fn shutdown(&self) {
        match self {
            Stream::Tcp(s) => {
                let _ = s.shutdown(Shutdown::Both);
            }
            Stream::Unix(s) => {
                let _ = s.shutdown(Shutdown::Both);
            }
            Stream::Tls(t) => t.sock.shutdown(),
            Stream::Closed => {}
        }
    }
}

/// A read or write on a socket of a client that runs as a task of a
/// thread's loop (`dbmeter_coop`, pgbench's `-j`): the call itself never
/// blocks (MSG_DONTWAIT); when the socket is not ready the task waits in
/// its thread's poll and tries again. Outside a task: None (the caller
/// does the blocking call).
fn in_task(
    fd: RawFd,
    interest: Interest,
    mut op: impl FnMut() -> isize,
) -> Option<io::Result<usize>> {
    if !dbmeter_coop::active() {
        return None;
    }
    loop {
        let n = op();
        if n >= 0 {
            return Some(Ok(n as usize));
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::WouldBlock => {
                dbmeter_coop::wait_fd(fd, interest);
            }
            io::ErrorKind::Interrupted => {}
            _ => return Some(Err(e)),
        }
    }
}

fn recv_in_task(fd: RawFd, buf: &mut [u8]) -> Option<io::Result<usize>> {
    in_task(fd, Interest::Read, || {
        // SAFETY: `buf` is a live, writable buffer of its length.
        unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), libc::MSG_DONTWAIT) }
    })
}

fn send_in_task(fd: RawFd, buf: &[u8]) -> Option<io::Result<usize>> {
    in_task(fd, Interest::Write, || {
        // SAFETY: `buf` is a live buffer of its length.
        unsafe {
            libc::send(
                fd,
                buf.as_ptr().cast(),
                buf.len(),
                libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
            )
        }
    })
}

impl Stream {
    /// Reads what has arrived, without waiting (WouldBlock when nothing
    /// has); TLS: WouldBlock.
    pub(crate) fn read_now(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let fd = match self {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Unix(s) => s.as_raw_fd(),
            _ => return Err(io::ErrorKind::WouldBlock.into()),
        };
        // SAFETY: `buf` is a live, writable buffer of its length.
        let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), libc::MSG_DONTWAIT) };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => recv_in_task(s.as_raw_fd(), buf).unwrap_or_else(|| s.read(buf)),
            Stream::Unix(s) => recv_in_task(s.as_raw_fd(), buf).unwrap_or_else(|| s.read(buf)),
            Stream::Tls(t) => t.read(buf),
            Stream::Closed => Err(closed()),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => send_in_task(s.as_raw_fd(), buf).unwrap_or_else(|| s.write(buf)),
            Stream::Unix(s) => send_in_task(s.as_raw_fd(), buf).unwrap_or_else(|| s.write(buf)),
            Stream::Tls(t) => t.write(buf),
            Stream::Closed => Err(closed()),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Tcp(_) | Stream::Unix(_) => Ok(()),
            Stream::Tls(t) => t.flush(),
            Stream::Closed => Err(closed()),
        }
    }
}

/// The read buffer both clients read their server's answers through: one
/// `read` usually brings a whole answer. Bytes `pos..end` of `buf` are
/// received and not consumed yet.
pub(crate) struct ReadBuf {
    pub buf: Vec<u8>,
    pub pos: usize,
    pub end: usize,
}

impl ReadBuf {
    /// The buffer's size: a few results of short rows fit in it.
    const SIZE: usize = 16 * 1024;
    /// A buffer grown past this (for a large answer) is shrunk back once
    /// it is all read.
    const KEEP: usize = 1024 * 1024;

    pub(crate) fn new() -> ReadBuf {
        ReadBuf {
            buf: vec![0; Self::SIZE],
            pos: 0,
            end: 0,
        }
    }

    /// Bytes received and not consumed yet.
    pub(crate) fn buffered(&self) -> usize {
        self.end - self.pos
    }

    /// Makes sure `need` bytes are buffered, reading from `stream`.
    #[inline]
    pub(crate) fn fill(&mut self, stream: &mut Stream, need: usize) -> io::Result<()> {
        if self.end - self.pos >= need {
            return Ok(());
        }
        self.fill_more(stream, need)
    }

    #[cold]
    fn fill_more(&mut self, stream: &mut Stream, need: usize) -> io::Result<()> {
        if self.pos == self.end {
            // All read: the next answer starts at the front, where the
            // whole buffer is free to take it in one `read`.
            self.pos = 0;
            self.end = 0;
        }
        if self.buf.len() - self.pos < need {
            self.buf.copy_within(self.pos..self.end, 0);
            self.end -= self.pos;
            self.pos = 0;
            if self.buf.len() < need {
                self.buf.resize(need.next_power_of_two(), 0);
            }
        }
        while self.end - self.pos < need {
            let n = stream.read(&mut self.buf[self.end..])?;
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the server closed the connection",
                ));
            }
            self.end += n;
        }
        Ok(())
    }

    /// After an answer: a buffer grown large is given back once empty.
    pub(crate) fn shrink_when_idle(&mut self) {
        if self.buf.len() > Self::KEEP && self.pos == self.end {
            *self = ReadBuf::new();
        }
    }
}
