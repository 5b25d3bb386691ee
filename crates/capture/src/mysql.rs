//! MySQL and MariaDB: the slow log with `long_query_time = 0`.
//!
//! The globals `slow_query_log`, `long_query_time` and `log_output` are
//! read, changed where they need to be, and put back as they were. A
//! GLOBAL `long_query_time` applies to connections opened after the
//! change; connections already open keep their own (the server copies it
//! into each session when it connects).
//!
//! The log is read from the slow log file on this machine (from the byte
//! where it ended when the capture started) or, with `log_output` holding
//! `TABLE`, from `mysql.slow_log` through SQL, written back in the slow
//! log's own format.

use crate::sink::{self, Sink};
use crate::{CaptureError, Collect, Link, MARKER_WAIT, Server, quote, read_local};
use dbmeter_db::DbError;
use dbmeter_digest::LogFormat;
use dbmeter_digest::capture::Change;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Where the log is read.
enum Mode {
    /// The slow log file on this machine, from `offset`; `ino`: the
    /// file's inode then (None: there was no file yet).
    File {
        path: PathBuf,
        offset: u64,
        ino: Option<u64>,
    },
    /// `mysql.slow_log`, the rows from `since` (the server's NOW(6)).
    Table { since: String },
}

/// One global changed: its name, its value before as SQL and as shown,
/// and its value during the capture as SQL and as shown.
struct Set {
    name: &'static str,
    before_sql: String,
    before: String,
    during_sql: String,
    during: String,
}

pub(crate) struct My {
    link: Link,
    collect: Collect,
    local: bool,
    mariadb: bool,
    version: String,
    user: String,
    mode: Mode,
    sets: Vec<Set>,
    notes: Vec<String>,
    /// MariaDB's default log_slow_filter, when the server's is another.
    default_filter: Option<String>,
}

/// MySQL's errors for a missing privilege: specific (1227), database
/// (1044) and table (1142) access denied.
fn denied(e: &DbError) -> bool {
    matches!(e.code.as_str(), "1227" | "1044" | "1142")
}

fn on_off(v: &str) -> String {
    match v {
        "1" => "ON".into(),
        "0" => "OFF".into(),
        other => other.to_string(),
    }
}

/// Seconds of a TIME(6) value (`00:00:01.500000`, hours past 24 too).
fn time_seconds(t: &str) -> f64 {
    let (neg, t) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t),
    };
    let mut secs = 0.0;
    for part in t.split(':') {
        secs = secs * 60.0 + part.trim().parse::<f64>().unwrap_or(0.0);
    }
    if neg { -secs } else { secs }
}

impl My {
    pub fn new(link: Link, collect: Collect, local: bool) -> My {
        let version = link.conn.server_version();
        My {
            mariadb: version.to_ascii_lowercase().contains("mariadb"),
            link,
            collect,
            local,
            version,
            user: String::new(),
            mode: Mode::Table {
                since: String::new(),
            },
            sets: Vec::new(),
            notes: Vec::new(),
            default_filter: None,
        }
    }

    fn refused_privilege(&self, what: &str, e: &DbError) -> CaptureError {
        CaptureError::Refused(format!(
            "{} may not {what}; nothing was changed (server: {e})",
            self.user
        ))
    }
}

impl Server for My {
    fn kind(&self) -> (&'static str, String) {
        (
            if self.mariadb { "mariadb" } else { "mysql" },
            self.version.clone(),
        )
    }

    fn format(&self) -> (LogFormat, Option<String>) {
        (LogFormat::MysqlSlow, None)
    }

    fn source(&self) -> (&'static str, String) {
        match &self.mode {
            Mode::File { path, .. } => ("file", path.display().to_string()),
            Mode::Table { .. } => ("sql", "mysql.slow_log".into()),
        }
    }

    fn start(&mut self) -> Result<(), CaptureError> {
        let cannot =
            |e: DbError| CaptureError::Refused(format!("cannot read the slow log's settings: {e}"));
        let row = self
            .link
            .rows(
                "SELECT @@global.slow_query_log, @@global.long_query_time, @@global.log_output, \
                 @@global.slow_query_log_file, @@datadir, @@global.min_examined_row_limit, \
                 NOW(6), CURRENT_USER()",
            )
            .map_err(cannot)?
            .into_iter()
            .next()
            .unwrap_or_default();
        let v = |i: usize| row.get(i).cloned().flatten().unwrap_or_default();
        let (slow, long, output, file, datadir, min_rows, now) =
            (v(0), v(1), v(2), v(3), v(4), v(5), v(6));
        self.user = match v(7).rsplit_once('@') {
            Some((u, h)) => format!("'{u}'@'{h}'"),
            None => format!("'{}'", v(7)),
        };
        // This session's own questions stay out of the log, even when the
        // server logged everything before (any user may set its session's).
        let quiet = "SET SESSION long_query_time = 31536000".to_string();
        if self.link.conn.execute(&quiet).is_ok() {
            self.link.setup.push(quiet);
        }
        if min_rows.parse::<u64>().is_ok_and(|n| n > 0) {
            self.notes.push(format!(
                "min_examined_row_limit is {min_rows}: statements that examine fewer rows are not logged"
            ));
        }
        if self.mariadb
            && let Ok(Some(rate)) = self.link.value("SELECT @@global.log_slow_rate_limit")
            && rate.parse::<u64>().is_ok_and(|n| n > 1)
        {
            self.notes.push(format!(
                "log_slow_rate_limit is {rate}: one session in {rate} is logged"
            ));
        }
        if self.mariadb
            && let Ok(rows) = self.link.rows(
                "SELECT GLOBAL_VALUE, DEFAULT_VALUE FROM information_schema.SYSTEM_VARIABLES \
                 WHERE VARIABLE_NAME = 'LOG_SLOW_FILTER'",
            )
            && let Some(r) = rows.first()
            && r.first() != r.get(1)
        {
            self.default_filter = r.get(1).cloned().flatten();
            self.notes.push(format!(
                "log_slow_filter is '{}': only statements of those kinds are logged (it is not changed)",
                r.first().cloned().flatten().unwrap_or_default()
            ));
        }
        // Where the log will be read.
        let path = {
            let p = PathBuf::from(&file);
            if p.is_absolute() {
                p
            } else {
                PathBuf::from(&datadir).join(p)
            }
        };
        let readable = std::fs::File::open(&path).is_ok();
        let can_file = self.local
            && (readable || (!path.exists() && path.parent().is_some_and(|d| d.is_dir())));
        let file_mode = match self.collect {
            Collect::File if !self.local => {
                return Err(CaptureError::Refused(
                    "--collect=file reads the slow log on this machine, but the server is on \
                     another host; --collect=sql reads it through the server (mysql.slow_log)"
                        .into(),
                ));
            }
            Collect::File if !can_file => {
                return Err(CaptureError::Refused(format!(
                    "cannot read the slow log {} on this machine; --collect=sql reads it \
                     through the server (mysql.slow_log)",
                    path.display()
                )));
            }
            Collect::File => true,
            Collect::Auto => can_file,
            Collect::Sql => false,
        };
        if file_mode {
            let meta = std::fs::metadata(&path).ok();
            self.mode = Mode::File {
                offset: meta.as_ref().map_or(0, |m| m.len()),
                ino: meta.as_ref().map(|m| m.ino()),
                path,
            };
        } else {
            if let Err(e) = self
                .link
                .rows("SELECT COUNT(*) FROM mysql.slow_log WHERE 1 = 0")
            {
                return Err(if denied(&e) {
                    self.refused_privilege(
                        "read the slow log through SQL: it needs SELECT on mysql.slow_log",
                        &e,
                    )
                } else {
                    CaptureError::Refused(format!("cannot read mysql.slow_log: {e}"))
                });
            }
            self.mode = Mode::Table { since: now };
        }
        // What to change.
        if long.parse::<f64>() != Ok(0.0) {
            self.sets.push(Set {
                name: "long_query_time",
                before_sql: if long.parse::<f64>().is_ok() {
                    long.clone()
                } else {
                    quote(&long, true)
                },
                before: long.clone(),
                during_sql: "0".into(),
                during: "0".into(),
            });
        }
        let want = if file_mode { "FILE" } else { "TABLE" };
        let parts: Vec<String> = output
            .split(',')
            .map(|p| p.trim().to_ascii_uppercase())
            .filter(|p| !p.is_empty())
            .collect();
        if !parts.iter().any(|p| p == want) {
            let during = if parts.is_empty() || parts.iter().any(|p| p == "NONE") {
                want.to_string()
            } else {
                format!("{},{want}", parts.join(","))
            };
            self.sets.push(Set {
                name: "log_output",
                before_sql: quote(&output, true),
                before: output.clone(),
                during_sql: quote(&during, true),
                during,
            });
        }
        if !matches!(slow.to_ascii_uppercase().as_str(), "1" | "ON") {
            self.sets.push(Set {
                name: "slow_query_log",
                before_sql: if slow.parse::<i64>().is_ok() {
                    slow.clone()
                } else {
                    quote(&slow, true)
                },
                before: on_off(&slow),
                during_sql: "1".into(),
                during: "ON".into(),
            });
        }
        // Change them in order; on a failure, put back what was changed.
        for i in 0..self.sets.len() {
            let s = &self.sets[i];
            let sql = format!("SET GLOBAL {} = {}", s.name, s.during_sql);
            if let Err(e) = self.link.conn.execute(&sql) {
                let name = s.name;
                let mut undo = Vec::new();
                for s in self.sets[..i].iter().rev() {
                    let sql = format!("SET GLOBAL {} = {}", s.name, s.before_sql);
                    if self.link.retry(|c| c.execute(&sql)).is_err() {
                        undo.push(format!("{sql};"));
                    }
                }
                if !undo.is_empty() {
                    return Err(CaptureError::NotRestored {
                        why: format!("cannot set {name}: {e}"),
                        by_hand: undo,
                    });
                }
                return Err(if denied(&e) {
                    self.refused_privilege(
                        "change the slow log's settings: SET GLOBAL needs SUPER \
                         (MariaDB, MySQL 5.7) or SYSTEM_VARIABLES_ADMIN (MySQL 8)",
                        &e,
                    )
                } else {
                    CaptureError::Failed(format!(
                        "cannot set {name}: {e}; nothing was left changed"
                    ))
                });
            }
        }
        // The server may have just made the file: it must be readable here.
        if let Mode::File { path, .. } = &self.mode
            && let Err(e) = std::fs::File::open(path)
        {
            let why = format!(
                "cannot read the slow log {} that the server writes: {e}; --collect=sql reads \
                 it through the server (mysql.slow_log)",
                path.display()
            );
            return Err(match self.restore() {
                Ok(()) => CaptureError::Refused(format!("{why}; nothing was left changed")),
                Err(_) => CaptureError::NotRestored {
                    why,
                    by_hand: self.by_hand(),
                },
            });
        }
        if self.sets.iter().any(|s| s.name == "long_query_time") {
            self.notes.push(
                "a GLOBAL long_query_time applies to connections opened from now on: \
                 connections already open keep their own"
                    .into(),
            );
        }
        Ok(())
    }

    fn changes(&self) -> Vec<Change> {
        self.sets
            .iter()
            .map(|s| Change {
                name: s.name.to_string(),
                before: s.before.clone(),
                during: s.during.clone(),
            })
            .collect()
    }

    fn notes(&self) -> Vec<String> {
        self.notes.clone()
    }

    fn by_hand(&self) -> Vec<String> {
        self.sets
            .iter()
            .rev()
            .map(|s| format!("SET GLOBAL {} = {};", s.name, s.before_sql))
            .collect()
    }

    fn tick(&mut self) -> Result<(), DbError> {
        // Not logged: this session's long_query_time is a year.
        self.link.rows("SELECT 1").map(|_| ())
    }

    fn mark_end(&mut self, marker: &str) -> Result<(), DbError> {
        // This session logs from now on, the marker first, whatever would
        // keep it out: MariaDB's slow_query_log, log_slow_rate_limit and
        // log_slow_filter are session variables too, copied at connect.
        let mut also = String::new();
        if self.mariadb {
            also.push_str("slow_query_log = 1, log_slow_rate_limit = 1, ");
            if let Some(f) = &self.default_filter {
                also.push_str(&format!("log_slow_filter = {}, ", quote(f, true)));
            }
        }
        self.link.conn.execute(&format!(
            "SET SESSION {also}min_examined_row_limit = 0, long_query_time = 0 /* {marker} */"
        ))?;
        self.link.rows(&format!("SELECT '{marker}'")).map(|_| ())
    }

    fn restore(&mut self) -> Result<(), DbError> {
        for s in self.sets.iter().rev() {
            let sql = format!("SET GLOBAL {} = {}", s.name, s.before_sql);
            self.link.retry(|c| c.execute(&sql))?;
        }
        Ok(())
    }

    fn before_collect(&mut self) -> Vec<String> {
        let Mode::File { path, offset, ino } = &mut self.mode else {
            return Vec::new();
        };
        let now = std::fs::metadata(&*path).ok();
        let size = now.as_ref().map_or(0, |m| m.len());
        let other = ino.is_some() && now.as_ref().map(|m| m.ino()) != *ino;
        if size < *offset || other {
            *offset = 0;
            return vec![format!(
                "{} was rotated or truncated during the capture: read from its start \
                 (what went to the old file is not here)",
                path.display()
            )];
        }
        Vec::new()
    }

    fn collect(
        &mut self,
        out: &mut dyn Write,
        marker: Option<&str>,
    ) -> Result<(u64, bool), CaptureError> {
        let deadline = Instant::now() + MARKER_WAIT;
        let write_err =
            |e: std::io::Error| CaptureError::Failed(format!("cannot write the capture: {e}"));
        match &self.mode {
            Mode::File { path, offset, .. } => {
                let offset = *offset;
                let mut sink = Sink::new(out, marker, sink::slow_event_start);
                read_local(path, offset, &mut sink, marker.is_some(), deadline).map_err(|e| {
                    CaptureError::Failed(format!(
                        "cannot read the slow log {}: {e}",
                        path.display()
                    ))
                })?;
                let found = sink.found;
                sink.finish().map_err(write_err)?;
                Ok((sink.written, found))
            }
            Mode::Table { since } => {
                let since = quote(since, true);
                if let Some(m) = marker {
                    let sql = format!(
                        "SELECT COUNT(*) FROM mysql.slow_log WHERE start_time >= {since} \
                         AND sql_text LIKE '%{m}%'"
                    );
                    loop {
                        let n = self.link.retry(|c| c.query_i64(&sql)).unwrap_or(None);
                        if n.unwrap_or(0) > 0 || Instant::now() >= deadline {
                            break;
                        }
                        std::thread::sleep(Duration::from_millis(100));
                    }
                }
                let affected = if self.mariadb { ", rows_affected" } else { "" };
                // The table's own order is the order the rows were logged.
                let sql = format!(
                    "SELECT UNIX_TIMESTAMP(start_time), user_host, query_time, lock_time, \
                     rows_sent, rows_examined, db, thread_id, sql_text{affected} \
                     FROM mysql.slow_log WHERE start_time >= {since}"
                );
                let rows = self.link.retry(|c| c.query_rows(&sql)).map_err(|e| {
                    CaptureError::Failed(format!("cannot read mysql.slow_log: {e}"))
                })?;
                let mut sink = Sink::new(out, None, sink::line_start);
                let mut found = false;
                for r in &rows.rows {
                    let v = |i: usize| r.get(i).cloned().flatten().unwrap_or_default();
                    let text = v(8);
                    if marker.is_some_and(|m| text.contains(m)) {
                        found = true;
                        break;
                    }
                    let ts = v(0);
                    let ts = ts.split('.').next().unwrap_or("0");
                    let mut ev = format!(
                        "# User@Host: {}\n# Thread_id: {}  Schema: {}\n\
                         # Query_time: {:.6}  Lock_time: {:.6}  Rows_sent: {}  Rows_examined: {}\n",
                        v(1),
                        v(7),
                        v(6),
                        time_seconds(&v(2)),
                        time_seconds(&v(3)),
                        v(4),
                        v(5),
                    );
                    if self.mariadb {
                        ev.push_str(&format!("# Rows_affected: {}\n", v(9)));
                    }
                    ev.push_str(&format!("SET timestamp={ts};\n{text}"));
                    if !text.trim_end().ends_with(';') {
                        ev.push(';');
                    }
                    ev.push('\n');
                    sink.push(ev.as_bytes()).map_err(write_err)?;
                }
                sink.finish().map_err(write_err)?;
                Ok((sink.written, found))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_and_switches() {
        assert_eq!(time_seconds("00:00:01.500000"), 1.5);
        assert_eq!(time_seconds("01:02:03"), 3723.0);
        assert_eq!(time_seconds("838:59:59.000000"), 3_020_399.0);
        assert_eq!(on_off("0"), "OFF");
        assert_eq!(on_off("1"), "ON");
    }
}
