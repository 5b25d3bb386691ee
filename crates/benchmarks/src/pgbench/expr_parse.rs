//! The expression language of `\set`, `\if` and `\elif`: its tokens, its
//! grammar (pgbench's operators and precedence), and the tree it is parsed
//! into ([`Expr`]). Evaluation is in `expr_eval.rs`.
//!
//! Precedence, loosest first, as pgbench takes it from PostgreSQL's SQL
//! grammar: `OR`; `AND`; `NOT`; `IS`, `ISNULL`, `NOTNULL`; the
//! comparisons (not chainable: `1 < 2 < 3` is an error); the bit
//! operators `| # & << >>` and prefix `~`; `+ -`; `* / %`; unary `+ -`.

use super::value::Value;
use super::variables::{VarId, VarNames};

/// A parsed expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Const(Value),
    Var(VarId),
    /// A function or operator with its arguments, all evaluated first.
    Call(Func, Box<[Expr]>),
    /// Evaluated lazily: the right side only when the left does not decide.
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    /// `CASE`: conditions and results alternating, then the `ELSE` result
    /// (NULL when there is none).
    Case(Box<[Expr]>),
}

/// The functions, and the operators evaluated as functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Func {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Abs,
    Least,
    Greatest,
    Debug,
    Pi,
    Sqrt,
    Ln,
    Exp,
    Int,
    Double,
    Random,
    RandomGaussian,
    RandomExponential,
    RandomZipfian,
    Pow,
    Not,
    BitAnd,
    BitOr,
    BitXor,
    ShiftLeft,
    ShiftRight,
    Eq,
    Ne,
    Le,
    Lt,
    /// `IS`: same type and same boolean (NULL IS NULL is true).
    Is,
    HashMurmur2,
    HashFnv1a,
    Permute,
}

/// How many arguments a function takes.
#[derive(Clone, Copy)]
enum Arity {
    Exactly(usize),
    /// One or more (least, greatest).
    AtLeastOne,
    /// `n` required and one optional seed, `:default_seed` when left out.
    WithSeed(usize),
}

/// The functions a script may call by name (case does not matter).
const FUNCTIONS: &[(&str, Func, Arity)] = &[
    ("mod", Func::Mod, Arity::Exactly(2)),
    ("abs", Func::Abs, Arity::Exactly(1)),
    ("least", Func::Least, Arity::AtLeastOne),
    ("greatest", Func::Greatest, Arity::AtLeastOne),
    ("debug", Func::Debug, Arity::Exactly(1)),
    ("pi", Func::Pi, Arity::Exactly(0)),
    ("sqrt", Func::Sqrt, Arity::Exactly(1)),
    ("ln", Func::Ln, Arity::Exactly(1)),
    ("exp", Func::Exp, Arity::Exactly(1)),
    ("int", Func::Int, Arity::Exactly(1)),
    ("double", Func::Double, Arity::Exactly(1)),
    ("random", Func::Random, Arity::Exactly(2)),
    ("random_gaussian", Func::RandomGaussian, Arity::Exactly(3)),
    (
        "random_exponential",
        Func::RandomExponential,
        Arity::Exactly(3),
    ),
    ("random_zipfian", Func::RandomZipfian, Arity::Exactly(3)),
    ("pow", Func::Pow, Arity::Exactly(2)),
    ("power", Func::Pow, Arity::Exactly(2)),
    ("hash", Func::HashMurmur2, Arity::WithSeed(1)),
    ("hash_murmur2", Func::HashMurmur2, Arity::WithSeed(1)),
    ("hash_fnv1a", Func::HashFnv1a, Arity::WithSeed(1)),
    ("permute", Func::Permute, Arity::WithSeed(2)),
];

/// The variable holding the seed of `hash()` and `permute()` without one.
pub const DEFAULT_SEED: &str = "default_seed";

/// Why an expression does not parse: pgbench's message, an optional
/// detail (the offending text), and the byte offset in the source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExprError {
    pub message: &'static str,
    pub detail: Option<String>,
    pub offset: usize,
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Int(i64),
    /// 9223372036854775808: only valid after a unary minus.
    MaxIntPlusOne,
    Double(f64),
    Var(String),
    Ident(String),
    And,
    Or,
    Not,
    Is,
    IsNull,
    NotNull,
    Null,
    Bool(bool),
    Case,
    When,
    Then,
    Else,
    End,
    Op(&'static str),
    LParen,
    RParen,
    Comma,
    Eof,
}

fn is_alpha(b: u8) -> bool {
    b >= 0x80 || b.is_ascii_alphabetic() || b == b'_'
}

fn is_alnum(b: u8) -> bool {
    is_alpha(b) || b.is_ascii_digit()
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n' | 0x0b | 0x0c)
}

struct Lexer<'a> {
    src: &'a str,
    pos: usize,
}

impl Lexer<'_> {
    fn error(&self, message: &'static str, detail: Option<String>, offset: usize) -> ExprError {
        ExprError {
            message,
            detail,
            offset,
        }
    }

    /// The next token and where it starts.
    fn next(&mut self) -> Result<(Tok, usize), ExprError> {
        let b = self.src.as_bytes();
        while self.pos < b.len() && is_space(b[self.pos]) {
            self.pos += 1;
        }
        let start = self.pos;
        let Some(&c) = b.get(start) else {
            return Ok((Tok::Eof, start));
        };
        let two = b.get(start..start + 2).unwrap_or(&[]);
        let op2 = match two {
            b"<=" => Some("<="),
            b">=" => Some(">="),
            b"<>" | b"!=" => Some("<>"),
            b"<<" => Some("<<"),
            b">>" => Some(">>"),
            _ => None,
        };
        if let Some(op) = op2 {
            self.pos += 2;
            return Ok((Tok::Op(op), start));
        }
        let single = match c {
            b'+' => Some(Tok::Op("+")),
            b'-' => Some(Tok::Op("-")),
            b'*' => Some(Tok::Op("*")),
            b'/' => Some(Tok::Op("/")),
            b'%' => Some(Tok::Op("%")),
            b'<' => Some(Tok::Op("<")),
            b'>' => Some(Tok::Op(">")),
            b'=' => Some(Tok::Op("=")),
            b'&' => Some(Tok::Op("&")),
            b'|' => Some(Tok::Op("|")),
            b'#' => Some(Tok::Op("#")),
            b'~' => Some(Tok::Op("~")),
            b'(' => Some(Tok::LParen),
            b')' => Some(Tok::RParen),
            b',' => Some(Tok::Comma),
            _ => None,
        };
        if let Some(t) = single {
            self.pos += 1;
            return Ok((t, start));
        }
        if c == b':' && b.get(start + 1).is_some_and(|&n| is_alnum(n)) {
            let mut end = start + 1;
            while end < b.len() && is_alnum(b[end]) {
                end += 1;
            }
            self.pos = end;
            return Ok((Tok::Var(self.src[start + 1..end].to_string()), start));
        }
        if c.is_ascii_digit() || (c == b'.' && b.get(start + 1).is_some_and(u8::is_ascii_digit)) {
            return self.number(start);
        }
        if is_alpha(c) {
            let mut end = start;
            while end < b.len() && is_alnum(b[end]) {
                end += 1;
            }
            self.pos = end;
            let word = &self.src[start..end];
            let tok = match word.to_ascii_lowercase().as_str() {
                "and" => Tok::And,
                "or" => Tok::Or,
                "not" => Tok::Not,
                "is" => Tok::Is,
                "isnull" => Tok::IsNull,
                "notnull" => Tok::NotNull,
                "null" => Tok::Null,
                "true" => Tok::Bool(true),
                "false" => Tok::Bool(false),
                "case" => Tok::Case,
                "when" => Tok::When,
                "then" => Tok::Then,
                "else" => Tok::Else,
                "end" => Tok::End,
                _ => Tok::Ident(word.to_string()),
            };
            return Ok((tok, start));
        }
        let ch = self.src[start..].chars().next().unwrap_or('?');
        Err(self.error("unexpected character", Some(ch.to_string()), start))
    }

    /// `123` (an integer), or `1.5`, `1.`, `.5`, `1e3`, `1.5E-3` (doubles).
    fn number(&mut self, start: usize) -> Result<(Tok, usize), ExprError> {
        let b = self.src.as_bytes();
        let digits = |mut i: usize| {
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            i
        };
        let int_end = digits(start);
        let mut end = int_end;
        let mut is_double = false;
        if b.get(end) == Some(&b'.') {
            end = digits(end + 1);
            is_double = true;
        }
        // An exponent only counts with digits after it.
        if matches!(b.get(end), Some(b'e' | b'E')) {
            let mut e = end + 1;
            if matches!(b.get(e), Some(b'+' | b'-')) {
                e += 1;
            }
            if b.get(e).is_some_and(u8::is_ascii_digit) {
                end = digits(e);
                is_double = true;
            }
        }
        self.pos = end;
        let text = &self.src[start..end];
        if !is_double {
            if text == "9223372036854775808" {
                return Ok((Tok::MaxIntPlusOne, start));
            }
            return match text.parse::<i64>() {
                Ok(v) => Ok((Tok::Int(v), start)),
                Err(_) => Err(self.error(
                    "bigint constant overflow",
                    Some(text.to_string()),
                    end.saturating_sub(1),
                )),
            };
        }
        match super::value::parse_double(text) {
            Some(v) => Ok((Tok::Double(v), start)),
            None => Err(self.error(
                "double constant overflow",
                Some(text.to_string()),
                end.saturating_sub(1),
            )),
        }
    }
}

// Precedence levels, loosest first.
const OR: u8 = 1;
const AND: u8 = 2;
const NOT: u8 = 3;
const IS: u8 = 4;
const CMP: u8 = 5;
const BIT: u8 = 6;
const ADD: u8 = 7;
const MUL: u8 = 8;
const UNARY: u8 = 9;

struct Parser<'a, 'n> {
    lexer: Lexer<'a>,
    tok: Tok,
    at: usize,
    names: &'n mut VarNames,
}

/// Parses a whole expression. Variables are numbered in `names`.
pub fn parse_expr(src: &str, names: &mut VarNames) -> Result<Expr, ExprError> {
    let mut lexer = Lexer { src, pos: 0 };
    let (tok, at) = lexer.next()?;
    let mut p = Parser {
        lexer,
        tok,
        at,
        names,
    };
    let e = p.expr(0)?;
    if p.tok != Tok::Eof {
        return Err(p.syntax_error());
    }
    Ok(e)
}

fn call(f: Func, args: Vec<Expr>) -> Expr {
    Expr::Call(f, args.into_boxed_slice())
}

impl Parser<'_, '_> {
    fn advance(&mut self) -> Result<Tok, ExprError> {
        let (next, at) = self.lexer.next()?;
        self.at = at;
        Ok(std::mem::replace(&mut self.tok, next))
    }

    fn syntax_error(&self) -> ExprError {
        ExprError {
            message: "syntax error",
            detail: None,
            offset: self.at,
        }
    }

    fn expect(&mut self, t: &Tok) -> Result<(), ExprError> {
        if &self.tok != t {
            return Err(self.syntax_error());
        }
        self.advance()?;
        Ok(())
    }

    /// The binary (or postfix) operator at the current token, with its level.
    fn infix(&self) -> Option<u8> {
        Some(match &self.tok {
            Tok::Or => OR,
            Tok::And => AND,
            Tok::Is | Tok::IsNull | Tok::NotNull => IS,
            Tok::Op("<" | ">" | "=" | "<=" | ">=" | "<>") => CMP,
            Tok::Op("|" | "#" | "&" | "<<" | ">>") => BIT,
            Tok::Op("+" | "-") => ADD,
            Tok::Op("*" | "/" | "%") => MUL,
            _ => return None,
        })
    }

    /// An expression whose operators bind at least as tightly as `min`.
    fn expr(&mut self, min: u8) -> Result<Expr, ExprError> {
        let mut left = self.prefix()?;
        let mut after_comparison = false;
        while let Some(level) = self.infix() {
            if level < min {
                break;
            }
            if level == CMP && after_comparison {
                // Comparisons do not associate.
                return Err(self.syntax_error());
            }
            after_comparison = level == CMP;
            let op = self.advance()?;
            left = match op {
                Tok::IsNull => is_null(left),
                Tok::NotNull => call(Func::Not, vec![is_null(left)]),
                Tok::Is => {
                    let negate = if self.tok == Tok::Not {
                        self.advance()?;
                        true
                    } else {
                        false
                    };
                    let right = match self.tok {
                        Tok::Null => Value::Null,
                        Tok::Bool(b) => Value::Bool(b),
                        _ => return Err(self.syntax_error()),
                    };
                    self.advance()?;
                    let test = call(Func::Is, vec![left, Expr::Const(right)]);
                    if negate {
                        call(Func::Not, vec![test])
                    } else {
                        test
                    }
                }
                Tok::Or => Expr::Or(Box::new(left), Box::new(self.expr(OR + 1)?)),
                Tok::And => Expr::And(Box::new(left), Box::new(self.expr(AND + 1)?)),
                Tok::Op(o) => {
                    let right = self.expr(level + 1)?;
                    match o {
                        "+" => call(Func::Add, vec![left, right]),
                        "-" => call(Func::Sub, vec![left, right]),
                        "*" => call(Func::Mul, vec![left, right]),
                        "/" => call(Func::Div, vec![left, right]),
                        "%" => call(Func::Mod, vec![left, right]),
                        "<" => call(Func::Lt, vec![left, right]),
                        "<=" => call(Func::Le, vec![left, right]),
                        ">" => call(Func::Lt, vec![right, left]),
                        ">=" => call(Func::Le, vec![right, left]),
                        "=" => call(Func::Eq, vec![left, right]),
                        "<>" => call(Func::Ne, vec![left, right]),
                        "&" => call(Func::BitAnd, vec![left, right]),
                        "|" => call(Func::BitOr, vec![left, right]),
                        "#" => call(Func::BitXor, vec![left, right]),
                        "<<" => call(Func::ShiftLeft, vec![left, right]),
                        _ => call(Func::ShiftRight, vec![left, right]),
                    }
                }
                _ => return Err(self.syntax_error()),
            };
        }
        Ok(left)
    }

    /// A prefix operator and its operand, or a primary expression.
    fn prefix(&mut self) -> Result<Expr, ExprError> {
        match self.tok {
            Tok::Op("+") => {
                self.advance()?;
                self.expr(UNARY + 1)
            }
            Tok::Op("-") => {
                self.advance()?;
                if self.tok == Tok::MaxIntPlusOne {
                    self.advance()?;
                    return Ok(Expr::Const(Value::Int(i64::MIN)));
                }
                let operand = self.expr(UNARY + 1)?;
                // -x is 0 - x, as in pgbench (so -NULL is NULL and the
                // overflow of -(-2^63) is reported).
                Ok(call(Func::Sub, vec![Expr::Const(Value::Int(0)), operand]))
            }
            Tok::Op("~") => {
                self.advance()?;
                let operand = self.expr(BIT + 1)?;
                Ok(call(
                    Func::BitXor,
                    vec![Expr::Const(Value::Int(!0)), operand],
                ))
            }
            Tok::Not => {
                self.advance()?;
                let operand = self.expr(NOT + 1)?;
                Ok(call(Func::Not, vec![operand]))
            }
            _ => self.primary(),
        }
    }

    fn primary(&mut self) -> Result<Expr, ExprError> {
        let at = self.at;
        match self.advance()? {
            Tok::LParen => {
                let e = self.expr(0)?;
                self.expect(&Tok::RParen)?;
                Ok(e)
            }
            Tok::Int(v) => Ok(Expr::Const(Value::Int(v))),
            Tok::Double(v) => Ok(Expr::Const(Value::Double(v))),
            Tok::Null => Ok(Expr::Const(Value::Null)),
            Tok::Bool(b) => Ok(Expr::Const(Value::Bool(b))),
            Tok::Var(name) => Ok(Expr::Var(self.names.intern(&name))),
            Tok::Ident(name) => self.function(&name, at),
            Tok::Case => self.case(),
            _ => Err(ExprError {
                message: "syntax error",
                detail: None,
                offset: at,
            }),
        }
    }

    fn function(&mut self, name: &str, at: usize) -> Result<Expr, ExprError> {
        let Some(&(fname, func, arity)) = FUNCTIONS
            .iter()
            .find(|(n, _, _)| n.eq_ignore_ascii_case(name))
        else {
            return Err(ExprError {
                message: "unexpected function name",
                detail: Some(name.to_string()),
                offset: at,
            });
        };
        self.expect(&Tok::LParen)?;
        let mut args = Vec::new();
        if self.tok != Tok::RParen {
            loop {
                args.push(self.expr(0)?);
                if self.tok != Tok::Comma {
                    break;
                }
                self.advance()?;
            }
        }
        let close = self.at;
        self.expect(&Tok::RParen)?;
        let wrong = |message| ExprError {
            message,
            detail: Some(fname.to_string()),
            offset: close,
        };
        match arity {
            Arity::Exactly(n) if args.len() != n => {
                return Err(wrong("unexpected number of arguments"));
            }
            Arity::AtLeastOne if args.is_empty() => {
                return Err(wrong("at least one argument expected"));
            }
            Arity::WithSeed(n) => {
                if args.len() != n && args.len() != n + 1 {
                    return Err(wrong("unexpected number of arguments"));
                }
                if args.len() == n {
                    args.push(Expr::Var(self.names.intern(DEFAULT_SEED)));
                }
            }
            _ => {}
        }
        // More than 16 arguments are refused when evaluated, as pgbench
        // refuses them.
        Ok(call(func, args))
    }

    /// After `CASE`: `WHEN c THEN r` at least once, `ELSE r` maybe, `END`.
    fn case(&mut self) -> Result<Expr, ExprError> {
        let mut parts = Vec::new();
        if self.tok != Tok::When {
            return Err(self.syntax_error());
        }
        while self.tok == Tok::When {
            self.advance()?;
            parts.push(self.expr(0)?);
            self.expect(&Tok::Then)?;
            parts.push(self.expr(0)?);
        }
        if self.tok == Tok::Else {
            self.advance()?;
            parts.push(self.expr(0)?);
        } else {
            parts.push(Expr::Const(Value::Null));
        }
        self.expect(&Tok::End)?;
        Ok(Expr::Case(parts.into_boxed_slice()))
    }
}

fn is_null(e: Expr) -> Expr {
    call(Func::Is, vec![e, Expr::Const(Value::Null)])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<Expr, ExprError> {
        parse_expr(s, &mut VarNames::default())
    }

    fn int(v: i64) -> Expr {
        Expr::Const(Value::Int(v))
    }

    #[test]
    fn precedence() {
        // 1 + 2 * 3
        assert_eq!(
            p("1 + 2 * 3"),
            Ok(call(
                Func::Add,
                vec![int(1), call(Func::Mul, vec![int(2), int(3)])]
            ))
        );
        // -1 + 2 is (0 - 1) + 2
        assert_eq!(
            p("-1 + 2"),
            Ok(call(
                Func::Add,
                vec![call(Func::Sub, vec![int(0), int(1)]), int(2)]
            ))
        );
        // a > b is b < a
        assert_eq!(p("1 > 2"), Ok(call(Func::Lt, vec![int(2), int(1)])));
        assert_eq!(p("-9223372036854775808"), Ok(int(i64::MIN)));
        // NOT binds looser than comparison.
        assert_eq!(
            p("NOT 1 = 2"),
            Ok(call(Func::Not, vec![call(Func::Eq, vec![int(1), int(2)])]))
        );
        // ~ is a bit operator: ~1|2 is (~1)|2.
        assert_eq!(
            p("~1 | 2"),
            Ok(call(
                Func::BitOr,
                vec![call(Func::BitXor, vec![int(!0), int(1)]), int(2)]
            ))
        );
    }

    #[test]
    fn errors_as_pgbench_reports_them() {
        let e = |s| p(s).map(|_| ()).map_err(|e| (e.message, e.detail));
        assert_eq!(e("1 +"), Err(("syntax error", None)));
        assert_eq!(e("1 ! 2"), Err(("unexpected character", Some("!".into()))));
        assert_eq!(
            e("foo(1)"),
            Err(("unexpected function name", Some("foo".into())))
        );
        assert_eq!(
            e("99999999999999999999"),
            Err((
                "bigint constant overflow",
                Some("99999999999999999999".into())
            ))
        );
        assert_eq!(
            e("1e999"),
            Err(("double constant overflow", Some("1e999".into())))
        );
        assert_eq!(e("1 < 2 < 3"), Err(("syntax error", None)));
        assert_eq!(e("1 = 2 <> 3"), Err(("syntax error", None)));
        assert_eq!(
            e("random(1)"),
            Err(("unexpected number of arguments", Some("random".into())))
        );
        assert_eq!(
            e("least()"),
            Err(("at least one argument expected", Some("least".into())))
        );
        assert_eq!(e("9223372036854775808"), Err(("syntax error", None)));
        assert_eq!(e("(1"), Err(("syntax error", None)));
        assert_eq!(e(""), Err(("syntax error", None)));
        assert_eq!(e("1 2"), Err(("syntax error", None)));
        assert_eq!(e("case 1 end"), Err(("syntax error", None)));
        // What pgbench accepts.
        assert_eq!(e(":a IS NULL IS NULL"), Ok(()));
        assert_eq!(e("1 + + 2"), Ok(()));
        assert_eq!(e("case when true then 1 end"), Ok(()));
        assert_eq!(e("MOD(5, 3) + Pi()"), Ok(()));
        assert_eq!(e("1 < 2 IS TRUE"), Ok(()));
        assert_eq!(e(":x notnull and :y isnull or not :z is not false"), Ok(()));
    }

    #[test]
    fn hash_and_permute_get_the_default_seed() {
        let mut names = VarNames::default();
        let e = parse_expr("hash(1) + permute(1, 2)", &mut names);
        let seed = names.get(DEFAULT_SEED);
        assert!(seed.is_some());
        let seed = Expr::Var(seed.unwrap_or(VarId(0)));
        assert_eq!(
            e,
            Ok(call(
                Func::Add,
                vec![
                    call(Func::HashMurmur2, vec![int(1), seed.clone()]),
                    call(Func::Permute, vec![int(1), int(2), seed]),
                ]
            ))
        );
    }
}
