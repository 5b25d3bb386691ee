//! PostgreSQL's pseudo-random generator (`pg_prng`): xoroshiro128** 1.0
//! seeded through splitmix64. pgbench's `permute()` is defined in terms of
//! it, so matching pgbench's results needs the same generator; using it for
//! `random()` and the script choice too makes a run with
//! `--random-seed=N` draw the same numbers as pgbench's.
//!
//! [`Seeds`] derives every generator of a run from the one seed in
//! pgbench's order, so that client `i` of dbmeter draws what client `i` of
//! `pgbench -c N -j N --random-seed=SEED` draws.

/// One generator's state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PgPrng {
    s0: u64,
    s1: u64,
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl PgPrng {
    /// The generator `pg_prng_seed` makes from `seed`.
    pub fn seed(seed: u64) -> PgPrng {
        let mut s = seed;
        let s0 = splitmix64(&mut s);
        let s1 = splitmix64(&mut s);
        if s0 == 0 && s1 == 0 {
            // All zeroes is a fixed point: PostgreSQL puts Knuth's LCG
            // constants there instead.
            return PgPrng {
                s0: 0x5851_F42D_4C95_7F2D,
                s1: 0x1405_7B7E_F767_814F,
            };
        }
        PgPrng { s0, s1 }
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s0 = self.s0;
        let sx = self.s1 ^ s0;
        let val = s0.wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        self.s0 = s0.rotate_left(24) ^ sx ^ (sx << 16);
        self.s1 = sx.rotate_left(37);
        val
    }

    /// Uniform in `min..=max` (bitmask rejection); `min` for an empty range.
    #[inline]
    pub fn u64_range(&mut self, min: u64, max: u64) -> u64 {
        if max <= min {
            return min;
        }
        let range = max - min;
        let shift = range.leading_zeros();
        loop {
            let v = self.next_u64() >> shift;
            if v <= range {
                return min + v;
            }
        }
    }

    /// Uniform in `[0, 1)` with 52 random bits.
    #[inline]
    pub fn double(&mut self) -> f64 {
        (self.next_u64() >> 12) as f64 * (1.0 / (1u64 << 52) as f64)
    }

    /// Normally distributed (mean 0, deviation 1), by the basic Box-Muller
    /// transform on two draws in `(0, 1]`.
    pub fn double_normal(&mut self) -> f64 {
        let u1 = 1.0 - self.double();
        let u2 = 1.0 - self.double();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).sin()
    }
}

/// The generators and seeds of one run, derived from its random seed in
/// pgbench's order: first one generator per client (for the expression
/// functions), then the default seed of `hash()` and `permute()`, then
/// three per thread (script choice, throttling, log sampling). dbmeter
/// runs one client per thread, so client `i` gets thread `i`'s script
/// chooser, as `pgbench -c N -j N`.
#[derive(Clone, Debug)]
pub struct Seeds {
    random_seed: u64,
    functions: Vec<PgPrng>,
    choosers: Vec<PgPrng>,
    default_seed: i64,
}

impl Seeds {
    pub fn new(random_seed: u64, clients: usize) -> Seeds {
        let mut base = PgPrng::seed(random_seed);
        let functions = (0..clients)
            .map(|_| PgPrng::seed(base.next_u64()))
            .collect();
        let default_seed = base.next_u64() as i64;
        let mut choosers = Vec::with_capacity(clients);
        for _ in 0..clients {
            choosers.push(PgPrng::seed(base.next_u64()));
            let _throttle = base.next_u64();
            let _sample = base.next_u64();
        }
        Seeds {
            random_seed,
            functions,
            choosers,
            default_seed,
        }
    }

    /// The run's seed (the value of `:random_seed`).
    pub fn random_seed(&self) -> u64 {
        self.random_seed
    }

    /// `:default_seed`, the seed of `hash()` and `permute()` without one.
    pub fn default_seed(&self) -> i64 {
        self.default_seed
    }

    /// Client `i`'s generator for `random()` and friends.
    pub fn functions(&self, client: usize) -> PgPrng {
        self.functions
            .get(client)
            .cloned()
            .unwrap_or_else(|| PgPrng::seed(self.random_seed ^ client as u64))
    }

    /// Client `i`'s generator for choosing a script by weight.
    pub fn chooser(&self, client: usize) -> PgPrng {
        self.choosers
            .get(client)
            .cloned()
            .unwrap_or_else(|| PgPrng::seed(!self.random_seed ^ client as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_stay_in_range() {
        let mut r = PgPrng::seed(1);
        for _ in 0..10_000 {
            let v = r.u64_range(5, 12);
            assert!((5..=12).contains(&v));
            let d = r.double();
            assert!((0.0..1.0).contains(&d));
        }
        assert_eq!(r.u64_range(7, 7), 7);
        // The full range takes the bits as they come.
        let mut a = PgPrng::seed(9);
        let mut b = PgPrng::seed(9);
        assert_eq!(a.u64_range(0, u64::MAX), b.next_u64());
    }

    #[test]
    fn same_seed_same_numbers() {
        let mut a = PgPrng::seed(42);
        let mut b = PgPrng::seed(42);
        let mut c = PgPrng::seed(43);
        let x: Vec<u64> = (0..4).map(|_| a.next_u64()).collect();
        let y: Vec<u64> = (0..4).map(|_| b.next_u64()).collect();
        let z: Vec<u64> = (0..4).map(|_| c.next_u64()).collect();
        assert_eq!(x, y);
        assert_ne!(x, z);
    }
}
