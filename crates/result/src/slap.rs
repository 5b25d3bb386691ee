//! The section a `slap` run (one iteration at one concurrency level, as
//! mysqlslap runs them) puts in its document: what mysqlslap's report
//! and CSV line are made of.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SlapSection {
    /// `--engine`'s engine of this run (None without `--engine`).
    pub engine: Option<String>,
    /// `--auto-generate-sql-load-type` (mysqlslap's CSV names it whatever
    /// the statements' source).
    pub load_type: String,
    /// Clients of this run.
    pub concurrency: u32,
    /// Which iteration this is (1-based), and of how many.
    pub iteration: u32,
    pub iterations: u32,
    /// Statements each client was to run (0: its list once), as
    /// mysqlslap's "Average number of queries per client" says it.
    pub queries_per_client: u64,
    /// Milliseconds from the clients' start to the last one's end.
    pub ms: u64,
}

impl SlapSection {
    /// The key of the section in the document.
    pub const KEY: &'static str = "slap";
}
