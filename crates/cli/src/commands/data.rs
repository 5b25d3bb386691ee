//! `prepare`, `prewarm` and `cleanup`.

use super::{Ctx, block_on};
use crate::CliError;
use crate::progress::with_load_bar;
use crate::setup;
use dbmeter_db::ConnectOptions;
use dbmeter_workloads::Workload;
use dbmeter_workloads::oltp::{self, LoadReport, OltpConfig};

fn say(line: String) {
    println!("{line}");
}

/// Options whose value is a password, never printed or stored.
pub(crate) const SECRET_OPTIONS: &[&str] = &["mysql-password", "pgsql-password"];

/// The OLTP settings and connection options of a workload command.
pub(crate) fn oltp_settings(ctx: &Ctx) -> Result<Option<(OltpConfig, ConnectOptions)>, CliError> {
    let Workload::Oltp(kind) = ctx.info.workload else {
        return Ok(None);
    };
    let threads = setup::threads(&ctx.values)? as u32;
    let cfg = OltpConfig::from_options(kind, &ctx.values, threads).map_err(CliError::Usage)?;
    let Some(target) = ctx.target.clone() else {
        return Ok(None);
    };
    Ok(Some((cfg, setup::connect_options(&ctx.values, target))))
}

/// Only `prepare` creates an SQLite file that the user named and that does
/// not exist yet; the other commands say so instead.
pub(crate) fn require_database_file(ctx: &Ctx) -> Result<(), CliError> {
    if let Some(dbmeter_db::Target::Sqlite {
        path,
        implicit: false,
    }) = &ctx.target
        && !path.exists()
    {
        return Err(CliError::Failed(format!(
            "{} does not exist; run `dbmeter prepare {}` with the same options first",
            path.display(),
            ctx.info.name
        )));
    }
    Ok(())
}

pub(crate) fn print_load(what: &str, r: &LoadReport) {
    println!(
        "{what} {} rows in {} table{} in {:.2} s ({:.0} rows/s)",
        r.rows,
        r.tables,
        if r.tables == 1 { "" } else { "s" },
        r.elapsed.as_secs_f64(),
        r.rows_per_sec()
    );
}

pub fn prepare(ctx: &Ctx) -> Result<i32, CliError> {
    if ctx.info.workload == Workload::Tpcc {
        return super::tpcc::prepare(ctx);
    }
    let Some((cfg, opts)) = oltp_settings(ctx)? else {
        println!("{} needs no preparation", ctx.info.name);
        return Ok(0);
    };
    let seed = setup::seed(&ctx.values);
    let workers = setup::threads(&ctx.values)?;
    let r = with_load_bar(|say, progress| {
        block_on(oltp::prepare(
            &opts, &cfg, seed, false, workers, say, progress,
        ))
    })??;
    print_load("Loaded", &r);
    Ok(0)
}

pub fn prewarm(ctx: &Ctx) -> Result<i32, CliError> {
    require_database_file(ctx)?;
    if ctx.info.workload == Workload::Tpcc {
        return Err(CliError::Usage(
            "tpcc has no prewarm step; its warm-up is `dbmeter run tpcc --warmup-time=N`".into(),
        ));
    }
    let Some((cfg, opts)) = oltp_settings(ctx)? else {
        println!("{} has nothing to prewarm", ctx.info.name);
        return Ok(0);
    };
    let r = block_on(oltp::prewarm(&opts, &cfg, &say))??;
    print_load("Read", &r);
    Ok(0)
}

pub fn cleanup(ctx: &Ctx) -> Result<i32, CliError> {
    require_database_file(ctx)?;
    if ctx.info.workload == Workload::Tpcc {
        return super::tpcc::cleanup(ctx);
    }
    let Some((_, opts)) = oltp_settings(ctx)? else {
        println!("{} has nothing to clean up", ctx.info.name);
        return Ok(0);
    };
    let dropped = block_on(oltp::cleanup(&opts, &say))??;
    if dropped.is_empty() {
        println!("No sbtest tables in {}: nothing to drop", opts.target);
    } else {
        println!("Dropped {} table(s)", dropped.len());
    }
    Ok(0)
}
