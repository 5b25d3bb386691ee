//! The digest's JSON document is documented in docs/digest.md: every key
//! a real document has (a slow log with MariaDB's extended attributes and
//! a malformed line, and a PostgreSQL log with bind parameters) must be
//! named there, so a field added without its documentation fails here.

use dbmeter_digest::aggregate::{GroupBy, TimeFilter};
use dbmeter_digest::report::{ReportOptions, json};
use dbmeter_digest::{Options, digest};
use serde_json::Value;
use std::collections::BTreeSet;

const SLOW: &str = "mariadbd, Version: 10.11.19-MariaDB-0+deb12u1-log (Debian 12). started with:
Tcp port: 0  Unix socket: /tmp/dg/sock
Time\t\t    Id Command\tArgument
# Time: 261127 10:31:38
# User@Host: app[app] @ web1 [10.0.0.1]
# Thread_id: 4  Schema: t  QC_hit: No
# Query_time: 0.008185  Lock_time: 0.000690  Rows_sent: 1  Rows_examined: 10
# Rows_affected: 0  Bytes_sent: 50
# Full_scan: Yes  Full_join: No  Tmp_table: No  Tmp_table_on_disk: No
use `t`;
SET timestamp=1795775498;
select * from a where id = 5;
# User@Host: app[app] @ web1 [10.0.0.1]
# Thread_id: 4  Schema: t  QC_hit: No
# Query_time: abc  Lock_time: 0.000010  Rows_sent: 1  Rows_examined: 1
SET timestamp=1795775499;
select * from a where id = 7;
";

const PG: &str = "2026-11-27 10:31:38.120 UTC [4242] app@shop LOG:  duration: 0.250 ms  execute <unnamed>: select * from item where id = $1
2026-11-27 10:31:38.120 UTC [4242] app@shop DETAIL:  parameters: $1 = '5'
2026-11-27 10:31:39.500 UTC [4243] app@shop LOG:  duration: 1.500 ms  statement: update item set n = n + 1 where id = 7
";

/// Every object key in `v`, except the keys of maps whose keys are data
/// (databases, users, hosts, attributes by the log's names, word values).
fn keys(v: &Value, parent: &str, out: &mut BTreeSet<String>) {
    const DATA_MAPS: [&str; 5] = ["databases", "users", "hosts", "attributes", "values"];
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if !DATA_MAPS.contains(&parent) {
                    out.insert(k.clone());
                }
                keys(x, if DATA_MAPS.contains(&parent) { "" } else { k }, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| keys(x, parent, out)),
        _ => {}
    }
}

#[test]
fn every_key_of_the_document_is_documented() {
    let dir = std::env::temp_dir().join(format!("dbmeter-digest-schema-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let docs =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/digest.md"))
            .expect("docs/digest.md");
    let mut seen = BTreeSet::new();
    for (name, text) in [("slow.log", SLOW), ("postgresql.log", PG)] {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let opts = Options {
            group_by: GroupBy::Fingerprint,
            filter: TimeFilter::default(),
            threads: 2,
            format: None,
            log_line_prefix: None,
        };
        let d = digest(&[path.display().to_string()], &opts, &|_| {}).expect("a digest");
        let doc = json(&d, &ReportOptions::default());
        assert!(!doc["classes"].as_array().unwrap().is_empty(), "{doc}");
        keys(&doc, "", &mut seen);
    }
    let _ = std::fs::remove_dir_all(&dir);
    // A sanity check that the walk found the document's parts.
    for k in [
        "classes",
        "global",
        "files",
        "malformed",
        "sample",
        "params",
        "explain",
    ] {
        assert!(seen.contains(k), "{k} not in {seen:?}");
    }
    let missing: Vec<&String> = seen
        .iter()
        .filter(|k| !docs.contains(&format!("\"{k}\"")) && !docs.contains(&format!("`{k}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "keys of the digest's JSON that docs/digest.md does not name: {missing:?}"
    );
}
