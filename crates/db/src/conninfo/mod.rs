//! Connection settings, resolved the way each server's own client library
//! resolves them: what the user gave (a URL, command-line options) first,
//! then the files and environment variables libpq or libmysqlclient read,
//! then the defaults. Every way of naming a server target (`--db`,
//! sysbench's `--mysql-*`/`--pgsql-*` options, the results store's URL,
//! campaign targets, `--against`) ends in [`Given::resolve`].
//!
//! - [`Env`]: the environment variables, home directory and OS user name
//!   the resolution reads (the process's by default; tests make their own).
//! - [`Given`]: what the user gave explicitly; anything left `None` or
//!   empty is looked up.
//! - `url.rs`: `mysql://` and `postgres://` URLs to [`Given`].
//! - `pg.rs`: PostgreSQL as libpq 15: `PG*` variables, the service file,
//!   the password file, the default socket directory.
//! - `mysql.rs`: MariaDB/MySQL as their clients: `MYSQL_*` variables,
//!   `~/.my.cnf` (or `--defaults-file`), localhost meaning the Unix socket.

mod mysql;
mod pg;
mod url;

use crate::DbError;
use crate::target::{ServerTarget, Target};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

pub(crate) use url::parse_server_url;

/// Which client's conventions apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerKind {
    Mysql,
    Postgres,
}

impl ServerKind {
    pub fn default_port(self) -> u16 {
        match self {
            ServerKind::Mysql => 3306,
            ServerKind::Postgres => 5432,
        }
    }
}

/// What the resolution reads from outside: environment variables, the
/// home directory (for `~/.pgpass`, `~/.pg_service.conf`, `~/.my.cnf`)
/// and the OS user name (the default user). [`Env::from_process`] reads
/// them from this process; tests build their own with [`Env::empty`].
#[derive(Clone)]
pub struct Env {
    vars: BTreeMap<String, String>,
    home: Option<PathBuf>,
    os_user: Option<String>,
    /// Where a MySQL client looks for the server's socket when none is
    /// given (the first that exists).
    mysql_sockets: Vec<PathBuf>,
}

/// Debian's sockets of MariaDB/MySQL, and other usual places.
const MYSQL_SOCKETS: &[&str] = &[
    "/run/mysqld/mysqld.sock",
    "/var/run/mysqld/mysqld.sock",
    "/tmp/mysql.sock",
    "/var/lib/mysql/mysql.sock",
];

impl fmt::Debug for Env {
    /// Names only: values may be passwords.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Env")
            .field("vars", &self.vars.keys().collect::<Vec<_>>())
            .field("home", &self.home)
            .field("os_user", &self.os_user)
            .finish()
    }
}

impl Env {
    /// Nothing set: no variables, no home directory, no user name.
    pub fn empty() -> Env {
        Env {
            vars: BTreeMap::new(),
            home: None,
            os_user: None,
            mysql_sockets: MYSQL_SOCKETS.iter().map(PathBuf::from).collect(),
        }
    }

    /// This process's `PG*` and `MYSQL_*` variables, `$HOME` (or the
    /// account's home directory) and the effective user's name.
    pub fn from_process() -> Env {
        let vars = std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .filter(|(k, _)| k.starts_with("PG") || k.starts_with("MYSQL_"))
            .collect();
        let account = os_account();
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .or_else(|| account.as_ref().map(|a| a.1.clone()));
        let os_user = account.map(|a| a.0).or_else(|| {
            ["USER", "LOGNAME"]
                .iter()
                .find_map(|v| std::env::var(v).ok().filter(|s| !s.is_empty()))
        });
        Env {
            vars,
            home,
            os_user,
            ..Env::empty()
        }
    }

    pub fn with_var(mut self, name: &str, value: &str) -> Env {
        self.vars.insert(name.to_string(), value.to_string());
        self
    }

    pub fn with_home(mut self, home: &Path) -> Env {
        self.home = Some(home.to_path_buf());
        self
    }

    pub fn with_user(mut self, user: &str) -> Env {
        self.os_user = Some(user.to_string());
        self
    }

    /// Replaces the places searched for a MySQL socket.
    pub fn with_mysql_sockets<P: AsRef<Path>>(mut self, paths: impl IntoIterator<Item = P>) -> Env {
        self.mysql_sockets = paths
            .into_iter()
            .map(|p| p.as_ref().to_path_buf())
            .collect();
        self
    }

    /// A variable's value; an empty one counts as unset.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.vars
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    /// `name` in the home directory.
    fn in_home(&self, name: &str) -> Option<PathBuf> {
        self.home.as_ref().map(|h| h.join(name))
    }

    /// The user name the clients default to.
    fn os_user(&self) -> String {
        self.os_user.clone().unwrap_or_else(|| "root".into())
    }
}

/// The effective user's name and home directory, from the passwd database.
fn os_account() -> Option<(String, PathBuf)> {
    use std::ffi::CStr;
    use std::os::unix::ffi::OsStrExt;
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: getpwuid_r fills `pwd` with pointers into `buf`, both ours
    // and alive until the strings are copied below.
    let rc = unsafe {
        libc::getpwuid_r(
            libc::geteuid(),
            &mut pwd,
            buf.as_mut_ptr(),
            buf.len(),
            &mut found,
        )
    };
    if rc != 0 || found.is_null() || pwd.pw_name.is_null() || pwd.pw_dir.is_null() {
        return None;
    }
    // SAFETY: both are NUL-terminated strings in `buf` (checked non-null).
    let (name, dir) = unsafe { (CStr::from_ptr(pwd.pw_name), CStr::from_ptr(pwd.pw_dir)) };
    Some((
        name.to_string_lossy().into_owned(),
        PathBuf::from(std::ffi::OsStr::from_bytes(dir.to_bytes())),
    ))
}

/// What the user gave for a server target: by a URL or by command-line
/// options. Empty lists and `None` are "not given", to be looked up in
/// files, the environment, then defaults.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Given {
    pub hosts: Vec<String>,
    pub ports: Vec<u16>,
    /// A Unix socket (MySQL) or socket directory (PostgreSQL).
    pub socket: Option<PathBuf>,
    pub user: Option<String>,
    pub password: Option<String>,
    pub database: Option<String>,
    /// Other settings (`sslmode`, `application_name`, `service`,
    /// `protocol`, `defaults-file`, ...), first ones winning.
    pub params: Vec<(String, String)>,
}

impl fmt::Debug for Given {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Given")
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

/// A resolved target and what the user should be told about it (e.g. a
/// password file ignored for its permissions).
#[derive(Debug)]
pub struct Resolved {
    pub target: ServerTarget,
    pub warnings: Vec<String>,
}

impl Resolved {
    /// The target, after printing each warning on standard error (once
    /// per process: the same target is often resolved more than once).
    pub fn warn(self) -> ServerTarget {
        static SHOWN: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());
        let mut shown = SHOWN.lock().unwrap_or_else(PoisonError::into_inner);
        for w in self.warnings {
            if !shown.contains(&w) {
                eprintln!("dbmeter: warning: {w}");
                shown.insert(w);
            }
        }
        self.target
    }
}

impl Given {
    /// The first value of parameter `name` (case-insensitive).
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Completes what was given into a target, as the `kind` server's
    /// client would. `fallback` holds defaults of the way the target was
    /// given (sysbench's option defaults), used before the client's own.
    pub fn resolve(
        &self,
        kind: ServerKind,
        fallback: &Given,
        env: &Env,
    ) -> Result<Resolved, DbError> {
        match kind {
            ServerKind::Postgres => pg::resolve(self, fallback, env),
            ServerKind::Mysql => mysql::resolve(self, fallback, env),
        }
    }
}

/// A `--db` value, before resolution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Spec {
    /// An SQLite file: nothing to resolve.
    Sqlite(Target),
    Server(ServerKind, Given),
}

/// Reads a `--db` value (see [`Target::parse`]) without looking anything
/// up: callers add what they have (options) before [`Given::resolve`].
pub fn parse_spec(s: &str) -> Result<Spec, DbError> {
    Target::parse_spec(s)
}

/// The TLS parameters' names (as `tls.rs` reads them): a setting found in
/// a file or the environment is added only when the URL or options gave
/// none of its names.
const TLS_ALIASES: &[&[&str]] = &[
    &["sslmode", "ssl-mode", "ssl_mode", "ssl"],
    &["sslrootcert", "ssl-ca", "ssl_ca"],
    &["sslcert", "ssl-cert", "ssl_cert"],
    &["sslkey", "ssl-key", "ssl_key"],
];

/// True when `params` has `key` or one of its TLS aliases.
fn has_param(params: &[(String, String)], key: &str) -> bool {
    let names = TLS_ALIASES
        .iter()
        .find(|a| a.contains(&key))
        .copied()
        .unwrap_or(std::slice::from_ref(&key));
    params
        .iter()
        .any(|(k, _)| names.iter().any(|n| k.eq_ignore_ascii_case(n)))
}

/// Parses a port number; the error names where it came from.
fn port(value: &str, from: &str) -> Result<u16, DbError> {
    value
        .trim()
        .parse::<u16>()
        .ok()
        .filter(|p| *p > 0)
        .ok_or_else(|| {
            DbError::usage(format!(
                "{from}: port '{value}' is not a port number (1-65535)"
            ))
        })
}

/// A comma-separated list without empty items.
fn list(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(|x| x.trim().to_string())
        .filter(|x| !x.is_empty())
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A scratch directory for files the resolution reads.
    pub(crate) struct Dir(pub PathBuf);

    impl Dir {
        pub(crate) fn new(tag: &str) -> Dir {
            use std::sync::atomic::{AtomicUsize, Ordering};
            static N: AtomicUsize = AtomicUsize::new(0);
            let p = std::env::temp_dir().join(format!(
                "dbmeter-conninfo-{}-{tag}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::Relaxed)
            ));
            let _ = std::fs::remove_dir_all(&p);
            std::fs::create_dir_all(&p).unwrap();
            Dir(p)
        }

        /// Writes `name` with `text` and permissions `mode`.
        pub(crate) fn file(&self, name: &str, text: &str, mode: u32) -> PathBuf {
            use std::os::unix::fs::PermissionsExt;
            let p = self.0.join(name);
            std::fs::write(&p, text).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
            p
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn debug_output_hides_passwords() {
        let g = Given {
            password: Some("hunter2".into()),
            ..Given::default()
        };
        assert!(!format!("{g:?}").contains("hunter2"));
        let e = Env::empty().with_var("PGPASSWORD", "hunter2");
        assert!(!format!("{e:?}").contains("hunter2"));
    }

    #[test]
    fn tls_aliases_count_as_given() {
        let p = vec![("ssl-mode".to_string(), "require".to_string())];
        assert!(has_param(&p, "sslmode"));
        assert!(!has_param(&p, "sslrootcert"));
        assert!(has_param(
            &[("Application_Name".into(), "x".into())],
            "application_name"
        ));
    }
}
