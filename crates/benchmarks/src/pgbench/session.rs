//! What a client needs from a database connection ([`Session`]): run one
//! SQL command in one of pgbench's query modes, hand back the rows that
//! `\gset`/`\aset` store, and, when it can, pipeline commands between
//! `\startpipeline` and `\endpipeline`. The buffers passed through it
//! ([`Params`], [`Captured`]) are the client's and reused, so a session can
//! run a transaction without allocating.

use std::fmt;

/// pgbench's `-M`: how commands are sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum QueryMode {
    /// The SQL text with the variables written into it.
    #[default]
    Simple,
    /// `$1, $2, ...` in the text and the variables as parameters (the
    /// extended protocol, unnamed statement).
    Extended,
    /// As extended, through a statement prepared once per session.
    Prepared,
}

impl QueryMode {
    pub fn parse(s: &str) -> Result<QueryMode, String> {
        match s {
            "simple" => Ok(QueryMode::Simple),
            "extended" => Ok(QueryMode::Extended),
            "prepared" => Ok(QueryMode::Prepared),
            other => Err(format!(
                "invalid query mode \"{other}\": expected simple, extended or prepared"
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            QueryMode::Simple => "simple",
            QueryMode::Extended => "extended",
            QueryMode::Prepared => "prepared",
        }
    }
}

/// The command number of the `ROLLBACK` a client sends after an error in
/// a transaction (it is no command of the script).
pub const ROLLBACK_COMMAND: usize = usize::MAX;

/// One SQL command to run.
#[derive(Debug)]
pub struct Query<'a> {
    /// The script and command it comes from: together a stable key for a
    /// prepared statement (`sql` is the same each time in the extended and
    /// prepared modes).
    pub script: usize,
    pub command: usize,
    pub mode: QueryMode,
    /// Simple mode: the SQL to send. Extended and prepared: the SQL with
    /// `$n` placeholders, and `params` their values.
    pub sql: &'a str,
    pub params: &'a Params,
}

/// The parameters of a query, as text (NULL when the variable is not
/// set), kept in one reused buffer.
#[derive(Clone, Debug, Default)]
pub struct Params {
    text: String,
    spans: Vec<Option<(usize, usize)>>,
}

impl Params {
    pub fn clear(&mut self) {
        self.text.clear();
        self.spans.clear();
    }

    /// Appends a parameter; `write` writes its text and returns false for
    /// NULL.
    pub fn push_with(&mut self, write: impl FnOnce(&mut String) -> bool) {
        let start = self.text.len();
        if write(&mut self.text) {
            self.spans.push(Some((start, self.text.len())));
        } else {
            self.text.truncate(start);
            self.spans.push(None);
        }
    }

    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// Parameter `i` (0-based, `$1` is 0); None for NULL.
    pub fn get(&self, i: usize) -> Option<&str> {
        self.spans
            .get(i)
            .copied()
            .flatten()
            .map(|(a, b)| &self.text[a..b])
    }

    pub fn iter(&self) -> impl Iterator<Item = Option<&str>> {
        (0..self.len()).map(|i| self.get(i))
    }
}

/// The rows a session hands back for `\gset`/`\aset`: for each result of
/// the command (a command can hold several queries separated by `\;`), its
/// number of rows and its last row's columns and values.
#[derive(Clone, Debug, Default)]
pub struct Captured {
    results: Vec<CapturedResult>,
    used: usize,
}

/// One result of a captured command.
#[derive(Clone, Debug, Default)]
pub struct CapturedResult {
    /// Rows returned (0 for a command that returns none, e.g. UPDATE).
    pub rows: u64,
    columns: Vec<String>,
    values: Vec<String>,
    used: usize,
}

impl CapturedResult {
    /// The last row's (column, value) pairs; NULL is the empty string, as
    /// pgbench stores it.
    pub fn last_row(&self) -> impl Iterator<Item = (&str, &str)> {
        self.columns[..self.used]
            .iter()
            .zip(&self.values[..self.used])
            .map(|(c, v)| (c.as_str(), v.as_str()))
    }
}

impl Captured {
    pub fn clear(&mut self) {
        self.used = 0;
    }

    /// Starts the next result, of `rows` rows.
    pub fn begin_result(&mut self, rows: u64) {
        if self.used == self.results.len() {
            self.results.push(CapturedResult::default());
        }
        let r = &mut self.results[self.used];
        r.rows = rows;
        r.used = 0;
        self.used += 1;
    }

    /// Adds a column of the current result's last row.
    pub fn push_value(&mut self, column: &str, value: Option<&str>) {
        if self.used == 0 {
            self.begin_result(1);
        }
        let r = &mut self.results[self.used - 1];
        if r.used == r.columns.len() {
            r.columns.push(String::new());
            r.values.push(String::new());
        }
        r.columns[r.used].clear();
        r.columns[r.used].push_str(column);
        r.values[r.used].clear();
        r.values[r.used].push_str(value.unwrap_or(""));
        r.used += 1;
    }

    pub fn results(&self) -> &[CapturedResult] {
        &self.results[..self.used]
    }
}

/// What kind of SQL error: pgbench retries serialization failures and
/// deadlocks (with `--max-tries`) and aborts the client on any other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SqlErrorKind {
    Serialization,
    Deadlock,
    /// The connection is gone.
    ConnectionLost,
    Other,
}

/// A failed SQL command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SqlError {
    pub kind: SqlErrorKind,
    /// The SQLSTATE (or the driver's code).
    pub code: String,
    pub message: String,
    /// The server's whole report where the driver has it (`ERROR:  ...`
    /// with DETAIL, HINT and CONTEXT lines), as pgbench prints it.
    pub report: Option<String>,
}

impl SqlError {
    /// An error classified by its SQLSTATE (40001 and 40P01 can be retried).
    pub fn from_sqlstate(code: &str, message: impl Into<String>) -> SqlError {
        let kind = match code {
            "40001" => SqlErrorKind::Serialization,
            "40P01" => SqlErrorKind::Deadlock,
            _ => SqlErrorKind::Other,
        };
        SqlError {
            kind,
            code: code.to_string(),
            message: message.into(),
            report: None,
        }
    }

    pub fn retryable(&self) -> bool {
        matches!(
            self.kind,
            SqlErrorKind::Serialization | SqlErrorKind::Deadlock
        )
    }
}

impl fmt::Display for SqlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.code.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{} (SQLSTATE {})", self.message, self.code)
        }
    }
}

/// A database connection as a client uses it.
pub trait Session {
    /// Runs one command and waits for its results (all of them when it
    /// holds several queries). With `capture`, fills it: for each result,
    /// [`Captured::begin_result`] with its row count, then
    /// [`Captured::push_value`] for each column of its last row.
    ///
    /// Between [`Session::begin_pipeline`] returning true and
    /// [`Session::end_pipeline`], may instead queue the command and return
    /// at once (its error then comes from `end_pipeline`); `capture` is
    /// never given then.
    fn query(&mut self, query: &Query<'_>, capture: Option<&mut Captured>) -> Result<(), SqlError>;

    /// `\startpipeline`: true if the session pipelines the commands up to
    /// `\endpipeline`, false (the default) if it runs them one by one.
    fn begin_pipeline(&mut self) -> Result<bool, SqlError> {
        Ok(false)
    }

    /// `\endpipeline`: sends what is queued, waits for every result, and
    /// returns the first error.
    fn end_pipeline(&mut self) -> Result<(), SqlError> {
        Ok(())
    }

    /// Whether a transaction block is open (after an error: whether it
    /// needs a ROLLBACK; at the end of a script: whether the script left
    /// one open). None if the session cannot tell: the client then sends
    /// ROLLBACK after an error and does not check the end.
    fn in_transaction(&mut self) -> Option<bool> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_and_captures_reuse_their_buffers() {
        let mut p = Params::default();
        p.push_with(|s| {
            s.push_str("12");
            true
        });
        p.push_with(|s| {
            s.push_str("ignored");
            false
        });
        assert_eq!(p.iter().collect::<Vec<_>>(), [Some("12"), None]);
        p.clear();
        assert!(p.is_empty());

        let mut c = Captured::default();
        c.begin_result(0);
        c.begin_result(1);
        c.push_value("a", Some("1"));
        c.push_value("b", None);
        assert_eq!(c.results().len(), 2);
        assert_eq!(
            c.results()[1].last_row().collect::<Vec<_>>(),
            [("a", "1"), ("b", "")]
        );
        c.clear();
        c.begin_result(3);
        assert_eq!(c.results().len(), 1);
        assert_eq!(c.results()[0].last_row().count(), 0);
    }

    #[test]
    fn retryable_sqlstates() {
        assert!(SqlError::from_sqlstate("40001", "x").retryable());
        assert!(SqlError::from_sqlstate("40P01", "x").retryable());
        assert!(!SqlError::from_sqlstate("23505", "x").retryable());
    }
}
