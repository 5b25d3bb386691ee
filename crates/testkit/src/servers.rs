//! Throwaway MariaDB and PostgreSQL servers (the `server` crate's: own
//! datadir, own port, removed on drop), or a skip, and questions asked
//! through the servers' own command-line clients.
//!
//! ```no_run
//! use dbmeter_server::Flavor;
//! use dbmeter_testkit::servers;
//!
//! let Some(server) = servers::start(Flavor::Postgres) else {
//!     return;
//! };
//! assert_eq!(servers::ask(&server, "SELECT 1"), "1");
//! ```

use crate::tools::Tool;
use crate::{Requirement, skip};
use dbmeter_server::{Flavor, Server, ServerOptions, available};
use std::process::Command;
use std::time::Instant;

/// The Debian package with the flavor's server.
pub fn server_package(flavor: Flavor) -> &'static str {
    match flavor {
        Flavor::MariaDb => "mariadb-server",
        Flavor::Postgres => "postgresql",
    }
}

/// The flavor's command-line client (`mariadb`, `psql`).
fn client_tool(flavor: Flavor) -> Tool {
    let (name, package, programs): (_, _, &'static [&'static str]) = match flavor {
        Flavor::MariaDb => ("the mariadb client", "mariadb-client", &["mariadb"]),
        Flavor::Postgres => ("psql", "postgresql-client", &["psql"]),
    };
    Tool::on_path_for(name, package, Requirement::Servers, programs)
}

/// True when this machine can start `flavor` and has its client; else
/// false after saying why the test skips (a panic instead when
/// DBMETER_REQUIRE_SERVERS is set).
pub fn can_run(flavor: Flavor) -> bool {
    let why = if !available(flavor) {
        // Starting says what exactly is missing (binaries, service user).
        let detail = match Server::start(&ServerOptions::new(flavor)) {
            Err(e) => e.to_string(),
            Ok(_) => "its binaries or service user were not found".to_string(),
        };
        format!(
            "{flavor} cannot start here (Debian package {}): {detail}",
            server_package(flavor)
        )
    } else if client_tool(flavor).find().is_none() {
        client_tool(flavor).missing()
    } else {
        return true;
    };
    skip(Requirement::Servers, &why);
    false
}

/// Server options for `flavor` with `settings` (name, value).
pub fn options(flavor: Flavor, settings: &[(&str, &str)]) -> ServerOptions {
    ServerOptions {
        settings: settings
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..ServerOptions::new(flavor)
    }
}

/// A started server, or None after [`can_run`] said why not.
pub fn start(flavor: Flavor) -> Option<Server> {
    start_opts(&ServerOptions::new(flavor))
}

/// [`start`] with server settings (name, value).
pub fn start_with(flavor: Flavor, settings: &[(&str, &str)]) -> Option<Server> {
    start_opts(&options(flavor, settings))
}

/// [`start`] with any options.
pub fn start_opts(opts: &ServerOptions) -> Option<Server> {
    can_run(opts.flavor).then(|| launch(opts))
}

/// Starts a server where [`can_run`] said yes; panics with the server's
/// error when it does not start.
pub fn launch(opts: &ServerOptions) -> Server {
    let t = Instant::now();
    let server = Server::start(opts).unwrap_or_else(|e| panic!("{e}"));
    eprintln!(
        "{} {} started on port {} in {:.2} s",
        server.flavor(),
        server.version(),
        server.port(),
        t.elapsed().as_secs_f64()
    );
    server
}

/// The server's own client, connected over TCP as the administrator to
/// database `db`, reading no option files, set to print bare values
/// (tab-separated for MariaDB, `|` for psql), with `sql` to run.
pub fn client_on(server: &Server, db: &str, sql: &str) -> Command {
    let port = server.port().to_string();
    match server.flavor() {
        Flavor::MariaDb => {
            let mut c = Command::new("mariadb");
            c.args(["--no-defaults", "-h127.0.0.1", "-P", &port, "-uroot"])
                .args(["-N", "-B", db, "-e", sql]);
            c
        }
        Flavor::Postgres => {
            let mut c = Command::new("psql");
            c.args(["-X", "-h", "127.0.0.1", "-p", &port, "-U", "postgres"])
                .args(["-d", db, "-tA", "-c", sql]);
            c
        }
    }
}

/// [`client_on`] database `test`.
pub fn client(server: &Server, sql: &str) -> Command {
    client_on(server, "test", sql)
}

/// What the client printed for `sql` on database `db`, trimmed; Err with
/// its message when it fails.
pub fn try_ask_on(server: &Server, db: &str, sql: &str) -> Result<String, String> {
    let out = client_on(server, db, sql)
        .output()
        .map_err(|e| format!("cannot run the client: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{sql}: {}(server log: {})",
            String::from_utf8_lossy(&out.stderr),
            server.log_path().display()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// [`try_ask_on`] database `test`.
pub fn try_ask(server: &Server, sql: &str) -> Result<String, String> {
    try_ask_on(server, "test", sql)
}

/// What the client printed for `sql` on database `test` (one value for a
/// one-value query); panics when the client fails.
pub fn ask(server: &Server, sql: &str) -> String {
    try_ask(server, sql).unwrap_or_else(|e| panic!("{e}"))
}

/// [`ask`] on database `db`.
pub fn ask_on(server: &Server, db: &str, sql: &str) -> String {
    try_ask_on(server, db, sql).unwrap_or_else(|e| panic!("{e}"))
}

/// [`ask`] for a number.
pub fn ask_n(server: &Server, sql: &str) -> i64 {
    let a = ask(server, sql);
    a.parse().unwrap_or_else(|_| panic!("{sql} gave '{a}'"))
}
