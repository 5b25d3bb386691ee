//! When a series has become steady: the Marginal Standard Error Rule
//! (MSER, White 1997; White, Cobb and Spratt 2000), applied as the series
//! grows.
//!
//! For a series `x[0..n]` and a candidate truncation point `d`, MSER
//! scores the observations kept, `x[d..n]`, by their sum of squared
//! deviations from their own mean divided by `(n - d)²`: the squared
//! standard error of their mean, up to a constant. The truncation point
//! is the `d` with the lowest score. Dropping a transient at the start
//! lowers the score (the deviations shrink); dropping steady observations
//! raises it (fewer observations, same spread).
//!
//! As in the rule's own practice (Franklin and White 2008), `d` is looked
//! for in the first half of the series only, and a minimum that falls on
//! the half means the series is still moving: too short to call steady.
//!
//! With few observations MSER alone may keep a series that still climbs
//! (a rise that speeds up spreads the kept part as much as the whole):
//! what it keeps must also show no monotonic trend by the Mann–Kendall
//! test (Mann 1945, Kendall 1975; ties corrected) at the 5% level.
//! [`steady_since`] answers after each new observation: the point from
//! which the series is steady, or `None` while it is not yet.

/// The fewest observations [`steady_since`] decides on.
pub const MIN_OBSERVATIONS: usize = 10;

/// MSER's truncation point of `series` over `d` in `0..=series.len() / 2`
/// (the first of equal minima), with its score; `None` for an empty
/// series.
pub fn mser_truncation(series: &[f64]) -> Option<(usize, f64)> {
    let n = series.len();
    if n == 0 {
        return None;
    }
    // Sums over the tail x[d..], built from the end so that each d costs
    // one step.
    let mut suffix_sum = vec![0.0; n + 1];
    let mut suffix_sq = vec![0.0; n + 1];
    for i in (0..n).rev() {
        suffix_sum[i] = suffix_sum[i + 1] + series[i];
        suffix_sq[i] = suffix_sq[i + 1] + series[i] * series[i];
    }
    let mut best: Option<(usize, f64)> = None;
    for d in 0..=n / 2 {
        let k = (n - d) as f64;
        let mean = suffix_sum[d] / k;
        // Sum of squared deviations; rounding may leave it just below 0.
        let ss = (suffix_sq[d] - k * mean * mean).max(0.0);
        let score = ss / (k * k);
        if best.is_none_or(|(_, b)| score < b * (1.0 - 1e-12)) {
            best = Some((d, score));
        }
    }
    best
}

/// The two-sided critical value of the standard normal at the 5% level.
const Z_5_PERCENT: f64 = 1.959_963_985;

/// The Mann–Kendall statistic of `series` as a standard normal score
/// (continuity corrected, its variance corrected for ties): above
/// [`Z_5_PERCENT`] in absolute value, the series has a monotonic trend at
/// the 5% level. 0 for fewer than 3 observations or all equal.
pub fn mann_kendall_z(series: &[f64]) -> f64 {
    let n = series.len();
    if n < 3 {
        return 0.0;
    }
    let mut s = 0i64;
    for (i, a) in series.iter().enumerate() {
        for b in &series[i + 1..] {
            s += match b.partial_cmp(a) {
                Some(std::cmp::Ordering::Greater) => 1,
                Some(std::cmp::Ordering::Less) => -1,
                _ => 0,
            };
        }
    }
    let mut sorted = series.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mut ties = 0.0;
    let mut i = 0;
    while i < n {
        let mut j = i + 1;
        while j < n && sorted[j] == sorted[i] {
            j += 1;
        }
        let t = (j - i) as f64;
        ties += t * (t - 1.0) * (2.0 * t + 5.0);
        i = j;
    }
    let nf = n as f64;
    let var = (nf * (nf - 1.0) * (2.0 * nf + 5.0) - ties) / 18.0;
    if var <= 0.0 || s == 0 {
        return 0.0;
    }
    let s = s as f64;
    (s - s.signum()) / var.sqrt()
}

/// The index from which `series` is steady, or `None` while it is not:
/// fewer than [`MIN_OBSERVATIONS`], no activity at all (every value 0),
/// MSER's truncation point on the half of the series, or a trend in what
/// it keeps (the series is still moving).
pub fn steady_since(series: &[f64]) -> Option<usize> {
    let n = series.len();
    if n < MIN_OBSERVATIONS || series.iter().all(|v| *v == 0.0) {
        return None;
    }
    let (d, _) = mser_truncation(series)?;
    (d < n / 2 && mann_kendall_z(&series[d..]).abs() <= Z_5_PERCENT).then_some(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slow_start_is_cut_where_it_ends() {
        let mut s = vec![10.0; 5];
        s.extend([100.0, 101.0, 99.0, 100.0, 100.5]);
        // 10 observations, half of them the transient: still moving.
        assert_eq!(steady_since(&s), None);
        s.push(100.0);
        assert_eq!(steady_since(&s), None, "5 is the half of 11");
        s.push(99.5);
        assert_eq!(steady_since(&s), Some(5));
    }

    #[test]
    fn a_steady_series_is_steady_from_the_start_or_near_it() {
        let s: Vec<f64> = (0..12)
            .map(|i| 100.0 + if i % 2 == 0 { 1.0 } else { -1.0 })
            .collect();
        let d = steady_since(&s).unwrap();
        assert!(d <= 2, "{d}");
    }

    #[test]
    fn a_rising_series_is_not_steady() {
        let s: Vec<f64> = (0..30).map(|i| 10.0 * i as f64).collect();
        assert_eq!(steady_since(&s), None);
    }

    #[test]
    fn a_rise_that_speeds_up_is_not_steady() {
        // MSER alone keeps all of it (d = 0).
        let s = [
            100.0, 100.0, 120.0, 120.0, 140.0, 160.0, 160.0, 200.0, 200.0, 260.0,
        ];
        assert_eq!(mser_truncation(&s).map(|(d, _)| d), Some(0));
        assert_eq!(steady_since(&s), None);
    }

    #[test]
    fn mann_kendall_scores() {
        // n = 10 rising: S = 45, var = 10 * 9 * 25 / 18 = 125.
        let up: Vec<f64> = (0..10).map(f64::from).collect();
        assert!((mann_kendall_z(&up) - 44.0 / 125f64.sqrt()).abs() < 1e-12);
        let down: Vec<f64> = up.iter().rev().copied().collect();
        assert!((mann_kendall_z(&down) + 44.0 / 125f64.sqrt()).abs() < 1e-12);
        assert_eq!(mann_kendall_z(&[3.0; 8]), 0.0);
        assert!(mann_kendall_z(&[1.0, 3.0, 2.0, 3.0, 1.0, 2.0, 3.0, 1.0, 2.0]).abs() < 1.0);
    }

    #[test]
    fn too_short_or_idle_series_are_not_decided() {
        assert_eq!(steady_since(&[5.0; 9]), None);
        assert_eq!(steady_since(&[0.0; 20]), None);
        assert_eq!(mser_truncation(&[]), None);
        assert_eq!(steady_since(&[7.0; 10]), Some(0));
    }
}
