//! `dbmeter compare-queries`: the same table with and without an index on
//! two databases. The side without the index reads every row: its
//! Handler_read_rnd_next and Rows_read (MariaDB) or its buffers
//! (PostgreSQL) are orders of magnitude above the other side's, cold and
//! warm; a filter keeps only what it names; a saved result is filtered
//! again without servers. Bad input gives one line. The assertions are on
//! counters, rows and checksums, never on times.

use crate::common::*;
use dbmeter_server::Flavor;
use dbmeter_testkit::servers::{ask, start};
use serde_json::Value;
use std::process::Command;

/// Rows of the test table: enough that a full scan reads orders of
/// magnitude more than an index lookup.
const ROWS: u64 = 100_000;

/// The query both sides run: 20 rows match.
const LOOKUP: &str = "SELECT count(*), min(v) FROM t WHERE k = 42";
/// A primary-key lookup: the same work on both sides.
const SAME: &str = "SELECT v FROM t WHERE id = 77";

/// The temperature `temp` of query `id` of a JSON result.
fn temp<'a>(doc: &'a Value, id: &str, temp: &str) -> &'a Value {
    doc["queries"]
        .as_array()
        .and_then(|qs| qs.iter().find(|q| q["id"] == id))
        .and_then(|q| q["temperatures"].as_array())
        .and_then(|ts| ts.iter().find(|t| t["temperature"] == temp))
        .unwrap_or_else(|| panic!("no {id} {temp} in {doc:#}"))
}

fn counter(t: &Value, side: &str, name: &str) -> f64 {
    t[side]["counters"][name]
        .as_f64()
        .unwrap_or_else(|| panic!("no counter {name} on {side}: {t:#}"))
}

fn kept(doc: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for q in doc["queries"].as_array().into_iter().flatten() {
        for t in q["temperatures"].as_array().into_iter().flatten() {
            if t["kept"] == true {
                out.push(format!(
                    "{} {}",
                    q["id"].as_str().unwrap_or("?"),
                    t["temperature"].as_str().unwrap_or("?")
                ));
            }
        }
    }
    out
}

/// The same result on both sides: rows and checksum.
fn same_result(t: &Value) {
    assert_eq!(t["a"]["rows"], t["b"]["rows"], "{t:#}");
    assert_eq!(t["a"]["checksum"], t["b"]["checksum"], "{t:#}");
    assert!(
        t["a"]["error"].is_null() && t["b"]["error"].is_null(),
        "{t:#}"
    );
}

#[test]
fn mariadb_without_an_index_reads_every_row_cold_and_warm() {
    let Some(server) = start(Flavor::MariaDb) else {
        return;
    };
    let make = |db: &str, index: bool| {
        ask(
            &server,
            &format!(
                "CREATE DATABASE {db}; \
                 CREATE TABLE {db}.t (id INT PRIMARY KEY AUTO_INCREMENT, k INT, v VARCHAR(20)) ENGINE=InnoDB; \
                 INSERT INTO {db}.t (k, v) SELECT seq % 5000, CONCAT('v', seq) FROM seq_1_to_{ROWS}; {}",
                if index {
                    format!("ALTER TABLE {db}.t ADD INDEX (k);")
                } else {
                    String::new()
                }
            ),
        );
    };
    make("noidx", false);
    make("idx", true);
    let a = format!("--db=mysql://root@127.0.0.1:{}/noidx", server.port());
    let b = format!("--db=mysql://root@127.0.0.1:{}/idx", server.port());
    let s = Scratch::new();
    let counters_only =
        "--where=Counters_ratio > 1.2 or Rows_differ or Checksum_differ or Errors_differ";
    let r = s.ok_home(&[
        "compare-queries",
        &a,
        &b,
        &format!("--query={LOOKUP}"),
        &format!("--query={SAME}"),
        "--runs=3",
        "--format=json",
        "--save=saved.json",
        counters_only,
    ]);
    let doc = r.json();
    // Not a managed server: the cold run is the first execution, said so.
    for side in doc["sides"].as_array().expect("sides") {
        assert_eq!(side["cold"], "first", "{side:#}");
        assert!(
            side["cold_note"]
                .as_str()
                .is_some_and(|n| n.contains("first execution, not cold")),
            "{side:#}"
        );
        assert_eq!(side["kind"], "mysql");
    }
    for t in ["cold", "warm"] {
        let q = temp(&doc, "Q1", t);
        same_result(q);
        assert_eq!(q["a"]["rows"], 1);
        // A scans the table, B reads the 20 rows through the index.
        let scan_a = counter(q, "a", "Handler_read_rnd_next");
        let scan_b = counter(q, "b", "Handler_read_rnd_next");
        assert!(scan_a >= ROWS as f64, "{t}: {q:#}");
        assert!(scan_b < 100.0, "{t}: {q:#}");
        assert!(counter(q, "b", "Handler_read_next") >= 20.0, "{t}: {q:#}");
        // MariaDB counts the rows a session read; MySQL (and MariaDB
        // before 10.6) the server's InnoDB rows.
        let rows_read = ["Rows_read", "Innodb_rows_read"]
            .into_iter()
            .find(|n| q["a"]["counters"].get(n).is_some())
            .unwrap_or_else(|| panic!("no rows-read counter: {q:#}"));
        assert!(counter(q, "a", rows_read) >= ROWS as f64, "{q:#}");
        assert!(counter(q, "b", rows_read) <= 100.0, "{q:#}");
        assert_eq!(
            q["a"]["times_s"].as_array().map(Vec::len),
            Some(if t == "cold" { 1 } else { 3 })
        );
        // The primary-key lookup is the same work on both sides.
        let same = temp(&doc, "Q2", t);
        same_result(same);
        assert_eq!(
            counter(same, "a", "Handler_read_key"),
            counter(same, "b", "Handler_read_key"),
            "{same:#}"
        );
    }
    assert_eq!(kept(&doc), ["Q1 cold", "Q1 warm"], "{doc:#}");
    scan_is_slower(&doc);

    // The text report: the summary of both, the details of Q1 only.
    let text = s
        .ok(&["compare-queries", "--from=saved.json", counters_only])
        .stdout;
    assert!(text.contains("first execution, not cold"), "{text}");
    assert!(text.contains("\nQ1  SELECT count(*)"), "{text}");
    assert!(!text.contains("\nQ2  SELECT"), "{text}");
    let detail = text.split("\nQ1  ").nth(1).unwrap_or("");
    assert!(detail.contains("Handler_read_rnd_next"), "{text}");
    assert!(detail.contains("100001"), "{text}");

    // A filter keeps only what it names, on the saved result.
    let warm = s.ok(&[
        "compare-queries",
        "--from=saved.json",
        "--where=Temperature = warm and Handler_read_rnd_next_ratio > 1000 and Slower != nobody",
        "--format=json",
    ]);
    assert_eq!(kept(&warm.json()), ["Q1 warm"], "{}", warm.stdout);
    let q2 = s.ok(&[
        "compare-queries",
        "--from=saved.json",
        "--where=Id = Q2 and Handler_read_key_delta = 0",
        "--format=json",
    ]);
    assert_eq!(kept(&q2.json()), ["Q2 cold", "Q2 warm"], "{}", q2.stdout);
    let none = s.ok(&[
        "compare-queries",
        "--from=saved.json",
        "--where=Rows_differ or Error",
        "--format=json",
    ]);
    assert!(kept(&none.json()).is_empty(), "{}", none.stdout);
}

/// MariaDB against PostgreSQL: the same rows give the same checksum;
/// warnings (MariaDB's SHOW WARNINGS, PostgreSQL's notices) and errors are
/// each side's; a filter picks the queries that fail on one side only.
#[test]
fn mariadb_against_postgres_results_warnings_and_errors() {
    let Some(maria) = start(Flavor::MariaDb) else {
        return;
    };
    let Some(pg) = start(Flavor::Postgres) else {
        return;
    };
    ask(
        &maria,
        "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10)); INSERT INTO t VALUES (1, 'x'), (2, 'y'), (3, NULL)",
    );
    ask(
        &pg,
        "CREATE TABLE t (id int PRIMARY KEY, v varchar(10)); INSERT INTO t VALUES (1, 'x'), (2, 'y'), (3, NULL)",
    );
    let s = Scratch::new();
    let r = s.ok_home(&[
        "compare-queries",
        &format!("--db=mysql://root@127.0.0.1:{}/test", maria.port()),
        &format!("--db=postgres://postgres@127.0.0.1:{}/test", pg.port()),
        "--query=SELECT id, v FROM t",
        "--query=SELECT id, v FROM t ORDER BY id DESC",
        "--query=SELECT 1/0",
        "--query=DO $$ BEGIN RAISE WARNING 'careful'; END $$",
        "--runs=2",
        "--where=Errors_differ and Temperature = warm",
        "--format=json",
    ]);
    let doc = r.json();
    assert_eq!(doc["sides"][1]["kind"], "postgres");
    for t in ["cold", "warm"] {
        same_result(temp(&doc, "Q1", t));
        same_result(temp(&doc, "Q2", t));
        assert_ne!(
            temp(&doc, "Q1", t)["a"]["checksum"],
            temp(&doc, "Q2", t)["a"]["checksum"],
            "ORDER BY makes the order count"
        );
        let div = temp(&doc, "Q3", t);
        assert!(div["a"]["error"].is_null(), "{div:#}");
        assert!(
            div["a"]["warnings"][0]
                .as_str()
                .is_some_and(|w| w.contains("1365") && w.contains("Division by 0")),
            "{div:#}"
        );
        assert!(
            div["b"]["error"]
                .as_str()
                .is_some_and(|e| e.contains("division by zero")),
            "{div:#}"
        );
        assert!(
            div["b"]["warnings"].as_array().is_some_and(Vec::is_empty),
            "{div:#}"
        );
        // Side B's buffers, side A's handler counters.
        let q1 = temp(&doc, "Q1", t);
        assert!(
            q1["b"]["counters"].get("Shared_hit_blocks").is_some(),
            "{q1:#}"
        );
        assert!(
            q1["a"]["counters"].get("Handler_read_rnd_next").is_some(),
            "{q1:#}"
        );
    }
    // PostgreSQL's warnings are its notices; MariaDB has no DO blocks.
    for t in ["cold", "warm"] {
        let warn = temp(&doc, "Q4", t);
        assert_eq!(
            warn["b"]["warnings"],
            serde_json::json!(["WARNING 01000: careful"]),
            "{warn:#}"
        );
        assert!(warn["a"]["error"].is_string(), "{warn:#}");
    }
    assert_eq!(kept(&doc), ["Q3 warm", "Q4 warm"], "{doc:#}");
}

/// The warm median of the scan (A) is above the index lookup's (B): they
/// differ some hundred times, so a loaded machine does not turn them
/// around (times are otherwise not asserted).
fn scan_is_slower(doc: &Value) {
    let w = temp(doc, "Q1", "warm");
    let (a, b) = (w["a"]["time_s"].as_f64(), w["b"]["time_s"].as_f64());
    assert!(matches!((a, b), (Some(a), Some(b)) if a > b), "{w:#}");
}

/// psql on a managed server's port.
fn psql(port: &str, db: &str, sql: &str) {
    let out = Command::new("psql")
        .args([
            "-X",
            "-q",
            "-v",
            "ON_ERROR_STOP=1",
            "-h",
            "127.0.0.1",
            "-p",
            port,
        ])
        .args(["-U", "postgres", "-d", db, "-c", sql])
        .output()
        .expect("run psql");
    assert!(
        out.status.success(),
        "{sql}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn postgres_without_an_index_reads_more_buffers_on_a_restarted_managed_server() {
    use std::os::unix::fs::PermissionsExt;
    if !dbmeter_testkit::servers::can_run(Flavor::Postgres) {
        return;
    }
    let s = Scratch::new();
    // The server user must reach the data directory inside.
    std::fs::set_permissions(s.dir.path(), std::fs::Permissions::from_mode(0o755))
        .expect("chmod scratch");
    let url = s
        .ok_home(&["server", "start", "postgres", "--name=cq"])
        .stdout
        .trim()
        .to_string();
    let port = url
        .rsplit(':')
        .next()
        .and_then(|p| p.split('/').next())
        .expect("port in the URL")
        .to_string();
    psql(&port, "test", "CREATE DATABASE noidx");
    psql(&port, "test", "CREATE DATABASE idx");
    for (db, index) in [("noidx", false), ("idx", true)] {
        psql(
            &port,
            db,
            &format!(
                "CREATE TABLE t (id serial PRIMARY KEY, k int, v text); \
                 INSERT INTO t (k, v) SELECT g % 5000, 'v' || g FROM generate_series(1, {ROWS}) g; {} \
                 ANALYZE t;",
                if index { "CREATE INDEX ON t (k);" } else { "" }
            ),
        );
    }
    let base = url.trim_end_matches("/test");
    let r = s.ok_home(&[
        "compare-queries",
        &format!("--db={base}/noidx"),
        &format!("--db={base}/idx"),
        &format!("--query={LOOKUP}"),
        "--runs=2",
        "--keep-page-cache",
        "--format=json",
    ]);
    let doc = r.json();
    for side in doc["sides"].as_array().expect("sides") {
        assert_eq!(side["cold"], "restart", "{side:#}");
        assert!(
            side["cold_note"]
                .as_str()
                .is_some_and(|n| n.contains("managed server 'cq' restarted")),
            "{side:#}"
        );
    }
    let blocks = |t: &Value, side: &str| {
        counter(t, side, "Shared_hit_blocks") + counter(t, side, "Shared_read_blocks")
    };
    for t in ["cold", "warm"] {
        let q = temp(&doc, "Q1", t);
        same_result(q);
        // The scan touches the whole table (about 540 pages), the index
        // lookup a few dozen.
        assert!(blocks(q, "a") >= 300.0, "{t}: {q:#}");
        assert!(blocks(q, "a") > 5.0 * blocks(q, "b"), "{t}: {q:#}");
        assert!(counter(q, "a", "Explain_execution_time") > 0.0, "{q:#}");
        assert_eq!(q["kept"], true, "{q:#}");
    }
    scan_is_slower(&doc);
    // Just restarted: the scan reads its pages into shared buffers; warm,
    // it finds them there.
    let cold = temp(&doc, "Q1", "cold");
    assert!(
        counter(cold, "a", "Shared_read_blocks") >= 300.0,
        "{cold:#}"
    );
    let warm = temp(&doc, "Q1", "warm");
    assert!(counter(warm, "a", "Shared_hit_blocks") >= 300.0, "{warm:#}");
    // The server runs on after its restarts.
    let st = s.ok_home(&["server", "status", "cq"]);
    assert!(st.stdout.contains("cq: running"), "{}", st.stdout);
    s.ok_home(&["server", "stop", "cq", "--remove"]);
}

/// Two SQLite files: one with an index and an extra row. Results in other
/// orders have the same checksum; the extra row shows; --dir and --file.
#[test]
fn sqlite_pair_compares_results_and_filters() {
    let s = Scratch::new();
    for (file, extra) in [("a.sqlite", false), ("b.sqlite", true)] {
        let c = s.db(file);
        c.execute_batch(
            "CREATE TABLE t (id INTEGER PRIMARY KEY, k INT, v TEXT);
             WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < 20000)
             INSERT INTO t (k, v) SELECT i % 500, 'v' || i FROM g;",
        )
        .expect("make table");
        if extra {
            c.execute_batch("CREATE INDEX t_k ON t (k); INSERT INTO t (k, v) VALUES (7, 'extra');")
                .expect("index");
        }
    }
    std::fs::create_dir(s.path("q")).expect("mkdir");
    std::fs::write(
        s.path("q/1.sql"),
        "-- rows in rowid order on A, in index order on B\nSELECT k FROM t WHERE k < 3;\n\
         SELECT k FROM t WHERE k < 3 ORDER BY k, id;",
    )
    .expect("write");
    std::fs::write(
        s.path("q/2.sql"),
        "SELECT v FROM t WHERE k = 7; SELECT 'a;b' AS x",
    )
    .expect("write");
    let r = s.ok(&[
        "compare-queries",
        "--db=sqlite:a.sqlite",
        "--db=sqlite:b.sqlite",
        "--dir=q",
        "--runs=1",
        "--keep-page-cache",
        "--where=Rows_differ",
        "--format=json",
        "--save=s.json",
        "--store=r.db",
    ]);
    assert!(
        r.stderr.contains("stored as runs 1 (A) and 2 (B) in r.db"),
        "{}",
        r.stderr
    );
    let doc = r.json();
    assert_eq!(doc["queries"].as_array().map(Vec::len), Some(4), "{doc:#}");
    for side in doc["sides"].as_array().expect("sides") {
        assert_eq!(side["cold"], "reopen");
    }
    for t in ["cold", "warm"] {
        same_result(temp(&doc, "Q1", t));
        same_result(temp(&doc, "Q2", t));
        same_result(temp(&doc, "Q4", t));
        let q = temp(&doc, "Q3", t);
        assert_eq!(
            (q["a"]["rows"].as_u64(), q["b"]["rows"].as_u64()),
            (Some(40), Some(41))
        );
        // A scans the table; B looks k up in its index.
        assert!(counter(q, "a", "Sqlite_fullscan_step") >= 19_999.0, "{q:#}");
        assert_eq!(counter(q, "b", "Sqlite_fullscan_step"), 0.0, "{q:#}");
        assert!(
            counter(q, "a", "Sqlite_vm_step") > 10.0 * counter(q, "b", "Sqlite_vm_step"),
            "{q:#}"
        );
    }
    assert_eq!(kept(&doc), ["Q3 cold", "Q3 warm"]);
    assert!(
        doc["queries"][2]["origin"]
            .as_str()
            .is_some_and(|o| o.contains("2.sql statement 1")),
        "{doc:#}"
    );
    // In the store, each query's time at each temperature is a figure
    // that compare reads.
    let cmp = s.ok(&[
        "compare",
        "--baseline=run:1",
        "--candidate=run:2",
        "--store=r.db",
        "--format=csv",
    ]);
    for q in 1..=4 {
        for t in ["cold", "warm"] {
            assert!(
                cmp.stdout.contains(&format!("compare-queries Q{q} {t}")),
                "{}",
                cmp.stdout
            );
        }
    }
    // The HTML page: self-contained, the kept query's details.
    s.ok(&[
        "compare-queries",
        "--from=s.json",
        "--where=Rows_differ",
        "--format=html",
        "--output=c.html",
    ]);
    let html = std::fs::read_to_string(s.path("c.html")).expect("html");
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
    assert!(
        html.contains("<h2 id=\"Q3\">Q3</h2>") && !html.contains("<h2 id=\"Q1\">"),
        "{html}"
    );
    assert!(
        !html.contains("<script") && !html.contains("src="),
        "{html}"
    );
    // A file of statements, --query too.
    std::fs::write(s.path("f.sql"), "SELECT count(*) FROM t;\n").expect("write");
    let r = s.ok(&[
        "compare-queries",
        "--db=sqlite:a.sqlite",
        "--db=sqlite:b.sqlite",
        "--file=f.sql",
        "--query=SELECT 1",
        "--runs=0",
        "--keep-page-cache",
        "--where=Checksum_differ",
    ]);
    assert!(r.stdout.contains("Q1    cold"), "{}", r.stdout);
    assert!(
        r.stdout.contains("\nQ1  SELECT count(*) FROM t"),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("warm"), "{}", r.stdout);
    // A slow log: one query per class, its worst sample, the heaviest
    // class first; the UPDATE's class is left out and counted.
    std::fs::write(s.path("slow.log"), SLOW_LOG).expect("write");
    let r = s.ok(&[
        "compare-queries",
        "--db=sqlite:a.sqlite",
        "--db=sqlite:b.sqlite",
        "slow.log",
        "--runs=1",
        "--keep-page-cache",
        "--format=json",
    ]);
    let doc = r.json();
    let sql: Vec<&str> = doc["queries"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|q| q["sql"].as_str())
        .collect();
    assert_eq!(
        sql,
        [
            "SELECT count(*) FROM t WHERE k = 2",
            "SELECT v FROM t WHERE id = 3"
        ],
        "{doc:#}"
    );
    assert!(
        doc["queries"][0]["origin"]
            .as_str()
            .is_some_and(|o| o.contains("worst of 2")),
        "{doc:#}"
    );
    assert!(
        doc["notes"][0]
            .as_str()
            .is_some_and(|n| n.starts_with("1 class(es) of the log that do not only read")),
        "{doc:#}"
    );
    let k2 = temp(&doc, "Q1", "warm");
    same_result(k2);
    assert_eq!(k2["a"]["rows"], 1, "{k2:#}");
}

/// A MariaDB slow log: two classes that read (one twice, its second
/// sample the slower), and an UPDATE.
const SLOW_LOG: &str = "\
/usr/sbin/mariadbd, Version: 10.11.19-MariaDB-0+deb12u1-log (Debian 12). started with:
Tcp port: 3306  Unix socket: /run/mysqld/mysqld.sock
Time\t\t    Id Command\tArgument
# Time: 261127 10:00:00
# User@Host: root[root] @ localhost []
# Thread_id: 5  Schema: test  QC_hit: No
# Query_time: 0.500000  Lock_time: 0.000100  Rows_sent: 1  Rows_examined: 20000
SET timestamp=1795773600;
SELECT count(*) FROM t WHERE k = 1;
# User@Host: root[root] @ localhost []
# Thread_id: 5  Schema: test  QC_hit: No
# Query_time: 0.900000  Lock_time: 0.000100  Rows_sent: 1  Rows_examined: 20000
SET timestamp=1795773601;
SELECT count(*) FROM t WHERE k = 2;
# User@Host: root[root] @ localhost []
# Thread_id: 5  Schema: test  QC_hit: No
# Query_time: 0.100000  Lock_time: 0.000100  Rows_sent: 0  Rows_examined: 1
SET timestamp=1795773602;
UPDATE t SET v = 'x' WHERE id = 1;
# User@Host: root[root] @ localhost []
# Thread_id: 5  Schema: test  QC_hit: No
# Query_time: 0.200000  Lock_time: 0.000100  Rows_sent: 1  Rows_examined: 1
SET timestamp=1795773603;
SELECT v FROM t WHERE id = 3;
";

/// One line on standard error, exit 1 (2 for usage), no panic.
fn one_line(r: &Run, code: i32, says: &str) {
    assert_eq!(r.code, code, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.stderr.trim_end().lines().count(), 1, "{}", r.stderr);
    assert!(r.stderr.contains(says), "{}", r.stderr);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
}

#[test]
fn bad_input_is_one_line() {
    let s = Scratch::new();
    s.db("a.sqlite")
        .execute_batch("CREATE TABLE t (a INT)")
        .expect("table");
    let a = "--db=sqlite:a.sqlite";
    // A second server that does not answer (port 1 is never listened on).
    for url in [
        "mysql://root:s3cret@127.0.0.1:1/test",
        "postgres://postgres:s3cret@127.0.0.1:1/test",
    ] {
        let r = s.run(&[
            "compare-queries",
            a,
            &format!("--db={url}"),
            "--query=SELECT 1",
        ]);
        one_line(&r, 1, "--db B: cannot connect to");
        assert!(!r.stderr.contains("s3cret"), "{}", r.stderr);
    }
    std::fs::write(s.path("bad.sql"), "SELECT 1;\nSELECT 'abc FROM t;\n").expect("write");
    let r = s.run(&["compare-queries", a, a, "--file=bad.sql"]);
    one_line(&r, 1, "bad.sql line 2: the ' opened here is not closed");
    std::fs::write(s.path("empty.sql"), "-- nothing\n").expect("write");
    let r = s.run(&["compare-queries", a, a, "--file=empty.sql"]);
    one_line(&r, 1, "empty.sql holds no SQL statements");
    let r = s.run(&[
        "compare-queries",
        a,
        "--db=sqlite:missing.sqlite",
        "--query=SELECT 1",
    ]);
    one_line(
        &r,
        1,
        "--db B: the SQLite file missing.sqlite does not exist",
    );
    let r = s.run(&[
        "compare-queries",
        a,
        a,
        "--query=SELECT 1",
        "--where=Execution_time >",
    ]);
    one_line(&r, 2, "--where: column 17: expected a value");
    let r = s.run(&["compare-queries", a, "--query=SELECT 1"]);
    one_line(&r, 2, "two targets");
    let r = s.run(&["compare-queries", a, a]);
    one_line(&r, 2, "which queries?");
    let r = s.run(&["compare-queries", "--from=bad.sql"]);
    one_line(&r, 1, "bad.sql is not a compare-queries result");
    let r = s.run(&["compare-queries", "--from=x.json", a]);
    one_line(&r, 2, "--from reports a saved result");
}
