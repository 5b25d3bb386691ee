//! A progress bar with rows/s for `prepare`, drawn on stderr when it is a
//! terminal; step lines go above it. Elsewhere (pipes, CI logs) only the
//! step lines are printed.

use dbmeter_benchmarks::{Console, LoadProgress};
use dbmeter_report::present::{self, JsonLines, Piece, Presenter, Stream, TextOptions};
use dbmeter_result::{Layout, Live, RunEvent};
use dbmeter_run::Observer;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use parking_lot::Mutex;
use std::io::IsTerminal;
use std::io::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// Rows per second over `secs`, once there is enough time to tell.
fn load_rate(rows: u64, secs: f64) -> Option<f64> {
    (secs >= 0.5).then(|| rows as f64 / secs)
}

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
        // The rate is the rows since the bar appeared over the time since
        // then, shown from the first half second on: a first frame drawn
        // a moment after a batch lands would otherwise read billions.
        let base = Arc::new(AtomicU64::new(0));
        let style = ProgressStyle::with_template(
            "{elapsed:>4} [{wide_bar}] {human_pos}/{human_len} rows, {rate} rows/s, ETA {eta}",
        )
        .map(|s| {
            let base = base.clone();
            s.progress_chars("=> ").with_key(
                "rate",
                move |st: &ProgressState, w: &mut dyn std::fmt::Write| {
                    let secs = st.elapsed().as_secs_f64();
                    let rows = st.pos().saturating_sub(base.load(Ordering::Relaxed));
                    let _ = match load_rate(rows, secs) {
                        Some(r) => write!(w, "{r:.0}"),
                        None => write!(w, "-"),
                    };
                },
            )
        });
        if let Ok(style) = style {
            bar.set_style(style);
        }
        let painter = {
            let (bar, progress, stop) = (bar.clone(), progress.clone(), stop.clone());
            let base = base.clone();
            std::thread::spawn(move || {
                let mut shown = false;
                while !stop.load(Ordering::Relaxed) {
                    let total = progress.total.load(Ordering::Relaxed);
                    if total > 0 && !shown {
                        base.store(progress.done.load(Ordering::Relaxed), Ordering::Relaxed);
                        bar.set_position(base.load(Ordering::Relaxed));
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

/// Where a run's events are shown: a presenter renders each event
/// (`dbmeter_report::present`), and the printer puts the pieces on stdout
/// (above the load bar, when there is one) or stderr, and draws the live
/// status line on a terminal. With `--output` and `--format=jsonl`, a
/// second presenter records the JSON lines for the file.
pub struct Printer {
    presenter: Mutex<Box<dyn Presenter>>,
    /// JSON lines recorded for `--output`.
    recorded: Option<Mutex<(JsonLines, Vec<String>)>>,
    bar: LoadBar,
    /// Whether a live status line is on stderr now (only ever on a
    /// terminal).
    status: Option<Mutex<bool>>,
    /// `--prometheus`: the metrics endpoint, fed every event too.
    metrics: Option<Arc<dbmeter_metrics::Exporter>>,
}

/// Erases the current line of the terminal.
const CLEAR_LINE: &str = "\r\x1b[2K";

impl Printer {
    /// For a run, with the presenter of `layout` (or JSON lines on
    /// stdout); a live status line on stderr when it is a terminal and the
    /// layout is dbmeter's.
    pub fn for_run(presenter: Box<dyn Presenter>, live: bool) -> Printer {
        Printer {
            presenter: Mutex::new(presenter),
            recorded: None,
            bar: LoadBar::silent(),
            status: (live && std::io::stderr().is_terminal()).then(|| Mutex::new(false)),
            metrics: None,
        }
    }

    /// Also feeds the events to the metrics endpoint (`--prometheus`).
    pub fn feeding(mut self, metrics: Option<Arc<dbmeter_metrics::Exporter>>) -> Printer {
        self.metrics = metrics;
        self
    }

    /// Also records the run's JSON lines (for `--output` with
    /// `--format=jsonl`).
    pub fn recording_json_lines(mut self) -> Printer {
        self.recorded = Some(Mutex::new((JsonLines, Vec::new())));
        self
    }

    /// For a load (prepare and the other commands): lines on stdout, with
    /// a progress bar on a terminal.
    pub fn for_load() -> Printer {
        Printer::for_load_with(Layout::Dbmeter, Stream::Out)
    }

    /// For a load whose lines go to `lines` (pgbench's -i: stderr).
    pub fn for_load_on(lines: Stream) -> Printer {
        Printer::for_load_with(Layout::Dbmeter, lines)
    }

    /// [`Printer::for_load`], its lines presented as `layout` presents
    /// them (sysbench's `--verbosity` silences them).
    pub fn for_load_in(layout: Layout) -> Printer {
        Printer::for_load_with(layout, Stream::Out)
    }

    fn for_load_with(layout: Layout, lines: Stream) -> Printer {
        Printer {
            presenter: Mutex::new(present::for_layout(
                layout,
                TextOptions {
                    lines,
                    histogram: false,
                },
            )),
            recorded: None,
            bar: LoadBar::new(),
            status: None,
            metrics: None,
        }
    }

    /// Removes the bar and the status line; the recorded JSON lines, if
    /// any.
    pub fn finish(mut self) -> Option<String> {
        self.clear_status();
        let recorded = self
            .recorded
            .take()
            .map(|r| r.into_inner().1.into_iter().map(|l| l + "\n").collect());
        self.bar.finish();
        recorded
    }

    fn clear_status(&self) {
        if let Some(shown) = &self.status {
            let mut shown = shown.lock();
            if *shown {
                eprint!("{CLEAR_LINE}");
                *shown = false;
            }
        }
    }

    fn print(&self, pieces: Vec<Piece>) {
        if pieces.is_empty() {
            return;
        }
        self.clear_status();
        for p in pieces {
            match p.stream {
                Stream::Out => self.bar.say(&p.text),
                Stream::Err => eprintln!("{}", p.text),
            }
        }
    }
}

/// The live status line: where the run stands, what it does.
pub(crate) fn status_line(s: &Live) -> String {
    let i = &s.interval;
    let time = match s.limit_s {
        Some(limit) => format!(
            "{:.0}s/{limit:.0}s ETA {:.0}s",
            i.t_s,
            (limit - i.t_s).max(0.0)
        ),
        None => format!("{:.0}s", i.t_s),
    };
    let latency = i
        .latency_ms
        .get(s.percentile)
        .map_or("-".to_string(), |v| format!("{v:.2}"));
    // Transactions for a benchmark that issues SQL, events otherwise.
    let sql = dbmeter_stats::measure::sql::is_sql(i.counts.keys().map(String::as_str));
    let per_s = if sql { "tps" } else { "eps" };
    format!(
        "[ {time} ] thds: {} {per_s}: {:.2} lat (ms,{}%): {latency} errors: {}",
        i.threads, i.events_per_s, s.percentile, s.errors
    )
}

impl Console for Printer {
    fn line(&self, text: &str) {
        self.event(&RunEvent::Note(text));
    }

    fn progress(&self) -> &LoadProgress {
        &self.bar.progress
    }
}

impl Observer for Printer {
    fn event(&self, event: &RunEvent) {
        if let Some(m) = &self.metrics {
            m.event(event);
        }
        if let Some(r) = &self.recorded {
            let mut r = r.lock();
            let (json, lines) = &mut *r;
            let mut pieces = Vec::new();
            json.present(event, &mut pieces);
            lines.extend(
                pieces
                    .into_iter()
                    .filter(|p| p.stream == Stream::Out)
                    .map(|p| p.text),
            );
        }
        if let RunEvent::Live(status) = event {
            if let Some(shown) = &self.status {
                let mut shown = shown.lock();
                let line: String = status_line(status).chars().take(79).collect();
                eprint!("{CLEAR_LINE}{line}");
                let _ = std::io::stderr().flush();
                *shown = true;
            }
            // Presenters print nothing for it but may keep it (sysbench's
            // checkpoint reports).
            let mut pieces = Vec::new();
            self.presenter.lock().present(event, &mut pieces);
            if !pieces.is_empty() {
                self.print(pieces);
            }
            return;
        }
        let mut pieces = Vec::new();
        self.presenter.lock().present(event, &mut pieces);
        self.print(pieces);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_load_rate_waits_for_time_to_pass() {
        assert_eq!(load_rate(250_000, 0.0001), None);
        assert_eq!(load_rate(250_000, 0.49), None);
        assert_eq!(load_rate(250_000, 2.0), Some(125_000.0));
    }
}
