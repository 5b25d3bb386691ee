//! The official answers of the 22 queries at SF1 with the validation
//! parameters (the TPC's answer files, embedded), each column's precision
//! class, and the comparison under the specification's tolerances
//! (clause 2.1.3.5): singletons and counts exact; sums within 100;
//! averages and ratios within 1% after rounding to 0.01.

use std::fmt;

/// How a column is compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// Text, compared without its padding.
    Str,
    /// A number (keys, sizes, balances) that must match to the cent.
    Num,
    Int,
    /// A count.
    Cnt,
    /// A SUM of money: within 100.
    Sum,
    /// A SUM of quantities (Q1's sum_qty, Q18's sum): exact.
    ExactSum,
    /// An AVG: within 1% after rounding to 0.01.
    Avg,
    /// A ratio: within 1% after rounding to 0.01.
    Rat,
}

impl Class {
    fn parse(word: &str) -> Option<Class> {
        Some(match word {
            "str" => Class::Str,
            "num" => Class::Num,
            "int" => Class::Int,
            "cnt" => Class::Cnt,
            "sum" => Class::Sum,
            "avg" => Class::Avg,
            "rat" => Class::Rat,
            _ => return None,
        })
    }

    fn rule(self) -> &'static str {
        match self {
            Class::Str => "text must match",
            Class::Num => "numbers must match to 0.01",
            Class::Int | Class::Cnt => "must match exactly",
            Class::ExactSum => "quantity sums must match exactly",
            Class::Sum => "sums must be within 100",
            Class::Avg => "averages must be within 1% after rounding to 0.01",
            Class::Rat => "ratios must be within 1% after rounding to 0.01",
        }
    }

    /// Whether `got` passes for `want`.
    pub fn accepts(self, got: &str, want: &str) -> bool {
        let (g, w) = (got.trim(), want.trim());
        // Text (and numbers that do not parse) compare as text.
        let (Ok(gv), Ok(wv)) = (g.parse::<f64>(), w.parse::<f64>()) else {
            return g == w;
        };
        let round = |x: f64| (x * 100.0).round() / 100.0;
        match self {
            Class::Str => g == w,
            Class::Int | Class::Cnt => gv == wv,
            Class::Num | Class::ExactSum => (round(gv) - round(wv)).abs() < 0.005,
            Class::Sum => (gv - wv).abs() <= 100.0,
            Class::Avg | Class::Rat => {
                // Both rounded: an answer file's values are, another
                // engine's are not.
                let (r, w) = (round(gv), round(wv));
                (r - w).abs() <= 0.01 * w.abs() + 1e-9
            }
        }
    }
}

/// Each query's column classes, from the TPC's colprecision file; the
/// quantity sums of Q1 and Q18 are exact.
pub fn classes(q: u8) -> Vec<Class> {
    const TEXT: &str = include_str!("answers/colprecision.txt");
    let Some(line) = TEXT.lines().nth(usize::from(q).wrapping_sub(1)) else {
        return Vec::new();
    };
    let mut v: Vec<Class> = line.split_whitespace().filter_map(Class::parse).collect();
    match q {
        1 => v[2] = Class::ExactSum,
        18 => {
            if let Some(last) = v.last_mut() {
                *last = Class::ExactSum;
            }
        }
        _ => {}
    }
    v
}

/// An answer: column names and rows of text cells.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// The official SF1 answer of query `q` (validation parameters).
pub fn official(q: u8) -> Option<Answer> {
    let text = match q {
        1 => include_str!("answers/q1.out"),
        2 => include_str!("answers/q2.out"),
        3 => include_str!("answers/q3.out"),
        4 => include_str!("answers/q4.out"),
        5 => include_str!("answers/q5.out"),
        6 => include_str!("answers/q6.out"),
        7 => include_str!("answers/q7.out"),
        8 => include_str!("answers/q8.out"),
        9 => include_str!("answers/q9.out"),
        10 => include_str!("answers/q10.out"),
        11 => include_str!("answers/q11.out"),
        12 => include_str!("answers/q12.out"),
        13 => include_str!("answers/q13.out"),
        14 => include_str!("answers/q14.out"),
        15 => include_str!("answers/q15.out"),
        16 => include_str!("answers/q16.out"),
        17 => include_str!("answers/q17.out"),
        18 => include_str!("answers/q18.out"),
        19 => include_str!("answers/q19.out"),
        20 => include_str!("answers/q20.out"),
        21 => include_str!("answers/q21.out"),
        22 => include_str!("answers/q22.out"),
        _ => return None,
    };
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let split = |l: &str| l.split('|').map(|c| c.trim().to_string()).collect();
    let columns = split(lines.next()?);
    Some(Answer {
        columns,
        rows: lines.map(split).collect(),
    })
}

/// Where two answers differ.
#[derive(Clone, Debug, PartialEq)]
pub struct Mismatch {
    pub query: u8,
    /// 1-based; 0 when the row counts differ.
    pub row: usize,
    pub column: String,
    pub got: String,
    pub want: String,
    pub rule: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.row == 0 {
            write!(
                f,
                "Q{}: {} rows, expected {}",
                self.query, self.got, self.want
            )
        } else {
            write!(
                f,
                "Q{} row {} column {}: got '{}', expected '{}' ({})",
                self.query, self.row, self.column, self.got, self.want, self.rule
            )
        }
    }
}

/// Compares `got` with `want` (same query, row by row in order) under
/// the tolerances of query `q`'s column classes; the first difference.
pub fn compare(
    q: u8,
    columns: &[&str],
    got: &[Vec<String>],
    want: &[Vec<String>],
) -> Result<(), Mismatch> {
    if got.len() != want.len() {
        return Err(Mismatch {
            query: q,
            row: 0,
            column: String::new(),
            got: got.len().to_string(),
            want: want.len().to_string(),
            rule: String::new(),
        });
    }
    let classes = classes(q);
    for (r, (g, w)) in got.iter().zip(want).enumerate() {
        for (c, w_cell) in w.iter().enumerate() {
            let class = classes.get(c).copied().unwrap_or(Class::Str);
            let g_cell = g.get(c).map_or("", String::as_str);
            if !class.accepts(g_cell, w_cell) {
                return Err(Mismatch {
                    query: q,
                    row: r + 1,
                    column: columns
                        .get(c)
                        .map_or_else(|| (c + 1).to_string(), |s| s.to_string()),
                    got: g_cell.trim().to_string(),
                    want: w_cell.trim().to_string(),
                    rule: class.rule().to_string(),
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_answer_parses_with_its_classes() {
        for q in 1..=22 {
            let a = official(q).unwrap_or_else(|| panic!("Q{q}"));
            assert!(!a.rows.is_empty(), "Q{q}");
            assert_eq!(classes(q).len(), a.columns.len(), "Q{q}");
            assert!(a.rows.iter().all(|r| r.len() == a.columns.len()), "Q{q}");
        }
        assert_eq!(official(16).map(|a| a.rows.len()), Some(18314));
        assert_eq!(official(23), None);
    }

    #[test]
    fn tolerances() {
        assert!(Class::Sum.accepts("56586554400.73", "56586554480.00"));
        assert!(!Class::Sum.accepts("56586554400.73", "56586554600.00"));
        assert!(Class::Avg.accepts("25.5220058532573370", "25.52"));
        assert!(!Class::Avg.accepts("26.0", "25.52"));
        assert!(Class::Avg.accepts("0.047759", "0.047758620689655175"));
        assert!(Class::Str.accepts("Supplier#000005359   ", "Supplier#000005359"));
        assert!(Class::Cnt.accepts("1478493", "1478493"));
        assert!(!Class::Cnt.accepts("1478494", "1478493"));
        assert!(Class::Num.accepts("9938.530", "9938.53"));
        assert!(Class::ExactSum.accepts("37734107", "37734107.00"));
        let want = official(1).map(|a| a.rows).unwrap_or_default();
        let mut got = want.clone();
        assert_eq!(compare(1, &[], &got, &want), Ok(()));
        got[2][9] = "2920375".into();
        let e = compare(1, &["a"; 10], &got, &want)
            .err()
            .map(|m| m.to_string());
        assert_eq!(
            e.as_deref(),
            Some("Q1 row 3 column a: got '2920375', expected '2920374' (must match exactly)")
        );
    }
}
