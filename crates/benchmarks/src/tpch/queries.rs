//! The 22 TPC-H query templates in the three SQL dialects dbmeter speaks.
//!
//! Each template keeps the specification's semantics (TPC-H clause 2.4)
//! and its substitution parameters in qgen's order (`:1`, `:2`, ... of
//! tpch-kit's `queries/N.sql`); only the dialect differs:
//!
//! - date arithmetic: `date 'X' + interval N month` (MySQL/MariaDB),
//!   `date 'X' + interval 'N month'` (PostgreSQL), `date('X', '+N months')`
//!   (SQLite, where dates are ISO text `YYYY-MM-DD` and date literals are
//!   plain strings);
//! - `extract(year from d)`: `cast(strftime('%Y', d) as integer)` on SQLite;
//! - `substring(c from 1 for 2)`: `substr(c, 1, 2)` on SQLite;
//! - Q13's derived column list `c_orders (c_custkey, c_count)` becomes a
//!   column alias inside the derived table (MariaDB and SQLite have no
//!   derived column lists);
//! - Q6's discount window on SQLite is rounded to cents
//!   (`round(:2 - 0.01, 2)`): SQLite keeps money as binary floats, and
//!   `.06 + 0.01` is a hair below the stored `0.07`, which would drop every
//!   line with a 7% discount;
//! - the row limits of the specification (Q2 100, Q3 10, Q10 20, Q18 100,
//!   Q21 100) as `limit N`.
//!
//! Q15's view is named `revenue<stream>` so concurrent streams do not
//! collide; it is created in [`QuerySql::before`] and dropped in
//! [`QuerySql::after`], all three on the query's own connection.
//!
//! The answer's column names are those of the official answer files
//! (`answers/qN.out`), spelled out where those headers are cut short
//! (`l_returnflag`, `l_linestatus`, `o_orderdate`); Q18's unnamed
//! `sum(l_quantity)` is `col6` as there.
//!
//! `like` is case-insensitive on SQLite and under MySQL's `_ci`
//! collations; the patterns (Q2, Q9, Q13, Q16, Q20) select the same rows on
//! dbgen's data either way, whose only capitalised comment word is
//! `Tiresias`.

use super::Dialect;
use dbmeter_db::{Connection, DbError, ErrorKind, Rows};

/// The SQL of one query: statements to run before (e.g. Q15's CREATE
/// VIEW), the query whose rows are the answer, and statements after (DROP
/// VIEW).
#[derive(Clone, Debug, PartialEq)]
pub struct QuerySql {
    pub before: Vec<String>,
    pub query: String,
    pub after: Vec<String>,
}

impl QuerySql {
    /// Runs `statement` (the query, or a statement on it such as its
    /// EXPLAIN) between the query's before and after statements, so that
    /// Q15's view exists while it runs. When something fails the after
    /// statements still run (a failed Q15 leaves no view behind), unless
    /// the connection is gone.
    pub fn run_with(&self, conn: &mut Connection, statement: &str) -> Result<Rows, DbError> {
        let r = (|| -> Result<Rows, DbError> {
            for s in &self.before {
                conn.execute(s)?;
            }
            let rows = conn.query_rows(statement)?;
            for s in &self.after {
                conn.execute(s)?;
            }
            Ok(rows)
        })();
        if let Err(e) = &r
            && e.kind != ErrorKind::ConnectionLost
        {
            for s in &self.after {
                let _ = conn.execute(s);
            }
        }
        r
    }
}

/// What a substitution parameter holds, and so how it is checked and put
/// into SQL text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// A string: quoted with `''` escaping (or escaped inside a pattern).
    Text,
    /// A number (`90`, `.06`, `0.0001000000`): checked, then put in as it is.
    Number,
    /// A date `YYYY-MM-DD`: checked, then put in as a date literal.
    Date,
}

use Kind::{Date as D, Number as N, Text as T};

/// The kinds of each query's parameters, `:1` first.
const PARAMS: [&[Kind]; 22] = [
    &[N],                            // Q1: delta days
    &[N, T, T],                      // Q2: size, type syllable, region
    &[T, D],                         // Q3: segment, date
    &[D],                            // Q4: date
    &[T, D],                         // Q5: region, date
    &[D, N, N],                      // Q6: date, discount, quantity
    &[T, T],                         // Q7: nation 1, nation 2
    &[T, T, T],                      // Q8: nation, region, type
    &[T],                            // Q9: color
    &[D],                            // Q10: date
    &[T, N],                         // Q11: nation, fraction
    &[T, T, D],                      // Q12: ship mode 1, ship mode 2, date
    &[T, T],                         // Q13: word 1, word 2
    &[D],                            // Q14: date
    &[D],                            // Q15: date
    &[T, T, N, N, N, N, N, N, N, N], // Q16: brand, type, 8 sizes
    &[T, T],                         // Q17: brand, container
    &[N],                            // Q18: quantity
    &[T, T, T, N, N, N],             // Q19: 3 brands, 3 quantities
    &[T, D, T],                      // Q20: color, date, nation
    &[T],                            // Q21: nation
    &[T, T, T, T, T, T, T],          // Q22: 7 country codes
];

/// The answer's column names of each query.
const COLUMNS: [&[&str]; 22] = [
    &[
        "l_returnflag",
        "l_linestatus",
        "sum_qty",
        "sum_base_price",
        "sum_disc_price",
        "sum_charge",
        "avg_qty",
        "avg_price",
        "avg_disc",
        "count_order",
    ],
    &[
        "s_acctbal",
        "s_name",
        "n_name",
        "p_partkey",
        "p_mfgr",
        "s_address",
        "s_phone",
        "s_comment",
    ],
    &["l_orderkey", "revenue", "o_orderdate", "o_shippriority"],
    &["o_orderpriority", "order_count"],
    &["n_name", "revenue"],
    &["revenue"],
    &["supp_nation", "cust_nation", "l_year", "revenue"],
    &["o_year", "mkt_share"],
    &["nation", "o_year", "sum_profit"],
    &[
        "c_custkey",
        "c_name",
        "revenue",
        "c_acctbal",
        "n_name",
        "c_address",
        "c_phone",
        "c_comment",
    ],
    &["ps_partkey", "value"],
    &["l_shipmode", "high_line_count", "low_line_count"],
    &["c_count", "custdist"],
    &["promo_revenue"],
    &[
        "s_suppkey",
        "s_name",
        "s_address",
        "s_phone",
        "total_revenue",
    ],
    &["p_brand", "p_type", "p_size", "supplier_cnt"],
    &["avg_yearly"],
    &[
        "c_name",
        "c_custkey",
        "o_orderkey",
        "o_orderdate",
        "o_totalprice",
        "col6",
    ],
    &["revenue"],
    &["s_name", "s_address"],
    &["s_name", "numwait"],
    &["cntrycode", "numcust", "totacctbal"],
];

fn index(q: u8) -> Option<usize> {
    (1..=22).contains(&q).then(|| usize::from(q) - 1)
}

/// The number of parameters query `q` takes (0 for `q` outside 1..=22).
pub fn parameter_count(q: u8) -> usize {
    index(q).map_or(0, |i| PARAMS[i].len())
}

/// The answer's column names of query `q`, in order (empty for `q`
/// outside 1..=22).
pub fn columns(q: u8) -> &'static [&'static str] {
    index(q).map_or(&[], |i| COLUMNS[i])
}

/// Query `q` (1..=22) in `dialect` with parameters `params` (element i is
/// substituted for `:{i+1}`, exactly the strings qgen substitutes, e.g. Q1
/// `["90"]`, Q2 `["15", "BRASS", "EUROPE"]`), for stream `stream` (names
/// Q15's view). Returns None for `q` outside 1..=22, a wrong number of
/// parameters, or a parameter that should be a number (`90`, `.06`) or a
/// date (`1995-03-15`) and is not.
pub fn query(q: u8, dialect: Dialect, params: &[String], stream: u32) -> Option<QuerySql> {
    let kinds = PARAMS[index(q)?];
    if params.len() != kinds.len() || !params.iter().zip(kinds).all(|(p, k)| k.accepts(p)) {
        return None;
    }
    let s = Sql { dialect, params };
    let query = match q {
        1 => q1(&s),
        2 => q2(&s),
        3 => q3(&s),
        4 => q4(&s),
        5 => q5(&s),
        6 => q6(&s),
        7 => q7(&s),
        8 => q8(&s),
        9 => q9(&s),
        10 => q10(&s),
        11 => q11(&s),
        12 => q12(&s),
        13 => q13(&s),
        14 => q14(&s),
        15 => return Some(q15(&s, stream)),
        16 => q16(&s),
        17 => q17(&s),
        18 => q18(&s),
        19 => q19(&s),
        20 => q20(&s),
        21 => q21(&s),
        22 => q22(&s),
        _ => return None,
    };
    Some(QuerySql {
        before: Vec::new(),
        query,
        after: Vec::new(),
    })
}

impl Kind {
    fn accepts(self, p: &str) -> bool {
        match self {
            Kind::Text => true,
            Kind::Number => is_number(p),
            Kind::Date => is_date(p),
        }
    }
}

/// `digits[.digits]` or `.digits` (qgen's numbers have no sign): at least
/// one digit, nothing else.
fn is_number(p: &str) -> bool {
    let (whole, frac) = p.split_once('.').unwrap_or((p, ""));
    !(whole.is_empty() && frac.is_empty())
        && whole.bytes().all(|b| b.is_ascii_digit())
        && frac.bytes().all(|b| b.is_ascii_digit())
}

/// `YYYY-MM-DD`.
fn is_date(p: &str) -> bool {
    let b = p.as_bytes();
    b.len() == 10
        && b.iter().enumerate().all(|(i, c)| {
            if i == 4 || i == 7 {
                *c == b'-'
            } else {
                c.is_ascii_digit()
            }
        })
}

/// A unit of date arithmetic.
#[derive(Clone, Copy)]
enum Unit {
    Day,
    Month,
    Year,
}

impl Unit {
    fn name(self) -> &'static str {
        match self {
            Unit::Day => "day",
            Unit::Month => "month",
            Unit::Year => "year",
        }
    }
}

/// Renders the dialect's pieces of one query from checked parameters.
struct Sql<'a> {
    dialect: Dialect,
    params: &'a [String],
}

impl Sql<'_> {
    /// Parameter `:n` as given (the count was checked, so it is there).
    fn raw(&self, n: usize) -> &str {
        n.checked_sub(1)
            .and_then(|i| self.params.get(i))
            .map_or("", String::as_str)
    }

    /// Parameter `:n` escaped for use inside a quoted string (`'%:n%'`).
    fn esc(&self, n: usize) -> String {
        self.raw(n).replace('\'', "''")
    }

    /// Parameter `:n` as a quoted string literal (`':n'`).
    fn lit(&self, n: usize) -> String {
        format!("'{}'", self.esc(n))
    }

    /// Parameter `:n`, a checked number.
    fn num(&self, n: usize) -> &str {
        self.raw(n)
    }

    /// Parameter `:n` as a date literal (`date ':n'`).
    fn date(&self, n: usize) -> String {
        self.date_lit(&self.esc(n))
    }

    /// The date literal `date 'iso'` (ISO text on SQLite).
    fn date_lit(&self, iso: &str) -> String {
        match self.dialect {
            Dialect::Sqlite => format!("'{iso}'"),
            Dialect::Mysql | Dialect::Postgres => format!("date '{iso}'"),
        }
    }

    /// Parameter `:n` plus `amount` units: `date ':n' + interval 'amount' unit`.
    fn date_plus(&self, n: usize, amount: u32, unit: Unit) -> String {
        self.shift(&self.esc(n), '+', &amount.to_string(), unit)
    }

    /// `date 'iso' <sign> interval 'amount' unit`; `amount` is a checked
    /// number.
    fn shift(&self, iso: &str, sign: char, amount: &str, unit: Unit) -> String {
        let unit = unit.name();
        match self.dialect {
            Dialect::Mysql => format!("date '{iso}' {sign} interval {amount} {unit}"),
            Dialect::Postgres => format!("date '{iso}' {sign} interval '{amount} {unit}'"),
            Dialect::Sqlite => format!("date('{iso}', '{sign}{amount} {unit}s')"),
        }
    }

    /// `extract(year from col)`.
    fn year(&self, col: &str) -> String {
        match self.dialect {
            Dialect::Sqlite => format!("cast(strftime('%Y', {col}) as integer)"),
            Dialect::Mysql | Dialect::Postgres => format!("extract(year from {col})"),
        }
    }

    /// `substring(col from 1 for 2)`.
    fn first_two(&self, col: &str) -> String {
        match self.dialect {
            Dialect::Sqlite => format!("substr({col}, 1, 2)"),
            Dialect::Mysql | Dialect::Postgres => format!("substring({col} from 1 for 2)"),
        }
    }
}

/// Pricing Summary Report.
fn q1(s: &Sql) -> String {
    format!(
        "select
	l_returnflag,
	l_linestatus,
	sum(l_quantity) as sum_qty,
	sum(l_extendedprice) as sum_base_price,
	sum(l_extendedprice * (1 - l_discount)) as sum_disc_price,
	sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) as sum_charge,
	avg(l_quantity) as avg_qty,
	avg(l_extendedprice) as avg_price,
	avg(l_discount) as avg_disc,
	count(*) as count_order
from
	lineitem
where
	l_shipdate <= {shipdate}
group by
	l_returnflag,
	l_linestatus
order by
	l_returnflag,
	l_linestatus",
        shipdate = s.shift("1998-12-01", '-', s.num(1), Unit::Day),
    )
}

/// Minimum Cost Supplier.
fn q2(s: &Sql) -> String {
    format!(
        "select
	s_acctbal,
	s_name,
	n_name,
	p_partkey,
	p_mfgr,
	s_address,
	s_phone,
	s_comment
from
	part,
	supplier,
	partsupp,
	nation,
	region
where
	p_partkey = ps_partkey
	and s_suppkey = ps_suppkey
	and p_size = {size}
	and p_type like '%{ty}'
	and s_nationkey = n_nationkey
	and n_regionkey = r_regionkey
	and r_name = {region}
	and ps_supplycost = (
		select
			min(ps_supplycost)
		from
			partsupp,
			supplier,
			nation,
			region
		where
			p_partkey = ps_partkey
			and s_suppkey = ps_suppkey
			and s_nationkey = n_nationkey
			and n_regionkey = r_regionkey
			and r_name = {region}
	)
order by
	s_acctbal desc,
	n_name,
	s_name,
	p_partkey
limit 100",
        size = s.num(1),
        ty = s.esc(2),
        region = s.lit(3),
    )
}

/// Shipping Priority.
fn q3(s: &Sql) -> String {
    format!(
        "select
	l_orderkey,
	sum(l_extendedprice * (1 - l_discount)) as revenue,
	o_orderdate,
	o_shippriority
from
	customer,
	orders,
	lineitem
where
	c_mktsegment = {segment}
	and c_custkey = o_custkey
	and l_orderkey = o_orderkey
	and o_orderdate < {date}
	and l_shipdate > {date}
group by
	l_orderkey,
	o_orderdate,
	o_shippriority
order by
	revenue desc,
	o_orderdate
limit 10",
        segment = s.lit(1),
        date = s.date(2),
    )
}

/// Order Priority Checking.
fn q4(s: &Sql) -> String {
    format!(
        "select
	o_orderpriority,
	count(*) as order_count
from
	orders
where
	o_orderdate >= {from}
	and o_orderdate < {to}
	and exists (
		select
			*
		from
			lineitem
		where
			l_orderkey = o_orderkey
			and l_commitdate < l_receiptdate
	)
group by
	o_orderpriority
order by
	o_orderpriority",
        from = s.date(1),
        to = s.date_plus(1, 3, Unit::Month),
    )
}

/// Local Supplier Volume.
fn q5(s: &Sql) -> String {
    format!(
        "select
	n_name,
	sum(l_extendedprice * (1 - l_discount)) as revenue
from
	customer,
	orders,
	lineitem,
	supplier,
	nation,
	region
where
	c_custkey = o_custkey
	and l_orderkey = o_orderkey
	and l_suppkey = s_suppkey
	and c_nationkey = s_nationkey
	and s_nationkey = n_nationkey
	and n_regionkey = r_regionkey
	and r_name = {region}
	and o_orderdate >= {from}
	and o_orderdate < {to}
group by
	n_name
order by
	revenue desc",
        region = s.lit(1),
        from = s.date(2),
        to = s.date_plus(2, 1, Unit::Year),
    )
}

/// Forecasting Revenue Change.
fn q6(s: &Sql) -> String {
    let discount = s.num(2);
    // SQLite's money is a binary float: `.06 + 0.01` is a hair below the
    // stored 0.07, so the window's ends are rounded to cents there.
    let (low, high) = match s.dialect {
        Dialect::Sqlite => (
            format!("round({discount} - 0.01, 2)"),
            format!("round({discount} + 0.01, 2)"),
        ),
        Dialect::Mysql | Dialect::Postgres => {
            (format!("{discount} - 0.01"), format!("{discount} + 0.01"))
        }
    };
    format!(
        "select
	sum(l_extendedprice * l_discount) as revenue
from
	lineitem
where
	l_shipdate >= {from}
	and l_shipdate < {to}
	and l_discount between {low} and {high}
	and l_quantity < {quantity}",
        from = s.date(1),
        to = s.date_plus(1, 1, Unit::Year),
        quantity = s.num(3),
    )
}

/// Volume Shipping.
fn q7(s: &Sql) -> String {
    format!(
        "select
	supp_nation,
	cust_nation,
	l_year,
	sum(volume) as revenue
from
	(
		select
			n1.n_name as supp_nation,
			n2.n_name as cust_nation,
			{year} as l_year,
			l_extendedprice * (1 - l_discount) as volume
		from
			supplier,
			lineitem,
			orders,
			customer,
			nation n1,
			nation n2
		where
			s_suppkey = l_suppkey
			and o_orderkey = l_orderkey
			and c_custkey = o_custkey
			and s_nationkey = n1.n_nationkey
			and c_nationkey = n2.n_nationkey
			and (
				(n1.n_name = {nation1} and n2.n_name = {nation2})
				or (n1.n_name = {nation2} and n2.n_name = {nation1})
			)
			and l_shipdate between {from} and {to}
	) as shipping
group by
	supp_nation,
	cust_nation,
	l_year
order by
	supp_nation,
	cust_nation,
	l_year",
        year = s.year("l_shipdate"),
        nation1 = s.lit(1),
        nation2 = s.lit(2),
        from = s.date_lit("1995-01-01"),
        to = s.date_lit("1996-12-31"),
    )
}

/// National Market Share.
fn q8(s: &Sql) -> String {
    format!(
        "select
	o_year,
	sum(case
		when nation = {nation} then volume
		else 0
	end) / sum(volume) as mkt_share
from
	(
		select
			{year} as o_year,
			l_extendedprice * (1 - l_discount) as volume,
			n2.n_name as nation
		from
			part,
			supplier,
			lineitem,
			orders,
			customer,
			nation n1,
			nation n2,
			region
		where
			p_partkey = l_partkey
			and s_suppkey = l_suppkey
			and l_orderkey = o_orderkey
			and o_custkey = c_custkey
			and c_nationkey = n1.n_nationkey
			and n1.n_regionkey = r_regionkey
			and r_name = {region}
			and s_nationkey = n2.n_nationkey
			and o_orderdate between {from} and {to}
			and p_type = {ty}
	) as all_nations
group by
	o_year
order by
	o_year",
        nation = s.lit(1),
        year = s.year("o_orderdate"),
        region = s.lit(2),
        from = s.date_lit("1995-01-01"),
        to = s.date_lit("1996-12-31"),
        ty = s.lit(3),
    )
}

/// Product Type Profit Measure.
fn q9(s: &Sql) -> String {
    format!(
        "select
	nation,
	o_year,
	sum(amount) as sum_profit
from
	(
		select
			n_name as nation,
			{year} as o_year,
			l_extendedprice * (1 - l_discount) - ps_supplycost * l_quantity as amount
		from
			part,
			supplier,
			lineitem,
			partsupp,
			orders,
			nation
		where
			s_suppkey = l_suppkey
			and ps_suppkey = l_suppkey
			and ps_partkey = l_partkey
			and p_partkey = l_partkey
			and o_orderkey = l_orderkey
			and s_nationkey = n_nationkey
			and p_name like '%{color}%'
	) as profit
group by
	nation,
	o_year
order by
	nation,
	o_year desc",
        year = s.year("o_orderdate"),
        color = s.esc(1),
    )
}

/// Returned Item Reporting.
fn q10(s: &Sql) -> String {
    format!(
        "select
	c_custkey,
	c_name,
	sum(l_extendedprice * (1 - l_discount)) as revenue,
	c_acctbal,
	n_name,
	c_address,
	c_phone,
	c_comment
from
	customer,
	orders,
	lineitem,
	nation
where
	c_custkey = o_custkey
	and l_orderkey = o_orderkey
	and o_orderdate >= {from}
	and o_orderdate < {to}
	and l_returnflag = 'R'
	and c_nationkey = n_nationkey
group by
	c_custkey,
	c_name,
	c_acctbal,
	c_phone,
	n_name,
	c_address,
	c_comment
order by
	revenue desc
limit 20",
        from = s.date(1),
        to = s.date_plus(1, 3, Unit::Month),
    )
}

/// Important Stock Identification.
fn q11(s: &Sql) -> String {
    format!(
        "select
	ps_partkey,
	sum(ps_supplycost * ps_availqty) as value
from
	partsupp,
	supplier,
	nation
where
	ps_suppkey = s_suppkey
	and s_nationkey = n_nationkey
	and n_name = {nation}
group by
	ps_partkey having
		sum(ps_supplycost * ps_availqty) > (
			select
				sum(ps_supplycost * ps_availqty) * {fraction}
			from
				partsupp,
				supplier,
				nation
			where
				ps_suppkey = s_suppkey
				and s_nationkey = n_nationkey
				and n_name = {nation}
		)
order by
	value desc",
        nation = s.lit(1),
        fraction = s.num(2),
    )
}

/// Shipping Modes and Order Priority.
fn q12(s: &Sql) -> String {
    format!(
        "select
	l_shipmode,
	sum(case
		when o_orderpriority = '1-URGENT'
			or o_orderpriority = '2-HIGH'
			then 1
		else 0
	end) as high_line_count,
	sum(case
		when o_orderpriority <> '1-URGENT'
			and o_orderpriority <> '2-HIGH'
			then 1
		else 0
	end) as low_line_count
from
	orders,
	lineitem
where
	o_orderkey = l_orderkey
	and l_shipmode in ({mode1}, {mode2})
	and l_commitdate < l_receiptdate
	and l_shipdate < l_commitdate
	and l_receiptdate >= {from}
	and l_receiptdate < {to}
group by
	l_shipmode
order by
	l_shipmode",
        mode1 = s.lit(1),
        mode2 = s.lit(2),
        from = s.date(3),
        to = s.date_plus(3, 1, Unit::Year),
    )
}

/// Customer Distribution. The derived column list `c_orders (c_custkey,
/// c_count)` is an alias inside the derived table (MariaDB and SQLite have
/// no derived column lists).
fn q13(s: &Sql) -> String {
    format!(
        "select
	c_count,
	count(*) as custdist
from
	(
		select
			c_custkey,
			count(o_orderkey) as c_count
		from
			customer left outer join orders on
				c_custkey = o_custkey
				and o_comment not like '%{word1}%{word2}%'
		group by
			c_custkey
	) as c_orders
group by
	c_count
order by
	custdist desc,
	c_count desc",
        word1 = s.esc(1),
        word2 = s.esc(2),
    )
}

/// Promotion Effect.
fn q14(s: &Sql) -> String {
    format!(
        "select
	100.00 * sum(case
		when p_type like 'PROMO%'
			then l_extendedprice * (1 - l_discount)
		else 0
	end) / sum(l_extendedprice * (1 - l_discount)) as promo_revenue
from
	lineitem,
	part
where
	l_partkey = p_partkey
	and l_shipdate >= {from}
	and l_shipdate < {to}",
        from = s.date(1),
        to = s.date_plus(1, 1, Unit::Month),
    )
}

/// Top Supplier: a view per stream, the query, the view dropped.
fn q15(s: &Sql, stream: u32) -> QuerySql {
    let view = format!("revenue{stream}");
    let create = format!(
        "create view {view} (supplier_no, total_revenue) as
	select
		l_suppkey,
		sum(l_extendedprice * (1 - l_discount))
	from
		lineitem
	where
		l_shipdate >= {from}
		and l_shipdate < {to}
	group by
		l_suppkey",
        from = s.date(1),
        to = s.date_plus(1, 3, Unit::Month),
    );
    let query = format!(
        "select
	s_suppkey,
	s_name,
	s_address,
	s_phone,
	total_revenue
from
	supplier,
	{view}
where
	s_suppkey = supplier_no
	and total_revenue = (
		select
			max(total_revenue)
		from
			{view}
	)
order by
	s_suppkey"
    );
    QuerySql {
        before: vec![create],
        query,
        after: vec![format!("drop view {view}")],
    }
}

/// Parts/Supplier Relationship.
fn q16(s: &Sql) -> String {
    let sizes = (3..=10).map(|n| s.num(n)).collect::<Vec<_>>().join(", ");
    format!(
        "select
	p_brand,
	p_type,
	p_size,
	count(distinct ps_suppkey) as supplier_cnt
from
	partsupp,
	part
where
	p_partkey = ps_partkey
	and p_brand <> {brand}
	and p_type not like '{ty}%'
	and p_size in ({sizes})
	and ps_suppkey not in (
		select
			s_suppkey
		from
			supplier
		where
			s_comment like '%Customer%Complaints%'
	)
group by
	p_brand,
	p_type,
	p_size
order by
	supplier_cnt desc,
	p_brand,
	p_type,
	p_size",
        brand = s.lit(1),
        ty = s.esc(2),
    )
}

/// Small-Quantity-Order Revenue.
fn q17(s: &Sql) -> String {
    format!(
        "select
	sum(l_extendedprice) / 7.0 as avg_yearly
from
	lineitem,
	part
where
	p_partkey = l_partkey
	and p_brand = {brand}
	and p_container = {container}
	and l_quantity < (
		select
			0.2 * avg(l_quantity)
		from
			lineitem
		where
			l_partkey = p_partkey
	)",
        brand = s.lit(1),
        container = s.lit(2),
    )
}

/// Large Volume Customer.
fn q18(s: &Sql) -> String {
    format!(
        "select
	c_name,
	c_custkey,
	o_orderkey,
	o_orderdate,
	o_totalprice,
	sum(l_quantity) as col6
from
	customer,
	orders,
	lineitem
where
	o_orderkey in (
		select
			l_orderkey
		from
			lineitem
		group by
			l_orderkey having
				sum(l_quantity) > {quantity}
	)
	and c_custkey = o_custkey
	and o_orderkey = l_orderkey
group by
	c_name,
	c_custkey,
	o_orderkey,
	o_orderdate,
	o_totalprice
order by
	o_totalprice desc,
	o_orderdate
limit 100",
        quantity = s.num(1),
    )
}

/// Discounted Revenue.
fn q19(s: &Sql) -> String {
    format!(
        "select
	sum(l_extendedprice* (1 - l_discount)) as revenue
from
	lineitem,
	part
where
	(
		p_partkey = l_partkey
		and p_brand = {brand1}
		and p_container in ('SM CASE', 'SM BOX', 'SM PACK', 'SM PKG')
		and l_quantity >= {q1} and l_quantity <= {q1} + 10
		and p_size between 1 and 5
		and l_shipmode in ('AIR', 'AIR REG')
		and l_shipinstruct = 'DELIVER IN PERSON'
	)
	or
	(
		p_partkey = l_partkey
		and p_brand = {brand2}
		and p_container in ('MED BAG', 'MED BOX', 'MED PKG', 'MED PACK')
		and l_quantity >= {q2} and l_quantity <= {q2} + 10
		and p_size between 1 and 10
		and l_shipmode in ('AIR', 'AIR REG')
		and l_shipinstruct = 'DELIVER IN PERSON'
	)
	or
	(
		p_partkey = l_partkey
		and p_brand = {brand3}
		and p_container in ('LG CASE', 'LG BOX', 'LG PACK', 'LG PKG')
		and l_quantity >= {q3} and l_quantity <= {q3} + 10
		and p_size between 1 and 15
		and l_shipmode in ('AIR', 'AIR REG')
		and l_shipinstruct = 'DELIVER IN PERSON'
	)",
        brand1 = s.lit(1),
        brand2 = s.lit(2),
        brand3 = s.lit(3),
        q1 = s.num(4),
        q2 = s.num(5),
        q3 = s.num(6),
    )
}

/// Potential Part Promotion.
fn q20(s: &Sql) -> String {
    format!(
        "select
	s_name,
	s_address
from
	supplier,
	nation
where
	s_suppkey in (
		select
			ps_suppkey
		from
			partsupp
		where
			ps_partkey in (
				select
					p_partkey
				from
					part
				where
					p_name like '{color}%'
			)
			and ps_availqty > (
				select
					0.5 * sum(l_quantity)
				from
					lineitem
				where
					l_partkey = ps_partkey
					and l_suppkey = ps_suppkey
					and l_shipdate >= {from}
					and l_shipdate < {to}
			)
	)
	and s_nationkey = n_nationkey
	and n_name = {nation}
order by
	s_name",
        color = s.esc(1),
        from = s.date(2),
        to = s.date_plus(2, 1, Unit::Year),
        nation = s.lit(3),
    )
}

/// Suppliers Who Kept Orders Waiting.
fn q21(s: &Sql) -> String {
    format!(
        "select
	s_name,
	count(*) as numwait
from
	supplier,
	lineitem l1,
	orders,
	nation
where
	s_suppkey = l1.l_suppkey
	and o_orderkey = l1.l_orderkey
	and o_orderstatus = 'F'
	and l1.l_receiptdate > l1.l_commitdate
	and exists (
		select
			*
		from
			lineitem l2
		where
			l2.l_orderkey = l1.l_orderkey
			and l2.l_suppkey <> l1.l_suppkey
	)
	and not exists (
		select
			*
		from
			lineitem l3
		where
			l3.l_orderkey = l1.l_orderkey
			and l3.l_suppkey <> l1.l_suppkey
			and l3.l_receiptdate > l3.l_commitdate
	)
	and s_nationkey = n_nationkey
	and n_name = {nation}
group by
	s_name
order by
	numwait desc,
	s_name
limit 100",
        nation = s.lit(1),
    )
}

/// Global Sales Opportunity.
fn q22(s: &Sql) -> String {
    let codes = (1..=7).map(|n| s.lit(n)).collect::<Vec<_>>().join(", ");
    format!(
        "select
	cntrycode,
	count(*) as numcust,
	sum(c_acctbal) as totacctbal
from
	(
		select
			{code} as cntrycode,
			c_acctbal
		from
			customer
		where
			{code} in
				({codes})
			and c_acctbal > (
				select
					avg(c_acctbal)
				from
					customer
				where
					c_acctbal > 0.00
					and {code} in
						({codes})
			)
			and not exists (
				select
					*
				from
					orders
				where
					o_custkey = c_custkey
			)
	) as custsale
group by
	cntrycode
order by
	cntrycode",
        code = s.first_two("c_phone"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIALECTS: [Dialect; 3] = [Dialect::Mysql, Dialect::Postgres, Dialect::Sqlite];

    /// qgen -d's validation parameters (tpch-kit, dists.dss defaults).
    const VALIDATION: [&[&str]; 22] = [
        &["90"],
        &["15", "BRASS", "EUROPE"],
        &["BUILDING", "1995-03-15"],
        &["1993-07-01"],
        &["ASIA", "1994-01-01"],
        &["1994-01-01", ".06", "24"],
        &["FRANCE", "GERMANY"],
        &["BRAZIL", "AMERICA", "ECONOMY ANODIZED STEEL"],
        &["green"],
        &["1993-10-01"],
        &["GERMANY", "0.0001000000"],
        &["MAIL", "SHIP", "1994-01-01"],
        &["special", "requests"],
        &["1995-09-01"],
        &["1996-01-01"],
        &[
            "Brand#45",
            "MEDIUM POLISHED",
            "49",
            "14",
            "23",
            "45",
            "19",
            "3",
            "36",
            "9",
        ],
        &["Brand#23", "MED BOX"],
        &["300"],
        &["Brand#12", "Brand#23", "Brand#34", "1", "10", "20"],
        &["forest", "1994-01-01", "CANADA"],
        &["SAUDI ARABIA"],
        &["13", "31", "23", "29", "30", "18", "17"],
    ];

    /// The column counts of the official answer files q1.out .. q22.out.
    const ANSWER_COLUMNS: [usize; 22] = [
        10, 8, 4, 2, 2, 1, 4, 2, 3, 8, 2, 3, 2, 1, 5, 4, 1, 6, 1, 2, 2, 3,
    ];

    fn params(q: u8) -> Vec<String> {
        VALIDATION[usize::from(q) - 1]
            .iter()
            .map(|p| p.to_string())
            .collect()
    }

    fn render(q: u8, d: Dialect) -> QuerySql {
        match query(q, d, &params(q), 0) {
            Some(sql) => sql,
            None => panic!("Q{q} does not render for {d:?}"),
        }
    }

    /// Every statement of one query, joined.
    fn all_text(sql: &QuerySql) -> String {
        let mut parts = sql.before.clone();
        parts.push(sql.query.clone());
        parts.extend(sql.after.iter().cloned());
        parts.join("\n;\n")
    }

    #[test]
    fn every_query_renders_in_every_dialect() {
        for q in 1..=22 {
            assert_eq!(parameter_count(q), VALIDATION[usize::from(q) - 1].len());
            for d in DIALECTS {
                let sql = render(q, d);
                assert!(sql.query.starts_with("select"), "Q{q} {d:?}");
                assert!(
                    !sql.query.contains(';'),
                    "Q{q} {d:?}: no statement separator"
                );
                if q != 15 {
                    assert!(sql.before.is_empty() && sql.after.is_empty());
                }
            }
        }
    }

    #[test]
    fn no_placeholder_is_left() {
        for q in 1..=22 {
            for d in DIALECTS {
                let text = all_text(&render(q, d));
                let bytes = text.as_bytes();
                for (i, _) in text.match_indices(':') {
                    let next = bytes.get(i + 1).copied().unwrap_or(b' ');
                    assert!(
                        !next.is_ascii_digit() && next != b's',
                        "Q{q} {d:?}: placeholder left at {i}: {text}"
                    );
                }
                assert!(!text.contains('{') && !text.contains('}'), "Q{q} {d:?}");
            }
        }
    }

    #[test]
    fn every_parameter_lands_in_the_text() {
        for q in 1..=22 {
            for d in DIALECTS {
                let text = all_text(&render(q, d));
                for p in VALIDATION[usize::from(q) - 1] {
                    assert!(text.contains(p), "Q{q} {d:?}: {p} missing");
                }
            }
        }
    }

    #[test]
    fn q15_view_is_named_per_stream() {
        for d in DIALECTS {
            let sql = query(15, d, &params(15), 7).expect("Q15 renders");
            assert_eq!(sql.before.len(), 1);
            assert!(sql.before[0].starts_with("create view revenue7 "), "{d:?}");
            assert_eq!(sql.query.matches("revenue7").count(), 2);
            assert_eq!(sql.after, vec!["drop view revenue7".to_string()]);
            let other = query(15, d, &params(15), 12).expect("Q15 renders");
            assert!(other.before[0].contains("revenue12"));
            assert!(!other.query.contains("revenue7"));
        }
    }

    #[test]
    fn q15_window_is_three_months() {
        let view = |d| query(15, d, &params(15), 0).expect("Q15 renders").before[0].clone();
        assert!(view(Dialect::Mysql).contains("date '1996-01-01' + interval 3 month"));
        assert!(view(Dialect::Postgres).contains("date '1996-01-01' + interval '3 month'"));
        assert!(view(Dialect::Sqlite).contains("date('1996-01-01', '+3 months')"));
    }

    #[test]
    fn date_arithmetic_per_dialect() {
        let q1 = |d| render(1, d).query;
        assert!(q1(Dialect::Mysql).contains("l_shipdate <= date '1998-12-01' - interval 90 day"));
        assert!(q1(Dialect::Postgres).contains("date '1998-12-01' - interval '90 day'"));
        assert!(q1(Dialect::Sqlite).contains("l_shipdate <= date('1998-12-01', '-90 days')"));
        let q5 = |d| render(5, d).query;
        assert!(q5(Dialect::Mysql).contains("< date '1994-01-01' + interval 1 year"));
        assert!(q5(Dialect::Postgres).contains("< date '1994-01-01' + interval '1 year'"));
        assert!(q5(Dialect::Sqlite).contains("< date('1994-01-01', '+1 years')"));
        assert!(
            render(3, Dialect::Sqlite)
                .query
                .contains("o_orderdate < '1995-03-15'")
        );
        assert!(
            render(3, Dialect::Postgres)
                .query
                .contains("o_orderdate < date '1995-03-15'")
        );
        let q7 = render(7, Dialect::Sqlite).query;
        assert!(q7.contains("cast(strftime('%Y', l_shipdate) as integer) as l_year"));
        assert!(q7.contains("between '1995-01-01' and '1996-12-31'"));
        assert!(
            render(7, Dialect::Mysql)
                .query
                .contains("extract(year from l_shipdate)")
        );
        assert!(
            render(22, Dialect::Sqlite)
                .query
                .contains("substr(c_phone, 1, 2) in")
        );
        assert!(
            render(22, Dialect::Postgres)
                .query
                .contains("substring(c_phone from 1 for 2)")
        );
    }

    #[test]
    fn row_limits_of_the_specification() {
        let limits = [(2, 100), (3, 10), (10, 20), (18, 100), (21, 100)];
        for q in 1..=22 {
            for d in DIALECTS {
                let sql = render(q, d).query;
                match limits.iter().find(|(l, _)| *l == q) {
                    Some((_, n)) => assert!(sql.ends_with(&format!("\nlimit {n}")), "Q{q}"),
                    None => assert!(!sql.contains("limit"), "Q{q}"),
                }
            }
        }
    }

    #[test]
    fn wrong_parameters_give_none() {
        for d in DIALECTS {
            assert_eq!(query(0, d, &[], 0), None);
            assert_eq!(query(23, d, &[], 0), None);
            for q in 1..=22 {
                let mut p = params(q);
                p.push("x".to_string());
                assert_eq!(query(q, d, &p, 0), None, "Q{q} one too many");
                p.truncate(p.len() - 2);
                assert_eq!(query(q, d, &p, 0), None, "Q{q} one too few");
            }
            let bad = |q: u8, i: usize, v: &str| {
                let mut p = params(q);
                p[i] = v.to_string();
                query(q, d, &p, 0)
            };
            assert_eq!(bad(1, 0, "90 day; drop table lineitem"), None);
            assert_eq!(bad(1, 0, ""), None);
            assert_eq!(bad(1, 0, "."), None);
            assert_eq!(bad(6, 1, "0.06.1"), None);
            assert_eq!(bad(3, 1, "1995-3-15"), None);
            assert_eq!(bad(3, 1, "1995-03-15' or '1"), None);
            assert!(bad(6, 1, "0.06").is_some());
            assert_eq!(bad(1, 0, "-5"), None);
            assert!(bad(18, 0, "312").is_some());
        }
        assert_eq!(parameter_count(0), 0);
        assert_eq!(parameter_count(23), 0);
        assert!(columns(0).is_empty() && columns(23).is_empty());
    }

    #[test]
    fn text_parameters_are_escaped() {
        for d in DIALECTS {
            let mut p = params(21);
            p[0] = "O'HARA".to_string();
            let sql = query(21, d, &p, 0).expect("Q21 renders").query;
            assert!(sql.contains("n_name = 'O''HARA'"));
            let mut p = params(9);
            p[0] = "gr'een".to_string();
            let sql = query(9, d, &p, 0).expect("Q9 renders").query;
            assert!(sql.contains("p_name like '%gr''een%'"));
        }
    }

    #[test]
    fn sqlite_discount_window_is_rounded_to_cents() {
        let q6 = render(6, Dialect::Sqlite).query;
        assert!(q6.contains("between round(.06 - 0.01, 2) and round(.06 + 0.01, 2)"));
        let q6 = render(6, Dialect::Postgres).query;
        assert!(q6.contains("between .06 - 0.01 and .06 + 0.01"));
    }

    #[test]
    fn columns_match_the_answer_files() {
        for q in 1..=22 {
            let cols = columns(q);
            assert_eq!(cols.len(), ANSWER_COLUMNS[usize::from(q) - 1], "Q{q}");
            let sql = render(q, Dialect::Postgres).query;
            let select = sql.split("\nfrom").next().unwrap_or_default();
            for c in cols {
                assert!(
                    select.contains(c),
                    "Q{q}: column {c} not named in the select list"
                );
            }
        }
    }
}
