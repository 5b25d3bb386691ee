//! `dbmeter env [--db URL] [--format text|json] [--verbose] [--threads N]`:
//! the environment record, the server's facts and the warnings, to check a
//! machine before a long campaign.

use crate::CliError;
use crate::args;
use crate::help::{Example, Page};
use dbmeter_benchmarks::options::{OptKind, OptSpec, OptValues, opt};
use dbmeter_env::warnings::{self, Checks};
use dbmeter_env::{BuildInfo, Environment, ServerRecord, Warning, sampler};
use dbmeter_run::options::GENERAL;
use dbmeter_run::record::{self, fds_per_connection};
use dbmeter_run::settings as setup;
use serde::Serialize;
use std::fmt::Write as _;
use std::time::Duration;

const VERBOSE: OptSpec = opt(
    "verbose",
    OptKind::Bool,
    "off",
    "env: list the server's variables in the text output too",
);

pub const PAGE: Page = Page {
    usage: &["env [--db=URL] [--format=text|json] [--verbose] [--threads=N]"],
    about: &[
        "Prints this machine's record (CPU, memory, swap, kernel, governor, huge \
              pages, open-files limit, dbmeter's build), with --db the server's version, \
              data directory (and the storage under it when local), process and table \
              sizes, and the warnings a run with --threads connections would get. The \
              server's variables are in the JSON (--format=json) or listed with \
              --verbose. It takes the general options; those of the target and \
              --threads matter.",
    ],
    specs: &[VERBOSE],
    general: true,
    examples: &[
        Example {
            what: "This machine and a MariaDB server, before a 64-client campaign",
            command: "env --db=mysql://root@127.0.0.1/test --threads=64",
        },
        Example {
            what: "Everything, as JSON",
            command: "env --db=postgres://postgres@127.0.0.1/test --format=json",
        },
    ],
    exit: "0 ok, 1 the server could not be reached, 2 usage error.",
    ..Page::new("env", "the machine, with --db the server, and warnings")
};

#[derive(Serialize)]
struct EnvDocument<'a> {
    schema: &'static str,
    schema_version: u32,
    dbmeter: &'a BuildInfo,
    environment: &'a Environment,
    server: Option<&'a ServerRecord>,
    warnings: &'a [Warning],
}

fn wants_server(o: &OptValues) -> bool {
    o.all().keys().any(|k| {
        o.given(k)
            && (k == "db"
                || k.starts_with("db-driver")
                || k.starts_with("mysql-")
                || k.starts_with("pgsql-"))
    })
}

pub fn env(rest: &[String]) -> Result<i32, CliError> {
    let mut specs = GENERAL.to_vec();
    specs.extend_from_slice(PAGE.specs);
    let inv = args::parse(rest, |_| specs.clone())?;
    if rest.iter().any(|a| a == "-h" || a == "--help") {
        return crate::help::print_page(&PAGE);
    }
    if let Some(w) = inv.workload {
        return Err(CliError::Usage(format!(
            "`dbmeter env` takes no workload ({}); `dbmeter env --help` shows its options",
            w.name()
        )));
    }
    let o = args::values(&specs, &inv.given);
    let format = o.str("format").to_ascii_lowercase();
    if format == "csv" {
        return Err(CliError::Usage(
            "--format=csv: `dbmeter env` writes text or json".into(),
        ));
    }
    let target = if wants_server(&o) {
        Some(setup::target(&o)?)
    } else {
        None
    };
    let mut warns = Vec::new();
    let server = match &target {
        Some(t) => match record::server_facts(&setup::connect_options(&o, t.clone())) {
            Ok(f) => {
                warns.extend(f.warnings);
                Some(f.record)
            }
            Err(w) => {
                // Asked about a server we cannot reach: that is the answer.
                return Err(CliError::Failed(w.message));
            }
        },
        None => None,
    };
    let environment = record::environment(target.as_ref(), server.as_ref());
    let time = o.f64("time");
    warns.extend(warnings::check(&Checks {
        env: &environment,
        threads: setup::threads(&o)?,
        // `dbmeter env` checks a thread per connection (no benchmark's -j).
        os_threads: setup::threads(&o)?,
        fds_per_connection: fds_per_connection(target.as_ref()).max(1),
        time_s: (time > 0.0).then_some(time),
        warmup_s: o.f64("warmup-time"),
        server: server.as_ref(),
    }));
    if let Some(w) =
        sampler::measure_cpu(Duration::from_millis(300)).and_then(|c| warnings::steal_now(c.steal))
    {
        warns.push(w);
    }
    let build = BuildInfo::current();
    let out = if format == "json" {
        let doc = EnvDocument {
            schema: "dbmeter.env",
            schema_version: 1,
            dbmeter: &build,
            environment: &environment,
            server: server.as_ref(),
            warnings: &warns,
        };
        serde_json::to_string_pretty(&doc)
            .map_err(|e| CliError::Failed(format!("cannot write JSON: {e}")))?
            + "\n"
    } else {
        text(
            &build,
            &environment,
            server.as_ref(),
            &warns,
            o.bool("verbose"),
        )
    };
    let path = o.str("output");
    if path.is_empty() {
        print!("{out}");
    } else {
        std::fs::write(path, out)
            .map_err(|e| CliError::Failed(format!("cannot write --output {path}: {e}")))?;
    }
    Ok(0)
}

fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

fn line(out: &mut String, label: &str, value: &str) {
    let _ = writeln!(out, "    {label:<26}{value}");
}

fn text(
    build: &BuildInfo,
    e: &Environment,
    server: Option<&ServerRecord>,
    warns: &[Warning],
    verbose: bool,
) -> String {
    let mut out = format!("dbmeter {}\n\nMachine:\n", build.line());
    let opt = |v: Option<usize>| v.map_or("?".to_string(), |n| n.to_string());
    line(&mut out, "host:", &e.hostname);
    line(&mut out, "OS:", &e.os);
    line(&mut out, "kernel:", &e.kernel);
    line(&mut out, "CPU:", &format!("{} ({})", e.cpu_model, e.arch));
    line(
        &mut out,
        "CPUs:",
        &format!(
            "{} online, {} for dbmeter ({}), {} socket(s), {} core(s), {} thread(s) per core, {} NUMA node(s)",
            e.cpus_online,
            e.cpus,
            e.cpus_allowed,
            opt(e.sockets),
            opt(e.cores),
            opt(e.threads_per_core),
            opt(e.numa_nodes)
        ),
    );
    line(
        &mut out,
        "memory:",
        &format!(
            "{} ({} available)",
            bytes(e.memory_bytes),
            e.memory_available_bytes.map_or("?".into(), bytes)
        ),
    );
    line(
        &mut out,
        "swap:",
        &format!(
            "{} used of {}",
            e.swap_used_bytes.map_or("?".into(), bytes),
            e.swap_total_bytes.map_or("?".into(), bytes)
        ),
    );
    line(
        &mut out,
        "CPU frequency governor:",
        e.cpu_governor.as_deref().unwrap_or("none (no cpufreq)"),
    );
    line(
        &mut out,
        "transparent huge pages:",
        e.transparent_hugepages.as_deref().unwrap_or("?"),
    );
    let lim = |v: Option<u64>| v.map_or("unlimited".to_string(), |n| n.to_string());
    line(
        &mut out,
        "open files:",
        &e.open_files.map_or("?".into(), |l| {
            format!("{} soft, {} hard", lim(l.soft), lim(l.hard))
        }),
    );
    if let Some(s) = server {
        out.push_str("\nServer:\n");
        line(&mut out, "version:", &s.version);
        if let Some(d) = &s.datadir {
            line(&mut out, "data directory:", d);
        }
        if let Some(st) = &e.datadir {
            line(
                &mut out,
                "storage:",
                &format!(
                    "{} on {} mounted at {} ({}), disk {}, scheduler {}",
                    st.filesystem,
                    st.source,
                    st.mount_point,
                    st.mount_options,
                    st.device.as_deref().unwrap_or("none"),
                    st.scheduler.as_deref().unwrap_or("none")
                ),
            );
        }
        line(
            &mut out,
            "process:",
            &s.pid
                .map_or("not on this machine (or not visible)".into(), |p| {
                    p.to_string()
                }),
        );
        for t in &s.tables {
            line(
                &mut out,
                &format!("table {}:", t.name),
                &format!(
                    "{} rows, {}",
                    t.rows.map_or("?".into(), |r| r.to_string()),
                    t.total_bytes.map_or("? bytes".into(), bytes)
                ),
            );
        }
        if verbose {
            out.push_str("\nServer variables:\n");
            for (k, v) in &s.variables {
                let _ = writeln!(out, "    {k} = {v}");
            }
        } else {
            line(
                &mut out,
                "variables:",
                &format!(
                    "{} (listed with --verbose or --format=json)",
                    s.variables.len()
                ),
            );
        }
    }
    out.push_str("\nWarnings:\n");
    if warns.is_empty() {
        out.push_str("    none\n");
    }
    for w in warns {
        let _ = writeln!(out, "WARNING: {}", w.message);
    }
    out
}
