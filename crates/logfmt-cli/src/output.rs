//! How `logfmt` prints: `cat`'s records, and the one JSON layout of every `--json` output.

use std::cell::RefCell;
use std::fmt;
use std::io::{self, Write};

use serde::{Serialize, Serializer};

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

/// What a record's payload is pushed into, in order and in pieces. It fails only if printing
/// failed: the source then stops.
pub(crate) type Sink<'a> = &'a mut dyn FnMut(&[u8]) -> Result<(), OutputError>;

impl OutputFormat {
    /// Prints the record at file offset `offset` (with its `index` in the pack there, for a
    /// record from a pack).
    pub(crate) fn write_record<W: Write>(
        self,
        out: &mut W,
        offset: u64,
        index: Option<u32>,
        data: &[u8],
    ) -> Result<(), OutputError> {
        self.write_streamed(out, offset, index, data.len() as u64, |sink| sink(data))
    }

    /// Prints the record at file offset `offset`, of `len` bytes, whose payload `payload`
    /// pushes into the sink it is given, piece by piece: the record is never held whole.
    ///
    /// Nothing is printed if the record is refused (too long for a frame). If `payload`
    /// fails, its error is returned and the record is left unfinished: a JSON record is cut
    /// before its closing quote, so that no line looks complete that is not.
    pub(crate) fn write_streamed<W: Write, E: From<OutputError>>(
        self,
        out: &mut W,
        offset: u64,
        index: Option<u32>,
        len: u64,
        payload: impl FnOnce(Sink<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        match self {
            Self::Lines | Self::Raw => {
                payload(&mut |piece| Ok(out.write_all(piece)?))?;
                out.write_all(b"\n").map_err(OutputError::Write)?;
            }
            Self::Escaped => {
                payload(&mut |piece| Ok(crate::escape::write_escaped(out, piece)?))?;
                out.write_all(b"\n").map_err(OutputError::Write)?;
            }
            Self::Hex => {
                payload(&mut |piece| Ok(hex(piece, |text| out.write_all(text.as_bytes()))?))?;
                out.write_all(b"\n").map_err(OutputError::Write)?;
            }
            Self::Json => {
                let hex = HexPayload::new(payload);
                let mut cut = Cut { out, hex: &hex };
                let record = JsonRecord {
                    offset,
                    index,
                    length: len,
                    hex: &hex,
                };
                let printed = write_json_line(&mut cut, &record);
                hex.failure()?;
                printed.map_err(OutputError::Write)?;
            }
            Self::Framed => {
                let len =
                    u32::try_from(len).map_err(|_| OutputError::TooLongForFrame { offset, len })?;
                out.write_all(&len.to_le_bytes())
                    .map_err(OutputError::Write)?;
                payload(&mut |piece| Ok(out.write_all(piece)?))?;
            }
        }
        Ok(())
    }
}

/// One record of `cat --output json`: the offset of its first chunk, its length and its
/// payload in lowercase hex, as in {"offset": 0, "length": 3, "hex": "666f6f"}; a record from
/// a pack has the pack's offset and its index in the pack, as in
/// {"offset": 0, "index": 2, "length": 3, "hex": "666f6f"}.
#[derive(Serialize)]
struct JsonRecord<H> {
    /// The offset of the record's first chunk (of its pack, for a record from a pack).
    offset: u64,
    /// Its index in its pack, for a record from a pack.
    #[serde(skip_serializing_if = "Option::is_none")]
    index: Option<u32>,
    /// Its payload's length.
    length: u64,
    /// Its payload, in lowercase hex.
    hex: H,
}

/// A payload printed as one JSON string of lowercase hex as its source pushes it, piece by
/// piece; a failure of the source is kept for [`failure`](Self::failure).
struct HexPayload<P, E> {
    /// The source, until it is printed.
    source: RefCell<Option<P>>,
    /// How the source failed, if it did.
    failed: RefCell<Option<E>>,
}

impl<P, E> HexPayload<P, E>
where
    P: FnOnce(Sink<'_>) -> Result<(), E>,
{
    fn new(source: P) -> Self {
        Self {
            source: RefCell::new(Some(source)),
            failed: RefCell::new(None),
        }
    }

    fn has_failed(&self) -> bool {
        self.failed.borrow().is_some()
    }

    /// How the source failed, if it did.
    fn failure(&self) -> Result<(), E> {
        self.failed.borrow_mut().take().map_or(Ok(()), Err)
    }
}

impl<P, E> fmt::Display for HexPayload<P, E>
where
    P: FnOnce(Sink<'_>) -> Result<(), E>,
{
    /// Writes the payload as its source pushes it. Returns an error only if writing failed
    /// (serde_json then reports its writer's error); a failure of the source is kept, and
    /// [`Cut`] stops what follows.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(source) = self.source.borrow_mut().take() else {
            return Ok(());
        };
        let mut unwritable = false;
        let pushed = source(&mut |piece| {
            if !unwritable && hex(piece, |text| f.write_str(text)).is_ok() {
                return Ok(());
            }
            unwritable = true;
            // Stands for the writer's error, which serde_json keeps and reports.
            Err(OutputError::Write(io::Error::other("cannot write")))
        });
        match pushed {
            _ if unwritable => Err(fmt::Error),
            Err(e) => {
                *self.failed.borrow_mut() = Some(e);
                Ok(())
            }
            Ok(()) => Ok(()),
        }
    }
}

impl<P, E> Serialize for HexPayload<P, E>
where
    P: FnOnce(Sink<'_>) -> Result<(), E>,
{
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// A writer that refuses to write once the payload's source has failed: the JSON record
/// stops where its payload did.
struct Cut<'a, W, P, E> {
    out: &'a mut W,
    hex: &'a HexPayload<P, E>,
}

impl<W: Write, P, E> Write for Cut<'_, W, P, E>
where
    P: FnOnce(Sink<'_>) -> Result<(), E>,
{
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.hex.has_failed() {
            return Err(io::Error::other("the record's payload could not be read"));
        }
        self.out.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// Passes `data` in lowercase hex to `emit`, a piece at a time.
fn hex<E>(data: &[u8], mut emit: impl FnMut(&str) -> Result<(), E>) -> Result<(), E> {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut text = [0u8; 2048];
    for chunk in data.chunks(text.len() / 2) {
        for (pair, byte) in text.chunks_exact_mut(2).zip(chunk) {
            pair.copy_from_slice(&[
                DIGITS[usize::from(byte >> 4)],
                DIGITS[usize::from(byte & 0x0f)],
            ]);
        }
        let digits = text.get(..chunk.len() * 2).unwrap_or_default();
        // Hex digits are ASCII: always UTF-8.
        emit(std::str::from_utf8(digits).unwrap_or_default())?;
    }
    Ok(())
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

    fn printed(format: OutputFormat, offset: u64, data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        format
            .write_record(&mut out, offset, None, data)
            .expect("writing to memory");
        out
    }

    #[test]
    fn formats() {
        assert_eq!(printed(OutputFormat::Lines, 0, b"a b"), b"a b\n");
        assert_eq!(printed(OutputFormat::Lines, 0, b""), b"\n");
        assert_eq!(printed(OutputFormat::Raw, 0, b"\x1b[2J"), b"\x1b[2J\n");
        assert_eq!(printed(OutputFormat::Escaped, 0, b"\x1b[2J"), b"\\x1b[2J\n");
        assert_eq!(printed(OutputFormat::Hex, 0, b"\x00\xffAz"), b"00ff417a\n");
        assert_eq!(printed(OutputFormat::Hex, 0, b""), b"\n");
        assert_eq!(
            printed(OutputFormat::Json, 27, b"\x01\xab"),
            b"{\"offset\": 27, \"length\": 2, \"hex\": \"01ab\"}\n"
        );
        assert_eq!(
            printed(OutputFormat::Json, 0, b""),
            b"{\"offset\": 0, \"length\": 0, \"hex\": \"\"}\n"
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
        let expected: String = data.iter().map(|b| format!("{b:02x}")).collect();
        let hex = printed(OutputFormat::Hex, 0, &data);
        assert_eq!(String::from_utf8(hex).ok(), Some(format!("{expected}\n")));
        let json = printed(OutputFormat::Json, 9, &data);
        let value: serde_json::Value = serde_json::from_slice(&json).expect("valid JSON");
        assert_eq!(value["hex"], expected.as_str());
        assert_eq!(value["length"], 5000);
    }

    #[test]
    fn json_is_valid_json() {
        let line = printed(OutputFormat::Json, 1 << 40, b"hi");
        let value: serde_json::Value = serde_json::from_slice(&line).expect("valid JSON");
        assert_eq!(value["offset"], 1u64 << 40);
        assert_eq!(value["length"], 2);
        assert_eq!(value["hex"], "6869");
    }

    /// A source that pushes `pieces`, then fails if `fails`.
    fn streamed(format: OutputFormat, pieces: &[&[u8]], fails: bool) -> (Vec<u8>, Option<String>) {
        let len = pieces.iter().map(|p| p.len() as u64).sum();
        let mut out = Vec::new();
        let result = format.write_streamed(&mut out, 5, None, len, |sink| {
            for piece in pieces {
                sink(piece).map_err(|e| e.to_string())?;
            }
            if fails {
                Err("changed".to_owned())
            } else {
                Ok(())
            }
        });
        (out, result.err())
    }

    impl From<OutputError> for String {
        fn from(e: OutputError) -> Self {
            e.to_string()
        }
    }

    #[test]
    fn a_record_streamed_in_pieces_prints_as_one() {
        let pieces: &[&[u8]] = &[b"ab", b"", b"\xff"];
        for format in [
            OutputFormat::Lines,
            OutputFormat::Hex,
            OutputFormat::Json,
            OutputFormat::Framed,
        ] {
            let (out, error) = streamed(format, pieces, false);
            assert_eq!(error, None);
            assert_eq!(out, printed(format, 5, b"ab\xff"), "{format:?}");
        }
    }

    #[test]
    fn a_failing_source_leaves_the_json_record_unfinished() {
        let (out, error) = streamed(OutputFormat::Json, &[b"ab", b"c"], true);
        assert_eq!(error.as_deref(), Some("changed"));
        assert_eq!(out, b"{\"offset\": 5, \"length\": 3, \"hex\": \"616263");
        let (out, error) = streamed(OutputFormat::Json, &[], true);
        assert_eq!(error.as_deref(), Some("changed"));
        assert_eq!(out, b"{\"offset\": 5, \"length\": 0, \"hex\": \"");
    }

    /// A writer that takes `room` bytes, then fails.
    struct Full {
        room: usize,
        taken: Vec<u8>,
    }

    impl Write for Full {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if buf.len() > self.room {
                return Err(io::ErrorKind::BrokenPipe.into());
            }
            self.room -= buf.len();
            self.taken.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_write_error_is_the_writers() {
        // The line is `{"offset": 5, "length": 4, "hex": "` (36 bytes), 8 digits, `"}`.
        for (room, pieces) in [(0, 0), (10, 0), (40, 1), (44, 2)] {
            let mut out = Full {
                room,
                taken: Vec::new(),
            };
            let pushed = std::cell::Cell::new(0);
            let result = OutputFormat::Json.write_streamed(&mut out, 5, None, 4, |sink| {
                for piece in [b"ab", b"cd"] {
                    sink(piece)?;
                    pushed.set(pushed.get() + 1);
                }
                Ok::<(), OutputError>(())
            });
            match result {
                Err(OutputError::Write(e)) => {
                    assert_eq!(e.kind(), io::ErrorKind::BrokenPipe, "room {room}")
                }
                other => panic!("room {room}: {other:?}"),
            }
            assert!(out.taken.len() <= room);
            assert_eq!(
                pushed.get(),
                pieces,
                "room {room}: the source goes on after a failure"
            );
        }
    }

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
