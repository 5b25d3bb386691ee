//! `dbmeter results history`: a nightly job's stored runs of one
//! configuration, where the database got slower from the seventh night on,
//! and the change point that marks it, in text, JSON and HTML.
//!
//! The job is the same every night (same command line, same tag, same
//! SQLite file); before the seventh night a migration rebuilds its table
//! without the primary key (`CREATE TABLE ... AS SELECT` keeps rows, not
//! keys), so every point select scans the 50,000 rows instead of looking
//! one up. The job runs at a fixed rate (`--rate=2000`), which the indexed
//! table keeps up with on any machine (even a debug build under load does
//! several thousand a second) and the scans cannot: the nights before
//! differ only by the arrivals' Poisson noise (about 2%), the nights after
//! fall far below the rate, however loaded the machine is.

use crate::common::*;
use serde_json::Value;

const NIGHTLY: &[&str] = &[
    "run",
    "oltp_point_select",
    "--db=sqlite:bench.db",
    "--table-size=50000",
    "--rate=2000",
    "--time=1",
    "--store=results.db",
    "--tag=job=nightly",
];

/// One line on stderr, the exit code, no panic.
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

fn history(s: &Scratch, extra: &[&str]) -> Run {
    let mut args = vec![
        "results",
        "history",
        "tag:job=nightly",
        "threads:1",
        "--store=results.db",
    ];
    args.extend_from_slice(extra);
    s.ok_home(&args)
}

#[test]
fn a_nightly_job_that_got_slower_at_run_7_has_one_change_point_there() {
    let s = Scratch::new();
    s.ok_home(&[
        "prepare",
        "oltp_point_select",
        "--db=sqlite:bench.db",
        "--table-size=50000",
    ]);
    for night in 1..=12 {
        if night == 7 {
            s.db("bench.db")
                .execute_batch(
                    "CREATE TABLE rebuilt AS SELECT * FROM sbtest1; DROP TABLE sbtest1; \
                     ALTER TABLE rebuilt RENAME TO sbtest1; CREATE INDEX k_1 ON sbtest1 (k);",
                )
                .expect("rebuild the table");
        }
        let r = s.ok_home(NIGHTLY);
        assert!(
            r.stderr.contains(&format!("stored as run #{night} ")),
            "{}",
            r.stderr
        );
    }
    // Another configuration with the same tag: two threads.
    s.ok_home(&[
        "run",
        "oltp_point_select",
        "--db=sqlite:bench.db",
        "--table-size=50000",
        "--threads=2",
        "--time=0",
        "--events=200",
        "--store=results.db",
        "--tag=job=nightly",
    ]);

    // Text: run 7 and no other carries the mark.
    let r = history(&s, &[]);
    let t = &r.stdout;
    assert!(
        t.starts_with("tps (transactions per second) over time: 12 runs of oltp_point_select, 1 thread, on sqlite:bench.db, tags job=nightly\n"),
        "{t}"
    );
    let marked: Vec<&str> = t.lines().filter(|l| l.contains("change point (")).collect();
    assert_eq!(marked.len(), 1, "{t}");
    assert!(marked[0].trim_start().starts_with("7  "), "{t}");
    assert!(marked[0].contains("% change point (slower, p="), "{t}");
    assert!(t.contains("\n1 change point: run #7 -"), "{t}");
    assert!(t.contains("segments: #1-#6 (6 runs) mean "), "{t}");
    // A line per run: id, date and time, value.
    let rows = t
        .lines()
        .filter(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            w.len() >= 4
                && w[0].parse::<u32>().is_ok()
                && w[1].len() == 10
                && w[1].matches('-').count() == 2
        })
        .count();
    assert_eq!(rows, 12, "{t}");

    // JSON: the 12 runs in order, one change point at run 7 (index 6).
    let j: Value = serde_json::from_str(&history(&s, &["--format=json"]).stdout).unwrap();
    let runs = j["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 12, "{j}");
    let ids: Vec<i64> = runs.iter().map(|r| r["id"].as_i64().unwrap()).collect();
    assert_eq!(ids, (1..=12).collect::<Vec<i64>>());
    let cps = j["change_points"].as_array().unwrap();
    assert_eq!(cps.len(), 1, "{j}");
    assert_eq!(cps[0]["run"], 7);
    assert_eq!(cps[0]["index"], 6);
    let pct = cps[0]["change_pct"].as_f64().unwrap();
    assert!(pct < -50.0, "at least twice as slow: {pct}");
    assert!(cps[0]["p_value"].as_f64().unwrap() <= 0.05);
    assert_eq!(runs[6]["change_point"]["run"], 7);
    assert!(
        runs.iter()
            .enumerate()
            .all(|(i, r)| (i == 6) != r["change_point"].is_null())
    );
    assert_eq!(j["method"]["significance"], 0.05);
    assert_eq!(j["method"]["permutations"], 199);
    assert_eq!(j["method"]["min_segment"], 3);
    assert_eq!(j["configuration"]["threads"], 1);

    // The 99th percentile went up at the same run.
    let p99: Value =
        serde_json::from_str(&history(&s, &["--metric=p99", "--format=json"]).stdout).unwrap();
    let cps = p99["change_points"].as_array().unwrap();
    assert_eq!(cps.len(), 1, "{p99}");
    assert_eq!(cps[0]["run"], 7);
    assert!(cps[0]["change_pct"].as_f64().unwrap() > 100.0, "{p99}");
    assert_eq!(p99["higher_is_better"], false);

    // HTML: the chart, with the change point's marker, and the table.
    let r = history(&s, &["--html=nightly.html"]);
    assert!(
        r.stderr
            .contains("wrote the history of 12 runs to nightly.html"),
        "{}",
        r.stderr
    );
    let html = std::fs::read_to_string(s.path("nightly.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
    assert!(html.contains("<svg"), "no chart");
    assert!(html.contains("#7 -"), "no marker label on the chart");
    assert!(html.contains("segment mean"));
    assert!(html.contains("<tr class=\"bad\"><td>#7</td>"), "{html}");
    assert_eq!(html.matches("change point (").count(), 1);

    // The report of these runs has their history; with the other
    // configuration's run in it, it has none.
    s.ok_home(&[
        "report",
        "tag:job=nightly",
        "threads:1",
        "--store=results.db",
        "--output=report.html",
    ]);
    let report = std::fs::read_to_string(s.path("report.html")).unwrap();
    assert!(
        report.contains(">History of tps</h2>"),
        "no history section"
    );
    assert!(
        report.contains(">History of p99</h2>"),
        "no history section"
    );
    assert!(report.contains("1 change point: run #7 -"));
    assert!(report.contains("1 change point: run #7 +"));
    s.ok_home(&[
        "report",
        "tag:job=nightly",
        "--store=results.db",
        "--output=both.html",
    ]);
    let both = std::fs::read_to_string(s.path("both.html")).unwrap();
    assert!(
        !both.contains("History of"),
        "a history of two configurations"
    );

    // The last 5 runs: one side only, and too few for a change point.
    let last: Value =
        serde_json::from_str(&history(&s, &["--last=5", "--format=json"]).stdout).unwrap();
    let ids: Vec<i64> = last["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, vec![8, 9, 10, 11, 12]);
    assert!(last["change_points"].as_array().unwrap().is_empty());
    let r = history(&s, &["--last=5"]);
    assert!(
        r.stdout
            .contains("too few runs for a change point to be significant: 5 of the 8 needed"),
        "{}",
        r.stdout
    );
    // --since: a day back holds them all; the future none.
    let since: Value =
        serde_json::from_str(&history(&s, &["--since=1d", "--format=json"]).stdout).unwrap();
    assert_eq!(since["runs"].as_array().unwrap().len(), 12);

    // Bad input: one line each.
    let store = "--store=results.db";
    fails(
        &s,
        &["results", "history", "tag:job=nightly", store],
        1,
        "the selected runs are of 2 configurations",
    );
    fails(
        &s,
        &["results", "history", "tag:job=weekly", store],
        1,
        "no stored run matches tag:job=weekly",
    );
    fails(
        &s,
        &[
            "results",
            "history",
            "threads:1",
            store,
            "--since=2099-01-01",
        ],
        1,
        "no completed run with a tps value among threads:1 since 2099-01-01T00:00:00Z",
    );
    fails(
        &s,
        &["results", "history", "threads:1", store, "--metric=tpx"],
        2,
        "--metric=tpx: expected one of tps, qps, p95, p99, avg",
    );
    fails(
        &s,
        &["results", "history", "threads:1", store, "--last=0"],
        2,
        "--last=0: expected a whole number",
    );
    fails(
        &s,
        &[
            "results",
            "history",
            "threads:1",
            store,
            "--since=last week",
        ],
        2,
        "--since=last week: expected a date",
    );
    fails(
        &s,
        &["results", "history", "threads:1", store, "--permutations=5"],
        2,
        "--permutations=5: 5 permutations can never give a p-value of 0.05 or less",
    );
}

/// `--metric=FIGURE`: a benchmark's own named figure (TPC-H's Q6 query
/// time, on a scale factor of 0.01) over the runs, each run's value the one
/// its document stored; a name no selected run has is a usage error that
/// lists the ones they have.
#[test]
fn a_figure_has_its_history_too() {
    let s = Scratch::new();
    let db = "--db=sqlite:h.sqlite";
    s.ok(&["prepare", "tpch", db, "--scale-factor=0.01"]);
    let mut ids = Vec::new();
    for _ in 0..3 {
        let r = s.ok_home(&[
            "run",
            "tpch",
            db,
            "--queries=6",
            "--explain=off",
            "--store=results.db",
            "--tag=job=nightly",
        ]);
        let id = r
            .stderr
            .lines()
            .find_map(|l| l.strip_prefix("stored as run #"))
            .and_then(|l| l.split_whitespace().next())
            .unwrap_or_else(|| panic!("not stored:\n{}", r.stderr))
            .to_string();
        ids.push(id);
    }
    let figure = |id: &str| -> f64 {
        let doc = s
            .ok_home(&["results", "show", id, "--store=results.db", "--format=json"])
            .json();
        doc["figures"]
            .as_array()
            .and_then(|f| f.iter().find(|x| x["name"] == "Q6"))
            .and_then(|x| x["value"].as_f64())
            .unwrap_or_else(|| panic!("run {id} has no Q6: {}", doc["figures"]))
    };

    let r = history(&s, &["--metric=Q6"]);
    assert!(
        r.stdout
            .starts_with("Q6 (the figure Q6) over time: 3 runs of tpch, 1 thread"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("  Q6_s\n"), "{}", r.stdout);
    assert!(
        r.stdout.contains("too few runs for a change point"),
        "{}",
        r.stdout
    );
    for id in &ids {
        let line = r
            .stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(id.as_str()))
            .unwrap_or_else(|| panic!("no line for run {id}:\n{}", r.stdout));
        assert!(line.ends_with(&format!("{:.3}", figure(id))), "{line}");
    }

    let j: Value =
        serde_json::from_str(&history(&s, &["--metric=Q6", "--format=json"]).stdout).unwrap();
    assert_eq!(j["metric"], "Q6");
    assert_eq!(j["unit"], "s");
    assert_eq!(j["higher_is_better"], false);
    let runs = j["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3, "{j}");
    for (run, id) in runs.iter().zip(&ids) {
        assert_eq!(run["id"].to_string(), *id);
        assert_eq!(run["value"].as_f64(), Some(figure(id)), "{run}");
    }

    history(&s, &["--metric=Q6", "--html=q6.html"]);
    let page = std::fs::read_to_string(s.path("q6.html")).unwrap();
    assert!(page.contains("Q6") && page.contains("<svg"), "{page}");

    fails(
        &s,
        &[
            "results",
            "history",
            "tag:job=nightly",
            "--store=results.db",
            "--metric=Q9",
        ],
        2,
        "--metric=Q9: expected one of tps, qps, p95, p99, avg, or a figure of the selected runs: Q6, RF1, RF2",
    );
}
