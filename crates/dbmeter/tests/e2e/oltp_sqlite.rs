//! Every OLTP workload end to end on embedded SQLite through the CLI:
//! data after prepare, counts after run, nothing left after cleanup.

use crate::common::*;

const DB: &str = "--db=sqlite:t.sqlite";

fn prepared(workload: &str, extra: &[&str]) -> Scratch {
    let s = Scratch::new();
    let mut args = vec![
        "prepare",
        workload,
        DB,
        "--table-size=1000",
        "--rand-seed=5",
    ];
    args.extend_from_slice(extra);
    let r = s.ok(&args);
    assert!(r.stdout.contains("Loaded"), "{}", r.stdout);
    s
}

fn run(s: &Scratch, workload: &str, events: &str, extra: &[&str]) -> Run {
    let ev = format!("--events={events}");
    let mut args = vec![
        "run",
        workload,
        DB,
        "--table-size=1000",
        "--time=0",
        &ev,
        "--rand-seed=11",
    ];
    args.extend_from_slice(extra);
    s.ok(&args)
}

#[test]
fn prepare_loads_sysbench_shaped_rows() {
    let s = prepared("oltp_read_write", &["--tables=2"]);
    let db = s.db("t.sqlite");
    assert_eq!(tables(&db), vec!["sbtest1", "sbtest2"]);
    for t in ["sbtest1", "sbtest2"] {
        assert_eq!(count(&db, &format!("SELECT COUNT(*) FROM {t}")), 1000);
        assert_eq!(count(&db, &format!("SELECT MIN(id) FROM {t}")), 1);
        assert_eq!(count(&db, &format!("SELECT MAX(id) FROM {t}")), 1000);
        assert_eq!(
            count(
                &db,
                &format!("SELECT COUNT(*) FROM {t} WHERE k < 1 OR k > 1000")
            ),
            0
        );
        // c: 10 groups of 11 digits joined by '-'; pad: 5 groups.
        let bad_c = count(
            &db,
            &format!(
                "SELECT COUNT(*) FROM {t} WHERE LENGTH(c) != 119 OR LENGTH(pad) != 59 \
                 OR c NOT GLOB '{g}-{g}-{g}-{g}-{g}-{g}-{g}-{g}-{g}-{g}' \
                 OR pad NOT GLOB '{g}-{g}-{g}-{g}-{g}'",
                g = "[0-9]".repeat(11)
            ),
        );
        assert_eq!(bad_c, 0);
    }
    // The k index exists; the default special distribution makes k values repeat.
    assert_eq!(
        count(
            &db,
            "SELECT COUNT(*) FROM sqlite_schema WHERE type='index' AND name='k_1'"
        ),
        1
    );
    assert!(count(&db, "SELECT COUNT(DISTINCT k) FROM sbtest1") < 900);
    // Preparing again over existing tables is refused.
    let again = s.run(&["prepare", "oltp_read_write", DB, "--table-size=1000"]);
    assert_eq!(again.code, 1);
    assert!(again.stderr.contains("already exists"), "{}", again.stderr);
}

#[test]
fn read_write_counts_follow_sysbench() {
    let s = prepared("oltp_read_write", &[]);
    let r = run(&s, "oltp_read_write", "100", &[]);
    assert_eq!(r.stat("read:"), 1400);
    assert_eq!(r.stat("write:"), 400);
    assert_eq!(r.stat("other:"), 200);
    assert_eq!(r.stat("total:"), 2000);
    assert_eq!(r.stat("transactions:"), 100);
    assert_eq!(r.stat("total number of events:"), 100);
    // Same counts without prepared statements.
    let r = run(&s, "oltp_read_write", "100", &["--db-ps-mode=disable"]);
    assert_eq!(
        (r.stat("read:"), r.stat("write:"), r.stat("other:")),
        (1400, 400, 200)
    );
    // Delete/insert pairs keep the row count.
    assert_eq!(
        count(&s.db("t.sqlite"), "SELECT COUNT(*) FROM sbtest1"),
        1000
    );
}

#[test]
fn read_only_write_only_and_options_change_the_mix() {
    let s = prepared("oltp_read_only", &[]);
    let r = run(&s, "oltp_read_only", "50", &[]);
    assert_eq!(
        (r.stat("read:"), r.stat("write:"), r.stat("other:")),
        (700, 0, 100)
    );
    let r = run(
        &s,
        "oltp_read_only",
        "50",
        &["--range-selects=off", "--skip-trx=on"],
    );
    assert_eq!(
        (r.stat("read:"), r.stat("write:"), r.stat("other:")),
        (500, 0, 0)
    );
    let r = run(&s, "oltp_write_only", "50", &[]);
    assert_eq!(
        (r.stat("read:"), r.stat("write:"), r.stat("other:")),
        (0, 200, 100)
    );
    let r = run(
        &s,
        "oltp_read_write",
        "10",
        &["--point_selects=2", "--index_updates=3"],
    );
    assert_eq!((r.stat("read:"), r.stat("write:")), (60, 60));
}

#[test]
fn single_statement_workloads() {
    let s = prepared("oltp_point_select", &[]);
    let r = run(&s, "oltp_point_select", "300", &[]);
    assert_eq!(
        (r.stat("read:"), r.stat("write:"), r.stat("other:")),
        (300, 0, 0)
    );
    let before: i64 = count(&s.db("t.sqlite"), "SELECT SUM(k) FROM sbtest1");
    let r = run(&s, "oltp_update_index", "300", &[]);
    assert_eq!(r.stat("write:"), 300);
    let after: i64 = count(&s.db("t.sqlite"), "SELECT SUM(k) FROM sbtest1");
    assert_eq!(after - before, 300);
    let r = run(&s, "oltp_update_non_index", "300", &[]);
    assert_eq!(r.stat("write:"), 300);
    let r = run(&s, "select_random_points", "200", &[]);
    assert_eq!(r.stat("read:"), 200);
    let r = run(
        &s,
        "select_random_ranges",
        "200",
        &["--number-of-ranges=4", "--delta=20"],
    );
    assert_eq!(r.stat("read:"), 200);
}

#[test]
fn delete_and_insert_change_the_row_count() {
    let s = prepared("oltp_delete", &[]);
    let r = run(&s, "oltp_delete", "200", &[]);
    let deleted = r.stat("write:");
    // Repeated ids find nothing to delete: those count as "other".
    assert_eq!(deleted + r.stat("other:"), 200);
    assert!(deleted > 20, "{deleted}");
    let db = s.db("t.sqlite");
    assert_eq!(
        count(&db, "SELECT COUNT(*) FROM sbtest1"),
        1000 - deleted as i64
    );

    let r = run(&s, "oltp_insert", "150", &[]);
    assert_eq!(r.stat("write:"), 150);
    assert_eq!(
        count(&db, "SELECT COUNT(*) FROM sbtest1"),
        1150 - deleted as i64
    );
    // Without auto_inc dbmeter picks ids above every existing one.
    let r = run(&s, "oltp_insert", "50", &["--auto-inc=off", "--threads=2"]);
    assert_eq!(r.stat("write:"), 50);
    assert_eq!(
        count(&db, "SELECT COUNT(*) FROM sbtest1"),
        1200 - deleted as i64
    );
}

#[test]
fn bulk_insert_appends_to_one_table_per_thread() {
    let s = Scratch::new();
    s.ok(&["prepare", "bulk_insert", DB, "--threads=2"]);
    let db = s.db("t.sqlite");
    assert_eq!(tables(&db), vec!["sbtest1", "sbtest2"]);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM sbtest1"), 0);
    let r = s.ok(&[
        "run",
        "bulk_insert",
        DB,
        "--threads=2",
        "--time=0",
        "--events=30000",
    ]);
    assert_eq!(r.stat("total number of events:"), 30000);
    let rows =
        count(&db, "SELECT COUNT(*) FROM sbtest1") + count(&db, "SELECT COUNT(*) FROM sbtest2");
    assert_eq!(rows, 30000);
    // A second run appends after the existing rows.
    s.ok(&[
        "run",
        "bulk_insert",
        DB,
        "--threads=2",
        "--time=0",
        "--events=1000",
    ]);
    let rows =
        count(&db, "SELECT COUNT(*) FROM sbtest1") + count(&db, "SELECT COUNT(*) FROM sbtest2");
    assert_eq!(rows, 31000);
}

#[test]
fn prewarm_and_cleanup() {
    let s = prepared("oltp_read_write", &["--tables=3"]);
    let r = s.ok(&["prewarm", "oltp_read_write", DB, "--tables=3"]);
    assert!(
        r.stdout.contains("Read 3000 rows in 3 tables"),
        "{}",
        r.stdout
    );
    let r = s.ok(&["cleanup", "oltp_read_write", DB]);
    assert!(r.stdout.contains("Dropped 3 table(s)"), "{}", r.stdout);
    assert!(tables(&s.db("t.sqlite")).is_empty());
    let r = s.ok(&["cleanup", "oltp_read_write", DB]);
    assert!(r.stdout.contains("nothing to drop"), "{}", r.stdout);
}

#[test]
fn sysbench_argument_order_and_spellings() {
    let s = prepared("oltp_point_select", &[]);
    // sysbench's order: workload, options, then the command.
    let r = s.ok(&[
        "oltp_point_select",
        DB,
        "--table_size",
        "1000",
        "--events=20",
        "--time",
        "0",
        "run",
    ]);
    assert_eq!(r.stat("read:"), 20);
}

#[test]
fn concurrent_writers_on_sqlite_retry_busy_and_finish() {
    let s = prepared("oltp_read_write", &[]);
    let r = run(&s, "oltp_read_write", "400", &["--threads=4"]);
    assert_eq!(r.stat("transactions:"), 400);
    // Each restarted attempt is counted under its SQLite code.
    let ignored = r.stat("ignored errors:");
    if ignored > 0 {
        assert!(r.stdout.contains("SQLITE_BUSY"), "{}", r.stdout);
    }
}
