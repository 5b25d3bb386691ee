//! Targets completed as the servers' own clients complete them: libpq's
//! PG* variables, ~/.pgpass, pg_service.conf; the MySQL clients'
//! localhost-means-socket, MYSQL_* variables, ~/.my.cnf and
//! --defaults-file. Each test runs dbmeter with an environment of its own
//! (only PATH, HOME and what the case sets) against throwaway servers, and
//! checks what the server saw.

use crate::common::*;
use dbmeter_server::{Flavor, Server};
use dbmeter_testkit::servers::{ask, ask_n, ask_on as psql, start, start_with};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// dbmeter with `args`, HOME set to `home` and nothing else from this
/// process's environment but PATH; `vars` on top.
fn dbmeter(s: &Scratch, home: &Path, vars: &[(&str, &str)], args: &[&str]) -> Run {
    let mut c = s.cmd(args);
    c.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("DBMETER_HOME", s.path("dbmeter-home"))
        // Never the machine's pg_service.conf.
        .env("PGSYSCONFDIR", home.join("no-sysconf"))
        .stdin(std::process::Stdio::null());
    for (k, v) in vars {
        c.env(k, v);
    }
    s.output(c)
}

fn ok(r: &Run, what: &str) {
    assert_eq!(r.code, 0, "{what}:\n{}\n{}", r.stdout, r.stderr);
    assert!(!r.stderr.contains("panicked"), "{what}: {}", r.stderr);
}

/// Fails with exit `code` and one line on standard error containing
/// `needle` (lowercase).
fn fails(r: &Run, code: i32, what: &str, needle: &str) {
    assert_eq!(
        r.code, code,
        "{what} should fail:\n{}\n{}",
        r.stdout, r.stderr
    );
    let err = r.stderr.trim();
    assert_eq!(err.lines().count(), 1, "{what}: one line expected:\n{err}");
    assert!(
        err.to_lowercase().contains(needle),
        "{what}: '{needle}' not in: {err}"
    );
}

/// A fresh home directory `name` in the scratch directory.
fn home(s: &Scratch, name: &str) -> PathBuf {
    let h = s.path(name);
    std::fs::create_dir_all(&h).unwrap();
    h
}

fn write(path: &Path, text: &str, mode: u32) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

const PREPARE: &[&str] = &[
    "prepare",
    "oltp_point_select",
    "--tables=1",
    "--table-size=10",
];
const RUN: &[&str] = &[
    "run",
    "oltp_point_select",
    "--tables=1",
    "--table-size=10",
    "--events=10",
    "--time=0",
    "--format=json",
];

fn with(base: &[&str], more: &[&str]) -> Vec<String> {
    base.iter().chain(more).map(|x| x.to_string()).collect()
}

fn args(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// The target's URL as the run's JSON document records it.
fn target_url(r: &Run) -> String {
    r.json()["target"]["url"].as_str().unwrap_or("").to_string()
}

// ---------------------------------------------------------------- PostgreSQL

fn server_log(server: &Server) -> String {
    std::fs::read_to_string(server.log_path()).unwrap_or_default()
}

/// A PostgreSQL server where `pwuser` needs its password (socket and TCP)
/// and every other user is trusted; connections are logged with their
/// user, database and application_name.
fn pg_server(s: &Scratch) -> Option<Server> {
    let hba = s.path("pg_hba.conf");
    write(
        &hba,
        "local all pwuser scram-sha-256\n\
         host all pwuser 127.0.0.1/32 scram-sha-256\n\
         local all all trust\n\
         host all all 127.0.0.1/32 trust\n",
        0o644,
    );
    let server = start_with(
        Flavor::Postgres,
        &[
            ("hba_file", hba.to_str().unwrap()),
            ("log_connections", "on"),
        ],
    )?;
    for sql in [
        "CREATE ROLE pwuser LOGIN PASSWORD 'pgpw'",
        "CREATE DATABASE envdb",
        "CREATE DATABASE pwdb OWNER pwuser",
        "CREATE DATABASE svcdb",
    ] {
        ask(&server, sql);
    }
    Some(server)
}

#[test]
fn postgres_environment_variables() {
    let s = Scratch::new();
    let Some(server) = pg_server(&s) else {
        return;
    };
    let h = home(&s, "home");
    let port = server.port().to_string();
    let dir = server
        .socket()
        .parent()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    // PGHOST/PGPORT/PGUSER/PGDATABASE/PGAPPNAME complete postgres://.
    let env = [
        ("PGHOST", "127.0.0.1"),
        ("PGPORT", port.as_str()),
        ("PGUSER", "postgres"),
        ("PGDATABASE", "envdb"),
        ("PGAPPNAME", "conv-env"),
    ];
    ok(
        &dbmeter(&s, &h, &env, &args(&with(PREPARE, &["--db=postgres://"]))),
        "prepare by PG* variables",
    );
    assert_eq!(psql(&server, "envdb", "SELECT count(*) FROM sbtest1"), "10");
    assert!(
        server_log(&server).contains("user=postgres database=envdb application_name=conv-env"),
        "no connection of conv-env in the log"
    );
    // PGHOST as a socket directory.
    let mut env = env;
    env[0] = ("PGHOST", dir.as_str());
    let r = dbmeter(&s, &h, &env, &args(&with(RUN, &["--db=postgres://"])));
    ok(&r, "run through the socket directory in PGHOST");
    assert_eq!(
        target_url(&r),
        format!("postgres://postgres@localhost:{port}/envdb?socket={dir}")
    );
    // The URL beats the environment.
    let url = format!("--db=postgres://postgres@127.0.0.1:{port}/test");
    let r = dbmeter(&s, &h, &env, &args(&with(RUN, &[&url])));
    assert_eq!(r.code, 1, "no tables in test: {}", r.stderr);
    // sysbench's options: only those given beat the environment.
    let r = dbmeter(&s, &h, &env, &args(&with(RUN, &["--db-driver=pgsql"])));
    ok(&r, "--db-driver=pgsql with PG* variables");
    assert!(
        target_url(&r).contains("postgres@localhost"),
        "{}",
        target_url(&r)
    );
    let r = dbmeter(
        &s,
        &h,
        &env,
        &args(&with(RUN, &["--db-driver=pgsql", "--pgsql-db=svcdb"])),
    );
    assert_eq!(r.code, 1, "--pgsql-db=svcdb has no tables: {}", r.stderr);
    assert!(r.stderr.contains("svcdb"), "{}", r.stderr);
}

#[test]
fn postgres_password_file() {
    let s = Scratch::new();
    let Some(server) = pg_server(&s) else {
        return;
    };
    let h = home(&s, "home");
    let port = server.port().to_string();
    let dir = server
        .socket()
        .parent()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let url = format!("--db=postgres://pwuser@127.0.0.1:{port}/pwdb");
    let prepare = with(PREPARE, &[&url]);
    // No password anywhere: refused.
    let r = dbmeter(&s, &h, &[], &args(&prepare));
    fails(&r, 1, "no password", "password");
    // ~/.pgpass, private: used (escapes, wildcards, first match wins).
    let pgpass = h.join(".pgpass");
    write(
        &pgpass,
        &format!(
            "# dbmeter test\n127.0.0.1:{port}:other:pwuser:wrong\n\
             127.0.0.1:{port}:pwdb:pwuser:pgpw\n*:*:*:*:wrong\n\
             localhost:*:pwdb:pwuser:pgpw\n"
        ),
        0o600,
    );
    let r = dbmeter(&s, &h, &[], &args(&prepare));
    ok(&r, "password from ~/.pgpass");
    assert!(!r.stderr.contains("pgpw") && !r.stdout.contains("pgpw"));
    assert_eq!(
        psql(
            &server,
            "pwdb",
            "SELECT tableowner FROM pg_tables WHERE tablename = 'sbtest1'"
        ),
        "pwuser"
    );
    // Over the socket, the line for host "localhost" (libpq's rule); the
    // wildcard line before it does not match the database.
    write(
        &pgpass,
        &format!("127.0.0.1:*:*:*:wrong\nlocalhost:{port}:pwdb:pwuser:pgpw\n"),
        0o600,
    );
    let env = [("PGHOST", dir.as_str()), ("PGPORT", port.as_str())];
    ok(
        &dbmeter(
            &s,
            &h,
            &env,
            &args(&with(RUN, &["--db=postgres://pwuser@/pwdb"])),
        ),
        "pgpass's localhost line over the socket",
    );
    // PGPASSFILE names another file; PGPASSWORD comes before any file.
    let other = s.path("pgpass-elsewhere");
    write(&other, &format!("*:{port}:pwdb:pwuser:pgpw\n"), 0o600);
    let other_s = other.to_string_lossy().into_owned();
    ok(
        &dbmeter(
            &s,
            &h,
            &[("PGPASSFILE", other_s.as_str())],
            &args(&with(RUN, &[&url])),
        ),
        "PGPASSFILE",
    );
    let r = dbmeter(
        &s,
        &h,
        &[("PGPASSWORD", "nope")],
        &args(&with(RUN, &[&url])),
    );
    fails(
        &r,
        1,
        "PGPASSWORD before ~/.pgpass",
        "authentication failed",
    );
    // Readable by others: ignored, with libpq's warning, on one line.
    write(&pgpass, &format!("*:{port}:pwdb:pwuser:pgpw\n"), 0o644);
    let r = dbmeter(&s, &h, &[], &args(&with(RUN, &[&url])));
    assert_eq!(r.code, 1, "{}", r.stderr);
    let warning: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.contains("group or world access"))
        .collect();
    assert_eq!(warning.len(), 1, "{}", r.stderr);
    assert!(
        warning[0].contains(&pgpass.display().to_string()),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("password"), "{}", r.stderr);
}

#[test]
fn postgres_service_file() {
    let s = Scratch::new();
    let Some(server) = pg_server(&s) else {
        return;
    };
    let h = home(&s, "home");
    let port = server.port();
    write(
        &h.join(".pg_service.conf"),
        &format!(
            "# services\n[bench]\nhost=127.0.0.1\nport={port}\nuser=postgres\ndbname=svcdb\napplication_name=conv-svc\n\
             [secret]\nhost=127.0.0.1\nport={port}\nuser=pwuser\npassword=pgpw\ndbname=pwdb\n"
        ),
        0o644,
    );
    ok(
        &dbmeter(
            &s,
            &h,
            &[],
            &args(&with(PREPARE, &["--db=postgres://?service=bench"])),
        ),
        "service=bench",
    );
    assert_eq!(psql(&server, "svcdb", "SELECT count(*) FROM sbtest1"), "10");
    assert!(
        server_log(&server).contains("user=postgres database=svcdb application_name=conv-svc"),
        "no connection of conv-svc in the log"
    );
    // PGSERVICE; the service beats PG* variables (libpq reads it first).
    let r = dbmeter(
        &s,
        &h,
        &[
            ("PGSERVICE", "bench"),
            ("PGDATABASE", "envdb"),
            ("PGPORT", "1"),
        ],
        &args(&with(RUN, &["--db=postgres://"])),
    );
    ok(&r, "PGSERVICE");
    assert_eq!(
        target_url(&r),
        format!("postgres://postgres@127.0.0.1:{port}/svcdb")
    );
    // A password in the service; PGSERVICEFILE elsewhere.
    ok(
        &dbmeter(
            &s,
            &h,
            &[],
            &args(&with(PREPARE, &["--db=postgres://?service=secret"])),
        ),
        "a service with a password",
    );
    let moved = s.path("services.conf");
    std::fs::rename(h.join(".pg_service.conf"), &moved).unwrap();
    let moved_s = moved.to_string_lossy().into_owned();
    ok(
        &dbmeter(
            &s,
            &h,
            &[("PGSERVICEFILE", moved_s.as_str())],
            &args(&with(RUN, &["--db=postgres://?service=bench"])),
        ),
        "PGSERVICEFILE",
    );
    // An unknown service: one line naming the files searched.
    let r = dbmeter(
        &s,
        &h,
        &[],
        &args(&with(RUN, &["--db=postgres://?service=nope"])),
    );
    fails(&r, 2, "unknown service", "\"nope\"");
    assert!(r.stderr.contains(".pg_service.conf"), "{}", r.stderr);
    assert!(
        r.stderr.contains("no-sysconf/pg_service.conf"),
        "{}",
        r.stderr
    );
}

#[test]
fn postgres_store_follows_libpq() {
    let Some(server) = start(Flavor::Postgres) else {
        return;
    };
    ask(&server, "CREATE DATABASE storedb");
    let s = Scratch::new();
    let h = home(&s, "home");
    let port = server.port().to_string();
    let env = [
        ("PGHOST", "127.0.0.1"),
        ("PGPORT", port.as_str()),
        ("PGUSER", "postgres"),
        ("PGDATABASE", "storedb"),
    ];
    let r = dbmeter(
        &s,
        &h,
        &env,
        &[
            "run",
            "oltp_point_select",
            "--time=0",
            "--events=100",
            "--store=postgres://",
        ],
    );
    ok(&r, "--store=postgres:// by PG* variables");
    assert!(r.stderr.contains("stored as run #1"), "{}", r.stderr);
    let n = psql(&server, "storedb", "SELECT count(*) FROM documents");
    assert_eq!(n, "1");
    let r = dbmeter(
        &s,
        &h,
        &env,
        &["results", "list", "--store=postgres://", "--format=csv"],
    );
    ok(&r, "results list");
    assert_eq!(csv_rows(&r.stdout).len(), 1, "{}", r.stdout);
}

// ---------------------------------------------------------- MariaDB / MySQL

/// A MariaDB server with `sock`@localhost and `tcp`@127.0.0.1, and its
/// connections logged in mysql.general_log.
fn mariadb_server() -> Option<Server> {
    let server = start_with(
        Flavor::MariaDb,
        &[("general_log", "1"), ("log_output", "TABLE")],
    )?;
    ask(
        &server,
        "CREATE USER sock@localhost IDENTIFIED BY 'sockpw'; GRANT ALL ON *.* TO sock@localhost; \
         CREATE USER tcp@'127.0.0.1' IDENTIFIED BY 'tcppw'; GRANT ALL ON *.* TO tcp@'127.0.0.1'; \
         CREATE DATABASE appdb",
    );
    Some(server)
}

/// How many times `who` (user@host) connected, by `how` (Socket or TCP/IP).
fn logins(server: &Server, who: &str, how: &str) -> i64 {
    ask_n(
        server,
        &format!(
            "SELECT COUNT(*) FROM mysql.general_log WHERE command_type = 'Connect' \
             AND argument LIKE '{who} %using {how}'"
        ),
    )
}

#[test]
fn mariadb_localhost_is_the_socket() {
    let Some(server) = mariadb_server() else {
        return;
    };
    let s = Scratch::new();
    let h = home(&s, "home");
    let port = server.port().to_string();
    let sock = server.socket().to_string_lossy().into_owned();
    let root = format!("--db=mysql://root@127.0.0.1:{port}/test");
    ok(
        &dbmeter(&s, &h, &[], &args(&with(PREPARE, &[&root]))),
        "prepare",
    );

    // ?socket= with localhost.
    let url = format!("--db=mysql://sock:sockpw@localhost/test?socket={sock}");
    let r = dbmeter(&s, &h, &[], &args(&with(RUN, &[&url])));
    ok(&r, "sock@localhost by ?socket=");
    assert_eq!(
        target_url(&r),
        format!("mysql://sock:***@localhost:3306/test?socket={sock}")
    );
    // MYSQL_UNIX_PORT.
    let env = [("MYSQL_UNIX_PORT", sock.as_str())];
    let before = logins(&server, "sock@localhost", "Socket");
    ok(
        &dbmeter(
            &s,
            &h,
            &env,
            &args(&with(RUN, &["--db=mysql://sock:sockpw@localhost/test"])),
        ),
        "MYSQL_UNIX_PORT",
    );
    assert!(logins(&server, "sock@localhost", "Socket") > before);
    // sysbench's options: --mysql-host defaults to localhost, so the socket.
    ok(
        &dbmeter(
            &s,
            &h,
            &env,
            &args(&with(
                RUN,
                &[
                    "--mysql-user=sock",
                    "--mysql-password=sockpw",
                    "--mysql-db=test",
                ],
            )),
        ),
        "--mysql-* options by the socket",
    );
    // 127.0.0.1 is TCP, where 'sock'@'localhost' does not match (the
    // server skips name resolution), whatever MYSQL_UNIX_PORT says.
    let url = format!("--db=mysql://sock:sockpw@127.0.0.1:{port}/test");
    let r = dbmeter(&s, &h, &env, &args(&with(RUN, &[&url])));
    fails(&r, 1, "sock@localhost over TCP", "access denied");
    assert!(!r.stderr.contains("sockpw"), "{}", r.stderr);
    // protocol=tcp: localhost by TCP, the same refusal.
    let url = format!("--db=mysql://sock:sockpw@localhost:{port}/test?protocol=tcp");
    let r = dbmeter(&s, &h, &env, &args(&with(RUN, &[&url])));
    fails(&r, 1, "localhost with protocol=tcp", "access denied");
    // 'tcp'@'127.0.0.1' the other way round.
    let url = format!("--db=mysql://tcp:tcppw@127.0.0.1:{port}/test");
    ok(
        &dbmeter(&s, &h, &env, &args(&with(RUN, &[&url]))),
        "tcp@127.0.0.1",
    );
    assert!(logins(&server, "tcp@127.0.0.1", "TCP/IP") >= 1);
}

#[test]
fn mariadb_option_files_and_environment() {
    let Some(server) = mariadb_server() else {
        return;
    };
    let s = Scratch::new();
    let h = home(&s, "home");
    let port = server.port().to_string();
    let sock = server.socket().to_string_lossy().into_owned();
    let root = format!("--db=mysql://root@127.0.0.1:{port}/test");
    ok(
        &dbmeter(&s, &h, &[], &args(&with(PREPARE, &[&root]))),
        "prepare",
    );

    // ~/.my.cnf [client]: user, quoted password, socket.
    write(
        &h.join(".my.cnf"),
        &format!(
            "[mysqld]\nuser=mysql\n\n[client]\nuser = sock\npassword = \"sockpw\"  # quoted\nsocket={sock}\n"
        ),
        0o600,
    );
    let before = logins(&server, "sock@localhost", "Socket");
    let r = dbmeter(&s, &h, &[], &args(&with(RUN, &["--db=mysql://"])));
    ok(&r, "~/.my.cnf");
    assert_eq!(
        target_url(&r),
        format!("mysql://sock:***@localhost:3306/test?socket={sock}")
    );
    assert!(logins(&server, "sock@localhost", "Socket") > before);
    // The option file's password beats MYSQL_PWD (as in the clients).
    let r = dbmeter(
        &s,
        &h,
        &[("MYSQL_PWD", "wrong")],
        &args(&with(RUN, &["--db=mysql://"])),
    );
    ok(&r, "~/.my.cnf password over MYSQL_PWD");
    // The URL beats the option file.
    let r = dbmeter(
        &s,
        &h,
        &[],
        &args(&with(RUN, &["--db=mysql://sock:wrong@localhost/test"])),
    );
    fails(&r, 1, "URL password", "access denied");

    // --defaults-file replaces ~/.my.cnf.
    let other = s.path("bench.cnf");
    write(
        &other,
        &format!(
            "[client]\nuser=tcp\npassword=tcppw\nhost=127.0.0.1\nport={port}\ndatabase=appdb\n"
        ),
        0o600,
    );
    let df = format!("--defaults-file={}", other.display());
    ok(
        &dbmeter(&s, &h, &[], &args(&with(PREPARE, &["--db=mysql://", &df]))),
        "--defaults-file",
    );
    assert_eq!(ask_n(&server, "SELECT COUNT(*) FROM appdb.sbtest1"), 10);
    assert!(logins(&server, "tcp@127.0.0.1", "TCP/IP") >= 1);
    // Also as a URL parameter, and with sysbench's options.
    let url = format!("--db=mysql://?defaults-file={}", other.display());
    ok(
        &dbmeter(&s, &h, &[], &args(&with(RUN, &[&url]))),
        "defaults-file=",
    );
    ok(
        &dbmeter(&s, &h, &[], &args(&with(RUN, &["--db-driver=mysql", &df]))),
        "--db-driver=mysql --defaults-file",
    );
    let r = dbmeter(
        &s,
        &h,
        &[],
        &args(&with(
            RUN,
            &["--db=mysql://", "--defaults-file=/nonexistent/my.cnf"],
        )),
    );
    fails(&r, 2, "missing --defaults-file", "/nonexistent/my.cnf");

    // MYSQL_HOST, MYSQL_TCP_PORT and MYSQL_PWD, with no option file.
    let bare = home(&s, "bare-home");
    let env = [
        ("MYSQL_HOST", "127.0.0.1"),
        ("MYSQL_TCP_PORT", port.as_str()),
        ("MYSQL_PWD", "tcppw"),
    ];
    let r = dbmeter(
        &s,
        &bare,
        &env,
        &args(&with(RUN, &["--db=mysql://tcp@/test"])),
    );
    ok(&r, "MYSQL_HOST/MYSQL_TCP_PORT/MYSQL_PWD");
    assert_eq!(
        target_url(&r),
        format!("mysql://tcp:***@127.0.0.1:{port}/test")
    );
}
