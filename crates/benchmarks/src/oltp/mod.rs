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

use crate::benchmark::BenchError;
use crate::options::{OptKind, OptSpec, OptValues, bad_value, choice, opt};
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

/// The most tables `--tables` makes (sbtest1..sbtestN).
pub const MAX_TABLES: u64 = 100_000;

/// The most statements of one kind in a transaction (`--point-selects`,
/// `--index-updates`...): more would make one event run for hours.
pub const MAX_PER_TRANSACTION: u64 = 1_000_000;

/// The most values of one statement's IN list or OR-ed ranges (servers
/// limit the values bound to one statement).
pub const MAX_IN_LIST: u64 = 10_000;

impl OltpConfig {
    /// Reads and checks the options of test `kind` (its own, those of the
    /// id distribution); `threads` is `--threads` (bulk_insert's tables).
    /// The error is a usage error of one line naming the option.
    pub fn from_options(kind: OltpKind, o: &OptValues, threads: u32) -> Result<Self, BenchError> {
        let rand = RandSpec::from_options(o)?;
        let threads = threads.max(1);
        if kind == OltpKind::BulkInsert {
            // bulk_insert has none of the common options: one table per
            // thread, rows appended.
            return Ok(OltpConfig::bulk_insert(rand, threads));
        }
        let ids = i32::MAX as u64;
        let count = |name: &str| {
            o.u64_in(
                name,
                0..=MAX_PER_TRANSACTION,
                &format!("a count from 0 to {MAX_PER_TRANSACTION}"),
            )
        };
        let tables = o.u64_in(
            "tables",
            1..=MAX_TABLES,
            &format!("a number of tables from 1 to {MAX_TABLES}"),
        )? as u32;
        let table_size = o.u64_in(
            "table-size",
            1..=ids,
            &format!("rows per table from 1 to {ids} (ids are 32-bit integers, as in sysbench)"),
        )?;
        let range_size = o.u64_in(
            "range-size",
            1..=ids,
            &format!("rows per range from 1 to {ids}"),
        )?;
        let cfg = OltpConfig {
            kind,
            tables,
            table_size,
            range_size,
            point_selects: count("point-selects")?,
            simple_ranges: count("simple-ranges")?,
            sum_ranges: count("sum-ranges")?,
            order_ranges: count("order-ranges")?,
            distinct_ranges: count("distinct-ranges")?,
            index_updates: count("index-updates")?,
            non_index_updates: count("non-index-updates")?,
            delete_inserts: count("delete-inserts")?,
            range_selects: o.bool("range-selects"),
            auto_inc: o.bool("auto-inc"),
            skip_trx: o.bool("skip-trx"),
            secondary: o.bool("secondary"),
            create_secondary: o.bool("create-secondary"),
            random_points: match kind {
                OltpKind::RandomPoints => o.u64_in(
                    "random-points",
                    1..=MAX_IN_LIST,
                    &format!("a number of points from 1 to {MAX_IN_LIST}"),
                )?,
                _ => 10,
            },
            number_of_ranges: match kind {
                OltpKind::RandomRanges => o.u64_in(
                    "number-of-ranges",
                    1..=MAX_IN_LIST,
                    &format!("a number of ranges from 1 to {MAX_IN_LIST}"),
                )?,
                _ => 10,
            },
            delta: match kind {
                OltpKind::RandomRanges => {
                    o.u64_in("delta", 0..=ids, &format!("a width from 0 to {ids}"))?
                }
                _ => 5,
            },
            rand,
            mysql_storage_engine: o.str("mysql-storage-engine").to_string(),
            create_table_options: o.str("create-table-options").to_string(),
            threads,
        };
        if cfg.mysql_storage_engine.is_empty()
            || !cfg
                .mysql_storage_engine
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            return Err(bad_value(
                "mysql-storage-engine",
                &cfg.mysql_storage_engine,
                "an engine name such as innodb",
            ));
        }
        Ok(cfg)
    }

    /// bulk_insert's settings: a table per thread, rows appended.
    fn bulk_insert(rand: RandSpec, threads: u32) -> OltpConfig {
        OltpConfig {
            kind: OltpKind::BulkInsert,
            tables: 1,
            table_size: 10_000,
            range_size: 100,
            point_selects: 10,
            simple_ranges: 1,
            sum_ranges: 1,
            order_ranges: 1,
            distinct_ranges: 1,
            index_updates: 1,
            non_index_updates: 1,
            delete_inserts: 1,
            range_selects: true,
            auto_inc: true,
            skip_trx: false,
            secondary: false,
            create_secondary: true,
            random_points: 10,
            number_of_ranges: 10,
            delta: 5,
            rand,
            mysql_storage_engine: "innodb".to_string(),
            create_table_options: String::new(),
            threads,
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::testing::{refused, values};
    use crate::random::RandType;

    const KINDS: [OltpKind; 11] = [
        OltpKind::ReadWrite,
        OltpKind::ReadOnly,
        OltpKind::WriteOnly,
        OltpKind::PointSelect,
        OltpKind::UpdateIndex,
        OltpKind::UpdateNonIndex,
        OltpKind::Delete,
        OltpKind::Insert,
        OltpKind::RandomPoints,
        OltpKind::RandomRanges,
        OltpKind::BulkInsert,
    ];

    #[test]
    fn the_defaults_parse_for_every_test() {
        for kind in KINDS {
            let c = OltpConfig::from_options(kind, &values(&options(kind), &[]), 4).unwrap();
            assert_eq!((c.tables, c.table_size, c.range_size), (1, 10_000, 100));
            assert_eq!((c.point_selects, c.delete_inserts), (10, 1));
            assert_eq!((c.random_points, c.number_of_ranges, c.delta), (10, 10, 5));
            assert!(c.range_selects && c.auto_inc && c.create_secondary);
            assert!(!c.skip_trx && !c.secondary);
            assert_eq!(c.mysql_storage_engine, "innodb");
            assert_eq!(c.rand, RandSpec::default());
            let tables = match kind {
                OltpKind::BulkInsert => 4,
                _ => 1,
            };
            assert_eq!(c.table_count(), tables, "{kind:?}");
        }
    }

    #[test]
    fn given_values_are_typed() {
        let kind = OltpKind::RandomRanges;
        let o = values(
            &options(kind),
            &[
                ("table-size", "1M"),
                ("number-of-ranges", "3"),
                ("delta", "0"),
                ("skip-trx", "on"),
                ("rand-type", "zipfian"),
                ("rand-zipfian-exp", "1.5"),
            ],
        );
        let c = OltpConfig::from_options(kind, &o, 1).unwrap();
        assert_eq!((c.table_size, c.number_of_ranges, c.delta), (1 << 20, 3, 0));
        assert!(c.skip_trx);
        assert_eq!((c.rand.kind, c.rand.zipf_exp), (RandType::Zipfian, 1.5));
    }

    #[test]
    fn out_of_range_values_are_refused_in_one_line() {
        let parse = |kind| move |o: &OptValues| OltpConfig::from_options(kind, o, 1);
        let rw = OltpKind::ReadWrite;
        for (name, value) in [
            ("tables", "0"),
            ("tables", "4294967297"),
            ("table-size", "0"),
            ("table-size", "10G"),
            ("range-size", "0"),
            ("point-selects", "1T"),
            ("delete-inserts", "2000000"),
            ("mysql-storage-engine", "inno db"),
            ("rand-spec-iter", "0"),
            ("rand-spec-pct", "101"),
            ("rand-spec-res", "-1"),
            ("rand-pareto-h", "1e300"),
            ("rand-pareto-h", "0"),
            ("rand-zipfian-exp", "0"),
            ("rand-zipfian-exp", "NaN"),
            ("rand-zipfian-exp", "1e300"),
            ("rand-type", "normal"),
        ] {
            refused(&options(rw), &[(name, value)], parse(rw));
        }
        let points = OltpKind::RandomPoints;
        refused(&options(points), &[("random-points", "0")], parse(points));
        refused(&options(points), &[("random-points", "1G")], parse(points));
        let ranges = OltpKind::RandomRanges;
        refused(
            &options(ranges),
            &[("number-of-ranges", "0")],
            parse(ranges),
        );
        refused(&options(ranges), &[("delta", "8G")], parse(ranges));
        // bulk_insert reads only the distribution's options.
        let bulk = OltpKind::BulkInsert;
        refused(&options(bulk), &[("rand-spec-pct", "1e300")], parse(bulk));
    }
}
