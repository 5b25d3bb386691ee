//! The MySQL/MariaDB slow query log, read as pt-query-digest reads it
//! (percona-toolkit's `SlowLogParser`): events end at `;\n#`; in an event,
//! lines that start with `#`, `use ` or `SET timestamp|insert_id|last_insert_id`
//! are its header, and the statement is everything from the first other line
//! to the end of the event.
//!
//! - `# Time:` gives the time (the first one of the event); `# User@Host:`
//!   the user, host (or IP) and, in MySQL 5.7+, the thread id;
//! - `# Key: value  Key: value` lines give attributes, every one by name
//!   (an empty `Schema:` is skipped);
//! - `# administrator command: X` is an administrator command;
//! - `use db;` is the default database (the first one), `SET timestamp=N;`
//!   the time the statement started (preferred to `# Time:`, which MariaDB
//!   writes only when the second changes, in the server's time zone);
//! - the lines the server writes when it starts (`mysqld, Version: ...
//!   started with:`, `Tcp port: ...`, `Time Id Command Argument`) are dropped.

use crate::event::{BadLine, LogEvent, parse_datetime};
use std::borrow::Cow;

/// Where the next event starts in a slow log: after the `;\n` of `;\n#`.
pub fn next_boundary(buf: &[u8], from: usize) -> Option<usize> {
    crate::scan::find(&buf[from.min(buf.len())..], b";\n#").map(|p| from + p + 2)
}

/// Where the last event that starts in `buf` starts (a cut point for a chunk:
/// everything before it is whole events). An event with no statement takes
/// its statement from the next one (as pt-query-digest reads it), so a cut
/// goes after an event that has one.
pub fn last_boundary(buf: &[u8]) -> Option<usize> {
    let mut end = buf.len();
    let mut first = None;
    for _ in 0..64 {
        let Some(p) = crate::scan::rfind(&buf[..end], b";\n#") else {
            break;
        };
        let cut = p + 2;
        first.get_or_insert(cut);
        let prev = crate::scan::rfind(&buf[..p], b";\n#").map_or(0, |q| q + 2);
        if has_statement_line(&buf[prev..cut]) {
            return Some(cut);
        }
        end = p;
    }
    first
}

/// Whether a record is whole by itself: it has a statement (a line that is
/// not a header line, or an administrator command), or it cannot take one
/// from the next lines (its last header line does not end it).
fn has_statement_line(record: &[u8]) -> bool {
    let body = record.strip_suffix(b";\n").unwrap_or(record);
    body.ends_with(b"\n")
        || body
            .split(|&b| b == b'\n')
            .any(|l| !is_header_line(l) || l.starts_with(b"# administrator command:"))
}

fn is_header_line(l: &[u8]) -> bool {
    l.starts_with(b"#")
        || l.starts_with(b"use ")
        || l.starts_with(b"SET timestamp")
        || l.starts_with(b"SET insert_id")
        || l.starts_with(b"SET last_insert_id")
}

/// Whether the head of an input looks like a slow log.
pub fn looks_like(head: &[u8]) -> bool {
    let f = |n: &[u8]| crate::scan::find(head, n).is_some();
    f(b"# Query_time:") || f(b"# User@Host:") || (f(b"# Time:") && f(b"SET timestamp="))
}

/// Reads the events of a chunk of whole events. `first_line` and `offset`
/// are where the chunk starts in its input; `file_start`: whether the chunk
/// is the start of the input (its first event may lack the leading `#`).
pub fn parse_chunk<'a>(
    chunk: &'a [u8],
    first_line: u64,
    offset: u64,
    file_start: bool,
    mut emit: impl FnMut(&LogEvent<'a>),
    mut bad: impl FnMut(BadLine),
) {
    let mut start = 0;
    let mut line = first_line;
    let mut ev = LogEvent::default();
    // The first line of the next record is read as a comment: at the start
    // of an input, and after a statement taken from the next record.
    let mut comment_first = file_start;
    while start < chunk.len() {
        let end = next_boundary(chunk, start).unwrap_or(chunk.len());
        let record = &chunk[start..end];
        ev.attrs.clear();
        let parsed = parse_record(
            record,
            line,
            offset + start as u64,
            comment_first,
            &mut ev,
            &mut bad,
        );
        comment_first = false;
        line += memchr::memchr_iter(b'\n', record).count() as u64;
        match parsed {
            Parsed::Event => emit(&ev),
            Parsed::Nothing => {}
            Parsed::NoStatement if end < chunk.len() => {
                // pt-query-digest reads on to the next `;\n`, after the `#`
                // that ended this event: attribute lines there are the next
                // event (this one is `/* No query */`); anything else is this
                // event's statement, an administrator command.
                let from = end + 1;
                let piece_end =
                    crate::scan::find(&chunk[from..], b";\n").map_or(chunk.len(), |p| from + p);
                let piece = &chunk[from..piece_end];
                if attribute_start(piece) {
                    ev.query = b"/* No query */";
                    emit(&ev);
                } else {
                    ev.query = piece.trim_ascii_start();
                    ev.admin = true;
                    emit(&ev);
                    let next = (piece_end + 2).min(chunk.len());
                    line += memchr::memchr_iter(b'\n', &chunk[end..next]).count() as u64;
                    start = next;
                    comment_first = true;
                    continue;
                }
            }
            Parsed::NoStatement => bad(BadLine {
                line: ev.line,
                reason: "an event without a statement".into(),
            }),
        }
        start = end;
    }
}

/// `^\s*[A-Z][a-z_]+: `.
fn attribute_start(p: &[u8]) -> bool {
    let p = p.trim_ascii_start();
    let n = p.get(1..).map_or(0, |r| {
        r.iter()
            .take_while(|&&b| b.is_ascii_lowercase() || b == b'_')
            .count()
    });
    p.first().is_some_and(u8::is_ascii_uppercase) && n > 0 && p[1 + n..].starts_with(b": ")
}

/// What a record held.
enum Parsed {
    Event,
    /// Header lines only: the statement is in what follows.
    NoStatement,
    /// Nothing to count (the server's own lines, an empty statement).
    Nothing,
}

/// `^(?:T[cC][pP]\s[pP]ort:\s+\d+|[/A-Z].*mysqld,\sVersion.*(?:started\swith:|embedded\slibrary)|Time\s+Id\s+Command)`
fn server_header(l: &[u8]) -> bool {
    let sp = |b: u8| b.is_ascii_whitespace() || b == 0x0b;
    if l.len() > 9 && l[..3].eq_ignore_ascii_case(b"tcp") && l[0] == b'T' && sp(l[3]) {
        let r = &l[4..];
        if r.len() > 5 && (r[0] == b'p' || r[0] == b'P') && &r[1..5] == b"ort:" {
            let t = &r[5..];
            let ws = t.iter().take_while(|&&b| sp(b)).count();
            return ws > 0 && t.get(ws).is_some_and(u8::is_ascii_digit);
        }
        return false;
    }
    if l.first()
        .is_some_and(|&b| b == b'/' || b.is_ascii_uppercase())
        && let Some(p) = crate::scan::find(l, b"mysqld,")
        && l.get(p + 7).is_some_and(|&b| sp(b))
        && l[p + 8..].starts_with(b"Version")
    {
        let rest = &l[p + 15..];
        let ws_has = |a: &[u8], b: &[u8]| {
            memchr::memmem::find_iter(rest, a).any(|q| {
                rest.get(q + a.len()).is_some_and(|&c| sp(c))
                    && rest[q + a.len() + 1..].starts_with(b)
            })
        };
        if ws_has(b"started", b"with:") || ws_has(b"embedded", b"library") {
            return true;
        }
    }
    if let Some(r) = l.strip_prefix(b"Time") {
        let a = r.iter().take_while(|&&b| sp(b)).count();
        if a > 0 && r[a..].starts_with(b"Id") {
            let r = &r[a + 2..];
            let b = r.iter().take_while(|&&b| sp(b)).count();
            return b > 0 && r[b..].starts_with(b"Command");
        }
    }
    false
}

fn parse_u64(v: &[u8]) -> Option<u64> {
    if v.is_empty() || !v.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(v).ok()?.parse().ok()
}

/// The number at the start of a value (`\d+(?:\.\d+)?`), as pt-query-digest
/// reads `Query_time`.
pub fn parse_leading_f64(v: &[u8]) -> Option<f64> {
    let d = v.iter().take_while(|b| b.is_ascii_digit()).count();
    if d == 0 {
        return None;
    }
    let mut end = d;
    if v.get(d) == Some(&b'.') {
        let f = v[d + 1..].iter().take_while(|b| b.is_ascii_digit()).count();
        if f > 0 {
            end = d + 1 + f;
        }
    }
    std::str::from_utf8(&v[..end]).ok()?.parse().ok()
}

/// `# User@Host: user[user] @ host [ip]  Id: N`.
fn user_host(l: &[u8]) -> Option<(&[u8], &[u8], Option<u64>)> {
    let p = crate::scan::find(l, b"# User@Host: ")?;
    let r = &l[p + 13..];
    let user_end = if r.first() == Some(&b'[') {
        let next_open = memchr::memchr(b'[', &r[1..]).map_or(r.len(), |q| q + 1);
        let close = memchr::memrchr(b']', &r[..next_open])?;
        if close < 2 {
            return None;
        }
        close + 1
    } else {
        let e = memchr::memchr(b'[', r).unwrap_or(r.len());
        if e == 0 {
            return None;
        }
        e
    };
    let user = &r[..user_end];
    let mut search = user_end;
    while let Some(at) = crate::scan::find(&r[search..], b"@ ") {
        let h = search + at + 2;
        search = search + at + 1;
        let host_end = h + r[h..]
            .iter()
            .take_while(|b| !b.is_ascii_whitespace())
            .count();
        if !r[host_end..].starts_with(b" [") {
            continue;
        }
        let ip_start = host_end + 2;
        let Some(close) = memchr::memrchr(b']', &r[ip_start..]) else {
            continue;
        };
        let ip = &r[ip_start..ip_start + close];
        let host = if host_end > h { &r[h..host_end] } else { ip };
        let tail = r[ip_start + close + 1..].trim_ascii_start();
        let id = tail
            .strip_prefix(b"Id:")
            .map(|t| t.trim_ascii_start())
            .and_then(|t| parse_u64(&t[..t.iter().take_while(|b| b.is_ascii_digit()).count()]));
        return Some((user, host, id));
    }
    None
}

/// Every `(\w+):\s+(\S+|\Z)` pair of an attribute line.
fn attribute_pairs<'a>(l: &'a [u8], mut f: impl FnMut(&'a [u8], &'a [u8])) {
    let w = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut i = 0;
    while i < l.len() {
        if !w(l[i]) {
            i += 1;
            continue;
        }
        let s = i;
        while i < l.len() && w(l[i]) {
            i += 1;
        }
        if l.get(i) != Some(&b':') || !l.get(i + 1).is_some_and(|b| b.is_ascii_whitespace()) {
            continue;
        }
        let key = &l[s..i];
        let mut j = i + 1;
        while j < l.len() && l[j].is_ascii_whitespace() {
            j += 1;
        }
        let v = j;
        while j < l.len() && !l[j].is_ascii_whitespace() {
            j += 1;
        }
        f(key, &l[v..j]);
        i = j;
    }
}

fn strip_backticks(v: &[u8]) -> &[u8] {
    let v = v.strip_prefix(b"`").unwrap_or(v);
    v.strip_suffix(b"`").unwrap_or(v)
}

/// Reads one event; false when it has no statement (reported as malformed).
fn parse_record<'a>(
    record: &'a [u8],
    first_line: u64,
    offset: u64,
    file_start: bool,
    ev: &mut LogEvent<'a>,
    bad: &mut impl FnMut(BadLine),
) -> Parsed {
    // The separator's `;\n` (`;\n#?\Z`).
    let body = if let Some(b) = record.strip_suffix(b";\n") {
        b
    } else if let Some(b) = record.strip_suffix(b";\n\n") {
        &record[..b.len() + 1]
    } else {
        record
    };
    ev.line = first_line;
    ev.offset = offset;
    ev.ts = None;
    ev.query = b"";
    ev.admin = false;
    ev.query_time = None;
    ev.lock_time = None;
    ev.rows_sent = None;
    ev.rows_examined = None;
    ev.user = None;
    ev.host = None;
    ev.db = None;
    ev.thread_id = None;
    let (mut got_ts, mut got_uh, mut got_ac, mut got_db, mut got_set) =
        (false, false, false, false, false);
    let mut time_line: Option<i64> = None;
    let mut set_ts: Option<i64> = None;
    let mut schema: Option<&'a [u8]> = None;
    let mut found = false;
    let mut pos = 0;
    let mut line_no = first_line;
    let mut first = true;
    let mut started = false;
    while pos <= body.len() {
        let nl = memchr::memchr(b'\n', &body[pos..]).map(|p| pos + p);
        let l = &body[pos..nl.unwrap_or(body.len())];
        let next = nl.map_or(body.len() + 1, |p| p + 1);
        let this_line = line_no;
        line_no += 1;
        // A file's first event may start with the server's own lines, and
        // pt-query-digest reads its first line as a comment when it does not
        // start with `#`.
        if nl.is_some() && server_header(l) {
            pos = next;
            continue;
        }
        let as_comment = first && file_start && !l.starts_with(b"#");
        first = false;
        if pos == body.len() && nl.is_none() && l.is_empty() {
            break;
        }
        let header = as_comment
            || l.starts_with(b"#")
            || l.starts_with(b"use ")
            || l.starts_with(b"SET timestamp")
            || l.starts_with(b"SET insert_id")
            || l.starts_with(b"SET last_insert_id");
        if !header {
            if !started {
                ev.line = this_line;
            }
            ev.query = &body[pos..];
            found = true;
            break;
        }
        if as_comment {
            pos = next;
            continue;
        }
        if !started {
            started = true;
            ev.line = this_line;
        }
        if !got_ts && l.starts_with(b"# Time: ") {
            got_ts = true;
            let v = &l[8..];
            let v = &v[..v
                .len()
                .min(if v.get(10) == Some(&b'T') || v.get(4) == Some(&b'-') {
                    26
                } else {
                    15
                })];
            match parse_datetime(v) {
                Some(t) => time_line = Some(t),
                None => bad(BadLine {
                    line: this_line,
                    reason: format!("cannot read the time in '{}'", lossy(l)),
                }),
            }
            if !got_uh && let Some((u, h, id)) = user_host(l) {
                got_uh = true;
                ev.user = Some(Cow::Borrowed(u));
                ev.host = Some(Cow::Borrowed(h));
                if id.is_some() {
                    ev.thread_id = id;
                }
            }
        } else if !got_uh && crate::scan::find(l, b"# User@Host: ").is_some() {
            got_uh = true;
            match user_host(l) {
                Some((u, h, id)) => {
                    ev.user = Some(Cow::Borrowed(u));
                    ev.host = Some(Cow::Borrowed(h));
                    if id.is_some() {
                        ev.thread_id = id;
                    }
                }
                None => bad(BadLine {
                    line: this_line,
                    reason: format!("cannot read user and host in '{}'", lossy(l)),
                }),
            }
        } else if !got_ac && l.starts_with(b"# administrator command:") {
            got_ac = true;
            ev.query = l[1..].trim_ascii_start();
            ev.admin = true;
            found = true;
        } else if is_attribute_line(l) {
            // An empty `Schema:` is dropped: the pairs are read on each side
            // of it (no pair spans it).
            let (a, b) = match empty_schema(l) {
                Some((from, to)) => (&l[..from], &l[to..]),
                None => (l, &b""[..]),
            };
            let mut put = |k: &'a [u8], v: &'a [u8]| match k {
                b"Query_time" => {
                    ev.query_time = parse_leading_f64(v);
                    if ev.query_time.is_none() {
                        bad(BadLine {
                            line: this_line,
                            reason: format!("Query_time '{}' is not a number", lossy(v)),
                        });
                    }
                }
                b"Lock_time" => ev.lock_time = parse_leading_f64(v),
                b"Rows_sent" => ev.rows_sent = parse_u64(v),
                b"Rows_examined" => ev.rows_examined = parse_u64(v),
                b"Thread_id" | b"Id" => ev.thread_id = parse_u64(v),
                b"Schema" => schema = Some(v),
                _ => ev.attrs.push((k, v)),
            };
            attribute_pairs(a, &mut put);
            attribute_pairs(b, &mut put);
        } else if !got_db && l.starts_with(b"use ") {
            let v = &l[4..];
            let v = &v[..memchr::memchr(b';', v).unwrap_or(v.len())];
            if !v.is_empty() {
                got_db = true;
                ev.db = Some(Cow::Borrowed(strip_backticks(v)));
            }
        } else if !got_set && l.starts_with(b"SET") {
            got_set = true;
            let v = l[3..].trim_ascii_start();
            let v = &v[..memchr::memchr(b';', v).unwrap_or(v.len())];
            for part in v.split(|&b| b == b',') {
                if let Some(eq) = memchr::memchr(b'=', part)
                    && part[..eq].trim_ascii() == b"timestamp"
                {
                    match parse_u64(part[eq + 1..].trim_ascii()) {
                        Some(t) => set_ts = Some(t as i64 * 1_000_000),
                        None => bad(BadLine {
                            line: this_line,
                            reason: format!("cannot read the timestamp in '{}'", lossy(l)),
                        }),
                    }
                }
            }
        }
        pos = next;
    }
    if ev.db.is_none()
        && let Some(s) = schema
        && !s.is_empty()
    {
        ev.db = Some(Cow::Borrowed(strip_backticks(s)));
    }
    ev.ts = set_ts.or(time_line);
    if !found {
        // The server's own lines and nothing else are no event.
        if body.iter().all(|b| b.is_ascii_whitespace())
            || record_is_only_server_lines(body, file_start)
        {
            return Parsed::Nothing;
        }
        // pt-query-digest looks past the event only when its last header
        // line ends it (`$pos == $len`): a statement on the next line.
        if !body.ends_with(b"\n") {
            return Parsed::NoStatement;
        }
        bad(BadLine {
            line: ev.line,
            reason: "an event without a statement".into(),
        });
        return Parsed::Nothing;
    }
    if ev.query.is_empty() {
        bad(BadLine {
            line: ev.line,
            reason: "an event with an empty statement".into(),
        });
        return Parsed::Nothing;
    }
    Parsed::Event
}

fn record_is_only_server_lines(body: &[u8], file_start: bool) -> bool {
    let mut first = true;
    body.split(|&b| b == b'\n').all(|l| {
        let r = l.is_empty() || server_header(l) || (first && file_start && !l.starts_with(b"#"));
        first = false;
        r
    })
}

/// `^# +[A-Z][A-Za-z_]+: \S+`.
fn is_attribute_line(l: &[u8]) -> bool {
    let Some(r) = l.strip_prefix(b"#") else {
        return false;
    };
    let sp = r.iter().take_while(|&&b| b == b' ').count();
    if sp == 0 {
        return false;
    }
    let r = &r[sp..];
    if !r.first().is_some_and(u8::is_ascii_uppercase) {
        return false;
    }
    let n = r[1..]
        .iter()
        .take_while(|&&b| b.is_ascii_alphabetic() || b == b'_')
        .count();
    n > 0 && r[1 + n..].starts_with(b": ") && r.get(3 + n).is_some_and(|b| !b.is_ascii_whitespace())
}

/// `Schema:\s+\w+: `: the span of `Schema:\s+` to drop.
fn empty_schema(l: &[u8]) -> Option<(usize, usize)> {
    let p = crate::scan::find(l, b"Schema:")?;
    let mut j = p + 7;
    let ws = j;
    while j < l.len() && l[j].is_ascii_whitespace() {
        j += 1;
    }
    if j == ws {
        return None;
    }
    let w = j;
    while j < l.len() && (l[j].is_ascii_alphanumeric() || l[j] == b'_') {
        j += 1;
    }
    (j > w && l[j..].starts_with(b": ")).then_some((p, w))
}

pub(crate) fn lossy(b: &[u8]) -> String {
    let s = String::from_utf8_lossy(b);
    if s.len() > 120 {
        let mut e = 120;
        while !s.is_char_boundary(e) {
            e -= 1;
        }
        format!("{}...", &s[..e])
    } else {
        s.into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MARIADB: &str =
        "mariadbd, Version: 10.11.19-MariaDB-0+deb12u1-log (Debian 12). started with:
Tcp port: 0  Unix socket: /tmp/dg/sock
Time\t\t    Id Command\tArgument
# Time: 261127 10:31:38
# User@Host: root[root] @ localhost []
# Thread_id: 3  Schema:   QC_hit: No
# Query_time: 0.000255  Lock_time: 0.000000  Rows_sent: 0  Rows_examined: 0
# Rows_affected: 1  Bytes_sent: 11
SET timestamp=1795775498;
create database t;
# User@Host: app[app] @ web1 [10.0.0.1]
# Thread_id: 4  Schema: t  QC_hit: No
# Query_time: 0.008185  Lock_time: 0.000690  Rows_sent: 0  Rows_examined: 0
# Rows_affected: 2  Bytes_sent: 50
# Full_scan: Yes  Full_join: No  Tmp_table: No  Tmp_table_on_disk: No
#
# explain: id\tselect_type\ttable
#
use `t`;
SET timestamp=1795775499;
insert into a values (1,'x'),
(2,'y');
";

    type Seen = Vec<(String, Option<String>, Option<f64>, Vec<String>)>;

    fn events(log: &str) -> (Seen, Vec<BadLine>) {
        let mut out = Vec::new();
        let mut bads = Vec::new();
        parse_chunk(
            log.as_bytes(),
            1,
            0,
            true,
            |e| {
                out.push((
                    String::from_utf8_lossy(e.query).into_owned(),
                    e.db.as_ref()
                        .map(|d| String::from_utf8_lossy(d).into_owned()),
                    e.query_time,
                    e.attrs
                        .iter()
                        .map(|(k, v)| format!("{}={}", lossy(k), lossy(v)))
                        .collect(),
                ))
            },
            |b| bads.push(b),
        );
        (out, bads)
    }

    #[test]
    fn mariadb_events_with_every_attribute() {
        let (ev, bad) = events(MARIADB);
        assert!(bad.is_empty(), "{bad:?}");
        assert_eq!(ev.len(), 2);
        assert_eq!(ev[0].0, "create database t");
        assert_eq!(ev[0].1, None);
        assert_eq!(ev[0].2, Some(0.000255));
        assert_eq!(ev[0].3, ["QC_hit=No", "Rows_affected=1", "Bytes_sent=11"]);
        assert_eq!(ev[1].0, "insert into a values (1,'x'),\n(2,'y')");
        assert_eq!(ev[1].1.as_deref(), Some("t"));
        assert!(ev[1].3.contains(&"Full_scan=Yes".to_string()));
        assert!(ev[1].3.contains(&"Tmp_table_on_disk=No".to_string()));
    }

    #[test]
    fn times_users_and_hosts() {
        let mut seen = Vec::new();
        parse_chunk(
            MARIADB.as_bytes(),
            1,
            0,
            true,
            |e| {
                seen.push((
                    e.ts,
                    e.user.as_deref().map(lossy),
                    e.host.as_deref().map(lossy),
                    e.thread_id,
                    e.line,
                ))
            },
            |_| {},
        );
        assert_eq!(
            seen[0],
            (
                Some(1_795_775_498_000_000),
                Some("root".into()),
                Some("localhost".into()),
                Some(3),
                4
            )
        );
        assert_eq!(
            seen[1],
            (
                Some(1_795_775_499_000_000),
                Some("app".into()),
                Some("web1".into()),
                Some(4),
                11
            )
        );
    }

    #[test]
    fn mysql8_header_line_and_ip_host() {
        let log = "/usr/sbin/mysqld, Version: 8.0.36 (MySQL Community Server - GPL). started with:
Tcp port: 3306  Unix socket: /var/run/mysqld/mysqld.sock
Time                 Id Command    Argument
# Time: 2026-11-27T10:31:38.123456Z
# User@Host: root[root] @  [127.0.0.1]  Id:     8
# Query_time: 1.5  Lock_time: 0.000001 Rows_sent: 1  Rows_examined: 10
SET timestamp=1795775498;
select 1;
";
        let mut seen = Vec::new();
        parse_chunk(
            log.as_bytes(),
            1,
            0,
            true,
            |e| {
                seen.push((
                    lossy(e.host.as_deref().unwrap_or(b"")),
                    e.thread_id,
                    e.rows_examined,
                    e.line,
                ))
            },
            |b| panic!("{b:?}"),
        );
        assert_eq!(seen, [("127.0.0.1".to_string(), Some(8), Some(10), 4)]);
    }

    #[test]
    fn percona_attributes_and_administrator_commands() {
        let log = "# Time: 091112 17:29:39
# User@Host: root[root] @ localhost []
# Thread_id: 5  Schema: sakila  Last_errno: 0  Killed: 0
# Query_time: 0.000182  Lock_time: 0.000000  Rows_sent: 0  Rows_examined: 0  Rows_affected: 0  Rows_read: 0
# Bytes_sent: 101  Tmp_tables: 1  Tmp_disk_tables: 0  Tmp_table_sizes: 0
# InnoDB_trx_id: 1A03
# QC_Hit: No  Full_scan: Yes  Full_join: No  Tmp_table: Yes  Tmp_table_on_disk: No
# Filesort: No  Filesort_on_disk: No  Merge_passes: 0
#   InnoDB_IO_r_ops: 2  InnoDB_IO_r_bytes: 32768  InnoDB_IO_r_wait: 0.000041
#   InnoDB_rec_lock_wait: 0.000000  InnoDB_queue_wait: 0.000000
#   InnoDB_pages_distinct: 3
SET timestamp=1258064979;
select * from film where film_id = 1;
# User@Host: root[root] @ localhost []
# Query_time: 0.000010  Lock_time: 0.000000  Rows_sent: 5  Rows_examined: 5
SET timestamp=1258064980;
# administrator command: Quit;
";
        let (ev, bad) = events(log);
        assert!(bad.is_empty(), "{bad:?}");
        assert_eq!(ev.len(), 2);
        assert_eq!(ev[0].1.as_deref(), Some("sakila"));
        for a in [
            "Tmp_tables=1",
            "InnoDB_trx_id=1A03",
            "Full_scan=Yes",
            "InnoDB_IO_r_ops=2",
            "InnoDB_IO_r_wait=0.000041",
            "InnoDB_pages_distinct=3",
            "Last_errno=0",
        ] {
            assert!(ev[0].3.contains(&a.to_string()), "{a}: {:?}", ev[0].3);
        }
        assert_eq!(ev[1].0, "administrator command: Quit");
    }

    #[test]
    fn statements_taken_from_the_next_lines_as_pt_query_digest_does() {
        // An event whose last header line ends it takes the next `;\n` piece:
        // an administrator command, or, when that is attribute lines, no
        // query (pt-query-digest 3.2.1 gives these same five classes).
        let log = "# User@Host: root[root] @ localhost []
# Query_time: 0.000010  Lock_time: 0.000000  Rows_sent: 5  Rows_examined: 5
SET timestamp=1258064980;
# administrator command: Quit;
# User@Host: root[root] @ localhost []
# Query_time: 0.000020  Lock_time: 0.000000  Rows_sent: 0  Rows_examined: 0
use sakila;
SET timestamp=1258064981;
# Query_time: 0.000030  Lock_time: 0.000000  Rows_sent: 0  Rows_examined: 0
SET timestamp=1258064982;
select 2;
";
        let mut seen = Vec::new();
        parse_chunk(
            log.as_bytes(),
            1,
            0,
            true,
            |e| seen.push((lossy(e.query), e.admin, e.query_time, e.line)),
            |b| panic!("{b:?}"),
        );
        assert_eq!(
            seen,
            [
                (
                    "administrator command: Quit".to_string(),
                    true,
                    Some(0.00001),
                    1
                ),
                ("/* No query */".to_string(), false, Some(0.00002), 5),
                ("select 2".to_string(), false, Some(0.00003), 9),
            ]
        );
        // A cut between chunks never leaves such an event without its next lines.
        let cut = last_boundary(log.as_bytes()).unwrap();
        assert!(
            log[cut..]
                .starts_with("# User@Host: root[root] @ localhost []\n# Query_time: 0.000020"),
            "{}",
            &log[cut..]
        );
    }

    #[test]
    fn malformed_lines_are_reported_with_their_numbers() {
        let log = "# Time: 26xx27 10:31:38
# User@Host: root[root] @ localhost []
# Query_time: fast  Lock_time: 0.0
SET timestamp=1795775498;
select 1;
# User@Host: root[root] @ localhost []
# Query_time: 0.1  Lock_time: 0.0
;
# User@Host: root[root] @ localhost []
# Query_time: 0.2  Lock_time: 0.0
select 2;
";
        let (ev, bad) = events(log);
        assert_eq!(ev.len(), 2, "{ev:?}");
        assert_eq!(ev[1].0, "select 2");
        let lines: Vec<u64> = bad.iter().map(|b| b.line).collect();
        assert_eq!(lines, [1, 3, 6], "{bad:?}");
        assert!(bad[1].reason.contains("Query_time 'fast'"));
    }

    #[test]
    fn boundaries() {
        let b = MARIADB.as_bytes();
        let first = next_boundary(b, 0).unwrap();
        assert!(b[first..].starts_with(b"# User@Host: app"));
        assert_eq!(last_boundary(b), Some(first));
        assert!(looks_like(b));
        assert!(!looks_like(b"select 1;\n"));
    }
}
