//! prepare, prewarm and cleanup for the OLTP family.

use super::schema::{
    after_load_sql, create_table_sql, is_sbtest, k_index_sql, prewarm_sql, secondary_id_index_sql,
    table_names,
};
use super::{OltpConfig, OltpKind};
use crate::benchmark::LoadProgress;
use crate::random::{RandGen, derive_seed};
use dbmeter_db::{ConnectOptions, Connection, DbError, Dialect, Value};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// What a prepare (or prewarm) did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LoadReport {
    pub tables: u32,
    pub rows: u64,
    pub elapsed: Duration,
}

impl LoadReport {
    pub fn rows_per_sec(&self) -> f64 {
        let s = self.elapsed.as_secs_f64();
        if s > 0.0 { self.rows as f64 / s } else { 0.0 }
    }
}

/// Receives one line per step; called from concurrent loaders.
pub type Say<'a> = &'a (dyn Fn(String) + Send + Sync);

/// Rows generated between two updates of [`LoadProgress::done`].
const PROGRESS_STEP: u64 = 4096;

/// Creates and loads the test's tables, `workers` tables at a time on a
/// server (one at a time on SQLite, which has a single writer). With
/// `only_missing`, tables that already exist are left alone; otherwise an
/// existing table is an error. With `only`, the tables of those indexes
/// (from 0) alone: a shard's block (`--shard`).
#[allow(clippy::too_many_arguments)]
pub fn prepare(
    opts: &ConnectOptions,
    cfg: &OltpConfig,
    seed: u64,
    only: Option<std::ops::Range<usize>>,
    only_missing: bool,
    workers: usize,
    say: Say<'_>,
    progress: &LoadProgress,
) -> Result<LoadReport, DbError> {
    let began = Instant::now();
    let mut conn = Connection::connect(opts)?;
    let existing = conn.tables()?;
    let mut todo = Vec::new();
    for (i, table) in table_names(cfg).into_iter().enumerate() {
        if only.as_ref().is_some_and(|r| !r.contains(&i)) {
            continue;
        }
        if existing.iter().any(|e| e.eq_ignore_ascii_case(&table)) {
            if only_missing {
                continue;
            }
            return Err(DbError::other(
                "exists",
                format!(
                    "table {table} already exists in {}; run `dbmeter cleanup` first or use another --db",
                    opts.target
                ),
            ));
        }
        todo.push((i, table));
    }
    if cfg.kind != OltpKind::BulkInsert && !todo.is_empty() {
        say(format!("Loading rows with {}", conn.bulk_method()?));
        progress
            .total
            .fetch_add(todo.len() as u64 * cfg.table_size, Ordering::Relaxed);
    }
    let workers = match conn.dialect() {
        Dialect::Sqlite => 1,
        _ => workers.clamp(1, todo.len().max(1)),
    };
    let mut lanes: Vec<Vec<(usize, String)>> = vec![Vec::new(); workers];
    for (n, t) in todo.into_iter().enumerate() {
        lanes[n % workers].push(t);
    }
    let lanes: Vec<std::sync::Mutex<Vec<(usize, String)>>> =
        lanes.into_iter().map(std::sync::Mutex::new).collect();
    let results = crate::parallel::on_connections(opts, workers, Some(&mut conn), &|i, conn| {
        let lane = lanes[i]
            .lock()
            .map(|mut l| std::mem::take(&mut *l))
            .unwrap_or_default();
        load_lane(conn, cfg, seed, lane, say, progress)
    })?;
    let mut report = LoadReport::default();
    for r in results {
        report.rows += r.rows;
        report.tables += r.tables;
    }
    report.elapsed = began.elapsed();
    Ok(report)
}

/// Loads the tables of one lane on one connection (`conn`, or a new one).
fn load_lane(
    conn: &mut Connection,
    cfg: &OltpConfig,
    seed: u64,
    lane: Vec<(usize, String)>,
    say: Say<'_>,
    progress: &LoadProgress,
) -> Result<LoadReport, DbError> {
    let mut report = LoadReport::default();
    for (i, table) in lane {
        report.rows += load_table(conn, cfg, seed, i, &table, say, progress)?;
        report.tables += 1;
    }
    Ok(report)
}

fn load_table(
    conn: &mut Connection,
    cfg: &OltpConfig,
    seed: u64,
    i: usize,
    table: &str,
    say: Say<'_>,
    progress: &LoadProgress,
) -> Result<u64, DbError> {
    let dialect = conn.dialect();
    say(format!("Creating table '{table}'..."));
    conn.execute(&create_table_sql(cfg, dialect, table))
        .map_err(|e| e.context(format!("creating {table}")))?;
    if cfg.kind == OltpKind::BulkInsert {
        return Ok(0);
    }
    if cfg.secondary
        && let Some(sql) = secondary_id_index_sql(dialect, table)
    {
        conn.execute(&sql)?;
    }
    say(format!("Inserting {} rows into '{table}'", cfg.table_size));
    let mut rng = RandGen::new(derive_seed(seed, 1_000_000 + i as u64), cfg.rand.clone());
    let mut id = 0i64;
    let size = cfg.table_size as i64;
    let (mut c, mut pad) = (String::new(), String::new());
    let mut next = |row: &mut Vec<Value>| {
        if id >= size {
            return false;
        }
        id += 1;
        if (id as u64).is_multiple_of(PROGRESS_STEP) {
            progress.done.fetch_add(PROGRESS_STEP, Ordering::Relaxed);
        }
        rng.digit_groups(10, &mut c);
        rng.digit_groups(5, &mut pad);
        row.push(Value::Int(id));
        row.push(Value::Int(rng.default_dist(1, size)));
        row.push(Value::Text(c.clone()));
        row.push(Value::Text(pad.clone()));
        true
    };
    let rows = conn
        .bulk_insert(table, &["id", "k", "c", "pad"], &mut next)
        .map_err(|e| e.context(format!("loading {table}")))?;
    progress
        .done
        .fetch_add(rows % PROGRESS_STEP, Ordering::Relaxed);
    if let Some(sql) = after_load_sql(cfg, dialect, table) {
        conn.execute(&sql)?;
    }
    if cfg.create_secondary {
        say(format!("Creating a secondary index on '{table}'..."));
        conn.execute(&k_index_sql(table))?;
    }
    Ok(rows)
}

/// Reads every table through its primary key and its k index, so that a
/// run starts with warm caches.
pub fn prewarm(
    opts: &ConnectOptions,
    cfg: &OltpConfig,
    say: Say<'_>,
) -> Result<LoadReport, DbError> {
    let began = Instant::now();
    let mut conn = Connection::connect(opts)?;
    let existing = conn.tables()?;
    let mut report = LoadReport::default();
    let with_k = cfg.create_secondary && cfg.kind != OltpKind::BulkInsert;
    for table in table_names(cfg) {
        if !existing.iter().any(|e| e.eq_ignore_ascii_case(&table)) {
            return Err(missing_table_error(&table, opts));
        }
        say(format!("Prewarming '{table}'..."));
        for (n, sql) in prewarm_sql(conn.dialect(), &table, with_k)
            .iter()
            .enumerate()
        {
            let v = conn
                .query_i64(sql)
                .map_err(|e| e.context(format!("prewarming {table}")))?;
            if n == 0 {
                report.rows += v.unwrap_or(0) as u64;
            }
        }
        report.tables += 1;
    }
    report.elapsed = began.elapsed();
    Ok(report)
}

/// Drops every sbtestN table of the target. Returns the dropped names.
pub fn cleanup(opts: &ConnectOptions, say: Say<'_>) -> Result<Vec<String>, DbError> {
    let mut conn = Connection::connect(opts)?;
    let mut dropped = Vec::new();
    for table in conn.tables()? {
        if is_sbtest(&table) {
            say(format!("Dropping table '{table}'..."));
            conn.execute(&format!("DROP TABLE IF EXISTS {table}"))?;
            dropped.push(table);
        }
    }
    Ok(dropped)
}

/// The error for a run or prewarm on a table that is not there.
pub(crate) fn missing_table_error(table: &str, opts: &ConnectOptions) -> DbError {
    DbError::other(
        "missing-table",
        format!(
            "table {table} does not exist in {}; run `dbmeter prepare` with the same workload and options first",
            opts.target
        ),
    )
}
