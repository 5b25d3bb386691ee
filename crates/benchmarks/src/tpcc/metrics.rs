//! The database's own counts behind NOPM and TPM, read at the start and
//! the end of the measured interval: new orders from the districts'
//! D_NEXT_O_ID, transactions from the server's commit and rollback
//! counters (MySQL/MariaDB Com_commit + Com_rollback, PostgreSQL
//! xact_commit + xact_rollback of the database), as HammerDB does.

use dbmeter_db::{Connection, DbError, Dialect};

/// One reading.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// Sum of D_NEXT_O_ID over the run's districts.
    pub next_order_ids: i64,
    /// Commits + rollbacks the server counted (None on SQLite).
    pub server_transactions: Option<u64>,
}

/// Reads the counters, over warehouses `1..=warehouses`.
pub fn snapshot(conn: &mut Connection, warehouses: u64) -> Result<Snapshot, DbError> {
    let next_order_ids = conn
        .query_i64(&format!(
            "SELECT SUM(d_next_o_id) FROM district WHERE d_w_id BETWEEN 1 AND {warehouses}"
        ))?
        .unwrap_or(0);
    let server_transactions = match conn.dialect() {
        Dialect::Mysql => {
            let rows = conn
                .query_rows(
                    "SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_commit', 'Com_rollback')",
                )?;
            Some(
                rows.pairs()
                    .values()
                    .filter_map(|v| v.trim().parse::<u64>().ok())
                    .sum(),
            )
        }
        Dialect::Postgres => conn
            .query_i64(
                "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()",
            )?
            .map(|v| v as u64),
        Dialect::Sqlite => None,
    };
    Ok(Snapshot {
        next_order_ids,
        server_transactions,
    })
}

/// Rates per minute between two readings `secs` apart.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rates {
    pub new_orders: i64,
    pub nopm: f64,
    pub server_transactions: Option<u64>,
    pub tpm: Option<f64>,
}

pub fn rates(before: &Snapshot, after: &Snapshot, secs: f64) -> Rates {
    let per_min = |n: f64| if secs > 0.0 { n * 60.0 / secs } else { 0.0 };
    let new_orders = after.next_order_ids - before.next_order_ids;
    let server_transactions = match (before.server_transactions, after.server_transactions) {
        (Some(a), Some(b)) => Some(b.saturating_sub(a)),
        _ => None,
    };
    Rates {
        new_orders,
        nopm: per_min(new_orders as f64),
        server_transactions,
        tpm: server_transactions.map(|n| per_min(n as f64)),
    }
}
