//! Option specs and values.
//!
//! Names are stored with dashes (`table-size`); the parser accepts
//! underscores too, as sysbench does. Values keep the user's text and are
//! checked against their kind when parsed.

use std::borrow::Cow;
use std::collections::BTreeMap;

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
#[derive(Clone, Debug, Default)]
pub struct OptValues {
    values: BTreeMap<String, String>,
    given: BTreeMap<String, bool>,
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

    /// True when the user gave this option.
    pub fn given(&self, name: &str) -> bool {
        self.given.contains_key(name)
    }

    pub fn str(&self, name: &str) -> &str {
        self.values.get(name).map(String::as_str).unwrap_or("")
    }

    pub fn u64(&self, name: &str) -> u64 {
        parse_size(self.str(name)).unwrap_or(0)
    }

    pub fn i64(&self, name: &str) -> i64 {
        self.str(name).trim().parse().unwrap_or(0)
    }

    pub fn f64(&self, name: &str) -> f64 {
        self.str(name).trim().parse().unwrap_or(0.0)
    }

    pub fn bool(&self, name: &str) -> bool {
        parse_bool(self.str(name)).unwrap_or(false)
    }

    pub fn floats(&self, name: &str) -> Vec<f64> {
        parse_float_list(self.str(name)).unwrap_or_default()
    }

    /// Every option and its value, for results.
    pub fn all(&self) -> &BTreeMap<String, String> {
        &self.values
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
}
