//! sysbench's OLTP family: the sbtest tables, their loader, and the events
//! of each test with sysbench's SQL and counting.

mod benchmark;
mod load;
mod schema;
mod user;

pub use benchmark::{Oltp, load_line};
pub use load::{LoadReport, cleanup, prepare, prewarm};
pub use schema::{Readiness, check_ready, table_names};
pub use user::{OltpFactory, OltpUser};

use crate::options::{OptKind, OptSpec, OptValues, choice, opt};
use crate::random::RandSpec;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OltpKind {
    ReadWrite,
    ReadOnly,
    WriteOnly,
    PointSelect,
    UpdateIndex,
    UpdateNonIndex,
    Delete,
    Insert,
    RandomPoints,
    RandomRanges,
    BulkInsert,
}

/// Options of every OLTP test (sysbench's oltp_common).
const COMMON: &[OptSpec] = &[
    opt("tables", OptKind::Size, "1", "number of tables").shapes_data(),
    opt(
        "table_size",
        OptKind::Size,
        "10000",
        "number of rows per table",
    )
    .shapes_data(),
    opt(
        "range_size",
        OptKind::Size,
        "100",
        "range size for range SELECT queries",
    ),
    opt(
        "point_selects",
        OptKind::Size,
        "10",
        "point SELECT queries per transaction",
    ),
    opt(
        "simple_ranges",
        OptKind::Size,
        "1",
        "simple range SELECT queries per transaction",
    ),
    opt(
        "sum_ranges",
        OptKind::Size,
        "1",
        "SELECT SUM() queries per transaction",
    ),
    opt(
        "order_ranges",
        OptKind::Size,
        "1",
        "SELECT ORDER BY queries per transaction",
    ),
    opt(
        "distinct_ranges",
        OptKind::Size,
        "1",
        "SELECT DISTINCT queries per transaction",
    ),
    opt(
        "index_updates",
        OptKind::Size,
        "1",
        "UPDATE index queries per transaction",
    ),
    opt(
        "non_index_updates",
        OptKind::Size,
        "1",
        "UPDATE non-index queries per transaction",
    ),
    opt(
        "delete_inserts",
        OptKind::Size,
        "1",
        "DELETE/INSERT pairs per transaction",
    ),
    opt(
        "range_selects",
        OptKind::Bool,
        "on",
        "enable/disable all range SELECT queries",
    ),
    opt(
        "auto_inc",
        OptKind::Bool,
        "on",
        "let the database generate ids of inserted rows",
    )
    .shapes_data(),
    opt(
        "skip_trx",
        OptKind::Bool,
        "off",
        "do not wrap statements in BEGIN/COMMIT",
    ),
    opt(
        "secondary",
        OptKind::Bool,
        "off",
        "make the id index a secondary (non-primary) key",
    )
    .shapes_data(),
    opt(
        "create_secondary",
        OptKind::Bool,
        "on",
        "create the secondary index on k after loading",
    )
    .shapes_data(),
    opt(
        "mysql_storage_engine",
        OptKind::Str,
        "innodb",
        "MySQL/MariaDB storage engine of the tables",
    )
    .shapes_data(),
    opt(
        "create_table_options",
        OptKind::Str,
        "",
        "extra options appended to CREATE TABLE",
    )
    .shapes_data(),
];

/// Options of the id distribution (general options in sysbench).
pub const RAND_OPTIONS: &[OptSpec] = &[
    opt(
        "rand-type",
        choice(&["uniform", "gaussian", "special", "pareto", "zipfian"]),
        "special",
        "distribution of random ids",
    ),
    opt(
        "rand-spec-iter",
        OptKind::Size,
        "12",
        "draws averaged by the gaussian distribution",
    ),
    opt(
        "rand-spec-pct",
        OptKind::Float,
        "1",
        "special: hot part of the range, in %",
    ),
    opt(
        "rand-spec-res",
        OptKind::Float,
        "75",
        "special: share of draws that hit the hot part, in %",
    ),
    opt(
        "rand-pareto-h",
        OptKind::Float,
        "0.2",
        "pareto: the h parameter",
    ),
    opt(
        "rand-zipfian-exp",
        OptKind::Float,
        "0.8",
        "zipfian: the exponent",
    ),
];

pub fn options(kind: OltpKind) -> Vec<OptSpec> {
    let mut v: Vec<OptSpec> = match kind {
        OltpKind::BulkInsert => Vec::new(),
        _ => COMMON.to_vec(),
    };
    match kind {
        OltpKind::RandomPoints => {
            v.push(opt(
                "random_points",
                OptKind::Size,
                "10",
                "number of k values in the IN list",
            ));
        }
        OltpKind::RandomRanges => {
            v.push(opt(
                "number_of_ranges",
                OptKind::Size,
                "10",
                "number of k ranges OR-ed together",
            ));
            v.push(opt("delta", OptKind::Size, "5", "width of each k range"));
        }
        _ => {}
    }
    v.extend_from_slice(RAND_OPTIONS);
    v
}

/// A test's settings, read from its options.
#[derive(Clone, Debug)]
pub struct OltpConfig {
    pub kind: OltpKind,
    pub tables: u32,
    pub table_size: u64,
    pub range_size: u64,
    pub point_selects: u64,
    pub simple_ranges: u64,
    pub sum_ranges: u64,
    pub order_ranges: u64,
    pub distinct_ranges: u64,
    pub index_updates: u64,
    pub non_index_updates: u64,
    pub delete_inserts: u64,
    pub range_selects: bool,
    pub auto_inc: bool,
    pub skip_trx: bool,
    pub secondary: bool,
    pub create_secondary: bool,
    pub random_points: u64,
    pub number_of_ranges: u64,
    pub delta: u64,
    pub rand: RandSpec,
    pub mysql_storage_engine: String,
    pub create_table_options: String,
    /// bulk_insert: one table per thread.
    pub threads: u32,
}

impl OltpConfig {
    pub fn from_options(kind: OltpKind, o: &OptValues, threads: u32) -> Result<Self, String> {
        let or = |name: &str, dflt: u64| {
            if o.all().contains_key(name) {
                o.u64(name)
            } else {
                dflt
            }
        };
        let cfg = OltpConfig {
            kind,
            tables: or("tables", 1) as u32,
            table_size: or("table-size", 10_000),
            range_size: or("range-size", 100),
            point_selects: or("point-selects", 10),
            simple_ranges: or("simple-ranges", 1),
            sum_ranges: or("sum-ranges", 1),
            order_ranges: or("order-ranges", 1),
            distinct_ranges: or("distinct-ranges", 1),
            index_updates: or("index-updates", 1),
            non_index_updates: or("non-index-updates", 1),
            delete_inserts: or("delete-inserts", 1),
            range_selects: !o.all().contains_key("range-selects") || o.bool("range-selects"),
            auto_inc: !o.all().contains_key("auto-inc") || o.bool("auto-inc"),
            skip_trx: o.bool("skip-trx"),
            secondary: o.bool("secondary"),
            create_secondary: !o.all().contains_key("create-secondary")
                || o.bool("create-secondary"),
            random_points: or("random-points", 10),
            number_of_ranges: or("number-of-ranges", 10),
            delta: or("delta", 5),
            rand: RandSpec::from_options(o)?,
            mysql_storage_engine: if o.all().contains_key("mysql-storage-engine") {
                o.str("mysql-storage-engine").to_string()
            } else {
                "innodb".to_string()
            },
            create_table_options: o.str("create-table-options").to_string(),
            threads: threads.max(1),
        };
        if !cfg
            .mysql_storage_engine
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            return Err(format!(
                "--mysql-storage-engine={}: expected an engine name such as innodb",
                cfg.mysql_storage_engine
            ));
        }
        if cfg.tables == 0 {
            return Err("--tables=0: at least one table is needed".into());
        }
        if cfg.table_size == 0 && kind != OltpKind::BulkInsert {
            return Err("--table-size=0: tables need at least one row".into());
        }
        if cfg.table_size > i32::MAX as u64 {
            return Err(format!(
                "--table-size={}: at most {} rows per table (ids are 32-bit integers, as in sysbench)",
                cfg.table_size,
                i32::MAX
            ));
        }
        if kind == OltpKind::RandomPoints && cfg.random_points == 0 {
            return Err("--random-points=0: at least one point is needed".into());
        }
        if kind == OltpKind::RandomRanges && cfg.number_of_ranges == 0 {
            return Err("--number-of-ranges=0: at least one range is needed".into());
        }
        Ok(cfg)
    }

    /// Number of tables this test uses (bulk_insert: one per thread).
    pub fn table_count(&self) -> u32 {
        match self.kind {
            OltpKind::BulkInsert => self.threads,
            OltpKind::RandomPoints | OltpKind::RandomRanges => 1,
            _ => self.tables,
        }
    }
}
