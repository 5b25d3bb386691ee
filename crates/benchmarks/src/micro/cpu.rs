//! `cpu`: sysbench's CPU test. One event counts the primes below
//! `--cpu-max-prime` by trial division: each number from 3 up is divided
//! by 2, 3, 4... up to its square root (64-bit integers, the root a
//! double), as sysbench 1.0.20's `cpu_execute_event` does.

use super::{EventsPlan, INFO, NOTICE, invalid, preamble};
use crate::benchmark::{BenchError, Benchmark, Context, RunPlan, Verb, no_such_verb};
use crate::options::{OptKind, OptSpec, OptValues, opt};
use dbmeter_engine::{EventError, Flow, Tally, User, UserFactory};
use dbmeter_result::{Layout, RunDocument};
use std::hint::black_box;
use std::sync::Arc;

pub struct Cpu;

const OPTIONS: &[OptSpec] = &[opt(
    "cpu-max-prime",
    OptKind::Int,
    "10000",
    "upper limit for primes generator",
)];

/// The test's settings, read once.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CpuConfig {
    /// Numbers below it are tested.
    pub max_prime: u64,
}

impl CpuConfig {
    /// Reads and checks `--cpu-max-prime` (sysbench's INT, above 0); the
    /// error is worded for `layout`.
    pub fn from_options(o: &OptValues, layout: Layout) -> Result<CpuConfig, BenchError> {
        let text = o.str("cpu-max-prime");
        let max = i64::from(i32::MAX);
        match text.trim().parse::<i64>() {
            Ok(v) if (1..=max).contains(&v) => Ok(CpuConfig {
                max_prime: v as u64,
            }),
            v => Err(invalid(
                layout,
                match v {
                    // sysbench's own check of a value it could read.
                    Ok(v) if v >= i64::from(i32::MIN) && v <= 0 => {
                        format!("Invalid value of cpu-max-prime: {v}.")
                    }
                    _ => format!("Invalid value for cpu-max-prime: {}", text.trim()),
                },
                "cpu-max-prime",
                text,
                &format!("a whole number from 1 to {max}"),
            )),
        }
    }
}

/// The primes in 3..max (2 is not counted, as in sysbench): trial
/// division up to the root, with sysbench's types and comparisons, and the
/// instructions gcc makes of them: the division by 2 a test of the lowest
/// bit, the others a 64-bit division (where the compiler would divide in
/// 32 bits when it can, and test the divisor against 0), the integers
/// turned into doubles as signed ones (they are below 2^31).
#[inline(never)]
pub fn count_primes(max: u64) -> u64 {
    let mut n = 0;
    let mut c: u64 = 3;
    while c < max {
        let t = (c as i64 as f64).sqrt();
        let mut l: u64 = 2;
        if 2.0 <= t && !c.is_multiple_of(2) {
            l = 3;
            while l as i64 as f64 <= t {
                if remainder(c, l) == 0 {
                    break;
                }
                l += 1;
            }
        }
        if l as i64 as f64 > t {
            n += 1;
        }
        c += 1;
    }
    n
}

/// `c % l` for `l` from 2: one `div` of 64 bits, as sysbench's.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn remainder(c: u64, l: u64) -> u64 {
    debug_assert!(l >= 2);
    let r: u64;
    // SAFETY: `div` divides rdx:rax (0:c) by l, which is at least 2, so
    // the quotient fits and nothing faults; it touches no memory.
    unsafe {
        std::arch::asm!(
            "div {l}",
            l = in(reg) l,
            inout("rax") c => _,
            inout("rdx") 0u64 => r,
            options(pure, nomem, nostack)
        );
    }
    r
}

/// `c % l` for `l` from 2.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn remainder(c: u64, l: u64) -> u64 {
    c % l
}

struct CpuUser {
    max_prime: u64,
}

impl User for CpuUser {
    fn event(&mut self, _tally: &mut Tally) -> Result<Flow, EventError> {
        // The count is kept (sysbench's n is dead code the compiler keeps
        // computing, as its loop calls sqrt); the limit is read anew.
        black_box(count_primes(black_box(self.max_prime)));
        Ok(Flow::Continue)
    }
}

struct CpuUsers(CpuConfig);

impl UserFactory for CpuUsers {
    fn create(&self, _user_id: usize) -> Result<Box<dyn User>, String> {
        Ok(Box::new(CpuUser {
            max_prime: self.0.max_prime,
        }))
    }
}

impl Benchmark for Cpu {
    fn name(&self) -> &str {
        "cpu"
    }

    fn summary(&self) -> &str {
        "sysbench's cpu test: each event counts the primes below --cpu-max-prime by trial division"
    }

    fn options(&self) -> Vec<OptSpec> {
        OPTIONS.to_vec()
    }

    fn check_options(&self, options: &OptValues) -> Result<(), BenchError> {
        CpuConfig::from_options(options, Layout::Dbmeter).map(drop)
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
        CpuConfig::from_options(ctx.options, ctx.layout)?;
        Err(no_such_verb(self, verb))
    }

    fn known_kinds(&self, _options: &OptValues) -> Option<Vec<String>> {
        // Its users tell no kinds of events apart.
        Some(Vec::new())
    }

    fn plan(&self, ctx: &Context) -> Result<Box<dyn RunPlan>, BenchError> {
        let cfg = CpuConfig::from_options(ctx.options, ctx.layout)?;
        Ok(Box::new(EventsPlan {
            users: Arc::new(CpuUsers(cfg)),
            preamble: preamble(
                ctx.layout,
                &[
                    (INFO, "Doing CPU performance benchmark\n"),
                    (NOTICE, &format!("Prime numbers limit: {}\n", cfg.max_prime)),
                ],
                format!(
                    "each event counts the primes below {} (--cpu-max-prime)",
                    cfg.max_prime
                ),
            ),
        }))
    }

    fn sysbench_lead(&self, doc: &RunDocument) -> Option<String> {
        Some(sysbench_lead(doc))
    }
}

/// sysbench's words before its general statistics: `CPU speed:` and the
/// events per second.
pub fn sysbench_lead(doc: &RunDocument) -> String {
    format!(
        "CPU speed:\n    events per second: {:8.2}\n",
        doc.totals.events_per_s
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::testing::{refused, values};

    #[test]
    fn primes_as_sysbench_counts_them() {
        // 3, 5, 7 below 10; 167 of the 168 primes below 1000 (2 is not
        // counted); 1228 below 10000.
        assert_eq!(count_primes(10), 3);
        assert_eq!(count_primes(1000), 167);
        assert_eq!(count_primes(10000), 1228);
        assert_eq!(count_primes(1), 0);
    }

    #[test]
    fn options_and_their_ranges() {
        let cfg = CpuConfig::from_options(&values(OPTIONS, &[]), Layout::Dbmeter).unwrap();
        assert_eq!(cfg.max_prime, 10000);
        for v in ["0", "-5", "2147483648", "1e3"] {
            refused(OPTIONS, &[("cpu-max-prime", v)], |o| {
                CpuConfig::from_options(o, Layout::Dbmeter)
            });
        }
        let sysbench = Layout::Sysbench {
            percentile_off: false,
            verbosity: 3,
        };
        let o = values(OPTIONS, &[("cpu-max-prime", "-5")]);
        assert_eq!(
            CpuConfig::from_options(&o, sysbench),
            Err(BenchError::Usage(
                "Invalid value of cpu-max-prime: -5.".into()
            ))
        );
    }
}
