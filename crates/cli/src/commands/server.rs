//! `dbmeter server start|stop|restart|status|list|snapshot`: managed
//! MariaDB/MySQL and PostgreSQL servers that outlive the command (the work
//! is in `dbmeter_server::managed`; this file reads the command line and
//! prints).

use crate::CliError;
use crate::help::{Example, Opt, Page, Section, Sub, flag, opt};
use crate::subcommand_args::{Grammar, SubArgs};
use dbmeter_run::pinning;
use dbmeter_server::managed::{Home, STOP_TIMEOUT, ServerState, StartRequest, Stopped};
use dbmeter_server::{Flavor, ServerError, cpus_allowed_list, format_cpu_list};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

const TIMEOUT: Opt = opt("timeout", "SECONDS", "SIGKILL after this long").default("30");
const FORMAT: Opt = opt("format", "text|json", "how to write it").default("text");

pub const PAGE: Page = Page {
    usage: &["server COMMAND [ARGS] [--option=value ...]"],
    about: &[
        "Managed MariaDB/MySQL and PostgreSQL servers for benchmarks: each gets a \
              fresh data directory, its own port and socket, and keeps running after \
              dbmeter exits.",
    ],
    subs: &[
        Sub {
            name: "start",
            args: "mariadb|postgres",
            help: "initialise a data directory, start the server, wait until it accepts \
                   connections, print its --db URL",
            options: &[
                opt("name", "NAME", "its name").default("the flavor: mariadb or postgres"),
                opt(
                    "basedir",
                    "DIR",
                    "binaries from an unpacked tarball (bin/, sbin/, scripts/) instead of PATH",
                ),
                opt(
                    "datadir",
                    "DIR",
                    "data directory; an existing non-empty one is used as it is",
                )
                .default("DBMETER_HOME/servers/NAME/data"),
                opt("port", "N", "TCP port on 127.0.0.1").default("a free one"),
                opt("set", "KEY=VALUE", "a server setting; repeat for more"),
                opt(
                    "config",
                    "FILE",
                    "a my.cnf / postgresql.conf instead of dbmeter's small defaults \
                     (--set still wins)",
                ),
                opt(
                    "server-cpus",
                    "LIST",
                    "bind the server to these CPUs, e.g. 0-3,6",
                ),
                flag("drop-caches", "sync and drop the OS page cache first"),
                opt(
                    "from-snapshot",
                    "SNAP",
                    "start from a copy of a snapshot (a name, or a snapshot or data directory)",
                ),
            ],
        },
        Sub {
            name: "stop",
            args: "[NAME | --all]",
            help: "clean shutdown",
            options: &[
                flag("all", "every running managed server"),
                flag(
                    "remove",
                    "also forget it: delete its files and the data directory dbmeter created",
                ),
                TIMEOUT,
            ],
        },
        Sub {
            name: "restart",
            args: "NAME",
            help: "stop and start again, same data, port and settings",
            options: &[
                flag("drop-caches", "drop the OS page cache in between"),
                TIMEOUT,
            ],
        },
        Sub {
            name: "status",
            args: "[NAME]",
            help: "running or stopped, with pid, port, URL, uptime, version; exit code 0 \
                   if running, 3 if not",
            options: &[FORMAT],
        },
        Sub {
            name: "list",
            args: "",
            help: "all known servers and snapshots",
            options: &[FORMAT],
        },
        Sub {
            name: "snapshot",
            args: "NAME | --remove SNAP",
            help: "copy the data directory of a cleanly stopped server, or delete a snapshot",
            options: &[
                opt("as", "SNAP", "the snapshot's name").default("NAME"),
                flag("replace", "replace a snapshot of that name"),
                flag("remove", "delete the snapshot SNAP"),
            ],
        },
    ],
    sections: &[Section {
        title: "Files",
        body: &[
            "State lives in $DBMETER_HOME (default: /var/lib/dbmeter for root, else \
                 ~/.local/share/dbmeter).",
        ],
    }],
    examples: &[
        Example {
            what: "A throwaway MariaDB with a bigger buffer pool",
            command: "server start mariadb --set=innodb_buffer_pool_size=4G",
        },
        Example {
            what: "PostgreSQL from a snapshot of loaded data",
            command: "server start postgres --name=pg-loaded --from-snapshot=sf1",
        },
        Example {
            what: "Stop every managed server",
            command: "server stop --all",
        },
    ],
    exit: "0 ok, 1 failed, 2 usage error, 3 (status) not running.",
    ..Page::new("server", "managed MariaDB/PostgreSQL servers")
};

/// Exit code of `status` when the server is not running (as systemctl).
const NOT_RUNNING: i32 = 3;

/// A parsed `dbmeter server ...` command line.
/// A parsed `dbmeter server` command line: the subcommand, the words
/// after it and the options.
#[derive(Debug)]
struct Args {
    sub: String,
    line: SubArgs,
}

fn parse(args: &[String]) -> Result<Args, CliError> {
    // The subcommand comes first; it says which options there are.
    let Some(sub) = args.iter().find(|a| !a.starts_with("--")).cloned() else {
        return Err(CliError::Usage(
            "which server command? start, stop, restart, status, list or snapshot \
             (`dbmeter server help`)"
                .into(),
        ));
    };
    let mut line = SubArgs::parse(
        args,
        &Grammar {
            options: &PAGE.options_of(Some(&sub)),
            command: &format!("server {sub}"),
            help: "`dbmeter server help`",
        },
    )?;
    // The subcommand itself, unless an option took it as its value.
    if line.words.first() == Some(&sub) {
        line.words.remove(0);
    } else {
        return Err(CliError::Usage(format!(
            "put the server command first: `dbmeter server {sub} ...`"
        )));
    }
    Ok(Args { sub, line })
}

impl Args {
    fn get(&self, name: &str) -> Option<&str> {
        self.line.get(name)
    }

    fn all(&self, name: &str) -> impl Iterator<Item = &str> {
        self.line.all(name)
    }

    fn flag(&self, name: &str) -> bool {
        self.line.flag(name)
    }

    fn path(&self, name: &str) -> Option<PathBuf> {
        self.get(name).map(PathBuf::from)
    }

    /// At most `max` words after the subcommand.
    fn words(&self, max: usize, what: &str) -> Result<Option<&str>, CliError> {
        if self.line.words.len() > max {
            return Err(CliError::Usage(format!(
                "unexpected argument '{}' for `dbmeter server {}` ({what})",
                self.line.words[max], self.sub
            )));
        }
        Ok(self.line.words.first().map(String::as_str))
    }

    fn required(&self, what: &str) -> Result<&str, CliError> {
        self.words(1, what)?.ok_or_else(|| {
            CliError::Usage(format!(
                "`dbmeter server {}` needs {what} (`dbmeter server list` shows the servers)",
                self.sub
            ))
        })
    }

    fn timeout(&self) -> Result<Duration, CliError> {
        match self.get("timeout") {
            None => Ok(STOP_TIMEOUT),
            Some(v) => v
                .parse::<f64>()
                .ok()
                .filter(|s| s.is_finite() && *s >= 0.0)
                .map(Duration::from_secs_f64)
                .ok_or_else(|| CliError::Usage(format!("--timeout={v}: expected seconds"))),
        }
    }

    fn json(&self) -> Result<bool, CliError> {
        Ok(self
            .line
            .format(&["text", "json"], &format!("server {}", self.sub))?
            == "json")
    }
}

fn failed(e: ServerError) -> CliError {
    CliError::Failed(e.to_string())
}

/// Runs `dbmeter server ARGS`; returns the exit code. Usage errors point
/// to `dbmeter server help`.
pub fn main(args: &[String]) -> Result<i32, CliError> {
    server(args).map_err(|e| match e {
        CliError::Usage(m) if !m.contains('`') => {
            CliError::Usage(format!("{m} (see `dbmeter server help`)"))
        }
        other => other,
    })
}

fn server(args: &[String]) -> Result<i32, CliError> {
    if args
        .iter()
        .any(|a| a == "-h" || a == "--help" || a == "help")
    {
        return crate::help::print_page(&PAGE);
    }
    let a = parse(args)?;
    let home = Home::from_env().map_err(failed)?;
    match a.sub.as_str() {
        "start" => start(&a, &home),
        "stop" => stop(&a, &home),
        "restart" => restart(&a, &home),
        "status" => status(&a, &home),
        "list" => list(&a, &home),
        "snapshot" => snapshot(&a, &home),
        other => Err(CliError::Usage(format!(
            "unknown server command '{other}': start, stop, restart, status, list or snapshot"
        ))),
    }
}

fn start(a: &Args, home: &Home) -> Result<i32, CliError> {
    let word = a
        .words(1, "one flavor: mariadb or postgres")?
        .ok_or_else(|| {
            CliError::Usage("`dbmeter server start` needs a flavor: mariadb or postgres".into())
        })?;
    let flavor = Flavor::parse(word).ok_or_else(|| {
        CliError::Usage(format!(
            "unknown server flavor '{word}': mariadb (or mysql) or postgres (`dbmeter server help`)"
        ))
    })?;
    let mut req = StartRequest::new(flavor);
    req.name = a.get("name").map(str::to_string);
    req.basedir = a.path("basedir");
    req.datadir = a.path("datadir");
    req.config_file = a.path("config");
    req.from_snapshot = a.get("from-snapshot").map(str::to_string);
    if let Some(p) = a.get("port") {
        req.port = Some(p.parse::<u16>().ok().filter(|&n| n > 0).ok_or_else(|| {
            CliError::Usage(format!("--port={p}: expected a port number (1-65535)"))
        })?);
    }
    for s in a.all("set") {
        let (k, v) = match s.split_once('=') {
            Some((k, v)) => (k.trim(), v.trim()),
            // A bare MariaDB option such as skip-name-resolve.
            None if flavor == Flavor::MariaDb => (s.trim(), ""),
            None => return Err(CliError::Usage(format!("--set {s}: expected key=value"))),
        };
        if k.is_empty() || k.starts_with('-') {
            return Err(CliError::Usage(format!("--set {s}: expected key=value")));
        }
        req.settings.push((k.to_string(), v.to_string()));
    }
    if let Some(list) = a.get("server-cpus") {
        req.cpus = Some(pinning::cpus("server-cpus", list)?);
    }
    if a.flag("drop-caches") {
        drop_caches();
    }
    let state = home.start(&req).map_err(failed)?;
    eprintln!(
        "dbmeter: started {} ({} {}, pid {}, port {}); log: {}",
        state.name,
        flavor,
        state.version,
        state.pid,
        state.port,
        state.log.display()
    );
    println!("{}", state.url);
    Ok(0)
}

fn drop_caches() {
    match dbmeter_server::drop_caches() {
        Ok(()) => eprintln!("dbmeter: dropped the page cache"),
        Err(e) => eprintln!("dbmeter: warning: {e}; going on without"),
    }
}

fn stop(a: &Args, home: &Home) -> Result<i32, CliError> {
    let name = a.words(1, "one server name, or --all")?;
    let all = a.flag("all");
    let remove = a.flag("remove");
    let timeout = a.timeout()?;
    let names: Vec<String> = match (name, all) {
        (Some(_), true) => {
            return Err(CliError::Usage(
                "`dbmeter server stop` takes a name or --all, not both".into(),
            ));
        }
        (Some(n), false) => vec![n.to_string()],
        (None, true) => home
            .list()
            .map_err(failed)?
            .into_iter()
            .map(|s| s.name)
            .collect(),
        (None, false) => {
            return Err(CliError::Usage(
                "`dbmeter server stop` needs a server name or --all (`dbmeter server list` shows them)"
                    .into(),
            ));
        }
    };
    let mut code = 0;
    for n in &names {
        match home.stop(n, timeout).map_err(failed)? {
            Stopped::Clean => println!("stopped {n}"),
            Stopped::NotRunning => println!("{n} was not running"),
            Stopped::Killed => {
                eprintln!(
                    "dbmeter: error: {n} did not shut down within {} s, so it was killed",
                    timeout.as_secs_f64()
                );
                code = 1;
            }
        }
        if remove {
            home.remove(n).map_err(failed)?;
            println!("removed {n}");
        }
    }
    Ok(code)
}

fn restart(a: &Args, home: &Home) -> Result<i32, CliError> {
    let name = a.required("a server name")?;
    let timeout = a.timeout()?;
    if home.stop(name, timeout).map_err(failed)? == Stopped::Killed {
        eprintln!(
            "dbmeter: warning: {name} did not shut down within {} s, so it was killed",
            timeout.as_secs_f64()
        );
    }
    if a.flag("drop-caches") {
        drop_caches();
    }
    let state = home.relaunch(name).map_err(failed)?;
    eprintln!(
        "dbmeter: restarted {} (pid {}, port {})",
        state.name, state.pid, state.port
    );
    println!("{}", state.url);
    Ok(0)
}

fn uptime(secs: u64) -> String {
    humantime::format_duration(Duration::from_secs(secs)).to_string()
}

fn flavor_label(s: &ServerState) -> String {
    s.flavor()
        .map_or_else(|| s.flavor.clone(), |f| f.to_string())
}

/// The JSON form of a server: its state, and whether it runs.
fn state_json(s: &ServerState) -> serde_json::Value {
    let running = s.is_running();
    let mut v = serde_json::to_value(s).unwrap_or(serde_json::Value::Null);
    if let Some(o) = v.as_object_mut() {
        o.insert("running".into(), running.into());
        o.insert("uptime_secs".into(), s.uptime().into());
        o.insert(
            "cpus_allowed".into(),
            running.then(|| cpus_allowed_list(s.pid)).flatten().into(),
        );
    }
    v
}

fn status(a: &Args, home: &Home) -> Result<i32, CliError> {
    let json = a.json()?;
    let states = match a.words(1, "at most one server name")? {
        Some(n) => vec![home.load(n).map_err(failed)?],
        None => home.list().map_err(failed)?,
    };
    if states.is_empty() {
        if json {
            println!("[]");
        } else {
            println!("no servers (`dbmeter server start mariadb|postgres` starts one)");
        }
        return Ok(NOT_RUNNING);
    }
    let all_running = states.iter().all(ServerState::is_running);
    if json {
        let v: Vec<serde_json::Value> = states.iter().map(state_json).collect();
        let doc = if a.line.words.is_empty() {
            serde_json::Value::Array(v)
        } else {
            v.into_iter().next().unwrap_or_default()
        };
        println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
    } else {
        let mut out = String::new();
        for s in &states {
            let running = s.is_running();
            let _ = writeln!(
                out,
                "{}: {}",
                s.name,
                if running { "running" } else { "stopped" }
            );
            let row = |out: &mut String, k: &str, v: &str| {
                let _ = writeln!(out, "  {k:<9}{v}");
            };
            row(
                &mut out,
                "server",
                &format!("{} {}", flavor_label(s), s.version),
            );
            if running {
                row(&mut out, "pid", &s.pid.to_string());
                row(&mut out, "uptime", &uptime(s.uptime().unwrap_or(0)));
            } else if let Some(at) = s.stopped_at {
                let when = std::time::UNIX_EPOCH + Duration::from_secs(at);
                let how = if s.clean_stop {
                    "cleanly"
                } else {
                    "not cleanly"
                };
                row(
                    &mut out,
                    "stopped",
                    &format!("{} ({how})", humantime::format_rfc3339_seconds(when)),
                );
            }
            row(&mut out, "port", &s.port.to_string());
            row(&mut out, "url", &s.url);
            row(&mut out, "socket", &s.socket.display().to_string());
            row(&mut out, "datadir", &s.datadir.display().to_string());
            row(&mut out, "log", &s.log.display().to_string());
            if let Some(c) = &s.server_cpus {
                let live = running
                    .then(|| cpus_allowed_list(s.pid))
                    .flatten()
                    .map(|l| format!(" (allowed now: {l})"))
                    .unwrap_or_default();
                row(&mut out, "cpus", &format!("{}{live}", format_cpu_list(c)));
            }
            if !s.settings.is_empty() {
                let set: Vec<String> = s.settings.iter().map(|(k, v)| format!("{k}={v}")).collect();
                row(&mut out, "settings", &set.join(" "));
            }
            if let Some(c) = &s.config_file {
                row(&mut out, "config", &c.display().to_string());
            }
            if let Some(snap) = &s.from_snapshot {
                row(&mut out, "snapshot", snap);
            }
        }
        print!("{out}");
    }
    Ok(if all_running { 0 } else { NOT_RUNNING })
}

fn list(a: &Args, home: &Home) -> Result<i32, CliError> {
    let json = a.json()?;
    a.words(0, "it takes no names")?;
    let states = home.list().map_err(failed)?;
    let snapshots = home.snapshots();
    if json {
        let doc = serde_json::json!({
            "servers": states.iter().map(state_json).collect::<Vec<_>>(),
            "snapshots": snapshots,
        });
        println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        return Ok(0);
    }
    if states.is_empty() {
        println!("no servers (`dbmeter server start mariadb|postgres` starts one)");
    } else {
        let rows: Vec<[String; 7]> = states
            .iter()
            .map(|s| {
                let running = s.is_running();
                [
                    s.name.clone(),
                    flavor_label(s),
                    if running { "running" } else { "stopped" }.to_string(),
                    if running {
                        s.pid.to_string()
                    } else {
                        "-".into()
                    },
                    s.uptime().map_or("-".into(), uptime),
                    s.server_cpus.as_deref().map_or("-".into(), format_cpu_list),
                    s.url.clone(),
                ]
            })
            .collect();
        let head = ["NAME", "FLAVOR", "STATUS", "PID", "UPTIME", "CPUS", "URL"];
        print!("{}", table(&head, &rows));
    }
    if !snapshots.is_empty() {
        let rows: Vec<[String; 4]> = snapshots
            .iter()
            .map(|s| {
                [
                    s.name.clone(),
                    Flavor::parse(&s.flavor).map_or_else(|| s.flavor.clone(), |f| f.to_string()),
                    s.version.clone(),
                    s.server.clone(),
                ]
            })
            .collect();
        println!();
        print!(
            "{}",
            table(&["SNAPSHOT", "FLAVOR", "VERSION", "FROM SERVER"], &rows)
        );
    }
    Ok(0)
}

/// Left-aligned columns, two spaces apart; the last column is not padded.
fn table<const N: usize>(head: &[&str; N], rows: &[[String; N]]) -> String {
    let mut widths = head.map(str::len);
    for r in rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.len());
        }
    }
    let mut out = String::new();
    let mut line = |cells: Vec<&str>| {
        let mut l = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i + 1 == N {
                l.push_str(c);
            } else {
                let _ = write!(l, "{c:<w$}  ", w = widths[i]);
            }
        }
        out.push_str(l.trim_end());
        out.push('\n');
    };
    line(head.to_vec());
    for r in rows {
        line(r.iter().map(String::as_str).collect());
    }
    out
}

fn snapshot(a: &Args, home: &Home) -> Result<i32, CliError> {
    if a.flag("remove") {
        let snap = a.required("the name of a snapshot to remove")?;
        home.remove_snapshot(snap).map_err(failed)?;
        println!("removed snapshot {snap}");
        return Ok(0);
    }
    let name = a.required("the name of a stopped server")?;
    let info = home
        .snapshot(name, a.get("as"), a.flag("replace"))
        .map_err(failed)?;
    println!(
        "snapshot {} of {} ({}): {}",
        info.name,
        name,
        info.version,
        info.datadir.display()
    );
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn options_parse_both_ways() {
        let a = parse(&args(
            "start mariadb --set a=1 --set=b=2 --port 5 --drop_caches",
        ))
        .unwrap();
        assert_eq!(a.sub, "start");
        assert_eq!(a.line.words, ["mariadb"]);
        assert_eq!(a.all("set").collect::<Vec<_>>(), ["a=1", "b=2"]);
        assert_eq!(a.get("port"), Some("5"));
        assert!(a.flag("drop-caches"));
    }

    #[test]
    fn usage_errors() {
        for bad in [
            "",
            "start mariadb --port",
            "stop --bogus",
            "list --set a=1",
            "--name start",
        ] {
            match parse(&args(bad)) {
                Err(CliError::Usage(_)) => {}
                other => panic!("{bad}: {other:?}"),
            }
        }
    }

    #[test]
    fn tables_align() {
        let t = table(&["A", "BB"], &[["xyz".into(), "1".into()]]);
        assert_eq!(t, "A    BB\nxyz  1\n");
    }
}
