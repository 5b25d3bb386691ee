//! The async mode: one io_uring per thread, up to `--file-queue-depth`
//! requests in flight (fio's iodepth). An event submits one request and,
//! when the queue is full, waits for at least one to complete; what
//! completes is counted in the event that sees it complete (as sysbench
//! counts its libaio requests), and a thread's last event drains the
//! queue.

use super::config::FsyncMode;
use super::io::AlignedBuf;
use io_uring::{IoUring, opcode, squeue, types};
use std::io;
use std::os::fd::RawFd;

/// What a request in flight is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
    Fsync,
}

/// A read or write in flight: its buffer and where it goes.
struct Slot {
    buf: AlignedBuf,
    pos: u64,
    len: u32,
    op: Op,
}

/// A completed request, as the caller counts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Done {
    pub op: Op,
    pub bytes: u64,
}

pub struct Queue {
    ring: IoUring,
    slots: Vec<Slot>,
    free: Vec<usize>,
    in_flight: usize,
    depth: usize,
    /// Completions being counted (kept between calls).
    cqes: Vec<(u64, i32)>,
}

/// What is called for each completed request: what it was, the data of
/// a read and its offset; an error stops the run.
pub type OnDone<'a> = dyn FnMut(Done, &[u8], u64) -> Result<(), String> + 'a;

/// The user data of an fsync (reads and writes carry their slot).
const FSYNC: u64 = u64::MAX;

/// Why io_uring cannot be used here, or None when it can: a ring is made
/// and the operations dbmeter submits are probed.
pub fn unavailable(depth: u32) -> Option<String> {
    match IoUring::new(entries(depth)) {
        Err(e) => Some(refusal(&e)),
        Ok(ring) => {
            let mut probe = io_uring::Probe::new();
            if ring.submitter().register_probe(&mut probe).is_err() {
                return Some("the kernel cannot say which io_uring operations it has (Linux 5.6 or later needed)".into());
            }
            for (code, name) in [
                (opcode::Read::CODE, "read"),
                (opcode::Write::CODE, "write"),
                (opcode::Fsync::CODE, "fsync"),
            ] {
                if !probe.is_supported(code) {
                    return Some(format!(
                        "the kernel's io_uring has no {name} operation (Linux 5.6 or later needed)"
                    ));
                }
            }
            None
        }
    }
}

/// The words for a kernel that refuses to make a ring.
pub fn refusal(e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::ENOSYS) => format!("this kernel has no io_uring ({e})"),
        Some(libc::EPERM) | Some(libc::EACCES) => format!(
            "the kernel refuses io_uring to this process ({e}; see the sysctl kernel.io_uring_disabled or a seccomp policy)"
        ),
        Some(libc::ENOMEM) => {
            format!("the kernel cannot lock memory for an io_uring ({e}; raise `ulimit -l`)")
        }
        _ => format!("the kernel refuses io_uring ({e})"),
    }
}

/// Entries of a ring for `depth` requests: a write and its fsync may be
/// queued together.
fn entries(depth: u32) -> u32 {
    (depth.max(1) * 2).next_power_of_two()
}

impl Queue {
    /// A ring and `depth` buffers of `len` bytes; the error says which
    /// could not be had.
    pub fn new(depth: u32, len: usize) -> Result<Queue, String> {
        let ring = IoUring::new(entries(depth)).map_err(|e| refusal(&e))?;
        let mut slots = Vec::with_capacity(depth as usize);
        for _ in 0..depth {
            let buf = AlignedBuf::new(len).map_err(|e| {
                format!("cannot allocate {depth} request buffers of {len} bytes: {e}")
            })?;
            slots.push(Slot {
                buf,
                pos: 0,
                len: 0,
                op: Op::Read,
            });
        }
        Ok(Queue {
            ring,
            free: (0..depth as usize).rev().collect(),
            slots,
            in_flight: 0,
            depth: depth as usize,
            cqes: Vec::with_capacity(entries(depth) as usize * 2),
        })
    }

    /// A free buffer of `len` bytes for the next read or write, to fill
    /// before [`Queue::submit`]; None when every buffer is in flight
    /// (never after a [`Queue::submit`] that waited as it must).
    pub fn next_buffer(&mut self, len: usize) -> Option<(usize, &mut [u8])> {
        let i = *self.free.last()?;
        let s = &mut self.slots[i];
        Some((i, &mut s.buf.bytes_mut()[..len]))
    }

    /// Submits a read or write through buffer `slot` (from
    /// [`Queue::next_buffer`]), then an fsync of the same file after it
    /// when `fsync_after` says how; waits for a completion when the queue
    /// is full; calls `done` for every request that completed.
    #[allow(clippy::too_many_arguments)]
    pub fn submit(
        &mut self,
        slot: usize,
        op: Op,
        fd: RawFd,
        pos: u64,
        len: usize,
        fsync_after: Option<FsyncMode>,
        done: &mut OnDone<'_>,
    ) -> Result<(), String> {
        let len32 = u32::try_from(len).map_err(|_| "a request above 4 GiB".to_string())?;
        if self.free.last() != Some(&slot) {
            return Err("io_uring: a buffer submitted twice".into());
        }
        self.free.pop();
        let s = &mut self.slots[slot];
        s.pos = pos;
        s.len = len32;
        s.op = op;
        let ptr = s.buf.ptr();
        let fd = types::Fd(fd);
        let entry = match op {
            Op::Read => opcode::Read::new(fd, ptr, len32).offset(pos).build(),
            Op::Write => opcode::Write::new(fd, ptr, len32).offset(pos).build(),
            Op::Fsync => return Err("io_uring: an fsync submitted as a read or write".into()),
        }
        .user_data(slot as u64);
        match fsync_after {
            // The fsync starts once the write (and all before it) is done.
            Some(mode) => {
                let sync = fsync_entry(fd, mode).flags(squeue::Flags::IO_DRAIN);
                self.push(&[entry, sync], done)
            }
            None => self.push(&[entry], done),
        }
    }

    /// Submits an fsync of `fd` that starts once every request submitted
    /// before it is done.
    pub fn fsync(
        &mut self,
        fd: RawFd,
        mode: FsyncMode,
        done: &mut OnDone<'_>,
    ) -> Result<(), String> {
        let e = fsync_entry(types::Fd(fd), mode).flags(squeue::Flags::IO_DRAIN);
        self.push(&[e], done)
    }

    fn push(&mut self, entries: &[squeue::Entry], done: &mut OnDone<'_>) -> Result<(), String> {
        // SAFETY: every buffer an entry points to is a slot's, which stays
        // allocated and untouched until its completion is reaped (slots
        // live as long as the ring, and `Drop` waits for what is in
        // flight); an fsync points to nothing.
        let pushed = unsafe { self.ring.submission().push_multiple(entries) };
        if pushed.is_err() {
            // The ring is sized for every request allowed in flight, so
            // this is a request too many: wait for room.
            self.ring
                .submit_and_wait(1)
                .map_err(|e| format!("io_uring_enter: {e}"))?;
            self.reap(done)?;
            // SAFETY: as above.
            unsafe { self.ring.submission().push_multiple(entries) }
                .map_err(|_| "io_uring: the submission queue stays full".to_string())?;
        }
        self.in_flight += entries.len();
        let want = usize::from(self.in_flight >= self.depth);
        submit(&self.ring, want)?;
        self.reap(done)
    }

    /// Counts what has completed; waits for nothing.
    fn reap(&mut self, done: &mut OnDone<'_>) -> Result<(), String> {
        let mut first_error = None;
        // Taken out of the ring first (its queue is borrowed while read);
        // the vector is kept, so that reaping allocates nothing.
        let mut cqes = std::mem::take(&mut self.cqes);
        cqes.clear();
        cqes.extend(self.ring.completion().map(|c| (c.user_data(), c.result())));
        for &(data, res) in &cqes {
            self.in_flight = self.in_flight.saturating_sub(1);
            let outcome = if data == FSYNC {
                if res < 0 {
                    Err(format!(
                        "Asynchronous fsync failed: {}",
                        io::Error::from_raw_os_error(-res)
                    ))
                } else {
                    done(
                        Done {
                            op: Op::Fsync,
                            bytes: 0,
                        },
                        &[],
                        0,
                    )
                }
            } else {
                let i = data as usize;
                let Some(s) = self.slots.get_mut(i) else {
                    return Err(format!("io_uring: a completion for no request ({data})"));
                };
                self.free.push(i);
                let what = if s.op == Op::Read { "read" } else { "write" };
                if res < 0 {
                    Err(format!(
                        "Asynchronous {what} failed at offset {}: {}",
                        s.pos,
                        io::Error::from_raw_os_error(-res)
                    ))
                } else if res as u32 != s.len {
                    Err(format!(
                        "Asynchronous {what} failed at offset {}: {res} of {} bytes",
                        s.pos, s.len
                    ))
                } else {
                    let len = s.len as usize;
                    done(
                        Done {
                            op: s.op,
                            bytes: u64::from(s.len),
                        },
                        &s.buf.bytes()[..len],
                        s.pos,
                    )
                }
            };
            if let Err(e) = outcome {
                first_error.get_or_insert(e);
            }
        }
        self.cqes = cqes;
        first_error.map_or(Ok(()), Err)
    }

    /// Waits until nothing is in flight, counting what completes.
    pub fn drain(&mut self, done: &mut OnDone<'_>) -> Result<(), String> {
        while self.in_flight > 0 {
            submit(&self.ring, 1)?;
            self.reap(done)?;
        }
        Ok(())
    }
}

fn fsync_entry(fd: types::Fd, mode: FsyncMode) -> squeue::Entry {
    let flags = match mode {
        FsyncMode::Fsync => types::FsyncFlags::empty(),
        FsyncMode::Fdatasync => types::FsyncFlags::DATASYNC,
    };
    opcode::Fsync::new(fd).flags(flags).build().user_data(FSYNC)
}

/// io_uring_enter: submits what is queued and waits for `want`
/// completions, again when a signal interrupts the wait.
fn submit(ring: &IoUring, want: usize) -> Result<(), String> {
    loop {
        match ring.submit_and_wait(want) {
            Ok(_) => return Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) && want == 0 => {
                // The completion queue is full: the caller reaps first.
                return Ok(());
            }
            Err(e) => return Err(format!("io_uring_enter: {e}")),
        }
    }
}

impl Drop for Queue {
    fn drop(&mut self) {
        // The kernel may still write into the slots' buffers: wait for
        // what is in flight before they are freed.
        let mut ignore = |_: Done, _: &[u8], _: u64| Ok(());
        while self.in_flight > 0 {
            if submit(&self.ring, 1).is_err() {
                break;
            }
            if self.reap(&mut ignore).is_err() && self.in_flight == 0 {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn refusals_are_worded() {
        let m = refusal(&io::Error::from_raw_os_error(libc::EPERM));
        assert!(m.contains("refuses io_uring"), "{m}");
        assert!(refusal(&io::Error::from_raw_os_error(libc::ENOSYS)).contains("no io_uring"));
        assert_eq!(entries(1), 2);
        assert_eq!(entries(32), 64);
        assert_eq!(entries(100), 256);
    }

    #[test]
    fn writes_reads_and_fsyncs_complete_and_are_counted() {
        if let Some(why) = unavailable(4) {
            eprintln!("skipping: {why}");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(true)
            .read(true)
            .write(true)
            .open(dir.path().join("f"))
            .unwrap();
        let mut q = Queue::new(4, 4096).unwrap();
        let mut seen = Vec::new();
        let mut done = |d: Done, data: &[u8], pos: u64| {
            if d.op == Op::Read {
                assert!(data.iter().all(|b| *b == (pos / 4096) as u8 + 1));
            }
            seen.push(d);
            Ok(())
        };
        for i in 0..8u64 {
            let (slot, buf) = q.next_buffer(4096).unwrap();
            buf.fill(i as u8 + 1);
            let fsync = (i == 7).then_some(FsyncMode::Fdatasync);
            q.submit(
                slot,
                Op::Write,
                f.as_raw_fd(),
                i * 4096,
                4096,
                fsync,
                &mut done,
            )
            .unwrap();
        }
        q.drain(&mut done).unwrap();
        for i in 0..8u64 {
            let (slot, _) = q.next_buffer(4096).unwrap();
            q.submit(
                slot,
                Op::Read,
                f.as_raw_fd(),
                i * 4096,
                4096,
                None,
                &mut done,
            )
            .unwrap();
        }
        q.fsync(f.as_raw_fd(), FsyncMode::Fsync, &mut done).unwrap();
        q.drain(&mut done).unwrap();
        let count = |op| seen.iter().filter(|d| d.op == op).count();
        assert_eq!(
            (count(Op::Write), count(Op::Read), count(Op::Fsync)),
            (8, 8, 2)
        );
        assert_eq!(f.metadata().unwrap().len(), 8 * 4096);
        // Reading past the end is a short read, reported.
        let mut ignore = |_: Done, _: &[u8], _: u64| Ok(());
        let (slot, _) = q.next_buffer(4096).unwrap();
        let r = q
            .submit(
                slot,
                Op::Read,
                f.as_raw_fd(),
                8 * 4096,
                4096,
                None,
                &mut ignore,
            )
            .and_then(|()| q.drain(&mut ignore));
        assert!(r.unwrap_err().contains("0 of 4096 bytes"));
    }
}
