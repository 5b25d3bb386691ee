//! A digest as text (pt-query-digest's layout, with exact percentiles) and
//! as JSON (the `dbmeter.digest` schema of docs/digest.md).

use crate::Digest;
use crate::aggregate::{AttrStats, ClassStats, GroupBy, NumStats, QUERY_TIME};
use crate::event::format_ts;
use crate::fingerprint::{id_matches, query_id_bytes};
use crate::tables::{explainable, tables};
use serde::ser::{SerializeMap, SerializeSeq};
use serde_json::{Map, Value, json};
use std::borrow::Cow;
use std::fmt::Write as _;

/// The statistic classes are ranked by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrderFn {
    Sum,
    Min,
    Max,
    Avg,
    Count,
}

/// `--order-by ATTRIBUTE:FUNCTION`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderBy {
    pub attribute: String,
    pub func: OrderFn,
}

impl Default for OrderBy {
    fn default() -> Self {
        OrderBy {
            attribute: "Query_time".into(),
            func: OrderFn::Sum,
        }
    }
}

impl OrderBy {
    /// `Query_time:sum`, `Rows_examined:max`, `count`...
    pub fn parse(s: &str) -> Result<OrderBy, String> {
        if s.eq_ignore_ascii_case("count") || s.eq_ignore_ascii_case("calls") {
            return Ok(OrderBy {
                attribute: "Query_time".into(),
                func: OrderFn::Count,
            });
        }
        let (a, f) = s.split_once(':').unwrap_or((s, "sum"));
        let func = match f.to_ascii_lowercase().as_str() {
            "sum" => OrderFn::Sum,
            "min" => OrderFn::Min,
            "max" => OrderFn::Max,
            "avg" => OrderFn::Avg,
            "cnt" | "count" => OrderFn::Count,
            other => {
                return Err(format!(
                    "--order-by={s}: '{other}' is not one of sum, min, max, avg, cnt"
                ));
            }
        };
        if a.is_empty() || !a.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(format!(
                "--order-by={s}: expected ATTRIBUTE:FUNCTION, e.g. Query_time:sum"
            ));
        }
        Ok(OrderBy {
            attribute: a.to_string(),
            func,
        })
    }

    pub fn text(&self) -> String {
        let f = match self.func {
            OrderFn::Sum => "sum",
            OrderFn::Min => "min",
            OrderFn::Max => "max",
            OrderFn::Avg => "avg",
            OrderFn::Count => "cnt",
        };
        format!("{}:{f}", self.attribute)
    }
}

/// What goes into a report.
#[derive(Debug, Clone, Default)]
pub struct ReportOptions {
    pub order_by: OrderBy,
    /// Classes shown (0: all).
    pub limit: usize,
    /// Only the classes with these query IDs (32 or 16 hex digits).
    pub ids: Vec<String>,
    /// Shown as the tool's version.
    pub version: String,
}

/// A class as reported.
pub struct Ranked<'a> {
    pub rank: usize,
    /// The class's key as the aggregate holds it.
    pub raw: &'a [u8],
    /// Whether the key is a fingerprint (which has a query ID).
    pub fingerprint: bool,
    pub stats: &'a ClassStats,
}

impl Ranked<'_> {
    /// The fingerprint, or the database, user, host or table.
    pub fn key(&self) -> String {
        String::from_utf8_lossy(self.raw).into_owned()
    }

    /// The query ID (32 hex digits) of a fingerprint.
    pub fn id(&self) -> Option<String> {
        self.fingerprint.then(|| query_id_bytes(self.raw))
    }
}

fn sort_value(c: &ClassStats, attr: Option<usize>, f: OrderFn) -> f64 {
    if f == OrderFn::Count {
        return c.count as f64;
    }
    let Some((count, sum, min, max)) = attr.and_then(|a| c.num_summary(a)) else {
        return 0.0;
    };
    match f {
        OrderFn::Sum => sum,
        OrderFn::Min => min,
        OrderFn::Max => max,
        OrderFn::Avg => {
            if count == 0 {
                0.0
            } else {
                sum / count as f64
            }
        }
        OrderFn::Count => count as f64,
    }
}

/// The classes in rank order, selected and limited.
pub fn ranked<'a>(d: &'a Digest, o: &ReportOptions) -> Vec<Ranked<'a>> {
    let agg = &d.aggregate;
    let attr = agg.id(&o.order_by.attribute);
    let fp = agg.group_by == GroupBy::Fingerprint;
    // Keys and IDs are made for the classes shown only (a log may have
    // hundreds of thousands).
    let mut v: Vec<(f64, &'a [u8], &'a ClassStats)> = agg
        .classes
        .iter()
        .map(|(k, c)| (sort_value(c, attr, o.order_by.func), &**k, &**c))
        .collect();
    v.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then_with(|| b.2.count.cmp(&a.2.count))
            .then_with(|| a.1.cmp(b.1))
    });
    let mut out = Vec::new();
    for (i, (_, k, c)) in v.into_iter().enumerate() {
        if o.limit > 0 && out.len() >= o.limit {
            break;
        }
        let wanted = o.ids.is_empty()
            || fp && {
                let id = query_id_bytes(k);
                o.ids.iter().any(|g| id_matches(g, &id))
            };
        if !wanted {
            continue;
        }
        out.push(Ranked {
            rank: i + 1,
            raw: k,
            fingerprint: fp,
            stats: c,
        });
    }
    out
}

fn is_time(name: &str) -> bool {
    name.ends_with("_time") || name.ends_with("_wait") || name == "Query_time"
}

fn is_bytes(name: &str) -> bool {
    name == "Query_length" || name.to_ascii_lowercase().contains("bytes")
}

/// pt-query-digest's attribute names: Exec time, Lock time, Query size,
/// the rest with spaces, in 12 characters.
fn label(name: &str) -> String {
    // pt-query-digest's labels: `_` as spaces, InnoDB's without their
    // prefix, a few names of its own, 12 characters at most.
    let spaced = name.replace('_', " ");
    let l = match spaced.strip_prefix("InnoDB ") {
        Some("trx id") => "InnoDB trxID".to_string(),
        Some(rest) => rest.to_string(),
        None => match spaced.as_str() {
            "Query time" => "Exec time".into(),
            "Query length" => "Query size".into(),
            "Error no" => "Errors".into(),
            "Tmp disk tables" => "Tmp disk tbl".into(),
            "Tmp table sizes" => "Tmp tbl size".into(),
            _ => spaced,
        },
    };
    l.chars().take(12).collect()
}

pub fn time_text(s: f64) -> String {
    if s == 0.0 {
        "0".into()
    } else if s < 0.001 {
        format!("{:.0}us", s * 1e6)
    } else if s < 1.0 {
        format!("{:.0}ms", s * 1e3)
    } else {
        format!("{:.0}s", s)
    }
}

fn bytes_text(v: f64) -> String {
    const U: [&str; 5] = ["", "k", "M", "G", "T"];
    let mut v = v;
    let mut i = 0;
    while v >= 1024.0 && i < U.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        if v.fract() == 0.0 {
            format!("{v:.0}")
        } else {
            format!("{v:.2}")
        }
    } else {
        format!("{v:.2}{}", U[i])
    }
}

fn count_text(v: f64) -> String {
    const U: [&str; 5] = ["", "k", "M", "G", "T"];
    let mut v = v;
    let mut i = 0;
    while v >= 1000.0 && i < U.len() - 1 {
        v /= 1000.0;
        i += 1;
    }
    if i == 0 {
        if v.fract() == 0.0 {
            format!("{v:.0}")
        } else {
            format!("{v:.2}")
        }
    } else {
        format!("{v:.2}{}", U[i])
    }
}

fn value_text(name: &str, v: f64) -> String {
    if is_time(name) {
        time_text(v)
    } else if is_bytes(name) {
        bytes_text(v)
    } else {
        count_text(v)
    }
}

/// The attributes to show, in pt-query-digest's order: the times and rows
/// first, then the rest by name.
fn attribute_order(d: &Digest) -> Vec<(usize, String)> {
    // pt-query-digest's order: these first, in this order (`bytes` is its
    // name for the statement's length, our Query_length), then the others
    // by name; InnoDB's (Percona's `InnoDB_*`) after all of them, in a
    // section of their own.
    const FIRST: [&str; 14] = [
        "Query_time",
        "Exec_orig_time",
        "Transmit_time",
        "Lock_time",
        "Rows_sent",
        "Rows_examined",
        "Rows_affected",
        "Rows_read",
        "Bytes_sent",
        "Merge_passes",
        "Tmp_tables",
        "Tmp_disk_tables",
        "Tmp_table_sizes",
        "Query_length",
    ];
    let mut out: Vec<(usize, String)> = d
        .aggregate
        .names
        .iter()
        .enumerate()
        .map(|(i, n)| (i, String::from_utf8_lossy(n).into_owned()))
        .collect();
    out.sort_by_cached_key(|(_, n)| {
        let innodb = is_innodb(n);
        let rank = FIRST.iter().position(|f| f == n).unwrap_or(FIRST.len());
        // InnoDB's by name whatever the case, the others as they are.
        let by_name = if innodb { n.to_uppercase() } else { n.clone() };
        (innodb, if innodb { FIRST.len() } else { rank }, by_name)
    });
    out
}

/// Percona Server's InnoDB attributes (`InnoDB_IO_r_ops`, ...), which
/// pt-query-digest reports under `# InnoDB:`.
fn is_innodb(name: &str) -> bool {
    name.starts_with("InnoDB_")
}

/// Writes `# InnoDB:` before the first InnoDB attribute of a table
/// (`started`: whether it was written already).
fn innodb_heading(s: &mut String, name: &str, started: &mut bool) {
    if is_innodb(name) && !std::mem::replace(started, true) {
        let _ = writeln!(s, "# InnoDB:");
    }
}

fn span_s(c: &ClassStats) -> Option<f64> {
    match (c.ts_min, c.ts_max) {
        (Some(a), Some(b)) if b > a => Some((b - a) as f64 / 1e6),
        _ => None,
    }
}

fn qps(c: &ClassStats) -> f64 {
    span_s(c).map_or(0.0, |s| c.count as f64 / s)
}

fn concurrency(c: &ClassStats) -> f64 {
    let t = c.num_summary(QUERY_TIME).map_or(0.0, |n| n.1);
    span_s(c).map_or(0.0, |s| t / s)
}

fn time_range(c: &ClassStats) -> String {
    match (c.ts_min, c.ts_max) {
        (Some(a), Some(b)) if a == b => format!("all events occurred at {}", format_ts(a)),
        (Some(a), Some(b)) => format!(
            "{} to {} ({})",
            format_ts(a),
            format_ts(b),
            duration_text((b - a) as f64 / 1e6)
        ),
        _ => "unknown (no times in the log)".into(),
    }
}

fn duration_text(s: f64) -> String {
    if s < 60.0 {
        format!("{s:.0}s")
    } else if s < 3600.0 {
        format!("{:.0}m{:02.0}s", (s / 60.0).floor(), s % 60.0)
    } else {
        format!(
            "{:.0}h{:02.0}m",
            (s / 3600.0).floor(),
            (s % 3600.0 / 60.0).floor()
        )
    }
}

/// `SELECT t1 t2`: the statement's first word(s) and its tables.
pub fn item(key: &str, sample: Option<&str>) -> String {
    let q = sample.unwrap_or(key);
    let lead: String = q
        .split_whitespace()
        .take(
            if q.trim_start().to_ascii_lowercase().starts_with("create")
                || q.trim_start().to_ascii_lowercase().starts_with("drop")
                || q.trim_start().to_ascii_lowercase().starts_with("alter")
            {
                2
            } else {
                1
            },
        )
        .collect::<Vec<_>>()
        .join(" ")
        .to_ascii_uppercase();
    let lead: String = lead
        .chars()
        .take_while(|c| c.is_ascii_alphabetic() || *c == ' ' || *c == '_')
        .collect();
    let tabs: Vec<String> = tables(q).iter().map(|t| t.replace('`', "")).collect();
    let mut s = lead.trim().to_string();
    for t in tabs.iter().take(3) {
        s.push(' ');
        s.push_str(t);
    }
    if s.is_empty() {
        s = key.chars().take(40).collect();
    }
    s
}

fn pct(part: f64, total: f64) -> f64 {
    if total > 0.0 {
        part / total * 100.0
    } else {
        0.0
    }
}

fn file_name(d: &Digest, i: u32) -> &str {
    d.files.get(i as usize).map_or("?", |f| f.name.as_str())
}

fn summary_line(d: &Digest, version: &str) -> String {
    let bytes: u64 = d.files.iter().map(|f| f.bytes).sum();
    let secs = d.elapsed.as_secs_f64();
    format!(
        "# dbmeter {version} digest: {:.1} MB read in {:.2} s ({:.1} MB/s)",
        bytes as f64 / 1e6,
        secs,
        if secs > 0.0 {
            bytes as f64 / 1e6 / secs
        } else {
            0.0
        }
    )
}

/// The text report.
pub fn text(d: &Digest, o: &ReportOptions) -> String {
    let mut out = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = write_text(d, o, &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// Writes the text report to `w`, a class at a time.
pub fn write_text(
    d: &Digest,
    o: &ReportOptions,
    w: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let mut s = String::new();
    let agg = &d.aggregate;
    let g = &agg.global;
    let head = summary_line(d, &o.version);
    let _ = writeln!(s, "\n{head}");
    let names: Vec<String> = d
        .files
        .iter()
        .map(|f| match &f.capture {
            Some(c) => format!(
                "{} ({}, dbmeter's capture of {} {}, {} to {})",
                f.name,
                f.format.name(),
                c.server,
                c.version,
                c.started,
                c.ended
            ),
            None => format!("{} ({})", f.name, f.format.name()),
        })
        .collect();
    let _ = writeln!(s, "# Files: {}", names.join(", "));
    if d.malformed.count > 0 {
        let _ = writeln!(
            s,
            "# Malformed lines: {} (first: {} line {}: {})",
            d.malformed.count,
            d.malformed.first[0].file,
            d.malformed.first[0].line,
            d.malformed.first[0].reason
        );
    }
    if agg.events_filtered > 0 {
        let _ = writeln!(
            s,
            "# Left out by --since/--until: {} events",
            agg.events_filtered
        );
    }
    let _ = writeln!(
        s,
        "# Overall: {} total, {} unique, {:.2} QPS, {:.2}x concurrency ______________________",
        count_text(g.count as f64),
        count_text(agg.classes.len() as f64),
        qps(g),
        concurrency(g)
    );
    let _ = writeln!(s, "# Time range: {}", time_range(g));
    let order = attribute_order(d);
    let _ = writeln!(
        s,
        "# Attribute          total     min     max     avg     95%  stddev  median"
    );
    let _ = writeln!(
        s,
        "# ============     ======= ======= ======= ======= ======= ======= ======="
    );
    let mut innodb = false;
    for (i, name) in &order {
        if let Some(n) = g.num_stats(*i) {
            innodb_heading(&mut s, name, &mut innodb);
            let v = |x: f64| value_text(name, x);
            let _ = writeln!(
                s,
                "# {:<12}     {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7}",
                label(name),
                v(n.sum),
                v(n.min),
                v(n.max),
                v(n.avg()),
                v(n.quantile(0.95)),
                v(n.stddev()),
                v(n.quantile(0.5))
            );
        }
    }
    booleans(&mut s, g, &order);
    // The profile.
    let ranked = ranked(d, o);
    let total_time = g.num_stats(QUERY_TIME).map_or(0.0, |n| n.sum);
    let by = agg.group_by;
    let id_head = if by == GroupBy::Fingerprint {
        "Query ID"
    } else {
        by.name()
    };
    let _ = writeln!(s, "\n# Profile");
    let _ = writeln!(
        s,
        "# Rank {id_head:<34} {:>14} {:>8} {:>6} {:>5} Item",
        "Response time", "Calls", "R/Call", "V/M"
    );
    let _ = writeln!(
        s,
        "# ==== {} {} {} {} {} ====",
        "=".repeat(34),
        "=".repeat(14),
        "=".repeat(8),
        "=".repeat(6),
        "=".repeat(5)
    );
    for r in &ranked {
        let c = r.stats;
        let qt = c.num_stats(QUERY_TIME);
        let qt = qt.as_deref();
        let sum = qt.map_or(0.0, |n| n.sum);
        let per = qt.map_or(0.0, |n| n.avg());
        let vm = qt.map_or(0.0, vm);
        let sample = c
            .sample
            .as_ref()
            .map(|x| String::from_utf8_lossy(&x.query).into_owned());
        let key = r.key();
        let idcol = match r.id() {
            Some(id) => format!("0x{id}"),
            None => key.chars().take(34).collect(),
        };
        let _ = writeln!(
            s,
            "# {:>4} {:<34} {:>7.4} {:>5.1}% {:>8} {:>6.4} {:>5.2} {}",
            r.rank,
            idcol,
            sum,
            pct(sum, total_time),
            c.count,
            per,
            vm,
            if by == GroupBy::Fingerprint {
                item(&key, sample.as_deref())
            } else {
                String::new()
            }
        );
    }
    let shown: u64 = ranked.iter().map(|r| r.stats.count).sum();
    if o.ids.is_empty() && ranked.len() < agg.classes.len() {
        let rest_time = total_time
            - ranked
                .iter()
                .filter_map(|r| r.stats.num_stats(QUERY_TIME))
                .map(|n| n.sum)
                .sum::<f64>();
        let rest_count = g.count - shown;
        let _ = writeln!(
            s,
            "# MISC {:<34} {:>7.4} {:>5.1}% {:>8} {:>6.4} {:>5.1} <{} ITEMS>",
            "0xMISC",
            rest_time.max(0.0),
            pct(rest_time.max(0.0), total_time),
            rest_count,
            if rest_count > 0 {
                rest_time.max(0.0) / rest_count as f64
            } else {
                0.0
            },
            0.0,
            agg.classes.len() - ranked.len()
        );
    }
    w.write_all(s.as_bytes())?;
    for r in &ranked {
        s.clear();
        class_text(&mut s, d, r, g, &order);
        w.write_all(s.as_bytes())?;
    }
    Ok(())
}

/// Variance-to-mean ratio of a class's times.
pub fn vm(n: &NumStats) -> f64 {
    let m = n.avg();
    if m > 0.0 {
        n.stddev() * n.stddev() / m
    } else {
        0.0
    }
}

fn booleans(s: &mut String, c: &ClassStats, order: &[(usize, String)]) {
    let bools: Vec<(&String, Cow<'_, AttrStats>)> = order
        .iter()
        .filter_map(|(i, n)| c.attr_stats(*i).map(|a| (n, a)))
        // As pt-query-digest: only the flags that were ever Yes.
        .filter(|(_, a)| a.num.is_none() && a.yes > 0)
        .collect();
    if bools.is_empty() {
        return;
    }
    let _ = writeln!(s, "# Boolean:");
    for (n, a) in bools {
        let t = (a.yes + a.no) as f64;
        let _ = writeln!(
            s,
            "# {:<12} {:>3.0}% yes, {:>3.0}% no",
            label(n),
            a.yes as f64 / t * 100.0,
            a.no as f64 / t * 100.0
        );
    }
}

fn strings_line(s: &mut String, what: &str, v: &crate::aggregate::StrCounts, total: u64) {
    let sorted = v.sorted();
    if sorted.is_empty() {
        return;
    }
    if sorted.len() == 1 && v.other() == 0 {
        let _ = writeln!(s, "# {what:<12} {}", sorted[0].0);
        return;
    }
    let parts: Vec<String> = sorted
        .iter()
        .take(5)
        .map(|(k, n)| format!("{k} ({}/{:.0}%)", n, pct(*n as f64, total as f64)))
        .collect();
    let more = sorted.len().saturating_sub(5);
    let _ = writeln!(
        s,
        "# {what:<12} {}{}",
        parts.join(", "),
        if more > 0 || v.other() > 0 {
            format!("... {} more", more as u64 + v.other().min(1))
        } else {
            String::new()
        }
    );
}

/// One class's part of the text report (its header, attributes,
/// distribution, tables and worst sample).
pub fn class_block(d: &Digest, r: &Ranked<'_>) -> String {
    let mut s = String::new();
    class_text(&mut s, d, r, &d.aggregate.global, &attribute_order(d));
    s
}

fn class_text(
    s: &mut String,
    d: &Digest,
    r: &Ranked<'_>,
    g: &ClassStats,
    order: &[(usize, String)],
) {
    let c = r.stats;
    let _ = writeln!(s);
    let at = c.sample.as_ref().map_or(String::new(), |x| {
        let f = file_name(d, x.file);
        format!(" at byte {} ({f} line {})", x.offset, x.line)
    });
    match r.id() {
        Some(id) => {
            let _ = writeln!(
                s,
                "# Query {}: {:.2} QPS, {:.2}x concurrency, ID 0x{id}{at}",
                r.rank,
                qps(c),
                concurrency(c)
            );
        }
        None => {
            let _ = writeln!(
                s,
                "# Item {}: {:.2} QPS, {:.2}x concurrency, {} {}{at}",
                r.rank,
                qps(c),
                concurrency(c),
                d.aggregate.group_by.name(),
                r.key()
            );
        }
    }
    if let Some(n) = c.num_stats(QUERY_TIME) {
        let _ = writeln!(s, "# Scores: V/M = {:.2}", vm(&n));
    }
    let _ = writeln!(s, "# Time range: {}", time_range(c));
    let _ = writeln!(
        s,
        "# Attribute    pct   total     min     max     avg     95%     99%  stddev  median"
    );
    let _ = writeln!(
        s,
        "# ============ === ======= ======= ======= ======= ======= ======= ======= ======="
    );
    let _ = writeln!(
        s,
        "# {:<12} {:>3.0} {:>7}",
        "Count",
        pct(c.count as f64, g.count as f64),
        c.count
    );
    let mut innodb = false;
    for (i, name) in order {
        let Some(n) = c.num_stats(*i) else {
            continue;
        };
        innodb_heading(s, name, &mut innodb);
        let gs = g.num_stats(*i).map_or(0.0, |x| x.sum);
        let v = |x: f64| value_text(name, x);
        let _ = writeln!(
            s,
            "# {:<12} {:>3.0} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7}",
            label(name),
            pct(n.sum, gs),
            v(n.sum),
            v(n.min),
            v(n.max),
            v(n.avg()),
            v(n.quantile(0.95)),
            v(n.quantile(0.99)),
            v(n.stddev()),
            v(n.quantile(0.5))
        );
    }
    booleans(s, c, order);
    let _ = writeln!(s, "# String:");
    strings_line(s, "Databases", &c.databases, c.count);
    strings_line(s, "Hosts", &c.hosts, c.count);
    strings_line(s, "Users", &c.users, c.count);
    if let Some(n) = c.num_stats(QUERY_TIME) {
        let _ = writeln!(s, "# Query_time distribution");
        let dec = n.hist.decades();
        let top = dec.iter().copied().max().unwrap_or(0).max(1);
        for (i, lab) in ["1us", "10us", "100us", "1ms", "10ms", "100ms", "1s", "10s+"]
            .iter()
            .enumerate()
        {
            let bar = if dec[i] == 0 {
                0
            } else {
                ((dec[i] as f64 / top as f64 * 64.0).ceil() as usize).max(1)
            };
            let line = format!("# {lab:>5}  {}", "#".repeat(bar));
            let _ = writeln!(s, "{}", line.trim_end());
        }
    }
    let Some(sample) = &c.sample else { return };
    let q = String::from_utf8_lossy(&sample.query).into_owned();
    let db = sample
        .db
        .as_ref()
        .map(|x| String::from_utf8_lossy(x).into_owned());
    let tabs = tables(&q);
    if !tabs.is_empty() {
        let _ = writeln!(s, "# Tables");
        for t in &tabs {
            let full = match (&db, t.contains("`.`")) {
                (Some(db), false) => format!("`{db}`.{t}"),
                _ => t.clone(),
            };
            let (tdb, tname) = match full.split_once("`.`") {
                Some((a, b)) => (
                    Some(a.trim_start_matches('`').to_string()),
                    b.trim_end_matches('`').to_string(),
                ),
                None => (None, full.trim_matches('`').to_string()),
            };
            match tdb {
                Some(tdb) => {
                    let _ = writeln!(s, "#    SHOW TABLE STATUS FROM `{tdb}` LIKE '{tname}'\\G");
                }
                None => {
                    let _ = writeln!(s, "#    SHOW TABLE STATUS LIKE '{tname}'\\G");
                }
            }
            let _ = writeln!(s, "#    SHOW CREATE TABLE {full}\\G");
        }
    }
    let when = sample
        .ts
        .map_or(String::new(), |t| format!(" at {}", format_ts(t)));
    let took = sample
        .query_time
        .map_or(String::new(), |t| format!(", {}", time_text(t)));
    let _ = writeln!(
        s,
        "# Worst sample{when}{took} ({} line {})",
        file_name(d, sample.file),
        sample.line
    );
    if let Some(db) = &db {
        let _ = writeln!(s, "USE `{db}`;");
    }
    let params = sample
        .params
        .as_ref()
        .map(|p| String::from_utf8_lossy(p).into_owned());
    if let Some(p) = &params {
        let _ = writeln!(s, "# Parameters: {p}");
    }
    if explainable(&q) && !q.trim_end().ends_with("\\G") {
        let _ = writeln!(s, "# EXPLAIN");
        let _ = writeln!(s, "EXPLAIN {}\\G", explain_statement(&q, params.as_deref()));
    } else {
        let _ = writeln!(s, "{}\\G", q.trim_end());
    }
}

fn num_json(n: &NumStats) -> Value {
    json!({
        "count": n.count,
        "sum": n.sum,
        "min": n.min,
        "max": n.max,
        "avg": n.avg(),
        "stddev": n.stddev(),
        "median": n.quantile(0.5),
        "p95": n.quantile(0.95),
        "p99": n.quantile(0.99),
    })
}

fn attrs_json(c: &ClassStats, order: &[(usize, String)]) -> Value {
    let mut m = Map::new();
    for (i, name) in order {
        let Some(a) = c.attr_stats(*i) else { continue };
        let mut o = Map::new();
        if let Some(n) = &a.num {
            o.insert("numbers".into(), num_json(n));
        }
        if a.yes + a.no > 0 {
            o.insert("yes".into(), a.yes.into());
            o.insert("no".into(), a.no.into());
        }
        if let Some(w) = &a.words {
            o.insert("values".into(), counts_json(w));
        }
        m.insert(name.clone(), Value::Object(o));
    }
    Value::Object(m)
}

fn counts_json(v: &crate::aggregate::StrCounts) -> Value {
    let mut m = Map::new();
    for (k, n) in v.sorted() {
        m.insert(k, n.into());
    }
    if v.other() > 0 {
        m.insert("(other)".into(), v.other().into());
    }
    Value::Object(m)
}

/// Events and query time per time bucket, at the overall buckets' width:
/// `{"width_s": W, "buckets": [[start (Unix seconds), events, Query_time sum], ...]}`.
fn series_json(c: &ClassStats, shift: u8) -> Value {
    let mut s = c.series.clone();
    s.coarsen_to(shift);
    let w = s.width_s();
    json!({
        "width_s": w,
        "buckets": s
            .buckets
            .iter()
            .map(|&(i, n, t)| json!([i * w, n, t]))
            .collect::<Vec<_>>(),
    })
}

fn ts_json(t: Option<i64>) -> Value {
    t.map_or(Value::Null, |t| Value::String(format_ts(t)))
}

/// One class's JSON object.
fn class_json(d: &Digest, r: &Ranked<'_>, order: &[(usize, String)], total_time: f64) -> Value {
    let c = r.stats;
    let sample = c.sample.as_ref().map(|x| {
        let q = String::from_utf8_lossy(&x.query).into_owned();
        let tabs = tables(&q);
        let db = x
            .db
            .as_ref()
            .map(|b| String::from_utf8_lossy(b).into_owned());
        let params = x
            .params
            .as_ref()
            .map(|p| String::from_utf8_lossy(p).into_owned());
        json!({
            "query": q,
            "query_time": x.query_time,
            "ts": ts_json(x.ts),
            "db": db,
            "file": file_name(d, x.file),
            "line": x.line,
            "byte": x.offset,
            "params": params,
            "explain": explainable(&q).then(|| format!("EXPLAIN {}", explain_statement(&q, params.as_deref()))),
            "show_create_table": tabs.iter().map(|t| match (&db, t.contains("`.`")) {
                (Some(db), false) => format!("SHOW CREATE TABLE `{db}`.{t}"),
                _ => format!("SHOW CREATE TABLE {t}"),
            }).collect::<Vec<_>>(),
        })
    });
    let qt = c.num_stats(QUERY_TIME);
    let qt = qt.as_deref();
    json!({
        "rank": r.rank,
        "id": r.id(),
        "key": r.key(),
        "query_count": c.count,
        "ts_min": ts_json(c.ts_min),
        "ts_max": ts_json(c.ts_max),
        "qps": qps(c),
        "concurrency": concurrency(c),
        "response_time_pct": pct(qt.map_or(0.0, |n| n.sum), total_time),
        "vm": qt.map_or(0.0, vm),
        "attributes": attrs_json(c, order),
        "query_time_histogram": qt.map(|n| n.hist.decades().to_vec()),
        "databases": counts_json(&c.databases),
        "users": counts_json(&c.users),
        "hosts": counts_json(&c.hosts),
        "sample": sample,
        "time_buckets": series_json(c, d.aggregate.global.series.shift),
    })
}

/// The document without its classes.
fn json_head(d: &Digest, o: &ReportOptions, order: &[(usize, String)]) -> Map<String, Value> {
    let agg = &d.aggregate;
    let g = &agg.global;
    let files: Vec<Value> = d
        .files
        .iter()
        .map(|f| {
            let mut v = json!({
                "name": f.name,
                "format": f.format,
                "compression": f.compression,
                "bytes": f.bytes,
                "size": f.size,
            });
            if let Some(c) = &f.capture {
                v["capture"] = json!(c);
            }
            v
        })
        .collect();
    let head = json!({
        "schema": "dbmeter.digest",
        "schema_version": 1,
        "dbmeter": o.version,
        "group_by": agg.group_by.name(),
        "order_by": o.order_by.text(),
        "files": files,
        "elapsed_s": d.elapsed.as_secs_f64(),
        "malformed": {
            "count": d.malformed.count,
            "first": d.malformed.first,
        },
        "global": {
            "query_count": g.count,
            "unique_query_count": agg.classes.len(),
            "events_read": agg.events_read,
            "events_filtered": agg.events_filtered,
            "ts_min": ts_json(g.ts_min),
            "ts_max": ts_json(g.ts_max),
            "qps": qps(g),
            "concurrency": concurrency(g),
            "attributes": attrs_json(g, order),
            "query_time_histogram": g.num_stats(QUERY_TIME).map(|n| n.hist.decades().to_vec()),
            "time_buckets": series_json(g, g.series.shift),
        },
    });
    match head {
        Value::Object(m) => m,
        _ => unreachable!("an object literal"),
    }
}

/// The JSON document (schema `dbmeter.digest`, version 1; docs/digest.md).
pub fn json(d: &Digest, o: &ReportOptions) -> Value {
    let order = attribute_order(d);
    let total = total_time(d);
    let mut m = json_head(d, o, &order);
    let classes: Vec<Value> = ranked(d, o)
        .iter()
        .map(|r| class_json(d, r, &order, total))
        .collect();
    m.insert("classes".into(), Value::Array(classes));
    Value::Object(m)
}

/// The document's fields in order, its classes made one at a time as they
/// are written (a log of many classes is never held as one JSON value).
struct JsonDoc<'a> {
    d: &'a Digest,
    head: Map<String, Value>,
    ranked: Vec<Ranked<'a>>,
    order: Vec<(usize, String)>,
    total: f64,
}

struct JsonClasses<'a, 'b>(&'b JsonDoc<'a>);

impl serde::Serialize for JsonClasses<'_, '_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let doc = self.0;
        let mut seq = s.serialize_seq(Some(doc.ranked.len()))?;
        for r in &doc.ranked {
            seq.serialize_element(&class_json(doc.d, r, &doc.order, doc.total))?;
        }
        seq.end()
    }
}

impl serde::Serialize for JsonDoc<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // In the order of the keys, as a JSON value's map writes them.
        let mut m = s.serialize_map(Some(self.head.len() + 1))?;
        let mut classes_done = false;
        for (k, v) in &self.head {
            if !classes_done && k.as_str() > "classes" {
                m.serialize_entry("classes", &JsonClasses(self))?;
                classes_done = true;
            }
            m.serialize_entry(k, v)?;
        }
        if !classes_done {
            m.serialize_entry("classes", &JsonClasses(self))?;
        }
        m.end()
    }
}

/// Writes the JSON document (pretty, as `json` would be printed) to `w`.
pub fn write_json(
    d: &Digest,
    o: &ReportOptions,
    w: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let order = attribute_order(d);
    let doc = JsonDoc {
        d,
        head: json_head(d, o, &order),
        ranked: ranked(d, o),
        order,
        total: total_time(d),
    };
    serde_json::to_writer_pretty(&mut *w, &doc).map_err(std::io::Error::other)?;
    w.write_all(b"\n")
}

/// The total Query_time of every event.
pub fn total_time(d: &Digest) -> f64 {
    d.aggregate
        .global
        .num_summary(QUERY_TIME)
        .map_or(0.0, |n| n.1)
}

/// The statement with its `$N` placeholders replaced by the logged values
/// (outside quotes and comments), for a ready EXPLAIN; as it is without them.
pub fn explain_statement(q: &str, params: Option<&str>) -> String {
    let q = q.trim_end();
    params
        .and_then(crate::params::parse_params)
        .and_then(|v| crate::params::fill(q, &v, true))
        .unwrap_or_else(|| q.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_by_and_units() {
        assert_eq!(
            OrderBy::parse("Query_time:sum").unwrap(),
            OrderBy::default()
        );
        assert_eq!(
            OrderBy::parse("Rows_examined:max").unwrap().func,
            OrderFn::Max
        );
        assert_eq!(OrderBy::parse("count").unwrap().func, OrderFn::Count);
        assert!(
            OrderBy::parse("Query_time:p42")
                .unwrap_err()
                .contains("not one of")
        );
        assert_eq!(time_text(0.000026), "26us");
        assert_eq!(time_text(0.0503), "50ms");
        assert_eq!(time_text(3.2), "3s");
        assert_eq!(bytes_text(2048.0), "2.00k");
        assert_eq!(count_text(0.625), "0.62");
        assert_eq!(label("Rows_examined"), "Rows examine");
        assert_eq!(
            item("select ? from t", Some("SELECT c FROM sbtest1 WHERE id=1")),
            "SELECT sbtest1"
        );
        assert_eq!(
            item("create table a", Some("create table a(id int)")),
            "CREATE TABLE a"
        );
    }

    #[test]
    fn parameters_go_into_the_explained_statement() {
        let p = "$1 = '5', $2 = NULL, $10 = 'a,''b'''";
        let v = crate::params::parse_params(p).unwrap();
        assert_eq!(v[0].as_deref(), Some("'5'"));
        assert_eq!(v[1].as_deref(), Some("NULL"));
        assert_eq!(v[9].as_deref(), Some("'a,''b'''"));
        let q =
            "SELECT '$1', \"$2\" FROM t WHERE a = $1 AND b IS $2 AND c = $10 -- $1\n AND d = $3";
        assert_eq!(
            explain_statement(q, Some(p)),
            "SELECT '$1', \"$2\" FROM t WHERE a = '5' AND b IS NULL AND c = 'a,''b''' -- $1\n AND d = $3"
        );
        assert_eq!(explain_statement("SELECT $1 ", None), "SELECT $1");
    }
}
