//! Many clients on one OS thread, as pgbench's `-j` runs them: each client
//! is a task ([`Scheduler::spawn`]) that runs ordinary blocking-style code
//! on a stack of its own (a stackful coroutine). Where that code would
//! block — a socket that has nothing to read or no room to write
//! ([`wait_fd`]), a sleep ([`sleep`]) — the task is suspended and the
//! thread's loop ([`Scheduler::run`]) runs the other tasks; when none can
//! run, the loop waits in one `ppoll(2)` for any of their sockets or the
//! earliest wake-up.
//!
//! Code that is not running in a task (every thread but a scheduler's, and
//! a scheduler's own loop) sees no difference: [`wait_fd`] returns false
//! (the caller blocks as it always did) and [`sleep`] sleeps the thread.
//! So the database clients need one check per blocking call and nothing
//! else, and every other benchmark keeps its thread per connection.

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use std::cell::Cell;
use std::collections::VecDeque;
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

/// Each task's stack: as large as a Rust thread's default stack, so that
/// code runs in a task wherever it ran on a thread of its own. Only the
/// pages touched are backed by memory.
const STACK_SIZE: usize = 2 << 20;

/// What a task waits for on a socket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interest {
    Read,
    Write,
}

/// Why a task suspended itself.
enum Wait {
    Fd(RawFd, Interest),
    Until(Instant),
}

type TaskYielder = Yielder<(), Wait>;

thread_local! {
    /// The running task's yielder; null outside tasks (and while the
    /// scheduler's loop runs).
    static CURRENT: Cell<*const TaskYielder> = const { Cell::new(std::ptr::null()) };
}

/// Whether the calling code runs in a task.
pub fn active() -> bool {
    CURRENT.with(|c| !c.get().is_null())
}

/// Suspends the running task until `w`; false (at once) outside a task.
fn suspend(w: Wait) -> bool {
    let y = CURRENT.with(|c| c.replace(std::ptr::null()));
    if y.is_null() {
        return false;
    }
    // SAFETY: `y` was stored by the running task's body from the yielder
    // it was given, which lives for as long as that body runs; this code
    // runs inside that body, on this thread (tasks never move).
    unsafe { (*y).suspend(w) };
    CURRENT.with(|c| c.set(y));
    true
}

/// In a task: suspends it until `fd` is ready for `interest` (or has an
/// error or hang-up to report), and returns true. Outside a task: returns
/// false at once; the caller then blocks on the socket itself.
pub fn wait_fd(fd: RawFd, interest: Interest) -> bool {
    suspend(Wait::Fd(fd, interest))
}

/// Sleeps for `d`: in a task, suspends it (the thread runs the others);
/// outside, sleeps the thread.
pub fn sleep(d: Duration) {
    if d.is_zero() {
        return;
    }
    // A wait too long to add to the clock: far enough to mean never.
    let at = Instant::now()
        .checked_add(d)
        .unwrap_or_else(|| Instant::now() + Duration::from_secs(1 << 32));
    if !suspend(Wait::Until(at)) {
        std::thread::sleep(d);
    }
}

/// Runs `f` as if outside a task: its socket waits and sleeps block the
/// thread (a connect with its timeouts, say).
pub fn blocking<R>(f: impl FnOnce() -> R) -> R {
    struct Back(*const TaskYielder);
    impl Drop for Back {
        fn drop(&mut self) {
            CURRENT.with(|c| c.set(self.0));
        }
    }
    let _back = Back(CURRENT.with(|c| c.replace(std::ptr::null())));
    f()
}

/// Clears the running task's yielder when its body ends (or unwinds).
struct Leave;

impl Drop for Leave {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(std::ptr::null()));
    }
}

type Task = Coroutine<(), Wait, (), DefaultStack>;

/// The tasks of one thread and its loop.
#[derive(Default)]
pub struct Scheduler {
    tasks: Vec<Option<Task>>,
}

impl std::fmt::Debug for Scheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scheduler")
            .field("tasks", &self.tasks.len())
            .finish()
    }
}

impl Scheduler {
    pub fn new() -> Scheduler {
        Scheduler::default()
    }

    /// Adds a task; it first runs in [`Scheduler::run`]. Fails when its
    /// stack cannot be mapped.
    pub fn spawn(&mut self, f: impl FnOnce() + 'static) -> std::io::Result<()> {
        let stack = DefaultStack::new(STACK_SIZE)?;
        let task = Coroutine::with_stack(stack, move |y: &TaskYielder, ()| {
            CURRENT.with(|c| c.set(y as *const TaskYielder));
            let _leave = Leave;
            f();
        });
        self.tasks.push(Some(task));
        Ok(())
    }

    /// Runs the tasks until every one has returned. A task that panics
    /// ends the loop with its panic (the others are unwound as they are
    /// dropped).
    pub fn run(&mut self) {
        let mut left = self.tasks.iter().filter(|t| t.is_some()).count();
        let mut ready: VecDeque<usize> = (0..self.tasks.len()).collect();
        // Tasks waiting on a socket, and the poll set built from them (in
        // the same order).
        let mut on_fd: Vec<(usize, RawFd, Interest)> = Vec::new();
        let mut still: Vec<(usize, RawFd, Interest)> = Vec::new();
        let mut polled: Vec<libc::pollfd> = Vec::new();
        let mut timers: Vec<(usize, Instant)> = Vec::new();
        while left > 0 {
            while let Some(i) = ready.pop_front() {
                let Some(task) = self.tasks.get_mut(i).and_then(Option::as_mut) else {
                    continue;
                };
                match task.resume(()) {
                    CoroutineResult::Yield(Wait::Fd(fd, interest)) => on_fd.push((i, fd, interest)),
                    CoroutineResult::Yield(Wait::Until(at)) => timers.push((i, at)),
                    CoroutineResult::Return(()) => {
                        self.tasks[i] = None;
                        left -= 1;
                    }
                }
            }
            if left == 0 {
                break;
            }
            polled.clear();
            polled.extend(on_fd.iter().map(|&(_, fd, interest)| libc::pollfd {
                fd,
                events: match interest {
                    Interest::Read => libc::POLLIN,
                    Interest::Write => libc::POLLOUT,
                },
                revents: 0,
            }));
            // The clock is read only when a task sleeps (most waits are on
            // sockets alone).
            let timeout = timers.iter().map(|t| t.1).min().map(|at| {
                let d = at.saturating_duration_since(Instant::now());
                libc::timespec {
                    tv_sec: d.as_secs().min(i32::MAX as u64) as libc::time_t,
                    tv_nsec: d.subsec_nanos() as libc::c_long,
                }
            });
            let tp = timeout
                .as_ref()
                .map_or(std::ptr::null(), |t| t as *const libc::timespec);
            // SAFETY: `polled` is a live, initialised array of its length;
            // `tp` is null or points to a live timespec; no signal mask.
            let r = unsafe {
                libc::ppoll(
                    polled.as_mut_ptr(),
                    polled.len() as libc::nfds_t,
                    tp,
                    std::ptr::null(),
                )
            };
            if r < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() != std::io::ErrorKind::Interrupted {
                    // Cannot happen with a valid set; rather than spin,
                    // let every waiting task try its socket again shortly.
                    std::thread::sleep(Duration::from_millis(1));
                    for p in &mut polled {
                        p.revents = p.events;
                    }
                }
            }
            still.clear();
            for (w, p) in on_fd.iter().zip(&polled) {
                if p.revents != 0 {
                    ready.push_back(w.0);
                } else {
                    still.push(*w);
                }
            }
            std::mem::swap(&mut on_fd, &mut still);
            if !timers.is_empty() {
                let now = Instant::now();
                timers.retain(|&(i, at)| {
                    if at <= now {
                        ready.push_back(i);
                        false
                    } else {
                        true
                    }
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;
    use std::rc::Rc;

    #[test]
    fn outside_a_task_nothing_changes() {
        assert!(!active());
        let (a, _b) = UnixStream::pair().unwrap();
        assert!(!wait_fd(a.as_raw_fd(), Interest::Read));
        let t = Instant::now();
        sleep(Duration::from_millis(5));
        assert!(t.elapsed() >= Duration::from_millis(5));
    }

    /// Two tasks on one thread answer each other over a socket pair: each
    /// waits (suspended) for the other's message; a third sleeps.
    #[test]
    fn tasks_take_turns_on_their_sockets_and_sleeps() {
        let (a, b) = UnixStream::pair().unwrap();
        a.set_nonblocking(true).unwrap();
        b.set_nonblocking(true).unwrap();
        let log = Rc::new(std::cell::RefCell::new(Vec::<String>::new()));
        fn recv(s: &mut UnixStream) -> u8 {
            let mut buf = [0u8; 1];
            loop {
                match s.read(&mut buf) {
                    Ok(1) => return buf[0],
                    Ok(_) => panic!("closed"),
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        assert!(wait_fd(s.as_raw_fd(), Interest::Read));
                    }
                    Err(e) => panic!("{e}"),
                }
            }
        }
        let mut s = Scheduler::new();
        let (mut a2, l1) = (a, log.clone());
        s.spawn(move || {
            assert!(active());
            for i in 0..3u8 {
                a2.write_all(&[i]).unwrap();
                let got = recv(&mut a2);
                l1.borrow_mut().push(format!("a got {got}"));
            }
        })
        .unwrap();
        let (mut b2, l2) = (b, log.clone());
        s.spawn(move || {
            for _ in 0..3 {
                let got = recv(&mut b2);
                l2.borrow_mut().push(format!("b got {got}"));
                b2.write_all(&[got + 10]).unwrap();
            }
        })
        .unwrap();
        let l3 = log.clone();
        s.spawn(move || {
            let t = Instant::now();
            sleep(Duration::from_millis(20));
            assert!(t.elapsed() >= Duration::from_millis(20));
            l3.borrow_mut().push("slept".into());
        })
        .unwrap();
        s.run();
        assert!(!active());
        let log = log.borrow();
        assert_eq!(log.last().map(String::as_str), Some("slept"));
        assert_eq!(
            log[..6],
            [
                "b got 0", "a got 10", "b got 1", "a got 11", "b got 2", "a got 12"
            ]
        );
    }
}
