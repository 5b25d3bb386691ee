//! Random ids and values, with sysbench's distributions.
//!
//! Every virtual user has its own generator derived from the run's seed and
//! its user number, so the same seed gives each user the same sequence.

use crate::benchmark::BenchError;
use crate::options::{OptValues, bad_value};
use rand_core::{Rng, SeedableRng};
use rand_distr::{Distribution, Zipf};
use rand_xoshiro::Xoshiro256PlusPlus;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RandType {
    Uniform,
    Gaussian,
    Special,
    Pareto,
    Zipfian,
}

/// `--rand-type` and its parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct RandSpec {
    pub kind: RandType,
    /// `--rand-spec-iter`: draws averaged by gaussian (and special's gaussian part).
    pub iter: u32,
    /// `--rand-spec-pct`: width of special's hot range, in % of the range.
    pub pct: f64,
    /// `--rand-spec-res`: % of special's draws that fall in the hot range.
    pub res: f64,
    /// `--rand-pareto-h`.
    pub pareto_h: f64,
    /// `--rand-zipfian-exp`.
    pub zipf_exp: f64,
}

impl Default for RandSpec {
    fn default() -> Self {
        RandSpec {
            kind: RandType::Special,
            iter: 12,
            pct: 1.0,
            res: 75.0,
            pareto_h: 0.2,
            zipf_exp: 0.8,
        }
    }
}

impl RandSpec {
    /// Reads and checks `--rand-type` and its parameters (declared by
    /// [`crate::oltp::RAND_OPTIONS`]); a usage error of one line naming the
    /// option otherwise.
    pub fn from_options(o: &OptValues) -> Result<Self, BenchError> {
        let text = o.str("rand-type");
        let kind = match text.to_ascii_lowercase().as_str() {
            "uniform" => RandType::Uniform,
            "gaussian" => RandType::Gaussian,
            "special" => RandType::Special,
            "pareto" => RandType::Pareto,
            "zipfian" => RandType::Zipfian,
            _ => {
                return Err(bad_value(
                    "rand-type",
                    text,
                    "uniform, gaussian, special, pareto or zipfian",
                ));
            }
        };
        let percent = |name: &str| {
            o.f64_where(
                name,
                |v| (0.0..=100.0).contains(&v),
                "a percentage from 0 to 100",
            )
        };
        Ok(RandSpec {
            kind,
            iter: o.u64_in(
                "rand-spec-iter",
                1..=1000,
                "a number of draws from 1 to 1000",
            )? as u32,
            pct: percent("rand-spec-pct")?,
            res: percent("rand-spec-res")?,
            pareto_h: o.f64_where(
                "rand-pareto-h",
                |v| v > 0.0 && v < 1.0,
                "a number between 0 and 1 (both excluded)",
            )?,
            zipf_exp: o.f64_where(
                "rand-zipfian-exp",
                |v| v > 0.0 && v <= 100.0,
                "an exponent above 0 and at most 100",
            )?,
        })
    }
}

/// Mixes a seed with a stream number (splitmix64's finaliser).
pub fn derive_seed(seed: u64, stream: u64) -> u64 {
    let mut z = seed ^ stream.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A user's random generator.
pub struct RandGen {
    rng: Xoshiro256PlusPlus,
    spec: RandSpec,
    zipf: Option<(u64, Zipf<f64>)>,
}

impl RandGen {
    pub fn new(seed: u64, spec: RandSpec) -> Self {
        RandGen {
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            spec,
            zipf: None,
        }
    }

    /// A uniform integer in `0..n` (n > 0).
    #[inline]
    fn below(&mut self, n: u64) -> u64 {
        ((self.rng.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// A uniform float in `[0, 1)`.
    #[inline]
    fn unit(&mut self) -> f64 {
        (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `a..=b`.
    #[inline]
    pub fn uniform(&mut self, a: i64, b: i64) -> i64 {
        if b <= a {
            return a;
        }
        a + self.below((b - a) as u64 + 1) as i64
    }

    fn gaussian(&mut self, a: i64, b: i64) -> i64 {
        let t = (b - a) as u64 + 1;
        let mut sum = 0u64;
        for _ in 0..self.spec.iter {
            sum += self.below(t);
        }
        a + (sum / self.spec.iter as u64) as i64
    }

    /// A value in `a..=b` drawn with `--rand-type` (sysbench's `rand.default`).
    pub fn default_dist(&mut self, a: i64, b: i64) -> i64 {
        if b <= a {
            return a;
        }
        let t = (b - a) as u64 + 1;
        match self.spec.kind {
            RandType::Uniform => self.uniform(a, b),
            RandType::Gaussian => self.gaussian(a, b),
            RandType::Special => {
                if self.unit() * 100.0 < self.spec.res {
                    let hot = ((t as f64 * self.spec.pct / 100.0) as u64).max(1);
                    let first = a + ((t - hot) / 2) as i64;
                    first + self.below(hot) as i64
                } else {
                    self.gaussian(a, b)
                }
            }
            RandType::Pareto => {
                let power = self.spec.pareto_h.ln() / (1.0 - self.spec.pareto_h).ln();
                let off = (t as f64 * self.unit().powf(power)) as u64;
                a + off.min(t - 1) as i64
            }
            RandType::Zipfian => {
                if self.zipf.as_ref().is_none_or(|(n, _)| *n != t) {
                    // Zipf::new only fails for n < 1 or a negative exponent,
                    // which from_options rules out; fall back to uniform anyway.
                    match Zipf::new(t as f64, self.spec.zipf_exp) {
                        Ok(z) => self.zipf = Some((t, z)),
                        Err(_) => return self.uniform(a, b),
                    }
                }
                let Some((_, z)) = &self.zipf else {
                    return self.uniform(a, b);
                };
                let v = z.sample(&mut self.rng) as u64; // 1..=t
                a + (v.clamp(1, t) - 1) as i64
            }
        }
    }

    /// A value in `a..=b` drawn with distribution `kind` and the other
    /// parameters of `--rand-*` (sysbench's `rand.gaussian`, `rand.pareto`...).
    pub fn draw(&mut self, kind: RandType, a: i64, b: i64) -> i64 {
        let keep = self.spec.kind;
        self.spec.kind = kind;
        let v = self.default_dist(a, b);
        self.spec.kind = keep;
        v
    }

    /// A uniform float in `[0, 1)`.
    pub fn unit_f64(&mut self) -> f64 {
        self.unit()
    }

    /// A uniform integer in `0..n` (0 for n = 0).
    pub fn below_n(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.below(n) }
    }

    /// A raw 32-bit draw.
    pub fn next_u32(&mut self) -> u32 {
        (self.rng.next_u64() >> 32) as u32
    }

    /// Fills `out` with `groups` groups of 11 random digits joined by '-'
    /// (sysbench's c: 10 groups, 119 characters; pad: 5 groups, 59).
    pub fn digit_groups(&mut self, groups: usize, out: &mut String) {
        out.clear();
        // Up to 16 groups are written into a buffer on the stack, then
        // appended at once (one UTF-8 check instead of one per group).
        const AT_ONCE: usize = 16;
        let mut buf = [0u8; 12 * AT_ONCE];
        let mut left = groups;
        while left > 0 {
            let mut len = 0;
            for _ in 0..left.min(AT_ONCE) {
                if !out.is_empty() || len > 0 {
                    buf[len] = b'-';
                    len += 1;
                }
                // 11 digits from one 64-bit draw (10^11 < 2^37; reduce fairly).
                let mut v = self.below(100_000_000_000);
                for d in buf[len..len + 11].iter_mut().rev() {
                    *d = b'0' + (v % 10) as u8;
                    v /= 10;
                }
                len += 11;
            }
            // Digits and dashes are ASCII.
            out.push_str(std::str::from_utf8(&buf[..len]).unwrap_or_default());
            left -= left.min(AT_ONCE);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rng_of(kind: RandType) -> RandGen {
        RandGen::new(
            42,
            RandSpec {
                kind,
                ..Default::default()
            },
        )
    }

    #[test]
    fn all_distributions_stay_in_range() {
        for kind in [
            RandType::Uniform,
            RandType::Gaussian,
            RandType::Special,
            RandType::Pareto,
            RandType::Zipfian,
        ] {
            let mut g = rng_of(kind);
            for _ in 0..20_000 {
                let v = g.default_dist(1, 1000);
                assert!((1..=1000).contains(&v), "{kind:?} gave {v}");
            }
        }
    }

    #[test]
    fn special_concentrates_in_the_middle() {
        let mut g = rng_of(RandType::Special);
        let n = 100_000;
        let hot = (0..n)
            .filter(|_| (4951..=5050).contains(&g.default_dist(1, 10_000)))
            .count();
        // 75% land in the central 1% (100 values); the gaussian adds a little.
        let share = hot as f64 / n as f64;
        assert!((0.70..0.80).contains(&share), "{share}");
    }

    #[test]
    fn pareto_and_zipfian_favour_small_ids() {
        for kind in [RandType::Pareto, RandType::Zipfian] {
            let mut g = rng_of(kind);
            let low = (0..10_000)
                .filter(|_| g.default_dist(1, 10_000) <= 1000)
                .count();
            assert!(low > 5000, "{kind:?}: {low}");
        }
    }

    #[test]
    fn same_seed_same_sequence_per_stream() {
        let seq = |seed, stream| {
            let mut g = RandGen::new(derive_seed(seed, stream), RandSpec::default());
            (0..100)
                .map(|_| g.default_dist(1, 1_000_000))
                .collect::<Vec<_>>()
        };
        assert_eq!(seq(7, 1), seq(7, 1));
        assert_ne!(seq(7, 1), seq(7, 2));
        assert_ne!(seq(7, 1), seq(8, 1));
    }

    #[test]
    fn digit_groups_shape() {
        let mut g = rng_of(RandType::Uniform);
        let mut s = String::new();
        g.digit_groups(10, &mut s);
        assert_eq!(s.len(), 119);
        assert!(
            s.split('-')
                .all(|p| p.len() == 11 && p.bytes().all(|b| b.is_ascii_digit()))
        );
        g.digit_groups(5, &mut s);
        assert_eq!(s.len(), 59);
        g.digit_groups(20, &mut s);
        assert_eq!(s.len(), 20 * 12 - 1);
        assert!(
            s.split('-')
                .all(|p| p.len() == 11 && p.bytes().all(|b| b.is_ascii_digit()))
        );
    }

    /// The same seed gives the same digits as it always has: tables loaded
    /// by two versions of dbmeter hold the same rows.
    #[test]
    fn digit_groups_are_stable() {
        let mut g = rng_of(RandType::Uniform);
        let mut s = String::new();
        g.digit_groups(2, &mut s);
        assert_eq!(s, "81430514512-31882104006");
    }
}
