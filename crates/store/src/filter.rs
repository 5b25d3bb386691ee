//! Selectors: which stored runs a command works on.
//!
//! `tag:KEY=VALUE`, `variant:NAME`, `campaign:NAME`, `run:ID` or
//! `run:ID1,ID2,...`, `workload:NAME`, `threads:N`. Several selectors
//! combine with AND; no selector selects every run.

use crate::StoreError;
use crate::backend::Param;
use std::fmt;

/// One condition on stored runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selector {
    /// Runs with tag `key` set to `value`.
    Tag {
        key: String,
        value: String,
    },
    Variant(String),
    Campaign(String),
    /// Runs with any of these ids.
    Runs(Vec<i64>),
    Workload(String),
    Threads(u32),
}

/// The selector words, for help texts and error messages.
pub const SELECTOR_FORMS: &str =
    "tag:KEY=VALUE, variant:NAME, campaign:NAME, run:ID[,ID...], workload:NAME, threads:N";

impl Selector {
    /// Parses one selector word, e.g. `tag:phase=after`.
    pub fn parse(word: &str) -> Result<Selector, StoreError> {
        let bad = |why: &str| {
            StoreError::new(format!(
                "selector '{word}': {why} (selectors: {SELECTOR_FORMS})"
            ))
        };
        let Some((kind, arg)) = word.split_once(':') else {
            return Err(bad("expected KIND:VALUE"));
        };
        if arg.is_empty() {
            return Err(bad("no value after the colon"));
        }
        Ok(match kind.to_ascii_lowercase().as_str() {
            "tag" => {
                let Some((key, value)) = arg.split_once('=') else {
                    return Err(bad("expected tag:KEY=VALUE"));
                };
                if key.is_empty() {
                    return Err(bad("the tag has no key"));
                }
                Selector::Tag {
                    key: key.to_string(),
                    value: value.to_string(),
                }
            }
            "variant" => Selector::Variant(arg.to_string()),
            "campaign" => Selector::Campaign(arg.to_string()),
            "workload" => Selector::Workload(arg.to_string()),
            "run" | "runs" | "id" => {
                let ids: Result<Vec<i64>, _> = arg
                    .split(',')
                    .map(|x| x.trim().trim_start_matches('#').parse::<i64>())
                    .collect();
                match ids {
                    Ok(ids) => Selector::Runs(ids),
                    Err(_) => return Err(bad("run ids are whole numbers, e.g. run:3,4")),
                }
            }
            "threads" => match arg.parse::<u32>() {
                Ok(n) => Selector::Threads(n),
                Err(_) => return Err(bad("threads takes a whole number")),
            },
            _ => return Err(bad(&format!("unknown kind '{kind}'"))),
        })
    }

    /// The condition as SQL on `runs`, with its parameters.
    fn sql(&self, params: &mut Vec<Param>) -> String {
        let text = |params: &mut Vec<Param>, s: &str| params.push(Param::Text(Some(s.to_string())));
        match self {
            Selector::Tag { key, value } => {
                text(params, key);
                text(params, value);
                "EXISTS (SELECT 1 FROM tags t WHERE t.run_id = runs.id AND t.key = ? AND t.value = ?)"
                    .to_string()
            }
            Selector::Variant(v) => {
                text(params, v);
                "runs.variant = ?".to_string()
            }
            Selector::Campaign(c) => {
                text(params, c);
                "runs.campaign = ?".to_string()
            }
            Selector::Workload(w) => {
                text(params, w);
                "runs.workload = ?".to_string()
            }
            Selector::Threads(n) => {
                params.push(Param::Int(Some(i64::from(*n))));
                "runs.threads = ?".to_string()
            }
            Selector::Runs(ids) if ids.is_empty() => "1 = 0".to_string(),
            Selector::Runs(ids) => {
                params.extend(ids.iter().map(|i| Param::Int(Some(*i))));
                format!("runs.id IN ({})", vec!["?"; ids.len()].join(", "))
            }
        }
    }
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Selector::Tag { key, value } => write!(f, "tag:{key}={value}"),
            Selector::Variant(v) => write!(f, "variant:{v}"),
            Selector::Campaign(c) => write!(f, "campaign:{c}"),
            Selector::Workload(w) => write!(f, "workload:{w}"),
            Selector::Threads(n) => write!(f, "threads:{n}"),
            Selector::Runs(ids) => write!(
                f,
                "run:{}",
                ids.iter()
                    .map(|i| i.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        }
    }
}

/// Selectors that all must hold (AND). The empty filter selects every run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filter {
    pub selectors: Vec<Selector>,
}

impl Filter {
    /// Every stored run.
    pub fn all() -> Filter {
        Filter::default()
    }

    /// Runs with these ids.
    pub fn ids(ids: &[i64]) -> Filter {
        Filter {
            selectors: vec![Selector::Runs(ids.to_vec())],
        }
    }

    /// Parses selector words; an error names the bad one.
    pub fn parse<S: AsRef<str>>(words: &[S]) -> Result<Filter, StoreError> {
        let selectors = words
            .iter()
            .map(|w| Selector::parse(w.as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Filter { selectors })
    }

    pub fn is_empty(&self) -> bool {
        self.selectors.is_empty()
    }

    /// A `WHERE` clause (empty for no selector) and its parameters.
    pub(crate) fn where_clause(&self) -> (String, Vec<Param>) {
        let mut params = Vec::new();
        if self.selectors.is_empty() {
            return (String::new(), params);
        }
        let parts: Vec<String> = self.selectors.iter().map(|s| s.sql(&mut params)).collect();
        (format!(" WHERE {}", parts.join(" AND ")), params)
    }
}

impl fmt::Display for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.selectors.is_empty() {
            return f.write_str("all runs");
        }
        let words: Vec<String> = self.selectors.iter().map(|s| s.to_string()).collect();
        f.write_str(&words.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_kind() {
        let f = Filter::parse(&[
            "tag:phase=after",
            "variant:A",
            "campaign:c1",
            "run:3,4",
            "workload:read_mostly",
            "threads:8",
        ])
        .unwrap();
        assert_eq!(f.selectors.len(), 6);
        assert_eq!(
            f.selectors[0],
            Selector::Tag {
                key: "phase".into(),
                value: "after".into()
            }
        );
        assert_eq!(f.selectors[3], Selector::Runs(vec![3, 4]));
        assert_eq!(
            f.to_string(),
            "tag:phase=after variant:A campaign:c1 run:3,4 workload:read_mostly threads:8"
        );
        let (sql, params) = f.where_clause();
        assert_eq!(sql.matches('?').count(), params.len());
    }

    #[test]
    fn errors_name_the_selector() {
        for (w, want) in [
            ("colour:red", "unknown kind 'colour'"),
            ("run:x", "whole numbers"),
            ("tag:novalue", "tag:KEY=VALUE"),
            ("variant:", "no value"),
            ("justaword", "KIND:VALUE"),
        ] {
            let e = Selector::parse(w).unwrap_err().0;
            assert!(e.contains(w) && e.contains(want), "{w}: {e}");
        }
    }
}
