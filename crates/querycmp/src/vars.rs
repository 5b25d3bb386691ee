//! The filter's variables for one query at one temperature, and the
//! default filter.
//!
//! For each measure `X` (`Execution_time`, `Rows`, `Warnings`, and every
//! counter of either side: `Handler_read_rnd_next`, `Shared_read_blocks`,
//! ...): `X_a` and `X_b` (each side's value), `X` (the larger),
//! `X_delta` (B minus A) and `X_ratio` (the larger over the smaller,
//! whichever side it is on: 1 when equal, infinite when one is 0).
//! Besides: `Temperature` (`cold` or `warm`), `Id` (`Q1`...), `Query_id`,
//! `Query` (its text), `Origin`, `Slower` (`A`, `B` or `same`),
//! `Rows_differ`, `Checksum_differ`, `Errors_differ` (one side failed,
//! the other did not), `Error` (either failed), `Error_a`, `Error_b` (the
//! messages), `Checksum_a`, `Checksum_b`, and `Counters_ratio` (the
//! largest `X_ratio` among the counters both sides have whose values
//! differ by at least 10, the server-wide `Innodb_*` left out; 1 when
//! none).

use crate::model::{QueryResult, SideResult, TemperatureResult};
use dbmeter_filter::Value;
use std::collections::{BTreeMap, BTreeSet};

/// What the report keeps when no `--where` is given: queries whose time
/// differs by more than 1.2x (at 1 ms or more on the slower side), whose
/// counters do, or whose results or errors differ.
pub const DEFAULT_WHERE: &str = "(Execution_time_ratio > 1.2 and Execution_time >= 1ms) \
     or Counters_ratio > 1.2 or Rows_differ or Checksum_differ or Errors_differ";

/// The smallest difference of a counter that `Counters_ratio` looks at.
pub const COUNTER_NOISE: f64 = 10.0;

/// Whether a counter counts for the whole server (MariaDB/MySQL's
/// `Innodb_*`): other sessions and background work move it, so
/// `Counters_ratio` leaves it out.
pub fn is_server_wide(name: &str) -> bool {
    name.starts_with("Innodb_")
}

/// The larger over the smaller of two values (by magnitude).
pub fn ratio(a: f64, b: f64) -> f64 {
    let (x, y) = (a.abs(), b.abs());
    let (hi, lo) = if x >= y { (x, y) } else { (y, x) };
    if hi == 0.0 {
        1.0
    } else if lo == 0.0 {
        f64::INFINITY
    } else {
        hi / lo
    }
}

fn measure(out: &mut BTreeMap<String, Value>, name: &str, a: Option<f64>, b: Option<f64>) {
    if let Some(a) = a {
        out.insert(format!("{name}_a"), Value::Num(a));
    }
    if let Some(b) = b {
        out.insert(format!("{name}_b"), Value::Num(b));
    }
    match (a, b) {
        (Some(a), Some(b)) => {
            out.insert(name.to_string(), Value::Num(a.max(b)));
            out.insert(format!("{name}_delta"), Value::Num(b - a));
            out.insert(format!("{name}_ratio"), Value::Num(ratio(a, b)));
        }
        (Some(x), None) | (None, Some(x)) => {
            out.insert(name.to_string(), Value::Num(x));
        }
        (None, None) => {}
    }
}

/// The counters' names of both sides.
fn counter_names<'a>(a: &'a SideResult, b: &'a SideResult) -> BTreeSet<&'a String> {
    a.counters.keys().chain(b.counters.keys()).collect()
}

/// Every variable of `t` (query `q`).
pub fn variables(q: &QueryResult, t: &TemperatureResult) -> BTreeMap<String, Value> {
    let mut v = BTreeMap::new();
    let (a, b) = (&t.a, &t.b);
    v.insert("Temperature".into(), Value::Str(t.temperature.clone()));
    v.insert("Id".into(), Value::Str(q.id.clone()));
    v.insert("Query_id".into(), Value::Str(q.query_id.clone()));
    v.insert("Query".into(), Value::Str(q.sql.clone()));
    v.insert("Origin".into(), Value::Str(q.origin.clone()));
    measure(&mut v, "Execution_time", a.time_s, b.time_s);
    let slower = match (a.time_s, b.time_s) {
        (Some(x), Some(y)) if x > y => "A",
        (Some(x), Some(y)) if y > x => "B",
        (Some(_), Some(_)) => "same",
        _ => "",
    };
    if !slower.is_empty() {
        v.insert("Slower".into(), Value::Str(slower.into()));
    }
    measure(
        &mut v,
        "Rows",
        a.rows.map(|r| r as f64),
        b.rows.map(|r| r as f64),
    );
    measure(
        &mut v,
        "Warnings",
        Some(a.warnings.len() as f64),
        Some(b.warnings.len() as f64),
    );
    v.insert(
        "Rows_differ".into(),
        Value::Bool(matches!((a.rows, b.rows), (Some(x), Some(y)) if x != y)),
    );
    v.insert(
        "Checksum_differ".into(),
        Value::Bool(matches!((&a.checksum, &b.checksum), (Some(x), Some(y)) if x != y)),
    );
    v.insert(
        "Errors_differ".into(),
        Value::Bool(a.error.is_some() != b.error.is_some()),
    );
    v.insert(
        "Error".into(),
        Value::Bool(a.error.is_some() || b.error.is_some()),
    );
    for (side, r) in [("a", a), ("b", b)] {
        if let Some(e) = &r.error {
            v.insert(format!("Error_{side}"), Value::Str(e.clone()));
        }
        if let Some(c) = &r.checksum {
            v.insert(format!("Checksum_{side}"), Value::Str(c.clone()));
        }
    }
    let mut counters_ratio: f64 = 1.0;
    for name in counter_names(a, b) {
        let (x, y) = (a.counters.get(name).copied(), b.counters.get(name).copied());
        measure(&mut v, name, x, y);
        if let (Some(x), Some(y)) = (x, y)
            && (x - y).abs() >= COUNTER_NOISE
            && !is_server_wide(name)
        {
            counters_ratio = counters_ratio.max(ratio(x, y));
        }
    }
    v.insert("Counters_ratio".into(), Value::Num(counters_ratio));
    v
}

/// The names every result has, whatever its targets (for checking a
/// filter's names).
pub const FIXED_NAMES: &[&str] = &[
    "Temperature",
    "Id",
    "Query_id",
    "Query",
    "Origin",
    "Slower",
    "Rows_differ",
    "Checksum_differ",
    "Errors_differ",
    "Error",
    "Error_a",
    "Error_b",
    "Checksum_a",
    "Checksum_b",
    "Counters_ratio",
];

/// Whether `name` is a variable of some query of `queries`, or one every
/// result can have.
pub fn is_known(name: &str, queries: &[QueryResult]) -> bool {
    if FIXED_NAMES.contains(&name) {
        return true;
    }
    let base = ["_a", "_b", "_delta", "_ratio"]
        .iter()
        .find_map(|s| name.strip_suffix(s))
        .unwrap_or(name);
    if ["Execution_time", "Rows", "Warnings"].contains(&base) {
        return true;
    }
    queries.iter().any(|q| {
        q.temperatures
            .iter()
            .any(|t| t.a.counters.contains_key(base) || t.b.counters.contains_key(base))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use dbmeter_filter::Expr;

    fn side(time: f64, rows: u64, counters: &[(&str, f64)]) -> SideResult {
        SideResult {
            time_s: Some(time),
            times_s: vec![time],
            rows: Some(rows),
            checksum: Some(format!("{rows:016x}")),
            counters: counters.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            ..SideResult::default()
        }
    }

    fn query(t: TemperatureResult) -> QueryResult {
        QueryResult {
            id: "Q1".into(),
            query_id: "ABC".into(),
            sql: "SELECT 1".into(),
            origin: "--query 1".into(),
            temperatures: vec![t],
            kept: false,
        }
    }

    fn keeps(filter: &str, t: TemperatureResult) -> bool {
        let q = query(t);
        let vars = variables(&q, &q.temperatures[0]);
        Expr::parse(filter)
            .unwrap()
            .eval(&|n: &str| vars.get(n).cloned())
    }

    fn temp(name: &str, a: SideResult, b: SideResult) -> TemperatureResult {
        TemperatureResult {
            temperature: name.into(),
            a,
            b,
            kept: false,
        }
    }

    #[test]
    fn sides_deltas_and_ratios() {
        let t = || {
            temp(
                "warm",
                side(
                    0.5,
                    10,
                    &[
                        ("Handler_read_rnd_next", 100_000.0),
                        ("Handler_read_key", 1.0),
                    ],
                ),
                side(
                    0.01,
                    10,
                    &[("Handler_read_rnd_next", 0.0), ("Handler_read_key", 2.0)],
                ),
            )
        };
        assert!(keeps(
            "Execution_time_ratio > 49 and Execution_time_ratio < 51",
            t()
        ));
        assert!(keeps(
            "Execution_time = 0.5 and Execution_time_delta < -0.4",
            t()
        ));
        assert!(keeps("Slower = A and Temperature = warm", t()));
        assert!(!keeps("Temperature = cold", t()));
        assert!(keeps(
            "Handler_read_rnd_next_a = 100000 and Handler_read_rnd_next_b = 0",
            t()
        ));
        assert!(keeps("Handler_read_rnd_next_ratio > 1000", t()));
        assert!(keeps(
            "Handler_read_key_ratio = 2 and Handler_read_key_delta = 1",
            t()
        ));
        // Handler_read_key's difference of 1 is below the noise.
        assert!(keeps("Counters_ratio > 1e300", t()));
        // Server-wide counters are not in Counters_ratio.
        let busy = temp(
            "warm",
            side(0.0002, 1, &[("Innodb_buffer_pool_read_requests", 10.0)]),
            side(0.0002, 1, &[("Innodb_buffer_pool_read_requests", 200.0)]),
        );
        assert!(keeps(
            "Counters_ratio = 1 and Innodb_buffer_pool_read_requests_ratio = 20",
            busy
        ));
        assert!(!keeps(
            "Rows_differ or Checksum_differ or Errors_differ",
            t()
        ));
        assert!(keeps(DEFAULT_WHERE, t()));
        assert!(!keeps("Shared_read_blocks > 0", t()));
    }

    #[test]
    fn default_leaves_out_the_same() {
        let same = temp(
            "cold",
            side(0.0002, 3, &[("Handler_read_key", 3.0)]),
            side(0.0004, 3, &[("Handler_read_key", 4.0)]),
        );
        // 2x, but under 1 ms; counters within the noise.
        assert!(!keeps(DEFAULT_WHERE, same));
        let mut b = side(0.0002, 4, &[]);
        b.checksum = Some("x".into());
        assert!(keeps(DEFAULT_WHERE, temp("cold", side(0.0002, 3, &[]), b)));
        let mut e = side(0.0002, 3, &[]);
        e.error = Some("boom".into());
        assert!(keeps(
            "Errors_differ and Error_b ~ boom",
            temp("warm", side(0.0002, 3, &[]), e)
        ));
    }

    #[test]
    fn ratios() {
        assert_eq!(ratio(2.0, 1.0), 2.0);
        assert_eq!(ratio(1.0, 2.0), 2.0);
        assert_eq!(ratio(0.0, 0.0), 1.0);
        assert_eq!(ratio(0.0, 5.0), f64::INFINITY);
    }

    #[test]
    fn known_names() {
        let q = query(temp(
            "warm",
            side(1.0, 1, &[("Sort_rows", 3.0)]),
            side(1.0, 1, &[]),
        ));
        for n in [
            "Sort_rows_delta",
            "Execution_time_ratio",
            "Rows_b",
            "Temperature",
        ] {
            assert!(is_known(n, std::slice::from_ref(&q)), "{n}");
        }
        assert!(!is_known("Sort_row", &[q]));
    }
}
