//! `dbmeter replay` (`dbmeter run replay --log=LOG`) on logs that real
//! servers write: sessions that depend on their own earlier writes replay
//! without errors on MariaDB and PostgreSQL; a captured oltp_read_write run
//! replayed into a fresh copy gives the same statement counts per class
//! (the digest of the replay target's own log says so); `--speed=1` keeps
//! the recorded timing and reports the lag behind it; bad input is one
//! line.

use crate::common::*;
use dbmeter_server::{Flavor, Server};
use dbmeter_testkit::servers::{ask, start_with};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The replay section of a JSON result.
fn section(r: &Run) -> Value {
    let doc = r.json();
    assert_eq!(
        doc["end"]["reason"], "work_done",
        "{}\n{}",
        r.stdout, r.stderr
    );
    doc["replay"].clone()
}

/// The replay section's classes: fingerprint to (logged, replayed, errors).
fn replay_classes(rep: &Value) -> BTreeMap<String, (u64, u64, u64)> {
    rep["classes"]
        .as_array()
        .expect("classes")
        .iter()
        .map(|c| {
            (
                c["fingerprint"].as_str().expect("fingerprint").to_string(),
                (
                    c["logged"].as_u64().expect("logged"),
                    c["replayed"].as_u64().expect("replayed"),
                    c["errors"].as_u64().expect("errors"),
                ),
            )
        })
        .collect()
}

/// The classes of a digest's JSON: fingerprint to count.
fn digest_counts(doc: &Value) -> BTreeMap<String, u64> {
    doc["classes"]
        .as_array()
        .expect("classes")
        .iter()
        .map(|c| {
            (
                c["key"].as_str().expect("key").to_string(),
                c["query_count"].as_u64().expect("count"),
            )
        })
        .collect()
}

/// Waits until the file at `p` holds `marker` (a server's log is written
/// as statements end, PostgreSQL's collector a little later).
fn wait_for(p: &Path, marker: &str) {
    let t = Instant::now();
    while !std::fs::read_to_string(p).is_ok_and(|t| t.contains(marker)) {
        assert!(t.elapsed().as_secs() < 60, "{} lacks {marker}", p.display());
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A copy of the log at `from` in the scratch directory, once it holds `marker`.
fn copy_log(s: &Scratch, from: &Path, marker: &str, name: &str) -> PathBuf {
    wait_for(from, marker);
    let to = s.path(name);
    std::fs::copy(from, &to).expect("copy the log");
    to
}

fn mariadb_logging(file: &str) -> Vec<(&str, &str)> {
    vec![
        ("slow_query_log", "0"),
        ("general_log", "0"),
        ("general_log_file", "general.log"),
        ("long_query_time", "0"),
        ("slow_query_log_file", file),
    ]
}

const PG_PREFIX: &str = "%m [%p] %q%u@%d ";

fn pg_logging(file: &str) -> Vec<(&str, &str)> {
    vec![
        ("logging_collector", "on"),
        ("log_destination", "stderr"),
        ("log_directory", "replay-log"),
        ("log_filename", file),
        ("log_line_prefix", PG_PREFIX),
    ]
}

/// Where the server writes its statement log.
fn log_of(server: &Server, file: &str) -> PathBuf {
    match server.flavor() {
        Flavor::MariaDb => server.datadir().join(file),
        Flavor::Postgres => server.datadir().join("replay-log").join(file),
    }
}

/// Turns on the statement log of a server started with it off.
fn start_logging(server: &Server) {
    match server.flavor() {
        Flavor::MariaDb => {
            ask(server, "SET GLOBAL slow_query_log = 1");
            ask(server, "SET GLOBAL general_log = 1");
        }
        Flavor::Postgres => {
            // The database's setting outranks the server's command line,
            // for the sessions that start from now on.
            ask(
                server,
                "ALTER DATABASE test SET log_min_duration_statement = 0",
            );
        }
    }
}

/// Session `c`'s script: a temporary table of its own, rows written and
/// read back (each read's row count depends on the session's own writes).
fn own_session(flavor: Flavor, c: usize, rows: usize) -> String {
    let mut sql = String::from("CREATE TEMPORARY TABLE own_t (id INT PRIMARY KEY, v INT);\n");
    for i in 0..rows {
        sql.push_str(&format!("INSERT INTO own_t VALUES ({i}, {c});\n"));
        sql.push_str("SELECT id FROM own_t ORDER BY id;\n");
    }
    sql.push_str(&format!("UPDATE own_t SET v = v + 1 WHERE v = {c};\n"));
    sql.push_str(&format!("SELECT id FROM own_t WHERE v = {};\n", c + 1));
    sql.push_str(match flavor {
        Flavor::MariaDb => "DROP TEMPORARY TABLE own_t;\n",
        Flavor::Postgres => "DROP TABLE own_t;\n",
    });
    sql
}

/// Runs `clients` sessions of [`own_session`] at once through the
/// server's own client.
fn run_own_sessions(server: &Server, s: &Scratch, clients: usize, rows: usize) {
    let port = server.port().to_string();
    let children: Vec<_> = (0..clients)
        .map(|c| {
            let script = s.path(&format!("session{c}.sql"));
            std::fs::write(&script, own_session(server.flavor(), c, rows)).expect("script");
            let mut cmd = match server.flavor() {
                Flavor::MariaDb => {
                    let mut cmd = std::process::Command::new("mariadb");
                    cmd.args([
                        "--no-defaults",
                        "-h127.0.0.1",
                        "-P",
                        &port,
                        "-uroot",
                        "test",
                    ])
                    .stdin(std::fs::File::open(&script).expect("open the script"));
                    cmd
                }
                Flavor::Postgres => {
                    let mut cmd = std::process::Command::new("psql");
                    cmd.args(["-X", "-q", "-h", "127.0.0.1", "-p", &port, "-U", "postgres"])
                        .args(["-d", "test", "-v", "ON_ERROR_STOP=1", "-f"])
                        .arg(&script);
                    cmd
                }
            };
            cmd.stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("start the client")
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().expect("wait for the client");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn own_writes_replay(flavor: Flavor) {
    let s = Scratch::new();
    let (clients, rows) = (4usize, 15usize);
    let settings = match flavor {
        Flavor::MariaDb => mariadb_logging("own-slow.log"),
        Flavor::Postgres => pg_logging("own.log"),
    };
    let Some(server) = start_with(flavor, &settings) else {
        return;
    };
    // The log holds the sessions (not the server's own set-up).
    start_logging(&server);
    run_own_sessions(&server, &s, clients, rows);
    ask(&server, "SELECT 'end of the sessions'");
    // MariaDB: its slow log, and its general log (Connect and Quit lines,
    // no durations or row counts).
    let files: &[&str] = if flavor == Flavor::MariaDb {
        &["own-slow.log", "general.log"]
    } else {
        &["own.log"]
    };
    let db = format!("--db={}", server.url());
    // Copied before any replay (which the server logs too).
    let copies: Vec<PathBuf> = files
        .iter()
        .map(|file| copy_log(&s, &log_of(&server, file), "end of the sessions", file))
        .collect();
    for log in &copies {
        let log = log.to_str().expect("utf-8 path");
        // As fast as possible, the sessions at once; then two at a time.
        for threads in [None, Some("--threads=2")] {
            let mut args = vec!["replay", log, &db, "--format=json"];
            args.extend(threads);
            let r = s.ok(&args);
            let rep = section(&r);
            assert_eq!(rep["errors"], 0, "{threads:?}: {rep}");
            assert_eq!(rep["rows_differ"], 0, "{threads:?}: {rep}");
            assert!(
                rep["sessions"].as_u64().expect("sessions") >= clients as u64,
                "{rep}"
            );
            if threads.is_some() {
                assert_eq!(rep["concurrency"], 2, "{rep}");
            }
            let classes = replay_classes(&rep);
            let of = |fp: &str| {
                *classes
                    .get(fp)
                    .unwrap_or_else(|| panic!("no class {fp} in {classes:#?}"))
            };
            let n = clients as u64;
            let r = rows as u64;
            assert_eq!(of("insert into own_t values(?+)"), (n * r, n * r, 0));
            assert_eq!(of("select id from own_t order by id"), (n * r, n * r, 0));
            assert_eq!(of("select id from own_t where v = ?"), (n, n, 0));
            // Every logged statement ran once, none refused.
            for (fp, (logged, replayed, errors)) in &classes {
                assert_eq!((logged, errors), (replayed, &0), "{fp}");
            }
        }
    }
    // The row counts are checked where the log has them (the slow log's
    // Rows_sent): a read of another session's rows would differ.
    if flavor == Flavor::MariaDb {
        let log = s.path("own-slow.log");
        let log = log.to_str().expect("utf-8 path");
        let r = s.ok(&["replay", log, &db, "--format=json"]);
        let rep = section(&r);
        let compared: u64 = rep["classes"]
            .as_array()
            .expect("classes")
            .iter()
            .map(|c| c["rows_compared"].as_u64().unwrap_or(0))
            .sum();
        assert!(compared >= (clients * rows) as u64, "{rep}");
    }
}

#[test]
fn sessions_that_read_their_own_writes_replay_without_errors_on_mariadb() {
    own_writes_replay(Flavor::MariaDb);
}

#[test]
fn sessions_that_read_their_own_writes_replay_without_errors_on_postgres() {
    own_writes_replay(Flavor::Postgres);
}

/// oltp_read_write runs with its log on; the log replays into a fresh copy
/// of the data, whose own log then has the same classes and counts.
fn sysbench_capture_replays(flavor: Flavor) {
    let s = Scratch::new();
    let file = if flavor == Flavor::MariaDb {
        "capture-slow.log"
    } else {
        "capture.log"
    };
    let settings = match flavor {
        Flavor::MariaDb => mariadb_logging(file),
        Flavor::Postgres => pg_logging(file),
    };
    let (Some(a), Some(b)) = (start_with(flavor, &settings), start_with(flavor, &settings)) else {
        return;
    };
    let data = ["--tables=1", "--table-size=200"];
    let events = 30u64;
    for server in [&a, &b] {
        let db = format!("--db={}", server.url());
        s.ok(&[&["prepare", "oltp_read_write", &db][..], &data].concat());
        start_logging(server);
    }
    let db_a = format!("--db={}", a.url());
    // Prepared statements: PostgreSQL logs each execute with its
    // parameters in a DETAIL line, which the replay fills in.
    let ps = "--db-ps-mode=auto";
    s.ok(&[
        &[
            "run",
            "oltp_read_write",
            &db_a,
            ps,
            "--threads=1",
            "--time=0",
        ][..],
        &data,
        &[&format!("--events={events}")],
    ]
    .concat());
    ask(&a, "SELECT 'end of the capture'");
    let captured = copy_log(&s, &log_of(&a, file), "end of the capture", "captured.log");
    let captured = captured.to_str().expect("utf-8 path");
    let db_b = format!("--db={}", b.url());
    let r = s.ok(&["replay", captured, &db_b, "--format=json"]);
    let rep = section(&r);
    ask(&b, "SELECT 'end of the replay'");
    let replayed = copy_log(&s, &log_of(&b, file), "end of the replay", "replayed.log");
    // The replay's own count: every statement of the workload once, none refused.
    let classes = replay_classes(&rep);
    let sb: Vec<_> = classes
        .iter()
        .filter(|(fp, _)| fp.contains("sbtest"))
        .collect();
    assert!(sb.len() >= 8, "{classes:#?}");
    for (fp, (logged, replayed, errors)) in &sb {
        assert_eq!((logged, errors), (replayed, &0), "{fp}");
    }
    assert_eq!(
        classes.get("select c from sbtest? where id=?").map(|c| c.1),
        Some(10 * events),
        "{classes:#?}"
    );
    // The digests of both servers' logs: the same workload classes, counted alike.
    let digest = |log: &str| {
        let mut args = vec!["digest", log, "--format=json", "--limit=0"];
        let prefix = format!("--log-line-prefix={PG_PREFIX}");
        if flavor == Flavor::Postgres {
            args.push(&prefix);
        }
        digest_counts(&s.ok(&args).json())
    };
    let before = digest(captured);
    let after = digest(replayed.to_str().expect("utf-8 path"));
    let workload = |m: &BTreeMap<String, u64>| -> BTreeMap<String, u64> {
        m.iter()
            .filter(|(k, _)| k.contains("sbtest"))
            .map(|(k, v)| (k.clone(), *v))
            .collect()
    };
    assert_eq!(
        workload(&before).get("select c from sbtest? where id=?"),
        Some(&(10 * events)),
        "{before:#?}"
    );
    assert_eq!(workload(&before), workload(&after));
    for tx in ["begin", "commit"] {
        assert_eq!(before.get(tx), Some(&events), "{before:#?}");
        assert!(after.get(tx).is_some_and(|n| *n >= events), "{after:#?}");
    }
}

#[test]
fn a_captured_oltp_run_replays_with_the_same_counts_per_class_on_mariadb() {
    sysbench_capture_replays(Flavor::MariaDb);
}

#[test]
fn a_captured_oltp_run_replays_with_the_same_counts_per_class_on_postgres() {
    sysbench_capture_replays(Flavor::Postgres);
}

/// A slow log event of thread `thread` at Unix time `ts`.
fn slow_event(thread: u64, ts: u64, rows: u64, sql: &str) -> String {
    format!(
        "# User@Host: app[app] @ localhost []\n# Thread_id: {thread}  Schema:   QC_hit: No\n\
         # Query_time: 0.000100  Lock_time: 0.000000  Rows_sent: {rows}  Rows_examined: 0\n\
         SET timestamp={ts};\n{sql};\n"
    )
}

/// An SQLite file for a replay target.
fn sqlite_target(s: &Scratch) -> String {
    s.db("target.sqlite")
        .execute_batch(
            "CREATE TABLE kept (a INT); INSERT INTO kept VALUES (1), (2); CREATE TABLE added (a INT);",
        )
        .expect("make the target");
    format!("--db=sqlite:{}", s.path("target.sqlite").display())
}

#[test]
fn speed_one_keeps_the_recorded_timing_and_reports_the_lag() {
    let s = Scratch::new();
    let db = sqlite_target(&s);
    // Two sessions over three recorded seconds.
    let t0 = 1_795_775_498u64;
    let mut log = String::from("# Time: 261127 10:31:38\n");
    log += &slow_event(1, t0, 2, "SELECT a FROM kept");
    log += &slow_event(2, t0 + 1, 1, "SELECT 1");
    log += &slow_event(1, t0 + 2, 1, "SELECT count(*) FROM kept");
    log += &slow_event(2, t0 + 3, 1, "SELECT 2");
    std::fs::write(s.path("timed.log"), &log).expect("write the log");
    let t = Instant::now();
    let r = s.ok(&["replay", "timed.log", &db, "--speed=1", "--format=json"]);
    let took = t.elapsed();
    let rep = section(&r);
    // The last statement is due 3 s in: the replay waited for it.
    assert!(took >= Duration::from_millis(2900), "{took:?}");
    assert_eq!(rep["speed"], 1.0);
    assert_eq!(rep["statements"], 4);
    assert_eq!(rep["rows_differ"], 0, "{rep}");
    let max = rep["max_lag_ms"].as_f64().expect("the largest lag");
    let mean = rep["mean_lag_ms"].as_f64().expect("the mean lag");
    assert!(max >= mean && mean >= 0.0, "{rep}");
    let doc = r.json();
    assert!(
        doc["service_latency_ms"].is_object(),
        "service times kept apart"
    );
    // The text report says it.
    let r = s.ok(&["replay", "timed.log", &db, "--speed=10"]);
    assert!(
        r.stdout.contains("lag behind schedule (max/mean):"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("10x the recorded speed"), "{}", r.stdout);
    // As fast as possible: no schedule, no lag.
    let r = s.ok(&["run", "replay", "--log=timed.log", &db, "--format=json"]);
    let rep = section(&r);
    assert!(rep["max_lag_ms"].is_null(), "{rep}");
    assert_eq!(rep["statements"], 4);
}

#[test]
fn refused_statements_are_counted_and_the_session_goes_on() {
    let s = Scratch::new();
    let db = sqlite_target(&s);
    let t0 = 1_795_775_498u64;
    let mut log = String::from("# Time: 261127 10:31:38\n");
    for i in 0..3 {
        log += &slow_event(7, t0, 2, "SELECT a FROM kept");
        log += &slow_event(7, t0, 0, &format!("SELECT nope{i} FROM missing_table"));
        log += &slow_event(7, t0, 0, &format!("INSERT INTO added VALUES ({i})"));
        // The log says 9 rows: a difference.
        log += &slow_event(8, t0, 9, "SELECT a FROM kept WHERE a < 100");
    }
    std::fs::write(s.path("errors.log"), &log).expect("write the log");
    let r = s.ok(&["replay", "errors.log", &db, "--format=json"]);
    let rep = section(&r);
    let classes = replay_classes(&rep);
    assert_eq!(classes["select nope? from missing_table"], (3, 0, 3));
    assert_eq!(classes["insert into added values(?+)"], (3, 3, 0));
    assert_eq!(rep["errors"], 3);
    assert_eq!(rep["rows_differ"], 3, "{rep}");
    let missing = rep["classes"]
        .as_array()
        .expect("classes")
        .iter()
        .find(|c| c["fingerprint"] == "select nope? from missing_table")
        .expect("the refused class");
    assert!(
        missing["first_error"]
            .as_str()
            .unwrap_or_default()
            .contains("missing_table"),
        "{missing}"
    );
    assert_eq!(
        count(&s.db("target.sqlite"), "SELECT count(*) FROM added"),
        3
    );
    // --read-only leaves the writes out and counts them.
    let r = s.ok(&["replay", "errors.log", &db, "--read-only", "--format=json"]);
    let rep = section(&r);
    assert_eq!(rep["skipped"], 3, "{rep}");
    assert_eq!(
        replay_classes(&rep)["insert into added values(?+)"],
        (3, 0, 0)
    );
    assert_eq!(
        count(&s.db("target.sqlite"), "SELECT count(*) FROM added"),
        3
    );
    // One class of its own, the rest together as "other".
    let r = s.ok(&["replay", "errors.log", &db, "--classes=1", "--format=json"]);
    let doc = r.json();
    let kinds: Vec<&str> = doc["kinds"]
        .as_array()
        .expect("kinds")
        .iter()
        .map(|k| k["name"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(kinds.len(), 2, "{kinds:?}");
    assert_eq!(kinds[1], "other");
}

#[test]
fn bad_inputs_are_one_line() {
    let s = Scratch::new();
    let db = sqlite_target(&s);
    let one_line = |r: &Run, code: i32, says: &str| {
        assert_eq!(r.code, code, "{}\n{}", r.stdout, r.stderr);
        let err = r.stderr.trim();
        assert!(err.contains(says), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(!err.contains("panicked"), "{err}");
    };
    one_line(&s.run(&["replay", &db]), 2, "--log=FILE");
    one_line(
        &s.run(&["replay", "absent.log", &db]),
        1,
        "cannot read absent.log",
    );
    std::fs::write(s.path("notes.txt"), "hello\nworld\n").expect("write");
    one_line(
        &s.run(&["replay", "notes.txt", &db]),
        1,
        "not a MySQL/MariaDB slow or general log",
    );
    std::fs::write(s.path("empty.log"), "").expect("write");
    one_line(&s.run(&["replay", "empty.log", &db]), 1, "the log is empty");
    // A log with no statements (the server's header, an event without one).
    std::fs::write(
        s.path("nothing.log"),
        "/usr/sbin/mariadbd, Version: 11.8.3-MariaDB-log (Debian). started with:\n\
         Tcp port: 3306  Unix socket: /run/mysqld/mysqld.sock\n\
         Time                 Id Command    Argument\n\
         # Time: 261127 10:31:38\n# User@Host: a[a] @ x []\n# Query_time: 0.1\n",
    )
    .expect("write");
    one_line(
        &s.run(&["replay", "nothing.log", &db]),
        1,
        "no statements to replay",
    );
    std::fs::write(
        s.path("writes.log"),
        slow_event(1, 1, 0, "DELETE FROM kept"),
    )
    .expect("write");
    one_line(
        &s.run(&["replay", "writes.log", &db, "--read-only"]),
        1,
        "--read-only leaves out",
    );
    std::fs::write(s.path("ok.log"), slow_event(1, 1, 1, "SELECT 1")).expect("write");
    one_line(
        &s.run(&["replay", "ok.log", &db, "--speed=-1"]),
        2,
        "--speed=-1",
    );
    one_line(
        &s.run(&["replay", "ok.log", &db, "--classes=0"]),
        2,
        "--classes=0",
    );
    one_line(
        &s.run(&[
            "replay",
            "ok.log",
            &db,
            "--log-format=postgres-stderr",
            "--log-line-prefix=%Z",
        ]),
        1,
        "unknown escape",
    );
}

/// `dbmeter capture`'s file (its header line, then the server's slow log)
/// replays as it is.
#[test]
fn a_dbmeter_capture_file_replays() {
    use std::io::BufRead;
    let s = Scratch::new();
    let Some(server) = dbmeter_testkit::servers::start(Flavor::MariaDb) else {
        return;
    };
    let db = format!("--db={}", server.url());
    let mut child = s.spawn(&["capture", &db, "--time=0", "--output=cap.log"]);
    let stdout = child.stdout.take().expect("stdout");
    let (tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for l in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if tx.send(l).is_err() {
                break;
            }
        }
    });
    let mut seen = Vec::new();
    loop {
        match lines.recv_timeout(Duration::from_secs(90)) {
            Ok(l) if l.starts_with("capturing") => break,
            Ok(l) => seen.push(l),
            Err(e) => panic!("no 'capturing' line ({e}): {seen:?}"),
        }
    }
    let (clients, rows) = (3usize, 10usize);
    run_own_sessions(&server, &s, clients, rows);
    // SAFETY: a plain signal to the child we started.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let status = child.wait().expect("wait for the capture");
    assert_eq!(status.code(), Some(130), "{seen:?}");
    let r = s.ok(&["replay", "cap.log", &db, "--format=json"]);
    let rep = section(&r);
    assert_eq!(rep["format"], "mysql-slow", "{rep}");
    assert_eq!(rep["errors"], 0, "{rep}");
    assert_eq!(rep["rows_differ"], 0, "{rep}");
    let classes = replay_classes(&rep);
    let n = (clients * rows) as u64;
    assert_eq!(classes["insert into own_t values(?+)"], (n, n, 0));
    assert_eq!(classes["select id from own_t order by id"], (n, n, 0));
}
