//! Every command's page, the general help and a workload's help.

use super::page::{Example, Page, Section};
use super::render::{self, examples, paragraph, render, row, spec_table};
use crate::commands;
use dbmeter_benchmarks::Benchmark;
use dbmeter_benchmarks::registry;
use std::fmt::Write as _;

const WORKLOAD_EXIT: &str = "0 ok, 1 failed (the target refused, a statement failed, \
    the run ended early; the report says how it ended), 2 usage error, 3 the run completed \
    but missed one of its --assert targets, 130 interrupted by Ctrl-C (SIGINT), 143 stopped \
    by SIGTERM: an interrupted run still prints and stores what it measured, marked \
    interrupted, and judges no target.";

const TARGET_SECTION: Section = Section {
    title: "Targets",
    body: &[
        "With no --db, dbmeter uses the SQLite file dbmeter.sqlite in the current \
         directory, and `run` prepares its tables when they are missing. Servers are \
         named by URL (--db=mysql://user@host:port/db, postgres://user@host/db) or by \
         sysbench's --mysql-* and --pgsql-* options; docs/connections.md says which \
         environment variables and client files are read.",
    ],
};

pub const RUN: Page = Page {
    usage: &[
        "run WORKLOAD [--option=value ...]",
        "WORKLOAD [--option=value ...] run",
    ],
    about: &[
        "Runs the workload against the target with --threads clients for --time \
         seconds (or --events events) and prints a report laid out like sysbench's: \
         queries by kind, transactions and queries per second, errors, latency \
         percentiles, fairness. --format=json or csv writes the whole result instead, \
         --output=FILE to a file; --store keeps it in the results store.",
        "sysbench's order (`dbmeter oltp_read_write --threads=4 run`) works too. \
         `dbmeter help WORKLOAD` lists a workload's own options.",
    ],
    general: true,
    sections: &[TARGET_SECTION],
    examples: &[
        Example {
            what: "A first benchmark on embedded SQLite (its table is prepared when missing)",
            command: "run oltp_read_write",
        },
        Example {
            what: "Eight clients for five minutes on MariaDB, a report line every 10 s",
            command: "run oltp_read_only --db=mysql://root@127.0.0.1/test --threads=8 \
                      --time=300 --report-interval=10",
        },
        Example {
            what: "Keep the result, labelled, for `dbmeter compare`",
            command: "run oltp_point_select --db=postgres://postgres@127.0.0.1/test \
                      --store --tag=phase=before",
        },
        Example {
            what: "The whole result as JSON in a file",
            command: "run tpcc --db=postgres://postgres@127.0.0.1/test --format=json \
                      --output=tpcc.json",
        },
    ],
    exit: WORKLOAD_EXIT,
    ..Page::new("run", "run a workload and report throughput and latency")
};

pub const PREPARE: Page = Page {
    usage: &["prepare WORKLOAD [--option=value ...]"],
    about: &[
        "Creates the workload's tables on the target and loads them (in parallel with \
         --threads), then adds the indexes. The options that shape the data \
         (--tables, --table-size, --scale-factor, --warehouses...) must be the same for \
         `run`.",
    ],
    general: true,
    sections: &[TARGET_SECTION],
    examples: &[
        Example {
            what: "Four tables of a million rows on PostgreSQL, loaded by four clients",
            command: "prepare oltp_read_write --db=postgres://postgres@127.0.0.1/test \
                      --tables=4 --table-size=1000000 --threads=4",
        },
        Example {
            what: "TPC-H data at scale factor 1 on MariaDB",
            command: "prepare tpch --db=mysql://root@127.0.0.1/test --scale-factor=1",
        },
    ],
    exit: WORKLOAD_EXIT,
    ..Page::new("prepare", "create and load the workload's tables")
};

pub const PREWARM: Page = Page {
    usage: &["prewarm WORKLOAD [--option=value ...]"],
    about: &[
        "Reads the workload's tables and indexes once, so that a run starts with warm \
         caches.",
    ],
    general: true,
    examples: &[Example {
        what: "Warm MariaDB's buffer pool before a read-only run",
        command: "prewarm oltp_read_only --db=mysql://root@127.0.0.1/test --tables=4",
    }],
    exit: WORKLOAD_EXIT,
    ..Page::new(
        "prewarm",
        "read the tables once so that a run starts with warm caches",
    )
};

pub const CLEANUP: Page = Page {
    usage: &["cleanup WORKLOAD [--option=value ...]"],
    about: &["Drops the workload's tables (and its state) from the target."],
    general: true,
    examples: &[Example {
        what: "Drop four sysbench tables",
        command: "cleanup oltp_read_write --db=mysql://root@127.0.0.1/test --tables=4",
    }],
    exit: WORKLOAD_EXIT,
    ..Page::new("cleanup", "drop the workload's tables")
};

pub const CHECK: Page = Page {
    usage: &["check WORKLOAD [--option=value ...]"],
    about: &[
        "Verifies the workload's data: row counts, the consistency conditions of TPC-C, \
         TPC-H's answers against the official ones (--validation) or against a second \
         target (--against).",
    ],
    general: true,
    examples: &[
        Example {
            what: "TPC-C's consistency conditions",
            command: "check tpcc --db=postgres://postgres@127.0.0.1/test --warehouses=10",
        },
        Example {
            what: "TPC-H's answers at SF 1 against the official ones",
            command: "check tpch --db=mysql://root@127.0.0.1/test --validation",
        },
    ],
    exit: "0 the data is right, 1 it is not (the line says where) or the check failed, \
           2 usage error.",
    ..Page::new(
        "check",
        "verify the workload's data (consistency conditions, answers)",
    )
};

pub const LIST: Page = Page {
    usage: &["list"],
    about: &["Lists the workloads with one line each."],
    exit: "0.",
    ..Page::new("list", "list the workloads")
};

pub const HELP: Page = Page {
    usage: &[
        "help [COMMAND | WORKLOAD]",
        "COMMAND --help",
        "help WORKLOAD",
    ],
    about: &[
        "Without an argument, the list of commands. With a command, its page (the same \
         as `dbmeter COMMAND --help`); with a workload, its commands and options. \
         `dbmeter man` prints all of it as a man page.",
    ],
    exit: "0, or 2 for an unknown topic.",
    ..Page::new(
        "help",
        "this help, a command's page or a workload's options",
    )
};

pub const VERSION: Page = Page {
    usage: &["version", "--version"],
    about: &["Prints dbmeter's version."],
    exit: "0.",
    ..Page::new("version", "print the version")
};

pub const COMPLETIONS: Page = Page {
    usage: &["completions bash|zsh|fish"],
    about: &[
        "Prints a completion script for the shell: commands, workloads, subcommands, \
         options (each workload's own after its name) and the words a choice option \
         takes. It is made from the option tables dbmeter parses with, so it knows \
         every option of this version.",
    ],
    examples: &[
        Example {
            what: "bash, for this shell",
            command: "completions bash | source /dev/stdin",
        },
        Example {
            what: "bash, for every new shell of this user",
            command: "completions bash > ~/.local/share/bash-completion/completions/dbmeter",
        },
        Example {
            what: "zsh (a directory on $fpath)",
            command: "completions zsh > ~/.zfunc/_dbmeter",
        },
        Example {
            what: "fish",
            command: "completions fish > ~/.config/fish/completions/dbmeter.fish",
        },
    ],
    exit: "0, or 2 for an unknown shell.",
    ..Page::new("completions", "a completion script for bash, zsh or fish")
};

pub const MAN: Page = Page {
    usage: &["man"],
    about: &[
        "Prints dbmeter's man page (roff, section 1): every command, workload and \
         option of this version.",
    ],
    examples: &[
        Example {
            what: "Read it",
            command: "man | man -l -",
        },
        Example {
            what: "Install it for this user",
            command: "man > ~/.local/share/man/man1/dbmeter.1",
        },
    ],
    exit: "0.",
    ..Page::new("man", "print the man page (roff)")
};

/// The commands that run a workload's verb.
pub const WORKLOAD_PAGES: &[&Page] = &[&PREPARE, &PREWARM, &RUN, &CHECK, &CLEANUP];

/// Every command's page, in the order the general help lists them.
pub fn all() -> Vec<&'static Page> {
    let mut v: Vec<&'static Page> = WORKLOAD_PAGES.to_vec();
    v.extend([
        &commands::server::PAGE,
        &commands::env::PAGE,
        &commands::results::PAGE,
        &commands::compare::PAGE,
        &commands::report::PAGE,
        &commands::merge::PAGE,
        &commands::digest::PAGE,
        &commands::compare_queries::PAGE,
        &commands::capture::PAGE,
        &commands::campaign::PAGE,
        &commands::sysbench::PAGE,
        &commands::pgbench::PAGE,
        &commands::slap::PAGE,
        &commands::slap::MYSQLSLAP_PAGE,
        &LIST,
        &HELP,
        &COMPLETIONS,
        &MAN,
        &VERSION,
    ]);
    v
}

/// The page of the command `name`.
pub fn page_named(name: &str) -> Option<&'static Page> {
    all().into_iter().find(|p| p.name == name)
}

/// The text `dbmeter help NAME` and `dbmeter NAME --help` print: the
/// page, and for the workload commands the workloads.
pub fn page_text(page: &Page, width: usize) -> String {
    let mut out = render(page, width);
    if WORKLOAD_PAGES.iter().any(|w| w.name == page.name) {
        out.push_str("\n\n");
        paragraph(
            &mut out,
            "Workloads (`dbmeter help WORKLOAD` lists a workload's options):",
            0,
            width,
        );
        for w in registry::all() {
            row(&mut out, 2, w.name(), w.summary(), 26, width);
        }
    }
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// A command's left column in the general help.
fn command_left(p: &Page) -> String {
    let args = if WORKLOAD_PAGES.iter().any(|w| w.name == p.name) {
        " WORKLOAD"
    } else if !p.subs.is_empty() {
        " COMMAND"
    } else {
        match p.name {
            "help" => " [TOPIC]",
            "completions" => " SHELL",
            "sysbench" => " ARGS...",
            "pgbench" => " [ARGS]",
            "mysqlslap" => " [ARGS]",
            _ => "",
        }
    };
    format!("{}{args}", p.name)
}

/// `dbmeter help`.
pub fn general_help(width: usize) -> String {
    let mut out = String::new();
    paragraph(
        &mut out,
        &format!(
            "dbmeter {}: benchmark databases (MariaDB/MySQL, PostgreSQL, embedded \
             SQLite) with sysbench's workloads, TPC-C and TPC-H, and compare the results.",
            commands::VERSION
        ),
        0,
        width,
    );
    out.push_str("\nUsage: dbmeter COMMAND [WORKLOAD] [--option=value ...]\n\nCommands:\n");
    for p in all() {
        row(&mut out, 2, &command_left(p), p.summary, 26, width);
    }
    row(
        &mut out,
        2,
        "VERB WORKLOAD",
        "a workload's own command (`dbmeter help WORKLOAD` lists them)",
        26,
        width,
    );
    out.push('\n');
    paragraph(
        &mut out,
        "With no --db, dbmeter uses the SQLite file dbmeter.sqlite in the current \
         directory, and `run` prepares its tables when they are missing. `run --store` \
         also saves the result in the results store. `dbmeter help COMMAND` (or \
         `dbmeter COMMAND --help`) shows a command's options; `dbmeter help run` the \
         general options every workload command takes.",
        0,
        width,
    );
    out.push('\n');
    examples(
        &mut out,
        &[
            Example {
                what: "A first benchmark on embedded SQLite",
                command: "run oltp_read_write",
            },
            Example {
                what: "A throwaway MariaDB server (it prints its --db URL)",
                command: "server start mariadb",
            },
            Example {
                what: "Sixteen clients for a minute on it (prepare first)",
                command: "run oltp_read_only --db=mysql://root@127.0.0.1:PORT/test \
                          --threads=16 --time=60",
            },
        ],
        width,
    );
    out.push_str("Workloads: `dbmeter list`. All of it: `dbmeter man`.\n");
    out
}

/// `dbmeter help WORKLOAD`: its commands, its options and the general
/// options.
pub fn workload_help(w: &dyn Benchmark, width: usize) -> String {
    let mut out = String::new();
    paragraph(
        &mut out,
        &format!("{}: {}", w.name(), w.summary()),
        0,
        width,
    );
    out.push('\n');
    let verbs = w.verbs();
    let mut names: Vec<&str> = verbs.iter().map(|v| v.name.as_ref()).collect();
    // run comes after the commands that get the data ready.
    let at = names
        .iter()
        .rposition(|n| matches!(*n, "prepare" | "prewarm"))
        .map_or(0, |i| i + 1);
    names.insert(at, "run");
    let mut usage = String::new();
    render::command_line(
        &mut usage,
        &format!("{} {} [options]", names.join("|"), w.name()),
        0,
        width.saturating_sub(7),
    );
    for (i, l) in usage.lines().enumerate() {
        let lead = if i == 0 { "Usage: " } else { "       " };
        let _ = writeln!(out, "{lead}{l}");
    }
    out.push('\n');
    if !verbs.is_empty() {
        out.push_str("Commands:\n");
        for v in &verbs {
            row(&mut out, 2, &v.name, &v.help, 14, width);
        }
        row(
            &mut out,
            2,
            "run",
            "run the benchmark and report throughput and latency",
            14,
            width,
        );
        out.push('\n');
    }
    let own = w.options();
    if own.is_empty() {
        out.push_str("This workload has no options of its own.\n");
    } else {
        paragraph(
            &mut out,
            &format!(
                "Options of {} (dashes and underscores are alike):",
                w.name()
            ),
            0,
            width,
        );
        spec_table(&mut out, &own, width);
    }
    out.push('\n');
    let name = w.name();
    let prepare = verbs.iter().any(|v| v.name == "prepare");
    let mut ex = Vec::new();
    let prepare_line = format!("prepare {name} --db=postgres://postgres@127.0.0.1/test");
    // A benchmark without a database runs with no target.
    let (run_line, who) = if w.needs_database() {
        (
            format!("run {name} --db=postgres://postgres@127.0.0.1/test --threads=4 --time=60"),
            "Four clients for a minute",
        )
    } else {
        (
            format!("run {name} --threads=4 --time=60"),
            "Four threads for a minute",
        )
    };
    if prepare {
        ex.push((
            "Load its data on PostgreSQL".to_string(),
            prepare_line.clone(),
        ));
    }
    ex.push((who.to_string(), run_line));
    let own_examples = w.examples();
    if !own_examples.is_empty() {
        ex = own_examples;
    }
    out.push_str("Examples:\n");
    for (i, (what, cmd)) in ex.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        paragraph(&mut out, &format!("{what}:"), 2, width);
        render::command_line(&mut out, cmd, 4, width);
    }
    out.push_str("\nGeneral options:\n");
    spec_table(&mut out, dbmeter_run::options::GENERAL, width);
    out
}

/// Prints the page `dbmeter help NAME` shows.
pub fn print_page(page: &Page) -> Result<i32, crate::CliError> {
    print!("{}", page_text(page, render::width()));
    Ok(0)
}

/// What `dbmeter help ...` or `dbmeter ... --help` asks for, as text;
/// None when `args` asks for no help.
pub fn help_request(args: &[String]) -> Result<Option<String>, crate::CliError> {
    let asks = args.first().is_some_and(|a| a == "help")
        || args.iter().any(|a| a == "-h" || a == "--help");
    if !asks {
        return Ok(None);
    }
    let width = render::width();
    let after_help = args.first().is_some_and(|a| a == "help");
    let words: Vec<&str> = args
        .iter()
        .skip(usize::from(after_help))
        .map(String::as_str)
        .filter(|a| !a.starts_with('-'))
        .collect();
    // `dbmeter help --help` is help's own page, as `COMMAND --help` is.
    if after_help && words.is_empty() && args.len() > 1 {
        return Ok(Some(page_text(&HELP, width)));
    }
    let workload = words.iter().find_map(|w| {
        registry::find(w).or_else(|| {
            registry::looks_like_path(w)
                .then(|| registry::resolve(w).ok())
                .flatten()
        })
    });
    let page = words.iter().find_map(|w| page_named(w));
    let text = match (page, workload) {
        // `help run oltp_read_write`, `run tpch --help`: the workload's page.
        (Some(p), Some(w)) if WORKLOAD_PAGES.iter().any(|x| x.name == p.name) => {
            workload_help(w.as_ref(), width)
        }
        (Some(p), _) => page_text(p, width),
        (None, Some(w)) => workload_help(w.as_ref(), width),
        (None, None) => match words.first() {
            None => general_help(width),
            // `server start --help` and the like are found above; a word
            // that is no topic is a mistake only after `help`.
            Some(w) if after_help => {
                let names: Vec<&str> = all().iter().map(|p| p.name).collect();
                let workloads = registry::all();
                let hint = crate::args::closest(
                    w,
                    names
                        .iter()
                        .copied()
                        .chain(workloads.iter().map(|x| x.name())),
                )
                .map(|c| format!("; did you mean {c}?"))
                .unwrap_or_default();
                return Err(crate::CliError::Usage(format!(
                    "no help on '{w}'{hint}: `dbmeter help` lists the commands, \
                     `dbmeter list` the workloads"
                )));
            }
            Some(_) => general_help(width),
        },
    };
    Ok(Some(text))
}
