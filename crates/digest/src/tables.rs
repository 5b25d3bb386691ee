//! The tables a statement names, for the ready-made `SHOW CREATE TABLE`
//! lines of a report, and its `EXPLAIN` line.
//!
//! A light scan, not a parser: the names after `FROM` (and the list that
//! follows it), `JOIN`, `UPDATE`, `INTO`, `TABLE`, outside quotes and
//! comments; subqueries are scanned too.

/// The tables of a statement, as `db`.`tbl` or `tbl`, in order, once each.
pub fn tables(query: &str) -> Vec<String> {
    let toks = tokens(query);
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        let kw = t.to_ascii_lowercase();
        let list = kw == "from";
        if matches!(kw.as_str(), "from" | "join" | "update" | "into" | "table") {
            let mut j = i + 1;
            loop {
                // `TABLE IF [NOT] EXISTS x`
                while j < toks.len()
                    && matches!(
                        toks[j].to_ascii_lowercase().as_str(),
                        "if" | "not" | "exists" | "ignore" | "low_priority"
                    )
                {
                    j += 1;
                }
                let Some(name) = toks.get(j).filter(|n| is_name(n)) else {
                    break;
                };
                let mut full = name.clone();
                j += 1;
                if toks.get(j).map(String::as_str) == Some(".")
                    && let Some(n2) = toks.get(j + 1).filter(|n| is_name(n))
                {
                    full = format!("{}.{}", quote(&full), quote(n2));
                    j += 2;
                } else {
                    full = quote(&full);
                }
                if !out.contains(&full) {
                    out.push(full);
                }
                if !list {
                    break;
                }
                // An alias, then `,` for another table.
                if toks.get(j).is_some_and(|a| a.eq_ignore_ascii_case("as")) {
                    j += 1;
                }
                if toks.get(j).is_some_and(|a| is_name(a) && !is_keyword(a)) {
                    j += 1;
                }
                if toks.get(j).map(String::as_str) == Some(",") {
                    j += 1;
                    continue;
                }
                break;
            }
        }
        i += 1;
    }
    out
}

fn quote(n: &str) -> String {
    format!("`{}`", n.trim_matches('`'))
}

fn is_name(t: &str) -> bool {
    if t.starts_with('`') {
        return t.len() > 2;
    }
    t.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
        && t.chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
        && !is_keyword(t)
}

fn is_keyword(t: &str) -> bool {
    const KW: &[&str] = &[
        "select",
        "where",
        "set",
        "values",
        "value",
        "on",
        "using",
        "join",
        "left",
        "right",
        "inner",
        "outer",
        "cross",
        "natural",
        "straight_join",
        "group",
        "order",
        "limit",
        "having",
        "union",
        "for",
        "lock",
        "into",
        "as",
        "from",
        "dual",
        "partition",
        "use",
        "force",
        "ignore",
        "window",
        "procedure",
        "when",
        "then",
        "else",
        "end",
    ];
    KW.iter().any(|k| t.eq_ignore_ascii_case(k))
}

/// Words, backquoted names, and single punctuation; strings and comments dropped.
fn tokens(q: &str) -> Vec<String> {
    let b = q.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c == b'\'' || c == b'"' {
            i += 1;
            while i < b.len() && b[i] != c {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push("?".into());
        } else if c == b'`' {
            let s = i;
            i += 1;
            while i < b.len() && b[i] != b'`' {
                i += 1;
            }
            i = (i + 1).min(b.len());
            out.push(q[s..i].to_string());
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i = q[i + 2..].find("*/").map_or(b.len(), |p| i + 2 + p + 2);
        } else if c == b'#' || (c == b'-' && b.get(i + 1) == Some(&b'-')) {
            i = q[i..].find('\n').map_or(b.len(), |p| i + p);
        } else if c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80 {
            let s = i;
            while i < b.len()
                && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'$' || b[i] >= 0x80)
            {
                i += 1;
            }
            out.push(q[s..i].to_string());
        } else {
            let s = i;
            i += 1;
            while i < b.len() && !q.is_char_boundary(i) {
                i += 1;
            }
            out.push(q[s..i].to_string());
        }
    }
    out
}

/// The statement to put after `EXPLAIN`, when it can be explained (SELECT,
/// and INSERT/REPLACE/UPDATE/DELETE, which MariaDB 10.0.5+ and MySQL 5.6.3+
/// explain).
pub fn explainable(query: &str) -> bool {
    let q = query.trim_start();
    let first: String = q
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect::<String>()
        .to_ascii_lowercase();
    matches!(
        first.as_str(),
        "select" | "insert" | "replace" | "update" | "delete" | "with"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_of_statements() {
        assert_eq!(tables("SELECT c FROM sbtest1 WHERE id=5"), ["`sbtest1`"]);
        assert_eq!(
            tables(
                "select * from a x, `db`.b as y join c on (x.id=c.id) where z in (select id from d)"
            ),
            ["`a`", "`db`.`b`", "`c`", "`d`"]
        );
        assert_eq!(tables("UPDATE t1 SET k=k+1 WHERE id=2"), ["`t1`"]);
        assert_eq!(
            tables("insert into shop.orders values (1)"),
            ["`shop`.`orders`"]
        );
        assert_eq!(tables("create table if not exists t (id int)"), ["`t`"]);
        assert_eq!(tables("select 'from x' from dual"), Vec::<String>::new());
        assert!(explainable("  SELECT 1"));
        assert!(explainable("delete from t"));
        assert!(!explainable("commit"));
    }
}
