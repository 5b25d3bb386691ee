//! Runs a campaign: starts its managed servers, prepares each dataset once
//! per target, runs every cell through the run layer (in this process: the
//! target's URL and password never reach a command line or a child's
//! environment), and stores each result the moment it lands.

use crate::adaptive::Judge;
use crate::hooks::{HookEnv, run_hook};
use crate::plan::{Cell, cells, estimate, human};
use crate::sharded;
use crate::spec::{Campaign, Reset, TargetKind, TargetSpec, WorkloadSpec};
use dbmeter_benchmarks::options::{OptValues, canonical};
use dbmeter_benchmarks::shard::Shard;
use dbmeter_benchmarks::{Benchmark, Console, LoadProgress, registry};
use dbmeter_engine::StopHandle;
use dbmeter_result::verdict::{self, parse_list};
use dbmeter_result::{HookRecord, Layout, RunDocument, RunEvent};
use dbmeter_run::options::specs_for;
use dbmeter_run::{Observer, Request};
use dbmeter_server::managed::{Home, StartRequest};
use dbmeter_server::{Flavor, parse_cpu_list};
use dbmeter_store::{RunMeta, Store};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a managed server may take to stop cleanly.
const STOP_TIMEOUT: Duration = Duration::from_secs(60);

pub struct RunOptions {
    /// The results store (see [`store_spec`]).
    pub store: String,
    /// Skip the cells whose run is already stored as completed (an
    /// interrupted or failed cell runs again).
    pub resume: bool,
    /// Set on SIGINT or SIGTERM: the running cell stops within a second,
    /// its partial result is stored as interrupted, and no other cell
    /// starts.
    pub stop: StopHandle,
    /// Loaders of each `prepare` (connections loading at once).
    pub prepare_threads: usize,
    /// Who else follows the campaign (the `--prometheus` endpoint): the
    /// cells' run events and where the campaign stands.
    pub watch: Option<Arc<dyn Watch>>,
    /// `--shard=I/N`: this process is shard I of the N that run the
    /// campaign together (`sharded.rs`).
    pub shard: Option<Shard>,
}

/// Follows a campaign as it goes: every event of its cells' runs, and
/// its progress when a cell starts and ends.
pub trait Watch: Send + Sync {
    fn event(&self, event: &RunEvent);
    fn progress(&self, progress: &Progress);
}

/// Where a campaign stands.
#[derive(Debug)]
pub struct Progress<'a> {
    pub campaign: &'a str,
    /// Cells ended (stored or failed) of those this invocation runs.
    pub done: usize,
    /// Cells this invocation runs (`--resume` leaves out those stored).
    pub total: usize,
    /// The cell running now.
    pub current: Option<CellInfo<'a>>,
}

/// A cell, by the names its labels use.
#[derive(Debug)]
pub struct CellInfo<'a> {
    /// The target's name in the campaign file.
    pub target: &'a str,
    pub workload: &'a str,
    pub clients: u32,
    pub repeat: u32,
}

#[derive(Debug, Default, PartialEq)]
pub struct Summary {
    pub cells: usize,
    pub stored: usize,
    pub skipped: usize,
    pub failed: usize,
    /// Completed runs that missed one of their `assert` targets.
    pub missed: usize,
    pub interrupted: bool,
    pub store: String,
    /// With `repeats = "auto"`: each cell's runs and why it stopped
    /// (`describe`d), by cell key.
    pub adaptive: Vec<(String, String)>,
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

/// Checks what can be checked before anything runs: every target's URL,
/// or its server flavor and CPU list, and every cell's option values
/// (workload names and option names were checked when the file was
/// read). The error names the target or the workload.
pub fn check(c: &Campaign) -> Result<(), String> {
    for t in &c.targets {
        match &t.kind {
            TargetKind::External { url } => {
                dbmeter_db::Target::parse(url)
                    .map_err(|e| format!("target {}: {}", t.name, e.message))?;
            }
            TargetKind::Managed { .. } => {
                start_request(t, "check", None)?;
            }
            TargetKind::Machine => {}
        }
    }
    check_cells(c)
}

/// The cells still to run: all of them, or with `resume` those without a
/// completed run in the store; and how many were skipped.
pub fn todo(c: &Campaign, store: &mut Store, resume: bool) -> Result<(Vec<Cell>, usize), String> {
    let all = cells(c);
    if !resume {
        return Ok((all, 0));
    }
    let mut left = Vec::new();
    let mut skipped = 0;
    for cell in &all {
        if store
            .has_cell(&c.name, &cell.key(c), cell.repeat)
            .map_err(|e| e.to_string())?
        {
            skipped += 1;
        } else {
            left.push(*cell);
        }
    }
    Ok((left, skipped))
}

/// The plan, for `--dry-run`: `all` is the campaign's cells (or, with
/// `--resume`, those still to run).
pub fn describe(c: &Campaign, store: &str, all: &[Cell], skipped: usize) -> String {
    let repeats = match &c.adaptive {
        Some(a) => format!(
            "auto repeats ({} to {}, until the 95% CI of a cell's median tps is within {}%)",
            a.min,
            a.max,
            a.ci_width * 100.0
        ),
        None => format!("{} repeat(s)", c.repeats),
    };
    let mut s = format!(
        "campaign '{}': {} target(s) x {} workload(s) x {} client count(s) x {repeats} = {}{} runs\n",
        c.name,
        c.targets.len(),
        c.workloads.len(),
        c.clients.len(),
        if c.adaptive.is_some() { "up to " } else { "" },
        all.len()
    );
    s.push_str(&format!(
        "each run: {}s warm-up + {}s measured, {}s pause; order: {}; reset: {}{}\n",
        c.warmup,
        c.duration,
        c.pause,
        c.order.name(),
        c.reset.name(),
        if c.reset == Reset::None {
            ""
        } else if c.reset_every_run {
            " before every run"
        } else {
            " before write runs"
        }
    ));
    s.push_str(&format!("store: {store}\n"));
    if skipped > 0 {
        s.push_str(&format!(
            "{skipped} run(s) already stored as completed are skipped; {} to run\n",
            all.len()
        ));
    }
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
            TargetKind::Machine => s.push_str(&format!("target {}: no server\n", t.name)),
        }
        if !t.options.is_empty() {
            let set: Vec<String> = t.options.iter().map(|(k, v)| format!("{k}={v}")).collect();
            s.push_str(&format!("  options: {}\n", set.join(" ")));
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
        human(estimate(c, all))
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

/// The dataset a workload's runs on target `t` need: its family and the
/// options that shape its data (the workload's, then the target's).
fn dataset_key(w: &WorkloadSpec, t: &TargetSpec) -> Option<String> {
    let bench = registry::resolve(&w.name).ok()?;
    let family = bench.dataset()?;
    let specs = bench.options();
    let shapes_data = |name: &str| {
        specs
            .iter()
            .any(|s| s.shapes_data && canonical(&s.name) == name)
    };
    let mut shaped: BTreeMap<String, &String> = BTreeMap::new();
    for (k, v) in w.options.iter().chain(&t.options) {
        let k = canonical(k);
        if shapes_data(&k) {
            shaped.insert(k, v);
        }
    }
    let parts: Vec<String> = shaped.iter().map(|(k, v)| format!("{k}={v}")).collect();
    Some(format!("{family} {}", parts.join(" ")))
}

fn server_name(c: &Campaign, t: &TargetSpec) -> String {
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

/// How to start the managed server of target `t` as `name` (from
/// `snapshot` when given); the error names the target.
fn start_request(
    t: &TargetSpec,
    name: &str,
    snapshot: Option<&str>,
) -> Result<StartRequest, String> {
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
    let fl = Flavor::parse(flavor).ok_or_else(|| {
        format!(
            "target {}: unknown server flavor '{flavor}' (mariadb or postgres)",
            t.name
        )
    })?;
    let mut req = StartRequest::new(fl);
    req.name = Some(name.to_string());
    req.settings = settings.clone();
    req.config_file = config.clone();
    req.basedir = basedir.clone();
    req.from_snapshot = snapshot.map(str::to_string);
    if let Some(cpus) = server_cpus {
        req.cpus = Some(parse_cpu_list(cpus).map_err(|e| format!("target {}: {e}", t.name))?);
    }
    Ok(req)
}

fn start_managed(
    home: &Home,
    name: &str,
    t: &TargetSpec,
    snapshot: Option<&str>,
) -> Result<String, String> {
    let req = start_request(t, name, snapshot)?;
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

fn last_line(s: &str) -> String {
    s.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .to_string()
}

/// What a cell's run layer says while it works: kept, not printed, but
/// for the load summary and the warnings.
#[derive(Default)]
struct Quiet {
    lines: Mutex<Vec<String>>,
    warnings: Mutex<Vec<String>>,
    progress: LoadProgress,
    /// Gets every event too.
    watch: Option<Arc<dyn Watch>>,
}

impl Console for Quiet {
    fn line(&self, text: &str) {
        if let Ok(mut l) = self.lines.lock() {
            l.push(text.to_string());
        }
    }

    fn progress(&self) -> &LoadProgress {
        &self.progress
    }
}

impl Observer for Quiet {
    fn event(&self, event: &RunEvent) {
        if let Some(w) = &self.watch {
            w.event(event);
        }
        match event {
            RunEvent::Note(text) => self.line(text),
            RunEvent::Warning(message) => {
                if let Ok(mut w) = self.warnings.lock() {
                    w.push(message.to_string());
                }
            }
            _ => {}
        }
    }
}

impl Quiet {
    fn lines_starting(&self, prefix: &str) -> Vec<String> {
        self.lines
            .lock()
            .map(|l| {
                l.iter()
                    .filter(|x| x.starts_with(prefix))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// The request for `workload` on `url` with `extra` options (campaign
/// options, then the workload's, then the cell's).
fn request(w: &WorkloadSpec, url: &str, extra: &[(String, String)]) -> Result<Request, String> {
    Ok(request_for(registry::resolve(&w.name)?, url, extra))
}

/// The request for benchmark `bench` (resolved once) on `url` with
/// `extra` options.
fn request_for(bench: Arc<dyn Benchmark>, url: &str, extra: &[(String, String)]) -> Request {
    let specs = specs_for(Some(bench.as_ref()));
    let mut options = OptValues::from_defaults(&specs);
    options.set("db", url);
    let mut assertions = Vec::new();
    for (k, v) in extra {
        let k = canonical(k);
        if k == "assert" {
            // Checked when the campaign was checked (`check_cells`).
            assertions.extend(parse_list(v).unwrap_or_default());
        }
        options.set(&k, v);
    }
    Request {
        benchmark: bench,
        options,
        store: None,
        layout: Layout::Dbmeter,
        assertions,
        slos: Vec::new(),
    }
}

/// A cell's options: its clients, the campaign's time, then the
/// campaign's options and the workload's.
fn cell_options(
    c: &Campaign,
    t: &TargetSpec,
    w: &WorkloadSpec,
    clients: u32,
) -> Vec<(String, String)> {
    let own: Vec<(String, String)> = c
        .options
        .iter()
        .chain(&w.options)
        .chain(&t.options)
        .cloned()
        .collect();
    // A load profile sets the run's length (and with --stages its users):
    // the campaign's duration, warm-up and client count then stay out.
    let staged = |name: &str| {
        own.iter()
            .rev()
            .find(|(k, _)| canonical(k) == name)
            .is_some_and(|(_, v)| !v.trim().is_empty())
    };
    let (users, rate) = (staged("stages"), staged("rate-stages"));
    let mut extra = Vec::new();
    if !users {
        extra.push(("threads".to_string(), clients.to_string()));
    }
    if !users && !rate {
        extra.push(("time".to_string(), c.duration.to_string()));
        extra.push(("warmup-time".to_string(), c.warmup.to_string()));
    }
    extra.extend(own);
    extra
}

/// Every cell's options, checked before anything starts: a value out of
/// range fails the campaign at once, not when its cell's turn comes.
fn check_cells(c: &Campaign) -> Result<(), String> {
    for w in &c.workloads {
        // A script is loaded once, not once per client count.
        let bench = registry::resolve(&w.name)?;
        for t in &c.targets {
            for &clients in &c.clients {
                let req = request_for(bench.clone(), "", &cell_options(c, t, w, clients));
                // The target is named where its own options join in.
                let on = if t.options.is_empty() {
                    String::new()
                } else {
                    format!(" on target {}", t.name)
                };
                let bad =
                    |e: String| format!("workload '{}'{on} with {clients} clients: {e}", w.name);
                let general =
                    dbmeter_run::settings::General::parse_run(&req.options, Layout::Dbmeter)
                        .map_err(|e| bad(e.to_string()))?;
                for (k, v) in cell_options(c, t, w, clients) {
                    if canonical(&k) == "assert" {
                        parse_list(&v).map_err(&bad)?;
                    }
                }
                req.benchmark
                    .check_options(&req.options)
                    .map_err(|e| bad(e.to_string()))?;
                // The kinds and stages the targets name, where the
                // benchmark knows its kinds before it plans a run (a
                // replay's are its log's: its run checks them).
                if let Some(kinds) = req.benchmark.known_kinds(&req.options) {
                    let stages = general.stage_indexes();
                    for a in &req.assertions {
                        a.check_kind(&kinds, &stages).map_err(&bad)?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// Sleeps up to `secs`, waking early on a stop request.
fn pause(secs: f64, stop: &StopHandle) {
    let until = Instant::now() + Duration::from_secs_f64(secs);
    while Instant::now() < until && !stop.is_stopped() {
        std::thread::sleep(Duration::from_millis(100));
    }
}

pub fn run(c: &Campaign, o: &RunOptions, say: &mut dyn FnMut(&str)) -> Result<Summary, String> {
    sharded::check_shards(c, o.shard)?;
    // What is done once (prepares, hooks, the merge) is shard 0's.
    let once = o.shard.is_none_or(|s| s.index == 0);
    let spec = o.store.clone();
    let mut store = Store::open(&spec).map_err(|e| e.to_string())?;
    let all = cells(c);
    let mut summary = Summary {
        cells: all.len(),
        store: spec.clone(),
        ..Summary::default()
    };
    let (todo, skipped) = todo(c, &mut store, o.resume)?;
    summary.skipped = skipped;
    let mut judge = c.adaptive.map(Judge::new);
    if let Some(j) = judge.as_mut() {
        resume_judge(j, c, &mut store, o.resume)?;
    }
    say(&format!(
        "campaign '{}': {}{} runs{}, {}about {}; results in {}",
        c.name,
        if judge.is_some() { "up to " } else { "" },
        todo.len(),
        if summary.skipped > 0 {
            format!(" ({} already stored, skipped)", summary.skipped)
        } else {
            String::new()
        },
        if judge.is_some() { "at most " } else { "" },
        human(estimate(c, &todo)),
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
                TargetKind::Machine => live.push(Live {
                    url: String::new(),
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
        for h in c.hooks.before_campaign.iter().filter(|_| once) {
            let r = run_hook("before_campaign", h, &campaign_env);
            report_hook(say, &r);
            campaign_hooks.push(r);
        }

        let tell = |done: usize, current: Option<&Cell>| {
            if let Some(watch) = &o.watch {
                watch.progress(&Progress {
                    campaign: &c.name,
                    done,
                    total: todo.len(),
                    current: current.map(|cell| CellInfo {
                        target: &c.targets[cell.target].name,
                        workload: &c.workloads[cell.workload].name,
                        clients: cell.clients,
                        repeat: cell.repeat,
                    }),
                });
            }
        };
        tell(0, None);
        let began = Instant::now();
        for (i, cell) in todo.iter().enumerate() {
            if o.stop.is_stopped() {
                summary.interrupted = true;
                break;
            }
            // A cell whose interval is narrow enough runs no more.
            if judge.as_ref().is_some_and(|j| j.stopped(&cell.key(c))) {
                continue;
            }
            tell(i, Some(cell));
            let (t, w) = (&c.targets[cell.target], &c.workloads[cell.workload]);
            let eta = if i == 0 {
                human(estimate(c, &todo))
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
            if !once {
                // Shard 0 prepares; the barrier waits for it.
            } else if let Err(e) =
                prepare_cell(c, o, home.as_ref(), &mut live[cell.target], t, w, say)
            {
                say(&format!("  FAILED before the run: {e}"));
                if let Some(s) = o.shard {
                    // The others would run on data that is not there.
                    return Err(format!(
                        "shard {s}: {} on {}: {e}; the other shards stop at the start barrier",
                        w.name, t.name
                    ));
                }
                summary.failed += 1;
                store_failure(&mut store, c, cell, &live[cell.target].url, &e)?;
                tell(i + 1, None);
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
            let mut hooks: Vec<HookRecord> = campaign_hooks.clone();
            for h in c.hooks.before_run.iter().filter(|_| once) {
                let r = run_hook("before_run", h, &env);
                report_hook(say, &r);
                hooks.push(r);
            }
            let meeting = match o.shard {
                None => None,
                Some(s) => match sharded::meet(&mut store, c, cell, s, &o.stop) {
                    Ok(m) => {
                        say(&format!(
                            "  shard {s}: all {} shards arrived; starting at {}",
                            s.count,
                            dbmeter_result::shards::format_rfc3339_millis(
                                std::time::UNIX_EPOCH
                                    + Duration::try_from_secs_f64(m.start_unix_s)
                                        .unwrap_or_default()
                            )
                        ));
                        Some((s, m))
                    }
                    Err(dbmeter_store::BarrierError::Stopped) => {
                        summary.interrupted = true;
                        break;
                    }
                    Err(e) => return Err(format!("shard {s}: {e}")),
                },
            };
            let extra = meeting
                .as_ref()
                .map(|(s, m)| sharded::run_options(*s, m))
                .unwrap_or_default();
            let outcome = run_cell(c, o, cell, &live[cell.target].url, w, &extra, say)?;
            for h in c.hooks.after_run.iter().filter(|_| once) {
                let r = run_hook("after_run", h, &env);
                report_hook(say, &r);
                hooks.push(r);
            }
            let outcome = match &meeting {
                None => Some(outcome),
                Some((s, m)) => {
                    // This shard's own result, kept outside the campaign.
                    let (doc, line, failed) = match outcome {
                        CellOutcome::Done { doc, line, failed } => (*doc, line, failed),
                        CellOutcome::NoResult(e) => {
                            let doc = RunDocument::failed_before_start(
                                &w.name,
                                cell.clients as usize,
                                &mask(&live[cell.target].url),
                                &e,
                            );
                            (doc, format!("FAILED: {e}"), true)
                        }
                    };
                    let id = store
                        .save(&doc.to_json(), &sharded::shard_meta(c, cell, *s, m))
                        .map_err(|e| format!("cannot store the shard's result: {e}"))?;
                    say(&format!("  shard {s}: {line} (stored as run #{id})"));
                    if s.index != 0 {
                        // Shard 0 stores the cell's run.
                        if failed {
                            summary.failed += 1;
                        } else {
                            summary.stored += 1;
                        }
                        None
                    } else {
                        Some(merged_cell(&mut store, c, *s, m, w, &o.stop, say)?)
                    }
                }
            };
            if let Some(outcome) = outcome {
                match outcome {
                    CellOutcome::Done {
                        mut doc,
                        line,
                        failed,
                    } => {
                        doc.hooks = hooks;
                        let id = store
                            .save(&doc.to_json(), &meta(c, cell))
                            .map_err(|e| format!("cannot store the result: {e}"))?;
                        say(&format!("  {line} (stored as run #{id})"));
                        if let Some(j) = judge.as_mut() {
                            let value =
                                (doc.completed() && !failed).then_some(doc.totals.events_per_s);
                            let state = j.add(&cell.key(c), value).clone();
                            if state.stop.is_some() {
                                say(&format!("  {}: {}", cell.key(c), j.describe(&state)));
                            }
                            store
                                .save_adaptive_cell(&j.record(&c.name, &cell.key(c), &state))
                                .map_err(|e| format!("cannot store the cell's repeats: {e}"))?;
                        }
                        if failed {
                            summary.failed += 1;
                        } else {
                            summary.stored += 1;
                            if doc.completed() && !verdict::all_passed(&doc.verdicts) {
                                summary.missed += 1;
                            }
                        }
                    }
                    CellOutcome::NoResult(e) => {
                        say(&format!("  FAILED: {e}"));
                        if let Some(j) = judge.as_mut() {
                            let state = j.add(&cell.key(c), None).clone();
                            store
                                .save_adaptive_cell(&j.record(&c.name, &cell.key(c), &state))
                                .map_err(|e| format!("cannot store the cell's repeats: {e}"))?;
                        }
                        summary.failed += 1;
                        store_failure(&mut store, c, cell, &live[cell.target].url, &e)?;
                    }
                }
            }
            tell(i + 1, None);
            if o.stop.is_stopped() {
                summary.interrupted = true;
                break;
            }
            if i + 1 < todo.len() && c.pause > 0.0 {
                pause(c.pause, &o.stop);
            }
        }
        for h in c.hooks.after_campaign.iter().filter(|_| once) {
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
    if let Some(j) = &judge {
        summary.adaptive = j
            .cells()
            .iter()
            .map(|(k, state)| (k.clone(), j.describe(state)))
            .collect();
    }
    Ok(summary)
}

/// With `--resume`, the cells' completed stored runs count: a cell settled
/// by them runs no more (a failed repeat runs again, as without `auto`).
fn resume_judge(
    j: &mut Judge,
    c: &Campaign,
    store: &mut Store,
    resume: bool,
) -> Result<(), String> {
    if !resume {
        return Ok(());
    }
    let filter = dbmeter_store::Filter {
        selectors: vec![dbmeter_store::Selector::Campaign(c.name.clone())],
    };
    let mut runs = store.runs(&filter).map_err(|e| e.to_string())?;
    runs.sort_by_key(|r| (r.repeat, r.id));
    for r in runs {
        if let (Some(key), true) = (&r.cell, r.completed()) {
            j.add(key, r.events_per_s);
        }
    }
    Ok(())
}

fn report_hook(say: &mut dyn FnMut(&str), r: &HookRecord) {
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

/// A cell that produced no result document (it could not connect, say)
/// is stored as a failed run, so that the campaign's record is complete.
fn store_failure(
    store: &mut Store,
    c: &Campaign,
    cell: &Cell,
    url: &str,
    error: &str,
) -> Result<(), String> {
    let doc = RunDocument::failed_before_start(
        &c.workloads[cell.workload].name,
        cell.clients as usize,
        &mask(url),
        error,
    );
    store
        .save(&doc.to_json(), &meta(c, cell))
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
    t: &TargetSpec,
    w: &WorkloadSpec,
    say: &mut dyn FnMut(&str),
) -> Result<(), String> {
    let key = dataset_key(w, t);
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
    let mut extra = w.options.clone();
    extra.extend(t.options.iter().cloned());
    extra.push(("threads".into(), o.prepare_threads.max(1).to_string()));
    let req = request(w, &l.url, &extra)?;
    // A new SQLite file has nothing to clean up (and cleanup would refuse
    // to create it).
    let fresh_file = l
        .url
        .strip_prefix("sqlite:")
        .map(|p| p.trim_start_matches("//"))
        .is_some_and(|p| !Path::new(p.split('?').next().unwrap_or(p)).exists());
    // A script need not have a cleanup.
    let has_cleanup = req.benchmark.verbs().iter().any(|v| v.name == "cleanup");
    if !fresh_file && has_cleanup {
        dbmeter_run::command("cleanup", &req, &Quiet::default())
            .map_err(|e| format!("cleanup: {e}"))?;
    }
    say(&format!("  preparing {} ({key})", w.name));
    let quiet = Quiet::default();
    dbmeter_run::command("prepare", &req, &quiet).map_err(|e| format!("prepare: {e}"))?;
    for line in quiet.lines_starting("Loaded ") {
        say(&format!("  {line}"));
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
    /// not end on its limit and was not interrupted.
    Done {
        doc: Box<RunDocument>,
        line: String,
        failed: bool,
    },
    NoResult(String),
}

/// Shard 0's outcome of a sharded cell: the shards' results merged, or
/// why there is none.
fn merged_cell(
    store: &mut Store,
    c: &Campaign,
    s: Shard,
    m: &dbmeter_store::Meeting,
    w: &WorkloadSpec,
    stop: &StopHandle,
    say: &mut dyn FnMut(&str),
) -> Result<CellOutcome, String> {
    let doc = match sharded::merge_cell(store, c, s.count, m, stop) {
        Ok(doc) => doc,
        Err(e) => return Ok(CellOutcome::NoResult(e)),
    };
    let info = doc.merged.clone().unwrap_or_default();
    for n in &info.notes {
        say(&format!("  merge: {n}"));
    }
    let line = format!(
        "merged {} of {} shards: {}",
        info.shards.len(),
        info.count,
        doc_line(registry::resolve(&w.name)?.as_ref(), &doc)
    );
    let failed = !doc.completed() && doc.end.reason != "interrupted";
    Ok(CellOutcome::Done {
        doc: Box::new(doc),
        line,
        failed,
    })
}

/// Runs a cell with its options and `extra` (a shard's).
fn run_cell(
    c: &Campaign,
    o: &RunOptions,
    cell: &Cell,
    url: &str,
    w: &WorkloadSpec,
    extra: &[(String, String)],
    say: &mut dyn FnMut(&str),
) -> Result<CellOutcome, String> {
    let t = &c.targets[cell.target];
    let mut options = cell_options(c, t, w, cell.clients);
    options.extend(extra.iter().cloned());
    let req = request(w, url, &options)?;
    let quiet = Quiet {
        watch: o.watch.clone(),
        ..Quiet::default()
    };
    let outcome = match dbmeter_run::run(&req, &quiet, &o.stop) {
        Ok(x) => x,
        Err(e) => return Ok(CellOutcome::NoResult(e.to_string())),
    };
    if let Ok(warnings) = quiet.warnings.lock() {
        for w in warnings.iter() {
            say(&format!("  WARNING: {w}"));
        }
    }
    let doc = outcome.document;
    let failed = !doc.completed() && doc.end.reason != "interrupted";
    let line = doc_line(req.benchmark.as_ref(), &doc);
    Ok(CellOutcome::Done {
        doc: Box::new(doc),
        line,
        failed,
    })
}

/// A run's line in the campaign's progress: its throughput, headline,
/// p95, missed targets and how it ended when it did not complete.
fn doc_line(bench: &dyn Benchmark, doc: &RunDocument) -> String {
    let reason = doc.end.reason.clone();
    let per_s = if doc.issues_sql() { "tps" } else { "events/s" };
    let mut line = format!("{:.1} {per_s}", doc.totals.events_per_s);
    for (label, value) in bench.headline(doc) {
        line.push_str(&format!(", {label} {value:.0}"));
    }
    if let Some(p) = doc.latency_percentile_ms(95.0) {
        line.push_str(&format!(", p95 {p:.3} ms"));
    }
    let missed: Vec<&str> = doc
        .verdicts
        .iter()
        .filter(|v| !v.passed())
        .map(|v| v.assertion.as_str())
        .collect();
    if !missed.is_empty() && doc.completed() {
        line.push_str(&format!(" [targets missed: {}]", missed.join(", ")));
    }
    if !doc.completed() {
        match &doc.end.error {
            Some(e) => line.push_str(&format!(" [{reason}: {}]", last_line(e))),
            None => line.push_str(&format!(" [{reason}]")),
        }
    }
    line
}
#[cfg(test)]
mod tests {
    use super::*;

    fn w(name: &str, options: &[(&str, &str)]) -> WorkloadSpec {
        WorkloadSpec {
            name: name.into(),
            options: options
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    /// Benchmarks of one data family share a dataset when the options
    /// that shape the data agree (dashes or underscores), whatever the
    /// others say; benchmarks without data have none.
    #[test]
    fn workloads_share_a_dataset_when_their_data_options_agree() {
        let all = registry::all();
        let (a, b) = all
            .iter()
            .flat_map(|a| all.iter().map(move |b| (a, b)))
            .find(|(a, b)| {
                a.name() != b.name() && a.dataset().is_some() && a.dataset() == b.dataset()
            })
            .expect("two benchmarks of one data family");
        let opts = a.options();
        let shaping = opts.iter().find(|o| o.shapes_data).expect("a data option");
        let other = opts.iter().find(|o| !o.shapes_data).expect("a run option");
        let name = shaping.name.to_string();
        let underscored = name.replace('-', "_");
        let machine = TargetSpec {
            name: "m".into(),
            kind: TargetKind::Machine,
            options: Vec::new(),
        };
        let t = &machine;
        let ka = dataset_key(&w(a.name(), &[(&name, "1000"), (&other.name, "5")]), t);
        let kb = dataset_key(&w(b.name(), &[(&underscored, "1000")]), t);
        assert!(ka.is_some());
        assert_eq!(ka, kb);
        assert_ne!(ka, dataset_key(&w(b.name(), &[(&name, "2000")]), t));
        // A target's own options shape its data too, after the workload's.
        let other_target = TargetSpec {
            options: vec![(name.clone(), "2000".into())],
            ..machine.clone()
        };
        assert_eq!(
            dataset_key(&w(b.name(), &[(&name, "2000")]), t),
            dataset_key(&w(b.name(), &[(&name, "1000")]), &other_target)
        );
        let none = all
            .iter()
            .find(|x| x.dataset().is_none())
            .expect("one without data");
        assert_eq!(dataset_key(&w(none.name(), &[]), t), None);
    }
}
