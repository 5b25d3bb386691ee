//! Servers outlive the thread that started them, and die with the process
//! that started them, even when it is SIGKILLed (no Drop runs then).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use dbmeter_server::{Flavor, Server, ServerOptions};
use dbmeter_testkit::servers::can_run;

const HOLD: &str = "DBMETER_SERVER_TEST_HOLD";

#[test]
fn servers_die_with_their_process() {
    let flavor = Flavor::Postgres;
    if std::env::var_os(HOLD).is_some() {
        return hold(flavor);
    }
    if !can_run(flavor) {
        return;
    }
    // Run this test again in a child process, which starts a server and
    // waits; then kill the child.
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "orphans::servers_die_with_their_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(HOLD, "1")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let mut pid = 0;
    let mut log = String::new();
    for line in stdout.lines() {
        let line = line.unwrap();
        // libtest may print "test ... " before our line, on the same line.
        if let Some((_, rest)) = line.split_once("SERVER ") {
            let (p, l) = rest.split_once(' ').unwrap();
            pid = p.parse::<u32>().unwrap();
            log = l.to_string();
            break;
        }
    }
    assert!(pid > 0, "the child did not start a server");

    thread::sleep(Duration::from_millis(500));
    assert!(
        alive(pid),
        "the server died with the thread that started it"
    );
    child.kill().unwrap();
    child.wait().unwrap();

    let t = Instant::now();
    while alive(pid) && t.elapsed() < Duration::from_secs(10) {
        thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(pid), "server {pid} outlived its process");
    // The killed child could not clean up; do it for it.
    let scratch = std::path::Path::new(&log).parent().unwrap();
    assert!(
        scratch
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("dbmeter-")
    );
    std::fs::remove_dir_all(scratch).unwrap();
}

/// The child's part: start a server from a short-lived thread, say where
/// it is, wait to be killed.
fn hold(flavor: Flavor) {
    let server = thread::spawn(move || Server::start(&ServerOptions::new(flavor)).unwrap())
        .join()
        .unwrap();
    println!("SERVER {} {}", server.pid(), server.log_path().display());
    // Killed long before; if not, end rather than hang the parent.
    thread::sleep(Duration::from_secs(60));
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            s.rsplit_once(')')
                .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(false)
}
