//! `dbmeter digest` on logs a real MariaDB writes: a known workload runs with
//! the slow log (long_query_time=0, the extended attributes) and the general
//! log on; the classes and their counts must be what ran, and the query IDs,
//! fingerprints and counts pt-query-digest's (percona-toolkit) on the same
//! log. Malformed lines, compressed and piped input, usage errors.

use crate::common::browser::{chromium, headless, pixels_of, screenshot};
use crate::common::*;
use dbmeter_server::{Flavor, Server};
use dbmeter_testkit::servers::{ask, client_on, start_with};
use dbmeter_testkit::tools::Tool;
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Write;

const PT_QUERY_DIGEST: Tool = Tool::on_path_for(
    "pt-query-digest",
    "percona-toolkit",
    dbmeter_testkit::Requirement::Tools,
    &["pt-query-digest"],
);

/// The statements the test writes by hand, each run `n` times with other
/// literals: (fingerprint, how to make the i-th).
/// A statement's i-th instance.
type Make = Box<dyn Fn(usize) -> String>;

fn hand_written() -> Vec<(&'static str, Make)> {
    vec![
        (
            "select c from sbtest? where id in(?+)",
            Box::new(|i| {
                format!(
                    "SELECT c FROM sbtest1 WHERE id IN ({}, {}, {})",
                    i + 1,
                    i + 2,
                    i * 3 + 1
                )
            }),
        ),
        (
            "insert into digest_t (a, b) values(?+)",
            Box::new(|i| {
                let rows: Vec<String> = (0..=i % 4)
                    .map(|r| format!("({}, 'v{r}')", i * 10 + r))
                    .collect();
                format!("INSERT INTO digest_t (a, b) VALUES {}", rows.join(", "))
            }),
        ),
        (
            "select /*!? sql_no_cache */ count(*) from digest_t where b = ? and a > ?",
            Box::new(|i| {
                format!(
                    "SELECT /*!40001 SQL_NO_CACHE */ /* app:report */ COUNT(*) FROM digest_t WHERE b = 'v{}' AND a > {i}",
                    i % 3
                )
            }),
        ),
        (
            "update digest_t set b = ? where a = ? limit ?",
            Box::new(|i| {
                format!("UPDATE digest_t SET b = \"x{i}\"  WHERE a = {i} LIMIT 1 -- tail comment\n")
            }),
        ),
        (
            "select a from digest_t where a between ? and ? order by a limit ?",
            Box::new(|i| {
                format!(
                    "select a from digest_t\n  where a between {i} and {}\n  order by a ASC limit {}, 5",
                    i + 9,
                    i % 4
                )
            }),
        ),
    ]
}

/// Runs the hand-written statements `n` times each, one client call.
fn run_hand_written(server: &Server, n: usize) {
    let mut sql = String::from("CREATE TABLE IF NOT EXISTS digest_t (a INT, b VARCHAR(20));\n");
    for i in 0..n {
        for (_, make) in hand_written() {
            sql.push_str(&make(i));
            sql.push_str(";\n");
        }
    }
    let out = client_on(server, "test", &sql)
        .output()
        .expect("run the mariadb client");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn classes(doc: &Value) -> BTreeMap<String, (String, u64)> {
    doc["classes"]
        .as_array()
        .expect("classes")
        .iter()
        .map(|c| {
            (
                c["id"].as_str().expect("id").to_string(),
                (
                    c["key"].as_str().expect("key").to_string(),
                    c["query_count"].as_u64().expect("count"),
                ),
            )
        })
        .collect()
}

/// pt-query-digest's classes in its JSON: checksum to (fingerprint, count).
fn pt_classes(doc: &Value) -> BTreeMap<String, (String, u64)> {
    doc["classes"]
        .as_array()
        .expect("pt-query-digest's classes")
        .iter()
        .map(|c| {
            (
                c["checksum"].as_str().expect("checksum").to_string(),
                (
                    c["fingerprint"].as_str().expect("fingerprint").to_string(),
                    c["query_count"].as_u64().expect("query_count"),
                ),
            )
        })
        .collect()
}

/// The shape of a pt-query-digest-style text report: per class (by its
/// query ID), the labels of its rows from the attribute table to the
/// query-time distribution (`Count`, `Exec time`, ..., `Boolean:`,
/// `Full scan`, `String:`, `Databases`, ...), in order.
fn report_shape(text: &str) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    let mut class: Option<(String, Vec<String>)> = None;
    let mut in_table = false;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# Query ")
            && let Some(at) = rest.find(" ID 0x")
        {
            let id = rest[at + 6..].split_whitespace().next().unwrap_or("");
            class = Some((id.to_string(), Vec::new()));
            in_table = false;
        } else if line.starts_with("# Query_time distribution") {
            if let Some((id, rows)) = class.take() {
                out.insert(id, rows);
            }
        } else if let Some((_, rows)) = class.as_mut() {
            if line.starts_with("# ====") {
                in_table = true;
            } else if in_table && line.len() > 2 {
                let label = line[2..].get(..12).unwrap_or(&line[2..]).trim_end();
                rows.push(label.to_string());
            }
        }
    }
    out
}

fn count_of(doc: &Value, fingerprint: &str) -> u64 {
    doc["classes"]
        .as_array()
        .expect("classes")
        .iter()
        .find(|c| c["key"] == fingerprint)
        .and_then(|c| c["query_count"].as_u64())
        .unwrap_or(0)
}

#[test]
fn mariadb_slow_and_general_logs_match_the_workload_and_pt_query_digest() {
    let s = Scratch::new();
    // In the data directory, where the server (perhaps running as its
    // service user) can write.
    let Some(server) = start_with(
        Flavor::MariaDb,
        &[
            ("slow_query_log", "1"),
            ("long_query_time", "0"),
            ("log_slow_verbosity", "query_plan,innodb,explain"),
            ("slow_query_log_file", "digest-slow.log"),
            ("general_log", "1"),
            ("general_log_file", "digest-general.log"),
        ],
    ) else {
        return;
    };
    let slow = server.datadir().join("digest-slow.log");
    let general = server.datadir().join("digest-general.log");
    let slow_s = slow.to_str().expect("utf-8 path").to_string();
    let general_s = general.to_str().expect("utf-8 path").to_string();
    let db = format!("--db={}", server.url());
    s.ok(&[
        "prepare",
        "oltp_read_write",
        &db,
        "--tables=1",
        "--table-size=200",
    ]);
    let events = 40u64;
    s.ok(&[
        "run",
        "oltp_read_write",
        &db,
        "--tables=1",
        "--table-size=200",
        "--threads=1",
        "--time=0",
        &format!("--events={events}"),
    ]);
    let n = 7;
    run_hand_written(&server, n);
    // A user of its own, for --group-by=user and host: 5 statements over
    // TCP (host 127.0.0.1: the server skips name resolution), 3 over the
    // socket (localhost), each session also its Connect and Quit.
    ask(
        &server,
        "CREATE USER digest_u@'%' IDENTIFIED BY 'pw'; GRANT SELECT ON test.* TO digest_u@'%'",
    );
    let port = server.port().to_string();
    let socket = server.socket().to_string_lossy().into_owned();
    for (via, sql) in [
        (
            ["-h127.0.0.1", "-P", port.as_str()],
            "SELECT 1; SELECT 2; SELECT 3; SELECT 4; SELECT 5",
        ),
        (["-S", socket.as_str(), ""], "SELECT 6; SELECT 7; SELECT 8"),
    ] {
        let out = std::process::Command::new("mariadb")
            .args(["--no-defaults", "-udigest_u", "-ppw"])
            .args(via.iter().filter(|a| !a.is_empty()))
            .args(["-N", "-B", "test", "-e", sql])
            .output()
            .expect("run the mariadb client");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // The logs are written as statements end; a last statement makes sure
    // everything before it is there.
    ask(&server, "SELECT 'end of the test workload'");

    let r = s.ok(&["digest", &slow_s, "--format=json", "--limit=0"]);
    let doc = r.json();
    assert_eq!(doc["schema"], "dbmeter.digest");
    assert_eq!(doc["files"][0]["format"], "mysql-slow");
    assert_eq!(doc["malformed"]["count"], 0, "{}", r.stderr);
    // The workload: oltp_read_write's 10 point selects, 4 ranges, 2 updates,
    // a delete and an insert per event, each its own class.
    for (fp, per_event) in [
        ("select c from sbtest? where id=?", 10),
        ("select c from sbtest? where id between ? and ?", 1),
        ("select sum(k) from sbtest? where id between ? and ?", 1),
        (
            "select c from sbtest? where id between ? and ? order by c",
            1,
        ),
        (
            "select distinct c from sbtest? where id between ? and ? order by c",
            1,
        ),
        ("update sbtest? set k=k? where id=?", 1),
        ("update sbtest? set c=? where id=?", 1),
        ("delete from sbtest? where id=?", 1),
        ("insert into sbtest? (id, k, c, pad) values(?+)", 1),
    ] {
        assert_eq!(
            count_of(&doc, fp),
            per_event * events,
            "class {fp}:\n{}",
            r.stdout
        );
    }
    for (fp, _) in hand_written() {
        assert_eq!(count_of(&doc, fp), n as u64, "class {fp}:\n{}", r.stdout);
    }
    // The extended attributes are there, by name.
    let attrs = &doc["global"]["attributes"];
    for a in [
        "Query_time",
        "Lock_time",
        "Rows_examined",
        "Rows_affected",
        "Bytes_sent",
        "Pages_accessed",
    ] {
        assert!(
            attrs[a]["numbers"]["count"].as_u64().unwrap_or(0) > 0,
            "{a}: {attrs}"
        );
    }
    assert!(
        attrs["Full_scan"]["yes"].as_u64().unwrap_or(0) > 0,
        "{attrs}"
    );
    let point = doc["classes"]
        .as_array()
        .and_then(|c| {
            c.iter()
                .find(|c| c["key"] == "select c from sbtest? where id=?")
        })
        .expect("the point select class");
    assert_eq!(point["databases"]["test"], 10 * events);
    assert!(
        point["sample"]["explain"]
            .as_str()
            .unwrap_or("")
            .starts_with("EXPLAIN SELECT c FROM sbtest1 WHERE id=")
    );
    assert_eq!(
        point["sample"]["show_create_table"][0],
        "SHOW CREATE TABLE `test`.`sbtest1`"
    );
    let hist: u64 = point["query_time_histogram"]
        .as_array()
        .expect("histogram")
        .iter()
        .filter_map(Value::as_u64)
        .sum();
    assert_eq!(hist, 10 * events);
    // Events per time bucket: all of them, overall and in the class.
    let in_buckets = |v: &Value| -> u64 {
        v["time_buckets"]["buckets"]
            .as_array()
            .expect("time buckets")
            .iter()
            .filter_map(|b| b[1].as_u64())
            .sum()
    };
    assert_eq!(in_buckets(point), 10 * events);
    assert_eq!(
        Some(in_buckets(&doc["global"])),
        doc["global"]["query_count"].as_u64()
    );

    // The text report names the same classes. Every class, so that some
    // have tables to SHOW CREATE: which classes take the most time (the
    // default order) depends on the machine's load (the recorder's SHOW
    // statements, a COMMIT or a CREATE INDEX can be the top three).
    let text = s.ok(&["digest", &slow_s, "--limit=0"]).stdout;
    assert!(
        text.contains("# Profile") && text.contains("# Query 1: "),
        "{text}"
    );
    assert!(
        text.contains("# Query_time distribution") && text.contains("SHOW CREATE TABLE"),
        "{text}"
    );

    // One class by its ID, 32 and 16 digits.
    let id = point["id"].as_str().expect("id").to_string();
    for given in [format!("0x{id}"), id[16..].to_lowercase()] {
        let one = s
            .ok(&["digest", &slow_s, "--format=json", &format!("--id={given}")])
            .json();
        assert_eq!(
            classes(&one).keys().collect::<Vec<_>>(),
            [&id],
            "--id={given}"
        );
    }

    // The HTML page: a row per class, charts over time, of the top classes
    // and of their shares, drawn by a browser with nothing from the network.
    html_page(&s, &slow_s, &id, classes(&doc).len());

    // pt-query-digest on the same log: the same IDs, fingerprints and counts.
    if let Some(pt) = PT_QUERY_DIGEST.find_or_skip() {
        let out = std::process::Command::new(&pt)
            .args([
                "--limit=100%:1000000",
                "--output=json",
                "--no-version-check",
                &slow_s,
            ])
            .output()
            .expect("run pt-query-digest");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let ptdoc: Value = serde_json::from_slice(&out.stdout).expect("pt-query-digest's JSON");
        let theirs = pt_classes(&ptdoc);
        let ours = classes(&doc);
        assert_eq!(
            ours.len(),
            theirs.len(),
            "classes:\nours {ours:#?}\ntheirs {theirs:#?}"
        );
        assert_eq!(ours, theirs);
        assert_eq!(ptdoc["global"]["query_count"], doc["global"]["query_count"]);

        // Its text report and ours: every class with the same rows in the
        // same order, from Count to the users (the numbers differ where
        // ours are exact and pt-query-digest's come from its buckets).
        let out = std::process::Command::new(pt)
            .args(["--limit=100%:1000000", "--no-version-check", &slow_s])
            .output()
            .expect("run pt-query-digest");
        assert!(out.status.success());
        let theirs = report_shape(&String::from_utf8_lossy(&out.stdout));
        let ours = report_shape(&text);
        assert_eq!(ours.len(), theirs.len(), "{ours:#?}\n{theirs:#?}");
        assert!(
            theirs
                .values()
                .any(|rows| rows.iter().any(|r| r == "Databases"))
        );
        for (id, rows) in &theirs {
            assert_eq!(ours.get(id), Some(rows), "class {id}");
        }

        // --filter keeps the same statements as pt-query-digest's Perl one.
        let ours = s
            .ok(&[
                "digest",
                &slow_s,
                "--limit=0",
                "--format=json",
                "--filter",
                "Rows_examined > 0 and arg ~ digest_t and not (Query_time > 100)",
            ])
            .json();
        let out = std::process::Command::new(PT_QUERY_DIGEST.find().expect("found above"))
            .args([
                "--limit=100%:1000000",
                "--output=json",
                "--no-version-check",
                "--filter",
                "($event->{Rows_examined} || 0) > 0 && $event->{arg} =~ m/digest_t/i && !($event->{Query_time} > 100)",
                &slow_s,
            ])
            .output()
            .expect("run pt-query-digest");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let ptdoc: Value = serde_json::from_slice(&out.stdout).expect("pt-query-digest's JSON");
        let (ours, theirs) = (classes(&ours), pt_classes(&ptdoc));
        assert!(
            !ours.is_empty() && ours.len() < classes(&doc).len(),
            "{ours:#?}"
        );
        assert_eq!(ours, theirs);
    }

    // Compressed and piped, the same digest.
    let gz = s.path("slow.log.gz");
    let data = std::fs::read(&slow).expect("read the slow log");
    let mut enc = flate2_gz(&data);
    std::fs::write(&gz, &mut enc).expect("write .gz");
    let from_gz = s
        .ok(&[
            "digest",
            gz.to_str().expect("path"),
            "--format=json",
            "--limit=0",
        ])
        .json();
    assert_eq!(classes(&from_gz), classes(&doc));
    let piped = s.run_stdin(
        &["digest", "-", "--format=json", "--limit=0", "--threads=3"],
        &String::from_utf8_lossy(&data),
    );
    assert_eq!(piped.code, 0, "{}", piped.stderr);
    assert_eq!(classes(&piped.json()), classes(&doc));

    // The general log: the same statements, counted from its Query lines.
    let g = s
        .ok(&["digest", &general_s, "--format=json", "--limit=0"])
        .json();
    assert_eq!(g["files"][0]["format"], "mysql-general");
    assert_eq!(
        count_of(&g, "select c from sbtest? where id=?"),
        10 * events
    );
    for (fp, _) in hand_written() {
        assert_eq!(count_of(&g, fp), n as u64, "general log, class {fp}");
    }
    // pt-query-digest --type=genlog: the same classes, but for `Execute`
    // lines (prepared statements), which it counts as administrator
    // commands and dbmeter as the statements they log: those are digested
    // apart and taken out of both sides.
    if let Some(pt) = PT_QUERY_DIGEST.find_or_skip() {
        let out = std::process::Command::new(pt)
            .args([
                "--type=genlog",
                "--limit=100%:1000000",
                "--output=json",
                "--no-version-check",
                &general_s,
            ])
            .output()
            .expect("run pt-query-digest");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let ptdoc: Value = serde_json::from_slice(&out.stdout).expect("pt-query-digest's JSON");
        let mut theirs = pt_classes(&ptdoc);
        let mut ours = classes(&g);
        let glog = std::fs::read_to_string(&general).expect("read the general log");
        let executes: String = glog
            .lines()
            .filter(|l| l.contains(" Execute\t"))
            .map(|l| format!("{l}\n"))
            .collect();
        let executed = executes.lines().count() as u64;
        if executed > 0 {
            std::fs::write(s.path("executes.log"), &executes).expect("write");
            let e = s
                .ok(&[
                    "digest",
                    "executes.log",
                    "--log-format=mysql-general",
                    "--format=json",
                    "--limit=0",
                ])
                .json();
            for (id, (_, n)) in classes(&e) {
                let left = ours.get(&id).map_or(0, |c| c.1) - n;
                if left == 0 {
                    ours.remove(&id);
                } else if let Some(c) = ours.get_mut(&id) {
                    c.1 = left;
                }
            }
            let admin = theirs
                .iter()
                .find(|(_, (fp, _))| fp == "administrator command: Execute")
                .map(|(id, c)| (id.clone(), c.1));
            assert_eq!(admin.as_ref().map(|a| a.1), Some(executed), "{theirs:#?}");
            if let Some((id, _)) = admin {
                theirs.remove(&id);
            }
        }
        assert_eq!(ours, theirs, "general log");
    }
    let by_db = s
        .ok(&[
            "digest",
            &general_s,
            "--format=json",
            "--group-by=db",
            "--limit=0",
        ])
        .json();
    assert!(count_of(&by_db, "test") >= 18 * events, "{by_db}");
    // By user and by host: digest_u's 8 statements, 2 Connect and 2 Quit.
    let group = |by: &str, extra: &[&str]| -> BTreeMap<String, u64> {
        let args = [
            &["digest", &general_s, "--format=json", "--limit=0", by][..],
            extra,
        ]
        .concat();
        let doc = s.ok(&args).json();
        doc["classes"]
            .as_array()
            .expect("classes")
            .iter()
            .map(|c| {
                (
                    c["key"].as_str().expect("key").to_string(),
                    c["query_count"].as_u64().expect("count"),
                )
            })
            .collect()
    };
    let by_user = group("--group-by=user", &[]);
    assert_eq!(by_user.get("digest_u"), Some(&12), "{by_user:?}");
    assert!(
        by_user.get("root").is_some_and(|&n| n > 18 * events),
        "{by_user:?}"
    );
    assert_eq!(by_user.len(), 2, "{by_user:?}");
    let by_host = group("--group-by=host", &["--filter=user = digest_u"]);
    assert_eq!(
        by_host,
        BTreeMap::from([("127.0.0.1".to_string(), 7), ("localhost".to_string(), 5)])
    );
    let by_host = group("--group-by=host", &[]);
    assert!(
        by_host.get("127.0.0.1").is_some_and(|&n| n > 18 * events),
        "{by_host:?}"
    );
    // The general log read in parallel in small chunks gives the digest of
    // one thread, by fingerprint and by user.
    parallel_digest_is_the_same(&s, &general_s, &[]);
    parallel_digest_is_the_same(&s, &general_s, &["--group-by=user"]);
    // By table: the hand-written statements on digest_t, and its CREATE TABLE.
    let by_table = s
        .ok(&[
            "digest",
            &slow_s,
            "--format=json",
            "--group-by=table",
            "--limit=0",
        ])
        .json();
    assert_eq!(
        count_of(&by_table, "test.digest_t"),
        4 * n as u64 + 1,
        "{by_table}"
    );
}

/// gzip of `data` (the e2e binary has no gzip crate: the system's gzip).
/// `dbmeter digest LOG --format=html --limit=0`: its class rows, and its
/// four charts in headless Chromium's DOM and on a screenshot.
fn html_page(s: &Scratch, log: &str, id: &str, n_classes: usize) {
    let page = s.path("digest.html");
    let page_s = page.to_str().expect("utf-8 path");
    s.ok(&[
        "digest",
        log,
        "--format=html",
        "--limit=0",
        &format!("--output={page_s}"),
    ]);
    let html = std::fs::read_to_string(&page).expect("the page");
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
    assert_eq!(html.matches("<tr class=\"class-row\">").count(), n_classes);
    assert!(html.contains(&format!("0x{id}")), "the class's ID");
    assert!(!html.contains("src=\"http") && !html.contains("href=\"http"));
    let Some(browser) = chromium() else { return };
    let dom = headless(&browser, s, &["--dump-dom"], &page);
    assert!(
        dom.status.success(),
        "{}",
        String::from_utf8_lossy(&dom.stderr)
    );
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert_eq!(dom.matches("<svg").count(), 4, "four charts");
    for chart in [
        "statements-per-second",
        "query-time-per-second",
        "top-classes",
        "time-share",
    ] {
        assert!(dom.contains(&format!("id=\"{chart}\"")), "{chart}");
    }
    assert!(dom.contains("<polyline"), "lines over time");
    // Ten classes by time, and ten shares and the rest's.
    assert!(n_classes > 10);
    assert_eq!(dom.matches("class=\"bar\"").count(), 21);
    assert_eq!(dom.matches("<tr class=\"class-row\">").count(), n_classes);
    assert_eq!(dom.matches("<details id=\"class-").count(), n_classes);
    // The bars are drawn: the first class's colour (#4e79a7).
    let shot = screenshot(&browser, s, &page, 1200, 2400);
    let blue = pixels_of(&shot, (78, 121, 167));
    assert!(blue > 2000, "bars drawn: {blue} pixels");
}

fn flate2_gz(data: &[u8]) -> Vec<u8> {
    let mut child = std::process::Command::new("gzip")
        .arg("-c")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("gzip (Debian package gzip, always there)");
    let mut stdin = child.stdin.take().expect("stdin");
    let data = data.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&data));
    let out = child.wait_with_output().expect("gzip");
    writer.join().expect("writer").expect("write to gzip");
    out.stdout
}

/// Statements made of fragments that exercise every fingerprint rule
/// (literals of each kind, comments, IN and VALUES lists, unions, LIMIT,
/// ORDER BY ... ASC, case, white space), from a seeded generator.
fn fuzzed_statements(n: usize, seed: u64) -> Vec<String> {
    const FRAGMENTS: &[&str] = &[
        "a",
        "b1",
        "tab1",
        "FROM",
        "from",
        "t",
        "WHERE",
        "=",
        "1",
        "-2",
        "+3",
        "0x1F",
        "1.5e3",
        "b'01'",
        "x'AF'",
        "'str'",
        "'it\\'s'",
        "\"dq\"",
        "IN",
        "in",
        "(",
        ")",
        ",",
        "?",
        "(1, 2, 3)",
        "( 'a' , 'b' )",
        "VALUES",
        "values",
        "(1,'x'),(2,'y')",
        "UNION",
        "ALL",
        "LIMIT",
        "limit",
        "OFFSET",
        "ORDER BY",
        "order by",
        "ASC",
        "asc",
        "DESC",
        "null",
        "NULL",
        "true",
        "FALSE",
        "/* c */",
        "/*!50001 v */",
        "/**/",
        "-- line\n",
        "\n  ",
        "\t",
        "db",
        "`db`",
        "count(*)",
        "col_2",
        "t2.c3",
        "-",
        "x",
        ".",
        ".5",
        "abc123def",
        "ascii",
        "select a from t",
    ];
    const LEADS: &[&str] = &[
        "SELECT",
        "select",
        "INSERT INTO t VALUES",
        "UPDATE t SET",
        "DELETE FROM",
        "REPLACE INTO t VALUES",
        "CALL p(",
        "call a.b((",
    ];
    let mut x = seed | 1;
    let mut next = move |m: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % m as u64) as usize
    };
    (0..n)
        .map(|_| {
            let mut q = LEADS[next(LEADS.len())].to_string();
            for _ in 0..1 + next(20) {
                q.push(' ');
                q.push_str(FRAGMENTS[next(FRAGMENTS.len())]);
            }
            if next(5) == 0 {
                let arm = format!("select a from t where b = {}", next(100));
                q = format!("{arm} union {arm} UNION ALL {arm}");
            }
            // Nothing that ends an event early in a slow log.
            q.replace(";\n", " ")
        })
        .collect()
}

#[test]
fn fuzzed_statements_have_pt_query_digest_classes() {
    let Some(pt) = PT_QUERY_DIGEST.find_or_skip() else {
        return;
    };
    let s = Scratch::new();
    let mut log = String::new();
    for (i, q) in fuzzed_statements(3000, 24).iter().enumerate() {
        log.push_str(&format!(
            "# User@Host: u[u] @ h []\n# Query_time: 0.{:06}  Lock_time: 0.000001  Rows_sent: 1  Rows_examined: {i}\nSET timestamp={};\n{q};\n",
            i % 1000 + 1,
            1_795_775_498 + i
        ));
    }
    std::fs::write(s.path("fuzz.log"), &log).expect("write");
    let ours = s
        .ok(&["digest", "fuzz.log", "--format=json", "--limit=0"])
        .json();
    let out = std::process::Command::new(pt)
        .args([
            "--limit=100%:1000000",
            "--output=json",
            "--no-version-check",
        ])
        .arg(s.path("fuzz.log"))
        .output()
        .expect("run pt-query-digest");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let theirs: Value = serde_json::from_slice(&out.stdout).expect("pt-query-digest's JSON");
    assert_eq!(ours["global"]["query_count"], 3000);
    assert!(
        classes(&ours).len() > 1000,
        "the statements make many classes"
    );
    assert_eq!(classes(&ours), pt_classes(&theirs));
}

#[test]
fn malformed_lines_are_counted_with_their_line_numbers() {
    let s = Scratch::new();
    let log = "# Time: 261127 10:31:38
# User@Host: root[root] @ localhost []
# Query_time: 0.000100  Lock_time: 0.000000 Rows_sent: 1  Rows_examined: 0
SET timestamp=1795775498;
SELECT 1;
# User@Host: root[root] @ localhost []
# Query_time: soon  Lock_time: 0.000000 Rows_sent: 1  Rows_examined: 0
SET timestamp=1795775499;
SELECT 2;
# User@Host: root[root] @ localhost []
# Query_time: 0.000300  Lock_time: 0.000000 Rows_sent: 1  Rows_examined: 0
SET timestamp=1795775500;
;
# User@Host: root[root] @ localhost []
# Query_time: 0.000200  Lock_time: 0.000000 Rows_sent: 1  Rows_examined: 0
SET timestamp=1795775501;
SELECT 3;
";
    std::fs::write(s.path("slow.log"), log).expect("write");
    let r = s.ok(&["digest", "slow.log", "--format=json"]);
    let doc = r.json();
    assert_eq!(doc["malformed"]["count"], 2, "{}", r.stdout);
    assert_eq!(doc["malformed"]["first"][0]["line"], 7);
    assert_eq!(doc["malformed"]["first"][1]["line"], 10);
    assert!(
        r.stderr
            .contains("slow.log line 7: Query_time 'soon' is not a number"),
        "{}",
        r.stderr
    );
    assert_eq!(count_of(&doc, "select ?"), 3);
    // The event with a Query_time that is not a number counts, with its
    // other attributes, but not in Query_time's statistics.
    let class = doc["classes"]
        .as_array()
        .expect("classes")
        .iter()
        .find(|c| c["key"] == "select ?")
        .expect("the class select ?");
    let attr_count = |name: &str| class["attributes"][name]["numbers"]["count"].as_u64();
    assert_eq!(attr_count("Query_time"), Some(2), "{class}");
    assert_eq!(attr_count("Lock_time"), Some(3), "{class}");
    assert_eq!(attr_count("Rows_sent"), Some(3), "{class}");
    // --since/--until by the statements' times.
    let r = s.ok(&[
        "digest",
        "slow.log",
        "--format=json",
        "--since=2026-11-27 10:31:39",
        "--until=1795775501",
    ]);
    assert_eq!(r.json()["global"]["query_count"], 1, "{}", r.stdout);
}

#[test]
fn usage_and_input_errors() {
    let s = Scratch::new();
    std::fs::write(s.path("notes.txt"), "hello\nworld\n").expect("write");
    for (args, code, want) in [
        (&["digest"][..], 2, "which log?"),
        (
            &["digest", "x.log", "--id=123"][..],
            2,
            "--id=123: expected a query ID",
        ),
        (
            &["digest", "x.log", "--group-by=tables2"][..],
            2,
            "--group-by=tables2",
        ),
        (
            &["digest", "x.log", "--order-by=Query_time:p42"][..],
            2,
            "not one of sum",
        ),
        (&["digest", "x.log", "--since=soon"][..], 2, "--since=soon"),
        (
            &["digest", "x.log", "--filter=Query_time >"][..],
            2,
            "--filter 'Query_time >': column",
        ),
        (&["digest", "x.log", "--format=csv"][..], 2, "--format=csv"),
        (&["digest", "missing.log"][..], 1, "cannot read missing.log"),
        (
            &["digest", "x.log", "--log-line-prefix=%m %z"][..],
            2,
            "unknown escape %z",
        ),
        (
            &["digest", "x.log", "--log-format=oracle"][..],
            2,
            "postgres-csv or postgres-json",
        ),
        (
            &["digest", "notes.txt"][..],
            1,
            "not a MySQL/MariaDB slow or general log",
        ),
    ] {
        let r = s.run(args);
        assert_eq!(r.code, code, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(want), "{args:?}: {}", r.stderr);
        assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    }
    // The tests' chunk size, when set, must be a size.
    let mut c = s.cmd(&["digest", "x.log"]);
    c.env("DBMETER_DIGEST_CHUNK", "0");
    let r = s.output(c);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("DBMETER_DIGEST_CHUNK=0: expected a number of bytes"),
        "{}",
        r.stderr
    );
    let help = s.ok(&["help", "digest"]).stdout;
    assert!(
        help.contains("--group-by") && help.contains("pt-query-digest"),
        "{help}"
    );
}

/// PostgreSQL statements written by hand: (fingerprint, the i-th instance).
fn pg_hand_written() -> Vec<(&'static str, Make)> {
    vec![
        (
            "select c from sbtest? where id in(?+)",
            Box::new(|i| {
                format!(
                    "SELECT c FROM sbtest1 WHERE id IN ({}, {}, {})",
                    i + 1,
                    i + 2,
                    i * 3 + 1
                )
            }),
        ),
        (
            "insert into digest_t (a, b) values(?+)",
            Box::new(|i| {
                let rows: Vec<String> = (0..=i % 4)
                    .map(|r| format!("({}, 'v{r}')", i * 10 + r))
                    .collect();
                format!("INSERT INTO digest_t (a, b) VALUES {}", rows.join(", "))
            }),
        ),
        (
            "select count(*) from digest_t where b = ? and a > ?::int?",
            Box::new(|i| {
                format!(
                    "SELECT /* app:report */ COUNT(*) FROM digest_t WHERE b = E'v\\'{}' AND a > '{i}'::int4",
                    i % 3
                )
            }),
        ),
        (
            "update \"digest_t\" set b = ? where a = ?",
            Box::new(|i| {
                format!(
                    "UPDATE \"digest_t\" SET b = $q${i}'s$q$\n   WHERE a = {i} -- tail comment\n"
                )
            }),
        ),
        (
            "select a from digest_t where a between ? and ? order by a limit ?",
            Box::new(|i| {
                format!(
                    "select a from digest_t\n  where a between {i} and {}\n  order by a ASC limit {}",
                    i + 9,
                    i % 4 + 1
                )
            }),
        ),
    ]
}

/// Runs `sql` through psql as a script (each statement its own query).
fn psql_script(server: &Server, sql: &str) {
    let s = Scratch::new();
    let path = s.path("script.sql");
    std::fs::write(&path, sql).expect("write the script");
    let port = server.port().to_string();
    let out = std::process::Command::new("psql")
        .args([
            "-X",
            "-q",
            "-h",
            "127.0.0.1",
            "-p",
            &port,
            "-U",
            "postgres",
            "-d",
            "test",
        ])
        .args(["-v", "ON_ERROR_STOP=1", "-f"])
        .arg(&path)
        .output()
        .expect("run psql");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn postgres_stderr_csv_and_json_logs_match_the_workload() {
    let s = Scratch::new();
    let Some(server) = start_with(
        Flavor::Postgres,
        &[
            ("logging_collector", "on"),
            ("log_destination", "stderr,csvlog,jsonlog"),
            ("log_directory", "digest-log"),
            ("log_filename", "digest.log"),
            ("log_min_duration_statement", "0"),
            ("log_line_prefix", "%m [%p] %q%u@%d "),
            // Its calls per statement are checked against the classes.
            ("shared_preload_libraries", "pg_stat_statements"),
        ],
    ) else {
        return;
    };
    let dir = server.datadir().join("digest-log");
    let db = format!("--db={}", server.url());
    s.ok(&[
        "prepare",
        "oltp_read_write",
        &db,
        "--tables=1",
        "--table-size=200",
    ]);
    let events = 30u64;
    s.ok(&[
        "run",
        "oltp_read_write",
        &db,
        "--tables=1",
        "--table-size=200",
        "--threads=1",
        "--time=0",
        &format!("--events={events}"),
    ]);
    // Prepared statements through the extended protocol (pgbench -M prepared).
    let port = server.port().to_string();
    let conn = ["-h", "127.0.0.1", "-p", &port, "-U", "postgres"];
    s.ok(&[&["pgbench", "-i", "-s", "1", "-q"][..], &conn, &["test"]].concat());
    let (clients, tx) = (2u64, 25u64);
    s.ok(&[
        &[
            "pgbench", "-n", "-S", "-M", "prepared", "-c", "2", "-t", "25",
        ][..],
        &conn,
        &["test"],
    ]
    .concat());
    let n = 6;
    let mut sql = String::from("CREATE TABLE IF NOT EXISTS digest_t (a INT, b VARCHAR(20));\n");
    for i in 0..n {
        for (_, make) in pg_hand_written() {
            sql.push_str(&make(i));
            sql.push_str(";\n");
        }
    }
    // A failing statement: its ERROR and STATEMENT lines are no class.
    sql.push_str("\\set ON_ERROR_STOP 0\nSELECT * FROM digest_nope;\n");
    psql_script(&server, &sql);
    // log_statement=all with log_duration=on: statement and duration pairs.
    let m = 4;
    let mut sql = String::from(
        "SET log_min_duration_statement = -1;\nSET log_statement = 'all';\nSET log_duration = on;\n",
    );
    for i in 0..m {
        sql.push_str(&format!("SELECT b\n  FROM digest_t\n  WHERE a = {i};\n"));
    }
    psql_script(&server, &sql);
    ask(&server, "SELECT 'end of the test workload'");
    // The collector writes asynchronously: wait until the last statement is in every file.
    let files = ["digest.log", "digest.csv", "digest.json"].map(|f| dir.join(f));
    let t = std::time::Instant::now();
    while !files
        .iter()
        .all(|f| std::fs::read_to_string(f).is_ok_and(|t| t.contains("end of the test workload")))
    {
        assert!(
            t.elapsed().as_secs() < 60,
            "the logs in {} lack the last statement",
            dir.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let pgss = pg_stat_statements_calls(&server);
    for (file, format) in files
        .iter()
        .zip(["postgres-stderr", "postgres-csv", "postgres-json"])
    {
        let f = file.to_str().expect("utf-8 path");
        parallel_digest_is_the_same(&s, f, &[]);
        let r = s.ok(&["digest", f, "--format=json", "--limit=0"]);
        let doc = r.json();
        assert_eq!(doc["files"][0]["format"], format);
        assert_eq!(doc["malformed"]["count"], 0, "{format}: {}", r.stderr);
        for (fp, per_event) in [
            ("select c from sbtest? where id=?", 10),
            ("select c from sbtest? where id between ? and ?", 1),
            ("select sum(k) from sbtest? where id between ? and ?", 1),
            (
                "select c from sbtest? where id between ? and ? order by c",
                1,
            ),
            (
                "select distinct c from sbtest? where id between ? and ? order by c",
                1,
            ),
            ("update sbtest? set k=k? where id=?", 1),
            ("update sbtest? set c=? where id=?", 1),
            ("delete from sbtest? where id=?", 1),
        ] {
            assert_eq!(
                count_of(&doc, fp),
                per_event * events,
                "{format} class {fp}:\n{}",
                r.stdout
            );
        }
        for (fp, _) in pg_hand_written() {
            assert_eq!(
                count_of(&doc, fp),
                n as u64,
                "{format} class {fp}:\n{}",
                r.stdout
            );
        }
        assert_eq!(
            count_of(&doc, "select b from digest_t where a = ?"),
            m as u64,
            "{format}:\n{}",
            r.stdout
        );
        assert_eq!(
            count_of(&doc, "select abalance from pgbench_accounts where aid = ?"),
            clients * tx,
            "{format}:\n{}",
            r.stdout
        );
        assert_eq!(
            count_of(&doc, "select * from digest_nope"),
            0,
            "{format}:\n{}",
            r.stdout
        );
        // Users and databases come from the prefix or the columns.
        let c = doc["classes"]
            .as_array()
            .expect("classes")
            .iter()
            .find(|c| c["key"] == "select b from digest_t where a = ?")
            .expect("the pairs' class");
        assert!(c.to_string().contains("\"postgres\""), "{format}: {c}");
        // pgbench -M prepared: the worst sample's bind parameter, and the
        // EXPLAIN with its value.
        let c = doc["classes"]
            .as_array()
            .expect("classes")
            .iter()
            .find(|c| c["key"] == "select abalance from pgbench_accounts where aid = ?")
            .expect("pgbench's select");
        let params = c["sample"]["params"].as_str().unwrap_or_default();
        let value = params.strip_prefix("$1 = ").unwrap_or_default();
        assert!(
            value.len() > 2 && value.starts_with('\'') && value.ends_with('\''),
            "{format}: {c}"
        );
        assert_eq!(
            c["sample"]["explain"],
            format!("EXPLAIN SELECT abalance FROM pgbench_accounts WHERE aid = {value}"),
            "{format}"
        );
        // pg_stat_statements counted the same calls for every class the
        // test ran.
        let mut ran: Vec<&str> = vec![
            "select c from sbtest? where id=?",
            "select c from sbtest? where id between ? and ?",
            "select sum(k) from sbtest? where id between ? and ?",
            "select c from sbtest? where id between ? and ? order by c",
            "select distinct c from sbtest? where id between ? and ? order by c",
            "update sbtest? set k=k? where id=?",
            "update sbtest? set c=? where id=?",
            "delete from sbtest? where id=?",
            "select b from digest_t where a = ?",
            "select abalance from pgbench_accounts where aid = ?",
        ];
        let hand = pg_hand_written();
        ran.extend(hand.iter().map(|(fp, _)| *fp));
        for fp in ran {
            // pg_stat_statements writes the 1 of k=k+1 as a placeholder too.
            let theirs = match fp {
                "update sbtest? set k=k? where id=?" => "update sbtest? set k=k?? where id=?",
                fp => fp,
            };
            assert_eq!(
                Some(count_of(&doc, fp)),
                pgss.get(theirs).copied(),
                "{format} class {fp}: pg_stat_statements has {pgss:?}"
            );
        }
    }
}

/// A digest's JSON as two runs of one log must agree on it: its floats to
/// 9 significant digits (sums made in another order differ in their last
/// bits), its classes in key order without their rank, not the time taken.
fn comparable(doc: &Value) -> Value {
    fn norm(v: &mut Value) {
        match v {
            Value::Number(n) if n.is_f64() => {
                *v = Value::String(format!("{:.8e}", n.as_f64().unwrap_or(0.0)));
            }
            Value::Array(a) => a.iter_mut().for_each(norm),
            Value::Object(o) => o.values_mut().for_each(norm),
            _ => {}
        }
    }
    let mut v = doc.clone();
    v["elapsed_s"] = Value::Null;
    if let Some(c) = v["classes"].as_array_mut() {
        c.sort_by_key(|c| c["key"].to_string());
        for c in c.iter_mut() {
            c["rank"] = Value::Null;
        }
    }
    norm(&mut v);
    v
}

/// A log read by 3 threads in chunks of a few bytes (every entry a cut
/// somewhere: PostgreSQL's pairs, DETAIL lines and statements over several
/// lines fall across chunks; a general log's statements far from their
/// thread's Connect and Init DB) gives the digest of one thread reading it
/// in 1 MiB chunks.
fn parallel_digest_is_the_same(s: &Scratch, log: &str, extra: &[&str]) {
    // A copy: the server may still append to its log (autovacuum, the
    // checkpointer) between two digests of the live file.
    let name = std::path::Path::new(log)
        .file_name()
        .expect("a log file name")
        .to_string_lossy()
        .into_owned();
    let dir = s.path(&format!("snapshot-{}", log.len() + extra.len()));
    std::fs::create_dir_all(&dir).expect("snapshot dir");
    let copy = dir.join(&name);
    std::fs::copy(log, &copy).expect("copy the log");
    let log = copy.to_string_lossy().into_owned();
    let log = log.as_str();
    let args = [&["digest", log, "--format=json", "--limit=0"][..], extra].concat();
    let one = s.ok(&[&args[..], &["--threads=1"]].concat()).json();
    assert!(
        one["global"]["query_count"].as_u64().unwrap_or(0) > 100,
        "{one}"
    );
    for chunk in ["1", "700", "16384"] {
        let mut c = s.cmd(&[&args[..], &["--threads=3"]].concat());
        c.env("DBMETER_DIGEST_CHUNK", chunk);
        let r = s.output(c);
        assert_eq!(r.code, 0, "chunks of {chunk}: {}", r.stderr);
        assert_eq!(
            comparable(&r.json()),
            comparable(&one),
            "{log}: 3 threads, chunks of {chunk} bytes"
        );
    }
}

/// pg_stat_statements' calls, summed by the fingerprint of its statements.
fn pg_stat_statements_calls(server: &Server) -> BTreeMap<String, u64> {
    ask(server, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
    // Hex, so that statements over several lines stay one row each.
    let rows = ask(
        server,
        "SELECT calls || ' ' || encode(convert_to(query, 'UTF8'), 'hex') FROM pg_stat_statements",
    );
    let mut out = BTreeMap::new();
    for row in rows.lines() {
        let (calls, hex) = row.split_once(' ').expect("calls and query");
        let query: Vec<u8> = (0..hex.len() / 2)
            .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).expect("hex"))
            .collect();
        let query = String::from_utf8_lossy(&query);
        let query = query.trim_end().trim_end_matches(';');
        let fp = String::from_utf8_lossy(&dbmeter_digest::fingerprint::pg_fingerprint_bytes(
            query.as_bytes(),
        ))
        .into_owned();
        *out.entry(fp).or_insert(0) += calls.parse::<u64>().expect("calls");
    }
    out
}

#[test]
fn postgres_log_statement_and_log_duration_pairs_with_the_extended_protocol() {
    let s = Scratch::new();
    let Some(server) = start_with(
        Flavor::Postgres,
        &[
            ("logging_collector", "on"),
            ("log_destination", "stderr"),
            ("log_directory", "digest-log"),
            ("log_filename", "pairs.log"),
            ("log_statement", "all"),
            ("log_duration", "on"),
            ("log_connections", "on"),
            ("log_disconnections", "on"),
        ],
    ) else {
        return;
    };
    let log = server.datadir().join("digest-log").join("pairs.log");
    let db = format!("--db={}", server.url());
    s.ok(&[
        "prepare",
        "oltp_read_write",
        &db,
        "--tables=1",
        "--table-size=200",
    ]);
    let events = 20u64;
    s.ok(&[
        "run",
        "oltp_read_write",
        &db,
        "--tables=1",
        "--table-size=200",
        "--threads=2",
        "--time=0",
        &format!("--events={events}"),
    ]);
    ask(&server, "SELECT 'end of the test workload'");
    let t = std::time::Instant::now();
    while !std::fs::read_to_string(&log).is_ok_and(|t| t.contains("end of the test workload")) {
        assert!(
            t.elapsed().as_secs() < 60,
            "{} lacks the last statement",
            log.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let f = log.to_str().expect("utf-8 path");
    parallel_digest_is_the_same(&s, f, &["--log-line-prefix=%m [%p] "]);
    let r = s.ok(&[
        "digest",
        f,
        "--format=json",
        "--limit=0",
        "--log-line-prefix=%m [%p] ",
    ]);
    let doc = r.json();
    assert_eq!(doc["files"][0]["format"], "postgres-stderr");
    assert_eq!(doc["malformed"]["count"], 0, "{}", r.stderr);
    // Two threads may collide on the delete and insert of one id: the
    // event is rolled back and run again, every statement of it logged.
    let begins = count_of(&doc, "begin");
    assert!(begins >= events, "{}", r.stdout);
    assert_eq!(count_of(&doc, "commit"), events, "{}", r.stdout);
    // The reads come before any write, so every try runs them all.
    for (fp, per_event) in [
        ("select c from sbtest? where id=?", 10),
        ("select c from sbtest? where id between ? and ?", 1),
    ] {
        assert_eq!(
            count_of(&doc, fp),
            per_event * begins,
            "class {fp}:\n{}",
            r.stdout
        );
    }
    // A write that collides ends its try (those after it do not run):
    // each write ran once per committed event, and at most once per try.
    for fp in [
        "update sbtest? set c=? where id=?",
        "delete from sbtest? where id=?",
        "insert into sbtest? (id, k, c, pad) values(?+)",
    ] {
        let n = count_of(&doc, fp);
        assert!(
            (events..=begins).contains(&n),
            "class {fp}: {n} outside {events}..={begins}:\n{}",
            r.stdout
        );
    }
    // Every statement got its duration (parse and bind ones added to it).
    let c = doc["classes"]
        .as_array()
        .expect("classes")
        .iter()
        .find(|c| c["key"] == "select c from sbtest? where id=?")
        .expect("the point selects");
    assert_eq!(
        c["attributes"]["Query_time"]["numbers"]["count"],
        10 * begins,
        "{c}"
    );
    // A wrong prefix: every line counted as unreadable, never fatal.
    let r = s.ok(&["digest", f, "--format=json", "--log-line-prefix=%t <%p> "]);
    let doc = r.json();
    assert!(
        doc["malformed"]["count"].as_u64().unwrap_or(0) > 100,
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("line 1: no log_line_prefix '%t <%p> '"),
        "{}",
        r.stderr
    );
}

#[test]
fn progress_shows_on_a_terminal_only() {
    use std::io::Read;
    use std::process::{Command, Stdio};
    use std::sync::{Arc, Mutex};
    let s = Scratch::new();
    let event = |i: usize| {
        format!(
            "# User@Host: app[app] @ localhost []\n# Query_time: 0.000100  Lock_time: 0.000001  \
             Rows_sent: 1  Rows_examined: 1\nSET timestamp=1795775498;\nSELECT c FROM t WHERE id = {i};\n"
        )
    };
    let part = |from: usize, to: usize| -> String { (from..to).map(event).collect() };
    let (half, all) = (20_000, 30_000);
    // The log comes through a pipe the test writes: the first part, then,
    // once the terminal shows the bytes read, the rest (so that the line is
    // seen whatever the machine's speed).
    let fifo = s.path("slow.fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    let mut child = Command::new("script")
        .args([
            "-qec",
            &format!(
                "{} digest {} --format=json --output=out.json",
                bin(),
                fifo.display()
            ),
            "/dev/null",
        ])
        .current_dir(s.dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("script (util-linux)");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut stdout = child.stdout.take().expect("script's output");
    let reader = {
        let seen = seen.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stdout.read(&mut buf) {
                if n == 0 {
                    break;
                }
                seen.lock().expect("output").extend_from_slice(&buf[..n]);
            }
        })
    };
    let mut w = std::fs::OpenOptions::new()
        .write(true)
        .open(&fifo)
        .expect("open the pipe");
    w.write_all(part(0, half).as_bytes()).expect("write");
    let t = std::time::Instant::now();
    let shown = |seen: &Mutex<Vec<u8>>| {
        let out = String::from_utf8_lossy(&seen.lock().expect("output")).into_owned();
        out.contains(" read, ") && out.contains("/s")
    };
    while !shown(&seen) {
        assert!(
            t.elapsed().as_secs() < 120,
            "no progress line: {:?}",
            String::from_utf8_lossy(&seen.lock().expect("output"))
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    w.write_all(part(half, all).as_bytes()).expect("write");
    drop(w);
    let status = child.wait().expect("script");
    reader.join().expect("reader");
    let out = String::from_utf8_lossy(&seen.lock().expect("output")).into_owned();
    assert!(status.success(), "{out}");
    assert!(out.contains("digest: "), "{out:?}");
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(s.path("out.json")).expect("out.json"))
            .expect("JSON");
    assert_eq!(doc["global"]["query_count"], all as u64);

    // Not on a terminal: nothing of it.
    let log = s.path("slow.log");
    std::fs::write(&log, part(0, 100)).expect("write the log");
    let r = s.ok(&["digest", log.to_str().expect("utf-8 path"), "--format=json"]);
    assert!(!r.stderr.contains(" read, "), "{}", r.stderr);
    assert!(!r.stderr.contains('\x1b'), "{:?}", r.stderr);
}
