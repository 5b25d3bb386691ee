//! `slap`'s options, read once into [`SlapConfig`].

use super::sql::{self, LoadType, Statement, Table};
use crate::benchmark::BenchError;
use crate::options::{OptKind, OptSpec, OptValues, bad_value, choice, opt};

pub(super) fn specs() -> Vec<OptSpec> {
    SPECS.to_vec()
}

/// The options of `slap`, mysqlslap's long names.
pub const SPECS: &[OptSpec] = &[
    opt(
        "auto-generate-sql",
        OptKind::Bool,
        "off",
        "-a: generate the table and the queries",
    ),
    opt(
        "auto-generate-sql-add-autoincrement",
        OptKind::Bool,
        "off",
        "an AUTO_INCREMENT id column in the generated table",
    ),
    opt(
        "auto-generate-sql-execute-number",
        OptKind::Int,
        "0",
        "queries each client runs (generated SQL; 0: the list once)",
    ),
    opt(
        "auto-generate-sql-guid-primary",
        OptKind::Bool,
        "off",
        "a GUID primary key in the generated table",
    ),
    opt(
        "auto-generate-sql-load-type",
        choice(&["mixed", "update", "write", "key", "read"]),
        "mixed",
        "what the generated queries do",
    ),
    opt(
        "auto-generate-sql-secondary-indexes",
        OptKind::Int,
        "0",
        "unique varchar(36) columns added to the generated table",
    ),
    opt(
        "auto-generate-sql-unique-query-number",
        OptKind::Int,
        "10",
        "different generated queries (the list holds one more)",
    ),
    opt(
        "auto-generate-sql-unique-write-number",
        OptKind::Int,
        "10",
        "different generated INSERTs that fill the table",
    ),
    opt(
        "auto-generate-sql-write-number",
        OptKind::Int,
        "100",
        "statements of the create step (the CREATE TABLE counts)",
    ),
    opt(
        "commit",
        OptKind::Int,
        "0",
        "COMMIT every N statements (0: autocommit)",
    ),
    opt(
        "concurrency",
        OptKind::Str,
        "1",
        "-c: clients, or a list of levels run in turn (1,8,32)",
    ),
    opt(
        "create",
        OptKind::Str,
        "",
        "file or statements that create the tables",
    ),
    opt(
        "create-schema",
        OptKind::Str,
        "mysqlslap",
        "the schema the test runs in",
    ),
    opt(
        "delimiter",
        OptKind::Str,
        "\n",
        "-F: what separates statements in --create, --query, --pre-query, --post-query",
    ),
    opt(
        "detach",
        OptKind::Int,
        "0",
        "reconnect every N statements (0: never)",
    ),
    opt(
        "engine",
        OptKind::Str,
        "",
        "-e: storage engines (MariaDB/MySQL), each run in turn; ENGINE:OPTION",
    ),
    opt(
        "init-command",
        OptKind::Str,
        "",
        "a statement each client runs when it connects (and reconnects)",
    ),
    opt(
        "iterations",
        OptKind::Int,
        "1",
        "-i: how often each level is run",
    ),
    opt(
        "iteration",
        OptKind::Int,
        "1",
        "which of --iterations this run is (set by `dbmeter slap`'s sweep)",
    ),
    opt(
        "no-drop",
        OptKind::Bool,
        "off",
        "keep the schema after the test",
    ),
    opt(
        "number-char-cols",
        OptKind::Str,
        "1",
        "-x: VARCHAR columns of the generated table (N, or N:1 for indexed ones)",
    ),
    opt(
        "number-int-cols",
        OptKind::Str,
        "1",
        "-y: INT columns of the generated table (N, or N:1 for indexed ones)",
    ),
    opt(
        "number-of-queries",
        OptKind::Int,
        "0",
        "queries of all clients together, split among them",
    ),
    opt(
        "only-print",
        OptKind::Bool,
        "off",
        "print the statements instead of running them",
    ),
    opt(
        "pre-system",
        OptKind::Str,
        "",
        "a shell command run before each iteration (after the create step)",
    ),
    opt(
        "post-system",
        OptKind::Str,
        "",
        "a shell command run after each iteration",
    ),
    opt(
        "pre-query",
        OptKind::Str,
        "",
        "file or statements run before each iteration",
    ),
    opt(
        "post-query",
        OptKind::Str,
        "",
        "file or statements run after each iteration",
    ),
    opt(
        "query",
        OptKind::Str,
        "",
        "-q: file or statements each client runs",
    ),
];

/// Where the test's statements come from.
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    /// `--auto-generate-sql`.
    Generated {
        table: Table,
        load: LoadType,
        /// `--auto-generate-sql-write-number`.
        write_number: u64,
    },
    /// `--create` and `--query`.
    Given,
}

/// A storage engine of `--engine`, with its table option.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Engine {
    pub name: String,
    pub option: Option<String>,
}

impl Engine {
    /// What the table's CREATE gets: ` Engine = NAME[ OPTION]`.
    pub fn clause(&self) -> String {
        match &self.option {
            Some(o) => format!(" Engine = {} {o}", self.name),
            None => format!(" Engine = {}", self.name),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct SlapConfig {
    pub source: Source,
    /// The create step's statements (generated: as many as the write
    /// number asks for).
    pub create: Vec<Statement>,
    /// The list every client runs.
    pub queries: Vec<Statement>,
    pub pre: Vec<String>,
    pub post: Vec<String>,
    pub concurrency: Vec<u32>,
    pub iterations: u32,
    pub iteration: u32,
    pub engines: Vec<Engine>,
    /// Statements each client runs; 0: its list once.
    pub client_limit_base: ClientLimit,
    pub commit: u64,
    pub detach: u64,
    pub schema: String,
    /// mysqlslap drops (and creates) the schema when it creates something
    /// and --no-drop is not given.
    pub drop: bool,
    pub only_print: bool,
    /// `--init-command`: run by each client on each connection.
    pub init_command: Option<String>,
    /// `--pre-system`, `--post-system`: shell commands around each iteration.
    pub pre_system: Option<String>,
    pub post_system: Option<String>,
    /// `--auto-generate-sql-load-type`, as mysqlslap's CSV names it.
    pub load_type: String,
}

/// How many statements each client runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientLimit {
    /// The same number whatever the concurrency.
    Each(u64),
    /// `--number-of-queries`, divided by the concurrency.
    Split(u64),
}

impl SlapConfig {
    /// Statements per client at `concurrency` (0: the list once).
    pub fn client_limit(&self, concurrency: u32) -> u64 {
        match self.client_limit_base {
            ClientLimit::Each(n) => n,
            ClientLimit::Split(n) => n / u64::from(concurrency.max(1)),
        }
    }

    pub fn from_options(o: &OptValues) -> Result<Self, BenchError> {
        let count = |name: &str, max: u64| -> Result<u64, BenchError> {
            o.u64_in(name, 0..=max, &format!("a whole number from 0 to {max}"))
        };
        let auto = o.bool("auto-generate-sql");
        let create_text = o.str("create");
        let query_text = o.str("query");
        if auto && (!create_text.is_empty() || !query_text.is_empty()) {
            return Err(BenchError::Usage(
                "--auto-generate-sql makes the tables and queries itself: give it, or --create/--query, not both".into(),
            ));
        }
        let autoinc = o.bool("auto-generate-sql-add-autoincrement");
        let guid = o.bool("auto-generate-sql-guid-primary");
        if auto && autoinc && guid {
            return Err(BenchError::Usage(
                "--auto-generate-sql-guid-primary and --auto-generate-sql-add-autoincrement: give one of them".into(),
            ));
        }
        let load_type = o.str("auto-generate-sql-load-type").to_ascii_lowercase();
        let load = LoadType::parse(&load_type).ok_or_else(|| {
            bad_value(
                "auto-generate-sql-load-type",
                &load_type,
                "mixed, update, write, key or read",
            )
        })?;
        if auto && load == LoadType::Key && !autoinc && !guid {
            return Err(BenchError::Usage(
                "--auto-generate-sql-load-type=key needs a primary key: add --auto-generate-sql-add-autoincrement or --auto-generate-sql-guid-primary".into(),
            ));
        }
        let execute_number = count("auto-generate-sql-execute-number", u64::MAX / 2)?;
        let number_of_queries = count("number-of-queries", u64::MAX / 2)?;
        if auto && execute_number > 0 && number_of_queries > 0 {
            return Err(BenchError::Usage(
                "--auto-generate-sql-execute-number and --number-of-queries: give one of them"
                    .into(),
            ));
        }
        let (int_cols, int_index) = columns(o, "number-int-cols")?;
        let (char_cols, char_index) = columns(o, "number-char-cols")?;
        let table = Table {
            int_cols,
            int_index,
            char_cols,
            char_index,
            secondary_indexes: count("auto-generate-sql-secondary-indexes", 1000)? as u32,
            autoincrement: autoinc,
            guid_primary: guid,
        };
        let unique_query = count("auto-generate-sql-unique-query-number", 1_000_000)?;
        let unique_write = count("auto-generate-sql-unique-write-number", 1_000_000)?;
        let write_number = count("auto-generate-sql-write-number", 100_000_000)?;
        let delimiter = o.str("delimiter");
        if delimiter.is_empty() {
            return Err(bad_value("delimiter", delimiter, "one character, e.g. ';'"));
        }
        let (source, create, queries, given_queries) = if auto {
            let (create, queries) = sql::generate(&table, load, unique_write, unique_query);
            let create = sql::create_steps(&create, write_number);
            (
                Source::Generated {
                    table,
                    load,
                    write_number,
                },
                create,
                queries,
                0,
            )
        } else {
            let mut create: Vec<Statement> = statements(o, "create", delimiter)?
                .into_iter()
                .map(|sql| Statement {
                    sql,
                    kind: sql::Kind::Plain,
                })
                .collect();
            // With --engine the first create statement gets the engine.
            if let Some(first) = create.first_mut() {
                first.kind = sql::Kind::CreateTable;
            }
            let queries: Vec<Statement> = statements(o, "query", delimiter)?
                .into_iter()
                .map(|sql| Statement {
                    sql,
                    kind: sql::Kind::Plain,
                })
                .collect();
            let n = queries.len() as u64;
            (Source::Given, create, queries, n)
        };
        let client_limit_base = if auto && execute_number > 0 {
            ClientLimit::Each(execute_number)
        } else if number_of_queries > 0 {
            ClientLimit::Split(number_of_queries)
        } else {
            ClientLimit::Each(given_queries)
        };
        let concurrency = concurrency_list(o.str("concurrency"))?;
        let iterations = o.u64_in(
            "iterations",
            1..=1_000_000,
            "a whole number from 1 to 1000000",
        )? as u32;
        let iteration = o.u64_in(
            "iteration",
            1..=1_000_000,
            "a whole number from 1 to 1000000",
        )? as u32;
        let engines = engine_list(o.str("engine"))?;
        let schema = o.str("create-schema").to_string();
        if schema.is_empty() || schema.contains('`') || schema.contains('"') {
            return Err(bad_value(
                "create-schema",
                &schema,
                "a schema name without quotes or backquotes",
            ));
        }
        let drop = !o.bool("no-drop") && (auto || !create_text.is_empty());
        Ok(SlapConfig {
            source,
            create,
            queries,
            pre: statements(o, "pre-query", delimiter)?,
            post: statements(o, "post-query", delimiter)?,
            concurrency,
            iterations,
            iteration,
            engines,
            client_limit_base,
            commit: count("commit", u64::from(u32::MAX))?,
            detach: count("detach", u64::from(u32::MAX))?,
            schema,
            drop,
            only_print: o.bool("only-print"),
            init_command: Some(o.str("init-command").to_string()).filter(|s| !s.trim().is_empty()),
            pre_system: Some(o.str("pre-system").to_string()).filter(|s| !s.trim().is_empty()),
            post_system: Some(o.str("post-system").to_string()).filter(|s| !s.trim().is_empty()),
            load_type,
        })
    }

    /// Whether the test creates something (its create step runs: the
    /// schema is created and the create statements run in it).
    pub fn creates(&self) -> bool {
        !self.create.is_empty()
    }
}

/// `--number-int-cols=N[:I]`: N columns, indexed when I is not 0 (as
/// mysqlslap reads it, the first item of a comma-separated list).
fn columns(o: &OptValues, name: &str) -> Result<(u32, bool), BenchError> {
    let text = o.str(name);
    let first = text.split(',').next().unwrap_or_default();
    let (n, i) = match first.split_once(':') {
        Some((n, i)) => (n, Some(i)),
        None => (first, None),
    };
    let bad = || bad_value(name, text, "a number of columns, or N:1 for indexed ones");
    let n: u32 = n.trim().parse().map_err(|_| bad())?;
    if n > 1000 {
        return Err(bad());
    }
    let index = match i {
        Some(i) => i.trim().parse::<u32>().map_err(|_| bad())? != 0,
        None => false,
    };
    Ok((n, index))
}

/// `--concurrency=1,8,32`.
pub fn concurrency_list(text: &str) -> Result<Vec<u32>, BenchError> {
    let bad = || {
        bad_value(
            "concurrency",
            text,
            "clients from 1 to 10000, or a comma-separated list of them (1,8,32)",
        )
    };
    text.split(',')
        .map(|x| match x.trim().parse::<u32>() {
            Ok(n) if (1..=10_000).contains(&n) => Ok(n),
            _ => Err(bad()),
        })
        .collect()
}

/// `--engine=innodb,memory:max_rows=2300`.
pub fn engine_list(text: &str) -> Result<Vec<Engine>, BenchError> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    text.split(',')
        .map(|e| {
            let e = e.trim();
            let (name, option) = match e.split_once(':') {
                Some((n, o)) => (n, Some(o.to_string())),
                None => (e, None),
            };
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(bad_value(
                    "engine",
                    text,
                    "storage engine names, e.g. innodb,memory or memory:max_rows=2300",
                ));
            }
            Ok(Engine {
                name: name.to_string(),
                option,
            })
        })
        .collect()
}

/// `--query`, `--create`, ...: a file's statements when the value names a
/// file, else the value's own, cut at the delimiter.
fn statements(o: &OptValues, name: &str, delimiter: &str) -> Result<Vec<String>, BenchError> {
    let value = o.str(name);
    if value.is_empty() {
        return Ok(Vec::new());
    }
    let path = std::path::Path::new(value);
    let text = match std::fs::metadata(path) {
        Ok(m) if m.is_file() => std::fs::read(path)
            .map_err(|e| BenchError::Usage(format!("--{name}={value}: cannot read it: {e}")))
            .and_then(|b| {
                String::from_utf8(b).map_err(|_| {
                    BenchError::Usage(format!(
                        "--{name}={value}: the file is not UTF-8 text; give SQL statements"
                    ))
                })
            })?,
        Ok(_) => {
            return Err(BenchError::Usage(format!(
                "--{name}={value}: not a regular file; give a file of statements or the statements"
            )));
        }
        Err(_) => value.to_string(),
    };
    let list = sql::split(&text, delimiter);
    if list.iter().all(|s| s.trim().is_empty()) {
        return Err(BenchError::Usage(format!(
            "--{name}: no statement in it (statements are separated by --delimiter, {})",
            if delimiter == "\n" {
                "a new line".to_string()
            } else {
                format!("'{delimiter}'")
            }
        )));
    }
    Ok(list)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::testing;

    fn cfg(given: &[(&str, &str)]) -> Result<SlapConfig, BenchError> {
        SlapConfig::from_options(&testing::values(&specs(), given))
    }

    #[test]
    fn defaults_and_lists() {
        let c = cfg(&[("auto-generate-sql", "on"), ("concurrency", "1,8,32")]).unwrap();
        assert_eq!(c.concurrency, vec![1, 8, 32]);
        assert_eq!(c.create.len(), 100);
        assert_eq!(c.queries.len(), 11);
        assert!(c.drop);
        assert_eq!(c.client_limit(8), 0);
        let c = cfg(&[
            ("query", "SELECT 1;SELECT 2"),
            ("delimiter", ";"),
            ("number-of-queries", "100"),
            ("engine", "innodb,memory:max_rows=10"),
        ])
        .unwrap();
        assert!(!c.drop);
        assert_eq!(c.client_limit(8), 12);
        assert_eq!(c.engines[1].clause(), " Engine = memory max_rows=10");
        let c = cfg(&[("query", "SELECT 1;SELECT 2"), ("delimiter", ";")]).unwrap();
        assert_eq!(c.client_limit(3), 2);
    }

    #[test]
    fn bad_values_are_one_line() {
        for given in [
            vec![("concurrency", "0")],
            vec![("concurrency", "1,x")],
            vec![("iterations", "0")],
            vec![("auto-generate-sql", "on"), ("query", "SELECT 1")],
            vec![
                ("auto-generate-sql", "on"),
                ("auto-generate-sql-load-type", "key"),
            ],
            vec![("number-int-cols", "many")],
            vec![("query", ";;"), ("delimiter", ";")],
            vec![("engine", "inno db")],
        ] {
            let e = cfg(&given).unwrap_err();
            assert!(matches!(e, BenchError::Usage(_)), "{given:?}");
            assert!(!e.to_string().contains('\n'), "{e}");
        }
    }
}
