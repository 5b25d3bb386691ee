//! Reading the main numbers out of a run document (the typed
//! `dbmeter_result::RunDocument`, any schema version) for the `runs`
//! table, and the documents' stored form.
//!
//! Only `schema`, `workload` and `end.reason` are required, so that the
//! short document of a run that failed before measuring anything can be
//! stored; every other column is NULL when its field is missing.

use crate::{RunSummary, StoreError};
use dbmeter_result::RunDocument;

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
pub(crate) fn extract(json: &str) -> Result<(RunDocument, Extracted), StoreError> {
    let d = RunDocument::from_json(json).map_err(StoreError::new)?;
    let measured = d.totals.duration_s > 0.0 || d.totals.events > 0;
    let some = |s: &str| (!s.is_empty()).then(|| s.to_string());
    let num = |v: f64| measured.then_some(v);
    let int = |v: u64| measured.then_some(v as i64);
    let summary = RunSummary {
        started_at: some(&d.started_at),
        workload: d.workload.clone(),
        target_url: Some(d.target.url.clone()),
        driver: some(&d.target.driver),
        server_version: some(&d.target.server_version),
        threads: u32::try_from(d.threads).ok().filter(|t| *t > 0),
        end_reason: d.end.reason.clone(),
        end_error: d.end.error.clone(),
        duration_s: num(d.totals.duration_s),
        events: int(d.totals.events),
        events_per_s: num(d.totals.events_per_s),
        queries: int(d.totals.queries),
        queries_per_s: num(d.totals.queries_per_s),
        latency_avg_ms: (d.latency_ms.count > 0).then_some(d.latency_ms.avg_ms),
        latency_p95_ms: d.latency_percentile_ms(95.0),
        latency_p99_ms: d.latency_percentile_ms(99.0),
        latency_max_ms: (d.latency_ms.count > 0).then_some(d.latency_ms.max_ms),
        errors: measured.then(|| d.errors.values().sum::<u64>() as i64),
        reconnects: int(d.totals.reconnects),
        hostname: some(&d.environment.hostname),
        dbmeter_version: some(&d.dbmeter.version),
        ..RunSummary::default()
    };
    let x = Extracted {
        document_version: (d.schema_version > 0).then_some(i64::from(d.schema_version)),
        summary,
    };
    Ok((d, x))
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
            r#"{"schema":"dbmeter.run","schema_version":1,"workload":"read_mostly","threads":4,
                "target":{"url":"mysql://u:***@h:3306/db"},"end":{"reason":"failed","error":"boom"}}"#,
        )
        .unwrap();
        assert_eq!(x.workload, "read_mostly");
        assert_eq!(x.threads, Some(4));
        assert_eq!(x.id, 0);
        assert_eq!(x.end_reason, "failed");
        assert_eq!(x.end_error.as_deref(), Some("boom"));
        assert_eq!(x.events_per_s, None);
        assert_eq!(x.latency_p99_ms, None);
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
