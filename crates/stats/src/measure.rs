//! Named measures: the counters a benchmark declares beyond events.
//!
//! The engine counts events, errors, reconnects and the like for every
//! benchmark (the fields of [`crate::Counters`]). What an event *did* is
//! the benchmark's to name: statements read, written or other for the
//! SQL benchmarks, bytes read and written or fsyncs for a file benchmark.
//! A run plan declares its measures (at most [`MAX_MEASURES`]); users add
//! to them by index ([`crate::Counters::measures`]), and the document,
//! the reports, CSV, JSON and compare read their names, labels and units
//! from the declaration.

use serde::{Deserialize, Serialize};

/// The most measures one run can declare (they are counted in a fixed
/// array, so that counting stays a plain add on the hot path).
pub const MAX_MEASURES: usize = 8;

/// One counter a benchmark declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Measure {
    /// Its name in documents, CSV headers and comparisons (`reads`).
    pub name: &'static str,
    /// Its label in text reports (`read`).
    pub label: &'static str,
    /// What one unit of it is (`statement`, `byte`).
    pub unit: &'static str,
    /// Whether reports show it per second too.
    pub per_second: bool,
}

impl Measure {
    pub const fn new(
        name: &'static str,
        label: &'static str,
        unit: &'static str,
        per_second: bool,
    ) -> Measure {
        Measure {
            name,
            label,
            unit,
            per_second,
        }
    }

    /// The declaration as documents keep it.
    pub fn info(&self) -> MeasureInfo {
        MeasureInfo {
            name: self.name.to_string(),
            label: self.label.to_string(),
            unit: self.unit.to_string(),
            per_second: self.per_second,
        }
    }
}

/// The unit of a measure that counts bytes (a file or memory benchmark's
/// bytes read or written): reports show it in MiB and MiB/s.
pub const BYTE: &str = "byte";

/// A declared measure as a document keeps it (owned, so that stored runs
/// read back with their own declarations).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MeasureInfo {
    pub name: String,
    pub label: String,
    pub unit: String,
    #[serde(default)]
    pub per_second: bool,
}

/// The statements of the SQL benchmarks, classed as sysbench classes
/// them: a read returned a result set, a write changed rows, anything
/// else (BEGIN, COMMIT, DML that touched no row) is "other".
pub mod sql {
    use super::Measure;

    /// Index of reads in [`MEASURES`] (and in the counters' array).
    pub const READS: usize = 0;
    pub const WRITES: usize = 1;
    pub const OTHERS: usize = 2;

    pub const MEASURES: [Measure; 3] = [
        Measure::new("reads", "read", "statement", true),
        Measure::new("writes", "write", "statement", true),
        Measure::new("others", "other", "statement", true),
    ];

    /// True when `names` (a run's declared measures, or the names an
    /// interval counts) include the SQL statement classes: what reports
    /// call "SQL statistics", "queries" and transactions.
    pub fn is_sql<'a>(names: impl Iterator<Item = &'a str>) -> bool {
        let names: Vec<&str> = names.collect();
        MEASURES.iter().all(|m| names.contains(&m.name))
    }
}

/// The requests of a file benchmark (fileio): reads and writes of a
/// block, fsync calls, and the bytes read and written. Reports show the
/// byte counts as MiB/s ([`Measure::unit`] `byte`).
pub mod file {
    use super::Measure;

    /// Index of reads in [`MEASURES`] (and in the counters' array).
    pub const READS: usize = 0;
    pub const WRITES: usize = 1;
    pub const FSYNCS: usize = 2;
    pub const BYTES_READ: usize = 3;
    pub const BYTES_WRITTEN: usize = 4;

    pub const MEASURES: [Measure; 5] = [
        Measure::new("reads", "reads", "request", true),
        Measure::new("writes", "writes", "request", true),
        Measure::new("fsyncs", "fsyncs", "call", true),
        Measure::new("bytes_read", "read", super::BYTE, true),
        Measure::new("bytes_written", "written", super::BYTE, true),
    ];
}
