//! The command line: `dbmeter COMMAND WORKLOAD [--option=value ...]`.
//!
//! Options use sysbench's names; dashes and underscores are interchangeable,
//! values follow `=` or come as the next argument. sysbench's order
//! (`dbmeter oltp_read_write --threads=4 run`) works too.

mod args;
mod commands;
mod error;
mod help;
mod metrics;
mod progress;
mod signals;
mod subcommand_args;

pub use error::CliError;

/// Runs dbmeter with `args` (without the program name) and returns the
/// process exit code: 0 success, 1 failure, 2 usage error, 3 a run missed
/// its `--assert` targets, 130 interrupted.
pub fn main(args: Vec<String>) -> i32 {
    // `dbmeter run ... | head` ends quietly when the reader goes away.
    // SAFETY: restoring the default disposition of SIGPIPE at start-up,
    // before any thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    match commands::dispatch(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("dbmeter: {e}");
            e.exit_code()
        }
    }
}
