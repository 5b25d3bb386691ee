//! The workloads dbmeter knows and their options.

use crate::oltp::{self, OltpKind};
use crate::options::OptSpec;
use crate::tpcc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    Oltp(OltpKind),
    /// An event that does nothing: measures the engine's own cost.
    Noop,
    /// The TPC-C-like workload.
    Tpcc,
}

#[derive(Clone, Copy, Debug)]
pub struct WorkloadInfo {
    pub name: &'static str,
    pub workload: Workload,
    pub summary: &'static str,
}

pub const WORKLOADS: &[WorkloadInfo] = &[
    info(
        OltpKind::ReadWrite,
        "oltp_read_write",
        "sysbench OLTP read/write transactions (14 reads, 4 writes by default)",
    ),
    info(
        OltpKind::ReadOnly,
        "oltp_read_only",
        "sysbench OLTP read-only transactions",
    ),
    info(
        OltpKind::WriteOnly,
        "oltp_write_only",
        "sysbench OLTP write-only transactions",
    ),
    info(
        OltpKind::PointSelect,
        "oltp_point_select",
        "one primary-key lookup per event, no transaction",
    ),
    info(
        OltpKind::UpdateIndex,
        "oltp_update_index",
        "one UPDATE of the indexed column k per event",
    ),
    info(
        OltpKind::UpdateNonIndex,
        "oltp_update_non_index",
        "one UPDATE of the non-indexed column c per event",
    ),
    info(
        OltpKind::Delete,
        "oltp_delete",
        "one DELETE by primary key per event",
    ),
    info(
        OltpKind::Insert,
        "oltp_insert",
        "one INSERT of a new row per event",
    ),
    info(
        OltpKind::RandomPoints,
        "select_random_points",
        "SELECT ... WHERE k IN (random_points values) on sbtest1",
    ),
    info(
        OltpKind::RandomRanges,
        "select_random_ranges",
        "SELECT count(k) over number_of_ranges k ranges on sbtest1",
    ),
    info(
        OltpKind::BulkInsert,
        "bulk_insert",
        "each thread appends rows to its own table with multi-row INSERTs",
    ),
    WorkloadInfo {
        name: "tpcc",
        workload: Workload::Tpcc,
        summary: "TPC-C-like: warehouses, the five transactions with the specification's mix; NOPM and TPM",
    },
    WorkloadInfo {
        name: "noop",
        workload: Workload::Noop,
        summary: "an event that does no I/O: measures dbmeter's own cost per event",
    },
];

const fn info(kind: OltpKind, name: &'static str, summary: &'static str) -> WorkloadInfo {
    WorkloadInfo {
        name,
        workload: Workload::Oltp(kind),
        summary,
    }
}

/// Finds a workload by name (dashes and underscores alike).
pub fn find(name: &str) -> Option<&'static WorkloadInfo> {
    let want = name.replace('-', "_").to_ascii_lowercase();
    WORKLOADS.iter().find(|w| w.name == want)
}

impl Workload {
    /// The workload's own options (the CLI adds the general ones).
    pub fn options(&self) -> Vec<OptSpec> {
        match self {
            Workload::Oltp(kind) => oltp::options(*kind),
            Workload::Noop => Vec::new(),
            Workload::Tpcc => tpcc::options(),
        }
    }

    /// True when the workload touches no database.
    pub fn needs_database(&self) -> bool {
        !matches!(self, Workload::Noop)
    }

    /// The family of tables the workload's `prepare` creates: workloads of
    /// one family with equal data-shaping options (see
    /// `OptSpec::shapes_data`) can share one prepared dataset. None for a
    /// workload without data.
    pub fn dataset(&self) -> Option<&'static str> {
        match self {
            Workload::Oltp(OltpKind::BulkInsert) => Some("bulk"),
            Workload::Oltp(_) => Some("oltp"),
            Workload::Tpcc => Some("tpcc"),
            Workload::Noop => None,
        }
    }

    /// Whether its runs change the data (so that a benchmark that wants
    /// each run to start from the same state must reset it first).
    pub fn writes(&self) -> bool {
        match self {
            Workload::Oltp(kind) => !matches!(
                kind,
                OltpKind::ReadOnly
                    | OltpKind::PointSelect
                    | OltpKind::RandomPoints
                    | OltpKind::RandomRanges
            ),
            Workload::Tpcc => true,
            Workload::Noop => false,
        }
    }
}
