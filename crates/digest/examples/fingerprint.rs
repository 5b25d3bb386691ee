//! Prints the fingerprint and query ID of each query on standard input,
//! queries separated by NUL bytes: `fingerprint\tID\0` each. For checking
//! the rules against pt-query-digest's own on a corpus.

use std::io::{Read, Write};

fn main() -> std::io::Result<()> {
    let mut input = Vec::new();
    std::io::stdin().read_to_end(&mut input)?;
    let mut out = std::io::stdout().lock();
    for q in input.split(|&b| b == 0).filter(|q| !q.is_empty()) {
        let fp = dbmeter_digest::fingerprint::fingerprint_bytes(q);
        let id = dbmeter_digest::fingerprint::query_id_bytes(&fp);
        out.write_all(&fp)?;
        out.write_all(b"\t")?;
        out.write_all(id.as_bytes())?;
        out.write_all(b"\0")?;
    }
    Ok(())
}
