//! dbmeter's own capture files (`dbmeter capture`): one header line that
//! says what the file is, then the server's log bytes of the captured
//! window as the server wrote them.
//!
//! ```text
//! # dbmeter-capture v1 {"server":"mariadb","version":"10.11.6-MariaDB","format":"mysql-slow",...}
//! # Time: 261127 10:31:38
//! # User@Host: ...
//! ```
//!
//! The header carries the log's format and, for PostgreSQL's stderr log,
//! the server's `log_line_prefix`, so that a capture is read without
//! guessing ([`read_header`]); everything else in it is a record of the
//! capture (when, from where, what was changed and whether it was put
//! back). `docs/capture.md` describes every field.

use crate::LogFormat;
use serde::{Deserialize, Serialize};

/// What every capture file starts with (then the version, a space and the
/// header's JSON on one line).
pub const MAGIC: &str = "# dbmeter-capture ";

/// The header's version this dbmeter writes and reads.
pub const VERSION: u32 = 1;

/// One server setting that the capture changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    pub name: String,
    /// Its value before the capture, as the server showed it.
    pub before: String,
    /// Its value during the capture.
    pub during: String,
}

/// The header of a capture file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaptureHeader {
    /// `mariadb`, `mysql` or `postgres`.
    pub server: String,
    /// The server's version string.
    pub version: String,
    /// The format of the log bytes that follow.
    pub format: LogFormat,
    /// PostgreSQL's `log_line_prefix` (for `postgres-stderr`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_line_prefix: Option<String>,
    /// The target as given, its password masked.
    #[serde(default)]
    pub target: String,
    /// When the settings took effect and when the window ended (UTC, RFC 3339).
    #[serde(default)]
    pub started: String,
    #[serde(default)]
    pub ended: String,
    /// How the log was read: `file` (from this machine's file system) or
    /// `sql` (through the server: PostgreSQL's pg_read_binary_file,
    /// MySQL's mysql.slow_log table).
    #[serde(default)]
    pub collected: String,
    /// The server's log file (or `mysql.slow_log`) that was read.
    #[serde(default)]
    pub source: String,
    /// What was changed for the capture.
    #[serde(default)]
    pub changed: Vec<Change>,
    /// Whether every change was put back.
    #[serde(default)]
    pub restored: bool,
    /// Anything a reader of the capture should know (a rotation, an end
    /// before the time asked for).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl CaptureHeader {
    /// The header line, with its newline.
    pub fn line(&self) -> String {
        // A header of strings and lists always serializes.
        let json = serde_json::to_string(self).unwrap_or_else(|_| "{}".into());
        format!("{MAGIC}v{VERSION} {json}\n")
    }
}

/// Whether `head` (an input's first bytes) starts as a capture file does.
pub fn is_capture(head: &[u8]) -> bool {
    head.starts_with(MAGIC.as_bytes())
}

/// Reads the header at the start of `head`: None when `head` is not a
/// capture; else the header and the length of its line (with the
/// newline), or why it cannot be read.
pub fn read_header(head: &[u8]) -> Option<Result<(CaptureHeader, usize), String>> {
    if !is_capture(head) {
        return None;
    }
    let Some(end) = memchr::memchr(b'\n', head) else {
        return Some(Err(
            "a dbmeter capture whose header line does not end (the file is cut short?)".into(),
        ));
    };
    let line = &head[MAGIC.len()..end];
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let text = match std::str::from_utf8(line) {
        Ok(t) => t,
        Err(_) => return Some(Err("a dbmeter capture whose header is not UTF-8".into())),
    };
    let (version, json) = text.split_once(' ').unwrap_or((text, ""));
    match version
        .strip_prefix('v')
        .and_then(|v| v.parse::<u32>().ok())
    {
        Some(VERSION) => {}
        Some(v) => {
            return Some(Err(format!(
                "a dbmeter capture of version {v}; this dbmeter reads version {VERSION} \
                 (a newer dbmeter reads it)"
            )));
        }
        None => {
            return Some(Err(format!(
                "a dbmeter capture header with no version ('{version}')"
            )));
        }
    }
    Some(
        serde_json::from_str::<CaptureHeader>(json)
            .map(|h| (h, end + 1))
            .map_err(|e| format!("a dbmeter capture whose header cannot be read: {e}")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> CaptureHeader {
        CaptureHeader {
            server: "postgres".into(),
            version: "15.4".into(),
            format: LogFormat::PgStderr,
            log_line_prefix: Some("%m [%p] %q%u@%d ".into()),
            target: "postgres://postgres@127.0.0.1:5432/test".into(),
            started: "2026-11-27T10:31:38Z".into(),
            ended: "2026-11-27T10:32:38Z".into(),
            collected: "sql".into(),
            source: "log/postgresql.log".into(),
            changed: vec![Change {
                name: "log_min_duration_statement".into(),
                before: "-1".into(),
                during: "0".into(),
            }],
            restored: true,
            notes: vec![],
        }
    }

    #[test]
    fn header_round_trip() {
        let h = header();
        let line = h.line();
        assert!(line.starts_with("# dbmeter-capture v1 {"), "{line}");
        assert_eq!(line.matches('\n').count(), 1);
        let mut file = line.clone().into_bytes();
        file.extend_from_slice(b"2026-11-27 10:31:38.000 UTC [7] LOG:  x\n");
        let (back, len) = read_header(&file).unwrap().unwrap();
        assert_eq!(back, h);
        assert_eq!(len, line.len());
    }

    #[test]
    fn not_a_capture_and_bad_headers() {
        assert!(read_header(b"# Time: 261127 10:31:38\n").is_none());
        let e = read_header(b"# dbmeter-capture v9 {}\n")
            .unwrap()
            .unwrap_err();
        assert!(e.contains("version 9"), "{e}");
        let e = read_header(b"# dbmeter-capture v1 {\"server\":1}\n")
            .unwrap()
            .unwrap_err();
        assert!(e.contains("cannot be read"), "{e}");
        let e = read_header(b"# dbmeter-capture v1 {").unwrap().unwrap_err();
        assert!(e.contains("does not end"), "{e}");
        // Unknown fields of a later dbmeter are ignored.
        let mut v = serde_json::to_value(header()).unwrap();
        v["later"] = serde_json::json!(1);
        let line = format!("# dbmeter-capture v1 {v}\n");
        assert!(read_header(line.as_bytes()).unwrap().is_ok());
    }
}
