//! `--shard=I/N`: one process's share of a run or a prepare that N
//! processes make together, as one process would.
//!
//! Counts split exactly: of `total`, shard `i` takes `total / N`, plus one
//! when `i < total % N`, so that the N shares add up to `total` (users,
//! `--events`, sysbench's tables, TPC-C's warehouses). A share of a
//! numbered range (tables, warehouses) is a contiguous block: shard 0 the
//! first, shard N-1 the last. Items dealt round ([`Shard::deals`]:
//! replay's sessions) go to shard `k mod N` in turn.

use std::fmt;

/// The most shards a run is split into.
pub const MAX_SHARDS: u64 = 100_000;

/// Shard `index` of `count` (0-based: `index` runs from 0 to `count - 1`,
/// as a Kubernetes Indexed Job's completion index does).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Shard {
    /// Parses `I/N`; an error says what is wrong, for a usage line.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let t = text.trim();
        let bad = |why: &str| {
            format!(
                "--shard={t}: {why}; write I/N with 0 <= I < N, e.g. --shard=0/4 for the first of 4 shards"
            )
        };
        let Some((i, n)) = t.split_once('/') else {
            return Err(bad("no '/'"));
        };
        let num = |s: &str, what: &str| {
            s.trim()
                .parse::<u64>()
                .map_err(|_| bad(&format!("'{}' is not a {what}", s.trim())))
        };
        let index = num(i, "shard number")?;
        let count = num(n, "number of shards")?;
        if count == 0 {
            return Err(bad("there must be at least one shard"));
        }
        if count > MAX_SHARDS {
            return Err(bad(&format!("at most {MAX_SHARDS} shards")));
        }
        if index >= count {
            return Err(bad(&format!(
                "shards are numbered from 0 to {} (0-based)",
                count - 1
            )));
        }
        Ok(Shard { index, count })
    }

    /// This shard's share of `total`: `total / N`, one more for the first
    /// `total % N` shards.
    pub fn share(&self, total: u64) -> u64 {
        total / self.count + u64::from(self.index < total % self.count)
    }

    /// This shard's block of `0..total`: `first..first + share`.
    pub fn range(&self, total: u64) -> std::ops::Range<u64> {
        let base = total / self.count;
        let extra = total % self.count;
        let first = self.index * base + self.index.min(extra);
        first..first + self.share(total)
    }

    /// Whether item `k` (0-based) of a sequence dealt round the shards
    /// falls to this one: shard `k mod N` takes it. In a sequence ordered
    /// by time (replay's sessions by their start), every stretch of it is
    /// spread over the shards, and the shards' counts are within one of
    /// each other (shard `i` takes [`Shard::share`] of the total).
    pub fn deals(&self, k: u64) -> bool {
        k % self.count == self.index
    }

    /// The seed of this shard's run from the run's `seed`: different for
    /// every shard (so that shards do not draw the same keys), the same
    /// for the same seed and shard (a given `--rand-seed` repeats).
    pub fn seed(&self, seed: u64) -> u64 {
        if self.count == 1 {
            return seed;
        }
        // SplitMix64's finaliser over the seed and the shard's number.
        let mut z = seed ^ (self.index.wrapping_add(1)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) | 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_add_up_and_blocks_tile() {
        for n in 1..9u64 {
            for total in 0..40u64 {
                let shards: Vec<Shard> = (0..n).map(|index| Shard { index, count: n }).collect();
                let sum: u64 = shards.iter().map(|s| s.share(total)).sum();
                assert_eq!(sum, total);
                let mut next = 0;
                for s in &shards {
                    let r = s.range(total);
                    assert_eq!(r.start, next);
                    assert_eq!(r.end - r.start, s.share(total));
                    next = r.end;
                }
                assert_eq!(next, total);
            }
        }
        let s = Shard { index: 1, count: 3 };
        assert_eq!((s.share(10), s.range(10)), (3, 4..7));
    }

    #[test]
    fn dealing_round_gives_every_item_to_one_shard() {
        for n in 1..7u64 {
            for total in 0..30u64 {
                for k in 0..total {
                    let owners = (0..n)
                        .filter(|&index| Shard { index, count: n }.deals(k))
                        .count();
                    assert_eq!(owners, 1, "item {k} of {total} over {n}");
                }
                for index in 0..n {
                    let s = Shard { index, count: n };
                    let mine = (0..total).filter(|&k| s.deals(k)).count() as u64;
                    assert_eq!(mine, s.share(total), "{s} of {total}");
                }
            }
        }
        let s = Shard { index: 1, count: 3 };
        let mine: Vec<u64> = (0..10).filter(|&k| s.deals(k)).collect();
        assert_eq!(mine, vec![1, 4, 7]);
    }

    #[test]
    fn specs() {
        assert_eq!(Shard::parse("2/4"), Ok(Shard { index: 2, count: 4 }));
        assert_eq!(Shard::parse(" 0/1 "), Ok(Shard { index: 0, count: 1 }));
        for (bad, says) in [
            ("3/2", "from 0 to 1"),
            ("2/2", "from 0 to 1"),
            ("0/0", "at least one shard"),
            ("x/4", "'x' is not a shard number"),
            ("1/y", "'y' is not a number of shards"),
            ("4", "no '/'"),
            ("-1/4", "'-1'"),
            ("0/100001", "at most"),
        ] {
            let e = Shard::parse(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
            assert!(e.starts_with(&format!("--shard={bad}: ")), "{e}");
        }
    }

    #[test]
    fn seeds_differ_by_shard() {
        let seeds: Vec<u64> = (0..4)
            .map(|index| Shard { index, count: 4 }.seed(7))
            .collect();
        for (i, a) in seeds.iter().enumerate() {
            for b in &seeds[i + 1..] {
                assert_ne!(a, b);
            }
        }
        assert_eq!(Shard { index: 0, count: 1 }.seed(7), 7);
        assert_eq!(Shard { index: 2, count: 4 }.seed(7), seeds[2]);
    }
}
