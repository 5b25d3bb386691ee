//! Finding a local server's processes and reading their CPU time.

use crate::procfs::{self, read, read_line};

/// The process name (`/proc/PID/comm`).
pub fn comm(pid: u32) -> Option<String> {
    read_line(format!("/proc/{pid}/comm"))
}

pub fn parent(pid: u32) -> Option<u32> {
    read(format!("/proc/{pid}/stat"))
        .and_then(|t| procfs::proc_stat(&t))
        .map(|s| s.ppid)
}

/// The pid in the first line of a pid file (MySQL's pid_file, PostgreSQL's
/// postmaster.pid), if that process is alive.
pub fn pid_from_file(path: &str) -> Option<u32> {
    let pid: u32 = read_line(path)?.parse().ok()?;
    comm(pid).map(|_| pid)
}

/// The socket inodes listening on TCP `port` (IPv4 and IPv6).
fn listening_inodes(port: u16) -> Vec<u64> {
    let mut v = Vec::new();
    for f in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Some(text) = read(f) else { continue };
        for l in text.lines().skip(1) {
            let w: Vec<&str> = l.split_whitespace().collect();
            // sl local_address rem_address st ... uid timeout inode
            let (Some(local), Some(st), Some(inode)) = (w.get(1), w.get(3), w.get(9)) else {
                continue;
            };
            let p = local
                .rsplit_once(':')
                .and_then(|(_, p)| u16::from_str_radix(p, 16).ok());
            if p == Some(port)
                && *st == "0A"
                && let Ok(i) = inode.parse()
            {
                v.push(i);
            }
        }
    }
    v
}

fn pids() -> Vec<u32> {
    std::fs::read_dir("/proc")
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse().ok()))
                .collect()
        })
        .unwrap_or_default()
}

/// The process listening on local TCP `port` (needs permission to read
/// the other process's /proc/PID/fd: same user or root).
pub fn listener_pid(port: u16) -> Option<u32> {
    let inodes = listening_inodes(port);
    if inodes.is_empty() {
        return None;
    }
    let wanted: Vec<String> = inodes.iter().map(|i| format!("socket:[{i}]")).collect();
    for pid in pids() {
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            if let Ok(target) = std::fs::read_link(fd.path())
                && wanted.iter().any(|w| target.as_os_str() == w.as_str())
            {
                return Some(pid);
            }
        }
    }
    None
}

/// The direct children of `root`: from /proc/ROOT/task/*/children (a
/// single file for PostgreSQL's single-threaded postmaster) where the
/// kernel has them, else by scanning every process's parent in /proc.
pub fn children(root: u32) -> Vec<u32> {
    let mut found = Vec::new();
    let tasks = std::fs::read_dir(format!("/proc/{root}/task"))
        .map(|d| {
            d.flatten()
                .map(|e| e.path().join("children"))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    let mut complete = !tasks.is_empty();
    for t in tasks {
        match read(&t) {
            Some(list) => found.extend(
                list.split_whitespace()
                    .filter_map(|p| p.parse::<u32>().ok()),
            ),
            None => {
                // A thread that just ended, or no CONFIG_PROC_CHILDREN.
                if t.parent().is_some_and(|p| p.exists()) {
                    complete = false;
                    break;
                }
            }
        }
    }
    if complete {
        return found;
    }
    pids()
        .into_iter()
        .filter(|&pid| {
            pid != root
                && read(format!("/proc/{pid}/stat"))
                    .and_then(|t| procfs::proc_stat(&t))
                    .is_some_and(|s| s.ppid == root)
        })
        .collect()
}

/// CPU time (seconds) used by `root` and its direct children, including
/// children that already ended and were waited for (PostgreSQL backends
/// are children of the postmaster). None once `root` is gone.
pub fn tree_cpu_seconds(root: u32) -> Option<f64> {
    let own = procfs::proc_stat(&read(format!("/proc/{root}/stat"))?)?;
    let mut ticks = own.cpu_ticks + own.children_ticks;
    for pid in children(root) {
        if let Some(s) = read(format!("/proc/{pid}/stat")).and_then(|t| procfs::proc_stat(&t))
            && s.ppid == root
        {
            ticks += s.cpu_ticks;
        }
    }
    Some(ticks as f64 / procfs::ticks_per_second())
}

/// Resident memory of a process (`VmRSS`), in bytes.
pub fn rss_bytes(pid: u32) -> Option<u64> {
    let status = read(format!("/proc/{pid}/status"))?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// CPU time (seconds) of this process.
pub fn self_cpu_seconds() -> Option<f64> {
    let s = procfs::proc_stat(&read("/proc/self/stat")?)?;
    Some(s.cpu_ticks as f64 / procfs::ticks_per_second())
}

/// The CPUs a process may run on (`Cpus_allowed_list`).
pub fn cpus_allowed(pid: Option<u32>) -> Option<Vec<usize>> {
    let path = match pid {
        Some(p) => format!("/proc/{p}/status"),
        None => "/proc/self/status".to_string(),
    };
    let list = procfs::status_field(&read(path)?, "Cpus_allowed_list")?;
    let v = procfs::cpu_list(&list);
    (!v.is_empty()).then_some(v)
}

/// A hook command: `sh: COMMAND` (also a command without a prefix) or
/// `sql: STATEMENT`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookCommand<'a> {
    Shell(&'a str),
    Sql(&'a str),
}

impl<'a> HookCommand<'a> {
    pub fn parse(command: &'a str) -> HookCommand<'a> {
        match command.split_once(':') {
            Some((k, body)) if k.trim() == "sql" => HookCommand::Sql(body.trim()),
            Some((k, body)) if k.trim() == "sh" => HookCommand::Shell(body.trim()),
            _ => HookCommand::Shell(command.trim()),
        }
    }
}

/// Output kept of a shell command's run ([`shell`]).
pub const SHELL_KEEP_BYTES: usize = 64 * 1024;

/// What a shell command did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ShellRun {
    pub exit_code: Option<i32>,
    pub ok: bool,
    /// Standard output then standard error, cut to [`SHELL_KEEP_BYTES`];
    /// or why the shell could not run.
    pub output: String,
}

/// Runs `command` through `sh -c` with `env` added to the environment
/// (hooks: the caller keeps secrets out of it).
pub fn shell(command: &str, env: &[(&str, String)]) -> ShellRun {
    let mut c = std::process::Command::new("sh");
    c.arg("-c").arg(command);
    for (k, v) in env {
        c.env(k, v);
    }
    match c.output() {
        Ok(o) => {
            let mut text = String::from_utf8_lossy(&o.stdout).into_owned();
            text.push_str(&String::from_utf8_lossy(&o.stderr));
            if text.len() > SHELL_KEEP_BYTES {
                let mut cut = SHELL_KEEP_BYTES;
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                text.truncate(cut);
                text.push_str("\n[... cut]");
            }
            ShellRun {
                exit_code: o.status.code(),
                ok: o.status.success(),
                output: text,
            }
        }
        Err(e) => ShellRun {
            exit_code: None,
            ok: false,
            output: format!("cannot run sh: {e}"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_listener_and_reads_cpu() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = l.local_addr().map(|a| a.port()).unwrap_or(0);
        assert_eq!(listener_pid(port), Some(std::process::id()));
        let parent_pid = parent(std::process::id());
        assert!(parent_pid.is_some());
        // Burn a little CPU so that the counter moves.
        let t0 = self_cpu_seconds().unwrap_or(0.0);
        let mut x = 0u64;
        let start = std::time::Instant::now();
        while start.elapsed().as_millis() < 100 {
            x = x.wrapping_mul(31).wrapping_add(7);
        }
        std::hint::black_box(x);
        assert!(self_cpu_seconds().unwrap_or(0.0) >= t0);
        assert!(tree_cpu_seconds(std::process::id()).is_some());
        // A child of ours is found, by either way.
        if let Ok(mut child) = std::process::Command::new("sleep").arg("5").spawn() {
            let found = children(std::process::id()).contains(&child.id());
            let _ = child.kill();
            let _ = child.wait();
            assert!(found);
        }
        assert!(cpus_allowed(None).is_some());
        assert_eq!(tree_cpu_seconds(u32::MAX - 1), None);
    }

    #[test]
    fn hook_commands_and_the_shell() {
        assert_eq!(
            HookCommand::parse("sql: SELECT 1"),
            HookCommand::Sql("SELECT 1")
        );
        assert_eq!(
            HookCommand::parse(" sh : echo a"),
            HookCommand::Shell("echo a")
        );
        assert_eq!(
            HookCommand::parse("echo a:b"),
            HookCommand::Shell("echo a:b")
        );
        let r = shell("echo $X; exit 3", &[("X", "hi".into())]);
        assert_eq!(
            (r.exit_code, r.ok, r.output.as_str()),
            (Some(3), false, "hi\n")
        );
    }
}
