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
}

impl DbError {
    pub fn usage(message: String) -> Self {
        DbError {
            kind: ErrorKind::Usage,
            code: "usage".into(),
            message,
        }
    }

    pub fn other(code: impl Into<String>, message: impl Into<String>) -> Self {
        DbError {
            kind: ErrorKind::Other,
            code: code.into(),
            message: message.into(),
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
