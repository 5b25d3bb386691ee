//! Managed servers: servers that outlive the command that started them
//! (`dbmeter server start|stop|restart|status|list|snapshot`), remembered in
//! a home directory:
//!
//! ```text
//! HOME/servers/NAME/state.json   what we know of it (ServerState)
//! HOME/servers/NAME/server.log   everything it logged, across restarts
//! HOME/servers/NAME/data/        its data directory, unless --datadir
//! HOME/servers/NAME/run/ tmp/    socket and pid file; private tmpdir
//! HOME/snapshots/SNAP/data/      a copy of a cleanly stopped data directory
//! HOME/snapshots/SNAP/snapshot.json
//! ```
//!
//! HOME is `$DBMETER_HOME`, else `/var/lib/dbmeter` for root (the server
//! users must be able to reach it, and root's home is closed to them), else
//! `$XDG_DATA_HOME/dbmeter` or `~/.local/share/dbmeter`.
//!
//! A server is running when its recorded pid is alive *and* started at the
//! recorded time (so a reused pid is not mistaken for it); anything else is
//! reported as stopped, never as an error.

use std::fs;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::process::{self, ServiceUser};
use crate::{Flavor, Server, ServerError, ServerOptions};

/// The environment variable that moves the home directory.
pub const HOME_ENV: &str = "DBMETER_HOME";
const STATE_FILE: &str = "state.json";
const SNAPSHOT_FILE: &str = "snapshot.json";

/// What is remembered of a managed server, as written to `state.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ServerState {
    pub name: String,
    /// "mariadb" or "postgres".
    pub flavor: String,
    /// The server process (PostgreSQL's postmaster) when last started.
    pub pid: u32,
    /// Its start time in clock ticks since boot: with `pid`, names it.
    pub start_ticks: u64,
    pub port: u16,
    pub socket: PathBuf,
    /// A ready-to-use `--db` URL.
    pub url: String,
    pub version: String,
    pub datadir: PathBuf,
    /// Whether dbmeter made (or filled) the data directory: `--remove`
    /// deletes it only then.
    pub datadir_created: bool,
    pub log: PathBuf,
    /// Our copy of the user's my.cnf or postgresql.conf.
    pub config_file: Option<PathBuf>,
    pub basedir: Option<PathBuf>,
    /// `--set` settings, in order.
    pub settings: Vec<(String, String)>,
    /// CPUs the server is bound to (`None`: not bound).
    pub server_cpus: Option<Vec<usize>>,
    /// The snapshot its data directory was copied from.
    pub from_snapshot: Option<String>,
    /// Unix time of the last start.
    pub started_at: u64,
    /// Unix time of the last stop we saw or did.
    pub stopped_at: Option<u64>,
    /// Whether that stop was a clean shutdown.
    pub clean_stop: bool,
}

impl ServerState {
    pub fn flavor(&self) -> Option<Flavor> {
        Flavor::parse(&self.flavor)
    }

    /// Whether the recorded process is alive (a reused pid does not count).
    pub fn is_running(&self) -> bool {
        process::start_ticks(self.pid) == Some(self.start_ticks)
    }

    /// Seconds since the last start, if running.
    pub fn uptime(&self) -> Option<u64> {
        self.is_running()
            .then(|| now().saturating_sub(self.started_at))
    }
}

/// What is remembered of a snapshot.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SnapshotInfo {
    pub name: String,
    pub flavor: String,
    pub version: String,
    /// The server it was taken from.
    pub server: String,
    pub created_at: u64,
    /// The copy of the data directory.
    #[serde(skip_deserializing)]
    pub datadir: PathBuf,
}

/// What `start` needs to know.
#[derive(Clone, Debug)]
pub struct StartRequest {
    pub flavor: Flavor,
    /// `None`: the flavor's name ("mariadb", "postgres").
    pub name: Option<String>,
    pub basedir: Option<PathBuf>,
    /// `None`: HOME/servers/NAME/data.
    pub datadir: Option<PathBuf>,
    pub port: Option<u16>,
    pub settings: Vec<(String, String)>,
    pub config_file: Option<PathBuf>,
    pub cpus: Option<Vec<usize>>,
    /// A snapshot name, or a directory: a snapshot's or a data directory.
    pub from_snapshot: Option<String>,
}

impl StartRequest {
    pub fn new(flavor: Flavor) -> StartRequest {
        StartRequest {
            flavor,
            name: None,
            basedir: None,
            datadir: None,
            port: None,
            settings: Vec::new(),
            config_file: None,
            cpus: None,
            from_snapshot: None,
        }
    }
}

/// How a `stop` went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stopped {
    /// It was not running (or its process was already gone).
    NotRunning,
    /// It shut down cleanly after the stop signal.
    Clean,
    /// It did not shut down in time and was killed.
    Killed,
}

/// The directory where managed servers and snapshots are remembered.
#[derive(Clone, Debug)]
pub struct Home {
    root: PathBuf,
}

impl Home {
    /// `$DBMETER_HOME`, or the default for this user (see the module doc).
    pub fn from_env() -> Result<Home, ServerError> {
        if let Some(dir) = std::env::var_os(HOME_ENV).filter(|d| !d.is_empty()) {
            return Ok(Home::at(dir));
        }
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            return Ok(Home::at("/var/lib/dbmeter"));
        }
        if let Some(dir) = std::env::var_os("XDG_DATA_HOME").filter(|d| !d.is_empty()) {
            return Ok(Home::at(PathBuf::from(dir).join("dbmeter")));
        }
        match std::env::var_os("HOME").filter(|d| !d.is_empty()) {
            Some(home) => Ok(Home::at(PathBuf::from(home).join(".local/share/dbmeter"))),
            None => Err(ServerError::Failed(format!(
                "no home directory for managed servers: set {HOME_ENV}"
            ))),
        }
    }

    pub fn at(root: impl Into<PathBuf>) -> Home {
        Home { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn server_dir(&self, name: &str) -> PathBuf {
        self.root.join("servers").join(name)
    }

    fn snapshot_dir(&self, name: &str) -> PathBuf {
        self.root.join("snapshots").join(name)
    }

    /// The known servers, by name.
    pub fn list(&self) -> Result<Vec<ServerState>, ServerError> {
        let mut names = dir_names(&self.root.join("servers"));
        names.retain(|n| self.server_dir(n).join(STATE_FILE).is_file());
        names.iter().map(|n| self.load(n)).collect()
    }

    /// The snapshots, by name.
    pub fn snapshots(&self) -> Vec<SnapshotInfo> {
        dir_names(&self.root.join("snapshots"))
            .iter()
            .filter_map(|n| read_snapshot_info(&self.snapshot_dir(n)))
            .collect()
    }

    /// The state of server `name`; an error if there is none.
    pub fn load(&self, name: &str) -> Result<ServerState, ServerError> {
        check_name(name, "server")?;
        let path = self.server_dir(name).join(STATE_FILE);
        let text = match fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ServerError::Failed(format!(
                    "no server named '{name}' (`dbmeter server list` shows them)"
                )));
            }
            Err(e) => {
                return Err(ServerError::io(format!("cannot read {}", path.display()))(
                    e,
                ));
            }
        };
        serde_json::from_str(&text)
            .map_err(|e| ServerError::Failed(format!("{} is damaged: {e}", path.display())))
    }

    fn save(&self, state: &ServerState) -> Result<(), ServerError> {
        let path = self.server_dir(&state.name).join(STATE_FILE);
        let text = serde_json::to_string_pretty(state)
            .map_err(|e| ServerError::Failed(format!("cannot encode the server state: {e}")))?;
        write_atomically(&path, &text)
    }

    /// Starts a new server and remembers it. On failure, what it made is
    /// removed again, except its log.
    pub fn start(&self, req: &StartRequest) -> Result<ServerState, ServerError> {
        let name = req
            .name
            .clone()
            .unwrap_or_else(|| req.flavor.name().to_string());
        check_name(&name, "server")?;
        if let Ok(old) = self.load(&name) {
            return Err(if old.is_running() {
                ServerError::Failed(format!(
                    "a server named '{name}' is already running (pid {}, {}); give another --name",
                    old.pid, old.url
                ))
            } else {
                ServerError::Failed(format!(
                    "a stopped server named '{name}' exists: `dbmeter server restart {name}` \
                     starts it again, `dbmeter server stop {name} --remove` forgets it"
                ))
            });
        }
        let engine = req.flavor.engine();
        // Missing binaries are the commonest failure: say so before making files.
        engine.locate(req.basedir.as_deref()).map_err(|why| {
            ServerError::Unavailable(format!("{} is not available: {why}", req.flavor))
        })?;
        let user = process::service_user(engine.service_user())?;
        let snapshot = match &req.from_snapshot {
            Some(s) => Some(self.find_snapshot(s, req.flavor)?),
            None => None,
        };

        let dir = self.server_dir(&name);
        make_dirs(&dir)?;
        let mut made = Made {
            dir: dir.clone(),
            datadir: None,
            keep: false,
        };
        let config_file = match &req.config_file {
            Some(src) => {
                let copy = dir.join(match req.flavor {
                    Flavor::MariaDb => "my.cnf",
                    Flavor::Postgres => "postgresql.conf",
                });
                fs::copy(src, &copy).map_err(ServerError::io(format!(
                    "cannot read the config file {}",
                    src.display()
                )))?;
                process::give(&copy, 0o644, None)?;
                Some(copy)
            }
            None => None,
        };
        let datadir = match &req.datadir {
            Some(d) => std::path::absolute(d)
                .map_err(ServerError::io(format!("bad datadir {}", d.display())))?,
            None => dir.join("data"),
        };
        let existed = datadir.exists();
        if let Some((snap_name, _)) = &snapshot
            && !is_empty_dir(&datadir)
        {
            return Err(ServerError::Failed(format!(
                "--datadir {} is not empty; --from-snapshot {snap_name} needs a new or empty directory",
                datadir.display()
            )));
        }
        // Only what we create is ours to delete (on failure, or --remove).
        if !existed {
            made.datadir = Some(datadir.clone());
        }
        if let Some((_, src)) = &snapshot {
            copy_datadir(src, &datadir, user.as_ref())?;
        }

        let opts = ServerOptions {
            basedir: req.basedir.clone(),
            datadir: Some(datadir.clone()),
            port: req.port,
            settings: req.settings.clone(),
            config_file: config_file.clone(),
            cpus: req.cpus.clone(),
            workdir: Some(dir.clone()),
            detached: true,
            ..ServerOptions::new(req.flavor)
        };
        let server = Server::start(&opts).map_err(|e| with_log(e, &dir.join("server.log")))?;
        let state = ServerState {
            name: name.clone(),
            flavor: req.flavor.name().to_string(),
            pid: server.pid(),
            start_ticks: process::start_ticks(server.pid()).unwrap_or_default(),
            port: server.port(),
            socket: server.socket(),
            url: server.url(),
            version: server.version(),
            datadir,
            datadir_created: made.datadir.is_some(),
            log: server.log_path(),
            config_file,
            basedir: req.basedir.clone(),
            settings: req.settings.clone(),
            server_cpus: req.cpus.clone(),
            from_snapshot: snapshot.map(|(n, _)| n),
            started_at: now(),
            stopped_at: None,
            clean_stop: false,
        };
        if let Err(e) = self.save(&state) {
            let _ = stop_process(req.flavor, state.pid, state.start_ticks, STOP_TIMEOUT);
            return Err(e);
        }
        made.keep = true;
        Ok(state)
    }

    /// Stops server `name` (stop signal, then SIGKILL after `timeout`).
    pub fn stop(&self, name: &str, timeout: Duration) -> Result<Stopped, ServerError> {
        let mut state = self.load(name)?;
        let flavor = flavor_of(&state)?;
        let running = state.is_running();
        let outcome = stop_process(flavor, state.pid, state.start_ticks, timeout)?;
        if running || state.stopped_at.is_none() {
            state.stopped_at = Some(now());
            state.clean_stop = outcome == Stopped::Clean;
            self.save(&state)?;
        }
        Ok(outcome)
    }

    /// Forgets a stopped server: deletes its directory and the data
    /// directory if dbmeter made it.
    pub fn remove(&self, name: &str) -> Result<(), ServerError> {
        let state = self.load(name)?;
        if state.is_running() {
            return Err(ServerError::Failed(format!(
                "server '{name}' is running (pid {}); stop it first",
                state.pid
            )));
        }
        if state.datadir_created {
            remove_dir(&state.datadir)?;
        }
        remove_dir(&self.server_dir(name))
    }

    /// Starts a stopped server again: same data directory, port, settings,
    /// config file and CPUs.
    pub fn relaunch(&self, name: &str) -> Result<ServerState, ServerError> {
        let mut state = self.load(name)?;
        let flavor = flavor_of(&state)?;
        if state.is_running() {
            return Err(ServerError::Failed(format!(
                "server '{name}' is already running (pid {})",
                state.pid
            )));
        }
        if is_empty_dir(&state.datadir) {
            return Err(ServerError::Failed(format!(
                "the data directory {} of server '{name}' is gone or empty",
                state.datadir.display()
            )));
        }
        let dir = self.server_dir(name);
        if flavor == Flavor::Postgres {
            remove_stale_lock(&state.datadir.join("postmaster.pid"));
            let mut socket_lock = state.socket.clone().into_os_string();
            socket_lock.push(".lock");
            remove_stale_lock(Path::new(&socket_lock));
        }
        let opts = ServerOptions {
            basedir: state.basedir.clone(),
            datadir: Some(state.datadir.clone()),
            port: Some(state.port),
            settings: state.settings.clone(),
            config_file: state.config_file.clone(),
            cpus: state.server_cpus.clone(),
            workdir: Some(dir.clone()),
            detached: true,
            ..ServerOptions::new(flavor)
        };
        let server = Server::start(&opts).map_err(|e| with_log(e, &dir.join("server.log")))?;
        state.pid = server.pid();
        state.start_ticks = process::start_ticks(server.pid()).unwrap_or_default();
        state.version = server.version();
        state.socket = server.socket();
        state.url = server.url();
        state.started_at = now();
        state.stopped_at = None;
        state.clean_stop = false;
        self.save(&state)?;
        Ok(state)
    }

    /// Copies the data directory of stopped server `name` to snapshot `as_`
    /// (default: the server's name). The server must have been stopped
    /// cleanly, so that the copy needs no crash recovery.
    pub fn snapshot(
        &self,
        name: &str,
        as_: Option<&str>,
        replace: bool,
    ) -> Result<SnapshotInfo, ServerError> {
        let state = self.load(name)?;
        if state.is_running() {
            return Err(ServerError::Failed(format!(
                "server '{name}' is running; stop it first (`dbmeter server stop {name}`) \
                 so that the snapshot is a cleanly shut down data directory"
            )));
        }
        if !state.clean_stop {
            return Err(ServerError::Failed(format!(
                "server '{name}' was not stopped cleanly (killed or crashed); \
                 `dbmeter server restart {name}` and `dbmeter server stop {name}` first"
            )));
        }
        let snap = as_.unwrap_or(name).to_string();
        check_name(&snap, "snapshot")?;
        let dest = self.snapshot_dir(&snap);
        if dest.exists() && !replace {
            return Err(ServerError::Failed(format!(
                "a snapshot named '{snap}' exists; choose another with --as, or add --replace"
            )));
        }
        make_dirs(&self.root.join("snapshots"))?;
        let partial = self.root.join("snapshots").join(format!(".{snap}.partial"));
        remove_dir(&partial)?;
        make_dirs(&partial)?;
        let result = (|| {
            copy_datadir(&state.datadir, &partial.join("data"), None)?;
            let info = SnapshotInfo {
                name: snap.clone(),
                flavor: state.flavor.clone(),
                version: state.version.clone(),
                server: name.to_string(),
                created_at: now(),
                datadir: dest.join("data"),
            };
            let text = serde_json::to_string_pretty(&info)
                .map_err(|e| ServerError::Failed(format!("cannot encode the snapshot: {e}")))?;
            write_atomically(&partial.join(SNAPSHOT_FILE), &text)?;
            remove_dir(&dest)?;
            fs::rename(&partial, &dest).map_err(ServerError::io(format!(
                "cannot rename {} to {}",
                partial.display(),
                dest.display()
            )))?;
            Ok(info)
        })();
        if result.is_err() {
            let _ = remove_dir(&partial);
        }
        result
    }

    /// Deletes snapshot `name`.
    pub fn remove_snapshot(&self, name: &str) -> Result<(), ServerError> {
        check_name(name, "snapshot")?;
        let dir = self.snapshot_dir(name);
        if !dir.join(SNAPSHOT_FILE).is_file() {
            return Err(ServerError::Failed(format!(
                "no snapshot named '{name}' (`dbmeter server list` shows them)"
            )));
        }
        remove_dir(&dir)
    }

    /// The data directory to copy for `--from-snapshot what`: a snapshot
    /// name, a snapshot directory, or a data directory.
    fn find_snapshot(&self, what: &str, flavor: Flavor) -> Result<(String, PathBuf), ServerError> {
        let (dir, label) = if what.contains('/') || what == "." || what == ".." {
            let d = std::path::absolute(what)
                .map_err(ServerError::io(format!("bad snapshot path {what}")))?;
            (d, what.to_string())
        } else {
            check_name(what, "snapshot")?;
            (self.snapshot_dir(what), what.to_string())
        };
        if !dir.is_dir() {
            return Err(ServerError::Failed(if what.contains('/') {
                format!("--from-snapshot {what}: no such directory")
            } else {
                format!("no snapshot named '{what}' (`dbmeter server list` shows them)")
            }));
        }
        let data = if dir.join(SNAPSHOT_FILE).is_file() {
            dir.join("data")
        } else {
            dir
        };
        let found = if data.join("PG_VERSION").is_file() {
            Some(Flavor::Postgres)
        } else if data.join("mysql").is_dir() || data.join("ibdata1").is_file() {
            Some(Flavor::MariaDb)
        } else {
            None
        };
        match found {
            Some(f) if f == flavor => Ok((label, data)),
            Some(f) => Err(ServerError::Failed(format!(
                "snapshot {what} holds a {f} data directory, not {flavor}"
            ))),
            None => Err(ServerError::Failed(format!(
                "{} does not look like a {flavor} data directory",
                data.display()
            ))),
        }
    }
}

/// How long a clean shutdown may take before SIGKILL, by default.
pub const STOP_TIMEOUT: Duration = Duration::from_secs(30);

/// Stops the server process `pid` that started at `start_ticks` (not
/// necessarily our child): its flavor's stop signal, then SIGKILL to its
/// process group after `timeout`.
pub fn stop_process(
    flavor: Flavor,
    pid: u32,
    start_ticks: u64,
    timeout: Duration,
) -> Result<Stopped, ServerError> {
    if process::start_ticks(pid) != Some(start_ticks) {
        return Ok(Stopped::NotRunning);
    }
    // SAFETY: kill has no memory-safety preconditions.
    if unsafe { libc::kill(pid as libc::pid_t, flavor.engine().stop_signal()) } != 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::ESRCH) {
            return Ok(Stopped::NotRunning);
        }
        return Err(ServerError::Failed(format!(
            "cannot signal {flavor} server (pid {pid}): {e}"
        )));
    }
    let deadline = Instant::now() + timeout;
    while process::start_ticks(pid) == Some(start_ticks) {
        if Instant::now() >= deadline {
            process::kill_group(pid, Duration::from_secs(5));
            return Ok(Stopped::Killed);
        }
        thread::sleep(Duration::from_millis(20));
    }
    Ok(Stopped::Clean)
}

/// A killed postmaster leaves its lock files behind (postmaster.pid, and
/// `.s.PGSQL.PORT.lock` beside the socket). PostgreSQL ignores them when
/// their pid is gone, but not when that pid is a zombie that no one reaps
/// (a detached server's parent is PID 1, which in some containers never
/// reaps), and then refuses to start. Remove one whose process is dead.
fn remove_stale_lock(file: &Path) {
    let Ok(text) = fs::read_to_string(file) else {
        return;
    };
    let pid = text
        .lines()
        .next()
        .and_then(|l| l.trim().parse::<u32>().ok());
    if pid.is_some_and(|p| process::start_ticks(p).is_none()) {
        let _ = fs::remove_file(file);
    }
}

/// What a failed start made, removed on drop unless kept (the log stays).
struct Made {
    dir: PathBuf,
    datadir: Option<PathBuf>,
    keep: bool,
}

impl Drop for Made {
    fn drop(&mut self) {
        if self.keep {
            return;
        }
        if let Some(d) = &self.datadir {
            let _ = fs::remove_dir_all(d);
        }
        for sub in ["run", "tmp", "my.cnf", "postgresql.conf", STATE_FILE] {
            let p = self.dir.join(sub);
            let _ = if p.is_dir() {
                fs::remove_dir_all(&p)
            } else {
                fs::remove_file(&p)
            };
        }
        // Nothing logged (say, the port was taken): nothing worth keeping.
        if process::log_len(&self.dir.join("server.log")) == 0 {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}

/// A start error that quoted the log also says where the whole log is.
fn with_log(e: ServerError, log: &Path) -> ServerError {
    match e {
        ServerError::Failed(m) => ServerError::Failed(format!("{m} (log: {})", log.display())),
        other => other,
    }
}

fn flavor_of(state: &ServerState) -> Result<Flavor, ServerError> {
    state.flavor().ok_or_else(|| {
        ServerError::Failed(format!(
            "server '{}' has an unknown flavor '{}'",
            state.name, state.flavor
        ))
    })
}

/// Names of servers and snapshots become directory names: keep them plain.
fn check_name(name: &str, what: &str) -> Result<(), ServerError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && !name.starts_with(['.', '-'])
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if ok {
        Ok(())
    } else {
        Err(ServerError::Failed(format!(
            "bad {what} name '{name}': use up to 64 letters, digits, '_', '-' and '.'"
        )))
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn dir_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.path().is_dir())
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| !n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn read_snapshot_info(dir: &Path) -> Option<SnapshotInfo> {
    let text = fs::read_to_string(dir.join(SNAPSHOT_FILE)).ok()?;
    let mut info: SnapshotInfo = serde_json::from_str(&text).ok()?;
    info.datadir = dir.join("data");
    Some(info)
}

fn is_empty_dir(dir: &Path) -> bool {
    fs::read_dir(dir).map_or(true, |mut entries| entries.next().is_none())
}

/// Creates `dir` and its missing parents with mode 0755, so that the
/// server users can reach what is inside.
fn make_dirs(dir: &Path) -> Result<(), ServerError> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o755)
        .create(dir)
        .map_err(ServerError::io(format!("cannot create {}", dir.display())))
}

fn remove_dir(dir: &Path) -> Result<(), ServerError> {
    match fs::remove_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(ServerError::io(format!("cannot remove {}", dir.display()))(
            e,
        )),
    }
}

fn write_atomically(path: &Path, text: &str) -> Result<(), ServerError> {
    let tmp = path.with_extension("json.tmp");
    fs::write(&tmp, text).map_err(ServerError::io(format!("cannot write {}", tmp.display())))?;
    fs::rename(&tmp, path).map_err(ServerError::io(format!("cannot write {}", path.display())))
}

/// Copies data directory `src` to `dest` (which may exist, empty):
/// `cp -a --reflink=auto` (a cheap clone where the file system can, and
/// owners, modes and sparse files kept); then hands it to `user` if given,
/// with mode 0700 on top, as PostgreSQL requires.
fn copy_datadir(src: &Path, dest: &Path, user: Option<&ServiceUser>) -> Result<(), ServerError> {
    make_dirs(dest)?;
    let mut from = src.as_os_str().to_owned();
    from.push("/.");
    let out = Command::new("cp")
        .arg("-a")
        .arg("--reflink=auto")
        .arg(&from)
        .arg(dest)
        .output()
        .map_err(ServerError::io("cannot run cp"))?;
    if !out.status.success() {
        return Err(ServerError::Failed(format!(
            "cannot copy {} to {}: {}",
            src.display(),
            dest.display(),
            process::tail(&String::from_utf8_lossy(&out.stderr), 2)
        )));
    }
    if let Some(u) = user {
        chown_tree(dest, u)?;
    }
    fs::set_permissions(dest, fs::Permissions::from_mode(0o700))
        .map_err(ServerError::io(format!("cannot chmod {}", dest.display())))
}

fn chown_tree(path: &Path, user: &ServiceUser) -> Result<(), ServerError> {
    std::os::unix::fs::lchown(path, Some(user.uid), Some(user.gid)).map_err(ServerError::io(
        format!("cannot chown {} to {}", path.display(), user.name),
    ))?;
    let meta = fs::symlink_metadata(path)
        .map_err(ServerError::io(format!("cannot read {}", path.display())))?;
    if meta.is_dir() {
        let entries = fs::read_dir(path)
            .map_err(ServerError::io(format!("cannot read {}", path.display())))?;
        for entry in entries {
            let entry =
                entry.map_err(ServerError::io(format!("cannot read {}", path.display())))?;
            chown_tree(&entry.path(), user)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_plain() {
        for good in ["mariadb", "pg-15", "a.b_c"] {
            assert!(check_name(good, "server").is_ok(), "{good}");
        }
        for bad in ["", ".x", "-x", "a/b", "a b", &"x".repeat(65)] {
            assert!(check_name(bad, "server").is_err(), "{bad}");
        }
    }

    #[test]
    fn an_unknown_server_is_one_clear_line() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::at(dir.path());
        let e = home.load("nope").unwrap_err().to_string();
        assert!(e.contains("no server named 'nope'"), "{e}");
        assert!(home.list().unwrap().is_empty());
    }

    #[test]
    fn a_dead_pid_is_not_running() {
        let state = ServerState {
            name: "x".into(),
            flavor: "mariadb".into(),
            pid: std::process::id(),
            start_ticks: 1, // not when this process started
            port: 1,
            socket: PathBuf::new(),
            url: String::new(),
            version: String::new(),
            datadir: PathBuf::new(),
            datadir_created: false,
            log: PathBuf::new(),
            config_file: None,
            basedir: None,
            settings: Vec::new(),
            server_cpus: None,
            from_snapshot: None,
            started_at: 0,
            stopped_at: None,
            clean_stop: false,
        };
        assert!(!state.is_running());
        let me = ServerState {
            start_ticks: process::start_ticks(std::process::id()).unwrap(),
            ..state
        };
        assert!(me.is_running());
    }
}
