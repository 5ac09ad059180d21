//! `cat`'s record printer: the stream of records the scan reads goes through one
//! [`RecordPrinter`], a `&mut self` sink that writes each record as its format says — a
//! record held in memory from the reader's buffer, one too long to hold as its source pushes
//! it, piece by piece, straight to the output. The parallel pass and the one reader call the
//! same printer (one per worker).
//!
//! The layouts, one per `--output` format, are the three steps of [`Layout`]: what comes
//! before the payload, each piece of the payload, what comes after it.

use std::io::{self, Write};

use crate::decode::{Content, Printer, Style, Undecoded};
use crate::error::CliError;
use crate::output::{OutputError, OutputFormat};

/// What a streamed record's payload is pushed into, in order and in pieces. It fails only if
/// printing failed: the source then stops.
pub(crate) type Sink<'a> = &'a mut dyn FnMut(&[u8]) -> Result<(), OutputError>;

/// Prints `cat`'s records: raw, as `--output` says (the payload then a newline, escaped, in
/// hex, framed, or one JSON line {"offset", "index" (a record of a pack), "length", "hex"}),
/// or decoded (a WriteBatch, a VersionEdit) in its style.
pub(crate) struct RecordPrinter<'a> {
    /// The layout of a raw record.
    layout: Layout,
    /// What the records hold.
    content: Content,
    /// How a decoded record is printed.
    style: Style,
    /// The file's name on each decoded JSON record, when several files are printed.
    label: Option<&'a str>,
    /// The line buffer a decoded record is built in, reused from record to record.
    lines: Printer,
}

impl<'a> RecordPrinter<'a> {
    /// A printer of records holding `content`: raw ones as `output` says, decoded ones in
    /// `style`, labelled `label` in JSON.
    pub(crate) fn new(
        output: OutputFormat,
        content: Content,
        style: Style,
        label: Option<&'a str>,
    ) -> Self {
        Self {
            layout: Layout(output),
            content,
            style,
            label,
            lines: Printer::default(),
        }
    }

    /// The timestamp sizes applied to the user keys of the write batches printed.
    pub(crate) fn timestamps(mut self, timestamps: crate::decode::Timestamps) -> Self {
        self.lines.set_timestamps(timestamps);
        self
    }

    /// What the records are printed as, from now on (raw, when the first record is found not
    /// to decode).
    pub(crate) fn set_content(&mut self, content: Content) {
        self.content = content;
    }

    /// Prints the record `data` at file offset `offset` (with its `index` in the pack there,
    /// for a record from a pack). Returns what could not be decoded, if anything (printed in
    /// place too).
    ///
    /// # Errors
    /// Writing failed, or the record is too long for `--output framed` (nothing printed).
    #[inline]
    pub(crate) fn record(
        &mut self,
        out: &mut impl Write,
        offset: u64,
        index: Option<u32>,
        data: &[u8],
    ) -> Result<Option<Undecoded>, CliError> {
        if self.content != Content::Raw {
            let (content, style) = (self.content, self.style);
            return Ok(self
                .lines
                .write_record(out, content, style, offset, data, self.label)?);
        }
        self.raw(out, offset, index, data)?;
        Ok(None)
    }

    /// Prints the record `data` at file offset `offset` as it is, in the `--output` layout.
    ///
    /// # Errors
    /// Writing failed, or the record is too long for `--output framed` (nothing printed).
    fn raw(
        &mut self,
        out: &mut impl Write,
        offset: u64,
        index: Option<u32>,
        data: &[u8],
    ) -> Result<(), CliError> {
        self.layout.begin(out, offset, index, data.len() as u64)?;
        self.layout.piece(out, data)?;
        self.layout.end(out, self.label).map_err(CliError::from)
    }

    /// Prints the raw record at file offset `offset`, of `length` bytes, whose payload
    /// `source` pushes into the sink it is given, piece by piece, straight to `out`: the
    /// record is never held whole.
    ///
    /// # Errors
    /// The source's failure, or a failed write: the record is left unfinished (a JSON record
    /// is cut before its closing quote, so that no line looks complete that is not). Too long
    /// for `--output framed`: nothing printed.
    pub(crate) fn streamed(
        &mut self,
        out: &mut impl Write,
        offset: u64,
        length: u64,
        source: impl FnOnce(Sink<'_>) -> Result<(), CliError>,
    ) -> Result<(), CliError> {
        let layout = self.layout;
        layout.begin(out, offset, None, length)?;
        source(&mut |piece| Ok(layout.piece(out, piece)?))?;
        layout.end(out, self.label)?;
        Ok(())
    }
}

/// A raw record's layout: the `--output` format's three steps.
#[derive(Debug, Clone, Copy)]
struct Layout(OutputFormat);

impl Layout {
    /// What comes before the payload: a JSON record's keys, a frame's length.
    #[inline(always)]
    fn begin(
        self,
        out: &mut impl Write,
        offset: u64,
        index: Option<u32>,
        length: u64,
    ) -> Result<(), CliError> {
        match self.0 {
            OutputFormat::Json => {
                let mut number = itoa::Buffer::new();
                out.write_all(b"{\"offset\": ")?;
                out.write_all(number.format(offset).as_bytes())?;
                if let Some(index) = index {
                    out.write_all(b", \"index\": ")?;
                    out.write_all(number.format(index).as_bytes())?;
                }
                out.write_all(b", \"length\": ")?;
                out.write_all(number.format(length).as_bytes())?;
                out.write_all(b", \"hex\": \"")?;
            }
            OutputFormat::Framed => {
                let len = u32::try_from(length).map_err(|_| OutputError::TooLongForFrame {
                    offset,
                    len: length,
                })?;
                out.write_all(&len.to_le_bytes())?;
            }
            OutputFormat::Lines | OutputFormat::Raw | OutputFormat::Escaped | OutputFormat::Hex => {
            }
        }
        Ok(())
    }

    /// A piece of the payload: as it is, escaped, or in hex.
    #[inline]
    fn piece(self, out: &mut impl Write, data: &[u8]) -> io::Result<()> {
        match self.0 {
            OutputFormat::Lines | OutputFormat::Raw | OutputFormat::Framed => out.write_all(data),
            OutputFormat::Escaped => crate::escape::write_escaped(out, data),
            OutputFormat::Hex | OutputFormat::Json => hex(data, |text| out.write_all(text)),
        }
    }

    /// What comes after the payload: a newline, a JSON record's closing quote, its `file`
    /// (`label`, when several files are printed) and its closing brace.
    #[inline(always)]
    fn end(self, out: &mut impl Write, label: Option<&str>) -> io::Result<()> {
        match self.0 {
            OutputFormat::Json => {
                out.write_all(b"\"")?;
                if let Some(file) = label {
                    out.write_all(b", \"file\": ")?;
                    serde_json::to_writer(&mut *out, file)?;
                }
                out.write_all(b"}\n")
            }
            OutputFormat::Framed => Ok(()),
            OutputFormat::Lines | OutputFormat::Raw | OutputFormat::Escaped | OutputFormat::Hex => {
                out.write_all(b"\n")
            }
        }
    }
}

/// Passes `data` in lowercase hex to `emit`, a piece at a time.
fn hex<E>(data: &[u8], mut emit: impl FnMut(&[u8]) -> Result<(), E>) -> Result<(), E> {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut text = [0u8; 2048];
    for chunk in data.chunks(text.len() / 2) {
        for (pair, byte) in text.chunks_exact_mut(2).zip(chunk) {
            pair.copy_from_slice(&[
                DIGITS[usize::from(byte >> 4)],
                DIGITS[usize::from(byte & 0x0f)],
            ]);
        }
        emit(text.get(..chunk.len() * 2).unwrap_or_default())?;
    }
    Ok(())
}

#[cfg(test)]
#[path = "cat_printer/tests.rs"]
mod tests;
