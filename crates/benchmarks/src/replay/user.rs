//! The replay's virtual users: each runs recorded sessions one after the
//! other, each session on a fresh server session (a reconnect), its
//! statements in order, at their recorded times under `--speed`.

use super::log::{Session, Verb};
use dbmeter_db::{ConnectOptions, Connection, Dialect, ErrorKind, Value};
use dbmeter_engine::{EventError, Flow, Interrupter, Tally, User, UserFactory};
use dbmeter_stats::measure::sql;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the statements of one class did in the replay.
#[derive(Debug, Default)]
pub struct ClassCounts {
    /// Replayed without an error.
    pub done: AtomicU64,
    /// Refused by the target (or timed out).
    pub errors: AtomicU64,
    /// Reads whose row count differs from the log's `Rows_sent`.
    pub rows_differ: AtomicU64,
    /// Reads compared with the log's `Rows_sent`.
    pub rows_compared: AtomicU64,
}

/// What every user shares: the sessions, the queue of those not started,
/// the classes' counts.
pub struct Shared {
    pub sessions: Vec<Session>,
    /// The next session to start (an index into `sessions`).
    pub next: AtomicUsize,
    pub counts: Vec<ClassCounts>,
    /// The first error of each class, as the target said it.
    pub first_errors: Mutex<Vec<Option<String>>>,
    /// The engine's kind of each class.
    pub kind_of: Vec<usize>,
    /// `--speed`: None as fast as possible.
    pub speed: Option<f64>,
    /// Switch to each statement's logged database (MySQL/MariaDB).
    pub use_database: bool,
    pub connect: ConnectOptions,
}

impl Shared {
    /// Takes the next session not started, if any.
    fn take(&self) -> Option<usize> {
        let i = self.next.fetch_add(1, Relaxed);
        (i < self.sessions.len()).then_some(i)
    }

    fn record_error(&self, class: u32, message: String) {
        let c = class as usize;
        self.counts[c].errors.fetch_add(1, Relaxed);
        if let Ok(mut f) = self.first_errors.lock()
            && let Some(slot) = f.get_mut(c)
            && slot.is_none()
        {
            *slot = Some(message);
        }
    }
}

pub struct ReplayFactory(pub Arc<Shared>);

impl UserFactory for ReplayFactory {
    fn create(&self, user_id: usize) -> Result<Box<dyn User>, String> {
        let conn = Connection::connect_nth(&self.0.connect, user_id).map_err(|e| e.message)?;
        let session = self.0.take();
        Ok(Box::new(ReplayUser {
            shared: self.0.clone(),
            mysql: conn.dialect() == Dialect::Mysql,
            conn,
            session,
            pos: 0,
            switch: None,
            lost: None,
            db: None,
            values: Vec::new(),
        }))
    }
}

struct ReplayUser {
    shared: Arc<Shared>,
    conn: Connection,
    mysql: bool,
    /// The session it runs (None: nothing left to run).
    session: Option<usize>,
    /// Its next statement.
    pos: usize,
    /// The session it starts next, on a fresh server session.
    switch: Option<usize>,
    /// The reconnect for the next session failed: told to the engine as a
    /// lost connection (it reconnects with backoff).
    lost: Option<String>,
    /// The database it switched to (None: the target's).
    db: Option<Arc<str>>,
    values: Vec<Option<Value>>,
}

impl ReplayUser {
    fn session(&self) -> Option<&Session> {
        self.session.map(|s| &self.shared.sessions[s])
    }
}

impl User for ReplayUser {
    fn pause(&mut self) -> Duration {
        // A new recorded session starts on a new server session (its
        // temporary tables and variables are its own), before its first
        // statement and outside any event's latency.
        if let Some(next) = self.switch.take() {
            self.session = Some(next);
            self.pos = 0;
            self.db = None;
            if let Err(e) = self.conn.reconnect() {
                self.lost = Some(e.message);
            }
        }
        Duration::ZERO
    }

    fn intended_start(&mut self) -> Option<Duration> {
        let speed = self.shared.speed?;
        let at = self.session()?.statements.get(self.pos)?.at_us?;
        Duration::try_from_secs_f64(at.max(0) as f64 / 1e6 / speed).ok()
    }

    fn event(&mut self, tally: &mut Tally) -> Result<Flow, EventError> {
        if let Some(message) = self.lost.take() {
            return Err(EventError::ConnectionLost {
                code: "connect".into(),
                message,
            });
        }
        let shared = self.shared.clone();
        let Some(s) = self.session else {
            // More users than sessions: nothing to do.
            return Ok(Flow::UserDone);
        };
        let session = &shared.sessions[s];
        let Some(st) = session.statements.get(self.pos) else {
            return Ok(Flow::UserDone);
        };
        tally.kind = shared.kind_of[st.class as usize];
        if self.mysql
            && shared.use_database
            && let Some(db) = &st.db
            && self.db.as_ref() != Some(db)
        {
            let quoted = format!("USE `{}`", db.replace('`', "``"));
            match self.conn.execute(&quoted) {
                Ok(_) => self.db = Some(db.clone()),
                Err(e) if e.kind == ErrorKind::ConnectionLost => {
                    return Err(EventError::ConnectionLost {
                        code: e.code,
                        message: e.message,
                    });
                }
                Err(e) if e.kind == ErrorKind::Interrupted => return Err(EventError::Cancelled),
                // The statement then runs where the session is, and says
                // what is missing.
                Err(_) => self.db = Some(db.clone()),
            }
        }
        self.values.clear();
        let r = self.conn.query_values(&st.sql, &mut self.values);
        self.values.clear();
        if let Err(e) = &r {
            match e.kind {
                // The event is run again on a new connection (its
                // session's state is gone with the old one).
                ErrorKind::ConnectionLost => {
                    self.db = None;
                    return Err(EventError::ConnectionLost {
                        code: e.code.clone(),
                        message: e.message.clone(),
                    });
                }
                ErrorKind::Interrupted => return Err(EventError::Cancelled),
                _ => {}
            }
        }
        // The statement is done with: the next one, or the next session.
        self.pos += 1;
        let last = if self.pos >= session.statements.len() {
            self.switch = shared.take();
            self.switch.is_none()
        } else {
            false
        };
        let counts = &shared.counts[st.class as usize];
        match r {
            Ok(rows) => {
                counts.done.fetch_add(1, Relaxed);
                let i = match st.verb {
                    Verb::Read => sql::READS,
                    Verb::Write => sql::WRITES,
                    Verb::Other => sql::OTHERS,
                };
                tally.measures[i] += 1;
                if st.verb == Verb::Read
                    && let Some(logged) = st.rows_sent
                {
                    counts.rows_compared.fetch_add(1, Relaxed);
                    if logged != rows {
                        counts.rows_differ.fetch_add(1, Relaxed);
                    }
                }
                Ok(if last { Flow::UserDone } else { Flow::Continue })
            }
            Err(e) => {
                // Refused (or timed out): counted in its class, and the
                // session goes on.
                shared.record_error(
                    st.class,
                    format!("{} {}: {}", self.conn.dialect_name(), e.code, e.message),
                );
                Err(EventError::Failed { code: e.code, last })
            }
        }
    }

    fn reconnect(&mut self) -> Result<(), String> {
        self.db = None;
        self.conn.reconnect().map_err(|e| e.message)
    }

    fn interrupter(&self) -> Option<Interrupter> {
        self.conn.interrupter()
    }
}
