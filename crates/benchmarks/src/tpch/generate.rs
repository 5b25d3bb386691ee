//! The rows of the eight tables, from the `tpchgen` crate (dbgen's rows,
//! byte for byte), cut into parts that threads generate on their own, as
//! lines of `|`-separated text.

use std::fmt::Display;
use std::io::Write;
use tpchgen::generators::{
    CustomerGenerator, LineItemGenerator, NationGenerator, OrderGenerator, PartGenerator,
    PartSuppGenerator, RegionGenerator, SupplierGenerator,
};

/// Rows in one part of a large table: small enough that parts spread
/// over the loaders, large enough that a part is many packets.
const ROWS_PER_PART: f64 = 250_000.0;

/// The rows a table has at scale factor `sf` (lineitem: about, 4 lines
/// per order on average).
pub fn expected_rows(table: &str, sf: f64) -> u64 {
    let base = |n: f64| (n * sf).floor().max(1.0) as u64;
    match table {
        "region" => 5,
        "nation" => 25,
        "supplier" => base(10_000.0),
        "part" => base(200_000.0),
        "partsupp" => base(200_000.0) * 4,
        "customer" => base(150_000.0),
        "orders" => base(1_500_000.0),
        "lineitem" => base(1_500_000.0) * 4,
        _ => 0,
    }
}

/// Bytes of .tbl text per row, about (for disk space estimates).
pub fn bytes_per_row(table: &str) -> u64 {
    match table {
        "region" => 100,
        "nation" => 110,
        "supplier" => 140,
        "part" => 120,
        "partsupp" => 145,
        "customer" => 160,
        "orders" => 110,
        "lineitem" => 125,
        _ => 100,
    }
}

/// How many parts table `table` is cut into at `sf`.
pub fn parts(table: &str, sf: f64) -> i32 {
    match table {
        "region" | "nation" => 1,
        // partsupp and lineitem come 4 to a part or order row.
        t => {
            let rows = expected_rows(t, sf) as f64;
            (rows / ROWS_PER_PART).ceil().clamp(1.0, 100_000.0) as i32
        }
    }
}

/// A part of a table being turned into text.
pub trait RowSource: Send {
    /// Appends whole lines until `buf` grew by at least `bytes` or the
    /// part is done; returns the rows appended and whether more remain.
    fn fill(&mut self, buf: &mut Vec<u8>, bytes: usize) -> (u64, bool);
}

struct Lines<I> {
    rows: I,
    /// Keep dbgen's `|` at the end of each line (.tbl files) or drop it
    /// (COPY and LOAD DATA take no empty last field).
    trailing: bool,
}

impl<I> RowSource for Lines<I>
where
    I: Iterator + Send,
    I::Item: Display,
{
    fn fill(&mut self, buf: &mut Vec<u8>, bytes: usize) -> (u64, bool) {
        let start = buf.len();
        let mut n = 0;
        while buf.len() - start < bytes {
            let Some(row) = self.rows.next() else {
                return (n, false);
            };
            // Writing into a Vec cannot fail.
            let _ = write!(buf, "{row}");
            if !self.trailing && buf.last() == Some(&b'|') {
                buf.pop();
            }
            buf.push(b'\n');
            n += 1;
        }
        (n, true)
    }
}

fn lines<I>(rows: I, trailing: bool) -> Box<dyn RowSource>
where
    I: Iterator + Send + 'static,
    I::Item: Display,
{
    Box::new(Lines { rows, trailing })
}

/// Part `part` (1-based) of `parts` of `table` at `sf`; None for a name
/// that is not a TPC-H table.
pub fn source(
    table: &str,
    sf: f64,
    part: i32,
    parts: i32,
    trailing: bool,
) -> Option<Box<dyn RowSource>> {
    Some(match table {
        "region" => lines(RegionGenerator::new(sf, part, parts).iter(), trailing),
        "nation" => lines(NationGenerator::new(sf, part, parts).iter(), trailing),
        "supplier" => lines(SupplierGenerator::new(sf, part, parts).iter(), trailing),
        "part" => lines(PartGenerator::new(sf, part, parts).iter(), trailing),
        "partsupp" => lines(PartSuppGenerator::new(sf, part, parts).iter(), trailing),
        "customer" => lines(CustomerGenerator::new(sf, part, parts).iter(), trailing),
        "orders" => lines(OrderGenerator::new(sf, part, parts).iter(), trailing),
        "lineitem" => lines(LineItemGenerator::new(sf, part, parts).iter(), trailing),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(table: &str, sf: f64, part: i32, parts: i32, trailing: bool) -> String {
        let mut s = source(table, sf, part, parts, trailing).unwrap_or_else(|| panic!("{table}"));
        let mut buf = Vec::new();
        while s.fill(&mut buf, 1 << 16).1 {}
        String::from_utf8(buf).unwrap_or_default()
    }

    #[test]
    fn parts_join_to_the_whole_table() {
        let whole = text("orders", 0.01, 1, 1, true);
        let joined: String = (1..=3).map(|p| text("orders", 0.01, p, 3, true)).collect();
        assert_eq!(whole, joined);
        assert_eq!(whole.lines().count() as u64, expected_rows("orders", 0.01));
        assert!(whole.starts_with("1|370|O|172799.49|1996-01-02|5-LOW|Clerk#000000951|0|"));
    }

    #[test]
    fn lines_without_the_trailing_delimiter() {
        let t = text("region", 1.0, 1, 1, false);
        assert_eq!(t.lines().count(), 5);
        assert!(
            t.lines()
                .all(|l| !l.ends_with('|') && l.split('|').count() == 3)
        );
        assert_eq!(parts("lineitem", 1.0), 24);
        assert_eq!(parts("nation", 100.0), 1);
    }
}
