//! `dbmeter compare --why`: select_random_points (`WHERE k IN (...)`) on a
//! table with its index on `k` (the baseline) and without it (the
//! candidate, which scans the table for every transaction), on throwaway
//! MariaDB and PostgreSQL servers, two runs a side. The server counter
//! that explains the difference ranks first (MariaDB: rows read, which
//! MariaDB 10.6 and later count as Rows_read, MySQL as Innodb_rows_read;
//! PostgreSQL: blocks), up by far on the candidate; the server's CPU per
//! transaction goes the same way; the wait events sampled during the runs
//! are in the documents and the report. The assertions are on the order of
//! rows and the direction of their numbers, by margins of a hundred times
//! and more, never on times.

use crate::common::*;
use dbmeter_server::Flavor;
use dbmeter_testkit::servers::{ask, start_with};

/// Rows of the table: a scan reads about a thousand times the rows that
/// ten index lookups read.
const ROWS: &str = "10000";

/// Prepares the table in database `db` of `url` (with or without its
/// secondary index on k) and runs select_random_points twice against it,
/// stored with tag index=yes|no.
fn prepare_and_run(s: &Scratch, url: &str, index: bool, extra: &[&str]) -> Vec<Run> {
    let db = format!("--db={url}");
    let secondary = format!("--create_secondary={}", if index { "on" } else { "off" });
    let size = format!("--table-size={ROWS}");
    let tag = format!("--tag=index={}", if index { "yes" } else { "no" });
    s.ok_home(&[
        "prepare",
        "select_random_points",
        &db,
        "--tables=1",
        &format!("--table-size={ROWS}"),
        &secondary,
        // k uniform: ten keys are ten rows or so (sysbench's default
        // distribution piles them up in the middle of the table).
        "--rand-type=uniform",
    ]);
    let mut runs = Vec::new();
    for _ in 0..2 {
        let mut args = vec![
            "run",
            "select_random_points",
            &db,
            "--tables=1",
            &size,
            "--rand-type=uniform",
            "--threads=2",
            "--time=3",
            "--store=r.db",
            &tag,
        ];
        args.extend(extra);
        runs.push(s.ok_home(&args));
    }
    runs
}

/// The rows of list `title` of the text report: name, baseline,
/// candidate, change.
fn list<'a>(text: &'a str, title: &str) -> Vec<Vec<&'a str>> {
    let start = text
        .find(&format!("\n{title}:\n"))
        .unwrap_or_else(|| panic!("no list {title} in\n{text}"));
    text[start + title.len() + 3..]
        .lines()
        .skip(1) // the column heads
        .take_while(|l| l.starts_with("    ") && !l.starts_with("    ..."))
        .map(|l| l.split_whitespace().collect())
        .collect()
}

fn num(s: &str) -> f64 {
    s.parse()
        .unwrap_or_else(|e| panic!("not a number: {s}: {e}"))
}

/// compare --why of index=no against index=yes: its text, after checking
/// the first counter row is one of `first` and moved up by far.
fn compare_why(s: &Scratch, first: &[&str]) -> String {
    let r = s.ok_home(&[
        "compare",
        "--baseline=tag:index=yes",
        "--candidate=tag:index=no",
        "--store=r.db",
        "--why",
    ]);
    let text = r.stdout;
    // Shown with --no-capture: what a user reads.
    eprintln!("{text}");
    assert!(
        text.contains("Why it changed: select_random_points, 2 threads (baseline runs #1, #2; candidate runs #3, #4)"),
        "{text}"
    );
    let counters = list(&text, "Server counters per transaction");
    let top = &counters[0];
    assert!(first.contains(&top[0]), "{text}");
    // A counter of things: no unit between the numbers. The scan reads
    // the whole table (MariaDB: 10000 rows against 10; PostgreSQL: its
    // 271 pages against some 30).
    let (b, c) = (num(top[1]), num(top[2]));
    assert!(c > 5.0 * b.max(0.1), "{text}");
    assert!(top[3].starts_with(['x', '+']) || top[3] == "new", "{text}");
    // The server's CPU per transaction goes the same way: a scan costs
    // far more than ten index lookups.
    let os = list(&text, "OS per transaction");
    let cpu = os
        .iter()
        .find(|r| r[0] == "server_cpu")
        .unwrap_or_else(|| panic!("no server_cpu in\n{text}"));
    // "0.05 ms": the numbers are the second and fourth words.
    assert!(num(cpu[3]) > num(cpu[1]), "{text}");
    text
}

/// Each run has a profile: perf's functions, or one line (a warning of
/// the run too) saying why not. With profiles, --why lists the functions,
/// and a sequential scan's next-tuple function takes a share of the
/// candidate's samples that the baseline's runs do not have.
fn profiled(s: &Scratch, runs: &[Run], text: &str) {
    // The share of a sequential scan's next-tuple function in each run.
    let mut scan_share = Vec::new();
    for (i, r) in runs.iter().enumerate() {
        let doc = s
            .ok_home(&[
                "results",
                "show",
                &(i + 1).to_string(),
                "--store=r.db",
                "--format=json",
            ])
            .json();
        let p = &doc["profile"];
        assert_eq!(p["tool"], "perf", "{p}");
        match p["note"].as_str() {
            None => {
                assert!(p["samples"].as_u64().is_some_and(|n| n > 0), "{p}");
                let functions = p["functions"].as_array().cloned().unwrap_or_default();
                assert!(!functions.is_empty(), "{p}");
                scan_share.push(
                    functions
                        .iter()
                        .find(|f| f["function"] == "heap_getnextslot")
                        .and_then(|f| f["pct"].as_f64())
                        .unwrap_or(0.0),
                );
            }
            Some(note) => {
                assert!(note.starts_with("--profile-server: "), "{note}");
                assert_eq!(
                    r.stderr.matches(note).count(),
                    1,
                    "the note is the run's warning once: {}",
                    r.stderr
                );
                eprintln!("not profiled here: {note}");
            }
        }
    }
    if scan_share.len() == runs.len() {
        assert!(
            text.contains("\nServer CPU by function (perf):\n"),
            "{text}"
        );
        // Runs 1-2 look rows up through the index, 3-4 scan the table.
        let (with_index, scans) = scan_share.split_at(2);
        let most_with_index = with_index.iter().copied().fold(0.0, f64::max);
        assert!(
            scans.iter().all(|s| *s > 1.0 && *s > most_with_index),
            "{scan_share:?}\n{text}"
        );
    }
}

/// The wait-event record of the stored run `id`.
fn waits(s: &Scratch, id: &str) -> serde_json::Value {
    let doc = s
        .ok_home(&["results", "show", id, "--store=r.db", "--format=json"])
        .json();
    doc["waits"].clone()
}

#[test]
fn mariadb_rows_read_rank_first_without_the_index() {
    let Some(server) = start_with(Flavor::MariaDb, &[("performance_schema", "ON")]) else {
        return;
    };
    ask(
        &server,
        "CREATE DATABASE idx; CREATE DATABASE noidx; \
         UPDATE performance_schema.setup_consumers SET ENABLED = 'YES' \
         WHERE NAME = 'events_waits_current'",
    );
    let s = Scratch::new();
    let url = |db: &str| format!("mysql://root@127.0.0.1:{}/{db}", server.port());
    prepare_and_run(&s, &url("idx"), true, &[]);
    prepare_and_run(&s, &url("noidx"), false, &[]);
    let text = compare_why(&s, &["Innodb_rows_read", "Rows_read"]);
    // Ten lookups by key a transaction with the index, a scan without.
    let counters = list(&text, "Server counters per transaction");
    let row = |name: &str| {
        counters
            .iter()
            .find(|r| r[0] == name)
            .unwrap_or_else(|| panic!("no {name} in\n{text}"))
    };
    let scan = row("Handler_read_rnd_next");
    assert!(num(scan[2]) > 1000.0 && num(scan[1]) < 100.0, "{text}");
    let by_key = row("Handler_read_key");
    assert!(num(by_key[1]) >= 5.0, "{text}");
    // performance_schema was on, with its consumer: samples counted.
    for id in ["1", "3"] {
        let w = waits(&s, id);
        assert_eq!(
            w["source"], "performance_schema.events_waits_current",
            "{w}"
        );
        assert!(w["samples"].as_u64().is_some_and(|n| n >= 5), "{w}");
        assert!(w.get("note").is_none(), "{w}");
    }
    // The scans' time goes to table I/O through the handler.
    for id in ["3", "4"] {
        let w = waits(&s, id);
        assert!(
            w["events"]["wait/io/table/sql/handler"]
                .as_u64()
                .is_some_and(|n| n > 0),
            "{w}"
        );
    }
    assert!(
        list(&text, "Wait events (sampled during the measured phase)")
            .iter()
            .any(|r| r[0] == "busy"),
        "{text}"
    );
}

#[test]
fn postgres_blocks_rank_first_without_the_index() {
    let Some(server) = start_with(Flavor::Postgres, &[]) else {
        return;
    };
    ask(&server, "CREATE DATABASE idx");
    ask(&server, "CREATE DATABASE noidx");
    let s = Scratch::new();
    let url = |db: &str| format!("postgres://postgres@127.0.0.1:{}/{db}", server.port());
    // Profiled with perf where it may watch the server.
    let mut runs = prepare_and_run(&s, &url("idx"), true, &["--profile-server"]);
    runs.extend(prepare_and_run(
        &s,
        &url("noidx"),
        false,
        &["--profile-server"],
    ));
    let text = compare_why(&s, &["database.blks_hit", "database.blks_read"]);
    profiled(&s, &runs, &text);
    // pg_stat_activity was sampled: the scans' sessions were seen busy.
    for id in ["3", "4"] {
        let w = waits(&s, id);
        assert_eq!(w["source"], "pg_stat_activity", "{w}");
        assert!(w["samples"].as_u64().is_some_and(|n| n >= 5), "{w}");
        assert!(w["busy"].as_u64().is_some_and(|n| n >= 1), "{w}");
    }
    let waits_list = list(&text, "Wait events (sampled during the measured phase)");
    assert!(waits_list.iter().any(|r| r[0] == "busy"), "{text}");

    // Markdown and HTML carry the same first row; csv has no room for it.
    let md = s
        .ok_home(&[
            "compare",
            "--baseline=tag:index=yes",
            "--candidate=tag:index=no",
            "--store=r.db",
            "--why",
            "--format=markdown",
        ])
        .stdout;
    assert!(md.contains("### Server counters per transaction"), "{md}");
    let html = s
        .ok_home(&[
            "compare",
            "--baseline=tag:index=yes",
            "--candidate=tag:index=no",
            "--store=r.db",
            "--why",
            "--format=html",
        ])
        .stdout;
    let section = html
        .split("<section class=\"dbmeter-why\">")
        .nth(1)
        .unwrap_or_else(|| panic!("no why section in\n{html}"));
    assert!(
        section.contains("<tr><th class=\"label\">database.blks_"),
        "{html}"
    );
    assert!(html.trim_end().ends_with("</html>"), "{html}");
    // The HTML report has the section too.
    s.ok_home(&[
        "report",
        "--baseline=tag:index=yes",
        "--store=r.db",
        "--output=r.html",
    ]);
    let report = std::fs::read_to_string(s.path("r.html")).expect("read r.html");
    let section = report
        .rsplit("Why it changed against tag:index=yes")
        .next()
        .filter(|_| report.contains("Why it changed against tag:index=yes"))
        .unwrap_or_else(|| panic!("no why section in the report"));
    assert!(
        section.contains("<tr><th class=\"label\">database.blks_"),
        "{section}"
    );
    let csv = s.run_home(&[
        "compare",
        "--baseline=tag:index=yes",
        "--candidate=tag:index=no",
        "--store=r.db",
        "--why",
        "--format=csv",
    ]);
    assert_eq!(csv.code, 2, "{}", csv.stderr);
    assert_eq!(csv.stderr.trim().lines().count(), 1, "{}", csv.stderr);
    assert!(csv.stderr.contains("--why"), "{}", csv.stderr);
}

/// MariaDB as it starts by default, performance_schema OFF: nothing to
/// sample, and the record and --why say so. SQLite has no wait events at
/// all, and --why says that.
#[test]
fn wait_events_off_on_mariadb_and_none_on_sqlite() {
    let s = Scratch::new();
    let sqlite = "--db=sqlite:w.sqlite";
    s.ok_home(&["prepare", "oltp_point_select", sqlite, "--table-size=100"]);
    for tag in ["--tag=side=a", "--tag=side=b"] {
        s.ok_home(&[
            "run",
            "oltp_point_select",
            sqlite,
            "--table-size=100",
            "--events=200",
            "--time=0",
            "--store=r.db",
            tag,
        ]);
    }
    let doc = s
        .ok_home(&["results", "show", "1", "--store=r.db", "--format=json"])
        .json();
    assert!(doc.get("waits").is_none(), "{doc}");
    let text = s
        .ok_home(&[
            "compare",
            "--baseline=tag:side=a",
            "--candidate=tag:side=b",
            "--store=r.db",
            "--why",
        ])
        .stdout;
    assert!(
        text.contains("note: baseline: no wait events recorded (SQLite has none"),
        "{text}"
    );
    // SQLite keeps no server counters.
    assert!(
        text.contains("note: baseline: a run has no server counters"),
        "{text}"
    );

    let Some(server) = dbmeter_testkit::servers::start(Flavor::MariaDb) else {
        return;
    };
    let url = format!("--db=mysql://root@127.0.0.1:{}/test", server.port());
    s.ok_home(&["prepare", "oltp_point_select", &url, "--table-size=100"]);
    for tag in ["--tag=m=a", "--tag=m=b"] {
        s.ok_home(&[
            "run",
            "oltp_point_select",
            &url,
            "--table-size=100",
            "--time=1",
            "--store=r.db",
            tag,
        ]);
    }
    let w = waits(&s, "3");
    assert_eq!(w["samples"], 0, "{w}");
    let note = w["note"].as_str().unwrap_or_default();
    assert!(
        note.starts_with("performance_schema is OFF on this server"),
        "{w}"
    );
    let text = s
        .ok_home(&[
            "compare",
            "--baseline=tag:m=a",
            "--candidate=tag:m=b",
            "--store=r.db",
            "--why",
        ])
        .stdout;
    assert!(text.contains(&format!("note: candidate: {note}")), "{text}");
}
