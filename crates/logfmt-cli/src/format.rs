//! The chunk format of a log: `--format`, `--log-number`, `--ignorable-types`.

use logfmt_std::{
    LogFile,
    advanced::{ReadFormat, ReadOptions, log_number_in_name, recyclable_log_number},
};

use crate::error::CliError;

/// `--format` of the reading commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum FormatName {
    /// LevelDB's chunks: 7-byte headers, types 1-4.
    Legacy,
    /// RocksDB's recyclable chunks: 11-byte headers carrying a log number, types 5-8.
    Recyclable,
    /// Decided by the first chunk: recyclable if it is, legacy otherwise.
    Auto,
}

/// `--format` of `write`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum WriteFormatName {
    /// LevelDB's chunks: 7-byte headers, types 1-4.
    Legacy,
    /// RocksDB's recyclable chunks: 11-byte headers carrying the log number, types 5-8.
    Recyclable,
}

/// `--ignorable-types`: chunks of unknown types with bit 7 set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub(crate) enum Ignorable {
    /// Report them as corruption, as LevelDB does.
    #[default]
    Report,
    /// Skip them without a report, as RocksDB does (its rule for forward-compatible record
    /// types).
    Skip,
}

/// How the reading commands read chunks.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct FormatArgs {
    /// The chunk format: legacy (LevelDB), recyclable (RocksDB's recyclable WAL: chunks carry
    /// a log number, and a chunk of another number is stale, left by an earlier use of the
    /// file: the end of the log), or auto (the first chunk decides). Default: legacy, or
    /// recyclable if --log-number is given.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub(crate) format: Option<FormatName>,
    /// The log number of a recyclable log (the low 32 bits of RocksDB's file number).
    /// Default: the number in the file's name (RocksDB's 000042.log is log 42); with auto
    /// and no number in the name, the first chunk's.
    #[arg(long, value_name = "N")]
    pub(crate) log_number: Option<u64>,
    /// What to do with chunks of unknown types 0x80-0xff: report them as corruption
    /// (LevelDB), or skip them silently (RocksDB's rule for types it may add).
    #[arg(long, value_enum, value_name = "WHAT", default_value_t)]
    pub(crate) ignorable_types: Ignorable,
}

impl FormatArgs {
    /// The chunk format of `log` for these flags. A regular file read as `auto` is decided
    /// here, from its start (so that reading from an offset, a range or in parallel decides
    /// the same way); a pipe is decided by the reader.
    ///
    /// `base` holds the other read options (checksums, erased flash), used to find the first
    /// chunk.
    pub(crate) fn resolve(
        &self,
        log: &LogFile,
        base: &ReadOptions,
    ) -> Result<ReadFormat, CliError> {
        let named = self.log_number.or_else(|| log_number_in_name(log.path()));
        let format = match (self.format, self.log_number) {
            (Some(FormatName::Legacy), Some(_)) => {
                return Err(CliError::Usage(
                    "--log-number needs --format recyclable or auto".into(),
                ));
            }
            (None, Some(_)) => FormatName::Recyclable,
            (None, None) => FormatName::Legacy,
            (Some(format), _) => format,
        };
        // A number only from the file's name gives way to the log's own (its first chunk's): a
        // copied or renamed log is read as what it is, never as stale bytes of itself.
        let named = match (self.log_number, format) {
            (None, FormatName::Recyclable | FormatName::Auto) if log.is_regular() => {
                match detect(log, base, None)? {
                    Some(ReadFormat::Recyclable { log_number }) => Some(u64::from(log_number)),
                    _ => named,
                }
            }
            _ => named,
        };
        match format {
            FormatName::Legacy => Ok(ReadFormat::Legacy),
            FormatName::Recyclable => match named {
                Some(number) => Ok(ReadFormat::Recyclable {
                    log_number: recyclable_log_number(number),
                }),
                None => Err(CliError::NoLogNumber {
                    path: log.path().into(),
                }),
            },
            FormatName::Auto => {
                let log_number = named.map(recyclable_log_number);
                if !log.is_regular() {
                    return Ok(ReadFormat::Auto { log_number });
                }
                let found = detect(log, base, log_number)?;
                Ok(found.unwrap_or(ReadFormat::Auto { log_number }))
            }
        }
    }

    /// The read options of `base` with this format and `--ignorable-types`.
    pub(crate) fn read_options(
        &self,
        log: &LogFile,
        base: ReadOptions,
    ) -> Result<ReadOptions, CliError> {
        let format = self.resolve(log, &base)?;
        Ok(base
            .format(format)
            .skip_ignorable_types(self.ignorable_types == Ignorable::Skip))
    }
}

/// What `ReadFormat::Auto` decides for `log` (a regular file), read from its start: `None` if
/// no chunk decides (an empty log, or only damage). See [`logfmt_std::advanced::detect_format`].
pub(crate) fn detect(
    log: &LogFile,
    base: &ReadOptions,
    log_number: Option<u32>,
) -> Result<Option<ReadFormat>, logfmt_std::Error> {
    logfmt_std::advanced::detect_format(log.reread()?, base, log_number)
        .map_err(|e| log.read_error(e))
}
