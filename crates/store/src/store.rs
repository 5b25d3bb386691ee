//! [`Store`]: open (creating and migrating the schema), save, list, read,
//! delete, and the runs of a filter.

use crate::backend::{self, Backend, Location, Param, Row, SqlValue};
use crate::summary::FigureValue;
use crate::{Filter, RunMeta, RunSummary, StoreError, document, schema};
use std::collections::BTreeMap;
use std::time::SystemTime;

/// A stored run: its row and its whole document, as it was saved.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredRun {
    pub summary: RunSummary,
    /// The run document (JSON), byte for byte as given to [`Store::save`].
    pub document: String,
}

/// An open results store.
pub struct Store {
    pub(crate) db: Backend,
    loc: Location,
    shown: String,
}

pub(crate) fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(SystemTime::now()).to_string()
}

const SUMMARY_COLUMNS: &str = "runs.id, runs.stored_at, runs.started_at, runs.campaign, runs.variant, runs.cell, runs.repeat, \
     runs.workload, runs.target_url, runs.driver, runs.server_version, runs.threads, runs.end_reason, runs.end_error, \
     runs.duration_s, runs.events, runs.events_per_s, runs.queries, runs.queries_per_s, \
     runs.latency_avg_ms, runs.latency_p95_ms, runs.latency_p99_ms, runs.latency_max_ms, \
     runs.errors, runs.reconnects, runs.hostname, runs.dbmeter_version";

fn summary_from(row: &Row) -> RunSummary {
    let get = |i: usize| row.get(i).cloned().unwrap_or(SqlValue::Null);
    let small = |i: usize| get(i).int().and_then(|v| u32::try_from(v).ok());
    RunSummary {
        id: get(0).int().unwrap_or(0),
        stored_at: get(1).text().unwrap_or_default(),
        started_at: get(2).text(),
        campaign: get(3).text(),
        variant: get(4).text(),
        cell: get(5).text(),
        repeat: small(6),
        workload: get(7).text().unwrap_or_default(),
        target_url: get(8).text(),
        driver: get(9).text(),
        server_version: get(10).text(),
        threads: small(11),
        end_reason: get(12).text().unwrap_or_default(),
        end_error: get(13).text(),
        duration_s: get(14).real(),
        events: get(15).int(),
        events_per_s: get(16).real(),
        queries: get(17).int(),
        queries_per_s: get(18).real(),
        latency_avg_ms: get(19).real(),
        latency_p95_ms: get(20).real(),
        latency_p99_ms: get(21).real(),
        latency_max_ms: get(22).real(),
        errors: get(23).int(),
        reconnects: get(24).int(),
        hostname: get(25).text(),
        dbmeter_version: get(26).text(),
        tags: Vec::new(),
        figures: Vec::new(),
        figure: None,
    }
}

impl Store {
    /// Opens the store `spec`: a file path (SQLite; created with its parent
    /// directories; `sqlite:PATH` works too) or a `postgres://` /
    /// `postgresql://` URL. Creates the schema, or migrates it to this
    /// build's version; refuses a store written by a newer dbmeter.
    pub fn open(spec: &str) -> Result<Store, StoreError> {
        let loc = Location::parse(spec)?;
        let shown = loc.shown();
        let mut db = Backend::open(&loc)?;
        schema::migrate(&mut db, &shown)?;
        Ok(Store { db, loc, shown })
    }

    /// [`Store::open`] for reading: a file store that does not exist yet is
    /// an error instead of being created.
    pub fn open_existing(spec: &str) -> Result<Store, StoreError> {
        if let Location::File(path) = Location::parse(spec)?
            && !path.exists()
        {
            return Err(StoreError::new(format!(
                "there is no results store '{}' (runs are stored with `dbmeter run ... --store`)",
                path.display()
            )));
        }
        Store::open(spec)
    }

    /// Connects again when a PostgreSQL store's connection was closed (the
    /// server restarted during a long run, say).
    fn reconnect_if_closed(&mut self) -> Result<(), StoreError> {
        if self.db.is_closed() {
            self.db = Backend::open(&self.loc)?;
        }
        Ok(())
    }

    /// The store as named in messages (a path, or the URL with its password
    /// masked).
    pub fn location(&self) -> &str {
        &self.shown
    }

    pub(crate) fn fail(&self, what: &str, e: String) -> StoreError {
        StoreError::new(format!("results store '{}': {what}: {e}", self.shown))
    }

    pub(crate) fn in_transaction<T>(
        &mut self,
        what: &str,
        f: impl FnOnce(&mut Backend) -> Result<T, String>,
    ) -> Result<T, StoreError> {
        let begin = match self.db.kind() {
            backend::Kind::Sqlite => "BEGIN IMMEDIATE",
            backend::Kind::Postgres => "BEGIN",
        };
        self.db.batch(begin).map_err(|e| self.fail(what, e))?;
        match f(&mut self.db) {
            Ok(v) => {
                self.db.batch("COMMIT").map_err(|e| self.fail(what, e))?;
                Ok(v)
            }
            Err(e) => {
                let _ = self.db.batch("ROLLBACK");
                Err(self.fail(what, e))
            }
        }
    }

    /// Stores one run document (the JSON `dbmeter run --format json`
    /// prints) with its meta; returns the new run's id. The document must
    /// be a `dbmeter.run` object with `workload` and `end.reason`; other
    /// fields may be missing (their columns stay NULL), as in the short
    /// document of a cell that failed before measuring.
    pub fn save(&mut self, json: &str, meta: &RunMeta) -> Result<i64, StoreError> {
        let (
            doc,
            document::Extracted {
                document_version,
                summary: x,
            },
        ) = document::extract(json)?;
        let (encoding, body) = document::encode(json)?;
        self.reconnect_if_closed()?;
        let mut tags: BTreeMap<&str, &str> = BTreeMap::new();
        for (k, v) in &meta.tags {
            if k.is_empty() {
                return Err(StoreError::new(format!("tag '={v}' has no key")));
            }
            tags.insert(k, v);
        }
        let text = |s: &Option<String>| Param::Text(s.clone());
        let params = vec![
            Param::Text(Some(now_rfc3339())),
            text(&x.started_at),
            text(&meta.campaign),
            text(&meta.variant),
            text(&meta.cell),
            Param::Int(meta.repeat.map(i64::from)),
            Param::Text(Some(x.workload.clone())),
            text(&x.target_url),
            text(&x.driver),
            text(&x.server_version),
            Param::Int(x.threads.map(i64::from)),
            Param::Text(Some(x.end_reason.clone())),
            text(&x.end_error),
            Param::Real(x.duration_s),
            Param::Int(x.events),
            Param::Real(x.events_per_s),
            Param::Int(x.queries),
            Param::Real(x.queries_per_s),
            Param::Real(x.latency_avg_ms),
            Param::Real(x.latency_p95_ms),
            Param::Real(x.latency_p99_ms),
            Param::Real(x.latency_max_ms),
            Param::Int(x.errors),
            Param::Int(x.reconnects),
            text(&x.hostname),
            text(&x.dbmeter_version),
            Param::Int(document_version),
        ];
        let insert = format!(
            "INSERT INTO runs (stored_at, started_at, campaign, variant, cell, repeat, workload, target_url, driver, \
             server_version, threads, end_reason, end_error, duration_s, events, events_per_s, queries, queries_per_s, \
             latency_avg_ms, latency_p95_ms, latency_p99_ms, latency_max_ms, errors, reconnects, hostname, \
             dbmeter_version, document_version) VALUES ({}) RETURNING id",
            vec!["?"; params.len()].join(", ")
        );
        self.in_transaction("cannot save the run", |db| {
            let rows = db.query(&insert, &params)?;
            let id = rows
                .first()
                .and_then(|r| r.first())
                .and_then(SqlValue::int)
                .ok_or_else(|| "the database returned no run id".to_string())?;
            db.execute(
                "INSERT INTO documents (run_id, encoding, body) VALUES (?, ?, ?)",
                &[
                    Param::Int(Some(id)),
                    Param::Text(Some(encoding.to_string())),
                    Param::Blob(Some(body)),
                ],
            )?;
            for (i, f) in doc.figures.iter().enumerate() {
                db.execute(
                    "INSERT INTO figures (run_id, position, name, value, min_value, max_value, unit, lower_is_better, status) \
                     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    &[
                        Param::Int(Some(id)),
                        Param::Int(Some(i as i64)),
                        Param::Text(Some(f.name.clone())),
                        Param::Real(f.value),
                        Param::Real(f.min),
                        Param::Real(f.max),
                        Param::Text(Some(f.unit.clone())),
                        Param::Int(Some(i64::from(f.lower_is_better))),
                        Param::Text(Some(f.status.clone())),
                    ],
                )?;
            }
            for (k, v) in &tags {
                db.execute(
                    "INSERT INTO tags (run_id, key, value) VALUES (?, ?, ?)",
                    &[
                        Param::Int(Some(id)),
                        Param::Text(Some(k.to_string())),
                        Param::Text(Some(v.to_string())),
                    ],
                )?;
            }
            Ok(id)
        })
    }

    /// True when a completed run (end reason `time_limit` or
    /// `event_limit`) of this campaign, cell and repeat is stored.
    pub fn has_cell(
        &mut self,
        campaign: &str,
        cell: &str,
        repeat: u32,
    ) -> Result<bool, StoreError> {
        let completed: Vec<String> = crate::COMPLETED_REASONS
            .iter()
            .map(|r| format!("'{r}'"))
            .collect();
        let sql = format!(
            "SELECT COUNT(*) FROM runs WHERE campaign = ? AND cell = ? AND repeat = ? \
             AND end_reason IN ({})",
            completed.join(", ")
        );
        let rows = self
            .db
            .query(
                &sql,
                &[
                    Param::Text(Some(campaign.to_string())),
                    Param::Text(Some(cell.to_string())),
                    Param::Int(Some(i64::from(repeat))),
                ],
            )
            .map_err(|e| self.fail("cannot look up the cell", e))?;
        Ok(rows
            .first()
            .and_then(|r| r.first())
            .and_then(SqlValue::int)
            .unwrap_or(0)
            > 0)
    }

    /// The runs `filter` selects, oldest (lowest id) first, with their tags.
    pub fn runs(&mut self, filter: &Filter) -> Result<Vec<RunSummary>, StoreError> {
        let (clause, params) = filter.where_clause();
        let sql = format!("SELECT {SUMMARY_COLUMNS} FROM runs{clause} ORDER BY runs.id");
        let rows = self
            .db
            .query(&sql, &params)
            .map_err(|e| self.fail("cannot list runs", e))?;
        let mut runs: Vec<RunSummary> = rows.iter().map(summary_from).collect();
        let tag_sql = format!(
            "SELECT tags.run_id, tags.key, tags.value FROM tags WHERE tags.run_id IN (SELECT runs.id FROM runs{clause}) \
             ORDER BY tags.run_id, tags.key"
        );
        let tag_rows = self
            .db
            .query(&tag_sql, &params)
            .map_err(|e| self.fail("cannot list tags", e))?;
        let mut by_id: BTreeMap<i64, Vec<(String, String)>> = BTreeMap::new();
        for r in &tag_rows {
            if let (Some(id), Some(k), Some(v)) = (
                r.first().and_then(SqlValue::int),
                r.get(1).and_then(SqlValue::text),
                r.get(2).and_then(SqlValue::text),
            ) {
                by_id.entry(id).or_default().push((k, v));
            }
        }
        for run in &mut runs {
            if let Some(tags) = by_id.remove(&run.id) {
                run.tags = tags;
            }
        }
        let fig_sql = format!(
            "SELECT figures.run_id, figures.name, figures.value, figures.unit, figures.status FROM figures \
             WHERE figures.run_id IN (SELECT runs.id FROM runs{clause}) ORDER BY figures.run_id, figures.position"
        );
        let fig_rows = self
            .db
            .query(&fig_sql, &params)
            .map_err(|e| self.fail("cannot list figures", e))?;
        let mut figs: BTreeMap<i64, Vec<FigureValue>> = BTreeMap::new();
        for r in &fig_rows {
            if let (Some(id), Some(name)) = (
                r.first().and_then(SqlValue::int),
                r.get(1).and_then(SqlValue::text),
            ) {
                figs.entry(id).or_default().push(FigureValue {
                    name,
                    value: r.get(2).and_then(SqlValue::real),
                    unit: r.get(3).and_then(SqlValue::text).unwrap_or_default(),
                    status: r.get(4).and_then(SqlValue::text).unwrap_or_default(),
                });
            }
        }
        for run in &mut runs {
            if let Some(f) = figs.remove(&run.id) {
                run.figures = f;
            }
        }
        Ok(runs)
    }

    /// One run with its document, or None when there is no run `id`.
    pub fn run(&mut self, id: i64) -> Result<Option<StoredRun>, StoreError> {
        let Some(summary) = self.runs(&Filter::ids(&[id]))?.into_iter().next() else {
            return Ok(None);
        };
        let rows = self
            .db
            .query(
                "SELECT run_id, encoding, body FROM documents WHERE run_id = ?",
                &[Param::Int(Some(id))],
            )
            .map_err(|e| self.fail("cannot read the run document", e))?;
        let mut bodies = self.bodies(&rows)?;
        let document = bodies.remove(&id).unwrap_or_default();
        Ok(Some(StoredRun { summary, document }))
    }

    /// Decoded documents by run id, from rows (run_id, encoding, body).
    fn bodies(&self, rows: &[Row]) -> Result<BTreeMap<i64, String>, StoreError> {
        let mut out = BTreeMap::new();
        for r in rows {
            let (Some(id), Some(enc), Some(body)) = (
                r.first().and_then(SqlValue::int),
                r.get(1).and_then(SqlValue::text),
                r.get(2).and_then(SqlValue::bytes),
            ) else {
                continue;
            };
            let text =
                document::decode(&enc, &body).map_err(|e| self.fail(&format!("run #{id}"), e))?;
            out.insert(id, text);
        }
        Ok(out)
    }

    /// The runs `filter` selects with their documents, oldest first.
    pub fn documents(&mut self, filter: &Filter) -> Result<Vec<StoredRun>, StoreError> {
        let (clause, params) = filter.where_clause();
        let sql = format!(
            "SELECT documents.run_id, documents.encoding, documents.body FROM documents \
             WHERE documents.run_id IN (SELECT runs.id FROM runs{clause})"
        );
        let rows = self
            .db
            .query(&sql, &params)
            .map_err(|e| self.fail("cannot read run documents", e))?;
        let mut bodies = self.bodies(&rows)?;
        Ok(self
            .runs(filter)?
            .into_iter()
            .map(|summary| StoredRun {
                document: bodies.remove(&summary.id).unwrap_or_default(),
                summary,
            })
            .collect())
    }

    /// Deletes the runs `filter` selects (with their tags and documents);
    /// returns how many. An empty filter is refused: deleting every run
    /// takes a selector that says so.
    pub fn delete(&mut self, filter: &Filter) -> Result<usize, StoreError> {
        if filter.is_empty() {
            return Err(StoreError::new(
                "refusing to delete every run: give run ids or selectors",
            ));
        }
        let (clause, params) = filter.where_clause();
        self.in_transaction("cannot delete runs", |db| {
            let ids = format!("SELECT runs.id FROM runs{clause}");
            // Children first, for stores without foreign-key cascades.
            db.execute(
                &format!("DELETE FROM tags WHERE run_id IN ({ids})"),
                &params,
            )?;
            db.execute(
                &format!("DELETE FROM documents WHERE run_id IN ({ids})"),
                &params,
            )?;
            let n = db.execute(&format!("DELETE FROM runs{clause}"), &params)?;
            // A campaign's adaptive-repeats rows go with its last run.
            db.execute(
                "DELETE FROM adaptive_cells WHERE campaign NOT IN \
                 (SELECT campaign FROM runs WHERE campaign IS NOT NULL)",
                &[],
            )?;
            Ok(n as usize)
        })
    }

    /// The schema version of the open store.
    pub fn schema_version(&mut self) -> Result<i64, StoreError> {
        let rows = self
            .db
            .query("SELECT MAX(version) FROM store_migrations", &[])
            .map_err(|e| self.fail("cannot read the schema version", e))?;
        Ok(rows
            .first()
            .and_then(|r| r.first())
            .and_then(SqlValue::int)
            .unwrap_or(0))
    }
}
