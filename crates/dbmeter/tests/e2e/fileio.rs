//! `fileio`, sysbench's file I/O test: the files prepare makes and
//! cleanup removes (after a Ctrl-C during prepare too), every test mode
//! and I/O mode counted request by request (events, bytes = requests x
//! block, fsyncs by --file-fsync-freq and at the end), O_DIRECT and
//! io_uring where the machine takes them, the warnings of set-ups that
//! measure memory, and the refusals (free space, O_DIRECT's alignment,
//! a filesystem without O_DIRECT, missing or short files). Counts and
//! messages only: no timing.

use crate::common::*;
use dbmeter_testkit::tools::FIO;
use serde_json::Value;
use std::io::BufRead;
use std::path::Path;

/// 4 files of 256 KiB, blocks of 4 KiB.
const SET: [&str; 3] = [
    "--file-num=4",
    "--file-total-size=1M",
    "--file-block-size=4K",
];

fn with(extra: &[&str]) -> Vec<String> {
    SET.iter().chain(extra).map(|a| a.to_string()).collect()
}

fn args(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// What a run counted, from its JSON document.
#[derive(Debug, PartialEq)]
struct Counted {
    events: u64,
    reads: u64,
    writes: u64,
    fsyncs: u64,
    bytes_read: u64,
    bytes_written: u64,
    /// Events of each kind: read, write, fsync.
    kinds: [u64; 3],
}

fn counted(doc: &Value) -> Counted {
    let c = |n: &str| doc["totals"]["counts"][n].as_u64().unwrap_or(0);
    let kind = |n: &str| {
        doc["kinds"]
            .as_array()
            .and_then(|k| k.iter().find(|k| k["name"] == n))
            .and_then(|k| k["events"].as_u64())
            .unwrap_or(0)
    };
    Counted {
        events: doc["totals"]["events"].as_u64().unwrap_or(0),
        reads: c("reads"),
        writes: c("writes"),
        fsyncs: c("fsyncs"),
        bytes_read: c("bytes_read"),
        bytes_written: c("bytes_written"),
        kinds: [kind("read"), kind("write"), kind("fsync")],
    }
}

/// `dbmeter run fileio` with the set, `extra` and a JSON document on
/// stdout; insists on success.
fn run(s: &Scratch, extra: &[&str]) -> (Counted, Run) {
    let mut a = with(extra);
    a.insert(0, "fileio".into());
    a.insert(0, "run".into());
    a.push("--format=json".into());
    let r = s.run(&args(&a));
    assert_eq!(r.code, 0, "{a:?}:\n{}\n{}", r.stdout, r.stderr);
    (counted(&r.json()), r)
}

fn test_files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("test_file."))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Whether the run fell back from io_uring (the kernel refuses it); says
/// that the test skips its async part.
fn uring_refused(r: &Run) -> bool {
    let refused = r.stderr.contains("this run uses synchronous I/O");
    if refused {
        eprintln!(
            "skipping the io_uring part: the kernel refuses io_uring here:\n{}",
            r.stderr
        );
    }
    refused
}

#[test]
fn prepare_makes_the_files_and_cleanup_removes_them() {
    let s = Scratch::new();
    let r = s.ok(&args(&{
        let mut a = vec!["prepare".to_string(), "fileio".into()];
        a.extend(with(&[]));
        a
    }));
    assert!(r.stdout.contains("4 files, 256Kb each, 1Mb total\nCreating files for the test...\nExtra file open flags: (none)\nCreating file test_file.0\n"), "{}", r.stdout);
    assert!(
        r.stdout.contains("1048576 bytes written in "),
        "{}",
        r.stdout
    );
    assert_eq!(
        test_files(s.dir.path()),
        ["test_file.0", "test_file.1", "test_file.2", "test_file.3"]
    );
    for f in test_files(s.dir.path()) {
        assert_eq!(std::fs::metadata(s.path(&f)).unwrap().len(), 256 << 10);
    }
    // Again: the files are there already.
    let r = s.ok(&["prepare", "fileio", SET[0], SET[1], SET[2]]);
    assert!(
        r.stdout
            .contains("Reusing existing file test_file.3\nNo bytes written."),
        "{}",
        r.stdout
    );
    // A smaller file set: cleanup removes the files numbered beyond it too.
    let r = s.ok(&["cleanup", "fileio", "--file-num=2"]);
    assert!(r.stdout.contains("Removing test files..."), "{}", r.stdout);
    assert!(test_files(s.dir.path()).is_empty());
    // --file-dir puts them elsewhere.
    std::fs::create_dir(s.path("d")).unwrap();
    s.ok(&["prepare", "fileio", SET[0], SET[1], "--file-dir=d"]);
    assert_eq!(test_files(&s.path("d")).len(), 4);
    assert!(test_files(s.dir.path()).is_empty());
    s.ok(&["cleanup", "fileio", SET[0], "--file-dir=d"]);
    assert!(test_files(&s.path("d")).is_empty());
}

#[test]
fn every_test_mode_counts_its_requests() {
    let s = Scratch::new();
    s.ok(&["prepare", "fileio", SET[0], SET[1], SET[2]]);
    let fsync = ["--events=200", "--file-fsync-freq=50"];
    for mode in ["seqrd", "rndrd"] {
        let (c, _) = run(
            &s,
            &[&format!("--file-test-mode={mode}"), fsync[0], fsync[1]],
        );
        // Reads only: no fsync, not even at the end.
        assert_eq!(
            c,
            Counted {
                events: 200,
                reads: 200,
                writes: 0,
                fsyncs: 0,
                bytes_read: 200 * 4096,
                bytes_written: 0,
                kinds: [200, 0, 0],
            },
            "{mode}"
        );
    }
    // Writes: after each 50 requests one fsync per file (4 events), and
    // an fsync of each file at the end: 50+4+50+4+50+4+38 events.
    for mode in ["rndwr", "seqrewr", "rndrw", "seqwr"] {
        let (c, _) = run(
            &s,
            &[&format!("--file-test-mode={mode}"), fsync[0], fsync[1]],
        );
        assert_eq!(c.events, 200, "{mode}");
        assert_eq!(c.reads + c.writes, 188, "{mode}: {c:?}");
        assert_eq!(c.kinds, [c.reads, c.writes, 12], "{mode}: {c:?}");
        assert_eq!(c.fsyncs, 12 + 4, "{mode}: {c:?}");
        assert_eq!(c.bytes_read, c.reads * 4096, "{mode}");
        assert_eq!(c.bytes_written, c.writes * 4096, "{mode}");
        if mode == "rndrw" {
            // --file-rw-ratio=1.5: 113 reads for 75 writes.
            assert!((110..=116).contains(&c.reads), "{c:?}");
        }
    }
    // seqwr made its files anew: 188 blocks of 4 KiB, in order.
    let sizes: u64 = test_files(s.dir.path())
        .iter()
        .map(|f| std::fs::metadata(s.path(f)).unwrap().len())
        .sum();
    assert_eq!(sizes, 188 * 4096);
    // Without a periodic fsync, and with one after every write instead.
    s.ok(&["prepare", "fileio", SET[0], SET[1], SET[2]]);
    let (c, _) = run(
        &s,
        &[
            "--file-test-mode=rndwr",
            "--events=100",
            "--file-fsync-freq=0",
            "--file-fsync-end=off",
        ],
    );
    assert_eq!((c.writes, c.fsyncs, c.kinds[2]), (100, 0, 0));
    let (c, _) = run(
        &s,
        &[
            "--file-test-mode=rndwr",
            "--events=100",
            "--file-fsync-all=on",
        ],
    );
    assert_eq!((c.writes, c.fsyncs, c.kinds[2]), (100, 100, 0));
    // Merged requests: sequential requests of 4 blocks.
    let (c, _) = run(
        &s,
        &[
            "--file-test-mode=seqrd",
            "--events=10",
            "--file-merged-requests=4",
        ],
    );
    assert_eq!(c.bytes_read, 10 * 4 * 4096);
    s.ok(&["cleanup", "fileio", SET[0]]);
}

#[test]
fn each_io_mode_validates_what_it_reads() {
    let s = Scratch::new();
    s.ok(&["prepare", "fileio", SET[0], SET[1], SET[2], "--validate"]);
    for io in ["sync", "mmap", "async"] {
        let (c, r) = run(
            &s,
            &[
                "--file-test-mode=rndrw",
                "--events=400",
                "--threads=2",
                "--validate",
                &format!("--file-io-mode={io}"),
                "--file-queue-depth=8",
            ],
        );
        if io == "async" && uring_refused(&r) {
            continue;
        }
        assert_eq!(c.events, 400, "{io}");
        // Every request counted once it completed, the queue drained.
        assert_eq!(c.reads + c.writes + c.kinds[2], 400, "{io}: {c:?}");
        assert_eq!(c.bytes_read, c.reads * 4096, "{io}");
        assert_eq!(c.bytes_written, c.writes * 4096, "{io}");
        assert!(c.fsyncs >= c.kinds[2] + 8, "{io}: {c:?}");
    }
    // Blocks prepared without checksums fail validation.
    s.ok(&["cleanup", "fileio", SET[0]]);
    s.ok(&["prepare", "fileio", SET[0], SET[1], SET[2]]);
    let r = s.run(&[
        "run",
        "fileio",
        SET[0],
        SET[1],
        SET[2],
        "--file-test-mode=rndrd",
        "--events=10",
        "--validate",
    ]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("Checksum mismatch"), "{}", r.stderr);
}

/// O_DIRECT where the scratch directory's filesystem takes it: sync and
/// io_uring at queue depth 1 and 16; an unaligned block size refused.
#[test]
fn direct_io_reads_and_writes_and_refuses_unaligned_blocks() {
    let s = Scratch::new();
    let p = s.run(&[
        "prepare",
        "fileio",
        SET[0],
        SET[1],
        SET[2],
        "--file-extra-flags=direct",
    ]);
    if p.code != 0 && p.stderr.contains("refuses O_DIRECT") {
        eprintln!(
            "skipping: the scratch directory's filesystem refuses O_DIRECT: {}",
            p.stderr
        );
        return;
    }
    assert_eq!(p.code, 0, "{}\n{}", p.stdout, p.stderr);
    assert!(
        p.stdout.contains("Extra file open flags: directio"),
        "{}",
        p.stdout
    );
    for (io, depth) in [("sync", "1"), ("async", "1"), ("async", "16")] {
        for mode in ["rndrd", "rndwr"] {
            let (c, r) = run(
                &s,
                &[
                    &format!("--file-test-mode={mode}"),
                    "--events=300",
                    "--file-extra-flags=direct",
                    &format!("--file-io-mode={io}"),
                    &format!("--file-queue-depth={depth}"),
                ],
            );
            if io == "async" && uring_refused(&r) {
                return;
            }
            assert_eq!(c.events, 300, "{io} {depth} {mode}");
            assert_eq!(c.bytes_read + c.bytes_written, (c.reads + c.writes) * 4096);
            // O_DIRECT reads say nothing of the page cache.
            assert!(!r.stderr.contains("page cache"), "{}", r.stderr);
        }
    }
    let r = s.run(&[
        "run",
        "fileio",
        SET[0],
        SET[1],
        "--file-block-size=1000",
        "--file-extra-flags=direct",
        "--file-test-mode=rndrd",
    ]);
    assert_eq!(r.code, 2, "{}\n{}", r.stdout, r.stderr);
    let line = r.stderr.trim();
    assert!(
        line.contains("--file-block-size=1000: O_DIRECT (--file-extra-flags=direct)")
            && line.contains("needs a multiple of"),
        "{line}"
    );
    assert_eq!(line.lines().count(), 1, "{line}");
}

/// Files on tmpfs are said to be in memory; O_DIRECT there is refused
/// with one line (Linux before 6.6) or taken (6.6 on, a skip).
#[test]
fn tmpfs_is_memory_and_direct_io_there() {
    let shm = Path::new("/dev/shm");
    let on_tmpfs = std::fs::read_to_string("/proc/self/mountinfo").is_ok_and(|m| {
        m.lines()
            .any(|l| l.contains(" /dev/shm ") && l.contains(" - tmpfs "))
    });
    if !on_tmpfs {
        eprintln!("skipping: /dev/shm is not a tmpfs here");
        return;
    }
    let dir = tempfile::tempdir_in(shm).expect("a directory in /dev/shm");
    let d = format!("--file-dir={}", dir.path().display());
    let s = Scratch::new();
    s.ok(&["prepare", "fileio", SET[0], SET[1], SET[2], &d]);
    let (_, r) = run(&s, &["--file-test-mode=rndrd", "--events=50", &d]);
    assert!(
        r.stderr.contains("the test files are on tmpfs"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("this measures memory"), "{}", r.stderr);
    let stored = r.json();
    let codes: Vec<&str> = stored["warnings"]
        .as_array()
        .map(|w| w.iter().filter_map(|w| w["code"].as_str()).collect())
        .unwrap_or_default();
    assert!(
        codes.contains(&"memory_filesystem") && codes.contains(&"page_cache"),
        "{codes:?}"
    );
    s.ok(&["cleanup", "fileio", SET[0], &d]);
    let r = s.run(&[
        "prepare",
        "fileio",
        SET[0],
        SET[1],
        SET[2],
        &d,
        "--file-extra-flags=direct",
    ]);
    if r.code == 0 {
        eprintln!("skipping the refusal: this kernel's tmpfs takes O_DIRECT (Linux 6.6 and later)");
        s.ok(&["cleanup", "fileio", SET[0], &d]);
        return;
    }
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("(tmpfs) refuses O_DIRECT"),
        "{}",
        r.stderr
    );
    assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
}

#[test]
fn bad_input_is_one_line() {
    let s = Scratch::new();
    // More than the free space: refused before anything is written.
    let r = s.run(&[
        "prepare",
        "fileio",
        "--file-num=2",
        "--file-total-size=1000T",
    ]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("the test files need 1000.00 TiB") && r.stderr.contains("are free there"),
        "{}",
        r.stderr
    );
    assert!(test_files(s.dir.path()).is_empty());
    // No files yet.
    let r = s.run(&["run", "fileio", SET[0], SET[1], "--file-test-mode=rndrd"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains("test_file.0 does not exist: run `dbmeter prepare fileio`"),
        "{}",
        r.stderr
    );
    // Files shorter than the options make them.
    s.ok(&["prepare", "fileio", SET[0], "--file-total-size=64K"]);
    let r = s.run(&["run", "fileio", SET[0], SET[1], "--file-test-mode=rndrd"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains("test_file.0 is 16.00 KiB, but the run needs 256.00 KiB"),
        "{}",
        r.stderr
    );
    // Values out of range, and no test mode for a run.
    for (bad, what) in [
        (
            "--file-test-mode=foo",
            "--file-test-mode=foo: expected one of seqwr",
        ),
        (
            "--file-io-mode=aio",
            "--file-io-mode=aio: expected one of sync, async, mmap",
        ),
        (
            "--file-extra-flags=sync,fast",
            "--file-extra-flags=sync,fast: expected",
        ),
        ("--file-block-size=0", "--file-block-size=0: expected"),
        ("--file-num=0", "--file-num=0: expected"),
        (
            "--file-queue-depth=99999",
            "--file-queue-depth=99999: expected",
        ),
    ] {
        let r = s.run(&["run", "fileio", "--file-test-mode=rndrd", bad]);
        assert_eq!(r.code, 2, "{bad}: {}", r.stderr);
        assert!(r.stderr.contains(what), "{bad}: {}", r.stderr);
        assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
    }
    let r = s.run(&["run", "fileio"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("needs --file-test-mode"), "{}", r.stderr);
    s.ok(&["cleanup", "fileio", SET[0]]);
}

/// Ctrl-C while prepare writes: it stops, and cleanup removes what it made.
#[test]
fn cleanup_after_an_interrupted_prepare() {
    let s = Scratch::new();
    // 8 files of 1 GiB: interrupted long before they are written.
    let set = ["--file-num=8", "--file-total-size=8G"];
    let free = free_bytes(s.dir.path());
    if free < 8 << 30 {
        eprintln!(
            "skipping: the scratch directory has {free} bytes free, less than the 8 GiB file set"
        );
        return;
    }
    let mut child = s.spawn(&["prepare", "fileio", set[0], set[1]]);
    let out = child.stdout.take().expect("stdout");
    let mut lines = std::io::BufReader::new(out).lines();
    // Once the second file is begun, the first is on disk.
    let mut seen = Vec::new();
    for l in lines.by_ref() {
        let l = l.expect("a line");
        let begun = l == "Creating file test_file.1";
        seen.push(l);
        if begun {
            break;
        }
    }
    assert!(
        seen.iter().any(|l| l == "Creating file test_file.1"),
        "{seen:?}"
    );
    // SAFETY: a signal to our own child, still running (it has a file
    // of 1 GiB left to write at least).
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().expect("wait");
    assert!(
        !status.success(),
        "prepare went on after SIGINT: {status:?}"
    );
    let made = test_files(s.dir.path());
    assert!(made.len() >= 2 && made.len() < 8, "{made:?}");
    s.ok(&["cleanup", "fileio", set[0], set[1]]);
    assert!(test_files(s.dir.path()).is_empty());
}

/// Bytes free under `dir` (statvfs; 0 when it cannot say).
fn free_bytes(dir: &Path) -> u64 {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return 0;
    };
    let mut st = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: a valid C path and memory for one statvfs.
    if unsafe { libc::statvfs(c.as_ptr(), st.as_mut_ptr()) } != 0 {
        return 0;
    }
    // SAFETY: statvfs returned 0 and filled it.
    let st = unsafe { st.assume_init() };
    st.f_bavail.saturating_mul(st.f_frsize)
}

/// fio reads the files prepare made: the same job (200 random 4 KiB
/// O_DIRECT reads, psync) makes the same requests in both.
#[test]
fn fio_and_fileio_count_the_same_job_alike() {
    let Some(fio) = FIO.find_or_skip() else {
        return;
    };
    let s = Scratch::new();
    let p = s.run(&[
        "prepare",
        "fileio",
        SET[0],
        SET[1],
        SET[2],
        "--file-extra-flags=direct",
    ]);
    if p.code != 0 {
        eprintln!("skipping: O_DIRECT refused here: {}", p.stderr);
        return;
    }
    let names = (0..4)
        .map(|i| format!("test_file.{i}"))
        .collect::<Vec<_>>()
        .join(":");
    let o = std::process::Command::new(fio)
        .args([
            "--name=rndrd",
            "--rw=randread",
            "--bs=4k",
            "--direct=1",
            "--ioengine=psync",
            "--number_ios=200",
            "--size=1M",
            "--output-format=json",
            &format!("--filename={names}"),
        ])
        .current_dir(s.dir.path())
        .output()
        .expect("run fio");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let f: Value = serde_json::from_slice(&o.stdout).expect("fio's JSON");
    let read = &f["jobs"][0]["read"];
    let (c, _) = run(
        &s,
        &[
            "--file-test-mode=rndrd",
            "--events=200",
            "--file-extra-flags=direct",
        ],
    );
    assert_eq!(read["total_ios"].as_u64(), Some(c.reads));
    assert_eq!(read["io_bytes"].as_u64(), Some(c.bytes_read));
    // fio left the files as prepare made them.
    assert_eq!(test_files(s.dir.path()).len(), 4);
    s.ok(&["cleanup", "fileio", SET[0]]);
}

/// `dbmeter sysbench fileio`: sysbench's description of the test, its
/// report's file sections, its interval line and its FATAL/WARNING pairs
/// (the peer suite's test_fileio checks the rest line by line).
#[test]
fn sysbench_s_words_in_its_layout() {
    let s = Scratch::new();
    let sb = |extra: &[&str]| {
        let mut a = vec!["sysbench", "fileio", SET[0], SET[1], SET[2]];
        a.extend_from_slice(extra);
        s.run(&a)
    };
    let r = sb(&["--file-test-mode=rndrd", "--verbosity=2", "run"]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.stdout,
        "FATAL: Cannot open file 'test_file.0' errno = 2 (No such file or directory)\n\
         WARNING: Did you forget to run the prepare step?\n"
    );
    let r = sb(&["prepare"]);
    assert!(
        r.stdout.contains("4 files, 256Kb each, 1Mb total\n"),
        "{}",
        r.stdout
    );
    let r = sb(&[
        "--file-total-size=2M",
        "--file-test-mode=rndrd",
        "--verbosity=2",
        "run",
    ]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.stdout,
        "FATAL: Size of file 'test_file.0' is 256KiB, but at least 512KiB is expected.\n\
         WARNING: Did you run 'prepare' with different --file-total-size or --file-num values?\n"
    );
    let r = sb(&[
        "--file-test-mode=rndwr",
        "--time=2",
        "--events=0",
        "--report-interval=1",
        "--validate",
        "run",
    ]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    for line in [
        "Validation checks: on.\n",
        "Extra file open flags: (none)\n4 files, 256KiB each\n1MiB total file size\nBlock size 4KiB\n",
        "Using checksums validation.\nDoing random write test\nInitializing worker threads...\n",
        "\n\nFile operations:\n    reads/s:                      0.00\n",
        "Throughput:\n    read, MiB/s:                  0.00\n",
        "[ 1s ] reads: 0.00 MiB/s writes: ",
    ] {
        assert!(r.stdout.contains(line), "{line:?} not in:\n{}", r.stdout);
    }
    // dbmeter's latency by operation is one of its additions, not in
    // sysbench's report.
    assert!(!r.stdout.contains("Latency by operation"), "{}", r.stdout);
    let r = sb(&["cleanup"]);
    assert!(
        r.stdout.contains("Removing test files...\n"),
        "{}",
        r.stdout
    );
    assert!(test_files(s.dir.path()).is_empty());
}

/// A kernel that refuses io_uring, made here by a seccomp filter on the
/// child (io_uring_setup fails with ENOSYS, as on a kernel without it):
/// the async mode says why in a warning and runs synchronous I/O, the
/// same requests counted.
#[cfg(target_arch = "x86_64")]
#[test]
fn without_io_uring_the_async_mode_falls_back_to_sync() {
    use std::os::unix::process::CommandExt;
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct SockFilter {
        code: u16,
        jt: u8,
        jf: u8,
        k: u32,
    }
    #[repr(C)]
    struct SockFprog {
        len: u16,
        filter: *const SockFilter,
    }
    // BPF_LD|BPF_W|BPF_ABS, BPF_JMP|BPF_JEQ|BPF_K, BPF_RET|BPF_K.
    const LD_W_ABS: u16 = 0x20;
    const JEQ_K: u16 = 0x15;
    const RET_K: u16 = 0x06;
    const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;
    const IO_URING_SETUP: u32 = 425;
    const RET_ERRNO: u32 = 0x0005_0000;
    const RET_ALLOW: u32 = 0x7fff_0000;
    let f = |code, jt, jf, k| SockFilter { code, jt, jf, k };
    let filter = [
        f(LD_W_ABS, 0, 0, 4), // seccomp_data.arch
        f(JEQ_K, 0, 3, AUDIT_ARCH_X86_64),
        f(LD_W_ABS, 0, 0, 0), // seccomp_data.nr
        f(JEQ_K, 0, 1, IO_URING_SETUP),
        f(RET_K, 0, 0, RET_ERRNO | libc::ENOSYS as u32),
        f(RET_K, 0, 0, RET_ALLOW),
    ];
    let s = Scratch::new();
    s.ok(&["prepare", "fileio", SET[0], SET[1], SET[2]]);
    let mut c = s.cmd(&[
        "run",
        "fileio",
        SET[0],
        SET[1],
        SET[2],
        "--file-test-mode=rndrw",
        "--events=300",
        "--file-io-mode=async",
        "--file-queue-depth=8",
        "--format=json",
    ]);
    // SAFETY: between fork and exec the closure only makes two prctl
    // calls on the child itself, with a filter that lives on the
    // closure's own stack copy; nothing allocates.
    unsafe {
        c.pre_exec(move || {
            let prog = SockFprog {
                len: filter.len() as u16,
                filter: filter.as_ptr(),
            };
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || libc::prctl(libc::PR_SET_SECCOMP, 2, &prog as *const SockFprog) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let r = s.output(c);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr
            .contains("--file-io-mode=async: this kernel has no io_uring")
            && r.stderr.contains("this run uses synchronous I/O"),
        "{}",
        r.stderr
    );
    let doc = r.json();
    let c = counted(&doc);
    assert_eq!(c.events, 300);
    assert_eq!(c.reads + c.writes + c.kinds[2], 300, "{c:?}");
    let codes: Vec<&str> = doc["warnings"]
        .as_array()
        .map(|w| w.iter().filter_map(|w| w["code"].as_str()).collect())
        .unwrap_or_default();
    assert!(codes.contains(&"io_uring_unavailable"), "{codes:?}");
    s.ok(&["cleanup", "fileio", SET[0]]);
}
