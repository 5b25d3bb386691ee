//! `dbmeter capture --db=URL [--time=SECONDS] [--output=FILE]`: turns the
//! server's statement log on for every statement for a while, collects
//! what it logged, and puts the settings back (`dbmeter_capture` does the
//! work; this parses the command line and prints).

use super::results::parse_args;
use crate::CliError;
use crate::help::{Example, Page, Section, opt};
use dbmeter_capture::{CaptureError, Collect, Options};
use dbmeter_run::settings as setup;
use std::io::Write;
use std::time::Duration;

pub const PAGE: Page = Page {
    usage: &["capture --db=URL [--time=SECONDS] [--output=FILE|-] [--collect=auto|file|sql]"],
    about: &[
        "Turns a server's statement log on for every statement for a while: on MySQL and \
         MariaDB the slow log with long_query_time=0 (SET GLOBAL; log_output and \
         slow_query_log as needed), on PostgreSQL log_min_duration_statement=0 (ALTER \
         SYSTEM and pg_reload_conf()). Then it collects what the server logged in that \
         window, puts every setting back exactly as it was (also after Ctrl-C or SIGTERM, and \
         after a lost connection, reconnecting a few times), and says what it changed and \
         put back. The capture file is one header line (dbmeter's, with the log's format \
         and PostgreSQL's log_line_prefix) and the server's own log bytes: `dbmeter digest \
         FILE` reads it as it is.",
        "A GLOBAL long_query_time reaches connections opened after the change only; \
         PostgreSQL's setting reaches every session at its next statement. The log is read \
         from its file when this machine can read it (a local or managed server), else \
         through the server: MySQL's mysql.slow_log table (log_output=TABLE), PostgreSQL's \
         pg_read_binary_file(). A user without the privilege gets one line naming it, and \
         nothing is changed. docs/capture.md says more.",
    ],
    options: &[
        opt(
            "db",
            "URL",
            "the server: mysql://USER[:PASSWORD]@HOST[:PORT]/ or postgres://...; passwords \
             also from ~/.my.cnf, ~/.pgpass and the environment, never printed",
        ),
        opt(
            "time",
            "SECONDS",
            "how long to capture (also 90s, 5m); 0 until Ctrl-C",
        )
        .default("60"),
        opt(
            "output",
            "FILE",
            "the capture file; - for standard output [capture-YYYYMMDDTHHMMSSZ.log]",
        ),
        opt(
            "collect",
            "auto|file|sql",
            "how the log is read: its file on this machine, or through the server; auto takes \
             the file when it can be read here",
        )
        .default("auto"),
    ],
    sections: &[Section {
        title: "Privileges",
        body: &[
            "MySQL/MariaDB: SUPER (MariaDB, MySQL 5.7) or SYSTEM_VARIABLES_ADMIN (MySQL 8), \
             and SELECT on mysql.slow_log to read it through SQL. PostgreSQL: superuser, or \
             ALTER SYSTEM on log_min_duration_statement, EXECUTE on pg_reload_conf() and \
             pg_current_logfile(text), and to read through SQL EXECUTE on \
             pg_read_binary_file and pg_stat_file; the logging collector must be on.",
        ],
    }],
    examples: &[
        Example {
            what: "A minute of a MariaDB server's statements, then their classes",
            command: "capture --db=mysql://root@127.0.0.1/ --time=60 --output=cap.log && dbmeter digest cap.log",
        },
        Example {
            what: "PostgreSQL until Ctrl-C, read through SQL",
            command: "capture --db=postgres://postgres@db1/app --time=0 --collect=sql --output=cap.log",
        },
    ],
    exit: "0 captured and restored, 1 refused (privilege, no log to read; nothing changed), \
           the connection lost or a setting not put back (the statements to run by hand are \
           printed), 2 usage error, 130/143 ended early by SIGINT/SIGTERM (captured and \
           restored).",
    ..Page::new(
        "capture",
        "log every statement of a server for a while, collect it, restore the settings",
    )
};

fn parse_duration(v: &str) -> Result<Option<Duration>, CliError> {
    let bad = || {
        CliError::Usage(format!(
            "--time={v}: expected seconds (e.g. 60, 90s, 5m), 0 for until Ctrl-C"
        ))
    };
    let d = match v.trim().parse::<f64>() {
        Ok(s) if s.is_finite() && (0.0..=31_536_000.0).contains(&s) => Duration::from_secs_f64(s),
        Ok(_) => return Err(bad()),
        Err(_) => humantime::parse_duration(v.trim()).map_err(|_| bad())?,
    };
    Ok((!d.is_zero()).then_some(d))
}

fn default_output() -> String {
    let t = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let t: String = t.chars().filter(|c| c.is_ascii_alphanumeric()).collect();
    format!("capture-{t}.log")
}

pub fn main(args: &[String]) -> Result<i32, CliError> {
    if args.iter().any(|a| a == "--help" || a == "-h") {
        return crate::help::print_page(&PAGE);
    }
    let a = parse_args(args, &PAGE, None)?;
    if let Some(w) = a.words.first() {
        return Err(CliError::Usage(format!(
            "`dbmeter capture` takes no words ({w}); the server is --db=URL (`dbmeter help capture`)"
        )));
    }
    let Some(db) = a.get("db") else {
        return Err(CliError::Usage(
            "which server? e.g. `dbmeter capture --db=mysql://root@127.0.0.1/ --time=60` \
             (`dbmeter help capture`)"
                .into(),
        ));
    };
    let duration = parse_duration(a.get("time").unwrap_or("60"))?;
    let collect = match a.get("collect") {
        None => Collect::Auto,
        Some(c) => Collect::parse(c)
            .ok_or_else(|| CliError::Usage(format!("--collect={c}: expected auto, file or sql")))?,
    };
    let o = crate::args::values(
        dbmeter_run::options::GENERAL,
        &[("db".to_string(), db.to_string())],
    );
    let target = setup::target(&o)?;
    if matches!(target, dbmeter_db::Target::Sqlite { .. }) {
        return Err(CliError::Failed(
            "SQLite has no query log to capture: `dbmeter capture` needs a MySQL/MariaDB or \
             PostgreSQL server (--db=mysql://... or --db=postgres://...)"
                .into(),
        ));
    }
    let opts = Options {
        connect: setup::connect_options(&o, target),
        duration,
        collect,
    };
    let path = a.get("output").map_or_else(default_output, str::to_string);
    let to_stdout = path == "-";
    let mut out: Box<dyn Write> = if to_stdout {
        Box::new(std::io::BufWriter::new(std::io::stdout().lock()))
    } else {
        let f = std::fs::File::create(&path)
            .map_err(|e| CliError::Failed(format!("cannot write --output {path}: {e}")))?;
        Box::new(std::io::BufWriter::with_capacity(1 << 20, f))
    };
    let mut say = |line: &str| {
        if to_stdout {
            eprintln!("{line}");
        } else {
            println!("{line}");
        }
    };
    let stop = crate::signals::stop_handle();
    let result = dbmeter_capture::capture(&opts, &mut out, &|| stop.is_stopped(), &mut say);
    let flushed = out.flush();
    drop(out);
    let outcome = match result {
        Ok(o) => o,
        Err(e) => {
            if !to_stdout && matches!(e, CaptureError::Refused(_)) {
                let _ = std::fs::remove_file(&path);
            }
            if let CaptureError::NotRestored { why, by_hand } = &e {
                eprintln!("error: {why}");
                eprintln!("the server's settings are NOT as they were; run these by hand:");
                for s in by_hand {
                    eprintln!("  {s}");
                }
                return Ok(1);
            }
            return Err(CliError::Failed(e.to_string()));
        }
    };
    flushed.map_err(|e| CliError::Failed(format!("cannot write --output {path}: {e}")))?;
    let statements = if to_stdout {
        String::new()
    } else {
        let d = dbmeter_digest::digest(
            std::slice::from_ref(&path),
            &dbmeter_digest::Options {
                group_by: dbmeter_digest::GroupBy::Fingerprint,
                filter: dbmeter_digest::TimeFilter::default(),
                threads: 1,
                format: None,
                log_line_prefix: None,
            },
            &|_| {},
        );
        match d {
            Ok(d) => format!(", {} statements", d.aggregate.global.count),
            Err(_) => String::new(),
        }
    };
    let place = if to_stdout {
        "standard output".to_string()
    } else {
        path.clone()
    };
    say(&format!(
        "collected {} bytes of {} log{statements} into {place} (`dbmeter digest {}` reads it)",
        outcome.bytes,
        outcome.header.format.name(),
        if to_stdout { "FILE" } else { &path }
    ));
    let mut code = 0;
    if let Some(l) = &outcome.lost {
        eprintln!("error: {l}; the capture ends there");
        code = 1;
    }
    if let Some((why, by_hand)) = &outcome.unrestored {
        eprintln!("error: {why}");
        eprintln!("the server's settings are NOT as they were; run these by hand:");
        for s in by_hand {
            eprintln!("  {s}");
        }
        code = 1;
    }
    if code == 0 && outcome.stopped {
        code = crate::signals::interrupted_code();
    }
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("60").unwrap(), Some(Duration::from_secs(60)));
        assert_eq!(
            parse_duration("1.5").unwrap(),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            parse_duration("5m").unwrap(),
            Some(Duration::from_secs(300))
        );
        assert_eq!(parse_duration("0").unwrap(), None);
        assert!(parse_duration("-1").is_err());
        assert!(parse_duration("soon").is_err());
        assert!(default_output().starts_with("capture-2"));
    }
}
