//! Bad input and faults (issue 21): extreme option values are one usage
//! line, not a panic; a huge rate neither hangs nor overruns its time;
//! an empty --db and unknown --ignore-errors codes are refused; signals
//! that arrive together count as one; the last interval is never a
//! sliver; a looping script and a script's SQL error are described as
//! what they are; campaign files' type errors and stores.

use crate::common::{Run, Scratch};
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A usage error: exit 2, one line on stderr that names `option`, no
/// panic, no report.
fn assert_usage_line(r: &Run, what: &str, option: &str) {
    assert_eq!(r.code, 2, "{what}:\n{}\n{}", r.stdout, r.stderr);
    assert!(!r.stderr.contains("panicked"), "{what}: {}", r.stderr);
    assert_eq!(
        r.stderr.trim_end().lines().count(),
        1,
        "{what}: {}",
        r.stderr
    );
    assert!(r.stderr.contains(option), "{what}: {}", r.stderr);
    assert!(!r.stdout.contains("total time:"), "{what}: {}", r.stdout);
}

#[test]
fn extreme_values_of_the_general_options_are_one_usage_line() {
    let s = Scratch::new();
    for (option, value) in [
        ("time", "1e300"),
        ("time", "1e-300"),
        ("time", "-1"),
        ("time", "nan"),
        ("time", "inf"),
        ("warmup-time", "1e300"),
        ("report-interval", "1e300"),
        ("report-interval", "0.0001"),
        ("rate", "1e300"),
        ("rate", "1e-300"),
        ("rate", "-5"),
        ("connect-rate", "1e-300"),
        ("reconnect-timeout", "1e300"),
        ("reconnect-timeout", "0"),
        ("abandon-timeout", "1e300"),
        ("query-timeout", "1e300"),
        ("forced-shutdown", "1e300"),
        ("threads", "1000000"),
        ("events", "1e300"),
    ] {
        let arg = format!("--{option}={value}");
        let r = s.run(&["run", "noop", "--time=1", &arg]);
        assert_usage_line(&r, &arg, &format!("--{option}"));
    }
    // The largest values accepted are documented and accepted.
    let r = s.run(&[
        "run",
        "noop",
        "--events=10",
        "--time=31536000",
        "--warmup-time=0",
        "--reconnect-timeout=31536000",
        "--abandon-timeout=31536000",
        "--forced-shutdown=31536000",
        "--report-interval=31536000",
    ]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.stat("total number of events:"), 10);
}

#[test]
fn an_empty_db_is_a_usage_error_not_the_default_file() {
    let s = Scratch::new();
    // As a failed `URL=$(dbmeter server start ...)` would give.
    for cmd in ["run", "prepare"] {
        let r = s.run(&[cmd, "oltp_point_select", "--db=", "--time=1"]);
        assert_usage_line(&r, cmd, "--db");
        assert!(
            !s.path("dbmeter.sqlite").exists(),
            "{cmd} made the default file"
        );
    }
}

#[test]
fn unknown_ignore_errors_codes_are_refused_with_the_valid_ones() {
    let s = Scratch::new();
    s.ok(&[
        "prepare",
        "oltp_point_select",
        "--table-size=100",
        "--db=sqlite:t.db",
    ]);
    let r = s.run(&[
        "run",
        "oltp_point_select",
        "--table-size=100",
        "--db=sqlite:t.db",
        "--time=1",
        "--ignore-errors=abc,xyz",
    ]);
    assert_usage_line(&r, "abc,xyz", "--ignore-errors=abc,xyz");
    assert!(r.stderr.contains("SQLITE_ABC, SQLITE_XYZ"), "{}", r.stderr);
    assert!(r.stderr.contains("BUSY, LOCKED"), "{}", r.stderr);
    // sysbench's spelling of the option, and MySQL codes on SQLite.
    let r = s.run(&[
        "run",
        "oltp_point_select",
        "--db=sqlite:t.db",
        "--mysql-ignore-errors=1213",
    ]);
    assert_usage_line(&r, "1213 on SQLite", "--ignore-errors=1213");
    // Known names, with or without their prefix, and 'all', run.
    for ok in ["busy,SQLITE_LOCKED", "all", "none"] {
        let r = s.ok(&[
            "run",
            "oltp_point_select",
            "--table-size=100",
            "--db=sqlite:t.db",
            "--events=20",
            "--time=0",
            "--format=json",
            &format!("--ignore-errors={ok}"),
        ]);
        assert_eq!(r.json()["totals"]["events"], 20, "{ok}");
    }
}

#[test]
fn the_highest_rate_ends_in_time_and_reports_the_time_measured() {
    let s = Scratch::new();
    let started = Instant::now();
    let r = s.ok(&[
        "run",
        "noop",
        "--rate=1000000",
        "--time=1",
        "--threads=2",
        "--format=json",
    ]);
    let wall = started.elapsed().as_secs_f64();
    let j = r.json();
    let measured = j["totals"]["duration_s"].as_f64().unwrap();
    // It ran its second, and what it reports is no more than it took.
    assert!(measured >= 1.0, "{measured}");
    assert!(measured <= wall, "reported {measured} s in {wall} s");
    // --time plus the stop grace (0.3 s); the rest is a generous margin
    // for start-up and a loaded machine (it never ended before the fix).
    assert!(wall < 10.0, "{wall} s");
    let events = j["totals"]["events"].as_u64().unwrap();
    assert!(events > 0);
    let sum: u64 = j["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["events"].as_u64().unwrap())
        .sum();
    assert_eq!(sum, events);
}

/// The intervals of a run's JSON document: none shorter than a tenth of
/// `interval_s`, their events summing to the total, their durations to
/// the measured time.
fn assert_no_sliver(j: &serde_json::Value, interval_s: f64) {
    let iv = j["intervals"].as_array().unwrap();
    assert!(!iv.is_empty(), "{j}");
    for i in iv {
        let d = i["duration_s"].as_f64().unwrap();
        assert!(d >= interval_s / 10.0, "a {d} s interval in {iv:?}");
    }
    let events: u64 = iv.iter().map(|i| i["events"].as_u64().unwrap()).sum();
    assert_eq!(events, j["totals"]["events"].as_u64().unwrap());
    let time: f64 = iv.iter().map(|i| i["duration_s"].as_f64().unwrap()).sum();
    let total = j["totals"]["duration_s"].as_f64().unwrap();
    assert!((time - total).abs() < 1e-3, "{time} vs {total}");
}

#[test]
fn a_run_of_whole_intervals_has_no_sliver_at_its_end() {
    let s = Scratch::new();
    for _ in 0..3 {
        let r = s.ok(&[
            "run",
            "noop",
            "--time=1",
            "--report-interval=0.25",
            "--threads=2",
            "--format=json",
        ]);
        assert_no_sliver(&r.json(), 0.25);
    }
    // Without --report-interval: a 1 s series, in the --output file.
    s.ok(&[
        "run",
        "noop",
        "--time=2",
        "--output=r.json",
        "--format=json",
    ]);
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(s.path("r.json")).unwrap()).unwrap();
    assert_no_sliver(&j, 1.0);
}

/// A dbmeter started in a process group of its own, its output collected
/// as it comes.
struct Bg {
    child: Child,
    out: Arc<Mutex<String>>,
    err: Arc<Mutex<String>>,
}

fn collect(mut from: impl Read + Send + 'static, into: Arc<Mutex<String>>) {
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = from.read(&mut buf) {
            if n == 0 {
                break;
            }
            into.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
}

impl Bg {
    fn start(s: &Scratch, args: &[&str]) -> Bg {
        let mut c = s.cmd(args);
        c.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let mut child = c.spawn().expect("start dbmeter");
        let (out, err) = (Arc::default(), Arc::default());
        collect(child.stdout.take().unwrap(), Arc::clone(&out));
        collect(child.stderr.take().unwrap(), Arc::clone(&err));
        Bg { child, out, err }
    }

    fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// Waits up to `limit` for `text` in stdout (`err`: stderr).
    fn wait_for(&mut self, err: bool, text: &str, limit: Duration) -> bool {
        let until = Instant::now() + limit;
        while Instant::now() < until {
            let seen = if err { &self.err } else { &self.out };
            if seen.lock().unwrap().contains(text) {
                return true;
            }
            if self.child.try_wait().ok().flatten().is_some() {
                std::thread::sleep(Duration::from_millis(200));
                return seen.lock().unwrap().contains(text);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// Waits up to `limit` for the end: the exit code (None: killed by a
    /// signal, or still running and then killed), stdout, stderr.
    fn end(mut self, limit: Duration) -> (Option<i32>, String, String) {
        let until = Instant::now() + limit;
        let code = loop {
            if let Some(st) = self.child.try_wait().expect("wait") {
                break st.code();
            }
            if Instant::now() >= until {
                // SAFETY: killing the process group of our own child.
                unsafe { libc::kill(-self.pid(), libc::SIGKILL) };
                let _ = self.child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        // The readers may still hold the last lines.
        std::thread::sleep(Duration::from_millis(200));
        let out = self.out.lock().unwrap().clone();
        let err = self.err.lock().unwrap().clone();
        (code, out, err)
    }
}

#[test]
fn two_signals_sent_together_count_as_one_and_the_report_is_kept() {
    let s = Scratch::new();
    let mut kept = 0;
    let tries = 20;
    for i in 0..tries {
        let mut run = Bg::start(&s, &["run", "noop", "--time=120", "--threads=2"]);
        assert!(
            run.wait_for(false, "Threads started!", Duration::from_secs(60)),
            "try {i}: the run did not start"
        );
        // As GNU timeout does: the process, then its process group.
        // SAFETY: signals to our own child and its group.
        unsafe {
            libc::kill(run.pid(), libc::SIGINT);
            libc::kill(-run.pid(), libc::SIGINT);
        }
        let (code, out, err) = run.end(Duration::from_secs(60));
        assert_eq!(code, Some(130), "try {i}:\n{out}\n{err}");
        assert!(
            out.contains("total time:"),
            "try {i}: no report\n{out}\n{err}"
        );
        assert!(err.contains("interrupted"), "try {i}: {err}");
        kept += 1;
    }
    assert_eq!(kept, tries);
}

/// A script whose event never ends; it leaves the file `spinning` when
/// it starts looping.
const SPIN: &str =
    "function event()\n  io.open('spinning', 'w'):close()\n  while true do end\nend\n";

#[test]
fn a_signal_after_the_acknowledgement_exits_at_once() {
    let s = Scratch::new();
    std::fs::write(s.path("spin.lua"), SPIN).unwrap();
    s.ok(&[
        "prepare",
        "oltp_point_select",
        "--table-size=10",
        "--db=sqlite:t.db",
    ]);
    // The event loops in Lua, so the stop waits for --abandon-timeout.
    let mut run = Bg::start(
        &s,
        &[
            "run",
            "./spin.lua",
            "--db=sqlite:t.db",
            "--time=600",
            "--abandon-timeout=600",
        ],
    );
    // Once the event loops (a signal before it would stop the run at once).
    let until = Instant::now() + Duration::from_secs(60);
    while !s.path("spinning").exists() {
        assert!(Instant::now() < until, "the event did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(run.pid(), libc::SIGINT) };
    let ack = "stopping: finishing the events in flight; send the signal again to exit now";
    if !run.wait_for(true, ack, Duration::from_secs(30)) {
        let (code, out, err) = run.end(Duration::from_secs(5));
        panic!("no acknowledgement (exit {code:?}):\n{out}\n{err}");
    }
    let sent = Instant::now();
    // SAFETY: as above.
    unsafe { libc::kill(run.pid(), libc::SIGINT) };
    let (code, out, err) = run.end(Duration::from_secs(60));
    assert_eq!(code, Some(130), "{out}\n{err}");
    assert!(
        sent.elapsed() < Duration::from_secs(30),
        "{:?}",
        sent.elapsed()
    );
    assert!(!out.contains("total time:"), "{out}");
}

#[test]
fn a_script_that_loops_forever_is_said_to_be_busy_in_the_script() {
    let s = Scratch::new();
    std::fs::write(s.path("spin.lua"), SPIN).unwrap();
    s.ok(&[
        "prepare",
        "oltp_point_select",
        "--table-size=10",
        "--db=sqlite:t.db",
    ]);
    let r = s.run(&[
        "run",
        "./spin.lua",
        "--db=sqlite:t.db",
        "--time=1",
        "--abandon-timeout=2",
    ]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("1 user still busy in the script"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("waiting on the server"), "{}", r.stderr);
    // The run still reports what it measured.
    assert!(r.stdout.contains("total time:"), "{}", r.stdout);
}

#[test]
fn a_script_sql_error_names_the_script_file_and_line() {
    let s = Scratch::new();
    std::fs::write(
        s.path("bad.lua"),
        "function event()\n  local con = sysbench.sql.driver():connect()\n  con:query(\"SELECT 1\")\n  con:query(\"SELECT * FROM no_such_table\")\nend\n",
    )
    .unwrap();
    s.ok(&[
        "prepare",
        "oltp_point_select",
        "--table-size=10",
        "--db=sqlite:t.db",
    ]);
    let r = s.run(&["run", "./bad.lua", "--db=sqlite:t.db", "--time=5"]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("bad.lua:4: SQL error"), "{}", r.stderr);
    assert!(!r.stderr.contains("prelude"), "{}", r.stderr);
}

#[test]
fn campaign_type_errors_name_the_key_the_type_the_file_and_the_line() {
    let s = Scratch::new();
    for (line, want) in [
        (
            "duration = \"60\"",
            "c.toml, line 2: duration: expected a number of seconds, found the string \"60\"",
        ),
        (
            "duration = 1\nclients = 4",
            "c.toml, line 3: clients: expected a list of whole numbers, e.g. [1, 8, 32], found the whole number 4",
        ),
    ] {
        let text = format!(
            "name = \"t\"\n{line}\n[[target]]\nname = \"a\"\nurl = \"sqlite:a.db\"\n\n[[workload]]\nname = \"noop\"\n"
        );
        std::fs::write(s.path("c.toml"), text).unwrap();
        let r = s.run_home(&["campaign", "run", "c.toml", "--dry-run"]);
        assert_ne!(r.code, 0, "{}", r.stdout);
        assert!(r.stderr.contains(want), "{}", r.stderr);
        assert!(
            !r.stderr.contains("f64") && !r.stderr.contains("u32"),
            "{}",
            r.stderr
        );
    }
}

#[test]
fn compare_and_report_find_the_store_the_campaign_file_names() {
    let s = Scratch::new();
    std::fs::write(
        s.path("camp.toml"),
        "name = \"faults\"\nstore = \"camp.db\"\nduration = 1\nclients = [1]\n\n\
         [[target]]\nname = \"a\"\nurl = \"sqlite:a.db\"\n\n\
         [[target]]\nname = \"b\"\nurl = \"sqlite:b.db\"\n\n\
         [[workload]]\nname = \"oltp_point_select\"\noptions = { table-size = 100 }\n",
    )
    .unwrap();
    let r = s.run_home(&["campaign", "run", "camp.toml"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(s.path("camp.db").exists());
    // Neither --store nor the default store (in the scratch home) holds them.
    let said = "using the results store ";
    let r = s.run_home(&["compare", "--baseline", "campaign:faults variant:a"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains(said) && r.stderr.contains("camp.db"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("camp.toml"), "{}", r.stderr);
    assert!(r.stdout.contains("oltp_point_select"), "{}", r.stdout);
    // The campaign file itself as the selector.
    let r = s.run_home(&["compare", "--baseline", "camp.toml variant:a"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    for sel in ["campaign:faults", "camp.toml"] {
        let r = s.run_home(&["report", sel, "--output=r.html"]);
        assert_eq!(r.code, 0, "{sel}:\n{}\n{}", r.stdout, r.stderr);
        assert!(r.stderr.contains(said), "{sel}: {}", r.stderr);
        assert!(
            std::fs::read_to_string(s.path("r.html"))
                .unwrap()
                .contains("faults")
        );
    }
    // --store still wins, and says nothing about the campaign's.
    let other = format!("--store={}", s.path("none.db").display());
    let r = s.run_home(&["compare", "--baseline", "campaign:faults", &other]);
    assert_ne!(r.code, 0);
    assert!(!r.stderr.contains(said), "{}", r.stderr);
}

#[test]
fn a_campaign_signalled_twice_together_still_stores_its_run() {
    let s = Scratch::new();
    std::fs::write(
        s.path("sig.toml"),
        "name = \"sig\"\nstore = \"sig.db\"\nduration = 120\nclients = [1]\n\n\
         [[target]]\nname = \"a\"\nurl = \"sqlite:a.db\"\n\n\
         [[workload]]\nname = \"noop\"\n",
    )
    .unwrap();
    for i in 0..5 {
        let mut c = Bg::start(&s, &["campaign", "run", "sig.toml"]);
        assert!(
            c.wait_for(false, "[1/1]", Duration::from_secs(60)),
            "try {i}: the campaign did not start its run"
        );
        // SAFETY: signals to our own child and its group.
        unsafe {
            libc::kill(c.pid(), libc::SIGINT);
            libc::kill(-c.pid(), libc::SIGINT);
        }
        let (code, out, err) = c.end(Duration::from_secs(60));
        assert_eq!(code, Some(130), "try {i}:\n{out}\n{err}");
        // It ended its own way: the summary line, and the run stored.
        assert!(
            out.contains("campaign 'sig': 1 stored"),
            "try {i}:\n{out}\n{err}"
        );
    }
    let r = s.run_home(&[
        "results",
        "list",
        "campaign:sig",
        "--format=json",
        &format!("--store={}", s.path("sig.db").display()),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let runs = r.json();
    assert_eq!(runs.as_array().unwrap().len(), 5, "{runs}");
}
