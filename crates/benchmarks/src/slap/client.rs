//! A mysqlslap client: one connection that runs the query list, one
//! statement per event, until its share is done (a finite user).

use super::sql::{Kind, Statement};
use dbmeter_db::{ConnectOptions, Connection, DbError, Dialect, ErrorKind, IgnoreList, Value};
use dbmeter_engine::{EventError, Flow, Interrupter, Tally, User, UserFactory};
use dbmeter_stats::measure::sql::{OTHERS, READS, WRITES};
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::sync::Arc;

/// What every client of a run starts from.
pub struct Shared {
    pub connect: ConnectOptions,
    pub queries: Vec<Statement>,
    /// Statements each client runs (0: the list once).
    pub limit: u64,
    pub commit: u64,
    pub detach: u64,
    /// The table's keys, for the statements that need one.
    pub keys: Vec<String>,
    /// What each connection runs first: `--init-command`, and on
    /// PostgreSQL what makes it use the schema.
    pub session_init: Vec<String>,
    pub ignore: IgnoreList,
    pub seed: u64,
}

pub struct Clients(pub Arc<Shared>);

impl UserFactory for Clients {
    fn create(&self, user_id: usize) -> Result<Box<dyn User>, String> {
        let s = Arc::clone(&self.0);
        let conn = open(&s, user_id).map_err(|e| e.message)?;
        Ok(Box::new(Client {
            rng: Xoshiro256PlusPlus::seed_from_u64(s.seed ^ (user_id as u64 + 1)),
            user_id,
            conn,
            at: 0,
            done: 0,
            commit_counter: 0,
            started: false,
            sql: String::new(),
            rows: Vec::new(),
            shared: s,
        }))
    }
}

fn open(s: &Shared, user_id: usize) -> Result<Connection, DbError> {
    let mut conn = Connection::connect_nth(&s.connect, user_id)?;
    let mut rows = Vec::new();
    for init in &s.session_init {
        conn.query_values(init, &mut rows)?;
        rows.clear();
    }
    Ok(conn)
}

/// What a statement counts as.
pub fn measure_of(sql: &str) -> usize {
    let word: String = sql
        .trim_start()
        .chars()
        .take_while(char::is_ascii_alphabetic)
        .collect::<String>()
        .to_ascii_uppercase();
    match word.as_str() {
        "SELECT" | "SHOW" | "WITH" | "VALUES" => READS,
        "INSERT" | "UPDATE" | "DELETE" | "REPLACE" => WRITES,
        _ => OTHERS,
    }
}

struct Client {
    shared: Arc<Shared>,
    user_id: usize,
    conn: Connection,
    rng: Xoshiro256PlusPlus,
    /// Position in the list.
    at: usize,
    /// Statements run.
    done: u64,
    commit_counter: u64,
    started: bool,
    sql: String,
    rows: Vec<Option<Value>>,
}

impl Client {
    fn run(&mut self, sql: &str, tally: &mut Tally) -> Result<(), DbError> {
        self.rows.clear();
        self.conn.query_values(sql, &mut self.rows)?;
        tally.measures[measure_of(sql)] += 1;
        Ok(())
    }

    fn begin(&mut self, tally: &mut Tally) -> Result<(), DbError> {
        match self.conn.dialect() {
            Dialect::Mysql => self.run("SET AUTOCOMMIT=0", tally),
            _ => self.run("BEGIN", tally),
        }
    }

    fn commit(&mut self, tally: &mut Tally, again: bool) -> Result<(), DbError> {
        self.run("COMMIT", tally)?;
        if again && self.conn.dialect() != Dialect::Mysql {
            self.run("BEGIN", tally)?;
        }
        Ok(())
    }

    /// One statement of the list, with what mysqlslap does around it.
    fn step(&mut self, tally: &mut Tally) -> Result<Flow, DbError> {
        let s = Arc::clone(&self.shared);
        if !self.started {
            self.started = true;
            if s.commit > 0 {
                self.begin(tally)?;
            }
        }
        // --detach: a new connection before every detach-th statement of
        // each pass through the list, the first one included.
        if s.detach > 0 && (self.at as u64).is_multiple_of(s.detach) {
            self.conn = open(&s, self.user_id)?;
            if s.commit > 0 && self.conn.dialect() != Dialect::Mysql {
                self.run("BEGIN", tally)?;
            }
        }
        let stmt = &s.queries[self.at];
        let mut sql = std::mem::take(&mut self.sql);
        sql.clear();
        sql.push_str(&stmt.sql);
        if stmt.kind == Kind::NeedsKey && !s.keys.is_empty() {
            let k = &s.keys[(self.rng.next_u64() % s.keys.len() as u64) as usize];
            sql.push_str(" '");
            sql.push_str(k);
            sql.push('\'');
        }
        let r = self.run(&sql, tally);
        self.sql = sql;
        r?;
        self.done += 1;
        if s.commit > 0 {
            self.commit_counter += 1;
            if self.commit_counter == s.commit {
                self.commit_counter = 0;
                self.commit(tally, true)?;
            }
        }
        self.at += 1;
        let last = if s.limit > 0 {
            if self.at == s.queries.len() {
                self.at = 0;
            }
            self.done >= s.limit
        } else {
            self.at == s.queries.len()
        };
        if last {
            if s.commit > 0 {
                self.commit(tally, false)?;
            }
            return Ok(Flow::UserDone);
        }
        Ok(Flow::Continue)
    }
}

impl User for Client {
    fn event(&mut self, tally: &mut Tally) -> Result<Flow, EventError> {
        self.step(tally).map_err(|e| match e.kind {
            ErrorKind::Interrupted => EventError::Cancelled,
            ErrorKind::Timeout => EventError::TimedOut { code: e.code },
            ErrorKind::ConnectionLost => EventError::ConnectionLost {
                code: e.code,
                message: e.message,
            },
            _ if self.shared.ignore.contains(&e.code) => EventError::Ignorable { code: e.code },
            _ => EventError::Fatal {
                message: format!(
                    "{} error {}: {} (in: {})",
                    self.conn.dialect_name(),
                    e.code,
                    e.message,
                    short(&self.sql)
                ),
                code: e.code,
            },
        })
    }

    fn reconnect(&mut self) -> Result<(), String> {
        self.conn = open(&self.shared, self.user_id).map_err(|e| e.message)?;
        Ok(())
    }

    fn interrupter(&self) -> Option<Interrupter> {
        self.conn.interrupter()
    }
}

/// A statement for an error message: its first 80 characters.
pub fn short(sql: &str) -> String {
    let mut s: String = sql.chars().take(80).collect();
    if s.len() < sql.len() {
        s.push_str("...");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_count_as_reads_writes_others() {
        assert_eq!(measure_of(" select 1"), READS);
        assert_eq!(measure_of("INSERT INTO t1 VALUES (1)"), WRITES);
        assert_eq!(measure_of("COMMIT"), OTHERS);
        assert_eq!(short(&"x".repeat(100)).len(), 83);
    }
}
