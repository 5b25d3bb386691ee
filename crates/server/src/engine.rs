//! What differs between flavors, as the [`Engine`] trait (implemented in
//! `mariadb.rs` and `postgres.rs`), and [`Dirs`], where a server's files
//! are.

use crate::Flavor;
use crate::binaries::Binaries;
use crate::{mariadb, postgres};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

impl Flavor {
    /// What this flavor's server needs: its [`Engine`].
    pub(crate) fn engine(self) -> &'static dyn Engine {
        match self {
            Flavor::MariaDb => &mariadb::MariaDb,
            Flavor::Postgres => &postgres::Postgres,
        }
    }
}

/// Where a server's files are.
pub(crate) struct Dirs<'a> {
    pub data: &'a Path,
    /// Socket and pid files.
    pub run: &'a Path,
    /// Private temporary files: a starting mariadbd deletes every `#sql*`
    /// file in its tmpdir, so a shared /tmp breaks servers starting together.
    pub tmp: &'a Path,
    pub basedir: Option<&'a Path>,
    /// The user's my.cnf or postgresql.conf, instead of our defaults.
    pub config: Option<&'a Path>,
}

/// What differs between flavors: one implementation per file, mariadb.rs
/// and postgres.rs. They only build arguments and read files; server.rs and
/// process.rs run things.
pub(crate) trait Engine: Sync {
    fn flavor(&self) -> Flavor;
    /// The system user the server runs as when we are root.
    fn service_user(&self) -> &'static str;
    fn locate(&self, basedir: Option<&Path>) -> Result<Binaries, String>;
    /// Arguments of the init tool, which fills an empty data directory.
    fn init_args(&self, dirs: &Dirs, settings: &[(String, String)]) -> Vec<OsString>;
    fn server_args(&self, dirs: &Dirs, port: u16, settings: &[(String, String)]) -> Vec<OsString>;
    fn socket(&self, run: &Path, port: u16) -> PathBuf;
    /// Whether server process `pid` accepts connections, judged from files.
    fn is_ready(&self, dirs: &Dirs, port: u16, pid: u32) -> bool;
    /// Client arguments (and stdin) that create database `test` if missing
    /// and print the server version as the last line.
    fn setup(&self, port: u16) -> (Vec<OsString>, Option<&'static str>);
    fn stop_signal(&self) -> libc::c_int;
    fn url(&self, port: u16) -> String;
}
