//! A campaign run as N processes (`dbmeter campaign run FILE
//! --shard=I/N`): every process runs every cell with its share of the
//! cell's users and events (the run layer's `--shard` split, as `dbmeter
//! run --shard` does). Before each cell the shards meet at a start barrier
//! in the results store they share and start together; after it each
//! stores its shard's result (tagged, outside the campaign), and shard 0
//! waits for the others' and stores the merged run as the cell's run, the
//! one `--resume`, `compare` and `report` see. Shard 0 also does what is
//! done once: prepares the datasets and runs the hooks.

use crate::plan::Cell;
use crate::spec::{Campaign, TargetKind};
use dbmeter_benchmarks::registry;
use dbmeter_benchmarks::shard::Shard;
use dbmeter_engine::StopHandle;
use dbmeter_result::{EndInfo, RunDocument};
use dbmeter_store::{Barrier, BarrierError, Filter, Meeting, RunMeta, Selector, Store};
use std::time::{Duration, Instant};

/// How often a shard looks at the barrier, and shard 0 for the others'
/// results.
const POLL: Duration = Duration::from_millis(100);

/// Checks that the campaign can run as `shard` says: `shards = N` in the
/// file and `--shard=I/N` agree, no managed server (each process would
/// start its own), no adaptive repeats (the shards would have to agree on
/// every cell's decision), and every cell splits (at least one user per
/// shard).
pub fn check_shards(c: &Campaign, shard: Option<Shard>) -> Result<(), String> {
    match (c.shards, shard) {
        (Some(n), None) if n > 1 => {
            return Err(format!(
                "campaign '{}' runs as {n} shards (shards = {n} in its file): give each process its number, --shard=I/{n} with I from 0 to {}",
                c.name,
                n - 1
            ));
        }
        (Some(n), Some(s)) if s.count != n => {
            return Err(format!(
                "--shard={s}: campaign '{}' runs as {n} shards (shards = {n} in its file)",
                c.name
            ));
        }
        _ => {}
    }
    let Some(s) = shard else { return Ok(()) };
    if let Some(t) = c
        .targets
        .iter()
        .find(|t| matches!(t.kind, TargetKind::Managed { .. }))
    {
        return Err(format!(
            "--shard={s}: target {} is a server the campaign starts itself, and every shard would start its own; start the server once and give its url",
            t.name
        ));
    }
    if c.adaptive.is_some() {
        return Err(format!(
            "--shard={s}: repeats = \"auto\" is not run sharded yet; give a number of repeats"
        ));
    }
    for &clients in &c.clients {
        if u64::from(clients) < s.count {
            return Err(format!(
                "--shard={s}: clients = {clients} is fewer than the {} shards; every shard needs a client",
                s.count
            ));
        }
    }
    Ok(())
}

/// The start barrier's name for a cell's repeat, the same in every shard:
/// `campaign:NAME/CELL/REPEAT`, without spaces (it is a tag's value that
/// selectors name).
pub(crate) fn barrier_name(c: &Campaign, cell: &Cell) -> String {
    format!("campaign:{}/{}/{}", c.name, cell.key(c), cell.repeat)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join("_")
}

/// Records this shard's arrival at the cell's barrier and waits for the
/// others.
pub(crate) fn meet(
    store: &mut Store,
    c: &Campaign,
    cell: &Cell,
    shard: Shard,
    stop: &StopHandle,
) -> Result<Meeting, BarrierError> {
    let b = Barrier {
        name: barrier_name(c, cell),
        shard: shard.index,
        shards: shard.count,
        timeout: Duration::from_secs_f64(c.shard_timeout),
        margin: Duration::from_secs_f64(c.start_margin),
        host: dbmeter_env::hostname(),
    };
    store.meet(&b, POLL, &|| stop.is_stopped())
}

/// The run options that make a cell's run this shard's, starting at the
/// meeting's common start.
pub(crate) fn run_options(shard: Shard, m: &Meeting) -> Vec<(String, String)> {
    vec![
        ("shard".into(), shard.to_string()),
        ("start-at".into(), format!("{:.3}", m.start_unix_s)),
    ]
}

/// How a shard's own result is stored: outside the campaign (no campaign,
/// variant or cell, so that `--resume`, `compare` and `report` see only
/// the merged run), tagged so that it can be found:
/// `tag:shard-campaign=NAME`, `tag:shard-set=TOKEN` (one meeting's shards).
pub(crate) fn shard_meta(c: &Campaign, cell: &Cell, shard: Shard, m: &Meeting) -> RunMeta {
    RunMeta {
        tags: vec![
            ("shard-campaign".into(), c.name.clone()),
            ("shard-cell".into(), cell.key(c)),
            ("shard-repeat".into(), cell.repeat.to_string()),
            ("shard".into(), shard.to_string()),
            ("shard-set".into(), m.token.clone()),
        ],
        ..RunMeta::default()
    }
}

/// Shard 0, after its own run: waits (up to the campaign's
/// `shard_timeout`) until every shard of meeting `m` has stored its
/// result, and merges those that measured. A shard missing or failed
/// makes the merged run failed, its error saying which; a merge with no
/// shard's measurement is an error.
pub(crate) fn merge_cell(
    store: &mut Store,
    c: &Campaign,
    count: u64,
    m: &Meeting,
    stop: &StopHandle,
) -> Result<RunDocument, String> {
    let filter = Filter {
        selectors: vec![Selector::Tag {
            key: "shard-set".into(),
            value: m.token.clone(),
        }],
    };
    let began = Instant::now();
    let timeout = Duration::from_secs_f64(c.shard_timeout);
    loop {
        let n = store.runs(&filter).map_err(|e| e.to_string())?.len() as u64;
        if n >= count || began.elapsed() >= timeout || stop.is_stopped() {
            break;
        }
        std::thread::sleep(POLL);
    }
    let mut input = Vec::new();
    let mut failed = Vec::new();
    for r in store.documents(&filter).map_err(|e| e.to_string())? {
        let which = r.summary.tag("shard").unwrap_or("?").to_string();
        match RunDocument::from_json(&r.document) {
            Ok(d) if d.shard.is_some() => input.push((format!("run #{}", r.summary.id), d)),
            Ok(d) => failed.push(format!(
                "shard {which} failed before measuring: {}",
                d.end.error.unwrap_or_default()
            )),
            Err(e) => failed.push(format!("shard {which} (run #{}): {e}", r.summary.id)),
        }
    }
    if input.is_empty() {
        let why = if failed.is_empty() {
            format!(
                "no shard stored a result within {} s",
                timeout.as_secs_f64()
            )
        } else {
            failed.join("; ")
        };
        return Err(format!("no shard measured: {why}"));
    }
    let mut doc = registry::merge_shards(input).map_err(|e| e.to_string())?;
    let info = doc.merged.get_or_insert_with(Default::default);
    info.notes.extend(failed);
    let whole = info.missing.is_empty();
    let notes = info.notes.clone();
    if !whole {
        doc.end = EndInfo {
            reason: "failed".into(),
            error: Some(notes.join("; ")),
        };
    }
    Ok(doc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn campaign(extra: &str, target: &str) -> Campaign {
        let text = format!(
            "name = \"t\"\nduration = 1\nclients = [2, 4]\n{extra}\n[[target]]\nname = \"a\"\n{target}\n[[workload]]\nname = \"noop\"\n"
        );
        Campaign::parse(&text, Path::new("t.toml"), &[], &[]).unwrap()
    }

    fn shard(text: &str) -> Option<Shard> {
        Some(Shard::parse(text).unwrap())
    }

    #[test]
    fn what_a_sharded_campaign_refuses() {
        let url = "url = \"sqlite:a.db\"";
        assert_eq!(check_shards(&campaign("", url), None), Ok(()));
        assert_eq!(check_shards(&campaign("", url), shard("1/2")), Ok(()));
        assert_eq!(
            check_shards(&campaign("shards = 2", url), shard("0/2")),
            Ok(())
        );
        let e = check_shards(&campaign("shards = 2", url), None).unwrap_err();
        assert!(e.contains("--shard=I/2 with I from 0 to 1"), "{e}");
        let e = check_shards(&campaign("shards = 2", url), shard("0/3")).unwrap_err();
        assert!(e.contains("runs as 2 shards"), "{e}");
        let e = check_shards(&campaign("", "server = \"mariadb\""), shard("0/2")).unwrap_err();
        assert!(
            e.contains("target a is a server the campaign starts"),
            "{e}"
        );
        let e = check_shards(&campaign("repeats = \"auto\"", url), shard("0/2")).unwrap_err();
        assert!(e.contains("repeats = \"auto\""), "{e}");
        let e = check_shards(&campaign("", url), shard("0/3")).unwrap_err();
        assert!(e.contains("clients = 2 is fewer than the 3 shards"), "{e}");
        // Out of range in the file: the line is named.
        let text = "name = \"t\"\nduration = 1\nclients = [1]\nshards = 0\n[[target]]\nname = \"a\"\n[[workload]]\nname = \"noop\"\n";
        let e = Campaign::parse(text, Path::new("t.toml"), &[], &[]).unwrap_err();
        assert!(e.contains("line 4") && e.contains("shards = 0"), "{e}");
        let text = text.replace("shards = 0", "shard_timeout = -1");
        let e = Campaign::parse(&text, Path::new("t.toml"), &[], &[]).unwrap_err();
        assert!(e.contains("shard_timeout = -1"), "{e}");
    }
}
