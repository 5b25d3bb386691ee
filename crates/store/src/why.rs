//! Why a comparison came out as it did (`dbmeter compare --why`): for each
//! cell of a [`Comparison`], the figures each side's run documents keep,
//! per transaction (event), as the median over the side's runs:
//!
//! - the server's counters that the record keeps as deltas over the run
//!   (MariaDB/MySQL `SHOW GLOBAL STATUS`: rows read, handler calls, buffer
//!   pool reads, temporary tables, log writes; PostgreSQL: blocks read and
//!   hit, WAL, temporary files);
//! - the OS sampler's CPU of dbmeter and of the local server, the
//!   machine's context switches and disk I/O;
//! - the server's wait events sampled during the measured phase: the
//!   share of the busy sessions' samples in each;
//! - with `--profile-server`, perf's share of the server's CPU samples by
//!   function.
//!
//! Each list is ranked by relative change, so that its first rows explain
//! the difference; see [`WhyRow::rank`].

use crate::{Comparison, Filter, Store, StoreError};
use dbmeter_result::RunDocument;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// How a figure is counted, which decides how it is shown and the
/// smallest amount per transaction that counts as something.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum WhyUnit {
    /// Things counted: rows, calls, blocks, tables, switches.
    Count,
    /// Bytes.
    Bytes,
    /// Milliseconds (of CPU or of waiting).
    Ms,
    /// A share in percent.
    Pct,
}

impl WhyUnit {
    /// The amount below which a value is next to nothing: added to both
    /// sides before they are divided, so that a counter going from 0.001
    /// to 0.01 per transaction (dbmeter's own queries spread over fewer
    /// transactions) does not rank as a tenfold change.
    pub fn floor(self) -> f64 {
        match self {
            WhyUnit::Count => 0.1,
            WhyUnit::Bytes => 1024.0,
            WhyUnit::Ms => 0.01,
            WhyUnit::Pct => 1.0,
        }
    }
}

/// Changes beyond this factor, either way, rank alike: their exact size
/// says more about how near zero the smaller side was than about the
/// cause. Among them, rows keep the order of their list (rows read before
/// handler calls, blocks before WAL).
pub const RANK_CAP: f64 = 100.0;

/// One figure on both sides.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WhyRow {
    /// The counter's or figure's name, e.g. `Innodb_rows_read`.
    pub name: String,
    /// What it is, in a few words.
    pub what: String,
    pub unit: WhyUnit,
    /// The median over the baseline's runs; None when none has it.
    pub baseline: Option<f64>,
    pub candidate: Option<f64>,
}

impl WhyRow {
    /// `(candidate - baseline) / baseline x 100`; None when a side is
    /// missing or the baseline is 0.
    pub fn change_pct(&self) -> Option<f64> {
        let (b, c) = (self.baseline?, self.candidate?);
        (b != 0.0).then(|| (c - b) / b * 100.0)
    }

    /// The ratio candidate / baseline, each with the unit's floor added.
    pub fn ratio(&self) -> Option<f64> {
        let (b, c) = (self.baseline?, self.candidate?);
        let f = self.unit.floor();
        Some((c.max(0.0) + f) / (b.max(0.0) + f))
    }

    /// How far the row moved: |ln(ratio)|, at most ln([`RANK_CAP`]); -1
    /// when a side has no value (such rows go last).
    pub fn rank(&self) -> f64 {
        self.ratio()
            .map_or(-1.0, |r| r.ln().abs().min(RANK_CAP.ln()))
    }
}

/// Why one cell of the comparison differs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WhyCell {
    /// The row's label: workload (and candidate variant).
    pub workload: String,
    pub variant: Option<String>,
    pub threads: u32,
    pub baseline_runs: Vec<i64>,
    pub candidate_runs: Vec<i64>,
    /// The server's counters per transaction, ranked.
    pub counters: Vec<WhyRow>,
    /// The OS figures per transaction, ranked.
    pub os: Vec<WhyRow>,
    /// Busy sessions per sample and each wait event's share, ranked.
    pub waits: Vec<WhyRow>,
    /// The server's CPU by function (`--profile-server`), ranked; empty
    /// when neither side was profiled.
    pub profile: Vec<WhyRow>,
    /// Where the wait events came from, or why there are none.
    pub wait_notes: Vec<String>,
    /// What to keep in mind reading the figures (restarts, other
    /// sessions, runs without a record).
    pub notes: Vec<String>,
}

/// The server counters `--why` looks at, in the order they rank among
/// changes beyond [`RANK_CAP`]: what reads rows or blocks first, then
/// writes, temporary tables and sorts, the log. Every other `Handler_*`
/// counter the record has follows them.
const COUNTERS: &[(&str, WhyUnit, &str)] = &[
    // MariaDB / MySQL
    (
        "Innodb_rows_read",
        WhyUnit::Count,
        "rows InnoDB read (Innodb_rows_read)",
    ),
    (
        "Rows_read",
        WhyUnit::Count,
        "rows the server read, all engines (MariaDB 10.6+'s Rows_read)",
    ),
    (
        "Handler_read_rnd_next",
        WhyUnit::Count,
        "next row in a table scan",
    ),
    ("Handler_read_next", WhyUnit::Count, "next row in an index"),
    ("Handler_read_key", WhyUnit::Count, "row looked up by key"),
    (
        "Handler_read_rnd",
        WhyUnit::Count,
        "row read by position (sorts)",
    ),
    (
        "Handler_read_first",
        WhyUnit::Count,
        "first entry of an index (full index scans)",
    ),
    (
        "Innodb_buffer_pool_reads",
        WhyUnit::Count,
        "pages read from disk into the buffer pool",
    ),
    (
        "Innodb_buffer_pool_read_requests",
        WhyUnit::Count,
        "page reads from the buffer pool",
    ),
    ("Innodb_data_read", WhyUnit::Bytes, "data read by InnoDB"),
    (
        "Select_scan",
        WhyUnit::Count,
        "SELECTs that scanned a table",
    ),
    ("Select_full_join", WhyUnit::Count, "joins without an index"),
    (
        "Created_tmp_tables",
        WhyUnit::Count,
        "internal temporary tables",
    ),
    (
        "Created_tmp_disk_tables",
        WhyUnit::Count,
        "temporary tables on disk",
    ),
    ("Sort_rows", WhyUnit::Count, "rows sorted"),
    ("Sort_merge_passes", WhyUnit::Count, "sort merge passes"),
    ("Innodb_rows_inserted", WhyUnit::Count, "rows inserted"),
    ("Innodb_rows_updated", WhyUnit::Count, "rows updated"),
    ("Innodb_rows_deleted", WhyUnit::Count, "rows deleted"),
    ("Handler_write", WhyUnit::Count, "rows written"),
    ("Handler_update", WhyUnit::Count, "rows updated"),
    ("Handler_delete", WhyUnit::Count, "rows deleted"),
    ("Innodb_row_lock_waits", WhyUnit::Count, "row lock waits"),
    (
        "Innodb_row_lock_time",
        WhyUnit::Ms,
        "time waited for row locks",
    ),
    ("Innodb_log_writes", WhyUnit::Count, "redo log writes"),
    ("Innodb_os_log_written", WhyUnit::Bytes, "redo log written"),
    (
        "Innodb_data_written",
        WhyUnit::Bytes,
        "data written by InnoDB",
    ),
    ("Innodb_data_fsyncs", WhyUnit::Count, "InnoDB fsyncs"),
    ("Bytes_sent", WhyUnit::Bytes, "sent to clients"),
    ("Questions", WhyUnit::Count, "statements from clients"),
    // PostgreSQL
    (
        "database.blks_read",
        WhyUnit::Count,
        "blocks read (not in shared buffers)",
    ),
    (
        "database.blks_hit",
        WhyUnit::Count,
        "blocks found in shared buffers",
    ),
    (
        "database.blk_read_time",
        WhyUnit::Ms,
        "time reading blocks (track_io_timing)",
    ),
    ("database.temp_files", WhyUnit::Count, "temporary files"),
    (
        "database.temp_bytes",
        WhyUnit::Bytes,
        "temporary files' bytes",
    ),
    ("wal.wal_bytes", WhyUnit::Bytes, "WAL written"),
    ("wal.wal_records", WhyUnit::Count, "WAL records"),
    ("wal.wal_fpi", WhyUnit::Count, "WAL full-page images"),
    (
        "wal.wal_buffers_full",
        WhyUnit::Count,
        "WAL writes because the WAL buffers were full",
    ),
    (
        "database.blk_write_time",
        WhyUnit::Ms,
        "time writing blocks (track_io_timing)",
    ),
    (
        "bgwriter.buffers_backend",
        WhyUnit::Count,
        "buffers written by backends themselves",
    ),
    (
        "database.xact_rollback",
        WhyUnit::Count,
        "transactions rolled back",
    ),
    ("database.deadlocks", WhyUnit::Count, "deadlocks"),
];

/// Transactions (events) over the span the record's deltas and OS
/// samples cover: the measured phase and the warm-up.
fn transactions(d: &RunDocument) -> Option<f64> {
    let n = d.totals.events + d.warmup.as_ref().map_or(0, |w| w.events);
    (n > 0).then_some(n as f64)
}

/// Each counter's delta per transaction, with its unit and words.
fn counters_of(d: &RunDocument) -> BTreeMap<String, f64> {
    let (Some(c), Some(tx)) = (&d.counters, transactions(d)) else {
        return BTreeMap::new();
    };
    c.delta
        .iter()
        .filter(|(k, _)| COUNTERS.iter().any(|(n, _, _)| n == k) || k.starts_with("Handler_"))
        .map(|(k, v)| (k.clone(), v.as_f64() / tx))
        .collect()
}

/// The OS figures per transaction, by name.
fn os_of(d: &RunDocument) -> BTreeMap<String, f64> {
    let mut m = BTreeMap::new();
    let (Some(os), Some(tx)) = (&d.os, transactions(d)) else {
        return m;
    };
    if os.samples.is_empty() {
        return m;
    }
    let sum = |f: &dyn Fn(&dbmeter_env::OsSample) -> Option<f64>| -> Option<f64> {
        let v: Vec<f64> = os
            .samples
            .iter()
            .filter_map(|s| f(s).map(|x| x * s.duration_s))
            .collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>())
    };
    let per_tx = |x: Option<f64>| x.map(|x| x / tx);
    let cpu_ms = |p: Option<f64>| p.map(|p| p / 100.0 * 1000.0);
    let mut put = |k: &str, v: Option<f64>| {
        if let Some(v) = v.filter(|v| v.is_finite()) {
            m.insert(k.to_string(), v);
        }
    };
    put("client_cpu", per_tx(sum(&|s| cpu_ms(s.client_cpu_pct))));
    put("server_cpu", per_tx(sum(&|s| cpu_ms(s.server_cpu_pct))));
    put(
        "context_switches",
        per_tx(sum(&|s| Some(s.context_switches_per_s))),
    );
    put(
        "disk_ios",
        per_tx(sum(&|s| {
            Some(s.disks.iter().map(|d| d.r_per_s + d.w_per_s).sum())
        })),
    );
    put(
        "disk_read",
        per_tx(sum(&|s| {
            Some(s.disks.iter().map(|d| d.rkb_per_s * 1024.0).sum())
        })),
    );
    put(
        "disk_written",
        per_tx(sum(&|s| {
            Some(s.disks.iter().map(|d| d.wkb_per_s * 1024.0).sum())
        })),
    );
    m
}

/// The OS figures, in their order among changes beyond the cap.
const OS: &[(&str, WhyUnit, &str)] = &[
    (
        "server_cpu",
        WhyUnit::Ms,
        "CPU of the server's processes (ms)",
    ),
    ("client_cpu", WhyUnit::Ms, "CPU of dbmeter (ms)"),
    ("disk_read", WhyUnit::Bytes, "read from the machine's disks"),
    (
        "disk_written",
        WhyUnit::Bytes,
        "written to the machine's disks",
    ),
    ("disk_ios", WhyUnit::Count, "disk I/Os of the machine"),
    (
        "context_switches",
        WhyUnit::Count,
        "context switches of the machine",
    ),
];

/// Busy sessions per sample and each event's share, by name; the events
/// of `all` (every compared run's) that this run did not see count 0.
fn waits_of(d: &RunDocument, all: &BTreeSet<String>) -> BTreeMap<String, f64> {
    let mut m = BTreeMap::new();
    let Some(w) = &d.waits else { return m };
    if w.samples == 0 {
        return m;
    }
    if let Some(b) = w.mean_busy() {
        m.insert(BUSY.to_string(), b);
    }
    if w.busy > 0 {
        for e in all {
            m.insert(e.clone(), w.share_pct(e).unwrap_or(0.0));
        }
    }
    m
}

/// perf's share of the server's samples by function, for a run profiled
/// with `--profile-server`; `all` names the functions of every compared
/// run, which count 0 where a run's profile does not list them.
fn profile_of(d: &RunDocument, all: &BTreeSet<String>) -> Option<BTreeMap<String, f64>> {
    let p = d.profile.as_ref().filter(|p| p.samples > 0)?;
    let mut m: BTreeMap<String, f64> = all.iter().map(|f| (f.clone(), 0.0)).collect();
    for f in &p.functions {
        m.insert(f.function.clone(), f.pct);
    }
    Some(m)
}

/// The row of busy sessions per sample among the waits.
pub const BUSY: &str = "busy sessions";

/// The median of the values `of` gives for `name` over `docs`, skipping
/// documents without it.
fn median_of(maps: &[BTreeMap<String, f64>], name: &str) -> Option<f64> {
    let mut v: Vec<f64> = maps.iter().filter_map(|m| m.get(name).copied()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(crate::compare::median(&v))
}

/// Ranked rows of the names in `order` (then any other name of the
/// maps), both sides' medians, leaving out rows that are 0 on both.
fn rows(
    order: &[(String, WhyUnit, String)],
    base: &[BTreeMap<String, f64>],
    cand: &[BTreeMap<String, f64>],
) -> Vec<WhyRow> {
    let mut out: Vec<WhyRow> = order
        .iter()
        .map(|(name, unit, what)| WhyRow {
            name: name.clone(),
            what: what.clone(),
            unit: *unit,
            baseline: median_of(base, name),
            candidate: median_of(cand, name),
        })
        .filter(|r| {
            (r.baseline.is_some() || r.candidate.is_some())
                && !(r.baseline.unwrap_or(0.0) == 0.0 && r.candidate.unwrap_or(0.0) == 0.0)
        })
        .collect();
    // Stable: rows that moved alike keep the list's order.
    out.sort_by(|a, b| b.rank().total_cmp(&a.rank()));
    out
}

fn names_in(maps: &[&[BTreeMap<String, f64>]]) -> BTreeSet<String> {
    maps.iter()
        .flat_map(|side| side.iter().flat_map(|m| m.keys().cloned()))
        .collect()
}

/// Why the `candidate` documents differ from the `baseline` ones.
pub fn explain(baseline: &[&RunDocument], candidate: &[&RunDocument]) -> WhyParts {
    let counters = |docs: &[&RunDocument]| docs.iter().map(|d| counters_of(d)).collect::<Vec<_>>();
    let (bc, cc) = (counters(baseline), counters(candidate));
    let present = names_in(&[&bc, &cc]);
    let mut order: Vec<(String, WhyUnit, String)> = COUNTERS
        .iter()
        .filter(|(n, _, _)| present.contains(*n))
        .map(|(n, u, w)| (n.to_string(), *u, w.to_string()))
        .collect();
    for n in &present {
        if !order.iter().any(|(o, _, _)| o == n) {
            order.push((n.clone(), WhyUnit::Count, "handler calls".into()));
        }
    }
    let counter_rows = rows(&order, &bc, &cc);

    let os = |docs: &[&RunDocument]| docs.iter().map(|d| os_of(d)).collect::<Vec<_>>();
    let os_order: Vec<(String, WhyUnit, String)> = OS
        .iter()
        .map(|(n, u, w)| (n.to_string(), *u, w.to_string()))
        .collect();
    let os_rows = rows(&os_order, &os(baseline), &os(candidate));

    let events: BTreeSet<String> = baseline
        .iter()
        .chain(candidate)
        .filter_map(|d| d.waits.as_ref())
        .flat_map(|w| w.events.keys().cloned())
        .collect();
    let waits = |docs: &[&RunDocument]| {
        docs.iter()
            .map(|d| waits_of(d, &events))
            .collect::<Vec<_>>()
    };
    let (bw, cw) = (waits(baseline), waits(candidate));
    let mut wait_order = vec![(
        BUSY.to_string(),
        WhyUnit::Count,
        "busy sessions per sample, on average".to_string(),
    )];
    for n in names_in(&[&bw, &cw]) {
        if n != BUSY {
            wait_order.push((n, WhyUnit::Pct, "share of busy sessions' samples".into()));
        }
    }
    let wait_rows = rows(&wait_order, &bw, &cw);

    let functions: BTreeSet<String> = baseline
        .iter()
        .chain(candidate)
        .filter_map(|d| d.profile.as_ref())
        .flat_map(|p| p.functions.iter().map(|f| f.function.clone()))
        .collect();
    let profiles = |docs: &[&RunDocument]| {
        docs.iter()
            .filter_map(|d| profile_of(d, &functions))
            .collect::<Vec<_>>()
    };
    let profile_order: Vec<(String, WhyUnit, String)> = functions
        .iter()
        .map(|f| {
            (
                f.clone(),
                WhyUnit::Pct,
                "share of the server's CPU samples".to_string(),
            )
        })
        .collect();
    let profile_rows = rows(&profile_order, &profiles(baseline), &profiles(candidate));

    let mut wait_notes = BTreeSet::new();
    let mut notes = BTreeSet::new();
    for (side, docs) in [("baseline", baseline), ("candidate", candidate)] {
        let sampled: Vec<_> = docs.iter().filter_map(|d| d.waits.as_ref()).collect();
        let samples: u64 = sampled.iter().map(|w| w.samples).sum();
        let sources: BTreeSet<&str> = sampled
            .iter()
            .filter(|w| w.samples > 0)
            .map(|w| w.source.as_str())
            .collect();
        if samples > 0 {
            wait_notes.insert(format!(
                "{side}: {samples} samples of {} over {} run{}, every {} ms",
                sources.into_iter().collect::<Vec<_>>().join(", "),
                sampled.len(),
                if sampled.len() == 1 { "" } else { "s" },
                sampled.iter().map(|w| w.interval_ms).max().unwrap_or(0)
            ));
        }
        for d in docs {
            if let Some(n) = d.profile.as_ref().and_then(|p| p.note.as_ref()) {
                notes.insert(format!("{side}: {n}"));
            }
            match &d.waits {
                Some(w) => {
                    if let Some(n) = &w.note {
                        wait_notes.insert(format!("{side}: {n}"));
                    }
                }
                None => {
                    wait_notes.insert(format!(
                        "{side}: no wait events recorded (SQLite has none; runs stored before dbmeter sampled them have none)"
                    ));
                }
            }
            match &d.counters {
                Some(c) if c.restarted => {
                    notes.insert(format!(
                        "{side}: the server restarted during a run, whose counters are left out"
                    ));
                }
                Some(c) if c.other_sessions > 0 => {
                    notes.insert(format!(
                        "{side}: other sessions were busy on the server around a run: its global counters include their work"
                    ));
                }
                Some(_) => {}
                None => {
                    notes.insert(format!("{side}: a run has no server counters"));
                }
            }
        }
    }
    WhyParts {
        counters: counter_rows,
        os: os_rows,
        waits: wait_rows,
        profile: profile_rows,
        wait_notes: wait_notes.into_iter().collect(),
        notes: notes.into_iter().collect(),
    }
}

/// The ranked lists of [`explain`].
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct WhyParts {
    pub counters: Vec<WhyRow>,
    pub os: Vec<WhyRow>,
    pub waits: Vec<WhyRow>,
    pub profile: Vec<WhyRow>,
    pub wait_notes: Vec<String>,
    pub notes: Vec<String>,
}

/// Why each cell of `table` differs, from the documents by run id. Cells
/// over the same runs (a benchmark's figures) are explained once.
pub fn why(table: &Comparison, docs: &BTreeMap<i64, RunDocument>) -> Vec<WhyCell> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for row in &table.rows {
        for (cell, threads) in row.cells.iter().zip(&table.threads) {
            let Some(cell) = cell else { continue };
            let key = (cell.baseline.runs.clone(), cell.candidate.runs.clone());
            if !seen.insert(key) {
                continue;
            }
            let pick = |ids: &[i64]| ids.iter().filter_map(|i| docs.get(i)).collect::<Vec<_>>();
            let parts = explain(&pick(&cell.baseline.runs), &pick(&cell.candidate.runs));
            // A row per figure is named `WORKLOAD FIGURE` (tpch Q1): the
            // runs, and so their explanation, are the workload's.
            let workload = if table.options.metric == crate::Metric::Figures {
                row.workload
                    .split(' ')
                    .next()
                    .unwrap_or_default()
                    .to_string()
            } else {
                row.workload.clone()
            };
            out.push(WhyCell {
                workload,
                variant: row.variant.clone(),
                threads: *threads,
                baseline_runs: cell.baseline.runs.clone(),
                candidate_runs: cell.candidate.runs.clone(),
                counters: parts.counters,
                os: parts.os,
                waits: parts.waits,
                profile: parts.profile,
                wait_notes: parts.wait_notes,
                notes: parts.notes,
            });
        }
    }
    out
}

impl Store {
    /// [`why`] for `table`, reading its runs' documents from the store.
    pub fn why(&mut self, table: &Comparison) -> Result<Vec<WhyCell>, StoreError> {
        let ids: BTreeSet<i64> = table
            .rows
            .iter()
            .flat_map(|r| r.cells.iter().flatten())
            .flat_map(|c| c.baseline.runs.iter().chain(&c.candidate.runs).copied())
            .collect();
        let ids: Vec<i64> = ids.into_iter().collect();
        let mut docs = BTreeMap::new();
        for run in self.documents(&Filter::ids(&ids))? {
            let d = RunDocument::from_json(&run.document).map_err(|e| {
                StoreError::new(format!(
                    "run #{}: cannot read its document: {e}",
                    run.summary.id
                ))
            })?;
            docs.insert(run.summary.id, d);
        }
        Ok(why(table, &docs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, unit: WhyUnit, b: f64, c: f64) -> WhyRow {
        WhyRow {
            name: name.into(),
            what: String::new(),
            unit,
            baseline: Some(b),
            candidate: Some(c),
        }
    }

    #[test]
    fn ranks_by_relative_change_with_a_floor_and_a_cap() {
        // 10 -> 10000 rows and 0.2 -> 10001 scans are both beyond the cap:
        // they rank alike and keep the list's order.
        let order: Vec<(String, WhyUnit, String)> = ["a", "b", "c", "d"]
            .iter()
            .map(|n| (n.to_string(), WhyUnit::Count, String::new()))
            .collect();
        let m = |v: [f64; 4]| {
            ["a", "b", "c", "d"]
                .iter()
                .zip(v)
                .map(|(k, x)| (k.to_string(), x))
                .collect::<BTreeMap<_, _>>()
        };
        let r = rows(
            &order,
            &[m([1.0, 10.0, 0.001, 0.2])],
            &[m([1.1, 10000.0, 0.005, 10001.0])],
        );
        let names: Vec<&str> = r.iter().map(|r| r.name.as_str()).collect();
        // b and d capped (list order), a +10%, c next to nothing.
        assert_eq!(names, ["b", "d", "a", "c"]);
        assert!(r[3].rank() < r[2].rank());
        assert_eq!(row("x", WhyUnit::Count, 0.0, 5.0).change_pct(), None);
        let down = row("x", WhyUnit::Count, 50.0, 5.0);
        assert!((down.change_pct().unwrap_or(0.0) + 90.0).abs() < 1e-9);
        assert!(down.rank() > row("y", WhyUnit::Count, 5.0, 40.0).rank());
    }

    #[test]
    fn rows_zero_on_both_sides_are_left_out() {
        let order = vec![("z".to_string(), WhyUnit::Count, String::new())];
        let zero: BTreeMap<String, f64> = [("z".to_string(), 0.0)].into();
        let z = std::slice::from_ref(&zero);
        assert!(rows(&order, z, z).is_empty());
    }
}
