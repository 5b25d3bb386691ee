//! The store's promises, checked the same way on an SQLite file and on a
//! throwaway PostgreSQL server.

use dbmeter_server::Flavor;
use dbmeter_store::{AdaptiveCell, CellStop, Filter, RunMeta, Selector, Store};

fn doc(workload: &str, threads: u32, reason: &str, tps: f64) -> String {
    serde_json::json!({
        "schema": "dbmeter.run",
        "schema_version": 1,
        "started_at": "2026-01-02T03:04:05Z",
        "workload": workload,
        "target": {"url": "sqlite:x.db", "driver": "sqlite", "server_version": "SQLite 3"},
        "threads": threads,
        "end": {"reason": reason, "error": null},
        "totals": {"duration_s": 10.0, "events": (tps * 10.0) as i64, "events_per_s": tps,
                   "queries": (tps * 100.0) as i64, "queries_per_s": tps * 10.0, "reconnects": 0},
        "latency_ms": {"count": 5, "min_ms": 0.1, "avg_ms": 1.25, "max_ms": 9.0, "sum_ms": 6.25,
                       "percentiles": [{"percentile": 95.0, "ms": 2.5}, {"percentile": 99.0, "ms": 4.5}]},
        "errors": {"1213": 2, "1205": 1},
        "environment": {"hostname": "box"},
        "dbmeter": {"version": "0.1.0"}
    })
    .to_string()
}

fn meta(campaign: &str, variant: &str, cell: &str, repeat: u32, tags: &[(&str, &str)]) -> RunMeta {
    RunMeta {
        campaign: Some(campaign.into()),
        variant: Some(variant.into()),
        cell: Some(cell.into()),
        repeat: Some(repeat),
        tags: tags
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    }
}

/// Everything both backends must do alike.
fn contract(spec: &str) {
    let mut st = Store::open(spec).unwrap();
    assert_eq!(st.schema_version().unwrap(), dbmeter_store::SCHEMA_VERSION);
    let d1 = doc("oltp_read_only", 4, "time_limit", 100.0);
    let id1 = st
        .save(
            &d1,
            &meta(
                "c1",
                "A",
                "oltp_read_only/A/4",
                1,
                &[("phase", "before"), ("k", "1"), ("k", "2")],
            ),
        )
        .unwrap();
    let id2 = st
        .save(
            &doc("oltp_read_only", 4, "interrupted", 50.0),
            &meta("c1", "A", "oltp_read_only/A/4", 2, &[]),
        )
        .unwrap();
    // A failed cell's short document.
    let failed = r#"{"schema":"dbmeter.run","schema_version":1,"workload":"oltp_read_only","threads":4,"target":{"url":"postgres://u:***@h:5432/db"},"end":{"reason":"failed","error":"connection refused"}}"#;
    let id3 = st
        .save(failed, &meta("c1", "B", "oltp_read_only/B/4", 1, &[]))
        .unwrap();
    let id4 = st
        .save(
            &doc("oltp_point_select", 1, "event_limit", 900.0),
            &RunMeta::default(),
        )
        .unwrap();
    assert!(id1 < id2 && id2 < id3 && id3 < id4);

    // Completed cells only.
    assert!(st.has_cell("c1", "oltp_read_only/A/4", 1).unwrap());
    assert!(
        !st.has_cell("c1", "oltp_read_only/A/4", 2).unwrap(),
        "interrupted"
    );
    assert!(
        !st.has_cell("c1", "oltp_read_only/B/4", 1).unwrap(),
        "failed"
    );
    assert!(!st.has_cell("c2", "oltp_read_only/A/4", 1).unwrap());

    let all = st.runs(&Filter::all()).unwrap();
    assert_eq!(
        all.iter().map(|r| r.id).collect::<Vec<_>>(),
        vec![id1, id2, id3, id4]
    );
    let r1 = &all[0];
    assert_eq!(r1.workload, "oltp_read_only");
    assert_eq!(r1.threads, Some(4));
    assert_eq!(r1.events_per_s, Some(100.0));
    assert_eq!(r1.queries_per_s, Some(1000.0));
    assert_eq!(r1.latency_p95_ms, Some(2.5));
    assert_eq!(r1.latency_p99_ms, Some(4.5));
    assert_eq!(r1.latency_avg_ms, Some(1.25));
    assert_eq!(r1.errors, Some(3));
    assert_eq!(r1.hostname.as_deref(), Some("box"));
    assert_eq!(r1.started_at.as_deref(), Some("2026-01-02T03:04:05Z"));
    assert_eq!(r1.campaign.as_deref(), Some("c1"));
    assert_eq!(r1.repeat, Some(1));
    assert!(r1.completed());
    // A key given twice keeps its last value; tags come sorted by key.
    assert_eq!(
        r1.tags,
        vec![("k".into(), "2".into()), ("phase".into(), "before".into())]
    );
    let r3 = &all[2];
    assert_eq!(r3.end_reason, "failed");
    assert_eq!(r3.end_error.as_deref(), Some("connection refused"));
    assert_eq!(r3.events_per_s, None);
    assert_eq!(r3.latency_p99_ms, None);
    assert_eq!(all[3].campaign, None);

    // The document comes back byte for byte.
    let stored = st.run(id1).unwrap().unwrap();
    assert_eq!(stored.document, d1);
    assert_eq!(stored.summary, *r1);
    assert_eq!(st.run(id3).unwrap().unwrap().document, failed);
    assert!(st.run(id4 + 100).unwrap().is_none());

    // Selectors.
    let ids = |st: &mut Store, words: &[&str]| -> Vec<i64> {
        st.runs(&Filter::parse(words).unwrap())
            .unwrap()
            .iter()
            .map(|r| r.id)
            .collect()
    };
    assert_eq!(ids(&mut st, &["tag:phase=before"]), vec![id1]);
    assert_eq!(ids(&mut st, &["tag:phase=after"]), Vec::<i64>::new());
    assert_eq!(ids(&mut st, &["variant:A"]), vec![id1, id2]);
    assert_eq!(ids(&mut st, &["campaign:c1", "variant:B"]), vec![id3]);
    assert_eq!(ids(&mut st, &["workload:oltp_point_select"]), vec![id4]);
    assert_eq!(ids(&mut st, &["threads:4"]), vec![id1, id2, id3]);
    let two = format!("run:{id1},{id4}");
    assert_eq!(ids(&mut st, &[&two]), vec![id1, id4]);
    let docs = st.documents(&Filter::parse(&[&two]).unwrap()).unwrap();
    assert_eq!(docs.len(), 2);
    assert_eq!(docs[0].document, d1);

    // Refusals.
    for bad in [
        "not json",
        r#"{"schema":"x"}"#,
        r#"{"schema":"dbmeter.run","workload":"w"}"#,
    ] {
        assert!(st.save(bad, &RunMeta::default()).is_err(), "{bad}");
    }
    assert_eq!(
        st.runs(&Filter::all()).unwrap().len(),
        4,
        "nothing half-saved"
    );
    assert!(st.delete(&Filter::all()).is_err());

    // Delete takes tags and documents along; ids are not reused.
    assert_eq!(st.delete(&Filter::ids(&[id1, id3])).unwrap(), 2);
    assert_eq!(ids(&mut st, &["tag:phase=before"]), Vec::<i64>::new());
    assert!(st.run(id1).unwrap().is_none());
    assert_eq!(
        st.delete(&Filter {
            selectors: vec![Selector::Variant("none-such".into())]
        })
        .unwrap(),
        0
    );
    let id5 = st.save(&d1, &RunMeta::default()).unwrap();
    assert!(id5 > id4);

    // Comparisons read the same rows.
    let mut st2 = Store::open(spec).unwrap();
    assert_eq!(st2.runs(&Filter::all()).unwrap().len(), 3);

    // Adaptive repeats: a cell's row is replaced as it runs again; rows
    // come back by campaign and cell.
    let cell = |cell: &str, runs: u32, width: Option<f64>, stop: CellStop| AdaptiveCell {
        campaign: "c1".into(),
        cell: cell.into(),
        runs,
        completed: runs,
        ci_width: width,
        target_width: 0.05,
        max_repeats: 6,
        stop,
        updated_at: String::new(),
    };
    assert!(st.adaptive_cells(&["c1"]).unwrap().is_empty());
    st.save_adaptive_cell(&cell("w/B/8", 1, None, CellStop::Open))
        .unwrap();
    st.save_adaptive_cell(&cell("w/A/4", 4, Some(0.2), CellStop::Open))
        .unwrap();
    st.save_adaptive_cell(&cell("w/A/4", 6, Some(0.125), CellStop::MaxRepeats))
        .unwrap();
    let got = st2.adaptive_cells(&["c1", "c2"]).unwrap();
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(
        (
            got[0].cell.as_str(),
            got[0].runs,
            got[0].ci_width,
            got[0].stop
        ),
        ("w/A/4", 6, Some(0.125), CellStop::MaxRepeats)
    );
    assert!(got[0].updated_at.ends_with('Z'), "{:?}", got[0]);
    assert_eq!(
        got[0].describe(),
        "6 runs (6 completed), 95% CI width 12% (target 5%): stopped at max_repeats (6)"
    );
    assert_eq!((got[1].cell.as_str(), got[1].ci_width), ("w/B/8", None));
    assert_eq!(
        got[1].describe(),
        "1 run (1 completed), no interval yet (target 5%): open"
    );

    // They go with the campaign's last run, and only then.
    let in_c1 = |repeat| RunMeta {
        campaign: Some("c1".into()),
        cell: Some("w/A/4".into()),
        repeat: Some(repeat),
        ..RunMeta::default()
    };
    let c1a = st.save(&d1, &in_c1(1)).unwrap();
    let c1b = st.save(&d1, &in_c1(2)).unwrap();
    assert_eq!(st.delete(&Filter::ids(&[id5, c1a])).unwrap(), 2);
    assert_eq!(st.adaptive_cells(&["c1"]).unwrap().len(), 2);
    // id2 and c1b were the campaign's last runs.
    assert_eq!(st.delete(&Filter::ids(&[id2, c1b])).unwrap(), 2);
    assert!(st.adaptive_cells(&["c1"]).unwrap().is_empty());
}

#[test]
fn sqlite_store() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("deeper/still/results.db");
    contract(path.to_str().unwrap());
    assert!(path.is_file());
}

#[test]
fn postgres_store() {
    let Some(server) = dbmeter_testkit::servers::start(Flavor::Postgres) else {
        return;
    };
    contract(&server.url());
    // Several processes (here: connections) opening a new store at once.
    let url = server.url().replace("/test", "/postgres");
    let threads: Vec<_> = (0..3)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || {
                let mut st = Store::open(&url)?;
                st.save(&doc("w", 1, "time_limit", 1.0), &RunMeta::default())
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap().unwrap();
    }
}

#[test]
fn sqlite_writers_in_parallel_do_not_fail() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.db").to_str().unwrap().to_string();
    let threads: Vec<_> = (0..4)
        .map(|i| {
            let path = path.clone();
            std::thread::spawn(move || {
                let mut st = Store::open(&path).unwrap();
                for j in 0..25 {
                    st.save(
                        &doc("w", i + 1, "time_limit", f64::from(j)),
                        &meta("c", "v", "cell", j, &[("writer", &i.to_string())]),
                    )
                    .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let mut st = Store::open(&path).unwrap();
    assert_eq!(st.runs(&Filter::all()).unwrap().len(), 100);
}

#[test]
fn sqlite_refusals() {
    let dir = tempfile::tempdir().unwrap();
    // Some other SQLite database.
    let other = dir.path().join("bench.sqlite");
    rusqlite::Connection::open(&other)
        .unwrap()
        .execute_batch("CREATE TABLE sbtest1 (id INTEGER)")
        .unwrap();
    let e = Store::open(other.to_str().unwrap()).err().unwrap().0;
    assert!(
        e.contains("not a dbmeter results store") && e.contains("sbtest1"),
        "{e}"
    );
    // Not a database at all.
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "hello, this is not a database file at all....").unwrap();
    let e = Store::open(text.to_str().unwrap()).err().unwrap().0;
    assert!(e.starts_with("cannot open the results store"), "{e}");
    // A directory.
    let e = Store::open(dir.path().to_str().unwrap()).err().unwrap().0;
    assert!(e.contains("directory"), "{e}");
    // Written by a newer dbmeter.
    let newer = dir.path().join("newer.db");
    drop(Store::open(newer.to_str().unwrap()).unwrap());
    rusqlite::Connection::open(&newer)
        .unwrap()
        .execute_batch(
            "INSERT INTO store_migrations (version, description, applied_at) VALUES (99, 'future', 'now')",
        )
        .unwrap();
    let e = Store::open(newer.to_str().unwrap()).err().unwrap().0;
    assert!(
        e.contains("schema version 99") && e.contains("newer dbmeter"),
        "{e}"
    );
}
