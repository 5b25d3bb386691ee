//! Delivery (clause 2.7): for each of the 10 districts, the oldest
//! undelivered order is delivered: removed from new_order, given a
//! carrier, its lines dated, and its amount added to the customer's
//! balance. Run at once, in one transaction (the specification lets it be
//! queued; dbmeter measures it like the others).
//!
//! The 10 districts are handled together, one statement per step for all
//! of them; when another terminal delivered one of the orders first (the
//! rows removed from new_order are fewer than the orders found), the
//! transaction starts over district by district.

use super::random::money;
use super::sql::{Ended, Exec, TxStmts, fixed, for_update, int, money_param};
use super::terminal::Gen;
use dbmeter_db::{Connection, DbError, Param, StmtId};

#[derive(Clone, Debug, PartialEq)]
pub struct Input {
    pub w_id: i64,
    pub carrier_id: i64,
}

impl Input {
    pub fn generate(g: &mut Gen) -> Input {
        Input {
            w_id: g.warehouse(),
            carrier_id: g.r.uniform(1, 10),
        }
    }
}

pub struct Stmts {
    oldest_all: StmtId,
    /// The batched steps for `n` districts: index n - 1.
    remove_n: Vec<StmtId>,
    customers_n: Vec<StmtId>,
    carrier_n: Vec<StmtId>,
    date_lines_n: Vec<StmtId>,
    amounts_n: Vec<StmtId>,
    credit_n: Vec<StmtId>,
    oldest: StmtId,
    remove: StmtId,
    customer: StmtId,
    carrier: StmtId,
    date_lines: StmtId,
    amount: StmtId,
    credit: StmtId,
}

pub fn register(conn: &mut Connection) -> Stmts {
    let d = conn.dialect();
    let fu = for_update(d);
    let m = money_param(d);
    // `((x_d_id = ? AND x_o_id = ?) OR ...)` for n districts.
    let keys = |d: &str, o: &str, n: usize| {
        format!(
            "({})",
            vec![format!("({d} = ? AND {o} = ?)"); n].join(" OR ")
        )
    };
    let batch = |conn: &mut Connection, f: &dyn Fn(usize) -> String| {
        (1..=10).map(|n| conn.register(&f(n))).collect::<Vec<_>>()
    };
    Stmts {
        oldest_all: conn.register(
            "SELECT no_d_id, MIN(no_o_id) FROM new_order WHERE no_w_id = ? GROUP BY no_d_id",
        ),
        remove_n: batch(conn, &|n| {
            format!(
                "DELETE FROM new_order WHERE no_w_id = ? AND {}",
                keys("no_d_id", "no_o_id", n)
            )
        }),
        customers_n: batch(conn, &|n| {
            format!(
                "SELECT o_d_id, o_c_id FROM orders WHERE o_w_id = ? AND {}",
                keys("o_d_id", "o_id", n)
            )
        }),
        carrier_n: batch(conn, &|n| {
            format!(
                "UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND {}",
                keys("o_d_id", "o_id", n)
            )
        }),
        date_lines_n: batch(conn, &|n| {
            format!(
                "UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP WHERE ol_w_id = ? AND {}",
                keys("ol_d_id", "ol_o_id", n)
            )
        }),
        amounts_n: batch(conn, &|n| {
            format!(
                "SELECT ol_d_id, SUM(ol_amount) FROM order_line WHERE ol_w_id = ? AND {} GROUP BY ol_d_id",
                keys("ol_d_id", "ol_o_id", n)
            )
        }),
        credit_n: batch(conn, &|n| {
            format!(
                "UPDATE customer SET c_balance = c_balance + CASE c_d_id {} END, \
                 c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = ? AND {}",
                vec![format!("WHEN ? THEN {m}"); n].join(" "),
                keys("c_d_id", "c_id", n)
            )
        }),
        oldest: conn.register(&format!(
            "SELECT no_o_id FROM new_order WHERE no_w_id = ? AND no_d_id = ? \
             ORDER BY no_o_id LIMIT 1{fu}"
        )),
        remove: conn.register(
            "DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?",
        ),
        customer: conn
            .register("SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?"),
        carrier: conn.register(
            "UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?",
        ),
        date_lines: conn.register(
            "UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP \
             WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
        ),
        amount: conn.register(
            "SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
        ),
        credit: conn.register(&format!(
            "UPDATE customer SET c_balance = c_balance + {m}, c_delivery_cnt = c_delivery_cnt + 1 \
             WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"
        )),
    }
}

/// Runs Delivery inside the caller's write transaction (which it may roll
/// back and begin again with `tx`). Returns how many districts had no
/// order to deliver.
pub fn run(x: &mut Exec<'_>, s: &Stmts, tx: &TxStmts, i: &Input) -> Result<(Ended, u32), DbError> {
    if let Some(skipped) = run_batched(x, s, i)? {
        return Ok((Ended::Committed, skipped));
    }
    x.run(tx.rollback, &[])?;
    if let Some(b) = tx.begin_write {
        x.run(b, &[])?;
    }
    run_by_district(x, s, i)
}

/// All districts at once; None when another terminal got in the way
/// (nothing is changed then but the rows to roll back).
fn run_batched(x: &mut Exec<'_>, s: &Stmts, i: &Input) -> Result<Option<u32>, DbError> {
    let w = i.w_id;
    let rows = x.fetch(s.oldest_all, &[Param::Int(w)])?;
    let mut orders: Vec<(i64, i64)> = (0..rows)
        .map(|r| (int(x.at(r, 2, 0)), int(x.at(r, 2, 1))))
        .filter(|&(d, _)| (1..=10).contains(&d))
        .collect();
    orders.sort_unstable();
    let n = orders.len();
    let skipped = 10 - n as u32;
    if n == 0 {
        return Ok(Some(skipped));
    }
    let keys: Vec<Param<'_>> = orders
        .iter()
        .flat_map(|&(d, o)| [Param::Int(d), Param::Int(o)])
        .collect();
    let mut p = Vec::with_capacity(2 * n + 2);
    p.push(Param::Int(w));
    p.extend_from_slice(&keys);
    if x.run(s.remove_n[n - 1], &p)? != n as u64 {
        return Ok(None);
    }
    let rows = x.fetch(s.customers_n[n - 1], &p)?;
    let customers: Vec<(i64, i64)> = (0..rows)
        .map(|r| (int(x.at(r, 2, 0)), int(x.at(r, 2, 1))))
        .collect();
    let mut q = Vec::with_capacity(2 * n + 2);
    q.push(Param::Int(i.carrier_id));
    q.extend_from_slice(&p);
    x.run(s.carrier_n[n - 1], &q)?;
    x.run(s.date_lines_n[n - 1], &p)?;
    let rows = x.fetch(s.amounts_n[n - 1], &p)?;
    let mut amounts: Vec<(i64, String)> = (0..rows)
        .map(|r| {
            let mut a = String::with_capacity(12);
            money(fixed(x.at(r, 2, 1), 100), &mut a);
            (int(x.at(r, 2, 0)), a)
        })
        .collect();
    // Every district's order has lines; keep the order of `customers`.
    for &(d, _) in &customers {
        if !amounts.iter().any(|a| a.0 == d) {
            amounts.push((d, "0.00".into()));
        }
    }
    let m = customers.len();
    if m == 0 {
        return Ok(Some(skipped));
    }
    let mut c = Vec::with_capacity(4 * m + 1);
    for &(d, _) in &customers {
        let a = amounts
            .iter()
            .find(|a| a.0 == d)
            .map_or("0.00", |a| a.1.as_str());
        c.push(Param::Int(d));
        c.push(Param::Text(a));
    }
    c.push(Param::Int(w));
    for &(d, cid) in &customers {
        c.push(Param::Int(d));
        c.push(Param::Int(cid));
    }
    x.run(s.credit_n[m - 1], &c)?;
    Ok(Some(skipped))
}

/// District by district, each oldest order locked first.
fn run_by_district(x: &mut Exec<'_>, s: &Stmts, i: &Input) -> Result<(Ended, u32), DbError> {
    let w = i.w_id;
    let mut skipped = 0;
    let mut amount = String::with_capacity(12);
    for d in 1..=10 {
        let n = x.fetch(s.oldest, &[Param::Int(w), Param::Int(d)])?;
        if n == 0 {
            skipped += 1;
            continue;
        }
        let o_id = int(x.at(0, 1, 0));
        let key = [Param::Int(w), Param::Int(d), Param::Int(o_id)];
        // Another terminal delivered it first (PostgreSQL read committed).
        if x.run(s.remove, &key)? == 0 {
            skipped += 1;
            continue;
        }
        x.fetch(s.customer, &key)?;
        let c_id = int(x.at(0, 1, 0));
        x.run(
            s.carrier,
            &[Param::Int(i.carrier_id), key[0], key[1], key[2]],
        )?;
        x.run(s.date_lines, &key)?;
        x.fetch(s.amount, &key)?;
        amount.clear();
        money(fixed(x.at(0, 1, 0), 100), &mut amount);
        x.run(
            s.credit,
            &[
                Param::Text(&amount),
                Param::Int(w),
                Param::Int(d),
                Param::Int(c_id),
            ],
        )?;
    }
    Ok((Ended::Committed, skipped))
}
