//! The sbtest tables: names, DDL, and whether they are ready for a run.

use super::{OltpConfig, OltpKind};
use dbmeter_db::{Connection, DbError, Dialect};

pub fn table_names(cfg: &OltpConfig) -> Vec<String> {
    (1..=cfg.table_count())
        .map(|t| format!("sbtest{t}"))
        .collect()
}

/// True for names like `sbtest12`.
pub(crate) fn is_sbtest(name: &str) -> bool {
    name.strip_prefix("sbtest")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

pub(crate) fn create_table_sql(cfg: &OltpConfig, dialect: Dialect, table: &str) -> String {
    match (dialect, cfg.kind) {
        (Dialect::Sqlite, OltpKind::BulkInsert) => format!(
            "CREATE TABLE {table} (id INTEGER NOT NULL, k INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (id))"
        ),
        (Dialect::Sqlite, _) => {
            // In SQLite an INTEGER PRIMARY KEY is the rowid: it is filled in
            // when an INSERT leaves it out, which is what auto_inc asks for.
            let key = if cfg.secondary {
                ""
            } else {
                ", PRIMARY KEY (id)"
            };
            format!(
                "CREATE TABLE {table} (id INTEGER NOT NULL, k INTEGER NOT NULL DEFAULT 0, \
                 c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT ''{key})"
            )
        }
    }
}

/// The index on id when `--secondary=on` (created before loading).
pub(crate) fn secondary_id_index_sql(table: &str) -> String {
    format!("CREATE INDEX id_{table} ON {table} (id)")
}

/// The k index, created after loading.
pub(crate) fn k_index_sql(table: &str) -> String {
    let n = table.trim_start_matches("sbtest");
    format!("CREATE INDEX k_{n} ON {table} (k)")
}

/// What a run finds in the database.
#[derive(Clone, Debug, PartialEq)]
pub struct Readiness {
    /// Tables the test needs that do not exist.
    pub missing: Vec<String>,
    /// The largest id over the test's tables (0 when empty).
    pub max_id: i64,
    /// Rows in the first table, when it exists.
    pub first_table_rows: Option<i64>,
}

pub async fn check_ready(conn: &mut Connection, cfg: &OltpConfig) -> Result<Readiness, DbError> {
    let existing = conn.tables().await?;
    let mut r = Readiness {
        missing: Vec::new(),
        max_id: 0,
        first_table_rows: None,
    };
    for (i, t) in table_names(cfg).into_iter().enumerate() {
        if !existing.iter().any(|e| e.eq_ignore_ascii_case(&t)) {
            r.missing.push(t);
            continue;
        }
        let max = conn
            .query_i64(&format!("SELECT MAX(id) FROM {t}"))
            .await?
            .unwrap_or(0);
        r.max_id = r.max_id.max(max);
        if i == 0 {
            r.first_table_rows = conn.query_i64(&format!("SELECT COUNT(*) FROM {t}")).await?;
        }
    }
    Ok(r)
}
