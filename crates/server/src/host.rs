//! Benchmark hygiene on the host: emptying the kernel's page cache so that a
//! run starts with cold caches.

use std::fs::OpenOptions;
use std::io::{ErrorKind, Write};

const DROP_CACHES: &str = "/proc/sys/vm/drop_caches";

/// Writes dirty pages out (`sync`), then asks the kernel to drop the page
/// cache, dentries and inodes (`3` to /proc/sys/vm/drop_caches). The error
/// is one line that says why it is not permitted (not root, or a read-only
/// /proc/sys as in many containers).
pub fn drop_caches() -> Result<(), String> {
    // SAFETY: sync has no preconditions.
    unsafe { libc::sync() };
    let why = |e: std::io::Error| {
        let hint = match (e.kind(), e.raw_os_error()) {
            (ErrorKind::PermissionDenied, _) => {
                " (it needs root; in a container, a writable /proc/sys)"
            }
            (_, Some(libc::EROFS)) => " (/proc/sys is read-only here, as in many containers)",
            _ => "",
        };
        format!("cannot drop the page cache: {DROP_CACHES}: {e}{hint}")
    };
    let mut f = OpenOptions::new()
        .write(true)
        .open(DROP_CACHES)
        .map_err(why)?;
    f.write_all(b"3\n").map_err(why)
}
