//! Statistics: latency histograms, event counters, the median, when a
//! series has become steady ([`steady`]), and change points in a series
//! of results ([`changepoint`]).
//!
//! Everything here is mergeable: each virtual user records into its own
//! [`LatencyRecorder`] (HDR buckets allocated as they are used) and
//! [`Counters`], and the collector adds them up into [`LatencyHistogram`]s
//! per interval and in total without losing precision.

pub mod changepoint;
mod counters;
pub mod inference;
mod latency;
pub mod measure;
mod median;
mod recorder;
pub mod steady;
mod summary;

pub use counters::{Counters, ErrorCounts};
pub use latency::{HistogramError, LatencyHistogram, MAX_LATENCY_NS};
pub use measure::{MAX_MEASURES, Measure, MeasureInfo};
pub use median::{median, median_in_place};
pub use recorder::LatencyRecorder;
pub use summary::{LatencySummary, Percentile};
