//! pgbench's options, read once into [`PgbenchConfig`] and checked: the
//! rest of the benchmark reads its fields, never an option by name.

use super::init::InitSpec;
use super::session::QueryMode;
use super::variables::Definition;
use crate::benchmark::BenchError;
use crate::options::{OptValues, bad_value};
use std::time::Duration;

/// The largest `--scale` (100 billion accounts, some 15 TB).
pub const MAX_SCALE: i64 = 1_000_000;

/// The largest `--latency-limit`, in milliseconds (an hour).
pub const MAX_LATENCY_LIMIT_MS: f64 = 3_600_000.0;

/// The smallest positive `--latency-limit`, in milliseconds (a
/// microsecond, the resolution of pgbench's clock).
pub const MIN_LATENCY_LIMIT_MS: f64 = 0.001;

/// The largest `--aggregate-interval`, in seconds (a day).
pub const MAX_AGGREGATE_S: u64 = 86_400;

/// The largest `--jobs` (pgbench's limit; a run uses at most one thread
/// per client).
pub const MAX_JOBS: u64 = i32::MAX as u64;

/// `--log` and its options.
#[derive(Clone, Debug, PartialEq)]
pub struct LogOptions {
    pub prefix: String,
    pub jobs: usize,
    pub sampling_rate: f64,
    /// Seconds per aggregated line; None: a line per transaction.
    pub aggregate: Option<u64>,
}

/// pgbench's settings, read from its options and the general ones it
/// uses (`--time`, `--rate`).
#[derive(Clone, Debug)]
pub struct PgbenchConfig {
    /// What `prepare` does (`--scale`, `--fillfactor`, `--init-steps`,
    /// `--foreign-keys`, `--no-vacuum`, `--unlogged-tables`).
    pub init: InitSpec,
    /// `--scale`, and whether the user gave it.
    pub scale: i64,
    pub scale_given: bool,
    /// `--builtin` and `--file`: the items, in order.
    pub builtin: Vec<String>,
    pub files: Vec<String>,
    /// `--define`.
    pub defines: Vec<Definition>,
    /// `--protocol`.
    pub mode: QueryMode,
    /// `--random-seed`; None: the run's seed.
    pub random_seed: Option<u64>,
    /// `--transactions` per client; 0: the run is timed.
    pub transactions: u64,
    /// `--max-tries`; 0: no limit.
    pub max_tries: u32,
    /// `--latency-limit`, when above 0.
    pub latency_limit_ms: Option<f64>,
    /// `--rate`, when above 0 (the run layer checks its value).
    pub rate: Option<f64>,
    /// `--time`, when the user gave it.
    pub time: Option<f64>,
    pub no_vacuum: bool,
    pub vacuum_all: bool,
    pub report_per_command: bool,
    pub failures_detailed: bool,
    /// `--connect`: a connection per transaction.
    pub connect: bool,
    /// `--debug` and `--verbose-errors`: steps and errors on stderr.
    pub debug: bool,
    pub verbose_errors: bool,
    /// `--log`, with its options; None without `--log`.
    pub log: Option<LogOptions>,
    /// `--jobs` (pgbench's `-j`): the threads the clients are dealt to.
    pub jobs: usize,
}

impl PgbenchConfig {
    /// Reads every option pgbench uses and checks it; the error is a
    /// usage error of one line that names the option.
    pub fn from_options(o: &OptValues) -> Result<PgbenchConfig, BenchError> {
        let scale = o.i64_in(
            "scale",
            1..=MAX_SCALE,
            &format!("a scale factor from 1 to {MAX_SCALE}"),
        )?;
        let fillfactor = o.i64_in("fillfactor", 10..=100, "a fill factor from 10 to 100")?;
        let mut init = InitSpec::new(
            scale,
            fillfactor,
            o.str("init-steps"),
            o.bool("foreign-keys"),
            o.bool("no-vacuum"),
            o.bool("unlogged-tables"),
        )
        .map_err(BenchError::Usage)?;
        init.partitions = o.i64_in(
            "partitions",
            0..=i32::MAX as i64,
            "a number of partitions from 0 (none) to 2147483647",
        )?;
        init.partition_method = o.str("partition-method").to_string();
        let named = |name: &str| Some(o.str(name).to_string()).filter(|s| !s.is_empty());
        init.tablespace = named("tablespace");
        init.index_tablespace = named("index-tablespace");
        let defines = list(o.str("define"))
            .map(|d| Definition::parse(&d))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| BenchError::Usage(format!("--define: {e}")))?;
        let protocol = o.str("protocol");
        let mode = QueryMode::parse(protocol)
            .map_err(|_| bad_value("protocol", protocol, "simple, extended or prepared"))?;
        let random_seed = match o.str("random-seed").trim() {
            "" => None,
            s => Some(s.parse::<u64>().map_err(|_| {
                bad_value(
                    "random-seed",
                    s,
                    "a whole number from 0 to 18446744073709551615 (or leave it out to use the run's seed)",
                )
            })?),
        };
        let transactions = o.i64_in(
            "transactions",
            0..=i64::MAX,
            "a number of transactions per client, 0 or more (0: run for --time)",
        )? as u64;
        let max_tries = o.i64_in(
            "max-tries",
            0..=u32::MAX as i64,
            &format!("a number of tries from 0 (no limit) to {}", u32::MAX),
        )? as u32;
        let limit_ms = o.f64_where(
            "latency-limit",
            |v| v == 0.0 || (MIN_LATENCY_LIMIT_MS..=MAX_LATENCY_LIMIT_MS).contains(&v),
            &format!(
                "milliseconds: 0 (no limit), or from {MIN_LATENCY_LIMIT_MS} to {MAX_LATENCY_LIMIT_MS}"
            ),
        )?;
        let latency_limit_ms = (limit_ms > 0.0).then_some(limit_ms);
        if max_tries == 0 && latency_limit_ms.is_none() && transactions > 0 {
            return Err(BenchError::Usage(
                "--max-tries=0 (no limit on tries) needs --latency-limit or a timed run (--time without --transactions)".into(),
            ));
        }
        let log = Self::log(o)?;
        let rate = o.f64("rate");
        let time_given = o.given("time");
        let time = o.f64("time");
        Ok(PgbenchConfig {
            init,
            scale,
            scale_given: o.given("scale"),
            builtin: list(o.str("builtin")).collect(),
            files: list(o.str("file")).collect(),
            defines,
            mode,
            random_seed,
            transactions,
            max_tries,
            latency_limit_ms,
            rate: (rate > 0.0).then_some(rate),
            time: time_given.then_some(time),
            no_vacuum: o.bool("no-vacuum"),
            vacuum_all: o.bool("vacuum-all"),
            report_per_command: o.bool("report-per-command"),
            failures_detailed: o.bool("failures-detailed"),
            connect: o.bool("connect"),
            debug: o.bool("debug"),
            verbose_errors: o.bool("verbose-errors"),
            jobs: log.as_ref().map_or_else(|| Self::jobs(o), |l| Ok(l.jobs))?,
            log,
        })
    }

    /// `--jobs`.
    fn jobs(o: &OptValues) -> Result<usize, BenchError> {
        let jobs = o.u64_in(
            "jobs",
            1..=MAX_JOBS,
            &format!("a number of jobs from 1 to {MAX_JOBS}"),
        )?;
        Ok(usize::try_from(jobs).unwrap_or(usize::MAX))
    }

    /// `--log` and the options that go with it (refused without it).
    fn log(o: &OptValues) -> Result<Option<LogOptions>, BenchError> {
        let aggregate = o.u64_in(
            "aggregate-interval",
            0..=MAX_AGGREGATE_S,
            &format!("whole seconds from 0 (a line per transaction) to {MAX_AGGREGATE_S}"),
        )?;
        let sampling = o.f64_where(
            "sampling-rate",
            |v| v > 0.0 && v <= 1.0,
            "a share above 0 and at most 1, e.g. 0.01",
        )?;
        let jobs = Self::jobs(o)?;
        let prefix = o.str("log-prefix").to_string();
        if !o.bool("log") {
            for name in ["aggregate-interval", "sampling-rate", "log-prefix"] {
                if o.given(name) {
                    return Err(BenchError::Usage(format!(
                        "--{name} is allowed only when logging transactions (--log)"
                    )));
                }
            }
            return Ok(None);
        }
        if aggregate > 0 && sampling < 1.0 {
            return Err(BenchError::Usage(
                "log sampling (--sampling-rate) and aggregation (--aggregate-interval) cannot be used at the same time".into(),
            ));
        }
        Ok(Some(LogOptions {
            prefix,
            jobs,
            sampling_rate: sampling,
            aggregate: (aggregate > 0).then_some(aggregate),
        }))
    }

    /// `--latency-limit` as a duration.
    pub fn latency_limit(&self) -> Option<Duration> {
        self.latency_limit_ms
            .map(|ms| Duration::from_secs_f64(ms / 1000.0))
    }
}

/// The words of a comma-separated option, trimmed, empty ones left out.
/// `\,` is a comma within a word and `\\` a backslash (what
/// `dbmeter pgbench` writes for `-D name=a,b`).
pub(super) fn list(s: &str) -> impl Iterator<Item = String> + '_ {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(n @ (',' | '\\')) => cur.push(n),
                Some(n) => {
                    cur.push('\\');
                    cur.push(n);
                }
                None => cur.push('\\'),
            },
            ',' => words.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    words.push(cur);
    words
        .into_iter()
        .map(|w| w.trim().to_string())
        .filter(|w| !w.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Benchmark;
    use crate::options::testing::{refused, values};
    use crate::pgbench::Pgbench;

    fn own() -> Vec<crate::options::OptSpec> {
        Pgbench.options()
    }

    #[test]
    fn the_defaults_parse() {
        let c = PgbenchConfig::from_options(&values(&own(), &[])).unwrap();
        assert_eq!((c.scale, c.scale_given, c.init.fillfactor), (1, false, 100));
        assert_eq!((c.transactions, c.max_tries), (0, 1));
        assert_eq!((c.latency_limit_ms, c.rate, c.time), (None, None, None));
        assert_eq!(c.mode, QueryMode::Simple);
        assert!(c.builtin.is_empty() && c.files.is_empty() && c.log.is_none());
        assert!(c.report_per_command && !c.connect);
    }

    #[test]
    fn given_values_are_typed() {
        let o = values(
            &own(),
            &[
                ("scale", "20"),
                ("latency-limit", "2.5"),
                ("time", "30"),
                ("rate", "100"),
                ("builtin", "select-only@2, simple-update"),
                ("log", "on"),
                ("aggregate-interval", "5"),
                ("jobs", "2"),
                ("random-seed", "7"),
            ],
        );
        let c = PgbenchConfig::from_options(&o).unwrap();
        assert_eq!((c.scale, c.scale_given), (20, true));
        assert_eq!(c.latency_limit(), Some(Duration::from_micros(2500)));
        assert_eq!(
            (c.time, c.rate, c.random_seed),
            (Some(30.0), Some(100.0), Some(7))
        );
        assert_eq!(c.builtin, ["select-only@2", "simple-update"]);
        let log = c.log.unwrap();
        assert_eq!(
            (log.aggregate, log.jobs, log.sampling_rate),
            (Some(5), 2, 1.0)
        );
    }

    #[test]
    fn out_of_range_values_are_refused_in_one_line() {
        let parse = PgbenchConfig::from_options;
        for (name, value) in [
            ("latency-limit", "1e300"),
            ("latency-limit", "1e-300"),
            ("latency-limit", "-1"),
            ("latency-limit", "NaN"),
            ("scale", "0"),
            ("scale", "-3"),
            ("scale", "1000000000000"),
            ("fillfactor", "5"),
            ("transactions", "-1"),
            ("max-tries", "-1"),
            ("max-tries", "99999999999"),
            ("random-seed", "x"),
            ("random-seed", "-1"),
            ("protocol", "binary"),
        ] {
            refused(&own(), &[(name, value)], parse);
        }
        for (name, value) in [
            ("aggregate-interval", "-1"),
            ("aggregate-interval", "1000000000"),
            ("sampling-rate", "0"),
            ("sampling-rate", "1.5"),
            ("sampling-rate", "1e-300x"),
            ("jobs", "0"),
        ] {
            refused(&own(), &[("log", "on"), (name, value)], parse);
        }
        let m = refused(&own(), &[("latency-limit", "1e300")], parse);
        assert_eq!(
            m,
            "--latency-limit=1e300: expected milliseconds: 0 (no limit), or from 0.001 to 3600000"
        );
    }

    #[test]
    fn log_options_need_log() {
        let e = PgbenchConfig::from_options(&values(&own(), &[("sampling-rate", "0.5")]));
        assert_eq!(
            e.unwrap_err().to_string(),
            "--sampling-rate is allowed only when logging transactions (--log)"
        );
    }
}
