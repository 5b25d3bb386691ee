//! What a user at a terminal sees while a run goes on (a live status
//! line, a sane load bar), how a run stopped by SIGTERM ends, and that a
//! failed start leaves an older --output file as it was.
//!
//! A terminal is given by util-linux's `script`, which runs the command
//! on a pseudo-terminal and copies what it writes.

use crate::common::{Scratch, bin};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs `dbmeter ARGS` on a pseudo-terminal; what it wrote there.
fn on_terminal(s: &Scratch, args: &str) -> String {
    let o = Command::new("script")
        .args(["-qec", &format!("{} {args}", bin()), "/dev/null"])
        .current_dir(s.dir.path())
        .env_remove("COLUMNS")
        .stdin(Stdio::null())
        .output()
        .expect("script (util-linux)");
    assert!(
        o.status.success(),
        "{args}: {}",
        String::from_utf8_lossy(&o.stdout)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn a_run_on_a_terminal_shows_a_live_status_line() {
    let s = Scratch::new();
    let out = on_terminal(&s, "run noop --time=3");
    // Redrawn in place once a second with the run's time and its ETA,
    // and erased before the report.
    let frames: Vec<&str> = out
        .split("\r\x1b[2K")
        .filter(|f| f.starts_with("[ ") && f.contains("ETA"))
        .collect();
    assert!(!frames.is_empty(), "{out:?}");
    for f in &frames {
        // noop issues no SQL: events, not transactions, per second.
        for want in ["s/3s ETA ", "eps: ", "lat (ms,95%): ", "errors: 0"] {
            assert!(f.contains(want), "{f:?}");
        }
    }
    assert!(out.contains("General statistics:"), "{out}");
    let report_at = out.find("General statistics:").unwrap_or(0);
    assert!(
        !out[report_at..].contains("ETA"),
        "the status line is gone before the report"
    );

    // Interval lines replace it.
    let out = on_terminal(&s, "run noop --time=2 --report-interval=1");
    assert!(!out.contains("ETA"), "{out}");
    assert!(out.contains("[ 1s ] thds: 1 eps:"), "{out}");

    // Not on a terminal: nothing of it.
    let r = s.ok(&["run", "noop", "--time=2"]);
    assert!(!r.stderr.contains("ETA") && !r.stdout.contains("ETA"));
    assert!(!r.stderr.contains('\x1b'), "{:?}", r.stderr);
}

#[test]
fn the_load_bar_starts_with_a_sane_rate() {
    let s = Scratch::new();
    let out = on_terminal(&s, "prepare oltp_read_write --table-size=200000");
    // `Loaded N rows in 1 table in X s (R rows/s)`
    let overall: f64 = out
        .split(['\r', '\n'])
        .find_map(|l| l.split_once("Loaded ").map(|(_, rest)| rest))
        .and_then(|l| l.rsplit_once('(').map(|(_, r)| r))
        .and_then(|r| r.split_whitespace().next())
        .and_then(|r| r.parse().ok())
        .unwrap_or_else(|| panic!("no load line: {out}"));
    let mut frames = 0;
    for frame in out.split(['\r', '\n']) {
        // A bar frame: `ELAPSED [===>  ] N/M rows, R rows/s, ETA T`.
        let Some((_, bar)) = frame.split_once(" rows, ") else {
            continue;
        };
        let Some((before, _)) = bar.split_once(" rows/s") else {
            continue;
        };
        let Some(rate) = before.rsplit(' ').next() else {
            continue;
        };
        if rate == "-" || rate.is_empty() {
            frames += 1;
            continue;
        }
        let rate: f64 = rate.parse().unwrap_or_else(|_| panic!("{frame:?}"));
        frames += 1;
        // The bug this guards against read 1,437,630,142 rows/s; the rate
        // of a frame is the mean since the bar appeared.
        assert!(
            rate <= overall * 20.0,
            "a frame reads {rate} rows/s, the load {overall}: {frame:?}"
        );
    }
    assert!(frames > 0, "{out:?}");
}

#[test]
fn sigterm_ends_a_run_with_143_and_its_report() {
    let s = Scratch::new();
    let mut child = s.spawn(&["run", "noop", "--time=60", "--format=json"]);
    // Let it start measuring.
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: sending a signal to the child we started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let started = Instant::now();
    let o = child_output(&mut child);
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(o.0, 143, "{}", o.2);
    let doc: serde_json::Value = serde_json::from_str(&o.1).expect("the JSON document");
    assert_eq!(doc["end"]["reason"], "interrupted");
    assert!(o.2.contains("interrupted"), "{}", o.2);
}

fn child_output(child: &mut std::process::Child) -> (i32, String, String) {
    use std::io::Read;
    let mut out = String::new();
    let mut err = String::new();
    if let Some(mut o) = child.stdout.take() {
        let _ = o.read_to_string(&mut out);
    }
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut err);
    }
    let code = child.wait().map_or(-1, |s| s.code().unwrap_or(-1));
    (code, out, err)
}

#[test]
fn a_failed_start_keeps_an_older_output_file() {
    let s = Scratch::new();
    let out = s.path("result.json");
    s.ok(&[
        "run",
        "noop",
        "--events=100",
        "--format=json",
        "--output=result.json",
    ]);
    let before = std::fs::read_to_string(&out).unwrap();
    assert!(before.contains("\"schema\""), "{before}");
    // A run that cannot start: no such database file for --db.
    let r = s.run(&[
        "run",
        "oltp_point_select",
        "--db=mysql://nobody@127.0.0.1:1/none",
        "--format=json",
        "--output=result.json",
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), before);
    // Nothing is left beside it.
    let names: Vec<String> = std::fs::read_dir(s.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.ends_with(".part")), "{names:?}");
    // A run that starts replaces it, keeping the file's mode.
    std::fs::set_permissions(&out, std::os::unix::fs::PermissionsExt::from_mode(0o640)).unwrap();
    s.ok(&[
        "run",
        "noop",
        "--events=7",
        "--format=json",
        "--output=result.json",
    ]);
    let after: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(after["totals"]["events"], 7);
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&out).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o640);
}
