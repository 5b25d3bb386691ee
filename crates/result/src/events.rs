//! The events of a run, as the run layer emits them to whoever presents
//! them: dbmeter's text, sysbench's and pgbench's layouts, JSON lines, a
//! live status line (and later metrics endpoints). One stream, in order:
//!
//! 1. [`RunEvent::Note`]s of the benchmark while it plans (checks, loads);
//! 2. [`RunEvent::Started`] with the header's facts;
//! 3. more notes (set-up steps that follow the header, e.g. pgbench's
//!    vacuum), [`RunEvent::Warning`]s (distorting set-ups);
//! 4. [`RunEvent::Measuring`] when the measurement starts (the users are
//!    let go, or a warm-up ends);
//! 5. an [`RunEvent::Interval`] at every interval boundary of a run that
//!    reports intervals, or a [`RunEvent::Live`] once a second otherwise;
//! 6. [`RunEvent::MeasurementEnded`] when the engine is done;
//! 7. warnings found after the run, then [`RunEvent::Finished`] with the
//!    document.
//!
//! A benchmark contributes data (its measures, kinds, sections); where it
//! needs words of its own for an interval or the end of the series, its
//! plan gives them (`words` below), and text presenters print those
//! instead of their own.

use crate::{Interval, RunDocument};
use dbmeter_stats::MeasureInfo;
use serde::Serialize;

/// How a run is presented to the user: dbmeter's own layout, or a peer's
/// (the drop-in commands `dbmeter sysbench` and `dbmeter pgbench`). Chosen
/// by the command line; benchmarks see it only to word their own notes as
/// the peer does (pgbench's `starting vacuum...end.`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Layout {
    #[default]
    Dbmeter,
    /// sysbench 1.0's: its header, its report, the histogram
    /// (`--histogram`) before the report; with `percentile_off`
    /// (sysbench's `--percentile=0`) the report says "percentile stats:
    /// disabled". `verbosity` is sysbench's `--verbosity` (0-5, default
    /// 3): below 3 nothing but errors and what a script prints, below 2 no
    /// warnings; from 4 on, dbmeter's additions after sysbench's report.
    Sysbench { percentile_off: bool, verbosity: u8 },
    /// pgbench 15's: its first line on stdout, progress lines on stderr,
    /// its report; `progress_timestamp`: progress lines start with the
    /// Unix time (pgbench's `--progress-timestamp`).
    Pgbench { progress_timestamp: bool },
    /// mysqlslap's: nothing while the runs of a sweep go on, then a
    /// `Benchmark` block per engine and concurrency level once its
    /// iterations are done (read from the runs' [`crate::SlapSection`]s).
    /// `dbmeter`: dbmeter's own latency line after each block (`dbmeter
    /// slap`; `dbmeter mysqlslap` prints mysqlslap's alone); `silent`:
    /// no blocks (`--silent`, `--csv`, `--only-print`); `csv`: a CSV line
    /// per block on stdout (`--csv` without a file); `verbose`:
    /// mysqlslap's `--verbose` count (from 2 on, the set-up notes).
    Slap {
        dbmeter: bool,
        silent: bool,
        csv: bool,
        verbose: u8,
    },
}

/// What a run's header says: what runs where, and how.
#[derive(Clone, Debug, Default, Serialize)]
pub struct RunHeader {
    /// dbmeter's version.
    pub version: String,
    pub benchmark: String,
    /// The target (URL with its password masked, or an SQLite file);
    /// empty for a benchmark without a database.
    pub target: String,
    /// The server's (or library's) version, when known.
    pub server_version: String,
    pub threads: usize,
    /// `--rate`: events per second, when the run is rated.
    pub rate: Option<f64>,
    /// With a rate: the late limit (pgbench's `-L`), in milliseconds.
    pub late_limit_ms: Option<f64>,
    /// Seconds between interval reports, when the run reports intervals.
    pub report_interval_s: Option<f64>,
    /// `--report-checkpoints`: seconds into the measurement at which a
    /// full report of the time since the previous one is printed
    /// (ascending).
    pub checkpoints_s: Vec<f64>,
    /// The measured time the run is to last, if it has a time limit.
    pub time_limit_s: Option<f64>,
    /// Seconds of warm-up before the measurement (0: none).
    pub warmup_s: f64,
    /// `--warmup-time=auto[:MAX]`: the warm-up lasts until throughput is
    /// steady, at most this many seconds (`warmup_s` is then 0).
    pub warmup_auto_max_s: Option<f64>,
    pub seed: u64,
    /// Whether the seed was given (`--rand-seed`), not drawn from the clock.
    pub seed_given: bool,
    /// The percentile interval lines show.
    pub line_percentile: f64,
    /// The counters the benchmark declared beyond events.
    pub measures: Vec<MeasureInfo>,
    /// The names of the run's kinds of events (tpcc's transactions), in
    /// the order of an interval's `events_by_kind`; empty when the
    /// benchmark tells no kinds apart.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub kinds: Vec<String>,
    /// What the benchmark says of its settings before the users start
    /// (sysbench's cpu test: `Prime numbers limit: 10000`), in the words of
    /// the run's layout, one or more lines; printed with the header. None
    /// when it says nothing.
    pub preamble: Option<String>,
}

/// Where a run stands, once a second, when it reports no intervals.
#[derive(Clone, Debug, Serialize)]
pub struct Live {
    /// The last second (its time is the end of the measured time so far).
    pub interval: Interval,
    /// The measured time the run is to last (--time), if it has one.
    pub limit_s: Option<f64>,
    /// The percentile interval lines show (95 unless --percentile says
    /// otherwise).
    pub percentile: f64,
    /// Errors since the measurement started.
    pub errors: u64,
}

/// One event of a run.
#[derive(Clone, Copy, Debug)]
pub enum RunEvent<'a> {
    /// A line of the benchmark for the user (a step it took, a fact).
    Note(&'a str),
    /// A set-up that distorts the run, or a fact that could not be read.
    Warning(&'a str),
    /// The run starts: its header.
    Started(&'a RunHeader),
    /// The users are ready (connected, initialised) and the measurement
    /// starts: when they are let go, or at the end of the warm-up.
    Measuring,
    /// An interval ended (`--report-interval`). `words`: the plan's own
    /// text for it (a script's report hook), which text presenters print
    /// instead of their line ("" prints nothing).
    Interval {
        interval: &'a Interval,
        percentile: f64,
        words: Option<&'a str>,
    },
    /// Where the run stands (once a second, without --report-interval).
    Live(&'a Live),
    /// The engine is done. `words`: the plan's text that closes its own
    /// interval reports (a JSON array's `]`), if any.
    MeasurementEnded { words: Option<&'a str> },
    /// The run is over and recorded: its document, and the benchmark's
    /// own section of the text report.
    Finished {
        doc: &'a RunDocument,
        section: Option<&'a str>,
        /// The benchmark's part of sysbench's report, printed before
        /// "General statistics:" in sysbench's layout (the cpu test's "CPU
        /// speed:"); None when it has none.
        lead: Option<&'a str>,
    },
}

impl RunEvent<'_> {
    /// The event as one JSON object (JSON lines), tagged by `"event"`.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::json;
        match self {
            RunEvent::Note(text) => json!({"event": "note", "text": text}),
            RunEvent::Warning(m) => json!({"event": "warning", "message": m}),
            RunEvent::Started(h) => json!({"event": "started", "header": h}),
            RunEvent::Measuring => json!({"event": "measuring"}),
            RunEvent::Interval { interval, .. } => {
                json!({"event": "interval", "interval": interval})
            }
            RunEvent::Live(l) => json!({"event": "live", "interval": l.interval}),
            RunEvent::MeasurementEnded { .. } => json!({"event": "measurement_ended"}),
            RunEvent::Finished { doc, .. } => json!({"event": "finished", "document": doc}),
        }
    }
}

/// The percentile interval lines show: 95 when requested (as sysbench),
/// otherwise the highest requested.
pub fn line_percentile(percentiles: &[f64]) -> f64 {
    if percentiles.iter().any(|p| (*p - 95.0).abs() < 1e-9) {
        95.0
    } else {
        percentiles.iter().copied().reduce(f64::max).unwrap_or(95.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_for_lines() {
        assert_eq!(line_percentile(&[50.0, 95.0, 99.0]), 95.0);
        assert_eq!(line_percentile(&[50.0, 99.0]), 99.0);
        assert_eq!(line_percentile(&[]), 95.0);
    }
}
