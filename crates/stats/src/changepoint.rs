//! Change points in a series of results: E-Divisive with means
//! (Matteson & James, "A Nonparametric Approach for Multiple Change Point
//! Analysis of Multivariate Data", JASA 109(505), 2014), the method MongoDB
//! runs over its performance history (Daly et al., "The Use of Change
//! Point Detection to Identify Software Performance Regressions in a
//! Continuous Integration System", ICPE 2020) and Apache Otava (Hunter)
//! grew from.
//!
//! The series is split in two where the energy statistic
//! `q = a·b/(a+b) · (2/(a·b)·Σ|x−y|^α − Σ|x−x'|^α/C(a,2) − Σ|y−y'|^α/C(b,2))`
//! of the two parts `X` (the first `a` values of a segment) and `Y` (the
//! `b` values after them, up to an end `κ` that is also searched, as in the
//! paper) is largest. The split is kept when a permutation test finds it
//! significant: the values of every segment are shuffled within their
//! segment `permutations` times, each time the largest statistic is
//! found again, and the p-value is `(1 + #{shuffles at least as large}) /
//! (1 + permutations)`. Each kept split makes two segments, and the search
//! goes on over all segments until a split is not significant or no segment
//! is long enough to split. The shuffles come from a generator with a fixed
//! seed, so the same series always gives the same change points.
//!
//! The search costs O(n²) per segment of n values, and so does each
//! shuffle; a test stops early once its p-value can no longer reach the
//! significance level.

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// The parameters of the search. [`Params::default`] is what dbmeter uses
/// unless told otherwise.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// A split is kept when its p-value is at most this (0 < s < 1).
    pub significance: f64,
    /// Shuffles per permutation test (at least 1).
    pub permutations: u32,
    /// The fewest values a segment may have (at least 2: a segment's
    /// spread needs two).
    pub min_segment: usize,
    /// The exponent of the distances, 0 < α < 2; 1 compares the means
    /// (and more: with α < 2 any change of distribution counts).
    pub alpha: f64,
    /// The seed of the shuffles.
    pub seed: u64,
}

impl Params {
    pub const DEFAULT_SIGNIFICANCE: f64 = 0.05;
    pub const DEFAULT_PERMUTATIONS: u32 = 199;
    pub const DEFAULT_MIN_SEGMENT: usize = 3;
    pub const DEFAULT_ALPHA: f64 = 1.0;
    pub const DEFAULT_SEED: u64 = 0x0dbe_7e12;

    /// The first parameter out of range, in words.
    pub fn check(&self) -> Result<(), String> {
        if !(self.significance > 0.0 && self.significance < 1.0) {
            return Err(format!(
                "the significance level must be above 0 and below 1, not {}",
                self.significance
            ));
        }
        // The smallest p-value a test can give is 1 / (permutations + 1).
        let needed = (1.0 / self.significance - 1.0).ceil().max(1.0);
        if f64::from(self.permutations) < needed {
            return Err(format!(
                "{} permutations can never give a p-value of {} or less: take at least {needed}",
                self.permutations, self.significance
            ));
        }
        if self.min_segment < 2 {
            return Err(format!(
                "a segment must hold at least 2 values, not {}",
                self.min_segment
            ));
        }
        if !(self.alpha > 0.0 && self.alpha < 2.0) {
            return Err(format!(
                "the exponent alpha must be above 0 and below 2, not {}",
                self.alpha
            ));
        }
        Ok(())
    }
}

impl Default for Params {
    fn default() -> Self {
        Params {
            significance: Self::DEFAULT_SIGNIFICANCE,
            permutations: Self::DEFAULT_PERMUTATIONS,
            min_segment: Self::DEFAULT_MIN_SEGMENT,
            alpha: Self::DEFAULT_ALPHA,
            seed: Self::DEFAULT_SEED,
        }
    }
}

impl Params {
    /// The fewest values in which a change point can be significant. A
    /// shuffle gives the same two groups as a split at `a` (of `n`) two
    /// times in C(n, a) (one group first or the other), so a split's
    /// p-value is at least about `1/(permutations + 1)` plus that chance.
    /// With the defaults: 8 (of 7 values, 3 + 4 give p ≥ 2/35 + 1/200).
    /// Fewer values can never give a change point; this many can, when
    /// the shuffles fall so (the chance is about the significance level).
    pub fn fewest_values(&self) -> usize {
        let m = self.min_segment.max(2);
        let floor = 1.0 / (f64::from(self.permutations) + 1.0);
        (2 * m..2 * m + 64)
            .find(|&n| {
                (m..=n - m).any(|a| {
                    let same = 2.0 / choose(n, a);
                    floor + same <= self.significance
                })
            })
            .unwrap_or(2 * m + 64)
    }
}

/// C(n, k) as a float, or some number above 1e18 when it is that large
/// (the caller only compares its inverse with a probability).
fn choose(n: usize, k: usize) -> f64 {
    let k = k.min(n - k);
    let mut c = 1.0;
    for i in 0..k {
        c = c * (n - i) as f64 / (i + 1) as f64;
        if c > 1e18 {
            break;
        }
    }
    c
}

/// A change point: the first value of a new segment.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChangePoint {
    /// The index (from 0) of the first value after the change.
    pub index: usize,
    /// The permutation test's p-value when the split was kept.
    pub p_value: f64,
    /// The energy statistic `q` of the split.
    pub statistic: f64,
}

/// The best split of one segment.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Split {
    /// Where the second part starts, from the segment's start.
    at: usize,
    q: f64,
}

/// The change points of `values`, in index order. Errors name a parameter
/// out of range or a value that is not a finite number.
pub fn e_divisive(values: &[f64], params: &Params) -> Result<Vec<ChangePoint>, String> {
    params.check()?;
    if let Some(i) = values.iter().position(|v| !v.is_finite()) {
        return Err(format!(
            "value {} (index {i}) is not a finite number",
            values[i]
        ));
    }
    let m = params.min_segment;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(params.seed);
    // The boundaries of the segments: 0, the change points, n.
    let mut bounds = vec![0, values.len()];
    let mut found: Vec<ChangePoint> = Vec::new();
    let mut shuffled = values.to_vec();
    // At most one change point per min_segment values.
    while let Some((at, q)) = best_over(values, &bounds, m, params.alpha) {
        // The permutation test: how often does a shuffle within the
        // segments give a split at least as strong?
        let r = params.permutations;
        let limit = params.significance * f64::from(r + 1);
        let mut as_large = 0u32;
        let mut done = 0u32;
        while done < r {
            shuffled.copy_from_slice(values);
            for w in bounds.windows(2) {
                shuffle(&mut shuffled[w[0]..w[1]], &mut rng);
            }
            let qr =
                best_over(&shuffled, &bounds, m, params.alpha).map_or(f64::NEG_INFINITY, |b| b.1);
            // Equal partitions give equal statistics up to rounding.
            if qr >= q - 1e-9 * q.abs() {
                as_large += 1;
            }
            done += 1;
            if f64::from(as_large + 1) > limit {
                break;
            }
        }
        let p = f64::from(as_large + 1) / f64::from(r + 1);
        if p > params.significance || done < r {
            break;
        }
        found.push(ChangePoint {
            index: at,
            p_value: p,
            statistic: q,
        });
        let pos = bounds.partition_point(|&b| b < at);
        bounds.insert(pos, at);
    }
    found.sort_by_key(|c| c.index);
    Ok(found)
}

/// The strongest split over the segments between `bounds`: (absolute
/// index where the new segment starts, statistic). None when no segment is
/// long enough to split.
fn best_over(values: &[f64], bounds: &[usize], m: usize, alpha: f64) -> Option<(usize, f64)> {
    bounds
        .windows(2)
        .filter_map(|w| best_split(&values[w[0]..w[1]], m, alpha).map(|s| (w[0] + s.at, s.q)))
        .fold(None, |best: Option<(usize, f64)>, c| match best {
            Some(b) if b.1 >= c.1 => Some(b),
            _ => Some(c),
        })
}

/// The split of `z` with the largest statistic, over every first part
/// `[0, τ)` and second part `[τ, κ)` of at least `m` values each; None when
/// `z` has fewer than `2·m` values.
///
/// Adds the points one at a time (the new point `c` is the last of every
/// second part that ends at `κ = c + 1`), keeping for every `τ` the sums of
/// the distances between the parts and within the second; the sums within
/// the first part grow the same way. O(n²) time, O(n) memory.
fn best_split(z: &[f64], m: usize, alpha: f64) -> Option<Split> {
    let n = z.len();
    if n < 2 * m || m < 2 {
        return None;
    }
    let dist = |a: f64, b: f64| {
        let d = (a - b).abs();
        if alpha == 1.0 { d } else { d.powf(alpha) }
    };
    // within_x[t]: the distances among z[0..t].
    let mut within_x = vec![0.0f64; n + 1];
    // For every τ: between[τ] the distances from z[0..τ] to z[τ..κ),
    // within_y[τ] those among z[τ..κ).
    let mut between = vec![0.0f64; n];
    let mut within_y = vec![0.0f64; n];
    // prefix[t]: the distances from z[0..t] to the new point.
    let mut prefix = vec![0.0f64; n + 1];
    let mut best: Option<Split> = None;
    for c in 0..n {
        for i in 0..c {
            prefix[i + 1] = prefix[i] + dist(z[i], z[c]);
        }
        let to_all = prefix[c];
        within_x[c + 1] = within_x[c] + to_all;
        for tau in 1..=c {
            between[tau] += prefix[tau];
            within_y[tau] += to_all - prefix[tau];
        }
        let kappa = c + 1;
        if kappa < 2 * m {
            continue;
        }
        for tau in m..=kappa - m {
            let a = tau as f64;
            let b = (kappa - tau) as f64;
            let e = 2.0 * between[tau] / (a * b)
                - within_x[tau] / (a * (a - 1.0) / 2.0)
                - within_y[tau] / (b * (b - 1.0) / 2.0);
            let q = a * b / (a + b) * e;
            if best.is_none_or(|s| q > s.q) {
                best = Some(Split { at: tau, q });
            }
        }
    }
    best
}

/// Fisher–Yates, with Lemire's multiply-shift for the bounded draws.
fn shuffle(v: &mut [f64], rng: &mut Xoshiro256PlusPlus) {
    for i in (1..v.len()).rev() {
        let j = ((u128::from(rng.next_u64()) * (i as u128 + 1)) >> 64) as usize;
        v.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic noise in [-1, 1) (a fixed generator, not the one of
    /// the shuffles).
    fn noise(n: usize, seed: u64) -> Vec<f64> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        (0..n)
            .map(|_| (rng.next_u64() >> 11) as f64 / (1u64 << 52) as f64 - 1.0)
            .collect()
    }

    fn indices(values: &[f64]) -> Vec<usize> {
        e_divisive(values, &Params::default())
            .unwrap()
            .iter()
            .map(|c| c.index)
            .collect()
    }

    #[test]
    fn a_step_at_run_7_of_12_is_one_change_point_at_index_6() {
        // 1000 ± 3%, then 1500 ± 3%: +50%.
        let values: Vec<f64> = noise(12, 1)
            .iter()
            .enumerate()
            .map(|(i, e)| if i < 6 { 1000.0 } else { 1500.0 } * (1.0 + 0.03 * e))
            .collect();
        let found = e_divisive(&values, &Params::default()).unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].index, 6);
        assert!(found[0].p_value <= 0.05, "{found:?}");
    }

    #[test]
    fn a_step_is_found_whatever_the_noise_draw() {
        // Every draw of ±5% noise with a 30% drop after index 6: exactly one
        // change point, at 6. (The 6-value segments on either side cannot
        // be split by chance: with at least 3 values a part, a shuffle gives
        // the same two groups two times in twenty, so no p-value is below 0.05.)
        for seed in 0..100 {
            let values: Vec<f64> = noise(12, seed)
                .iter()
                .enumerate()
                .map(|(i, e)| if i < 6 { 2000.0 } else { 1400.0 } * (1.0 + 0.05 * e))
                .collect();
            assert_eq!(indices(&values), vec![6], "noise seed {seed}: {values:?}");
        }
    }

    #[test]
    fn a_six_value_segment_is_never_split_even_by_a_clean_step() {
        // After the big step at 6, each side holds a perfect step of its
        // own; 3 + 3 can reach p = 2/20 at best, so neither is kept.
        let first = [100.0, 100.0, 100.0, 101.0, 101.0, 101.0];
        let second = [10.0, 10.0, 10.0, 11.0, 11.0, 11.0];
        let flat = [100.0; 6];
        let low = [10.0; 6];
        for (a, b) in [(first, low), (flat, second), (first, second)] {
            let values: Vec<f64> = a.iter().chain(b.iter()).copied().collect();
            assert_eq!(indices(&values), vec![6], "{values:?}");
        }
    }

    #[test]
    fn constant_with_noise_has_no_change_point() {
        let values: Vec<f64> = noise(12, 7)
            .iter()
            .map(|e| 500.0 * (1.0 + 0.05 * e))
            .collect();
        assert_eq!(indices(&values), Vec::<usize>::new(), "{values:?}");
        let long: Vec<f64> = noise(40, 8)
            .iter()
            .map(|e| 500.0 * (1.0 + 0.05 * e))
            .collect();
        assert_eq!(indices(&long), Vec::<usize>::new(), "{long:?}");
        // Exactly constant: every statistic is 0, the p-value 1.
        assert_eq!(indices(&[42.0; 12]), Vec::<usize>::new());
    }

    #[test]
    fn two_steps_are_two_change_points() {
        let values: Vec<f64> = noise(30, 3)
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let level = match i {
                    0..10 => 100.0,
                    10..20 => 140.0,
                    _ => 90.0,
                };
                level * (1.0 + 0.04 * e)
            })
            .collect();
        assert_eq!(indices(&values), vec![10, 20], "{values:?}");
    }

    #[test]
    fn a_step_back_up_is_found_too() {
        // A dip in the middle: down at 8, back at 16.
        let values: Vec<f64> = noise(24, 11)
            .iter()
            .enumerate()
            .map(|(i, e)| if (8..16).contains(&i) { 60.0 } else { 100.0 } * (1.0 + 0.03 * e))
            .collect();
        assert_eq!(indices(&values), vec![8, 16], "{values:?}");
    }

    #[test]
    fn the_same_series_gives_the_same_p_values() {
        let values: Vec<f64> = noise(16, 5)
            .iter()
            .enumerate()
            .map(|(i, e)| if i < 9 { 10.0 } else { 11.0 } + 0.3 * e)
            .collect();
        let a = e_divisive(&values, &Params::default()).unwrap();
        let b = e_divisive(&values, &Params::default()).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn short_series_and_min_segment() {
        // Fewer than 2 x min_segment values: nothing to split.
        assert!(indices(&[1.0, 1.0, 9.0, 9.0, 9.0]).is_empty());
        assert!(indices(&[]).is_empty());
        // With min_segment 2, a step of 2 + 2 is not significant either: a
        // shuffle gives the same two groups one time in three.
        let p = Params {
            min_segment: 2,
            ..Params::default()
        };
        assert!(e_divisive(&[1.0, 1.0, 9.0, 9.0], &p).unwrap().is_empty());
    }

    #[test]
    fn the_statistic_of_a_clean_split() {
        // X = {0, 0, 0}, Y = {1, 1, 1}: between sum 9, within 0;
        // E = 2·9/9 = 2, q = 9/6 · 2 = 3.
        let s = best_split(&[0.0, 0.0, 0.0, 1.0, 1.0, 1.0], 3, 1.0).unwrap();
        assert_eq!(s.at, 3);
        assert!((s.q - 3.0).abs() < 1e-12, "{s:?}");
        // The end κ is searched too: a level shift in the middle is found
        // at its start even with a return to the first level.
        let z = [0.0, 0.0, 0.0, 5.0, 5.0, 5.0, 0.0, 0.0, 0.0];
        let s = best_split(&z, 3, 1.0).unwrap();
        assert!(s.at == 3 || s.at == 6, "{s:?}");
    }

    /// The statistic straight from its definition, every τ and κ.
    fn best_split_by_definition(z: &[f64], m: usize, alpha: f64) -> Option<Split> {
        let d = |a: f64, b: f64| (a - b).abs().powf(alpha);
        let mut best: Option<Split> = None;
        for kappa in 2 * m..=z.len() {
            for tau in m..=kappa - m {
                let (x, y) = (&z[..tau], &z[tau..kappa]);
                let (a, b) = (x.len() as f64, y.len() as f64);
                let between: f64 = x
                    .iter()
                    .flat_map(|&p| y.iter().map(move |&q| d(p, q)))
                    .sum();
                let within = |v: &[f64]| -> f64 {
                    let mut s = 0.0;
                    for i in 0..v.len() {
                        for j in i + 1..v.len() {
                            s += d(v[i], v[j]);
                        }
                    }
                    s
                };
                let e = 2.0 * between / (a * b)
                    - within(x) / (a * (a - 1.0) / 2.0)
                    - within(y) / (b * (b - 1.0) / 2.0);
                let q = a * b / (a + b) * e;
                if best.is_none_or(|s| q > s.q) {
                    best = Some(Split { at: tau, q });
                }
            }
        }
        best
    }

    #[test]
    fn the_running_sums_give_the_statistic_of_the_definition() {
        for (seed, n, m, alpha) in [
            (1, 12, 3, 1.0),
            (2, 17, 2, 1.0),
            (3, 25, 4, 0.7),
            (4, 9, 3, 1.5),
        ] {
            let z: Vec<f64> = noise(n, seed)
                .iter()
                .enumerate()
                .map(|(i, e)| e + (i % 5) as f64 * 0.3)
                .collect();
            let fast = best_split(&z, m, alpha).unwrap();
            let slow = best_split_by_definition(&z, m, alpha).unwrap();
            assert_eq!(fast.at, slow.at, "seed {seed}");
            assert!(
                (fast.q - slow.q).abs() <= 1e-9 * slow.q.abs().max(1.0),
                "{fast:?} {slow:?}"
            );
        }
    }

    #[test]
    fn on_noise_alone_about_one_series_in_twenty_gets_a_change_point() {
        // The test's false-positive rate is its significance level: over
        // 200 series of 24 noisy values, the first split is kept about 10
        // times (a binomial 200 x 0.05 lies in 3..=19 with probability
        // above 0.99).
        let mut with = 0;
        for seed in 0..200 {
            if !indices(&noise(24, 1000 + seed)).is_empty() {
                with += 1;
            }
        }
        assert!((3..=19).contains(&with), "{with} of 200");
    }

    #[test]
    fn the_fewest_values_a_change_point_needs() {
        assert_eq!(Params::default().fewest_values(), 8);
        let p = |min_segment, significance| Params {
            min_segment,
            significance,
            ..Params::default()
        };
        // 7 values: at best 2/21 (2 + 5) or 2/35 (3 + 4); 8: 2/56 + 1/200.
        assert_eq!(p(2, 0.05).fewest_values(), 8);
        assert_eq!(p(3, 0.1).fewest_values(), 7);
        assert_eq!(p(5, 0.05).fewest_values(), 10);
        assert!(p(5, 0.05).check().is_ok());
        assert_eq!(choose(6, 3), 20.0);
        assert_eq!(choose(56, 53), 27720.0);
        // Huge segments: found at once.
        assert_eq!(p(1_000_000, 0.05).fewest_values(), 2_000_000);
        // One value fewer than the fewest: never; a few more: found.
        let step = |n: usize| -> Vec<f64> {
            (0..n)
                .map(|i| if i < 3 { 1.0 } else { 9.0 } + i as f64 * 0.001)
                .collect()
        };
        assert_eq!(indices(&step(10)), vec![3]);
        assert!(indices(&step(7)).is_empty());
    }

    #[test]
    fn bad_parameters_and_values_are_errors() {
        for p in [
            Params {
                significance: 0.0,
                ..Params::default()
            },
            Params {
                significance: 1.0,
                ..Params::default()
            },
            Params {
                permutations: 0,
                ..Params::default()
            },
            Params {
                permutations: 18,
                ..Params::default()
            },
            Params {
                min_segment: 1,
                ..Params::default()
            },
            Params {
                alpha: 2.0,
                ..Params::default()
            },
            Params {
                alpha: f64::NAN,
                ..Params::default()
            },
        ] {
            assert!(e_divisive(&[1.0; 8], &p).is_err(), "{p:?}");
        }
        assert!(e_divisive(&[1.0, f64::NAN, 2.0], &Params::default()).is_err());
    }

    #[test]
    fn alpha_other_than_one() {
        let values: Vec<f64> = noise(12, 21)
            .iter()
            .enumerate()
            .map(|(i, e)| if i < 6 { 1.0 } else { 2.0 } + 0.05 * e)
            .collect();
        let p = Params {
            alpha: 0.5,
            ..Params::default()
        };
        let found = e_divisive(&values, &p).unwrap();
        assert_eq!(found.iter().map(|c| c.index).collect::<Vec<_>>(), vec![6]);
    }
}
