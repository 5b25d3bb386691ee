//! Evaluating an [`Expr`] with a client's variables and random generator,
//! with pgbench's rules: a NULL argument makes a function NULL (except
//! `IS` and `debug`); an integer and a double make a double (except `%`,
//! which rounds doubles to integers); integer overflow and division by zero
//! are errors; `AND`/`OR` take only booleans and NULL, and stop early.

use super::expr_parse::{Expr, Func};
use super::functions::{self, MAX_ZIPFIAN_PARAM, MIN_GAUSSIAN_PARAM, MIN_ZIPFIAN_PARAM};
use super::prng::PgPrng;
use super::value::{EvalError, Value, err};
use super::variables::{VarNames, Variables};

/// What an expression is evaluated with. `debug` receives what `debug()`
/// prints (its argument).
pub struct Evaluator<'a> {
    pub vars: &'a mut Variables,
    pub names: &'a VarNames,
    pub rng: &'a mut PgPrng,
    pub debug: &'a mut dyn FnMut(&Value),
}

/// pgbench evaluates at most 16 arguments (the parser enforces it).
const MAX_ARGS: usize = 16;

impl Evaluator<'_> {
    pub fn eval(&mut self, e: &Expr) -> Result<Value, EvalError> {
        match e {
            Expr::Const(v) => Ok(*v),
            Expr::Var(id) => self.vars.value(*id, self.names),
            Expr::And(a, b) => {
                let a = self.eval(a)?;
                if a == Value::Null {
                    return Ok(Value::Null);
                }
                if !a.to_bool()? {
                    return Ok(Value::Bool(false));
                }
                match self.eval(b)? {
                    Value::Null => Ok(Value::Null),
                    b => Ok(Value::Bool(b.to_bool()?)),
                }
            }
            Expr::Or(a, b) => {
                let a = self.eval(a)?;
                if a == Value::Null {
                    return Ok(Value::Null);
                }
                if a.to_bool()? {
                    return Ok(Value::Bool(true));
                }
                match self.eval(b)? {
                    Value::Null => Ok(Value::Null),
                    b => Ok(Value::Bool(b.to_bool()?)),
                }
            }
            Expr::Case(parts) => {
                let (otherwise, pairs) = match parts.split_last() {
                    Some(x) => x,
                    None => return Ok(Value::Null),
                };
                for pair in pairs.chunks(2) {
                    if let [cond, result] = pair
                        && self.eval(cond)?.truth()
                    {
                        return self.eval(result);
                    }
                }
                self.eval(otherwise)
            }
            Expr::Call(f, args) => {
                // pgbench parses more and refuses them when evaluating.
                if args.len() > MAX_ARGS {
                    return err(format!(
                        "too many function arguments, maximum is {MAX_ARGS}"
                    ));
                }
                let mut vals = [Value::Null; MAX_ARGS];
                let n = args.len().min(MAX_ARGS);
                let mut has_null = false;
                for (slot, a) in vals.iter_mut().zip(args.iter()) {
                    *slot = self.eval(a)?;
                    has_null |= *slot == Value::Null;
                }
                if has_null && *f != Func::Is && *f != Func::Debug {
                    return Ok(Value::Null);
                }
                self.apply(*f, &vals[..n])
            }
        }
    }

    fn apply(&mut self, f: Func, a: &[Value]) -> Result<Value, EvalError> {
        let arg = |i: usize| a.get(i).copied().unwrap_or(Value::Null);
        match f {
            Func::Add
            | Func::Sub
            | Func::Mul
            | Func::Div
            | Func::Mod
            | Func::Eq
            | Func::Ne
            | Func::Le
            | Func::Lt => arithmetic(f, arg(0), arg(1)),
            Func::BitAnd | Func::BitOr | Func::BitXor | Func::ShiftLeft | Func::ShiftRight => {
                let (l, r) = (arg(0).to_int()?, arg(1).to_int()?);
                Ok(Value::Int(match f {
                    Func::BitAnd => l & r,
                    Func::BitOr => l | r,
                    Func::BitXor => l ^ r,
                    // As the x86 shift instructions do (the count modulo 64).
                    Func::ShiftLeft => l.wrapping_shl(r as u32),
                    _ => l.wrapping_shr(r as u32),
                }))
            }
            Func::Not => Ok(Value::Bool(!arg(0).to_bool()?)),
            Func::Pi => Ok(Value::Double(std::f64::consts::PI)),
            Func::Abs => match arg(0) {
                Value::Int(i) => Ok(Value::Int(i.wrapping_abs())),
                v => Ok(Value::Double(v.to_double()?.abs())),
            },
            Func::Debug => {
                let v = arg(0);
                (self.debug)(&v);
                Ok(v)
            }
            Func::Double => Ok(Value::Double(arg(0).to_double()?)),
            Func::Sqrt => Ok(Value::Double(arg(0).to_double()?.sqrt())),
            Func::Ln => Ok(Value::Double(arg(0).to_double()?.ln())),
            Func::Exp => Ok(Value::Double(arg(0).to_double()?.exp())),
            Func::Int => Ok(Value::Int(arg(0).to_int()?)),
            Func::Least | Func::Greatest => extremum(f == Func::Least, a),
            Func::Random | Func::RandomGaussian | Func::RandomExponential | Func::RandomZipfian => {
                self.random(f, a)
            }
            Func::Pow => Ok(Value::Double(arg(0).to_double()?.powf(arg(1).to_double()?))),
            Func::Is => Ok(Value::Bool(match (arg(0), arg(1)) {
                (Value::Null, Value::Null) => true,
                (Value::Bool(x), Value::Bool(y)) => x == y,
                _ => false,
            })),
            Func::HashMurmur2 => Ok(Value::Int(functions::hash_murmur2(
                arg(0).to_int()?,
                arg(1).to_int()?,
            ))),
            Func::HashFnv1a => Ok(Value::Int(functions::hash_fnv1a(
                arg(0).to_int()?,
                arg(1).to_int()?,
            ))),
            Func::Permute => {
                let (val, size, seed) = (arg(0).to_int()?, arg(1).to_int()?, arg(2).to_int()?);
                if size <= 0 {
                    return err("permute size parameter must be greater than zero");
                }
                Ok(Value::Int(functions::permute(val, size, seed)))
            }
        }
    }

    fn random(&mut self, f: Func, a: &[Value]) -> Result<Value, EvalError> {
        let arg = |i: usize| a.get(i).copied().unwrap_or(Value::Null);
        let (min, max) = (arg(0).to_int()?, arg(1).to_int()?);
        if min > max {
            return err("empty range given to random");
        }
        if max
            .checked_sub(min)
            .and_then(|d| d.checked_add(1))
            .is_none()
        {
            return err("random range is too large");
        }
        let rng = &mut *self.rng;
        if f == Func::Random {
            return Ok(Value::Int(functions::uniform(rng, min, max)));
        }
        let param = arg(2).to_double()?;
        match f {
            Func::RandomGaussian => {
                if param < MIN_GAUSSIAN_PARAM {
                    return err(format!(
                        "gaussian parameter must be at least {MIN_GAUSSIAN_PARAM:.6} (not {param:.6})"
                    ));
                }
                Ok(Value::Int(functions::gaussian(rng, min, max, param)))
            }
            Func::RandomZipfian => {
                // NaN fails both comparisons in pgbench; refuse it here.
                if !(MIN_ZIPFIAN_PARAM..=MAX_ZIPFIAN_PARAM).contains(&param) {
                    return err(format!(
                        "zipfian parameter must be in range [{MIN_ZIPFIAN_PARAM:.3}, {MAX_ZIPFIAN_PARAM:.0}] (not {param:.6})"
                    ));
                }
                Ok(Value::Int(functions::zipfian(rng, min, max, param)))
            }
            _ => {
                if param.is_nan() || param <= 0.0 {
                    return err(format!(
                        "exponential parameter must be greater than zero (not {param:.6})"
                    ));
                }
                Ok(Value::Int(functions::exponential(rng, min, max, param)))
            }
        }
    }
}

/// `+ - * / %` and the comparisons: doubles when either side is one
/// (except `%`), integers otherwise.
fn arithmetic(f: Func, l: Value, r: Value) -> Result<Value, EvalError> {
    if (matches!(l, Value::Double(_)) || matches!(r, Value::Double(_))) && f != Func::Mod {
        let (l, r) = (l.to_double()?, r.to_double()?);
        return Ok(match f {
            Func::Add => Value::Double(l + r),
            Func::Sub => Value::Double(l - r),
            Func::Mul => Value::Double(l * r),
            Func::Div => Value::Double(l / r),
            Func::Eq => Value::Bool(l == r),
            Func::Ne => Value::Bool(l != r),
            Func::Le => Value::Bool(l <= r),
            _ => Value::Bool(l < r),
        });
    }
    let (l, r) = (l.to_int()?, r.to_int()?);
    let overflow = |what: &str| err(format!("bigint {what} out of range"));
    match f {
        Func::Add => l
            .checked_add(r)
            .map_or_else(|| overflow("add"), |v| Ok(Value::Int(v))),
        Func::Sub => l
            .checked_sub(r)
            .map_or_else(|| overflow("sub"), |v| Ok(Value::Int(v))),
        Func::Mul => l
            .checked_mul(r)
            .map_or_else(|| overflow("mul"), |v| Ok(Value::Int(v))),
        Func::Eq => Ok(Value::Bool(l == r)),
        Func::Ne => Ok(Value::Bool(l != r)),
        Func::Le => Ok(Value::Bool(l <= r)),
        Func::Lt => Ok(Value::Bool(l < r)),
        Func::Div | Func::Mod => {
            if r == 0 {
                return err("division by zero");
            }
            if r == -1 {
                if f == Func::Mod {
                    return Ok(Value::Int(0));
                }
                return l
                    .checked_neg()
                    .map_or_else(|| overflow("div"), |v| Ok(Value::Int(v)));
            }
            Ok(Value::Int(if f == Func::Div { l / r } else { l % r }))
        }
        _ => err("internal error: not an arithmetic operator"),
    }
}

/// `least`/`greatest`: doubles if any argument is one, else integers.
fn extremum(least: bool, a: &[Value]) -> Result<Value, EvalError> {
    let (first, rest) = match a.split_first() {
        Some(x) => x,
        None => return Ok(Value::Null),
    };
    if a.iter().any(|v| matches!(v, Value::Double(_))) {
        let mut ext = first.to_double()?;
        for v in rest {
            let d = v.to_double()?;
            // As pgbench's Min/Max macros (the new value unless the kept
            // one is strictly better, which decides NaN's fate).
            let keep = if least { ext < d } else { ext > d };
            if !keep {
                ext = d;
            }
        }
        return Ok(Value::Double(ext));
    }
    let mut ext = first.to_int()?;
    for v in rest {
        let i = v.to_int()?;
        ext = if least { ext.min(i) } else { ext.max(i) };
    }
    Ok(Value::Int(ext))
}

#[cfg(test)]
mod tests {
    use super::super::expr_parse::parse_expr;
    use super::*;

    /// Evaluates `src` with variables a=5 (text), d=2.5 and n=NULL, and
    /// the debug() output collected.
    fn run(src: &str) -> (Result<Value, EvalError>, Vec<String>) {
        let mut names = VarNames::default();
        let expr = parse_expr(src, &mut names);
        let a = names.intern("a");
        let d = names.intern("d");
        let n = names.intern("n");
        let seed = names.intern("default_seed");
        let mut vars = Variables::new(&names);
        vars.set_text(a, "5");
        vars.set_value(d, Value::Double(2.5));
        vars.set_value(n, Value::Null);
        vars.set_value(seed, Value::Int(0));
        let mut rng = PgPrng::seed(1);
        let mut printed = Vec::new();
        let mut debug = |v: &Value| printed.push(v.describe());
        let result = match expr {
            Ok(e) => Evaluator {
                vars: &mut vars,
                names: &names,
                rng: &mut rng,
                debug: &mut debug,
            }
            .eval(&e),
            Err(e) => Err(EvalError(format!("parse: {}", e.message))),
        };
        (result, printed)
    }

    fn v(src: &str) -> Result<Value, EvalError> {
        run(src).0
    }

    use Value::{Bool, Double, Int, Null};

    /// Each case was checked against pgbench 15 (debug() output).
    #[test]
    fn results_match_pgbench() {
        let cases: &[(&str, Result<Value, EvalError>)] = &[
            ("1 + 2 * 3", Ok(Int(7))),
            ("7 / 2", Ok(Int(3))),
            ("-7 / 2", Ok(Int(-3))),
            ("5 % -3", Ok(Int(2))),
            ("-5 % 3", Ok(Int(-2))),
            ("5.5 % 2", Ok(Int(0))),
            ("mod(7, 4)", Ok(Int(3))),
            ("1.0 / 3", Ok(Double(1.0 / 3.0))),
            ("1 / 0", err("division by zero")),
            ("1 % 0", err("division by zero")),
            ("1.0 / 0", Ok(Double(f64::INFINITY))),
            ("-9223372036854775808 / -1", err("bigint div out of range")),
            ("-9223372036854775808 % -1", Ok(Int(0))),
            ("9223372036854775807 + 1", err("bigint add out of range")),
            ("-9223372036854775807 - 2", err("bigint sub out of range")),
            ("4294967296 * 4294967296", err("bigint mul out of range")),
            ("-9223372036854775807 - 1", Ok(Int(i64::MIN))),
            ("-(-9223372036854775808)", err("bigint sub out of range")),
            ("2 = 2.0", Ok(Bool(true))),
            ("1 <> 2", Ok(Bool(true))),
            ("1 != 1", Ok(Bool(false))),
            ("3 >= 3", Ok(Bool(true))),
            ("3 > 3", Ok(Bool(false))),
            ("1 + true", err("cannot coerce boolean to int")),
            ("true = true", err("cannot coerce boolean to int")),
            ("~5", Ok(Int(-6))),
            ("1 << 63", Ok(Int(i64::MIN))),
            ("-16 >> 2", Ok(Int(-4))),
            ("7 >> 1 | 8 # 3 & 5", Ok(Int(0))),
            ("int(2.5)", Ok(Int(2))),
            ("int(3.5)", Ok(Int(4))),
            ("int(-0.5)", Ok(Int(0))),
            (
                "int(1e30)",
                err("double to int overflow for 1000000000000000019884624838656.000000"),
            ),
            ("double(3)", Ok(Double(3.0))),
            ("abs(-3)", Ok(Int(3))),
            ("abs(-3.5)", Ok(Double(3.5))),
            ("least(1, 2.5, -3)", Ok(Double(-3.0))),
            ("greatest(1, 2, 3)", Ok(Int(3))),
            ("least(3, NULL)", Ok(Null)),
            ("pow(2, 10)", Ok(Double(1024.0))),
            ("power(2, 0.5)", Ok(Double(2f64.sqrt()))),
            ("sqrt(2)", Ok(Double(2f64.sqrt()))),
            ("exp(1)", Ok(Double(std::f64::consts::E))),
            ("ln(0)", Ok(Double(f64::NEG_INFINITY))),
            ("pi()", Ok(Double(std::f64::consts::PI))),
            ("true AND NULL", Ok(Null)),
            ("NULL OR true", Ok(Null)),
            ("false AND 1", Ok(Bool(false))),
            ("true OR 1", Ok(Bool(true))),
            ("true AND 1", err("cannot coerce int to boolean")),
            ("NOT NULL", Ok(Null)),
            ("NOT false", Ok(Bool(true))),
            ("1 IS NULL", Ok(Bool(false))),
            ("NULL IS NULL", Ok(Bool(true))),
            (":n ISNULL", Ok(Bool(true))),
            (":n NOTNULL", Ok(Bool(false))),
            (":a IS NOT NULL", Ok(Bool(true))),
            ("(1 < 2) IS TRUE", Ok(Bool(true))),
            ("(1 < 2) IS NOT TRUE", Ok(Bool(false))),
            ("1 IS TRUE", Ok(Bool(false))),
            ("case when 0 then 1 when 2.5 then 2 else 3 end", Ok(Int(2))),
            ("case when false then 1 end", Ok(Null)),
            ("case when :n then 1 else 2 end", Ok(Int(2))),
            (":a * 2", Ok(Int(10))),
            (":d * 2", Ok(Double(5.0))),
            (":n + 1", Ok(Null)),
            (":nope + 1", err("undefined variable \"nope\"")),
            ("hash_fnv1a(42, 0)", Ok(Int(-55488592825689361))),
            ("hash_murmur2(42, 0)", Ok(Int(-3251795447530343920))),
            ("hash(42)", Ok(Int(-3251795447530343920))),
            ("hash(1, 2)", Ok(Int(-3827666828038376880))),
            ("permute(3, 10, 5)", Ok(Int(9))),
            ("permute(0, 1)", Ok(Int(0))),
            (
                "permute(1, 0)",
                err("permute size parameter must be greater than zero"),
            ),
            ("random(5, 1)", err("empty range given to random")),
            (
                "random(-9223372036854775808, 9223372036854775807)",
                err("random range is too large"),
            ),
            (
                "random_gaussian(1, 10, 1.5)",
                err("gaussian parameter must be at least 2.000000 (not 1.500000)"),
            ),
            (
                "random_zipfian(1, 10, 1)",
                err("zipfian parameter must be in range [1.001, 1000] (not 1.000000)"),
            ),
            (
                "random_exponential(1, 10, 0)",
                err("exponential parameter must be greater than zero (not 0.000000)"),
            ),
            ("random(7, 7)", Ok(Int(7))),
        ];
        for (src, want) in cases {
            assert_eq!(&v(src), want, "{src}");
        }
    }

    #[test]
    fn debug_prints_and_passes_through() {
        let (r, printed) =
            run("debug(1) + debug(0.5) + case when debug(NULL) IS NULL then 1 else 0 end");
        assert_eq!(r, Ok(Double(2.5)));
        assert_eq!(printed, ["int 1", "double 0.5", "null"]);
    }

    #[test]
    fn and_or_stop_early() {
        // The right side would fail; it is not evaluated.
        assert_eq!(v("false AND 1/0 = 1"), Ok(Bool(false)));
        assert_eq!(v("true OR 1/0 = 1"), Ok(Bool(true)));
        assert_eq!(v("case when true then 1 else 1/0 end"), Ok(Int(1)));
    }
}
