//! A benchmark's commands besides `run`: prepare, prewarm, check, cleanup
//! and its own.

use crate::execute::{ignore_of, require_database_file, target_of};
use crate::request::{Observer, Request};
use crate::{RunError, settings};
use dbmeter_benchmarks::Context;

/// Runs command `verb` of the request's benchmark.
pub fn command(verb: &str, req: &Request, obs: &dyn Observer) -> Result<(), RunError> {
    let o = &req.options;
    let bench = req.benchmark.as_ref();
    let general = settings::General::parse(o)?;
    let shard = settings::shard(o)?;
    if let Some(s) = shard {
        if verb != "prepare" {
            return Err(RunError::Usage(format!(
                "--shard={s} splits a run or a prepare; `{verb}` is done once, without --shard"
            )));
        }
        if !bench.shards_prepare() {
            return Err(RunError::Usage(format!(
                "--shard={s}: {}'s prepare is not split over shards; prepare once, without --shard",
                bench.name()
            )));
        }
    }
    if o.given("start-at") {
        return Err(RunError::Usage(format!(
            "--start-at starts a run's users together; `{verb}` makes no run (use it with `dbmeter run`)"
        )));
    }
    crate::pinning::pin_client(o)?;
    let target = target_of(req)?;
    if verb != "prepare" {
        require_database_file(target.as_ref(), bench.name())?;
    }
    let connect = target
        .as_ref()
        .map(|t| settings::connect_options(o, t.clone()));
    let ctx = Context {
        options: o,
        connect: connect.as_ref(),
        ignore: ignore_of(o, target.as_ref())?,
        seed: settings::seed(o),
        threads: general.threads,
        console: obs,
        server: crate::managed::control_for(target.as_ref()),
        layout: req.layout,
        shard,
    };
    bench.command(verb, &ctx)?;
    Ok(())
}
