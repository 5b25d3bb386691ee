//! CPU lists: `--server-cpus` (checked here, applied by the server layer)
//! and `--client-cpus`, which binds dbmeter itself for a run or a command
//! (in a campaign, the campaign's process for its cells).

use crate::RunError;
use dbmeter_benchmarks::options::OptValues;
use dbmeter_server::{allowed_cpus, format_cpu_list, parse_cpu_list, pin_process};

/// The CPUs of option `--name=list`: a usage error if it does not parse, an
/// error if it names CPUs this process may not use.
pub fn cpus(name: &str, list: &str) -> Result<Vec<usize>, RunError> {
    let cpus = parse_cpu_list(list).map_err(|e| RunError::Usage(format!("--{name}: {e}")))?;
    let allowed = allowed_cpus();
    let missing: Vec<usize> = cpus
        .iter()
        .copied()
        .filter(|c| !allowed.contains(c))
        .collect();
    if !missing.is_empty() {
        return Err(RunError::Failed(format!(
            "--{name}={list}: CPU {} not available here (dbmeter may use CPUs {})",
            format_cpu_list(&missing),
            format_cpu_list(&allowed)
        )));
    }
    Ok(cpus)
}

/// Binds dbmeter (every thread it has, and so every thread it starts
/// later) to `--client-cpus`, if given.
pub fn pin_client(o: &OptValues) -> Result<(), RunError> {
    let list = o.str("client-cpus").trim();
    if list.is_empty() {
        return Ok(());
    }
    let set = cpus("client-cpus", list)?;
    pin_process(0, &set).map_err(|e| RunError::Failed(format!("--client-cpus={list}: {e}")))
}
