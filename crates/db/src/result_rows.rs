//! [`ResultRows`]: the rows of a statement's result, kept for a reader that
//! may or may not look at them (a script's result set). MariaDB/MySQL
//! results stay as the server sent them and a row is decoded when one of
//! its values is asked for; the other drivers' rows are decoded at once.

use crate::drivers::mysql::RawRows;
use crate::types::Value;

#[derive(Debug, Default)]
pub struct ResultRows {
    /// Every value, row after row (`raw` unused); or, with `raw`, the
    /// values of row `cached`.
    values: Vec<Option<Value>>,
    raw: RawRows,
    is_raw: bool,
    cached: Option<usize>,
    rows: usize,
    width: usize,
}

impl ResultRows {
    /// The number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The number of columns (also of a result without rows).
    pub fn width(&self) -> usize {
        self.width
    }

    /// Value `idx`, counting row after row (None for SQL NULL, or past the
    /// end).
    pub fn value(&mut self, idx: usize) -> Option<&Value> {
        if !self.is_raw {
            return self.values.get(idx)?.as_ref();
        }
        if self.width == 0 {
            return None;
        }
        let (row, col) = (idx / self.width, idx % self.width);
        if self.cached != Some(row) {
            self.values.clear();
            self.cached = None;
            self.raw.decode(row, &mut self.values).ok()?;
            self.cached = Some(row);
        }
        self.values.get(col)?.as_ref()
    }

    /// Forgets the rows.
    pub fn clear(&mut self) {
        self.values.clear();
        self.raw.clear();
        self.is_raw = false;
        self.cached = None;
        self.rows = 0;
        self.width = 0;
    }

    /// Room for decoded values (a driver without raw rows fills it).
    pub(crate) fn decoded(&mut self) -> &mut Vec<Option<Value>> {
        self.clear();
        &mut self.values
    }

    /// After [`ResultRows::decoded`] was filled with `rows` rows of
    /// `width` columns.
    pub(crate) fn set_decoded(&mut self, rows: u64, width: usize) {
        self.rows = rows as usize;
        self.width = width;
    }

    /// Room for raw MariaDB/MySQL rows.
    pub(crate) fn raw(&mut self) -> &mut RawRows {
        self.clear();
        self.is_raw = true;
        &mut self.raw
    }

    /// After [`ResultRows::raw`] was filled.
    pub(crate) fn set_raw(&mut self) {
        self.rows = self.raw.rows();
        self.width = self.raw.width();
    }
}
