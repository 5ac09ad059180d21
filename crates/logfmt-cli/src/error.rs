//! Everything a command can fail with, and the exit status each means.

use std::fmt;
use std::io;
use std::process::ExitCode;

use logfmt_std::advanced::{EscapedPath, Kept};

use crate::input::InputError;
use crate::output::OutputError;

/// Exit status: success.
pub(crate) const EXIT_OK: u8 = 0;
/// Exit status: corruption found, a non-empty log refused, or malformed framed input.
pub(crate) const EXIT_BAD_DATA: u8 = 1;
/// Exit status: a usage or I/O error.
pub(crate) const EXIT_ERROR: u8 = 2;
/// Exit status: `verify` read a file that is not a log (no record, and no chunk header at its
/// start).
pub(crate) const EXIT_NOT_A_LOG: u8 = 3;

/// A command's failure.
#[derive(Debug)]
pub(crate) enum CliError {
    /// Opening, reading or writing the log failed.
    Log(logfmt_std::Error),
    /// As [`Log`](Self::Log), with a hint for the command that failed.
    Hinted(logfmt_std::Error, &'static str),
    /// Reading records from standard input failed.
    Input(InputError),
    /// Printing to standard output failed.
    Output(OutputError),
    /// Writing failed part-way through `write --append`: the log holds some of the new
    /// records.
    AppendFailed {
        /// The failure.
        error: logfmt_std::Error,
        /// Where the new records began.
        start: u64,
        /// What the log holds from `start`, if it could be read back.
        kept: Option<Kept>,
    },
    /// A command was asked to write into the file it reads.
    SameFile {
        /// The path given twice.
        path: std::path::PathBuf,
    },
    /// Flags that do not go together.
    Usage(String),
    /// A directory given as a database could not be read as one.
    Database(logfmt_std::content::DatabaseError),
    /// A WAL directory could not be listed, or one of its logs read.
    Wal(logfmt_std::wal::WalError),
    /// The firmware's ELF (`logfmt defmt --elf`) could not be read, or its defmt table not
    /// parsed.
    Firmware {
        /// The ELF.
        path: std::path::PathBuf,
        /// Why.
        reason: String,
    },
    /// A recyclable log needs a log number, and none was given or found in the file's name.
    NoLogNumber {
        /// The log.
        path: std::path::PathBuf,
    },
}

impl CliError {
    /// A failure of a command that writes a new file, which was left as it was.
    pub(crate) fn unchanged(error: logfmt_std::Error) -> Self {
        match error {
            logfmt_std::Error::AlreadyExists { .. } => Self::Log(error),
            _ => Self::Hinted(error, "the file was left as it was"),
        }
    }

    /// Standard output was closed by its reader (`logfmt cat log | head`): stop quietly.
    pub(crate) fn is_broken_pipe(&self) -> bool {
        matches!(self, Self::Output(OutputError::Write(e)) if e.kind() == io::ErrorKind::BrokenPipe)
    }

    /// The exit status this failure means.
    pub(crate) fn exit_code(&self) -> ExitCode {
        ExitCode::from(match self {
            Self::Log(
                logfmt_std::Error::AlreadyExists { .. }
                | logfmt_std::Error::TornTail { .. }
                | logfmt_std::Error::StaleTail { .. }
                | logfmt_std::Error::FormatMismatch { .. }
                | logfmt_std::Error::Damaged { .. },
            )
            | Self::Hinted(
                logfmt_std::Error::AlreadyExists { .. }
                | logfmt_std::Error::TornTail { .. }
                | logfmt_std::Error::StaleTail { .. }
                | logfmt_std::Error::FormatMismatch { .. }
                | logfmt_std::Error::Damaged { .. },
                _,
            ) => EXIT_BAD_DATA,
            Self::Input(e) if e.is_malformed() => EXIT_BAD_DATA,
            _ => EXIT_ERROR,
        })
    }

    fn hint(&self) -> Option<&'static str> {
        match self {
            Self::Hinted(_, hint) => Some(hint),
            Self::Log(logfmt_std::Error::AlreadyExists { .. }) => {
                Some("use --force to overwrite it or --append to add to it")
            }
            Self::Log(logfmt_std::Error::TornTail { .. }) => Some(
                "the file was left unchanged; --truncate-torn-tail cuts them off, losing no \
                 complete record, and appends",
            ),
            Self::Log(logfmt_std::Error::StaleTail { .. }) => Some(
                "the file was left unchanged; --truncate-torn-tail cuts the stale bytes off, \
                 losing no record of this log, and appends",
            ),
            Self::Log(logfmt_std::Error::Damaged { .. }) => Some(
                "the file was left unchanged; `logfmt salvage` copies its records into a new log",
            ),
            Self::Log(logfmt_std::Error::FormatMismatch { .. }) => Some(
                "the file was left unchanged; without --format and --log-number, --append \
                 continues a log in its own format",
            ),
            Self::Log(logfmt_std::Error::NoLogNumber { .. }) => {
                Some("give --log-number N; nothing was written")
            }
            Self::Log(logfmt_std::Error::Locked { .. }) => {
                Some("nothing was changed; --wait[=SECONDS] waits for the other writer to finish")
            }
            Self::Input(e) if e.is_malformed() => {
                Some("the complete records before it were written")
            }
            Self::Input(InputError::LineTooLong { .. }) => Some(
                "the file was left as it was, except with --append (or to standard output), \
                 where the records before that line were written; --line-limit BYTES raises \
                 the limit",
            ),
            _ => None,
        }
    }
}

impl fmt::Display for CliError {
    /// One line: the error and its causes, joined by ": ", then a hint if there is one.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner: &dyn std::error::Error = match self {
            Self::Log(e) | Self::Hinted(e, _) => e,
            Self::Input(e) => e,
            Self::Output(e) => e,
            Self::AppendFailed { error, start, kept } => {
                write!(f, "{error}")?;
                let mut source = std::error::Error::source(error);
                while let Some(cause) = source {
                    write!(f, ": {cause}")?;
                    source = cause.source();
                }
                return match kept {
                    Some(kept) => {
                        let durable = if kept.synced { "synced" } else { "not synced" };
                        write!(
                            f,
                            " (the log holds {} new record{} ({durable}), from offset {start} \
                             to {}",
                            kept.records,
                            if kept.records == 1 { "" } else { "s" },
                            kept.end
                        )?;
                        let torn = kept.len.saturating_sub(kept.end);
                        if torn > 0 {
                            write!(
                                f,
                                ", then {torn} torn bytes that `logfmt write --append \
                                 --truncate-torn-tail` cuts off"
                            )?;
                        }
                        write!(f, "; no record after them was written)")
                    }
                    None => write!(
                        f,
                        " (the new records began at offset {start}; the log could not be \
                         read back)"
                    ),
                };
            }
            Self::SameFile { path } => {
                return write!(
                    f,
                    "the output is the input: {} (nothing was written)",
                    EscapedPath::new(path)
                );
            }
            Self::Usage(message) => return f.write_str(message),
            Self::Firmware { path, reason } => {
                return write!(f, "{}: {reason}", EscapedPath::new(path));
            }
            Self::Database(e @ logfmt_std::content::DatabaseError::NoCurrent { .. }) => {
                return write!(f, "{e} (give the log files themselves)");
            }
            Self::Database(e) => e,
            Self::Wal(e) => e,
            Self::NoLogNumber { path } => {
                return write!(
                    f,
                    "the log number of {} is not known: give --log-number N (RocksDB names \
                     a log after its number, as in 000042.log)",
                    EscapedPath::new(path)
                );
            }
        };
        write!(f, "{inner}")?;
        let mut source = inner.source();
        while let Some(cause) = source {
            write!(f, ": {cause}")?;
            source = cause.source();
        }
        if let Some(hint) = self.hint() {
            write!(f, " ({hint})")?;
        }
        Ok(())
    }
}

impl From<logfmt_std::Error> for CliError {
    fn from(e: logfmt_std::Error) -> Self {
        Self::Log(e)
    }
}

impl From<logfmt_std::content::DatabaseError> for CliError {
    fn from(e: logfmt_std::content::DatabaseError) -> Self {
        Self::Database(e)
    }
}

impl From<InputError> for CliError {
    fn from(e: InputError) -> Self {
        Self::Input(e)
    }
}

impl From<OutputError> for CliError {
    fn from(e: OutputError) -> Self {
        Self::Output(e)
    }
}

impl From<io::Error> for CliError {
    /// An error writing standard output.
    fn from(e: io::Error) -> Self {
        Self::Output(OutputError::Write(e))
    }
}
