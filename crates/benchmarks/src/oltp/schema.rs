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
    let opts = if cfg.create_table_options.is_empty() {
        String::new()
    } else {
        format!(" {}", cfg.create_table_options)
    };
    let engine = match dialect {
        Dialect::Mysql => format!(" ENGINE = {}", cfg.mysql_storage_engine),
        _ => String::new(),
    };
    if cfg.kind == OltpKind::BulkInsert {
        return format!(
            "CREATE TABLE {table} (id INTEGER NOT NULL, k INTEGER DEFAULT '0' NOT NULL, PRIMARY KEY (id)){engine}{opts}"
        );
    }
    // In SQLite an INTEGER PRIMARY KEY is the rowid: it is filled in when an
    // INSERT leaves it out, which is what auto_inc asks for.
    let id = match (dialect, cfg.auto_inc) {
        (Dialect::Mysql, true) => "id INTEGER NOT NULL AUTO_INCREMENT",
        (Dialect::Postgres, true) => "id SERIAL NOT NULL",
        _ => "id INTEGER NOT NULL",
    };
    let key = match (dialect, cfg.secondary) {
        (_, false) => ", PRIMARY KEY (id)",
        (Dialect::Mysql, true) => ", KEY xid (id)",
        (_, true) => "",
    };
    format!(
        "CREATE TABLE {table} ({id}, k INTEGER DEFAULT '0' NOT NULL, \
         c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL{key}){engine}{opts}"
    )
}

/// The index on id when `--secondary=on`, where the table DDL has none.
pub(crate) fn secondary_id_index_sql(dialect: Dialect, table: &str) -> Option<String> {
    (dialect != Dialect::Mysql).then(|| format!("CREATE INDEX xid_{table} ON {table} (id)"))
}

/// After loading explicit ids into a SERIAL column, moves its sequence past them.
pub(crate) fn after_load_sql(cfg: &OltpConfig, dialect: Dialect, table: &str) -> Option<String> {
    (dialect == Dialect::Postgres && cfg.auto_inc && cfg.table_size > 0)
        .then(|| format!("SELECT setval('{table}_id_seq', (SELECT MAX(id) FROM {table}))"))
}

/// Queries that read a table through its primary key and its k index; the
/// first returns the number of rows.
pub(crate) fn prewarm_sql(dialect: Dialect, table: &str, with_k: bool) -> Vec<String> {
    let n = table.trim_start_matches("sbtest");
    let mut v = match dialect {
        Dialect::Sqlite => vec![format!(
            "SELECT COUNT(*) FROM {table} WHERE LENGTH(c) + LENGTH(pad) >= 0"
        )],
        Dialect::Mysql => vec![format!(
            "SELECT COUNT(*) FROM {table} FORCE INDEX (PRIMARY) WHERE LENGTH(c) + LENGTH(pad) >= 0"
        )],
        Dialect::Postgres => vec![
            format!("SELECT COUNT(*) FROM {table} WHERE LENGTH(c) + LENGTH(pad) >= 0"),
            "SET enable_seqscan = off".to_string(),
            format!("SELECT SUM(id) FROM {table} WHERE id >= 0"),
        ],
    };
    if with_k {
        v.push(match dialect {
            Dialect::Sqlite => {
                format!("SELECT SUM(k) FROM {table} INDEXED BY k_{n} WHERE k >= -2147483648")
            }
            Dialect::Mysql => {
                format!("SELECT SUM(k) FROM {table} FORCE INDEX (k_{n}) WHERE k >= -2147483648")
            }
            Dialect::Postgres => format!("SELECT SUM(k) FROM {table} WHERE k >= -2147483648"),
        });
    }
    if dialect == Dialect::Postgres {
        v.push("RESET enable_seqscan".to_string());
    }
    v
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

pub fn check_ready(conn: &mut Connection, cfg: &OltpConfig) -> Result<Readiness, DbError> {
    let existing = conn.tables()?;
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
            .query_i64(&format!("SELECT MAX(id) FROM {t}"))?
            .unwrap_or(0);
        r.max_id = r.max_id.max(max);
        if i == 0 {
            r.first_table_rows = conn.query_i64(&format!("SELECT COUNT(*) FROM {t}"))?;
        }
    }
    Ok(r)
}
