//! mysqlslap's report: a `Benchmark` block per engine and concurrency
//! level, made of its iterations' runs ([`SlapSection`]), and its `--csv`
//! line; in dbmeter's layout, a line of the statements' latencies after
//! each block.

use dbmeter_result::{RunDocument, SlapSection};
use dbmeter_stats::LatencyHistogram;

/// The iterations of one engine at one concurrency level.
#[derive(Clone, Debug, Default)]
pub struct Block {
    pub runs: Vec<SlapSection>,
    /// The statements' latencies over the iterations.
    pub latency: LatencyHistogram,
}

/// Milliseconds as mysqlslap prints seconds: `1.234`.
fn seconds(ms: u64) -> String {
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

impl Block {
    /// Adds a run; true when it is the block's last iteration.
    pub fn add(&mut self, doc: &RunDocument) -> bool {
        let Some(s) = doc.section::<SlapSection>(SlapSection::KEY) else {
            return false;
        };
        if let Some(h) = doc.histogram() {
            self.latency.merge(&h);
        }
        let last = s.iteration >= s.iterations;
        self.runs.push(s);
        last
    }

    /// Whether `doc` belongs to another block than the runs so far.
    pub fn other(&self, doc: &RunDocument) -> bool {
        match (
            self.runs.last(),
            doc.section::<SlapSection>(SlapSection::KEY),
        ) {
            (Some(a), Some(b)) => a.engine != b.engine || a.concurrency != b.concurrency,
            _ => false,
        }
    }

    fn first(&self) -> SlapSection {
        self.runs.first().cloned().unwrap_or_default()
    }

    /// Average (over the iterations, as mysqlslap divides: in whole
    /// milliseconds), minimum and maximum milliseconds.
    pub fn timing(&self) -> (u64, u64, u64) {
        let ms: Vec<u64> = self.runs.iter().map(|r| r.ms).collect();
        let n = ms.len().max(1) as u64;
        (
            ms.iter().sum::<u64>() / n,
            ms.iter().copied().min().unwrap_or(0),
            ms.iter().copied().max().unwrap_or(0),
        )
    }

    /// mysqlslap's block, its blank line included; with `dbmeter`,
    /// dbmeter's latency line before the blank line.
    pub fn text(&self, dbmeter: bool) -> String {
        let f = self.first();
        let (avg, min, max) = self.timing();
        let mut out = String::from("Benchmark\n");
        if let Some(e) = &f.engine {
            out.push_str(&format!("\tRunning for engine {e}\n"));
        }
        out.push_str(&format!(
            "\tAverage number of seconds to run all queries: {} seconds\n",
            seconds(avg)
        ));
        out.push_str(&format!(
            "\tMinimum number of seconds to run all queries: {} seconds\n",
            seconds(min)
        ));
        out.push_str(&format!(
            "\tMaximum number of seconds to run all queries: {} seconds\n",
            seconds(max)
        ));
        out.push_str(&format!(
            "\tNumber of clients running queries: {}\n",
            f.concurrency
        ));
        out.push_str(&format!(
            "\tAverage number of queries per client: {}\n",
            f.queries_per_client
        ));
        if dbmeter {
            let h = &self.latency;
            let ms = |ns: u64| ns as f64 / 1e6;
            out.push_str(&format!(
                "\tStatement latency (ms) over {} statements: min {:.3}, avg {:.3}, 50th {:.3}, 95th {:.3}, 99th {:.3}, max {:.3}\n",
                h.count(),
                ms(h.min()),
                h.mean() / 1e6,
                ms(h.percentile(50.0)),
                ms(h.percentile(95.0)),
                ms(h.percentile(99.0)),
                ms(h.max()),
            ));
        }
        out
    }

    /// mysqlslap's `--csv` line: engine, load type, average, minimum and
    /// maximum seconds, clients, queries per client.
    pub fn csv(&self) -> String {
        let f = self.first();
        let (avg, min, max) = self.timing();
        format!(
            "{},{},{},{},{},{},{}",
            f.engine.as_deref().unwrap_or(""),
            f.load_type,
            seconds(avg),
            seconds(min),
            seconds(max),
            f.concurrency,
            f.queries_per_client
        )
    }
}

/// The blocks of a sweep's runs, in order.
pub fn blocks(docs: &[RunDocument]) -> Vec<Block> {
    let mut out = Vec::new();
    let mut b = Block::default();
    for d in docs {
        if b.other(d) {
            out.push(std::mem::take(&mut b));
        }
        if b.add(d) {
            out.push(std::mem::take(&mut b));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(engine: Option<&str>, c: u32, i: u32, n: u32, ms: u64) -> RunDocument {
        let mut d = RunDocument::default();
        d.set_section(
            SlapSection::KEY,
            &SlapSection {
                engine: engine.map(String::from),
                load_type: "mixed".into(),
                concurrency: c,
                iteration: i,
                iterations: n,
                queries_per_client: 5,
                ms,
            },
        );
        d
    }

    #[test]
    fn blocks_and_lines_as_mysqlslap_prints_them() {
        let docs = vec![
            doc(Some("innodb"), 1, 1, 2, 1500),
            doc(Some("innodb"), 1, 2, 2, 2001),
            doc(Some("innodb"), 8, 1, 2, 7),
            doc(Some("innodb"), 8, 2, 2, 9),
        ];
        let b = blocks(&docs);
        assert_eq!(b.len(), 2);
        assert_eq!(
            b[0].text(false),
            "Benchmark\n\tRunning for engine innodb\n\
             \tAverage number of seconds to run all queries: 1.750 seconds\n\
             \tMinimum number of seconds to run all queries: 1.500 seconds\n\
             \tMaximum number of seconds to run all queries: 2.001 seconds\n\
             \tNumber of clients running queries: 1\n\
             \tAverage number of queries per client: 5\n"
        );
        assert_eq!(b[1].csv(), "innodb,mixed,0.008,0.007,0.009,8,5");
        assert!(
            b[1].text(true)
                .contains("Statement latency (ms) over 0 statements")
        );
    }
}
