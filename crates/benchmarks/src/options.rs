//! Option specs and values.
//!
//! Names are stored with dashes (`table-size`); the parser accepts
//! underscores too, as sysbench does. Values keep the user's text and are
//! checked against their kind when parsed.

use crate::benchmark::BenchError;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ops::RangeInclusive;

/// Text of an option spec: borrowed from a table compiled in, or owned
/// when a script declares the option as it is loaded.
pub type Text = Cow<'static, str>;

/// The words a [`OptKind::Choice`] option takes.
#[derive(Clone, Debug, PartialEq)]
pub enum Choices {
    Static(&'static [&'static str]),
    Owned(Vec<String>),
}

impl Choices {
    pub fn iter(&self) -> Box<dyn Iterator<Item = &str> + '_> {
        match self {
            Choices::Static(c) => Box::new(c.iter().copied()),
            Choices::Owned(c) => Box::new(c.iter().map(String::as_str)),
        }
    }

    pub fn join(&self, sep: &str) -> String {
        self.iter().collect::<Vec<_>>().join(sep)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum OptKind {
    /// An integer, with an optional K/M/G/T suffix (powers of 1024).
    Size,
    /// An integer.
    Int,
    Float,
    /// on/off, true/false, yes/no, 1/0.
    Bool,
    Str,
    /// One of these words.
    Choice(Choices),
    /// A comma-separated list of numbers.
    FloatList,
}

#[derive(Clone, Debug, PartialEq)]
pub struct OptSpec {
    pub name: Text,
    pub kind: OptKind,
    pub default: Text,
    pub help: Text,
    /// Whether the option shapes the prepared data (table count and size,
    /// warehouses, storage engine...), so that two runs with different
    /// values need different datasets. The others only change what runs do.
    pub shapes_data: bool,
    /// Whether the benchmark checks the value itself, in its own words
    /// (sysbench's `Invalid value for memory-block-size: -1`): the parser
    /// then takes any text and leaves the check to the benchmark's typed
    /// config ([`crate::Benchmark::check_options`]).
    pub checked_by_benchmark: bool,
}

pub const fn opt(
    name: &'static str,
    kind: OptKind,
    default: &'static str,
    help: &'static str,
) -> OptSpec {
    OptSpec {
        name: Cow::Borrowed(name),
        kind,
        default: Cow::Borrowed(default),
        help: Cow::Borrowed(help),
        shapes_data: false,
        checked_by_benchmark: false,
    }
}

/// A choice among these words, for a spec in a table compiled in.
pub const fn choice(words: &'static [&'static str]) -> OptKind {
    OptKind::Choice(Choices::Static(words))
}

impl OptSpec {
    /// Marks the option as one that shapes the prepared data.
    pub const fn shapes_data(mut self) -> OptSpec {
        self.shapes_data = true;
        self
    }

    /// Marks the option as one whose value the benchmark checks itself.
    pub const fn checked_by_benchmark(mut self) -> OptSpec {
        self.checked_by_benchmark = true;
        self
    }
}

/// Canonical form of an option name: dashes, lower case.
pub fn canonical(name: &str) -> String {
    name.trim_start_matches('-')
        .replace('_', "-")
        .to_ascii_lowercase()
}

pub fn parse_bool(v: &str) -> Option<bool> {
    match v.to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Some(true),
        "off" | "false" | "no" | "0" => Some(false),
        _ => None,
    }
}

/// Parses an integer with an optional K/M/G/T suffix (1024-based).
pub fn parse_size(v: &str) -> Option<u64> {
    let v = v.trim();
    let (num, mult) = match v.chars().last()?.to_ascii_uppercase() {
        'K' => (&v[..v.len() - 1], 1u64 << 10),
        'M' => (&v[..v.len() - 1], 1 << 20),
        'G' => (&v[..v.len() - 1], 1 << 30),
        'T' => (&v[..v.len() - 1], 1 << 40),
        _ => (v, 1),
    };
    num.trim().parse::<u64>().ok()?.checked_mul(mult)
}

pub fn parse_float_list(v: &str) -> Option<Vec<f64>> {
    v.split(',')
        .map(|x| x.trim().parse::<f64>().ok().filter(|f| f.is_finite()))
        .collect()
}

/// Checks `value` against `spec`; the error names the option and what it takes.
pub fn check(spec: &OptSpec, value: &str) -> Result<(), String> {
    if spec.checked_by_benchmark {
        return Ok(());
    }
    let ok = match &spec.kind {
        OptKind::Size => parse_size(value).is_some(),
        OptKind::Int => value.trim().parse::<i64>().is_ok(),
        OptKind::Float => value.trim().parse::<f64>().is_ok_and(f64::is_finite),
        OptKind::Bool => parse_bool(value).is_some(),
        OptKind::Str => true,
        OptKind::Choice(c) => c.iter().any(|x| x.eq_ignore_ascii_case(value)),
        OptKind::FloatList => parse_float_list(value).is_some(),
    };
    if ok {
        return Ok(());
    }
    let wants = match &spec.kind {
        OptKind::Size => "a whole number, optionally with K, M, G or T".to_string(),
        OptKind::Int => "a whole number".to_string(),
        OptKind::Float => "a number".to_string(),
        OptKind::Bool => "on or off".to_string(),
        OptKind::Str => "text".to_string(),
        OptKind::Choice(c) => format!("one of {}", c.join(", ")),
        OptKind::FloatList => "a comma-separated list of numbers".to_string(),
    };
    Err(format!(
        "--{}={value}: invalid value, expected {wants}",
        spec.name
    ))
}

/// Parsed option values, by canonical name, defaults filled in.
///
/// The names it holds are the declared ones: the specs it was built from
/// ([`OptValues::from_defaults`]: the general options and the benchmark's
/// own) and any name set since (a script takes options it does not
/// declare). Reading a name it does not hold is a mistake in dbmeter's
/// code, never the user's (the parser refuses unknown options before
/// values are built): a debug build panics with the name, so that tests
/// catch a misspelled name; a release build reads an empty value.
#[derive(Clone, Debug, Default)]
pub struct OptValues {
    values: BTreeMap<String, String>,
    given: BTreeMap<String, bool>,
}

/// What reading an undeclared option does: panics in a debug build (a
/// misspelled name in dbmeter's code); an empty value in a release build.
#[track_caller]
fn undeclared(name: &str) -> &'static str {
    if cfg!(debug_assertions) {
        panic!(
            "option --{name} is read but not declared: it is neither a general option nor one of the benchmark's (a misspelled name?)"
        );
    }
    ""
}

impl OptValues {
    pub fn from_defaults(specs: &[OptSpec]) -> Self {
        let mut v = OptValues::default();
        for s in specs {
            v.values.insert(canonical(&s.name), s.default.to_string());
        }
        v
    }

    /// Sets a value given by the user (already checked).
    pub fn set(&mut self, name: &str, value: &str) {
        self.values.insert(name.to_string(), value.to_string());
        self.given.insert(name.to_string(), true);
    }

    /// True when `name` is an option these values hold (declared or set).
    pub fn declares(&self, name: &str) -> bool {
        self.values.contains_key(name)
    }

    /// True when the user gave this option.
    #[track_caller]
    pub fn given(&self, name: &str) -> bool {
        if !self.declares(name) {
            undeclared(name);
        }
        self.given.contains_key(name)
    }

    /// The option's text, as given or its default.
    #[track_caller]
    pub fn str(&self, name: &str) -> &str {
        match self.values.get(name) {
            Some(v) => v,
            None => undeclared(name),
        }
    }

    #[track_caller]
    pub fn u64(&self, name: &str) -> u64 {
        parse_size(self.str(name)).unwrap_or(0)
    }

    #[track_caller]
    pub fn i64(&self, name: &str) -> i64 {
        self.str(name).trim().parse().unwrap_or(0)
    }

    #[track_caller]
    pub fn f64(&self, name: &str) -> f64 {
        self.str(name).trim().parse().unwrap_or(0.0)
    }

    #[track_caller]
    pub fn bool(&self, name: &str) -> bool {
        parse_bool(self.str(name)).unwrap_or(false)
    }

    #[track_caller]
    pub fn floats(&self, name: &str) -> Vec<f64> {
        parse_float_list(self.str(name)).unwrap_or_default()
    }

    /// A number option that `ok` accepts; otherwise a usage error of one
    /// line with the option, its value as given and `expected` (what it
    /// takes: "milliseconds from 0 to 3600000"). NaN, infinities and text
    /// that is no number are refused too.
    #[track_caller]
    pub fn f64_where(
        &self,
        name: &str,
        ok: impl Fn(f64) -> bool,
        expected: &str,
    ) -> Result<f64, BenchError> {
        let text = self.str(name);
        match text.trim().parse::<f64>() {
            Ok(v) if v.is_finite() && ok(v) => Ok(v),
            _ => Err(bad_value(name, text, expected)),
        }
    }

    /// A whole number (K/M/G/T allowed) in `range`; otherwise a usage
    /// error as [`OptValues::f64_where`]'s.
    #[track_caller]
    pub fn u64_in(
        &self,
        name: &str,
        range: RangeInclusive<u64>,
        expected: &str,
    ) -> Result<u64, BenchError> {
        let text = self.str(name);
        match parse_size(text) {
            Some(v) if range.contains(&v) => Ok(v),
            _ => Err(bad_value(name, text, expected)),
        }
    }

    /// A whole number, negative ones too, in `range`; otherwise a usage
    /// error as [`OptValues::f64_where`]'s.
    #[track_caller]
    pub fn i64_in(
        &self,
        name: &str,
        range: RangeInclusive<i64>,
        expected: &str,
    ) -> Result<i64, BenchError> {
        let text = self.str(name);
        match text.trim().parse::<i64>() {
            Ok(v) if range.contains(&v) => Ok(v),
            _ => Err(bad_value(name, text, expected)),
        }
    }

    /// Every option and its value, for results.
    pub fn all(&self) -> &BTreeMap<String, String> {
        &self.values
    }
}

/// The usage error for option `name` with value `text`: one line, with
/// what the option takes.
pub fn bad_value(name: &str, text: &str, expected: &str) -> BenchError {
    BenchError::Usage(format!("--{name}={}: expected {expected}", text.trim()))
}

/// Helpers for the benchmarks' tests of their typed settings.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    /// The general options benchmarks read, with their kinds and defaults
    /// as the run layer declares them (`run/src/options.rs`; the run
    /// layer's test `declared_options` parses every benchmark's options
    /// with the real ones).
    fn general() -> Vec<OptSpec> {
        vec![
            opt("db", OptKind::Str, "", ""),
            opt("threads", OptKind::Size, "1", ""),
            opt("time", OptKind::Float, "10", ""),
            opt("rate", OptKind::Float, "0", ""),
            opt("query-timeout", OptKind::Float, "0", ""),
            opt("output", OptKind::Str, "", ""),
        ]
    }

    /// Values from the defaults of `own` and of the general options, then
    /// `given` as if the user gave them.
    pub fn values(own: &[OptSpec], given: &[(&str, &str)]) -> OptValues {
        let mut specs = general();
        specs.extend_from_slice(own);
        let mut o = OptValues::from_defaults(&specs);
        for (name, value) in given {
            o.set(name, value);
        }
        o
    }

    /// Checks that `parse` refuses `--name=value` with a usage error of
    /// one line that names the option and its value and says what it
    /// takes.
    pub fn refused<T: std::fmt::Debug>(
        own: &[OptSpec],
        given: &[(&str, &str)],
        parse: impl Fn(&OptValues) -> Result<T, BenchError>,
    ) -> String {
        let o = values(own, given);
        match parse(&o) {
            Err(BenchError::Usage(m)) => {
                let (name, value) = given[given.len() - 1];
                assert!(
                    m.starts_with(&format!("--{name}={value}: ")),
                    "{given:?}: {m}"
                );
                assert!(!m.contains('\n'), "{given:?}: {m}");
                m
            }
            other => panic!("{given:?}: expected a usage error, got {other:?}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_bools() {
        assert_eq!(parse_size("10K"), Some(10240));
        assert_eq!(parse_size("2m"), Some(2 << 20));
        assert_eq!(parse_size("12"), Some(12));
        assert_eq!(parse_size("x"), None);
        assert_eq!(parse_bool("ON"), Some(true));
        assert_eq!(parse_bool("0"), Some(false));
        assert_eq!(canonical("--table_size"), "table-size");
    }

    #[test]
    fn check_names_the_option() {
        let s = opt("threads", OptKind::Size, "1", "");
        assert!(check(&s, "4").is_ok());
        let e = check(&s, "four").unwrap_err();
        assert!(e.contains("--threads=four"), "{e}");
    }

    fn values() -> OptValues {
        OptValues::from_defaults(&[
            opt("latency-limit", OptKind::Float, "0", ""),
            opt("runs", OptKind::Size, "1", ""),
            opt("scale", OptKind::Int, "1", ""),
        ])
    }

    #[test]
    fn declared_names_read_their_values() {
        let mut o = values();
        assert_eq!(o.u64("runs"), 1);
        assert!(!o.given("runs"));
        o.set("runs", "3");
        assert!(o.given("runs") && o.u64("runs") == 3);
        // A name set without a spec (a script's variable) is declared too.
        o.set("my-var", "x");
        assert_eq!(o.str("my-var"), "x");
    }

    #[test]
    #[should_panic(expected = "option --runz is read but not declared")]
    fn a_misspelled_name_panics() {
        values().u64("runz");
    }

    #[test]
    #[should_panic(expected = "option --latency-limt is read but not declared")]
    fn asking_whether_a_misspelled_name_was_given_panics() {
        values().given("latency-limt");
    }

    #[test]
    fn out_of_range_values_get_one_line_with_what_is_accepted() {
        let mut o = values();
        let ms = |o: &OptValues| {
            o.f64_where(
                "latency-limit",
                |v| (0.0..=1000.0).contains(&v),
                "milliseconds from 0 to 1000",
            )
        };
        assert_eq!(ms(&o), Ok(0.0));
        for bad in ["1e300", "-1", "NaN", "inf", "ten"] {
            o.set("latency-limit", bad);
            assert_eq!(
                ms(&o),
                Err(BenchError::Usage(format!(
                    "--latency-limit={bad}: expected milliseconds from 0 to 1000"
                )))
            );
        }
        o.set("runs", "2K");
        assert_eq!(o.u64_in("runs", 1..=10_000, "1 to 10000"), Ok(2048));
        o.set("runs", "0");
        let e = o.u64_in("runs", 1..=10_000, "1 to 10000").unwrap_err();
        assert_eq!(e.to_string(), "--runs=0: expected 1 to 10000");
        o.set("scale", "-5");
        assert!(o.i64_in("scale", 1..=10, "1 to 10").is_err());
        assert_eq!(o.i64_in("scale", -10..=10, "-10 to 10"), Ok(-5));
    }
}
