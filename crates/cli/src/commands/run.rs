//! `run`: asks the run layer for a run, prints its lines and report,
//! writes the result where asked, and says how the run ended.

use super::Ctx;
use crate::CliError;
use crate::progress::Printer;
use dbmeter_report::present::{self, JsonLines, Presenter, Stream, TextOptions};
use dbmeter_report::{csv, text};
use dbmeter_result::{Layout, RunDocument};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use tempfile::NamedTempFile;

/// `--output`: a new file in the same directory, renamed over the path
/// once the document is written.
pub(crate) struct Output {
    file: NamedTempFile,
    path: PathBuf,
    /// The option that named it, for the error lines.
    option: &'static str,
}

impl Output {
    pub(crate) fn beside(path: &Path, option: &'static str) -> Result<Output, CliError> {
        let fail = |e: std::io::Error| {
            CliError::Failed(format!("cannot write --{option} {}: {e}", path.display()))
        };
        if path.is_dir() {
            return Err(CliError::Failed(format!(
                "cannot write --{option} {}: it is a directory",
                path.display()
            )));
        }
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let name = path
            .file_name()
            .map_or("output".into(), |n| n.to_string_lossy());
        let file = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".part")
            .tempfile_in(dir)
            .map_err(fail)?;
        Ok(Output {
            file,
            path: path.to_path_buf(),
            option,
        })
    }

    /// Writes `bytes` and puts the file in place, with the mode of the
    /// file it replaces (or rw-r--r--).
    pub(crate) fn write(mut self, bytes: &[u8]) -> Result<(), CliError> {
        let path = self.path.clone();
        let option = self.option;
        let fail = |e: std::io::Error| {
            CliError::Failed(format!("cannot write --{option} {}: {e}", path.display()))
        };
        self.file.write_all(bytes).map_err(fail)?;
        self.file.flush().map_err(fail)?;
        let mode = std::fs::metadata(&self.path).map_or(0o644, |m| m.permissions().mode());
        self.file
            .as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode))
            .map_err(fail)?;
        self.file.persist(&self.path).map_err(|e| fail(e.error))?;
        Ok(())
    }
}

/// The text report of a run: the common sections and the benchmark's own.
pub(crate) fn text_report(doc: &RunDocument) -> String {
    let section = dbmeter_benchmarks::registry::report_text(doc);
    text::final_report(doc, section.as_deref())
}

/// The exit code of a completed run that missed one of its `--assert`
/// targets.
pub const TARGETS_MISSED: i32 = 3;

pub fn run(ctx: &Ctx) -> Result<i32, CliError> {
    let prometheus = dbmeter_run::settings::prometheus(&ctx.request.options)?;
    let metrics = crate::metrics::open(prometheus.as_ref())?;
    let r = run_fed(ctx, metrics.clone());
    crate::metrics::close(metrics, prometheus.as_ref());
    r
}

/// [`run`], its events also fed to the metrics endpoint if there is one.
fn run_fed(
    ctx: &Ctx,
    metrics: Option<std::sync::Arc<dbmeter_metrics::Exporter>>,
) -> Result<i32, CliError> {
    let o = &ctx.request.options;
    let format = o.str("format").to_ascii_lowercase();
    let output_path = o.str("output").to_string();
    // The text goes to stdout unless stdout carries the document.
    let to_stdout = format == "text" || !output_path.is_empty();
    // Check the output path before spending time on a run: the document
    // goes to a new file beside it, renamed over it at the end, so that a
    // run that fails to start leaves an older result as it was.
    let mut output = if output_path.is_empty() {
        None
    } else {
        Some(Output::beside(Path::new(&output_path), "output")?)
    };
    let junit_path = o.str("junit").to_string();
    let mut junit = if junit_path.is_empty() {
        None
    } else {
        Some(Output::beside(Path::new(&junit_path), "junit")?)
    };
    let json_lines = format == "jsonl";
    let presenter: Box<dyn Presenter> = if json_lines && !to_stdout {
        Box::new(JsonLines)
    } else {
        present::for_layout(
            ctx.layout,
            TextOptions {
                lines: if to_stdout { Stream::Out } else { Stream::Err },
                histogram: o.bool("histogram"),
            },
        )
    };
    let mut printer = Printer::for_run(presenter, ctx.layout == Layout::Dbmeter).feeding(metrics);
    if json_lines && output.is_some() {
        printer = printer.recording_json_lines();
    }
    let stop = crate::signals::stop_handle();
    let capacity = o.str("find-capacity").to_ascii_lowercase();
    if (capacity == "rate" || capacity == "users") && o.given("shard") {
        return Err(CliError::Usage(
            "--shard splits one run; a capacity search (--find-capacity) runs in one process"
                .into(),
        ));
    }
    let outcome = if capacity == "rate" || capacity == "users" {
        dbmeter_run::find_capacity(&ctx.request, &capacity, &printer, &stop)?
    } else {
        if !ctx.request.slos.is_empty() {
            return Err(CliError::Usage(
                "--slo sets the targets of a capacity search: add --find-capacity (or use --assert for one run)".into(),
            ));
        }
        dbmeter_run::run(&ctx.request, &printer, &stop)?
    };
    let recorded = printer.finish();
    let doc = &outcome.document;
    let percentiles: Vec<f64> = doc
        .latency_ms
        .percentiles
        .iter()
        .map(|p| p.percentile)
        .collect();
    let document = match format.as_str() {
        "json" => Some(doc.to_json() + "\n"),
        "csv" => Some(csv::intervals(doc, &percentiles)),
        "jsonl" => recorded,
        _ => Some(text::final_report(doc, outcome.section.as_deref())),
    };
    match (output.take(), document) {
        (Some(f), Some(d)) => f.write(d.as_bytes())?,
        (None, Some(d)) if !to_stdout && !json_lines => print!("{d}"),
        _ => {}
    }
    let _ = std::io::stdout().flush();
    if let Some(f) = junit.take() {
        f.write(dbmeter_report::junit::junit(doc).as_bytes())?;
    }
    let missed: Vec<_> = doc.verdicts.iter().filter(|v| !v.passed()).collect();
    if !missed.is_empty() && !to_stdout {
        // The targets' lines are in the text report; say it where the
        // document took stdout.
        for v in &missed {
            eprintln!("dbmeter: target {}", v.line());
        }
    }
    let stored = match &outcome.stored {
        Some(Ok(s)) => {
            eprintln!("stored as run #{} in {}", s.id, s.location);
            true
        }
        Some(Err(e)) => {
            eprintln!("dbmeter: {e}");
            false
        }
        None => true,
    };
    match doc.end.reason.as_str() {
        // sysbench prints no report after a failure.
        "failed" if matches!(ctx.layout, Layout::Sysbench { .. }) => Err(CliError::Failed(
            doc.end
                .error
                .as_deref()
                .unwrap_or("the run failed")
                .to_string(),
        )),
        "failed" => Err(CliError::Failed(format!(
            "{} (the run stopped; the report above covers what was measured before)",
            doc.end.error.as_deref().unwrap_or("the run failed")
        ))),
        "interrupted" => {
            eprintln!(
                "dbmeter: interrupted: the report covers the {:.1} s measured before the stop",
                doc.totals.duration_s
            );
            Ok(crate::signals::interrupted_code())
        }
        _ if !stored => Ok(1),
        _ if !missed.is_empty() => {
            eprintln!(
                "dbmeter: {} of {} targets not met (exit code {TARGETS_MISSED})",
                missed.len(),
                doc.verdicts.len()
            );
            Ok(TARGETS_MISSED)
        }
        _ => Ok(0),
    }
}

/// A benchmark command besides `run` (prepare, prewarm, check, cleanup,
/// or the benchmark's own).
pub fn verb(verb: &str, ctx: &Ctx) -> Result<i32, CliError> {
    let printer = match ctx.layout {
        Layout::Sysbench { .. } => Printer::for_load_in(ctx.layout),
        _ => Printer::for_load(),
    };
    let r = dbmeter_run::command(verb, &ctx.request, &printer);
    let _ = printer.finish();
    r?;
    Ok(0)
}
