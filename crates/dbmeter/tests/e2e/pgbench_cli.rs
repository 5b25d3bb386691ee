//! `dbmeter pgbench ARGS...` against real pgbench 15 on a throwaway
//! PostgreSQL: the same command line makes the same tables (`-i`), runs
//! the same transactions for the same seed (built-in scripts, script files
//! with weights and -D), writes pgbench's logs (`-l`, aggregated too),
//! skips late transactions under `-R` with `-L`, and refuses bad options
//! with one line and pgbench's exit code.

use crate::common::*;
use dbmeter_server::{Flavor, Server};
use dbmeter_testkit::servers::ask_on as psql;
use dbmeter_testkit::servers::{ask, start};
use dbmeter_testkit::tools::PGBENCH;
use std::process::Command;

/// The connection options and then `args`, then the database.
fn argv(server: &Server, args: &[&str], db: &str) -> Vec<String> {
    let port = server.port().to_string();
    let mut v: Vec<String> = ["-h", "127.0.0.1", "-p", &port, "-U", "postgres"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    v.extend(args.iter().map(|s| s.to_string()));
    v.push(db.to_string());
    v
}

/// Real pgbench; its stdout and stderr.
fn pgbench(server: &Server, args: &[&str], db: &str) -> String {
    let program = PGBENCH
        .find()
        .expect("pgbench, looked for by the test first");
    let out = Command::new(program)
        .args(argv(server, args, db))
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

/// `dbmeter pgbench` with the same arguments, in the scratch directory.
fn ours(s: &Scratch, server: &Server, args: &[&str], db: &str) -> Run {
    let mut all = vec!["pgbench".to_string()];
    all.extend(argv(server, args, db));
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    let r = s.run(&all);
    assert_eq!(r.code, 0, "dbmeter {all:?}:\n{}\n{}", r.stdout, r.stderr);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    r
}

/// Rows, sums and balances of pgbench's tables.
fn tables(server: &Server, db: &str) -> String {
    psql(
        server,
        db,
        "SELECT (SELECT count(*) || ' ' || sum(abalance) || ' ' || sum(bid) || ' ' || sum(aid) FROM pgbench_accounts), \
                (SELECT count(*) || ' ' || sum(bbalance) || ' ' || sum(bid) FROM pgbench_branches), \
                (SELECT count(*) || ' ' || sum(tbalance) || ' ' || sum(bid) || ' ' || sum(tid) FROM pgbench_tellers), \
                (SELECT count(*) || ' ' || coalesce(sum(aid), 0) || ' ' || coalesce(sum(delta), 0) FROM pgbench_history), \
                (SELECT string_agg(conname, ',' ORDER BY conname) FROM pg_constraint WHERE conrelid::regclass::text LIKE 'pgbench%')",
    )
}

/// The number after `label` on the report line that starts with it.
fn number(text: &str, label: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(label))
        .and_then(|rest| {
            rest.trim_start()
                .split(|c: char| !c.is_ascii_digit())
                .next()
        })
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no '{label}' in:\n{text}"))
}

/// pgbench's ` - N transactions` lines, one per script.
fn per_script(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.starts_with(" - ") && l.contains(" transactions ("))
        .map(|l| l.split(" (").next().unwrap_or("").to_string())
        .collect()
}

#[test]
fn init_makes_the_tables_pgbench_i_makes() {
    if PGBENCH.find_or_skip().is_none() {
        return;
    }
    let Some(server) = start(Flavor::Postgres) else {
        return;
    };
    ask(&server, "CREATE DATABASE theirs");
    let s = Scratch::new();
    pgbench(&server, &["-i", "-s", "2", "--foreign-keys"], "theirs");
    let r = ours(&s, &server, &["-i", "-s", "2", "--foreign-keys"], "test");
    // As pgbench -i: the steps on stderr, nothing on stdout.
    assert!(
        r.stderr.contains("creating primary keys..."),
        "{}",
        r.stderr
    );
    assert_eq!(r.stdout, "");
    let want = tables(&server, "theirs");
    assert!(want.starts_with("200000 0 "), "{want}");
    assert_eq!(tables(&server, "test"), want);
    // The server from libpq's variables, attached values, -I.
    let r = s.output({
        let mut c = s.cmd(&["pgbench", "-is2", "-IdtGvp", "-F", "90"]);
        c.env("PGHOST", "127.0.0.1")
            .env("PGPORT", server.port().to_string())
            .env("PGUSER", "postgres")
            .env("PGDATABASE", "test");
        c
    });
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(
        psql(
            &server,
            "test",
            "SELECT reloptions FROM pg_class WHERE relname = 'pgbench_accounts'"
        ),
        "{fillfactor=90}"
    );
    assert_eq!(
        tables(&server, "test").split(' ').next(),
        Some("200000"),
        "server-side generation"
    );
}

const MINE: &str = r"\set v random(1, 1000) + :base
INSERT INTO mine(script, client, v) VALUES (1, :client_id, :v);
";
const OTHER: &str = r"\set n random(1, 10) * :factor
\set v :n * random(1, 5)
INSERT INTO mine(script, client, v) VALUES (2, :client_id, :v);
";

#[test]
fn the_same_argv_runs_the_same_transactions() {
    if PGBENCH.find_or_skip().is_none() {
        return;
    }
    let Some(server) = start(Flavor::Postgres) else {
        return;
    };
    ask(&server, "CREATE DATABASE theirs");
    pgbench(&server, &["-i", "-s", "2", "-q"], "theirs");
    let s = Scratch::new();
    ours(&s, &server, &["-i", "-s", "2"], "test");
    // Built-in scripts, in the order given, with weights. pgbench's
    // clients share their thread's script chooser: with -j as -c each
    // has its own, and pgbench itself chooses the same each time.
    let args = [
        "-c",
        "2",
        "-j",
        "2",
        "-t",
        "30",
        "--random-seed=11",
        "-M",
        "prepared",
        "-b",
        "simple-update@2",
        "-S",
        "-r",
    ];
    let theirs = pgbench(&server, &args, "theirs");
    let r = ours(&s, &server, &args, "test");
    assert!(r.stdout.starts_with("pgbench (dbmeter "), "{}", r.stdout);
    assert!(r.stderr.contains("starting vacuum...end."), "{}", r.stderr);
    for out in [&theirs, &r.stdout] {
        assert!(
            out.contains("number of transactions actually processed: 60/60"),
            "{out}"
        );
        assert!(
            out.contains("SQL script 2: <builtin: select only>"),
            "{out}"
        );
    }
    assert_eq!(per_script(&r.stdout), per_script(&theirs));
    let history = "SELECT count(*), sum(aid), sum(bid), sum(tid), sum(delta) FROM pgbench_history";
    assert_eq!(
        psql(&server, "test", history),
        psql(&server, "theirs", history)
    );
    for line in [
        "latency average = ",
        "latency stddev = ",
        "tps = ",
        " - statement latencies in milliseconds and failures:",
        "latency percentiles (dbmeter): 50% ",
    ] {
        assert!(r.stdout.contains(line), "no '{line}' in:\n{}", r.stdout);
    }
    // Script files with weights and -D, in the extended mode.
    for db in ["test", "theirs"] {
        psql(
            &server,
            db,
            "CREATE TABLE mine(script int, client int, v int)",
        );
    }
    std::fs::write(s.path("mine.sql"), MINE).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(s.path("other.sql"), OTHER).unwrap_or_else(|e| panic!("{e}"));
    let mine = format!("{}@3", s.path("mine.sql").display());
    let other = format!("{}@1", s.path("other.sql").display());
    let args = [
        "-n",
        "-c",
        "2",
        "-j",
        "2",
        "-t",
        "40",
        "--random-seed=5",
        "-M",
        "extended",
        "-f",
        &mine,
        "-f",
        &other,
        "-D",
        "base=100",
        "-Dfactor=7",
    ];
    let theirs = pgbench(&server, &args, "theirs");
    let r = ours(&s, &server, &args, "test");
    assert_eq!(per_script(&r.stdout), per_script(&theirs));
    assert_eq!(per_script(&r.stdout).len(), 2, "{}", r.stdout);
    let rows =
        "SELECT script, count(*), sum(v), count(DISTINCT client) FROM mine GROUP BY 1 ORDER BY 1";
    let got = psql(&server, "test", rows);
    assert_eq!(got, psql(&server, "theirs", rows));
    let total: u64 = got
        .lines()
        .filter_map(|l| l.split('|').nth(1)?.parse::<u64>().ok())
        .sum();
    assert_eq!(total, 80, "{got}");
}

/// The log files `pgbench_log.*` in the scratch directory, sorted.
fn logs(s: &Scratch, prefix: &str) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(s.dir.path())
        .unwrap_or_else(|e| panic!("{e}"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(&format!("{prefix}.")))
        })
        .collect();
    v.sort();
    v
}

fn lines_of(files: &[std::path::PathBuf]) -> Vec<Vec<String>> {
    files
        .iter()
        .flat_map(|f| {
            std::fs::read_to_string(f)
                .unwrap_or_else(|e| panic!("{e}"))
                .lines()
                .map(|l| l.split(' ').map(str::to_string).collect::<Vec<_>>())
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn logs_as_pgbench_writes_them() {
    let Some(server) = start(Flavor::Postgres) else {
        return;
    };
    let s = Scratch::new();
    ours(&s, &server, &["-i"], "test");
    // A line per transaction, one file per -j thread.
    let r = ours(
        &s,
        &server,
        &["-n", "-c", "3", "-j", "2", "-t", "25", "-l"],
        "test",
    );
    assert_eq!(
        number(&r.stdout, "number of transactions actually processed:"),
        75
    );
    let files = logs(&s, "pgbench_log");
    assert_eq!(files.len(), 2, "{files:?}");
    let lines = lines_of(&files);
    assert_eq!(lines.len(), 75);
    for f in &lines {
        assert_eq!(f.len(), 6, "{f:?}");
        assert!(f.iter().all(|x| x.parse::<u64>().is_ok()), "{f:?}");
        assert!(["0", "1", "2"].contains(&f[0].as_str()), "{f:?}");
        assert_eq!(f[3], "0", "{f:?}");
    }
    // Each client numbers its 25 transactions 1..25; clients 0 and 1 are
    // in the first file, 2 in the second, as pgbench splits them.
    for c in ["0", "1", "2"] {
        let mut n: Vec<u64> = lines
            .iter()
            .filter(|f| f[0] == c)
            .map(|f| f[1].parse().unwrap_or(0))
            .collect();
        n.sort_unstable();
        assert_eq!(n, (1..=25).collect::<Vec<u64>>(), "client {c}");
    }
    let second = std::fs::read_to_string(&files[1]).unwrap_or_default();
    assert!(second.lines().all(|l| l.starts_with("2 ")), "{second}");
    // Aggregated lines add up to the transactions.
    let r = ours(
        &s,
        &server,
        &[
            "-n",
            "-c",
            "2",
            "-T",
            "3",
            "-l",
            "--aggregate-interval=1",
            "--log-prefix=agg",
            "-P",
            "1",
        ],
        "test",
    );
    let processed = number(&r.stdout, "number of transactions actually processed:");
    let lines = lines_of(&logs(&s, "agg"));
    assert!(lines.len() >= 3, "{lines:?}");
    assert!(lines.iter().all(|f| f.len() == 15), "{lines:?}");
    let sum: u64 = lines.iter().map(|f| f[1].parse::<u64>().unwrap_or(0)).sum();
    assert_eq!(sum, processed);
    // -P: pgbench's progress lines on standard error.
    let progress: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.starts_with("progress: "))
        .collect();
    assert!(!progress.is_empty(), "{}", r.stderr);
    for l in &progress {
        assert!(
            l.contains(" s, ") && l.contains(" tps, lat ") && l.ends_with(" failed"),
            "{l}"
        );
    }
}

#[test]
fn late_transactions_are_skipped_under_a_rate() {
    let Some(server) = start(Flavor::Postgres) else {
        return;
    };
    let s = Scratch::new();
    ours(&s, &server, &["-i"], "test");
    // A rate far beyond what the server can do and a limit of 10 µs:
    // every client is late from its second transaction on.
    let r = ours(
        &s,
        &server,
        &[
            "-n", "-c", "2", "-t", "100", "-R", "100000", "-L", "0.01", "-l",
        ],
        "test",
    );
    let processed = number(&r.stdout, "number of transactions actually processed:");
    let skipped = number(&r.stdout, "number of transactions skipped:");
    assert!(skipped > 0, "{}", r.stdout);
    // Skipped transactions count toward -t, as in pgbench.
    assert_eq!(processed + skipped, 200, "{}", r.stdout);
    assert!(
        r.stdout
            .contains("number of transactions above the 0.0 ms latency limit: "),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("rate limit schedule lag: avg "),
        "{}",
        r.stdout
    );
    let lines = lines_of(&logs(&s, "pgbench_log"));
    assert_eq!(lines.len(), 200);
    let logged_skips = lines.iter().filter(|f| f[2] == "skipped").count() as u64;
    assert_eq!(logged_skips, skipped);
    // With a rate every line has the schedule lag.
    assert!(lines.iter().all(|f| f.len() == 7), "{:?}", lines.first());
}

#[test]
fn bad_options_are_one_line_and_exit_1() {
    let s = Scratch::new();
    for (args, want) in [
        (
            vec!["pgbench", "-c", "x"],
            "invalid value \"x\" for option -c/--clients",
        ),
        (vec!["pgbench", "--bogus"], "unrecognized option '--bogus'"),
        (vec!["pgbench", "-t", "5", "-T", "5"], "not both"),
        (vec!["pgbench", "-i", "-c", "2"], "initialization (-i) mode"),
        (
            vec!["pgbench", "--partition-method=hash", "-i"],
            "--partition-method requires greater than zero --partitions",
        ),
        (
            vec!["pgbench", "--progress-timestamp"],
            "--progress-timestamp is allowed only under --progress",
        ),
        (
            vec!["pgbench", "-l", "-T", "5", "--aggregate-interval=3"],
            "duration (5) must be a multiple of aggregation interval (3)",
        ),
        (vec!["pgbench", "-c"], "requires an argument"),
    ] {
        let r = s.run(&args);
        assert_eq!(r.code, 1, "{args:?}: {}{}", r.stdout, r.stderr);
        let err = r.stderr.trim();
        // pgbench's form: the error, and after getopt's a hint.
        let first = err.lines().next().unwrap_or("");
        assert!(first.starts_with("pgbench: "), "{args:?}: {err}");
        assert!(first.contains(want), "{args:?}: {err}");
        assert!(err.lines().count() <= 2, "{args:?}: {err}");
    }
    // -? and --help are this command's page, with pgbench's sections;
    // -b list and --show-script answer as pgbench does.
    let help = s.run(&["pgbench", "-?"]);
    assert_eq!(help.code, 0);
    assert_eq!(help.stdout, s.run(&["help", "pgbench"]).stdout);
    for part in [
        "benchmarking tool for PostgreSQL",
        "Usage:",
        "Initialization options:",
        "Common options:",
    ] {
        assert!(help.stdout.contains(part), "{part}: {}", help.stdout);
    }
    let list = s.run(&["pgbench", "-b", "list"]);
    assert_eq!(list.code, 0);
    assert!(list.stderr.contains("select-only: <builtin: select only>"));
    let show = s.run(&["pgbench", "--show-script=select"]);
    assert!(
        show.stderr
            .starts_with("-- select-only: <builtin: select only>\n\\set aid")
    );
}

const PIPELINE: &str = r"\set n random(1, 100)
\startpipeline
INSERT INTO pipe(client, v) VALUES (:client_id, :n);
UPDATE pipe SET v = v + 1 WHERE client = :client_id AND v = :n;
SELECT count(*) FROM pipe;
\endpipeline
";

/// The second command fails: with the commands sent as one pipeline
/// (one implicit transaction), the first one's row does not stay.
const BROKEN_PIPELINE: &str = r"\startpipeline
INSERT INTO pipe(client, v) VALUES (-1, 1);
SELECT 1 / 0;
\endpipeline
";

#[test]
fn pipelines_are_sent_as_pipelines() {
    if PGBENCH.find_or_skip().is_none() {
        return;
    }
    let Some(server) = start(Flavor::Postgres) else {
        return;
    };
    ask(&server, "CREATE DATABASE theirs");
    let s = Scratch::new();
    for db in ["test", "theirs"] {
        psql(&server, db, "CREATE TABLE pipe(client int, v int)");
    }
    std::fs::write(s.path("pipe.sql"), PIPELINE).unwrap_or_else(|e| panic!("{e}"));
    let file = s.path("pipe.sql").display().to_string();
    for mode in ["extended", "prepared"] {
        let args = [
            "-n",
            "-c",
            "2",
            "-j",
            "2",
            "-t",
            "15",
            "--random-seed=3",
            "-M",
            mode,
            "-f",
            &file,
        ];
        pgbench(&server, &args, "theirs");
        let r = ours(&s, &server, &args, "test");
        assert!(
            r.stdout
                .contains("number of transactions actually processed: 30/30"),
            "{}",
            r.stdout
        );
    }
    let rows = "SELECT count(*), sum(v), count(DISTINCT client) FROM pipe";
    let got = psql(&server, "test", rows);
    assert!(got.starts_with("60|"), "{got}");
    assert_eq!(got, psql(&server, "theirs", rows));
    // A failed pipeline leaves nothing behind, and stops the run as
    // pgbench's aborted client does (exit 2 after the report).
    std::fs::write(s.path("broken.sql"), BROKEN_PIPELINE).unwrap_or_else(|e| panic!("{e}"));
    let broken = s.path("broken.sql").display().to_string();
    let mut all = vec!["pgbench".to_string()];
    all.extend(argv(
        &server,
        &["-n", "-t", "1", "-M", "extended", "-f", &broken],
        "test",
    ));
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    let r = s.run(&all);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("division by zero"), "{}", r.stderr);
    assert_eq!(
        psql(
            &server,
            "test",
            "SELECT count(*) FROM pipe WHERE client = -1"
        ),
        "0"
    );
}

/// `dbmeter pgbench` whatever its exit status.
fn ours_any(s: &Scratch, server: &Server, args: &[&str], db: &str) -> Run {
    let mut all = vec!["pgbench".to_string()];
    all.extend(argv(server, args, db));
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    let r = s.run(&all);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    r
}

/// Real pgbench's exit status and stderr, whatever they are.
fn theirs_any(server: &Server, args: &[&str], db: &str) -> (i32, String) {
    let program = PGBENCH
        .find()
        .expect("pgbench, looked for by the test first");
    let out = Command::new(program)
        .args(argv(server, args, db))
        .output()
        .unwrap_or_else(|e| panic!("run pgbench: {e}"));
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn scripts_pgbench_aborts_abort_and_unset_variables_bind_null() {
    if PGBENCH.find_or_skip().is_none() {
        return;
    }
    let Some(server) = start(Flavor::Postgres) else {
        return;
    };
    ask(&server, "CREATE DATABASE theirs");
    let s = Scratch::new();
    let script = |name: &str, text: &str| {
        let f = s.path(name);
        std::fs::write(&f, text).unwrap_or_else(|e| panic!("{e}"));
        f.to_string_lossy().to_string()
    };
    // A script that ends inside a transaction block: the client aborts,
    // exit status 2, pgbench's message.
    let open = script("open.sql", "BEGIN;\nSELECT 1;\n");
    let args = ["-n", "-t", "3", "-f", open.as_str()];
    let r = ours_any(&s, &server, &args, "test");
    let (code, err) = theirs_any(&server, &args, "theirs");
    let want = "client 0 aborted: end of script reached without completing the last transaction";
    assert!(err.contains(want), "{err}");
    assert_eq!(r.code, code, "{}{}", r.stdout, r.stderr);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains(want), "{}", r.stderr);
    // The first transaction counts, as in pgbench; then the client stops.
    assert!(
        r.stdout
            .contains("number of transactions actually processed: 1/3"),
        "{}",
        r.stdout
    );
    assert!(
        r.stderr
            .contains("pgbench: error: Run was aborted; the above results are incomplete."),
        "{}",
        r.stderr
    );
    for db in ["test", "theirs"] {
        psql(&server, db, "CREATE TABLE nulls(a int, b int)");
    }
    // COPY from the client is refused as pgbench refuses it.
    let copy = script("copy.sql", "COPY nulls FROM stdin;\n");
    let args = ["-n", "-t", "1", "-f", copy.as_str()];
    let r = ours_any(&s, &server, &args, "test");
    let (code, err) = theirs_any(&server, &args, "theirs");
    let want = "COPY is not supported in pgbench, aborting";
    assert!(err.contains(want), "{err}");
    assert_eq!((r.code, code), (2, 2), "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains(want), "{}", r.stderr);
    // Under -M prepared an unset variable is bound as NULL.
    let nulls = script(
        "nulls.sql",
        "INSERT INTO nulls VALUES (:client_id, :nosuch);\n",
    );
    let args = ["-n", "-t", "2", "-M", "prepared", "-f", nulls.as_str()];
    pgbench(&server, &args, "theirs");
    ours(&s, &server, &args, "test");
    let rows = "SELECT count(*), count(b), count(a) FROM nulls";
    assert_eq!(psql(&server, "test", rows), "2|0|2");
    assert_eq!(psql(&server, "test", rows), psql(&server, "theirs", rows));
}

#[test]
fn init_partitions_pgbench_accounts_as_pgbench_does() {
    if PGBENCH.find_or_skip().is_none() {
        return;
    }
    let Some(server) = start(Flavor::Postgres) else {
        return;
    };
    ask(&server, "CREATE DATABASE theirs");
    let s = Scratch::new();
    let shape = |db: &str| {
        psql(
            &server,
            db,
            "SELECT pg_get_partkeydef('pgbench_accounts'::regclass), \
                    (SELECT string_agg(c.relname || ' ' || pg_get_expr(c.relpartbound, c.oid) || ' ' || \
                             coalesce(array_to_string(c.reloptions, ','), ''), '; ' ORDER BY c.relname) \
                     FROM pg_class c JOIN pg_inherits i ON i.inhrelid = c.oid \
                     WHERE i.inhparent = 'pgbench_accounts'::regclass), \
                    (SELECT count(*) || ' ' || sum(aid) FROM pgbench_accounts)",
        )
    };
    for (args, said, reported) in [
        (
            vec!["-i", "-s", "2", "--partitions=3"],
            "creating 3 partitions...",
            "partition method: range\npartitions: 3\n",
        ),
        (
            vec![
                "-i",
                "--partitions=2",
                "--partition-method=hash",
                "-F",
                "90",
            ],
            "creating 2 partitions...",
            "partition method: hash\npartitions: 2\n",
        ),
    ] {
        pgbench(&server, &args, "theirs");
        let r = ours(&s, &server, &args, "test");
        assert!(r.stderr.contains(said), "{args:?}: {}", r.stderr);
        let want = shape("theirs");
        assert!(want.contains("pgbench_accounts_1"), "{want}");
        assert_eq!(shape("test"), want, "{args:?}");
        // A run on the partitioned table.
        let r = ours(&s, &server, &["-n", "-S", "-t", "20", "-c", "2"], "test");
        assert!(
            r.stdout
                .contains("number of transactions actually processed: 40/40"),
            "{}",
            r.stdout
        );
        // The report says how, as pgbench's does.
        assert!(r.stdout.contains(reported), "{}", r.stdout);
    }
}

/// `-j`: the clients run on that many threads (one without `-j`, at most
/// one per client), as pgbench says in its report, and every client runs
/// its `-t` transactions whatever thread it shares.
#[test]
fn jobs_are_the_threads_the_clients_run_on() {
    if PGBENCH.find_or_skip().is_none() {
        return;
    }
    let Some(server) = start(Flavor::Postgres) else {
        return;
    };
    let s = Scratch::new();
    ours(&s, &server, &["-i", "-s", "1", "-q"], "test");
    for (args, threads, processed) in [
        (&["-c", "5", "-j", "2", "-t", "20"][..], 2, "100/100"),
        (&["-c", "5", "-t", "20"][..], 1, "100/100"),
        (&["-c", "2", "-j", "4", "-t", "7", "-S"][..], 2, "14/14"),
    ] {
        let theirs = pgbench(&server, args, "test");
        let r = ours(&s, &server, args, "test");
        for text in [&theirs, &r.stdout] {
            assert_eq!(
                number(text, "number of threads:"),
                threads,
                "{args:?}:\n{text}"
            );
            assert!(
                text.contains(&format!(
                    "number of transactions actually processed: {processed}\n"
                )),
                "{args:?}:\n{text}"
            );
        }
        if !args.contains(&"-S") {
            // Each transaction of tpcb-like inserts one history row (the
            // run empties the table first).
            assert_eq!(
                psql(&server, "test", "SELECT count(*) FROM pgbench_history"),
                "100",
                "{args:?}"
            );
        }
    }
}
