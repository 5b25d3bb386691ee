//! The environment of a run: hardware and OS facts read from /proc and
//! uname, recorded with every result.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    pub hostname: String,
    /// Distribution, from /etc/os-release (PRETTY_NAME).
    pub os: String,
    pub kernel: String,
    pub arch: String,
    pub cpu_model: String,
    /// Logical CPUs online.
    pub cpus: usize,
    pub memory_bytes: u64,
}

impl Environment {
    /// Reads the facts of this machine; missing ones stay empty.
    pub fn collect() -> Environment {
        let uts = uname();
        Environment {
            hostname: uts.0,
            os: os_release(),
            kernel: uts.1,
            arch: std::env::consts::ARCH.to_string(),
            cpu_model: cpu_model(),
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            memory_bytes: mem_total(),
        }
    }
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
    std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                .map(|v| v.trim_matches('"').to_string())
        })
        .unwrap_or_default()
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_default()
}

fn mem_total() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_this_machine() {
        let e = Environment::collect();
        assert!(e.cpus >= 1);
        assert!(!e.kernel.is_empty());
        if cfg!(target_os = "linux") {
            assert!(e.memory_bytes > 0);
        }
    }
}
