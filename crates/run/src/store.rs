//! Where results go: the results store, opened before a run so that a bad
//! store fails before any time is spent.

use crate::RunError;
use dbmeter_store::{RunMeta, Store};

/// The store to use: `given` (a path or URL), else `$DBMETER_STORE`, else
/// `$DBMETER_HOME/results.db`.
pub fn store_spec(given: Option<&str>) -> Result<String, RunError> {
    if let Some(s) = given.filter(|s| !s.trim().is_empty()) {
        return Ok(s.to_string());
    }
    if let Some(s) = std::env::var_os("DBMETER_STORE").filter(|s| !s.is_empty()) {
        return Ok(s.to_string_lossy().into_owned());
    }
    let home = dbmeter_server::managed::Home::from_env()
        .map_err(|e| RunError::Failed(format!("cannot find the default results store: {e}")))?;
    Ok(home
        .root()
        .join("results.db")
        .to_string_lossy()
        .into_owned())
}

/// Where a run's result is to be kept.
#[derive(Clone, Debug, Default)]
pub struct StoreRequest {
    /// The store: a path or URL, empty for the default one.
    pub spec: String,
    /// Campaign, variant, cell, repeat and tags of the run.
    pub meta: RunMeta,
}

/// An open store and what to record with the run.
pub(crate) struct OpenStore {
    store: Store,
    meta: RunMeta,
}

impl OpenStore {
    pub(crate) fn open(req: &StoreRequest) -> Result<OpenStore, RunError> {
        let spec = store_spec(Some(&req.spec))?;
        let store = Store::open(&spec).map_err(|e| RunError::Failed(e.0))?;
        Ok(OpenStore {
            store,
            meta: req.meta.clone(),
        })
    }

    /// Meets the other shards at barrier `b` (`--start-barrier`); a stop
    /// while waiting is an error too (the run has not started).
    pub(crate) fn meet(
        &mut self,
        b: &dbmeter_store::Barrier,
        stop: &dbmeter_engine::StopHandle,
    ) -> Result<dbmeter_store::Meeting, RunError> {
        self.store
            .meet(b, std::time::Duration::from_millis(100), &|| {
                stop.is_stopped()
            })
            .map_err(|e| RunError::Failed(e.to_string()))
    }

    /// Saves a run document; the id and where, or why it was not stored.
    pub(crate) fn save(&mut self, json: &str) -> Result<Stored, String> {
        let id = self
            .store
            .save(json, &self.meta)
            .map_err(|e| format!("the run was not stored: {}", e.0))?;
        Ok(Stored {
            id,
            location: self.store.location().to_string(),
        })
    }
}

/// A run kept in the store.
#[derive(Clone, Debug, PartialEq)]
pub struct Stored {
    pub id: i64,
    /// The store, as it names itself (password masked).
    pub location: String,
}
