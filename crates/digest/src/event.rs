//! The one typed event every log format produces, and what goes wrong
//! reading a log.

use std::borrow::Cow;

/// One statement from a log, borrowing from the chunk it was read from.
///
/// The named fields are those every format can have; `attrs` keeps every
/// other `# Key: value` attribute of a slow log by its name, as written
/// (MariaDB's and Percona Server's extended ones: `Rows_affected`,
/// `Bytes_sent`, `Tmp_tables`, `Full_scan`, `Filesort`, `InnoDB_IO_r_ops`...).
#[derive(Debug, Clone, Default)]
pub struct LogEvent<'a> {
    /// Line of the input where the event starts (1-based).
    pub line: u64,
    /// Byte offset of the event in the (decompressed) input.
    pub offset: u64,
    /// When it ran: microseconds since the Unix epoch (UTC), when the log says.
    pub ts: Option<i64>,
    /// The statement as logged (without its terminating `;`).
    pub query: &'a [u8],
    /// An administrator command (`# administrator command: Quit`).
    pub admin: bool,
    /// Seconds.
    pub query_time: Option<f64>,
    /// Seconds.
    pub lock_time: Option<f64>,
    pub rows_sent: Option<u64>,
    pub rows_examined: Option<u64>,
    pub user: Option<Cow<'a, [u8]>>,
    pub host: Option<Cow<'a, [u8]>>,
    /// The default database (`use db;`, `Schema:`, `Init DB`), without backticks.
    pub db: Option<Cow<'a, [u8]>>,
    pub thread_id: Option<u64>,
    /// Every other attribute, by name, its value as written.
    pub attrs: Vec<(&'a [u8], &'a [u8])>,
    /// A PostgreSQL statement (fingerprinted with PostgreSQL's literals).
    pub postgres: bool,
    /// `ts` is when the statement ended, not when it started (PostgreSQL's
    /// `duration: X ms  statement: ...`, written as it ends): it started
    /// `query_time` earlier.
    pub ended: bool,
    /// The extended protocol's parameters of a PostgreSQL `execute`, as the
    /// log gives them (`$1 = '42', $2 = NULL`), from its `DETAIL:
    /// parameters:`.
    pub params: Option<Cow<'a, [u8]>>,
}

/// A line that could not be read, with why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Malformed {
    /// The input it is in, as the user named it.
    pub file: String,
    /// Which of the inputs that is (0 for the first named).
    #[serde(skip)]
    pub input: u32,
    pub line: u64,
    pub reason: String,
}

/// The malformed lines of a digest: all counted, the first ones kept.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct MalformedLines {
    pub count: u64,
    pub first: Vec<Malformed>,
}

/// How many malformed lines are kept with their line numbers.
pub const MALFORMED_KEPT: usize = 20;

impl MalformedLines {
    pub fn push(&mut self, m: Malformed) {
        self.count += 1;
        if self.first.len() < MALFORMED_KEPT {
            self.first.push(m);
        }
    }

    /// Adds `other`'s: the first ones kept are the first in input order of
    /// both (each part's are its first, whatever order the parts read
    /// their chunks in).
    pub fn merge(&mut self, other: MalformedLines) {
        self.count += other.count;
        self.first.extend(other.first);
        self.sort();
        self.first.truncate(MALFORMED_KEPT);
    }

    /// In input order (workers finish in any order).
    pub fn sort(&mut self) {
        self.first.sort_by_key(|m| (m.input, m.line));
    }
}

/// A malformed line as a parser reports it (the file is added by the caller).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadLine {
    pub line: u64,
    pub reason: String,
}

/// Days since 1970-01-01 of a civil date (proleptic Gregorian).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let m = m as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `(y, m, d, hh, mm, ss)` of microseconds since the epoch (UTC).
pub fn civil_of(us: i64) -> (i64, u32, u32, u32, u32, u32) {
    let secs = us.div_euclid(1_000_000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let z = days + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = if m <= 2 { y + 1 } else { y };
    (
        y,
        m,
        d,
        (rem / 3600) as u32,
        (rem % 3600 / 60) as u32,
        (rem % 60) as u32,
    )
}

/// `YYYY-MM-DD HH:MM:SS` (UTC) of microseconds since the epoch.
pub fn format_ts(us: i64) -> String {
    let (y, m, d, hh, mm, ss) = civil_of(us);
    format!("{y:04}-{m:02}-{d:02} {hh:02}:{mm:02}:{ss:02}")
}

/// Parses `YYYY-MM-DD`, `YYYY-MM-DD HH:MM:SS[.ffffff]` (or with `T`, and an
/// optional `Z`) and `YYMMDD H:MM:SS` (MariaDB's slow and general logs),
/// as UTC; microseconds since the epoch.
pub fn parse_datetime(s: &[u8]) -> Option<i64> {
    let s = s.trim_ascii();
    let s = s.strip_suffix(b"Z").unwrap_or(s);
    let num = |b: &[u8]| -> Option<i64> {
        if b.is_empty() || !b.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(b).ok()?.parse().ok()
    };
    let (date, time) = match s.iter().position(|&b| b == b' ' || b == b'T') {
        Some(p) => (&s[..p], s[p + 1..].trim_ascii_start()),
        None => (s, &b""[..]),
    };
    let (y, m, d) = if date.len() == 10 && date[4] == b'-' && date[7] == b'-' {
        (num(&date[..4])?, num(&date[5..7])?, num(&date[8..10])?)
    } else if date.len() == 6 {
        (
            2000 + num(&date[..2])?,
            num(&date[2..4])?,
            num(&date[4..6])?,
        )
    } else {
        return None;
    };
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    let mut us = days_from_civil(y, m as u32, d as u32) * 86_400_000_000;
    if !time.is_empty() {
        let (hms, frac) = match time.iter().position(|&b| b == b'.') {
            Some(p) => (&time[..p], &time[p + 1..]),
            None => (time, &b""[..]),
        };
        let mut parts = hms.split(|&b| b == b':');
        let h = num(parts.next()?)?;
        let mi = num(parts.next()?)?;
        let se = num(parts.next()?)?;
        if parts.next().is_some() || h > 23 || mi > 59 || se > 60 {
            return None;
        }
        us += (h * 3600 + mi * 60 + se) * 1_000_000;
        if !frac.is_empty() {
            let digits = &frac[..frac.len().min(6)];
            let f = num(digits)?;
            us += f * 10_i64.pow(6 - digits.len() as u32);
        }
    }
    Some(us)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datetimes() {
        let t = parse_datetime(b"2026-11-27 10:31:38").unwrap();
        assert_eq!(t, 1_795_775_498_000_000);
        assert_eq!(parse_datetime(b"261127 10:31:38"), Some(t));
        assert_eq!(
            parse_datetime(b"261127  9:01:02"),
            Some(t - (3600 + 30 * 60 + 36) * 1_000_000)
        );
        assert_eq!(parse_datetime(b"2026-11-27T10:31:38.5Z"), Some(t + 500_000));
        assert_eq!(format_ts(t), "2026-11-27 10:31:38");
        assert_eq!(parse_datetime(b"2026-13-01"), None);
        assert_eq!(parse_datetime(b"yesterday"), None);
        assert_eq!(format_ts(0), "1970-01-01 00:00:00");
    }
}
