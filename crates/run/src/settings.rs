//! From option values to the settings of each layer: the target, its
//! connection options, the engine's configuration, the seed.

use crate::RunError;
use dbmeter_benchmarks::options::{OptValues, parse_float_list};
use dbmeter_benchmarks::shard::Shard;
use dbmeter_db::conninfo::{self, Env, Given, ServerKind, Spec};
use dbmeter_db::{ConnectOptions, IgnoreList, PsMode, SqliteOptions, Target, TlsMode, TlsSettings};
use dbmeter_engine::{EngineConfig, Profile};
use dbmeter_result::Layout;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The target of the options: `--db`, or sysbench's `--mysql-*` /
/// `--pgsql-*` options, completed from the environment and the client
/// files as the server's own client would (`dbmeter_db::conninfo`).
pub fn target(o: &OptValues) -> Result<Target, RunError> {
    target_in(o, &Env::from_process())
}

/// [`target`] in environment `env`.
pub fn target_in(o: &OptValues, env: &Env) -> Result<Target, RunError> {
    let db = o.str("db");
    if o.given("db") && db.trim().is_empty() {
        // Most often a failed `URL=$(...)`: running on the default
        // SQLite file instead would measure the wrong database.
        return Err(RunError::Usage(
            "--db is empty: give a target (sqlite:PATH, mysql://..., postgres://...), or leave --db out for ./dbmeter.sqlite".into(),
        ));
    }
    let driver = o.str("db-driver").to_ascii_lowercase();
    let (kind, mut given, fallback) = if !db.is_empty() {
        match conninfo::parse_spec(db)? {
            Spec::Sqlite(t) => return Ok(t),
            Spec::Server(kind, given) => (kind, given, Given::default()),
        }
    } else if driver == "mysql" || (driver.is_empty() && given_any(o, "mysql-")) {
        let (given, fallback) = server_from_options(o, "mysql")?;
        (ServerKind::Mysql, given, fallback)
    } else if driver == "pgsql" || (driver.is_empty() && given_any(o, "pgsql-")) {
        let (given, fallback) = server_from_options(o, "pgsql")?;
        (ServerKind::Postgres, given, fallback)
    } else {
        return Ok(Target::default_sqlite());
    };
    // Options win over the URL's parameters (the first of a name wins).
    for (opt, param) in [
        ("ssl-mode", "sslmode"),
        ("ssl-ca", "sslrootcert"),
        ("ssl-cert", "sslcert"),
        ("ssl-key", "sslkey"),
        ("defaults-file", "defaults-file"),
    ] {
        if o.given(opt) {
            given
                .params
                .insert(0, (param.into(), o.str(opt).to_string()));
        }
    }
    let ask = o.bool("ask-password");
    if ask {
        // Asked for below, once the user is known: no password file or
        // variable is read meanwhile.
        given.password = Some(String::new());
    }
    let mut t = given.resolve(kind, &fallback, env)?.warn();
    if ask {
        t.password = Some(ask_password(&t.user)?);
    }
    let default_tls = match kind {
        ServerKind::Mysql => TlsMode::Disable,
        ServerKind::Postgres => TlsMode::Prefer,
    };
    TlsSettings::of(&t, default_tls)?;
    Ok(Target::server(kind, t))
}

/// Reads a password from the terminal without echo, or one line of
/// standard input when it is not a terminal (scripts, tests).
fn ask_password(user: &str) -> Result<String, RunError> {
    use std::io::IsTerminal;
    let fail = |e: std::io::Error| {
        RunError::Failed(format!("--ask-password: cannot read the password: {e}"))
    };
    if std::io::stdin().is_terminal() {
        return rpassword::prompt_password(format!("Password for {user}: ")).map_err(fail);
    }
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).map_err(fail)?;
    Ok(line.trim_end_matches(['\r', '\n']).to_string())
}

fn given_any(o: &OptValues, prefix: &str) -> bool {
    o.all().keys().any(|k| k.starts_with(prefix) && o.given(k))
}

/// A server target from sysbench's `--mysql-*` or `--pgsql-*` options:
/// what the user gave, and the options' defaults (used when neither the
/// environment nor a client file says otherwise).
fn server_from_options(o: &OptValues, p: &str) -> Result<(Given, Given), RunError> {
    let opt = |name: &str| o.str(&format!("{p}-{name}"));
    let list = |name: &str| -> Vec<String> {
        opt(name)
            .split(',')
            .map(|x| x.trim().to_string())
            .filter(|x| !x.is_empty())
            .collect()
    };
    // The options given (`given` true) or left at their defaults.
    let read = |given: bool| -> Result<Given, RunError> {
        let want = |name: &str| o.given(&format!("{p}-{name}")) == given;
        let mut g = Given::default();
        if want("host") {
            g.hosts = list("host");
        }
        if want("port") {
            g.ports = list("port")
                .iter()
                .map(|x| {
                    x.parse::<u16>().map_err(|_| {
                        RunError::Usage(format!("--{p}-port={x}: expected a port number"))
                    })
                })
                .collect::<Result<_, _>>()?;
        }
        if want("user") {
            g.user = Some(opt("user").to_string()).filter(|v| !v.is_empty());
        }
        if want("db") {
            g.database = Some(opt("db").to_string()).filter(|v| !v.is_empty());
        }
        Ok(g)
    };
    let mut given = read(true)?;
    let fallback = read(false)?;
    if p == "mysql" {
        given.socket = Some(o.str("mysql-socket"))
            .filter(|s| !s.is_empty())
            .map(Into::into);
    }
    given.password = Some(opt("password").to_string()).filter(|v| !v.is_empty());
    Ok((given, fallback))
}

pub fn connect_options(o: &OptValues, target: Target) -> ConnectOptions {
    ConnectOptions {
        target,
        ps_mode: if o.str("db-ps-mode").eq_ignore_ascii_case("disable") {
            PsMode::Disable
        } else {
            PsMode::Auto
        },
        sqlite: SqliteOptions {
            journal_mode: o.str("sqlite-journal-mode").to_ascii_lowercase(),
            synchronous: o.str("sqlite-synchronous").to_ascii_lowercase(),
            busy_timeout_ms: o.u64("sqlite-busy-timeout"),
        },
        // Only the virtual users' connections get --query-timeout.
        query_timeout: None,
        dry_run: o.bool("mysql-dry-run"),
        hosts: host_policy(o),
        host_use: None,
    }
}

/// `--hosts`; without it, failover (libpq's way), except for sysbench's
/// `--mysql-host` / `--pgsql-host` lists, which sysbench spreads.
fn host_policy(o: &OptValues) -> dbmeter_db::HostPolicy {
    let declared = |name: &str| o.declares(name) && o.given(name);
    if declared("hosts") {
        return dbmeter_db::HostPolicy::parse(o.str("hosts")).unwrap_or_default();
    }
    if !declared("db") && (declared("mysql-host") || declared("pgsql-host")) {
        return dbmeter_db::HostPolicy::Spread;
    }
    dbmeter_db::HostPolicy::Failover
}

/// `--ignore-errors` for `target`, or the target's default; a code that
/// the target never reports is a usage error.
pub fn ignore_list(o: &OptValues, target: &Target) -> Result<IgnoreList, RunError> {
    let v = o.str("ignore-errors");
    if v.trim().is_empty() {
        return Ok(IgnoreList::parse(target.default_ignored_errors()));
    }
    IgnoreList::parse_for(v, target).map_err(RunError::Usage)
}

/// The seed to use: the given one, or one drawn from the clock.
pub fn seed(o: &OptValues) -> u64 {
    match o.u64("rand-seed") {
        0 => SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(1, |d| (d.as_nanos() as u64) | 1),
        s => s,
    }
}

/// `--shard=I/N`, if given.
pub fn shard(o: &OptValues) -> Result<Option<Shard>, RunError> {
    let v = o.str("shard").trim();
    if v.is_empty() {
        if o.given("shard") {
            return Err(RunError::Usage(
                "--shard is empty: write I/N with 0 <= I < N, e.g. --shard=0/4 for the first of 4 shards".into(),
            ));
        }
        return Ok(None);
    }
    Shard::parse(v).map(Some).map_err(RunError::Usage)
}

/// `--start-at=TIME`, if given: RFC 3339 in UTC (`2026-11-27T18:00:00Z`,
/// fractions of a second too) or seconds since the Unix epoch.
pub fn start_at(o: &OptValues) -> Result<Option<SystemTime>, RunError> {
    let v = o.str("start-at").trim();
    if v.is_empty() {
        if o.given("start-at") {
            return Err(RunError::Usage(
                "--start-at is empty: give a time, RFC 3339 in UTC (2026-11-27T18:00:00Z) or unix seconds".into(),
            ));
        }
        return Ok(None);
    }
    parse_time(v).map(Some).map_err(|why| {
        RunError::Usage(format!(
            "--start-at={v}: {why}; give RFC 3339 in UTC, e.g. 2026-11-27T18:00:00Z, or unix seconds, e.g. $(( $(date +%s) + 30 ))"
        ))
    })
}

/// The seconds from the last shard's arrival at a `--start-barrier` to the
/// common start: time for every shard to see that arrival and to connect
/// its users.
pub const BARRIER_MARGIN_S: f64 = 3.0;

/// `--start-barrier=NAME` with its `--barrier-timeout`, if given: the
/// barrier of shard `shard` in the results store (so `--shard` and
/// `--store` are needed, and `--start-at` is the barrier's to set).
pub fn start_barrier(
    o: &OptValues,
    shard: Option<Shard>,
    store: bool,
) -> Result<Option<dbmeter_store::Barrier>, RunError> {
    let name = o.str("start-barrier").trim();
    if name.is_empty() {
        if o.given("start-barrier") {
            return Err(RunError::Usage(
                "--start-barrier is empty: give the barrier's name, the same in every shard".into(),
            ));
        }
        return Ok(None);
    }
    let Some(shard) = shard else {
        return Err(RunError::Usage(format!(
            "--start-barrier={name} starts the shards of one run together: give --shard=I/N too"
        )));
    };
    if o.given("start-at") {
        return Err(RunError::Usage(format!(
            "--start-barrier={name} sets the start itself: leave out --start-at"
        )));
    }
    if !store {
        return Err(RunError::Usage(format!(
            "--start-barrier={name}: the shards meet in the results store they share: add --store (a PostgreSQL URL across machines)"
        )));
    }
    let timeout = o.f64_where(
        "barrier-timeout",
        |v| (MIN_SECONDS..=MAX_SECONDS).contains(&v),
        &format!("seconds from {MIN_SECONDS} to {MAX_SECONDS}"),
    )?;
    Ok(Some(dbmeter_store::Barrier {
        name: name.to_string(),
        shard: shard.index,
        shards: shard.count,
        timeout: Duration::from_secs_f64(timeout),
        margin: Duration::from_secs_f64(BARRIER_MARGIN_S),
        host: dbmeter_env::hostname(),
    }))
}

/// A point in time written as RFC 3339 in UTC or as unix seconds.
pub fn parse_time(v: &str) -> Result<SystemTime, String> {
    if let Ok(secs) = v.parse::<f64>() {
        // Up to the year 9999, as RFC 3339.
        if !(0.0..=253_402_300_799.0).contains(&secs) {
            return Err("unix seconds from 0 to 253402300799".into());
        }
        return Ok(UNIX_EPOCH + Duration::from_secs_f64(secs));
    }
    humantime::parse_rfc3339(v).map_err(|e| match e {
        humantime::TimestampError::InvalidFormat
            if v.contains('+') || v.ends_with(|c: char| c.is_ascii_digit()) =>
        {
            "not a time in UTC (write it with a Z, no offset)".to_string()
        }
        e => format!("not a time ({e})"),
    })
}

pub fn percentiles(o: &OptValues) -> Result<Vec<f64>, RunError> {
    let list = parse_float_list(o.str("percentile")).unwrap_or_default();
    if list.is_empty() || list.iter().any(|p| !(*p > 0.0 && *p <= 100.0)) {
        return Err(RunError::Usage(format!(
            "--percentile={}: expected percentiles above 0 and at most 100, e.g. 50,95,99,99.9",
            o.str("percentile")
        )));
    }
    Ok(list)
}

pub fn threads(o: &OptValues) -> Result<usize, RunError> {
    match o.u64("threads") {
        0 => Err(RunError::Usage(
            "--threads=0: at least one thread is needed".into(),
        )),
        n if n > MAX_THREADS => Err(RunError::Usage(format!(
            "--threads={n}: at most {MAX_THREADS}"
        ))),
        n => Ok(n as usize),
    }
}

/// `--prometheus` and `--prometheus-linger`: where the live metrics are
/// served, and how long after the run.
#[derive(Clone, Debug, PartialEq)]
pub struct Prometheus {
    pub addr: SocketAddr,
    /// Zero: the endpoint closes when the run ends.
    pub linger: Duration,
}

/// The metrics endpoint the options ask for, if any. ADDR is `HOST:PORT`
/// (a name, an IPv4 address, `[IPv6]`) or `:PORT` for every interface.
pub fn prometheus(o: &OptValues) -> Result<Option<Prometheus>, RunError> {
    let given = o.str("prometheus").trim();
    let linger = seconds(
        o,
        "prometheus-linger",
        (MIN_SECONDS, MAX_SECONDS),
        Some("none"),
    )?
    .unwrap_or_default();
    if given.is_empty() {
        if o.given("prometheus") {
            return Err(RunError::Usage(
                "--prometheus is empty: give the address to serve the metrics at, HOST:PORT or :PORT (e.g. 127.0.0.1:9464)".into(),
            ));
        }
        if !linger.is_zero() {
            return Err(RunError::Usage(
                "--prometheus-linger keeps the metrics endpoint up after the run: add --prometheus=HOST:PORT".into(),
            ));
        }
        return Ok(None);
    }
    let bad = |why: &str| {
        RunError::Usage(format!(
            "--prometheus={given}: {why}; write HOST:PORT or :PORT, e.g. 127.0.0.1:9464 or :9464"
        ))
    };
    let text = match given.strip_prefix(':') {
        Some(port) => format!("0.0.0.0:{port}"),
        None => given.to_string(),
    };
    let Some((host, port)) = text.rsplit_once(':') else {
        return Err(bad("no port"));
    };
    let port: u16 = port
        .parse()
        .map_err(|_| bad(&format!("'{port}' is not a port number (0-65535)")))?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() {
        return Err(bad("no host"));
    }
    let addr = match host.parse::<std::net::IpAddr>() {
        Ok(ip) => SocketAddr::new(ip, port),
        Err(_) => (host, port)
            .to_socket_addrs()
            .ok()
            .and_then(|mut a| a.next())
            .ok_or_else(|| bad(&format!("the host '{host}' does not resolve")))?,
    };
    Ok(Some(Prometheus { addr, linger }))
}

/// The most virtual users a run takes.
pub const MAX_THREADS: u64 = 100_000;
/// The longest duration a general option takes, in seconds: a year of
/// 365 days. The engine's clock counts nanoseconds in 64 bits (584
/// years), so the sum of the run's durations always fits.
pub const MAX_SECONDS: f64 = 31_536_000.0;
/// The shortest duration above 0 that a general option takes (1 ms):
/// the engine does not schedule anything finer.
pub const MIN_SECONDS: f64 = 0.001;
/// The shortest `--report-interval`: the engine closes an interval at
/// most every 10 ms.
pub const MIN_INTERVAL: f64 = 0.01;
/// The longest `--query-timeout`, in seconds (11.6 days): PostgreSQL's
/// statement_timeout stops at 2^31 ms (24.8 days).
pub const MAX_QUERY_TIMEOUT: f64 = 1_000_000.0;
/// The highest `--rate` and `--connect-rate`, per second: one arrival a
/// microsecond. The arrival schedule is one sequence that every user
/// takes from under a lock, and the run counts the arrivals due by
/// walking it: a million a second stays a small part of one core.
pub const MAX_RATE: f64 = 1_000_000.0;
/// sysbench's event queue: in its layout, a rated run whose users fall
/// this many arrivals behind fails, as sysbench's does
/// ([`dbmeter_engine::QUEUE_FULL`]); dbmeter's own layout lets the
/// backlog grow and counts it in the latency.
pub const SYSBENCH_QUEUE: u64 = 131_072;
/// The lowest `--rate` and `--connect-rate` above 0, per second (one
/// event every 1,000 s on average).
pub const MIN_RATE: f64 = 0.001;

/// The general options of a run that are numbers with a unit (durations,
/// rates, counts), parsed and checked once. A value out of range is a
/// usage error that says what the option takes.
#[derive(Clone, Debug, PartialEq)]
pub struct General {
    pub threads: usize,
    /// `--time`; None = no limit.
    pub time: Option<Duration>,
    /// `--events`; None = no limit.
    pub events: Option<u64>,
    /// `--warmup-time` (zero: none).
    pub warmup: Duration,
    /// `--warmup-time=auto[:MAX]`: the warm-up ends when throughput is
    /// steady, at most MAX (`warmup` is then zero).
    pub auto_warmup: Option<Duration>,
    /// `--rate`, events per second; None = as fast as possible.
    pub rate: Option<f64>,
    /// With a rate, the backlog that fails the run (sysbench's layout).
    pub queue_limit: Option<u64>,
    /// `--connect-rate`, connections per second; None = all at once.
    pub connect_rate: Option<f64>,
    /// `--report-interval`; None = no interval lines.
    pub report_interval: Option<Duration>,
    pub reconnect_timeout: Duration,
    pub abandon_timeout: Duration,
    /// `--forced-shutdown`; None = off.
    pub forced_shutdown: Option<Duration>,
    /// `--query-timeout`; None = none.
    pub query_timeout: Option<Duration>,
    pub percentiles: Vec<f64>,
    /// `--stages`: the active users over the run.
    pub user_stages: Option<Arc<Profile>>,
    /// `--rate-stages`: the arrival rate over the run.
    pub rate_stages: Option<Arc<Profile>>,
    /// `--recovery-tolerance`, in percent.
    pub recovery_tolerance_pct: f64,
}

/// `--stages` and `--rate-stages`, checked against the options they
/// replace: the profile sets the run's length (and the users, or the rate).
/// The users' profile and the rate's.
type Profiles = (Option<Arc<Profile>>, Option<Arc<Profile>>);

fn stages(o: &OptValues) -> Result<Profiles, RunError> {
    let parse = |name: &str, max: f64| -> Result<Option<Arc<Profile>>, RunError> {
        let text = o.str(name).trim();
        if text.is_empty() {
            return Ok(None);
        }
        Profile::parse(text, max)
            .map(|p| Some(Arc::new(p)))
            .map_err(|e| RunError::Usage(format!("--{name}={text}: {e}")))
    };
    let users = parse("stages", MAX_THREADS as f64)?;
    let rate = parse("rate-stages", MAX_RATE)?;
    let (Some(first), name) = (match (&users, &rate) {
        (Some(u), _) => (Some(u), "stages"),
        (None, Some(r)) => (Some(r), "rate-stages"),
        (None, None) => (None, ""),
    }) else {
        return Ok((None, None));
    };
    if let (Some(u), Some(r)) = (&users, &rate)
        && (u.duration_s() - r.duration_s()).abs() > 1e-9
    {
        return Err(RunError::Usage(format!(
            "--stages last {} s and --rate-stages {} s: give both the same length",
            u.duration_s(),
            r.duration_s()
        )));
    }
    let clash = |other: &str, why: &str| {
        RunError::Usage(format!(
            "--{name} and --{other}: {why}; leave --{other} out"
        ))
    };
    if o.given("time") {
        return Err(clash(
            "time",
            &format!("the stages set the run's length ({} s)", first.duration_s()),
        ));
    }
    if o.given("warmup-time") && o.str("warmup-time").trim().parse::<f64>() != Ok(0.0) {
        return Err(clash(
            "warmup-time",
            "the stages start with the users (make the first stage the warm-up; the report shows each stage apart)",
        ));
    }
    if users.is_some() && o.given("threads") {
        return Err(RunError::Usage(
            "--stages and --threads: the stages set the users (the peak is started, the others wait); leave --threads out".into(),
        ));
    }
    if users.as_ref().is_some_and(|u| u.peak() < 1.0) {
        return Err(RunError::Usage(format!(
            "--stages={}: no stage has a user",
            o.str("stages")
        )));
    }
    if rate.is_some() && o.given("rate") && o.f64("rate") > 0.0 {
        return Err(RunError::Usage(
            "--rate-stages and --rate: the stages set the rate; leave --rate out".into(),
        ));
    }
    Ok((users, rate))
}

/// Seconds in the words of the error messages.
fn shown(max: f64) -> String {
    if max == MAX_SECONDS {
        format!("{max} (a year)")
    } else {
        format!("{max}")
    }
}

/// The value of option `name` in seconds: 0 (None) when `zero` says what
/// 0 means, else from `min` to `max`.
/// How long an automatic warm-up may last when `--warmup-time=auto` gives
/// no limit.
pub const AUTO_WARMUP_MAX_S: f64 = 300.0;

/// `--warmup-time`: seconds, or (in dbmeter's layout) `auto[:MAX]`.
fn warmup(o: &OptValues, layout: Layout) -> Result<(Duration, Option<Duration>), RunError> {
    let text = o.str("warmup-time").trim();
    let span = (MIN_SECONDS, MAX_SECONDS);
    let sysbench = matches!(layout, Layout::Sysbench { .. });
    let auto = text
        .get(..4)
        .filter(|w| w.eq_ignore_ascii_case("auto"))
        .map(|_| &text[4..]);
    match auto {
        Some(rest) if !sysbench => {
            let max = match rest.strip_prefix(':') {
                None if rest.is_empty() => Some(AUTO_WARMUP_MAX_S),
                None => None,
                Some(m) => m
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|v| (span.0..=span.1).contains(v)),
            };
            match max {
                Some(m) => Ok((Duration::ZERO, Some(Duration::from_secs_f64(m)))),
                None => Err(RunError::Usage(format!(
                    "--warmup-time={text}: expected auto or auto:MAX, MAX in seconds from {} to {}",
                    span.0,
                    shown(span.1)
                ))),
            }
        }
        _ if sysbench => Ok((
            seconds(o, "warmup-time", span, Some("no warm-up"))?.unwrap_or_default(),
            None,
        )),
        _ => {
            let v = o.f64_where(
                "warmup-time",
                |v| v == 0.0 || (span.0..=span.1).contains(&v),
                &format!(
                    "seconds from {} to {}, 0 for no warm-up, or auto[:MAX] to end it when throughput is steady",
                    span.0,
                    shown(span.1)
                ),
            )?;
            // 0: no warm-up.
            Ok((Duration::from_secs_f64(v), None))
        }
    }
}

fn seconds(
    o: &OptValues,
    name: &str,
    (min, max): (f64, f64),
    zero: Option<&str>,
) -> Result<Option<Duration>, RunError> {
    let or = zero.map(|z| format!(", or 0 for {z}")).unwrap_or_default();
    let expected = format!("seconds from {min} to {}{or}", shown(max));
    let v = o.f64_where(
        name,
        |v| (v == 0.0 && zero.is_some()) || (min..=max).contains(&v),
        &expected,
    )?;
    Ok((v != 0.0).then(|| Duration::from_secs_f64(v)))
}

/// The value of option `name` per second: 0 (None) for `zero`, else from
/// [`MIN_RATE`] to [`MAX_RATE`].
fn per_second(o: &OptValues, name: &str, what: &str, zero: &str) -> Result<Option<f64>, RunError> {
    let expected = format!("{what} per second from {MIN_RATE} to {MAX_RATE}, or 0 for {zero}");
    let v = o.f64_where(
        name,
        |v| v == 0.0 || (MIN_RATE..=MAX_RATE).contains(&v),
        &expected,
    )?;
    Ok((v != 0.0).then_some(v))
}

impl General {
    /// The settings of a run in dbmeter's layout.
    pub fn parse(o: &OptValues) -> Result<General, RunError> {
        Self::parse_in(o, Layout::Dbmeter)
    }

    /// The settings of a run presented in `layout`. In sysbench's, as in
    /// sysbench, `--rate` has no upper bound: the event queue
    /// ([`SYSBENCH_QUEUE`]) stops a run whose users cannot keep up.
    /// The settings of a run: [`General::parse_in`], then the load
    /// profiles (`--stages`, `--rate-stages`), which set the run's length
    /// and its users or rate.
    pub fn parse_run(o: &OptValues, layout: Layout) -> Result<General, RunError> {
        let mut g = General::parse_in(o, layout)?;
        if matches!(layout, Layout::Sysbench { .. }) {
            return Ok(g);
        }
        let (user_stages, rate_stages) = stages(o)?;
        if let Some(p) = user_stages.as_ref().or(rate_stages.as_ref()) {
            g.time = Some(Duration::from_secs_f64(p.duration_s()));
        }
        if let Some(p) = &user_stages {
            g.threads = (p.peak() + 1e-9).floor().max(1.0) as usize;
        }
        // Under a rate profile, the rate the run's figures compare with is
        // its mean.
        if let Some(p) = &rate_stages {
            g.rate = Some((p.expected(0.0, p.duration_s()) / p.duration_s()).max(MIN_RATE));
        }
        g.user_stages = user_stages;
        g.rate_stages = rate_stages;
        Ok(g)
    }

    pub fn parse_in(o: &OptValues, layout: Layout) -> Result<General, RunError> {
        let sysbench = matches!(layout, Layout::Sysbench { .. });
        let rate = if sysbench {
            let v = o.f64_where(
                "rate",
                |v| v == 0.0 || v >= MIN_RATE,
                &format!("events per second from {MIN_RATE}, or 0 for as fast as possible"),
            )?;
            (v != 0.0).then_some(v)
        } else {
            per_second(o, "rate", "events", "as fast as possible")?
        };
        let span = (MIN_SECONDS, MAX_SECONDS);
        let forced = o.str("forced-shutdown").trim();
        let forced_shutdown = match forced.to_ascii_lowercase().as_str() {
            "off" | "" => None,
            v => match v.parse::<f64>() {
                Ok(s) if (0.0..=MAX_SECONDS).contains(&s) => Some(Duration::from_secs_f64(s)),
                _ => {
                    return Err(RunError::Usage(format!(
                        "--forced-shutdown={forced}: expected seconds from 0 to {}, or 'off'",
                        shown(MAX_SECONDS)
                    )));
                }
            },
        };
        // Above 0: how long reconnects may fail, and interrupted events
        // may keep the run waiting.
        let required = |name: &str| -> Result<Duration, RunError> {
            Ok(seconds(o, name, span, None)?.unwrap_or_default())
        };
        let (warmup, auto_warmup) = warmup(o, layout)?;
        Ok(General {
            threads: threads(o)?,
            time: seconds(o, "time", span, Some("no limit"))?,
            events: Some(o.u64("events")).filter(|&n| n > 0),
            warmup,
            auto_warmup,
            rate,
            queue_limit: sysbench.then_some(SYSBENCH_QUEUE),
            connect_rate: per_second(o, "connect-rate", "connections", "all at once")?,
            report_interval: seconds(
                o,
                "report-interval",
                (MIN_INTERVAL, MAX_SECONDS),
                Some("no interval lines"),
            )?,
            reconnect_timeout: required("reconnect-timeout")?,
            abandon_timeout: required("abandon-timeout")?,
            forced_shutdown,
            query_timeout: seconds(
                o,
                "query-timeout",
                (MIN_SECONDS, MAX_QUERY_TIMEOUT),
                Some("none"),
            )?,
            percentiles: percentiles(o)?,
            user_stages: None,
            rate_stages: None,
            recovery_tolerance_pct: o.f64_where(
                "recovery-tolerance",
                |v| v > 0.0 && v <= 1000.0,
                "a percentage above 0, at most 1000",
            )?,
        })
    }

    /// This process's share of the run under `--shard`: its users, its
    /// events, and its part of the rate (in proportion to its users), so
    /// that the shards together make the run these settings describe. A
    /// shard without a user, and the load profiles (which this does not
    /// split), are usage errors. `own_users`: the benchmark sets its users
    /// and splits them itself ([`dbmeter_benchmarks::Benchmark::splits_own_users`]):
    /// `--threads` and `--rate` are left whole for it.
    pub fn split(&mut self, shard: Shard, own_users: bool) -> Result<(), RunError> {
        if let Some(name) = [
            (self.user_stages.is_some(), "stages"),
            (self.rate_stages.is_some(), "rate-stages"),
        ]
        .iter()
        .find_map(|(on, name)| on.then_some(*name))
        {
            return Err(RunError::Usage(format!(
                "--shard with --{name}: a load profile is not split over shards; run the profile in one process, or give each shard --threads and --rate"
            )));
        }
        let total = self.threads as u64;
        if own_users {
            // Its users are the benchmark's to split (tpch's streams,
            // replay's sessions); only the events are the run's.
        } else if total < shard.count {
            return Err(RunError::Usage(format!(
                "--shard={shard} with --threads={total}: every shard needs a user; give at least --threads={}",
                shard.count
            )));
        } else {
            let mine = shard.share(total);
            self.rate = self.rate.map(|r| r * mine as f64 / total as f64);
            self.threads = mine as usize;
        }
        if let Some(events) = self.events {
            let share = shard.share(events);
            if share == 0 {
                return Err(RunError::Usage(format!(
                    "--shard={shard} with --events={events}: every shard needs an event; give at least --events={}",
                    shard.count
                )));
            }
            self.events = Some(share);
        }
        Ok(())
    }

    /// The stages that last (their 1-based places in `--stages` and
    /// `--rate-stages`; a 0 s step has no figures of its own): the stages
    /// an assertion may name (`stage2.p99<...`).
    pub fn stage_indexes(&self) -> Vec<usize> {
        [&self.user_stages, &self.rate_stages]
            .into_iter()
            .flatten()
            .flat_map(|p| {
                p.pieces()
                    .iter()
                    .enumerate()
                    .filter(|(_, piece)| piece.t1 > piece.t0)
                    .map(|(i, _)| i + 1)
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// The engine's configuration for these options and `seed`.
    pub fn engine_config(&self, seed: u64) -> EngineConfig {
        EngineConfig {
            threads: self.threads,
            // A benchmark with pgbench's -j sets it (RunPlan::shape_engine).
            jobs: None,
            time: self.time,
            events: self.events,
            warmup: self.warmup,
            auto_warmup: self.auto_warmup,
            rate: self.rate,
            late_limit: None,
            queue_limit: self.queue_limit,
            interval: self.report_interval.unwrap_or(Duration::from_secs(1)),
            percentiles: self.percentiles.clone(),
            seed,
            forced_shutdown: self.forced_shutdown,
            reconnect_timeout: self.reconnect_timeout,
            stop_grace: Duration::from_millis(300),
            abandon_after: self.abandon_timeout,
            // A benchmark whose users keep their own schedules sets it.
            own_schedule: false,
            kinds: 0,
            connect_rate: self.connect_rate,
            user_stages: self.user_stages.clone(),
            rate_stages: self.rate_stages.clone(),
            start_at: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::GENERAL;

    fn target_of(given: &[(&str, &str)], env: &Env) -> Target {
        let mut o = OptValues::from_defaults(GENERAL);
        for (k, v) in given {
            o.set(k, v);
        }
        target_in(&o, env).unwrap()
    }

    fn server(t: Target) -> dbmeter_db::ServerTarget {
        match t {
            Target::Mysql(s) | Target::Postgres(s) => s,
            Target::Sqlite { .. } => panic!("not a server"),
        }
    }

    #[test]
    fn options_given_beat_the_environment_and_defaults_do_not() {
        let env = Env::empty()
            .with_user("alice")
            .with_var("PGHOST", "envhost")
            .with_var("PGUSER", "envuser")
            .with_var("PGDATABASE", "envdb");
        let t = server(target_of(&[("db-driver", "pgsql")], &env));
        assert_eq!(t.hosts, ["envhost"]);
        assert_eq!((t.user.as_str(), t.database.as_str()), ("envuser", "envdb"));
        let t = server(target_of(
            &[("pgsql-user", "bob"), ("pgsql-host", "db1")],
            &env,
        ));
        assert_eq!(t.hosts, ["db1"]);
        assert_eq!((t.user.as_str(), t.database.as_str()), ("bob", "envdb"));
        // Without the environment: sysbench's defaults, localhost by TCP.
        let t = server(target_of(&[("db-driver", "pgsql")], &Env::empty()));
        assert_eq!((t.hosts[0].as_str(), t.ports[0]), ("localhost", 5432));
        assert_eq!((t.user.as_str(), t.database.as_str()), ("sbtest", "sbtest"));
        assert_eq!(t.socket, None);
    }

    fn general(given: &[(&str, &str)]) -> Result<General, RunError> {
        let mut o = OptValues::from_defaults(GENERAL);
        for (k, v) in given {
            o.set(k, v);
        }
        General::parse(&o)
    }

    #[test]
    fn general_options_at_their_limits() {
        let g = general(&[]).unwrap();
        assert_eq!(g.time, Some(Duration::from_secs(10)));
        assert_eq!(
            (g.rate, g.report_interval, g.query_timeout),
            (None, None, None)
        );
        let g = general(&[
            ("time", "31536000"),
            ("warmup-time", "0.001"),
            ("rate", "1000000"),
            ("connect-rate", "0.001"),
            ("report-interval", "0.01"),
            ("query-timeout", "1000000"),
            ("forced-shutdown", "0"),
        ])
        .unwrap();
        assert_eq!(g.time, Some(Duration::from_secs(31_536_000)));
        assert_eq!(g.warmup, Duration::from_millis(1));
        assert_eq!((g.rate, g.connect_rate), (Some(1e6), Some(0.001)));
        assert_eq!(g.report_interval, Some(Duration::from_millis(10)));
        assert_eq!(g.forced_shutdown, Some(Duration::ZERO));
        let e = general(&[("forced-shutdown", "off"), ("time", "0")]).unwrap();
        assert_eq!((e.forced_shutdown, e.time), (None, None));
        for (k, v) in [
            ("time", "31536001"),
            ("time", "0.0001"),
            ("warmup-time", "-1"),
            ("rate", "1000001"),
            ("rate", "0.0001"),
            ("connect-rate", "1e300"),
            ("report-interval", "0.001"),
            ("query-timeout", "1e7"),
            ("reconnect-timeout", "0"),
            ("abandon-timeout", "1e300"),
            ("forced-shutdown", "-1"),
            ("threads", "100001"),
        ] {
            match general(&[(k, v)]) {
                Err(RunError::Usage(m)) => {
                    assert!(m.starts_with(&format!("--{k}={v}: ")), "{m}");
                    assert!(!m.contains('\n'), "{m}");
                }
                other => panic!("--{k}={v}: {other:?}"),
            }
        }
    }

    #[test]
    fn shards_split_users_events_and_rate_exactly() {
        let whole = general(&[("threads", "10"), ("events", "1001"), ("rate", "100")]).unwrap();
        let parts: Vec<General> = (0..4)
            .map(|index| {
                let mut g = whole.clone();
                g.split(Shard { index, count: 4 }, false).unwrap();
                g
            })
            .collect();
        let threads: Vec<usize> = parts.iter().map(|g| g.threads).collect();
        assert_eq!(threads, [3, 3, 2, 2]);
        let events: Vec<u64> = parts.iter().map(|g| g.events.unwrap()).collect();
        assert_eq!(events, [251, 250, 250, 250]);
        let rate: f64 = parts.iter().map(|g| g.rate.unwrap()).sum();
        assert!((rate - 100.0).abs() < 1e-9, "{rate}");
        assert_eq!(parts[0].rate, Some(30.0));
        let mut few = general(&[("threads", "3")]).unwrap();
        assert!(matches!(
            few.split(Shard { index: 0, count: 4 }, false),
            Err(RunError::Usage(m)) if m.contains("every shard needs a user")
        ));
        // A benchmark that splits its own users (tpch, replay) gets
        // --threads and --rate whole; the events are still split.
        let mut own = general(&[("threads", "1"), ("events", "10"), ("rate", "5")]).unwrap();
        own.split(Shard { index: 1, count: 4 }, true).unwrap();
        assert_eq!((own.threads, own.events, own.rate), (1, Some(3), Some(5.0)));
        let mut staged = general(&[("stages", "1s:4")]).unwrap();
        staged.user_stages = Some(Arc::new(Profile::parse("1s:4", 10.0).unwrap()));
        assert!(staged.split(Shard { index: 0, count: 2 }, false).is_err());
        assert!(matches!(
            shard(&{
                let mut o = OptValues::from_defaults(GENERAL);
                o.set("shard", "2/2");
                o
            }),
            Err(RunError::Usage(m)) if m.starts_with("--shard=2/2: ")
        ));
        assert_eq!(
            parse_time("2026-11-27T18:00:00.5Z").unwrap(),
            parse_time("1795802400.5").unwrap()
        );
    }

    #[test]
    fn sysbench_rates_have_its_queue_instead_of_a_bound() {
        let mut o = OptValues::from_defaults(GENERAL);
        o.set("rate", "2000000000");
        assert!(General::parse(&o).is_err());
        let sysbench = Layout::Sysbench {
            percentile_off: false,
            verbosity: 3,
        };
        let g = General::parse_in(&o, sysbench).unwrap();
        assert_eq!((g.rate, g.queue_limit), (Some(2e9), Some(SYSBENCH_QUEUE)));
        assert_eq!(g.engine_config(1).queue_limit, Some(SYSBENCH_QUEUE));
        o.set("rate", "-1");
        assert!(matches!(
            General::parse_in(&o, sysbench),
            Err(RunError::Usage(m)) if m.starts_with("--rate=-1: ")
        ));
        assert_eq!(general(&[]).unwrap().queue_limit, None);
    }

    #[test]
    fn prometheus_addresses() {
        let parse = |given: &[(&str, &str)]| {
            let mut o = OptValues::from_defaults(GENERAL);
            for (k, v) in given {
                o.set(k, v);
            }
            prometheus(&o)
        };
        assert_eq!(parse(&[]).unwrap(), None);
        let p = parse(&[("prometheus", "127.0.0.1:9464")]).unwrap().unwrap();
        assert_eq!(p.addr, "127.0.0.1:9464".parse().unwrap());
        assert_eq!(p.linger, Duration::ZERO);
        let p = parse(&[("prometheus", ":9464"), ("prometheus-linger", "2.5")])
            .unwrap()
            .unwrap();
        assert_eq!(p.addr, "0.0.0.0:9464".parse().unwrap());
        assert_eq!(p.linger, Duration::from_millis(2500));
        let p = parse(&[("prometheus", "[::1]:0")]).unwrap().unwrap();
        assert_eq!(p.addr, "[::1]:0".parse().unwrap());
        let p = parse(&[("prometheus", "localhost:9000")]).unwrap().unwrap();
        assert!(p.addr.ip().is_loopback(), "{p:?}");
        for (given, says) in [
            (vec![("prometheus", "9464")], "no port"),
            (
                vec![("prometheus", "host:http")],
                "'http' is not a port number",
            ),
            (
                vec![("prometheus", "1.2.3.4:70000")],
                "'70000' is not a port",
            ),
            (vec![("prometheus", ":")], "'' is not a port"),
            (vec![("prometheus", "[]:80")], "no host"),
            (vec![("prometheus", " ")], "--prometheus is empty"),
            (vec![("prometheus-linger", "3")], "add --prometheus"),
            (
                vec![("prometheus", ":1"), ("prometheus-linger", "-1")],
                "--prometheus-linger=-1: ",
            ),
        ] {
            match parse(&given) {
                Err(RunError::Usage(m)) => {
                    assert!(m.contains(says), "{given:?}: {m}");
                    assert!(!m.contains('\n'), "{m}");
                }
                other => panic!("{given:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn an_empty_db_is_refused() {
        let mut o = OptValues::from_defaults(GENERAL);
        o.set("db", " ");
        assert!(matches!(
            target_in(&o, &Env::empty()),
            Err(RunError::Usage(_))
        ));
        // Not given at all: the default file.
        let o = OptValues::from_defaults(GENERAL);
        assert_eq!(
            target_in(&o, &Env::empty()).unwrap(),
            Target::default_sqlite()
        );
    }

    #[test]
    fn mysql_options_and_localhost() {
        let env = Env::empty().with_var("MYSQL_UNIX_PORT", "/env.sock");
        let t = server(target_of(&[("db-driver", "mysql")], &env));
        assert_eq!(t.socket, Some("/env.sock".into()));
        assert_eq!((t.user.as_str(), t.database.as_str()), ("sbtest", "sbtest"));
        // A port given by hand means TCP; a socket given wins.
        let t = server(target_of(&[("mysql-port", "3307")], &env));
        assert_eq!((t.socket, t.ports), (None, vec![3307]));
        let t = server(target_of(
            &[("mysql-host", "db1"), ("mysql-socket", "/given.sock")],
            &env,
        ));
        assert_eq!(t.socket, Some("/given.sock".into()));
        // --ssl-mode beats the URL's ssl-mode, whatever its spelling.
        let t = server(target_of(
            &[
                ("db", "mysql://u@db1/x?ssl-mode=REQUIRED"),
                ("ssl-mode", "disable"),
            ],
            &env,
        ));
        assert_eq!(
            TlsSettings::of(&t, TlsMode::Prefer).unwrap().mode,
            TlsMode::Disable
        );
    }
}
