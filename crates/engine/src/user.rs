//! What a benchmark implements: a virtual user that runs one event at a
//! time, on an OS thread of its own, with blocking calls.

use std::sync::Arc;

/// What an event did, in the plan's named measures (SQL benchmarks:
/// statements read, written and other, at the indices of
/// [`dbmeter_stats::measure::sql`]). The workload adds to it; the engine
/// folds it into the statistics once the event completes, times out or
/// fails (what an event that is cancelled did is left out).
#[derive(Clone, Copy, Debug, Default)]
pub struct Tally {
    /// By index into the plan's declared measures.
    pub measures: [u64; dbmeter_stats::MAX_MEASURES],
    /// The kind of event (an index below [`crate::EngineConfig::kinds`]),
    /// for workloads that mix several kinds of transactions; each kind
    /// gets its own counts and latency histogram.
    pub kind: usize,
    /// The event ended in a rollback that the workload intends (e.g. a
    /// TPC-C New-Order with an unused item): it still counts as an event.
    pub rolled_back: bool,
    /// Set by the engine before the event, with a rate or the user's own
    /// schedule: how much later
    /// than its intended start the event started (its schedule lag). The
    /// event's latency counts it; a workload that logs events itself can
    /// add it to what it timed.
    pub lag: std::time::Duration,
}

/// What a completed event means for its user.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// The user goes on with its next event.
    Continue,
    /// The user's work is finite and this was its last event (a TPC-H
    /// stream's last query, a replayed session's last statement): the user
    /// stops, and the run ends when every user has stopped.
    UserDone,
}

/// Why an event did not complete.
#[derive(Clone, Debug, PartialEq)]
pub enum EventError {
    /// An error the user asked to ignore: the event is restarted and the
    /// error counted under `code`. The failed attempt's time counts toward
    /// the event's latency.
    Ignorable { code: String },
    /// The connection is gone: the engine counts a connection error (and
    /// `code`) at once, reconnects with backoff (counting every failed
    /// attempt as it fails), counts a reconnect and restarts the event. A
    /// user that cannot reconnect within
    /// [`crate::EngineConfig::reconnect_timeout`] fails the run.
    ConnectionLost { code: String, message: String },
    /// Anything else: the run stops with this message and keeps what it
    /// measured so far.
    Fatal { code: String, message: String },
    /// The event failed for good and is not restarted (pgbench's failed
    /// transaction: a serialization failure or deadlock after its last
    /// try): counted as an ignored error under `code`, not as a completed
    /// event, and the user goes on with its next event, or stops when
    /// `last` (as after [`Flow::UserDone`]).
    Failed { code: String, last: bool },
    /// The event was interrupted because the run is stopping.
    Cancelled,
    /// A statement ran past --query-timeout and was cancelled: the event
    /// counts as timed out (under `code` too) and the user goes on with
    /// the next one.
    TimedOut { code: String },
}

/// Interrupts whatever the user is doing right now (e.g. sqlite3_interrupt
/// or KILL QUERY). Called from another thread.
pub type Interrupter = Arc<dyn Fn() + Send + Sync>;

/// One virtual user (one connection).
pub trait User: Send {
    /// Runs one event, counting its queries into `tally`.
    fn event(&mut self, tally: &mut Tally) -> Result<Flow, EventError>;

    /// Re-establishes a lost connection.
    fn reconnect(&mut self) -> Result<(), String> {
        Err("this workload cannot reconnect".to_string())
    }

    /// With a rate and a late limit ([`crate::EngineConfig::late_limit`]):
    /// the engine skipped an arrival of this user that was `lag` late when
    /// its turn came (no event ran for it). [`Flow::UserDone`] ends the
    /// user, as after its last event (a finite user may count skipped
    /// arrivals as work).
    fn skipped(&mut self, lag: std::time::Duration) -> Flow {
        let _ = lag;
        Flow::Continue
    }

    /// Called once after the user's last event (e.g. to flush buffered rows).
    fn finish(&mut self, tally: &mut Tally) -> Result<(), EventError> {
        let _ = tally;
        Ok(())
    }

    /// How long to wait before the next event (e.g. keying and think
    /// times): the wait is not part of any event's latency, and it ends
    /// early when the run stops or its time is up.
    fn pause(&mut self) -> std::time::Duration {
        std::time::Duration::ZERO
    }

    /// With [`crate::EngineConfig::own_schedule`]: when the user's next
    /// event is intended to start, as the time since the users were let
    /// go (a warm-up included). The engine waits until then (the wait is
    /// no event's), counts the event's latency from it and measures how
    /// late it actually started. None: the event starts at once and its
    /// latency counts from its actual start. Called once before each
    /// event, after [`User::pause`].
    fn intended_start(&mut self) -> Option<std::time::Duration> {
        None
    }

    /// A handle that interrupts the event in progress from another thread.
    fn interrupter(&self) -> Option<Interrupter> {
        None
    }
}

/// Creates the virtual users (opens their connections) before the clock
/// starts; called on each user's own thread.
pub trait UserFactory: Send + Sync {
    fn create(&self, user_id: usize) -> Result<Box<dyn User>, String>;
}
