//! A TPC-H-like analytic benchmark and the DBT3 automation around it: the
//! eight tables from dbgen's generator, the 22 queries with qgen's
//! parameters in each dialect, the refresh functions, the power and
//! throughput tests, N runs per query with DBT3's extraction methods,
//! per-query timeouts, EXPLAIN, and the answers checked against the
//! official SF1 answers or another engine.
//!
//! - [`schema`]: tables, keys, the DBT3 indexes.
//! - [`generate`]: the rows (the `tpchgen` crate), in parts.
//! - [`load`]: `prepare` (in parallel, streamed) and `--output DIR`.
//! - [`qgen`]: substitution parameters and stream orders, as qgen draws them.
//! - [`queries`]: the 22 queries in each dialect.
//! - [`update_sets`]: the refresh functions' rows, as dbgen makes them.
//! - [`refresh`]: RF1 and RF2 on the database.
//! - [`answers`]: the official SF1 answers and the tolerances.
//! - [`check`]: `check --validation` and `check --against`.
//! - [`stream`]: a virtual user running a query or refresh stream.
//! - [`report`]: tpch's section of the result, its metrics and its text.
//! - `config.rs`: the options, read and checked once ([`TpchConfig`]).
//! - `benchmark.rs`: all of it behind the [`Benchmark`](crate::Benchmark)
//!   interface.

pub mod answers;
mod benchmark;
pub mod check;
mod config;
pub mod generate;
pub mod load;
pub mod qgen;
pub mod queries;
pub mod refresh;
pub mod report;
pub mod schema;
pub mod stream;
pub mod update_sets;

pub use benchmark::Tpch;
pub use config::TpchConfig;
pub use dbmeter_db::Dialect;

use crate::options::{OptKind, OptSpec, choice, opt};

pub const OPTIONS: &[OptSpec] = &[
    opt(
        "scale-factor",
        OptKind::Float,
        "1",
        "prepare: the TPC-H scale factor (1 = 1 GB of text, 6 million lineitems; fractions like 0.01 allowed); run and check read it from the database",
    )
    .shapes_data(),
    opt(
        "create-indexes",
        choice(&["after", "before"]),
        "after",
        "prepare: create keys and the DBT3 indexes after the load (faster) or before it",
    )
    .shapes_data(),
    opt(
        "foreign-keys",
        OptKind::Bool,
        "on",
        "prepare: declare the foreign keys (SQLite: in the tables, not enforced)",
    )
    .shapes_data(),
    opt(
        "update-sets",
        OptKind::Size,
        "0",
        "prepare --output=DIR: also write this many update sets, named as dbgen names them (orders.tbl.uK, lineitem.tbl.uK, delete.K)",
    ),
    opt(
        "test",
        choice(&["power", "throughput", "full"]),
        "power",
        "run: the power test (one stream: RF1, the queries in the stream's order, RF2), the throughput test (--streams query streams and a refresh stream), or full: the power test, then the throughput test, and QphH@Size",
    ),
    opt(
        "streams",
        OptKind::Size,
        "0",
        "run --test=throughput: query streams; 0 = the specification's minimum for the scale factor (SF1: 2)",
    ),
    opt(
        "queries",
        OptKind::Str,
        "",
        "the queries to run, e.g. 1,3,5-9 (default all 22); metrics need all 22",
    ),
    opt(
        "refresh",
        OptKind::Bool,
        "on",
        "run: the refresh functions RF1 and RF2 (they change the data; each run uses the next update set); off: queries only, reported with their geometric mean",
    ),
    opt(
        "runs",
        OptKind::Size,
        "1",
        "run: times each query runs, one after the other (DBT3's runs per query)",
    ),
    opt(
        "extract",
        choice(&["average", "min-max", "best-plan"]),
        "average",
        "run: the value of a query from its runs: average (one timeout makes it a timeout), min-max (the fastest, with the slowest beside it), best-plan (run until the fastest run's plan was seen --best-plan-count times, at most max(--runs, 3 x --best-plan-count) runs)",
    ),
    opt(
        "best-plan-count",
        OptKind::Size,
        "3",
        "run --extract=best-plan: how often the fastest plan must be seen",
    ),
    opt(
        "warmup-runs",
        OptKind::Size,
        "0",
        "run: unmeasured runs of each query before its measured runs (a warm cache)",
    ),
    opt(
        "cold",
        OptKind::Bool,
        "off",
        "run: restart the server and drop the OS page cache before each measured run of a query (a server started by `dbmeter server start` or a campaign's managed target; SQLite: the page cache only; dropping it needs root)",
    ),
    opt(
        "query-hook-before",
        OptKind::Str,
        "",
        "run: a hook before each measured query run, outside its time: 'sh: COMMAND' (with DBMETER_QUERY, DBMETER_STREAM, DBMETER_RUN, DBMETER_DB in its environment) or 'sql: STATEMENT' (on the stream's connection); its output is kept with the run",
    ),
    opt(
        "query-hook-after",
        OptKind::Str,
        "",
        "run: a hook after each measured query run, as --query-hook-before",
    ),
    opt(
        "explain",
        choice(&["plan", "analyze", "off"]),
        "plan",
        "run: capture each query's plan with EXPLAIN (analyze: EXPLAIN ANALYZE / ANALYZE FORMAT=JSON, which runs the query once more)",
    ),
    opt(
        "validation",
        OptKind::Bool,
        "off",
        "use the validation parameters (qgen -d) instead of parameters drawn from --rand-seed",
    ),
    opt(
        "against",
        OptKind::Str,
        "",
        "check: run every query on this second target URL too and compare the answers",
    ),
    opt(
        "stream",
        OptKind::Size,
        "0",
        "queries: the stream whose SQL to print (0 = the power test's)",
    ),
];

pub fn options() -> Vec<OptSpec> {
    OPTIONS.to_vec()
}

/// The queries of `--queries` ("1,3,5-9"), in ascending order.
pub fn parse_queries(spec: &str) -> Result<Vec<u8>, String> {
    let spec = spec.trim();
    if spec.is_empty() || spec.eq_ignore_ascii_case("all") {
        return Ok((1..=22).collect());
    }
    let bad = |p: &str| {
        format!("--queries={spec}: '{p}' is not a query number 1..22 or a range like 5-9")
    };
    let num = |p: &str| -> Result<u8, String> {
        let p = p.trim().trim_start_matches(['q', 'Q']);
        match p.parse::<u8>() {
            Ok(n) if (1..=22).contains(&n) => Ok(n),
            _ => Err(bad(p)),
        }
    };
    let mut out = Vec::new();
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    return Err(bad(part));
                }
                out.extend(a..=b);
            }
            None => out.push(num(part)?),
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// The specification's minimum number of query streams of a throughput
/// test at scale factor `sf` (clause 5.3.4).
pub fn min_streams(sf: f64) -> u32 {
    match sf {
        s if s >= 100_000.0 => 11,
        s if s >= 30_000.0 => 10,
        s if s >= 10_000.0 => 9,
        s if s >= 3_000.0 => 8,
        s if s >= 1_000.0 => 7,
        s if s >= 300.0 => 6,
        s if s >= 100.0 => 5,
        s if s >= 30.0 => 4,
        s if s >= 10.0 => 3,
        _ => 2,
    }
}

/// The scale factor as it reads best (1, 0.01, 10).
pub fn sf_text(sf: f64) -> String {
    let s = format!("{sf:.6}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The supplier count at `sf` when dbgen's partsupp repeats a key there.
/// A part's four suppliers are `(p + i x step) mod S` for i = 0..3 with
/// step = S/4 + (p-1)/S: two coincide when 2 or 3 steps make a multiple of
/// S, which happens only at small scale factors (never from SF 0.025 up).
fn repeated_partsupp_keys(sf: f64) -> Option<i64> {
    use tpchgen::generators::{PartGenerator, SupplierGenerator};
    let s = SupplierGenerator::calculate_row_count(sf, 1, 1);
    let p = PartGenerator::calculate_row_count(sf, 1, 1);
    if s < 1 {
        return Some(s);
    }
    let steps = (s / 4)..=(s / 4 + (p - 1) / s);
    steps
        .into_iter()
        .any(|step| (1..=3).any(|k| (k * step) % s == 0))
        .then_some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_lists() {
        assert_eq!(parse_queries(""), Ok((1..=22).collect()));
        assert_eq!(parse_queries("1,3,5-9,3"), Ok(vec![1, 3, 5, 6, 7, 8, 9]));
        assert_eq!(parse_queries("Q22"), Ok(vec![22]));
        assert!(parse_queries("23").is_err());
        assert!(parse_queries("9-5").is_err());
        assert!(parse_queries("x").is_err());
        assert_eq!(min_streams(1.0), 2);
        assert_eq!(min_streams(100.0), 5);
        assert_eq!(sf_text(0.01), "0.01");
        assert_eq!(sf_text(10.0), "10");
        for ok in [0.01, 0.02, 0.1, 1.0, 10.0, 0.03] {
            assert_eq!(repeated_partsupp_keys(ok), None, "SF {ok}");
        }
        for bad in [0.0001, 0.001, 0.005, 0.012] {
            assert!(repeated_partsupp_keys(bad).is_some(), "SF {bad}");
        }
    }
}
