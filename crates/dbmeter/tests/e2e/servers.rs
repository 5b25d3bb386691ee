//! Every OLTP workload against real MariaDB and PostgreSQL servers that the
//! test starts itself; errors that restart events; a server restarted in
//! the middle of a run; bad targets.

use crate::common::*;
use dbmeter_server::{Flavor, Server};
use dbmeter_testkit::servers::{ask, ask_n, start, start_with};
use std::time::Duration;

fn db(server: &Server) -> String {
    format!("--db={}", server.url())
}

/// Runs a workload with a seed of its own: MySQL counts an UPDATE that
/// writes the value a row already has as changing nothing, and two runs
/// with one seed can write the same ids and values.
fn run(s: &Scratch, server: &Server, workload: &str, events: u64, extra: &[&str]) -> Run {
    static SEED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(11);
    let db = db(server);
    let ev = format!("--events={events}");
    let seed = format!(
        "--rand-seed={}",
        SEED.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    let mut args = vec![
        "run",
        workload,
        &db,
        "--table-size=1000",
        "--time=0",
        &ev,
        &seed,
    ];
    args.extend_from_slice(extra);
    s.ok(&args)
}

fn regex_false(server: &Server, col: &str, groups: usize) -> String {
    let re = format!("^([0-9]{{11}}-){{{}}}[0-9]{{11}}$", groups - 1);
    match server.flavor() {
        Flavor::MariaDb => format!("{col} NOT REGEXP '{re}'"),
        // CHAR(n) keeps its blank padding in PostgreSQL.
        Flavor::Postgres => format!("rtrim({col}) !~ '{re}'"),
    }
}

fn all_workloads(flavor: Flavor) {
    let Some(server) = start(flavor) else { return };
    let s = Scratch::new();
    let d = db(&server);
    let r = s.ok(&[
        "prepare",
        "oltp_read_write",
        &d,
        "--tables=2",
        "--table-size=1000",
        "--threads=2",
        "--rand-seed=5",
    ]);
    assert!(
        r.stdout.contains("Loaded 2000 rows in 2 tables"),
        "{}",
        r.stdout
    );
    for t in ["sbtest1", "sbtest2"] {
        assert_eq!(ask_n(&server, &format!("SELECT COUNT(*) FROM {t}")), 1000);
        assert_eq!(
            ask_n(&server, &format!("SELECT MAX(id) - MIN(id) FROM {t}")),
            999
        );
        assert_eq!(
            ask_n(
                &server,
                &format!("SELECT COUNT(*) FROM {t} WHERE k < 1 OR k > 1000")
            ),
            0
        );
        let bad = format!(
            "SELECT COUNT(*) FROM {t} WHERE {} OR {}",
            regex_false(&server, "c", 10),
            regex_false(&server, "pad", 5)
        );
        assert_eq!(ask_n(&server, &bad), 0, "{bad}");
    }
    let k_index = match flavor {
        Flavor::MariaDb => {
            "SELECT COUNT(*) FROM information_schema.statistics WHERE table_schema='test' AND index_name='k_1'"
        }
        Flavor::Postgres => "SELECT COUNT(*) FROM pg_indexes WHERE indexname='k_1'",
    };
    assert_eq!(ask_n(&server, k_index), 1);

    let r = run(&s, &server, "oltp_read_write", 100, &["--tables=2"]);
    assert_eq!(
        (r.stat("read:"), r.stat("write:"), r.stat("other:")),
        (1400, 400, 200)
    );
    let r = run(
        &s,
        &server,
        "oltp_read_write",
        100,
        &["--tables=2", "--db-ps-mode=disable"],
    );
    assert_eq!(
        (r.stat("read:"), r.stat("write:"), r.stat("other:")),
        (1400, 400, 200)
    );
    let r = run(&s, &server, "oltp_read_only", 50, &["--tables=2"]);
    assert_eq!(
        (r.stat("read:"), r.stat("write:"), r.stat("other:")),
        (700, 0, 100)
    );
    let r = run(&s, &server, "oltp_write_only", 50, &["--tables=2"]);
    assert_eq!(
        (r.stat("read:"), r.stat("write:"), r.stat("other:")),
        (0, 200, 100)
    );
    let r = run(
        &s,
        &server,
        "oltp_point_select",
        300,
        &["--tables=2", "--threads=4"],
    );
    assert_eq!(r.stat("read:"), 300);
    let before =
        ask_n(&server, "SELECT SUM(k) FROM sbtest1") + ask_n(&server, "SELECT SUM(k) FROM sbtest2");
    let r = run(
        &s,
        &server,
        "oltp_update_index",
        300,
        &["--tables=2", "--threads=4"],
    );
    assert_eq!(r.stat("write:"), 300);
    let after =
        ask_n(&server, "SELECT SUM(k) FROM sbtest1") + ask_n(&server, "SELECT SUM(k) FROM sbtest2");
    assert_eq!(after - before, 300);
    let r = run(&s, &server, "oltp_update_non_index", 200, &["--tables=2"]);
    assert_eq!(r.stat("write:"), 200);
    let r = run(&s, &server, "select_random_points", 100, &[]);
    assert_eq!(r.stat("read:"), 100);
    let r = run(&s, &server, "select_random_ranges", 100, &[]);
    assert_eq!(r.stat("read:"), 100);
    let rows = || ask_n(&server, "SELECT COUNT(*) FROM sbtest1");
    let r = run(&s, &server, "oltp_delete", 100, &[]);
    let deleted = r.stat("write:") as i64;
    assert_eq!(deleted + r.stat("other:") as i64, 100);
    assert_eq!(rows(), 1000 - deleted);
    // Generated ids (AUTO_INCREMENT / SERIAL continue after the loaded rows) and our own.
    let r = run(&s, &server, "oltp_insert", 100, &["--threads=2"]);
    assert_eq!(r.stat("write:"), 100);
    let r = run(&s, &server, "oltp_insert", 50, &["--auto-inc=off"]);
    assert_eq!(r.stat("write:"), 50);
    assert_eq!(rows(), 1150 - deleted);
    // Many connections for a while, with interval lines.
    let r = s.ok(&[
        "run",
        "oltp_read_write",
        &d,
        "--tables=2",
        "--table-size=1000",
        "--threads=16",
        "--time=2",
        "--report-interval=1",
    ]);
    assert!(r.stdout.contains("[ 1s ] thds: 16"), "{}", r.stdout);
    assert!(r.stat("transactions:") > 0);
    // --worker-threads is accepted (and ignored: the drivers block).
    let r = s.ok(&[
        "run",
        "oltp_point_select",
        &d,
        "--tables=2",
        "--table-size=1000",
        "--threads=32",
        "--worker-threads=2",
        "--time=1",
    ]);
    assert!(r.stat("queries:") > 0);
    // A password given in the URL is masked in the results (PostgreSQL's
    // trust authentication accepts any password, so the run happens).
    if flavor == Flavor::Postgres {
        let with_password = d.replacen("@", ":s3cret@", 1);
        let r = s.ok(&[
            "run",
            "oltp_point_select",
            &with_password,
            "--table-size=1000",
            "--events=10",
            "--time=0",
            "--format=json",
        ]);
        assert!(!r.stdout.contains("s3cret"), "{}", r.stdout);
        assert_eq!(r.json()["totals"]["events"], 10);
    }
    let r = s.ok(&["prewarm", "oltp_read_write", &d, "--tables=2"]);
    assert!(r.stdout.contains("Read"), "{}", r.stdout);
    // bulk_insert: one table per thread.
    s.ok(&["cleanup", "oltp_read_write", &d]);
    s.ok(&["prepare", "bulk_insert", &d, "--threads=2"]);
    let r = s.ok(&[
        "run",
        "bulk_insert",
        &d,
        "--threads=2",
        "--events=20000",
        "--time=0",
    ]);
    assert_eq!(r.stat("total number of events:"), 20000);
    assert_eq!(
        ask_n(
            &server,
            "SELECT (SELECT COUNT(*) FROM sbtest1) + (SELECT COUNT(*) FROM sbtest2)"
        ),
        20000
    );
    let r = s.ok(&["cleanup", "bulk_insert", &d]);
    assert!(r.stdout.contains("Dropped 2 table(s)"), "{}", r.stdout);
    let tables = match flavor {
        Flavor::MariaDb => {
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema='test'"
        }
        Flavor::Postgres => "SELECT COUNT(*) FROM pg_tables WHERE schemaname='public'",
    };
    assert_eq!(ask_n(&server, tables), 0);
}

#[test]
fn all_workloads_on_mariadb() {
    all_workloads(Flavor::MariaDb);
}

#[test]
fn all_workloads_on_postgres() {
    all_workloads(Flavor::Postgres);
}

/// Eight users fighting over five rows: deadlocks (and on PostgreSQL,
/// duplicate keys from concurrent delete/insert) restart events and are
/// counted by code; the run completes.
fn conflicts_are_retried(flavor: Flavor, codes: &[&str]) {
    // PostgreSQL looks for deadlocks after deadlock_timeout (1 s by
    // default): a 3 s run could then finish only a handful of events.
    let settings: &[(&str, &str)] = match flavor {
        Flavor::Postgres => &[("deadlock_timeout", "100ms")],
        Flavor::MariaDb => &[],
    };
    let Some(server) = dbmeter_testkit::servers::start_with(flavor, settings) else {
        return;
    };
    let s = Scratch::new();
    let d = db(&server);
    s.ok(&["prepare", "oltp_write_only", &d, "--table-size=5"]);
    let r = s.ok(&[
        "run",
        "oltp_write_only",
        &d,
        "--table-size=5",
        "--threads=8",
        "--time=3",
        "--format=json",
    ]);
    let j = r.json();
    assert!(
        j["totals"]["events"].as_u64().unwrap() > 10,
        "{}",
        j["totals"]
    );
    let errors = j["errors"].as_object().unwrap();
    assert!(!errors.is_empty(), "no conflicts in {}", j["totals"]);
    for code in errors.keys() {
        assert!(codes.contains(&code.as_str()), "unexpected {code}");
    }
    let total: u64 = errors.values().map(|v| v.as_u64().unwrap()).sum();
    assert_eq!(total, j["totals"]["ignored_errors"].as_u64().unwrap());
    assert_eq!(j["end"]["reason"], "time_limit");
}

#[test]
fn deadlocks_are_retried_on_mariadb() {
    conflicts_are_retried(Flavor::MariaDb, &["1213", "1020", "1205"]);
}

#[test]
fn deadlocks_and_duplicates_are_retried_on_postgres() {
    conflicts_are_retried(Flavor::Postgres, &["40P01", "40001", "23505"]);
}

/// The run goes on through a server restart: users reconnect, count it,
/// and keep measuring.
fn survives_restart(flavor: Flavor) {
    let Some(mut server) = start(flavor) else {
        return;
    };
    let s = Scratch::new();
    let d = db(&server);
    s.ok(&["prepare", "oltp_point_select", &d]);
    let child = s.spawn(&[
        "run",
        "oltp_point_select",
        &d,
        "--threads=4",
        // The restart takes about a second; several on a loaded machine.
        "--time=12",
        // A restart on a loaded machine may take longer than the default.
        "--reconnect-timeout=60",
        "--format=json",
    ]);
    // The restart comes once the users are connected (a server gone
    // before that fails the run at its start, as it should), and have run
    // for a second.
    let connected = match flavor {
        Flavor::MariaDb => {
            "SELECT COUNT(*) FROM information_schema.processlist WHERE db = 'test' AND id <> CONNECTION_ID()"
        }
        Flavor::Postgres => {
            "SELECT count(*) FROM pg_stat_activity WHERE datname = 'test' AND pid <> pg_backend_pid()"
        }
    };
    let t = std::time::Instant::now();
    while ask_n(&server, connected) < 4 {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "the users never connected"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_secs(1));
    server.restart().unwrap_or_else(|e| panic!("{e}"));
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert!(
        j["totals"]["reconnects"].as_u64().unwrap() >= 1,
        "{}",
        j["totals"]
    );
    // Events again after the first second that saw the server gone (its
    // errors or failed reconnects), however long the restart took.
    let iv = j["intervals"].as_array().unwrap();
    let gone = iv
        .iter()
        .position(|i| {
            i["errors_per_s"].as_f64().unwrap() > 0.0
                || i["failed_reconnects_per_s"].as_f64().unwrap() > 0.0
                || i["reconnects_per_s"].as_f64().unwrap() > 0.0
        })
        .unwrap_or_else(|| panic!("no interval saw the restart: {iv:?}"));
    let after: u64 = iv[gone + 1..]
        .iter()
        .map(|i| i["events"].as_u64().unwrap())
        .sum();
    assert!(after > 0, "no events after the restart: {iv:?}");
}

#[test]
fn a_restart_does_not_end_the_run_on_mariadb() {
    survives_restart(Flavor::MariaDb);
}

#[test]
fn a_restart_does_not_end_the_run_on_postgres() {
    survives_restart(Flavor::Postgres);
}

fn one_line(r: &Run, needle: &str) {
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    let line = r.stderr.trim();
    assert_eq!(line.lines().count(), 1, "{line}");
    assert!(line.contains(needle), "expected '{needle}' in: {line}");
    assert!(!line.contains("s3cret"), "password shown: {line}");
}

fn bad_targets(flavor: Flavor, scheme: &str) {
    let Some(server) = start(flavor) else { return };
    let s = Scratch::new();
    let port = server.port();
    let r = s.run(&[
        "run",
        "oltp_read_write",
        &format!("--db={scheme}://nobody:s3cret@127.0.0.1:{port}/test"),
    ]);
    one_line(
        &r,
        &format!("cannot connect to {scheme}://nobody:***@127.0.0.1:{port}/test"),
    );
    let root = match flavor {
        Flavor::MariaDb => "root",
        Flavor::Postgres => "postgres",
    };
    let r = s.run(&[
        "run",
        "oltp_read_write",
        &format!("--db={scheme}://{root}@127.0.0.1:{port}/nosuchdb"),
    ]);
    one_line(&r, "nosuchdb");
    let free = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let r = s.run(&[
        "run",
        "oltp_read_write",
        &format!("--db={scheme}://{root}@127.0.0.1:{free}/test"),
    ]);
    one_line(
        &r,
        &format!("cannot connect to {scheme}://{root}@127.0.0.1:{free}/test"),
    );
    let r = s.run(&["run", "oltp_read_write", &db(&server)]);
    one_line(&r, "table sbtest1 does not exist");
    assert_eq!(ask(&server, "SELECT 1"), "1");
}

#[test]
fn bad_targets_on_mariadb() {
    bad_targets(Flavor::MariaDb, "mysql");
}

#[test]
fn bad_targets_on_postgres() {
    bad_targets(Flavor::Postgres, "postgres");
}

#[test]
fn sysbench_style_options_reach_the_server() {
    let Some(server) = start(Flavor::MariaDb) else {
        return;
    };
    let s = Scratch::new();
    let port = server.port().to_string();
    let opts = [
        "--db-driver=mysql",
        "--mysql-host=127.0.0.1",
        "--mysql-user=root",
        "--mysql-db=test",
    ];
    let mut args = vec!["prepare", "oltp_point_select", "--table-size=100"];
    args.extend_from_slice(&opts);
    let p = format!("--mysql-port={port}");
    args.push(&p);
    s.ok(&args);
    let mut args = vec![
        "oltp_point_select",
        "--table-size=100",
        "--events=50",
        "--time=0",
        &p,
        "run",
    ];
    args.extend_from_slice(&opts);
    let r = s.ok(&args);
    assert_eq!(r.stat("read:"), 50);
    // Table options reach the DDL.
    let mut args = vec![
        "prepare",
        "oltp_read_only",
        "--tables=2",
        "--table-size=10",
        "--mysql_storage_engine=myisam",
        "--create_table_options=COMMENT='from dbmeter'",
        &p,
    ];
    args.extend_from_slice(&opts);
    s.ok(&[
        "cleanup",
        "oltp_read_only",
        &p,
        opts[0],
        opts[1],
        opts[2],
        opts[3],
    ]);
    s.ok(&args);
    assert_eq!(
        ask(
            &server,
            "SELECT CONCAT(engine, '/', table_comment) FROM information_schema.tables WHERE table_name='sbtest2'"
        ),
        "MyISAM/from dbmeter"
    );
    assert!(
        r.stdout
            .contains(&format!("mysql://root@127.0.0.1:{port}/test")),
        "{}",
        r.stdout
    );
}

/// A server that goes away for good: users try to reconnect (for a bounded
/// time, and not past the time limit), then the run fails, exit code 1,
/// with what it measured.
#[test]
fn a_lost_server_does_not_outlive_the_time_limit() {
    let Some(mut server) = start(Flavor::MariaDb) else {
        return;
    };
    let s = Scratch::new();
    let d = db(&server);
    s.ok(&["prepare", "oltp_point_select", &d]);
    let began = std::time::Instant::now();
    let child = s.spawn(&[
        "run",
        "oltp_point_select",
        &d,
        "--threads=2",
        "--time=4",
        "--format=json",
    ]);
    std::thread::sleep(Duration::from_secs(1));
    server.kill();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        began.elapsed() < Duration::from_secs(8),
        "{:?}",
        began.elapsed()
    );
    let j: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(j["end"]["reason"], "failed");
    assert!(j["totals"]["events"].as_u64().unwrap() > 0);
    assert!(
        j["errors"]["2013"].as_u64().unwrap() >= 1,
        "{}",
        j["errors"]
    );
}

/// A Unix socket target (`?socket=`) prepares and runs like TCP.
#[test]
fn mariadb_over_a_unix_socket() {
    let Some(server) = start(Flavor::MariaDb) else {
        return;
    };
    let s = Scratch::new();
    let d = format!(
        "--db=mysql://root@localhost/test?socket={}",
        server.socket().display()
    );
    s.ok(&["prepare", "oltp_read_only", &d, "--table-size=500"]);
    let r = s.ok(&[
        "run",
        "oltp_read_only",
        &d,
        "--table-size=500",
        "--events=20",
        "--time=0",
        "--threads=2",
    ]);
    assert_eq!(r.stat("transactions:"), 20, "{}", r.stdout);
    assert_eq!(ask_n(&server, "SELECT COUNT(*) FROM sbtest1"), 500);
}

/// How prepare loads MariaDB: prepared INSERTs run in bulk by default
/// (whatever local_infile says), LOAD DATA LOCAL INFILE or multi-row
/// INSERTs when the URL asks (`load=`), multi-row INSERTs when LOAD DATA is
/// asked of a server that refuses it. The rows are the same every way.
#[test]
fn mariadb_load_methods() {
    let Some(server) =
        dbmeter_testkit::servers::start_with(Flavor::MariaDb, &[("local-infile", "0")])
    else {
        return;
    };
    let s = Scratch::new();
    let url = server.url();
    let with = |load: &str| {
        let sep = if url.contains('?') { '&' } else { '?' };
        format!("--db={url}{sep}load={load}")
    };
    let rows = "SELECT CONCAT(COUNT(*), ' ', MAX(id), ' ', SUM(k), ' ', \
                MD5(GROUP_CONCAT(c, pad ORDER BY id))) FROM sbtest2";
    let mut seen = Vec::new();
    for (db, says) in [
        (
            db(&server),
            "Loading rows with prepared INSERTs run in bulk",
        ),
        (
            with("infile"),
            "Loading rows with multi-row INSERTs (the server refuses LOAD DATA LOCAL INFILE",
        ),
        (with("insert"), "Loading rows with multi-row INSERTs"),
        (with("infile"), "Loading rows with LOAD DATA LOCAL INFILE"),
    ] {
        if seen.len() == 3 {
            ask(&server, "SET GLOBAL local_infile = 1");
        }
        let r = s.ok(&[
            "prepare",
            "oltp_read_write",
            &db,
            "--tables=2",
            "--table-size=3000",
            "--threads=2",
            "--rand-seed=5",
        ]);
        assert!(r.stdout.contains(says), "{db}: {}\n{}", r.stdout, r.stderr);
        assert_eq!(ask_n(&server, "SELECT COUNT(*) FROM sbtest1"), 3000);
        seen.push(ask(&server, rows));
        s.ok(&["cleanup", "oltp_read_write", &db]);
    }
    assert!(seen[0].starts_with("3000 3000 "), "{}", seen[0]);
    assert!(seen.iter().all(|x| *x == seen[0]), "{seen:?}");

    let r = s.run(&["prepare", "oltp_read_write", &with("fast")]);
    assert_eq!(r.code, 2, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("load=fast: unknown loading method"),
        "{}",
        r.stderr
    );
}

/// The soft limit on open files of this process (inherited by dbmeter).
fn open_files_limit() -> u64 {
    std::fs::read_to_string("/proc/self/limits")
        .ok()
        .and_then(|l| {
            l.lines()
                .find(|l| l.starts_with("Max open files"))
                .and_then(|l| l.split_whitespace().nth(3)?.parse().ok())
        })
        .unwrap_or(1024)
}

/// A thousand users connect at once (the server's listen queue must not
/// overflow: connects are bounded in flight) and all of them run.
fn a_thousand_connections(flavor: Flavor) {
    // Each connection is a socket in dbmeter and one in the server.
    let users = (open_files_limit().saturating_sub(100)).min(1024);
    if users < 500 {
        eprintln!(
            "skipped: open files limit {} is too low",
            open_files_limit()
        );
        return;
    }
    // MariaDB's smallest listen queue: a burst of a thousand connects
    // would overflow it.
    let settings: &[(&str, &str)] = match flavor {
        Flavor::MariaDb => &[("max_connections", "1100"), ("back_log", "50")],
        Flavor::Postgres => &[("max_connections", "1100")],
    };
    let Some(server) = start_with(flavor, settings) else {
        return;
    };
    let s = Scratch::new();
    let d = db(&server);
    s.ok(&["prepare", "oltp_point_select", &d, "--table-size=1000"]);
    let threads = format!("--threads={users}");
    let r = s.ok(&[
        "run",
        "oltp_point_select",
        &d,
        "--table-size=1000",
        &threads,
        "--time=1",
        "--format=json",
    ]);
    let j = r.json();
    assert_eq!(j["threads"], users, "{}", r.stderr);
    assert_eq!(j["end"]["reason"], "time_limit", "{}", r.stderr);
    // Every user ran: threads fairness lists each one's events.
    let events = j["totals"]["events"].as_u64().unwrap_or(0);
    assert!(events >= users, "{events} events for {users} users");
}

#[test]
fn a_thousand_connections_on_mariadb() {
    a_thousand_connections(Flavor::MariaDb);
}

#[test]
fn a_thousand_connections_on_postgres() {
    a_thousand_connections(Flavor::Postgres);
}
