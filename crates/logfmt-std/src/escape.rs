//! Names and text shown on a terminal with their control characters escaped, so that a file
//! name holding escape sequences cannot drive the terminal that shows a message.

use std::fmt;
use std::path::Path;

/// Text shown with control characters (and the invisible characters that reorder text)
/// escaped as Rust escapes them (`\n`, `\u{1b}`); everything else as it is.
///
/// ```
/// use logfmt_std::advanced::Escaped;
///
/// assert_eq!(Escaped::new("a\x1b[2Jb.log").to_string(), r"a\u{1b}[2Jb.log");
/// assert_eq!(Escaped::new("journal é.log").to_string(), "journal é.log");
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Escaped<'a>(&'a str);

impl<'a> Escaped<'a> {
    /// `text`, to be shown escaped.
    pub fn new(text: &'a str) -> Self {
        Self(text)
    }
}

impl fmt::Display for Escaped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in self.0.chars() {
            if needs_escape(c) {
                write!(f, "{}", c.escape_default())?;
            } else {
                fmt::Write::write_char(f, c)?;
            }
        }
        Ok(())
    }
}

/// A path shown with its control characters escaped (bytes that are not UTF-8 are shown as
/// U+FFFD, as [`Path::display`] shows them).
///
/// ```
/// use std::path::Path;
/// use logfmt_std::advanced::EscapedPath;
///
/// let name = Path::new("/tmp/\x1b]0;pwned\x07.log");
/// assert_eq!(EscapedPath::new(name).to_string(), r"/tmp/\u{1b}]0;pwned\u{7}.log");
/// ```
#[derive(Debug, Clone, Copy)]
pub struct EscapedPath<'a>(&'a Path);

impl<'a> EscapedPath<'a> {
    /// `path`, to be shown escaped.
    pub fn new(path: &'a Path) -> Self {
        Self(path)
    }
}

impl fmt::Display for EscapedPath<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.to_str() {
            Some(text) => Escaped(text).fmt(f),
            None => Escaped(&self.0.to_string_lossy()).fmt(f),
        }
    }
}

/// Control characters, and the format characters that reorder or hide text (bidirectional
/// overrides and isolates, zero-width marks).
fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_escaped_and_the_rest_kept() {
        let shown = |s: &str| Escaped::new(s).to_string();
        assert_eq!(shown("plain.log"), "plain.log");
        assert_eq!(shown("a\nb\tc\rd"), r"a\nb\tc\rd");
        assert_eq!(shown("\u{7f}\u{9b}"), r"\u{7f}\u{9b}");
        assert_eq!(shown("evil\u{202e}gol.exe"), r"evil\u{202e}gol.exe");
        assert_eq!(shown("日本.log"), "日本.log");
    }

    #[cfg(unix)]
    #[test]
    fn bytes_that_are_not_utf8_are_replaced() {
        use std::os::unix::ffi::OsStrExt;
        let path = Path::new(std::ffi::OsStr::from_bytes(b"a\xff\x1b.log"));
        assert_eq!(EscapedPath::new(path).to_string(), "a\u{fffd}\\u{1b}.log");
    }
}
