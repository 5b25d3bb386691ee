//! Values of result rows, for callers that read what a query returned
//! (`Connection::fetch`): the binary protocol's typed values of prepared
//! statements, and the text protocol's strings, typed by their columns
//! (integers as integers, binary strings as bytes, the rest as text).

use super::Error;
use super::packet::Cursor;
use crate::types::Value;

/// A column's type and flags, from its definition packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ColumnType {
    pub kind: u8,
    pub unsigned: bool,
    /// Its values are bytes, not text: a binary string (BINARY,
    /// VARBINARY, BLOB, or an expression of the binary character set),
    /// a BIT or a GEOMETRY.
    pub binary: bool,
}

const UNSIGNED_FLAG: u16 = 0x20;
/// The character set number of binary strings (and of numbers, dates).
const BINARY_CHARSET: u16 = 63;
const TYPE_VARCHAR: u8 = 0x0f;
const TYPE_BIT: u8 = 0x10;
const TYPE_TINY_BLOB: u8 = 0xf9;
const TYPE_STRING: u8 = 0xfe;
const TYPE_GEOMETRY: u8 = 0xff;

/// The type of a column from its definition packet (protocol 4.1). Read
/// for every column of every text result: the usual packet, whose names
/// are all shorter than 251 bytes, is read without the cursor.
pub(crate) fn column_type(def: &[u8]) -> Result<ColumnType, Error> {
    let mut at = 0;
    // Catalog, schema, table, org table, name, org name, each with a
    // one-byte length; then the length of the fixed fields, 0x0c.
    for _ in 0..6 {
        match def.get(at) {
            Some(&n) if n < 0xFB => at += 1 + n as usize,
            _ => return column_type_by_cursor(def),
        }
    }
    match def.get(at..at + 10) {
        Some(f) if f[0] == 0x0c => Ok(column_type_of(
            u16::from_le_bytes([f[1], f[2]]),
            f[7],
            u16::from_le_bytes([f[8], f[9]]),
        )),
        _ => column_type_by_cursor(def),
    }
}

/// [`column_type`] for any packet, names of any length.
fn column_type_by_cursor(def: &[u8]) -> Result<ColumnType, Error> {
    let mut c = Cursor::new(def);
    for _ in 0..6 {
        c.lenenc_bytes()?; // catalog, schema, table, org table, name, org name
    }
    c.lenenc_int()?; // length of the fixed fields (0x0c)
    let charset = c.u16()?;
    c.u32()?; // column length
    let kind = c.u8()?;
    let flags = c.u16()?;
    Ok(column_type_of(charset, kind, flags))
}

fn column_type_of(charset: u16, kind: u8, flags: u16) -> ColumnType {
    let string = matches!(kind, TYPE_VARCHAR | TYPE_TINY_BLOB..=TYPE_STRING);
    ColumnType {
        kind,
        unsigned: flags & UNSIGNED_FLAG != 0,
        binary: matches!(kind, TYPE_BIT | TYPE_GEOMETRY) || (string && charset == BINARY_CHARSET),
    }
}

/// A column of integers (TINYINT to BIGINT, MEDIUMINT, YEAR).
fn is_integer(kind: u8) -> bool {
    matches!(kind, 0x01 | 0x02 | 0x03 | 0x08 | 0x09 | 0x0d)
}

fn int(b: &[u8], unsigned: bool) -> Value {
    let mut x = [0u8; 8];
    x[..b.len()].copy_from_slice(b);
    let raw = u64::from_le_bytes(x);
    let bits = 8 * b.len() as u32;
    let v = if unsigned || bits == 64 {
        raw as i64
    } else {
        // Sign-extend a narrower integer.
        ((raw << (64 - bits)) as i64) >> (64 - bits)
    };
    if unsigned && bits == 64 && v < 0 {
        Value::Text(raw.to_string())
    } else {
        Value::Int(v)
    }
}

/// Appends the values of one binary-protocol row (header 0x00, NULL
/// bitmap, values) to `out`.
pub(crate) fn binary_row(
    row: &[u8],
    types: &[ColumnType],
    out: &mut Vec<Option<Value>>,
) -> Result<(), Error> {
    let mut c = Cursor::new(row);
    c.skip(1)?;
    let nulls = c.take((types.len() + 7 + 2) / 8)?;
    for (i, t) in types.iter().enumerate() {
        let bit = i + 2;
        if nulls[bit / 8] & (1 << (bit % 8)) != 0 {
            out.push(None);
            continue;
        }
        let v = match t.kind {
            0x01 => int(c.take(1)?, t.unsigned),
            0x02 | 0x0d => int(c.take(2)?, t.unsigned),
            0x03 | 0x09 => int(c.take(4)?, t.unsigned),
            0x08 => int(c.take(8)?, t.unsigned),
            0x04 => {
                let b = c.take(4)?;
                Value::Text(f32::from_le_bytes([b[0], b[1], b[2], b[3]]).to_string())
            }
            0x05 => {
                let b = c.take(8)?;
                let mut x = [0u8; 8];
                x.copy_from_slice(b);
                Value::Text(f64::from_le_bytes(x).to_string())
            }
            0x07 | 0x0a | 0x0c => {
                let n = c.u8()? as usize;
                Value::Text(date_time(c.take(n)?)?)
            }
            0x0b => {
                let n = c.u8()? as usize;
                Value::Text(time(c.take(n)?)?)
            }
            // Decimals, strings, blobs, JSON, enums, bits: length-encoded.
            _ => string(c.lenenc_bytes()?, t.binary),
        };
        out.push(Some(v));
    }
    Ok(())
}

/// A length-encoded value of a string column: its bytes when the column
/// is binary, else its text.
#[inline]
fn string(b: &[u8], binary: bool) -> Value {
    if binary {
        Value::Bytes(b.into())
    } else {
        Value::Text(crate::types::text_of(b))
    }
}

/// The rows of a result as the server sent them (binary or text protocol),
/// decoded one row at a time when asked: a result whose values nobody
/// reads costs a copy of its packets.
#[derive(Debug, Default)]
pub(crate) struct RawRows {
    data: Vec<u8>,
    /// Where each row's packet ends in `data`.
    ends: Vec<usize>,
    types: Vec<ColumnType>,
    binary: bool,
}

impl RawRows {
    pub(crate) fn clear(&mut self) {
        self.data.clear();
        self.ends.clear();
        self.types.clear();
    }

    pub(crate) fn set_columns(&mut self, types: &[ColumnType], binary: bool) {
        self.types.clear();
        self.types.extend_from_slice(types);
        self.binary = binary;
    }

    pub(crate) fn push(&mut self, row: &[u8]) {
        self.data.extend_from_slice(row);
        self.ends.push(self.data.len());
    }

    pub(crate) fn rows(&self) -> usize {
        self.ends.len()
    }

    pub(crate) fn width(&self) -> usize {
        self.types.len()
    }

    /// Appends the values of row `row` to `out`.
    pub(crate) fn decode(&self, row: usize, out: &mut Vec<Option<Value>>) -> Result<(), Error> {
        let Some(&end) = self.ends.get(row) else {
            return Err(Error::Protocol(format!("no row {row}")));
        };
        let start = if row == 0 { 0 } else { self.ends[row - 1] };
        let p = &self.data[start..end];
        if self.binary {
            binary_row(p, &self.types, out)
        } else {
            text_row(p, &self.types, out)
        }
    }
}

/// Appends the values of one text-protocol row, of columns of these
/// types: integers as such (but for a BIGINT UNSIGNED past the signed
/// range), binary strings as bytes, the rest as the server wrote them.
pub(crate) fn text_row(
    row: &[u8],
    types: &[ColumnType],
    out: &mut Vec<Option<Value>>,
) -> Result<(), Error> {
    let mut c = Cursor::new(row);
    for t in types {
        let Some(b) = c.lenenc_bytes_or_null()? else {
            out.push(None);
            continue;
        };
        let int = if is_integer(t.kind) {
            parse_i64(b)
        } else {
            None
        };
        out.push(Some(match int {
            Some(i) => Value::Int(i),
            None => string(b, t.binary),
        }));
    }
    Ok(())
}

/// The integer a text-protocol integer column holds; None past the range
/// of i64 (a large BIGINT UNSIGNED) or for anything but digits.
fn parse_i64(b: &[u8]) -> Option<i64> {
    let (negative, digits) = match b.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, b),
    };
    if digits.is_empty() {
        return None;
    }
    // Accumulated negative: i64::MIN has no positive counterpart.
    let mut v: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_sub(i64::from(d - b'0'))?;
    }
    if negative { Some(v) } else { v.checked_neg() }
}

/// DATE / DATETIME / TIMESTAMP: 0, 4, 7 or 11 bytes.
fn date_time(b: &[u8]) -> Result<String, Error> {
    let u16_at = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
    Ok(match b.len() {
        0 => "0000-00-00 00:00:00".into(),
        4 => format!("{:04}-{:02}-{:02}", u16_at(0), b[2], b[3]),
        7 | 11 => {
            let mut s = format!(
                "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
                u16_at(0),
                b[2],
                b[3],
                b[4],
                b[5],
                b[6]
            );
            if b.len() == 11 {
                let us = u32::from_le_bytes([b[7], b[8], b[9], b[10]]);
                s.push_str(&format!(".{us:06}"));
            }
            s
        }
        n => return Err(Error::Protocol(format!("a date of {n} bytes"))),
    })
}

/// TIME: 0, 8 or 12 bytes.
fn time(b: &[u8]) -> Result<String, Error> {
    Ok(match b.len() {
        0 => "00:00:00".into(),
        8 | 12 => {
            let days = u32::from_le_bytes([b[1], b[2], b[3], b[4]]);
            let hours = days * 24 + b[5] as u32;
            let mut s = format!(
                "{}{:02}:{:02}:{:02}",
                if b[0] == 1 { "-" } else { "" },
                hours,
                b[6],
                b[7]
            );
            if b.len() == 12 {
                let us = u32::from_le_bytes([b[8], b[9], b[10], b[11]]);
                s.push_str(&format!(".{us:06}"));
            }
            s
        }
        n => return Err(Error::Protocol(format!("a time of {n} bytes"))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(kind: u8) -> ColumnType {
        ColumnType {
            kind,
            unsigned: false,
            binary: false,
        }
    }

    fn bin(kind: u8) -> ColumnType {
        ColumnType {
            binary: true,
            ..t(kind)
        }
    }

    /// A column definition packet of this type, character set and flags.
    fn def(kind: u8, charset: u16, flags: u16) -> Vec<u8> {
        let mut d = Vec::new();
        for name in ["def", "db", "t", "t", "c", "c"] {
            super::super::packet::put_lenenc_bytes(&mut d, name.as_bytes());
        }
        d.push(0x0c);
        d.extend_from_slice(&charset.to_le_bytes());
        d.extend_from_slice(&255u32.to_le_bytes());
        d.push(kind);
        d.extend_from_slice(&flags.to_le_bytes());
        d.extend_from_slice(&[0, 0, 0]);
        d
    }

    #[test]
    fn binary_columns_by_type_and_character_set() {
        let ty = |kind, charset| column_type(&def(kind, charset, 0)).unwrap();
        // VARBINARY, BLOB, BINARY: binary strings.
        for kind in [0xfd, 0xfc, 0xfe, 0x0f] {
            assert!(ty(kind, 63).binary, "{kind:#x}");
            assert!(!ty(kind, 45).binary, "{kind:#x}");
        }
        // BIT is bytes whatever the character set; numbers and dates are
        // not, though their character set is binary too.
        assert!(ty(0x10, 63).binary);
        for kind in [0x03, 0x08, 0xf6, 0x0c, 0x0a] {
            assert!(!ty(kind, 63).binary, "{kind:#x}");
        }
        let u = column_type(&def(0x08, 63, 0x20)).unwrap();
        assert!(u.unsigned && !u.binary);
    }

    #[test]
    fn parses_integers_of_text_rows() {
        for (text, want) in [
            ("0", Some(0)),
            ("-42", Some(-42)),
            ("9223372036854775807", Some(i64::MAX)),
            ("-9223372036854775808", Some(i64::MIN)),
            ("9223372036854775808", None),
            ("18446744073709551615", None),
            ("", None),
            ("-", None),
            ("1.5", None),
            ("+1", None),
        ] {
            assert_eq!(parse_i64(text.as_bytes()), want, "{text}");
        }
    }

    #[test]
    fn column_types_of_long_names_too() {
        let mut d = Vec::new();
        for name in ["def", "db", "t", "t"] {
            super::super::packet::put_lenenc_bytes(&mut d, name.as_bytes());
        }
        let long = "c".repeat(300);
        for _ in 0..2 {
            super::super::packet::put_lenenc_bytes(&mut d, long.as_bytes());
        }
        d.push(0x0c);
        d.extend_from_slice(&63u16.to_le_bytes());
        d.extend_from_slice(&255u32.to_le_bytes());
        d.extend_from_slice(&[0xfc, 0x20, 0]);
        let t = column_type(&d).unwrap();
        assert_eq!((t.kind, t.unsigned, t.binary), (0xfc, true, true));
        assert_eq!(column_type(&def(0xfc, 63, 0x20)).unwrap(), t);
        // Truncated packets are errors, not panics.
        for n in 0..d.len() - 2 {
            assert!(column_type(&d[..n]).is_err(), "{n}");
        }
        let short = def(0x03, 63, 0);
        for n in 0..short.len() - 3 {
            assert!(column_type(&short[..n]).is_err(), "{n}");
        }
    }

    #[test]
    fn text_rows_typed_by_their_columns() {
        let mut row = Vec::new();
        for v in [
            &b"-42"[..],
            b"18446744073709551615",
            b"007",
            &[0, 0xff, b'\n'],
        ] {
            super::super::packet::put_lenenc_bytes(&mut row, v);
        }
        row.push(0xFB); // NULL
        let types = [t(0x08), t(0x08), t(0xfd), bin(0xfc), t(0x03)];
        let mut out = Vec::new();
        text_row(&row, &types, &mut out).unwrap();
        assert_eq!(
            out,
            vec![
                Some(Value::Int(-42)),
                Some(Value::Text("18446744073709551615".into())),
                Some(Value::Text("007".into())),
                Some(Value::Bytes([0, 0xff, b'\n'].into())),
                None,
            ]
        );
        assert!(text_row(&row[..3], &types, &mut out).is_err());
    }

    #[test]
    fn a_binary_row_with_nulls_ints_text_and_dates() {
        // 6 columns: BIGINT 7, INT -2, NULL, DECIMAL "12.50", DATETIME, BLOB.
        let mut row = vec![0x00];
        // NULL bitmap: (5 + 9) / 8 = 1 byte; column 2 -> bit 4.
        row.push(1 << 4);
        row.extend_from_slice(&7i64.to_le_bytes());
        row.extend_from_slice(&(-2i32).to_le_bytes());
        row.push(5);
        row.extend_from_slice(b"12.50");
        row.extend_from_slice(&[7, 0xE9, 0x07, 11, 23, 10, 5, 9]);
        row.extend_from_slice(&[3, 0, 0x80, 0xFF]);
        let types = [t(0x08), t(0x03), t(0x0f), t(0xf6), t(0x0c), bin(0xfc)];
        let mut out = Vec::new();
        binary_row(&row, &types, &mut out).unwrap();
        assert_eq!(
            out,
            vec![
                Some(Value::Int(7)),
                Some(Value::Int(-2)),
                None,
                Some(Value::Text("12.50".into())),
                Some(Value::Text("2025-11-23 10:05:09".into())),
                Some(Value::Bytes([0, 0x80, 0xFF].into())),
            ]
        );
    }

    #[test]
    fn unsigned_and_short_ints() {
        let mut out = Vec::new();
        let row = [0x00, 0x00, 0xFF, 0xFF, 0xFF];
        let types = [
            ColumnType {
                kind: 0x02,
                unsigned: true,
                binary: false,
            },
            t(0x01),
        ];
        binary_row(&row, &types, &mut out).unwrap();
        assert_eq!(out, vec![Some(Value::Int(65535)), Some(Value::Int(-1))]);
    }

    #[test]
    fn a_truncated_row_is_an_error_not_a_panic() {
        let mut out = Vec::new();
        assert!(binary_row(&[0x00, 0x00, 1, 2], &[t(0x08)], &mut out).is_err());
    }
}
