//! Set-ups that distort a benchmark, found before (and after) a run.

use crate::process;
use crate::{Environment, OsRecord, ServerRecord, Storage};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Warning {
    /// A stable name: `open_files`, `cpu_governor`, `swap_in_use`,
    /// `transparent_hugepages`, `shared_cpus`, `query_cache`,
    /// `debug_server`, `cpu_steal`, `short_run`, `collection`,
    /// `memory_filesystem`, `overlay_filesystem`, `page_cache`,
    /// `io_uring_unavailable`.
    pub code: String,
    pub message: String,
}

impl Warning {
    pub fn new(code: &str, message: impl Into<String>) -> Warning {
        Warning {
            code: code.into(),
            message: message.into(),
        }
    }
}

/// What the checks look at.
pub struct Checks<'a> {
    pub env: &'a Environment,
    /// Connections the run opens (virtual users).
    pub threads: usize,
    /// The OS threads that run them: `threads`, but fewer where the
    /// benchmark shares threads among its users (pgbench's `-j`).
    pub os_threads: usize,
    /// File descriptors one connection takes (SQLite: file, WAL, shm).
    pub fds_per_connection: usize,
    /// Measured time limit; None without one.
    pub time_s: Option<f64>,
    pub warmup_s: f64,
    pub server: Option<&'a ServerRecord>,
}

/// Descriptors dbmeter needs besides its connections.
const SPARE_FDS: u64 = 32;

pub fn check(c: &Checks<'_>) -> Vec<Warning> {
    let mut w = Vec::new();
    let e = c.env;
    if let Some(soft) = e.open_files.and_then(|l| l.soft) {
        let need = (c.threads * c.fds_per_connection) as u64 + SPARE_FDS;
        if need > soft {
            w.push(Warning::new(
                "open_files",
                format!(
                    "the open-files limit ({soft}) is too low for {} connections (about {need} needed): raise it with `ulimit -n`",
                    c.threads
                ),
            ));
        }
    }
    if let Some(g) = &e.cpu_governor
        && g != "performance"
    {
        w.push(Warning::new(
            "cpu_governor",
            format!("the CPU frequency governor is '{g}', not 'performance': clock speeds will vary during the run"),
        ));
    }
    if let Some(used) = e.swap_used_bytes.filter(|u| *u > 0) {
        w.push(Warning::new(
            "swap_in_use",
            format!(
                "{} MiB of swap are in use: paging distorts latencies",
                used >> 20
            ),
        ));
    }
    if e.transparent_hugepages.as_deref() == Some("always") {
        w.push(Warning::new(
            "transparent_hugepages",
            "transparent huge pages are 'always': databases see latency stalls from compaction (use 'madvise' or 'never')",
        ));
    }
    if let Some(pid) = c.server.and_then(|s| s.pid) {
        let ours = process::cpus_allowed(None).unwrap_or_default();
        let theirs = process::cpus_allowed(Some(pid)).unwrap_or_default();
        let shared = ours.iter().filter(|c| theirs.contains(c)).count();
        if shared > 0 && c.os_threads > ours.len() {
            w.push(Warning::new(
                "shared_cpus",
                format!(
                    "the client and the local server share {shared} CPUs and {} threads exceed the client's {} CPUs: they compete for CPU (pin them apart)",
                    c.os_threads,
                    ours.len()
                ),
            ));
        }
    }
    if let Some(s) = c.server {
        let var = |n: &str| s.variables.get(n).map(|v| v.trim().to_ascii_lowercase());
        let qc_on = var("query_cache_type").is_some_and(|v| v != "off" && v != "0");
        let qc_size = var("query_cache_size")
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0);
        if qc_on && qc_size > 0 {
            w.push(Warning::new(
                "query_cache",
                format!(
                    "the query cache is on ({qc_size} bytes): results depend on repeated queries"
                ),
            ));
        }
        let debug = s.version.to_ascii_lowercase().contains("-debug")
            || var("debug").is_some_and(|v| !v.is_empty())
            || var("debug_assertions").as_deref() == Some("on");
        if debug {
            w.push(Warning::new(
                "debug_server",
                "the server is a debug build: it is much slower than a release build",
            ));
        }
    }
    if let Some(t) = c.time_s
        && t > 0.0
        && t < c.warmup_s
    {
        w.push(Warning::new(
            "short_run",
            format!(
                "the run ({t} s) is shorter than its warm-up ({} s)",
                c.warmup_s
            ),
        ));
    }
    w
}

/// Files of a storage benchmark on a filesystem that is no disk: tmpfs
/// and ramfs keep them in memory; overlay (a container's layers) adds a
/// filesystem between them and the disk.
pub fn file_storage(s: &Storage) -> Option<Warning> {
    match s.filesystem.as_str() {
        "tmpfs" | "ramfs" => Some(Warning::new(
            "memory_filesystem",
            format!(
                "the test files are on {} ({}): they live in memory, so this measures memory, not a disk (use --file-dir on a disk filesystem)",
                s.filesystem, s.mount_point
            ),
        )),
        "overlay" | "overlayfs" => Some(Warning::new(
            "overlay_filesystem",
            format!(
                "the test files are on overlay ({}), a container's layered filesystem: I/O goes through overlayfs to the filesystem under it (mount a volume and use --file-dir to measure the disk)",
                s.mount_point
            ),
        )),
        _ => None,
    }
}

/// A test that reads files through the page cache (no O_DIRECT) when the
/// whole file set (`set_bytes`) fits in the machine's memory
/// (`memory_bytes`): after the first pass every read is a copy from
/// memory.
pub fn page_cache_reads(
    set_bytes: u64,
    memory_bytes: u64,
    reads: bool,
    direct: bool,
) -> Option<Warning> {
    (reads && !direct && memory_bytes > 0 && set_bytes <= memory_bytes).then(|| {
        Warning::new(
            "page_cache",
            format!(
                "the test files ({} MiB) fit in memory ({} MiB) and are read without O_DIRECT: reads come from the page cache, so this measures memory, not storage (use --file-extra-flags=direct, or a --file-total-size larger than memory)",
                set_bytes >> 20,
                memory_bytes >> 20
            ),
        )
    })
}

/// CPU steal above 1% in any interval: another guest took CPU from us.
pub fn steal(os: &OsRecord) -> Option<Warning> {
    let max = os.max_steal();
    (max > 1.0).then(|| {
        Warning::new(
            "cpu_steal",
            format!(
                "CPU steal reached {max:.1}% during the run: the hypervisor gave our CPUs to others"
            ),
        )
    })
}

/// CPU steal seen right now (over `pct`, measured by the caller).
pub fn steal_now(pct: f64) -> Option<Warning> {
    (pct > 1.0).then(|| {
        Warning::new(
            "cpu_steal",
            format!("CPU steal is {pct:.1}% now: the hypervisor gives our CPUs to others"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FileLimit;

    fn codes(w: &[Warning]) -> Vec<&str> {
        w.iter().map(|w| w.code.as_str()).collect()
    }

    #[test]
    fn each_check() {
        let mut e = Environment {
            open_files: Some(FileLimit {
                soft: Some(64),
                hard: None,
            }),
            cpu_governor: Some("powersave".into()),
            swap_used_bytes: Some(5 << 20),
            transparent_hugepages: Some("always".into()),
            ..Environment::default()
        };
        let mut server = ServerRecord {
            version: "MySQL 8.0.36-debug".into(),
            ..ServerRecord::default()
        };
        server
            .variables
            .insert("query_cache_type".into(), "ON".into());
        server
            .variables
            .insert("query_cache_size".into(), "1048576".into());
        let c = Checks {
            env: &e,
            threads: 100,
            os_threads: 100,
            fds_per_connection: 1,
            time_s: Some(5.0),
            warmup_s: 10.0,
            server: Some(&server),
        };
        assert_eq!(
            codes(&check(&c)),
            [
                "open_files",
                "cpu_governor",
                "swap_in_use",
                "transparent_hugepages",
                "query_cache",
                "debug_server",
                "short_run"
            ]
        );
        e = Environment {
            cpu_governor: Some("performance".into()),
            transparent_hugepages: Some("madvise".into()),
            swap_used_bytes: Some(0),
            ..Environment::default()
        };
        server.version = "MariaDB 10.11".into();
        server
            .variables
            .insert("query_cache_size".into(), "0".into());
        let c = Checks {
            env: &e,
            threads: 1,
            os_threads: 1,
            fds_per_connection: 3,
            time_s: Some(0.0),
            warmup_s: 10.0,
            server: Some(&server),
        };
        assert!(check(&c).is_empty(), "{:?}", check(&c));
    }

    #[test]
    fn file_sets_in_memory() {
        let on = |fs: &str| Storage {
            filesystem: fs.into(),
            mount_point: "/x".into(),
            ..Storage::default()
        };
        let code = |w: Option<Warning>| w.map(|w| w.code);
        assert_eq!(
            code(file_storage(&on("tmpfs"))).as_deref(),
            Some("memory_filesystem")
        );
        assert_eq!(
            code(file_storage(&on("overlay"))).as_deref(),
            Some("overlay_filesystem")
        );
        assert_eq!(file_storage(&on("ext4")), None);
        let gib = 1u64 << 30;
        let w = page_cache_reads(2 * gib, 16 * gib, true, false).unwrap();
        assert!(
            w.message.contains("2048 MiB") && w.message.contains("16384 MiB"),
            "{}",
            w.message
        );
        // Larger than memory, direct, or no reads: nothing to say.
        assert_eq!(page_cache_reads(32 * gib, 16 * gib, true, false), None);
        assert_eq!(page_cache_reads(2 * gib, 16 * gib, true, true), None);
        assert_eq!(page_cache_reads(2 * gib, 16 * gib, false, false), None);
    }

    #[test]
    fn steal_from_series() {
        let mut os = OsRecord::default();
        assert!(steal(&os).is_none());
        os.samples.push(crate::OsSample::default());
        os.samples[0].cpu.steal = 3.0;
        assert_eq!(steal(&os).map(|w| w.code), Some("cpu_steal".into()));
    }
}
