//! How a PostgreSQL server is initialized, started and set up.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use crate::Flavor;
use crate::binaries::{self, Binaries, Names};
use crate::engine::{Dirs, Engine};

pub(crate) struct Postgres;

/// Small, but enough connections for 1,024 benchmark users; fsync stays on.
/// `ServerOptions::settings` come after these and win.
const DEFAULTS: &[(&str, &str)] = &[
    ("shared_buffers", "64MB"),
    ("max_connections", "1100"),
    // The log goes to stderr, which is our log file.
    ("logging_collector", "off"),
];

fn option(key: &str, value: &str) -> [OsString; 2] {
    ["-c".into(), format!("{key}={value}").into()]
}

/// A client script: create database `test` if missing, print the version.
const SETUP: &str = "\
SELECT 'CREATE DATABASE test' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'test')\\gexec
SELECT current_setting('server_version');
";

impl Engine for Postgres {
    fn flavor(&self) -> Flavor {
        Flavor::Postgres
    }

    fn service_user(&self) -> &'static str {
        "postgres"
    }

    fn locate(&self, basedir: Option<&Path>) -> Result<Binaries, String> {
        let names = Names {
            server: &["postgres"],
            init: &["initdb"],
            client: &["psql"],
        };
        let mut system = binaries::versioned_dirs(Path::new("/usr/lib/postgresql"));
        system.push(PathBuf::from("/usr/local/pgsql/bin"));
        binaries::locate(&names, basedir, system)
    }

    /// Superuser `postgres`, trusted from anywhere (the server only listens
    /// on 127.0.0.1 and a private socket directory). UTF8 with the C locale,
    /// as benchmarks expect. `--no-sync` saves over a second per start; the
    /// server itself keeps fsync.
    fn init_args(&self, dirs: &Dirs, _settings: &[(String, String)]) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec!["-D".into(), dirs.data.into()];
        for a in [
            "--auth=trust",
            "--username=postgres",
            "--encoding=UTF8",
            "--locale=C",
            "--no-sync",
        ] {
            args.push(a.into());
        }
        args
    }

    fn server_args(&self, dirs: &Dirs, port: u16, settings: &[(String, String)]) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec!["-D".into(), dirs.data.into()];
        match dirs.config {
            // The user's file replaces postgresql.conf (and our sizing);
            // pg_hba.conf stays the data directory's.
            Some(file) => {
                let mut c = OsString::from("config_file=");
                c.push(file);
                args.extend(["-c".into(), c]);
                args.extend(option("logging_collector", "off"));
            }
            None => args.extend(DEFAULTS.iter().flat_map(|(k, v)| option(k, v))),
        }
        args.extend(settings.iter().flat_map(|(k, v)| option(k, v)));
        // Last, so that settings cannot move the server from where we look.
        args.extend(option("listen_addresses", "127.0.0.1"));
        args.extend([
            "-p".into(),
            port.to_string().into(),
            "-k".into(),
            dirs.run.into(),
        ]);
        args
    }

    fn socket(&self, run: &Path, port: u16) -> PathBuf {
        run.join(format!(".s.PGSQL.{port}"))
    }

    /// postmaster.pid names our process and says "ready" (its 8th line),
    /// as `pg_ctl -w` checks; polling with a client instead would log
    /// "the database system is starting up" errors.
    fn is_ready(&self, dirs: &Dirs, _port: u16, pid: u32) -> bool {
        let Ok(text) = fs::read_to_string(dirs.data.join("postmaster.pid")) else {
            return false;
        };
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        lines.first() == Some(&pid.to_string().as_str()) && lines.get(7) == Some(&"ready")
    }

    fn setup(&self, port: u16) -> (Vec<OsString>, Option<&'static str>) {
        let conn = format!(
            "host=127.0.0.1 port={port} user=postgres dbname=postgres sslmode=disable connect_timeout=5"
        );
        let args = [
            "--no-psqlrc",
            "--quiet",
            "--tuples-only",
            "--no-align",
            "--set=ON_ERROR_STOP=1",
            "--dbname",
            &conn,
            "--file=-",
        ];
        (args.iter().map(OsString::from).collect(), Some(SETUP))
    }

    /// SIGINT is PostgreSQL's "fast" shutdown (what `pg_ctl stop` does):
    /// it disconnects clients, where SIGTERM ("smart") would wait for them.
    fn stop_signal(&self) -> libc::c_int {
        libc::SIGINT
    }

    fn url(&self, port: u16) -> String {
        format!("postgres://postgres@127.0.0.1:{port}/test")
    }
}
