//! A TPC-C-like Lua workload of our own (tests/scripts/tpcc_like.lua) on
//! SQLite, a throwaway MariaDB and a throwaway PostgreSQL: its options,
//! its prepare (nine tables, bulk inserts), a run whose counts are checked
//! against the rows it added, its parallel `check` command, a broken
//! database that `check` catches, and cleanup.

use crate::common::*;
use dbmeter_server::{Flavor, Server};
use dbmeter_testkit::servers::{ask, ask_n, start};

fn script() -> String {
    format!("{}/tests/scripts/tpcc_like.lua", env!("CARGO_MANIFEST_DIR"))
}

const TABLES: [&str; 9] = [
    "order_line",
    "new_orders",
    "orders",
    "history",
    "stock",
    "customer",
    "district",
    "warehouse",
    "item",
];

/// The database under test: a number for a query, a statement run.
struct Db<'a> {
    n: &'a dyn Fn(&str) -> i64,
    exec: &'a dyn Fn(&str),
    /// Foreign keys declared on its tables.
    foreign_keys: &'a dyn Fn() -> i64,
    /// Tables of the workload left.
    tables_left: &'a dyn Fn() -> i64,
}

/// The events of the kind (statement) whose name starts with `prefix`.
fn kind(j: &serde_json::Value, prefix: &str) -> u64 {
    j["kinds"]
        .as_array()
        .expect("kinds")
        .iter()
        .filter(|k| k["name"].as_str().unwrap_or("").starts_with(prefix))
        .map(|k| k["events"].as_u64().unwrap())
        .sum()
}

/// The line of the script that holds `text`, 1-based.
fn line_of(text: &str) -> usize {
    let src = std::fs::read_to_string(script()).unwrap();
    src.lines()
        .position(|l| l.contains(text))
        .unwrap_or_else(|| panic!("no '{text}' in the script"))
        + 1
}

fn tpcc_like(db_opt: &str, threads: usize, use_fk: bool, db: &Db) {
    let s = Scratch::new();
    let script = script();
    let sc = script.as_str();
    let help = s.ok(&["help", sc]);
    for want in [
        // As the script declares them (the command line takes dashes too).
        "--warehouses=N",
        "--scale_items=N",
        "--use_fk=[on|off]",
        "--new_order_weight=N",
        "check ",
    ] {
        assert!(help.stdout.contains(want), "{want}:\n{}", help.stdout);
    }
    let fk = format!("--use-fk={}", if use_fk { "on" } else { "off" });
    let data = [
        db_opt,
        "--warehouses=2",
        "--customers=30",
        "--scale-items=500",
        fk.as_str(),
    ];
    let with = |first: &[&str], more: &[&str]| -> Vec<String> {
        first
            .iter()
            .chain(data.iter())
            .chain(more.iter())
            .map(|a| a.to_string())
            .collect()
    };
    let ok = |args: Vec<String>| s.ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let run = |args: Vec<String>| s.run(&args.iter().map(String::as_str).collect::<Vec<_>>());

    let r = ok(with(&["prepare", sc], &[]));
    assert!(r.stdout.contains("Creating 9 tables on "), "{}", r.stdout);
    assert!(r.stdout.contains("Loading warehouse 2"), "{}", r.stdout);
    // Exact rows: 2 warehouses x 10 districts x 30 customers, one order
    // each, the last 9 of each district new; 500 items, stocked in each
    // warehouse; 5 to 15 lines an order.
    for (table, rows) in [
        ("warehouse", 2),
        ("district", 20),
        ("customer", 600),
        ("history", 600),
        ("orders", 600),
        ("new_orders", 180),
        ("item", 500),
        ("stock", 1000),
    ] {
        assert_eq!(
            (db.n)(&format!("SELECT COUNT(*) FROM {table}")),
            rows,
            "{table}"
        );
    }
    let lines = (db.n)("SELECT COUNT(*) FROM order_line");
    assert_eq!(lines, (db.n)("SELECT SUM(o_ol_cnt) FROM orders"));
    assert!((600 * 5..=600 * 15).contains(&lines), "{lines}");
    assert_eq!(
        (db.n)("SELECT COUNT(*) FROM orders WHERE o_carrier_id IS NULL"),
        180
    );
    assert_eq!((db.foreign_keys)(), if use_fk { 10 } else { 0 });

    // The parallel check: a thread per warehouse.
    let r = ok(with(&["check", sc], &["--threads=2"]));
    for tid in 0..2 {
        assert!(
            r.stdout
                .contains(&format!("check: thread {tid}: 1 warehouse(s) consistent")),
            "{}",
            r.stdout
        );
    }

    let next_ids = || (db.n)("SELECT SUM(d_next_o_id) FROM district");
    let before_next = next_ids();
    let threads = format!("--threads={threads}");
    let r = ok(with(
        &["run", sc],
        &[
            threads.as_str(),
            "--events=200",
            "--time=0",
            "--rollback-pct=5",
            "--format=json",
        ],
    ));
    let j = r.json();
    let t = &j["totals"];
    assert_eq!(t["events"], 200);
    assert_eq!(t["ignored_errors"], 0, "{}", j["errors"]);
    // Each event is one transaction: a New-Order (it takes an order id),
    // a Payment (it adds to history) or an Order-Status (it looks up the
    // customer's last order). Rolled back New-Orders ran ROLLBACK.
    let new_orders = kind(&j, "UPDATE district SET d_next_o_id");
    let payments = kind(&j, "INSERT INTO history");
    let statuses = kind(&j, "SELECT o_id, o_carrier_id");
    let rollbacks = kind(&j, "ROLLBACK");
    assert_eq!(new_orders + payments + statuses, 200, "{}", j["kinds"]);
    assert!(new_orders > 0 && payments > 0 && statuses > 0);
    assert_eq!(kind(&j, "INSERT INTO orders"), new_orders);
    assert_eq!(kind(&j, "COMMIT"), 200 - rollbacks);
    // What the database now holds agrees with what the run counted.
    let committed = (new_orders - rollbacks) as i64;
    assert_eq!((db.n)("SELECT COUNT(*) FROM orders"), 600 + committed);
    assert_eq!((db.n)("SELECT COUNT(*) FROM new_orders"), 180 + committed);
    assert_eq!(next_ids(), before_next + committed);
    assert_eq!(
        (db.n)("SELECT COUNT(*) FROM history"),
        600 + payments as i64
    );
    // New orders have no carrier (a NULL parameter) and undelivered lines.
    assert_eq!(
        (db.n)("SELECT COUNT(*) FROM orders WHERE o_carrier_id IS NULL"),
        180 + committed
    );
    assert_eq!(
        (db.n)("SELECT COUNT(*) FROM order_line WHERE ol_delivery_d IS NULL"),
        (db.n)("SELECT SUM(o_ol_cnt) FROM orders WHERE o_carrier_id IS NULL")
    );
    let r = ok(with(&["check", sc], &["--threads=2"]));
    assert!(
        r.stdout.contains("thread 1: 1 warehouse(s)"),
        "{}",
        r.stdout
    );

    // A district whose next order id skips ahead of its orders: check
    // fails, naming the script's line.
    (db.exec)("UPDATE district SET d_next_o_id = d_next_o_id + 5 WHERE d_w_id = 2 AND d_id = 3");
    let bad = run(with(&["check", sc], &["--threads=2"]));
    assert_eq!(bad.code, 1, "{}\n{}", bad.stdout, bad.stderr);
    let at = format!(
        "tpcc_like.lua:{}: district 2/3: next order id",
        line_of("fail(\"district %d/%d: next order id")
    );
    assert!(bad.stderr.contains(&at), "{at}:\n{}", bad.stderr);
    assert!(!bad.stderr.contains("panicked"), "{}", bad.stderr);
    // The other thread's warehouse is fine.
    assert!(
        bad.stdout.contains("thread 1: 1 warehouse(s)"),
        "{}",
        bad.stdout
    );

    let r = ok(vec!["cleanup".into(), script.clone(), db_opt.into()]);
    assert!(r.stdout.contains("Dropping table item"), "{}", r.stdout);
    assert_eq!((db.tables_left)(), 0);
}

#[test]
fn tpcc_like_script_on_sqlite() {
    let s = Scratch::new();
    let file = s.path("tpcc.db");
    let open = || rusqlite::Connection::open(&file).expect("open sqlite");
    let in_list = TABLES.map(|t| format!("'{t}'")).join(",");
    // One user: SQLite runs one writer at a time, and two would wait for
    // each other's locks (on time, which the test does not depend on).
    tpcc_like(
        &format!("--db=sqlite:{}", file.display()),
        1,
        true,
        &Db {
            n: &|sql| count(&open(), sql),
            exec: &|sql| {
                open().execute(sql, []).expect(sql);
            },
            foreign_keys: &|| {
                count(
                    &open(),
                    "SELECT COUNT(DISTINCT m.name || '/' || p.id) FROM sqlite_master m, pragma_foreign_key_list(m.name) p WHERE m.type = 'table'",
                )
            },
            tables_left: &|| {
                count(
                    &open(),
                    &format!("SELECT COUNT(*) FROM sqlite_master WHERE name IN ({in_list})"),
                )
            },
        },
    );
}

fn on_server(server: &Server, use_fk: bool) {
    let in_list = TABLES.map(|t| format!("'{t}'")).join(",");
    let (fks, left) = match server.flavor() {
        Flavor::MariaDb => (
            "SELECT COUNT(*) FROM information_schema.table_constraints WHERE constraint_schema = 'test' AND constraint_type = 'FOREIGN KEY'".to_string(),
            format!(
                "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'test' AND table_name IN ({in_list})"
            ),
        ),
        Flavor::Postgres => (
            "SELECT COUNT(*) FROM information_schema.table_constraints WHERE constraint_type = 'FOREIGN KEY'".to_string(),
            format!("SELECT COUNT(*) FROM pg_tables WHERE tablename IN ({in_list})"),
        ),
    };
    tpcc_like(
        &format!("--db={}", server.url()),
        2,
        use_fk,
        &Db {
            n: &|sql| ask_n(server, sql),
            exec: &|sql| {
                ask(server, sql);
            },
            foreign_keys: &|| ask_n(server, &fks),
            tables_left: &|| ask_n(server, &left),
        },
    );
}

#[test]
fn tpcc_like_script_on_mariadb() {
    let Some(server) = start(Flavor::MariaDb) else {
        return;
    };
    on_server(&server, false);
}

#[test]
fn tpcc_like_script_on_postgres() {
    let Some(server) = start(Flavor::Postgres) else {
        return;
    };
    on_server(&server, true);
}
