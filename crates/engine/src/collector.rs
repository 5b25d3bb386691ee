//! Per-user statistics slots and their collection.
//!
//! Each user records every event into its own slot (latencies into a
//! [`LatencyRecorder`], which holds memory only for the buckets it uses,
//! so that thousands of users stay small), behind a spin lock that
//! only the collector ever contends for (once per interval, for the time of
//! a swap): taking it costs one atomic exchange and releasing it a plain
//! store. The collector swaps the slots' contents out at every interval
//! boundary.

use crate::result::{KindResult, PhaseResult, UserTotals, add_kinds};
use dbmeter_stats::{Counters, ErrorCounts, LatencyHistogram, LatencyRecorder};
use spin::mutex::SpinMutex;
use spin::relax::Yield;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

#[derive(Default)]
pub(crate) struct SlotStats {
    pub latency: LatencyRecorder,
    pub service: Option<LatencyRecorder>,
    pub counters: Counters,
    pub errors: ErrorCounts,
    /// Per kind of event (empty when the run tells no kinds apart).
    pub kinds: Vec<KindResult>,
}

impl SlotStats {
    fn fresh(with_service: bool, kinds: usize) -> Self {
        SlotStats {
            latency: LatencyRecorder::new(),
            service: with_service.then(LatencyRecorder::new),
            counters: Counters::default(),
            errors: ErrorCounts::new(),
            kinds: (0..kinds).map(|_| KindResult::default()).collect(),
        }
    }

    /// The statistics of kind `k`, when kinds are told apart.
    #[inline]
    pub fn kind(&mut self, k: usize) -> Option<&mut KindResult> {
        self.kinds.get_mut(k)
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

    /// Takes what the user recorded since the last call, leaving a fresh
    /// set (empty recorders: they allocate when the user records).
    pub(crate) fn take(&self, with_service: bool, kinds: usize) -> SlotStats {
        let mut fresh = SlotStats::fresh(with_service, kinds);
        std::mem::swap(&mut *self.stats.lock(), &mut fresh);
        fresh
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
    add_kinds(&mut phase.kinds, &part.kinds);
}

/// Adds a user's share; its busy time is the time spent in events (service
/// time with a rate, where latency also counts waiting in the queue).
pub(crate) fn add_user_totals(t: &mut UserTotals, part: &SlotStats) {
    t.events += part.counters.events;
    let busy = part.service.as_ref().unwrap_or(&part.latency).sum();
    t.busy += Duration::from_nanos(busy as u64);
}
