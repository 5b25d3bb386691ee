//! What adaptive repeats (`repeats = "auto"`) decided for each cell of a
//! campaign: its runs, the confidence interval's width they reached and why
//! it stopped repeating. The campaign writes a cell's row after each of its
//! runs, so a later `report` or `results list` can say which cells settled
//! and which ran out of repeats.

use crate::StoreError;
use crate::backend::{Param, SqlValue};
use crate::store::{Store, now_rfc3339};
use serde::Serialize;

/// Why a cell stopped repeating, or that it had not yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CellStop {
    /// Its interval came within the target width.
    Settled,
    /// It had its `max_repeats` runs first.
    MaxRepeats,
    /// Neither yet (the campaign was interrupted, or is still running).
    Open,
}

impl CellStop {
    fn word(self) -> &'static str {
        match self {
            CellStop::Settled => "settled",
            CellStop::MaxRepeats => "max_repeats",
            CellStop::Open => "open",
        }
    }

    fn from_word(w: &str) -> CellStop {
        match w {
            "settled" => CellStop::Settled,
            "max_repeats" => CellStop::MaxRepeats,
            _ => CellStop::Open,
        }
    }
}

/// One cell's adaptive repeats, as stored.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AdaptiveCell {
    pub campaign: String,
    /// The cell's key, as in the runs' `cell` column.
    pub cell: String,
    /// Runs made, completed or not.
    pub runs: u32,
    /// Completed runs (those whose throughput counts).
    pub completed: u32,
    /// The 95% interval's width relative to the median after the last
    /// completed run, once there were two.
    pub ci_width: Option<f64>,
    /// The width that settles a cell (`ci_width` of the campaign file).
    pub target_width: f64,
    pub max_repeats: u32,
    pub stop: CellStop,
    /// When the row was last written, RFC 3339 UTC.
    pub updated_at: String,
}

impl AdaptiveCell {
    /// "4 runs (4 completed), 95% CI width 1.8% (target 5%): settled".
    pub fn describe(&self) -> String {
        let width = self.ci_width.map_or("no interval yet".to_string(), |w| {
            format!("95% CI width {}", pct(w))
        });
        let why = match self.stop {
            CellStop::Settled => "settled".to_string(),
            CellStop::MaxRepeats => format!("stopped at max_repeats ({})", self.max_repeats),
            CellStop::Open => "open".to_string(),
        };
        format!(
            "{} run{} ({} completed), {width} (target {}): {why}",
            self.runs,
            if self.runs == 1 { "" } else { "s" },
            self.completed,
            pct(self.target_width)
        )
    }
}

/// A relative width as a percentage: "1.8%", "40%".
pub fn pct(f: f64) -> String {
    let p = f * 100.0;
    if p >= 10.0 || p == p.round() {
        format!("{p:.0}%")
    } else {
        format!("{p:.1}%")
    }
}

impl Store {
    /// Writes (or replaces) a cell's adaptive-repeats row.
    pub fn save_adaptive_cell(&mut self, c: &AdaptiveCell) -> Result<(), StoreError> {
        let key = [
            Param::Text(Some(c.campaign.clone())),
            Param::Text(Some(c.cell.clone())),
        ];
        let row = [
            Param::Text(Some(c.campaign.clone())),
            Param::Text(Some(c.cell.clone())),
            Param::Int(Some(i64::from(c.runs))),
            Param::Int(Some(i64::from(c.completed))),
            Param::Real(c.ci_width),
            Param::Real(Some(c.target_width)),
            Param::Int(Some(i64::from(c.max_repeats))),
            Param::Text(Some(c.stop.word().to_string())),
            Param::Text(Some(now_rfc3339())),
        ];
        self.in_transaction("cannot store the cell's adaptive repeats", |db| {
            db.execute(
                "DELETE FROM adaptive_cells WHERE campaign = ? AND cell = ?",
                &key,
            )?;
            db.execute(
                "INSERT INTO adaptive_cells (campaign, cell, runs, completed, ci_width, \
                 target_width, max_repeats, stop, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                &row,
            )?;
            Ok(())
        })
    }

    /// The adaptive-repeats rows of these campaigns, by campaign and cell.
    pub fn adaptive_cells(&mut self, campaigns: &[&str]) -> Result<Vec<AdaptiveCell>, StoreError> {
        let mut out = Vec::new();
        for name in campaigns {
            let rows = self
                .db
                .query(
                    "SELECT campaign, cell, runs, completed, ci_width, target_width, max_repeats, \
                     stop, updated_at FROM adaptive_cells WHERE campaign = ? ORDER BY cell",
                    &[Param::Text(Some(name.to_string()))],
                )
                .map_err(|e| self.fail("cannot read the cells' adaptive repeats", e))?;
            out.extend(rows.iter().map(|r| {
                let get = |i: usize| r.get(i).cloned().unwrap_or(SqlValue::Null);
                let count = |i: usize| {
                    get(i)
                        .int()
                        .and_then(|v| u32::try_from(v).ok())
                        .unwrap_or(0)
                };
                AdaptiveCell {
                    campaign: get(0).text().unwrap_or_default(),
                    cell: get(1).text().unwrap_or_default(),
                    runs: count(2),
                    completed: count(3),
                    ci_width: get(4).real(),
                    target_width: get(5).real().unwrap_or(0.0),
                    max_repeats: count(6),
                    stop: CellStop::from_word(&get(7).text().unwrap_or_default()),
                    updated_at: get(8).text().unwrap_or_default(),
                }
            }));
        }
        Ok(out)
    }
}
