//! Several hosts and failovers (issue 28): a server stopped and started
//! again during a run is one outage of the length it was down, and the
//! run goes on to its time limit; `--hosts=spread` over two servers puts
//! half the users on each; failover skips a host that is down, and moves
//! the users of a host that stops; bad host lists and policies are one
//! usage line.

use crate::common::*;
use crate::procs::Watched;
use dbmeter_server::Flavor;
use dbmeter_testkit::servers::start;
use serde_json::Value;
use std::time::{Duration, Instant};

fn watch(s: &Scratch, args: &[&str]) -> Watched {
    let mut c = s.cmd(args);
    c.env("DBMETER_HOME", s.path("home"))
        .env_remove("DBMETER_STORE");
    Watched::spawn(c)
}

/// The server is stopped 3 s into a 14 s run, kept down 3 s, and started
/// again: the run reports one outage, as long as the server was down
/// within a second plus what stopping and starting it cost (the test
/// measures both), and ends with its time limit.
fn a_restarted_server_is_one_outage(flavor: Flavor) {
    let Some(mut server) = start(flavor) else {
        return;
    };
    let s = Scratch::new();
    let d = format!("--db={}", server.url());
    s.ok_home(&["prepare", "oltp_point_select", &d, "--table-size=1000"]);
    let mut run = watch(
        &s,
        &[
            "run",
            "oltp_point_select",
            &d,
            "--table-size=1000",
            "--threads=2",
            "--time=14",
            "--reconnect-timeout=60",
            "--report-interval=1",
            "--output=r.json",
            "--format=json",
        ],
    );
    assert!(
        run.wait_for_line(Duration::from_secs(60), |l| l.starts_with("[ 3s ]")),
        "the run did not get to 3 s:\n{}\n{}",
        run.stdout(),
        run.stderr()
    );
    let down = Duration::from_secs(3);
    let before_stop = Instant::now();
    server.stop().unwrap_or_else(|e| panic!("{e}"));
    let stopping = before_stop.elapsed();
    std::thread::sleep(down);
    let before_start = Instant::now();
    server.restart().unwrap_or_else(|e| panic!("{e}"));
    let starting = before_start.elapsed();
    let end = run.finish(Duration::from_secs(120));
    assert!(end.in_time, "still running after 120 s:\n{}", end.output());
    assert_eq!(end.code, Some(0), "{}", end.output());
    let j: Value = serde_json::from_str(&std::fs::read_to_string(s.path("r.json")).unwrap())
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", end.output()));
    // The text report has its line.
    assert!(
        end.stdout.contains("\nOutages:\n    at "),
        "{}",
        end.output()
    );
    assert_eq!(j["end"]["reason"], "time_limit", "{}", j["end"]);
    let outages = j["outages"]
        .as_array()
        .unwrap_or_else(|| panic!("no outages: {}", end.output()));
    assert_eq!(outages.len(), 1, "{outages:?}");
    let o = &outages[0];
    let length = o["length_s"].as_f64().unwrap_or_else(|| panic!("{o}"));
    // The attempt that ended it: how long it took to connect (what a
    // loaded machine or a server still busy starting costs), and when it
    // began.
    let connect = o["connect_s"].as_f64().unwrap_or_else(|| panic!("{o}"));
    assert!((0.0..=length).contains(&connect), "{o}");
    let began = length - connect;
    // Its failed attempts, with their errors.
    let failed = o["failed_attempts"].as_u64().unwrap_or(0);
    assert!(failed >= 1, "{o}");
    let errors = o["errors"].as_array().unwrap_or_else(|| panic!("{o}"));
    assert!(!errors.is_empty(), "{o}");
    let counted: u64 = errors
        .iter()
        .map(|e| e["attempts"].as_u64().unwrap_or(0))
        .sum();
    assert!(counted >= 1 && counted <= failed, "{o}");
    // Down for sure while the test slept. The attempt that ended it
    // began at most from the stop's start to the restart's end (a user
    // finds its connection lost as the stop begins, and tries again once
    // it is back), plus the users' time between attempts (at most 1 s),
    // with a margin for a loaded machine's scheduling.
    let kept_down = down.as_secs_f64();
    let longest = (stopping + down + starting).as_secs_f64();
    eprintln!(
        "outage of {length:.2} s, its last attempt began at {began:.2} s and took {connect:.2} s; \
         {failed} attempts failed; kept down {kept_down} s, stopping took {stopping:?}, starting {starting:?}"
    );
    assert!(
        length >= kept_down - 1.0 && began <= longest + 3.0,
        "outage of {length} s, its last attempt began at {began} s; the server was kept down {kept_down} s \
         (stopping took {stopping:?}, starting {starting:?}): {o}"
    );
    // The text report says what failed.
    assert!(
        end.stdout.contains(&format!("{failed} reconnect attempt")),
        "{}",
        end.output()
    );
    let start_s = o["start_s"].as_f64().unwrap_or_else(|| panic!("{o}"));
    assert!(start_s > 0.0, "{o}");
    assert!(o["events_lost"].as_u64().is_some(), "{o}");
    assert!(o["tolerance_pct"].as_f64().is_some(), "{o}");
    // The run went on after it: events in its last intervals.
    let iv = j["intervals"].as_array().expect("intervals");
    let last = iv.last().expect("an interval");
    assert!(last["events"].as_u64().unwrap_or(0) > 0, "{last}");
    assert!(j["totals"]["reconnects"].as_u64().unwrap_or(0) >= 1);
}

#[test]
fn a_restarted_postgres_is_one_outage() {
    a_restarted_server_is_one_outage(Flavor::Postgres);
}

#[test]
fn a_restarted_mariadb_is_one_outage() {
    a_restarted_server_is_one_outage(Flavor::MariaDb);
}

/// Two throwaway servers of `flavor`, prepared for oltp_point_select.
fn two_prepared(
    flavor: Flavor,
    s: &Scratch,
) -> Option<(dbmeter_server::Server, dbmeter_server::Server)> {
    let a = start(flavor)?;
    let b = start(flavor)?;
    for server in [&a, &b] {
        s.ok_home(&[
            "prepare",
            "oltp_point_select",
            &format!("--db={}", server.url()),
            "--table-size=100",
        ]);
    }
    Some((a, b))
}

/// `scheme://user@127.0.0.1:P1,127.0.0.1:P2/test` for the ports.
fn host_list(flavor: Flavor, ports: &[u16]) -> String {
    let (scheme, user) = match flavor {
        Flavor::Postgres => ("postgres", "postgres"),
        Flavor::MariaDb => ("mysql", "root"),
    };
    let hosts: Vec<String> = ports.iter().map(|p| format!("127.0.0.1:{p}")).collect();
    format!("--db={scheme}://{user}@{}/test", hosts.join(","))
}

/// A port on which nothing listens (a host that is down).
fn dead_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    l.local_addr().expect("its address").port()
}

fn hosts_of(j: &Value) -> Vec<Value> {
    j["hosts"]
        .as_array()
        .unwrap_or_else(|| panic!("no hosts in the document: {j}"))
        .clone()
}

/// `--hosts=spread` over two servers: half the users on each, each host
/// with events; the text report lists them.
fn spread_over_two(flavor: Flavor) {
    let s = Scratch::new();
    let Some((a, b)) = two_prepared(flavor, &s) else {
        return;
    };
    let db = host_list(flavor, &[a.port(), b.port()]);
    let r = s.ok_home(&[
        "run",
        "oltp_point_select",
        &db,
        "--table-size=100",
        "--threads=4",
        "--time=2",
        "--hosts=spread",
        "--output=r.json",
        "--format=json",
    ]);
    let j: Value = serde_json::from_str(&std::fs::read_to_string(s.path("r.json")).unwrap())
        .expect("the document");
    let hosts = hosts_of(&j);
    assert_eq!(hosts.len(), 2, "{hosts:?}");
    for (h, port) in hosts.iter().zip([a.port(), b.port()]) {
        assert_eq!(h["host"], format!("127.0.0.1:{port}"), "{h}");
        assert_eq!(h["users"], 2, "{hosts:?}");
        assert!(h["events"].as_u64().unwrap_or(0) > 0, "{hosts:?}");
        assert_eq!(h["errors"], 0, "{hosts:?}");
    }
    let total: u64 = hosts.iter().map(|h| h["events"].as_u64().unwrap()).sum();
    assert_eq!(total, j["totals"]["events"].as_u64().unwrap());
    assert!(
        r.stdout
            .contains(&format!("\nHosts:\n    127.0.0.1:{}: 2 users, ", a.port())),
        "{}",
        r.stdout
    );
}

#[test]
fn spread_over_two_postgres() {
    spread_over_two(Flavor::Postgres);
}

#[test]
fn spread_over_two_mariadb() {
    spread_over_two(Flavor::MariaDb);
}

/// Failover (the default) with the first host down: every user on the
/// second, and a warning names the host skipped. With spread, the users
/// of the host that is down cannot connect: one line, exit 1.
fn failover_skips_a_host_that_is_down(flavor: Flavor) {
    let s = Scratch::new();
    let Some(server) = start(flavor) else {
        return;
    };
    let url = format!("--db={}", server.url());
    s.ok_home(&["prepare", "oltp_point_select", &url, "--table-size=100"]);
    let dead = dead_port();
    let db = host_list(flavor, &[dead, server.port()]);
    let r = s.ok_home(&[
        "run",
        "oltp_point_select",
        &db,
        "--table-size=100",
        "--threads=3",
        "--time=1",
        "--format=json",
    ]);
    let j = r.json();
    let hosts = hosts_of(&j);
    assert_eq!(hosts[0]["host"], format!("127.0.0.1:{dead}"));
    assert_eq!(hosts[0]["users"], 0, "{hosts:?}");
    assert_eq!(hosts[0]["connections"], 0, "{hosts:?}");
    assert_eq!(hosts[1]["users"], 3, "{hosts:?}");
    assert!(hosts[1]["events"].as_u64().unwrap_or(0) > 0, "{hosts:?}");
    let said = format!("host 127.0.0.1:{dead} of --db took no connection");
    assert!(r.stderr.contains(&said), "{}", r.stderr);
    assert!(
        j["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["code"] == "host_skipped"),
        "{}",
        j["warnings"]
    );

    let r = s.run_home(&[
        "run",
        "oltp_point_select",
        &db,
        "--table-size=100",
        "--threads=2",
        "--time=1",
        "--hosts=spread",
    ]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.stderr.trim_end().lines().count(), 1, "{}", r.stderr);
    assert!(r.stderr.contains("cannot connect to"), "{}", r.stderr);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
}

#[test]
fn failover_skips_a_postgres_host_that_is_down() {
    failover_skips_a_host_that_is_down(Flavor::Postgres);
}

#[test]
fn failover_skips_a_mariadb_host_that_is_down() {
    failover_skips_a_host_that_is_down(Flavor::MariaDb);
}

/// A malformed host list and an unknown --hosts: one line, exit 2.
#[test]
fn bad_host_lists_and_policies_are_one_usage_line() {
    let s = Scratch::new();
    for args in [
        ["--db=postgres://u@h1:5432,h2:notaport/db", "--hosts=spread"],
        ["--db=mysql://u@h1:3306,[::1/db", "--hosts=failover"],
        ["--db=postgres://u@h1,h2/db", "--hosts=round-robin"],
    ] {
        let r = s.run(&["run", "oltp_point_select", args[0], args[1], "--time=1"]);
        assert_eq!(r.code, 2, "{args:?}: {}\n{}", r.stdout, r.stderr);
        assert_eq!(
            r.stderr.trim_end().lines().count(),
            1,
            "{args:?}: {}",
            r.stderr
        );
        assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
        let named = if args[1].contains("round") {
            "--hosts"
        } else {
            "--db"
        };
        assert!(r.stderr.contains(named), "{args:?}: {}", r.stderr);
    }
}

/// Failover on reconnect: the first of two servers is stopped during the
/// run; its users reconnect to the second, and the run ends with its time
/// limit, every user on the second host at the end.
fn users_fail_over_when_their_host_stops(flavor: Flavor) {
    let s = Scratch::new();
    let Some((mut a, b)) = two_prepared(flavor, &s) else {
        return;
    };
    let db = host_list(flavor, &[a.port(), b.port()]);
    let mut run = watch(
        &s,
        &[
            "run",
            "oltp_point_select",
            &db,
            "--table-size=100",
            "--threads=2",
            "--time=6",
            "--report-interval=1",
            "--output=r.json",
            "--format=json",
        ],
    );
    assert!(
        run.wait_for_line(Duration::from_secs(60), |l| l.starts_with("[ 2s ]")),
        "the run did not get to 2 s:\n{}\n{}",
        run.stdout(),
        run.stderr()
    );
    a.stop().unwrap_or_else(|e| panic!("{e}"));
    let end = run.finish(Duration::from_secs(120));
    assert!(end.in_time, "still running after 120 s:\n{}", end.output());
    assert_eq!(end.code, Some(0), "{}", end.output());
    let j: Value = serde_json::from_str(&std::fs::read_to_string(s.path("r.json")).unwrap())
        .expect("the document");
    assert_eq!(j["end"]["reason"], "time_limit", "{}", j["end"]);
    let hosts = hosts_of(&j);
    assert_eq!(hosts[0]["users"], 0, "{hosts:?}");
    assert_eq!(hosts[1]["users"], 2, "{hosts:?}");
    assert!(hosts[1]["events"].as_u64().unwrap_or(0) > 0, "{hosts:?}");
    // Each user connected to the first host, then reconnected to the
    // second.
    assert!(
        hosts[0]["connections"].as_u64().unwrap_or(0) >= 2,
        "{hosts:?}"
    );
    assert!(
        hosts[1]["connections"].as_u64().unwrap_or(0) >= 2,
        "{hosts:?}"
    );
    assert!(j["totals"]["reconnects"].as_u64().unwrap_or(0) >= 2);
}

#[test]
fn postgres_users_fail_over_when_their_host_stops() {
    users_fail_over_when_their_host_stops(Flavor::Postgres);
}

#[test]
fn mariadb_users_fail_over_when_their_host_stops() {
    users_fail_over_when_their_host_stops(Flavor::MariaDb);
}

/// `target_session_attrs=read-write`: a first host whose sessions are
/// read-only is skipped (with a warning) for the second.
#[test]
fn read_write_sessions_skip_a_read_only_postgres() {
    let s = Scratch::new();
    let Some(ro) = start(Flavor::Postgres) else {
        return;
    };
    // New sessions on its database `test` are read-only.
    dbmeter_testkit::servers::ask(
        &ro,
        "ALTER DATABASE test SET default_transaction_read_only = on",
    );
    let Some(rw) = start(Flavor::Postgres) else {
        return;
    };
    s.ok_home(&[
        "prepare",
        "oltp_point_select",
        &format!("--db={}", rw.url()),
        "--table-size=100",
    ]);
    let list = host_list(Flavor::Postgres, &[ro.port(), rw.port()]);
    let db = format!("{list}?target_session_attrs=read-write");
    let r = s.ok_home(&[
        "run",
        "oltp_point_select",
        &db,
        "--table-size=100",
        "--threads=2",
        "--time=1",
        "--format=json",
    ]);
    let hosts = hosts_of(&r.json());
    assert_eq!(hosts[0]["connections"], 0, "{hosts:?}");
    assert_eq!(hosts[1]["users"], 2, "{hosts:?}");
    assert!(
        r.stderr.contains(&format!(
            "host 127.0.0.1:{} of --db took no connection",
            ro.port()
        )),
        "{}",
        r.stderr
    );
    // An unknown value is refused, naming it.
    let db = format!("{list}?target_session_attrs=master");
    let r = s.run_home(&["run", "oltp_point_select", &db, "--time=1"]);
    assert_ne!(r.code, 0, "{}", r.stdout);
    assert_eq!(r.stderr.trim_end().lines().count(), 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("target_session_attrs=master"),
        "{}",
        r.stderr
    );
}
