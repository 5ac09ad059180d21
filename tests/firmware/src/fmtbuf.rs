//! Formatting into a fixed buffer (no allocator).

use core::fmt;

/// Text formatted into `N` bytes; longer text is cut at a character boundary.
#[derive(Clone)]
pub struct FmtBuf<const N: usize> {
    buf: [u8; N],
    len: usize,
}

impl<const N: usize> FmtBuf<N> {
    /// An empty buffer.
    pub const fn new() -> Self {
        Self {
            buf: [0; N],
            len: 0,
        }
    }

    /// `args`, formatted.
    pub fn format(args: fmt::Arguments<'_>) -> Self {
        let mut s = Self::new();
        let _ = fmt::write(&mut s, args);
        s
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        let bytes = self.buf.get(..self.len).unwrap_or_default();
        match core::str::from_utf8(bytes) {
            Ok(s) => s,
            // Cut inside a character: keep the valid prefix.
            Err(e) => core::str::from_utf8(bytes.get(..e.valid_up_to()).unwrap_or_default())
                .unwrap_or_default(),
        }
    }
}

impl<const N: usize> Default for FmtBuf<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> fmt::Write for FmtBuf<N> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let room = N - self.len;
        let take = s.len().min(room);
        if let (Some(dst), Some(src)) = (
            self.buf.get_mut(self.len..self.len + take),
            s.as_bytes().get(..take),
        ) {
            dst.copy_from_slice(src);
            self.len += take;
        }
        Ok(())
    }
}

impl<const N: usize> fmt::Display for FmtBuf<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
