//! The API's hot functions: random numbers, statements and their rows.
//! The prelude calls them through LuaJIT's FFI (as sysbench calls its own C
//! functions), which the JIT compiles into a plain call: a Lua function
//! made by mlua costs about a thousand instructions a call, these a few.
//!
//! Each takes the state's [`Shared`] as its first argument and never calls
//! back into Lua. A failed statement returns -1 and leaves its error
//! pending in `Shared`; the prelude then asks for it (`last_error`) and
//! raises it as a Lua error.

use super::state::{Conn, Ptr, Shared, Slot, closed, conn_of, rand_string, run_query};
use crate::random::RandType;
use dbmeter_db::{DbError, Outcome, Param, Value};
use dbmeter_stats::measure::sql;
use mlua::{LightUserData, Lua, Table};
use std::ffi::c_void;
use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// Parameters bound without a heap allocation, up to this many.
const STACK_PARAMS: usize = 32;

/// Runs `f` on the state, turning a panic into a pending error (a panic
/// must not unwind into LuaJIT's frames).
fn guarded(p: *mut Shared, what: &str, f: impl FnOnce(&mut Shared) -> i32) -> i32 {
    // SAFETY: called by Lua on the state's thread, with the pointer the
    // prelude was given; nothing else holds the Shared meanwhile.
    let sh = unsafe { Ptr(p).get() };
    match catch_unwind(AssertUnwindSafe(|| f(&mut *sh))) {
        Ok(r) => r,
        Err(_) => {
            sh.pending = Some(DbError::other(
                "dbmeter",
                format!("internal error in {what} (please report it)"),
            ));
            -1
        }
    }
}

/// `kind`: 0 default (--rand-type), 1 uniform, 2 gaussian, 3 special,
/// 4 pareto, 5 zipfian.
unsafe extern "C" fn rand(p: *mut Shared, kind: i32, a: f64, b: f64) -> f64 {
    // SAFETY: as in `guarded`.
    let sh = unsafe { Ptr(p).get() };
    let (a, b) = (a as i64, b as i64);
    let kind = match kind {
        0 => return sh.rng.default_dist(a, b) as f64,
        1 => return sh.rng.uniform(a, b) as f64,
        2 => RandType::Gaussian,
        3 => RandType::Special,
        4 => RandType::Pareto,
        _ => RandType::Zipfian,
    };
    sh.rng.draw(kind, a, b) as f64
}

unsafe extern "C" fn rand_double(p: *mut Shared) -> f64 {
    // SAFETY: as in `guarded`.
    unsafe { Ptr(p).get() }.rng.unit_f64()
}

unsafe extern "C" fn rand_uint64(p: *mut Shared) -> f64 {
    // SAFETY: as in `guarded`.
    let sh = unsafe { Ptr(p).get() };
    let hi = u64::from(sh.rng.next_u32());
    let lo = u64::from(sh.rng.next_u32());
    // A Lua number holds 53 bits exactly.
    (((hi << 32) | lo) >> 11) as f64
}

unsafe extern "C" fn rand_unique(p: *mut Shared) -> f64 {
    // SAFETY: as in `guarded`.
    let sh = unsafe { Ptr(p).get() };
    // A bijective mix of a run-wide counter: unique over 2^32 calls.
    let mut x = sh.env.unique.fetch_add(1, Ordering::Relaxed);
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846c_a68b);
    x ^= x >> 16;
    f64::from(x)
}

/// `rand.string(template)`: the result stays valid until the next call.
unsafe extern "C" fn rand_str(
    p: *mut Shared,
    template: *const u8,
    len: usize,
    out_len: *mut usize,
) -> *const u8 {
    // SAFETY: as in `guarded`; LuaJIT passes a Lua string's bytes and
    // length, and a size_t[1] of the prelude's.
    let sh = unsafe { Ptr(p).get() };
    let template = if len == 0 {
        &[][..]
    } else {
        unsafe { std::slice::from_raw_parts(template, len) }
    };
    rand_string(&mut sh.rng, template, &mut sh.scratch);
    unsafe { *out_len = sh.scratch.len() };
    sh.scratch.as_ptr()
}

/// `rand.varstring(min, max)`: characters between '0' and 'z', as
/// sysbench draws them.
unsafe extern "C" fn rand_varstr(
    p: *mut Shared,
    min: f64,
    max: f64,
    out_len: *mut usize,
) -> *const u8 {
    // SAFETY: as in `rand_str`.
    let sh = unsafe { Ptr(p).get() };
    let len = sh.rng.uniform(min as i64, max as i64).max(0) as usize;
    sh.scratch.clear();
    for _ in 0..len {
        let c = b'0' + sh.rng.below_n(u64::from(b'z' - b'0') + 1) as u8;
        sh.scratch.push(c);
    }
    unsafe { *out_len = sh.scratch.len() };
    sh.scratch.as_ptr()
}

fn slot(sh: &mut Shared, i: i32) -> Option<&mut Slot> {
    let i = usize::try_from(i).ok()?;
    if i >= sh.params.len() {
        sh.params.resize(i + 1, Slot::Null);
    }
    sh.params.get_mut(i)
}

/// Binds parameter `i` (0-based) of the next execute to NULL.
unsafe extern "C" fn bind_null(p: *mut Shared, i: i32) {
    // SAFETY: as in `guarded`.
    let sh = unsafe { Ptr(p).get() };
    if let Some(s) = slot(sh, i) {
        *s = Slot::Null;
    }
}

/// Binds a Lua number: an integer as an integer, anything else as text.
unsafe extern "C" fn bind_num(p: *mut Shared, i: i32, v: f64) {
    // SAFETY: as in `guarded`.
    let sh = unsafe { Ptr(p).get() };
    if let Some(s) = slot(sh, i) {
        *s = if v.fract() == 0.0 && v.abs() < 9.0e15 {
            Slot::Int(v as i64)
        } else {
            Slot::Float(v)
        };
    }
}

/// Binds a Lua string (its bytes are copied).
unsafe extern "C" fn bind_str(p: *mut Shared, i: i32, s: *const u8, len: usize) {
    // SAFETY: as in `rand_str`.
    let sh = unsafe { Ptr(p).get() };
    let bytes = if len == 0 {
        &[][..]
    } else {
        unsafe { std::slice::from_raw_parts(s, len) }
    };
    let start = sh.param_bytes.len();
    sh.param_bytes.extend_from_slice(bytes);
    let end = sh.param_bytes.len();
    if let Some(s) = slot(sh, i) {
        *s = Slot::Str(start, end);
    }
}

/// Connection `con` of the FFI's `int`, if it is open.
fn open_conn(conns: &mut [Option<Conn>], con: i32) -> Option<&mut Conn> {
    conn_of(conns, usize::try_from(con).ok()?)
}

/// Runs prepared statement `stmt` of connection `con` (both 1-based) with
/// the first `n` bound parameters. Returns the number of columns of its
/// rows (0 when it returns none) and writes the rows or changed rows to
/// `out[0]`; -1 on error.
unsafe extern "C" fn execute(p: *mut Shared, con: i32, stmt: i32, n: i32, out: *mut f64) -> i32 {
    guarded(p, "execute", |sh| {
        let n = usize::try_from(n).unwrap_or(0);
        if sh.params.len() < n {
            sh.params.resize(n, Slot::Null);
        }
        // Numbers that are not integers go as text, as Lua writes them.
        for s in &mut sh.params[..n] {
            if let Slot::Float(x) = *s {
                let start = sh.param_bytes.len();
                let _ = write!(sh.param_bytes, "{x}");
                *s = Slot::Str(start, sh.param_bytes.len());
            }
        }
        let timing = sh.timing();
        let bytes = &sh.param_bytes;
        let param = |s: &Slot| match *s {
            Slot::Null => Param::Null,
            Slot::Int(x) => Param::Int(x),
            Slot::Float(_) => Param::Null,
            Slot::Str(a, b) => {
                let raw = &bytes[a..b];
                std::str::from_utf8(raw).map_or(Param::Bytes(raw), Param::Text)
            }
        };
        let mut stack = [Param::Null; STACK_PARAMS];
        let heap: Vec<Param<'_>>;
        let params: &[Param<'_>] = if n <= STACK_PARAMS {
            for (d, s) in stack.iter_mut().zip(&sh.params[..n]) {
                *d = param(s);
            }
            &stack[..n]
        } else {
            heap = sh.params[..n].iter().map(param).collect();
            &heap
        };
        let Some(c) = open_conn(&mut sh.conns, con) else {
            sh.pending = Some(closed(con));
            return -1;
        };
        let Some(st) = usize::try_from(stmt)
            .ok()
            .and_then(|i| c.stmts.get(i.wrapping_sub(1)))
        else {
            sh.pending = Some(DbError::other(
                "dbmeter",
                format!("statement {stmt} was not prepared on connection {con}"),
            ));
            return -1;
        };
        let (id, read, tx, rec) = (st.id, st.read, st.tx, st.rec);
        let started = Instant::now();
        c.rows.clear();
        let r = if read {
            c.conn
                .fetch_rows(id, params, &mut c.rows)
                .map(|rows| (Outcome::Rows(rows), c.rows.width()))
        } else if let Some(tx) = tx {
            c.conn.run(id, params).map(|_| {
                c.in_tx = tx;
                // Transaction control counts as "other".
                (Outcome::Affected(0), 0)
            })
        } else {
            c.conn.run(id, params).map(|o| (o, 0))
        };
        sh.param_bytes.clear();
        finish(sh, r, out, |sh| {
            if timing {
                sh.note(rec, started);
            }
        })
    })
}

/// Counts a statement's outcome and hands its size to Lua.
fn finish(
    sh: &mut Shared,
    r: Result<(Outcome, usize), DbError>,
    out: *mut f64,
    note: impl FnOnce(&mut Shared),
) -> i32 {
    match r {
        Ok((o, width)) => {
            sh.count(o);
            note(sh);
            let n = match o {
                Outcome::Rows(n) | Outcome::Affected(n) => n,
            };
            // SAFETY: the prelude's double[1].
            unsafe { *out = n as f64 };
            i32::try_from(width).unwrap_or(i32::MAX)
        }
        Err(e) => {
            sh.pending = Some(e);
            -1
        }
    }
}

/// Runs the SQL text `sql` on connection `con`; as [`execute`].
unsafe extern "C" fn query(
    p: *mut Shared,
    con: i32,
    sql: *const u8,
    len: usize,
    out: *mut f64,
) -> i32 {
    guarded(p, "query", |sh| {
        let raw = if len == 0 {
            &[][..]
        } else {
            // SAFETY: a Lua string's bytes and length.
            unsafe { std::slice::from_raw_parts(sql, len) }
        };
        let sql = String::from_utf8_lossy(raw);
        let timing = sh.timing();
        let Some(c) = open_conn(&mut sh.conns, con) else {
            sh.pending = Some(closed(con));
            return -1;
        };
        let started = Instant::now();
        let r = run_query(c, &sql);
        finish(sh, r, out, |sh| {
            if timing {
                sh.note_text(&sql, started);
            }
        })
    })
}

/// Value `idx` (0-based, row after row) of connection `con`'s last
/// result: its bytes (valid until the next call) and their length, or
/// NULL for an SQL NULL or a value that is not there.
unsafe extern "C" fn value(p: *mut Shared, con: i32, idx: i32, out_len: *mut usize) -> *const u8 {
    // SAFETY: as in `rand_str`.
    let sh = unsafe { Ptr(p).get() };
    let Some(c) = open_conn(&mut sh.conns, con) else {
        return ptr::null();
    };
    let Ok(idx) = usize::try_from(idx) else {
        return ptr::null();
    };
    let bytes: &[u8] = match c.rows.value(idx) {
        Some(Value::Int(x)) => {
            sh.scratch.clear();
            let _ = write!(sh.scratch, "{x}");
            &sh.scratch
        }
        Some(Value::Text(t)) => t.as_bytes(),
        Some(Value::Bytes(b)) => b,
        None => return ptr::null(),
    };
    unsafe { *out_len = bytes.len() };
    bytes.as_ptr()
}

/// `sb_counter_inc(tid, kind)`: reads, writes and others are counted;
/// events, errors, reconnects and bytes are dbmeter's own counts.
unsafe extern "C" fn counter_inc(p: *mut Shared, kind: i32) {
    // SAFETY: as in `guarded`.
    let sh = unsafe { Ptr(p).get() };
    match kind {
        0 => sh.counts.measures[sql::OTHERS] += 1,
        1 => sh.counts.measures[sql::READS] += 1,
        2 => sh.counts.measures[sql::WRITES] += 1,
        _ => {}
    }
}

/// The functions, each as its C type and address, for the prelude to
/// cast (`ffi.cast(type, address)`).
pub(super) fn table(lua: &Lua) -> mlua::Result<Table> {
    type Entry = (&'static str, &'static str, *mut c_void);
    let entries: [Entry; 13] = [
        (
            "rand",
            "double (*)(void *, int, double, double)",
            rand as *mut c_void,
        ),
        (
            "rand_double",
            "double (*)(void *)",
            rand_double as *mut c_void,
        ),
        (
            "rand_uint64",
            "double (*)(void *)",
            rand_uint64 as *mut c_void,
        ),
        (
            "rand_unique",
            "double (*)(void *)",
            rand_unique as *mut c_void,
        ),
        (
            "rand_string",
            "const char *(*)(void *, const char *, size_t, size_t *)",
            rand_str as *mut c_void,
        ),
        (
            "rand_varstring",
            "const char *(*)(void *, double, double, size_t *)",
            rand_varstr as *mut c_void,
        ),
        (
            "bind_null",
            "void (*)(void *, int)",
            bind_null as *mut c_void,
        ),
        (
            "bind_num",
            "void (*)(void *, int, double)",
            bind_num as *mut c_void,
        ),
        (
            "bind_str",
            "void (*)(void *, int, const char *, size_t)",
            bind_str as *mut c_void,
        ),
        (
            "execute",
            "int (*)(void *, int, int, int, double *)",
            execute as *mut c_void,
        ),
        (
            "query",
            "int (*)(void *, int, const char *, size_t, double *)",
            query as *mut c_void,
        ),
        (
            "value",
            "const char *(*)(void *, int, int, size_t *)",
            value as *mut c_void,
        ),
        (
            "counter_inc",
            "void (*)(void *, int)",
            counter_inc as *mut c_void,
        ),
    ];
    let t = lua.create_table()?;
    for (name, ctype, f) in entries {
        let e = lua.create_table()?;
        e.raw_set(1, ctype)?;
        e.raw_set(2, LightUserData(f))?;
        t.raw_set(name, e)?;
    }
    Ok(t)
}
