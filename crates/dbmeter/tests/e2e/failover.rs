//! Several hosts and failovers (issue 28): a server stopped and started
//! again during a run is one outage of the length it was down, and the
//! run goes on to its time limit.

use crate::common::*;
use crate::procs::Watched;
use dbmeter_server::Flavor;
use dbmeter_testkit::servers::start;
use serde_json::Value;
use std::time::{Duration, Instant};

fn watch(s: &Scratch, args: &[&str]) -> Watched {
    let mut c = s.cmd(args);
    c.env("DBMETER_HOME", s.path("home"))
        .env_remove("DBMETER_STORE");
    Watched::spawn(c)
}

/// The server is stopped 3 s into a 14 s run, kept down 3 s, and started
/// again: the run reports one outage, as long as the server was down
/// within a second plus what stopping and starting it cost (the test
/// measures both), and ends with its time limit.
fn a_restarted_server_is_one_outage(flavor: Flavor) {
    let Some(mut server) = start(flavor) else {
        return;
    };
    let s = Scratch::new();
    let d = format!("--db={}", server.url());
    s.ok_home(&["prepare", "oltp_point_select", &d, "--table-size=1000"]);
    let mut run = watch(
        &s,
        &[
            "run",
            "oltp_point_select",
            &d,
            "--table-size=1000",
            "--threads=2",
            "--time=14",
            "--reconnect-timeout=60",
            "--report-interval=1",
            "--output=r.json",
            "--format=json",
        ],
    );
    assert!(
        run.wait_for_line(Duration::from_secs(60), |l| l.starts_with("[ 3s ]")),
        "the run did not get to 3 s:\n{}\n{}",
        run.stdout(),
        run.stderr()
    );
    let down = Duration::from_secs(3);
    let before_stop = Instant::now();
    server.stop().unwrap_or_else(|e| panic!("{e}"));
    let stopping = before_stop.elapsed();
    std::thread::sleep(down);
    let before_start = Instant::now();
    server.restart().unwrap_or_else(|e| panic!("{e}"));
    let starting = before_start.elapsed();
    let end = run.finish(Duration::from_secs(120));
    assert!(end.in_time, "still running after 120 s:\n{}", end.output());
    assert_eq!(end.code, Some(0), "{}", end.output());
    let j: Value = serde_json::from_str(&std::fs::read_to_string(s.path("r.json")).unwrap())
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", end.output()));
    // The text report has its line.
    assert!(
        end.stdout.contains("\nOutages:\n    at "),
        "{}",
        end.output()
    );
    assert_eq!(j["end"]["reason"], "time_limit", "{}", j["end"]);
    let outages = j["outages"]
        .as_array()
        .unwrap_or_else(|| panic!("no outages: {}", end.output()));
    assert_eq!(outages.len(), 1, "{outages:?}");
    let o = &outages[0];
    let length = o["length_s"].as_f64().unwrap_or_else(|| panic!("{o}"));
    // Down for sure while the test slept; at most from the stop's start
    // to the restart's end (a user finds its connection lost as the stop
    // begins, and reconnects once it is back), within a second each way
    // (the users' reconnect attempts are at most 1 s apart).
    let kept_down = down.as_secs_f64();
    let longest = (stopping + down + starting).as_secs_f64();
    eprintln!(
        "outage of {length:.2} s; kept down {kept_down} s, stopping took {stopping:?}, starting {starting:?}"
    );
    assert!(
        length >= kept_down - 1.0 && length <= longest + 1.0,
        "outage of {length} s; the server was kept down {kept_down} s (stopping took {stopping:?}, starting {starting:?}): {o}"
    );
    let start_s = o["start_s"].as_f64().unwrap_or_else(|| panic!("{o}"));
    assert!(start_s > 0.0, "{o}");
    assert!(o["events_lost"].as_u64().is_some(), "{o}");
    assert!(o["tolerance_pct"].as_f64().is_some(), "{o}");
    // The run went on after it: events in its last intervals.
    let iv = j["intervals"].as_array().expect("intervals");
    let last = iv.last().expect("an interval");
    assert!(last["events"].as_u64().unwrap_or(0) > 0, "{last}");
    assert!(j["totals"]["reconnects"].as_u64().unwrap_or(0) >= 1);
}

#[test]
fn a_restarted_postgres_is_one_outage() {
    a_restarted_server_is_one_outage(Flavor::Postgres);
}

#[test]
fn a_restarted_mariadb_is_one_outage() {
    a_restarted_server_is_one_outage(Flavor::MariaDb);
}
