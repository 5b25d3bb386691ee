//! `fileio`: sysbench 1.0.20's file I/O test. `prepare` makes the files
//! `test_file.0` ... `test_file.N-1` (in `--file-dir`, the current
//! directory by default), a run makes one I/O request of a block per
//! event in sysbench's order (sequential modes walk the files, random
//! ones pick a block; `rndrw` mixes them by `--file-rw-ratio`; fsyncs by
//! `--file-fsync-freq`, after every write or at the end), and `cleanup`
//! removes the files.
//!
//! - [`config`]: the options, read once into [`config::FileioConfig`];
//! - [`files`]: prepare, cleanup, opening and checking the files, the
//!   checks before them (free space, O_DIRECT);
//! - [`io`]: buffers, pread/pwrite, mmap, fsync, validation blocks;
//! - [`uring`]: the async mode on io_uring, `--file-queue-depth` deep;
//! - [`plan`]: the request generator, the users and the run plan.

pub mod config;
pub mod files;
pub mod io;
pub mod plan;
pub mod uring;

use crate::benchmark::{BenchError, Benchmark, Context, RunPlan, Verb, no_such_verb, verb};
use crate::options::{OptSpec, OptValues};
use config::{FileioConfig, For};
use dbmeter_result::{Layout, RunDocument};
use std::fmt::Write as _;

pub struct Fileio;

const MIB: f64 = 1024.0 * 1024.0;

impl Fileio {
    fn config(ctx: &Context, cmd: For) -> Result<FileioConfig, BenchError> {
        let sysbench = matches!(ctx.layout, Layout::Sysbench { .. });
        FileioConfig::from_options(ctx.options, cmd, sysbench)
    }
}

/// sysbench's "File operations" and "Throughput" sections of a run.
pub fn operations_text(doc: &RunDocument) -> String {
    let secs = doc.totals.duration_s;
    let per_s = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
    let mut s = String::new();
    let _ = writeln!(s, "File operations:");
    let _ = writeln!(
        s,
        "    reads/s:                      {:.2}",
        per_s(doc.count("reads"))
    );
    let _ = writeln!(
        s,
        "    writes/s:                     {:.2}",
        per_s(doc.count("writes"))
    );
    let _ = writeln!(
        s,
        "    fsyncs/s:                     {:.2}",
        per_s(doc.count("fsyncs"))
    );
    let _ = writeln!(s);
    let _ = writeln!(s, "Throughput:");
    let _ = writeln!(
        s,
        "    read, MiB/s:                  {:.2}",
        per_s(doc.count("bytes_read")) / MIB
    );
    let _ = writeln!(
        s,
        "    written, MiB/s:               {:.2}",
        per_s(doc.count("bytes_written")) / MIB
    );
    s
}

impl Benchmark for Fileio {
    fn name(&self) -> &str {
        "fileio"
    }

    fn summary(&self) -> &str {
        "sysbench's file I/O test: block reads, writes and fsyncs on a set of files (sync, io_uring or mmap; O_DIRECT)"
    }

    fn options(&self) -> Vec<OptSpec> {
        config::options()
    }

    /// sysbench lists `--validate` among its general options, not the test's.
    fn sysbench_options(&self) -> Vec<OptSpec> {
        config::options()
            .into_iter()
            .filter(|o| o.name != "validate")
            .collect()
    }

    fn check_options(&self, options: &OptValues) -> Result<(), BenchError> {
        FileioConfig::from_options(options, For::Command, false).map(|_| ())
    }

    fn verbs(&self) -> Vec<Verb> {
        vec![
            verb(
                "prepare",
                "create the test files test_file.0 ... in --file-dir (the current directory)",
            ),
            verb("cleanup", "remove the test files"),
        ]
    }

    fn needs_database(&self) -> bool {
        false
    }

    fn dataset(&self) -> Option<String> {
        Some("fileio".into())
    }

    fn writes(&self) -> bool {
        // Writes change nothing a read depends on, but `seqwr` makes the
        // files anew and may leave them short: a campaign prepares again.
        true
    }

    fn command(&self, verb: &str, ctx: &Context) -> Result<(), BenchError> {
        match verb {
            "prepare" => {
                let cfg = Self::config(ctx, For::Command)?;
                files::prepare(&cfg, ctx.seed, &|l: &str| ctx.say(l))
            }
            "cleanup" => {
                let cfg = Self::config(ctx, For::Command)?;
                files::cleanup(&cfg, &|l: &str| ctx.say(l))
            }
            _ => Err(no_such_verb(self, verb)),
        }
    }

    fn known_kinds(&self, _options: &OptValues) -> Option<Vec<String>> {
        Some(plan::KINDS.iter().map(|k| k.to_string()).collect())
    }

    fn plan(&self, ctx: &Context) -> Result<Box<dyn RunPlan>, BenchError> {
        Ok(Box::new(plan::plan(ctx)?))
    }

    fn sysbench_lead(&self, doc: &RunDocument) -> Option<String> {
        Some(format!("\n{}", operations_text(doc)))
    }

    /// The latency of each operation (the counts and rates are the
    /// report's counters).
    fn report_text(&self, doc: &RunDocument) -> Option<String> {
        let mut s = String::new();
        let kinds: Vec<_> = doc.kinds.iter().filter(|k| k.events > 0).collect();
        if !kinds.is_empty() {
            let _ = writeln!(s, "\nLatency by operation (ms):");
            for k in kinds {
                let l = &k.latency_ms;
                let mut line = format!(
                    "    {:<6} {:>9} events  min {:.3}  avg {:.3}",
                    k.name, k.events, l.min_ms, l.avg_ms
                );
                for p in &l.percentiles {
                    let _ = write!(line, "  {}th {:.3}", p.percentile, p.ms);
                }
                let _ = write!(line, "  max {:.3}", l.max_ms);
                let _ = writeln!(s, "{line}");
            }
        }
        (!s.is_empty()).then_some(s)
    }

    fn headline(&self, doc: &RunDocument) -> Vec<(String, f64)> {
        let secs = doc.totals.duration_s;
        if secs <= 0.0 {
            return Vec::new();
        }
        let iops = (doc.count("reads") + doc.count("writes")) as f64 / secs;
        let mib = (doc.count("bytes_read") + doc.count("bytes_written")) as f64 / MIB / secs;
        vec![("IOPS".into(), iops), ("MiB/s".into(), mib)]
    }
}
