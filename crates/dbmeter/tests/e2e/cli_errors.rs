//! Bad input gets one clear line and the right exit code; list and help
//! show what exists.

use crate::common::*;

fn fails(s: &Scratch, args: &[&str], code: i32, needle: &str) {
    let r = s.run(args);
    assert_eq!(
        r.code, code,
        "dbmeter {args:?}:\n{}\n{}",
        r.stdout, r.stderr
    );
    let line = r.stderr.trim();
    assert_eq!(line.lines().count(), 1, "one line expected:\n{line}");
    assert!(line.starts_with("dbmeter: "), "{line}");
    assert!(line.contains(needle), "expected '{needle}' in: {line}");
    assert!(
        !line.contains("panicked") && !r.stderr.contains("RUST_BACKTRACE"),
        "{line}"
    );
}

#[test]
fn usage_errors_exit_2() {
    let s = Scratch::new();
    fails(
        &s,
        &["run", "oltp_read_wrte"],
        2,
        "unknown workload 'oltp_read_wrte'; did you mean oltp_read_write?",
    );
    fails(
        &s,
        &["run", "oltp_read_write", "--thread=4"],
        2,
        "unknown option --thread for oltp_read_write; did you mean --threads?",
    );
    fails(
        &s,
        &["run", "oltp_read_write", "--threads=four"],
        2,
        "--threads=four: invalid value",
    );
    fails(
        &s,
        &["run", "oltp_read_write", "--threads=0"],
        2,
        "--threads=0",
    );
    fails(
        &s,
        &["run", "oltp_read_write", "--rand-type=normal"],
        2,
        "one of uniform, gaussian, special, pareto, zipfian",
    );
    fails(
        &s,
        &["run", "oltp_read_write", "--percentile=0,101"],
        2,
        "--percentile=0,101",
    );
    fails(
        &s,
        &["run", "oltp_read_write", "--db=oracle://x"],
        2,
        "unknown database type 'oracle'",
    );
    fails(
        &s,
        &["run", "oltp_read_write", "--threads"],
        2,
        "--threads needs a value",
    );
    fails(&s, &["run"], 2, "which workload?");
    fails(&s, &["oltp_read_write"], 2, "missing command");
    fails(
        &s,
        &["run", "oltp_read_write", "extra"],
        2,
        "unexpected argument 'extra'",
    );
    fails(
        &s,
        &["run", "oltp_point_select", "--random_points=3"],
        2,
        "unknown option --random-points",
    );
    // A mistyped command is named, with the command it looks like.
    fails(
        &s,
        &["prepar", "oltp_read_write"],
        2,
        "unknown command 'prepar'; did you mean prepare?",
    );
    fails(
        &s,
        &["RUN", "oltp_read_write"],
        2,
        "unknown command 'RUN'; did you mean run?",
    );
    fails(
        &s,
        &["qeuries", "tpch"],
        2,
        "unknown command 'qeuries'; did you mean queries?",
    );
    fails(&s, &["campain"], 2, "did you mean campaign?");
    // Nothing was created by these.
    assert!(!exists(&s.path("dbmeter.sqlite")));
    // No arguments: the short usage, exit 2.
    let r = s.run(&[]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.starts_with("Usage: dbmeter COMMAND"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.lines().count() <= 6 && r.stdout.is_empty(),
        "{}",
        r.stderr
    );
}

#[test]
fn failures_exit_1() {
    let s = Scratch::new();
    for cmd in ["run", "prewarm", "cleanup"] {
        fails(
            &s,
            &[cmd, "oltp_read_write", "--db=sqlite:other.sqlite"],
            1,
            "other.sqlite does not exist; run `dbmeter prepare oltp_read_write`",
        );
    }
    assert!(
        !exists(&s.path("other.sqlite")),
        "only prepare creates the file"
    );
    s.db("other.sqlite")
        .execute_batch("CREATE TABLE unrelated (x INTEGER)")
        .unwrap();
    fails(
        &s,
        &["run", "oltp_read_write", "--db=sqlite:other.sqlite"],
        1,
        "table sbtest1 does not exist in sqlite:other.sqlite; run `dbmeter prepare oltp_read_write`",
    );
    fails(
        &s,
        &["prewarm", "oltp_read_write", "--db=sqlite:other.sqlite"],
        1,
        "table sbtest1 does not exist",
    );
    std::fs::write(
        s.path("notdb.sqlite"),
        "this is not a database, just text that is long enough to matter",
    )
    .unwrap();
    fails(
        &s,
        &["run", "oltp_read_write", "--db=notdb.sqlite"],
        1,
        "notdb.sqlite is not an SQLite database",
    );
    fails(
        &s,
        &[
            "prepare",
            "oltp_read_write",
            "--db=sqlite:/nonexistent/dir/x.sqlite",
        ],
        1,
        "cannot open SQLite database /nonexistent/dir/x.sqlite",
    );
    fails(
        &s,
        &[
            "run",
            "noop",
            "--time=1",
            "--output=/nonexistent/dir/r.json",
        ],
        1,
        "cannot write --output /nonexistent/dir/r.json",
    );
}

#[test]
fn a_fatal_error_mid_run_keeps_the_partial_report() {
    let s = Scratch::new();
    s.ok(&[
        "prepare",
        "oltp_insert",
        "--db=t.sqlite",
        "--table-size=100",
    ]);
    // Inserting explicit ids that exist fails with a constraint error, which
    // is not ignorable: the run stops after printing what it measured.
    let db = s.db("t.sqlite");
    db.execute_batch("CREATE TRIGGER no_more BEFORE INSERT ON sbtest1 WHEN (SELECT COUNT(*) FROM sbtest1) >= 150 BEGIN SELECT RAISE(ABORT, 'table full'); END;").unwrap();
    let r = s.run(&[
        "run",
        "oltp_insert",
        "--db=t.sqlite",
        "--table-size=100",
        "--time=10",
    ]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("SQL statistics:"), "{}", r.stdout);
    assert_eq!(r.stat("write:"), 50);
    assert!(
        r.stderr.contains("SQLITE_CONSTRAINT: table full"),
        "{}",
        r.stderr
    );
    // Unless the user asks to ignore it: then it is counted and retried until the time is up.
    let r = s.ok(&[
        "run",
        "oltp_insert",
        "--db=t.sqlite",
        "--table-size=100",
        "--time=1",
        "--ignore-errors=SQLITE_CONSTRAINT",
        "--format=json",
    ]);
    let j = r.json();
    assert!(j["errors"]["SQLITE_CONSTRAINT"].as_u64().unwrap() > 10);
    assert_eq!(j["totals"]["events"], 0);
    // Retrying ends with the time limit, not with a forced interruption.
    let dur = j["totals"]["duration_s"].as_f64().unwrap();
    assert!(dur < 1.5, "{dur}");
}

#[test]
fn list_and_help() {
    let s = Scratch::new();
    let r = s.ok(&["list"]);
    for w in [
        "oltp_read_write",
        "oltp_read_only",
        "oltp_write_only",
        "oltp_point_select",
        "oltp_update_index",
        "oltp_update_non_index",
        "oltp_delete",
        "oltp_insert",
        "select_random_points",
        "select_random_ranges",
        "bulk_insert",
        "noop",
    ] {
        assert!(r.stdout.contains(w), "list lacks {w}");
    }
    let r = s.ok(&["help", "oltp_read_write"]);
    assert!(r.stdout.contains("--table_size=N"), "{}", r.stdout);
    assert!(r.stdout.contains("[10000]"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("--rand-type=uniform|gaussian|special|pareto|zipfian"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("--percentile=LIST"), "{}", r.stdout);
    let r = s.ok(&["help", "select_random_points"]);
    assert!(
        r.stdout.contains("--random_points=N") && r.stdout.contains("[10]"),
        "{}",
        r.stdout
    );
    let r = s.ok(&["--help"]);
    assert!(r.stdout.contains("Usage: dbmeter COMMAND"), "{}", r.stdout);
    // Help on a command is its page.
    let r = s.ok(&["help", "run"]);
    assert!(r.stdout.starts_with("Usage: dbmeter run"), "{}", r.stdout);
    let r = s.ok(&["--version"]);
    assert!(r.stdout.starts_with("dbmeter "), "{}", r.stdout);
}

#[test]
fn a_closed_pipe_ends_quietly() {
    let s = Scratch::new();
    let mut child = s.spawn(&["run", "noop", "--time=2", "--report-interval=0.1"]);
    // Read the first bytes, then close the pipe, as `| head -1` does.
    let mut out = child.stdout.take().unwrap();
    let mut first = [0u8; 16];
    std::io::Read::read(&mut out, &mut first).unwrap();
    drop(out);
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "{err}");
}
