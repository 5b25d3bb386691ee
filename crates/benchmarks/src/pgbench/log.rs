//! pgbench's `-l` logs: a line per transaction (or, with
//! `--aggregate-interval`, a line per interval) in files named
//! `PREFIX.PID` and `PREFIX.PID.N`, one file per pgbench thread (`-j`),
//! each thread taking a block of clients as pgbench splits them.
//!
//! A transaction's line is pgbench 15's:
//! `client_id transaction_no time script_no time_epoch time_us [schedule_lag] [retries]`,
//! where `time` is the latency in microseconds (from the scheduled start
//! under a rate), or `failed` (`serialization`/`deadlock` with
//! `--failures-detailed`) or `skipped`; `time_epoch time_us` is when it
//! ended; `schedule_lag` (with a rate) is how late it started;
//! `retries` (with `--max-tries` other than 1) how often it was retried.
//!
//! An aggregated line is pgbench 15's (15 fields, every one always there):
//! `interval_start num_transactions sum_latency sum_latency_2 min_latency
//! max_latency sum_lag sum_lag_2 min_lag max_lag skipped retried retries
//! serialization_failures deadlock_failures`. Unlike pgbench 15, the last,
//! partial interval is written too, so the lines add up to the run's
//! transactions.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// What the logs are asked for.
#[derive(Clone, Debug)]
pub struct LogSpec {
    /// `--log-prefix` (pgbench's default `pgbench_log`).
    pub prefix: String,
    /// pgbench's `-j`: one file per thread (at most one per client).
    pub jobs: usize,
    pub clients: usize,
    /// `--sampling-rate`: the share of transactions logged (1: all).
    pub sampling_rate: f64,
    /// `--aggregate-interval` in seconds; None: a line per transaction.
    pub aggregate: Option<u64>,
    /// A rate is set: the lines carry the schedule lag.
    pub with_lag: bool,
    /// `--max-tries` is not 1: the lines carry the retries.
    pub with_retries: bool,
    /// `--failures-detailed`: failed transactions say why.
    pub failures_detailed: bool,
}

/// How a logged transaction ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    Done,
    Serialization,
    Deadlock,
    Skipped,
}

/// One transaction for the log.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    pub client: usize,
    /// The client's transaction number (from 1; skipped and failed ones
    /// count).
    pub number: u64,
    pub script: usize,
    pub ending: Ending,
    /// From the (scheduled) start to the end.
    pub latency: Duration,
    pub lag: Duration,
    /// Tries beyond the first.
    pub retries: u32,
}

/// The numbers of one aggregation interval, in microseconds.
#[derive(Clone, Copy, Debug, Default)]
struct Agg {
    count: u64,
    sum: f64,
    sum2: f64,
    min: f64,
    max: f64,
    lag_sum: f64,
    lag_sum2: f64,
    lag_min: f64,
    lag_max: f64,
    skipped: u64,
    retried: u64,
    retries: u64,
    serialization: u64,
    deadlock: u64,
}

impl Agg {
    fn add(&mut self, e: &Entry) {
        if e.retries > 0 {
            self.retried += 1;
            self.retries += u64::from(e.retries);
        }
        match e.ending {
            Ending::Skipped => self.skipped += 1,
            Ending::Serialization => self.serialization += 1,
            Ending::Deadlock => self.deadlock += 1,
            Ending::Done => {
                let lat = e.latency.as_secs_f64() * 1e6;
                let lag = e.lag.as_secs_f64() * 1e6;
                if self.count == 0 {
                    (self.min, self.max, self.lag_min, self.lag_max) = (lat, lat, lag, lag);
                } else {
                    self.min = self.min.min(lat);
                    self.max = self.max.max(lat);
                    self.lag_min = self.lag_min.min(lag);
                    self.lag_max = self.lag_max.max(lag);
                }
                self.count += 1;
                self.sum += lat;
                self.sum2 += lat * lat;
                self.lag_sum += lag;
                self.lag_sum2 += lag * lag;
            }
        }
    }

    fn write(&self, start_s: u64, out: &mut String) {
        let _ = writeln!(
            out,
            "{start_s} {} {:.0} {:.0} {:.0} {:.0} {:.0} {:.0} {:.0} {:.0} {} {} {} {} {}",
            self.count,
            self.sum,
            self.sum2,
            self.min,
            self.max,
            self.lag_sum,
            self.lag_sum2,
            self.lag_min,
            self.lag_max,
            self.skipped,
            self.retried,
            self.retries,
            self.serialization,
            self.deadlock
        );
    }
}

/// One log file (one pgbench thread's).
struct LogFile {
    path: PathBuf,
    out: BufWriter<File>,
    /// With aggregation: the current interval's start (µs since the
    /// epoch) and numbers.
    agg: Option<(u64, Agg)>,
    /// The first write error, reported once at the end.
    error: Option<String>,
    line: String,
}

impl LogFile {
    fn put(&mut self, spec: &LogSpec, e: &Entry, now: SystemTime) {
        let since = now.duration_since(UNIX_EPOCH).unwrap_or_default();
        let now_us = since.as_micros() as u64;
        self.line.clear();
        match (spec.aggregate, self.agg.as_mut()) {
            (Some(every), Some((start, agg))) => {
                let every_us = every.max(1) * 1_000_000;
                // Lines for the intervals that ended before this
                // transaction (empty ones too, as pgbench writes them).
                while now_us >= *start + every_us {
                    agg.write(*start / 1_000_000, &mut self.line);
                    *agg = Agg::default();
                    *start += every_us;
                }
                agg.add(e);
            }
            _ => {
                let _ = write!(self.line, "{} {} ", e.client, e.number);
                match (e.ending, spec.failures_detailed) {
                    (Ending::Done, _) => {
                        let _ = write!(self.line, "{}", e.latency.as_micros());
                    }
                    (Ending::Skipped, _) => self.line.push_str("skipped"),
                    (Ending::Serialization, true) => self.line.push_str("serialization"),
                    (Ending::Deadlock, true) => self.line.push_str("deadlock"),
                    (_, false) => self.line.push_str("failed"),
                }
                let _ = write!(
                    self.line,
                    " {} {} {}",
                    e.script,
                    since.as_secs(),
                    since.subsec_micros()
                );
                if spec.with_lag {
                    let _ = write!(self.line, " {}", e.lag.as_micros());
                }
                if spec.with_retries {
                    let _ = write!(self.line, " {}", e.retries);
                }
                self.line.push('\n');
            }
        }
        if !self.line.is_empty() {
            self.write_line();
        }
    }

    fn write_line(&mut self) {
        if let Err(e) = self.out.write_all(self.line.as_bytes())
            && self.error.is_none()
        {
            self.error = Some(format!("cannot write {}: {e}", self.path.display()));
        }
    }

    /// Writes the last interval and flushes.
    fn finish(&mut self) -> Option<String> {
        if let Some((start, agg)) = self.agg.take() {
            self.line.clear();
            agg.write(start / 1_000_000, &mut self.line);
            self.write_line();
        }
        if let Err(e) = self.out.flush()
            && self.error.is_none()
        {
            self.error = Some(format!("cannot write {}: {e}", self.path.display()));
        }
        self.error.take()
    }
}

/// The log files of a run, shared by its clients.
pub struct TxLogs {
    spec: LogSpec,
    files: Vec<Mutex<LogFile>>,
}

impl std::fmt::Debug for TxLogs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TxLogs").field("spec", &self.spec).finish()
    }
}

/// The pgbench thread (0-based) of `client` when `clients` clients are
/// split over `jobs` threads in blocks, the first ones taking the larger
/// blocks, as pgbench splits them.
pub fn job_of(client: usize, clients: usize, jobs: usize) -> usize {
    let jobs = jobs.clamp(1, clients.max(1));
    let mut first = 0;
    for j in 0..jobs {
        let left = clients - first;
        let n = left.div_ceil(jobs - j);
        if client < first + n {
            return j;
        }
        first += n;
    }
    jobs - 1
}

impl TxLogs {
    /// Creates the files (in the current directory, or where the prefix
    /// says): `PREFIX.PID` for the first thread, `PREFIX.PID.N` for the
    /// others.
    pub fn create(spec: LogSpec) -> Result<Arc<TxLogs>, String> {
        let pid = std::process::id();
        let jobs = spec.jobs.clamp(1, spec.clients.max(1));
        let start_us = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_micros() as u64;
        let mut files = Vec::with_capacity(jobs);
        for j in 0..jobs {
            let path = PathBuf::from(if j == 0 {
                format!("{}.{pid}", spec.prefix)
            } else {
                format!("{}.{pid}.{j}", spec.prefix)
            });
            let file = File::create(&path)
                .map_err(|e| format!("could not open logfile \"{}\": {e}", path.display()))?;
            files.push(Mutex::new(LogFile {
                path,
                out: BufWriter::with_capacity(64 * 1024, file),
                agg: spec.aggregate.map(|_| (start_us, Agg::default())),
                error: None,
                line: String::with_capacity(128),
            }));
        }
        Ok(Arc::new(TxLogs { spec, files }))
    }

    pub fn spec(&self) -> &LogSpec {
        &self.spec
    }

    /// Logs one transaction of its client's file.
    pub fn put(&self, file: usize, e: &Entry) {
        let now = SystemTime::now();
        if let Some(f) = self.files.get(file)
            && let Ok(mut f) = f.lock()
        {
            f.put(&self.spec, e, now);
        }
    }

    /// The file of `client`.
    pub fn file_of(&self, client: usize) -> usize {
        job_of(client, self.spec.clients, self.spec.jobs)
    }

    /// Writes the last intervals and flushes every file; the first error.
    pub fn finish(&self) -> Option<String> {
        let mut first = None;
        for f in &self.files {
            if let Ok(mut f) = f.lock()
                && let Some(e) = f.finish()
                && first.is_none()
            {
                first = Some(e);
            }
        }
        first
    }
}

/// A client's draw for `--sampling-rate` (a small generator of its own:
/// which transactions are logged does not touch the scripts' random
/// numbers).
#[derive(Clone, Debug)]
pub struct Sampler(u64);

impl Sampler {
    pub fn new(seed: u64, client: usize) -> Sampler {
        Sampler(seed ^ (client as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    /// Whether the next transaction is logged.
    pub fn take(&mut self, rate: f64) -> bool {
        if rate >= 1.0 {
            return true;
        }
        // xorshift64*
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        let r = (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64;
        r < rate
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clients_split_in_blocks_as_pgbench_splits_them() {
        let of = |c, n, j| job_of(c, n, j);
        // 3 clients, 2 threads: 0 and 1 on the first, 2 on the second.
        assert_eq!([of(0, 3, 2), of(1, 3, 2), of(2, 3, 2)], [0, 0, 1]);
        // More threads than clients: one per client.
        assert_eq!([of(0, 2, 4), of(1, 2, 4)], [0, 1]);
        assert_eq!([of(0, 5, 1), of(4, 5, 1)], [0, 0]);
        // 10 over 4: 3, 3, 2, 2.
        let v: Vec<usize> = (0..10).map(|c| of(c, 10, 4)).collect();
        assert_eq!(v, [0, 0, 0, 1, 1, 1, 2, 2, 3, 3]);
    }

    #[test]
    fn sampling_takes_about_the_share_asked() {
        let mut s = Sampler::new(7, 0);
        let n = (0..100_000).filter(|_| s.take(0.25)).count();
        assert!((23_000..27_000).contains(&n), "{n}");
        assert!(Sampler::new(1, 1).take(1.0));
    }

    #[test]
    fn lines_and_aggregates() {
        let dir = tempfile::tempdir().unwrap();
        let prefix = dir.path().join("x").to_string_lossy().to_string();
        let spec = LogSpec {
            prefix: prefix.clone(),
            jobs: 1,
            clients: 2,
            sampling_rate: 1.0,
            aggregate: None,
            with_lag: true,
            with_retries: true,
            failures_detailed: false,
        };
        let logs = TxLogs::create(spec.clone()).unwrap();
        let e = Entry {
            client: 1,
            number: 3,
            script: 0,
            ending: Ending::Done,
            latency: Duration::from_micros(1500),
            lag: Duration::from_micros(20),
            retries: 0,
        };
        logs.put(0, &e);
        logs.put(
            0,
            &Entry {
                ending: Ending::Serialization,
                retries: 2,
                ..e
            },
        );
        assert_eq!(logs.finish(), None);
        let text = std::fs::read_to_string(format!("{prefix}.{}", std::process::id())).unwrap();
        let lines: Vec<Vec<&str>> = text.lines().map(|l| l.split(' ').collect()).collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0][..4], ["1", "3", "1500", "0"]);
        assert_eq!(lines[0][6..], ["20", "0"]);
        assert_eq!(lines[1][2], "failed");
        assert_eq!(lines[1][7], "2");

        let agg = TxLogs::create(LogSpec {
            aggregate: Some(60),
            ..spec
        })
        .unwrap();
        agg.put(0, &e);
        agg.put(0, &e);
        agg.put(
            0,
            &Entry {
                ending: Ending::Skipped,
                ..e
            },
        );
        agg.finish();
        let text = std::fs::read_to_string(format!("{prefix}.{}", std::process::id())).unwrap();
        let f: Vec<&str> = text.trim().split(' ').collect();
        assert_eq!(f.len(), 15, "{text}");
        assert_eq!(f[1..6], ["2", "3000", "4500000", "1500", "1500"]);
        assert_eq!(f[10], "1");
    }
}
