//! The values of pgbench's expression language: NULL, booleans, 64-bit
//! integers and doubles; how one is coerced into another, how a value is
//! written into SQL text (`%.15g` for doubles, as pgbench prints them),
//! and how a variable's text (from `-D`, `\gset`) is read back as a value.

use std::fmt::{self, Write as _};

/// One value. `Copy`: evaluating an expression allocates nothing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Double(f64),
}

/// An error while evaluating an expression or running a meta-command:
/// pgbench's message, without the file and line (the caller adds them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvalError(pub String);

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

pub(crate) fn err<T>(message: impl Into<String>) -> Result<T, EvalError> {
    Err(EvalError(message.into()))
}

impl Value {
    /// The type's name in pgbench's messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Int(_) => "int",
            Value::Double(_) => "double",
        }
    }

    /// Only booleans are booleans (pgbench does not turn 0/1 into one).
    pub fn to_bool(self) -> Result<bool, EvalError> {
        match self {
            Value::Bool(b) => Ok(b),
            other => err(format!("cannot coerce {} to boolean", other.type_name())),
        }
    }

    /// Integers as they are; doubles rounded half to even (C's `rint`),
    /// an error when the result does not fit in 64 bits.
    pub fn to_int(self) -> Result<i64, EvalError> {
        match self {
            Value::Int(i) => Ok(i),
            Value::Double(d) => {
                let r = d.round_ties_even();
                // -2^63 fits, 2^63 does not.
                if r.is_nan()
                    || !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&r)
                {
                    return err(format!("double to int overflow for {r:.6}"));
                }
                Ok(r as i64)
            }
            other => err(format!("cannot coerce {} to int", other.type_name())),
        }
    }

    pub fn to_double(self) -> Result<f64, EvalError> {
        match self {
            Value::Double(d) => Ok(d),
            Value::Int(i) => Ok(i as f64),
            other => err(format!("cannot coerce {} to double", other.type_name())),
        }
    }

    /// The truth of a `\if` or `CASE WHEN` condition: NULL and zero are
    /// false.
    pub fn truth(self) -> bool {
        match self {
            Value::Null => false,
            Value::Bool(b) => b,
            Value::Int(i) => i != 0,
            Value::Double(d) => d != 0.0,
        }
    }

    /// Appends the value as pgbench writes it into SQL: `NULL`, `true`,
    /// `false`, the integer, or the double with 15 significant digits.
    pub fn write_text(&self, out: &mut String) {
        match *self {
            Value::Null => out.push_str("NULL"),
            Value::Bool(b) => out.push_str(if b { "true" } else { "false" }),
            Value::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Value::Double(d) => write_double(d, out),
        }
    }

    /// The value as `debug()` describes it: `int 42`, `double 0.5`,
    /// `boolean true`, `null`.
    pub fn describe(&self) -> String {
        let mut s = String::new();
        match self {
            Value::Null => s.push_str("null"),
            other => {
                s.push_str(other.type_name());
                s.push(' ');
                other.write_text(&mut s);
            }
        }
        s
    }
}

/// A fixed buffer on the stack that `write!` can fill (no allocation).
struct StackText<const N: usize> {
    buf: [u8; N],
    len: usize,
}

impl<const N: usize> StackText<N> {
    fn new() -> Self {
        StackText {
            buf: [0; N],
            len: 0,
        }
    }

    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or_default()
    }
}

impl<const N: usize> fmt::Write for StackText<N> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        if end > N {
            return Err(fmt::Error);
        }
        self.buf[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// Appends `d` as C's `%.15g` would (PostgreSQL's own printf spells the
/// special values `NaN`, `Infinity` and `-Infinity`).
pub fn write_double(d: f64, out: &mut String) {
    const PRECISION: i32 = 15;
    if d.is_nan() {
        out.push_str("NaN");
        return;
    }
    if d.is_infinite() {
        out.push_str(if d < 0.0 { "-Infinity" } else { "Infinity" });
        return;
    }
    if d == 0.0 {
        out.push_str(if d.is_sign_negative() { "-0" } else { "0" });
        return;
    }
    // 15 significant digits, correctly rounded, and the decimal exponent.
    let mut sci = StackText::<40>::new();
    if write!(sci, "{:.*e}", (PRECISION - 1) as usize, d).is_err() {
        let _ = write!(out, "{d}");
        return;
    }
    let s = sci.as_str();
    let (mantissa, exp) = s.split_once('e').unwrap_or((s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (negative, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mantissa),
    };
    // The significant digits without the point, trailing zeros dropped.
    let mut digits = StackText::<24>::new();
    for c in mantissa.chars().filter(|c| c.is_ascii_digit()) {
        let _ = digits.write_char(c);
    }
    let digits = digits.as_str().trim_end_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    if negative {
        out.push('-');
    }
    if !(-4..PRECISION).contains(&exp) {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    } else if exp >= 0 {
        let int_len = exp as usize + 1;
        if digits.len() <= int_len {
            out.push_str(digits);
            for _ in digits.len()..int_len {
                out.push('0');
            }
        } else {
            out.push_str(&digits[..int_len]);
            out.push('.');
            out.push_str(&digits[int_len..]);
        }
    } else {
        out.push_str("0.");
        for _ in 0..(-exp - 1) {
            out.push('0');
        }
        out.push_str(digits);
    }
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// Whether `s` looks like an integer: optional spaces, an optional sign,
/// digits, nothing else (pgbench's `is_an_int`).
pub(crate) fn looks_like_int(s: &str) -> bool {
    let t = s.trim_start_matches(|c: char| c.is_ascii() && is_space(c as u8));
    let t = t.strip_prefix(['+', '-']).unwrap_or(t);
    // "" and "-" count, as in pgbench (and then fail to parse).
    t.bytes().all(|b| b.is_ascii_digit())
}

/// Parses a 64-bit integer with optional surrounding spaces and sign, as
/// pgbench's `strtoint64`: None for bad syntax, Some(Err) out of range.
pub(crate) fn parse_int(s: &str) -> Option<Result<i64, ()>> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && is_space(b[i]) {
        i += 1;
    }
    let neg = match b.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    if !b.get(i).is_some_and(|c| c.is_ascii_digit()) {
        return None;
    }
    // Accumulated negatively so that -2^63 fits.
    let mut acc: i64 = 0;
    let mut overflow = false;
    while let Some(&c) = b.get(i).filter(|c| c.is_ascii_digit()) {
        match acc
            .checked_mul(10)
            .and_then(|v| v.checked_sub((c - b'0') as i64))
        {
            Some(v) => acc = v,
            None => overflow = true,
        }
        i += 1;
    }
    while i < b.len() && is_space(b[i]) {
        i += 1;
    }
    if i != b.len() {
        return None;
    }
    if overflow {
        return Some(Err(()));
    }
    if neg {
        Some(Ok(acc))
    } else {
        Some(acc.checked_neg().ok_or(()))
    }
}

/// Parses a double as C's `strtod` in pgbench's `strtodouble`: leading
/// spaces allowed, nothing after the number, out of range is an error.
pub(crate) fn parse_double(s: &str) -> Option<f64> {
    let t = s.trim_start_matches(|c: char| c.is_ascii() && is_space(c as u8));
    let v: f64 = t.parse().ok()?;
    let lower = t.to_ascii_lowercase();
    let named = lower.contains("inf") || lower.contains("nan");
    if v.is_infinite() && !named {
        return None; // overflow (ERANGE)
    }
    if v == 0.0
        && t.bytes()
            .take_while(|b| *b != b'e' && *b != b'E')
            .any(|b| (b'1'..=b'9').contains(&b))
    {
        return None; // underflow (ERANGE)
    }
    Some(v)
}

/// Reads a variable's text as a value, as pgbench does the first time an
/// expression uses a variable set from text: `null`, the prefixes of
/// `true`/`yes`/`false`/`no` and `on`/`off`, an integer, or a double.
pub fn value_from_text(name: &str, text: &str) -> Result<Value, EvalError> {
    if text.is_empty() {
        return err(format!("malformed variable \"{name}\" value: \"\""));
    }
    let lower = text.to_ascii_lowercase();
    let prefix_of = |word: &str| word.starts_with(lower.as_str());
    if lower == "null" {
        return Ok(Value::Null);
    }
    if prefix_of("true") || prefix_of("yes") || lower == "on" {
        return Ok(Value::Bool(true));
    }
    if prefix_of("false") || prefix_of("no") || lower == "off" || lower == "of" {
        return Ok(Value::Bool(false));
    }
    if looks_like_int(text) {
        return match parse_int(text) {
            Some(Ok(i)) => Ok(Value::Int(i)),
            Some(Err(())) => err(format!("value \"{text}\" is out of range for type bigint")),
            None => err(format!("invalid input syntax for type bigint: \"{text}\"")),
        };
    }
    match parse_double(text) {
        Some(d) => Ok(Value::Double(d)),
        None => err(format!("malformed variable \"{name}\" value: \"{text}\"")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(d: f64) -> String {
        let mut s = String::new();
        write_double(d, &mut s);
        s
    }

    #[test]
    fn doubles_print_like_percent_15g() {
        assert_eq!(g(1.0 / 3.0), "0.333333333333333");
        assert_eq!(g(std::f64::consts::PI), "3.14159265358979");
        assert_eq!(g(123456789.12345679), "123456789.123457");
        assert_eq!(g(0.1), "0.1");
        assert_eq!(g(1e-5), "1e-05");
        assert_eq!(g(1e20), "1e+20");
        assert_eq!(g(1e15), "1e+15");
        assert_eq!(g(1e14), "100000000000000");
        assert_eq!(g(123456789012345678.0), "1.23456789012346e+17");
        assert_eq!(g(0.0001), "0.0001");
        assert_eq!(g(2.0f64.sqrt()), "1.4142135623731");
        assert_eq!(g(-3.0), "-3");
        assert_eq!(g(1024.0), "1024");
        assert_eq!(g(f64::INFINITY), "Infinity");
        assert_eq!(g(f64::NEG_INFINITY), "-Infinity");
        assert_eq!(g(f64::NAN), "NaN");
        assert_eq!(g(1.5e-300), "1.5e-300");
        assert_eq!(g(999999999999999.9), "1e+15");
    }

    #[test]
    fn text_becomes_a_value_as_in_pgbench() {
        let v = |t| value_from_text("v", t);
        assert_eq!(v("NULL"), Ok(Value::Null));
        assert_eq!(v("t"), Ok(Value::Bool(true)));
        assert_eq!(v("YES"), Ok(Value::Bool(true)));
        assert_eq!(v("on"), Ok(Value::Bool(true)));
        assert_eq!(v("of"), Ok(Value::Bool(false)));
        assert_eq!(v("n"), Ok(Value::Bool(false)));
        assert_eq!(v(" -42"), Ok(Value::Int(-42)));
        assert_eq!(v("-9223372036854775808"), Ok(Value::Int(i64::MIN)));
        assert!(v("9223372036854775808").is_err());
        assert_eq!(v("1.5"), Ok(Value::Double(1.5)));
        assert_eq!(v("1e3"), Ok(Value::Double(1000.0)));
        assert!(v("1e999").is_err());
        assert!(v("abc").is_err());
        assert!(v("o").is_err());
        assert!(v("").is_err());
    }

    #[test]
    fn coercions() {
        assert_eq!(Value::Double(2.5).to_int(), Ok(2));
        assert_eq!(Value::Double(3.5).to_int(), Ok(4));
        assert_eq!(Value::Double(-2.5).to_int(), Ok(-2));
        assert_eq!(
            Value::Double(1e30).to_int(),
            err("double to int overflow for 1000000000000000019884624838656.000000")
        );
        assert_eq!(
            Value::Bool(true).to_int(),
            err("cannot coerce boolean to int")
        );
        assert_eq!(Value::Int(1).to_bool(), err("cannot coerce int to boolean"));
        assert_eq!(Value::Null.to_double(), err("cannot coerce null to double"));
    }
}
