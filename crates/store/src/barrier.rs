//! The start barrier of a sharded run, kept in the results store that the
//! shards share (an SQLite file on one machine, PostgreSQL across many).
//!
//! Each shard records its arrival at a named barrier (a row of
//! `barriers`: the barrier's name, its round, the shard, how many shards,
//! when it arrived by its own clock) and waits until all N have arrived.
//! Everyone then computes the same start from the same rows: the latest
//! arrival plus a margin, which the run takes as its `--start-at`.
//!
//! Rounds let one name serve again (a campaign run a second time, or
//! resumed): an arrival joins the newest round of its name when that
//! round still waits for this shard and is not stale (its last arrival is
//! less than the timeout ago, so someone may still be waiting there);
//! otherwise it opens the next round. A shard that gives up (timeout,
//! Ctrl-C) takes its row back, so that a later round does not count it.

use crate::backend::{Kind, Param, SqlValue};
use crate::{Store, StoreError};
use std::fmt;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// One shard's place at a barrier.
#[derive(Clone, Debug)]
pub struct Barrier {
    /// Names the barrier: the shards of one run give the same name.
    pub name: String,
    /// This shard, from 0 to `shards - 1`.
    pub shard: u64,
    pub shards: u64,
    /// How long to wait for the others.
    pub timeout: Duration,
    /// Added to the latest arrival: the common start leaves every shard
    /// this long to see the last arrival and set up its run.
    pub margin: Duration,
    /// This machine's name, recorded with the arrival (for messages).
    pub host: String,
}

/// All shards arrived.
#[derive(Clone, Debug, PartialEq)]
pub struct Meeting {
    /// The round of the barrier's name this meeting was.
    pub round: i64,
    /// The common start, seconds since the Unix epoch.
    pub start_unix_s: f64,
    /// `NAME#ROUND`: names this meeting among all of the store's, the
    /// same for every shard that met.
    pub token: String,
}

/// Why a barrier did not let its shard go.
#[derive(Clone, Debug, PartialEq)]
pub enum BarrierError {
    Store(StoreError),
    /// Not everyone came in time; the message names the missing shards.
    Timeout(String),
    /// The stop callback said stop.
    Stopped,
}

impl fmt::Display for BarrierError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BarrierError::Store(e) => e.fmt(f),
            BarrierError::Timeout(m) => f.write_str(m),
            BarrierError::Stopped => f.write_str("stopped while waiting at the start barrier"),
        }
    }
}

impl From<StoreError> for BarrierError {
    fn from(e: StoreError) -> Self {
        BarrierError::Store(e)
    }
}

/// The PostgreSQL advisory lock held while a shard arrives (the
/// migrations' lock plus one).
const PG_BARRIER_LOCK: i64 = crate::schema::PG_LOCK + 1;

pub(crate) fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// One row of a round: (shard, shards, arrived_at).
type Arrival = (u64, u64, f64);

fn arrivals(rows: &[Vec<SqlValue>]) -> Vec<Arrival> {
    rows.iter()
        .filter_map(|r| {
            let shard = r.first()?.int()?;
            let shards = r.get(1)?.int()?;
            let at = r.get(2)?.real()?;
            Some((u64::try_from(shard).ok()?, u64::try_from(shards).ok()?, at))
        })
        .collect()
}

impl Store {
    /// Records this shard's arrival at barrier `b` and waits until all
    /// its shards have arrived, polling every `poll`; `stopped` is asked
    /// between polls. Returns the meeting (the common start), or why not:
    /// a timeout names the shards that did not come.
    pub fn meet(
        &mut self,
        b: &Barrier,
        poll: Duration,
        stopped: &dyn Fn() -> bool,
    ) -> Result<Meeting, BarrierError> {
        if b.shards == 0 || b.shard >= b.shards {
            return Err(BarrierError::Store(StoreError::new(format!(
                "start barrier '{}': shard {}/{} does not exist",
                b.name, b.shard, b.shards
            ))));
        }
        let round = self.arrive(b)?;
        let began = Instant::now();
        loop {
            let rows = self.round(&b.name, round)?;
            if let Some(&(i, n, _)) = rows.iter().find(|(_, n, _)| *n != b.shards) {
                self.withdraw(&b.name, round, b.shard);
                return Err(BarrierError::Store(StoreError::new(format!(
                    "start barrier '{}': shard {i}/{n} arrived, but this is shard {}/{}: the shards disagree on their number",
                    b.name, b.shard, b.shards
                ))));
            }
            if rows.len() as u64 >= b.shards {
                let latest = rows.iter().map(|r| r.2).fold(f64::NEG_INFINITY, f64::max);
                return Ok(Meeting {
                    round,
                    start_unix_s: latest + b.margin.as_secs_f64(),
                    token: format!("{}#{round}", b.name),
                });
            }
            if stopped() {
                self.withdraw(&b.name, round, b.shard);
                return Err(BarrierError::Stopped);
            }
            if began.elapsed() >= b.timeout {
                self.withdraw(&b.name, round, b.shard);
                let missing: Vec<String> = (0..b.shards)
                    .filter(|i| !rows.iter().any(|r| r.0 == *i))
                    .map(|i| format!("{i}/{}", b.shards))
                    .collect();
                return Err(BarrierError::Timeout(format!(
                    "start barrier '{}': shard{} {} did not arrive within {} s (do they run, against the results store '{}'?)",
                    b.name,
                    if missing.len() == 1 { "" } else { "s" },
                    missing.join(", "),
                    b.timeout.as_secs_f64(),
                    self.location()
                )));
            }
            std::thread::sleep(poll.min(b.timeout.saturating_sub(began.elapsed())));
        }
    }

    /// Records the arrival; returns its round.
    fn arrive(&mut self, b: &Barrier) -> Result<i64, StoreError> {
        let kind = self.db.kind();
        let now = unix_now();
        let stale_before = now - b.timeout.as_secs_f64();
        let name = b.name.clone();
        let (shard, shards) = (b.shard, b.shards);
        let host = b.host.clone();
        self.in_transaction("cannot record the arrival at the start barrier", |db| {
            if kind == Kind::Postgres {
                db.execute(
                    "SELECT pg_advisory_xact_lock(?)",
                    &[Param::Int(Some(PG_BARRIER_LOCK))],
                )?;
            }
            let newest = db
                .query(
                    "SELECT MAX(round_no) FROM barriers WHERE name = ?",
                    &[Param::Text(Some(name.clone()))],
                )?
                .first()
                .and_then(|r| r.first())
                .and_then(SqlValue::int)
                .unwrap_or(0);
            let rows = arrivals(&db.query(
                "SELECT shard, shards, arrived_at FROM barriers WHERE name = ? AND round_no = ?",
                &[Param::Text(Some(name.clone())), Param::Int(Some(newest))],
            )?);
            let open = newest > 0
                && !rows.iter().any(|r| r.0 == shard)
                && (rows.len() as u64) < rows.first().map_or(shards, |r| r.1)
                && rows.iter().any(|r| r.2 >= stale_before);
            let round = if open { newest } else { newest + 1 };
            db.execute(
                "INSERT INTO barriers (name, round_no, shard, shards, arrived_at, host) VALUES (?, ?, ?, ?, ?, ?)",
                &[
                    Param::Text(Some(name.clone())),
                    Param::Int(Some(round)),
                    Param::Int(i64::try_from(shard).ok()),
                    Param::Int(i64::try_from(shards).ok()),
                    Param::Real(Some(now)),
                    Param::Text(Some(host.clone())),
                ],
            )?;
            Ok(round)
        })
    }

    fn round(&mut self, name: &str, round: i64) -> Result<Vec<Arrival>, StoreError> {
        let rows = self
            .db
            .query(
                "SELECT shard, shards, arrived_at FROM barriers WHERE name = ? AND round_no = ? ORDER BY shard",
                &[Param::Text(Some(name.to_string())), Param::Int(Some(round))],
            )
            .map_err(|e| self.fail("cannot read the start barrier", e))?;
        Ok(arrivals(&rows))
    }

    /// Takes a shard's arrival back (it gave up); best effort.
    fn withdraw(&mut self, name: &str, round: i64, shard: u64) {
        let _ = self.db.execute(
            "DELETE FROM barriers WHERE name = ? AND round_no = ? AND shard = ?",
            &[
                Param::Text(Some(name.to_string())),
                Param::Int(Some(round)),
                Param::Int(i64::try_from(shard).ok()),
            ],
        );
    }
}
