//! Statistical inference over benchmark results: is a difference between
//! two sets of runs real, how many repeats would settle it, and how
//! precise one run's throughput is.
//!
//! - [`ratio_ci`]: a percentile bootstrap confidence interval (Efron &
//!   Tibshirani, *An Introduction to the Bootstrap*, 1993, ch. 13) for the
//!   ratio of the medians, candidate / baseline, of two samples (a run's
//!   value per repeat). Each resample draws each side with replacement
//!   from its own values; the random generator is seeded, so the same
//!   values and seed give the same interval.
//! - [`median_ci`]: the same for the median of one sample (how precise a
//!   cell's value is, e.g. to decide whether it needs more repeats).
//! - [`mann_whitney`]: the Mann-Whitney U (Wilcoxon rank-sum) test,
//!   two-sided. Its p-value is exact (the permutation distribution of the
//!   rank sum, ties given their mean rank) up to [`EXACT_LIMIT`] values in
//!   all, and the normal approximation with tie and continuity correction
//!   beyond.
//! - [`compare_samples`]: both, and a verdict: higher, lower, no
//!   difference (the interval lies within the smallest change that
//!   matters), unsettled (too noisy) or too few repeats; with
//!   [`repeats_to_settle`], the repeats per side that would settle it.
//! - [`batch_means_ci`]: the confidence interval of the mean of a
//!   series whose values are correlated in time (a run's throughput per
//!   interval), by non-overlapping batch means (Schmeiser 1982; Law &
//!   Kelton, *Simulation Modeling and Analysis*, ch. 9) and Student's t.

use crate::median::median_in_place;
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

/// The bootstrap's default number of resamples.
pub const DEFAULT_RESAMPLES: usize = 10_000;
/// The bootstrap's default seed.
pub const DEFAULT_SEED: u64 = 0x0064_626d_6574_6572; // "dbmeter" in ASCII
/// Up to this many values in all, [`mann_whitney`]'s p-value is exact.
pub const EXACT_LIMIT: usize = 60;
/// [`repeats_to_settle`] says at most this.
pub const MAX_REPEATS: usize = 10_000;
/// [`batch_means_ci`] needs at least this many values (3 batches).
pub const MIN_BATCH_VALUES: usize = 9;

/// A confidence interval around an estimate.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
    /// The confidence level, e.g. 0.95.
    pub level: f64,
}

impl Interval {
    /// True when `x` lies inside the interval (bounds included).
    pub fn contains(&self, x: f64) -> bool {
        self.low <= x && x <= self.high
    }

    /// The interval's width relative to its estimate, (high - low) /
    /// |estimate| (0.04 for ±2%); infinite for an estimate of 0.
    pub fn relative_width(&self) -> f64 {
        let w = self.high - self.low;
        if w == 0.0 {
            0.0
        } else {
            w / self.estimate.abs()
        }
    }
}

/// A uniform index below `n` (Lemire's multiply-shift; the bias, n / 2^64,
/// is nothing at these sizes).
fn index(rng: &mut Xoshiro256PlusPlus, n: usize) -> usize {
    ((u128::from(rng.next_u64()) * n as u128) >> 64) as usize
}

/// The `q` quantile (0..=1) of sorted values, interpolating linearly
/// between the two nearest order statistics.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

fn usable(v: &[f64]) -> bool {
    !v.is_empty() && v.iter().all(|x| x.is_finite())
}

/// True for a level strictly between 0 and 1 (NaN is not).
fn valid_level(level: f64) -> bool {
    level > 0.0 && level < 1.0
}

/// The percentile bootstrap interval, at `level`, of the median of one
/// sample (a cell's values over its repeats), as [`ratio_ci`] draws it.
/// None when it is empty, holds a value that is not finite, or `level` is
/// not in (0, 1).
pub fn median_ci(values: &[f64], level: f64, resamples: usize, seed: u64) -> Option<Interval> {
    if !usable(values) || !valid_level(level) {
        return None;
    }
    let estimate = median_in_place(&mut values.to_vec())?;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut v = vec![0.0; values.len()];
    let mut medians = Vec::with_capacity(resamples.max(1));
    for _ in 0..resamples.max(1) {
        for x in v.iter_mut() {
            *x = values[index(&mut rng, values.len())];
        }
        medians.push(median_in_place(&mut v)?);
    }
    medians.sort_by(f64::total_cmp);
    let tail = (1.0 - level) / 2.0;
    Some(Interval {
        estimate,
        low: quantile(&medians, tail),
        high: quantile(&medians, 1.0 - tail),
        level,
    })
}

/// The percentile bootstrap interval, at `level` (e.g. 0.95), of
/// median(candidate) / median(baseline), from `resamples` resamples drawn
/// with a generator seeded with `seed`. The estimate is the ratio of the
/// samples' own medians. None when a side is empty, a value is not finite
/// or not above 0 on the baseline's side, or `level` is not in (0, 1).
pub fn ratio_ci(
    baseline: &[f64],
    candidate: &[f64],
    level: f64,
    resamples: usize,
    seed: u64,
) -> Option<Interval> {
    if !usable(baseline)
        || !usable(candidate)
        || baseline.iter().any(|&x| x <= 0.0)
        || !valid_level(level)
    {
        return None;
    }
    let estimate =
        median_in_place(&mut candidate.to_vec())? / median_in_place(&mut baseline.to_vec())?;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut b = vec![0.0; baseline.len()];
    let mut c = vec![0.0; candidate.len()];
    let mut ratios = Vec::with_capacity(resamples.max(1));
    for _ in 0..resamples.max(1) {
        for x in b.iter_mut() {
            *x = baseline[index(&mut rng, baseline.len())];
        }
        for x in c.iter_mut() {
            *x = candidate[index(&mut rng, candidate.len())];
        }
        ratios.push(median_in_place(&mut c)? / median_in_place(&mut b)?);
    }
    ratios.sort_by(f64::total_cmp);
    let tail = (1.0 - level) / 2.0;
    Some(Interval {
        estimate,
        low: quantile(&ratios, tail),
        high: quantile(&ratios, 1.0 - tail),
        level,
    })
}

/// The result of a Mann-Whitney U test.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankTest {
    /// U of the candidate: the pairs (baseline, candidate) in which the
    /// candidate's value is the larger, ties counting one half.
    pub u: f64,
    /// The two-sided p-value.
    pub p_value: f64,
    /// True when `p_value` is exact, false for the normal approximation.
    pub exact: bool,
}

/// Each value's rank among all (1-based), ties given their mean rank,
/// doubled so that it is a whole number.
fn doubled_ranks(all: &[f64]) -> Vec<u64> {
    let mut order: Vec<usize> = (0..all.len()).collect();
    order.sort_by(|&a, &b| all[a].total_cmp(&all[b]));
    let mut ranks = vec![0u64; all.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && all[order[j + 1]] == all[order[i]] {
            j += 1;
        }
        // Ranks i+1 ..= j+1: their mean, doubled, is i + j + 2.
        for &k in &order[i..=j] {
            ranks[k] = (i + j + 2) as u64;
        }
        i = j + 1;
    }
    ranks
}

/// The two-sided Mann-Whitney U test of `baseline` against `candidate`:
/// do values of one tend to be larger than the other's? Exact (the
/// permutation distribution of the rank sum given the ties) when the two
/// hold at most [`EXACT_LIMIT`] values together. None when a side is
/// empty or holds a value that is not finite.
pub fn mann_whitney(baseline: &[f64], candidate: &[f64]) -> Option<RankTest> {
    if !usable(baseline) || !usable(candidate) {
        return None;
    }
    let (n1, n2) = (baseline.len(), candidate.len());
    let all: Vec<f64> = baseline.iter().chain(candidate).copied().collect();
    let ranks = doubled_ranks(&all);
    let n = n1 + n2;
    // The candidate's rank sum, doubled; its mean under the null
    // hypothesis is n2 (n + 1).
    let w: u64 = ranks[n1..].iter().sum();
    let u = w as f64 / 2.0 - (n2 * (n2 + 1)) as f64 / 2.0;
    let mean2 = (n2 * (n + 1)) as i64;
    let observed = (w as i64 - mean2).abs();
    if n <= EXACT_LIMIT {
        // counts[k][s]: the subsets of k of the values seen so far whose
        // doubled ranks sum to s.
        let total: u64 = ranks.iter().sum();
        let width = total as usize + 1;
        let mut counts = vec![0.0f64; (n2 + 1) * width];
        counts[0] = 1.0;
        for (seen, &r) in ranks.iter().enumerate() {
            let r = r as usize;
            for k in (1..=n2.min(seen + 1)).rev() {
                for s in (r..width).rev() {
                    let from = counts[(k - 1) * width + s - r];
                    if from != 0.0 {
                        counts[k * width + s] += from;
                    }
                }
            }
        }
        let row = &counts[n2 * width..];
        let all_subsets: f64 = row.iter().sum();
        let extreme: f64 = row
            .iter()
            .enumerate()
            .filter(|&(s, _)| (s as i64 - mean2).abs() >= observed)
            .map(|(_, c)| c)
            .sum();
        return Some(RankTest {
            u,
            p_value: (extreme / all_subsets).min(1.0),
            exact: true,
        });
    }
    // Normal approximation: the variance of U with the tie correction.
    let (n1f, n2f, nf) = (n1 as f64, n2 as f64, n as f64);
    let mut ties = 0.0;
    let mut sorted = all.clone();
    sorted.sort_by(f64::total_cmp);
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i;
        while j + 1 < sorted.len() && sorted[j + 1] == sorted[i] {
            j += 1;
        }
        let t = (j - i + 1) as f64;
        ties += t * t * t - t;
        i = j + 1;
    }
    let var = n1f * n2f / 12.0 * ((nf + 1.0) - ties / (nf * (nf - 1.0)));
    let p_value = if var <= 0.0 {
        1.0
    } else {
        let dev = ((u - n1f * n2f / 2.0).abs() - 0.5).max(0.0);
        let z = dev / var.sqrt();
        (2.0 * (1.0 - standard_normal_cdf(z))).min(1.0)
    };
    Some(RankTest {
        u,
        p_value,
        exact: false,
    })
}

fn standard_normal() -> Normal {
    // Mean 0 and standard deviation 1 are valid parameters.
    Normal::standard()
}

fn standard_normal_cdf(z: f64) -> f64 {
    standard_normal().cdf(z)
}

/// The standard normal quantile at probability `p` (0 < p < 1).
pub fn normal_quantile(p: f64) -> f64 {
    standard_normal().inverse_cdf(p)
}

/// Student's t quantile at probability `p` with `df` degrees of freedom;
/// None for df 0 or p outside (0, 1).
pub fn t_quantile(p: f64, df: f64) -> Option<f64> {
    if !valid_level(p) {
        return None;
    }
    let t = StudentsT::new(0.0, 1.0, df).ok()?;
    Some(t.inverse_cdf(p))
}

/// The smallest number of repeats per side with which the two-sided
/// Mann-Whitney test can reach significance at `level` at all (with n and
/// n runs, its smallest p-value is 2 / C(2n, n)): 4 at 95%, 5 at 99%.
pub fn min_repeats(level: f64) -> usize {
    let alpha = 1.0 - level;
    let mut n = 1usize;
    loop {
        // C(2n, n), as a float: exact enough for the comparison.
        let mut c = 1.0f64;
        for i in 0..n {
            c = c * (2 * n - i) as f64 / (i + 1) as f64;
        }
        if 2.0 / c < alpha || n >= MAX_REPEATS {
            return n;
        }
        n += 1;
    }
}

/// The sample variance of the logarithms of some values above 0; None for
/// fewer than two.
fn log_variance(v: &[f64]) -> Option<f64> {
    if v.len() < 2 || v.iter().any(|&x| x <= 0.0 || !x.is_finite()) {
        return None;
    }
    let logs: Vec<f64> = v.iter().map(|x| x.ln()).collect();
    let mean = logs.iter().sum::<f64>() / logs.len() as f64;
    Some(logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / (logs.len() - 1) as f64)
}

/// How many repeats per side would likely settle the comparison of
/// `baseline` and `candidate`: enough that the interval of the ratio
/// either excludes 1 (if the observed ratio is the true one) or fits
/// within 1 ± `min_effect` (a fraction, e.g. 0.05), whichever needs fewer.
///
/// From the spread of each side's logarithms (s1², s2²) and the observed
/// log ratio e, with m = ln(1 + min_effect), the half-width wanted is
/// h = max(|e|, m - |e|), and n = (z s / h)² x π/2, where s² = s1² + s2²,
/// z is the normal quantile of the level and π/2 the cost of medians
/// over means for normal data. The answer is at least [`min_repeats`]
/// and one more than the larger side has now, at most [`MAX_REPEATS`].
/// With fewer than two values on a side (no spread to go by), it is
/// [`min_repeats`] (or one more than now).
pub fn repeats_to_settle(
    baseline: &[f64],
    candidate: &[f64],
    level: f64,
    min_effect: f64,
) -> usize {
    let now = baseline.len().max(candidate.len());
    let floor = min_repeats(level).max(now + 1);
    let (Some(v1), Some(v2)) = (log_variance(baseline), log_variance(candidate)) else {
        return floor.min(MAX_REPEATS);
    };
    let ratio = match (
        median_in_place(&mut candidate.to_vec()),
        median_in_place(&mut baseline.to_vec()),
    ) {
        (Some(c), Some(b)) if b > 0.0 && c > 0.0 => c / b,
        _ => return floor.min(MAX_REPEATS),
    };
    let e = ratio.ln().abs();
    let m = min_effect.max(0.0).ln_1p();
    let h = e.max(m - e);
    let z = normal_quantile(1.0 - (1.0 - level) / 2.0);
    let s2 = v1 + v2;
    if h <= 0.0 {
        return if s2 == 0.0 { floor } else { MAX_REPEATS };
    }
    let n = (z * z * s2 / (h * h) * std::f64::consts::FRAC_PI_2).ceil();
    if !n.is_finite() || n >= MAX_REPEATS as f64 {
        return MAX_REPEATS;
    }
    (n as usize).max(floor).min(MAX_REPEATS)
}

/// What a comparison of two samples says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// The candidate's values are significantly higher.
    Higher,
    /// The candidate's values are significantly lower.
    Lower,
    /// Not significant, and the interval lies within 1 ± the smallest
    /// change that matters.
    NoDifference,
    /// Not significant, and the interval is too wide to rule out a change
    /// that matters: more repeats are needed.
    TooNoisy,
    /// A side has fewer repeats than the test needs to ever be
    /// significant ([`min_repeats`]).
    TooFewRepeats,
}

/// How [`compare_samples`] judges.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Judging {
    /// Confidence level of the interval, and 1 - the test's significance
    /// level; e.g. 0.95.
    pub level: f64,
    /// The smallest relative change that matters (e.g. 0.05): an interval
    /// within 1 ± this is "no difference".
    pub min_effect: f64,
    pub resamples: usize,
    pub seed: u64,
}

impl Default for Judging {
    fn default() -> Self {
        Judging {
            level: 0.95,
            min_effect: 0.05,
            resamples: DEFAULT_RESAMPLES,
            seed: DEFAULT_SEED,
        }
    }
}

/// Two samples compared: the interval of the ratio of medians, the rank
/// test, and the verdict.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SampleComparison {
    /// median(candidate) / median(baseline), with its bootstrap interval.
    pub ratio: Interval,
    pub test: RankTest,
    pub change: Change,
    /// Repeats per side that would likely settle an unsettled comparison
    /// ([`repeats_to_settle`]); None when it is settled.
    pub repeats_needed: Option<usize>,
}

/// Compares a candidate's values with a baseline's (a value per repeat).
/// A change is significant when the test's p-value is below 1 - level
/// and the interval of the ratio excludes 1: both must agree. None when
/// [`ratio_ci`] or [`mann_whitney`] cannot be computed (an empty side, a
/// value not finite, a baseline value not above 0).
pub fn compare_samples(
    baseline: &[f64],
    candidate: &[f64],
    how: &Judging,
) -> Option<SampleComparison> {
    let ratio = ratio_ci(baseline, candidate, how.level, how.resamples, how.seed)?;
    let test = mann_whitney(baseline, candidate)?;
    let alpha = 1.0 - how.level;
    let min = min_repeats(how.level);
    let significant = test.p_value < alpha && !ratio.contains(1.0);
    let change = if significant {
        if ratio.estimate > 1.0 {
            Change::Higher
        } else {
            Change::Lower
        }
    } else if baseline.len() < min || candidate.len() < min {
        Change::TooFewRepeats
    } else if ratio.low >= 1.0 - how.min_effect && ratio.high <= 1.0 + how.min_effect {
        Change::NoDifference
    } else {
        Change::TooNoisy
    };
    let repeats_needed = matches!(change, Change::TooNoisy | Change::TooFewRepeats)
        .then(|| repeats_to_settle(baseline, candidate, how.level, how.min_effect));
    Some(SampleComparison {
        ratio,
        test,
        change,
        repeats_needed,
    })
}

/// A confidence interval for the mean of a series by batch means.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct BatchMeans {
    /// The mean of the batch means, with its interval.
    pub mean: Interval,
    /// How many batches, and values per batch.
    pub batches: usize,
    pub batch_size: usize,
    /// Values left out at the start so that the batches are equal.
    pub skipped: usize,
}

/// The confidence interval, at `level`, of the mean of `values`, a series
/// in time order whose neighbours may be correlated (throughput per
/// interval). Non-overlapping batches of b = floor(sqrt(n)) values each,
/// k = floor(n / b) of them (the n - k b earliest values, nearest the
/// warm-up, are left out); the interval is the mean of the batch means ±
/// t(k - 1) x their standard deviation / sqrt(k). Batches long enough
/// are nearly independent even when the values are not, which a plain
/// standard error over the values would wrongly assume. None with fewer
/// than [`MIN_BATCH_VALUES`] values, a value not finite, or a level
/// outside (0, 1).
pub fn batch_means_ci(values: &[f64], level: f64) -> Option<BatchMeans> {
    let n = values.len();
    if n < MIN_BATCH_VALUES || !usable(values) || !valid_level(level) {
        return None;
    }
    let b = (n as f64).sqrt().floor() as usize;
    let k = n / b;
    let skipped = n - k * b;
    let means: Vec<f64> = values[skipped..]
        .chunks(b)
        .map(|c| c.iter().sum::<f64>() / b as f64)
        .collect();
    let kf = k as f64;
    let mean = means.iter().sum::<f64>() / kf;
    let var = means.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / (kf - 1.0);
    let t = t_quantile(1.0 - (1.0 - level) / 2.0, kf - 1.0)?;
    let half = t * (var / kf).sqrt();
    Some(BatchMeans {
        mean: Interval {
            estimate: mean,
            low: mean - half,
            high: mean + half,
            level,
        },
        batches: k,
        batch_size: b,
        skipped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn mann_whitney_exact_values() {
        // Fully separated 5 vs 5: the two most extreme of C(10,5) = 252.
        let b = [10.0, 11.0, 12.0, 13.0, 14.0];
        let c = [20.0, 21.0, 22.0, 23.0, 24.0];
        let t = mann_whitney(&b, &c).unwrap();
        assert!(t.exact);
        assert!(close(t.p_value, 2.0 / 252.0, 1e-12), "{}", t.p_value);
        assert_eq!(t.u, 25.0);
        assert_eq!(mann_whitney(&c, &b).unwrap().u, 0.0);
        // 3 vs 3 fully separated: 2 / C(6,3) = 0.1.
        let t = mann_whitney(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).unwrap();
        assert!(close(t.p_value, 0.1, 1e-12));
        // Interleaved: no evidence.
        let t = mann_whitney(&[1.0, 3.0, 5.0, 7.0], &[2.0, 4.0, 6.0, 8.0]).unwrap();
        assert!(t.p_value > 0.5, "{}", t.p_value);
        // All equal: p = 1.
        let t = mann_whitney(&[5.0; 5], &[5.0; 5]).unwrap();
        assert!(close(t.p_value, 1.0, 1e-12));
        // One swapped pair in 4 vs 4: U = 15 of 16; P(U >= 15) = 2/70 each
        // side, so p = 4 / 70.
        let t = mann_whitney(&[1.0, 2.0, 3.0, 5.0], &[4.0, 6.0, 7.0, 8.0]).unwrap();
        assert_eq!(t.u, 15.0);
        assert!(close(t.p_value, 4.0 / 70.0, 1e-12), "{}", t.p_value);
        assert!(mann_whitney(&[], &[1.0]).is_none());
        assert!(mann_whitney(&[f64::NAN], &[1.0]).is_none());
    }

    #[test]
    fn mann_whitney_with_ties_counts_the_permutations() {
        // b = {1, 1}, c = {1, 2}: doubled ranks 4,4,4,8 (ties at mean
        // rank 2). The rank sums of the 6 subsets of 2: three {4,4} = 8
        // and three {4,8} = 12; mean 10, observed 12: all six are as
        // extreme, p = 1.
        let t = mann_whitney(&[1.0, 1.0], &[1.0, 2.0]).unwrap();
        assert!(close(t.p_value, 1.0, 1e-12), "{}", t.p_value);
        // Separated but with ties inside the sides: still the extreme.
        let t = mann_whitney(&[1.0, 1.0, 1.0, 1.0, 1.0], &[2.0, 2.0, 2.0, 2.0, 2.0]).unwrap();
        assert!(close(t.p_value, 2.0 / 252.0, 1e-12), "{}", t.p_value);
    }

    #[test]
    fn mann_whitney_normal_approximation_agrees_with_exact() {
        // 31 vs 31 (approximate) against 30 vs 30 (exact) of the same
        // shift: both small, and of the same order.
        let b: Vec<f64> = (0..31).map(|i| i as f64).collect();
        let c: Vec<f64> = (0..31).map(|i| i as f64 + 8.0).collect();
        let approx = mann_whitney(&b, &c).unwrap();
        assert!(!approx.exact);
        let exact = mann_whitney(&b[..30], &c[..30]).unwrap();
        assert!(exact.exact);
        assert!(approx.p_value < 0.2 && exact.p_value < 0.2);
        assert!(
            (approx.p_value / exact.p_value).ln().abs() < 1.0,
            "{} {}",
            approx.p_value,
            exact.p_value
        );
    }

    #[test]
    fn min_repeats_per_level() {
        assert_eq!(min_repeats(0.95), 4);
        assert_eq!(min_repeats(0.99), 5);
        assert_eq!(min_repeats(0.8), 3);
    }

    #[test]
    fn quantiles() {
        assert!(close(t_quantile(0.975, 2.0).unwrap(), 4.302_653, 1e-5));
        assert!(close(t_quantile(0.975, 30.0).unwrap(), 2.042_272, 1e-5));
        assert!(close(normal_quantile(0.975), 1.959_964, 1e-5));
        assert!(t_quantile(1.0, 3.0).is_none());
        assert!(t_quantile(0.5, 0.0).is_none());
    }

    #[test]
    fn bootstrap_is_reproducible_and_brackets() {
        let b = [100.0, 101.0, 99.0, 100.5, 99.5];
        let c = [90.0, 91.0, 89.0, 90.5, 89.5];
        let x = ratio_ci(&b, &c, 0.95, 2000, 7).unwrap();
        assert_eq!(x, ratio_ci(&b, &c, 0.95, 2000, 7).unwrap());
        assert!(close(x.estimate, 0.9, 1e-12));
        assert!(x.high < 1.0 && x.low > 0.85 && x.contains(0.9), "{x:?}");
        // The ratio of medians' interval cannot go past the extremes.
        assert!(x.low >= 89.0 / 101.0 && x.high <= 91.0 / 99.0, "{x:?}");
        // Same values: the interval holds 1.
        let y = ratio_ci(&b, &b, 0.95, 2000, 7).unwrap();
        assert!(y.contains(1.0), "{y:?}");
        // A higher level widens it.
        let z = ratio_ci(&b, &b, 0.99, 2000, 7).unwrap();
        assert!(z.low <= y.low && z.high >= y.high);
        assert!(ratio_ci(&[0.0, 1.0], &c, 0.95, 10, 1).is_none());
        assert!(ratio_ci(&b, &c, 1.0, 10, 1).is_none());
        assert!(ratio_ci(&[], &c, 0.95, 10, 1).is_none());
    }

    #[test]
    fn median_interval_of_one_sample() {
        let v = [10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0];
        let m = median_ci(&v, 0.95, 4000, 1).unwrap();
        assert_eq!(m.estimate, 13.0);
        assert!(
            m.low >= 10.0 && m.low < 13.0 && m.high > 13.0 && m.high <= 16.0,
            "{m:?}"
        );
        assert!((m.relative_width() - (m.high - m.low) / 13.0).abs() < 1e-12);
        let c = median_ci(&[5.0; 4], 0.95, 100, 1).unwrap();
        assert_eq!(c.relative_width(), 0.0);
        assert!(median_ci(&[], 0.95, 10, 1).is_none());
    }

    #[test]
    fn verdicts() {
        let how = Judging::default();
        let b = [100.0, 101.0, 99.0, 100.5, 99.5];
        let slow = [90.0, 91.0, 89.0, 90.5, 89.5];
        let r = compare_samples(&b, &slow, &how).unwrap();
        assert_eq!(r.change, Change::Lower);
        assert!(close(r.test.p_value, 2.0 / 252.0, 1e-12));
        assert_eq!(r.repeats_needed, None);
        let fast = slow.map(|x| x * 1.25);
        assert_eq!(
            compare_samples(&b, &fast, &how).unwrap().change,
            Change::Higher
        );
        // Interleaved within 1%: no difference.
        let same = [100.2, 100.7, 99.2, 100.1, 99.9];
        let r = compare_samples(&b, &same, &how).unwrap();
        assert_eq!(r.change, Change::NoDifference, "{r:?}");
        // Wide spread, interleaved: too noisy, with a count above 5.
        let wide_b = [60.0, 140.0, 100.0, 80.0, 120.0];
        let wide_c = [65.0, 135.0, 95.0, 85.0, 125.0];
        let r = compare_samples(&wide_b, &wide_c, &how).unwrap();
        assert_eq!(r.change, Change::TooNoisy, "{r:?}");
        assert!(r.repeats_needed.unwrap() > 5, "{r:?}");
        // Three a side can never reach 5%.
        let r = compare_samples(&b[..3], &slow[..3], &how).unwrap();
        assert_eq!(r.change, Change::TooFewRepeats);
        assert_eq!(r.repeats_needed, Some(4));
    }

    #[test]
    fn repeats_grow_with_noise_and_shrink_with_the_effect() {
        let b = [100.0, 104.0, 96.0, 102.0, 98.0];
        let c = [101.0, 105.0, 97.0, 103.0, 99.0];
        let n1 = repeats_to_settle(&b, &c, 0.95, 0.05);
        let wide: Vec<f64> = b.iter().map(|x| (x - 100.0) * 3.0 + 100.0).collect();
        let n2 = repeats_to_settle(&wide, &c, 0.95, 0.05);
        assert!(n2 > n1, "{n1} {n2}");
        assert!(n1 >= 6);
        // One run a side: the test's minimum.
        assert_eq!(repeats_to_settle(&[1.0], &[2.0], 0.95, 0.05), 4);
        assert_eq!(repeats_to_settle(&[1.0; 3], &[1.0; 3], 0.95, 0.05), 4);
    }

    /// A series with strong positive autocorrelation (AR(1), phi 0.9)
    /// from a seeded generator.
    fn ar1(n: usize, seed: u64) -> Vec<f64> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut x = 0.0;
        (0..n)
            .map(|_| {
                // Uniform noise in -1..1.
                let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
                x = 0.9 * x + u;
                1000.0 + 10.0 * x
            })
            .collect()
    }

    #[test]
    fn batch_means_layout_and_width() {
        let v: Vec<f64> = (0..10).map(|i| i as f64).collect();
        let bm = batch_means_ci(&v, 0.95).unwrap();
        // b = 3, k = 3, the first value left out: batches 1-3, 4-6, 7-9.
        assert_eq!((bm.batch_size, bm.batches, bm.skipped), (3, 3, 1));
        assert!(close(bm.mean.estimate, 5.0, 1e-12));
        // Batch means 2, 5, 8: sd 3, half-width t(2) x 3 / sqrt(3).
        let half = 4.302_653 * 3.0 / 3f64.sqrt();
        assert!(close(bm.mean.high - 5.0, half, 1e-4), "{bm:?}");
        assert!(batch_means_ci(&v[..8], 0.95).is_none());
        // Constant: a zero-width interval.
        let c = batch_means_ci(&[7.0; 16], 0.95).unwrap();
        assert_eq!((c.mean.low, c.mean.high), (7.0, 7.0));
        // Autocorrelated: wider than the naive interval over the values.
        let s = ar1(400, 3);
        let bm = batch_means_ci(&s, 0.95).unwrap();
        let n = s.len() as f64;
        let m = s.iter().sum::<f64>() / n;
        let sd = (s.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
        let naive = 1.96 * sd / n.sqrt();
        assert!(
            bm.mean.high - bm.mean.estimate > 2.0 * naive,
            "{bm:?} {naive}"
        );
        assert!(bm.mean.contains(m) || (bm.mean.estimate - m).abs() < 1.0);
    }
}
