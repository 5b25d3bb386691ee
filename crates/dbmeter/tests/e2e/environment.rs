//! The record of each run beyond its measurements: `dbmeter env`, the
//! environment checked against this machine, server facts and counter
//! deltas on real MariaDB and PostgreSQL servers, the OS series, warnings.

use crate::common::*;
use dbmeter_server::{Flavor, Server};
use dbmeter_testkit::servers::{start, start_with};
use serde_json::Value;
use std::os::unix::process::CommandExt;

fn meminfo_total_bytes() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

fn processors() -> u64 {
    std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .filter(|l| l.starts_with("processor"))
        .count() as u64
}

fn uname_r() -> String {
    let o = std::process::Command::new("uname").arg("-r").output();
    o.map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

fn warning_codes(doc: &Value) -> Vec<String> {
    doc["warnings"]
        .as_array()
        .unwrap_or_else(|| panic!("no warnings array in {doc}"))
        .iter()
        .filter_map(|w| w["code"].as_str().map(str::to_string))
        .collect()
}

/// Runs dbmeter with an open-files limit of `limit`.
fn run_with_nofile(s: &Scratch, limit: u64, args: &[&str]) -> Run {
    let mut c = s.cmd(args);
    // SAFETY: only setrlimit, async-signal-safe, between fork and exec.
    unsafe {
        c.pre_exec(move || {
            let r = libc::rlimit {
                rlim_cur: limit as libc::rlim_t,
                rlim_max: limit as libc::rlim_t,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &r) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let o = c.output().expect("run dbmeter");
    Run {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

#[test]
fn env_describes_this_machine() {
    let s = Scratch::new();
    let r = s.ok(&["env"]);
    for want in [
        "Machine:",
        "kernel:",
        "CPU frequency governor:",
        "transparent huge pages:",
        "open files:",
        "Warnings:",
    ] {
        assert!(r.stdout.contains(want), "no '{want}' in:\n{}", r.stdout);
    }
    assert!(r.stdout.contains(&uname_r()), "{}", r.stdout);
    assert!(!r.stdout.contains("Server:"), "{}", r.stdout);

    let doc = s.ok(&["env", "--format=json"]).json();
    assert_eq!(doc["schema"], "dbmeter.env");
    let e = &doc["environment"];
    assert_eq!(e["cpus_online"].as_u64(), Some(processors()), "{e}");
    let nproc = std::process::Command::new("nproc").output().ok();
    if let Some(n) = nproc.and_then(|o| {
        String::from_utf8_lossy(&o.stdout)
            .trim()
            .parse::<u64>()
            .ok()
    }) {
        assert_eq!(e["cpus"].as_u64(), Some(n), "{e}");
    }
    assert_eq!(e["memory_bytes"].as_u64(), Some(meminfo_total_bytes()));
    let kernel = e["kernel"].as_str().unwrap_or_default();
    assert!(kernel.ends_with(&uname_r()), "{kernel}");
    let swap_total = e["swap_total_bytes"].as_u64().unwrap_or(0);
    assert!(e["swap_used_bytes"].as_u64().unwrap_or(0) <= swap_total);
    let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").ok();
    if let Some(t) = thp {
        let chosen = t.split('[').nth(1).and_then(|x| x.split(']').next());
        assert_eq!(e["transparent_hugepages"].as_str(), chosen);
    }
    let governor_file = "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor";
    if std::fs::metadata(governor_file).is_err() {
        assert!(e["cpu_governor"].is_null(), "{e}");
    }
    assert!(doc["dbmeter"]["version"].is_string());
    assert!(doc["server"].is_null());
}

#[test]
fn env_and_run_warn_about_a_low_open_files_limit() {
    let s = Scratch::new();
    let r = run_with_nofile(&s, 64, &["env", "--threads=100"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains("WARNING: the open-files limit (64) is too low for 100 connections"),
        "{}",
        r.stdout
    );
    let r = run_with_nofile(&s, 64, &["env", "--threads=100", "--format=json"]);
    assert!(warning_codes(&r.json()).contains(&"open_files".to_string()));
    // Plenty: no warning.
    let r = run_with_nofile(&s, 4096, &["env", "--threads=100", "--format=json"]);
    assert!(!warning_codes(&r.json()).contains(&"open_files".to_string()));

    // A run: 12 SQLite connections need about 3 descriptors each. The
    // warning comes before the run, whatever the run then does.
    let r = run_with_nofile(
        &s,
        64,
        &[
            "run",
            "oltp_point_select",
            "--threads=12",
            "--time=1",
            "--table-size=100",
        ],
    );
    assert!(
        r.stderr.contains("WARNING: the open-files limit (64)"),
        "no warning in:\n{}",
        r.stderr
    );
}

#[test]
fn run_shorter_than_its_warmup_is_warned_about() {
    let s = Scratch::new();
    let r = s.ok(&[
        "run",
        "noop",
        "--time=0.3",
        "--warmup-time=0.5",
        "--format=json",
    ]);
    assert!(
        r.stderr
            .contains("WARNING: the run (0.3 s) is shorter than its warm-up (0.5 s)"),
        "{}",
        r.stderr
    );
    assert!(warning_codes(&r.json()).contains(&"short_run".to_string()));
    let r = s.ok(&["run", "noop", "--time=0.3", "--format=json"]);
    assert!(!r.stderr.contains("WARNING: the run"), "{}", r.stderr);
    assert!(!warning_codes(&r.json()).contains(&"short_run".to_string()));
}

#[test]
fn sqlite_run_records_environment_tables_and_os_series() {
    let s = Scratch::new();
    s.ok(&["prepare", "oltp_point_select", "--table-size=2000"]);
    let r = s.ok(&[
        "run",
        "oltp_point_select",
        "--table-size=2000",
        "--time=3",
        "--report-interval=1",
        "--format=json",
    ]);
    let doc = r.json();
    assert_eq!(doc["schema_version"], 3);
    assert_eq!(
        doc["environment"]["memory_bytes"].as_u64(),
        Some(meminfo_total_bytes())
    );
    let dd = &doc["environment"]["datadir"];
    assert!(dd["filesystem"].is_string(), "{dd}");
    assert!(
        dd["path"]
            .as_str()
            .unwrap_or_default()
            .ends_with("dbmeter.sqlite"),
        "{dd}"
    );
    let server = &doc["server"];
    assert!(
        server["version"]
            .as_str()
            .unwrap_or_default()
            .starts_with("SQLite")
    );
    assert_eq!(server["variables"]["journal_mode"], "wal");
    let tables = server["tables"].as_array().expect("tables");
    assert_eq!(tables.len(), 1);
    assert_eq!(tables[0]["name"], "sbtest1");
    assert!(
        tables[0]["total_bytes"].as_u64().unwrap_or(0) > 0,
        "{server}"
    );
    assert!(doc["counters"].is_null(), "SQLite has no counters");
    let os = &doc["os"];
    assert_eq!(os["interval_s"].as_f64(), Some(1.0));
    let samples = os["samples"].as_array().expect("samples");
    assert!(
        (3..=4).contains(&samples.len()),
        "{} samples",
        samples.len()
    );
    let first = &samples[0];
    for k in [
        "cpu",
        "context_switches_per_s",
        "run_queue",
        "mem_used_bytes",
        "swap_used_bytes",
        "disks",
        "net",
    ] {
        assert!(!first[k].is_null(), "no {k} in {first}");
    }
    // The client's CPU is measured (how much it gets depends on what
    // else the machine runs, so only that it is there and moved).
    let client_cpu: f64 = samples
        .iter()
        .map(|x| x["client_cpu_pct"].as_f64().unwrap_or(0.0))
        .sum();
    assert!(client_cpu > 0.0, "{samples:?}");
    assert!(doc["warnings"].is_array());

    // The text report ends with a short environment summary.
    let r = s.ok(&["run", "oltp_point_select", "--table-size=2000", "--time=1"]);
    assert!(r.stdout.contains("\nEnvironment:\n"), "{}", r.stdout);
    assert!(r.stdout.contains("machine:"), "{}", r.stdout);
    assert!(r.stdout.contains("SQLite"), "{}", r.stdout);
}

/// An endurance run that inserts: the SQLite file's size is sampled, and
/// its growth is one of the drift's trends.
#[test]
fn growing_data_is_a_drift_trend() {
    let s = Scratch::new();
    s.ok(&["prepare", "oltp_insert", "--table-size=100"]);
    let doc = s
        .ok(&[
            "run",
            "oltp_insert",
            "--table-size=100",
            "--time=6",
            "--report-interval=0.25",
            "--format=json",
        ])
        .json();
    let samples = doc["os"]["samples"].as_array().expect("samples");
    let data: Vec<u64> = samples
        .iter()
        .filter_map(|x| x["data_bytes"].as_u64())
        .collect();
    assert!(
        data.len() >= 20,
        "{} of {} samples",
        data.len(),
        samples.len()
    );
    assert!(data.last() > data.first(), "{data:?}");
    let trends = doc["drift"]["trends"].as_array().expect("drift trends");
    let t = trends
        .iter()
        .find(|t| t["metric"] == "data_bytes")
        .unwrap_or_else(|| panic!("no data_bytes trend: {trends:?}"));
    assert_eq!(t["direction"], "rising", "{t}");
    assert!(t["slope_low_per_h"].as_f64().unwrap_or(0.0) > 0.0, "{t}");
}

/// What every server test checks in a run document and in `dbmeter env`.
fn server_record(server: &Server, doc: &Value) {
    let rec = &doc["server"];
    let vars = rec["variables"].as_object().expect("variables");
    assert!(vars.len() > 100, "{} variables", vars.len());
    assert_eq!(rec["pid"].as_u64(), Some(u64::from(server.pid())), "{rec}");
    let datadir = std::fs::canonicalize(server.datadir()).expect("datadir");
    let dd = &doc["environment"]["datadir"];
    assert_eq!(dd["path"].as_str(), datadir.to_str(), "{dd}");
    assert!(dd["filesystem"].is_string());
}

fn server_run(flavor: Flavor) {
    let Some(server) = start(flavor) else { return };
    let s = Scratch::new();
    let db = format!("--db={}", server.url());
    s.ok(&["prepare", "oltp_point_select", &db, "--table-size=1000"]);

    let env = s.ok(&["env", &db, "--format=json"]).json();
    server_record(&server, &env);
    let text = s.ok(&["env", &db]).stdout;
    assert!(
        text.contains("Server:") && text.contains("table sbtest1:"),
        "{text}"
    );
    assert!(!text.contains("Server variables:"), "{text}");
    let verbose = s.ok(&["env", &db, "--verbose"]).stdout;
    assert!(verbose.contains("Server variables:"), "{verbose}");
    // More threads than CPUs, next to a local server on the same CPUs.
    let cpus = env["environment"]["cpus"].as_u64().unwrap_or(1);
    let threads = format!("--threads={}", cpus + 1);
    let crowded = s.ok(&["env", &db, &threads, "--format=json"]).json();
    let codes = warning_codes(&crowded);
    assert!(codes.contains(&"shared_cpus".to_string()), "{codes:?}");
    assert!(!warning_codes(&env).contains(&"shared_cpus".to_string()));
    assert!(!codes.contains(&"query_cache".to_string()), "{codes:?}");

    let r = s.ok(&[
        "run",
        "oltp_point_select",
        &db,
        "--table-size=1000",
        "--time=0",
        "--events=1000",
        "--threads=2",
        "--format=json",
    ]);
    let doc = r.json();
    server_record(&server, &doc);
    let tables = doc["server"]["tables"].as_array().expect("tables");
    assert!(tables.iter().any(|t| t["name"] == "sbtest1"), "{tables:?}");
    let c = &doc["counters"];
    assert!(
        c["before"].as_object().is_some_and(|m| !m.is_empty()),
        "{c}"
    );
    assert!(c["after"].as_object().is_some_and(|m| !m.is_empty()));
    let delta = |k: &str| {
        c["delta"][k]
            .as_i64()
            .unwrap_or_else(|| panic!("no delta {k}"))
    };
    match flavor {
        Flavor::MariaDb => {
            assert!(
                doc["server"]["version"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("MariaDB")
            );
            assert!(delta("Com_stmt_execute") >= 1000, "{}", c["delta"]);
            assert!(delta("Questions") >= 1000);
        }
        Flavor::Postgres => {
            assert!(delta("database.xact_commit") >= 1000, "{}", c["delta"]);
            assert!(delta("database.blks_hit") > 0);
            assert!(c["delta"]["wal.wal_bytes"].is_number(), "{}", c["delta"]);
        }
    }
    // The text report shows the key deltas; the series has the server's CPU.
    let out = s.path("run.json");
    let output = format!("--output={}", out.display());
    let r = s.ok(&[
        "run",
        "oltp_point_select",
        &db,
        "--table-size=1000",
        "--time=2",
        "--format=json",
        &output,
    ]);
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("run.json")).expect("JSON");
    let samples = doc["os"]["samples"].as_array().expect("samples");
    assert!(
        (2..=3).contains(&samples.len()),
        "{} samples",
        samples.len()
    );
    assert_eq!(
        doc["os"]["server_pid"].as_u64(),
        Some(u64::from(server.pid()))
    );
    let server_cpu: f64 = samples
        .iter()
        .map(|x| x["server_cpu_pct"].as_f64().unwrap_or(0.0))
        .sum();
    assert!(server_cpu > 0.0, "{samples:?}");
    // The data directory's size on disk, in every sample (a throwaway
    // server's directory takes far less than 5% of a second to walk).
    let data: Vec<u64> = samples
        .iter()
        .filter_map(|x| x["data_bytes"].as_u64())
        .collect();
    assert!(
        !data.is_empty() && data.iter().all(|&b| b > 1 << 20),
        "{samples:?}"
    );
    assert!(
        r.stdout.contains("server counters (delta):"),
        "{}",
        r.stdout
    );
}

#[test]
fn mariadb_run_records_server_and_counters() {
    server_run(Flavor::MariaDb);
}

#[test]
fn postgres_run_records_server_and_counters() {
    server_run(Flavor::Postgres);
}

#[test]
fn mariadb_query_cache_is_warned_about() {
    let Some(server) = start_with(
        Flavor::MariaDb,
        &[("query_cache_type", "1"), ("query_cache_size", "16M")],
    ) else {
        return;
    };
    let s = Scratch::new();
    let db = format!("--db={}", server.url());
    let doc = s.ok(&["env", &db, "--format=json"]).json();
    assert_eq!(doc["server"]["variables"]["query_cache_type"], "ON");
    assert!(
        warning_codes(&doc).contains(&"query_cache".to_string()),
        "{}",
        doc["warnings"]
    );
    let text = s.ok(&["env", &db]).stdout;
    assert!(text.contains("WARNING: the query cache is on"), "{text}");
}
