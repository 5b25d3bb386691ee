//! Running the queries on both targets: cold, then warm runs alternating
//! A and B, each execution timed with its rows, result checksum, warnings
//! and errors; MariaDB/MySQL's session status around it, PostgreSQL's
//! EXPLAIN (ANALYZE, BUFFERS) in an execution of its own.

use crate::model::{
    Comparison, QueryResult, SCHEMA, SideInfo, SideResult, TemperatureResult, median,
};
use crate::sources::{Query, is_read};
use dbmeter_benchmarks::ServerControl;
use dbmeter_db::conninfo::{self, Env, Given, ServerKind, Spec};
use dbmeter_db::{
    ConnectOptions, Connection, DbError, Dialect, ErrorKind, ResultRows, Target, TlsMode,
    TlsSettings, Value,
};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// What to compare.
pub struct Setup {
    /// The targets' URLs, A then B.
    pub urls: [String; 2],
    /// Warm runs of each query on each side.
    pub runs: u32,
    pub queries: Vec<Query>,
    /// Notes of the query sources (left-out classes of a log).
    pub notes: Vec<String>,
    pub version: String,
    /// Each statement is cancelled after this long (the server's own
    /// statement timeout; SQLite: dbmeter's).
    pub query_timeout: Option<Duration>,
    /// Whether cold runs drop the OS page cache (a managed server's or an
    /// SQLite file's).
    pub drop_caches: bool,
}

/// The target a `--db` URL names, completed from the environment and
/// the client files as the server's own client would.
pub fn target_of(url: &str) -> Result<Target, String> {
    if url.trim().is_empty() {
        return Err(
            "--db is empty: give a target (sqlite:PATH, mysql://..., postgres://...)".into(),
        );
    }
    let (kind, given) = match conninfo::parse_spec(url).map_err(|e| e.to_string())? {
        Spec::Sqlite(t) => return Ok(t),
        Spec::Server(kind, given) => (kind, given),
    };
    let t = given
        .resolve(kind, &Given::default(), &Env::from_process())
        .map_err(|e| e.to_string())?
        .warn();
    let default_tls = match kind {
        ServerKind::Mysql => TlsMode::Disable,
        ServerKind::Postgres => TlsMode::Prefer,
    };
    TlsSettings::of(&t, default_tls).map_err(|e| e.to_string())?;
    Ok(Target::server(kind, t))
}

/// How a side's cold runs are made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cold {
    /// A managed server: restarted, page cache dropped.
    Restart,
    /// An SQLite file: opened again, page cache dropped.
    Reopen,
    /// A server dbmeter does not manage: the query's first execution.
    First,
}

/// The session status variables read around each MariaDB/MySQL execution.
const STATUS_QUERY: &str = "SHOW SESSION STATUS WHERE Variable_name LIKE 'Handler\\_%' \
     OR Variable_name LIKE 'Sort\\_%' OR Variable_name LIKE 'Select\\_%' \
     OR Variable_name LIKE 'Created\\_tmp\\_%' \
     OR Variable_name IN ('Innodb_rows_read', 'Innodb_buffer_pool_read_requests', \
     'Innodb_buffer_pool_reads', 'Rows_read', 'Rows_tmp_read')";

/// What one execution found.
#[derive(Default)]
struct Exec {
    time: Option<f64>,
    rows: Option<u64>,
    checksum: Option<String>,
    error: Option<String>,
    warnings: Vec<String>,
    counters: BTreeMap<String, f64>,
}

struct Side {
    label: &'static str,
    connect: ConnectOptions,
    shown: String,
    conn: Connection,
    control: Option<Arc<dyn ServerControl>>,
    cold: Cold,
    /// The status queries' own effect on the counters (MariaDB/MySQL).
    overhead: BTreeMap<String, f64>,
    rows: ResultRows,
    /// Why the page cache could not be dropped (said once).
    cache_note: Option<String>,
    drop_caches: bool,
    /// The server was restarted under this connection (the other side's
    /// cold run, on the same managed server): connect again first.
    stale: bool,
}

/// `--db B: cannot connect to postgres://...: ...` (the driver's message
/// names the target; `shown` is said when it does not).
fn connect_error(label: &str, shown: &str, e: &DbError) -> String {
    let m = e.to_string();
    if m.contains(shown) {
        format!("--db {label}: {m}")
    } else {
        format!("--db {label} ({shown}): {m}")
    }
}

impl Side {
    fn open(label: &'static str, url: &str, setup: &Setup) -> Result<Side, String> {
        let target = target_of(url).map_err(|e| format!("--db {label}: {e}"))?;
        let shown = dbmeter_db::mask_password(&target.to_string());
        if let Target::Sqlite { path, .. } = &target
            && !std::path::Path::new(path).exists()
        {
            return Err(format!(
                "--db {label}: the SQLite file {} does not exist",
                path.display()
            ));
        }
        let mut connect = ConnectOptions::new(target.clone());
        connect.query_timeout = setup.query_timeout;
        let conn = Connection::connect(&connect).map_err(|e| connect_error(label, &shown, &e))?;
        let control = dbmeter_run::control_for(Some(&target));
        let cold = match (&target, &control) {
            (Target::Sqlite { .. }, _) => Cold::Reopen,
            (_, Some(_)) => Cold::Restart,
            (_, None) => Cold::First,
        };
        let mut side = Side {
            label,
            connect,
            shown,
            conn,
            control,
            cold,
            overhead: BTreeMap::new(),
            rows: ResultRows::default(),
            cache_note: None,
            drop_caches: setup.drop_caches,
            stale: false,
        };
        side.measure_overhead()?;
        Ok(side)
    }

    fn dialect(&self) -> Dialect {
        self.conn.dialect()
    }

    fn kind(&self) -> &'static str {
        match self.dialect() {
            Dialect::Mysql => "mysql",
            Dialect::Postgres => "postgres",
            Dialect::Sqlite => "sqlite",
        }
    }

    fn cold_word(&self) -> &'static str {
        match self.cold {
            Cold::Restart => "restart",
            Cold::Reopen => "reopen",
            Cold::First => "first",
        }
    }

    fn cold_note(&self) -> String {
        let cache = match &self.cache_note {
            _ if !self.drop_caches => "page cache kept (--keep-page-cache)".into(),
            Some(why) => format!("page cache not dropped ({why})"),
            None => "page cache dropped".into(),
        };
        match self.cold {
            Cold::Restart => format!(
                "cold: {} restarted before each cold run, {cache}",
                self.control
                    .as_ref()
                    .map_or_else(|| "server".into(), |c| c.describe())
            ),
            Cold::Reopen => {
                format!("cold: the SQLite file opened again before each cold run, {cache}")
            }
            Cold::First => "first execution, not cold: the server is not one dbmeter manages \
                            (start it with `dbmeter server start` to have it restarted)"
                .into(),
        }
    }

    /// Reads the status variables (MariaDB/MySQL).
    fn status(&mut self) -> Result<BTreeMap<String, f64>, DbError> {
        self.conn.query_result(STATUS_QUERY, &mut self.rows)?;
        let mut out = BTreeMap::new();
        let w = self.rows.width();
        if w < 2 {
            return Ok(out);
        }
        for r in 0..self.rows.rows() {
            let name = match self.rows.value(r * w) {
                Some(v) => text(v),
                None => continue,
            };
            let value = match self.rows.value(r * w + 1) {
                Some(v) => text(v).trim().parse::<f64>().ok(),
                None => None,
            };
            if let Some(v) = value {
                out.insert(name, v);
            }
        }
        Ok(out)
    }

    /// SHOW WARNINGS (MariaDB/MySQL): `Level Code: Message` each.
    fn warnings(&mut self) -> Result<Vec<String>, DbError> {
        self.conn.query_result("SHOW WARNINGS", &mut self.rows)?;
        let w = self.rows.width();
        let mut out = Vec::new();
        if w < 3 {
            return Ok(out);
        }
        for r in 0..self.rows.rows() {
            let mut cell = |c: usize| self.rows.value(r * w + c).map(text).unwrap_or_default();
            let (level, code, msg) = (cell(0), cell(1), cell(2));
            out.push(format!("{level} {code}: {msg}"));
        }
        Ok(out)
    }

    /// The effect of one status reading and one SHOW WARNINGS on the
    /// counters, to take off each execution's deltas: the smaller of two
    /// measurements, counter by counter.
    fn measure_overhead(&mut self) -> Result<(), String> {
        self.overhead.clear();
        if self.dialect() != Dialect::Mysql {
            return Ok(());
        }
        let label = self.label;
        let fail = |e: DbError| format!("{label}: cannot read the session status: {e}");
        let mut best: Option<BTreeMap<String, f64>> = None;
        for _ in 0..2 {
            let before = self.status().map_err(fail)?;
            self.warnings().map_err(fail)?;
            let after = self.status().map_err(fail)?;
            let d = deltas(&before, &after, &BTreeMap::new());
            best = Some(match best {
                None => d,
                Some(b) => b
                    .into_iter()
                    .map(|(k, v)| {
                        let o = d.get(&k).copied().unwrap_or(v);
                        (k, v.min(o))
                    })
                    .collect(),
            });
        }
        self.overhead = best.unwrap_or_default();
        Ok(())
    }

    /// Opens the connection again, waiting up to a minute for a server
    /// that was just restarted.
    fn reconnect(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            match Connection::connect(&self.connect) {
                Ok(c) => {
                    self.conn = c;
                    self.stale = false;
                    return self.measure_overhead();
                }
                Err(e) if Instant::now() >= deadline => {
                    return Err(connect_error(self.label, &self.shown, &e));
                }
                Err(e) if e.kind != ErrorKind::ConnectionLost => {
                    return Err(connect_error(self.label, &self.shown, &e));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(200)),
            }
        }
    }

    /// Makes the next execution cold, as this side can.
    fn make_cold(&mut self) -> Result<(), String> {
        match self.cold {
            Cold::First => return Ok(()),
            Cold::Restart => {
                if let Some(c) = &self.control {
                    c.restart_server()
                        .map_err(|e| format!("{}: {e}", self.label))?;
                }
            }
            Cold::Reopen => {}
        }
        if let Some(c) = &self.control
            && self.drop_caches
            && let Err(why) = c.drop_page_cache()
            && self.cache_note.is_none()
        {
            self.cache_note = Some(why);
        }
        self.reconnect()
    }

    /// The managed server a cold run restarts, if any.
    fn restarted(&self) -> Option<String> {
        match self.cold {
            Cold::Restart => self.control.as_ref().map(|c| c.describe()),
            Cold::Reopen | Cold::First => None,
        }
    }

    /// Runs `sql` once, timed, with its counters.
    fn execute(&mut self, sql: &str, ordered: bool) -> Exec {
        let mut e = Exec::default();
        if self.stale {
            if let Err(why) = self.reconnect() {
                e.error = Some(why);
                return e;
            }
            self.stale = false;
        }
        let mysql = self.dialect() == Dialect::Mysql;
        let before = if mysql { self.status().ok() } else { None };
        // Notices of earlier statements are not this one's.
        self.conn.take_notices();
        let t = Instant::now();
        let r = self.conn.query_result(sql, &mut self.rows);
        let elapsed = t.elapsed().as_secs_f64();
        e.warnings = self.conn.take_notices();
        match r {
            Ok(n) => {
                e.time = Some(elapsed);
                e.rows = Some(n);
                e.checksum = Some(checksum(&mut self.rows, ordered));
                for (name, v) in self.conn.statement_counters() {
                    e.counters.insert(name.to_string(), v as f64);
                }
            }
            Err(err) => {
                e.error = Some(err.to_string());
                if err.kind == ErrorKind::ConnectionLost || err.kind == ErrorKind::Timeout {
                    // Try to go on with the next execution.
                    self.stale = true;
                    return e;
                }
            }
        }
        if mysql {
            match self.warnings() {
                Ok(w) => e.warnings = w,
                Err(err) => e.warnings.push(format!("SHOW WARNINGS failed: {err}")),
            }
            if let (Some(b), Ok(a)) = (before, self.status()) {
                e.counters = deltas(&b, &a, &self.overhead);
            }
        }
        e
    }

    /// EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) of a reading statement on
    /// PostgreSQL: its buffers and times.
    fn explain(&mut self, sql: &str) -> Result<BTreeMap<String, f64>, String> {
        if self.stale {
            self.reconnect()?;
            self.stale = false;
        }
        let q = format!("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {sql}");
        self.conn
            .query_result(&q, &mut self.rows)
            .map_err(|e| format!("EXPLAIN failed: {e}"))?;
        let json = match self.rows.value(0) {
            Some(v) => text(v),
            None => return Err("EXPLAIN returned no plan".into()),
        };
        explain_counters(&json)
    }
}

/// The text of a value, integers in decimal.
fn text(v: &Value) -> String {
    match v {
        Value::Int(i) => i.to_string(),
        Value::Text(s) => s.clone(),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
    }
}

/// `after - before - overhead` for every counter in both.
fn deltas(
    before: &BTreeMap<String, f64>,
    after: &BTreeMap<String, f64>,
    overhead: &BTreeMap<String, f64>,
) -> BTreeMap<String, f64> {
    after
        .iter()
        .filter_map(|(k, a)| {
            let b = before.get(k)?;
            Some((k.clone(), a - b - overhead.get(k).copied().unwrap_or(0.0)))
        })
        .collect()
}

/// The buffers and times of EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)'s
/// output: the top plan node's `... Blocks` (which include its
/// children's) as `Shared_hit_blocks` and so on, the planner's as
/// `Planning_shared_hit_blocks`..., I/O times and the planning and
/// execution times in seconds (`Explain_planning_time`,
/// `Explain_execution_time`).
pub fn explain_counters(json: &str) -> Result<BTreeMap<String, f64>, String> {
    let v: serde_json::Value =
        serde_json::from_str(json).map_err(|e| format!("cannot read EXPLAIN's JSON: {e}"))?;
    let top = v
        .get(0)
        .ok_or_else(|| "EXPLAIN's JSON holds no plan".to_string())?;
    let mut out = BTreeMap::new();
    let name = |prefix: &str, k: &str| {
        let mut s = String::from(prefix);
        for (i, w) in k.replace("I/O", "Io").split(' ').enumerate() {
            if i > 0 || !prefix.is_empty() {
                s.push('_');
            }
            if i == 0 && prefix.is_empty() {
                s.push_str(w);
            } else {
                s.push_str(&w.to_ascii_lowercase());
            }
        }
        s
    };
    let take = |obj: Option<&serde_json::Value>, prefix: &str, out: &mut BTreeMap<String, f64>| {
        let Some(obj) = obj.and_then(|o| o.as_object()) else {
            return;
        };
        for (k, v) in obj {
            let Some(x) = v.as_f64() else { continue };
            if k.ends_with(" Blocks") {
                out.insert(name(prefix, k), x);
            } else if k.contains("I/O") && k.ends_with(" Time") {
                out.insert(name(prefix, k), x / 1000.0);
            }
        }
    };
    take(top.get("Plan"), "", &mut out);
    take(top.get("Planning"), "Planning", &mut out);
    if let Some(t) = top.get("Planning Time").and_then(|t| t.as_f64()) {
        out.insert("Explain_planning_time".into(), t / 1000.0);
    }
    if let Some(t) = top.get("Execution Time").and_then(|t| t.as_f64()) {
        out.insert("Explain_execution_time".into(), t / 1000.0);
    }
    Ok(out)
}

/// FNV-1a, 64 bits.
fn fnv(h: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(h, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// splitmix64's finaliser: spreads a row's hash before it is summed.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A checksum of a result's rows, 16 hex digits: each row's values as
/// text (integers in decimal, NULL apart from every text), the rows
/// combined by a sum (their order does not matter) unless `ordered`.
fn checksum(rows: &mut ResultRows, ordered: bool) -> String {
    let w = rows.width();
    let mut acc: u64 = 0;
    for r in 0..rows.rows() {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for c in 0..w {
            h = match rows.value(r * w + c) {
                None => fnv(h, &[0xff, 0x00]),
                Some(Value::Int(i)) => fnv(fnv(h, &[0x01]), i.to_string().as_bytes()),
                Some(Value::Text(s)) => fnv(fnv(h, &[0x01]), s.as_bytes()),
                Some(Value::Bytes(b)) => fnv(fnv(h, &[0x01]), b),
            };
            h = fnv(h, &[0x1f]);
        }
        acc = if ordered {
            mix(acc.wrapping_mul(0x0000_0100_0000_01b3) ^ h)
        } else {
            acc.wrapping_add(mix(h))
        };
    }
    format!("{:016x}", mix(acc ^ rows.rows() as u64))
}

/// Whether the statement ends with an ORDER BY of its own (outside
/// parentheses): then the rows' order counts in the checksum.
pub fn has_order_by(sql: &str) -> bool {
    let f = dbmeter_digest::fingerprint::fingerprint(sql);
    let mut depth = 0i32;
    let b = f.as_bytes();
    let mut last = false;
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'(' => depth += 1,
            b')' => depth -= 1,
            b'o' if depth == 0 && f[i..].starts_with("order by") => {
                let before = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
                last = last || before;
            }
            _ => {}
        }
    }
    last
}

/// One side's executions at one temperature, reduced.
fn reduce(execs: &[Exec], explain: Option<Result<BTreeMap<String, f64>, String>>) -> SideResult {
    let times: Vec<f64> = execs.iter().filter_map(|e| e.time).collect();
    let mut r = SideResult {
        time_s: median(&times),
        times_s: times,
        rows: execs.iter().find_map(|e| e.rows),
        checksum: execs.iter().find_map(|e| e.checksum.clone()),
        error: execs.iter().find_map(|e| e.error.clone()),
        ..SideResult::default()
    };
    for e in execs {
        for w in &e.warnings {
            if !r.warnings.contains(w) {
                r.warnings.push(w.clone());
            }
        }
    }
    let mut names: Vec<&String> = execs.iter().flat_map(|e| e.counters.keys()).collect();
    names.sort();
    names.dedup();
    for n in names {
        let vals: Vec<f64> = execs
            .iter()
            .filter_map(|e| e.counters.get(n).copied())
            .collect();
        if let Some(m) = median(&vals) {
            r.counters.insert(n.clone(), m);
        }
    }
    match explain {
        Some(Ok(c)) => r.counters.extend(c),
        Some(Err(e)) => r.warnings.push(e),
        None => {}
    }
    r
}

/// Runs every query on both sides: each cold (A, then B), then `runs`
/// warm executions alternating A and B. `progress` is told which query
/// runs. An unreachable target or a server that cannot be restarted
/// ends it with one line.
pub fn collect(setup: &Setup, progress: &dyn Fn(&str)) -> Result<Comparison, String> {
    let started_at = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut sides = [
        Side::open("A", &setup.urls[0], setup)?,
        Side::open("B", &setup.urls[1], setup)?,
    ];
    let mut queries = Vec::new();
    for (n, q) in setup.queries.iter().enumerate() {
        let id = format!("Q{}", n + 1);
        progress(&format!("{id}: {}", one_line(&q.sql, 60)));
        let ordered = has_order_by(&q.sql);
        let pg_explain = is_read(&q.sql);
        let mut cold = Vec::new();
        for i in 0..sides.len() {
            sides[i].make_cold()?;
            if let Some(restarted) = sides[i].restarted() {
                for (j, other) in sides.iter_mut().enumerate() {
                    if j != i && other.restarted().as_deref() == Some(restarted.as_str()) {
                        other.stale = true;
                    }
                }
            }
            let s = &mut sides[i];
            let e = s.execute(&q.sql, ordered);
            let explain = if s.dialect() == Dialect::Postgres && pg_explain && e.error.is_none() {
                // Its own execution, as cold as the timed one could be.
                s.make_cold()?;
                Some(s.explain(&q.sql))
            } else {
                None
            };
            cold.push(reduce(&[e], explain));
        }
        let mut warm: [Vec<Exec>; 2] = [Vec::new(), Vec::new()];
        for _ in 0..setup.runs {
            for (i, s) in sides.iter_mut().enumerate() {
                warm[i].push(s.execute(&q.sql, ordered));
            }
        }
        let mut warm_results = Vec::new();
        for (i, s) in sides.iter_mut().enumerate() {
            // Only for a statement that ran: its error is said already.
            let ran = warm[i].iter().any(|e| e.error.is_none());
            let explain =
                (s.dialect() == Dialect::Postgres && pg_explain && ran).then(|| s.explain(&q.sql));
            warm_results.push(reduce(&warm[i], explain));
        }
        let mut temperatures = Vec::new();
        let mut cold = cold.into_iter();
        if let (Some(a), Some(b)) = (cold.next(), cold.next()) {
            temperatures.push(TemperatureResult {
                temperature: "cold".into(),
                a,
                b,
                kept: false,
            });
        }
        if setup.runs > 0 {
            let mut w = warm_results.into_iter();
            if let (Some(a), Some(b)) = (w.next(), w.next()) {
                temperatures.push(TemperatureResult {
                    temperature: "warm".into(),
                    a,
                    b,
                    kept: false,
                });
            }
        }
        queries.push(QueryResult {
            id,
            query_id: dbmeter_digest::fingerprint::query_id(
                &dbmeter_digest::fingerprint::fingerprint(&q.sql),
            ),
            sql: q.sql.clone(),
            origin: q.origin.clone(),
            temperatures,
            kept: false,
        });
    }
    let mut notes = setup.notes.clone();
    if sides.iter().any(|s| s.dialect() == Dialect::Mysql) {
        notes.push(
            "MariaDB/MySQL counters are SHOW SESSION STATUS deltas around each execution, less the \
             status reading's own effect; Innodb_* counters are server-wide"
                .into(),
        );
    }
    if sides.iter().any(|s| s.dialect() == Dialect::Postgres) {
        notes.push(
            "PostgreSQL buffers and Explain_* times come from EXPLAIN (ANALYZE, BUFFERS) in an \
             execution of its own, after the timed ones"
                .into(),
        );
    }
    let infos = sides
        .iter()
        .map(|s| SideInfo {
            label: s.label.into(),
            target: s.shown.clone(),
            kind: s.kind().into(),
            version: s.conn.server_version(),
            cold: s.cold_word().into(),
            cold_note: s.cold_note(),
        })
        .collect();
    Ok(Comparison {
        schema: SCHEMA.into(),
        dbmeter_version: setup.version.clone(),
        started_at,
        runs: setup.runs,
        sides: infos,
        queries,
        notes,
        filter: None,
    })
}

/// The first `max` characters of `s` on one line.
pub fn one_line(s: &str, max: usize) -> String {
    let flat: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        return flat;
    }
    let cut: String = flat.chars().take(max.saturating_sub(3)).collect();
    format!("{cut}...")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_by_at_the_end() {
        assert!(has_order_by("SELECT a FROM t ORDER BY a"));
        assert!(has_order_by(
            "select a from t where b = 'order by' order by a desc limit 3"
        ));
        assert!(!has_order_by(
            "SELECT * FROM (SELECT a FROM t ORDER BY a) x"
        ));
        assert!(!has_order_by("SELECT a FROM t WHERE c = 'x order by y'"));
        assert!(!has_order_by("SELECT reorder by FROM t"));
    }

    #[test]
    fn explain_json() {
        let j = r#"[{"Plan": {"Node Type": "Seq Scan", "Shared Hit Blocks": 12, "Shared Read Blocks": 430,
            "Temp Read Blocks": 0, "I/O Read Time": 2.5, "Actual Rows": 10},
            "Planning": {"Shared Hit Blocks": 3}, "Planning Time": 0.25, "Execution Time": 41.5}]"#;
        let c = explain_counters(j).unwrap();
        assert_eq!(c["Shared_hit_blocks"], 12.0);
        assert_eq!(c["Shared_read_blocks"], 430.0);
        assert_eq!(c["Temp_read_blocks"], 0.0);
        assert_eq!(c["Io_read_time"], 0.0025);
        assert_eq!(c["Planning_shared_hit_blocks"], 3.0);
        assert_eq!(c["Explain_planning_time"], 0.00025);
        assert_eq!(c["Explain_execution_time"], 0.0415);
        assert!(!c.contains_key("Actual_rows"));
        assert!(explain_counters("nope").is_err());
    }

    #[test]
    fn status_deltas_less_overhead() {
        let b = BTreeMap::from([
            ("Handler_read_next".to_string(), 10.0),
            ("X".to_string(), 1.0),
        ]);
        let a = BTreeMap::from([
            ("Handler_read_next".to_string(), 1012.0),
            ("Y".to_string(), 1.0),
        ]);
        let o = BTreeMap::from([("Handler_read_next".to_string(), 2.0)]);
        assert_eq!(
            deltas(&b, &a, &o),
            BTreeMap::from([("Handler_read_next".to_string(), 1000.0)])
        );
    }
}
