//! sysbench's machine tests as dbmeter's benchmarks `cpu`, `threads`,
//! `mutex` and `memory`: through `dbmeter run` (dbmeter's layout, JSON,
//! CSV, the store and compare) and `dbmeter sysbench` (sysbench 1.0.20's
//! command line and output, line for line against the real sysbench where
//! it is installed). The counts are sysbench's: `--events` events of cpu
//! and threads, one event per thread of mutex, total / block operations
//! of memory whatever `--events` says.

use crate::common::*;
use dbmeter_testkit::tools::SYSBENCH;
use std::process::Command;

/// `dbmeter sysbench ARGS`.
fn sb(s: &Scratch, args: &[&str]) -> Run {
    let mut all = vec!["sysbench"];
    all.extend_from_slice(args);
    s.run_home(&all)
}

fn ok(r: Run, what: &[&str]) -> Run {
    assert_eq!(r.code, 0, "{what:?}:\n{}\n{}", r.stdout, r.stderr);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    r
}

/// The real sysbench with `args`, or None (after saying that the test
/// skips, naming the package) when it is not installed.
fn real_sysbench(s: &Scratch, args: &[&str]) -> Option<Run> {
    let bin = SYSBENCH.find_or_skip()?;
    let o = Command::new(bin)
        .args(args)
        .current_dir(s.dir.path())
        .output()
        .expect("run sysbench");
    Some(Run {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    })
}

/// The text without what changes from run to run: the banner's second
/// half (sysbench names its LuaJIT, dbmeter itself), every number, and
/// the runs of spaces that pad them.
fn shape(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let line = if line.starts_with("sysbench 1.0.20 (using ") {
            "sysbench 1.0.20"
        } else {
            line
        };
        let mut last = ' ';
        let mut shaped = String::new();
        for c in line.chars() {
            let c = if c.is_ascii_digit() || (c == '.' && last == '#') {
                '#'
            } else {
                c
            };
            // Padded numbers: runs of spaces are one, and none after '('.
            if (c == '#' && last == '#')
                || (c == ' ' && (last == ' ' || last == '(') && !shaped.is_empty())
            {
                continue;
            }
            shaped.push(c);
            last = c;
        }
        out.push_str(&shaped);
        out.push('\n');
    }
    out
}

/// The same command line run by sysbench and by `dbmeter sysbench`: the
/// same exit code, and the same lines once the numbers are left out.
fn same_as_sysbench(s: &Scratch, args: &[&str]) -> Option<Run> {
    let theirs = real_sysbench(s, args)?;
    let ours = sb(s, args);
    assert_eq!(
        (ours.code, shape(&ours.stdout), shape(&ours.stderr)),
        (theirs.code, shape(&theirs.stdout), shape(&theirs.stderr)),
        "{args:?}:\n--- dbmeter\n{}{}\n--- sysbench\n{}{}",
        ours.stdout,
        ours.stderr,
        theirs.stdout,
        theirs.stderr
    );
    Some(ours)
}

/// A usage error of `dbmeter run`: exit 2, one line on stderr saying
/// `want`.
fn refused(s: &Scratch, args: &[&str], want: &str) {
    let r = s.run_home(args);
    assert_eq!(r.code, 2, "{args:?}:\n{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{args:?}: {}", r.stderr);
    assert!(r.stderr.contains(want), "{args:?}: {}", r.stderr);
    assert!(!r.stderr.contains("panicked"));
}

/// A bad value in sysbench's layout: exit 1, the banner and sysbench's
/// FATAL line on stdout.
fn fatal(s: &Scratch, args: &[&str], want: &str) {
    let r = sb(s, args);
    assert_eq!(r.code, 1, "{args:?}:\n{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout.ends_with(&format!(
            "(using dbmeter {})\n\n{want}\n",
            env!("CARGO_PKG_VERSION")
        )),
        "{args:?}:\n{}",
        r.stdout
    );
}

#[test]
fn cpu_counts_its_events_in_both_layouts() {
    let s = Scratch::new();
    let args = [
        "cpu",
        "--cpu-max-prime=1000",
        "--events=100",
        "--threads=2",
        "run",
    ];
    let r = ok(sb(&s, &args), &args);
    assert_eq!(r.stat("total number of events:"), 100);
    for line in [
        "Number of threads: 2\n",
        "\n\nPrime numbers limit: 1000\n\nInitializing worker threads...\n\nThreads started!\n\nCPU speed:\n    events per second: ",
        "\n\nGeneral statistics:\n",
        "    events (avg/stddev):           50.0000/",
    ] {
        assert!(r.stdout.contains(line), "{line:?} in:\n{}", r.stdout);
    }
    // dbmeter's layout, and its document.
    let r = ok(
        s.run_home(&[
            "run",
            "cpu",
            "--cpu-max-prime=2000",
            "--events=40",
            "--threads=2",
        ]),
        &["run cpu"],
    );
    assert!(
        r.stdout.contains("each event counts the primes below 2000"),
        "{}",
        r.stdout
    );
    assert_eq!(r.stat("total number of events:"), 40);
    assert!(!r.stdout.contains("SQL statistics") && !r.stdout.contains("Counters:"));
    let doc = ok(
        s.run_home(&["run", "cpu", "--events=30", "--format=json"]),
        &["run cpu json"],
    )
    .json();
    assert_eq!(doc["workload"], "cpu");
    assert_eq!(doc["totals"]["events"], 30);
    assert_eq!(doc["end"]["reason"], "event_limit");
    assert_eq!(doc["measures"].as_array().map_or(0, Vec::len), 0);
    assert_eq!(doc["options"]["cpu-max-prime"], "10000");
    assert_eq!(doc["target"]["driver"], "none");
}

#[test]
fn threads_counts_its_events() {
    let s = Scratch::new();
    let args = ["threads", "--events=100", "--threads=2", "run"];
    let r = ok(sb(&s, &args), &args);
    assert_eq!(r.stat("total number of events:"), 100);
    assert!(
        r.stdout.contains("current time\n\n\nInitializing worker threads...\n\nThreads started!\n\n\nGeneral statistics:\n"),
        "{}",
        r.stdout
    );
    // sysbench's words on its settings from --verbosity=4 on.
    let r = ok(
        sb(&s, &["threads", "--events=10", "--verbosity=4", "run"]),
        &["v4"],
    );
    assert!(
        r.stdout.contains("Doing thread subsystem performance test\nThread yields per test: 1000 Locks used: 8\nInitializing worker threads..."),
        "{}",
        r.stdout
    );
    let doc = ok(
        s.run_home(&[
            "run",
            "threads",
            "--thread-yields=20",
            "--thread-locks=3",
            "--threads=3",
            "--events=60",
            "--format=json",
        ]),
        &["run threads"],
    )
    .json();
    assert_eq!(doc["totals"]["events"], 60);
    assert_eq!(doc["threads"], 3);
}

#[test]
fn mutex_runs_one_event_per_thread() {
    let s = Scratch::new();
    // --events does not stop it before each thread has had its event.
    let args = [
        "mutex",
        "--events=10",
        "--threads=3",
        "--mutex-locks=2000",
        "--mutex-loops=50",
        "run",
    ];
    let r = ok(sb(&s, &args), &args);
    assert_eq!(r.stat("total number of events:"), 3);
    assert!(
        r.stdout
            .contains("    events (avg/stddev):           1.0000/0.00\n"),
        "{}",
        r.stdout
    );
    let doc = ok(
        s.run_home(&[
            "run",
            "mutex",
            "--threads=4",
            "--mutex-num=16",
            "--mutex-locks=500",
            "--mutex-loops=0",
            "--time=0",
            "--format=json",
        ]),
        &["run mutex"],
    )
    .json();
    assert_eq!(doc["totals"]["events"], 4);
    assert_eq!(doc["end"]["reason"], "work_done");
}

#[test]
fn memory_processes_its_total_size_whatever_events_says() {
    let s = Scratch::new();
    // sysbench's test_memory.t: --events=1, and the total divided into
    // blocks and shared by the threads.
    let args = [
        "memory",
        "--memory-block-size=4K",
        "--memory-total-size=64M",
        "--events=1",
        "--time=0",
        "--threads=2",
        "--memory-oper=read",
        "run",
    ];
    let r = ok(sb(&s, &args), &args);
    assert_eq!(r.stat("total number of events:"), 16384);
    for part in [
        "current time\n\n\nRunning memory speed test with the following options:\n  block size: 4KiB\n  total size: 64MiB\n  operation: read\n  scope: global\n\nInitializing worker threads...\n\nThreads started!\n\nTotal operations: 16384 (",
        " per second)\n\n64.00 MiB transferred (",
        " MiB/sec)\n\n\nGeneral statistics:\n",
        "    events (avg/stddev):           8192.0000/0.00\n",
    ] {
        assert!(r.stdout.contains(part), "{part:?} in:\n{}", r.stdout);
    }
    // Three threads share 256 blocks: 85 each, as sysbench divides.
    let doc = ok(
        s.run_home(&[
            "run",
            "memory",
            "--memory-block-size=4K",
            "--memory-total-size=1M",
            "--memory-scope=local",
            "--memory-access-mode=rnd",
            "--threads=3",
            "--events=2",
            "--format=json",
        ]),
        &["run memory"],
    )
    .json();
    assert_eq!(doc["totals"]["events"], 255);
    assert_eq!(doc["totals"]["counts"]["bytes_transferred"], 255 * 4096);
    assert_eq!(doc["end"]["reason"], "work_done");
    assert_eq!(doc["measures"][0]["name"], "bytes_transferred");
    assert_eq!(doc["measures"][0]["unit"], "byte");
    let m = &doc["memory"];
    assert_eq!(
        (&m["block_size"], &m["scope"], &m["oper"], &m["access_mode"]),
        (
            &4096.into(),
            &"local".into(),
            &"write".into(),
            &"rnd".into()
        )
    );
    assert_eq!(m["working_set"], 3 * 4096);
    assert_eq!(m["operations"], 255);
    assert!(m["mib_per_s"].as_f64().is_some_and(|v| v > 0.0), "{m}");
    // --memory-oper=none transfers nothing: no bytes, no MiB line.
    let r = ok(
        sb(
            &s,
            &[
                "memory",
                "--memory-oper=none",
                "--memory-total-size=1M",
                "run",
            ],
        ),
        &["none"],
    );
    assert_eq!(r.stat("total number of events:"), 1024);
    assert!(!r.stdout.contains("MiB transferred"), "{}", r.stdout);
    let doc = ok(
        s.run_home(&[
            "run",
            "memory",
            "--memory-oper=none",
            "--memory-total-size=1M",
            "--format=json",
        ]),
        &["none json"],
    )
    .json();
    assert_eq!(doc["measures"].as_array().map_or(0, Vec::len), 0);
    assert!(doc["memory"]["mib"].is_null());
    // dbmeter's layout says what it runs, in MiB.
    let r = ok(
        s.run_home(&["run", "memory", "--memory-total-size=2M", "--events=3"]),
        &["run memory text"],
    );
    assert!(
        r.stdout.contains("memory: --events has no effect"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains(
            "each event writes a block of 1024 bytes (global, in order), 2048 per thread"
        ),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("    transferred:                         2.00 MiB ("),
        "{}",
        r.stdout
    );
}

#[test]
fn memory_interval_lines_are_sysbenchs() {
    let s = Scratch::new();
    let args = [
        "memory",
        "--memory-total-size=0",
        "--time=2",
        "--report-interval=1",
        "run",
    ];
    let r = ok(sb(&s, &args), &args);
    let lines: Vec<&str> = r.stdout.lines().filter(|l| l.starts_with("[ ")).collect();
    assert!(!lines.is_empty(), "{}", r.stdout);
    for l in lines {
        let rest = l
            .strip_prefix("[ 1s ] ")
            .or_else(|| l.strip_prefix("[ 2s ] "));
        let mib = rest.and_then(|r| r.strip_suffix(" MiB/sec"));
        assert!(
            mib.is_some_and(|v| v.parse::<f64>().is_ok_and(|v| v > 0.0)),
            "{l}"
        );
    }
}

/// The HugeTLB pool: a run in huge pages where the pool has them, else
/// sysbench's errors and dbmeter's one line with what the pool holds.
#[test]
fn memory_in_huge_pages_or_a_clear_error() {
    let s = Scratch::new();
    let free = std::fs::read_to_string("/proc/meminfo")
        .unwrap_or_default()
        .lines()
        .find_map(|l| {
            l.strip_prefix("HugePages_Free:")
                .map(|v| v.trim().parse::<u64>().unwrap_or(0))
        })
        .unwrap_or(0);
    let args = [
        "memory",
        "--memory-hugetlb=on",
        "--memory-total-size=1M",
        "run",
    ];
    if free >= 2 {
        let r = ok(sb(&s, &args), &args);
        assert_eq!(r.stat("total number of events:"), 1024);
        return;
    }
    fatal(
        &s,
        &args,
        "FATAL: Failed to allocate 4195327 bytes from HugeTLB memory. errno = 12 (Cannot allocate memory)\nFATAL: Failed to allocate buffer!",
    );
    let r = s.run_home(&[
        "run",
        "memory",
        "--memory-hugetlb=on",
        "--memory-total-size=1M",
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(r.stderr.contains("free of"), "{}", r.stderr);
    assert!(r.stderr.contains("vm.nr_hugepages"), "{}", r.stderr);
    // And as sysbench says it.
    same_as_sysbench(&s, &args);
}

/// The talk's "numbers lie": a block in the caches is said to measure
/// them; one larger than the last-level cache read at RAM's speed is not
/// flagged.
#[test]
fn memory_results_are_checked_for_plausibility() {
    let Some(cache) = dbmeter_env::last_level_cache() else {
        eprintln!("skipping: this machine's sysfs does not describe its caches");
        return;
    };
    let s = Scratch::new();
    let warnings = |block: &str, total: &str| {
        let doc = ok(
            s.run_home(&[
                "run",
                "memory",
                &format!("--memory-block-size={block}"),
                &format!("--memory-total-size={total}"),
                "--memory-oper=read",
                "--format=json",
            ]),
            &["plausibility"],
        )
        .json();
        assert_eq!(doc["memory"]["cache_bytes"], cache.bytes);
        doc["warnings"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .filter_map(|w| w["code"].as_str().map(str::to_string))
            .filter(|c| c.starts_with("memory_"))
            .collect::<Vec<_>>()
    };
    assert_eq!(warnings("1K", "4M"), ["memory_in_cache"]);
    let big = (cache.bytes * 2).next_power_of_two();
    assert_eq!(
        warnings(&big.to_string(), &(big * 2).to_string()),
        Vec::<String>::new()
    );
}

#[test]
fn bad_values_in_both_layouts() {
    let s = Scratch::new();
    for (args, want) in [
        (
            &["memory", "--memory-block-size=-1"][..],
            "FATAL: Invalid value for memory-block-size: -1",
        ),
        (
            &["memory", "--memory-block-size=0"],
            "FATAL: Invalid value for memory-block-size: 0",
        ),
        (
            &["memory", "--memory-block-size=3"],
            "FATAL: Invalid value for memory-block-size: 3",
        ),
        (
            &["memory", "--memory-block-size=9"],
            "FATAL: Invalid value for memory-block-size: 9",
        ),
        (
            &["memory", "--memory-scope=foo"],
            "FATAL: Invalid value for memory-scope: foo",
        ),
        (
            &["memory", "--memory-oper=copy"],
            "FATAL: Invalid value for memory-oper: copy",
        ),
        (
            &["memory", "--memory-access-mode=x"],
            "FATAL: Invalid value for memory-access-mode: x",
        ),
        (
            &["memory", "--memory-total-size=abc"],
            "FATAL: Invalid value for memory-total-size: abc",
        ),
        (
            &["cpu", "--cpu-max-prime=0"],
            "FATAL: Invalid value of cpu-max-prime: 0.",
        ),
        (
            &["cpu", "--cpu-max-prime=-5"],
            "FATAL: Invalid value of cpu-max-prime: -5.",
        ),
        (
            &["threads", "--thread-locks=0"],
            "FATAL: Invalid value for thread-locks: 0",
        ),
        (
            &["mutex", "--mutex-num=0"],
            "FATAL: Invalid value for mutex-num: 0",
        ),
        (
            &["mutex", "--mutex-locks=-2"],
            "FATAL: Invalid value for mutex-locks: -2",
        ),
    ] {
        let mut a = args.to_vec();
        a.push("run");
        fatal(&s, &a, want);
    }
    for (args, want) in [
        (
            &["run", "memory", "--memory-block-size=3"][..],
            "--memory-block-size=3: expected a power of two",
        ),
        (
            &["run", "memory", "--memory-scope=foo"],
            "--memory-scope=foo: expected global or local",
        ),
        (
            &["run", "memory", "--memory-total-size=1.5G"],
            "--memory-total-size=1.5G: expected a size",
        ),
        (
            &["run", "cpu", "--cpu-max-prime=0"],
            "--cpu-max-prime=0: expected a whole number from 1",
        ),
        (
            &["run", "cpu", "--cpu-max-prime=x"],
            "--cpu-max-prime=x: invalid value",
        ),
        (
            &["run", "threads", "--thread-yields=-1"],
            "--thread-yields=-1: expected a number of yields",
        ),
        (
            &["run", "mutex", "--mutex-loops=-1"],
            "--mutex-loops=-1: expected a number of empty loops",
        ),
        (
            &["run", "memory", "--memory-total-size=1K", "--threads=2"],
            "less than a block for each thread",
        ),
        (&["prepare", "cpu"], "cpu has no prepare command"),
    ] {
        refused(&s, args, want);
    }
    // sysbench's usage errors of a built-in test.
    for test in ["cpu", "threads", "mutex", "memory"] {
        for (args, want) in [
            (
                vec![test],
                format!(
                    "The '{test}' test requires a command argument. See 'sysbench {test} help'\n"
                ),
            ),
            (
                vec![test, "prepare"],
                format!("'{test}' test does not implement the 'prepare' command.\n"),
            ),
            (
                vec![test, "cleanup"],
                format!("'{test}' test does not implement the 'cleanup' command.\n"),
            ),
            (
                vec![test, "prewarm"],
                "Unknown command: prewarm\n".to_string(),
            ),
            (
                vec![test, "--tables=2", "run"],
                "invalid option: --tables=2\n".to_string(),
            ),
        ] {
            let r = sb(&s, &args);
            assert_eq!((r.code, r.stderr.as_str()), (1, want.as_str()), "{args:?}");
        }
    }
    // A rate the threads cannot keep up with fills sysbench's event queue.
    let r = sb(&s, &["--rate=2000000000", "cpu", "run", "--verbosity=1"]);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (
            1,
            "FATAL: The event queue is full. This means the worker threads are unable to keep up with the specified event generation rate\n"
        ),
        "{}",
        r.stderr
    );
    refused(
        &s,
        &["run", "cpu", "--rate=2000000000"],
        "--rate=2000000000: expected",
    );
}

/// Runs of the machine tests go through the normal document: stored,
/// compared, written as CSV.
#[test]
fn stored_compared_and_written_as_csv() {
    let s = Scratch::new();
    for phase in ["a", "a", "b"] {
        ok(
            s.run_home(&[
                "run",
                "memory",
                "--memory-total-size=4M",
                "--store=r.db",
                &format!("--tag=phase={phase}"),
            ]),
            &["store"],
        );
    }
    let out = ok(
        s.run_home(&[
            "compare",
            "--store=r.db",
            "--baseline=tag:phase=a",
            "--candidate=tag:phase=b",
            "--format=csv",
        ]),
        &["compare"],
    )
    .stdout;
    let rows = csv_rows(&out);
    assert_eq!(rows.len(), 1, "{out}");
    assert_eq!(rows[0]["workload"], "memory");
    let shown = ok(
        s.run_home(&["results", "show", "1", "--store=r.db"]),
        &["show"],
    )
    .stdout;
    assert!(shown.contains("transferred:"), "{shown}");
    let csv = ok(
        s.run_home(&["run", "cpu", "--time=2", "--format=csv"]),
        &["csv"],
    )
    .stdout;
    let rows = csv_rows(&csv);
    assert!(!rows.is_empty(), "{csv}");
    assert!(
        rows[0]["events"].parse::<u64>().is_ok_and(|n| n > 0),
        "{csv}"
    );
    let csv = ok(
        s.run_home(&[
            "run",
            "memory",
            "--time=2",
            "--memory-total-size=0",
            "--format=csv",
        ]),
        &["memory csv"],
    )
    .stdout;
    let rows = csv_rows(&csv);
    assert!(
        rows[0]["bytes_transferred_per_s"]
            .parse::<f64>()
            .is_ok_and(|v| v > 0.0),
        "{csv}"
    );
}

/// The same command lines, given to the real sysbench and to `dbmeter
/// sysbench`: the same lines, numbers aside.
#[test]
fn the_same_output_as_sysbench() {
    let s = Scratch::new();
    for args in [
        &["cpu", "help"][..],
        &["threads", "help"],
        &["mutex", "help"],
        &["memory", "help"],
        &[
            "cpu",
            "--cpu-max-prime=2000",
            "--events=50",
            "--threads=2",
            "run",
        ],
        &["threads", "--events=50", "--threads=2", "run"],
        &["mutex", "--threads=2", "--mutex-locks=1000", "run"],
        &["memory", "--memory-total-size=16M", "--threads=2", "run"],
        &[
            "memory",
            "--memory-total-size=16M",
            "--memory-oper=none",
            "--memory-access-mode=rnd",
            "run",
        ],
        &[
            "memory",
            "--memory-block-size=1M",
            "--memory-total-size=16M",
            "--memory-scope=local",
            "--memory-oper=read",
            "run",
        ],
        &["cpu", "--cpu-max-prime=0", "run"],
        &["memory", "--memory-block-size=3", "run"],
        &["memory", "prepare"],
        &["cpu"],
        &["cpu", "--verbosity=0", "--events=5", "run"],
    ] {
        if same_as_sysbench(&s, args).is_none() {
            return;
        }
    }
}
