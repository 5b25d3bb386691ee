//! The result of a comparison, as JSON writes it (`--format json`,
//! `--save`) and `--from` reads it back: schema `dbmeter.compare-queries/1`
//! (docs/compare-queries.md).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub const SCHEMA: &str = "dbmeter.compare-queries/1";

/// A whole comparison: the two targets and every query's results.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Comparison {
    pub schema: String,
    /// The dbmeter that collected it.
    pub dbmeter_version: String,
    /// When the collection started (Unix seconds).
    pub started_at: u64,
    /// Warm runs of each query on each side.
    pub runs: u32,
    /// A, then B.
    pub sides: Vec<SideInfo>,
    pub queries: Vec<QueryResult>,
    /// What the collection wants the reader to know (skipped log classes,
    /// a page cache that could not be dropped).
    #[serde(default)]
    pub notes: Vec<String>,
    /// The filter the report applied, and for each query and temperature
    /// whether it kept it (written by the report; ignored when read back).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<String>,
}

/// One target.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SideInfo {
    /// `A` or `B`.
    pub label: String,
    /// The target's URL, password masked.
    pub target: String,
    /// `mysql` (MariaDB or MySQL), `postgres` or `sqlite`.
    pub kind: String,
    pub version: String,
    /// How cold runs were made cold: `restart` (a dbmeter-managed server
    /// restarted), `reopen` (an SQLite file opened again) or `first` (the
    /// query's first execution on a server dbmeter does not manage: not
    /// cold).
    pub cold: String,
    /// The cold runs in words, as the report shows them.
    pub cold_note: String,
}

/// One query of the set.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct QueryResult {
    /// `Q1`, `Q2`... in the order of the set.
    pub id: String,
    /// pt-query-digest's ID of its fingerprint (32 hex digits).
    pub query_id: String,
    pub sql: String,
    /// Where it came from: `queries.sql statement 3`, `--query 1`, a
    /// log's class (`slow.log: worst of 120, line 4411`).
    pub origin: String,
    /// Cold, then warm.
    pub temperatures: Vec<TemperatureResult>,
    /// Set by the report: whether the filter kept any temperature.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub kept: bool,
}

/// A query at one temperature on both sides.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TemperatureResult {
    /// `cold` or `warm`.
    pub temperature: String,
    pub a: SideResult,
    pub b: SideResult,
    /// Set by the report: whether the filter kept it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub kept: bool,
}

/// A query's executions at one temperature on one side.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SideResult {
    /// Seconds: the cold execution's, or the median of the warm ones.
    pub time_s: Option<f64>,
    /// Every timed execution's seconds, in order.
    #[serde(default)]
    pub times_s: Vec<f64>,
    /// Rows returned (or changed, for a statement without a result).
    pub rows: Option<u64>,
    /// A checksum of the result's rows (16 hex digits): independent of
    /// the rows' order unless the statement ends with an ORDER BY.
    pub checksum: Option<String>,
    /// The first error of its executions.
    pub error: Option<String>,
    /// MariaDB/MySQL's SHOW WARNINGS after the execution (`Level Code:
    /// Message`).
    #[serde(default)]
    pub warnings: Vec<String>,
    /// Session status deltas (MariaDB/MySQL) or EXPLAIN's buffers and
    /// times (PostgreSQL), by name; the median over the warm executions.
    #[serde(default)]
    pub counters: BTreeMap<String, f64>,
}

/// The median of the finite values among these (the mean of the middle
/// two for an even count); None for none.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    dbmeter_stats::median_in_place(&mut v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0]), Some(3.0));
        assert_eq!(median(&[5.0, 1.0, 3.0]), Some(3.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
    }
}
