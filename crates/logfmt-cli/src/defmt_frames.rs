//! defmt frames decoded with the firmware's ELF (`defmt-decoder`, the decoder of `defmt-print`
//! and probe-rs): each record of a log written by `logfmt-defmt` holds one raw frame — its
//! string index, its timestamp, its arguments.

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

use defmt_decoder::log::format::{Formatter, FormatterConfig, FormatterFormat};
use defmt_decoder::{DecodeError, Locations, Table};

use crate::error::CliError;

/// The firmware's defmt table, read from its ELF.
pub(crate) struct Firmware {
    /// The table; `None` if the ELF has no `.defmt` section.
    table: Option<Table>,
    /// The string indices the table knows (log messages and `println!`).
    indices: BTreeSet<u64>,
    /// Where each message is logged from (empty without debug information).
    locations: Locations,
    /// `defmt-print`'s default format, with the location.
    formatter: Formatter,
    /// The directory file names are shown relative to (as `defmt-print` does).
    cwd: Option<PathBuf>,
}

/// A frame decoded: the fields `defmt-print` shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Decoded {
    /// `defmt-print`'s text for the frame (two lines with the location).
    pub(crate) text: String,
    /// The level (`INFO`...), `None` for `println!`.
    pub(crate) level: Option<String>,
    /// The timestamp as the firmware formats it, if it declares one.
    pub(crate) timestamp: Option<String>,
    /// The message, formatted.
    pub(crate) message: String,
    /// Where it was logged from: file, line and module.
    pub(crate) file: Option<String>,
    /// The line.
    pub(crate) line: Option<u64>,
    /// The module path.
    pub(crate) module: Option<String>,
}

/// Why a record is not a frame of this firmware.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Undecodable {
    /// The ELF has no defmt table.
    NoTable,
    /// Fewer than the two bytes of a string index.
    TooShort,
    /// A record of this many bytes: longer than any defmt frame.
    TooLong(u64),
    /// A string index the ELF's table does not have: the frame comes from another build.
    UnknownIndex(u64),
    /// The arguments do not follow the message's format string.
    Malformed {
        /// The string index.
        index: u64,
        /// Whether the frame ended before its arguments did (else: bytes left over or a
        /// value the format does not allow).
        short: bool,
    },
}

impl fmt::Display for Undecodable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoTable => f.write_str("the ELF has no defmt table (.defmt section)"),
            Self::TooShort => f.write_str("shorter than a defmt string index (2 bytes)"),
            Self::TooLong(len) => write!(f, "a record of {len} bytes: longer than any defmt frame"),
            Self::UnknownIndex(index) => write!(
                f,
                "string index {index} is not in the ELF's defmt table (a frame of another build \
                 of the firmware?)"
            ),
            Self::Malformed { index, short } => write!(
                f,
                "the arguments of string index {index} {} (a frame of another build of the \
                 firmware?)",
                if *short {
                    "end before the format string's"
                } else {
                    "do not follow its format string"
                }
            ),
        }
    }
}

impl Firmware {
    /// Reads the defmt table of the ELF at `path`. An ELF without one is accepted (each frame
    /// is then told undecodable); a file that is no ELF, or whose defmt version this decoder
    /// does not read, is an error.
    pub(crate) fn load(path: &Path) -> Result<Self, CliError> {
        let failed = |reason: String| CliError::Firmware {
            path: path.to_owned(),
            reason,
        };
        let elf = std::fs::read(path).map_err(|e| failed(e.to_string()))?;
        let table = Table::parse(&elf).map_err(|e| {
            failed(format!(
                "not a firmware ELF whose defmt table this logfmt reads ({e:#})"
            ))
        })?;
        let locations = match &table {
            Some(table) => table.get_locations(&elf).unwrap_or_default(),
            None => Locations::new(),
        };
        let indices = table
            .as_ref()
            .map(|t| t.indices().map(|i| i as u64).collect())
            .unwrap_or_default();
        let config = FormatterConfig {
            format: FormatterFormat::Default {
                with_location: true,
            },
            is_timestamp_available: table.as_ref().is_some_and(Table::has_timestamp),
        };
        Ok(Self {
            table,
            indices,
            locations,
            formatter: Formatter::new(config),
            cwd: std::env::current_dir().ok(),
        })
    }

    /// Whether the ELF has a defmt table.
    pub(crate) fn has_table(&self) -> bool {
        self.table.is_some()
    }

    /// Decodes one frame.
    pub(crate) fn decode(&self, frame: &[u8]) -> Result<Decoded, Undecodable> {
        let table = self.table.as_ref().ok_or(Undecodable::NoTable)?;
        let index = match frame {
            [a, b, ..] => u64::from(u16::from_le_bytes([*a, *b])),
            _ => return Err(Undecodable::TooShort),
        };
        if !self.indices.contains(&index) {
            return Err(Undecodable::UnknownIndex(index));
        }
        let (decoded, consumed) = table.decode(frame).map_err(|e| Undecodable::Malformed {
            index,
            short: e == DecodeError::UnexpectedEof,
        })?;
        if consumed != frame.len() {
            return Err(Undecodable::Malformed {
                index,
                short: false,
            });
        }
        let location = self.locations.get(&index);
        let file = location.map(|l| {
            let relative = self
                .cwd
                .as_deref()
                .and_then(|cwd| l.file.strip_prefix(cwd).ok())
                .unwrap_or(&l.file);
            relative.display().to_string()
        });
        let line = location.map(|l| l.line);
        let module = location.map(|l| l.module.clone());
        let level = decoded.level().map(|l| l.as_str().to_uppercase());
        let timestamp = decoded.display_timestamp().map(|t| t.to_string());
        let message = decoded.display_message().to_string();
        let text = self.formatter.format_frame(
            decoded,
            file.as_deref(),
            line.and_then(|l| u32::try_from(l).ok()),
            module.as_deref(),
        );
        Ok(Decoded {
            text,
            level,
            timestamp,
            message,
            file,
            line,
            module,
        })
    }
}

/// Turns the level's colours on (a terminal) or off.
pub(crate) fn set_colours(on: bool) {
    colored::control::set_override(on);
}
