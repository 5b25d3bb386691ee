//! What dbmeter records about a database server: its version, variables,
//! data directory and table sizes, and its counters before and after a run.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The size of one table (with its indexes).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TableSize {
    pub name: String,
    /// Rows: exact or the server's estimate (InnoDB's table_rows,
    /// PostgreSQL's reltuples); None when unknown.
    pub rows: Option<u64>,
    pub data_bytes: Option<u64>,
    pub index_bytes: Option<u64>,
    pub total_bytes: Option<u64>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ServerRecord {
    /// e.g. `MariaDB 10.11.6-MariaDB-0+deb12u1`, `PostgreSQL 15.8 ...`, `SQLite 3.45.0`.
    pub version: String,
    /// Every server variable (MySQL SHOW GLOBAL VARIABLES; PostgreSQL
    /// pg_settings, with the unit appended; SQLite pragmas). Values of
    /// names that look secret are masked.
    pub variables: BTreeMap<String, String>,
    /// The data directory (SQLite: the database file).
    pub datadir: Option<String>,
    /// The server's main process, when the server runs on this machine.
    pub pid: Option<u32>,
    pub tables: Vec<TableSize>,
}

/// A counter difference: an integer when both ends are, else a float.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Number {
    Int(i64),
    Float(f64),
}

impl Number {
    pub fn as_f64(&self) -> f64 {
        match self {
            Number::Int(i) => *i as f64,
            Number::Float(f) => *f,
        }
    }
}

impl std::fmt::Display for Number {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Number::Int(i) => write!(f, "{i}"),
            Number::Float(x) => write!(f, "{x:.2}"),
        }
    }
}

/// Server counters before and after a run, and the difference of the
/// numeric ones.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CounterRecord {
    pub before: BTreeMap<String, String>,
    pub after: BTreeMap<String, String>,
    /// Empty when the server restarted during the run.
    pub delta: BTreeMap<String, Number>,
    /// The server restarted between the two readings (its uptime went
    /// down, or its start time changed): the counters started again from
    /// zero, so no difference is meaningful and `delta` is left empty.
    #[serde(default)]
    pub restarted: bool,
    /// Sessions of other clients that were active on the server when the
    /// run started or ended: the global counters include their work too.
    #[serde(default)]
    pub other_sessions: u64,
}

/// The counters that tell a server restart: seconds since the server
/// started (MySQL/MariaDB `Uptime`; PostgreSQL's is read as
/// `server.uptime_s`).
pub const UPTIME_COUNTERS: [&str; 2] = ["Uptime", "server.uptime_s"];

/// Slack for the comparison in [`restarted_between`]: MySQL's uptime
/// counts whole seconds, and each reading takes a moment.
const UPTIME_SLACK_S: f64 = 1.5;

/// Whether the server restarted between the `before` and `after`
/// readings, taken `elapsed_s` seconds apart: its uptime grew by clearly
/// less than the time that passed (a freshly restarted server's uptime
/// may still exceed the first reading's).
pub fn restarted_between(
    before: &BTreeMap<String, String>,
    after: &BTreeMap<String, String>,
    elapsed_s: f64,
) -> bool {
    UPTIME_COUNTERS.iter().any(|k| {
        let read = |m: &BTreeMap<String, String>| m.get(*k)?.trim().parse::<f64>().ok();
        matches!((read(before), read(after)), (Some(b), Some(a)) if a < b + elapsed_s - UPTIME_SLACK_S)
    })
}

impl CounterRecord {
    /// The two readings, taken `elapsed_s` seconds apart, and their
    /// difference; a restart in between leaves the difference out (see
    /// [`CounterRecord::restarted`]).
    pub fn new(
        before: BTreeMap<String, String>,
        after: BTreeMap<String, String>,
        elapsed_s: f64,
    ) -> Self {
        let restarted = restarted_between(&before, &after, elapsed_s);
        let delta = if restarted {
            BTreeMap::new()
        } else {
            delta(&before, &after)
        };
        CounterRecord {
            before,
            after,
            delta,
            restarted,
            other_sessions: 0,
        }
    }
}

/// `after - before` for every name with a number at both ends.
pub fn delta(
    before: &BTreeMap<String, String>,
    after: &BTreeMap<String, String>,
) -> BTreeMap<String, Number> {
    let mut d = BTreeMap::new();
    for (k, a) in after {
        let Some(b) = before.get(k) else { continue };
        let (a, b) = (a.trim(), b.trim());
        if let (Ok(x), Ok(y)) = (a.parse::<i64>(), b.parse::<i64>()) {
            d.insert(k.clone(), Number::Int(x.wrapping_sub(y)));
        } else if let (Ok(x), Ok(y)) = (a.parse::<f64>(), b.parse::<f64>())
            && x.is_finite()
            && y.is_finite()
        {
            d.insert(k.clone(), Number::Float(x - y));
        }
    }
    d
}

/// Whether a variable's name suggests a secret value (passwords, keys).
pub fn is_secret(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    ["password", "passwd", "secret", "key", "token", "credential"]
        .iter()
        .any(|w| n.contains(w))
        // Names about keys that hold no secret: sizes, buffers, caches.
        && !["key_buffer", "key_cache", "_keys", "keys_", "foreign_key", "primary_key", "key_len", "key_block", "keyring_file"]
            .iter()
            .any(|w| n.contains(w))
}

/// The value to record for variable `name`: masked when it looks secret
/// and is not empty.
pub fn masked(name: &str, value: String) -> String {
    if is_secret(name) && !value.is_empty() {
        "****".into()
    } else {
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(v: &[(&str, &str)]) -> BTreeMap<String, String> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn deltas_of_numbers_only() {
        let r = CounterRecord::new(
            map(&[
                ("Questions", "10"),
                ("x", "1.5"),
                ("v", "ON"),
                ("gone", "3"),
            ]),
            map(&[
                ("Questions", "1010"),
                ("x", "2"),
                ("v", "OFF"),
                ("new", "4"),
            ]),
            1.0,
        );
        assert_eq!(r.delta.get("Questions"), Some(&Number::Int(1000)));
        assert_eq!(r.delta.get("x"), Some(&Number::Float(0.5)));
        assert_eq!(r.delta.len(), 2);
    }

    #[test]
    fn a_restart_drops_the_deltas() {
        let r = CounterRecord::new(
            map(&[("Questions", "5000"), ("Uptime", "300")]),
            map(&[("Questions", "400"), ("Uptime", "4")]),
            10.0,
        );
        assert!(r.restarted);
        assert!(r.delta.is_empty());
        // A server started 3 s before the run, restarted 4 s into a 10 s
        // run: its uptime is higher after, but by less than 10 s.
        let young = CounterRecord::new(
            map(&[("Uptime", "3"), ("x", "1")]),
            map(&[("Uptime", "6"), ("x", "3")]),
            10.0,
        );
        assert!(young.restarted);
        let ok = CounterRecord::new(
            map(&[("server.uptime_s", "10.5"), ("x", "1")]),
            map(&[("server.uptime_s", "20.4"), ("x", "3")]),
            10.0,
        );
        assert!(!ok.restarted);
        assert_eq!(ok.delta.get("x"), Some(&Number::Int(2)));
    }

    #[test]
    fn masks_secrets() {
        assert_eq!(masked("ssl_key_password", "abc".into()), "****");
        assert_eq!(masked("rpl_semi_sync_master_secret", "x".into()), "****");
        assert_eq!(masked("key_buffer_size", "8388608".into()), "8388608");
        assert_eq!(masked("ssl_key", "".into()), "");
        assert_eq!(masked("max_connections", "151".into()), "151");
    }
}
