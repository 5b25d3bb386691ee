//! A pgbench client allocates nothing per transaction once warm: the
//! built-in scripts run through a session that only looks at what it is
//! given, with every allocation made on the test's own thread counted
//! (the harness's other threads allocate when a loaded machine lets them
//! run, which says nothing about the client).

use dbmeter_benchmarks::pgbench::{
    Captured, ExecOptions, Host, Query, QueryMode, ScriptSetBuilder, Session, Setup, SqlError,
    TxStatus,
};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// Set on the thread whose allocations are counted; const-initialised,
    /// so reading it never allocates.
    static COUNTED: Cell<bool> = const { Cell::new(false) };
}

fn count() {
    if COUNTED.try_with(Cell::get).unwrap_or(false) {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: forwards to the system allocator, only counting calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller's contract is passed on unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Reads the SQL and parameters it is given, as a driver would.
struct Reader {
    bytes: usize,
}

impl Session for Reader {
    fn query(&mut self, q: &Query<'_>, _capture: Option<&mut Captured>) -> Result<(), SqlError> {
        self.bytes += q.sql.len() + q.params.iter().flatten().map(str::len).sum::<usize>();
        Ok(())
    }
}

struct Clock(Duration);

impl Host for Clock {
    fn now(&mut self) -> Duration {
        self.0 += Duration::from_nanos(100);
        self.0
    }

    fn sleep(&mut self, d: Duration) {
        self.0 += d;
    }
}

#[test]
fn transactions_allocate_nothing_once_warm() {
    COUNTED.with(|c| c.set(true));
    for mode in [QueryMode::Simple, QueryMode::Extended, QueryMode::Prepared] {
        let mut b = ScriptSetBuilder::new();
        for spec in ["tpcb-like@2", "simple-update@1", "select-only@1"] {
            b.add_builtin(spec).unwrap_or_else(|e| panic!("{e}"));
        }
        let set = Arc::new(b.build().unwrap_or_else(|e| panic!("{e}")));
        let options = ExecOptions {
            mode,
            ..ExecOptions::default()
        };
        let setup = Setup::new(set, 1, 3, 10, Vec::new(), options);
        let mut client = setup.client(0);
        let mut session = Reader { bytes: 0 };
        let mut host = Clock(Duration::ZERO);
        for _ in 0..50 {
            client.run_transaction(&mut session, &mut host);
        }
        let before = ALLOCATIONS.load(Ordering::Relaxed);
        let mut done = 0;
        for _ in 0..2000 {
            done +=
                (client.run_transaction(&mut session, &mut host).status == TxStatus::Done) as u32;
        }
        let allocated = ALLOCATIONS.load(Ordering::Relaxed) - before;
        assert_eq!(done, 2000);
        assert!(session.bytes > 0);
        assert_eq!(
            allocated,
            0,
            "{} mode: {allocated} allocations in 2000 transactions",
            mode.name()
        );
    }
}
