//! Per-class aggregates in bounded memory: for each attribute its count,
//! sum, min, max, sum of squares and a sparse log histogram (values kept to
//! 1 part in 2048, better than 3 significant digits), from which the
//! percentiles come; first and last seen; the worst sample; the databases,
//! users and hosts; events and time per time bucket. A class's memory
//! depends on the number of distinct values at that precision, never on the
//! number of events, and aggregates merge exactly (the parallel readers each
//! make one and they are added).
//!
//! A log of many classes has mostly classes of one or a few events: a class
//! keeps its first [`FEW_EVENTS`] events' values as read, a few bytes each
//! ([`Few`]), and makes the statistics above only past them, by recording
//! the kept values in their order (so that nothing differs from a class
//! that made them from its first event). Strings (databases, users, hosts,
//! word values) are shared between the classes of an aggregate.

use crate::event::LogEvent;
use crate::fingerprint::{fingerprint_bytes, pg_fingerprint_bytes};
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

/// A string shared by the classes that have it.
pub type Shared = Arc<[u8]>;

/// The strings of an aggregate, each kept once.
#[derive(Debug, Clone, Default)]
pub struct Interner {
    set: HashSet<Shared>,
}

impl Interner {
    pub fn get(&mut self, v: &[u8]) -> Shared {
        if let Some(s) = self.set.get(v) {
            return s.clone();
        }
        let s: Shared = v.into();
        self.set.insert(s.clone());
        s
    }
}

/// What classes are made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupBy {
    Fingerprint,
    Db,
    User,
    Host,
    /// Each table a statement names (`db.tbl`, with the event's database
    /// for an unqualified name): a statement counts in each of its tables.
    Table,
}

impl GroupBy {
    pub fn parse(s: &str) -> Option<GroupBy> {
        Some(match s.to_ascii_lowercase().as_str() {
            "fingerprint" => GroupBy::Fingerprint,
            "db" | "database" | "schema" => GroupBy::Db,
            "user" => GroupBy::User,
            "host" => GroupBy::Host,
            "table" | "tables" => GroupBy::Table,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            GroupBy::Fingerprint => "fingerprint",
            GroupBy::Db => "db",
            GroupBy::User => "user",
            GroupBy::Host => "host",
            GroupBy::Table => "table",
        }
    }
}

/// Values are recorded in millionths (a microsecond for times).
pub const SCALE: f64 = 1e6;

/// A sparse log histogram of non-negative values in millionths: values
/// below 2048 exactly, larger ones to 1 part in 2048.
#[derive(Debug, Clone, Default)]
pub struct Hist {
    /// Made when a second bucket is seen (most classes of a log of many
    /// classes have one value per attribute).
    buckets: Option<Buckets>,
    /// A run of the same bucket not yet in `buckets` (attributes repeat
    /// their values: this spares most lookups).
    run_key: u32,
    run_n: u64,
}

type BucketMap = HashMap<u32, u64, BuildHasherDefault<KeyHasher>>;

/// A histogram's buckets: a few in a sorted list of exactly their size (8
/// bytes each, where a hash map takes about 30), more in a hash map.
#[derive(Debug, Clone)]
enum Buckets {
    /// Sorted by key; counts below 2^32.
    Few(Box<[(u32, u32)]>),
    Many(Box<BucketMap>),
}

/// Buckets kept in the list before the hash map.
const FEW_BUCKETS: usize = 64;

/// A multiplicative hash for the histograms' u32 keys and the general
/// log's thread ids (SipHash costs more than the rest of recording a value).
#[derive(Default)]
pub(crate) struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0.rotate_left(5) ^ *b as u64).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }

    fn write_u32(&mut self, k: u32) {
        self.0 = (k as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }

    fn write_u64(&mut self, k: u64) {
        self.0 = k.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

const SUB_BITS: u32 = 11;

fn key_of(v: u64) -> u32 {
    if v < (1 << SUB_BITS) {
        v as u32
    } else {
        let shift = 64 - v.leading_zeros() - SUB_BITS;
        (shift << SUB_BITS) | (v >> shift) as u32
    }
}

/// The middle of a bucket.
fn value_of(k: u32) -> u64 {
    let shift = k >> SUB_BITS;
    if shift == 0 {
        k as u64
    } else {
        let m = (k & ((1 << SUB_BITS) - 1)) as u64;
        (m << shift) + (1u64 << (shift - 1))
    }
}

impl Hist {
    #[inline]
    pub fn record(&mut self, v: u64) {
        let k = key_of(v);
        if self.run_n > 0 && k == self.run_key {
            self.run_n += 1;
            return;
        }
        self.flush();
        self.run_key = k;
        self.run_n = 1;
    }

    fn flush(&mut self) {
        if self.run_n > 0 {
            self.add_bucket(self.run_key, self.run_n);
            self.run_n = 0;
        }
    }

    /// Adds `n` to bucket `k`.
    fn add_bucket(&mut self, k: u32, n: u64) {
        let small = n <= u32::MAX as u64;
        let few = match &mut self.buckets {
            None if small => {
                self.buckets = Some(Buckets::Few(Box::new([(k, n as u32)])));
                return;
            }
            None => Box::default(),
            Some(Buckets::Many(m)) => {
                *m.entry(k).or_insert(0) += n;
                return;
            }
            Some(Buckets::Few(f)) => match f.binary_search_by_key(&k, |e| e.0) {
                Ok(i) if f[i].1 as u64 + n <= u32::MAX as u64 => {
                    f[i].1 += n as u32;
                    return;
                }
                Err(i) if small && f.len() < FEW_BUCKETS => {
                    let mut v = Vec::with_capacity(f.len() + 1);
                    v.extend_from_slice(&f[..i]);
                    v.push((k, n as u32));
                    v.extend_from_slice(&f[i..]);
                    *f = v.into_boxed_slice();
                    return;
                }
                _ => std::mem::take(f),
            },
        };
        let mut m: BucketMap = few.iter().map(|&(k, c)| (k, c as u64)).collect();
        *m.entry(k).or_insert(0) += n;
        self.buckets = Some(Buckets::Many(Box::new(m)));
    }

    /// Every bucket with its count, the pending run included (any order).
    fn all(&self) -> impl Iterator<Item = (u32, u64)> + '_ {
        let (few, many) = match &self.buckets {
            None => (None, None),
            Some(Buckets::Few(f)) => (Some(f), None),
            Some(Buckets::Many(m)) => (None, Some(m)),
        };
        few.into_iter()
            .flat_map(|f| f.iter().map(|&(k, n)| (k, n as u64)))
            .chain(
                many.into_iter()
                    .flat_map(|m| m.iter().map(|(k, n)| (*k, *n))),
            )
            .chain((self.run_n > 0).then_some((self.run_key, self.run_n)))
    }

    pub fn merge(&mut self, o: &Hist) {
        self.flush();
        for (k, n) in o.all() {
            self.add_bucket(k, n);
        }
    }

    /// The buckets in order of value.
    fn sorted(&self) -> Vec<(u32, u64)> {
        let len = match &self.buckets {
            None => 0,
            Some(Buckets::Few(f)) => f.len(),
            Some(Buckets::Many(m)) => m.len(),
        };
        let mut m: HashMap<u32, u64> = HashMap::with_capacity(len + 1);
        for (k, n) in self.all() {
            *m.entry(k).or_insert(0) += n;
        }
        let mut v: Vec<(u32, u64)> = m.into_iter().collect();
        v.sort_unstable();
        v
    }

    /// The value at rank ceil(q * count) (q in 0..=1), in millionths.
    pub fn quantile(&self, q: f64, count: u64) -> u64 {
        let rank = ((q * count as f64).ceil() as u64).clamp(1, count.max(1));
        let sorted = self.sorted();
        let mut seen = 0;
        for (k, n) in &sorted {
            seen += n;
            if seen >= rank {
                return value_of(*k);
            }
        }
        sorted.last().map_or(0, |(k, _)| value_of(*k))
    }

    /// Counts per decade of seconds: <10us, <100us, ... <10s, >=10s (pt-query-digest's
    /// 1us..10s+ rows).
    pub fn decades(&self) -> [u64; 8] {
        let mut out = [0; 8];
        for (k, n) in self.all() {
            let v = value_of(k);
            let i = match v {
                0..10 => 0,
                10..100 => 1,
                100..1_000 => 2,
                1_000..10_000 => 3,
                10_000..100_000 => 4,
                100_000..1_000_000 => 5,
                1_000_000..10_000_000 => 6,
                _ => 7,
            };
            out[i] += n;
        }
        out
    }

    pub fn buckets(&self) -> usize {
        self.sorted().len()
    }
}

/// A numeric attribute.
#[derive(Debug, Clone)]
pub struct NumStats {
    pub count: u64,
    pub sum: f64,
    pub min: f64,
    pub max: f64,
    pub sumsq: f64,
    pub hist: Hist,
    /// Whether every value was a whole number (percentiles are then rounded
    /// to whole numbers: the histogram keeps 1 part in 2048).
    pub whole: bool,
}

impl Default for NumStats {
    fn default() -> Self {
        NumStats {
            count: 0,
            sum: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            sumsq: 0.0,
            hist: Hist::default(),
            whole: true,
        }
    }
}

impl NumStats {
    pub fn record(&mut self, v: f64) {
        self.count += 1;
        self.sum += v;
        self.sumsq += v * v;
        if v < self.min {
            self.min = v;
        }
        if v > self.max {
            self.max = v;
        }
        self.hist.record((v * SCALE).round().max(0.0) as u64);
        if v.fract() != 0.0 {
            self.whole = false;
        }
    }

    pub fn merge(&mut self, o: &NumStats) {
        self.count += o.count;
        self.sum += o.sum;
        self.sumsq += o.sumsq;
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
        self.hist.merge(&o.hist);
        self.whole &= o.whole;
    }

    pub fn avg(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum / self.count as f64
        }
    }

    pub fn stddev(&self) -> f64 {
        if self.count < 2 {
            return 0.0;
        }
        let m = self.avg();
        (self.sumsq / self.count as f64 - m * m).max(0.0).sqrt()
    }

    /// A percentile (q in 0..=1), within [min, max].
    pub fn quantile(&self, q: f64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let v = self.hist.quantile(q, self.count) as f64 / SCALE;
        let v = if self.whole { v.round() } else { v };
        v.clamp(self.min, self.max)
    }
}

/// How many distinct values of a string attribute are kept (the rest are
/// counted together).
pub const MAX_DISTINCT: usize = 1000;

/// Values of a string attribute (databases, users, hosts...) and how often.
/// The first value is kept in place (most classes have one database, user
/// and host), a few more in a list, more in a hash map.
#[derive(Debug, Clone, Default)]
pub struct StrCounts {
    first: Option<(Shared, u64)>,
    more: Option<Box<MoreStrs>>,
}

#[derive(Debug, Clone, Default)]
struct MoreStrs {
    few: Vec<(Shared, u64)>,
    many: Option<HashMap<Shared, u64>>,
    /// Events whose value was not kept (past MAX_DISTINCT distinct ones).
    other: u64,
}

/// Values kept in the list before the hash map.
const FEW: usize = 8;

impl StrCounts {
    /// Counts `n` events of value `v`; `share` makes the shared string when
    /// the value is new here.
    pub fn record_with(&mut self, v: &[u8], n: u64, share: impl FnOnce() -> Shared) {
        match &mut self.first {
            None => {
                self.first = Some((share(), n));
                return;
            }
            Some(f) if *f.0 == *v => {
                f.1 += n;
                return;
            }
            Some(_) => {}
        }
        let more = self.more.get_or_insert_with(Default::default);
        if let Some(m) = &mut more.many {
            if let Some(c) = m.get_mut(v) {
                *c += n;
            } else if m.len() + 1 < MAX_DISTINCT {
                m.insert(share(), n);
            } else {
                more.other += n;
            }
            return;
        }
        if let Some(e) = more.few.iter_mut().find(|e| *e.0 == *v) {
            e.1 += n;
        } else if more.few.len() < FEW {
            more.few.push((share(), n));
        } else {
            let mut m: HashMap<Shared, u64> = more.few.drain(..).collect();
            m.insert(share(), n);
            more.few = Vec::new();
            more.many = Some(m);
        }
    }

    pub fn record(&mut self, v: &[u8], n: u64, strings: &mut Interner) {
        self.record_with(v, n, || strings.get(v));
    }

    fn all(&self) -> impl Iterator<Item = (&Shared, u64)> {
        let more = self.more.as_deref();
        self.first
            .iter()
            .map(|(k, n)| (k, *n))
            .chain(more.into_iter().flat_map(|m| {
                m.few
                    .iter()
                    .map(|(k, n)| (k, *n))
                    .chain(m.many.iter().flat_map(|h| h.iter().map(|(k, n)| (k, *n))))
            }))
    }

    pub fn merge(&mut self, o: &StrCounts) {
        for (k, n) in o.all() {
            self.record_with(k, n, || k.clone());
        }
        if o.other() > 0 {
            self.more.get_or_insert_with(Default::default).other += o.other();
        }
    }

    /// Events whose value was not kept (past MAX_DISTINCT distinct ones).
    pub fn other(&self) -> u64 {
        self.more.as_ref().map_or(0, |m| m.other)
    }

    /// Most frequent first (ties by value).
    pub fn sorted(&self) -> Vec<(String, u64)> {
        let mut v: Vec<(String, u64)> = self
            .all()
            .map(|(k, n)| (String::from_utf8_lossy(k).into_owned(), n))
            .collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        v
    }
}

/// One attribute of a class: numbers, yes/no, or words (an attribute may
/// have several kinds of values across a log; a report shows the numbers
/// first).
#[derive(Debug, Clone, Default)]
pub struct AttrStats {
    pub num: Option<NumStats>,
    pub yes: u64,
    pub no: u64,
    pub words: Option<Box<StrCounts>>,
}

/// pt-query-digest's number: `\d+` or a float (with an optional exponent).
fn number(v: &[u8]) -> Option<f64> {
    // The usual `123` and `0.000123`, exactly as `str::parse` rounds them:
    // a whole mantissa below 2^53 divided by an exact power of ten is
    // correctly rounded.
    let digits = v.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits > 0 && digits <= 15 {
        let int = v[..digits]
            .iter()
            .fold(0u64, |a, b| a * 10 + (b - b'0') as u64);
        if digits == v.len() {
            return Some(int as f64);
        }
        if v[digits] == b'.' {
            let frac = &v[digits + 1..];
            if !frac.is_empty() && digits + frac.len() <= 15 && frac.iter().all(u8::is_ascii_digit)
            {
                let m = frac.iter().fold(int, |a, b| a * 10 + (b - b'0') as u64);
                return Some(m as f64 / 10f64.powi(frac.len() as i32));
            }
        }
    }
    number_slow(v)
}

fn number_slow(v: &[u8]) -> Option<f64> {
    let b = v
        .strip_prefix(b"-")
        .or_else(|| v.strip_prefix(b"+"))
        .unwrap_or(v);
    if b.is_empty() || !b[0].is_ascii_digit() && b[0] != b'.' {
        return None;
    }
    let s = std::str::from_utf8(v).ok()?;
    let f: f64 = s.parse().ok()?;
    f.is_finite().then_some(f)
}

/// A value of an attribute as read: pt-query-digest's number, Yes, No or a word.
#[derive(Debug, Clone, Copy)]
enum Val<'a> {
    Num(f64),
    Yes,
    No,
    Word(&'a [u8]),
}

impl Val<'_> {
    fn of(v: &[u8]) -> Val<'_> {
        if let Some(f) = number(v) {
            Val::Num(f)
        } else if v == b"Yes" {
            Val::Yes
        } else if v == b"No" {
            Val::No
        } else {
            Val::Word(v)
        }
    }
}

/// A value of the event being added, as [`Val`], with a word by its place
/// in the event's attributes (so that the list of an event's values is kept
/// from one event to the next, not made for each).
#[derive(Debug, Clone, Copy)]
enum Slot {
    Num(f64),
    Yes,
    No,
    Word(usize),
}

impl Slot {
    fn of(v: &[u8], at: usize) -> Slot {
        match Val::of(v) {
            Val::Num(f) => Slot::Num(f),
            Val::Yes => Slot::Yes,
            Val::No => Slot::No,
            Val::Word(_) => Slot::Word(at),
        }
    }

    fn get<'a>(self, e: &LogEvent<'a>) -> Val<'a> {
        match self {
            Slot::Num(f) => Val::Num(f),
            Slot::Yes => Val::Yes,
            Slot::No => Val::No,
            Slot::Word(j) => Val::Word(e.attrs[j].1),
        }
    }
}

impl AttrStats {
    pub fn record(&mut self, v: &[u8], strings: &mut Interner) {
        self.record_val(Val::of(v), strings);
    }

    fn record_val(&mut self, v: Val<'_>, strings: &mut Interner) {
        match v {
            Val::Num(f) => self.num.get_or_insert_with(NumStats::default).record(f),
            Val::Yes => self.yes += 1,
            Val::No => self.no += 1,
            Val::Word(w) => self
                .words
                .get_or_insert_with(Default::default)
                .record(w, 1, strings),
        }
    }

    pub fn merge(&mut self, o: &AttrStats) {
        if let Some(n) = &o.num {
            self.num.get_or_insert_with(NumStats::default).merge(n);
        }
        self.yes += o.yes;
        self.no += o.no;
        if let Some(w) = &o.words {
            self.words.get_or_insert_with(Default::default).merge(w);
        }
    }
}

/// Events a class keeps as read before it makes its statistics.
pub const FEW_EVENTS: u64 = 16;

/// The values of a class's first events, in their order, a few bytes each:
/// per value its attribute id (a varint), a kind byte and the value. A
/// number that is a decimal of at most 15 digits (as logs write them) is
/// its digits (a varint) and the count of decimals, from which the same
/// `f64` is made again, bit for bit; any other number its 8 bytes.
#[derive(Debug, Clone, Default)]
pub struct Few {
    bytes: Vec<u8>,
    words: Vec<Shared>,
}

const K_RAW: u8 = 16;
const K_YES: u8 = 17;
const K_NO: u8 = 18;
const K_WORD: u8 = 19;

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get_varint(b: &[u8], pos: &mut usize) -> u64 {
    let mut v = 0u64;
    let mut shift = 0;
    while let Some(&x) = b.get(*pos) {
        *pos += 1;
        v |= ((x & 0x7f) as u64) << shift;
        if x & 0x80 == 0 {
            break;
        }
        shift += 7;
    }
    v
}

/// `10^k` as the decoder divides by it.
fn ten_pow(k: u8) -> f64 {
    10f64.powi(k as i32)
}

/// The digits and decimals that make `v` again, if it has few.
fn as_decimal(v: f64) -> Option<(u64, u8)> {
    // NaN, negative or too large: its 8 bytes.
    if !(0.0..9.0e15).contains(&v) {
        return None;
    }
    for k in 0..=12u8 {
        let m = (v * ten_pow(k)).round();
        if m >= 9.0e15 {
            return None;
        }
        if m / ten_pow(k) == v {
            return Some((m as u64, k));
        }
    }
    None
}

impl Few {
    fn push(&mut self, id: usize, v: Val<'_>, strings: &mut Interner) {
        let b = &mut self.bytes;
        put_varint(b, id as u64);
        match v {
            Val::Num(f) => match as_decimal(f) {
                Some((m, k)) => {
                    b.push(k);
                    put_varint(b, m);
                }
                None => {
                    b.push(K_RAW);
                    b.extend_from_slice(&f.to_le_bytes());
                }
            },
            Val::Yes => b.push(K_YES),
            Val::No => b.push(K_NO),
            Val::Word(w) => {
                b.push(K_WORD);
                let i = match self.words.iter().position(|x| **x == *w) {
                    Some(i) => i,
                    None => {
                        self.words.push(strings.get(w));
                        self.words.len() - 1
                    }
                };
                put_varint(b, i as u64);
            }
        }
    }

    /// Every value kept, in order: (attribute id, value).
    fn each(&self, mut f: impl FnMut(usize, Val<'_>)) {
        let b = &self.bytes;
        let mut pos = 0;
        while pos < b.len() {
            let id = get_varint(b, &mut pos) as usize;
            let k = b[pos];
            pos += 1;
            let v = match k {
                K_RAW => {
                    let mut x = [0u8; 8];
                    x.copy_from_slice(&b[pos..pos + 8]);
                    pos += 8;
                    Val::Num(f64::from_le_bytes(x))
                }
                K_YES => Val::Yes,
                K_NO => Val::No,
                K_WORD => {
                    let i = get_varint(b, &mut pos) as usize;
                    Val::Word(&self.words[i])
                }
                k => Val::Num(get_varint(b, &mut pos) as f64 / ten_pow(k)),
            };
            f(id, v);
        }
    }
}

/// A class's attributes: as read while it has few events, then per
/// attribute (by id, the aggregate's `names`).
#[derive(Debug, Clone)]
enum Attrs {
    Few(Few),
    Full(Vec<Option<AttrStats>>),
}

impl Default for Attrs {
    fn default() -> Self {
        Attrs::Few(Few::default())
    }
}

/// Time buckets a series keeps at most: past them, the buckets are made
/// twice as wide.
pub const SERIES_BUCKETS: i64 = 240;

/// Events and their total time per time bucket. A bucket is 2^`shift`
/// seconds, aligned on the epoch (so that two series are added exactly,
/// the finer one made as coarse as the other first).
#[derive(Debug, Clone, Default)]
pub struct Series {
    pub shift: u8,
    /// (seconds since the epoch >> shift, events, Query_time sum), in order.
    pub buckets: Vec<(i64, u64, f64)>,
}

impl Series {
    fn add(&mut self, secs: i64, n: u64, t: f64) {
        let idx = secs >> self.shift;
        match self.buckets.last_mut() {
            Some(l) if l.0 == idx => {
                l.1 += n;
                l.2 += t;
                return;
            }
            _ => {}
        }
        match self.buckets.binary_search_by_key(&idx, |b| b.0) {
            Ok(i) => {
                self.buckets[i].1 += n;
                self.buckets[i].2 += t;
            }
            Err(i) => {
                // Most classes of a log of many are in one bucket.
                if self.buckets.capacity() == 0 {
                    self.buckets.reserve_exact(1);
                }
                self.buckets.insert(i, (idx, n, t));
            }
        }
        self.fit();
    }

    fn fit(&mut self) {
        while let (Some(f), Some(l)) = (self.buckets.first(), self.buckets.last()) {
            if l.0 - f.0 < SERIES_BUCKETS {
                break;
            }
            self.coarsen_to(self.shift + 1);
        }
    }

    /// Makes the buckets 2^`shift` seconds wide (never narrower).
    pub fn coarsen_to(&mut self, shift: u8) {
        if shift <= self.shift {
            return;
        }
        let d = (shift - self.shift) as u32;
        let mut out: Vec<(i64, u64, f64)> = Vec::with_capacity(self.buckets.len());
        for &(i, n, t) in &self.buckets {
            let j = i >> d;
            match out.last_mut() {
                Some(l) if l.0 == j => {
                    l.1 += n;
                    l.2 += t;
                }
                _ => out.push((j, n, t)),
            }
        }
        self.buckets = out;
        self.shift = shift;
    }

    pub fn merge(&mut self, o: &Series) {
        let shift = self.shift.max(o.shift);
        self.coarsen_to(shift);
        let mut o = o.clone();
        o.coarsen_to(shift);
        for (i, n, t) in o.buckets {
            match self.buckets.binary_search_by_key(&i, |b| b.0) {
                Ok(j) => {
                    self.buckets[j].1 += n;
                    self.buckets[j].2 += t;
                }
                Err(j) => self.buckets.insert(j, (i, n, t)),
            }
        }
        self.fit();
    }

    /// Seconds a bucket spans.
    pub fn width_s(&self) -> i64 {
        1i64 << self.shift
    }
}

/// The worst event of a class (the longest; the first when none has a time).
#[derive(Debug, Clone)]
pub struct Sample {
    pub query: Box<[u8]>,
    pub query_time: Option<f64>,
    pub ts: Option<i64>,
    pub db: Option<Shared>,
    /// The values of its `$1`.. placeholders, as PostgreSQL logged them
    /// (`$1 = '5', $2 = NULL`).
    pub params: Option<Box<[u8]>>,
    pub file: u32,
    pub line: u64,
    pub offset: u64,
}

/// Ids of the attributes every event has a place for.
pub const QUERY_TIME: usize = 0;
pub const LOCK_TIME: usize = 1;
pub const ROWS_SENT: usize = 2;
pub const ROWS_EXAMINED: usize = 3;
pub const QUERY_LENGTH: usize = 4;
const FIXED: [&str; 5] = [
    "Query_time",
    "Lock_time",
    "Rows_sent",
    "Rows_examined",
    "Query_length",
];

/// Attributes that are about the event, not measures (pt-query-digest's
/// `--ignore-attributes`).
const NOT_MEASURES: &[&[u8]] = &[
    b"Thread_id",
    b"Id",
    b"timestamp",
    b"insert_id",
    b"last_insert_id",
    b"ip",
    b"port",
    b"Xid",
    b"server_id",
    b"offset",
    b"end_log_pos",
    b"exptime",
    b"flags",
    b"key",
    b"res",
    b"val",
];

/// The aggregate of one class (or of all events).
#[derive(Debug, Clone, Default)]
pub struct ClassStats {
    pub count: u64,
    attrs: Attrs,
    pub ts_min: Option<i64>,
    pub ts_max: Option<i64>,
    pub databases: StrCounts,
    pub users: StrCounts,
    pub hosts: StrCounts,
    pub sample: Option<Sample>,
    /// Events and time per time bucket.
    pub series: Series,
}

impl ClassStats {
    /// The statistics of every attribute (made from the kept values when
    /// there are few).
    fn full(&mut self, strings: &mut Interner) -> &mut Vec<Option<AttrStats>> {
        if let Attrs::Few(few) = &self.attrs {
            let mut v: Vec<Option<AttrStats>> = Vec::new();
            few.each(|id, val| attr_in(&mut v, id).record_val(val, strings));
            self.attrs = Attrs::Full(v);
        }
        match &mut self.attrs {
            Attrs::Full(v) => v,
            Attrs::Few(_) => unreachable!("made full above"),
        }
    }

    /// Records the values of one event (`count` already counts it).
    fn record(&mut self, e: &LogEvent<'_>, vals: &[(usize, Slot)], strings: &mut Interner) {
        if self.count <= FEW_EVENTS
            && let Attrs::Few(few) = &mut self.attrs
        {
            few.bytes.reserve(vals.len() * 12);
            for (id, v) in vals {
                few.push(*id, v.get(e), strings);
            }
            few.bytes.shrink_to_fit();
            return;
        }
        let full = self.full(strings);
        for (id, v) in vals {
            attr_in(full, *id).record_val(v.get(e), strings);
        }
    }

    fn add(
        &mut self,
        e: &LogEvent<'_>,
        vals: &[(usize, Slot)],
        file: u32,
        keep_sample: bool,
        strings: &mut Interner,
    ) {
        self.count += 1;
        self.record(e, vals, strings);
        if let Some(ts) = e.ts {
            self.ts_min = Some(self.ts_min.map_or(ts, |m| m.min(ts)));
            self.ts_max = Some(self.ts_max.map_or(ts, |m| m.max(ts)));
            self.series
                .add(ts.div_euclid(1_000_000), 1, e.query_time.unwrap_or(0.0));
        }
        if let Some(d) = &e.db {
            self.databases.record(d, 1, strings);
        }
        if let Some(u) = &e.user {
            self.users.record(u, 1, strings);
        }
        if let Some(h) = &e.host {
            self.hosts.record(h, 1, strings);
        }
        if keep_sample {
            // The longest; of equal ones the first in the log (as merge
            // chooses: events may come out of order, a statement waiting
            // for its duration or read in parallel).
            let worse = match &self.sample {
                None => true,
                Some(s) => match (s.query_time, e.query_time) {
                    (Some(w), Some(t)) => {
                        t > w || (t == w && (file, e.offset) < (s.file, s.offset))
                    }
                    (None, Some(_)) => true,
                    (Some(_), None) => false,
                    (None, None) => (file, e.offset) < (s.file, s.offset),
                },
            };
            if worse {
                self.sample = Some(Sample {
                    query: e.query.into(),
                    query_time: e.query_time,
                    ts: e.ts,
                    db: e.db.as_deref().map(|d| strings.get(d)),
                    params: e.params.as_deref().map(Into::into),
                    file,
                    line: e.line,
                    offset: e.offset,
                });
            }
        }
    }

    /// Adds `o`, whose attribute ids map to ours through `map`.
    fn merge(&mut self, o: &ClassStats, map: &[usize], strings: &mut Interner) {
        let before = self.count;
        self.count += o.count;
        match &o.attrs {
            Attrs::Few(f) => {
                if self.count <= FEW_EVENTS
                    && let Attrs::Few(mine) = &mut self.attrs
                {
                    f.each(|id, v| mine.push(map[id], v, strings));
                } else {
                    let full = self.full(strings);
                    f.each(|id, v| attr_in(full, map[id]).record_val(v, strings));
                }
            }
            Attrs::Full(attrs) => {
                let _ = before;
                let full = self.full(strings);
                for (i, a) in attrs.iter().enumerate() {
                    if let Some(a) = a {
                        attr_in(full, map[i]).merge(a);
                    }
                }
            }
        }
        self.ts_min = match (self.ts_min, o.ts_min) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.ts_max = match (self.ts_max, o.ts_max) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        self.databases.merge(&o.databases);
        self.users.merge(&o.users);
        self.hosts.merge(&o.hosts);
        self.series.merge(&o.series);
        if let Some(s) = &o.sample {
            let take = match &self.sample {
                None => true,
                Some(m) => match (m.query_time, s.query_time) {
                    (Some(a), Some(b)) => {
                        b > a || (b == a && (s.file, s.offset) < (m.file, m.offset))
                    }
                    (None, Some(_)) => true,
                    (Some(_), None) => false,
                    (None, None) => (s.file, s.offset) < (m.file, m.offset),
                },
            };
            if take {
                self.sample = Some(s.clone());
            }
        }
    }

    /// Renumbers the attributes (a class moved from another aggregate).
    fn remap(&mut self, map: &[usize], strings: &mut Interner) {
        match &mut self.attrs {
            Attrs::Few(f) => {
                let mut n = Few::default();
                f.each(|id, v| n.push(map[id], v, strings));
                *f = n;
            }
            Attrs::Full(v) => {
                let mut attrs = Vec::new();
                for (i, a) in v.drain(..).enumerate() {
                    if let Some(a) = a {
                        let to = map[i];
                        if attrs.len() <= to {
                            attrs.resize(to + 1, None);
                        }
                        attrs[to] = Some(a);
                    }
                }
                *v = attrs;
            }
        }
    }

    /// One attribute's statistics (made from the kept values when there are
    /// few).
    pub fn attr_stats(&self, id: usize) -> Option<Cow<'_, AttrStats>> {
        match &self.attrs {
            Attrs::Full(v) => v.get(id).and_then(Option::as_ref).map(Cow::Borrowed),
            Attrs::Few(f) => {
                let mut a: Option<AttrStats> = None;
                let mut strings = Interner::default();
                f.each(|i, v| {
                    if i == id {
                        a.get_or_insert_with(AttrStats::default)
                            .record_val(v, &mut strings);
                    }
                });
                a.map(Cow::Owned)
            }
        }
    }

    /// One attribute's numbers.
    pub fn num_stats(&self, id: usize) -> Option<Cow<'_, NumStats>> {
        match self.attr_stats(id)? {
            Cow::Borrowed(a) => a.num.as_ref().map(Cow::Borrowed),
            Cow::Owned(a) => a.num.map(Cow::Owned),
        }
    }

    /// The count, sum, min and max of one attribute's numbers (cheaper than
    /// [`ClassStats::num_stats`] while the values are few).
    pub fn num_summary(&self, id: usize) -> Option<(u64, f64, f64, f64)> {
        match &self.attrs {
            Attrs::Full(v) => v
                .get(id)
                .and_then(Option::as_ref)
                .and_then(|a| a.num.as_ref())
                .map(|n| (n.count, n.sum, n.min, n.max)),
            Attrs::Few(f) => {
                let mut s: Option<(u64, f64, f64, f64)> = None;
                f.each(|i, v| {
                    if let (true, Val::Num(x)) = (i == id, v) {
                        let e = s.get_or_insert((0, 0.0, f64::INFINITY, f64::NEG_INFINITY));
                        e.0 += 1;
                        e.1 += x;
                        e.2 = e.2.min(x);
                        e.3 = e.3.max(x);
                    }
                });
                s
            }
        }
    }
}

fn attr_in(v: &mut Vec<Option<AttrStats>>, id: usize) -> &mut AttrStats {
    if v.len() <= id {
        v.resize(id + 1, None);
    }
    v[id].get_or_insert_with(AttrStats::default)
}

/// The tables of an event's statement as `db.tbl` (`tbl` when neither the
/// statement nor the event names a database).
fn table_keys(e: &LogEvent<'_>) -> Vec<Vec<u8>> {
    let q = String::from_utf8_lossy(e.query);
    crate::tables::tables(&q)
        .into_iter()
        .map(|t| {
            let name = t.replace('`', "");
            match (&e.db, name.contains('.')) {
                (Some(db), false) => {
                    let mut k = db.to_vec();
                    k.push(b'.');
                    k.extend_from_slice(name.as_bytes());
                    k
                }
                _ => name.into_bytes(),
            }
        })
        .collect()
}

/// Events kept or dropped: by time (`--since`, `--until`) and by an
/// expression over each event's attributes (`--filter`).
#[derive(Debug, Clone, Default)]
pub struct TimeFilter {
    /// Microseconds since the epoch, inclusive.
    pub since: Option<i64>,
    /// Exclusive.
    pub until: Option<i64>,
    /// `--filter`: an event is kept when it holds (see [`event_value`]).
    pub expr: Option<std::sync::Arc<dbmeter_filter::Expr>>,
}

impl TimeFilter {
    fn keeps_time(&self, ts: Option<i64>) -> bool {
        if self.since.is_none() && self.until.is_none() {
            return true;
        }
        let Some(t) = ts else { return false };
        self.since.is_none_or(|s| t >= s) && self.until.is_none_or(|u| t < u)
    }

    fn keeps(&self, e: &LogEvent<'_>) -> bool {
        self.keeps_time(e.ts)
            && self
                .expr
                .as_ref()
                .is_none_or(|x| x.eval(&|name: &str| event_value(e, name)))
    }
}

/// The value of `name` in an event, for `--filter`: `Query_time` and
/// `Lock_time` (seconds), `Rows_sent`, `Rows_examined`, `Query_length`,
/// `db`, `user`, `host`, `arg` (the statement), `fingerprint`,
/// `thread_id`, `ts` (`YYYY-MM-DD HH:MM:SS`, UTC), `admin` (1 for an
/// administrator command), and every other attribute of the log by its name
/// (a number when it reads as one). Names are matched ignoring case.
pub fn event_value(e: &LogEvent<'_>, name: &str) -> Option<dbmeter_filter::Value> {
    use dbmeter_filter::Value;
    let text = |b: &[u8]| Value::Str(String::from_utf8_lossy(b).into_owned());
    let n = name.to_ascii_lowercase();
    Some(match n.as_str() {
        "query_time" => Value::Num(e.query_time?),
        "lock_time" => Value::Num(e.lock_time?),
        "rows_sent" => Value::Num(e.rows_sent? as f64),
        "rows_examined" => Value::Num(e.rows_examined? as f64),
        "query_length" => Value::Num(e.query.len() as f64),
        "db" => text(e.db.as_deref()?),
        "user" => text(e.user.as_deref()?),
        "host" => text(e.host.as_deref()?),
        "arg" | "query" => text(e.query),
        "fingerprint" => text(&if e.postgres {
            pg_fingerprint_bytes(e.query)
        } else {
            fingerprint_bytes(e.query)
        }),
        "thread_id" => Value::Num(e.thread_id? as f64),
        "ts" => Value::Str(crate::event::format_ts(e.ts?)),
        "admin" => Value::Num(if e.admin { 1.0 } else { 0.0 }),
        _ => {
            let (_, v) = e
                .attrs
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name.as_bytes()))?;
            let s = String::from_utf8_lossy(v);
            match s.trim().parse::<f64>() {
                Ok(x) if x.is_finite() => Value::Num(x),
                _ => Value::Str(s.into_owned()),
            }
        }
    })
}

/// The classes of a log (or of a part of it) and the overall aggregate.
#[derive(Debug, Clone)]
pub struct Aggregate {
    pub group_by: GroupBy,
    pub filter: TimeFilter,
    /// Attribute names by id.
    pub names: Vec<Box<[u8]>>,
    index: HashMap<Box<[u8]>, usize>,
    /// By class key (the fingerprint, or the db, user, host). Boxed: the
    /// table's free slots cost a pointer, not a class.
    pub classes: HashMap<Box<[u8]>, Box<ClassStats>>,
    pub global: ClassStats,
    /// Events read, and events left out by --since/--until.
    pub events_read: u64,
    pub events_filtered: u64,
    /// The strings the classes share.
    pub strings: Interner,
    ids: Vec<usize>,
    vals: Vec<(usize, Slot)>,
    last_attrs: Vec<(Box<[u8]>, usize)>,
    key: Vec<u8>,
}

impl Aggregate {
    pub fn new(group_by: GroupBy, filter: TimeFilter) -> Aggregate {
        let mut a = Aggregate {
            group_by,
            filter,
            names: Vec::new(),
            index: HashMap::new(),
            classes: HashMap::new(),
            global: ClassStats::default(),
            events_read: 0,
            events_filtered: 0,
            strings: Interner::default(),
            ids: Vec::new(),
            vals: Vec::new(),
            last_attrs: Vec::new(),
            key: Vec::new(),
        };
        for n in FIXED {
            a.id_of(n.as_bytes());
        }
        a
    }

    fn id_of(&mut self, name: &[u8]) -> usize {
        if let Some(i) = self.index.get(name) {
            return *i;
        }
        let i = self.names.len();
        self.names.push(name.into());
        self.index.insert(name.into(), i);
        i
    }

    pub fn id(&self, name: &str) -> Option<usize> {
        self.index.get(name.as_bytes()).copied()
    }

    /// Adds one event of input number `file`.
    pub fn add(&mut self, e: &LogEvent<'_>, file: u32) {
        self.events_read += 1;
        if !self.filter.keeps(e) {
            self.events_filtered += 1;
            return;
        }
        let table_keys = if self.group_by == GroupBy::Table {
            table_keys(e)
        } else {
            Vec::new()
        };
        let has_key = match self.group_by {
            GroupBy::Fingerprint => true,
            GroupBy::Db => e.db.is_some(),
            GroupBy::User => e.user.is_some(),
            GroupBy::Host => e.host.is_some(),
            GroupBy::Table => !table_keys.is_empty(),
        };
        if !has_key {
            return;
        }
        let mut ids = std::mem::take(&mut self.ids);
        ids.clear();
        // Events of a log mostly have the same attributes in the same order:
        // the last event's names first, a hash lookup when they differ.
        let mut last = std::mem::take(&mut self.last_attrs);
        for (j, (k, _)) in e.attrs.iter().enumerate() {
            let id = match last.get(j) {
                Some((name, id)) if **name == **k => *id,
                _ => {
                    let id = if NOT_MEASURES.contains(k) {
                        usize::MAX
                    } else {
                        self.id_of(k)
                    };
                    last.truncate(j);
                    last.push(((*k).into(), id));
                    id
                }
            };
            ids.push(id);
        }
        self.last_attrs = last;
        // The event's values, read once for its class and the overall.
        let mut vals = std::mem::take(&mut self.vals);
        vals.clear();
        if let Some(t) = e.query_time {
            vals.push((QUERY_TIME, Slot::Num(t)));
        }
        if let Some(t) = e.lock_time {
            vals.push((LOCK_TIME, Slot::Num(t)));
        }
        // pt-query-digest counts no rows for administrator commands.
        let rows = |v: Option<u64>| if e.admin { v.map(|_| 0) } else { v };
        if let Some(r) = rows(e.rows_sent) {
            vals.push((ROWS_SENT, Slot::Num(r as f64)));
        }
        if let Some(r) = rows(e.rows_examined) {
            vals.push((ROWS_EXAMINED, Slot::Num(r as f64)));
        }
        vals.push((QUERY_LENGTH, Slot::Num(e.query.len() as f64)));
        for (j, ((k, v), id)) in e.attrs.iter().zip(&ids).enumerate() {
            if *id == usize::MAX {
                continue;
            }
            if e.admin && (*k == b"Rows_affected" || *k == b"Rows_read") {
                vals.push((*id, Slot::Num(0.0)));
            } else {
                vals.push((*id, Slot::of(v, j)));
            }
        }
        let strings = &mut self.strings;
        let key: &[u8] = match self.group_by {
            GroupBy::Fingerprint => {
                self.key = if e.postgres {
                    pg_fingerprint_bytes(e.query)
                } else {
                    fingerprint_bytes(e.query)
                };
                &self.key
            }
            GroupBy::Db => match &e.db {
                Some(d) => d,
                None => unreachable!("checked above"),
            },
            GroupBy::User => match &e.user {
                Some(d) => d,
                None => unreachable!("checked above"),
            },
            GroupBy::Host => match &e.host {
                Some(d) => d,
                None => unreachable!("checked above"),
            },
            GroupBy::Table => {
                for k in &table_keys {
                    match self.classes.get_mut(k.as_slice()) {
                        Some(c) => c.add(e, &vals, file, true, strings),
                        None => {
                            let mut c = Box::<ClassStats>::default();
                            c.add(e, &vals, file, true, strings);
                            self.classes.insert(k.as_slice().into(), c);
                        }
                    }
                }
                self.global.add(e, &vals, file, false, strings);
                self.ids = ids;
                self.vals = vals;
                return;
            }
        };
        match self.classes.get_mut(key) {
            Some(c) => c.add(e, &vals, file, true, strings),
            None => {
                let mut c = Box::<ClassStats>::default();
                c.add(e, &vals, file, true, strings);
                self.classes.insert(key.into(), c);
            }
        }
        self.global.add(e, &vals, file, false, strings);
        self.ids = ids;
        self.vals = vals;
    }

    /// Adds another aggregate (of another part of the input).
    pub fn merge(&mut self, o: Aggregate) {
        let map: Vec<usize> = o.names.iter().map(|n| self.id_of(n)).collect();
        self.events_read += o.events_read;
        self.events_filtered += o.events_filtered;
        let strings = &mut self.strings;
        self.global.merge(&o.global, &map, strings);
        let same_ids = map.iter().enumerate().all(|(i, m)| i == *m);
        for (k, mut c) in o.classes {
            match self.classes.get_mut(&k) {
                Some(m) => m.merge(&c, &map, strings),
                None => {
                    // Moved, not copied: a log of many classes is not held twice.
                    if !same_ids {
                        c.remap(&map, strings);
                    }
                    self.classes.insert(k, c);
                }
            }
        }
    }

    /// How many classes it holds.
    pub fn len(&self) -> usize {
        self.classes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.classes.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_keeps_three_digits() {
        let mut h = Hist::default();
        for v in [1u64, 2047, 2048, 123_456, 999_999_999] {
            h.record(v);
            let k = key_of(v);
            let back = value_of(k);
            let err = (back as f64 - v as f64).abs() / v as f64;
            assert!(err <= 1.0 / 2048.0, "{v} -> {back}");
        }
        assert_eq!(h.quantile(0.0, 5), 1);
        assert_eq!(h.quantile(0.4, 5), 2047);
        assert_eq!(h.decades(), [1, 0, 0, 2, 0, 1, 0, 1]);
        let mut keys: Vec<u32> = [5u64, 3000, 3001, 70_000, 1 << 40]
            .iter()
            .map(|v| key_of(*v))
            .collect();
        let sorted = keys.clone();
        keys.sort();
        assert_eq!(keys, sorted, "keys follow values");
    }

    #[test]
    fn histogram_from_a_list_to_a_map() {
        // 30 buckets in the list, then 200 in the map: the same answers.
        for n in [30u64, 200] {
            let mut a = Hist::default();
            let mut b = Hist::default();
            for v in 1..=n {
                a.record(v);
                a.record(v);
                b.record(n + 1 - v);
            }
            a.merge(&b);
            assert_eq!(a.buckets(), n as usize);
            assert_eq!(a.quantile(0.5, 3 * n), n / 2);
            assert_eq!(a.quantile(1.0, 3 * n), n);
            assert_eq!(a.decades().iter().sum::<u64>(), 3 * n);
            assert_eq!(
                matches!(a.buckets, Some(Buckets::Many(_))),
                n > FEW_BUCKETS as u64
            );
        }
        // A count past 2^32 in one bucket.
        let mut h = Hist::default();
        h.record(5);
        let big = Hist {
            run_key: key_of(5),
            run_n: 1 << 33,
            ..Default::default()
        };
        h.merge(&big);
        assert_eq!(h.sorted(), [(5, (1 << 33) + 1)]);
    }

    #[test]
    fn few_values_are_kept_bit_for_bit() {
        let mut f = Few::default();
        let mut strings = Interner::default();
        let vals = [0.000490, 12.5, 1e-7, 0.1 + 0.2, 3.0, -2.0, 1e300, f64::NAN];
        for (i, v) in vals.iter().enumerate() {
            f.push(i, Val::Num(*v), &mut strings);
        }
        f.push(300, Val::Word(b"InnoDB"), &mut strings);
        f.push(301, Val::Yes, &mut strings);
        let mut back: Vec<(usize, String)> = Vec::new();
        f.each(|id, v| {
            back.push((
                id,
                match v {
                    Val::Num(x) => format!("n{}", x.to_bits()),
                    Val::Word(w) => format!("w{}", String::from_utf8_lossy(w)),
                    Val::Yes => "yes".into(),
                    Val::No => "no".into(),
                },
            ))
        });
        for (i, v) in vals.iter().enumerate() {
            assert_eq!(back[i], (i, format!("n{}", v.to_bits())), "{v}");
        }
        assert_eq!(back[8], (300, "wInnoDB".to_string()));
        assert_eq!(back[9], (301, "yes".to_string()));
        // The decimals logs write take a few bytes: 0.000490 is 49e-5.
        let mut g = Few::default();
        g.push(3, Val::Num(0.000490), &mut strings);
        assert_eq!(g.bytes, [3, 5, 49]);
    }

    #[test]
    fn numbers_as_the_standard_parser_reads_them() {
        for v in [
            "0",
            "7",
            "0.000255",
            "12.5",
            "0.1",
            "123456789.123456",
            "1e3",
            "-2",
            "0.30000000000000004",
            "1.",
            ".5",
        ] {
            let want: Option<f64> = v.parse().ok().filter(|_| !v.ends_with('.') || v.len() > 1);
            assert_eq!(number(v.as_bytes()), want, "{v}");
        }
        assert_eq!(number(b"No"), None);
        assert_eq!(number(b"1A03"), None);
    }

    #[test]
    fn num_stats_percentiles_and_merge() {
        let mut a = NumStats::default();
        let mut b = NumStats::default();
        for i in 1..=100 {
            let v = i as f64 / 1000.0;
            if i % 2 == 0 { a.record(v) } else { b.record(v) }
        }
        a.merge(&b);
        assert_eq!(a.count, 100);
        assert!((a.sum - 5.05).abs() < 1e-9);
        assert_eq!(a.min, 0.001);
        assert_eq!(a.max, 0.1);
        assert!(
            (a.quantile(0.95) - 0.095).abs() < 0.095 / 1000.0,
            "{}",
            a.quantile(0.95)
        );
        assert!((a.quantile(0.5) - 0.050).abs() < 0.05 / 1000.0);
        assert!((a.stddev() - 0.028866).abs() < 1e-5, "{}", a.stddev());
    }

    fn ev(q: &'static str, t: f64, db: &'static str) -> LogEvent<'static> {
        LogEvent {
            query: q.as_bytes(),
            query_time: Some(t),
            db: Some(std::borrow::Cow::Borrowed(db.as_bytes())),
            ts: Some((t * 1e6) as i64),
            attrs: vec![
                (b"Rows_affected", b"2"),
                (b"Full_scan", b"Yes"),
                (b"Thread_id", b"9"),
            ],
            ..Default::default()
        }
    }

    #[test]
    fn classes_merge_as_if_read_together() {
        let all = [
            ev("select 1", 0.5, "a"),
            ev("select 2", 0.7, "b"),
            ev("update t set x=1", 0.1, "a"),
            ev("SELECT 3", 0.2, "a"),
        ];
        let mut one = Aggregate::new(GroupBy::Fingerprint, TimeFilter::default());
        for e in &all {
            one.add(e, 0);
        }
        let mut x = Aggregate::new(GroupBy::Fingerprint, TimeFilter::default());
        let mut y = Aggregate::new(GroupBy::Fingerprint, TimeFilter::default());
        x.add(&all[2], 0);
        x.add(&all[1], 0);
        y.add(&all[0], 0);
        y.add(&all[3], 0);
        x.merge(y);
        for agg in [&one, &x] {
            assert_eq!(agg.classes.len(), 2);
            let c = &agg.classes[&b"select ?"[..]];
            assert_eq!(c.count, 3);
            assert_eq!(c.sample.as_ref().unwrap().query_time, Some(0.7));
            let ra = agg.id("Rows_affected").unwrap();
            assert_eq!(c.attr_stats(ra).unwrap().num.as_ref().unwrap().sum, 6.0);
            let fs = agg.id("Full_scan").unwrap();
            assert_eq!(c.attr_stats(fs).unwrap().yes, 3);
            assert!(agg.id("Thread_id").is_none());
            assert_eq!(
                c.databases.sorted(),
                [("a".to_string(), 2), ("b".to_string(), 1)]
            );
            assert_eq!(c.ts_min, Some(200_000));
            assert_eq!(agg.global.count, 4);
        }
        let mut by_db = Aggregate::new(
            GroupBy::Db,
            TimeFilter {
                since: Some(150_000),
                until: None,
                expr: None,
            },
        );
        for e in &all {
            by_db.add(e, 0);
        }
        assert_eq!(by_db.classes[&b"a"[..]].count, 2);
        assert_eq!(by_db.events_filtered, 1);
        // --filter: an expression over each event's attributes.
        let only_b = TimeFilter {
            expr: Some(std::sync::Arc::new(
                dbmeter_filter::Expr::parse("DB = b or fingerprint ~ 'nothing'").unwrap(),
            )),
            ..TimeFilter::default()
        };
        let mut filtered = Aggregate::new(GroupBy::Db, only_b);
        for e in &all {
            filtered.add(e, 0);
        }
        let keys: Vec<&[u8]> = filtered.classes.keys().map(|k| &k[..]).collect();
        assert_eq!(keys, [&b"b"[..]]);
        assert_eq!(
            filtered.events_filtered + filtered.global.count,
            all.len() as u64
        );
        let mut by_table = Aggregate::new(GroupBy::Table, TimeFilter::default());
        by_table.add(
            &ev("select * from t1 join other.t2 using (id)", 0.1, "a"),
            0,
        );
        by_table.add(&ev("update t1 set x = 1", 0.1, "b"), 0);
        by_table.add(&ev("select 1", 0.1, "b"), 0);
        let mut keys: Vec<_> = by_table
            .classes
            .iter()
            .map(|(k, c)| (String::from_utf8_lossy(k).into_owned(), c.count))
            .collect();
        keys.sort();
        assert_eq!(
            keys,
            [
                ("a.t1".into(), 1),
                ("b.t1".into(), 1),
                ("other.t2".into(), 1)
            ]
        );
        // A statement without a table is left out, as an event without a database is by db.
        assert_eq!(by_table.global.count, 2);
    }
}
