//! tpch's options, read once into [`TpchConfig`] and checked: the rest of
//! the benchmark reads its fields, never an option by name.

use super::schema::IndexTime;
use super::stream::{Explain, Extract};
use super::{parse_queries, repeated_partsupp_keys};
use crate::benchmark::BenchError;
use crate::options::{OptValues, bad_value};
use std::time::Duration;

/// The scale factors `--scale-factor` takes.
pub const MIN_SCALE_FACTOR: f64 = 0.01;
pub const MAX_SCALE_FACTOR: f64 = 100_000.0;

/// The most query streams of a throughput test (each is a connection).
pub const MAX_STREAMS: u64 = 1_000;

/// The most runs of each query, measured or warm-up, and the most
/// sightings of the best plan.
pub const MAX_RUNS: u64 = 1_000_000;

/// The most update sets `prepare --output` writes.
pub const MAX_UPDATE_SETS: u64 = 100_000;

/// The longest `--query-timeout` tpch takes, in seconds (a week).
pub const MAX_QUERY_TIMEOUT_S: f64 = 604_800.0;

/// tpch's settings, read from its options and the general ones it uses
/// (`--output`, `--query-timeout`, `--threads`, `--time`).
#[derive(Clone, Debug)]
pub struct TpchConfig {
    /// `--scale-factor`, and whether the user gave it (a run and a check
    /// read the scale factor from the database).
    pub sf: f64,
    pub sf_given: bool,
    pub index_time: IndexTime,
    pub foreign_keys: bool,
    /// `--update-sets`: update sets `prepare --output` writes.
    pub update_sets: u32,
    /// `--output`: prepare writes .tbl files into this folder instead of
    /// loading a database; empty: none.
    pub output: String,
    /// `--test`: the power test, the throughput test, or both.
    pub power: bool,
    pub throughput: bool,
    /// `--streams`; 0: the specification's minimum for the scale factor.
    pub streams: u32,
    /// `--queries`, in ascending order.
    pub queries: Vec<u8>,
    pub refresh: bool,
    pub runs: u32,
    pub extract: Extract,
    pub best_plan_count: u32,
    pub warmup_runs: u32,
    pub cold: bool,
    pub hook_before: String,
    pub hook_after: String,
    pub explain: Explain,
    pub validation: bool,
    /// `check --against`: the second target's URL; None: no second target.
    pub against: Option<String>,
    /// `queries --stream`.
    pub stream: u32,
    /// `--query-timeout` (at least a second), when given.
    pub query_timeout: Option<Duration>,
    /// Whether the user gave `--threads` (a prepare otherwise loads with
    /// a thread per CPU) and `--time` (a run otherwise has no time limit).
    pub threads_given: bool,
    pub time_given: bool,
}

impl TpchConfig {
    /// Reads every option tpch uses and checks it; the error is a usage
    /// error of one line that names the option.
    pub fn from_options(o: &OptValues) -> Result<TpchConfig, BenchError> {
        let count = |name: &str, range: std::ops::RangeInclusive<u64>, what: &str| {
            let (lo, hi) = (*range.start(), *range.end());
            o.u64_in(name, range, &format!("{what} from {lo} to {hi}"))
                .map(|n| n as u32)
        };
        let sf = scale_factor(o)?;
        let test = o.str("test");
        let (power, throughput) = match test {
            "power" => (true, false),
            "throughput" => (false, true),
            "full" => (true, true),
            _ => return Err(bad_value("test", test, "power, throughput or full")),
        };
        let extract = match o.str("extract") {
            "average" => Extract::Average,
            "min-max" => Extract::MinMax,
            "best-plan" => Extract::BestPlan,
            other => {
                return Err(bad_value("extract", other, "average, min-max or best-plan"));
            }
        };
        let explain = match o.str("explain") {
            "plan" => Explain::Plan,
            "analyze" => Explain::Analyze,
            "off" => Explain::Off,
            other => return Err(bad_value("explain", other, "plan, analyze or off")),
        };
        let index_time = match o.str("create-indexes") {
            "after" => IndexTime::After,
            "before" => IndexTime::Before,
            other => return Err(bad_value("create-indexes", other, "after or before")),
        };
        let timeout = o.f64_where(
            "query-timeout",
            |t| t == 0.0 || (1.0..=MAX_QUERY_TIMEOUT_S).contains(&t),
            &format!(
                "seconds: 0 (none), or from 1 to {MAX_QUERY_TIMEOUT_S} (analytic queries need a timeout of at least 1 second)"
            ),
        )?;
        let against = o.str("against").trim();
        Ok(TpchConfig {
            sf,
            sf_given: o.given("scale-factor"),
            index_time,
            foreign_keys: o.bool("foreign-keys"),
            update_sets: count(
                "update-sets",
                0..=MAX_UPDATE_SETS,
                "a number of update sets",
            )?,
            output: o.str("output").to_string(),
            power,
            throughput,
            streams: count(
                "streams",
                0..=MAX_STREAMS,
                "a number of query streams (0: the specification's minimum)",
            )?,
            queries: parse_queries(o.str("queries")).map_err(BenchError::Usage)?,
            refresh: o.bool("refresh"),
            runs: count("runs", 1..=MAX_RUNS, "a number of runs of each query")?,
            extract,
            best_plan_count: count("best-plan-count", 1..=MAX_RUNS, "a number of sightings")?,
            warmup_runs: count("warmup-runs", 0..=MAX_RUNS, "a number of warm-up runs")?,
            cold: o.bool("cold"),
            hook_before: o.str("query-hook-before").trim().to_string(),
            hook_after: o.str("query-hook-after").trim().to_string(),
            explain,
            validation: o.bool("validation"),
            against: (!against.is_empty()).then(|| against.to_string()),
            stream: count("stream", 0..=MAX_STREAMS, "a stream number")?,
            query_timeout: (timeout > 0.0).then(|| Duration::from_secs_f64(timeout)),
            threads_given: o.given("threads"),
            time_given: o.given("time"),
        })
    }
}

/// `--scale-factor`, checked.
fn scale_factor(o: &OptValues) -> Result<f64, BenchError> {
    let sf = o.f64_where(
        "scale-factor",
        |sf| (MIN_SCALE_FACTOR..=MAX_SCALE_FACTOR).contains(&sf),
        &format!("a scale factor from {MIN_SCALE_FACTOR} to {MAX_SCALE_FACTOR} (e.g. 0.01, 1, 10)"),
    )?;
    if let Some(s) = repeated_partsupp_keys(sf) {
        return Err(BenchError::Usage(format!(
            "--scale-factor={}: dbgen's partsupp repeats its keys at this scale factor ({s} suppliers), so its primary key cannot hold; take 0.01, 0.02, 0.1, 1 or larger",
            o.str("scale-factor")
        )));
    }
    Ok(sf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::testing::{refused, values};

    #[test]
    fn the_defaults_parse() {
        let c = TpchConfig::from_options(&values(super::super::OPTIONS, &[])).unwrap();
        assert_eq!((c.sf, c.sf_given), (1.0, false));
        assert_eq!((c.power, c.throughput, c.streams), (true, false, 0));
        assert_eq!(c.queries, (1..=22).collect::<Vec<u8>>());
        assert_eq!((c.runs, c.warmup_runs, c.best_plan_count), (1, 0, 3));
        assert_eq!((c.extract, c.explain), (Extract::Average, Explain::Plan));
        assert_eq!((c.query_timeout, c.against, c.stream), (None, None, 0));
        assert!(c.refresh && c.foreign_keys && !c.cold && !c.validation);
        assert!(c.output.is_empty() && !c.threads_given && !c.time_given);
    }

    #[test]
    fn given_values_are_typed() {
        let o = values(
            super::super::OPTIONS,
            &[
                ("scale-factor", "0.01"),
                ("test", "full"),
                ("streams", "3"),
                ("queries", "1,5-6"),
                ("extract", "best-plan"),
                ("query-timeout", "30"),
                ("against", " sqlite:other.sqlite "),
                ("time", "60"),
            ],
        );
        let c = TpchConfig::from_options(&o).unwrap();
        assert_eq!((c.sf, c.sf_given), (0.01, true));
        assert_eq!((c.power, c.throughput, c.streams), (true, true, 3));
        assert_eq!(c.queries, [1, 5, 6]);
        assert_eq!(c.extract, Extract::BestPlan);
        assert_eq!(c.query_timeout, Some(Duration::from_secs(30)));
        assert_eq!(c.against.as_deref(), Some("sqlite:other.sqlite"));
        assert!(c.time_given);
    }

    #[test]
    fn out_of_range_values_are_refused_in_one_line() {
        for (name, value) in [
            ("scale-factor", "1e300"),
            ("scale-factor", "1e-300"),
            ("scale-factor", "0"),
            ("scale-factor", "-1"),
            ("scale-factor", "NaN"),
            ("scale-factor", "0.012"),
            ("runs", "0"),
            ("runs", "2000000"),
            ("warmup-runs", "2000000"),
            ("best-plan-count", "0"),
            ("streams", "5000"),
            ("stream", "99999"),
            ("update-sets", "5000000"),
            ("query-timeout", "0.5"),
            ("query-timeout", "1e300"),
            ("query-timeout", "-1"),
            ("queries", "23"),
            ("test", "both"),
        ] {
            refused(
                super::super::OPTIONS,
                &[(name, value)],
                TpchConfig::from_options,
            );
        }
    }
}
