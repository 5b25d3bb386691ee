//! The test types of docs/test-types.md against real servers (throwaway
//! PostgreSQL and MariaDB): on PostgreSQL the users of a run follow
//! `--stages`, its arrivals follow `--rate-stages` within Poisson bounds,
//! and `--assert` targets pass and fail on purpose (exit code 3, a JUnit
//! file valid against Jenkins' schema); on MariaDB `--warmup-time=auto:N`
//! ends its warm-up once throughput is steady. The same on SQLite, Lua
//! scripts and fileio is in `stages`, `verdicts` and `run_behaviour`.

use crate::common::*;
use crate::verdicts::check_junit;
use dbmeter_server::Flavor;
use dbmeter_testkit::servers::start;
use serde_json::Value;

const TABLE_SIZE: &str = "--table-size=1000";

/// A throwaway server of `flavor` with oltp_point_select's table, the
/// scratch directory and the `--db` option for it.
fn prepared(flavor: Flavor) -> Option<(dbmeter_server::Server, Scratch, String)> {
    let server = start(flavor)?;
    let s = Scratch::new();
    let d = format!("--db={}", server.url());
    s.ok_home(&["prepare", "oltp_point_select", &d, TABLE_SIZE]);
    Some((server, s, d))
}

/// The run's first `n` intervals, its whole seconds. A run of `n` seconds
/// may have one more: a fragment after the time limit (the events that
/// ended after it, when they took over a tenth of a second, as a loaded
/// server's may).
fn whole_seconds(doc: &Value, n: usize) -> Vec<&Value> {
    let iv: Vec<&Value> = doc["intervals"]
        .as_array()
        .expect("intervals")
        .iter()
        .collect();
    let times: Vec<(f64, f64)> = iv
        .iter()
        .map(|i| {
            (
                i["t_s"].as_f64().unwrap(),
                i["duration_s"].as_f64().unwrap(),
            )
        })
        .collect();
    assert!(
        iv.len() == n || (iv.len() == n + 1 && times[n].0 > n as f64),
        "(end, length) of each interval: {times:?}"
    );
    iv[..n].to_vec()
}

fn statuses(doc: &Value) -> Vec<String> {
    doc["verdicts"]
        .as_array()
        .expect("verdicts")
        .iter()
        .map(|v| v["status"].as_str().unwrap_or("").to_string())
        .collect()
}

#[test]
fn postgres_stages_rate_stages_and_targets() {
    let Some((_server, s, d)) = prepared(Flavor::Postgres) else {
        return;
    };

    // 2.5 s at 1 user, a step to 3 users for 2.5 s: the step falls in the
    // middle of the third second, so the seconds around it are whole
    // seconds of one level. Every target is met.
    let r = s.run_home(&[
        "run",
        "oltp_point_select",
        &d,
        TABLE_SIZE,
        "--stages=0s:1,2.5s:1,0s:3,2.5s:3",
        "--assert=tps>0",
        "--assert=p99<1h",
        "--assert=errors<=0.1%",
        "--assert=stage2.events>0",
        "--assert=stage4.p99<1h",
        "--junit=met.xml",
        "--output=met.json",
        "--format=json",
    ]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("Targets (5 of 5 met):"), "{}", r.stdout);
    assert!(r.stdout.contains("\nStages:\n    stage2 "), "{}", r.stdout);
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(s.path("met.json")).unwrap()).unwrap();
    assert_eq!(doc["threads"], 3, "the peak of users is started");
    let active: Vec<u64> = whole_seconds(&doc, 5)
        .iter()
        .map(|i| i["active_users"].as_u64().expect("active_users"))
        .collect();
    assert_eq!(&active[..2], &[1, 1], "{active:?}");
    assert!((1..=3).contains(&active[2]), "{active:?}");
    assert_eq!(&active[3..], &[3, 3], "{active:?}");
    let stages = doc["stages"].as_array().expect("stages");
    let levels: Vec<(u64, u64)> = stages
        .iter()
        .map(|s| {
            (
                s["index"].as_u64().unwrap(),
                s["active_users_max"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(levels, [(2, 1), (4, 3)], "{stages:?}");
    assert_eq!(statuses(&doc), ["pass"; 5]);
    let xml = std::fs::read_to_string(s.path("met.xml")).unwrap();
    assert!(
        xml.contains("tests=\"6\" failures=\"0\" errors=\"0\""),
        "{xml}"
    );
    check_junit(&s.path("met.xml"));

    // 40 arrivals a second for 2 s, a step to 200 a second for 2 s; two
    // targets missed on purpose.
    let r = s.run_home(&[
        "run",
        "oltp_point_select",
        &d,
        TABLE_SIZE,
        "--threads=4",
        "--rate-stages=0s:40,2s:40,0s:200,2s:200",
        "--assert=tps>0",
        "--assert=p99<1ns",
        "--assert=stage4.tps>1e9",
        "--junit=missed.xml",
        "--output=missed.json",
        "--format=json",
    ]);
    assert_eq!(r.code, 3, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("Targets (1 of 3 met):"), "{}", r.stdout);
    assert!(
        r.stdout.contains("    tps>0: pass (measured "),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("    p99<1ns: FAIL (measured "),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("    stage4.tps>1e9: FAIL (measured "),
        "{}",
        r.stdout
    );
    assert!(
        r.stderr.contains("2 of 3 targets not met (exit code 3)"),
        "{}",
        r.stderr
    );
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(s.path("missed.json")).unwrap()).unwrap();
    assert_eq!(statuses(&doc), ["pass", "fail", "fail"]);
    for (i, v) in whole_seconds(&doc, 4).iter().enumerate() {
        let want: f64 = if i < 2 { 40.0 } else { 200.0 };
        let n = v["events"].as_u64().unwrap() as f64;
        // Poisson: 5 standard deviations, plus a tenth for events that end
        // across a boundary on a busy machine.
        let margin = 5.0 * want.sqrt() + want / 10.0;
        assert!(
            (n - want).abs() <= margin,
            "second {}: {n} events, want {want} ± {margin:.0}",
            i + 1
        );
    }
    let stages = doc["stages"].as_array().expect("stages");
    assert_eq!(stages.len(), 2, "{stages:?}");
    assert_eq!(stages[1]["profile"], "rate");
    let xml = std::fs::read_to_string(s.path("missed.xml")).unwrap();
    assert!(
        xml.contains("tests=\"4\" failures=\"2\" errors=\"0\""),
        "{xml}"
    );
    assert!(xml.contains("<testcase name=\"p99&lt;1ns\""), "{xml}");
    assert!(
        xml.contains("<testcase name=\"stage4.tps&gt;1e9\""),
        "{xml}"
    );
    check_junit(&s.path("missed.xml"));
}

#[test]
fn mariadb_automatic_warmup_ends_when_throughput_is_steady() {
    let Some((_server, s, d)) = prepared(Flavor::MariaDb) else {
        return;
    };
    let r = s.run_home(&[
        "run",
        "oltp_point_select",
        &d,
        TABLE_SIZE,
        "--threads=2",
        "--warmup-time=auto:60",
        "--report-interval=0.5",
        "--time=1",
        "--output=r.json",
        "--format=json",
    ]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains("Warming up until throughput is steady, at most 60 second(s)"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("throughput steady since"), "{}", r.stdout);
    let j: Value =
        serde_json::from_str(&std::fs::read_to_string(s.path("r.json")).unwrap()).unwrap();
    let w = &j["warmup"];
    let a = &w["auto"];
    assert_eq!(a["rule"], "mser+mann-kendall", "{w}");
    assert_eq!(a["max_s"].as_f64(), Some(60.0), "{w}");
    let since = a["steady_since_s"]
        .as_f64()
        .unwrap_or_else(|| panic!("never steady: {w}"));
    let took = w["duration_s"].as_f64().unwrap();
    // At least the rule's 10 intervals (5 s, to a clock tick), and at least twice the part left
    // out; ended by the rule, not by its limit.
    assert!(took >= 4.9 && took >= 2.0 * since, "{took} s: {w}");
    assert!(took < 60.0, "{took} s: {w}");
    let series = a["events_per_s"].as_array().expect("events_per_s");
    assert_eq!(series.len() as f64 * 0.5, (took * 2.0).round() / 2.0, "{w}");
    assert!(
        series.iter().all(|v| v.as_f64().unwrap_or(0.0) > 0.0),
        "{w}"
    );
    assert!(w["events"].as_u64().unwrap() > 0, "{w}");
    // The measurement follows, for its --time.
    let dur = j["totals"]["duration_s"].as_f64().unwrap();
    assert!((1.0..2.0).contains(&dur), "{dur}");
    assert!(j["totals"]["events"].as_u64().unwrap() > 0);
}
