//! Query-log digests: what a server's logs say about the statements it ran.
//!
//! One stream of typed events ([`LogEvent`]) comes out of every log format
//! ([`LogFormat`]: the MySQL/MariaDB slow log and general log, and
//! PostgreSQL's stderr log, csvlog and jsonlog ([`pglog`])); events are grouped into
//! classes by pt-query-digest's fingerprint ([`fingerprint`]) or by database,
//! user or host, and aggregated per class in bounded memory
//! ([`aggregate`]). [`digest`] reads the inputs in parallel: one thread
//! reads (and decompresses) and cuts the stream at event boundaries into
//! chunks, every other CPU parses and aggregates chunks, and the aggregates
//! are merged at the end. [`report`] turns a [`Digest`] into text (in
//! pt-query-digest's layout) and JSON (`docs/digest.md`).

pub mod aggregate;
pub mod capture;
pub mod event;
pub mod fingerprint;
pub mod general;
pub mod input;
pub mod params;
pub mod pglog;
pub mod report;
mod scan;
pub mod slowlog;
pub mod tables;

pub use aggregate::{Aggregate, GroupBy, TimeFilter};
pub use event::{LogEvent, Malformed, MalformedLines};

use pglog::PgTail;
use std::collections::BTreeMap;
use std::sync::mpsc;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The log formats dbmeter reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum LogFormat {
    /// MySQL/MariaDB slow query log (Percona Server's too).
    #[serde(rename = "mysql-slow")]
    MysqlSlow,
    /// MySQL/MariaDB general query log.
    #[serde(rename = "mysql-general")]
    MysqlGeneral,
    /// PostgreSQL's stderr log (a `log_line_prefix` on every line).
    #[serde(rename = "postgres-stderr")]
    PgStderr,
    /// PostgreSQL's csvlog.
    #[serde(rename = "postgres-csv")]
    PgCsv,
    /// PostgreSQL's jsonlog (15+).
    #[serde(rename = "postgres-json")]
    PgJson,
}

impl LogFormat {
    pub fn name(self) -> &'static str {
        match self {
            LogFormat::MysqlSlow => "mysql-slow",
            LogFormat::MysqlGeneral => "mysql-general",
            LogFormat::PgStderr => "postgres-stderr",
            LogFormat::PgCsv => "postgres-csv",
            LogFormat::PgJson => "postgres-json",
        }
    }

    pub fn parse(s: &str) -> Option<LogFormat> {
        match s.to_ascii_lowercase().as_str() {
            "mysql-slow" | "slowlog" | "slow" => Some(LogFormat::MysqlSlow),
            "mysql-general" | "genlog" | "general" => Some(LogFormat::MysqlGeneral),
            "postgres-stderr" | "pg-stderr" | "stderr" => Some(LogFormat::PgStderr),
            "postgres-csv" | "pg-csv" | "csvlog" => Some(LogFormat::PgCsv),
            "postgres-json" | "pg-json" | "jsonlog" => Some(LogFormat::PgJson),
            _ => None,
        }
    }

    /// The format of an input from its first bytes.
    pub fn detect(head: &[u8]) -> Option<LogFormat> {
        if slowlog::looks_like(head) {
            Some(LogFormat::MysqlSlow)
        } else if general::looks_like(head) {
            Some(LogFormat::MysqlGeneral)
        } else {
            pglog::looks_like(head).map(|k| match k {
                pglog::PgKind::Stderr => LogFormat::PgStderr,
                pglog::PgKind::Csv => LogFormat::PgCsv,
                pglog::PgKind::Json => LogFormat::PgJson,
            })
        }
    }

    /// Which PostgreSQL log it is, if it is one.
    pub fn pg_kind(self) -> Option<pglog::PgKind> {
        match self {
            LogFormat::PgStderr => Some(pglog::PgKind::Stderr),
            LogFormat::PgCsv => Some(pglog::PgKind::Csv),
            LogFormat::PgJson => Some(pglog::PgKind::Json),
            _ => None,
        }
    }

    /// The start of the last event in `buf`, if one starts after 0.
    fn last_boundary(self, buf: &[u8]) -> Option<usize> {
        match self {
            LogFormat::MysqlSlow => slowlog::last_boundary(buf),
            LogFormat::MysqlGeneral => general::last_boundary(buf),
            LogFormat::PgStderr => pglog::last_boundary(pglog::PgKind::Stderr, buf),
            LogFormat::PgCsv => pglog::last_boundary(pglog::PgKind::Csv, buf),
            LogFormat::PgJson => pglog::last_boundary(pglog::PgKind::Json, buf),
        }
        .filter(|&p| p > 0)
    }
}

/// How to digest.
#[derive(Debug, Clone)]
pub struct Options {
    pub group_by: GroupBy,
    pub filter: TimeFilter,
    /// Threads that parse and aggregate (at least 1).
    pub threads: usize,
    /// The format, when not detected.
    pub format: Option<LogFormat>,
    /// PostgreSQL's `log_line_prefix` for stderr logs; without it, the one
    /// of PostgreSQL's default and Debian's that reads the log.
    pub log_line_prefix: Option<String>,
}

/// One input as read.
#[derive(Debug, Clone, serde::Serialize)]
pub struct FileInfo {
    pub name: String,
    pub format: LogFormat,
    pub compression: input::Compression,
    /// Bytes read (after decompression).
    pub bytes: u64,
    /// Size on disk, for files.
    pub size: Option<u64>,
    /// The header of dbmeter's own capture file (`dbmeter capture`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capture: Option<capture::CaptureHeader>,
}

/// A digest of some logs.
#[derive(Debug)]
pub struct Digest {
    pub aggregate: Aggregate,
    pub files: Vec<FileInfo>,
    pub malformed: MalformedLines,
    pub elapsed: Duration,
}

/// Why a digest could not be made.
#[derive(Debug)]
pub enum DigestError {
    /// An input could not be opened or read.
    Io { name: String, error: std::io::Error },
    /// An input's format is not one dbmeter reads.
    Format { name: String, why: String },
}

impl std::fmt::Display for DigestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DigestError::Io { name, error } => write!(f, "cannot read {name}: {error}"),
            DigestError::Format { name, why } => write!(f, "{name}: {why}"),
        }
    }
}

impl std::error::Error for DigestError {}

/// Bytes a chunk holds at most (but a whole event, whatever its size).
pub const CHUNK: usize = 1 << 20;

/// Bytes of an input's start read before its format is told.
const HEAD: usize = 256 << 10;

/// A piece of an input made of whole events.
struct Chunk {
    file: u32,
    data: Vec<u8>,
    first_line: u64,
    offset: u64,
    file_start: bool,
    /// A PostgreSQL log's: read on its own, then what it left in order.
    pg: Option<PgChunk>,
    /// A general log's: the state at its start.
    general: Option<general::GeneralState>,
}

/// A chunk of a PostgreSQL log.
struct PgChunk {
    /// The log's parser (with no state).
    parser: Arc<pglog::PgParser>,
    /// Its place among the PostgreSQL chunks of all inputs.
    seq: u64,
    /// Whether it is the last of its input.
    last: bool,
    /// What the log holds before it.
    before: pglog::Seen,
}

/// What PostgreSQL chunks left, read in their order ([`pglog::PgTail`]).
#[derive(Default)]
struct Sequencer {
    next: u64,
    waiting: BTreeMap<u64, Done>,
    /// The state of the sessions after the chunks applied so far.
    carried: Option<pglog::PgParser>,
}

/// A PostgreSQL chunk read, waiting for the chunks before it.
struct Done {
    tail: PgTail,
    parser: Arc<pglog::PgParser>,
    file: u32,
    first: bool,
    last: bool,
}

/// What a worker made.
struct Part {
    agg: Aggregate,
    malformed: MalformedLines,
}

/// Reads every input and aggregates its events. `progress` is told the
/// bytes read so far (decompressed) after each chunk.
pub fn digest(
    inputs: &[String],
    opts: &Options,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Digest, DigestError> {
    digest_in_chunks(inputs, opts, CHUNK, progress)
}

/// [`digest`], cutting the inputs into chunks of about `chunk` bytes (a
/// whole event at least) instead of 1 MiB: for tests, which make every
/// event boundary a cut somewhere.
pub fn digest_in_chunks(
    inputs: &[String],
    opts: &Options,
    chunk: usize,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Digest, DigestError> {
    let started = Instant::now();
    let threads = opts.threads.max(1);
    let names: Vec<String> = inputs.to_vec();
    let (tx, rx) = mpsc::sync_channel::<Chunk>(threads);
    let rx = Mutex::new(rx);
    let sequencer = Mutex::new(Sequencer::default());
    let result = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let rx = &rx;
                let names = &names;
                let sequencer = &sequencer;
                s.spawn(move || {
                    let mut part = Part {
                        agg: Aggregate::new(opts.group_by, opts.filter.clone()),
                        malformed: MalformedLines::default(),
                    };
                    loop {
                        let chunk = match rx.lock() {
                            Ok(r) => r.recv(),
                            Err(_) => break,
                        };
                        let Ok(c) = chunk else { break };
                        let file = c.file;
                        let name = &names[file as usize];
                        let agg = &mut part.agg;
                        let malformed = &mut part.malformed;
                        let bad = |b: event::BadLine| {
                            malformed.push(Malformed {
                                file: name.clone(),
                                input: file,
                                line: b.line,
                                reason: b.reason,
                            })
                        };
                        if let Some(state) = &c.general {
                            general::GeneralParser::from_state(state).parse_chunk(
                                &c.data,
                                c.first_line,
                                c.offset,
                                |e| agg.add(e, file),
                                bad,
                            );
                            continue;
                        }
                        let Some(pg) = c.pg else {
                            slowlog::parse_chunk(
                                &c.data,
                                c.first_line,
                                c.offset,
                                c.file_start,
                                |e| agg.add(e, file),
                                bad,
                            );
                            continue;
                        };
                        let mut p = pg.parser.for_chunk(&pg.before);
                        p.parse_chunk(&c.data, c.first_line, c.offset, |e| agg.add(e, file), bad);
                        let tail = p.into_tail();
                        // What the chunks left, in order, as far as they are done.
                        let mut sq = sequencer.lock().unwrap_or_else(PoisonError::into_inner);
                        let done = Done {
                            tail,
                            parser: pg.parser,
                            file,
                            first: c.file_start,
                            last: pg.last,
                        };
                        sq.waiting.insert(pg.seq, done);
                        loop {
                            let next = sq.next;
                            let Some(d) = sq.waiting.remove(&next) else {
                                break;
                            };
                            sq.next += 1;
                            if d.first || sq.carried.is_none() {
                                sq.carried = Some(d.parser.fresh());
                            }
                            if let Some(carried) = sq.carried.as_mut() {
                                carried.apply(d.tail, |e| agg.add(e, d.file));
                                if d.last {
                                    carried.finish(|e| agg.add(e, d.file));
                                }
                            }
                            if d.last {
                                sq.carried = None;
                            }
                        }
                    }
                    part
                })
            })
            .collect();
        let read = read_inputs(&names, opts, chunk.max(1), &tx, progress);
        drop(tx);
        let mut parts = Vec::new();
        for w in workers {
            match w.join() {
                Ok(p) => parts.push(p),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        read.map(|files| (files, parts))
    });
    let (files, parts) = result?;
    // Into the part with the most classes: the others' classes move into it.
    let mut parts = parts;
    parts.sort_by_key(|p| std::cmp::Reverse(p.agg.len()));
    let mut it = parts.into_iter();
    let (mut agg, mut malformed) = match it.next() {
        Some(first) => (first.agg, first.malformed),
        None => (
            Aggregate::new(opts.group_by, opts.filter.clone()),
            MalformedLines::default(),
        ),
    };
    for p in it {
        agg.merge(p.agg);
        malformed.merge(p.malformed);
    }
    malformed.sort();
    Ok(Digest {
        aggregate: agg,
        files,
        malformed,
        elapsed: started.elapsed(),
    })
}

/// The reader: opens each input, detects its format, cuts it into chunks
/// of about `chunk` bytes for the workers (with, for a general log, the
/// state the log carries at the chunk's start, followed here).
fn read_inputs(
    names: &[String],
    opts: &Options,
    chunk: usize,
    tx: &mpsc::SyncSender<Chunk>,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<FileInfo>, DigestError> {
    let mut files = Vec::new();
    let mut total = 0u64;
    let mut pg_seq = 0u64;
    for (i, name) in names.iter().enumerate() {
        let io_err = |error| DigestError::Io {
            name: name.clone(),
            error,
        };
        let mut opened = input::open(name).map_err(io_err)?;
        let mut buf = Vec::with_capacity(2 * chunk.max(HEAD));
        let mut more =
            input::fill(&mut opened.reader, &mut buf, chunk.max(HEAD)).map_err(io_err)?;
        // dbmeter's capture: its header line says the format and prefix.
        let header = match capture::read_header(&buf) {
            None => None,
            Some(Ok((h, len))) => {
                buf.drain(..len);
                Some((h, len))
            }
            Some(Err(why)) => {
                return Err(DigestError::Format {
                    name: name.clone(),
                    why,
                });
            }
        };
        let format = opts.format.or(header.as_ref().map(|(h, _)| h.format));
        let log_line_prefix = opts.log_line_prefix.as_deref().or(header
            .as_ref()
            .and_then(|(h, _)| h.log_line_prefix.as_deref()));
        let (format, pg) = choose_format(name, format, log_line_prefix, &buf)?;
        let pg = pg.map(Arc::new);
        let mut seen = pglog::Seen::default();
        let mut general = general::GeneralState::default();
        // Lines and bytes count from the file's start, the header included.
        let (mut line, mut offset) = match &header {
            Some((_, len)) => (2u64, *len as u64),
            None => (1u64, 0u64),
        };
        total += offset;
        let mut first = true;
        loop {
            if more && buf.len() < chunk {
                let want = chunk - buf.len();
                more = input::fill(&mut opened.reader, &mut buf, want).map_err(io_err)?;
                continue;
            }
            // Cut after the last event start in the whole lines of the
            // first `chunk` bytes (or further, for an event larger than
            // that), or take everything at the end.
            let cut = if !more && buf.len() <= chunk {
                Some(buf.len())
            } else {
                let lines =
                    memchr::memrchr(b'\n', &buf[..chunk.min(buf.len())]).map_or(0, |p| p + 1);
                format
                    .last_boundary(&buf[..lines])
                    .or_else(|| format.last_boundary(&buf))
                    .or((!more).then_some(buf.len()))
            };
            let Some(cut) = cut else {
                // One event larger than the buffer: read on.
                more = input::fill(&mut opened.reader, &mut buf, chunk).map_err(io_err)?;
                continue;
            };
            let rest = buf.split_off(cut);
            let data = std::mem::replace(&mut buf, rest);
            let lines = memchr::memchr_iter(b'\n', &data).count() as u64;
            let len = data.len() as u64;
            let last = !more && buf.is_empty();
            if let Some(parser) = &pg {
                // Every chunk, the last one even if empty: it ends the log's sessions.
                let before = seen;
                if let Some(kind) = format.pg_kind() {
                    seen.note(kind, &data);
                }
                let chunk = Chunk {
                    file: i as u32,
                    data,
                    first_line: line,
                    offset,
                    file_start: first,
                    pg: Some(PgChunk {
                        parser: parser.clone(),
                        seq: pg_seq,
                        last,
                        before,
                    }),
                    general: None,
                };
                pg_seq += 1;
                if tx.send(chunk).is_err() {
                    break;
                }
            } else if !data.is_empty() {
                let general = (format == LogFormat::MysqlGeneral).then(|| {
                    // The state at the chunk's start; then at its end.
                    let before = general.clone();
                    general.advance(&data);
                    before
                });
                let chunk = Chunk {
                    file: i as u32,
                    data,
                    first_line: line,
                    offset,
                    file_start: first,
                    pg: None,
                    general,
                };
                if tx.send(chunk).is_err() {
                    break;
                }
            }
            first = false;
            line += lines;
            offset += len;
            total += len;
            progress(total);
            if last {
                break;
            }
        }
        files.push(FileInfo {
            name: name.clone(),
            format,
            compression: opened.compression,
            bytes: offset,
            size: opened.size,
            capture: header.map(|(h, _)| h),
        });
    }
    Ok(files)
}

/// The format of input `name` (`format` when given, else detected from
/// `head`, its first bytes) and, for a PostgreSQL log, its parser (with
/// `log_line_prefix`, or the default or Debian prefix that reads `head`).
fn choose_format(
    name: &str,
    format: Option<LogFormat>,
    log_line_prefix: Option<&str>,
    buf: &[u8],
) -> Result<(LogFormat, Option<pglog::PgParser>), DigestError> {
    let name = &name.to_string();
    let format = match format {
        Some(f) => f,
        None => LogFormat::detect(&buf[..buf.len().min(256 << 10)]).ok_or_else(|| {
            DigestError::Format {
                name: name.clone(),
                why: if buf.is_empty() {
                    "the log is empty".into()
                } else {
                    "not a MySQL/MariaDB slow or general log nor a PostgreSQL log \
                     (no `# User@Host:`, `# Query_time:`, `ID Query`, `LOG:  ` lines, \
                     csvlog or jsonlog records in its first 256 KiB); --log-format=mysql-slow, \
                     mysql-general, postgres-stderr, postgres-csv or postgres-json says which"
                        .into()
                },
            }
        })?,
    };
    let pg = match format.pg_kind() {
        Some(kind) => {
            let prefix = match log_line_prefix {
                Some(p) => pglog::Prefix::parse(p).map_err(|why| DigestError::Format {
                    name: name.clone(),
                    why: format!("--log-line-prefix: {why}"),
                })?,
                None => {
                    let cands = [pglog::DEFAULT_PREFIX, pglog::DEBIAN_PREFIX].map(|p| {
                        pglog::Prefix::parse(p).map_err(|why| DigestError::Format {
                            name: name.clone(),
                            why,
                        })
                    });
                    let [a, b] = cands;
                    let cands = [a?, b?];
                    match kind {
                        pglog::PgKind::Stderr => {
                            pglog::choose_prefix(&buf[..buf.len().min(256 << 10)], &cands)
                                .ok_or_else(|| DigestError::Format {
                                    name: name.clone(),
                                    why: "a PostgreSQL stderr log whose lines have neither \
                                          PostgreSQL's default log_line_prefix '%m [%p] ' \
                                          nor Debian's '%m [%p] %q%u@%d '; \
                                          --log-line-prefix gives the server's"
                                        .into(),
                                })?
                        }
                        _ => cands[0].clone(),
                    }
                }
            };
            Some(pglog::PgParser::new(kind, prefix))
        }
        None => None,
    };
    Ok((format, pg))
}

/// Reads input `name` (a file, `-` for standard input, compressed or not)
/// event after event, in the order the log holds them, on the calling
/// thread: for a reader that needs each session's statements in order
/// (replay), where [`digest`] aggregates in parallel. `format`: the
/// format when not detected; `log_line_prefix`: as in [`Options`].
/// Malformed lines go to `malformed`.
pub fn read_events(
    name: &str,
    format: Option<LogFormat>,
    log_line_prefix: Option<&str>,
    emit: &mut dyn FnMut(&LogEvent<'_>),
    malformed: &mut MalformedLines,
) -> Result<FileInfo, DigestError> {
    let io_err = |error| DigestError::Io {
        name: name.to_string(),
        error,
    };
    let mut opened = input::open(name).map_err(io_err)?;
    let mut buf = Vec::with_capacity(2 * CHUNK);
    let mut more = input::fill(&mut opened.reader, &mut buf, CHUNK).map_err(io_err)?;
    // dbmeter's capture: its header line says the format and prefix.
    let header = match capture::read_header(&buf) {
        None => None,
        Some(Ok((h, len))) => {
            buf.drain(..len);
            Some((h, len))
        }
        Some(Err(why)) => {
            return Err(DigestError::Format {
                name: name.to_string(),
                why,
            });
        }
    };
    let format = format.or(header.as_ref().map(|(h, _)| h.format));
    let log_line_prefix = log_line_prefix.or(header
        .as_ref()
        .and_then(|(h, _)| h.log_line_prefix.as_deref()));
    let (format, mut pg) = choose_format(name, format, log_line_prefix, &buf)?;
    let mut general = general::GeneralParser::default();
    // Lines and bytes count from the file's start, the header included.
    let (mut line, mut offset) = match &header {
        Some((_, len)) => (2u64, *len as u64),
        None => (1u64, 0u64),
    };
    let mut first = true;
    loop {
        let cut = if more {
            format.last_boundary(&buf)
        } else {
            Some(buf.len())
        };
        let Some(cut) = cut else {
            more = input::fill(&mut opened.reader, &mut buf, CHUNK).map_err(io_err)?;
            continue;
        };
        let rest = buf.split_off(cut);
        let data = std::mem::replace(&mut buf, rest);
        let mut bad = |b: event::BadLine| {
            malformed.push(Malformed {
                file: name.to_string(),
                input: 0,
                line: b.line,
                reason: b.reason,
            })
        };
        match (format, pg.as_mut()) {
            (_, Some(pg)) => pg.parse_chunk(&data, line, offset, &mut *emit, &mut bad),
            (LogFormat::MysqlSlow, None) => {
                slowlog::parse_chunk(&data, line, offset, first, &mut *emit, &mut bad)
            }
            (_, None) => general.parse_chunk(&data, line, offset, &mut *emit, &mut bad),
        }
        first = false;
        line += memchr::memchr_iter(b'\n', &data).count() as u64;
        offset += data.len() as u64;
        if !more && buf.is_empty() {
            break;
        }
        if more {
            more = input::fill(&mut opened.reader, &mut buf, CHUNK).map_err(io_err)?;
        }
    }
    if let Some(pg) = pg.as_mut() {
        pg.finish(&mut *emit);
    }
    Ok(FileInfo {
        name: name.to_string(),
        format,
        compression: opened.compression,
        bytes: offset,
        size: opened.size,
        capture: header.map(|(h, _)| h),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slow_event(i: usize) -> String {
        format!(
            "# User@Host: u{u}[u{u}] @ localhost []\n# Thread_id: {i}  Schema: db{d}  QC_hit: No\n\
             # Query_time: 0.{t:06}  Lock_time: 0.000001  Rows_sent: 1  Rows_examined: {i}\n\
             # Rows_affected: 0  Bytes_sent: 60\nSET timestamp={ts};\nselect * from {tbl} where id = {i};\n",
            u = i % 3,
            d = i % 7,
            t = i % 1000 + 1,
            ts = 1_795_775_498 + i,
            tbl = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta"][i % 7]
        )
    }

    #[test]
    fn parallel_digest_equals_one_thread() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("slow.log");
        // Several chunks' worth.
        let mut text = String::from("# Time: 261127 10:31:38\n");
        let n = 30_000;
        for i in 0..n {
            text.push_str(&slow_event(i));
        }
        std::fs::write(&path, &text).unwrap();
        let name = path.to_str().unwrap().to_string();
        let run = |threads| {
            digest(
                std::slice::from_ref(&name),
                &Options {
                    group_by: GroupBy::Fingerprint,
                    filter: TimeFilter::default(),
                    threads,
                    format: None,
                    log_line_prefix: None,
                },
                &|_| {},
            )
            .unwrap()
        };
        let one = run(1);
        let four = run(4);
        for d in [&one, &four] {
            assert_eq!(d.aggregate.global.count, n as u64);
            assert_eq!(d.aggregate.classes.len(), 7, "one class per table");
            assert_eq!(d.malformed.count, 0);
            assert_eq!(d.files[0].bytes, text.len() as u64);
        }
        let mut a: Vec<_> = one
            .aggregate
            .classes
            .iter()
            .map(|(k, c)| (k.clone(), c.count, c.sample.as_ref().unwrap().line))
            .collect();
        let mut b: Vec<_> = four
            .aggregate
            .classes
            .iter()
            .map(|(k, c)| (k.clone(), c.count, c.sample.as_ref().unwrap().line))
            .collect();
        a.sort();
        b.sort();
        assert_eq!(a, b);
    }

    /// (thread, query, ts, ended) of every event of `text`, read in order.
    fn in_order(text: &str, prefix: Option<&str>) -> Vec<(Option<u64>, String, Option<i64>, bool)> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        std::fs::write(&path, text).unwrap();
        let mut got = Vec::new();
        let mut malformed = MalformedLines::default();
        read_events(
            path.to_str().unwrap(),
            None,
            prefix,
            &mut |e| {
                got.push((
                    e.thread_id,
                    String::from_utf8_lossy(e.query).into_owned(),
                    e.ts,
                    e.ended,
                ))
            },
            &mut malformed,
        )
        .unwrap();
        assert_eq!(malformed.count, 0, "{:?}", malformed.first);
        got
    }

    #[test]
    fn events_are_read_in_order_with_their_sessions() {
        let mut text = String::from("# Time: 261127 10:31:38\n");
        for i in 0..3 {
            text.push_str(&slow_event(i));
        }
        let got = in_order(&text, None);
        let threads: Vec<_> = got.iter().map(|g| g.0).collect();
        assert_eq!(threads, [Some(0), Some(1), Some(2)]);
        assert!(got[2].1.starts_with("select * from gamma where id = 2"));
        assert_eq!(got[1].2, Some(1_795_775_499_000_000));
        // PostgreSQL: a `%c` session id without `%p` names the session; a
        // statement logged as it ends says so.
        let pg = "2026-11-27 10:31:38.100 UTC|app|shop|6566e0.1f|LOG:  statement: SELECT 1\n\
                  2026-11-27 10:31:38.200 UTC|app|shop|6566e0.20|LOG:  duration: 5.000 ms  statement: SELECT 2\n\
                  2026-11-27 10:31:38.300 UTC|app|shop|6566e0.1f|LOG:  statement: SELECT 3\n";
        let got = in_order(pg, Some("%m|%u|%d|%c|"));
        let q: Vec<_> = got.iter().map(|g| g.1.as_str()).collect();
        assert_eq!(q, ["SELECT 2", "SELECT 1", "SELECT 3"]);
        assert!(got[0].3 && !got[1].3);
        assert_eq!(got[1].0, got[2].0);
        assert!(got[1].0.is_some() && got[0].0 != got[1].0);
    }

    #[test]
    fn a_capture_header_gives_the_format_and_prefix() {
        let dir = tempfile::tempdir().unwrap();
        let header = |format, prefix: Option<&str>| capture::CaptureHeader {
            server: "postgres".into(),
            version: "15.4".into(),
            format,
            log_line_prefix: prefix.map(str::to_string),
            target: String::new(),
            started: String::new(),
            ended: String::new(),
            collected: "sql".into(),
            source: "log/pg.log".into(),
            changed: Vec::new(),
            restored: true,
            notes: Vec::new(),
        };
        // A prefix neither of the defaults reads: only the header tells it.
        let prefix = "<%u:%d:%p> ";
        let log = "<app:shop:41> LOG:  duration: 0.250 ms  statement: select 1\n\
                   <app:shop:41> LOG:  duration: 0.300 ms  statement: select 2\n";
        let h = header(LogFormat::PgStderr, Some(prefix));
        let path = dir.path().join("cap.log");
        std::fs::write(&path, format!("{}{log}", h.line())).unwrap();
        let opts = Options {
            group_by: GroupBy::Fingerprint,
            filter: TimeFilter::default(),
            threads: 2,
            format: None,
            log_line_prefix: None,
        };
        let name = path.to_str().unwrap().to_string();
        let d = digest(std::slice::from_ref(&name), &opts, &|_| {}).unwrap();
        assert_eq!(d.aggregate.global.count, 2);
        assert_eq!(d.malformed.count, 0);
        assert_eq!(d.files[0].format, LogFormat::PgStderr);
        assert_eq!(d.files[0].capture.as_ref(), Some(&h));
        let size = std::fs::metadata(&path).unwrap().len();
        assert_eq!(d.files[0].bytes, size);
        // Without the header the log is not read.
        std::fs::write(&path, log).unwrap();
        assert!(digest(std::slice::from_ref(&name), &opts, &|_| {}).is_err());
        // An empty capture is a digest of nothing, not an error.
        std::fs::write(&path, header(LogFormat::MysqlSlow, None).line()).unwrap();
        let d = digest(std::slice::from_ref(&name), &opts, &|_| {}).unwrap();
        assert_eq!(d.aggregate.global.count, 0);
        assert_eq!(d.files[0].format, LogFormat::MysqlSlow);
        // A header of another version is an error that says so.
        std::fs::write(&path, "# dbmeter-capture v2 {}\nselect 1;\n").unwrap();
        let e = digest(std::slice::from_ref(&name), &opts, &|_| {}).unwrap_err();
        assert!(e.to_string().contains("version 2"), "{e}");
    }

    /// A PostgreSQL stderr log (Debian's prefix) of `n` statements from 6
    /// sessions taking turns entry by entry, so that pairs interleave:
    /// `pairs` false, log_min_duration_statement=0 (`duration: X ms
    /// statement: Q`; the extended protocol's parse, bind and execute with
    /// their DETAIL parameters); true, log_statement=all with
    /// log_duration=on (`statement: Q` ... `duration: X ms`; parse and bind
    /// durations before an `execute` and its parameters). Multi-line
    /// statements, errors, disconnections and reconnections among them.
    fn pg_log(n: usize, pairs: bool, seed: u64) -> String {
        let mut x = seed;
        let mut rnd = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        let mut queues: Vec<std::collections::VecDeque<String>> = vec![Default::default(); 6];
        let mut out = String::new();
        let (mut made, mut i) = (0, 0u64);
        while made < n || queues.iter().any(|q| !q.is_empty()) {
            let s = rnd(6) as usize;
            if queues[s].is_empty() {
                if made >= n {
                    continue;
                }
                made += 1;
                let ms = |r: u64| format!("{}.{:03}", r % 3, r % 997);
                let id = rnd(1000);
                let q = match rnd(3) {
                    0 => format!("SELECT c FROM sbtest{} WHERE id = {id}", id % 3),
                    1 => format!("UPDATE sbtest1\n\t   SET k = k + 1\n\t WHERE id = {id};"),
                    _ => format!("INSERT INTO t (a, b) VALUES ({id}, 'x''{id}')"),
                };
                let prep = "SELECT pad FROM sbtest1 WHERE k = $1 AND c = $2";
                let params = format!("parameters: $1 = '{id}', $2 = 'a''b'");
                let q_ = &mut queues[s];
                let mut push = |m: String| q_.push_back(m);
                match (rnd(10), pairs) {
                    (0..=5, false) => push(format!(
                        "LOG:  duration: {} ms  statement: {q}",
                        ms(rnd(9999))
                    )),
                    (0..=5, true) => {
                        push(format!("LOG:  statement: {q}"));
                        push(format!("LOG:  duration: {} ms", ms(rnd(9999))));
                    }
                    (6..=7, false) => {
                        push(format!(
                            "LOG:  duration: {} ms  parse S_1: {prep}",
                            ms(rnd(9999))
                        ));
                        push(format!(
                            "LOG:  duration: {} ms  bind S_1: {prep}",
                            ms(rnd(9999))
                        ));
                        push(format!("DETAIL:  {params}"));
                        push(format!(
                            "LOG:  duration: {} ms  execute S_1: {prep}",
                            ms(rnd(9999))
                        ));
                        push(format!("DETAIL:  {params}"));
                    }
                    (6..=7, true) => {
                        push(format!("LOG:  duration: {} ms", ms(rnd(9999))));
                        push(format!("LOG:  duration: {} ms", ms(rnd(9999))));
                        push(format!("LOG:  execute S_1: {prep}"));
                        push(format!("DETAIL:  {params}"));
                        push(format!("LOG:  duration: {} ms", ms(rnd(9999))));
                    }
                    (8, _) => {
                        if pairs {
                            push("LOG:  statement: SELECT 1/0".into());
                        }
                        push("ERROR:  division by zero".into());
                        push("STATEMENT:  SELECT 1/0".into());
                    }
                    _ => {
                        push("LOG:  disconnection: session time: 0:00:00.010 user=app database=shop host=[local]".into());
                        push("LOG:  connection received: host=[local]".into());
                    }
                }
            }
            if let Some(m) = queues[s].pop_front() {
                i += 1;
                let who = if m.contains("connection received") {
                    ""
                } else {
                    ["app@shop ", "report@crm "][s % 2]
                };
                out.push_str(&format!(
                    "2026-11-27 10:{:02}:{:02}.{:03} UTC [{}] {who}{m}\n",
                    i / 60_000 % 60,
                    i / 1000 % 60,
                    i % 1000,
                    100 + s
                ));
            }
        }
        out
    }

    /// The JSON report of a digest, its floats to 9 significant digits
    /// (sums made in another order differ in their last bits), its classes
    /// in key order, without the time it took.
    fn report_json(d: &Digest) -> serde_json::Value {
        fn norm(v: &mut serde_json::Value) {
            match v {
                serde_json::Value::Number(n) if n.is_f64() => {
                    let f = n.as_f64().unwrap_or(0.0);
                    *v = serde_json::Value::String(format!("{f:.8e}"));
                }
                serde_json::Value::Array(a) => a.iter_mut().for_each(norm),
                serde_json::Value::Object(o) => o.values_mut().for_each(norm),
                _ => {}
            }
        }
        let mut v = report::json(
            d,
            &report::ReportOptions {
                order_by: report::OrderBy::default(),
                limit: 0,
                ids: Vec::new(),
                version: "test".into(),
            },
        );
        v["elapsed_s"] = serde_json::Value::Null;
        if let Some(c) = v["classes"].as_array_mut() {
            c.sort_by_key(|c| c["key"].to_string());
            for c in c.iter_mut() {
                c["rank"] = serde_json::Value::Null;
            }
        }
        norm(&mut v);
        v
    }

    /// The digest of one reader that reads `name`'s events in order on
    /// this thread ([`read_events`]): what the parallel reader must equal.
    fn read_in_order(name: &str, group_by: GroupBy) -> Digest {
        let mut agg = Aggregate::new(group_by, TimeFilter::default());
        let mut malformed = MalformedLines::default();
        let info = read_events(name, None, None, &mut |e| agg.add(e, 0), &mut malformed).unwrap();
        Digest {
            aggregate: agg,
            files: vec![info],
            malformed,
            elapsed: Duration::ZERO,
        }
    }

    #[test]
    fn postgres_logs_read_in_parallel_equal_one_reader_in_order() {
        let dir = tempfile::tempdir().unwrap();
        for (pairs, seed) in [(false, 88_172_645_463_325_252), (true, 2_463_534_242)] {
            let path = dir.path().join(format!("pg-{pairs}.log"));
            let text = pg_log(3000, pairs, seed);
            std::fs::write(&path, &text).unwrap();
            let name = path.to_str().unwrap().to_string();
            // The reference: one reader, every entry in order.
            let one = read_in_order(&name, GroupBy::Fingerprint);
            assert_eq!(one.malformed.count, 0, "{:?}", one.malformed.first);
            // 8 of 10 made are statements (9 with pairs: the failed ones).
            let n = one.aggregate.global.count;
            assert!((2200..=2900).contains(&n), "{n} statements");
            let want = report_json(&one);
            for threads in [1, 3] {
                for chunk in [1, 300, 4096, CHUNK] {
                    let opts = Options {
                        group_by: GroupBy::Fingerprint,
                        filter: TimeFilter::default(),
                        threads,
                        format: None,
                        log_line_prefix: None,
                    };
                    let d = digest_in_chunks(std::slice::from_ref(&name), &opts, chunk, &|_| {})
                        .unwrap();
                    assert_eq!(d.files[0].bytes, text.len() as u64);
                    assert_eq!(
                        report_json(&d),
                        want,
                        "pairs {pairs}, {threads} threads, chunks of {chunk}"
                    );
                }
            }
        }
    }

    /// A MariaDB general log (`mysql` false: the time only when the second
    /// changes) or a MySQL 5.7+ one (an ISO time on every line) of about
    /// `n` lines from 12 interleaved connections that come and go: Connect
    /// (some refused), Init DB, statements (some over several lines), Quit;
    /// junk before the first event, and `bad` times that do not read.
    fn general_log(n: usize, mysql: bool, bad: usize, seed: u64) -> String {
        let mut x = seed;
        let mut rnd = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        let mut out = String::from(
            "junk before the server's header\n\
             /usr/sbin/mariadbd, Version: 10.11.19-MariaDB-0+deb12u1-log (Debian 12). started with:\n\
             Tcp port: 0  Unix socket: /tmp/sock\nTime\t\t    Id Command\tArgument\n",
        );
        let mut open: Vec<u64> = Vec::new();
        let (mut next, mut us, mut last_sec) = (3u64, 1_795_775_498_000_000i64, -1i64);
        for i in 0..n {
            us += rnd(300_000) as i64;
            let sec = us / 1_000_000;
            let time = if bad > 0 && i % (n / bad).max(1) == n / bad / 2 {
                "261327 10:00:00\t".to_string()
            } else if mysql {
                let (_, _, _, h, m, s) = event::civil_of(us);
                format!("2026-11-27T{h:02}:{m:02}:{s:02}.{:06}Z\t", us % 1_000_000)
            } else if sec != last_sec {
                last_sec = sec;
                let (_, _, _, h, m, s) = event::civil_of(us);
                format!("261127 {h:2}:{m:02}:{s:02}\t")
            } else {
                "\t\t".to_string()
            };
            let users = ["app@web1", "app@web2", "report@bi", "root@localhost"];
            let line = if open.len() < 12 && rnd(3) == 0 {
                let t = next;
                next += 1;
                if rnd(20) == 0 {
                    format!("{t} Connect\tAccess denied for user 'x'@'h' (using password: YES)")
                } else {
                    open.push(t);
                    let db = ["", "shop", "crm"][rnd(3) as usize];
                    format!(
                        "{t} Connect\t{} on {db} using TCP/IP",
                        users[rnd(4) as usize]
                    )
                }
            } else if open.is_empty() {
                format!("{} Query\tselect {i}", 1000 + rnd(5))
            } else {
                let k = rnd(open.len() as u64) as usize;
                let t = open[k];
                match rnd(40) {
                    0..=1 => {
                        open.swap_remove(k);
                        format!("{t} Quit\t")
                    }
                    2 => format!("{t} Init DB\t{}", ["shop", "crm", "logs"][rnd(3) as usize]),
                    3..=5 => format!("{t} Query\tselect *\nfrom t{}\nwhere id = {i}", rnd(4)),
                    _ => format!("{t} Query\tupdate t{} set k = k + 1 where id = {i}", rnd(4)),
                }
            };
            out.push_str(&format!("{time}{:>6}", ""));
            out.push_str(&line);
            out.push('\n');
        }
        out
    }

    #[test]
    fn general_logs_read_in_parallel_equal_one_reader_in_order() {
        let dir = tempfile::tempdir().unwrap();
        for (mysql, seed) in [(false, 88_172_645_463_325_252), (true, 2_463_534_242)] {
            let path = dir.path().join(format!("general-{mysql}.log"));
            let text = general_log(4000, mysql, 30, seed);
            std::fs::write(&path, &text).unwrap();
            let name = path.to_str().unwrap().to_string();
            for group_by in [
                GroupBy::Fingerprint,
                GroupBy::User,
                GroupBy::Host,
                GroupBy::Db,
            ] {
                // The reference: one reader, every line in order.
                let one = read_in_order(&name, group_by);
                // The junk line and each time that does not read.
                assert_eq!(one.malformed.count, 31, "{:?}", one.malformed.first);
                assert_eq!(one.malformed.first[0].line, 1);
                // (By user, host or database: the events that have one.)
                let n = one.aggregate.global.count;
                assert!(
                    n == 4000 || group_by != GroupBy::Fingerprint && n > 2000,
                    "{group_by:?}: {n}"
                );
                assert!(one.aggregate.classes.len() >= 3);
                let want = report_json(&one);
                for threads in [1, 3] {
                    for chunk in [1, 300, 4096, CHUNK] {
                        let opts = Options {
                            group_by,
                            filter: TimeFilter::default(),
                            threads,
                            format: None,
                            log_line_prefix: None,
                        };
                        let d =
                            digest_in_chunks(std::slice::from_ref(&name), &opts, chunk, &|_| {})
                                .unwrap();
                        assert_eq!(d.files[0].bytes, text.len() as u64);
                        assert_eq!(
                            report_json(&d),
                            want,
                            "mysql {mysql}, {group_by:?}, {threads} threads, chunks of {chunk}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn the_first_malformed_lines_kept_are_the_first_of_the_inputs() {
        let m = |input: u32, line: u64| Malformed {
            file: format!("f{input}"),
            input,
            line,
            reason: String::new(),
        };
        // Two parts, each with its first ones: the later part merged first.
        let mut late = MalformedLines::default();
        let mut early = MalformedLines::default();
        for l in 0..30 {
            late.push(m(0, 1000 + l));
            early.push(m(0, 10 + l));
        }
        early.push(m(1, 1));
        late.merge(early);
        assert_eq!(late.count, 61);
        let lines: Vec<_> = late.first.iter().map(|m| m.line).collect();
        assert_eq!(
            lines,
            (10..10 + event::MALFORMED_KEPT as u64).collect::<Vec<_>>()
        );
    }

    #[test]
    fn unknown_and_missing_inputs_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.txt");
        std::fs::write(&path, "hello\n").unwrap();
        let opts = Options {
            group_by: GroupBy::Fingerprint,
            filter: TimeFilter::default(),
            threads: 2,
            format: None,
            log_line_prefix: None,
        };
        let e = digest(&[path.to_str().unwrap().into()], &opts, &|_| {}).unwrap_err();
        assert!(
            e.to_string()
                .contains("not a MySQL/MariaDB slow or general log nor a PostgreSQL log"),
            "{e}"
        );
        let e = digest(
            &[dir.path().join("nope").to_str().unwrap().into()],
            &opts,
            &|_| {},
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("cannot read "), "{e}");
    }
}
