//! A campaign run sharded (`dbmeter campaign run FILE --shard=I/N`): two
//! local processes against one SQLite target and one store (an SQLite
//! file, and a throwaway PostgreSQL server). Each cell is met at the start
//! barrier in the store, run by both shards with their share of the
//! clients, and merged once by shard 0; `--resume` and the campaign's
//! selectors see only the merged runs. A shard that
//! never comes ends the other's wait with the missing shard named.

use crate::common::{Run, Scratch};
use dbmeter_store::{Filter, Selector, Store};
use serde_json::Value;
use std::process::{Command, Stdio};

const CAMPAIGN: &str = r#"
name = "sharded"
store = "results.db"
duration = 1
clients = [2, 3]
shards = 2
shard_timeout = 120
start_margin = 1
options = { report-interval = 1 }

[[target]]
name = "lite"
url = "sqlite:lite.sqlite"

[[workload]]
name = "oltp_point_select"
options = { table-size = 200 }
"#;

fn cmd(s: &Scratch, args: &[&str]) -> Command {
    let mut c = s.cmd(args);
    c.env("DBMETER_HOME", s.path("home"))
        .env_remove("DBMETER_STORE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// Runs shards 0..n of the campaign file at once; their outputs.
fn shards(s: &Scratch, file: &str, n: u64, extra: &[&str]) -> Vec<Run> {
    let children: Vec<_> = (0..n)
        .map(|i| {
            let shard = format!("--shard={i}/{n}");
            let mut args = vec!["campaign", "run", file, shard.as_str()];
            args.extend(extra);
            cmd(s, &args).spawn().expect("start a shard")
        })
        .collect();
    children
        .into_iter()
        .map(|c| {
            let o = c.wait_with_output().expect("shard");
            Run {
                code: o.status.code().unwrap_or(-1),
                stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
                stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
            }
        })
        .collect()
}

fn doc(store: &mut Store, id: i64) -> Value {
    let r = store.run(id).expect("read run").expect("run exists");
    serde_json::from_str(&r.document).expect("stored JSON")
}

#[test]
fn two_processes_run_a_campaign_merged_cell_by_cell() {
    let s = Scratch::new();
    let store = s.path("results.db").to_string_lossy().into_owned();
    two_shards_merge_each_cell_once(&s, &store);
}

/// The same with the results store, and so the barrier, in a throwaway
/// PostgreSQL server.
#[test]
fn two_processes_meet_in_a_postgres_store() {
    let Some(server) = dbmeter_testkit::servers::start(dbmeter_server::Flavor::Postgres) else {
        return;
    };
    let s = Scratch::new();
    two_shards_merge_each_cell_once(&s, &server.url());
}

fn two_shards_merge_each_cell_once(s: &Scratch, store_spec: &str) {
    std::fs::write(s.path("c.toml"), CAMPAIGN).expect("campaign file");
    let store_arg = format!("--store={store_spec}");
    let runs = shards(s, "c.toml", 2, &[store_arg.as_str()]);
    for (i, r) in runs.iter().enumerate() {
        assert_eq!(r.code, 0, "shard {i}:\n{}\n{}", r.stdout, r.stderr);
        assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
        assert!(r.stdout.contains("all 2 shards arrived"), "{}", r.stdout);
    }
    assert!(
        runs[0].stdout.contains("merged 2 of 2 shards"),
        "{}",
        runs[0].stdout
    );

    let mut store = Store::open(store_spec).expect("store");
    let campaign = Filter {
        selectors: vec![Selector::Campaign("sharded".into())],
    };
    let merged = store.runs(&campaign).expect("runs");
    // One merged run per cell, and nothing else in the campaign.
    let mut cells: Vec<String> = merged.iter().filter_map(|r| r.cell.clone()).collect();
    cells.sort();
    assert_eq!(
        cells,
        vec!["oltp_point_select/lite/2", "oltp_point_select/lite/3"],
        "{merged:?}"
    );
    for m in &merged {
        assert!(m.completed(), "{m:?}");
        let cell = m.cell.clone().unwrap_or_default();
        let d = doc(&mut store, m.id);
        assert_eq!(d["merged"]["count"], 2, "{d}");
        assert_eq!(d["merged"]["shards"].as_array().map(Vec::len), Some(2));
        assert_eq!(Some(d["threads"].as_u64().unwrap_or(0) as u32), m.threads);
        // The shards' own runs, tagged, outside the campaign.
        let shard_runs = store
            .runs(&Filter {
                selectors: vec![Selector::Tag {
                    key: "shard-cell".into(),
                    value: cell.clone(),
                }],
            })
            .expect("shard runs");
        assert_eq!(shard_runs.len(), 2, "{shard_runs:?}");
        assert!(shard_runs.iter().all(|r| r.campaign.is_none()));
        let sum: i64 = shard_runs.iter().filter_map(|r| r.events).sum();
        assert!(sum > 0);
        assert_eq!(
            m.events,
            Some(sum),
            "{cell}: merged events are the shards' sum"
        );
        let users: u64 = shard_runs
            .iter()
            .map(|r| u64::from(r.threads.unwrap_or(0)))
            .sum();
        assert_eq!(Some(users as u32), m.threads);
        // The barrier: both measured from (about) one instant.
        let starts: Vec<f64> = shard_runs
            .iter()
            .map(|r| {
                doc(&mut store, r.id)["shard"]["measure_start_unix_s"]
                    .as_f64()
                    .expect("shard start")
            })
            .collect();
        assert!((starts[0] - starts[1]).abs() < 2.0, "{starts:?}");
    }

    // Resumed: every cell has its merged run, nothing runs again.
    let again = shards(s, "c.toml", 2, &["--resume", store_arg.as_str()]);
    for r in &again {
        assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    }
    assert_eq!(store.runs(&campaign).expect("runs").len(), 2);
}

#[test]
fn a_shard_that_never_comes_is_named_after_the_timeout() {
    let s = Scratch::new();
    let file = CAMPAIGN.replace("shard_timeout = 120", "shard_timeout = 1");
    std::fs::write(s.path("c.toml"), file).expect("campaign file");
    let r = s.output(cmd(&s, &["campaign", "run", "c.toml", "--shard=0/2"]));
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("shard 1/2 did not arrive within 1 s"),
        "{}",
        r.stderr
    );
    // The file says 2 shards: a process without --shard, or with
    // another count, is refused before anything runs.
    let r = s.output(cmd(&s, &["campaign", "run", "c.toml"]));
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("--shard=I/2"), "{}", r.stderr);
    let r = s.output(cmd(&s, &["campaign", "run", "c.toml", "--shard=0/3"]));
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("runs as 2 shards"), "{}", r.stderr);
    let r = s.output(cmd(&s, &["campaign", "run", "c.toml", "--shard=2/2"]));
    assert_eq!(r.code, 2, "{}", r.stderr);
}

/// Shard 1 dies (SIGKILL) once the cell started: shard 0 waits
/// `shard_timeout` for its result, merges its own, and stores the cell's
/// run as failed, its error and notes naming the missing shard.
#[test]
fn a_shard_lost_during_a_cell_makes_the_merged_run_failed() {
    use std::io::{BufRead, BufReader};
    let s = Scratch::new();
    let file = CAMPAIGN
        .replace("shard_timeout = 120", "shard_timeout = 5")
        .replace("clients = [2, 3]", "clients = [2]")
        .replace("duration = 1", "duration = 3");
    std::fs::write(s.path("c.toml"), file).expect("campaign file");
    let zero = cmd(&s, &["campaign", "run", "c.toml", "--shard=0/2"])
        .spawn()
        .expect("shard 0");
    let mut one = cmd(&s, &["campaign", "run", "c.toml", "--shard=1/2"])
        .spawn()
        .expect("shard 1");
    let out = one.stdout.take().expect("shard 1's stdout");
    let mut seen = Vec::new();
    for line in BufReader::new(out).lines() {
        let line = line.expect("a line");
        let met = line.contains("all 2 shards arrived");
        seen.push(line);
        if met {
            break;
        }
    }
    one.kill().expect("kill shard 1");
    let _ = one.wait();
    assert!(seen.iter().any(|l| l.contains("arrived")), "{seen:?}");
    let o = zero.wait_with_output().expect("shard 0");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert_eq!(o.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stdout.contains("merged 1 of 2 shards"), "{stdout}");
    let mut store = Store::open(&s.path("results.db").to_string_lossy()).expect("store");
    let merged = store
        .runs(&Filter {
            selectors: vec![Selector::Campaign("sharded".into())],
        })
        .expect("runs");
    assert_eq!(merged.len(), 1, "{merged:?}");
    assert_eq!(merged[0].end_reason, "failed");
    let error = merged[0].end_error.clone().unwrap_or_default();
    assert!(error.contains("shard 1/2 missing"), "{error}");
    let d = doc(&mut store, merged[0].id);
    assert_eq!(d["merged"]["missing"], serde_json::json!([1]), "{d}");
}
