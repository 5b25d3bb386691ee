//! Stock-Level (clause 2.8): how many of the items of the district's last
//! 20 orders have a stock below a threshold of 10..20. Read-only; the
//! district is fixed per terminal.

use super::sql::{Ended, Exec, int};
use super::terminal::Gen;
use dbmeter_db::{Connection, DbError, Param, StmtId};

#[derive(Clone, Debug, PartialEq)]
pub struct Input {
    pub w_id: i64,
    pub d_id: i64,
    pub threshold: i64,
}

impl Input {
    pub fn generate(g: &mut Gen) -> Input {
        Input {
            w_id: g.warehouse(),
            d_id: g.district,
            threshold: g.r.uniform(10, 20),
        }
    }
}

pub struct Stmts {
    next_order: StmtId,
    low_stock: StmtId,
}

pub fn register(conn: &mut Connection) -> Stmts {
    Stmts {
        next_order: conn.register("SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?"),
        low_stock: conn.register(
            "SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock \
             WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < ? AND ol_o_id >= ? \
             AND s_w_id = ? AND s_i_id = ol_i_id AND s_quantity < ?",
        ),
    }
}

/// Runs Stock-Level inside the caller's read transaction.
pub fn run(x: &mut Exec<'_>, s: &Stmts, i: &Input) -> Result<Ended, DbError> {
    let (w, d) = (i.w_id, i.d_id);
    x.fetch(s.next_order, &[Param::Int(w), Param::Int(d)])?;
    let next = int(x.at(0, 1, 0));
    x.fetch(
        s.low_stock,
        &[
            Param::Int(w),
            Param::Int(d),
            Param::Int(next),
            Param::Int(next - 20),
            Param::Int(w),
            Param::Int(i.threshold),
        ],
    )?;
    std::hint::black_box(int(x.at(0, 1, 0)));
    Ok(Ended::Committed)
}
