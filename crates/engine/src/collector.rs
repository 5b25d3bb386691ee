//! Per-user statistics slots and their collection.
//!
//! Each user records every event into its own slot (latencies into a
//! [`LatencyRecorder`], which holds memory only for the buckets it uses,
//! so that thousands of users stay small), behind a spin lock that
//! only the collector ever contends for (once per interval, for the time of
//! a swap): taking it costs one atomic exchange and releasing it a plain
//! store. The collector swaps the slots' contents out at every interval
//! boundary, for the emptied contents it took the interval before: the
//! recorders are allocated once, not every interval.

use crate::result::{KindResult, PhaseResult, UserTotals};
use dbmeter_stats::{Counters, ErrorCounts, LatencyHistogram, LatencyRecorder};
use spin::mutex::SpinMutex;
use spin::relax::Yield;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

pub(crate) struct SlotStats {
    /// Latencies of the events of no kind (all of them when the run tells
    /// no kinds apart); an event of a kind is recorded in its kind's
    /// recorder only, and both are folded into the phase's latency.
    pub latency: LatencyRecorder,
    pub service: Option<LatencyRecorder>,
    pub counters: Counters,
    pub errors: ErrorCounts,
    /// Per kind of event (empty when the run tells no kinds apart).
    pub kinds: Vec<SlotKind>,
}

/// What a user's events of one kind did since the last collection.
#[derive(Default)]
pub(crate) struct SlotKind {
    pub events: u64,
    pub rolled_back: u64,
    pub retries: u64,
    pub latency: LatencyRecorder,
}

impl SlotStats {
    pub(crate) fn fresh(with_service: bool, kinds: usize) -> Self {
        SlotStats {
            latency: LatencyRecorder::new(),
            service: with_service.then(LatencyRecorder::new),
            counters: Counters::default(),
            errors: ErrorCounts::new(),
            kinds: (0..kinds).map(|_| SlotKind::default()).collect(),
        }
    }

    /// Empties the statistics, keeping the recorders' memory.
    fn clear(&mut self) {
        self.latency.clear();
        if let Some(s) = self.service.as_mut() {
            s.clear();
        }
        self.counters = Counters::default();
        self.errors.clear();
        for k in &mut self.kinds {
            k.events = 0;
            k.rolled_back = 0;
            k.retries = 0;
            k.latency.clear();
        }
    }

    /// The statistics of kind `k`, when kinds are told apart.
    #[inline]
    pub fn kind(&mut self, k: usize) -> Option<&mut SlotKind> {
        self.kinds.get_mut(k)
    }

    /// Records a completed event's latency: in its kind's recorder when
    /// it has one, else in the slot's.
    #[inline]
    pub fn record_done(&mut self, kind: usize, ns: u64, rolled_back: bool) {
        match self.kinds.get_mut(kind) {
            Some(k) => {
                k.events += 1;
                k.rolled_back += u64::from(rolled_back);
                k.latency.record(ns);
            }
            None => self.latency.record(ns),
        }
    }

    /// The sum of every event's latency.
    fn latency_sum(&self) -> u128 {
        self.latency.sum() + self.kinds.iter().map(|k| k.latency.sum()).sum::<u128>()
    }
}

/// Aligned so that two users' slots never share a cache line (or the
/// adjacent line the prefetcher pulls in with it).
#[repr(align(128))]
pub(crate) struct Slot {
    pub stats: SpinMutex<SlotStats, Yield>,
    /// The user left its loop (nothing of it to interrupt any more).
    pub finished: AtomicBool,
}

impl Slot {
    pub(crate) fn new(with_service: bool, kinds: usize) -> Self {
        Slot {
            stats: SpinMutex::new(SlotStats::fresh(with_service, kinds)),
            finished: AtomicBool::new(false),
        }
    }

    /// Moves what the user recorded since the last call into `into`, and
    /// leaves the slot with `into`'s former contents, emptied: the caller
    /// keeps one `SlotStats` per slot, so recorders are allocated once,
    /// not every interval (in the users' threads, which record).
    pub(crate) fn take_into(&self, into: &mut SlotStats) {
        into.clear();
        std::mem::swap(&mut *self.stats.lock(), into);
    }
}

/// Adds one interval's worth of slot contents into a phase.
pub(crate) fn add_into(phase: &mut PhaseResult, part: &SlotStats) {
    phase.counters.add(&part.counters);
    for (code, n) in &part.errors {
        *phase.errors.entry(code.clone()).or_insert(0) += n;
    }
    phase.latency.add_recorder(&part.latency);
    if let Some(s) = &part.service {
        phase
            .service
            .get_or_insert_with(LatencyHistogram::new)
            .add_recorder(s);
    }
    if phase.kinds.len() < part.kinds.len() {
        phase
            .kinds
            .resize_with(part.kinds.len(), KindResult::default);
    }
    for (into, k) in phase.kinds.iter_mut().zip(&part.kinds) {
        into.events += k.events;
        into.rolled_back += k.rolled_back;
        into.retries += k.retries;
        into.latency.add_recorder(&k.latency);
        phase.latency.add_recorder(&k.latency);
    }
}

/// Adds a user's share; its busy time is the time spent in events (service
/// time with a rate, where latency also counts waiting in the queue).
pub(crate) fn add_user_totals(t: &mut UserTotals, part: &SlotStats) {
    t.events += part.counters.events;
    t.errors += part.counters.errors();
    let busy = match &part.service {
        Some(s) => s.sum(),
        None => part.latency_sum(),
    };
    t.busy += Duration::from_nanos(busy as u64);
}
