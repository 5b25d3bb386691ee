//! Load profiles: `--stages` changes the users that run over the run, and
//! `--rate-stages` the arrival rate, stage by stage; each stage's figures
//! are in the report and the document, targets can name a stage, and
//! campaign files take profiles too. Counts and states only: the users
//! measured per interval, events per interval within Poisson bounds.

use crate::common::*;
use serde_json::Value;

const DB: &str = "--db=sqlite:t.sqlite";

fn prepared() -> Scratch {
    let s = Scratch::new();
    s.ok(&["prepare", "oltp_point_select", DB, "--table-size=100"]);
    s
}

fn intervals(doc: &Value) -> Vec<&Value> {
    doc["intervals"]
        .as_array()
        .expect("intervals")
        .iter()
        .collect()
}

#[test]
fn users_follow_the_stages_interval_by_interval() {
    let s = prepared();
    // 2.5 s at 1 user, a step to 3 users for 2.5 s, a ramp from 3 to 1
    // over 2 s. The steps fall in the middle of an interval, so that the
    // intervals around them are whole seconds of one level.
    let doc = s
        .ok(&[
            "run",
            "oltp_point_select",
            DB,
            "--table-size=100",
            "--stages=0s:1,2.5s:1,0s:3,2.5s:3,2s:1",
            "--format=json",
            "--assert=stage2.events>0",
            "--assert=stage4.p99<1h",
            "--assert=stage5.errors=0",
        ])
        .json();
    assert_eq!(doc["threads"], 3, "the peak of users is started");
    let iv = intervals(&doc);
    assert_eq!(iv.len(), 7, "{iv:?}");
    let active: Vec<u64> = iv
        .iter()
        .map(|i| i["active_users"].as_u64().expect("active_users"))
        .collect();
    // Whole seconds of one level are exact: every active user runs
    // events in each of them; the third second holds the step.
    assert_eq!(&active[..2], &[1, 1], "{active:?}");
    assert!((1..=3).contains(&active[2]), "{active:?}");
    assert_eq!(&active[3..5], &[3, 3], "{active:?}");
    // The ramp from 3 to 1 over 2 s: the level falls below 3 just after
    // 4 s and below 2 just after 5 s (users are the level rounded down); a
    // user beyond it ends the event it is in, so an interval may count one
    // more than its level.
    assert!((2..=3).contains(&active[5]), "{active:?}");
    assert!((1..=2).contains(&active[6]), "{active:?}");
    let stages = doc["stages"].as_array().expect("stages");
    let idx: Vec<u64> = stages
        .iter()
        .map(|s| s["index"].as_u64().unwrap())
        .collect();
    assert_eq!(idx, [2, 4, 5], "0 s steps have no figures");
    assert_eq!(stages[0]["active_users_max"], 1);
    assert_eq!(stages[1]["active_users_max"], 3);
    assert_eq!(stages[1]["from"], 3.0);
    assert_eq!(stages[2]["to"], 1.0);
    let total: u64 = stages.iter().map(|s| s["events"].as_u64().unwrap()).sum();
    assert_eq!(total, doc["totals"]["events"].as_u64().unwrap());
    let statuses: Vec<&str> = doc["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["pass", "pass", "pass"]);

    // The text report has a line per stage, and the interval lines the
    // users that ran.
    let r = s.ok(&[
        "run",
        "oltp_point_select",
        DB,
        "--table-size=100",
        "--stages=0s:2,2s:2",
        "--report-interval=1",
    ]);
    assert!(r.stdout.contains("[ 1s ] thds: 2 tps:"), "{}", r.stdout);
    assert!(
        r.stdout.contains("    stage2 0.0-2.0s users 2->2: "),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("up to 2 users active"), "{}", r.stdout);
}

#[test]
fn the_rate_follows_its_stages() {
    let s = prepared();
    let doc = s
        .ok(&[
            "run",
            "oltp_point_select",
            DB,
            "--table-size=100",
            "--threads=4",
            "--rate-stages=0s:40,3s:40,0s:400,3s:400",
            "--format=json",
        ])
        .json();
    let iv = intervals(&doc);
    assert_eq!(iv.len(), 6, "{iv:?}");
    for (i, v) in iv.iter().enumerate() {
        let want: f64 = if i < 3 { 40.0 } else { 400.0 };
        let n = v["events"].as_u64().unwrap() as f64;
        // Poisson: 5 standard deviations, plus a tenth for events that end
        // across a boundary on a busy machine.
        let margin = 5.0 * want.sqrt() + want / 10.0;
        assert!(
            (n - want).abs() <= margin,
            "second {}: {n} events, want {want}",
            i + 1
        );
    }
    // The run's target rate is the profile's mean.
    let target = doc["rate"]["target_per_s"].as_f64().unwrap();
    assert!((target - 220.0).abs() < 1e-6, "{target}");
    let stages = doc["stages"].as_array().unwrap();
    assert_eq!(stages.len(), 2);
    assert_eq!(stages[0]["profile"], "rate");
}

#[test]
fn bad_profiles_are_usage_errors() {
    let s = Scratch::new();
    for (args, says) in [
        (vec!["--stages=30s"], "is not DURATION:TARGET"),
        (vec!["--stages=10x:4"], "'10x' is not a duration"),
        (
            vec!["--stages=1s:2", "--time=5"],
            "the stages set the run's length (1 s); leave --time out",
        ),
        (vec!["--stages=1s:2", "--threads=4"], "leave --threads out"),
        (
            vec!["--stages=1s:2", "--warmup-time=1"],
            "leave --warmup-time out",
        ),
        (
            vec!["--rate-stages=1s:100", "--rate=10"],
            "leave --rate out",
        ),
        (
            vec!["--stages=1s:2", "--rate-stages=2s:100"],
            "give both the same length",
        ),
        (
            vec!["--stages=0s:2,1s:2", "--assert=stage1.p99<1s"],
            "no stage 1 with a duration",
        ),
    ] {
        let mut a = vec!["run", "noop"];
        a.extend(&args);
        let r = s.run(&a);
        assert_eq!(r.code, 2, "{args:?}: {}\n{}", r.stdout, r.stderr);
        assert!(r.stderr.contains(says), "{args:?}: {}", r.stderr);
        assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    }
}

#[test]
fn a_campaign_runs_a_profile() {
    let s = Scratch::new();
    let file = s.path("c.toml");
    std::fs::write(
        &file,
        r#"name = "spike"
store = "results.db"
duration = 30
clients = [1]

[[target]]
name = "lite"
url = "sqlite:c.sqlite"

[[workload]]
name = "oltp_point_select"
options = { table-size = 100, stages = "0s:1,1s:1,0s:2,1s:2" }
"#,
    )
    .unwrap();
    // The plan counts the profile's 2 s, not the campaign's 30 (plus 2 s
    // of overhead a run).
    let plan = s.run_home(&["campaign", "run", &file.to_string_lossy(), "--dry-run"]);
    assert!(
        plan.stdout.contains("estimated duration: 4s"),
        "{}",
        plan.stdout
    );
    let r = s.run_home(&["campaign", "run", &file.to_string_lossy()]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let shown = s
        .ok_home(&[
            "results",
            "show",
            "1",
            "--store",
            &s.path("results.db").to_string_lossy(),
            "--format=json",
        ])
        .json();
    assert_eq!(shown["threads"], 2, "{}", shown["options"]);
    let d = shown["totals"]["duration_s"].as_f64().unwrap();
    assert!(d < 5.0, "the stages (2 s), not the campaign's 30 s: {d}");
    assert_eq!(shown["stages"].as_array().unwrap().len(), 2);
}

/// A workload with a fixed service time: 10 ms a event, on 2 users, so
/// about 200 events per second at most.
const SERVICE_10MS: &str = r#"
local ffi = require("ffi")
ffi.cdef[[int usleep(unsigned int);]]
function event()
  ffi.C.usleep(10000)
end
"#;

/// A step that falls exactly on an interval's end: the users it lets go
/// count in the interval after it, never in the one it ends, however
/// soon they finish an event after the boundary.
#[test]
fn a_step_on_an_interval_boundary_counts_in_the_next_interval() {
    let s = Scratch::new();
    std::fs::write(s.path("service.lua"), SERVICE_10MS).unwrap();
    for _ in 0..3 {
        let doc = s
            .ok(&[
                "run",
                "./service.lua",
                "--stages=0s:1,2s:1,0s:4,2s:4",
                "--report-interval=0.5",
                "--format=json",
            ])
            .json();
        let users: Vec<u64> = intervals(&doc)
            .iter()
            .map(|i| i["active_users"].as_u64().unwrap_or(0))
            .collect();
        assert!(users.len() >= 8, "{users:?}");
        assert_eq!(users[..8], [1, 1, 1, 1, 4, 4, 4, 4], "{users:?}");
        let stages = doc["stages"].as_array().expect("stages");
        assert_eq!(stages[0]["active_users_max"], 1, "{stages:?}");
    }
}

#[test]
fn a_spike_beyond_capacity_and_its_recovery() {
    let s = Scratch::new();
    std::fs::write(s.path("service.lua"), SERVICE_10MS).unwrap();
    // 50/s, a spike to 400/s for 2 s (about 400 arrivals more than 2
    // users serve), back to 50/s: the backlog drains at about 150/s, in
    // about 3 s.
    let doc = s
        .ok(&[
            "run",
            "./service.lua",
            "--threads=2",
            "--rate-stages=0s:50,3s:50,0s:400,2s:400,0s:50,9s:50",
            "--recovery-tolerance=50",
            "--format=json",
        ])
        .json();
    let spikes = doc["spikes"].as_array().expect("spikes");
    assert_eq!(spikes.len(), 1, "{spikes:?}");
    let sp = &spikes[0];
    assert_eq!(
        (
            sp["stage"].as_u64(),
            sp["before"].as_u64(),
            sp["after"].as_u64()
        ),
        (Some(4), Some(2), Some(6))
    );
    // Throughput rose to what 2 users serve, several times the 50/s before.
    let tr = sp["throughput_ratio"].as_f64().unwrap();
    assert!(tr > 2.0, "{sp}");
    // Latency from the intended start grew with the backlog.
    let pr = sp["p99_ratio"].as_f64().unwrap();
    assert!(pr > 5.0, "{sp}");
    let rec = sp["recovery_s"].as_f64().expect("recovered");
    assert!((1.0..=8.0).contains(&rec), "{sp}");

    // The same spike with 1 s after it: no time to drain.
    let r = s.ok(&[
        "run",
        "./service.lua",
        "--threads=2",
        "--rate-stages=0s:50,3s:50,0s:400,2s:400,0s:50,1s:50",
        "--recovery-tolerance=50",
    ]);
    assert!(
        r.stdout
            .contains("Spikes:\n    stage4 (rate 50->400): throughput "),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("did not recover by the end of the run (within 50%)"),
        "{}",
        r.stdout
    );
}

/// A workload that gets slower every second: 2 ms an event, 2 ms more
/// each second.
const SLOWING: &str = r#"
local ffi = require("ffi")
ffi.cdef[[int usleep(unsigned int);]]
local t0
function thread_init()
  t0 = os.time()
end
function event()
  ffi.C.usleep(2000 + 2000 * (os.time() - t0))
end
"#;

#[test]
fn a_run_that_slows_down_drifts_and_a_short_one_has_no_drift() {
    let s = Scratch::new();
    std::fs::write(s.path("slowing.lua"), SLOWING).unwrap();
    let doc = s
        .ok(&[
            "run",
            "./slowing.lua",
            "--time=10",
            "--report-interval=0.5",
            "--format=json",
        ])
        .json();
    let d = &doc["drift"];
    assert_eq!(d["verdict"], "degrading", "{d}");
    assert!(d["intervals"].as_u64().unwrap() >= 19, "{d}");
    let tps = &d["trends"][0];
    assert_eq!(tps["metric"], "events_per_s");
    assert_eq!(tps["direction"], "falling", "{d}");
    assert!(tps["pct_high_per_h"].as_f64().unwrap() < 0.0, "{d}");
    // Ten intervals are too few to tell a trend.
    let doc = s
        .ok(&["run", "./slowing.lua", "--time=5", "--format=json"])
        .json();
    assert!(doc.get("drift").is_none(), "{}", doc["drift"]);
}

/// `--find-capacity=users` of `script` up to `threads` users, 1 s steps:
/// the document's `capacity`.
fn users_search(s: &Scratch, script: &str, threads: u32) -> Value {
    let doc = s
        .ok(&[
            "run",
            script,
            &format!("--threads={threads}"),
            "--find-capacity=users",
            "--step-time=1",
            "--settle-time=0.5",
            "--format=json",
        ])
        .json();
    doc["capacity"].clone()
}

/// The users of each step of a capacity search.
fn step_users(c: &Value) -> Vec<u64> {
    c["steps"]
        .as_array()
        .unwrap_or_else(|| panic!("no steps: {c}"))
        .iter()
        .map(|s| s["users"].as_u64().unwrap_or(0))
        .collect()
}

/// tests/scripts/contended.lua: throughput n / (10 ms + 0.625 ms n²) at n
/// users, 200/s at 4, 160/s at 8 and 94/s at 16.
const CONTENDED: &str = include_str!("../scripts/contended.lua");

/// The closed model on a workload whose throughput peaks and falls: the
/// search doubles the users, finds the peak, and stops once throughput
/// fell below it twice (at 8 and 16 users, a fifth and a half below the
/// peak), without trying the 32 users --threads allows.
#[test]
fn users_search_stops_after_the_peak() {
    let s = Scratch::new();
    std::fs::write(s.path("contended.lua"), CONTENDED).unwrap();
    let c = users_search(&s, "./contended.lua", 32);
    let users = step_users(&c);
    assert_eq!(users, [1, 2, 4, 8, 16], "{c}");
    let peak = c["peak_users"].as_u64().unwrap();
    assert!(peak == 2 || peak == 4, "{c}");
}

#[test]
fn capacity_search_finds_a_known_limit() {
    let s = Scratch::new();
    std::fs::write(s.path("service.lua"), SERVICE_10MS).unwrap();
    // 2 users at 10 ms an event: at most 200 per second.
    let doc = s
        .ok(&[
            "run",
            "./service.lua",
            "--threads=2",
            "--find-capacity",
            "--slo=p99:250ms",
            "--step-time=2",
            "--settle-time=1",
            "--format=json",
        ])
        .json();
    let c = &doc["capacity"];
    assert_eq!(c["mode"], "rate");
    assert_eq!(c["slos"][0], "p99<=250ms");
    let cap = c["capacity"].as_f64().expect("a capacity");
    let steps = c["steps"].as_array().unwrap();
    let flat_out = steps[0]["achieved_per_s"].as_f64().unwrap();
    assert!(steps[0].get("offered_per_s").is_none(), "{}", steps[0]);
    // Within a fifth below what the users serve flat out (queueing near
    // saturation costs latency), and never above it by more than chance.
    assert!(
        cap >= 0.8 * flat_out && cap <= 1.1 * flat_out,
        "{cap} vs {flat_out}: {c}"
    );
    assert!((140.0..=210.0).contains(&cap), "{c}");
    // Some step beyond it missed, and the document is the capacity step's run.
    assert!(steps.iter().any(|s| s["met"] == false), "{c}");
    let offered = doc["rate"]["target_per_s"].as_f64().unwrap();
    assert!((offered - cap).abs() < 0.01, "{offered} {cap}");

    // The closed model: users double up to --threads; sleeping users
    // scale, so the peak is at the most users.
    let c = users_search(&s, "./service.lua", 4);
    let users = step_users(&c);
    assert_eq!(users, [1, 2, 4], "{c}");
    assert_eq!(c["peak_users"], 4, "{c}");
    assert_eq!(c["max_users_met"], 4, "{c}");
    assert!(c["capacity"].as_f64().unwrap() > 200.0, "{c}");

    for (args, says) in [
        (vec!["--find-capacity", "--slo=p99"], "write METRIC:LIMIT"),
        (
            vec!["--find-capacity", "--slo=p99:fast"],
            "--slo 'p99<=fast'",
        ),
        (vec!["--slo=p99:10ms"], "add --find-capacity"),
        (
            vec!["--find-capacity", "--slo=tps:5"],
            "limits no latency or errors",
        ),
        (
            vec!["--find-capacity", "--slo=NewOrder.p99:5ms"],
            "no kind named 'NewOrder'",
        ),
        (vec!["--find-capacity=maybe"], "find-capacity"),
        (
            vec!["--find-capacity", "--step-time=0"],
            "--step-time=0: expected seconds above 0",
        ),
        (
            vec!["--find-capacity", "--settle-time=1e300"],
            "--settle-time=1e300: expected seconds from 0",
        ),
    ] {
        let mut a = vec!["run", "noop"];
        a.extend(&args);
        let r = s.run(&a);
        assert_eq!(r.code, 2, "{args:?}: {}\n{}", r.stdout, r.stderr);
        assert!(r.stderr.contains(says), "{args:?}: {}", r.stderr);
    }
}
