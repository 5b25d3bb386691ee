//! Server URLs, as libpq reads its connection URIs (and the same for
//! MySQL): `scheme://[user[:password]@][host[:port][,host[:port]...]][/db][?k=v&...]`.
//! Each part is percent-decoded (`%40` for `@`, `%2F` for `/`); a host
//! starting with `/` is a socket (directory for PostgreSQL); the query's
//! `host`, `port`, `user`, `password`, `dbname` (or `database`) and
//! `socket` replace the URL's parts; other parameters are kept.

use super::{Given, ServerKind};
use crate::DbError;
use crate::target::mask_password;
use percent_encoding::percent_decode_str;
use std::path::PathBuf;

/// Parses a `mysql://` / `postgres://` URL into what it gives.
pub(crate) fn parse_server_url(s: &str, kind: ServerKind) -> Result<Given, DbError> {
    let shown = mask_password(s);
    let bad = |why: String| DbError::usage(format!("--db {shown}: {why}"));
    let decode = |part: &str, what: &str| -> Result<String, DbError> {
        percent_decode_str(part)
            .decode_utf8()
            .map(|v| v.into_owned())
            .map_err(|_| {
                bad(format!(
                    "the {what} is not valid UTF-8 once percent-decoded"
                ))
            })
    };
    let rest = s.split_once("://").map_or("", |(_, r)| r);
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    let (userinfo, hostspec) = match authority.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, authority),
    };
    let mut g = Given::default();
    if let Some(u) = userinfo {
        let (user, password) = match u.split_once(':') {
            Some((user, pw)) => (user, Some(pw)),
            None => (u, None),
        };
        g.user = Some(decode(user, "user")?).filter(|u| !u.is_empty());
        if let Some(pw) = password {
            g.password = Some(decode(pw, "password")?).filter(|p| !p.is_empty());
        }
    }
    let mut ports: Vec<Option<u16>> = Vec::new();
    for item in hostspec.split(',').filter(|h| !h.is_empty()) {
        let (host, port) = if let Some(inner) = item.strip_prefix('[') {
            let (h, after) = inner
                .split_once(']')
                .ok_or_else(|| bad(format!("'{item}': an IPv6 address lacks its ']'")))?;
            let port =
                match after {
                    "" => None,
                    p => Some(p.strip_prefix(':').ok_or_else(|| {
                        bad(format!("'{item}': expected ':PORT' after the address"))
                    })?),
                };
            (h.to_string(), port)
        } else {
            match item.rsplit_once(':') {
                Some((h, p)) => (decode(h, "host")?, Some(p)),
                None => (decode(item, "host")?, None),
            }
        };
        let port = match port.filter(|p| !p.is_empty()) {
            Some(p) => Some(super::port(p, &format!("--db {shown}"))?),
            None => None,
        };
        if !host.is_empty() {
            g.hosts.push(host);
        }
        ports.push(port);
    }
    // In a list, a host without a port gets the default one.
    if ports.iter().any(Option::is_some) {
        g.ports = ports
            .into_iter()
            .map(|p| p.unwrap_or(kind.default_port()))
            .collect();
    }
    let db = decode(path, "database")?;
    if !db.is_empty() {
        g.database = Some(db);
    }
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair
            .split_once('=')
            .ok_or_else(|| bad(format!("parameter '{pair}' has no '=VALUE'")))?;
        let (k, v) = (decode(k, "parameter")?, decode(v, "parameter")?);
        match k.as_str() {
            "socket" => g.socket = Some(PathBuf::from(v)),
            "host" if kind == ServerKind::Mysql && v.starts_with('/') => {
                g.socket = Some(PathBuf::from(v))
            }
            "host" => g.hosts = super::list(&v),
            "port" => {
                g.ports = super::list(&v)
                    .iter()
                    .map(|p| super::port(p, &format!("--db {shown}")))
                    .collect::<Result<_, _>>()?
            }
            "user" => g.user = Some(v).filter(|v| !v.is_empty()),
            "password" => g.password = Some(v).filter(|v| !v.is_empty()),
            "dbname" | "database" => g.database = Some(v).filter(|v| !v.is_empty()),
            _ => g.params.push((k, v)),
        }
    }
    Ok(g)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pg(s: &str) -> Given {
        parse_server_url(s, ServerKind::Postgres).unwrap()
    }

    #[test]
    fn reads_every_part() {
        let g = parse_server_url(
            "mariadb://bob:s%40c%3Ar+t@db1:3307/shop?socket=/run/my.sock&load=bulk",
            ServerKind::Mysql,
        )
        .unwrap();
        assert_eq!(g.hosts, ["db1"]);
        assert_eq!(g.ports, [3307]);
        assert_eq!(g.user.as_deref(), Some("bob"));
        // '+' is a plus, as in libpq (not a space).
        assert_eq!(g.password.as_deref(), Some("s@c:r+t"));
        assert_eq!(g.database.as_deref(), Some("shop"));
        assert_eq!(g.socket, Some(PathBuf::from("/run/my.sock")));
        assert_eq!(g.param("load"), Some("bulk"));
    }

    #[test]
    fn leaves_out_what_is_not_given() {
        for s in ["postgres://", "postgres:///", "postgresql://@/?"] {
            assert_eq!(pg(s), Given::default(), "{s}");
        }
        let g = pg("postgres:///shop");
        assert!(g.hosts.is_empty() && g.user.is_none());
        assert_eq!(g.database.as_deref(), Some("shop"));
    }

    #[test]
    fn host_lists_sockets_and_ipv6() {
        let g = pg("postgres://u@h1:5433,h2,[::1]:6000/db");
        assert_eq!(g.hosts, ["h1", "h2", "::1"]);
        assert_eq!(g.ports, [5433, 5432, 6000]);
        let g = pg("postgresql://%2Fvar%2Frun%2Fpostgresql/db");
        assert_eq!(g.hosts, ["/var/run/postgresql"]);
        let g =
            pg("postgres://localhost/db?host=/tmp/s&port=5499&user=x&dbname=y&application_name=a");
        assert_eq!(g.hosts, ["/tmp/s"]);
        assert_eq!(g.ports, [5499]);
        assert_eq!(
            (g.user.as_deref(), g.database.as_deref()),
            (Some("x"), Some("y"))
        );
        assert_eq!(g.param("application_name"), Some("a"));
    }

    #[test]
    fn errors_name_the_url_without_its_password() {
        for s in [
            "postgres://u:secret@h:notaport/db",
            "postgres://u:secret@[::1/db",
            "postgres://u:secret@h/db?sslmode",
            "postgres://u:secret@h:0/db",
        ] {
            let e = parse_server_url(s, ServerKind::Postgres).unwrap_err();
            assert!(!e.message.contains("secret"), "{e}");
            assert!(e.message.contains("u:***@"), "{e}");
        }
    }
}
