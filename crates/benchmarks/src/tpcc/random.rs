//! The random numbers and strings of the TPC-C specification (clause
//! 2.1.4-2.1.6 and 4.3.2): uniform integers, NURand with its C constants,
//! a-strings, n-strings, zip codes and customer last names.

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// The syllables of C_LAST, indexed by the digits of a number 0..999.
pub const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// The C of NURand(255, ...) used for C_LAST when loading. Fixed, so that
/// loaders of different warehouse ranges (on different machines) agree.
pub const C_LAST_LOAD: i64 = 157;

/// The run-time constants C of NURand for C_LAST, C_ID and OL_I_ID.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NuConstants {
    pub c_last: i64,
    pub c_id: i64,
    pub ol_i_id: i64,
}

impl NuConstants {
    /// Draws the run's constants: C_ID and OL_I_ID anywhere in their
    /// range, C_LAST so that its distance to the load-time value is in
    /// 65..=119 and neither 96 nor 112 (clause 2.1.6.1).
    pub fn for_run(seed: u64) -> NuConstants {
        let mut r = TpccRand::new(seed ^ 0xc0ff_ee00_0000_0001);
        let c_last = loop {
            let c = r.uniform(0, 255);
            let delta = (c - C_LAST_LOAD).abs();
            if (65..=119).contains(&delta) && delta != 96 && delta != 112 {
                break c;
            }
        };
        NuConstants {
            c_last,
            c_id: r.uniform(0, 1023),
            ol_i_id: r.uniform(0, 8191),
        }
    }

    /// The constants used when loading (only C_LAST matters there).
    pub fn for_load() -> NuConstants {
        NuConstants {
            c_last: C_LAST_LOAD,
            c_id: 0,
            ol_i_id: 0,
        }
    }
}

const ALNUM: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// A generator of the specification's random values.
pub struct TpccRand {
    rng: Xoshiro256PlusPlus,
}

impl TpccRand {
    pub fn new(seed: u64) -> TpccRand {
        TpccRand {
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
        }
    }

    #[inline]
    fn below(&mut self, n: u64) -> u64 {
        ((self.rng.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Uniform in `a..=b`.
    #[inline]
    pub fn uniform(&mut self, a: i64, b: i64) -> i64 {
        if b <= a {
            return a;
        }
        a + self.below((b - a) as u64 + 1) as i64
    }

    /// True with probability `pct` percent.
    #[inline]
    pub fn percent(&mut self, pct: i64) -> bool {
        self.uniform(1, 100) <= pct
    }

    /// NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x.
    #[inline]
    pub fn nurand(&mut self, a: i64, x: i64, y: i64, c: i64) -> i64 {
        (((self.uniform(0, a) | self.uniform(x, y)) + c) % (y - x + 1)) + x
    }

    /// A uniform float in `[0, 1)`.
    #[inline]
    pub fn unit(&mut self) -> f64 {
        (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Appends a random a-string (alphanumeric) of length `min..=max`.
    pub fn a_string(&mut self, min: usize, max: usize, out: &mut String) {
        let len = self.uniform(min as i64, max as i64) as usize;
        // Ten characters per 64-bit draw (62^10 < 2^60).
        let mut left = len;
        while left > 0 {
            let mut v = self.rng.next_u64() >> 4;
            for _ in 0..left.min(10) {
                out.push(ALNUM[(v % 62) as usize] as char);
                v /= 62;
            }
            left = left.saturating_sub(10);
        }
    }

    /// Appends a random n-string (digits) of length `len`.
    pub fn n_string(&mut self, len: usize, out: &mut String) {
        let mut left = len;
        while left > 0 {
            let mut v = self.rng.next_u64();
            for _ in 0..left.min(18) {
                out.push((b'0' + (v % 10) as u8) as char);
                v /= 10;
            }
            left = left.saturating_sub(18);
        }
    }

    /// Appends an a-string of `min..=max` characters, 10% of them with
    /// "ORIGINAL" at a random position (I_DATA and S_DATA).
    pub fn data_string(&mut self, min: usize, max: usize, out: &mut String) {
        let start = out.len();
        self.a_string(min, max, out);
        if self.percent(10) {
            let len = out.len() - start;
            let at = start + self.uniform(0, (len - 8) as i64) as usize;
            out.replace_range(at..at + 8, "ORIGINAL");
        }
    }

    /// Appends a zip code: four random digits and "11111".
    pub fn zip(&mut self, out: &mut String) {
        self.n_string(4, out);
        out.push_str("11111");
    }

    /// Appends two random upper-case letters (a state).
    pub fn state(&mut self, out: &mut String) {
        for _ in 0..2 {
            out.push((b'A' + self.below(26) as u8) as char);
        }
    }

    /// A NURand(255, 0, 999) last-name number with constant `c`.
    pub fn last_name_number(&mut self, c: i64) -> i64 {
        self.nurand(255, 0, 999, c)
    }

    /// Shuffles `v` (Fisher-Yates).
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            v.swap(i, j);
        }
    }
}

/// Appends the last name of number `n` (0..999): its three digits pick
/// three syllables.
pub fn last_name(n: i64, out: &mut String) {
    let n = n.clamp(0, 999) as usize;
    out.push_str(SYLLABLES[n / 100]);
    out.push_str(SYLLABLES[(n / 10) % 10]);
    out.push_str(SYLLABLES[n % 10]);
}

/// `cents` as a decimal with two places ("-10.00").
pub fn money(cents: i64, out: &mut String) {
    use std::fmt::Write as _;
    let sign = if cents < 0 { "-" } else { "" };
    let a = cents.unsigned_abs();
    let _ = write!(out, "{sign}{}.{:02}", a / 100, a % 100);
}

/// `v` ten-thousandths as a decimal with four places ("0.1234").
pub fn rate(v: i64, out: &mut String) {
    use std::fmt::Write as _;
    let _ = write!(out, "{}.{:04}", v / 10_000, v % 10_000);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_names_from_digits() {
        let mut s = String::new();
        last_name(371, &mut s);
        assert_eq!(s, "PRICALLYOUGHT");
        s.clear();
        last_name(0, &mut s);
        assert_eq!(s, "BARBARBAR");
        s.clear();
        last_name(999, &mut s);
        assert_eq!(s, "EINGEINGEING");
    }

    #[test]
    fn run_constant_for_last_names_keeps_its_distance() {
        for seed in 1..500 {
            let c = NuConstants::for_run(seed);
            let d = (c.c_last - C_LAST_LOAD).abs();
            assert!((65..=119).contains(&d) && d != 96 && d != 112, "{d}");
            assert!((0..=1023).contains(&c.c_id));
            assert!((0..=8191).contains(&c.ol_i_id));
        }
    }

    /// NURand's distribution: within range, non-uniform as the
    /// specification intends (values with many bits set by the OR come up
    /// far more often), and matching its exact probabilities.
    #[test]
    fn nurand_distribution() {
        let mut r = TpccRand::new(7);
        let draws = 1_000_000;
        let mut hits = vec![0u32; 3000];
        for _ in 0..draws {
            let v = r.nurand(1023, 1, 3000, 259);
            assert!((1..=3000).contains(&v), "{v}");
            hits[(v - 1) as usize] += 1;
        }
        let mean = draws as f64 / 3000.0;
        let max = *hits.iter().max().unwrap() as f64;
        let min = *hits.iter().min().unwrap() as f64;
        // Uniform draws would stay within a few percent of the mean.
        assert!(max > 2.0 * mean, "max {max} mean {mean}");
        assert!(min < 0.5 * mean, "min {min} mean {mean}");
        // The exact probability of a value: P(((u | v) + C) % 3000 + 1 = t)
        // with u uniform 0..1023 and v uniform 1..3000, summed exactly.
        let mut p = vec![0f64; 3000];
        for u in 0..=1023i64 {
            for v in 1..=3000i64 {
                let t = ((u | v) + 259) % 3000;
                p[t as usize] += 1.0 / (1024.0 * 3000.0);
            }
        }
        // Chi-squared over the values expected at least 5 times, the rare
        // ones pooled into one cell.
        let (mut chi2, mut cells) = (0.0, 0usize);
        let (mut rare_h, mut rare_e) = (0.0, 0.0);
        for (&h, &q) in hits.iter().zip(&p) {
            let e = q * draws as f64;
            if e < 5.0 {
                rare_h += h as f64;
                rare_e += e;
            } else {
                chi2 += (h as f64 - e).powi(2) / e;
                cells += 1;
            }
        }
        if rare_e > 0.0 {
            chi2 += (rare_h - rare_e).powi(2) / rare_e;
            cells += 1;
        }
        // cells - 1 degrees of freedom: mean cells - 1, sd sqrt(2 (cells - 1)).
        let dof = (cells - 1) as f64;
        assert!(
            chi2 < dof + 6.0 * (2.0 * dof).sqrt(),
            "chi2 {chi2}, {cells} cells"
        );
    }

    #[test]
    fn strings_have_their_shapes() {
        let mut r = TpccRand::new(3);
        let mut originals = 0;
        for _ in 0..10_000 {
            let mut s = String::new();
            r.data_string(26, 50, &mut s);
            assert!((26..=50).contains(&s.len()));
            assert!(s.bytes().all(|b| b.is_ascii_alphanumeric()));
            originals += usize::from(s.contains("ORIGINAL"));
        }
        assert!((800..1200).contains(&originals), "{originals}");
        let mut z = String::new();
        r.zip(&mut z);
        assert_eq!(z.len(), 9);
        assert!(z.ends_with("11111") && z.bytes().all(|b| b.is_ascii_digit()));
        let mut m = String::new();
        money(-1000, &mut m);
        assert_eq!(m, "-10.00");
        m.clear();
        money(500_005, &mut m);
        assert_eq!(m, "5000.05");
        m.clear();
        rate(1234, &mut m);
        assert_eq!(m, "0.1234");
    }
}
