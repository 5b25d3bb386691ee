//! A series of runs that one request makes ([`Benchmark::sweep`]:
//! mysqlslap's engines, concurrency levels and iterations), each run and
//! command carried out as [`crate::run`] and [`crate::command`] carry out
//! one, with the step's options set over the request's.
//!
//! [`Benchmark::sweep`]: dbmeter_benchmarks::Benchmark::sweep

use crate::RunError;
use crate::execute::{Outcome, run};
use crate::request::{Observer, Request};
use crate::verbs::command;
use dbmeter_benchmarks::SweepStep;
use dbmeter_engine::StopHandle;

/// Runs the request's sweep, or the request alone when its benchmark has
/// none. Returns the runs' outcomes in order; it stops after a run that
/// was interrupted or failed (that run's outcome is the last), and at the
/// first step that cannot start (its error).
pub fn sweep(
    req: &Request,
    obs: &dyn Observer,
    stop: &StopHandle,
) -> Result<Vec<Outcome>, RunError> {
    let steps = req
        .benchmark
        .sweep(&req.options)?
        .unwrap_or_else(|| vec![SweepStep::Run { set: Vec::new() }]);
    let mut outcomes = Vec::new();
    for step in steps {
        if stop.is_stopped() {
            break;
        }
        let (set, verb) = match &step {
            SweepStep::Run { set } => (set, None),
            SweepStep::Command { verb, set } => (set, Some(verb.as_str())),
        };
        let mut r = req.clone();
        for (name, value) in set {
            r.options.set(name, value);
        }
        match verb {
            Some(v) => command(v, &r, obs)?,
            None => {
                let outcome = run(&r, obs, stop)?;
                let ended = matches!(
                    outcome.document.end.reason.as_str(),
                    "interrupted" | "failed"
                );
                outcomes.push(outcome);
                if ended {
                    break;
                }
            }
        }
    }
    Ok(outcomes)
}
