//! Connection phase: the server's greeting (handshake v10), TLS upgrade,
//! the client's handshake response, and authentication (plugins, auth
//! switch requests, caching_sha2_password's extra rounds).

use super::packet::{Cursor, Packets, put_lenenc_bytes};
use super::{Error, Params, auth, parse_err};
use crate::wire_stream::Stream;

// Capability flags (the low 32 bits are MySQL's; MariaDB's extensions sit
// in the high 32 bits when the server does not set CLIENT_MYSQL).
pub(crate) const CLIENT_MYSQL: u64 = 1;
const CLIENT_LONG_FLAG: u64 = 1 << 2;
const CLIENT_CONNECT_WITH_DB: u64 = 1 << 3;
const CLIENT_LOCAL_FILES: u64 = 1 << 7;
const CLIENT_PROTOCOL_41: u64 = 1 << 9;
const CLIENT_SSL: u64 = 1 << 11;
const CLIENT_TRANSACTIONS: u64 = 1 << 13;
const CLIENT_SECURE_CONNECTION: u64 = 1 << 15;
const CLIENT_MULTI_STATEMENTS: u64 = 1 << 16;
const CLIENT_MULTI_RESULTS: u64 = 1 << 17;
const CLIENT_PS_MULTI_RESULTS: u64 = 1 << 18;
const CLIENT_PLUGIN_AUTH: u64 = 1 << 19;
const CLIENT_PLUGIN_AUTH_LENENC_DATA: u64 = 1 << 21;
pub(crate) const CLIENT_DEPRECATE_EOF: u64 = 1 << 24;
/// MariaDB: COM_STMT_BULK_EXECUTE (a prepared statement run once per row
/// of an array of parameters, in one command).
pub(crate) const MARIADB_CLIENT_STMT_BULK_OPERATIONS: u64 = 1 << 34;
/// MariaDB: result sets of prepared statements skip column definitions
/// the client has already seen.
pub(crate) const MARIADB_CLIENT_CACHE_METADATA: u64 = 1 << 36;

/// What dbmeter asks for (and gets where the server offers it).
const WANTED: u64 = CLIENT_MYSQL
    | CLIENT_LONG_FLAG
    | CLIENT_CONNECT_WITH_DB
    | CLIENT_LOCAL_FILES
    | CLIENT_PROTOCOL_41
    | CLIENT_TRANSACTIONS
    | CLIENT_SECURE_CONNECTION
    | CLIENT_MULTI_STATEMENTS
    | CLIENT_MULTI_RESULTS
    | CLIENT_PS_MULTI_RESULTS
    | CLIENT_PLUGIN_AUTH
    | CLIENT_PLUGIN_AUTH_LENENC_DATA
    | CLIENT_DEPRECATE_EOF
    | MARIADB_CLIENT_STMT_BULK_OPERATIONS
    | MARIADB_CLIENT_CACHE_METADATA;

/// These the client cannot do without.
const NEEDED: u64 = CLIENT_PROTOCOL_41 | CLIENT_SECURE_CONNECTION;

/// utf8mb4_general_ci.
const CHARSET: u8 = 45;
const MAX_PACKET: u32 = 1 << 30;

/// The server's first packet.
pub(crate) struct Greeting {
    pub version: String,
    pub connection_id: u32,
    pub capabilities: u64,
    pub nonce: Vec<u8>,
    pub plugin: String,
}

pub(crate) fn parse_greeting(p: &[u8]) -> Result<Greeting, Error> {
    if p.first() == Some(&0xFF) {
        return Err(parse_err(p));
    }
    let mut c = Cursor::new(p);
    let protocol = c.u8()?;
    if protocol != 10 {
        return Err(Error::Protocol(format!(
            "unsupported protocol version {protocol} (not a MySQL or MariaDB server?)"
        )));
    }
    let version = String::from_utf8_lossy(c.nul_bytes()).into_owned();
    let connection_id = c.u32()?;
    let mut nonce = c.take(8)?.to_vec();
    c.skip(1)?;
    let mut caps = c.u16()? as u64;
    if c.is_empty() {
        return Ok(Greeting {
            version,
            connection_id,
            capabilities: caps,
            nonce,
            plugin: auth::NATIVE.into(),
        });
    }
    c.skip(1 + 2)?; // character set, status
    caps |= (c.u16()? as u64) << 16;
    let data_len = c.u8()? as usize;
    c.skip(6)?;
    let ext = c.u32()? as u64;
    if caps & CLIENT_MYSQL == 0 {
        caps |= ext << 32;
    }
    if caps & CLIENT_SECURE_CONNECTION != 0 {
        let n = data_len.saturating_sub(8).max(13);
        let part = c.take(n.min(c.remaining()))?;
        nonce.extend_from_slice(auth::nonce(part));
    }
    let plugin = if caps & CLIENT_PLUGIN_AUTH != 0 {
        String::from_utf8_lossy(c.nul_bytes()).into_owned()
    } else {
        auth::NATIVE.into()
    };
    Ok(Greeting {
        version,
        connection_id,
        capabilities: caps,
        nonce,
        plugin,
    })
}

/// The first auth response for `plugin`; unknown plugins get a native
/// password response (the server then switches to what it wants).
fn first_response(plugin: &str, password: &[u8], nonce: &[u8]) -> (&'static str, Vec<u8>) {
    match plugin {
        auth::CACHING_SHA2 => (auth::CACHING_SHA2, auth::caching_sha2(password, nonce)),
        auth::ED25519 => (auth::ED25519, auth::ed25519(password, nonce)),
        _ => (auth::NATIVE, auth::native_password(password, nonce)),
    }
}

/// Runs the connection phase on a fresh stream. Returns the greeting and
/// the capabilities in force.
pub(crate) fn connect(io: &mut Packets, params: &Params) -> Result<(Greeting, u64), Error> {
    io.expect_seq(0);
    let greeting = parse_greeting(io.read()?)?;
    if greeting.capabilities & NEEDED != NEEDED {
        return Err(Error::Protocol(
            "the server is too old (no protocol 4.1 authentication)".into(),
        ));
    }
    let mut caps = WANTED & greeting.capabilities;
    if params.database.is_empty() {
        caps &= !CLIENT_CONNECT_WITH_DB;
    }
    let fixed = |out: &mut Vec<u8>, caps: u64| {
        out.extend_from_slice(&(caps as u32).to_le_bytes());
        out.extend_from_slice(&MAX_PACKET.to_le_bytes());
        out.push(CHARSET);
        out.extend_from_slice(&[0; 19]);
        let ext = if caps & CLIENT_MYSQL == 0 {
            (caps >> 32) as u32
        } else {
            0
        };
        out.extend_from_slice(&ext.to_le_bytes());
    };
    if let Some(tls) = &params.tls
        && !io.stream.is_unix()
    {
        if greeting.capabilities & CLIENT_SSL != 0 {
            caps |= CLIENT_SSL;
            fixed(io.packet(), caps);
            io.send()?;
            let sock = std::mem::replace(&mut io.stream, Stream::Closed);
            io.stream = crate::wire_stream::start_tls(sock, tls).map_err(Error::Tls)?;
        } else if tls.required {
            return Err(Error::NoServerTls);
        }
    }
    let password = params.password.as_deref().unwrap_or("").as_bytes();
    let (plugin, response) = first_response(&greeting.plugin, password, &greeting.nonce);
    let out = io.packet();
    fixed(out, caps);
    out.extend_from_slice(params.user.as_bytes());
    out.push(0);
    if caps & CLIENT_PLUGIN_AUTH_LENENC_DATA != 0 {
        put_lenenc_bytes(out, &response);
    } else {
        out.push(response.len() as u8);
        out.extend_from_slice(&response);
    }
    if caps & CLIENT_CONNECT_WITH_DB != 0 {
        out.extend_from_slice(params.database.as_bytes());
        out.push(0);
    }
    if caps & CLIENT_PLUGIN_AUTH != 0 {
        out.extend_from_slice(plugin.as_bytes());
        out.push(0);
    }
    io.send()?;
    authenticate(io, password, plugin, greeting.nonce.clone())?;
    Ok((greeting, caps))
}

/// Answers the server until it says OK (or refuses).
fn authenticate(
    io: &mut Packets,
    password: &[u8],
    mut plugin: &str,
    mut nonce: Vec<u8>,
) -> Result<(), Error> {
    let secure = io.stream.is_tls() || io.stream.is_unix();
    loop {
        let p = io.read()?;
        match p.first().copied() {
            Some(0x00) => return Ok(()),
            Some(0xFF) => return Err(parse_err(p)),
            // Auth switch request: another plugin, a new nonce.
            Some(0xFE) => {
                let mut c = Cursor::new(&p[1..]);
                let name = String::from_utf8_lossy(c.nul_bytes()).into_owned();
                nonce = auth::nonce(c.rest()).to_vec();
                let response = match name.as_str() {
                    auth::NATIVE => {
                        plugin = auth::NATIVE;
                        auth::native_password(password, &nonce)
                    }
                    auth::CACHING_SHA2 => {
                        plugin = auth::CACHING_SHA2;
                        auth::caching_sha2(password, &nonce)
                    }
                    auth::ED25519 => {
                        plugin = auth::ED25519;
                        auth::ed25519(password, &nonce)
                    }
                    other => {
                        return Err(Error::Auth(format!(
                            "the server asks for the authentication plugin '{other}', which dbmeter does not support (it supports mysql_native_password, caching_sha2_password and client_ed25519)"
                        )));
                    }
                };
                io.packet().extend_from_slice(&response);
                io.send()?;
            }
            // More data for the current plugin.
            Some(0x01) if plugin == auth::CACHING_SHA2 => match p.get(1).copied() {
                // Fast authentication worked; an OK follows.
                Some(0x03) => {}
                // Full authentication: the password itself.
                Some(0x04) => {
                    if secure {
                        let out = io.packet();
                        out.extend_from_slice(password);
                        out.push(0);
                        io.send()?;
                    } else {
                        io.packet().push(0x02);
                        io.send()?;
                        let key = io.read()?;
                        if key.first() == Some(&0xFF) {
                            return Err(parse_err(key));
                        }
                        let pem = key.get(1..).unwrap_or_default();
                        let sealed = auth::rsa_encrypted_password(password, &nonce, pem)?;
                        io.packet().extend_from_slice(&sealed);
                        io.send()?;
                    }
                }
                _ => {
                    return Err(Error::Protocol(
                        "unexpected caching_sha2_password message".into(),
                    ));
                }
            },
            _ => {
                return Err(Error::Protocol(format!(
                    "unexpected packet during authentication ({plugin})"
                )));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_mariadb_greeting() {
        // Protocol 10, version, id 7, nonce in two parts, capabilities
        // without CLIENT_MYSQL and MariaDB's extended ones, the plugin.
        let mut p = vec![10];
        p.extend_from_slice(b"5.5.5-10.11.19-MariaDB\0");
        p.extend_from_slice(&7u32.to_le_bytes());
        p.extend_from_slice(b"abcdefgh");
        p.push(0);
        let caps: u64 = (WANTED | CLIENT_SSL) & !CLIENT_MYSQL;
        p.extend_from_slice(&(caps as u16).to_le_bytes());
        p.push(45);
        p.extend_from_slice(&2u16.to_le_bytes());
        p.extend_from_slice(&((caps >> 16) as u16).to_le_bytes());
        p.push(21);
        p.extend_from_slice(&[0; 6]);
        p.extend_from_slice(&((caps >> 32) as u32).to_le_bytes());
        p.extend_from_slice(b"ijklmnopqrst\0");
        p.extend_from_slice(b"mysql_native_password\0");
        let g = parse_greeting(&p).unwrap();
        assert_eq!(g.version, "5.5.5-10.11.19-MariaDB");
        assert_eq!(g.connection_id, 7);
        assert_eq!(g.nonce, b"abcdefghijklmnopqrst");
        assert_eq!(g.plugin, "mysql_native_password");
        assert_eq!(g.capabilities, caps);
        assert!(g.capabilities & MARIADB_CLIENT_CACHE_METADATA != 0);
        // A refusal before the greeting (too many connections).
        let mut e = vec![0xFF];
        e.extend_from_slice(&1040u16.to_le_bytes());
        e.extend_from_slice(b"Too many connections");
        match parse_greeting(&e) {
            Err(Error::Server { code, message, .. }) => {
                assert_eq!(code, 1040);
                assert_eq!(message, "Too many connections");
            }
            _ => panic!("expected a server error"),
        }
        assert!(parse_greeting(&[10, b'x']).is_err());
    }
}
