//! The pgbench benchmark against real pgbench 15 on a throwaway
//! PostgreSQL: `prepare` makes the tables `pgbench -i` makes, and runs with
//! the same clients, transactions per client and random seed run the same
//! transactions (same scripts chosen, same values drawn, so the same rows
//! in pgbench_history); script files with meta-commands; SQLite; a bad
//! script.

use crate::common::*;
use dbmeter_server::{Flavor, Server};
use dbmeter_testkit::servers::ask_on as psql;
use dbmeter_testkit::servers::{ask, start};
use dbmeter_testkit::tools::PGBENCH;
use std::process::Command;

/// Real pgbench on database `db`.
fn pgbench(server: &Server, db: &str, args: &[&str]) -> String {
    let program = PGBENCH
        .find()
        .expect("pgbench, looked for by the test first");
    let out = Command::new(program)
        .args(["-h", "127.0.0.1", "-p", &server.port().to_string()])
        .args(["-U", "postgres"])
        .args(args)
        .arg(db)
        .output()
        .unwrap_or_else(|e| panic!("run pgbench: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "pgbench {args:?}: {text}");
    text
}

/// What `\d` shows of pgbench's tables, their rows and balances.
fn schema_and_data(server: &Server, db: &str) -> Vec<String> {
    let tables = "('pgbench_accounts','pgbench_branches','pgbench_history','pgbench_tellers')";
    vec![
        psql(
            server,
            db,
            &format!(
                "SELECT table_name, column_name, ordinal_position, data_type, character_maximum_length, is_nullable, column_default \
                 FROM information_schema.columns WHERE table_name IN {tables} ORDER BY 1, 3"
            ),
        ),
        psql(
            server,
            db,
            &format!(
                "SELECT tablename, indexname, indexdef FROM pg_indexes WHERE tablename IN {tables} ORDER BY 1, 2"
            ),
        ),
        psql(
            server,
            db,
            &format!(
                "SELECT conrelid::regclass, conname, pg_get_constraintdef(oid) FROM pg_constraint \
                 WHERE conrelid::regclass::text IN {tables} ORDER BY 1, 2"
            ),
        ),
        psql(
            server,
            db,
            &format!(
                "SELECT relname, relkind, relpersistence, reloptions FROM pg_class WHERE relname IN {tables} ORDER BY 1"
            ),
        ),
        psql(
            server,
            db,
            "SELECT (SELECT count(*) || ' ' || count(filler) || ' ' || sum(abalance) || ' ' || sum(bid) || ' ' || sum(aid) || ' ' || max(length(filler)) FROM pgbench_accounts), \
                    (SELECT count(*) || ' ' || count(filler) || ' ' || sum(bbalance) || ' ' || sum(bid) FROM pgbench_branches), \
                    (SELECT count(*) || ' ' || count(filler) || ' ' || sum(tbalance) || ' ' || sum(bid) || ' ' || sum(tid) FROM pgbench_tellers), \
                    (SELECT count(*) FROM pgbench_history)",
        ),
    ]
}

#[test]
fn prepare_makes_the_tables_pgbench_i_makes() {
    if PGBENCH.find_or_skip().is_none() {
        return;
    }
    let Some(server) = start(Flavor::Postgres) else {
        return;
    };
    ask(&server, "CREATE DATABASE theirs");
    let s = Scratch::new();
    for (theirs, ours) in [
        (vec!["-i", "-s", "2"], vec!["--scale=2"]),
        (
            vec![
                "-i",
                "-s",
                "2",
                "-I",
                "dtGvp",
                "-F",
                "90",
                "--foreign-keys",
                "--unlogged-tables",
            ],
            vec![
                "--scale=2",
                "--init-steps=dtGvp",
                "--fillfactor=90",
                "--foreign-keys",
                "--unlogged-tables",
            ],
        ),
    ] {
        pgbench(&server, "theirs", &theirs);
        let db = format!("--db={}", server.url());
        let mut args = vec!["prepare", "pgbench", db.as_str()];
        args.extend(&ours);
        let r = s.ok(&args);
        assert!(r.stdout.contains("creating tables..."), "{}", r.stdout);
        let want = schema_and_data(&server, "theirs");
        let got = schema_and_data(&server, "test");
        assert_eq!(got, want, "{ours:?} against pgbench {theirs:?}");
        assert!(want[0].contains("pgbench_accounts|filler|4|character|84"));
    }
    // --foreign-keys made the same constraints.
    assert!(
        psql(
            &server,
            "test",
            "SELECT count(*) FROM pg_constraint WHERE contype = 'f'"
        ) == "5"
    );
    let db = format!("--db={}", server.url());
    s.ok(&["cleanup", "pgbench", &db]);
    assert_eq!(
        psql(
            &server,
            "test",
            "SELECT count(*) FROM pg_tables WHERE tablename LIKE 'pgbench%'"
        ),
        "0"
    );
}

/// What a run left in pgbench_history: rows and the sums of what the
/// transactions drew.
fn history(server: &Server, db: &str) -> String {
    psql(
        server,
        db,
        "SELECT count(*), sum(aid), sum(bid), sum(tid), sum(delta) FROM pgbench_history",
    )
}

fn balances(server: &Server, db: &str) -> String {
    psql(
        server,
        db,
        "SELECT (SELECT sum(abalance) FROM pgbench_accounts), (SELECT sum(bbalance) FROM pgbench_branches), (SELECT sum(tbalance) FROM pgbench_tellers), (SELECT sum(abalance::bigint * aid) FROM pgbench_accounts)",
    )
}

#[test]
fn same_transactions_as_pgbench_for_the_same_seed() {
    if PGBENCH.find_or_skip().is_none() {
        return;
    }
    let Some(server) = start(Flavor::Postgres) else {
        return;
    };
    ask(&server, "CREATE DATABASE theirs");
    pgbench(&server, "theirs", &["-i", "-s", "2", "-q"]);
    let s = Scratch::new();
    let db = format!("--db={}", server.url());
    s.ok(&["prepare", "pgbench", &db, "--scale=2"]);
    for (builtins, mode) in [
        ("tpcb-like", "simple"),
        ("simple-update", "extended"),
        ("select-only", "prepared"),
        ("select-only@2,tpcb-like@1,simple-update@1", "prepared"),
    ] {
        let mut theirs = vec![
            "-c",
            "3",
            "-j",
            "3",
            "-t",
            "20",
            "--random-seed=7",
            "-M",
            mode,
        ];
        let bs: Vec<String> = builtins.split(',').map(|b| format!("-b{b}")).collect();
        theirs.extend(bs.iter().map(String::as_str));
        let out = pgbench(&server, "theirs", &theirs);
        let b = format!("--builtin={builtins}");
        let m = format!("--protocol={mode}");
        let r = s.ok(&[
            "run",
            "pgbench",
            &db,
            "--threads=3",
            "--transactions=20",
            "--random-seed=7",
            &b,
            &m,
        ]);
        let what = format!("{builtins} {mode}");
        assert!(
            r.stdout
                .contains("number of transactions actually processed: 60/60"),
            "{what}: {}",
            r.stdout
        );
        assert!(
            out.contains("number of transactions actually processed: 60/60"),
            "{out}"
        );
        assert!(r.stdout.contains(&format!("query mode: {mode}")));
        // The same scripts were chosen...
        let shares = |text: &str| -> Vec<String> {
            text.lines()
                .filter(|l| l.starts_with(" - ") && l.contains(" transactions ("))
                .map(|l| l.split(" (").next().unwrap_or("").to_string())
                .collect()
        };
        assert_eq!(shares(&r.stdout), shares(&out), "{what}");
        // ...and drew the same values: the same rows were written.
        assert_eq!(
            history(&server, "test"),
            history(&server, "theirs"),
            "{what}"
        );
        assert_eq!(
            balances(&server, "test"),
            balances(&server, "theirs"),
            "{what}"
        );
    }
    // Statements counted per kind in the result: 60 select-only
    // transactions are 60 reads, and -r's lines are there.
    let r = s.ok(&[
        "run",
        "pgbench",
        &db,
        "--threads=3",
        "--transactions=20",
        "--builtin=select-only",
        "--format=json",
    ]);
    let j = r.json();
    assert_eq!(j["totals"]["counts"]["reads"], 60, "{j}");
    assert_eq!(j["totals"]["counts"]["writes"], 0);
    let cmds = &j["pgbench"]["scripts"][0]["commands"];
    assert_eq!(cmds[1]["count"], 60, "{j}");
    assert_eq!(
        cmds[1]["command"],
        "SELECT abalance FROM pgbench_accounts WHERE aid = :aid;"
    );
    let r = s.ok(&["run", "pgbench", &db, "--threads=2", "--transactions=5"]);
    for line in [
        "transaction type: <builtin: TPC-B (sort of)>",
        "scaling factor: 2",
        "number of clients: 2",
        "latency average = ",
        "latency stddev = ",
        "tps = ",
        "statement latencies in milliseconds and failures:",
        "  END;",
        "99th percentile:",
    ] {
        assert!(r.stdout.contains(line), "no '{line}' in:\n{}", r.stdout);
    }
}

const SCRIPT: &str = r"-- a script of our own
\set n random(1, 10)
\set base :base + 0
\if :n > 5
SELECT :n * 2 AS got \gset
\elif :n = 1
SELECT -1 AS got \gset
\else
SELECT CAST(:n AS int) + CAST(:base AS int) AS got \gset
\endif
\sleep 0 ms
INSERT INTO mine(client, v) VALUES (:client_id, :got);
";

#[test]
fn script_files_run_as_pgbench_runs_them() {
    let Some(server) = start(Flavor::Postgres) else {
        return;
    };
    ask(&server, "CREATE DATABASE theirs");
    for db in ["test", "theirs"] {
        psql(&server, db, "CREATE TABLE mine(client int, v int)");
    }
    let s = Scratch::new();
    let file = s.path("mine.sql");
    std::fs::write(&file, SCRIPT).unwrap_or_else(|e| panic!("{e}"));
    let file = file.to_string_lossy().to_string();
    for mode in ["simple", "extended", "prepared"] {
        for db in ["test", "theirs"] {
            psql(&server, db, "TRUNCATE mine");
        }
        pgbench(
            &server,
            "theirs",
            &[
                "-n",
                "-c",
                "2",
                "-t",
                "15",
                "--random-seed=3",
                "-D",
                "base=1000",
                "-M",
                mode,
                "-f",
                &file,
            ],
        );
        let db = format!("--db={}", server.url());
        let f = format!("--file={file}");
        let m = format!("--protocol={mode}");
        s.ok(&[
            "run",
            "pgbench",
            &db,
            &f,
            &m,
            "--threads=2",
            "--transactions=15",
            "--random-seed=3",
            "--define=base=1000",
        ]);
        let rows = "SELECT count(*), sum(v), count(DISTINCT client), min(v), max(v) FROM mine";
        let ours = psql(&server, "test", rows);
        assert_eq!(ours, psql(&server, "theirs", rows), "{mode}");
        assert!(ours.starts_with("30|"), "{ours}");
    }
}

#[test]
fn tpcb_like_runs_on_sqlite() {
    let s = Scratch::new();
    let db = format!("--db=sqlite://{}", s.path("pgb.db").display());
    let r = s.ok(&["prepare", "pgbench", &db]);
    assert!(
        r.stdout.contains("creating primary keys..."),
        "{}",
        r.stdout
    );
    let r = s.ok(&["run", "pgbench", &db, "--transactions=25", "--threads=2"]);
    assert!(
        r.stdout
            .contains("number of transactions actually processed: 50/50"),
        "{}",
        r.stdout
    );
    let conn = s.db("pgb.db");
    assert_eq!(count(&conn, "SELECT count(*) FROM pgbench_history"), 50);
    assert_eq!(
        count(&conn, "SELECT count(*) FROM pgbench_accounts"),
        100_000
    );
    assert_eq!(
        count(
            &conn,
            "SELECT (SELECT sum(abalance) FROM pgbench_accounts) - (SELECT sum(delta) FROM pgbench_history)"
        ),
        0
    );
}

#[test]
fn a_bad_script_names_its_file_and_line() {
    let s = Scratch::new();
    let file = s.path("bad.sql");
    std::fs::write(&file, "\\set a 1\nSELECT :a;\n\\set b 2 +\n").unwrap_or_else(|e| panic!("{e}"));
    // An empty file is an empty SQLite database.
    std::fs::write(s.path("x.db"), "").unwrap_or_else(|e| panic!("{e}"));
    let db = format!("--db=sqlite://{}", s.path("x.db").display());
    let f = format!("--file={}", file.display());
    let r = s.run(&["run", "pgbench", &db, &f]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let err = r.stderr.trim();
    assert!(err.contains("error found here"), "{err}");
    assert!(err.contains("bad.sql:3:"), "{err}");
    let r = s.run(&["run", "pgbench", &db, "--builtin=tpcc"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("no builtin script found for name \"tpcc\"")
    );
}

#[test]
fn builtin_scripts_run_on_mariadb_in_every_mode() {
    let Some(server) = start(Flavor::MariaDb) else {
        return;
    };
    let s = Scratch::new();
    let db = format!("--db={}", server.url());
    let r = s.ok(&["prepare", "pgbench", &db, "--foreign-keys"]);
    assert!(
        r.stdout.contains("creating foreign keys..."),
        "{}",
        r.stdout
    );
    for mode in ["simple", "extended", "prepared"] {
        let m = format!("--protocol={mode}");
        let r = s.ok(&[
            "run",
            "pgbench",
            &db,
            &m,
            "--threads=2",
            "--transactions=10",
        ]);
        assert!(
            r.stdout
                .contains("number of transactions actually processed: 20/20"),
            "{mode}: {}",
            r.stdout
        );
        // 4 writes in each tpcb-like transaction (END is sent as COMMIT).
        assert_eq!(r.stat("write:"), 80, "{mode}");
        assert_eq!(ask(&server, "SELECT COUNT(*) FROM pgbench_history"), "20");
    }
    assert_eq!(
        ask(
            &server,
            "SELECT (SELECT SUM(bbalance) FROM pgbench_branches) = (SELECT SUM(tbalance) FROM pgbench_tellers)"
        ),
        "1"
    );
    s.ok(&["cleanup", "pgbench", &db]);
    assert_eq!(
        ask(
            &server,
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'test' AND table_name LIKE 'pgbench%'"
        ),
        "0"
    );
}
