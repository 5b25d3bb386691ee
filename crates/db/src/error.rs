//! Database errors and their classification.

use std::fmt;

/// What the engine should do about an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// Bad input from the user (bad URL, option): exit code 2.
    Usage,
    /// The connection is gone; reconnecting may help.
    ConnectionLost,
    /// The statement was interrupted because the run is stopping.
    Interrupted,
    /// The statement ran longer than --query-timeout and was cancelled.
    Timeout,
    /// Any other error from the database.
    Other,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DbError {
    pub kind: ErrorKind,
    /// The driver's error code: `SQLITE_BUSY`, a MySQL number, an SQLSTATE.
    pub code: String,
    pub message: String,
    /// MySQL/MariaDB's SQLSTATE beside its error number (empty elsewhere:
    /// PostgreSQL's code is its SQLSTATE).
    pub sqlstate: String,
    /// Where in the statement the error is (1-based, in characters), when
    /// the server says (PostgreSQL).
    pub position: Option<u32>,
}

impl DbError {
    pub fn usage(message: String) -> Self {
        DbError {
            kind: ErrorKind::Usage,
            code: "usage".into(),
            message,
            sqlstate: String::new(),
            position: None,
        }
    }

    pub fn other(code: impl Into<String>, message: impl Into<String>) -> Self {
        DbError {
            kind: ErrorKind::Other,
            code: code.into(),
            message: message.into(),
            sqlstate: String::new(),
            position: None,
        }
    }

    /// Prefixes the message with context (e.g. the statement or target).
    pub fn context(mut self, what: impl fmt::Display) -> Self {
        self.message = format!("{what}: {}", self.message);
        self
    }
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DbError {}

/// SQLite's primary result codes and their names, as errors report them.
pub(crate) const SQLITE_CODES: &[(i32, &str)] = &[
    (1, "SQLITE_ERROR"),
    (2, "SQLITE_INTERNAL"),
    (3, "SQLITE_PERM"),
    (4, "SQLITE_ABORT"),
    (5, "SQLITE_BUSY"),
    (6, "SQLITE_LOCKED"),
    (7, "SQLITE_NOMEM"),
    (8, "SQLITE_READONLY"),
    (9, "SQLITE_INTERRUPT"),
    (10, "SQLITE_IOERR"),
    (11, "SQLITE_CORRUPT"),
    (12, "SQLITE_NOTFOUND"),
    (13, "SQLITE_FULL"),
    (14, "SQLITE_CANTOPEN"),
    (15, "SQLITE_PROTOCOL"),
    (17, "SQLITE_SCHEMA"),
    (18, "SQLITE_TOOBIG"),
    (19, "SQLITE_CONSTRAINT"),
    (20, "SQLITE_MISMATCH"),
    (21, "SQLITE_MISUSE"),
    (23, "SQLITE_AUTH"),
    (25, "SQLITE_RANGE"),
    (26, "SQLITE_NOTADB"),
];

/// Error codes that restart an event instead of stopping the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IgnoreList {
    All,
    Codes(Vec<String>),
}

impl IgnoreList {
    /// Parses `all`, `none`, or a comma-separated list of codes. For
    /// SQLite, names are upper-cased and may omit the `SQLITE_` prefix.
    pub fn parse(s: &str) -> IgnoreList {
        let s = s.trim();
        if s.eq_ignore_ascii_case("all") {
            return IgnoreList::All;
        }
        if s.is_empty() || s.eq_ignore_ascii_case("none") || s.eq_ignore_ascii_case("off") {
            return IgnoreList::Codes(Vec::new());
        }
        IgnoreList::Codes(
            s.split(',')
                .map(|c| c.trim())
                .filter(|c| !c.is_empty())
                .map(|c| {
                    let up = c.to_ascii_uppercase();
                    if up.chars().all(|ch| ch.is_ascii_alphabetic() || ch == '_')
                        && !up.starts_with("SQLITE_")
                    {
                        format!("SQLITE_{up}")
                    } else {
                        up
                    }
                })
                .collect(),
        )
    }

    /// [`IgnoreList::parse`], refusing codes that `target` never reports:
    /// the error names what is wrong and what the target's codes look like.
    pub fn parse_for(s: &str, target: &crate::Target) -> Result<IgnoreList, String> {
        let list = IgnoreList::parse(s);
        let IgnoreList::Codes(codes) = &list else {
            return Ok(list);
        };
        let (valid, what): (fn(&str) -> bool, String) = match target {
            crate::Target::Sqlite { .. } => (
                |c| SQLITE_CODES.iter().any(|(_, n)| *n == c),
                format!(
                    "SQLite's result codes are {} (the SQLITE_ prefix may be left out)",
                    SQLITE_CODES
                        .iter()
                        .map(|(_, n)| n.trim_start_matches("SQLITE_"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ),
            crate::Target::Mysql(_) => (
                |c| !c.is_empty() && c.len() <= 6 && c.chars().all(|ch| ch.is_ascii_digit()),
                "MySQL and MariaDB error codes are numbers, e.g. 1213 (deadlock), 1205 (lock wait timeout), 1020".into(),
            ),
            crate::Target::Postgres(_) => (
                |c| c.len() == 5 && c.chars().all(|ch| ch.is_ascii_alphanumeric()),
                "PostgreSQL error codes are SQLSTATEs of 5 letters and digits, e.g. 40P01 (deadlock), 40001 (serialization failure), 23505".into(),
            ),
        };
        let bad: Vec<&str> = codes
            .iter()
            .map(String::as_str)
            .filter(|c| !valid(c))
            .collect();
        if bad.is_empty() {
            return Ok(list);
        }
        Err(format!(
            "--ignore-errors={}: unknown error code{} {}; {what}; or use 'all' or 'none'",
            s.trim(),
            if bad.len() == 1 { "" } else { "s" },
            bad.join(", ")
        ))
    }

    pub fn contains(&self, code: &str) -> bool {
        match self {
            IgnoreList::All => true,
            IgnoreList::Codes(c) => c.iter().any(|x| x.eq_ignore_ascii_case(code)),
        }
    }

    /// The list as the user would write it.
    pub fn to_option_value(&self) -> String {
        match self {
            IgnoreList::All => "all".into(),
            IgnoreList::Codes(c) if c.is_empty() => "none".into(),
            IgnoreList::Codes(c) => c.join(","),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_names_are_checked_with_or_without_their_prefix() {
        let t = crate::Target::default_sqlite();
        assert_eq!(
            IgnoreList::parse_for("busy, sqlite_locked", &t),
            Ok(IgnoreList::Codes(vec![
                "SQLITE_BUSY".into(),
                "SQLITE_LOCKED".into()
            ]))
        );
        assert_eq!(IgnoreList::parse_for("all", &t), Ok(IgnoreList::All));
        assert_eq!(
            IgnoreList::parse_for("none", &t),
            Ok(IgnoreList::Codes(vec![]))
        );
        let e = IgnoreList::parse_for("abc,busy,xyz", &t).unwrap_err();
        assert!(
            e.contains("unknown error codes SQLITE_ABC, SQLITE_XYZ"),
            "{e}"
        );
        assert!(e.contains("BUSY, LOCKED"), "{e}");
        assert!(!e.contains('\n'), "{e}");
        // A MySQL number means nothing to SQLite.
        assert!(IgnoreList::parse_for("1213", &t).is_err());
    }
}
