//! Order-Status (clause 2.6): a customer (60% by last name) and the lines
//! of its last order. Read-only.

use super::payment::{Customer, by_name_sql, customer_id};
use super::sql::{Ended, Exec, int};
use super::terminal::Gen;
use dbmeter_db::{Connection, DbError, Param, StmtId};

#[derive(Clone, Debug, PartialEq)]
pub struct Input {
    pub w_id: i64,
    pub d_id: i64,
    pub customer: Customer,
}

impl Input {
    pub fn generate(g: &mut Gen) -> Input {
        Input {
            w_id: g.warehouse(),
            d_id: g.r.uniform(1, 10),
            customer: Customer::generate(g),
        }
    }
}

pub struct Stmts {
    by_name: StmtId,
    customer: StmtId,
    last_order: StmtId,
    lines: StmtId,
}

pub fn register(conn: &mut Connection) -> Stmts {
    Stmts {
        by_name: conn.register(by_name_sql()),
        customer: conn.register(
            "SELECT c_balance, c_first, c_middle, c_last FROM customer \
             WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
        ),
        last_order: conn.register(
            "SELECT o_id, o_carrier_id, o_entry_d FROM orders \
             WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC LIMIT 1",
        ),
        lines: conn.register(
            "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line \
             WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
        ),
    }
}

/// Runs Order-Status inside the caller's read transaction.
pub fn run(x: &mut Exec<'_>, s: &Stmts, i: &Input) -> Result<Ended, DbError> {
    let (w, d) = (i.w_id, i.d_id);
    let Some(c_id) = customer_id(x, s.by_name, w, d, &i.customer)? else {
        return Ok(Ended::Committed);
    };
    x.fetch(
        s.customer,
        &[Param::Int(w), Param::Int(d), Param::Int(c_id)],
    )?;
    let n = x.fetch(
        s.last_order,
        &[Param::Int(w), Param::Int(d), Param::Int(c_id)],
    )?;
    if n > 0 {
        let o_id = int(x.at(0, 3, 0));
        x.fetch(s.lines, &[Param::Int(w), Param::Int(d), Param::Int(o_id)])?;
    }
    Ok(Ended::Committed)
}
