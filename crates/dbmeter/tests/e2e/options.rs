//! A benchmark's own options, end to end: a value out of range (huge,
//! tiny, negative, not a number) is refused before anything connects or
//! is written, in one line that names the option, the value and what it
//! takes, with the usage exit code 2; a value in range still runs.

use crate::common::*;

/// Runs `args` in a scratch directory of its own and checks the refusal:
/// exit 2, one line naming `--NAME=VALUE` (the last argument), no panic,
/// and no database file written.
fn refused(args: &[&str]) -> String {
    let s = Scratch::new();
    let r = s.run(args);
    let shown = args.last().expect("an option");
    assert_eq!(r.code, 2, "{args:?}:\n{}\n{}", r.stdout, r.stderr);
    assert!(!r.stderr.contains("panicked"), "{args:?}: {}", r.stderr);
    assert_eq!(r.stderr.trim().lines().count(), 1, "{args:?}: {}", r.stderr);
    assert!(r.stderr.contains(shown), "{args:?}: {}", r.stderr);
    for file in ["dbmeter.sqlite", "x.sqlite"] {
        assert!(!s.path(file).exists(), "{args:?} wrote {file}");
    }
    r.stderr
}

#[test]
fn pgbench_values_out_of_range_are_one_usage_line() {
    let e = refused(&["run", "pgbench", "--latency-limit=1e300"]);
    assert!(
        e.contains(
            "--latency-limit=1e300: expected milliseconds: 0 (no limit), or from 0.001 to 3600000"
        ),
        "{e}"
    );
    refused(&["run", "pgbench", "--latency-limit=1e-300"]);
    refused(&["run", "pgbench", "--latency-limit=-5"]);
    refused(&["run", "pgbench", "--latency-limit=NaN"]);
    refused(&["run", "pgbench", "--transactions=-1"]);
    refused(&["run", "pgbench", "--log", "--aggregate-interval=-1"]);
    refused(&["run", "pgbench", "--log", "--sampling-rate=1e-300x"]);
    let e = refused(&[
        "prepare",
        "pgbench",
        "--db=sqlite:x.sqlite",
        "--scale=2000000",
    ]);
    assert!(
        e.contains("expected a scale factor from 1 to 1000000"),
        "{e}"
    );
}

#[test]
fn tpch_tpcc_and_oltp_values_out_of_range_are_one_usage_line() {
    for args in [
        &[
            "prepare",
            "tpch",
            "--db=sqlite:x.sqlite",
            "--scale-factor=1e-300",
        ][..],
        &[
            "prepare",
            "tpch",
            "--db=sqlite:x.sqlite",
            "--scale-factor=1e300",
        ],
        &[
            "prepare",
            "tpch",
            "--db=sqlite:x.sqlite",
            "--scale-factor=-1",
        ],
        &["run", "tpch", "--best-plan-count=0"],
        &["run", "tpch", "--streams=5000"],
        &[
            "prepare",
            "tpcc",
            "--db=sqlite:x.sqlite",
            "--warehouses=1000000",
        ],
        &["run", "tpcc", "--think-time=1e300"],
        &["run", "tpcc", "--keying-time=-1"],
        &[
            "prepare",
            "oltp_read_only",
            "--db=sqlite:x.sqlite",
            "--table-size=0",
        ],
        &[
            "prepare",
            "oltp_read_only",
            "--db=sqlite:x.sqlite",
            "--tables=4294967297",
        ],
        &["run", "oltp_point_select", "--rand-zipfian-exp=1e300"],
        &["run", "oltp_read_write", "--rand-pareto-h=-1"],
        &["run", "select_random_points", "--random-points=1G"],
    ] {
        refused(args);
    }
    let e = refused(&["run", "tpcc", "--think-time=1e300"]);
    assert!(
        e.contains("--think-time=1e300: expected a multiple of the specification's times from 0 (none) to 100"),
        "{e}"
    );
}

/// `dbmeter sysbench` and `dbmeter pgbench` say the same line, with the
/// exit code of the tool they stand in for (1); sysbench's on stdout, as
/// its `FATAL: ` lines.
#[test]
fn sysbench_and_pgbench_command_lines_get_the_same_line() {
    let s = Scratch::new();
    let r = s.run(&[
        "sysbench",
        "oltp_read_only",
        "--db-driver=sqlite",
        "--table-size=5G",
        "prepare",
    ]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stderr.is_empty(), "{}", r.stderr);
    let fatal: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.starts_with("FATAL: "))
        .collect();
    assert_eq!(fatal.len(), 1, "{}", r.stdout);
    assert!(
        fatal[0].contains("--table-size=5G: expected rows per table from 1 to 2147483647"),
        "{}",
        r.stdout
    );
    let r = s.run(&["pgbench", "-L", "0.0000001", "-T", "1"]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("--latency-limit=0.0000001: expected milliseconds"),
        "{}",
        r.stderr
    );
    assert!(!s.path("dbmeter.sqlite").exists());
}

#[test]
fn values_in_range_still_run() {
    let s = Scratch::new();
    s.ok(&["prepare", "pgbench", "--db=sqlite:p.sqlite"]);
    let r = s.ok(&[
        "run",
        "pgbench",
        "--db=sqlite:p.sqlite",
        "--transactions=5",
        "--latency-limit=60000",
        "--builtin=select-only",
    ]);
    assert!(
        r.stdout
            .contains("number of transactions above the 60000.0 ms latency limit: 0/5"),
        "{}",
        r.stdout
    );
}
