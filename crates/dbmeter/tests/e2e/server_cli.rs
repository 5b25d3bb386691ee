//! `dbmeter server ...` end to end: the real binary starts real MariaDB and
//! PostgreSQL servers that outlive it, in a home directory of the test's own
//! (DBMETER_HOME). A guard stops and removes every server a test started,
//! even when the test fails. Without the servers' binaries these tests skip,
//! unless DBMETER_REQUIRE_SERVERS is set (CI).

use crate::common::{Run, Scratch};
use dbmeter_server::Flavor;
use dbmeter_testkit::servers::can_run;
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

/// A scratch directory and a dbmeter home in it; dropping it stops and
/// forgets every server started there.
struct Managed {
    scratch: Scratch,
    home: std::path::PathBuf,
}

impl Managed {
    fn new() -> Managed {
        let scratch = Scratch::new();
        // The server users must reach the data directories inside.
        std::fs::set_permissions(scratch.dir.path(), std::fs::Permissions::from_mode(0o755))
            .expect("chmod scratch");
        let home = scratch.path("home");
        Managed { scratch, home }
    }

    fn run(&self, args: &[&str]) -> Run {
        let out = self
            .scratch
            .cmd(args)
            .env("DBMETER_HOME", &self.home)
            .output()
            .expect("run dbmeter");
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    fn ok(&self, args: &[&str]) -> Run {
        let r = self.run(args);
        assert_eq!(
            r.code, 0,
            "dbmeter {args:?} failed:\n{}\n{}",
            r.stdout, r.stderr
        );
        r
    }

    /// `server start ARGS`: the URL it printed.
    fn start(&self, args: &[&str]) -> String {
        let mut all = vec!["server", "start"];
        all.extend_from_slice(args);
        let r = self.ok(&all);
        let url = r.stdout.trim().to_string();
        assert_eq!(url.lines().count(), 1, "stdout is the URL only: {url}");
        url
    }

    /// The state of server `name`, as `status --format json` gives it.
    fn state(&self, name: &str) -> serde_json::Value {
        let r = self.run(&["server", "status", name, "--format", "json"]);
        assert!(r.code == 0 || r.code == 3, "{}", r.stderr);
        serde_json::from_str(&r.stdout).expect("status JSON")
    }

    fn pid(&self, name: &str) -> u32 {
        self.state(name)["pid"].as_u64().expect("pid") as u32
    }
}

impl Drop for Managed {
    fn drop(&mut self) {
        let _ = self.run(&["server", "stop", "--all", "--remove", "--timeout", "10"]);
        // In case the binary could not do it: kill what the state files name.
        let servers = self.home.join("servers");
        for entry in std::fs::read_dir(servers).into_iter().flatten().flatten() {
            let Ok(text) = std::fs::read_to_string(entry.path().join("state.json")) else {
                continue;
            };
            let state: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
            if let Some(pid) = state["pid"].as_u64().filter(|&p| p > 1) {
                // SAFETY: kill has no memory-safety preconditions; the
                // server leads its own process group.
                unsafe {
                    libc::kill(-(pid as libc::pid_t), libc::SIGKILL);
                }
            }
        }
    }
}

/// One line on stderr that contains `what`, and exit code `code`.
fn fails_with(r: &Run, code: i32, what: &str) {
    assert_eq!(r.code, code, "stdout:\n{}\nstderr:\n{}", r.stdout, r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "one line: {}", r.stderr);
    assert!(r.stderr.contains(what), "'{what}' not in: {}", r.stderr);
}

/// prepare + a 1 s point-select run against `url`.
fn bench(m: &Managed, url: &str) {
    m.ok(&[
        "prepare",
        "oltp_point_select",
        "--db",
        url,
        "--table-size=100",
    ]);
    point_selects(m, url);
}

fn point_selects(m: &Managed, url: &str) {
    let r = m.ok(&[
        "run",
        "oltp_point_select",
        "--db",
        url,
        "--table-size=100",
        "--time",
        "1",
    ]);
    assert!(r.stat("transactions:") > 0, "{}", r.stdout);
}

fn cpus_of_every_thread(pid: u32) -> Vec<String> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).expect("tasks");
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("status")).ok())
        .filter_map(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                .map(|v| v.trim().to_string())
        })
        .collect()
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'))
    })
}

#[test]
fn mariadb_start_run_status_restart_stop() {
    if !can_run(Flavor::MariaDb) {
        return;
    }
    let m = Managed::new();
    let url = m.start(&[
        "mariadb",
        "--name",
        "m1",
        "--set",
        "innodb_buffer_pool_size=32M",
        "--server-cpus",
        "0",
    ]);
    assert!(url.starts_with("mysql://root@127.0.0.1:"), "{url}");
    bench(&m, &url);

    // The server outlived the command that started it, bound to CPU 0
    // with every thread.
    let pid = m.pid("m1");
    let cpus = cpus_of_every_thread(pid);
    assert!(cpus.len() > 1, "mariadbd has threads: {cpus:?}");
    assert!(cpus.iter().all(|c| c == "0"), "{cpus:?}");

    let st = m.ok(&["server", "status", "m1"]);
    for want in [
        "m1: running",
        &url,
        &format!("pid      {pid}"),
        "uptime",
        "MariaDB",
    ] {
        assert!(st.stdout.contains(want), "'{want}' not in:\n{}", st.stdout);
    }
    let list = m.ok(&["server", "list"]);
    let row = list
        .stdout
        .lines()
        .find(|l| l.starts_with("m1 "))
        .unwrap_or_default();
    assert!(
        row.contains("running") && row.contains(&url),
        "{}",
        list.stdout
    );
    let json: serde_json::Value =
        serde_json::from_str(&m.ok(&["server", "list", "--format=json"]).stdout).unwrap();
    assert_eq!(json["servers"][0]["name"], "m1");
    assert_eq!(json["servers"][0]["running"], true);
    assert_eq!(json["servers"][0]["server_cpus"], serde_json::json!([0]));

    // Restart: a new process, same URL, the data kept (no prepare).
    let again = m.ok(&["server", "restart", "m1"]);
    assert_eq!(again.stdout.trim(), url);
    assert_ne!(m.pid("m1"), pid);
    assert!(cpus_of_every_thread(m.pid("m1")).iter().all(|c| c == "0"));
    point_selects(&m, &url);

    // Stop: status says stopped with exit code 3; --remove forgets it.
    let stop = m.ok(&["server", "stop", "m1"]);
    assert!(stop.stdout.contains("stopped m1"), "{}", stop.stdout);
    let st = m.run(&["server", "status", "m1"]);
    assert_eq!(st.code, 3, "{}{}", st.stdout, st.stderr);
    assert!(st.stdout.contains("m1: stopped"), "{}", st.stdout);
    let datadir = m.home.join("servers/m1/data");
    assert!(datadir.is_dir());
    m.ok(&["server", "stop", "m1", "--remove"]);
    assert!(!datadir.exists() && !m.home.join("servers/m1").exists());
    let list = m.ok(&["server", "list"]);
    assert!(list.stdout.starts_with("no servers"), "{}", list.stdout);
}

#[test]
fn postgres_start_run_snapshot_and_start_from_it() {
    if !can_run(Flavor::Postgres) {
        return;
    }
    let m = Managed::new();
    let started = m.ok(&[
        "server",
        "start",
        "postgres",
        "--name=p1",
        "--set=shared_buffers=32MB",
        "--drop-caches",
    ]);
    // Dropped, or one warning where not permitted (containers); never fatal.
    assert!(started.stderr.contains("page cache"), "{}", started.stderr);
    let url = started.stdout.trim().to_string();
    assert!(url.starts_with("postgres://postgres@127.0.0.1:"), "{url}");
    bench(&m, &url);
    let st = m.ok(&["server", "status", "p1"]);
    assert!(st.stdout.contains("p1: running") && st.stdout.contains("PostgreSQL"));

    // A snapshot needs a cleanly stopped server.
    let r = m.run(&["server", "snapshot", "p1"]);
    fails_with(&r, 1, "is running; stop it first");
    m.ok(&["server", "restart", "p1"]);
    point_selects(&m, &url);
    m.ok(&["server", "stop", "p1"]);
    m.ok(&["server", "snapshot", "p1", "--as", "loaded"]);
    let list = m.ok(&["server", "list"]);
    assert!(
        list.stdout
            .lines()
            .any(|l| l.starts_with("loaded ") && l.contains("p1")),
        "{}",
        list.stdout
    );

    // A new server from the snapshot has the tables (no prepare).
    let url2 = m.start(&["postgres", "--name", "p2", "--from-snapshot", "loaded"]);
    assert_ne!(url2, url);
    point_selects(&m, &url2);
    assert_eq!(m.state("p2")["from_snapshot"], "loaded");
    let datadir = m.home.join("servers/p2/data");
    let meta = std::fs::metadata(&datadir).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o700);

    // A non-empty --datadir is refused, and left as it was.
    let mine = m.scratch.path("mine");
    std::fs::create_dir(&mine).unwrap();
    std::fs::write(mine.join("keep.txt"), "x").unwrap();
    let mine_arg = mine.display().to_string();
    let r = m.run(&[
        "server",
        "start",
        "postgres",
        "--name=p3",
        "--datadir",
        &mine_arg,
        "--from-snapshot=loaded",
    ]);
    fails_with(&r, 1, "is not empty");
    assert!(mine.join("keep.txt").is_file());

    m.ok(&["server", "stop", "--all", "--remove"]);
    m.ok(&["server", "snapshot", "--remove", "loaded"]);
    assert!(!m.home.join("snapshots/loaded").exists());
    assert!(m.ok(&["server", "list"]).stdout.starts_with("no servers"));
}

#[test]
fn a_killed_server_is_reported_stopped() {
    if !can_run(Flavor::Postgres) {
        return;
    }
    let m = Managed::new();
    // fsync=off: crash recovery would otherwise sync the whole data
    // directory (seconds), which this test does not need.
    m.start(&["postgres", "--name", "k", "--set", "fsync=off"]);
    let pid = m.pid("k");
    // SAFETY: kill has no memory-safety preconditions; pid leads its group.
    unsafe {
        libc::kill(-(pid as libc::pid_t), libc::SIGKILL);
    }
    let t = std::time::Instant::now();
    while alive(pid) && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let st = m.run(&["server", "status", "k"]);
    assert_eq!(st.code, 3, "{}{}", st.stdout, st.stderr);
    assert!(st.stdout.contains("k: stopped"), "{}", st.stdout);
    assert_eq!(m.state("k")["running"], false);
    let r = m.run(&["server", "snapshot", "k"]);
    fails_with(&r, 1, "was not stopped cleanly");
    // stop is not an error either; restart recovers it.
    assert!(
        m.ok(&["server", "stop", "k"])
            .stdout
            .contains("k was not running")
    );
    m.ok(&["server", "restart", "k"]);
    assert_eq!(m.state("k")["running"], true);
}

#[test]
fn a_port_in_use_is_one_line() {
    if !can_run(Flavor::MariaDb) {
        return;
    }
    let m = Managed::new();
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let r = m.run(&["server", "start", "mariadb", "--port", &port]);
    fails_with(
        &r,
        1,
        &format!("port {port} on 127.0.0.1 is already in use"),
    );
    assert!(r.stdout.is_empty());
    let list = m.ok(&["server", "list"]);
    assert!(list.stdout.starts_with("no servers"), "{}", list.stdout);
}

#[test]
fn rejected_options_are_one_line_with_the_log() {
    let cases = [
        (
            Flavor::MariaDb,
            "no_such_option=1",
            "unknown variable 'no_such_option=1'",
        ),
        (
            Flavor::MariaDb,
            "innodb_buffer_pool_size=banana",
            "Error while setting value 'banana'",
        ),
        (
            Flavor::Postgres,
            "no_such_option=1",
            "unrecognized configuration parameter \"no_such_option\"",
        ),
    ];
    for (flavor, set, message) in cases {
        if !can_run(flavor) {
            continue;
        }
        let m = Managed::new();
        let r = m.run(&[
            "server",
            "start",
            flavor.name(),
            "--name",
            "bad",
            "--set",
            set,
        ]);
        fails_with(&r, 1, message);
        // The log is kept and named; nothing else is.
        let log = m.home.join("servers/bad/server.log");
        assert!(
            r.stderr.contains(&log.display().to_string()),
            "{}",
            r.stderr
        );
        assert!(log.is_file());
        assert!(!m.home.join("servers/bad/data").exists());
        assert!(!m.home.join("servers/bad/state.json").exists());
    }
}

#[test]
fn usage_and_lookup_errors() {
    let m = Managed::new();
    for flavor in ["mariadb", "postgres"] {
        let r = m.run(&["server", "start", flavor, "--basedir", "/nonexistent"]);
        fails_with(&r, 1, "not available: no ");
        assert!(r.stderr.contains("/nonexistent"), "{}", r.stderr);
    }
    fails_with(
        &m.run(&["server", "start", "oracle"]),
        2,
        "unknown server flavor 'oracle'",
    );
    fails_with(&m.run(&["server", "start"]), 2, "needs a flavor");
    fails_with(
        &m.run(&["server", "stop"]),
        2,
        "needs a server name or --all",
    );
    fails_with(&m.run(&["server", "restart"]), 2, "needs a server name");
    fails_with(
        &m.run(&["server", "start", "mariadb", "--port"]),
        2,
        "--port needs a value",
    );
    fails_with(
        &m.run(&["server", "start", "mariadb", "--port", "x"]),
        2,
        "expected a port number",
    );
    fails_with(
        &m.run(&["server", "stop", "--bogus"]),
        2,
        "unknown option --bogus",
    );
    fails_with(
        &m.run(&["server", "frobnicate"]),
        2,
        "unknown server command",
    );
    fails_with(
        &m.run(&["server", "status", "nope"]),
        1,
        "no server named 'nope'",
    );
    fails_with(
        &m.run(&["server", "stop", "nope"]),
        1,
        "no server named 'nope'",
    );
    fails_with(
        &m.run(&["server", "snapshot", "nope"]),
        1,
        "no server named 'nope'",
    );
    if can_run(Flavor::MariaDb) {
        fails_with(
            &m.run(&["server", "start", "mariadb", "--from-snapshot", "nope"]),
            1,
            "no snapshot named 'nope'",
        );
    }
    fails_with(
        &m.run(&["server", "start", "postgres", "--server-cpus", "4-2"]),
        2,
        "runs backwards",
    );
    fails_with(
        &m.run(&["server", "start", "postgres", "--server-cpus", "1023"]),
        1,
        "CPU 1023 not available",
    );
    // No servers: status is "not running".
    let st = m.run(&["server", "status"]);
    assert_eq!(st.code, 3);
    assert!(st.stdout.starts_with("no servers"), "{}", st.stdout);
    let help = m.ok(&["server", "help"]);
    assert!(help.stdout.contains("--from-snapshot"), "{}", help.stdout);
}

#[test]
fn client_cpus_pin_dbmeter_itself() {
    let m = Managed::new();
    let mut child = m
        .scratch
        .spawn(&["run", "noop", "--threads=2", "--time=3", "--client-cpus=0"]);
    std::thread::sleep(Duration::from_millis(800));
    let cpus = cpus_of_every_thread(child.id());
    let _ = child.kill();
    let _ = child.wait();
    assert!(cpus.len() >= 3, "main thread and two users: {cpus:?}");
    assert!(cpus.iter().all(|c| c == "0"), "{cpus:?}");

    fails_with(
        &m.run(&["run", "noop", "--time=0.1", "--client-cpus=x"]),
        2,
        "--client-cpus: bad CPU list 'x'",
    );
    fails_with(
        &m.run(&["run", "noop", "--time=0.1", "--client-cpus=1023"]),
        1,
        "CPU 1023 not available",
    );
}

/// The first column of the first row of `sql`, asked with the flavor's own
/// client over TCP.
fn ask(flavor: Flavor, url: &str, sql: &str) -> String {
    let port = url
        .rsplit_once(':')
        .and_then(|(_, rest)| rest.split('/').next())
        .expect("port in URL")
        .to_string();
    let out = match flavor {
        Flavor::MariaDb => std::process::Command::new("mariadb")
            .args(["-h127.0.0.1", "-P", &port, "-uroot", "-N", "-B", "-e", sql])
            .output(),
        Flavor::Postgres => std::process::Command::new("psql")
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &port,
                "-U",
                "postgres",
                "-d",
                "test",
            ])
            .args(["-tAc", sql])
            .output(),
    }
    .expect("run the client");
    assert!(
        out.status.success(),
        "{sql}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn config_files_are_used_and_set_wins() {
    let cases = [
        (
            Flavor::MariaDb,
            "[mysqld]\nmax_connections=77\nmax_allowed_packet=8M\ninnodb_buffer_pool_size=32M\n",
            "max_allowed_packet=16M",
            ["SELECT @@max_connections", "SELECT @@max_allowed_packet"],
            ["77", "16777216"],
        ),
        (
            Flavor::Postgres,
            "max_connections = 50\nwork_mem = '2MB'\nshared_buffers = '32MB'\n",
            "work_mem=8MB",
            ["SHOW max_connections", "SHOW work_mem"],
            ["50", "8MB"],
        ),
    ];
    for (flavor, file, set, questions, answers) in cases {
        if !can_run(flavor) {
            continue;
        }
        let m = Managed::new();
        let conf = m.scratch.path("server.conf");
        std::fs::write(&conf, file).unwrap();
        let conf = conf.display().to_string();
        let url = m.start(&[flavor.name(), "--config", &conf, "--set", set]);
        for (q, a) in questions.iter().zip(answers) {
            assert_eq!(ask(flavor, &url, q), a, "{flavor}: {q}");
        }
        // The server reads dbmeter's copy, so the user may edit theirs.
        let copy = m.state(flavor.name())["config_file"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(copy.starts_with(&m.home.display().to_string()), "{copy}");
    }
}
