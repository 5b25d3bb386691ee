//! A progress bar with rows/s for `prepare`, drawn on stderr when it is a
//! terminal; step lines go above it. Elsewhere (pipes, CI logs) only the
//! step lines are printed.

use dbmeter_benchmarks::{Console, LoadProgress};
use dbmeter_run::Observer;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

pub struct LoadBar {
    pub progress: Arc<LoadProgress>,
    bar: Option<ProgressBar>,
    stop: Arc<AtomicBool>,
    painter: Option<JoinHandle<()>>,
}

impl LoadBar {
    /// A counter that draws nothing.
    pub fn silent() -> LoadBar {
        LoadBar {
            progress: Arc::new(LoadProgress::default()),
            bar: None,
            stop: Arc::new(AtomicBool::new(false)),
            painter: None,
        }
    }

    /// A bar when stderr is a terminal, and otherwise a silent counter.
    pub fn new() -> LoadBar {
        if !std::io::stderr().is_terminal() {
            return LoadBar::silent();
        }
        let progress = Arc::new(LoadProgress::default());
        let stop = Arc::new(AtomicBool::new(false));
        // Hidden until the number of rows to load is known.
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::hidden());
        let style = ProgressStyle::with_template(
            "{elapsed:>4} [{wide_bar}] {human_pos}/{human_len} rows, {rate} rows/s, ETA {eta}",
        )
        .map(|s| {
            s.progress_chars("=> ").with_key(
                "rate",
                |st: &ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = write!(w, "{:.0}", st.per_sec());
                },
            )
        });
        if let Ok(style) = style {
            bar.set_style(style);
        }
        let painter = {
            let (bar, progress, stop) = (bar.clone(), progress.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut shown = false;
                while !stop.load(Ordering::Relaxed) {
                    let total = progress.total.load(Ordering::Relaxed);
                    if total > 0 && !shown {
                        bar.reset_elapsed();
                        bar.set_draw_target(ProgressDrawTarget::stderr());
                        shown = true;
                    }
                    bar.set_length(total);
                    bar.set_position(progress.done.load(Ordering::Relaxed));
                    std::thread::sleep(Duration::from_millis(100));
                }
            })
        };
        LoadBar {
            progress,
            bar: Some(bar),
            stop,
            painter: Some(painter),
        }
    }

    /// Prints a step line (on stdout) above the bar.
    pub fn say(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.suspend(|| println!("{line}")),
            None => println!("{line}"),
        }
    }

    /// Removes the bar.
    pub fn finish(mut self) {
        self.close();
    }

    fn close(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(p) = self.painter.take() {
            let _ = p.join();
        }
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

impl Drop for LoadBar {
    fn drop(&mut self) {
        self.close();
    }
}

/// Where the run layer's lines go: stdout, unless stdout carries the JSON
/// or CSV document (then stderr); warnings on stderr. Loads draw their
/// progress bar (on a terminal) under the lines.
pub struct Printer {
    to_stdout: bool,
    bar: LoadBar,
}

impl Printer {
    /// For a run: lines on stdout when `to_stdout`, else on stderr; no bar.
    pub fn new(to_stdout: bool) -> Printer {
        Printer {
            to_stdout,
            bar: LoadBar::silent(),
        }
    }

    /// For a load (prepare and the other commands): lines on stdout, with
    /// a progress bar on a terminal.
    pub fn for_load() -> Printer {
        Printer {
            to_stdout: true,
            bar: LoadBar::new(),
        }
    }

    /// Removes the bar.
    pub fn finish(self) {
        self.bar.finish();
    }
}

impl Console for Printer {
    fn line(&self, text: &str) {
        if self.to_stdout {
            self.bar.say(text);
        } else {
            eprintln!("{text}");
        }
    }

    fn progress(&self) -> &LoadProgress {
        &self.bar.progress
    }
}

impl Observer for Printer {
    fn warning(&self, message: &str) {
        eprintln!("WARNING: {message}");
    }
}
