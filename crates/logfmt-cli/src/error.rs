//! Everything a command can fail with, and the exit status each means.

use std::fmt;
use std::io;
use std::process::ExitCode;

use crate::input::InputError;
use crate::output::OutputError;

/// Exit status: success.
pub(crate) const EXIT_OK: u8 = 0;
/// Exit status: corruption found, a non-empty log refused, or malformed framed input.
pub(crate) const EXIT_BAD_DATA: u8 = 1;
/// Exit status: a usage or I/O error.
pub(crate) const EXIT_ERROR: u8 = 2;

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
    /// `salvage` was asked to write into the log it reads.
    SameFile {
        /// The path given twice.
        path: std::path::PathBuf,
    },
}

impl CliError {
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
                | logfmt_std::Error::Damaged { .. },
            )
            | Self::Hinted(
                logfmt_std::Error::AlreadyExists { .. }
                | logfmt_std::Error::TornTail { .. }
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
            Self::Log(logfmt_std::Error::Damaged { .. }) => Some(
                "the file was left unchanged; `logfmt salvage` copies its records into a new log",
            ),
            Self::Input(e) if e.is_malformed() => {
                Some("the complete records before it were written")
            }
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
            Self::SameFile { path } => {
                return write!(
                    f,
                    "the output is the input: {} (salvage writes a new log)",
                    path.display()
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
