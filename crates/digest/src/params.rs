//! The parameters of PostgreSQL's extended protocol as its log gives
//! them (`DETAIL:  parameters: $1 = '5', $2 = NULL`), and a statement with
//! its `$n` placeholders replaced by them: the replay runs it so, and the
//! digest's ready-made EXPLAIN shows it so.

/// The values of PostgreSQL's `parameters: $1 = '5', $2 = NULL` (each a
/// quoted literal as logged, or `NULL`), by number; None when the text is
/// not such a list (a truncated value, say).
pub fn parse_params(p: &str) -> Option<Vec<Option<String>>> {
    let mut out: Vec<Option<String>> = Vec::new();
    let b = p.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'$' {
            return None;
        }
        i += 1;
        let d = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        let n: usize = p[d..i].parse().ok()?;
        i += p[i..].strip_prefix(" = ").map(|_| 3)?;
        let value = if p[i..].starts_with("NULL") {
            i += 4;
            "NULL".to_string()
        } else if b.get(i) == Some(&b'\'') {
            let start = i;
            i += 1;
            loop {
                match b.get(i) {
                    None => return None,
                    Some(b'\'') if b.get(i + 1) == Some(&b'\'') => i += 2,
                    Some(b'\'') => {
                        i += 1;
                        break;
                    }
                    Some(_) => i += 1,
                }
            }
            p[start..i].to_string()
        } else {
            return None;
        };
        if n == 0 {
            return None;
        }
        if out.len() < n {
            out.resize(n, None);
        }
        out[n - 1] = Some(value);
        if let Some(rest) = p[i..].strip_prefix(", ") {
            i = p.len() - rest.len();
        } else if i != p.len() {
            return None;
        }
    }
    Some(out)
}

/// `sql` with its `$n` placeholders (outside strings, quoted names, dollar
/// quotes and comments) replaced by the logged parameters (`params`, as
/// PostgreSQL's `DETAIL:  parameters:` gives them); None when they cannot
/// be read or one is missing.
pub fn fill_params(sql: &str, params: &str) -> Option<String> {
    fill(sql, &parse_params(params)?, false)
}

/// `sql` with the placeholders that have a value in `values` replaced;
/// one without a value makes it None, or with `keep_missing` stays `$n`.
pub fn fill(sql: &str, values: &[Option<String>], keep_missing: bool) -> Option<String> {
    let b = sql.as_bytes();
    let mut out = String::with_capacity(sql.len() + 16 * values.len());
    let mut i = 0;
    let mut copied = 0;
    while i < b.len() {
        match b[i] {
            b'\'' | b'"' => {
                let q = b[i];
                i += 1;
                while i < b.len() {
                    if b[i] == q {
                        if b.get(i + 1) == Some(&q) {
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    i += 1;
                }
                i += 1;
            }
            b'-' if b.get(i + 1) == Some(&b'-') => {
                i = sql[i..].find('\n').map_or(b.len(), |e| i + e + 1);
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = sql[i + 2..].find("*/").map_or(b.len(), |e| i + 2 + e + 2);
            }
            b'$' if b.get(i + 1).is_some_and(u8::is_ascii_digit)
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) =>
            {
                let d = i + 1;
                let mut j = d;
                while j < b.len() && b[j].is_ascii_digit() {
                    j += 1;
                }
                let n: usize = sql[d..j].parse().ok()?;
                match n
                    .checked_sub(1)
                    .and_then(|k| values.get(k))
                    .and_then(|v| v.as_deref())
                {
                    Some(v) => {
                        out.push_str(&sql[copied..i]);
                        out.push_str(v);
                        copied = j;
                    }
                    None if keep_missing => {}
                    None => return None,
                }
                i = j;
            }
            b'$' if i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_') => {
                // A dollar quote: `$tag$ ... $tag$`.
                let t = sql[i + 1..].find('$').map(|e| i + 1 + e);
                match t {
                    Some(t)
                        if sql[i + 1..t]
                            .bytes()
                            .all(|c| c.is_ascii_alphanumeric() || c == b'_') =>
                    {
                        let tag = &sql[i..=t];
                        i = sql[t + 1..]
                            .find(tag)
                            .map_or(b.len(), |e| t + 1 + e + tag.len());
                    }
                    _ => i += 1,
                }
            }
            _ => i += 1,
        }
    }
    out.push_str(&sql[copied..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_filled_in() {
        let f = |sql: &str, p: &str| fill_params(sql, p);
        assert_eq!(
            f("SELECT c FROM t WHERE id=$1", "$1 = '5'").as_deref(),
            Some("SELECT c FROM t WHERE id='5'")
        );
        assert_eq!(
            f(
                "UPDATE t SET c = $2, d = '$1', e = $x$ $1 $x$ WHERE id = $1 -- $2\n AND f = $10",
                "$1 = '3', $2 = 'it''s, $1', $10 = NULL"
            )
            .as_deref(),
            Some(
                "UPDATE t SET c = 'it''s, $1', d = '$1', e = $x$ $1 $x$ WHERE id = '3' -- $2\n AND f = NULL"
            )
        );
        // A missing or unreadable parameter: none, or kept as `$n`.
        assert_eq!(f("SELECT $2", "$1 = '1'"), None);
        assert_eq!(f("SELECT $1", "$1 = '1..."), None);
        assert_eq!(f("SELECT 1", ""), Some("SELECT 1".into()));
        let v = parse_params("$1 = '1'").unwrap();
        assert_eq!(
            fill("SELECT $1, $2", &v, true).as_deref(),
            Some("SELECT '1', $2")
        );
    }
}
