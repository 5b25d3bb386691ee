//! The arithmetic behind pgbench's hashing, permutation and random
//! functions, computed as pgbench computes them (same constants, same
//! rounding, same draws from [`PgPrng`]), so that `hash()`, `permute()`
//! and, with the same seed, `random*()` give pgbench's numbers.

use super::prng::PgPrng;

const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;
const FNV_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const MM2_MUL: u64 = 0xc6a4_a793_5bd1_e995;
const MM2_MUL_TIMES_8: u64 = 0x3525_3c9a_de8f_4ca8;
const MM2_ROT: u32 = 47;

/// The lowest gaussian parameter `random_gaussian` accepts.
pub const MIN_GAUSSIAN_PARAM: f64 = 2.0;
/// The range of the zipfian parameter `random_zipfian` accepts.
pub const MIN_ZIPFIAN_PARAM: f64 = 1.001;
pub const MAX_ZIPFIAN_PARAM: f64 = 1000.0;

/// FNV-1a over the 8 bytes of `val`, lowest first, starting from the
/// offset basis xor `seed`.
pub fn hash_fnv1a(val: i64, seed: i64) -> i64 {
    let mut result = FNV_OFFSET_BASIS ^ seed as u64;
    let mut v = val;
    for _ in 0..8 {
        result ^= (v & 0xff) as u64;
        result = result.wrapping_mul(FNV_PRIME);
        v >>= 8;
    }
    result as i64
}

/// MurmurHash2 (64-bit) of one 8-byte value.
pub fn hash_murmur2(val: i64, seed: i64) -> i64 {
    let mut result = seed as u64 ^ MM2_MUL_TIMES_8;
    let mut k = val as u64;
    k = k.wrapping_mul(MM2_MUL);
    k ^= k >> MM2_ROT;
    k = k.wrapping_mul(MM2_MUL);
    result ^= k;
    result = result.wrapping_mul(MM2_MUL);
    result ^= result >> MM2_ROT;
    result = result.wrapping_mul(MM2_MUL);
    result ^= result >> MM2_ROT;
    result as i64
}

/// pgbench's pseudorandom permutation of `0..size`: where `val` (taken
/// modulo `size`) goes. Six rounds, each a random odd multiplication, xor
/// and rotation on the lower and the upper overlapping halves of the
/// range, then a random offset, all drawn from a generator seeded with
/// `seed`. Sizes below 2 give 0.
pub fn permute(val: i64, size: i64, seed: i64) -> i64 {
    if size < 2 {
        return 0;
    }
    let mut rng = PgPrng::seed(seed as u64);
    let size = size as u64;
    let mut v = (val as u64) % size;
    // Work modulo the largest power of two not above size.
    let masklen = 63 - size.leading_zeros();
    let mask = (1u64 << masklen) - 1;
    let scramble = |x: u64, m: u64, r: u64| {
        let x = (x.wrapping_mul(m) ^ r) & mask;
        ((x << 1) & mask) | (x >> (masklen - 1))
    };
    for _ in 0..6 {
        let m = (rng.next_u64() & mask) | 1;
        let r = rng.next_u64() & mask;
        if v <= mask {
            v = scramble(v, m, r);
        }
        let m = (rng.next_u64() & mask) | 1;
        let r = rng.next_u64() & mask;
        let t = size - 1 - v;
        if t <= mask {
            v = size - 1 - scramble(t, m, r);
        }
        let r = rng.u64_range(0, size - 1);
        v = ((v as u128 + r as u128) % size as u128) as u64;
    }
    v as i64
}

/// Uniform in `min..=max` (the caller has checked the range).
pub fn uniform(rng: &mut PgPrng, min: i64, max: i64) -> i64 {
    min.wrapping_add(rng.u64_range(0, max.wrapping_sub(min) as u64) as i64)
}

/// Exponential in `min..=max`: the density at `max` is `exp(-parameter)`
/// times the density at `min` (parameter > 0).
pub fn exponential(rng: &mut PgPrng, min: i64, max: i64, parameter: f64) -> i64 {
    let cut = (-parameter).exp();
    let uniform = 1.0 - rng.double();
    let rand = -(cut + (1.0 - cut) * uniform).ln() / parameter;
    min + ((max - min + 1) as f64 * rand) as i64
}

/// Gaussian in `min..=max`, centred, cut at `parameter` standard
/// deviations each side (parameter >= 2).
pub fn gaussian(rng: &mut PgPrng, min: i64, max: i64, parameter: f64) -> i64 {
    let stdev = loop {
        let s = rng.double_normal();
        if s >= -parameter && s < parameter {
            break s;
        }
    };
    let rand = (stdev + parameter) / (parameter * 2.0);
    min + ((max - min + 1) as f64 * rand) as i64
}

/// Zipfian in `min..=max` with exponent `s` in [1.001, 1000]: Devroye's
/// rejection method (Non-Uniform Random Variate Generation, p. 550).
pub fn zipfian(rng: &mut PgPrng, min: i64, max: i64, s: f64) -> i64 {
    let n = max - min + 1;
    if n <= 1 {
        return min;
    }
    let b = 2.0f64.powf(s - 1.0);
    let x = loop {
        let u = rng.double();
        let v = rng.double();
        let x = u.powf(-1.0 / (s - 1.0)).floor();
        let t = (1.0 + 1.0 / x).powf(s - 1.0);
        if v * x * (t - 1.0) / (b - 1.0) <= t / b && x <= n as f64 {
            break x;
        }
    };
    min - 1 + x as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    // The values below are pgbench 15's (debug() output).
    #[test]
    fn hashes_match_pgbench() {
        assert_eq!(hash_fnv1a(42, 0), -55488592825689361);
        assert_eq!(hash_murmur2(42, 0), -3251795447530343920);
        assert_eq!(hash_murmur2(1, 2), -3827666828038376880);
    }

    #[test]
    fn permute_matches_pgbench() {
        assert_eq!(permute(3, 10, 5), 9);
        assert_eq!(permute(0, 1, 7), 0);
    }

    #[test]
    fn permute_is_a_permutation() {
        for size in [2i64, 3, 7, 64, 100, 1000] {
            let mut seen = vec![false; size as usize];
            for v in 0..size {
                let p = permute(v, size, 12345);
                assert!((0..size).contains(&p));
                assert!(!seen[p as usize], "size {size}: {p} twice");
                seen[p as usize] = true;
            }
        }
        // Values outside the range wrap (as unsigned, like pgbench).
        assert_eq!(permute(13, 10, 5), permute(3, 10, 5));
    }

    #[test]
    fn distributions_stay_in_range_and_lean_as_expected() {
        let mut rng = PgPrng::seed(3);
        let (mut low_exp, mut mid_gauss, mut one_zipf) = (0, 0, 0);
        for _ in 0..10_000 {
            let u = uniform(&mut rng, -5, 5);
            assert!((-5..=5).contains(&u));
            let e = exponential(&mut rng, 1, 100, 5.0);
            assert!((1..=100).contains(&e));
            low_exp += (e <= 20) as u32;
            let g = gaussian(&mut rng, 1, 100, 2.5);
            assert!((1..=100).contains(&g));
            mid_gauss += (26..=75).contains(&g) as u32;
            let z = zipfian(&mut rng, 1, 100, 1.5);
            assert!((1..=100).contains(&z));
            one_zipf += (z == 1) as u32;
        }
        // exp(-5 * 0.2) = 37% of the mass is above 20: 63% below.
        assert!((5_800..6_800).contains(&low_exp), "{low_exp}");
        // +-1.25 deviations of a normal cut at 2.5: about 79%.
        assert!((7_400..8_400).contains(&mid_gauss), "{mid_gauss}");
        // zipf(1.5) over 100 values puts about 40% on the first.
        assert!((3_400..4_600).contains(&one_zipf), "{one_zipf}");
        assert_eq!(uniform(&mut rng, i64::MIN, i64::MIN), i64::MIN);
    }
}
