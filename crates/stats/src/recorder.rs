//! A per-user latency recorder that holds memory only for the latencies it
//! has seen.
//!
//! A full [`LatencyHistogram`] (1 ns to one hour at 3 significant digits)
//! is an array of 33,792 counts, 270 KB. With a thousand users, each one
//! records a few latencies per interval: the recorder keeps its first
//! [`FEW`] values as they are, and past that counts them in the same HDR
//! bucket layout as the histogram, allocated in blocks of [`BLOCK`] counts
//! on first use (latencies cluster within a few powers of two). The
//! collector folds it into a [`LatencyHistogram`] with
//! [`LatencyHistogram::add_recorder`]: every value lands in the very bucket
//! it would have had if it had been recorded there directly, so nothing is
//! lost (exact count, min, max and sum, and percentiles to 3 significant
//! digits).

#[cfg(doc)]
use crate::LatencyHistogram;
use crate::latency::MAX_LATENCY_NS;

/// log2 of half the number of sub-buckets per HDR bucket: 3 significant
/// digits need single-unit resolution up to 2,000, i.e. 2,048 sub-buckets.
const HALF_MAGNITUDE: u32 = 10;
/// Values below this (2,048) all go to bucket 0, one count per value.
const SUB_BUCKET_MASK: u64 = (1 << (HALF_MAGNITUDE + 1)) - 1;
/// Leading zeros of a value in bucket 0's top half, as in HdrHistogram.
const LEADING_ZERO_BASE: u32 = 64 - (HALF_MAGNITUDE + 1);

/// Values kept as they are before the recorder switches to counts.
const FEW: usize = 64;
/// Counts per block: 2 KB each.
const BLOCK_BITS: usize = 8;
const BLOCK: usize = 1 << BLOCK_BITS;
const BLOCK_MASK: usize = BLOCK - 1;
/// Blocks that cover every index up to the one of [`MAX_LATENCY_NS`].
const BLOCKS: usize = (index_of(MAX_LATENCY_NS) >> BLOCK_BITS) + 1;

/// The HDR counts index of `value` (lowest discernible value 1, 3 significant digits).
#[inline]
const fn index_of(value: u64) -> usize {
    let bucket = LEADING_ZERO_BASE - (value | SUB_BUCKET_MASK).leading_zeros();
    let sub_bucket = (value >> bucket) as usize;
    ((bucket as usize + 1) << HALF_MAGNITUDE) + sub_bucket - (1 << HALF_MAGNITUDE)
}

/// The smallest value whose counts index is `index` (the inverse of [`index_of`]).
#[inline]
fn value_of(index: usize) -> u64 {
    let half = 1usize << HALF_MAGNITUDE;
    let bucket = (index >> HALF_MAGNITUDE) as i64 - 1;
    let sub_bucket = (index & (half - 1)) + half;
    if bucket < 0 {
        (sub_bucket - half) as u64
    } else {
        (sub_bucket as u64) << bucket
    }
}

type Block = [u64; BLOCK];

/// Latencies of one user since the collector last took them: the first
/// [`FEW`] values, then HDR counts allocated a block at a time, plus the
/// exact count, min, max and sum.
#[derive(Clone, Debug)]
pub struct LatencyRecorder {
    /// The values recorded while there are at most [`FEW`] of them.
    few: Vec<u64>,
    /// Empty until there are more than [`FEW`] values; then [`BLOCKS`]
    /// entries, each allocated on first use.
    blocks: Vec<Option<Box<Block>>>,
    count: u64,
    min: u64,
    max: u64,
    sum: u128,
}

impl Default for LatencyRecorder {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyRecorder {
    /// An empty recorder; it allocates nothing until it records.
    pub const fn new() -> Self {
        LatencyRecorder {
            few: Vec::new(),
            blocks: Vec::new(),
            count: 0,
            min: u64::MAX,
            max: 0,
            sum: 0,
        }
    }

    /// Records one latency in nanoseconds. Values above one hour count as
    /// one hour in the buckets; min, max and sum keep the real value.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        if self.blocks.is_empty() {
            self.keep_or_switch(ns);
        } else {
            self.count_in_block(ns);
        }
        self.count += 1;
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
        self.sum += ns as u128;
    }

    /// Keeps `ns` as it is while there are few values; past [`FEW`],
    /// switches to counts in blocks.
    fn keep_or_switch(&mut self, ns: u64) {
        if self.few.len() < FEW {
            if self.few.capacity() == 0 {
                self.few.reserve_exact(FEW);
            }
            self.few.push(ns);
            return;
        }
        self.blocks.resize(BLOCKS, None);
        for v in std::mem::take(&mut self.few) {
            self.count_in_block(v);
        }
        self.count_in_block(ns);
    }

    #[inline]
    fn count_in_block(&mut self, ns: u64) {
        let index = index_of(ns.min(MAX_LATENCY_NS));
        let block = self.blocks[index >> BLOCK_BITS].get_or_insert_with(|| Box::new([0; BLOCK]));
        block[index & BLOCK_MASK] += 1;
    }

    /// Forgets every value but keeps the memory: a recorder that is
    /// emptied and filled again interval after interval (the engine's
    /// slots) allocates only the first time. A recorder that had switched
    /// to counts stays in counts (zeroed), so its next values do not pass
    /// through the list of few again.
    pub fn clear(&mut self) {
        self.few.clear();
        for block in self.blocks.iter_mut().flatten() {
            block.fill(0);
        }
        self.count = 0;
        self.min = u64::MAX;
        self.max = 0;
        self.sum = 0;
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// Smallest recorded value (0 when empty).
    pub fn min(&self) -> u64 {
        if self.count == 0 { 0 } else { self.min }
    }

    /// Largest recorded value (0 when empty).
    pub fn max(&self) -> u64 {
        self.max
    }

    /// Exact sum of the recorded values.
    pub fn sum(&self) -> u128 {
        self.sum
    }

    /// The recorded values as (value, count) pairs: each value kept as it
    /// is, or the lowest value of a bucket with its count. A value may
    /// appear more than once.
    pub(crate) fn values(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        let few = self.few.iter().map(|&v| (v.min(MAX_LATENCY_NS), 1));
        let counted = self
            .blocks
            .iter()
            .enumerate()
            .filter_map(|(b, block)| block.as_ref().map(|block| (b, block)))
            .flat_map(|(b, block)| {
                block
                    .iter()
                    .enumerate()
                    .filter(|(_, n)| **n > 0)
                    .map(move |(i, n)| (value_of((b << BLOCK_BITS) + i), *n))
            });
        few.chain(counted)
    }

    /// Bytes of counts this recorder holds (for tests and diagnostics).
    pub fn allocated_bytes(&self) -> usize {
        self.few.capacity() * std::mem::size_of::<u64>()
            + self.blocks.capacity() * std::mem::size_of::<Option<Box<Block>>>()
            + self.blocks.iter().flatten().count() * std::mem::size_of::<Block>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LatencyHistogram;
    use hdrhistogram::Histogram;

    /// The recorder's buckets are exactly HdrHistogram's.
    #[test]
    fn same_buckets_as_hdrhistogram() {
        let h = Histogram::<u64>::new_with_bounds(1, MAX_LATENCY_NS, 3).unwrap();
        let mut values: Vec<u64> = (0..5000).collect();
        for shift in 11..42 {
            let p = 1u64 << shift;
            values.extend([p - 1, p, p + 1, p + (p >> 1), 2 * p - 1]);
            values.extend((0..50).map(|i| p + i * (p / 50) + i));
        }
        values.push(MAX_LATENCY_NS);
        for v in values {
            let i = index_of(v);
            assert_eq!(value_of(i), h.lowest_equivalent(v), "value {v}");
            assert_eq!(index_of(value_of(i)), i, "value {v}");
        }
        // Clamped values stay within the blocks, and within HdrHistogram's counts.
        assert!(index_of(MAX_LATENCY_NS) < BLOCKS * BLOCK);
        assert!(BLOCKS * BLOCK <= h.distinct_values());
    }

    #[test]
    fn folds_into_the_same_histogram_as_direct_recording() {
        for n in [1, FEW - 1, FEW, FEW + 1, 20_000] {
            folds_like_direct_recording(n);
        }
    }

    fn folds_like_direct_recording(n: usize) {
        let mut direct = LatencyHistogram::new();
        let mut rec = LatencyRecorder::new();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // 1 ns .. ~70 s, spread over every power of two
            let v = (x >> 28) >> (x % 36);
            direct.record(v);
            rec.record(v);
        }
        rec.record(MAX_LATENCY_NS * 3);
        direct.record(MAX_LATENCY_NS * 3);
        let mut folded = LatencyHistogram::new();
        folded.add_recorder(&rec);
        assert_eq!(folded.count(), direct.count());
        assert_eq!(folded.min(), direct.min());
        assert_eq!(folded.max(), direct.max());
        assert_eq!(folded.sum(), direct.sum());
        for p in [0.0, 1.0, 10.0, 50.0, 90.0, 99.0, 99.9, 99.99, 100.0] {
            assert_eq!(
                folded.percentile(p),
                direct.percentile(p),
                "p{p}, {n} values"
            );
        }
        assert_eq!(folded.to_base64(), direct.to_base64(), "{n} values");
    }

    #[test]
    fn allocates_only_what_it_uses() {
        let mut rec = LatencyRecorder::new();
        assert_eq!(rec.allocated_bytes(), 0);
        for i in 0..FEW as u64 {
            rec.record(i * 1_000_000_000);
        }
        assert_eq!(rec.allocated_bytes(), FEW * 8);
        let mut rec = LatencyRecorder::new();
        // 500 latencies between 1.00 and 1.04 ms: one block of counts.
        for i in 0..500u64 {
            rec.record(1_000_000 + i * 80);
        }
        assert!(
            rec.allocated_bytes() < 4 * 1024,
            "{}",
            rec.allocated_bytes()
        );
        assert_eq!(rec.count(), 500);
        assert_eq!(rec.min(), 1_000_000);
        assert_eq!(rec.max(), 1_039_920);
    }

    /// A cleared recorder is empty, keeps its memory, and records again as
    /// a new one would (in both of its modes).
    #[test]
    fn cleared_recorder_records_like_a_new_one() {
        for first in [10u64, 5_000] {
            let mut rec = LatencyRecorder::new();
            for i in 0..first {
                rec.record(1_000_000 + i * 977);
            }
            let bytes = rec.allocated_bytes();
            rec.clear();
            assert_eq!(rec.count(), 0);
            assert_eq!((rec.min(), rec.max(), rec.sum()), (0, 0, 0));
            assert_eq!(rec.values().count(), 0);
            assert_eq!(rec.allocated_bytes(), bytes);
            let mut fresh = LatencyRecorder::new();
            for v in [3u64, 2_000_000, 7_000_000_000, 2_000_001] {
                rec.record(v);
                fresh.record(v);
            }
            let (mut a, mut b) = (LatencyHistogram::new(), LatencyHistogram::new());
            a.add_recorder(&rec);
            b.add_recorder(&fresh);
            assert_eq!(a.count(), 4);
            assert_eq!((a.min(), a.max(), a.sum()), (b.min(), b.max(), b.sum()));
            assert_eq!(a.to_base64(), b.to_base64(), "{first} values before");
        }
    }

    #[test]
    fn empty_recorder_adds_nothing() {
        let mut h = LatencyHistogram::new();
        h.record(5);
        h.add_recorder(&LatencyRecorder::new());
        assert_eq!(h.count(), 1);
        assert_eq!(h.min(), 5);
    }
}
