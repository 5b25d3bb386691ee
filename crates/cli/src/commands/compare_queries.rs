//! `dbmeter compare-queries`: the same queries on two targets, query by
//! query (`dbmeter_querycmp` collects, filters and lays out; this parses
//! the command line and writes).

use super::results::parse_args;
use crate::CliError;
use crate::help::{Example, Page, Section, flag, opt};
use dbmeter_filter::Expr;
use dbmeter_querycmp::{Comparison, Setup, render, sources, vars};
use std::path::Path;
use std::time::Duration;

pub const PAGE: Page = Page {
    usage: &[
        "compare-queries --db=A --db=B (LOG... | --file=FILE | --dir=DIR | --query=SQL...) [--runs=N] [--where=FILTER] [--format=text|json|html] [--output=FILE] [--save=FILE]",
        "compare-queries --from=FILE [--where=FILTER] [--format=text|json|html] [--output=FILE]",
    ],
    about: &[
        "Runs each query of a set on two targets, A and B (MariaDB/MySQL, PostgreSQL or \
         SQLite, the same kind or not), cold and then warm, and reports the queries that \
         differ, as RQG's perfrun and perfreport do: each side's time, rows, a checksum of \
         the result, warnings and errors, and on MariaDB/MySQL the session status counters \
         (Handler_*, Innodb_rows_read, Created_tmp_*, Sort_*, Select_*) before and after, \
         on PostgreSQL EXPLAIN (ANALYZE, BUFFERS)'s buffers and times.",
        "Cold: a server dbmeter manages (`dbmeter server start`) is restarted and the page \
         cache dropped before the query's cold run on it; an SQLite file is opened again; \
         on any other server the cold run is the query's first execution, and the report \
         says \"first execution, not cold\". Then --runs warm executions alternate A and B; \
         the median time is reported.",
        "The queries: the classes of query logs (LOG, any format `dbmeter digest` reads: \
         one query per class, its worst sample, reading statements only), the statements \
         of a file cut at ; outside quotes and comments, the .sql files of a directory, or \
         --query statements. Statements run as they are, writes too: compare copies.",
    ],
    options: &[
        opt(
            "db",
            "URL",
            "a target: give it twice, A then B (sqlite:PATH, mysql://..., postgres://...)",
        ),
        opt(
            "file",
            "FILE",
            "a file of SQL statements separated by ; (repeat for more files)",
        ),
        opt("dir", "DIR", "every .sql file of DIR, in name order"),
        opt("query", "SQL", "one statement (repeat for more)"),
        opt(
            "limit",
            "N",
            "from logs: the N classes with the most total time, 0 for all",
        )
        .default("20"),
        opt(
            "runs",
            "N",
            "warm executions of each query on each side (0: cold only)",
        )
        .default("3"),
        opt(
            "where",
            "FILTER",
            "what the report shows, e.g. 'Execution_time_ratio > 1.5 and Temperature = warm' \
             (see Filters)",
        ),
        flag(
            "keep-page-cache",
            "cold runs restart a managed server (or reopen an SQLite file) but leave the OS \
             page cache as it is",
        ),
        opt(
            "query-timeout",
            "SECONDS",
            "cancel a statement that runs longer (recorded as its error)",
        ),
        opt(
            "format",
            "text|json|html",
            "json: the dbmeter.compare-queries document (docs/compare-queries.md); html: a \
             self-contained page",
        )
        .default("text"),
        opt(
            "output",
            "FILE",
            "write the report to FILE instead of standard output",
        ),
        opt(
            "save",
            "FILE",
            "also write the whole result as JSON, to filter again later with --from",
        ),
        opt(
            "store",
            "SPEC",
            "also keep the result in the results store (--store alone: the default one; a \
             path or URL with --store=SPEC): a run per side, each query's time a figure, for \
             `dbmeter compare` and `dbmeter report`",
        )
        .bare(),
        opt(
            "from",
            "FILE",
            "report a saved result (--save or --format=json) again, with another --where; \
             no server is asked",
        ),
    ],
    sections: &[Section {
        title: "Filters",
        body: &[
            "--where keeps the queries for which it is true at some temperature; the report \
             shows a summary of all and the details of those. For each measure X (Execution_time \
             in seconds, Rows, Warnings, and every counter: Handler_read_rnd_next, \
             Innodb_rows_read, Shared_read_blocks, Explain_execution_time, ...) there are X_a \
             and X_b (each side's value), X (the larger), X_delta (B - A) and X_ratio (the \
             larger over the smaller, either way; inf when one is 0). Also Temperature (cold \
             or warm), Slower (A, B or same), Rows_differ, Checksum_differ, Errors_differ, \
             Error, Error_a, Error_b, Counters_ratio (the largest counter ratio among \
             differences of 10 or more, server-wide Innodb_* left out), Id (Q1...), \
             Query_id, Query and Origin.",
            "Operators: = != < <= > >= and ~ (contains, any case), and, or, not, parentheses; \
             numbers take the units s, ms, us, min and % (150% is 1.5); text in quotes, or a \
             bare word after = != ~. A name a query does not have makes its comparison false. \
             Without --where: (Execution_time_ratio > 1.2 and Execution_time >= 1ms) or \
             Counters_ratio > 1.2 or Rows_differ or Checksum_differ or Errors_differ.",
        ],
    }],
    examples: &[
        Example {
            what: "Two MariaDB servers, the statements of a file, warm differences of 1.5x and more",
            command: "compare-queries --db=mysql://root@127.0.0.1:3307/app --db=mysql://root@127.0.0.1:3308/app --file=queries.sql --where='Execution_time_ratio > 1.5 and Temperature = warm'",
        },
        Example {
            what: "The 10 heaviest classes of a slow log on MariaDB against PostgreSQL, saved",
            command: "compare-queries --db=mysql://root@db1/app --db=postgres://app@db2/app slow.log --limit=10 --save=cmp.json",
        },
        Example {
            what: "The saved result again, only the queries that read many more rows on one side, as HTML",
            command: "compare-queries --from=cmp.json --where='Innodb_rows_read_ratio > 10' --format=html --output=cmp.html",
        },
    ],
    exit: "0 ok (differences are not errors), 1 a target, a query file or a saved result could not be used, 2 usage error.",
    ..Page::new(
        "compare-queries",
        "the same queries on two targets, cold and warm, with their counters: what differs",
    )
};

fn failed(m: String) -> CliError {
    CliError::Failed(m)
}

pub fn main(args: &[String]) -> Result<i32, CliError> {
    if args.iter().any(|a| a == "--help" || a == "-h") {
        return crate::help::print_page(&PAGE);
    }
    let a = parse_args(args, &PAGE, None)?;
    let format = a.format(&["text", "json", "html"], "compare-queries")?;
    let where_text = a.get("where").unwrap_or(vars::DEFAULT_WHERE).to_string();
    let filter = Expr::parse(&where_text).map_err(|e| CliError::Usage(format!("--where: {e}")))?;
    let dbs: Vec<&str> = a.all("db").collect();
    let files: Vec<&str> = a.all("file").collect();
    let texts: Vec<String> = a.all("query").map(str::to_string).collect();
    let dir = a.get("dir");
    let mut comparison = if let Some(from) = a.get("from") {
        if !dbs.is_empty()
            || !files.is_empty()
            || !texts.is_empty()
            || dir.is_some()
            || !a.words.is_empty()
        {
            return Err(CliError::Usage(
                "--from reports a saved result: it takes no --db, LOG, --file, --dir or --query"
                    .into(),
            ));
        }
        if a.get("save").is_some() {
            return Err(CliError::Usage(
                "--save goes with a comparison that runs, not with --from".into(),
            ));
        }
        let text = std::fs::read_to_string(from)
            .map_err(|e| failed(format!("cannot read --from {from}: {e}")))?;
        render::read_saved(&text, from).map_err(failed)?
    } else {
        collect(&a, &dbs, &files, dir, &texts)?
    };
    if let Some(path) = a.get("save") {
        let json = render::json(&comparison).map_err(failed)?;
        std::fs::write(path, json)
            .map_err(|e| failed(format!("cannot write --save {path}: {e}")))?;
    }
    if let Some(spec) = a.get("store") {
        let spec = dbmeter_run::store_spec(Some(spec)).map_err(|e| failed(e.to_string()))?;
        let (ids, location) =
            dbmeter_querycmp::stored::store(&comparison, &spec).map_err(failed)?;
        if let [a_id, b_id] = ids[..] {
            eprintln!(
                "dbmeter compare-queries: stored as runs {a_id} (A) and {b_id} (B) in {location}; \
                 `dbmeter compare --baseline run:{a_id} --candidate run:{b_id}` compares them"
            );
        }
    }
    let unknown: Vec<String> = filter
        .variables()
        .into_iter()
        .filter(|n| !vars::is_known(n, &comparison.queries))
        .collect();
    if !unknown.is_empty() {
        eprintln!(
            "dbmeter compare-queries: warning: --where names {} that no query has: comparisons with it are false",
            unknown.join(", ")
        );
    }
    render::apply_filter(&mut comparison, &filter, &where_text);
    let out = match format.as_str() {
        "json" => render::json(&comparison).map_err(failed)?,
        "html" => render::html(&comparison),
        _ => render::text(&comparison),
    };
    match a.get("output") {
        Some(path) => std::fs::write(path, out)
            .map_err(|e| failed(format!("cannot write --output {path}: {e}")))?,
        None => {
            use std::io::Write as _;
            let mut o = std::io::stdout().lock();
            // A closed pipe (`| head`) is not an error of the comparison.
            let _ = o.write_all(out.as_bytes()).and_then(|_| o.flush());
        }
    }
    Ok(0)
}

/// Reads the queries and runs them on both targets.
fn collect(
    a: &crate::subcommand_args::SubArgs,
    dbs: &[&str],
    files: &[&str],
    dir: Option<&str>,
    texts: &[String],
) -> Result<Comparison, CliError> {
    if dbs.len() != 2 {
        return Err(CliError::Usage(format!(
            "compare-queries takes two targets, --db=A --db=B ({} given)",
            dbs.len()
        )));
    }
    if a.words.is_empty() && files.is_empty() && dir.is_none() && texts.is_empty() {
        return Err(CliError::Usage(
            "which queries? a LOG, --file=FILE, --dir=DIR or --query=SQL (`dbmeter help compare-queries`)".into(),
        ));
    }
    let runs = match a.get("runs") {
        None => 3,
        Some(r) => match r.parse::<u32>() {
            Ok(n) if n <= 100_000 => n,
            _ => {
                return Err(CliError::Usage(format!(
                    "--runs={r}: expected a number of warm runs from 0 to 100000"
                )));
            }
        },
    };
    let limit = match a.get("limit") {
        None => 20,
        Some(l) => l.parse::<usize>().map_err(|_| {
            CliError::Usage(format!(
                "--limit={l}: expected a number of classes (0 for all)"
            ))
        })?,
    };
    let query_timeout = match a.get("query-timeout") {
        None => None,
        Some(t) => match t.parse::<f64>() {
            Ok(s) if s > 0.0 && s <= 86_400.0 => Some(Duration::from_secs_f64(s)),
            _ => {
                return Err(CliError::Usage(format!(
                    "--query-timeout={t}: expected seconds, more than 0 and at most 86400"
                )));
            }
        },
    };
    let mut queries = Vec::new();
    let mut notes = Vec::new();
    if !a.words.is_empty() {
        let (q, n) = sources::from_logs(&a.words, limit).map_err(failed)?;
        queries.extend(q);
        notes.extend(n);
    }
    for f in files {
        queries.extend(sources::from_file(Path::new(f)).map_err(failed)?);
    }
    if let Some(d) = dir {
        queries.extend(sources::from_dir(Path::new(d)).map_err(failed)?);
    }
    queries.extend(sources::from_texts(texts).map_err(failed)?);
    let setup = Setup {
        urls: [dbs[0].to_string(), dbs[1].to_string()],
        runs,
        queries,
        notes,
        version: super::VERSION.to_string(),
        query_timeout,
        drop_caches: !a.flag("keep-page-cache"),
    };
    use std::io::IsTerminal;
    let show = std::io::stderr().is_terminal();
    let total = setup.queries.len();
    let progress = |what: &str| {
        if show {
            eprintln!("compare-queries: {what} (of {total})");
        }
    };
    dbmeter_querycmp::collect(&setup, &progress).map_err(failed)
}
