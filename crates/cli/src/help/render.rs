//! A page as text, wrapped to a width.

use super::page::{Example, Opt, Page, Section, Sub};
use dbmeter_benchmarks::options::{OptKind, OptSpec};
use std::fmt::Write as _;

/// The width help is wrapped to: `COLUMNS` when set, else the terminal's
/// (standard output's), 80 when it is not a terminal; between 40 and 100.
pub fn width() -> usize {
    let w = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .unwrap_or_else(textwrap::termwidth);
    w.clamp(40, 100)
}

/// Wrapping at spaces only: option names and words like `select-only`
/// stay whole.
fn wrap_options(width: usize) -> textwrap::Options<'static> {
    textwrap::Options::new(width).word_splitter(textwrap::WordSplitter::NoHyphenation)
}

/// `text` wrapped to `width`, every line starting with `indent` spaces.
pub(crate) fn paragraph(out: &mut String, text: &str, indent: usize, width: usize) {
    let pad = " ".repeat(indent);
    if text.lines().all(|l| l.starts_with("  ") || l.is_empty()) && !text.is_empty() {
        // Written as it is to be shown (a table, a command list).
        for l in text.lines() {
            let _ = writeln!(out, "{pad}{}", l.strip_prefix("  ").unwrap_or(l));
        }
        return;
    }
    let opts = wrap_options(width.saturating_sub(indent).max(20));
    for line in textwrap::wrap(&text.split_whitespace().collect::<Vec<_>>().join(" "), opts) {
        let _ = writeln!(out, "{pad}{line}");
    }
}

/// One row of a two-column list: `left` at `indent`, `help` from column
/// `col` (on the next line when `left` is too wide), wrapped to `width`.
pub(crate) fn row(
    out: &mut String,
    indent: usize,
    left: &str,
    help: &str,
    col: usize,
    width: usize,
) {
    let col = if width < 60 { indent + 4 } else { col };
    let help_width = width.saturating_sub(col).max(20);
    let lines = textwrap::wrap(help, wrap_options(help_width));
    let mut first = format!("{}{left}", " ".repeat(indent));
    let mut rest = lines.iter();
    if first.len() < col {
        if let Some(l) = rest.next() {
            first = format!("{first:<col$}{l}");
        }
        let _ = writeln!(out, "{first}");
    } else {
        // The left part alone (wrapped at `|` when even that is too wide).
        if first.len() > width {
            let parts: Vec<&str> = left.split_inclusive('|').collect();
            let mut line = " ".repeat(indent);
            for p in parts {
                if line.len() + p.len() > width && !line.trim().is_empty() {
                    let _ = writeln!(out, "{line}");
                    line = " ".repeat(indent + 4);
                }
                line.push_str(p);
            }
            let _ = writeln!(out, "{line}");
        } else {
            let _ = writeln!(out, "{first}");
        }
    }
    for l in rest {
        let _ = writeln!(out, "{}{l}", " ".repeat(col));
    }
}

pub(crate) fn with_default(help: &str, default: &str) -> String {
    if default.is_empty() {
        help.to_string()
    } else {
        format!("{help} [{default}]")
    }
}

/// What a workload option's value looks like.
pub(crate) fn value_hint(kind: &OptKind) -> String {
    match kind {
        OptKind::Size | OptKind::Int => "N".into(),
        OptKind::Float => "X".into(),
        OptKind::Bool => "[on|off]".into(),
        OptKind::Str => "STRING".into(),
        OptKind::Choice(c) => c.join("|"),
        OptKind::FloatList => "LIST".into(),
    }
}

/// A table of the option specs the run options and benchmarks declare.
pub(crate) fn spec_table(out: &mut String, specs: &[OptSpec], width: usize) {
    for s in specs {
        let left = format!("--{}={}", s.name, value_hint(&s.kind));
        row(out, 2, &left, &with_default(&s.help, &s.default), 30, width);
    }
}

pub(crate) fn opt_table(out: &mut String, opts: &[Opt], indent: usize, width: usize) {
    for o in opts {
        row(
            out,
            indent,
            &o.left(),
            &with_default(o.help, o.default),
            26 + indent.saturating_sub(2),
            width,
        );
    }
}

fn subs(out: &mut String, subs: &[Sub], width: usize) {
    out.push_str("Commands:\n");
    for s in subs {
        let left = if s.args.is_empty() {
            s.name.to_string()
        } else {
            format!("{} {}", s.name, s.args)
        };
        row(out, 2, &left, s.help, 26, width);
        opt_table(out, s.options, 6, width);
    }
    out.push('\n');
}

/// `dbmeter COMMAND`, cut with ` \` where it is wider than `width`.
pub(crate) fn command_line(out: &mut String, command: &str, indent: usize, width: usize) {
    let mut line = format!("{}dbmeter", " ".repeat(indent));
    for word in command.split(' ') {
        if line.len() + 1 + word.len() + 2 > width {
            let _ = writeln!(out, "{line} \\");
            line = " ".repeat(indent + 4);
            line.push_str(word);
        } else {
            line.push(' ');
            line.push_str(word);
        }
    }
    let _ = writeln!(out, "{line}");
}

pub(crate) fn examples(out: &mut String, examples: &[Example], width: usize) {
    if examples.is_empty() {
        return;
    }
    out.push_str("Examples:\n");
    for (i, e) in examples.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        paragraph(out, &format!("{}:", e.what), 2, width);
        command_line(out, e.command, 4, width);
    }
    out.push('\n');
}

pub(crate) fn sections(out: &mut String, sections: &[Section], width: usize) {
    for s in sections {
        paragraph(out, &format!("{}:", s.title), 0, width);
        for p in s.body {
            paragraph(out, p, 2, width);
        }
        out.push('\n');
    }
}

/// `page` as text for a terminal `width` columns wide.
pub fn render(page: &Page, width: usize) -> String {
    let mut out = String::new();
    for (i, u) in page.usage.iter().enumerate() {
        let lead = if i == 0 { "Usage: " } else { "       " };
        let mut line = String::new();
        command_line(&mut line, u, 0, width.saturating_sub(7));
        for (j, l) in line.lines().enumerate() {
            let lead = if j == 0 { lead } else { "       " };
            let _ = writeln!(out, "{lead}{l}");
        }
    }
    out.push('\n');
    for p in page.about {
        paragraph(&mut out, p, 0, width);
        out.push('\n');
    }
    if !page.subs.is_empty() {
        subs(&mut out, page.subs, width);
    }
    if !page.options.is_empty() {
        out.push_str(if page.subs.is_empty() {
            "Options:\n"
        } else {
            "Options of every command:\n"
        });
        opt_table(&mut out, page.options, 2, width);
        out.push('\n');
    }
    if !page.specs.is_empty() {
        out.push_str("Options:\n");
        spec_table(&mut out, page.specs, width);
        out.push('\n');
    }
    if page.general {
        out.push_str("General options:\n");
        spec_table(&mut out, dbmeter_run::options::GENERAL, width);
        out.push('\n');
    }
    sections(&mut out, page.sections, width);
    examples(&mut out, page.examples, width);
    if !page.exit.is_empty() {
        paragraph(&mut out, &format!("Exit codes: {}", page.exit), 0, width);
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_wrap_and_keep_columns() {
        let mut out = String::new();
        row(&mut out, 2, "--x=N", &"word ".repeat(30), 26, 60);
        for l in out.lines() {
            assert!(l.len() <= 60, "{l:?}");
        }
        assert!(out.starts_with("  --x=N"), "{out}");
        assert!(out.lines().nth(1).unwrap().starts_with(&" ".repeat(26)));
        // Hyphenated words and option names are not cut at their hyphens.
        let mut out = String::new();
        row(
            &mut out,
            2,
            "--x",
            "create the tables unlogged (pgbench --unlogged-tables; x)",
            26,
            60,
        );
        assert!(out.contains("--unlogged-tables"), "{out}");
        let mut out = String::new();
        row(
            &mut out,
            2,
            &"--long-option-name=A|B|C".repeat(4),
            "help",
            26,
            60,
        );
        for l in out.lines() {
            assert!(l.len() <= 60, "{l:?}");
        }
    }

    #[test]
    fn long_commands_are_cut_with_backslashes() {
        let mut out = String::new();
        command_line(&mut out, &"--opt=value ".repeat(12), 4, 50);
        assert!(out.lines().count() > 1);
        for l in out.lines() {
            assert!(l.len() <= 50, "{l:?}");
        }
        assert!(out.lines().next().unwrap().ends_with(" \\"));
    }
}
