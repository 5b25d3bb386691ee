//! Substring search for the short needles of the parsers: memchr on the
//! first byte, then a compare. (memchr's `memmem::find` builds a searcher
//! on every call, which costs more than the search on a log's short lines.)

/// Where `needle` first occurs in `hay`.
#[inline]
pub fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let (&first, rest) = needle.split_first()?;
    let mut from = 0;
    while let Some(p) = memchr::memchr(first, &hay[from..]) {
        let at = from + p;
        if hay[at + 1..].starts_with(rest) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// Where `needle` last occurs in `hay`.
#[inline]
pub fn rfind(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let (&first, rest) = needle.split_first()?;
    let mut end = hay.len();
    while let Some(at) = memchr::memrchr(first, &hay[..end]) {
        if hay[at + 1..].starts_with(rest) {
            return Some(at);
        }
        end = at;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds() {
        assert_eq!(find(b"a;\n;\n#b", b";\n#"), Some(3));
        assert_eq!(rfind(b";\n#a;\n#b;\n", b";\n#"), Some(4));
        assert_eq!(find(b"abc", b"abcd"), None);
        assert_eq!(find(b"abc", b""), None);
        assert_eq!(rfind(b"", b"x"), None);
    }
}
