//! The store's schema and its migrations.
//!
//! Each migration has a version (1, 2, ...) and the SQL that brings a store
//! from the previous version to it. `store_migrations` records the versions
//! applied, with their description and time. Opening a store applies the
//! missing migrations in order, each in the same transaction as its row in
//! `store_migrations`, while holding a lock (SQLite: the write lock;
//! PostgreSQL: an advisory lock) so that two processes opening a new store
//! at once do not both migrate it. A store whose version is higher than the
//! newest migration this build knows was written by a newer dbmeter and is
//! refused.
//!
//! The SQL is written once for both databases, with `{id}` (the run id
//! column), `{int}`, `{real}` and `{blob}` standing for each database's
//! types.
//!
//! Version 1: `runs` (one row per run: meta and main numbers, NULL where
//! the document lacks them), `tags` (run_id, key, value) and `documents`
//! (run_id, encoding, body: the run document as saved, `deflate`-compressed
//! (zlib format) since the interval and OS series of a long run are large
//! and repetitive; `identity` is read too).
//! Version 2: `figures` (run_id, position, name, value, min_value,
//! max_value, unit, lower_is_better, status): a benchmark's own figures
//! (the run document's `figures`), compared one by one.
//! Version 3: `barriers` (name, round_no, shard, shards, arrived_at, host):
//! the start barrier of sharded runs (`barrier.rs`), one row per shard's
//! arrival at a named barrier.
//! Version 4: `adaptive_cells` (campaign, cell, runs, completed, ci_width,
//! target_width, max_repeats, stop, updated_at): what a campaign's adaptive
//! repeats decided for each cell (`adaptive.rs`).
//! To change the schema, append a migration; never edit an applied one.

use crate::StoreError;
use crate::backend::{Backend, Kind, Param};
use crate::store::now_rfc3339;

pub(crate) struct Migration {
    pub version: i64,
    pub description: &'static str,
    pub sql: &'static str,
}

pub(crate) const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        description: "runs with their main numbers, tags, run documents",
        sql: "
CREATE TABLE runs (
    id {id},
    stored_at TEXT NOT NULL,
    started_at TEXT,
    campaign TEXT,
    variant TEXT,
    cell TEXT,
    repeat {int},
    workload TEXT NOT NULL,
    target_url TEXT,
    driver TEXT,
    server_version TEXT,
    threads {int},
    end_reason TEXT NOT NULL,
    end_error TEXT,
    duration_s {real},
    events {int},
    events_per_s {real},
    queries {int},
    queries_per_s {real},
    latency_avg_ms {real},
    latency_p95_ms {real},
    latency_p99_ms {real},
    latency_max_ms {real},
    errors {int},
    reconnects {int},
    hostname TEXT,
    dbmeter_version TEXT,
    document_version {int}
);
CREATE INDEX runs_campaign_cell ON runs (campaign, cell, repeat);
CREATE INDEX runs_variant ON runs (variant);
CREATE INDEX runs_workload_threads ON runs (workload, threads);
CREATE TABLE tags (
    run_id {int} NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (run_id, key)
);
CREATE INDEX tags_key_value ON tags (key, value);
CREATE TABLE documents (
    run_id {int} PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    encoding TEXT NOT NULL,
    body {blob} NOT NULL
);
",
    },
    Migration {
        version: 2,
        description: "the benchmarks' own figures per run (TPC-H: each query's time)",
        sql: "
CREATE TABLE figures (
    run_id {int} NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    position {int} NOT NULL,
    name TEXT NOT NULL,
    value {real},
    min_value {real},
    max_value {real},
    unit TEXT NOT NULL,
    lower_is_better {int} NOT NULL,
    status TEXT NOT NULL,
    PRIMARY KEY (run_id, name)
);
",
    },
    Migration {
        version: 3,
        description: "start barriers of sharded runs: each shard's arrival",
        sql: "
CREATE TABLE barriers (
    name TEXT NOT NULL,
    round_no {int} NOT NULL,
    shard {int} NOT NULL,
    shards {int} NOT NULL,
    arrived_at {real} NOT NULL,
    host TEXT,
    PRIMARY KEY (name, round_no, shard)
);
",
    },
    Migration {
        version: 4,
        description: "adaptive repeats of campaigns: why each cell stopped",
        sql: "
CREATE TABLE adaptive_cells (
    campaign TEXT NOT NULL,
    cell TEXT NOT NULL,
    runs {int} NOT NULL,
    completed {int} NOT NULL,
    ci_width {real},
    target_width {real} NOT NULL,
    max_repeats {int} NOT NULL,
    stop TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (campaign, cell)
);
",
    },
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS[MIGRATIONS.len() - 1].version;

/// The PostgreSQL advisory lock held while migrating (an arbitrary number:
/// "dbmeter" in ASCII).
pub(crate) const PG_LOCK: i64 = 0x64_62_6d_65_74_65_72;

fn for_backend(sql: &str, kind: Kind) -> String {
    let (id, int, real, blob) = match kind {
        Kind::Sqlite => (
            "INTEGER PRIMARY KEY AUTOINCREMENT",
            "INTEGER",
            "REAL",
            "BLOB",
        ),
        Kind::Postgres => (
            "BIGSERIAL PRIMARY KEY",
            "BIGINT",
            "DOUBLE PRECISION",
            "BYTEA",
        ),
    };
    sql.replace("{id}", id)
        .replace("{int}", int)
        .replace("{real}", real)
        .replace("{blob}", blob)
}

fn current_version(db: &mut Backend) -> Result<Option<i64>, String> {
    let rows = db.query("SELECT MAX(version) FROM store_migrations", &[])?;
    Ok(rows.first().and_then(|r| r.first()).and_then(|c| c.int()))
}

fn too_new(shown: &str, v: i64) -> StoreError {
    StoreError::new(format!(
        "the results store '{shown}' has schema version {v}, newer than this dbmeter knows ({SCHEMA_VERSION}); use a newer dbmeter to read it"
    ))
}

/// Brings the store to [`SCHEMA_VERSION`].
pub(crate) fn migrate(db: &mut Backend, shown: &str) -> Result<(), StoreError> {
    // The common case, without taking a write lock: already up to date.
    if let Ok(Some(v)) = current_version(db) {
        if v == SCHEMA_VERSION {
            return Ok(());
        }
        if v > SCHEMA_VERSION {
            return Err(too_new(shown, v));
        }
    }
    let fail =
        |e: String| StoreError::new(format!("cannot set up the results store '{shown}': {e}"));
    let kind = db.kind();
    match kind {
        Kind::Sqlite => db.batch("BEGIN IMMEDIATE").map_err(fail)?,
        Kind::Postgres => {
            db.batch("BEGIN").map_err(fail)?;
            db.execute(
                "SELECT pg_advisory_xact_lock(?)",
                &[Param::Int(Some(PG_LOCK))],
            )
            .map_err(fail)?;
        }
    }
    let result = migrate_locked(db, shown, kind);
    match result {
        Ok(()) => db.batch("COMMIT").map_err(fail),
        Err(e) => {
            let _ = db.batch("ROLLBACK");
            Err(e)
        }
    }
}

fn migrate_locked(db: &mut Backend, shown: &str, kind: Kind) -> Result<(), StoreError> {
    let fail =
        |e: String| StoreError::new(format!("cannot set up the results store '{shown}': {e}"));
    db.batch(
        "CREATE TABLE IF NOT EXISTS store_migrations (
            version INTEGER PRIMARY KEY,
            description TEXT NOT NULL,
            applied_at TEXT NOT NULL
        )",
    )
    .map_err(fail)?;
    let have = current_version(db).map_err(fail)?.unwrap_or(0);
    if have > SCHEMA_VERSION {
        return Err(too_new(shown, have));
    }
    for m in MIGRATIONS.iter().filter(|m| m.version > have) {
        db.batch(&for_backend(m.sql, kind))
            .map_err(|e| fail(format!("migration {}: {e}", m.version)))?;
        db.execute(
            "INSERT INTO store_migrations (version, description, applied_at) VALUES (?, ?, ?)",
            &[
                Param::Int(Some(m.version)),
                Param::Text(Some(m.description.to_string())),
                Param::Text(Some(now_rfc3339())),
            ],
        )
        .map_err(fail)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_increase_from_one() {
        for (i, m) in MIGRATIONS.iter().enumerate() {
            assert_eq!(m.version, i as i64 + 1);
        }
        assert!(for_backend(MIGRATIONS[0].sql, Kind::Postgres).contains("BIGSERIAL"));
        assert!(!for_backend(MIGRATIONS[0].sql, Kind::Sqlite).contains('{'));
    }
}
