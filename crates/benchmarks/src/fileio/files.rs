//! The test files: made by `prepare` as sysbench makes them, removed by
//! `cleanup`, opened (and checked) for a run; the checks that come before
//! any of it (free space, O_DIRECT's alignment and whether the filesystem
//! takes it).

use super::config::{FileioConfig, file_name, sysbench_size};
use super::io::{AlignedBuf, fill_block};
use crate::benchmark::BenchError;
use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Opens `path` with open(2)'s `flags` (and mode 0600 when it creates).
pub fn open(path: &Path, flags: libc::c_int) -> io::Result<File> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: `c` is a valid NUL-terminated path; open(2) has no other
    // requirements and returns a new descriptor or -1.
    let fd = unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC, 0o600) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a descriptor open(2) just returned, owned by nobody else.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// sysbench's words for a failed call: `... errno = 2 (No such file or directory)`.
pub fn errno_words(e: &io::Error) -> String {
    let code = e.raw_os_error().unwrap_or(0);
    // std's text ends with " (os error N)"; sysbench shows strerror alone.
    let text = e.to_string();
    let text = text
        .rsplit_once(" (os error")
        .map_or(text.as_str(), |(t, _)| t)
        .to_string();
    format!("errno = {code} ({text})")
}

/// Sizes in messages: `2.00 GiB`, `512 bytes`.
pub fn human(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes < 1024 {
        return format!("{bytes} bytes");
    }
    let mut v = bytes as f64 / 1024.0;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.2} {}", UNITS[u])
}

/// The alignment O_DIRECT needs under a file or directory, as statx(2)
/// reports it (`STATX_DIOALIGN`, Linux 6.1), else the device's logical
/// block size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DirectIo {
    /// Offsets and lengths in multiples of `offset`, buffers aligned to
    /// `memory` (dbmeter's are page-aligned).
    Aligned { memory: u64, offset: u64 },
    /// The filesystem says it does not do direct I/O on this file.
    Refused,
}

/// What statx says of direct I/O on `fd`; None when the kernel or the
/// filesystem does not say.
fn statx_dio(fd: RawFd) -> Option<DirectIo> {
    let mut st = std::mem::MaybeUninit::<libc::statx>::zeroed();
    let empty = c"";
    // SAFETY: `fd` is an open descriptor, the path is an empty C string
    // (AT_EMPTY_PATH: the descriptor itself), `st` is writable memory of
    // the size statx fills.
    let rc = unsafe {
        libc::statx(
            fd,
            empty.as_ptr(),
            libc::AT_EMPTY_PATH,
            libc::STATX_DIOALIGN,
            st.as_mut_ptr(),
        )
    };
    if rc != 0 {
        return None;
    }
    // SAFETY: statx returned 0: it filled `st` (zeroed before).
    let st = unsafe { st.assume_init() };
    if st.stx_mask & libc::STATX_DIOALIGN == 0 {
        return None;
    }
    if st.stx_dio_offset_align == 0 {
        return Some(DirectIo::Refused);
    }
    Some(DirectIo::Aligned {
        memory: u64::from(st.stx_dio_mem_align),
        offset: u64::from(st.stx_dio_offset_align),
    })
}

/// The logical block size of the device under `fd` (512 when unknown).
fn device_block(fd: RawFd) -> u64 {
    let mut st = std::mem::MaybeUninit::<libc::stat>::zeroed();
    // SAFETY: `fd` is open and `st` is writable memory for one stat.
    if unsafe { libc::fstat(fd, st.as_mut_ptr()) } != 0 {
        return 512;
    }
    // SAFETY: fstat returned 0 and filled `st`.
    let st = unsafe { st.assume_init() };
    let (major, minor) = (libc::major(st.st_dev), libc::minor(st.st_dev));
    let dev = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
    [dev.join("queue"), dev.join("../queue")]
        .iter()
        .filter_map(|q| std::fs::read_to_string(q.join("logical_block_size")).ok())
        .find_map(|t| t.trim().parse::<u64>().ok())
        .filter(|b| *b > 0)
        .unwrap_or(512)
}

/// Direct I/O's terms on `fd` (a file, or the directory before there is one).
pub fn direct_io(fd: RawFd) -> DirectIo {
    statx_dio(fd).unwrap_or_else(|| DirectIo::Aligned {
        memory: 512,
        offset: device_block(fd),
    })
}

/// The filesystem under `dir`, for messages (`tmpfs`, `ext4`).
pub fn filesystem(dir: &Path) -> String {
    dbmeter_env::storage::describe(dir).map_or_else(|| "its filesystem".into(), |s| s.filesystem)
}

/// The error for a filesystem that refuses O_DIRECT.
pub fn direct_refused(cfg: &FileioConfig) -> BenchError {
    BenchError::Failed(format!(
        "the filesystem under {} ({}) refuses O_DIRECT (--file-extra-flags=direct): put the files on a disk filesystem with --file-dir, or leave direct out",
        cfg.dir.display(),
        filesystem(&cfg.dir)
    ))
}

/// Checks the block size, the merged request size and the file size
/// against O_DIRECT's alignment `dio` (`what`: where it was read).
pub fn check_direct(cfg: &FileioConfig, dio: DirectIo) -> Result<(), BenchError> {
    let align = match dio {
        DirectIo::Refused => return Err(direct_refused(cfg)),
        DirectIo::Aligned { memory, offset } => {
            if memory > AlignedBuf::ALIGN as u64 {
                return Err(BenchError::Failed(format!(
                    "O_DIRECT under {} needs buffers aligned to {memory} bytes, more than the {} dbmeter gives",
                    cfg.dir.display(),
                    AlignedBuf::ALIGN
                )));
            }
            offset
        }
    };
    let fs = filesystem(&cfg.dir);
    if !cfg.block_size.is_multiple_of(align) {
        return Err(BenchError::Usage(format!(
            "--file-block-size={}: O_DIRECT (--file-extra-flags=direct) on {} ({fs}) needs a multiple of {align} bytes",
            cfg.block_size,
            cfg.dir.display()
        )));
    }
    if !cfg.file_size.is_multiple_of(align) {
        return Err(BenchError::Usage(format!(
            "--file-total-size={}: each of the {} files would be {} bytes, not a multiple of the {align} bytes O_DIRECT needs on {} ({fs})",
            cfg.total_size,
            cfg.num_files,
            cfg.file_size,
            cfg.dir.display()
        )));
    }
    Ok(())
}

/// Direct I/O's terms under the directory, before any file is there.
fn direct_io_of_dir(dir: &Path) -> io::Result<DirectIo> {
    let d = open(dir, libc::O_RDONLY | libc::O_DIRECTORY)?;
    Ok(direct_io(d.as_raw_fd()))
}

/// The error for a directory that cannot be used.
fn dir_error(cfg: &FileioConfig, e: &io::Error) -> BenchError {
    BenchError::Failed(format!("cannot use --file-dir={}: {e}", cfg.dir.display()))
}

/// How big a file is now (0 when it does not exist).
fn size_of(path: &Path) -> io::Result<u64> {
    match std::fs::metadata(path) {
        Ok(m) => Ok(m.len()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(0),
        Err(e) => Err(e),
    }
}

/// Bytes `prepare` will add: each file short of its size grows by whole
/// blocks until it has it.
pub fn bytes_to_write(cfg: &FileioConfig) -> io::Result<u64> {
    let mut need = 0u64;
    for i in 0..cfg.num_files {
        let have = size_of(&cfg.file(i))?;
        if have < cfg.file_size {
            let blocks = (cfg.file_size - have).div_ceil(cfg.block_size);
            need = need.saturating_add(blocks.saturating_mul(cfg.block_size));
        }
    }
    Ok(need)
}

/// Refuses a file set that does not fit in the free space of its
/// directory, with the numbers.
pub fn check_space(cfg: &FileioConfig) -> Result<(), BenchError> {
    let need = bytes_to_write(cfg).map_err(|e| dir_error(cfg, &e))?;
    let Some(free) = dbmeter_env::storage::free_bytes(&cfg.dir) else {
        return Err(BenchError::Failed(format!(
            "cannot use --file-dir={}: no such directory",
            cfg.dir.display()
        )));
    };
    if need > free {
        return Err(BenchError::Failed(format!(
            "the test files need {} ({need} bytes) more on {} but only {} ({free} bytes) are free there: use a smaller --file-total-size or another --file-dir",
            human(need),
            cfg.dir.display(),
            human(free)
        )));
    }
    Ok(())
}

/// Where `prepare` and `cleanup` say what they do.
pub trait Say {
    fn say(&self, line: &str);
}

impl<F: Fn(&str)> Say for F {
    fn say(&self, line: &str) {
        self(line)
    }
}

/// sysbench's `prepare`: the files made or extended to their size in
/// blocks of `--file-block-size` (zeros, or with `--validate` random
/// bytes with a checksum and the offset), each synced and closed,
/// whatever `--file-test-mode` says (as sysbench 1.0.20, which reads the
/// mode for `run` only; a `seqwr` run makes its files anew).
pub fn prepare(cfg: &FileioConfig, seed: u64, say: &dyn Say) -> Result<(), BenchError> {
    if !cfg.dir.is_dir() {
        return Err(BenchError::Failed(format!(
            "cannot use --file-dir={}: no such directory",
            cfg.dir.display()
        )));
    }
    check_space(cfg)?;
    if cfg.flags.direct {
        let dio = direct_io_of_dir(&cfg.dir).map_err(|e| dir_error(cfg, &e))?;
        // The directory's terms are the device's; a file's may refuse.
        if dio != DirectIo::Refused {
            check_direct(cfg, dio)?;
        }
    }
    say.say(&format!(
        "{} files, {}Kb each, {}Mb total",
        cfg.num_files,
        cfg.file_size / 1024,
        cfg.set_size() / (1024 * 1024)
    ));
    say.say("Creating files for the test...");
    say.say(&format!("Extra file open flags: {}", cfg.flags.describe()));
    let mut buf = AlignedBuf::new(cfg.block_size as usize)
        .map_err(|e| BenchError::Failed(format!("cannot allocate a block: {e}")))?;
    let mut rng = <rand_xoshiro::Xoshiro256PlusPlus as rand_core::SeedableRng>::seed_from_u64(seed);
    let started = std::time::Instant::now();
    let mut written = 0u64;
    for i in 0..cfg.num_files {
        let path = cfg.file(i);
        let name = file_name(i);
        let f = open(
            &path,
            libc::O_CREAT | libc::O_WRONLY | cfg.flags.open_flags(),
        )
        .map_err(|e| create_error(cfg, &path, &e))?;
        if cfg.flags.direct {
            check_direct(cfg, direct_io(f.as_raw_fd()))?;
        }
        let mut offset = f
            .metadata()
            .map_err(|e| BenchError::Failed(format!("cannot read {}: {e}", path.display())))?
            .len();
        if offset >= cfg.file_size {
            say.say(&format!("Reusing existing file {name}"));
        } else if offset > 0 {
            say.say(&format!("Extending existing file {name}"));
        } else {
            say.say(&format!("Creating file {name}"));
        }
        if cfg.flags.direct && !offset.is_multiple_of(cfg.block_size) && offset < cfg.file_size {
            return Err(BenchError::Failed(format!(
                "{} is {offset} bytes, not a whole number of blocks, and O_DIRECT cannot extend it: remove it with `dbmeter cleanup fileio` first",
                path.display()
            )));
        }
        while offset < cfg.file_size {
            if cfg.validate {
                fill_block(buf.bytes_mut(), offset, &mut rng);
            }
            write_all_at(&f, buf.bytes(), offset).map_err(|e| {
                BenchError::Failed(format!(
                    "Failed to write file! {} {}",
                    path.display(),
                    errno_words(&e)
                ))
            })?;
            offset += cfg.block_size;
            written += cfg.block_size;
        }
        // Synced now, so that writing back the cache does not fall into
        // the run.
        f.sync_all().map_err(|e| {
            BenchError::Failed(format!(
                "cannot sync {}: {}",
                path.display(),
                errno_words(&e)
            ))
        })?;
    }
    let seconds = started.elapsed().as_secs_f64();
    if written > 0 {
        say.say(&format!(
            "{written} bytes written in {seconds:.2} seconds ({:.2} MiB/sec).",
            written as f64 / (1024.0 * 1024.0) / seconds.max(1e-9)
        ));
    } else {
        say.say("No bytes written.");
    }
    Ok(())
}

/// Writes `buf` at `offset` (one call; a short write is retried for
/// the rest, as write(2) may stop early).
fn write_all_at(f: &File, buf: &[u8], offset: u64) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    f.write_all_at(buf, offset)
}

fn create_error(cfg: &FileioConfig, path: &Path, e: &io::Error) -> BenchError {
    if cfg.flags.direct && e.raw_os_error() == Some(libc::EINVAL) {
        return direct_refused(cfg);
    }
    BenchError::Failed(format!(
        "Can't open file {} {}",
        path.display(),
        errno_words(e)
    ))
}

/// sysbench's `cleanup`: every test file removed, those of a prepare
/// with a larger `--file-num` too (numbered on from `--file-num`).
pub fn cleanup(cfg: &FileioConfig, say: &dyn Say) -> Result<(), BenchError> {
    say.say("Removing test files...");
    let remove = |i: u64| -> Result<bool, BenchError> {
        let path = cfg.file(i);
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(BenchError::Failed(format!(
                "cannot remove {}: {e}",
                path.display()
            ))),
        }
    };
    for i in 0..cfg.num_files {
        remove(i)?;
    }
    let mut i = cfg.num_files;
    while remove(i)? {
        i += 1;
    }
    Ok(())
}

/// The files of a run, open with `--file-extra-flags` (and their sizes
/// checked), as sysbench opens them: `seqwr` makes them anew (empty).
pub fn open_for_run(cfg: &FileioConfig, sysbench: bool) -> Result<Vec<File>, BenchError> {
    let seqwr = cfg.mode == Some(super::config::TestMode::SeqWrite);
    if !sysbench && !cfg.dir.is_dir() {
        return Err(BenchError::Failed(format!(
            "cannot use --file-dir={}: no such directory",
            cfg.dir.display()
        )));
    }
    let flags = libc::O_RDWR | cfg.flags.open_flags();
    let mut files = Vec::with_capacity(cfg.num_files as usize);
    for i in 0..cfg.num_files {
        let path = cfg.file(i);
        let name = file_name(i);
        if seqwr {
            let _ = std::fs::remove_file(&path);
            open(&path, libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY).map_err(|e| {
                BenchError::Failed(format!("Cannot create file '{name}' {}", errno_words(&e)))
            })?;
        }
        let f = match open(&path, flags) {
            Ok(f) => f,
            Err(e) if cfg.flags.direct && e.raw_os_error() == Some(libc::EINVAL) => {
                return Err(direct_refused(cfg));
            }
            Err(e) if sysbench => {
                return Err(BenchError::Failed(format!(
                    "Cannot open file '{name}' {}\nWARNING: Did you forget to run the prepare step?",
                    errno_words(&e)
                )));
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(BenchError::Failed(format!(
                    "{} does not exist: run `dbmeter prepare fileio` with the same --file-num, --file-total-size and --file-dir first",
                    path.display()
                )));
            }
            Err(e) => {
                return Err(BenchError::Failed(format!(
                    "cannot open {}: {e}",
                    path.display()
                )));
            }
        };
        if cfg.flags.direct {
            check_direct(cfg, direct_io(f.as_raw_fd()))?;
        }
        if !seqwr {
            let size = f
                .metadata()
                .map_err(|e| BenchError::Failed(format!("fstat() failed on file '{name}': {e}")))?
                .len();
            if size < cfg.file_size {
                return Err(BenchError::Failed(if sysbench {
                    format!(
                        "Size of file '{name}' is {}B, but at least {}B is expected.\nWARNING: Did you run 'prepare' with different --file-total-size or --file-num values?",
                        sysbench_size(size),
                        sysbench_size(cfg.file_size)
                    )
                } else {
                    format!(
                        "{} is {}, but the run needs {} ({} / {} files): run `dbmeter prepare fileio` with the same --file-total-size and --file-num",
                        path.display(),
                        human(size),
                        human(cfg.file_size),
                        human(cfg.total_size),
                        cfg.num_files
                    )
                }));
            }
        }
        files.push(f);
    }
    Ok(files)
}
