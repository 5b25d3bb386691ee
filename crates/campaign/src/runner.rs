//! Runs a campaign: starts its managed servers, prepares each dataset once
//! per target, runs every cell as a `dbmeter run` child process (so that a
//! failing cell cannot take the campaign down), and stores each result the
//! moment it lands.

use crate::hooks::{HookEnv, HookResult, run_hook};
use crate::plan::{Cell, cells, estimate, human};
use crate::spec::{Campaign, Reset, Target, TargetKind, Workload};
use dbmeter_server::managed::{Home, StartRequest};
use dbmeter_server::{Flavor, parse_cpu_list};
use dbmeter_store::{RunMeta, Store};
use dbmeter_workloads::options::canonical;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long a managed server may take to stop cleanly.
const STOP_TIMEOUT: Duration = Duration::from_secs(60);

pub struct RunOptions {
    /// The dbmeter binary that runs the cells.
    pub exe: PathBuf,
    /// The results store (see [`store_spec`]).
    pub store: String,
    /// Skip cells already in the store.
    pub resume: bool,
    /// Set on Ctrl-C: the running cell stops (it gets the signal too), its
    /// partial result is stored, and no other cell starts.
    pub stop: Arc<AtomicBool>,
}

#[derive(Debug, Default, PartialEq)]
pub struct Summary {
    pub cells: usize,
    pub stored: usize,
    pub skipped: usize,
    pub failed: usize,
    pub interrupted: bool,
    pub store: String,
}

/// Where the results go: the command line's store, else the file's
/// (relative to the campaign file), else `default` (the one every
/// command uses: $DBMETER_STORE or $DBMETER_HOME/results.db).
pub fn store_spec(c: &Campaign, given: Option<&str>, default: &str) -> String {
    let rel = |s: &str| -> String {
        if s.contains("://") || Path::new(s).is_absolute() {
            s.to_string()
        } else {
            c.dir.join(s).to_string_lossy().into_owned()
        }
    };
    if let Some(s) = given {
        return s.to_string();
    }
    if let Some(s) = &c.store {
        return rel(s);
    }
    default.to_string()
}

/// The plan, for `--dry-run`.
pub fn describe(c: &Campaign, store: &str) -> String {
    let all = cells(c);
    let mut s = format!(
        "campaign '{}': {} target(s) x {} workload(s) x {} client count(s) x {} repeat(s) = {} runs\n",
        c.name,
        c.targets.len(),
        c.workloads.len(),
        c.clients.len(),
        c.repeats,
        all.len()
    );
    s.push_str(&format!(
        "each run: {}s warm-up + {}s measured, {}s pause; order: {:?}; reset: {:?}{}\n",
        c.warmup,
        c.duration,
        c.pause,
        c.order,
        c.reset,
        if c.reset == Reset::None {
            ""
        } else if c.reset_every_run {
            " before every run"
        } else {
            " before write runs"
        }
    ));
    s.push_str(&format!("store: {store}\n"));
    for t in &c.targets {
        match &t.kind {
            TargetKind::External { url } => {
                s.push_str(&format!("target {}: {}\n", t.name, mask(url)))
            }
            TargetKind::Managed {
                flavor, settings, ..
            } => {
                let set: Vec<String> = settings.iter().map(|(k, v)| format!("{k}={v}")).collect();
                s.push_str(&format!(
                    "target {}: managed {flavor} server {}\n",
                    t.name,
                    set.join(" ")
                ));
            }
        }
    }
    for (i, cell) in all.iter().enumerate() {
        s.push_str(&format!(
            "  {:>4}. {} (repeat {})\n",
            i + 1,
            cell.key(c),
            cell.repeat
        ));
    }
    s.push_str(&format!(
        "estimated duration: {} (without prepares)\n",
        human(estimate(c, all.len()))
    ));
    s
}

fn mask(url: &str) -> String {
    dbmeter_db::mask_password(url)
}

/// A target while the campaign runs.
struct Live {
    url: String,
    /// Managed server name.
    server: Option<String>,
    /// The dataset now in the target (see `dataset_key`).
    prepared: Option<String>,
    /// The snapshot of the prepared data (reset = snapshot).
    snapshot: Option<String>,
}

fn dataset_key(w: &Workload) -> Option<String> {
    let workload = dbmeter_workloads::registry::find(&w.name)?.workload;
    let family = workload.dataset()?;
    let specs = workload.options();
    let shapes_data = |name: &str| {
        specs
            .iter()
            .any(|s| s.shapes_data && canonical(s.name) == name)
    };
    let mut parts: Vec<String> = w
        .options
        .iter()
        .map(|(k, v)| (canonical(k), v))
        .filter(|(k, _)| shapes_data(k))
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    parts.sort();
    Some(format!("{family} {}", parts.join(" ")))
}

fn server_name(c: &Campaign, t: &Target) -> String {
    let clean: String = c
        .name
        .chars()
        .map(|ch| {
            if ch.is_ascii_alphanumeric() || "-_.".contains(ch) {
                ch
            } else {
                '-'
            }
        })
        .collect();
    format!("{clean}-{}", t.name)
}

fn start_managed(
    home: &Home,
    name: &str,
    t: &Target,
    snapshot: Option<&str>,
) -> Result<String, String> {
    let TargetKind::Managed {
        flavor,
        settings,
        config,
        basedir,
        server_cpus,
    } = &t.kind
    else {
        return Err("not a managed target".into());
    };
    let fl = Flavor::parse(flavor).ok_or_else(|| format!("unknown server flavor '{flavor}'"))?;
    let mut req = StartRequest::new(fl);
    req.name = Some(name.to_string());
    req.settings = settings.clone();
    req.config_file = config.clone();
    req.basedir = basedir.clone();
    req.from_snapshot = snapshot.map(str::to_string);
    if let Some(cpus) = server_cpus {
        req.cpus = Some(parse_cpu_list(cpus).map_err(|e| format!("target {}: {e}", t.name))?);
    }
    // A server of that name left from an earlier campaign goes first.
    if home.load(name).is_ok() {
        let _ = home.stop(name, STOP_TIMEOUT);
        home.remove(name).map_err(|e| e.to_string())?;
    }
    let state = home
        .start(&req)
        .map_err(|e| format!("target {}: {e}", t.name))?;
    Ok(state.url)
}

struct Child {
    code: i32,
    stdout: String,
    stderr: String,
}

fn dbmeter(exe: &Path, args: &[String]) -> Result<Child, String> {
    let o = Command::new(exe)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    Ok(Child {
        code: o.status.code().unwrap_or(130),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    })
}

fn last_line(s: &str) -> String {
    s.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .trim_start_matches("dbmeter: error: ")
        .to_string()
}

fn opt_args(opts: &[(String, String)]) -> Vec<String> {
    opts.iter().map(|(k, v)| format!("--{k}={v}")).collect()
}

/// Sleeps up to `secs`, waking early on Ctrl-C.
fn pause(secs: f64, stop: &AtomicBool) {
    let until = Instant::now() + Duration::from_secs_f64(secs);
    while Instant::now() < until && !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(100));
    }
}

pub fn run(c: &Campaign, o: &RunOptions, say: &mut dyn FnMut(&str)) -> Result<Summary, String> {
    let spec = o.store.clone();
    let mut store = Store::open(&spec).map_err(|e| e.to_string())?;
    let all = cells(c);
    let mut summary = Summary {
        cells: all.len(),
        store: spec.clone(),
        ..Summary::default()
    };
    let todo: Vec<Cell> = if o.resume {
        let mut left = Vec::new();
        for cell in &all {
            if store
                .has_cell(&c.name, &cell.key(c), cell.repeat)
                .map_err(|e| e.to_string())?
            {
                summary.skipped += 1;
            } else {
                left.push(*cell);
            }
        }
        left
    } else {
        all.clone()
    };
    say(&format!(
        "campaign '{}': {} runs{}, about {}; results in {}",
        c.name,
        todo.len(),
        if summary.skipped > 0 {
            format!(" ({} already stored, skipped)", summary.skipped)
        } else {
            String::new()
        },
        human(estimate(c, todo.len())),
        spec
    ));
    if todo.is_empty() {
        return Ok(summary);
    }

    let home = if c
        .targets
        .iter()
        .any(|t| matches!(t.kind, TargetKind::Managed { .. }))
    {
        Some(Home::from_env().map_err(|e| e.to_string())?)
    } else {
        None
    };
    let mut live: Vec<Live> = Vec::new();
    let result = (|| -> Result<(), String> {
        for t in &c.targets {
            match &t.kind {
                TargetKind::External { url } => live.push(Live {
                    url: url.clone(),
                    server: None,
                    prepared: None,
                    snapshot: None,
                }),
                TargetKind::Managed { flavor, .. } => {
                    let name = server_name(c, t);
                    say(&format!(
                        "starting {flavor} server '{name}' for target {}",
                        t.name
                    ));
                    let home = home.as_ref().ok_or("no server home")?;
                    let url = start_managed(home, &name, t, None)?;
                    say(&format!("  {url}"));
                    live.push(Live {
                        url,
                        server: Some(name),
                        prepared: None,
                        snapshot: None,
                    });
                }
            }
        }
        let campaign_env = HookEnv {
            campaign: c.name.clone(),
            url: live.first().map(|l| l.url.clone()).unwrap_or_default(),
            ..HookEnv::default()
        };
        let mut campaign_hooks = Vec::new();
        for h in &c.hooks.before_campaign {
            let r = run_hook("before_campaign", h, &campaign_env);
            report_hook(say, &r);
            campaign_hooks.push(r);
        }

        let began = Instant::now();
        for (i, cell) in todo.iter().enumerate() {
            if o.stop.load(Ordering::Relaxed) {
                summary.interrupted = true;
                break;
            }
            let (t, w) = (&c.targets[cell.target], &c.workloads[cell.workload]);
            let eta = if i == 0 {
                human(estimate(c, todo.len()))
            } else {
                let per = began.elapsed().as_secs_f64() / i as f64;
                human(Duration::from_secs_f64(per * (todo.len() - i) as f64))
            };
            say(&format!(
                "[{}/{}] {} on {}, {} client{}, repeat {} (ETA {eta})",
                i + 1,
                todo.len(),
                w.name,
                t.name,
                cell.clients,
                if cell.clients == 1 { "" } else { "s" },
                cell.repeat
            ));
            if let Err(e) = prepare_cell(c, o, home.as_ref(), &mut live[cell.target], t, w, say) {
                say(&format!("  FAILED before the run: {e}"));
                summary.failed += 1;
                store_failure(&mut store, c, cell, &live[cell.target].url, &e)?;
                continue;
            }
            let env = HookEnv {
                campaign: c.name.clone(),
                target: t.name.clone(),
                url: live[cell.target].url.clone(),
                workload: w.name.clone(),
                clients: cell.clients,
                repeat: cell.repeat,
            };
            let mut hooks: Vec<HookResult> = campaign_hooks.clone();
            for h in &c.hooks.before_run {
                let r = run_hook("before_run", h, &env);
                report_hook(say, &r);
                hooks.push(r);
            }
            let outcome = run_cell(c, o, cell, &live[cell.target].url, w)?;
            for h in &c.hooks.after_run {
                let r = run_hook("after_run", h, &env);
                report_hook(say, &r);
                hooks.push(r);
            }
            match outcome {
                CellOutcome::Done { json, line, failed } => {
                    let json = with_hooks(&json, &hooks);
                    let id = store
                        .save(&json, &meta(c, cell))
                        .map_err(|e| format!("cannot store the result: {e}"))?;
                    say(&format!("  {line} (stored as run #{id})"));
                    if failed {
                        summary.failed += 1;
                    } else {
                        summary.stored += 1;
                    }
                }
                CellOutcome::NoResult(e) => {
                    say(&format!("  FAILED: {e}"));
                    summary.failed += 1;
                    store_failure(&mut store, c, cell, &live[cell.target].url, &e)?;
                }
            }
            if o.stop.load(Ordering::Relaxed) {
                summary.interrupted = true;
                break;
            }
            if i + 1 < todo.len() && c.pause > 0.0 {
                pause(c.pause, &o.stop);
            }
        }
        for h in &c.hooks.after_campaign {
            let r = run_hook("after_campaign", h, &campaign_env);
            report_hook(say, &r);
        }
        Ok(())
    })();
    // Managed servers go, whatever happened.
    if let Some(home) = &home {
        for l in &live {
            if let Some(name) = &l.server {
                let _ = home.stop(name, STOP_TIMEOUT);
                let _ = home.remove(name);
            }
            if let Some(snap) = &l.snapshot {
                let _ = home.remove_snapshot(snap);
            }
        }
    }
    result?;
    Ok(summary)
}

fn report_hook(say: &mut dyn FnMut(&str), r: &HookResult) {
    if !r.ok {
        say(&format!(
            "  hook {} '{}' failed: {}",
            r.when,
            r.command,
            last_line(&r.output)
        ));
    }
}

fn meta(c: &Campaign, cell: &Cell) -> RunMeta {
    RunMeta {
        campaign: Some(c.name.clone()),
        variant: Some(c.targets[cell.target].name.clone()),
        cell: Some(cell.key(c)),
        repeat: Some(cell.repeat),
        tags: vec![("target".into(), c.targets[cell.target].name.clone())],
    }
}

fn with_hooks(json: &str, hooks: &[HookResult]) -> String {
    if hooks.is_empty() {
        return json.to_string();
    }
    match serde_json::from_str::<serde_json::Value>(json) {
        Ok(mut v) => {
            if let Some(obj) = v.as_object_mut() {
                obj.insert(
                    "hooks".into(),
                    serde_json::to_value(hooks).unwrap_or_default(),
                );
            }
            serde_json::to_string_pretty(&v).unwrap_or_else(|_| json.to_string())
        }
        Err(_) => json.to_string(),
    }
}

/// A cell that produced no result document (it could not connect, say)
/// is stored as a failed run, so that the campaign's record is complete.
fn store_failure(
    store: &mut Store,
    c: &Campaign,
    cell: &Cell,
    url: &str,
    error: &str,
) -> Result<(), String> {
    let doc = serde_json::json!({
        "schema": "dbmeter.run",
        "schema_version": 1,
        "workload": c.workloads[cell.workload].name,
        "threads": cell.clients,
        "target": { "url": mask(url) },
        "end": { "reason": "failed", "error": error },
    });
    store
        .save(&doc.to_string(), &meta(c, cell))
        .map(|_| ())
        .map_err(|e| format!("cannot store the failed run: {e}"))
}

/// Resets the target when the campaign asks for it and makes sure the
/// workload's dataset is there.
fn prepare_cell(
    c: &Campaign,
    o: &RunOptions,
    home: Option<&Home>,
    l: &mut Live,
    t: &Target,
    w: &Workload,
    say: &mut dyn FnMut(&str),
) -> Result<(), String> {
    let key = dataset_key(w);
    let wants_reset = c.reset != Reset::None && (c.reset_every_run || w.writes());
    if let (Some(home), Some(name)) = (home, &l.server)
        && wants_reset
        && l.prepared.is_some()
        && l.prepared == key
    {
        match (c.reset, &l.snapshot) {
            (Reset::Snapshot, Some(snap)) => {
                say(&format!("  fresh copy of the prepared data for '{name}'"));
                home.stop(name, STOP_TIMEOUT).map_err(|e| e.to_string())?;
                home.remove(name).map_err(|e| e.to_string())?;
                l.url = start_managed(home, name, t, Some(snap))?;
            }
            _ => {
                say(&format!("  restarting '{name}'"));
                home.stop(name, STOP_TIMEOUT).map_err(|e| e.to_string())?;
                l.url = home.relaunch(name).map_err(|e| e.to_string())?.url;
            }
        }
    }
    let Some(key) = key else { return Ok(()) };
    if l.prepared.as_deref() == Some(key.as_str()) {
        return Ok(());
    }
    let db = format!("--db={}", l.url);
    let mut args = vec!["cleanup".to_string(), w.name.clone(), db.clone()];
    args.extend(opt_args(&w.options));
    // A new SQLite file has nothing to clean up (and cleanup would refuse
    // to create it).
    let fresh_file = l
        .url
        .strip_prefix("sqlite:")
        .map(|p| p.trim_start_matches("//"))
        .is_some_and(|p| !Path::new(p.split('?').next().unwrap_or(p)).exists());
    if !fresh_file {
        let r = dbmeter(&o.exe, &args)?;
        if r.code != 0 {
            return Err(format!("cleanup: {}", last_line(&r.stderr)));
        }
    }
    say(&format!("  preparing {} ({key})", w.name));
    args[0] = "prepare".into();
    args.push("--threads=4".into());
    let r = dbmeter(&o.exe, &args)?;
    if r.code != 0 {
        return Err(format!("prepare: {}", last_line(&r.stderr)));
    }
    if let Some(l2) = r.stdout.lines().find(|x| x.starts_with("Loaded")) {
        say(&format!("  {l2}"));
    }
    l.prepared = Some(key);
    if let (Some(home), Some(name), Reset::Snapshot) = (home, &l.server, c.reset) {
        let snap = format!("{name}-prepared");
        home.stop(name, STOP_TIMEOUT).map_err(|e| e.to_string())?;
        home.snapshot(name, Some(&snap), true)
            .map_err(|e| e.to_string())?;
        l.url = home.relaunch(name).map_err(|e| e.to_string())?.url;
        l.snapshot = Some(snap);
    }
    Ok(())
}

enum CellOutcome {
    /// A result document, complete or partial; `failed` when the run did
    /// not end on its limit.
    Done {
        json: String,
        line: String,
        failed: bool,
    },
    NoResult(String),
}

fn run_cell(
    c: &Campaign,
    o: &RunOptions,
    cell: &Cell,
    url: &str,
    w: &Workload,
) -> Result<CellOutcome, String> {
    let tmp = tempfile_path();
    let mut args = vec![
        "run".to_string(),
        w.name.clone(),
        format!("--db={url}"),
        format!("--threads={}", cell.clients),
        format!("--time={}", c.duration),
        format!("--warmup-time={}", c.warmup),
        "--format=json".into(),
        format!("--output={}", tmp.display()),
    ];
    args.extend(opt_args(&c.options));
    args.extend(opt_args(&w.options));
    let r = dbmeter(&o.exe, &args)?;
    let json = std::fs::read_to_string(&tmp).ok();
    let _ = std::fs::remove_file(&tmp);
    let Some(json) = json.filter(|j| !j.trim().is_empty()) else {
        let why = last_line(&r.stderr);
        return Ok(CellOutcome::NoResult(if why.is_empty() {
            format!("dbmeter run exited with code {}", r.code)
        } else {
            why
        }));
    };
    let doc: serde_json::Value = match serde_json::from_str(&json) {
        Ok(d) => d,
        Err(e) => {
            return Ok(CellOutcome::NoResult(format!(
                "dbmeter run wrote a bad JSON result: {e}"
            )));
        }
    };
    let tps = doc["totals"]["events_per_s"].as_f64().unwrap_or(0.0);
    let p95 = doc["latency_ms"]["percentiles"]
        .as_array()
        .and_then(|a| a.iter().find(|p| p["percentile"].as_f64() == Some(95.0)))
        .and_then(|p| p["ms"].as_f64());
    let reason = doc["end"]["reason"].as_str().unwrap_or("").to_string();
    let failed = r.code != 0 && reason != "interrupted";
    let mut line = format!("{tps:.1} tps");
    if let Some(nopm) = doc["tpcc"]["nopm"].as_f64() {
        line.push_str(&format!(", NOPM {nopm:.0}"));
    }
    if let Some(p) = p95 {
        line.push_str(&format!(", p95 {p:.3} ms"));
    }
    if r.code != 0 {
        line.push_str(&format!(" [{reason}: {}]", last_line(&r.stderr)));
    }
    let _ = r.stdout;
    Ok(CellOutcome::Done { json, line, failed })
}

fn tempfile_path() -> PathBuf {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    std::env::temp_dir().join(format!(
        "dbmeter-campaign-{}-{}.json",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(name: &str, options: &[(&str, &str)]) -> Workload {
        Workload {
            name: name.into(),
            options: options
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    #[test]
    fn workloads_share_a_dataset_when_their_data_options_agree() {
        let ro = dataset_key(&w(
            "oltp_read_only",
            &[("table_size", "1000"), ("range-size", "5")],
        ));
        let rw = dataset_key(&w("oltp_read_write", &[("table-size", "1000")]));
        assert_eq!(ro, rw);
        assert_eq!(ro.as_deref(), Some("oltp table-size=1000"));
        let bigger = dataset_key(&w("oltp_read_write", &[("table-size", "2000")]));
        assert_ne!(ro, bigger);
        let myisam = dataset_key(&w(
            "oltp_read_write",
            &[("table-size", "1000"), ("mysql-storage-engine", "myisam")],
        ));
        assert_ne!(ro, myisam);
        assert_eq!(
            dataset_key(&w("tpcc", &[("warehouses", "2"), ("think-time", "1")])).as_deref(),
            Some("tpcc warehouses=2")
        );
        assert_eq!(
            dataset_key(&w("bulk_insert", &[])).as_deref(),
            Some("bulk ")
        );
        assert_eq!(dataset_key(&w("noop", &[])), None);
    }

    #[test]
    fn read_only_workloads_do_not_write() {
        assert!(!w("oltp_point_select", &[]).writes());
        assert!(!w("select_random_ranges", &[]).writes());
        assert!(w("oltp_insert", &[]).writes());
        assert!(w("tpcc", &[]).writes());
    }
}
