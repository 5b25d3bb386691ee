//! `dbmeter compare` with statistics and as a regression gate, on stored
//! runs of known difference: the same point-select workload on SQLite at
//! two fixed arrival rates 10% apart (throughput follows the rate), and a
//! second set at the baseline's rate. Five repeats a side, interleaved,
//! each side with the same five seeds (so the arrival schedules, and with
//! them the counts, are fixed). A run that ended with arrivals it never
//! started (the machine stalled it: its count is then not the
//! schedule's) is deleted and made again. Also a run's own throughput
//! interval (batch means) in its document and text report. A third set
//! spreads its runs' rates 20% either side of the baseline's, with the
//! same median: too noisy, whatever the machine's load.

use crate::common::*;
use crate::verdicts::{XMLLINT, junit_schema};
use serde_json::Value;

const DB: &str = "--db=sqlite:t.sqlite";

fn stored_id(r: &Run) -> String {
    r.stderr
        .lines()
        .find_map(|l| l.strip_prefix("stored as run #"))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("no 'stored as run' in:\n{}", r.stderr))
        .to_string()
}

/// One stored run at `rate` per second with seed `seed`, tagged `side`
/// and `seed`; made again (up to 3 times in all) while the stored run
/// left more than 0.5% of its arrivals unstarted at its end. Returns the
/// run and its id.
fn stored_run(s: &Scratch, side: &str, rate: u32, seed: u32) -> (Run, String) {
    for attempt in 1..=3 {
        let r = s.ok_home(&[
            "run",
            "oltp_point_select",
            DB,
            "--table-size=500",
            &format!("--rate={rate}"),
            "--time=2",
            "--report-interval=0.2",
            &format!("--rand-seed={seed}"),
            "--store=r.db",
            &format!("--tag=side={side}"),
            &format!("--tag=seed={seed}"),
        ]);
        let id = stored_id(&r);
        let doc = s
            .ok_home(&["results", "show", &id, "--store=r.db", "--format=json"])
            .json();
        let unstarted = doc["rate"]["unstarted_at_end"].as_f64().unwrap_or(0.0);
        let events = doc["totals"]["events"].as_f64().unwrap_or(0.0);
        if unstarted <= 0.005 * events || attempt == 3 {
            return (r, id);
        }
        s.ok_home(&[
            "results",
            "delete",
            &format!("run:{id}"),
            "--store=r.db",
            "--yes",
        ]);
    }
    unreachable!()
}

fn compare(s: &Scratch, candidate: &str, extra: &[&str]) -> Run {
    let mut args = vec![
        "compare",
        "--store=r.db",
        "--baseline=tag:side=base",
        "--candidate",
    ];
    args.push(candidate);
    args.extend_from_slice(extra);
    s.run_home(&args)
}

fn xml_valid(s: &Scratch, file: &str) {
    if let (Some(lint), Some(xsd)) = (XMLLINT.find_or_skip(), junit_schema()) {
        let out = std::process::Command::new(lint)
            .arg("--noout")
            .arg("--schema")
            .arg(&xsd)
            .arg(s.path(file))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}\n{}",
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(s.path(file)).unwrap_or_default()
        );
    }
}

#[test]
fn known_differences_get_their_verdicts_and_the_gate_trips_only_on_the_real_one() {
    let s = Scratch::new();
    s.ok(&["prepare", "oltp_point_select", DB, "--table-size=500"]);
    // Interleaved: base, slower (10% lower rate), same (the base's rate),
    // noisy (a rate per run from 20% below the base's to 20% above it).
    let (mut base_ids, mut slow_ids, mut same_id) = (Vec::new(), Vec::new(), String::new());
    for (seed, noisy_rate) in (1..=5).zip([1600, 2400, 1800, 2200, 2000]) {
        base_ids.push(stored_run(&s, "base", 2000, seed).1);
        slow_ids.push(stored_run(&s, "slow", 1800, seed).1);
        stored_run(&s, "noisy", noisy_rate, seed);
        let (r, id) = stored_run(&s, "same", 2000, seed);
        same_id = id;
        if seed == 1 {
            // A run's own throughput interval, in its text report.
            assert!(r.stdout.contains("Throughput interval:"), "{}", r.stdout);
            assert!(
                r.stdout.contains("(95% CI ") && r.stdout.contains("; batch means: "),
                "{}",
                r.stdout
            );
        }
    }

    // The interval is in the stored document too, around the batches'
    // mean: about 10 intervals of 0.2 s (a last one may be cut short, or
    // the clock may add one), in batches of floor(sqrt(n)).
    let doc = s
        .ok_home(&["results", "show", &same_id, "--store=r.db", "--format=json"])
        .json();
    let ci = &doc["throughput_ci"];
    assert_eq!(ci["method"], "batch_means", "{ci}");
    let n = ci["intervals"].as_u64().unwrap();
    let (k, b) = (
        ci["batches"].as_u64().unwrap(),
        ci["batch_size"].as_u64().unwrap(),
    );
    assert!(n >= 9, "{ci}");
    assert_eq!(b, (n as f64).sqrt().floor() as u64, "{ci}");
    assert_eq!(k, n / b, "{ci}");
    let (mean, low, high) = (
        ci["events_per_s"].as_f64().unwrap(),
        ci["low"].as_f64().unwrap(),
        ci["high"].as_f64().unwrap(),
    );
    assert!(low <= mean && mean <= high && mean > 0.0, "{ci}");

    // 10% slower: "slower", an interval below 100 that excludes it, and
    // the smallest p-value 5 against 5 can have.
    let r = compare(&s, "tag:side=slow", &["--format=csv"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let rows = csv_rows(&r.stdout);
    assert_eq!(rows.len(), 1, "{}", r.stdout);
    let row = &rows[0];
    assert_eq!(row["verdict"], "slower", "{row:?}");
    let (value, low, high): (f64, f64, f64) = (
        row["value"].parse().unwrap(),
        row["value_low"].parse().unwrap(),
        row["value_high"].parse().unwrap(),
    );
    assert!(low <= value && value <= high, "{row:?}");
    assert!(high < 100.0, "{row:?}");
    // Throughput follows the rate: about 90, far from both 80 and 100.
    assert!((85.0..95.0).contains(&value), "{row:?}");
    let p: f64 = row["p_value"].parse().unwrap();
    assert!((p - 2.0 / 252.0).abs() < 1e-9, "{row:?}");
    assert_eq!(row["confidence"], "0.95");

    // The gate: a drop beyond 3% fails, exit 3, with the Markdown summary
    // and JUnit XML written; a 20% threshold and a p99 one do not fail.
    let r = compare(
        &s,
        "tag:side=slow",
        &[
            "--fail-on",
            "tps:-3%",
            "--fail-on=tps:-20%",
            "--fail-on=p99:+1000%",
            "--markdown=gate.md",
            "--junit=gate.xml",
        ],
    );
    assert_eq!(r.code, 3, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr
            .contains("dbmeter: gate FAILED: 1 of 3 checks failed (exit code 3)"),
        "{}",
        r.stderr
    );
    assert!(
        r.stdout
            .contains("    tps:-3% on oltp_point_select, 1 thread: FAIL: tps -"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("    tps:-20% on oltp_point_select, 1 thread: pass: tps -"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("slower), within the threshold"),
        "{}",
        r.stdout
    );
    let md = std::fs::read_to_string(s.path("gate.md")).unwrap();
    assert!(
        md.contains("**Performance gate FAILED: 1 of 3 checks failed**"),
        "{md}"
    );
    assert!(
        md.contains("| `tps:-3%` | oltp_point_select, 1 thread |"),
        "{md}"
    );
    assert!(md.contains("| **FAIL** |"), "{md}");
    assert!(md.contains("### 99th percentile latency"), "{md}");
    let xml = std::fs::read_to_string(s.path("gate.xml")).unwrap();
    assert!(xml.contains("tests=\"3\" failures=\"1\""), "{xml}");
    assert!(xml.contains("<failure type=\"regression\""), "{xml}");
    xml_valid(&s, "gate.xml");

    // JSON: the same cell and the gate.
    let r = compare(&s, "tag:side=slow", &["--format=json", "--fail-on=tps:-3%"]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(doc["schema"], "dbmeter.compare");
    let cell = &doc["rows"][0]["cells"][0];
    assert_eq!(cell["stats"]["verdict"], "slower");
    assert_eq!(cell["baseline"]["values"].as_array().unwrap().len(), 5);
    assert_eq!(doc["gate"]["failed"], true);
    assert_eq!(doc["gate"]["checks"][0]["outcome"], "fail");

    // The same configuration: no significant difference, the gate passes.
    let r = compare(&s, "tag:side=same", &["--format=csv"]);
    let row = &csv_rows(&r.stdout)[0];
    assert_eq!(row["verdict"], "no significant difference", "{row:?}");
    let (low, high): (f64, f64) = (
        row["value_low"].parse().unwrap(),
        row["value_high"].parse().unwrap(),
    );
    assert!(low <= 100.0 && 100.0 <= high, "{row:?}");
    assert!(row["p_value"].parse::<f64>().unwrap() > 0.05, "{row:?}");
    let r = compare(
        &s,
        "tag:side=same",
        &[
            "--fail-on=tps:-3%",
            "--fail-on=p99:+1000%",
            "--junit=same.xml",
            "--markdown=same.md",
        ],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("gate passed: 2 checks"), "{}", r.stdout);
    assert!(
        r.stdout.contains(": no significant difference"),
        "{}",
        r.stdout
    );
    let xml = std::fs::read_to_string(s.path("same.xml")).unwrap();
    assert!(xml.contains("tests=\"2\" failures=\"0\""), "{xml}");
    xml_valid(&s, "same.xml");
    assert!(
        std::fs::read_to_string(s.path("same.md"))
            .unwrap()
            .contains("**Performance gate passed: 2 checks**")
    );

    // A higher confidence widens the interval (the same resamples, so
    // the 99% bounds lie outside the 95% ones).
    let wide = csv_rows(&compare(&s, "tag:side=slow", &["--format=csv", "--confidence=99"]).stdout);
    let bound =
        |r: &std::collections::BTreeMap<String, String>, k: &str| -> f64 { r[k].parse().unwrap() };
    assert!(
        bound(&wide[0], "value_low") <= bound(&rows[0], "value_low")
            && bound(&wide[0], "value_high") >= bound(&rows[0], "value_high"),
        "{wide:?} {rows:?}"
    );
    assert_eq!(wide[0]["confidence"], "0.99");

    // Three runs a side (the first three seeds) cannot be significant at
    // 95%: too few repeats, and how many would do.
    let r = s.ok_home(&[
        "compare",
        "--store=r.db",
        &format!("--baseline=run:{}", base_ids[..3].join(",")),
        &format!("--candidate=run:{}", slow_ids[..3].join(",")),
        "--format=csv",
    ]);
    let row = &csv_rows(&r.stdout)[0];
    assert_eq!(row["verdict"], "too few repeats", "{row:?}");
    assert_eq!(row["repeats_needed"], "4", "{row:?}");

    // The gate passes such a check; --fail-on-inconclusive fails it
    // (exit 3), saying why.
    let three = [
        "compare".to_string(),
        "--store=r.db".to_string(),
        format!("--baseline=run:{}", base_ids[..3].join(",")),
        format!("--candidate=run:{}", slow_ids[..3].join(",")),
        "--fail-on=tps:-3%".to_string(),
    ];
    let three: Vec<&str> = three.iter().map(String::as_str).collect();
    let r = s.run_home(&three);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("gate passed: 1 check\n"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("tps:-3% on oltp_point_select, 1 thread: pass: tps -")
            && r.stdout.contains(", too few repeats)"),
        "{}",
        r.stdout
    );
    let r = s.run_home(&[&three[..], &["--fail-on-inconclusive", "--junit=few.xml"]].concat());
    assert_eq!(r.code, 3, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr
            .contains("dbmeter: gate FAILED: 1 of 1 check failed (1 inconclusive) (exit code 3)"),
        "{}",
        r.stderr
    );
    assert!(
        r.stdout.contains(
            "tps:-3% on oltp_point_select, 1 thread: FAIL (inconclusive, --fail-on-inconclusive): tps -"
        ),
        "{}",
        r.stdout
    );
    let xml = std::fs::read_to_string(s.path("few.xml")).unwrap();
    assert!(xml.contains("<failure type=\"inconclusive\""), "{xml}");
    xml_valid(&s, "few.xml");
    // A significant drop is no less a failure with it; a clear pass stays one.
    let r = compare(
        &s,
        "tag:side=slow",
        &["--fail-on=tps:-3%", "--fail-on-inconclusive"],
    );
    assert_eq!(r.code, 3, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains(": FAIL: tps -"), "{}", r.stdout);
    let r = compare(
        &s,
        "tag:side=same",
        &["--fail-on=tps:-50%", "--fail-on-inconclusive"],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("gate passed: 1 check\n"), "{}", r.stdout);

    // Runs whose rates spread 20% either side of the base's: their median
    // is the base's, the test cannot tell them apart and the interval is
    // too wide to rule out a change of 5%: too noisy, with the repeats a
    // side that would likely settle it (more than the 5 there are).
    let r = compare(&s, "tag:side=noisy", &["--format=json"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    let st = &doc["rows"][0]["cells"][0]["stats"];
    assert_eq!(st["verdict"], "too_noisy", "{st}");
    let needed = st["repeats_needed"].as_u64().unwrap_or(0);
    assert!(needed > 5, "{st}");
    assert!(st["p_value"].as_f64().unwrap() > 0.05, "{st}");
    assert!(
        st["ratio_low"].as_f64().unwrap() < 0.95 || st["ratio_high"].as_f64().unwrap() > 1.05,
        "{st}"
    );
    let r = compare(&s, "tag:side=noisy", &[]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let said = format!("too noisy: about {needed} repeats a side would settle it");
    let said_max = format!("too noisy: more than {needed} repeats a side would settle it");
    assert!(
        r.stdout.contains(&said) || r.stdout.contains(&said_max),
        "{}",
        r.stdout
    );
    // `dbmeter report` puts the same statistics in its comparison cells.
    let r = s.run_home(&[
        "report",
        "--store=r.db",
        "--baseline=tag:side=base",
        "--candidate=tag:side=noisy",
        "--output=noisy.html",
    ]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let page = std::fs::read_to_string(s.path("noisy.html")).unwrap();
    assert!(
        page.contains("; 95% CI ") && page.contains(", p = "),
        "no statistics in the report"
    );
    assert!(
        page.contains(&format!(": {said}")) || page.contains(&format!(": {said_max}")),
        "the report's cell has no verdict"
    );

    // Bad values: one line, exit 2.
    for (args, want) in [
        (
            vec!["--fail-on=tps"],
            "--fail-on=tps: expected METRIC:CHANGE%",
        ),
        (vec!["--fail-on=tpm:-3%"], "unknown metric 'tpm'"),
        (vec!["--fail-on=tps:lots"], "is not a change in %"),
        (vec!["--fail-on=tps:-150%"], "above -100%"),
        (vec!["--confidence=150"], "--confidence=150"),
        (vec!["--min-effect=-1"], "--min-effect=-1"),
        (vec!["--junit=x.xml"], "give --fail-on too"),
        (
            vec!["--fail-on-inconclusive"],
            "--fail-on-inconclusive needs --fail-on",
        ),
    ] {
        let r = compare(&s, "tag:side=slow", &args);
        assert_eq!(r.code, 2, "{args:?}: {}\n{}", r.stdout, r.stderr);
        assert!(r.stderr.contains(want), "{args:?}: {}", r.stderr);
        assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
    }
}
