//! The storage under a path: filesystem, mount point, block device and
//! its I/O scheduler, from /proc/self/mountinfo and /sys/block.

use crate::procfs::{bracketed, read, read_line};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Storage {
    /// The path described (made absolute).
    pub path: String,
    pub filesystem: String,
    pub mount_point: String,
    /// What is mounted, e.g. `/dev/nvme0n1p2` or `tmpfs`.
    pub source: String,
    pub mount_options: String,
    /// The whole disk under the filesystem (a partition resolved to its
    /// disk), e.g. `nvme0n1`; None for filesystems without a block device.
    pub device: Option<String>,
    /// The disk's I/O scheduler, e.g. `none` or `mq-deadline`.
    pub scheduler: Option<String>,
    /// Whether the kernel takes the disk for a spinning one.
    pub rotational: Option<bool>,
}

/// One line of /proc/self/mountinfo.
#[derive(Debug, PartialEq)]
pub(crate) struct Mount {
    pub dev: String,
    pub mount_point: String,
    pub options: String,
    pub fstype: String,
    pub source: String,
}

/// mountinfo escapes space, tab, newline and backslash as octal.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0');
            out.push(v);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

pub(crate) fn mountinfo(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|l| {
            let (left, right) = l.split_once(" - ")?;
            let lw: Vec<&str> = left.split_whitespace().collect();
            let rw: Vec<&str> = right.split_whitespace().collect();
            Some(Mount {
                dev: lw.get(2)?.to_string(),
                mount_point: unescape(lw.get(4)?),
                options: lw.get(5).map_or(String::new(), |s| s.to_string()),
                fstype: rw.first()?.to_string(),
                source: rw.get(1).map_or(String::new(), |s| unescape(s)),
            })
        })
        .collect()
}

/// The mount holding `path`: the last-mounted one with the longest
/// mount point that contains it.
pub(crate) fn mount_of<'a>(mounts: &'a [Mount], path: &Path) -> Option<&'a Mount> {
    mounts
        .iter()
        .enumerate()
        .filter(|(_, m)| path.starts_with(&m.mount_point))
        .max_by_key(|(i, m)| (m.mount_point.len(), *i))
        .map(|(_, m)| m)
}

/// The whole disk for a `major:minor` device: a partition's parent.
fn disk_of(dev: &str) -> Option<String> {
    let link = std::fs::canonicalize(format!("/sys/dev/block/{dev}")).ok()?;
    let disk = if link.join("partition").exists() {
        link.parent()?.to_path_buf()
    } else {
        link
    };
    disk.file_name().map(|n| n.to_string_lossy().into_owned())
}

/// Describes the storage under `path`; None when the path does not exist
/// here (for example a remote server's data directory).
pub fn describe(path: &Path) -> Option<Storage> {
    let abs: PathBuf = std::fs::canonicalize(path).ok()?;
    let mounts = mountinfo(&read("/proc/self/mountinfo")?);
    let m = mount_of(&mounts, &abs)?;
    let device = disk_of(&m.dev);
    let queue = device
        .as_ref()
        .map(|d| PathBuf::from(format!("/sys/block/{d}/queue")));
    let scheduler = queue
        .as_ref()
        .and_then(|q| read_line(q.join("scheduler")))
        .map(|s| bracketed(&s).unwrap_or(s));
    let rotational = queue
        .as_ref()
        .and_then(|q| read_line(q.join("rotational")))
        .map(|s| s == "1");
    Some(Storage {
        path: abs.to_string_lossy().into_owned(),
        filesystem: m.fstype.clone(),
        mount_point: m.mount_point.clone(),
        source: m.source.clone(),
        mount_options: m.options.clone(),
        device,
        scheduler,
        rotational,
    })
}

/// Bytes an unprivileged writer can still use on the filesystem under
/// `path` (statvfs); None when the path is not on this machine.
pub fn free_bytes(path: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    let mut st = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: `c` is a valid NUL-terminated path and `st` points to memory
    // large enough for the statvfs the call fills on success.
    let rc = unsafe { libc::statvfs(c.as_ptr(), st.as_mut_ptr()) };
    if rc != 0 {
        return None;
    }
    // SAFETY: statvfs returned 0, so it initialised `st`.
    let st = unsafe { st.assume_init() };
    Some(st.f_bavail.saturating_mul(st.f_frsize))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw
30 27 0:27 / /var/lib/my\\040db rw,nosuid - tmpfs tmpfs rw,size=100k
31 27 259:2 / /data rw,noatime shared:5 - xfs /dev/nvme0n1p2 rw
";

    #[test]
    fn finds_the_mount() {
        let m = mountinfo(SAMPLE);
        assert_eq!(m.len(), 3);
        assert_eq!(m[1].mount_point, "/var/lib/my db");
        assert!(free_bytes(Path::new("/")).is_some_and(|b| b > 0));
        assert_eq!(free_bytes(Path::new("/no/such/dir")), None);
        assert_eq!(m[2].fstype, "xfs");
        assert_eq!(m[2].source, "/dev/nvme0n1p2");
        let at = |p: &str| mount_of(&m, Path::new(p)).map(|m| m.mount_point.clone());
        assert_eq!(at("/data/mysql").as_deref(), Some("/data"));
        assert_eq!(at("/datax").as_deref(), Some("/"));
        assert_eq!(at("/var/lib/my db/x").as_deref(), Some("/var/lib/my db"));
    }

    #[test]
    fn describes_a_real_directory() {
        if !cfg!(target_os = "linux") {
            return;
        }
        let dir = std::env::temp_dir();
        let s = describe(&dir).expect("the temp dir is somewhere");
        assert!(!s.filesystem.is_empty());
        assert!(s.path.starts_with(&s.mount_point));
        // /proc is procfs, without a block device.
        let p = describe(Path::new("/proc/self")).expect("/proc");
        assert_eq!(p.filesystem, "proc");
        assert_eq!(p.device, None);
        assert!(describe(Path::new("/no/such/dir/here")).is_none());
    }
}
