//! What a command's page is made of. Each command keeps its page beside
//! its code (`commands/*.rs`), and its parser takes the options from it.

use dbmeter_benchmarks::options::OptSpec;

/// An option of a command that is not a workload command.
#[derive(Clone, Copy, Debug)]
pub struct Opt {
    /// Without dashes, e.g. `format`.
    pub name: &'static str,
    /// What the value looks like, e.g. `text|csv|json`; empty for a flag
    /// (`--yes`, `--yes=off`).
    pub value: &'static str,
    pub help: &'static str,
    /// Shown as `[default]` after the help; empty for none.
    pub default: &'static str,
    /// The value may be left out (`--store` alone: the default store).
    pub bare: bool,
}

/// An option that takes a value.
pub const fn opt(name: &'static str, value: &'static str, help: &'static str) -> Opt {
    Opt {
        name,
        value,
        help,
        default: "",
        bare: false,
    }
}

/// An option that takes no value.
pub const fn flag(name: &'static str, help: &'static str) -> Opt {
    opt(name, "", help)
}

impl Opt {
    pub const fn default(self, default: &'static str) -> Opt {
        Opt { default, ..self }
    }

    /// The value may be left out.
    pub const fn bare(self) -> Opt {
        Opt { bare: true, ..self }
    }

    pub fn is_flag(&self) -> bool {
        self.value.is_empty()
    }

    /// `--name=VALUE` or `--name`.
    pub fn left(&self) -> String {
        if self.is_flag() {
            format!("--{}", self.name)
        } else {
            format!("--{}={}", self.name, self.value)
        }
    }
}

/// A subcommand (`results list`, `server start`).
#[derive(Clone, Copy, Debug)]
pub struct Sub {
    pub name: &'static str,
    /// Its arguments as shown, e.g. `[SELECTORS]` or `mariadb|postgres`.
    pub args: &'static str,
    pub help: &'static str,
    /// Options only this subcommand takes.
    pub options: &'static [Opt],
}

/// A titled part of a page: paragraphs, wrapped to the width; a paragraph
/// whose lines start with two spaces is kept as written.
#[derive(Clone, Copy, Debug)]
pub struct Section {
    pub title: &'static str,
    pub body: &'static [&'static str],
}

#[derive(Clone, Copy, Debug)]
pub struct Example {
    /// The command line, without the leading `dbmeter `.
    pub command: &'static str,
    pub what: &'static str,
}

/// The description of one command: what its help shows, what its man
/// page section says, what completions offer, and which options its
/// parser accepts.
#[derive(Clone, Copy, Debug)]
pub struct Page {
    /// The command word, e.g. `results`.
    pub name: &'static str,
    /// One line, for the command list and completions.
    pub summary: &'static str,
    /// Usage lines, without the leading `dbmeter `.
    pub usage: &'static [&'static str],
    /// Paragraphs saying what the command does.
    pub about: &'static [&'static str],
    pub subs: &'static [Sub],
    /// Options of the command (of every subcommand when it has some).
    pub options: &'static [Opt],
    /// Options of a command read like a workload command's (`env`), as
    /// the workload option specs are.
    pub specs: &'static [OptSpec],
    /// Whether it takes the general options (target, engine, output).
    pub general: bool,
    pub sections: &'static [Section],
    pub examples: &'static [Example],
    /// Exit codes, one paragraph.
    pub exit: &'static str,
}

impl Page {
    pub const fn new(name: &'static str, summary: &'static str) -> Page {
        Page {
            name,
            summary,
            usage: &[],
            about: &[],
            subs: &[],
            options: &[],
            specs: &[],
            general: false,
            sections: &[],
            examples: &[],
            exit: "",
        }
    }

    /// The options `sub` accepts (the page's own when `sub` is None or
    /// unknown): the page's and the subcommand's.
    pub fn options_of(&self, sub: Option<&str>) -> Vec<Opt> {
        let mut v = self.options.to_vec();
        if let Some(s) = self.subs.iter().find(|s| Some(s.name) == sub) {
            v.extend_from_slice(s.options);
        }
        v
    }

    /// Every option of the page and of its subcommands, each name once.
    pub fn all_options(&self) -> Vec<Opt> {
        let mut v: Vec<Opt> = self.options.to_vec();
        for s in self.subs {
            for o in s.options {
                if !v.iter().any(|x| x.name == o.name) {
                    v.push(*o);
                }
            }
        }
        v
    }
}
