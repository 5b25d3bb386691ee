//! The MySQL/MariaDB general query log: one line per command,
//! `[TIME]\tID COMMAND\tARGUMENT`, where MariaDB writes the time only when
//! it changes (`261127 10:31:38`) and MySQL 5.7+ on every line
//! (`2026-11-27T10:31:38.123456Z`). A statement may go on over the next
//! lines. `Query` and `Execute` are statements; `Connect` gives the
//! thread's user, host and database, `Init DB` its database. The log has no
//! durations: its events have a count and no Query_time.
//!
//! The time and the threads' users and databases carry from line to line:
//! one parser reads a general log in order (`GeneralParser` keeps them from
//! one chunk to the next), or the reader follows them alone
//! (`GeneralState`, event lines only) and each chunk is read in parallel
//! from the state at its start.

use crate::aggregate::KeyHasher;
use crate::event::{BadLine, LogEvent, parse_datetime};
use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::Arc;

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
    // (As `str::parse` reads it, without checking for UTF-8 first.)
    let thread = l[d..i].iter().try_fold(0u64, |n, &b| {
        n.checked_mul(10)?.checked_add(u64::from(b - b'0'))
    })?;
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

/// A thread's user, host and database, as its `Connect` and `Init DB` lines
/// gave them.
#[derive(Default, Clone, Debug)]
struct Thread {
    user: Option<Vec<u8>>,
    host: Option<Vec<u8>>,
    db: Option<Vec<u8>>,
}

/// Thread ids' maps (a multiplicative hash: SipHash's is a good part of
/// reading an event).
type IdMap<V> = HashMap<u64, V, BuildHasherDefault<KeyHasher>>;

/// The threads known at a point of the log (shared: a snapshot is an
/// `Arc` clone, a thread's state too).
type Threads = Arc<IdMap<Arc<Thread>>>;

/// What a general log carries from line to line at a point of it: the last
/// time written and each connected thread's user, host and database (a
/// thread's state goes at its `Quit`). The reader follows it chunk after
/// chunk ([`GeneralState::advance`]) and gives each chunk the state at its
/// start, so that chunks can be read apart ([`GeneralParser::from_state`]).
#[derive(Default, Clone, Debug)]
pub struct GeneralState {
    ts: Option<i64>,
    threads: Threads,
}

impl GeneralState {
    /// Follows a chunk (whole lines, starting at an event's or the input's
    /// first): its event lines' times and the threads' `Connect`, `Init DB`
    /// and `Quit`, as [`GeneralParser::parse_chunk`] would leave them, with
    /// no statement read and no line reported.
    pub fn advance(&mut self, chunk: &[u8]) {
        let mut last_time = None;
        walk(chunk, 0, |step| match step {
            Step::Time { text, .. } => last_time = Some(text),
            Step::Event {
                thread,
                command,
                arg,
                ..
            } => self.note(thread, command, arg),
            Step::Junk { .. } => {}
        });
        // Only the last time that reads counts: the last written, unless it
        // does not read (rare: then each is read in turn).
        let Some(text) = last_time else { return };
        match parse_datetime(text) {
            Some(ts) => self.ts = Some(ts),
            None => walk(chunk, 0, |step| {
                if let Step::Time { text, .. } = step
                    && let Some(ts) = parse_datetime(text)
                {
                    self.ts = Some(ts);
                }
            }),
        }
    }

    fn note(&mut self, thread: u64, command: &[u8], arg: &[u8]) {
        if changes_thread(command, arg) {
            let threads = Arc::make_mut(&mut self.threads);
            apply(
                Arc::make_mut(threads.entry(thread).or_default()),
                command,
                arg,
            );
        } else if command == b"Quit" && self.threads.contains_key(&thread) {
            Arc::make_mut(&mut self.threads).remove(&thread);
        }
    }

    /// Threads whose state is known.
    pub fn threads(&self) -> usize {
        self.threads.len()
    }
}

/// What [`walk`] meets, in the order of the log.
enum Step<'a> {
    /// An event read to its end (the lines after its own that are not
    /// event lines go on its argument).
    Event {
        line: u64,
        /// Where its line starts in the chunk.
        start: usize,
        thread: u64,
        command: &'a [u8],
        arg: &'a [u8],
    },
    /// The time written on an event line (given after the event before
    /// that line, before that line's own).
    Time { line: u64, text: &'a [u8] },
    /// A line that is no event's and continues none.
    Junk { line: u64, text: &'a [u8] },
}

/// Reads a chunk's lines (`first_line`: the number of its first) into
/// [`Step`]s.
fn walk<'a>(chunk: &'a [u8], first_line: u64, mut step: impl FnMut(Step<'a>)) {
    let mut pos = 0;
    let mut line = first_line;
    // The event being read: its line, start, thread, command, argument start.
    let mut pending: Option<(u64, usize, u64, &'a [u8], usize)> = None;
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
            let end = pos.saturating_sub(1).max(arg);
            let end = if at_end && !chunk.ends_with(b"\n") {
                chunk.len()
            } else {
                end
            };
            step(Step::Event {
                line: ln,
                start,
                thread,
                command,
                arg: &chunk[arg..end.min(chunk.len())],
            });
        }
        if at_end {
            break;
        }
        match ev_line {
            Some(e) => {
                if let Some(text) = e.ts {
                    step(Step::Time { line, text });
                }
                pending = Some((line, pos, e.thread, e.command, pos + e.arg_at));
            }
            None => {
                if pending.is_none() {
                    step(Step::Junk { line, text: l });
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

/// A `Connect` refused (its argument is the server's message).
fn denied(command: &[u8], arg: &[u8]) -> bool {
    command == b"Connect" && arg.starts_with(b"Access denied")
}

/// Whether the command sets its thread's user, host or database.
fn changes_thread(command: &[u8], arg: &[u8]) -> bool {
    command == b"Init DB" || command == b"Connect" && !denied(command, arg)
}

/// What a `Connect` or `Init DB` ([`changes_thread`]) sets.
fn apply(t: &mut Thread, command: &[u8], arg: &[u8]) {
    match command {
        b"Connect" => {
            // `user@host on db using Socket`
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
        b"Init DB" => t.db = Some(arg.trim_ascii().to_vec()),
        _ => {}
    }
}

/// Reads a general log's chunks: in order, chunk after chunk, from the
/// log's start ([`Default`]), or one chunk from the state at its start
/// ([`GeneralParser::from_state`]).
#[derive(Default)]
pub struct GeneralParser {
    ts: Option<i64>,
    /// The threads at the start.
    base: Threads,
    /// The threads changed since (`None`: quit).
    changed: IdMap<Option<Arc<Thread>>>,
}

impl GeneralParser {
    /// A parser for the chunk that starts where the log's state is `state`.
    pub fn from_state(state: &GeneralState) -> GeneralParser {
        GeneralParser {
            ts: state.ts,
            base: state.threads.clone(),
            changed: IdMap::default(),
        }
    }

    /// Reads the events of a chunk that starts at a line (an event's, or
    /// the input's first). `first_line` and `offset`: where it starts.
    pub fn parse_chunk(
        &mut self,
        chunk: &[u8],
        first_line: u64,
        offset: u64,
        mut emit: impl FnMut(&LogEvent<'_>),
        mut bad: impl FnMut(BadLine),
    ) {
        walk(chunk, first_line, |step| match step {
            Step::Event {
                line,
                start,
                thread,
                command,
                arg,
            } => self.finish(arg, line, offset + start as u64, thread, command, &mut emit),
            Step::Time { line, text } => match parse_datetime(text) {
                Some(ts) => self.ts = Some(ts),
                None => bad(BadLine {
                    line,
                    reason: format!("cannot read the time '{}'", crate::slowlog::lossy(text)),
                }),
            },
            Step::Junk { line, text } => {
                if !text.trim_ascii().is_empty() && !is_server_header(text) {
                    bad(BadLine {
                        line,
                        reason: format!(
                            "not a general log line: '{}'",
                            crate::slowlog::lossy(text)
                        ),
                    });
                }
            }
        });
    }

    fn thread(&self, id: u64) -> Option<&Thread> {
        match self.changed.get(&id) {
            Some(t) => t.as_deref(),
            None => self.base.get(&id).map(|t| &**t),
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
        let denied = denied(command, arg);
        if changes_thread(command, arg) {
            let base = &self.base;
            let t = self
                .changed
                .entry(thread)
                .or_insert_with(|| base.get(&thread).cloned());
            apply(Arc::make_mut(t.get_or_insert_default()), command, arg);
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
            let t = self.thread(thread);
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
                ended: false,
                params: None,
            };
            emit(&ev);
        }
        if command == b"Quit" {
            // Its state goes (a long log has many connections).
            if self.base.contains_key(&thread) {
                self.changed.insert(thread, None);
            } else {
                self.changed.remove(&thread);
            }
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
    fn the_state_alone_is_what_the_parser_leaves() {
        let b = MARIADB.as_bytes();
        let mut state = GeneralState::default();
        state.advance(b);
        // Thread 3 quit: only thread 4's state is kept.
        assert_eq!(state.threads(), 1);
        assert_eq!(
            state.ts.map(crate::event::format_ts).as_deref(),
            Some("2026-11-27 10:31:39")
        );
        // The rest of the log read from that state: thread 4's user and
        // database, the time carried; thread 3 is unknown again.
        let more = "\t\t     4 Query\tselect 3\n\t\t     3 Query\tselect 4\n";
        let mut seen = Vec::new();
        GeneralParser::from_state(&state).parse_chunk(
            more.as_bytes(),
            14,
            b.len() as u64,
            |e| {
                seen.push((
                    e.user.as_deref().map(<[u8]>::to_vec),
                    e.db.as_deref().map(<[u8]>::to_vec),
                    e.ts.map(crate::event::format_ts),
                    e.line,
                ))
            },
            |b| panic!("{b:?}"),
        );
        let t = Some("2026-11-27 10:31:39".to_string());
        assert_eq!(
            seen,
            [
                (Some(b"app".to_vec()), Some(b"shop".to_vec()), t.clone(), 14),
                (None, None, t, 15)
            ]
        );
    }

    #[test]
    fn cut_points_are_event_lines() {
        let b = MARIADB.as_bytes();
        let cut = last_boundary(b).unwrap();
        assert!(b[cut..].starts_with(b"\t\t     3 Quit"));
    }
}
