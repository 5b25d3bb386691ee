//! The eight TPC-H tables in each dialect, their keys, foreign keys and
//! the indexes the DBT3 kit creates.

use dbmeter_db::{Connection, DbError, Dialect};

/// A column's type class; each dialect spells it its own way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    /// A key or count that fits 32 bits.
    Int,
    /// A key that outgrows 32 bits at large scale factors (order keys).
    BigInt,
    /// Money, quantities, discounts: DECIMAL(15,2) (REAL on SQLite).
    Money,
    Date,
    Char(u16),
    VarChar(u16),
}

impl Ty {
    fn sql(self, d: Dialect) -> String {
        match (self, d) {
            (Ty::Int | Ty::BigInt, Dialect::Sqlite) => "INTEGER".into(),
            (Ty::Int, _) => "INTEGER".into(),
            (Ty::BigInt, _) => "BIGINT".into(),
            (Ty::Money, Dialect::Sqlite) => "REAL".into(),
            (Ty::Money, _) => "DECIMAL(15,2)".into(),
            (Ty::Date, Dialect::Sqlite) => "TEXT".into(),
            (Ty::Date, _) => "DATE".into(),
            (Ty::Char(_) | Ty::VarChar(_), Dialect::Sqlite) => "TEXT".into(),
            (Ty::Char(n), _) => format!("CHAR({n})"),
            (Ty::VarChar(n), _) => format!("VARCHAR({n})"),
        }
    }
}

/// One table: its columns in .tbl order, primary key and foreign keys.
#[derive(Debug)]
pub struct Table {
    pub name: &'static str,
    pub columns: &'static [(&'static str, Ty)],
    pub primary_key: &'static [&'static str],
    /// (columns, referenced table, referenced columns).
    pub foreign_keys: &'static [(
        &'static [&'static str],
        &'static str,
        &'static [&'static str],
    )],
}

impl Table {
    pub fn column_names(&self) -> Vec<&'static str> {
        self.columns.iter().map(|c| c.0).collect()
    }
}

use Ty::*;

/// The tables in load order (referenced tables first).
pub const TABLES: &[Table] = &[
    Table {
        name: "region",
        columns: &[
            ("r_regionkey", Int),
            ("r_name", Char(25)),
            ("r_comment", VarChar(152)),
        ],
        primary_key: &["r_regionkey"],
        foreign_keys: &[],
    },
    Table {
        name: "nation",
        columns: &[
            ("n_nationkey", Int),
            ("n_name", Char(25)),
            ("n_regionkey", Int),
            ("n_comment", VarChar(152)),
        ],
        primary_key: &["n_nationkey"],
        foreign_keys: &[(&["n_regionkey"], "region", &["r_regionkey"])],
    },
    Table {
        name: "part",
        columns: &[
            ("p_partkey", Int),
            ("p_name", VarChar(55)),
            ("p_mfgr", Char(25)),
            ("p_brand", Char(10)),
            ("p_type", VarChar(25)),
            ("p_size", Int),
            ("p_container", Char(10)),
            ("p_retailprice", Money),
            ("p_comment", VarChar(23)),
        ],
        primary_key: &["p_partkey"],
        foreign_keys: &[],
    },
    Table {
        name: "supplier",
        columns: &[
            ("s_suppkey", Int),
            ("s_name", Char(25)),
            ("s_address", VarChar(40)),
            ("s_nationkey", Int),
            ("s_phone", Char(15)),
            ("s_acctbal", Money),
            ("s_comment", VarChar(101)),
        ],
        primary_key: &["s_suppkey"],
        foreign_keys: &[(&["s_nationkey"], "nation", &["n_nationkey"])],
    },
    Table {
        name: "partsupp",
        columns: &[
            ("ps_partkey", Int),
            ("ps_suppkey", Int),
            ("ps_availqty", Int),
            ("ps_supplycost", Money),
            ("ps_comment", VarChar(199)),
        ],
        primary_key: &["ps_partkey", "ps_suppkey"],
        foreign_keys: &[
            (&["ps_partkey"], "part", &["p_partkey"]),
            (&["ps_suppkey"], "supplier", &["s_suppkey"]),
        ],
    },
    Table {
        name: "customer",
        columns: &[
            ("c_custkey", Int),
            ("c_name", VarChar(25)),
            ("c_address", VarChar(40)),
            ("c_nationkey", Int),
            ("c_phone", Char(15)),
            ("c_acctbal", Money),
            ("c_mktsegment", Char(10)),
            ("c_comment", VarChar(117)),
        ],
        primary_key: &["c_custkey"],
        foreign_keys: &[(&["c_nationkey"], "nation", &["n_nationkey"])],
    },
    Table {
        name: "orders",
        columns: &[
            ("o_orderkey", BigInt),
            ("o_custkey", Int),
            ("o_orderstatus", Char(1)),
            ("o_totalprice", Money),
            ("o_orderdate", Date),
            ("o_orderpriority", Char(15)),
            ("o_clerk", Char(15)),
            ("o_shippriority", Int),
            ("o_comment", VarChar(79)),
        ],
        primary_key: &["o_orderkey"],
        foreign_keys: &[(&["o_custkey"], "customer", &["c_custkey"])],
    },
    Table {
        name: "lineitem",
        columns: &[
            ("l_orderkey", BigInt),
            ("l_partkey", Int),
            ("l_suppkey", Int),
            ("l_linenumber", Int),
            ("l_quantity", Money),
            ("l_extendedprice", Money),
            ("l_discount", Money),
            ("l_tax", Money),
            ("l_returnflag", Char(1)),
            ("l_linestatus", Char(1)),
            ("l_shipdate", Date),
            ("l_commitdate", Date),
            ("l_receiptdate", Date),
            ("l_shipinstruct", Char(25)),
            ("l_shipmode", Char(10)),
            ("l_comment", VarChar(44)),
        ],
        primary_key: &["l_orderkey", "l_linenumber"],
        foreign_keys: &[
            (&["l_orderkey"], "orders", &["o_orderkey"]),
            (
                &["l_partkey", "l_suppkey"],
                "partsupp",
                &["ps_partkey", "ps_suppkey"],
            ),
        ],
    },
];

/// The secondary indexes of the DBT3 kit: (name, table, columns).
pub const INDEXES: &[(&str, &str, &[&str])] = &[
    ("i_n_regionkey", "nation", &["n_regionkey"]),
    ("i_s_nationkey", "supplier", &["s_nationkey"]),
    ("i_ps_partkey", "partsupp", &["ps_partkey"]),
    ("i_ps_suppkey", "partsupp", &["ps_suppkey"]),
    ("i_c_nationkey", "customer", &["c_nationkey"]),
    ("i_o_orderdate", "orders", &["o_orderdate"]),
    ("i_o_custkey", "orders", &["o_custkey"]),
    ("i_l_shipdate", "lineitem", &["l_shipdate"]),
    (
        "i_l_suppkey_partkey",
        "lineitem",
        &["l_partkey", "l_suppkey"],
    ),
    ("i_l_partkey", "lineitem", &["l_partkey"]),
    ("i_l_suppkey", "lineitem", &["l_suppkey"]),
    ("i_l_receiptdate", "lineitem", &["l_receiptdate"]),
    ("i_l_orderkey", "lineitem", &["l_orderkey"]),
    (
        "i_l_orderkey_quantity",
        "lineitem",
        &["l_orderkey", "l_quantity"],
    ),
    ("i_l_commitdate", "lineitem", &["l_commitdate"]),
];

/// The table holding which update set the next refresh uses.
pub const STATE_TABLE: &str = "tpch_state";

pub fn table(name: &str) -> Option<&'static Table> {
    TABLES.iter().find(|t| t.name == name)
}

/// When keys and indexes are made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexTime {
    /// After the load (the fastest load; DBT3's default).
    After,
    /// With the tables, before the load.
    Before,
}

/// CREATE TABLE for `t`. The primary key goes into it on SQLite (which
/// cannot add one later) and on MySQL/MariaDB (InnoDB clusters rows by
/// it, and adding it later rebuilds the table), or on every target when
/// keys come before the load; foreign keys too when `with_fks`.
pub fn create_table(t: &Table, d: Dialect, keys_now: bool, with_fks: bool) -> String {
    let mut parts: Vec<String> = t
        .columns
        .iter()
        .map(|(name, ty)| format!("{name} {} NOT NULL", ty.sql(d)))
        .collect();
    if keys_now || d != Dialect::Postgres {
        parts.push(format!("PRIMARY KEY ({})", t.primary_key.join(",")));
    }
    if with_fks && (keys_now || d == Dialect::Sqlite) {
        for (cols, other, refs) in t.foreign_keys {
            parts.push(format!(
                "FOREIGN KEY ({}) REFERENCES {other} ({})",
                cols.join(","),
                refs.join(",")
            ));
        }
    }
    let tail = if d == Dialect::Mysql {
        " ENGINE=InnoDB DEFAULT CHARSET=latin1"
    } else {
        ""
    };
    format!("CREATE TABLE {} ({}){tail}", t.name, parts.join(", "))
}

/// The statements that add what the CREATE TABLEs left out: primary keys
/// (PostgreSQL), foreign keys (not SQLite, which cannot add them) and the
/// secondary indexes, one statement per table so that tables can be done
/// in parallel.
pub fn after_load(d: Dialect, keys_done: bool) -> Vec<(String, Vec<String>)> {
    TABLES
        .iter()
        .map(|t| {
            let mut v = Vec::new();
            if d == Dialect::Postgres && !keys_done {
                v.push(format!(
                    "ALTER TABLE {} ADD PRIMARY KEY ({})",
                    t.name,
                    t.primary_key.join(",")
                ));
            }
            for (name, _, cols) in INDEXES.iter().filter(|i| i.1 == t.name) {
                v.push(format!(
                    "CREATE INDEX {name} ON {} ({})",
                    t.name,
                    cols.join(",")
                ));
            }
            (t.name.to_string(), v)
        })
        .collect()
}

/// Foreign keys added after the load: they need the referenced tables'
/// keys, so they run after every table's keys exist.
pub fn foreign_keys_after(d: Dialect) -> Vec<String> {
    if d == Dialect::Sqlite {
        return Vec::new();
    }
    TABLES
        .iter()
        .flat_map(|t| {
            t.foreign_keys.iter().enumerate().map(move |(i, (cols, other, refs))| {
                format!(
                    "ALTER TABLE {} ADD CONSTRAINT fk_{}_{} FOREIGN KEY ({}) REFERENCES {other} ({})",
                    t.name,
                    t.name,
                    i + 1,
                    cols.join(","),
                    refs.join(",")
                )
            })
        })
        .collect()
}

/// Statements that gather optimizer statistics after the load.
pub fn analyze(d: Dialect) -> Vec<String> {
    match d {
        Dialect::Postgres => vec!["ANALYZE".into()],
        Dialect::Sqlite => vec!["ANALYZE".into()],
        Dialect::Mysql => TABLES
            .iter()
            .map(|t| format!("ANALYZE TABLE {}", t.name))
            .collect(),
    }
}

/// The TPC-H tables that exist in the database.
pub fn existing(conn: &mut Connection) -> Result<Vec<&'static str>, DbError> {
    let have: Vec<String> = conn
        .tables()?
        .into_iter()
        .map(|t| t.to_ascii_lowercase())
        .collect();
    Ok(TABLES
        .iter()
        .map(|t| t.name)
        .filter(|n| have.iter().any(|h| h == n))
        .collect())
}

/// Drops the tables (referencing ones first) and the refresh state.
pub fn drop_all(conn: &mut Connection) -> Result<Vec<&'static str>, DbError> {
    let have = existing(conn)?;
    let d = conn.dialect();
    if d == Dialect::Mysql {
        conn.execute("SET FOREIGN_KEY_CHECKS = 0")?;
    }
    let cascade = if d == Dialect::Postgres {
        " CASCADE"
    } else {
        ""
    };
    let mut dropped = Vec::new();
    for t in TABLES.iter().rev() {
        if have.contains(&t.name) {
            conn.execute(&format!("DROP TABLE IF EXISTS {}{cascade}", t.name))?;
            dropped.push(t.name);
        }
    }
    conn.execute(&format!("DROP TABLE IF EXISTS {STATE_TABLE}"))?;
    if d == Dialect::Mysql {
        conn.execute("SET FOREIGN_KEY_CHECKS = 1")?;
    }
    Ok(dropped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ddl_per_dialect() {
        let li = table("lineitem").map(|t| create_table(t, Dialect::Postgres, false, true));
        let li = li.unwrap_or_default();
        assert!(li.contains("l_quantity DECIMAL(15,2) NOT NULL"), "{li}");
        assert!(!li.contains("PRIMARY KEY"), "{li}");
        let my = create_table(&TABLES[7], Dialect::Mysql, false, true);
        assert!(my.contains("PRIMARY KEY (l_orderkey,l_linenumber)"), "{my}");
        assert!(!my.contains("FOREIGN KEY"), "{my}");
        let lite = create_table(&TABLES[7], Dialect::Sqlite, false, true);
        assert!(lite.contains("l_shipdate TEXT") && lite.contains("FOREIGN KEY"));
        assert_eq!(foreign_keys_after(Dialect::Sqlite).len(), 0);
        assert_eq!(foreign_keys_after(Dialect::Mysql).len(), 8);
        let idx: usize = after_load(Dialect::Postgres, false)
            .iter()
            .map(|t| t.1.len())
            .sum();
        assert_eq!(idx, INDEXES.len() + TABLES.len());
    }
}
