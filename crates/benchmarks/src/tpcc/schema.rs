//! The nine tables of TPC-C: names, DDL by dialect, optional hash
//! partitioning by warehouse, and the secondary indexes built after the load.

use super::TpccConfig;
use dbmeter_db::{Connection, DbError, Dialect};

/// The tables, in the order they are created (and dropped in reverse).
pub const TABLES: [&str; 9] = [
    "warehouse",
    "district",
    "customer",
    "history",
    "new_order",
    "orders",
    "order_line",
    "item",
    "stock",
];

/// The column holding the warehouse id of the tables that can be
/// partitioned by warehouse.
fn partition_column(table: &str) -> Option<&'static str> {
    Some(match table {
        "customer" => "c_w_id",
        "history" => "h_w_id",
        "new_order" => "no_w_id",
        "orders" => "o_w_id",
        "order_line" => "ol_w_id",
        "stock" => "s_w_id",
        _ => return None,
    })
}

/// Columns and primary key of each table; `{ts}` is the dialect's
/// timestamp type.
fn columns(table: &str) -> &'static str {
    match table {
        "warehouse" => {
            "w_id INTEGER NOT NULL, w_name VARCHAR(10), w_street_1 VARCHAR(20), \
             w_street_2 VARCHAR(20), w_city VARCHAR(20), w_state CHAR(2), w_zip CHAR(9), \
             w_tax DECIMAL(4,4), w_ytd DECIMAL(12,2), PRIMARY KEY (w_id)"
        }
        "district" => {
            "d_id INTEGER NOT NULL, d_w_id INTEGER NOT NULL, d_name VARCHAR(10), \
             d_street_1 VARCHAR(20), d_street_2 VARCHAR(20), d_city VARCHAR(20), \
             d_state CHAR(2), d_zip CHAR(9), d_tax DECIMAL(4,4), d_ytd DECIMAL(12,2), \
             d_next_o_id INTEGER, PRIMARY KEY (d_w_id, d_id)"
        }
        "customer" => {
            "c_id INTEGER NOT NULL, c_d_id INTEGER NOT NULL, c_w_id INTEGER NOT NULL, \
             c_first VARCHAR(16), c_middle CHAR(2), c_last VARCHAR(16), \
             c_street_1 VARCHAR(20), c_street_2 VARCHAR(20), c_city VARCHAR(20), \
             c_state CHAR(2), c_zip CHAR(9), c_phone CHAR(16), c_since {ts}, \
             c_credit CHAR(2), c_credit_lim DECIMAL(12,2), c_discount DECIMAL(4,4), \
             c_balance DECIMAL(12,2), c_ytd_payment DECIMAL(12,2), c_payment_cnt INTEGER, \
             c_delivery_cnt INTEGER, c_data VARCHAR(500), PRIMARY KEY (c_w_id, c_d_id, c_id)"
        }
        "history" => {
            "h_c_id INTEGER, h_c_d_id INTEGER, h_c_w_id INTEGER, h_d_id INTEGER, \
             h_w_id INTEGER, h_date {ts}, h_amount DECIMAL(6,2), h_data VARCHAR(24)"
        }
        "new_order" => {
            "no_o_id INTEGER NOT NULL, no_d_id INTEGER NOT NULL, no_w_id INTEGER NOT NULL, \
             PRIMARY KEY (no_w_id, no_d_id, no_o_id)"
        }
        "orders" => {
            "o_id INTEGER NOT NULL, o_d_id INTEGER NOT NULL, o_w_id INTEGER NOT NULL, \
             o_c_id INTEGER, o_entry_d {ts}, o_carrier_id INTEGER, o_ol_cnt INTEGER, \
             o_all_local INTEGER, PRIMARY KEY (o_w_id, o_d_id, o_id)"
        }
        "order_line" => {
            "ol_o_id INTEGER NOT NULL, ol_d_id INTEGER NOT NULL, ol_w_id INTEGER NOT NULL, \
             ol_number INTEGER NOT NULL, ol_i_id INTEGER, ol_supply_w_id INTEGER, \
             ol_delivery_d {ts}, ol_quantity INTEGER, ol_amount DECIMAL(6,2), \
             ol_dist_info CHAR(24), PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)"
        }
        "item" => {
            "i_id INTEGER NOT NULL, i_im_id INTEGER, i_name VARCHAR(24), \
             i_price DECIMAL(5,2), i_data VARCHAR(50), PRIMARY KEY (i_id)"
        }
        "stock" => {
            "s_i_id INTEGER NOT NULL, s_w_id INTEGER NOT NULL, s_quantity INTEGER, \
             s_dist_01 CHAR(24), s_dist_02 CHAR(24), s_dist_03 CHAR(24), s_dist_04 CHAR(24), \
             s_dist_05 CHAR(24), s_dist_06 CHAR(24), s_dist_07 CHAR(24), s_dist_08 CHAR(24), \
             s_dist_09 CHAR(24), s_dist_10 CHAR(24), s_ytd INTEGER, s_order_cnt INTEGER, \
             s_remote_cnt INTEGER, s_data VARCHAR(50), PRIMARY KEY (s_w_id, s_i_id)"
        }
        _ => "",
    }
}

/// Number of hash partitions with `--partition`: one per warehouse, at most 128.
pub fn partitions(cfg: &TpccConfig) -> u64 {
    cfg.warehouses.clamp(1, 128)
}

/// The primary key columns of `table` (None for history).
pub fn primary_key(table: &str) -> Option<&'static str> {
    let c = columns(table);
    let at = c.find("PRIMARY KEY (")? + "PRIMARY KEY (".len();
    c[at..].strip_suffix(')')
}

/// True when the primary keys are added after the load: on PostgreSQL
/// (a heap loaded without an index, then indexes built by sorting, is
/// faster) when one prepare loads every warehouse. InnoDB tables are
/// clustered by their key, which must be there from the start.
pub fn deferred_keys(cfg: &TpccConfig, dialect: Dialect) -> bool {
    dialect == Dialect::Postgres && cfg.full_range()
}

/// The statement that adds the primary key of `table` after the load.
pub fn add_primary_key_sql(table: &str) -> Option<String> {
    primary_key(table).map(|k| format!("ALTER TABLE {table} ADD PRIMARY KEY ({k})"))
}

/// The statements that create `table` (the table, and with partitioning
/// on PostgreSQL its partitions).
pub fn create_table_sql(cfg: &TpccConfig, dialect: Dialect, table: &str) -> Vec<String> {
    let ts = match dialect {
        Dialect::Mysql => "DATETIME",
        _ => "TIMESTAMP",
    };
    let mut cols = columns(table).replace("{ts}", ts);
    if deferred_keys(cfg, dialect)
        && let Some(at) = cols.find(", PRIMARY KEY (")
    {
        cols.truncate(at);
    }
    let part = if cfg.partition {
        partition_column(table)
    } else {
        None
    };
    let n = partitions(cfg);
    match (dialect, part) {
        (Dialect::Mysql, Some(col)) => vec![format!(
            "CREATE TABLE {table} ({cols}) ENGINE=InnoDB PARTITION BY HASH ({col}) PARTITIONS {n}"
        )],
        (Dialect::Mysql, None) => vec![format!("CREATE TABLE {table} ({cols}) ENGINE=InnoDB")],
        (Dialect::Postgres, Some(col)) => {
            let mut v = vec![format!(
                "CREATE TABLE {table} ({cols}) PARTITION BY HASH ({col})"
            )];
            for i in 0..n {
                v.push(format!(
                    "CREATE TABLE {table}_p{i} PARTITION OF {table} FOR VALUES WITH (MODULUS {n}, REMAINDER {i})"
                ));
            }
            v
        }
        _ => vec![format!("CREATE TABLE {table} ({cols})")],
    }
}

/// The secondary indexes: customers by last name (Payment and
/// Order-Status by name) and orders by customer (Order-Status).
pub const INDEXES: [(&str, &str, &str); 2] = [
    (
        "tpcc_customer_name",
        "customer",
        "c_w_id, c_d_id, c_last, c_first",
    ),
    (
        "tpcc_orders_customer",
        "orders",
        "o_w_id, o_d_id, o_c_id, o_id",
    ),
];

/// Creates the secondary indexes that do not exist yet. Returns how many
/// it created.
pub fn create_indexes(conn: &mut Connection) -> Result<usize, DbError> {
    let mut made = 0;
    for index in INDEXES {
        made += create_index(conn, index)?;
    }
    Ok(made)
}

/// Creates one secondary index unless it exists. Returns 1 when it did.
pub fn create_index(
    conn: &mut Connection,
    (name, table, cols): (&str, &str, &str),
) -> Result<usize, DbError> {
    let mut made = 0;
    {
        let exists = match conn.dialect() {
            Dialect::Mysql => conn
                .query_i64(&format!(
                    "SELECT COUNT(*) FROM information_schema.statistics WHERE table_schema = DATABASE() \
                     AND table_name = '{table}' AND index_name = '{name}'"
                ))?,
            Dialect::Postgres => conn
                .query_i64(&format!(
                    "SELECT COUNT(*) FROM pg_indexes WHERE schemaname = current_schema() AND indexname = '{name}'"
                ))?,
            Dialect::Sqlite => conn
                .query_i64(&format!(
                    "SELECT COUNT(*) FROM sqlite_schema WHERE type = 'index' AND name = '{name}'"
                ))?,
        }
        .unwrap_or(0)
            > 0;
        if exists {
            return Ok(0);
        }
        match conn.execute(&format!("CREATE INDEX {name} ON {table} ({cols})")) {
            Ok(_) => made += 1,
            // Another loader (of another warehouse range) made it meanwhile.
            Err(e) if e.code == "1061" || e.code == "42P07" => {}
            Err(e) => return Err(e.context(format!("creating index {name}"))),
        }
    }
    Ok(made)
}

/// Which of the nine tables exist.
pub fn existing_tables(conn: &mut Connection) -> Result<Vec<&'static str>, DbError> {
    let have = conn.tables()?;
    Ok(TABLES
        .iter()
        .copied()
        .filter(|t| have.iter().any(|h| h.eq_ignore_ascii_case(t)))
        .collect())
}
