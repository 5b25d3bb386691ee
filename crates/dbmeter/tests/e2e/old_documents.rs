//! Results stored by an older dbmeter stay readable: a results store of
//! schema-1 run documents (tests/fixtures/store-v1.db, made by
//! tests/fixtures/make-v1.sh with dbmeter 0.1.0 before the run-status
//! refactor) is listed, shown, compared and reported by the dbmeter under
//! test; schema-1 documents saved into a new store are shown too.

use crate::common::*;
use dbmeter_store::{RunMeta, Store};
use serde_json::Value;
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn fixture_json(name: &str) -> Value {
    let text = std::fs::read_to_string(fixture(name)).expect("read fixture");
    serde_json::from_str(&text).expect("fixture is JSON")
}

/// A scratch directory holding a copy of the old store (the dbmeter under
/// test may migrate it), and the `--store=` option naming it.
fn old_store() -> (Scratch, String) {
    let s = Scratch::new();
    let copy = s.path("store-v1.db");
    std::fs::copy(fixture("store-v1.db"), &copy).expect("copy the fixture store");
    let opt = format!("--store={}", copy.display());
    (s, opt)
}

/// What the fixture holds: run id, workload, threads, phase tag.
const RUNS: [(i64, &str, u64, Option<&str>); 5] = [
    (1, "oltp_point_select", 1, Some("before")),
    (2, "oltp_point_select", 1, Some("before")),
    (3, "oltp_point_select", 1, Some("after")),
    (4, "oltp_point_select", 1, Some("after")),
    (5, "tpcc", 2, None),
];

fn listed(s: &Scratch, store: &str) -> Vec<Value> {
    let out = s
        .ok_home(&["results", "list", store, "--format=json"])
        .stdout;
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    v.as_array().expect("an array of runs").clone()
}

#[test]
fn the_old_store_lists_its_five_runs() {
    let (s, store) = old_store();
    let runs = listed(&s, &store);
    assert_eq!(runs.len(), 5, "{runs:#?}");
    for (run, (id, workload, threads, phase)) in runs.iter().zip(RUNS) {
        assert_eq!(run["id"], id, "{run:#}");
        assert_eq!(run["workload"], workload, "{run:#}");
        assert_eq!(run["threads"], threads, "{run:#}");
        assert_eq!(run["end_reason"], "time_limit", "{run:#}");
        assert!(run["events"].as_u64().unwrap_or(0) > 0, "{run:#}");
        assert!(run["events_per_s"].as_f64().unwrap_or(0.0) > 0.0, "{run:#}");
        match phase {
            Some(p) => assert_eq!(run["tags"]["phase"], p, "{run:#}"),
            None => assert!(run["tags"].get("phase").is_none(), "{run:#}"),
        }
    }
    // The numbers are those of the documents the runs printed.
    for (run, name) in [
        (&runs[0], "run-v1-oltp.json"),
        (&runs[4], "run-v1-tpcc.json"),
    ] {
        let doc = fixture_json(name);
        assert_eq!(run["events"], doc["totals"]["events"], "{name}");
        assert_eq!(run["events_per_s"], doc["totals"]["events_per_s"], "{name}");
    }

    // The text list: a header and one line per run.
    let text = s.ok_home(&["results", "list", &store]).stdout;
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 6, "{text}");
    assert!(lines[0].starts_with("id"), "{text}");
    assert!(
        lines[1].contains("oltp_point_select") && lines[1].contains("phase=before"),
        "{text}"
    );
    assert!(lines[5].contains("tpcc"), "{text}");

    // Selectors work on the old rows.
    let after = s
        .ok_home(&[
            "results",
            "list",
            &store,
            "tag:phase=after",
            "--format=json",
        ])
        .stdout;
    let after: Value = serde_json::from_str(&after).unwrap();
    let ids: Vec<i64> = after
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, vec![3, 4]);
}

#[test]
fn old_runs_show_their_reports() {
    let (s, store) = old_store();
    let oltp = s.ok_home(&["results", "show", "1", &store]).stdout;
    for want in [
        "#1",
        "oltp_point_select",
        "phase=before",
        "time_limit",
        "SQL statistics:",
        "transactions:",
        "95th percentile:",
        "99th percentile:",
    ] {
        assert!(oltp.contains(want), "missing '{want}' in\n{oltp}");
    }
    let doc = fixture_json("run-v1-oltp.json");
    let events = doc["totals"]["events"].as_u64().unwrap().to_string();
    assert!(
        oltp.lines()
            .any(|l| l.contains("total number of events:") && l.contains(&events)),
        "{events} events not shown:\n{oltp}"
    );

    let tpcc = s.ok_home(&["results", "show", "5", &store]).stdout;
    for want in [
        "#5",
        "tpcc",
        "SQL statistics:",
        "TPC-C-like results",
        "NOPM",
        "new_order",
        "stock_level",
    ] {
        assert!(tpcc.contains(want), "missing '{want}' in\n{tpcc}");
    }
    let doc = fixture_json("run-v1-tpcc.json");
    let new_orders = doc["tpcc"]["new_orders"].as_u64().unwrap();
    assert!(new_orders > 0);
    let nopm_line = tpcc
        .lines()
        .find(|l| l.contains("NOPM"))
        .expect("a NOPM line");
    let nopm = doc["tpcc"]["nopm"].as_f64().unwrap();
    assert!(
        nopm_line.contains(&new_orders.to_string()) || nopm_line.contains(&format!("{nopm:.0}")),
        "neither {new_orders} new orders nor NOPM {nopm:.0} in: {nopm_line}"
    );
}

/// `show --format=json` prints a run document: the one the old run
/// printed, exactly, while it says schema 1; or, should dbmeter bring old
/// documents up to a newer schema, one of the same run.
#[test]
fn old_runs_show_as_json_documents() {
    let (s, store) = old_store();
    for (id, name) in [("1", "run-v1-oltp.json"), ("5", "run-v1-tpcc.json")] {
        let shown = s.ok_home(&["results", "show", id, &store, "--format=json"]);
        let doc = shown.json();
        let old = fixture_json(name);
        assert_eq!(doc["schema"], "dbmeter.run", "run {id}");
        let version = doc["schema_version"].as_u64().unwrap_or(0);
        assert!(
            version >= 1,
            "run {id}: schema_version {}",
            doc["schema_version"]
        );
        if version == 1 {
            assert_eq!(doc, old, "run {id} is not shown as it was written");
        }
        for field in ["workload", "threads"] {
            assert_eq!(doc[field], old[field], "run {id}: {field}");
        }
    }
}

fn median2(a: f64, b: f64) -> f64 {
    (a + b) / 2.0
}

#[test]
fn old_runs_compare_and_report() {
    let (s, store) = old_store();
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
    let row = text
        .lines()
        .find(|l| l.starts_with("oltp_point_select"))
        .unwrap_or_else(|| panic!("no oltp_point_select row:\n{text}"));
    assert!(
        row.split_whitespace()
            .nth(1)
            .and_then(|v| v.trim_end_matches('*').parse::<f64>().ok())
            .is_some(),
        "{text}"
    );

    // The cell is the ratio of the medians of the listed throughputs.
    let runs = listed(&s, &store);
    let tps = |i: usize| runs[i]["events_per_s"].as_f64().unwrap();
    let want = median2(tps(2), tps(3)) / median2(tps(0), tps(1)) * 100.0;
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
    assert_eq!(rows.len(), 1, "{csv}");
    let col = |name: &str| {
        rows[0]
            .get(name)
            .map(String::as_str)
            .unwrap_or_else(|| panic!("no {name} column: {csv}"))
    };
    assert_eq!(col("workload"), "oltp_point_select");
    assert_eq!(col("threads"), "1");
    assert_eq!(col("baseline_runs"), "1 2");
    assert_eq!(col("candidate_runs"), "3 4");
    let got: f64 = col("value").parse().unwrap();
    assert!((got - want).abs() <= want * 1e-9, "{got} vs {want}");

    // An HTML report of the whole old store, and of the comparison alone.
    s.ok_home(&[
        "report",
        &store,
        "--baseline=tag:phase=before",
        "--output=all.html",
    ]);
    let page = std::fs::read_to_string(s.path("all.html")).expect("the report is written");
    assert!(
        page.starts_with("<!DOCTYPE html>"),
        "{}",
        page.chars().take(200).collect::<String>()
    );
    assert!(page.trim_end().ends_with("</html>"));
    assert!(page.contains("oltp_point_select") && page.contains("tpcc"));
    assert!(page.contains("<table class=\"dbmeter-compare\">"));
    assert!(page.contains("<svg"));
    let r = s.ok_home(&[
        "report",
        "workload:oltp_point_select",
        "--baseline=tag:phase=before",
        "--candidate=tag:phase=after",
        &store,
        "--output=cmp.html",
        "--title=old documents",
    ]);
    assert!(
        r.stderr.contains("cmp.html") || r.stdout.contains("cmp.html"),
        "{}\n{}",
        r.stdout,
        r.stderr
    );
    let page = std::fs::read_to_string(s.path("cmp.html")).expect("the report is written");
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.contains("old documents"));
    assert!(page.contains("<table class=\"dbmeter-compare\">"));
    assert!(
        !page.contains("<h2 id=\"w-tpcc\">"),
        "tpcc was not selected"
    );
}

/// The raw schema-1 documents, saved into a store the dbmeter under test
/// creates, are listed and shown like new ones.
#[test]
fn old_documents_saved_into_a_new_store() {
    let s = Scratch::new();
    // A new store, created by the dbmeter under test.
    s.ok_home(&[
        "run",
        "oltp_point_select",
        "--table-size=100",
        "--time=0",
        "--events=100",
        "--store=new.db",
    ]);
    let path = s.path("new.db");
    let mut st = Store::open(path.to_str().unwrap()).expect("open the new store");
    let mut ids = Vec::new();
    for name in ["run-v1-oltp.json", "run-v1-tpcc.json"] {
        let text = std::fs::read_to_string(fixture(name)).unwrap();
        let id = st
            .save(
                &text,
                &RunMeta {
                    tags: vec![("from".into(), "v1".into())],
                    ..RunMeta::default()
                },
            )
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        ids.push(id);
    }
    drop(st);
    let store = format!("--store={}", path.display());
    let v: Value = serde_json::from_str(
        &s.ok_home(&["results", "list", &store, "tag:from=v1", "--format=json"])
            .stdout,
    )
    .unwrap();
    let v = v.as_array().unwrap();
    assert_eq!(v.len(), 2, "{v:#?}");
    assert_eq!(v[0]["workload"], "oltp_point_select");
    assert_eq!(v[1]["workload"], "tpcc");
    for run in v {
        assert_eq!(run["end_reason"], "time_limit", "{run:#}");
    }
    let oltp = s
        .ok_home(&["results", "show", &ids[0].to_string(), &store])
        .stdout;
    assert!(oltp.contains("SQL statistics:"), "{oltp}");
    let tpcc = s
        .ok_home(&["results", "show", &ids[1].to_string(), &store])
        .stdout;
    assert!(
        tpcc.contains("TPC-C-like results") && tpcc.contains("NOPM"),
        "{tpcc}"
    );
    let doc = s
        .ok_home(&[
            "results",
            "show",
            &ids[1].to_string(),
            &store,
            "--format=json",
        ])
        .json();
    assert_eq!(
        doc["tpcc"]["nopm"],
        fixture_json("run-v1-tpcc.json")["tpcc"]["nopm"]
    );
}
