//! Throwaway MariaDB and PostgreSQL servers for end-to-end tests, and a
//! way to ask them questions with their own client programs.

use dbmeter_server::{Flavor, Server, ServerOptions, available};
use std::process::Command;

/// A started server, or None (after saying why) on a machine without the
/// flavor's binaries. With DBMETER_REQUIRE_SERVERS set (CI), a missing
/// server is a failure instead.
pub fn start(flavor: Flavor) -> Option<Server> {
    start_with(flavor, &[])
}

/// [`start`] with server settings (`key`, `value`).
pub fn start_with(flavor: Flavor, settings: &[(&str, &str)]) -> Option<Server> {
    if !can_run(flavor) {
        return None;
    }
    let mut opts = ServerOptions::new(flavor);
    opts.settings = settings
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Some(Server::start(&opts).unwrap_or_else(|e| panic!("{e}")))
}

/// The server's own client, set to run `sql` on database `test` as the
/// administrator and print bare values.
pub fn client(server: &Server, sql: &str) -> Command {
    let port = server.port().to_string();
    let mut c = match server.flavor() {
        Flavor::MariaDb => Command::new("mariadb"),
        Flavor::Postgres => Command::new("psql"),
    };
    match server.flavor() {
        Flavor::MariaDb => c.args([
            "-h127.0.0.1",
            "-P",
            &port,
            "-uroot",
            "test",
            "-N",
            "-B",
            "-e",
            sql,
        ]),
        Flavor::Postgres => c.args([
            "-h",
            "127.0.0.1",
            "-p",
            &port,
            "-U",
            "postgres",
            "-d",
            "test",
            "-tAc",
            sql,
        ]),
    };
    c
}

/// The server's answer to `sql` (first column of the first row), via its
/// client; Err with the client's message when it fails.
pub fn try_ask(server: &Server, sql: &str) -> Result<String, String> {
    let out = client(server, sql)
        .output()
        .map_err(|e| format!("cannot run the client: {e}"))?;
    if !out.status.success() {
        return Err(format!("{sql}: {}", String::from_utf8_lossy(&out.stderr)));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The server's answer to `sql` (first column of the first row), via its client.
pub fn ask(server: &Server, sql: &str) -> String {
    try_ask(server, sql).unwrap_or_else(|e| panic!("{e}"))
}

/// psql on database `db`: every row, values separated by `|`.
pub fn psql(server: &Server, db: &str, sql: &str) -> String {
    let out = Command::new("psql")
        .args(["-h", "127.0.0.1", "-p", &server.port().to_string()])
        .args(["-U", "postgres", "-d", db, "-tAc", sql])
        .output()
        .unwrap_or_else(|e| panic!("psql: {e}"));
    assert!(
        out.status.success(),
        "{sql}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

pub fn ask_n(server: &Server, sql: &str) -> i64 {
    let a = ask(server, sql);
    a.parse().unwrap_or_else(|_| panic!("{sql} gave '{a}'"))
}

/// False (after saying why) when this machine cannot run `flavor`; a
/// failure instead with DBMETER_REQUIRE_SERVERS set.
pub fn can_run(flavor: Flavor) -> bool {
    if available(flavor) {
        return true;
    }
    let why = format!("{flavor} binaries or service user not found");
    if std::env::var_os("DBMETER_REQUIRE_SERVERS").is_some() {
        panic!("DBMETER_REQUIRE_SERVERS is set, but {why}");
    }
    eprintln!("skipping: {why}");
    false
}
