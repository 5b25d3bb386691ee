//! How a MariaDB server is initialized, started and set up.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::Flavor;
use crate::binaries::{self, Binaries, Names};
use crate::engine::{Dirs, Engine};

pub(crate) struct MariaDb;

/// Small and quick to start; `ServerOptions::settings` come after these and
/// win. A user's my.cnf (`ServerOptions::config_file`) replaces them.
const DEFAULTS: &[(&str, &str)] = &[
    ("innodb-buffer-pool-size", "64M"),
    ("innodb-log-file-size", "48M"),
    ("skip-name-resolve", ""),
    ("skip-log-bin", ""),
    ("max-connections", "2000"),
    ("local-infile", "1"),
];

/// `("key", "value")` as `--key=value`; an empty value gives a bare `--key`.
fn option(key: &str, value: &str) -> OsString {
    let key = key.trim_start_matches('-');
    if value.is_empty() {
        format!("--{key}").into()
    } else {
        format!("--{key}={value}").into()
    }
}

/// Our defaults (unless the user gave a my.cnf), then the settings.
fn options<'a>(
    dirs: &Dirs,
    settings: &'a [(String, String)],
) -> impl Iterator<Item = OsString> + 'a {
    let defaults = if dirs.config.is_some() {
        &[][..]
    } else {
        DEFAULTS
    };
    defaults
        .iter()
        .map(|(k, v)| option(k, v))
        .chain(settings.iter().map(|(k, v)| option(k, v)))
}

/// The first argument: the user's my.cnf, or no option files at all.
fn defaults_file(dirs: &Dirs) -> OsString {
    match dirs.config {
        Some(file) => path_option("defaults-file", file),
        None => "--no-defaults".into(),
    }
}

fn path_option(key: &str, path: &Path) -> OsString {
    let mut o = OsString::from(format!("--{key}="));
    o.push(path);
    o
}

impl Engine for MariaDb {
    fn flavor(&self) -> Flavor {
        Flavor::MariaDb
    }

    fn service_user(&self) -> &'static str {
        "mysql"
    }

    fn locate(&self, basedir: Option<&Path>) -> Result<Binaries, String> {
        let names = Names {
            server: &["mariadbd", "mysqld"],
            init: &["mariadb-install-db", "mysql_install_db"],
            client: &["mariadb", "mysql"],
        };
        let system = [
            "/usr/sbin",
            "/usr/local/sbin",
            "/usr/local/mysql/bin",
            "/usr/local/mariadb/bin",
        ];
        binaries::locate(&names, basedir, system.iter().map(PathBuf::from).collect())
    }

    /// mariadb-install-db with root reachable over TCP without a password.
    /// The settings go to the bootstrap server too (some, like
    /// innodb_page_size, shape the files).
    fn init_args(&self, dirs: &Dirs, settings: &[(String, String)]) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec![defaults_file(dirs)];
        args.extend(dirs.basedir.map(|b| path_option("basedir", b)));
        args.push(path_option("datadir", dirs.data));
        args.push(path_option("tmpdir", dirs.tmp));
        args.push("--auth-root-authentication-method=normal".into());
        args.push("--skip-test-db".into());
        args.extend(options(dirs, settings));
        args
    }

    fn server_args(&self, dirs: &Dirs, port: u16, settings: &[(String, String)]) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec![defaults_file(dirs)];
        args.extend(dirs.basedir.map(|b| path_option("basedir", b)));
        args.extend(options(dirs, settings));
        // Last, so that settings cannot move the server from where we look.
        args.push(path_option("datadir", dirs.data));
        args.push(path_option("tmpdir", dirs.tmp));
        args.push(path_option("socket", &self.socket(dirs.run, port)));
        args.push(path_option("pid-file", &dirs.run.join("mariadbd.pid")));
        args.push(format!("--port={port}").into());
        args.push("--bind-address=127.0.0.1".into());
        args
    }

    fn socket(&self, run: &Path, _port: u16) -> PathBuf {
        run.join("mariadbd.sock")
    }

    /// The socket appears once the server listens (we remove stale ones
    /// before starting); clients that come early wait in the backlog.
    fn is_ready(&self, dirs: &Dirs, port: u16, _pid: u32) -> bool {
        self.socket(dirs.run, port).exists()
    }

    fn setup(&self, port: u16) -> (Vec<OsString>, Option<&'static str>) {
        let args = [
            "--no-defaults",
            "--protocol=tcp",
            "--host=127.0.0.1",
            &format!("--port={port}"),
            "--user=root",
            "--connect-timeout=5",
            "--batch",
            "--skip-column-names",
            "--execute=CREATE DATABASE IF NOT EXISTS test; SELECT VERSION();",
        ];
        (args.iter().map(OsString::from).collect(), None)
    }

    fn stop_signal(&self) -> libc::c_int {
        libc::SIGTERM
    }

    fn url(&self, port: u16) -> String {
        format!("mysql://root@127.0.0.1:{port}/test")
    }
}
