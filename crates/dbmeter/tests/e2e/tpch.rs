//! The tpch benchmark end to end: prepare (into SQLite, MariaDB and
//! PostgreSQL, and as dbgen's files with update sets), check (row counts,
//! the official SF1 answers, two engines' answers against each other),
//! the power and throughput tests with the refresh functions, N runs per
//! query and their extraction, query timeouts, EXPLAIN, the SQL of a
//! stream, and bad inputs.

use crate::common::browser::{chromium, pixels_of, screenshot};
use crate::common::*;
use dbmeter_server::{Flavor, Server};
use dbmeter_testkit::servers::{ask, ask_n, start};

fn tpch(r: &Run) -> serde_json::Value {
    let doc = r.json();
    let t = doc["tpch"].clone();
    assert!(
        t.is_object(),
        "no tpch section:\n{}\n{}",
        r.stdout,
        r.stderr
    );
    t
}

fn queries(t: &serde_json::Value) -> Vec<serde_json::Value> {
    t["queries"].as_array().cloned().unwrap_or_default()
}

fn statuses(t: &serde_json::Value) -> Vec<(u64, String)> {
    queries(t)
        .iter()
        .map(|q| {
            (
                q["query"].as_u64().unwrap_or(0),
                q["status"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

fn lines(path: &std::path::Path) -> usize {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .count()
}

#[test]
fn sqlite_prepare_run_power_and_throughput() {
    let s = Scratch::new();
    let db = "--db=sqlite:h.sqlite";
    let r = s.ok(&["prepare", "tpch", db, "--scale-factor=0.01"]);
    assert!(r.stdout.contains("TPC-H SF 0.01 ready"), "{}", r.stdout);
    let c = s.db("h.sqlite");
    for (t, n) in [
        ("region", 5),
        ("nation", 25),
        ("supplier", 100),
        ("part", 2000),
        ("partsupp", 8000),
        ("customer", 1500),
        ("orders", 15000),
        ("lineitem", 60175),
    ] {
        assert_eq!(count(&c, &format!("SELECT COUNT(*) FROM {t}")), n, "{t}");
    }
    let r = s.ok(&["check", "tpch", db]);
    assert_eq!(r.stdout.matches("ok     ").count(), 8, "{}", r.stdout);

    // The power test: RF1, the 22 queries in stream 0's order, RF2.
    let r = s.ok(&["run", "tpch", db, "--validation", "--format=json"]);
    let t = tpch(&r);
    let st = statuses(&t);
    assert_eq!(st.len(), 22, "{t:#}");
    assert!(st.iter().all(|(_, s)| s == "ok"), "{st:?}");
    let order: Vec<u64> = st.iter().map(|x| x.0).collect();
    assert_eq!(
        order,
        [
            14, 2, 9, 20, 6, 17, 18, 8, 21, 13, 3, 22, 16, 4, 11, 15, 1, 10, 19, 5, 7, 12
        ]
    );
    let rf = t["refreshes"].as_array().cloned().unwrap_or_default();
    assert_eq!(rf.len(), 2, "{t:#}");
    assert!(
        rf.iter()
            .all(|x| x["status"] == "ok" && x["update_set"] == 1 && x["rows"] == 10)
    );
    assert!(
        t["metrics"]["power_at_size"].as_f64().unwrap_or(0.0) > 0.0,
        "{t:#}"
    );
    assert_eq!(r.json()["end"]["reason"], "work_done");
    // RF1 added 10 orders, RF2 removed 10: the count is back.
    assert_eq!(count(&c, "SELECT COUNT(*) FROM orders"), 15000);
    assert_eq!(count(&c, "SELECT next_update_set FROM tpch_state"), 2);
    // Every query's plan was captured.
    assert!(
        queries(&t)
            .iter()
            .all(|q| q["plan"].as_str().is_some_and(|p| !p.is_empty()))
    );

    // The throughput test: 2 streams and the refresh stream (sets 2, 3).
    let r = s.ok(&[
        "run",
        "tpch",
        db,
        "--test=throughput",
        "--streams=2",
        "--explain=off",
    ]);
    assert!(r.stdout.contains("Throughput@0.01:"), "{}", r.stdout);
    let r = s.ok(&[
        "run",
        "tpch",
        db,
        "--test=throughput",
        "--streams=2",
        "--explain=off",
        "--format=json",
    ]);
    let t = tpch(&r);
    assert_eq!(statuses(&t).len(), 44);
    let streams: std::collections::BTreeSet<u64> = queries(&t)
        .iter()
        .map(|q| q["stream"].as_u64().unwrap_or(0))
        .collect();
    assert_eq!(streams.into_iter().collect::<Vec<_>>(), [1, 2]);
    assert_eq!(t["refreshes"].as_array().map(Vec::len), Some(4));
    assert!(t["metrics"]["throughput_at_size"].as_f64().unwrap_or(0.0) > 0.0);
    assert_eq!(count(&c, "SELECT next_update_set FROM tpch_state"), 6);
    assert_eq!(count(&c, "SELECT COUNT(*) FROM orders"), 15000);

    // The full test: the power test, then the throughput test (sets 6, then
    // 7 and 8), and QphH@Size.
    let r = s.ok(&[
        "run",
        "tpch",
        db,
        "--test=full",
        "--streams=2",
        "--explain=off",
        "--format=json",
    ]);
    let t = tpch(&r);
    assert_eq!(t["test"], "full");
    assert_eq!(statuses(&t).len(), 66);
    let rf: Vec<(u64, u64)> = t["refreshes"]
        .as_array()
        .map(|v| {
            v.iter()
                .map(|x| {
                    (
                        x["stream"].as_u64().unwrap_or(9),
                        x["update_set"].as_u64().unwrap_or(0),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(rf.len(), 6, "{rf:?}");
    assert!(
        rf.contains(&(0, 6)) && rf.contains(&(3, 7)) && rf.contains(&(3, 8)),
        "{rf:?}"
    );
    let m = &t["metrics"];
    for k in [
        "power_at_size",
        "throughput_at_size",
        "qphh_at_size",
        "throughput_seconds",
    ] {
        assert!(m[k].as_f64().unwrap_or(0.0) > 0.0, "{k}: {m:#}");
    }
    let qphh = m["qphh_at_size"].as_f64().unwrap_or(0.0);
    let both = m["power_at_size"].as_f64().unwrap_or(0.0)
        * m["throughput_at_size"].as_f64().unwrap_or(0.0);
    assert!((qphh - both.sqrt()).abs() < 1e-6 * qphh, "{m:#}");
    assert_eq!(count(&c, "SELECT next_update_set FROM tpch_state"), 9);

    // DBT3's runs per query: three each, the fastest and the slowest.
    let r = s.ok(&[
        "run",
        "tpch",
        db,
        "--queries=1,6",
        "--runs=3",
        "--extract=min-max",
        "--refresh=off",
        "--warmup-runs=1",
        "--format=json",
    ]);
    let t = tpch(&r);
    for q in queries(&t) {
        assert_eq!(q["runs"].as_array().map(Vec::len), Some(3), "{q:#}");
        let (v, min, max) = (
            q["seconds"].as_f64().unwrap_or(-1.0),
            q["min_seconds"].as_f64().unwrap_or(-1.0),
            q["max_seconds"].as_f64().unwrap_or(-1.0),
        );
        assert!(v == min && min <= max && min > 0.0, "{q:#}");
    }
    let notes = t["metrics"]["notes"].to_string();
    assert!(notes.contains("2 of 22 queries"), "{notes}");
    assert_eq!(t["refreshes"].as_array().map(Vec::len), Some(0));
    // Best plan: runs until the fastest plan was seen twice.
    let r = s.ok(&[
        "run",
        "tpch",
        db,
        "--queries=6",
        "--extract=best-plan",
        "--best-plan-count=2",
        "--refresh=off",
        "--format=json",
    ]);
    let q = &queries(&tpch(&r))[0];
    assert_eq!(q["runs"].as_array().map(Vec::len), Some(2), "{q:#}");
    assert!(
        q["plan"].as_str().is_some_and(|p| p.contains("lineitem")),
        "{q:#}"
    );

    // Hooks around each measured run (none around the warm-up), kept with
    // their output; the run's OS and counter deltas beside them.
    let r = s.ok(&[
        "run",
        "tpch",
        db,
        "--queries=6",
        "--runs=2",
        "--warmup-runs=1",
        "--refresh=off",
        "--explain=off",
        "--query-hook-before=sh: echo before $DBMETER_QUERY run $DBMETER_RUN",
        "--query-hook-after=sql: SELECT 1",
        "--format=json",
    ]);
    let runs = queries(&tpch(&r))[0]["runs"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(runs.len(), 2);
    for (i, run) in runs.iter().enumerate() {
        let hooks = run["hooks"].as_array().cloned().unwrap_or_default();
        assert_eq!(hooks.len(), 2, "{run:#}");
        assert_eq!(hooks[0]["when"], "before_query");
        assert_eq!(hooks[0]["output"], format!("before Q6 run {}\n", i + 1));
        assert_eq!(hooks[1]["when"], "after_query");
        assert_eq!(hooks[1]["ok"], true, "{run:#}");
        assert!(run["os"]["user_pct"].is_number(), "{run:#}");
    }
}

#[test]
fn files_as_dbgen_writes_them() {
    let s = Scratch::new();
    let dir = s.path("tbl");
    let out = format!("--output={}", dir.display());
    let r = s.ok(&[
        "prepare",
        "tpch",
        "--scale-factor=0.01",
        &out,
        "--update-sets=2",
    ]);
    assert!(
        r.stdout.contains("Wrote 86805 rows in 8 .tbl files"),
        "{}",
        r.stdout
    );
    assert_eq!(lines(&dir.join("orders.tbl")), 15000);
    assert_eq!(lines(&dir.join("lineitem.tbl")), 60175);
    let first = std::fs::read_to_string(dir.join("region.tbl")).unwrap_or_default();
    assert!(
        first.starts_with("0|AFRICA|lar deposits. blithely final packages cajole."),
        "{first}"
    );
    assert!(first.lines().all(|l| l.ends_with('|')));
    // Update sets of 10 orders at SF 0.01, as dbgen writes them.
    for k in 1..=2 {
        assert_eq!(lines(&dir.join(format!("orders.tbl.u{k}"))), 10);
        assert_eq!(lines(&dir.join(format!("delete.{k}"))), 10);
    }
    assert_eq!(lines(&dir.join("lineitem.tbl.u1")), 37);
    assert_eq!(lines(&dir.join("lineitem.tbl.u2")), 44);
    // No database was touched.
    assert!(!s.path("dbmeter.sqlite").exists());
}

#[test]
fn stream_sql_and_bad_inputs() {
    let s = Scratch::new();
    let r = s.ok(&["queries", "tpch", "--stream=1", "--rand-seed=42"]);
    let qs: Vec<&str> = r.stdout.lines().filter(|l| l.starts_with("-- Q")).collect();
    assert_eq!(qs.len(), 22, "{}", r.stdout);
    assert!(
        qs[0].starts_with("-- Q21 (position 1 of stream 1)"),
        "{}",
        qs[0]
    );
    assert!(r.stdout.contains("create view revenue1") || r.stdout.contains("CREATE VIEW revenue1"));
    let pg = s.ok(&[
        "queries",
        "tpch",
        "--db=postgres://u@h/db",
        "--queries=1",
        "--validation",
    ]);
    assert!(pg.stdout.contains("PostgreSQL dialect"), "{}", pg.stdout);
    assert!(pg.stdout.contains("parameters: 90"), "{}", pg.stdout);

    let db = "--db=sqlite:h.sqlite";
    // Before prepare: what to do.
    let r = s.run(&["run", "tpch", "--db=sqlite:none.sqlite"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("prepare tpch"), "{}", r.stderr);
    s.ok(&["prepare", "tpch", db, "--scale-factor=0.01"]);
    let again = s.run(&["prepare", "tpch", db, "--scale-factor=0.01"]);
    assert_eq!(again.code, 1);
    assert!(again.stderr.contains("cleanup tpch"), "{}", again.stderr);
    for (args, code, says) in [
        (vec!["run", "tpch", db, "--queries=23"], 2, "--queries=23"),
        (
            vec!["run", "tpch", db, "--query-timeout=0.5"],
            2,
            "at least 1 second",
        ),
        (
            vec!["run", "tpch", db, "--scale-factor=1"],
            1,
            "holds SF 0.01",
        ),
        (
            vec!["check", "tpch", db, "--validation"],
            2,
            "official answers, which are for SF 1",
        ),
        (
            vec![
                "prepare",
                "tpch",
                "--db=sqlite:x.sqlite",
                "--scale-factor=0",
            ],
            2,
            "--scale-factor=0",
        ),
        (vec!["run", "tpch", db, "--runs=0"], 2, "--runs=0"),
    ] {
        let r = s.run(&args);
        assert_eq!(r.code, code, "{args:?}: {}{}", r.stdout, r.stderr);
        assert!(r.stderr.contains(says), "{args:?}: {}", r.stderr);
        assert_eq!(r.stderr.trim().lines().count(), 1, "{args:?}: {}", r.stderr);
        assert!(!r.stderr.contains("panicked"));
    }
    // A scale factor no disk here can hold: refused before anything is
    // written, with the estimate.
    for args in [
        vec!["prepare", "tpch", "--scale-factor=100000", "--output=big"],
        vec![
            "prepare",
            "tpch",
            "--db=sqlite:big.sqlite",
            "--scale-factor=100000",
        ],
    ] {
        let r = s.run(&args);
        assert_eq!(r.code, 1, "{args:?}: {}", r.stderr);
        assert!(
            r.stderr.contains("needs about") && r.stderr.contains("free"),
            "{}",
            r.stderr
        );
        assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
    }
    assert!(!s.path("big/lineitem.tbl").exists());
    // A missing table: named, with what to do.
    s.db("h.sqlite")
        .execute_batch("DROP TABLE lineitem")
        .expect("drop");
    let r = s.run(&["run", "tpch", db]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("table lineitem does not exist") && r.stderr.contains("prepare tpch"),
        "{}",
        r.stderr
    );
    let r = s.ok(&["cleanup", "tpch", db]);
    assert!(r.stdout.contains("Dropped 7 table(s)"), "{}", r.stdout);
    let left: Vec<String> = tables(&s.db("h.sqlite"))
        .into_iter()
        .filter(|t| !t.starts_with("sqlite_"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

fn url(server: &Server) -> String {
    format!("--db={}", server.url())
}

/// Holds a lock on lineitem from another session until dropped (then the
/// session is ended on the server too: a killed client's session would
/// keep the lock until its sleep ends).
struct Blocker<'a>(std::process::Child, &'a Server);

impl Drop for Blocker<'_> {
    fn drop(&mut self) {
        let end = match self.1.flavor() {
            Flavor::MariaDb => "SELECT COUNT(*) FROM (SELECT 1) x WHERE 0",
            Flavor::Postgres => {
                "SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(120)%' AND pid <> pg_backend_pid()"
            }
        };
        if self.1.flavor() == Flavor::MariaDb
            && let Ok(ids) = dbmeter_testkit::servers::try_ask(
                self.1,
                "SELECT GROUP_CONCAT(id) FROM information_schema.processlist WHERE info LIKE 'SELECT SLEEP(120)%'",
            )
        {
            for id in ids.split(',').filter(|i| !i.is_empty() && *i != "NULL") {
                let _ = dbmeter_testkit::servers::try_ask(self.1, &format!("KILL {id}"));
            }
        }
        let _ = dbmeter_testkit::servers::try_ask(self.1, end);
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn block_lineitem(server: &Server) -> Blocker<'_> {
    let sql = match server.flavor() {
        Flavor::MariaDb => "LOCK TABLES lineitem WRITE; SELECT SLEEP(120);",
        Flavor::Postgres => {
            "BEGIN; LOCK TABLE lineitem IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(120);"
        }
    };
    let child = dbmeter_testkit::servers::client(server, sql)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start the client: {e}"));
    let blocker = Blocker(child, server);
    let held = match server.flavor() {
        Flavor::MariaDb => {
            "SELECT COUNT(*) FROM information_schema.processlist WHERE info LIKE 'SELECT SLEEP(120)%'"
        }
        Flavor::Postgres => {
            "SELECT COUNT(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = 'lineitem' AND l.mode = 'AccessExclusiveLock' AND l.granted"
        }
    };
    for _ in 0..300 {
        if ask_n(server, held) > 0 {
            return blocker;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("the lock on lineitem was never taken");
}

fn on_server(flavor: Flavor, other: &Server) {
    let Some(server) = start(flavor) else {
        return;
    };
    let s = Scratch::new();
    let db = url(&server);
    s.ok(&["prepare", "tpch", &db, "--scale-factor=0.01", "--threads=2"]);
    assert_eq!(ask_n(&server, "SELECT COUNT(*) FROM lineitem"), 60175);
    let c = s.ok(&["check", "tpch", &db]);
    assert!(c.stdout.contains("All checks passed"), "{}", c.stdout);

    // The engines agree: every query, the validation parameters and drawn
    // ones, against another server and SQLite (before any refresh).
    s.ok(&[
        "prepare",
        "tpch",
        "--db=sqlite:h.sqlite",
        "--scale-factor=0.01",
    ]);
    for against in [
        format!("--against={}", other.url()),
        "--against=sqlite:h.sqlite".into(),
    ] {
        for params in ["--validation", "--rand-seed=7"] {
            let r = s.ok(&["check", "tpch", &db, &against, params]);
            assert_eq!(
                r.stdout.matches(" rows agree with ").count(),
                22,
                "{}",
                r.stdout
            );
        }
    }
    // The power test with the refresh functions on the server.
    let r = s.ok(&["run", "tpch", &db, "--validation", "--format=json"]);
    let t = tpch(&r);
    assert!(statuses(&t).iter().all(|(_, s)| s == "ok"), "{t:#}");
    assert!(t["metrics"]["power_at_size"].as_f64().unwrap_or(0.0) > 0.0);
    assert_eq!(ask_n(&server, "SELECT COUNT(*) FROM orders"), 15000);
    assert_eq!(ask(&server, "SELECT next_update_set FROM tpch_state"), "2");

    // --cold needs a server dbmeter manages; this one was started apart.
    let r = s.run(&["run", "tpch", &db, "--cold", "--refresh=off"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("is not a server dbmeter manages"),
        "{}",
        r.stderr
    );

    // A query that cannot finish in time is recorded as a timeout and the
    // stream goes on.
    {
        let _lock = block_lineitem(&server);
        let r = s.ok(&[
            "run",
            "tpch",
            &db,
            "--queries=1,2",
            "--refresh=off",
            "--explain=off",
            "--query-timeout=1",
            "--format=json",
        ]);
        let t = tpch(&r);
        let st = statuses(&t);
        assert!(st.contains(&(1, "timeout".to_string())), "{st:?}");
        assert!(st.contains(&(2, "ok".to_string())), "{st:?}");
        assert_eq!(r.json()["end"]["reason"], "work_done");
    }
}

fn prepared_other(flavor: Flavor) -> Option<(Server, Scratch)> {
    let server = start(flavor)?;
    let s = Scratch::new();
    s.ok(&["prepare", "tpch", &url(&server), "--scale-factor=0.01"]);
    Some((server, s))
}

#[test]
fn mariadb_end_to_end_agrees_with_postgres() {
    if let Some((pg, _s)) = prepared_other(Flavor::Postgres) {
        on_server(Flavor::MariaDb, &pg);
    }
}

#[test]
fn postgres_end_to_end_agrees_with_mariadb() {
    if let Some((my, _s)) = prepared_other(Flavor::MariaDb) {
        on_server(Flavor::Postgres, &my);
    }
}

/// DBT3's automation as a campaign: two configurations x the 22 queries x
/// 2 repeats of 2 runs each, stored per query, compared query by query,
/// and drawn as DBT3's chart.
#[test]
fn a_campaign_compares_configurations_query_by_query() {
    let s = Scratch::new();
    std::fs::write(
        s.path("dbt3.toml"),
        r#"name = "dbt3"
store = "results.db"
duration = 600
repeats = 2
clients = [1]

[[target]]
name = "first"
url = "sqlite:first.db"

[[target]]
name = "second"
url = "sqlite:second.db"

[[workload]]
name = "tpch"
options = { scale-factor = 0.01, refresh = false, runs = 2, extract = "min-max" }
"#,
    )
    .expect("write campaign");
    s.ok_home(&["campaign", "run", "dbt3.toml"]);
    let mut store =
        dbmeter_store::Store::open(&s.path("results.db").to_string_lossy()).expect("store");
    let runs = store.runs(&dbmeter_store::Filter::all()).expect("runs");
    assert_eq!(runs.len(), 4);
    for r in &runs {
        assert_eq!(r.end_reason, "work_done", "{r:?}");
        let names: Vec<&str> = r.figures.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names.len(), 22, "{names:?}");
        assert_eq!(names[0], "Q1");
        assert!(
            r.figures
                .iter()
                .all(|f| f.status == "ok" && f.value.is_some_and(|v| v > 0.0))
        );
    }
    // compare: a row per query, in query order.
    let c = s.ok_home(&[
        "compare",
        "--store=results.db",
        "--baseline=variant:first",
        "--candidate=variant:second",
    ]);
    let rows: Vec<&str> = c
        .stdout
        .lines()
        .filter(|l| l.starts_with("tpch Q"))
        .collect();
    assert_eq!(rows.len(), 22, "{}", c.stdout);
    assert!(
        rows[0].starts_with("tpch Q1 ") && rows[1].starts_with("tpch Q2 "),
        "{rows:?}"
    );
    assert!(c.stdout.contains("figures ("), "{}", c.stdout);
    let csv = s.ok_home(&[
        "compare",
        "--store=results.db",
        "--baseline=variant:first",
        "--format=csv",
    ]);
    assert_eq!(
        csv.stdout
            .lines()
            .filter(|l| l.starts_with("tpch Q"))
            .count(),
        22
    );

    // The report: DBT3's chart, the table, the plans side by side.
    s.ok_home(&[
        "report",
        "campaign:dbt3",
        "--store=results.db",
        "--output=dbt3.html",
        "--charts=charts",
    ]);
    let html = std::fs::read_to_string(s.path("dbt3.html")).expect("report");
    assert!(
        html.contains("tpch: each figure relative to first"),
        "chart title"
    );
    assert!(html.contains("Plans (EXPLAIN), variants side by side"));
    // The comparison section is per query, not in transactions per second.
    assert!(
        html.contains("The benchmark&#39;s own figures") || html.contains("figures against first"),
        "no per-figure comparison"
    );
    assert!(!html.contains("Transactions per second against first"));
    assert!(s.path("charts/tpch-figures.svg").exists());
    let svg = std::fs::read_to_string(s.path("charts/tpch-figures.svg")).unwrap_or_default();
    assert_eq!(
        svg.matches("middle\">Q").count(),
        22,
        "a group label per query"
    );
    assert!(svg.contains(">100</text>"), "y labels");

    let Some(browser) = chromium() else { return };
    let shot = screenshot(&browser, &s, &s.path("dbt3.html"), 1200, 2400);
    // The bars of both configurations, in their colours.
    let first = pixels_of(&shot, (0x4e, 0x79, 0xa7));
    let second = pixels_of(&shot, (0xf2, 0x8e, 0x2b));
    assert!(
        first > 500 && second > 200,
        "bars drawn: {first} and {second} pixels"
    );
}

/// Cold runs: the managed server restarted and the page cache dropped
/// before each measured run; the queries still answer.
#[test]
fn cold_runs_restart_a_managed_server() {
    use std::os::unix::fs::PermissionsExt;
    if !dbmeter_testkit::servers::can_run(Flavor::Postgres) {
        return;
    }
    let s = Scratch::new();
    // The server user must reach the data directory inside.
    std::fs::set_permissions(s.dir.path(), std::fs::Permissions::from_mode(0o755))
        .expect("chmod scratch");
    let started = s.ok_home(&["server", "start", "postgres", "--name=cold"]);
    let db = format!("--db={}", started.stdout.trim());
    s.ok_home(&["prepare", "tpch", &db, "--scale-factor=0.01"]);
    for (args, says) in [
        (vec!["--test=throughput"], "not --test=throughput"),
        (vec!["--warmup-runs=1"], "contradict"),
    ] {
        let mut all = vec!["run", "tpch", &db, "--cold"];
        all.extend(args);
        let r = s.run_home(&all);
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(r.stderr.contains(says), "{}", r.stderr);
    }
    let r = s.ok_home(&[
        "run",
        "tpch",
        &db,
        "--cold",
        "--queries=1,6",
        "--runs=2",
        "--refresh=off",
        "--format=json",
    ]);
    let t = tpch(&r);
    assert_eq!(t["cold"], true);
    assert_eq!(t["restarts"], 4, "{t:#}");
    assert!(statuses(&t).iter().all(|(_, s)| s == "ok"), "{t:#}");
    // The server restarted under the run: its counters are not trusted.
    assert_eq!(r.json()["counters"]["restarted"], true, "{}", r.stdout);
    let st = s.ok_home(&["server", "status", "cold"]);
    assert!(st.stdout.contains("cold: running"), "{}", st.stdout);
    // SQLite: no server to restart, the page cache only.
    s.ok(&[
        "prepare",
        "tpch",
        "--db=sqlite:c.sqlite",
        "--scale-factor=0.01",
    ]);
    let r = s.ok(&[
        "run",
        "tpch",
        "--db=sqlite:c.sqlite",
        "--cold",
        "--queries=6",
        "--refresh=off",
        "--format=json",
    ]);
    let t = tpch(&r);
    assert_eq!(
        (t["cold"].clone(), t["restarts"].clone()),
        (true.into(), 0.into())
    );
    s.ok_home(&["server", "stop", "cold", "--remove"]);
}

/// SF1 on PostgreSQL: all 22 answers match the TPC's official answers,
/// and a changed row is named by query, row and column.
#[test]
fn postgres_sf1_answers_match_the_official_answers() {
    let Some(server) = start(Flavor::Postgres) else {
        return;
    };
    let s = Scratch::new();
    let db = url(&server);
    s.ok(&["prepare", "tpch", &db, "--scale-factor=1", "--threads=2"]);
    assert_eq!(ask_n(&server, "SELECT COUNT(*) FROM lineitem"), 6_001_215);
    let r = s.ok(&["check", "tpch", &db, "--validation"]);
    assert_eq!(
        r.stdout.matches(" rows match the official answer").count(),
        22,
        "{}",
        r.stdout
    );
    // One order's discount changed: Q6's revenue moves by far more than
    // the tolerance, and the check says where.
    ask(
        &server,
        "UPDATE lineitem SET l_extendedprice = l_extendedprice + 100000 WHERE l_orderkey = (SELECT MIN(l_orderkey) FROM lineitem WHERE l_shipdate >= date '1994-01-01' AND l_shipdate < date '1995-01-01' AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24) AND l_shipdate >= date '1994-01-01' AND l_shipdate < date '1995-01-01' AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24",
    );
    let r = s.run(&["check", "tpch", &db, "--validation", "--queries=6"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stdout.contains("FAILED Q6: row 1 column revenue: got '")
            && r.stdout.contains("(sums must be within 100)"),
        "{}",
        r.stdout
    );
}

/// Ctrl-C during a query's runs: the run says it was interrupted (exit
/// 130), and the query keeps the runs it had, marked interrupted.
#[test]
fn an_interrupted_run_keeps_what_it_measured() {
    let s = Scratch::new();
    let db = "--db=sqlite:h.sqlite";
    s.ok(&["prepare", "tpch", db, "--scale-factor=0.01"]);
    let mut child = s.spawn(&[
        "run",
        "tpch",
        db,
        "--queries=1",
        "--runs=100000",
        "--refresh=off",
        "--explain=off",
        "--report-interval=1",
        "--format=json",
    ]);
    // The interval lines (on stderr, as stdout carries the JSON) say when
    // runs have completed. Then stop it.
    let err = child.stderr.take().expect("stderr");
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(err));
    let mut seen = String::new();
    for l in lines.by_ref() {
        let l = l.unwrap_or_default();
        seen.push_str(&l);
        seen.push('\n');
        let done = l
            .split("tps: ")
            .nth(1)
            .and_then(|x| x.split_whitespace().next())
            .and_then(|x| x.parse::<f64>().ok())
            .is_some_and(|tps| tps > 0.0);
        if done {
            break;
        }
    }
    assert!(seen.contains("tps: "), "{seen}");
    // SAFETY: kill with a valid pid and signal has no preconditions.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let out = child.wait_with_output().expect("wait");
    assert_eq!(out.status.code(), Some(130), "{seen}{}", rest.join("\n"));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(doc["end"]["reason"], "interrupted");
    let q = &doc["tpch"]["queries"][0];
    assert_eq!(q["status"], "interrupted", "{q:#}");
    assert!(q["runs"].as_array().is_some_and(|r| !r.is_empty()), "{q:#}");
    assert!(q["seconds"].is_null());
}
