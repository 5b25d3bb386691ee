//! `threads`: sysbench's scheduler test. `--thread-locks` POSIX mutexes
//! are shared by all users; each event takes the next of them in turn (a
//! counter shared by all users, as sysbench's `next_event` takes it) and
//! `--thread-yields` times locks it, yields the CPU (`sched_yield`) and
//! unlocks it.

use super::{EventsPlan, INFO, Mutexes, int_option, preamble};
use crate::benchmark::{BenchError, Benchmark, Context, RunPlan, Verb, no_such_verb};
use crate::options::{OptKind, OptSpec, OptValues, opt};
use dbmeter_engine::{EventError, Flow, Tally, User, UserFactory};
use dbmeter_result::Layout;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

pub struct Threads;

const OPTIONS: &[OptSpec] = &[
    opt(
        "thread-yields",
        OptKind::Int,
        "1000",
        "number of yields to do per request",
    ),
    opt(
        "thread-locks",
        OptKind::Int,
        "8",
        "number of locks per thread",
    ),
];

/// The test's settings, read once.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ThreadsConfig {
    pub yields: u32,
    pub locks: u32,
}

impl ThreadsConfig {
    /// Reads and checks the options: yields from 0, at least one lock
    /// (sysbench divides by the number of locks, and takes a negative
    /// count of yields as four billion).
    pub fn from_options(o: &OptValues, layout: Layout) -> Result<ThreadsConfig, BenchError> {
        let max = i32::MAX;
        Ok(ThreadsConfig {
            yields: int_option(
                o,
                layout,
                "thread-yields",
                0,
                &format!("a number of yields per event from 0 to {max}"),
            )?,
            locks: int_option(
                o,
                layout,
                "thread-locks",
                1,
                &format!("a number of mutexes from 1 to {max}"),
            )?,
        })
    }
}

/// What the users share: the mutexes and the count of events begun.
struct Shared {
    mutexes: Mutexes<0>,
    begun: AtomicU32,
    yields: u32,
}

struct ThreadsUser(Arc<Shared>);

impl User for ThreadsUser {
    fn event(&mut self, _tally: &mut Tally) -> Result<Flow, EventError> {
        let s = &*self.0;
        // The mutex of this event: the next in turn (an atomic add, as
        // sysbench's ck_pr_faa_uint).
        let i = (s.begun.fetch_add(1, Ordering::Relaxed) % s.mutexes.len() as u32) as usize;
        for _ in 0..s.yields {
            s.mutexes.lock(i);
            // SAFETY: sched_yield takes nothing and cannot fail on Linux.
            unsafe {
                libc::sched_yield();
            }
            s.mutexes.unlock(i);
        }
        Ok(Flow::Continue)
    }
}

struct ThreadsUsers(Arc<Shared>);

impl UserFactory for ThreadsUsers {
    fn create(&self, _user_id: usize) -> Result<Box<dyn User>, String> {
        Ok(Box::new(ThreadsUser(self.0.clone())))
    }
}

impl Benchmark for Threads {
    fn name(&self) -> &str {
        "threads"
    }

    fn summary(&self) -> &str {
        "sysbench's threads test: each event locks a shared mutex, yields the CPU and unlocks, --thread-yields times"
    }

    fn options(&self) -> Vec<OptSpec> {
        OPTIONS.to_vec()
    }

    fn check_options(&self, options: &OptValues) -> Result<(), BenchError> {
        ThreadsConfig::from_options(options, Layout::Dbmeter).map(drop)
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
        ThreadsConfig::from_options(ctx.options, ctx.layout)?;
        Err(no_such_verb(self, verb))
    }

    fn known_kinds(&self, _options: &OptValues) -> Option<Vec<String>> {
        // Its users tell no kinds of events apart.
        Some(Vec::new())
    }

    fn plan(&self, ctx: &Context) -> Result<Box<dyn RunPlan>, BenchError> {
        let cfg = ThreadsConfig::from_options(ctx.options, ctx.layout)?;
        let shared = Arc::new(Shared {
            mutexes: Mutexes::new(cfg.locks as usize),
            begun: AtomicU32::new(0),
            yields: cfg.yields,
        });
        Ok(Box::new(EventsPlan {
            users: Arc::new(ThreadsUsers(shared)),
            preamble: preamble(
                ctx.layout,
                &[
                    (INFO, "Doing thread subsystem performance test"),
                    (
                        INFO,
                        &format!(
                            "Thread yields per test: {} Locks used: {}",
                            cfg.yields, cfg.locks
                        ),
                    ),
                ],
                format!(
                    "each event locks one of {} mutexes, yields and unlocks, {} times",
                    cfg.locks, cfg.yields
                ),
            ),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::testing::{refused, values};

    #[test]
    fn options_and_their_ranges() {
        let cfg = ThreadsConfig::from_options(&values(OPTIONS, &[]), Layout::Dbmeter).unwrap();
        assert_eq!((cfg.yields, cfg.locks), (1000, 8));
        let o = values(OPTIONS, &[("thread-yields", "0")]);
        assert_eq!(
            ThreadsConfig::from_options(&o, Layout::Dbmeter)
                .unwrap()
                .yields,
            0
        );
        for (k, v) in [
            ("thread-locks", "0"),
            ("thread-locks", "-1"),
            ("thread-yields", "-1"),
            ("thread-yields", "2147483648"),
        ] {
            refused(OPTIONS, &[(k, v)], |o| {
                ThreadsConfig::from_options(o, Layout::Dbmeter)
            });
        }
    }

    #[test]
    fn an_event_takes_the_mutexes_in_turn() {
        let shared = Arc::new(Shared {
            mutexes: Mutexes::new(3),
            begun: AtomicU32::new(0),
            yields: 5,
        });
        let mut u = ThreadsUser(shared.clone());
        for _ in 0..4 {
            u.event(&mut Tally::default()).unwrap();
        }
        assert_eq!(shared.begun.load(Ordering::Relaxed), 4);
    }
}
