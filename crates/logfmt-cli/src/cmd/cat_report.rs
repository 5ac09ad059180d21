//! What `logfmt cat` says besides its records (which its record printer,
//! [`super::cat_printer::RecordPrinter`], prints): a file's header ([`FileHeader`]), and on
//! standard error each damage met ([`CatDamage`]), each record too long to print
//! ([`CatOversized`]) and each restart of a followed file ([`CatRestarted`]), each one typed
//! value printed by the one renderer ([`crate::render::render`]): as one JSON line (the keys
//! documented on each type, in that order) or as its text.

use std::fmt;
use std::io::{self, Write};
use std::path::Path;

use logfmt_std::Damage;
use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};

use crate::decode::{Content, Undecoded};
use crate::render::Report;

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
