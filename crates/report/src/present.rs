//! Presenters: a run's events (`dbmeter_result::events`) turned into what
//! the user reads. One presenter per layout: dbmeter's text, sysbench's,
//! pgbench's, and JSON lines. A presenter only renders; where the pieces
//! go (a terminal, a file, a pipe) is its caller's.

use crate::text;
use dbmeter_result::{Interval, Layout, RunDocument, RunEvent, RunHeader};
use std::fmt::Write as _;

/// The stream a piece of output belongs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    /// Standard output: the report, or lines when it carries no document.
    Out,
    /// Standard error: warnings, and lines when stdout carries a document.
    Err,
}

/// One piece of output: a line (or several), printed with a line break.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Piece {
    pub stream: Stream,
    pub text: String,
}

/// Turns events into output.
pub trait Presenter: Send {
    /// Appends what `event` prints to `out`, in order.
    fn present(&mut self, event: &RunEvent, out: &mut Vec<Piece>);
}

/// What a text presenter is asked for besides its layout.
#[derive(Clone, Copy, Debug)]
pub struct TextOptions {
    /// Where lines and the report go: stdout, or stderr when stdout carries
    /// a JSON or CSV document (then the final report is not printed).
    pub lines: Stream,
    /// `--histogram`: the latency histogram with the report.
    pub histogram: bool,
}

/// The presenter for `layout` (JSON lines are [`JsonLines`]).
pub fn for_layout(layout: Layout, options: TextOptions) -> Box<dyn Presenter> {
    match layout {
        Layout::Dbmeter => Box::new(Text {
            options,
            header: RunHeader::default(),
        }),
        Layout::Sysbench {
            percentile_off,
            verbosity,
        } => Box::new(Sysbench {
            options,
            percentile_off,
            verbosity,
            header: RunHeader::default(),
            since_checkpoint: Vec::new(),
            next_checkpoint: 0,
            last_checkpoint_s: 0.0,
        }),
        Layout::Pgbench { progress_timestamp } => Box::new(Pgbench {
            progress_timestamp,
            header: RunHeader::default(),
            warnings: Vec::new(),
        }),
        Layout::Slap {
            dbmeter,
            silent,
            csv,
            verbose,
        } => Box::new(Slap {
            dbmeter,
            silent,
            csv,
            verbose,
            block: crate::slap::Block::default(),
            warned: Vec::new(),
        }),
    }
}

/// mysqlslap's layout: a sweep's runs print nothing as they go; when the
/// last iteration of an engine's concurrency level finishes, its
/// `Benchmark` block (on stdout; with `dbmeter`, dbmeter's latency line in
/// it) and, with `csv`, its CSV line. dbmeter's warnings go to stderr once
/// each (not once per run of the sweep): in dbmeter's layout, and in
/// mysqlslap's (which has none) from `--verbose` on; with `--verbose`
/// twice or more, the set-up notes too.
struct Slap {
    dbmeter: bool,
    silent: bool,
    csv: bool,
    verbose: u8,
    block: crate::slap::Block,
    /// The warnings said so far.
    warned: Vec<String>,
}

impl Slap {
    fn flush(&mut self, out: &mut Vec<Piece>) {
        let block = std::mem::take(&mut self.block);
        if block.runs.is_empty() {
            return;
        }
        if !self.silent {
            out.push(Piece {
                stream: Stream::Out,
                text: block.text(self.dbmeter),
            });
        }
        if self.csv {
            out.push(Piece {
                stream: Stream::Out,
                text: block.csv(),
            });
        }
    }
}

impl Presenter for Slap {
    fn present(&mut self, event: &RunEvent, out: &mut Vec<Piece>) {
        match event {
            RunEvent::Note(t) if self.verbose >= 2 => out.push(Piece {
                stream: Stream::Out,
                text: (*t).to_string(),
            }),
            RunEvent::Warning(m)
                if (self.dbmeter || self.verbose >= 1) && !self.warned.iter().any(|w| w == m) =>
            {
                self.warned.push((*m).to_string());
                warning(out, m);
            }
            RunEvent::Finished { doc, .. } => {
                if self.block.other(doc) {
                    self.flush(out);
                }
                if self.block.add(doc) {
                    self.flush(out);
                }
            }
            _ => {}
        }
    }
}

/// dbmeter's text.
struct Text {
    options: TextOptions,
    /// The run's header, once started (what interval lines depend on).
    header: RunHeader,
}

impl Text {
    fn line(&self, out: &mut Vec<Piece>, text: impl Into<String>) {
        out.push(Piece {
            stream: self.options.lines,
            text: text.into(),
        });
    }

    fn report(&self, doc: &RunDocument, section: Option<&str>) -> String {
        let report = text::final_report(doc, section);
        let histogram = self
            .options
            .histogram
            .then(|| doc.histogram())
            .flatten()
            .map(|h| text::histogram(&h));
        match histogram {
            None => format!("\n{report}"),
            Some(h) => format!("\n{report}\n{h}"),
        }
    }
}

/// Warnings go to stderr (pgbench's layout keeps them for after its report).
fn warning(out: &mut Vec<Piece>, message: &str) {
    out.push(Piece {
        stream: Stream::Err,
        text: format!("WARNING: {message}"),
    });
}

/// Text that a plan gave for an event ("" prints nothing).
fn words(out: &mut Vec<Piece>, stream: Stream, w: &str) {
    if !w.is_empty() {
        out.push(Piece {
            stream,
            text: w.to_string(),
        });
    }
}

impl Presenter for Text {
    fn present(&mut self, event: &RunEvent, out: &mut Vec<Piece>) {
        match event {
            RunEvent::Note(t) => self.line(out, *t),
            RunEvent::Warning(m) => warning(out, m),
            RunEvent::Started(h) => {
                for l in text::header(h) {
                    self.line(out, l);
                }
                self.header = (*h).clone();
            }
            RunEvent::Interval { words: Some(w), .. }
            | RunEvent::MeasurementEnded { words: Some(w) } => {
                words(out, self.options.lines, w);
            }
            RunEvent::Interval {
                interval,
                percentile,
                words: None,
            } => {
                let line = text::interval_line(interval, &self.header, *percentile);
                self.line(out, line);
            }
            RunEvent::Finished { doc, section, .. } => {
                if self.options.lines == Stream::Out {
                    out.push(Piece {
                        stream: Stream::Out,
                        text: self
                            .report(doc, *section)
                            .trim_end_matches('\n')
                            .to_string(),
                    });
                }
            }
            RunEvent::Measuring | RunEvent::Live(_) | RunEvent::MeasurementEnded { .. } => {}
        }
    }
}

/// sysbench 1.0.20's layout, line for line: its run header ("Running the
/// test with following options:" ... "Initializing worker threads..."),
/// "Threads started!" when the users are let go, its interval lines, the
/// histogram and its report; all on stdout (as sysbench's log), at its
/// `--verbosity` levels. dbmeter's additions (its own report lines, the
/// environment) come after sysbench's last line, and its warnings on
/// stderr, from `--verbosity=4` on.
struct Sysbench {
    options: TextOptions,
    percentile_off: bool,
    verbosity: u8,
    /// The run's header, once started (what interval lines depend on).
    header: RunHeader,
    /// With `--report-checkpoints`: the intervals since the last
    /// checkpoint report, the next checkpoint, and the time of the last.
    since_checkpoint: Vec<Interval>,
    next_checkpoint: usize,
    last_checkpoint_s: f64,
}

/// sysbench's log levels (`--verbosity`).
const NOTICE: u8 = 3;
const INFO: u8 = 4;

impl Sysbench {
    fn line(&self, out: &mut Vec<Piece>, text: impl Into<String>) {
        if self.verbosity >= NOTICE {
            out.push(Piece {
                stream: self.options.lines,
                text: text.into(),
            });
        }
    }

    fn run_header(h: &RunHeader) -> String {
        let mut lines = vec![
            "Running the test with following options:".to_string(),
            format!("Number of threads: {}", h.threads),
        ];
        if let Some(r) = h.rate {
            lines.push(format!("Target transaction rate: {r:.0}/sec"));
        }
        if let Some(every) = h.report_interval_s {
            lines.push(format!(
                "Report intermediate results every {every} second(s)"
            ));
        }
        if !h.checkpoints_s.is_empty() {
            let at: Vec<String> = h.checkpoints_s.iter().map(|t| t.to_string()).collect();
            lines.push(format!("Report checkpoint(s) at {} seconds", at.join(", ")));
        }
        if h.seed_given {
            lines.push(format!(
                "Initializing random number generator from seed ({}).\n",
                h.seed
            ));
        } else {
            lines.push("Initializing random number generator from current time\n".into());
        }
        // Then what the test says of its settings (sysbench's machine
        // tests), and the worker threads.
        let mut text = lines.join("\n");
        text.push_str("\n\n");
        text.push_str(h.preamble.as_deref().unwrap_or_default());
        text.push_str("Initializing worker threads...\n");
        text
    }
}

impl Sysbench {
    /// A report of `intervals` (a part of the run), as a document the
    /// report can be written from: their counts, their merged latency
    /// histogram; the threads' fairness as averages (dbmeter keeps no
    /// per-thread figures per interval: the deviations read 0).
    fn part(&self, intervals: &[Interval]) -> RunDocument {
        let h = &self.header;
        let mut doc = RunDocument {
            measures: h.measures.clone(),
            ..RunDocument::default()
        };
        let mut latency = dbmeter_stats::LatencyHistogram::new();
        let t = &mut doc.totals;
        let (mut errors, mut reconnects) = (0.0, 0.0);
        for i in intervals {
            t.duration_s += i.duration_s;
            t.events += i.events;
            for (name, n) in &i.counts {
                *t.counts.entry(name.clone()).or_default() += n;
            }
            errors += i.errors_per_s * i.duration_s;
            reconnects += i.reconnects_per_s * i.duration_s;
            if let Some(hist) = i.histogram() {
                latency.merge(&hist);
            }
        }
        t.ignored_errors = errors.round() as u64;
        t.reconnects = reconnects.round() as u64;
        t.queries = ["reads", "writes", "others"]
            .iter()
            .map(|m| t.counts.get(*m).copied().unwrap_or(0))
            .sum();
        doc.latency_ms =
            dbmeter_stats::LatencySummary::from_histogram(&latency, &[h.line_percentile]);
        let threads = h.threads.max(1) as f64;
        doc.fairness.events_avg = doc.totals.events as f64 / threads;
        doc.fairness.time_avg_s = doc.latency_ms.sum_ms / 1e3 / threads;
        doc
    }

    /// The checkpoint reports due at the end of `i`.
    fn checkpoint(&mut self, i: &Interval, out: &mut Vec<Piece>) {
        let at = &self.header.checkpoints_s;
        if at.is_empty() {
            return;
        }
        self.since_checkpoint.push(i.clone());
        let mut due = false;
        while self
            .header
            .checkpoints_s
            .get(self.next_checkpoint)
            .is_some_and(|t| i.t_s + 0.005 >= *t)
        {
            self.next_checkpoint += 1;
            due = true;
        }
        if !due {
            return;
        }
        let part = self.part(&self.since_checkpoint);
        let report = text::sysbench_report_at(&part, !self.percentile_off, i.t_s);
        self.line(
            out,
            format!(
                "[ {} ] Checkpoint report:\n{}",
                i.time_label(),
                report.strip_suffix('\n').unwrap_or(&report)
            ),
        );
        self.since_checkpoint.clear();
        self.last_checkpoint_s = i.t_s;
    }
}

impl Presenter for Sysbench {
    fn present(&mut self, event: &RunEvent, out: &mut Vec<Piece>) {
        if let RunEvent::Interval { interval, .. } = event {
            self.checkpoint(interval, out);
        }
        if let RunEvent::Live(l) = event {
            self.checkpoint(&l.interval, out);
        }
        match event {
            RunEvent::Note(t) => self.line(out, *t),
            // dbmeter's warnings (set-ups that distort a run) are its
            // additions: on stderr from --verbosity=4 on (and in the
            // environment summary there).
            RunEvent::Warning(m) => {
                if self.verbosity >= INFO {
                    warning(out, m);
                }
            }
            RunEvent::Started(h) => {
                self.line(out, Self::run_header(h));
                self.header = (*h).clone();
            }
            RunEvent::Measuring => self.line(out, "Threads started!\n"),
            RunEvent::Interval { words: Some(w), .. }
            | RunEvent::MeasurementEnded { words: Some(w) } => {
                // A script's report hooks print what they print, at every
                // verbosity, as in sysbench.
                words(out, self.options.lines, w);
            }
            RunEvent::Interval {
                interval,
                percentile,
                words: None,
            } => {
                let line = text::interval_line(interval, &self.header, *percentile);
                self.line(out, line);
            }
            RunEvent::Finished { doc, section, lead } => {
                // sysbench prints no report after a failure.
                if self.options.lines != Stream::Out || doc.end.reason == "failed" {
                    return;
                }
                // A test with its own part of sysbench's report (its
                // lead) has its dbmeter section among dbmeter's
                // additions, from --verbosity=4 on.
                let (section, addition) = match lead {
                    Some(_) => (None, *section),
                    None => (*section, None),
                };
                // Below notices, only what a script's report_cumulative
                // hook printed (it prints at every verbosity).
                if self.verbosity < NOTICE {
                    if let Some(s) = section {
                        out.push(Piece {
                            stream: Stream::Out,
                            text: s.strip_suffix('\n').unwrap_or(s).to_string(),
                        });
                    }
                    return;
                }
                let mut report = String::new();
                if self.options.histogram
                    && let Some(h) = doc.histogram()
                {
                    // sysbench: the histogram, a line of one space, then
                    // the report.
                    report.push_str(&text::histogram(&h));
                    report.push_str(" \n");
                }
                // The test's own part (cpu's speed, fileio's operations).
                if let Some(l) = lead {
                    report.push_str(l);
                }
                if self.last_checkpoint_s > 0.0 {
                    // After checkpoint reports, sysbench's last report
                    // covers the time since the last one.
                    let rest: Vec<Interval> = doc
                        .intervals
                        .iter()
                        .filter(|i| i.t_s > self.last_checkpoint_s + 0.005)
                        .cloned()
                        .collect();
                    let part = self.part(&rest);
                    report.push_str(&text::sysbench_report_at(
                        &part,
                        !self.percentile_off,
                        doc.totals.duration_s,
                    ));
                } else {
                    report.push_str(&text::sysbench_report(doc, !self.percentile_off));
                }
                if let Some(s) = section {
                    report.push_str(s);
                }
                if self.verbosity >= INFO {
                    if let Some(s) = addition {
                        // After sysbench's last section and its blank line.
                        report.push_str(s.trim_start_matches('\n'));
                        report.push('\n');
                    }
                    let extras = text::sysbench_extras(doc);
                    if !extras.is_empty() {
                        report.push_str(&extras);
                        report.push('\n');
                    }
                }
                out.push(Piece {
                    stream: Stream::Out,
                    text: report.strip_suffix('\n').unwrap_or(&report).to_string(),
                });
            }
            RunEvent::Live(_) | RunEvent::MeasurementEnded { .. } => {}
        }
    }
}

/// pgbench 15's layout: its first line on stdout, its notes and progress
/// lines on stderr, its report (the pgbench benchmark's section) on
/// stdout, and dbmeter's latency percentiles after it.
struct Pgbench {
    progress_timestamp: bool,
    /// The run's header, once started (what interval lines depend on).
    header: RunHeader,
    /// dbmeter's warnings: pgbench prints none, so they follow the
    /// report's last line instead of going where a parser reads.
    warnings: Vec<String>,
}

impl Pgbench {
    fn progress_line(&self, i: &dbmeter_result::Interval) -> String {
        let h = &self.header;
        let count = |name: &str| i.counts.get(name).copied().unwrap_or(0);
        let when = if self.progress_timestamp {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default();
            format!("{:.3}", t.as_secs_f64())
        } else {
            format!("{:.1}", i.t_s)
        };
        let mut l = format!(
            "progress: {when} s, {:.1} tps, lat {:.3} ms stddev {:.3}, {} failed",
            i.events_per_s,
            i.latency_ms.avg_ms,
            i.latency_ms.stddev_ms,
            count("failed")
        );
        if h.rate.is_some() {
            let _ = write!(l, ", lag {:.3} ms", i.lag_ms.unwrap_or(0.0));
            if h.late_limit_ms.is_some() {
                let _ = write!(l, ", {} skipped", i.skipped);
            }
        }
        // The run counts retries only where there may be some.
        if h.measures.iter().any(|m| m.name == "retried") {
            let _ = write!(
                l,
                ", {} retried, {} retries",
                count("retried"),
                count("retries")
            );
        }
        l
    }
}

impl Presenter for Pgbench {
    fn present(&mut self, event: &RunEvent, out: &mut Vec<Piece>) {
        let err = |out: &mut Vec<Piece>, text: String| {
            out.push(Piece {
                stream: Stream::Err,
                text,
            })
        };
        match event {
            RunEvent::Note(t) => err(out, t.to_string()),
            RunEvent::Warning(m) => self.warnings.push(format!("WARNING (dbmeter): {m}")),
            RunEvent::Started(h) => {
                let v = &h.server_version;
                let server = v.strip_prefix("PostgreSQL ").unwrap_or(v);
                out.push(Piece {
                    stream: Stream::Out,
                    text: format!("pgbench (dbmeter {}, server {server})", h.version),
                });
                self.header = (*h).clone();
            }
            RunEvent::Interval { words: Some(w), .. }
            | RunEvent::MeasurementEnded { words: Some(w) } => words(out, Stream::Err, w),
            RunEvent::Interval { interval, .. } => {
                let line = self.progress_line(interval);
                err(out, line);
            }
            RunEvent::Finished { doc, section, .. } => {
                let mut text = section.unwrap_or_default().to_string();
                let l = &doc.latency_ms;
                text.push_str("latency percentiles (dbmeter):");
                for p in &l.percentiles {
                    let _ = write!(text, " {}% {:.3} ms,", p.percentile, p.ms);
                }
                let _ = write!(text, " max {:.3} ms", l.max_ms);
                for w in self.warnings.drain(..) {
                    let _ = write!(text, "\n{w}");
                }
                out.push(Piece {
                    stream: Stream::Out,
                    text,
                });
            }
            RunEvent::Measuring | RunEvent::Live(_) | RunEvent::MeasurementEnded { .. } => {}
        }
    }
}

/// JSON lines: every event but the live status as one JSON object on
/// stdout (`{"event": "interval", ...}`, the last one `finished` with the
/// whole document); warnings also on stderr, for the person watching.
pub struct JsonLines;

impl Presenter for JsonLines {
    fn present(&mut self, event: &RunEvent, out: &mut Vec<Piece>) {
        if matches!(event, RunEvent::Live(_)) {
            return;
        }
        if let RunEvent::Warning(m) = event {
            warning(out, m);
        }
        out.push(Piece {
            stream: Stream::Out,
            text: event.to_json().to_string(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dbmeter_result::Interval;
    use dbmeter_stats::MeasureInfo;

    fn header(measures: &[&str]) -> RunHeader {
        RunHeader {
            version: "9.9.9".into(),
            benchmark: "b".into(),
            server_version: "PostgreSQL 15.19".into(),
            threads: 2,
            seed: 7,
            line_percentile: 95.0,
            measures: measures
                .iter()
                .map(|n| MeasureInfo {
                    name: n.to_string(),
                    label: n.to_string(),
                    unit: "x".into(),
                    per_second: true,
                })
                .collect(),
            ..RunHeader::default()
        }
    }

    fn render(p: &mut dyn Presenter, events: &[RunEvent]) -> Vec<Piece> {
        let mut out = Vec::new();
        for e in events {
            p.present(e, &mut out);
        }
        out
    }

    fn interval() -> Interval {
        Interval {
            t_s: 1.0,
            duration_s: 1.0,
            threads: 2,
            events: 10,
            events_per_s: 10.0,
            counts: [("reads".to_string(), 20), ("failed".to_string(), 3)]
                .into_iter()
                .collect(),
            ..Interval::default()
        }
    }

    #[test]
    fn text_lines_follow_the_declared_measures() {
        let opts = TextOptions {
            lines: Stream::Out,
            histogram: false,
        };
        let sql = header(&["reads", "writes", "others"]);
        let i = interval();
        let ev = RunEvent::Interval {
            interval: &i,
            percentile: 95.0,
            words: None,
        };
        let out = render(
            for_layout(Layout::Dbmeter, opts).as_mut(),
            &[RunEvent::Started(&sql), ev],
        );
        let last = &out.last().unwrap().text;
        assert!(
            last.contains("tps: 10.00 qps: 20.00 (r/w/o: 20.00/0.00/0.00)"),
            "{last}"
        );
        let none = header(&[]);
        let out = render(
            for_layout(Layout::Dbmeter, opts).as_mut(),
            &[RunEvent::Started(&none), ev],
        );
        let last = &out.last().unwrap().text;
        assert!(last.starts_with("[ 1s ] thds: 2 eps: 10.00 lat"), "{last}");
        assert!(!last.contains("qps"), "{last}");
    }

    #[test]
    fn a_plans_words_replace_the_line() {
        let opts = TextOptions {
            lines: Stream::Err,
            histogram: false,
        };
        let i = interval();
        let mut p = for_layout(Layout::Dbmeter, opts);
        let out = render(
            p.as_mut(),
            &[
                RunEvent::Interval {
                    interval: &i,
                    percentile: 95.0,
                    words: Some("mine"),
                },
                RunEvent::Interval {
                    interval: &i,
                    percentile: 95.0,
                    words: Some(""),
                },
            ],
        );
        assert_eq!(
            out,
            vec![Piece {
                stream: Stream::Err,
                text: "mine".into()
            }]
        );
    }

    #[test]
    fn pgbench_progress_lines_read_the_interval_counts() {
        let mut h = header(&["reads", "writes", "others", "failed"]);
        let i = interval();
        let mut p = for_layout(
            Layout::Pgbench {
                progress_timestamp: false,
            },
            TextOptions {
                lines: Stream::Out,
                histogram: false,
            },
        );
        let out = render(
            p.as_mut(),
            &[
                RunEvent::Started(&h),
                RunEvent::Interval {
                    interval: &i,
                    percentile: 95.0,
                    words: None,
                },
            ],
        );
        assert_eq!(out[0].text, "pgbench (dbmeter 9.9.9, server 15.19)");
        assert_eq!(out[0].stream, Stream::Out);
        assert_eq!(
            out[1].text,
            "progress: 1.0 s, 10.0 tps, lat 0.000 ms stddev 0.000, 3 failed"
        );
        assert_eq!(out[1].stream, Stream::Err);
        h.rate = Some(100.0);
        h.measures.push(MeasureInfo {
            name: "retried".into(),
            ..MeasureInfo::default()
        });
        let out = render(
            p.as_mut(),
            &[
                RunEvent::Started(&h),
                RunEvent::Interval {
                    interval: &i,
                    percentile: 95.0,
                    words: None,
                },
            ],
        );
        assert!(
            out[1]
                .text
                .ends_with("3 failed, lag 0.000 ms, 0 retried, 0 retries"),
            "{}",
            out[1].text
        );
    }

    #[test]
    fn json_lines_are_one_object_per_event() {
        let h = header(&[]);
        let i = interval();
        let out = render(
            &mut JsonLines,
            &[
                RunEvent::Started(&h),
                RunEvent::Warning("w"),
                RunEvent::Interval {
                    interval: &i,
                    percentile: 95.0,
                    words: Some("ignored"),
                },
            ],
        );
        let json: Vec<serde_json::Value> = out
            .iter()
            .filter(|p| p.stream == Stream::Out)
            .map(|p| serde_json::from_str(&p.text).unwrap())
            .collect();
        assert_eq!(json[0]["event"], "started");
        assert_eq!(json[0]["header"]["threads"], 2);
        assert_eq!(json[1]["event"], "warning");
        assert_eq!(json[2]["interval"]["counts"]["failed"], 3);
        assert!(
            out.iter()
                .any(|p| p.stream == Stream::Err && p.text == "WARNING: w")
        );
    }

    /// A machine test's words in sysbench's layout: its preamble between
    /// the random generator's line and "Initializing worker threads...",
    /// its lead before "General statistics:", as sysbench's cpu test
    /// prints them (tests/t/test_cpu.t); in dbmeter's layout the preamble
    /// goes with the header.
    #[test]
    fn a_tests_preamble_and_lead_where_sysbench_prints_them() {
        let mut h = header(&[]);
        h.preamble = Some("Prime numbers limit: 1000\n\n".into());
        let doc = RunDocument::default();
        let lead = "CPU speed:\n    events per second:  1234.50\n";
        let events = [
            RunEvent::Started(&h),
            RunEvent::Measuring,
            RunEvent::Finished {
                doc: &doc,
                section: None,
                lead: Some(lead),
            },
        ];
        let mut sysbench = for_layout(
            Layout::Sysbench {
                percentile_off: false,
                verbosity: 3,
            },
            TextOptions {
                lines: Stream::Out,
                histogram: false,
            },
        );
        let text: Vec<String> = render(sysbench.as_mut(), &events)
            .into_iter()
            .map(|p| p.text)
            .collect();
        let text = text.join("\n") + "\n";
        assert!(
            text.starts_with(
                "Running the test with following options:\nNumber of threads: 2\n\
                 Initializing random number generator from current time\n\n\n\
                 Prime numbers limit: 1000\n\n\
                 Initializing worker threads...\n\nThreads started!\n\n\
                 CPU speed:\n    events per second:  1234.50\n\nGeneral statistics:\n"
            ),
            "{text}"
        );
        let mut dbmeter = for_layout(
            Layout::Dbmeter,
            TextOptions {
                lines: Stream::Out,
                histogram: false,
            },
        );
        let text: Vec<String> = render(dbmeter.as_mut(), &events[..1])
            .into_iter()
            .map(|p| p.text)
            .collect();
        let text = text.join("\n");
        assert!(
            text.contains("Random seed: 7\n\nPrime numbers limit: 1000\n\nThreads started!"),
            "{text}"
        );
    }

    /// sysbench's layout, line for line: its header, "Threads started!",
    /// its report; nothing at --verbosity=1; dbmeter's additions from 4.
    #[test]
    fn sysbench_lines_as_sysbench_prints_them() {
        let layout = |verbosity| {
            for_layout(
                Layout::Sysbench {
                    percentile_off: false,
                    verbosity,
                },
                TextOptions {
                    lines: Stream::Out,
                    histogram: false,
                },
            )
        };
        let h = header(&["reads", "writes", "others"]);
        let mut doc = RunDocument {
            measures: h.measures.clone(),
            ..RunDocument::default()
        };
        doc.totals.duration_s = 2.0;
        doc.totals.events = 10;
        doc.totals.queries = 20;
        doc.totals.counts.insert("reads".into(), 20);
        doc.latency_ms.percentiles = vec![dbmeter_stats::Percentile {
            percentile: 95.0,
            ms: 1.5,
        }];
        let events = [
            RunEvent::Started(&h),
            RunEvent::Measuring,
            RunEvent::Finished {
                doc: &doc,
                section: None,
                lead: None,
            },
        ];
        let text: Vec<String> = render(layout(3).as_mut(), &events)
            .into_iter()
            .map(|p| p.text)
            .collect();
        let text = text.join("\n") + "\n";
        assert!(
            text.starts_with(
                "Running the test with following options:\nNumber of threads: 2\n\
                 Initializing random number generator from current time\n\n\n\
                 Initializing worker threads...\n\nThreads started!\n\nSQL statistics:\n"
            ),
            "{text}"
        );
        for line in [
            "\n        read:                            20\n",
            "\n    transactions:                        10     (5.00 per sec.)\n",
            "\n    total time:                          2.0000s\n",
            "\n         min:                                    0.00\n",
            "\n         95th percentile:                        1.50\n",
            "\n    events (avg/stddev):           0.0000/0.00\n",
        ] {
            assert!(text.contains(line), "{line:?} in:\n{text}");
        }
        assert!(
            text.ends_with("execution time (avg/stddev):   0.0000/0.00\n\n"),
            "{text}"
        );
        assert!(render(layout(1).as_mut(), &events).is_empty());
        doc.environment.hostname = "h".into();
        let events = [RunEvent::Finished {
            doc: &doc,
            section: None,
            lead: None,
        }];
        let out = render(layout(4).as_mut(), &events);
        assert!(
            out[0].text.contains("\n\nEnvironment:\n"),
            "{}",
            out[0].text
        );
    }
}
