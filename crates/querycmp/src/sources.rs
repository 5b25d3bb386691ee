//! Where the queries come from: `;`-separated statements of a file, the
//! `.sql` files of a directory, statements given one by one, or the
//! classes of a query log (read through the digest: one query per class,
//! its worst sample).

use dbmeter_digest::aggregate::QUERY_TIME;
use dbmeter_digest::{GroupBy, Options, TimeFilter, fingerprint};
use std::path::Path;

/// A query to compare.
#[derive(Clone, Debug, PartialEq)]
pub struct Query {
    pub sql: String,
    /// Where it came from, for the report.
    pub origin: String,
}

/// Cuts SQL text into its statements at the `;` outside quotes (`'`, `"`,
/// `` ` ``, with `\` escaping the next character inside them), comments
/// (`-- ...` to the end of the line, `/* ... */`) and PostgreSQL's dollar
/// quotes (`$tag$ ... $tag$`). Returns each statement with the line it
/// starts on; statements that hold only comments and blanks are left
/// out, and so are the comments before a statement's first word. An
/// unterminated quote or comment is an error naming its line.
pub fn split_statements(text: &str) -> Result<Vec<(usize, String)>, String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut line = 1;
    let mut i = 0;
    // Whether the current statement has anything but comments and blanks.
    let mut has_code = false;
    let mut first_line = 1;
    let line_of = |pos: usize| 1 + b[..pos].iter().filter(|&&c| c == b'\n').count();
    while i < b.len() {
        let c = b[i];
        if !has_code && !c.is_ascii_whitespace() && c != b';' && !starts_comment(b, i) {
            has_code = true;
            first_line = line;
            start = i;
        }
        match c {
            b'\n' => {
                line += 1;
                i += 1;
            }
            b'\'' | b'"' | b'`' => {
                let open = i;
                i += 1;
                loop {
                    match b.get(i) {
                        None => {
                            return Err(format!(
                                "line {}: the {} opened here is not closed",
                                line_of(open),
                                c as char
                            ));
                        }
                        Some(b'\\') if c != b'`' => i += 2,
                        Some(&q) if q == c => {
                            if b.get(i + 1) == Some(&c) {
                                i += 2;
                            } else {
                                i += 1;
                                break;
                            }
                        }
                        Some(b'\n') => {
                            line += 1;
                            i += 1;
                        }
                        Some(_) => i += 1,
                    }
                }
            }
            b'-' if b.get(i + 1) == Some(&b'-') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let open = i;
                match text[i + 2..].find("*/") {
                    Some(end) => {
                        let stop = i + 2 + end + 2;
                        line += b[i..stop].iter().filter(|&&x| x == b'\n').count();
                        i = stop;
                    }
                    None => {
                        return Err(format!(
                            "line {}: the comment /* opened here is not closed",
                            line_of(open)
                        ));
                    }
                }
            }
            b'$' if dollar_tag(b, i).is_some() => {
                let tag_len = dollar_tag(b, i).unwrap_or(1);
                let tag = &text[i..i + tag_len];
                let open = i;
                match text[i + tag_len..].find(tag) {
                    Some(end) => {
                        let stop = i + tag_len + end + tag_len;
                        line += b[i..stop].iter().filter(|&&x| x == b'\n').count();
                        i = stop;
                    }
                    None => {
                        return Err(format!(
                            "line {}: the dollar quote {tag} opened here is not closed",
                            line_of(open)
                        ));
                    }
                }
            }
            b';' => {
                if has_code {
                    out.push((first_line, text[start..i].trim().to_string()));
                }
                has_code = false;
                i += 1;
                start = i;
            }
            _ => i += 1,
        }
    }
    if has_code {
        out.push((first_line, text[start..].trim().to_string()));
    }
    Ok(out)
}

fn starts_comment(b: &[u8], i: usize) -> bool {
    matches!(
        (b.get(i), b.get(i + 1)),
        (Some(b'-'), Some(b'-')) | (Some(b'/'), Some(b'*'))
    )
}

/// The length of a dollar-quote tag (`$$`, `$body$`) starting at `i`.
fn dollar_tag(b: &[u8], i: usize) -> Option<usize> {
    // `$1` is a parameter, and a `$` inside a word is part of it.
    if i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_') {
        return None;
    }
    let mut j = i + 1;
    while j < b.len() && (b[j].is_ascii_alphabetic() || b[j] == b'_') {
        j += 1;
    }
    (b.get(j) == Some(&b'$')).then_some(j + 1 - i)
}

/// The statements of a file of `;`-separated SQL.
pub fn from_file(path: &Path) -> Result<Vec<Query>, String> {
    let name = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {name}: {e}"))?;
    let statements = split_statements(&text).map_err(|e| format!("{name} {e}"))?;
    if statements.is_empty() {
        return Err(format!("{name} holds no SQL statements"));
    }
    Ok(statements
        .into_iter()
        .enumerate()
        .map(|(n, (line, sql))| Query {
            sql,
            origin: format!("{name} statement {} (line {line})", n + 1),
        })
        .collect())
}

/// The statements of every `.sql` file of a directory, files in name order.
pub fn from_dir(dir: &Path) -> Result<Vec<Query>, String> {
    let name = dir.display();
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read the directory {name}: {e}"))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x.eq_ignore_ascii_case("sql")))
        .collect();
    if files.is_empty() {
        return Err(format!("{name} holds no .sql files"));
    }
    files.sort();
    let mut out = Vec::new();
    for f in files {
        out.extend(from_file(&f)?);
    }
    Ok(out)
}

/// Statements given one by one (`--query`): each must be one statement.
pub fn from_texts(texts: &[String]) -> Result<Vec<Query>, String> {
    let mut out = Vec::new();
    for (n, t) in texts.iter().enumerate() {
        let mut st = split_statements(t).map_err(|e| format!("--query {}: {e}", n + 1))?;
        match st.len() {
            0 => return Err(format!("--query {} holds no SQL statement", n + 1)),
            1 => {}
            k => {
                return Err(format!(
                    "--query {} holds {k} statements: give each with its own --query, or use --file",
                    n + 1
                ));
            }
        }
        let (_, sql) = st.remove(0);
        out.push(Query {
            sql,
            origin: format!("--query {}", n + 1),
        });
    }
    Ok(out)
}

/// Whether a statement only reads: it starts (after comments and
/// parentheses) with SELECT, WITH, VALUES or TABLE.
pub fn is_read(sql: &str) -> bool {
    let mut s = sql.trim_start();
    loop {
        if let Some(r) = s.strip_prefix("--") {
            s = r.split_once('\n').map_or("", |(_, rest)| rest).trim_start();
        } else if let Some(r) = s.strip_prefix("/*") {
            s = r.split_once("*/").map_or("", |(_, rest)| rest).trim_start();
        } else if let Some(r) = s.strip_prefix('(') {
            s = r.trim_start();
        } else {
            break;
        }
    }
    let word: String = s
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect::<String>()
        .to_ascii_lowercase();
    matches!(word.as_str(), "select" | "with" | "values" | "table")
}

/// Whether a statement holds `$1`-style parameters outside quotes.
fn has_parameters(sql: &str) -> bool {
    let b = sql.as_bytes();
    let mut quote: Option<u8> = None;
    for (i, &c) in b.iter().enumerate() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == b'\'' || c == b'"' => quote = Some(c),
            None if c == b'$'
                && b.get(i + 1).is_some_and(u8::is_ascii_digit)
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) =>
            {
                return true;
            }
            None => {}
        }
    }
    false
}

/// The classes of query logs, most total time first: one query per class,
/// its worst sample (the longest; the first when the log has no times).
/// Only reading classes are taken (SELECT, WITH, VALUES, TABLE), and
/// not those whose sample has `$1`-style parameters (the log has no
/// values for them); the others are counted in the notes. At most `limit` classes (0: all).
pub fn from_logs(logs: &[String], limit: usize) -> Result<(Vec<Query>, Vec<String>), String> {
    let opts = Options {
        group_by: GroupBy::Fingerprint,
        filter: TimeFilter::default(),
        threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        format: None,
        log_line_prefix: None,
    };
    let d = dbmeter_digest::digest(logs, &opts, &|_| {}).map_err(|e| e.to_string())?;
    let mut classes: Vec<_> = d.aggregate.classes.iter().collect();
    let total = |c: &dbmeter_digest::aggregate::ClassStats| {
        c.attr_stats(QUERY_TIME)
            .and_then(|a| a.num.as_ref().map(|n| n.sum))
            .unwrap_or(0.0)
    };
    classes.sort_by(|x, y| {
        total(y.1)
            .total_cmp(&total(x.1))
            .then(y.1.count.cmp(&x.1.count))
            .then(x.0.cmp(y.0))
    });
    let mut out = Vec::new();
    let mut skipped = 0;
    let mut parameters = 0;
    for (key, c) in classes {
        let Some(sample) = &c.sample else { continue };
        let sql = String::from_utf8_lossy(&sample.query).trim().to_string();
        if !is_read(&sql) {
            skipped += 1;
            continue;
        }
        if has_parameters(&sql) {
            parameters += 1;
            continue;
        }
        if limit > 0 && out.len() == limit {
            continue;
        }
        let file = d
            .files
            .get(sample.file as usize)
            .map_or("the log", |f| f.name.as_str());
        let which = if sample.query_time.is_some() {
            "worst"
        } else {
            "first"
        };
        out.push(Query {
            sql,
            origin: format!(
                "{file}: class {} ({} of {}, line {})",
                fingerprint::query_id_bytes(key),
                which,
                c.count,
                sample.line
            ),
        });
    }
    let mut notes = Vec::new();
    if skipped > 0 {
        notes.push(format!(
            "{skipped} class(es) of the log that do not only read (not SELECT, WITH, VALUES or TABLE) were left out"
        ));
    }
    if parameters > 0 {
        notes.push(format!(
            "{parameters} class(es) of the log with $1-style parameters (PostgreSQL's extended \
             protocol, logged without their values) were left out"
        ));
    }
    if d.malformed.count > 0 {
        notes.push(format!(
            "{} line(s) of the log could not be read and were skipped",
            d.malformed.count
        ));
    }
    if out.is_empty() {
        return Err(format!(
            "{} holds no reading statements to compare ({} class(es) in all)",
            logs.join(", "),
            d.aggregate.classes.len()
        ));
    }
    Ok((out, notes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sql(text: &str) -> Vec<String> {
        split_statements(text)
            .unwrap()
            .into_iter()
            .map(|(_, s)| s)
            .collect()
    }

    #[test]
    fn splits_outside_quotes_and_comments() {
        assert_eq!(
            sql("SELECT 1; SELECT ';' AS x;\n-- a; comment\nSELECT \"a;b\" /* c; */ FROM t"),
            [
                "SELECT 1",
                "SELECT ';' AS x",
                "SELECT \"a;b\" /* c; */ FROM t"
            ]
        );
        assert_eq!(sql("SELECT 'it''s; ok'; ;; "), ["SELECT 'it''s; ok'"]);
        assert_eq!(sql("SELECT 'a\\';b'"), ["SELECT 'a\\';b'"]);
        assert_eq!(
            sql("DO $$ BEGIN PERFORM 1; END $$; SELECT $1, a$b FROM t"),
            ["DO $$ BEGIN PERFORM 1; END $$", "SELECT $1, a$b FROM t"]
        );
        assert_eq!(
            sql("-- only a comment\n/* and another */"),
            Vec::<String>::new()
        );
    }

    #[test]
    fn lines_of_statements() {
        let s = split_statements("\n\nSELECT 1;\n-- c\n\nSELECT\n2;").unwrap();
        assert_eq!(s[0].0, 3);
        assert_eq!(s[1].0, 6);
    }

    #[test]
    fn unterminated_quotes_and_comments() {
        let e = split_statements("SELECT 1;\nSELECT 'abc;\n").unwrap_err();
        assert_eq!(e, "line 2: the ' opened here is not closed");
        let e = split_statements("SELECT 1 /* x").unwrap_err();
        assert!(e.contains("line 1: the comment /*"), "{e}");
        let e = split_statements("\nDO $f$ x").unwrap_err();
        assert!(e.contains("line 2: the dollar quote $f$"), "{e}");
    }

    #[test]
    fn reads() {
        assert!(is_read("select 1"));
        assert!(is_read("  /* x */ -- y\n (SELECT 1) UNION (SELECT 2)"));
        assert!(is_read("WITH a AS (SELECT 1) SELECT * FROM a"));
        assert!(!is_read("UPDATE t SET a = 1"));
        assert!(!is_read("selection"));
    }

    #[test]
    fn parameters() {
        assert!(has_parameters("SELECT c FROM t WHERE id = $1"));
        assert!(!has_parameters("SELECT '$1', a$1 FROM t"));
        assert!(!has_parameters("SELECT $$x$$"));
    }

    #[test]
    fn query_texts() {
        assert_eq!(
            from_texts(&["SELECT 1;".into()]).unwrap()[0].sql,
            "SELECT 1"
        );
        let e = from_texts(&["SELECT 1; SELECT 2".into()]).unwrap_err();
        assert!(e.contains("holds 2 statements"), "{e}");
        assert!(from_texts(&[" ".into()]).is_err());
    }
}
