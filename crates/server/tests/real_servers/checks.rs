//! The same checks for both flavors, with real servers: `mariadb` and
//! `postgres` call each for their flavor. A machine without a flavor's
//! binaries skips its tests with a message, unless DBMETER_REQUIRE_SERVERS
//! is set (CI).

use std::net::TcpListener;
use std::time::Instant;

use dbmeter_server::{Flavor, Server, ServerError, ServerOptions};
use dbmeter_testkit::servers::{ask as sql, launch as start, options as with};

pub fn starts_and_answers(flavor: Flavor) {
    let server = start(&ServerOptions::new(flavor));
    let version = sql(&server, "SELECT version()");
    assert!(!server.version().is_empty());
    assert!(
        version.contains(&server.version()),
        "{version:?} vs {:?}",
        server.version()
    );
    let port = server.port();
    assert!(port != 3306 && port != 5432);
    match flavor {
        Flavor::MariaDb => {
            assert_eq!(server.url(), format!("mysql://root@127.0.0.1:{port}/test"));
            assert_eq!(sql(&server, "SELECT @@max_connections"), "2000");
            assert_eq!(
                sql(&server, "SELECT @@innodb_buffer_pool_size"),
                (64 << 20).to_string()
            );
            assert_eq!(sql(&server, "SELECT @@local_infile"), "1");
        }
        Flavor::Postgres => {
            assert_eq!(
                server.url(),
                format!("postgres://postgres@127.0.0.1:{port}/test")
            );
            assert_eq!(sql(&server, "SHOW max_connections"), "1100");
            assert_eq!(sql(&server, "SHOW shared_buffers"), "64MB");
            assert_eq!(sql(&server, "SHOW server_encoding"), "UTF8");
        }
    }
    assert!(server.socket().exists(), "{}", server.socket().display());
    assert!(server.log_path().exists());
    assert!(pid_alive(server.pid()));
}

pub fn restart_keeps_data(flavor: Flavor) {
    let mut server = start(&ServerOptions::new(flavor));
    sql(&server, "CREATE TABLE kept (id INT PRIMARY KEY)");
    sql(&server, "INSERT INTO kept VALUES (1), (2), (3)");
    let (port, pid) = (server.port(), server.pid());
    let t = Instant::now();
    server.restart().unwrap_or_else(|e| panic!("{e}"));
    eprintln!("{flavor} restarted in {:.2} s", t.elapsed().as_secs_f64());
    assert_eq!(server.port(), port);
    assert_ne!(server.pid(), pid);
    assert!(!pid_alive(pid));
    assert_eq!(sql(&server, "SELECT count(*) FROM kept"), "3");
}

pub fn kill_then_restart_recovers(flavor: Flavor) {
    let mut server = start(&ServerOptions::new(flavor));
    sql(&server, "CREATE TABLE crashed (id INT PRIMARY KEY)");
    sql(&server, "INSERT INTO crashed VALUES (1), (2)");
    let pid = server.pid();
    server.kill();
    assert!(!pid_alive(pid));
    server.restart().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(sql(&server, "SELECT count(*) FROM crashed"), "2");
}

pub fn stop_is_clean_and_idempotent(flavor: Flavor) {
    let mut server = start(&ServerOptions::new(flavor));
    let pid = server.pid();
    let t = Instant::now();
    server.stop().unwrap_or_else(|e| panic!("{e}"));
    eprintln!("{flavor} stopped in {:.2} s", t.elapsed().as_secs_f64());
    assert!(!pid_alive(pid));
    server.stop().expect("stopping twice is fine");
    let log = std::fs::read_to_string(server.log_path()).unwrap();
    let clean = match flavor {
        Flavor::MariaDb => "Shutdown complete",
        Flavor::Postgres => "database system is shut down",
    };
    assert!(log.contains(clean), "no {clean:?} in the log:\n{log}");
}

pub fn port_in_use_is_a_clear_error(flavor: Flavor) {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let opts = ServerOptions {
        port: Some(port),
        ..ServerOptions::new(flavor)
    };
    match Server::start(&opts) {
        Err(e @ ServerError::PortInUse(p)) => {
            assert_eq!(p, port);
            assert_eq!(
                e.to_string(),
                format!("port {port} on 127.0.0.1 is already in use")
            );
        }
        Err(e) => panic!("wrong error: {e}"),
        Ok(s) => panic!("started on taken port {}", s.port()),
    }
}

pub fn bad_setting_quotes_the_log(flavor: Flavor) {
    let err = match Server::start(&with(flavor, &[("no_such_option", "1")])) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("started with no_such_option=1"),
    };
    eprintln!("the error: {err}");
    assert!(!err.contains('\n'), "not one line: {err}");
    assert!(err.contains("no_such_option"), "{err}");
    let says = match flavor {
        Flavor::MariaDb => "unknown variable",
        Flavor::Postgres => "unrecognized configuration parameter",
    };
    assert!(err.contains(says), "{err}");
}

pub fn two_at_once(flavor: Flavor) {
    let a = start(&ServerOptions::new(flavor));
    let b = start(&with(flavor, &[("max_connections", "123")]));
    assert_ne!(a.port(), b.port());
    assert_ne!(a.socket(), b.socket());
    sql(&a, "CREATE TABLE only_in_a (id INT)");
    assert_eq!(max_connections_of(&b), "123");
    let in_b = match flavor {
        Flavor::MariaDb => {
            "SELECT count(*) FROM information_schema.tables WHERE table_name = 'only_in_a'"
        }
        Flavor::Postgres => "SELECT count(*) FROM pg_tables WHERE tablename = 'only_in_a'",
    };
    assert_eq!(sql(&b, in_b), "0");
}

fn max_connections_of(server: &Server) -> String {
    match server.flavor() {
        Flavor::MariaDb => sql(server, "SELECT @@max_connections"),
        Flavor::Postgres => sql(server, "SHOW max_connections"),
    }
}

pub fn given_datadir_is_kept_and_reused(flavor: Flavor) {
    let keep = tempfile::tempdir().unwrap();
    let datadir = keep.path().join("data");
    let opts = ServerOptions {
        datadir: Some(datadir.clone()),
        ..ServerOptions::new(flavor)
    };
    let scratch;
    {
        let server = start(&opts);
        assert_eq!(server.datadir(), datadir);
        sql(&server, "CREATE TABLE survivor (id INT)");
        scratch = server.log_path();
    }
    assert!(!scratch.exists(), "our scratch dir is removed on drop");
    assert!(
        std::fs::read_dir(&datadir).unwrap().next().is_some(),
        "the datadir is kept"
    );
    let server = start(&opts);
    assert_eq!(sql(&server, "SELECT count(*) FROM survivor"), "0");
}

fn pid_alive(pid: u32) -> bool {
    // A zombie still answers kill(0); look at its state instead.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            s.rsplit_once(')')
                .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(false)
}
