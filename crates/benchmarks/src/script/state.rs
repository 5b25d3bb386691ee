//! One Lua state with dbmeter's sysbench API: the Rust half of the API
//! (connections, statements, random numbers, counters) and the Lua half
//! (`prelude.lua`), then the script itself.

use crate::random::{RandGen, RandSpec, RandType, derive_seed};
use dbmeter_db::{ConnectOptions, Connection, DbError, Dialect, Outcome, Param, StmtId, Value};
use dbmeter_engine::Tally;
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
    Nil,
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
    /// A sysbench 0.5 script (options exported as global variables).
    pub legacy: bool,
    pub script: PathBuf,
    pub source: String,
    pub connect: Option<ConnectOptions>,
    pub rand: RandSpec,
    pub seed: u64,
    pub opts: Vec<(String, OptVal)>,
    pub unique: AtomicU32,
}

/// A connection a script opened.
struct Conn {
    conn: Connection,
    /// Prepared statements: id, whether it reads, its transaction change
    /// and its kind name.
    stmts: Vec<(StmtId, bool, Option<bool>, Arc<str>)>,
    in_tx: bool,
    bulk: String,
    bulk_head: usize,
}

/// The Rust side of one Lua state (its app data).
pub(crate) struct Shared {
    env: Arc<Env>,
    conns: Vec<Option<Conn>>,
    pub counts: Tally,
    rng: RandGen,
    /// The database error the running event failed with, if any.
    pub pending: Option<DbError>,
    /// `sysbench.hooks.sql_error_ignorable` said the pending error is ignorable.
    pub forced_ignorable: bool,
    values: Vec<Option<Value>>,
    /// This state's per-statement latencies (a run's users only).
    stmt_times: HashMap<String, LatencyRecorder>,
    name_buf: String,
}

impl Shared {
    /// Records a statement's latency, in the measured phase of a run.
    fn note(&mut self, sql: &str, prepared: Option<&str>, started: Instant) {
        let Some(st) = &self.env.statements else {
            return;
        };
        if !st.measuring.load(Ordering::Relaxed) {
            return;
        }
        let ns = started.elapsed().as_nanos() as u64;
        let name = match prepared {
            Some(n) => n,
            None => {
                statement_name(sql, &mut self.name_buf);
                self.name_buf.as_str()
            }
        };
        if let Some(r) = self.stmt_times.get_mut(name) {
            r.record(ns);
            return;
        }
        let key = if self.stmt_times.len() < MAX_STATEMENTS {
            name.to_string()
        } else {
            OTHER_STATEMENTS.to_string()
        };
        self.stmt_times.entry(key).or_default().record(ns);
    }

    /// Adds this state's per-statement latencies to the run's.
    pub fn merge_statements(&mut self) {
        let Some(st) = &self.env.statements else {
            return;
        };
        let mine = std::mem::take(&mut self.stmt_times);
        if let Ok(mut all) = st.merged.lock() {
            for (name, rec) in mine {
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
}

fn first_word(sql: &str) -> String {
    let s = sql.trim_start_matches(|c: char| c.is_whitespace() || c == '(');
    s.split(|c: char| !c.is_ascii_alphabetic())
        .next()
        .unwrap_or("")
        .to_ascii_uppercase()
}

/// Whether a statement returns rows, by its first word.
fn is_read(sql: &str) -> bool {
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

fn tx_change(sql: &str) -> Option<bool> {
    match first_word(sql).as_str() {
        "BEGIN" | "START" => Some(true),
        "COMMIT" | "ROLLBACK" | "END" => Some(false),
        _ => None,
    }
}

fn runtime(msg: impl Into<String>) -> mlua::Error {
    mlua::Error::RuntimeError(msg.into())
}

fn shared(lua: &Lua) -> mlua::Result<mlua::AppDataRefMut<'_, Shared>> {
    lua.app_data_mut::<Shared>()
        .ok_or_else(|| runtime("dbmeter: the Lua state lost its data"))
}

fn conn_mut(sh: &mut Shared, id: usize) -> mlua::Result<&mut Conn> {
    sh.conns
        .get_mut(id.wrapping_sub(1))
        .and_then(Option::as_mut)
        .ok_or_else(|| runtime("the connection is closed (disconnect() was called)"))
}

/// The values `query`/`execute` return to the prelude: success with a
/// result (`true, nrows, nfields, values`), or the error
/// (`false, errno, state, message, ignorable`).
fn db_result(
    lua: &Lua,
    sh: &mut Shared,
    r: Result<(Outcome, Option<usize>), DbError>,
) -> mlua::Result<MultiValue> {
    match r {
        Ok((Outcome::Rows(n), Some(width))) => {
            sh.counts.reads += 1;
            let vals = lua.create_table_with_capacity(sh.values.len(), 0)?;
            for (i, v) in sh.values.drain(..).enumerate() {
                let lv = match v {
                    None => LuaValue::Nil,
                    Some(Value::Int(x)) => LuaValue::String(lua.create_string(x.to_string())?),
                    Some(Value::Text(t)) => LuaValue::String(lua.create_string(t)?),
                    Some(Value::Bytes(b)) => LuaValue::String(lua.create_string(&*b)?),
                };
                vals.raw_set(i + 1, lv)?;
            }
            Ok(MultiValue::from_vec(vec![
                LuaValue::Boolean(true),
                LuaValue::Number(n as f64),
                LuaValue::Number(width as f64),
                LuaValue::Table(vals),
            ]))
        }
        Ok((o, _)) => {
            let n = match o {
                Outcome::Rows(n) => {
                    sh.counts.reads += 1;
                    n
                }
                Outcome::Affected(n) if n > 0 => {
                    sh.counts.writes += 1;
                    n
                }
                Outcome::Affected(n) => {
                    sh.counts.others += 1;
                    n
                }
            };
            Ok(MultiValue::from_vec(vec![
                LuaValue::Boolean(true),
                LuaValue::Number(n as f64),
                LuaValue::Number(0.0),
            ]))
        }
        Err(e) => {
            let ignorable = false;
            let errno = e.code.parse::<f64>().unwrap_or(0.0);
            let state = if e.code.parse::<f64>().is_ok() {
                String::new()
            } else {
                e.code.clone()
            };
            let msg = e.message.clone();
            sh.pending = Some(e);
            Ok(MultiValue::from_vec(vec![
                LuaValue::Boolean(false),
                LuaValue::Number(errno),
                LuaValue::String(lua.create_string(state)?),
                LuaValue::String(lua.create_string(msg)?),
                LuaValue::Boolean(ignorable),
            ]))
        }
    }
}

/// Runs `sql` on a connection: rows fetched for a reading statement,
/// counted either way.
fn run_query(
    c: &mut Conn,
    values: &mut Vec<Option<Value>>,
    sql: &str,
) -> Result<(Outcome, Option<usize>), DbError> {
    values.clear();
    let r = if is_read(sql) {
        let n = c.conn.query_values(sql, values)?;
        let width = if n > 0 { values.len() / n as usize } else { 0 };
        (Outcome::Rows(n), Some(width))
    } else if let Some(tx) = tx_change(sql) {
        c.conn.execute(sql)?;
        c.in_tx = tx;
        // Transaction control counts as "other" (SQLite reports the
        // previous statement's changes for it).
        (Outcome::Affected(0), None)
    } else {
        (c.conn.execute(sql)?, None)
    };
    Ok(r)
}

fn flush_bulk(c: &mut Conn) -> Result<(Outcome, Option<usize>), DbError> {
    if c.bulk.len() <= c.bulk_head {
        return Ok((Outcome::Affected(0), None));
    }
    let r = c.conn.execute(&c.bulk);
    c.bulk.truncate(c.bulk_head);
    Ok((r?, None))
}

fn rand_fn(lua: &Lua, kind: Option<RandType>) -> mlua::Result<Function> {
    lua.create_function(move |lua, (a, b): (f64, f64)| {
        let mut sh = shared(lua)?;
        let (a, b) = (a as i64, b as i64);
        Ok(match kind {
            None => sh.rng.uniform(a, b),
            Some(k) => sh.rng.draw(k, a, b),
        } as f64)
    })
}

/// sysbench's `rand.string`: '#' becomes a digit, '@' a letter.
fn rand_string(rng: &mut RandGen, template: &str) -> String {
    template
        .chars()
        .map(|ch| match ch {
            '#' => (b'0' + rng.below_n(10) as u8) as char,
            '@' => (b'a' + rng.below_n(26) as u8) as char,
            c => c,
        })
        .collect()
}

fn api_table(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.set(
        "connect",
        lua.create_function(|lua, ()| {
            let mut sh = shared(lua)?;
            let Some(opts) = sh.env.connect.clone() else {
                return Err(runtime(
                    "sysbench.sql.driver():connect() has no database to connect to while the script is loaded",
                ));
            };
            let nth = sh.conns.len();
            let conn = Connection::connect_nth(&opts, nth).map_err(|e| runtime(e.message))?;
            sh.conns.push(Some(Conn {
                conn,
                stmts: Vec::new(),
                in_tx: false,
                bulk: String::new(),
                bulk_head: 0,
            }));
            Ok(sh.conns.len())
        })?,
    )?;
    t.set(
        "driver_name",
        lua.create_function(|lua, ()| {
            let sh = shared(lua)?;
            Ok(match sh.env.connect.as_ref().map(|c| c.target.dialect()) {
                Some(Dialect::Mysql) => "mysql",
                Some(Dialect::Postgres) => "pgsql",
                _ => "sqlite",
            })
        })?,
    )?;
    t.set(
        "disconnect",
        lua.create_function(|lua, id: usize| {
            let mut sh = shared(lua)?;
            if let Some(slot) = sh.conns.get_mut(id.wrapping_sub(1)) {
                *slot = None;
            }
            Ok(())
        })?,
    )?;
    t.set(
        "reconnect",
        lua.create_function(|lua, id: usize| {
            let mut sh = shared(lua)?;
            let c = conn_mut(&mut sh, id)?;
            c.in_tx = false;
            c.conn.reconnect().map_err(|e| runtime(e.message))
        })?,
    )?;
    t.set(
        "query",
        lua.create_function(|lua, (id, sql): (usize, String)| {
            let mut sh = shared(lua)?;
            let sh = &mut *sh;
            let mut values = std::mem::take(&mut sh.values);
            let started = Instant::now();
            let r = conn_mut(sh, id).map(|c| run_query(c, &mut values, &sql))?;
            sh.values = values;
            if r.is_ok() {
                sh.note(&sql, None, started);
            }
            db_result(lua, sh, r)
        })?,
    )?;
    t.set(
        "prepare",
        lua.create_function(|lua, (id, sql): (usize, String)| {
            let mut sh = shared(lua)?;
            let mut name = String::new();
            statement_name(&sql, &mut name);
            let c = conn_mut(&mut sh, id)?;
            let stmt = c.conn.register(&sql);
            c.stmts
                .push((stmt, is_read(&sql), tx_change(&sql), Arc::from(name)));
            Ok(c.stmts.len())
        })?,
    )?;
    t.set(
        "execute",
        lua.create_function(|lua, (id, sid, params, n): (usize, usize, Table, usize)| {
            let mut sh = shared(lua)?;
            let sh = &mut *sh;
            let mut owned: Vec<Value> = Vec::with_capacity(n);
            for i in 1..=n {
                match params.raw_get::<LuaValue>(i)? {
                    LuaValue::Integer(x) => owned.push(Value::Int(x)),
                    LuaValue::Number(x) if x.fract() == 0.0 && x.abs() < 9.0e15 => {
                        owned.push(Value::Int(x as i64))
                    }
                    LuaValue::Number(x) => owned.push(Value::Text(x.to_string())),
                    LuaValue::String(s) => owned.push(Value::Text(s.to_str()?.to_string())),
                    LuaValue::Boolean(b) => owned.push(Value::Int(i64::from(b))),
                    other => {
                        return Err(runtime(format!(
                            "statement parameter {i}: dbmeter cannot bind a {}",
                            other.type_name()
                        )));
                    }
                }
            }
            let p: Vec<Param<'_>> = owned.iter().map(Value::as_param).collect();
            let mut values = std::mem::take(&mut sh.values);
            values.clear();
            let c = conn_mut(sh, id)?;
            let Some((stmt, read, tx, name)) = c.stmts.get(sid.wrapping_sub(1)).cloned() else {
                return Err(runtime("unknown prepared statement"));
            };
            let started = Instant::now();
            let r = if read {
                c.conn.fetch(stmt, &p, &mut values).map(|n| {
                    let width = if n > 0 { values.len() / n as usize } else { 0 };
                    (Outcome::Rows(n), Some(width))
                })
            } else if let Some(tx) = tx {
                c.conn.run(stmt, &p).map(|_| {
                    c.in_tx = tx;
                    (Outcome::Affected(0), None)
                })
            } else {
                c.conn.run(stmt, &p).map(|o| (o, None))
            };
            sh.values = values;
            if r.is_ok() {
                sh.note("", Some(&name), started);
            }
            db_result(lua, sh, r)
        })?,
    )?;
    t.set(
        "bulk_init",
        lua.create_function(|lua, (id, sql): (usize, String)| {
            let mut sh = shared(lua)?;
            let c = conn_mut(&mut sh, id)?;
            c.bulk.clear();
            c.bulk.push_str(&sql);
            c.bulk_head = c.bulk.len();
            Ok(())
        })?,
    )?;
    t.set(
        "bulk_next",
        lua.create_function(|lua, (id, row): (usize, String)| {
            let mut sh = shared(lua)?;
            let sh = &mut *sh;
            let c = conn_mut(sh, id)?;
            if c.bulk_head == 0 {
                return Err(runtime("bulk_insert_next() before bulk_insert_init()"));
            }
            if c.bulk.len() > c.bulk_head {
                c.bulk.push(',');
            }
            c.bulk.push_str(&row);
            let r = if c.bulk.len() >= BULK_FLUSH_BYTES {
                flush_bulk(c)
            } else {
                Ok((Outcome::Affected(0), None))
            };
            match r {
                Ok(_) => Ok(MultiValue::from_vec(vec![LuaValue::Boolean(true)])),
                Err(e) => db_result(lua, sh, Err(e)),
            }
        })?,
    )?;
    t.set(
        "bulk_done",
        lua.create_function(|lua, id: usize| {
            let mut sh = shared(lua)?;
            let sh = &mut *sh;
            let c = conn_mut(sh, id)?;
            let r = flush_bulk(c);
            c.bulk_head = 0;
            c.bulk.clear();
            match r {
                Ok(_) => Ok(MultiValue::from_vec(vec![LuaValue::Boolean(true)])),
                Err(e) => db_result(lua, sh, Err(e)),
            }
        })?,
    )?;
    t.set(
        "mark_ignorable",
        lua.create_function(|lua, ()| {
            shared(lua)?.forced_ignorable = true;
            Ok(())
        })?,
    )?;
    t.set(
        "counter_inc",
        lua.create_function(|lua, (_tid, kind): (LuaValue, f64)| {
            let mut sh = shared(lua)?;
            match kind as i64 {
                0 => sh.counts.others += 1,
                1 => sh.counts.reads += 1,
                2 => sh.counts.writes += 1,
                // Events, errors, reconnects and bytes are dbmeter's own counts.
                _ => {}
            }
            Ok(())
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
    t.set("rand_uniform", rand_fn(lua, None)?)?;
    // rand.default follows --rand-type.
    t.set(
        "rand_default",
        lua.create_function(|lua, (a, b): (f64, f64)| {
            Ok(shared(lua)?.rng.default_dist(a as i64, b as i64) as f64)
        })?,
    )?;
    t.set("rand_gaussian", rand_fn(lua, Some(RandType::Gaussian))?)?;
    t.set("rand_special", rand_fn(lua, Some(RandType::Special))?)?;
    t.set("rand_pareto", rand_fn(lua, Some(RandType::Pareto))?)?;
    t.set("rand_zipfian", rand_fn(lua, Some(RandType::Zipfian))?)?;
    t.set(
        "rand_uniform_double",
        lua.create_function(|lua, ()| Ok(shared(lua)?.rng.unit_f64()))?,
    )?;
    t.set(
        "rand_uniform_uint64",
        lua.create_function(|lua, ()| {
            let mut sh = shared(lua)?;
            let hi = u64::from(sh.rng.next_u32());
            let lo = u64::from(sh.rng.next_u32());
            // A Lua number holds 53 bits exactly.
            Ok((((hi << 32) | lo) >> 11) as f64)
        })?,
    )?;
    t.set(
        "rand_unique",
        lua.create_function(|lua, ()| {
            let sh = shared(lua)?;
            // A bijective mix of a run-wide counter: unique over 2^32 calls.
            let mut x = sh.env.unique.fetch_add(1, Ordering::Relaxed);
            x ^= x >> 16;
            x = x.wrapping_mul(0x7feb_352d);
            x ^= x >> 15;
            x = x.wrapping_mul(0x846c_a68b);
            x ^= x >> 16;
            Ok(f64::from(x))
        })?,
    )?;
    t.set(
        "rand_string",
        lua.create_function(|lua, template: String| {
            let mut sh = shared(lua)?;
            Ok(rand_string(&mut sh.rng, &template))
        })?,
    )?;
    t.set(
        "rand_varstring",
        lua.create_function(|lua, (min, max): (f64, f64)| {
            let mut sh = shared(lua)?;
            let len = sh.rng.uniform(min as i64, max as i64).max(0) as usize;
            // Characters between '0' and 'z', as sysbench draws them.
            Ok((0..len)
                .map(|_| (b'0' + sh.rng.below_n(u64::from(b'z' - b'0') + 1) as u8) as char)
                .collect::<String>())
        })?,
    )?;
    Ok(t)
}

fn opt_table(lua: &Lua, opts: &[(String, OptVal)]) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    for (name, v) in opts {
        let lv = match v {
            OptVal::Nil => continue,
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
    lua.set_app_data(Shared {
        env: env.clone(),
        conns: Vec::new(),
        counts: Tally::default(),
        rng: RandGen::new(derive_seed(env.seed, tid as u64), env.rand.clone()),
        pending: None,
        forced_ignorable: false,
        values: Vec::new(),
        stmt_times: HashMap::new(),
        name_buf: String::new(),
    });
    let setup = || -> mlua::Result<()> {
        let api = api_table(&lua)?;
        let info = lua.create_table()?;
        info.set("command", command)?;
        info.set("tid", tid)?;
        info.set("legacy", env.legacy)?;
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
        lua.load(PRELUDE)
            .set_name("=dbmeter-prelude")
            .call::<()>((api, info))?;
        Ok(())
    };
    setup().map_err(|e| format!("dbmeter's Lua API failed to load: {}", lua_message(&e)))?;
    lua.load(env.source.as_str())
        .set_name(format!("@{}", env.script.display()))
        .exec()
        .map_err(|e| lua_message(&e))?;
    Ok(lua)
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
    lua.app_data_mut::<Shared>()
        .map(|mut s| std::mem::take(&mut s.counts))
        .unwrap_or_default()
}

/// Runs `f` on the state's Rust side.
pub(crate) fn with_shared<R>(lua: &Lua, f: impl FnOnce(&mut Shared) -> R) -> Option<R> {
    lua.app_data_mut::<Shared>().map(|mut s| f(&mut s))
}
