//! Helpers for end-to-end tests: run the real binary in a scratch directory
//! and look at what it printed and wrote.

pub mod browser;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub struct Scratch {
    pub dir: tempfile::TempDir,
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    fn from(o: Output) -> Run {
        Run {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }

    /// The number after `label` in the text report (e.g. "read:").
    pub fn stat(&self, label: &str) -> u64 {
        self.stdout
            .lines()
            .find(|l| l.trim_start().starts_with(label))
            .and_then(|l| l.trim_start()[label.len()..].split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no '{label}' in:\n{}", self.stdout))
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\n{}",
                self.stdout, self.stderr
            )
        })
    }
}

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_dbmeter")
}

impl Scratch {
    pub fn new() -> Scratch {
        Scratch {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(bin());
        c.args(args).current_dir(self.dir.path());
        c
    }

    /// Starts dbmeter with `args` in the background, its output piped.
    pub fn spawn(&self, args: &[&str]) -> std::process::Child {
        self.cmd(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("start dbmeter")
    }

    /// Runs a command built with [`Scratch::cmd`] (e.g. with more
    /// environment) and collects its output.
    pub fn output(&self, mut c: Command) -> Run {
        Run::from(c.output().expect("run dbmeter"))
    }

    /// Runs dbmeter with `args` in the scratch directory.
    pub fn run(&self, args: &[&str]) -> Run {
        Run::from(self.cmd(args).output().expect("run dbmeter"))
    }

    /// Runs dbmeter with a dbmeter home of its own in the scratch directory
    /// (managed servers, the default results store), no $DBMETER_STORE and
    /// no terminal on standard input.
    pub fn run_home(&self, args: &[&str]) -> Run {
        Run::from(
            self.cmd(args)
                .env("DBMETER_HOME", self.path("home"))
                .env_remove("DBMETER_STORE")
                .stdin(std::process::Stdio::null())
                .output()
                .expect("run dbmeter"),
        )
    }

    /// [`Scratch::run_home`], insisting on exit code 0 and no panic.
    pub fn ok_home(&self, args: &[&str]) -> Run {
        let r = self.run_home(args);
        assert_eq!(r.code, 0, "dbmeter {args:?}:\n{}\n{}", r.stdout, r.stderr);
        assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
        r
    }

    /// Runs dbmeter with `input` on its standard input.
    pub fn run_stdin(&self, args: &[&str], input: &str) -> Run {
        use std::io::Write;
        let mut child = self
            .cmd(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("start dbmeter");
        if let Some(mut stdin) = child.stdin.take() {
            stdin.write_all(input.as_bytes()).expect("write stdin");
        }
        Run::from(child.wait_with_output().expect("run dbmeter"))
    }

    /// Runs and insists on exit code 0.
    pub fn ok(&self, args: &[&str]) -> Run {
        let r = self.run(args);
        assert_eq!(
            r.code, 0,
            "dbmeter {args:?} failed:\n{}\n{}",
            r.stdout, r.stderr
        );
        r
    }

    pub fn db(&self, file: &str) -> rusqlite::Connection {
        rusqlite::Connection::open(self.path(file)).expect("open sqlite")
    }
}

pub fn count(conn: &rusqlite::Connection, sql: &str) -> i64 {
    conn.query_row(sql, [], |r| r.get(0)).expect(sql)
}

pub fn tables(conn: &rusqlite::Connection) -> Vec<String> {
    let mut st = conn
        .prepare("SELECT name FROM sqlite_schema WHERE type='table' ORDER BY name")
        .unwrap();
    st.query_map([], |r| r.get(0))
        .unwrap()
        .map(|r| r.unwrap())
        .collect()
}

pub fn exists(p: &Path) -> bool {
    p.exists()
}

/// The rows of a CSV table with a header and no quoted fields (e.g.
/// `compare --format=csv`), each as column name to value.
pub fn csv_rows(csv: &str) -> Vec<std::collections::BTreeMap<String, String>> {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    lines
        .map(|l| {
            header
                .iter()
                .zip(l.split(','))
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}
