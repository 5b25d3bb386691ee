//! The I/O of one request: page-aligned buffers (O_DIRECT takes them),
//! pread/pwrite, the memory-mapped files, fsync, and sysbench's
//! validation blocks (random bytes, their CRC-32 and the block's offset).

use super::config::FsyncMode;
use rand_core::Rng;
use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::ptr::NonNull;

/// A zeroed buffer aligned to a page, as O_DIRECT needs.
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the buffer owns its memory; nothing else points into it.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// Its alignment: a page, enough for every device's O_DIRECT.
    pub const ALIGN: usize = 4096;

    pub fn new(len: usize) -> io::Result<AlignedBuf> {
        let layout = Layout::from_size_align(len.max(1), Self::ALIGN)
            .map_err(|_| io::Error::from_raw_os_error(libc::ENOMEM))?;
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        let ptr = NonNull::new(ptr).ok_or_else(|| io::Error::from_raw_os_error(libc::ENOMEM))?;
        Ok(AlignedBuf { ptr, len })
    }

    pub fn bytes(&self) -> &[u8] {
        // SAFETY: `ptr` points to `len` initialised (zeroed) bytes we own.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    pub fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `bytes`, and `&mut self` makes the borrow unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }

    pub fn ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        if let Ok(layout) = Layout::from_size_align(self.len.max(1), Self::ALIGN) {
            // SAFETY: allocated in `new` with this very layout.
            unsafe { dealloc(self.ptr.as_ptr(), layout) };
        }
    }
}

/// A file mapped shared, read and write.
pub struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is the file's shared memory, which other processes
// may change at any time too: requests copy in and out of it with raw
// copies, as sysbench's threads do, and never make references into it.
unsafe impl Send for Mapping {}
// SAFETY: as above.
unsafe impl Sync for Mapping {}

impl Mapping {
    pub fn new(f: &File, len: u64) -> io::Result<Mapping> {
        let len = usize::try_from(len).map_err(|_| io::Error::from_raw_os_error(libc::EFBIG))?;
        // SAFETY: a new shared mapping of an open file; the kernel picks
        // the address; the result is checked.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                f.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let ptr = NonNull::new(p.cast::<u8>())
            .ok_or_else(|| io::Error::from_raw_os_error(libc::ENOMEM))?;
        Ok(Mapping { ptr, len })
    }

    fn check(&self, pos: u64, n: usize) -> io::Result<usize> {
        let pos = usize::try_from(pos).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
        if pos.checked_add(n).is_none_or(|end| end > self.len) {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        Ok(pos)
    }

    /// Copies `buf.len()` bytes at `pos` out of the file.
    pub fn read(&self, buf: &mut [u8], pos: u64) -> io::Result<()> {
        let pos = self.check(pos, buf.len())?;
        // SAFETY: `pos + len` is inside the mapping (checked) and `buf` is
        // our own memory, apart from it.
        unsafe {
            std::ptr::copy_nonoverlapping(self.ptr.as_ptr().add(pos), buf.as_mut_ptr(), buf.len())
        };
        Ok(())
    }

    /// Copies `buf` into the file at `pos`.
    pub fn write(&self, buf: &[u8], pos: u64) -> io::Result<()> {
        let pos = self.check(pos, buf.len())?;
        // SAFETY: as in `read`, the other way.
        unsafe {
            std::ptr::copy_nonoverlapping(buf.as_ptr(), self.ptr.as_ptr().add(pos), buf.len())
        };
        Ok(())
    }

    /// msync(2): the mapped file written out (and its cached pages
    /// invalidated), as sysbench's fsync in the mmap mode.
    pub fn sync(&self) -> io::Result<()> {
        // SAFETY: the whole mapping, which we own.
        let rc = unsafe {
            libc::msync(
                self.ptr.as_ptr().cast(),
                self.len,
                libc::MS_SYNC | libc::MS_INVALIDATE,
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

/// One pread(2): the bytes read (short only at the end of the file).
pub fn pread(f: &File, buf: &mut [u8], pos: u64) -> io::Result<usize> {
    // SAFETY: `buf` is writable for its length; the descriptor is open.
    let n = unsafe {
        libc::pread(
            f.as_raw_fd(),
            buf.as_mut_ptr().cast(),
            buf.len(),
            pos as libc::off_t,
        )
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(n as usize)
}

/// One pwrite(2): the bytes written.
pub fn pwrite(f: &File, buf: &[u8], pos: u64) -> io::Result<usize> {
    // SAFETY: `buf` is readable for its length; the descriptor is open.
    let n = unsafe {
        libc::pwrite(
            f.as_raw_fd(),
            buf.as_ptr().cast(),
            buf.len(),
            pos as libc::off_t,
        )
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(n as usize)
}

/// fsync(2) or fdatasync(2).
pub fn fsync(f: &File, mode: FsyncMode) -> io::Result<()> {
    // SAFETY: the descriptor is open.
    let rc = unsafe {
        match mode {
            FsyncMode::Fsync => libc::fsync(f.as_raw_fd()),
            FsyncMode::Fdatasync => libc::fdatasync(f.as_raw_fd()),
        }
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// What a validation block keeps after its random bytes: the CRC-32 of
/// those bytes (4 bytes) and the block's offset (8 bytes), as sysbench
/// lays them out on a 64-bit machine.
const TRAILER: usize = 4 + 8;

/// Fills `buf` as sysbench's `--validate` does: random bytes, then their
/// CRC-32 and `offset` (blocks shorter than the trailer stay as they are).
pub fn fill_block(buf: &mut [u8], offset: u64, rng: &mut impl Rng) {
    if buf.len() <= TRAILER {
        return;
    }
    let body = buf.len() - TRAILER;
    for b in &mut buf[..body] {
        *b = rng.next_u64() as u8;
    }
    let crc = crc32(&buf[..body]);
    buf[body..body + 4].copy_from_slice(&crc.to_ne_bytes());
    buf[body + 4..].copy_from_slice(&offset.to_ne_bytes());
}

/// Checks a block read back: its checksum and offset, as sysbench's
/// `--validate`; the error says which differs.
pub fn check_block(buf: &[u8], offset: u64) -> Result<(), String> {
    if buf.len() <= TRAILER {
        return Ok(());
    }
    let body = buf.len() - TRAILER;
    let crc = crc32(&buf[..body]);
    let mut stored = [0u8; 4];
    stored.copy_from_slice(&buf[body..body + 4]);
    let stored = u32::from_ne_bytes(stored);
    if crc != stored {
        return Err(format!(
            "Checksum mismatch in block with offset: {offset} (calculated 0x{crc:x}, stored 0x{stored:x})"
        ));
    }
    let mut at = [0u8; 8];
    at.copy_from_slice(&buf[body + 4..]);
    let at = u64::from_ne_bytes(at);
    if at != offset {
        return Err(format!(
            "Offset mismatch in block: actual offset {offset}, stored offset {at}"
        ));
    }
    Ok(())
}

/// zlib's CRC-32 (the IEEE polynomial, reflected).
pub fn crc32(data: &[u8]) -> u32 {
    static TABLE: std::sync::OnceLock<[u32; 256]> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut t = [0u32; 256];
        for (i, e) in t.iter_mut().enumerate() {
            let mut c = i as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
            }
            *e = c;
        }
        t
    });
    let mut c = !0u32;
    for b in data {
        c = table[((c ^ u32::from(*b)) & 0xff) as usize] ^ (c >> 8);
    }
    !c
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::SeedableRng;

    #[test]
    fn crc32_is_zlib_s() {
        assert_eq!(crc32(b""), 0);
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }

    #[test]
    fn validation_blocks_check_their_checksum_and_offset() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
        let mut b = vec![0u8; 4096];
        fill_block(&mut b, 8192, &mut rng);
        assert_eq!(check_block(&b, 8192), Ok(()));
        assert!(
            check_block(&b, 4096)
                .unwrap_err()
                .contains("Offset mismatch")
        );
        b[10] ^= 1;
        assert!(
            check_block(&b, 8192)
                .unwrap_err()
                .contains("Checksum mismatch")
        );
        // A zeroed block (prepared without --validate) fails too.
        assert!(check_block(&vec![0u8; 4096], 0).is_err());
    }

    #[test]
    fn buffers_are_page_aligned() {
        let mut b = AlignedBuf::new(16384).unwrap();
        assert_eq!(b.ptr() as usize % AlignedBuf::ALIGN, 0);
        assert!(b.bytes().iter().all(|x| *x == 0));
        assert_eq!(b.bytes_mut().len(), 16384);
    }
}
