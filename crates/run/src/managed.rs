//! The run's hold on the target's server when dbmeter manages it (started
//! by `dbmeter server start` or a campaign): restart it, drop the OS page
//! cache. Benchmarks use it for cold runs.

use dbmeter_benchmarks::ServerControl;
use dbmeter_db::Target;
use dbmeter_server::managed::Home;
use std::sync::Arc;
use std::time::Duration;

/// How long a clean shutdown may take before the restart fails.
const STOP_TIMEOUT: Duration = Duration::from_secs(300);

struct Managed {
    home: Home,
    name: String,
}

impl ServerControl for Managed {
    fn describe(&self) -> String {
        format!("managed server '{}'", self.name)
    }

    fn restart_server(&self) -> Result<bool, String> {
        self.home
            .stop(&self.name, STOP_TIMEOUT)
            .map_err(|e| format!("cannot stop {}: {e}", self.describe()))?;
        self.home
            .relaunch(&self.name)
            .map_err(|e| format!("cannot start {} again: {e}", self.describe()))?;
        Ok(true)
    }

    fn drop_page_cache(&self) -> Result<(), String> {
        dbmeter_server::drop_caches()
    }
}

/// An SQLite file: no server, the page cache only.
struct NoServer;

impl ServerControl for NoServer {
    fn describe(&self) -> String {
        "no server (SQLite)".into()
    }

    fn restart_server(&self) -> Result<bool, String> {
        Ok(false)
    }

    fn drop_page_cache(&self) -> Result<(), String> {
        dbmeter_server::drop_caches()
    }
}

/// The control of `target`'s server: a running managed server listening on
/// the target's port on this machine, or an SQLite file; None for a server
/// dbmeter does not manage.
pub fn control_for(target: Option<&Target>) -> Option<Arc<dyn ServerControl>> {
    let t = target?;
    let server = match t {
        Target::Sqlite { .. } => return Some(Arc::new(NoServer)),
        Target::Mysql(s) | Target::Postgres(s) => s,
    };
    if !dbmeter_db::is_local(t) {
        return None;
    }
    let home = Home::from_env().ok()?;
    let flavor = match t {
        Target::Postgres(_) => "postgres",
        _ => "mariadb",
    };
    let state = home.list().ok()?.into_iter().find(|st| {
        st.flavor == flavor
            && st.is_running()
            && (st.port == server.port(0)
                || server.socket.as_ref().is_some_and(|p| *p == st.socket))
    })?;
    Some(Arc::new(Managed {
        home,
        name: state.name,
    }))
}
