//! PostgreSQL: `log_min_duration_statement = 0` through `ALTER SYSTEM` and
//! `pg_reload_conf()`, put back as it was: the value `postgresql.auto.conf`
//! held, or no entry there at all (`ALTER SYSTEM RESET`).
//!
//! The setting reaches every session, those already open too, at their
//! next statement. The log is the file the logging collector writes
//! (`pg_current_logfile()`), in the first of stderr, csvlog and jsonlog
//! that `log_destination` names; it is read from where it ended when the
//! capture started, on this machine or through `pg_read_binary_file()`,
//! and the files the collector moves on to during the capture (rotation)
//! are read after it.

use crate::sink::{self, Sink};
use crate::{CaptureError, Collect, Link, MARKER_WAIT, Server, quote, read_local};
use dbmeter_db::DbError;
use dbmeter_digest::LogFormat;
use dbmeter_digest::capture::Change;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

const NAME: &str = "log_min_duration_statement";

/// Bytes asked for at once through pg_read_binary_file.
const SQL_CHUNK: u64 = 1 << 20;

pub(crate) struct Pg {
    link: Link,
    collect: Collect,
    local: bool,
    version: String,
    /// `stderr`, `csvlog` or `jsonlog`.
    dest: &'static str,
    prefix: String,
    datadir: Option<String>,
    file_mode: bool,
    /// The log files as the server names them, and where each is read from.
    files: Vec<(String, u64)>,
    /// The setting before, as shown.
    before: String,
    /// What postgresql.auto.conf held for it (None: no entry).
    auto_conf: Option<String>,
    changed: bool,
    notes: Vec<String>,
}

fn hex_decode(h: &str) -> Vec<u8> {
    let d = |c: u8| match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        b'A'..=b'F' => c - b'A' + 10,
        _ => 0,
    };
    h.as_bytes()
        .chunks_exact(2)
        .map(|p| (d(p[0]) << 4) | d(p[1]))
        .collect()
}

impl Pg {
    pub fn new(link: Link, collect: Collect, local: bool) -> Pg {
        Pg {
            link,
            collect,
            local,
            version: String::new(),
            dest: "stderr",
            prefix: String::new(),
            datadir: None,
            file_mode: false,
            files: Vec::new(),
            before: String::new(),
            auto_conf: None,
            changed: false,
            notes: Vec::new(),
        }
    }

    /// A yes/no question to the server (an error is a no).
    fn yes(&mut self, sql: &str) -> bool {
        matches!(self.link.value(sql), Ok(Some(v)) if v == "t")
    }

    /// The file on this machine for a log file the server names.
    fn local_path(&self, f: &str) -> Option<PathBuf> {
        let p = PathBuf::from(f);
        if p.is_absolute() {
            Some(p)
        } else {
            self.datadir.as_ref().map(|d| PathBuf::from(d).join(p))
        }
    }

    fn current_file(&mut self) -> Result<Option<String>, DbError> {
        let sql = format!("SELECT pg_current_logfile('{}')", self.dest);
        self.link.value(&sql)
    }

    fn restore_sql(&self) -> [String; 2] {
        [
            match &self.auto_conf {
                Some(v) => format!("ALTER SYSTEM SET {NAME} = {};", quote(v, false)),
                None => format!("ALTER SYSTEM RESET {NAME};"),
            },
            "SELECT pg_reload_conf();".into(),
        ]
    }

    /// Reads the server's file `f` from `offset` through SQL.
    fn read_sql(
        &mut self,
        f: &str,
        mut offset: u64,
        sink: &mut Sink,
        wait: bool,
        deadline: Instant,
    ) -> Result<(), CaptureError> {
        let write_err =
            |e: std::io::Error| CaptureError::Failed(format!("cannot write the capture: {e}"));
        let path = quote(f, false);
        loop {
            let sql = format!(
                "SELECT encode(pg_read_binary_file({path}, {offset}, {SQL_CHUNK}, true), 'hex')"
            );
            let hex = self
                .link
                .retry(|c| c.query_rows(&sql))
                .map_err(|e| CaptureError::Failed(format!("cannot read the log {f}: {e}")))?
                .rows
                .into_iter()
                .next()
                .and_then(|r| r.into_iter().next().flatten())
                .unwrap_or_default();
            let bytes = hex_decode(&hex);
            if !bytes.is_empty() {
                offset += bytes.len() as u64;
                sink.push(&bytes).map_err(write_err)?;
            }
            if sink.found {
                return Ok(());
            }
            if bytes.is_empty() {
                if !wait || Instant::now() >= deadline {
                    return Ok(());
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}

impl Server for Pg {
    fn kind(&self) -> (&'static str, String) {
        ("postgres", self.version.clone())
    }

    fn format(&self) -> (LogFormat, Option<String>) {
        match self.dest {
            "csvlog" => (LogFormat::PgCsv, None),
            "jsonlog" => (LogFormat::PgJson, None),
            _ => (LogFormat::PgStderr, Some(self.prefix.clone())),
        }
    }

    fn source(&self) -> (&'static str, String) {
        let f = self
            .files
            .first()
            .map(|(f, _)| f.clone())
            .unwrap_or_default();
        if self.file_mode {
            let shown = self.local_path(&f).map_or(f, |p| p.display().to_string());
            ("file", shown)
        } else {
            ("sql", f)
        }
    }

    fn start(&mut self) -> Result<(), CaptureError> {
        let cannot =
            |e: DbError| CaptureError::Refused(format!("cannot read the log's settings: {e}"));
        let row = self
            .link
            .rows(
                "SELECT current_setting('server_version'), current_user, \
                 current_setting('is_superuser'), current_setting('logging_collector'), \
                 current_setting('log_destination'), current_setting('log_line_prefix')",
            )
            .map_err(cannot)?
            .into_iter()
            .next()
            .unwrap_or_default();
        let v = |i: usize| row.get(i).cloned().flatten().unwrap_or_default();
        self.version = v(0);
        let user = v(1);
        let superuser = v(2) == "on";
        let collector = v(3);
        let destinations = v(4).to_ascii_lowercase();
        self.prefix = v(5);
        let settings = self
            .link
            .rows(&format!(
                "SELECT name, setting, coalesce(unit, ''), source, sourcefile FROM pg_settings \
                 WHERE name IN ('{NAME}', 'data_directory')"
            ))
            .map_err(cannot)?;
        let mut lmds = None;
        for r in settings {
            let g = |i: usize| r.get(i).cloned().flatten();
            match g(0).as_deref() {
                Some("data_directory") => self.datadir = g(1),
                Some(NAME) => {
                    lmds = Some((
                        g(1).unwrap_or_default(),
                        g(2).unwrap_or_default(),
                        g(3).unwrap_or_default(),
                        g(4),
                    ))
                }
                _ => {}
            }
        }
        let Some((setting, unit, source, sourcefile)) = lmds else {
            return Err(CaptureError::Refused(format!(
                "the server shows no {NAME} in pg_settings"
            )));
        };
        // What the user may do.
        let mut missing = Vec::new();
        if !superuser {
            if !self.yes(&format!(
                "SELECT has_parameter_privilege('{NAME}', 'ALTER SYSTEM')"
            )) {
                missing.push(format!("ALTER SYSTEM on {NAME}"));
            }
            if !self.yes("SELECT has_function_privilege('pg_reload_conf()', 'EXECUTE')") {
                missing.push("EXECUTE on pg_reload_conf()".to_string());
            }
            if !self.yes("SELECT has_function_privilege('pg_current_logfile(text)', 'EXECUTE')") {
                missing.push("EXECUTE on pg_current_logfile(text) (or pg_monitor)".to_string());
            }
            if sourcefile.is_none()
                && source == "configuration file"
                && !self.yes("SELECT has_table_privilege('pg_file_settings', 'SELECT')")
            {
                missing
                    .push("pg_read_all_settings (to know what postgresql.auto.conf holds)".into());
            }
        }
        if !missing.is_empty() {
            return Err(CaptureError::Refused(format!(
                "'{user}' may not turn on PostgreSQL's statement log: it needs superuser, or {}; \
                 nothing was changed",
                missing.join(", ")
            )));
        }
        // Where the log is and how it is read.
        if collector != "on" {
            return Err(CaptureError::Refused(
                "logging_collector is off: PostgreSQL writes its log to its standard error, \
                 which dbmeter cannot read; turn it on (ALTER SYSTEM SET logging_collector = on, \
                 then restart the server) and capture again; nothing was changed"
                    .into(),
            ));
        }
        let dests: Vec<&str> = destinations.split(',').map(str::trim).collect();
        self.dest = match ["stderr", "csvlog", "jsonlog"]
            .into_iter()
            .find(|d| dests.contains(d))
        {
            Some(d) => d,
            None => {
                return Err(CaptureError::Refused(format!(
                    "log_destination is '{destinations}': dbmeter reads the stderr, csvlog or \
                     jsonlog file; add one (ALTER SYSTEM SET log_destination = \
                     '{destinations},stderr'; SELECT pg_reload_conf();) and capture again; \
                     nothing was changed"
                )));
            }
        };
        if source == "command line" && setting != "0" {
            return Err(CaptureError::Refused(format!(
                "{NAME} is set on the server's command line (-c): ALTER SYSTEM cannot override \
                 it; nothing was changed"
            )));
        }
        if matches!(source.as_str(), "database" | "user" | "database user") {
            self.notes.push(format!(
                "{NAME} is set for this {source} (ALTER ROLE/DATABASE ... SET): such sessions keep that value"
            ));
        }
        let Some(file) = self.current_file().map_err(|e| {
            CaptureError::Refused(format!(
                "cannot ask for the log file (pg_current_logfile): {e}"
            ))
        })?
        else {
            return Err(CaptureError::Refused(format!(
                "the server has no {} log file (pg_current_logfile('{}') is empty); nothing was changed",
                self.dest, self.dest
            )));
        };
        let can_file = self.local
            && self
                .local_path(&file)
                .is_some_and(|p| std::fs::File::open(p).is_ok());
        self.file_mode = match self.collect {
            Collect::File if !can_file => {
                return Err(CaptureError::Refused(format!(
                    "cannot read the log {file} on this machine{}; --collect=sql reads it \
                     through the server",
                    if self.local {
                        ""
                    } else {
                        " (the server is on another host)"
                    }
                )));
            }
            Collect::File => true,
            Collect::Auto => can_file,
            Collect::Sql => false,
        };
        let offset = if self.file_mode {
            self.local_path(&file)
                .and_then(|p| std::fs::metadata(p).ok())
                .map_or(0, |m| m.len())
        } else {
            if !superuser {
                let mut need = Vec::new();
                for f in [
                    "pg_read_binary_file(text,bigint,bigint,boolean)",
                    "pg_stat_file(text,boolean)",
                ] {
                    if !self.yes(&format!("SELECT has_function_privilege('{f}', 'EXECUTE')")) {
                        need.push(format!("EXECUTE on {f}"));
                    }
                }
                if !need.is_empty() {
                    return Err(CaptureError::Refused(format!(
                        "'{user}' may not read the server's log through SQL: it needs superuser, \
                         or {} (and pg_read_server_files for a log outside the data directory); \
                         nothing was changed",
                        need.join(", ")
                    )));
                }
            }
            let sql = format!(
                "SELECT size FROM pg_stat_file({}, true)",
                quote(&file, false)
            );
            match self.link.value(&sql) {
                Ok(v) => v.and_then(|s| s.parse::<u64>().ok()).unwrap_or(0),
                Err(e) => {
                    return Err(CaptureError::Refused(format!(
                        "cannot read the log {file} through SQL: {e}; nothing was changed"
                    )));
                }
            }
        };
        self.files.push((file, offset));
        // What postgresql.auto.conf holds now.
        self.auto_conf =
            if superuser || self.yes("SELECT has_table_privilege('pg_file_settings', 'SELECT')") {
                self.link
                    .value(&format!(
                        "SELECT setting FROM pg_file_settings WHERE name = '{NAME}' \
                     AND sourcefile LIKE '%postgresql.auto.conf' ORDER BY seqno DESC LIMIT 1"
                    ))
                    .map_err(cannot)?
            } else if sourcefile
                .as_deref()
                .is_some_and(|f| f.ends_with("postgresql.auto.conf"))
            {
                Some(format!("{setting}{unit}"))
            } else {
                None
            };
        self.before = if setting == "-1" || unit.is_empty() {
            setting.clone()
        } else {
            format!("{setting}{unit}")
        };
        // This session's own statements stay out of the log (where the
        // user may set it).
        let quiet = format!("SET {NAME} = -1");
        if self.link.conn.execute(&quiet).is_ok() {
            self.link.setup.push(quiet);
        }
        // And its end marker (a LOG message) gets into it.
        let loud = "SET log_min_messages = warning".to_string();
        if matches!(
            self.link.value("SELECT current_setting('log_min_messages')"),
            Ok(Some(v)) if matches!(v.as_str(), "fatal" | "panic")
        ) && self.link.conn.execute(&loud).is_ok()
        {
            self.link.setup.push(loud);
        }
        if setting == "0" {
            return Ok(());
        }
        if let Err(e) = self
            .link
            .conn
            .execute(&format!("ALTER SYSTEM SET {NAME} = 0"))
        {
            return Err(if e.code == "42501" {
                CaptureError::Refused(format!(
                    "'{user}' may not change {NAME}: it needs superuser or ALTER SYSTEM on it; \
                     nothing was changed (server: {e})"
                ))
            } else {
                CaptureError::Failed(format!("cannot change {NAME}: {e}; nothing was changed"))
            });
        }
        self.changed = true;
        if let Err(e) = self.link.rows("SELECT pg_reload_conf()") {
            let undo = self.restore_sql();
            let ok = undo.iter().all(|s| {
                self.link
                    .retry(|c| c.execute(s.trim_end_matches(';')))
                    .is_ok()
            });
            self.changed = false;
            return Err(if ok {
                CaptureError::Failed(format!(
                    "cannot reload the configuration: {e}; {NAME} was put back"
                ))
            } else {
                CaptureError::NotRestored {
                    why: format!("cannot reload the configuration: {e}"),
                    by_hand: undo.to_vec(),
                }
            });
        }
        // The reload reaches the sessions a moment later: wait until this
        // one has it, and so the server's main process, which starts the
        // new ones.
        let sql = format!("SELECT reset_val FROM pg_settings WHERE name = '{NAME}'");
        let t = Instant::now();
        loop {
            if matches!(self.link.value(&sql), Ok(Some(v)) if v == "0") {
                break;
            }
            if t.elapsed() > Duration::from_secs(10) {
                self.notes.push(
                    "the reload had not reached this session after 10 s: the first statements may be missing"
                        .into(),
                );
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.notes.push(format!(
            "{NAME} applies to every session, those already open too, from its next statement"
        ));
        Ok(())
    }

    fn changes(&self) -> Vec<Change> {
        if !self.changed {
            return Vec::new();
        }
        vec![Change {
            name: NAME.into(),
            before: match &self.auto_conf {
                Some(_) => self.before.clone(),
                None => format!("{} (no entry in postgresql.auto.conf)", self.before),
            },
            during: "0".into(),
        }]
    }

    fn notes(&self) -> Vec<String> {
        self.notes.clone()
    }

    fn by_hand(&self) -> Vec<String> {
        if self.changed {
            self.restore_sql().to_vec()
        } else {
            Vec::new()
        }
    }

    fn tick(&mut self) -> Result<(), DbError> {
        if let Some(f) = self.current_file()?
            && self.files.last().is_none_or(|(l, _)| *l != f)
        {
            self.files.push((f, 0));
        }
        Ok(())
    }

    fn mark_end(&mut self, marker: &str) -> Result<(), DbError> {
        self.link
            .conn
            .execute(&format!("DO $$BEGIN RAISE LOG '{marker}'; END$$"))
            .map(|_| ())
    }

    fn marks_after_restore(&self) -> bool {
        true
    }

    fn restore(&mut self) -> Result<(), DbError> {
        if !self.changed {
            return Ok(());
        }
        for s in self.restore_sql() {
            let s = s.trim_end_matches(';');
            self.link.retry(|c| c.query_rows(s))?;
        }
        Ok(())
    }

    fn before_collect(&mut self) -> Vec<String> {
        // The marker may have gone to a file the server moved on to.
        let _ = self.tick();
        if self.files.len() < 2 {
            return Vec::new();
        }
        vec![format!(
            "the server moved to another log file during the capture (rotation): read {}",
            self.files
                .iter()
                .map(|(f, _)| f.as_str())
                .collect::<Vec<_>>()
                .join(", then ")
        )]
    }

    fn collect(
        &mut self,
        out: &mut dyn Write,
        marker: Option<&str>,
    ) -> Result<(u64, bool), CaptureError> {
        let deadline = Instant::now() + MARKER_WAIT;
        let mut sink = Sink::new(out, marker, sink::line_start);
        let files = self.files.clone();
        for (i, (f, offset)) in files.iter().enumerate() {
            let wait = marker.is_some() && i + 1 == files.len();
            if self.file_mode {
                let Some(path) = self.local_path(f) else {
                    return Err(CaptureError::Failed(format!("cannot find the log {f}")));
                };
                read_local(&path, *offset, &mut sink, wait, deadline).map_err(|e| {
                    CaptureError::Failed(format!("cannot read the log {}: {e}", path.display()))
                })?;
            } else {
                self.read_sql(f, *offset, &mut sink, wait, deadline)?;
            }
            if sink.found {
                break;
            }
        }
        let found = sink.found;
        sink.finish()
            .map_err(|e| CaptureError::Failed(format!("cannot write the capture: {e}")))?;
        Ok((sink.written, found))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex() {
        assert_eq!(hex_decode("4c4F470a"), b"LOG\n");
        assert_eq!(hex_decode(""), b"");
    }
}
