//! Small parsers for /proc and /sys files. Each takes the file's text, so
//! the tests can feed them samples; `read` returns None for a missing file.

use std::collections::BTreeMap;
use std::path::Path;

/// The text of a file, or None when it cannot be read.
pub fn read(path: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// The first line of a file, trimmed, or None when missing or empty.
pub fn read_line(path: impl AsRef<Path>) -> Option<String> {
    read(path)
        .and_then(|t| t.lines().next().map(|l| l.trim().to_string()))
        .filter(|l| !l.is_empty())
}

/// /proc/meminfo as name -> bytes (values given in kB are converted).
pub fn meminfo(text: &str) -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    for l in text.lines() {
        let Some((name, rest)) = l.split_once(':') else {
            continue;
        };
        let mut w = rest.split_whitespace();
        let Some(n) = w.next().and_then(|v| v.parse::<u64>().ok()) else {
            continue;
        };
        let scale = if w.next() == Some("kB") { 1024 } else { 1 };
        m.insert(name.trim().to_string(), n.saturating_mul(scale));
    }
    m
}

/// Aggregate CPU time from the `cpu` line of /proc/stat, in clock ticks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuTimes {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
}

impl CpuTimes {
    /// Everything except guest time (already counted in user).
    pub fn total(&self) -> u64 {
        self.user
            + self.nice
            + self.system
            + self.idle
            + self.iowait
            + self.irq
            + self.softirq
            + self.steal
    }
}

/// What the sampler wants from /proc/stat.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stat {
    pub cpu: CpuTimes,
    pub ctxt: u64,
    pub procs_running: u64,
}

pub fn stat(text: &str) -> Stat {
    let mut s = Stat::default();
    for l in text.lines() {
        let mut w = l.split_whitespace();
        match w.next() {
            Some("cpu") => {
                let v: Vec<u64> = w.map(|x| x.parse().unwrap_or(0)).collect();
                let g = |i: usize| v.get(i).copied().unwrap_or(0);
                s.cpu = CpuTimes {
                    user: g(0),
                    nice: g(1),
                    system: g(2),
                    idle: g(3),
                    iowait: g(4),
                    irq: g(5),
                    softirq: g(6),
                    steal: g(7),
                };
            }
            Some("ctxt") => s.ctxt = w.next().and_then(|x| x.parse().ok()).unwrap_or(0),
            Some("procs_running") => {
                s.procs_running = w.next().and_then(|x| x.parse().ok()).unwrap_or(0)
            }
            _ => {}
        }
    }
    s
}

/// One line of /proc/diskstats: completed I/Os, sectors, milliseconds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DiskStat {
    pub name: String,
    pub reads: u64,
    pub read_sectors: u64,
    pub read_ms: u64,
    pub writes: u64,
    pub write_sectors: u64,
    pub write_ms: u64,
    /// Milliseconds with I/O in flight.
    pub busy_ms: u64,
}

pub fn diskstats(text: &str) -> Vec<DiskStat> {
    text.lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            if w.len() < 14 {
                return None;
            }
            let n = |i: usize| w[i].parse::<u64>().unwrap_or(0);
            Some(DiskStat {
                name: w[2].to_string(),
                reads: n(3),
                read_sectors: n(5),
                read_ms: n(6),
                writes: n(7),
                write_sectors: n(9),
                write_ms: n(10),
                busy_ms: n(12),
            })
        })
        .collect()
}

/// Received and transmitted bytes by interface, from /proc/net/dev.
pub fn net_dev(text: &str) -> Vec<(String, u64, u64)> {
    text.lines()
        .filter_map(|l| {
            let (name, rest) = l.split_once(':')?;
            let v: Vec<u64> = rest
                .split_whitespace()
                .map(|x| x.parse().unwrap_or(0))
                .collect();
            Some((name.trim().to_string(), *v.first()?, *v.get(8)?))
        })
        .collect()
}

/// From /proc/PID/stat: the parent, the CPU time of the process (user +
/// system) and of its waited-for children, in clock ticks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProcStat {
    pub ppid: u32,
    pub cpu_ticks: u64,
    pub children_ticks: u64,
}

pub fn proc_stat(text: &str) -> Option<ProcStat> {
    // The command name (field 2) is in parentheses and may hold spaces.
    let after = &text[text.rfind(')')? + 1..];
    let w: Vec<&str> = after.split_whitespace().collect();
    // `after` starts at field 3 (state): field k is w[k - 3].
    let n = |k: usize| w.get(k - 3).and_then(|x| x.parse::<u64>().ok());
    Some(ProcStat {
        ppid: n(4)? as u32,
        cpu_ticks: n(14)? + n(15)?,
        children_ticks: n(16)? + n(17)?,
    })
}

/// Clock ticks per second (USER_HZ).
pub fn ticks_per_second() -> f64 {
    // SAFETY: sysconf only reads a system constant.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 { t as f64 } else { 100.0 }
}

/// Expands a CPU list such as `0-3,8,10-11`.
pub fn cpu_list(s: &str) -> Vec<usize> {
    let mut v = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.trim().parse::<usize>(), b.trim().parse::<usize>()) {
                    v.extend(a..=b);
                }
            }
            None => {
                if let Ok(a) = part.trim().parse() {
                    v.push(a);
                }
            }
        }
    }
    v
}

/// A field of /proc/PID/status, e.g. `Cpus_allowed_list`.
pub fn status_field(text: &str, name: &str) -> Option<String> {
    text.lines().find_map(|l| {
        l.strip_prefix(name)
            .and_then(|r| r.strip_prefix(':'))
            .map(|v| v.trim().to_string())
    })
}

/// The bracketed choice of a sysfs setting: `always [madvise] never` -> `madvise`.
pub fn bracketed(text: &str) -> Option<String> {
    let start = text.find('[')?;
    let end = text[start..].find(']')? + start;
    Some(text[start + 1..end].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_samples() {
        let m = meminfo("MemTotal:       16384 kB\nHugePages_Total:       0\n");
        assert_eq!(m["MemTotal"], 16384 * 1024);
        assert_eq!(m["HugePages_Total"], 0);
        let s = stat("cpu  10 1 20 300 4 0 2 7 0 0\ncpu0 1 1 1 1\nctxt 999\nprocs_running 3\n");
        assert_eq!(s.cpu.user, 10);
        assert_eq!(s.cpu.steal, 7);
        assert_eq!(s.cpu.total(), 344);
        assert_eq!(s.ctxt, 999);
        assert_eq!(s.procs_running, 3);
        let d = diskstats(" 254       0 vda 100 0 800 50 200 0 1600 70 0 90 120 0 0 0 0\n");
        assert_eq!(d[0].name, "vda");
        assert_eq!((d[0].reads, d[0].writes, d[0].busy_ms), (100, 200, 90));
        let n = net_dev(
            "Inter-| Receive\n face |bytes\n  eth0: 1000 5 0 0 0 0 0 0 2000 6 0 0 0 0 0 0\n",
        );
        assert_eq!(n, vec![("eth0".to_string(), 1000, 2000)]);
        let p = proc_stat("42 (my (odd) name) S 7 42 42 0 -1 0 0 0 0 0 15 5 3 1 20 0 1 0").unwrap();
        assert_eq!((p.ppid, p.cpu_ticks, p.children_ticks), (7, 20, 4));
        assert_eq!(cpu_list("0-2,5"), vec![0, 1, 2, 5]);
        assert_eq!(
            bracketed("always [madvise] never").as_deref(),
            Some("madvise")
        );
        assert_eq!(
            status_field("Name:\tx\nCpus_allowed_list:\t0-1\n", "Cpus_allowed_list").as_deref(),
            Some("0-1")
        );
    }
}
