//! Inputs: files, `-` for standard input, gzip (`.gz`) and zstd (`.zst`)
//! compressed either way (told by their first bytes, not their names).

use std::fs::File;
use std::io::{self, Read};

/// How an input is compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Compression {
    None,
    Gzip,
    Zstd,
}

/// A reader that gives back the bytes it peeked at first.
struct Peeked<R> {
    head: Vec<u8>,
    at: usize,
    inner: R,
}

impl<R: Read> Read for Peeked<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.at < self.head.len() {
            let n = (self.head.len() - self.at).min(buf.len());
            buf[..n].copy_from_slice(&self.head[self.at..self.at + n]);
            self.at += n;
            return Ok(n);
        }
        self.inner.read(buf)
    }
}

/// An open input: its decompressed bytes, and its size on disk if a file.
pub struct Opened {
    pub reader: Box<dyn Read + Send>,
    pub compression: Compression,
    pub size: Option<u64>,
}

/// Opens `name` (`-`: standard input) and decompresses it if it starts
/// as gzip or zstd data does.
pub fn open(name: &str) -> io::Result<Opened> {
    let (raw, size): (Box<dyn Read + Send>, Option<u64>) = if name == "-" {
        (Box::new(io::stdin()), None)
    } else {
        let f = File::open(name)?;
        let meta = f.metadata()?;
        if meta.is_dir() {
            return Err(io::Error::other("is a directory"));
        }
        (Box::new(f), Some(meta.len()))
    };
    let mut head = vec![0u8; 4];
    let mut got = 0;
    let mut raw = raw;
    while got < head.len() {
        match raw.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    head.truncate(got);
    let compression = if head.starts_with(&[0x1f, 0x8b]) {
        Compression::Gzip
    } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        Compression::Zstd
    } else {
        Compression::None
    };
    let peeked = Peeked {
        head,
        at: 0,
        inner: raw,
    };
    let reader: Box<dyn Read + Send> = match compression {
        Compression::None => Box::new(peeked),
        Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(peeked)),
        Compression::Zstd => Box::new(zstd::stream::read::Decoder::new(peeked)?),
    };
    Ok(Opened {
        reader,
        compression,
        size,
    })
}

/// Reads until `buf` holds `want` more bytes or the input ends; false at the end.
pub fn fill(r: &mut dyn Read, buf: &mut Vec<u8>, want: usize) -> io::Result<bool> {
    let target = buf.len() + want;
    buf.reserve(want);
    while buf.len() < target {
        let old = buf.len();
        buf.resize(target, 0);
        match r.read(&mut buf[old..]) {
            Ok(0) => {
                buf.truncate(old);
                return Ok(false);
            }
            Ok(n) => buf.truncate(old + n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => buf.truncate(old),
            Err(e) => {
                buf.truncate(old);
                return Err(e);
            }
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn read_all(name: &str) -> (Vec<u8>, Compression) {
        let mut o = open(name).unwrap();
        let mut v = Vec::new();
        while fill(&mut o.reader, &mut v, 3).unwrap() {}
        (v, o.compression)
    }

    #[test]
    fn plain_gzip_and_zstd() {
        let dir = tempfile::tempdir().unwrap();
        let text = b"# Time: 261127 10:31:38\nselect 1;\n".repeat(100);
        let plain = dir.path().join("slow.log");
        std::fs::write(&plain, &text).unwrap();
        let gz = dir.path().join("slow.log.gz");
        let mut e =
            flate2::write::GzEncoder::new(File::create(&gz).unwrap(), flate2::Compression::fast());
        e.write_all(&text).unwrap();
        e.finish().unwrap();
        let zst = dir.path().join("slow.log.zst");
        std::fs::write(&zst, zstd::stream::encode_all(&text[..], 3).unwrap()).unwrap();
        assert_eq!(
            read_all(plain.to_str().unwrap()),
            (text.clone(), Compression::None)
        );
        assert_eq!(
            read_all(gz.to_str().unwrap()),
            (text.clone(), Compression::Gzip)
        );
        assert_eq!(
            read_all(zst.to_str().unwrap()),
            (text.clone(), Compression::Zstd)
        );
        let tiny = dir.path().join("tiny");
        std::fs::write(&tiny, b"a").unwrap();
        assert_eq!(
            read_all(tiny.to_str().unwrap()),
            (b"a".to_vec(), Compression::None)
        );
        assert!(open(dir.path().join("none").to_str().unwrap()).is_err());
        assert!(open(dir.path().to_str().unwrap()).is_err());
    }
}
