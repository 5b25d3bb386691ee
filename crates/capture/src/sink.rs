//! Where the collected log bytes go: the capture file, up to the end
//! marker that dbmeter logged when the window closed.
//!
//! The window's end is a statement (or log message) of dbmeter's own that
//! carries a marker no other statement has: the server writes its log as
//! statements end (PostgreSQL's collector a little later), so bytes are
//! read until the marker appears, and the capture stops at the start of
//! the marker's event. Everything before it was logged before the window
//! closed.

use memchr::memmem;
use std::io::{self, Write};

/// Bytes held back, unwritten, in case the marker's event starts in them.
const KEEP: usize = 256 << 10;

/// Where the marker's event starts in `buf`, the marker being at `at`.
pub(crate) type Cut = fn(&[u8], usize) -> usize;

/// The start of the line that holds `at`.
pub(crate) fn line_start(buf: &[u8], at: usize) -> usize {
    memchr::memrchr(b'\n', &buf[..at]).map_or(0, |i| i + 1)
}

/// The start of the slow-log event whose statement holds `at`: its
/// `# User@Host:` line (and the `# Time:` line right above it), when only
/// the event's own `#` lines, `SET timestamp=` and `use` lines lie
/// between; else the marker's line.
pub(crate) fn slow_event_start(buf: &[u8], at: usize) -> usize {
    let line = line_start(buf, at);
    let head = &buf[..line];
    let user = if let Some(i) = memmem::rfind(head, b"\n# User@Host:") {
        i + 1
    } else if head.starts_with(b"# User@Host:") {
        0
    } else {
        return line;
    };
    let between_ok = buf[user..line]
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .all(|l| l.starts_with(b"#") || l.starts_with(b"SET timestamp=") || l.starts_with(b"use "));
    if !between_ok {
        return line;
    }
    if user == 0 {
        return 0;
    }
    let prev = line_start(buf, user - 1);
    if buf[prev..].starts_with(b"# Time:") {
        prev
    } else {
        user
    }
}

/// Writes the collected bytes, stopping before the marker's event.
pub(crate) struct Sink<'a> {
    out: &'a mut dyn Write,
    pending: Vec<u8>,
    marker: Option<Vec<u8>>,
    cut: Cut,
    /// Bytes written so far.
    pub written: u64,
    /// Whether the marker was seen (nothing more is written then).
    pub found: bool,
}

impl<'a> Sink<'a> {
    /// A sink that stops at `marker` (None: takes everything).
    pub fn new(out: &'a mut dyn Write, marker: Option<&str>, cut: Cut) -> Sink<'a> {
        Sink {
            out,
            pending: Vec::new(),
            marker: marker.map(|m| m.as_bytes().to_vec()),
            cut,
            written: 0,
            found: false,
        }
    }

    fn write(&mut self, n: usize) -> io::Result<()> {
        self.out.write_all(&self.pending[..n])?;
        self.written += n as u64;
        self.pending.drain(..n);
        Ok(())
    }

    /// Takes the next bytes of the log.
    pub fn push(&mut self, data: &[u8]) -> io::Result<()> {
        if self.found {
            return Ok(());
        }
        let Some(m) = &self.marker else {
            self.out.write_all(data)?;
            self.written += data.len() as u64;
            return Ok(());
        };
        let from = self.pending.len().saturating_sub(m.len());
        self.pending.extend_from_slice(data);
        if let Some(p) = memmem::find(&self.pending[from..], m) {
            let cut = (self.cut)(&self.pending, from + p);
            self.write(cut)?;
            self.pending.clear();
            self.found = true;
            return Ok(());
        }
        if self.pending.len() > 2 * KEEP {
            self.write(self.pending.len() - KEEP)?;
        }
        Ok(())
    }

    /// Writes what is held back (the marker never came).
    pub fn finish(&mut self) -> io::Result<()> {
        let n = self.pending.len();
        self.write(n)?;
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SLOW: &str = "# Time: 261127 10:31:38\n# User@Host: a[a] @ localhost []\n\
        # Query_time: 0.1  Lock_time: 0\nSET timestamp=1;\nselect 1;\n\
        # Time: 261127 10:31:39\n# User@Host: r[r] @ localhost []\n# Thread_id: 3  Schema: t\n\
        # Query_time: 0.1  Lock_time: 0\nSET timestamp=2;\nSET SESSION long_query_time = 0 /* MARK */;\n\
        # User@Host: a[a] @ localhost []\n# Query_time: 0.1  Lock_time: 0\nSET timestamp=3;\nselect 2;\n";

    fn through(data: &[u8], piece: usize, cut: Cut, marker: Option<&str>) -> (Vec<u8>, bool) {
        let mut out = Vec::new();
        let mut s = Sink::new(&mut out, marker, cut);
        for c in data.chunks(piece) {
            s.push(c).unwrap();
        }
        let found = s.found;
        s.finish().unwrap();
        (out, found)
    }

    #[test]
    fn slow_log_cut_before_the_marker_event() {
        let want = SLOW.find("# Time: 261127 10:31:39").unwrap();
        for piece in [1, 3, 7, 64, 4096] {
            let (out, found) = through(SLOW.as_bytes(), piece, slow_event_start, Some("MARK"));
            assert!(found);
            assert_eq!(String::from_utf8(out).unwrap(), &SLOW[..want], "{piece}");
        }
        // Without the Time line above, the event starts at its User@Host line.
        let no_time = SLOW.replace("# Time: 261127 10:31:39\n", "");
        let want = no_time.find("# User@Host: r[r]").unwrap();
        let (out, _) = through(no_time.as_bytes(), 5, slow_event_start, Some("MARK"));
        assert_eq!(String::from_utf8(out).unwrap(), &no_time[..want]);
    }

    #[test]
    fn no_marker_takes_everything_and_lines_cut_at_their_start() {
        let (out, found) = through(SLOW.as_bytes(), 10, slow_event_start, Some("NOPE"));
        assert!(!found);
        assert_eq!(out, SLOW.as_bytes());
        let (out, _) = through(SLOW.as_bytes(), 10, line_start, None);
        assert_eq!(out, SLOW.as_bytes());
        let pg = "2026 [1] LOG:  duration: 1 ms  statement: select 1\n2026 [2] LOG:  MARK\n2026 [1] LOG:  x\n";
        let (out, _) = through(pg.as_bytes(), 2, line_start, Some("MARK"));
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "2026 [1] LOG:  duration: 1 ms  statement: select 1\n"
        );
        // A long log: held-back bytes are written as more come.
        let big = "x".repeat(3 * KEEP) + "\nMARK\n";
        let (out, found) = through(big.as_bytes(), 1000, line_start, Some("MARK"));
        assert!(found);
        assert_eq!(out.len(), 3 * KEEP + 1);
    }
}
