//! Live metrics of dbmeter's runs for Prometheus (`--prometheus ADDR`).
//!
//! The [`Exporter`] is one more consumer of a run's event stream
//! ([`dbmeter_result::events`]): whoever presents a run hands it the same
//! [`RunEvent`]s its text presenter gets, and a campaign tells it where
//! it stands ([`CampaignProgress`]). It keeps what the events say as
//! counters and gauges ([`state`]) and serves them on a blocking HTTP
//! server of its own thread ([`server`]), at `/metrics`, in Prometheus'
//! text exposition format (written by the `prometheus` crate's encoder).
//! Nothing here reads the engine: intervals carry their counts, errors by
//! code and mergeable latency histograms, and the finished document the
//! run's totals.
//!
//! The metrics, their names and labels: docs/metrics.md.

pub mod server;
pub mod state;

use dbmeter_result::RunEvent;
use parking_lot::Mutex;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use state::{CampaignProgress, CellLabels};

/// The endpoint could not be opened (the port is taken, the address is
/// not this machine's).
#[derive(Debug)]
pub struct BindError(pub String);

impl std::fmt::Display for BindError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BindError {}

/// The metrics of the runs of this process, served at `/metrics` until
/// it is dropped.
pub struct Exporter {
    state: Arc<Mutex<state::State>>,
    server: server::Server,
}

impl std::fmt::Debug for Exporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exporter")
            .field("addr", &self.server.addr())
            .finish()
    }
}

impl Exporter {
    /// Listens on `addr` and serves the metrics from a thread of its own.
    pub fn start(addr: SocketAddr) -> Result<Exporter, BindError> {
        let state = Arc::new(Mutex::new(state::State::new(env!("CARGO_PKG_VERSION"))));
        let shared = state.clone();
        let server = server::Server::start(addr, move || shared.lock().render())?;
        Ok(Exporter { state, server })
    }

    /// The address it listens on (with the port the system chose for
    /// port 0).
    pub fn addr(&self) -> SocketAddr {
        self.server.addr()
    }

    /// Takes one event of a run.
    pub fn event(&self, event: &RunEvent) {
        self.state.lock().event(event);
    }

    /// Where the campaign stands: cells done, cells to run, the cell
    /// running now.
    pub fn campaign(&self, progress: CampaignProgress) {
        self.state.lock().campaign(progress);
    }

    /// Whether a run has started since the endpoint opened.
    pub fn saw_a_run(&self) -> bool {
        self.state.lock().saw_a_run()
    }

    /// The exposition text, as a scrape gets it.
    pub fn render(&self) -> String {
        self.state.lock().render()
    }

    /// Waits `linger` while the endpoint serves (so that a last scrape
    /// sees the final values), or until `stopped` says so. The endpoint
    /// closes when the exporter is dropped.
    pub fn linger(&self, linger: Duration, stopped: &dyn Fn() -> bool) {
        let until = Instant::now() + linger;
        while !stopped() {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50).min(left));
        }
    }
}
