//! The local server's CPU profile during a run's measured phase
//! (`--profile-server`): `perf record` on the server's processes, then
//! `perf report`'s share of samples by function. Where perf is missing or
//! the kernel refuses it (perf_event_paranoid, a container), the record
//! holds one line that says so.

use serde::{Deserialize, Serialize};
use std::io::Read;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Samples per second perf takes: an odd rate that does not beat with
/// the timers of the server.
pub const FREQUENCY_HZ: u32 = 99;

/// Functions kept in the record, the busiest first.
pub const KEPT: usize = 40;

/// One function's share of the samples.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ProfileEntry {
    /// The symbol; `(unresolved)` for addresses without one, summed.
    pub function: String,
    /// Percent of the samples.
    pub pct: f64,
}

/// What the profiler found.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ProfileRecord {
    /// `perf`.
    pub tool: String,
    pub frequency_hz: u32,
    /// Samples taken on the server's processes.
    pub samples: u64,
    /// The busiest functions (at most [`KEPT`]), the busiest first.
    pub functions: Vec<ProfileEntry>,
    /// Why there is no profile, or less of one (one line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl ProfileRecord {
    fn failed(note: String) -> ProfileRecord {
        ProfileRecord {
            tool: "perf".into(),
            frequency_hz: FREQUENCY_HZ,
            note: Some(note),
            ..ProfileRecord::default()
        }
    }
}

/// `perf record` running on a server's processes.
pub struct Profiler {
    child: Child,
    file: PathBuf,
}

/// What perf said on stderr, in one line: the paranoid setting when the
/// kernel refused, else its first line that says something.
fn last_words(child: &mut Child) -> String {
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut err);
    }
    refusal(&err)
}

/// [`last_words`] of perf's stderr text.
fn refusal(err: &str) -> String {
    if let Some(l) = err
        .lines()
        .find(|l| l.contains("perf_event_paranoid setting is"))
    {
        let n = l
            .trim()
            .trim_start_matches("perf_event_paranoid setting is")
            .trim_end_matches(':')
            .trim();
        return format!(
            "the kernel refuses (kernel.perf_event_paranoid is {n}; root, CAP_PERFMON or a lower setting lets perf watch the server's processes)"
        );
    }
    err.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && *l != "Error:" && !l.starts_with('['))
        .unwrap_or("it gave no reason")
        .to_string()
}

impl Profiler {
    /// Starts `perf record` on `server` and its child processes
    /// (PostgreSQL's backends); Err is the record with the one line that
    /// says why not. perf refuses a list with a process that has just
    /// ended (a session closing), so it is tried again, up to three times,
    /// with the processes of the moment.
    pub fn start(server: u32) -> Result<Profiler, ProfileRecord> {
        let mut last = None;
        for _ in 0..3 {
            match Profiler::try_start(server) {
                Ok(p) => return Ok(p),
                Err((record, again)) => {
                    if !again {
                        return Err(record);
                    }
                    last = Some(record);
                }
            }
        }
        Err(last.unwrap_or_else(|| {
            ProfileRecord::failed("--profile-server: perf did not start".into())
        }))
    }

    /// One attempt; Err with the record and whether another may succeed.
    fn try_start(server: u32) -> Result<Profiler, (ProfileRecord, bool)> {
        let mut pids = vec![server];
        pids.extend(crate::process::children(server));
        pids.retain(|p| std::path::Path::new(&format!("/proc/{p}")).exists());
        let list: Vec<String> = pids.iter().map(u32::to_string).collect();
        let file = std::env::temp_dir().join(format!(
            "dbmeter-perf-{}-{}.data",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        ));
        let spawned = Command::new("perf")
            .args(["record", "-F", &FREQUENCY_HZ.to_string(), "-p"])
            .arg(list.join(","))
            .arg("-o")
            .arg(&file)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn();
        let mut child = match spawned {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err((ProfileRecord::failed(
                    "--profile-server: perf is not installed (Debian package linux-perf), so the server was not profiled".into(),
                ), false));
            }
            Err(e) => {
                return Err((
                    ProfileRecord::failed(format!("--profile-server: cannot start perf: {e}")),
                    false,
                ));
            }
        };
        // perf refuses at once when it may not watch the server.
        let until = Instant::now() + Duration::from_millis(300);
        while Instant::now() < until {
            if let Ok(Some(status)) = child.try_wait() {
                let _ = std::fs::remove_file(&file);
                let why = last_words(&mut child);
                let again = why.contains("No such process");
                return Err((
                    ProfileRecord::failed(format!(
                        "--profile-server: perf record ended at once ({status}): {why}"
                    )),
                    again,
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(Profiler { child, file })
    }

    /// Stops perf (SIGINT, as Ctrl-C would) and reads its report.
    pub fn finish(mut self) -> ProfileRecord {
        // SAFETY: kill(2) on the perf process we started and still own
        // (not yet waited for, so its pid is not reused).
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGINT);
        }
        let until = Instant::now() + Duration::from_secs(10);
        let mut ended = false;
        while Instant::now() < until {
            if let Ok(Some(_)) = self.child.try_wait() {
                ended = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        if !ended {
            let _ = self.child.kill();
            let _ = self.child.wait();
            let _ = std::fs::remove_file(&self.file);
            return ProfileRecord::failed(
                "--profile-server: perf record did not stop within 10 s after the run".into(),
            );
        }
        let out = Command::new("perf")
            .args([
                "report",
                "--stdio",
                "--no-children",
                "--sort",
                "symbol",
                "-i",
            ])
            .arg(&self.file)
            .stdin(Stdio::null())
            .stderr(Stdio::piped())
            .output();
        let _ = std::fs::remove_file(&self.file);
        match out {
            Ok(o) if o.status.success() => parse_report(&String::from_utf8_lossy(&o.stdout)),
            Ok(o) => ProfileRecord::failed(format!(
                "--profile-server: perf report failed: {}",
                String::from_utf8_lossy(&o.stderr)
                    .lines()
                    .map(str::trim)
                    .find(|l| !l.is_empty())
                    .unwrap_or("no message")
            )),
            Err(e) => {
                ProfileRecord::failed(format!("--profile-server: cannot run perf report: {e}"))
            }
        }
    }
}

/// `perf report --stdio --sort symbol`'s text: the sample count from its
/// header, a function per line (`  23.14%  [.] ExecScan`).
pub fn parse_report(text: &str) -> ProfileRecord {
    let mut rec = ProfileRecord {
        tool: "perf".into(),
        frequency_hz: FREQUENCY_HZ,
        ..ProfileRecord::default()
    };
    let mut unresolved = 0.0;
    for line in text.lines() {
        let l = line.trim();
        if let Some(rest) = l.strip_prefix("# Samples:") {
            // "# Samples: 255  of event 'cpu-clock'", or "1K".
            let n = rest.split_whitespace().next().unwrap_or("");
            let (num, mult) = match n.strip_suffix('K') {
                Some(k) => (k, 1000.0),
                None => match n.strip_suffix('M') {
                    Some(m) => (m, 1e6),
                    None => (n, 1.0),
                },
            };
            rec.samples += num.parse::<f64>().map_or(0, |x| (x * mult) as u64);
            continue;
        }
        if l.starts_with('#') || l.is_empty() {
            continue;
        }
        let mut words = l.split_whitespace();
        let Some(pct) = words
            .next()
            .and_then(|p| p.strip_suffix('%'))
            .and_then(|p| p.parse::<f64>().ok())
        else {
            continue;
        };
        // "[.]" user space, "[k]" kernel: then the symbol.
        // perf may add empty columns ("-") after the symbol.
        let mut rest: Vec<&str> = words.collect();
        while rest.last() == Some(&"-") {
            rest.pop();
        }
        let symbol = match rest.first() {
            Some(m) if m.starts_with('[') && m.ends_with(']') => rest[1..].join(" "),
            _ => rest.join(" "),
        };
        if symbol.starts_with("0x") || symbol.is_empty() {
            unresolved += pct;
            continue;
        }
        match rec.functions.iter_mut().find(|f| f.function == symbol) {
            Some(f) => f.pct += pct,
            None => rec.functions.push(ProfileEntry {
                function: symbol,
                pct,
            }),
        }
    }
    if unresolved > 0.0 {
        rec.functions.push(ProfileEntry {
            function: "(unresolved)".into(),
            pct: unresolved,
        });
    }
    rec.functions.sort_by(|a, b| b.pct.total_cmp(&a.pct));
    rec.functions.truncate(KEPT);
    if rec.samples == 0 {
        rec.note = Some("--profile-server: perf took no sample of the server".into());
    }
    rec
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn says_why_perf_refused_in_one_line() {
        let paranoid = "Error:\nAccess to performance monitoring and observability operations is limited.\n\
                        Consider adjusting /proc/sys/kernel/perf_event_paranoid setting to open\n\
                        perf_event_paranoid setting is 2:\n  -1: Allow use of (almost) all events by all users\n";
        assert_eq!(
            refusal(paranoid),
            "the kernel refuses (kernel.perf_event_paranoid is 2; root, CAP_PERFMON or a lower setting lets perf watch the server's processes)"
        );
        assert_eq!(
            refusal("Couldn't create thread/CPU maps: No such process\n"),
            "Couldn't create thread/CPU maps: No such process"
        );
        assert_eq!(refusal(""), "it gave no reason");
    }

    #[test]
    fn reads_perf_report_text() {
        let text = "# Total Lost Samples: 0\n#\n# Samples: 1K of event 'cpu-clock:pppH'\n\
                    # Event count (approx.): 2560000000\n#\n# Overhead  Symbol\n\
                    # ........  ......\n#\n    23.14%  [.] ExecEvalHashedScalarArrayOp\n\
                    \x20   10.20%  [.] HeapTupleSatisfiesVisibility            -      -\n     1.57%  [.] 0x00000000002ff301\n\
                    \x20    1.18%  [.] 0x0000000000197bbe\n     0.80%  [k] finish_task_switch.isra.0\n";
        let r = parse_report(text);
        assert_eq!(r.samples, 1000);
        assert_eq!(r.functions[0].function, "ExecEvalHashedScalarArrayOp");
        assert_eq!(r.functions[1].function, "HeapTupleSatisfiesVisibility");
        let u = r
            .functions
            .iter()
            .find(|f| f.function == "(unresolved)")
            .map(|f| f.pct);
        assert!(u.is_some_and(|u| (u - 2.75).abs() < 1e-9), "{r:?}");
        assert!(
            r.functions
                .iter()
                .any(|f| f.function == "finish_task_switch.isra.0")
        );
        assert!(r.note.is_none());
        assert!(parse_report("").note.is_some());
    }
}
