//! A fileio run: the requests (sysbench's order: one generator shared by
//! the threads), the users that carry them out, and the plan with its
//! measures, kinds, words and warnings.

use super::config::{FileioConfig, IoMode, TestMode};
use super::files;
use super::io::{self, AlignedBuf, Mapping};
use super::uring::{self, Done, Queue};
use crate::benchmark::{BenchError, Context, RunPlan};
use dbmeter_engine::{EventError, Flow, RunResult, Tally, User, UserFactory};
use dbmeter_env::Warning;
use dbmeter_result::{Layout, RunDocument, RunEvent};
use dbmeter_stats::Measure;
use dbmeter_stats::measure::file::{BYTES_READ, BYTES_WRITTEN, FSYNCS, MEASURES, READS, WRITES};
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::sync::{Arc, Mutex};

/// What a request does; its index is its kind in the run (`KINDS`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Read = 0,
    Write = 1,
    Fsync = 2,
}

/// The kinds of events a run tells apart, by [`Op`].
pub const KINDS: [&str; 3] = ["read", "write", "fsync"];

/// One request: a block (or merged blocks) of a file, or an fsync of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    pub op: Op,
    pub file: usize,
    pub pos: u64,
    pub len: u64,
}

/// sysbench's request generator, shared by the threads: the sequential
/// position, the requests done since the last fsync series, the reads and
/// writes so far (for `rndrw`'s ratio).
pub struct Generator {
    mode: TestMode,
    num_files: u64,
    file_size: u64,
    block: u64,
    request: u64,
    /// The bytes random requests fall in: every file's.
    span: u64,
    fsync_freq: u64,
    rw_ratio: f64,
    validate: bool,
    state: Mutex<State>,
}

struct State {
    position: u64,
    current_file: u64,
    fsynced_file: u64,
    /// Writes since the last series of fsyncs.
    dirty: bool,
    /// Reads and writes handed out (fsyncs are not counted).
    performed: u64,
    reads: u64,
    writes: u64,
    /// The blocks each thread may have in flight (its last one, its
    /// last `--file-queue-depth` in the async mode), for `--validate`: a
    /// random block is not handed out while a request on it may be in
    /// flight, so that no read sees a write half done.
    held: Vec<std::collections::VecDeque<(usize, u64)>>,
    /// How many blocks a thread may have in flight.
    in_flight: usize,
}

impl Generator {
    pub fn new(cfg: &FileioConfig, mode: TestMode) -> Generator {
        Generator {
            mode,
            num_files: cfg.num_files,
            file_size: cfg.file_size,
            block: cfg.block_size,
            request: cfg.request_size,
            span: cfg.set_size(),
            fsync_freq: cfg.fsync_freq,
            rw_ratio: cfg.rw_ratio,
            validate: cfg.validate,
            state: Mutex::new(State {
                position: 0,
                current_file: 0,
                fsynced_file: 0,
                dirty: false,
                performed: 0,
                reads: 0,
                writes: 0,
                held: vec![std::collections::VecDeque::new(); cfg.threads],
                in_flight: if cfg.io_mode == IoMode::Async {
                    cfg.queue_depth as usize
                } else {
                    1
                },
            }),
        }
    }

    /// The next request of thread `thread`.
    pub fn next(&self, thread: usize, rng: &mut impl Rng) -> Request {
        let mut s = match self.state.lock() {
            Ok(s) => s,
            // A thread that panicked holding it left plain numbers.
            Err(p) => p.into_inner(),
        };
        if self.mode.sequential() {
            self.sequential(&mut s)
        } else {
            self.random(&mut s, thread, rng)
        }
    }

    /// After `fsync_freq` reads or writes with writes among them, one
    /// fsync per file, in turn.
    fn fsync_due(&self, s: &mut State) -> Option<Request> {
        if self.fsync_freq == 0 || !s.dirty || !s.performed.is_multiple_of(self.fsync_freq) {
            return None;
        }
        let file = s.fsynced_file as usize;
        s.fsynced_file += 1;
        if s.fsynced_file == self.num_files {
            s.fsynced_file = 0;
            s.dirty = false;
        }
        Some(Request {
            op: Op::Fsync,
            file,
            pos: 0,
            len: 0,
        })
    }

    fn sequential(&self, s: &mut State) -> Request {
        let op = match self.mode {
            TestMode::SeqWrite | TestMode::SeqRewrite => Op::Write,
            _ => Op::Read,
        };
        if op == Op::Write
            && let Some(r) = self.fsync_due(s)
        {
            return r;
        }
        s.performed += 1;
        if op == Op::Write {
            s.dirty = true;
        }
        if s.current_file == self.num_files {
            s.position = 0;
            s.current_file = 0;
        }
        let r = Request {
            op,
            file: s.current_file as usize,
            pos: s.position,
            len: self.request.min(self.file_size - s.position),
        };
        s.position += r.len;
        if s.position == self.file_size {
            s.current_file += 1;
            s.position = 0;
        }
        r
    }

    fn random(&self, s: &mut State, thread: usize, rng: &mut impl Rng) -> Request {
        let op = match self.mode {
            TestMode::RndReadWrite => {
                if ((s.reads + 1) as f64 / (s.writes + 1) as f64) < self.rw_ratio {
                    Op::Read
                } else {
                    Op::Write
                }
            }
            TestMode::RndWrite => Op::Write,
            _ => Op::Read,
        };
        if let Some(r) = self.fsync_due(s) {
            return r;
        }
        // Blocks that may be in flight are drawn again; with fewer blocks
        // than that, they cannot be kept apart.
        let keep_apart =
            self.validate && self.span / self.block > (s.held.len() * s.in_flight) as u64;
        let own_done = s.in_flight == 1;
        let (file, pos) = loop {
            let unit = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            let mut at = (unit * self.span as f64) as u64;
            at = at.min(self.span - 1);
            at -= at % self.block;
            let file = (at / self.file_size) as usize;
            let pos = at % self.file_size;
            let taken = keep_apart
                && s.held.iter().enumerate().any(|(t, h)| {
                    // A thread's own last request is done by now, unless
                    // it keeps several in flight.
                    !(own_done && t == thread) && h.contains(&(file, pos))
                });
            if !taken {
                break (file, pos);
            }
        };
        if self.validate {
            let depth = s.in_flight;
            if let Some(h) = s.held.get_mut(thread) {
                if h.len() == depth {
                    h.pop_front();
                }
                h.push_back((file, pos));
            }
        }
        s.performed += 1;
        match op {
            Op::Write => {
                s.dirty = true;
                s.writes += 1;
            }
            _ => s.reads += 1,
        }
        Request {
            op,
            file,
            pos,
            len: self.block.min(self.file_size - pos),
        }
    }
}

/// What the users share: the settings, the open files (and their
/// mappings in the mmap mode) and the generator.
pub struct Shared {
    cfg: FileioConfig,
    mode: TestMode,
    /// The I/O mode the users run: async falls back to sync where the
    /// kernel refuses io_uring.
    io_mode: IoMode,
    files: Vec<File>,
    maps: Vec<Mapping>,
    generator: Generator,
    seed: u64,
}

enum UserIo {
    Sync(AlignedBuf),
    Mmap(AlignedBuf),
    Async(Box<Queue>),
}

struct FileUser {
    shared: Arc<Shared>,
    thread: usize,
    rng: Xoshiro256PlusPlus,
    io: UserIo,
}

fn fatal(message: String) -> EventError {
    EventError::Fatal {
        code: "fileio".into(),
        message,
    }
}

/// Counts a completed request into `tally`, checking a validated read.
fn count(tally: &mut Tally, op: Op, bytes: u64) {
    match op {
        Op::Read => {
            tally.measures[READS] += 1;
            tally.measures[BYTES_READ] += bytes;
        }
        Op::Write => {
            tally.measures[WRITES] += 1;
            tally.measures[BYTES_WRITTEN] += bytes;
        }
        Op::Fsync => tally.measures[FSYNCS] += 1,
    }
}

impl FileUser {
    fn fsync(&self, file: usize) -> Result<(), EventError> {
        let sh = &self.shared;
        let r = match &self.io {
            UserIo::Mmap(_) => sh.maps[file].sync(),
            _ => io::fsync(&sh.files[file], sh.cfg.fsync_mode),
        };
        r.map_err(|e| {
            fatal(format!(
                "Failed to fsync file! file: {} {}",
                super::config::file_name(file as u64),
                files::errno_words(&e)
            ))
        })
    }

    /// A request by pread/pwrite or through the mapping.
    fn blocking(&mut self, r: Request, tally: &mut Tally) -> Result<(), EventError> {
        let sh = Arc::clone(&self.shared);
        let len = r.len as usize;
        let name = || super::config::file_name(r.file as u64);
        match r.op {
            Op::Read => {
                let mmap = self.io_kind() == IoMode::Mmap;
                let (UserIo::Sync(buf) | UserIo::Mmap(buf)) = &mut self.io else {
                    return Err(fatal("fileio: a blocking request in the async mode".into()));
                };
                let buf = &mut buf.bytes_mut()[..len];
                let n = if mmap {
                    sh.maps[r.file].read(buf, r.pos).map(|()| len)
                } else {
                    io::pread(&sh.files[r.file], buf, r.pos)
                };
                match n {
                    Ok(n) if n == len => {}
                    Ok(n) => {
                        return Err(fatal(format!(
                            "Failed to read file! file: {} pos: {} ({n} of {len} bytes: the file is shorter than it was prepared)",
                            name(),
                            r.pos
                        )));
                    }
                    Err(e) => {
                        return Err(fatal(format!(
                            "Failed to read file! file: {} pos: {} {}",
                            name(),
                            r.pos,
                            files::errno_words(&e)
                        )));
                    }
                }
                if sh.cfg.validate {
                    let (UserIo::Sync(buf) | UserIo::Mmap(buf)) = &self.io else {
                        return Ok(());
                    };
                    io::check_block(&buf.bytes()[..len], r.pos)
                        .map_err(|m| fatal(format!("Validation failed on file {}: {m}", name())))?;
                }
                count(tally, Op::Read, r.len);
            }
            Op::Write => {
                let mmap = self.io_kind() == IoMode::Mmap;
                let (UserIo::Sync(buf) | UserIo::Mmap(buf)) = &mut self.io else {
                    return Err(fatal("fileio: a blocking request in the async mode".into()));
                };
                let buf = &mut buf.bytes_mut()[..len];
                if sh.cfg.validate {
                    io::fill_block(buf, r.pos, &mut self.rng);
                }
                let n = if mmap {
                    sh.maps[r.file].write(buf, r.pos).map(|()| len)
                } else {
                    io::pwrite(&sh.files[r.file], buf, r.pos)
                };
                match n {
                    Ok(n) if n == len => {}
                    Ok(n) => {
                        return Err(fatal(format!(
                            "Failed to write file! file: {} pos: {} ({n} of {len} bytes: is the disk full?)",
                            name(),
                            r.pos
                        )));
                    }
                    Err(e) => {
                        return Err(fatal(format!(
                            "Failed to write file! file: {} pos: {} {}",
                            name(),
                            r.pos,
                            files::errno_words(&e)
                        )));
                    }
                }
                count(tally, Op::Write, r.len);
                if sh.cfg.fsync_all {
                    self.fsync(r.file)?;
                    count(tally, Op::Fsync, 0);
                }
            }
            Op::Fsync => {
                // With an fsync after every write, the periodic ones are
                // not made (sysbench skips them too).
                if !sh.cfg.fsync_all {
                    self.fsync(r.file)?;
                    count(tally, Op::Fsync, 0);
                }
            }
        }
        Ok(())
    }

    fn io_kind(&self) -> IoMode {
        match self.io {
            UserIo::Sync(_) => IoMode::Sync,
            UserIo::Mmap(_) => IoMode::Mmap,
            UserIo::Async(_) => IoMode::Async,
        }
    }

    /// A request through the ring: submitted, and what completes counted.
    fn submit(&mut self, r: Request, tally: &mut Tally) -> Result<(), EventError> {
        let sh = Arc::clone(&self.shared);
        let UserIo::Async(q) = &mut self.io else {
            return Err(fatal("fileio: an async request in a blocking mode".into()));
        };
        let validate = sh.cfg.validate;
        let mut done = |d: Done, data: &[u8], pos: u64| -> Result<(), String> {
            let op = match d.op {
                uring::Op::Read => Op::Read,
                uring::Op::Write => Op::Write,
                uring::Op::Fsync => Op::Fsync,
            };
            if validate && op == Op::Read {
                io::check_block(data, pos).map_err(|m| format!("Validation failed: {m}"))?;
            }
            count(tally, op, d.bytes);
            Ok(())
        };
        let fd = sh.files[r.file].as_raw_fd();
        let len = r.len as usize;
        let result = match r.op {
            Op::Fsync if sh.cfg.fsync_all => Ok(()),
            Op::Fsync => q.fsync(fd, sh.cfg.fsync_mode, &mut done),
            op => {
                let Some((slot, buf)) = q.next_buffer(len) else {
                    return Err(fatal("fileio: every io_uring buffer is in flight".into()));
                };
                if validate && op == Op::Write {
                    io::fill_block(buf, r.pos, &mut self.rng);
                }
                let (uop, after) = if op == Op::Read {
                    (uring::Op::Read, None)
                } else {
                    (
                        uring::Op::Write,
                        sh.cfg.fsync_all.then_some(sh.cfg.fsync_mode),
                    )
                };
                q.submit(slot, uop, fd, r.pos, len, after, &mut done)
            }
        };
        result.map_err(fatal)
    }
}

impl User for FileUser {
    fn event(&mut self, tally: &mut Tally) -> Result<Flow, EventError> {
        let r = self.shared.generator.next(self.thread, &mut self.rng);
        tally.kind = r.op as usize;
        match self.io {
            UserIo::Async(_) => self.submit(r, tally)?,
            _ => self.blocking(r, tally)?,
        }
        Ok(Flow::Continue)
    }

    /// The requests still in flight, then (`--file-fsync-end`, for a
    /// test that writes) an fsync of every file, as each of sysbench's
    /// threads does when it is done.
    fn finish(&mut self, tally: &mut Tally) -> Result<(), EventError> {
        let sh = Arc::clone(&self.shared);
        if let UserIo::Async(q) = &mut self.io {
            let mut done = |d: Done, _: &[u8], _: u64| -> Result<(), String> {
                let op = match d.op {
                    uring::Op::Read => Op::Read,
                    uring::Op::Write => Op::Write,
                    uring::Op::Fsync => Op::Fsync,
                };
                count(tally, op, d.bytes);
                Ok(())
            };
            q.drain(&mut done).map_err(fatal)?;
        }
        if sh.cfg.fsync_end && !sh.mode.reads_only() {
            for file in 0..sh.files.len() {
                self.fsync(file)?;
                count(tally, Op::Fsync, 0);
            }
        }
        Ok(())
    }
}

struct Users(Arc<Shared>);

impl UserFactory for Users {
    fn create(&self, user_id: usize) -> Result<Box<dyn User>, String> {
        let sh = &self.0;
        let len = sh.cfg.request_size as usize;
        let buf =
            || AlignedBuf::new(len).map_err(|e| format!("cannot allocate a request buffer: {e}"));
        let io = match sh.io_mode {
            IoMode::Sync => UserIo::Sync(buf()?),
            IoMode::Mmap => UserIo::Mmap(buf()?),
            IoMode::Async => UserIo::Async(Box::new(
                Queue::new(sh.cfg.queue_depth, len)
                    .map_err(|e| format!("--file-io-mode=async: {e}"))?,
            )),
        };
        let seed = sh
            .seed
            .wrapping_add((user_id as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        Ok(Box::new(FileUser {
            shared: Arc::clone(sh),
            thread: user_id,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            io,
        }))
    }
}

pub struct FileioPlan {
    shared: Arc<Shared>,
    layout: Layout,
    warnings: Vec<Warning>,
    /// What the run says before its threads start (sysbench's words).
    preamble: String,
}

/// Plans a run: the settings, the files opened and checked, io_uring
/// probed, the warnings of set-ups that make the numbers lie.
pub fn plan(ctx: &Context) -> Result<FileioPlan, BenchError> {
    let sysbench = matches!(ctx.layout, Layout::Sysbench { .. });
    let mut cfg = FileioConfig::from_options(ctx.options, super::config::For::Run, sysbench)?;
    cfg.threads = ctx.threads.max(1);
    let Some(mode) = cfg.mode else {
        return Err(BenchError::Usage(
            "fileio needs --file-test-mode to run".into(),
        ));
    };
    let mut warnings = Vec::new();
    let mut io_mode = cfg.io_mode;
    if io_mode == IoMode::Async
        && let Some(why) = uring::unavailable(cfg.queue_depth)
    {
        let w = Warning::new(
            "io_uring_unavailable",
            format!(
                "--file-io-mode=async: {why}; this run uses synchronous I/O (pread/pwrite, one request in flight per thread) instead"
            ),
        );
        ctx.say(&format!("WARNING: {}", w.message));
        warnings.push(w);
        io_mode = IoMode::Sync;
    }
    let files = files::open_for_run(&cfg, sysbench)?;
    let mut maps = Vec::new();
    if io_mode == IoMode::Mmap {
        for (i, f) in files.iter().enumerate() {
            let name = super::config::file_name(i as u64);
            if mode == TestMode::SeqWrite {
                f.set_len(cfg.file_size).map_err(|e| {
                    BenchError::Failed(format!("ftruncate() failed on file {name}: {e}"))
                })?;
            }
            maps.push(
                Mapping::new(f, cfg.file_size).map_err(|e| {
                    BenchError::Failed(format!("mmap() failed on file {name}: {e}"))
                })?,
            );
        }
    }
    warnings.extend(storage_warnings(&cfg, mode));
    let preamble = preamble(&cfg, mode, io_mode, ctx);
    Ok(FileioPlan {
        shared: Arc::new(Shared {
            generator: Generator::new(&cfg, mode),
            cfg,
            mode,
            io_mode,
            files,
            maps,
            seed: ctx.seed,
        }),
        layout: ctx.layout,
        warnings,
        preamble,
    })
}

/// The talk's "numbers lie": files on a memory filesystem, or read
/// through a page cache they fit in.
fn storage_warnings(cfg: &FileioConfig, mode: TestMode) -> Vec<Warning> {
    let mut w = Vec::new();
    let storage = dbmeter_env::storage::describe(&cfg.dir);
    if let Some(s) = &storage {
        w.extend(dbmeter_env::warnings::file_storage(s));
    }
    let memory = dbmeter_env::procfs::read("/proc/meminfo")
        .map(|t| dbmeter_env::procfs::meminfo(&t))
        .and_then(|m| m.get("MemTotal").copied());
    if let Some(memory) = memory {
        w.extend(dbmeter_env::warnings::page_cache_reads(
            cfg.set_size(),
            memory,
            mode.reads(),
            cfg.flags.direct,
        ));
    }
    w
}

/// sysbench's description of the test (its `print_mode`), the lines
/// between the run's header and "Initializing worker threads...".
fn preamble(cfg: &FileioConfig, mode: TestMode, io_mode: IoMode, ctx: &Context) -> String {
    use super::config::sysbench_size as size;
    let mut l = Vec::new();
    if cfg.validate {
        // sysbench says so among its general settings, just before.
        l.push("Validation checks: on.\n".to_string());
    }
    l.extend([
        format!("Extra file open flags: {}", cfg.flags.describe()),
        format!("{} files, {}B each", cfg.num_files, size(cfg.file_size)),
        format!("{}B total file size", size(cfg.set_size())),
        format!("Block size {}B", size(cfg.block_size)),
    ]);
    if cfg.merged_requests > 0 {
        l.push(format!(
            "Merging requests up to {}B for sequential IO.",
            size(cfg.request_size)
        ));
    }
    if !mode.sequential() {
        l.push(format!(
            "Number of IO requests: {}",
            ctx.options.u64("events")
        ));
        l.push(format!(
            "Read/Write ratio for combined random IO test: {:.2}",
            cfg.rw_ratio
        ));
    }
    if cfg.fsync_freq > 0 {
        l.push(format!(
            "Periodic FSYNC enabled, calling fsync() each {} requests.",
            cfg.fsync_freq
        ));
    }
    if cfg.fsync_end {
        l.push("Calling fsync() at the end of test, Enabled.".into());
    }
    if cfg.fsync_all {
        l.push("Calling fsync() after each write operation.".into());
    }
    l.push(format!("Using {} I/O mode", io_mode.describe()));
    if io_mode == IoMode::Async {
        l.push(format!(
            "io_uring, {} requests in flight per thread",
            cfg.queue_depth
        ));
    }
    if cfg.validate {
        l.push("Using checksums validation.".into());
    }
    l.push(format!("Doing {} test", mode.describe()));
    l.join("\n") + "\n"
}

/// sysbench's interval line of the fileio test.
fn interval_words(i: &dbmeter_result::Interval, percentile: f64) -> String {
    const MIB: f64 = 1024.0 * 1024.0;
    format!(
        "[ {} ] reads: {:.2} MiB/s writes: {:.2} MiB/s fsyncs: {:.2}/s latency (ms,{percentile}%): {:.3}",
        i.time_label(),
        i.per_s("bytes_read") / MIB,
        i.per_s("bytes_written") / MIB,
        i.per_s("fsyncs"),
        i.latency_ms.get(percentile).unwrap_or(0.0)
    )
}

impl RunPlan for FileioPlan {
    fn server_version(&self) -> String {
        String::new()
    }

    fn measures(&self) -> Vec<Measure> {
        MEASURES.to_vec()
    }

    fn kinds(&self) -> Vec<String> {
        KINDS.iter().map(|k| k.to_string()).collect()
    }

    fn users(&self) -> Arc<dyn UserFactory> {
        Arc::new(Users(Arc::clone(&self.shared)))
    }

    fn preamble(&self) -> Option<String> {
        Some(self.preamble.clone())
    }

    fn own_words(&mut self, event: &RunEvent) -> Option<String> {
        match (event, self.layout) {
            (
                RunEvent::Interval {
                    interval,
                    percentile,
                    ..
                },
                Layout::Sysbench { .. },
            ) => Some(interval_words(interval, *percentile)),
            _ => None,
        }
    }

    fn finish(&mut self, _result: &RunResult, doc: &mut RunDocument) -> Vec<Warning> {
        // The storage the files are on, where a database run records its
        // data directory's.
        if doc.environment.datadir.is_none() {
            doc.environment.datadir = dbmeter_env::storage::describe(&self.shared.cfg.dir);
        }
        std::mem::take(&mut self.warnings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::testing::values;

    fn cfg(given: &[(&str, &str)]) -> FileioConfig {
        let mut all = vec![
            ("file-num", "4"),
            ("file-total-size", "64K"),
            ("file-block-size", "4K"),
        ];
        all.extend_from_slice(given);
        FileioConfig::from_options(
            &values(&super::super::config::options(), &all),
            super::super::config::For::Run,
            false,
        )
        .unwrap()
    }

    fn requests(c: &FileioConfig, n: usize) -> Vec<Request> {
        let g = Generator::new(c, c.mode.unwrap());
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        (0..n).map(|_| g.next(0, &mut rng)).collect()
    }

    #[test]
    fn sequential_requests_walk_the_files_and_fsync_each_in_turn() {
        let c = cfg(&[("file-test-mode", "seqwr"), ("file-fsync-freq", "5")]);
        let r = requests(&c, 24);
        // 5 writes, then one fsync per file, then writes on.
        assert!(r[..5].iter().all(|r| r.op == Op::Write));
        assert_eq!(
            r[5..9].iter().map(|r| (r.op, r.file)).collect::<Vec<_>>(),
            [
                (Op::Fsync, 0),
                (Op::Fsync, 1),
                (Op::Fsync, 2),
                (Op::Fsync, 3)
            ]
        );
        let writes: Vec<(usize, u64)> = r
            .iter()
            .filter(|r| r.op == Op::Write)
            .map(|r| (r.file, r.pos))
            .collect();
        // Four 4 KiB blocks a file, in order, then the next file.
        assert_eq!(
            &writes[..6],
            &[(0, 0), (0, 4096), (0, 8192), (0, 12288), (1, 0), (1, 4096)]
        );
        // Reads never fsync.
        let c = cfg(&[("file-test-mode", "seqrd"), ("file-fsync-freq", "1")]);
        let r = requests(&c, 20);
        assert!(r.iter().all(|r| r.op == Op::Read));
        // After the last file, the first again.
        assert_eq!((r[16].file, r[16].pos), (0, 0));
    }

    #[test]
    fn merged_requests_and_misaligned_blocks() {
        let c = cfg(&[("file-test-mode", "seqrd"), ("file-merged-requests", "3")]);
        let r = requests(&c, 3);
        // 12 KiB, then the 4 KiB left of a 16 KiB file.
        assert_eq!(
            r.iter().map(|r| (r.file, r.pos, r.len)).collect::<Vec<_>>(),
            [(0, 0, 12288), (0, 12288, 4096), (1, 0, 12288)]
        );
        let c = cfg(&[("file-test-mode", "rndrd"), ("file-block-size", "4097")]);
        for r in requests(&c, 500) {
            assert!(r.pos + r.len <= c.file_size, "{r:?}");
            assert!(r.file < 4);
        }
    }

    #[test]
    fn random_read_write_keeps_the_ratio_and_fsyncs_by_frequency() {
        let c = cfg(&[("file-test-mode", "rndrw"), ("file-fsync-freq", "100")]);
        let r = requests(&c, 1000);
        let n = |op| r.iter().filter(|r| r.op == op).count();
        let (reads, writes, fsyncs) = (n(Op::Read), n(Op::Write), n(Op::Fsync));
        assert_eq!(reads + writes + fsyncs, 1000);
        let ratio = reads as f64 / writes as f64;
        assert!((1.4..1.6).contains(&ratio), "{ratio}");
        // After each 100 reads and writes, one fsync of each of 4 files.
        assert_eq!(fsyncs, 4 * ((reads + writes) / 100));
        // Every block is inside the file set, on a block boundary.
        for r in r.iter().filter(|r| r.op != Op::Fsync) {
            assert_eq!(r.pos % 4096, 0);
            assert!(r.file < 4 && r.pos < c.file_size);
        }
        // Random writes only.
        let c = cfg(&[("file-test-mode", "rndwr"), ("file-fsync-freq", "0")]);
        assert!(requests(&c, 300).iter().all(|r| r.op == Op::Write));
    }

    #[test]
    fn sysbench_s_interval_line() {
        let i = dbmeter_result::Interval {
            t_s: 2.0,
            duration_s: 1.0,
            counts: [
                ("bytes_read".to_string(), 2 * 1024 * 1024),
                ("bytes_written".to_string(), 1024 * 1024),
                ("fsyncs".to_string(), 3),
            ]
            .into_iter()
            .collect(),
            ..Default::default()
        };
        let l = interval_words(&i, 95.0);
        assert!(
            l.starts_with(
                "[ 2s ] reads: 2.00 MiB/s writes: 1.00 MiB/s fsyncs: 3.00/s latency (ms,95%): "
            ),
            "{l}"
        );
    }
}
