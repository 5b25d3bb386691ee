//! `--assert` targets and their verdicts: each form passes and fails on
//! purpose, a missed target ends dbmeter with exit code 3, the JUnit file
//! is valid against the schema Jenkins reads (junit-10.xsd, checked by
//! xmllint), names that do not exist are usage errors (exit 2), and
//! campaign files take targets too.

use crate::common::*;
use dbmeter_testkit::Requirement;
use dbmeter_testkit::tools::Tool;
use serde_json::Value;
use std::path::PathBuf;

pub(crate) const XMLLINT: Tool =
    Tool::on_path_for("xmllint", "libxml2-utils", Requirement::Tools, &["xmllint"]);

/// Jenkins' JUnit schema, as pytest's source package carries it: .ci/run
/// fetches it from PyPI into this place (or `DBMETER_JUNIT_XSD`).
pub(crate) fn junit_schema() -> Option<PathBuf> {
    let p = std::env::var_os("DBMETER_JUNIT_XSD")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .map(|h| PathBuf::from(h).join(".cache/dbmeter-peers/junit-10.xsd"))
        })?;
    if p.is_file() {
        Some(p)
    } else {
        dbmeter_testkit::skip(
            Requirement::Tools,
            &format!(
                "{} not found (.ci/run fetches junit-10.xsd from pytest's source package on PyPI)",
                p.display()
            ),
        );
        None
    }
}

/// Checks `file` against Jenkins' JUnit schema with xmllint (skipped,
/// and said so, when either is missing).
pub(crate) fn check_junit(file: &std::path::Path) {
    if let (Some(lint), Some(xsd)) = (XMLLINT.find_or_skip(), junit_schema()) {
        let out = std::process::Command::new(lint)
            .arg("--noout")
            .arg("--schema")
            .arg(&xsd)
            .arg(file)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}\n{}",
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(file).unwrap_or_default()
        );
    }
}

fn verdicts(doc: &Value) -> Vec<(String, String)> {
    doc["verdicts"]
        .as_array()
        .expect("verdicts")
        .iter()
        .map(|v| {
            (
                v["assertion"].as_str().unwrap_or("").to_string(),
                v["status"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

const RUN: [&str; 6] = [
    "run",
    "oltp_point_select",
    "--db=sqlite:t.sqlite",
    "--table-size=200",
    "--time=0",
    "--events=400",
];

fn prepared() -> Scratch {
    let s = Scratch::new();
    s.ok(&[
        "prepare",
        "oltp_point_select",
        "--db=sqlite:t.sqlite",
        "--table-size=200",
    ]);
    s
}

#[test]
fn targets_met_and_missed_with_their_exit_codes_and_junit() {
    let s = prepared();
    // Met: wide margins, every form of the whole run.
    let mut args = RUN.to_vec();
    args.extend([
        "--assert=tps>0",
        "--assert",
        "p99 < 1h",
        "--assert=p99.9<=3600s",
        "--assert=avg<3600000",
        "--assert=events=400",
        "--assert=errors<=0.1%",
        "--assert=errors=0",
        "--assert=reads/s>0",
        "--assert=queries>=400",
    ]);
    let r = s.ok(&args);
    assert!(r.stdout.contains("Targets (9 of 9 met):"), "{}", r.stdout);
    assert!(
        r.stdout.contains("    events=400: pass (measured 400)"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("    p99<1h: pass (measured "),
        "{}",
        r.stdout
    );

    // Missed: exit 3, the FAIL lines, the document's verdicts, the JUnit file.
    let mut args = RUN.to_vec();
    args.extend([
        "--assert=tps>0",
        "--assert=tps>1e12",
        "--assert=p50<1ns",
        "--assert=nothing_here>1",
        "--format=json",
        "--output=doc.json",
        "--junit=report.xml",
    ]);
    let r = s.run(&args);
    assert_eq!(r.code, 3, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("3 of 4 targets not met (exit code 3)"),
        "{}",
        r.stderr
    );
    assert!(
        r.stdout.contains("    tps>1e12: FAIL (measured "),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("    nothing_here>1: NOT JUDGED (no value; the run has no measure or figure named 'nothing_here')"),
        "{}",
        r.stdout
    );
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(s.path("doc.json")).unwrap()).unwrap();
    assert_eq!(
        verdicts(&doc),
        [
            ("tps>0", "pass"),
            ("tps>1e12", "fail"),
            ("p50<1ns", "fail"),
            ("nothing_here>1", "not_judged")
        ]
        .map(|(a, b)| (a.to_string(), b.to_string()))
    );
    // The assertions are verdicts, not options of the run.
    assert!(doc["options"].get("assert").is_none(), "{}", doc["options"]);
    let xml = std::fs::read_to_string(s.path("report.xml")).unwrap();
    assert!(
        xml.contains("tests=\"5\" failures=\"2\" errors=\"1\""),
        "{xml}"
    );
    assert!(xml.contains("<testcase name=\"tps&gt;1e12\""), "{xml}");
    check_junit(&s.path("report.xml"));

    // The store keeps the verdicts with the run; with the document on
    // stdout, the missed targets are said on stderr.
    let mut args = RUN.to_vec();
    args.extend(["--assert=events>400", "--store=r.db", "--format=json"]);
    let r = s.run(&args);
    assert_eq!(r.code, 3, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr
            .contains("dbmeter: target events>400: FAIL (measured 400)"),
        "{}",
        r.stderr
    );
    let shown = s
        .ok(&["results", "show", "1", "--store=r.db", "--format=json"])
        .json();
    assert_eq!(
        verdicts(&shown),
        vec![("events>400".to_string(), "fail".to_string())]
    );
}

/// Runs `args` (which write `--junit=j.xml`), a run that misses `failed`
/// on purpose: exit code 3, its FAIL line, the document's verdict and
/// the JUnit file's failure. Returns the document.
fn misses(s: &Scratch, args: &[&str], failed: &str) -> Value {
    let mut a = args.to_vec();
    a.extend(["--junit=j.xml", "--output=doc.json", "--format=json"]);
    let r = s.run(&a);
    assert_eq!(r.code, 3, "{args:?}: {}\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains(&format!("    {failed}: FAIL (measured ")),
        "{}",
        r.stdout
    );
    assert!(
        r.stderr.contains("1 of 2 targets not met (exit code 3)"),
        "{}",
        r.stderr
    );
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(s.path("doc.json")).unwrap()).unwrap();
    let v = verdicts(&doc);
    assert_eq!(v.len(), 2, "{v:?}");
    assert!(
        v.contains(&(failed.to_string(), "fail".to_string())),
        "{v:?}"
    );
    let xml = std::fs::read_to_string(s.path("j.xml")).unwrap();
    assert!(
        xml.contains("tests=\"3\" failures=\"1\" errors=\"0\""),
        "{xml}"
    );
    let escaped = failed.replace('<', "&lt;").replace('>', "&gt;");
    let case = xml
        .split("<testcase ")
        .find(|c| c.starts_with(&format!("name=\"{escaped}\"")))
        .unwrap_or_else(|| panic!("no test case {escaped}: {xml}"));
    assert!(case.contains("<failure"), "{case}");
    check_junit(&s.path("j.xml"));
    doc
}

/// The files of the small fileio tests.
const FILES: [&str; 3] = [
    "--file-num=2",
    "--file-total-size=512K",
    "--file-block-size=4K",
];

/// The files of a small fileio test prepared in `s`; the start of its
/// run's arguments (300 random reads and writes), the same file options.
fn prepared_fileio(s: &Scratch) -> Vec<&'static str> {
    let mut prep = vec!["prepare", "fileio"];
    prep.extend(FILES);
    s.ok(&prep);
    let mut args = vec![
        "run",
        "fileio",
        "--file-test-mode=rndrw",
        "--time=0",
        "--events=300",
    ];
    args.extend(FILES);
    args
}

#[test]
fn a_kind_a_stage_and_an_errors_share_fail_on_purpose() {
    let s = Scratch::new();
    // A kind: fileio's reads cannot take under a nanosecond.
    let mut args = prepared_fileio(&s);
    args.extend(["--assert=write.events>0", "--assert=read.p99<1ns"]);
    misses(&s, &args, "read.p99<1ns");

    // A stage: the second stage that lasts, 2 users for 1 s.
    s.ok(&[
        "prepare",
        "oltp_point_select",
        "--db=sqlite:t.sqlite",
        "--table-size=100",
    ]);
    misses(
        &s,
        &[
            "run",
            "oltp_point_select",
            "--db=sqlite:t.sqlite",
            "--table-size=100",
            "--stages=0s:1,1s:1,0s:2,1s:2",
            "--assert=stage2.events>0",
            "--assert=stage4.p99<1ns",
        ],
        "stage4.p99<1ns",
    );

    // The errors' share: a trigger refuses about one insert in five, and
    // the run ignores the error (the event is tried again).
    s.ok(&[
        "prepare",
        "oltp_insert",
        "--db=sqlite:e.sqlite",
        "--table-size=100",
    ]);
    s.db("e.sqlite")
        .execute_batch(
            "CREATE TRIGGER flaky BEFORE INSERT ON sbtest1 WHEN abs(random()) % 5 = 0 \
             BEGIN SELECT RAISE(ABORT, 'flaky'); END;",
        )
        .unwrap();
    let doc = misses(
        &s,
        &[
            "run",
            "oltp_insert",
            "--db=sqlite:e.sqlite",
            "--table-size=100",
            "--time=0",
            "--events=300",
            "--ignore-errors=SQLITE_CONSTRAINT",
            "--assert=events=300",
            "--assert=errors<=0.1%",
        ],
        "errors<=0.1%",
    );
    let share = doc["verdicts"][1]["measured"].as_f64().unwrap();
    // About 20% of attempts; far above 0.1% whatever the draw.
    assert!(share > 2.0 && share < 60.0, "{share}: {}", doc["verdicts"]);
    assert!(doc["errors"]["SQLITE_CONSTRAINT"].as_u64().unwrap() > 0);
}

#[test]
fn kinds_and_measures_of_a_run_without_a_database() {
    let s = Scratch::new();
    let mut args = prepared_fileio(&s);
    args.extend([
        "--assert=read.events>0",
        "--assert=write.p99<1h",
        "--assert=fsync.max<=3600s",
        "--assert=read.tps>0",
        "--assert=bytes_read/s>0",
        "--assert=events=300",
        "--junit=j.xml",
    ]);
    let r = s.ok(&args);
    assert!(r.stdout.contains("Targets (6 of 6 met):"), "{}", r.stdout);
    let xml = std::fs::read_to_string(s.path("j.xml")).unwrap();
    assert!(
        xml.contains("tests=\"7\" failures=\"0\" errors=\"0\""),
        "{xml}"
    );

    // Names the workload does not have: usage errors before the run.
    for (assert, says) in [
        (
            "--assert=NewOrder.p90<5s",
            "no kind named 'NewOrder': its kinds are read, write, fsync",
        ),
        (
            "--assert=rows/s>1",
            "'rows' is not a measure of this workload",
        ),
        ("--assert=p99<<1s", "is not a number with an optional unit"),
        ("--assert=p99", "no comparison"),
        ("--assert=read.qps>1", "a kind has events, tps"),
    ] {
        let mut a = vec![
            "run",
            "fileio",
            "--file-test-mode=rndrw",
            "--time=1",
            assert,
        ];
        a.extend(FILES);
        let r = s.run(&a);
        assert_eq!(r.code, 2, "{assert}: {}\n{}", r.stdout, r.stderr);
        assert!(r.stderr.contains(says), "{assert}: {}", r.stderr);
        assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
        assert!(!r.stdout.contains("Threads started"), "{}", r.stdout);
    }
    // Kinds known from the options are checked before the run connects:
    // no server answers on port 1.
    let r = s.run(&[
        "run",
        "tpcc",
        "--db=mysql://root@127.0.0.1:1/none",
        "--assert=NewOrder.p90<5s",
    ]);
    assert_eq!(r.code, 2, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("no kind named 'NewOrder': its kinds are new_order, payment, order_status, delivery, stock_level"),
        "{}",
        r.stderr
    );
    let r = s.run(&["prepare", "fileio", "--assert=tps>1"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("--assert judges a run's result"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_campaign_with_targets_exits_3_when_a_run_misses_one() {
    let s = Scratch::new();
    let file = s.path("c.toml");
    std::fs::write(
        &file,
        r#"name = "gate"
store = "results.db"
duration = 1
clients = [1]
options = { assert = ["tps>0", "events>=1"] }

[[target]]
name = "lite"
url = "sqlite:c.sqlite"

[[workload]]
name = "oltp_point_select"
options = { table-size = 100 }

[[workload]]
name = "oltp_read_only"
options = { table-size = 100, assert = "p99<1ns" }
"#,
    )
    .unwrap();
    let file = file.to_string_lossy().into_owned();
    let r = s.run_home(&["campaign", "run", &file]);
    assert_eq!(r.code, 3, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("[targets missed: p99<1ns]"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("2 stored (1 missed their assert targets), 0 failed"),
        "{}",
        r.stdout
    );
    // A target that does not parse is named before anything runs.
    std::fs::write(
        s.path("bad.toml"),
        std::fs::read_to_string(&file)
            .unwrap()
            .replace("p99<1ns", "p99<1parsec"),
    )
    .unwrap();
    let r = s.run_home(&["campaign", "run", &s.path("bad.toml").to_string_lossy()]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("'1parsec' is not a number"),
        "{}",
        r.stderr
    );
    assert!(!r.stdout.contains("[1/"), "{}", r.stdout);

    // A kind or a stage the cell's workload does not have: one line that
    // names the cell, from the dry run too, before anything runs.
    for (workload, options, says) in [
        (
            "fileio",
            r#"file-num = 1, file-total-size = "64K", assert = ["tps>0", "new_order.p90<5s"]"#,
            "workload 'fileio' with 1 clients: --assert 'new_order.p90<5s': no kind named 'new_order': its kinds are read, write, fsync",
        ),
        (
            "oltp_point_select",
            r#"table-size = 100, assert = "read.p99<1s""#,
            "workload 'oltp_point_select' with 1 clients: --assert 'read.p99<1s': no kind named 'read': this workload has no named kinds",
        ),
        (
            "oltp_point_select",
            r#"table-size = 100, stages = "0s:1,1s:1", assert = "stage3.p99<1s""#,
            "workload 'oltp_point_select' with 1 clients: --assert 'stage3.p99<1s': the run has no stage 3 with a duration (its stages that last are stage2)",
        ),
    ] {
        let file = s.path("kind.toml");
        std::fs::write(
            &file,
            format!(
                r#"name = "kinds"
store = "results.db"
duration = 1
clients = [1]

[[target]]
name = "lite"
url = "sqlite:c.sqlite"

[[workload]]
name = "{workload}"
options = {{ {options} }}
"#
            ),
        )
        .unwrap();
        let file = file.to_string_lossy().into_owned();
        for dry in [true, false] {
            let mut a = vec!["campaign", "run", file.as_str()];
            if dry {
                a.push("--dry-run");
            }
            let r = s.run_home(&a);
            assert_eq!(r.code, 1, "{a:?}: {}\n{}", r.stdout, r.stderr);
            assert!(r.stderr.contains(says), "{a:?}: {}", r.stderr);
            assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
            assert!(!r.stdout.contains("estimated duration"), "{}", r.stdout);
            assert!(!r.stdout.contains("[1/"), "{}", r.stdout);
        }
    }
}
