//! `dbmeter results list|show|history|export|delete` (history's own code is
//! `history.rs`), the store options of `run`
//! (`--store`, `--tag`), and what `results` and `compare` share: finding
//! the store and reading their command lines. The store itself is
//! `dbmeter_store`; the tables and CSV are `dbmeter_report::stored`.

use crate::CliError;
use crate::help::{Example, Opt, Page, Section, Sub, flag, opt};
use crate::subcommand_args::{Grammar, SubArgs};
use dbmeter_report::stored;
use dbmeter_store::{Filter, SELECTOR_FORMS, Selector, Store, StoreError};
use std::io::{IsTerminal, Write as _};

pub(crate) const STORE: Opt = opt(
    "store",
    "PATH|URL",
    "the results store: an SQLite file, or postgres://user@host:port/db for a shared one",
)
.default("$DBMETER_STORE, else $DBMETER_HOME/results.db")
.bare();

/// The selectors, as `results`, `compare` and `report` describe them.
pub(crate) const SELECTORS: Section = Section {
    title: "Selectors (several: all must hold; a bare number is a run id)",
    body: &[
        "  tag:KEY=VALUE  variant:NAME  campaign:NAME  run:ID[,ID...]\n  workload:NAME  threads:N",
    ],
};

pub const PAGE: Page = Page {
    usage: &["results COMMAND [SELECTORS...] [--option=value ...]"],
    about: &[
        "Runs saved by `dbmeter run ... --store` (and by campaigns) in the results \
              store: each with its whole JSON document (options, environment, server \
              variables and counters, OS and interval series, latency histogram), its \
              campaign, variant, cell, repeat and tags.",
    ],
    subs: &[
        Sub {
            name: "list",
            args: "[SELECTORS]",
            help: "one line per run: id, when, workload, threads, campaign, variant, \
                   repeat, end, tps, qps, p95, p99, tags; then, for a campaign with \
                   adaptive repeats, why each of its cells stopped (text only)",
            options: &[opt("format", "text|csv|json", "how to write it").default("text")],
        },
        Sub {
            name: "show",
            args: "ID",
            help: "one run: where it came from and its report",
            options: &[opt(
                "format",
                "text|json",
                "json: the run document exactly as `run` wrote it",
            )
            .default("text")],
        },
        super::history::SUB,
        Sub {
            name: "export",
            args: "[SELECTORS]",
            help: "many runs at once",
            options: &[
                opt(
                    "format",
                    "csv|json",
                    "csv: one row per run, main numbers and a tag.KEY column per tag; \
                     json: an array of the run documents, each with a \"store\" object \
                     (id, campaign, variant, cell, repeat, tags)",
                )
                .default("csv"),
                opt("output", "FILE", "write to FILE instead of standard output"),
            ],
        },
        Sub {
            name: "delete",
            args: "ID...|SELECTORS",
            help: "delete runs (with their documents and tags)",
            options: &[flag("yes", "do not ask (needed when not on a terminal)")],
        },
    ],
    options: &[STORE],
    sections: &[
        SELECTORS,
        Section {
            title: "Storing runs",
            body: &[
                "`dbmeter run WORKLOAD ... --store` keeps the run in the default store, \
                 `--store=PATH|URL` in that store; `--tag=KEY=VALUE` labels it (repeat \
                 the option for more labels; it implies --store).",
                "The run prints its report as usual, then `stored as run #N in STORE` on \
                 standard error; interrupted and failed runs are stored too (comparisons \
                 count only completed ones). `dbmeter compare` compares stored runs. \
                 DBMETER_HOME defaults to /var/lib/dbmeter for root, else \
                 ~/.local/share/dbmeter.",
            ],
        },
    ],
    examples: &[
        Example {
            what: "The runs of one campaign",
            command: "results list campaign:bp-size",
        },
        Example {
            what: "A nightly job's throughput over the last 30 days, with its change points and a chart",
            command: "results history tag:job=nightly --since=30d --html=nightly.html",
        },
        Example {
            what: "Every run tagged phase=before, as CSV for a spreadsheet",
            command: "results export tag:phase=before --output=before.csv",
        },
    ],
    exit: "0 ok, 1 failed (no such run, no store, bad selector), 2 usage error.",
    ..Page::new(
        "results",
        "stored runs: list, show, history (change points), export, delete",
    )
};

/// The store to use: `given` (a path or URL), else `$DBMETER_STORE`, else
/// `$DBMETER_HOME/results.db`.
pub(crate) fn store_spec(given: Option<&str>) -> Result<String, CliError> {
    Ok(dbmeter_run::store_spec(given)?)
}

fn failed(e: StoreError) -> CliError {
    CliError::Failed(e.0)
}

/// Opens an existing store for reading or deleting.
pub(crate) fn open_existing(given: Option<&str>) -> Result<Store, CliError> {
    Store::open_existing(&store_spec(given)?).map_err(failed)
}

/// For `compare` and `report`: the selector words with each campaign
/// file among them (a path ending in .toml) replaced by
/// `campaign:NAME`, and the store to open. That is `given` (--store);
/// else the store a campaign file names: the file given, or a campaign
/// file in the current directory whose name a `campaign:NAME` word
/// selects, as `dbmeter campaign run` stored its runs there; else the
/// default store. A campaign's store is announced on stderr with the
/// reason.
pub(crate) fn campaign_selection(
    given: Option<&str>,
    groups: &[Vec<String>],
) -> Result<(Vec<Vec<String>>, String), CliError> {
    // The store a campaign file names, and why it is the one.
    let mut named: Option<(String, String)> = None;
    let mut out = Vec::with_capacity(groups.len());
    for words in groups {
        let mut group = Vec::with_capacity(words.len());
        for w in words {
            if !w.ends_with(".toml") {
                group.push(w.clone());
                continue;
            }
            let path = std::path::Path::new(w);
            let (name, store) = dbmeter_campaign::spec::name_and_store(path).ok_or_else(|| {
                CliError::Usage(format!(
                    "{w}: not a campaign file that can be read (with a name = \"...\"); selectors are campaign:NAME, variant:NAME, tag:KEY=VALUE, ..."
                ))
            })?;
            group.push(format!("campaign:{name}"));
            if let (None, Some(s)) = (&named, store) {
                named = Some((s, format!("campaign file {w} names it")));
            }
        }
        out.push(group);
    }
    if given.is_none() && named.is_none() {
        named = out
            .iter()
            .flatten()
            .filter_map(|w| w.strip_prefix("campaign:"))
            .find_map(campaign_file_here);
    }
    if let Some(g) = given {
        return Ok((out, store_spec(Some(g))?));
    }
    match named {
        Some((store, why)) => {
            eprintln!("dbmeter: using the results store {store} ({why}; --store picks another)");
            Ok((out, store))
        }
        None => Ok((out, store_spec(None)?)),
    }
}

/// The store that a campaign file in the current directory, of campaign
/// `name`, names; with why it is the one.
fn campaign_file_here(name: &str) -> Option<(String, String)> {
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(".")
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files.into_iter().find_map(|p| {
        let (n, store) = dbmeter_campaign::spec::name_and_store(&p)?;
        let file = p.strip_prefix(".").unwrap_or(&p).display().to_string();
        (n == name).then_some(())?;
        Some((
            store?,
            format!("campaign '{name}' of {file} stores its runs there"),
        ))
    })
}

/// `--tag` values as (key, value); a usage error for other forms.
pub(crate) fn parse_tags<'a>(
    values: impl Iterator<Item = &'a str>,
) -> Result<Vec<(String, String)>, CliError> {
    values
        .map(|t| match t.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
            _ => Err(CliError::Usage(format!(
                "--tag={t}: expected KEY=VALUE, e.g. --tag=phase=before"
            ))),
        })
        .collect()
}

/// Reads the command line of `results SUB`, `compare` or `report` with
/// the options `page` lists (for `sub`, when the command has subcommands).
pub(crate) fn parse_args(
    args: &[String],
    page: &Page,
    sub: Option<&str>,
) -> Result<SubArgs, CliError> {
    let command = match sub {
        Some(s) => format!("{} {s}", page.name),
        None => page.name.to_string(),
    };
    SubArgs::parse(
        args,
        &Grammar {
            options: &page.options_of(sub),
            command: &command,
            help: &format!("`dbmeter help {}`", page.name),
        },
    )
}

/// Selector words (a bare number is a run id) as a filter.
pub(crate) fn filter_of<S: AsRef<str>>(words: &[S]) -> Result<Filter, CliError> {
    let mut selectors = Vec::new();
    let mut ids = Vec::new();
    for w in words {
        let w = w.as_ref();
        let bare = w.trim_start_matches('#');
        if !bare.is_empty() && bare.bytes().all(|b| b.is_ascii_digit()) {
            ids.push(
                bare.parse::<i64>()
                    .map_err(|_| CliError::Failed(format!("run id {w} is too large")))?,
            );
            continue;
        }
        for part in w.split_whitespace() {
            selectors.push(Selector::parse(part).map_err(failed)?);
        }
    }
    if !ids.is_empty() {
        selectors.push(Selector::Runs(ids));
    }
    Ok(Filter { selectors })
}

pub(crate) fn no_match(store: &Store, filter: &Filter) -> CliError {
    if filter.is_empty() {
        CliError::Failed(format!(
            "the results store '{}' holds no runs yet (store one with `dbmeter run ... --store`)",
            store.location()
        ))
    } else {
        CliError::Failed(format!(
            "no stored run matches {filter} in '{}' (`dbmeter results list` shows them)",
            store.location()
        ))
    }
}

pub fn main(args: &[String]) -> Result<i32, CliError> {
    let Some(sub) = args.first().map(String::as_str) else {
        return Err(CliError::Usage(
            "which results command? list, show, history, export or delete (`dbmeter help results`)"
                .into(),
        ));
    };
    let rest = &args[1..];
    match sub {
        "help" | "--help" | "-h" => crate::help::print_page(&PAGE),
        "list" => list(rest),
        "show" => show(rest),
        "history" => super::history::main(rest),
        "export" => export(rest),
        "delete" => delete(rest),
        _ => Err(CliError::Usage(format!(
            "unknown results command '{sub}': list, show, history, export or delete (`dbmeter help results`)"
        ))),
    }
}

fn list(args: &[String]) -> Result<i32, CliError> {
    let a = parse_args(args, &PAGE, Some("list"))?;
    let format = a.format(&["text", "csv", "json"], "results list")?;
    let filter = filter_of(&a.words)?;
    let mut store = open_existing(a.get("store"))?;
    let runs = store.runs(&filter).map_err(failed)?;
    if runs.is_empty() {
        return Err(no_match(&store, &filter));
    }
    let out = match format.as_str() {
        "csv" => stored::list_csv(&runs),
        "json" => {
            serde_json::to_string_pretty(&runs)
                .map_err(|e| CliError::Failed(format!("cannot write JSON: {e}")))?
                + "\n"
        }
        _ => {
            // A campaign's adaptive repeats follow its runs.
            let mut campaigns: Vec<&str> =
                runs.iter().filter_map(|r| r.campaign.as_deref()).collect();
            campaigns.sort_unstable();
            campaigns.dedup();
            let cells = store.adaptive_cells(&campaigns).map_err(failed)?;
            let mut out = stored::list_text(&runs);
            if !cells.is_empty() {
                out.push('\n');
                out.push_str(&stored::adaptive_text(&cells));
            }
            out
        }
    };
    print!("{out}");
    Ok(0)
}

fn show(args: &[String]) -> Result<i32, CliError> {
    let a = parse_args(args, &PAGE, Some("show"))?;
    let format = a.format(&["text", "json"], "results show")?;
    let id = match a.words.as_slice() {
        [one] => one.trim_start_matches('#').parse::<i64>().map_err(|_| {
            CliError::Usage(format!(
                "`dbmeter results show` takes a run id (a number), not '{one}'"
            ))
        })?,
        [] => {
            return Err(CliError::Usage(
                "which run? `dbmeter results show ID` (`dbmeter results list` shows the ids)"
                    .into(),
            ));
        }
        [_, extra, ..] => {
            return Err(CliError::Usage(format!(
                "unexpected argument '{extra}': `dbmeter results show` shows one run"
            )));
        }
    };
    let mut store = open_existing(a.get("store"))?;
    let Some(run) = store.run(id).map_err(failed)? else {
        return Err(CliError::Failed(format!(
            "there is no run #{id} in '{}' (`dbmeter results list` shows them)",
            store.location()
        )));
    };
    if format == "json" {
        print!("{}", run.document);
        if !run.document.ends_with('\n') {
            println!();
        }
        return Ok(0);
    }
    print!("{}", stored::describe(&run.summary));
    match dbmeter_result::RunDocument::from_json(&run.document) {
        Ok(report) => {
            println!();
            print!("{}", super::run::text_report(&report));
        }
        Err(_) => println!("\n(no measurements: the stored document holds no complete report)"),
    }
    Ok(0)
}

/// A stored document with a `"store"` object (its meta) added at its end.
/// The document's own text, field order included, is kept.
fn with_store_object(run: &dbmeter_store::StoredRun) -> String {
    let s = &run.summary;
    let meta = serde_json::json!({
        "id": s.id,
        "stored_at": s.stored_at,
        "campaign": s.campaign,
        "variant": s.variant,
        "cell": s.cell,
        "repeat": s.repeat,
        "tags": s.tags.iter().map(|(k, v)| (k.clone(), serde_json::Value::from(v.as_str()))).collect::<serde_json::Map<String, serde_json::Value>>(),
    });
    let doc = run.document.trim_end();
    match doc.strip_suffix('}') {
        Some(body) if body.trim_end().ends_with('{') => format!("{body}\"store\": {meta}}}"),
        Some(body) => format!("{},\n  \"store\": {meta}\n}}", body.trim_end()),
        None => doc.to_string(),
    }
}

fn export(args: &[String]) -> Result<i32, CliError> {
    let a = parse_args(args, &PAGE, Some("export"))?;
    let format = a.format(&["csv", "json"], "results export")?;
    let filter = filter_of(&a.words)?;
    let mut store = open_existing(a.get("store"))?;
    let (out, n) = if format == "json" {
        let runs = store.documents(&filter).map_err(failed)?;
        if runs.is_empty() {
            return Err(no_match(&store, &filter));
        }
        let docs: Vec<String> = runs.iter().map(with_store_object).collect();
        (format!("[\n{}\n]\n", docs.join(",\n")), runs.len())
    } else {
        let runs = store.runs(&filter).map_err(failed)?;
        if runs.is_empty() {
            return Err(no_match(&store, &filter));
        }
        (stored::list_csv(&runs), runs.len())
    };
    match a.get("output") {
        Some(path) => {
            std::fs::write(path, &out)
                .map_err(|e| CliError::Failed(format!("cannot write --output {path}: {e}")))?;
            eprintln!(
                "exported {n} run{} to {path}",
                if n == 1 { "" } else { "s" }
            );
        }
        None => print!("{out}"),
    }
    Ok(0)
}

fn delete(args: &[String]) -> Result<i32, CliError> {
    let a = parse_args(args, &PAGE, Some("delete"))?;
    let filter = filter_of(&a.words)?;
    if filter.is_empty() {
        return Err(CliError::Usage(format!(
            "which runs? `dbmeter results delete ID...` or selectors ({SELECTOR_FORMS})"
        )));
    }
    let mut store = open_existing(a.get("store"))?;
    let runs = store.runs(&filter).map_err(failed)?;
    if runs.is_empty() {
        return Err(no_match(&store, &filter));
    }
    let ids: Vec<i64> = runs.iter().map(|r| r.id).collect();
    let listed = ids
        .iter()
        .map(|i| format!("#{i}"))
        .collect::<Vec<_>>()
        .join(", ");
    let n = ids.len();
    let s = if n == 1 { "" } else { "s" };
    if !a.flag("yes") {
        if !std::io::stdin().is_terminal() {
            return Err(CliError::Usage(format!(
                "refusing to delete {n} run{s} ({listed}) without --yes: standard input is not a terminal to ask on (`dbmeter help results`)"
            )));
        }
        eprint!(
            "Delete {n} run{s} ({listed}) from {}? [y/N] ",
            store.location()
        );
        let _ = std::io::stderr().flush();
        let mut answer = String::new();
        let _ = std::io::stdin().read_line(&mut answer);
        if !matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
            eprintln!("nothing deleted");
            return Ok(1);
        }
    }
    // Delete exactly the runs listed, even if more arrived meanwhile.
    let deleted = store.delete(&Filter::ids(&ids)).map_err(failed)?;
    let s = if deleted == 1 { "" } else { "s" };
    println!(
        "deleted {deleted} run{s} ({listed}) from {}",
        store.location()
    );
    Ok(0)
}

/// `--noise=PCT` of compare and report: a percentage (a trailing % is
/// allowed), 5 when not given.
pub(crate) fn noise_pct(given: Option<&str>) -> Result<f64, CliError> {
    match given {
        None => Ok(5.0),
        Some(v) => v
            .trim()
            .trim_end_matches('%')
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && *x >= 0.0)
            .ok_or_else(|| CliError::Usage(format!("--noise={v}: expected a percentage, e.g. 5"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_need_a_key_and_an_equals_sign() {
        assert_eq!(
            parse_tags(["a=b", "k=v=w", "e="].into_iter()).unwrap(),
            vec![
                ("a".into(), "b".into()),
                ("k".into(), "v=w".into()),
                ("e".into(), String::new())
            ]
        );
        for bad in ["novalue", "=x", ""] {
            assert!(parse_tags([bad].into_iter()).is_err(), "{bad}");
        }
    }

    #[test]
    fn bare_numbers_are_run_ids() {
        let f = filter_of(&["3", "#4", "variant:A"]).unwrap();
        assert_eq!(
            f.selectors,
            vec![Selector::Variant("A".into()), Selector::Runs(vec![3, 4])]
        );
        assert!(filter_of(&["nope"]).is_err());
    }
}
