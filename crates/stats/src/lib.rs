//! Statistics: latency histograms and event counters.
//!
//! Everything here is mergeable: each virtual user records into its own
//! [`LatencyHistogram`] and [`Counters`], and the collector adds them up per
//! interval and in total without losing precision.

mod counters;
mod latency;
mod summary;

pub use counters::{Counters, ErrorCounts};
pub use latency::{HistogramError, LatencyHistogram, MAX_LATENCY_NS};
pub use summary::{LatencySummary, Percentile};
