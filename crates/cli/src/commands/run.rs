//! `run`: asks the run layer for a run, prints its lines and report,
//! writes the result where asked, and says how the run ended.

use super::Ctx;
use crate::CliError;
use crate::progress::Printer;
use dbmeter_report::{csv, text};
use dbmeter_result::RunDocument;
use std::fs::File;
use std::io::Write;

/// The text report of a run: the common sections and the benchmark's own.
pub(crate) fn text_report(doc: &RunDocument) -> String {
    let section =
        dbmeter_benchmarks::registry::find(&doc.workload).and_then(|b| b.report_text(doc));
    text::final_report(doc, section.as_deref())
}

pub fn run(ctx: &Ctx) -> Result<i32, CliError> {
    let o = &ctx.request.options;
    let format = o.str("format").to_ascii_lowercase();
    let output_path = o.str("output").to_string();
    let to_stdout = format == "text" || !output_path.is_empty();
    // Check the output path before spending time on a run.
    let mut output =
        if output_path.is_empty() {
            None
        } else {
            Some(File::create(&output_path).map_err(|e| {
                CliError::Failed(format!("cannot write --output {output_path}: {e}"))
            })?)
        };
    let printer = Printer::new(to_stdout);
    let stop = crate::signals::stop_handle();
    let outcome = dbmeter_run::run(&ctx.request, &printer, &stop)?;
    printer.finish();
    let doc = &outcome.document;
    let percentiles: Vec<f64> = doc
        .latency_ms
        .percentiles
        .iter()
        .map(|p| p.percentile)
        .collect();
    let report = text_report(doc);
    if to_stdout {
        println!();
        print!("{report}");
        if o.bool("histogram")
            && let Some(h) = doc.histogram()
        {
            println!();
            print!("{}", text::histogram(&h));
        }
    }
    let document = match format.as_str() {
        "json" => doc.to_json() + "\n",
        "csv" => csv::intervals(doc, &percentiles),
        _ => report,
    };
    match output.as_mut() {
        Some(f) => f
            .write_all(document.as_bytes())
            .and_then(|_| f.flush())
            .map_err(|e| CliError::Failed(format!("cannot write --output {output_path}: {e}")))?,
        None if !to_stdout => print!("{document}"),
        None => {}
    }
    let _ = std::io::stdout().flush();
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
        _ => Ok(0),
    }
}

/// A benchmark command besides `run` (prepare, prewarm, check, cleanup,
/// or the benchmark's own).
pub fn verb(verb: &str, ctx: &Ctx) -> Result<i32, CliError> {
    let printer = Printer::for_load();
    let r = dbmeter_run::command(verb, &ctx.request, &printer);
    printer.finish();
    r?;
    Ok(0)
}
