//! sysbench 1.0.20's tests of the machine under a database: `cpu`,
//! `threads`, `mutex` and `memory`, one file each. An event does the work
//! of one sysbench event, compiled to the same accesses (no bounds checks,
//! atomics or locks sysbench does not have), so that events per second
//! compare with sysbench's like for like; `bench/micro.sh` checks it.
//!
//! What they share is here: the errors in each layout's words, sysbench's
//! random numbers, arrays of POSIX mutexes (sysbench's `pthread_mutex_t`,
//! not Rust's own mutex, which spins before it sleeps), the compiler
//! barrier of its empty loops, and the run plan of a test that counts
//! nothing but events.

pub mod cpu;
pub mod memory;
pub mod mutex;
pub mod threads;

pub use cpu::Cpu;
pub use memory::Memory;
pub use mutex::MutexTest;
pub use threads::Threads;

use crate::benchmark::{BenchError, RunPlan};
use dbmeter_engine::UserFactory;
use dbmeter_result::Layout;
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoroshiro128Plus;
use std::cell::UnsafeCell;
use std::sync::Arc;

/// sysbench's `--verbosity` in its layout; None in the others.
pub(crate) fn sysbench_verbosity(layout: Layout) -> Option<u8> {
    match layout {
        Layout::Sysbench { verbosity, .. } => Some(verbosity),
        _ => None,
    }
}

/// sysbench's log level of the lines a test prints about itself at
/// `--verbosity=4` ("Doing CPU performance benchmark").
pub(crate) const INFO: u8 = 4;

/// A bad value of option `name`: in sysbench's layout, sysbench's own
/// words (`sysbench`, printed after `FATAL: `); in the others, dbmeter's
/// usage line naming the option, the value and what it takes.
pub(crate) fn invalid(
    layout: Layout,
    sysbench: String,
    name: &str,
    value: &str,
    expected: &str,
) -> BenchError {
    match layout {
        Layout::Sysbench { .. } => BenchError::Usage(sysbench),
        _ => crate::options::bad_value(name, value, expected),
    }
}

/// A whole number option of sysbench's type INT (what `sb_get_value_int`
/// reads) in `min..=i32::MAX`; otherwise [`invalid`] with sysbench's text
/// `Invalid value for NAME: VALUE` (sysbench itself checks only
/// `--cpu-max-prime`, and takes a negative count of the others as a huge
/// unsigned one, or divides by a zero one).
pub(crate) fn int_option(
    o: &crate::options::OptValues,
    layout: Layout,
    name: &str,
    min: i64,
    expected: &str,
) -> Result<u32, BenchError> {
    let text = o.str(name);
    match text.trim().parse::<i64>() {
        Ok(v) if (min..=i64::from(i32::MAX)).contains(&v) => Ok(v as u32),
        _ => Err(invalid(
            layout,
            format!("Invalid value for {name}: {}", text.trim()),
            name,
            text,
            expected,
        )),
    }
}

/// sysbench's random numbers: a thread's xoroshiro128+ and its
/// `sb_rand_uniform_double` (the 52 high bits as the fraction of a double
/// in [1, 2), minus 1).
pub(crate) struct SbRandom(Xoroshiro128Plus);

impl SbRandom {
    /// The generator of user `user` of a run with seed `seed`.
    pub(crate) fn for_user(seed: u64, user: usize) -> SbRandom {
        SbRandom(Xoroshiro128Plus::seed_from_u64(crate::random::derive_seed(
            seed,
            user as u64,
        )))
    }

    /// Uniform in [0, 1), as `sb_rand_uniform_double`.
    #[inline(always)]
    pub(crate) fn uniform_double(&mut self) -> f64 {
        let x = self.0.next_u64();
        f64::from_bits((0x3ff << 52) | (x >> 12)) - 1.0
    }

    /// Uniform in `a..=b`, as `sb_rand_uniform`.
    #[inline(always)]
    pub(crate) fn uniform(&mut self, a: u32, b: u32) -> u32 {
        let v = f64::from(a) + self.uniform_double() * f64::from(b.wrapping_sub(a).wrapping_add(1));
        // SAFETY: v is finite and in [a, b + 1) (the double is below 1),
        // so it fits in a u32 once truncated, as sysbench's cast assumes.
        unsafe { v.to_int_unchecked::<u32>() }
    }
}

/// sysbench's `ck_pr_barrier()`: the compiler keeps every iteration of
/// the loop around it and no instruction is emitted.
#[inline(always)]
pub(crate) fn compiler_barrier() {
    // SAFETY: an empty block of assembly; without `nomem` the compiler
    // takes it to touch memory, as C's `asm volatile("" ::: "memory")`.
    unsafe { std::arch::asm!("", options(nostack, preserves_flags)) }
}

/// A POSIX mutex followed by `PAD` bytes: sysbench's `pthread_mutex_t`
/// arrays (the threads test's, `PAD` 0; the mutex test's `thread_lock`,
/// 256 bytes of padding after each).
#[repr(C)]
struct PaddedMutex<const PAD: usize> {
    mutex: UnsafeCell<libc::pthread_mutex_t>,
    _pad: [u8; PAD],
}

/// `n` POSIX mutexes, initialised as `pthread_mutex_init(m, NULL)` does
/// (the default, non-spinning kind), locked and unlocked by index.
pub(crate) struct Mutexes<const PAD: usize> {
    all: Box<[PaddedMutex<PAD>]>,
}

// SAFETY: POSIX mutexes are made to be locked and unlocked from any
// thread; they do not move (the boxed slice is never reallocated) and are
// destroyed only when no user holds the array any more.
unsafe impl<const PAD: usize> Sync for Mutexes<PAD> {}
// SAFETY: as above; nothing in them belongs to a thread.
unsafe impl<const PAD: usize> Send for Mutexes<PAD> {}

impl<const PAD: usize> Mutexes<PAD> {
    pub(crate) fn new(n: usize) -> Mutexes<PAD> {
        let all = (0..n)
            .map(|_| PaddedMutex {
                mutex: UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER),
                _pad: [0; PAD],
            })
            .collect();
        Mutexes { all }
    }

    pub(crate) fn len(&self) -> usize {
        self.all.len()
    }

    /// Locks mutex `i` (below [`Mutexes::len`]).
    #[inline(always)]
    pub(crate) fn lock(&self, i: usize) {
        debug_assert!(i < self.all.len());
        // SAFETY: `i` is in range (the callers draw it below the length,
        // as sysbench does, without a check of their own); the mutex is
        // initialised and does not move. The result is that of a default
        // mutex locked by a thread that does not hold it: always 0.
        unsafe {
            libc::pthread_mutex_lock(self.all.get_unchecked(i).mutex.get());
        }
    }

    /// Unlocks mutex `i`, which this thread locked.
    #[inline(always)]
    pub(crate) fn unlock(&self, i: usize) {
        debug_assert!(i < self.all.len());
        // SAFETY: as in `lock`; the caller holds the mutex.
        unsafe {
            libc::pthread_mutex_unlock(self.all.get_unchecked(i).mutex.get());
        }
    }
}

impl<const PAD: usize> Drop for Mutexes<PAD> {
    fn drop(&mut self) {
        for m in self.all.iter() {
            // SAFETY: no user holds the array any more, so none is locked.
            unsafe {
                libc::pthread_mutex_destroy(m.mutex.get());
            }
        }
    }
}

/// The run plan of a test whose users count nothing but events: its
/// users and the lines about its settings printed after the run header.
pub(crate) struct EventsPlan {
    pub users: Arc<dyn UserFactory>,
    pub preamble: Option<String>,
}

impl RunPlan for EventsPlan {
    fn server_version(&self) -> String {
        String::new()
    }

    fn measures(&self) -> Vec<dbmeter_stats::Measure> {
        Vec::new()
    }

    fn users(&self) -> Arc<dyn UserFactory> {
        self.users.clone()
    }

    fn preamble(&self) -> Option<String> {
        self.preamble.clone()
    }
}

/// sysbench's log level of what a test says about its settings at its
/// default `--verbosity`.
pub(crate) const NOTICE: u8 = 3;

/// The lines a test prints about its settings (sysbench's `print_mode`)
/// in `layout`: in sysbench's, each of `logged` (its level and the text of
/// one `log_text` call, which ends it with a newline) that `--verbosity`
/// lets through; in the others, dbmeter's `own` line.
pub(crate) fn preamble(layout: Layout, logged: &[(u8, &str)], own: String) -> Option<String> {
    match sysbench_verbosity(layout) {
        Some(v) => {
            let shown: String = logged
                .iter()
                .filter(|(level, _)| *level <= v)
                .map(|(_, text)| format!("{text}\n"))
                .collect();
            (!shown.is_empty()).then_some(shown)
        }
        None => Some(format!("{own}\n")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysbench_uniform_doubles_and_integers() {
        let mut r = SbRandom::for_user(7, 0);
        let mut seen = [0u32; 4];
        for _ in 0..10_000 {
            let d = r.uniform_double();
            assert!((0.0..1.0).contains(&d), "{d}");
            let u = r.uniform(0, 3);
            seen[u as usize] += 1;
        }
        // Every value of 0..=3 comes up about a quarter of the time.
        assert!(seen.iter().all(|n| (2000..3000).contains(n)), "{seen:?}");
        // Users draw different numbers.
        let (mut a, mut b) = (SbRandom::for_user(7, 0), SbRandom::for_user(7, 1));
        assert_ne!(a.uniform_double(), b.uniform_double());
    }

    #[test]
    fn mutexes_lock_and_unlock_from_threads() {
        let m = Arc::new(Mutexes::<256>::new(3));
        assert_eq!(m.len(), 3);
        let count = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let (m, count) = (m.clone(), count.clone());
                std::thread::spawn(move || {
                    for i in 0..3000 {
                        m.lock(i % 3);
                        count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        m.unlock(i % 3);
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(count.load(std::sync::atomic::Ordering::Relaxed), 6000);
    }
}
