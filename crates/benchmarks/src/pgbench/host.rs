//! What a client needs from outside the database ([`Host`]): a clock,
//! sleeping (`\sleep`), a shell (`\shell`, `\setshell`), and somewhere for
//! `debug()` to write. [`SystemHost`] is the real one; tests give their
//! own clock so that nothing really sleeps.

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

pub trait Host {
    /// Monotonic time since some fixed point.
    fn now(&mut self) -> Duration;

    /// `\sleep`.
    fn sleep(&mut self, d: Duration);

    /// A line from `debug()` (pgbench writes it to stderr).
    fn debug(&mut self, line: &str) {
        eprintln!("{line}");
    }

    /// Runs `command` with `sh -c`. With `capture`, returns its standard
    /// output; without, its output goes to stderr and Ok("") is returned
    /// when it exits with status 0.
    fn shell(&mut self, command: &str, capture: bool) -> Result<String, String> {
        run_shell(command, capture)
    }

    /// True once the run is ending (pgbench's `-T` timer): a failed
    /// transaction is then not retried.
    fn stopping(&self) -> bool {
        false
    }
}

/// The real clock, sleeping (the thread, or the client's task of it), `sh`
/// and stderr.
#[derive(Debug)]
pub struct SystemHost {
    /// [`monotonic_ns`] when the host was made.
    start: u64,
}

impl SystemHost {
    pub fn new() -> SystemHost {
        SystemHost {
            start: monotonic_ns(),
        }
    }
}

/// CLOCK_MONOTONIC (the clock of `Instant`) in nanoseconds: read a few
/// times per transaction, without `Instant`'s checked arithmetic.
#[inline]
fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a live timespec; CLOCK_MONOTONIC is always there on
    // Linux, so the call cannot fail.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(ts.tv_nsec as u64)
}

impl Default for SystemHost {
    fn default() -> Self {
        SystemHost::new()
    }
}

impl Host for SystemHost {
    fn now(&mut self) -> Duration {
        Duration::from_nanos(monotonic_ns().saturating_sub(self.start))
    }

    /// In a thread's poll loop (`--jobs`): the other clients run meanwhile.
    fn sleep(&mut self, d: Duration) {
        dbmeter_coop::sleep(d);
    }
}

/// Environment variables that hold passwords: a shell command does not
/// inherit them.
fn is_secret_env(name: &str) -> bool {
    let up = name.to_ascii_uppercase();
    up.contains("PASSWORD")
        || up.contains("PASSWD")
        || up.ends_with("_PWD")
        || up == "PGPASSFILE"
        || up == "DBMETER_STORE"
}

/// Where `\shell` commands write: stderr unless
/// [`shell_output_to_stdout`] says stdout (pgbench's layout, where, as
/// under pgbench, the command shares the report's stdout).
static SHELL_TO_STDOUT: AtomicBool = AtomicBool::new(false);

/// Sends the output of `\shell` commands to stdout (`true`) or stderr.
pub fn shell_output_to_stdout(on: bool) {
    SHELL_TO_STDOUT.store(on, Ordering::Relaxed);
}

/// Runs `sh -c command` without the environment's secrets (see
/// [`Host::shell`]).
pub fn run_shell(command: &str, capture: bool) -> Result<String, String> {
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(command).stdin(Stdio::null());
    for (name, _) in std::env::vars_os() {
        if is_secret_env(&name.to_string_lossy()) {
            cmd.env_remove(&name);
        }
    }
    if capture {
        cmd.stdout(Stdio::piped());
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot run shell command \"{command}\": {e}"))?;
        let mut out = Vec::new();
        if let Some(mut stdout) = child.stdout.take() {
            stdout
                .read_to_end(&mut out)
                .map_err(|e| format!("cannot read the output of \"{command}\": {e}"))?;
        }
        child
            .wait()
            .map_err(|e| format!("cannot run shell command \"{command}\": {e}"))?;
        return Ok(String::from_utf8_lossy(&out).into_owned());
    }
    // pgbench's system() lets the command write to pgbench's stdout;
    // dbmeter's stdout is its report, so the command writes to stderr
    // unless in pgbench's layout.
    if SHELL_TO_STDOUT.load(Ordering::Relaxed) {
        use std::io::Write as _;
        let _ = std::io::stdout().flush();
        let status = cmd
            .status()
            .map_err(|e| format!("cannot run shell command \"{command}\": {e}"))?;
        if !status.success() {
            return Err(format!("shell command \"{command}\" failed ({status})"));
        }
        return Ok(String::new());
    }
    let stderr = std::io::stderr();
    let to_stderr = std::os::fd::AsFd::as_fd(&stderr)
        .try_clone_to_owned()
        .map(Stdio::from)
        .unwrap_or_else(|_| Stdio::null());
    let status = cmd
        .stdout(to_stderr)
        .status()
        .map_err(|e| format!("cannot run shell command \"{command}\": {e}"))?;
    if !status.success() {
        return Err(format!("shell command \"{command}\" failed ({status})"));
    }
    Ok(String::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_runs_and_captures() {
        assert_eq!(run_shell("echo 42", true), Ok("42\n".into()));
        assert_eq!(run_shell("true", false), Ok(String::new()));
        assert!(run_shell("exit 3", false).is_err_and(|e| e.contains("failed")));
    }

    #[test]
    fn secrets_are_not_passed_on() {
        assert!(is_secret_env("PGPASSWORD"));
        assert!(is_secret_env("MYSQL_PWD"));
        assert!(is_secret_env("my_db_password"));
        assert!(!is_secret_env("PGHOST"));
        assert!(!is_secret_env("PATH"));
    }
}
