//! A campaign stopped by a signal (SIGTERM from a service manager or
//! `kill`, SIGINT) stores the run it was in as interrupted, exits with
//! 128 + the signal's number, and `--resume` runs that cell again; a
//! campaign keeps the target's password out of the command lines and
//! environments of the processes it starts, its output and its store.

use crate::common::*;
use crate::procs::{Watched, descendants};
use dbmeter_server::Flavor;
use dbmeter_testkit::servers::{ask, start};
use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

/// A scratch directory readable by the servers' user, with dbmeter's home
/// inside it.
fn place() -> Scratch {
    let s = Scratch::new();
    std::fs::set_permissions(s.dir.path(), std::fs::Permissions::from_mode(0o755))
        .expect("chmod scratch");
    s
}

fn write(s: &Scratch, name: &str, text: &str) -> String {
    let p = s.path(name);
    std::fs::write(&p, text).expect("write the campaign file");
    p.to_string_lossy().into_owned()
}

fn listed(s: &Scratch, store: &str) -> Vec<Value> {
    let r = s.run_home(&["results", "list", store, "--format=json"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).expect("list as JSON");
    v.as_array().expect("an array").clone()
}

const LONG: &str = r#"name = "signals"
duration = 60
warmup = 0
repeats = 2
clients = [1]

[[target]]
name = "lite"
url = "sqlite:lite.db"

[[workload]]
name = "oltp_point_select"
options = { table-size = 200 }
"#;

/// The lines of a `--dry-run` plan that are cells to run ("  1.
/// oltp_point_select/lite/1 (repeat 1)").
fn planned(plan: &str) -> usize {
    plan.lines()
        .filter(|l| {
            let t = l.trim_start();
            let digits = t.chars().take_while(char::is_ascii_digit).count();
            digits > 0 && t[digits..].starts_with(". ") && t.contains("repeat")
        })
        .count()
}

/// Starts the 2 x 60 s campaign, waits until its first run measures,
/// sends `sig` to the campaign's process (only to it, as `kill` does) and
/// checks that it ends soon with `code`, having stored the run it was in
/// as interrupted and started nothing else. Returns the scratch
/// directory, the campaign file and the `--store=` option.
fn stopped_by(sig: libc::c_int, code: i32) -> (Scratch, String, String) {
    let s = place();
    let file = write(&s, "long.toml", LONG);
    let store = format!("--store={}", s.path("results.db").display());
    let mut c = s.cmd(&["campaign", "run", &file, &store]);
    c.env("DBMETER_HOME", s.path("home"))
        .env_remove("DBMETER_STORE");
    let mut campaign = Watched::spawn(c);
    let first = campaign.wait_for_line(Duration::from_secs(60), |l| l.starts_with("[1/2]"));
    assert!(
        first,
        "the first cell did not start:\n{}",
        campaign.stdout()
    );
    // Its (small) table is loaded, then it runs.
    campaign.wait_for_line(Duration::from_secs(30), |l| l.contains("Loaded"));
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        campaign.running(),
        "the campaign ended early:\n{}\n{}",
        campaign.stdout(),
        campaign.stderr()
    );
    let signalled = Instant::now();
    campaign.signal(sig);
    let end = campaign.finish(Duration::from_secs(30));
    let took = signalled.elapsed();
    assert!(
        end.in_time && took < Duration::from_secs(5),
        "ended {took:?} after the signal (in time: {}):\n{}",
        end.in_time,
        end.output()
    );
    assert_eq!(end.code, Some(code), "{}", end.output());
    assert!(!end.stderr.contains("panicked"), "{}", end.output());
    assert!(
        !end.stdout.contains("[2/2]"),
        "nothing starts after the signal:\n{}",
        end.output()
    );
    let runs = listed(&s, &store);
    assert_eq!(runs.len(), 1, "{runs:#?}\n{}", end.output());
    let run = &runs[0];
    assert_eq!(run["campaign"], "signals", "{run:#}");
    assert_eq!(run["repeat"], 1, "{run:#}");
    assert_eq!(run["end_reason"], "interrupted", "{run:#}");
    (s, file, store)
}

/// B4. SIGTERM: exit code 143, the cell's run stored as interrupted;
/// `--resume` runs both cells (the interrupted one again) and then the
/// store holds two completed runs of the campaign besides it.
#[test]
fn sigterm_stops_a_campaign_and_resume_reruns_the_cell() {
    let (s, file, store) = stopped_by(libc::SIGTERM, 143);

    let plan = s.run_home(&["campaign", "run", &file, "--resume", "--dry-run", &store]);
    assert_eq!(plan.code, 0, "{}\n{}", plan.stdout, plan.stderr);
    assert_eq!(planned(&plan.stdout), 2, "{}", plan.stdout);
    assert_eq!(listed(&s, &store).len(), 1, "a dry run stores nothing");

    std::fs::write(&file, LONG.replace("duration = 60", "duration = 1")).unwrap();
    let r = s.run_home(&["campaign", "run", &file, "--resume", &store]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("[2/2]"), "{}", r.stdout);
    let runs = listed(&s, &store);
    assert_eq!(runs.len(), 3, "{runs:#?}");
    let mut completed: Vec<i64> = runs
        .iter()
        .filter(|r| r["campaign"] == "signals")
        .filter(|r| matches!(r["end_reason"].as_str(), Some("time_limit" | "event_limit")))
        .map(|r| r["repeat"].as_i64().unwrap_or(0))
        .collect();
    completed.sort();
    assert_eq!(completed, vec![1, 2], "{runs:#?}");
    assert_eq!(
        runs.iter()
            .filter(|r| r["end_reason"] == "interrupted")
            .count(),
        1,
        "{runs:#?}"
    );
}

/// SIGINT sent to the campaign alone (`kill -INT`): exit code 130, the
/// run stored as interrupted.
#[test]
fn sigint_stops_a_campaign() {
    let (s, file, store) = stopped_by(libc::SIGINT, 130);
    let plan = s.run_home(&["campaign", "run", &file, "--resume", "--dry-run", &store]);
    assert_eq!(plan.code, 0, "{}\n{}", plan.stdout, plan.stderr);
    assert_eq!(planned(&plan.stdout), 2, "{}", plan.stdout);
}

const SECRET: &str = "S3cr3tPw-xyz";

/// Adds `what` to `list` unless it is there already.
fn note(list: &mut Vec<String>, what: String) {
    if !list.contains(&what) {
        list.push(what);
    }
}

/// Whether `secret` is in `hay`.
fn holds(hay: &[u8], secret: &str) -> bool {
    hay.windows(secret.len()).any(|w| w == secret.as_bytes())
}

/// B5. A target URL with a password: while the campaign runs, no process
/// it started (the cell's run, the hooks' shells) has the password in its
/// command line or environment; nor has the campaign's output or its
/// store.
#[test]
fn a_campaign_keeps_the_password_out_of_its_children() {
    let Some(server) = start(Flavor::MariaDb) else {
        return;
    };
    for host in ["%", "127.0.0.1", "localhost"] {
        ask(
            &server,
            &format!(
                "CREATE USER 'bench'@'{host}' IDENTIFIED BY '{SECRET}'; \
                 GRANT ALL PRIVILEGES ON test.* TO 'bench'@'{host}'"
            ),
        );
    }
    ask(&server, "FLUSH PRIVILEGES");
    let s = place();
    let file = write(
        &s,
        "secret.toml",
        &format!(
            r#"name = "secret"
duration = 3
repeats = 1
clients = [1]

[[target]]
name = "maria"
url = "mysql://bench:{SECRET}@127.0.0.1:{}/test"

[[workload]]
name = "oltp_point_select"
options = {{ table-size = 200 }}

[hooks]
before_run = ["sh: sleep 2"]
after_run = ["sh: echo done"]
"#,
            server.port()
        ),
    );
    let store_path = s.path("results.db");
    let store = format!("--store={}", store_path.display());
    let mut c = s.cmd(&["campaign", "run", &file, &store]);
    c.env("DBMETER_HOME", s.path("home"))
        .env_remove("DBMETER_STORE");
    let mut campaign = Watched::spawn(c);
    let root = campaign.pid();

    let mut leaks: Vec<String> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    let until = Instant::now() + Duration::from_secs(300);
    while campaign.running() && Instant::now() < until {
        for pid in descendants(root) {
            let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
                continue;
            };
            let shown = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if holds(&cmdline, SECRET) {
                note(&mut leaks, format!("pid {pid} command line: {shown}"));
            }
            if let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ"))
                && holds(&environ, SECRET)
            {
                let vars: Vec<String> = environ
                    .split(|b| *b == 0)
                    .filter(|v| holds(v, SECRET))
                    .map(|v| String::from_utf8_lossy(v).into_owned())
                    .collect();
                note(
                    &mut leaks,
                    format!("pid {pid} ({shown}) environment: {vars:?}"),
                );
            }
            if pid != root && !seen.contains(&shown) {
                seen.push(shown);
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let end = campaign.finish(Duration::from_secs(60));
    assert!(
        leaks.is_empty(),
        "the password is visible:\n{}",
        leaks.join("\n")
    );
    assert!(end.in_time, "{}", end.output());
    assert_eq!(end.code, Some(0), "{}", end.output());
    // The scan did see the children: the before_run hook sleeps 2 s.
    assert!(
        seen.iter().any(|c| c.contains("sleep")),
        "no child process seen: {seen:?}"
    );
    assert!(
        !end.stdout.contains(SECRET) && !end.stderr.contains(SECRET),
        "{}",
        end.output()
    );

    let runs = listed(&s, &store);
    assert_eq!(runs.len(), 1, "{runs:#?}");
    assert_eq!(runs[0]["end_reason"], "time_limit", "{:#}", runs[0]);
    let export = s.run_home(&["results", "export", "--format=json", &store]);
    assert_eq!(export.code, 0, "{}", export.stderr);
    assert!(
        !export.stdout.contains(SECRET),
        "the store holds the password"
    );
    // The hooks ran (and their output is kept).
    assert!(export.stdout.contains("done"), "{}", export.stdout);
    for f in ["results.db", "results.db-wal"] {
        if let Ok(bytes) = std::fs::read(s.path(f)) {
            assert!(!holds(&bytes, SECRET), "{f} holds the password");
        }
    }
}
