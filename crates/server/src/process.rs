//! The operating-system side: the unprivileged user servers run as, file
//! ownership, spawning servers so that they die with us, signals, waiting,
//! free ports and log tails.

use std::ffi::{CString, OsString};
use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom};
use std::net::TcpListener;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{OnceLock, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use crate::ServerError;
use crate::affinity::CpuSet;

/// The system user a server runs as when we are root (postgres and initdb
/// refuse to run as root, mariadbd would need `--user`).
#[derive(Clone, Debug)]
pub(crate) struct ServiceUser {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
}

/// `Some(user)` when we are root and must drop privileges, `None` when we
/// already are an ordinary user (then servers run as us).
pub(crate) fn service_user(name: &str) -> Result<Option<ServiceUser>, ServerError> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Ok(None);
    }
    lookup_user(name).map(Some).ok_or_else(|| {
        ServerError::Unavailable(format!(
            "running as root, and there is no system user `{name}` to run the server as \
             (it comes with the server's package)"
        ))
    })
}

fn lookup_user(name: &str) -> Option<ServiceUser> {
    let cname = CString::new(name).ok()?;
    // SAFETY: getpwnam_r fills `pwd` and `buf`, both ours and sized as
    // passed; `result` is null or points to `pwd`.
    unsafe {
        let mut pwd: libc::passwd = std::mem::zeroed();
        let mut buf = vec![0 as libc::c_char; 16 * 1024];
        let mut result: *mut libc::passwd = std::ptr::null_mut();
        let rc = libc::getpwnam_r(
            cname.as_ptr(),
            &mut pwd,
            buf.as_mut_ptr(),
            buf.len(),
            &mut result,
        );
        if rc != 0 || result.is_null() {
            return None;
        }
        Some(ServiceUser {
            name: name.to_string(),
            uid: pwd.pw_uid,
            gid: pwd.pw_gid,
        })
    }
}

/// Creates `dir` (and missing parents) with `mode`, owned by `user`.
pub(crate) fn make_dir(
    dir: &Path,
    mode: u32,
    user: Option<&ServiceUser>,
) -> Result<(), ServerError> {
    fs::create_dir_all(dir).map_err(ServerError::io(format!("cannot create {}", dir.display())))?;
    give(dir, mode, user)
}

/// Sets `mode` and hands `path` to `user`.
pub(crate) fn give(path: &Path, mode: u32, user: Option<&ServiceUser>) -> Result<(), ServerError> {
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
        .map_err(ServerError::io(format!("cannot chmod {}", path.display())))?;
    if let Some(u) = user {
        std::os::unix::fs::chown(path, Some(u.uid), Some(u.gid)).map_err(ServerError::io(
            format!("cannot chown {} to {}", path.display(), u.name),
        ))?;
    }
    Ok(())
}

/// Fails clearly when `user` cannot traverse every parent of `path` (we do
/// not loosen the modes of directories we did not create).
pub(crate) fn check_reachable(path: &Path, user: &ServiceUser) -> Result<(), ServerError> {
    for dir in path.ancestors().skip(1) {
        let Ok(meta) = fs::metadata(dir) else {
            continue;
        };
        let bit = if meta.uid() == user.uid {
            0o100
        } else if meta.gid() == user.gid {
            0o010
        } else {
            0o001
        };
        if meta.mode() & bit == 0 {
            return Err(ServerError::Failed(format!(
                "user {} cannot reach {}: {} has mode {:o} and owner uid {}; \
                 use a directory it can traverse (TMPDIR=/tmp, or chmod o+x)",
                user.name,
                path.display(),
                dir.display(),
                meta.mode() & 0o7777,
                meta.uid()
            )));
        }
    }
    Ok(())
}

/// A command for `program` with a clean environment (PATH, HOME, LC_ALL=C)
/// running as `user`, in `dir`, stdin closed.
pub(crate) fn command(program: &Path, user: Option<&ServiceUser>, dir: &Path) -> Command {
    let mut cmd = Command::new(program);
    cmd.env_clear()
        .env("PATH", search_path(program))
        .env("HOME", dir)
        .env("LC_ALL", "C")
        .current_dir(dir)
        .stdin(Stdio::null());
    if let Some(u) = user {
        // std also drops supplementary groups when it switches from root.
        cmd.uid(u.uid).gid(u.gid);
    }
    cmd
}

/// The program's directory, our PATH, then the usual system directories.
fn search_path(program: &Path) -> OsString {
    let mut dirs: Vec<PathBuf> = program
        .parent()
        .map(Path::to_path_buf)
        .into_iter()
        .collect();
    if let Some(path) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    for d in ["/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"] {
        dirs.push(PathBuf::from(d));
    }
    std::env::join_paths(dirs)
        .unwrap_or_else(|_| OsString::from("/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"))
}

/// Spawns a long-running server in its own process group, set to receive
/// SIGKILL when this process dies (so a killed test run leaves no servers
/// behind), bound to `cpus` if given. The parent-death signal belongs to the
/// *thread* that forks, so all servers are forked by one thread that lives
/// as long as the process.
pub(crate) fn spawn_server(mut cmd: Command, cpus: Option<&CpuSet>) -> io::Result<Child> {
    let parent = std::process::id();
    let cpus = cpus.cloned();
    cmd.process_group(0);
    // SAFETY: the closure only makes async-signal-safe calls (prctl,
    // getppid, sched_setaffinity) between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::getppid() as u32 != parent {
                return Err(io::Error::other("dbmeter exited while starting the server"));
            }
            if let Some(set) = &cpus {
                set.apply(0)?;
            }
            Ok(())
        });
    }
    let (reply, answer) = mpsc::channel();
    match spawner().send((cmd, reply)) {
        Ok(()) => answer
            .recv()
            .unwrap_or_else(|_| Err(io::Error::other("the server-spawning thread is gone"))),
        // No spawner thread: spawn here (the server then dies with this thread).
        Err(mpsc::SendError((mut cmd, _))) => cmd.spawn(),
    }
}

/// Spawns a server that outlives us: a session (and process group) of its
/// own, so that neither our exit nor a Ctrl-C in our terminal reaches it;
/// bound to `cpus` if given.
pub(crate) fn spawn_detached(mut cmd: Command, cpus: Option<&CpuSet>) -> io::Result<Child> {
    let cpus = cpus.cloned();
    // SAFETY: setsid and sched_setaffinity are async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setsid() < 0 {
                return Err(io::Error::last_os_error());
            }
            if let Some(set) = &cpus {
                set.apply(0)?;
            }
            Ok(())
        });
    }
    cmd.spawn()
}

type SpawnJob = (Command, mpsc::Sender<io::Result<Child>>);

fn spawner() -> &'static mpsc::Sender<SpawnJob> {
    static SPAWNER: OnceLock<mpsc::Sender<SpawnJob>> = OnceLock::new();
    SPAWNER.get_or_init(|| {
        let (jobs, queue) = mpsc::channel::<SpawnJob>();
        // If the thread cannot start, `queue` is dropped and sends fail.
        let _ = thread::Builder::new()
            .name("dbmeter-server-spawner".into())
            .spawn(move || {
                for (mut cmd, reply) in queue {
                    let _ = reply.send(cmd.spawn());
                }
            });
        jobs
    })
}

/// Waits for `child` at most `timeout`; `None` if it is still running.
pub(crate) fn wait_timeout(child: &mut Child, timeout: Duration) -> io::Result<Option<ExitStatus>> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if Instant::now() >= deadline {
            return Ok(None);
        }
        thread::sleep(Duration::from_millis(20));
    }
}

/// Sends `sig` to process `pid` (a child we have not reaped yet).
pub(crate) fn signal(pid: u32, sig: libc::c_int) {
    // SAFETY: kill has no memory-safety preconditions.
    unsafe {
        libc::kill(pid as libc::pid_t, sig);
    }
}

/// SIGKILLs the process group `pgid` (a server and, for PostgreSQL, its
/// backends), then waits up to `timeout` for all of them to be gone.
pub(crate) fn kill_group(pgid: u32, timeout: Duration) {
    // SAFETY: as above; a negative pid names a process group.
    unsafe {
        libc::kill(-(pgid as libc::pid_t), libc::SIGKILL);
    }
    let deadline = Instant::now() + timeout;
    while group_alive(pgid) && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(10));
    }
}

/// Whether a live (not zombie) process is in group `pgid`. Zombies do not
/// count: killed backends are reparented to PID 1, which on some machines
/// (containers, microVMs) never reaps them.
pub(crate) fn group_alive(pgid: u32) -> bool {
    let Ok(procs) = fs::read_dir("/proc") else {
        return false;
    };
    let pgid = pgid.to_string();
    procs.flatten().any(|entry| {
        let is_pid = entry
            .file_name()
            .to_str()
            .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()));
        is_pid
            && fs::read_to_string(entry.path().join("stat")).is_ok_and(|stat| {
                // "pid (comm) state ppid pgrp ..."; comm may hold spaces.
                let Some((_, rest)) = stat.rsplit_once(')') else {
                    return false;
                };
                let mut fields = rest.split_whitespace();
                let state = fields.next().unwrap_or("Z");
                let pgrp = fields.nth(1);
                state != "Z" && state != "X" && pgrp == Some(pgid.as_str())
            })
    })
}

/// The start time of process `pid` in clock ticks since boot (field 22 of
/// /proc/PID/stat), or None if there is no live (non-zombie) such process.
/// With the pid, it names a process even after the pid is reused.
pub(crate) fn start_ticks(pid: u32) -> Option<u64> {
    if pid == 0 {
        return None;
    }
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "pid (comm) state ppid ..."; comm may hold spaces and parentheses.
    let (_, rest) = stat.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let state = *fields.first()?;
    if state == "Z" || state == "X" {
        return None;
    }
    // rest starts at field 3 (state): field 22 is index 19.
    fields.get(19)?.parse().ok()
}

/// A TCP port on 127.0.0.1 that nothing listens on right now.
pub(crate) fn free_port() -> Result<u16, ServerError> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(ServerError::io("cannot find a free TCP port on 127.0.0.1"))
}

/// False when binding 127.0.0.1:`port` fails because it is taken.
pub(crate) fn port_is_free(port: u16) -> bool {
    match TcpListener::bind(("127.0.0.1", port)) {
        Ok(_) => true,
        Err(e) => e.kind() != io::ErrorKind::AddrInUse,
    }
}

/// Current length of the log, to read later only what comes after.
pub(crate) fn log_len(path: &Path) -> u64 {
    fs::metadata(path).map_or(0, |m| m.len())
}

/// The log from byte `from` on (all of it if it shrank).
pub(crate) fn log_since(path: &Path, from: u64) -> String {
    let mut text = Vec::new();
    if let Ok(mut f) = File::open(path) {
        let from = if from > log_len(path) { 0 } else { from };
        if f.seek(SeekFrom::Start(from)).is_ok() {
            let _ = f.read_to_end(&mut text);
        }
    }
    String::from_utf8_lossy(&text).into_owned()
}

/// The last `n` non-empty lines of `text`, trimmed, on one line; only the
/// error lines if there are any (init tools end with boilerplate).
pub(crate) fn tail(text: &str, n: usize) -> String {
    let all: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let errors: Vec<&str> = all.iter().copied().filter(|l| is_error(l)).collect();
    let lines = if errors.is_empty() { all } else { errors };
    if lines.is_empty() {
        return "(nothing logged)".to_string();
    }
    lines[lines.len().saturating_sub(n)..]
        .iter()
        .map(|l| l.chars().take(400).collect::<String>())
        .collect::<Vec<_>>()
        .join(" | ")
}

fn is_error(line: &str) -> bool {
    ["[ERROR]", "ERROR:", "FATAL:", "PANIC:", "error:"]
        .iter()
        .any(|m| line.contains(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_takes_last_non_empty_lines() {
        assert_eq!(tail("a\n\nb\n c \nd\n", 2), "c | d");
        assert_eq!(tail("", 5), "(nothing logged)");
        assert_eq!(tail("x", 5), "x");
        let install = "[Note] a\n[ERROR] unknown variable 'x=1'\n[ERROR] Aborting\nboilerplate\n";
        assert_eq!(
            tail(install, 5),
            "[ERROR] unknown variable 'x=1' | [ERROR] Aborting"
        );
    }

    #[test]
    fn a_bound_port_is_not_free() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        assert!(!port_is_free(port));
        drop(l);
        assert!(port_is_free(port));
    }

    #[test]
    fn this_process_group_is_alive() {
        // SAFETY: getpgrp has no preconditions.
        let pgid = unsafe { libc::getpgrp() } as u32;
        assert!(group_alive(pgid));
    }
}
