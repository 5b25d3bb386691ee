//! MySQL packets: a 3-byte little-endian payload length, a 1-byte sequence
//! id, then the payload. A payload of 16 MiB - 1 bytes or more is split
//! into packets of exactly 0xFFFFFF bytes followed by a shorter one (empty
//! when the length is a multiple of 0xFFFFFF).
//!
//! [`Packets`] reads through its own buffer (one `read` syscall usually
//! brings a whole response) and writes each request with one `write`.

use super::Error;
use crate::wire_stream::{ReadBuf, Stream};
use std::io::Write;

/// The largest payload of one packet; a packet this long is continued by the next.
pub(crate) const MAX_PAYLOAD: usize = 0xFF_FFFF;

/// After a command, a write buffer or an assembled payload grown past this
/// is shrunk back.
const KEEP_BUF: usize = 1024 * 1024;

pub(crate) struct Packets {
    pub(crate) stream: Stream,
    rb: ReadBuf,
    /// A payload assembled from several packets.
    large: Vec<u8>,
    wbuf: Vec<u8>,
    /// The sequence id of the next packet, read or written.
    seq: u8,
}

impl Packets {
    pub(crate) fn new(stream: Stream) -> Self {
        Packets {
            stream,
            rb: ReadBuf::new(),
            large: Vec::new(),
            wbuf: Vec::with_capacity(256),
            seq: 0,
        }
    }

    /// Bytes received and not read yet.
    pub(crate) fn buffered(&self) -> usize {
        self.rb.buffered()
    }

    /// Makes sure `need` bytes are buffered, reading from the stream.
    #[inline]
    fn fill(&mut self, need: usize) -> Result<(), Error> {
        Ok(self.rb.fill(&mut self.stream, need)?)
    }

    /// Sets the sequence id the next packet must have.
    pub(crate) fn expect_seq(&mut self, seq: u8) {
        self.seq = seq;
    }

    /// Reads one packet's header; returns its payload length.
    #[inline]
    fn header(&mut self) -> Result<usize, Error> {
        self.fill(4)?;
        let h = &self.rb.buf[self.rb.pos..self.rb.pos + 4];
        let len = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
        let seq = h[3];
        if seq != self.seq {
            return Err(Error::Protocol(format!(
                "packet out of order (sequence id {seq}, expected {})",
                self.seq
            )));
        }
        self.seq = seq.wrapping_add(1);
        self.rb.pos += 4;
        Ok(len)
    }

    /// Reads the next payload (joined when the server split it).
    pub(crate) fn read(&mut self) -> Result<&[u8], Error> {
        let len = self.header()?;
        self.fill(len)?;
        let start = self.rb.pos;
        self.rb.pos += len;
        if len < MAX_PAYLOAD {
            return Ok(&self.rb.buf[start..start + len]);
        }
        let mut large = std::mem::take(&mut self.large);
        large.clear();
        large.extend_from_slice(&self.rb.buf[start..start + len]);
        loop {
            let len = self.header()?;
            self.fill(len)?;
            large.extend_from_slice(&self.rb.buf[self.rb.pos..self.rb.pos + len]);
            self.rb.pos += len;
            if len < MAX_PAYLOAD {
                break;
            }
        }
        self.large = large;
        Ok(&self.large)
    }

    /// Consumes the row packets of a result set, up to and not including
    /// the packet that ends it (one starting with 0xFE or 0xFF, shorter
    /// than a full packet); returns how many rows there were. Rows are
    /// skipped where they lie in the read buffer.
    pub(crate) fn skip_rows(&mut self) -> Result<u64, Error> {
        let mut n = 0u64;
        loop {
            let avail = self.rb.end - self.rb.pos;
            if avail < 4 {
                self.fill(4)?;
                continue;
            }
            let h = &self.rb.buf[self.rb.pos..self.rb.pos + 4];
            let len = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
            if len == 0 || len >= MAX_PAYLOAD {
                // A row split over several packets: joined the slow way.
                self.read()?;
                n += 1;
                continue;
            }
            if avail < 4 + len {
                self.fill(4 + len)?;
                continue;
            }
            if h[3] != self.seq {
                return Err(Error::Protocol(format!(
                    "packet out of order (sequence id {}, expected {})",
                    h[3], self.seq
                )));
            }
            if matches!(self.rb.buf[self.rb.pos + 4], 0xFE | 0xFF) {
                return Ok(n);
            }
            self.seq = self.seq.wrapping_add(1);
            self.rb.pos += 4 + len;
            n += 1;
        }
    }

    /// Starts a new command: sequence ids restart at 0 and the write
    /// buffer holds room for the first header. Returns the buffer to
    /// write the payload into.
    #[inline(always)]
    pub(crate) fn command(&mut self) -> &mut Vec<u8> {
        self.seq = 0;
        if self.rb.buffered() == 0 {
            self.rb.shrink_when_idle();
            if self.large.capacity() > KEEP_BUF {
                self.large = Vec::new();
            }
        }
        self.packet()
    }

    /// Starts the next packet of the current exchange.
    pub(crate) fn packet(&mut self) -> &mut Vec<u8> {
        self.wbuf.clear();
        self.wbuf.extend_from_slice(&[0; 4]);
        &mut self.wbuf
    }

    /// Sends the packet (or packets, when long) written since
    /// [`Packets::command`] or [`Packets::packet`], in one write.
    pub(crate) fn send(&mut self) -> Result<(), Error> {
        let len = self.wbuf.len() - 4;
        if len < MAX_PAYLOAD {
            self.wbuf[..4].copy_from_slice(&header(len, self.seq));
            self.seq = self.seq.wrapping_add(1);
        } else {
            let framed = frame(&self.wbuf[4..], &mut self.seq);
            self.wbuf = framed;
        }
        self.stream.write_all(&self.wbuf)?;
        self.stream.flush()?;
        if self.wbuf.capacity() > KEEP_BUF {
            self.wbuf = Vec::with_capacity(256);
        }
        Ok(())
    }
}

fn header(len: usize, seq: u8) -> [u8; 4] {
    let l = (len as u32).to_le_bytes();
    [l[0], l[1], l[2], seq]
}

/// Splits `payload` into packets starting at sequence id `*seq`.
pub(crate) fn frame(payload: &[u8], seq: &mut u8) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + 4 * (payload.len() / MAX_PAYLOAD + 2));
    let mut rest = payload;
    loop {
        let n = rest.len().min(MAX_PAYLOAD);
        out.extend_from_slice(&header(n, *seq));
        out.extend_from_slice(&rest[..n]);
        *seq = seq.wrapping_add(1);
        rest = &rest[n..];
        if n < MAX_PAYLOAD {
            return out;
        }
    }
}

/// Appends a length-encoded integer.
pub(crate) fn put_lenenc_int(out: &mut Vec<u8>, v: u64) {
    if v < 251 {
        out.push(v as u8);
    } else if v < 1 << 16 {
        out.push(0xFC);
        out.extend_from_slice(&(v as u16).to_le_bytes());
    } else if v < 1 << 24 {
        out.push(0xFD);
        out.extend_from_slice(&(v as u32).to_le_bytes()[..3]);
    } else {
        out.push(0xFE);
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// Appends a length-encoded string.
pub(crate) fn put_lenenc_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_lenenc_int(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// Reads fields from a payload; running past its end is a protocol error.
pub(crate) struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

fn short() -> Error {
    Error::Protocol("a packet from the server is shorter than its fields".into())
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Cursor { buf, pos: 0 }
    }

    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], Error> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.buf.len());
        let end = end.ok_or_else(short)?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    pub(crate) fn skip(&mut self, n: usize) -> Result<(), Error> {
        self.take(n).map(|_| ())
    }

    pub(crate) fn u8(&mut self) -> Result<u8, Error> {
        Ok(self.take(1)?[0])
    }

    pub(crate) fn u16(&mut self) -> Result<u16, Error> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    pub(crate) fn u32(&mut self) -> Result<u32, Error> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A length-encoded integer; `None` for 0xFB (SQL NULL in a text row).
    pub(crate) fn lenenc_int_or_null(&mut self) -> Result<Option<u64>, Error> {
        let first = self.u8()?;
        Ok(Some(match first {
            0xFB => return Ok(None),
            0xFC => self.u16()? as u64,
            0xFD => {
                let b = self.take(3)?;
                u32::from_le_bytes([b[0], b[1], b[2], 0]) as u64
            }
            0xFE => {
                let b = self.take(8)?;
                u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
            }
            0xFF => return Err(Error::Protocol("invalid length-encoded integer".into())),
            v => v as u64,
        }))
    }

    pub(crate) fn lenenc_int(&mut self) -> Result<u64, Error> {
        self.lenenc_int_or_null()?
            .ok_or_else(|| Error::Protocol("unexpected NULL length".into()))
    }

    /// A length-encoded string; `None` for NULL.
    pub(crate) fn lenenc_bytes_or_null(&mut self) -> Result<Option<&'a [u8]>, Error> {
        match self.lenenc_int_or_null()? {
            None => Ok(None),
            Some(n) => {
                let n = usize::try_from(n).map_err(|_| short())?;
                self.take(n).map(Some)
            }
        }
    }

    pub(crate) fn lenenc_bytes(&mut self) -> Result<&'a [u8], Error> {
        self.lenenc_bytes_or_null()?
            .ok_or_else(|| Error::Protocol("unexpected NULL string".into()))
    }

    /// A string ending with a NUL byte (or at the end of the payload).
    pub(crate) fn nul_bytes(&mut self) -> &'a [u8] {
        let rest = &self.buf[self.pos..];
        match rest.iter().position(|&b| b == 0) {
            Some(i) => {
                self.pos += i + 1;
                &rest[..i]
            }
            None => {
                self.pos = self.buf.len();
                rest
            }
        }
    }

    pub(crate) fn rest(&mut self) -> &'a [u8] {
        let rest = &self.buf[self.pos..];
        self.pos = self.buf.len();
        rest
    }

    pub(crate) fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenenc_ints_round_trip_at_every_width() {
        for v in [
            0u64,
            1,
            250,
            251,
            0xFFFF,
            0x1_0000,
            0xFF_FFFF,
            0x100_0000,
            u64::MAX,
        ] {
            let mut b = Vec::new();
            put_lenenc_int(&mut b, v);
            let width = match v {
                0..=250 => 1,
                251..=0xFFFF => 3,
                0x1_0000..=0xFF_FFFF => 4,
                _ => 9,
            };
            assert_eq!(b.len(), width, "{v}");
            let mut c = Cursor::new(&b);
            assert_eq!(c.lenenc_int().unwrap(), v);
            assert!(c.is_empty());
        }
        assert_eq!(Cursor::new(&[0xFB]).lenenc_int_or_null().unwrap(), None);
        assert!(Cursor::new(&[0xFF]).lenenc_int_or_null().is_err());
        assert!(Cursor::new(&[0xFD, 1, 2]).lenenc_int().is_err());
    }

    #[test]
    fn lenenc_strings_and_nul_strings() {
        let mut b = Vec::new();
        put_lenenc_bytes(&mut b, b"abc");
        put_lenenc_bytes(&mut b, &[b'x'; 300]);
        b.extend_from_slice(b"name\0tail");
        let mut c = Cursor::new(&b);
        assert_eq!(c.lenenc_bytes().unwrap(), b"abc");
        assert_eq!(c.lenenc_bytes().unwrap().len(), 300);
        assert_eq!(c.nul_bytes(), b"name");
        assert_eq!(c.nul_bytes(), b"tail");
        assert!(c.is_empty());
        // A length past the end of the payload is an error, not a panic.
        let mut c = Cursor::new(&[5, b'a']);
        assert!(c.lenenc_bytes().is_err());
    }

    #[test]
    fn frames_short_and_split_payloads() {
        let mut seq = 3;
        let f = frame(b"hello", &mut seq);
        assert_eq!(f, [5, 0, 0, 3, b'h', b'e', b'l', b'l', b'o']);
        assert_eq!(seq, 4);

        // Exactly 0xFFFFFF bytes: one full packet and an empty one.
        let payload = vec![7u8; MAX_PAYLOAD];
        let mut seq = 0;
        let f = frame(&payload, &mut seq);
        assert_eq!(f.len(), MAX_PAYLOAD + 8);
        assert_eq!(&f[..4], &[0xFF, 0xFF, 0xFF, 0]);
        assert_eq!(&f[MAX_PAYLOAD + 4..], &[0, 0, 0, 1]);
        assert_eq!(seq, 2);

        // 0xFFFFFF + 10 bytes: a full packet and one of 10.
        let payload = vec![1u8; MAX_PAYLOAD + 10];
        let mut seq = 255;
        let f = frame(&payload, &mut seq);
        assert_eq!(&f[..4], &[0xFF, 0xFF, 0xFF, 255]);
        assert_eq!(&f[MAX_PAYLOAD + 4..MAX_PAYLOAD + 8], &[10, 0, 0, 0]);
        assert_eq!(seq, 1);
    }

    #[test]
    fn reads_split_packets_back_whole() {
        // Through a Unix socket pair: what one side frames, the other joins.
        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        let payload: Vec<u8> = (0..MAX_PAYLOAD * 2 + 5).map(|i| (i % 251) as u8).collect();
        let sent = payload.clone();
        let writer = std::thread::spawn(move || {
            let mut w = Packets::new(Stream::Unix(a));
            w.command().extend_from_slice(&sent);
            w.send().unwrap();
            w.packet().extend_from_slice(b"next");
            w.send().unwrap();
        });
        let mut r = Packets::new(Stream::Unix(b));
        r.seq = 0;
        assert_eq!(r.read().unwrap(), &payload[..]);
        assert_eq!(r.read().unwrap(), b"next");
        writer.join().unwrap();
        // Rows are skipped up to the packet that ends the result; a row
        // longer than one packet counts once.
        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        let writer = std::thread::spawn(move || {
            let mut w = Packets::new(Stream::Unix(a));
            for i in 0..3000u32 {
                let row = w.packet();
                row.push(0);
                row.extend_from_slice(&i.to_le_bytes());
                w.send().unwrap();
            }
            let big = w.packet();
            big.push(0);
            big.resize(MAX_PAYLOAD + 100, 0xFE);
            w.send().unwrap();
            w.packet().extend_from_slice(&[0xFE, 0, 0, 2, 0]);
            w.send().unwrap();
        });
        let mut r = Packets::new(Stream::Unix(b));
        assert_eq!(r.skip_rows().unwrap(), 3001);
        assert_eq!(r.read().unwrap(), [0xFE, 0, 0, 2, 0]);
        writer.join().unwrap();

        // A packet with an unexpected sequence id is refused.
        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        let mut w = Packets::new(Stream::Unix(a));
        w.command().push(1);
        w.send().unwrap();
        let mut r = Packets::new(Stream::Unix(b));
        r.seq = 5;
        assert!(matches!(r.read(), Err(Error::Protocol(_))));
    }
}
