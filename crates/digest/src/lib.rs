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

use std::sync::Mutex;
use std::sync::mpsc;
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

    /// Whether its events can be read apart, chunk by chunk in parallel
    /// (the general log carries the time and each thread's database from
    /// line to line, and is read in order).
    fn independent_events(self) -> bool {
        matches!(self, LogFormat::MysqlSlow)
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

/// Bytes a chunk holds at least (but a whole event, whatever its size).
const CHUNK: usize = 1 << 20;

/// A piece of an input made of whole events.
struct Chunk {
    file: u32,
    data: Vec<u8>,
    first_line: u64,
    offset: u64,
    file_start: bool,
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
    let started = Instant::now();
    let threads = opts.threads.max(1);
    let names: Vec<String> = inputs.to_vec();
    let (tx, rx) = mpsc::sync_channel::<Chunk>(threads);
    let rx = Mutex::new(rx);
    let result = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let rx = &rx;
                let names = &names;
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
                        slowlog::parse_chunk(
                            &c.data,
                            c.first_line,
                            c.offset,
                            c.file_start,
                            |e| agg.add(e, file),
                            |b| {
                                malformed.push(Malformed {
                                    file: name.clone(),
                                    line: b.line,
                                    reason: b.reason,
                                })
                            },
                        );
                    }
                    part
                })
            })
            .collect();
        let mut own = Part {
            agg: Aggregate::new(opts.group_by, opts.filter.clone()),
            malformed: MalformedLines::default(),
        };
        let read = read_inputs(&names, opts, &tx, &mut own, progress);
        drop(tx);
        let mut parts = vec![own];
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
    let Some(first) = it.next() else {
        unreachable!("the reader's part is always there")
    };
    let mut agg = first.agg;
    let mut malformed = first.malformed;
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
/// for the workers (or parses it here, when its events must be read in
/// order).
fn read_inputs(
    names: &[String],
    opts: &Options,
    tx: &mpsc::SyncSender<Chunk>,
    own: &mut Part,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<FileInfo>, DigestError> {
    let mut files = Vec::new();
    let mut total = 0u64;
    for (i, name) in names.iter().enumerate() {
        let io_err = |error| DigestError::Io {
            name: name.clone(),
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
                    name: name.clone(),
                    why,
                });
            }
        };
        let format = opts.format.or(header.as_ref().map(|(h, _)| h.format));
        let log_line_prefix = opts.log_line_prefix.as_deref().or(header
            .as_ref()
            .and_then(|(h, _)| h.log_line_prefix.as_deref()));
        let (format, mut pg) = choose_format(name, format, log_line_prefix, &buf)?;
        let mut general = general::GeneralParser::default();
        // Lines and bytes count from the file's start, the header included.
        let (mut line, mut offset) = match &header {
            Some((_, len)) => (2u64, *len as u64),
            None => (1u64, 0u64),
        };
        total += offset;
        let mut first = true;
        loop {
            // Cut after the last event start, or send everything at the end.
            let cut = if more {
                format.last_boundary(&buf)
            } else {
                Some(buf.len())
            };
            let Some(cut) = cut else {
                // One event larger than the buffer: read on.
                more = input::fill(&mut opened.reader, &mut buf, CHUNK).map_err(io_err)?;
                continue;
            };
            let rest = buf.split_off(cut);
            let data = std::mem::replace(&mut buf, rest);
            let lines = memchr::memchr_iter(b'\n', &data).count() as u64;
            let len = data.len() as u64;
            if !data.is_empty() {
                if format.independent_events() {
                    let chunk = Chunk {
                        file: i as u32,
                        data,
                        first_line: line,
                        offset,
                        file_start: first,
                    };
                    if tx.send(chunk).is_err() {
                        break;
                    }
                } else if let Some(pg) = pg.as_mut() {
                    let agg = &mut own.agg;
                    let malformed = &mut own.malformed;
                    pg.parse_chunk(
                        &data,
                        line,
                        offset,
                        |e| agg.add(e, i as u32),
                        |b| {
                            malformed.push(Malformed {
                                file: name.clone(),
                                line: b.line,
                                reason: b.reason,
                            })
                        },
                    );
                } else {
                    let agg = &mut own.agg;
                    let malformed = &mut own.malformed;
                    general.parse_chunk(
                        &data,
                        line,
                        offset,
                        |e| agg.add(e, i as u32),
                        |b| {
                            malformed.push(Malformed {
                                file: name.clone(),
                                line: b.line,
                                reason: b.reason,
                            })
                        },
                    );
                }
            }
            first = false;
            line += lines;
            offset += len;
            total += len;
            progress(total);
            if !more && buf.is_empty() {
                break;
            }
            if more {
                more = input::fill(&mut opened.reader, &mut buf, CHUNK).map_err(io_err)?;
            }
        }
        if let Some(pg) = pg.as_mut() {
            let agg = &mut own.agg;
            pg.finish(|e| agg.add(e, i as u32));
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
