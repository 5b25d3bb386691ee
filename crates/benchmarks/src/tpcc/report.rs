//! tpcc's section of the run document (under the key `tpcc`) and its text:
//! NOPM, TPM, the transactions by type, the achieved mix and the
//! response-time limits; and tpcc's interval line.

use dbmeter_result::Interval;
use dbmeter_stats::LatencySummary;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// The percentiles reported per transaction type.
pub const PERCENTILES: [f64; 4] = [50.0, 90.0, 95.0, 99.0];

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TpccResult {
    /// Warehouses the run covered.
    pub warehouses: u64,
    /// `client` (client-side SQL with prepared statements) or `procedures`.
    pub mode: String,
    /// New orders over the measured time: the change of sum(D_NEXT_O_ID).
    pub new_orders: i64,
    /// New orders per minute.
    pub nopm: f64,
    /// Transactions per minute: from the server's counters when it has
    /// them (`tpm_source`), else the client's count of transactions.
    pub tpm: f64,
    /// `Com_commit+Com_rollback`, `xact_commit+xact_rollback` or `client`.
    pub tpm_source: String,
    /// Commits + rollbacks the server counted over the measured time.
    pub server_transactions: Option<u64>,
    /// Transactions per minute as the client counted them.
    pub client_tpm: f64,
    /// With the specification's keying and think times: NOPM / (12.86 x
    /// warehouses), in percent.
    pub efficiency_pct: Option<f64>,
    pub transactions: Vec<TpccTransaction>,
    /// True when every type's share meets its minimum.
    pub mix_ok: bool,
    /// True when every type's 90th percentile is within its limit.
    pub response_times_ok: bool,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TpccTransaction {
    /// `new_order`, `payment`, `order_status`, `delivery`, `stock_level`.
    pub name: String,
    /// Completed transactions (intended rollbacks included).
    pub count: u64,
    /// Share of all completed transactions, in percent.
    pub share_pct: f64,
    /// The specification's minimum share, in percent (0 for New-Order).
    pub min_share_pct: f64,
    /// Intended rollbacks (New-Order's unused items).
    pub rollbacks: u64,
    /// Attempts retried after a deadlock, serialization failure or lock timeout.
    pub retries: u64,
    /// Response times: p50, p90, p95, p99, max.
    pub latency_ms: LatencySummary,
    /// The specification's limit of the 90th percentile.
    pub p90_limit_ms: f64,
    pub p90_ok: bool,
}

/// The section in text.
pub fn text(t: &TpccResult) -> String {
    let mut out = String::from("\nTPC-C-like results (not an audited tpmC):\n");
    let row = |out: &mut String, label: &str, v: String| {
        let _ = writeln!(out, "    {label:<37}{v}");
    };
    row(&mut out, "warehouses:", t.warehouses.to_string());
    row(
        &mut out,
        "transactions as:",
        if t.mode == "procedures" {
            "stored procedures".into()
        } else {
            "client-side SQL".into()
        },
    );
    row(
        &mut out,
        "NOPM (new orders per minute):",
        format!("{:.0} ({} new orders)", t.nopm, t.new_orders),
    );
    let source = if t.tpm_source == "client" {
        "counted by the client".to_string()
    } else {
        format!("server {}", t.tpm_source)
    };
    row(
        &mut out,
        "TPM (transactions per minute):",
        format!("{:.0} ({source})", t.tpm),
    );
    if t.tpm_source != "client" {
        row(
            &mut out,
            "TPM counted by the client:",
            format!("{:.0}", t.client_tpm),
        );
    }
    if let Some(e) = t.efficiency_pct {
        row(
            &mut out,
            "efficiency:",
            format!("{e:.1}% of 12.86 NOPM per warehouse"),
        );
    }
    let _ = writeln!(
        out,
        "\n    {:<13}{:>9}{:>8}{:>8}{:>9}{:>9}{:>9}{:>9}{:>9}{:>10}{:>12}",
        "transaction",
        "count",
        "mix %",
        "rollbk",
        "retries",
        "p50 ms",
        "p90 ms",
        "p95 ms",
        "p99 ms",
        "max ms",
        "p90 limit"
    );
    for x in &t.transactions {
        let p = |q: f64| x.latency_ms.get(q).unwrap_or(0.0);
        let _ = writeln!(
            out,
            "    {:<13}{:>9}{:>8.2}{:>8}{:>9}{:>9.2}{:>9.2}{:>9.2}{:>9.2}{:>10.2}{:>12}",
            x.name,
            x.count,
            x.share_pct,
            x.rollbacks,
            x.retries,
            p(50.0),
            p(90.0),
            p(95.0),
            p(99.0),
            x.latency_ms.max_ms,
            format!(
                "{} {:.0} s",
                if x.p90_ok { "ok" } else { "OVER" },
                x.p90_limit_ms / 1000.0
            )
        );
    }
    let short: Vec<String> = t
        .transactions
        .iter()
        .filter(|x| x.share_pct < x.min_share_pct)
        .map(|x| format!("{} {:.2}% < {}%", x.name, x.share_pct, x.min_share_pct))
        .collect();
    let _ = writeln!(
        out,
        "\n    {:<37}{}",
        "mix (P >= 43%, OS/D/SL >= 4%):",
        if short.is_empty() {
            "ok".to_string()
        } else {
            format!("below the minimum: {}", short.join(", "))
        }
    );
    let _ = writeln!(
        out,
        "    {:<37}{}",
        "90th percentiles within limits:",
        if t.response_times_ok { "ok" } else { "no" }
    );
    out
}

/// tpcc's interval line, e.g.
/// `[ 10s ] thds: 8 tpm: 61230.0 nopm(client): 26640.0 rb/s: 0.40 lat (ms,95%): 7.98 err/s: 0.00 reconn/s: 0.00`
pub fn interval_line(i: &Interval, percentile: f64) -> String {
    let new_orders = i.events_by_kind.first().copied().unwrap_or(0);
    let committed_new_orders = new_orders.saturating_sub(i.rollbacks.unwrap_or(0));
    format!(
        "[ {} ] thds: {} tpm: {:.1} nopm(client): {:.1} rb/s: {:.2} lat (ms,{percentile}%): {:.2} err/s: {:.2} reconn/s: {:.2}{}",
        i.time_label(),
        i.threads,
        i.per_min(i.events),
        i.per_min(committed_new_orders),
        i.per_min(i.rollbacks.unwrap_or(0)) / 60.0,
        i.latency_ms.get(percentile).unwrap_or(0.0),
        i.errors_per_s,
        i.reconnects_per_s,
        i.failed_reconnects_note(),
    )
}
