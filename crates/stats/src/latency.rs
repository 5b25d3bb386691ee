//! HDR latency histogram in nanoseconds, with exact min, max and sum.

use crate::LatencyRecorder;
use base64::Engine as _;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};

/// Largest latency the histogram resolves: one hour. Larger values are
/// recorded as one hour (and the exact max still shows the real value).
pub const MAX_LATENCY_NS: u64 = 3_600_000_000_000;

/// Significant decimal digits kept for every recorded value.
const SIGNIFICANT_DIGITS: u8 = 3;

/// A latency histogram: HDR buckets (3 significant digits from 1 ns to one
/// hour) plus the exact count, min, max and sum of the recorded values.
///
/// Percentiles never leave the `[min, max]` range of the recorded values.
#[derive(Clone, Debug)]
pub struct LatencyHistogram {
    hist: Histogram<u64>,
    min: u64,
    max: u64,
    sum: u128,
}

/// A serialised histogram could not be read back.
#[derive(Debug)]
pub struct HistogramError(pub String);

impl std::fmt::Display for HistogramError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "bad serialised histogram: {}", self.0)
    }
}

impl std::error::Error for HistogramError {}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    /// An empty histogram. Its bucket array is allocated zeroed, so the
    /// operating system only backs the pages that recording touches.
    pub fn new() -> Self {
        let hist = Histogram::new_with_bounds(1, MAX_LATENCY_NS, SIGNIFICANT_DIGITS)
            .unwrap_or_else(|_| unreachable!("constant histogram bounds are valid"));
        LatencyHistogram {
            hist,
            min: u64::MAX,
            max: 0,
            sum: 0,
        }
    }

    /// Records one latency in nanoseconds.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.hist.saturating_record(ns.min(MAX_LATENCY_NS));
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
        self.sum += ns as u128;
    }

    /// Adds every value of `other` to this histogram.
    pub fn merge(&mut self, other: &LatencyHistogram) {
        if other.count() == 0 {
            return;
        }
        // Both histograms share the same bounds, so adding cannot fail.
        let _ = self.hist.add(&other.hist);
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.sum += other.sum;
    }

    /// Adds every value of a per-user recorder to this histogram, each in
    /// the bucket it would have had if recorded here.
    pub fn add_recorder(&mut self, rec: &LatencyRecorder) {
        if rec.count() == 0 {
            return;
        }
        for (value, n) in rec.values() {
            self.hist.saturating_record_n(value, n);
        }
        self.min = self.min.min(rec.min());
        self.max = self.max.max(rec.max());
        self.sum += rec.sum();
    }

    pub fn count(&self) -> u64 {
        self.hist.len()
    }

    /// Smallest recorded value (0 when empty).
    pub fn min(&self) -> u64 {
        if self.count() == 0 { 0 } else { self.min }
    }

    /// Largest recorded value (0 when empty).
    pub fn max(&self) -> u64 {
        self.max
    }

    /// Exact sum of the recorded values.
    pub fn sum(&self) -> u128 {
        self.sum
    }

    /// Exact mean (0 when empty).
    pub fn mean(&self) -> f64 {
        if self.count() == 0 {
            0.0
        } else {
            self.sum as f64 / self.count() as f64
        }
    }

    /// Standard deviation of the recorded values, from their buckets
    /// (0 when empty).
    pub fn stddev(&self) -> f64 {
        if self.count() == 0 {
            0.0
        } else {
            self.hist.stdev()
        }
    }

    /// The value at percentile `p` (0..=100), within 0.1% of a recorded
    /// value and clamped to the exact `[min, max]` range.
    pub fn percentile(&self, p: f64) -> u64 {
        if self.count() == 0 {
            return 0;
        }
        let v = self.hist.value_at_quantile((p / 100.0).clamp(0.0, 1.0));
        v.clamp(self.min, self.max)
    }

    /// How many recorded values are at most `ns` (a cumulative bucket of
    /// a Prometheus histogram), within the histogram's precision: the
    /// values of the HDR bucket that holds `ns` all count.
    pub fn count_up_to(&self, ns: u64) -> u64 {
        if self.count() == 0 || ns < self.min {
            return 0;
        }
        if ns >= self.max {
            return self.count();
        }
        self.hist.count_between(0, ns.min(MAX_LATENCY_NS))
    }

    /// Buckets for a text histogram: (bucket upper value in ns, count), on a
    /// logarithmic scale with `per_decade`-ish resolution, empty buckets left out.
    pub fn log_buckets(&self) -> Vec<(u64, u64)> {
        if self.count() == 0 {
            return Vec::new();
        }
        let start = self.min().max(1);
        // Ratio 1.1 gives about 24 buckets per decade, like sysbench's table.
        self.hist
            .iter_log(start, 1.1)
            .filter(|v| v.count_since_last_iteration() > 0)
            .map(|v| {
                (
                    v.value_iterated_to().min(self.max),
                    v.count_since_last_iteration(),
                )
            })
            .collect()
    }

    /// Serialises to the HdrHistogram V2 compressed format, base64-encoded,
    /// followed by the exact min, max and sum: `BASE64;min;max;sum`.
    pub fn to_base64(&self) -> String {
        let mut buf = Vec::new();
        // Writing into a Vec cannot fail for a valid histogram.
        let _ = V2DeflateSerializer::new().serialize(&self.hist, &mut buf);
        format!(
            "{};{};{};{}",
            base64::engine::general_purpose::STANDARD.encode(buf),
            self.min(),
            self.max,
            self.sum
        )
    }

    /// Reads back the form written by [`LatencyHistogram::to_base64`].
    pub fn from_base64(text: &str) -> Result<Self, HistogramError> {
        let mut parts = text.split(';');
        let (Some(b64), Some(min), Some(max), Some(sum), None) = (
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
        ) else {
            return Err(HistogramError("expected BASE64;min;max;sum".into()));
        };
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .map_err(|e| HistogramError(e.to_string()))?;
        let decoded: Histogram<u64> = Deserializer::new()
            .deserialize(&mut bytes.as_slice())
            .map_err(|e| HistogramError(format!("{e:?}")))?;
        let mut out = LatencyHistogram::new();
        out.hist
            .add(&decoded)
            .map_err(|e| HistogramError(format!("{e:?}")))?;
        let num = |s: &str| s.parse::<u128>().map_err(|e| HistogramError(e.to_string()));
        out.min = if out.count() == 0 {
            u64::MAX
        } else {
            num(min)? as u64
        };
        out.max = num(max)? as u64;
        out.sum = num(sum)?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_stay_within_recorded_range() {
        let mut h = LatencyHistogram::new();
        for v in [1_234_567u64, 1_234_999, 1_235_001] {
            h.record(v);
        }
        assert_eq!(h.max(), 1_235_001);
        assert_eq!(h.min(), 1_234_567);
        for p in [0.0, 50.0, 95.0, 99.9, 100.0] {
            let v = h.percentile(p);
            assert!(v >= h.min() && v <= h.max(), "p{p} = {v}");
        }
        assert_eq!(h.percentile(100.0), 1_235_001);
    }

    #[test]
    fn counts_up_to_a_bound() {
        let mut h = LatencyHistogram::new();
        assert_eq!(h.count_up_to(1_000), 0);
        for ns in [500, 1_000, 250_000, 1_000_000, 3_000_000_000] {
            h.record(ns);
        }
        assert_eq!(h.count_up_to(499), 0);
        assert_eq!(h.count_up_to(1_000), 2);
        assert_eq!(h.count_up_to(100_000), 2);
        // 250 µs is in the bucket of 250.1 µs (3 significant digits).
        assert_eq!(h.count_up_to(250_100), 3);
        assert_eq!(h.count_up_to(2_500_000), 4);
        assert_eq!(h.count_up_to(u64::MAX), 5);
    }

    #[test]
    fn three_significant_digits() {
        let mut h = LatencyHistogram::new();
        for v in 1..=100_000u64 {
            h.record(v * 1000);
        }
        let p50 = h.percentile(50.0) as f64;
        assert!((p50 - 50_000_000.0).abs() / 50_000_000.0 < 0.001, "{p50}");
        let p99 = h.percentile(99.0) as f64;
        assert!((p99 - 99_000_000.0).abs() / 99_000_000.0 < 0.001, "{p99}");
    }

    #[test]
    fn merge_is_exact() {
        let mut a = LatencyHistogram::new();
        let mut b = LatencyHistogram::new();
        let mut all = LatencyHistogram::new();
        for v in 0..1000u64 {
            let x = v * 7919 % 100_003 + 1;
            if v % 2 == 0 {
                a.record(x)
            } else {
                b.record(x)
            }
            all.record(x);
        }
        a.merge(&b);
        assert_eq!(a.count(), all.count());
        assert_eq!(a.sum(), all.sum());
        assert_eq!(a.min(), all.min());
        assert_eq!(a.max(), all.max());
        for p in [50.0, 90.0, 99.0] {
            assert_eq!(a.percentile(p), all.percentile(p));
        }
    }

    #[test]
    fn huge_values_saturate_but_max_is_exact() {
        let mut h = LatencyHistogram::new();
        h.record(MAX_LATENCY_NS * 2);
        assert_eq!(h.max(), MAX_LATENCY_NS * 2);
        assert_eq!(h.count(), 1);
    }

    #[test]
    fn base64_round_trip() {
        let mut h = LatencyHistogram::new();
        for v in [10u64, 2_000, 3_000_000, 4_000_000_000] {
            h.record(v);
        }
        let back = LatencyHistogram::from_base64(&h.to_base64()).unwrap();
        assert_eq!(back.count(), 4);
        assert_eq!(back.sum(), h.sum());
        assert_eq!(back.percentile(50.0), h.percentile(50.0));
        assert!(LatencyHistogram::from_base64("nope").is_err());
    }
}
