//! `dbmeter merge`: the results of a run's shards (`--shard=I/N`) made
//! into one run document (`dbmeter_result::shards::merge`), printed as
//! `run` prints its own, and kept in the store on request.

use super::results::{filter_of, open_existing, parse_args, parse_tags};
use super::run::{Output, text_report};
use crate::CliError;
use crate::help::{Example, Page, flag, opt};
use dbmeter_benchmarks::registry::merge_shards;
use dbmeter_report::csv;
use dbmeter_result::RunDocument;
use dbmeter_result::shards::MergeError;
use dbmeter_store::{RunMeta, Store};
use std::io::Write as _;
use std::path::Path;

pub const PAGE: Page = Page {
    usage: &["merge RESULT... [--option=value ...]"],
    about: &[
        "Merges the results of a run's shards (`dbmeter run ... --shard=I/N`, each \
         written with --format=json --output=FILE or kept with --store) into one run: \
         counts summed, every latency percentile from the shards' HDR histograms \
         merged (not averaged), intervals aligned by wall-clock time, named kinds and \
         figures merged; tpch's streams and replay's sessions are put together as one \
         process records them. It prints the report `run` prints, or the document.",
        "A RESULT is a JSON file, or store selectors (`run:12,13,14`, \
         `tag:job=k8s-7`) whose runs are the shards. A missing shard, shards whose \
         measurements started more than 1 s apart, and parts that do not merge are \
         said on stderr and in the document (`merged.notes`). Shards that ran \
         different options (other than --shard, --start-at, --output and --format) \
         are refused unless --force. docs/shards.md says more.",
    ],
    options: &[
        opt(
            "format",
            "text|json|csv",
            "the merged run as the text report, the JSON run document, or the CSV interval series",
        )
        .default("text"),
        opt(
            "output",
            "FILE",
            "write it to FILE; the console still shows the text report",
        ),
        flag(
            "force",
            "merge shards that ran different options (the document lists them)",
        ),
        opt(
            "store",
            "PATH|URL",
            "keep the merged run in the results store (and read selectors from it)",
        )
        .default("$DBMETER_STORE, else $DBMETER_HOME/results.db")
        .bare(),
        opt(
            "tag",
            "KEY=VALUE",
            "label the stored merged run; repeat for more; implies --store",
        ),
    ],
    sections: &[super::results::SELECTORS],
    examples: &[
        Example {
            what: "Four shards' files into one report",
            command: "merge shard-0.json shard-1.json shard-2.json shard-3.json",
        },
        Example {
            what: "Shards stored with a tag, merged and stored as one run",
            command: "merge tag:job=nightly-16 --store --tag=job=nightly-16-merged",
        },
    ],
    exit: "0 merged, 1 failed (a file does not read, the results are not shards of one run, \
           different options without --force, the store failed), 2 usage error.",
    ..Page::new("merge", "one run from the results of its shards")
};

pub fn main(args: &[String]) -> Result<i32, CliError> {
    if args
        .iter()
        .any(|a| a == "--help" || a == "-h" || a == "help")
    {
        return crate::help::print_page(&PAGE);
    }
    let a = parse_args(args, &PAGE, None)?;
    let format = a.format(&["text", "json", "csv"], "merge")?;
    if a.words.is_empty() {
        return Err(CliError::Usage(
            "merge: which results? `dbmeter merge shard-0.json shard-1.json ...` (files, or store selectors)".into(),
        ));
    }
    let tags = parse_tags(a.all("tag"))?;
    let keep = a.get("store").is_some() || !tags.is_empty();
    let output = a
        .get("output")
        .filter(|p| !p.is_empty())
        .map(|p| Output::beside(Path::new(p), "output"))
        .transpose()?;
    // Files are the words that name one; the others are selectors.
    let (files, selectors): (Vec<&String>, Vec<&String>) = a
        .words
        .iter()
        .partition(|w| Path::new(w.as_str()).is_file());
    let mut input: Vec<(String, RunDocument)> = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(f)
            .map_err(|e| CliError::Failed(format!("cannot read {f}: {e}")))?;
        let doc =
            RunDocument::from_json(&text).map_err(|e| CliError::Failed(format!("{f}: {e}")))?;
        input.push((f.clone(), doc));
    }
    if !selectors.is_empty() {
        let filter = filter_of(&selectors)?;
        let mut store = open_existing(a.get("store"))?;
        let runs = store
            .documents(&filter)
            .map_err(|e| CliError::Failed(e.0))?;
        if runs.is_empty() {
            let words: Vec<&str> = selectors.iter().map(|s| s.as_str()).collect();
            return Err(CliError::Failed(format!(
                "no stored run matches {} in '{}' (a word that is not a file is a selector; `dbmeter results list` shows the runs)",
                words.join(" "),
                store.location()
            )));
        }
        for r in runs {
            let src = format!("run #{}", r.summary.id);
            let doc = RunDocument::from_json(&r.document)
                .map_err(|e| CliError::Failed(format!("{src}: {e}")))?;
            input.push((src, doc));
        }
    }
    // With the benchmark's own section, when its shards' sections add up
    // to one process's (tpch's streams, replay's sessions).
    let doc = merge_shards(input).map_err(|MergeError::Invalid(m)| CliError::Failed(m))?;
    let info = doc.merged.clone().unwrap_or_default();
    if !info.differing_options.is_empty() && !a.flag("force") {
        return Err(CliError::Failed(format!(
            "the shards ran different options ({}): they are not one run; --force merges them anyway",
            info.differing_options.join("; ")
        )));
    }
    for n in &info.notes {
        eprintln!("dbmeter: merge: {n}");
    }
    eprintln!(
        "dbmeter: merged {} of {} shards; their measurements started within {:.1} ms{}",
        info.shards.len(),
        info.count,
        info.start_spread_ms,
        if info.left_out.is_empty() {
            String::new()
        } else {
            format!("; left out: {}", info.left_out.join(", "))
        }
    );
    let percentiles: Vec<f64> = doc
        .latency_ms
        .percentiles
        .iter()
        .map(|p| p.percentile)
        .collect();
    let text = text_report(&doc);
    let rendered = match format.as_str() {
        "json" => doc.to_json() + "\n",
        "csv" => csv::intervals(&doc, &percentiles),
        _ => text.clone(),
    };
    match output {
        Some(f) => {
            f.write(rendered.as_bytes())?;
            print!("{text}");
        }
        None => print!("{rendered}"),
    }
    let _ = std::io::stdout().flush();
    if keep {
        let spec = super::results::store_spec(a.get("store"))?;
        let mut store = Store::open(&spec).map_err(|e| CliError::Failed(e.0))?;
        let meta = RunMeta {
            tags,
            ..RunMeta::default()
        };
        let id = store
            .save(&doc.to_json(), &meta)
            .map_err(|e| CliError::Failed(format!("the merged run was not stored: {}", e.0)))?;
        eprintln!("stored as run #{id} in {}", store.location());
    }
    Ok(0)
}
