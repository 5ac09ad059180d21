//! How `logfmt cat` prints records.

use std::fmt;
use std::io::{self, Write};

/// How `cat` prints each record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub(crate) enum OutputFormat {
    /// The payload bytes, then a newline.
    #[default]
    Lines,
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
    /// Writing failed.
    Write(io::Error),
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
            Self::Write(e) => Some(e),
            Self::TooLongForFrame { .. } => None,
        }
    }
}

impl From<io::Error> for OutputError {
    fn from(e: io::Error) -> Self {
        Self::Write(e)
    }
}

impl OutputFormat {
    /// Prints the record at file offset `offset` to `out`.
    pub(crate) fn write_record<W: Write>(
        self,
        out: &mut W,
        offset: u64,
        data: &[u8],
    ) -> Result<(), OutputError> {
        self.begin(out, offset, data.len() as u64)?;
        self.part(out, data)?;
        self.end(out)
    }

    /// Starts printing the record at file offset `offset`, of `len` bytes: then its payload
    /// goes to [`part`](Self::part) in pieces, and [`end`](Self::end) ends it. Nothing is
    /// printed if it fails.
    pub(crate) fn begin<W: Write>(
        self,
        out: &mut W,
        offset: u64,
        len: u64,
    ) -> Result<(), OutputError> {
        match self {
            Self::Lines | Self::Hex => {}
            Self::Json => write!(
                out,
                "{{\"offset\": {offset}, \"length\": {len}, \"hex\": \""
            )?,
            Self::Framed => {
                let len =
                    u32::try_from(len).map_err(|_| OutputError::TooLongForFrame { offset, len })?;
                out.write_all(&len.to_le_bytes())?;
            }
        }
        Ok(())
    }

    /// Prints a piece of the payload of the record begun.
    pub(crate) fn part<W: Write>(self, out: &mut W, data: &[u8]) -> Result<(), OutputError> {
        match self {
            Self::Lines | Self::Framed => out.write_all(data)?,
            Self::Hex | Self::Json => write_hex(out, data)?,
        }
        Ok(())
    }

    /// Ends the record begun.
    pub(crate) fn end<W: Write>(self, out: &mut W) -> Result<(), OutputError> {
        match self {
            Self::Lines | Self::Hex => out.write_all(b"\n")?,
            Self::Json => out.write_all(b"\"}\n")?,
            Self::Framed => {}
        }
        Ok(())
    }
}

/// Writes `data` as lowercase hex.
fn write_hex<W: Write>(out: &mut W, data: &[u8]) -> io::Result<()> {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut text = [0u8; 2048];
    for chunk in data.chunks(text.len() / 2) {
        for (pair, byte) in text.chunks_exact_mut(2).zip(chunk) {
            pair.copy_from_slice(&[
                DIGITS[usize::from(byte >> 4)],
                DIGITS[usize::from(byte & 0x0f)],
            ]);
        }
        out.write_all(text.get(..chunk.len() * 2).unwrap_or_default())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn printed(format: OutputFormat, offset: u64, data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        format
            .write_record(&mut out, offset, data)
            .expect("writing to memory");
        out
    }

    #[test]
    fn formats() {
        assert_eq!(printed(OutputFormat::Lines, 0, b"a b"), b"a b\n");
        assert_eq!(printed(OutputFormat::Lines, 0, b""), b"\n");
        assert_eq!(printed(OutputFormat::Hex, 0, b"\x00\xffAz"), b"00ff417a\n");
        assert_eq!(printed(OutputFormat::Hex, 0, b""), b"\n");
        assert_eq!(
            printed(OutputFormat::Json, 27, b"\x01\xab"),
            b"{\"offset\": 27, \"length\": 2, \"hex\": \"01ab\"}\n"
        );
        assert_eq!(
            printed(OutputFormat::Framed, 0, b"xyz"),
            b"\x03\x00\x00\x00xyz"
        );
        assert_eq!(printed(OutputFormat::Framed, 0, b""), b"\x00\x00\x00\x00");
    }

    #[test]
    fn long_hex_is_complete() {
        let data: Vec<u8> = (0..5000u32).map(|i| (i * 7) as u8).collect();
        let hex = printed(OutputFormat::Hex, 0, &data);
        let expected: String = data.iter().map(|b| format!("{b:02x}")).collect::<String>() + "\n";
        assert_eq!(String::from_utf8(hex).ok(), Some(expected));
    }

    #[test]
    fn json_is_valid_json() {
        let line = printed(OutputFormat::Json, 1 << 40, b"hi");
        let value: serde_json::Value = serde_json::from_slice(&line).expect("valid JSON");
        assert_eq!(value["offset"], 1u64 << 40);
        assert_eq!(value["length"], 2);
        assert_eq!(value["hex"], "6869");
    }
}

/// A JSON value printed with its object keys in the order given, as `{"key": value, ...}`:
/// the stable layout of every `--json` output.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Json {
    /// `null`.
    Null,
    /// A number.
    Num(u64),
    /// A string.
    Str(String),
    /// An array.
    Arr(Vec<Json>),
    /// An object, keys in order.
    Obj(Vec<(&'static str, Json)>),
}

impl Json {
    /// An object of `pairs`.
    pub(crate) fn obj<const N: usize>(pairs: [(&'static str, Json); N]) -> Self {
        Self::Obj(pairs.into())
    }

    /// A string.
    pub(crate) fn str(s: impl Into<String>) -> Self {
        Self::Str(s.into())
    }
}

impl<T: Into<Json>> From<Option<T>> for Json {
    fn from(value: Option<T>) -> Self {
        value.map_or(Self::Null, Into::into)
    }
}

impl From<u64> for Json {
    fn from(n: u64) -> Self {
        Self::Num(n)
    }
}

impl fmt::Display for Json {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Null => f.write_str("null"),
            Self::Num(n) => write!(f, "{n}"),
            Self::Str(s) => write!(f, "{}", serde_json::Value::String(s.clone())),
            Self::Arr(items) => {
                f.write_str("[")?;
                for (i, item) in items.iter().enumerate() {
                    let separator = if i == 0 { "" } else { ", " };
                    write!(f, "{separator}{item}")?;
                }
                f.write_str("]")
            }
            Self::Obj(pairs) => {
                f.write_str("{")?;
                for (i, (key, value)) in pairs.iter().enumerate() {
                    let separator = if i == 0 { "" } else { ", " };
                    write!(f, "{separator}\"{key}\": {value}")?;
                }
                f.write_str("}")
            }
        }
    }
}

#[cfg(test)]
mod json_tests {
    use super::Json;

    #[test]
    fn keys_keep_their_order() {
        let doc = Json::obj([
            ("z", Json::Num(1)),
            ("a", Json::Arr(vec![Json::Null, Json::str("x\"y")])),
            ("m", Json::obj([])),
        ]);
        assert_eq!(doc.to_string(), r#"{"z": 1, "a": [null, "x\"y"], "m": {}}"#);
        let parsed: serde_json::Value = serde_json::from_str(&doc.to_string()).expect("valid JSON");
        assert_eq!(parsed["a"][1], "x\"y");
    }
}
