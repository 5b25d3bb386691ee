//! `dbmeter sysbench ARGS...`: the same command lines given to the real
//! sysbench (1.0.20, Debian's) and to dbmeter, against throwaway MariaDB
//! and PostgreSQL servers: the same tables after prepare, the same events
//! and read/write/other counts after a run, nothing left after cleanup.
//! Then sysbench 0.5's command lines, --config-file, --version, help,
//! the errors, and passwords kept out of everything.

use crate::common::*;
use dbmeter_server::{Flavor, Server};
use dbmeter_testkit::servers::{ask, ask_n, start};
use dbmeter_testkit::tools::SYSBENCH;
use std::path::Path;
use std::process::Command;

/// Whether sysbench (and the scripts of its package) is here; false after
/// saying that the test skips.
fn have_sysbench() -> bool {
    SYSBENCH.find_or_skip().is_some()
}

/// The real sysbench with `args`, in the scratch directory (after
/// [`have_sysbench`]).
fn sysbench(s: &Scratch, args: &[String]) -> Run {
    let o = Command::new("sysbench")
        .args(args)
        .current_dir(s.dir.path())
        .output()
        .expect("run sysbench");
    Run {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// `dbmeter sysbench` with `args`, in the scratch directory.
fn dbmeter(s: &Scratch, args: &[String]) -> Run {
    let mut all = vec!["sysbench"];
    all.extend(args.iter().map(String::as_str));
    s.run_home(&all)
}

fn ok(what: &str, r: Run, args: &[String]) -> Run {
    assert_eq!(r.code, 0, "{what} {args:?}:\n{}\n{}", r.stdout, r.stderr);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    r
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|a| a.to_string()).collect()
}

/// The counts of a report (sysbench's layout, which dbmeter keeps):
/// events, read, write, other.
fn counts(r: &Run) -> (u64, u64, u64, u64) {
    (
        r.stat("total number of events:"),
        r.stat("read:"),
        r.stat("write:"),
        r.stat("other:"),
    )
}

/// sysbench's connection options for a throwaway server.
fn connection(server: &Server) -> Vec<String> {
    let port = server.port();
    match server.flavor() {
        Flavor::MariaDb => vec![
            "--mysql-host=127.0.0.1".into(),
            format!("--mysql-port={port}"),
            "--mysql-user=root".into(),
            "--mysql-db=test".into(),
        ],
        Flavor::Postgres => vec![
            "--db-driver=pgsql".into(),
            "--pgsql-host=127.0.0.1".into(),
            format!("--pgsql-port={port}"),
            "--pgsql-user=postgres".into(),
            "--pgsql-db=test".into(),
        ],
    }
}

/// The rows of sbtest1..sbtestN, or -1 for a table that is not there.
fn rows(server: &Server, tables: usize) -> Vec<i64> {
    (1..=tables)
        .map(|t| {
            let exists = match server.flavor() {
                Flavor::MariaDb => format!(
                    "SELECT COUNT(*) FROM information_schema.tables \
                     WHERE table_schema='test' AND table_name='sbtest{t}'"
                ),
                Flavor::Postgres => {
                    format!("SELECT COUNT(*) FROM pg_tables WHERE tablename='sbtest{t}'")
                }
            };
            if ask_n(server, &exists) == 0 {
                -1
            } else {
                ask_n(server, &format!("SELECT COUNT(*) FROM sbtest{t}"))
            }
        })
        .collect()
}

/// prepare, run, cleanup with the same argv, by sysbench then by dbmeter.
fn same_as_sysbench(flavor: Flavor) {
    if !have_sysbench() {
        return;
    }
    let Some(server) = start(flavor) else { return };
    let s = Scratch::new();
    let conn = connection(&server);
    // Uniform ids on 2 x 5,000 rows: two users almost never touch one row
    // in the same moment, so that no event restarts and the counts are
    // those of the statements alone.
    for (test, events) in [
        ("oltp_read_write", "--events=60"),
        ("oltp_point_select", "--events=300"),
        ("/usr/share/sysbench/oltp_insert.lua", "--events=100"),
    ] {
        let data = ["--tables=2", "--table-size=5000", "--rand-type=uniform"];
        let line = |command: &str, more: &[&str]| -> Vec<String> {
            let mut v = vec![test.to_string()];
            v.extend(conn.iter().cloned());
            v.extend(data.iter().chain(more).map(|a| a.to_string()));
            v.push(command.into());
            v
        };
        let run = line("run", &[events, "--threads=2", "--time=0"]);
        let mut seen = Vec::new();
        for (who, go) in [
            ("sysbench", sysbench as fn(&Scratch, &[String]) -> Run),
            ("dbmeter sysbench", dbmeter),
        ] {
            let a = line("prepare", &[]);
            ok(who, go(&s, &a), &a);
            let prepared = rows(&server, 2);
            let r = ok(who, go(&s, &run), &run);
            assert!(
                r.stdout.contains("transactions:") && r.stdout.contains("95th percentile:"),
                "{who}: {}",
                r.stdout
            );
            let after = rows(&server, 2);
            let a = line("cleanup", &[]);
            ok(who, go(&s, &a), &a);
            assert_eq!(rows(&server, 2), [-1, -1], "{who} cleanup of {test}");
            seen.push((who, prepared, counts(&r), after));
        }
        let (a, b) = (&seen[0], &seen[1]);
        assert_eq!(a.1, [5000, 5000], "sysbench prepare of {test}");
        assert_eq!(a.1, b.1, "tables after prepare, {test}");
        assert_eq!(a.2, b.2, "events, read, write, other of {test}");
        assert!(a.2.0 > 0 && a.2.1 + a.2.2 > 0, "{test}: {:?}", a.2);
        if test.ends_with("oltp_insert.lua") {
            // Every event inserted one row, with either.
            assert_eq!(a.3.iter().sum::<i64>(), 10_000 + 100);
            assert_eq!(b.3.iter().sum::<i64>(), 10_000 + 100);
        }
    }

    // --percentile and --histogram as sysbench prints them.
    let mut a = vec!["oltp_point_select".to_string()];
    a.extend(conn.iter().cloned());
    a.extend(args(&["--table-size=100", "prepare"]));
    ok("dbmeter sysbench", dbmeter(&s, &a), &a);
    a.pop();
    a.extend(args(&[
        "--events=50",
        "--time=0",
        "--percentile=99",
        "--histogram=on",
        "run",
    ]));
    let r = ok("dbmeter sysbench", dbmeter(&s, &a), &a);
    assert!(r.stdout.contains("99th percentile:"), "{}", r.stdout);
    assert!(!r.stdout.contains("95th percentile:"), "{}", r.stdout);
    let hist = r.stdout.find("Latency histogram").expect("a histogram");
    let sql = r.stdout.find("SQL statistics:").expect("the report");
    assert!(hist < sql, "the histogram comes first, as sysbench's");
    a.pop();
    a.extend(args(&["--percentile=0", "run"]));
    let r = ok("dbmeter sysbench", dbmeter(&s, &a), &a);
    assert!(
        r.stdout.contains("percentile stats:") && r.stdout.contains("disabled"),
        "{}",
        r.stdout
    );
    a.pop();
    a.push("cleanup".into());
    ok("dbmeter sysbench", dbmeter(&s, &a), &a);
}

#[test]
fn same_counts_and_tables_as_sysbench_on_mariadb() {
    same_as_sysbench(Flavor::MariaDb);
}

#[test]
fn same_counts_and_tables_as_sysbench_on_postgres() {
    same_as_sysbench(Flavor::Postgres);
}

/// A small script in sysbench 0.5's API (globals for options, db_query,
/// thread_init/event), which sysbench 1.0 still runs.
const OLD_SCRIPT: &str = r#"
function set_vars()
   oltp_table_size = tonumber(oltp_table_size) or 100
end

function prepare()
   set_vars()
   db_connect()
   db_query("CREATE TABLE t05 (id INTEGER NOT NULL PRIMARY KEY, k INTEGER NOT NULL)")
   for i = 1, oltp_table_size do
      db_query("INSERT INTO t05 VALUES (" .. i .. ", " .. i .. ")")
   end
   print("loaded " .. oltp_table_size)
end

function cleanup()
   db_query("DROP TABLE t05")
end

function thread_init(thread_id)
   set_vars()
end

function event(thread_id)
   db_query("BEGIN")
   db_query("SELECT k FROM t05 WHERE id=" .. sb_rand(1, oltp_table_size))
   db_query("UPDATE t05 SET k=k+1 WHERE id=" .. sb_rand(1, oltp_table_size))
   db_query("COMMIT")
end
"#;

/// sysbench 0.5's command line (--test=, --num-threads, --max-requests,
/// --init-rng, options the script reads as globals), by both.
#[test]
fn a_sysbench_05_command_line() {
    if !have_sysbench() {
        return;
    }
    let Some(server) = start(Flavor::MariaDb) else {
        return;
    };
    let s = Scratch::new();
    std::fs::write(s.path("old.lua"), OLD_SCRIPT).unwrap();
    let line = |more: &[&str]| -> Vec<String> {
        let mut v = args(&["--test=./old.lua", "--oltp-table-size=50"]);
        v.extend(connection(&server));
        v.extend(args(more));
        v
    };
    let run = line(&[
        "--num-threads=2",
        "--max-requests=40",
        "--init-rng=on",
        "run",
    ]);
    let mut seen = Vec::new();
    for (who, go) in [
        ("sysbench", sysbench as fn(&Scratch, &[String]) -> Run),
        ("dbmeter sysbench", dbmeter),
    ] {
        let a = line(&["prepare"]);
        let r = ok(who, go(&s, &a), &a);
        assert!(r.stdout.contains("loaded 50"), "{who}: {}", r.stdout);
        assert_eq!(ask_n(&server, "SELECT COUNT(*) FROM t05"), 50);
        let r = ok(who, go(&s, &run), &run);
        assert!(r.stdout.contains("Number of threads: 2"), "{}", r.stdout);
        seen.push(counts(&r));
        let a = line(&["cleanup"]);
        ok(who, go(&s, &a), &a);
    }
    assert_eq!(seen[0], (40, 40, 40, 80), "sysbench");
    assert_eq!(seen[0], seen[1]);

    // 0.5's oltp.lua, which sysbench 1.0 does not ship: dbmeter runs its
    // native oltp_read_write (same statements) and says so.
    let mut a = args(&["--test=/usr/share/doc/sysbench/tests/db/oltp.lua"]);
    a.extend(connection(&server));
    a.extend(args(&["--oltp-table-size=200", "--oltp-tables-count=2"]));
    let mut prepare = a.clone();
    prepare.push("prepare".into());
    ok("dbmeter sysbench", dbmeter(&s, &prepare), &prepare);
    assert_eq!(rows(&server, 2), [200, 200]);
    let mut run = a.clone();
    run.extend(args(&[
        "--num-threads=1",
        "--max-requests=10",
        "--max-time=0",
        "--oltp-read-only=on",
        "run",
    ]));
    let r = ok("dbmeter sysbench", dbmeter(&s, &run), &run);
    assert!(r.stderr.contains("oltp_read_only"), "{}", r.stderr);
    assert_eq!(counts(&r), (10, 140, 0, 20));
    let mut cleanup = a;
    cleanup.push("cleanup".into());
    ok("dbmeter sysbench", dbmeter(&s, &cleanup), &cleanup);
    assert_eq!(rows(&server, 2), [-1, -1]);
}

/// --mysql-password (and --pgsql-password) never show: not in output,
/// not in errors, not in the stored result.
#[test]
fn the_password_never_appears() {
    let Some(server) = start(Flavor::MariaDb) else {
        return;
    };
    const PW: &str = "Sb-Secr3t-Pw";
    ask(
        &server,
        &format!("CREATE USER 'sb'@'%' IDENTIFIED BY '{PW}'; GRANT ALL ON test.* TO 'sb'@'%'"),
    );
    let s = Scratch::new();
    let store = s.path("results.db");
    let line = |more: &[&str]| -> Vec<String> {
        let mut v = args(&[
            "oltp_point_select",
            "--mysql-host=127.0.0.1",
            "--mysql-user=sb",
            "--mysql-db=test",
            "--table-size=100",
        ]);
        v.push(format!("--mysql-port={}", server.port()));
        v.extend(args(more));
        v
    };
    let mut outputs = String::new();
    let pw = format!("--mysql-password={PW}");
    let keep = format!("--store={}", store.display());
    for more in [
        vec![pw.as_str(), "prepare"],
        vec![
            pw.as_str(),
            "--events=20",
            "--time=0",
            "--report-interval=1",
            keep.as_str(),
            "--debug",
            "run",
        ],
        vec![
            pw.as_str(),
            "--events=5",
            "--format=json",
            keep.as_str(),
            "run",
        ],
        vec![pw.as_str(), "cleanup"],
    ] {
        let a = line(&more);
        let r = ok("dbmeter sysbench", dbmeter(&s, &a), &a);
        outputs.push_str(&r.stdout);
        outputs.push_str(&r.stderr);
    }
    // A wrong password, and a bad value next to the password.
    for more in [
        vec!["--mysql-password=Wrong-Secr3t", "run"],
        vec![pw.as_str(), "--threads=x", "run"],
    ] {
        let r = dbmeter(&s, &line(&more));
        assert_eq!(r.code, 1, "{}", r.stderr);
        assert!(!r.stderr.contains("Wrong-Secr3t"), "{}", r.stderr);
        outputs.push_str(&r.stdout);
        outputs.push_str(&r.stderr);
    }
    assert!(outputs.contains("transactions:"), "{outputs}");
    assert!(!outputs.contains(PW), "the password shows:\n{outputs}");
    let stored = std::fs::read(&store).expect("the store");
    assert!(
        !String::from_utf8_lossy(&stored).contains(PW),
        "the password is in the store"
    );
}

/// --config-file: name=value lines in place of the option, later options
/// win, unknown names skipped with a note (as sysbench skips them).
#[test]
fn config_file() {
    let s = Scratch::new();
    std::fs::write(
        s.path("sb.cfg"),
        "# sysbench options\ndb=sqlite:cfg.db\nthreads = 2\nevents=7\ntime=0\n\
         table_size=100\nfoo=3\n",
    )
    .unwrap();
    let go = |a: &[&str]| {
        let r = dbmeter(&s, &args(a));
        assert_eq!(r.code, 0, "{a:?}:\n{}\n{}", r.stdout, r.stderr);
        r
    };
    let r = go(&["--config-file=sb.cfg", "oltp_point_select", "prepare"]);
    assert!(
        r.stderr
            .contains("sb.cfg:7: ignoring the unknown option 'foo'"),
        "{}",
        r.stderr
    );
    assert_eq!(count(&s.db("cfg.db"), "SELECT COUNT(*) FROM sbtest1"), 100);
    let r = go(&["--config-file=sb.cfg", "oltp_point_select", "run"]);
    assert!(r.stdout.contains("Number of threads: 2"), "{}", r.stdout);
    assert_eq!(r.stat("total number of events:"), 7);
    let r = go(&[
        "--config-file=sb.cfg",
        "--events=9",
        "oltp_point_select",
        "run",
    ]);
    assert_eq!(r.stat("total number of events:"), 9);
    let r = go(&[
        "--events=9",
        "--config-file=sb.cfg",
        "oltp_point_select",
        "run",
    ]);
    assert_eq!(r.stat("total number of events:"), 7);
    let r = dbmeter(
        &s,
        &args(&["--config-file=nope.cfg", "oltp_point_select", "run"]),
    );
    assert_eq!(r.code, 1);
    let said = said(&r);
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(said.contains("FATAL: --config-file=nope.cfg"), "{said}");
}

/// What `dbmeter sysbench` printed besides sysbench's banner (and the
/// blank line after it), stdout then stderr.
fn said(r: &Run) -> String {
    let out = r
        .stdout
        .strip_prefix(&format!(
            "sysbench 1.0.20 (using dbmeter {})\n\n",
            env!("CARGO_PKG_VERSION")
        ))
        .unwrap_or(&r.stdout);
    format!("{out}{}", r.stderr)
}

/// One line (sysbench's `FATAL: ...` on stdout, or its usage line on
/// stderr), and sysbench's exit code.
fn refused(s: &Scratch, a: &[&str], want: &str) {
    let r = dbmeter(s, &args(a));
    assert_eq!(r.code, 1, "{a:?}: {}\n{}", r.stdout, r.stderr);
    let said = said(&r);
    assert_eq!(said.lines().count(), 1, "{a:?}: {said}");
    assert!(said.contains(want), "{a:?}: {said}");
    assert!(!said.contains("panicked"));
}

#[test]
fn version_help_and_errors() {
    if !have_sysbench() {
        return;
    }
    let s = Scratch::new();
    // --version, --help and TEST help print what sysbench prints.
    for a in [&["--version"][..], &["--help"]] {
        let ours = dbmeter(&s, &args(a));
        let theirs = sysbench(&s, &args(a));
        assert_eq!(ours.code, 0, "{a:?}: {}", ours.stderr);
        assert_eq!(ours.stdout, theirs.stdout, "{a:?}");
    }
    assert_eq!(
        dbmeter(&s, &args(&["--version"])).stdout,
        "sysbench 1.0.20\n"
    );
    // A bundled test's options, as sysbench lists them (from its script);
    // one without options says so, as sysbench.
    for test in ["oltp_read_write", "select_random_ranges", "bulk_insert"] {
        let ours = dbmeter(&s, &args(&[test, "help"]));
        let theirs = sysbench(&s, &args(&[test, "help"]));
        assert_eq!(ours.code, theirs.code, "{test}: {}", ours.stderr);
        let theirs_said = theirs.stdout.split_once("\n\n").map_or("", |x| x.1);
        assert_eq!(
            said(&ours),
            format!("{theirs_said}{}", theirs.stderr),
            "{test}"
        );
    }
    // dbmeter's page for the command is `dbmeter help sysbench`.
    let page = s.run_home(&["help", "sysbench"]);
    assert!(
        page.stdout.starts_with("Usage: dbmeter sysbench"),
        "{}",
        page.stdout
    );

    // Errors: one line, exit code 1 as sysbench's, and its words.
    for a in [
        &["--foo=1", "oltp_read_write", "run"][..],
        &["nosuch", "run"],
        &["oltp_read_write", "frob"],
        &["oltp_read_write", "run", "extra"],
        &["help"],
    ] {
        assert_eq!(sysbench(&s, &args(a)).code, 1, "sysbench {a:?}");
    }
    refused(
        &s,
        &["--foo=1", "oltp_read_write", "run"],
        "invalid option: --foo=1",
    );
    refused(
        &s,
        &["nosuch", "run"],
        "FATAL: Cannot find benchmark 'nosuch': no such built-in test, file or module",
    );
    refused(&s, &["oltp_read_write", "frob"], "Unknown command: frob");
    let r = dbmeter(&s, &args(&["oltp_read_write", "run", "extra"]));
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (1, "", "Unrecognized command line argument: extra\n")
    );
    refused(&s, &["help"], "FATAL: Cannot find benchmark 'help'");
    // Without a command, sysbench loads the test and stops.
    let r = dbmeter(&s, &args(&["oltp_read_write"]));
    assert_eq!((r.code, said(&r).as_str()), (0, ""), "{}", r.stderr);
    refused(
        &s,
        &["--threads=x", "oltp_read_write", "run"],
        "--threads=x",
    );
    refused(
        &s,
        &["--mysql-compression=on", "oltp_read_write", "run"],
        "--mysql-compression",
    );
    // dbmeter's benchmarks without a database are sysbench's built-in
    // tests (cpu, memory...; crates/dbmeter/tests/e2e/micro.rs has them):
    // a command is required, and they know only the commands they have.
    refused(
        &s,
        &["noop"],
        "The 'noop' test requires a command argument. See 'sysbench noop help'",
    );
    refused(
        &s,
        &["noop", "prepare"],
        "'noop' test does not implement the 'prepare' command.",
    );
    refused(&s, &["noop", "prewarm"], "Unknown command: prewarm");
    refused(
        &s,
        &["noop", "--tables=2", "run"],
        "invalid option: --tables=2",
    );
    // --verbosity=0: nothing but errors.
    let r = dbmeter(&s, &args(&["--verbosity=0", "nosuch", "run"]));
    assert_eq!(
        r.stdout,
        "FATAL: Cannot find benchmark 'nosuch': no such built-in test, file or module\n"
    );
    // A run that fails (nothing listens): 1, as sysbench.
    let gone = [
        "--mysql-host=127.0.0.1",
        "--mysql-port=1",
        "oltp_point_select",
        "run",
    ];
    assert_eq!(sysbench(&s, &args(&gone)).code, 1);
    let r = dbmeter(&s, &args(&gone));
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stdout.contains("FATAL: "), "{}", r.stdout);
}

/// Every option `sysbench --help` lists, with the default it shows: taken
/// (honoured, or without effect and said so) or refused in one line, and
/// named in docs/sysbench.md. On SQLite (`--db` wins over the driver).
#[test]
fn every_option_of_sysbench_help() {
    if !have_sysbench() {
        return;
    }
    let s = Scratch::new();
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/sysbench.md"),
    )
    .expect("docs/sysbench.md");
    let db = "--db=sqlite:every.db";
    let r = dbmeter(
        &s,
        &args(&[db, "--table-size=50", "oltp_point_select", "prepare"]),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let help = sysbench(&s, &args(&["--help"])).stdout;
    let refused = ["mysql-ssl-cipher"];
    // Covered elsewhere: these end or limit the run themselves.
    let skipped = ["help", "version", "config-file", "max-requests"];
    let mut seen = 0;
    for l in help.lines() {
        let Some(rest) = l.trim_start().strip_prefix("--") else {
            continue;
        };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
            .collect();
        assert!(
            doc.contains(&format!("`--{name}")),
            "docs/sysbench.md lacks --{name}"
        );
        if skipped.contains(&name.as_str()) {
            continue;
        }
        // The default sysbench shows, `[x]` at the end of the line.
        let value = l
            .trim_end()
            .strip_suffix(']')
            .and_then(|x| x.rsplit_once('['))
            .map_or("", |(_, v)| v);
        let value = if value.is_empty() && name == "mysql-socket" {
            "/nonexistent.sock"
        } else {
            value
        };
        let opt = format!("--{name}={value}");
        let r = dbmeter(
            &s,
            &args(&[
                &opt,
                db,
                "--events=1",
                "--time=0",
                "oltp_point_select",
                "run",
            ]),
        );
        assert!(!r.stderr.contains("panicked"), "{opt}: {}", r.stderr);
        if refused.contains(&name.as_str()) {
            assert_eq!(r.code, 1, "{opt}: {}", r.stderr);
            let said = said(&r);
            assert!(said.contains("not supported"), "{opt}: {said}");
            assert_eq!(said.lines().count(), 1, "{opt}: {said}");
        } else {
            assert_eq!(r.code, 0, "{opt}:\n{}\n{}", r.stdout, r.stderr);
            assert_eq!(r.stat("total number of events:"), 1, "{opt}");
        }
        seen += 1;
    }
    assert!(seen > 40, "{seen} options in:\n{help}");
}

/// --mysql-dry-run needs no server (every statement is done at once), and
/// --report-checkpoints prints sysbench's checkpoint reports, then a last
/// report of the time since the last checkpoint; --verbosity=0 prints
/// nothing of it, --verbosity=4 adds dbmeter's lines after sysbench's.
#[test]
fn dry_run_checkpoints_and_verbosity() {
    let s = Scratch::new();
    std::fs::write(
        s.path("dry.lua"),
        "function thread_init() con = sysbench.sql.driver():connect() end\n\
         function event() con:query(\"SELECT 1\") end\n",
    )
    .unwrap();
    let base = [
        "dry.lua",
        "--db-driver=mysql",
        "--mysql-host=192.0.2.1",
        "--mysql-dry-run",
        "--time=2",
        "--events=0",
    ];
    let go = |more: &[&str]| {
        let mut a = args(&base);
        a.extend(args(more));
        a.push("run".into());
        ok("dbmeter sysbench", dbmeter(&s, &a), &a)
    };
    let r = go(&["--report-checkpoints=1"]);
    let out = said(&r);
    assert!(out.contains("Report checkpoint(s) at 1 seconds\n"), "{out}");
    let at = out.find("\n[ 1s ] Checkpoint report:\nSQL statistics:\n");
    assert!(at.is_some(), "{out}");
    assert_eq!(out.matches("SQL statistics:").count(), 2, "{out}");
    let r = go(&["--verbosity=0"]);
    assert_eq!(r.stdout, "", "{}", r.stderr);
    let r = go(&["--verbosity=4"]);
    let tail = r
        .stdout
        .rsplit("Threads fairness:")
        .next()
        .unwrap_or_default();
    assert!(tail.contains("\nEnvironment:\n"), "{}", r.stdout);
}
