//! Query fingerprints and query IDs, as pt-query-digest 3.x makes them
//! (percona-toolkit's `QueryRewriter::fingerprint` and `make_checksum`).
//!
//! The rules are applied in pt-query-digest's order, each as one pass over
//! the bytes with the same matching semantics as its regular expression
//! (leftmost match, lazy or greedy as there), so that the fingerprints, and
//! with them the query IDs, are byte for byte the same:
//!
//! 1. a mysqldump `SELECT /*!40001 SQL_NO_CACHE */ * FROM \`` is `mysqldump`;
//!    a query carrying a `/*db.tbl:N/N*/` marker is `percona-toolkit`;
//!    `administrator command: ...` stays as it is; `CALL name(` is
//!    `call name` in lower case;
//! 2. a multi-row `INSERT`/`REPLACE ... VALUES (...), (...)` is cut after its
//!    first row;
//! 3. comments are removed: `/* ... */` (not `/*! ... */`), then `-- ...`
//!    and `# ...` to the end of the line (when no quote follows on it);
//! 4. `use db` alone is `use ?`;
//! 5. `\"` and `\'` are dropped, then `"..."` and `'...'` become `?`;
//! 6. the words `true` and `false` become `?`;
//! 7. numbers: a run starting with a digit, `+` or `-` and going on with
//!    `0-9a-f.xb+-` becomes `?` (digits inside names too, as in
//!    pt-query-digest without `--preserve-embedded-numbers`); then one of
//!    `x b . + -` before a `?` is absorbed into it;
//! 8. leading white space and one trailing newline go, runs of white space
//!    become one space, and everything is lower case (ASCII);
//! 9. the word `null` becomes `?`;
//! 10. `in (...)`, `value(s) (...), (...)` lists of only `?`, commas and
//!     spaces become `in(?+)`, `values(?+)`;
//! 11. `select X union [all] select X ...` repeated arms become
//!     `select X /*repeat union [all]*/`;
//! 12. the first `limit ?`, `limit ?, ?`, `limit ? offset ?` is `limit ?`;
//! 13. after the first `order by `, each ` asc` is dropped.
//!
//! The query ID is the MD5 of the fingerprint in 32 upper-case hex digits
//! (pt-query-digest 3.0.11 and later); older versions printed its last 16
//! digits, which [`id_matches`] accepts too.

use md5::{Digest, Md5};

/// The fingerprint of one query.
pub fn fingerprint(query: &str) -> String {
    let out = fingerprint_bytes(query.as_bytes());
    match String::from_utf8(out) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

/// The query ID of a fingerprint: MD5, 32 upper-case hex digits.
pub fn query_id(fingerprint: &str) -> String {
    query_id_bytes(fingerprint.as_bytes())
}

/// The query ID of a fingerprint's bytes (a log need not be UTF-8).
pub fn query_id_bytes(fingerprint: &[u8]) -> String {
    let digest = Md5::digest(fingerprint);
    let mut s = String::with_capacity(32);
    for b in digest.iter() {
        s.push(HEX[(b >> 4) as usize] as char);
        s.push(HEX[(b & 15) as usize] as char);
    }
    s
}

const HEX: &[u8; 16] = b"0123456789ABCDEF";

/// Whether a query ID a user gave (32 hex digits, or the 16 of
/// pt-query-digest before 3.0.11, which are the last 16 of the 32; with or
/// without `0x`, in either case) names the class with `id`.
pub fn id_matches(given: &str, id: &str) -> bool {
    let g = given.trim();
    let g = g
        .strip_prefix("0x")
        .or_else(|| g.strip_prefix("0X"))
        .unwrap_or(g);
    match g.len() {
        32 => g.eq_ignore_ascii_case(id),
        16 => id.len() == 32 && g.eq_ignore_ascii_case(&id[16..]),
        _ => false,
    }
}

/// Whether `given` has the form of a query ID ([`id_matches`]).
pub fn is_query_id(given: &str) -> bool {
    let g = given.trim();
    let g = g
        .strip_prefix("0x")
        .or_else(|| g.strip_prefix("0X"))
        .unwrap_or(g);
    (g.len() == 32 || g.len() == 16) && g.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Perl's `\s` (ASCII): space, \t, \n, \v, \f, \r.
#[inline]
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// Perl's `\w` on a byte string: ASCII letters, digits and `_`.
#[inline]
fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// `\b` before position `i` where `s[i]` is a word character.
#[inline]
fn word_start(s: &[u8], i: usize) -> bool {
    i == 0 || !is_word(s[i - 1])
}

#[inline]
fn word_end(s: &[u8], i: usize) -> bool {
    i >= s.len() || !is_word(s[i])
}

fn starts_with_ci(s: &[u8], at: usize, word: &[u8]) -> bool {
    s.len() >= at + word.len() && s[at..at + word.len()].eq_ignore_ascii_case(word)
}

fn find(s: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    if from > s.len() {
        return None;
    }
    crate::scan::find(&s[from..], needle).map(|p| p + from)
}

/// The fingerprint of a query as bytes.
pub fn fingerprint_bytes(q: &[u8]) -> Vec<u8> {
    if q.starts_with(b"SELECT /*!40001 SQL_NO_CACHE */ * FROM `") {
        return b"mysqldump".to_vec();
    }
    if has_toolkit_marker(q) {
        return b"percona-toolkit".to_vec();
    }
    if q.starts_with(b"administrator command: ") {
        return q.to_vec();
    }
    if let Some(call) = call_name(q) {
        return call;
    }
    let mut s: Vec<u8> = match first_insert_row(q) {
        Some(end) => q[..end].to_vec(),
        None => q.to_vec(),
    };
    s = strip_block_comments(&s);
    s = strip_line_comments(&s);
    if let Some(u) = use_db(&s) {
        return u;
    }
    s = drop_escaped_quotes(&s);
    s = quoted(&s, b'"');
    s = quoted(&s, b'\'');
    s = words_to_mark(&s, &[b"false", b"true"], true);
    s = numbers(&s);
    s = absorb_before_mark(&s);
    s = squeeze(&s);
    s = words_to_mark(&s, &[b"null"], false);
    s = collapse_lists(&s);
    s = collapse_unions(&s);
    s = limit(&s);
    order_by_asc(&mut s);
    s
}

/// The fingerprint of a PostgreSQL statement: pt-query-digest's rules, with
/// PostgreSQL's literals: `$1` placeholders, `'...'` (with `''` inside),
/// `E'...'` (with backslash escapes) and dollar-quoted `$tag$...$tag$`
/// strings become `?`; `::type` casts stay as written; double-quoted
/// identifiers stay (lowercased and with digits as `?` like every other
/// identifier); `CALL`, `use` and the MySQL special cases do not apply.
pub fn pg_fingerprint_bytes(q: &[u8]) -> Vec<u8> {
    let mut s: Vec<u8> = match first_insert_row(q) {
        Some(end) => q[..end].to_vec(),
        None => q.to_vec(),
    };
    s = strip_block_comments(&s);
    s = strip_line_comments(&s);
    s = pg_literals(&s);
    s = words_to_mark(&s, &[b"false", b"true"], true);
    s = numbers(&s);
    s = absorb_before_mark(&s);
    s = squeeze(&s);
    s = words_to_mark(&s, &[b"null"], false);
    s = collapse_lists(&s);
    s = collapse_unions(&s);
    s = limit(&s);
    order_by_asc(&mut s);
    // A comment that ended the statement leaves no space behind.
    while s.last() == Some(&b' ') {
        s.pop();
    }
    s
}

/// PostgreSQL's string literals and placeholders to `?`; double-quoted
/// identifiers copied as they are.
fn pg_literals(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        let b = s[i];
        let prev_word = i > 0 && is_word(s[i - 1]);
        if b == b'"' {
            let end = memchr::memchr(b'"', &s[i + 1..]).map_or(s.len(), |p| i + 1 + p + 1);
            out.extend_from_slice(&s[i..end]);
            i = end;
        } else if b == b'\''
            || (matches!(b, b'e' | b'E') && !prev_word && s.get(i + 1) == Some(&b'\''))
        {
            let escapes = b != b'\'';
            let mut j = if escapes { i + 2 } else { i + 1 };
            loop {
                match s.get(j) {
                    None => break,
                    Some(b'\\') if escapes => j += 2,
                    Some(b'\'') if s.get(j + 1) == Some(&b'\'') => j += 2,
                    Some(b'\'') => {
                        j += 1;
                        break;
                    }
                    Some(_) => j += 1,
                }
            }
            out.push(b'?');
            i = j.min(s.len());
        } else if b == b'$' && !prev_word {
            // `$1` or `$tag$...$tag$` (the tag may be empty).
            let mut j = i + 1;
            if s.get(j).is_some_and(u8::is_ascii_digit) {
                while s.get(j).is_some_and(u8::is_ascii_digit) {
                    j += 1;
                }
                out.push(b'?');
                i = j;
                continue;
            }
            while s.get(j).is_some_and(|&c| {
                is_word(c) && !c.is_ascii_digit() || c.is_ascii_digit() && j > i + 1
            }) {
                j += 1;
            }
            if s.get(j) == Some(&b'$') {
                let tag = &s[i..=j];
                match find(s, j + 1, tag) {
                    Some(end) => {
                        out.push(b'?');
                        i = end + tag.len();
                    }
                    None => {
                        out.extend_from_slice(&s[i..]);
                        i = s.len();
                    }
                }
            } else {
                out.push(b);
                i += 1;
            }
        } else {
            out.push(b);
            i += 1;
        }
    }
    out
}

/// `/\*\w+\.\w+:[0-9]/[0-9]\*/` anywhere.
fn has_toolkit_marker(q: &[u8]) -> bool {
    let mut from = 0;
    while let Some(p) = find(q, from, b"/*") {
        from = p + 1;
        let mut i = p + 2;
        let w1 = i;
        while i < q.len() && is_word(q[i]) {
            i += 1;
        }
        if i == w1 || q.get(i) != Some(&b'.') {
            continue;
        }
        i += 1;
        let w2 = i;
        while i < q.len() && is_word(q[i]) {
            i += 1;
        }
        // `\w+` then `:`: a word run that backtracks can only end before
        // the first non-word byte, which must be the colon.
        if i == w2 || q.get(i) != Some(&b':') {
            continue;
        }
        let rest = &q[i + 1..];
        if rest.len() >= 5
            && rest[0].is_ascii_digit()
            && rest[1] == b'/'
            && rest[2].is_ascii_digit()
            && rest[3] == b'*'
            && rest[4] == b'/'
        {
            return true;
        }
    }
    false
}

/// `\A\s*(call\s+\S+)\(`i: the lower-cased `call name` (the non-space run
/// up to its last `(`).
fn call_name(q: &[u8]) -> Option<Vec<u8>> {
    let mut i = 0;
    while i < q.len() && is_space(q[i]) {
        i += 1;
    }
    if !starts_with_ci(q, i, b"call") {
        return None;
    }
    let start = i;
    i += 4;
    let sp = i;
    while i < q.len() && is_space(q[i]) {
        i += 1;
    }
    if i == sp {
        return None;
    }
    let run = i;
    while i < q.len() && !is_space(q[i]) {
        i += 1;
    }
    // `\S+` keeps at least one byte before the `(`.
    if i <= run + 1 {
        return None;
    }
    let paren = q[run + 1..i].iter().rposition(|&b| b == b'(')? + run + 1;
    Some(q[start..paren].to_ascii_lowercase())
}

/// `\A((?:INSERT|REPLACE)(?: IGNORE)?\s+INTO.+?VALUES\s*\(.*?\))\s*,\s*\(`is:
/// where the first row of a multi-row insert ends.
fn first_insert_row(q: &[u8]) -> Option<usize> {
    let verb = if starts_with_ci(q, 0, b"INSERT") {
        6
    } else if starts_with_ci(q, 0, b"REPLACE") {
        7
    } else {
        return None;
    };
    let into_end = |mut i: usize| -> Option<usize> {
        let sp = i;
        while i < q.len() && is_space(q[i]) {
            i += 1;
        }
        (i > sp && starts_with_ci(q, i, b"INTO")).then_some(i + 4)
    };
    let after_into = (if starts_with_ci(q, verb, b" IGNORE") {
        into_end(verb + 7)
    } else {
        None
    })
    .or_else(|| into_end(verb))?;
    // `.+?VALUES`: each VALUES at least one byte after INTO, in order.
    let mut v = after_into + 1;
    while v + 6 <= q.len() {
        if starts_with_ci(q, v, b"VALUES") {
            let mut i = v + 6;
            while i < q.len() && is_space(q[i]) {
                i += 1;
            }
            if q.get(i) == Some(&b'(') {
                // `.*?\)` then `\s*,\s*\(`: each `)` in order.
                let mut c = i + 1;
                while let Some(p) = memchr::memchr(b')', &q[c..]).map(|p| p + c) {
                    let mut j = p + 1;
                    while j < q.len() && is_space(q[j]) {
                        j += 1;
                    }
                    if q.get(j) == Some(&b',') {
                        j += 1;
                        while j < q.len() && is_space(q[j]) {
                            j += 1;
                        }
                        if q.get(j) == Some(&b'(') {
                            return Some(p + 1);
                        }
                    }
                    c = p + 1;
                }
            }
        }
        v += 1;
    }
    None
}

/// `s#/\*[^!].*?\*/##sg`.
fn strip_block_comments(s: &[u8]) -> Vec<u8> {
    if crate::scan::find(s, b"/*").is_none() {
        return s.to_vec();
    }
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'/' && s.get(i + 1) == Some(&b'*') && s.get(i + 2).is_some_and(|&b| b != b'!') {
            if let Some(end) = find(s, i + 3, b"*/") {
                i = end + 2;
                continue;
            }
            // No `*/` after here: no later start can match either.
            out.extend_from_slice(&s[i..]);
            return out;
        }
        out.push(s[i]);
        i += 1;
    }
    out
}

/// `s/(?:--|#)[^'"\r\n]*(?=[\r\n]|\Z)//g`.
fn strip_line_comments(s: &[u8]) -> Vec<u8> {
    if !s.iter().any(|&b| b == b'#' || b == b'-') {
        return s.to_vec();
    }
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        let start = s[i] == b'#' || (s[i] == b'-' && s.get(i + 1) == Some(&b'-'));
        if start {
            let mut j = i + if s[i] == b'#' { 1 } else { 2 };
            while j < s.len() && !matches!(s[j], b'\'' | b'"' | b'\r' | b'\n') {
                j += 1;
            }
            if j >= s.len() || s[j] == b'\r' || s[j] == b'\n' {
                i = j;
                continue;
            }
            // A quote ends the run: every start before it fails as well.
            out.extend_from_slice(&s[i..j]);
            i = j;
            continue;
        }
        out.push(s[i]);
        i += 1;
    }
    out
}

/// `\Ause \S+\Z`i → `use ?`.
fn use_db(s: &[u8]) -> Option<Vec<u8>> {
    if !starts_with_ci(s, 0, b"use ") {
        return None;
    }
    let body = s.strip_suffix(b"\n").unwrap_or(s);
    let name = &body[4..];
    if name.is_empty() || name.iter().any(|&b| is_space(b)) {
        return None;
    }
    let mut out = b"use ?".to_vec();
    if body.len() < s.len() {
        out.push(b'\n');
    }
    Some(out)
}

/// `s/\\["']//g`.
fn drop_escaped_quotes(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'\\' && matches!(s.get(i + 1), Some(b'"' | b'\'')) {
            i += 2;
            continue;
        }
        out.push(s[i]);
        i += 1;
    }
    out
}

/// `s/Q.*?Q/?/sg` for the quote Q.
fn quoted(s: &[u8], q: u8) -> Vec<u8> {
    let Some(first) = memchr::memchr(q, s) else {
        return s.to_vec();
    };
    let mut out = Vec::with_capacity(s.len());
    out.extend_from_slice(&s[..first]);
    let mut i = first;
    while i < s.len() {
        if s[i] == q {
            match memchr::memchr(q, &s[i + 1..]) {
                Some(p) => {
                    out.push(b'?');
                    i = i + 1 + p + 1;
                    continue;
                }
                None => {
                    out.extend_from_slice(&s[i..]);
                    return out;
                }
            }
        }
        out.push(s[i]);
        i += 1;
    }
    out
}

/// `s/\bW\b/?/g` for each word W (case-insensitive or not).
fn words_to_mark(s: &[u8], words: &[&[u8]], ci: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    'outer: while i < s.len() {
        if is_word(s[i]) && word_start(s, i) {
            for w in words {
                let hit = if ci {
                    starts_with_ci(s, i, w)
                } else {
                    s[i..].starts_with(w)
                };
                if hit && word_end(s, i + w.len()) {
                    out.push(b'?');
                    i += w.len();
                    continue 'outer;
                }
            }
        }
        out.push(s[i]);
        i += 1;
    }
    out
}

/// `s/[0-9+-][0-9a-f.xb+-]*/?/g`.
fn numbers(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        let b = s[i];
        if b.is_ascii_digit() || b == b'+' || b == b'-' {
            i += 1;
            while i < s.len()
                && matches!(s[i], b'0'..=b'9' | b'a'..=b'f' | b'.' | b'x' | b'+' | b'-')
            {
                i += 1;
            }
            out.push(b'?');
            continue;
        }
        out.push(b);
        i += 1;
    }
    out
}

/// `s/[xb.+-]\?/?/g`.
fn absorb_before_mark(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if matches!(s[i], b'x' | b'b' | b'.' | b'+' | b'-') && s.get(i + 1) == Some(&b'?') {
            out.push(b'?');
            i += 2;
            continue;
        }
        out.push(s[i]);
        i += 1;
    }
    out
}

/// `s/\A\s+//; chomp; tr[ \n\t\r\f][ ]s; lc`.
fn squeeze(s: &[u8]) -> Vec<u8> {
    let mut start = 0;
    while start < s.len() && is_space(s[start]) {
        start += 1;
    }
    let mut body = &s[start..];
    if let Some(b) = body.strip_suffix(b"\n") {
        body = b;
    }
    let mut out = Vec::with_capacity(body.len());
    let mut last_space = false;
    for &b in body {
        if matches!(b, b' ' | b'\n' | b'\t' | b'\r' | 0x0c) {
            if !last_space {
                out.push(b' ');
            }
            last_space = true;
        } else {
            out.push(b.to_ascii_lowercase());
            last_space = false;
        }
    }
    out
}

/// `[\s,]*\([\s?,]*\)` from `i`: where it ends.
fn list_group(s: &[u8], mut i: usize) -> Option<usize> {
    while i < s.len() && (is_space(s[i]) || s[i] == b',') {
        i += 1;
    }
    if s.get(i) != Some(&b'(') {
        return None;
    }
    i += 1;
    while i < s.len() && (is_space(s[i]) || s[i] == b',' || s[i] == b'?') {
        i += 1;
    }
    (s.get(i) == Some(&b')')).then_some(i + 1)
}

/// `s/\b(in|values?)(?:[\s,]*\([\s?,]*\))+/$1(?+)/g`.
fn collapse_lists(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    'outer: while i < s.len() {
        if (s[i] == b'i' || s[i] == b'v') && word_start(s, i) {
            for w in [&b"in"[..], b"values", b"value"] {
                if !s[i..].starts_with(w) {
                    continue;
                }
                let Some(mut end) = list_group(s, i + w.len()) else {
                    continue;
                };
                while let Some(e) = list_group(s, end) {
                    end = e;
                }
                out.extend_from_slice(w);
                out.extend_from_slice(b"(?+)");
                i = end;
                continue 'outer;
            }
        }
        out.push(s[i]);
        i += 1;
    }
    out
}

/// `(\sunion(?:\sall)?)\s` followed by `arm` at `i`: where it ends and the
/// union words.
fn union_arm(s: &[u8], i: usize, arm: &[u8]) -> Option<(usize, usize)> {
    if !s.get(i).is_some_and(|&b| is_space(b)) || !s[i + 1..].starts_with(b"union") {
        return None;
    }
    let u = i + 6;
    // `(?:\sall)?` is greedy: with `all` first, then without.
    if s.get(u).is_some_and(|&b| is_space(b))
        && s[u + 1..].starts_with(b"all")
        && s.get(u + 4).is_some_and(|&b| is_space(b))
        && s[u + 5..].starts_with(arm)
    {
        return Some((u + 5 + arm.len(), u + 4 - i));
    }
    if s.get(u).is_some_and(|&b| is_space(b)) && s[u + 1..].starts_with(arm) {
        return Some((u + 1 + arm.len(), u - i));
    }
    None
}

/// `s/\b(select\s.*?)(?:(\sunion(?:\sall)?)\s\1)+/$1 \/*repeat$2*\//g`.
fn collapse_unions(s: &[u8]) -> Vec<u8> {
    if crate::scan::find(s, b"union").is_none() {
        return s.to_vec();
    }
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    'outer: while i < s.len() {
        if s[i] == b's'
            && word_start(s, i)
            && s[i..].starts_with(b"select")
            && s.get(i + 6).is_some_and(|&b| is_space(b))
        {
            // `.*?` grows from nothing, not past a newline: each end where
            // ` union` follows, in order.
            let line_end = memchr::memchr(b'\n', &s[i + 7..]).map_or(s.len(), |p| p + i + 7);
            let mut k = i + 7;
            while let Some(p) = find(s, k, b"union") {
                if p < 1 || p - 1 > line_end {
                    break;
                }
                let x_end = p - 1;
                if x_end >= i + 7 {
                    let arm = &s[i..x_end];
                    if let Some((mut end, mut ulen)) = union_arm(s, x_end, arm) {
                        let mut u_at = x_end;
                        while let Some((e, l)) = union_arm(s, end, arm) {
                            u_at = end;
                            end = e;
                            ulen = l;
                        }
                        out.extend_from_slice(arm);
                        out.extend_from_slice(b" /*repeat");
                        out.extend_from_slice(&s[u_at..u_at + ulen]);
                        out.extend_from_slice(b"*/");
                        i = end;
                        continue 'outer;
                    }
                }
                k = p + 1;
            }
        }
        out.push(s[i]);
        i += 1;
    }
    out
}

/// `s/\blimit \?(?:, ?\?| offset \?)?/limit ?/` (the first only).
fn limit(s: &[u8]) -> Vec<u8> {
    let mut from = 0;
    while let Some(p) = find(s, from, b"limit ?") {
        from = p + 1;
        if !word_start(s, p) {
            continue;
        }
        let mut end = p + 7;
        let rest = &s[end..];
        if rest.starts_with(b", ?") {
            end += 3;
        } else if rest.starts_with(b",?") {
            end += 2;
        } else if rest.starts_with(b" offset ?") {
            end += 9;
        }
        let mut out = Vec::with_capacity(s.len());
        out.extend_from_slice(&s[..p]);
        out.extend_from_slice(b"limit ?");
        out.extend_from_slice(&s[end..]);
        return out;
    }
    s.to_vec()
}

/// `if (m/\bORDER BY /gi) { s/\G(.+?)\s+ASC/$1/gi }`: after the first
/// `order by `, each `(.+?)\s+asc` in a row, anchored where the last ended.
fn order_by_asc(s: &mut Vec<u8>) {
    let mut from = 0;
    let start = loop {
        let Some(p) = find(s, from, b"order by ") else {
            return;
        };
        if word_start(s, p) {
            break p + 9;
        }
        from = p + 1;
    };
    let mut out = Vec::with_capacity(s.len());
    out.extend_from_slice(&s[..start]);
    let mut g = start;
    loop {
        // `(.+?)`: at least one byte, not a newline; then white space and
        // `asc` (the white space run is taken whole: `asc` cannot start in it).
        let mut k = g + 1;
        let mut hit = None;
        while k < s.len() {
            if s[k - 1] == b'\n' {
                break;
            }
            if is_space(s[k]) {
                let mut j = k;
                while j < s.len() && is_space(s[j]) {
                    j += 1;
                }
                if starts_with_ci(s, j, b"asc") {
                    hit = Some((k, j + 3));
                    break;
                }
                if s[k] == b'\n' {
                    break;
                }
            }
            k += 1;
        }
        match hit {
            Some((cap_end, end)) if g < s.len() && s[g] != b'\n' => {
                out.extend_from_slice(&s[g..cap_end]);
                g = end;
            }
            _ => break,
        }
    }
    out.extend_from_slice(&s[g..]);
    *s = out;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp(q: &str) -> String {
        fingerprint(q)
    }

    #[test]
    fn mysqldump_toolkit_admin_and_call() {
        assert_eq!(
            fp("SELECT /*!40001 SQL_NO_CACHE */ * FROM `film`"),
            "mysqldump"
        );
        assert_eq!(
            fp("REPLACE /*foo.bar:3/3*/ INTO checksum.checksum"),
            "percona-toolkit"
        );
        assert_eq!(
            fp("administrator command: Init DB"),
            "administrator command: Init DB"
        );
        assert_eq!(fp("  CALL Foo.Bar(1, 'x')"), "call foo.bar");
        assert_eq!(fp("call a((1))"), "call a(");
        assert_eq!(fp("call "), "call ");
        assert_eq!(fp("call ("), "call (");
    }

    #[test]
    fn multi_row_insert_keeps_the_first_row() {
        assert_eq!(
            fp("INSERT INTO t (a, b) VALUES (1, 'x'), (2, 'y'), (3, 'z')"),
            "insert into t (a, b) values(?+)"
        );
        assert_eq!(
            fp("insert ignore into t values(1),(2)"),
            "insert ignore into t values(?+)"
        );
        assert_eq!(fp("REPLACE INTO t VALUES (1)"), "replace into t values(?+)");
    }

    #[test]
    fn comments_are_stripped() {
        assert_eq!(fp("select /* x */ 1"), "select ?");
        assert_eq!(fp("select 1 -- tail\n from t"), "select ? from t");
        assert_eq!(fp("select 1 # tail\nfrom t"), "select ? from t");
        // A version comment stays.
        assert_eq!(fp("select /*!40001 x */ a"), "select /*!? x */ a");
        // `/**/` is not a comment for this rule: the match runs to the next `*/`.
        assert_eq!(fp("select /**/ a /* b */ c"), "select c");
        // A line comment with a quote after it on its line is kept.
        assert_eq!(fp("select a -- it's\n"), "select a ? it's");
    }

    #[test]
    fn use_database() {
        assert_eq!(fp("use `sakila`"), "use ?");
        assert_eq!(fp("USE db"), "use ?");
        assert_eq!(fp("use db; select 1"), "use db; select ?");
    }

    #[test]
    fn strings_and_booleans() {
        assert_eq!(
            fp(r#"select * from t where a = 'it\'s' and b = "x" and c = TRUE"#),
            "select * from t where a = ? and b = ? and c = ?"
        );
        assert_eq!(fp("select 'a\nb'"), "select ?");
        assert_eq!(fp("select truest"), "select truest");
    }

    #[test]
    fn numbers_hex_and_embedded_digits() {
        assert_eq!(fp("select 1.5e3, -2, 0x1f, b'01'"), "select ?, ?, ?, ?");
        assert_eq!(
            fp("select * from t1 where c2 = 3"),
            "select * from t? where c? = ?"
        );
        assert_eq!(fp("select a - b"), "select a ? b");
        // `x`, `b`, `.`, `+`, `-` before a mark go into it.
        assert_eq!(fp("select tab1"), "select ta?");
    }

    #[test]
    fn whitespace_and_case() {
        assert_eq!(fp("\n  SELECT\tA\r\n FROM   T\n"), "select a from t");
    }

    #[test]
    fn null_in_and_values_lists() {
        assert_eq!(fp("select null, nullable"), "select ?, nullable");
        assert_eq!(
            fp("select * from t where id in (1, 2, 3) and x IN ('a')"),
            "select * from t where id in(?+) and x in(?+)"
        );
        assert_eq!(fp("insert into t value (1)"), "insert into t value(?+)");
        assert_eq!(
            fp("select * from t where id in (a, 1)"),
            "select * from t where id in (a, ?)"
        );
    }

    #[test]
    fn unions_collapse() {
        assert_eq!(
            fp(
                "select a from t where b = 1 union select a from t where b = 2 union all select a from t where b = 3"
            ),
            "select a from t where b = ? /*repeat union all*/"
        );
        assert_eq!(
            fp("select a from t union select b from u"),
            "select a from t union select b from u"
        );
    }

    #[test]
    fn limit_forms() {
        assert_eq!(fp("select a from t limit 10"), "select a from t limit ?");
        assert_eq!(fp("select a from t limit 10, 5"), "select a from t limit ?");
        assert_eq!(fp("select a from t limit 10,5"), "select a from t limit ?");
        assert_eq!(
            fp("select a from t limit 5 offset 10"),
            "select a from t limit ?"
        );
    }

    #[test]
    fn order_by_asc_is_dropped() {
        assert_eq!(
            fp("select a from t order by a asc, b desc, c ASC"),
            "select a from t order by a, b desc, c"
        );
        assert_eq!(fp("select a asc from t"), "select a asc from t");
    }

    #[test]
    fn postgres_literals() {
        let pg = |q: &str| String::from_utf8(pg_fingerprint_bytes(q.as_bytes())).unwrap();
        assert_eq!(
            pg("SELECT c FROM sbtest1 WHERE id = $1"),
            pg("select c from sbtest1 where id = 42")
        );
        assert_eq!(
            pg("SELECT c FROM sbtest1 WHERE id=$1"),
            "select c from sbtest? where id=?"
        );
        assert_eq!(
            pg("select '1'::int4, $$it's$$, $fn$a$b$fn$, E'a\\'b'"),
            "select ?::int?, ?, ?, ?"
        );
        assert_eq!(pg("select 'it''s' as x"), "select ? as x");
        assert_eq!(
            pg("SELECT \"Name\" FROM \"My Table\" WHERE k IN (1, 2, $3)"),
            "select \"name\" from \"my table\" where k in(?+)"
        );
        assert_eq!(pg("select e'x', type'y' from t"), "select ?, type? from t");
        assert_eq!(pg("select now()::date"), "select now()::date");
        assert_eq!(pg("select 1 -- why\n"), "select ?");
    }

    #[test]
    fn query_ids() {
        // pt-query-digest 3.2.1 on the same queries (see the e2e tests for
        // whole logs).
        assert_eq!(
            query_id("create table a(id int primary key, s varchar(?))"),
            "ED357A9AAE6E2FA7DA5BC0AA3D6042F0"
        );
        assert_eq!(
            query_id("insert into a values(?+)"),
            "446D88ACB5D591D41EBD7A55DB886511"
        );
        let id = "446D88ACB5D591D41EBD7A55DB886511";
        assert!(id_matches("0x446d88acb5d591d41ebd7a55db886511", id));
        assert!(id_matches("41EBD7A55DB886511"[1..].as_ref(), id));
        assert!(!id_matches("446D88ACB5D591D4", id));
        assert!(is_query_id("0x41EBD7A55DB88651"));
        assert!(!is_query_id("xyz"));
    }
}
