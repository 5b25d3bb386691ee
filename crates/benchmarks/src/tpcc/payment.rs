//! Payment (clause 2.5): a customer pays 1.00..5,000.00 to its district;
//! 15% of customers belong to a remote warehouse, 60% are picked by last
//! name; bad-credit customers get the payment prepended to C_DATA.

use super::random::{last_name, money};
use super::sql::{Ended, Exec, for_update, int, money_param, text};
use super::terminal::Gen;
use dbmeter_db::{Connection, DbError, Dialect, Param, StmtId};

/// A customer chosen by last name or by id.
#[derive(Clone, Debug, PartialEq)]
pub enum Customer {
    ByName(String),
    ById(i64),
}

impl Customer {
    /// 60% by a NURand(255) last name, 40% by a NURand(1023) id.
    pub fn generate(g: &mut Gen) -> Customer {
        if g.r.uniform(1, 100) <= 60 {
            let mut s = String::with_capacity(16);
            last_name(g.r.last_name_number(g.nu.c_last), &mut s);
            Customer::ByName(s)
        } else {
            Customer::ById(g.r.nurand(1023, 1, 3000, g.nu.c_id))
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Input {
    pub w_id: i64,
    pub d_id: i64,
    pub c_w_id: i64,
    pub c_d_id: i64,
    pub customer: Customer,
    /// The amount in cents.
    pub amount: i64,
}

impl Input {
    pub fn generate(g: &mut Gen) -> Input {
        let w_id = g.warehouse();
        let d_id = g.r.uniform(1, 10);
        let (c_w_id, c_d_id) = if g.warehouses > 1 && g.r.uniform(1, 100) > 85 {
            (g.other_warehouse(w_id), g.r.uniform(1, 10))
        } else {
            (w_id, d_id)
        };
        Input {
            w_id,
            d_id,
            c_w_id,
            c_d_id,
            customer: Customer::generate(g),
            amount: g.r.uniform(100, 500_000),
        }
    }
}

pub struct Stmts {
    warehouse_ytd: StmtId,
    district_ytd: StmtId,
    /// The warehouse's and the district's addresses.
    addresses: StmtId,
    /// PostgreSQL: both year-to-date updates returning both addresses.
    pay_district: Option<StmtId>,
    by_name: StmtId,
    customer: StmtId,
    customer_data: StmtId,
    pay: StmtId,
    pay_bad_credit: StmtId,
    history: StmtId,
}

/// Customers with a last name, sorted by first name (Payment and
/// Order-Status pick the middle one).
pub fn by_name_sql() -> &'static str {
    "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first"
}

/// The row to take among `n` customers of one name: the middle one,
/// n/2 rounded up (clause 2.5.2.2), as a 0-based index.
pub fn middle(n: usize) -> usize {
    n.div_ceil(2).saturating_sub(1)
}

pub fn register(conn: &mut Connection) -> Stmts {
    let d = conn.dialect();
    let fu = for_update(d);
    let m = money_param(d);
    Stmts {
        warehouse_ytd: conn.register(&format!(
            "UPDATE warehouse SET w_ytd = w_ytd + {m} WHERE w_id = ?"
        )),
        district_ytd: conn.register(&format!(
            "UPDATE district SET d_ytd = d_ytd + {m} WHERE d_w_id = ? AND d_id = ?"
        )),
        pay_district: (d == Dialect::Postgres).then(|| {
            conn.register(&format!(
                "WITH w AS (UPDATE warehouse SET w_ytd = w_ytd + {m} WHERE w_id = ? \
                 RETURNING w_name, w_street_1, w_street_2, w_city, w_state, w_zip), \
                 d AS (UPDATE district SET d_ytd = d_ytd + {m} WHERE d_w_id = ? AND d_id = ? \
                 RETURNING d_name, d_street_1, d_street_2, d_city, d_state, d_zip) \
                 SELECT w.*, d.* FROM w, d"
            ))
        }),
        addresses: conn.register(
            "SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip, \
             d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM warehouse, district \
             WHERE w_id = ? AND d_w_id = w_id AND d_id = ?",
        ),
        by_name: conn.register(by_name_sql()),
        customer: conn.register(&format!(
            "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, \
             c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance FROM customer \
             WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?{fu}"
        )),
        customer_data: conn.register(
            "SELECT c_data FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
        ),
        pay: conn.register(&format!(
            "UPDATE customer SET c_balance = c_balance - {m}, c_ytd_payment = c_ytd_payment + {m}, \
             c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"
        )),
        pay_bad_credit: conn.register(&format!(
            "UPDATE customer SET c_balance = c_balance - {m}, c_ytd_payment = c_ytd_payment + {m}, \
             c_payment_cnt = c_payment_cnt + 1, c_data = ? WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"
        )),
        history: conn.register(&format!(
            "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) \
             VALUES (?, ?, ?, ?, ?, CURRENT_TIMESTAMP, {m}, ?)"
        )),
    }
}

/// Finds the customer id: by id as given, by name the middle one.
pub fn customer_id(
    x: &mut Exec<'_>,
    by_name: StmtId,
    w: i64,
    d: i64,
    c: &Customer,
) -> Result<Option<i64>, DbError> {
    match c {
        Customer::ById(id) => Ok(Some(*id)),
        Customer::ByName(name) => {
            let n = x.fetch(by_name, &[Param::Int(w), Param::Int(d), Param::Text(name)])?;
            Ok((n > 0).then(|| int(x.at(middle(n), 1, 0))))
        }
    }
}

/// Runs Payment inside the caller's write transaction.
pub fn run(x: &mut Exec<'_>, s: &Stmts, i: &Input) -> Result<Ended, DbError> {
    let mut amount = String::with_capacity(10);
    money(i.amount, &mut amount);
    let a = Param::Text(&amount);
    let (w, d) = (Param::Int(i.w_id), Param::Int(i.d_id));
    match s.pay_district {
        Some(both) => {
            x.fetch(both, &[a, w, a, w, d])?;
        }
        None => {
            x.run(s.warehouse_ytd, &[a, w])?;
            x.run(s.district_ytd, &[a, w, d])?;
            x.fetch(s.addresses, &[w, d])?;
        }
    }
    let w_name = text(x.at(0, 12, 0)).to_string();
    let d_name = text(x.at(0, 12, 6)).to_string();
    let Some(c_id) = customer_id(x, s.by_name, i.c_w_id, i.c_d_id, &i.customer)? else {
        // No customer of that name: nothing to pay (cannot happen with the
        // specification's population, where every name exists per district).
        return Ok(Ended::Committed);
    };
    let key = [Param::Int(i.c_w_id), Param::Int(i.c_d_id), Param::Int(c_id)];
    x.fetch(s.customer, &key)?;
    let bad_credit = text(x.at(0, 14, 10)).starts_with("BC");
    if bad_credit {
        x.fetch(s.customer_data, &key)?;
        let mut data = format!(
            "{c_id} {} {} {} {} {amount} | {}",
            i.c_d_id,
            i.c_w_id,
            i.d_id,
            i.w_id,
            text(x.at(0, 1, 0))
        );
        if data.len() > 500 {
            let mut cut = 500;
            while !data.is_char_boundary(cut) {
                cut -= 1;
            }
            data.truncate(cut);
        }
        x.run(
            s.pay_bad_credit,
            &[a, a, Param::Text(&data), key[0], key[1], key[2]],
        )?;
    } else {
        x.run(s.pay, &[a, a, key[0], key[1], key[2]])?;
    }
    let h_data = format!("{w_name}    {d_name}");
    x.run(
        s.history,
        &[
            Param::Int(c_id),
            Param::Int(i.c_d_id),
            Param::Int(i.c_w_id),
            Param::Int(i.d_id),
            Param::Int(i.w_id),
            a,
            Param::Text(&h_data),
        ],
    )?;
    Ok(Ended::Committed)
}

#[cfg(test)]
mod tests {
    use super::middle;

    #[test]
    fn middle_rounds_up() {
        assert_eq!(middle(1), 0);
        assert_eq!(middle(2), 0);
        assert_eq!(middle(3), 1);
        assert_eq!(middle(4), 1);
        assert_eq!(middle(5), 2);
    }
}
