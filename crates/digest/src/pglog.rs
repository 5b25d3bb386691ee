//! PostgreSQL's logs (15): stderr with a `log_line_prefix`, csvlog and
//! jsonlog. Each is read into records (time, process, user, database, host,
//! severity, message), and one state machine per log turns the records'
//! messages into statements:
//!
//! - `duration: X ms  statement: Q` (log_min_duration_statement): one
//!   statement that took X.
//! - `statement: Q` then, from the same process, `duration: X ms`
//!   (log_statement=all with log_duration=on): paired by process id. A
//!   statement that gets no duration (it failed, or log_duration is off) is
//!   counted without a time when its process logs its next statement or
//!   disconnects, or at the end of the log.
//! - The extended protocol: `duration: X ms  parse|bind NAME: Q` and
//!   `duration: X ms  execute NAME: Q`. The execute is the statement; the
//!   parse and bind times of its process are added to it (so a class's time
//!   is the whole time the server spent on it), and bare `duration:` lines
//!   that come before a statement (log_duration with the extended protocol)
//!   likewise.
//! - Everything else (connections, errors and their `STATEMENT:`, `DETAIL:`
//!   lines, checkpoints) is read and left out of the counts.
//!
//! Records carry state (the pairs) from one to the next, so a PostgreSQL log
//! is read in order; [`PgParser`] keeps the state from one chunk to the next.

use crate::event::{BadLine, LogEvent, parse_datetime};
use std::borrow::Cow;
use std::collections::HashMap;

/// PostgreSQL 15's default `log_line_prefix`.
pub const DEFAULT_PREFIX: &str = "%m [%p] ";
/// Debian's and Ubuntu's `log_line_prefix`.
pub const DEBIAN_PREFIX: &str = "%m [%p] %q%u@%d ";

/// The three PostgreSQL log formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PgKind {
    Stderr,
    Csv,
    Json,
}

/// A compiled `log_line_prefix`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prefix {
    items: Vec<Item>,
    text: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Item {
    Lit(Vec<u8>),
    /// An escape, and whether it has a padding width (`%-10u`).
    Esc(u8, bool),
    /// `%q`: what follows is written by session processes only.
    Stop,
}

/// What a prefix says about a line.
#[derive(Debug, Default, Clone)]
struct Fields<'a> {
    ts: Option<i64>,
    pid: Option<u64>,
    session: Option<&'a [u8]>,
    user: Option<&'a [u8]>,
    db: Option<&'a [u8]>,
    host: Option<&'a [u8]>,
}

impl Prefix {
    /// Compiles a `log_line_prefix` (escapes %m %t %n %s %p %c %l %u %d %h
    /// %r %a %b %e %x %v %i %Q %q %%, with an optional padding width).
    pub fn parse(s: &str) -> Result<Prefix, String> {
        let b = s.as_bytes();
        let mut items = Vec::new();
        let mut lit = Vec::new();
        let mut i = 0;
        while i < b.len() {
            if b[i] != b'%' {
                lit.push(b[i]);
                i += 1;
                continue;
            }
            i += 1;
            let w = i;
            while i < b.len() && (b[i] == b'-' || b[i].is_ascii_digit()) {
                i += 1;
            }
            let padded = i > w;
            let Some(&c) = b.get(i) else {
                return Err(format!("log_line_prefix '{s}' ends with a lone %"));
            };
            i += 1;
            if c == b'%' {
                lit.push(b'%');
                continue;
            }
            if !b"mtnspcludhrabexviQq".contains(&c) {
                return Err(format!(
                    "log_line_prefix '{s}': unknown escape %{}",
                    c as char
                ));
            }
            if !lit.is_empty() {
                items.push(Item::Lit(std::mem::take(&mut lit)));
            }
            items.push(if c == b'q' {
                Item::Stop
            } else {
                Item::Esc(c, padded)
            });
        }
        if !lit.is_empty() {
            items.push(Item::Lit(lit));
        }
        Ok(Prefix {
            items,
            text: s.to_string(),
        })
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// The fields of a line and where its message starts.
    fn read<'a>(&self, l: &'a [u8]) -> Option<(Fields<'a>, usize)> {
        let mut f = Fields::default();
        let end = self.read_from(0, l, 0, &mut f)?;
        Some((f, end))
    }

    fn read_from<'a>(&self, k: usize, l: &'a [u8], p: usize, f: &mut Fields<'a>) -> Option<usize> {
        let Some(item) = self.items.get(k) else {
            return Some(p);
        };
        match item {
            Item::Lit(t) => {
                if l[p..].starts_with(t) {
                    self.read_from(k + 1, l, p + t.len(), f)
                } else {
                    None
                }
            }
            Item::Stop => {
                let mut g = f.clone();
                // A session's line has the rest, with a severity after it.
                match self.read_from(k + 1, l, p, &mut g) {
                    Some(e) if severity(&l[e..]).is_some() => {
                        *f = g;
                        Some(e)
                    }
                    _ => Some(p),
                }
            }
            Item::Esc(c, padded) => {
                let rest = &l[p..];
                // A padded value: spaces before it (right-aligned).
                let lead = if *padded {
                    span(rest, |b| b == b' ')
                } else {
                    0
                };
                let rest = &rest[lead..];
                let n = match c {
                    b'm' | b't' | b's' => {
                        let n = timestamp_len(rest)?;
                        if *c != b's' {
                            f.ts = Some(parse_pg_ts(&rest[..n])?);
                        }
                        n
                    }
                    b'n' => span(rest, |b| b.is_ascii_digit() || b == b'.'),
                    b'p' => {
                        let n = span(rest, |b| b.is_ascii_digit());
                        f.pid = Some(std::str::from_utf8(&rest[..n]).ok()?.parse().ok()?);
                        n
                    }
                    b'l' | b'x' => {
                        let n = span(rest, |b| b.is_ascii_digit());
                        if n == 0 {
                            return None;
                        }
                        n
                    }
                    b'Q' => span(rest, |b| b.is_ascii_digit() || b == b'-'),
                    b'c' => {
                        let n = span(rest, |b| b.is_ascii_hexdigit() || b == b'.');
                        f.session = Some(&rest[..n]);
                        n
                    }
                    b'e' => span(rest, |b| b.is_ascii_alphanumeric()),
                    b'v' => span(rest, |b| b.is_ascii_digit() || b == b'/' || b == b'-'),
                    _ => {
                        // Free text: up to the next literal's first byte or a space.
                        let stop = match self.items.get(k + 1) {
                            Some(Item::Lit(t)) => t[0],
                            _ => b' ',
                        };
                        let n = span(rest, |b| b != stop && b != b' ');
                        let v = &rest[..n];
                        let v = if v.is_empty() || v == b"[unknown]" {
                            None
                        } else {
                            Some(v)
                        };
                        match c {
                            b'u' => f.user = v,
                            b'd' => f.db = v,
                            b'h' => f.host = v,
                            b'r' => {
                                f.host = v.map(|v| match memchr::memrchr(b'(', v) {
                                    Some(q) if q > 0 => &v[..q],
                                    _ => v,
                                })
                            }
                            _ => {}
                        }
                        n
                    }
                };
                // And after it (left-aligned).
                let trail = if *padded {
                    span(&rest[n..], |b| b == b' ')
                } else {
                    0
                };
                self.read_from(k + 1, l, p + lead + n + trail, f)
            }
        }
    }
}

fn span(s: &[u8], ok: impl Fn(u8) -> bool) -> usize {
    s.iter().position(|&b| !ok(b)).unwrap_or(s.len())
}

/// `YYYY-MM-DD HH:MM:SS[.fff] TZ`: its length.
fn timestamp_len(s: &[u8]) -> Option<usize> {
    if s.len() < 19 || s[4] != b'-' || s[10] != b' ' || s[13] != b':' {
        return None;
    }
    let mut i = 19;
    if s.get(i) == Some(&b'.') {
        i += 1 + span(&s[i + 1..], |b| b.is_ascii_digit());
    }
    if s.get(i) == Some(&b' ') {
        let z = span(&s[i + 1..], |b| b != b' ' && b != b']' && b != b',');
        if z > 0 {
            i += 1 + z;
        }
    }
    Some(i)
}

/// A PostgreSQL time with its zone (`UTC`, `GMT`, `+01`, `-05:30`; a named
/// zone other than UTC/GMT is read as UTC), in microseconds since the epoch.
pub fn parse_pg_ts(s: &[u8]) -> Option<i64> {
    let s = s.trim_ascii();
    let (dt, zone) = match memchr::memrchr(b' ', s) {
        Some(p) if p > 10 => (&s[..p], &s[p + 1..]),
        _ => (s, &b""[..]),
    };
    let us = parse_datetime(dt)?;
    let off = match zone.first() {
        Some(&sign @ (b'+' | b'-')) => {
            let z = &zone[1..];
            let (h, m) = match memchr::memchr(b':', z) {
                Some(c) => (&z[..c], &z[c + 1..]),
                None if z.len() == 4 => (&z[..2], &z[2..]),
                None => (z, &b"0"[..]),
            };
            let h: i64 = std::str::from_utf8(h).ok()?.parse().ok()?;
            let m: i64 = std::str::from_utf8(m).ok()?.parse().ok()?;
            let o = (h * 3600 + m * 60) * 1_000_000;
            if sign == b'+' { o } else { -o }
        }
        _ => 0,
    };
    Some(us - off)
}

/// `SEVERITY:  ` at the start of a message: the severity and the message's start.
fn severity(s: &[u8]) -> Option<(&[u8], usize)> {
    let n = span(s, |b| b.is_ascii_uppercase() || b.is_ascii_digit());
    if n < 3 || !s[n..].starts_with(b":  ") {
        return None;
    }
    let mut at = n + 3;
    // log_error_verbosity=verbose: `LOG:  00000: message`.
    if s.len() >= at + 7
        && s[at..at + 5].iter().all(u8::is_ascii_alphanumeric)
        && &s[at + 5..at + 7] == b": "
    {
        at += 7;
    }
    Some((&s[..n], at))
}

/// One entry of a PostgreSQL log.
#[derive(Debug, Default)]
struct Record<'a> {
    line: u64,
    offset: u64,
    ts: Option<i64>,
    pid: Option<u64>,
    session: Option<Cow<'a, [u8]>>,
    user: Option<Cow<'a, [u8]>>,
    db: Option<Cow<'a, [u8]>>,
    host: Option<Cow<'a, [u8]>>,
    severity: Cow<'a, [u8]>,
    message: Cow<'a, [u8]>,
    /// csvlog's and jsonlog's detail (a stderr log's `DETAIL:` is a record of its own).
    detail: Option<Cow<'a, [u8]>>,
}

/// Whether the head of an input looks like a PostgreSQL log, and which.
pub fn looks_like(head: &[u8]) -> Option<PgKind> {
    let lines = || head.split(|&b| b == b'\n').take(200);
    if lines().any(|l| l.starts_with(b"{\"timestamp\":\"")) {
        return Some(PgKind::Json);
    }
    let dated = |l: &[u8]| timestamp_len(l).is_some_and(|n| l.get(n) == Some(&b','));
    if lines().any(|l| {
        dated(l)
            && [&b",LOG,"[..], b",ERROR,", b",FATAL,", b",WARNING,"]
                .iter()
                .any(|w| crate::scan::find(l, w).is_some())
    }) {
        return Some(PgKind::Csv);
    }
    if lines().any(|l| {
        [&b"LOG:  "[..], b"ERROR:  ", b"FATAL:  ", b"STATEMENT:  "]
            .iter()
            .any(|w| crate::scan::find(l, w).is_some())
    }) {
        return Some(PgKind::Stderr);
    }
    None
}

/// Of the prefixes given, the one that reads the most lines of `head`
/// (the first one on a tie).
pub fn choose_prefix(head: &[u8], candidates: &[Prefix]) -> Option<Prefix> {
    let score = |p: &Prefix| {
        head.split(|&b| b == b'\n')
            .take(1000)
            .filter(|l| {
                p.read(l).is_some_and(|(f, at)| {
                    severity(&l[at..]).is_some()
                        && (f.user.is_some() || f.pid.is_some() || f.ts.is_some())
                })
            })
            .count()
    };
    let mut best: Option<(&Prefix, usize)> = None;
    for c in candidates {
        let s = score(c);
        if best.is_none_or(|(_, b)| s > b) {
            best = Some((c, s));
        }
    }
    best.filter(|&(_, s)| s > 0).map(|(p, _)| p.clone())
}

/// The start of the last record in `buf` (a cut point).
pub fn last_boundary(kind: PgKind, buf: &[u8]) -> Option<usize> {
    match kind {
        PgKind::Json => {
            let p = memchr::memrchr(b'\n', buf)?;
            Some(p + 1).filter(|&p| p < buf.len())
        }
        PgKind::Stderr => {
            let mut end = buf.len();
            while let Some(p) = memchr::memrchr(b'\n', &buf[..end]) {
                if p + 1 < buf.len() && buf[p + 1] != b'\t' {
                    return Some(p + 1);
                }
                end = p;
            }
            None
        }
        PgKind::Csv => {
            // `buf` starts at a record: the last newline outside quotes.
            let mut quoted = false;
            let mut last = None;
            for p in memchr::memchr2_iter(b'"', b'\n', buf) {
                if buf[p] == b'"' {
                    quoted = !quoted;
                } else if !quoted && p + 1 < buf.len() {
                    last = Some(p + 1);
                }
            }
            last
        }
    }
}

/// A statement waiting for its duration.
#[derive(Debug, Default)]
struct Pending {
    line: u64,
    offset: u64,
    ts: Option<i64>,
    user: Option<Vec<u8>>,
    db: Option<Vec<u8>>,
    host: Option<Vec<u8>>,
    query: Vec<u8>,
    /// `$1 = '5', ...` from its `DETAIL:  parameters:`.
    params: Option<Vec<u8>>,
}

#[derive(Debug, Default)]
struct Session {
    stmt: Option<Pending>,
    /// An `execute` with its duration in a stderr log, waiting for the
    /// `DETAIL:  parameters:` entry that may follow it; its statement in
    /// `held_query` (kept from one to the next).
    held: Option<Held>,
    held_query: Vec<u8>,
    /// Parse, bind and bare durations (ms) waiting for the next statement.
    carry_ms: f64,
    user: Option<Vec<u8>>,
    db: Option<Vec<u8>>,
    host: Option<Vec<u8>>,
}

/// An `execute` waiting for its parameters.
#[derive(Debug, Clone, Copy)]
struct Held {
    line: u64,
    offset: u64,
    ts: Option<i64>,
    ms: f64,
}

/// Counts a held `execute` of `s`, with its parameters if they came.
fn emit_held(
    s: &Session,
    h: &Held,
    params: Option<&[u8]>,
    pid: Option<u64>,
    emit: &mut dyn FnMut(&LogEvent<'_>),
) {
    let ev = LogEvent {
        line: h.line,
        offset: h.offset,
        ts: h.ts,
        query: trim_statement(&s.held_query),
        query_time: Some(h.ms / 1000.0),
        user: s.user.as_deref().map(Cow::Borrowed),
        host: s.host.as_deref().map(Cow::Borrowed),
        db: s.db.as_deref().map(Cow::Borrowed),
        thread_id: pid,
        postgres: true,
        params: params.map(Cow::Borrowed),
        ..Default::default()
    };
    emit(&ev);
}

/// Reads a PostgreSQL log in order, chunk after chunk.
pub struct PgParser {
    kind: PgKind,
    prefix: Prefix,
    sessions: HashMap<u64, Session>,
}

fn cow(v: Option<&[u8]>) -> Option<Cow<'_, [u8]>> {
    v.map(Cow::Borrowed)
}

impl PgParser {
    pub fn new(kind: PgKind, prefix: Prefix) -> PgParser {
        PgParser {
            kind,
            prefix,
            sessions: HashMap::new(),
        }
    }

    /// Reads the records of a chunk that starts at a record.
    pub fn parse_chunk(
        &mut self,
        chunk: &[u8],
        first_line: u64,
        offset: u64,
        mut emit: impl FnMut(&LogEvent<'_>),
        mut bad: impl FnMut(BadLine),
    ) {
        match self.kind {
            PgKind::Stderr => self.stderr_chunk(chunk, first_line, offset, &mut emit, &mut bad),
            PgKind::Csv => self.csv_chunk(chunk, first_line, offset, &mut emit, &mut bad),
            PgKind::Json => self.json_chunk(chunk, first_line, offset, &mut emit, &mut bad),
        }
    }

    /// Counts the statements still waiting for a duration (at the end of a log).
    pub fn finish(&mut self, mut emit: impl FnMut(&LogEvent<'_>)) {
        let mut left: Vec<(Pending, Option<f64>)> = Vec::new();
        for (_, s) in self.sessions.drain() {
            if let Some(h) = s.held {
                let p = Pending {
                    line: h.line,
                    offset: h.offset,
                    ts: h.ts,
                    user: s.user.clone(),
                    db: s.db.clone(),
                    host: s.host.clone(),
                    query: s.held_query.clone(),
                    params: None,
                };
                left.push((p, Some(h.ms / 1000.0)));
            }
            if let Some(p) = s.stmt {
                left.push((p, None));
            }
        }
        left.sort_by_key(|p| p.0.offset);
        for (p, t) in left {
            emit_pending(&p, t, None, &mut emit);
        }
    }

    fn stderr_chunk(
        &mut self,
        chunk: &[u8],
        first_line: u64,
        offset: u64,
        emit: &mut dyn FnMut(&LogEvent<'_>),
        bad: &mut dyn FnMut(BadLine),
    ) {
        let mut pos = 0;
        let mut line = first_line;
        while pos < chunk.len() {
            let start = pos;
            let start_line = line;
            let eol = |p: usize| memchr::memchr(b'\n', &chunk[p..]).map_or(chunk.len(), |q| p + q);
            let mut end = eol(pos);
            // Continuation lines start with a tab.
            let mut next = end + 1;
            line += 1;
            while next < chunk.len() && chunk[next] == b'\t' {
                end = eol(next);
                next = end + 1;
                line += 1;
            }
            pos = next;
            let text = &chunk[start..end.min(chunk.len())];
            let text = text.strip_suffix(b"\r").unwrap_or(text);
            if text.trim_ascii().is_empty() {
                continue;
            }
            let parsed = self.prefix.read(text).and_then(|(f, at)| {
                let (sev, m) = severity(&text[at..])?;
                Some((f, sev, &text[at + m..]))
            });
            let Some((f, sev, message)) = parsed else {
                bad(BadLine {
                    line: start_line,
                    reason: format!(
                        "no log_line_prefix '{}' and severity: '{}' (--log-line-prefix says which prefix the server writes)",
                        self.prefix.text,
                        crate::slowlog::lossy(&text[..text.len().min(120)])
                    ),
                });
                continue;
            };
            let rec = Record {
                line: start_line,
                offset: offset + start as u64,
                ts: f.ts,
                pid: f.pid,
                session: cow(f.session),
                user: cow(f.user),
                db: cow(f.db),
                host: cow(f.host),
                severity: Cow::Borrowed(sev),
                message: Cow::Borrowed(message),
                detail: None,
            };
            self.record(&rec, emit);
        }
    }

    fn csv_chunk(
        &mut self,
        chunk: &[u8],
        first_line: u64,
        offset: u64,
        emit: &mut dyn FnMut(&LogEvent<'_>),
        bad: &mut dyn FnMut(BadLine),
    ) {
        let mut pos = 0;
        let mut line = first_line;
        while pos < chunk.len() {
            let start = pos;
            let start_line = line;
            let (fields, next, lines, ok) = csv_record(chunk, pos);
            pos = next;
            line += lines;
            if fields.len() == 1 && fields[0].trim_ascii().is_empty() {
                continue;
            }
            if !ok || fields.len() < 14 {
                bad(BadLine {
                    line: start_line,
                    reason: format!(
                        "not a csvlog record ({} fields{})",
                        fields.len(),
                        if ok { "" } else { ", an unterminated quote" }
                    ),
                });
                continue;
            }
            let get = |i: usize| Some(&fields[i]).filter(|v| !v.is_empty()).cloned();
            let ts = parse_pg_ts(&fields[0]);
            let pid = std::str::from_utf8(&fields[3])
                .ok()
                .and_then(|p| p.parse().ok());
            if ts.is_none() || pid.is_none() {
                bad(BadLine {
                    line: start_line,
                    reason: "not a csvlog record (no time or process id in columns 1 and 4)".into(),
                });
                continue;
            }
            let host = get(4).map(|h| match memchr::memrchr(b':', &h) {
                Some(c) if c > 0 && h[c + 1..].iter().all(u8::is_ascii_digit) => {
                    Cow::Owned(h[..c].to_vec())
                }
                _ => h,
            });
            let rec = Record {
                line: start_line,
                offset: offset + start as u64,
                ts,
                pid,
                session: get(5),
                user: get(1),
                db: get(2),
                host,
                severity: fields[11].clone(),
                message: fields[13].clone(),
                detail: fields.get(14).filter(|d| !d.is_empty()).cloned(),
            };
            self.record(&rec, emit);
        }
    }

    fn json_chunk(
        &mut self,
        chunk: &[u8],
        first_line: u64,
        offset: u64,
        emit: &mut dyn FnMut(&LogEvent<'_>),
        bad: &mut dyn FnMut(BadLine),
    ) {
        #[derive(serde::Deserialize)]
        struct J<'a> {
            #[serde(borrow)]
            timestamp: Option<Cow<'a, str>>,
            #[serde(borrow)]
            user: Option<Cow<'a, str>>,
            #[serde(borrow)]
            dbname: Option<Cow<'a, str>>,
            pid: Option<u64>,
            #[serde(borrow)]
            remote_host: Option<Cow<'a, str>>,
            #[serde(borrow)]
            session_id: Option<Cow<'a, str>>,
            #[serde(borrow)]
            error_severity: Option<Cow<'a, str>>,
            #[serde(borrow)]
            message: Option<Cow<'a, str>>,
            #[serde(borrow)]
            detail: Option<Cow<'a, str>>,
        }
        fn bytes(c: Option<Cow<'_, str>>) -> Option<Cow<'_, [u8]>> {
            c.map(|c| match c {
                Cow::Borrowed(s) => Cow::Borrowed(s.as_bytes()),
                Cow::Owned(s) => Cow::Owned(s.into_bytes()),
            })
        }
        let mut pos = 0;
        let mut line = first_line;
        while pos < chunk.len() {
            let end = memchr::memchr(b'\n', &chunk[pos..]).map_or(chunk.len(), |q| pos + q);
            let l = &chunk[pos..end];
            let start = pos;
            let this = line;
            pos = end + 1;
            line += 1;
            if l.trim_ascii().is_empty() {
                continue;
            }
            let j: J<'_> = match serde_json::from_slice(l) {
                Ok(j) => j,
                Err(e) => {
                    bad(BadLine {
                        line: this,
                        reason: format!("not a jsonlog record: {e}"),
                    });
                    continue;
                }
            };
            let (Some(sev), Some(msg)) = (j.error_severity, j.message) else {
                bad(BadLine {
                    line: this,
                    reason: "a jsonlog record without error_severity or message".into(),
                });
                continue;
            };
            let rec = Record {
                line: this,
                offset: offset + start as u64,
                ts: j
                    .timestamp
                    .as_deref()
                    .and_then(|t| parse_pg_ts(t.as_bytes())),
                pid: j.pid,
                session: bytes(j.session_id),
                user: bytes(j.user),
                db: bytes(j.dbname),
                host: bytes(j.remote_host),
                severity: bytes(Some(sev)).unwrap_or_default(),
                message: bytes(Some(msg)).unwrap_or_default(),
                detail: bytes(j.detail),
            };
            self.record(&rec, emit);
        }
    }

    /// One record into the statement state machine.
    fn record(&mut self, r: &Record<'_>, emit: &mut dyn FnMut(&LogEvent<'_>)) {
        let key = match (r.pid, &r.session) {
            (Some(p), _) => p,
            (None, Some(s)) => {
                s.iter()
                    .fold(0u64, |h, &b| h.wrapping_mul(31).wrapping_add(b as u64))
                    | 1 << 63
            }
            _ => 0,
        };
        let sev: &[u8] = &r.severity;
        if sev == b"DETAIL" {
            // The parameters of the execute (or statement) just logged.
            if let Some(sess) = self.sessions.get_mut(&key)
                && let Some(p) = r.message.strip_prefix(b"parameters: ")
            {
                if let Some(h) = sess.held.take() {
                    emit_held(sess, &h, Some(p), r.pid, emit);
                } else if let Some(stmt) = &mut sess.stmt {
                    stmt.params = Some(p.to_vec());
                }
            }
            return;
        }
        if let Some(sess) = self.sessions.get_mut(&key)
            && let Some(h) = sess.held.take()
        {
            emit_held(sess, &h, None, r.pid, emit);
        }
        if sev != b"LOG" {
            return;
        }
        let m: &[u8] = &r.message;
        let params = r
            .detail
            .as_deref()
            .and_then(|d| d.strip_prefix(b"parameters: "));
        let stderr = self.kind == PgKind::Stderr;
        let sess = self.sessions.entry(key).or_default();
        for (have, new) in [
            (&mut sess.user, &r.user),
            (&mut sess.db, &r.db),
            (&mut sess.host, &r.host),
        ] {
            if let Some(v) = new.as_deref()
                && have.as_deref() != Some(v)
            {
                *have = Some(v.to_vec());
            }
        }
        if let Some(rest) = m.strip_prefix(b"duration: ") {
            let n = span(rest, |b| b.is_ascii_digit() || b == b'.');
            let ms: Option<f64> = std::str::from_utf8(&rest[..n])
                .ok()
                .and_then(|s| s.parse().ok());
            let Some(ms) = ms.filter(|_| rest[n..].starts_with(b" ms")) else {
                return;
            };
            let after = rest[n + 3..].trim_ascii_start();
            if after.is_empty() {
                // log_duration: the time of the statement logged before, or
                // of a parse or bind (added to the next statement).
                match sess.stmt.take() {
                    Some(p) => {
                        let t = ms + sess.carry_ms;
                        sess.carry_ms = 0.0;
                        emit_pending(&p, Some(t / 1000.0), r.pid, emit);
                    }
                    None => sess.carry_ms += ms,
                }
                return;
            }
            match statement(after) {
                Some((Kind::Parse, _)) => sess.carry_ms += ms,
                Some((kind, q)) => {
                    if let Some(p) = sess.stmt.take() {
                        emit_pending(&p, None, r.pid, emit);
                    }
                    let t = ms + sess.carry_ms;
                    sess.carry_ms = 0.0;
                    if matches!(kind, Kind::Execute) && stderr {
                        // Its parameters, if any, are the next entry.
                        sess.held_query.clear();
                        sess.held_query.extend_from_slice(q);
                        sess.held = Some(Held {
                            line: r.line,
                            offset: r.offset,
                            ts: r.ts,
                            ms: t,
                        });
                        return;
                    }
                    let ev = LogEvent {
                        line: r.line,
                        offset: r.offset,
                        ts: r.ts,
                        query: trim_statement(q),
                        query_time: Some(t / 1000.0),
                        user: sess.user.as_deref().map(Cow::Borrowed),
                        host: sess.host.as_deref().map(Cow::Borrowed),
                        db: sess.db.as_deref().map(Cow::Borrowed),
                        thread_id: r.pid,
                        postgres: true,
                        params: params.map(Cow::Borrowed),
                        ..Default::default()
                    };
                    emit(&ev);
                }
                None => {}
            }
            return;
        }
        match statement(m) {
            Some((Kind::Statement | Kind::Execute, q)) => {
                if let Some(p) = sess.stmt.take() {
                    emit_pending(&p, None, r.pid, emit);
                }
                sess.stmt = Some(Pending {
                    line: r.line,
                    offset: r.offset,
                    ts: r.ts,
                    user: sess.user.clone(),
                    db: sess.db.clone(),
                    host: sess.host.clone(),
                    query: q.to_vec(),
                    params: params.map(<[u8]>::to_vec),
                });
            }
            Some((Kind::Parse, _)) => {}
            None => {
                // A process ends (or its id is taken by a new one): its state goes.
                if (m.starts_with(b"disconnection: ") || m.starts_with(b"connection received: "))
                    && let Some(s) = self.sessions.remove(&key)
                    && let Some(p) = s.stmt
                {
                    emit_pending(&p, None, r.pid, emit);
                }
            }
        }
    }
}

enum Kind {
    /// `statement:`: a statement run.
    Statement,
    /// `execute NAME:`: a statement run through the extended protocol.
    Execute,
    /// `parse NAME:` or `bind NAME:`: a step of the extended protocol.
    Parse,
}

/// `statement: Q`, `execute NAME: Q`, `parse NAME: Q`, `bind NAME: Q`.
fn statement(m: &[u8]) -> Option<(Kind, &[u8])> {
    if let Some(q) = m.strip_prefix(b"statement: ") {
        return Some((Kind::Statement, q));
    }
    let (kind, rest) = if let Some(r) = m.strip_prefix(b"execute ") {
        (Kind::Execute, r)
    } else if let Some(r) = m
        .strip_prefix(b"parse ")
        .or_else(|| m.strip_prefix(b"bind "))
    {
        (Kind::Parse, r)
    } else {
        return None;
    };
    // The name (`<unnamed>`, `S_1`, `S_1/C_2`) up to `: `.
    let c = crate::scan::find(rest, b": ")?;
    if rest[..c].contains(&b' ') && !rest[..c].starts_with(b"<unnamed>") {
        return None;
    }
    Some((kind, &rest[c + 2..]))
}

fn emit_pending(
    p: &Pending,
    t: Option<f64>,
    pid: Option<u64>,
    emit: &mut dyn FnMut(&LogEvent<'_>),
) {
    let ev = LogEvent {
        line: p.line,
        offset: p.offset,
        ts: p.ts,
        query: trim_statement(&p.query),
        query_time: t,
        user: p.user.as_deref().map(Cow::Borrowed),
        host: p.host.as_deref().map(Cow::Borrowed),
        db: p.db.as_deref().map(Cow::Borrowed),
        thread_id: pid,
        postgres: true,
        params: p.params.as_deref().map(Cow::Borrowed),
        ..Default::default()
    };
    emit(&ev);
}

/// A statement without the spaces and `;` that end it (as clients send it).
fn trim_statement(q: &[u8]) -> &[u8] {
    let mut q = q.trim_ascii_end();
    while let Some(r) = q.strip_suffix(b";") {
        q = r.trim_ascii_end();
    }
    q
}

/// One CSV record at `pos`: its fields, where the next starts, the newlines
/// it took, and whether its quotes were closed.
fn csv_record(buf: &[u8], mut pos: usize) -> (Vec<Cow<'_, [u8]>>, usize, u64, bool) {
    let mut fields = Vec::with_capacity(26);
    let mut lines = 0;
    loop {
        if buf.get(pos) == Some(&b'"') {
            // Quoted, `""` inside.
            let mut owned: Option<Vec<u8>> = None;
            let mut i = pos + 1;
            let s = i;
            loop {
                let Some(q) = memchr::memchr(b'"', &buf[i..]).map(|q| i + q) else {
                    lines += memchr::memchr_iter(b'\n', &buf[s..]).count() as u64;
                    fields.push(Cow::Borrowed(&buf[s..]));
                    return (fields, buf.len(), lines, false);
                };
                if buf.get(q + 1) == Some(&b'"') {
                    owned
                        .get_or_insert_with(Vec::new)
                        .extend_from_slice(&buf[i..=q]);
                    i = q + 2;
                    continue;
                }
                lines += memchr::memchr_iter(b'\n', &buf[s..q]).count() as u64;
                let v = match owned {
                    Some(mut o) => {
                        o.extend_from_slice(&buf[i..q]);
                        Cow::Owned(o)
                    }
                    None => Cow::Borrowed(&buf[s..q]),
                };
                fields.push(v);
                pos = q + 1;
                break;
            }
        } else {
            let e = memchr::memchr2(b',', b'\n', &buf[pos..]).map_or(buf.len(), |q| pos + q);
            fields.push(Cow::Borrowed(&buf[pos..e]));
            pos = e;
        }
        match buf.get(pos) {
            Some(b',') => pos += 1,
            Some(b'\n') => return (fields, pos + 1, lines + 1, true),
            None => return (fields, pos, lines, true),
            Some(_) => {
                // Text after a closing quote: skip to the end of the line.
                let e = memchr::memchr(b'\n', &buf[pos..]).map_or(buf.len(), |q| pos + q);
                return (fields, (e + 1).min(buf.len()), lines + 1, false);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    struct Ev {
        line: u64,
        query: String,
        ms: Option<f64>,
        user: Option<String>,
        db: Option<String>,
        host: Option<String>,
        pid: Option<u64>,
        params: Option<String>,
    }

    fn run(kind: PgKind, prefix: &str, text: &str) -> (Vec<Ev>, Vec<BadLine>) {
        let mut p = PgParser::new(kind, Prefix::parse(prefix).unwrap());
        let mut evs = Vec::new();
        let mut bads = Vec::new();
        let s =
            |v: &Option<Cow<'_, [u8]>>| v.as_ref().map(|v| String::from_utf8_lossy(v).into_owned());
        let mut push = |e: &LogEvent<'_>| {
            evs.push(Ev {
                line: e.line,
                query: String::from_utf8_lossy(e.query).into_owned(),
                ms: e.query_time.map(|t| (t * 1e6).round() / 1e3),
                user: s(&e.user),
                db: s(&e.db),
                host: s(&e.host),
                pid: e.thread_id,
                params: s(&e.params),
            })
        };
        // In two chunks cut where the reader would cut.
        let b = text.as_bytes();
        let cut = last_boundary(kind, &b[..b.len() / 2]).unwrap_or(0);
        let line2 = 1 + b[..cut].iter().filter(|&&c| c == b'\n').count() as u64;
        p.parse_chunk(&b[..cut], 1, 0, &mut push, |x| bads.push(x));
        p.parse_chunk(&b[cut..], line2, cut as u64, &mut push, |x| bads.push(x));
        p.finish(&mut push);
        (evs, bads)
    }

    #[test]
    fn prefix_escapes() {
        let p = Prefix::parse("%t [%p-%l] %q%u@%d %h %r app=%a %e %x %v %c ").unwrap();
        let l = b"2026-11-27 10:31:38 UTC [4242-7] alice@shop 10.0.0.1 10.0.0.1(5432) app=psql 00000 0 3/12 6566a1b2.1092 LOG:  x";
        let (f, at) = p.read(l).unwrap();
        assert_eq!(f.pid, Some(4242));
        assert_eq!(f.user, Some(&b"alice"[..]));
        assert_eq!(f.db, Some(&b"shop"[..]));
        assert_eq!(f.host, Some(&b"10.0.0.1"[..]));
        assert_eq!(f.session, Some(&b"6566a1b2.1092"[..]));
        assert_eq!(f.ts, Some(1_795_775_498_000_000));
        assert_eq!(&l[at..], b"LOG:  x");
        // %q: a process without a session stops there.
        let l = b"2026-11-27 10:31:38 UTC [17-1] LOG:  checkpoint starting: time";
        let (f, at) = p.read(l).unwrap();
        assert_eq!((f.pid, f.user), (Some(17), None));
        assert_eq!(&l[at..], b"LOG:  checkpoint starting: time");
        let m = Prefix::parse("%m [%p] ").unwrap();
        let (f, _) = m.read(b"2026-11-27 11:31:38.250 +01 [9] LOG:  x").unwrap();
        assert_eq!(f.ts, Some(1_795_775_498_250_000));
        assert!(Prefix::parse("%m %z").unwrap_err().contains("%z"));
        let padded = Prefix::parse("%t [%5p] %-8u@%d: ").unwrap();
        let l = b"2026-11-27 10:31:38 UTC [   42] bob     @shop: LOG:  x";
        let (f, at) = padded.read(l).unwrap();
        assert_eq!(
            (f.pid, f.user, f.db),
            (Some(42), Some(&b"bob"[..]), Some(&b"shop"[..]))
        );
        assert_eq!(&l[at..], b"LOG:  x");
        assert!(m.read(b"garbage").is_none());
    }

    const STDERR: &str = "\
2026-11-27 10:31:38.100 UTC [11] LOG:  database system is ready to accept connections
2026-11-27 10:31:38.200 UTC [12] alice@shop LOG:  duration: 0.250 ms  statement: SELECT c FROM t WHERE id = 5
2026-11-27 10:31:38.300 UTC [12] alice@shop LOG:  duration: 1.500 ms  statement: SELECT a,
\t  b
\tFROM t
\tWHERE id IN (1, 2, 3)
2026-11-27 10:31:38.400 UTC [13] bob@shop LOG:  duration: 0.100 ms  parse S_1: SELECT c FROM t WHERE id = $1
2026-11-27 10:31:38.410 UTC [13] bob@shop LOG:  duration: 0.050 ms  bind S_1: SELECT c FROM t WHERE id = $1
2026-11-27 10:31:38.411 UTC [13] bob@shop DETAIL:  parameters: $1 = '7'
2026-11-27 10:31:38.420 UTC [13] bob@shop LOG:  duration: 0.200 ms  execute S_1: SELECT c FROM t WHERE id = $1
2026-11-27 10:31:38.421 UTC [13] bob@shop DETAIL:  parameters: $1 = '7'
2026-11-27 10:31:38.500 UTC [12] alice@shop ERROR:  relation \"nope\" does not exist at character 15
2026-11-27 10:31:38.500 UTC [12] alice@shop STATEMENT:  SELECT * FROM nope
this line is not from postgres
2026-11-27 10:31:38.600 UTC [14] carol@crm LOG:  statement: UPDATE t SET v = 'x' WHERE id = 1
2026-11-27 10:31:38.601 UTC [15] carol@crm LOG:  statement: BEGIN
2026-11-27 10:31:38.700 UTC [14] carol@crm LOG:  duration: 3.000 ms
2026-11-27 10:31:38.701 UTC [15] carol@crm LOG:  duration: 0.010 ms
2026-11-27 10:31:38.800 UTC [14] carol@crm LOG:  statement: SELECT 1/0
2026-11-27 10:31:38.800 UTC [14] carol@crm ERROR:  division by zero
2026-11-27 10:31:38.800 UTC [14] carol@crm STATEMENT:  SELECT 1/0
2026-11-27 10:31:38.900 UTC [14] carol@crm LOG:  statement: COMMIT
2026-11-27 10:31:39.000 UTC [16] dave@shop LOG:  execute S_2: SELECT c FROM t WHERE id = $1 AND k = $2
2026-11-27 10:31:39.000 UTC [16] dave@shop DETAIL:  parameters: $1 = '9', $2 = 'it''s'
2026-11-27 10:31:39.100 UTC [16] dave@shop LOG:  duration: 0.500 ms
";

    #[test]
    fn stderr_statements_pairs_and_extended_protocol() {
        let (evs, bads) = run(PgKind::Stderr, DEBIAN_PREFIX, STDERR);
        let q: Vec<(&str, Option<f64>)> = evs.iter().map(|e| (e.query.as_str(), e.ms)).collect();
        assert_eq!(
            q,
            [
                ("SELECT c FROM t WHERE id = 5", Some(0.25)),
                (
                    "SELECT a,\n\t  b\n\tFROM t\n\tWHERE id IN (1, 2, 3)",
                    Some(1.5)
                ),
                ("SELECT c FROM t WHERE id = $1", Some(0.35)),
                ("UPDATE t SET v = 'x' WHERE id = 1", Some(3.0)),
                ("BEGIN", Some(0.01)),
                ("SELECT 1/0", None),
                ("SELECT c FROM t WHERE id = $1 AND k = $2", Some(0.5)),
                ("COMMIT", None),
            ]
        );
        // The parameters of the extended protocol's statements, from the
        // DETAIL entry after the execute, or before its duration.
        assert_eq!(evs[2].params.as_deref(), Some("$1 = '7'"));
        assert_eq!(evs[6].params.as_deref(), Some("$1 = '9', $2 = 'it''s'"));
        assert_eq!(evs[0].params, None);
        assert_eq!(evs[0].line, 2);
        assert_eq!(evs[2].line, 10);
        assert_eq!(
            (evs[0].user.as_deref(), evs[0].db.as_deref()),
            (Some("alice"), Some("shop"))
        );
        assert_eq!(evs[3].pid, Some(14));
        assert_eq!(bads.len(), 1, "{bads:?}");
        assert_eq!(bads[0].line, 14);
    }

    #[test]
    fn csvlog_quoting_and_newlines() {
        let text = "\
2026-11-27 10:31:38.200 UTC,\"alice\",\"shop\",12,\"10.0.0.1:51234\",6566a1b2.c,1,\"SELECT\",2026-11-27 10:31:30 UTC,3/4,0,LOG,00000,\"duration: 0.250 ms  statement: SELECT \"\"Name\"\" FROM t
  WHERE v = 'a,b'\",,,,,,,,,\"psql\",\"client backend\",,0
2026-11-27 10:31:38.300 UTC,\"alice\",\"shop\",12,\"10.0.0.1:51234\",6566a1b2.c,2,\"SELECT\",2026-11-27 10:31:30 UTC,3/5,0,ERROR,42P01,\"relation \"\"x\"\" does not exist\",,,,,,\"select * from x\",15,,\"psql\",\"client backend\",,0
not,a,record
2026-11-27 10:31:38.400 UTC,\"bob\",\"crm\",13,\"[local]\",6566a1b2.d,1,\"SELECT\",2026-11-27 10:31:30 UTC,3/6,0,LOG,00000,\"duration: 2.000 ms  execute <unnamed>: SELECT 1\",\"parameters: $1 = '1'\",,,,,,,,\"\",\"client backend\",,0
";
        let (evs, bads) = run(PgKind::Csv, DEFAULT_PREFIX, text);
        assert_eq!(evs.len(), 2, "{evs:?}");
        assert_eq!(evs[0].query, "SELECT \"Name\" FROM t\n  WHERE v = 'a,b'");
        assert_eq!(evs[0].ms, Some(0.25));
        assert_eq!(evs[0].host.as_deref(), Some("10.0.0.1"));
        assert_eq!(evs[0].user.as_deref(), Some("alice"));
        assert_eq!((evs[1].query.as_str(), evs[1].line), ("SELECT 1", 5));
        assert_eq!(evs[1].db.as_deref(), Some("crm"));
        assert_eq!(evs[1].params.as_deref(), Some("$1 = '1'"));
        assert_eq!(evs[0].params, None);
        assert_eq!(bads.len(), 1, "{bads:?}");
        assert_eq!(bads[0].line, 4);
        assert_eq!(looks_like(text.as_bytes()), Some(PgKind::Csv));
    }

    #[test]
    fn jsonlog_records() {
        let text = r#"{"timestamp":"2026-11-27 10:31:38.200 UTC","user":"alice","dbname":"shop","pid":12,"remote_host":"10.0.0.1","remote_port":51234,"session_id":"6566a1b2.c","line_num":1,"ps":"SELECT","session_start":"2026-11-27 10:31:30 UTC","vxid":"3/4","txid":0,"error_severity":"LOG","message":"duration: 0.250 ms  statement: SELECT 'a\nb'","application_name":"psql","backend_type":"client backend","query_id":0}
{"timestamp":"2026-11-27 10:31:38.300 UTC","pid":12,"error_severity":"LOG","message":"statement: SELECT 2"}
{"timestamp": broken
{"timestamp":"2026-11-27 10:31:38.400 UTC","pid":12,"error_severity":"LOG","message":"duration: 4.000 ms"}
"#;
        let (evs, bads) = run(PgKind::Json, DEFAULT_PREFIX, text);
        assert_eq!(evs.len(), 2, "{evs:?}");
        assert_eq!(evs[0].query, "SELECT 'a\nb'");
        assert_eq!(evs[0].host.as_deref(), Some("10.0.0.1"));
        assert_eq!((evs[1].query.as_str(), evs[1].ms), ("SELECT 2", Some(4.0)));
        assert_eq!(
            evs[1].user.as_deref(),
            Some("alice"),
            "the session's user carries"
        );
        assert_eq!(bads.len(), 1);
        assert_eq!(bads[0].line, 3);
        assert_eq!(looks_like(text.as_bytes()), Some(PgKind::Json));
    }

    #[test]
    fn detection_and_prefix_choice() {
        assert_eq!(looks_like(STDERR.as_bytes()), Some(PgKind::Stderr));
        let cands = [
            Prefix::parse(DEFAULT_PREFIX).unwrap(),
            Prefix::parse(DEBIAN_PREFIX).unwrap(),
        ];
        assert_eq!(
            choose_prefix(STDERR.as_bytes(), &cands).unwrap().text(),
            DEBIAN_PREFIX
        );
        let plain =
            "2026-11-27 10:31:38.200 UTC [12] LOG:  duration: 0.250 ms  statement: SELECT 1\n";
        assert_eq!(
            choose_prefix(plain.as_bytes(), &cands).unwrap().text(),
            DEFAULT_PREFIX
        );
        assert_eq!(looks_like(b"# Time: 261127 10:31:38\n"), None);
    }
}
