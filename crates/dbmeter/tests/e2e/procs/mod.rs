//! A dbmeter (or other) process started in the background whose output is
//! collected as it comes, so that a test can wait for a line, signal it,
//! and wait for its end with a bound. It runs in a process group of its
//! own, which is killed when the `Watched` is dropped: a failing test
//! leaves no campaign or run behind.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub struct Watched {
    child: Child,
    started: Instant,
    stdout: Arc<Mutex<String>>,
    stderr: Arc<Mutex<String>>,
    readers: Vec<JoinHandle<()>>,
    status: Option<ExitStatus>,
}

/// How a watched process ended.
pub struct Ended {
    /// The exit code; None when a signal ended it (or it had to be killed).
    pub code: Option<i32>,
    /// False when it had not ended within the bound and was killed.
    pub in_time: bool,
    /// From the start to its end (or to the kill).
    pub elapsed: Duration,
    pub stdout: String,
    pub stderr: String,
}

impl Ended {
    /// Both outputs, for assertion messages.
    pub fn output(&self) -> String {
        format!("--- stdout:\n{}\n--- stderr:\n{}", self.stdout, self.stderr)
    }
}

fn collect<R: Read + Send + 'static>(from: R, into: Arc<Mutex<String>>) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let mut r = BufReader::new(from);
        let mut line = Vec::new();
        loop {
            line.clear();
            match r.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => into
                    .lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&line)),
            }
        }
    })
}

impl Watched {
    /// Starts `cmd` with its output piped, no standard input, in a process
    /// group of its own.
    pub fn spawn(mut cmd: Command) -> Watched {
        use std::os::unix::process::CommandExt;
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let started = Instant::now();
        let mut child = cmd.spawn().expect("start the process");
        let stdout = Arc::new(Mutex::new(String::new()));
        let stderr = Arc::new(Mutex::new(String::new()));
        let readers = vec![
            collect(child.stdout.take().unwrap(), stdout.clone()),
            collect(child.stderr.take().unwrap(), stderr.clone()),
        ];
        Watched {
            child,
            started,
            stdout,
            stderr,
            readers,
            status: None,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn stdout(&self) -> String {
        self.stdout.lock().unwrap().clone()
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Whether it still runs.
    pub fn running(&mut self) -> bool {
        if self.status.is_none() {
            self.status = self.child.try_wait().expect("try_wait");
        }
        self.status.is_none()
    }

    /// Waits (at most `limit`) until a line of its standard output
    /// satisfies `pred`; false if it did not (or the process ended first).
    pub fn wait_for_line(&mut self, limit: Duration, pred: impl Fn(&str) -> bool) -> bool {
        let until = Instant::now() + limit;
        loop {
            if self.stdout().lines().any(&pred) {
                return true;
            }
            if !self.running() {
                // The readers may still be collecting the last lines.
                std::thread::sleep(Duration::from_millis(100));
                return self.stdout().lines().any(&pred);
            }
            if Instant::now() >= until {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends `sig` to the process (not to its group).
    pub fn signal(&self, sig: libc::c_int) {
        // SAFETY: signalling our own child, which has not been reaped yet
        // (the pid cannot have been reused).
        unsafe { libc::kill(self.child.id() as libc::pid_t, sig) };
    }

    /// Waits at most `limit` for the end; kills its group if it is not
    /// over by then (`in_time` is then false).
    pub fn finish(mut self, limit: Duration) -> Ended {
        let until = Instant::now() + limit;
        let mut in_time = true;
        let mut elapsed;
        loop {
            elapsed = self.started.elapsed();
            if !self.running() {
                break;
            }
            if Instant::now() >= until {
                in_time = false;
                self.kill_group();
                self.status = Some(self.child.wait().expect("wait"));
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        for r in self.readers.drain(..) {
            let _ = r.join();
        }
        Ended {
            code: self.status.and_then(|s| s.code()),
            in_time,
            elapsed,
            stdout: self.stdout(),
            stderr: self.stderr(),
        }
    }

    fn kill_group(&self) {
        // SAFETY: the group our child leads; it has not been reaped.
        unsafe { libc::kill(-(self.child.id() as libc::pid_t), libc::SIGKILL) };
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        if self.running() {
            self.kill_group();
            let _ = self.child.wait();
        } else if self.status.is_some() {
            // Its children may outlive it (a campaign's run, a hook).
            // SAFETY: the process group id is still ours to signal while no
            // other group has taken it; a stale group gets ESRCH.
            unsafe { libc::kill(-(self.child.id() as libc::pid_t), libc::SIGKILL) };
        }
    }
}

/// The ids of `root` and every process descended from it (from the ppid
/// in /proc/PID/stat), at this moment.
pub fn descendants(root: u32) -> Vec<u32> {
    let mut parent = std::collections::HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return vec![root];
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // "PID (comm) STATE PPID ...": comm may hold spaces and parentheses.
        let Some(after) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        if let Some(ppid) = after
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse::<u32>().ok())
        {
            parent.insert(pid, ppid);
        }
    }
    let mut out = vec![root];
    let mut grew = true;
    while grew {
        grew = false;
        for (&pid, &ppid) in &parent {
            if out.contains(&ppid) && !out.contains(&pid) {
                out.push(pid);
                grew = true;
            }
        }
    }
    out
}
