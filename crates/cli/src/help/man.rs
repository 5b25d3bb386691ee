//! The man page, in roff (`man -l` reads it), made from the same pages
//! and option tables as the help.

use super::page::{Example, Opt, Page, Section};
use super::pages::{self, WORKLOAD_PAGES};
use super::render::{value_hint, with_default};
use crate::commands::VERSION;
use dbmeter_benchmarks::options::OptSpec;
use dbmeter_benchmarks::registry;
use std::fmt::Write as _;

/// Text made safe for roff: backslashes, dashes (so that options can be
/// copied), and a leading dot or quote that would read as a request.
fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\e"),
            '-' => out.push_str("\\-"),
            _ => out.push(c),
        }
    }
    if out.starts_with('.') || out.starts_with('\'') {
        out.insert_str(0, "\\&");
    }
    out
}

/// A paragraph: flowed text, or (lines starting with two spaces) kept as
/// written.
fn para(out: &mut String, text: &str) {
    if text.lines().all(|l| l.starts_with("  ") || l.is_empty()) && !text.is_empty() {
        out.push_str(".PP\n.RS 4\n.nf\n");
        for l in text.lines() {
            let _ = writeln!(out, "{}", esc(l.trim_start()));
        }
        out.push_str(".fi\n.RE\n");
    } else {
        let _ = writeln!(
            out,
            ".PP\n{}",
            esc(&text.split_whitespace().collect::<Vec<_>>().join(" "))
        );
    }
}

fn tagged(out: &mut String, tag: &str, text: &str) {
    let _ = writeln!(out, ".TP\n.B {}\n{}", esc(tag), esc(text));
}

fn opts(out: &mut String, opts: &[Opt]) {
    for o in opts {
        tagged(out, &o.left(), &with_default(o.help, o.default));
    }
}

fn specs(out: &mut String, specs: &[OptSpec]) {
    for s in specs {
        let left = format!("--{}={}", s.name, value_hint(&s.kind));
        tagged(out, &left, &with_default(&s.help, &s.default));
    }
}

fn examples(out: &mut String, examples: &[Example]) {
    for e in examples {
        let _ = writeln!(
            out,
            ".PP\n{}:\n.RS 4\n.nf\ndbmeter {}\n.fi\n.RE",
            esc(e.what),
            esc(e.command)
        );
    }
}

fn sections(out: &mut String, sections: &[Section]) {
    for s in sections {
        let _ = writeln!(out, ".PP\n.I {}", esc(s.title));
        for p in s.body {
            para(out, p);
        }
    }
}

fn page(out: &mut String, p: &Page) {
    let _ = writeln!(out, ".SS {}", esc(&format!("dbmeter {}", p.name)));
    out.push_str(".nf\n");
    for u in p.usage {
        let _ = writeln!(out, "dbmeter {}", esc(u));
    }
    out.push_str(".fi\n");
    for a in p.about {
        para(out, a);
    }
    for s in p.subs {
        let left = if s.args.is_empty() {
            s.name.to_string()
        } else {
            format!("{} {}", s.name, s.args)
        };
        tagged(out, &left, s.help);
        if !s.options.is_empty() {
            out.push_str(".RS 4\n");
            opts(out, s.options);
            out.push_str(".RE\n");
        }
    }
    opts(out, p.options);
    specs(out, p.specs);
    if p.general {
        out.push_str(".PP\nAnd the general options (see GENERAL OPTIONS).\n");
    }
    sections(out, p.sections);
    examples(out, p.examples);
    if !p.exit.is_empty() {
        para(out, &format!("Exit codes: {}", p.exit));
    }
}

/// The whole man page.
pub fn man_page() -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        ".TH DBMETER 1 \"\" \"dbmeter {VERSION}\" \"User Commands\"\n.SH NAME\n\
         dbmeter \\- benchmark MariaDB/MySQL, PostgreSQL and SQLite databases\n\
         .SH SYNOPSIS\n.B dbmeter\n.I COMMAND\n[\\fIWORKLOAD\\fR] [\\fB\\-\\-option\\fR=\\fIvalue\\fR ...]\n\
         .SH DESCRIPTION"
    );
    para(
        &mut out,
        "dbmeter runs sysbench's OLTP workloads with the same SQL, option names and \
         counting, a TPC-C-like and a TPC-H-like workload, and measures latency exactly \
         (HDR histograms, any percentiles, per interval and in total). It drives \
         embedded SQLite, MariaDB/MySQL and PostgreSQL with clients of its own, starts \
         managed servers, runs campaigns of many runs from a TOML file, stores results, \
         compares them with a baseline and writes HTML reports.",
    );
    para(
        &mut out,
        "With no --db, dbmeter uses the SQLite file dbmeter.sqlite in the current \
         directory, and run prepares its tables when they are missing. Options may be \
         written --name=value or --name value; dashes and underscores in names are alike.",
    );
    out.push_str(".SH COMMANDS\n");
    for p in pages::all() {
        page(&mut out, p);
    }
    out.push_str(".SH GENERAL OPTIONS\n");
    let names: Vec<&str> = WORKLOAD_PAGES.iter().map(|p| p.name).collect();
    para(
        &mut out,
        &format!(
            "The workload commands ({}, and a workload's own) and env take these.",
            names.join(", ")
        ),
    );
    specs(&mut out, dbmeter_run::options::GENERAL);
    out.push_str(".SH WORKLOADS\n");
    for w in registry::all() {
        let _ = writeln!(out, ".SS {}", esc(w.name()));
        para(&mut out, w.summary());
        for v in w.verbs() {
            tagged(
                &mut out,
                &format!("dbmeter {} {}", v.name, w.name()),
                &v.help,
            );
        }
        let own = w.options();
        if !own.is_empty() {
            out.push_str(".PP\nOptions:\n");
            specs(&mut out, &own);
        }
    }
    out.push_str(".SH ENVIRONMENT\n");
    for (name, what) in ENVIRONMENT {
        tagged(&mut out, name, what);
    }
    out.push_str(".SH FILES\n");
    tagged(
        &mut out,
        "$DBMETER_HOME/results.db",
        "the default results store",
    );
    tagged(
        &mut out,
        "$DBMETER_HOME/servers/",
        "managed servers and their snapshots",
    );
    tagged(
        &mut out,
        "dbmeter.sqlite",
        "the SQLite database used when no --db is given",
    );
    tagged(
        &mut out,
        "~/.pgpass, ~/.pg_service.conf",
        "PostgreSQL passwords and services, read as libpq reads them",
    );
    tagged(
        &mut out,
        "~/.my.cnf",
        "the [client] group (user, password, host, port, socket, database) for \
         MariaDB/MySQL targets; --defaults-file names another file",
    );
    out.push_str(".SH EXIT STATUS\n");
    para(
        &mut out,
        "0 success; 1 failure (a refused connection, a failed statement, a run that \
         ended early, a check that found wrong data); 2 usage error; 3 (server status) \
         not running; 130 interrupted by SIGINT; 143 stopped by SIGTERM. An interrupted \
         run still prints and stores what it measured, marked as such.",
    );
    out.push_str(".SH SEE ALSO\nsysbench(1), pgbench(1), mariadb(1), psql(1)\n");
    out
}

/// The environment variables dbmeter reads.
const ENVIRONMENT: &[(&str, &str)] = &[
    (
        "DBMETER_HOME",
        "where managed servers and the default results store live [/var/lib/dbmeter for \
         root, else ~/.local/share/dbmeter]",
    ),
    ("DBMETER_STORE", "the results store when --store gives none"),
    (
        "PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE, PGSSLMODE, PGSSLROOTCERT, \
         PGAPPNAME, PGPASSFILE, PGSERVICE, PGSERVICEFILE, PGSYSCONFDIR, PGCONNECT_TIMEOUT",
        "PostgreSQL targets (and a PostgreSQL results store) read libpq's variables \
         and files, as psql does (see docs/connections.md)",
    ),
    (
        "MYSQL_HOST, MYSQL_TCP_PORT, MYSQL_UNIX_PORT, MYSQL_PWD",
        "MariaDB/MySQL targets read the client's variables and ~/.my.cnf, as the \
         mariadb client does; localhost is the Unix socket (see docs/connections.md)",
    ),
    (
        "COLUMNS",
        "the width help is wrapped to [the terminal's, 80 when not a terminal]",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roff_requests_and_dashes_are_escaped() {
        assert_eq!(esc(".x --y"), "\\&.x \\-\\-y");
        assert_eq!(esc("a\\b"), "a\\eb");
        let page = man_page();
        assert!(page.starts_with(".TH DBMETER 1"));
        assert!(page.contains("\\-\\-threads=N"), "general options");
        assert!(page.contains(".SS tpch"), "workloads");
        assert!(page.contains("dbmeter completions"), "commands");
    }
}
