//! TPC-H refresh-function data: the update sets the reference `dbgen` writes
//! with `-U`, reproduced byte for byte.
//!
//! For update set `K` (1-based) this module yields the rows of
//! `orders.tbl.uK` and `lineitem.tbl.uK` (the new orders and line items that
//! refresh function RF1 inserts) and the order keys of `delete.K` (the orders,
//! with all their line items, that RF2 removes).
//!
//! # How dbgen derives an update set
//!
//! **Sizes.** dbgen thinks in an integer `scale`. For SF >= 1 that is the SF
//! truncated to an integer (SF 1.5 behaves like SF 1). For SF < 1 the scale
//! is 1 and each base row count (1 500 000 orders, 150 000 customers,
//! 200 000 parts, 10 000 suppliers) is instead multiplied by
//! `trunc(1000 * SF)` and divided by 1000 (at least 1 row). One update set
//! holds `n = trunc(order_base / 10 000) * scale * 10` orders, roughly 0.1 %
//! of ORDERS: 10 at SF 0.01, 150 at SF 0.1, 1 500 at SF 1.
//!
//! **Which orders.** Set `K` covers the order indices `(K-1)*n + 1 ..= K*n`.
//! dbgen never uses an order index directly as a key; it spreads the keys
//! out so that only the first 8 of every 32 key values are taken. An index
//! `i` becomes `((i >> 3) * 4 + slot) * 8 + (i & 7)`, where the 2-bit `slot`
//! tells who owns the key:
//!
//! * base data uses slot 0;
//! * RF1 (`orders.tbl.uK`, `lineitem.tbl.uK`) uses slot `1 + k/1000` with
//!   `k = K mod 10 000` (slot 0 if `k` is 0), added rather than masked, so
//!   for `K < 3000` the new orders land in gaps the base data left free and
//!   never collide with it;
//! * RF2 (`delete.K`) lists the keys of the *same* indices in slot
//!   `(K/1000) & 3`, i.e. slot 0 for `K < 1000`: the base orders with the
//!   lowest keys, `n` more of them for every set.
//!
//! **Random streams.** Every generated column has its own Park-Miller stream
//! (`x <- 16807 * x mod (2^31 - 1)`) with a fixed seed, and every stream has a
//! fixed budget of draws per order: 1 for most ORDERS columns, 2 for the order
//! comment (offset and length into the shared 300 MiB text pool), 7 for each
//! LINEITEM column and 14 for the line comment (room for the maximum of seven
//! lines). After each order every stream skips whatever part of its budget the
//! order did not consume, so the state for any row can be reached by jumping
//! ahead with modular exponentiation. Before writing updates dbgen jumps the
//! streams past the whole base population: it splits the base order count
//! into 100 equal chunks and skips them for the ORDERS and LINEITEM streams
//! alike, then skips the remainder of that division for the ORDERS streams
//! only (that remainder is 0 whenever a set is non-empty, since order counts
//! are then multiples of 1 500). The sets follow one another, so set `K` starts
//! `(K-1)*n` rows further on; `-S K` reaches the same state by skipping those
//! rows explicitly. The stream position is therefore *not* tied to the key:
//! the first new order of set 1 draws what base order number `orders + 1`
//! would have drawn if the base population were one order longer.
//!
//! **Row contents.** From there each order is built exactly like a base
//! order: customer key uniform in `1..=customers`, nudged off multiples of 3
//! (a third of the customers never order); order date; priority; clerk
//! `1..=max(1000, 1000 * scale)`; comment; 1 to 7 lines, each with quantity,
//! discount, tax, part key, one of the part's four suppliers, ship/commit/
//! receipt dates relative to the order date, return flag (`N` unless received
//! by 1995-06-17), status, ship instruction, ship mode and comment. The order
//! total and order status are derived from its lines. Above scale 30 000 the
//! customer and part keys are drawn from dbgen's 64-bit generator instead.
//!
//! The text written by [`orders_text`], [`lineitems_text`] and
//! [`deletes_text`] follows the unmodified TPC `dbgen` (`PR_END` writing only
//! a newline): every field, including the last, is followed by `|`, and
//! `delete.K` has one `key|` per line. Some forks (for example
//! gregrahn/tpch-kit) drop that trailing `|`; the data is otherwise the same.

use std::fmt::Write as _;

use tpchgen::dates::TPCHDate;
use tpchgen::decimal::TPCHDecimal;
use tpchgen::distribution::Distributions;
use tpchgen::generators::{
    ClerkName, LineItem, LineItemGenerator, Order, OrderGenerator, OrderStatus,
    PartGeneratorIterator,
};
use tpchgen::random::{RandomBoundedInt, RandomBoundedLong, RandomString, RandomText};
use tpchgen::text::TextPool;

/// One update set's data.
#[derive(Debug, Clone, PartialEq)]
pub struct UpdateSet<'a> {
    /// RF1's new orders, in the order dbgen writes them to `orders.tbl.uK`.
    pub orders: Vec<Order<'a>>,
    /// The line items of those orders, as in `lineitem.tbl.uK`.
    pub lineitems: Vec<LineItem<'a>>,
    /// RF2's order keys (base-data orders to delete), as in `delete.K`.
    pub deletes: Vec<i64>,
}

/// Update set `set` (1-based) of scale factor `sf`.
///
/// # Panics
///
/// If `sf` is not in `(0, 1 000 000]` (TPC-H stops at 100 000), if `set`
/// is 0, or if the order keys of the set would not fit in an `i64`.
pub fn update_set(sf: f64, set: u32) -> UpdateSet<'static> {
    assert!(
        sf > 0.0 && sf <= MAX_SCALE_FACTOR,
        "scale factor must be in (0, {MAX_SCALE_FACTOR}], got {sf}"
    );
    assert!(set >= 1, "update sets are numbered from 1");

    let sizes = Sizes::new(sf);
    let n = sizes.rows_per_set;
    let first_index = i64::from(set - 1) * n + 1;
    // The largest key is about 4 * (last index) + 31; keep it well inside i64.
    assert!(
        i64::from(set)
            .checked_mul(n)
            .is_some_and(|last| last < i64::MAX / 8),
        "update set {set} at SF {sf} has order keys beyond i64"
    );

    // RF1: streams start past the base data plus the sets before this one.
    let prior_rows = i64::from(set - 1) * n;
    let mut streams = Streams::new(&sizes);
    streams.skip(
        sizes.orders + prior_rows,
        100 * (sizes.orders / 100) + prior_rows,
    );

    let insert_slot = insert_slot(set);
    let capacity = usize::try_from(n).unwrap_or(0);
    let mut orders = Vec::with_capacity(capacity);
    let mut lineitems = Vec::with_capacity(capacity * 4);
    for index in first_index..first_index + n {
        let key = sparse_key_insert(index, insert_slot);
        orders.push(streams.next_order(key, &mut lineitems));
    }

    // RF2: base keys (slot 0 unless the set number reaches 1000) of the same
    // indices.
    let delete_slot = i64::from(set / 1000);
    let deletes = (first_index..first_index + n)
        .map(|index| sparse_key_delete(index, delete_slot))
        .collect();

    UpdateSet {
        orders,
        lineitems,
        deletes,
    }
}

/// The text of `orders.tbl.uK` as dbgen writes it.
pub fn orders_text(u: &UpdateSet) -> String {
    let mut out = String::with_capacity(u.orders.len() * 112);
    for order in &u.orders {
        // Writing into a String cannot fail.
        let _ = writeln!(out, "{order}");
    }
    out
}

/// The text of `lineitem.tbl.uK` as dbgen writes it.
pub fn lineitems_text(u: &UpdateSet) -> String {
    let mut out = String::with_capacity(u.lineitems.len() * 128);
    for line in &u.lineitems {
        // Writing into a String cannot fail.
        let _ = writeln!(out, "{line}");
    }
    out
}

/// The text of `delete.K` as dbgen writes it (one `key|` per line).
pub fn deletes_text(u: &UpdateSet) -> String {
    let mut out = String::with_capacity(u.deletes.len() * 10);
    for key in &u.deletes {
        // Writing into a String cannot fail.
        let _ = writeln!(out, "{key}|");
    }
    out
}

/// Largest accepted scale factor; keeps every count, including the clerk
/// numbers drawn as `i32`, from overflowing.
const MAX_SCALE_FACTOR: f64 = 1e6;
/// Base row counts per unit of scale, as in dbgen's table definitions.
const ORDERS_PER_SCALE: i64 = 1_500_000;
const CUSTOMERS_PER_SCALE: i64 = 150_000;
const PARTS_PER_SCALE: i64 = 200_000;
const SUPPLIERS_PER_SCALE: i64 = 10_000;
/// Each part is sold by this many suppliers.
const SUPPLIERS_PER_PART: i64 = 4;
/// Update sets hold this many orders per 10 000 base orders.
const UPDATE_PER_10K: i64 = 10;
/// Clerks per unit of scale (and the minimum number of clerks).
const CLERKS_PER_SCALE: i64 = 1000;
/// Customers whose key is a multiple of this never place orders.
const CUSTOMER_MORTALITY: i64 = 3;
/// From this scale on dbgen draws customer and part keys with its 64-bit RNG.
const SCALE_64_BIT: i64 = 30_000;
/// Most lines an order can have; the per-row draw budget of LINEITEM streams.
const MAX_LINES: i32 = 7;

/// Table sizes exactly as dbgen computes them for a scale factor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Sizes {
    /// dbgen's integer scale (1 for SF < 1).
    scale: i64,
    orders: i64,
    customers: i64,
    parts: i64,
    suppliers: i64,
    rows_per_set: i64,
}

impl Sizes {
    fn new(sf: f64) -> Self {
        // Small scale factors keep scale 1 and shrink the per-table bases by
        // whole thousandths; larger ones keep the bases and truncate the SF.
        let (scale, per_mille) = if sf < 1.0 {
            (1, Some(i64::from((1000.0 * sf) as i32)))
        } else {
            (sf as i64, None)
        };
        let base = |per_scale: i64| match per_mille {
            Some(m) => (m * per_scale / 1000).max(1),
            None => per_scale,
        };
        let order_base = base(ORDERS_PER_SCALE);
        // dbgen keeps this count in a C `int`.
        let rows_per_set = i64::from((order_base / 10_000 * scale * UPDATE_PER_10K) as i32);
        Self {
            scale,
            orders: order_base * scale,
            customers: base(CUSTOMERS_PER_SCALE) * scale,
            parts: base(PARTS_PER_SCALE) * scale,
            suppliers: base(SUPPLIERS_PER_SCALE) * scale,
            rows_per_set,
        }
    }
}

/// Slot of RF1 keys: dbgen derives it from the set number modulo 10 000.
fn insert_slot(set: u32) -> i64 {
    match i64::from(set % 10_000) {
        0 => 0,
        k => 1 + k / 1000,
    }
}

/// RF1 key of order index `index`: the slot is added between the kept high
/// bits and the three low bits.
fn sparse_key_insert(index: i64, slot: i64) -> i64 {
    ((((index >> 3) << 2) + slot) << 3) + (index & 7)
}

/// RF2 key of order index `index`: the slot is masked to two bits and or-ed.
fn sparse_key_delete(index: i64, slot: i64) -> i64 {
    ((((index >> 3) << 2) | (slot & 3)) << 3) | (index & 7)
}

/// Supplier of a part's `number`-th (0..4) supply relation, as in PARTSUPP.
fn part_supplier(part: i64, number: i64, suppliers: i64) -> i64 {
    (part + number * (suppliers / SUPPLIERS_PER_PART + (part - 1) / suppliers)) % suppliers + 1
}

/// All ORDERS and LINEITEM column streams, positioned together.
struct Streams {
    customers: i64,
    suppliers: i64,
    // ORDERS columns: one row per order.
    customer_key: RandomBoundedLong,
    order_date: RandomBoundedInt,
    priority: RandomString<'static>,
    clerk: RandomBoundedInt,
    order_comment: RandomText<'static>,
    line_count: RandomBoundedInt,
    // LINEITEM columns: up to seven draws per order.
    quantity: RandomBoundedInt,
    discount: RandomBoundedInt,
    tax: RandomBoundedInt,
    part_key: RandomBoundedLong,
    supplier_number: RandomBoundedInt,
    ship_date: RandomBoundedInt,
    commit_date: RandomBoundedInt,
    receipt_date: RandomBoundedInt,
    return_flag: RandomString<'static>,
    ship_instruct: RandomString<'static>,
    ship_mode: RandomString<'static>,
    line_comment: RandomText<'static>,
}

impl Streams {
    /// Streams at the start of the base data, sized for `sizes`. The seeds
    /// are dbgen's per-column seeds; streams whose bounds do not depend on
    /// the scale come from tpchgen's constructors.
    fn new(sizes: &Sizes) -> Self {
        let dists = Distributions::static_default();
        let pool = TextPool::get_or_init_default();
        let wide = sizes.scale >= SCALE_64_BIT;
        let max_clerk = (sizes.scale * CLERKS_PER_SCALE).max(CLERKS_PER_SCALE);
        Self {
            customers: sizes.customers,
            suppliers: sizes.suppliers,
            customer_key: RandomBoundedLong::new(851_767_375, wide, 1, sizes.customers),
            order_date: OrderGenerator::create_order_date_random(),
            priority: RandomString::new(591_449_447, dists.order_priority()),
            // At most 10^9 clerks (MAX_SCALE_FACTOR), so this always fits.
            clerk: RandomBoundedInt::new(
                1_171_034_773,
                1,
                i32::try_from(max_clerk).unwrap_or(i32::MAX),
            ),
            order_comment: RandomText::new(276_090_261, pool, 49.0),
            line_count: OrderGenerator::create_line_count_random(),
            quantity: LineItemGenerator::create_quantity_random(),
            discount: LineItemGenerator::create_discount_random(),
            tax: LineItemGenerator::create_tax_random(),
            part_key: RandomBoundedLong::new_with_seeds_per_row(
                1_808_217_256,
                wide,
                1,
                sizes.parts,
                MAX_LINES,
            ),
            supplier_number: RandomBoundedInt::new_with_seeds_per_row(
                2_095_021_727,
                0,
                3,
                MAX_LINES,
            ),
            ship_date: LineItemGenerator::create_ship_date_random(),
            commit_date: RandomBoundedInt::new_with_seeds_per_row(904_914_315, 30, 90, MAX_LINES),
            receipt_date: RandomBoundedInt::new_with_seeds_per_row(373_135_028, 1, 30, MAX_LINES),
            return_flag: RandomString::new_with_expected_row_count(
                717_419_739,
                dists.return_flags(),
                MAX_LINES,
            ),
            ship_instruct: RandomString::new_with_expected_row_count(
                1_371_272_478,
                dists.ship_instructions(),
                MAX_LINES,
            ),
            ship_mode: RandomString::new_with_expected_row_count(
                675_466_456,
                dists.ship_modes(),
                MAX_LINES,
            ),
            line_comment: RandomText::new_with_expected_row_count(
                1_095_462_486,
                pool,
                27.0,
                MAX_LINES,
            ),
        }
    }

    /// Jumps the ORDERS streams `order_rows` rows and the LINEITEM streams
    /// `line_rows` rows ahead.
    fn skip(&mut self, order_rows: i64, line_rows: i64) {
        self.customer_key.advance_rows(order_rows);
        self.order_date.advance_rows(order_rows);
        self.priority.advance_rows(order_rows);
        self.clerk.advance_rows(order_rows);
        self.order_comment.advance_rows(order_rows);
        self.line_count.advance_rows(order_rows);

        self.quantity.advance_rows(line_rows);
        self.discount.advance_rows(line_rows);
        self.tax.advance_rows(line_rows);
        self.part_key.advance_rows(line_rows);
        self.supplier_number.advance_rows(line_rows);
        self.ship_date.advance_rows(line_rows);
        self.commit_date.advance_rows(line_rows);
        self.receipt_date.advance_rows(line_rows);
        self.return_flag.advance_rows(line_rows);
        self.ship_instruct.advance_rows(line_rows);
        self.ship_mode.advance_rows(line_rows);
        self.line_comment.advance_rows(line_rows);
    }

    /// Moves every stream to the start of the next row's budget.
    fn finish_row(&mut self) {
        self.customer_key.row_finished();
        self.order_date.row_finished();
        self.priority.row_finished();
        self.clerk.row_finished();
        self.order_comment.row_finished();
        self.line_count.row_finished();

        self.quantity.row_finished();
        self.discount.row_finished();
        self.tax.row_finished();
        self.part_key.row_finished();
        self.supplier_number.row_finished();
        self.ship_date.row_finished();
        self.commit_date.row_finished();
        self.receipt_date.row_finished();
        self.return_flag.row_finished();
        self.ship_instruct.row_finished();
        self.ship_mode.row_finished();
        self.line_comment.row_finished();
    }

    /// Builds the order with key `key` from the current row, appends its
    /// lines to `lines` and moves to the next row.
    fn next_order(&mut self, key: i64, lines: &mut Vec<LineItem<'static>>) -> Order<'static> {
        let mut customer = self.customer_key.next_value();
        let mut step = 1;
        while customer % CUSTOMER_MORTALITY == 0 {
            customer = (customer + step).min(self.customers);
            step = -step;
        }

        let order_date = self.order_date.next_value();
        let priority = self.priority.next_value();
        let clerk = self.clerk.next_value();
        let comment = self.order_comment.next_value();

        let line_count = self.line_count.next_value();
        let mut total = 0;
        let mut shipped = 0;
        for number in 1..=line_count {
            let quantity = i64::from(self.quantity.next_value());
            let discount = i64::from(self.discount.next_value());
            let tax = i64::from(self.tax.next_value());
            let ship_instruct = self.ship_instruct.next_value();
            let ship_mode = self.ship_mode.next_value();
            let line_comment = self.line_comment.next_value();
            let part = self.part_key.next_value();
            let supplier = part_supplier(
                part,
                i64::from(self.supplier_number.next_value()),
                self.suppliers,
            );
            let extended = PartGeneratorIterator::calculate_part_price(part) * quantity;
            total += extended * (100 - discount) / 100 * (100 + tax) / 100;

            let ship = order_date + self.ship_date.next_value();
            let commit = order_date + self.commit_date.next_value();
            let receipt = ship + self.receipt_date.next_value();
            let return_flag = if TPCHDate::is_in_past(receipt) {
                self.return_flag.next_value()
            } else {
                "N"
            };
            let status = if TPCHDate::is_in_past(ship) {
                shipped += 1;
                "F"
            } else {
                "O"
            };

            lines.push(LineItem {
                l_orderkey: key,
                l_partkey: part,
                l_suppkey: supplier,
                l_linenumber: number,
                l_quantity: quantity,
                l_extendedprice: TPCHDecimal(extended),
                l_discount: TPCHDecimal(discount),
                l_tax: TPCHDecimal(tax),
                l_returnflag: return_flag,
                l_linestatus: status,
                l_shipdate: TPCHDate::new(ship),
                l_commitdate: TPCHDate::new(commit),
                l_receiptdate: TPCHDate::new(receipt),
                l_shipinstruct: ship_instruct,
                l_shipmode: ship_mode,
                l_comment: line_comment,
            });
        }
        self.finish_row();

        let status = if shipped == line_count {
            OrderStatus::Fulfilled
        } else if shipped > 0 {
            OrderStatus::Pending
        } else {
            OrderStatus::Open
        };
        Order {
            o_orderkey: key,
            o_custkey: customer,
            o_orderstatus: status,
            o_totalprice: TPCHDecimal(total),
            o_orderdate: TPCHDate::new(order_date),
            o_orderpriority: priority,
            o_clerk: ClerkName::new(clerk),
            o_shippriority: 0,
            o_comment: comment,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 64-bit FNV-1a over the bytes of `text`.
    fn fnv1a(text: &str) -> u64 {
        text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
        })
    }

    /// What one file written by dbgen looks like.
    struct Expected {
        lines: usize,
        bytes: usize,
        fnv: u64,
        first: &'static str,
        last: &'static str,
    }

    fn check(what: &str, text: &str, expected: &Expected) {
        let lines: Vec<&str> = text.lines().collect();
        assert!(text.ends_with('\n'), "{what}: missing final newline");
        assert_eq!(lines.len(), expected.lines, "{what}: line count");
        assert_eq!(
            lines.first().copied(),
            Some(expected.first),
            "{what}: first line"
        );
        assert_eq!(
            lines.last().copied(),
            Some(expected.last),
            "{what}: last line"
        );
        assert_eq!(text.len(), expected.bytes, "{what}: byte count");
        assert_eq!(fnv1a(text), expected.fnv, "{what}: FNV-1a");
    }

    /// Measured on the files written by the TPC dbgen 2.14.0 sources
    /// (github.com/electrum/tpch-dbgen, built with MACHINE=LINUX
    /// DATABASE=ORACLE WORKLOAD=TPCH) with `dbgen -q -f -s 0.01 -U 4` and
    /// `dbgen -q -f -s 0.1 -U 4`: (sf, set, orders.tbl.uK, lineitem.tbl.uK,
    /// delete.K).
    const REFERENCE: [(f64, u32, Expected, Expected, Expected); 4] = [
        (
            0.01,
            1,
            Expected {
                lines: 10,
                bytes: 981,
                fnv: 0x5db5_176f_da2d_0a18,
                first: "9|1385|F|179366.58|1994-05-15|5-LOW|Clerk#000000639|0|slyly ironic foxes. |",
                last: "42|965|F|46100.99|1995-01-13|1-URGENT|Clerk#000000544|0| furiously unusual ideas |",
            },
            Expected {
                lines: 37,
                bytes: 4353,
                fnv: 0x545e_65d7_ac54_f36e,
                first: "9|31|57|1|33|30723.99|0.07|0.01|R|F|1994-05-17|1994-07-19|1994-05-18|DELIVER IN PERSON|AIR|efully final platelets are slyly|",
                last: "42|331|60|1|40|49253.20|0.10|0.04|R|F|1995-02-17|1995-03-11|1995-03-11|COLLECT COD|AIR|y ironic notornis |",
            },
            Expected {
                lines: 10,
                bytes: 33,
                fnv: 0xf425_ea02_dcf2_48f7,
                first: "1|",
                last: "34|",
            },
        ),
        (
            0.01,
            2,
            Expected {
                lines: 10,
                bytes: 1105,
                fnv: 0x53ce_71a1_6013_0145,
                first: "43|302|F|223637.29|1992-03-07|4-NOT SPECIFIED|Clerk#000000147|0| slyly around the carefully regular instructio|",
                last: "76|877|F|38744.92|1993-06-14|3-MEDIUM|Clerk#000000143|0| according to the slyly regular packages. unusual accounts are against the c|",
            },
            Expected {
                lines: 44,
                bytes: 5186,
                fnv: 0xf5e0_077c_8d98_3e6b,
                first: "43|1125|34|1|48|49253.76|0.05|0.07|A|F|1992-03-30|1992-04-27|1992-04-27|NONE|FOB| unusual Tiresias; blithely special idea|",
                last: "76|1208|46|2|24|26620.80|0.07|0.02|R|F|1993-08-11|1993-08-15|1993-09-10|DELIVER IN PERSON|MAIL|y ironic accounts haggle furiously whith|",
            },
            Expected {
                lines: 10,
                bytes: 40,
                fnv: 0x0053_fca2_fcc5_1c37,
                first: "35|",
                last: "68|",
            },
        ),
        (
            0.01,
            3,
            Expected {
                lines: 10,
                bytes: 1126,
                fnv: 0xa02f_c3fb_f347_08bc,
                first: "77|439|P|111337.62|1995-03-10|4-NOT SPECIFIED|Clerk#000000788|0| furiously pending accounts are quickly on the carefully ironic|",
                last: "110|827|F|194434.58|1993-01-21|3-MEDIUM|Clerk#000000094|0|ronic deposits. quickly final deposits alongs|",
            },
            Expected {
                lines: 37,
                bytes: 4306,
                fnv: 0xa77f_55c2_3512_059a,
                first: "77|1525|46|1|35|49928.20|0.09|0.05|A|F|1995-03-18|1995-04-19|1995-04-12|COLLECT COD|FOB|egular accou|",
                last: "110|1721|22|6|17|27586.24|0.09|0.05|A|F|1993-02-12|1993-04-04|1993-03-02|COLLECT COD|MAIL|ely. furiously final asymp|",
            },
            Expected {
                lines: 10,
                bytes: 43,
                fnv: 0xebb7_49a6_e31e_2cd7,
                first: "69|",
                last: "102|",
            },
        ),
        (
            0.1,
            1,
            Expected {
                lines: 150,
                bytes: 16172,
                fnv: 0x03f1_a014_3efa_ba3e,
                first: "9|10096|O|70670.35|1995-10-13|3-MEDIUM|Clerk#000000052|0|ts promise slyly. express packages above the carefully ironic account|",
                last: "590|461|F|315221.69|1993-06-25|4-NOT SPECIFIED|Clerk#000000024|0|ealthily. theodolit|",
            },
            Expected {
                lines: 592,
                bytes: 71314,
                fnv: 0x0bc4_fca1_458c_bf08,
                first: "9|11252|775|1|27|31407.75|0.10|0.00|N|O|1995-11-28|1995-12-06|1995-12-06|TAKE BACK RETURN|AIR|ilent packages. final, regu|",
                last: "590|10806|67|7|41|70388.80|0.10|0.02|R|F|1993-08-20|1993-09-16|1993-08-21|DELIVER IN PERSON|SHIP|hs past the quickly special r|",
            },
            Expected {
                lines: 150,
                bytes: 716,
                fnv: 0x8d8f_460b_2b00_d04b,
                first: "1|",
                last: "582|",
            },
        ),
    ];

    #[test]
    fn matches_dbgen_files() {
        for (sf, set, orders, lineitems, deletes) in &REFERENCE {
            let u = update_set(*sf, *set);
            let name = |file: &str| format!("SF {sf} {file}");
            check(
                &name(&format!("orders.tbl.u{set}")),
                &orders_text(&u),
                orders,
            );
            check(
                &name(&format!("lineitem.tbl.u{set}")),
                &lineitems_text(&u),
                lineitems,
            );
            check(&name(&format!("delete.{set}")), &deletes_text(&u), deletes);
        }
    }

    #[test]
    fn typed_fields() {
        let u = update_set(0.01, 1);
        let order = &u.orders[0];
        assert_eq!(order.o_orderkey, 9);
        assert_eq!(order.o_custkey, 1385);
        assert_eq!(order.o_orderstatus, OrderStatus::Fulfilled);
        assert_eq!(order.o_totalprice, TPCHDecimal(17_936_658));
        assert_eq!(order.o_orderdate.to_string(), "1994-05-15");
        let line = &u.lineitems[0];
        assert_eq!(
            (line.l_orderkey, line.l_partkey, line.l_suppkey),
            (9, 31, 57)
        );
        assert_eq!(line.l_extendedprice, TPCHDecimal(3_072_399));
        assert_eq!(line.l_discount, TPCHDecimal(7));
        assert_eq!(u.deletes[..4], [1, 2, 3, 4]);
        // Each line belongs to one of the set's orders, in order.
        let keys: Vec<i64> = u.orders.iter().map(|o| o.o_orderkey).collect();
        assert!(u.lineitems.iter().all(|l| keys.contains(&l.l_orderkey)));
    }

    /// From `dbgen -q -f -s 0.01 -U 1002`: from set 1000 on the key slots
    /// move (inserts into slot 2, deletes from slot 1).
    #[test]
    fn thousandth_set_key_slots() {
        let u = update_set(0.01, 1001);
        assert_eq!(u.orders[0].o_orderkey, 40017);
        assert_eq!(u.orders[1].o_orderkey, 40018);
        assert_eq!(u.deletes[..2], [40009, 40010]);
    }

    #[test]
    fn sizes_follow_dbgen() {
        let rows = |sf| Sizes::new(sf).rows_per_set;
        assert_eq!(rows(0.01), 10);
        assert_eq!(rows(0.05), 70);
        assert_eq!(rows(0.1), 150);
        assert_eq!(rows(0.25), 370);
        assert_eq!(rows(1.0), 1500);
        assert_eq!(rows(1.5), 1500);
        assert_eq!(rows(10.0), 15_000);
        assert_eq!(rows(0.001), 0);
        let s = Sizes::new(0.01);
        assert_eq!(
            (s.scale, s.orders, s.customers, s.parts, s.suppliers),
            (1, 15_000, 1_500, 2_000, 100)
        );
    }

    #[test]
    #[should_panic(expected = "numbered from 1")]
    fn set_zero_is_rejected() {
        let _ = update_set(1.0, 0);
    }
}
