//! How the own clients' TCP connections notice a server that stopped
//! answering, read from the target's URL parameters under libpq's names
//! (for MariaDB/MySQL too):
//!
//! | parameter | default | meaning |
//! |---|---|---|
//! | `connect_timeout` | 30 | seconds opening a connection may take (TCP connect, then each read of the handshake); 0 = no limit |
//! | `keepalives` | 1 | 0 turns TCP keepalives off |
//! | `keepalives_idle` | 15 | seconds of silence before the first keepalive probe |
//! | `keepalives_interval` | 5 | seconds between unanswered probes |
//! | `keepalives_count` | 3 | unanswered probes that end the connection |
//! | `tcp_user_timeout` | 60000 | milliseconds data may stay unacknowledged before the connection ends (TCP_USER_TIMEOUT); 0 = the system's default |
//!
//! libpq leaves the keepalive timings and TCP_USER_TIMEOUT to the system
//! (2 hours of silence, and about 15 minutes of retransmissions, on
//! Linux): far too long for a benchmark, whose users would wait that long
//! on a server host that vanished without closing its connections. With
//! these defaults a connection to such a host fails within about a
//! minute (Linux ends it when the user timeout has passed since the
//! server last answered, probes or not), while a server busy with a long
//! query still answers the probes (its kernel does).

use crate::DbError;
use crate::target::ServerTarget;
use socket2::{SockRef, TcpKeepalive};
use std::net::TcpStream;
use std::time::Duration;

/// How long opening a connection may take when the target does not say.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// TCP keepalive timings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Keepalive {
    pub idle: Duration,
    pub interval: Duration,
    pub count: u32,
}

/// The network settings of one target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct NetSettings {
    /// Bounds the TCP connect and each read of the connection phase;
    /// None = no limit.
    pub connect_timeout: Option<Duration>,
    /// None = keepalives off.
    pub keepalive: Option<Keepalive>,
    /// TCP_USER_TIMEOUT; None = the system's default.
    pub user_timeout: Option<Duration>,
}

impl Default for NetSettings {
    fn default() -> Self {
        NetSettings {
            connect_timeout: Some(CONNECT_TIMEOUT),
            keepalive: Some(Keepalive {
                idle: Duration::from_secs(15),
                interval: Duration::from_secs(5),
                count: 3,
            }),
            user_timeout: Some(Duration::from_secs(60)),
        }
    }
}

impl NetSettings {
    /// Reads the settings from the target's parameters (see the module's
    /// table); a bad value is a usage error.
    pub(crate) fn of(t: &ServerTarget) -> Result<NetSettings, DbError> {
        let mut s = NetSettings::default();
        if let Some(v) = t
            .param("connect_timeout")
            .or_else(|| t.param("connect-timeout"))
        {
            let secs = number(
                "connect_timeout",
                v,
                "seconds opening a connection may take; 0 = no limit",
            )?;
            s.connect_timeout = (secs > 0).then(|| Duration::from_secs(secs));
        }
        if let Some(v) = t.param("keepalives") {
            match v.trim() {
                "0" => s.keepalive = None,
                "1" => {}
                _ => {
                    return Err(DbError::usage(format!(
                        "keepalives={v}: expected 1 (TCP keepalives on, the default) or 0 (off)"
                    )));
                }
            }
        }
        if let Some(k) = s.keepalive.as_mut() {
            let positive = |name: &str, what: &str| -> Result<Option<u64>, DbError> {
                match t.param(name) {
                    None => Ok(None),
                    Some(v) => match number(name, v, what)? {
                        0 => Err(DbError::usage(format!("{name}=0: expected {what} above 0"))),
                        n => Ok(Some(n)),
                    },
                }
            };
            if let Some(n) = positive(
                "keepalives_idle",
                "seconds of silence before the first keepalive probe",
            )? {
                k.idle = Duration::from_secs(n);
            }
            if let Some(n) = positive("keepalives_interval", "seconds between keepalive probes")? {
                k.interval = Duration::from_secs(n);
            }
            if let Some(n) = positive(
                "keepalives_count",
                "unanswered keepalive probes that end the connection",
            )? {
                k.count = u32::try_from(n).unwrap_or(u32::MAX);
            }
        }
        if let Some(v) = t.param("tcp_user_timeout") {
            let ms = number(
                "tcp_user_timeout",
                v,
                "milliseconds data may stay unacknowledged; 0 = the system's default",
            )?;
            s.user_timeout = (ms > 0).then(|| Duration::from_millis(ms));
        }
        Ok(s)
    }

    /// Sets the keepalive and user timeout options on a connected socket.
    pub(crate) fn apply(&self, tcp: &TcpStream) -> std::io::Result<()> {
        let sock = SockRef::from(tcp);
        match &self.keepalive {
            Some(k) => sock.set_tcp_keepalive(
                &TcpKeepalive::new()
                    .with_time(k.idle)
                    .with_interval(k.interval)
                    .with_retries(k.count),
            )?,
            None => sock.set_keepalive(false)?,
        }
        sock.set_tcp_user_timeout(self.user_timeout)
    }
}

/// A whole number parameter, or a usage error saying what it means.
fn number(name: &str, v: &str, what: &str) -> Result<u64, DbError> {
    // Kernel options take 32-bit values; more is a typo.
    v.trim()
        .parse::<u32>()
        .map(u64::from)
        .map_err(|_| DbError::usage(format!("{name}={v}: expected a whole number, {what}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    fn target(url: &str) -> ServerTarget {
        match crate::Target::parse(url) {
            Ok(crate::Target::Postgres(t) | crate::Target::Mysql(t)) => t,
            other => panic!("{url}: {other:?}"),
        }
    }

    #[test]
    fn reads_libpq_parameters() {
        let s = NetSettings::of(&target("postgres://u@h/db")).unwrap();
        assert_eq!(s, NetSettings::default());
        let s = NetSettings::of(&target(
            "mysql://u@h/db?keepalives_idle=7&keepalives_interval=2&keepalives_count=4&tcp_user_timeout=9000&connect_timeout=3",
        ))
        .unwrap();
        assert_eq!(
            s.keepalive,
            Some(Keepalive {
                idle: Duration::from_secs(7),
                interval: Duration::from_secs(2),
                count: 4
            })
        );
        assert_eq!(s.user_timeout, Some(Duration::from_secs(9)));
        assert_eq!(s.connect_timeout, Some(Duration::from_secs(3)));
        let s = NetSettings::of(&target(
            "postgres://u@h/db?keepalives=0&tcp_user_timeout=0&connect_timeout=0",
        ))
        .unwrap();
        assert_eq!(s.keepalive, None);
        assert_eq!(s.user_timeout, None);
        assert_eq!(s.connect_timeout, None);
        for bad in [
            "keepalives=yes",
            "keepalives_idle=0",
            "keepalives_count=-1",
            "tcp_user_timeout=1.5",
            "connect_timeout=soon",
        ] {
            let e = NetSettings::of(&target(&format!("postgres://u@h/db?{bad}"))).unwrap_err();
            assert_eq!(e.kind, crate::ErrorKind::Usage, "{bad}");
            assert!(e.message.starts_with(bad), "{bad}: {e}");
        }
    }

    /// The options reach the socket of a connection the clients open
    /// (read back with getsockopt).
    #[test]
    fn sets_the_socket_options() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = crate::wire_stream::Addr::Tcp {
            host: "127.0.0.1".into(),
            port: listener.local_addr().unwrap().port(),
        };
        let stream = crate::wire_stream::connect(&addr, &NetSettings::default()).unwrap();
        let crate::wire_stream::Stream::Tcp(tcp) = &stream else {
            panic!("not TCP")
        };
        let sock = SockRef::from(tcp);
        assert!(sock.keepalive().unwrap());
        assert_eq!(sock.tcp_keepalive_time().unwrap(), Duration::from_secs(15));
        assert_eq!(
            sock.tcp_keepalive_interval().unwrap(),
            Duration::from_secs(5)
        );
        assert_eq!(sock.tcp_keepalive_retries().unwrap(), 3);
        assert_eq!(
            sock.tcp_user_timeout().unwrap(),
            Some(Duration::from_secs(60))
        );
        let off =
            NetSettings::of(&target("postgres://u@h/db?keepalives=0&tcp_user_timeout=0")).unwrap();
        off.apply(tcp).unwrap();
        assert!(!sock.keepalive().unwrap());
        assert_eq!(sock.tcp_user_timeout().unwrap(), None);
    }
}
