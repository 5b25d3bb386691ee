//! `check tpcc`: the row counts of a warehouse range and the four
//! consistency conditions of clause 3.3.2 that must hold at any time.

use super::load::{CUSTOMERS, DISTRICTS, ITEMS, ORDERS};
use dbmeter_db::{Connection, DbError};
use std::collections::BTreeMap;

/// One verified property.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckLine {
    pub name: String,
    pub ok: bool,
    /// What was found (counts, or the first districts that fail).
    pub detail: String,
}

/// Everything `check` verified.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CheckReport {
    pub lines: Vec<CheckLine>,
}

impl CheckReport {
    pub fn ok(&self) -> bool {
        self.lines.iter().all(|l| l.ok)
    }

    pub fn failed(&self) -> Vec<&CheckLine> {
        self.lines.iter().filter(|l| !l.ok).collect()
    }
}

type Key = (i64, i64);

fn int(v: &Option<String>) -> Option<i64> {
    v.as_deref().and_then(|s| {
        s.trim()
            .parse::<i64>()
            .ok()
            .or_else(|| s.trim().parse::<f64>().ok().map(|f| f as i64))
    })
}

fn num(v: &Option<String>) -> Option<f64> {
    v.as_deref().and_then(|s| s.trim().parse::<f64>().ok())
}

/// Rows of `sql` as (w, d) -> the other columns.
fn by_district(
    conn: &mut Connection,
    sql: &str,
) -> Result<BTreeMap<Key, Vec<Option<String>>>, DbError> {
    let rows = conn.query_rows(sql)?;
    Ok(rows
        .rows
        .into_iter()
        .filter_map(|r| {
            let w = int(r.first()?)?;
            let d = int(r.get(1)?)?;
            Some(((w, d), r[2..].to_vec()))
        })
        .collect())
}

/// Up to three failing districts, for the message.
fn first_failures(bad: &[String]) -> String {
    let mut s = bad.iter().take(3).cloned().collect::<Vec<_>>().join("; ");
    if bad.len() > 3 {
        s.push_str(&format!("; and {} more", bad.len() - 3));
    }
    s
}

/// Checks warehouses `start..=end`.
pub fn check(conn: &mut Connection, start: u64, end: u64) -> Result<CheckReport, DbError> {
    let mut report = CheckReport::default();
    let w_count = (end - start + 1) as i64;
    let range = |col: &str| format!("{col} BETWEEN {start} AND {end}");

    // Row counts.
    let mut counts = Vec::new();
    let mut bad = Vec::new();
    for (table, col, per_warehouse, exact) in [
        ("warehouse", "w_id", 1, true),
        ("district", "d_w_id", DISTRICTS, true),
        ("customer", "c_w_id", DISTRICTS * CUSTOMERS, true),
        ("stock", "s_w_id", ITEMS, true),
        ("history", "h_w_id", DISTRICTS * CUSTOMERS, false),
        ("orders", "o_w_id", DISTRICTS * ORDERS, false),
        ("new_order", "no_w_id", 0, false),
        ("order_line", "ol_w_id", DISTRICTS * ORDERS * 5, false),
    ] {
        let n = conn
            .query_i64(&format!(
                "SELECT COUNT(*) FROM {table} WHERE {}",
                range(col)
            ))?
            .unwrap_or(0);
        let want = per_warehouse * w_count;
        if (exact && n != want) || (!exact && n < want) {
            bad.push(format!(
                "{table} has {n} rows, expected {}{want}",
                if exact { "" } else { "at least " }
            ));
        }
        counts.push(format!("{table} {n}"));
    }
    let items = conn.query_i64("SELECT COUNT(*) FROM item")?.unwrap_or(0);
    if items != ITEMS {
        bad.push(format!("item has {items} rows, expected {ITEMS}"));
    }
    counts.push(format!("item {items}"));
    report.lines.push(CheckLine {
        name: format!("row counts of warehouses {start}..{end}"),
        ok: bad.is_empty(),
        detail: if bad.is_empty() {
            counts.join(", ")
        } else {
            first_failures(&bad)
        },
    });

    // 1. W_YTD = sum(D_YTD).
    let w_ytd = conn.query_rows(&format!(
        "SELECT w_id, w_ytd FROM warehouse WHERE {}",
        range("w_id")
    ))?;
    let d_ytd: BTreeMap<i64, Option<f64>> = conn
        .query_rows(&format!(
            "SELECT d_w_id, SUM(d_ytd) FROM district WHERE {} GROUP BY d_w_id",
            range("d_w_id")
        ))?
        .rows
        .iter()
        .filter_map(|r| Some((int(r.first()?)?, num(r.get(1)?))))
        .collect();
    let mut bad = Vec::new();
    for r in &w_ytd.rows {
        let (Some(w), Some(ytd)) = (r.first().and_then(int), r.get(1).and_then(num)) else {
            continue;
        };
        let sum = d_ytd.get(&w).copied().flatten();
        if sum.is_none_or(|s| (s - ytd).abs() > 0.005) {
            bad.push(format!(
                "warehouse {w}: w_ytd {ytd:.2}, sum(d_ytd) {}",
                sum.map_or("none".into(), |s| format!("{s:.2}"))
            ));
        }
    }
    report.lines.push(CheckLine {
        name: "condition 1: W_YTD = sum(D_YTD)".into(),
        ok: bad.is_empty(),
        detail: if bad.is_empty() {
            format!("{} warehouses", w_ytd.rows.len())
        } else {
            first_failures(&bad)
        },
    });

    // 2. D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID); 3. max(NO_O_ID) -
    // min(NO_O_ID) + 1 = rows in new_order; 4. sum(O_OL_CNT) = rows in
    // order_line (per district).
    let next = by_district(
        conn,
        &format!(
            "SELECT d_w_id, d_id, d_next_o_id FROM district WHERE {}",
            range("d_w_id")
        ),
    )?;
    let orders = by_district(
        conn,
        &format!(
            "SELECT o_w_id, o_d_id, MAX(o_id), SUM(o_ol_cnt) FROM orders WHERE {} GROUP BY o_w_id, o_d_id",
            range("o_w_id")
        ),
    )?;
    let new_orders = by_district(
        conn,
        &format!(
            "SELECT no_w_id, no_d_id, MAX(no_o_id), MIN(no_o_id), COUNT(*) FROM new_order WHERE {} GROUP BY no_w_id, no_d_id",
            range("no_w_id")
        ),
    )?;
    let lines = by_district(
        conn,
        &format!(
            "SELECT ol_w_id, ol_d_id, COUNT(*) FROM order_line WHERE {} GROUP BY ol_w_id, ol_d_id",
            range("ol_w_id")
        ),
    )?;
    let (mut bad2, mut bad3, mut bad4) = (Vec::new(), Vec::new(), Vec::new());
    for (&(w, d), v) in &next {
        let next_o = v.first().and_then(int).unwrap_or(0);
        let o = orders.get(&(w, d));
        let max_o = o.and_then(|v| v.first().and_then(int));
        let sum_lines = o.and_then(|v| v.get(1).and_then(int)).unwrap_or(0);
        let no = new_orders.get(&(w, d));
        let max_no = no.and_then(|v| v.first().and_then(int));
        let min_no = no.and_then(|v| v.get(1).and_then(int));
        let count_no = no.and_then(|v| v.get(2).and_then(int)).unwrap_or(0);
        // A district whose new orders were all delivered has no max(NO_O_ID).
        if Some(next_o - 1) != max_o || max_no.is_some_and(|m| m != next_o - 1) {
            bad2.push(format!(
                "warehouse {w} district {d}: d_next_o_id - 1 = {}, max(o_id) = {}, max(no_o_id) = {}",
                next_o - 1,
                max_o.map_or("none".into(), |x| x.to_string()),
                max_no.map_or("none".into(), |x| x.to_string())
            ));
        }
        let span = match (max_no, min_no) {
            (Some(a), Some(b)) => a - b + 1,
            _ => 0,
        };
        if span != count_no {
            bad3.push(format!(
                "warehouse {w} district {d}: max(no_o_id) - min(no_o_id) + 1 = {span}, new_order rows {count_no}"
            ));
        }
        let count_lines = lines
            .get(&(w, d))
            .and_then(|v| v.first().and_then(int))
            .unwrap_or(0);
        if sum_lines != count_lines {
            bad4.push(format!(
                "warehouse {w} district {d}: sum(o_ol_cnt) = {sum_lines}, order_line rows {count_lines}"
            ));
        }
    }
    let districts = format!("{} districts", next.len());
    for (name, bad) in [
        (
            "condition 2: D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)",
            bad2,
        ),
        (
            "condition 3: max(NO_O_ID) - min(NO_O_ID) + 1 = rows in new_order",
            bad3,
        ),
        ("condition 4: sum(O_OL_CNT) = rows in order_line", bad4),
    ] {
        report.lines.push(CheckLine {
            name: name.into(),
            ok: bad.is_empty(),
            detail: if bad.is_empty() {
                districts.clone()
            } else {
                first_failures(&bad)
            },
        });
    }
    Ok(report)
}
