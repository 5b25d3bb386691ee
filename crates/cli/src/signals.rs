//! SIGINT and SIGTERM: the first stops the run (or the campaign's running
//! cell) so that it reports and stores what it measured, and says so on
//! stderr; a signal sent after that line ends the program at once. The
//! exit code says which signal came first: 130 for SIGINT, 143 for
//! SIGTERM.
//!
//! Signals that arrive together count as one: GNU `timeout`, a service
//! manager or a terminal may signal both the process and its process
//! group, and the second copy must not throw the report away. Only a
//! signal that arrives after the acknowledgement is printed (so a person
//! who saw it and insists) exits at once.

use dbmeter_engine::StopHandle;
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use std::io::{IsTerminal, Write};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

/// The first signal received (0: none yet).
static RECEIVED: AtomicI32 = AtomicI32::new(0);
/// The stop handle of the program: one per process, so that the handler
/// thread is installed once.
static STOP: OnceLock<StopHandle> = OnceLock::new();

/// Signals that arrive within this time of the first one are copies of
/// it (the same signal sent to the process and to its group).
const TOGETHER: Duration = Duration::from_millis(250);

/// What the first signal prints on stderr.
pub const ACKNOWLEDGED: &str =
    "stopping: finishing the events in flight; send the signal again to exit now";

/// The exit code of a program ended by `signal`.
pub fn exit_code(signal: i32) -> i32 {
    128 + signal
}

/// The stop handle that SIGINT and SIGTERM trigger (the handler thread
/// starts on the first call).
pub fn stop_handle() -> StopHandle {
    STOP.get_or_init(|| {
        let stop = StopHandle::new();
        if let Ok(signals) = Signals::new([SIGINT, SIGTERM]) {
            let s = stop.clone();
            let _ = std::thread::Builder::new()
                .name("dbmeter-signals".into())
                .spawn(move || handle(signals, &s));
        }
        stop
    })
    .clone()
}

fn handle(mut signals: Signals, stop: &StopHandle) {
    let Some(first) = signals.forever().next() else {
        return;
    };
    RECEIVED.store(first, Ordering::SeqCst);
    stop.stop();
    // Copies of the first signal are on their way or already queued:
    // they are swallowed, up to the moment the acknowledgement is out.
    std::thread::sleep(TOGETHER);
    acknowledge();
    for _ in signals.pending() {}
    // A signal sent after the acknowledgement: no more waiting.
    if signals.forever().next().is_some() {
        std::process::exit(exit_code(first));
    }
}

/// Tells the user that the stop is under way, on a line of its own (over
/// the live status line on a terminal, which the next update redraws).
fn acknowledge() {
    let mut err = std::io::stderr().lock();
    let clear = if std::io::stderr().is_terminal() {
        "\r\x1b[2K"
    } else {
        ""
    };
    let _ = writeln!(err, "{clear}{ACKNOWLEDGED}");
    let _ = err.flush();
}

/// The exit code for a run stopped by a signal: 130 (SIGINT) or 143
/// (SIGTERM); 130 when the stop came some other way.
pub fn interrupted_code() -> i32 {
    match RECEIVED.load(Ordering::SeqCst) {
        0 => exit_code(SIGINT),
        s => exit_code(s),
    }
}
