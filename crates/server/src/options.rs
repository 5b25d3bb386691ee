//! How to start a server: [`ServerOptions`], given to
//! [`Server::start`](crate::Server::start).

use crate::Flavor;
use std::path::PathBuf;

#[derive(Clone, Debug)]
pub struct ServerOptions {
    pub flavor: Flavor,
    /// Where the binaries are: a directory with bin/ (sbin/, scripts/) or
    /// the binaries themselves. `None`: PATH and the usual system places.
    pub basedir: Option<PathBuf>,
    /// `None`: a fresh directory, removed when the server is dropped.
    /// `Some`: used and kept; initialized first if missing or empty.
    pub datadir: Option<PathBuf>,
    /// `None`: a free port, chosen for us.
    pub port: Option<u16>,
    /// Server settings, after (and over) our defaults: MariaDB gets
    /// `--key=value` (`--key` if the value is empty), also while its data
    /// directory is initialized; PostgreSQL gets `-c key=value`.
    pub settings: Vec<(String, String)>,
    /// A my.cnf (MariaDB: `--defaults-file`) or postgresql.conf (PostgreSQL:
    /// `config_file`) that the server user can read. It replaces our sizing
    /// defaults; `settings` still win over it.
    pub config_file: Option<PathBuf>,
    /// CPUs the server may run on; set before it starts, so that all its
    /// threads and processes inherit them. `None`: wherever we may run.
    pub cpus: Option<Vec<usize>>,
    /// Where the socket, pid file, private tmp, log (and the data, when
    /// `datadir` is `None`) go; created if missing and kept. `None`: a
    /// temporary directory, removed when the server is dropped.
    pub workdir: Option<PathBuf>,
    /// The server outlives this process: it gets a session of its own and no
    /// parent-death signal, and dropping the [`Server`](crate::Server)
    /// leaves it running (stop it by pid:
    /// [`stop_process`](crate::managed::stop_process)). Meant with a
    /// `workdir`.
    pub detached: bool,
}

impl ServerOptions {
    pub fn new(flavor: Flavor) -> ServerOptions {
        ServerOptions {
            flavor,
            basedir: None,
            datadir: None,
            port: None,
            settings: Vec::new(),
            config_file: None,
            cpus: None,
            workdir: None,
            detached: false,
        }
    }
}
