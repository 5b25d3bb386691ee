//! A server host that vanishes without closing its connections (no reset,
//! no answer: a pulled cable, a frozen VM, a firewall that starts dropping
//! packets) must not keep a run waiting forever; neither must a server
//! that accepts connections and never answers.
//!
//! The vanished host is played by a TCP proxy in this test, between
//! dbmeter and a throwaway server: it forwards bytes both ways until it is
//! told to go silent, then keeps every socket open and forwards nothing
//! more, and takes new connections without answering them (so the
//! interrupt's own connection, KILL QUERY or a cancel request, gets
//! nowhere either).

use crate::common::*;
use crate::procs::Watched;
use dbmeter_server::Flavor;
use dbmeter_testkit::servers::start;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The proxy: its port, and the switch that makes it go silent.
struct Proxy {
    port: u16,
    silent: Arc<AtomicBool>,
}

impl Proxy {
    /// Forwards 127.0.0.1:<its port> to 127.0.0.1:`upstream`.
    fn start(upstream: u16) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the proxy");
        let port = listener.local_addr().unwrap().port();
        let silent = Arc::new(AtomicBool::new(false));
        // Every socket stays open until the test ends: a vanished host
        // closes nothing.
        let held: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
        let s = silent.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                if s.load(Ordering::SeqCst) {
                    held.lock().unwrap().push(client);
                    continue;
                }
                let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else {
                    continue;
                };
                for (from, to) in [(&client, &server), (&server, &client)] {
                    let (from, to) = (from.try_clone().unwrap(), to.try_clone().unwrap());
                    let s = s.clone();
                    std::thread::spawn(move || pump(from, to, &s));
                }
                held.lock().unwrap().extend([client, server]);
            }
        });
        Proxy { port, silent }
    }

    fn go_silent(&self) {
        self.silent.store(true, Ordering::SeqCst);
    }
}

/// Copies `from` to `to` until the proxy goes silent; from then on what
/// arrives is dropped and nothing is closed.
fn pump(mut from: TcpStream, mut to: TcpStream, silent: &AtomicBool) {
    let mut buf = [0u8; 16 * 1024];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => {
                if !silent.load(Ordering::SeqCst) {
                    let _ = to.shutdown(Shutdown::Write);
                }
                return;
            }
            Ok(n) => {
                if !silent.load(Ordering::SeqCst) && to.write_all(&buf[..n]).is_err() {
                    return;
                }
            }
        }
    }
}

fn url(flavor: Flavor, port: u16, params: &str) -> String {
    match flavor {
        Flavor::MariaDb => format!("--db=mysql://root@127.0.0.1:{port}/test{params}"),
        Flavor::Postgres => format!("--db=postgres://postgres@127.0.0.1:{port}/test{params}"),
    }
}

/// The server's host vanishes 1 s into a 4 s run: every user is then
/// blocked reading an answer that never comes. At the time limit plus
/// --forced-shutdown (1 s) the users are interrupted, which cannot reach
/// the server either; 10 s (--abandon-timeout) later the run stops waiting
/// for them, says so in one line, and fails: exit code 1, `failed` in the
/// JSON document, the report of what was measured before.
fn a_vanished_host_ends_the_run(flavor: Flavor) {
    let Some(server) = start(flavor) else {
        return;
    };
    let s = Scratch::new();
    s.ok(&[
        "prepare",
        "oltp_point_select",
        &url(flavor, server.port(), ""),
        "--table-size=1000",
    ]);
    let proxy = Proxy::start(server.port());
    let mut run = Watched::spawn(s.cmd(&[
        "run",
        "oltp_point_select",
        &url(flavor, proxy.port, ""),
        "--table-size=1000",
        "--threads=3",
        "--time=4",
        "--report-interval=1",
        "--format=json",
        "--output=run.json",
    ]));
    assert!(
        run.wait_for_line(Duration::from_secs(60), |l| l.starts_with("[ 1s ]")),
        "the run did not get under way:\n{}\n{}",
        run.stdout(),
        run.stderr()
    );
    proxy.go_silent();
    let silent_at = Instant::now();
    // Expected: about 3 s of --time left, 1 s of --forced-shutdown, 10 s
    // of --abandon-timeout; allowed: three times that.
    let end = run.finish(Duration::from_secs(90));
    let waited = silent_at.elapsed();
    assert!(
        end.in_time && waited < Duration::from_secs(45),
        "still running {waited:?} after the host vanished:\n{}",
        end.output()
    );
    assert_eq!(end.code, Some(1), "{}", end.output());
    let said: Vec<&str> = end
        .stderr
        .lines()
        .filter(|l| l.contains("abandoned"))
        .collect();
    assert_eq!(said.len(), 1, "{}", end.output());
    assert!(
        said[0].starts_with(
            "dbmeter: error: 3 users still waiting on the server 10 s after being interrupted; abandoned them"
        ),
        "{}",
        end.output()
    );
    assert!(!end.stderr.contains("panicked"), "{}", end.output());
    assert!(end.stdout.contains("SQL statistics:"), "{}", end.output());
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(s.path("run.json")).unwrap())
            .expect("the JSON document");
    assert_eq!(doc["end"]["reason"], "failed", "{}", doc["end"]);
    assert!(
        doc["end"]["error"]
            .as_str()
            .is_some_and(|e| e.contains("abandoned them")),
        "{}",
        doc["end"]
    );
    assert!(
        doc["totals"]["events"].as_u64().unwrap_or(0) > 0,
        "{}",
        doc["totals"]
    );
}

#[test]
fn a_vanished_host_ends_the_run_on_mariadb() {
    a_vanished_host_ends_the_run(Flavor::MariaDb);
}

#[test]
fn a_vanished_host_ends_the_run_on_postgres() {
    a_vanished_host_ends_the_run(Flavor::Postgres);
}

/// A port that accepts connections and never answers (the kernel
/// completes the TCP handshake; nobody reads): connecting fails after the
/// connect timeout (`connect_timeout=2` here; 30 s by default) with one
/// line that says what happened. No server needed.
fn a_silent_port_fails_the_connection(flavor: Flavor) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let s = Scratch::new();
    let run = Watched::spawn(s.cmd(&[
        "run",
        "oltp_point_select",
        &url(flavor, port, "?connect_timeout=2"),
        "--time=5",
    ]));
    let end = run.finish(Duration::from_secs(60));
    assert!(
        end.in_time && end.elapsed < Duration::from_secs(30),
        "{:?}:\n{}",
        end.elapsed,
        end.output()
    );
    assert_eq!(end.code, Some(1), "{}", end.output());
    let line = end.stderr.trim();
    assert_eq!(line.lines().count(), 1, "{}", end.output());
    assert!(
        line.starts_with("dbmeter: error: cannot connect to"),
        "{line}"
    );
    assert!(
        line.contains("the server accepted the connection but did not answer within 2 s"),
        "{line}"
    );
    drop(listener);
}

#[test]
fn a_silent_port_fails_the_connection_on_mysql() {
    a_silent_port_fails_the_connection(Flavor::MariaDb);
}

#[test]
fn a_silent_port_fails_the_connection_on_postgres() {
    a_silent_port_fails_the_connection(Flavor::Postgres);
}
