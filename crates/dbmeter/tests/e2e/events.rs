//! What a run emits and keeps, whatever the benchmark: named measures
//! (a report speaks of SQL only for what issues SQL), intervals that carry
//! their latency histograms and merge exactly across processes, and the
//! event stream as JSON lines.

use crate::common::*;
use dbmeter_result::RunDocument;
use dbmeter_stats::LatencyHistogram;

fn document(r: &Run) -> RunDocument {
    RunDocument::from_json(&r.stdout).unwrap_or_else(|e| panic!("{e}:\n{}", r.stdout))
}

/// The merge of a document's interval histograms.
fn merged_intervals(docs: &[&RunDocument]) -> LatencyHistogram {
    let mut all = LatencyHistogram::new();
    for d in docs {
        for i in &d.intervals {
            let h = i
                .histogram()
                .unwrap_or_else(|| panic!("interval at {} s has no histogram", i.t_s));
            all.merge(&h);
        }
    }
    all
}

#[test]
fn intervals_of_two_runs_merge_into_their_totals() {
    let s = Scratch::new();
    let args = [
        "run",
        "noop",
        "--threads=2",
        "--time=2",
        "--report-interval=0.5",
        "--format=json",
    ];
    let a = document(&s.ok(&args));
    let b = document(&s.ok(&args));
    for d in [&a, &b] {
        assert!(d.intervals.len() >= 3, "{} intervals", d.intervals.len());
        let h = merged_intervals(&[d]);
        let total = d.histogram().expect("the run's histogram");
        assert_eq!(h.count(), d.totals.events);
        assert_eq!(h.count(), total.count());
        assert_eq!(h.max(), total.max());
        assert_eq!(h.min(), total.min());
        let events: u64 = d.intervals.iter().map(|i| i.events).sum();
        assert_eq!(events, d.totals.events);
    }
    // Two processes' intervals: exactly the two runs' events.
    let both = merged_intervals(&[&a, &b]);
    assert_eq!(both.count(), a.totals.events + b.totals.events);
    let mut totals = a.histogram().unwrap();
    totals.merge(&b.histogram().unwrap());
    assert_eq!(both.percentile(99.0), totals.percentile(99.0));
}

#[test]
fn a_benchmark_without_sql_reports_no_sql() {
    let s = Scratch::new();
    let r = s.ok(&["run", "noop", "--time=1", "--report-interval=0.5"]);
    assert!(!r.stdout.contains("SQL statistics"), "{}", r.stdout);
    assert!(!r.stdout.contains("queries"), "{}", r.stdout);
    assert!(!r.stdout.contains("qps:"), "{}", r.stdout);
    assert!(r.stdout.contains("General statistics:"), "{}", r.stdout);
    assert!(r.stat("total number of events:") > 0);
    let line = r
        .stdout
        .lines()
        .find(|l| l.starts_with("[ 0.5s ]"))
        .unwrap_or_else(|| panic!("no interval line:\n{}", r.stdout));
    assert!(line.contains(" eps: "), "{line}");
    let d = document(&s.ok(&["run", "noop", "--time=1", "--format=json"]));
    assert!(d.measures.is_empty());
    assert!(d.totals.counts.is_empty());
    assert_eq!(d.totals.queries, 0);
    let json: serde_json::Value =
        serde_json::from_str(&s.ok(&["run", "noop", "--time=1", "--format=json"]).stdout).unwrap();
    assert_eq!(json["schema_version"], 3);
    assert!(json["totals"].get("reads").is_none(), "{}", json["totals"]);
}

#[test]
fn sql_measures_are_named_in_totals_intervals_and_csv() {
    let s = Scratch::new();
    let db = "--db=sqlite:t.sqlite";
    s.ok(&["prepare", "oltp_read_write", db, "--table-size=500"]);
    let common = [
        "run",
        "oltp_read_write",
        db,
        "--table-size=500",
        "--time=0",
        "--events=300",
        "--report-interval=0.2",
    ];
    let text = s.ok(&common);
    assert!(text.stdout.contains("SQL statistics:"), "{}", text.stdout);
    let mut args = common.to_vec();
    args.push("--format=json");
    let d = document(&s.ok(&args));
    let names: Vec<&str> = d.measures.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["reads", "writes", "others"]);
    // sysbench's oltp_read_write: 14 reads, 4 writes, 2 others an event.
    assert_eq!(d.count("reads"), 300 * 14);
    assert_eq!(d.count("writes"), 300 * 4);
    assert_eq!(d.count("others"), 300 * 2);
    assert_eq!(d.totals.queries, 300 * 20);
    for name in names {
        let in_intervals: u64 = d
            .intervals
            .iter()
            .map(|i| i.counts.get(name).copied().unwrap_or(0))
            .sum();
        assert_eq!(in_intervals, d.count(name), "{name}");
    }
    args.pop();
    args.push("--format=csv");
    let csv = s.ok(&args).stdout;
    let header = csv.lines().next().unwrap_or_default();
    assert!(
        header.starts_with("t_s,duration_s,threads,events,tps,qps,reads_per_s,writes_per_s,others_per_s,errors_per_s"),
        "{header}"
    );
}

#[test]
fn json_lines_stream_every_event() {
    let s = Scratch::new();
    let r = s.ok(&[
        "run",
        "noop",
        "--time=1.5",
        "--report-interval=0.5",
        "--format=jsonl",
    ]);
    let events: Vec<serde_json::Value> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["event"].as_str()).collect();
    assert_eq!(kinds.first(), Some(&"started"), "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"finished"), "{kinds:?}");
    assert!(kinds.contains(&"measurement_ended"), "{kinds:?}");
    let doc = &events[events.len() - 1]["document"];
    let intervals = doc["intervals"].as_array().map_or(0, Vec::len);
    assert!(intervals >= 2, "{doc}");
    // Every full interval is an event as it ends; the document may add
    // the short tail after the last one.
    let streamed = kinds.iter().filter(|k| **k == "interval").count();
    assert!(
        streamed == intervals || streamed + 1 == intervals,
        "{streamed} interval events, {intervals} intervals"
    );
    assert_eq!(events[0]["header"]["benchmark"], "noop");
    // With --output, the file gets the lines and the console the report.
    let r = s.ok(&[
        "run",
        "noop",
        "--time=1",
        "--report-interval=0.5",
        "--format=jsonl",
        "--output=run.jsonl",
    ]);
    assert!(r.stdout.contains("General statistics:"), "{}", r.stdout);
    let file = std::fs::read_to_string(s.path("run.jsonl")).unwrap();
    let last: serde_json::Value = serde_json::from_str(file.lines().last().unwrap()).unwrap();
    assert_eq!(last["event"], "finished");
    assert_eq!(last["document"]["workload"], "noop");
}
