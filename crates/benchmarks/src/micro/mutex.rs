//! `mutex`: sysbench's mutex test. `--mutex-num` POSIX mutexes, each
//! padded to its own 296 bytes as sysbench lays them out; each user runs
//! one event and is done: `--mutex-locks` times it draws a mutex at
//! random, runs an empty loop of `--mutex-loops` turns, locks the mutex,
//! adds one to a counter shared by all (not atomically, as sysbench: the
//! users hold different mutexes) and unlocks it.

use super::{EventsPlan, INFO, Mutexes, SbRandom, compiler_barrier, int_option, preamble};
use crate::benchmark::{BenchError, Benchmark, Context, RunPlan, Verb, no_such_verb};
use crate::options::{OptKind, OptSpec, OptValues, opt};
use dbmeter_engine::{EventError, Flow, Tally, User, UserFactory};
use dbmeter_result::Layout;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

/// The `mutex` benchmark (named so beside `std::sync::Mutex`).
pub struct MutexTest;

const OPTIONS: &[OptSpec] = &[
    opt(
        "mutex-num",
        OptKind::Int,
        "4096",
        "total size of mutex array",
    ),
    opt(
        "mutex-locks",
        OptKind::Int,
        "50000",
        "number of mutex locks to do per thread",
    ),
    opt(
        "mutex-loops",
        OptKind::Int,
        "10000",
        "number of empty loops to do outside mutex lock",
    ),
];

/// The test's settings, read once.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MutexConfig {
    pub num: u32,
    pub locks: u32,
    pub loops: u32,
}

impl MutexConfig {
    /// Reads and checks the options: at least one mutex and one lock
    /// (sysbench draws from an empty array, and runs four billion locks
    /// for 0), loops from 0.
    pub fn from_options(o: &OptValues, layout: Layout) -> Result<MutexConfig, BenchError> {
        let max = i32::MAX;
        Ok(MutexConfig {
            num: int_option(
                o,
                layout,
                "mutex-num",
                1,
                &format!("a number of mutexes from 1 to {max}"),
            )?,
            locks: int_option(
                o,
                layout,
                "mutex-locks",
                1,
                &format!("a number of locks per thread from 1 to {max}"),
            )?,
            loops: int_option(
                o,
                layout,
                "mutex-loops",
                0,
                &format!("a number of empty loops from 0 to {max}"),
            )?,
        })
    }
}

/// What the users share.
struct Shared {
    mutexes: Mutexes<256>,
    /// sysbench's `global_var`: read and written back under whichever
    /// mutex the user holds, so two users may race on it as in sysbench
    /// (relaxed loads and stores: plain moves, and no undefined behaviour).
    counter: AtomicU32,
    cfg: MutexConfig,
}

struct MutexUser {
    shared: Arc<Shared>,
    rng: SbRandom,
}

impl User for MutexUser {
    fn event(&mut self, _tally: &mut Tally) -> Result<Flow, EventError> {
        let s = &*self.shared;
        let last = s.cfg.num - 1;
        for _ in 0..s.cfg.locks {
            let i = self.rng.uniform(0, last) as usize;
            for _ in 0..s.cfg.loops {
                compiler_barrier();
            }
            s.mutexes.lock(i);
            s.counter.store(
                s.counter.load(Ordering::Relaxed).wrapping_add(1),
                Ordering::Relaxed,
            );
            s.mutexes.unlock(i);
        }
        // One event per user, as sysbench's next_event gives each thread.
        Ok(Flow::UserDone)
    }
}

struct MutexUsers {
    shared: Arc<Shared>,
    seed: u64,
}

impl UserFactory for MutexUsers {
    fn create(&self, user_id: usize) -> Result<Box<dyn User>, String> {
        Ok(Box::new(MutexUser {
            shared: self.shared.clone(),
            rng: SbRandom::for_user(self.seed, user_id),
        }))
    }
}

impl Benchmark for MutexTest {
    fn name(&self) -> &str {
        "mutex"
    }

    fn summary(&self) -> &str {
        "sysbench's mutex test: one event per thread, --mutex-locks locks of random mutexes after empty loops"
    }

    fn options(&self) -> Vec<OptSpec> {
        OPTIONS.to_vec()
    }

    fn check_options(&self, options: &OptValues) -> Result<(), BenchError> {
        MutexConfig::from_options(options, Layout::Dbmeter).map(drop)
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
        MutexConfig::from_options(ctx.options, ctx.layout)?;
        Err(no_such_verb(self, verb))
    }

    fn known_kinds(&self, _options: &OptValues) -> Option<Vec<String>> {
        // Its users tell no kinds of events apart.
        Some(Vec::new())
    }

    fn plan(&self, ctx: &Context) -> Result<Box<dyn RunPlan>, BenchError> {
        let cfg = MutexConfig::from_options(ctx.options, ctx.layout)?;
        let shared = Arc::new(Shared {
            mutexes: Mutexes::new(cfg.num as usize),
            counter: AtomicU32::new(0),
            cfg,
        });
        Ok(Box::new(EventsPlan {
            users: Arc::new(MutexUsers {
                shared,
                seed: ctx.seed,
            }),
            preamble: preamble(
                ctx.layout,
                &[(INFO, "Doing mutex performance test")],
                format!(
                    "one event per thread: {} times an empty loop of {} turns, then a lock of one of {} mutexes",
                    cfg.locks, cfg.loops, cfg.num
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
        let cfg = MutexConfig::from_options(&values(OPTIONS, &[]), Layout::Dbmeter).unwrap();
        assert_eq!((cfg.num, cfg.locks, cfg.loops), (4096, 50000, 10000));
        for (k, v) in [
            ("mutex-num", "0"),
            ("mutex-locks", "0"),
            ("mutex-loops", "-1"),
            ("mutex-num", "4294967296"),
        ] {
            refused(OPTIONS, &[(k, v)], |o| {
                MutexConfig::from_options(o, Layout::Dbmeter)
            });
        }
    }

    #[test]
    fn mutexes_take_sysbench_layout() {
        // pthread_mutex_t (40 bytes on x86-64 Linux) and 256 bytes of pad.
        assert_eq!(
            std::mem::size_of::<super::super::PaddedMutex<256>>(),
            std::mem::size_of::<libc::pthread_mutex_t>() + 256
        );
    }

    #[test]
    fn an_event_does_all_its_locks_and_ends_the_user() {
        let cfg = MutexConfig {
            num: 4,
            locks: 1000,
            loops: 3,
        };
        let shared = Arc::new(Shared {
            mutexes: Mutexes::new(4),
            counter: AtomicU32::new(0),
            cfg,
        });
        let mut u = MutexUser {
            shared: shared.clone(),
            rng: SbRandom::for_user(1, 0),
        };
        assert_eq!(u.event(&mut Tally::default()), Ok(Flow::UserDone));
        assert_eq!(shared.counter.load(Ordering::Relaxed), 1000);
    }
}
