//! A parsed script: its commands (SQL and meta-commands), checked and
//! ready to run. [`parse_script`] turns a script's text into a [`Script`]:
//! the text is cut by `sql_scan.rs`, each meta-command is checked here
//! (arguments, expressions, units), `\gset`/`\aset` are attached to the SQL
//! command before them, and the `\if` blocks are matched up front (so a
//! client jumps over a false branch instead of walking it).
//!
//! Errors name the script and the line: `bench.sql:7: ...`.

use super::expr_parse::{Expr, parse_expr};
use super::sql_scan::{Piece, scan};
use super::variables::{
    VarId, VarNames, Variables, is_name_byte, is_name_start, valid_variable_name,
};
use std::fmt;
use std::ops::Range;

/// One script (a file or a built-in one) with its weight.
#[derive(Clone, Debug)]
pub struct Script {
    /// The file name, or the built-in script's description.
    pub name: String,
    pub weight: u32,
    pub commands: Vec<Command>,
}

/// One command of a script.
#[derive(Clone, Debug)]
pub struct Command {
    /// The line it starts on (1-based).
    pub line: usize,
    /// Its first line (at most 127 bytes): how `-r` names it.
    pub first_line: String,
    pub kind: CommandKind,
}

#[derive(Clone, Debug)]
pub enum CommandKind {
    Sql(SqlCommand),
    /// `\set var expr`
    Set {
        var: VarId,
        expr: Expr,
    },
    /// `\sleep n [us|ms|s]`: microseconds per unit of `amount`.
    Sleep {
        amount: SleepAmount,
        unit_us: i64,
    },
    /// `\setshell var command...`
    SetShell {
        var: VarId,
        words: Vec<ShellWord>,
    },
    /// `\shell command...`
    Shell {
        words: Vec<ShellWord>,
    },
    /// `\if`: when false, go to command `next` (its `\elif`, `\else` or
    /// `\endif`).
    If {
        cond: Expr,
        next: usize,
    },
    /// `\elif`: reached after a true branch, go past `end` (the `\endif`);
    /// reached from a false one, test `cond` and go to `next` if false.
    Elif {
        cond: Expr,
        next: usize,
        end: usize,
    },
    /// `\else`: reached after a true branch, go past `end`.
    Else {
        end: usize,
    },
    Endif,
    StartPipeline,
    EndPipeline,
}

impl CommandKind {
    /// The meta-command's name (`set`, `if`...), or `SQL`.
    pub fn name(&self) -> &'static str {
        match self {
            CommandKind::Sql(_) => "SQL",
            CommandKind::Set { .. } => "set",
            CommandKind::Sleep { .. } => "sleep",
            CommandKind::SetShell { .. } => "setshell",
            CommandKind::Shell { .. } => "shell",
            CommandKind::If { .. } => "if",
            CommandKind::Elif { .. } => "elif",
            CommandKind::Else { .. } => "else",
            CommandKind::Endif => "endif",
            CommandKind::StartPipeline => "startpipeline",
            CommandKind::EndPipeline => "endpipeline",
        }
    }
}

/// How long a `\sleep` is, before its unit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SleepAmount {
    Number(i64),
    /// `:var`, read as an integer when the command runs.
    Var(VarId),
}

/// One word of a `\shell`/`\setshell` command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShellWord {
    Text(String),
    /// `:var`: the variable's text.
    Var(VarId),
}

/// `\gset` (one row from the last query) or `\aset` (the last row of
/// every query that returns rows).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaptureKind {
    Gset,
    Aset,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Capture {
    pub kind: CaptureKind,
    /// Put before each column name to make the variable name.
    pub prefix: String,
}

/// A piece of SQL text: as written, or a `:name` reference.
#[derive(Clone, Debug, PartialEq, Eq)]
enum SqlPart {
    Text(Range<usize>),
    /// `raw` is the `:name` text, kept when the variable is not set.
    Var {
        id: VarId,
        raw: Range<usize>,
    },
}

/// An SQL command, ready for each query mode.
#[derive(Clone, Debug)]
pub struct SqlCommand {
    /// As written in the script.
    pub text: String,
    parts: Vec<SqlPart>,
    /// For the extended and prepared modes: `$1, $2, ...` in place of each
    /// `:name`, in order...
    pub numbered: String,
    /// ...and the variable of each.
    pub params: Vec<VarId>,
    /// The same with `?` in place of each `:name` (dbmeter's connections
    /// take `?` placeholders in every dialect).
    pub question: String,
    pub capture: Option<Capture>,
    /// A COPY whose data would come from or go to the client, which
    /// pgbench refuses (read once here, not for every run of it).
    pub copies_through_client: bool,
}

impl SqlCommand {
    fn new(text: String, names: &mut VarNames) -> SqlCommand {
        let b = text.as_bytes();
        let mut parts = Vec::new();
        let mut numbered = String::with_capacity(text.len());
        let mut question = String::with_capacity(text.len());
        let mut params = Vec::new();
        let mut copied = 0;
        let mut i = 0;
        while i < b.len() {
            if b[i] != b':' {
                i += 1;
                continue;
            }
            if !b.get(i + 1).is_some_and(|&c| is_name_start(c)) {
                // Not a variable (`::int`, `:'x'`): every colon here stays.
                while b.get(i) == Some(&b':') {
                    i += 1;
                }
                continue;
            }
            let mut end = i + 2;
            while b.get(end).is_some_and(|&c| is_name_byte(c)) {
                end += 1;
            }
            let id = names.intern(&text[i + 1..end]);
            if copied < i {
                parts.push(SqlPart::Text(copied..i));
            }
            parts.push(SqlPart::Var { id, raw: i..end });
            numbered.push_str(&text[copied..i]);
            question.push_str(&text[copied..i]);
            question.push('?');
            params.push(id);
            numbered.push('$');
            numbered.push_str(&params.len().to_string());
            copied = end;
            i = end;
        }
        if copied < b.len() {
            parts.push(SqlPart::Text(copied..b.len()));
        }
        numbered.push_str(&text[copied..]);
        question.push_str(&text[copied..]);
        SqlCommand {
            copies_through_client: copies_through_client(&text),
            text,
            parts,
            numbered,
            params,
            question,
            capture: None,
        }
    }

    /// Appends the SQL with each set variable's text in place of its
    /// `:name` (pgbench's simple mode: anywhere in the text, quotes and
    /// comments included); unset ones stay as written.
    pub fn write_substituted(&self, vars: &Variables, out: &mut String) {
        for part in &self.parts {
            match part {
                SqlPart::Text(r) => out.push_str(&self.text[r.clone()]),
                SqlPart::Var { id, raw } => {
                    if !vars.write_text(*id, out) {
                        out.push_str(&self.text[raw.clone()]);
                    }
                }
            }
        }
    }
}

/// A script that does not parse, with where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptError {
    pub source: String,
    /// 0 when the error is about the whole script.
    pub line: usize,
    pub message: String,
}

impl fmt::Display for ScriptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.source, self.message)
        } else {
            write!(f, "{}:{}: {}", self.source, self.line, self.message)
        }
    }
}

impl std::error::Error for ScriptError {}

/// Parses the text of a script named `source` (a file name, or a
/// built-in script's description). Variable names are numbered in `names`.
pub fn parse_script(
    source: &str,
    text: &str,
    weight: u32,
    names: &mut VarNames,
) -> Result<Script, ScriptError> {
    let error = |line: usize, message: String| ScriptError {
        source: source.to_string(),
        line,
        message,
    };
    let pieces = scan(text).map_err(|e| error(e.line, e.message))?;
    let mut commands: Vec<Command> = Vec::new();
    for piece in pieces {
        match piece {
            Piece::Sql { text, line } => {
                let first_line = first_line(&text);
                commands.push(Command {
                    line,
                    first_line,
                    kind: CommandKind::Sql(SqlCommand::new(text, names)),
                });
            }
            Piece::Meta { line, text, words } => {
                let meta = Meta {
                    text: &text,
                    words: &words,
                };
                match meta.parse(names) {
                    Ok(Parsed::Command(kind)) => commands.push(Command {
                        line,
                        first_line: first_line(&text),
                        kind,
                    }),
                    Ok(Parsed::Capture(capture)) => {
                        let what = match capture.kind {
                            CaptureKind::Gset => "gset",
                            CaptureKind::Aset => "aset",
                        };
                        match commands.last_mut().map(|c| &mut c.kind) {
                            Some(CommandKind::Sql(sql)) if sql.capture.is_none() => {
                                sql.capture = Some(capture);
                            }
                            _ => {
                                return Err(error(
                                    line,
                                    format!("\\{what} must follow an SQL command"),
                                ));
                            }
                        }
                    }
                    Err(message) => return Err(error(line, message)),
                }
            }
        }
    }
    if commands.is_empty() {
        return Err(error(
            0,
            format!("empty command list for script \"{source}\""),
        ));
    }
    link_conditionals(&mut commands).map_err(|(line, message)| error(line, message))?;
    Ok(Script {
        name: source.to_string(),
        weight,
        commands,
    })
}

/// The first line of a command, cut at 127 bytes (on a character
/// boundary), as pgbench shows commands.
fn first_line(text: &str) -> String {
    let line = text.split(['\n', '\r']).next().unwrap_or("");
    let mut end = line.len().min(127);
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    line[..end].to_string()
}

enum Parsed {
    Command(CommandKind),
    Capture(Capture),
}

/// A meta-command's line and its words.
struct Meta<'a> {
    text: &'a str,
    words: &'a [(usize, usize)],
}

impl Meta<'_> {
    fn word(&self, i: usize) -> &str {
        self.words.get(i).map_or("", |&(a, b)| &self.text[a..b])
    }

    /// The text after word `i` (an expression).
    fn rest_after(&self, i: usize) -> (usize, &str) {
        let start = self.words.get(i).map_or(self.text.len(), |&(_, b)| b);
        (start, &self.text[start..])
    }

    fn fail(&self, message: &str, detail: Option<&str>) -> String {
        let mut m = message.to_string();
        if let Some(d) = detail {
            m.push_str(&format!(" ({d})"));
        }
        m.push_str(&format!(" in command \"{}\": {}", self.word(0), self.text));
        m
    }

    fn expr(&self, after_word: usize, names: &mut VarNames) -> Result<Expr, String> {
        let (offset, src) = self.rest_after(after_word);
        parse_expr(src, names).map_err(|e| {
            let mut m = e.message.to_string();
            if let Some(d) = &e.detail {
                m.push_str(&format!(" ({d})"));
            }
            // pgbench's form: the command's line, then a caret under the
            // column where the error is.
            format!(
                "{m} in command \"{}\"\n{}\n{:>width$} error found here",
                self.word(0),
                self.text,
                "^",
                width = offset + e.offset + 1
            )
        })
    }

    /// `\set`'s variable: any name (pgbench refuses a bad one when it
    /// assigns it, so does the client).
    fn set_name(&self, i: usize, names: &mut VarNames) -> VarId {
        names.intern(self.word(i))
    }

    fn var_name(&self, i: usize, names: &mut VarNames) -> Result<VarId, String> {
        let name = self.word(i);
        if !valid_variable_name(name) {
            return Err(self.fail(
                "invalid variable name, use letters, digits and _, not starting with a digit",
                Some(name),
            ));
        }
        Ok(names.intern(name))
    }

    fn shell_words(&self, from: usize, names: &mut VarNames) -> Vec<ShellWord> {
        (from..self.words.len())
            .map(|i| {
                let w = self.word(i);
                match w.strip_prefix(':') {
                    Some(rest) if rest.starts_with(':') => ShellWord::Text(rest.to_string()),
                    Some(rest) => ShellWord::Var(names.intern(rest)),
                    None => ShellWord::Text(w.to_string()),
                }
            })
            .collect()
    }

    fn parse(&self, names: &mut VarNames) -> Result<Parsed, String> {
        let argc = self.words.len();
        // pgbench's limit on a meta-command's words (its name included).
        if argc > 256 {
            return Err(self.fail("too many arguments", None));
        }
        let name = self.word(0).to_ascii_lowercase();
        let kind = match name.as_str() {
            "set" => {
                if argc < 2 {
                    return Err(self.fail("missing argument", None));
                }
                let var = self.set_name(1, names);
                CommandKind::Set {
                    var,
                    expr: self.expr(1, names)?,
                }
            }
            "if" => CommandKind::If {
                cond: self.expr(0, names)?,
                next: 0,
            },
            "elif" => CommandKind::Elif {
                cond: self.expr(0, names)?,
                next: 0,
                end: 0,
            },
            "sleep" => self.sleep(names)?,
            "setshell" => {
                if argc < 3 {
                    return Err(self.fail("missing argument", None));
                }
                CommandKind::SetShell {
                    var: self.var_name(1, names)?,
                    words: self.shell_words(2, names),
                }
            }
            "shell" => {
                if argc < 2 {
                    return Err(self.fail("missing command", None));
                }
                CommandKind::Shell {
                    words: self.shell_words(1, names),
                }
            }
            "else" | "endif" | "startpipeline" | "endpipeline" => {
                if argc != 1 {
                    return Err(self.fail("unexpected argument", None));
                }
                match name.as_str() {
                    "else" => CommandKind::Else { end: 0 },
                    "endif" => CommandKind::Endif,
                    "startpipeline" => CommandKind::StartPipeline,
                    _ => CommandKind::EndPipeline,
                }
            }
            "gset" | "aset" => {
                if argc > 2 {
                    return Err(self.fail("too many arguments", None));
                }
                return Ok(Parsed::Capture(Capture {
                    kind: if name == "gset" {
                        CaptureKind::Gset
                    } else {
                        CaptureKind::Aset
                    },
                    prefix: self.word(1).to_string(),
                }));
            }
            _ => {
                return Err(format!(
                    "invalid command in command \"{}\" (known: \\set, \\sleep, \\setshell, \\shell, \\if, \\elif, \\else, \\endif, \\gset, \\aset, \\startpipeline, \\endpipeline): {}",
                    self.word(0),
                    self.text
                ));
            }
        };
        Ok(Parsed::Command(kind))
    }

    /// `\sleep n [unit]`, `\sleep nUNIT` or `\sleep :var [unit]`.
    fn sleep(&self, names: &mut VarNames) -> Result<CommandKind, String> {
        let argc = self.words.len();
        if argc < 2 {
            return Err(self.fail("missing argument", None));
        }
        if argc > 3 {
            return Err(self.fail("too many arguments", None));
        }
        let arg = self.word(1);
        let mut unit = (argc == 3).then(|| self.word(2));
        let amount = match arg.strip_prefix(':') {
            Some(var) => SleepAmount::Var(names.intern(var)),
            None => {
                let body = arg.strip_prefix(['+', '-']).unwrap_or(arg);
                let digits = body.bytes().take_while(u8::is_ascii_digit).count();
                let tail = &body[digits..];
                if !tail.is_empty() {
                    if argc == 2 && digits > 0 {
                        unit = Some(tail);
                    } else {
                        return Err(self.fail("invalid sleep time, must be an integer", Some(arg)));
                    }
                }
                SleepAmount::Number(atoi(&arg[..arg.len() - tail.len()]))
            }
        };
        let unit_us = match unit.map(str::to_ascii_lowercase).as_deref() {
            None | Some("s") => 1_000_000,
            Some("ms") => 1_000,
            Some("us") => 1,
            Some(other) => {
                return Err(self.fail("unrecognized time unit, must be us, ms or s", Some(other)));
            }
        };
        Ok(CommandKind::Sleep { amount, unit_us })
    }
}

/// C's `atoi`: leading blanks, a sign, digits; whatever follows is ignored
/// (saturating instead of overflowing).
pub(crate) fn atoi(s: &str) -> i64 {
    let t = s.trim_start();
    let (neg, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let mut v: i64 = 0;
    for b in t.bytes().take_while(u8::is_ascii_digit) {
        v = v.saturating_mul(10).saturating_add((b - b'0') as i64);
    }
    if neg { -v } else { v }
}

/// Matches each `\if` with its `\elif`s, `\else` and `\endif`, filling in
/// where each jumps, and reports a misplaced one.
fn link_conditionals(commands: &mut [Command]) -> Result<(), (usize, String)> {
    struct Open {
        /// The `\if` and its `\elif`s and `\else` so far.
        branches: Vec<usize>,
        has_else: bool,
    }
    let mut stack: Vec<Open> = Vec::new();
    for i in 0..commands.len() {
        let line = commands[i].line;
        match commands[i].kind {
            CommandKind::If { .. } => stack.push(Open {
                branches: vec![i],
                has_else: false,
            }),
            CommandKind::Elif { .. } | CommandKind::Else { .. } => {
                let is_else = matches!(commands[i].kind, CommandKind::Else { .. });
                let what = if is_else { "\\else" } else { "\\elif" };
                let Some(open) = stack.last_mut() else {
                    return Err((line, format!("{what} without matching \\if")));
                };
                if open.has_else {
                    return Err((line, format!("{what} after \\else")));
                }
                if let Some(&prev) = open.branches.last() {
                    set_next(&mut commands[prev].kind, i);
                }
                open.branches.push(i);
                open.has_else = is_else;
            }
            CommandKind::Endif => {
                let Some(open) = stack.pop() else {
                    return Err((line, "\\endif without matching \\if".into()));
                };
                if let Some(&prev) = open.branches.last() {
                    set_next(&mut commands[prev].kind, i);
                }
                for &b in &open.branches {
                    match &mut commands[b].kind {
                        CommandKind::Elif { end, .. } | CommandKind::Else { end } => *end = i,
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    if let Some(open) = stack.last() {
        let line = open.branches.first().map_or(0, |&b| commands[b].line);
        return Err((line, "\\if without matching \\endif".into()));
    }
    Ok(())
}

fn set_next(kind: &mut CommandKind, to: usize) {
    match kind {
        CommandKind::If { next, .. } | CommandKind::Elif { next, .. } => *next = to,
        _ => {}
    }
}

/// Whether an SQL command is a COPY whose data would come from or go to
/// the client (`FROM STDIN`, `TO STDOUT`).
fn copies_through_client(sql: &str) -> bool {
    let mut words = sql
        .split(|c: char| c.is_whitespace() || c == ';' || c == '(' || c == ')')
        .filter(|w| !w.is_empty());
    if !words.next().is_some_and(|w| w.eq_ignore_ascii_case("copy")) {
        return false;
    }
    let mut previous = "";
    for w in words {
        if (previous.eq_ignore_ascii_case("from") && w.eq_ignore_ascii_case("stdin"))
            || (previous.eq_ignore_ascii_case("to") && w.eq_ignore_ascii_case("stdout"))
        {
            return true;
        }
        previous = w;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Script, String> {
        parse_script("t.sql", text, 1, &mut VarNames::default()).map_err(|e| e.to_string())
    }

    fn kinds(s: &Script) -> Vec<&'static str> {
        s.commands.iter().map(|c| c.kind.name()).collect()
    }

    #[test]
    fn every_meta_command() {
        let s = parse(
            "\\set x 1\n\\sleep 10 ms\n\\sleep :x\n\\setshell y echo 1\n\\shell true :x ::y\n\
             \\if :x = 1\nSELECT 1 \\gset\n\\elif :x = 2\nSELECT 2 \\aset p_\n\\else\n\\endif\n\
             \\startpipeline\nSELECT 3;\n\\endpipeline\n",
        );
        let s = match s {
            Ok(s) => s,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(
            kinds(&s),
            [
                "set",
                "sleep",
                "sleep",
                "setshell",
                "shell",
                "if",
                "SQL",
                "elif",
                "SQL",
                "else",
                "endif",
                "startpipeline",
                "SQL",
                "endpipeline"
            ]
        );
        let lines: Vec<usize> = s.commands.iter().map(|c| c.line).collect();
        assert_eq!(lines, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]);
        assert!(matches!(
            s.commands[1].kind,
            CommandKind::Sleep {
                amount: SleepAmount::Number(10),
                unit_us: 1000
            }
        ));
        assert!(matches!(
            s.commands[2].kind,
            CommandKind::Sleep {
                amount: SleepAmount::Var(_),
                unit_us: 1_000_000
            }
        ));
        match &s.commands[4].kind {
            CommandKind::Shell { words } => {
                assert_eq!(words[0], ShellWord::Text("true".into()));
                assert!(matches!(words[1], ShellWord::Var(_)));
                assert_eq!(words[2], ShellWord::Text(":y".into()));
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            s.commands[5].kind,
            CommandKind::If { next: 7, .. }
        ));
        assert!(matches!(
            s.commands[7].kind,
            CommandKind::Elif {
                next: 9,
                end: 10,
                ..
            }
        ));
        assert!(matches!(s.commands[9].kind, CommandKind::Else { end: 10 }));
        match &s.commands[6].kind {
            CommandKind::Sql(q) => assert_eq!(
                q.capture,
                Some(Capture {
                    kind: CaptureKind::Gset,
                    prefix: String::new()
                })
            ),
            other => panic!("{other:?}"),
        }
        match &s.commands[8].kind {
            CommandKind::Sql(q) => assert_eq!(
                q.capture,
                Some(Capture {
                    kind: CaptureKind::Aset,
                    prefix: "p_".into()
                })
            ),
            other => panic!("{other:?}"),
        }
        assert_eq!(s.commands[0].first_line, "\\set x 1");
    }

    #[test]
    fn sleep_forms() {
        let unit = |src: &str| match parse(src).map(|s| s.commands[0].kind.clone()) {
            Ok(CommandKind::Sleep {
                amount: SleepAmount::Number(n),
                unit_us,
            }) => Ok((n, unit_us)),
            Ok(other) => Err(format!("{other:?}")),
            Err(e) => Err(e),
        };
        assert_eq!(unit("\\sleep 5"), Ok((5, 1_000_000)));
        assert_eq!(unit("\\sleep 5us"), Ok((5, 1)));
        assert_eq!(unit("\\sleep 5 MS"), Ok((5, 1000)));
        assert_eq!(unit("\\sleep -3 s"), Ok((-3, 1_000_000)));
    }

    #[test]
    fn errors_name_file_line_and_command() {
        let cases = [
            (
                "SELECT 1;\n\\set x 1 +",
                "t.sql:2: syntax error in command \"set\"\n\\set x 1 +\n          ^ error found here",
            ),
            (
                "SELECT 1;\n\n\\set x 1 ! 2",
                "t.sql:3: unexpected character (!) in command \"set\"\n\\set x 1 ! 2\n         ^ error found here",
            ),
            (
                "\\set x foo(1)",
                "t.sql:1: unexpected function name (foo) in command \"set\"\n\\set x foo(1)\n       ^ error found here",
            ),
            (
                "\\set",
                "t.sql:1: missing argument in command \"set\": \\set",
            ),
            (
                "\\setshell 1x echo 2",
                "t.sql:1: invalid variable name, use letters, digits and _, not starting with a digit (1x) in command \"setshell\": \\setshell 1x echo 2",
            ),
            (
                "\\sleep 1 min",
                "t.sql:1: unrecognized time unit, must be us, ms or s (min) in command \"sleep\": \\sleep 1 min",
            ),
            (
                "\\sleep abc",
                "t.sql:1: invalid sleep time, must be an integer (abc) in command \"sleep\": \\sleep abc",
            ),
            (
                "\\sleep 1 2 3",
                "t.sql:1: too many arguments in command \"sleep\": \\sleep 1 2 3",
            ),
            (
                "\\setshell x",
                "t.sql:1: missing argument in command \"setshell\": \\setshell x",
            ),
            (
                "\\shell",
                "t.sql:1: missing command in command \"shell\": \\shell",
            ),
            (
                "\\endpipeline x",
                "t.sql:1: unexpected argument in command \"endpipeline\": \\endpipeline x",
            ),
            ("\\gset", "t.sql:1: \\gset must follow an SQL command"),
            (
                "\\set x 1\n\\aset",
                "t.sql:2: \\aset must follow an SQL command",
            ),
            (
                "SELECT 1 \\gset\n\\gset",
                "t.sql:2: \\gset must follow an SQL command",
            ),
            (
                "SELECT 1 \\gset a b",
                "t.sql:1: too many arguments in command \"gset\": \\gset a b",
            ),
            (
                "SELECT 1;\n\\if true\nSELECT 2;",
                "t.sql:2: \\if without matching \\endif",
            ),
            ("\\else", "t.sql:1: \\else without matching \\if"),
            (
                "\\if 1\n\\else\n\\else\n\\endif",
                "t.sql:3: \\else after \\else",
            ),
            (
                "\\if 1\n\\else\n\\elif 2\n\\endif",
                "t.sql:3: \\elif after \\else",
            ),
            ("\\elif 1", "t.sql:1: \\elif without matching \\if"),
            (
                "SELECT 1;\n\\endif",
                "t.sql:2: \\endif without matching \\if",
            ),
            (
                "-- nothing\n",
                "t.sql: empty command list for script \"t.sql\"",
            ),
            ("SELECT 'x;\n", "t.sql:1: unterminated quoted string"),
        ];
        for (src, want) in cases {
            assert_eq!(parse(src).map(|_| ()), Err(want.to_string()), "{src}");
        }
        let e = parse("\\bogus").map(|_| ()).unwrap_err();
        assert!(
            e.starts_with("t.sql:1: invalid command in command \"bogus\""),
            "{e}"
        );
    }

    #[test]
    fn sql_variables_are_found_as_pgbench_finds_them() {
        let mut names = VarNames::default();
        let s = parse_script(
            "t.sql",
            "SELECT ':a', :a::int, x::text, :b, ':'':c' FROM t WHERE y = :undefined;",
            1,
            &mut names,
        );
        let Ok(s) = s else { panic!("{s:?}") };
        let CommandKind::Sql(q) = &s.commands[0].kind else {
            panic!()
        };
        let mut vars = Variables::new(&names);
        let a = names.get("a").unwrap_or(VarId(0));
        let b = names.get("b").unwrap_or(VarId(0));
        vars.set_text(a, "1");
        vars.set_value(b, super::super::value::Value::Double(0.5));
        let mut out = String::new();
        q.write_substituted(&vars, &mut out);
        // Inside quotes too (pgbench's simple mode does that); unset ones stay.
        assert_eq!(
            out,
            "SELECT '1', 1::int, x::text, 0.5, ':'':c' FROM t WHERE y = :undefined;"
        );
        assert_eq!(
            q.numbered,
            "SELECT '$1', $2::int, x::text, $3, ':''$4' FROM t WHERE y = $5;"
        );
        assert_eq!(q.params.len(), 5);
    }
}
