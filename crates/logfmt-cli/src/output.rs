//! How `logfmt` prints: `cat`'s formats of a record (printed by
//! [`crate::cmd::cat_printer::RecordPrinter`]), and the one JSON layout of every `--json` output.

use std::fmt;
use std::io::{self, Write};

use serde::Serialize;

/// How `cat` prints each record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub(crate) enum OutputFormat {
    /// The payload bytes, then a newline; on a terminal, escaped as `leveldbutil` escapes
    /// them (printable ASCII as it is, other bytes as \xNN), so that no byte of a record can
    /// drive the terminal.
    #[default]
    Lines,
    /// The payload bytes as they are, then a newline, even on a terminal.
    Raw,
    /// `lines` on a terminal: escaped (chosen by `cat`, not on the command line).
    #[value(skip)]
    Escaped,
    /// The payload in lowercase hex, then a newline.
    Hex,
    /// One JSON object per line: the offset of the record's first chunk, the length and the
    /// payload in lowercase hex, as in {"offset": 0, "length": 3, "hex": "666f6f"}.
    Json,
    /// A u32 little-endian length, then the payload (the input of `write --input framed`).
    Framed,
}

/// Why a record could not be printed.
#[derive(Debug)]
pub(crate) enum OutputError {
    /// Writing standard output failed.
    Write(io::Error),
    /// Writing a file named on the command line (`map --html OUT`) failed.
    File {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        error: io::Error,
    },
    /// The record is too long for a u32 frame length.
    TooLongForFrame {
        /// File offset of the record.
        offset: u64,
        /// Its length.
        len: u64,
    },
}

impl fmt::Display for OutputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Write(_) => f.write_str("cannot write standard output"),
            Self::File { path, .. } => write!(
                f,
                "cannot write {}",
                logfmt_std::advanced::EscapedPath::new(path)
            ),
            Self::TooLongForFrame { offset, len } => write!(
                f,
                "the record at offset {offset} ({len} bytes) is too long for --output framed"
            ),
        }
    }
}

impl std::error::Error for OutputError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Write(e) | Self::File { error: e, .. } => Some(e),
            Self::TooLongForFrame { .. } => None,
        }
    }
}

impl From<io::Error> for OutputError {
    fn from(e: io::Error) -> Self {
        Self::Write(e)
    }
}

/// The layout of every JSON line `logfmt` prints: compact, with a space after each `:` and
/// `,` (`{"offset": 0, "sizes": [1, 2]}`); strings escaped as serde_json's compact layout
/// escapes them.
struct Spaced;

impl serde_json::ser::Formatter for Spaced {
    fn begin_array_value<W: ?Sized + Write>(&mut self, out: &mut W, first: bool) -> io::Result<()> {
        if first { Ok(()) } else { out.write_all(b", ") }
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, out: &mut W, first: bool) -> io::Result<()> {
        if first { Ok(()) } else { out.write_all(b", ") }
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, out: &mut W) -> io::Result<()> {
        out.write_all(b": ")
    }
}

/// Prints `value` as one line of JSON: a struct's keys in the order its fields are declared,
/// in the layout of [`Spaced`].
pub(crate) fn write_json_line<W: Write>(out: &mut W, value: &impl Serialize) -> io::Result<()> {
    let mut serializer = serde_json::Serializer::with_formatter(&mut *out, Spaced);
    value.serialize(&mut serializer)?;
    out.write_all(b"\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_lines_keep_declaration_order_and_spacing() {
        #[derive(Serialize)]
        struct Inner {
            b: Option<u64>,
            #[serde(skip_serializing_if = "Option::is_none")]
            skipped: Option<u64>,
        }
        #[derive(Serialize)]
        struct Doc {
            z: u64,
            a: Vec<Option<&'static str>>,
            m: Inner,
            e: Vec<u64>,
            s: &'static str,
        }
        let doc = Doc {
            z: 1,
            a: vec![None, Some("x\"y")],
            m: Inner {
                b: None,
                skipped: None,
            },
            e: vec![],
            s: "\u{1}\u{e9}\\\n",
        };
        let mut out = Vec::new();
        write_json_line(&mut out, &doc).expect("writing to memory");
        let text = String::from_utf8(out).expect("UTF-8");
        assert_eq!(
            text,
            "{\"z\": 1, \"a\": [null, \"x\\\"y\"], \"m\": {\"b\": null}, \"e\": [], \
             \"s\": \"\\u0001\u{e9}\\\\\\n\"}\n"
        );
        let parsed: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
        assert_eq!(parsed["a"][1], "x\"y");
    }
}
