//! `check tpch`: the tables' row counts; with `--validation`, each
//! query's answer against the official SF1 answer; with `--against URL`,
//! each query's answer against another target's (engines must agree).

use super::answers::{self, Mismatch};
use super::load::read_state;
use super::queries::{self, QuerySql};
use super::schema::TABLES;
use super::stream::parameters;
use super::{Dialect, generate, sf_text};
use crate::benchmark::{BenchError, Context};
use dbmeter_db::{ConnectOptions, Connection, DbError};
use std::time::Instant;

/// What a check compares.
pub struct CheckConfig {
    pub queries: Vec<u8>,
    pub validation: bool,
    pub seed: u64,
    pub against: Option<ConnectOptions>,
}

/// Runs one query and returns its rows as trimmed text (NULL as `NULL`).
pub fn answer(conn: &mut Connection, sql: &QuerySql) -> Result<Vec<Vec<String>>, DbError> {
    Ok(sql
        .run_with(conn, &sql.query)?
        .rows
        .into_iter()
        .map(|r| {
            r.into_iter()
                .map(|c| c.map_or_else(|| "NULL".to_string(), |s| s.trim().to_string()))
                .collect()
        })
        .collect())
}

fn sql_for(q: u8, d: Dialect, params: &[String]) -> Result<QuerySql, BenchError> {
    queries::query(q, d, params, 0)
        .ok_or_else(|| BenchError::Failed(format!("Q{q}: no SQL for parameters {params:?}")))
}

/// Checks the database of `opts`; lines go to the console, the first
/// failure is the error.
pub fn check(
    ctx: &Context,
    opts: &ConnectOptions,
    cfg: &CheckConfig,
    hint: &str,
) -> Result<(), BenchError> {
    let mut conn = Connection::connect(opts)?;
    let (sf, next_set) = read_state(&mut conn, hint)?;
    let mut failures: Vec<String> = Vec::new();
    let mut say = |ok: bool, what: &str, detail: &str| {
        ctx.say(&format!(
            "{} {what}: {detail}",
            if ok { "ok    " } else { "FAILED" }
        ));
        if !ok {
            failures.push(format!("{what}: {detail}"));
        }
    };
    // Row counts: exact but for lineitem (about 4 per order), and orders
    // and lineitem after unpaired refreshes.
    for t in TABLES {
        let n = conn
            .query_i64(&format!("SELECT COUNT(*) FROM {}", t.name))?
            .unwrap_or(0) as u64;
        let want = generate::expected_rows(t.name, sf);
        let (ok, detail) = match t.name {
            "lineitem" => {
                let ok = n as f64 >= want as f64 * 0.95 && n as f64 <= want as f64 * 1.05;
                (
                    ok,
                    format!("{n} rows (about {want} expected at SF {})", sf_text(sf)),
                )
            }
            _ => (
                n == want,
                format!("{n} rows ({want} expected at SF {})", sf_text(sf)),
            ),
        };
        say(ok, t.name, &detail);
    }
    if next_set > 1 {
        ctx.say(&format!(
            "note: the refresh functions of update sets 1..{} ran on this data",
            next_set - 1
        ));
    }
    // The official answers are SF 1's; at other scale factors the
    // validation parameters only choose what two engines compare.
    let official = cfg.validation && (sf - 1.0).abs() <= 1e-9;
    if cfg.validation {
        if !official && cfg.against.is_none() {
            return Err(BenchError::Usage(format!(
                "--validation compares with the official answers, which are for SF 1; this database holds SF {}. Use --against=URL to compare two engines at any scale factor",
                sf_text(sf)
            )));
        }
        if next_set > 1 && official {
            ctx.say("note: refresh functions changed the data; the official answers are for the data as loaded");
        }
    }
    let d = conn.dialect();
    let mut other = match &cfg.against {
        Some(o) => {
            let mut c = Connection::connect(o)?;
            let (osf, onext) = read_state(
                &mut c,
                &format!("prepare the same scale factor on {}", o.target),
            )?;
            if onext != next_set {
                ctx.say(&format!(
                    "note: the refresh functions ran on update sets 1..{} here and 1..{} there; answers of queries on orders and lineitem may differ",
                    next_set.saturating_sub(1),
                    onext.saturating_sub(1)
                ));
            }
            if (osf - sf).abs() > 1e-9 {
                return Err(BenchError::Failed(format!(
                    "--against: {} holds SF {}, {} holds SF {}; the answers of two scale factors differ",
                    o.target,
                    sf_text(osf),
                    opts.target,
                    sf_text(sf)
                )));
            }
            Some(c)
        }
        None => None,
    };
    if cfg.validation || other.is_some() {
        for &q in &cfg.queries {
            let params = parameters(cfg.validation, q, 0, cfg.seed, sf);
            let sql = sql_for(q, d, &params)?;
            let t = Instant::now();
            let got = answer(&mut conn, &sql)?;
            let took = t.elapsed().as_secs_f64();
            let cols = queries::columns(q);
            if official {
                let want = answers::official(q).map(|a| a.rows).unwrap_or_default();
                match answers::compare(q, cols, &got, &want) {
                    Ok(()) => say(
                        true,
                        &format!("Q{q}"),
                        &format!("{} rows match the official answer ({took:.2} s)", got.len()),
                    ),
                    Err(m) => say(false, &format!("Q{q}"), &mismatch_text(&m)),
                }
            }
            if let (Some(c), Some(o)) = (other.as_mut(), &cfg.against) {
                let sql_b = sql_for(q, c.dialect(), &params)?;
                let t = Instant::now();
                let theirs = answer(c, &sql_b)?;
                let took_b = t.elapsed().as_secs_f64();
                match answers::compare(q, cols, &got, &theirs) {
                    Ok(()) => say(
                        true,
                        &format!("Q{q}"),
                        &format!(
                            "{} rows agree with {} ({took:.2} s here, {took_b:.2} s there)",
                            got.len(),
                            o.target
                        ),
                    ),
                    Err(m) => say(
                        false,
                        &format!("Q{q}"),
                        &format!("differs from {}: {}", o.target, mismatch_text(&m)),
                    ),
                }
            }
        }
    }
    match failures.first() {
        None => {
            ctx.say("All checks passed");
            Ok(())
        }
        Some(first) => Err(BenchError::Failed(format!(
            "{} check{} failed, the first: {first}",
            failures.len(),
            if failures.len() == 1 { "" } else { "s" }
        ))),
    }
}

fn mismatch_text(m: &Mismatch) -> String {
    // The line already names the query.
    let s = m.to_string();
    let q = format!("Q{}", m.query);
    s.strip_prefix(&format!("{q}: "))
        .or_else(|| s.strip_prefix(&format!("{q} ")))
        .unwrap_or(&s)
        .to_string()
}
