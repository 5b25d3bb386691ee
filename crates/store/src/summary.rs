//! A stored run's row: where it came from ([`RunMeta`]) and its main
//! numbers ([`RunSummary`]).

use dbmeter_result::is_completed;
use serde::Serialize;

/// Where a run came from, beyond its document.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunMeta {
    pub campaign: Option<String>,
    /// e.g. the campaign target's name.
    pub variant: Option<String>,
    /// e.g. `oltp_read_only/tgtA/4`.
    pub cell: Option<String>,
    /// The repeat, from 1.
    pub repeat: Option<u32>,
    /// `key=value` labels; a key given twice keeps its last value.
    pub tags: Vec<(String, String)>,
}

/// One stored run's row: its meta and main numbers (NULL columns are None).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RunSummary {
    pub id: i64,
    /// When it was stored, RFC 3339 UTC.
    pub stored_at: String,
    /// When the run started (from the document).
    pub started_at: Option<String>,
    pub campaign: Option<String>,
    pub variant: Option<String>,
    pub cell: Option<String>,
    pub repeat: Option<u32>,
    pub workload: String,
    /// The target URL, password masked.
    pub target_url: Option<String>,
    pub driver: Option<String>,
    pub server_version: Option<String>,
    pub threads: Option<u32>,
    /// `time_limit`, `event_limit`, `interrupted` or `failed`.
    pub end_reason: String,
    pub end_error: Option<String>,
    pub duration_s: Option<f64>,
    pub events: Option<i64>,
    pub events_per_s: Option<f64>,
    pub queries: Option<i64>,
    pub queries_per_s: Option<f64>,
    pub latency_avg_ms: Option<f64>,
    pub latency_p95_ms: Option<f64>,
    pub latency_p99_ms: Option<f64>,
    pub latency_max_ms: Option<f64>,
    /// Errors over the measured phase, all codes together.
    pub errors: Option<i64>,
    pub reconnects: Option<i64>,
    pub hostname: Option<String>,
    pub dbmeter_version: Option<String>,
    /// Sorted by key (a JSON object when serialised).
    #[serde(serialize_with = "tags_as_object")]
    pub tags: Vec<(String, String)>,
    /// The benchmark's own figures, in order (TPC-H: the query times).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub figures: Vec<FigureValue>,
    /// In a comparison by figure: the figure this row stands for.
    #[serde(skip)]
    pub figure: Option<FigureValue>,
}

/// A stored figure of a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FigureValue {
    pub name: String,
    pub value: Option<f64>,
    pub unit: String,
    pub status: String,
}

impl FigureValue {
    pub fn timed_out(&self) -> bool {
        self.status == dbmeter_result::Figure::TIMEOUT
    }
}

fn tags_as_object<S: serde::Serializer>(
    tags: &[(String, String)],
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut m = s.serialize_map(Some(tags.len()))?;
    for (k, v) in tags {
        m.serialize_entry(k, v)?;
    }
    m.end()
}

impl RunSummary {
    /// True when the run ended at its time or event limit (not interrupted,
    /// not failed): the runs that count in comparisons.
    pub fn completed(&self) -> bool {
        is_completed(&self.end_reason)
    }

    pub fn tag(&self, key: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}
