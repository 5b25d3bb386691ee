//! A small expression language for filters over named values, such as
//! `Execution_time_ratio > 1.5 and Temperature = warm`.
//!
//! ```
//! use dbmeter_filter::{Expr, Value};
//!
//! let e = Expr::parse("Execution_time_ratio > 1.5 and Temperature = warm").unwrap();
//! let vars = |name: &str| match name {
//!     "Execution_time_ratio" => Some(Value::Num(2.0)),
//!     "Temperature" => Some(Value::Str("warm".into())),
//!     _ => None,
//! };
//! assert!(e.eval(&vars));
//! ```
//!
//! The language:
//!
//! - **Values**: numbers (`12`, `-0.5`, `1e3`), optionally with a time unit
//!   that turns them into seconds (`250ms`, `40us`, `2s`, `1min`) or a
//!   percent sign (`150%` is 1.5); strings in single or double quotes
//!   (a quote doubled inside is the quote itself); and bare words.
//! - **Bare words**: an identifier (letters, digits, `_`, `.`; not starting
//!   with a digit) is a variable. On the right of `=`, `!=` and `~`, a word
//!   that the lookup does not know is the word itself as text
//!   (`Temperature = warm`); [`Expr::variables`] lists only the words in
//!   variable places, so a caller can reject unknown names.
//! - **Comparisons**: `=` (also `==`), `!=` (also `<>`), `<`, `<=`, `>`,
//!   `>=`; `~` is true when the left side's text contains the right side's,
//!   ignoring case (no regular expressions). Two numbers compare as
//!   numbers; a number and a text that reads as a number too; other texts
//!   compare as text (case-sensitive for `=`, `<`...).
//! - **Logic**: `and`, `or`, `not` (any case; also `&&`, `||`, `!`),
//!   parentheses. `and` binds tighter than `or`.
//! - **A lone operand** is a test: true for a non-zero number, a non-empty
//!   text other than `0` and `false`.
//! - **Missing variables**: a comparison, `~` or lone test on a variable
//!   the lookup does not know is false (so `not X > 1` is true then), as a
//!   comparison with SQL NULL filters a row out.
//!
//! Errors are one line with the 1-based column: `column 17: expected a
//! value after '>'`.

use std::fmt;

/// A value a variable holds, or a literal.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Num(f64),
    Str(String),
    Bool(bool),
}

impl Value {
    fn as_num(&self) -> Option<f64> {
        match self {
            Value::Num(n) => Some(*n),
            Value::Str(s) => parse_number(s.trim()),
            Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
        }
    }

    fn text(&self) -> String {
        match self {
            Value::Num(n) => format!("{n}"),
            Value::Str(s) => s.clone(),
            Value::Bool(b) => b.to_string(),
        }
    }

    fn truthy(&self) -> bool {
        match self {
            Value::Num(n) => *n != 0.0 && !n.is_nan(),
            Value::Bool(b) => *b,
            Value::Str(s) => !(s.is_empty() || s == "0" || s.eq_ignore_ascii_case("false")),
        }
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Value {
        Value::Num(v)
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Value {
        Value::Bool(v)
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Value {
        Value::Str(v.to_string())
    }
}

/// A comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Contains,
}

impl Op {
    fn symbol(self) -> &'static str {
        match self {
            Op::Eq => "=",
            Op::Ne => "!=",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::Contains => "~",
        }
    }
}

/// One side of a comparison.
#[derive(Clone, Debug, PartialEq)]
pub enum Operand {
    /// A variable (the lookup's value).
    Var(String),
    /// A bare word where text may stand: the variable if the lookup knows
    /// it, else the word itself.
    Word(String),
    Lit(Value),
}

/// A parsed filter.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Or(Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    Cmp(Operand, Op, Operand),
    /// A lone operand, true when its value is.
    Test(Operand),
}

/// Why a filter could not be read: what, and at which character.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based column (in characters) where the problem is.
    pub column: usize,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "column {}: {}", self.column, self.message)
    }
}

impl std::error::Error for ParseError {}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Num(f64),
    Str(String),
    Op(Op),
    And,
    Or,
    Not,
    Open,
    Close,
}

impl Tok {
    fn describe(&self) -> String {
        match self {
            Tok::Ident(w) => format!("'{w}'"),
            Tok::Num(n) => format!("the number {n}"),
            Tok::Str(s) => format!("the text '{s}'"),
            Tok::Op(o) => format!("'{}'", o.symbol()),
            Tok::And => "'and'".into(),
            Tok::Or => "'or'".into(),
            Tok::Not => "'not'".into(),
            Tok::Open => "'('".into(),
            Tok::Close => "')'".into(),
        }
    }
}

/// A number as the language writes it (no unit): `12`, `-0.5`, `1e3`.
fn parse_number(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    let first = *b.first()?;
    if !(first.is_ascii_digit() || first == b'.' || first == b'-' || first == b'+') {
        return None;
    }
    s.parse::<f64>().ok().filter(|n| n.is_finite())
}

/// The factor a unit after a number stands for.
fn unit_factor(u: &str) -> Option<f64> {
    Some(match u {
        "" => 1.0,
        "s" | "sec" => 1.0,
        "ms" => 1e-3,
        "us" | "µs" => 1e-6,
        "ns" => 1e-9,
        "min" => 60.0,
        "h" => 3600.0,
        "%" => 0.01,
        _ => return None,
    })
}

fn is_ident_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '.'
}

fn lex(src: &str) -> Result<Vec<(usize, Tok)>, ParseError> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let err = |column: usize, message: String| ParseError { column, message };
    while i < chars.len() {
        let c = chars[i];
        let at = i + 1;
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let two: String = chars[i..chars.len().min(i + 2)].iter().collect();
        let (tok, len) = match two.as_str() {
            "<=" => (Tok::Op(Op::Le), 2),
            ">=" => (Tok::Op(Op::Ge), 2),
            "!=" | "<>" => (Tok::Op(Op::Ne), 2),
            "==" => (Tok::Op(Op::Eq), 2),
            "&&" => (Tok::And, 2),
            "||" => (Tok::Or, 2),
            _ => match c {
                '=' => (Tok::Op(Op::Eq), 1),
                '<' => (Tok::Op(Op::Lt), 1),
                '>' => (Tok::Op(Op::Gt), 1),
                '~' => (Tok::Op(Op::Contains), 1),
                '!' => (Tok::Not, 1),
                '(' => (Tok::Open, 1),
                ')' => (Tok::Close, 1),
                _ => (Tok::Close, 0),
            },
        };
        if len > 0 {
            out.push((at, tok));
            i += len;
            continue;
        }
        if c == '\'' || c == '"' {
            let mut s = String::new();
            let mut j = i + 1;
            loop {
                match chars.get(j) {
                    None => {
                        return Err(err(at, format!("the text opened by {c} is not closed")));
                    }
                    Some(&q) if q == c => {
                        if chars.get(j + 1) == Some(&c) {
                            s.push(c);
                            j += 2;
                        } else {
                            j += 1;
                            break;
                        }
                    }
                    Some(&o) => {
                        s.push(o);
                        j += 1;
                    }
                }
            }
            out.push((at, Tok::Str(s)));
            i = j;
            continue;
        }
        // A number: a sign only where a value starts (after an operator,
        // a keyword, '(' or at the start).
        let value_expected = !matches!(
            out.last(),
            Some((_, Tok::Ident(_) | Tok::Num(_) | Tok::Str(_) | Tok::Close))
        );
        if c.is_ascii_digit()
            || (c == '.' && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit()))
            || ((c == '-' || c == '+')
                && value_expected
                && chars
                    .get(i + 1)
                    .is_some_and(|d| d.is_ascii_digit() || *d == '.'))
        {
            let mut j = i + 1;
            while j < chars.len() {
                let d = chars[j];
                let exp_sign =
                    (d == '-' || d == '+') && matches!(chars[j - 1], 'e' | 'E') && j > i + 1;
                let exp = (d == 'e' || d == 'E')
                    && chars
                        .get(j + 1)
                        .is_some_and(|n| n.is_ascii_digit() || *n == '-' || *n == '+');
                if d.is_ascii_digit() || d == '.' || exp || exp_sign {
                    j += 1;
                } else {
                    break;
                }
            }
            let digits: String = chars[i..j].iter().collect();
            let mut k = j;
            while k < chars.len() && (chars[k].is_alphabetic() || chars[k] == '%') {
                k += 1;
            }
            let unit: String = chars[j..k].iter().collect();
            let n = parse_number(&digits)
                .ok_or_else(|| err(at, format!("'{digits}' is not a number")))?;
            let f = unit_factor(&unit).ok_or_else(|| {
                err(
                    j + 1,
                    format!(
                        "unknown unit '{unit}' after {digits} (units: s, ms, us, ns, min, h, %)"
                    ),
                )
            })?;
            out.push((at, Tok::Num(n * f)));
            i = k;
            continue;
        }
        if is_ident_start(c) {
            let mut j = i + 1;
            while j < chars.len() && is_ident_char(chars[j]) {
                j += 1;
            }
            let w: String = chars[i..j].iter().collect();
            let tok = match w.to_ascii_lowercase().as_str() {
                "and" => Tok::And,
                "or" => Tok::Or,
                "not" => Tok::Not,
                _ => Tok::Ident(w),
            };
            out.push((at, tok));
            i = j;
            continue;
        }
        return Err(err(at, format!("unexpected character '{c}'")));
    }
    Ok(out)
}

struct Parser {
    toks: Vec<(usize, Tok)>,
    pos: usize,
    end: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|(_, t)| t)
    }

    fn column(&self) -> usize {
        self.toks.get(self.pos).map_or(self.end, |(c, _)| *c)
    }

    fn fail<T>(&self, message: String) -> Result<T, ParseError> {
        Err(ParseError {
            column: self.column(),
            message,
        })
    }

    fn found(&self) -> String {
        self.peek()
            .map_or_else(|| "the end".to_string(), Tok::describe)
    }

    fn or(&mut self) -> Result<Expr, ParseError> {
        let mut left = self.and()?;
        while self.peek() == Some(&Tok::Or) {
            self.pos += 1;
            let right = self.and()?;
            left = Expr::Or(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Expr, ParseError> {
        let mut left = self.not()?;
        while self.peek() == Some(&Tok::And) {
            self.pos += 1;
            let right = self.not()?;
            left = Expr::And(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn not(&mut self) -> Result<Expr, ParseError> {
        if self.peek() == Some(&Tok::Not) {
            self.pos += 1;
            return Ok(Expr::Not(Box::new(self.not()?)));
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Expr, ParseError> {
        if self.peek() == Some(&Tok::Open) {
            let open = self.column();
            self.pos += 1;
            let e = self.or()?;
            if self.peek() != Some(&Tok::Close) {
                return self.fail(format!(
                    "expected ')' for the '(' at column {open}, found {}",
                    self.found()
                ));
            }
            self.pos += 1;
            return Ok(e);
        }
        let left = self.operand(false)?;
        let op = match self.peek() {
            Some(Tok::Op(op)) => *op,
            _ => {
                if let Operand::Lit(_) = left {
                    return self.fail(format!(
                        "expected a comparison after the value, found {}",
                        self.found()
                    ));
                }
                return Ok(Expr::Test(left));
            }
        };
        self.pos += 1;
        let words = matches!(op, Op::Eq | Op::Ne | Op::Contains);
        let right = self.operand(words)?;
        if let Some(Tok::Op(next)) = self.peek() {
            return self.fail(format!(
                "'{}' cannot follow a comparison; join comparisons with and/or",
                next.symbol()
            ));
        }
        Ok(Expr::Cmp(left, op, right))
    }

    fn operand(&mut self, word: bool) -> Result<Operand, ParseError> {
        let o = match self.peek() {
            Some(Tok::Ident(w)) if word => Operand::Word(w.clone()),
            Some(Tok::Ident(w)) => Operand::Var(w.clone()),
            Some(Tok::Num(n)) => Operand::Lit(Value::Num(*n)),
            Some(Tok::Str(s)) => Operand::Lit(Value::Str(s.clone())),
            _ => {
                let after = match self.pos.checked_sub(1).and_then(|p| self.toks.get(p)) {
                    Some((_, t)) => format!(" after {}", t.describe()),
                    None => String::new(),
                };
                return self.fail(format!(
                    "expected a value or a name{after}, found {}",
                    self.found()
                ));
            }
        };
        self.pos += 1;
        Ok(o)
    }
}

/// How a lookup answers a variable's name.
pub type Lookup<'a> = dyn Fn(&str) -> Option<Value> + 'a;

impl Expr {
    /// Reads a filter; an error names the column and what was expected.
    pub fn parse(src: &str) -> Result<Expr, ParseError> {
        let toks = lex(src)?;
        let end = src.chars().count() + 1;
        if toks.is_empty() {
            return Err(ParseError {
                column: 1,
                message: "the filter is empty".into(),
            });
        }
        let mut p = Parser { toks, pos: 0, end };
        let e = p.or()?;
        if p.pos < p.toks.len() {
            let what = p.found();
            return p.fail(format!("unexpected {what}; join conditions with and/or"));
        }
        Ok(e)
    }

    /// Whether the values `vars` gives make the filter true.
    pub fn eval(&self, vars: &Lookup<'_>) -> bool {
        match self {
            Expr::Or(a, b) => a.eval(vars) || b.eval(vars),
            Expr::And(a, b) => a.eval(vars) && b.eval(vars),
            Expr::Not(e) => !e.eval(vars),
            Expr::Test(o) => resolve(o, vars).is_some_and(|v| v.truthy()),
            Expr::Cmp(l, op, r) => {
                let (Some(a), Some(b)) = (resolve(l, vars), resolve(r, vars)) else {
                    return false;
                };
                compare(&a, *op, &b)
            }
        }
    }

    /// The names in variable places (the left of a comparison, either side
    /// of an ordering, a lone test), each once, in order of appearance.
    /// Words on the right of `=`, `!=` and `~` are not listed: they are
    /// text unless the lookup knows them.
    pub fn variables(&self) -> Vec<String> {
        let mut out = Vec::new();
        self.collect(&mut out);
        out
    }

    fn collect(&self, out: &mut Vec<String>) {
        let mut add = |o: &Operand| {
            if let Operand::Var(v) = o
                && !out.contains(v)
            {
                out.push(v.clone());
            }
        };
        match self {
            Expr::Or(a, b) | Expr::And(a, b) => {
                a.collect(out);
                b.collect(out);
            }
            Expr::Not(e) => e.collect(out),
            Expr::Test(o) => add(o),
            Expr::Cmp(l, _, r) => {
                add(l);
                add(r);
            }
        }
    }
}

fn resolve(o: &Operand, vars: &Lookup<'_>) -> Option<Value> {
    match o {
        Operand::Var(v) => vars(v),
        Operand::Word(w) => Some(vars(w).unwrap_or_else(|| Value::Str(w.clone()))),
        Operand::Lit(v) => Some(v.clone()),
    }
}

fn compare(a: &Value, op: Op, b: &Value) -> bool {
    if op == Op::Contains {
        return a.text().to_lowercase().contains(&b.text().to_lowercase());
    }
    let numeric =
        matches!(a, Value::Num(_) | Value::Bool(_)) || matches!(b, Value::Num(_) | Value::Bool(_));
    let ord = match (numeric, a.as_num(), b.as_num()) {
        (true, Some(x), Some(y)) => x.partial_cmp(&y),
        (true, _, _) => {
            // A number against a text that is not one: only != holds.
            return op == Op::Ne;
        }
        (false, _, _) => Some(a.text().cmp(&b.text())),
    };
    let Some(ord) = ord else {
        return op == Op::Ne;
    };
    use std::cmp::Ordering::*;
    match op {
        Op::Eq => ord == Equal,
        Op::Ne => ord != Equal,
        Op::Lt => ord == Less,
        Op::Le => ord != Greater,
        Op::Gt => ord == Greater,
        Op::Ge => ord != Less,
        Op::Contains => false,
    }
}

impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Operand::Var(v) | Operand::Word(v) => f.write_str(v),
            Operand::Lit(Value::Num(n)) => write!(f, "{n}"),
            Operand::Lit(Value::Bool(b)) => write!(f, "{b}"),
            Operand::Lit(Value::Str(s)) => write!(f, "'{}'", s.replace('\'', "''")),
        }
    }
}

impl fmt::Display for Expr {
    /// The filter written back, fully parenthesised where it nests.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Or(a, b) => write!(f, "({a} or {b})"),
            Expr::And(a, b) => write!(f, "({a} and {b})"),
            Expr::Not(e) => write!(f, "not {e}"),
            Expr::Test(o) => write!(f, "{o}"),
            Expr::Cmp(l, op, r) => write!(f, "{l} {} {r}", op.symbol()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(name: &str) -> Option<Value> {
        Some(match name {
            "Execution_time" => Value::Num(0.25),
            "Execution_time_ratio" => Value::Num(2.0),
            "Temperature" => Value::Str("warm".into()),
            "Rows_differ" => Value::Bool(false),
            "Handler_read_next_delta" => Value::Num(-1000.0),
            "Query" => Value::Str("SELECT * FROM t1 WHERE a = 'x'".into()),
            "Count" => Value::Str("12".into()),
            _ => return None,
        })
    }

    fn t(src: &str) -> bool {
        Expr::parse(src)
            .unwrap_or_else(|e| panic!("{src}: {e}"))
            .eval(&vars)
    }

    #[test]
    fn comparisons_and_logic() {
        assert!(t("Execution_time_ratio > 1.5 and Temperature = warm"));
        assert!(!t("Execution_time_ratio > 1.5 and Temperature = cold"));
        assert!(t(
            "Execution_time_ratio > 1.5 AND (Temperature = cold OR Temperature = 'warm')"
        ));
        assert!(t("Execution_time_ratio >= 2 && Execution_time_ratio <= 2"));
        assert!(t("Execution_time_ratio == 2 || false_name"));
        assert!(t("not Rows_differ"));
        assert!(t("!Rows_differ and Execution_time_ratio != 3"));
        assert!(t("Handler_read_next_delta < -999"));
        assert!(t("Handler_read_next_delta<-999.5"));
        assert!(t("Temperature <> cold"));
        assert!(t("\"warm\" = Temperature"));
        assert!(t("Count > 9 and Count = 12"));
        // and binds tighter than or.
        assert!(t(
            "Temperature = cold and Rows_differ or Execution_time > 0"
        ));
        assert!(!t(
            "Temperature = cold and (Rows_differ or Execution_time > 0)"
        ));
    }

    #[test]
    fn units_and_numbers() {
        assert!(t("Execution_time > 200ms and Execution_time < 0.3s"));
        assert!(t("Execution_time = 250000us"));
        assert!(t("Execution_time_ratio > 150%"));
        assert!(t("Execution_time < 1min and Execution_time > 1e-1"));
        assert!(t("Execution_time < .3"));
        let e = Expr::parse("Execution_time > 3 parsecs").unwrap_err();
        assert!(e.message.contains("unexpected 'parsecs'"), "{e}");
        let e = Expr::parse("Execution_time > 3parsecs").unwrap_err();
        assert!(e.message.contains("unknown unit 'parsecs'"), "{e}");
        let e = Expr::parse("Execution_time > 3xs").unwrap_err();
        assert_eq!(e.column, 19, "{e}");
    }

    #[test]
    fn missing_variables_are_false() {
        assert!(!t("Nothing > 1"));
        assert!(!t("Nothing <= 1"));
        assert!(t("not Nothing > 1"));
        assert!(!t("Nothing"));
        assert!(!t("Nothing = x"));
        // A word on the right is text unless it is a variable.
        assert!(!t("Temperature = Nothing"));
        assert!(t("Temperature = Temperature"));
    }

    #[test]
    fn contains_ignores_case() {
        assert!(t("Query ~ 'from T1'"));
        assert!(t("Query ~ where"));
        assert!(!t("Query ~ 'join'"));
    }

    #[test]
    fn text_against_number() {
        assert!(!t("Temperature > 1"));
        assert!(t("Temperature != 1"));
        assert!(!t("Temperature = 1"));
    }

    #[test]
    fn variables_in_variable_places() {
        let e = Expr::parse("A > 1 and (B = warm or not C) and 2 < D and E ~ x and A < 3").unwrap();
        assert_eq!(e.variables(), ["A", "B", "C", "D", "E"]);
    }

    #[test]
    fn errors_name_the_column() {
        let cases = [
            ("", 1, "empty"),
            ("A >", 4, "expected a value or a name after '>'"),
            ("A > 1 B", 7, "unexpected 'B'"),
            ("(A > 1", 7, "expected ')' for the '(' at column 1"),
            ("A > 'x", 5, "not closed"),
            ("A # 1", 3, "unexpected character '#'"),
            ("A > 1 > 2", 7, "cannot follow a comparison"),
            ("1", 2, "expected a comparison after the value"),
            ("A and or B", 7, "expected a value or a name after 'and'"),
        ];
        for (src, col, msg) in cases {
            let e = Expr::parse(src).unwrap_err();
            assert_eq!(e.column, col, "{src}: {e}");
            assert!(e.message.contains(msg), "{src}: {e}");
            assert!(!e.to_string().contains('\n'));
        }
    }

    #[test]
    fn quotes_double_to_escape() {
        let e = Expr::parse("Query ~ 'a = ''x'''").unwrap();
        assert!(e.eval(&vars));
        assert_eq!(e.to_string(), "Query ~ 'a = ''x'''");
    }

    #[test]
    fn written_back() {
        let e = Expr::parse("a > 1 and b = c or not d").unwrap();
        assert_eq!(e.to_string(), "((a > 1 and b = c) or not d)");
        assert_eq!(Expr::parse(&e.to_string()).unwrap(), e);
    }
}
