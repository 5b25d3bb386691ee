//! prepare, prewarm and cleanup for the OLTP family.

use super::schema::{
    create_table_sql, is_sbtest, k_index_sql, secondary_id_index_sql, table_names,
};
use super::{OltpConfig, OltpKind};
use crate::random::{RandGen, derive_seed};
use dbmeter_db::{ConnectOptions, Connection, DbError, Value};
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

/// Creates and loads the test's tables. With `only_missing`, tables that
/// already exist are left alone; otherwise an existing table is an error.
/// `say` receives one line per step.
pub async fn prepare(
    opts: &ConnectOptions,
    cfg: &OltpConfig,
    seed: u64,
    only_missing: bool,
    say: &mut (dyn FnMut(String) + Send),
) -> Result<LoadReport, DbError> {
    let began = Instant::now();
    let mut conn = Connection::connect(opts).await?;
    let existing = conn.tables().await?;
    let mut report = LoadReport::default();
    for (i, table) in table_names(cfg).into_iter().enumerate() {
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
        say(format!("Creating table '{table}'..."));
        conn.execute(&create_table_sql(cfg, conn.dialect(), &table))
            .await
            .map_err(|e| e.context(format!("creating {table}")))?;
        report.tables += 1;
        if cfg.kind == OltpKind::BulkInsert {
            continue;
        }
        if cfg.secondary {
            conn.execute(&secondary_id_index_sql(&table)).await?;
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
            rng.digit_groups(10, &mut c);
            rng.digit_groups(5, &mut pad);
            row.push(Value::Int(id));
            row.push(Value::Int(rng.default_dist(1, size)));
            row.push(Value::Text(c.clone()));
            row.push(Value::Text(pad.clone()));
            true
        };
        report.rows += conn
            .bulk_insert(&table, &["id", "k", "c", "pad"], &mut next)
            .await
            .map_err(|e| e.context(format!("loading {table}")))?;
        if cfg.create_secondary {
            say(format!("Creating a secondary index on '{table}'..."));
            conn.execute(&k_index_sql(&table)).await?;
        }
    }
    report.elapsed = began.elapsed();
    Ok(report)
}

/// Reads every table through its primary key and its k index, so that a
/// run starts with warm caches.
pub async fn prewarm(
    opts: &ConnectOptions,
    cfg: &OltpConfig,
    say: &mut (dyn FnMut(String) + Send),
) -> Result<LoadReport, DbError> {
    let began = Instant::now();
    let mut conn = Connection::connect(opts).await?;
    let existing = conn.tables().await?;
    let mut report = LoadReport::default();
    for table in table_names(cfg) {
        if !existing.iter().any(|e| e.eq_ignore_ascii_case(&table)) {
            return Err(missing_table_error(&table, opts, cfg));
        }
        say(format!("Prewarming '{table}'..."));
        let rows = conn
            .query_i64(&format!(
                "SELECT COUNT(*) FROM {table} WHERE LENGTH(c) + LENGTH(pad) >= 0"
            ))
            .await?
            .unwrap_or(0);
        if cfg.create_secondary && cfg.kind != OltpKind::BulkInsert {
            let n = table.trim_start_matches("sbtest");
            conn.query_i64(&format!(
                "SELECT COUNT(k) FROM {table} INDEXED BY k_{n} WHERE k >= -2147483648"
            ))
            .await
            .map_err(|e| e.context(format!("reading the k index of {table}")))?;
        }
        report.tables += 1;
        report.rows += rows as u64;
    }
    report.elapsed = began.elapsed();
    Ok(report)
}

/// Drops every sbtestN table of the target. Returns the dropped names.
pub async fn cleanup(
    opts: &ConnectOptions,
    say: &mut (dyn FnMut(String) + Send),
) -> Result<Vec<String>, DbError> {
    let mut conn = Connection::connect(opts).await?;
    let mut dropped = Vec::new();
    for table in conn.tables().await? {
        if is_sbtest(&table) {
            say(format!("Dropping table '{table}'..."));
            conn.execute(&format!("DROP TABLE IF EXISTS {table}"))
                .await?;
            dropped.push(table);
        }
    }
    Ok(dropped)
}

/// The error for a run or prewarm on a table that is not there.
pub(crate) fn missing_table_error(table: &str, opts: &ConnectOptions, cfg: &OltpConfig) -> DbError {
    let _ = cfg;
    DbError::other(
        "missing-table",
        format!(
            "table {table} does not exist in {}; run `dbmeter prepare` with the same workload and options first",
            opts.target
        ),
    )
}
