//! What `dbmeter run` promises: the first-run experience, the JSON and CSV
//! documents, --rate, --rand-seed, warm-up, Ctrl-C.

use crate::common::*;
use std::time::{Duration, Instant};

#[test]
fn first_run_prepares_the_default_sqlite_file_and_reports() {
    let s = Scratch::new();
    let r = s.ok(&["run", "oltp_read_write", "--time=1"]);
    assert!(r.stdout.contains("preparing it now"), "{}", r.stdout);
    for section in [
        "SQL statistics:",
        "General statistics:",
        "Latency (ms):",
        "Threads fairness:",
        "99.9th percentile:",
    ] {
        assert!(
            r.stdout.contains(section),
            "missing {section} in\n{}",
            r.stdout
        );
    }
    assert!(exists(&s.path("dbmeter.sqlite")));
    // The second run finds the tables and does not prepare again.
    let r = s.ok(&["run", "oltp_read_write", "--time=1"]);
    assert!(!r.stdout.contains("preparing"), "{}", r.stdout);
}

#[test]
fn json_document_follows_schema_v1() {
    let s = Scratch::new();
    let r = s.ok(&[
        "run",
        "oltp_read_only",
        "--time=2",
        "--format=json",
        "--rand-seed=3",
        "--threads=2",
    ]);
    let j = r.json();
    assert_eq!(j["schema"], "dbmeter.run");
    assert_eq!(j["schema_version"], 3);
    assert_eq!(j["workload"], "oltp_read_only");
    assert_eq!(j["target"]["driver"], "sqlite");
    assert!(
        j["target"]["server_version"]
            .as_str()
            .unwrap()
            .starts_with("SQLite 3.")
    );
    assert_eq!(j["seed"], 3);
    assert_eq!(j["threads"], 2);
    assert_eq!(j["options"]["table-size"], "10000");
    assert_eq!(j["end"]["reason"], "time_limit");
    assert!(j["environment"]["cpus"].as_u64().unwrap() >= 1);
    let t = &j["totals"];
    let events = t["events"].as_u64().unwrap();
    assert!(events > 0);
    assert_eq!(t["counts"]["reads"].as_u64().unwrap(), events * 14);
    assert_eq!(t["counts"]["others"].as_u64().unwrap(), events * 2);
    assert_eq!(t["queries"].as_u64().unwrap(), events * 16);
    let dur = t["duration_s"].as_f64().unwrap();
    assert!((2.0..2.6).contains(&dur), "{dur}");
    // Percentiles as asked, real values within [min, max].
    let l = &j["latency_ms"];
    let (min, max) = (l["min_ms"].as_f64().unwrap(), l["max_ms"].as_f64().unwrap());
    let ps: Vec<f64> = l["percentiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["percentile"].as_f64().unwrap())
        .collect();
    assert_eq!(ps, vec![50.0, 95.0, 99.0, 99.9]);
    let mut last = 0.0;
    for p in l["percentiles"].as_array().unwrap() {
        let v = p["ms"].as_f64().unwrap();
        assert!(
            v >= min && v <= max && v >= last,
            "{v} outside [{min}, {max}] or decreasing"
        );
        last = v;
    }
    assert_eq!(l["count"].as_u64().unwrap(), events);
    assert!(j["latency_histogram"].as_str().unwrap().len() > 20);
    // The interval series adds up to the totals.
    let iv = j["intervals"].as_array().unwrap();
    assert!((2..=3).contains(&iv.len()), "{}", iv.len());
    let sum: u64 = iv.iter().map(|i| i["events"].as_u64().unwrap()).sum();
    assert_eq!(sum, events);
    assert!((iv[0]["t_s"].as_f64().unwrap() - 1.0).abs() < 0.01);
    assert!(j["fairness"]["events_avg"].as_f64().unwrap() > 0.0);
    assert!(j["errors"].is_object());
    assert!(j["rate"].is_null() && j["warmup"].is_null());
}

#[test]
fn output_file_while_console_shows_progress() {
    let s = Scratch::new();
    let r = s.ok(&[
        "run",
        "oltp_point_select",
        "--time=2",
        "--report-interval=1",
        "--format=json",
        "--output=r.json",
        "--percentile=90,99",
    ]);
    assert!(r.stdout.contains("[ 1s ] thds: 1 tps:"), "{}", r.stdout);
    assert!(r.stdout.contains("90th percentile:"), "{}", r.stdout);
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(s.path("r.json")).unwrap()).unwrap();
    assert_eq!(j["latency_ms"]["percentiles"].as_array().unwrap().len(), 2);

    let r = s.ok(&["run", "oltp_point_select", "--time=2", "--format=csv"]);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(
        lines[0].starts_with("t_s,duration_s,threads,events,tps,qps"),
        "{}",
        lines[0]
    );
    assert!(lines[0].contains("lat_p99_9_ms"), "{}", lines[0]);
    assert!((3..=4).contains(&lines.len()), "{}", r.stdout);
}

#[test]
fn rate_is_met_when_under_capacity() {
    let s = Scratch::new();
    s.ok(&["prepare", "oltp_point_select"]);
    let r = s.ok(&[
        "run",
        "oltp_point_select",
        "--rate=1000",
        "--time=5",
        "--threads=2",
        "--format=json",
        "--rand-seed=1",
    ]);
    let j = r.json();
    let achieved = j["rate"]["achieved_per_s"].as_f64().unwrap();
    assert!(
        (achieved - 1000.0).abs() / 1000.0 < 0.05,
        "achieved {achieved}/s"
    );
    assert_eq!(j["rate"]["target_per_s"], 1000.0);
    // Service time is recorded apart from latency (which counts from the intended start).
    assert!(j["service_latency_ms"]["count"].as_u64().unwrap() > 0);
    assert!(j["intervals"][0]["queue_length"].is_u64());
}

#[test]
fn rate_overload_reports_backlog_and_goes_on() {
    let s = Scratch::new();
    s.ok(&["prepare", "oltp_read_write", "--table-size=100000"]);
    let r = s.ok(&[
        "run",
        "oltp_read_write",
        "--table-size=100000",
        "--range-size=20000",
        "--rate=5000",
        "--time=2",
        "--report-interval=1",
    ]);
    assert!(r.stdout.contains("queue length:"), "{}", r.stdout);
    let backlog = r.stat("events not started at end:");
    assert!(backlog > 100, "{backlog}");
}

fn dump(s: &Scratch, file: &str) -> Vec<(i64, i64, String, String)> {
    let db = s.db(file);
    let mut st = db
        .prepare("SELECT id, k, c, pad FROM sbtest1 ORDER BY id")
        .unwrap();
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(|r| r.unwrap())
        .collect()
}

#[test]
fn same_seed_same_ids() {
    let s = Scratch::new();
    for (file, seed) in [("a.sqlite", "7"), ("b.sqlite", "7"), ("c.sqlite", "8")] {
        let db = format!("--db={file}");
        let seed = format!("--rand-seed={seed}");
        s.ok(&["prepare", "oltp_write_only", &db, "--table-size=500", &seed]);
        s.ok(&[
            "run",
            "oltp_write_only",
            &db,
            "--table-size=500",
            &seed,
            "--events=300",
            "--time=0",
        ]);
    }
    assert_eq!(dump(&s, "a.sqlite"), dump(&s, "b.sqlite"));
    assert_ne!(dump(&s, "a.sqlite"), dump(&s, "c.sqlite"));
}

#[test]
fn warmup_is_reported_apart_and_left_out() {
    let s = Scratch::new();
    s.ok(&["prepare", "oltp_point_select"]);
    let r = s.ok(&[
        "run",
        "oltp_point_select",
        "--warmup-time=1",
        "--time=1",
        "--format=json",
    ]);
    let j = r.json();
    let w = &j["warmup"];
    assert!(w["events"].as_u64().unwrap() > 100);
    assert!((w["duration_s"].as_f64().unwrap() - 1.0).abs() < 0.01);
    let dur = j["totals"]["duration_s"].as_f64().unwrap();
    // (one interval of clock ticks may round to 0.999999999 s)
    assert!((0.99..1.3).contains(&dur), "{dur}");
    let events = j["totals"]["events"].as_u64().unwrap();
    let sum: u64 = j["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["events"].as_u64().unwrap())
        .sum();
    assert_eq!(sum, events);
    assert_eq!(j["latency_ms"]["count"].as_u64().unwrap(), events);
}

/// A script whose events are slow at first, as on a cold cache: they
/// sleep 40 ms in the script's first second, 20 ms in the next, then 10
/// and 5, and 1 ms from the fifth second on.
const WARMING_SCRIPT: &str = r#"
local ffi = require("ffi")
ffi.cdef[[int usleep(unsigned int);]]
local t0
function thread_init()
  t0 = os.time()
end
function event()
  local waits = {40000, 20000, 10000, 5000}
  ffi.C.usleep(waits[os.time() - t0 + 1] or 1000)
end
"#;

#[test]
fn an_automatic_warmup_ends_after_a_slow_start() {
    let s = Scratch::new();
    std::fs::write(s.path("warming.lua"), WARMING_SCRIPT).unwrap();
    let r = s.ok(&[
        "run",
        "warming.lua",
        "--warmup-time=auto:120",
        "--report-interval=0.5",
        "--time=2",
        "--threads=2",
        "--format=json",
    ]);
    let j = r.json();
    let w = &j["warmup"];
    let a = &w["auto"];
    assert_eq!(a["rule"], "mser+mann-kendall", "{w}");
    assert_eq!(a["max_s"].as_f64(), Some(120.0));
    let since = a["steady_since_s"]
        .as_f64()
        .unwrap_or_else(|| panic!("never steady: {w}"));
    let took = w["duration_s"].as_f64().unwrap();
    // The slow seconds (four, or five: os.time() counts whole seconds) are
    // left behind, and the warm-up ends once what follows is steady:
    // long before its limit.
    assert!(since >= 2.5, "steady since {since} s: {w}");
    assert!(took >= 2.0 * since && took < 60.0, "{took} s: {w}");
    let series: Vec<f64> = a["events_per_s"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(series.len() as f64 * 0.5, (took * 2.0).round() / 2.0, "{w}");
    // The measurement follows the warm-up, for its --time, at the fast rate.
    let dur = j["totals"]["duration_s"].as_f64().unwrap();
    assert!((2.0..3.0).contains(&dur), "{dur}");
    let rate = j["totals"]["events_per_s"].as_f64().unwrap();
    assert!(rate > 5.0 * series[0], "{rate} against {series:?}");

    // The text report says when and why it ended.
    let r = s.ok(&[
        "run",
        "warming.lua",
        "--warmup-time=auto:120",
        "--report-interval=0.5",
        "--time=1",
    ]);
    assert!(
        r.stdout
            .contains("Warming up until throughput is steady, at most 120 second(s)"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("throughput steady since"), "{}", r.stdout);
}

#[test]
fn an_automatic_warmup_takes_only_auto_or_auto_with_a_limit() {
    let s = Scratch::new();
    for bad in ["auto:", "auto:0", "auto:x", "automatic", "auto:-5", "fast"] {
        let r = s.run(&["run", "oltp_point_select", &format!("--warmup-time={bad}")]);
        assert_eq!(r.code, 2, "{bad}: {}", r.stderr);
        assert_eq!(r.stderr.trim().lines().count(), 1, "{bad}: {}", r.stderr);
        assert!(r.stderr.contains("--warmup-time="), "{bad}: {}", r.stderr);
        assert!(r.stderr.contains("auto"), "{bad}: {}", r.stderr);
    }
    let r = s.run(&[
        "run",
        "oltp_point_select",
        "--warmup-time=auto",
        "--stages=1s:1,1s:2",
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--warmup-time"), "{}", r.stderr);
}

fn interrupt_after(s: &Scratch, args: &[&str], after: Duration) -> (i32, String, String, Duration) {
    let child = s.spawn(args);
    std::thread::sleep(after);
    let sent = Instant::now();
    // SAFETY: sending SIGINT to our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let took = sent.elapsed();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        took,
    )
}

#[test]
fn ctrl_c_stops_quickly_and_keeps_the_report() {
    let s = Scratch::new();
    s.ok(&["prepare", "oltp_read_write"]);
    let (code, out, err, took) = interrupt_after(
        &s,
        &[
            "run",
            "oltp_read_write",
            "--time=60",
            "--threads=2",
            "--output=r.json",
            "--format=json",
        ],
        Duration::from_millis(1500),
    );
    assert_eq!(code, 130, "{out}\n{err}");
    // The stop grace is 0.3 s; the rest is slack for a loaded CI machine.
    assert!(took < Duration::from_secs(2), "took {took:?}");
    assert!(out.contains("SQL statistics:"), "{out}");
    assert!(err.contains("interrupted"), "{err}");
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(s.path("r.json")).unwrap()).unwrap();
    assert_eq!(j["end"]["reason"], "interrupted");
    assert!(j["totals"]["events"].as_u64().unwrap() > 0);
}

#[test]
fn ctrl_c_interrupts_a_long_statement() {
    let s = Scratch::new();
    // No k index: every event scans the table, evaluating 900 ranges per
    // row, which takes several seconds (4-6 s on our 2-core VM, debug build),
    // so the interrupt at 1.5 s always finds a statement in flight.
    s.ok(&[
        "prepare",
        "select_random_ranges",
        "--table-size=1000000",
        "--create-secondary=off",
    ]);
    let (code, out, err, took) = interrupt_after(
        &s,
        &[
            "run",
            "select_random_ranges",
            "--table-size=1000000",
            "--number-of-ranges=900",
            "--time=60",
        ],
        Duration::from_millis(1500),
    );
    assert_eq!(code, 130, "{out}\n{err}");
    // The stop grace is 0.3 s; the rest is slack for a loaded CI machine.
    assert!(took < Duration::from_secs(2), "took {took:?}");
    assert!(out.contains("cancelled events:"), "{out}");
}

#[test]
fn fractional_times_and_the_last_interval_line() {
    let s = Scratch::new();
    let r = s.ok(&[
        "run",
        "noop",
        "--time=1.5",
        "--report-interval=0.5",
        "--format=json",
        "--output=r.json",
    ]);
    for t in ["[ 0.5s ]", "[ 1s ]", "[ 1.5s ]"] {
        assert!(r.stdout.contains(t), "no {t} line in\n{}", r.stdout);
    }
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(s.path("r.json")).unwrap()).unwrap();
    let iv = j["intervals"].as_array().unwrap();
    // Three full intervals. The last events end a little after --time:
    // a tail shorter than a tenth of an interval is folded into the
    // third, which then ends a little after 1.5 s; on a loaded machine
    // a longer tail is a fourth, partial interval.
    assert!(iv.len() == 3 || iv.len() == 4, "{iv:?}");
    assert_eq!(iv[0]["t_s"], 0.5);
    assert_eq!(iv[1]["t_s"], 1.0);
    let third = iv[2]["t_s"].as_f64().unwrap();
    assert!((1.5..1.55).contains(&third), "{iv:?}");
    assert_eq!(iv[2]["threads"], 1);
    if let Some(tail) = iv.get(3) {
        assert_eq!(third, 1.5);
        let d = tail["duration_s"].as_f64().unwrap();
        assert!((0.05..0.5).contains(&d), "{tail}");
    }
    let dur = j["totals"]["duration_s"].as_f64().unwrap();
    assert!((1.5..1.75).contains(&dur), "{dur}");
}

#[test]
fn a_rate_run_lasts_its_time() {
    let s = Scratch::new();
    let r = s.ok(&[
        "run",
        "noop",
        "--time=2",
        "--rate=5",
        "--rand-seed=4",
        "--format=json",
    ]);
    let j = r.json();
    let dur = j["totals"]["duration_s"].as_f64().unwrap();
    assert!((2.0..2.1).contains(&dur), "{dur}");
    // Busy time is service time, not time waiting for the next arrival.
    assert!(j["fairness"]["time_avg_s"].as_f64().unwrap() < 0.1);
}

#[test]
fn inserts_with_a_secondary_id_index() {
    let s = Scratch::new();
    s.ok(&[
        "prepare",
        "oltp_insert",
        "--secondary=on",
        "--table-size=100",
    ]);
    let r = s.ok(&[
        "run",
        "oltp_insert",
        "--secondary=on",
        "--table-size=100",
        "--events=50",
        "--time=0",
    ]);
    assert_eq!(r.stat("write:"), 50);
    let db = s.db("dbmeter.sqlite");
    assert_eq!(count(&db, "SELECT COUNT(DISTINCT id) FROM sbtest1"), 150);
}

#[test]
fn connect_rate_spreads_the_connects() {
    let s = Scratch::new();
    s.ok(&["prepare", "oltp_point_select", "--table-size=1000"]);
    // Five users at four connections per second: the last one starts
    // connecting a second after the first, and the run starts after that.
    let t = Instant::now();
    let r = s.ok(&[
        "run",
        "oltp_point_select",
        "--table-size=1000",
        "--threads=5",
        "--connect-rate=4",
        "--time=0.5",
    ]);
    assert!(
        t.elapsed() >= Duration::from_millis(1400),
        "{:?}",
        t.elapsed()
    );
    assert!(r.stat("transactions:") > 0, "{}", r.stdout);
    let bad = s.run(&["run", "oltp_point_select", "--connect-rate=-1"]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(bad.stderr.contains("--connect-rate=-1"), "{}", bad.stderr);
}
