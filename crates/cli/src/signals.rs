//! SIGINT and SIGTERM: the first stops the run (or the campaign's running
//! cell) so that it reports and stores what it measured; a second ends the
//! program at once. The exit code says which signal came: 130 for SIGINT,
//! 143 for SIGTERM.

use dbmeter_engine::StopHandle;
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicI32, Ordering};

/// The first signal received (0: none yet).
static RECEIVED: AtomicI32 = AtomicI32::new(0);
/// The stop handle of the program: one per process, so that the handler
/// thread is installed once.
static STOP: OnceLock<StopHandle> = OnceLock::new();

/// The exit code of a program ended by `signal`.
pub fn exit_code(signal: i32) -> i32 {
    128 + signal
}

/// The stop handle that SIGINT and SIGTERM trigger (the handler thread
/// starts on the first call).
pub fn stop_handle() -> StopHandle {
    STOP.get_or_init(|| {
        let stop = StopHandle::new();
        if let Ok(mut signals) = Signals::new([SIGINT, SIGTERM]) {
            let s = stop.clone();
            let _ = std::thread::Builder::new()
                .name("dbmeter-signals".into())
                .spawn(move || {
                    for sig in signals.forever() {
                        if RECEIVED
                            .compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst)
                            .is_err()
                        {
                            // A second signal: no more waiting.
                            std::process::exit(exit_code(RECEIVED.load(Ordering::SeqCst)));
                        }
                        s.stop();
                    }
                });
        }
        stop
    })
    .clone()
}

/// The exit code for a run stopped by a signal: 130 (SIGINT) or 143
/// (SIGTERM); 130 when the stop came some other way.
pub fn interrupted_code() -> i32 {
    match RECEIVED.load(Ordering::SeqCst) {
        0 => exit_code(SIGINT),
        s => exit_code(s),
    }
}
