//! Values of result rows: into [`Value`]s for `Connection::fetch`
//! (integers and bytea read in binary format, every other type as the text
//! PostgreSQL prints), into typed cells for the results store.

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

fn bad(what: &str, raw: &[u8]) -> Error {
    Error::Protocol(format!("a {what} value of {} bytes", raw.len()))
}

fn be<const N: usize>(what: &str, raw: &[u8]) -> Result<[u8; N], Error> {
    raw.try_into().map_err(|_| bad(what, raw))
}

/// Whether a result column of type `oid` is asked for in binary format:
/// integers (read without parsing text) and bytea (its bytes as they
/// are). Every other type comes as text, exactly as PostgreSQL prints it
/// (dates, numerics, arrays, uuids, ...): the form psql shows.
#[inline]
pub(crate) fn binary_result(oid: u32) -> bool {
    matches!(oid, INT2 | INT4 | INT8 | BYTEA)
}

/// A value of a column of type `oid`, in the format [`binary_result`]
/// chose for it.
#[inline]
pub(crate) fn result_value(oid: u32, raw: &[u8]) -> Result<Value, Error> {
    Ok(match oid {
        INT2 => Value::Int(i16::from_be_bytes(be("int2", raw)?).into()),
        INT4 => Value::Int(i32::from_be_bytes(be("int4", raw)?).into()),
        INT8 => Value::Int(i64::from_be_bytes(be("int8", raw)?)),
        BYTEA => Value::Bytes(raw.into()),
        _ => text(raw),
    })
}

/// A text-format value of a column of type `oid` (the simple query
/// protocol): integers as such, bytea as its bytes, the rest as text.
pub(crate) fn text_value(oid: u32, raw: &[u8]) -> Value {
    match oid {
        INT2 | INT4 | INT8 => match std::str::from_utf8(raw).ok().and_then(|s| s.parse().ok()) {
            Some(i) => Value::Int(i),
            None => text(raw),
        },
        BYTEA => match bytea_text(raw) {
            Some(b) => Value::Bytes(b.into_boxed_slice()),
            None => text(raw),
        },
        _ => text(raw),
    }
}

/// Text from the server (in the client encoding, UTF8).
fn text(raw: &[u8]) -> Value {
    Value::Text(crate::types::text_of(raw))
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
        BYTEA => Cell::Bytes(bytea_text(raw).ok_or_else(|| num("bytea"))?),
        _ => Cell::Text(s.to_string()),
    })
}

/// The bytes of a bytea in its text form: hex (`\x0102...`, the default
/// bytea_output) or escape (printable bytes as they are, `\\` for a
/// backslash, `\ooo` in octal for the others).
fn bytea_text(s: &[u8]) -> Option<Vec<u8>> {
    if let Some(hex) = s.strip_prefix(b"\\x") {
        if hex.len() % 2 != 0 {
            return None;
        }
        let nibble = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
        return hex
            .chunks_exact(2)
            .map(|p| Some(nibble(p[0])? << 4 | nibble(p[1])?))
            .collect();
    }
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i] != b'\\' {
            out.push(s[i]);
            i += 1;
        } else if s.get(i + 1) == Some(&b'\\') {
            out.push(b'\\');
            i += 2;
        } else {
            let o = s.get(i + 1..i + 4)?;
            if o[0] > b'3' || !o.iter().all(|d| (b'0'..=b'7').contains(d)) {
                return None;
            }
            out.push(o.iter().fold(0u8, |v, d| (v << 3) | (d - b'0')));
            i += 4;
        }
    }
    Some(out)
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

    #[test]
    fn result_values() {
        assert!(binary_result(INT4) && binary_result(BYTEA));
        assert!(!binary_result(BOOL) && !binary_result(FLOAT8) && !binary_result(1700));
        assert_eq!(
            result_value(INT4, &7i32.to_be_bytes()).unwrap(),
            Value::Int(7)
        );
        assert_eq!(
            result_value(INT2, &(-2i16).to_be_bytes()).unwrap(),
            Value::Int(-2)
        );
        assert_eq!(
            result_value(INT8, &(1i64 << 40).to_be_bytes()).unwrap(),
            Value::Int(1 << 40)
        );
        assert_eq!(
            result_value(BYTEA, &[0, 0xff]).unwrap(),
            Value::Bytes([0, 0xff].into())
        );
        assert_eq!(
            result_value(1082, b"2024-02-29").unwrap(),
            Value::Text("2024-02-29".into())
        );
        assert!(result_value(INT4, &[0, 1]).is_err());
    }

    #[test]
    fn text_values() {
        assert_eq!(text_value(INT8, b"-12"), Value::Int(-12));
        assert_eq!(text_value(1700, b"1.50"), Value::Text("1.50".into()));
        // Text that reads as a number stays text.
        assert_eq!(text_value(25, b"007"), Value::Text("007".into()));
        assert_eq!(text_value(BOOL, b"t"), Value::Text("t".into()));
        assert_eq!(
            text_value(BYTEA, br"\x00ff"),
            Value::Bytes([0, 0xff].into())
        );
        assert_eq!(text_value(BYTEA, br"\x"), Value::Bytes([].into()));
        // bytea_output = escape.
        assert_eq!(
            text_value(BYTEA, br"a\\\000\377"),
            Value::Bytes([b'a', b'\\', 0, 0xff].into())
        );
        assert_eq!(text_value(BYTEA, br"\400"), Value::Text(r"\400".into()));
        assert_eq!(text_value(BYTEA, br"\x0"), Value::Text(r"\x0".into()));
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
