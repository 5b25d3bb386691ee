//! `noop`: an event that does nothing, to measure the engine's own cost
//! per event (what `bench/engine.sh` compares with sysbench's empty
//! event). It is also the whole of a benchmark in one file: a user, its
//! factory, a run plan and the [`Benchmark`] implementation.

use crate::benchmark::{BenchError, Benchmark, Context, RunPlan, Verb, no_such_verb};
use crate::options::{OptSpec, OptValues};
use dbmeter_engine::{EventError, Flow, Tally, User, UserFactory};
use std::sync::Arc;

pub struct Noop;

struct NoopUser;

impl User for NoopUser {
    #[inline]
    fn event(&mut self, tally: &mut Tally) -> Result<Flow, EventError> {
        std::hint::black_box(tally);
        Ok(Flow::Continue)
    }
}

struct NoopUsers;

impl UserFactory for NoopUsers {
    fn create(&self, _user_id: usize) -> Result<Box<dyn User>, String> {
        Ok(Box::new(NoopUser))
    }
}

struct NoopPlan;

impl RunPlan for NoopPlan {
    fn server_version(&self) -> String {
        String::new()
    }

    fn measures(&self) -> Vec<dbmeter_stats::Measure> {
        Vec::new()
    }

    fn users(&self) -> Arc<dyn UserFactory> {
        Arc::new(NoopUsers)
    }
}

impl Benchmark for Noop {
    fn name(&self) -> &str {
        "noop"
    }

    fn summary(&self) -> &str {
        "an event that does no I/O: measures dbmeter's own cost per event"
    }

    fn options(&self) -> Vec<OptSpec> {
        Vec::new()
    }

    fn check_options(&self, _options: &OptValues) -> Result<(), BenchError> {
        // No options of its own, and it reads none of the general ones.
        Ok(())
    }

    fn verbs(&self) -> Vec<Verb> {
        Vec::new()
    }

    fn needs_database(&self) -> bool {
        false
    }

    fn dataset(&self) -> Option<String> {
        None
    }

    fn writes(&self) -> bool {
        false
    }

    fn command(&self, verb: &str, ctx: &Context) -> Result<(), BenchError> {
        match verb {
            "prepare" => ctx.say("noop needs no preparation"),
            "prewarm" => ctx.say("noop has nothing to prewarm"),
            "cleanup" => ctx.say("noop has nothing to clean up"),
            _ => return Err(no_such_verb(self, verb)),
        }
        Ok(())
    }

    fn known_kinds(&self, _options: &OptValues) -> Option<Vec<String>> {
        // Its users tell no kinds of events apart.
        Some(Vec::new())
    }

    fn plan(&self, _ctx: &Context) -> Result<Box<dyn RunPlan>, BenchError> {
        Ok(Box::new(NoopPlan))
    }
}
