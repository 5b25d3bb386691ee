//! Targets: where a benchmark connects, parsed from `--db` or sysbench's
//! `--mysql-*` / `--pgsql-*` options.

use crate::DbError;
use crate::conninfo::{Env, Given, ServerKind, Spec, parse_server_url};
use std::fmt;
use std::path::PathBuf;

/// The file used when no `--db` is given.
pub const DEFAULT_SQLITE_FILE: &str = "dbmeter.sqlite";

/// SQL dialect of a target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Mysql,
    Postgres,
}

/// A server reached over the network or a local socket.
#[derive(Clone, PartialEq, Eq)]
pub struct ServerTarget {
    /// Hosts; connection i goes to `hosts[i % len]` (sysbench's round robin).
    pub hosts: Vec<String>,
    /// Ports; connection i uses `ports[i % len]`.
    pub ports: Vec<u16>,
    /// A Unix socket path, used instead of TCP when set.
    pub socket: Option<PathBuf>,
    pub user: String,
    pub password: Option<String>,
    pub database: String,
    /// Other URL parameters (e.g. `sslmode`), passed to the driver.
    pub params: Vec<(String, String)>,
}

impl fmt::Debug for ServerTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerTarget")
            .field("hosts", &self.hosts)
            .field("ports", &self.ports)
            .field("socket", &self.socket)
            .field("user", &self.user)
            .field("password", &self.password.as_ref().map(|_| "***"))
            .field("database", &self.database)
            .field("params", &self.params)
            .finish()
    }
}

impl ServerTarget {
    pub fn host(&self, i: usize) -> &str {
        self.hosts
            .get(i % self.hosts.len().max(1))
            .map_or("localhost", String::as_str)
    }

    pub fn port(&self, i: usize) -> u16 {
        self.ports
            .get(i % self.ports.len().max(1))
            .copied()
            .unwrap_or(0)
    }

    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// An embedded SQLite database file. `implicit` is true when the user
    /// gave no `--db` and dbmeter picked its default file.
    Sqlite {
        path: PathBuf,
        implicit: bool,
    },
    /// MariaDB or MySQL.
    Mysql(ServerTarget),
    Postgres(ServerTarget),
}

fn usage(msg: String) -> DbError {
    DbError::usage(msg)
}

impl Target {
    /// The embedded SQLite file in the current directory.
    pub fn default_sqlite() -> Target {
        Target::Sqlite {
            path: PathBuf::from(DEFAULT_SQLITE_FILE),
            implicit: true,
        }
    }

    /// Parses a `--db` value: `sqlite:PATH`, a path ending in `.sqlite` or
    /// `.db`, `mysql://` / `mariadb://user:pass@host:port/db?socket=PATH`,
    /// or `postgres://user:pass@host:port/db?sslmode=...`; a server URL is
    /// completed from this process's environment and the client files
    /// (`~/.pgpass`, `~/.my.cnf`, ...) as the server's own client would
    /// ([`crate::conninfo`]), and warnings about them are printed.
    pub fn parse(s: &str) -> Result<Target, DbError> {
        match Target::parse_spec(s)? {
            Spec::Sqlite(t) => Ok(t),
            Spec::Server(kind, given) => {
                let r = given.resolve(kind, &Given::default(), &Env::from_process())?;
                Ok(Target::server(kind, r.warn()))
            }
        }
    }

    /// [`Target::parse`] in environment `env`; the warnings are returned,
    /// not printed.
    pub fn parse_in(s: &str, env: &Env) -> Result<(Target, Vec<String>), DbError> {
        match Target::parse_spec(s)? {
            Spec::Sqlite(t) => Ok((t, Vec::new())),
            Spec::Server(kind, given) => {
                let r = given.resolve(kind, &Given::default(), env)?;
                Ok((Target::server(kind, r.target), r.warnings))
            }
        }
    }

    /// A server target of `kind`.
    pub fn server(kind: ServerKind, t: ServerTarget) -> Target {
        match kind {
            ServerKind::Mysql => Target::Mysql(t),
            ServerKind::Postgres => Target::Postgres(t),
        }
    }

    /// Reads a `--db` value without resolving a server URL.
    pub(crate) fn parse_spec(s: &str) -> Result<Spec, DbError> {
        let s = s.trim();
        let sqlite = |p: &str| -> Result<Spec, DbError> {
            if p.is_empty() {
                return Err(usage(format!(
                    "--db {s}: the SQLite URL has no file path (e.g. sqlite:bench.sqlite)"
                )));
            }
            Ok(Spec::Sqlite(Target::Sqlite {
                path: PathBuf::from(p),
                implicit: false,
            }))
        };
        if let Some(rest) = s.strip_prefix("sqlite://") {
            return sqlite(rest);
        }
        if let Some(rest) = s.strip_prefix("sqlite:") {
            return sqlite(rest);
        }
        if let Some((scheme, _)) = s.split_once("://") {
            let kind = match scheme.to_ascii_lowercase().as_str() {
                "mysql" | "mariadb" => ServerKind::Mysql,
                "postgres" | "postgresql" | "pgsql" => ServerKind::Postgres,
                _ => {
                    return Err(usage(format!(
                        "--db {}: unknown database type '{scheme}' (supported: sqlite:PATH, mysql://, mariadb://, postgres://)",
                        mask_password(s)
                    )));
                }
            };
            return Ok(Spec::Server(kind, parse_server_url(s, kind)?));
        }
        let lower = s.to_ascii_lowercase();
        if [".sqlite", ".sqlite3", ".db"]
            .iter()
            .any(|e| lower.ends_with(e))
        {
            return sqlite(s);
        }
        Err(usage(format!(
            "--db {s}: not a database URL (expected sqlite:PATH, mysql://user@host/db, postgres://user@host/db, or a file ending in .sqlite or .db)"
        )))
    }

    pub fn dialect(&self) -> Dialect {
        match self {
            Target::Sqlite { .. } => Dialect::Sqlite,
            Target::Mysql(_) => Dialect::Mysql,
            Target::Postgres(_) => Dialect::Postgres,
        }
    }

    /// The driver's name, as in results (`sqlite`, `mysql`, `pgsql`).
    pub fn driver(&self) -> &'static str {
        match self {
            Target::Sqlite { .. } => "sqlite",
            Target::Mysql(_) => "mysql",
            Target::Postgres(_) => "pgsql",
        }
    }

    /// True when the driver blocks the calling thread (one OS thread per
    /// user): all of them (SQLite, and dbmeter's own MariaDB/MySQL and
    /// PostgreSQL clients).
    pub fn is_blocking(&self) -> bool {
        matches!(
            self,
            Target::Sqlite { .. } | Target::Mysql(_) | Target::Postgres(_)
        )
    }

    /// True when the user gave no target and dbmeter chose its default.
    pub fn is_implicit(&self) -> bool {
        matches!(self, Target::Sqlite { implicit: true, .. })
    }

    /// Error codes that restart an event by default: sysbench's lists.
    pub fn default_ignored_errors(&self) -> &'static str {
        match self {
            Target::Sqlite { .. } => "SQLITE_BUSY,SQLITE_LOCKED",
            Target::Mysql(_) => "1213,1020,1205",
            Target::Postgres(_) => "40P01,40001,23505",
        }
    }
}

impl fmt::Display for Target {
    /// The target as a URL, with any password masked.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let server = |f: &mut fmt::Formatter<'_>, scheme: &str, t: &ServerTarget| {
            let pass = if t.password.is_some() { ":***" } else { "" };
            let port = t
                .ports
                .iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>()
                .join(",");
            let hosts = t
                .hosts
                .iter()
                .map(|h| {
                    if h.contains(':') {
                        format!("[{h}]")
                    } else {
                        h.clone()
                    }
                })
                .collect::<Vec<_>>()
                .join(",");
            // Several hosts: each with its port, as the URL gave them.
            if t.socket.is_none() && t.endpoint_count() > 1 {
                let list: Vec<String> = (0..t.endpoint_count()).map(|k| t.endpoint(k)).collect();
                write!(
                    f,
                    "{scheme}://{}{pass}@{}/{}",
                    t.user,
                    list.join(","),
                    t.database
                )?;
            } else {
                write!(
                    f,
                    "{scheme}://{}{pass}@{hosts}:{port}/{}",
                    t.user, t.database
                )?;
            }
            if let Some(s) = &t.socket {
                write!(f, "?socket={}", s.display())?;
            }
            Ok(())
        };
        match self {
            Target::Sqlite { path, .. } => write!(f, "sqlite:{}", path.display()),
            Target::Mysql(t) => server(f, "mysql", t),
            Target::Postgres(t) => server(f, "postgres", t),
        }
    }
}

/// Replaces the password of `scheme://user:password@host`, and a
/// `password=` parameter, with `***`.
pub fn mask_password(url: &str) -> String {
    // A `password=` parameter of the query is masked too. The query
    // starts after the user information (a password may hold a `?`).
    let after_userinfo = url.rfind('@').map_or(0, |i| i + 1);
    let (url, query) = match url[after_userinfo..].find('?') {
        Some(i) => (
            &url[..after_userinfo + i],
            Some(&url[after_userinfo + i + 1..]),
        ),
        None => (url, None),
    };
    let query = query.map(|q| {
        q.split('&')
            .map(|kv| match kv.split_once('=') {
                Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=***"),
                _ => kv.to_string(),
            })
            .collect::<Vec<_>>()
            .join("&")
    });
    let base = match url.split_once("://") {
        Some((scheme, rest)) => match rest.rsplit_once('@') {
            Some((userinfo, host)) => match userinfo.split_once(':') {
                Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
                None => url.to_string(),
            },
            None => url.to_string(),
        },
        None => url.to_string(),
    };
    match query {
        Some(q) => format!("{base}?{q}"),
        None => base,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sqlite_forms() {
        for s in ["sqlite:a.sqlite", "sqlite://a.sqlite", "a.sqlite"] {
            assert_eq!(
                Target::parse(s).unwrap(),
                Target::Sqlite {
                    path: "a.sqlite".into(),
                    implicit: false
                }
            );
        }
        assert!(Target::parse("sqlite:").is_err());
        assert!(Target::parse("oracle://x").is_err());
        assert!(Target::parse("whatever").is_err());
    }

    #[test]
    fn parses_server_urls() {
        let env = Env::empty();
        let Target::Mysql(t) = Target::parse_in(
            "mariadb://bob:s%40cret@db1:3307/shop?socket=/run/my.sock",
            &env,
        )
        .unwrap()
        .0
        else {
            panic!()
        };
        assert_eq!(t.hosts, vec!["db1"]);
        assert_eq!(t.ports, vec![3307]);
        assert_eq!(t.user, "bob");
        assert_eq!(t.password.as_deref(), Some("s@cret"));
        assert_eq!(t.database, "shop");
        assert_eq!(t.socket, Some(PathBuf::from("/run/my.sock")));
        let shown = Target::Mysql(t).to_string();
        assert!(!shown.contains("cret"), "{shown}");
        let Target::Postgres(t) = Target::parse_in("postgres://u@h/db?sslmode=require", &env)
            .unwrap()
            .0
        else {
            panic!()
        };
        assert_eq!(t.ports, vec![5432]);
        let shown = Target::Postgres(t.clone()).to_string();
        assert_eq!(shown, "postgres://u@h:5432/db");
        assert_eq!(t.param("sslmode"), Some("require"));
        assert_eq!(t.password, None);
        let (t, _) = Target::parse_in("postgres://[::1]:6000/db", &env.with_user("u")).unwrap();
        assert_eq!(t.to_string(), "postgres://u@[::1]:6000/db");
    }

    #[test]
    fn masks_passwords() {
        assert_eq!(mask_password("mysql://u:secret@h/db"), "mysql://u:***@h/db");
        assert_eq!(mask_password("mysql://u@h/db"), "mysql://u@h/db");
        assert_eq!(
            mask_password("mysql://?host=h&password=secret&user=u"),
            "mysql://?host=h&password=***&user=u"
        );
        assert_eq!(
            mask_password("mysql://u:pw@h/db?sslmode=require"),
            "mysql://u:***@h/db?sslmode=require"
        );
        assert_eq!(mask_password("mysql://u:p?w@h/db"), "mysql://u:***@h/db");
    }
}
