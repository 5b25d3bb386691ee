//! The results store end to end: `run --store/--tag`, `dbmeter results
//! list|show|export|delete`, `dbmeter compare`, on SQLite stores and on a
//! throwaway PostgreSQL server.

use crate::common::*;
use dbmeter_server::Flavor;
use dbmeter_store::{RunMeta, Store};
use dbmeter_testkit::servers;
use serde_json::Value;
use std::collections::BTreeMap;
use std::process::Stdio;
use std::time::Duration;

/// A failure: the exit code, and one line on stderr saying `want`.
fn fails(s: &Scratch, args: &[&str], code: i32, want: &str) {
    let r = s.run_home(args);
    assert_eq!(
        r.code, code,
        "dbmeter {args:?}:\n{}\n{}",
        r.stdout, r.stderr
    );
    assert!(r.stderr.contains(want), "dbmeter {args:?}: {}", r.stderr);
    assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
}

/// A short point-select run on the scratch directory's default SQLite file.
const QUICK: &[&str] = &["run", "oltp_point_select", "--time=0", "--events=3000"];

fn quick(s: &Scratch, extra: &[&str]) -> Run {
    let mut args = QUICK.to_vec();
    args.extend_from_slice(extra);
    s.ok_home(&args)
}

fn stored_id(r: &Run) -> i64 {
    let line = r
        .stderr
        .lines()
        .find(|l| l.starts_with("stored as run #"))
        .unwrap_or_else(|| panic!("no 'stored as run' in:\n{}", r.stderr));
    line["stored as run #".len()..]
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{line}"))
}

fn parse_csv(text: &str) -> Vec<BTreeMap<String, String>> {
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    lines
        .map(|l| {
            header
                .iter()
                .map(|h| h.to_string())
                .zip(l.split(',').map(str::to_string))
                .collect()
        })
        .collect()
}

#[test]
fn run_stores_its_document_and_results_show_list_and_export_it() {
    let s = Scratch::new();
    let r = quick(
        &s,
        &[
            "--format=json",
            "--store",
            "--tag",
            "phase=before",
            "--tag=who=me",
        ],
    );
    let default_store = s.path("home/results.db");
    assert!(
        r.stderr
            .contains(&format!("stored as run #1 in {}", default_store.display())),
        "{}",
        r.stderr
    );
    assert!(default_store.is_file());
    let doc = r.json();
    // --store and --tag are the store's business, not run options.
    assert!(doc["options"].get("store").is_none() && doc["options"].get("tag").is_none());

    // show --format json: exactly what the run printed.
    let shown = s.ok_home(&["results", "show", "1", "--format=json"]);
    assert_eq!(shown.stdout, r.stdout);
    // show: where it came from, then the usual report.
    let text = s.ok_home(&["results", "show", "1"]).stdout;
    for want in [
        "run:            #1",
        "workload:       oltp_point_select",
        "tags:           phase=before,who=me",
        "end:            event_limit",
        "SQL statistics:",
        "99th percentile:",
    ] {
        assert!(text.contains(want), "missing {want} in\n{text}");
    }

    // A second run, into another store, given as a separate word.
    let r2 = quick(&s, &["--threads=2", "--store", "other.db", "--format=json"]);
    assert_eq!(stored_id(&r2), 1);
    assert!(s.path("other.db").is_file());
    let r3 = quick(&s, &["--threads=2", "--store=", "--tag=phase=after"]);
    assert_eq!(stored_id(&r3), 2);

    // list as text, CSV, JSON.
    let list = s.ok_home(&["results", "list"]).stdout;
    let lines: Vec<&str> = list.lines().collect();
    assert_eq!(lines.len(), 3, "{list}");
    assert!(
        lines[0].starts_with("id") && lines[0].contains("tps"),
        "{list}"
    );
    assert!(lines[1].contains("phase=before,who=me") && lines[1].contains("event_limit"));
    let rows = parse_csv(&s.ok_home(&["results", "list", "--format=csv"]).stdout);
    assert_eq!(rows.len(), 2);
    let tps: f64 = rows[0]["tps"].parse().unwrap();
    assert_eq!(tps, doc["totals"]["events_per_s"].as_f64().unwrap());
    assert_eq!(rows[0]["events"], doc["totals"]["events"].to_string());
    assert_eq!(rows[0]["tag.phase"], "before");
    assert_eq!(rows[0]["tag.who"], "me");
    assert_eq!(rows[1]["tag.phase"], "after");
    assert_eq!(rows[1]["tag.who"], "");
    assert_eq!(rows[1]["threads"], "2");
    let p99: f64 = rows[0]["lat_p99_ms"].parse().unwrap();
    assert_eq!(
        p99,
        doc["latency_ms"]["percentiles"][2]["ms"].as_f64().unwrap()
    );
    // A bare --store is the default store here too.
    let bare = s
        .ok_home(&["results", "list", "--store", "--format=csv"])
        .stdout;
    assert_eq!(parse_csv(&bare).len(), 2);
    let json: Value =
        serde_json::from_str(&s.ok_home(&["results", "list", "--format=json"]).stdout).unwrap();
    assert_eq!(json[0]["id"], 1);
    assert_eq!(json[0]["tags"]["phase"], "before");
    assert_eq!(json[1]["threads"], 2);

    // Selectors.
    let only = s
        .ok_home(&["results", "list", "tag:phase=after", "--format=csv"])
        .stdout;
    assert_eq!(parse_csv(&only).len(), 1);
    let only = s
        .ok_home(&["results", "list", "run:1,2", "tag:who=me", "--format=csv"])
        .stdout;
    assert_eq!(parse_csv(&only)[0]["id"], "1");

    // export JSON: the documents, each with a "store" object added.
    let out = s.ok_home(&["results", "export", "--format=json"]).stdout;
    let docs: Vec<Value> = serde_json::from_str(&out).unwrap();
    assert_eq!(docs.len(), 2);
    let mut first = docs[0].clone();
    let meta = first
        .as_object_mut()
        .unwrap()
        .remove("store")
        .expect("a store object");
    assert_eq!(first, doc);
    assert_eq!(meta["id"], 1);
    assert_eq!(meta["tags"]["who"], "me");
    // export CSV to a file.
    let r = s.ok_home(&[
        "results",
        "export",
        "threads:2",
        "--format=csv",
        "--output=x.csv",
    ]);
    assert!(r.stderr.contains("exported 1 run to x.csv"), "{}", r.stderr);
    let rows = parse_csv(&std::fs::read_to_string(s.path("x.csv")).unwrap());
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["id"], "2");
}

#[test]
fn delete_asks_for_yes_and_removes_runs() {
    let s = Scratch::new();
    for _ in 0..3 {
        quick(&s, &["--store=r.db", "--tag=k=v"]);
    }
    // Not on a terminal and no --yes: nothing happens.
    fails(
        &s,
        &["results", "delete", "1", "2", "--store=r.db"],
        2,
        "without --yes",
    );
    assert_eq!(
        parse_csv(
            &s.ok_home(&["results", "list", "--store=r.db", "--format=csv"])
                .stdout
        )
        .len(),
        3
    );
    let r = s.ok_home(&["results", "delete", "1", "2", "--store=r.db", "--yes"]);
    assert!(r.stdout.contains("deleted 2 runs (#1, #2)"), "{}", r.stdout);
    let left = parse_csv(
        &s.ok_home(&["results", "list", "--store=r.db", "--format=csv"])
            .stdout,
    );
    let ids: Vec<&str> = left.iter().map(|r| r["id"].as_str()).collect();
    assert_eq!(ids, vec!["3"], "{}", r.stdout);
    fails(
        &s,
        &["results", "show", "1", "--store=r.db"],
        1,
        "there is no run #1",
    );
    let r = s.ok_home(&["results", "delete", "tag:k=v", "--store=r.db", "--yes"]);
    assert!(r.stdout.contains("deleted 1 run (#3)"), "{}", r.stdout);
    fails(
        &s,
        &["results", "list", "--store=r.db"],
        1,
        "holds no runs yet",
    );
    // Ids are not reused.
    let r = quick(&s, &["--store=r.db"]);
    assert_eq!(stored_id(&r), 4);
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn spread(v: &[f64]) -> f64 {
    let max = v.iter().copied().fold(f64::MIN, f64::max);
    let min = v.iter().copied().fold(f64::MAX, f64::min);
    (max - min) / median(v.to_vec()) * 100.0
}

/// The metric of a run document, as compare reads it.
fn metric(doc: &Value, metric: &str) -> f64 {
    match metric {
        "tps" => doc["totals"]["events_per_s"].as_f64().unwrap(),
        "p99" => doc["latency_ms"]["percentiles"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["percentile"] == 99.0)
            .unwrap()["ms"]
            .as_f64()
            .unwrap(),
        other => panic!("{other}"),
    }
}

#[test]
fn compare_cells_are_ratios_of_medians_over_repeats() {
    let s = Scratch::new();
    // Baseline: 3 repeats (odd median), candidate: 2 (mean of the middle two).
    for (phase, repeats) in [("before", 3), ("after", 2)] {
        for threads in ["1", "2"] {
            for _ in 0..repeats {
                quick(
                    &s,
                    &[
                        &format!("--threads={threads}"),
                        "--store=c.db",
                        &format!("--tag=phase={phase}"),
                    ],
                );
            }
        }
    }
    // One interrupted-looking run does not count: a failed document.
    let mut st = Store::open(s.path("c.db").to_str().unwrap()).unwrap();
    st.save(
        r#"{"schema":"dbmeter.run","schema_version":1,"workload":"oltp_point_select","threads":1,"end":{"reason":"failed","error":"x"}}"#,
        &RunMeta {
            tags: vec![("phase".into(), "after".into())],
            ..RunMeta::default()
        },
    )
    .unwrap();
    drop(st);

    let docs: Vec<Value> = serde_json::from_str(
        &s.ok_home(&["results", "export", "--store=c.db", "--format=json"])
            .stdout,
    )
    .unwrap();
    let values = |phase: &str, threads: u64, m: &str| -> Vec<f64> {
        docs.iter()
            .filter(|d| {
                d["store"]["tags"]["phase"] == phase
                    && d["threads"] == threads
                    && d["end"]["reason"] == "event_limit"
            })
            .map(|d| metric(d, m))
            .collect()
    };
    for (m, noise) in [("tps", "5"), ("p99", "5"), ("tps", "0"), ("tps", "1000")] {
        let out = s
            .ok_home(&[
                "compare",
                "--store=c.db",
                "--baseline=tag:phase=before",
                "--candidate",
                "tag:phase=after",
                &format!("--metric={m}"),
                &format!("--noise={noise}"),
                "--format=csv",
            ])
            .stdout;
        let rows = parse_csv(&out);
        assert_eq!(rows.len(), 2, "{out}");
        let noise: f64 = noise.parse().unwrap();
        for (row, threads) in rows.iter().zip([1u64, 2]) {
            assert_eq!(row["workload"], "oltp_point_select");
            assert_eq!(row["threads"], threads.to_string());
            let (b, c) = (values("before", threads, m), values("after", threads, m));
            assert_eq!((b.len(), c.len()), (3, 2));
            let want = median(c.clone()) / median(b.clone()) * 100.0;
            let got: f64 = row["value"].parse().unwrap();
            assert!(
                (got - want).abs() <= want * 1e-12,
                "{m} {threads}: {got} vs {want}"
            );
            let noisy = spread(&b) > noise || spread(&c) > noise;
            assert_eq!(row["noisy"], noisy.to_string(), "{m} {threads} {noise}");
            assert_eq!(row["baseline_runs"].split(' ').count(), 3);
        }
    }
    // Text: the marks and the legend go together.
    for (noise, marked) in [("0", true), ("1000", false)] {
        let t = s
            .ok_home(&[
                "compare",
                "--store=c.db",
                "--baseline=tag:phase=before",
                "--candidate=tag:phase=after",
                &format!("--noise={noise}"),
            ])
            .stdout;
        assert!(t.contains("candidate / baseline x 100"), "{t}");
        assert!(t.contains("oltp_point_select"), "{t}");
        assert_eq!(t.contains("* the spread over repeats"), marked, "{t}");
        let table_line = t
            .lines()
            .find(|l| l.starts_with("oltp_point_select"))
            .unwrap();
        assert_eq!(table_line.contains('*'), marked, "{t}");
    }
    // --diff: the signed difference.
    let d = parse_csv(
        &s.ok_home(&[
            "compare",
            "--store=c.db",
            "--baseline=tag:phase=before",
            "--candidate=tag:phase=after",
            "--diff",
            "--format=csv",
        ])
        .stdout,
    );
    let (b, c) = (values("before", 1, "tps"), values("after", 1, "tps"));
    let want = (median(c) - median(b.clone())) / median(b) * 100.0;
    let got: f64 = d[0]["value"].parse().unwrap();
    assert!((got - want).abs() < 1e-9, "{got} vs {want}");
    // Latency: lower is better, said in the header.
    let t = s
        .ok_home(&[
            "compare",
            "--store=c.db",
            "--baseline=tag:phase=before",
            "--candidate=tag:phase=after",
            "--metric=p99",
            "--format=markdown",
        ])
        .stdout;
    assert!(t.contains("lower is better"), "{t}");
    assert!(t.contains("| workload | 1 | 2 |"), "{t}");
    let html = s.ok_home(&[
        "compare",
        "--store=c.db",
        "--baseline=tag:phase=before",
        "--candidate=tag:phase=after",
        "--format=html",
        "--output=c.html",
    ]);
    assert!(html.stdout.is_empty());
    let page = std::fs::read_to_string(s.path("c.html")).unwrap();
    assert!(
        page.starts_with("<!DOCTYPE html>") && page.contains("<table class=\"dbmeter-compare\">")
    );
    // Repeats on both sides: no note about single runs.
    let t = s
        .ok_home(&[
            "compare",
            "--store=c.db",
            "--baseline=tag:phase=before",
            "--candidate=tag:phase=after",
        ])
        .stdout;
    assert!(!t.contains("one run on a side"), "{t}");
}

#[test]
fn compare_without_candidate_takes_the_rest_of_the_campaign() {
    let s = Scratch::new();
    // Real run documents, stored as a campaign would: variants A, B, C.
    let mut docs = Vec::new();
    for _ in 0..3 {
        docs.push(quick(&s, &["--format=json"]).stdout);
    }
    let store = s.path("camp.db");
    let mut st = Store::open(store.to_str().unwrap()).unwrap();
    for (variant, doc) in ["A", "B", "C"].iter().zip(&docs) {
        st.save(
            doc,
            &RunMeta {
                campaign: Some("c1".into()),
                variant: Some(variant.to_string()),
                cell: Some(format!("oltp_point_select/{variant}/1")),
                repeat: Some(1),
                tags: Vec::new(),
            },
        )
        .unwrap();
    }
    // Another campaign's run is not a candidate.
    st.save(
        &docs[0],
        &RunMeta {
            campaign: Some("c2".into()),
            variant: Some("Z".into()),
            ..RunMeta::default()
        },
    )
    .unwrap();
    assert!(st.has_cell("c1", "oltp_point_select/B/1", 1).unwrap());
    drop(st);
    let store_opt = format!("--store={}", store.display());
    let rows = parse_csv(
        &s.ok_home(&[
            "compare",
            &store_opt,
            "--baseline=variant:A",
            "--format=csv",
        ])
        .stdout,
    );
    let tps = |i: usize| -> f64 {
        serde_json::from_str::<Value>(&docs[i]).unwrap()["totals"]["events_per_s"]
            .as_f64()
            .unwrap()
    };
    assert_eq!(rows.len(), 2, "{rows:?}");
    for (row, (variant, i)) in rows.iter().zip([("B", 1), ("C", 2)]) {
        assert_eq!(row["variant"], variant);
        let got: f64 = row["value"].parse().unwrap();
        let want = tps(i) / tps(0) * 100.0;
        assert!((got - want).abs() <= want * 1e-12, "{got} {want}");
    }
    let t = s
        .ok_home(&["compare", &store_opt, "--baseline=variant:A"])
        .stdout;
    assert!(t.contains("the other runs of campaign c1"), "{t}");
    // One run per side: the table says noise cannot be judged.
    assert!(
        t.contains("Every cell has one run on a side: noise cannot be judged"),
        "{t}"
    );
    assert!(
        t.lines()
            .any(|l| l.starts_with("workload") && l.contains("variant")),
        "{t}"
    );
    // A baseline of several variants is refused.
    fails(
        &s,
        &["compare", &store_opt, "--baseline=campaign:c1"],
        1,
        "several variants",
    );
}

#[test]
fn interrupted_runs_are_stored_too() {
    let s = Scratch::new();
    s.ok_home(&["prepare", "oltp_point_select"]);
    let mut c = s.cmd(&["run", "oltp_point_select", "--time=60", "--store=i.db"]);
    c.env("DBMETER_HOME", s.path("home"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = c.spawn().unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: sending SIGINT to our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("stored as run #1 in i.db"), "{err}");
    let rows = parse_csv(
        &s.ok_home(&["results", "list", "--store=i.db", "--format=csv"])
            .stdout,
    );
    assert_eq!(rows[0]["end_reason"], "interrupted");
    assert!(rows[0]["events"].parse::<u64>().unwrap() > 0);
}

#[test]
fn two_processes_store_into_one_file_at_once() {
    let s = Scratch::new();
    s.ok_home(&["prepare", "oltp_point_select"]);
    let spawn = || {
        let mut c = s.cmd(&["run", "oltp_point_select", "--time=1", "--store=shared.db"]);
        c.env("DBMETER_HOME", s.path("home"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c.spawn().unwrap()
    };
    let (a, b) = (spawn(), spawn());
    for child in [a, b] {
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let rows = parse_csv(
        &s.ok_home(&["results", "list", "--store=shared.db", "--format=csv"])
            .stdout,
    );
    assert_eq!(rows.len(), 2);
}

#[test]
fn postgres_store_end_to_end() {
    let Some(server) = servers::start(Flavor::Postgres) else {
        return;
    };
    let url = server.url();
    let s = Scratch::new();
    let store_opt = format!("--store={url}");
    let r = quick(&s, &["--format=json", &store_opt, "--tag=db=pg"]);
    assert!(
        r.stderr.contains(&format!("stored as run #1 in {url}")),
        "{}",
        r.stderr
    );
    let shown = s.ok_home(&["results", "show", "1", &store_opt, "--format=json"]);
    assert_eq!(shown.stdout, r.stdout);
    let json: Value = serde_json::from_str(
        &s.ok_home(&["results", "list", &store_opt, "--format=json", "tag:db=pg"])
            .stdout,
    )
    .unwrap();
    assert_eq!(json.as_array().unwrap().len(), 1);
    assert_eq!(json[0]["workload"], "oltp_point_select");
    // The API on the same store: save with campaign meta, has_cell.
    let mut st = Store::open(&url).unwrap();
    let meta = RunMeta {
        campaign: Some("c".into()),
        cell: Some("oltp_point_select/pg/1".into()),
        repeat: Some(1),
        ..RunMeta::default()
    };
    assert!(!st.has_cell("c", "oltp_point_select/pg/1", 1).unwrap());
    assert_eq!(st.save(&r.stdout, &meta).unwrap(), 2);
    assert!(st.has_cell("c", "oltp_point_select/pg/1", 1).unwrap());
    assert_eq!(servers::ask_n(&server, "SELECT COUNT(*) FROM documents"), 2);
    // A PostgreSQL store that cannot be reached: one line, password masked.
    let bad = format!(
        "--store=postgres://postgres:secret@127.0.0.1:{}/nope",
        server.port()
    );
    let r = s.run_home(&["results", "list", &bad]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("cannot open the results store"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("secret"), "{}", r.stderr);
}

#[test]
fn bad_inputs_get_one_line() {
    let s = Scratch::new();
    quick(&s, &["--store=r.db"]);
    fails(
        &s,
        &["results", "list", "--store=r.db", "colour:red"],
        1,
        "unknown kind 'colour'",
    );
    fails(
        &s,
        &["results", "list", "--store=nope.db"],
        1,
        "there is no results store 'nope.db'",
    );
    fails(
        &s,
        &["results", "list", "--store=r.db", "tag:a=b"],
        1,
        "no stored run matches tag:a=b",
    );
    std::fs::create_dir(s.path("adir")).unwrap();
    fails(
        &s,
        &["results", "list", "--store", "adir"],
        1,
        "cannot open the results store 'adir'",
    );
    fails(
        &s,
        &["results", "show", "--store=r.db", "x"],
        2,
        "takes a run id",
    );
    fails(
        &s,
        &["results", "show", "--store=r.db", "7"],
        1,
        "there is no run #7",
    );
    fails(&s, &["results", "frobnicate"], 2, "unknown results command");
    fails(
        &s,
        &["results", "list", "--bogus"],
        2,
        "unknown option --bogus",
    );
    fails(&s, &["results", "list", "--format=xml"], 2, "--format=xml");
    fails(
        &s,
        &["results", "delete", "--store=r.db", "--yes"],
        2,
        "which runs?",
    );
    fails(
        &s,
        &["compare", "--store=r.db"],
        2,
        "which runs are the baseline?",
    );
    fails(
        &s,
        &[
            "compare",
            "--store=r.db",
            "--baseline=run:1",
            "--metric=tpm",
        ],
        2,
        "--metric=tpm",
    );
    fails(
        &s,
        &["compare", "--store=r.db", "--baseline=run:1", "--noise=-1"],
        2,
        "--noise=-1",
    );
    fails(
        &s,
        &[
            "compare",
            "--store=r.db",
            "--baseline=run:1",
            "--format=pdf",
        ],
        2,
        "--format=pdf",
    );
    fails(
        &s,
        &["compare", "--store=r.db", "--baseline=run:1"],
        1,
        "no default candidate",
    );
    fails(
        &s,
        &[
            "compare",
            "--store=r.db",
            "--baseline=run:1",
            "--candidate=run:9",
        ],
        1,
        "no stored run matches the candidate",
    );
    fails(
        &s,
        &[
            "compare",
            "--store=r.db",
            "--baseline=run:1",
            "--candidate=run:1",
        ],
        1,
        "outside the baseline",
    );
    fails(
        &s,
        &[QUICK[0], QUICK[1], "--tag=oops"],
        2,
        "--tag=oops: expected KEY=VALUE",
    );
    // Some other SQLite file is not taken for a store, and the run does not start.
    let r = s.run_home(&[
        "run",
        "oltp_point_select",
        "--time=1",
        "--store=dbmeter.sqlite",
    ]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("not a dbmeter results store"),
        "{}",
        r.stderr
    );
    assert!(!r.stdout.contains("Threads started"), "{}", r.stdout);
    // Help.
    let h = s.ok_home(&["help", "results"]).stdout;
    assert!(h.contains("Selectors") && h.contains("delete"), "{h}");
    let h = s.ok_home(&["help", "compare"]).stdout;
    assert!(h.contains("--baseline") && h.contains("--noise"), "{h}");
    assert!(s.ok_home(&["help"]).stdout.contains("compare"));
}

#[test]
fn a_run_that_loses_its_server_is_stored_with_what_it_measured() {
    let Some(mut server) = servers::start(Flavor::Postgres) else {
        return;
    };
    let s = Scratch::new();
    let db = format!("--db={}", server.url());
    s.ok_home(&["prepare", "oltp_point_select", &db, "--table-size=1000"]);
    let mut c = s.cmd(&[
        "run",
        "oltp_point_select",
        &db,
        "--table-size=1000",
        "--time=3",
        "--store=lost.db",
        "--tag=server=killed",
    ]);
    c.env("DBMETER_HOME", s.path("home"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = c.spawn().unwrap();
    std::thread::sleep(Duration::from_secs(1));
    server.kill();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("stored as run #1 in lost.db"), "{err}");
    let rows = parse_csv(
        &s.ok_home(&["results", "list", "--store=lost.db", "--format=csv"])
            .stdout,
    );
    assert_eq!(rows.len(), 1);
    assert!(rows[0]["events"].parse::<u64>().unwrap() > 0, "{rows:?}");
    assert!(rows[0]["errors"].parse::<u64>().unwrap() > 0, "{rows:?}");
    assert_eq!(rows[0]["tag.server"], "killed");
}
