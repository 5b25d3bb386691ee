//! Shards: `--shard=I/N` runs N processes that together do what one does,
//! `--start-at` lets their users go together, and `dbmeter merge` makes
//! one run of their results. Counts are exact (`--events`); latency is
//! checked against the shards' own histograms, merged here with the
//! hdrhistogram crate directly (dbmeter keeps no raw latencies).

use crate::common::*;
use base64::Engine as _;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::Deserializer;
use serde_json::Value;
use std::time::{SystemTime, UNIX_EPOCH};

const DB: &str = "--db=sqlite:t.sqlite";
const SIZE: &str = "--table-size=1000";

fn prepared() -> Scratch {
    let s = Scratch::new();
    s.ok(&["prepare", "oltp_read_only", DB, SIZE]);
    s
}

fn read(s: &Scratch, file: &str) -> Value {
    let text = std::fs::read_to_string(s.path(file)).expect("result file");
    serde_json::from_str(&text).expect("JSON")
}

/// Unix seconds `ahead` from now, as `--start-at` takes them.
fn soon(ahead: u64) -> String {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    (now.as_secs() + ahead).to_string()
}

/// Runs shards `which` of `n` at once (one process each) with `extra`
/// options, each writing `s{I}.json`; asserts each exits 0.
fn run_shards(s: &Scratch, n: u64, which: &[u64], extra: &[&str]) {
    let start = format!("--start-at={}", soon(3));
    let children: Vec<_> = which
        .iter()
        .map(|i| {
            let shard = format!("--shard={i}/{n}");
            let out = format!("--output=s{i}.json");
            let mut args = vec!["run", "oltp_read_only", DB, SIZE, "--format=json"];
            args.extend([shard.as_str(), out.as_str(), start.as_str()]);
            args.extend(extra);
            s.spawn(&args)
        })
        .collect();
    for (i, c) in which.iter().zip(children) {
        let o = c.wait_with_output().expect("shard");
        assert_eq!(
            o.status.code(),
            Some(0),
            "shard {i}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

/// The HDR histogram of a `BASE64;min;max;sum` field, and its exact min
/// and max.
fn histogram(field: &Value) -> (Histogram<u64>, u64, u64) {
    let text = field.as_str().expect("histogram field");
    let parts: Vec<&str> = text.split(';').collect();
    assert_eq!(parts.len(), 4, "{text}");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(parts[0])
        .expect("base64");
    let h: Histogram<u64> = Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .expect("HdrHistogram V2");
    (h, parts[1].parse().unwrap(), parts[2].parse().unwrap())
}

fn percentile_ms(summary: &Value, p: f64) -> f64 {
    summary["percentiles"]
        .as_array()
        .expect("percentiles")
        .iter()
        .find(|x| x["percentile"].as_f64() == Some(p))
        .and_then(|x| x["ms"].as_f64())
        .unwrap_or_else(|| panic!("no p{p} in {summary}"))
}

#[test]
fn three_shards_do_what_one_process_does() {
    let s = prepared();
    let same = ["--threads=4", "--events=3000", "--time=0", "--rand-seed=5"];
    let one = s
        .ok(&[
            &["run", "oltp_read_only", DB, SIZE, "--format=json"][..],
            &same[..],
        ]
        .concat())
        .json();
    run_shards(&s, 3, &[0, 1, 2], &same);
    let shards: Vec<Value> = (0..3).map(|i| read(&s, &format!("s{i}.json"))).collect();
    // Users and events split exactly: 2+1+1 users, 1000 events each.
    let threads: Vec<u64> = shards
        .iter()
        .map(|d| d["threads"].as_u64().unwrap())
        .collect();
    assert_eq!(threads, [2, 1, 1]);
    for (i, d) in shards.iter().enumerate() {
        assert_eq!(d["totals"]["events"], 1000, "shard {i}");
        assert_eq!(d["shard"]["index"], i as u64);
        assert_eq!(d["shard"]["count"], 3);
        assert!(d["shard"]["start_skew_ms"].is_number(), "{}", d["shard"]);
        assert!(d["shard"]["start_at"].as_str().unwrap().ends_with('Z'));
        // The document records the options as given, not the share.
        assert_eq!(d["options"]["threads"], "4");
        assert!(d["options"].get("shard").is_none());
    }
    // A different seed per shard, from the one given.
    assert_ne!(shards[0]["seed"], shards[1]["seed"]);
    assert_ne!(shards[1]["seed"], shards[2]["seed"]);

    let files = ["s0.json", "s1.json", "s2.json"];
    let r = s.ok(&[&["merge", "--format=json"][..], &files[..]].concat());
    assert!(r.stderr.contains("merged 3 of 3 shards"), "{}", r.stderr);
    assert!(!r.stderr.contains("missing"), "{}", r.stderr);
    let m = r.json();
    // The same counts as the single process.
    for key in ["events", "queries"] {
        assert_eq!(m["totals"][key], one["totals"][key], "{key}");
    }
    assert_eq!(m["totals"]["counts"], one["totals"]["counts"]);
    assert_eq!(m["threads"], 4);
    assert_eq!(m["merged"]["count"], 3);
    assert_eq!(m["merged"]["missing"], serde_json::json!([]));
    let per_interval: u64 = m["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["events"].as_u64().unwrap())
        .sum();
    assert_eq!(per_interval, 3000, "the intervals hold every event");

    // Latency: the shards' histograms merged here, outside dbmeter.
    let mut all: Option<Histogram<u64>> = None;
    let (mut lo, mut hi) = (u64::MAX, 0);
    for d in &shards {
        let (h, min, max) = histogram(&d["latency_histogram"]);
        (lo, hi) = (lo.min(min), hi.max(max));
        match &mut all {
            None => all = Some(h),
            Some(a) => a.add(&h).unwrap(),
        }
    }
    let all = all.unwrap();
    assert_eq!(all.len(), 3000);
    assert_eq!(m["latency_ms"]["count"], 3000);
    assert_eq!(m["latency_ms"]["max_ms"].as_f64().unwrap(), hi as f64 / 1e6);
    assert_eq!(m["latency_ms"]["min_ms"].as_f64().unwrap(), lo as f64 / 1e6);
    for p in [50.0, 95.0, 99.0, 99.9] {
        let want = all.value_at_quantile(p / 100.0).clamp(lo, hi) as f64 / 1e6;
        let got = percentile_ms(&m["latency_ms"], p);
        // Within the histogram's precision (3 significant digits).
        assert!(
            (got - want).abs() <= want * 1e-3 + 1e-6,
            "p{p}: merged {got} ms, histograms {want} ms"
        );
        // A merged percentile lies between the shards' own.
        let own: Vec<f64> = shards
            .iter()
            .map(|d| percentile_ms(&d["latency_ms"], p))
            .collect();
        let (a, b) = own
            .iter()
            .fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(*x), b.max(*x)));
        assert!(
            got >= a * 0.999 && got <= b * 1.001,
            "p{p}: {got} outside {own:?}"
        );
    }
    // The text report, as `run` prints it.
    let text = s.ok(&[&["merge"][..], &files[..]].concat());
    assert_eq!(text.stat("total number of events:"), 3000);
}

#[test]
fn a_missing_shard_is_reported_and_stored_shards_merge() {
    let s = prepared();
    let store = format!("--store={}", s.path("r.db").display());
    run_shards(
        &s,
        3,
        &[0, 1],
        &[
            "--threads=3",
            "--events=300",
            "--time=0",
            store.as_str(),
            "--tag=job=j1",
        ],
    );
    let r = s.ok(&["merge", "s0.json", "s1.json", "--format=json"]);
    assert!(
        r.stderr.contains("shard 2/3 missing"),
        "stderr: {}",
        r.stderr
    );
    assert_eq!(
        r.stderr.lines().filter(|l| l.contains("missing")).count(),
        1
    );
    let m = r.json();
    assert_eq!(m["merged"]["missing"], serde_json::json!([2]));
    assert_eq!(m["totals"]["events"], 200);
    assert!(
        m["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["message"].as_str().unwrap().contains("shard 2/3 missing")),
        "{}",
        m["warnings"]
    );
    // The same shards from the store, by tag; the merged run is stored.
    let r = s.ok(&[
        "merge",
        "tag:job=j1",
        store.as_str(),
        "--tag=job=j1-merged",
        "--format=json",
    ]);
    assert_eq!(r.json()["totals"]["events"], 200);
    assert!(r.stderr.contains("stored as run #3"), "{}", r.stderr);
    let list = s.ok(&[
        "results",
        "list",
        "tag:job=j1-merged",
        store.as_str(),
        "--format=csv",
    ]);
    assert_eq!(list.stdout.lines().count(), 2, "{}", list.stdout);
}

#[test]
fn shards_with_different_options_are_refused_unless_forced() {
    let s = prepared();
    run_shards(&s, 2, &[0], &["--threads=2", "--events=50", "--time=0"]);
    run_shards(&s, 2, &[1], &["--threads=4", "--events=50", "--time=0"]);
    let r = s.run(&["merge", "s0.json", "s1.json"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("different options"), "{}", r.stderr);
    assert!(r.stderr.contains("--threads"), "{}", r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    let m = s
        .ok(&["merge", "s0.json", "s1.json", "--force", "--format=json"])
        .json();
    assert_eq!(
        m["merged"]["differing_options"][0],
        "--threads: \"2\" (shard 0), \"4\" (shard 1)"
    );
    // A shard given twice, and a run that was no shard, are refused.
    let r = s.run(&["merge", "s0.json", "s0.json"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("given twice"), "{}", r.stderr);
    s.ok(&[
        "run",
        "oltp_read_only",
        DB,
        SIZE,
        "--events=10",
        "--time=0",
        "--format=json",
        "--output=plain.json",
    ]);
    let r = s.run(&["merge", "plain.json"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("without --shard"), "{}", r.stderr);
}

#[test]
fn bad_shard_specs_and_starts_are_usage_errors() {
    let s = prepared();
    let base = ["run", "oltp_read_only", DB, SIZE, "--threads=4", "--time=1"];
    for (bad, says) in [
        ("--shard=3/2", "numbered from 0 to 1"),
        ("--shard=2/2", "numbered from 0 to 1"),
        ("--shard=0/0", "at least one shard"),
        ("--shard=x/4", "'x' is not a shard number"),
        ("--shard=1", "no '/'"),
        ("--shard=", "--shard is empty"),
        ("--shard=0/5", "every shard needs a user"),
        ("--start-at=tomorrow", "--start-at=tomorrow: not a time"),
        ("--start-at=2026-01-01T10:00:00+02:00", "in UTC"),
    ] {
        let r = s.run(&[&base[..], &[bad]].concat());
        assert_eq!(r.code, 2, "{bad}: {}{}", r.stdout, r.stderr);
        assert_eq!(r.stderr.trim().lines().count(), 1, "{bad}: {}", r.stderr);
        assert!(r.stderr.contains(says), "{bad}: {}", r.stderr);
    }
    let r = s.run(&["cleanup", "oltp_read_only", DB, "--shard=0/2"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("done once"), "{}", r.stderr);
    let r = s.run(&["prepare", "oltp_read_only", DB, "--start-at=0"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    // A start in the past: at once, with a warning, and the lateness.
    let r = s.ok(&[
        "run",
        "oltp_read_only",
        DB,
        SIZE,
        "--events=10",
        "--time=0",
        "--start-at=2020-01-01T00:00:00Z",
        "--format=json",
    ]);
    assert!(r.stderr.contains("starting at once"), "{}", r.stderr);
    let skew = r.json()["shard"]["start_skew_ms"].as_f64().unwrap();
    assert!(skew > 1e9, "{skew}");
    let r = s.run(&["merge"]);
    assert_eq!(r.code, 2);
    // A campaign is sharded on its command line (`campaign run FILE
    // --shard=I/N`), not by a run option in its file.
    std::fs::write(
        s.path("c.toml"),
        "name = \"c\"\nduration = 1\nclients = [1]\n\
         options = { shard = \"0/2\" }\n\
         [[target]]\nname = \"a\"\nurl = \"sqlite:a.db\"\n\
         [[workload]]\nname = \"oltp_read_only\"\n",
    )
    .expect("write the campaign");
    let r = s.run_home(&["campaign", "run", "c.toml"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("campaign run FILE --shard=I/N"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_sharded_prepare_loads_each_shard_its_tables() {
    let s = Scratch::new();
    for i in 0..2 {
        let shard = format!("--shard={i}/2");
        let r = s.ok(&[
            "prepare",
            "oltp_read_only",
            DB,
            "--table-size=10",
            "--tables=5",
            &shard,
        ]);
        assert!(
            r.stdout.contains(&format!("Shard {i}/2: loading tables")),
            "{}",
            r.stdout
        );
        let want: &[&str] = if i == 0 {
            &["sbtest1", "sbtest2", "sbtest3"]
        } else {
            &["sbtest1", "sbtest2", "sbtest3", "sbtest4", "sbtest5"]
        };
        assert_eq!(tables(&s.db("t.sqlite")), want);
    }
    for t in 1..=5 {
        assert_eq!(
            count(
                &s.db("t.sqlite"),
                &format!("SELECT COUNT(*) FROM sbtest{t}")
            ),
            10
        );
    }
    // A prepare that does not split says so.
    let r = s.run(&["prepare", "tpch", "--db=sqlite:h.sqlite", "--shard=0/2"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("not split"), "{}", r.stderr);
}

#[test]
fn shards_against_a_mariadb_server() {
    use dbmeter_testkit::servers::{ask_n, start};
    let Some(server) = start(dbmeter_server::Flavor::MariaDb) else {
        return;
    };
    let s = Scratch::new();
    let db = format!("--db={}", server.url());
    let common = [
        "oltp_read_only",
        db.as_str(),
        "--tables=4",
        "--table-size=500",
    ];
    // Two prepare shards at once load two tables each.
    let children: Vec<_> = (0..2)
        .map(|i| {
            let shard = format!("--shard={i}/2");
            s.spawn(&[&["prepare"][..], &common[..], &[shard.as_str()]].concat())
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().expect("prepare shard");
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    for t in 1..=4 {
        assert_eq!(
            ask_n(&server, &format!("SELECT COUNT(*) FROM sbtest{t}")),
            500
        );
    }
    let same = ["--threads=5", "--events=600", "--time=0", "--format=json"];
    let one = s
        .ok(&[&["run"][..], &common[..], &same[..]].concat())
        .json();
    let start = format!("--start-at={}", soon(3));
    let children: Vec<_> = (0..3)
        .map(|i| {
            let shard = format!("--shard={i}/3");
            let out = format!("--output=m{i}.json");
            s.spawn(
                &[
                    &["run"][..],
                    &common[..],
                    &same[..],
                    &[shard.as_str(), out.as_str(), start.as_str()],
                ]
                .concat(),
            )
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().expect("run shard");
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let m = s
        .ok(&["merge", "m0.json", "m1.json", "m2.json", "--format=json"])
        .json();
    for key in ["events", "queries"] {
        assert_eq!(m["totals"][key], one["totals"][key], "{key}");
    }
    assert_eq!(m["totals"]["counts"], one["totals"]["counts"]);
    assert_eq!(m["threads"], 5);
    let threads: Vec<u64> = m["merged"]["shards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["threads"].as_u64().unwrap())
        .collect();
    assert_eq!(threads, [2, 2, 1]);
    // One server: its counters once, over the union of the shards'
    // windows (every shard's statements fall in it), not summed 3 times.
    assert_eq!(m["merged"]["counters"]["rule"], "union", "{}", m["merged"]);
    let questions = |d: &serde_json::Value| d["counters"]["delta"]["Questions"].as_u64();
    let union = questions(&m).expect("merged counters.delta.Questions");
    let queries = m["totals"]["queries"].as_u64().unwrap();
    let summed: u64 = (0..3)
        .map(|i| questions(&read(&s, &format!("m{i}.json"))).unwrap_or(0))
        .sum();
    assert!(
        union >= queries && union < 2 * queries,
        "Questions {union} over the union window, {queries} queries run, {summed} summed over the shards"
    );
    assert!(
        m["merged"]["left_out"]
            .as_array()
            .is_none_or(|l| l.iter().all(|x| !x.as_str().unwrap().contains("counters"))),
        "{}",
        m["merged"]
    );
}

#[test]
fn merged_shards_carry_their_warmups_and_os_figures() {
    let s = prepared();
    run_shards(
        &s,
        2,
        &[0, 1],
        &["--threads=2", "--time=2", "--warmup-time=1"],
    );
    let shards: Vec<Value> = (0..2).map(|i| read(&s, &format!("s{i}.json"))).collect();
    let m = s
        .ok(&["merge", "s0.json", "s1.json", "--format=json"])
        .json();
    let info = &m["merged"];
    // The warm-up: each shard's, agreeing, and the events summed.
    let w = &info["warmup"];
    assert_eq!(w["agree"], true, "{w}");
    assert!(w.get("disagreement").is_none(), "{w}");
    let per: Vec<&Value> = w["shards"]
        .as_array()
        .expect("merged.warmup.shards")
        .iter()
        .collect();
    assert_eq!(per.len(), 2);
    let mut events = 0;
    for (i, (x, d)) in per.iter().zip(&shards).enumerate() {
        assert_eq!(x["index"], i as u64);
        assert_eq!(x["mode"], "fixed");
        assert_eq!(x["events"], d["warmup"]["events"], "shard {i}");
        events += d["warmup"]["events"].as_u64().unwrap();
    }
    assert_eq!(m["warmup"]["events"], events);
    assert!(
        m["warmup"]["duration_s"].as_f64().unwrap() >= 1.0,
        "{}",
        m["warmup"]
    );
    // The OS figures: one machine, each shard's summary, the dbmeter
    // processes' CPU summed.
    let os = &info["os"];
    assert_eq!(os["machines"], 1, "{os}");
    let per: Vec<&Value> = os["shards"]
        .as_array()
        .expect("merged.os.shards")
        .iter()
        .collect();
    assert_eq!(per.len(), 2);
    let mut cpu: Option<f64> = None;
    for (x, d) in per.iter().zip(&shards) {
        assert_eq!(x["host"], d["environment"]["hostname"]);
        let samples = d["os"]["samples"].as_array().unwrap();
        assert_eq!(x["samples"], samples.len());
        let own: Vec<f64> = samples
            .iter()
            .filter_map(|s| s["client_cpu_pct"].as_f64())
            .collect();
        if !own.is_empty() {
            let mean = own.iter().sum::<f64>() / own.len() as f64;
            let got = x["client_cpu_pct"].as_f64().unwrap();
            assert!((got - mean).abs() < 1e-6, "{got} {mean}");
            *cpu.get_or_insert(0.0) += mean;
        }
    }
    match cpu {
        Some(c) => assert!(
            (os["client_cpu_pct"].as_f64().unwrap() - c).abs() < 1e-6,
            "{os}"
        ),
        None => assert!(os.get("client_cpu_pct").is_none(), "{os}"),
    }
    // Neither is said to be left out.
    let left_out = info["left_out"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    assert!(
        left_out
            .iter()
            .all(|x| !x.as_str().unwrap().contains("warm-up")),
        "{left_out:?}"
    );
    // The text report shows the merged warm-up as run's does.
    let text = s.ok(&["merge", "s0.json", "s1.json"]);
    assert!(
        text.stdout.contains("warm-up (not counted):"),
        "{}",
        text.stdout
    );
}

/// Two shards on one MariaDB server, stopped 3 s into their run and
/// started again 3 s later: each shard sees the outage, the merged run
/// has one, with their events lost summed, lasting at least as long as
/// each shard's.
#[test]
fn an_outage_both_shards_saw_is_one_in_the_merge() {
    use crate::procs::Watched;
    use std::time::Duration;
    let Some(mut server) = dbmeter_testkit::servers::start(dbmeter_server::Flavor::MariaDb) else {
        return;
    };
    let s = Scratch::new();
    let db = format!("--db={}", server.url());
    s.ok_home(&["prepare", "oltp_point_select", &db, "--table-size=1000"]);
    let start = format!("--start-at={}", soon(3));
    let mut runs: Vec<Watched> = (0..2)
        .map(|i| {
            let shard = format!("--shard={i}/2");
            let out = format!("--output=o{i}.json");
            let mut c = s.cmd(&[
                "run",
                "oltp_point_select",
                &db,
                "--table-size=1000",
                "--threads=2",
                "--time=14",
                "--reconnect-timeout=60",
                "--report-interval=1",
                "--format=json",
                &shard,
                &out,
                &start,
            ]);
            c.env("DBMETER_HOME", s.path("home"))
                .env_remove("DBMETER_STORE");
            Watched::spawn(c)
        })
        .collect();
    for r in &mut runs {
        assert!(
            r.wait_for_line(Duration::from_secs(60), |l| l.starts_with("[ 3s ]")),
            "a shard did not get to 3 s:\n{}\n{}",
            r.stdout(),
            r.stderr()
        );
    }
    server.stop().unwrap_or_else(|e| panic!("{e}"));
    std::thread::sleep(Duration::from_secs(3));
    server.restart().unwrap_or_else(|e| panic!("{e}"));
    for r in runs {
        let end = r.finish(Duration::from_secs(120));
        assert_eq!(end.code, Some(0), "{}", end.output());
    }
    let shards: Vec<Value> = (0..2).map(|i| read(&s, &format!("o{i}.json"))).collect();
    let own: Vec<&Value> = shards
        .iter()
        .map(|d| {
            let o = d["outages"]
                .as_array()
                .unwrap_or_else(|| panic!("no outage: {d}"));
            assert_eq!(o.len(), 1, "{o:?}");
            &o[0]
        })
        .collect();
    let m = s
        .ok(&["merge", "o0.json", "o1.json", "--format=json"])
        .json();
    let merged = m["outages"]
        .as_array()
        .unwrap_or_else(|| panic!("no outages: {m}"));
    assert_eq!(merged.len(), 1, "{merged:?}");
    let o = &merged[0];
    let lost: u64 = own.iter().map(|x| x["events_lost"].as_u64().unwrap()).sum();
    assert_eq!(o["events_lost"], lost, "{o}");
    let length = o["length_s"].as_f64().unwrap_or_else(|| panic!("{o}"));
    // Within a millisecond: the merge reckons in Unix seconds.
    for x in &own {
        assert!(length >= x["length_s"].as_f64().unwrap() - 1e-3, "{o} {x}");
    }
    assert!(o["start_s"].as_f64().unwrap() > 0.0, "{o}");
}

/// Two shards spread over two MariaDB servers (`--hosts=spread`): the
/// merged hosts' counts are the shards' summed by host; each shard read
/// the counters of one server, the same one, so they span one window.
#[test]
fn shards_over_two_hosts_sum_their_counts_by_host() {
    use dbmeter_testkit::servers::start;
    let Some(a) = start(dbmeter_server::Flavor::MariaDb) else {
        return;
    };
    let Some(b) = start(dbmeter_server::Flavor::MariaDb) else {
        return;
    };
    let s = Scratch::new();
    for server in [&a, &b] {
        s.ok_home(&[
            "prepare",
            "oltp_point_select",
            &format!("--db={}", server.url()),
            "--table-size=100",
        ]);
    }
    let db = format!(
        "--db=mysql://root@127.0.0.1:{},127.0.0.1:{}/test",
        a.port(),
        b.port()
    );
    let start = format!("--start-at={}", soon(3));
    let children: Vec<_> = (0..2)
        .map(|i| {
            let shard = format!("--shard={i}/2");
            let out = format!("--output=h{i}.json");
            s.spawn(&[
                "run",
                "oltp_point_select",
                &db,
                "--table-size=100",
                "--threads=4",
                "--events=400",
                "--time=0",
                "--hosts=spread",
                "--format=json",
                &shard,
                &out,
                &start,
            ])
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().expect("run shard");
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let shards: Vec<Value> = (0..2).map(|i| read(&s, &format!("h{i}.json"))).collect();
    let m = s
        .ok(&["merge", "h0.json", "h1.json", "--format=json"])
        .json();
    let hosts = m["hosts"]
        .as_array()
        .unwrap_or_else(|| panic!("no hosts: {m}"));
    assert_eq!(hosts.len(), 2, "{hosts:?}");
    for h in hosts {
        for key in ["users", "events", "errors", "connections"] {
            let sum: u64 = shards
                .iter()
                .flat_map(|d| d["hosts"].as_array().unwrap())
                .filter(|x| x["host"] == h["host"])
                .map(|x| x[key].as_u64().unwrap())
                .sum();
            assert_eq!(h[key], sum, "{key} of {h}");
        }
    }
    let users: u64 = hosts.iter().map(|h| h["users"].as_u64().unwrap()).sum();
    assert_eq!(users, 4);
    let events: u64 = hosts.iter().map(|h| h["events"].as_u64().unwrap()).sum();
    assert_eq!(events, 400);
}

/// `--start-barrier=NAME`: the shards meet in the results store they
/// share instead of being given one `--start-at`; they start together
/// (their measurements within 2 s), and a shard alone names the missing
/// one after `--barrier-timeout`.
#[test]
fn shards_meet_at_a_start_barrier_in_the_store() {
    let s = prepared();
    let children: Vec<_> = (0..2)
        .map(|i| {
            let shard = format!("--shard={i}/2");
            let out = format!("--output=b{i}.json");
            s.spawn(&[
                "run",
                "oltp_read_only",
                DB,
                SIZE,
                "--threads=2",
                "--events=200",
                "--time=0",
                "--format=json",
                "--store=r.db",
                "--start-barrier=nightly-1",
                shard.as_str(),
                out.as_str(),
            ])
        })
        .collect();
    for (i, c) in children.into_iter().enumerate() {
        let o = c.wait_with_output().expect("shard");
        assert_eq!(
            o.status.code(),
            Some(0),
            "shard {i}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let starts: Vec<f64> = (0..2)
        .map(|i| {
            let d = read(&s, &format!("b{i}.json"));
            assert_eq!(d["totals"]["events"], 100, "{d}");
            assert!(d["options"].get("start-barrier").is_none(), "{d}");
            d["shard"]["measure_start_unix_s"].as_f64().expect("start")
        })
        .collect();
    assert!((starts[0] - starts[1]).abs() < 2.0, "{starts:?}");

    let r = s.run(&[
        "run",
        "oltp_read_only",
        DB,
        SIZE,
        "--threads=2",
        "--time=1",
        "--store=r.db",
        "--start-barrier=nightly-2",
        "--barrier-timeout=0.5",
        "--shard=0/2",
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("'nightly-2': shard 1/2 did not arrive within 0.5 s"),
        "{}",
        r.stderr
    );
    for (bad, says) in [
        (
            vec!["--start-barrier=x", "--store=r.db"],
            "give --shard=I/N",
        ),
        (vec!["--start-barrier=x", "--shard=0/2"], "add --store"),
        (
            vec![
                "--start-barrier=x",
                "--shard=0/2",
                "--store=r.db",
                "--start-at=0",
            ],
            "leave out --start-at",
        ),
        (
            vec![
                "--start-barrier=x",
                "--shard=0/2",
                "--store=r.db",
                "--barrier-timeout=0",
            ],
            "--barrier-timeout",
        ),
    ] {
        let mut args = vec!["run", "oltp_read_only", DB, SIZE, "--threads=2", "--time=1"];
        args.extend(bad.iter().copied());
        let r = s.run(&args);
        assert_eq!(r.code, 2, "{bad:?}: {}", r.stderr);
        assert!(r.stderr.contains(says), "{bad:?}: {}", r.stderr);
    }
}

/// Runs `args` as shards 0..n of one run at once (one process each, a
/// common `--start-at`), each writing `{prefix}{I}.json`; asserts each
/// exits 0 and returns their stdout.
fn run_split(s: &Scratch, n: u64, args: &[&str], prefix: &str) -> Vec<String> {
    let start = format!("--start-at={}", soon(5));
    let children: Vec<_> = (0..n)
        .map(|i| {
            let shard = format!("--shard={i}/{n}");
            let out = format!("--output={prefix}{i}.json");
            s.spawn(&[args, &[shard.as_str(), out.as_str(), start.as_str()]].concat())
        })
        .collect();
    children
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let o = c.wait_with_output().expect("shard");
            assert_eq!(
                o.status.code(),
                Some(0),
                "shard {i}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            String::from_utf8_lossy(&o.stdout).into_owned()
        })
        .collect()
}

/// The named kinds' event counts: name to events.
fn kind_events(doc: &Value) -> Vec<(String, u64)> {
    doc["kinds"]
        .as_array()
        .expect("kinds")
        .iter()
        .map(|k| {
            (
                k["name"].as_str().expect("name").to_string(),
                k["events"].as_u64().expect("events"),
            )
        })
        .collect()
}

#[test]
fn tpch_throughput_streams_split_over_shards() {
    let s = Scratch::new();
    let db = "--db=sqlite:h.sqlite";
    s.ok(&["prepare", "tpch", db, "--scale-factor=0.01"]);
    let same = [
        "run",
        "tpch",
        db,
        "--test=throughput",
        "--streams=2",
        "--rand-seed=7",
        "--format=json",
    ];
    let one = s.ok(&same).json();
    // 3 shards of the run's 3 users: stream 1, stream 2, the refresh
    // stream.
    let said = run_split(&s, 3, &same, "h");
    for (i, want) in [
        "Shard 0/3: query stream 1 of 2",
        "Shard 1/3: query stream 2 of 2",
        "Shard 2/3: no query stream; the refresh stream",
    ]
    .iter()
    .enumerate()
    {
        assert!(said[i].contains(want), "shard {i}: {}", said[i]);
    }
    let shards: Vec<Value> = (0..3).map(|i| read(&s, &format!("h{i}.json"))).collect();
    let threads: Vec<u64> = shards
        .iter()
        .map(|d| d["threads"].as_u64().unwrap())
        .collect();
    assert_eq!(threads, [1, 1, 1]);
    // Each shard's streams are the single process's: the same queries in
    // the same order with the same parameters.
    let queries = |d: &Value| -> Vec<(u64, u64, u64, Value, String)> {
        d["tpch"]["queries"]
            .as_array()
            .expect("queries")
            .iter()
            .map(|q| {
                (
                    q["stream"].as_u64().unwrap(),
                    q["position"].as_u64().unwrap(),
                    q["query"].as_u64().unwrap(),
                    q["parameters"].clone(),
                    q["status"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    assert_eq!(queries(&shards[0]).len(), 22);
    assert!(queries(&shards[0]).iter().all(|q| q.0 == 1));
    assert!(queries(&shards[2]).is_empty());
    assert!(shards[0]["tpch"]["metrics"]["throughput_at_size"].is_null());
    let r = s.ok(&["merge", "h0.json", "h1.json", "h2.json", "--format=json"]);
    let m = r.json();
    assert_eq!(m["totals"]["events"], one["totals"]["events"]);
    assert_eq!(m["totals"]["counts"], one["totals"]["counts"]);
    assert_eq!(kind_events(&m), kind_events(&one));
    assert_eq!(m["threads"], 3);
    assert_eq!(queries(&m), queries(&one));
    assert_eq!(queries(&m).len(), 44);
    let refreshes = |d: &Value| -> Vec<(String, u64, String)> {
        d["tpch"]["refreshes"]
            .as_array()
            .expect("refreshes")
            .iter()
            .map(|x| {
                (
                    x["name"].as_str().unwrap().to_string(),
                    x["stream"].as_u64().unwrap(),
                    x["status"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    assert_eq!(refreshes(&m), refreshes(&one));
    assert_eq!(refreshes(&m).len(), 4);
    // The figures are the merged streams': per query over both streams.
    let figures = |d: &Value| -> Vec<(String, String)> {
        d["figures"]
            .as_array()
            .expect("figures")
            .iter()
            .map(|f| {
                (
                    f["name"].as_str().unwrap().to_string(),
                    f["status"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    assert_eq!(figures(&m), figures(&one));
    assert_eq!(figures(&m).len(), 24);
    // Throughput@Size over the merged run's time, as one process gives it.
    let t = &m["tpch"]["metrics"];
    let ts = m["totals"]["duration_s"].as_f64().unwrap();
    assert_eq!(t["throughput_seconds"].as_f64().unwrap(), ts);
    let want = 2.0 * 22.0 * 3600.0 / ts * 0.01;
    let got = t["throughput_at_size"].as_f64().expect("Throughput@Size");
    assert!((got - want).abs() <= want * 1e-9, "{got} vs {want}");
    assert!(one["tpch"]["metrics"]["throughput_at_size"].is_number());
    let left_out = m["merged"]["left_out"].to_string();
    assert!(!left_out.contains("tpch section"), "{left_out}");
    // The text report has tpch's section.
    let text = s.ok(&["merge", "h0.json", "h1.json", "h2.json"]);
    assert!(
        text.stdout.contains("TPC-H throughput test"),
        "{}",
        text.stdout
    );
}

#[test]
fn tpch_shards_refuse_what_does_not_split() {
    let s = Scratch::new();
    let db = "--db=sqlite:h.sqlite";
    s.ok(&["prepare", "tpch", db, "--scale-factor=0.01"]);
    let base = ["run", "tpch", db, "--rand-seed=7", "--queries=6"];
    for (extra, says) in [
        (&["--shard=0/2"][..], "the power test is one stream"),
        (&["--shard=0/2", "--test=full"][..], "--test=full"),
        (
            &["--shard=0/2", "--test=throughput", "--rate=5"][..],
            "a rate is not split",
        ),
        (
            &["--shard=3/4", "--test=throughput", "--streams=2"][..],
            "every shard needs one",
        ),
    ] {
        let r = s.run(&[&base[..], extra].concat());
        assert_eq!(r.code, 2, "{extra:?}: {}{}", r.stdout, r.stderr);
        assert_eq!(
            r.stderr.trim().lines().count(),
            1,
            "{extra:?}: {}",
            r.stderr
        );
        assert!(r.stderr.contains(says), "{extra:?}: {}", r.stderr);
    }
    // Without a common seed the shards would draw different parameters.
    let r = s.run(&[
        "run",
        "tpch",
        db,
        "--test=throughput",
        "--queries=6",
        "--shard=0/2",
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--rand-seed"), "{}", r.stderr);
}

/// A slow log event of thread `thread` at Unix time `ts`.
fn slow_event(thread: u64, ts: u64, rows: u64, sql: &str) -> String {
    format!(
        "# User@Host: app[app] @ localhost []\n# Thread_id: {thread}  Schema:   QC_hit: No\n\
         # Query_time: 0.000100  Lock_time: 0.000000  Rows_sent: {rows}  Rows_examined: 0\n\
         SET timestamp={ts};\n{sql};\n"
    )
}

#[test]
fn replay_sessions_split_over_shards() {
    let s = Scratch::new();
    s.db("target.sqlite")
        .execute_batch("CREATE TABLE kept (a INT); INSERT INTO kept VALUES (1), (2);")
        .expect("make the target");
    let db = format!("--db=sqlite:{}", s.path("target.sqlite").display());
    // 7 sessions of different lengths, each with a temporary table of its
    // own that only its own connection sees: a session split over shards,
    // or run out of order, would fail.
    let t0 = 1_795_775_498u64;
    let mut log = String::from("# Time: 261127 10:31:38\n");
    for thread in 1..=7u64 {
        let ts = t0 + thread / 3;
        log += &slow_event(
            thread,
            ts,
            0,
            &format!("CREATE TEMP TABLE mine{thread} (a INT)"),
        );
        for i in 0..thread {
            log += &slow_event(
                thread,
                ts,
                0,
                &format!("INSERT INTO mine{thread} VALUES ({i})"),
            );
        }
        log += &slow_event(thread, ts, thread, &format!("SELECT a FROM mine{thread}"));
        log += &slow_event(thread, ts, 2, "SELECT a FROM kept");
        if thread % 2 == 0 {
            log += &slow_event(thread, ts, 0, "SELECT nope FROM missing_table");
        }
    }
    std::fs::write(s.path("s.log"), &log).expect("write the log");
    let same = [
        "run",
        "replay",
        "--log=s.log",
        db.as_str(),
        "--speed=50",
        "--format=json",
    ];
    let one = s.ok(&same).json();
    let said = run_split(&s, 3, &same, "r");
    assert!(
        said[1].contains("Shard 1/3: 2 of the log's 7 sessions"),
        "{}",
        said[1]
    );
    let shards: Vec<Value> = (0..3).map(|i| read(&s, &format!("r{i}.json"))).collect();
    let sessions: Vec<u64> = shards
        .iter()
        .map(|d| d["replay"]["sessions"].as_u64().unwrap())
        .collect();
    assert_eq!(sessions, [3, 2, 2]);
    let m = s
        .ok(&["merge", "r0.json", "r1.json", "r2.json", "--format=json"])
        .json();
    assert_eq!(m["totals"]["events"], one["totals"]["events"]);
    assert_eq!(m["totals"]["counts"], one["totals"]["counts"]);
    assert_eq!(m["errors"], one["errors"]);
    assert_eq!(kind_events(&m), kind_events(&one));
    let (rm, ro) = (&m["replay"], &one["replay"]);
    for key in ["sessions", "statements", "errors", "rows_differ", "skipped"] {
        assert_eq!(rm[key], ro[key], "{key}");
    }
    assert_eq!(rm["sessions"], 7);
    // Only the missing table is refused (3 sessions have it): every
    // session's own temporary table was there.
    assert_eq!(rm["errors"], 3, "{rm}");
    let classes = |r: &Value| -> Vec<(String, u64, u64, u64, u64)> {
        let mut v: Vec<_> = r["classes"]
            .as_array()
            .expect("classes")
            .iter()
            .map(|c| {
                (
                    c["fingerprint"].as_str().unwrap().to_string(),
                    c["logged"].as_u64().unwrap(),
                    c["replayed"].as_u64().unwrap(),
                    c["errors"].as_u64().unwrap(),
                    c["rows_differ"].as_u64().unwrap(),
                )
            })
            .collect();
        v.sort();
        v
    };
    assert_eq!(classes(rm), classes(ro));
    assert!(rm["max_lag_ms"].is_number(), "{rm}");
    let left_out = m["merged"]["left_out"].to_string();
    assert!(!left_out.contains("replay section"), "{left_out}");
    // More shards than sessions: one line.
    let r = s.run(&["run", "replay", "--log=s.log", db.as_str(), "--shard=0/8"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("every shard needs one"), "{}", r.stderr);
}
