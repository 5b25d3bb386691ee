//! `dbmeter campaign run` end to end: a small matrix on embedded SQLite and a
//! managed MariaDB, its results in a SQLite store, `--resume`, a failing
//! cell, `--dry-run`, and campaign files with mistakes.

use crate::common::{Run, Scratch};
use dbmeter_server::Flavor;
use dbmeter_store::{Filter, Store};
use dbmeter_testkit::servers::can_run;
use std::os::unix::fs::PermissionsExt;

/// A scratch directory with its own dbmeter home (managed servers and the
/// default store live there); managed servers left over are removed.
struct Place {
    scratch: Scratch,
}

impl Place {
    fn new() -> Place {
        let scratch = Scratch::new();
        std::fs::set_permissions(scratch.dir.path(), std::fs::Permissions::from_mode(0o755))
            .expect("chmod scratch");
        Place { scratch }
    }

    fn run(&self, args: &[&str]) -> Run {
        self.scratch.run_home(args)
    }

    fn write(&self, name: &str, text: &str) -> String {
        let p = self.scratch.path(name);
        std::fs::write(&p, text).expect("write campaign file");
        p.to_string_lossy().into_owned()
    }

    fn store(&self) -> Store {
        Store::open(&self.scratch.path("results.db").to_string_lossy()).expect("open the store")
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        let _ = self.run(&["server", "stop", "--all", "--remove", "--timeout", "10"]);
    }
}

fn doc(store: &mut Store, id: i64) -> serde_json::Value {
    let r = store.run(id).expect("read run").expect("run exists");
    serde_json::from_str(&r.document).expect("stored JSON")
}

#[test]
fn sqlite_and_managed_mariadb_matrix_stored_and_resumed() {
    if !can_run(Flavor::MariaDb) {
        return;
    }
    let p = Place::new();
    let lite = p.scratch.path("lite.sqlite");
    let file = p.write(
        "small.toml",
        &format!(
            r#"# two variants, two workloads, two client counts, two repeats
name = "small"
store = "results.db"
duration = 1
repeats = 2
clients = [1, 2]
options = {{ report-interval = 1 }}

[[target]]
name = "lite"
url = "sqlite:{}"

[[target]]
name = "maria"
server = "mariadb"
settings = {{ innodb_buffer_pool_size = "32M", innodb_log_file_size = "16M" }}

[[workload]]
name = "oltp_point_select"
options = {{ table-size = 500 }}

[[workload]]
name = "oltp_read_only"
options = {{ table-size = 500, range-size = 10 }}

[hooks]
before_run = ["sh: echo before $DBMETER_TARGET $DBMETER_CLIENTS"]
after_run = ["sql: SELECT COUNT(*) FROM sbtest1"]
"#,
            lite.display()
        ),
    );

    let plan = p.run(&["campaign", "run", &file, "--dry-run"]);
    assert_eq!(plan.code, 0, "{}\n{}", plan.stdout, plan.stderr);
    assert!(plan.stdout.contains("16 runs"), "{}", plan.stdout);
    // The plan speaks the campaign file's words, not the code's.
    assert!(
        plan.stdout.contains("order: interleaved; reset: none"),
        "{}",
        plan.stdout
    );
    assert!(!plan.stdout.contains("Interleaved") && !plan.stdout.contains("None"));
    assert!(
        !p.scratch.path("results.db").exists(),
        "a dry run stores nothing"
    );

    let r = p.run(&["campaign", "run", &file]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains("[1/16] oltp_point_select on lite, 1 client, repeat 1"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("[16/16] oltp_read_only on maria, 2 clients, repeat 2"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("16 stored, 0 failed"), "{}", r.stdout);

    // Every run is in the store under its cell, with what it printed.
    let mut store = p.store();
    let runs = store.runs(&Filter::all()).expect("list runs");
    assert_eq!(runs.len(), 16);
    let mut cells: Vec<(String, u32)> = runs
        .iter()
        .map(|s| (s.cell.clone().unwrap_or_default(), s.repeat.unwrap_or(0)))
        .collect();
    cells.sort();
    cells.dedup();
    assert_eq!(cells.len(), 16, "one run per cell and repeat: {cells:?}");
    for s in &runs {
        assert_eq!(s.campaign.as_deref(), Some("small"));
        assert!(s.completed(), "run {} ended {}", s.id, s.end_reason);
        let variant = s.variant.clone().unwrap_or_default();
        let threads = s.threads.unwrap_or(0);
        assert_eq!(
            s.cell.as_deref(),
            Some(format!("{}/{variant}/{threads}", s.workload).as_str())
        );
        let d = doc(&mut store, s.id);
        assert_eq!(d["threads"].as_u64(), Some(threads as u64));
        assert_eq!(d["workload"].as_str(), Some(s.workload.as_str()));
        let driver = d["target"]["driver"].as_str().unwrap_or("");
        assert_eq!(driver, if variant == "lite" { "sqlite" } else { "mysql" });
        // The progress line shows the stored throughput.
        let tps = d["totals"]["events_per_s"].as_f64().expect("tps");
        let line = format!("{tps:.1} tps");
        assert!(
            r.stdout.contains(&format!("(stored as run #{})", s.id))
                && r.stdout
                    .lines()
                    .any(|l| l.contains(&line) && l.ends_with(&format!("#{})", s.id))),
            "run {}: '{line}' not printed:\n{}",
            s.id,
            r.stdout
        );
        // Both hooks ran and their output is kept with the run.
        let hooks = d["hooks"].as_array().expect("hooks");
        let before = &hooks[0];
        assert_eq!(before["when"], "before_run");
        assert_eq!(
            before["output"].as_str().map(str::trim),
            Some(format!("before {variant} {threads}").as_str())
        );
        assert_eq!(hooks[1]["when"], "after_run");
        assert!(
            hooks[1]["output"].as_str().unwrap_or("").contains("500"),
            "{hooks:?}"
        );
        // The server's variables are recorded: the campaign's settings took.
        if variant == "maria" {
            assert_eq!(
                d["server"]["variables"]["innodb_buffer_pool_size"].as_str(),
                Some("33554432")
            );
        }
    }

    // The managed server is gone with the campaign.
    let list = p.run(&["server", "list"]);
    assert!(!list.stdout.contains("small-maria"), "{}", list.stdout);

    // --resume with everything stored runs nothing.
    let again = p.run(&["campaign", "run", &file, "--resume"]);
    assert_eq!(again.code, 0, "{}\n{}", again.stdout, again.stderr);
    assert!(
        again.stdout.contains("16 already stored, skipped"),
        "{}",
        again.stdout
    );
    assert_eq!(store.runs(&Filter::all()).expect("list").len(), 16);

    // Forget one cell: --resume runs exactly that one.
    let gone = runs
        .iter()
        .find(|s| s.cell.as_deref() == Some("oltp_read_only/lite/2") && s.repeat == Some(2))
        .expect("cell stored");
    assert_eq!(store.delete(&Filter::ids(&[gone.id])).expect("delete"), 1);
    let once = p.run(&["campaign", "run", &file, "--resume"]);
    assert_eq!(once.code, 0, "{}\n{}", once.stdout, once.stderr);
    assert!(
        once.stdout
            .contains("[1/1] oltp_read_only on lite, 2 clients, repeat 2"),
        "{}",
        once.stdout
    );
    assert!(!once.stdout.contains("[2/"), "{}", once.stdout);
    let now = store.runs(&Filter::all()).expect("list");
    assert_eq!(now.len(), 16);
    assert!(
        now.iter()
            .any(|s| s.cell.as_deref() == Some("oltp_read_only/lite/2")
                && s.repeat == Some(2)
                && s.id > gone.id)
    );
}

#[test]
fn a_failing_cell_is_recorded_and_the_campaign_goes_on() {
    let p = Place::new();
    // Nothing listens on port 1.
    let file = p.write(
        "fail.toml",
        &format!(
            r#"name = "fail"
store = "results.db"
duration = 1
clients = [1]

[[target]]
name = "down"
url = "mysql://root:secret@127.0.0.1:1/test"

[[target]]
name = "lite"
url = "sqlite:{}"

[[workload]]
name = "oltp_point_select"
options = {{ table-size = 100 }}
"#,
            p.scratch.path("lite.sqlite").display()
        ),
    );
    let r = p.run(&["campaign", "run", &file]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("[2/2] oltp_point_select on lite"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("1 stored, 1 failed"), "{}", r.stdout);
    assert!(
        !r.stdout.contains("secret") && !r.stderr.contains("secret"),
        "password shown"
    );
    let mut store = p.store();
    let runs = store.runs(&Filter::all()).expect("list");
    assert_eq!(runs.len(), 2);
    let down = runs
        .iter()
        .find(|s| s.variant.as_deref() == Some("down"))
        .expect("down stored");
    assert_eq!(down.end_reason, "failed");
    let error = down.end_error.clone().unwrap_or_default();
    assert!(error.contains("127.0.0.1:1"), "{error}");
    assert!(!doc(&mut store, down.id).to_string().contains("secret"));
    let lite = runs
        .iter()
        .find(|s| s.variant.as_deref() == Some("lite"))
        .expect("lite stored");
    assert!(lite.completed());
    // A failed cell is not 'done': --resume tries it again (and only it).
    let again = p.run(&["campaign", "run", &file, "--resume"]);
    assert_eq!(again.code, 1, "{}", again.stdout);
    assert!(
        again.stdout.contains("1 already stored, skipped"),
        "{}",
        again.stdout
    );
    assert!(
        again.stdout.contains("[1/1] oltp_point_select on down"),
        "{}",
        again.stdout
    );
}

/// Exit code 1 and one line on stderr naming the file and line.
fn rejected(p: &Place, name: &str, text: &str, wants: &str) {
    let file = p.write(name, text);
    let r = p.run(&["campaign", "run", &file, "--dry-run"]);
    assert_eq!(r.code, 1, "{name}: {}\n{}", r.stdout, r.stderr);
    assert_eq!(
        r.stderr.lines().count(),
        1,
        "{name}: one line: {}",
        r.stderr
    );
    assert!(
        r.stderr.contains(wants),
        "{name}: '{wants}' not in: {}",
        r.stderr
    );
}

#[test]
fn mistakes_in_the_file_name_their_line() {
    let p = Place::new();
    let top = "name = \"x\"\nduration = 5\nclients = [1]\n";
    let target = "[[target]]\nname = \"a\"\nurl = \"sqlite:a.db\"\n";
    let head = format!("{top}{target}");
    rejected(
        &p,
        "w.toml",
        &format!("{head}[[workload]]\nname = \"oltp_read_mostly\"\n"),
        "w.toml, line 8: unknown workload 'oltp_read_mostly'",
    );
    // A script is found beside the campaign file.
    let dir = p.scratch.dir.path().display();
    rejected(
        &p,
        "s.toml",
        &format!("{head}[[workload]]\nname = \"nope.lua\"\n"),
        &format!("s.toml, line 8: {dir}/nope.lua: no such file"),
    );
    rejected(
        &p,
        "so.toml",
        &format!(
            "{head}[[workload]]\nname = \"{}/tests/scripts/tpcc_like.lua\"\noptions = {{ warehouse = 2 }}\n",
            env!("CARGO_MANIFEST_DIR")
        ),
        "tpcc_like.lua': unknown option 'warehouse'",
    );
    rejected(
        &p,
        "o.toml",
        &format!(
            "{head}[[workload]]\nname = \"oltp_read_only\"\noptions = {{ table-sise = 10 }}\n"
        ),
        "o.toml, line 8: workload 'oltp_read_only': unknown option 'table-sise'",
    );
    rejected(
        &p,
        "v.toml",
        &format!(
            "{head}[[workload]]\nname = \"oltp_read_only\"\noptions = {{ table-size = \"lots\" }}\n"
        ),
        "v.toml, line 8: workload 'oltp_read_only': option 'table-size'",
    );
    // Values out of range fail before any cell runs.
    rejected(
        &p,
        "t.toml",
        &format!("{head}[[workload]]\nname = \"oltp_read_only\"\noptions = {{ tables = 0 }}\n"),
        "workload 'oltp_read_only' with 1 clients: --tables=0: expected",
    );
    rejected(
        &p,
        "q.toml",
        &format!(
            "{top}options = {{ query-timeout = 1e300 }}\n{target}[[workload]]\nname = \"oltp_read_only\"\n"
        ),
        "--query-timeout=1e300: expected seconds",
    );
    rejected(
        &p,
        "k.toml",
        &format!("{top}colour = \"red\"\n{target}[[workload]]\nname = \"oltp_read_only\"\n"),
        "k.toml, line 4: unknown field `colour`",
    );
    rejected(
        &p,
        "s.toml",
        &format!("{head}[[workload]]\nname = \"oltp_read_only\n"),
        "s.toml, line 8:",
    );
    rejected(
        &p,
        "r.toml",
        &format!(
            "{top}options = {{ threads = 4 }}\n{target}[[workload]]\nname = \"oltp_read_only\"\n"
        ),
        "r.toml, line 4: options: option 'threads' is set by the campaign itself",
    );
    let missing = p.run(&["campaign", "run", "nothere.toml"]);
    assert_eq!(missing.code, 1);
    assert!(
        missing
            .stderr
            .contains("cannot read campaign file nothere.toml"),
        "{}",
        missing.stderr
    );
    let usage = p.run(&["campaign", "run"]);
    assert_eq!(usage.code, 2, "{}", usage.stderr);
}

#[test]
fn a_virtual_user_sequence_of_tpcc_as_hammerdb_autopilot() {
    let p = Place::new();
    let file = p.write(
        "auto.toml",
        r#"name = "autopilot"
store = "results.db"
duration = 1
clients = [1, 2]
order = "sequential"

[[target]]
name = "lite"
url = "sqlite:tpcc.db"

[[workload]]
name = "tpcc"
options = { warehouses = 1 }
"#,
    );
    let r = p.run(&["campaign", "run", &file]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("preparing tpcc (tpcc warehouses=1)"),
        "{}",
        r.stdout
    );
    assert_eq!(r.stdout.matches(", NOPM ").count(), 2, "{}", r.stdout);
    let mut store = p.store();
    let runs = store.runs(&Filter::all()).expect("list");
    let threads: Vec<Option<u32>> = runs.iter().map(|s| s.threads).collect();
    assert_eq!(threads, vec![Some(1), Some(2)]);
    for s in &runs {
        let d = doc(&mut store, s.id);
        assert!(
            d["tpcc"]["nopm"].as_f64().unwrap_or(0.0) > 0.0,
            "{}",
            d["tpcc"]
        );
    }
    // The data is still consistent after the sequence.
    let check = p.run(&[
        "check",
        "tpcc",
        "--db",
        &format!("sqlite:{}", p.scratch.path("tpcc.db").display()),
    ]);
    assert_eq!(check.code, 0, "{}\n{}", check.stdout, check.stderr);
}

#[test]
fn ctrl_c_keeps_what_was_measured_and_resume_finishes() {
    use std::os::unix::process::CommandExt;
    let p = Place::new();
    let file = p.write(
        "long.toml",
        r#"name = "long"
store = "results.db"
duration = 4
repeats = 3
clients = [1]

[[target]]
name = "lite"
url = "sqlite:lite.db"

[[workload]]
name = "oltp_point_select"
options = { table-size = 200 }
"#,
    );
    // Ctrl-C in a terminal reaches the whole foreground process group: the
    // campaign and the run it is waiting for.
    let child = p
        .scratch
        .cmd(&["campaign", "run", &file])
        .env("DBMETER_HOME", p.scratch.path("home"))
        .env_remove("DBMETER_STORE")
        .process_group(0)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start the campaign");
    // Wait until the first run is under way (its data is loaded).
    let mut child = child;
    let mut reader = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    let mut stdout = String::new();
    loop {
        let mut line = String::new();
        let n = std::io::BufRead::read_line(&mut reader, &mut line).expect("read stdout");
        stdout.push_str(&line);
        if n == 0 || line.trim_start().starts_with("Loaded") {
            break;
        }
    }
    std::thread::sleep(std::time::Duration::from_millis(1500));
    // SAFETY: signalling the process group of our own child.
    unsafe { libc::kill(-(child.id() as i32), libc::SIGINT) };
    std::io::Read::read_to_string(&mut reader, &mut stdout).expect("read stdout");
    let status = child.wait().expect("campaign ends");
    assert_eq!(status.code(), Some(130), "{stdout}");
    assert!(
        !stdout.contains("[2/3]"),
        "nothing starts after Ctrl-C: {stdout}"
    );
    let mut store = p.store();
    let runs = store.runs(&Filter::all()).expect("list");
    assert_eq!(runs.len(), 1, "{stdout}");
    assert_eq!(runs[0].end_reason, "interrupted");
    assert!(runs[0].events.unwrap_or(0) > 0, "what it measured is kept");

    let again = p.run(&["campaign", "run", &file, "--resume"]);
    assert_eq!(again.code, 0, "{}\n{}", again.stdout, again.stderr);
    assert!(again.stdout.contains("[3/3]"), "{}", again.stdout);
    let done = store.runs(&Filter::all()).expect("list");
    assert_eq!(done.iter().filter(|s| s.completed()).count(), 3);
}

#[test]
fn a_lua_script_as_a_workload_on_sqlite() {
    // The script sits beside the campaign file, which names it by a path
    // relative to itself; dbmeter runs from another directory.
    let p = Place::new();
    let dir = p.scratch.path("camp");
    std::fs::create_dir(&dir).unwrap();
    let script = dir.join("tpcc_like.lua");
    std::fs::copy(
        format!("{}/tests/scripts/tpcc_like.lua", env!("CARGO_MANIFEST_DIR")),
        &script,
    )
    .unwrap();
    let file = p.write(
        "camp/lua.toml",
        r#"name = "lua"
store = "../results.db"
duration = 1
clients = [1, 2]
options = { report-interval = 1 }

[[target]]
name = "small"
url = "sqlite:small.sqlite"

[[target]]
name = "other"
url = "sqlite:other.sqlite"

[[workload]]
name = "tpcc_like.lua"
options = { warehouses = 2, customers = 10, scale-items = 200, use-fk = true }
"#,
    );
    let r = p.run(&["campaign", "run", &file]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let path = script.to_string_lossy().into_owned();
    assert!(r.stdout.contains("4 stored, 0 failed"), "{}", r.stdout);
    // Each target's data prepared once, by the script's prepare.
    assert_eq!(
        r.stdout.matches(&format!("preparing {path}")).count(),
        2,
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains(&format!("[4/4] {path} on other, 2 clients, repeat 1")),
        "{}",
        r.stdout
    );

    let mut store = p.store();
    let runs = store.runs(&Filter::all()).expect("list runs");
    assert_eq!(runs.len(), 4);
    let mut cells: Vec<String> = runs.iter().filter_map(|s| s.cell.clone()).collect();
    cells.sort();
    assert_eq!(
        cells,
        ["other/1", "other/2", "small/1", "small/2"].map(|c| format!("{path}/{c}"))
    );
    for s in &runs {
        assert!(s.completed(), "run {} ended {}", s.id, s.end_reason);
        assert_eq!(s.campaign.as_deref(), Some("lua"));
        assert_eq!(s.workload, path);
        let d = doc(&mut store, s.id);
        assert_eq!(d["target"]["driver"], "sqlite");
        assert_eq!(d["options"]["warehouses"], "2");
        assert_eq!(d["options"]["use-fk"], "on");
        assert_eq!(d["threads"].as_u64(), s.threads.map(u64::from));
        // Events ran, and each statement is a named kind of the result.
        assert!(
            d["totals"]["events"].as_u64().unwrap() > 0,
            "{}",
            d["totals"]
        );
        let kinds = d["kinds"].as_array().expect("kinds");
        assert!(
            kinds
                .iter()
                .any(|k| k["name"].as_str().unwrap().starts_with("SELECT c_first")),
            "{kinds:?}"
        );
    }
    // Both files hold the script's data, consistent after the runs.
    for f in ["small", "other"] {
        let db = format!("--db=sqlite:{}", dir.join(format!("{f}.sqlite")).display());
        let c = p.run(&[
            "check",
            &path,
            &db,
            "--warehouses=2",
            "--customers=10",
            "--threads=2",
        ]);
        assert_eq!(c.code, 0, "{}\n{}", c.stdout, c.stderr);
        assert!(
            c.stdout.contains("thread 1: 1 warehouse(s) consistent"),
            "{}",
            c.stdout
        );
    }
}

/// A campaign of a benchmark without a database: two targets without a
/// server, set apart by their own options (fileio's directory and block
/// size, as two filesystems would be), each prepared once in its own
/// directory; compare reads events per second, a run per cell.
#[test]
fn fileio_on_two_directories_without_a_server() {
    let p = Place::new();
    for d in ["a", "b"] {
        std::fs::create_dir(p.scratch.path(d)).unwrap();
    }
    let (a, b) = (p.scratch.path("a"), p.scratch.path("b"));
    let file = p.write(
        "fs.toml",
        &format!(
            r#"name = "fs"
store = "results.db"
duration = 1
clients = [1, 2]

[[target]]
name = "dir-a"
options = {{ file-dir = "{}", file-block-size = "4K" }}

[[target]]
name = "dir-b"
options = {{ file-dir = "{}", file-block-size = "16K" }}

[[workload]]
name = "fileio"
options = {{ file-test-mode = "rndrd", file-total-size = "1M", file-num = 2 }}
"#,
            a.display(),
            b.display()
        ),
    );
    let dry = p.run(&["campaign", "run", &file, "--dry-run"]);
    assert_eq!(dry.code, 0, "{}\n{}", dry.stdout, dry.stderr);
    assert!(
        dry.stdout
            .contains("target dir-a: no server\n  options: file-block-size=4K file-dir="),
        "{}",
        dry.stdout
    );
    let r = p.run(&["campaign", "run", &file]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("4 stored, 0 failed"), "{}", r.stdout);
    assert_eq!(
        r.stdout.matches("preparing fileio").count(),
        2,
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains(" events/s"), "{}", r.stdout);
    for d in [&a, &b] {
        let mut files: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        files.sort();
        assert_eq!(files, ["test_file.0", "test_file.1"], "{}", d.display());
    }
    let mut store = p.store();
    let runs = store.runs(&Filter::all()).expect("list runs");
    assert_eq!(runs.len(), 4);
    for s in &runs {
        assert!(s.completed(), "run {} ended {}", s.id, s.end_reason);
        let d = doc(&mut store, s.id);
        let (dir, block) = if s.cell.as_deref().is_some_and(|c| c.contains("/dir-a/")) {
            (&a, 4096)
        } else {
            (&b, 16384)
        };
        assert_eq!(d["options"]["file-dir"], dir.to_string_lossy().as_ref());
        let reads = d["totals"]["counts"]["reads"].as_u64().unwrap();
        assert!(reads > 0);
        assert_eq!(
            d["totals"]["counts"]["bytes_read"].as_u64().unwrap(),
            reads * block
        );
    }
    let store_path = p.scratch.path("results.db");
    let c = p.run(&[
        "compare",
        "--store",
        &store_path.to_string_lossy(),
        "--baseline",
        "variant:dir-a",
    ]);
    assert_eq!(c.code, 0, "{}\n{}", c.stdout, c.stderr);
    assert!(
        c.stdout.starts_with("tps (events per second)"),
        "{}",
        c.stdout
    );
    assert!(c.stdout.contains("(2 completed runs)"), "{}", c.stdout);
    assert!(c.stdout.contains("\nfileio "), "{}", c.stdout);
}

/// A target without a server takes only workloads without a database;
/// its options are checked like the campaign's.
#[test]
fn a_target_without_a_server_is_for_the_machine_only() {
    let p = Place::new();
    let top = "name = \"x\"\nduration = 5\nclients = [1]\n";
    rejected(
        &p,
        "m.toml",
        &format!("{top}[[target]]\nname = \"m\"\n[[workload]]\nname = \"oltp_read_only\"\n"),
        "target 'm' names no server (url or server), but workload 'oltp_read_only' needs a database",
    );
    rejected(
        &p,
        "o.toml",
        &format!(
            "{top}[[target]]\nname = \"m\"\noptions = {{ file-nope = 1 }}\n[[workload]]\nname = \"fileio\"\n"
        ),
        "target 'm': options: unknown option 'file-nope'",
    );
    rejected(
        &p,
        "s.toml",
        &format!(
            "{top}[[target]]\nname = \"m\"\nsettings = {{ a = 1 }}\n[[workload]]\nname = \"fileio\"\n"
        ),
        "settings, config and basedir are a managed server's",
    );
}

/// `repeats = "auto"`: a cell whose runs agree stops at `min_repeats`; a
/// cell whose runs alternate between two speeds runs `max_repeats` times.
/// Each says why it stopped.
#[test]
fn adaptive_repeats_stop_each_cell_for_its_own_reason() {
    let p = Place::new();
    let counter = p.scratch.path("flips");
    // Every event of the steady script sleeps 20 ms; the flipping
    // script's sleep is 1 ms in its odd runs and 20 ms in its even ones (a
    // counter file tells it which run it is). On a loaded machine sleeps
    // overshoot by a millisecond or so: the target is wide enough for that.
    let steady = p.write(
        "steady.lua",
        "local ffi = require(\"ffi\")\nffi.cdef[[int usleep(unsigned int);]]\nfunction event()\n  ffi.C.usleep(20000)\nend\n",
    );
    let flipping = p.write(
        "flipping.lua",
        &format!(
            r#"local ffi = require("ffi")
ffi.cdef[[int usleep(unsigned int);]]
local wait
function thread_init()
  local f = io.open("{c}", "r")
  local n = f and tonumber(f:read("*l")) or 0
  if f then f:close() end
  f = io.open("{c}", "w")
  f:write(tostring(n + 1))
  f:close()
  wait = (n % 2 == 0) and 1000 or 20000
end
function event()
  ffi.C.usleep(wait)
end
"#,
            c = counter.display()
        ),
    );
    let file = p.write(
        "auto.toml",
        &format!(
            r#"name = "auto"
store = "results.db"
duration = 1
clients = [1]
repeats = "auto"
ci_width = "40%"
max_repeats = 5

[[target]]
name = "m"
url = "sqlite:m.sqlite"

[[workload]]
name = "{steady}"

[[workload]]
name = "{flipping}"
"#
        ),
    );
    // The scripts need no table: an empty database file will do.
    p.write("m.sqlite", "");
    let r = p.run(&["campaign", "run", &file, "--dry-run"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains(
            "auto repeats (4 to 5, until the 95% CI of a cell's median tps is within 40%) = up to 10 runs"
        ),
        "{}",
        r.stdout
    );
    let r = p.run(&["campaign", "run", &file]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("9 stored, 0 failed"), "{}", r.stdout);
    let line = |script: &str| -> String {
        r.stdout
            .lines()
            .rev()
            .find(|l| l.trim_start().starts_with(&format!("{script}/m/1: ")))
            .unwrap_or_else(|| panic!("no line for {script}:\n{}", r.stdout))
            .to_string()
    };
    let s = line(&steady);
    assert!(
        s.contains("4 runs (4 completed)") && s.ends_with("(target 40%): settled"),
        "{s}"
    );
    let f = line(&flipping);
    assert!(
        f.contains("5 runs (5 completed)")
            && f.ends_with("(target 40%): stopped at max_repeats (5)"),
        "{f}"
    );
    let mut store = p.store();
    let runs = store.runs(&Filter::all()).expect("list runs");
    let repeats = |script: &str| -> Vec<u32> {
        runs.iter()
            .filter(|r| r.cell.as_deref() == Some(&format!("{script}/m/1")))
            .filter_map(|r| r.repeat)
            .collect()
    };
    assert_eq!(repeats(&steady), [1, 2, 3, 4]);
    assert_eq!(repeats(&flipping), [1, 2, 3, 4, 5]);

    // The store keeps why each cell stopped: a later report says it, in
    // its text and in the HTML page, and so does the campaign's listing.
    let store_path = p.scratch.path("results.db").to_string_lossy().into_owned();
    let html = p.scratch.path("auto.html").to_string_lossy().into_owned();
    let r = p.run(&[
        "report",
        "campaign:auto",
        "--store",
        &store_path,
        "--output",
        &html,
    ]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let said = |out: &str, script: &str, what: &str| {
        let l = out
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{script}/m/1: ")))
            .unwrap_or_else(|| panic!("no line for {script}:\n{out}"));
        assert!(l.contains(what), "{l}");
    };
    assert!(
        r.stdout
            .contains("campaign 'auto', adaptive repeats per cell:"),
        "{}",
        r.stdout
    );
    said(&r.stdout, &steady, "4 runs (4 completed), 95% CI width");
    said(&r.stdout, &steady, "(target 40%): settled");
    said(
        &r.stdout,
        &flipping,
        "(target 40%): stopped at max_repeats (5)",
    );
    let page = std::fs::read_to_string(&html).expect("the report");
    assert!(page.contains("Adaptive repeats"), "no section");
    let row = |script: &str| -> String {
        let at = page
            .find(&format!("<td class=\"label\">{script}/m/1</td>"))
            .unwrap_or_else(|| panic!("no row for {script}"));
        page[at..].lines().next().unwrap_or_default().to_string()
    };
    let sr = row(&steady);
    assert!(
        sr.contains("<td>4</td><td>4</td>")
            && sr.contains("<td>40%</td><td class=\"label\">settled</td>"),
        "{sr}"
    );
    let fr = row(&flipping);
    assert!(
        fr.contains("<td>5</td><td>5</td>")
            && fr.ends_with("<td class=\"label\">at max_repeats (5)</td></tr>"),
        "{fr}"
    );
    let r = p.run(&["results", "list", "campaign:auto", "--store", &store_path]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    said(&r.stdout, &steady, "(target 40%): settled");
    said(
        &r.stdout,
        &flipping,
        "(target 40%): stopped at max_repeats (5)",
    );

    // Resumed, a finished campaign has nothing left to run.
    let r = p.run(&["campaign", "run", &file, "--resume"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(p.store().runs(&Filter::all()).expect("list runs").len(), 9);
}
