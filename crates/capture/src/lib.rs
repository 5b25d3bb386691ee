//! `dbmeter capture`: turns a server's statement log on for every
//! statement (MySQL/MariaDB: the slow log with `long_query_time = 0`;
//! PostgreSQL: `log_min_duration_statement = 0`) for a while, collects what
//! the server logged in that window, puts the settings back as they were,
//! also when stopped early or when the connection is lost, and writes a
//! capture file: a header line ([`dbmeter_digest::capture`]) and the log's
//! bytes, which `dbmeter digest` (and replay) read.
//!
//! - [`capture`] runs one capture; the server's side is in `mysql.rs` and
//!   `postgres.rs` (what is read, checked, changed and restored, and how
//!   the log is collected: from this machine's file system or through
//!   SQL), the end marker and the cut in `sink.rs`.
//! - Nothing is changed before every check has passed (privileges, where
//!   the log is); a check that fails is one line ([`CaptureError::Refused`]).

mod mysql;
mod postgres;
mod sink;

use dbmeter_db::{ConnectOptions, Connection, DbError, ErrorKind, Target};
use dbmeter_digest::LogFormat;
use dbmeter_digest::capture::{CaptureHeader, Change};
use std::io::Write;
use std::time::{Duration, Instant, SystemTime};

/// How the log is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Collect {
    /// The file when this machine can read it, else through SQL.
    Auto,
    /// The server's log file, from this machine's file system.
    File,
    /// Through the server (PostgreSQL's pg_read_binary_file, MySQL's
    /// mysql.slow_log table).
    Sql,
}

impl Collect {
    pub fn parse(s: &str) -> Option<Collect> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Some(Collect::Auto),
            "file" => Some(Collect::File),
            "sql" => Some(Collect::Sql),
            _ => None,
        }
    }
}

/// What to capture.
#[derive(Debug, Clone)]
pub struct Options {
    pub connect: ConnectOptions,
    /// How long; None until stopped.
    pub duration: Option<Duration>,
    pub collect: Collect,
}

/// Why a capture did not happen or did not end well.
#[derive(Debug)]
pub enum CaptureError {
    /// Nothing was changed: a missing privilege, a log dbmeter cannot
    /// reach, a target without a query log, a server it cannot reach.
    Refused(String),
    /// Settings were changed and could not all be put back: the
    /// statements to run by hand.
    NotRestored { why: String, by_hand: Vec<String> },
    /// Anything else (the settings are as they were).
    Failed(String),
}

impl std::fmt::Display for CaptureError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CaptureError::Refused(m) | CaptureError::Failed(m) => f.write_str(m),
            CaptureError::NotRestored { why, by_hand } => write!(
                f,
                "{why}; the server's settings are NOT restored: run {}",
                by_hand.join(" ")
            ),
        }
    }
}

impl std::error::Error for CaptureError {}

/// How a capture went.
#[derive(Debug)]
pub struct Outcome {
    /// The header written at the top of the capture.
    pub header: CaptureHeader,
    /// Log bytes written after the header.
    pub bytes: u64,
    /// The window ended early: the connection was lost.
    pub lost: Option<String>,
    /// Settings that could not be put back: why, and what to run by hand.
    pub unrestored: Option<(String, Vec<String>)>,
    /// The window was ended by `stop`.
    pub stopped: bool,
}

/// Reconnect attempts after a lost connection, and the waits before them.
const RECONNECT_WAITS_MS: [u64; 5] = [200, 500, 1000, 2000, 4000];

/// How long the log is read for the end marker at most.
const MARKER_WAIT: Duration = Duration::from_secs(10);

/// A connection that comes back after it is lost (a few tries), running
/// its session's set-up statements again.
pub(crate) struct Link {
    pub conn: Connection,
    opts: ConnectOptions,
    /// Run on every new connection (errors ignored).
    pub setup: Vec<String>,
}

impl Link {
    fn connect(opts: &ConnectOptions) -> Result<Link, DbError> {
        Ok(Link {
            conn: Connection::connect(opts)?,
            opts: opts.clone(),
            setup: Vec::new(),
        })
    }

    /// `f` on the connection; after a lost connection, reconnects (a few
    /// tries) and runs `f` again.
    pub fn retry<T>(
        &mut self,
        mut f: impl FnMut(&mut Connection) -> Result<T, DbError>,
    ) -> Result<T, DbError> {
        let mut last = match f(&mut self.conn) {
            Err(e) if e.kind == ErrorKind::ConnectionLost => e,
            r => return r,
        };
        for ms in RECONNECT_WAITS_MS {
            std::thread::sleep(Duration::from_millis(ms));
            match Connection::connect(&self.opts) {
                Ok(c) => {
                    self.conn = c;
                    for s in &self.setup {
                        let _ = self.conn.execute(s);
                    }
                    match f(&mut self.conn) {
                        Err(e) if e.kind == ErrorKind::ConnectionLost => last = e,
                        r => return r,
                    }
                }
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    /// The rows of `sql`, values as text (no retry).
    pub fn rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, DbError> {
        Ok(self.conn.query_rows(sql)?.rows)
    }

    /// The first value of `sql`'s first row.
    pub fn value(&mut self, sql: &str) -> Result<Option<String>, DbError> {
        Ok(self
            .rows(sql)?
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next().flatten()))
    }
}

/// One server's side of a capture.
pub(crate) trait Server {
    /// `mariadb`, `mysql` or `postgres`, and the version.
    fn kind(&self) -> (&'static str, String);
    /// The log's format and PostgreSQL's prefix.
    fn format(&self) -> (LogFormat, Option<String>);
    /// `file` or `sql`, and the file (or table) read.
    fn source(&self) -> (&'static str, String);
    /// Checks everything and changes the settings; on an error nothing is
    /// left changed (or [`CaptureError::NotRestored`] says what is).
    fn start(&mut self) -> Result<(), CaptureError>;
    /// What was changed.
    fn changes(&self) -> Vec<Change>;
    /// Lines about how the change applies.
    fn notes(&self) -> Vec<String>;
    /// The statements that put the settings back.
    fn by_hand(&self) -> Vec<String>;
    /// Called about once a second in the window (follows rotations).
    fn tick(&mut self) -> Result<(), DbError>;
    /// Logs the end marker.
    fn mark_end(&mut self, marker: &str) -> Result<(), DbError>;
    /// Whether the marker is logged with the settings put back too
    /// (PostgreSQL's is a LOG message, not a statement).
    fn marks_after_restore(&self) -> bool {
        false
    }
    /// Puts the settings back (reconnecting when needed).
    fn restore(&mut self) -> Result<(), DbError>;
    /// Looks at the log before it is read (a rotation): notes for the
    /// header and the user.
    fn before_collect(&mut self) -> Vec<String>;
    /// Reads what was logged into `out`; returns the bytes written and
    /// whether the marker was seen.
    fn collect(
        &mut self,
        out: &mut dyn Write,
        marker: Option<&str>,
    ) -> Result<(u64, bool), CaptureError>;
}

fn now_text() -> String {
    humantime::format_rfc3339_seconds(SystemTime::now()).to_string()
}

/// A marker no statement of the workload has.
fn new_marker() -> String {
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("dbmeter-capture-end-{:x}-{nanos:x}", std::process::id())
}

/// Runs a capture: checks and changes the settings, waits for the
/// duration or until `stop` says so, puts the settings back, and writes
/// the capture (header, then log bytes) to `out`. `say` gets the lines a
/// user reads as it goes (what was changed, what applies, what was put
/// back).
pub fn capture(
    opts: &Options,
    out: &mut dyn Write,
    stop: &dyn Fn() -> bool,
    say: &mut dyn FnMut(&str),
) -> Result<Outcome, CaptureError> {
    let shown = opts.connect.target.to_string();
    let link = match &opts.connect.target {
        Target::Sqlite { .. } => {
            return Err(CaptureError::Refused(
                "SQLite has no query log to capture: `dbmeter capture` needs a MySQL/MariaDB \
                 or PostgreSQL server (--db=mysql://... or --db=postgres://...)"
                    .into(),
            ));
        }
        _ => Link::connect(&opts.connect)
            .map_err(|e| CaptureError::Refused(format!("cannot connect to {shown}: {e}")))?,
    };
    let local = dbmeter_db::is_local(&opts.connect.target);
    let mut server: Box<dyn Server> = match &opts.connect.target {
        Target::Postgres(_) => Box::new(postgres::Pg::new(link, opts.collect, local)),
        _ => Box::new(mysql::My::new(link, opts.collect, local)),
    };
    server.start()?;
    let started = now_text();
    let t0 = Instant::now();
    let (kind, version) = server.kind();
    let changes = server.changes();
    let (how, source) = server.source();
    let name = match kind {
        "mariadb" => "MariaDB",
        "mysql" => "MySQL",
        _ => "PostgreSQL",
    };
    let what = if version.contains(name) {
        version.clone()
    } else {
        format!("{name} {version}")
    };
    say(&format!("capture: {what} at {shown}"));
    let list = |f: &dyn Fn(&Change) -> String| changes.iter().map(f).collect::<Vec<_>>().join(", ");
    if changes.is_empty() {
        say("changed: nothing (every statement was already logged)");
    } else {
        say(&format!(
            "changed: {}",
            list(&|c| format!("{} {} -> {}", c.name, c.before, c.during))
        ));
    }
    for n in server.notes() {
        say(&format!("  {n}"));
    }
    if !changes.is_empty() {
        say(&format!(
            "  should dbmeter be killed before it puts them back, run: {}",
            server.by_hand().join(" ")
        ));
    }
    let reading = if how == "file" {
        format!("reading {source} on this machine")
    } else {
        format!("reading {source} through the server")
    };
    match opts.duration {
        Some(d) => say(&format!(
            "capturing for {} ({reading}); Ctrl-C ends it early",
            humantime::format_duration(d)
        )),
        None => say(&format!("capturing until Ctrl-C ({reading})")),
    }
    // The window.
    let mut lost = None;
    let mut stopped = false;
    let mut last_tick = Instant::now();
    loop {
        if stop() {
            stopped = true;
            break;
        }
        let left = opts.duration.map(|d| d.saturating_sub(t0.elapsed()));
        if left == Some(Duration::ZERO) {
            break;
        }
        std::thread::sleep(left.map_or(Duration::from_millis(100), |l| {
            l.min(Duration::from_millis(100))
        }));
        if last_tick.elapsed() >= Duration::from_secs(1) {
            last_tick = Instant::now();
            if let Err(e) = server.tick()
                && e.kind == ErrorKind::ConnectionLost
            {
                lost = Some(format!(
                    "the connection to the server was lost after {:.1} s ({e})",
                    t0.elapsed().as_secs_f64()
                ));
                break;
            }
        }
    }
    let ended = now_text();
    let marker = new_marker();
    let mut marked = lost.is_none() && server.mark_end(&marker).is_ok();
    let unrestored = match server.restore() {
        Ok(()) => {
            if !changes.is_empty() {
                say(&format!(
                    "restored: {}",
                    list(&|c| format!("{} {}", c.name, c.before))
                ));
            }
            None
        }
        Err(e) => Some((
            format!("cannot put the settings back: {e}"),
            server.by_hand(),
        )),
    };
    // After a lost connection, on the new one where that still works: the
    // log is then read until everything logged before it is there.
    if !marked && unrestored.is_none() && server.marks_after_restore() {
        marked = server.mark_end(&marker).is_ok();
    }
    let (format, log_line_prefix) = server.format();
    let mut header = CaptureHeader {
        server: kind.to_string(),
        version,
        format,
        log_line_prefix,
        target: shown,
        started,
        ended,
        collected: how.to_string(),
        source,
        changed: changes,
        restored: unrestored.is_none(),
        notes: Vec::new(),
    };
    if stopped {
        header.notes.push("ended early by a signal".into());
    }
    if let Some(l) = &lost {
        header.notes.push(l.clone());
    }
    if !marked {
        header
            .notes
            .push("the end marker could not be logged: the capture ends where the log did".into());
    }
    let notes = server.before_collect();
    for n in &notes {
        say(&format!("  {n}"));
    }
    header.notes.extend(notes);
    let write_err =
        |e: std::io::Error| CaptureError::Failed(format!("cannot write the capture: {e}"));
    out.write_all(header.line().as_bytes()).map_err(write_err)?;
    let collected = server.collect(out, marked.then_some(marker.as_str()));
    let (bytes, seen) = match collected {
        Ok(c) => c,
        Err(e) => {
            if let Some((why, by_hand)) = unrestored {
                return Err(CaptureError::NotRestored {
                    why: format!("{why}; and the log could not be collected: {e}"),
                    by_hand,
                });
            }
            return Err(e);
        }
    };
    if marked && !seen {
        say(&format!(
            "  the end marker did not appear in the log within {} s: the capture holds what was there",
            MARKER_WAIT.as_secs()
        ));
    }
    Ok(Outcome {
        header,
        bytes,
        lost,
        unrestored,
        stopped,
    })
}

/// Reads a file of this machine from `offset` into `sink`; when `wait`,
/// until the sink has seen its marker or `deadline`.
pub(crate) fn read_local(
    path: &std::path::Path,
    offset: u64,
    sink: &mut sink::Sink,
    wait: bool,
    deadline: Instant,
) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(path)?;
    f.seek(SeekFrom::Start(offset))?;
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = match f.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if n > 0 {
            sink.push(&buf[..n])?;
        }
        if sink.found {
            return Ok(());
        }
        if n == 0 {
            if !wait || Instant::now() >= deadline {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// `'text'` as an SQL string literal (quotes doubled; backslashes doubled
/// too for MySQL, whose strings take escapes).
pub(crate) fn quote(text: &str, backslashes: bool) -> String {
    let mut s = text.replace('\'', "''");
    if backslashes {
        s = s.replace('\\', "\\\\");
    }
    format!("'{s}'")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_and_markers() {
        assert_eq!(quote("it's", false), "'it''s'");
        assert_eq!(quote("a\\b'", true), "'a\\\\b'''");
        let a = new_marker();
        assert!(a.starts_with("dbmeter-capture-end-"));
        assert!(a.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'));
        assert_eq!(Collect::parse("SQL"), Some(Collect::Sql));
        assert_eq!(Collect::parse("x"), None);
    }
}
