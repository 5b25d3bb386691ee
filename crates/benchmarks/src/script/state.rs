//! One Lua state with dbmeter's sysbench API: the Rust half of the API
//! (connections, statements, random numbers, counters) and the Lua half
//! (`prelude.lua`), then the script itself.

use crate::random::{RandGen, RandSpec, derive_seed};
use dbmeter_db::{ConnectOptions, Connection, DbError, Dialect, Outcome, ResultRows, StmtId};
use dbmeter_engine::Tally;
use dbmeter_stats::measure::sql;
use dbmeter_stats::{LatencyHistogram, LatencyRecorder};
use mlua::{Function, Lua, LuaOptions, MultiValue, StdLib, Table, Value as LuaValue};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

const PRELUDE: &str = include_str!("prelude.lua");

/// sysbench's bulk inserts send a multi-row INSERT at about this size.
const BULK_FLUSH_BYTES: usize = 512 * 1024;

/// A value of `sysbench.opt`, typed as sysbench types it.
#[derive(Clone, Debug)]
pub(crate) enum OptVal {
    Bool(bool),
    Num(f64),
    Str(String),
    List(Vec<String>),
}

/// Distinct statements kept apart at most; the rest are one kind.
const MAX_STATEMENTS: usize = 200;

/// The name of the statements beyond [`MAX_STATEMENTS`].
pub(crate) const OTHER_STATEMENTS: &str = "(other statements)";

/// Per-statement latencies of a run: each user keeps its own and adds
/// them here when it finishes.
#[derive(Default)]
pub(crate) struct Statements {
    /// Set when the measured phase starts (warm-up statements are left out).
    pub measuring: AtomicBool,
    pub merged: Mutex<HashMap<String, LatencyHistogram>>,
}

/// A statement's kind name: its text with literals (numbers, quoted
/// strings) as `?` and white space collapsed, so that `WHERE id=12` and
/// `WHERE id=7` are one statement, as a prepared one would be.
pub(crate) fn statement_name(sql: &str, out: &mut String) {
    out.clear();
    let b = sql.as_bytes();
    let mut i = 0;
    let mut space = false;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            space = !out.is_empty();
            i += 1;
            continue;
        }
        if space {
            out.push(' ');
            space = false;
        }
        let prev_ident = out
            .as_bytes()
            .last()
            .is_some_and(|p| p.is_ascii_alphanumeric() || *p == b'_' || *p == b'$');
        if c == b'\'' {
            // A quoted string ('' escapes a quote; a backslash escapes too).
            i += 1;
            while i < b.len() {
                if b[i] == b'\\' {
                    i += 2;
                    continue;
                }
                if b[i] == b'\'' {
                    if b.get(i + 1) == Some(&b'\'') {
                        i += 2;
                        continue;
                    }
                    break;
                }
                i += 1;
            }
            i += 1;
            out.push('?');
        } else if c.is_ascii_digit() && !prev_ident {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.') {
                i += 1;
            }
            out.push('?');
        } else {
            // Whole characters (the text is UTF-8).
            let len = sql[i..].chars().next().map_or(1, char::len_utf8);
            out.push_str(&sql[i..i + len]);
            i += len;
        }
    }
}

/// What every Lua state of one command or run shares.
pub(crate) struct Env {
    /// Per-statement latencies, for the states of a run.
    pub statements: Option<Arc<Statements>>,
    /// A sysbench 0.5 script (its 0.5 globals, a connection per thread).
    pub legacy: bool,
    /// The options are global variables too (a script that declares none).
    pub export_globals: bool,
    pub script: PathBuf,
    pub source: String,
    pub connect: Option<ConnectOptions>,
    pub rand: RandSpec,
    pub seed: u64,
    pub opts: Vec<(String, OptVal)>,
    pub unique: AtomicU32,
    /// For a script's own thread_run(): when its first user asked for an
    /// event, and how many events its users have started.
    pub loop_start: std::sync::OnceLock<Instant>,
    pub loop_events: std::sync::atomic::AtomicU64,
    /// Error codes that restart an event (the driver's ignorable errors).
    pub ignore: dbmeter_db::IgnoreList,
    /// Reconnects the script asked for (`con:reconnect()`).
    pub reconnects: std::sync::atomic::AtomicU64,
    /// The run is stopping: a script's own loop ends (`sb_more_events`).
    pub stopping: AtomicBool,
}

impl Env {
    /// A number option of the run (0 when absent).
    fn num_opt(&self, name: &str) -> f64 {
        self.opts
            .iter()
            .find(|(n, _)| n == name)
            .and_then(|(_, v)| match v {
                OptVal::Num(x) => Some(*x),
                OptVal::Str(s) => s.trim().parse().ok(),
                _ => None,
            })
            .unwrap_or(0.0)
    }
}

/// The command line as sysbench shows it to a script
/// (`sysbench.cmdline.argv`): `dbmeter sysbench ARGS` as `sysbench ARGS`.
fn argv() -> Vec<String> {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("sysbench") {
        let mut v = vec!["sysbench".to_string()];
        v.extend(args[2..].iter().cloned());
        v
    } else {
        args
    }
}

/// The command the command line names for `script` (None: none named).
pub(crate) fn command_of(script: &str) -> Option<String> {
    let argv = argv();
    let words: Vec<&String> = argv
        .iter()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    if argv.first().map(String::as_str) == Some("sysbench") {
        // sysbench [options] TEST [COMMAND]; TEST names the script by its
        // path, or by its name where sysbench finds it (`oltp_read_write`
        // for .../oltp_read_write.lua).
        let stem = std::path::Path::new(script)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned());
        let at = words
            .iter()
            .position(|w| w.as_str() == script)
            .or_else(|| {
                words
                    .iter()
                    .position(|w| Some(w.as_str()) == stem.as_deref())
            })?;
        words.get(at + 1).map(|w| w.to_string())
    } else {
        // dbmeter COMMAND SCRIPT ...
        words.first().map(|w| w.to_string()).filter(|w| w != script)
    }
}

/// A prepared statement of a script's connection.
pub(super) struct Stmt {
    pub id: StmtId,
    /// It returns rows (fetched) rather than a count.
    pub read: bool,
    /// BEGIN/COMMIT-like: the transaction state it leaves.
    pub tx: Option<bool>,
    /// Its per-statement latency recorder ([`Shared::recorders`]).
    pub rec: usize,
}

/// A connection a script opened, with its last result: as in sysbench, a
/// result set lives until the connection's next statement.
pub(super) struct Conn {
    pub conn: Connection,
    pub stmts: Vec<Stmt>,
    pub in_tx: bool,
    bulk: String,
    bulk_head: usize,
    /// The last result's values, row after row.
    pub rows: ResultRows,
}

/// A statement parameter bound from Lua, before the statement runs.
#[derive(Clone, Copy)]
pub(super) enum Slot {
    Null,
    Int(i64),
    /// A number that is not an integer, written as Lua writes it.
    Float(f64),
    /// Bytes `start..end` of [`Shared::param_bytes`].
    Str(usize, usize),
}

/// The Rust side of one Lua state. It is reached from the Rust functions
/// of the API and from the FFI functions (`ffi.rs`) through a raw pointer
/// ([`Ptr`]): only ever from the state's own thread, and never while
/// another of them runs (none of them calls back into Lua).
pub(crate) struct Shared {
    pub(super) env: Arc<Env>,
    pub(super) conns: Vec<Option<Conn>>,
    pub counts: Tally,
    pub(super) rng: RandGen,
    /// The database error the running event failed with, if any.
    pub pending: Option<DbError>,
    /// `sysbench.hooks.sql_error_ignorable` said the pending error is ignorable.
    pub forced_ignorable: bool,
    /// Per-statement latencies of this state (a run's users only), and
    /// where each statement's name is.
    recorders: Vec<(String, LatencyRecorder)>,
    recorder_of: HashMap<String, usize>,
    name_buf: String,
    /// The parameters bound for the next `execute`.
    pub(super) params: Vec<Slot>,
    pub(super) param_bytes: Vec<u8>,
    /// Bytes handed to Lua by the FFI functions (copied by Lua at once).
    pub(super) scratch: Vec<u8>,
}

/// The address of a state's [`Shared`].
#[derive(Clone, Copy)]
pub(super) struct Ptr(pub *mut Shared);

// SAFETY: a Lua state and its Shared move between threads together (mlua's
// `send` feature); the pointer is only followed on the state's own thread.
unsafe impl Send for Ptr {}
unsafe impl Sync for Ptr {}

impl Ptr {
    /// The state's Shared.
    ///
    /// # Safety
    /// No other reference to it may be alive: callers are the API's
    /// functions, which Lua calls one at a time, and the engine's side
    /// while the state runs no Lua.
    #[allow(clippy::mut_from_ref)]
    pub(super) unsafe fn get<'a>(self) -> &'a mut Shared {
        // SAFETY: the caller's promise; the pointer is valid while the
        // Lua state (which owns it through `Owner`) lives.
        unsafe { &mut *self.0 }
    }
}

/// Owns a state's Shared: the Lua state's app data, freed with it.
struct Owner(Ptr);

impl Drop for Owner {
    fn drop(&mut self) {
        // SAFETY: made by Box::into_raw in `new_state`, freed only here.
        drop(unsafe { Box::from_raw(self.0.0) });
    }
}

impl Shared {
    /// The recorder of the statement named `name`, made on first use.
    fn recorder(&mut self, name: &str) -> usize {
        if let Some(&i) = self.recorder_of.get(name) {
            return i;
        }
        let key = if self.recorders.len() < MAX_STATEMENTS {
            name.to_string()
        } else {
            OTHER_STATEMENTS.to_string()
        };
        if let Some(&i) = self.recorder_of.get(&key) {
            return i;
        }
        self.recorders
            .push((key.clone(), LatencyRecorder::default()));
        self.recorder_of.insert(key, self.recorders.len() - 1);
        self.recorders.len() - 1
    }

    /// Whether statements are timed now: in the measured phase of a run.
    pub(super) fn timing(&self) -> bool {
        self.env
            .statements
            .as_ref()
            .is_some_and(|s| s.measuring.load(Ordering::Relaxed))
    }

    /// Records a statement's latency under recorder `rec`.
    pub(super) fn note(&mut self, rec: usize, started: Instant) {
        let ns = started.elapsed().as_nanos() as u64;
        if let Some((_, r)) = self.recorders.get_mut(rec) {
            r.record(ns);
        }
    }

    /// Records the latency of the text statement `sql`.
    pub(super) fn note_text(&mut self, sql: &str, started: Instant) {
        let mut name = std::mem::take(&mut self.name_buf);
        statement_name(sql, &mut name);
        let rec = self.recorder(&name);
        self.name_buf = name;
        self.note(rec, started);
    }

    /// Adds this state's per-statement latencies to the run's.
    pub fn merge_statements(&mut self) {
        let Some(st) = &self.env.statements else {
            return;
        };
        let mine = std::mem::take(&mut self.recorders);
        self.recorder_of.clear();
        if let Ok(mut all) = st.merged.lock() {
            for (name, rec) in mine {
                if rec.count() == 0 {
                    continue;
                }
                let n = all.len();
                let key = if all.contains_key(&name) || n < MAX_STATEMENTS {
                    name
                } else {
                    OTHER_STATEMENTS.to_string()
                };
                all.entry(key).or_default().add_recorder(&rec);
            }
        }
    }

    /// The open connections.
    pub fn connections(&mut self) -> impl Iterator<Item = &mut Connection> {
        self.conns.iter_mut().flatten().map(|c| &mut c.conn)
    }

    /// Rolls back the transactions left open by a failed event (not on a
    /// lost connection).
    pub fn rollback_open(&mut self, lost: bool) {
        for c in self.conns.iter_mut().flatten() {
            if c.in_tx && !lost {
                let _ = c.conn.execute("ROLLBACK");
            }
            c.in_tx = false;
        }
    }

    /// Connection `id` (1-based, as the script knows it).
    pub(super) fn conn(&mut self, id: usize) -> Result<&mut Conn, DbError> {
        conn_of(&mut self.conns, id).ok_or_else(|| closed(id))
    }

    /// Counts a statement's outcome as sysbench does: a result set is a
    /// read, changed rows a write, anything else an other.
    pub(super) fn count(&mut self, o: Outcome) {
        match o {
            Outcome::Rows(_) => self.counts.measures[sql::READS] += 1,
            Outcome::Affected(n) if n > 0 => self.counts.measures[sql::WRITES] += 1,
            Outcome::Affected(_) => self.counts.measures[sql::OTHERS] += 1,
        }
    }
}

/// Connection `id` (1-based, as the script knows it), if it is open.
pub(super) fn conn_of(conns: &mut [Option<Conn>], id: usize) -> Option<&mut Conn> {
    conns.get_mut(id.checked_sub(1)?)?.as_mut()
}

/// The error of a call on connection `id` that is not open.
pub(super) fn closed(id: impl std::fmt::Display) -> DbError {
    DbError::other(
        "dbmeter",
        format!("connection {id} is closed (disconnect() was called)"),
    )
}

fn first_word(sql: &str) -> String {
    let s = sql.trim_start_matches(|c: char| c.is_whitespace() || c == '(');
    s.split(|c: char| !c.is_ascii_alphabetic())
        .next()
        .unwrap_or("")
        .to_ascii_uppercase()
}

/// Whether a statement returns rows, by its first word.
pub(super) fn is_read(sql: &str) -> bool {
    matches!(
        first_word(sql).as_str(),
        "SELECT"
            | "SHOW"
            | "WITH"
            | "VALUES"
            | "EXPLAIN"
            | "DESCRIBE"
            | "DESC"
            | "TABLE"
            | "PRAGMA"
    )
}

pub(super) fn tx_change(sql: &str) -> Option<bool> {
    match first_word(sql).as_str() {
        "BEGIN" | "START" => Some(true),
        "COMMIT" | "ROLLBACK" | "END" => Some(false),
        _ => None,
    }
}

fn runtime(msg: impl Into<String>) -> mlua::Error {
    mlua::Error::RuntimeError(msg.into())
}

/// Runs `sql` on a connection, its rows (if any) kept as the connection's
/// last result; returns the outcome and the number of columns.
pub(super) fn run_query(c: &mut Conn, sql: &str) -> Result<(Outcome, usize), DbError> {
    c.rows.clear();
    if is_read(sql) {
        let n = c.conn.query_result(sql, &mut c.rows)?;
        Ok((Outcome::Rows(n), c.rows.width()))
    } else if let Some(tx) = tx_change(sql) {
        c.conn.execute(sql)?;
        c.in_tx = tx;
        // Transaction control counts as "other" (SQLite reports the
        // previous statement's changes for it).
        Ok((Outcome::Affected(0), 0))
    } else {
        Ok((c.conn.execute(sql)?, 0))
    }
}

/// Sends the rows a bulk insert holds, if any: true when it sent them
/// (sysbench counts each multi-row INSERT as a write).
fn flush_bulk(c: &mut Conn) -> Result<bool, DbError> {
    if c.bulk.len() <= c.bulk_head {
        return Ok(false);
    }
    let r = c.conn.execute(&c.bulk);
    c.bulk.truncate(c.bulk_head);
    r.map(|_| true)
}

/// sysbench's `rand.string`: '#' becomes a digit, '@' a letter.
pub(super) fn rand_string(rng: &mut RandGen, template: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.extend(template.iter().map(|&ch| match ch {
        b'#' => b'0' + rng.below_n(10) as u8,
        b'@' => b'a' + rng.below_n(26) as u8,
        c => c,
    }));
}

/// The values a failed call returns to the prelude: errno, SQL state,
/// message and whether it is ignorable. The error stays pending for the
/// engine.
fn failure(lua: &Lua, sh: &mut Shared, e: DbError) -> mlua::Result<MultiValue> {
    let dialect = sh.env.connect.as_ref().map(|c| c.target.dialect());
    let (errno, state) = errno_state(&e, dialect);
    let msg = e.message.clone();
    let ignorable = sh.env.ignore.contains(&e.code);
    let position = e
        .position
        .map_or(LuaValue::Nil, |p| LuaValue::Integer(i64::from(p)));
    sh.pending = Some(e);
    Ok(MultiValue::from_vec(vec![
        LuaValue::Boolean(false),
        LuaValue::Number(errno),
        LuaValue::String(lua.create_string(state)?),
        LuaValue::String(lua.create_string(msg)?),
        LuaValue::Boolean(ignorable),
        position,
    ]))
}

/// sysbench's `sql_errno` and `sql_state` of an error: MySQL's number and
/// SQLSTATE; PostgreSQL's errno is 0 and its code the SQLSTATE.
pub(crate) fn errno_state(e: &DbError, dialect: Option<Dialect>) -> (f64, String) {
    match dialect {
        Some(Dialect::Mysql) => match e.code.parse::<f64>() {
            Ok(n) => (n, e.sqlstate.clone()),
            Err(_) => (0.0, e.code.clone()),
        },
        _ => (0.0, e.code.clone()),
    }
}

fn ok() -> MultiValue {
    MultiValue::from_vec(vec![LuaValue::Boolean(true)])
}

/// The API's functions that are not on the hot path, as Lua functions
/// (the hot ones are FFI functions: `ffi.rs`).
fn api_table(lua: &Lua, p: Ptr) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.set(
        "user_position",
        lua.create_function(|lua, ()| Ok(user_position(lua)))?,
    )?;
    // SAFETY (every `p.get()` below): Lua calls these one at a time, on
    // the state's thread, and none of them calls back into Lua.
    t.set(
        "connect",
        lua.create_function(move |lua, ()| {
            let sh = unsafe { p.get() };
            let Some(opts) = sh.env.connect.clone() else {
                // Loading learns what the script declares, without the
                // command line's database: a body that connects runs
                // again once the command has it (`Script::load`).
                return Err(runtime(NEEDS_DB));
            };
            let nth = sh.conns.len();
            let conn = match Connection::connect_nth(&opts, nth) {
                Ok(c) => c,
                Err(e) => {
                    // What sysbench's drivers log about a failed connection.
                    // A host name that does not resolve, as the client
                    // libraries say it.
                    let unresolved = e.message.contains("failed to lookup address");
                    let lines = match &opts.target {
                        dbmeter_db::Target::Mysql(t) => {
                            let host = t.host(nth);
                            let (code, msg) = if unresolved {
                                ("2005".to_string(), format!("Unknown MySQL server host '{host}' (0)"))
                            } else {
                                (e.code.clone(), e.message.clone())
                            };
                            vec![
                                format!(
                                    "unable to connect to MySQL server on host '{host}', port {}, aborting...",
                                    t.port(nth)
                                ),
                                format!("error {code}: {msg}"),
                            ]
                        }
                        dbmeter_db::Target::Postgres(t) => {
                            let msg = if unresolved {
                                format!(
                                    "could not translate host name \"{}\" to address: Name or service not known",
                                    t.host(nth)
                                )
                            } else {
                                e.message.clone()
                            };
                            vec![format!("Connection to database failed: {msg}\n")]
                        }
                        _ => vec![e.message],
                    };
                    return Ok(LuaValue::Table(lua.create_sequence_from(lines)?));
                }
            };
            sh.conns.push(Some(Conn {
                conn,
                stmts: Vec::new(),
                in_tx: false,
                bulk: String::new(),
                bulk_head: 0,
                rows: ResultRows::default(),
            }));
            Ok(LuaValue::Integer(sh.conns.len() as i64))
        })?,
    )?;
    t.set(
        "driver_name",
        lua.create_function(move |_, ()| {
            let sh = unsafe { p.get() };
            Ok(match sh.env.connect.as_ref().map(|c| c.target.dialect()) {
                Some(Dialect::Mysql) => "mysql",
                Some(Dialect::Postgres) => "pgsql",
                _ => "sqlite",
            })
        })?,
    )?;
    t.set(
        "disconnect",
        lua.create_function(move |_, id: usize| {
            let sh = unsafe { p.get() };
            // Whether it was open.
            Ok(sh
                .conns
                .get_mut(id.wrapping_sub(1))
                .and_then(Option::take)
                .is_some())
        })?,
    )?;
    t.set(
        "reconnect",
        lua.create_function(move |_, id: usize| {
            let sh = unsafe { p.get() };
            let c = sh.conn(id).map_err(|e| runtime(e.message))?;
            c.in_tx = false;
            c.rows.clear();
            c.conn.reconnect().map_err(|e| runtime(e.message))?;
            sh.env.reconnects.fetch_add(1, Ordering::Relaxed);
            Ok(())
        })?,
    )?;
    t.set(
        "prepare",
        lua.create_function(move |lua, (id, sql): (usize, mlua::LuaString)| {
            let sh = unsafe { p.get() };
            let sql = sql.to_str()?.to_string();
            let mut name = String::new();
            statement_name(&sql, &mut name);
            let rec = sh.recorder(&name);
            let c = match sh.conn(id) {
                Ok(c) => c,
                Err(e) => return failure(lua, sh, e),
            };
            let id = c.conn.register(&sql);
            // Prepared now, as sysbench does: a statement the server
            // refuses fails here.
            if let Err(e) = c.conn.prepare_now(id) {
                return failure(lua, sh, e);
            }
            c.stmts.push(Stmt {
                id,
                read: is_read(&sql),
                tx: tx_change(&sql),
                rec,
            });
            Ok(MultiValue::from_vec(vec![
                LuaValue::Boolean(true),
                LuaValue::Integer(c.stmts.len() as i64),
            ]))
        })?,
    )?;
    t.set(
        "last_error",
        lua.create_function(move |lua, ()| {
            let sh = unsafe { p.get() };
            match sh.pending.take() {
                Some(e) => failure(lua, sh, e),
                None => failure(lua, sh, DbError::other("dbmeter", "unknown error")),
            }
        })?,
    )?;
    t.set(
        "bulk_init",
        lua.create_function(move |_, (id, sql): (usize, mlua::LuaString)| {
            let sh = unsafe { p.get() };
            let c = sh.conn(id).map_err(|e| runtime(e.message))?;
            c.bulk.clear();
            c.bulk.push_str(&sql.to_str()?);
            c.bulk_head = c.bulk.len();
            Ok(())
        })?,
    )?;
    t.set(
        "bulk_next",
        lua.create_function(move |lua, (id, row): (usize, mlua::LuaString)| {
            let sh = unsafe { p.get() };
            let c = match sh.conn(id) {
                Ok(c) => c,
                Err(e) => return failure(lua, sh, e),
            };
            if c.bulk_head == 0 {
                // The prelude says it as sysbench does.
                return Ok(MultiValue::from_vec(vec![LuaValue::Nil]));
            }
            if c.bulk.len() > c.bulk_head {
                c.bulk.push(',');
            }
            c.bulk.push_str(&row.to_str()?);
            let r = if c.bulk.len() >= BULK_FLUSH_BYTES {
                flush_bulk(c)
            } else {
                Ok(false)
            };
            match r {
                Ok(sent) => {
                    sh.counts.measures[sql::WRITES] += u64::from(sent);
                    Ok(ok())
                }
                Err(e) => failure(lua, sh, e),
            }
        })?,
    )?;
    t.set(
        "bulk_done",
        lua.create_function(move |lua, id: usize| {
            let sh = unsafe { p.get() };
            let c = match sh.conn(id) {
                Ok(c) => c,
                Err(e) => return failure(lua, sh, e),
            };
            let r = flush_bulk(c);
            c.bulk_head = 0;
            c.bulk.clear();
            match r {
                Ok(sent) => {
                    sh.counts.measures[sql::WRITES] += u64::from(sent);
                    Ok(ok())
                }
                Err(e) => failure(lua, sh, e),
            }
        })?,
    )?;
    t.set(
        "mark_ignorable",
        lua.create_function(move |_, ()| {
            unsafe { p.get() }.forced_ignorable = true;
            Ok(())
        })?,
    )?;
    t.set(
        "more_events",
        lua.create_function(move |_, ()| {
            let env = &unsafe { p.get() }.env;
            if env.stopping.load(Ordering::Relaxed) {
                return Ok(false);
            }
            let start = *env.loop_start.get_or_init(Instant::now);
            let time = env.num_opt("time");
            if time > 0.0 && start.elapsed().as_secs_f64() >= time {
                return Ok(false);
            }
            let events = env.num_opt("events");
            let n = env.loop_events.fetch_add(1, Ordering::Relaxed);
            Ok(events <= 0.0 || (n as f64) < events)
        })?,
    )?;
    t.set(
        "usleep",
        lua.create_function(|_, us: f64| {
            if us > 0.0 {
                std::thread::sleep(std::time::Duration::from_micros(us as u64));
            }
            Ok(0)
        })?,
    )?;
    Ok(t)
}

fn opt_table(lua: &Lua, opts: &[(String, OptVal)]) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    for (name, v) in opts {
        let lv = match v {
            OptVal::Bool(b) => LuaValue::Boolean(*b),
            OptVal::Num(x) => LuaValue::Number(*x),
            OptVal::Str(s) => LuaValue::String(lua.create_string(s)?),
            OptVal::List(l) => {
                LuaValue::Table(lua.create_sequence_from(l.iter().map(String::as_str))?)
            }
        };
        t.set(name.as_str(), lv)?;
    }
    Ok(t)
}

/// The error that stops a script's body when it connects while it is
/// loaded (before the command line's database is known).
pub(crate) const NEEDS_DB: &str = "dbmeter: the script connects while it is loaded";

/// The first line of a Lua error: "file:line: message".
pub(crate) fn lua_message(e: &mlua::Error) -> String {
    let text = match e {
        mlua::Error::CallbackError { cause, .. } => return lua_message(cause),
        mlua::Error::RuntimeError(m) | mlua::Error::SyntaxError { message: m, .. } => m.clone(),
        other => other.to_string(),
    };
    text.lines().next().unwrap_or("").to_string()
}

/// A new Lua state for `command` as thread `tid`, with the API and the
/// script loaded (its top level run).
pub(crate) fn new_state(env: &Arc<Env>, command: &str, tid: usize) -> Result<Lua, String> {
    // SAFETY: the FFI library is loaded because sysbench scripts use it;
    // a script is the user's own code, trusted as sysbench trusts it.
    let lua = unsafe {
        Lua::unsafe_new_with(
            StdLib::ALL_SAFE | StdLib::FFI | StdLib::JIT,
            LuaOptions::default(),
        )
    };
    let shared = Box::new(Shared {
        env: env.clone(),
        conns: Vec::new(),
        counts: Tally::default(),
        rng: RandGen::new(derive_seed(env.seed, tid as u64), env.rand.clone()),
        pending: None,
        forced_ignorable: false,
        recorders: Vec::new(),
        recorder_of: HashMap::new(),
        name_buf: String::new(),
        params: Vec::new(),
        param_bytes: Vec::new(),
        scratch: Vec::new(),
    });
    let p = Ptr(Box::into_raw(shared));
    lua.set_app_data(Owner(p));
    let setup = || -> mlua::Result<()> {
        let api = api_table(&lua, p)?;
        let info = lua.create_table()?;
        info.set("ctx", mlua::LightUserData(p.0.cast()))?;
        info.set("fns", super::ffi::table(&lua)?)?;
        if !command.is_empty() {
            info.set("command", command)?;
        }
        info.set("tid", tid)?;
        info.set("legacy", env.legacy)?;
        info.set("export_globals", env.export_globals)?;
        let argv_t = lua.create_table()?;
        for (i, a) in argv().into_iter().enumerate() {
            argv_t.raw_set(i, a)?;
        }
        info.set("argv", argv_t)?;
        let script = env.script.to_string_lossy().to_string();
        let dir = env
            .script
            .parent()
            .map(|p| p.to_string_lossy().to_string())
            .filter(|d| !d.is_empty())
            .unwrap_or_else(|| ".".to_string());
        info.set("script", script)?;
        info.set("script_dir", dir)?;
        info.set("opt", opt_table(&lua, &env.opts)?)?;
        let internal: Table = lua.load(PRELUDE).set_name(PRELUDE_NAME).call((api, info))?;
        lua.set_named_registry_value(INTERNAL, internal)?;
        Ok(())
    };
    setup().map_err(|e| format!("dbmeter's Lua API failed to load: {}", lua_message(&e)))?;
    lua.load(env.source.as_str())
        .set_name(format!("@{}", env.script.display()))
        .exec()
        .map_err(|e| lua_message(&e))?;
    Ok(lua)
}

/// Makes a state that loaded the script ready for `env`, as thread `tid`
/// running `command`: its options (`sysbench.opt`, and the globals of a
/// script that declares none), command and random numbers.
pub(crate) fn refresh(lua: &Lua, env: &Arc<Env>, command: &str, tid: usize) -> Result<(), String> {
    with_shared(lua, |s| {
        s.env = env.clone();
        s.rng = RandGen::new(derive_seed(env.seed, tid as u64), env.rand.clone());
    });
    let opts = opt_table(lua, &env.opts).map_err(|e| lua_message(&e))?;
    internal_fn(lua, "set_options")?
        .call::<()>((opts, command, env.export_globals, env.legacy))
        .map_err(|e| lua_message(&e))
}

/// The chunk name of the prelude, as Lua reports it in positions.
const PRELUDE_NAME: &str = "=dbmeter-prelude";

/// "FILE:LINE: " of the innermost call on the stack that is in the user's
/// code (the script or a module it loaded), not in the prelude nor in a C
/// function; "" when there is none. An error raised in the prelude on the
/// script's behalf (a failed statement) then names the script's line,
/// however deep in the prelude it was found.
fn user_position(lua: &Lua) -> String {
    for level in 0.. {
        let found = lua.inspect_stack(level, |d| {
            let src = d.source();
            let own = src.what == "C"
                || src
                    .source
                    .as_deref()
                    .is_none_or(|s| s == PRELUDE_NAME || s == "=(tail call)");
            if own {
                return None;
            }
            let file = src.short_src.as_deref().unwrap_or("?").to_string();
            Some(match d.current_line() {
                Some(line) => format!("{file}:{line}: "),
                None => format!("{file}: "),
            })
        });
        match found {
            None => return String::new(),
            Some(Some(at)) => return at,
            Some(None) => {}
        }
    }
    String::new()
}

/// Where a state keeps the prelude's own functions (not the script's).
const INTERNAL: &str = "dbmeter.internal";

/// One of the prelude's own functions (`internal` in prelude.lua).
pub(crate) fn internal_fn(lua: &Lua, name: &str) -> Result<Function, String> {
    lua.named_registry_value::<Table>(INTERNAL)
        .and_then(|t| t.get::<Function>(name))
        .map_err(|e| format!("dbmeter's Lua API lacks {name}: {}", lua_message(&e)))
}

/// A global function of the script, if it defines one.
pub(crate) fn global_fn(lua: &Lua, name: &str) -> Option<Function> {
    lua.globals()
        .raw_get::<Option<Function>>(name)
        .ok()
        .flatten()
}

/// Calls a function, turning a Lua error into its message.
pub(crate) fn call(f: &Function, args: impl mlua::IntoLuaMulti) -> Result<LuaValue, String> {
    f.call::<LuaValue>(args).map_err(|e| lua_message(&e))
}

/// Takes the counts of the event that just ran.
pub(crate) fn take_counts(lua: &Lua) -> Tally {
    with_shared(lua, |s| std::mem::take(&mut s.counts)).unwrap_or_default()
}

/// The address of the state's Rust side, for a user that reaches it on
/// every event.
pub(super) fn shared_ptr(lua: &Lua) -> Option<Ptr> {
    Some(lua.app_data_ref::<Owner>()?.0)
}

/// Runs `f` on the state's Rust side (never while the state runs Lua).
pub(crate) fn with_shared<R>(lua: &Lua, f: impl FnOnce(&mut Shared) -> R) -> Option<R> {
    let p = lua.app_data_ref::<Owner>()?.0;
    // SAFETY: the state runs no Lua now, so no API function holds it.
    Some(f(unsafe { p.get() }))
}
