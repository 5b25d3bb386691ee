//! Values of result rows: binary format (prepared statements) into
//! [`Value`]s, text format (simple queries, the results store) into
//! typed cells.

use super::Error;
use crate::types::Value;

// Type OIDs (pg_type.dat).
pub(crate) const BOOL: u32 = 16;
pub(crate) const BYTEA: u32 = 17;
pub(crate) const INT8: u32 = 20;
pub(crate) const INT2: u32 = 21;
pub(crate) const INT4: u32 = 23;
pub(crate) const FLOAT4: u32 = 700;
pub(crate) const FLOAT8: u32 = 701;
pub(crate) const TIMESTAMP: u32 = 1114;
pub(crate) const TIMESTAMPTZ: u32 = 1184;
pub(crate) const NUMERIC: u32 = 1700;

fn bad(what: &str, raw: &[u8]) -> Error {
    Error::Protocol(format!("a {what} value of {} bytes", raw.len()))
}

fn be<const N: usize>(what: &str, raw: &[u8]) -> Result<[u8; N], Error> {
    raw.try_into().map_err(|_| bad(what, raw))
}

/// A binary-format value of type `oid`: integers (and booleans) as
/// [`Value::Int`], numeric as its decimal text, floats as their text,
/// timestamps as microseconds since 2000-01-01, anything else as its
/// bytes read as text.
pub(crate) fn binary_value(oid: u32, raw: &[u8]) -> Result<Value, Error> {
    Ok(match oid {
        INT2 => Value::Int(i16::from_be_bytes(be("int2", raw)?).into()),
        INT4 => Value::Int(i32::from_be_bytes(be("int4", raw)?).into()),
        INT8 | TIMESTAMP | TIMESTAMPTZ => Value::Int(i64::from_be_bytes(be("int8", raw)?)),
        BOOL => Value::Int((be::<1>("bool", raw)?[0] != 0).into()),
        FLOAT4 => Value::Text(f32::from_be_bytes(be("float4", raw)?).to_string()),
        FLOAT8 => Value::Text(f64::from_be_bytes(be("float8", raw)?).to_string()),
        NUMERIC => Value::Text(numeric_text(raw)?),
        _ => Value::Text(String::from_utf8_lossy(raw).into_owned()),
    })
}

/// A text-format value as sysbench-like callers want it: an integer
/// when it reads as one, else its text.
pub(crate) fn text_value(raw: &[u8]) -> Value {
    let s = String::from_utf8_lossy(raw);
    match s.parse::<i64>() {
        Ok(i) => Value::Int(i),
        Err(_) => Value::Text(s.into_owned()),
    }
}

/// The decimal text of a NUMERIC in PostgreSQL's binary form: digit
/// count, weight (of the first base-10000 digit), sign, display scale,
/// then the base-10000 digits.
pub(crate) fn numeric_text(raw: &[u8]) -> Result<String, Error> {
    let word = |i: usize| -> Result<u16, Error> {
        match raw.get(2 * i..2 * i + 2) {
            Some(b) => Ok(u16::from_be_bytes([b[0], b[1]])),
            None => Err(bad("numeric", raw)),
        }
    };
    let ndigits = word(0)? as usize;
    let weight = word(1)? as i16 as i32;
    let sign = word(2)?;
    let dscale = word(3)? as usize;
    match sign {
        0xC000 => return Ok("NaN".into()),
        0xD000 => return Ok("Infinity".into()),
        0xF000 => return Ok("-Infinity".into()),
        _ => {}
    }
    let digit = |k: i32| -> Result<u16, Error> {
        if k >= 0 && (k as usize) < ndigits {
            word(4 + k as usize)
        } else {
            Ok(0)
        }
    };
    let mut s = String::new();
    if sign == 0x4000 {
        s.push('-');
    }
    if weight < 0 {
        s.push('0');
    } else {
        for k in 0..=weight {
            let d = digit(k)?;
            if k == 0 {
                s.push_str(&d.to_string());
            } else {
                s.push_str(&format!("{d:04}"));
            }
        }
    }
    if dscale > 0 {
        s.push('.');
        let mut frac = String::new();
        let mut k = weight + 1;
        while frac.len() < dscale {
            frac.push_str(&format!("{:04}", digit(k)?));
            k += 1;
        }
        frac.truncate(dscale);
        s.push_str(&frac);
    }
    Ok(s)
}

/// A text-format value of type `oid` as a cell: integers and booleans as
/// integers, floats as reals, bytea as its bytes, the rest as text.
pub(crate) fn text_cell(oid: u32, raw: &[u8]) -> Result<super::Cell, Error> {
    use super::Cell;
    let s = std::str::from_utf8(raw).map_err(|_| bad("non-UTF-8 text", raw))?;
    let num = |what| Error::Protocol(format!("'{s}' is not a {what}"));
    Ok(match oid {
        INT2 | INT4 | INT8 => Cell::Int(s.parse().map_err(|_| num("integer"))?),
        FLOAT4 | FLOAT8 => Cell::Real(s.parse().map_err(|_| num("number"))?),
        BOOL => Cell::Int((s == "t").into()),
        BYTEA => Cell::Bytes(bytea_text(s).ok_or_else(|| num("bytea"))?),
        _ => Cell::Text(s.to_string()),
    })
}

/// The bytes of a bytea in its hex text form (`\x0102...`).
fn bytea_text(s: &str) -> Option<Vec<u8>> {
    let hex = s.strip_prefix("\\x")?.as_bytes();
    if hex.len() % 2 != 0 {
        return None;
    }
    let nibble = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    hex.chunks_exact(2)
        .map(|p| Some(nibble(p[0])? << 4 | nibble(p[1])?))
        .collect()
}

/// The hex text form of bytes, for a bytea parameter.
pub(crate) fn bytea_hex(b: &[u8], out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.extend_from_slice(b"\\x");
    for &x in b {
        out.push(HEX[(x >> 4) as usize]);
        out.push(HEX[(x & 15) as usize]);
    }
}

#[cfg(test)]
mod tests {
    use super::super::Cell;
    use super::*;

    fn words(w: &[u16]) -> Vec<u8> {
        w.iter().flat_map(|x| x.to_be_bytes()).collect()
    }

    #[test]
    fn numeric_binary_to_text() {
        // 12345.678 = digits [1, 2345, 6780], weight 1, scale 3.
        assert_eq!(
            numeric_text(&words(&[3, 1, 0, 3, 1, 2345, 6780])).unwrap(),
            "12345.678"
        );
        // -0.05 = digits [500], weight -1, scale 2.
        assert_eq!(
            numeric_text(&words(&[1, 0xFFFF, 0x4000, 2, 500])).unwrap(),
            "-0.05"
        );
        // 300000.00 = digits [30], weight 1, scale 2.
        assert_eq!(
            numeric_text(&words(&[1, 1, 0, 2, 30])).unwrap(),
            "300000.00"
        );
        assert_eq!(numeric_text(&words(&[0, 0, 0xC000, 0])).unwrap(), "NaN");
        assert!(numeric_text(&words(&[3, 2, 0, 0, 1])).is_err());
    }

    #[test]
    fn binary_values() {
        assert_eq!(
            binary_value(INT4, &7i32.to_be_bytes()).unwrap(),
            Value::Int(7)
        );
        assert_eq!(
            binary_value(INT2, &(-2i16).to_be_bytes()).unwrap(),
            Value::Int(-2)
        );
        assert_eq!(
            binary_value(INT8, &(1i64 << 40).to_be_bytes()).unwrap(),
            Value::Int(1 << 40)
        );
        assert_eq!(binary_value(BOOL, &[1]).unwrap(), Value::Int(1));
        assert_eq!(
            binary_value(FLOAT8, &1.5f64.to_be_bytes()).unwrap(),
            Value::Text("1.5".into())
        );
        assert_eq!(binary_value(25, b"abc").unwrap(), Value::Text("abc".into()));
        assert!(binary_value(INT4, &[0, 1]).is_err());
        assert_eq!(text_value(b"-12"), Value::Int(-12));
        assert_eq!(text_value(b"1.50"), Value::Text("1.50".into()));
    }

    #[test]
    fn text_cells() {
        assert_eq!(text_cell(INT8, b"42").unwrap(), Cell::Int(42));
        assert_eq!(text_cell(FLOAT8, b"0.25").unwrap(), Cell::Real(0.25));
        assert!(matches!(text_cell(FLOAT8, b"NaN").unwrap(), Cell::Real(f) if f.is_nan()));
        assert_eq!(
            text_cell(FLOAT8, b"-Infinity").unwrap(),
            Cell::Real(f64::NEG_INFINITY)
        );
        assert_eq!(text_cell(BOOL, b"f").unwrap(), Cell::Int(0));
        assert_eq!(
            text_cell(BYTEA, b"\\x00ff10").unwrap(),
            Cell::Bytes(vec![0, 255, 16])
        );
        assert_eq!(text_cell(25, b"hi").unwrap(), Cell::Text("hi".into()));
        assert!(text_cell(INT4, b"x").is_err());
        let mut out = Vec::new();
        bytea_hex(&[0, 255, 16], &mut out);
        assert_eq!(out, b"\\x00ff10");
    }
}
