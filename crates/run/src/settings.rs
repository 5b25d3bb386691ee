//! From option values to the settings of each layer: the target, its
//! connection options, the engine's configuration, the seed.

use crate::RunError;
use dbmeter_benchmarks::options::{OptValues, parse_float_list};
use dbmeter_db::{
    ConnectOptions, IgnoreList, PsMode, ServerTarget, SqliteOptions, Target, TlsMode, TlsSettings,
};
use dbmeter_engine::EngineConfig;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub fn target(o: &OptValues) -> Result<Target, RunError> {
    let db = o.str("db");
    let driver = o.str("db-driver").to_ascii_lowercase();
    let mut target = if !db.is_empty() {
        Target::parse(db)?
    } else if driver == "mysql" || (driver.is_empty() && given_any(o, "mysql-")) {
        Target::Mysql(server_from_options(o, "mysql")?)
    } else if driver == "pgsql" || (driver.is_empty() && given_any(o, "pgsql-")) {
        Target::Postgres(server_from_options(o, "pgsql")?)
    } else {
        Target::default_sqlite()
    };
    // Passwords may come from the environment, as with the client tools.
    match &mut target {
        Target::Mysql(t) if t.password.is_none() => t.password = std::env::var("MYSQL_PWD").ok(),
        Target::Postgres(t) if t.password.is_none() => {
            t.password = std::env::var("PGPASSWORD").ok()
        }
        _ => {}
    }
    let default_tls = match &target {
        Target::Mysql(_) => TlsMode::Disable,
        _ => TlsMode::Prefer,
    };
    if let Target::Mysql(t) | Target::Postgres(t) = &mut target {
        // The --ssl-* options win over the URL's parameters.
        for (opt, param) in [
            ("ssl-mode", "sslmode"),
            ("ssl-ca", "sslrootcert"),
            ("ssl-cert", "sslcert"),
            ("ssl-key", "sslkey"),
        ] {
            if o.given(opt) {
                t.params.push((param.into(), o.str(opt).to_string()));
                t.params.rotate_right(1);
            }
        }
        TlsSettings::of(t, default_tls)?;
        if o.bool("ask-password") {
            t.password = Some(ask_password(&t.user)?);
        }
    }
    Ok(target)
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

/// A server target from sysbench's `--mysql-*` or `--pgsql-*` options.
fn server_from_options(o: &OptValues, p: &str) -> Result<ServerTarget, RunError> {
    let list = |name: &str| -> Vec<String> {
        o.str(&format!("{p}-{name}"))
            .split(',')
            .map(|x| x.trim().to_string())
            .filter(|x| !x.is_empty())
            .collect()
    };
    let ports = list("port")
        .iter()
        .map(|x| {
            x.parse::<u16>()
                .map_err(|_| RunError::Usage(format!("--{p}-port={x}: expected a port number")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let socket = (p == "mysql")
        .then(|| o.str("mysql-socket"))
        .filter(|s| !s.is_empty())
        .map(Into::into);
    let password = o.str(&format!("{p}-password"));
    Ok(ServerTarget {
        hosts: list("host"),
        ports,
        socket,
        user: o.str(&format!("{p}-user")).to_string(),
        password: (!password.is_empty()).then(|| password.to_string()),
        database: o.str(&format!("{p}-db")).to_string(),
        params: Vec::new(),
    })
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
    }
}

/// `--query-timeout`, for the connections of the virtual users.
pub fn query_timeout(o: &OptValues) -> Result<Option<Duration>, RunError> {
    match o.f64("query-timeout") {
        0.0 => Ok(None),
        s if s > 0.0 && s.is_finite() => Ok(Some(Duration::from_secs_f64(s))),
        s => Err(RunError::Usage(format!(
            "--query-timeout={s}: expected seconds above 0, or 0 for none"
        ))),
    }
}

pub fn ignore_list(o: &OptValues, target: &Target) -> IgnoreList {
    let v = o.str("ignore-errors");
    IgnoreList::parse(if v.is_empty() {
        target.default_ignored_errors()
    } else {
        v
    })
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
        n if n > 100_000 => Err(RunError::Usage(format!("--threads={n}: at most 100000"))),
        n => Ok(n as usize),
    }
}

pub fn engine_config(o: &OptValues, seed: u64) -> Result<EngineConfig, RunError> {
    let secs = |name: &str| -> Result<Option<Duration>, RunError> {
        let v = o.f64(name);
        if v < 0.0 {
            return Err(RunError::Usage(format!(
                "--{name}={v}: must not be negative"
            )));
        }
        Ok((v > 0.0).then(|| Duration::from_secs_f64(v)))
    };
    let connect_rate = o.f64("connect-rate");
    if connect_rate < 0.0 {
        return Err(RunError::Usage(format!(
            "--connect-rate={connect_rate}: must not be negative"
        )));
    }
    let rate = o.f64("rate");
    if rate < 0.0 {
        return Err(RunError::Usage(format!(
            "--rate={rate}: must not be negative"
        )));
    }
    let forced = o.str("forced-shutdown");
    let forced_shutdown = match forced.to_ascii_lowercase().as_str() {
        "off" | "" => None,
        v => match v.parse::<f64>() {
            Ok(s) if s >= 0.0 && s.is_finite() => Some(Duration::from_secs_f64(s)),
            _ => {
                return Err(RunError::Usage(format!(
                    "--forced-shutdown={forced}: expected seconds or 'off'"
                )));
            }
        },
    };
    Ok(EngineConfig {
        threads: threads(o)?,
        time: secs("time")?,
        events: Some(o.u64("events")).filter(|&n| n > 0),
        warmup: secs("warmup-time")?.unwrap_or_default(),
        rate: (rate > 0.0).then_some(rate),
        interval: secs("report-interval")?.unwrap_or(Duration::from_secs(1)),
        percentiles: percentiles(o)?,
        seed,
        forced_shutdown,
        reconnect_timeout: secs("reconnect-timeout")?.ok_or_else(|| {
            RunError::Usage(
                "--reconnect-timeout=0: expected seconds above 0 (how long reconnects may fail before the run stops)".into(),
            )
        })?,
        stop_grace: Duration::from_millis(300),
        abandon_after: secs("abandon-timeout")?.ok_or_else(|| {
            RunError::Usage(
                "--abandon-timeout=0: expected seconds above 0 (how long interrupted events may keep the run waiting)".into(),
            )
        })?,
        kinds: 0,
        connect_rate: (connect_rate > 0.0).then_some(connect_rate),
    })
}
