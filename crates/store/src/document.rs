//! Reading the main numbers out of a run document (`dbmeter.run`, see
//! docs/json-schema.md) for the `runs` table.
//!
//! Only `schema`, `workload` and `end.reason` are required, so that the
//! short document of a run that failed before measuring anything can be
//! stored; every other column is NULL when its field is missing.

use crate::{RunSummary, StoreError};
use dbmeter_stats::LatencyHistogram;
use serde_json::Value;

pub(crate) const SCHEMA_NAME: &str = "dbmeter.run";

fn text(v: &Value, ptr: &str) -> Option<String> {
    v.pointer(ptr).and_then(Value::as_str).map(str::to_string)
}

fn int(v: &Value, ptr: &str) -> Option<i64> {
    v.pointer(ptr).and_then(Value::as_i64)
}

fn real(v: &Value, ptr: &str) -> Option<f64> {
    v.pointer(ptr).and_then(Value::as_f64)
}

/// Percentile `p` of the run's latency: from the reported percentiles when
/// `--percentile` included it, else from the HDR histogram.
fn percentile(v: &Value, p: f64) -> Option<f64> {
    let listed = v
        .pointer("/latency_ms/percentiles")
        .and_then(Value::as_array)
        .and_then(|list| {
            list.iter().find_map(|x| {
                let at = x.get("percentile")?.as_f64()?;
                ((at - p).abs() < 1e-9).then(|| x.get("ms")?.as_f64())?
            })
        });
    listed.or_else(|| {
        let h = LatencyHistogram::from_base64(v.get("latency_histogram")?.as_str()?).ok()?;
        (h.count() > 0).then(|| h.percentile(p) as f64 / 1e6)
    })
}

/// What a run document says about itself: the columns of `runs` it fills.
#[derive(Debug)]
pub(crate) struct Extracted {
    /// The document's `schema_version`.
    pub document_version: Option<i64>,
    /// The run's row as far as the document gives it (no id, store time,
    /// campaign meta or tags yet).
    pub summary: RunSummary,
}

/// Checks that `json` is a run document and reads its main numbers.
pub(crate) fn extract(json: &str) -> Result<(Value, Extracted), StoreError> {
    let v: Value = serde_json::from_str(json).map_err(|e| {
        StoreError::new(format!(
            "not a dbmeter run document: the text is not JSON ({e})"
        ))
    })?;
    if !v.is_object() {
        return Err(StoreError::new(
            "not a dbmeter run document: expected a JSON object",
        ));
    }
    match v.get("schema").and_then(Value::as_str) {
        Some(SCHEMA_NAME) => {}
        Some(other) => {
            return Err(StoreError::new(format!(
                "not a dbmeter run document: its schema is '{other}', expected '{SCHEMA_NAME}'"
            )));
        }
        None => {
            return Err(StoreError::new(format!(
                "not a dbmeter run document: it has no \"schema\": \"{SCHEMA_NAME}\" field"
            )));
        }
    }
    let Some(workload) = text(&v, "/workload").filter(|w| !w.is_empty()) else {
        return Err(StoreError::new(
            "the run document names no workload (field \"workload\")",
        ));
    };
    let Some(end_reason) = text(&v, "/end/reason").filter(|r| !r.is_empty()) else {
        return Err(StoreError::new(
            "the run document has no end reason (field \"end\": {\"reason\": ...})",
        ));
    };
    let errors = v
        .get("errors")
        .and_then(Value::as_object)
        .map(|m| m.values().filter_map(Value::as_i64).sum());
    let summary = RunSummary {
        started_at: text(&v, "/started_at"),
        workload,
        target_url: text(&v, "/target/url"),
        driver: text(&v, "/target/driver"),
        server_version: text(&v, "/target/server_version"),
        threads: int(&v, "/threads").and_then(|t| u32::try_from(t).ok()),
        end_reason,
        end_error: text(&v, "/end/error"),
        duration_s: real(&v, "/totals/duration_s"),
        events: int(&v, "/totals/events"),
        events_per_s: real(&v, "/totals/events_per_s"),
        queries: int(&v, "/totals/queries"),
        queries_per_s: real(&v, "/totals/queries_per_s"),
        latency_avg_ms: real(&v, "/latency_ms/avg_ms"),
        latency_p95_ms: percentile(&v, 95.0),
        latency_p99_ms: percentile(&v, 99.0),
        latency_max_ms: real(&v, "/latency_ms/max_ms"),
        errors,
        reconnects: int(&v, "/totals/reconnects"),
        hostname: text(&v, "/environment/hostname"),
        dbmeter_version: text(&v, "/dbmeter/version"),
        ..RunSummary::default()
    };
    let x = Extracted {
        document_version: int(&v, "/schema_version"),
        summary,
    };
    Ok((v, x))
}

/// How documents are kept: zlib-compressed (the 143 kB document of a
/// 60-second run with 1-second intervals takes 23 kB).
pub(crate) const ENCODING: &str = "deflate";

/// The document as stored: its encoding and bytes.
pub(crate) fn encode(json: &str) -> Result<(&'static str, Vec<u8>), StoreError> {
    use std::io::Write as _;
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(json.as_bytes())
        .and_then(|_| z.finish())
        .map(|bytes| (ENCODING, bytes))
        .map_err(|e| StoreError::new(format!("cannot compress the run document: {e}")))
}

/// The document's text back from its stored form.
pub(crate) fn decode(encoding: &str, bytes: &[u8]) -> Result<String, String> {
    use std::io::Read as _;
    match encoding {
        "identity" => String::from_utf8(bytes.to_vec()).map_err(|e| e.to_string()),
        ENCODING => {
            let mut text = String::new();
            flate2::read::ZlibDecoder::new(bytes)
                .read_to_string(&mut text)
                .map_err(|e| format!("the stored document is damaged: {e}"))?;
            Ok(text)
        }
        other => Err(format!("unknown document encoding '{other}'")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_round_trip() {
        let doc = r#"{"schema": "dbmeter.run", "x": "é…"}"#.repeat(50);
        let (enc, bytes) = encode(&doc).unwrap();
        assert!(bytes.len() < doc.len() / 5);
        assert_eq!(decode(enc, &bytes).unwrap(), doc);
        assert_eq!(decode("identity", doc.as_bytes()).unwrap(), doc);
        assert!(decode("deflate", b"garbage").is_err());
        assert!(decode("zstd", b"").is_err());
    }

    #[test]
    fn a_failed_cell_needs_few_fields() {
        let (_, Extracted { summary: x, .. }) = extract(
            r#"{"schema":"dbmeter.run","schema_version":1,"workload":"oltp_read_only","threads":4,
                "target":{"url":"mysql://u:***@h:3306/db"},"end":{"reason":"failed","error":"boom"}}"#,
        )
        .unwrap();
        assert_eq!(x.workload, "oltp_read_only");
        assert_eq!(x.threads, Some(4));
        assert_eq!(x.id, 0);
        assert_eq!(x.end_reason, "failed");
        assert_eq!(x.end_error.as_deref(), Some("boom"));
        assert_eq!(x.events_per_s, None);
        assert_eq!(x.latency_p99_ms, None);
    }

    #[test]
    fn percentiles_from_the_list_or_the_histogram() {
        let mut h = LatencyHistogram::new();
        for ns in 1..=1000u64 {
            h.record(ns * 1_000_000);
        }
        let doc = serde_json::json!({
            "schema": "dbmeter.run", "workload": "w", "end": {"reason": "time_limit"},
            "latency_ms": {"avg_ms": 500.5, "percentiles": [{"percentile": 95.0, "ms": 1.5}]},
            "latency_histogram": h.to_base64(),
        });
        let (_, Extracted { summary: x, .. }) = extract(&doc.to_string()).unwrap();
        assert_eq!(x.latency_p95_ms, Some(1.5));
        let p99 = x.latency_p99_ms.unwrap();
        assert!((p99 - 990.0).abs() < 1.0, "{p99}");
    }

    #[test]
    fn refuses_other_text() {
        for (doc, want) in [
            ("hello", "not JSON"),
            ("[1]", "JSON object"),
            (r#"{"schema":"other"}"#, "'other'"),
            (r#"{"a":1}"#, "no \"schema\""),
            (r#"{"schema":"dbmeter.run"}"#, "no workload"),
            (r#"{"schema":"dbmeter.run","workload":"w"}"#, "end reason"),
        ] {
            let e = extract(doc).unwrap_err().0;
            assert!(e.contains(want), "{doc}: {e}");
        }
    }
}
