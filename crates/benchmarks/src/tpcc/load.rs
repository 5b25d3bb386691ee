//! `prepare tpcc`: creates the nine tables and loads the specification's
//! initial population (clause 4.3.3.1), warehouse by warehouse on
//! `--threads` connections (COPY on PostgreSQL, LOAD DATA LOCAL INFILE or
//! multi-row INSERTs on MySQL/MariaDB, batched transactions on SQLite),
//! then builds the secondary indexes. `cleanup tpcc` drops it all.

use super::TpccConfig;
use super::procedures;
use super::random::{NuConstants, TpccRand, last_name, money, rate};
use super::schema::{
    INDEXES, TABLES, add_primary_key_sql, create_index, create_table_sql, deferred_keys,
    existing_tables,
};
use crate::benchmark::LoadProgress;
use crate::oltp::LoadReport;
use crate::random::derive_seed;
use dbmeter_db::{ConnectOptions, Connection, DbError, Dialect, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Receives one line per step; called from concurrent loaders.
pub type Say<'a> = &'a (dyn Fn(String) + Send + Sync);

pub const ITEMS: i64 = 100_000;
pub const DISTRICTS: i64 = 10;
pub const CUSTOMERS: i64 = 3_000;
pub const ORDERS: i64 = 3_000;
/// Orders 2101..3000 of each district are undelivered (in new_order).
pub const FIRST_NEW_ORDER: i64 = 2_101;

/// Rows of one warehouse, order lines counted at their expected 10 per order.
pub const ROWS_PER_WAREHOUSE: u64 = 1 + 10 + 30_000 * 3 + 9_000 + 300_000 + 100_000;

/// Rows generated between two updates of the progress counter.
const STEP: u64 = 4096;

/// Counts loaded rows into the progress bar in steps.
struct Counter<'a> {
    progress: &'a LoadProgress,
    pending: u64,
}

impl Counter<'_> {
    #[inline]
    fn one(&mut self) {
        self.pending += 1;
        if self.pending == STEP {
            self.progress.done.fetch_add(STEP, Ordering::Relaxed);
            self.pending = 0;
        }
    }
}

impl Drop for Counter<'_> {
    fn drop(&mut self) {
        self.progress
            .done
            .fetch_add(self.pending, Ordering::Relaxed);
    }
}

/// `YYYY-MM-DD HH:MM:SS` (UTC) of now: the load's timestamps.
fn now_text() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

fn text(s: &mut String) -> Value {
    Value::Text(std::mem::take(s))
}

fn a_str(r: &mut TpccRand, min: usize, max: usize) -> Value {
    let mut s = String::with_capacity(max);
    r.a_string(min, max, &mut s);
    Value::Text(s)
}

/// Street 1, street 2, city, state, zip.
fn address(r: &mut TpccRand, row: &mut Vec<Value>) {
    row.push(a_str(r, 10, 20));
    row.push(a_str(r, 10, 20));
    row.push(a_str(r, 10, 20));
    let mut s = String::with_capacity(9);
    r.state(&mut s);
    row.push(text(&mut s));
    r.zip(&mut s);
    row.push(text(&mut s));
}

fn money_value(cents: i64) -> Value {
    let mut s = String::with_capacity(12);
    money(cents, &mut s);
    Value::Text(s)
}

fn rate_value(v: i64) -> Value {
    let mut s = String::with_capacity(6);
    rate(v, &mut s);
    Value::Text(s)
}

/// Loads `table` with one row per key: `fill` pushes the key's values in
/// `columns` order. Returns the rows loaded.
fn load_table<K>(
    conn: &mut Connection,
    table: &str,
    columns: &[&str],
    mut keys: impl Iterator<Item = K> + Send,
    count: &mut Counter<'_>,
    mut fill: impl FnMut(K, &mut Vec<Value>) + Send,
) -> Result<u64, DbError> {
    let mut next = |row: &mut Vec<Value>| match keys.next() {
        Some(key) => {
            count.one();
            fill(key, row);
            true
        }
        None => false,
    };
    conn.bulk_insert(table, columns, &mut next)
}

/// Every (district, n) for n in 1..=per_district.
fn per_district(per_district: i64) -> impl Iterator<Item = (i64, i64)> + Send {
    (1..=DISTRICTS).flat_map(move |d| (1..=per_district).map(move |n| (d, n)))
}

fn load_items(conn: &mut Connection, seed: u64, progress: &LoadProgress) -> Result<u64, DbError> {
    let mut r = TpccRand::new(derive_seed(seed, 0x17e5));
    let mut count = Counter {
        progress,
        pending: 0,
    };
    load_table(
        conn,
        "item",
        &["i_id", "i_im_id", "i_name", "i_price", "i_data"],
        1..=ITEMS,
        &mut count,
        |id, row| {
            row.push(Value::Int(id));
            row.push(Value::Int(r.uniform(1, 10_000)));
            row.push(a_str(&mut r, 14, 24));
            row.push(money_value(r.uniform(100, 10_000)));
            let mut d = String::with_capacity(50);
            r.data_string(26, 50, &mut d);
            row.push(Value::Text(d));
        },
    )
    .map_err(|e| e.context("loading item"))
}

/// Loads every table's rows of warehouse `w`; the warehouse row comes
/// last, so that a warehouse row means a complete warehouse.
fn load_warehouse(
    conn: &mut Connection,
    w: i64,
    seed: u64,
    now: &str,
    progress: &LoadProgress,
) -> Result<u64, DbError> {
    let mut r = TpccRand::new(derive_seed(seed, w as u64));
    let c_load = NuConstants::for_load().c_last;
    let mut rows = 0u64;
    let mut count = Counter {
        progress,
        pending: 0,
    };
    let ctx =
        |t: &'static str| move |e: DbError| e.context(format!("loading {t} of warehouse {w}"));

    rows += load_table(
        conn,
        "stock",
        &[
            "s_i_id",
            "s_w_id",
            "s_quantity",
            "s_dist_01",
            "s_dist_02",
            "s_dist_03",
            "s_dist_04",
            "s_dist_05",
            "s_dist_06",
            "s_dist_07",
            "s_dist_08",
            "s_dist_09",
            "s_dist_10",
            "s_ytd",
            "s_order_cnt",
            "s_remote_cnt",
            "s_data",
        ],
        1..=ITEMS,
        &mut count,
        |i, row| {
            row.push(Value::Int(i));
            row.push(Value::Int(w));
            row.push(Value::Int(r.uniform(10, 100)));
            for _ in 0..10 {
                row.push(a_str(&mut r, 24, 24));
            }
            row.push(Value::Int(0));
            row.push(Value::Int(0));
            row.push(Value::Int(0));
            let mut d = String::with_capacity(50);
            r.data_string(26, 50, &mut d);
            row.push(Value::Text(d));
        },
    )
    .map_err(ctx("stock"))?;

    rows += load_table(
        conn,
        "district",
        &[
            "d_id",
            "d_w_id",
            "d_name",
            "d_street_1",
            "d_street_2",
            "d_city",
            "d_state",
            "d_zip",
            "d_tax",
            "d_ytd",
            "d_next_o_id",
        ],
        1..=DISTRICTS,
        &mut count,
        |d, row| {
            row.push(Value::Int(d));
            row.push(Value::Int(w));
            row.push(a_str(&mut r, 6, 10));
            address(&mut r, row);
            row.push(rate_value(r.uniform(0, 2000)));
            row.push(money_value(3_000_000));
            row.push(Value::Int(ORDERS + 1));
        },
    )
    .map_err(ctx("district"))?;

    rows += load_table(
        conn,
        "customer",
        &[
            "c_id",
            "c_d_id",
            "c_w_id",
            "c_first",
            "c_middle",
            "c_last",
            "c_street_1",
            "c_street_2",
            "c_city",
            "c_state",
            "c_zip",
            "c_phone",
            "c_since",
            "c_credit",
            "c_credit_lim",
            "c_discount",
            "c_balance",
            "c_ytd_payment",
            "c_payment_cnt",
            "c_delivery_cnt",
            "c_data",
        ],
        per_district(CUSTOMERS),
        &mut count,
        |(d, c), row| {
            row.push(Value::Int(c));
            row.push(Value::Int(d));
            row.push(Value::Int(w));
            row.push(a_str(&mut r, 8, 16));
            row.push(Value::Text("OE".into()));
            let mut s = String::with_capacity(16);
            let n = if c <= 1000 {
                c - 1
            } else {
                r.last_name_number(c_load)
            };
            last_name(n, &mut s);
            row.push(text(&mut s));
            address(&mut r, row);
            r.n_string(16, &mut s);
            row.push(text(&mut s));
            row.push(Value::Text(now.to_string()));
            row.push(Value::Text(
                if r.percent(10) { "BC" } else { "GC" }.to_string(),
            ));
            row.push(money_value(5_000_000));
            row.push(rate_value(r.uniform(0, 5000)));
            row.push(money_value(-1000));
            row.push(money_value(1000));
            row.push(Value::Int(1));
            row.push(Value::Int(0));
            row.push(a_str(&mut r, 300, 500));
        },
    )
    .map_err(ctx("customer"))?;

    rows += load_table(
        conn,
        "history",
        &[
            "h_c_id", "h_c_d_id", "h_c_w_id", "h_d_id", "h_w_id", "h_date", "h_amount", "h_data",
        ],
        per_district(CUSTOMERS),
        &mut count,
        |(d, c), row| {
            row.push(Value::Int(c));
            row.push(Value::Int(d));
            row.push(Value::Int(w));
            row.push(Value::Int(d));
            row.push(Value::Int(w));
            row.push(Value::Text(now.to_string()));
            row.push(money_value(1000));
            row.push(a_str(&mut r, 12, 24));
        },
    )
    .map_err(ctx("history"))?;

    // orders: customers in a random permutation per district, 5..15 lines.
    let n = (DISTRICTS * ORDERS) as usize;
    let mut customer_of = Vec::with_capacity(n);
    let mut lines_of = Vec::with_capacity(n);
    for _ in 0..DISTRICTS {
        let mut perm: Vec<i64> = (1..=CUSTOMERS).collect();
        r.shuffle(&mut perm);
        customer_of.extend(perm);
        for _ in 0..ORDERS {
            lines_of.push(r.uniform(5, 15));
        }
    }
    let at = |d: i64, o: i64| ((d - 1) * ORDERS + o - 1) as usize;
    // Delivered orders first, then the undelivered ones, district by
    // district each time.
    let orders_of = |delivered: bool| {
        let (first, last) = if delivered {
            (1, FIRST_NEW_ORDER - 1)
        } else {
            (FIRST_NEW_ORDER, ORDERS)
        };
        (1..=DISTRICTS).flat_map(move |d| (first..=last).map(move |o| (d, o)))
    };
    for delivered in [true, false] {
        // Undelivered orders leave o_carrier_id out: it stays NULL.
        let cols: &[&str] = &[
            "o_id",
            "o_d_id",
            "o_w_id",
            "o_c_id",
            "o_entry_d",
            "o_ol_cnt",
            "o_all_local",
            "o_carrier_id",
        ];
        let cols = if delivered { cols } else { &cols[..7] };
        rows += load_table(
            conn,
            "orders",
            cols,
            orders_of(delivered),
            &mut count,
            |(d, o), row| {
                row.push(Value::Int(o));
                row.push(Value::Int(d));
                row.push(Value::Int(w));
                row.push(Value::Int(customer_of[at(d, o)]));
                row.push(Value::Text(now.to_string()));
                row.push(Value::Int(lines_of[at(d, o)]));
                row.push(Value::Int(1));
                if delivered {
                    row.push(Value::Int(r.uniform(1, 10)));
                }
            },
        )
        .map_err(ctx("orders"))?;
    }

    // new_order: the undelivered orders.
    rows += load_table(
        conn,
        "new_order",
        &["no_o_id", "no_d_id", "no_w_id"],
        orders_of(false),
        &mut count,
        |(d, o), row| {
            row.push(Value::Int(o));
            row.push(Value::Int(d));
            row.push(Value::Int(w));
        },
    )
    .map_err(ctx("new_order"))?;

    for delivered in [true, false] {
        // Lines of undelivered orders leave ol_delivery_d out: NULL.
        let cols: &[&str] = &[
            "ol_o_id",
            "ol_d_id",
            "ol_w_id",
            "ol_number",
            "ol_i_id",
            "ol_supply_w_id",
            "ol_quantity",
            "ol_amount",
            "ol_dist_info",
            "ol_delivery_d",
        ];
        let cols = if delivered { cols } else { &cols[..9] };
        let lines_of = &lines_of;
        let lines = orders_of(delivered)
            .flat_map(move |(d, o)| (1..=lines_of[at(d, o)]).map(move |l| (d, o, l)));
        rows += load_table(
            conn,
            "order_line",
            cols,
            lines,
            &mut count,
            |(d, o, l), row| {
                row.push(Value::Int(o));
                row.push(Value::Int(d));
                row.push(Value::Int(w));
                row.push(Value::Int(l));
                row.push(Value::Int(r.uniform(1, ITEMS)));
                row.push(Value::Int(w));
                row.push(Value::Int(5));
                row.push(money_value(if delivered {
                    0
                } else {
                    r.uniform(1, 999_999)
                }));
                row.push(a_str(&mut r, 24, 24));
                if delivered {
                    row.push(Value::Text(now.to_string()));
                }
            },
        )
        .map_err(ctx("order_line"))?;
    }

    rows += load_table(
        conn,
        "warehouse",
        &[
            "w_id",
            "w_name",
            "w_street_1",
            "w_street_2",
            "w_city",
            "w_state",
            "w_zip",
            "w_tax",
            "w_ytd",
        ],
        std::iter::once(w),
        &mut count,
        |w, row| {
            row.push(Value::Int(w));
            row.push(a_str(&mut r, 6, 10));
            address(&mut r, row);
            row.push(rate_value(r.uniform(0, 2000)));
            row.push(money_value(30_000_000));
        },
    )
    .map_err(ctx("warehouse"))?;
    Ok(rows)
}

/// Creates the tables (those missing, for a warehouse range), loads the
/// range's warehouses (and the items, with warehouse 1) on `workers`
/// connections, and builds the indexes once every warehouse is there.
pub fn prepare(
    opts: &ConnectOptions,
    cfg: &TpccConfig,
    seed: u64,
    workers: usize,
    say: Say<'_>,
    progress: &LoadProgress,
) -> Result<LoadReport, DbError> {
    let began = Instant::now();
    let mut conn = Connection::connect(opts)?;
    let dialect = conn.dialect();
    if cfg.partition && dialect == Dialect::Sqlite {
        return Err(DbError::usage(
            "--partition: SQLite has no partitioned tables; leave it off for SQLite".into(),
        ));
    }
    let existing = existing_tables(&mut conn)?;
    if cfg.full_range() && !existing.is_empty() {
        return Err(DbError::other(
            "exists",
            format!(
                "table {} already exists in {}; run `dbmeter cleanup tpcc` first or use another --db",
                existing[0], opts.target
            ),
        ));
    }
    for table in TABLES {
        if existing.contains(&table) {
            continue;
        }
        say(format!("Creating table '{table}'..."));
        for sql in create_table_sql(cfg, dialect, table) {
            conn.execute(&sql)
                .map_err(|e| e.context(format!("creating {table}")))?;
        }
    }
    if !cfg.full_range() {
        let loaded = conn
            .query_i64(&format!(
                "SELECT COUNT(*) FROM warehouse WHERE w_id BETWEEN {} AND {}",
                cfg.start, cfg.end
            ))?
            .unwrap_or(0);
        if loaded > 0 {
            return Err(DbError::other(
                "exists",
                format!(
                    "{loaded} of warehouses {}..{} are already loaded in {}",
                    cfg.start, cfg.end, opts.target
                ),
            ));
        }
    }
    let with_items = cfg.start == 1;
    let count = cfg.end - cfg.start + 1;
    say(format!(
        "Loading {} warehouse{} ({}..{}){} with {}",
        count,
        if count == 1 { "" } else { "s" },
        cfg.start,
        cfg.end,
        if with_items { " and the items" } else { "" },
        conn.bulk_method()?
    ));
    progress.total.fetch_add(
        count * ROWS_PER_WAREHOUSE + if with_items { ITEMS as u64 } else { 0 },
        Ordering::Relaxed,
    );
    let workers = match dialect {
        Dialect::Sqlite => 1,
        _ => workers.clamp(1, count as usize + usize::from(with_items)),
    };
    // Job 0 is the item table (with warehouse 1), then the warehouses.
    let next_job = AtomicU64::new(if with_items { 0 } else { 1 });
    let now = now_text();
    let mut report = LoadReport {
        tables: TABLES.len() as u32,
        ..Default::default()
    };
    let loaded_rows =
        crate::parallel::on_connections(opts, workers, Some(&mut conn), &|_, conn| {
            let mut rows = 0u64;
            loop {
                let job = next_job.fetch_add(1, Ordering::Relaxed);
                if job == 0 {
                    say("Loading item...".into());
                    rows += load_items(conn, seed, progress)?;
                    continue;
                }
                let w = cfg.start + job - 1;
                if w > cfg.end {
                    break;
                }
                rows += load_warehouse(conn, w as i64, seed, &now, progress)?;
                say(format!("Loaded warehouse {w}"));
            }
            Ok(rows)
        })?;
    report.rows += loaded_rows.iter().sum::<u64>();
    drop(conn);
    let mut conn = Connection::connect(opts)?;
    let loaded = conn
        .query_i64("SELECT COUNT(*) FROM warehouse")?
        .unwrap_or(0);
    if loaded as u64 >= cfg.warehouses {
        say("Creating indexes and updating table statistics...".into());
        after_load(opts, cfg, dialect, workers, &mut conn)?;
    } else {
        say(format!(
            "{loaded} of {} warehouses are loaded: the secondary indexes are built by the prepare that loads the last ones",
            cfg.warehouses
        ));
    }
    if dialect != Dialect::Sqlite {
        say("Creating stored procedures...".into());
        if let Err(e) = procedures::install(&mut conn) {
            say(format!(
                "note: the stored procedures were not created ({e}); `run tpcc --stored-procedures` tries again"
            ));
        }
    }
    report.elapsed = began.elapsed();
    Ok(report)
}

/// The work after the load, spread over `workers` connections (one table
/// at a time each): the primary keys deferred by
/// [`deferred_keys`](super::schema::deferred_keys), the secondary indexes,
/// then the tables' statistics.
fn after_load(
    opts: &ConnectOptions,
    cfg: &TpccConfig,
    dialect: Dialect,
    workers: usize,
    conn: &mut Connection,
) -> Result<(), DbError> {
    // Per table, in order: its key, its secondary index, ANALYZE.
    let mut steps: Vec<Vec<String>> = Vec::new();
    // The largest tables first, so that they do not come last.
    for t in [
        "order_line",
        "stock",
        "customer",
        "orders",
        "history",
        "new_order",
        "item",
        "district",
        "warehouse",
    ] {
        let mut v = Vec::new();
        if deferred_keys(cfg, dialect)
            && let Some(sql) = add_primary_key_sql(t)
        {
            v.push(sql);
        }
        v.push(format!("INDEX {t}"));
        v.push(match dialect {
            Dialect::Mysql => format!("ANALYZE TABLE {t}"),
            _ => format!("ANALYZE {t}"),
        });
        steps.push(v);
    }
    let workers = match dialect {
        Dialect::Sqlite => 1,
        _ => workers.clamp(1, steps.len()),
    };
    let next = AtomicU64::new(0);
    crate::parallel::on_connections(opts, workers, Some(conn), &|_, conn| {
        loop {
            let k = next.fetch_add(1, Ordering::Relaxed) as usize;
            let Some(list) = steps.get(k) else { break };
            for sql in list {
                match sql.strip_prefix("INDEX ") {
                    Some(table) => {
                        for index in INDEXES.iter().filter(|i| i.1 == table) {
                            create_index(conn, *index)?;
                        }
                    }
                    None => {
                        conn.execute(sql).map_err(|e| e.context(sql))?;
                    }
                }
            }
        }
        Ok(())
    })?;
    Ok(())
}

/// Drops the nine tables and the stored procedures. Returns the dropped
/// tables.
pub fn cleanup(opts: &ConnectOptions, say: Say<'_>) -> Result<Vec<String>, DbError> {
    let mut conn = Connection::connect(opts)?;
    let mut dropped = Vec::new();
    let existing = existing_tables(&mut conn)?;
    for table in TABLES.iter().rev() {
        if existing.contains(table) {
            say(format!("Dropping table '{table}'..."));
            conn.execute(&format!("DROP TABLE IF EXISTS {table}"))?;
            dropped.push(table.to_string());
        }
    }
    if conn.dialect() != Dialect::Sqlite {
        procedures::uninstall(&mut conn)?;
    }
    Ok(dropped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_civil_dates() {
        let t = now_text();
        assert_eq!(t.len(), 19, "{t}");
        assert!(t.starts_with("20"), "{t}");
        assert_eq!(&t[4..5], "-");
        assert_eq!(&t[10..11], " ");
    }
}
