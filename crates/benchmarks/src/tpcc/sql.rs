//! What the transactions share: dialect differences, the statement runner
//! that counts reads and writes, and reading values out of result rows.

use dbmeter_db::{Connection, DbError, Dialect, Outcome, Param, StmtId, Value};
use dbmeter_engine::Tally;
use dbmeter_stats::measure::sql;

/// How a transaction ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    Committed,
    /// Rolled back as the specification asks (New-Order's unused item).
    RolledBack,
}

/// ` FOR UPDATE` where the dialect has row locks (SQLite locks the whole
/// database for writers instead).
pub fn for_update(d: Dialect) -> &'static str {
    match d {
        Dialect::Sqlite => "",
        _ => " FOR UPDATE",
    }
}

/// A placeholder for an amount of money sent as decimal text.
pub fn money_param(d: Dialect) -> &'static str {
    match d {
        Dialect::Mysql => "CAST(? AS DECIMAL(12,2))",
        Dialect::Postgres => "CAST(CAST(? AS TEXT) AS NUMERIC)",
        Dialect::Sqlite => "?",
    }
}

/// A placeholder for an integer where the statement alone does not tell
/// its type (PostgreSQL infers `CASE ... THEN ?` as text).
pub fn int_param(d: Dialect) -> &'static str {
    match d {
        Dialect::Postgres => "CAST(? AS INTEGER)",
        _ => "?",
    }
}

/// `n` placeholders joined by commas.
pub fn marks(n: usize) -> String {
    vec!["?"; n].join(",")
}

/// Transaction control statements.
pub struct TxStmts {
    /// None on MySQL/MariaDB, whose terminals run with autocommit off: a
    /// transaction begins with its first statement (one round trip less).
    pub begin_write: Option<StmtId>,
    pub begin_read: Option<StmtId>,
    pub commit: StmtId,
    pub rollback: StmtId,
}

/// What a terminal's session needs before its first transaction.
pub fn session_setup(d: Dialect) -> Option<&'static str> {
    (d == Dialect::Mysql).then_some("SET autocommit = 0")
}

impl TxStmts {
    pub fn register(conn: &mut Connection) -> TxStmts {
        // SQLite: take the write lock at BEGIN, so that a writer never has
        // to upgrade a read snapshot (which fails at once under WAL).
        let (begin_write, begin_read) = match conn.dialect() {
            Dialect::Sqlite => (Some("BEGIN IMMEDIATE"), Some("BEGIN")),
            Dialect::Postgres => (Some("BEGIN"), Some("BEGIN")),
            Dialect::Mysql => (None, None),
        };
        TxStmts {
            begin_write: begin_write.map(|b| conn.register(b)),
            begin_read: begin_read.map(|b| conn.register(b)),
            commit: conn.register("COMMIT"),
            rollback: conn.register("ROLLBACK"),
        }
    }
}

/// Runs statements on a connection, counting them into the event's tally
/// and keeping the last result's values.
pub struct Exec<'a> {
    pub conn: &'a mut Connection,
    pub tally: &'a mut Tally,
    /// The values of the last `fetch`, row after row.
    pub rows: &'a mut Vec<Option<Value>>,
}

impl Exec<'_> {
    /// Runs a query; its values land in `rows`. Returns the row count.
    pub fn fetch(&mut self, id: StmtId, params: &[Param<'_>]) -> Result<usize, DbError> {
        self.rows.clear();
        let n = self.conn.fetch(id, params, self.rows)?;
        self.tally.measures[sql::READS] += 1;
        Ok(n as usize)
    }

    /// Runs a statement. Returns the rows it changed.
    pub fn run(&mut self, id: StmtId, params: &[Param<'_>]) -> Result<u64, DbError> {
        match self.conn.run(id, params)? {
            Outcome::Affected(n) if n > 0 => {
                self.tally.measures[sql::WRITES] += 1;
                Ok(n)
            }
            Outcome::Affected(_) => {
                self.tally.measures[sql::OTHERS] += 1;
                Ok(0)
            }
            Outcome::Rows(n) => {
                self.tally.measures[sql::READS] += 1;
                Ok(n)
            }
        }
    }

    /// Value `col` of row `row` of the last fetch, `cols` columns wide.
    pub fn at(&self, row: usize, cols: usize, col: usize) -> Option<&Value> {
        self.rows.get(row * cols + col).and_then(Option::as_ref)
    }
}

/// An integer value (text that holds one counts too); 0 for NULL.
pub fn int(v: Option<&Value>) -> i64 {
    match v {
        Some(Value::Int(i)) => *i,
        Some(Value::Text(s)) => s
            .trim()
            .parse::<i64>()
            .ok()
            .or_else(|| s.trim().parse::<f64>().ok().map(|f| f as i64))
            .unwrap_or(0),
        Some(Value::Bytes(_)) | None => 0,
    }
}

/// A decimal value in hundredths (money) or ten-thousandths (rates):
/// `scale` is 100 or 10_000.
pub fn fixed(v: Option<&Value>, scale: i64) -> i64 {
    match v {
        Some(Value::Int(i)) => i * scale,
        Some(Value::Text(s)) => s
            .trim()
            .parse::<f64>()
            .map_or(0, |f| (f * scale as f64).round() as i64),
        Some(Value::Bytes(_)) | None => 0,
    }
}

/// A text value ("" for NULL and numbers).
pub fn text(v: Option<&Value>) -> &str {
    match v {
        Some(Value::Text(s)) => s.as_str(),
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_as_numbers() {
        assert_eq!(fixed(Some(&Value::Text("12.34".into())), 100), 1234);
        assert_eq!(fixed(Some(&Value::Text("-10.00".into())), 100), -1000);
        assert_eq!(fixed(Some(&Value::Int(300000)), 100), 30_000_000);
        assert_eq!(fixed(Some(&Value::Text("0.0712".into())), 10_000), 712);
        assert_eq!(int(Some(&Value::Text("3001".into()))), 3001);
        assert_eq!(int(None), 0);
    }
}
