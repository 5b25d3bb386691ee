//! Per-user statistics slots and their collection.
//!
//! Each user records every event into its own slot, behind a spin lock that
//! only the collector ever contends for (once per interval, for the time of
//! a swap): taking it costs one atomic exchange and releasing it a plain
//! store. The collector swaps the slots' contents out at every interval
//! boundary.

use crate::result::{PhaseResult, UserTotals};
use dbmeter_stats::{Counters, ErrorCounts, LatencyHistogram};
use spin::mutex::SpinMutex;
use spin::relax::Yield;
use std::time::Duration;

#[derive(Default)]
pub(crate) struct SlotStats {
    pub latency: LatencyHistogram,
    pub service: Option<LatencyHistogram>,
    pub counters: Counters,
    pub errors: ErrorCounts,
}

impl SlotStats {
    fn fresh(with_service: bool) -> Self {
        SlotStats {
            latency: LatencyHistogram::new(),
            service: with_service.then(LatencyHistogram::new),
            counters: Counters::default(),
            errors: ErrorCounts::new(),
        }
    }
}

/// Aligned so that two users' slots never share a cache line (or the
/// adjacent line the prefetcher pulls in with it).
#[repr(align(128))]
pub(crate) struct Slot {
    pub stats: SpinMutex<SlotStats, Yield>,
}

impl Slot {
    pub(crate) fn new(with_service: bool) -> Self {
        Slot {
            stats: SpinMutex::new(SlotStats::fresh(with_service)),
        }
    }

    /// Takes what the user recorded since the last call, leaving a fresh
    /// set. The fresh histograms are allocated before taking the lock.
    pub(crate) fn take(&self, with_service: bool) -> SlotStats {
        let mut fresh = SlotStats::fresh(with_service);
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
    phase.latency.merge(&part.latency);
    if let Some(s) = &part.service {
        phase
            .service
            .get_or_insert_with(LatencyHistogram::new)
            .merge(s);
    }
}

/// Adds a user's share; its busy time is the time spent in events (service
/// time with a rate, where latency also counts waiting in the queue).
pub(crate) fn add_user_totals(t: &mut UserTotals, part: &SlotStats) {
    t.events += part.counters.events;
    let busy = part.service.as_ref().unwrap_or(&part.latency).sum();
    t.busy += Duration::from_nanos(busy as u64);
}
