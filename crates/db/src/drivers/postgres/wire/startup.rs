//! Opening a session: the socket, SSLRequest and the TLS upgrade, the
//! startup message, authentication (trust, cleartext password, md5,
//! SCRAM-SHA-256), then the server's settings and backend key. Also the
//! cancel request, which opens a connection of its own.

use super::messages::{self as m, Cursor, Messages};
use super::{Error, Params};
use crate::wire_stream::{self, Stream};
use postgres_protocol::authentication::md5_hash;
use postgres_protocol::authentication::sasl::{ChannelBinding, SCRAM_SHA_256, ScramSha256};
use std::io::{Read, Write};

/// What the server told about the session.
pub(crate) struct Session {
    /// The backend's process id and secret key, for cancel requests.
    pub pid: i32,
    pub key: i32,
    pub version: String,
}

/// Connects and negotiates TLS as `p` asks (never over a Unix socket).
fn open_stream(p: &Params) -> Result<Stream, Error> {
    let mut stream = wire_stream::connect(&p.addr, &p.net)?;
    let Some(tls) = &p.tls else {
        return Ok(stream);
    };
    if stream.is_unix() {
        return Ok(stream);
    }
    let mut req = Vec::with_capacity(8);
    m::ssl_request(&mut req);
    stream.write_all(&req)?;
    // One byte, read alone: what follows an 'S' is the TLS handshake.
    let mut answer = [0u8; 1];
    stream.read_exact(&mut answer)?;
    match answer[0] {
        b'S' => wire_stream::start_tls(stream, tls).map_err(Error::Tls),
        b'N' if !tls.required => Ok(stream),
        b'N' => Err(Error::NoServerTls),
        other => Err(Error::Protocol(format!(
            "unexpected answer '{}' to SSLRequest (not a PostgreSQL server?)",
            other.escape_ascii()
        ))),
    }
}

/// Opens a session: returns the messages' stream, ready for queries.
pub(crate) fn connect(p: &Params) -> Result<(Messages, Session), Error> {
    open_session(p).map_err(|e| match e {
        Error::Io(err) => Error::Io(wire_stream::no_answer(err, &p.net)),
        e => e,
    })
}

fn open_session(p: &Params) -> Result<(Messages, Session), Error> {
    let stream = open_stream(p)?;
    let mut io = Messages::new(stream);
    let mut params = vec![
        ("user", p.user.as_str()),
        ("database", p.database.as_str()),
        ("application_name", p.application_name.as_str()),
        ("client_encoding", "UTF8"),
    ];
    if let Some(o) = &p.options {
        params.push(("options", o.as_str()));
    }
    m::startup(&mut io.out, &params);
    io.send()?;
    authenticate(&mut io, p)?;
    let mut session = Session {
        pid: 0,
        key: 0,
        version: String::new(),
    };
    loop {
        let (tag, body) = io.read()?;
        match tag {
            m::READY_FOR_QUERY => break,
            m::PARAMETER_STATUS => {
                let (name, value) = m::parameter_status(body)?;
                if name == "server_version" {
                    session.version = value;
                }
            }
            m::BACKEND_KEY_DATA => {
                let mut c = Cursor::new(body);
                session.pid = c.i32()?;
                session.key = c.i32()?;
            }
            m::ERROR_RESPONSE => return Err(Error::Server(Box::new(m::error_fields(body)))),
            m::NOTICE_RESPONSE | m::NEGOTIATE_PROTOCOL_VERSION => {}
            other => {
                return Err(Error::Protocol(format!(
                    "unexpected message '{}' after authentication",
                    other.escape_ascii()
                )));
            }
        }
    }
    io.stream.clear_timeout()?;
    Ok((io, session))
}

fn need_password(p: &Params) -> Result<&[u8], Error> {
    p.password.as_deref().map(str::as_bytes).ok_or_else(|| {
        Error::Auth(format!(
            "the server asks for a password for user '{}' and none was given",
            p.user
        ))
    })
}

/// Answers the server's authentication requests until it says OK.
fn authenticate(io: &mut Messages, p: &Params) -> Result<(), Error> {
    let mut scram: Option<ScramSha256> = None;
    loop {
        let (tag, body) = io.read()?;
        match tag {
            m::AUTHENTICATION => {}
            m::ERROR_RESPONSE => return Err(Error::Server(Box::new(m::error_fields(body)))),
            m::NOTICE_RESPONSE | m::NEGOTIATE_PROTOCOL_VERSION => continue,
            other => {
                return Err(Error::Protocol(format!(
                    "unexpected message '{}' during authentication (not a PostgreSQL server?)",
                    other.escape_ascii()
                )));
            }
        }
        let mut c = Cursor::new(body);
        match c.i32()? {
            // AuthenticationOk.
            0 => return Ok(()),
            // Cleartext password.
            3 => {
                let pw = need_password(p)?;
                m::password(&mut io.out, pw);
                io.send()?;
            }
            // MD5: md5(md5(password + user) + salt).
            5 => {
                let salt = c.take(4)?;
                let pw = need_password(p)?;
                let hash = md5_hash(p.user.as_bytes(), pw, [salt[0], salt[1], salt[2], salt[3]]);
                m::password(&mut io.out, hash.as_bytes());
                io.send()?;
            }
            // SASL: the server lists its mechanisms.
            10 => {
                let mut offered = Vec::new();
                while !c.is_empty() {
                    let name = c.cstr()?;
                    if name.is_empty() {
                        break;
                    }
                    offered.push(String::from_utf8_lossy(name).into_owned());
                }
                if !offered.iter().any(|n| n == SCRAM_SHA_256) {
                    return Err(Error::Auth(format!(
                        "the server offers SASL mechanisms {} and dbmeter supports only {SCRAM_SHA_256}",
                        offered.join(", ")
                    )));
                }
                let pw = need_password(p)?;
                // No channel binding (SCRAM-SHA-256, not -PLUS).
                let s = ScramSha256::new(pw, ChannelBinding::unsupported());
                m::sasl_initial(&mut io.out, SCRAM_SHA_256, s.message());
                io.send()?;
                scram = Some(s);
            }
            // SASL continue: the server's challenge.
            11 => {
                let s = scram
                    .as_mut()
                    .ok_or_else(|| Error::Protocol("SASL continue before SASL start".into()))?;
                s.update(c.rest())
                    .map_err(|e| Error::Auth(format!("SCRAM: {e}")))?;
                m::sasl_response(&mut io.out, s.message());
                io.send()?;
            }
            // SASL final: the server proves it knows the password too.
            12 => {
                let s = scram
                    .as_mut()
                    .ok_or_else(|| Error::Protocol("SASL final before SASL start".into()))?;
                s.finish(c.rest())
                    .map_err(|e| Error::Auth(format!("SCRAM: the server's proof is wrong: {e}")))?;
            }
            other => {
                let name = match other {
                    2 => "Kerberos V5",
                    6 => "SCM credentials",
                    7 | 8 => "GSSAPI",
                    9 => "SSPI",
                    _ => "an unknown method",
                };
                return Err(Error::Auth(format!(
                    "the server asks for authentication by {name} (code {other}), which dbmeter does not support (it supports trust, password, md5 and scram-sha-256)"
                )));
            }
        }
    }
}

/// Asks the server to cancel what backend `pid` is running, from a new
/// connection (with TLS when the session has it).
pub(crate) fn cancel(p: &Params, pid: i32, key: i32) -> Result<(), Error> {
    let mut stream = open_stream(p)?;
    let mut req = Vec::with_capacity(16);
    m::cancel_request(&mut req, pid, key);
    stream.write_all(&req)?;
    stream.flush()?;
    // The server closes the connection without an answer; wait for that,
    // so that the request is read before this returns.
    let mut sink = [0u8; 16];
    let _ = stream.read(&mut sink);
    stream.shutdown();
    Ok(())
}
