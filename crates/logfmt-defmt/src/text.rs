//! A fixed-size text buffer for `core::fmt`: what does not fit is cut (at a character
//! boundary), never an error.

/// Up to `N` bytes of UTF-8 text.
#[derive(Debug)]
pub(crate) struct Text<const N: usize> {
    buf: [u8; N],
    len: usize,
}

impl<const N: usize> Text<N> {
    pub(crate) const fn new() -> Self {
        Self {
            buf: [0; N],
            len: 0,
        }
    }

    pub(crate) fn as_str(&self) -> &str {
        let bytes = self.buf.get(..self.len).unwrap_or_default();
        core::str::from_utf8(bytes).unwrap_or_default()
    }
}

impl<const N: usize> core::fmt::Write for Text<N> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let room = N - self.len;
        let mut take = s.len().min(room);
        while !s.is_char_boundary(take) {
            take -= 1;
        }
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

#[cfg(test)]
mod tests {
    use super::Text;
    use core::fmt::Write;

    #[test]
    fn long_text_is_cut_at_a_character_boundary() {
        let mut t = Text::<5>::new();
        t.write_str("abçdef").unwrap();
        assert_eq!(t.as_str(), "abçd");
    }
}
