//! OS statistics sampled from /proc by a background thread while a run
//! goes on: CPU, context switches, run queue, memory, swap, disks, network,
//! and the CPU used by dbmeter and by a local server.

use crate::process;
use crate::procfs::{self, DiskStat, Stat, read};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// CPU time shares over all CPUs, in percent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CpuPct {
    /// user + nice.
    pub user: f64,
    /// system + irq + softirq.
    pub system: f64,
    pub iowait: f64,
    pub steal: f64,
    pub idle: f64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DiskSample {
    pub name: String,
    pub r_per_s: f64,
    pub w_per_s: f64,
    pub rkb_per_s: f64,
    pub wkb_per_s: f64,
    /// Average time of the I/Os completed in the interval (queue + service).
    pub await_ms: f64,
    /// Share of the interval with I/O in flight.
    pub util_pct: f64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct NetSample {
    pub name: String,
    pub rx_bytes_per_s: f64,
    pub tx_bytes_per_s: f64,
}

/// One interval of OS statistics.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OsSample {
    /// End of the interval, seconds since sampling started.
    pub t_s: f64,
    pub duration_s: f64,
    pub cpu: CpuPct,
    pub context_switches_per_s: f64,
    /// Runnable tasks at the end of the interval (procs_running).
    pub run_queue: u64,
    pub mem_used_bytes: u64,
    pub mem_free_bytes: u64,
    /// Page cache, buffers and reclaimable slab.
    pub mem_cached_bytes: u64,
    pub swap_used_bytes: u64,
    pub disks: Vec<DiskSample>,
    pub net: Vec<NetSample>,
    /// CPU used by dbmeter, in percent of one CPU.
    pub client_cpu_pct: Option<f64>,
    /// CPU used by the local server's processes, in percent of one CPU.
    pub server_cpu_pct: Option<f64>,
    /// Resident memory of the local server's main process (MariaDB's
    /// mariadbd; PostgreSQL's postmaster only, not its backends) at the
    /// end of the interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_rss_bytes: Option<u64>,
    /// The database's size on disk at the end of the interval: the local
    /// server's data directory (every file under it, as `du` counts), or
    /// the SQLite file with its `-wal` and `-journal`. Absent when there
    /// is nothing local to measure, or in intervals the sampler skipped
    /// because measuring a large directory costs too much to do every time
    /// ([`DATA_SIZE_SHARE`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_bytes: Option<u64>,
}

/// The sampler measures the data's size at most this share of its time:
/// after a walk of the data directory that took `d`, the next waits at
/// least `d / DATA_SIZE_SHARE`.
pub const DATA_SIZE_SHARE: f64 = 0.05;

/// The size on disk (allocated blocks) of `path`: a directory's files
/// (walked without following links), or a file with its `-wal` and
/// `-journal` siblings (SQLite). None when it cannot be read.
pub fn data_size(path: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_dir() {
        let sibling = |suffix: &str| {
            let mut p = path.as_os_str().to_owned();
            p.push(suffix);
            std::fs::metadata(p).map_or(0, |m| m.blocks() * 512)
        };
        return Some(meta.blocks() * 512 + sibling("-wal") + sibling("-journal"));
    }
    let mut total = 0u64;
    let mut dirs = vec![path.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        // A directory that vanished or cannot be read as the server works
        // counts as empty.
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(m) = e.metadata() else { continue };
            if m.is_dir() {
                dirs.push(e.path());
            }
            total += m.blocks() * 512;
        }
    }
    Some(total)
}

/// The series of a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OsRecord {
    pub interval_s: f64,
    /// The server process whose CPU is in `server_cpu_pct`.
    pub server_pid: Option<u32>,
    pub samples: Vec<OsSample>,
}

impl OsRecord {
    /// The mean of `f` over the samples that have it; None when none has.
    pub fn mean(&self, f: impl Fn(&OsSample) -> Option<f64>) -> Option<f64> {
        let v: Vec<f64> = self.samples.iter().filter_map(f).collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    }

    pub fn mean_cpu(&self) -> Option<CpuPct> {
        let m = |f: fn(&CpuPct) -> f64| self.mean(|s| Some(f(&s.cpu))).unwrap_or(0.0);
        (!self.samples.is_empty()).then(|| CpuPct {
            user: m(|c| c.user),
            system: m(|c| c.system),
            iowait: m(|c| c.iowait),
            steal: m(|c| c.steal),
            idle: m(|c| c.idle),
        })
    }

    pub fn mean_client_cpu(&self) -> Option<f64> {
        self.mean(|s| s.client_cpu_pct)
    }

    pub fn mean_server_cpu(&self) -> Option<f64> {
        self.mean(|s| s.server_cpu_pct)
    }

    pub fn max_steal(&self) -> f64 {
        self.samples.iter().map(|s| s.cpu.steal).fold(0.0, f64::max)
    }
}

/// The machine's CPU times and whole-disk I/O at one moment, to take the
/// difference over a span (one query, say) without a sampler thread.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MachineCounters {
    cpu: crate::procfs::CpuTimes,
    read_sectors: u64,
    write_sectors: u64,
}

/// What the machine did between two [`MachineCounters`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MachineDelta {
    /// CPU time in user (and nice), system (and interrupts) and iowait, in
    /// percent of all CPUs' time.
    pub user_pct: f64,
    pub system_pct: f64,
    pub iowait_pct: f64,
    /// Megabytes read from and written to the whole disks.
    pub read_mb: f64,
    pub write_mb: f64,
}

impl MachineCounters {
    /// Now; None where /proc cannot be read.
    pub fn now() -> Option<MachineCounters> {
        let stat = crate::procfs::stat(&read("/proc/stat")?);
        let disks = whole_disks();
        let io = crate::procfs::diskstats(&read("/proc/diskstats").unwrap_or_default());
        let mine = io.iter().filter(|d| disks.contains(&d.name));
        let (r, w) = mine.fold((0, 0), |(r, w), d| {
            (r + d.read_sectors, w + d.write_sectors)
        });
        Some(MachineCounters {
            cpu: stat.cpu,
            read_sectors: r,
            write_sectors: w,
        })
    }

    /// The work done since `before`.
    pub fn since(&self, before: &MachineCounters) -> MachineDelta {
        let (a, b) = (&before.cpu, &self.cpu);
        let total = b.total().saturating_sub(a.total()).max(1) as f64;
        let d = |x: u64, y: u64| y.saturating_sub(x) as f64;
        let pct = |x: f64| (x / total * 1000.0).round() / 10.0;
        let mb =
            |s: u64, t: u64| (t.saturating_sub(s) as f64 * 512.0 / 1e6 * 100.0).round() / 100.0;
        MachineDelta {
            user_pct: pct(d(a.user, b.user) + d(a.nice, b.nice)),
            system_pct: pct(d(a.system, b.system) + d(a.irq, b.irq) + d(a.softirq, b.softirq)),
            iowait_pct: pct(d(a.iowait, b.iowait)),
            read_mb: mb(before.read_sectors, self.read_sectors),
            write_mb: mb(before.write_sectors, self.write_sectors),
        }
    }
}

/// Whole disks worth watching: /sys/block without loop and RAM disks.
fn whole_disks() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir("/sys/block")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| !["loop", "ram", "zram"].iter().any(|p| n.starts_with(p)))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

struct Snapshot {
    at: Instant,
    stat: Option<Stat>,
    disks: Vec<DiskStat>,
    net: Vec<(String, u64, u64)>,
    client_cpu_s: Option<f64>,
    server_cpu_s: Option<f64>,
    server_rss: Option<u64>,
    data_bytes: Option<u64>,
}

impl Snapshot {
    fn take(disks: &[String], server: Option<u32>) -> Snapshot {
        Snapshot {
            at: Instant::now(),
            stat: read("/proc/stat").map(|t| procfs::stat(&t)),
            disks: read("/proc/diskstats")
                .map(|t| procfs::diskstats(&t))
                .unwrap_or_default()
                .into_iter()
                .filter(|d| disks.contains(&d.name))
                .collect(),
            net: read("/proc/net/dev")
                .map(|t| procfs::net_dev(&t))
                .unwrap_or_default()
                .into_iter()
                .filter(|n| n.0 != "lo")
                .collect(),
            client_cpu_s: process::self_cpu_seconds(),
            server_cpu_s: server.and_then(process::tree_cpu_seconds),
            server_rss: server.and_then(process::rss_bytes),
            data_bytes: None,
        }
    }
}

/// Measures the data's size when it is due (at most [`DATA_SIZE_SHARE`]
/// of the time), into `snapshot`.
struct DataSize {
    path: PathBuf,
    next: Instant,
}

impl DataSize {
    fn measure(&mut self, snapshot: &mut Snapshot) {
        let now = Instant::now();
        if now < self.next {
            return;
        }
        snapshot.data_bytes = data_size(&self.path);
        let took = now.elapsed();
        self.next = now + took.div_f64(DATA_SIZE_SHARE);
    }
}

fn cpu_pct(a: &Stat, b: &Stat) -> CpuPct {
    let (x, y) = (&a.cpu, &b.cpu);
    let total = y.total().saturating_sub(x.total()) as f64;
    if total <= 0.0 {
        return CpuPct::default();
    }
    let p = |d: u64| d as f64 * 100.0 / total;
    CpuPct {
        user: p((y.user + y.nice).saturating_sub(x.user + x.nice)),
        system: p((y.system + y.irq + y.softirq).saturating_sub(x.system + x.irq + x.softirq)),
        iowait: p(y.iowait.saturating_sub(x.iowait)),
        steal: p(y.steal.saturating_sub(x.steal)),
        idle: p(y.idle.saturating_sub(x.idle)),
    }
}

fn sample(prev: &Snapshot, cur: &Snapshot, t_s: f64) -> OsSample {
    let secs = cur.at.duration_since(prev.at).as_secs_f64().max(1e-9);
    let rate = |a: u64, b: u64| b.saturating_sub(a) as f64 / secs;
    let mem = read("/proc/meminfo")
        .map(|t| procfs::meminfo(&t))
        .unwrap_or_default();
    let g = |k: &str| mem.get(k).copied().unwrap_or(0);
    let cached = g("Buffers") + g("Cached") + g("SReclaimable");
    let before: BTreeMap<&str, &DiskStat> =
        prev.disks.iter().map(|d| (d.name.as_str(), d)).collect();
    let disks = cur
        .disks
        .iter()
        .filter_map(|d| {
            let p = before.get(d.name.as_str())?;
            let ios = (d.reads + d.writes).saturating_sub(p.reads + p.writes);
            let io_ms = (d.read_ms + d.write_ms).saturating_sub(p.read_ms + p.write_ms);
            Some(DiskSample {
                name: d.name.clone(),
                r_per_s: rate(p.reads, d.reads),
                w_per_s: rate(p.writes, d.writes),
                rkb_per_s: rate(p.read_sectors, d.read_sectors) / 2.0,
                wkb_per_s: rate(p.write_sectors, d.write_sectors) / 2.0,
                await_ms: if ios > 0 {
                    io_ms as f64 / ios as f64
                } else {
                    0.0
                },
                util_pct: (d.busy_ms.saturating_sub(p.busy_ms) as f64 / (secs * 10.0)).min(100.0),
            })
        })
        .collect();
    let net = cur
        .net
        .iter()
        .filter_map(|(name, rx, tx)| {
            let (_, prx, ptx) = prev.net.iter().find(|n| &n.0 == name)?;
            Some(NetSample {
                name: name.clone(),
                rx_bytes_per_s: rate(*prx, *rx),
                tx_bytes_per_s: rate(*ptx, *tx),
            })
        })
        .collect();
    let pct =
        |a: Option<f64>, b: Option<f64>| a.zip(b).map(|(a, b)| ((b - a).max(0.0) / secs) * 100.0);
    let (stat_a, stat_b) = (prev.stat.unwrap_or_default(), cur.stat.unwrap_or_default());
    OsSample {
        t_s,
        duration_s: secs,
        cpu: cpu_pct(&stat_a, &stat_b),
        context_switches_per_s: rate(stat_a.ctxt, stat_b.ctxt),
        run_queue: stat_b.procs_running,
        mem_used_bytes: g("MemTotal").saturating_sub(g("MemFree") + cached),
        mem_free_bytes: g("MemFree"),
        mem_cached_bytes: cached,
        swap_used_bytes: g("SwapTotal").saturating_sub(g("SwapFree")),
        disks,
        net,
        client_cpu_pct: pct(prev.client_cpu_s, cur.client_cpu_s),
        server_cpu_pct: pct(prev.server_cpu_s, cur.server_cpu_s),
        server_rss_bytes: cur.server_rss,
        data_bytes: cur.data_bytes,
    }
}

/// CPU shares over `d` (for a quick look before a run, e.g. at steal).
pub fn measure_cpu(d: Duration) -> Option<CpuPct> {
    let a = procfs::stat(&read("/proc/stat")?);
    std::thread::sleep(d);
    let b = procfs::stat(&read("/proc/stat")?);
    Some(cpu_pct(&a, &b))
}

/// A background thread taking one [`OsSample`] per interval.
pub struct Sampler {
    stop: mpsc::Sender<()>,
    thread: Option<JoinHandle<Vec<OsSample>>>,
    interval: Duration,
    server_pid: Option<u32>,
}

impl Sampler {
    /// Starts sampling every `interval` (at least 10 ms). `server_pid`:
    /// a local server's main process, whose CPU (with its children's) is
    /// recorded too. `data`: the database's data directory or file on
    /// this machine, whose size is recorded too ([`data_size`]).
    pub fn start(interval: Duration, server_pid: Option<u32>, data: Option<PathBuf>) -> Sampler {
        let interval = interval.max(Duration::from_millis(10));
        let (tx, rx) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("dbmeter-os-sampler".into())
            .spawn(move || {
                let disks = whole_disks();
                let mut data = data.map(|path| DataSize {
                    path,
                    next: Instant::now(),
                });
                let take = |data: &mut Option<DataSize>| {
                    let mut s = Snapshot::take(&disks, server_pid);
                    if let Some(d) = data.as_mut() {
                        d.measure(&mut s);
                    }
                    s
                };
                let start = take(&mut data);
                let t0 = start.at;
                let mut prev = start;
                let mut out = Vec::new();
                let mut n = 1u32;
                loop {
                    let due = t0 + interval * n;
                    let wait = due.saturating_duration_since(Instant::now());
                    match rx.recv_timeout(wait) {
                        Err(RecvTimeoutError::Timeout) => {
                            let cur = take(&mut data);
                            out.push(sample(&prev, &cur, cur.at.duration_since(t0).as_secs_f64()));
                            prev = cur;
                            // After a stall, skip the ticks already missed.
                            while t0 + interval * n <= Instant::now() {
                                n += 1;
                            }
                        }
                        _ => {
                            // A last, partial interval when it is long enough to mean something.
                            let cur = take(&mut data);
                            if cur.at.duration_since(prev.at) >= interval / 4 {
                                out.push(sample(
                                    &prev,
                                    &cur,
                                    cur.at.duration_since(t0).as_secs_f64(),
                                ));
                            }
                            return out;
                        }
                    }
                }
            })
            .ok();
        Sampler {
            stop: tx,
            thread,
            interval,
            server_pid,
        }
    }

    /// Stops the thread and returns the series.
    pub fn finish(mut self) -> OsRecord {
        let _ = self.stop.send(());
        let samples = self
            .thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default();
        OsRecord {
            interval_s: self.interval.as_secs_f64(),
            server_pid: self.server_pid,
            samples,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_at_the_interval() {
        let dir = std::env::temp_dir().join(format!("dbmeter-sampler-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("sub/f"), vec![1u8; 64 << 10]).unwrap();
        let s = Sampler::start(
            Duration::from_millis(100),
            Some(std::process::id()),
            Some(dir.clone()),
        );
        std::thread::sleep(Duration::from_millis(450));
        let r = s.finish();
        // 4 ticks and a last partial interval; fewer on a very busy machine.
        assert!((3..=5).contains(&r.samples.len()), "{}", r.samples.len());
        let first = &r.samples[0];
        assert!(first.t_s >= 0.1 && first.t_s < 0.35, "{}", first.t_s);
        if cfg!(target_os = "linux") {
            let c = &first.cpu;
            let sum = c.user + c.system + c.iowait + c.steal + c.idle;
            assert!(sum == 0.0 || (sum - 100.0).abs() < 1.0, "{c:?}");
            assert!(first.client_cpu_pct.is_some());
            assert!(first.server_cpu_pct.is_some());
            assert!(first.mem_used_bytes > 0);
            assert!(first.net.iter().all(|n| n.name != "lo"));
            assert!(first.disks.iter().all(|d| !d.name.starts_with("loop")));
            // The directory's 64 KiB file, and the directories themselves.
            let data = r.samples.iter().filter_map(|s| s.data_bytes).max();
            assert!(data.is_some_and(|b| b >= 64 << 10), "{data:?}");
        }
        let _ = std::fs::remove_dir_all(&dir);
        assert!(r.mean_cpu().is_some());
    }

    /// The cost of one sample, for the record (printed with --nocapture).
    #[test]
    fn one_sample_is_cheap() {
        let disks = whole_disks();
        let t0 = process::self_cpu_seconds().unwrap_or(0.0);
        let start = Instant::now();
        let mut prev = Snapshot::take(&disks, Some(std::process::id()));
        for _ in 0..200 {
            let cur = Snapshot::take(&disks, Some(std::process::id()));
            std::hint::black_box(sample(&prev, &cur, 0.0));
            prev = cur;
        }
        let per = start.elapsed() / 200;
        let cpu = (process::self_cpu_seconds().unwrap_or(0.0) - t0) / 200.0;
        eprintln!("one OS sample: {per:?} wall, {:.0} us CPU", cpu * 1e6);
        assert!(per < Duration::from_millis(50));
    }
}
