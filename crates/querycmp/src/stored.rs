//! A comparison in the results store: one run document per side
//! (workload `compare-queries`, variant `A` or `B`), each query's time at
//! each temperature a figure (`Q1 cold`, `Q1 warm`), so that `dbmeter
//! compare` and `dbmeter report` read them as they read TPC-H's query
//! times.

use crate::model::{Comparison, SideResult};
use dbmeter_result::{
    EndInfo, Figure, RunDocument, SCHEMA_NAME, SCHEMA_VERSION, TargetInfo, ToolInfo,
};
use dbmeter_store::{RunMeta, Store};
use std::time::{Duration, UNIX_EPOCH};

/// The tag that ties the two runs of one comparison together.
pub const TAG: &str = "compare-queries";

fn figure(name: String, r: &SideResult, sql: &str) -> Figure {
    let times = &r.times_s;
    let several = times.len() > 1;
    Figure {
        name,
        value: r.time_s,
        min: several.then(|| times.iter().copied().fold(f64::INFINITY, f64::min)),
        max: several.then(|| times.iter().copied().fold(f64::NEG_INFINITY, f64::max)),
        unit: "s".into(),
        lower_is_better: true,
        status: if r.error.is_some() || r.time_s.is_none() {
            "error".into()
        } else {
            "ok".into()
        },
        detail: Some(sql.to_string()),
    }
}

/// The run documents of side A and side B.
pub fn documents(c: &Comparison) -> Vec<RunDocument> {
    let started = humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_secs(c.started_at))
        .to_string();
    c.sides
        .iter()
        .enumerate()
        .map(|(i, side)| {
            let other = c.sides.get(1 - i.min(1)).map_or("", |o| o.target.as_str());
            let figures = c
                .queries
                .iter()
                .flat_map(|q| {
                    q.temperatures.iter().map(move |t| {
                        let r = if i == 0 { &t.a } else { &t.b };
                        figure(format!("{} {}", q.id, t.temperature), r, &q.sql)
                    })
                })
                .collect();
            RunDocument {
                schema: SCHEMA_NAME.into(),
                schema_version: SCHEMA_VERSION,
                dbmeter: ToolInfo {
                    version: c.dbmeter_version.clone(),
                    ..ToolInfo::default()
                },
                started_at: started.clone(),
                workload: TAG.into(),
                target: TargetInfo {
                    url: side.target.clone(),
                    driver: side.kind.clone(),
                    server_version: side.version.clone(),
                },
                options: [
                    ("side".to_string(), side.label.clone()),
                    ("other".to_string(), other.to_string()),
                    ("runs".to_string(), c.runs.to_string()),
                    ("cold".to_string(), side.cold.clone()),
                ]
                .into_iter()
                .collect(),
                threads: 1,
                end: EndInfo {
                    reason: "work_done".into(),
                    error: None,
                },
                figures,
                ..RunDocument::default()
            }
        })
        .collect()
}

/// Stores both sides' documents in the store `spec`; their run ids (A,
/// B) and the store's location.
pub fn store(c: &Comparison, spec: &str) -> Result<(Vec<i64>, String), String> {
    let mut store = Store::open(spec).map_err(|e| e.0)?;
    let mut ids = Vec::new();
    for (doc, side) in documents(c).iter().zip(&c.sides) {
        let json = serde_json::to_string(doc)
            .map_err(|e| format!("cannot write the run document: {e}"))?;
        let meta = RunMeta {
            variant: Some(side.label.clone()),
            tags: vec![
                (TAG.to_string(), c.started_at.to_string()),
                ("side".to_string(), side.label.clone()),
            ],
            ..RunMeta::default()
        };
        ids.push(
            store
                .save(&json, &meta)
                .map_err(|e| format!("the comparison was not stored: {}", e.0))?,
        );
    }
    Ok((ids, store.location().to_string()))
}
