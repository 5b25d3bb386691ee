//! Cutting a script's text into pieces, as psql's lexer does for pgbench:
//! SQL commands end at a `;` outside quotes, comments and parentheses (the
//! `;` stays in the command); a backslash outside quotes and comments
//! starts a meta-command, which runs to the end of the line (a backslash
//! just before the line's end continues it), and ends the SQL collected so
//! far even without a `;`. `\;` and `\:` put a plain `;` or `:` into the
//! SQL (so `SELECT 1 \; SELECT 2;` is one command of two queries).
//!
//! Quotes understood: `'...'` (with `''`), `E'...'` (with backslash
//! escapes), `"..."`, `$tag$...$tag$`; comments: `--` to the end of the
//! line, `/* */` (nested). An unterminated quote or comment is an error
//! here, where pgbench would send the text and let the server fail.

/// One piece of a script, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Piece {
    /// SQL text (leading blanks and `--` comments removed), the line it
    /// starts on.
    Sql { text: String, line: usize },
    /// A meta-command: its line, its text from the backslash on (one
    /// logical line, continuations joined), and its words as byte ranges
    /// of `text`.
    Meta {
        line: usize,
        text: String,
        words: Vec<(usize, usize)>,
    },
}

/// A scanning error and the line it is on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ScanError {
    pub line: usize,
    pub message: String,
}

fn is_ident_start(b: u8) -> bool {
    b >= 0x80 || b.is_ascii_alphabetic() || b == b'_'
}

fn is_ident_cont(b: u8) -> bool {
    is_ident_start(b) || b.is_ascii_digit() || b == b'$'
}

/// Blanks inside a meta-command line (not the newline, which ends it).
fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | 0x0b | 0x0c)
}

struct Scanner<'a> {
    src: &'a str,
    b: &'a [u8],
    i: usize,
    line: usize,
    pieces: Vec<Piece>,
    /// SQL collected so far, and the line it started on.
    buf: String,
    buf_line: usize,
    /// Start of the raw text not yet copied into `buf`.
    seg: usize,
    depth: usize,
}

/// Cuts `src` into SQL commands and meta-commands.
pub(crate) fn scan(src: &str) -> Result<Vec<Piece>, ScanError> {
    let mut s = Scanner {
        src,
        b: src.as_bytes(),
        i: 0,
        line: 1,
        pieces: Vec::new(),
        buf: String::new(),
        buf_line: 1,
        seg: 0,
        depth: 0,
    };
    s.run()?;
    Ok(s.pieces)
}

impl Scanner<'_> {
    fn peek(&self, off: usize) -> Option<u8> {
        self.b.get(self.i + off).copied()
    }

    fn unterminated(&self, what: &str, line: usize) -> ScanError {
        ScanError {
            line,
            message: format!("unterminated {what}"),
        }
    }

    fn run(&mut self) -> Result<(), ScanError> {
        while let Some(c) = self.peek(0) {
            match c {
                b'\n' => {
                    self.line += 1;
                    self.i += 1;
                }
                b'-' if self.peek(1) == Some(b'-') => {
                    while self.peek(0).is_some_and(|c| c != b'\n') {
                        self.i += 1;
                    }
                }
                b'/' if self.peek(1) == Some(b'*') => self.block_comment()?,
                b'\'' => {
                    self.i += 1;
                    self.quoted(b'\'', false, "quoted string")?;
                }
                b'"' => {
                    self.i += 1;
                    self.quoted(b'"', false, "quoted identifier")?;
                }
                b'$' => self.dollar()?,
                c if is_ident_start(c) => {
                    let start = self.i;
                    while self.peek(0).is_some_and(is_ident_cont) {
                        self.i += 1;
                    }
                    let escape_string = self.i - start == 1
                        && matches!(c, b'e' | b'E')
                        && self.peek(0) == Some(b'\'');
                    if escape_string {
                        self.i += 1;
                        self.quoted(b'\'', true, "quoted string")?;
                    }
                }
                b'(' => {
                    self.depth += 1;
                    self.i += 1;
                }
                b')' => {
                    self.depth = self.depth.saturating_sub(1);
                    self.i += 1;
                }
                b';' if self.depth == 0 => {
                    self.i += 1;
                    self.flush_sql();
                }
                b'\\' => match self.peek(1) {
                    Some(forced @ (b';' | b':')) => {
                        self.take_segment();
                        self.buf.push(forced as char);
                        self.i += 2;
                        self.seg = self.i;
                    }
                    _ => {
                        self.flush_sql();
                        self.meta();
                    }
                },
                _ => self.i += 1,
            }
        }
        self.flush_sql();
        Ok(())
    }

    /// Copies the raw text since the last copy into the SQL buffer.
    fn take_segment(&mut self) {
        if self.buf.is_empty() {
            self.buf_line = self.line_of(self.seg);
        }
        self.buf.push_str(&self.src[self.seg..self.i]);
        self.seg = self.i;
    }

    /// The line number of byte `pos` (at or before the current position).
    fn line_of(&self, pos: usize) -> usize {
        self.line - self.b[pos..self.i].iter().filter(|&&c| c == b'\n').count()
    }

    /// Ends the SQL collected so far: a command unless it is only blanks
    /// and `--` comments.
    fn flush_sql(&mut self) {
        self.take_segment();
        self.depth = 0;
        let text = std::mem::take(&mut self.buf);
        let (skipped, rest) = skip_blanks_and_comments(&text);
        if !rest.is_empty() {
            let line = self.buf_line + skipped.bytes().filter(|&c| c == b'\n').count();
            self.pieces.push(Piece::Sql {
                text: rest.to_string(),
                line,
            });
        }
    }

    fn block_comment(&mut self) -> Result<(), ScanError> {
        let start_line = self.line;
        let mut nest = 0usize;
        while let Some(c) = self.peek(0) {
            if c == b'/' && self.peek(1) == Some(b'*') {
                nest += 1;
                self.i += 2;
            } else if c == b'*' && self.peek(1) == Some(b'/') {
                nest -= 1;
                self.i += 2;
                if nest == 0 {
                    return Ok(());
                }
            } else {
                if c == b'\n' {
                    self.line += 1;
                }
                self.i += 1;
            }
        }
        Err(self.unterminated("/* comment", start_line))
    }

    /// After an opening quote: up to the closing one (doubled quotes
    /// stay inside; with `backslash`, a backslash escapes the next byte).
    fn quoted(&mut self, quote: u8, backslash: bool, what: &str) -> Result<(), ScanError> {
        let start_line = self.line;
        while let Some(c) = self.peek(0) {
            if c == b'\n' {
                self.line += 1;
            }
            if backslash && c == b'\\' {
                if self.peek(1) == Some(b'\n') {
                    self.line += 1;
                }
                self.i += 2;
                continue;
            }
            self.i += 1;
            if c == quote {
                if self.peek(0) == Some(quote) {
                    self.i += 1;
                    continue;
                }
                return Ok(());
            }
        }
        Err(self.unterminated(what, start_line))
    }

    /// `$tag$ ... $tag$` (tag empty or an identifier); any other `$` is
    /// just a character (`$1`).
    fn dollar(&mut self) -> Result<(), ScanError> {
        let start = self.i;
        let mut j = start + 1;
        if self.b.get(j).is_some_and(|&c| is_ident_start(c)) {
            j += 1;
            while self
                .b
                .get(j)
                .is_some_and(|&c| is_ident_start(c) || c.is_ascii_digit())
            {
                j += 1;
            }
        }
        if self.b.get(j) != Some(&b'$') {
            self.i += 1;
            return Ok(());
        }
        let delim = &self.src[start..=j];
        let start_line = self.line;
        let body = j + 1;
        match self.src[body..].find(delim) {
            Some(k) => {
                let end = body + k + delim.len();
                self.line += self.b[start..end].iter().filter(|&&c| c == b'\n').count();
                self.i = end;
                Ok(())
            }
            None => Err(self.unterminated("dollar-quoted string", start_line)),
        }
    }

    /// A backslash command from the current `\` to the end of its line.
    fn meta(&mut self) {
        let line = self.line;
        self.i += 1;
        let mut text = String::from("\\");
        loop {
            match self.peek(0) {
                None => break,
                Some(b'\n') => {
                    self.line += 1;
                    self.i += 1;
                    break;
                }
                Some(b'\\') if self.peek(1) == Some(b'\n') => {
                    self.line += 1;
                    self.i += 2;
                    text.push(' ');
                }
                Some(b'\\') if self.peek(1) == Some(b'\r') && self.peek(2) == Some(b'\n') => {
                    self.line += 1;
                    self.i += 3;
                    text.push(' ');
                }
                Some(_) => {
                    // Copy up to the next newline or backslash at once.
                    let from = self.i;
                    self.i += 1;
                    while self.peek(0).is_some_and(|c| c != b'\n' && c != b'\\') {
                        self.i += 1;
                    }
                    text.push_str(&self.src[from..self.i]);
                }
            }
        }
        let trimmed = text.trim_end_matches(['\r', '\n']).len();
        text.truncate(trimmed);
        let bytes = text.as_bytes();
        let mut words = Vec::new();
        let mut k = 1;
        while k < bytes.len() {
            if is_blank(bytes[k]) {
                k += 1;
                continue;
            }
            let w = k;
            while k < bytes.len() && !is_blank(bytes[k]) {
                k += 1;
            }
            words.push((w, k));
        }
        self.seg = self.i;
        if !words.is_empty() {
            self.pieces.push(Piece::Meta { line, text, words });
        }
    }
}

/// Splits off leading blanks and `--` comments (pgbench does not send a
/// command that is only those).
fn skip_blanks_and_comments(text: &str) -> (&str, &str) {
    let b = text.as_bytes();
    let mut i = 0;
    loop {
        if i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        } else if b[i..].starts_with(b"--") {
            match text[i..].find('\n') {
                Some(n) => i += n + 1,
                None => i = b.len(),
            }
        } else {
            break;
        }
    }
    (&text[..i], &text[i..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sql(text: &str, line: usize) -> Piece {
        Piece::Sql {
            text: text.into(),
            line,
        }
    }

    fn words(p: &Piece) -> Vec<&str> {
        match p {
            Piece::Meta { text, words, .. } => words.iter().map(|&(a, b)| &text[a..b]).collect(),
            Piece::Sql { .. } => Vec::new(),
        }
    }

    #[test]
    fn commands_end_at_semicolons_outside_quotes() {
        let src = "-- leading comment\nSELECT 'a;b', \"c;d\", $$e;f$$, $x$ g;$$ $x$, E'h\\';i'\n  FROM t; /* ; */ SELECT (1;2);\nUPDATE t SET x = 1";
        assert_eq!(
            scan(src),
            Ok(vec![
                sql(
                    "SELECT 'a;b', \"c;d\", $$e;f$$, $x$ g;$$ $x$, E'h\\';i'\n  FROM t;",
                    2
                ),
                sql("/* ; */ SELECT (1;2);", 3),
                sql("UPDATE t SET x = 1", 4),
            ])
        );
    }

    #[test]
    fn backslashes_start_meta_commands() {
        let src = "\\set aid random(1, \\\n 10)\nSELECT abalance FROM a WHERE aid = :aid \\gset p_\nSELECT 1 \\; SELECT 2;\n\\sleep 10 ms\n";
        let pieces = scan(src).unwrap_or_default();
        assert_eq!(pieces.len(), 5, "{pieces:?}");
        assert_eq!(words(&pieces[0]), ["set", "aid", "random(1,", "10)"]);
        assert!(matches!(&pieces[0], Piece::Meta { line: 1, .. }));
        assert_eq!(
            pieces[1],
            sql("SELECT abalance FROM a WHERE aid = :aid ", 3)
        );
        assert_eq!(words(&pieces[2]), ["gset", "p_"]);
        assert!(matches!(&pieces[2], Piece::Meta { line: 3, .. }));
        assert_eq!(pieces[3], sql("SELECT 1 ; SELECT 2;", 4));
        assert_eq!(words(&pieces[4]), ["sleep", "10", "ms"]);
        assert!(matches!(&pieces[4], Piece::Meta { line: 5, .. }));
    }

    #[test]
    fn casts_and_parameters_are_not_quotes() {
        let src = "SELECT x::int, $1, a$b$c FROM t;";
        assert_eq!(scan(src), Ok(vec![sql(src, 1)]));
    }

    #[test]
    fn unterminated_things_name_their_line() {
        let e = |s| scan(s).map_err(|e| (e.line, e.message));
        assert_eq!(
            e("SELECT 1;\nSELECT 'abc;\n\n"),
            Err((2, "unterminated quoted string".into()))
        );
        assert_eq!(
            e("/* a /* b */\n"),
            Err((1, "unterminated /* comment".into()))
        );
        assert_eq!(
            e("\n\nSELECT $q$ x"),
            Err((3, "unterminated dollar-quoted string".into()))
        );
        assert_eq!(
            e("SELECT \"x"),
            Err((1, "unterminated quoted identifier".into()))
        );
    }
}
