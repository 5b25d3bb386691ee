//! The tpcc workload end to end: prepare (row counts), check (after
//! prepare, after runs with many clients, and when the data is broken),
//! run (NOPM, the mix, rollbacks, TPM from the server), stored procedures
//! doing what client-side SQL does, and bad inputs. SQLite, and throwaway
//! MariaDB and PostgreSQL servers.

use crate::common::*;
use dbmeter_server::{Flavor, Server};
use dbmeter_testkit::servers::{ask_n, start};

fn tpcc_json(r: &Run) -> serde_json::Value {
    let doc = r.json();
    let t = doc["tpcc"].clone();
    assert!(t.is_object(), "no tpcc section:\n{}", r.stdout);
    t
}

/// The mix holds the specification's minimums and every type ran.
fn assert_mix(t: &serde_json::Value) {
    let tx = t["transactions"].as_array().expect("transactions");
    assert_eq!(tx.len(), 5);
    let names: Vec<&str> = tx.iter().map(|x| x["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "new_order",
            "payment",
            "order_status",
            "delivery",
            "stock_level"
        ]
    );
    // Each terminal deals from its own deck of 23 cards: over a short run
    // on a busy machine the partial decks at the end can put a rare type
    // a little under its minimum share.
    let total: u64 = tx.iter().map(|x| x["count"].as_u64().unwrap()).sum();
    let slack = if total < 2000 { 1.5 } else { 0.0 };
    if total >= 2000 {
        assert_eq!(t["mix_ok"], true, "{t:#}");
    }
    for x in tx {
        assert!(x["count"].as_u64().unwrap() > 0, "{x:#}");
        let share = x["share_pct"].as_f64().unwrap();
        assert!(
            share >= x["min_share_pct"].as_f64().unwrap() - slack,
            "{total} transactions: {x:#}"
        );
        assert!(x["latency_ms"]["max_ms"].as_f64().unwrap() > 0.0);
    }
    let no = tx[0]["share_pct"].as_f64().unwrap();
    assert!((40.0..47.0).contains(&no), "new_order share {no}");
}

fn check_passes(s: &Scratch, db: &str) {
    let r = s.ok(&["check", "tpcc", db]);
    assert!(r.stdout.contains("All checks passed"), "{}", r.stdout);
    assert_eq!(r.stdout.matches("ok     ").count(), 5, "{}", r.stdout);
}

#[test]
fn sqlite_prepare_check_run_check() {
    let s = Scratch::new();
    let db = "--db=sqlite:t.sqlite";
    let r = s.ok(&["prepare", "tpcc", db, "--rand-seed=3"]);
    assert!(
        r.stdout.contains("Load time per warehouse:"),
        "{}",
        r.stdout
    );
    let c = s.db("t.sqlite");
    for (table, n) in [
        ("warehouse", 1),
        ("district", 10),
        ("customer", 30_000),
        ("history", 30_000),
        ("orders", 30_000),
        ("new_order", 9_000),
        ("item", 100_000),
        ("stock", 100_000),
    ] {
        assert_eq!(
            count(&c, &format!("SELECT COUNT(*) FROM {table}")),
            n,
            "{table}"
        );
    }
    let lines = count(&c, "SELECT COUNT(*) FROM order_line");
    assert!((270_000..330_000).contains(&lines), "{lines}");
    // The specification's population.
    assert_eq!(count(&c, "SELECT MIN(no_o_id) FROM new_order"), 2101);
    assert_eq!(
        count(&c, "SELECT COUNT(*) FROM orders WHERE o_carrier_id IS NULL"),
        9000
    );
    assert_eq!(
        count(
            &c,
            "SELECT COUNT(*) FROM order_line WHERE ol_delivery_d IS NULL AND ol_o_id < 2101"
        ),
        0
    );
    let bc = count(&c, "SELECT COUNT(*) FROM customer WHERE c_credit = 'BC'");
    assert!((2_500..3_500).contains(&bc), "{bc}");
    let original = count(
        &c,
        "SELECT COUNT(*) FROM stock WHERE s_data LIKE '%ORIGINAL%'",
    );
    assert!((9_000..11_000).contains(&original), "{original}");
    assert_eq!(
        count(
            &c,
            "SELECT COUNT(DISTINCT c_last) FROM customer WHERE c_d_id = 1"
        ),
        1000
    );
    assert_eq!(
        count(
            &c,
            "SELECT COUNT(*) FROM customer WHERE c_id = 372 AND c_last = 'PRICALLYOUGHT'"
        ),
        10
    );
    drop(c);
    check_passes(&s, db);

    let r = s.ok(&[
        "run",
        "tpcc",
        db,
        "--threads=8",
        "--time=3",
        "--format=json",
    ]);
    let t = tpcc_json(&r);
    assert_mix(&t);
    assert!(t["nopm"].as_f64().unwrap() > 0.0, "{t:#}");
    assert_eq!(t["tpm_source"], "client");
    assert_eq!(t["warehouses"], 1);
    // NOPM counts the orders the districts handed out.
    let c = s.db("t.sqlite");
    let made = count(&c, "SELECT SUM(d_next_o_id) - 30010 FROM district");
    assert_eq!(t["new_orders"].as_i64().unwrap(), made);
    drop(c);
    check_passes(&s, db);

    // A run stopped with Ctrl-C keeps the data consistent.
    let child = s.spawn(&["run", "tpcc", db, "--threads=8", "--time=60"]);
    std::thread::sleep(std::time::Duration::from_secs(2));
    // SAFETY: sending SIGINT to our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().expect("wait for dbmeter");
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    check_passes(&s, db);

    // Broken data: the check names the failing condition and exits 1.
    s.db("t.sqlite")
        .execute("UPDATE warehouse SET w_ytd = w_ytd + 1", [])
        .unwrap();
    let r = s.run(&["check", "tpcc", db]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("condition 1: W_YTD = sum(D_YTD)"),
        "{}",
        r.stderr
    );
    assert!(r.stdout.contains("FAILED condition 1"), "{}", r.stdout);

    let r = s.ok(&["cleanup", "tpcc", db]);
    assert!(r.stdout.contains("Dropped 9 table(s)"), "{}", r.stdout);
    // What is left is SQLite's own (the statistics of ANALYZE).
    let left = tables(&s.db("t.sqlite"));
    assert!(left.iter().all(|t| t.starts_with("sqlite_")), "{left:?}");
}

#[test]
fn run_before_prepare_says_what_to_do() {
    let s = Scratch::new();
    let r = s.run(&["run", "tpcc", "--db=sqlite:none.sqlite"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("run `dbmeter prepare tpcc"),
        "{}",
        r.stderr
    );
    // A database without the tables.
    s.db("empty.sqlite")
        .execute("CREATE TABLE other (x INTEGER)", [])
        .unwrap();
    for cmd in ["run", "check"] {
        let r = s.run(&[cmd, "tpcc", "--db=sqlite:empty.sqlite"]);
        assert_eq!(r.code, 1, "{}", r.stderr);
        assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
        assert!(
            r.stderr.contains("does not exist; run `dbmeter prepare tpcc --warehouses=1 --db=sqlite:empty.sqlite` first"),
            "{}",
            r.stderr
        );
    }
}

#[test]
fn bad_inputs_are_one_line_usage_errors() {
    let s = Scratch::new();
    for (args, says) in [
        (
            vec!["prepare", "tpcc", "--warehouses=0", "--db=sqlite:x.sqlite"],
            "--warehouses=0",
        ),
        (
            vec![
                "prepare",
                "tpcc",
                "--warehouses=2",
                "--warehouse-start=3",
                "--db=sqlite:x.sqlite",
            ],
            "--warehouse-start=3",
        ),
        (
            vec!["run", "tpcc", "--stored-procedures", "--db=sqlite:x.sqlite"],
            "SQLite has no stored procedures",
        ),
        (
            vec!["prepare", "tpcc", "--partition", "--db=sqlite:x.sqlite"],
            "--partition",
        ),
        (vec!["check", "oltp_read_write"], "has no check"),
        (
            vec!["run", "tpcc", "--keying-time=-1", "--db=sqlite:x.sqlite"],
            "--keying-time=-1",
        ),
    ] {
        // --stored-procedures is checked once the file exists.
        s.db("x.sqlite");
        let r = s.run(&args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert_eq!(r.stderr.trim().lines().count(), 1, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(says), "{args:?}: {}", r.stderr);
    }
}

/// Counts that the same transactions change by the same amounts whatever
/// the state: orders handed out, rows added, money paid, stock moved.
fn effects(server: &Server) -> Vec<i64> {
    [
        "SELECT SUM(d_next_o_id) FROM district",
        "SELECT COUNT(*) FROM history",
        "SELECT COUNT(*) FROM order_line",
        "SELECT COUNT(*) FROM new_order",
        "SELECT COUNT(o_carrier_id) FROM orders",
        "SELECT ROUND(SUM(w_ytd) * 100) FROM warehouse",
        "SELECT ROUND(SUM(d_ytd) * 100) FROM district",
        "SELECT SUM(c_payment_cnt) FROM customer",
        "SELECT SUM(c_delivery_cnt) FROM customer",
        "SELECT SUM(s_ytd) FROM stock",
        "SELECT SUM(s_order_cnt) FROM stock",
        "SELECT SUM(s_remote_cnt) FROM stock",
    ]
    .iter()
    .map(|q| ask_n(server, q))
    .collect()
}

fn delta(a: &[i64], b: &[i64]) -> Vec<i64> {
    a.iter().zip(b).map(|(x, y)| y - x).collect()
}

fn on_server(flavor: Flavor) {
    let Some(server) = start(flavor) else { return };
    let s = Scratch::new();
    let db = format!("--db={}", server.url());
    let db = db.as_str();
    let r = s.ok(&[
        "prepare",
        "tpcc",
        db,
        "--warehouses=2",
        "--threads=2",
        "--rand-seed=9",
    ]);
    assert!(r.stdout.contains("Loaded warehouse 2"), "{}", r.stdout);
    for (table, n) in [
        ("warehouse", 2),
        ("district", 20),
        ("customer", 60_000),
        ("history", 60_000),
        ("orders", 60_000),
        ("new_order", 18_000),
        ("item", 100_000),
        ("stock", 200_000),
    ] {
        assert_eq!(
            ask_n(&server, &format!("SELECT COUNT(*) FROM {table}")),
            n,
            "{table}"
        );
    }
    assert_eq!(
        ask_n(
            &server,
            "SELECT COUNT(*) FROM orders WHERE o_carrier_id IS NULL"
        ),
        18_000
    );
    check_passes(&s, db);

    // Many clients on two warehouses: deadlocks are retried, nothing is
    // lost or applied twice.
    let r = s.ok(&[
        "run",
        "tpcc",
        db,
        "--threads=8",
        "--time=3",
        "--format=json",
    ]);
    let t = tpcc_json(&r);
    assert_mix(&t);
    assert!(t["nopm"].as_f64().unwrap() > 0.0, "{t:#}");
    assert!(t["tpm"].as_f64().unwrap() > 0.0, "{t:#}");
    let source = match flavor {
        Flavor::MariaDb => "Com_commit+Com_rollback",
        Flavor::Postgres => "xact_commit+xact_rollback",
    };
    assert_eq!(t["tpm_source"], source);
    // The server counted about as many transactions as the client.
    let (server_tpm, client_tpm) = (
        t["tpm"].as_f64().unwrap(),
        t["client_tpm"].as_f64().unwrap(),
    );
    assert!(
        (server_tpm / client_tpm - 1.0).abs() < 0.3,
        "server {server_tpm} client {client_tpm}"
    );
    check_passes(&s, db);

    // Stored procedures do what client-side SQL does: the same 230
    // transactions (one terminal, one seed) change the same counts.
    let mut changes = Vec::new();
    for mode in ["--stored-procedures=off", "--stored-procedures=on"] {
        let before = effects(&server);
        let r = s.ok(&[
            "run",
            "tpcc",
            db,
            mode,
            "--threads=1",
            "--time=0",
            "--events=230",
            "--rand-seed=77",
            "--format=json",
        ]);
        let t = tpcc_json(&r);
        assert_eq!(t["transactions"][0]["count"], 100, "{t:#}");
        changes.push(delta(&before, &effects(&server)));
        check_passes(&s, db);
    }
    assert_eq!(changes[0], changes[1], "client SQL vs stored procedures");
    assert!(changes[0][0] > 90, "{:?}", changes[0]);

    let r = s.ok(&["cleanup", "tpcc", db]);
    assert!(r.stdout.contains("Dropped 9 table(s)"), "{}", r.stdout);
}

#[test]
fn mariadb_end_to_end() {
    on_server(Flavor::MariaDb);
}

#[test]
fn postgres_end_to_end() {
    on_server(Flavor::Postgres);
}
