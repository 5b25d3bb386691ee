//! The MySQL/MariaDB general query log: one line per command,
//! `[TIME]\tID COMMAND\tARGUMENT`, where MariaDB writes the time only when
//! it changes (`261127 10:31:38`) and MySQL 5.7+ on every line
//! (`2026-11-27T10:31:38.123456Z`). A statement may go on over the next
//! lines. `Query` and `Execute` are statements; `Connect` gives the
//! thread's user, host and database, `Init DB` its database. The log has no
//! durations: its events have a count and no Query_time.
//!
//! The time and the threads' users and databases carry from line to line,
//! so one parser reads a general log in order (`GeneralParser` keeps them
//! from one chunk to the next).

use crate::event::{BadLine, LogEvent, parse_datetime};
use std::borrow::Cow;
use std::collections::HashMap;

/// Whether the head of an input looks like a general log.
pub fn looks_like(head: &[u8]) -> bool {
    head.split(|&b| b == b'\n').take(200).any(
        |l| matches!(event_line(l), Some(e) if e.command == b"Query" || e.command == b"Connect"),
    )
}

/// The start of the last line in `buf` that starts an event (a cut point).
pub fn last_boundary(buf: &[u8]) -> Option<usize> {
    let mut end = buf.len();
    while let Some(p) = memchr::memrchr(b'\n', &buf[..end]) {
        let l_end = memchr::memchr(b'\n', &buf[p + 1..]).map_or(buf.len(), |q| p + 1 + q);
        if p + 1 < buf.len() && event_line(&buf[p + 1..l_end]).is_some() {
            return Some(p + 1);
        }
        end = p;
    }
    None
}

struct EventLine<'a> {
    ts: Option<&'a [u8]>,
    thread: u64,
    command: &'a [u8],
    /// Where the argument starts in the line.
    arg_at: usize,
}

/// `(TIME|\t)\t?\s*ID COMMAND\t?ARG`.
fn event_line(l: &[u8]) -> Option<EventLine<'_>> {
    let mut i;
    let ts;
    if l.first() == Some(&b'\t') {
        ts = None;
        i = 1;
    } else if l.first().is_some_and(u8::is_ascii_digit) {
        let tab = memchr::memchr(b'\t', l)?;
        if tab > 32 {
            return None;
        }
        ts = Some(&l[..tab]);
        i = tab + 1;
    } else {
        return None;
    }
    if l.get(i) == Some(&b'\t') {
        i += 1;
    }
    while l.get(i) == Some(&b' ') {
        i += 1;
    }
    let d = i;
    while l.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    if i == d || l.get(i) != Some(&b' ') {
        return None;
    }
    let thread = std::str::from_utf8(&l[d..i]).ok()?.parse().ok()?;
    i += 1;
    let c = i;
    while l
        .get(i)
        .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_' || *b == b' ')
    {
        i += 1;
    }
    if i == c {
        return None;
    }
    let command = l[c..i].trim_ascii_end();
    if l.get(i) == Some(&b'\t') {
        i += 1;
    } else if i < l.len() {
        return None;
    }
    Some(EventLine {
        ts,
        thread,
        command,
        arg_at: i,
    })
}

fn is_server_header(l: &[u8]) -> bool {
    crate::scan::find(l, b", Version: ").is_some()
        && crate::scan::find(l, b"started with:").is_some()
        || l.starts_with(b"Tcp port:")
        || (l.starts_with(b"Time") && crate::scan::find(l, b"Command").is_some())
}

#[derive(Default, Clone)]
struct Thread {
    user: Option<Vec<u8>>,
    host: Option<Vec<u8>>,
    db: Option<Vec<u8>>,
}

/// Reads a general log in order, chunk after chunk.
#[derive(Default)]
pub struct GeneralParser {
    ts: Option<i64>,
    threads: HashMap<u64, Thread>,
    seen_event: bool,
}

impl GeneralParser {
    /// Reads the events of a chunk that starts at a line (an event's, or
    /// the input's first). `first_line` and `offset`: where it starts.
    pub fn parse_chunk<'a>(
        &'a mut self,
        chunk: &'a [u8],
        first_line: u64,
        offset: u64,
        mut emit: impl FnMut(&LogEvent<'_>),
        mut bad: impl FnMut(BadLine),
    ) {
        let mut pos = 0;
        let mut line = first_line;
        // The event being read: its line, offset, thread, command, argument start.
        let mut pending: Option<(u64, usize, u64, Vec<u8>, usize)> = None;
        loop {
            let nl = memchr::memchr(b'\n', &chunk[pos.min(chunk.len())..]).map(|p| pos + p);
            let at_end = pos >= chunk.len();
            let l = if at_end {
                &b""[..]
            } else {
                &chunk[pos..nl.unwrap_or(chunk.len())]
            };
            let ev_line = if at_end { None } else { event_line(l) };
            if (at_end || ev_line.is_some())
                && let Some((ln, start, thread, command, arg)) = pending.take()
            {
                {
                    let end = pos.saturating_sub(1).max(arg);
                    let end = if at_end && !chunk.ends_with(b"\n") {
                        chunk.len()
                    } else {
                        end
                    };
                    self.finish(
                        &chunk[arg..end.min(chunk.len())],
                        ln,
                        offset + start as u64,
                        thread,
                        &command,
                        &mut emit,
                    );
                }
            }
            if at_end {
                break;
            }
            match ev_line {
                Some(e) => {
                    self.seen_event = true;
                    if let Some(t) = e.ts {
                        match parse_datetime(t) {
                            Some(ts) => self.ts = Some(ts),
                            None => bad(BadLine {
                                line,
                                reason: format!(
                                    "cannot read the time '{}'",
                                    crate::slowlog::lossy(t)
                                ),
                            }),
                        }
                    }
                    pending = Some((line, pos, e.thread, e.command.to_vec(), pos + e.arg_at));
                }
                None => {
                    if pending.is_none() && !l.trim_ascii().is_empty() && !is_server_header(l) {
                        bad(BadLine {
                            line,
                            reason: format!(
                                "not a general log line: '{}'",
                                crate::slowlog::lossy(l)
                            ),
                        });
                    }
                }
            }
            line += 1;
            pos = match nl {
                Some(p) => p + 1,
                None => chunk.len(),
            };
        }
    }

    fn finish(
        &mut self,
        arg: &[u8],
        line: u64,
        offset: u64,
        thread: u64,
        command: &[u8],
        emit: &mut impl FnMut(&LogEvent<'_>),
    ) {
        let denied = command == b"Connect" && arg.starts_with(b"Access denied");
        match command {
            b"Connect" if !denied => {
                // `user@host on db using Socket`
                let t = self.threads.entry(thread).or_default();
                let (who, rest) = match crate::scan::find(arg, b" on ") {
                    Some(p) => (&arg[..p], &arg[p + 4..]),
                    None => (arg, &b""[..]),
                };
                if let Some(at) = memchr::memrchr(b'@', who) {
                    t.user = Some(who[..at].to_vec());
                    t.host = Some(who[at + 1..].to_vec());
                }
                let db = rest.split(|&b| b == b' ').next().unwrap_or(b"");
                t.db = (!db.is_empty() && db != b"using").then(|| db.to_vec());
            }
            b"Init DB" => {
                let t = self.threads.entry(thread).or_default();
                t.db = Some(arg.trim_ascii().to_vec());
            }
            _ => {}
        }
        // pt-query-digest: `Query` is a statement (as it is logged, less its
        // last newline); every other command is an administrator command
        // named by its first word (`Init DB`, and a denied connection by its
        // message). dbmeter also reads `Execute` as the statement it logs.
        let admin;
        let (query, is_admin): (&[u8], bool) = match command {
            b"Query" | b"Execute" => (arg, false),
            _ => {
                let word = command.split(|&b| b == b' ').next().unwrap_or(command);
                let name: &[u8] = if word == b"Init" {
                    b"Init DB"
                } else if denied {
                    arg
                } else {
                    word
                };
                let mut a = b"administrator command: ".to_vec();
                a.extend_from_slice(name);
                admin = a;
                (&admin, true)
            }
        };
        if !query.is_empty() {
            let t = self.threads.get(&thread);
            let ev = LogEvent {
                line,
                offset,
                ts: self.ts,
                query,
                admin: is_admin,
                query_time: None,
                lock_time: None,
                rows_sent: None,
                rows_examined: None,
                user: t.and_then(|t| t.user.as_deref()).map(Cow::Borrowed),
                host: t.and_then(|t| t.host.as_deref()).map(Cow::Borrowed),
                db: t.and_then(|t| t.db.as_deref()).map(Cow::Borrowed),
                thread_id: Some(thread),
                attrs: Vec::new(),
                postgres: false,
                params: None,
            };
            emit(&ev);
        }
        if command == b"Quit" {
            // Its state goes (a long log has many connections).
            self.threads.remove(&thread);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MARIADB: &str =
        "/usr/sbin/mariadbd, Version: 10.11.19-MariaDB-0+deb12u1-log (Debian 12). started with:
Tcp port: 0  Unix socket: /tmp/dg/sock
Time\t\t    Id Command\tArgument
261127 10:31:38\t     3 Connect\troot@localhost on  using Socket
\t\t     3 Query\tcreate database t
\t\t     3 Init DB\tt
261127 10:31:39\t     3 Query\tselect *
from a
where id = 1
\t\t     4 Connect\tapp@web1 on shop using TCP/IP
\t\t     4 Query\tselect 2
\t\t     3 Quit\t
";

    #[test]
    fn statements_with_their_thread_state() {
        let mut p = GeneralParser::default();
        let mut seen = Vec::new();
        let mut bad = Vec::new();
        p.parse_chunk(
            MARIADB.as_bytes(),
            1,
            0,
            |e| {
                seen.push((
                    String::from_utf8_lossy(e.query).into_owned(),
                    e.db.as_deref()
                        .map(|d| String::from_utf8_lossy(d).into_owned()),
                    e.user
                        .as_deref()
                        .map(|d| String::from_utf8_lossy(d).into_owned()),
                    e.ts.map(crate::event::format_ts),
                    e.line,
                ))
            },
            |b| bad.push(b),
        );
        assert!(bad.is_empty(), "{bad:?}");
        let statements: Vec<_> = seen
            .iter()
            .filter(|s| !s.0.starts_with("administrator command:"))
            .cloned()
            .collect();
        let admin: Vec<_> = seen
            .iter()
            .filter(|s| s.0.starts_with("administrator command:"))
            .map(|s| s.0.clone())
            .collect();
        assert_eq!(
            admin,
            [
                "administrator command: Connect",
                "administrator command: Init DB",
                "administrator command: Connect",
                "administrator command: Quit"
            ]
        );
        let seen = statements;
        assert_eq!(seen.len(), 3, "{seen:?}");
        assert_eq!(seen[0].0, "create database t");
        assert_eq!(seen[0].2.as_deref(), Some("root"));
        assert_eq!(seen[1].0, "select *\nfrom a\nwhere id = 1");
        assert_eq!(seen[1].1.as_deref(), Some("t"));
        assert_eq!(seen[1].3.as_deref(), Some("2026-11-27 10:31:39"));
        assert_eq!(seen[1].4, 7);
        assert_eq!(
            seen[2],
            (
                "select 2".into(),
                Some("shop".into()),
                Some("app".into()),
                Some("2026-11-27 10:31:39".into()),
                11
            )
        );
        assert!(looks_like(MARIADB.as_bytes()));
        assert!(!crate::slowlog::looks_like(MARIADB.as_bytes()));
    }

    #[test]
    fn mysql57_lines_and_junk() {
        let log = "2026-11-27T10:31:38.123456Z\t    8 Query\tselect 1
junk before nothing
";
        let mut p = GeneralParser::default();
        let mut n = 0;
        let mut bad = Vec::new();
        p.parse_chunk(
            log.as_bytes(),
            1,
            0,
            |e| {
                n += 1;
                assert_eq!(e.query, b"select 1\njunk before nothing");
            },
            |b| bad.push(b),
        );
        assert_eq!(n, 1);
        let log = "junk\n\t\t 3 Query\tselect 1\n";
        let mut p = GeneralParser::default();
        let mut bad = Vec::new();
        p.parse_chunk(log.as_bytes(), 1, 0, |_| {}, |b| bad.push(b));
        assert_eq!(bad.len(), 1);
        assert_eq!(bad[0].line, 1);
    }

    #[test]
    fn cut_points_are_event_lines() {
        let b = MARIADB.as_bytes();
        let cut = last_boundary(b).unwrap();
        assert!(b[cut..].starts_with(b"\t\t     3 Quit"));
    }
}
