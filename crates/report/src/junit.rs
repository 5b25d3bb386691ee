//! The verdicts of a run as JUnit XML (`--junit FILE`), the test report
//! that CI systems read (Jenkins, GitLab, GitHub Actions' test reporters).
//!
//! One `<testsuite>` per run, named after the workload: a test case "run
//! completed" (a failure when the run failed or was interrupted) and one
//! test case per `--assert` target: passed, a `<failure>` with the
//! measured value, or an `<error>` when it could not be judged. The layout
//! follows the schema Jenkins reads (`junit-10.xsd`): times in seconds
//! with at most three decimals.

use dbmeter_result::RunDocument;

/// Escapes text for an XML attribute or element: the five entities, and
/// control characters XML 1.0 cannot carry dropped.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
    out
}

/// Seconds as the schema's time: digits, a dot and at most 3 decimals.
fn secs(s: f64) -> String {
    let s = if s.is_finite() && s > 0.0 { s } else { 0.0 };
    format!("{s:.3}")
}

/// The JUnit XML document of a run's verdicts.
pub fn junit(doc: &RunDocument) -> String {
    let class = format!("dbmeter.{}", doc.workload);
    let completed = matches!(
        doc.end.reason.as_str(),
        "time_limit" | "event_limit" | "work_done"
    );
    let mut cases = String::new();
    let mut failures = 0;
    let mut errors = 0;
    let duration = secs(doc.totals.duration_s);
    cases.push_str(&format!(
        "    <testcase name=\"run completed\" classname=\"{}\" time=\"{duration}\"",
        esc(&class)
    ));
    if completed {
        cases.push_str("/>\n");
    } else {
        failures += 1;
        let why = match &doc.end.error {
            Some(e) => format!("the run ended {}: {e}", doc.end.reason.replace('_', " ")),
            None => format!("the run ended {}", doc.end.reason.replace('_', " ")),
        };
        cases.push_str(&format!(
            ">\n      <failure type=\"run\" message=\"{}\"/>\n    </testcase>\n",
            esc(&why)
        ));
    }
    for v in &doc.verdicts {
        cases.push_str(&format!(
            "    <testcase name=\"{}\" classname=\"{}\" time=\"0.000\"",
            esc(&v.assertion),
            esc(&class)
        ));
        match v.status.as_str() {
            "pass" => cases.push_str(">\n"),
            "fail" => {
                failures += 1;
                cases.push_str(&format!(
                    ">\n      <failure type=\"assertion\" message=\"{}\"/>\n",
                    esc(&v.line())
                ));
            }
            _ => {
                errors += 1;
                cases.push_str(&format!(
                    ">\n      <error type=\"not_judged\" message=\"{}\"/>\n",
                    esc(&v.line())
                ));
            }
        }
        cases.push_str(&format!(
            "      <system-out>{}</system-out>\n    </testcase>\n",
            esc(&v.line())
        ));
    }
    let tests = doc.verdicts.len() + 1;
    let mut props = String::new();
    for (name, value) in [
        ("workload", doc.workload.as_str()),
        ("target", doc.target.url.as_str()),
        ("server_version", doc.target.server_version.as_str()),
        ("end", doc.end.reason.as_str()),
    ] {
        if !value.is_empty() {
            props.push_str(&format!(
                "      <property name=\"{name}\" value=\"{}\"/>\n",
                esc(value)
            ));
        }
    }
    for (name, value) in [
        ("events_per_s", doc.totals.events_per_s),
        ("queries_per_s", doc.totals.queries_per_s),
    ] {
        props.push_str(&format!(
            "      <property name=\"{name}\" value=\"{value:.2}\"/>\n"
        ));
    }
    let host = &doc.environment.hostname;
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <testsuites name=\"dbmeter\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" time=\"{duration}\">\n  \
         <testsuite name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"0\" time=\"{duration}\" timestamp=\"{}\"{}>\n    \
         <properties>\n{props}    </properties>\n{cases}  </testsuite>\n</testsuites>\n",
        esc(&class),
        esc(doc.started_at.trim_end_matches('Z')),
        if host.is_empty() {
            String::new()
        } else {
            format!(" hostname=\"{}\"", esc(host))
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use dbmeter_result::verdict::Assertion;

    #[test]
    fn counts_and_escapes() {
        let mut doc = RunDocument {
            workload: "oltp<&>".into(),
            ..RunDocument::default()
        };
        doc.end.reason = "time_limit".into();
        doc.totals.duration_s = 2.0;
        doc.totals.events = 10;
        doc.totals.events_per_s = 5.0;
        doc.verdicts = ["tps>=5", "tps>6", "p99<1ms"]
            .iter()
            .map(|a| Assertion::parse(a).unwrap().judge(&doc))
            .collect();
        let x = junit(&doc);
        assert!(x.contains("tests=\"4\" failures=\"1\" errors=\"1\""), "{x}");
        assert!(x.contains("name=\"tps&gt;=5\""), "{x}");
        assert!(x.contains("classname=\"dbmeter.oltp&lt;&amp;&gt;\""), "{x}");
        assert!(x.contains("<failure type=\"assertion\""), "{x}");
        assert!(x.contains("<error type=\"not_judged\""), "{x}");
        doc.end.reason = "interrupted".into();
        let x = junit(&doc);
        assert!(x.contains("<failure type=\"run\" message=\"the run ended interrupted\""));
        assert_eq!(secs(f64::NAN), "0.000");
        assert_eq!(esc("a\u{1}b"), "ab");
    }
}
