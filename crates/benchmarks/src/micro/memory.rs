//! `memory`: sysbench's memory test. One event is one operation on a
//! block of `--memory-block-size` bytes, a 64-bit word at a time: read
//! every word, write every word, or neither (`--memory-oper`), in order or
//! at random offsets (`--memory-access-mode`), on one block all users
//! share or a block per user (`--memory-scope`), optionally in huge pages
//! (`--memory-hugetlb`).
//!
//! As in sysbench 1.0.20, the run ends when `--memory-total-size` has been
//! processed: each user does its share, total / block / threads
//! operations (rounded down), and `--events` is ignored: sysbench's test
//! replaces the event limit with its own (`sysbench memory
//! --memory-block-size=4K --memory-total-size=1G --events=1 --time=0
//! --threads=2` runs 2 × 131,072 events). A total of 0 has no limit.

use super::{NOTICE, SbRandom, compiler_barrier, invalid, preamble, sysbench_verbosity};
use crate::benchmark::{BenchError, Benchmark, Context, RunPlan, Verb, no_such_verb};
use crate::options::{OptKind, OptSpec, OptValues, opt};
use dbmeter_engine::{EngineConfig, EventError, Flow, RunResult, Tally, User, UserFactory};
use dbmeter_env::Warning;
use dbmeter_result::{Layout, RunDocument, RunEvent};
use dbmeter_stats::Measure;
use serde::{Deserialize, Serialize};
use std::ptr::NonNull;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

pub struct Memory;

const OPTIONS: &[OptSpec] = &[
    opt(
        "memory-block-size",
        OptKind::Size,
        "1K",
        "size of memory block for test",
    )
    .checked_by_benchmark(),
    opt(
        "memory-total-size",
        OptKind::Size,
        "100G",
        "total size of data to transfer",
    )
    .checked_by_benchmark(),
    opt(
        "memory-scope",
        OptKind::Str,
        "global",
        "memory access scope {global,local}",
    ),
    opt(
        "memory-hugetlb",
        OptKind::Bool,
        "off",
        "allocate memory from HugeTLB pool",
    ),
    opt(
        "memory-oper",
        OptKind::Str,
        "write",
        "type of memory operations {read, write, none}",
    ),
    opt(
        "memory-access-mode",
        OptKind::Str,
        "seq",
        "memory access mode {seq,rnd}",
    ),
];

/// What the bytes of a run count: the block's bytes read or written by
/// each operation (none for `--memory-oper=none`).
pub const BYTES: Measure = Measure::new("bytes_transferred", "transferred", "byte", true);

const MIB: f64 = 1024.0 * 1024.0;
const WORD: usize = std::mem::size_of::<u64>();

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// One block for all users.
    Global,
    /// A block per user.
    Local,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Oper {
    Read,
    Write,
    None,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    Seq,
    Rnd,
}

/// The test's settings, read once.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MemoryConfig {
    /// Bytes, a power of two from 8.
    pub block_size: usize,
    /// Bytes; 0: no limit.
    pub total_size: u64,
    pub scope: Scope,
    pub hugetlb: bool,
    pub oper: Oper,
    pub access: Access,
}

/// A size as sysbench writes one: digits, then at most one of K, M, G,
/// T, P, E (powers of 1024, either case). sysbench reads any other text as
/// 0 (and a total of 0 as no limit); dbmeter refuses it.
pub fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let n: u64 = t[..digits].parse().ok()?;
    let shift = match t[digits..].to_ascii_uppercase().as_str() {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        "P" => 50,
        "E" => 60,
        _ => return None,
    };
    n.checked_mul(1u64 << shift)
}

/// The largest block: 1 TiB (its allocation is checked against the
/// memory available before the run).
const MAX_BLOCK: u64 = 1 << 40;

impl MemoryConfig {
    /// Reads and checks the options; errors are worded for `layout`
    /// (sysbench's `Invalid value for memory-block-size: 3` in its own).
    pub fn from_options(o: &OptValues, layout: Layout) -> Result<MemoryConfig, BenchError> {
        let bad = |name: &str, expected: &str| {
            let text = o.str(name);
            invalid(
                layout,
                format!("Invalid value for {name}: {text}"),
                name,
                text,
                expected,
            )
        };
        let block_size = parse_size(o.str("memory-block-size"))
            .filter(|b| (WORD as u64..=MAX_BLOCK).contains(b) && b.is_power_of_two())
            .ok_or_else(|| {
                bad(
                    "memory-block-size",
                    "a power of two from 8 bytes to 1T (K, M, G, T allowed), e.g. 1K",
                )
            })? as usize;
        let total_size = parse_size(o.str("memory-total-size")).ok_or_else(|| {
            bad(
                "memory-total-size",
                "a size in bytes (K, M, G, T, P, E allowed), or 0 for no limit",
            )
        })?;
        let scope = match o.str("memory-scope") {
            "global" => Scope::Global,
            "local" => Scope::Local,
            _ => return Err(bad("memory-scope", "global or local")),
        };
        let oper = match o.str("memory-oper") {
            "read" => Oper::Read,
            "write" => Oper::Write,
            "none" => Oper::None,
            _ => return Err(bad("memory-oper", "read, write or none")),
        };
        let access = match o.str("memory-access-mode") {
            "seq" => Access::Seq,
            "rnd" => Access::Rnd,
            _ => return Err(bad("memory-access-mode", "seq or rnd")),
        };
        Ok(MemoryConfig {
            block_size,
            total_size,
            scope,
            hugetlb: o.bool("memory-hugetlb"),
            oper,
            access,
        })
    }

    /// Operations each of `threads` users does; None without a limit.
    pub fn ops_per_user(&self, threads: usize) -> Option<u64> {
        (self.total_size > 0)
            .then(|| self.total_size / self.block_size as u64 / threads.max(1) as u64)
    }

    /// The bytes the users touch: one block, or one per user.
    pub fn working_set(&self, threads: usize) -> u64 {
        match self.scope {
            Scope::Global => self.block_size as u64,
            Scope::Local => self.block_size as u64 * threads as u64,
        }
    }
}

/// A block of memory, zeroed (every page touched) before the run, freed
/// when the last user is gone.
struct Block {
    ptr: NonNull<AtomicU64>,
    bytes: usize,
    /// Mapped from the HugeTLB pool (this length), or from the heap.
    mapped: Option<usize>,
}

// SAFETY: the block is read and written only through atomics (relaxed
// loads and stores, plain moves), by any thread; it is freed once, on drop.
unsafe impl Send for Block {}
// SAFETY: as above.
unsafe impl Sync for Block {}

impl Block {
    fn layout(bytes: usize) -> Option<std::alloc::Layout> {
        std::alloc::Layout::from_size_align(bytes, page_size()).ok()
    }

    /// A block from the heap, aligned to a page (sysbench's
    /// `sb_memalign`); None when there is not that much memory.
    fn heap(bytes: usize) -> Option<Block> {
        let layout = Block::layout(bytes)?;
        // SAFETY: the layout's size is at least 8.
        let p = NonNull::new(unsafe { std::alloc::alloc(layout) })?;
        let block = Block {
            ptr: p.cast(),
            bytes,
            mapped: None,
        };
        block.zero();
        Some(block)
    }

    /// A block mapped from the HugeTLB pool, `len` bytes (whole huge
    /// pages); the OS error when the pool cannot give them.
    fn huge(bytes: usize, len: usize) -> Result<Block, std::io::Error> {
        // SAFETY: an anonymous private mapping at an address the kernel
        // chooses; the result is checked.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_HUGETLB,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let Some(p) = NonNull::new(p.cast::<AtomicU64>()) else {
            return Err(std::io::Error::from_raw_os_error(libc::ENOMEM));
        };
        let block = Block {
            ptr: p,
            bytes,
            mapped: Some(len),
        };
        block.zero();
        Ok(block)
    }

    /// Writes zeros over the whole block, as sysbench's memset: every
    /// page is in memory before the run.
    fn zero(&self) {
        // The pointer goes through black_box so that the allocation and
        // the zeroing are not turned into a calloc that touches nothing.
        let p = std::hint::black_box(self.ptr.as_ptr().cast::<u8>());
        // SAFETY: the block is `bytes` long and nobody else uses it yet.
        unsafe { std::ptr::write_bytes(p, 0, self.bytes) };
    }

    fn words(&self) -> Words {
        Words {
            ptr: self.ptr,
            len: self.bytes / WORD,
        }
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        match self.mapped {
            // SAFETY: the mapping made in `huge`, unmapped once.
            Some(len) => unsafe {
                libc::munmap(self.ptr.as_ptr().cast(), len);
            },
            None => {
                if let Some(layout) = Block::layout(self.bytes) {
                    // SAFETY: allocated in `heap` with this layout.
                    unsafe { std::alloc::dealloc(self.ptr.as_ptr().cast(), layout) };
                }
            }
        }
    }
}

fn page_size() -> usize {
    // SAFETY: sysconf reads a constant of the system.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 { p as usize } else { 4096 }
}

/// The words of a block, as a user sees them.
#[derive(Clone, Copy)]
struct Words {
    ptr: NonNull<AtomicU64>,
    len: usize,
}

// SAFETY: a view of a `Block` that the user's `Arc` keeps alive; only
// atomics go through it.
unsafe impl Send for Words {}

/// Keeps `v` as if used (it must be in a register), at no cost: what
/// sysbench's loads through `ck_pr_load_64` are, kept by the compiler.
#[inline(always)]
fn keep(v: u64) {
    // SAFETY: an empty block of assembly that reads a register.
    unsafe { std::arch::asm!("/* {0} */", in(reg) v, options(nomem, nostack, preserves_flags)) }
}

/// sysbench's `ck_pr_load_64`: one 64-bit `mov` from memory that the
/// compiler neither drops nor merges with its neighbours (a loop of them
/// stays a loop of single loads, as gcc compiles sysbench's).
#[inline(always)]
fn load(w: &AtomicU64) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        let v: u64;
        // SAFETY: reads 8 aligned bytes of a live block.
        unsafe {
            std::arch::asm!(
                "mov {v}, qword ptr [{p}]",
                v = out(reg) v,
                p = in(reg) w.as_ptr(),
                options(nostack, preserves_flags, readonly)
            );
        }
        v
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        w.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// sysbench's `ck_pr_store_64`: one 64-bit `mov` to memory, kept as it
/// is (not unrolled or merged with its neighbours).
#[inline(always)]
fn store(w: &AtomicU64, v: u64) {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: writes 8 aligned bytes of a live block, which other
        // threads read and write only through these moves (on x86-64 an
        // aligned 64-bit move is atomic).
        unsafe {
            std::arch::asm!(
                "mov qword ptr [{p}], {v}",
                p = in(reg) w.as_ptr(),
                v = in(reg) v,
                options(nostack, preserves_flags)
            );
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        w.store(v, std::sync::atomic::Ordering::Relaxed)
    }
}

/// `f(0)`, `f(1)`... `f(n - 1)`, as gcc compiles sysbench's loops over a
/// block (sysbench builds with `-O2 -funroll-loops`): the first n % 8 one
/// at a time, then eight a turn (`eight(i)` does `f(i)`..`f(i + 7)`). The
/// compiler does not unroll loops with assembly in them by itself, so this
/// is done by hand.
#[inline(always)]
fn unrolled(n: usize, mut f: impl FnMut(usize), mut eight: impl FnMut(usize)) {
    let head = n % 8;
    for i in 0..head {
        f(i);
    }
    let mut i = head;
    while i < n {
        eight(i);
        i += 8;
    }
}

/// [`unrolled`] with eight calls of `f` a turn.
#[inline(always)]
fn unrolled_each(n: usize, mut f: impl FnMut(usize)) {
    let head = n % 8;
    for i in 0..head {
        f(i);
    }
    let mut i = head;
    while i < n {
        times8(i, &mut f);
        i += 8;
    }
}

/// Eight calls of `f`, from `i`.
#[inline(always)]
fn times8(i: usize, mut f: impl FnMut(usize)) {
    f(i);
    f(i + 1);
    f(i + 2);
    f(i + 3);
    f(i + 4);
    f(i + 5);
    f(i + 6);
    f(i + 7);
}

/// Eight of sysbench's loads, of the words from `w` on: eight moves with
/// a displacement each, as gcc unrolls them.
#[inline(always)]
fn load8(w: &AtomicU64) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: reads 64 aligned bytes of a live block (the caller's `w` is
    // followed by seven more words of it).
    unsafe {
        std::arch::asm!(
            "mov {t}, qword ptr [{p}]",
            "mov {t}, qword ptr [{p} + 8]",
            "mov {t}, qword ptr [{p} + 16]",
            "mov {t}, qword ptr [{p} + 24]",
            "mov {t}, qword ptr [{p} + 32]",
            "mov {t}, qword ptr [{p} + 40]",
            "mov {t}, qword ptr [{p} + 48]",
            "mov {t}, qword ptr [{p} + 56]",
            p = in(reg) w.as_ptr(),
            t = out(reg) _,
            options(nostack, preserves_flags, readonly)
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let p = w as *const AtomicU64;
        // SAFETY: as above.
        times8(0, |k| keep(load(unsafe { &*p.add(k) })));
    }
}

/// Eight of sysbench's stores from `w` on, each word's distance to the
/// block's end `end` (in words), computed as gcc computes sysbench's
/// `end - buf` for each: the end minus the word's address, shifted.
#[inline(always)]
fn store8(w: &AtomicU64, end: *const AtomicU64) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: writes 64 aligned bytes of a live block (as `load8`).
    unsafe {
        std::arch::asm!(
            "mov {t}, {end}",
            "sub {t}, {p}",
            "sar {t}, 3",
            "mov qword ptr [{p}], {t}",
            "lea {a}, [{p} + 8]",
            "mov {t}, {end}",
            "sub {t}, {a}",
            "sar {t}, 3",
            "mov qword ptr [{p} + 8], {t}",
            "lea {a}, [{p} + 16]",
            "mov {t}, {end}",
            "sub {t}, {a}",
            "sar {t}, 3",
            "mov qword ptr [{p} + 16], {t}",
            "lea {a}, [{p} + 24]",
            "mov {t}, {end}",
            "sub {t}, {a}",
            "sar {t}, 3",
            "mov qword ptr [{p} + 24], {t}",
            "lea {a}, [{p} + 32]",
            "mov {t}, {end}",
            "sub {t}, {a}",
            "sar {t}, 3",
            "mov qword ptr [{p} + 32], {t}",
            "lea {a}, [{p} + 40]",
            "mov {t}, {end}",
            "sub {t}, {a}",
            "sar {t}, 3",
            "mov qword ptr [{p} + 40], {t}",
            "lea {a}, [{p} + 48]",
            "mov {t}, {end}",
            "sub {t}, {a}",
            "sar {t}, 3",
            "mov qword ptr [{p} + 48], {t}",
            "lea {a}, [{p} + 56]",
            "mov {t}, {end}",
            "sub {t}, {a}",
            "sar {t}, 3",
            "mov qword ptr [{p} + 56], {t}",
            p = in(reg) w.as_ptr(),
            end = in(reg) end,
            a = out(reg) _,
            t = out(reg) _,
            options(nostack)
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let p = w as *const AtomicU64;
        times8(0, |k| {
            // SAFETY: as above.
            let word = unsafe { p.add(k) };
            // SAFETY: both point into the block.
            let left = unsafe { end.offset_from(word) } as u64;
            store(unsafe { &*word }, left);
        });
    }
}

impl Words {
    /// The `i`th word; `i` below `len`.
    #[inline(always)]
    fn at(&self, i: usize) -> &AtomicU64 {
        debug_assert!(i < self.len);
        // SAFETY: `i` is below the block's length in words (the callers
        // take `i` from their loop or from sysbench's random offset,
        // which is below it), and the block outlives the user.
        unsafe { &*self.ptr.as_ptr().add(i) }
    }

    #[inline(never)]
    fn seq_read(self) {
        unrolled(self.len, |i| keep(load(self.at(i))), |i| load8(self.at(i)));
    }

    #[inline(never)]
    fn seq_write(self) {
        // sysbench writes each word's distance to the block's end.
        unrolled(
            self.len,
            |i| store(self.at(i), (self.len - i) as u64),
            // SAFETY: one past the block's last word.
            |i| store8(self.at(i), unsafe { self.ptr.as_ptr().add(self.len) }),
        );
    }

    #[inline(never)]
    fn seq_none(self) {
        unrolled_each(self.len, |_| compiler_barrier());
    }

    /// sysbench's random offset: a uniform double times the words.
    #[inline(always)]
    fn offset(&self, rng: &mut SbRandom, words: f64) -> usize {
        // SAFETY: the product is finite and in [0, len) (the double is
        // below 1), as sysbench's cast assumes.
        unsafe { (rng.uniform_double() * words).to_int_unchecked::<usize>() }
    }

    #[inline(never)]
    fn rnd_read(self, rng: &mut SbRandom) {
        let words = self.len as f64;
        unrolled_each(self.len, |_| {
            let o = self.offset(rng, words);
            keep(load(self.at(o)));
        });
    }

    #[inline(never)]
    fn rnd_write(self, rng: &mut SbRandom) {
        let words = self.len as f64;
        // sysbench writes the byte offset of the turn.
        unrolled_each(self.len, |i| {
            let o = self.offset(rng, words);
            store(self.at(o), (i * WORD) as u64);
        });
    }

    #[inline(never)]
    fn rnd_none(self, rng: &mut SbRandom) {
        // sysbench computes an offset it never uses; gcc keeps only the
        // draws, and so does this.
        unrolled_each(self.len, |_| {
            let _ = rng.uniform_double();
        });
    }
}

struct MemoryUser {
    /// Keeps the blocks alive.
    _blocks: Arc<Vec<Block>>,
    words: Words,
    oper: Oper,
    access: Access,
    /// Operations left; None without a limit.
    left: Option<u64>,
    /// The bytes an operation transfers, added to [`BYTES`] (0 for none).
    bytes: u64,
    rng: SbRandom,
}

impl User for MemoryUser {
    fn event(&mut self, tally: &mut Tally) -> Result<Flow, EventError> {
        let w = self.words;
        match (self.oper, self.access) {
            (Oper::Read, Access::Seq) => w.seq_read(),
            (Oper::Write, Access::Seq) => w.seq_write(),
            (Oper::None, Access::Seq) => w.seq_none(),
            (Oper::Read, Access::Rnd) => w.rnd_read(&mut self.rng),
            (Oper::Write, Access::Rnd) => w.rnd_write(&mut self.rng),
            (Oper::None, Access::Rnd) => w.rnd_none(&mut self.rng),
        }
        tally.measures[0] += self.bytes;
        match &mut self.left {
            Some(n) => {
                *n -= 1;
                Ok(if *n == 0 {
                    Flow::UserDone
                } else {
                    Flow::Continue
                })
            }
            None => Ok(Flow::Continue),
        }
    }
}

struct MemoryUsers {
    blocks: Arc<Vec<Block>>,
    cfg: MemoryConfig,
    ops: Option<u64>,
    seed: u64,
}

impl UserFactory for MemoryUsers {
    fn create(&self, user_id: usize) -> Result<Box<dyn User>, String> {
        let block = match self.cfg.scope {
            Scope::Global => self.blocks.first(),
            Scope::Local => self.blocks.get(user_id),
        }
        .ok_or_else(|| format!("memory: no block for user {user_id}"))?;
        Ok(Box::new(MemoryUser {
            _blocks: self.blocks.clone(),
            words: block.words(),
            oper: self.cfg.oper,
            access: self.cfg.access,
            left: self.ops,
            bytes: match self.cfg.oper {
                Oper::None => 0,
                _ => self.cfg.block_size as u64,
            },
            rng: SbRandom::for_user(self.seed, user_id),
        }))
    }
}

/// The document's `memory` section: the settings and what they gave.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MemorySection {
    pub block_size: u64,
    /// 0: no limit.
    pub total_size: u64,
    pub scope: String,
    pub oper: String,
    pub access_mode: String,
    pub hugetlb: bool,
    /// Bytes the users touch (a block, or a block per user).
    pub working_set: u64,
    pub operations: u64,
    /// MiB read or written (none for `--memory-oper=none`).
    pub mib: Option<f64>,
    pub mib_per_s: Option<f64>,
    /// The last-level cache the plausibility checks compared with.
    pub cache_bytes: Option<u64>,
}

/// A user reading or writing RAM sequentially moves at most this many
/// bytes a second: a core has a few dozen cache-line misses in flight
/// (Little's law: 48 lines of 64 bytes every 70 ns is 44 GB/s). This
/// machine's threads (AMD EPYC, KVM) read a block larger than their 32 MiB
/// L3 at 19-23 GiB/s and write it at 15 GiB/s, sysbench and dbmeter alike
/// (docs/micro.md); from their L2, at 35 GiB/s. The ceiling leaves room for
/// faster cores.
pub const RAM_GIB_PER_S_PER_THREAD: f64 = 64.0;

/// The plausibility checks of a memory result (issue 23, the PalominoDB
/// talk's "numbers lie"): a working set that fits in the CPU caches
/// measures them, not RAM; one larger than the caches cannot be read or
/// written faster than RAM delivers.
pub fn plausibility(s: &MemorySection, threads: usize, cpus: usize) -> Vec<Warning> {
    let (Some(cache), Some(mib_per_s)) = (s.cache_bytes, s.mib_per_s) else {
        return Vec::new();
    };
    let size = |b: u64| {
        if b >= 1 << 30 && b.is_multiple_of(1 << 30) {
            format!("{} GiB", b >> 30)
        } else if b >= 1 << 20 && b.is_multiple_of(1 << 20) {
            format!("{} MiB", b >> 20)
        } else if b >= 1 << 10 && b.is_multiple_of(1 << 10) {
            format!("{} KiB", b >> 10)
        } else {
            format!("{b} bytes")
        }
    };
    let per_user = if s.scope == "local" {
        " (a block per thread)"
    } else {
        ""
    };
    if s.working_set <= cache {
        return vec![Warning::new(
            "memory_in_cache",
            format!(
                "the memory test's working set ({}{per_user}) fits in the CPU caches ({} last-level cache): {mib_per_s:.0} MiB/s is the caches' speed, not RAM's; a --memory-block-size above {} measures RAM",
                size(s.working_set),
                size(cache),
                size(cache)
            ),
        )];
    }
    let users = threads.clamp(1, cpus.max(1)) as f64;
    let ceiling = RAM_GIB_PER_S_PER_THREAD * 1024.0 * users;
    if mib_per_s > ceiling {
        return vec![Warning::new(
            "memory_bandwidth",
            format!(
                "{mib_per_s:.0} MiB/s from a working set of {}{per_user}, larger than the {} last-level cache, is more than RAM can deliver ({ceiling:.0} MiB/s: {RAM_GIB_PER_S_PER_THREAD} GiB/s for each of {users} threads at most): the accesses did not all reach memory",
                size(s.working_set),
                size(cache)
            ),
        )];
    }
    Vec::new()
}

struct MemoryPlan {
    cfg: MemoryConfig,
    threads: usize,
    layout: Layout,
    users: Arc<MemoryUsers>,
    preamble: Option<String>,
}

impl RunPlan for MemoryPlan {
    fn server_version(&self) -> String {
        String::new()
    }

    fn measures(&self) -> Vec<Measure> {
        match self.cfg.oper {
            Oper::None => Vec::new(),
            _ => vec![BYTES],
        }
    }

    fn users(&self) -> Arc<dyn UserFactory> {
        self.users.clone()
    }

    fn preamble(&self) -> Option<String> {
        self.preamble.clone()
    }

    fn shape_engine(&self, engine: &mut EngineConfig) {
        // sysbench's memory test sets its own limit in place of --events.
        engine.events = None;
    }

    fn own_words(&mut self, event: &RunEvent) -> Option<String> {
        // sysbench's interval line: the MiB per second of the interval.
        let verbosity = sysbench_verbosity(self.layout)?;
        let RunEvent::Interval { interval, .. } = event else {
            return None;
        };
        if verbosity < NOTICE {
            return Some(String::new());
        }
        Some(format!(
            "[ {} ] {:4.2} MiB/sec",
            interval.time_label(),
            interval.events_per_s * self.cfg.block_size as f64 / MIB
        ))
    }

    fn finish(&mut self, _result: &RunResult, doc: &mut RunDocument) -> Vec<Warning> {
        let t = &doc.totals;
        let mib = (self.cfg.oper != Oper::None).then(|| doc.count(BYTES.name) as f64 / MIB);
        let section = MemorySection {
            block_size: self.cfg.block_size as u64,
            total_size: self.cfg.total_size,
            scope: word(self.cfg.scope),
            oper: word(self.cfg.oper),
            access_mode: word(self.cfg.access),
            hugetlb: self.cfg.hugetlb,
            working_set: self.cfg.working_set(self.threads),
            operations: t.events,
            mib,
            mib_per_s: mib.map(|m| {
                if t.duration_s > 0.0 {
                    m / t.duration_s
                } else {
                    0.0
                }
            }),
            cache_bytes: dbmeter_env::last_level_cache().map(|c| c.bytes),
        };
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let warnings = if t.events > 0 {
            plausibility(&section, self.threads, cpus)
        } else {
            Vec::new()
        };
        doc.set_section("memory", &section);
        warnings
    }
}

/// An option's word, as the options and the document write it.
trait Word: Copy {
    fn word(self) -> &'static str;
}

impl Word for Scope {
    fn word(self) -> &'static str {
        match self {
            Scope::Global => "global",
            Scope::Local => "local",
        }
    }
}

impl Word for Oper {
    fn word(self) -> &'static str {
        match self {
            Oper::Read => "read",
            Oper::Write => "write",
            Oper::None => "none",
        }
    }
}

impl Word for Access {
    fn word(self) -> &'static str {
        match self {
            Access::Seq => "seq",
            Access::Rnd => "rnd",
        }
    }
}

fn word(v: impl Word) -> String {
    v.word().to_string()
}

/// `memory-hugetlb`'s failure, as sysbench words it (its size is
/// sysbench's: the block rounded by its 4 MiB large page, as its own
/// formula does it) or as dbmeter does, with what the pool holds.
fn hugetlb_error(
    layout: Layout,
    cfg: &MemoryConfig,
    user: Option<usize>,
    len: usize,
    e: &std::io::Error,
) -> BenchError {
    let errno = e.raw_os_error().unwrap_or(0);
    let text = e.to_string();
    let text = text.split(" (os error").next().unwrap_or(&text).to_string();
    if sysbench_verbosity(layout).is_some() {
        const LARGE_PAGE: u64 = 4 << 20;
        let size = ((cfg.block_size as u64 - 1) & !LARGE_PAGE) + LARGE_PAGE;
        let which = match user {
            Some(i) => format!("Failed to allocate buffer for thread #{i}!"),
            None => "Failed to allocate buffer!".into(),
        };
        return BenchError::Failed(format!(
            "Failed to allocate {size} bytes from HugeTLB memory. errno = {errno} ({text})\nFATAL: {which}"
        ));
    }
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let field = |name: &str| {
        meminfo
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.trim().to_string())
    };
    let pool = match (
        field("HugePages_Free:"),
        field("HugePages_Total:"),
        field("Hugepagesize:"),
    ) {
        (Some(free), Some(total), Some(size)) => {
            format!("the HugeTLB pool has {free} free of {total} pages of {size} (/proc/meminfo)")
        }
        _ => "this kernel shows no HugeTLB pool in /proc/meminfo".into(),
    };
    BenchError::Failed(format!(
        "--memory-hugetlb=on: cannot map {} MiB of huge pages ({text}): {pool}; reserve pages first, e.g. `sysctl -w vm.nr_hugepages=N` as root, or leave --memory-hugetlb off",
        len >> 20
    ))
}

/// The huge page size (`Hugepagesize` in /proc/meminfo; 2 MiB if absent).
fn huge_page_size() -> usize {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines().find_map(|l| {
                let kb = l.strip_prefix("Hugepagesize:")?.trim().strip_suffix("kB")?;
                kb.trim().parse::<usize>().ok()
            })
        })
        .map_or(2 << 20, |kb| kb << 10)
}

/// The blocks of a run: one, or one per user.
fn allocate(cfg: &MemoryConfig, threads: usize, layout: Layout) -> Result<Vec<Block>, BenchError> {
    let n = match cfg.scope {
        Scope::Global => 1,
        Scope::Local => threads,
    };
    let set = cfg.working_set(threads);
    let available = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines().find_map(|l| {
                let kb = l.strip_prefix("MemAvailable:")?.trim().strip_suffix("kB")?;
                kb.trim().parse::<u64>().ok()
            })
        })
        .map(|kb| kb << 10);
    if let Some(avail) = available
        && set > avail
    {
        return Err(BenchError::Failed(format!(
            "the memory test's blocks take {} MiB ({}), more than the {} MiB of memory available: use a smaller --memory-block-size",
            set >> 20,
            match cfg.scope {
                Scope::Global => "one block".to_string(),
                Scope::Local => format!("a block for each of {threads} threads"),
            },
            avail >> 20
        )));
    }
    let huge = huge_page_size();
    (0..n)
        .map(|i| {
            let user = (cfg.scope == Scope::Local).then_some(i);
            if cfg.hugetlb {
                let len = cfg.block_size.div_ceil(huge) * huge;
                Block::huge(cfg.block_size, len)
                    .map_err(|e| hugetlb_error(layout, cfg, user, len, &e))
            } else {
                Block::heap(cfg.block_size).ok_or_else(|| {
                    BenchError::Failed(match (sysbench_verbosity(layout), user) {
                        (Some(_), Some(i)) => format!("Failed to allocate buffer for thread #{i}!"),
                        (Some(_), None) => "Failed to allocate buffer!".into(),
                        _ => format!(
                            "cannot allocate a block of {} bytes for the memory test",
                            cfg.block_size
                        ),
                    })
                })
            }
        })
        .collect()
}

impl Benchmark for Memory {
    fn name(&self) -> &str {
        "memory"
    }

    fn summary(&self) -> &str {
        "sysbench's memory test: each event reads or writes a block of --memory-block-size, until --memory-total-size"
    }

    fn options(&self) -> Vec<OptSpec> {
        OPTIONS.to_vec()
    }

    fn check_options(&self, options: &OptValues) -> Result<(), BenchError> {
        MemoryConfig::from_options(options, Layout::Dbmeter).map(drop)
    }

    fn verbs(&self) -> Vec<Verb> {
        Vec::new()
    }

    fn needs_database(&self) -> bool {
        false
    }

    fn dataset(&self) -> Option<String> {
        None
    }

    fn writes(&self) -> bool {
        false
    }

    fn command(&self, verb: &str, ctx: &Context) -> Result<(), BenchError> {
        MemoryConfig::from_options(ctx.options, ctx.layout)?;
        Err(no_such_verb(self, verb))
    }

    fn known_kinds(&self, _options: &OptValues) -> Option<Vec<String>> {
        // Its users tell no kinds of events apart.
        Some(Vec::new())
    }

    fn plan(&self, ctx: &Context) -> Result<Box<dyn RunPlan>, BenchError> {
        let cfg = MemoryConfig::from_options(ctx.options, ctx.layout)?;
        let threads = ctx.threads.max(1);
        let ops = cfg.ops_per_user(threads);
        if ops == Some(0) {
            return Err(BenchError::Usage(format!(
                "--memory-total-size={} is less than a block for each thread (--memory-block-size={} × {threads} threads): no operation would run",
                ctx.options.str("memory-total-size").trim(),
                ctx.options.str("memory-block-size").trim()
            )));
        }
        let blocks = allocate(&cfg, threads, ctx.layout)?;
        let sysbench = sysbench_verbosity(ctx.layout).is_some();
        if !sysbench && ctx.options.given("events") {
            ctx.say(
                "memory: --events has no effect: the run ends when --memory-total-size is processed (or at --time), as in sysbench",
            );
        }
        let block_kib = cfg.block_size / 1024;
        let total_mib = cfg.total_size / 1024 / 1024;
        let lines = [
            "Running memory speed test with the following options:".to_string(),
            format!("  block size: {block_kib}KiB"),
            format!("  total size: {total_mib}MiB"),
            format!("  operation: {}", word(cfg.oper)),
            format!("  scope: {}", word(cfg.scope)),
            String::new(),
        ];
        let logged: Vec<(u8, &str)> = lines.iter().map(|l| (NOTICE, l.as_str())).collect();
        let own = format!(
            "each event {} a block of {} bytes ({}, {}{}), {}",
            match cfg.oper {
                Oper::Read => "reads",
                Oper::Write => "writes",
                Oper::None => "walks without touching",
            },
            cfg.block_size,
            word(cfg.scope),
            match cfg.access {
                Access::Seq => "in order",
                Access::Rnd => "at random offsets",
            },
            if cfg.hugetlb { ", huge pages" } else { "" },
            match ops {
                Some(n) => format!("{n} per thread ({total_mib} MiB in all)"),
                None => "without a total limit".into(),
            }
        );
        Ok(Box::new(MemoryPlan {
            cfg,
            threads,
            layout: ctx.layout,
            users: Arc::new(MemoryUsers {
                blocks: Arc::new(blocks),
                cfg,
                ops,
                seed: ctx.seed,
            }),
            preamble: preamble(ctx.layout, &logged, own),
        }))
    }

    fn sysbench_lead(&self, doc: &RunDocument) -> Option<String> {
        Some(sysbench_lead(doc))
    }

    fn headline(&self, doc: &RunDocument) -> Vec<(String, f64)> {
        doc.section::<MemorySection>("memory")
            .and_then(|s| s.mib_per_s)
            .map(|v| vec![("MiB/s".to_string(), v)])
            .unwrap_or_default()
    }
}

/// sysbench's words before its general statistics: the operations and,
/// unless none were read or written, the MiB transferred.
pub fn sysbench_lead(doc: &RunDocument) -> String {
    let t = &doc.totals;
    let per_s = |v: f64| {
        if t.duration_s > 0.0 {
            v / t.duration_s
        } else {
            0.0
        }
    };
    let mut out = format!(
        "Total operations: {} ({:8.2} per second)\n\n",
        t.events, t.events_per_s
    );
    if doc.measures.iter().any(|m| m.name == BYTES.name) {
        let mib = doc.count(BYTES.name) as f64 / MIB;
        out.push_str(&format!(
            "{mib:4.2} MiB transferred ({:4.2} MiB/sec)\n\n",
            per_s(mib)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::testing::{refused, values};
    use std::sync::atomic::Ordering::Relaxed;

    fn cfg(given: &[(&str, &str)]) -> Result<MemoryConfig, BenchError> {
        MemoryConfig::from_options(&values(OPTIONS, given), Layout::Dbmeter)
    }

    #[test]
    fn sizes_as_sysbench_writes_them() {
        assert_eq!(parse_size("1K"), Some(1024));
        assert_eq!(parse_size("4k"), Some(4096));
        assert_eq!(parse_size("100G"), Some(100 << 30));
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("0"), Some(0));
        for bad in [
            "",
            "-1",
            "1.5K",
            "K",
            "abc",
            "1KB",
            "16E",
            "99999999999999999999",
        ] {
            assert_eq!(parse_size(bad), None, "{bad}");
        }
    }

    #[test]
    fn options_and_their_ranges() {
        let c = cfg(&[]).unwrap();
        assert_eq!(
            c,
            MemoryConfig {
                block_size: 1024,
                total_size: 100 << 30,
                scope: Scope::Global,
                hugetlb: false,
                oper: Oper::Write,
                access: Access::Seq,
            }
        );
        assert_eq!(cfg(&[("memory-block-size", "8")]).unwrap().block_size, 8);
        for (k, v) in [
            ("memory-block-size", "-1"),
            ("memory-block-size", "0"),
            ("memory-block-size", "3"),
            ("memory-block-size", "9"),
            ("memory-block-size", "4"),
            ("memory-block-size", "2T"),
            ("memory-total-size", "abc"),
            ("memory-scope", "Global"),
            ("memory-oper", "copy"),
            ("memory-access-mode", "random"),
        ] {
            refused(OPTIONS, &[(k, v)], |o| {
                MemoryConfig::from_options(o, Layout::Dbmeter)
            });
        }
        // sysbench's words in its layout.
        let sysbench = Layout::Sysbench {
            percentile_off: false,
            verbosity: 3,
        };
        let o = values(OPTIONS, &[("memory-block-size", "3")]);
        assert_eq!(
            MemoryConfig::from_options(&o, sysbench),
            Err(BenchError::Usage(
                "Invalid value for memory-block-size: 3".into()
            ))
        );
    }

    #[test]
    fn shares_of_the_total_as_sysbench_divides_it() {
        let c = cfg(&[("memory-block-size", "4K"), ("memory-total-size", "1G")]).unwrap();
        assert_eq!(c.ops_per_user(2), Some(131_072));
        assert_eq!(c.ops_per_user(3), Some(87_381));
        let c = cfg(&[("memory-total-size", "0")]).unwrap();
        assert_eq!(c.ops_per_user(2), None);
        let c = cfg(&[("memory-scope", "local"), ("memory-block-size", "1M")]).unwrap();
        assert_eq!(c.working_set(4), 4 << 20);
    }

    fn user(
        oper: Oper,
        access: Access,
        block: usize,
        ops: Option<u64>,
    ) -> (MemoryUser, Arc<Vec<Block>>) {
        let blocks = Arc::new(vec![Block::heap(block).unwrap()]);
        let u = MemoryUser {
            _blocks: blocks.clone(),
            words: blocks[0].words(),
            oper,
            access,
            left: ops,
            bytes: if oper == Oper::None { 0 } else { block as u64 },
            rng: SbRandom::for_user(3, 0),
        };
        (u, blocks)
    }

    fn contents(b: &Block) -> Vec<u64> {
        let w = b.words();
        (0..w.len).map(|i| w.at(i).load(Relaxed)).collect()
    }

    #[test]
    fn operations_touch_the_block_as_sysbench_does() {
        // Sequential writes: each word's distance to the end.
        let (mut u, b) = user(Oper::Write, Access::Seq, 64, Some(2));
        let mut t = Tally::default();
        assert_eq!(u.event(&mut t), Ok(Flow::Continue));
        assert_eq!(contents(&b[0]), [8, 7, 6, 5, 4, 3, 2, 1]);
        assert_eq!(u.event(&mut t), Ok(Flow::UserDone));
        assert_eq!(t.measures[0], 128);
        // One word at a time below eight words, eight at a time above.
        for words in [1u64, 2, 4, 16, 128] {
            let (mut u, b) = user(Oper::Write, Access::Seq, words as usize * 8, None);
            u.event(&mut Tally::default()).unwrap();
            let want: Vec<u64> = (1..=words).rev().collect();
            assert_eq!(contents(&b[0]), want);
        }
        // Random writes: byte offsets of the turns, at offsets inside.
        let (mut u, b) = user(Oper::Write, Access::Rnd, 4096, None);
        u.event(&mut t).unwrap();
        let c = contents(&b[0]);
        assert!(c.iter().all(|v| v % 8 == 0 && *v < 4096), "{c:?}");
        assert!(c.iter().filter(|v| **v != 0).count() > 100);
        // Reads and none change nothing and count what they transfer.
        for (oper, access) in [
            (Oper::Read, Access::Seq),
            (Oper::Read, Access::Rnd),
            (Oper::None, Access::Seq),
            (Oper::None, Access::Rnd),
        ] {
            let (mut u, b) = user(oper, access, 1024, None);
            let mut t = Tally::default();
            assert_eq!(u.event(&mut t), Ok(Flow::Continue));
            assert!(contents(&b[0]).iter().all(|v| *v == 0));
            assert_eq!(t.measures[0], if oper == Oper::None { 0 } else { 1024 });
        }
    }

    fn section(working_set: u64, mib_per_s: f64) -> MemorySection {
        MemorySection {
            block_size: working_set,
            scope: "global".into(),
            working_set,
            mib_per_s: Some(mib_per_s),
            cache_bytes: Some(32 << 20),
            ..MemorySection::default()
        }
    }

    #[test]
    fn implausible_results_are_flagged() {
        // In the caches: said, whatever the speed.
        let w = plausibility(&section(1024, 20_000.0), 1, 2);
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].code, "memory_in_cache");
        assert!(w[0].message.contains("1 KiB"), "{}", w[0].message);
        // Larger than the caches, at RAM's speed: nothing to say.
        assert!(plausibility(&section(1 << 30, 23_000.0), 1, 2).is_empty());
        assert!(plausibility(&section(1 << 30, 100_000.0), 2, 2).is_empty());
        // Faster than RAM can deliver: flagged; threads beyond the CPUs
        // add nothing.
        let w = plausibility(&section(1 << 30, 200_000.0), 8, 2);
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].code, "memory_bandwidth");
        assert!(w[0].message.contains("1 GiB"), "{}", w[0].message);
        // Nothing transferred (none), or no cache known: no claim.
        let mut s = section(1 << 30, 1e9);
        s.mib_per_s = None;
        assert!(plausibility(&s, 1, 2).is_empty());
        s.mib_per_s = Some(1e9);
        s.cache_bytes = None;
        assert!(plausibility(&s, 1, 2).is_empty());
    }
}
