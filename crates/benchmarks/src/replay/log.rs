//! A query log read into sessions: each session's statements in the order
//! it ran them, with their intended starts (from the log's times), their
//! classes (the digest's fingerprints) and what the log says they
//! returned.

use dbmeter_digest::params::fill_params;
use dbmeter_digest::{LogEvent, LogFormat, MalformedLines};
use std::collections::HashMap;
use std::sync::Arc;

/// What a statement does, by its first word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verb {
    Read,
    Write,
    Other,
}

/// One statement of a session.
#[derive(Debug)]
pub struct Statement {
    pub sql: Box<str>,
    pub class: u32,
    pub verb: Verb,
    /// When it started, in microseconds after the log's first statement;
    /// None when the log gives no time before it in its session.
    pub at_us: Option<i64>,
    /// The rows the log says it sent (the slow log's `Rows_sent`).
    pub rows_sent: Option<u64>,
    /// The default database the log gives it.
    pub db: Option<Arc<str>>,
}

/// One recorded session (a connection of the logged server).
#[derive(Debug)]
pub struct Session {
    /// Its id in the log (thread id, process id), if it has one.
    pub id: Option<u64>,
    pub statements: Vec<Statement>,
}

impl Session {
    /// When its first statement starts (None: at once).
    pub fn start_us(&self) -> Option<i64> {
        self.statements.first().and_then(|s| s.at_us)
    }
}

/// One class of statements (a fingerprint).
#[derive(Debug, Clone)]
pub struct Class {
    pub fingerprint: String,
    /// pt-query-digest's query ID of the fingerprint.
    pub id: String,
    /// Its statements in the log.
    pub logged: u64,
    /// Of them, left out (`--read-only` and a write).
    pub skipped: u64,
}

/// A log read for replay.
#[derive(Debug)]
pub struct ReplayLog {
    pub format: LogFormat,
    pub sessions: Vec<Session>,
    pub classes: Vec<Class>,
    /// Statements in the sessions (to replay).
    pub statements: u64,
    /// Administrator commands (Connect, Quit, Init DB, Ping...): they open,
    /// end or set up sessions and are not replayed as statements.
    pub admin: u64,
    /// Statements without a session id (replayed as one session).
    pub without_session: u64,
    /// The databases the log names.
    pub databases: Vec<String>,
    pub malformed: MalformedLines,
    /// The log's time span, first statement start to last, in seconds.
    pub span_s: f64,
}

impl ReplayLog {
    /// Keeps the sessions `shard` replays (`--shard=I/N`): the sessions,
    /// in the order they start, dealt round the shards (session k to
    /// shard k mod N), each whole. `statements` becomes theirs; what the
    /// log holds (its classes, span, administrator commands) stays the
    /// whole log's, as every shard reads it.
    pub fn keep_shard(&mut self, shard: crate::shard::Shard) {
        let mut k = 0u64;
        self.sessions.retain(|_| {
            k += 1;
            shard.deals(k - 1)
        });
        self.statements = self
            .sessions
            .iter()
            .map(|s| s.statements.len() as u64)
            .sum();
    }
}

/// The words that begin a statement that changes data or schema.
const WRITE_WORDS: &[&str] = &[
    "insert",
    "update",
    "delete",
    "replace",
    "create",
    "alter",
    "drop",
    "truncate",
    "rename",
    "grant",
    "revoke",
    "load",
    "merge",
    "copy",
    "upsert",
    "comment",
    "vacuum",
    "cluster",
    "reindex",
    "refresh",
    "import",
    "optimize",
    "repair",
    "flush",
    "purge",
    "reset",
    "kill",
    "install",
    "uninstall",
    "handler",
    "lock",
    "unlock",
    "call",
    "do",
];
const READ_WORDS: &[&str] = &[
    "select", "show", "explain", "describe", "desc", "table", "values", "fetch", "check",
    "checksum", "analyze",
];

/// What `sql` does, by its first word (after comments and parentheses):
/// writes change data or schema (or may: `CALL`, `DO`, `LOCK`); reads
/// return rows; the rest (transaction control, `SET`, `USE`) are other.
/// A `WITH` that holds an `INSERT`, `UPDATE` or `DELETE` is a write.
pub fn verb(sql: &str) -> Verb {
    let s = skip_comments(sql);
    let word: String = s
        .chars()
        .take_while(|c| c.is_ascii_alphabetic() || *c == '_')
        .collect::<String>()
        .to_ascii_lowercase();
    if word == "with" {
        let lower = s.to_ascii_lowercase();
        let writes = ["insert ", "update ", "delete "]
            .iter()
            .any(|w| lower.contains(w));
        return if writes { Verb::Write } else { Verb::Read };
    }
    if WRITE_WORDS.contains(&word.as_str()) {
        Verb::Write
    } else if READ_WORDS.contains(&word.as_str()) {
        Verb::Read
    } else {
        Verb::Other
    }
}

/// `sql` after leading white space, comments (`/* */`, `-- `, `#`) and `(`.
fn skip_comments(sql: &str) -> &str {
    let mut s = sql;
    loop {
        let t = s.trim_start_matches(|c: char| c.is_whitespace() || c == '(');
        if let Some(rest) = t.strip_prefix("/*") {
            // MySQL's executable comments (`/*!40001 ...*/`) hold SQL: the
            // statement's verb is after them all the same.
            s = rest.find("*/").map_or("", |e| &rest[e + 2..]);
        } else if t.starts_with("--") || t.starts_with('#') {
            s = t.find('\n').map_or("", |e| &t[e + 1..]);
        } else {
            return t;
        }
    }
}

/// Why a log cannot be replayed.
#[derive(Debug)]
pub struct LogError(pub String);

/// What reading a log needs.
pub struct ReadOptions<'a> {
    pub path: &'a str,
    pub format: Option<LogFormat>,
    pub log_line_prefix: Option<&'a str>,
    /// Leave writes out (counted per class as skipped).
    pub read_only: bool,
}

/// Reads the log at `o.path` into sessions.
pub fn read(o: &ReadOptions) -> Result<ReplayLog, LogError> {
    let mut b = Builder::default();
    let mut malformed = MalformedLines::default();
    let info = dbmeter_digest::read_events(
        o.path,
        o.format,
        o.log_line_prefix,
        &mut |e| b.add(e, o.read_only),
        &mut malformed,
    )
    .map_err(|e| LogError(e.to_string()))?;
    b.finish(info.format, malformed, o.path)
}

#[derive(Default)]
struct Builder {
    sessions: Vec<Session>,
    /// The session each log id writes into now.
    open: HashMap<Option<u64>, usize>,
    classes: Vec<Class>,
    by_fingerprint: HashMap<Vec<u8>, u32>,
    databases: HashMap<Arc<str>, ()>,
    admin: u64,
    without_session: u64,
    statements: u64,
    first_us: Option<i64>,
    last_us: Option<i64>,
}

impl Builder {
    fn add(&mut self, e: &LogEvent<'_>, read_only: bool) {
        if e.admin {
            self.admin += 1;
            let q = String::from_utf8_lossy(e.query);
            let command = q
                .trim()
                .strip_prefix("administrator command:")
                .unwrap_or(&q)
                .trim()
                .trim_end_matches(';')
                .to_ascii_lowercase();
            // A connection ends its session (Quit), or a new one begins
            // where the id is reused (Connect, Change user).
            if matches!(command.as_str(), "quit" | "connect" | "change user") {
                self.open.remove(&e.thread_id);
            }
            return;
        }
        let sql = String::from_utf8_lossy(e.query);
        let sql = sql.trim();
        if sql.is_empty() || sql == "/* No query */" {
            return;
        }
        let fp = if e.postgres {
            dbmeter_digest::fingerprint::pg_fingerprint_bytes(e.query)
        } else {
            dbmeter_digest::fingerprint::fingerprint_bytes(e.query)
        };
        let class = match self.by_fingerprint.get(&fp) {
            Some(&c) => c,
            None => {
                let c = self.classes.len() as u32;
                self.classes.push(Class {
                    id: dbmeter_digest::fingerprint::query_id_bytes(&fp),
                    fingerprint: String::from_utf8_lossy(&fp).into_owned(),
                    logged: 0,
                    skipped: 0,
                });
                self.by_fingerprint.insert(fp, c);
                c
            }
        };
        // A PostgreSQL execute runs with its logged parameters filled in.
        let filled = e
            .params
            .as_deref()
            .and_then(|p| fill_params(sql, &String::from_utf8_lossy(p)));
        let sql = filled.as_deref().unwrap_or(sql);
        let cl = &mut self.classes[class as usize];
        cl.logged += 1;
        let verb = verb(sql);
        if read_only && verb == Verb::Write {
            cl.skipped += 1;
            return;
        }
        // The start: a time written as the statement ended is its
        // duration later.
        let start = e.ts.map(|t| {
            if e.ended {
                t - (e.query_time.unwrap_or(0.0) * 1e6).round() as i64
            } else {
                t
            }
        });
        if let Some(t) = start {
            self.first_us = Some(self.first_us.map_or(t, |f| f.min(t)));
            self.last_us = Some(self.last_us.map_or(t, |l| l.max(t)));
        }
        let db = e.db.as_deref().map(|d| {
            let d: Arc<str> = Arc::from(String::from_utf8_lossy(d).as_ref());
            match self.databases.get_key_value(&d) {
                Some((k, _)) => k.clone(),
                None => {
                    self.databases.insert(d.clone(), ());
                    d
                }
            }
        });
        if e.thread_id.is_none() {
            self.without_session += 1;
        }
        let s = *self.open.entry(e.thread_id).or_insert_with(|| {
            self.sessions.push(Session {
                id: e.thread_id,
                statements: Vec::new(),
            });
            self.sessions.len() - 1
        });
        self.statements += 1;
        self.sessions[s].statements.push(Statement {
            sql: sql.into(),
            class,
            verb,
            at_us: start,
            rows_sent: e.rows_sent,
            db,
        });
    }

    fn finish(
        mut self,
        format: LogFormat,
        malformed: MalformedLines,
        path: &str,
    ) -> Result<ReplayLog, LogError> {
        if self.statements == 0 {
            let skipped: u64 = self.classes.iter().map(|c| c.skipped).sum();
            return Err(LogError(if skipped > 0 {
                format!(
                    "{path}: all its {skipped} statements are writes, which --read-only leaves out: nothing to replay"
                )
            } else {
                format!(
                    "{path}: no statements to replay in this {} log ({} malformed lines{}): log them with the slow log (long_query_time=0), the general log, or PostgreSQL's log_statement=all / log_min_duration_statement=0",
                    format.name(),
                    malformed.count,
                    malformed.first.first().map_or(String::new(), |m| format!(
                        ", the first at line {}: {}",
                        m.line, m.reason
                    ))
                )
            }));
        }
        let first = self.first_us.unwrap_or(0);
        for s in &mut self.sessions {
            // Times relative to the log's first statement, never going
            // back within a session; a statement without one takes its
            // predecessor's.
            let mut prev: Option<i64> = None;
            for st in &mut s.statements {
                let at = match (st.at_us, prev) {
                    (Some(t), Some(p)) => Some((t - first).max(p)),
                    (Some(t), None) => Some(t - first),
                    (None, p) => p,
                };
                st.at_us = at;
                prev = at;
            }
        }
        self.sessions.retain(|s| !s.statements.is_empty());
        // In the order they start (sessions without times first, in log order).
        self.sessions
            .sort_by_key(|s| s.start_us().unwrap_or(i64::MIN));
        let mut databases: Vec<String> = self.databases.keys().map(|d| d.to_string()).collect();
        databases.sort();
        Ok(ReplayLog {
            format,
            span_s: match (self.first_us, self.last_us) {
                (Some(a), Some(b)) => (b - a) as f64 / 1e6,
                _ => 0.0,
            },
            sessions: self.sessions,
            classes: self.classes,
            statements: self.statements,
            admin: self.admin,
            without_session: self.without_session,
            databases,
            malformed,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbs() {
        assert_eq!(verb("SELECT 1"), Verb::Read);
        assert_eq!(verb("  /* app */ (select 1) union (select 2)"), Verb::Read);
        assert_eq!(verb("/*!40001 SQL_NO_CACHE */ SELECT 1"), Verb::Read);
        assert_eq!(verb("insert into t values (1)"), Verb::Write);
        assert_eq!(verb("-- x\nUPDATE t SET a = 1"), Verb::Write);
        assert_eq!(verb("CREATE TEMPORARY TABLE t (a int)"), Verb::Write);
        assert_eq!(
            verb("with x as (delete from t returning *) select * from x"),
            Verb::Write
        );
        assert_eq!(verb("WITH x AS (SELECT 1) SELECT * FROM x"), Verb::Read);
        assert_eq!(verb("BEGIN"), Verb::Other);
        assert_eq!(verb("set names utf8"), Verb::Other);
        assert_eq!(verb(""), Verb::Other);
    }

    fn read_text(text: &str, read_only: bool) -> Result<ReplayLog, LogError> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("slow.log");
        std::fs::write(&p, text).unwrap();
        read(&ReadOptions {
            path: p.to_str().unwrap(),
            format: None,
            log_line_prefix: None,
            read_only,
        })
    }

    fn ev(thread: u64, ts: u64, rows: u64, sql: &str) -> String {
        format!(
            "# User@Host: app[app] @ localhost []\n# Thread_id: {thread}  Schema: shop  QC_hit: No\n\
             # Query_time: 0.000100  Lock_time: 0.000000  Rows_sent: {rows}  Rows_examined: 0\n\
             SET timestamp={ts};\n{sql};\n"
        )
    }

    #[test]
    fn shards_take_whole_sessions_dealt_round_in_start_order() {
        // 5 sessions starting at 0..4 s, of 1..5 statements, their log
        // lines interleaved.
        let mut t = String::from("# Time: 261127 10:31:38\n");
        for i in 0..5u64 {
            for thread in 1..=5u64 {
                if i < thread {
                    t += &ev(thread, 1000 + thread - 1 + i, 1, &format!("SELECT {i}"));
                }
            }
        }
        let whole = read_text(&t, false).unwrap();
        assert_eq!(whole.statements, 15);
        let ids =
            |log: &ReplayLog| -> Vec<Option<u64>> { log.sessions.iter().map(|s| s.id).collect() };
        assert_eq!(ids(&whole), [Some(1), Some(2), Some(3), Some(4), Some(5)]);
        let mut total = 0;
        let mut seen = Vec::new();
        for index in 0..2 {
            let mut log = read_text(&t, false).unwrap();
            log.keep_shard(crate::shard::Shard { index, count: 2 });
            total += log.statements;
            // Each session whole, its statements in their order.
            for s in &log.sessions {
                let want = whole.sessions.iter().find(|w| w.id == s.id).unwrap();
                let sql = |x: &Session| -> Vec<String> {
                    x.statements.iter().map(|st| st.sql.to_string()).collect()
                };
                assert_eq!(sql(s), sql(want));
            }
            seen.extend(ids(&log));
            assert_eq!(log.classes.len(), whole.classes.len());
        }
        assert_eq!(total, 15);
        assert_eq!(seen, [Some(1), Some(3), Some(5), Some(2), Some(4)]);
    }

    #[test]
    fn sessions_by_thread_in_order_and_ended_by_quit() {
        let mut t = String::from("# Time: 261127 10:31:38\n");
        t += &ev(7, 1000, 0, "CREATE TEMPORARY TABLE t (a int)");
        t += &ev(8, 1001, 1, "SELECT 1");
        t += &ev(7, 1002, 0, "INSERT INTO t VALUES (1)");
        t += &ev(7, 1003, 1, "SELECT a FROM t");
        t += "# User@Host: app[app] @ localhost []\n# Thread_id: 7  Schema: shop  QC_hit: No\n\
              # Query_time: 0.000010  Lock_time: 0.000000  Rows_sent: 0  Rows_examined: 0\n\
              SET timestamp=1004;\n# administrator command: Quit;\n";
        t += &ev(7, 1005, 2, "SELECT 2");
        let log = read_text(&t, false).unwrap();
        assert_eq!(log.statements, 5);
        assert_eq!(log.admin, 1);
        let shape: Vec<(Option<u64>, Vec<Option<i64>>)> = log
            .sessions
            .iter()
            .map(|s| (s.id, s.statements.iter().map(|x| x.at_us).collect()))
            .collect();
        assert_eq!(
            shape,
            [
                (Some(7), vec![Some(0), Some(2_000_000), Some(3_000_000)]),
                (Some(8), vec![Some(1_000_000)]),
                (Some(7), vec![Some(5_000_000)]),
            ]
        );
        assert_eq!(log.sessions[0].statements[2].rows_sent, Some(1));
        assert_eq!(log.sessions[0].statements[0].db.as_deref(), Some("shop"));
        assert_eq!(log.databases, ["shop"]);
        assert_eq!(log.classes.len(), 4);
        // --read-only leaves the writes out and counts them.
        let log = read_text(&t, true).unwrap();
        assert_eq!(log.statements, 3);
        let skipped: u64 = log.classes.iter().map(|c| c.skipped).sum();
        assert_eq!(skipped, 2);
        // Nothing but writes, or nothing at all: one line each.
        let w = ev(7, 1000, 0, "DELETE FROM t");
        let e = read_text(&w, true).unwrap_err().0;
        assert!(e.contains("--read-only leaves out"), "{e}");
        let e = read_text("# Time: 261127 10:31:38\n# User@Host: a[a] @ x []\n", false)
            .unwrap_err()
            .0;
        assert!(
            e.contains("no statements to replay") && !e.contains('\n'),
            "{e}"
        );
    }
}
