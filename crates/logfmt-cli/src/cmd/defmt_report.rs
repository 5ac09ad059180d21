//! What `logfmt defmt` prints: a decoded frame, a record that is not a frame of the firmware,
//! an ELF without a defmt table.

use std::io::{self, Write};
use std::path::Path;

use serde::Serialize;
use serde::ser::{SerializeStruct, Serializer};

use crate::defmt_frames::{Decoded, Undecodable};
use crate::render::Report;

/// A decoded frame: in text as `defmt-print` prints it; in JSON {"offset", "index" (in a
/// pack, else absent), "level", "timestamp", "message", "file", "line", "module"} (null where
/// the firmware has none).
pub(crate) struct DefmtFrame<'a> {
    /// Where its record begins in the file (a pack's offset for a frame of a pack).
    pub(crate) offset: u64,
    /// Its index in its pack.
    pub(crate) index: Option<u32>,
    /// The frame.
    pub(crate) frame: &'a Decoded,
}

impl Serialize for DefmtFrame<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let frame = self.frame;
        let mut doc = serializer.serialize_struct("DefmtFrame", 8)?;
        doc.serialize_field("offset", &self.offset)?;
        if let Some(index) = self.index {
            doc.serialize_field("index", &index)?;
        }
        doc.serialize_field("level", &frame.level)?;
        doc.serialize_field("timestamp", &frame.timestamp)?;
        doc.serialize_field("message", &frame.message)?;
        doc.serialize_field("file", &frame.file)?;
        doc.serialize_field("line", &frame.line)?;
        doc.serialize_field("module", &frame.module)?;
        doc.end()
    }
}

impl Report for DefmtFrame<'_> {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "{}", self.frame.text)
    }
}

/// A record that is not a frame of this firmware, told in its place: `offset N: not a defmt
/// frame of this firmware: why; bytes: hex`. In JSON {"offset", "index", "error", "hex"}.
pub(crate) struct DefmtUndecoded<'a> {
    /// Where its record begins.
    pub(crate) offset: u64,
    /// Its index in its pack.
    pub(crate) index: Option<u32>,
    /// Why it did not decode.
    pub(crate) error: &'a Undecodable,
    /// Its bytes (none for a record too long to hold).
    pub(crate) data: &'a [u8],
}

/// The first bytes of a record shown in hex.
const HEX_SHOWN: usize = 64;

impl DefmtUndecoded<'_> {
    fn hex(&self) -> String {
        use std::fmt::Write as _;
        let mut s = String::new();
        for (i, byte) in self.data.iter().take(HEX_SHOWN).enumerate() {
            let sep = if i == 0 { "" } else { " " };
            let _ = write!(s, "{sep}{byte:02x}");
        }
        if self.data.len() > HEX_SHOWN {
            let _ = write!(s, " ... ({} bytes)", self.data.len());
        }
        s
    }
}

impl Serialize for DefmtUndecoded<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut doc = serializer.serialize_struct("DefmtUndecoded", 4)?;
        doc.serialize_field("offset", &self.offset)?;
        if let Some(index) = self.index {
            doc.serialize_field("index", &index)?;
        }
        doc.serialize_field("error", &self.error.to_string())?;
        doc.serialize_field("hex", &self.hex())?;
        doc.end()
    }
}

impl Report for DefmtUndecoded<'_> {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        let at = match self.index {
            Some(index) => format!("offset {} (pack record {index})", self.offset),
            None => format!("offset {}", self.offset),
        };
        writeln!(
            out,
            "{at}: not a defmt frame of this firmware: {}; bytes: {}",
            self.error,
            self.hex()
        )
    }
}

/// The ELF has no defmt table: told once on standard error, before the records (each then
/// told undecodable).
pub(crate) struct DefmtNoTable<'a> {
    /// The ELF.
    pub(crate) elf: &'a Path,
}

impl Serialize for DefmtNoTable<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut doc = serializer.serialize_struct("DefmtNoTable", 1)?;
        doc.serialize_field("elf", &self.elf.to_string_lossy())?;
        doc.end()
    }
}

impl Report for DefmtNoTable<'_> {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        let path = logfmt_std::advanced::EscapedPath::new(self.elf);
        writeln!(
            out,
            "logfmt: {path}: no defmt table (.defmt section): not a defmt firmware, or linked \
             without defmt.x; no frame can be decoded"
        )
    }
}
