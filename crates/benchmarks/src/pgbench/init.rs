//! pgbench's `-i`: its four tables as pgbench 15 creates them, filled
//! client-side or server-side, vacuumed, with primary and foreign keys,
//! step by step as `--init-steps` says (`dtgGvpf`).
//!
//! On PostgreSQL the statements are pgbench's own. On MySQL/MariaDB and
//! SQLite the same tables are made with what those take: no fill factor
//! or unlogged tables, `TRUNCATE`/`DELETE` one table at a time, `ANALYZE`
//! for the vacuum; SQLite gets unique indexes for primary keys and no
//! foreign keys (it cannot add them to a table).

use crate::benchmark::{BenchError, Context};
use dbmeter_db::{Connection, DbError, Dialect};
use std::sync::atomic::Ordering;
use std::time::Instant;

pub const NBRANCHES: i64 = 1;
pub const NTELLERS: i64 = 10;
pub const NACCOUNTS: i64 = 100_000;
/// From this scale on, account ids are bigint (as pgbench).
const SCALE_32BIT_THRESHOLD: i64 = 20_000;

/// The tables, in pgbench's order: name, columns (aid int), columns (aid
/// bigint), whether it takes a fill factor.
const TABLES: [(&str, &str, &str, bool); 4] = [
    (
        "pgbench_history",
        "tid int,bid int,aid    int,delta int,mtime timestamp,filler char(22)",
        "tid int,bid int,aid bigint,delta int,mtime timestamp,filler char(22)",
        false,
    ),
    (
        "pgbench_tellers",
        "tid int not null,bid int,tbalance int,filler char(84)",
        "tid int not null,bid int,tbalance int,filler char(84)",
        true,
    ),
    (
        "pgbench_accounts",
        "aid    int not null,bid int,abalance int,filler char(84)",
        "aid bigint not null,bid int,abalance int,filler char(84)",
        true,
    ),
    (
        "pgbench_branches",
        "bid int not null,bbalance int,filler char(88)",
        "bid int not null,bbalance int,filler char(88)",
        true,
    ),
];

pub const TABLE_NAMES: [&str; 4] = [
    "pgbench_accounts",
    "pgbench_branches",
    "pgbench_history",
    "pgbench_tellers",
];

/// The steps pgbench takes without `--init-steps`.
pub const DEFAULT_STEPS: &str = "dtgvp";

/// What `prepare` does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InitSpec {
    pub scale: i64,
    pub fillfactor: i64,
    pub steps: String,
    pub unlogged: bool,
    /// `--partitions` of pgbench_accounts (0: not partitioned) and
    /// `--partition-method` (`range` or `hash`).
    pub partitions: i64,
    pub partition_method: String,
    /// `--tablespace` and `--index-tablespace` (PostgreSQL only).
    pub tablespace: Option<String>,
    pub index_tablespace: Option<String>,
}

impl InitSpec {
    /// The steps from `--init-steps`, `--foreign-keys` and `--no-vacuum`,
    /// checked as pgbench checks them.
    pub fn new(
        scale: i64,
        fillfactor: i64,
        steps: &str,
        foreign_keys: bool,
        no_vacuum: bool,
        unlogged: bool,
    ) -> Result<InitSpec, String> {
        if scale < 1 {
            return Err(format!(
                "invalid --scale={scale}: the scale factor must be at least 1"
            ));
        }
        if !(10..=100).contains(&fillfactor) {
            return Err(format!(
                "invalid --fillfactor={fillfactor}: it must be between 10 and 100"
            ));
        }
        let mut s: String = steps.chars().filter(|c| *c != ' ').collect();
        if let Some(bad) = s.chars().find(|c| !"dtgGvpf".contains(*c)) {
            return Err(format!(
                "unrecognized initialization step \"{bad}\" in --init-steps={steps}: the steps are d (drop tables), t (create tables), g (generate data client-side), G (generate data server-side), v (vacuum), p (primary keys), f (foreign keys)"
            ));
        }
        if no_vacuum {
            s.retain(|c| c != 'v');
        }
        if foreign_keys && !s.contains('f') {
            s.push('f');
        }
        Ok(InitSpec {
            scale,
            fillfactor,
            steps: s,
            unlogged,
            partitions: 0,
            partition_method: "range".into(),
            tablespace: None,
            index_tablespace: None,
        })
    }
}

fn run(conn: &mut Connection, sql: &str) -> Result<(), BenchError> {
    conn.execute(sql)
        .map(|_| ())
        .map_err(|e| BenchError::Failed(format!("{sql}: {}", e.message)))
}

/// Drops pgbench's tables if they exist.
pub fn drop_tables(conn: &mut Connection) -> Result<(), BenchError> {
    match conn.dialect() {
        Dialect::Postgres => run(
            conn,
            "drop table if exists pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers",
        ),
        Dialect::Mysql | Dialect::Sqlite => {
            // Tables with foreign keys first.
            for t in [
                "pgbench_history",
                "pgbench_tellers",
                "pgbench_accounts",
                "pgbench_branches",
            ] {
                run(conn, &format!("drop table if exists {t}"))?;
            }
            Ok(())
        }
    }
}

/// An SQL identifier in double quotes (a tablespace's name as given).
fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

fn create_tables(conn: &mut Connection, spec: &InitSpec, ctx: &Context) -> Result<(), BenchError> {
    let pg = conn.dialect() == Dialect::Postgres;
    let partitioned = pg && spec.partitions > 0;
    for (name, small, big, fill) in TABLES {
        let cols = if spec.scale >= SCALE_32BIT_THRESHOLD {
            big
        } else {
            small
        };
        let unlogged = if pg && spec.unlogged { " unlogged" } else { "" };
        let mut with = if partitioned && name == "pgbench_accounts" {
            format!(" partition by {} (aid)", spec.partition_method)
        } else if pg && fill {
            format!(" with (fillfactor={})", spec.fillfactor)
        } else {
            String::new()
        };
        if let Some(ts) = spec.tablespace.as_deref().filter(|_| pg) {
            with.push_str(&format!(" tablespace {}", quote_ident(ts)));
        }
        run(
            conn,
            &format!("create{unlogged} table {name}({cols}){with}"),
        )?;
    }
    if partitioned {
        create_partitions(conn, spec, ctx)?;
    }
    Ok(())
}

/// pgbench_accounts' partitions, as pgbench makes them: by range, equal
/// parts of the account ids with the first and last open-ended; by hash,
/// one partition per remainder.
fn create_partitions(
    conn: &mut Connection,
    spec: &InitSpec,
    ctx: &Context,
) -> Result<(), BenchError> {
    let n = spec.partitions;
    ctx.say(&format!("creating {n} partitions..."));
    let unlogged = if spec.unlogged { " unlogged" } else { "" };
    let part_size = (NACCOUNTS * spec.scale + n - 1) / n;
    for p in 1..=n {
        let bounds = if spec.partition_method == "hash" {
            format!("with (modulus {n}, remainder {})", p - 1)
        } else {
            let from = if p == 1 {
                "minvalue".to_string()
            } else {
                ((p - 1) * part_size + 1).to_string()
            };
            let to = if p < n {
                (p * part_size + 1).to_string()
            } else {
                "maxvalue".to_string()
            };
            format!("from ({from}) to ({to})")
        };
        run(
            conn,
            &format!(
                "create{unlogged} table pgbench_accounts_{p} partition of pgbench_accounts for values {bounds} with (fillfactor={})",
                spec.fillfactor
            ),
        )?;
    }
    Ok(())
}

fn truncate(conn: &mut Connection) -> Result<(), BenchError> {
    match conn.dialect() {
        Dialect::Postgres => run(
            conn,
            "truncate table pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers",
        ),
        Dialect::Mysql => {
            for t in TABLE_NAMES {
                run(conn, &format!("delete from {t}"))?;
            }
            Ok(())
        }
        Dialect::Sqlite => {
            for t in TABLE_NAMES {
                run(conn, &format!("delete from {t}"))?;
            }
            Ok(())
        }
    }
}

/// Rows as tab-separated lines, `per_fill` at a time.
fn lines(
    count: i64,
    mut line: impl FnMut(i64, &mut Vec<u8>) + Send,
) -> impl FnMut(&mut Vec<u8>) -> bool + Send {
    let mut next = 0i64;
    move |buf: &mut Vec<u8>| {
        let end = (next + 10_000).min(count);
        while next < end {
            line(next, buf);
            next += 1;
        }
        next < count
    }
}

fn generate_client_side(
    conn: &mut Connection,
    spec: &InitSpec,
    ctx: &Context,
) -> Result<(), BenchError> {
    use std::io::Write;
    let pg = conn.dialect() == Dialect::Postgres;
    if pg {
        run(conn, "begin")?;
    }
    truncate(conn)?;
    let load = |conn: &mut Connection,
                table: &str,
                cols: &[&str],
                fill: &mut (dyn FnMut(&mut Vec<u8>) -> bool + Send)|
     -> Result<u64, BenchError> {
        conn.load_delimited(table, cols, b'\t', fill)
            .map_err(|e: DbError| BenchError::Failed(format!("loading {table}: {}", e.message)))
    };
    let scale = spec.scale;
    let progress = ctx.console.progress();
    progress.total.store(
        ((NBRANCHES + NTELLERS + NACCOUNTS) * scale) as u64,
        Ordering::Relaxed,
    );
    // Branches, tellers, accounts: in that order in case foreign keys exist.
    let n = load(
        conn,
        "pgbench_branches",
        &["bid", "bbalance"],
        &mut lines(NBRANCHES * scale, |i, b| {
            let _ = writeln!(b, "{}\t0", i + 1);
        }),
    )?;
    progress.done.fetch_add(n, Ordering::Relaxed);
    let n = load(
        conn,
        "pgbench_tellers",
        &["tid", "bid", "tbalance"],
        &mut lines(NTELLERS * scale, |i, b| {
            let _ = writeln!(b, "{}\t{}\t0", i + 1, i / NTELLERS + 1);
        }),
    )?;
    progress.done.fetch_add(n, Ordering::Relaxed);
    // Accounts: filler is the empty string (blank-padded), as pgbench's COPY.
    let done = &progress.done;
    let n = load(
        conn,
        "pgbench_accounts",
        &["aid", "bid", "abalance", "filler"],
        &mut lines(NACCOUNTS * scale, |i, b| {
            let _ = writeln!(b, "{}\t{}\t0\t", i + 1, i / NACCOUNTS + 1);
            if i % 10_000 == 9_999 {
                done.fetch_add(10_000, Ordering::Relaxed);
            }
        }),
    )?;
    progress.done.store(
        n + ((NBRANCHES + NTELLERS) * scale) as u64,
        Ordering::Relaxed,
    );
    if pg {
        run(conn, "commit")?;
    }
    Ok(())
}

fn generate_server_side(conn: &mut Connection, spec: &InitSpec) -> Result<(), BenchError> {
    if conn.dialect() != Dialect::Postgres {
        return Err(BenchError::Usage(format!(
            "init step G (server-side generation) needs PostgreSQL's generate_series; on {} use g (--init-steps={})",
            conn.dialect_name(),
            spec.steps.replace('G', "g")
        )));
    }
    let s = spec.scale;
    run(conn, "begin")?;
    truncate(conn)?;
    run(
        conn,
        &format!(
            "insert into pgbench_branches(bid,bbalance) select bid, 0 from generate_series(1, {}) as bid",
            NBRANCHES * s
        ),
    )?;
    run(
        conn,
        &format!(
            "insert into pgbench_tellers(tid,bid,tbalance) select tid, (tid - 1) / {NTELLERS} + 1, 0 from generate_series(1, {}) as tid",
            NTELLERS * s
        ),
    )?;
    run(
        conn,
        &format!(
            "insert into pgbench_accounts(aid,bid,abalance,filler) select aid, (aid - 1) / {NACCOUNTS} + 1, 0, '' from generate_series(1, {}) as aid",
            NACCOUNTS * s
        ),
    )?;
    run(conn, "commit")
}

fn vacuum(conn: &mut Connection) -> Result<(), BenchError> {
    for t in [
        "pgbench_branches",
        "pgbench_tellers",
        "pgbench_accounts",
        "pgbench_history",
    ] {
        let sql = match conn.dialect() {
            Dialect::Postgres => format!("vacuum analyze {t}"),
            Dialect::Mysql => format!("analyze table {t}"),
            Dialect::Sqlite => format!("analyze {t}"),
        };
        run(conn, &sql)?;
    }
    Ok(())
}

fn primary_keys(conn: &mut Connection, spec: &InitSpec) -> Result<(), BenchError> {
    let using = match spec.index_tablespace.as_deref() {
        Some(ts) if conn.dialect() == Dialect::Postgres => {
            format!(" using index tablespace {}", quote_ident(ts))
        }
        _ => String::new(),
    };
    for (t, c) in [
        ("pgbench_branches", "bid"),
        ("pgbench_tellers", "tid"),
        ("pgbench_accounts", "aid"),
    ] {
        let sql = match conn.dialect() {
            Dialect::Sqlite => format!("create unique index {t}_pkey on {t}({c})"),
            Dialect::Postgres | Dialect::Mysql => {
                format!("alter table {t} add primary key ({c}){using}")
            }
        };
        run(conn, &sql)?;
    }
    Ok(())
}

fn foreign_keys(conn: &mut Connection) -> Result<(), BenchError> {
    if conn.dialect() == Dialect::Sqlite {
        return Err(BenchError::Usage(
            "SQLite cannot add foreign keys to existing tables: leave out --foreign-keys (and f from --init-steps)".into(),
        ));
    }
    for (t, c, r) in [
        ("pgbench_tellers", "bid", "pgbench_branches"),
        ("pgbench_accounts", "bid", "pgbench_branches"),
        ("pgbench_history", "bid", "pgbench_branches"),
        ("pgbench_history", "tid", "pgbench_tellers"),
        ("pgbench_history", "aid", "pgbench_accounts"),
    ] {
        let sql = match conn.dialect() {
            Dialect::Mysql => format!(
                "alter table {t} add constraint {t}_{c}_fkey foreign key ({c}) references {r}({c})"
            ),
            _ => format!(
                "alter table {t} add constraint {t}_{c}_fkey foreign key ({c}) references {r}"
            ),
        };
        run(conn, &sql)?;
    }
    Ok(())
}

/// Runs the steps, saying each as pgbench does, and a summary line of
/// their times.
pub fn initialize(conn: &mut Connection, spec: &InitSpec, ctx: &Context) -> Result<(), BenchError> {
    let start = Instant::now();
    let mut times = Vec::new();
    for step in spec.steps.chars() {
        let t = Instant::now();
        let (label, r) = match step {
            'd' => {
                ctx.say("dropping old tables...");
                ("drop tables", drop_tables(conn))
            }
            't' => {
                ctx.say("creating tables...");
                ("create tables", create_tables(conn, spec, ctx))
            }
            'g' => {
                let method = conn.delimited_method().unwrap_or("INSERT");
                ctx.say(&format!(
                    "generating data (client-side, {method}): {} accounts...",
                    NACCOUNTS * spec.scale
                ));
                (
                    "client-side generate",
                    generate_client_side(conn, spec, ctx),
                )
            }
            'G' => {
                ctx.say("generating data (server-side)...");
                ("server-side generate", generate_server_side(conn, spec))
            }
            'v' => {
                ctx.say("vacuuming...");
                ("vacuum", vacuum(conn))
            }
            'p' => {
                ctx.say("creating primary keys...");
                ("primary keys", primary_keys(conn, spec))
            }
            'f' => {
                ctx.say("creating foreign keys...");
                ("foreign keys", foreign_keys(conn))
            }
            _ => continue,
        };
        r?;
        times.push(format!("{label} {:.2} s", t.elapsed().as_secs_f64()));
    }
    ctx.say(&format!(
        "done in {:.2} s ({}).",
        start.elapsed().as_secs_f64(),
        times.join(", ")
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_as_pgbench_takes_them() {
        let s = InitSpec::new(1, 100, "dtgvp", true, false, false);
        assert_eq!(s.map(|s| s.steps), Ok("dtgvpf".to_string()));
        let s = InitSpec::new(1, 100, "dtGvp", false, true, false);
        assert_eq!(s.map(|s| s.steps), Ok("dtGp".to_string()));
        assert!(
            InitSpec::new(1, 100, "dtx", false, false, false).is_err_and(|e| e.contains("\"x\""))
        );
        assert!(InitSpec::new(0, 100, "d", false, false, false).is_err());
        assert!(InitSpec::new(1, 5, "d", false, false, false).is_err());
    }
}
