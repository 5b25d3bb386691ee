//! Questions about the server rather than the benchmark: any query's rows
//! as strings, the server's variables and counters, its data directory and
//! process, and the size of the tables.

use crate::{Connection, DbError, Target};
use std::collections::BTreeMap;

/// A result set with every value as text (NULL as None).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rows {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Option<String>>>,
    /// Each result in order (several for `a; b` on PostgreSQL): its
    /// columns and how many of `rows` are its own, in `rows`' order.
    pub sets: Vec<(Vec<String>, usize)>,
}

impl Rows {
    fn of(r: crate::types::TextResult) -> Rows {
        let sets = if r.sets.is_empty() {
            vec![(r.columns.clone(), r.rows.len())]
        } else {
            r.sets
        };
        Rows {
            columns: r.columns,
            rows: r.rows,
            sets,
        }
    }

    /// Name -> value from the first two columns.
    pub fn pairs(&self) -> BTreeMap<String, String> {
        self.rows
            .iter()
            .filter_map(|r| {
                let k = r.first()?.clone()?;
                Some((k, r.get(1).cloned().flatten().unwrap_or_default()))
            })
            .collect()
    }

    /// The first row as column name -> value, names prefixed with `prefix`.
    pub fn first_row(&self, prefix: &str) -> BTreeMap<String, String> {
        let mut m = BTreeMap::new();
        if let Some(r) = self.rows.first() {
            for (c, v) in self.columns.iter().zip(r) {
                if let Some(v) = v {
                    m.insert(format!("{prefix}{c}"), v.clone());
                }
            }
        }
        m
    }

    fn first_value(&self) -> Option<String> {
        self.rows.first().and_then(|r| r.first().cloned().flatten())
    }
}

/// The size of one table, as the server reports it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TableStats {
    pub name: String,
    pub rows: Option<u64>,
    pub data_bytes: Option<u64>,
    pub index_bytes: Option<u64>,
    pub total_bytes: Option<u64>,
}

/// How to find the server's main process on this machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PidHint {
    /// A pid file (MySQL's `pid_file`).
    File(String),
    /// Our own backend process, a child of the server's main process
    /// (PostgreSQL's `pg_backend_pid()`).
    ChildOf(u32),
    None,
}

fn sqlite_text(v: rusqlite::types::ValueRef<'_>) -> Option<String> {
    use rusqlite::types::ValueRef as V;
    Some(match v {
        V::Null => return None,
        V::Integer(i) => i.to_string(),
        V::Real(f) => f.to_string(),
        V::Text(t) => String::from_utf8_lossy(t).into_owned(),
        V::Blob(b) => format!("<{} bytes>", b.len()),
    })
}

fn num(v: &Option<String>) -> Option<u64> {
    v.as_deref()
        .and_then(|s| s.trim().parse::<f64>().ok())
        .filter(|f| *f >= 0.0)
        .map(|f| f as u64)
}

/// SQLite settings worth recording (there is no `SHOW VARIABLES`).
const SQLITE_PRAGMAS: &[&str] = &[
    "journal_mode",
    "synchronous",
    "page_size",
    "cache_size",
    "mmap_size",
    "locking_mode",
    "temp_store",
    "auto_vacuum",
    "wal_autocheckpoint",
    "busy_timeout",
    "foreign_keys",
    "threads",
];

/// Whether the target's server runs on this machine (a Unix socket, or a
/// loopback or own host name).
pub fn is_local(t: &Target) -> bool {
    match t {
        Target::Sqlite { .. } => true,
        Target::Mysql(s) | Target::Postgres(s) => {
            if s.socket.is_some() {
                return true;
            }
            let host = s.host(0).trim_matches(|c| c == '[' || c == ']');
            host.is_empty()
                || host.starts_with('/')
                || ["localhost", "127.0.0.1", "::1"].contains(&host)
                || host.starts_with("127.")
                || std::fs::read_to_string("/proc/sys/kernel/hostname")
                    .is_ok_and(|h| h.trim().eq_ignore_ascii_case(host))
        }
    }
}

impl Connection {
    /// Runs `sql` and returns every row, values as text (under the
    /// connection's statement timeout, as any statement).
    pub fn query_rows(&mut self, sql: &str) -> Result<Rows, DbError> {
        match self {
            // sysbench's --mysql-dry-run: a server that tells nothing.
            Connection::Dry(_) => Ok(Rows::default()),
            Connection::Mysql(c) => Ok(Rows::of(c.query_rows(sql)?)),
            Connection::Postgres(c) => Ok(Rows::of(c.query_rows(sql)?)),
            Connection::Sqlite(c) => c.with_timeout(|conn| {
                let map = crate::drivers::sqlite::map_err;
                let mut st = conn.prepare(sql).map_err(map)?;
                let columns: Vec<String> = st.column_names().map(|s| s.to_string()).collect();
                let n = columns.len();
                let mut rows = Vec::new();
                let mut q = st.query([]).map_err(map)?;
                while let Some(r) = q.next().map_err(map)? {
                    let mut row = Vec::with_capacity(n);
                    for i in 0..n {
                        row.push(r.get_ref(i).ok().and_then(sqlite_text));
                    }
                    rows.push(row);
                }
                let sets = vec![(columns.clone(), rows.len())];
                Ok(Rows {
                    columns,
                    rows,
                    sets,
                })
            }),
        }
    }

    /// Every server variable, by name (PostgreSQL: the setting and its
    /// unit, e.g. `16384 8kB`). Values are not masked here.
    pub fn server_variables(&mut self) -> Result<BTreeMap<String, String>, DbError> {
        match self {
            // sysbench's --mysql-dry-run: a server that tells nothing.
            Connection::Dry(_) => Ok(BTreeMap::new()),
            Connection::Mysql(_) => Ok(self.query_rows("SHOW GLOBAL VARIABLES")?.pairs()),
            Connection::Postgres(_) => {
                let r =
                    self.query_rows("SELECT name, setting, coalesce(unit, '') FROM pg_settings")?;
                Ok(r.rows
                    .iter()
                    .filter_map(|row| {
                        let name = row.first()?.clone()?;
                        let v = row.get(1).cloned().flatten().unwrap_or_default();
                        let unit = row.get(2).cloned().flatten().unwrap_or_default();
                        Some((
                            name,
                            if unit.is_empty() {
                                v
                            } else {
                                format!("{v} {unit}")
                            },
                        ))
                    })
                    .collect())
            }
            Connection::Sqlite(_) => {
                let mut m = BTreeMap::new();
                for p in SQLITE_PRAGMAS {
                    if let Ok(r) = self.query_rows(&format!("PRAGMA {p}"))
                        && let Some(v) = r.first_value()
                    {
                        m.insert((*p).to_string(), v);
                    }
                }
                Ok(m)
            }
        }
    }

    /// The server's cumulative counters: MySQL `SHOW GLOBAL STATUS`;
    /// PostgreSQL pg_stat_database (this database) as `database.*`,
    /// pg_stat_bgwriter as `bgwriter.*`, and where the server has them
    /// pg_stat_checkpointer (17+) as `checkpointer.*` and pg_stat_wal
    /// (14+) as `wal.*`. SQLite has none.
    pub fn server_counters(&mut self) -> Result<BTreeMap<String, String>, DbError> {
        match self {
            // sysbench's --mysql-dry-run: a server that tells nothing.
            Connection::Dry(_) => Ok(BTreeMap::new()),
            Connection::Mysql(_) => Ok(self.query_rows("SHOW GLOBAL STATUS")?.pairs()),
            Connection::Postgres(_) => {
                let mut m = self
                    .query_rows(
                        "SELECT * FROM pg_stat_database WHERE datname = current_database()",
                    )?
                    .first_row("database.");
                // Tells a restart between two readings (the statistics
                // may survive a clean restart).
                if let Some(up) = self
                    .query_rows(
                        "SELECT extract(epoch FROM now() - pg_postmaster_start_time())::float8",
                    )?
                    .first_value()
                {
                    m.insert("server.uptime_s".into(), up);
                }
                for (view, prefix) in [
                    ("pg_stat_bgwriter", "bgwriter."),
                    ("pg_stat_checkpointer", "checkpointer."),
                    ("pg_stat_wal", "wal."),
                ] {
                    let exists = self
                        .query_rows(&format!(
                            "SELECT to_regclass('pg_catalog.{view}') IS NOT NULL"
                        ))?
                        .first_value()
                        .is_some_and(|v| v == "t");
                    if exists {
                        m.extend(
                            self.query_rows(&format!("SELECT * FROM {view}"))?
                                .first_row(prefix),
                        );
                    }
                }
                Ok(m)
            }
            Connection::Sqlite(_) => Ok(BTreeMap::new()),
        }
    }

    /// Other client sessions on this database (PostgreSQL; 0 elsewhere).
    /// PostgreSQL publishes a session's statistics when it ends, so the
    /// counters after a run are read once the run's sessions are gone.
    pub fn other_sessions(&mut self) -> Result<u64, DbError> {
        match self {
            Connection::Postgres(_) => Ok(num(&self
                .query_rows(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
                     AND pid <> pg_backend_pid() AND backend_type = 'client backend'",
                )?
                .first_value())
            .unwrap_or(0)),
            _ => Ok(0),
        }
    }

    /// Other clients' sessions busy with a statement right now, server
    /// wide (MySQL/MariaDB: processlist entries not sleeping, system
    /// threads left out; PostgreSQL: active client backends); 0 on SQLite.
    /// A server's global counters include their work.
    pub fn active_other_sessions(&mut self) -> Result<u64, DbError> {
        let sql = match self {
            // sysbench's --mysql-dry-run: a server that tells nothing.
            Connection::Dry(_) => return Ok(0),
            Connection::Mysql(_) => {
                "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() \
                 AND COMMAND NOT IN ('Sleep', 'Daemon', 'Binlog Dump', 'Binlog Dump GTID') \
                 AND USER NOT IN ('system user', 'event_scheduler')"
            }
            Connection::Postgres(_) => {
                "SELECT count(*) FROM pg_stat_activity WHERE pid <> pg_backend_pid() \
                 AND backend_type = 'client backend' AND state NOT IN ('idle')"
            }
            Connection::Sqlite(_) => return Ok(0),
        };
        Ok(num(&self.query_rows(sql)?.first_value()).unwrap_or(0))
    }

    /// Waits (at most `max`) until the server has published the
    /// statistics of sessions that ended: on PostgreSQL, until no more than
    /// `sessions_before` other sessions are left on this database, and
    /// before version 15 (statistics sent to a collector process) another
    /// 600 ms. Nothing to wait for elsewhere.
    pub fn settle_statistics(
        &mut self,
        sessions_before: u64,
        max: std::time::Duration,
    ) -> Result<(), DbError> {
        if !matches!(self, Connection::Postgres(_)) {
            return Ok(());
        }
        let until = std::time::Instant::now() + max;
        while std::time::Instant::now() < until && self.other_sessions()? > sessions_before {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let version = num(&self.query_rows("SHOW server_version_num")?.first_value());
        if version.is_some_and(|v| v < 150000) {
            std::thread::sleep(std::time::Duration::from_millis(600));
        }
        Ok(())
    }

    /// The data directory (SQLite: the database file); None when the
    /// server does not tell this user.
    pub fn datadir(&mut self) -> Result<Option<String>, DbError> {
        match self {
            // sysbench's --mysql-dry-run: a server that tells nothing.
            Connection::Dry(_) => Ok(None),
            Connection::Mysql(_) => Ok(self.query_rows("SELECT @@datadir")?.first_value()),
            Connection::Postgres(_) => Ok(self
                .query_rows("SELECT setting FROM pg_settings WHERE name = 'data_directory'")?
                .first_value()),
            Connection::Sqlite(c) => Ok(Some(c.path.to_string_lossy().into_owned())),
        }
    }

    /// How to find the server's process.
    pub fn pid_hint(&mut self) -> Result<PidHint, DbError> {
        match self {
            // sysbench's --mysql-dry-run: a server that tells nothing.
            Connection::Dry(_) => Ok(PidHint::None),
            Connection::Mysql(_) => Ok(self
                .query_rows("SELECT @@pid_file")?
                .first_value()
                .map_or(PidHint::None, PidHint::File)),
            Connection::Postgres(_) => Ok(num(&self
                .query_rows("SELECT pg_backend_pid()")?
                .first_value())
            .map_or(PidHint::None, |p| PidHint::ChildOf(p as u32))),
            Connection::Sqlite(_) => Ok(PidHint::None),
        }
    }

    /// Sizes of the tables in the current database (schema).
    pub fn table_stats(&mut self) -> Result<Vec<TableStats>, DbError> {
        match self {
            // sysbench's --mysql-dry-run: a server that tells nothing.
            Connection::Dry(_) => Ok(Vec::new()),
            Connection::Mysql(_) => {
                let r = self.query_rows(
                    "SELECT table_name, table_rows, data_length, index_length \
                         FROM information_schema.TABLES WHERE table_schema = DATABASE() \
                         AND table_type = 'BASE TABLE' ORDER BY table_name",
                )?;
                Ok(r.rows
                    .iter()
                    .map(|row| {
                        let g = |i: usize| row.get(i).cloned().flatten();
                        let (data, index) = (num(&g(2)), num(&g(3)));
                        TableStats {
                            name: g(0).unwrap_or_default(),
                            rows: num(&g(1)),
                            data_bytes: data,
                            index_bytes: index,
                            total_bytes: data.zip(index).map(|(a, b)| a + b),
                        }
                    })
                    .collect())
            }
            Connection::Postgres(_) => {
                let r = self.query_rows(
                    "SELECT c.relname, c.reltuples::bigint, pg_table_size(c.oid), \
                         pg_indexes_size(c.oid), pg_total_relation_size(c.oid) \
                         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
                         WHERE c.relkind IN ('r', 'p') AND n.nspname = current_schema() \
                         ORDER BY c.relname",
                )?;
                Ok(r.rows
                    .iter()
                    .map(|row| {
                        let g = |i: usize| row.get(i).cloned().flatten();
                        TableStats {
                            name: g(0).unwrap_or_default(),
                            // -1: never vacuumed or analyzed.
                            rows: num(&g(1)),
                            data_bytes: num(&g(2)),
                            index_bytes: num(&g(3)),
                            total_bytes: num(&g(4)),
                        }
                    })
                    .collect())
            }
            Connection::Sqlite(_) => {
                let tables = self.tables()?;
                // dbstat (when compiled in) gives bytes per table and index.
                let per_object = self
                    .query_rows("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name")
                    .ok()
                    .map(|r| r.pairs());
                let indexes = self
                    .query_rows("SELECT tbl_name, name FROM sqlite_schema WHERE type = 'index'")?;
                let mut out = Vec::new();
                for t in tables {
                    let mut s = TableStats {
                        name: t.clone(),
                        ..TableStats::default()
                    };
                    if let Some(sizes) = &per_object {
                        let size = |n: &str| sizes.get(n).and_then(|v| v.parse::<u64>().ok());
                        let data = size(&t).unwrap_or(0);
                        let index: u64 = indexes
                            .rows
                            .iter()
                            .filter(|r| r.first().cloned().flatten().as_deref() == Some(&t))
                            .filter_map(|r| r.get(1).cloned().flatten())
                            .filter_map(|n| size(&n))
                            .sum();
                        s.data_bytes = Some(data);
                        s.index_bytes = Some(index);
                        s.total_bytes = Some(data + index);
                    }
                    out.push(s);
                }
                Ok(out)
            }
        }
    }

    /// SQLite only: the database's size (page_count * page_size).
    pub fn database_bytes(&mut self) -> Result<Option<u64>, DbError> {
        match self {
            Connection::Sqlite(_) => {
                let pages = self.query_i64("PRAGMA page_count")?;
                let size = self.query_i64("PRAGMA page_size")?;
                Ok(pages.zip(size).map(|(a, b)| (a.max(0) * b.max(0)) as u64))
            }
            _ => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ConnectOptions, Target};

    #[test]
    fn sqlite_rows_variables_and_sizes() {
        let dir = std::env::temp_dir().join(format!("dbmeter-introspect-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let file = dir.join("t.sqlite");
        let _ = std::fs::remove_file(&file);
        let target = Target::Sqlite {
            path: file.clone(),
            implicit: false,
        };
        assert!(is_local(&target));
        (|| {
            let mut c = Connection::connect(&ConnectOptions::new(target))?;
            c.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT, n REAL)")?;
            c.execute("CREATE INDEX t_v ON t (v)")?;
            c.execute("INSERT INTO t VALUES (1, 'a', 1.5), (2, NULL, 2)")?;
            let r = c.query_rows("SELECT id, v, n FROM t ORDER BY id")?;
            assert_eq!(r.columns, ["id", "v", "n"]);
            assert_eq!(
                r.rows[0],
                [Some("1".into()), Some("a".into()), Some("1.5".into())]
            );
            assert_eq!(r.rows[1][1], None);
            let v = c.server_variables()?;
            assert_eq!(v.get("journal_mode").map(String::as_str), Some("wal"));
            assert!(c.server_counters()?.is_empty());
            let t = c.table_stats()?;
            assert_eq!(t.len(), 1);
            assert_eq!(t[0].name, "t");
            let total = c.database_bytes()?.unwrap_or(0);
            assert!(total > 0);
            if let Some(b) = t[0].total_bytes {
                assert!(b > 0 && b <= total, "{t:?} {total}");
            }
            assert_eq!(c.datadir()?, Some(file.to_string_lossy().into_owned()));
            Ok::<_, DbError>(())
        })()
        .unwrap_or_else(|e| panic!("{e}"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
