//! `dbmeter mysqlslap ARGS` against real mariadb-slap (Debian's MariaDB
//! client) on a throwaway MariaDB: the same command line sends the same
//! statements, iteration by iteration (counted by kind in the server's
//! general log), and prints the same report lines (timings aside);
//! `--only-print` prints what mariadb-slap prints; `--csv` writes its
//! lines; a concurrency list gives a block per level; `dbmeter slap` runs
//! the same test on PostgreSQL and SQLite; bad input is one line.

use crate::common::*;
use dbmeter_server::{Flavor, Server};
use dbmeter_testkit::servers::{ask, ask_on, start, start_with};
use dbmeter_testkit::tools::Tool;
use std::collections::BTreeMap;
use std::process::Command;

const MARIADB_SLAP: Tool = Tool::on_path_for(
    "mariadb-slap",
    "mariadb-client",
    dbmeter_testkit::Requirement::Tools,
    &["mariadb-slap"],
);

/// The connection options, then `args`.
fn argv(server: &Server, args: &[&str]) -> Vec<String> {
    let port = server.port().to_string();
    let mut v: Vec<String> = [
        "--no-defaults",
        "-h",
        "127.0.0.1",
        "-P",
        &port,
        "-u",
        "root",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.extend(args.iter().map(|s| s.to_string()));
    v
}

/// mariadb-slap's stdout.
fn theirs(program: &std::path::Path, server: &Server, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(argv(server, args))
        .output()
        .unwrap_or_else(|e| panic!("run mariadb-slap: {e}"));
    assert!(
        out.status.success(),
        "mariadb-slap {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `dbmeter mysqlslap` with the same arguments; its stdout.
fn ours(s: &Scratch, server: &Server, args: &[&str]) -> String {
    let mut all = vec!["mysqlslap".to_string()];
    all.extend(argv(server, args));
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    let r = s.run(&all);
    assert_eq!(r.code, 0, "dbmeter {all:?}:\n{}\n{}", r.stdout, r.stderr);
    // As mariadb-slap, nothing on stderr.
    assert_eq!(r.stderr, "", "dbmeter {all:?}");
    r.stdout
}

/// The report with its timings masked.
fn masked(report: &str) -> Vec<String> {
    report
        .lines()
        .map(|l| match l.find(": ") {
            Some(at) if l.ends_with(" seconds") => format!("{}: T seconds", &l[..at]),
            _ => l.to_string(),
        })
        .collect()
}

/// The statements the server ran since the last call, by kind (the
/// test's own questions and dbmeter's readings of the server's facts
/// left out); then the log is emptied.
fn statements(server: &Server, own: &[&str]) -> BTreeMap<String, u64> {
    let log = ask_on(
        server,
        "mysql",
        "SELECT command_type, argument FROM mysql.general_log",
    );
    ask_on(server, "mysql", "TRUNCATE TABLE mysql.general_log");
    let mut counts = BTreeMap::new();
    for line in log.lines() {
        let (cmd, arg) = line.split_once('\t').unwrap_or((line, ""));
        let arg = arg.trim_end_matches("\\0");
        let kind = if cmd == "Init DB" {
            Some("use".to_string())
        } else if cmd != "Query" {
            None
        } else if let Some(o) = own.iter().find(|o| arg == **o) {
            Some((*o).to_string())
        } else {
            [
                ("INSERT INTO t1", "insert"),
                ("SELECT intcol", "select"),
                ("SELECT charcol", "select"),
                ("SELECT id from t1", "keys"),
                ("UPDATE t1", "update"),
                ("CREATE TABLE", "create table"),
                ("DROP SCHEMA", "drop schema"),
                ("CREATE SCHEMA", "create schema"),
                ("SET AUTOCOMMIT", "set autocommit"),
                ("COMMIT", "commit"),
                ("USE ", "use"),
            ]
            .iter()
            .find(|(p, _)| arg.starts_with(p))
            .map(|(_, k)| k.to_string())
        };
        if let Some(k) = kind {
            *counts.entry(k).or_insert(0) += 1;
        }
    }
    counts
}

#[test]
fn mariadb_same_statements_and_report_lines_as_mariadb_slap() {
    let Some(program) = MARIADB_SLAP.find_or_skip() else {
        return;
    };
    let Some(server) = start_with(
        Flavor::MariaDb,
        &[("general_log", "1"), ("log_output", "TABLE")],
    ) else {
        return;
    };
    let s = Scratch::new();
    let own = [
        "CREATE TABLE a (b int) Engine = innodb",
        "CREATE TABLE a (b int) Engine = memory",
        "INSERT INTO a VALUES (1),(2)",
        "SELECT b FROM a WHERE b = 1",
        "UPDATE a SET b = b",
        "SET @slap_pre = 1",
        "SELECT 'slap post'",
        "SET @slap_init = 1",
    ];
    let cases: Vec<(Vec<&str>, u64)> = vec![
        // Generated, mixed, two levels, two iterations, a split of the queries.
        (
            vec![
                "-a",
                "--auto-generate-sql-add-autoincrement",
                "-c",
                "1,3",
                "-i",
                "2",
                "--number-of-queries=12",
            ],
            2,
        ),
        // Keyed reads with a GUID key, commits, reconnects.
        (
            vec![
                "--auto-generate-sql",
                "--auto-generate-sql-guid-primary",
                "--auto-generate-sql-load-type=key",
                "--auto-generate-sql-write-number=20",
                "--commit=3",
                "--detach=4",
                "--init-command=SET @slap_init = 1",
                "-c2",
                "--auto-generate-sql-execute-number=7",
            ],
            1,
        ),
        // Updates and writes, indexed columns, the list once per client.
        (
            vec![
                "-a",
                "--auto-generate-sql-load-type=update",
                "-x",
                "2:1",
                "-y",
                "3",
                "--auto-generate-sql-secondary-indexes=1",
                "-c",
                "2",
            ],
            1,
        ),
        // Given statements, two engines, pre- and post-queries.
        (
            vec![
                "--create=CREATE TABLE a (b int);INSERT INTO a VALUES (1),(2)",
                "--query=SELECT b FROM a WHERE b = 1;UPDATE a SET b = b",
                "--delimiter=;",
                "--engine=innodb,memory",
                "--pre-query=SET @slap_pre = 1",
                "--post-query=SELECT 'slap post'",
                "--concurrency=2",
                "--iterations=2",
                "--number-of-queries=9",
            ],
            2,
        ),
    ];
    statements(&server, &own);
    // The first case, counted by hand: per iteration the schema dropped
    // and created, 99 INSERTs of the create step, the keys read; 1 client
    // runs 12 statements of the 11-long mixed list (7 INSERTs, 5 SELECTs),
    // 3 clients 4 each (2 and 2); the schema dropped once more at the end.
    let first: BTreeMap<String, u64> = [
        ("create schema", 4),
        ("create table", 4),
        ("drop schema", 5),
        ("insert", 4 * 99 + 2 * 7 + 2 * 6),
        ("keys", 4),
        ("select", 2 * 5 + 2 * 6),
        ("use", 4),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), *v))
    .collect();
    for (n, (args, blocks)) in cases.iter().enumerate() {
        let a = theirs(&program, &server, args);
        let want = statements(&server, &own);
        let b = ours(&s, &server, args);
        let got = statements(&server, &own);
        assert_eq!(got, want, "{args:?}: statements by kind");
        assert!(want.values().sum::<u64>() > 10, "{args:?}: {want:?}");
        if n == 0 {
            assert_eq!(want, first, "{args:?}");
        }
        assert_eq!(masked(&b), masked(&a), "{args:?}:\n{b}\n---\n{a}");
        assert_eq!(
            a.matches("Benchmark\n").count() as u64,
            *blocks,
            "{args:?}: {a}"
        );
    }
    // mysqlslap drops its schema at the end.
    assert_eq!(
        ask(
            &server,
            "SELECT count(*) FROM information_schema.schemata WHERE schema_name = 'mysqlslap'"
        ),
        "0"
    );
    // dbmeter slap adds its latency line to each block.
    let port = server.port().to_string();
    let db = format!("--db=mysql://root@127.0.0.1:{port}/");
    let r = s.ok(&[
        "slap",
        &db,
        "--auto-generate-sql",
        "--concurrency=1,2",
        "--number-of-queries=10",
    ]);
    assert_eq!(r.stdout.matches("Benchmark\n").count(), 2, "{}", r.stdout);
    // dbmeter's warnings, if any, once each (not once per run).
    let mut warnings: Vec<&str> = r.stderr.lines().collect();
    let n = warnings.len();
    warnings.sort_unstable();
    warnings.dedup();
    assert_eq!(warnings.len(), n, "{}", r.stderr);
    assert_eq!(
        r.stdout.matches("\tStatement latency (ms) over ").count(),
        2,
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("\tStatement latency (ms) over 10 statements: min "),
        "{}",
        r.stdout
    );
}

#[test]
fn only_print_prints_what_mariadb_slap_prints() {
    let Some(program) = MARIADB_SLAP.find_or_skip() else {
        return;
    };
    let s = Scratch::new();
    for args in [
        vec!["-a"],
        vec![
            "-a",
            "--auto-generate-sql-load-type=key",
            "--auto-generate-sql-add-autoincrement",
            "-c",
            "2,3",
            "-i",
            "2",
            "--number-of-queries=13",
            "--commit=4",
        ],
        vec![
            "-a",
            "--auto-generate-sql-load-type=write",
            "--auto-generate-sql-guid-primary",
            "-x",
            "2:1",
            "-y",
            "0",
            "--auto-generate-sql-unique-query-number=3",
            "--auto-generate-sql-write-number=7",
            "--engine=memory:max_rows=500",
        ],
        vec![
            "--create=CREATE TABLE a (b int);INSERT INTO a VALUES (1)",
            "--query=SELECT * FROM a;SELECT 1",
            "--delimiter=;",
            "-e",
            "innodb,memory",
            "--number-of-queries=3",
        ],
    ] {
        let mut full = vec!["--no-defaults", "--only-print"];
        full.extend(&args);
        let out = Command::new(&program)
            .args(&full)
            .output()
            .expect("run mariadb-slap");
        let want = String::from_utf8_lossy(&out.stdout).into_owned();
        let mut mine = vec!["mysqlslap"];
        mine.extend(&full);
        let got = s.ok(&mine).stdout;
        assert!(want.lines().count() > 4, "{args:?}: {want}");
        if args.contains(&"-c") {
            // Several clients: mariadb-slap's threads print as the
            // scheduler runs them, so its order changes from run to run
            // on a loaded machine; the lines printed do not.
            let sorted = |t: &str| {
                let mut v: Vec<String> = t.lines().map(str::to_string).collect();
                v.sort();
                v
            };
            assert_eq!(sorted(&got), sorted(&want), "{args:?}");
        } else {
            assert_eq!(got, want, "{args:?}");
        }
    }
}

#[test]
fn csv_lines_and_a_block_per_level() {
    let Some(program) = MARIADB_SLAP.find_or_skip() else {
        return;
    };
    let Some(server) = start(Flavor::MariaDb) else {
        return;
    };
    let s = Scratch::new();
    let args = [
        "-a",
        "--auto-generate-sql-load-type=read",
        "-c",
        "1,2,4",
        "--number-of-queries=8",
        "--csv",
    ];
    let a = theirs(&program, &server, &args);
    let b = ours(&s, &server, &args);
    let fields = |text: &str| -> Vec<Vec<String>> {
        text.lines()
            .map(|l| {
                l.split(',')
                    .enumerate()
                    .map(|(i, f)| {
                        if (2..5).contains(&i) {
                            "T".into()
                        } else {
                            f.into()
                        }
                    })
                    .collect()
            })
            .collect()
    };
    assert_eq!(fields(&b), fields(&a), "{b}\n---\n{a}");
    let want: Vec<Vec<String>> = [",read,T,T,T,1,8", ",read,T,T,T,2,4", ",read,T,T,T,4,2"]
        .iter()
        .map(|r| r.split(',').map(String::from).collect())
        .collect();
    assert_eq!(fields(&b), want);
    // --csv=FILE appends, and prints no blocks.
    let file = s.path("slap.csv");
    std::fs::write(&file, "earlier\n").expect("write");
    let csv = format!("--csv={}", file.display());
    let out = ours(&s, &server, &["-a", "-c", "1,2", &csv]);
    assert_eq!(out, "");
    let text = std::fs::read_to_string(&file).expect("read csv");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert_eq!(lines[0], "earlier");
    assert!(
        lines[1].starts_with(",mixed,") && lines[1].ends_with(",1,0"),
        "{text}"
    );
    assert!(lines[2].ends_with(",2,0"), "{text}");

    // Defaults from ~/.my.cnf: the server in [client], mysqlslap's own
    // options in [mysqlslap], before the command line.
    let home = s.path("home");
    std::fs::create_dir(&home).expect("mkdir");
    std::fs::write(
        home.join(".my.cnf"),
        format!(
            "[client]\nhost=127.0.0.1\nport={}\nuser=root\n[mysqlslap]\nauto-generate-sql\nconcurrency=3\n",
            server.port()
        ),
    )
    .expect("write .my.cnf");
    let run = |program: &str| {
        let mut c = Command::new(program);
        c.args(["--csv", "--auto-generate-sql-load-type=write"])
            .env("HOME", &home)
            .current_dir(s.dir.path());
        let o = c.output().expect("run");
        assert!(o.status.success(), "{program}: {o:?}");
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let want = run(program.to_str().expect("utf-8 path"));
    let mut ours = Command::new(bin());
    ours.args(["mysqlslap", "--csv", "--auto-generate-sql-load-type=write"])
        .env("HOME", &home)
        .current_dir(s.dir.path());
    let o = ours.output().expect("run dbmeter");
    let got = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(want.ends_with(",3,0\n"), "{want}");
    assert_eq!(fields(&got), fields(&want));

    // A password is never shown, even when the server refuses it.
    let port = server.port().to_string();
    let r = s.run(&[
        "mysqlslap",
        "--no-defaults",
        "-h",
        "127.0.0.1",
        "-P",
        &port,
        "-u",
        "nobody_here",
        "-pS3cretPw",
        "-a",
    ]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(
        !format!("{}{}", r.stdout, r.stderr).contains("S3cretPw"),
        "{}",
        r.stderr
    );
}

/// The rows a run leaves with --no-drop: the create step's INSERTs and
/// the clients' (a mixed list alternates INSERT and SELECT).
fn no_drop_args() -> Vec<&'static str> {
    vec![
        "slap",
        "--auto-generate-sql",
        "--auto-generate-sql-add-autoincrement",
        "--concurrency=2",
        "--number-of-queries=20",
        "--no-drop",
    ]
}

#[test]
fn postgres_and_sqlite_run_the_generated_sql() {
    let s = Scratch::new();
    // SQLite: the file holds the tables; 99 INSERTs in the create step,
    // then each client's 10 statements hold 5 INSERTs.
    let mut args = no_drop_args();
    args.push("--db=sqlite:slap.db");
    let r = s.ok(&args);
    assert!(
        r.stdout
            .contains("\tNumber of clients running queries: 2\n")
            && r.stdout
                .contains("\tAverage number of queries per client: 10\n"),
        "{}",
        r.stdout
    );
    assert_eq!(count(&s.db("slap.db"), "SELECT count(*) FROM t1"), 109);
    // Without --no-drop the table is gone after the test.
    s.ok(&[
        "slap",
        "--db=sqlite:slap.db",
        "--auto-generate-sql",
        "--auto-generate-sql-load-type=update",
        "--concurrency=1,2",
        "--iterations=2",
    ]);
    assert!(!tables(&s.db("slap.db")).contains(&"t1".to_string()));
    // Shell commands around each iteration, without the environment's
    // passwords; a failing one is a warning, said once.
    let mut c = s.cmd(&[
        "slap",
        "--db=sqlite:slap.db",
        "--auto-generate-sql",
        "--concurrency=1,2",
        "--iterations=2",
        "--pre-system=echo pre >> sys.log; env >> env.log",
        "--post-system=echo post >> sys.log; false",
    ]);
    c.env("MYSQL_PWD", "HushHush1")
        .env("PGPASSWORD", "HushHush2");
    let r = s.output(c);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let log = std::fs::read_to_string(s.path("sys.log")).expect("sys.log");
    assert_eq!(log.matches("pre\n").count(), 4, "{log}");
    assert_eq!(log.matches("post\n").count(), 4, "{log}");
    let env = std::fs::read_to_string(s.path("env.log")).expect("env.log");
    assert!(!env.contains("HushHush"), "{env}");
    assert_eq!(
        r.stderr.matches("WARNING: --post-system: ").count(),
        1,
        "{}",
        r.stderr
    );

    let Some(server) = start(Flavor::Postgres) else {
        return;
    };
    let db = format!("--db={}", server.url());
    let mut args = no_drop_args();
    args.push(&db);
    let r = s.ok(&args);
    assert_eq!(r.stdout.matches("Benchmark\n").count(), 1, "{}", r.stdout);
    assert_eq!(
        ask_on(&server, "test", "SELECT count(*) FROM mysqlslap.t1"),
        "109"
    );
    // Keyed reads with a GUID key, commits and reconnects; then the schema
    // is dropped.
    let r = s.ok(&[
        "slap",
        &db,
        "--auto-generate-sql",
        "--auto-generate-sql-guid-primary",
        "--auto-generate-sql-load-type=key",
        "--commit=3",
        "--detach=4",
        "--concurrency=1,3",
        "--number-of-queries=12",
        "--engine=innodb",
    ]);
    assert_eq!(r.stdout.matches("Benchmark\n").count(), 2, "{}", r.stdout);
    assert_eq!(
        r.stderr
            .matches("WARNING: --engine=innodb: storage engines are MariaDB/MySQL's")
            .count(),
        1,
        "{}",
        r.stderr
    );
    assert_eq!(
        ask_on(
            &server,
            "test",
            "SELECT count(*) FROM pg_namespace WHERE nspname = 'mysqlslap'"
        ),
        "0"
    );
}

#[test]
fn bad_input_is_one_line() {
    let s = Scratch::new();
    std::fs::write(s.path("empty.sql"), "\n\n").expect("write");
    std::fs::write(s.path("binary.sql"), [0xffu8, 0xfe, 0x00, 0x80]).expect("write");
    std::fs::create_dir(s.path("dir.sql")).expect("mkdir");
    for (args, code) in [
        (vec!["mysqlslap", "--only-print", "--query=empty.sql"], 2),
        (vec!["mysqlslap", "--only-print", "--query=binary.sql"], 2),
        (vec!["mysqlslap", "--only-print", "--query=dir.sql"], 2),
        (vec!["mysqlslap", "--only-print", "-a", "-c", "0"], 2),
        (
            vec!["mysqlslap", "--only-print", "-a", "--query=SELECT 1"],
            2,
        ),
        (
            vec!["mysqlslap", "--only-print", "-a", "--engine=inno db"],
            2,
        ),
        (
            vec![
                "mysqlslap",
                "--only-print",
                "-a",
                "--auto-generate-sql-load-type=key",
            ],
            2,
        ),
        (vec!["mysqlslap", "--bogus"], 2),
        (vec!["mysqlslap", "-C", "-a"], 2),
        (vec!["mysqlslap", "-c"], 2),
        (vec!["slap", "--db=sqlite:x.db", "-a", "--iterations=0"], 2),
        (vec!["slap", "--db=sqlite:x.db"], 2),
        // A statement the target refuses ends the test with its error.
        (
            vec![
                "slap",
                "--db=sqlite:x.db",
                "--query=SELECT * FROM missing_table",
            ],
            1,
        ),
    ] {
        let r = s.run(&args);
        assert_eq!(r.code, code, "{args:?}: {}{}", r.stdout, r.stderr);
        let lines: Vec<&str> = r.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{args:?}: {}", r.stderr);
        assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    }
    let r = s.run(&["mysqlslap", "--only-print", "--query=empty.sql"]);
    assert!(
        r.stderr.starts_with("mysqlslap: --query: no statement"),
        "{}",
        r.stderr
    );
    let r = s.run(&[
        "slap",
        "--db=sqlite:x.db",
        "--query=SELECT * FROM missing_table",
    ]);
    assert!(r.stderr.contains("missing_table"), "{}", r.stderr);
}
