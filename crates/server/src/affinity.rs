//! CPU lists ("0-3,6") and CPU affinity: of a server we start (set before
//! it runs, so every thread and process it makes inherits it), of a running
//! process and all its threads, and of dbmeter itself.

use std::fs;
use std::io;

/// The most CPUs a `cpu_set_t` holds.
const MAX_CPUS: usize = libc::CPU_SETSIZE as usize;

/// Parses a CPU list as the kernel writes them (`0-3,6`, `1`, `0,2-3`):
/// sorted, without duplicates.
pub fn parse_cpu_list(text: &str) -> Result<Vec<usize>, String> {
    let bad = |why: &str| format!("bad CPU list '{text}': {why} (expected e.g. 0-3,6)");
    let mut cpus = Vec::new();
    for part in text.split(',').map(str::trim) {
        if part.is_empty() {
            return Err(bad("empty item"));
        }
        let number = |s: &str| -> Result<usize, String> {
            let n: usize = s
                .trim()
                .parse()
                .map_err(|_| bad(&format!("'{s}' is not a CPU number")))?;
            if n >= MAX_CPUS {
                return Err(bad(&format!("CPU {n} is beyond {}", MAX_CPUS - 1)));
            }
            Ok(n)
        };
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (number(a)?, number(b)?);
                if a > b {
                    return Err(bad(&format!("range {a}-{b} runs backwards")));
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(number(part)?),
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// The short form of a CPU list: `[0, 1, 2, 3, 6]` gives "0-3,6".
pub fn format_cpu_list(cpus: &[usize]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    parts.join(",")
}

/// The CPUs this process may run on now.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t is an empty set; sched_getaffinity fills
    // the set we own, of the size we pass.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..MAX_CPUS)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

/// A checked, non-empty set of CPUs that this process may use.
#[derive(Clone)]
pub(crate) struct CpuSet {
    set: libc::cpu_set_t,
}

impl CpuSet {
    /// Fails when `cpus` is empty or names a CPU that we may not use.
    pub fn new(cpus: &[usize]) -> Result<CpuSet, String> {
        if cpus.is_empty() {
            return Err("an empty CPU list".into());
        }
        let allowed = allowed_cpus();
        let missing: Vec<usize> = cpus
            .iter()
            .copied()
            .filter(|c| !allowed.contains(c))
            .collect();
        if !missing.is_empty() {
            return Err(format!(
                "CPU {} not available: this process may use CPUs {}",
                format_cpu_list(&missing),
                format_cpu_list(&allowed)
            ));
        }
        // SAFETY: a zeroed cpu_set_t is an empty set; every allowed CPU
        // is below MAX_CPUS, so CPU_SET stays inside it.
        let set = unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            for &c in cpus {
                libc::CPU_SET(c, &mut set);
            }
            set
        };
        Ok(CpuSet { set })
    }

    /// Binds thread `tid` (0: the calling thread). Only a system call, so it
    /// may run between fork and exec.
    pub fn apply(&self, tid: libc::pid_t) -> io::Result<()> {
        // SAFETY: the set is ours and of the size we pass.
        let rc = unsafe {
            libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &self.set)
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }
}

/// Binds every thread of process `pid` (0: this process) to `cpus`; threads
/// it starts later inherit the binding of the thread that starts them.
pub fn pin_process(pid: u32, cpus: &[usize]) -> Result<(), String> {
    let set = CpuSet::new(cpus)?;
    let dir = if pid == 0 {
        "/proc/self/task".to_string()
    } else {
        format!("/proc/{pid}/task")
    };
    let tasks = fs::read_dir(&dir).map_err(|e| format!("cannot list {dir}: {e}"))?;
    for task in tasks.flatten() {
        let Some(tid) = task.file_name().to_str().and_then(|t| t.parse().ok()) else {
            continue;
        };
        match set.apply(tid) {
            Ok(()) => {}
            // A thread that ended meanwhile.
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {}
            Err(e) => return Err(format!("cannot set the CPU affinity of thread {tid}: {e}")),
        }
    }
    Ok(())
}

/// The kernel's `Cpus_allowed_list` of process `pid`, e.g. "0-1".
pub fn cpus_allowed_list(pid: u32) -> Option<String> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .map(|v| v.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse_and_format() {
        assert_eq!(parse_cpu_list("0-3,6").unwrap(), vec![0, 1, 2, 3, 6]);
        assert_eq!(parse_cpu_list(" 2, 0 ,0").unwrap(), vec![0, 2]);
        assert_eq!(format_cpu_list(&[6, 0, 1, 2, 3]), "0-3,6");
        assert_eq!(format_cpu_list(&[1]), "1");
        for bad in ["", "a", "3-1", "1,,2", "0-", "99999"] {
            assert!(parse_cpu_list(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn unavailable_cpus_are_refused() {
        assert!(CpuSet::new(&[]).is_err());
        let e = CpuSet::new(&[MAX_CPUS - 1]).err().unwrap_or_default();
        assert!(e.contains("not available"), "{e}");
    }

    #[test]
    fn this_process_reports_its_cpus() {
        let allowed = allowed_cpus();
        assert!(!allowed.is_empty());
        let list = cpus_allowed_list(std::process::id()).unwrap_or_default();
        assert_eq!(parse_cpu_list(&list).unwrap(), allowed);
    }
}
