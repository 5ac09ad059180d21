//! `logfmt`: write, read and verify logs in LevelDB's log record format (the format of
//! LevelDB's and RocksDB's write-ahead logs and MANIFEST files).
//!
//! ```text
//! logfmt write [--append [--truncate-torn-tail]] [--force] [--wait[=SECONDS]]
//!              [--input lines|framed] [--format legacy|recyclable] [--log-number N] FILE
//! logfmt cat [--output lines|hex|json|framed] [--offset N | --range A..B]
//!            [--buffer-limit BYTES] [READ] FILE
//! logfmt verify [--json] [--offset N] [READ] FILE
//! logfmt dump [--json] [--erased ff|00] [FORMAT] FILE
//! logfmt stats [--json] [--erased ff|00] [FORMAT] FILE
//! logfmt salvage [--json] [--force] [--wait[=SECONDS]] [--erased ff|00] [FORMAT] IN OUT
//! logfmt split [--parts N] [--json] [--erased ff|00] [FORMAT] FILE
//! logfmt export [--json] [--force] [--wait[=SECONDS]] [READ] IN OUT
//!
//! READ: [--recovery tolerate|absolute|point-in-time|skip] [--erased ff|00] [FORMAT]
//! FORMAT: [--format legacy|recyclable|auto] [--log-number N] [--ignorable-types report|skip]
//! ```
//!
//! A ring image (a dump of a flash region holding a ring log, its blocks beginning with ring
//! headers) is found by the reading commands and read from its oldest block to its newest;
//! `export` turns it into a plain LevelDB log.
//!
//! Exit status: 0 success; 1 damage found (`verify`, `cat --recovery absolute`), a log refused
//! (`write`: not empty, torn, damaged or of another format; `salvage`, `export`: output not
//! empty) or malformed framed input; 2 usage or I/O error, or the log locked by another
//! writer.

mod cmd;
mod decode;
mod error;
mod format;
mod image;
mod input;
mod layout;
mod options;
mod output;
mod progress;
mod scan;
mod targets;

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::error::{CliError, EXIT_OK};

/// The exit statuses, shown at the end of every `--help`.
const EXIT_STATUS: &str = "\
Exit status:
  0  success
  1  damage found (verify; cat, export --recovery absolute); a log refused (write: not empty,
     torn, damaged or of another format; salvage, export: output not empty); malformed framed
     input (write)
  2  usage or I/O error (missing file, a directory, unreadable input, a full disk, ...); the
     log locked by another writer (write, salvage, export: see --wait)";

/// Write, read and verify logs in LevelDB's log record format.
///
/// A log is a sequence of 32 KiB blocks of checksummed chunks; a logical record that does not
/// fit in the rest of a block is split across blocks. This is the format of LevelDB's and
/// RocksDB's write-ahead logs and MANIFEST files. Logs written here are byte-identical to
/// LevelDB's, and reading reports exactly what LevelDB's reader returns and drops.
#[derive(Debug, Parser)]
#[command(name = "logfmt", version, after_help = EXIT_STATUS)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    #[command(after_help = EXIT_STATUS)]
    Write(cmd::write::WriteArgs),
    #[command(after_help = EXIT_STATUS)]
    Cat(cmd::cat::CatArgs),
    #[command(after_help = EXIT_STATUS)]
    Verify(cmd::verify::VerifyArgs),
    #[command(after_help = EXIT_STATUS)]
    Dump(cmd::dump::DumpArgs),
    #[command(after_help = EXIT_STATUS)]
    Stats(cmd::stats::StatsArgs),
    #[command(after_help = EXIT_STATUS)]
    Salvage(cmd::salvage::SalvageArgs),
    #[command(after_help = EXIT_STATUS)]
    Split(cmd::split::SplitArgs),
    #[command(after_help = EXIT_STATUS)]
    Export(cmd::export::ExportArgs),
}

fn main() -> ExitCode {
    // Usage errors exit with status 2 here, `--help` and `--version` with 0.
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Write(args) => cmd::write::run(args).map(|()| ExitCode::from(EXIT_OK)),
        Command::Cat(args) => cmd::cat::run(args).map(|()| ExitCode::from(EXIT_OK)),
        Command::Verify(args) => cmd::verify::run(args),
        Command::Dump(args) => cmd::dump::run(args).map(|()| ExitCode::from(EXIT_OK)),
        Command::Stats(args) => cmd::stats::run(args).map(|()| ExitCode::from(EXIT_OK)),
        Command::Salvage(args) => cmd::salvage::run(args).map(|()| ExitCode::from(EXIT_OK)),
        Command::Split(args) => cmd::split::run(args).map(|()| ExitCode::from(EXIT_OK)),
        Command::Export(args) => cmd::export::run(args).map(|()| ExitCode::from(EXIT_OK)),
    };
    result.unwrap_or_else(|error| report(&error))
}

/// Prints `error` as one line on standard error and gives its exit status.
fn report(error: &CliError) -> ExitCode {
    if error.is_broken_pipe() {
        // `logfmt cat log | head`: the reader has seen enough.
        return ExitCode::from(EXIT_OK);
    }
    let _ = writeln!(std::io::stderr().lock(), "logfmt: error: {error}");
    error.exit_code()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn force_and_append_conflict() {
        let parsed = Cli::try_parse_from(["logfmt", "write", "--append", "--force", "f"]);
        assert!(parsed.is_err());
    }

    #[test]
    fn wait_takes_an_optional_number_of_seconds_after_an_equals_sign() {
        for ok in [
            &["write", "--wait", "f"][..],
            &["write", "--wait=2.5", "--append", "f"],
            &["salvage", "--wait=0", "a", "b"],
        ] {
            let args = std::iter::once("logfmt").chain(ok.iter().copied());
            assert!(Cli::try_parse_from(args).is_ok(), "{ok:?}");
        }
        // `--wait FILE` is the flag and the file, not a number of seconds.
        let parsed = Cli::try_parse_from(["logfmt", "write", "--wait", "5"]);
        assert!(parsed.is_ok());
        assert!(Cli::try_parse_from(["logfmt", "write", "--wait=x", "f"]).is_err());
        assert!(Cli::try_parse_from(["logfmt", "cat", "--wait", "f"]).is_err());
    }

    #[test]
    fn truncating_needs_append() {
        let parsed = Cli::try_parse_from(["logfmt", "write", "--truncate-torn-tail", "f"]);
        assert!(parsed.is_err());
        let parsed =
            Cli::try_parse_from(["logfmt", "write", "--append", "--truncate-torn-tail", "f"]);
        assert!(parsed.is_ok());
    }

    #[test]
    fn offset_and_range_conflict() {
        let parsed =
            Cli::try_parse_from(["logfmt", "cat", "--offset", "1", "--range", "1..2", "f"]);
        assert!(parsed.is_err());
        for ok in [
            &["cat", "--range", "5..", "--recovery", "point-in-time", "f"][..],
            &["verify", "--erased", "ff", "--recovery", "skip", "f"],
            &["split", "--parts", "3", "f"],
            &["salvage", "a", "b"],
        ] {
            let args = std::iter::once("logfmt").chain(ok.iter().copied());
            assert!(Cli::try_parse_from(args).is_ok(), "{ok:?}");
        }
        assert!(Cli::try_parse_from(["logfmt", "split", "--parts", "0", "f"]).is_err());
        assert!(Cli::try_parse_from(["logfmt", "dump", "--erased", "fe", "f"]).is_err());
    }

    #[test]
    fn format_flags() {
        for ok in [
            &["write", "--format", "recyclable", "--log-number", "7", "f"][..],
            &["write", "--format", "legacy", "f"],
            &["cat", "--format", "auto", "--ignorable-types", "skip", "f"],
            &["cat", "--buffer-limit", "0", "f"],
            &[
                "verify",
                "--format",
                "recyclable",
                "--log-number",
                "4294967338",
                "f",
            ],
            &["dump", "--format", "auto", "f"],
            &["stats", "--log-number", "3", "f"],
            &["salvage", "--format", "recyclable", "a", "b"],
            &["split", "--ignorable-types", "report", "f"],
        ] {
            let args = std::iter::once("logfmt").chain(ok.iter().copied());
            assert!(Cli::try_parse_from(args).is_ok(), "{ok:?}");
        }
        for bad in [
            &["write", "--format", "auto", "f"][..],
            &["cat", "--format", "rocksdb", "f"],
            &["cat", "--log-number", "-1", "f"],
            &["verify", "--ignorable-types", "ignore", "f"],
        ] {
            let args = std::iter::once("logfmt").chain(bad.iter().copied());
            assert!(Cli::try_parse_from(args).is_err(), "{bad:?}");
        }
    }
}
