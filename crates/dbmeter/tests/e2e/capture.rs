//! `dbmeter capture` on throwaway MariaDB and PostgreSQL servers: known
//! statements run on new connections while it captures; the capture file
//! digests (`dbmeter digest`) to exactly those statements; the settings are
//! as they were afterwards (SIGINT and SIGTERM end a capture and still
//! collect and restore); a user without the privilege gets one line and
//! nothing changes; SQLite has no log.

use crate::common::*;
use dbmeter_server::{Flavor, Server};
use dbmeter_testkit::servers::{ask, client_on, start, start_with};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::process::Child;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A capture running in the background, its settings in effect.
struct Running {
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

/// Starts `dbmeter ARGS` and waits for its "capturing" line.
fn start_capture(s: &Scratch, args: &[&str]) -> Running {
    let mut child = s.spawn(args);
    let stdout = child.stdout.take().expect("stdout");
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for l in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(l).is_err() {
                break;
            }
        }
    });
    let mut r = Running {
        child,
        lines,
        seen: Vec::new(),
    };
    let t = Instant::now();
    loop {
        match r.lines.recv_timeout(Duration::from_secs(1)) {
            Ok(l) => {
                let go = l.starts_with("capturing");
                r.seen.push(l);
                if go {
                    return r;
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                assert!(
                    t.elapsed() < Duration::from_secs(90),
                    "no 'capturing' line: {:?}",
                    r.seen
                );
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                let mut err = String::new();
                if let Some(mut e) = r.child.stderr.take() {
                    let _ = e.read_to_string(&mut err);
                }
                panic!("dbmeter capture ended early: {:?}\n{err}", r.seen);
            }
        }
    }
}

impl Running {
    /// Sends `signal` and waits for the end: exit code, stdout, stderr.
    fn end_with(mut self, signal: i32) -> (Option<i32>, String, String) {
        // SAFETY: signalling our own child.
        unsafe { libc::kill(self.child.id() as i32, signal) };
        let mut err = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = e.read_to_string(&mut err);
        }
        let status = self.child.wait().expect("dbmeter capture ends");
        self.seen.extend(self.lines.iter());
        (status.code(), self.seen.join("\n"), err)
    }
}

fn count_of(doc: &Value, fingerprint: &str) -> u64 {
    doc["classes"]
        .as_array()
        .expect("classes")
        .iter()
        .find(|c| c["key"] == fingerprint)
        .and_then(|c| c["query_count"].as_u64())
        .unwrap_or(0)
}

/// The statements run during a capture: (fingerprint, the i-th).
fn workload(i: usize) -> [(&'static str, String); 3] {
    [
        (
            "insert into cap_t (a, b) values(?+)",
            format!("INSERT INTO cap_t (a, b) VALUES ({i}, 'x{i}')"),
        ),
        (
            "select b from cap_t where a = ?",
            format!("SELECT b FROM cap_t WHERE a = {i}"),
        ),
        (
            "update cap_t set b = ? where a = ?",
            format!("UPDATE cap_t SET b = 'y{i}' WHERE a = {i}"),
        ),
    ]
}

const N: usize = 7;

fn script() -> String {
    let mut sql = String::new();
    for i in 0..N {
        for (_, q) in workload(i) {
            sql.push_str(&q);
            sql.push_str(";\n");
        }
    }
    sql
}

/// Runs the workload on a new connection of the server's own client.
fn run_workload(server: &Server) {
    let out = match server.flavor() {
        Flavor::MariaDb => client_on(server, "test", &script()).output(),
        Flavor::Postgres => {
            let dir = tempfile::tempdir().expect("temp dir");
            let path = dir.path().join("w.sql");
            std::fs::write(&path, script()).expect("write the script");
            let port = server.port().to_string();
            std::process::Command::new("psql")
                .args(["-X", "-q", "-h", "127.0.0.1", "-p", &port, "-U", "postgres"])
                .args(["-d", "test", "-v", "ON_ERROR_STOP=1", "-f"])
                .arg(&path)
                .output()
        }
    }
    .expect("run the client");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Digests the capture and checks it holds the workload, N of each.
/// `all`: whether the workload is all that ran during the capture.
fn assert_digest(
    s: &Scratch,
    out: &str,
    file: &str,
    format: &str,
    server: &str,
    all: bool,
) -> Value {
    let r = s.ok(&["digest", file, "--format=json", "--limit=0"]);
    let doc = r.json();
    assert_eq!(doc["files"][0]["format"], format, "{}", r.stdout);
    assert_eq!(doc["files"][0]["capture"]["server"], server, "{}", r.stdout);
    assert_eq!(doc["files"][0]["capture"]["restored"], true, "{}", r.stdout);
    assert_eq!(doc["malformed"]["count"], 0, "{}", r.stderr);
    for (fp, _) in workload(0) {
        assert_eq!(count_of(&doc, fp), N as u64, "class {fp}:\n{}", r.stdout);
    }
    // dbmeter's own end marker was seen, and is cut off.
    assert!(!out.contains("end marker"), "{out}");
    assert!(
        !all || out.contains(&format!(", {} statements into {file}", 3 * N)),
        "{out}"
    );
    assert!(!r.stdout.contains("dbmeter-capture-end"), "{}", r.stdout);
    let text = std::fs::read_to_string(s.path(file)).expect("read the capture");
    assert!(text.starts_with("# dbmeter-capture v1 {"), "{text}");
    doc
}

const MY_GLOBALS: &str =
    "SELECT @@global.slow_query_log, @@global.long_query_time, @@global.log_output";

#[test]
fn mariadb_capture_from_the_slow_log_file_then_sigint() {
    let s = Scratch::new();
    let Some(server) = start(Flavor::MariaDb) else {
        return;
    };
    ask(&server, "CREATE TABLE cap_t (a INT, b VARCHAR(20))");
    let before = ask(&server, MY_GLOBALS);
    let db = format!("--db={}", server.url());
    let cap = start_capture(&s, &["capture", &db, "--time=0", "--output=cap.log"]);
    assert!(
        cap.seen
            .iter()
            .any(|l| l.starts_with("changed: long_query_time")),
        "{:?}",
        cap.seen
    );
    run_workload(&server);
    let (code, out, err) = cap.end_with(libc::SIGINT);
    assert_eq!(code, Some(130), "{out}\n{err}");
    assert!(out.contains("restored: "), "{out}");
    assert!(
        out.contains("reading ") && out.contains("on this machine"),
        "{out}"
    );
    assert!(out.contains("collected "), "{out}");
    assert_eq!(
        ask(&server, MY_GLOBALS),
        before,
        "the globals are as they were"
    );
    let doc = assert_digest(&s, &out, "cap.log", "mysql-slow", "mariadb", true);
    assert_eq!(doc["files"][0]["capture"]["collected"], "file");
    // The file rotated during a capture (renamed, FLUSH SLOW LOGS): the
    // new file is read from its start, and a line says so.
    let file = ask(&server, "SELECT @@global.slow_query_log_file");
    let path = server.datadir().join(&file);
    let cap = start_capture(&s, &["capture", &db, "--time=0", "--output=rot.log"]);
    run_workload(&server);
    std::fs::rename(&path, path.with_extension("old")).expect("rotate the slow log");
    ask(&server, "FLUSH SLOW LOGS");
    run_workload(&server);
    let (code, out, err) = cap.end_with(libc::SIGINT);
    assert_eq!(code, Some(130), "{out}\n{err}");
    assert!(out.contains("was rotated or truncated"), "{out}");
    // (FLUSH SLOW LOGS is in it too.)
    let doc = assert_digest(&s, &out, "rot.log", "mysql-slow", "mariadb", false);
    assert!(
        doc["files"][0]["capture"]["notes"]
            .to_string()
            .contains("rotated"),
        "{doc}"
    );
}

#[test]
fn mariadb_capture_through_mysql_slow_log_sigterm_and_refusals() {
    let s = Scratch::new();
    let Some(server) = start(Flavor::MariaDb) else {
        return;
    };
    ask(&server, "CREATE TABLE cap_t (a INT, b VARCHAR(20))");
    ask(&server, "CREATE USER weak@'%'");
    ask(&server, "GRANT SELECT ON *.* TO weak@'%'");
    let before = ask(&server, MY_GLOBALS);
    let port = server.port();
    // A user without SUPER: one line, nothing changed, no file left.
    let r = s.run(&[
        "capture",
        &format!("--db=mysql://weak@127.0.0.1:{port}/test"),
        "--time=1",
        "--output=weak.log",
    ]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("'weak'@'%' may not") && r.stderr.contains("SUPER"),
        "{}",
        r.stderr
    );
    assert!(!s.path("weak.log").exists());
    assert_eq!(ask(&server, MY_GLOBALS), before);
    let db = format!("--db={}", server.url());
    // A short capture ending by its time, nothing run: an empty capture,
    // on standard output (what it says goes to standard error).
    let r = s.ok(&["capture", &db, "--time=1", "--collect=sql", "--output=-"]);
    assert!(
        r.stderr.contains("log_output FILE -> FILE,TABLE"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("collected 0 bytes of mysql-slow log into standard output"),
        "{}",
        r.stderr
    );
    assert!(
        r.stdout.starts_with("# dbmeter-capture v1 {"),
        "{}",
        r.stdout
    );
    assert_eq!(r.stdout.lines().count(), 1, "{}", r.stdout);
    std::fs::write(s.path("empty.log"), &r.stdout).expect("write");
    assert_eq!(ask(&server, MY_GLOBALS), before);
    let doc = s.ok(&["digest", "empty.log", "--format=json"]).json();
    assert_eq!(doc["global"]["query_count"], 0, "{doc}");
    // Through SQL, ended by SIGTERM.
    let cap = start_capture(
        &s,
        &[
            "capture",
            &db,
            "--time=0",
            "--collect=sql",
            "--output=cap.log",
        ],
    );
    run_workload(&server);
    let (code, out, err) = cap.end_with(libc::SIGTERM);
    assert_eq!(code, Some(143), "{out}\n{err}");
    assert!(out.contains("through the server"), "{out}");
    assert_eq!(ask(&server, MY_GLOBALS), before);
    let doc = assert_digest(&s, &out, "cap.log", "mysql-slow", "mariadb", true);
    assert_eq!(doc["files"][0]["capture"]["collected"], "sql");
    assert_eq!(doc["files"][0]["capture"]["source"], "mysql.slow_log");
    // A filter that keeps statements out is named, and left as it is.
    ask(&server, "SET GLOBAL log_slow_filter = 'full_scan'");
    let r = s.ok(&["capture", &db, "--time=1", "--output=filtered.log"]);
    assert!(
        r.stdout.contains("log_slow_filter is 'full_scan'"),
        "{}",
        r.stdout
    );
    // dbmeter's end marker is logged all the same.
    assert!(!r.stdout.contains("end marker"), "{}", r.stdout);
    assert_eq!(ask(&server, "SELECT @@global.log_slow_filter"), "full_scan");
}

const PG_SETTING: &str =
    "SELECT setting || ' ' || source FROM pg_settings WHERE name = 'log_min_duration_statement'";
const PG_AUTO_CONF: &str = "SELECT coalesce(string_agg(setting, ','), 'none') FROM pg_file_settings \
     WHERE name = 'log_min_duration_statement'";

/// Waits until a new session sees `want` (a reload reaches the server a moment later).
fn await_setting(server: &Server, want: &str) {
    let t = Instant::now();
    loop {
        let got = ask(server, PG_SETTING);
        if got == want {
            return;
        }
        assert!(t.elapsed() < Duration::from_secs(60), "{got}, not {want}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn postgres_capture_through_sql_puts_postgresql_auto_conf_back() {
    let s = Scratch::new();
    let Some(server) = start_with(
        Flavor::Postgres,
        &[
            ("logging_collector", "on"),
            ("log_destination", "stderr"),
            ("log_directory", "cap-log"),
            ("log_filename", "pg.log"),
            ("log_line_prefix", "%m [%p] %q%u@%d "),
        ],
    ) else {
        return;
    };
    ask(&server, "CREATE TABLE cap_t (a INT, b VARCHAR(20))");
    // postgresql.auto.conf holds a value of its own: it must come back as written.
    ask(
        &server,
        "ALTER SYSTEM SET log_min_duration_statement = '250ms'",
    );
    ask(&server, "SELECT pg_reload_conf()");
    await_setting(&server, "250 configuration file");
    assert_eq!(ask(&server, PG_AUTO_CONF), "250ms");
    let db = format!("--db={}", server.url());
    let cap = start_capture(
        &s,
        &[
            "capture",
            &db,
            "--time=0",
            "--collect=sql",
            "--output=cap.log",
        ],
    );
    assert!(
        cap.seen
            .iter()
            .any(|l| l.starts_with("changed: log_min_duration_statement 250ms -> 0")),
        "{:?}",
        cap.seen
    );
    run_workload(&server);
    let (code, out, err) = cap.end_with(libc::SIGINT);
    assert_eq!(code, Some(130), "{out}\n{err}");
    assert!(out.contains("through the server"), "{out}");
    assert_eq!(ask(&server, PG_AUTO_CONF), "250ms");
    await_setting(&server, "250 configuration file");
    let doc = assert_digest(&s, &out, "cap.log", "postgres-stderr", "postgres", true);
    assert_eq!(doc["files"][0]["capture"]["collected"], "sql");
    assert_eq!(
        doc["files"][0]["capture"]["log_line_prefix"],
        "%m [%p] %q%u@%d "
    );
    // Without an entry before, none after (ALTER SYSTEM RESET), from the file this time.
    ask(&server, "ALTER SYSTEM RESET log_min_duration_statement");
    ask(&server, "SELECT pg_reload_conf()");
    await_setting(&server, "-1 default");
    let cap = start_capture(
        &s,
        &[
            "capture",
            &db,
            "--time=0",
            "--collect=file",
            "--output=file.log",
        ],
    );
    run_workload(&server);
    let (code, out, err) = cap.end_with(libc::SIGINT);
    assert_eq!(code, Some(130), "{out}\n{err}");
    assert_eq!(ask(&server, PG_AUTO_CONF), "none");
    await_setting(&server, "-1 default");
    let doc = assert_digest(&s, &out, "file.log", "postgres-stderr", "postgres", true);
    assert_eq!(doc["files"][0]["capture"]["collected"], "file");
    // A user who is not superuser, with the grants the page names.
    for sql in [
        "CREATE ROLE ops LOGIN",
        "GRANT ALTER SYSTEM ON PARAMETER log_min_duration_statement TO ops",
        "GRANT EXECUTE ON FUNCTION pg_reload_conf() TO ops",
        "GRANT EXECUTE ON FUNCTION pg_current_logfile(text) TO ops",
        "GRANT EXECUTE ON FUNCTION pg_read_binary_file(text, bigint, bigint, boolean) TO ops",
        "GRANT EXECUTE ON FUNCTION pg_stat_file(text, boolean) TO ops",
        "GRANT pg_read_all_settings TO ops",
    ] {
        ask(&server, sql);
    }
    let ops = format!("--db=postgres://ops@127.0.0.1:{}/test", server.port());
    let cap = start_capture(
        &s,
        &[
            "capture",
            &ops,
            "--time=0",
            "--collect=sql",
            "--output=ops.log",
        ],
    );
    run_workload(&server);
    let (code, out, err) = cap.end_with(libc::SIGINT);
    assert_eq!(code, Some(130), "{out}\n{err}");
    assert_eq!(ask(&server, PG_AUTO_CONF), "none");
    await_setting(&server, "-1 default");
    // (Its own questions may be in it: it may not SET the setting for itself.)
    assert_digest(&s, &out, "ops.log", "postgres-stderr", "postgres", false);
}

#[test]
fn postgres_and_sqlite_refusals_change_nothing() {
    let s = Scratch::new();
    let r = s.run(&["capture", "--db=sqlite:x.db", "--time=1"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(r.stderr.contains("SQLite has no query log"), "{}", r.stderr);
    let Some(server) = start(Flavor::Postgres) else {
        return;
    };
    ask(&server, "CREATE ROLE weak LOGIN");
    let port = server.port();
    let r = s.run(&[
        "capture",
        &format!("--db=postgres://weak@127.0.0.1:{port}/test"),
        "--time=1",
    ]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("'weak' may not")
            && r.stderr.contains("superuser")
            && r.stderr
                .contains("ALTER SYSTEM on log_min_duration_statement"),
        "{}",
        r.stderr
    );
    // The throwaway server's log goes to its standard error.
    let db = format!("--db={}", server.url());
    let r = s.run(&["capture", &db, "--time=1"]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("logging_collector is off"),
        "{}",
        r.stderr
    );
    assert_eq!(ask(&server, PG_AUTO_CONF), "none");
    assert_eq!(ask(&server, PG_SETTING), "-1 default");
    let left: Vec<_> = std::fs::read_dir(s.dir.path())
        .expect("scratch")
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("capture-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// Waits for the capture to end by itself: exit code, stdout, stderr.
fn wait_end(mut r: Running) -> (Option<i32>, String, String) {
    let mut err = String::new();
    if let Some(mut e) = r.child.stderr.take() {
        let _ = e.read_to_string(&mut err);
    }
    let status = r.child.wait().expect("dbmeter capture ends");
    r.seen.extend(r.lines.iter());
    (status.code(), r.seen.join("\n"), err)
}

#[test]
fn mariadb_capture_after_a_lost_connection() {
    let s = Scratch::new();
    let Some(mut server) = start(Flavor::MariaDb) else {
        return;
    };
    ask(&server, "CREATE TABLE cap_t (a INT, b VARCHAR(20))");
    let before = ask(&server, MY_GLOBALS);
    let db = format!("--db={}", server.url());
    // The capture's connection is killed: it reconnects, puts the settings
    // back, keeps what was logged, and says the capture ended there.
    let cap = start_capture(&s, &["capture", &db, "--time=0", "--output=cap.log"]);
    run_workload(&server);
    let theirs = ask(
        &server,
        "SELECT id FROM information_schema.processlist WHERE id <> CONNECTION_ID() \
         AND user = 'root' AND command = 'Sleep'",
    );
    assert_eq!(theirs.lines().count(), 1, "{theirs}");
    ask(&server, &format!("KILL {theirs}"));
    let (code, out, err) = wait_end(cap);
    assert_eq!(code, Some(1), "{out}\n{err}");
    assert!(
        err.contains("the connection to the server was lost"),
        "{err}"
    );
    assert!(out.contains("restored: "), "{out}\n{err}");
    assert_eq!(ask(&server, MY_GLOBALS), before);
    let doc = s
        .ok(&["digest", "cap.log", "--format=json", "--limit=0"])
        .json();
    for (fp, _) in workload(0) {
        assert_eq!(count_of(&doc, fp), N as u64, "{fp}: {doc}");
    }
    assert_eq!(doc["files"][0]["capture"]["restored"], true);
    // The server is gone for good: what to run by hand, exit code 1.
    let cap = start_capture(&s, &["capture", &db, "--time=0", "--output=gone.log"]);
    server.kill();
    let (code, out, err) = wait_end(cap);
    assert_eq!(code, Some(1), "{out}\n{err}");
    assert!(err.contains("NOT as they were; run these by hand"), "{err}");
    assert!(
        err.contains("SET GLOBAL long_query_time = 10.000000;"),
        "{err}"
    );
    assert!(err.contains("SET GLOBAL slow_query_log = 0;"), "{err}");
    let text = std::fs::read_to_string(s.path("gone.log")).expect("the capture is written");
    assert!(text.contains("\"restored\":false"), "{text}");
}

#[test]
fn postgres_capture_of_a_jsonlog_across_a_rotation() {
    let s = Scratch::new();
    let Some(server) = start_with(
        Flavor::Postgres,
        &[
            ("logging_collector", "on"),
            ("log_destination", "jsonlog"),
            ("log_directory", "cap-log"),
            // A new name each second: a rotation makes a new file.
            ("log_filename", "pg-%H%M%S.log"),
        ],
    ) else {
        return;
    };
    ask(&server, "CREATE TABLE cap_t (a INT, b VARCHAR(20))");
    let db = format!("--db={}", server.url());
    let cap = start_capture(&s, &["capture", &db, "--time=0", "--output=cap.log"]);
    assert!(
        cap.seen.iter().any(|l| l.contains("on this machine")),
        "{:?}",
        cap.seen
    );
    let first = ask(&server, "SELECT pg_current_logfile('jsonlog')");
    // The workload's first half, a rotation to a file of another name, the rest.
    let sql = script();
    let lines: Vec<&str> = sql.lines().collect();
    let (a, b) = lines.split_at(lines.len() / 2);
    for part in [a, b] {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("w.sql");
        std::fs::write(&path, part.join("\n")).expect("write the script");
        let out = std::process::Command::new("psql")
            .args([
                "-X",
                "-q",
                "-h",
                "127.0.0.1",
                "-p",
                &server.port().to_string(),
            ])
            .args([
                "-U",
                "postgres",
                "-d",
                "test",
                "-v",
                "ON_ERROR_STOP=1",
                "-f",
            ])
            .arg(&path)
            .output()
            .expect("run psql");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        if part == a {
            std::thread::sleep(Duration::from_millis(1100));
            ask(&server, "SELECT pg_rotate_logfile()");
            let t = Instant::now();
            while ask(&server, "SELECT pg_current_logfile('jsonlog')") == first {
                assert!(t.elapsed() < Duration::from_secs(60), "no rotation");
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
    let (code, out, err) = cap.end_with(libc::SIGINT);
    assert_eq!(code, Some(130), "{out}\n{err}");
    assert!(out.contains("(rotation)"), "{out}");
    let doc = assert_digest(&s, &out, "cap.log", "postgres-json", "postgres", false);
    assert!(
        doc["files"][0]["capture"]["notes"]
            .to_string()
            .contains("(rotation)"),
        "{doc}"
    );
    assert_eq!(doc["files"][0]["capture"]["collected"], "file");
    // Its session ended by the server: it reconnects, puts the setting
    // back, keeps what was logged, exit code 1.
    let cap = start_capture(&s, &["capture", &db, "--time=0", "--output=lost.log"]);
    run_workload(&server);
    let ended = ask(
        &server,
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
         WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'",
    );
    assert_eq!(ended, "1");
    let (code, out, err) = wait_end(cap);
    assert_eq!(code, Some(1), "{out}\n{err}");
    assert!(
        err.contains("the connection to the server was lost"),
        "{err}"
    );
    assert_eq!(ask(&server, PG_AUTO_CONF), "none");
    await_setting(&server, "-1 default");
    let doc = s
        .ok(&["digest", "lost.log", "--format=json", "--limit=0"])
        .json();
    for (fp, _) in workload(0) {
        assert_eq!(count_of(&doc, fp), N as u64, "{fp}: {doc}");
    }
}

#[test]
fn postgres_capture_of_a_csvlog_through_sql() {
    let s = Scratch::new();
    let Some(server) = start_with(
        Flavor::Postgres,
        &[
            ("logging_collector", "on"),
            ("log_destination", "csvlog"),
            ("log_directory", "cap-log"),
            ("log_filename", "pg.log"),
        ],
    ) else {
        return;
    };
    ask(&server, "CREATE TABLE cap_t (a INT, b VARCHAR(20))");
    let db = format!("--db={}", server.url());
    let cap = start_capture(
        &s,
        &[
            "capture",
            &db,
            "--time=0",
            "--collect=sql",
            "--output=cap.log",
        ],
    );
    run_workload(&server);
    let (code, out, err) = cap.end_with(libc::SIGINT);
    assert_eq!(code, Some(130), "{out}\n{err}");
    assert!(out.contains("through the server"), "{out}");
    let doc = assert_digest(&s, &out, "cap.log", "postgres-csv", "postgres", true);
    assert_eq!(doc["files"][0]["capture"]["collected"], "sql");
    assert_eq!(
        doc["files"][0]["capture"]["source"]
            .as_str()
            .map(|f| f.ends_with(".csv")),
        Some(true),
        "{doc}"
    );
    // Put back as it was.
    await_setting(&server, "-1 default");
}
