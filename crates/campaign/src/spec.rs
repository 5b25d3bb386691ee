//! The campaign file: TOML, read into [`Campaign`] and checked, with the
//! line of the first mistake in every error.

use dbmeter_benchmarks::options::{OptSpec, canonical, check};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// A campaign file as written (see docs/campaigns.md).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CampaignFile {
    pub name: Spanned<String>,
    /// Results store: a file path or a postgres:// URL (default: the
    /// default store, next to the campaign file).
    pub store: Option<String>,
    /// Seconds per measured run.
    pub duration: Spanned<f64>,
    #[serde(default)]
    pub warmup: f64,
    /// A whole number, or "auto" (adaptive repeats: `ci_width`,
    /// `min_repeats`, `max_repeats`).
    #[serde(default = "one")]
    pub repeats: Spanned<toml::Value>,
    /// With `repeats = "auto"`: a cell stops repeating when the 95%
    /// confidence interval of its median throughput is at most this wide,
    /// relative to the median ("5%", or the number 5).
    #[serde(default)]
    pub ci_width: Option<Spanned<toml::Value>>,
    #[serde(default)]
    pub min_repeats: Option<Spanned<u32>>,
    #[serde(default)]
    pub max_repeats: Option<Spanned<u32>>,
    pub clients: Spanned<Vec<u32>>,
    /// "interleaved" (default) or "sequential".
    #[serde(default)]
    pub order: Option<Spanned<String>>,
    /// Seconds between two runs.
    #[serde(default)]
    pub pause: f64,
    /// Reset of managed servers: "none" (default), "restart" or
    /// "snapshot" (a fresh copy of the prepared data directory).
    #[serde(default)]
    pub reset: Option<Spanned<String>>,
    /// Before which runs to reset: "write-runs" (default) or "every-run".
    #[serde(default)]
    pub reset_before: Option<Spanned<String>>,
    /// `run` options given to every run (e.g. report-interval = 10).
    #[serde(default)]
    pub options: Option<Spanned<BTreeMap<String, toml::Value>>>,
    /// The campaign runs as this many processes, each given its number
    /// with `--shard=I/N` (docs/shards.md).
    #[serde(default)]
    pub shards: Option<Spanned<u64>>,
    /// Seconds a shard waits at a cell's start barrier for the others
    /// (and shard 0 for their results).
    #[serde(default)]
    pub shard_timeout: Option<Spanned<f64>>,
    /// Seconds between the last shard's arrival and the common start.
    #[serde(default)]
    pub start_margin: Option<Spanned<f64>>,
    #[serde(rename = "target")]
    pub targets: Vec<TargetFile>,
    #[serde(rename = "workload")]
    pub workloads: Vec<WorkloadFile>,
    #[serde(default)]
    pub hooks: Hooks,
}

fn one() -> Spanned<toml::Value> {
    Spanned::new(0..0, toml::Value::Integer(1))
}

/// `repeats = "auto"`: each cell is repeated until the confidence interval
/// of its median throughput is narrow enough, or `max` runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Adaptive {
    /// The widest interval that settles a cell, relative to its median
    /// (0.05 for 5%).
    pub ci_width: f64,
    /// Runs before a cell is judged.
    pub min: u32,
    /// Runs after which a cell stops, settled or not.
    pub max: u32,
}

impl Adaptive {
    /// The confidence level of the interval.
    pub const LEVEL: f64 = 0.95;
    pub const DEFAULT_CI_WIDTH: f64 = 0.05;
    /// 4: with fewer runs a side, `compare`'s Mann-Whitney test cannot find
    /// any difference significant at 95% (its smallest p-value with 3 and
    /// 3 is 0.1).
    pub const DEFAULT_MIN: u32 = 4;
    pub const DEFAULT_MAX: u32 = 10;
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetFile {
    pub name: Spanned<String>,
    /// An external server or SQLite file.
    pub url: Option<String>,
    /// A managed server of this flavor: "mariadb" or "postgres".
    pub server: Option<Spanned<String>>,
    #[serde(default)]
    pub settings: BTreeMap<String, toml::Value>,
    pub config: Option<PathBuf>,
    pub basedir: Option<PathBuf>,
    pub server_cpus: Option<String>,
    /// Run options of this target's runs (after the campaign's and the
    /// workload's): what sets a variant apart when it is not a server,
    /// e.g. fileio's `file-dir` on two filesystems.
    #[serde(default)]
    pub options: Option<Spanned<BTreeMap<String, toml::Value>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadFile {
    pub name: Spanned<String>,
    /// The workload's options (tables = 4, table-size = 100000, ...).
    #[serde(default)]
    pub options: BTreeMap<String, toml::Value>,
}

/// Commands run around the campaign and each run: `sh: ...` through the
/// shell, `sql: ...` against the run's target.
#[derive(Debug, Default, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct Hooks {
    #[serde(default)]
    pub before_campaign: Vec<String>,
    #[serde(default)]
    pub after_campaign: Vec<String>,
    #[serde(default)]
    pub before_run: Vec<String>,
    #[serde(default)]
    pub after_run: Vec<String>,
}

/// Where a target's server comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum TargetKind {
    External {
        url: String,
    },
    Managed {
        flavor: String,
        settings: Vec<(String, String)>,
        config: Option<PathBuf>,
        basedir: Option<PathBuf>,
        server_cpus: Option<String>,
    },
    /// No server: the machine itself, for workloads that need no database
    /// (cpu, memory, threads, mutex, fileio).
    Machine,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TargetSpec {
    pub name: String,
    pub kind: TargetKind,
    /// Its own run options, applied last.
    pub options: Vec<(String, String)>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct WorkloadSpec {
    pub name: String,
    pub options: Vec<(String, String)>,
}

impl WorkloadSpec {
    /// Whether its runs change the data (and so may need a reset first).
    pub fn writes(&self) -> bool {
        // Names were checked against the registry (or loaded as scripts)
        // when the file was read.
        dbmeter_benchmarks::registry::resolve(&self.name).map_or(true, |w| w.writes())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Repeat by repeat, each workload and client count over every target
    /// in turn, so that drift spreads evenly over the targets.
    Interleaved,
    /// Target by target, then workload, client count, repeat.
    Sequential,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reset {
    None,
    Restart,
    Snapshot,
}

impl Order {
    /// As the campaign file writes it.
    pub fn name(self) -> &'static str {
        match self {
            Order::Interleaved => "interleaved",
            Order::Sequential => "sequential",
        }
    }
}

impl Reset {
    /// As the campaign file writes it.
    pub fn name(self) -> &'static str {
        match self {
            Reset::None => "none",
            Reset::Restart => "restart",
            Reset::Snapshot => "snapshot",
        }
    }
}

/// A checked campaign.
#[derive(Clone, Debug)]
pub struct Campaign {
    pub name: String,
    pub store: Option<String>,
    pub duration: f64,
    pub warmup: f64,
    /// Runs per cell; with [`Campaign::adaptive`], the most a cell may get.
    pub repeats: u32,
    /// `repeats = "auto"`.
    pub adaptive: Option<Adaptive>,
    pub clients: Vec<u32>,
    pub order: Order,
    pub pause: f64,
    pub reset: Reset,
    pub reset_every_run: bool,
    pub options: Vec<(String, String)>,
    pub targets: Vec<TargetSpec>,
    pub workloads: Vec<WorkloadSpec>,
    pub hooks: Hooks,
    /// The campaign file's directory: relative paths start there.
    pub dir: PathBuf,
    /// `shards = N`: the campaign runs as N processes (`--shard=I/N`).
    pub shards: Option<u64>,
    /// `shard_timeout`: how long a shard waits for the others, seconds.
    pub shard_timeout: f64,
    /// `start_margin`: seconds from the last shard's arrival at a cell's
    /// barrier to the cell's common start.
    pub start_margin: f64,
}

/// `shard_timeout`'s default: ten minutes for the other shards to come
/// (pods to be scheduled, shard 0 to prepare a dataset).
pub const SHARD_TIMEOUT_S: f64 = 600.0;

/// `start_margin`'s default: time for every shard to see the last arrival
/// and to connect its users before the common start.
pub const START_MARGIN_S: f64 = 3.0;

/// Options a campaign sets itself on every run.
const RESERVED: &[&str] = &[
    "db",
    "threads",
    "time",
    "warmup-time",
    "format",
    "output",
    "store",
];

fn value_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        toml::Value::Boolean(b) => if *b { "on" } else { "off" }.to_string(),
        toml::Value::Array(a) => a.iter().map(value_text).collect::<Vec<_>>().join(","),
        // As the user wrote it: 1e300, not three hundred digits.
        toml::Value::Float(f) if f.is_finite() && f.abs() >= 1e15 => format!("{f:e}"),
        toml::Value::Float(f) if *f != 0.0 && f.abs() < 1e-4 => format!("{f:e}"),
        other => other.to_string(),
    }
}

fn options(m: &BTreeMap<String, toml::Value>) -> Vec<(String, String)> {
    m.iter()
        .map(|(k, v)| (k.replace('_', "-"), value_text(v)))
        .collect()
}

/// A relative SQLite file in a campaign file is relative to the file.
fn beside(url: &str, campaign_file: &Path) -> String {
    let Some(rest) = url.strip_prefix("sqlite:") else {
        return url.to_string();
    };
    let file = rest.strip_prefix("//").unwrap_or(rest);
    let dir = campaign_file.parent().unwrap_or(Path::new(""));
    if file.is_empty() || Path::new(file).is_absolute() || dir.as_os_str().is_empty() {
        return url.to_string();
    }
    format!("sqlite:{}", dir.join(file).display())
}

/// The benchmark a workload names: a built-in one, or a script file (a
/// path relative to the campaign file's folder, kept as dbmeter finds
/// it: that is the name its runs are stored under).
fn workload_of(
    name: &str,
    campaign_file: &Path,
) -> Result<std::sync::Arc<dyn dbmeter_benchmarks::Benchmark>, String> {
    use dbmeter_benchmarks::registry;
    if let Some(b) = registry::find(name) {
        return Ok(b);
    }
    if !registry::looks_like_path(name) {
        return Err(format!(
            "unknown workload '{name}' (`dbmeter list` shows them, or give a script's path)"
        ));
    }
    let dir = campaign_file.parent().unwrap_or(Path::new(""));
    let file = if Path::new(name).is_absolute() || dir.as_os_str().is_empty() {
        PathBuf::from(name)
    } else {
        dir.join(name)
    };
    registry::resolve(&file.to_string_lossy())
}

/// Checks one option of a run: not one the campaign sets itself, known to
/// the workload or to `run` in general, and with a value of its kind.
fn check_option(
    name: &str,
    value: &str,
    own: &[OptSpec],
    general: &[OptSpec],
    aliases: &[(&str, &str)],
) -> Result<(), String> {
    let name = aliases
        .iter()
        .find(|(alias, _)| *alias == name)
        .map_or(name, |(_, to)| to);
    if RESERVED.contains(&canonical(name).as_str()) {
        return Err(format!(
            "option '{name}' is set by the campaign itself (use duration, warmup, clients or [[target]])"
        ));
    }
    if dbmeter_run::options::SHARD_OPTIONS.contains(&canonical(name).as_str()) {
        return Err(format!(
            "option '{name}' is set by the campaign itself: run the campaign sharded with `dbmeter campaign run FILE --shard=I/N` (docs/shards.md)"
        ));
    }
    if dbmeter_run::options::METRICS_OPTIONS.contains(&canonical(name).as_str()) {
        return Err(format!(
            "option '{name}' serves the whole campaign's metrics: give it on the command line, `dbmeter campaign run FILE --{name}=...`"
        ));
    }
    let Some(spec) = own
        .iter()
        .chain(general)
        .find(|o| canonical(&o.name) == canonical(name))
    else {
        return Err(format!("unknown option '{name}'"));
    };
    check(spec, value).map_err(|e| format!("option '{name}': {e}"))
}

/// The 1-based line of a byte offset.
/// The name of the campaign in file `path` and the store it names (a
/// relative path made relative to the file), read without checking the
/// rest of the file; None when it is not a campaign file.
pub fn name_and_store(path: &Path) -> Option<(String, Option<String>)> {
    #[derive(Deserialize)]
    struct Head {
        name: String,
        store: Option<String>,
    }
    let text = std::fs::read_to_string(path).ok()?;
    let head: Head = toml::from_str(&text).ok()?;
    let dir = path.parent().unwrap_or(Path::new(""));
    let store = head.store.map(|s| {
        if s.contains("://") || Path::new(&s).is_absolute() {
            s
        } else {
            dir.join(&s).to_string_lossy().into_owned()
        }
    });
    Some((head.name, store))
}

/// The key (`duration`, `target.url`) that a TOML error is about, when
/// the error knows it. The library only shows it in its text without the
/// input ("in `target.url`").
fn error_key(e: &toml::de::Error) -> Option<String> {
    let mut bare = e.clone();
    bare.set_input(None);
    let text = bare.to_string();
    let key = text.lines().rev().find_map(|l| l.strip_prefix("in `"))?;
    let key = key.trim_end_matches('`');
    // Array indexes say nothing to the writer of the file.
    let parts: Vec<&str> = key
        .split('.')
        .filter(|p| p.parse::<usize>().is_err())
        .collect();
    (!parts.is_empty()).then(|| parts.join("."))
}

/// What a key of the campaign file holds, in the words of
/// docs/campaigns.md.
fn expected_of(key: &str) -> Option<&'static str> {
    Some(match key {
        "name" | "store" | "order" | "reset" | "reset_before" | "target.name" | "target.url"
        | "target.server" | "target.config" | "target.basedir" | "target.server_cpus"
        | "workload.name" => "a string (in double quotes)",
        "duration" | "warmup" | "pause" | "shard_timeout" | "start_margin" => "a number of seconds",
        "shards" => "a whole number, 1 or more",
        "repeats" => "a whole number, 1 or more, or \"auto\"",
        "min_repeats" | "max_repeats" => "a whole number, 2 or more",
        "ci_width" => "a percentage, e.g. \"5%\"",
        "clients" => "a list of whole numbers, e.g. [1, 8, 32]",
        "options" | "target.settings" | "target.options" | "workload.options" | "hooks" => {
            "a table, e.g. { key = value, ... }"
        }
        "target" => "a list of tables, each one [[target]]",
        "workload" => "a list of tables, each one [[workload]]",
        "hooks.before_campaign"
        | "hooks.after_campaign"
        | "hooks.before_run"
        | "hooks.after_run" => "a list of strings, e.g. [\"sh: ...\"]",
        _ => return None,
    })
}

/// serde's name of a type ("f64", "a sequence") in the user's words.
fn type_words(t: &str) -> String {
    match t.trim() {
        "f32" | "f64" => "a number".into(),
        "u8" | "u16" | "u32" | "u64" | "usize" => "a whole number, 0 or more".into(),
        "i8" | "i16" | "i32" | "i64" | "isize" => "a whole number".into(),
        "a sequence" => "a list".into(),
        "a map" | "struct" => "a table".into(),
        "a boolean" => "true or false".into(),
        other => other.trim_matches('`').to_string(),
    }
}

/// serde's description of a value found ("string \"60\"", "integer `4`").
fn found_words(f: &str) -> String {
    let f = f.trim();
    let tick = |p: &str| {
        f.strip_prefix(p)
            .map(|v| v.trim().trim_matches('`').to_string())
    };
    if let Some(v) = f.strip_prefix("string ") {
        format!("the string {v}")
    } else if let Some(v) = tick("integer ") {
        format!("the whole number {v}")
    } else if let Some(v) = tick("floating point ") {
        format!("the number {v}")
    } else if let Some(v) = tick("boolean ") {
        v
    } else if f == "sequence" {
        "a list".into()
    } else if f == "map" {
        "a table".into()
    } else {
        f.to_string()
    }
}

/// A type error of the TOML reader ("invalid type: string \"60\",
/// expected f64") as "duration: expected a number of seconds, found the
/// string \"60\"". None for other errors.
fn type_error(e: &toml::de::Error) -> Option<String> {
    let msg = e.message().trim();
    let rest = msg
        .strip_prefix("invalid type: ")
        .or_else(|| msg.strip_prefix("invalid value: "))?;
    let (found, expected) = rest.rsplit_once(", expected ")?;
    let key = error_key(e);
    let wanted = key
        .as_deref()
        .and_then(expected_of)
        .map_or_else(|| type_words(expected), str::to_string);
    let found = found_words(found);
    Some(match key {
        Some(k) => format!("{k}: expected {wanted}, found {found}"),
        None => format!("expected {wanted}, found {found}"),
    })
}

/// `repeats` and the adaptive settings that go with `repeats = "auto"`;
/// an error is a span and a message.
fn repeats(f: &CampaignFile) -> Result<(u32, Option<Adaptive>), (Range<usize>, String)> {
    let span = f.repeats.span();
    let auto = match f.repeats.get_ref() {
        toml::Value::Integer(n) if (1..=i64::from(u32::MAX)).contains(n) => false,
        toml::Value::Integer(_) => return Err((span, "repeats must be at least 1".into())),
        toml::Value::String(s) if s.trim().eq_ignore_ascii_case("auto") => true,
        other => {
            return Err((
                span,
                format!(
                    "repeats: expected a whole number, 1 or more, or \"auto\", found {}",
                    match other {
                        toml::Value::String(v) => format!("the string {v:?}"),
                        toml::Value::Float(v) => format!("the number {v}"),
                        v => format!("{} {v}", v.type_str()),
                    }
                ),
            ));
        }
    };
    if !auto {
        let stray = [
            f.ci_width.as_ref().map(Spanned::span),
            f.min_repeats.as_ref().map(Spanned::span),
            f.max_repeats.as_ref().map(Spanned::span),
        ];
        if let Some(s) = stray.into_iter().flatten().next() {
            return Err((
                s,
                "ci_width, min_repeats and max_repeats go with repeats = \"auto\"".into(),
            ));
        }
        let n = f.repeats.get_ref().as_integer().unwrap_or(1);
        return Ok((u32::try_from(n).unwrap_or(1), None));
    }
    let ci_width = match &f.ci_width {
        None => Adaptive::DEFAULT_CI_WIDTH,
        Some(v) => {
            let pct = match v.get_ref() {
                toml::Value::String(s) => s
                    .trim()
                    .strip_suffix('%')
                    .and_then(|p| p.trim().parse::<f64>().ok()),
                toml::Value::Float(x) => Some(*x),
                toml::Value::Integer(x) => Some(*x as f64),
                _ => None,
            };
            match pct.filter(|p| *p > 0.0 && *p <= 1000.0) {
                Some(p) => p / 100.0,
                None => {
                    return Err((
                        v.span(),
                        format!(
                            "ci_width = {}: expected a percentage above 0, at most 1000, e.g. \"5%\"",
                            v.get_ref()
                        ),
                    ));
                }
            }
        }
    };
    let min = f
        .min_repeats
        .as_ref()
        .map_or(Adaptive::DEFAULT_MIN, |m| *m.get_ref());
    let max = f
        .max_repeats
        .as_ref()
        .map_or(Adaptive::DEFAULT_MAX.max(min), |m| *m.get_ref());
    if min < 2 {
        let s = f.min_repeats.as_ref().map_or(span.clone(), Spanned::span);
        return Err((
            s,
            format!("min_repeats = {min}: a confidence interval needs at least 2 runs"),
        ));
    }
    if max < min {
        let s = f.max_repeats.as_ref().map_or(span, Spanned::span);
        return Err((
            s,
            format!("max_repeats = {max} is below min_repeats ({min})"),
        ));
    }
    Ok((max, Some(Adaptive { ci_width, min, max })))
}

fn line_of(text: &str, span: &Range<usize>) -> usize {
    text[..span.start.min(text.len())].matches('\n').count() + 1
}

impl Campaign {
    /// Reads a campaign file. `general` and `aliases` are the options
    /// every `run` takes besides the workload's own (the CLI's).
    pub fn load(
        path: &Path,
        general: &[OptSpec],
        aliases: &[(&str, &str)],
    ) -> Result<Campaign, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read campaign file {}: {e}", path.display()))?;
        Campaign::parse(&text, path, general, aliases)
    }

    pub fn parse(
        text: &str,
        path: &Path,
        general: &[OptSpec],
        aliases: &[(&str, &str)],
    ) -> Result<Campaign, String> {
        let shown = path.display();
        let f: CampaignFile = toml::from_str(text).map_err(|e| {
            let line = e.span().map(|s| line_of(text, &s));
            let msg = type_error(&e).unwrap_or_else(|| e.message().trim().to_string());
            match line {
                Some(l) => format!("{shown}, line {l}: {msg}"),
                None => format!("{shown}: {msg}"),
            }
        })?;
        let at = |span: Range<usize>, msg: String| -> String {
            format!("{shown}, line {}: {msg}", line_of(text, &span))
        };
        let order = match f.order.as_ref().map(|o| (o.get_ref().as_str(), o.span())) {
            None | Some(("interleaved", _)) => Order::Interleaved,
            Some(("sequential", _)) => Order::Sequential,
            Some((o, span)) => {
                return Err(at(
                    span,
                    format!("order = \"{o}\": expected \"interleaved\" or \"sequential\""),
                ));
            }
        };
        let reset = match f.reset.as_ref().map(|o| (o.get_ref().as_str(), o.span())) {
            None | Some(("none", _)) => Reset::None,
            Some(("restart", _)) => Reset::Restart,
            Some(("snapshot", _)) => Reset::Snapshot,
            Some((o, span)) => {
                return Err(at(
                    span,
                    format!("reset = \"{o}\": expected \"none\", \"restart\" or \"snapshot\""),
                ));
            }
        };
        let reset_every_run = match f
            .reset_before
            .as_ref()
            .map(|o| (o.get_ref().as_str(), o.span()))
        {
            None | Some(("write-runs", _)) => false,
            Some(("every-run", _)) => true,
            Some((o, span)) => {
                return Err(at(
                    span,
                    format!("reset_before = \"{o}\": expected \"write-runs\" or \"every-run\""),
                ));
            }
        };
        // The limits of `dbmeter run --time` (docs/usage.md).
        use dbmeter_run::settings::{MAX_SECONDS, MIN_SECONDS};
        let d = *f.duration.get_ref();
        if !(MIN_SECONDS..=MAX_SECONDS).contains(&d) {
            return Err(at(
                f.duration.span(),
                format!(
                    "duration = {d}: expected seconds from {MIN_SECONDS} to {MAX_SECONDS} (a year)"
                ),
            ));
        }
        let span = 0.0..=MAX_SECONDS;
        if !span.contains(&f.warmup) || !span.contains(&f.pause) {
            return Err(format!(
                "{shown}: warmup and pause are seconds from 0 to {MAX_SECONDS} (a year)"
            ));
        }
        let (repeats, adaptive) = repeats(&f).map_err(|(span, msg)| at(span, msg))?;
        if let Some(n) = &f.shards
            && !(1..=dbmeter_benchmarks::shard::MAX_SHARDS).contains(n.get_ref())
        {
            return Err(at(
                n.span(),
                format!(
                    "shards = {}: expected 1 to {} processes",
                    n.get_ref(),
                    dbmeter_benchmarks::shard::MAX_SHARDS
                ),
            ));
        }
        let seconds = |v: &Option<Spanned<f64>>, key: &str, default: f64, min: f64| {
            let Some(v) = v else { return Ok(default) };
            let x = *v.get_ref();
            if (min..=MAX_SECONDS).contains(&x) {
                Ok(x)
            } else {
                Err(at(
                    v.span(),
                    format!("{key} = {x}: expected seconds from {min} to {MAX_SECONDS} (a year)"),
                ))
            }
        };
        let shard_timeout = seconds(&f.shard_timeout, "shard_timeout", SHARD_TIMEOUT_S, 0.001)?;
        let start_margin = seconds(&f.start_margin, "start_margin", START_MARGIN_S, 0.0)?;
        if f.clients.get_ref().is_empty() || f.clients.get_ref().contains(&0) {
            return Err(at(
                f.clients.span(),
                "clients must list client counts of at least 1, e.g. [1, 4, 16]".into(),
            ));
        }
        let name = f.name.get_ref().trim().to_string();
        if name.is_empty() {
            return Err(at(f.name.span(), "name must not be empty".into()));
        }
        let mut targets = Vec::new();
        for t in &f.targets {
            let tname = t.name.get_ref().clone();
            if tname.is_empty()
                || !tname
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
            {
                return Err(at(
                    t.name.span(),
                    format!("target name '{tname}': use letters, digits, '-', '_' and '.' only"),
                ));
            }
            if targets.iter().any(|x: &TargetSpec| x.name == tname) {
                return Err(at(
                    t.name.span(),
                    format!("target '{tname}' is named twice"),
                ));
            }
            let kind = match (&t.url, &t.server) {
                (Some(url), None) => TargetKind::External {
                    url: beside(url, path),
                },
                (None, Some(flavor)) => {
                    let fl = flavor.get_ref().to_ascii_lowercase();
                    if !matches!(fl.as_str(), "mariadb" | "mysql" | "postgres" | "postgresql") {
                        return Err(at(
                            flavor.span(),
                            format!("server = \"{fl}\": expected \"mariadb\" or \"postgres\""),
                        ));
                    }
                    let rel = |p: &PathBuf| {
                        if p.is_absolute() {
                            p.clone()
                        } else {
                            path.parent().unwrap_or(Path::new(".")).join(p)
                        }
                    };
                    TargetKind::Managed {
                        flavor: fl,
                        settings: options(&t.settings)
                            .into_iter()
                            .map(|(k, v)| (k.replace('-', "_"), v))
                            .collect(),
                        config: t.config.as_ref().map(rel),
                        basedir: t.basedir.clone(),
                        server_cpus: t.server_cpus.clone(),
                    }
                }
                (None, None) => TargetKind::Machine,
                (Some(_), Some(_)) => {
                    return Err(at(
                        t.name.span(),
                        format!(
                            "target '{tname}': give either url = \"...\" (a server or SQLite file) or server = \"mariadb\"|\"postgres\" (a managed server), not both"
                        ),
                    ));
                }
            };
            if kind == TargetKind::Machine
                && (!t.settings.is_empty() || t.config.is_some() || t.basedir.is_some())
            {
                return Err(at(
                    t.name.span(),
                    format!(
                        "target '{tname}': settings, config and basedir are a managed server's: add server = \"mariadb\"|\"postgres\""
                    ),
                ));
            }
            targets.push(TargetSpec {
                name: tname,
                kind,
                options: Vec::new(),
            });
        }
        if targets.is_empty() {
            return Err(format!(
                "{shown}: no [[target]]: name at least one server or file to measure"
            ));
        }
        let mut workloads = Vec::new();
        for w in &f.workloads {
            let wname = w.name.get_ref().clone();
            let info = workload_of(&wname, path).map_err(|e| at(w.name.span(), e))?;
            let own = info.options();
            let opts = options(&w.options);
            for (k, v) in &opts {
                check_option(k, v, &own, general, aliases).map_err(|e| {
                    at(
                        w.name.span(),
                        format!("workload '{wname}': {e} (`dbmeter help {wname}` lists them)"),
                    )
                })?;
            }
            workloads.push(WorkloadSpec {
                name: info.name().to_string(),
                options: opts,
            });
        }
        if workloads.is_empty() {
            return Err(format!("{shown}: no [[workload]]: name at least one"));
        }
        // A target without a server measures the machine: every workload
        // must be one that needs no database.
        for (t, file) in targets.iter().zip(&f.targets) {
            if t.kind != TargetKind::Machine {
                continue;
            }
            for w in &workloads {
                if dbmeter_benchmarks::registry::resolve(&w.name).is_ok_and(|b| b.needs_database())
                {
                    return Err(at(
                        file.name.span(),
                        format!(
                            "target '{}' names no server (url or server), but workload '{}' needs a database",
                            t.name, w.name
                        ),
                    ));
                }
            }
        }
        // Every workload's own options: what the campaign's and the
        // targets' options may set besides the general ones.
        let all_specs: Vec<OptSpec> = workloads
            .iter()
            .filter_map(|w| dbmeter_benchmarks::registry::resolve(&w.name).ok())
            .flat_map(|i| i.options())
            .collect();
        for (t, file) in targets.iter_mut().zip(&f.targets) {
            if let Some(o) = &file.options {
                let opts = options(o.get_ref());
                for (k, v) in &opts {
                    check_option(k, v, &all_specs, general, aliases)
                        .map_err(|e| at(o.span(), format!("target '{}': options: {e}", t.name)))?;
                }
                t.options = opts;
            }
        }
        let run_options = match &f.options {
            Some(o) => {
                let opts = options(o.get_ref());
                for (k, v) in &opts {
                    check_option(k, v, &all_specs, general, aliases)
                        .map_err(|e| at(o.span(), format!("options: {e}")))?;
                }
                opts
            }
            None => Vec::new(),
        };
        Ok(Campaign {
            name,
            store: f.store,
            duration: *f.duration.get_ref(),
            warmup: f.warmup,
            repeats,
            adaptive,
            clients: f.clients.get_ref().clone(),
            order,
            pause: f.pause,
            reset,
            reset_every_run,
            options: run_options,
            targets,
            workloads,
            hooks: f.hooks,
            shards: f.shards.map(|n| *n.get_ref()),
            shard_timeout,
            start_margin,
            dir: path
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| PathBuf::from(".")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A campaign file with two targets and one workload.
    const GOOD: &str = include_str!("../tests/fixtures/good.toml");

    #[test]
    fn reads_a_good_file() {
        let c = Campaign::parse(GOOD, Path::new("c.toml"), &[], &[]).unwrap();
        assert_eq!(c.clients, vec![1, 4, 16]);
        assert_eq!(c.order, Order::Interleaved);
        assert_eq!(c.targets.len(), 2);
        assert_eq!(
            c.workloads[0].options,
            vec![
                ("table-size".into(), "10000".into()),
                ("tables".into(), "2".into())
            ]
        );
    }

    #[test]
    fn names_the_line_of_a_mistake() {
        let bad = GOOD.replacen(
            "[[workload]]\nname = \"",
            "[[workload]]\nname = \"no_such_",
            1,
        );
        let e = Campaign::parse(&bad, Path::new("c.toml"), &[], &[]).unwrap_err();
        assert!(e.starts_with("c.toml, line 18:"), "{e}");
        let bad = GOOD.replace("warmup = 10", "warmup = 10\nwarmpu = 3");
        let e = Campaign::parse(&bad, Path::new("c.toml"), &[], &[]).unwrap_err();
        assert!(e.contains("line 5"), "{e}");
        assert!(e.contains("warmpu"), "{e}");
        let bad = GOOD.replace("clients = [1, 4, 16]", "clients = [1, 0]");
        let e = Campaign::parse(&bad, Path::new("c.toml"), &[], &[]).unwrap_err();
        assert!(e.contains("line 6"), "{e}");
        for (from, to) in [
            ("duration = 60", "duration = 1e300"),
            ("duration = 60", "duration = 1e-300"),
            ("warmup = 10", "warmup = 1e300"),
        ] {
            let e = error_for(from, to);
            assert!(e.starts_with("c.toml"), "{e}");
            assert!(e.contains("a year"), "{e}");
        }
    }

    /// The error for `from` replaced by `to` in the good file.
    fn error_for(from: &str, to: &str) -> String {
        assert!(GOOD.contains(from), "{from}");
        let bad = GOOD.replacen(from, to, 1);
        Campaign::parse(&bad, Path::new("c.toml"), &[], &[]).unwrap_err()
    }

    #[test]
    fn type_errors_name_the_key_and_the_type_in_words() {
        for (from, to, want) in [
            (
                "duration = 60",
                "duration = \"60\"",
                "c.toml, line 3: duration: expected a number of seconds, found the string \"60\"",
            ),
            (
                "clients = [1, 4, 16]",
                "clients = 4",
                "c.toml, line 6: clients: expected a list of whole numbers, e.g. [1, 8, 32], found the whole number 4",
            ),
            (
                "clients = [1, 4, 16]",
                "clients = [1, \"x\"]",
                "c.toml, line 6: clients: expected a list of whole numbers, e.g. [1, 8, 32], found the string \"x\"",
            ),
            (
                "repeats = 3",
                "repeats = 1.5",
                "c.toml, line 5: repeats: expected a whole number, 1 or more, or \"auto\", found the number 1.5",
            ),
        ] {
            let e = error_for(from, to);
            assert_eq!(e, want);
        }
        let e = error_for("url = \"", "url = 5 #\"");
        assert!(
            e.contains(
                ": target.url: expected a string (in double quotes), found the whole number 5"
            ),
            "{e}"
        );
    }

    #[test]
    fn adaptive_repeats_and_their_mistakes() {
        let head = "name = \"t\"\nduration = 1\nclients = [1]\n";
        let tail =
            "[[target]]\nname = \"a\"\nurl = \"sqlite:a.sqlite\"\n[[workload]]\nname = \"noop\"\n";
        let parse = |mid: &str| {
            Campaign::parse(
                &format!("{head}{mid}\n{tail}"),
                Path::new("c.toml"),
                &[],
                &[],
            )
        };
        let c = parse("repeats = \"auto\"").unwrap();
        assert_eq!(
            c.adaptive,
            Some(Adaptive {
                ci_width: 0.05,
                min: 4,
                max: 10
            })
        );
        assert_eq!(c.repeats, 10);
        let c = parse("repeats = \"auto\"\nci_width = \"2.5%\"\nmin_repeats = 3\nmax_repeats = 7")
            .unwrap();
        assert_eq!(c.adaptive.map(|a| (a.min, a.max)), Some((3, 7)));
        assert!((c.adaptive.unwrap().ci_width - 0.025).abs() < 1e-12);
        assert_eq!(
            parse("repeats = \"auto\"\nci_width = 3")
                .unwrap()
                .adaptive
                .unwrap()
                .ci_width,
            0.03
        );
        assert_eq!(parse("repeats = 3").unwrap().adaptive, None);
        for (mid, wants) in [
            (
                "repeats = \"often\"",
                "line 4: repeats: expected a whole number, 1 or more, or \"auto\", found the string \"often\"",
            ),
            ("repeats = 0", "line 4: repeats must be at least 1"),
            (
                "repeats = 3\nci_width = \"5%\"",
                "line 5: ci_width, min_repeats and max_repeats go with repeats = \"auto\"",
            ),
            (
                "repeats = \"auto\"\nci_width = \"5\"",
                "line 5: ci_width = \"5\": expected a percentage above 0",
            ),
            (
                "repeats = \"auto\"\nci_width = 0",
                "line 5: ci_width = 0: expected a percentage above 0",
            ),
            (
                "repeats = \"auto\"\nmin_repeats = 1",
                "line 5: min_repeats = 1: a confidence interval needs at least 2 runs",
            ),
            (
                "repeats = \"auto\"\nmin_repeats = 5\nmax_repeats = 3",
                "line 6: max_repeats = 3 is below min_repeats (5)",
            ),
        ] {
            let e = parse(mid).unwrap_err();
            assert!(e.contains(wants), "{mid}: {e}");
        }
    }
}
