//! `dbmeter digest LOG...`: the classes of statements a server's query log
//! holds, as pt-query-digest reports them (`dbmeter_digest` reads, groups
//! and lays out; this only parses the command line and writes).

use super::results::parse_args;
use crate::CliError;
use crate::help::{Example, Page, Section, opt};
use dbmeter_digest::report::{OrderBy, ReportOptions};
use dbmeter_digest::{GroupBy, LogFormat, Options, TimeFilter, event, fingerprint};

pub const PAGE: Page = Page {
    usage: &[
        "digest LOG... [--group-by=fingerprint|db|user|host] [--order-by=ATTR:FUNC] [--limit=N] [--since=T] [--until=T] [--format=text|json|html] [--output=FILE]",
    ],
    about: &[
        "Reads MySQL/MariaDB query logs (the slow query log with every attribute line, \
         MariaDB's and Percona Server's extended ones too, and the general log) and \
         PostgreSQL's (stderr with its log_line_prefix, csvlog, jsonlog: \
         log_min_duration_statement, log_statement with log_duration, the extended \
         protocol's execute), and dbmeter's own capture files (dbmeter capture), and \
         reports the classes of statements that take the time, as pt-query-digest does \
         and with its fingerprints and query IDs: an overall summary, the profile ranked \
         by total time, then each class with its attributes and exact percentiles, its \
         query-time histogram, databases, users and hosts, first and last seen, and its \
         worst sample with ready EXPLAIN and SHOW CREATE TABLE lines.",
        "A LOG is a file, - for standard input, or either compressed with gzip or zstd \
         (told by its first bytes). The format is detected. Lines that cannot be read are \
         counted and the first ones named with their line numbers on standard error; \
         they never stop the digest. Every CPU reads: the log is cut at event boundaries \
         and the parts are digested in parallel, in constant memory whatever its size.",
    ],
    options: &[
        opt(
            "group-by",
            "fingerprint|db|user|host|table",
            "what makes a class: the statement's fingerprint (literals, IN lists and \
             multi-row VALUES as ?, comments and case dropped), or its database, user or \
             host, or each table it names (as db.tbl; a statement counts in each)",
        )
        .default("fingerprint"),
        opt(
            "order-by",
            "ATTR:FUNC",
            "rank classes by an attribute (Query_time, Lock_time, Rows_examined, \
             Rows_sent, Bytes_sent, any attribute of the log) and sum, max, min, avg or cnt",
        )
        .default("Query_time:sum"),
        opt("limit", "N", "classes to report, 0 for all").default("20"),
        opt(
            "id",
            "QUERY_ID",
            "only the class with this query ID: 32 hex digits as pt-query-digest 3.x \
             prints, or the 16 of older versions, with or without 0x; repeat for more",
        ),
        opt(
            "since",
            "TIME",
            "only statements from TIME on: YYYY-MM-DD[ HH:MM:SS] (UTC), a Unix time, or a \
             duration before now such as 12h or 7d",
        ),
        opt("until", "TIME", "only statements before TIME (as --since)"),
        opt(
            "filter",
            "EXPR",
            "only statements for which EXPR holds, over each statement's attributes: \
             Query_time (seconds; 250ms works), Lock_time, Rows_sent, Rows_examined, \
             Query_length, db, user, host, arg (the statement), fingerprint, thread_id, ts, \
             admin, and any attribute of the log by name; = != < <= > >= ~ (contains), \
             and, or, not, parentheses: e.g. 'Query_time > 1 and db = shop' \
             (pt-query-digest's --filter, without Perl)",
        ),
        opt(
            "log-format",
            "auto|mysql-slow|mysql-general|postgres-stderr|postgres-csv|postgres-json",
            "the format of the logs, when it cannot be told from their first 256 KiB",
        )
        .default("auto"),
        opt(
            "log-line-prefix",
            "PREFIX",
            "PostgreSQL's log_line_prefix of a stderr log (escapes %m %t %n %p %c %l %u %d \
             %h %r %a %b %e %x %v %i %Q %q); by default the one of PostgreSQL's '%m [%p] ' \
             and Debian's '%m [%p] %q%u@%d ' that reads the log",
        ),
        opt(
            "threads",
            "N",
            "threads that parse and aggregate [the number of CPUs]",
        ),
        opt(
            "format",
            "text|json|html",
            "json: the dbmeter.digest document (docs/digest.md); html: one page that \
             stands alone, with charts of the statements and query time over time, the \
             top classes and their share of the time, the profile and the classes",
        )
        .default("text"),
        opt("output", "FILE", "write to FILE instead of standard output"),
    ],
    sections: &[Section {
        title: "Query IDs",
        body: &[
            "A class's ID is the MD5 of its fingerprint in 32 upper-case hex digits, the \
             same as pt-query-digest 3.0.11 and later print for the same statements, so \
             IDs line up with its reports and the tools built on it. Percentiles are exact \
             to 3 significant digits (pt-query-digest's are 5% buckets).",
        ],
    }],
    examples: &[
        Example {
            what: "The statements that took the time in a MariaDB slow log",
            command: "digest /var/lib/mysql/db1-slow.log",
        },
        Example {
            what: "Last night's compressed log, by database, as JSON",
            command: "digest slow.log.1.gz --group-by=db --format=json --output=digest.json",
        },
        Example {
            what: "A page with charts to open in a browser",
            command: "digest slow.log --format=html --output=digest.html",
        },
        Example {
            what: "One class by its pt-query-digest ID, worst single runs first",
            command: "digest slow.log --id=0x446D88ACB5D591D41EBD7A55DB886511 --order-by=Query_time:max",
        },
    ],
    exit: "0 ok (malformed lines are warnings), 1 a log could not be read or is not a query log, 2 usage error.",
    ..Page::new(
        "digest",
        "classes of statements in MySQL/MariaDB query logs, as pt-query-digest",
    )
};

/// `--since`/`--until`: a date and time (UTC), a Unix time, or a duration before now.
fn parse_time(name: &str, v: &str) -> Result<i64, CliError> {
    if let Some(t) = event::parse_datetime(v.as_bytes()) {
        return Ok(t);
    }
    if !v.is_empty()
        && v.bytes().all(|b| b.is_ascii_digit())
        && let Ok(secs) = v.parse::<i64>()
    {
        return Ok(secs.saturating_mul(1_000_000));
    }
    if let Ok(d) = humantime::parse_duration(v) {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|n| n.as_micros() as i64)
            .unwrap_or(0);
        return Ok(now - d.as_micros().min(i64::MAX as u128) as i64);
    }
    Err(CliError::Usage(format!(
        "--{name}={v}: expected YYYY-MM-DD[ HH:MM:SS] (UTC), a Unix time or a duration such as 12h"
    )))
}

pub fn main(args: &[String]) -> Result<i32, CliError> {
    if args.iter().any(|a| a == "--help" || a == "-h") {
        return crate::help::print_page(&PAGE);
    }
    let a = parse_args(args, &PAGE, None)?;
    if a.words.is_empty() {
        return Err(CliError::Usage(
            "which log? e.g. `dbmeter digest /var/lib/mysql/host-slow.log` (- for standard input; `dbmeter help digest`)".into(),
        ));
    }
    let format = a.format(&["text", "json", "html"], "digest")?;
    let group_by = match a.get("group-by") {
        None => GroupBy::Fingerprint,
        Some(g) => GroupBy::parse(g).ok_or_else(|| {
            CliError::Usage(format!(
                "--group-by={g}: expected fingerprint, db, user, host or table"
            ))
        })?,
    };
    let order_by = match a.get("order-by") {
        None => OrderBy::default(),
        Some(o) => OrderBy::parse(o).map_err(CliError::Usage)?,
    };
    let limit = match a.get("limit") {
        None => 20,
        Some(l) => l.parse::<usize>().map_err(|_| {
            CliError::Usage(format!(
                "--limit={l}: expected a number of classes (0 for all)"
            ))
        })?,
    };
    let ids: Vec<String> = a.all("id").map(str::to_string).collect();
    if let Some(bad) = ids.iter().find(|i| !fingerprint::is_query_id(i)) {
        return Err(CliError::Usage(format!(
            "--id={bad}: expected a query ID of 32 hex digits (or the 16 of pt-query-digest before 3.0.11)"
        )));
    }
    if !ids.is_empty() && group_by != GroupBy::Fingerprint {
        return Err(CliError::Usage(
            "--id selects classes of fingerprints: it goes with --group-by=fingerprint".into(),
        ));
    }
    let expr = match a.get("filter") {
        None => None,
        Some(f) => Some(std::sync::Arc::new(
            dbmeter_filter::Expr::parse(f)
                .map_err(|e| CliError::Usage(format!("--filter '{f}': {e}")))?,
        )),
    };
    let filter = TimeFilter {
        since: a.get("since").map(|v| parse_time("since", v)).transpose()?,
        until: a.get("until").map(|v| parse_time("until", v)).transpose()?,
        expr,
    };
    if let (Some(s), Some(u)) = (filter.since, filter.until)
        && s >= u
    {
        return Err(CliError::Usage("--since must be before --until".into()));
    }
    let log_format = match a.get("log-format") {
        None => None,
        Some(f) if f.eq_ignore_ascii_case("auto") => None,
        Some(f) => Some(LogFormat::parse(f).ok_or_else(|| {
            CliError::Usage(format!(
                "--log-format={f}: expected auto, mysql-slow, mysql-general, postgres-stderr, \
                 postgres-csv or postgres-json"
            ))
        })?),
    };
    let threads = match a.get("threads") {
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
        Some(t) => match t.parse::<usize>() {
            Ok(n) if (1..=1024).contains(&n) => n,
            _ => {
                return Err(CliError::Usage(format!(
                    "--threads={t}: expected 1 to 1024"
                )));
            }
        },
    };
    if a.words.iter().filter(|w| w.as_str() == "-").count() > 1 {
        return Err(CliError::Usage(
            "standard input (-) can be read once".into(),
        ));
    }
    let opts = Options {
        group_by,
        filter,
        threads,
        format: log_format,
        log_line_prefix: match a.get("log-line-prefix") {
            Some(p) => {
                dbmeter_digest::pglog::Prefix::parse(p).map_err(CliError::Usage)?;
                Some(p.to_string())
            }
            None => None,
        },
    };
    // A bar to the end when the bytes to read are known (files, not
    // compressed); else the bytes read so far. Drawn on a terminal only.
    let total = plain_size(&a.words);
    let bar =
        indicatif::ProgressBar::with_draw_target(total, indicatif::ProgressDrawTarget::stderr());
    let template = if total.is_some() {
        "digest: [{bar:20}] {bytes}/{total_bytes} read, {bytes_per_sec}, ETA {eta}"
    } else {
        "{spinner} digest: {bytes} read, {bytes_per_sec} ({elapsed})"
    };
    if let Ok(style) = indicatif::ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    // For tests: chunks of this many bytes instead of 1 MiB, so that the
    // cuts between the parts read in parallel fall everywhere.
    let chunk = match std::env::var("DBMETER_DIGEST_CHUNK") {
        Err(_) => dbmeter_digest::CHUNK,
        Ok(v) => v.parse::<usize>().ok().filter(|&n| n > 0).ok_or_else(|| {
            CliError::Usage(format!(
                "DBMETER_DIGEST_CHUNK={v}: expected a number of bytes above 0 (or leave it unset)"
            ))
        })?,
    };
    let d = dbmeter_digest::digest_in_chunks(&a.words, &opts, chunk, &|n| bar.set_position(n))
        .map_err(|e| CliError::Failed(e.to_string()));
    bar.finish_and_clear();
    let d = d?;
    if d.malformed.count > 0 {
        eprintln!(
            "dbmeter digest: {} line(s) could not be read (each leaves its event out, or without what the line said):",
            d.malformed.count
        );
        for m in d.malformed.first.iter().take(5) {
            eprintln!("  {} line {}: {}", m.file, m.line, m.reason);
        }
        if d.malformed.count > 5 {
            eprintln!("  ... (all counted in the report)");
        }
    }
    let ro = ReportOptions {
        order_by,
        limit,
        ids,
        version: super::VERSION.to_string(),
    };
    // Written as it is made, a class at a time: a log of many classes is
    // never held as one text.
    let write = |w: &mut dyn std::io::Write| -> std::io::Result<()> {
        if format == "json" {
            dbmeter_digest::report::write_json(&d, &ro, w)?;
        } else if format == "html" {
            dbmeter_report::html::digest::write_page(&d, &ro, w)?;
        } else {
            dbmeter_digest::report::write_text(&d, &ro, w)?;
        }
        w.flush()
    };
    match a.get("output") {
        Some(path) => {
            let f = std::fs::File::create(path)
                .map_err(|e| CliError::Failed(format!("cannot write --output {path}: {e}")))?;
            write(&mut std::io::BufWriter::with_capacity(1 << 16, f))
                .map_err(|e| CliError::Failed(format!("cannot write --output {path}: {e}")))?;
        }
        None => {
            let o = std::io::stdout().lock();
            // A closed pipe (`| head`) is not an error of the digest.
            let _ = write(&mut std::io::BufWriter::with_capacity(1 << 16, o));
        }
    }
    Ok(0)
}

/// The bytes the digest will read, when every input is a file that is not
/// compressed (told by its first bytes, as the digest tells it).
fn plain_size(inputs: &[String]) -> Option<u64> {
    use std::io::Read as _;
    let mut total = 0u64;
    for name in inputs {
        if name == "-" {
            return None;
        }
        let mut f = std::fs::File::open(name).ok()?;
        let meta = f.metadata().ok()?;
        if !meta.is_file() {
            return None;
        }
        let mut head = [0u8; 4];
        let n = f.read(&mut head).ok()?;
        if head[..n].starts_with(&[0x1f, 0x8b]) || head[..n] == [0x28, 0xb5, 0x2f, 0xfd] {
            return None;
        }
        total += meta.len();
    }
    Some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bar_only_for_plain_files() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("slow.log");
        std::fs::write(&plain, "# Query_time: 1\nselect 1;\n").unwrap();
        let gz = dir.path().join("slow.log.gz");
        std::fs::write(&gz, [0x1f, 0x8b, 8, 0]).unwrap();
        let zst = dir.path().join("slow.log.zst");
        std::fs::write(&zst, [0x28, 0xb5, 0x2f, 0xfd, 0]).unwrap();
        let s = |p: &std::path::Path| p.to_str().unwrap().to_string();
        assert_eq!(plain_size(&[s(&plain), s(&plain)]), Some(52));
        assert_eq!(plain_size(&[s(&plain), s(&gz)]), None);
        assert_eq!(plain_size(&[s(&zst)]), None);
        assert_eq!(plain_size(&[s(&plain), "-".into()]), None);
        assert_eq!(plain_size(&[s(&dir.path().join("nope"))]), None);
        assert_eq!(plain_size(&[s(dir.path())]), None);
    }

    #[test]
    fn times() {
        assert_eq!(
            parse_time("since", "2026-11-27").unwrap(),
            1_795_737_600_000_000
        );
        assert_eq!(
            parse_time("since", "1795775498").unwrap(),
            1_795_775_498_000_000
        );
        assert!(parse_time("since", "12h").is_ok());
        assert!(
            matches!(parse_time("until", "soon"), Err(CliError::Usage(m)) if m.contains("--until=soon"))
        );
    }
}
