//! `prepare tpch`: the tables created, the rows generated in parallel and
//! streamed into the server (COPY, LOAD DATA LOCAL INFILE, SQLite
//! INSERTs) with no temporary files, then keys, foreign keys, the DBT3
//! indexes and statistics; or, with `--output DIR`, the .tbl files that
//! dbgen writes (and its update sets).

use super::schema::{self, IndexTime, STATE_TABLE, TABLES};
use super::{generate, sf_text, update_sets};
use crate::benchmark::{BenchError, Context, LoadProgress};
use crate::oltp::LoadReport;
use crate::parallel::on_connections;
use dbmeter_db::{ConnectOptions, Connection, DbError, Dialect, Target};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// Bytes handed to the server per packet or COPY message.
const PACKET: usize = 256 * 1024;

/// What `prepare` is asked to make.
#[derive(Clone, Debug)]
pub struct PrepareConfig {
    pub sf: f64,
    pub index_time: IndexTime,
    pub foreign_keys: bool,
    pub workers: usize,
}

/// One part of one table.
#[derive(Clone, Copy, Debug)]
struct Task {
    table: &'static str,
    part: i32,
    parts: i32,
}

fn tasks(sf: f64) -> Vec<Task> {
    TABLES
        .iter()
        .flat_map(|t| {
            let parts = generate::parts(t.name, sf);
            (1..=parts).map(move |part| Task {
                table: t.name,
                part,
                parts,
            })
        })
        .collect()
}

/// Bytes of .tbl text at `sf`, about.
pub fn text_bytes(sf: f64) -> u64 {
    TABLES
        .iter()
        .map(|t| generate::expected_rows(t.name, sf) * generate::bytes_per_row(t.name))
        .sum()
}

/// Rows of all tables at `sf` (lineitem: about).
pub fn total_rows(sf: f64) -> u64 {
    TABLES
        .iter()
        .map(|t| generate::expected_rows(t.name, sf))
        .sum()
}

fn gib(b: u64) -> String {
    format!("{:.2} GiB", b as f64 / (1u64 << 30) as f64)
}

/// The directory holding the database's files, when it is on this
/// machine: the SQLite file's directory, a local server's data directory.
fn local_data_dir(conn: &mut Connection, target: &Target) -> Option<PathBuf> {
    match target {
        Target::Sqlite { path, .. } => {
            let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
            Some(dir.map_or_else(|| PathBuf::from("."), Path::to_path_buf))
        }
        Target::Mysql(_) | Target::Postgres(_) => {
            if !dbmeter_db::is_local(target) {
                return None;
            }
            let sql = if conn.dialect() == Dialect::Mysql {
                "SELECT @@datadir"
            } else {
                "SHOW data_directory"
            };
            let rows = conn.query_rows(sql).ok()?;
            let dir = rows.rows.into_iter().next()?.into_iter().next()??;
            Some(PathBuf::from(dir))
        }
    }
}

/// Fails when the filesystem under `dir` cannot hold `need` bytes.
fn check_space(dir: &Path, need: u64, what: &str) -> Result<(), BenchError> {
    match dbmeter_env::storage::free_bytes(dir) {
        Some(free) if free < need => Err(BenchError::Failed(format!(
            "{what} needs about {} and {} has {} free; free some space or choose a smaller --scale-factor",
            gib(need),
            dir.display(),
            gib(free)
        ))),
        _ => Ok(()),
    }
}

/// Session settings of the loaders: MySQL/MariaDB skip the checks the
/// generated data passes by construction, as the DBT3 kit's loads do.
fn loader_session(conn: &mut Connection) -> Result<(), DbError> {
    if conn.dialect() == Dialect::Mysql {
        conn.execute("SET SESSION foreign_key_checks = 0, unique_checks = 0")?;
    }
    Ok(())
}

/// Loads the tables into the target of `opts`.
pub fn prepare(
    ctx: &Context,
    opts: &ConnectOptions,
    cfg: &PrepareConfig,
) -> Result<(), BenchError> {
    let mut conn = Connection::connect(opts)?;
    let d = conn.dialect();
    let have = schema::existing(&mut conn)?;
    if !have.is_empty() {
        return Err(BenchError::Failed(format!(
            "TPC-H tables already exist in {} ({}); run `dbmeter cleanup tpch` with the same --db first",
            opts.target,
            have.join(", ")
        )));
    }
    let factor = match d {
        Dialect::Mysql => 2.4,
        Dialect::Postgres => 2.0,
        Dialect::Sqlite => 1.8,
    };
    let need = (text_bytes(cfg.sf) as f64 * factor) as u64;
    if let Some(dir) = local_data_dir(&mut conn, &opts.target) {
        check_space(
            &dir,
            need,
            &format!("TPC-H SF {} with indexes", sf_text(cfg.sf)),
        )?;
    }
    // SQLite has one writer at a time: one loader.
    let workers = if d == Dialect::Sqlite {
        1
    } else {
        cfg.workers.max(1)
    };
    let before = cfg.index_time == IndexTime::Before;
    ctx.say(&format!(
        "Creating the TPC-H tables (SF {}, about {} rows, {} of text) in {}",
        sf_text(cfg.sf),
        total_rows(cfg.sf),
        gib(text_bytes(cfg.sf)),
        opts.target
    ));
    for t in TABLES {
        conn.execute(&schema::create_table(t, d, before, cfg.foreign_keys))?;
    }
    if before {
        for (_, stmts) in schema::after_load(d, true) {
            for s in stmts {
                conn.execute(&s)?;
            }
        }
    }
    let progress = ctx.console.progress();
    progress
        .total
        .fetch_add(total_rows(cfg.sf), Ordering::Relaxed);
    ctx.say(&format!(
        "Loading with {workers} loader{} ({})",
        if workers == 1 { "" } else { "s" },
        conn.delimited_method()?
    ));
    let started = Instant::now();
    let all = tasks(cfg.sf);
    // With foreign keys checked during the load (PostgreSQL, keys
    // before), a table waits for the tables it references.
    let stages: Vec<Vec<Task>> = if before && cfg.foreign_keys && d == Dialect::Postgres {
        TABLES
            .iter()
            .map(|t| all.iter().filter(|k| k.table == t.name).copied().collect())
            .collect()
    } else {
        vec![all]
    };
    let mut rows = 0u64;
    for stage in &stages {
        rows += load_stage(opts, workers, stage, cfg.sf, progress)?;
    }
    let load_time = started.elapsed();
    ctx.say(&crate::oltp::load_line(
        "Loaded",
        &LoadReport {
            tables: TABLES.len() as u32,
            rows,
            elapsed: load_time,
        },
    ));
    let t = Instant::now();
    if !before {
        build_indexes(opts, workers.min(TABLES.len()), d)?;
        if cfg.foreign_keys {
            loader_session(&mut conn)?;
            for s in schema::foreign_keys_after(d) {
                conn.execute(&s)?;
            }
        }
        ctx.say(&format!(
            "Created the keys{} and {} indexes in {:.2} s",
            if cfg.foreign_keys && d != Dialect::Sqlite {
                ", foreign keys"
            } else {
                ""
            },
            schema::INDEXES.len(),
            t.elapsed().as_secs_f64()
        ));
    }
    let t = Instant::now();
    for s in schema::analyze(d) {
        conn.execute(&s)?;
    }
    ctx.say(&format!(
        "Gathered statistics in {:.2} s",
        t.elapsed().as_secs_f64()
    ));
    write_state(&mut conn, cfg.sf)?;
    ctx.say(&format!(
        "TPC-H SF {} ready in {:.2} s",
        sf_text(cfg.sf),
        started.elapsed().as_secs_f64()
    ));
    Ok(())
}

/// Records the scale factor (runs and checks read it) and the next
/// update set the refresh functions use.
fn write_state(conn: &mut Connection, sf: f64) -> Result<(), DbError> {
    conn.execute(&format!(
        "CREATE TABLE {STATE_TABLE} (scale_factor VARCHAR(20) NOT NULL, next_update_set INTEGER NOT NULL)"
    ))?;
    conn.execute(&format!(
        "INSERT INTO {STATE_TABLE} VALUES ('{}', 1)",
        sf_text(sf)
    ))?;
    Ok(())
}

/// Loads the parts of one stage on `workers` connections; returns rows.
fn load_stage(
    opts: &ConnectOptions,
    workers: usize,
    tasks: &[Task],
    sf: f64,
    progress: &LoadProgress,
) -> Result<u64, DbError> {
    let next = AtomicUsize::new(0);
    let workers = workers.min(tasks.len()).max(1);
    let loaded = on_connections(opts, workers, None, &|_, conn| {
        loader_session(conn)?;
        let mut rows = 0u64;
        while let Some(task) = tasks.get(next.fetch_add(1, Ordering::Relaxed)) {
            rows += load_part(conn, task, sf, progress)?;
        }
        Ok(rows)
    })?;
    Ok(loaded.iter().sum())
}

fn load_part(
    conn: &mut Connection,
    task: &Task,
    sf: f64,
    progress: &LoadProgress,
) -> Result<u64, DbError> {
    let Some(table) = schema::table(task.table) else {
        return Ok(0);
    };
    let Some(mut src) = generate::source(task.table, sf, task.part, task.parts, false) else {
        return Ok(0);
    };
    let mut fill = |buf: &mut Vec<u8>| -> bool {
        let (n, more) = src.fill(buf, PACKET);
        progress.done.fetch_add(n, Ordering::Relaxed);
        more
    };
    conn.load_delimited(table.name, &table.column_names(), b'|', &mut fill)
}

/// Keys and indexes, a table per connection, the largest tables first.
fn build_indexes(opts: &ConnectOptions, workers: usize, d: Dialect) -> Result<(), DbError> {
    let mut jobs = schema::after_load(d, false);
    jobs.reverse();
    let queue = Mutex::new(jobs);
    // SQLite: one writer.
    let workers = if d == Dialect::Sqlite {
        1
    } else {
        workers.max(1)
    };
    on_connections(opts, workers, None, &|_, conn| {
        loop {
            let job = match queue.lock() {
                Ok(mut q) => q.pop(),
                Err(_) => None,
            };
            let Some((_, stmts)) = job else {
                return Ok(());
            };
            for s in stmts {
                conn.execute(&s)?;
            }
        }
    })?;
    Ok(())
}

/// Writes the .tbl files into `dir` (and `update_sets` update sets): the
/// parts of all tables generated by `workers` threads, written in order by
/// this one as they come (see [`write_parts`]).
pub fn write_files(
    ctx: &Context,
    dir: &Path,
    sf: f64,
    workers: usize,
    update_sets: u32,
) -> Result<(), BenchError> {
    std::fs::create_dir_all(dir).map_err(|e| {
        BenchError::Failed(format!("--output={}: cannot create it: {e}", dir.display()))
    })?;
    check_space(
        dir,
        text_bytes(sf) + text_bytes(sf) / 20,
        &format!("TPC-H SF {}", sf_text(sf)),
    )?;
    let progress = ctx.console.progress();
    progress.total.fetch_add(total_rows(sf), Ordering::Relaxed);
    let started = Instant::now();
    let rows = write_parts(dir, &tasks(sf), sf, workers.max(1), progress)?;
    ctx.say(&format!(
        "Wrote {rows} rows in {} .tbl files to {} in {:.2} s ({:.0} rows/s)",
        TABLES.len(),
        dir.display(),
        started.elapsed().as_secs_f64(),
        rows as f64 / started.elapsed().as_secs_f64().max(1e-9)
    ));
    for set in 1..=update_sets {
        let u = update_sets::update_set(sf, set);
        for (name, text) in [
            (format!("orders.tbl.u{set}"), update_sets::orders_text(&u)),
            (
                format!("lineitem.tbl.u{set}"),
                update_sets::lineitems_text(&u),
            ),
            (format!("delete.{set}"), update_sets::deletes_text(&u)),
        ] {
            let path = dir.join(&name);
            std::fs::write(&path, text)
                .map_err(|e| BenchError::Failed(format!("cannot write {}: {e}", path.display())))?;
        }
    }
    if update_sets > 0 {
        ctx.say(&format!(
            "Wrote update set{} 1..{update_sets} (orders.tbl.uK, lineitem.tbl.uK, delete.K)",
            if update_sets == 1 { "" } else { "s" }
        ));
    }
    Ok(())
}

/// How far generation may run ahead of writing, in parts per worker.
const AHEAD: usize = 2;

/// Generates `tasks` (in table order) on `workers` threads and writes each
/// table's file in order on this thread as parts arrive: generation and
/// writing overlap, and at most `workers x AHEAD` parts wait in memory.
fn write_parts(
    dir: &Path,
    tasks: &[Task],
    sf: f64,
    workers: usize,
    progress: &LoadProgress,
) -> Result<u64, BenchError> {
    use std::collections::BTreeMap;
    use std::io::Write;
    use std::sync::{Condvar, mpsc};
    let next = AtomicUsize::new(0);
    // Parts written so far: a worker waits while it would run too far ahead.
    let written = (Mutex::new(0usize), Condvar::new());
    let stop = std::sync::atomic::AtomicBool::new(false);
    let (tx, rx) = mpsc::channel::<(usize, Vec<u8>, u64)>();
    std::thread::scope(|s| {
        for _ in 0..workers {
            let tx = tx.clone();
            let (next, written, stop) = (&next, &written, &stop);
            s.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(task) = tasks.get(i) else { return };
                    {
                        let Ok(mut w) = written.0.lock() else { return };
                        while i >= *w + workers * AHEAD && !stop.load(Ordering::Relaxed) {
                            w = match written.1.wait(w) {
                                Ok(w) => w,
                                Err(_) => return,
                            };
                        }
                    }
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                    let mut buf = Vec::new();
                    let mut n = 0;
                    if let Some(mut src) =
                        generate::source(task.table, sf, task.part, task.parts, true)
                    {
                        loop {
                            let (k, more) = src.fill(&mut buf, PACKET);
                            n += k;
                            progress.done.fetch_add(k, Ordering::Relaxed);
                            if !more {
                                break;
                            }
                        }
                    }
                    if tx.send((i, buf, n)).is_err() {
                        return;
                    }
                }
            });
        }
        drop(tx);
        let mut pending: BTreeMap<usize, (Vec<u8>, u64)> = BTreeMap::new();
        let mut at = 0usize;
        let mut rows = 0u64;
        let mut file: Option<(&str, std::io::BufWriter<std::fs::File>)> = None;
        let result = (|| -> Result<u64, BenchError> {
            for (i, buf, n) in rx.iter() {
                pending.insert(i, (buf, n));
                while let Some((buf, n)) = pending.remove(&at) {
                    let table = tasks[at].table;
                    let path = dir.join(format!("{table}.tbl"));
                    let fail = |e: std::io::Error| {
                        BenchError::Failed(format!("cannot write {}: {e}", path.display()))
                    };
                    if file.as_ref().is_none_or(|(t, _)| *t != table) {
                        if let Some((_, mut f)) = file.take() {
                            f.flush().map_err(fail)?;
                        }
                        let f = std::fs::File::create(&path).map_err(fail)?;
                        file = Some((table, std::io::BufWriter::with_capacity(1 << 20, f)));
                    }
                    if let Some((_, f)) = file.as_mut() {
                        f.write_all(&buf).map_err(fail)?;
                    }
                    rows += n;
                    at += 1;
                    if let Ok(mut w) = written.0.lock() {
                        *w = at;
                    }
                    written.1.notify_all();
                }
            }
            if let Some((table, mut f)) = file.take() {
                f.flush()
                    .map_err(|e| BenchError::Failed(format!("cannot write {table}.tbl: {e}")))?;
            }
            Ok(rows)
        })();
        if result.is_err() {
            stop.store(true, Ordering::Relaxed);
            written.1.notify_all();
            // Let the workers end: they find the receiver gone.
            drop(rx);
        }
        result
    })
}

/// Drops the tables; returns their names.
pub fn cleanup(opts: &ConnectOptions) -> Result<Vec<&'static str>, DbError> {
    let mut conn = Connection::connect(opts)?;
    schema::drop_all(&mut conn)
}

/// The scale factor and next update set recorded by `prepare`; an error
/// naming the prepare command when the data is missing.
pub fn read_state(conn: &mut Connection, hint: &str) -> Result<(f64, u32), BenchError> {
    let have = schema::existing(conn)?;
    if let Some(missing) = TABLES.iter().find(|t| !have.contains(&t.name)) {
        return Err(BenchError::Failed(format!(
            "table {} does not exist; {hint}",
            missing.name
        )));
    }
    let rows = conn
        .query_rows(&format!(
            "SELECT scale_factor, next_update_set FROM {STATE_TABLE}"
        ))
        .map_err(|e| {
            BenchError::Failed(format!(
                "the TPC-H tables were not made by `dbmeter prepare tpch` ({e}); {hint}"
            ))
        })?;
    let cell = |i: usize| -> Option<String> {
        rows.rows
            .first()?
            .get(i)?
            .as_ref()
            .map(|s| s.trim().to_string())
    };
    let sf = cell(0).and_then(|s| s.parse::<f64>().ok());
    let next = cell(1).and_then(|s| s.split('.').next()?.parse::<u32>().ok());
    match (sf, next) {
        (Some(sf), Some(next)) if sf > 0.0 => Ok((sf, next)),
        _ => Err(BenchError::Failed(format!(
            "{STATE_TABLE} is empty or damaged; {hint}"
        ))),
    }
}
