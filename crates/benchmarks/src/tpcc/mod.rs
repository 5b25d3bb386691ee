//! A TPC-C-like workload that follows the specification (TPC-C 5.11):
//! the nine tables and their initial population, the five transactions
//! with the specification's mix, NURand, rollbacks, remote warehouses,
//! keying and think times, and the consistency conditions.
//!
//! - [`schema`]: tables, partitions and indexes.
//! - [`random`]: NURand, a-strings, last names, the C constants.
//! - [`load`]: `prepare` (in parallel by warehouse) and `cleanup`.
//! - [`check`]: row counts and the consistency conditions.
//! - [`deck`]: the card deck that holds the mix.
//! - [`new_order`], [`payment`], [`order_status`], [`delivery`],
//!   [`stock_level`]: each transaction's inputs and client-side SQL.
//! - [`procedures`]: the same transactions as stored procedures.
//! - [`terminal`]: a virtual user (a terminal with its home warehouse).
//! - [`metrics`]: the database's counters behind NOPM and TPM.
//! - [`report`]: tpcc's section of the result and its text.
//! - `benchmark.rs`: all of it behind the [`Benchmark`](crate::Benchmark)
//!   interface.

mod benchmark;
pub mod check;
pub mod deck;
pub mod delivery;
pub mod load;
pub mod metrics;
pub mod new_order;
pub mod order_status;
pub mod payment;
pub mod procedures;
pub mod random;
pub mod report;
pub mod schema;
mod sql;
pub mod stock_level;
pub mod terminal;

pub use benchmark::Tpcc;

use crate::benchmark::BenchError;
use crate::options::{OptKind, OptSpec, OptValues, opt};

/// The five transactions, in the order of their kind numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxKind {
    NewOrder = 0,
    Payment = 1,
    OrderStatus = 2,
    Delivery = 3,
    StockLevel = 4,
}

impl TxKind {
    pub const ALL: [TxKind; 5] = [
        TxKind::NewOrder,
        TxKind::Payment,
        TxKind::OrderStatus,
        TxKind::Delivery,
        TxKind::StockLevel,
    ];

    pub fn name(self) -> &'static str {
        match self {
            TxKind::NewOrder => "new_order",
            TxKind::Payment => "payment",
            TxKind::OrderStatus => "order_status",
            TxKind::Delivery => "delivery",
            TxKind::StockLevel => "stock_level",
        }
    }

    /// The minimum share of the mix (clause 5.2.3), in percent; New-Order
    /// has none (it is what is left).
    pub fn min_share(self) -> f64 {
        match self {
            TxKind::NewOrder => 0.0,
            TxKind::Payment => 43.0,
            _ => 4.0,
        }
    }

    /// The limit of the 90th percentile of response times (clause 5.2.5.4).
    pub fn p90_limit_s(self) -> f64 {
        match self {
            TxKind::StockLevel => 20.0,
            _ => 5.0,
        }
    }

    /// Keying time in seconds (clause 5.2.5.7).
    pub fn keying_s(self) -> f64 {
        match self {
            TxKind::NewOrder => 18.0,
            TxKind::Payment => 3.0,
            _ => 2.0,
        }
    }

    /// Mean think time in seconds (clause 5.2.5.7).
    pub fn think_mean_s(self) -> f64 {
        match self {
            TxKind::NewOrder | TxKind::Payment => 12.0,
            TxKind::OrderStatus => 10.0,
            _ => 5.0,
        }
    }
}

pub const OPTIONS: &[OptSpec] = &[
    opt(
        "warehouses",
        OptKind::Size,
        "1",
        "number of warehouses (run: default the number loaded)",
    )
    .shapes_data(),
    opt(
        "warehouse-start",
        OptKind::Size,
        "1",
        "prepare: first warehouse to load (several machines can share a build)",
    )
    .shapes_data(),
    opt(
        "warehouse-end",
        OptKind::Size,
        "0",
        "prepare: last warehouse to load; 0 = --warehouses",
    )
    .shapes_data(),
    opt(
        "partition",
        OptKind::Bool,
        "off",
        "prepare: hash-partition the large tables by warehouse (MySQL/MariaDB, PostgreSQL)",
    )
    .shapes_data(),
    opt(
        "stored-procedures",
        OptKind::Bool,
        "off",
        "run the transactions as stored procedures (MySQL/MariaDB, PostgreSQL) instead of client-side SQL",
    ),
    opt(
        "keying-time",
        OptKind::Float,
        "0",
        "keying times as a multiple of the specification's (18/3/2/2/2 s); 0 = none",
    ),
    opt(
        "think-time",
        OptKind::Float,
        "0",
        "think times as a multiple of the specification's means (12/12/10/5/5 s); 0 = none",
    ),
    opt(
        "all-warehouses",
        OptKind::Bool,
        "off",
        "each transaction picks a random warehouse instead of the client's home warehouse",
    ),
];

/// The settings of a tpcc command, read from its options.
#[derive(Clone, Debug, PartialEq)]
pub struct TpccConfig {
    pub warehouses: u64,
    /// True when the user gave --warehouses (a run otherwise uses what is loaded).
    pub warehouses_given: bool,
    pub start: u64,
    pub end: u64,
    /// True when the user gave --warehouse-start or --warehouse-end (a
    /// check otherwise covers every loaded warehouse).
    pub range_given: bool,
    pub partition: bool,
    pub procedures: bool,
    pub keying: f64,
    pub think: f64,
    pub all_warehouses: bool,
}

/// The largest number of warehouses (ids are 32-bit, and 100k is far
/// beyond what one database holds in a benchmark).
pub const MAX_WAREHOUSES: u64 = 100_000;

/// The largest multiple of the specification's keying and think times.
pub const MAX_TIME_MULTIPLE: f64 = 100.0;

impl TpccConfig {
    /// Reads and checks tpcc's options; a usage error of one line naming
    /// the option otherwise.
    pub fn from_options(o: &OptValues) -> Result<TpccConfig, BenchError> {
        let ids = format!("a warehouse number from 1 to {MAX_WAREHOUSES}");
        let warehouses = o.u64_in(
            "warehouses",
            1..=MAX_WAREHOUSES,
            &format!("a number of warehouses from 1 to {MAX_WAREHOUSES}"),
        )?;
        let start = o.u64_in("warehouse-start", 1..=MAX_WAREHOUSES, &ids)?;
        let end = match o.u64_in(
            "warehouse-end",
            0..=MAX_WAREHOUSES,
            &format!("0 (= --warehouses) or {ids}"),
        )? {
            0 => warehouses,
            e => e,
        };
        let multiple = |name: &str| {
            o.f64_where(
                name,
                |v| (0.0..=MAX_TIME_MULTIPLE).contains(&v),
                &format!(
                    "a multiple of the specification's times from 0 (none) to {MAX_TIME_MULTIPLE}"
                ),
            )
        };
        let keying = multiple("keying-time")?;
        let think = multiple("think-time")?;
        if start > end || end > warehouses {
            return Err(BenchError::Usage(format!(
                "--warehouse-start={start} --warehouse-end={end}: expected 1 <= start <= end <= --warehouses ({warehouses})"
            )));
        }
        Ok(TpccConfig {
            warehouses,
            warehouses_given: o.given("warehouses"),
            start,
            end,
            range_given: o.given("warehouse-start") || o.given("warehouse-end"),
            partition: o.bool("partition"),
            procedures: o.bool("stored-procedures"),
            keying,
            think,
            all_warehouses: o.bool("all-warehouses"),
        })
    }

    /// True when this prepare loads every warehouse.
    pub fn full_range(&self) -> bool {
        self.start == 1 && self.end == self.warehouses
    }
}

/// Options of the tpcc workload.
pub fn options() -> Vec<OptSpec> {
    OPTIONS.to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::testing::{refused, values};

    #[test]
    fn the_defaults_parse() {
        let c = TpccConfig::from_options(&values(OPTIONS, &[])).unwrap();
        assert_eq!((c.warehouses, c.start, c.end), (1, 1, 1));
        assert!(!c.warehouses_given && !c.range_given && c.full_range());
        assert_eq!((c.keying, c.think), (0.0, 0.0));
        assert!(!c.partition && !c.procedures && !c.all_warehouses);
    }

    #[test]
    fn given_values_are_typed() {
        let o = values(
            OPTIONS,
            &[
                ("warehouses", "10"),
                ("warehouse-start", "3"),
                ("warehouse-end", "4"),
                ("think-time", "0.5"),
            ],
        );
        let c = TpccConfig::from_options(&o).unwrap();
        assert_eq!((c.warehouses, c.start, c.end, c.think), (10, 3, 4, 0.5));
        assert!(c.warehouses_given && c.range_given && !c.full_range());
    }

    #[test]
    fn out_of_range_values_are_refused_in_one_line() {
        for (name, value) in [
            ("warehouses", "0"),
            ("warehouses", "1000000"),
            ("warehouse-start", "0"),
            ("keying-time", "1e300"),
            ("keying-time", "-1"),
            ("keying-time", "NaN"),
            ("think-time", "101"),
        ] {
            refused(OPTIONS, &[(name, value)], TpccConfig::from_options);
        }
        let e = TpccConfig::from_options(&values(
            OPTIONS,
            &[("warehouses", "2"), ("warehouse-start", "3")],
        ));
        assert!(e.unwrap_err().to_string().contains("start <= end"));
    }
}
