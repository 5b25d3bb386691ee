//! `--prometheus`: a real Prometheus (Debian's `prometheus` package)
//! scrapes dbmeter's endpoint every second while a run or a campaign goes
//! on, and the tests read the series back through Prometheus' HTTP API;
//! promtool checks the text a plain GET gets. The counts must be the
//! run's own (its JSON result, the stored runs), whatever the timing.

use crate::common::*;
use crate::procs::Watched;
use dbmeter_testkit::tools::{PROMETHEUS, PROMTOOL};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A port no one listens on now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A plain HTTP/1.0 GET: the status, the headers and the body; None when
/// nothing answers.
fn get(port: u16, path: &str) -> Option<(u16, String, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut raw = String::new();
    s.read_to_string(&mut raw).ok()?;
    let (head, body) = raw.split_once("\r\n\r\n")?;
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    Some((status, head.to_string(), body.to_string()))
}

/// `q` for a URL's query string.
fn encode(q: &str) -> String {
    q.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'.' | b'-' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A Prometheus of the test's own: scrapes `127.0.0.1:target` every
/// second, keeps its data in the scratch directory, killed when dropped.
struct Prometheus {
    child: Child,
    port: u16,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Prometheus {
    fn start(binary: &Path, s: &Scratch, target: u16) -> Prometheus {
        let config = s.path("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n\
                 scrape_configs:\n  - job_name: dbmeter\n    static_configs:\n      \
                 - targets: ['127.0.0.1:{target}']\n"
            ),
        )
        .expect("write prometheus.yml");
        let port = free_port();
        let log = std::fs::File::create(s.path("prometheus.log")).expect("log file");
        let child = Command::new(binary)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!("--storage.tsdb.path={}", s.path("tsdb").display()))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start prometheus");
        let p = Prometheus { child, port };
        // Ready, and scraping: its discovery hands the scrape loop its
        // targets a few seconds after the start, and dbmeter's first
        // seconds would go unseen before that.
        let until = Instant::now() + Duration::from_secs(60);
        while !get(port, "/api/v1/targets").is_some_and(|(status, _, body)| {
            status == 200 && body.contains(&format!("\"127.0.0.1:{target}\""))
        }) {
            assert!(
                Instant::now() < until,
                "prometheus not scraping in 60 s:\n{}",
                std::fs::read_to_string(s.path("prometheus.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        p
    }

    /// The series an instant query returns: (labels, value).
    fn query(&self, q: &str) -> Vec<(serde_json::Value, f64)> {
        let (status, _, body) = get(self.port, &format!("/api/v1/query?query={}", encode(q)))
            .expect("prometheus answers");
        assert_eq!(status, 200, "{q}: {body}");
        let v: serde_json::Value = serde_json::from_str(&body).expect("JSON answer");
        assert_eq!(v["status"], "success", "{q}: {body}");
        v["data"]["result"]
            .as_array()
            .expect("a vector")
            .iter()
            .map(|r| {
                let value = r["value"][1]
                    .as_str()
                    .and_then(|x| x.parse().ok())
                    .expect("a number");
                (r["metric"].clone(), value)
            })
            .collect()
    }

    /// The one series `q` returns, once it has one whose value is
    /// `want`, or whatever it returns after 30 s (samples land in the
    /// head block a moment after their scrape).
    fn settled(&self, q: &str, want: f64) -> (serde_json::Value, f64) {
        let until = Instant::now() + Duration::from_secs(30);
        loop {
            let r = self.query(q);
            if (r.len() == 1 && r[0].1 == want) || Instant::now() > until {
                assert_eq!(r.len(), 1, "{q}: one series, got {r:?}");
                return r.into_iter().next().expect("one series");
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    }
}

fn prepared() -> Scratch {
    let s = Scratch::new();
    s.ok(&[
        "prepare",
        "oltp_read_only",
        "--db=sqlite:t.sqlite",
        "--table-size=1000",
    ]);
    s
}

#[test]
fn prometheus_scrapes_a_run_and_its_counters_end_at_the_results_counts() {
    let Some(binary) = PROMETHEUS.find_or_skip() else {
        return;
    };
    let s = prepared();
    let endpoint = free_port();
    let prom = Prometheus::start(&binary, &s, endpoint);
    let addr = format!("--prometheus=127.0.0.1:{endpoint}");
    // Four seconds after the run: several scrapes see the final counts.
    let r = s.ok(&[
        "run",
        "oltp_read_only",
        "--db=sqlite:t.sqlite",
        "--table-size=1000",
        "--time=8",
        "--threads=2",
        &addr,
        "--prometheus-linger=4",
        "--format=json",
    ]);
    assert!(
        r.stderr.contains(&format!(
            "metrics for Prometheus at http://127.0.0.1:{endpoint}/metrics"
        )),
        "{}",
        r.stderr
    );
    let doc = r.json();
    let events = doc["totals"]["events"].as_u64().expect("events");
    let reads = doc["totals"]["counts"]["reads"].as_u64().expect("reads");
    assert!(events > 0, "{doc}");
    // The run's option stays out of its document.
    assert!(
        doc["options"].get("prometheus").is_none(),
        "{}",
        doc["options"]
    );

    // dbmeter is gone now: the last sample before its series went stale.
    let (labels, value) = prom.settled(
        r#"last_over_time(dbmeter_events_total{job="dbmeter"}[10m])"#,
        events as f64,
    );
    assert_eq!(value, events as f64, "{labels}");
    assert_eq!(labels["workload"], "oltp_read_only", "{labels}");
    assert_eq!(labels["target"], "sqlite:t.sqlite", "{labels}");
    assert_eq!(
        labels["instance"],
        format!("127.0.0.1:{endpoint}").as_str(),
        "{labels}"
    );
    let (_, v) = prom.settled(
        r#"last_over_time(dbmeter_queries_total{job="dbmeter",type="read"}[10m])"#,
        reads as f64,
    );
    assert_eq!(v, reads as f64);
    let (_, v) = prom.settled(
        r#"last_over_time(dbmeter_latency_seconds_count{job="dbmeter"}[10m])"#,
        events as f64,
    );
    assert_eq!(v, events as f64, "the histogram counts every event");
    // Scraped while it measured, with both users running.
    let (_, v) = prom.settled(r#"max_over_time(dbmeter_measuring[10m])"#, 1.0);
    assert_eq!(v, 1.0);
    let (_, v) = prom.settled(r#"max_over_time(dbmeter_active_users[10m])"#, 2.0);
    assert_eq!(v, 2.0);
    let (_, v) = prom.settled(
        r#"last_over_time(dbmeter_runs_ended_total{end="time_limit"}[10m])"#,
        1.0,
    );
    assert_eq!(v, 1.0);
    let q = prom.query(r#"last_over_time(dbmeter_interval_latency_seconds{quantile="0.99"}[10m])"#);
    assert_eq!(q.len(), 1, "{q:?}");
    assert!(q[0].1 > 0.0, "{q:?}");
}

#[test]
fn a_plain_get_gets_text_that_promtool_accepts() {
    let Some(promtool) = PROMTOOL.find_or_skip() else {
        return;
    };
    let s = prepared();
    let port = free_port();
    let addr = format!("--prometheus=127.0.0.1:{port}");
    let mut cmd = s.cmd(&[
        "run",
        "oltp_read_only",
        "--db=sqlite:t.sqlite",
        "--table-size=1000",
        "--time=3",
        "--rate=200",
        &addr,
        "--prometheus-linger=30",
    ]);
    cmd.stdin(Stdio::null());
    let mut run = Watched::spawn(cmd);
    // The first interval is in once the events counter is above 0.
    let until = Instant::now() + Duration::from_secs(60);
    let (head, text) = loop {
        if let Some((200, head, body)) = get(port, "/metrics")
            && body
                .lines()
                .any(|l| l.starts_with("dbmeter_events_total{") && !l.ends_with(" 0"))
        {
            break (head, body);
        }
        assert!(run.running(), "dbmeter ended:\n{}", run.stderr());
        assert!(
            Instant::now() < until,
            "no events in 60 s:\n{}",
            run.stderr()
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: text/plain; version=0.0.4"),
        "{head}"
    );
    for family in [
        "# TYPE dbmeter_events_total counter",
        "# TYPE dbmeter_queries_total counter",
        "# TYPE dbmeter_latency_seconds histogram",
        "# TYPE dbmeter_interval_latency_seconds summary",
        "# TYPE dbmeter_active_users gauge",
        "# TYPE dbmeter_rate_lag_seconds gauge",
    ] {
        assert!(text.contains(family), "no '{family}' in:\n{text}");
    }
    assert!(text.contains(r#"le="+Inf"}"#), "{text}");
    let mut check = Command::new(&promtool)
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start promtool");
    check
        .stdin
        .take()
        .expect("stdin")
        .write_all(text.as_bytes())
        .expect("write to promtool");
    let out = check.wait_with_output().expect("promtool ends");
    assert!(
        out.status.success() && out.stdout.is_empty() && out.stderr.is_empty(),
        "promtool check metrics: {:?}\n{}{}\n--- the text:\n{text}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(get(port, "/elsewhere").map(|r| r.0), Some(404));
    // A stop signal ends the linger at once.
    let until = Instant::now() + Duration::from_secs(60);
    while !get(port, "/metrics").is_some_and(|r| r.2.contains("dbmeter_runs_ended_total")) {
        assert!(
            Instant::now() < until,
            "the run did not end:\n{}",
            run.stderr()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    run.signal(libc::SIGTERM);
    let end = run.finish(Duration::from_secs(20));
    assert!(end.in_time, "{}", end.output());
    assert_eq!(end.code, Some(0), "{}", end.output());
    assert!(get(port, "/metrics").is_none(), "the endpoint is closed");
}

#[test]
fn bad_addresses_and_a_taken_port_are_one_line() {
    let s = Scratch::new();
    let db = "--db=sqlite:t.sqlite";
    for (addr, says) in [
        ("--prometheus=9464", "no port"),
        ("--prometheus=localhost:http", "'http' is not a port number"),
        ("--prometheus=", "--prometheus is empty"),
    ] {
        let r = s.run(&["run", "oltp_read_only", db, addr]);
        assert_eq!(r.code, 2, "{addr}: {}", r.stderr);
        assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
        assert!(r.stderr.contains(says), "{addr}: {}", r.stderr);
    }
    let r = s.run(&["run", "oltp_read_only", db, "--prometheus-linger=5"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("add --prometheus"), "{}", r.stderr);
    let r = s.run(&["prepare", "oltp_read_only", db, "--prometheus=:0"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("`prepare` makes no run"), "{}", r.stderr);

    // A campaign: on its command line only, checked before anything runs.
    std::fs::write(
        s.path("c.toml"),
        "name = \"c\"\nduration = 1\nclients = [1]\n\
         options = { prometheus = \":9464\" }\n\
         [[target]]\nname = \"a\"\nurl = \"sqlite:a.db\"\n\
         [[workload]]\nname = \"oltp_read_only\"\n",
    )
    .expect("write the campaign");
    let r = s.run_home(&["campaign", "run", "c.toml"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("option 'prometheus' serves the whole campaign's metrics"),
        "{}",
        r.stderr
    );
    std::fs::write(
        s.path("d.toml"),
        "name = \"d\"\nduration = 1\nclients = [1]\n\
         [[target]]\nname = \"a\"\nurl = \"sqlite:a.db\"\n\
         [[workload]]\nname = \"oltp_read_only\"\n",
    )
    .expect("write the campaign");
    let r = s.run_home(&["campaign", "run", "d.toml", "--prometheus=host"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("--prometheus=host: no port"),
        "{}",
        r.stderr
    );
    assert!(!s.path("a.db").exists(), "nothing ran: {}", r.stdout);

    let taken = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = taken.local_addr().expect("address").port();
    let r = s.run(&[
        "run",
        "oltp_read_only",
        db,
        &format!("--prometheus=127.0.0.1:{port}"),
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains(&format!("cannot listen on 127.0.0.1:{port}"))
            && r.stderr.contains("in use"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_campaign_shows_its_cells_and_their_events() {
    let Some(binary) = PROMETHEUS.find_or_skip() else {
        return;
    };
    let s = Scratch::new();
    let file = s.path("c.toml");
    std::fs::write(
        &file,
        r#"name = "watched"
store = "results.db"
duration = 4
repeats = 2
clients = [1]

[[target]]
name = "lite"
url = "sqlite:lite.db"

[[workload]]
name = "oltp_point_select"
options = { table-size = 200 }
"#,
    )
    .expect("write the campaign");
    let endpoint = free_port();
    let prom = Prometheus::start(&binary, &s, endpoint);
    let file = file.display().to_string();
    let addr = format!("--prometheus=127.0.0.1:{endpoint}");
    let r = s.ok_home(&["campaign", "run", &file, &addr, "--prometheus-linger=4"]);
    assert!(r.stdout.contains("[2/2]"), "{}", r.stdout);

    let mut store = dbmeter_store::Store::open(&s.path("results.db").display().to_string())
        .expect("open the store");
    let runs = store
        .runs(&dbmeter_store::Filter::all())
        .expect("the stored runs");
    assert_eq!(runs.len(), 2);
    let events: i64 = runs.iter().map(|r| r.events.unwrap_or(0)).sum();
    assert!(events > 0);

    let (labels, v) = prom.settled(
        r#"last_over_time(dbmeter_events_total{job="dbmeter"}[10m])"#,
        events as f64,
    );
    assert_eq!(v, events as f64, "both cells' events: {labels}");
    assert_eq!(labels["campaign"], "watched", "{labels}");
    assert_eq!(
        labels["target"], "lite",
        "the campaign's target name: {labels}"
    );
    assert_eq!(labels["workload"], "oltp_point_select", "{labels}");
    let (_, v) = prom.settled(
        r#"last_over_time(dbmeter_campaign_cells_done{campaign="watched"}[10m])"#,
        2.0,
    );
    assert_eq!(v, 2.0);
    let (_, v) = prom.settled(r#"last_over_time(dbmeter_campaign_cells[10m])"#, 2.0);
    assert_eq!(v, 2.0);
    // Each repeat was the running cell at some scrape.
    let cells = prom.query(r#"max_over_time(dbmeter_campaign_cell_info[10m])"#);
    let mut repeats: Vec<&str> = cells
        .iter()
        .map(|(l, _)| {
            assert_eq!(l["target"], "lite", "{l}");
            assert_eq!(l["clients"], "1", "{l}");
            l["repeat"].as_str().expect("repeat")
        })
        .collect();
    repeats.sort();
    assert_eq!(repeats, ["1", "2"], "{cells:?}");
}

/// `deploy/grafana/dbmeter.json`: a dashboard whose panels each have
/// their own id and place, whose queries promtool parses (as recording
/// rules, Grafana's variables filled in), and which names only the
/// metrics docs/metrics.md documents.
#[test]
fn the_grafana_dashboard_parses_and_queries_documented_metrics() {
    let Some(promtool) = PROMTOOL.find_or_skip() else {
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let text = std::fs::read_to_string(root.join("deploy/grafana/dbmeter.json"))
        .expect("read the dashboard");
    let dash: serde_json::Value = serde_json::from_str(&text).expect("the dashboard is JSON");
    let docs = std::fs::read_to_string(root.join("docs/metrics.md")).expect("read metrics.md");
    let panels = dash["panels"].as_array().expect("panels");
    let mut ids: Vec<u64> = panels
        .iter()
        .map(|p| p["id"].as_u64().expect("id"))
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), panels.len(), "panel ids are unique");
    let mut exprs = Vec::new();
    for p in panels {
        let g = &p["gridPos"];
        let (x, w) = (g["x"].as_u64().expect("x"), g["w"].as_u64().expect("w"));
        assert!(x + w <= 24, "{}: off the grid", p["title"]);
        for t in p["targets"].as_array().into_iter().flatten() {
            exprs.push(t["expr"].as_str().expect("expr").to_string());
        }
    }
    assert!(exprs.len() >= 10, "{exprs:?}");
    let mut metrics: Vec<String> = Vec::new();
    for e in &exprs {
        let mut rest = e.as_str();
        while let Some(at) = rest.find("dbmeter_") {
            let name: String = rest[at..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            rest = &rest[at + name.len()..];
            let base = ["_bucket", "_sum", "_count"]
                .iter()
                .find_map(|s| name.strip_suffix(s))
                .unwrap_or(&name);
            metrics.push(base.to_string());
        }
    }
    metrics.sort();
    metrics.dedup();
    for m in &metrics {
        assert!(
            docs.contains(&format!("| `{m}` |")),
            "{m} is not in docs/metrics.md"
        );
    }
    for m in [
        "dbmeter_events_total",
        "dbmeter_latency_seconds",
        "dbmeter_errors_total",
        "dbmeter_active_users",
        "dbmeter_campaign_cells_done",
    ] {
        assert!(metrics.iter().any(|x| x == m), "no panel shows {m}");
    }
    let mut rules = String::from("groups:\n  - name: dashboard\n    rules:\n");
    for (i, e) in exprs.iter().enumerate() {
        let e = e
            .replace("$__rate_interval", "1m")
            .replace("$workload", ".*")
            .replace("$target", ".*");
        rules.push_str(&format!(
            "      - record: dashboard:q{i}\n        expr: '{}'\n",
            e.replace('\'', "''")
        ));
    }
    let s = Scratch::new();
    std::fs::write(s.path("rules.yml"), &rules).expect("write the rules");
    let out = Command::new(&promtool)
        .args(["check", "rules"])
        .arg(s.path("rules.yml"))
        .output()
        .expect("run promtool");
    assert!(
        out.status.success(),
        "promtool check rules:\n{}{}\n{rules}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
