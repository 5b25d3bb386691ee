//! The refresh functions on the database: RF1 inserts update set K's new
//! orders and their lineitems, RF2 deletes the orders (and lineitems)
//! listed in delete.K. Each is one transaction. The rows come from
//! [`update_sets`](super::update_sets), as dbgen makes them; which set a
//! run uses is kept in the state table, so runs go on with new sets.

use super::schema::STATE_TABLE;
use super::update_sets::{self, UpdateSet};
use dbmeter_db::{Connection, DbError};
use std::fmt::Write;

/// Rows (or keys) per statement.
const BATCH: usize = 1000;

/// Which refresh function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rf {
    Rf1,
    Rf2,
}

impl Rf {
    pub fn name(self) -> &'static str {
        match self {
            Rf::Rf1 => "RF1",
            Rf::Rf2 => "RF2",
        }
    }
}

fn quoted(out: &mut String, s: &str) {
    out.push('\'');
    out.push_str(&s.replace('\'', "''"));
    out.push('\'');
}

/// The INSERTs of RF1 for `set`.
pub fn rf1_statements(set: &UpdateSet) -> Vec<String> {
    let mut stmts = Vec::new();
    for chunk in set.orders.chunks(BATCH) {
        let mut sql = String::from(
            "INSERT INTO orders (o_orderkey,o_custkey,o_orderstatus,o_totalprice,o_orderdate,o_orderpriority,o_clerk,o_shippriority,o_comment) VALUES ",
        );
        for (i, o) in chunk.iter().enumerate() {
            if i > 0 {
                sql.push(',');
            }
            let _ = write!(sql, "({},{},", o.o_orderkey, o.o_custkey);
            quoted(&mut sql, &o.o_orderstatus.to_string());
            let _ = write!(sql, ",{},", o.o_totalprice);
            quoted(&mut sql, &o.o_orderdate.to_string());
            sql.push(',');
            quoted(&mut sql, o.o_orderpriority);
            sql.push(',');
            quoted(&mut sql, &o.o_clerk.to_string());
            let _ = write!(sql, ",{},", o.o_shippriority);
            quoted(&mut sql, o.o_comment);
            sql.push(')');
        }
        stmts.push(sql);
    }
    for chunk in set.lineitems.chunks(BATCH) {
        let mut sql = String::from(
            "INSERT INTO lineitem (l_orderkey,l_partkey,l_suppkey,l_linenumber,l_quantity,l_extendedprice,l_discount,l_tax,l_returnflag,l_linestatus,l_shipdate,l_commitdate,l_receiptdate,l_shipinstruct,l_shipmode,l_comment) VALUES ",
        );
        for (i, l) in chunk.iter().enumerate() {
            if i > 0 {
                sql.push(',');
            }
            let _ = write!(
                sql,
                "({},{},{},{},{},{},{},{},",
                l.l_orderkey,
                l.l_partkey,
                l.l_suppkey,
                l.l_linenumber,
                l.l_quantity,
                l.l_extendedprice,
                l.l_discount,
                l.l_tax
            );
            for (j, s) in [
                l.l_returnflag.to_string(),
                l.l_linestatus.to_string(),
                l.l_shipdate.to_string(),
                l.l_commitdate.to_string(),
                l.l_receiptdate.to_string(),
                l.l_shipinstruct.to_string(),
                l.l_shipmode.to_string(),
                l.l_comment.to_string(),
            ]
            .iter()
            .enumerate()
            {
                if j > 0 {
                    sql.push(',');
                }
                quoted(&mut sql, s);
            }
            sql.push(')');
        }
        stmts.push(sql);
    }
    stmts
}

/// The DELETEs of RF2 for `set`.
pub fn rf2_statements(set: &UpdateSet) -> Vec<String> {
    let mut stmts = Vec::new();
    for chunk in set.deletes.chunks(BATCH) {
        let keys = chunk
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(",");
        stmts.push(format!("DELETE FROM lineitem WHERE l_orderkey IN ({keys})"));
        stmts.push(format!("DELETE FROM orders WHERE o_orderkey IN ({keys})"));
    }
    stmts
}

/// An update set's statements, made before the run so that generating
/// the rows is not part of a refresh function's time.
#[derive(Clone, Debug, Default)]
pub struct Prepared {
    pub rf1: Vec<String>,
    pub rf2: Vec<String>,
    /// Orders RF1 inserts and RF2 deletes.
    pub orders: u64,
    pub deletes: u64,
}

/// The statements of update set `set` at `sf`.
pub fn prepare(sf: f64, set: u32) -> Prepared {
    let data = update_sets::update_set(sf, set);
    Prepared {
        rf1: rf1_statements(&data),
        rf2: rf2_statements(&data),
        orders: data.orders.len() as u64,
        deletes: data.deletes.len() as u64,
    }
}

/// Runs one refresh function as one transaction; returns the orders it
/// inserted or deleted.
pub fn run(conn: &mut Connection, rf: Rf, p: &Prepared) -> Result<u64, DbError> {
    let (stmts, rows) = match rf {
        Rf::Rf1 => (&p.rf1, p.orders),
        Rf::Rf2 => (&p.rf2, p.deletes),
    };
    conn.execute("BEGIN")?;
    for s in stmts {
        if let Err(e) = conn.execute(s) {
            let _ = conn.execute("ROLLBACK");
            return Err(e);
        }
    }
    conn.execute("COMMIT")?;
    Ok(rows)
}

/// Takes `count` update sets from `next` for a run: records that the
/// next run starts after them.
pub fn reserve(conn: &mut Connection, next: u32, count: u32) -> Result<(), DbError> {
    conn.execute(&format!(
        "UPDATE {STATE_TABLE} SET next_update_set = {}",
        next + count
    ))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_cover_the_set() {
        let set = update_sets::update_set(0.01, 1);
        let rf1 = rf1_statements(&set);
        assert_eq!(
            rf1.len(),
            2,
            "10 orders and their lineitems fit one INSERT each"
        );
        assert_eq!(rf1[0].matches("),(").count() + 1, set.orders.len());
        assert_eq!(rf1[1].matches("),(").count() + 1, set.lineitems.len());
        let rf2 = rf2_statements(&set);
        assert_eq!(rf2.len(), 2);
        assert!(rf2[0].starts_with("DELETE FROM lineitem WHERE l_orderkey IN (1,"));
    }
}
