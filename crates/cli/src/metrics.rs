//! `--prometheus`: the metrics endpoint of `run` and `campaign run`, opened
//! before the first run and closed after the last (and `--prometheus-linger`
//! seconds more). The endpoint is fed the runs' events beside the
//! presenter (`progress::Printer`) and a campaign's progress.

use crate::CliError;
use dbmeter_campaign::{Progress, Watch};
use dbmeter_metrics::{CampaignProgress, CellLabels, Exporter};
use dbmeter_result::RunEvent;
use dbmeter_run::settings::Prometheus;
use std::sync::Arc;

/// Opens the endpoint `p` asks for; says where it is on stderr.
pub(crate) fn open(p: Option<&Prometheus>) -> Result<Option<Arc<Exporter>>, CliError> {
    let Some(p) = p else { return Ok(None) };
    let e = Exporter::start(p.addr).map_err(|e| {
        CliError::Failed(format!(
            "--prometheus: {e}; choose a free port (or :0 for any)"
        ))
    })?;
    eprintln!("metrics for Prometheus at http://{}/metrics", e.addr());
    Ok(Some(Arc::new(e)))
}

/// Keeps the endpoint up `--prometheus-linger` seconds after the runs (a
/// stop signal cuts it short), then closes it.
pub(crate) fn close(e: Option<Arc<Exporter>>, p: Option<&Prometheus>) {
    let (Some(e), Some(p)) = (e, p) else { return };
    if e.saw_a_run() && !p.linger.is_zero() {
        let stop = crate::signals::stop_handle();
        e.linger(p.linger, &|| stop.is_stopped());
    }
}

/// A campaign's events and progress, for the endpoint.
pub(crate) struct CampaignWatch(pub Arc<Exporter>);

impl Watch for CampaignWatch {
    fn event(&self, event: &RunEvent) {
        self.0.event(event);
    }

    fn progress(&self, p: &Progress) {
        self.0.campaign(CampaignProgress {
            campaign: p.campaign.to_string(),
            done: p.done,
            total: p.total,
            current: p.current.as_ref().map(|c| CellLabels {
                target: c.target.to_string(),
                workload: c.workload.to_string(),
                clients: c.clients,
                repeat: c.repeat,
            }),
        });
    }
}
