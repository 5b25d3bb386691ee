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

/// How one test case ended.
#[derive(Clone, Debug, PartialEq)]
pub enum CaseEnd {
    Passed,
    /// A `<failure>` of this type and message.
    Failure {
        kind: String,
        message: String,
    },
    /// An `<error>`: the case could not be judged.
    Error {
        kind: String,
        message: String,
    },
    /// A `<skipped>` case.
    Skipped {
        message: String,
    },
}

/// One `<testcase>`.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    pub name: String,
    pub classname: String,
    pub time_s: f64,
    pub end: CaseEnd,
    /// Text for `<system-out>`, if any.
    pub output: Option<String>,
}

/// One `<testsuite>` in a `<testsuites>` document of its own.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Suite {
    pub name: String,
    pub time_s: f64,
    /// RFC 3339 without the zone letter; empty for none.
    pub timestamp: String,
    pub hostname: String,
    pub properties: Vec<(String, String)>,
    pub cases: Vec<Case>,
}

impl Suite {
    /// The JUnit XML document: `<testsuites>` holding this suite.
    pub fn xml(&self) -> String {
        let mut cases = String::new();
        let (mut failures, mut errors, mut skipped) = (0, 0, 0);
        for c in &self.cases {
            cases.push_str(&format!(
                "    <testcase name=\"{}\" classname=\"{}\" time=\"{}\"",
                esc(&c.name),
                esc(&c.classname),
                secs(c.time_s)
            ));
            let inner = match &c.end {
                CaseEnd::Passed => String::new(),
                CaseEnd::Failure { kind, message } => {
                    failures += 1;
                    format!(
                        "      <failure type=\"{}\" message=\"{}\"/>\n",
                        esc(kind),
                        esc(message)
                    )
                }
                CaseEnd::Error { kind, message } => {
                    errors += 1;
                    format!(
                        "      <error type=\"{}\" message=\"{}\"/>\n",
                        esc(kind),
                        esc(message)
                    )
                }
                CaseEnd::Skipped { message } => {
                    skipped += 1;
                    format!("      <skipped message=\"{}\"/>\n", esc(message))
                }
            };
            match &c.output {
                None if inner.is_empty() => cases.push_str("/>\n"),
                out => {
                    cases.push_str(">\n");
                    cases.push_str(&inner);
                    if let Some(o) = out {
                        cases.push_str(&format!("      <system-out>{}</system-out>\n", esc(o)));
                    }
                    cases.push_str("    </testcase>\n");
                }
            }
        }
        let tests = self.cases.len();
        let duration = secs(self.time_s);
        let mut props = String::new();
        for (name, value) in &self.properties {
            props.push_str(&format!(
                "      <property name=\"{}\" value=\"{}\"/>\n",
                esc(name),
                esc(value)
            ));
        }
        let timestamp = if self.timestamp.is_empty() {
            String::new()
        } else {
            format!(" timestamp=\"{}\"", esc(&self.timestamp))
        };
        let hostname = if self.hostname.is_empty() {
            String::new()
        } else {
            format!(" hostname=\"{}\"", esc(&self.hostname))
        };
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
             <testsuites name=\"dbmeter\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" time=\"{duration}\">\n  \
             <testsuite name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\" time=\"{duration}\"{timestamp}{hostname}>\n    \
             <properties>\n{props}    </properties>\n{cases}  </testsuite>\n</testsuites>\n",
            esc(&self.name),
        )
    }
}

/// The JUnit XML document of a run's verdicts.
pub fn junit(doc: &RunDocument) -> String {
    let class = format!("dbmeter.{}", doc.workload);
    let completed = matches!(
        doc.end.reason.as_str(),
        "time_limit" | "event_limit" | "work_done"
    );
    let mut cases = vec![Case {
        name: "run completed".into(),
        classname: class.clone(),
        time_s: doc.totals.duration_s,
        end: if completed {
            CaseEnd::Passed
        } else {
            let why = match &doc.end.error {
                Some(e) => format!("the run ended {}: {e}", doc.end.reason.replace('_', " ")),
                None => format!("the run ended {}", doc.end.reason.replace('_', " ")),
            };
            CaseEnd::Failure {
                kind: "run".into(),
                message: why,
            }
        },
        output: None,
    }];
    for v in &doc.verdicts {
        let end = match v.status.as_str() {
            "pass" => CaseEnd::Passed,
            "fail" => CaseEnd::Failure {
                kind: "assertion".into(),
                message: v.line(),
            },
            _ => CaseEnd::Error {
                kind: "not_judged".into(),
                message: v.line(),
            },
        };
        cases.push(Case {
            name: v.assertion.clone(),
            classname: class.clone(),
            time_s: 0.0,
            end,
            output: Some(v.line()),
        });
    }
    let mut properties: Vec<(String, String)> = [
        ("workload", doc.workload.as_str()),
        ("target", doc.target.url.as_str()),
        ("server_version", doc.target.server_version.as_str()),
        ("end", doc.end.reason.as_str()),
    ]
    .into_iter()
    .filter(|(_, v)| !v.is_empty())
    .map(|(n, v)| (n.to_string(), v.to_string()))
    .collect();
    for (name, value) in [
        ("events_per_s", doc.totals.events_per_s),
        ("queries_per_s", doc.totals.queries_per_s),
    ] {
        properties.push((name.to_string(), format!("{value:.2}")));
    }
    Suite {
        name: class,
        time_s: doc.totals.duration_s,
        timestamp: doc.started_at.trim_end_matches('Z').to_string(),
        hostname: doc.environment.hostname.clone(),
        properties,
        cases,
    }
    .xml()
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
