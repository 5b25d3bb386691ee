//! Facts about this machine and OS.

use crate::procfs::{self, bracketed, cpu_list, read, read_line};
use crate::storage::{self, Storage};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// An rlimit: None = unlimited.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileLimit {
    pub soft: Option<u64>,
    pub hard: Option<u64>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Environment {
    pub hostname: String,
    /// Distribution, from /etc/os-release (PRETTY_NAME).
    pub os: String,
    /// `uname -s` and `uname -r`, e.g. `Linux 6.1.0-18-amd64`.
    pub kernel: String,
    pub arch: String,
    pub cpu_model: String,
    /// Logical CPUs available to dbmeter (its affinity, as `nproc`).
    pub cpus: usize,
    /// Logical CPUs online on the machine.
    #[serde(default)]
    pub cpus_online: usize,
    /// The CPUs dbmeter may run on, e.g. `0-3` (`Cpus_allowed_list`).
    #[serde(default)]
    pub cpus_allowed: String,
    #[serde(default)]
    pub sockets: Option<usize>,
    /// Physical cores over all sockets.
    #[serde(default)]
    pub cores: Option<usize>,
    #[serde(default)]
    pub threads_per_core: Option<usize>,
    #[serde(default)]
    pub numa_nodes: Option<usize>,
    pub memory_bytes: u64,
    #[serde(default)]
    pub memory_available_bytes: Option<u64>,
    #[serde(default)]
    pub swap_total_bytes: Option<u64>,
    #[serde(default)]
    pub swap_used_bytes: Option<u64>,
    /// The CPU frequency governor (the distinct values over all CPUs,
    /// comma-separated); None where there is no cpufreq (most VMs).
    #[serde(default)]
    pub cpu_governor: Option<String>,
    /// Transparent huge pages: `always`, `madvise` or `never`.
    #[serde(default)]
    pub transparent_hugepages: Option<String>,
    /// This process's open-files limit (RLIMIT_NOFILE).
    #[serde(default)]
    pub open_files: Option<FileLimit>,
    /// The storage under the database's data directory, when known and local.
    #[serde(default)]
    pub datadir: Option<Storage>,
}

impl Environment {
    /// Reads the facts of this machine; missing ones stay empty.
    pub fn collect() -> Environment {
        let uts = uname();
        let cpuinfo = read("/proc/cpuinfo").unwrap_or_default();
        let topo = topology(&cpuinfo);
        let mem = read("/proc/meminfo")
            .map(|t| procfs::meminfo(&t))
            .unwrap_or_default();
        let swap_total = mem.get("SwapTotal").copied();
        let swap_used = swap_total
            .zip(mem.get("SwapFree"))
            .map(|(t, f)| t.saturating_sub(*f));
        let cpus_allowed = read("/proc/self/status")
            .and_then(|t| procfs::status_field(&t, "Cpus_allowed_list"))
            .unwrap_or_default();
        let allowed = cpu_list(&cpus_allowed).len();
        Environment {
            hostname: uts.0,
            os: os_release(),
            kernel: uts.1,
            arch: std::env::consts::ARCH.to_string(),
            cpu_model: cpu_model(&cpuinfo),
            cpus: if allowed > 0 {
                allowed
            } else {
                std::thread::available_parallelism().map_or(1, |n| n.get())
            },
            cpus_online: online_cpus(&cpuinfo),
            cpus_allowed,
            sockets: topo.0,
            cores: topo.1,
            threads_per_core: topo.0.zip(topo.1).and_then(|(_, c)| {
                let n = online_cpus(&cpuinfo);
                (c > 0 && n >= c).then(|| n / c)
            }),
            numa_nodes: numa_nodes(),
            memory_bytes: mem.get("MemTotal").copied().unwrap_or(0),
            memory_available_bytes: mem.get("MemAvailable").copied(),
            swap_total_bytes: swap_total,
            swap_used_bytes: swap_used,
            cpu_governor: governor(Path::new("/sys/devices/system/cpu")),
            transparent_hugepages: read("/sys/kernel/mm/transparent_hugepage/enabled")
                .and_then(|t| bracketed(&t)),
            open_files: open_files(),
            datadir: None,
        }
    }

    /// The facts of this machine and of the storage under `datadir`.
    pub fn collect_for(datadir: Option<&Path>) -> Environment {
        let mut e = Environment::collect();
        e.datadir = datadir.and_then(storage::describe);
        e
    }

    /// One line: `host: CPU model, 2 CPUs (1 socket, 2 cores), 23.5 GiB RAM, Debian 12, Linux 6.1`.
    pub fn summary(&self) -> String {
        let mut cpu = format!("{} CPUs", self.cpus_online.max(self.cpus));
        if let (Some(s), Some(c)) = (self.sockets, self.cores) {
            cpu.push_str(&format!(
                " ({s} socket{}, {c} core{})",
                if s == 1 { "" } else { "s" },
                if c == 1 { "" } else { "s" }
            ));
        }
        format!(
            "{}: {}, {cpu}, {:.1} GiB RAM, {}, {}",
            self.hostname,
            if self.cpu_model.is_empty() {
                "unknown CPU"
            } else {
                &self.cpu_model
            },
            self.memory_bytes as f64 / (1u64 << 30) as f64,
            if self.os.is_empty() {
                "unknown OS"
            } else {
                &self.os
            },
            self.kernel
        )
    }
}

/// This machine's host name (the kernel's node name, as `hostname`
/// prints it); empty if it cannot be read.
pub fn hostname() -> String {
    uname().0
}

fn uname() -> (String, String) {
    // SAFETY: uname fills the zeroed struct we own; its fields are
    // NUL-terminated C strings.
    unsafe {
        let mut u: libc::utsname = std::mem::zeroed();
        if libc::uname(&mut u) != 0 {
            return (String::new(), String::new());
        }
        let s = |f: &[libc::c_char]| {
            std::ffi::CStr::from_ptr(f.as_ptr())
                .to_string_lossy()
                .into_owned()
        };
        (
            s(&u.nodename),
            format!("{} {}", s(&u.sysname), s(&u.release)),
        )
    }
}

fn os_release() -> String {
    read("/etc/os-release")
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                .map(|v| v.trim_matches('"').to_string())
        })
        .unwrap_or_default()
}

fn cpu_model(cpuinfo: &str) -> String {
    cpuinfo
        .lines()
        .find(|l| l.starts_with("model name") || l.starts_with("Model"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_default()
}

/// Online CPUs from /sys, else the processors listed in /proc/cpuinfo.
fn online_cpus(cpuinfo: &str) -> usize {
    let sys = read_line("/sys/devices/system/cpu/online")
        .map(|l| cpu_list(&l).len())
        .unwrap_or(0);
    if sys > 0 {
        return sys;
    }
    let listed = cpuinfo
        .lines()
        .filter(|l| l.starts_with("processor"))
        .count();
    if listed > 0 {
        listed
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }
}

/// Sockets and physical cores: from /proc/cpuinfo's `physical id` and
/// `core id`, else from the /sys topology files.
pub(crate) fn topology(cpuinfo: &str) -> (Option<usize>, Option<usize>) {
    let mut sockets = BTreeSet::new();
    let mut cores = BTreeSet::new();
    let mut socket = None;
    for l in cpuinfo.lines() {
        let Some((k, v)) = l.split_once(':') else {
            continue;
        };
        match k.trim() {
            "physical id" => {
                socket = Some(v.trim().to_string());
                sockets.insert(v.trim().to_string());
            }
            "core id" => {
                cores.insert((socket.clone(), v.trim().to_string()));
            }
            _ => {}
        }
    }
    if !sockets.is_empty() && !cores.is_empty() {
        return (Some(sockets.len()), Some(cores.len()));
    }
    // ARM and some VMs: /sys/devices/system/cpu/cpuN/topology.
    let mut s = BTreeSet::new();
    let mut c = BTreeSet::new();
    if let Ok(dir) = std::fs::read_dir("/sys/devices/system/cpu") {
        for e in dir.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name
                .strip_prefix("cpu")
                .is_none_or(|n| n.parse::<u32>().is_err())
            {
                continue;
            }
            let t = e.path().join("topology");
            let pkg = read_line(t.join("physical_package_id"));
            let core = read_line(t.join("core_id"));
            if let (Some(p), Some(k)) = (pkg, core) {
                s.insert(p.clone());
                c.insert((p, k));
            }
        }
    }
    if s.is_empty() {
        (None, None)
    } else {
        (Some(s.len()), Some(c.len()))
    }
}

fn numa_nodes() -> Option<usize> {
    let n = std::fs::read_dir("/sys/devices/system/node")
        .ok()?
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .strip_prefix("node")
                .is_some_and(|n| n.parse::<u32>().is_ok())
        })
        .count();
    (n > 0).then_some(n)
}

/// The distinct scaling governors under `cpu_dir`, or None without cpufreq.
pub(crate) fn governor(cpu_dir: &Path) -> Option<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for e in std::fs::read_dir(cpu_dir).ok()?.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name
            .strip_prefix("cpu")
            .is_none_or(|n| n.parse::<u32>().is_err())
        {
            continue;
        }
        if let Some(g) = read_line(e.path().join("cpufreq/scaling_governor")) {
            *seen.entry(g).or_default() += 1;
        }
    }
    (!seen.is_empty()).then(|| seen.into_keys().collect::<Vec<_>>().join(","))
}

/// A CPU cache: its level (1, 2, 3...) and its size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cache {
    pub level: u32,
    pub bytes: u64,
}

/// The last-level data cache of the first CPU (the highest level that
/// holds data, e.g. a shared L3), as sysfs describes it; None where it
/// does not (some containers and VMs).
pub fn last_level_cache() -> Option<Cache> {
    last_level_cache_in(Path::new("/sys/devices/system/cpu/cpu0/cache"))
}

/// [`last_level_cache`] from the `index*` directories under `dir`.
pub(crate) fn last_level_cache_in(dir: &Path) -> Option<Cache> {
    let mut best: Option<Cache> = None;
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        if !e.file_name().to_string_lossy().starts_with("index") {
            continue;
        }
        let p = e.path();
        let kind = read_line(p.join("type")).unwrap_or_default();
        if kind == "Instruction" {
            continue;
        }
        let Some(level) = read_line(p.join("level")).and_then(|l| l.parse::<u32>().ok()) else {
            continue;
        };
        let Some(bytes) = read_line(p.join("size")).and_then(|s| cache_size(&s)) else {
            continue;
        };
        if best.is_none_or(|b| (level, bytes) > (b.level, b.bytes)) {
            best = Some(Cache { level, bytes });
        }
    }
    best
}

/// sysfs's cache size: `32768K`, `1M`, or bytes.
fn cache_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = match s.chars().last()? {
        'K' => (&s[..s.len() - 1], 1u64 << 10),
        'M' => (&s[..s.len() - 1], 1 << 20),
        'G' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.parse::<u64>()
        .ok()?
        .checked_mul(mult)
        .filter(|b| *b > 0)
}

fn open_files() -> Option<FileLimit> {
    // SAFETY: getrlimit writes into the struct we own.
    let mut r: libc::rlimit = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } != 0 {
        return None;
    }
    // rlim_t is u64 on Linux, but not everywhere.
    #[allow(clippy::unnecessary_cast)]
    let v = |x: libc::rlim_t| (x != libc::RLIM_INFINITY).then_some(x as u64);
    Some(FileLimit {
        soft: v(r.rlim_cur),
        hard: v(r.rlim_max),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uname_r() -> String {
        let o = std::process::Command::new("uname").arg("-r").output();
        o.map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default()
    }

    #[test]
    fn reads_this_machine() {
        let e = Environment::collect();
        assert!(e.cpus >= 1);
        assert!(!e.kernel.is_empty());
        if !cfg!(target_os = "linux") {
            return;
        }
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let processors = cpuinfo
            .lines()
            .filter(|l| l.starts_with("processor"))
            .count();
        assert_eq!(e.cpus_online, processors, "{e:?}");
        let nproc = std::process::Command::new("nproc")
            .output()
            .map(|o| {
                String::from_utf8_lossy(&o.stdout)
                    .trim()
                    .parse::<usize>()
                    .unwrap_or(0)
            })
            .unwrap_or(0);
        if nproc > 0 {
            assert_eq!(e.cpus, nproc);
        }
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let total_kb: u64 = meminfo
            .lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        assert_eq!(e.memory_bytes, total_kb * 1024);
        let r = uname_r();
        assert!(
            !r.is_empty() && e.kernel.ends_with(&r),
            "{} vs {r}",
            e.kernel
        );
        if let (Some(s), Some(c)) = (e.sockets, e.cores) {
            assert!(s >= 1 && c >= s && c <= e.cpus, "{e:?}");
        }
        assert!(e.swap_used_bytes <= e.swap_total_bytes);
        let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").ok();
        assert_eq!(e.transparent_hugepages, thp.and_then(|t| bracketed(&t)));
        let lim = e.open_files.unwrap_or_default();
        assert!(lim.soft.unwrap_or(u64::MAX) <= lim.hard.unwrap_or(u64::MAX));
        assert!(!e.cpus_allowed.is_empty());
        assert!(e.summary().contains(&e.hostname));
    }

    #[test]
    fn topology_from_cpuinfo() {
        let text = "processor : 0\nphysical id : 0\ncore id : 0\n\nprocessor : 1\nphysical id : 0\ncore id : 0\n\nprocessor : 2\nphysical id : 1\ncore id : 0\n";
        assert_eq!(topology(text), (Some(2), Some(2)));
    }

    #[test]
    fn last_level_cache_from_sysfs() {
        let dir = std::env::temp_dir().join(format!("dbmeter-cache-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(last_level_cache_in(&dir), None);
        for (i, level, kind, size) in [
            (0, "1", "Data", "32K"),
            (1, "1", "Instruction", "64K"),
            (2, "2", "Unified", "1024K"),
            (3, "3", "Unified", "32768K"),
        ] {
            let d = dir.join(format!("index{i}"));
            std::fs::create_dir_all(&d).ok();
            for (f, v) in [("level", level), ("type", kind), ("size", size)] {
                std::fs::write(d.join(f), format!("{v}\n")).ok();
            }
        }
        assert_eq!(
            last_level_cache_in(&dir),
            Some(Cache {
                level: 3,
                bytes: 32 << 20
            })
        );
        let _ = std::fs::remove_dir_all(&dir);
        // This machine's, where sysfs has it: a level and a size.
        if let Some(c) = last_level_cache() {
            assert!(c.level >= 1 && c.bytes >= 1024, "{c:?}");
        }
    }

    #[test]
    fn governor_absent_or_named() {
        let dir = std::env::temp_dir().join(format!("dbmeter-gov-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(governor(&dir), None);
        for (cpu, g) in [
            ("cpu0", "performance"),
            ("cpu1", "powersave"),
            ("cpufreq", "x"),
        ] {
            let d = dir.join(cpu).join("cpufreq");
            std::fs::create_dir_all(&d).ok();
            std::fs::write(d.join("scaling_governor"), format!("{g}\n")).ok();
        }
        assert_eq!(governor(&dir).as_deref(), Some("performance,powersave"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
