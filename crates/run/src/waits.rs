//! The server's wait events during the measured phase: a thread of its own,
//! on a connection of its own, asks the server every [`INTERVAL`] which
//! wait each busy session is in, and counts the answers by event.
//! PostgreSQL: `pg_stat_activity` (an active session in no wait is on
//! CPU); MariaDB/MySQL: `performance_schema.events_waits_current` of the
//! foreground threads running a statement, when performance_schema is on.
//! SQLite has no server and no sampler. Nothing here fails a run: what
//! cannot be sampled is the record's note.

use dbmeter_db::{ConnectOptions, Connection, DbError, Target};
use dbmeter_env::WaitRecord;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Time between two samples: often enough for some hundred samples in a
/// minute, rarely enough that one query per sample costs the server
/// nothing worth measuring.
pub const INTERVAL: Duration = Duration::from_millis(100);

/// How long the sampler's statements may take, and how long the run waits
/// for the sampler when it stops.
const TIMEOUT: Duration = Duration::from_secs(2);

/// PostgreSQL: the run's database's active client sessions, but ours.
const PG_SAMPLE: &str = "SELECT coalesce(wait_event_type || ':' || wait_event, 'CPU') \
     FROM pg_stat_activity WHERE state = 'active' AND backend_type = 'client backend' \
     AND pid <> pg_backend_pid() AND datname = current_database()";

/// MariaDB/MySQL: the foreground threads running a statement (a prepared
/// one is `Execute`), but ours,
/// with the wait each is in (none when it waits on nothing instrumented).
const MY_SAMPLE: &str = "SELECT coalesce(w.EVENT_NAME, 'no instrumented wait') \
     FROM performance_schema.threads t LEFT JOIN performance_schema.events_waits_current w \
     ON w.THREAD_ID = t.THREAD_ID AND w.END_EVENT_ID IS NULL \
     WHERE t.TYPE = 'FOREGROUND' AND t.PROCESSLIST_COMMAND IN ('Query', 'Execute', 'Fetch') \
     AND t.PROCESSLIST_ID <> CONNECTION_ID()";

/// The sampler of one run: started with the recorder, counting from
/// [`WaitSampler::measuring`] until [`WaitSampler::finish`].
pub(crate) struct WaitSampler {
    stop: mpsc::Sender<()>,
    measuring: Arc<AtomicBool>,
    done: mpsc::Receiver<WaitRecord>,
    _thread: Option<JoinHandle<()>>,
}

impl WaitSampler {
    /// Connects and waits for the measured phase; None for targets
    /// without a server (SQLite, a dry run).
    pub(crate) fn start(connect: &ConnectOptions) -> Option<WaitSampler> {
        if matches!(connect.target, Target::Sqlite { .. }) || connect.dry_run {
            return None;
        }
        let connect = ConnectOptions {
            query_timeout: Some(TIMEOUT),
            ..connect.clone()
        };
        let (stop, stopped) = mpsc::channel::<()>();
        let (tx, done) = mpsc::channel::<WaitRecord>();
        let measuring = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&measuring);
        let thread = std::thread::Builder::new()
            .name("dbmeter-waits".into())
            .spawn(move || {
                let _ = tx.send(sample(&connect, &flag, &stopped));
            })
            .ok();
        Some(WaitSampler {
            stop,
            measuring,
            done,
            _thread: thread,
        })
    }

    /// Stops sampling and returns the counts. A sampler stuck on a server
    /// that does not answer is left behind, and the record says so.
    pub(crate) fn finish(self) -> WaitRecord {
        let _ = self.stop.send(());
        self.done
            .recv_timeout(TIMEOUT * 2)
            .unwrap_or_else(|_| WaitRecord {
                note: Some(
                    "the wait-event sampler got no answer from the server at the end".into(),
                ),
                ..WaitRecord::default()
            })
    }

    /// The flag to raise when the measured phase starts: samples count
    /// from then on.
    pub(crate) fn flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.measuring)
    }
}

/// The MariaDB/MySQL set-up that decides what can be sampled: None when
/// performance_schema can be sampled, else why not (the record's note and
/// whether to sample at all).
fn mysql_setup(c: &mut Connection) -> Result<(bool, Option<String>), DbError> {
    let on = c.query_rows("SELECT @@performance_schema")?;
    let on = on
        .rows
        .first()
        .and_then(|r| r.first().cloned().flatten())
        .is_some_and(|v| v == "1" || v.eq_ignore_ascii_case("ON"));
    if !on {
        return Ok((
            false,
            Some(
                "performance_schema is OFF on this server, so it has no wait events to sample \
                 (start it with performance_schema=ON)"
                    .into(),
            ),
        ));
    }
    let consumer = c.query_rows(
        "SELECT ENABLED FROM performance_schema.setup_consumers WHERE NAME = 'events_waits_current'",
    )?;
    let enabled = consumer
        .rows
        .first()
        .and_then(|r| r.first().cloned().flatten())
        .is_some_and(|v| v.eq_ignore_ascii_case("YES"));
    Ok((
        true,
        (!enabled).then(|| {
            "performance_schema's events_waits_current consumer is disabled, so every busy \
             session shows as in no instrumented wait (enable it with UPDATE \
             performance_schema.setup_consumers SET ENABLED = 'YES' WHERE NAME = \
             'events_waits_current')"
                .to_string()
        }),
    ))
}

/// The sampler thread: connects, then samples every [`INTERVAL`] while the
/// measured phase goes on, until told to stop.
fn sample(
    connect: &ConnectOptions,
    measuring: &AtomicBool,
    stop: &mpsc::Receiver<()>,
) -> WaitRecord {
    let mut rec = WaitRecord {
        interval_ms: INTERVAL.as_millis() as u64,
        ..WaitRecord::default()
    };
    let mut c = match Connection::connect(connect) {
        Ok(c) => c,
        Err(e) => {
            rec.note = Some(format!("could not connect to sample wait events: {e}"));
            return rec;
        }
    };
    let sql = match connect.target {
        Target::Postgres(_) => {
            rec.source = "pg_stat_activity".into();
            // One transaction for all samples: each sample in a
            // transaction of its own would add ten commits a second to
            // xact_commit, which tpcc's TPM and --why read. It takes no
            // snapshot between statements and writes nothing, so it holds
            // back no vacuum; pg_stat_clear_snapshot() makes each sample
            // read the sessions afresh.
            if let Err(e) = c.query_rows("BEGIN READ ONLY") {
                rec.note = Some(format!("could not sample wait events: {e}"));
                let _ = stop.recv();
                return rec;
            }
            PG_SAMPLE
        }
        _ => {
            rec.source = "performance_schema.events_waits_current".into();
            match mysql_setup(&mut c) {
                Ok((sample, note)) => {
                    rec.note = note;
                    if !sample {
                        let _ = stop.recv();
                        return rec;
                    }
                }
                Err(e) => {
                    rec.note = Some(format!("could not read performance_schema's set-up: {e}"));
                    let _ = stop.recv();
                    return rec;
                }
            }
            MY_SAMPLE
        }
    };
    let t0 = Instant::now();
    let mut n = 1u32;
    loop {
        let wait = (t0 + INTERVAL * n).saturating_duration_since(Instant::now());
        match stop.recv_timeout(wait) {
            Err(RecvTimeoutError::Timeout) => {}
            _ => return rec,
        }
        while t0 + INTERVAL * n <= Instant::now() {
            n += 1;
        }
        if !measuring.load(Ordering::Relaxed) {
            continue;
        }
        if matches!(connect.target, Target::Postgres(_))
            && let Err(e) = c.query_rows("SELECT pg_stat_clear_snapshot()")
        {
            rec.note = Some(format!("sampling wait events stopped: {e}"));
            let _ = stop.recv();
            return rec;
        }
        match c.query_rows(sql) {
            Ok(rows) => {
                rec.samples += 1;
                for r in &rows.rows {
                    let event = r
                        .first()
                        .cloned()
                        .flatten()
                        .unwrap_or_else(|| "unknown".into());
                    rec.busy += 1;
                    *rec.events.entry(event).or_default() += 1;
                }
            }
            Err(e) => {
                rec.note = Some(format!("sampling wait events stopped: {e}"));
                let _ = stop.recv();
                return rec;
            }
        }
    }
}
