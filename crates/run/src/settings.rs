//! From option values to the settings of each layer: the target, its
//! connection options, the engine's configuration, the seed.

use crate::RunError;
use dbmeter_benchmarks::options::{OptValues, parse_float_list};
use dbmeter_db::conninfo::{self, Env, Given, ServerKind, Spec};
use dbmeter_db::{ConnectOptions, IgnoreList, PsMode, SqliteOptions, Target, TlsMode, TlsSettings};
use dbmeter_engine::EngineConfig;
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
        late_limit: None,
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
