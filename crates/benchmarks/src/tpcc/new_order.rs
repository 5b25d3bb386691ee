//! New-Order (clause 2.4): enters an order of 5..15 lines, 1% of them
//! from a remote warehouse; 1% of the orders carry an unused item on
//! their last line and roll back.

use super::load::ITEMS;
use super::random::money;
use super::sql::{Ended, Exec, fixed, for_update, int, int_param, marks, money_param, text};
use super::terminal::Gen;
use dbmeter_db::{Connection, DbError, Dialect, Param, StmtId};

/// One order line's input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Line {
    pub i_id: i64,
    pub supply_w_id: i64,
    pub quantity: i64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Input {
    pub w_id: i64,
    pub d_id: i64,
    pub c_id: i64,
    pub lines: Vec<Line>,
    /// True when every line is supplied by the home warehouse.
    pub all_local: bool,
    /// The last line's item is unused: the order rolls back.
    pub rollback: bool,
}

impl Input {
    pub fn generate(g: &mut Gen) -> Input {
        let w_id = g.warehouse();
        let d_id = g.r.uniform(1, 10);
        let c_id = g.r.nurand(1023, 1, 3000, g.nu.c_id);
        let n = g.r.uniform(5, 15) as usize;
        let rollback = g.r.uniform(1, 100) == 1;
        let mut lines = Vec::with_capacity(n);
        let mut all_local = true;
        for k in 0..n {
            let i_id = if rollback && k == n - 1 {
                ITEMS + 1
            } else {
                g.r.nurand(8191, 1, ITEMS, g.nu.ol_i_id)
            };
            let supply_w_id = if g.warehouses > 1 && g.r.uniform(1, 100) == 1 {
                g.other_warehouse(w_id)
            } else {
                w_id
            };
            all_local &= supply_w_id == w_id;
            lines.push(Line {
                i_id,
                supply_w_id,
                quantity: g.r.uniform(1, 10),
            });
        }
        Input {
            w_id,
            d_id,
            c_id,
            lines,
            all_local,
            rollback,
        }
    }
}

/// The statements of New-Order, registered once per connection.
pub struct Stmts {
    /// PostgreSQL: the district's next order id taken, the order and its
    /// new_order row inserted, and the customer and taxes read, in one
    /// statement (data-modifying WITH).
    head: Option<StmtId>,
    customer: StmtId,
    district: StmtId,
    next_order: StmtId,
    insert_order: StmtId,
    insert_new_order: StmtId,
    /// Items of an order with `n` lines: index n - 5.
    items: Vec<StmtId>,
    /// Stock of `n` items of the home warehouse, by district: [d - 1][n - 5].
    stock_local: Vec<Vec<StmtId>>,
    /// Stock of one item of any warehouse, by district.
    stock_one: Vec<StmtId>,
    update_stock: StmtId,
    /// Stock updates of `n` distinct items of the home warehouse in one
    /// statement: index n - 1.
    update_stock_local: Vec<StmtId>,
    /// Order lines of an order with `n` lines: index n - 5.
    insert_lines: Vec<StmtId>,
}

pub fn register(conn: &mut Connection) -> Stmts {
    let d = conn.dialect();
    let fu = for_update(d);
    let m = money_param(d);
    let i = int_param(d);
    let head = (d == Dialect::Postgres).then(|| {
        conn.register(&format!(
            "WITH d AS (UPDATE district SET d_next_o_id = d_next_o_id + 1 \
             WHERE d_w_id = ? AND d_id = ? RETURNING d_next_o_id - 1 AS o_id, d_tax), \
             o AS (INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local) \
             SELECT o_id, {i}, {i}, {i}, CURRENT_TIMESTAMP, {i}, {i} FROM d), \
             n AS (INSERT INTO new_order (no_o_id, no_d_id, no_w_id) SELECT o_id, {i}, {i} FROM d) \
             SELECT d.o_id, d.d_tax, c_discount, c_last, c_credit, w_tax FROM d, customer, warehouse \
             WHERE w_id = ? AND c_w_id = w_id AND c_d_id = ? AND c_id = ?"
        ))
    });
    Stmts {
        head,
        customer: conn.register(
            "SELECT c_discount, c_last, c_credit, w_tax FROM customer, warehouse \
             WHERE w_id = ? AND c_w_id = w_id AND c_d_id = ? AND c_id = ?",
        ),
        district: conn.register(&format!(
            "SELECT d_next_o_id, d_tax FROM district WHERE d_w_id = ? AND d_id = ?{fu}"
        )),
        next_order: conn.register(
            "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = ? AND d_id = ?",
        ),
        insert_order: conn.register(
            "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local) \
             VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP, ?, ?)",
        ),
        insert_new_order: conn
            .register("INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)"),
        items: (5..=15)
            .map(|n| {
                conn.register(&format!(
                    "SELECT i_id, i_price, i_name, i_data FROM item WHERE i_id IN ({})",
                    marks(n)
                ))
            })
            .collect(),
        stock_local: (1..=10)
            .map(|dist| {
                (5..=15)
                    .map(|n| {
                        conn.register(&format!(
                            "SELECT s_i_id, s_quantity, s_data, s_dist_{dist:02} FROM stock \
                             WHERE s_w_id = ? AND s_i_id IN ({}){fu}",
                            marks(n)
                        ))
                    })
                    .collect()
            })
            .collect(),
        stock_one: (1..=10)
            .map(|dist| {
                conn.register(&format!(
                    "SELECT s_i_id, s_quantity, s_data, s_dist_{dist:02} FROM stock \
                     WHERE s_w_id = ? AND s_i_id = ?{fu}"
                ))
            })
            .collect(),
        update_stock: conn.register(
            "UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1, \
             s_remote_cnt = s_remote_cnt + ? WHERE s_i_id = ? AND s_w_id = ?",
        ),
        update_stock_local: (1..=15)
            .map(|n| {
                let i = int_param(d);
                let case = vec![format!("WHEN ? THEN {i}"); n].join(" ");
                conn.register(&format!(
                    "UPDATE stock SET s_quantity = CASE s_i_id {case} END, \
                     s_ytd = s_ytd + CASE s_i_id {case} END, \
                     s_order_cnt = s_order_cnt + CASE s_i_id {case} END \
                     WHERE s_w_id = ? AND s_i_id IN ({})",
                    marks(n)
                ))
            })
            .collect(),
        insert_lines: (5..=15)
            .map(|n| {
                let row = format!("(?, ?, ?, ?, ?, ?, ?, {m}, ?)");
                conn.register(&format!(
                    "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, \
                     ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info) VALUES {}",
                    vec![row.as_str(); n].join(", ")
                ))
            })
            .collect(),
    }
}

/// What the order found of one item and its stock.
#[derive(Clone, Default)]
struct Found {
    price: i64,
    quantity: i64,
    dist_info: String,
}

/// Runs New-Order inside the caller's transaction (begun for writing).
/// Returns [`Ended::RolledBack`] when an item is unused: the caller rolls
/// back.
pub fn run(x: &mut Exec<'_>, s: &Stmts, i: &Input) -> Result<Ended, DbError> {
    let n = i.lines.len();
    let (w, d) = (i.w_id, i.d_id);
    let (o_id, discount, w_tax, d_tax) = match s.head {
        Some(head) => {
            let (c, n, local) = (
                Param::Int(i.c_id),
                Param::Int(n as i64),
                Param::Int(i64::from(i.all_local)),
            );
            let (w, d) = (Param::Int(w), Param::Int(d));
            x.fetch(head, &[w, d, d, w, c, n, local, d, w, w, d, c])?;
            (
                int(x.at(0, 6, 0)),
                fixed(x.at(0, 6, 2), 10_000),
                fixed(x.at(0, 6, 5), 10_000),
                fixed(x.at(0, 6, 1), 10_000),
            )
        }
        None => {
            x.fetch(
                s.customer,
                &[Param::Int(w), Param::Int(d), Param::Int(i.c_id)],
            )?;
            let discount = fixed(x.at(0, 4, 0), 10_000);
            let w_tax = fixed(x.at(0, 4, 3), 10_000);
            x.fetch(s.district, &[Param::Int(w), Param::Int(d)])?;
            let o_id = int(x.at(0, 2, 0));
            let d_tax = fixed(x.at(0, 2, 1), 10_000);
            x.run(s.next_order, &[Param::Int(w), Param::Int(d)])?;
            x.run(
                s.insert_order,
                &[
                    Param::Int(o_id),
                    Param::Int(d),
                    Param::Int(w),
                    Param::Int(i.c_id),
                    Param::Int(n as i64),
                    Param::Int(i64::from(i.all_local)),
                ],
            )?;
            x.run(
                s.insert_new_order,
                &[Param::Int(o_id), Param::Int(d), Param::Int(w)],
            )?;
            (o_id, discount, w_tax, d_tax)
        }
    };

    // Items: one query for the order's lines.
    let mut params: Vec<Param<'_>> = i.lines.iter().map(|l| Param::Int(l.i_id)).collect();
    let rows = x.fetch(s.items[n - 5], &params)?;
    let mut found: Vec<Found> = vec![Found::default(); n];
    let mut seen = vec![false; n];
    for r in 0..rows {
        let id = int(x.at(r, 4, 0));
        let price = fixed(x.at(r, 4, 1), 100);
        for (k, l) in i.lines.iter().enumerate() {
            if l.i_id == id {
                found[k].price = price;
                seen[k] = true;
            }
        }
    }
    if seen.iter().any(|s| !s) {
        // "Item number is not valid": the specification's rollback.
        return Ok(Ended::RolledBack);
    }

    // Stock: one locking query when every line is local, else one per line.
    if i.all_local {
        params.insert(0, Param::Int(w));
        let rows = x.fetch(s.stock_local[d as usize - 1][n - 5], &params)?;
        for r in 0..rows {
            let id = int(x.at(r, 4, 0));
            for (k, l) in i.lines.iter().enumerate() {
                if l.i_id == id {
                    found[k].quantity = int(x.at(r, 4, 1));
                    found[k].dist_info = text(x.at(r, 4, 3)).to_string();
                }
            }
        }
    } else {
        for (k, l) in i.lines.iter().enumerate() {
            x.fetch(
                s.stock_one[d as usize - 1],
                &[Param::Int(l.supply_w_id), Param::Int(l.i_id)],
            )?;
            found[k].quantity = int(x.at(0, 4, 1));
            found[k].dist_info = text(x.at(0, 4, 3)).to_string();
        }
    }
    drop(params);

    // Stock updates, in line order (an item twice in one order sees its
    // first update).
    let mut amounts = Vec::with_capacity(n);
    let mut total = 0i64;
    for k in 0..n {
        let l = i.lines[k];
        // The quantity after the item's last earlier line, if any.
        let q = i.lines[..k]
            .iter()
            .zip(&found[..k])
            .rev()
            .find(|(e, _)| e.i_id == l.i_id && e.supply_w_id == l.supply_w_id)
            .map_or(found[k].quantity, |(_, f)| f.quantity);
        found[k].quantity = if q >= l.quantity + 10 {
            q - l.quantity
        } else {
            q - l.quantity + 91
        };
        let amount = l.quantity * found[k].price;
        total += amount;
        let mut a = String::with_capacity(10);
        money(amount, &mut a);
        amounts.push(a);
    }
    if i.all_local {
        // One statement for all items: per distinct item its last
        // quantity, the sum of its line quantities and its line count.
        let mut items: Vec<(i64, i64, i64, i64)> = Vec::with_capacity(n);
        for (k, l) in i.lines.iter().enumerate() {
            match items.iter_mut().find(|x| x.0 == l.i_id) {
                Some(x) => {
                    x.1 = found[k].quantity;
                    x.2 += l.quantity;
                    x.3 += 1;
                }
                None => items.push((l.i_id, found[k].quantity, l.quantity, 1)),
            }
        }
        let mut p: Vec<Param<'_>> = Vec::with_capacity(items.len() * 7 + 1);
        for pick in [
            |x: &(i64, i64, i64, i64)| x.1,
            |x: &(i64, i64, i64, i64)| x.2,
            |x: &(i64, i64, i64, i64)| x.3,
        ] {
            for x in &items {
                p.push(Param::Int(x.0));
                p.push(Param::Int(pick(x)));
            }
        }
        p.push(Param::Int(w));
        p.extend(items.iter().map(|x| Param::Int(x.0)));
        x.run(s.update_stock_local[items.len() - 1], &p)?;
    } else {
        for (k, l) in i.lines.iter().enumerate() {
            x.run(
                s.update_stock,
                &[
                    Param::Int(found[k].quantity),
                    Param::Int(l.quantity),
                    Param::Int(i64::from(l.supply_w_id != w)),
                    Param::Int(l.i_id),
                    Param::Int(l.supply_w_id),
                ],
            )?;
        }
    }
    // The total the terminal would show (clause 2.4.3.3).
    let shown = total as f64 * (1.0 - discount as f64 / 1e4) * (1.0 + (w_tax + d_tax) as f64 / 1e4);
    std::hint::black_box(shown);

    let mut params: Vec<Param<'_>> = Vec::with_capacity(n * 9);
    for (k, l) in i.lines.iter().enumerate() {
        params.extend_from_slice(&[
            Param::Int(o_id),
            Param::Int(d),
            Param::Int(w),
            Param::Int(k as i64 + 1),
            Param::Int(l.i_id),
            Param::Int(l.supply_w_id),
            Param::Int(l.quantity),
            Param::Text(&amounts[k]),
            Param::Text(&found[k].dist_info),
        ]);
    }
    x.run(s.insert_lines[n - 5], &params)?;
    Ok(Ended::Committed)
}
