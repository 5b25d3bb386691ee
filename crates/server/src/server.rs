//! A server that we started: [`Server`] initializes its data directory,
//! starts it, waits until it accepts connections and sets it up; stops,
//! kills and restarts it; and, when dropped, stops it and removes its
//! files (unless detached).

use crate::binaries::Binaries;
use crate::engine::{Dirs, Engine};
use crate::process::{self, ServiceUser};
use crate::{Flavor, ServerError, ServerOptions, affinity};
use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// How long a data directory may take to initialize.
const INIT_TIMEOUT: Duration = Duration::from_secs(120);
/// How long a server may take to accept connections.
const READY_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a clean shutdown may take before we SIGKILL.
const STOP_TIMEOUT: Duration = Duration::from_secs(30);
/// Log lines quoted in errors.
const TAIL_LINES: usize = 5;

/// A running (or stopped, or killed) server that we started.
pub struct Server {
    engine: &'static dyn Engine,
    bins: Binaries,
    basedir: Option<PathBuf>,
    user: Option<ServiceUser>,
    settings: Vec<(String, String)>,
    config_file: Option<PathBuf>,
    cpus: Option<affinity::CpuSet>,
    detached: bool,
    datadir: PathBuf,
    rundir: PathBuf,
    tmpdir: PathBuf,
    log_path: PathBuf,
    port: u16,
    pid: u32,
    version: String,
    /// None once stopped or killed.
    child: Option<Child>,
    /// Our directory: socket, log, and the data unless a datadir was given.
    scratch: Option<tempfile::TempDir>,
}

impl Server {
    /// Initializes the data directory if it is empty, starts the server,
    /// waits until it accepts connections and creates database `test`.
    pub fn start(opts: &ServerOptions) -> Result<Server, ServerError> {
        let engine = opts.flavor.engine();
        let bins = engine.locate(opts.basedir.as_deref()).map_err(|why| {
            ServerError::Unavailable(format!("{} is not available: {why}", opts.flavor))
        })?;
        let user = process::service_user(engine.service_user())?;
        if let Some(port) = opts.port
            && !process::port_is_free(port)
        {
            return Err(ServerError::PortInUse(port));
        }

        let (scratch, workdir) = match &opts.workdir {
            Some(w) => {
                let w = std::path::absolute(w)
                    .map_err(ServerError::io(format!("bad directory {}", w.display())))?;
                fs::create_dir_all(&w)
                    .map_err(ServerError::io(format!("cannot create {}", w.display())))?;
                (None, w)
            }
            None => {
                let t = tempfile::Builder::new()
                    .prefix(&format!(
                        "dbmeter-{}-",
                        opts.flavor.to_string().to_lowercase()
                    ))
                    .tempdir_in(std::env::temp_dir())
                    .map_err(ServerError::io("cannot create a directory for the server"))?;
                let p = t.path().to_path_buf();
                (Some(t), p)
            }
        };
        process::give(&workdir, 0o755, None)?;
        let rundir = workdir.join("run");
        process::make_dir(&rundir, 0o755, user.as_ref())?;
        let tmpdir = workdir.join("tmp");
        process::make_dir(&tmpdir, 0o700, user.as_ref())?;
        let log_path = workdir.join("server.log");
        OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .map_err(ServerError::io(format!(
                "cannot create {}",
                log_path.display()
            )))?;
        process::give(&log_path, 0o644, user.as_ref())?;
        let config_file = match &opts.config_file {
            Some(c) => Some(
                std::path::absolute(c)
                    .map_err(ServerError::io(format!("bad config file {}", c.display())))?,
            ),
            None => None,
        };
        if let Some(c) = &config_file {
            File::open(c).map_err(ServerError::io(format!("cannot read {}", c.display())))?;
        }
        let cpus = match &opts.cpus {
            Some(list) => Some(affinity::CpuSet::new(list).map_err(ServerError::Failed)?),
            None => None,
        };

        let (datadir, fresh) = match &opts.datadir {
            None => (workdir.join("data"), true),
            Some(d) => {
                let d = std::path::absolute(d)
                    .map_err(ServerError::io(format!("bad datadir {}", d.display())))?;
                let fresh = fs::read_dir(&d).map_or(true, |mut entries| entries.next().is_none());
                (d, fresh)
            }
        };
        if fresh {
            // PostgreSQL wants 0700 (or 0750).
            process::make_dir(&datadir, 0o700, user.as_ref())?;
        }
        if let Some(u) = &user {
            process::check_reachable(&datadir, u)?;
            process::check_reachable(&rundir, u)?;
            if let Some(c) = &config_file {
                process::check_reachable(c, u)?;
            }
        }

        let mut server = Server {
            engine,
            bins,
            basedir: opts.basedir.clone(),
            user,
            settings: opts.settings.clone(),
            config_file,
            cpus,
            detached: opts.detached,
            datadir,
            rundir,
            tmpdir,
            log_path,
            port: 0,
            pid: 0,
            version: String::new(),
            child: None,
            scratch,
        };
        if fresh {
            server.init()?;
        }
        match opts.port {
            Some(port) => {
                server.port = port;
                server.launch()?;
            }
            // A free port can be taken between our look and the server's
            // bind: then try another.
            None => {
                let mut tries = 0;
                loop {
                    server.port = process::free_port()?;
                    match server.launch() {
                        Err(ServerError::PortInUse(_)) if tries < 5 => tries += 1,
                        result => break result?,
                    }
                }
            }
        }
        Ok(server)
    }

    /// How clients reach it, e.g. `mysql://root@127.0.0.1:PORT/test` or
    /// `postgres://postgres@127.0.0.1:PORT/test`.
    pub fn url(&self) -> String {
        self.engine.url(self.port)
    }

    /// The Unix socket file. (PostgreSQL clients want its directory,
    /// `socket().parent()`, as host.)
    pub fn socket(&self) -> PathBuf {
        self.engine.socket(&self.rundir, self.port)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The server process (the PostgreSQL postmaster): the current one, or
    /// the last one if stopped.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The version the server reports, e.g. "10.11.6-MariaDB-0+deb12u2" or
    /// "15.8 (Debian 15.8-0+deb12u1)".
    pub fn version(&self) -> String {
        self.version.clone()
    }

    pub fn flavor(&self) -> Flavor {
        self.engine.flavor()
    }

    pub fn datadir(&self) -> &Path {
        &self.datadir
    }

    /// Everything the server (and the init tool) wrote, across restarts.
    pub fn log_path(&self) -> PathBuf {
        self.log_path.clone()
    }

    /// Clean shutdown: SIGTERM for MariaDB, SIGINT ("fast") for PostgreSQL;
    /// after 30 s, SIGKILL and an error. Nothing to do if not running.
    pub fn stop(&mut self) -> Result<(), ServerError> {
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        if let Ok(Some(_)) = child.try_wait() {
            return Ok(()); // already gone; not ours to signal any more
        }
        process::signal(self.pid, self.engine.stop_signal());
        match process::wait_timeout(&mut child, STOP_TIMEOUT) {
            Ok(Some(_)) => Ok(()),
            Ok(None) | Err(_) => {
                process::kill_group(self.pid, Duration::from_secs(5));
                let _ = child.wait();
                Err(ServerError::Failed(format!(
                    "{} (pid {}) did not shut down within {} s, so it was killed",
                    self.engine.flavor(),
                    self.pid,
                    STOP_TIMEOUT.as_secs()
                )))
            }
        }
    }

    /// SIGKILL, as in a crash (for PostgreSQL, its backends too). The data
    /// directory is left as it is; `restart` recovers it.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            if let Ok(None) = child.try_wait() {
                process::kill_group(self.pid, Duration::from_secs(5));
            }
            let _ = child.wait();
        }
    }

    /// Stops the server (if running) and starts it again on the same port
    /// and data directory; returns when it accepts connections.
    pub fn restart(&mut self) -> Result<(), ServerError> {
        self.stop()?;
        self.launch()
    }

    /// Fills the empty data directory.
    fn init(&mut self) -> Result<(), ServerError> {
        let name = program_name(&self.bins.init);
        let from = process::log_len(&self.log_path);
        let mut cmd = process::command(&self.bins.init, self.user.as_ref(), &self.rundir);
        cmd.args(self.engine.init_args(&self.dirs(), &self.settings));
        let (out, err) = self.log_handles()?;
        cmd.stdout(out).stderr(err);
        let mut child = cmd.spawn().map_err(ServerError::io(format!(
            "cannot run {}",
            self.bins.init.display()
        )))?;
        let status = process::wait_timeout(&mut child, INIT_TIMEOUT)
            .map_err(ServerError::io(format!("cannot wait for {name}")))?;
        let log = || process::tail(&process::log_since(&self.log_path, from), TAIL_LINES);
        match status {
            Some(s) if s.success() => Ok(()),
            Some(s) => Err(ServerError::Failed(format!(
                "{name} failed ({s}); its output ends: {}",
                log()
            ))),
            None => {
                let _ = child.kill();
                let _ = child.wait();
                Err(ServerError::Failed(format!(
                    "{name} did not finish within {} s; its output ends: {}",
                    INIT_TIMEOUT.as_secs(),
                    log()
                )))
            }
        }
    }

    /// Starts the server on `self.port` and waits until it is ready.
    fn launch(&mut self) -> Result<(), ServerError> {
        let from = process::log_len(&self.log_path);
        // A socket left by a killed server would look like a ready one.
        let _ = fs::remove_file(self.socket());
        let mut cmd = process::command(&self.bins.server, self.user.as_ref(), &self.rundir);
        cmd.args(
            self.engine
                .server_args(&self.dirs(), self.port, &self.settings),
        );
        let (out, err) = self.log_handles()?;
        cmd.stdout(out).stderr(err);
        let spawned = if self.detached {
            process::spawn_detached(cmd, self.cpus.as_ref())
        } else {
            process::spawn_server(cmd, self.cpus.as_ref())
        };
        let child = spawned.map_err(ServerError::io(format!(
            "cannot run {}",
            self.bins.server.display()
        )))?;
        self.pid = child.id();
        self.child = Some(child);
        match self.wait_ready(from) {
            Ok(version) => {
                self.version = version;
                Ok(())
            }
            Err(e) => {
                self.kill();
                Err(e)
            }
        }
    }

    /// Polls until the server is ready and set up, or has exited, or time
    /// is up. Returns its version.
    fn wait_ready(&mut self, log_from: u64) -> Result<String, ServerError> {
        let flavor = self.engine.flavor();
        let started = Instant::now();
        let mut setup_deadline = None;
        let mut client_error = String::new();
        loop {
            let exited = match self.child.as_mut().map(Child::try_wait) {
                Some(Ok(None)) => None,
                Some(Ok(Some(status))) => Some(status.to_string()),
                Some(Err(e)) => Some(e.to_string()),
                None => Some("killed".to_string()),
            };
            if let Some(status) = exited {
                self.child = None;
                let log = process::log_since(&self.log_path, log_from);
                if log.contains("Address already in use") {
                    return Err(ServerError::PortInUse(self.port));
                }
                return Err(ServerError::Failed(format!(
                    "{flavor} server exited while starting ({status}); its log ends: {}",
                    process::tail(&log, TAIL_LINES)
                )));
            }
            if self.engine.is_ready(&self.dirs(), self.port, self.pid) {
                match self.setup() {
                    Ok(version) => return Ok(version),
                    Err(e) => client_error = e,
                }
                // Ready but the client fails: give it a little while only.
                let deadline =
                    *setup_deadline.get_or_insert_with(|| Instant::now() + Duration::from_secs(10));
                if Instant::now() >= deadline {
                    return Err(ServerError::Failed(format!(
                        "{flavor} server started, but {} could not set it up: {client_error}",
                        program_name(&self.bins.client)
                    )));
                }
            }
            if started.elapsed() >= READY_TIMEOUT {
                let also = if client_error.is_empty() {
                    String::new()
                } else {
                    format!(" (client: {client_error})")
                };
                return Err(ServerError::Failed(format!(
                    "{flavor} server did not accept connections within {} s{also}; its log ends: {}",
                    READY_TIMEOUT.as_secs(),
                    process::tail(&process::log_since(&self.log_path, log_from), TAIL_LINES)
                )));
            }
            thread::sleep(Duration::from_millis(25));
        }
    }

    /// Runs the client: create database `test` if missing, read the
    /// version. Errors are one line.
    fn setup(&self) -> Result<String, String> {
        let (args, script) = self.engine.setup(self.port);
        // The client needs no privileges: it runs as us.
        let mut cmd = process::command(&self.bins.client, None, &self.rundir);
        cmd.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
        if script.is_some() {
            cmd.stdin(Stdio::piped());
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", self.bins.client.display()))?;
        if let (Some(script), Some(mut stdin)) = (script, child.stdin.take()) {
            stdin
                .write_all(script.as_bytes())
                .map_err(|e| format!("cannot write to the client: {e}"))?;
        }
        let out = child
            .wait_with_output()
            .map_err(|e| format!("client: {e}"))?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let version = stdout.lines().map(str::trim).rfind(|l| !l.is_empty());
        match version {
            Some(v) if out.status.success() => Ok(v.to_string()),
            _ => Err(format!(
                "{} ({})",
                process::tail(&String::from_utf8_lossy(&out.stderr), 2),
                out.status
            )),
        }
    }

    fn dirs(&self) -> Dirs<'_> {
        Dirs {
            data: &self.datadir,
            run: &self.rundir,
            tmp: &self.tmpdir,
            basedir: self.basedir.as_deref(),
            config: self.config_file.as_deref(),
        }
    }

    /// Our log file, twice (stdout and stderr), appending.
    fn log_handles(&self) -> Result<(File, File), ServerError> {
        let open = || {
            OpenOptions::new()
                .append(true)
                .create(true)
                .open(&self.log_path)
        };
        let cannot = || ServerError::io(format!("cannot open {}", self.log_path.display()));
        Ok((open().map_err(cannot())?, open().map_err(cannot())?))
    }
}

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server")
            .field("flavor", &self.engine.flavor())
            .field("port", &self.port)
            .field("pid", &self.pid)
            .field("running", &self.child.is_some())
            .field("datadir", &self.datadir)
            .field("log", &self.log_path)
            .finish()
    }
}

impl Drop for Server {
    /// Stops the server and removes our directory (not a given datadir).
    /// If the thread is panicking (a failing test), the directory is kept
    /// for its log, and said so on stderr.
    fn drop(&mut self) {
        if self.detached {
            return; // it lives on; its files stay where the caller put them
        }
        let _ = self.stop();
        if thread::panicking()
            && let Some(dir) = self.scratch.take()
        {
            let kept = dir.keep();
            eprintln!(
                "dbmeter-server: kept {} of the {} server for inspection (log: {})",
                kept.display(),
                self.engine.flavor(),
                self.log_path.display()
            );
        }
    }
}

fn program_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn servers_can_be_shared_between_threads() {
        fn shareable<T: Send + Sync>() {}
        shareable::<Server>();
        shareable::<ServerError>();
    }

    #[test]
    fn a_missing_basedir_is_unavailable() {
        for flavor in [Flavor::MariaDb, Flavor::Postgres] {
            let opts = ServerOptions {
                basedir: Some(PathBuf::from("/nonexistent/dbmeter")),
                ..ServerOptions::new(flavor)
            };
            match Server::start(&opts) {
                Err(ServerError::Unavailable(why)) => {
                    assert!(why.contains("/nonexistent/dbmeter"), "{why}")
                }
                other => panic!("{other:?}"),
            }
        }
    }
}
