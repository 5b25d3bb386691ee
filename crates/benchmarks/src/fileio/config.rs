//! fileio's options, read once into [`FileioConfig`].
//!
//! The options are sysbench 1.0.20's (names, defaults, meanings), plus
//! `--file-queue-depth` (fio's iodepth for the async mode) and
//! `--file-dir`. A bad value is one line: dbmeter's wording (`--name=value:
//! expected ...`), or under `dbmeter sysbench` sysbench's own words.

use crate::benchmark::BenchError;
use crate::options::{OptKind, OptSpec, OptValues, opt};
use std::path::PathBuf;

/// What a run does, sysbench's `--file-test-mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TestMode {
    /// `seqwr`: the files are made anew and written in order.
    SeqWrite,
    /// `seqrewr`: the prepared files written again in order.
    SeqRewrite,
    /// `seqrd`: read in order.
    SeqRead,
    /// `rndrd`: random blocks read.
    RndRead,
    /// `rndwr`: random blocks written.
    RndWrite,
    /// `rndrw`: random blocks read or written, by `--file-rw-ratio`.
    RndReadWrite,
}

impl TestMode {
    pub const WORDS: [(&'static str, TestMode); 6] = [
        ("seqwr", TestMode::SeqWrite),
        ("seqrewr", TestMode::SeqRewrite),
        ("seqrd", TestMode::SeqRead),
        ("rndrd", TestMode::RndRead),
        ("rndwr", TestMode::RndWrite),
        ("rndrw", TestMode::RndReadWrite),
    ];

    pub fn sequential(self) -> bool {
        matches!(
            self,
            TestMode::SeqWrite | TestMode::SeqRewrite | TestMode::SeqRead
        )
    }

    /// Whether the run only reads (no fsync at the end then).
    pub fn reads_only(self) -> bool {
        matches!(self, TestMode::SeqRead | TestMode::RndRead)
    }

    /// Whether the run reads at all.
    pub fn reads(self) -> bool {
        matches!(
            self,
            TestMode::SeqRead | TestMode::RndRead | TestMode::RndReadWrite
        )
    }

    /// sysbench's words for it ("Doing random r/w test").
    pub fn describe(self) -> &'static str {
        match self {
            TestMode::SeqWrite => "sequential write (creation)",
            TestMode::SeqRewrite => "sequential rewrite",
            TestMode::SeqRead => "sequential read",
            TestMode::RndRead => "random read",
            TestMode::RndWrite => "random write",
            TestMode::RndReadWrite => "random r/w",
        }
    }
}

/// How requests reach the files, sysbench's `--file-io-mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoMode {
    /// pread(2)/pwrite(2).
    Sync,
    /// io_uring, `queue_depth` requests in flight per thread.
    Async,
    /// The files mapped into memory; fsync is msync(2).
    Mmap,
}

impl IoMode {
    /// sysbench's words ("Using synchronous I/O mode").
    pub fn describe(self) -> &'static str {
        match self {
            IoMode::Sync => "synchronous",
            IoMode::Async => "asynchronous",
            IoMode::Mmap => "fast mmaped",
        }
    }
}

/// `--file-extra-flags`: flags the files are opened with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExtraFlags {
    pub sync: bool,
    pub dsync: bool,
    pub direct: bool,
}

impl ExtraFlags {
    /// The open(2) flags.
    pub fn open_flags(self) -> libc::c_int {
        let mut f = 0;
        if self.sync {
            f |= libc::O_SYNC;
        }
        if self.dsync {
            f |= libc::O_DSYNC;
        }
        if self.direct {
            f |= libc::O_DIRECT;
        }
        f
    }

    /// As sysbench lists them: `(none)`, or `sync dsync directio` (each
    /// word followed by a space but the last).
    pub fn describe(self) -> String {
        if !(self.sync || self.dsync || self.direct) {
            return "(none)".into();
        }
        let mut s = String::new();
        if self.sync {
            s.push_str("sync ");
        }
        if self.dsync {
            s.push_str("dsync ");
        }
        if self.direct {
            s.push_str("directio");
        }
        s
    }
}

/// `--file-fsync-mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FsyncMode {
    Fsync,
    Fdatasync,
}

/// Every fileio setting, checked.
#[derive(Clone, Debug, PartialEq)]
pub struct FileioConfig {
    pub num_files: u64,
    pub total_size: u64,
    /// `total_size / num_files`, as sysbench.
    pub file_size: u64,
    pub block_size: u64,
    /// The size of a sequential request: the block times
    /// `--file-merged-requests` (when above 0).
    pub request_size: u64,
    pub merged_requests: u64,
    /// None when the command is not `run` and no mode was given.
    pub mode: Option<TestMode>,
    pub io_mode: IoMode,
    /// Requests in flight per thread in the async mode.
    pub queue_depth: u32,
    pub flags: ExtraFlags,
    /// 0: no periodic fsync.
    pub fsync_freq: u64,
    pub fsync_all: bool,
    pub fsync_end: bool,
    pub fsync_mode: FsyncMode,
    pub rw_ratio: f64,
    pub validate: bool,
    pub dir: PathBuf,
    pub threads: usize,
}

/// The largest block (and merged request): one I/O request of up to 1 GiB.
pub const MAX_REQUEST: u64 = 1 << 30;

pub fn options() -> Vec<OptSpec> {
    vec![
        opt(
            "file-num",
            OptKind::Size,
            "128",
            "number of files to create",
        )
        .shapes_data(),
        opt(
            "file-block-size",
            OptKind::Size,
            "16384",
            "block size to use in all IO operations",
        ),
        opt(
            "file-total-size",
            OptKind::Size,
            "2G",
            "total size of files to create",
        )
        .shapes_data(),
        opt(
            "file-test-mode",
            OptKind::Str,
            "",
            "test mode {seqwr, seqrewr, seqrd, rndrd, rndwr, rndrw}",
        ),
        opt(
            "file-io-mode",
            OptKind::Str,
            "sync",
            "file operations mode {sync,async,mmap}",
        ),
        opt(
            "file-async-backlog",
            OptKind::Size,
            "128",
            "number of asynchronous operatons to queue per thread",
        ),
        opt(
            "file-queue-depth",
            OptKind::Size,
            "0",
            "requests in flight per thread in the async mode, as fio's iodepth (0: --file-async-backlog)",
        ),
        opt(
            "file-extra-flags",
            OptKind::Str,
            "",
            "list of additional flags to use to open files {sync,dsync,direct}",
        ),
        opt(
            "file-fsync-freq",
            OptKind::Size,
            "100",
            "do fsync() after this number of requests (0 - don't use fsync())",
        ),
        opt(
            "file-fsync-all",
            OptKind::Bool,
            "off",
            "do fsync() after each write operation",
        ),
        opt(
            "file-fsync-end",
            OptKind::Bool,
            "on",
            "do fsync() at the end of test",
        ),
        opt(
            "file-fsync-mode",
            OptKind::Str,
            "fsync",
            "which method to use for synchronization {fsync, fdatasync}",
        ),
        opt(
            "file-merged-requests",
            OptKind::Size,
            "0",
            "merge at most this number of IO requests if possible (0 - don't merge)",
        ),
        opt(
            "file-rw-ratio",
            OptKind::Float,
            "1.5",
            "reads/writes ratio for combined test",
        ),
        opt(
            "file-dir",
            OptKind::Str,
            ".",
            "directory of the test files test_file.N (sysbench: the current directory)",
        )
        .shapes_data(),
        opt(
            "validate",
            OptKind::Bool,
            "off",
            "perform validation checks where possible (a checksum and the offset in every block written, checked on reads)",
        ),
    ]
}

/// Which command the options are read for: only `run` needs a test mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum For {
    Run,
    Command,
}

/// A bad value, in dbmeter's words and in sysbench's.
fn bad(name: &str, text: &str, expected: &str, sysbench: Option<String>) -> BenchError {
    match sysbench {
        Some(s) => BenchError::Usage(s),
        None => BenchError::Usage(format!("--{name}={}: expected {expected}", text.trim())),
    }
}

impl FileioConfig {
    /// Reads and checks every option fileio uses. `sysbench`: errors in
    /// sysbench's words (under `dbmeter sysbench`).
    pub fn from_options(o: &OptValues, cmd: For, sysbench: bool) -> Result<Self, BenchError> {
        let sb = |m: String| sysbench.then_some(m);
        let num = |name: &str, lo: u64, hi: u64, expected: &str, sbm: &str| {
            let text = o.str(name);
            match crate::options::parse_size(text) {
                Some(v) if (lo..=hi).contains(&v) => Ok(v),
                _ => Err(bad(
                    name,
                    text,
                    expected,
                    sb(format!("{sbm}{}", text.trim())),
                )),
            }
        };
        let num_files = num(
            "file-num",
            1,
            1_000_000,
            "a number of files from 1 to 1000000",
            "Invalid value for file-num: ",
        )?;
        let total_size = num(
            "file-total-size",
            1,
            1 << 60,
            "a size from 1 byte to 1024P (K, M, G, T allowed)",
            "Invalid value for file-total-size: ",
        )?;
        let file_size = total_size / num_files;
        if file_size == 0 {
            return Err(BenchError::Usage(format!(
                "--file-total-size={}: less than one byte for each of --file-num={num_files} files",
                o.str("file-total-size").trim()
            )));
        }
        let mode = match o.str("file-test-mode").trim() {
            "" if cmd == For::Run => {
                return Err(BenchError::Usage(if sysbench {
                    "Missing required argument: --file-test-mode".into()
                } else {
                    "fileio needs --file-test-mode (seqwr, seqrewr, seqrd, rndrd, rndwr or rndrw) to run".into()
                }));
            }
            "" => None,
            w => match TestMode::WORDS.iter().find(|(n, _)| *n == w) {
                Some((_, m)) => Some(*m),
                None if cmd == For::Run || !sysbench => {
                    return Err(bad(
                        "file-test-mode",
                        w,
                        "one of seqwr, seqrewr, seqrd, rndrd, rndwr, rndrw",
                        sb(format!("Invalid IO operations mode: {w}.")),
                    ));
                }
                // sysbench reads the mode for `run` only.
                None => None,
            },
        };
        let io_text = o.str("file-io-mode").trim();
        let io_mode = match io_text {
            "sync" | "" => IoMode::Sync,
            "async" => IoMode::Async,
            "mmap" => IoMode::Mmap,
            w => {
                return Err(bad(
                    "file-io-mode",
                    w,
                    "one of sync, async, mmap",
                    sb(format!("unknown I/O mode: {w}")),
                ));
            }
        };
        let merged_requests = num(
            "file-merged-requests",
            0,
            1 << 20,
            "a number of requests from 0 to 1048576",
            "Invalid value for file-merged-requests: ",
        )?;
        let block_size = num(
            "file-block-size",
            1,
            MAX_REQUEST,
            "a size from 1 byte to 1G",
            "Invalid value for file-block-size: ",
        )?;
        let request_size = if merged_requests > 0 {
            block_size.saturating_mul(merged_requests)
        } else {
            block_size
        };
        if request_size > MAX_REQUEST {
            return Err(BenchError::Usage(format!(
                "--file-merged-requests={merged_requests}: {merged_requests} blocks of {block_size} bytes make a request above 1 GiB"
            )));
        }
        let flags_text = o.str("file-extra-flags");
        let mut flags = ExtraFlags::default();
        for w in flags_text
            .split(',')
            .map(str::trim)
            .filter(|w| !w.is_empty())
        {
            match w {
                "sync" => flags.sync = true,
                "dsync" => flags.dsync = true,
                "direct" => flags.direct = true,
                _ => {
                    return Err(bad(
                        "file-extra-flags",
                        flags_text,
                        "a comma-separated list of sync, dsync, direct",
                        sb(format!("Invalid value for file-extra-flags: {flags_text}")),
                    ));
                }
            }
        }
        let mut fsync_freq = num(
            "file-fsync-freq",
            0,
            i32::MAX as u64,
            "a number of requests from 0 (no periodic fsync) to 2147483647",
            "Invalid value for file-fsync-freq: ",
        )?;
        let mut fsync_end = o.bool("file-fsync-end");
        let fsync_all = o.bool("file-fsync-all");
        // As in sysbench: an fsync after every write replaces the others.
        if fsync_all {
            fsync_end = false;
            fsync_freq = 0;
        }
        let fsync_text = o.str("file-fsync-mode").trim();
        let fsync_mode = match fsync_text {
            "fsync" => FsyncMode::Fsync,
            "fdatasync" => FsyncMode::Fdatasync,
            w => {
                return Err(bad(
                    "file-fsync-mode",
                    w,
                    "fsync or fdatasync",
                    sb(format!("Invalid fsync mode: {w}.")),
                ));
            }
        };
        let ratio_text = o.str("file-rw-ratio");
        let rw_ratio = match ratio_text.trim().parse::<f64>() {
            Ok(v) if v.is_finite() && (0.0..=1e9).contains(&v) => v,
            _ => {
                return Err(bad(
                    "file-rw-ratio",
                    ratio_text,
                    "a ratio of reads to writes from 0 to 1e9",
                    sb(format!(
                        "Invalid value for --file-rw-ratio: {}.",
                        ratio_text.trim()
                    )),
                ));
            }
        };
        let backlog = num(
            "file-async-backlog",
            1,
            4096,
            "a number of requests from 1 to 4096",
            "Invalid value of file-async-backlog: ",
        )?;
        let depth = num(
            "file-queue-depth",
            0,
            4096,
            "a number of requests in flight from 1 to 4096 (0: --file-async-backlog)",
            "Invalid value for file-queue-depth: ",
        )?;
        let queue_depth = if depth > 0 { depth } else { backlog } as u32;
        let dir_text = o.str("file-dir");
        if dir_text.trim().is_empty() {
            return Err(BenchError::Usage(
                "--file-dir=: expected a directory (. is the current one)".into(),
            ));
        }
        let threads = o.u64_in(
            "threads",
            1..=100_000,
            "a number of threads from 1 to 100000",
        )? as usize;
        Ok(FileioConfig {
            num_files,
            total_size,
            file_size,
            block_size,
            request_size,
            merged_requests,
            mode,
            io_mode,
            queue_depth,
            flags,
            fsync_freq,
            fsync_all,
            fsync_end,
            fsync_mode,
            rw_ratio,
            validate: o.bool("validate"),
            dir: PathBuf::from(dir_text),
            threads,
        })
    }

    /// The path of file `i`.
    pub fn file(&self, i: u64) -> PathBuf {
        self.dir.join(file_name(i))
    }

    /// The size of the file set: every file, `file_size` bytes.
    pub fn set_size(&self) -> u64 {
        self.file_size.saturating_mul(self.num_files)
    }
}

/// `test_file.N`, as sysbench names its files.
pub fn file_name(i: u64) -> String {
    format!("test_file.{i}")
}

/// A size as sysbench prints one (`8MiB` without the B: `8Mi`, `16Ki`,
/// `4.001Ki`, `100`): divided by 1024 while it is 1024 or more, then five
/// significant digits as C's `%.5g`.
pub fn sysbench_size(bytes: u64) -> String {
    let mut v = bytes as f64;
    let mut i = 0;
    const MODS: [char; 4] = ['K', 'M', 'G', 'T'];
    while i < MODS.len() && v >= 1024.0 {
        v /= 1024.0;
        i += 1;
    }
    let digits = g5(v);
    if i > 0 {
        format!("{digits}{}i", MODS[i - 1])
    } else {
        digits
    }
}

/// C's `%.5g` for a value from 0 to 1024 (never in exponent form there).
fn g5(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let exp = v.abs().log10().floor() as i32;
    let decimals = (4 - exp).max(0) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::testing::{refused, values};

    fn parse(o: &OptValues) -> Result<FileioConfig, BenchError> {
        FileioConfig::from_options(o, For::Run, false)
    }

    #[test]
    fn defaults_are_sysbench_s() {
        let c = FileioConfig::from_options(&values(&options(), &[]), For::Command, false).unwrap();
        assert_eq!(c.num_files, 128);
        assert_eq!(c.total_size, 2 << 30);
        assert_eq!(c.file_size, 16 << 20);
        assert_eq!(c.block_size, 16384);
        assert_eq!(c.request_size, 16384);
        assert_eq!(c.mode, None);
        assert_eq!(c.io_mode, IoMode::Sync);
        assert_eq!(c.queue_depth, 128);
        assert_eq!(c.flags, ExtraFlags::default());
        assert_eq!((c.fsync_freq, c.fsync_all, c.fsync_end), (100, false, true));
        assert_eq!(c.fsync_mode, FsyncMode::Fsync);
        assert_eq!(c.rw_ratio, 1.5);
        assert_eq!(c.file(3), PathBuf::from("./test_file.3"));
    }

    #[test]
    fn values_read_into_the_config() {
        let o = values(
            &options(),
            &[
                ("file-num", "4"),
                ("file-total-size", "32M"),
                ("file-test-mode", "rndrw"),
                ("file-io-mode", "async"),
                ("file-queue-depth", "32"),
                ("file-extra-flags", "dsync,sync,direct"),
                ("file-merged-requests", "4"),
                ("file-block-size", "4K"),
                ("file-fsync-mode", "fdatasync"),
            ],
        );
        let c = parse(&o).unwrap();
        assert_eq!(c.file_size, 8 << 20);
        assert_eq!(c.request_size, 16384);
        assert_eq!(c.mode, Some(TestMode::RndReadWrite));
        assert_eq!((c.io_mode, c.queue_depth), (IoMode::Async, 32));
        assert_eq!(c.flags.describe(), "sync dsync directio");
        assert_eq!(c.fsync_mode, FsyncMode::Fdatasync);
        // fsync after every write replaces the periodic and the last one.
        let o = values(
            &options(),
            &[("file-test-mode", "seqwr"), ("file-fsync-all", "on")],
        );
        let c = parse(&o).unwrap();
        assert_eq!((c.fsync_freq, c.fsync_end, c.fsync_all), (0, false, true));
    }

    #[test]
    fn bad_values_are_one_line() {
        let own = options();
        let with_mode =
            |name: &'static str, v: &'static str| vec![("file-test-mode", "rndrd"), (name, v)];
        for (name, v) in [
            ("file-num", "0"),
            ("file-num", "-3"),
            ("file-total-size", "0"),
            ("file-block-size", "0"),
            ("file-block-size", "2G"),
            ("file-io-mode", "aio"),
            ("file-extra-flags", "sync,fast"),
            ("file-fsync-freq", "-1"),
            ("file-fsync-mode", "msync"),
            ("file-rw-ratio", "-1"),
            ("file-rw-ratio", "NaN"),
            ("file-async-backlog", "0"),
            ("file-queue-depth", "100000"),
            ("threads", "0"),
        ] {
            refused(&own, &with_mode(name, v), parse);
        }
        refused(&own, &[("file-test-mode", "foo")], parse);
        // sysbench's words under `dbmeter sysbench`.
        let o = values(&own, &[("file-test-mode", "foo")]);
        assert_eq!(
            FileioConfig::from_options(&o, For::Run, true),
            Err(BenchError::Usage("Invalid IO operations mode: foo.".into()))
        );
        let o = values(&own, &[]);
        assert_eq!(
            FileioConfig::from_options(&o, For::Run, true),
            Err(BenchError::Usage(
                "Missing required argument: --file-test-mode".into()
            ))
        );
        let e = parse(&o).unwrap_err().to_string();
        assert!(e.contains("--file-test-mode"), "{e}");
        // prepare and cleanup need no mode.
        assert!(FileioConfig::from_options(&o, For::Command, true).is_ok());
        let o = values(&own, &[("file-num", "64"), ("file-total-size", "10")]);
        assert!(FileioConfig::from_options(&o, For::Command, false).is_err());
    }

    #[test]
    fn sizes_print_as_sysbench_prints_them() {
        assert_eq!(sysbench_size(8 << 20), "8Mi");
        assert_eq!(sysbench_size(32 << 20), "32Mi");
        assert_eq!(sysbench_size(16384), "16Ki");
        assert_eq!(sysbench_size(256 << 10), "256Ki");
        assert_eq!(sysbench_size(4097), "4.001Ki");
        assert_eq!(sysbench_size(160 << 10), "160Ki");
        assert_eq!(sysbench_size(100), "100");
        assert_eq!(sysbench_size(2 << 30), "2Gi");
        assert_eq!(sysbench_size(1000), "1000");
        assert_eq!(sysbench_size(1_500_000), "1.4305Mi");
    }
}
