//! `dbmeter report` end to end: runs of a small campaign on SQLite, the HTML
//! file and its SVG charts, and the page rendered by headless Chromium
//! (Debian's `chromium`; the test skips without it unless
//! DBMETER_REQUIRE_CHROMIUM is set, as on CI).

use crate::common::browser::{chromium, headless, pixels_of, screenshot};
use crate::common::{Run, Scratch};

fn run_in(s: &Scratch, args: &[&str]) -> Run {
    s.run_home(args)
}

/// Two SQLite variants x 2 client counts x 2 repeats, stored in results.db.
fn campaign(s: &Scratch) {
    std::fs::write(
        s.path("c.toml"),
        r#"name = "pair"
store = "results.db"
duration = 1
repeats = 2
clients = [1, 2]
options = { report-interval = 1 }

[[target]]
name = "first"
url = "sqlite:first.db"

[[target]]
name = "second"
url = "sqlite:second.db"

[[workload]]
name = "oltp_point_select"
options = { table-size = 1000 }
"#,
    )
    .expect("write campaign");
    let r = run_in(s, &["campaign", "run", "c.toml"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
}

#[test]
fn a_campaign_report_stands_alone_and_renders_with_its_charts() {
    let s = Scratch::new();
    campaign(&s);
    let r = run_in(
        &s,
        &[
            "report",
            "campaign:pair",
            "--store=results.db",
            "--output=pair.html",
            "--charts=charts",
        ],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("wrote pair.html: 8 runs"), "{}", r.stderr);
    let html = std::fs::read_to_string(s.path("pair.html")).expect("report written");

    // Self-contained: no scripts, nothing to fetch.
    assert!(html.starts_with("<!DOCTYPE html>"));
    for outside in [
        "<script",
        "src=\"http",
        "href=\"http",
        "<link",
        "@import",
        "url(",
    ] {
        assert!(!html.contains(outside), "'{outside}' in the page");
    }
    // The sections: environment, the comparisons against the first variant,
    // the scaling charts, the cells.
    assert!(html.contains("<h1>Campaign pair</h1>"), "title");
    assert!(html.contains("id=\"environment\""));
    for section in [
        "Transactions per second against first",
        "95th percentile latency against first",
        "99th percentile latency against first",
    ] {
        assert!(html.contains(section), "no '{section}'");
    }
    assert!(html.contains("oltp_point_select at 2 clients: 4 run(s)"));

    // The charts, inline and as files, one of each kind.
    let files: Vec<String> = std::fs::read_dir(s.path("charts"))
        .expect("charts dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    for name in [
        "oltp_point_select-tps-vs-clients.svg",
        "oltp_point_select-p99-vs-clients.svg",
        "oltp_point_select-1-tps.svg",
        "oltp_point_select-2-p99.svg",
        "oltp_point_select-2-cpu.svg",
        "oltp_point_select-2-latency.svg",
    ] {
        assert!(files.iter().any(|f| f == name), "{name} not in {files:?}");
    }
    assert_eq!(html.matches("<svg").count(), files.len());
    let svg = std::fs::read_to_string(s.path("charts/oltp_point_select-tps-vs-clients.svg"))
        .expect("svg");
    assert!(svg.starts_with("<svg") && svg.contains("<polyline"));

    // The stored medians are what the scaling table shows.
    let mut store =
        dbmeter_store::Store::open(&s.path("results.db").to_string_lossy()).expect("store");
    let runs = store.runs(&dbmeter_store::Filter::all()).expect("runs");
    let mut tps: Vec<f64> = runs
        .iter()
        .filter(|r| r.variant.as_deref() == Some("second") && r.threads == Some(2))
        .filter_map(|r| r.events_per_s)
        .collect();
    tps.sort_by(f64::total_cmp);
    assert_eq!(tps.len(), 2);
    let median = (tps[0] + tps[1]) / 2.0;
    assert!(
        html.contains(&format!("{median:.0} tps")),
        "median {median:.0} not shown"
    );

    let Some(browser) = chromium() else { return };
    // The browser's DOM: the page parsed, with its SVG charts as elements.
    let page = s.path("pair.html");
    let dom = headless(&browser, &s, &["--dump-dom"], &page);
    let dom_text = String::from_utf8_lossy(&dom.stdout);
    assert!(
        dom.status.success(),
        "{}",
        String::from_utf8_lossy(&dom.stderr)
    );
    assert_eq!(
        dom_text.matches("<svg").count(),
        files.len(),
        "SVG elements in the DOM"
    );
    assert!(dom_text.contains("<polyline"));
    // A screenshot: the lines of both variants are drawn in their colours
    // (plotters' first two palette colours).
    // Tall enough for the comparison tables and their statistics above the charts.
    let shot = screenshot(&browser, &s, &page, 1200, 6000);
    let first = pixels_of(&shot, (230, 25, 75));
    let second = pixels_of(&shot, (60, 180, 75));
    assert!(
        first > 300 && second > 300,
        "lines drawn: {first} and {second} pixels"
    );
}

#[test]
fn report_errors() {
    let s = Scratch::new();
    let none = run_in(&s, &["report", "--store=nothere.db"]);
    assert_eq!(none.code, 1, "{}", none.stderr);
    assert_eq!(none.stderr.lines().count(), 1, "{}", none.stderr);
    campaign(&s);
    let nomatch = run_in(&s, &["report", "campaign:other", "--store=results.db"]);
    assert_eq!(nomatch.code, 1);
    assert!(
        nomatch
            .stderr
            .contains("no stored run matches campaign:other"),
        "{}",
        nomatch.stderr
    );
    let bad = run_in(&s, &["report", "colour:red", "--store=results.db"]);
    assert_eq!(bad.code, 1, "{}", bad.stderr);
    assert!(bad.stderr.contains("colour:red"), "{}", bad.stderr);
    let usage = run_in(
        &s,
        &["report", "--store=results.db", "--candidate=variant:x"],
    );
    assert_eq!(usage.code, 2, "{}", usage.stderr);
    let unwritable = run_in(
        &s,
        &[
            "report",
            "--store=results.db",
            "--output=/nonexistent/r.html",
        ],
    );
    assert_eq!(unwritable.code, 1);
    assert!(
        unwritable
            .stderr
            .contains("cannot write --output /nonexistent/r.html")
    );
    // An explicit baseline names the section.
    let r = run_in(
        &s,
        &[
            "report",
            "--store=results.db",
            "--output=b.html",
            "--baseline=variant:second",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let html = std::fs::read_to_string(s.path("b.html")).expect("written");
    assert!(
        html.contains("Transactions per second against variant:second"),
        "section"
    );
}
