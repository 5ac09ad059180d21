//! What `logfmt cat` prints, item by item: each record ([`CatRecord`] as `--output` says, or
//! [`DecodedRecord`] for a WriteBatch or a VersionEdit), a file's header ([`FileHeader`]),
//! and on standard error each damage met ([`CatDamage`]), each record too long to print
//! ([`CatOversized`]) and each restart of a followed file ([`CatRestarted`]) is one typed value, printed by the one renderer
//! ([`crate::report::render`]): as one JSON line (`--output json`, the keys documented on each
//! type, in that order) or as its text. Text and JSON come from the same value.
//!
//! A record's payload is borrowed, never copied: a record held in memory is printed from the
//! reader's buffer, and one too long to hold is pushed piece by piece from the file as it is
//! printed.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::io::{self, Write};
use std::path::Path;

use logfmt_std::Damage;
use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};

use crate::decode::{Content, Printer, Style, Undecoded};
use crate::error::CliError;
use crate::output::{OutputError, OutputFormat, write_json_line};
use crate::report::{Rendering, Report, render};

/// What a record's payload is pushed into, in order and in pieces. It fails only if printing
/// failed: the source then stops.
pub(crate) type Sink<'a> = &'a mut dyn FnMut(&[u8]) -> Result<(), OutputError>;

/// A source of a payload too long to hold: it pushes the payload into the sink it is given.
type Source<'a> = Box<dyn FnOnce(Sink<'_>) -> Result<(), CliError> + 'a>;

/// A record of `cat`, not decoded, printed as `--output` says: the payload bytes then a
/// newline (`lines`, `raw`; escaped as `leveldbutil` escapes them on a terminal), in hex
/// (`hex`), after a u32 little-endian length (`framed`), or in JSON: {"offset": 0,
/// "length": 3, "hex": "666f6f"}, with "index" after "offset" for a record from a pack
/// ({"offset": 0, "index": 2, "length": 3, "hex": "666f6f"}).
#[derive(Serialize)]
pub(crate) struct CatRecord<'a> {
    /// The offset of the record's first chunk (of its pack, for a record from a pack).
    offset: u64,
    /// Its index in its pack, for a record from a pack.
    #[serde(skip_serializing_if = "Option::is_none")]
    index: Option<u32>,
    /// Its payload's length.
    length: u64,
    /// Its payload, in lowercase hex.
    hex: Payload<'a>,
    /// How it is printed.
    #[serde(skip)]
    format: OutputFormat,
}

impl<'a> CatRecord<'a> {
    /// The record `data` at file offset `offset` (with its `index` in the pack there, for a
    /// record from a pack), to print as `format`.
    #[inline]
    pub(crate) fn held(
        format: OutputFormat,
        offset: u64,
        index: Option<u32>,
        data: &'a [u8],
    ) -> Self {
        Self {
            offset,
            index,
            length: data.len() as u64,
            hex: Payload::new(Held::Bytes(data)),
            format,
        }
    }

    /// The record at file offset `offset`, of `length` bytes, whose payload `source` pushes
    /// into the sink it is given, piece by piece, as it is printed: the record is never held
    /// whole.
    pub(crate) fn streamed(
        format: OutputFormat,
        offset: u64,
        length: u64,
        source: impl FnOnce(Sink<'_>) -> Result<(), CliError> + 'a,
    ) -> Self {
        Self {
            offset,
            index: None,
            length,
            hex: Payload::new(Held::Streamed(RefCell::new(Some(Box::new(source))))),
            format,
        }
    }

    /// Prints the record to `out`, rendered as its format says. Nothing is printed if the
    /// record is refused (too long for a frame). If its source fails, that error is returned
    /// and the record is left unfinished: a JSON record is cut before its closing quote, so
    /// that no line looks complete that is not.
    #[inline]
    pub(crate) fn print(&self, out: &mut impl Write) -> Result<(), CliError> {
        let rendering = match self.format {
            OutputFormat::Json => Rendering::Json,
            _ => Rendering::Text,
        };
        // A failure of the source (or a refusal) always stops the writer too: it is looked
        // for only then, and comes first.
        render(out, self, rendering).map_err(|e| match self.hex.failure() {
            Err(failure) => failure,
            Ok(()) => e.into(),
        })
    }

    /// The record in its (text) format, to `out`.
    #[inline]
    fn write_format<W: Write>(&self, out: &mut W) -> io::Result<()> {
        let payload = &self.hex;
        match (self.format, &payload.held) {
            // The common case, a record held, as plainly as it can be written.
            (OutputFormat::Lines | OutputFormat::Raw, Held::Bytes(data)) => {
                out.write_all(data)?;
            }
            (OutputFormat::Lines | OutputFormat::Raw, _) => {
                payload.push(&mut |piece| Ok(out.write_all(piece)?))?;
            }
            (OutputFormat::Escaped, _) => {
                payload.push(&mut |piece| Ok(crate::escape::write_escaped(out, piece)?))?;
            }
            (OutputFormat::Hex, _) => {
                payload
                    .push(&mut |piece| Ok(hex(piece, |text| out.write_all(text.as_bytes()))?))?;
            }
            (OutputFormat::Json, _) => return self.write_json(out),
            (OutputFormat::Framed, _) => {
                let Ok(len) = u32::try_from(self.length) else {
                    return Err(payload.fail(OutputError::TooLongForFrame {
                        offset: self.offset,
                        len: self.length,
                    }));
                };
                out.write_all(&len.to_le_bytes())?;
                return payload.push(&mut |piece| Ok(out.write_all(piece)?));
            }
        }
        out.write_all(b"\n")
    }
}

impl Report for CatRecord<'_> {
    /// The record as its (text) format prints it.
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        self.write_format(&mut &mut *out)
    }

    fn write_text_to<W: Write>(&self, out: &mut W) -> io::Result<()> {
        self.write_format(out)
    }

    /// The record's JSON line, cut where its payload's source failed, if it did.
    fn write_json<W: Write>(&self, out: &mut W) -> io::Result<()> {
        let mut cut = Cut {
            out,
            payload: &self.hex,
        };
        write_json_line(&mut cut, self)
    }
}

/// Where a payload comes from.
enum Held<'a> {
    /// Bytes in memory.
    Bytes(&'a [u8]),
    /// A source that pushes them, once.
    Streamed(RefCell<Option<Source<'a>>>),
}

/// A record's payload: pushed into a sink as it is printed (as bytes, escaped, in hex, or as
/// a JSON string of hex digits); a failure of its source is kept for
/// [`failure`](Self::failure).
pub(crate) struct Payload<'a> {
    /// Where the bytes come from.
    held: Held<'a>,
    /// How its source (or printing) failed, if it did.
    failed: RefCell<Option<CliError>>,
}

impl<'a> Payload<'a> {
    /// The payload `held`.
    fn new(held: Held<'a>) -> Self {
        Self {
            held,
            failed: RefCell::new(None),
        }
    }

    /// Pushes the payload into `sink` (a streamed payload only once). A failure is kept, and
    /// told to the writer as an error that stops the record.
    fn push(&self, sink: Sink<'_>) -> io::Result<()> {
        let pushed = match &self.held {
            Held::Bytes(data) => sink(data).map_err(CliError::from),
            Held::Streamed(source) => match source.try_borrow_mut().ok().and_then(|mut s| s.take())
            {
                Some(source) => source(sink),
                None => Ok(()),
            },
        };
        pushed.map_err(|e| self.fail(e))
    }

    /// Keeps `error` as the payload's failure; returns the error that stops the writer.
    fn fail(&self, error: impl Into<CliError>) -> io::Error {
        if let Ok(mut failed) = self.failed.try_borrow_mut() {
            *failed = Some(error.into());
        }
        io::Error::other("the record's payload could not be read")
    }

    /// Whether the payload's source has failed.
    fn has_failed(&self) -> bool {
        self.failed
            .try_borrow()
            .is_ok_and(|failed| failed.is_some())
    }

    /// How the payload's source failed, if it did.
    fn failure(&self) -> Result<(), CliError> {
        match self.failed.try_borrow_mut() {
            Ok(mut failed) => failed.take().map_or(Ok(()), Err),
            Err(_) => Ok(()),
        }
    }
}

impl fmt::Display for Payload<'_> {
    /// Writes the payload in lowercase hex as its source pushes it. Returns an error only if
    /// writing failed (serde_json then reports its writer's error); a failure of the source
    /// is kept, and [`Cut`] stops what follows.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut unwritable = false;
        let pushed = self.push(&mut |piece| {
            if !unwritable && hex(piece, |text| f.write_str(text)).is_ok() {
                return Ok(());
            }
            unwritable = true;
            // Stands for the writer's error, which serde_json keeps and reports.
            Err(OutputError::Write(io::Error::other("cannot write")))
        });
        if unwritable {
            // Not the source's failure: the writer's, which serde_json reports.
            let _ = self.failure();
            return Err(fmt::Error);
        }
        // A failure of the source is kept; the JSON is cut by `Cut`.
        let _ = pushed;
        Ok(())
    }
}

impl Serialize for Payload<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// A writer that refuses to write once the payload's source has failed: the JSON record
/// stops where its payload did.
struct Cut<'a, 'p, W> {
    out: &'a mut W,
    payload: &'a Payload<'p>,
}

impl<W: Write> Write for Cut<'_, '_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.payload.has_failed() {
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

/// A record of `cat` decoded (`--decode`): a write-ahead log's WriteBatch or a MANIFEST's
/// VersionEdit. Its text is `leveldbutil dump`'s (`--- offset N; sequence S; count C`, then a
/// line per operation); its JSON is the document of [`crate::decode::batch_document`]
/// ({"offset", "sequence", "count", "ops", then "error" and "file"}) or of
/// [`crate::decode::edit_document`] ({"offset", "fields", then "error" and "file"}). A batch's JSON is written by hand, for speed, as the
/// same bytes as its serialized document (the tests check it).
pub(crate) struct DecodedRecord<'a> {
    /// The offset of the record's first chunk.
    offset: u64,
    /// What it holds: a write batch or a version edit.
    content: Content,
    /// Its payload.
    data: &'a [u8],
    /// The file's name, when several files are printed.
    file: Option<&'a str>,
    /// How it is printed: text (keys and values escaped, or in hex) or JSON.
    style: Style,
    /// The line buffer the record is built in, reused from record to record.
    printer: RefCell<&'a mut Printer>,
    /// What could not be decoded, once printed.
    undecoded: Cell<Option<Undecoded>>,
}

impl<'a> DecodedRecord<'a> {
    /// The record `data` at `offset` holding `content` (not raw), to print in `style`, built
    /// in `printer`'s buffer when printed.
    pub(crate) fn new(
        printer: &'a mut Printer,
        content: Content,
        style: Style,
        offset: u64,
        data: &'a [u8],
        file: Option<&'a str>,
    ) -> Self {
        Self {
            offset,
            content,
            data,
            file,
            style,
            printer: RefCell::new(printer),
            undecoded: Cell::new(None),
        }
    }

    /// Prints the record in its style; returns what could not be decoded, if anything (it
    /// is also printed, in place).
    pub(crate) fn print(&self, out: &mut impl Write) -> io::Result<Option<Undecoded>> {
        let rendering = match self.style {
            Style::Json => Rendering::Json,
            Style::Text { .. } => Rendering::Text,
        };
        render(out, self, rendering)?;
        Ok(self.undecoded.get())
    }

    /// Writes the record in `style`, built whole in the printer's line buffer.
    fn write_in(&self, out: &mut impl Write, style: Style) -> io::Result<()> {
        let mut printer = self
            .printer
            .try_borrow_mut()
            .map_err(|_| io::Error::other("a record printed within itself"))?;
        let undecoded =
            printer.write_record(out, self.content, style, self.offset, self.data, self.file)?;
        self.undecoded.set(undecoded);
        Ok(())
    }
}

impl Serialize for DecodedRecord<'_> {
    /// The record's document: what [`Report::write_json`] writes, by hand for a batch.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.content {
            Content::VersionEdit => crate::decode::edit_document(self.offset, self.data, self.file)
                .serialize(serializer),
            _ => crate::decode::batch_document(self.offset, self.data, self.file)
                .serialize(serializer),
        }
    }
}

impl Report for DecodedRecord<'_> {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        self.write_text_to(&mut &mut *out)
    }

    fn write_text_to<W: Write>(&self, out: &mut W) -> io::Result<()> {
        let hex = matches!(self.style, Style::Text { hex: true });
        self.write_in(out, Style::Text { hex })
    }

    fn write_json<W: Write>(&self, out: &mut W) -> io::Result<()> {
        self.write_in(out, Style::Json)
    }
}

/// The header of a file's decoded records when several files are printed as text:
/// `==> FILE <==`, as `tail` heads each file. In JSON: {"file"}.
#[derive(Serialize)]
pub(crate) struct FileHeader<'a> {
    /// The file.
    #[serde(serialize_with = "lossy")]
    pub(crate) file: &'a Path,
}

impl Report for FileHeader<'_> {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        let path = logfmt_std::advanced::EscapedPath::new(self.file);
        writeln!(out, "==> {path} <==")
    }
}

/// A path in JSON: its name, any bytes that are not UTF-8 replaced.
fn lossy<S: Serializer>(path: &&Path, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&path.to_string_lossy())
}

/// Damage met while printing a file, told on standard error in its place among the records:
/// `logfmt: FILE: offset N: B bytes dropped: reason`, with the reason's gloss. In JSON:
/// {"file", "offset", "bytes", "reason"}.
pub(crate) struct CatDamage<'a> {
    /// The file.
    pub(crate) file: &'a Path,
    /// The damage, at offsets in the file.
    pub(crate) damage: &'a Damage,
}

impl Serialize for CatDamage<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut doc = serializer.serialize_struct("CatDamage", 4)?;
        doc.serialize_field("file", &self.file.to_string_lossy())?;
        doc.serialize_field("offset", &self.damage.offset)?;
        doc.serialize_field("bytes", &self.damage.bytes)?;
        doc.serialize_field("reason", &self.damage.kind.to_string())?;
        doc.end()
    }
}

impl Report for CatDamage<'_> {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        let damage = self.damage;
        warning(
            out,
            self.file,
            format_args!("{damage}{}", crate::gloss::Suffix(&damage.kind)),
        )
    }
}

/// A record not printed: too long to decode whole (a record to decode longer than `limit`,
/// or a pack or compressed record whose decoded bytes pass the limit), told on standard
/// error. In JSON: {"file", "offset", "length", "coded", "limit"}.
#[derive(Serialize)]
pub(crate) struct CatOversized<'a> {
    /// The file.
    #[serde(serialize_with = "lossy")]
    pub(crate) file: &'a Path,
    /// The record's offset in the file.
    pub(crate) offset: u64,
    /// Its length (at least this, for a pack or compressed record).
    pub(crate) length: u64,
    /// A pack or compressed record, which is decoded whole, never streamed.
    pub(crate) coded: bool,
    /// The most bytes of a record decoded.
    pub(crate) limit: usize,
}

impl Report for CatOversized<'_> {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        let (offset, length) = (self.offset, self.length);
        if self.coded {
            warning(
                out,
                self.file,
                format_args!(
                    "offset {offset}: a pack or compressed record of {length} bytes or more \
                     once decoded, more than --buffer-limit (or the {} MiB any record is \
                     decoded to): not printed",
                    logfmt_std::advanced::MAX_DECODED >> 20
                ),
            )
        } else {
            warning(
                out,
                self.file,
                format_args!(
                    "offset {offset}: a record of {length} bytes, more than the {} bytes a \
                     record is decoded in (see --buffer-limit): not printed (--decode raw \
                     prints it)",
                    self.limit
                ),
            )
        }
    }
}

/// A record printed decoded whose payload did not decode in full (the part that did is
/// printed, then the error), told on standard error. In JSON: {"file", "offset", "error"}.
#[derive(Serialize)]
pub(crate) struct CatUndecoded<'a> {
    /// The file.
    #[serde(serialize_with = "lossy")]
    pub(crate) file: &'a Path,
    /// The record's offset.
    pub(crate) offset: u64,
    /// What kept it from decoding.
    #[serde(serialize_with = "told")]
    pub(crate) error: Undecoded,
}

impl Report for CatUndecoded<'_> {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        let (offset, error) = (self.offset, &self.error);
        warning(
            out,
            self.file,
            format_args!("the record at offset {offset}: {error}"),
        )
    }
}

/// A value in JSON as its text tells it.
fn told<S: Serializer>(value: &impl fmt::Display, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_str(value)
}

/// A log named as holding what `--decode auto` decodes whose first record (at `offset`) does
/// not decode: it is printed raw. Told on standard error unless `--quiet`. In JSON: {"file",
/// "offset", "named"}, `named` the `--decode` value the name gave.
#[derive(Serialize)]
pub(crate) struct CatPrintedRaw<'a> {
    /// The file.
    #[serde(serialize_with = "lossy")]
    pub(crate) file: &'a Path,
    /// The record that did not decode.
    pub(crate) offset: u64,
    /// What the name said the records hold.
    #[serde(serialize_with = "decode_name")]
    pub(crate) named: Content,
}

impl Report for CatPrintedRaw<'_> {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        let what = match self.named {
            Content::VersionEdit => "a VersionEdit",
            _ => "a WriteBatch",
        };
        warning(
            out,
            self.file,
            format_args!(
                "the record at offset {} is not {what}: the log is printed raw (--decode {} \
                 decodes it anyway)",
                self.offset,
                decode_value(self.named)
            ),
        )
    }
}

/// The `--decode` value for `content`.
fn decode_value(content: Content) -> &'static str {
    match content {
        Content::VersionEdit => "version-edit",
        _ => "write-batch",
    }
}

/// `content` in JSON as its `--decode` value.
fn decode_name<S: Serializer>(content: &Content, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(decode_value(*content))
}

/// Printing stopped at the first damage, as `--recovery point-in-time` asks, told on
/// standard error. In JSON: {"file", "offset"}.
#[derive(Serialize)]
pub(crate) struct CatStopped<'a> {
    /// The file.
    #[serde(serialize_with = "lossy")]
    pub(crate) file: &'a Path,
    /// Where the damage begins.
    pub(crate) offset: u64,
}

impl Report for CatStopped<'_> {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        let offset = self.offset;
        warning(
            out,
            self.file,
            format_args!("stopped at offset {offset} (point-in-time recovery)"),
        )
    }
}

/// Why a followed file is read again from its start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Restart {
    /// Its name now belongs to a new file (a log rotated or replaced).
    Replaced,
    /// It is shorter than it was.
    Truncated,
}

/// A followed file read again from its start (`--follow`), as `tail -F` says it, told on
/// standard error. In JSON: {"file", "why"}, `why` "replaced" or "truncated".
#[derive(Serialize)]
pub(crate) struct CatRestarted<'a> {
    /// The file.
    #[serde(serialize_with = "lossy")]
    pub(crate) file: &'a Path,
    /// Why it is read again.
    pub(crate) why: Restart,
}

impl Report for CatRestarted<'_> {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        let message = match self.why {
            Restart::Replaced => "replaced by a new file: reading the new file from its start",
            Restart::Truncated => "file truncated: reading it again from its start",
        };
        warning(out, self.file, format_args!("{message}"))
    }
}

/// A warning's line: `logfmt: FILE: message`.
fn warning(out: &mut dyn Write, file: &Path, message: fmt::Arguments<'_>) -> io::Result<()> {
    let path = logfmt_std::advanced::EscapedPath::new(file);
    writeln!(out, "logfmt: {path}: {message}")
}

#[cfg(test)]
mod tests;
