//! How a run says what happened to the server under it: a server lost for
//! good fails the run (after a bounded time of reconnect attempts) and the
//! failed run is stored but left out of comparisons; a server restarted in
//! the middle marks its counter deltas as meaningless; other sessions busy
//! on the server during the run are reported.

use crate::common::*;
use crate::procs::Watched;
use dbmeter_server::{Flavor, Server};
use dbmeter_testkit::servers::{ask, ask_n, start};
use serde_json::Value;
use std::time::{Duration, Instant};

fn db(server: &Server) -> String {
    format!("--db={}", server.url())
}

fn watch(s: &Scratch, args: &[&str]) -> Watched {
    let mut c = s.cmd(args);
    c.env("DBMETER_HOME", s.path("home"))
        .env_remove("DBMETER_STORE");
    Watched::spawn(c)
}

fn warning_messages(doc: &Value) -> Vec<String> {
    doc["warnings"]
        .as_array()
        .unwrap_or_else(|| panic!("warnings is not an array: {}", doc["warnings"]))
        .iter()
        .map(|w| w["message"].as_str().unwrap_or("").to_string())
        .collect()
}

/// B1. The server is killed 2 s into a 60 s run and does not come back:
/// the users try to reconnect for a bounded time (5 s by default), then
/// the run ends as failed, exit code 1, with the partial report and the
/// reason on stderr. It is stored as failed; `compare` over runs including
/// it computes the medians without it and says it left it out.
fn a_lost_server_fails_the_run(flavor: Flavor) {
    let Some(mut server) = start(flavor) else {
        return;
    };
    let s = Scratch::new();
    let d = db(&server);
    let store = format!("--store={}", s.path("r.db").display());
    s.ok_home(&["prepare", "oltp_point_select", &d, "--table-size=1000"]);
    let run = watch(
        &s,
        &[
            "run",
            "oltp_point_select",
            &d,
            "--table-size=1000",
            "--threads=2",
            "--time=60",
            &store,
            "--tag=phase=before",
        ],
    );
    std::thread::sleep(Duration::from_secs(2));
    server.kill();
    let killed = Instant::now();
    // Allow far more than the 5 s reconnect bound, but well under --time.
    let end = run.finish(Duration::from_secs(45));
    assert!(
        end.in_time && end.elapsed < Duration::from_secs(40),
        "still running {:?} after the start ({:?} after the kill):\n{}",
        end.elapsed,
        killed.elapsed(),
        end.output()
    );
    assert_eq!(end.code, Some(1), "{}", end.output());
    assert!(
        end.stderr.contains("lost the server at"),
        "{}",
        end.output()
    );
    assert!(
        end.stderr.contains("reconnect attempts failed"),
        "{}",
        end.output()
    );
    assert!(!end.stderr.contains("panicked"), "{}", end.output());
    // What was measured before the loss is reported.
    assert!(end.stdout.contains("SQL statistics:"), "{}", end.output());

    let listed: Value = serde_json::from_str(
        &s.ok_home(&["results", "list", &store, "--format=json"])
            .stdout,
    )
    .expect("list as JSON");
    let runs = listed.as_array().expect("an array");
    assert_eq!(runs.len(), 1, "{listed:#}");
    let failed = &runs[0];
    assert_eq!(failed["end_reason"], "failed", "{failed:#}");
    assert_eq!(failed["workload"], "oltp_point_select");
    assert_eq!(failed["threads"], 2);
    let failed_id = failed["id"].as_i64().expect("an id");

    // Two completed runs elsewhere (embedded SQLite), same workload and
    // threads: one more baseline run and a candidate.
    let mut ids = Vec::new();
    for phase in ["before", "after"] {
        let tag = format!("--tag=phase={phase}");
        let r = s.ok_home(&[
            "run",
            "oltp_point_select",
            "--table-size=1000",
            "--threads=2",
            "--time=1",
            &store,
            &tag,
        ]);
        let line = r
            .stderr
            .lines()
            .find(|l| l.starts_with("stored as run #"))
            .unwrap_or_else(|| panic!("not stored:\n{}", r.stderr));
        let id: i64 = line["stored as run #".len()..]
            .split_whitespace()
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{line}"));
        ids.push(id);
    }
    let text = s
        .ok_home(&[
            "compare",
            "--baseline",
            "tag:phase=before",
            "--candidate",
            "tag:phase=after",
            &store,
        ])
        .stdout;
    assert!(
        text.lines().any(|l| l.contains("left out")),
        "no 'left out' line:\n{text}"
    );
    let csv = s
        .ok_home(&[
            "compare",
            "--baseline=tag:phase=before",
            "--candidate=tag:phase=after",
            &store,
            "--format=csv",
        ])
        .stdout;
    let rows = csv_rows(&csv);
    let row = rows.first().unwrap_or_else(|| panic!("no row: {csv}"));
    let col = |name: &str| {
        row.get(name)
            .map(String::as_str)
            .unwrap_or_else(|| panic!("no {name} in {csv}"))
    };
    assert_eq!(col("threads"), "2", "{csv}");
    // The medians are over the completed runs only.
    assert_eq!(col("baseline_runs"), ids[0].to_string(), "{csv}");
    assert_eq!(col("candidate_runs"), ids[1].to_string(), "{csv}");
    assert!(
        !col("baseline_runs")
            .split(' ')
            .any(|id| id == failed_id.to_string()),
        "{csv}"
    );
}

#[test]
fn a_lost_server_fails_the_run_on_mariadb() {
    a_lost_server_fails_the_run(Flavor::MariaDb);
}

#[test]
fn a_lost_server_fails_the_run_on_postgres() {
    a_lost_server_fails_the_run(Flavor::Postgres);
}

/// B2. A restart in the middle of a run (reconnects allowed for 60 s):
/// the run completes, counts its reconnects, and says that the server's
/// counters were reset in between, so that their after - before means
/// nothing: `counters.restarted` is true, `counters.delta` is empty and a
/// warning says the server restarted.
fn a_restart_flags_the_counters(flavor: Flavor) {
    let Some(mut server) = start(flavor) else {
        return;
    };
    let s = Scratch::new();
    let d = db(&server);
    s.ok_home(&["prepare", "oltp_point_select", &d, "--table-size=1000"]);
    let run = watch(
        &s,
        &[
            "run",
            "oltp_point_select",
            &d,
            "--table-size=1000",
            "--threads=2",
            "--time=8",
            "--reconnect-timeout=60",
            "--format=json",
        ],
    );
    std::thread::sleep(Duration::from_secs(2));
    server.restart().unwrap_or_else(|e| panic!("{e}"));
    let end = run.finish(Duration::from_secs(120));
    assert!(end.in_time, "still running after 120 s:\n{}", end.output());
    assert_eq!(end.code, Some(0), "{}", end.output());
    let j: Value = serde_json::from_str(&end.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", end.output()));
    assert_eq!(j["end"]["reason"], "time_limit", "{}", j["end"]);
    assert!(
        j["totals"]["reconnects"].as_u64().unwrap_or(0) >= 1,
        "{}",
        j["totals"]
    );
    let c = &j["counters"];
    assert_eq!(c["restarted"], true, "counters: {}", short(c));
    assert_eq!(
        c["delta"],
        serde_json::json!({}),
        "counters.delta: {}",
        short(&c["delta"])
    );
    let warnings = warning_messages(&j);
    assert!(
        warnings.iter().any(|m| m.contains("restarted")),
        "{warnings:?}"
    );
}

/// A value for a message, cut short.
fn short(v: &Value) -> String {
    let t = v.to_string();
    if t.chars().count() > 2000 {
        format!("{}…", t.chars().take(2000).collect::<String>())
    } else {
        t
    }
}

#[test]
fn a_restart_flags_the_counters_on_mariadb() {
    a_restart_flags_the_counters(Flavor::MariaDb);
}

#[test]
fn a_restart_flags_the_counters_on_postgres() {
    a_restart_flags_the_counters(Flavor::Postgres);
}

/// B3. Another client busy on the server during the run (a slow query in
/// a loop): the run warns that other sessions were active and counts them.
#[test]
fn other_sessions_on_mariadb_are_reported() {
    let Some(server) = start(Flavor::MariaDb) else {
        return;
    };
    let s = Scratch::new();
    let d = db(&server);
    s.ok_home(&["prepare", "oltp_point_select", &d, "--table-size=1000"]);
    let port = server.port().to_string();
    let mut other = std::process::Command::new("mariadb");
    other.args([
        "-h127.0.0.1",
        "-P",
        &port,
        "-uroot",
        "test",
        "-N",
        "-B",
        "-e",
        "SELECT SLEEP(10); SELECT SLEEP(10); SELECT SLEEP(10); SELECT SLEEP(10); SELECT SLEEP(10); SELECT SLEEP(10)",
    ]);
    let other = Watched::spawn(other);
    // Until the server runs its query.
    let busy =
        "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT SLEEP%'";
    let until = Instant::now() + Duration::from_secs(30);
    while ask_n(&server, busy) < 1 {
        assert!(Instant::now() < until, "the other session never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    let r = s.ok_home(&[
        "run",
        "oltp_point_select",
        &d,
        "--table-size=1000",
        "--time=3",
        "--format=json",
    ]);
    // It was there all along.
    assert!(ask_n(&server, busy) >= 1);
    drop(other);
    let j = r.json();
    let warnings = warning_messages(&j);
    assert!(
        warnings.iter().any(|m| m.contains("other sessions")),
        "{warnings:?}"
    );
    assert!(
        j["counters"]["other_sessions"].as_u64().unwrap_or(0) >= 1,
        "counters.other_sessions: {}",
        j["counters"]["other_sessions"]
    );
    // The run measured as usual.
    assert_eq!(j["end"]["reason"], "time_limit");
    assert!(j["totals"]["events"].as_u64().unwrap_or(0) > 0);
    let _ = ask(&server, "SELECT 1");
}
