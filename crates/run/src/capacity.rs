//! Capacity search (stress tests): `--find-capacity`.
//!
//! `rate` (the open model): a first step without a rate measures what the
//! users serve flat out; then the arrival rate starts at a quarter of that
//! and doubles while every step meets the targets, and bisects between the
//! highest rate that met them and the lowest that did not, until the two
//! are within 5%. A step meets them when its SLOs (`--slo`) hold, it
//! started the offered arrivals (short by no more than Poisson chance:
//! 4 standard deviations), and its backlog at the end is at most 100 ms of
//! arrivals (or the users, if more): a rate beyond capacity grows a
//! backlog, whatever its latency so far.
//!
//! `users` (the closed model, as HammerDB's autopilot sequence): 1, 2, 4,
//! ... users up to `--threads`, until throughput has fallen below its peak
//! twice or a step misses its SLOs; the peak is the step with the highest
//! throughput, the capacity the most users that met the SLOs.
//!
//! Each step is a run with `--settle-time` of warm-up and `--step-time`
//! measured; the run's document is the capacity step's, with every step
//! in its `capacity` section.

use crate::RunError;
use crate::execute::{Outcome, run};
use crate::request::{Observer, Request};
use crate::store::OpenStore;
use dbmeter_benchmarks::{Console, LoadProgress};
use dbmeter_engine::StopHandle;
use dbmeter_result::capacity::{CapacityResult, CapacityStep};
use dbmeter_result::verdict::Assertion;
use dbmeter_result::{RunDocument, RunEvent};

/// The most steps a search takes.
const MAX_STEPS: usize = 24;
/// Bisection ends when the bounds are this close (hi / lo).
const PRECISION: f64 = 1.05;

/// Passes the first step's header and every step's warnings (once each)
/// on, and nothing else: the search says one line per step itself, and
/// the capacity step's report at the end.
struct StepObserver<'a> {
    outer: &'a dyn Observer,
    started: std::sync::atomic::AtomicBool,
    seen: std::sync::Mutex<Vec<String>>,
}

impl Console for StepObserver<'_> {
    fn line(&self, _text: &str) {}
    fn progress(&self) -> &LoadProgress {
        self.outer.progress()
    }
}

impl Observer for StepObserver<'_> {
    fn event(&self, event: &RunEvent) {
        match event {
            RunEvent::Started(_)
                if !self
                    .started
                    .swap(true, std::sync::atomic::Ordering::Relaxed) =>
            {
                self.outer.event(event);
            }
            RunEvent::Warning(w) => {
                if let Ok(mut seen) = self.seen.lock()
                    && !seen.iter().any(|s| s == w)
                {
                    seen.push(w.to_string());
                    self.outer.event(event);
                }
            }
            _ => {}
        }
    }
}

fn say(obs: &dyn Observer, text: &str) {
    obs.event(&RunEvent::Note(text));
}

/// Whether a step's document meets the targets, and why not.
fn judge(doc: &RunDocument, slos: &[Assertion], threads: usize) -> (bool, Option<String>) {
    let mut missed = Vec::new();
    for s in slos {
        let v = s.judge(doc);
        if !v.passed() {
            missed.push(v.line());
        }
    }
    if let Some(r) = &doc.rate {
        // Poisson arrivals wander: short of the offered count by more
        // than 4 standard deviations is not chance.
        let offered = r.target_per_s * doc.totals.duration_s;
        let done = r.achieved_per_s * doc.totals.duration_s;
        if done < offered - 4.0 * offered.sqrt() {
            missed.push(format!(
                "achieved {:.1}% of the offered rate",
                r.achieved_pct()
            ));
        }
        let allowed = (r.target_per_s * 0.1).max(threads as f64);
        if r.unstarted_at_end as f64 > allowed {
            missed.push(format!(
                "a backlog of {} arrivals at the end",
                r.unstarted_at_end
            ));
        }
    }
    if !doc.completed() {
        missed.push(format!(
            "the step ended {}",
            doc.end.reason.replace('_', " ")
        ));
    }
    if missed.is_empty() {
        (true, None)
    } else {
        (false, Some(missed.join("; ")))
    }
}

/// The search's state: its steps, the best outcome so far (the capacity
/// step) and the last other one.
struct Search<'a> {
    req: &'a Request,
    obs: &'a dyn Observer,
    quiet: StepObserver<'a>,
    stop: &'a StopHandle,
    steps: Vec<CapacityStep>,
    best: Option<(f64, Outcome)>,
    last: Option<Outcome>,
}

impl Search<'_> {
    /// Runs one step: `users` users at `rate` (None: flat out). None when
    /// the search must end (a stop, the most steps, a broken step).
    fn step(&mut self, rate: Option<f64>, users: usize) -> Result<Option<(bool, f64)>, RunError> {
        if self.stop.is_stopped() || self.steps.len() >= MAX_STEPS {
            return Ok(None);
        }
        let o = &self.req.options;
        let mut r = self.req.clone();
        // The run checks the SLOs' names before it starts (a kind the
        // workload does not have is a usage error) and judges them.
        r.assertions = self.req.slos.clone();
        r.store = None;
        r.options.set("time", &o.f64("step-time").to_string());
        r.options
            .set("warmup-time", &o.f64("settle-time").to_string());
        r.options.set("threads", &users.to_string());
        r.options
            .set("rate", &rate.map_or("0".to_string(), |x| format!("{x:.3}")));
        let outcome = run(&r, &self.quiet, self.stop).map_err(|e| match e {
            RunError::Usage(m) => RunError::Usage(m.replacen("--assert '", "--slo '", 1)),
            other => other,
        })?;
        let doc = &outcome.document;
        let (met, why) = judge(doc, &self.req.slos, users);
        let s = CapacityStep {
            offered_per_s: rate,
            users,
            achieved_per_s: doc.totals.events_per_s,
            p99_ms: doc.latency_percentile_ms(99.0),
            errors: doc.totals.ignored_errors + doc.totals.connection_errors,
            met,
            missed: why,
        };
        say(
            self.obs,
            &format!("step {}: {}", self.steps.len() + 1, s.line()),
        );
        let score = rate.unwrap_or(s.achieved_per_s);
        self.steps.push(s);
        let broken = !doc.completed();
        if met && self.best.as_ref().is_none_or(|(b, _)| score > *b) {
            self.best = Some((score, outcome));
        } else {
            self.last = Some(outcome);
        }
        Ok((!broken).then_some((met, score)))
    }

    fn rate_search(&mut self, threads: usize) -> Result<(), RunError> {
        // Flat out first: what the users serve.
        let Some((_, flat_out)) = self.step(None, threads)? else {
            return Ok(());
        };
        // The flat-out step is no rate: it is not the capacity.
        if self.steps.last().is_some_and(|s| s.offered_per_s.is_none())
            && let Some((_, o)) = self.best.take()
        {
            self.last = Some(o);
        }
        let mut r = (flat_out / 4.0).max(crate::settings::MIN_RATE);
        let (mut lo, mut hi): (Option<f64>, Option<f64>) = (None, None);
        // Up (or down) by doubling until both bounds are known.
        while lo.is_none() || hi.is_none() {
            let Some((met, _)) = self.step(Some(r), threads)? else {
                return Ok(());
            };
            if met {
                lo = Some(r);
                r *= 2.0;
            } else {
                hi = Some(r);
                if lo.is_none() {
                    r /= 2.0;
                    if r < crate::settings::MIN_RATE {
                        return Ok(());
                    }
                }
            }
        }
        while let (Some(l), Some(h)) = (lo, hi) {
            if h / l <= PRECISION {
                break;
            }
            let mid = (l + h) / 2.0;
            let Some((met, _)) = self.step(Some(mid), threads)? else {
                break;
            };
            if met {
                lo = Some(mid);
            } else {
                hi = Some(mid);
            }
        }
        Ok(())
    }

    fn users_search(&mut self, threads: usize) -> Result<(), RunError> {
        let mut users = 1usize;
        let (mut peak, mut falls) = (0.0f64, 0);
        while let Some((met, tps)) = self.step(None, users)? {
            if !met {
                break;
            }
            if tps > peak {
                peak = tps;
                falls = 0;
            } else {
                falls += 1;
                if falls == 2 {
                    break;
                }
            }
            if users >= threads {
                break;
            }
            users = (users * 2).min(threads);
        }
        Ok(())
    }
}

/// Runs the search; the outcome is the capacity step's run (or the last
/// step's, when none met the targets), with the whole search in its
/// document's `capacity` section, reported to `obs` as one run.
pub fn find_capacity(
    req: &Request,
    mode: &str,
    obs: &dyn Observer,
    stop: &StopHandle,
) -> Result<Outcome, RunError> {
    // Each step is a run of this length: 0 would be one without end.
    let o = &req.options;
    o.f64_where(
        "step-time",
        |v| (crate::settings::MIN_SECONDS..=crate::settings::MAX_SECONDS).contains(&v),
        "seconds above 0, at most a year",
    )?;
    o.f64_where(
        "settle-time",
        |v| (0.0..=crate::settings::MAX_SECONDS).contains(&v),
        "seconds from 0, at most a year",
    )?;
    // A bad store fails before the search.
    let mut store = req.store.as_ref().map(OpenStore::open).transpose()?;
    let threads = req.options.u64("threads").max(1) as usize;
    let mut search = Search {
        req,
        obs,
        quiet: StepObserver {
            outer: obs,
            started: std::sync::atomic::AtomicBool::new(false),
            seen: std::sync::Mutex::new(Vec::new()),
        },
        stop,
        steps: Vec::new(),
        best: None,
        last: None,
    };
    if mode == "users" {
        search.users_search(threads)?;
    } else {
        search.rate_search(threads)?;
    }
    let mut result = CapacityResult {
        mode: mode.to_string(),
        slos: req.slos.iter().map(|s| s.text.clone()).collect(),
        capacity: search.best.as_ref().map(|(b, _)| *b),
        steps: std::mem::take(&mut search.steps),
        ..CapacityResult::default()
    };
    result.settle();
    let Some(mut outcome) = search.best.map(|(_, o)| o).or(search.last) else {
        return Err(RunError::Failed(
            "the capacity search made no step (stopped before the first)".into(),
        ));
    };
    let doc = &mut outcome.document;
    doc.capacity = Some(result);
    doc.verdicts = req.assertions.iter().map(|a| a.judge(doc)).collect();
    outcome.stored = store.as_mut().map(|s| s.save(&doc.to_json()));
    let section = req.benchmark.report_text(doc);
    let lead = req.benchmark.sysbench_lead(doc);
    obs.event(&RunEvent::MeasurementEnded { words: None });
    obs.event(&RunEvent::Finished {
        doc,
        section: section.as_deref(),
        lead: lead.as_deref(),
    });
    outcome.section = section;
    Ok(outcome)
}
