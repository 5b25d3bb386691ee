//! Which benchmarks exist: found by name (dashes and underscores alike)
//! or, later, by the path of a script. Adding a benchmark is a folder and
//! one line in [`all`].

use crate::benchmark::Benchmark;
use crate::fileio::Fileio;
use crate::micro::{Cpu, Memory, MutexTest, Threads};
use crate::noop::Noop;
use crate::oltp::{Oltp, OltpKind};
use crate::pgbench::Pgbench;
use crate::replay::Replay;
use crate::slap::Slap;
use crate::tpcc::Tpcc;
use crate::tpch::Tpch;
use std::path::Path;
use std::sync::Arc;

fn oltp(kind: OltpKind, name: &'static str, summary: &'static str) -> Arc<dyn Benchmark> {
    Arc::new(Oltp {
        kind,
        name,
        summary,
    })
}

/// Every built-in benchmark, in the order `dbmeter list` shows them.
pub fn all() -> Vec<Arc<dyn Benchmark>> {
    vec![
        oltp(
            OltpKind::ReadWrite,
            "oltp_read_write",
            "sysbench OLTP read/write transactions (14 reads, 4 writes by default)",
        ),
        oltp(
            OltpKind::ReadOnly,
            "oltp_read_only",
            "sysbench OLTP read-only transactions",
        ),
        oltp(
            OltpKind::WriteOnly,
            "oltp_write_only",
            "sysbench OLTP write-only transactions",
        ),
        oltp(
            OltpKind::PointSelect,
            "oltp_point_select",
            "one primary-key lookup per event, no transaction",
        ),
        oltp(
            OltpKind::UpdateIndex,
            "oltp_update_index",
            "one UPDATE of the indexed column k per event",
        ),
        oltp(
            OltpKind::UpdateNonIndex,
            "oltp_update_non_index",
            "one UPDATE of the non-indexed column c per event",
        ),
        oltp(
            OltpKind::Delete,
            "oltp_delete",
            "one DELETE by primary key per event",
        ),
        oltp(
            OltpKind::Insert,
            "oltp_insert",
            "one INSERT of a new row per event",
        ),
        oltp(
            OltpKind::RandomPoints,
            "select_random_points",
            "SELECT ... WHERE k IN (random_points values) on sbtest1",
        ),
        oltp(
            OltpKind::RandomRanges,
            "select_random_ranges",
            "SELECT count(k) over number_of_ranges k ranges on sbtest1",
        ),
        oltp(
            OltpKind::BulkInsert,
            "bulk_insert",
            "each thread appends rows to its own table with multi-row INSERTs",
        ),
        Arc::new(Tpcc),
        Arc::new(Tpch),
        Arc::new(Pgbench),
        Arc::new(Slap),
        Arc::new(Replay),
        Arc::new(Fileio),
        Arc::new(Cpu),
        Arc::new(Memory),
        Arc::new(Threads),
        Arc::new(MutexTest),
        Arc::new(Noop),
    ]
}

/// A built-in benchmark by name (dashes and underscores alike).
pub fn find(name: &str) -> Option<Arc<dyn Benchmark>> {
    let want = name.replace('-', "_").to_ascii_lowercase();
    all().into_iter().find(|b| b.name() == want)
}

/// The benchmark's own section of the text report of `doc`, a run now
/// or stored: a built-in benchmark's `report_text`, or for a script (its
/// workload is the path) its report hook's text and the statement
/// latencies, without loading the script again.
pub fn report_text(doc: &dbmeter_result::RunDocument) -> Option<String> {
    match find(&doc.workload) {
        Some(b) => b.report_text(doc),
        None if looks_like_path(&doc.workload) => crate::script::report_text(doc),
        None => None,
    }
}

/// `dbmeter merge`'s merge of a run's shards: the generic merge
/// ([`dbmeter_result::shards::merge`]), then the benchmark's own section
/// where its shards' sections add up to one process's
/// ([`Benchmark::merge_shards`]: tpch's streams, replay's sessions), which
/// is then no longer listed as left out.
pub fn merge_shards(
    input: Vec<(String, dbmeter_result::RunDocument)>,
) -> Result<dbmeter_result::RunDocument, dbmeter_result::shards::MergeError> {
    let shards: Vec<dbmeter_result::RunDocument> = input.iter().map(|(_, d)| d.clone()).collect();
    let mut doc = dbmeter_result::shards::merge(input)?;
    if let Some(bench) = find(&doc.workload) {
        let sections = bench.merge_shards(&shards, &mut doc);
        if let Some(info) = &mut doc.merged {
            info.left_out
                .retain(|x| !sections.iter().any(|s| *x == format!("the {s} section")));
        }
    }
    Ok(doc)
}

/// Whether a word on the command line names a script file rather than a
/// benchmark: it has a path separator or a script's extension.
pub fn looks_like_path(word: &str) -> bool {
    word.contains('/') || word.ends_with(".lua") || word.ends_with(".sql")
}

/// The benchmark a command line names: a built-in one by name, or a
/// script by path. The error says what is wrong.
pub fn resolve(word: &str) -> Result<Arc<dyn Benchmark>, String> {
    if let Some(b) = find(word) {
        return Ok(b);
    }
    // `-`: a script on standard input, as sysbench reads one.
    if word == "-" {
        return load_script(word);
    }
    if looks_like_path(word) {
        let p = Path::new(word);
        if !p.exists() {
            return Err(format!("{word}: no such file"));
        }
        if word.ends_with(".sql") {
            return Err(format!(
                "{word}: dbmeter does not run SQL script files yet; Lua scripts (.lua) in sysbench's API run"
            ));
        }
        return load_script(word);
    }
    Err(format!("unknown workload '{word}'"))
}

/// A script, loaded once per process: its body runs when it is loaded (as
/// sysbench runs it once in its main state), however often the command
/// line names it.
fn load_script(word: &str) -> Result<Arc<dyn Benchmark>, String> {
    static LOADED: std::sync::Mutex<Vec<(String, Arc<dyn Benchmark>)>> =
        std::sync::Mutex::new(Vec::new());
    let mut loaded = LOADED
        .lock()
        .map_err(|_| "a script failed to load".to_string())?;
    if let Some((_, b)) = loaded.iter().find(|(w, _)| w == word) {
        return Ok(b.clone());
    }
    let b = crate::script::Script::load(word).map(|s| Arc::new(s) as Arc<dyn Benchmark>)?;
    loaded.push((word.to_string(), b.clone()));
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_found_both_ways() {
        let names: Vec<String> = all().iter().map(|b| b.name().to_string()).collect();
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len());
        assert!(find("oltp-read-write").is_some());
        assert!(find("OLTP_POINT_SELECT").is_some());
        assert!(find("nope").is_none());
    }

    #[test]
    fn datasets_and_writes() {
        let b = |n: &str| find(n).unwrap();
        assert_eq!(
            b("oltp_read_only").dataset(),
            b("oltp_read_write").dataset()
        );
        assert_ne!(b("bulk_insert").dataset(), b("oltp_insert").dataset());
        assert_eq!(b("noop").dataset(), None);
        assert!(!b("oltp_point_select").writes());
        assert!(!b("select_random_ranges").writes());
        assert!(b("oltp_insert").writes());
        assert!(b("tpcc").writes());
    }

    #[test]
    fn scripts_are_told_apart() {
        assert!(
            resolve("./x.lua")
                .err()
                .unwrap_or_default()
                .contains("no such file")
        );
        assert!(
            resolve("oltp_nope")
                .err()
                .unwrap_or_default()
                .contains("unknown workload")
        );
    }
}
