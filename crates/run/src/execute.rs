//! One run, end to end: the target, the benchmark's plan, the record of
//! the environment and the server, the OS sampler, the engine, the result
//! document, the store.

use crate::document::{self, Facts};
use crate::options::{
    METRICS_OPTIONS, SECRET_OPTIONS, SHARD_OPTIONS, STORE_OPTIONS, VERDICT_OPTIONS,
};
use crate::record::Recorder;
use crate::request::{Observer, Request};
use crate::store::{OpenStore, Stored};
use crate::{RunError, settings};
use dbmeter_benchmarks::Context;
use dbmeter_db::Target;
use dbmeter_engine::{IntervalSample, StopHandle};
use dbmeter_result::events::line_percentile;
use dbmeter_result::{Live, RunDocument, RunEvent, RunHeader, TargetInfo};
use dbmeter_stats::MAX_MEASURES;
use std::time::{Duration, SystemTime};

/// What a run produced.
pub struct Outcome {
    /// The result: complete, or what was measured before an interruption
    /// or a failure (its `end` says which).
    pub document: RunDocument,
    /// Where it was stored, or why it was not; None when not asked to.
    pub stored: Option<Result<Stored, String>>,
    /// The benchmark's own section of the text report, if it has one.
    pub section: Option<String>,
}

/// Only `prepare` creates an SQLite file that the user named and that does
/// not exist yet; the other commands say so instead.
pub(crate) fn require_database_file(target: Option<&Target>, name: &str) -> Result<(), RunError> {
    if let Some(Target::Sqlite {
        path,
        implicit: false,
    }) = target
        && !path.exists()
    {
        return Err(RunError::Failed(format!(
            "{} does not exist; run `dbmeter prepare {name}` with the same options first",
            path.display()
        )));
    }
    Ok(())
}

/// The target of a request (None for a benchmark without a database).
pub(crate) fn target_of(req: &Request) -> Result<Option<Target>, RunError> {
    if req.benchmark.needs_database() {
        Ok(Some(settings::target(&req.options)?))
    } else {
        Ok(None)
    }
}

/// The error codes that restart an event on `target` (none without one).
pub(crate) fn ignore_of(
    o: &dbmeter_benchmarks::options::OptValues,
    target: Option<&Target>,
) -> Result<dbmeter_db::IgnoreList, RunError> {
    target.map_or_else(
        || Ok(dbmeter_db::IgnoreList::parse("none")),
        |t| settings::ignore_list(o, t),
    )
}

/// The options as the document records them: no secrets, no store
/// options, the URL's password masked, the ignore list resolved.
fn recorded_options(
    req: &Request,
    target: Option<&Target>,
) -> std::collections::BTreeMap<String, String> {
    let o = &req.options;
    o.all()
        .iter()
        .filter(|(k, _)| {
            !SECRET_OPTIONS.contains(&k.as_str())
                && !STORE_OPTIONS.contains(&k.as_str())
                && !VERDICT_OPTIONS.contains(&k.as_str())
                && !METRICS_OPTIONS.contains(&k.as_str())
                && !SHARD_OPTIONS.contains(&k.as_str())
        })
        .map(|(k, v)| match (k.as_str(), target) {
            ("ignore-errors", Some(t)) => (
                k.clone(),
                settings::ignore_list(o, t).map_or_else(|_| v.clone(), |l| l.to_option_value()),
            ),
            ("db", _) => (k.clone(), dbmeter_db::mask_password(v)),
            _ => (k.clone(), v.clone()),
        })
        .collect()
}

/// Runs `req` until its limit, a stop request on `stop` (Ctrl-C, a
/// campaign's signal) or a failure. Errors are for runs that could not
/// start; a run that started returns its document whatever happened.
pub fn run(req: &Request, obs: &dyn Observer, stop: &StopHandle) -> Result<Outcome, RunError> {
    let o = &req.options;
    let bench = req.benchmark.as_ref();
    let mut general = settings::General::parse_run(o, req.layout)?;
    let shard = settings::shard(o)?;
    let mut start_at = settings::start_at(o)?;
    let own_users = bench.splits_own_users();
    if let Some(s) = shard {
        general.split(s, own_users)?;
        // Refused before the plan, which may take things (tpch's update
        // sets).
        if own_users && general.rate.is_some() {
            return Err(RunError::Usage(format!(
                "--shard={s} with --rate: {} sets its own users, and a rate is not split over them; leave --rate out or run it in one process",
                bench.name()
            )));
        }
    }
    // Kinds known from the options alone are checked before anything starts
    // (the barrier, the plan's connection).
    let known_kinds = bench.known_kinds(o);
    let stage_indexes = general.stage_indexes();
    if let Some(kinds) = &known_kinds {
        for a in &req.assertions {
            a.check_kind(kinds, &stage_indexes)
                .map_err(RunError::Usage)?;
        }
    }
    let barrier = settings::start_barrier(o, shard, req.store.is_some())?;
    crate::pinning::pin_client(o)?;
    // A bad store fails before the run.
    let mut store = req.store.as_ref().map(OpenStore::open).transpose()?;
    if let (Some(b), Some(st)) = (&barrier, store.as_mut()) {
        obs.event(&RunEvent::Note(&format!(
            "Waiting at the start barrier '{}' for the other {} shard(s) (up to {} s)",
            b.name,
            b.shards - 1,
            b.timeout.as_secs_f64()
        )));
        let m = st.meet(b, stop)?;
        start_at = Some(
            std::time::UNIX_EPOCH
                + std::time::Duration::try_from_secs_f64(m.start_unix_s).unwrap_or_default(),
        );
    }
    // Each shard draws its own numbers (from the one seed given).
    let seed = shard.map_or(settings::seed(o), |s| s.seed(settings::seed(o)));
    let mut engine = general.engine_config(seed);
    engine.start_at = start_at;
    let query_timeout = general.query_timeout;
    let target = target_of(req)?;
    if !bench.creates_its_data() {
        require_database_file(target.as_ref(), bench.name())?;
    }
    // With several hosts: where each user's connection goes.
    let host_use = match target.as_ref() {
        Some(Target::Mysql(t) | Target::Postgres(t)) if t.endpoint_count() > 1 => Some(
            std::sync::Arc::new(dbmeter_db::HostUse::new(engine.threads, t.endpoint_count())),
        ),
        _ => None,
    };
    let connect = target.as_ref().map(|t| dbmeter_db::ConnectOptions {
        query_timeout,
        host_use: host_use.clone(),
        ..settings::connect_options(o, t.clone())
    });
    let ctx = Context {
        options: o,
        connect: connect.as_ref(),
        ignore: ignore_of(o, target.as_ref())?,
        seed,
        threads: engine.threads,
        console: obs,
        server: crate::managed::control_for(target.as_ref()),
        layout: req.layout,
        shard,
    };
    let mut plan = bench.plan(&ctx)?;
    plan.shape_engine(&mut engine);
    if let Some(s) = shard {
        // A benchmark that splits its own users (tpch's streams, replay's
        // sessions) has taken its share in its plan; any other that sets
        // its own users would run them N times over.
        if !own_users && engine.threads != general.threads {
            return Err(RunError::Usage(format!(
                "--shard={s}: {} sets its own users, which are not split over shards; run it in one process",
                bench.name()
            )));
        }
    }
    let kinds = plan.kinds();
    engine.kinds = kinds.len();
    let measures = plan.measures();
    if measures.len() > MAX_MEASURES {
        return Err(RunError::Failed(format!(
            "{} declares {} measures; a run counts at most {MAX_MEASURES}",
            bench.name(),
            measures.len()
        )));
    }
    let measure_names: Vec<String> = measures.iter().map(|m| m.name.to_string()).collect();
    debug_assert!(
        known_kinds.as_ref().is_none_or(|k| *k == kinds),
        "{}: Benchmark::known_kinds {known_kinds:?}, RunPlan::kinds {kinds:?}",
        bench.name()
    );
    for a in &req.assertions {
        a.check_names(&kinds, &measure_names, &stage_indexes)
            .map_err(RunError::Usage)?;
    }
    let version = plan.server_version();
    let percentile = line_percentile(&engine.percentiles);
    let every = general.report_interval.map(|d| d.as_secs_f64());
    let print = every.is_some();
    let header = RunHeader {
        version: env!("CARGO_PKG_VERSION").to_string(),
        benchmark: bench.name().to_string(),
        target: target.as_ref().map_or(String::new(), |t| t.to_string()),
        server_version: version.clone(),
        threads: engine.threads,
        rate: engine.rate,
        late_limit_ms: engine
            .late_limit
            .filter(|_| engine.rate.is_some())
            .map(|d| d.as_secs_f64() * 1e3),
        report_interval_s: every,
        checkpoints_s: {
            let mut at = dbmeter_benchmarks::options::parse_float_list(o.str("report-checkpoints"))
                .unwrap_or_default();
            at.retain(|t| *t > 0.0 && t.is_finite());
            at.sort_by(f64::total_cmp);
            at.dedup();
            at
        },
        time_limit_s: engine.time.map(|d| d.as_secs_f64()),
        warmup_s: engine.warmup.as_secs_f64(),
        warmup_auto_max_s: engine.auto_warmup.map(|d| d.as_secs_f64()),
        seed: engine.seed,
        seed_given: o.u64("rand-seed") != 0,
        line_percentile: percentile,
        measures: measures.iter().map(|m| m.info()).collect(),
        kinds: kinds.clone(),
        preamble: plan.preamble(),
    };
    obs.event(&RunEvent::Started(&header));
    plan.before_run(obs);
    if let Some(at) = start_at {
        match at.duration_since(SystemTime::now()) {
            Ok(left) => obs.event(&RunEvent::Note(&format!(
                "Starting at {} (in {:.1} s), once the users are connected",
                dbmeter_result::shards::format_rfc3339_millis(at),
                left.as_secs_f64()
            ))),
            Err(past) => obs.event(&RunEvent::Warning(&format!(
                "--start-at={} was {:.3} s ago: starting at once",
                o.str("start-at").trim(),
                past.duration().as_secs_f64()
            ))),
        }
    }

    let warn = |w: &dbmeter_env::Warning| obs.event(&RunEvent::Warning(&w.message));
    let recorder = Recorder::start(o, target.as_ref(), &engine, &warn, plan.server_optional());
    let measuring = recorder.measuring_flag();
    // --profile-server: perf on the server from the measured phase on.
    let profile_server = o
        .bool("profile-server")
        .then(|| crate::profile::server(target.as_ref(), recorder.server_pid()));
    let mut profiler = None;
    let mut errors = 0u64;
    // The engine calls on_interval and on_start one at a time, from the
    // thread that runs it: the plan is borrowed by one of them at a time,
    // and may word an interval itself (a script's report hook).
    let plan = std::cell::RefCell::new(plan);
    let mut on_interval = |s: &IntervalSample| {
        let interval = document::interval(s, &measures);
        if print {
            let words = plan.borrow_mut().own_words(&RunEvent::Interval {
                interval: &interval,
                percentile,
                words: None,
            });
            obs.event(&RunEvent::Interval {
                interval: &interval,
                percentile,
                words: words.as_deref(),
            });
        } else {
            errors += s.counters.errors();
            obs.event(&RunEvent::Live(&Live {
                interval,
                limit_s: header.time_limit_s,
                percentile,
                errors,
            }));
        }
    };
    let users = plan.borrow().users();
    let result = {
        let mut on_start = || {
            plan.borrow_mut().measure_start();
            if let Some(m) = &measuring {
                m.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            profiler = profile_server.map(crate::profile::start);
            obs.event(&RunEvent::Measuring);
        };
        dbmeter_engine::run_observed(&engine, users, stop, &mut on_interval, &mut on_start)
            .map_err(|e| RunError::Failed(e.to_string()))?
    };
    let mut plan = plan.into_inner();
    let profile = profiler.map(crate::profile::finish);
    let words = if print {
        plan.own_words(&RunEvent::MeasurementEnded { words: None })
    } else {
        None
    };
    obs.event(&RunEvent::MeasurementEnded {
        words: words.as_deref(),
    });

    let warmed = result
        .warmup
        .as_ref()
        .map_or(Duration::ZERO, |w| w.duration);
    let started = result.released_at;
    let shard_info = (shard.is_some() || start_at.is_some()).then(|| {
        let unix = |t: SystemTime| {
            t.duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64())
        };
        let skew_s = |at: SystemTime| match result.released_at.duration_since(at) {
            Ok(late) => late.as_secs_f64(),
            Err(early) => -early.duration().as_secs_f64(),
        };
        dbmeter_result::shards::ShardInfo {
            index: shard.map_or(0, |s| s.index),
            count: shard.map_or(1, |s| s.count),
            start_at: start_at.map(dbmeter_result::shards::format_rfc3339_millis),
            released_at: dbmeter_result::shards::format_rfc3339_millis(result.released_at),
            measure_start_unix_s: unix(result.released_at) + warmed.as_secs_f64(),
            start_skew_ms: start_at.map(|at| skew_s(at) * 1e3),
        }
    });
    let mut doc = document::build(
        Facts {
            workload: bench.name().to_string(),
            target: TargetInfo {
                url: target.as_ref().map_or(String::new(), |t| t.to_string()),
                driver: target.as_ref().map_or("none", |t| t.driver()).to_string(),
                server_version: version,
            },
            options: recorded_options(req, target.as_ref()),
            seed,
            started_at: humantime::format_rfc3339_seconds(started).to_string(),
            kinds,
            measures: &measures,
        },
        &result,
        &engine.percentiles,
    );
    doc.shard = shard_info;
    let profiles: Vec<(&str, &dbmeter_engine::Profile)> = [
        ("users", general.user_stages.as_deref()),
        ("rate", general.rate_stages.as_deref()),
    ]
    .into_iter()
    .filter_map(|(n, p)| p.map(|p| (n, p)))
    .collect();
    doc.stages = document::stage_results(&profiles, &doc.intervals, &engine.percentiles);
    doc.spikes = dbmeter_result::spikes::analyse(&doc, general.recovery_tolerance_pct);
    let mut outages: Vec<dbmeter_result::outages::Outage> = result
        .outages
        .iter()
        .map(|o| dbmeter_result::outages::Outage {
            start_s: o.start_s,
            length_s: o.length_s,
            events_lost: o.events_lost,
            failed_attempts: o.failed_attempts,
            errors: o
                .errors
                .iter()
                .map(|(error, attempts)| dbmeter_result::outages::AttemptError {
                    error: error.clone(),
                    attempts: *attempts,
                })
                .collect(),
            connect_s: o.connect_s,
            ..Default::default()
        })
        .collect();
    dbmeter_result::outages::recover(&doc, &mut outages, general.recovery_tolerance_pct);
    doc.outages = outages;
    recorder.finish(&mut doc, result.abandoned > 0, &warn);
    if let Some(p) = profile {
        if let Some(n) = &p.note {
            let w = dbmeter_env::Warning::new("profile", n.clone());
            warn(&w);
            doc.warnings.push(w);
        }
        doc.profile = Some(p);
    }
    if let (Some(used), Some(Target::Mysql(t) | Target::Postgres(t))) = (&host_use, &target) {
        doc.hosts = host_counts(t, used, &result.users);
        let policy = connect.as_ref().map(|c| c.hosts).unwrap_or_default();
        for w in skipped_hosts(&doc.hosts, policy) {
            warn(&w);
            doc.warnings.push(w);
        }
    }
    if doc.target.server_version.is_empty()
        && let Some(s) = &doc.server
    {
        doc.target.server_version = s.version.clone();
    }
    // A staged run changes its load on purpose: no drift for it.
    if doc.stages.is_empty() {
        doc.drift = dbmeter_result::drift::analyse(&doc);
        doc.throughput_ci = dbmeter_result::throughput::analyse(&doc);
    }
    for w in plan.finish(&result, &mut doc) {
        warn(&w);
        doc.warnings.push(w);
    }
    doc.verdicts = req.assertions.iter().map(|a| a.judge(&doc)).collect();
    // Interrupted and failed runs are stored too: what they measured, and
    // how they ended.
    let stored = store.as_mut().map(|s| s.save(&doc.to_json()));
    let section = bench.report_text(&doc);
    let lead = bench.sysbench_lead(&doc);
    obs.event(&RunEvent::Finished {
        doc: &doc,
        section: section.as_deref(),
        lead: lead.as_deref(),
    });
    for w in plan.after_report() {
        warn(&w);
    }
    Ok(Outcome {
        document: doc,
        stored,
        section,
    })
}

/// What went to each host of a target with several: the users whose last
/// connection was there, their events and errors, and the connections
/// each host took.
fn host_counts(
    t: &dbmeter_db::ServerTarget,
    used: &dbmeter_db::HostUse,
    users: &[dbmeter_engine::UserTotals],
) -> Vec<dbmeter_result::HostCount> {
    let mut hosts: Vec<dbmeter_result::HostCount> = (0..t.endpoint_count())
        .map(|k| dbmeter_result::HostCount {
            host: t.endpoint(k),
            connections: used.connects(k),
            ..Default::default()
        })
        .collect();
    for (u, totals) in users.iter().enumerate() {
        if let Some(h) = used.host_of(u).and_then(|k| hosts.get_mut(k)) {
            h.users += 1;
            h.events += totals.events;
            h.errors += totals.errors;
        }
    }
    hosts
}

/// With failover, the hosts before the one the users went to that took
/// no connection: they did not answer (or did not suit
/// `target_session_attrs`), and were skipped.
fn skipped_hosts(
    hosts: &[dbmeter_result::HostCount],
    policy: dbmeter_db::HostPolicy,
) -> Vec<dbmeter_env::Warning> {
    if policy != dbmeter_db::HostPolicy::Failover {
        return Vec::new();
    }
    let Some(used) = hosts.iter().position(|h| h.connections > 0) else {
        return Vec::new();
    };
    hosts[..used]
        .iter()
        .map(|h| {
            dbmeter_env::Warning::new(
                "host_skipped",
                format!(
                    "host {} of --db took no connection (it did not answer, or did not suit target_session_attrs): the connections failed over to {}",
                    h.host, hosts[used].host
                ),
            )
        })
        .collect()
}
