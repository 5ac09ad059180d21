//! `logfmt`: write, read and verify logs in LevelDB's log record format (the format of
//! LevelDB's and RocksDB's write-ahead logs and MANIFEST files).
//!
//! ```text
//! logfmt write [--append [--truncate-torn-tail]] [--force] [--wait[=SECONDS]]
//!              [--input lines|framed] [--line-limit BYTES] [--format legacy|recyclable]
//!              [--log-number N] FILE
//! logfmt cat [--output lines|hex|json|framed] [--offset N | --range A..B]
//!            [--buffer-limit BYTES] [READ] FILE
//! logfmt verify [--json] [--offset N] [READ] FILE
//! logfmt chunks [--json] [--erased ff|00] [FORMAT] FILE    (`dump`: a deprecated alias)
//! logfmt stats [--json] [--erased ff|00] [FORMAT] FILE
//! logfmt salvage [--json] [--force] [--wait[=SECONDS]] [--erased ff|00] [FORMAT] IN OUT
//! logfmt split [--parts N] [--json] [--erased ff|00] [FORMAT] FILE
//! logfmt export [--json] [--force] [--wait[=SECONDS]] [READ] IN OUT
//! logfmt completions SHELL
//! logfmt man DIR
//!
//! Every command: [-q|--quiet] [-v|--verbose]: less (no bar, no notes or hints) or more (each
//! file's size, ring and time) on standard error; [--color auto|always|never].
//! READ: [--recovery tolerate|absolute|point-in-time|skip] [--erased ff|00] [FORMAT]
//! FORMAT: [--format legacy|recyclable|auto] [--log-number N] [--ignorable-types report|skip]
//! ```
//!
//! A directory of numbered logs without a CURRENT file (a WAL directory) is read by `verify`,
//! `cat` and `stats` as one log, its logs in log-number order (`cmd::wal`).
//!
//! A ring image (a dump of a flash region holding a ring log, its blocks beginning with ring
//! headers) is found by the reading commands and read from its oldest block to its newest;
//! `export` turns it into a plain LevelDB log.
//!
//! Exit status: 0 success; 1 damage found (`verify`, `cat --recovery absolute`), a log refused
//! (`write`: not empty, torn, damaged or of another format; `salvage`, `export`: output not
//! empty) or malformed framed input; 2 usage or I/O error, or the log locked by another
//! writer; 3 not a log (`verify`: no record, and the file's first bytes are no chunk header).

mod bounded_reports;
mod cmd;
mod colour;
mod copy;
mod decode;
mod defmt_frames;
mod erased;
mod error;
mod escape;
mod format;
mod gloss;
mod image;
mod input;
mod notes;
mod options;
mod output;
mod parallel;
mod picture;
mod progress;
mod render;
mod scan;
mod story;
mod targets;
mod wal_dir;

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use logfmt_std::advanced::EscapedPath;

use crate::error::{CliError, EXIT_OK};

/// The exit statuses, shown at the end of every `--help`.
macro_rules! exit_status {
    () => {
        "Exit status:
  0  success
  1  damage found (verify; cat, export --recovery absolute); a log refused (write: not empty,
     torn, damaged or of another format; salvage, export: output not empty); malformed framed
     input (write)
  2  usage or I/O error (missing file, a directory, unreadable input, a full disk, ...); the
     log locked by another writer (write, salvage, export: see --wait)
  3  not a log (verify: no record, and the file's first bytes are no chunk header)"
    };
}

/// The exit statuses, shown at the end of every `--help`.
const EXIT_STATUS: &str = exit_status!();

/// `--help` of each command ends with examples, then the exit statuses.
macro_rules! examples {
    ($($line:literal)*) => {
        concat!("Examples:\n", $("  ", $line, "\n",)* "\n", exit_status!())
    };
}

/// Write, read and verify logs in LevelDB's log record format.
///
/// A log is a sequence of 32 KiB blocks of checksummed chunks; a logical record that does not
/// fit in the rest of a block is split across blocks. This is the format of LevelDB's and
/// RocksDB's write-ahead logs and MANIFEST files. Logs written here are byte-identical to
/// LevelDB's, and reading reports exactly what LevelDB's reader returns and drops.
#[derive(Debug, Parser)]
#[command(name = "logfmt", version, after_help = EXIT_STATUS)]
struct Cli {
    /// Say less: no progress bar (it is shown only on a terminal, for files of 64 MiB or
    /// more), no notes or hints; warnings of damage and errors are still said.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    quiet: bool,
    /// Say more, on standard error: each file's size, its ring if it is a ring image, and the
    /// time spent on it.
    #[arg(short, long, global = true)]
    verbose: bool,
    /// When to colour the output: auto (on a terminal, unless NO_COLOR is set), always
    /// (whatever NO_COLOR says), never.
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value_t)]
    color: colour::ColorChoice,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    #[command(after_help = examples!(
        "printf 'a\\nb\\n' | logfmt write 000001.log        two records, one per line"
        "logfmt cat --output framed a.log | logfmt write --input framed --append b.log"
        "logfmt write - < lines.txt | ssh host 'cat > 000001.log'    a log to standard output"
    ))]
    Write(cmd::write::WriteArgs),
    #[command(after_help = examples!(
        "logfmt cat /var/lib/app/db                 a database: MANIFEST, then the live logs, decoded"
        "logfmt cat --output json 000042.log        one JSON object per write batch"
        "logfmt cat --hex MANIFEST-000005           version edits, keys in hex"
        "logfmt cat --decode raw --output hex -     raw records from standard input, in hex"
        "logfmt cat --follow 000042.log             print records as a writer appends them"
        "logfmt cat --offset 0x8000 000042.log      from the first record at or after 32768"
    ))]
    Cat(cmd::cat::CatArgs),
    #[command(after_help = examples!(
        "logfmt verify 000042.log                   one log (exit status 1 if damaged)"
        "logfmt verify --summary /var/lib/app/db    every file of a database, one line each"
        "logfmt verify --max-errors 10 big.log      the first 10 damaged regions, and a count"
        "logfmt verify --json a.log b.log           one JSON object per file"
    ))]
    Verify(cmd::verify::VerifyArgs),
    #[command(alias = "dump", after_help = examples!(
        "logfmt chunks 000042.log                   every chunk, trailer and damaged region"
        "logfmt chunks --json --format auto 000042.log"
    ))]
    Chunks(cmd::chunks::ChunksArgs),
    #[command(after_help = examples!(
        "logfmt stats 000042.log                    records, sizes, chunks, space, damage"
        "logfmt stats --json /var/lib/app/db        one JSON object per file of a database"
    ))]
    Stats(cmd::stats::StatsArgs),
    #[command(after_help = examples!(
        "logfmt map 000042.log                      one cell per block: where the damage is"
        "logfmt map --html map.html flash.img       a picture: every block's byte spans"
        "logfmt map --json a.log                    the model, as JSON"
    ))]
    Map(cmd::map::MapArgs),
    #[command(after_help = examples!(
        "logfmt salvage damaged.log repaired.log    every record that can be read, in a new log"
    ))]
    Salvage(cmd::salvage::SalvageArgs),
    #[command(after_help = examples!(
        "logfmt split --parts 4 big.log             byte ranges for `logfmt cat --range`, in parallel"
    ))]
    Split(cmd::split::SplitArgs),
    /// Print the completion script for a shell (bash, zsh, fish, elvish, powershell).
    ///
    /// Generated from the command line's own definitions, so it always matches this version.
    #[command(after_help = examples!(
        "logfmt completions bash > /etc/bash_completion.d/logfmt"
        "logfmt completions zsh > ~/.zfunc/_logfmt"
    ))]
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Write the man pages (logfmt.1, logfmt-cat.1, ...) into a directory.
    ///
    /// Generated from the command line's own definitions (`cargo xtask man` uses it). DIR is
    /// created if need be; pages already in it of the same names are replaced.
    #[command(after_help = examples!(
        "logfmt man /usr/local/share/man/man1"
    ))]
    Man {
        /// Where to write them.
        dir: std::path::PathBuf,
    },
    /// The former name of `completions` and `man` (`logfmt generate completions SHELL`,
    /// `logfmt generate man DIR`).
    #[command(hide = true)]
    Generate(Generate),
    #[command(after_help = examples!(
        "logfmt export flash.img plain.log          a ring image as a plain LevelDB log"
    ))]
    Export(cmd::export::ExportArgs),
    #[command(after_help = examples!(
        "logfmt defmt --elf firmware.elf --erased ff flash.img    a firmware's defmt log, decoded"
        "logfmt defmt --elf firmware.elf --json ring.img          one JSON object per frame"
    ))]
    Defmt(cmd::defmt::DefmtArgs),
}

fn main() -> ExitCode {
    ignore_file_size_signal();
    // Usage errors exit with status 2 here, `--help` and `--version` with 0.
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => return usage_error(&error),
    };
    colour::set(cli.color);
    if cli.quiet {
        progress::silence();
        notes::set(notes::Verbosity::Quiet);
    } else if cli.verbose {
        notes::set(notes::Verbosity::Verbose);
    }
    let result = match &cli.command {
        Command::Write(args) => cmd::write::run(args).map(|()| ExitCode::from(EXIT_OK)),
        Command::Cat(args) => cmd::cat::run(args).map(|()| ExitCode::from(EXIT_OK)),
        Command::Verify(args) => cmd::verify::run(args),
        Command::Chunks(args) => {
            deprecated_dump();
            cmd::chunks::run(args).map(|()| ExitCode::from(EXIT_OK))
        }
        Command::Stats(args) => cmd::stats::run(args).map(|()| ExitCode::from(EXIT_OK)),
        Command::Map(args) => cmd::map::run(args).map(|()| ExitCode::from(EXIT_OK)),
        Command::Salvage(args) => cmd::salvage::run(args).map(|()| ExitCode::from(EXIT_OK)),
        Command::Split(args) => cmd::split::run(args).map(|()| ExitCode::from(EXIT_OK)),
        Command::Export(args) => cmd::export::run(args).map(|()| ExitCode::from(EXIT_OK)),
        Command::Defmt(args) => cmd::defmt::run(args).map(|()| ExitCode::from(EXIT_OK)),
        Command::Completions { shell } => completions(*shell).map(|()| ExitCode::from(EXIT_OK)),
        Command::Man { dir } => man(dir).map(|()| ExitCode::from(EXIT_OK)),
        Command::Generate(what) => generate(what).map(|()| ExitCode::from(EXIT_OK)),
    };
    result.unwrap_or_else(|error| report(&error))
}

/// What `logfmt generate` writes.
#[derive(Debug, clap::Args)]
struct Generate {
    #[command(subcommand)]
    what: GenerateWhat,
}

#[derive(Debug, Subcommand)]
enum GenerateWhat {
    /// The completion script for SHELL, on standard output.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// The man pages (logfmt.1, logfmt-cat.1, ...), written to DIR.
    Man {
        /// Where to write them.
        dir: std::path::PathBuf,
    },
}

/// Runs `logfmt generate` (hidden: the former name of `completions` and `man`).
fn generate(args: &Generate) -> Result<(), CliError> {
    match &args.what {
        GenerateWhat::Completions { shell } => completions(*shell),
        GenerateWhat::Man { dir } => man(dir),
    }
}

/// Runs `logfmt completions SHELL`: the script on standard output (made in memory first:
/// `clap_complete` panics on a failed write).
fn completions(shell: clap_complete::Shell) -> Result<(), CliError> {
    use clap::CommandFactory;
    let mut command = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "logfmt", &mut script);
    let mut out = std::io::stdout().lock();
    out.write_all(&script)?;
    out.flush()?;
    Ok(())
}

/// Runs `logfmt man DIR`: a page per command, written into `dir`.
///
/// Every page is made in memory and every entry of its name in `dir` is checked before
/// anything is written: an entry that is not a regular file (a symbolic link, a directory, a
/// FIFO) is refused, naming it. Each page is then written to a new temporary file beside it
/// (never an existing file, nor through a link) and renamed over its name.
fn man(dir: &std::path::Path) -> Result<(), CliError> {
    use clap::CommandFactory;
    let failed = |path: &std::path::Path, e: std::io::Error| {
        CliError::Usage(format!("{}: {e}", EscapedPath::new(path)))
    };
    let mut pages = Vec::new();
    man_pages(Cli::command().disable_help_subcommand(true), &mut pages)
        .map_err(|e| failed(dir, e))?;
    std::fs::create_dir_all(dir).map_err(|e| failed(dir, e))?;
    for (name, _) in &pages {
        let path = dir.join(name);
        if let Ok(meta) = std::fs::symlink_metadata(&path)
            && !meta.is_file()
        {
            return Err(CliError::Usage(format!(
                "{}: in the way of a man page: not a regular file (a symbolic link, a \
                 directory, ...); nothing was written",
                EscapedPath::new(&path)
            )));
        }
    }
    for (name, page) in &pages {
        let path = dir.join(name);
        let temporary = dir.join(format!(".{name}.{}.tmp", std::process::id()));
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temporary)
            .and_then(|mut file| file.write_all(page))
            .and_then(|()| std::fs::rename(&temporary, &path));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&temporary);
            return Err(failed(&path, e));
        }
    }
    Ok(())
}

/// The man pages of `command` and of its commands that are not hidden, in memory: each file
/// name and its text.
fn man_pages(
    mut command: clap::Command,
    pages: &mut Vec<(String, Vec<u8>)>,
) -> std::io::Result<()> {
    command.build();
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        man_pages(sub.clone(), pages)?;
    }
    let man = clap_mangen::Man::new(command);
    let mut page = Vec::new();
    man.render(&mut page)?;
    pages.push((man.get_filename(), page));
    Ok(())
}

/// `logfmt dump` is the former name of `logfmt chunks`: LevelDB's `leveldbutil dump` prints
/// the decoded records (`logfmt cat`). Said on standard error when it is used.
fn deprecated_dump() {
    if notes::verbosity() > notes::Verbosity::Quiet
        && std::env::args_os()
            .skip(1)
            // The first word that is no flag (`-q`, `-v` take no value) names the command.
            .find(|word| !word.as_encoded_bytes().starts_with(b"-"))
            .is_some_and(|name| name == "dump")
    {
        let _ = writeln!(
            std::io::stderr().lock(),
            "logfmt: note: `logfmt dump` is now `logfmt chunks` (the physical chunks); \
             `dump` will be removed. For the decoded records, as `leveldbutil dump` prints \
             them, use `logfmt cat`."
        );
    }
}

/// Prints `error` as one line on standard error and gives its exit status. Control
/// characters in it (from a file's contents or the command line) are shown escaped.
fn report(error: &CliError) -> ExitCode {
    if error.is_broken_pipe() {
        // `logfmt cat log | head`: the reader has seen enough.
        return ExitCode::from(EXIT_OK);
    }
    let text = error.to_string();
    let _ = writeln!(
        std::io::stderr().lock(),
        "logfmt: error: {}",
        logfmt_std::advanced::Escaped::new(&text)
    );
    error.exit_code()
}

/// Prints clap's message for a command line it refused (or its `--help`, `--version`) and
/// gives its exit status (2, or 0). A refused value is quoted in the message: its control
/// characters are shown escaped (`--offset $'\e[31m'` must not colour the terminal).
fn usage_error(error: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    let code = u8::try_from(error.exit_code()).unwrap_or(error::EXIT_ERROR);
    if matches!(
        error.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        // Only this program's own text.
        return match error.print().and_then(|()| std::io::stdout().flush()) {
            Ok(()) => ExitCode::from(code),
            Err(e) => report(&CliError::from(e)),
        };
    }
    // Rendered plain, it is clap's text as it is, the refused value included; shown with
    // its styles, or with `to_string`, escape sequences in the value would be passed on, or
    // silently dropped.
    use clap::CommandFactory;
    let plain = Cli::command()
        .styles(clap::builder::Styles::plain())
        .try_get_matches()
        .err();
    let text = plain.as_ref().unwrap_or(error).render().ansi().to_string();
    let mut stderr = std::io::stderr().lock();
    for line in text.lines() {
        let _ = writeln!(stderr, "{}", logfmt_std::advanced::Escaped::new(line));
    }
    ExitCode::from(code)
}

/// A write past the file-size limit (`ulimit -f`) fails with EFBIG, reported as any failed
/// write is, instead of the process being killed by SIGXFSZ with no message and a temporary
/// file left behind.
fn ignore_file_size_signal() {
    #[cfg(unix)]
    {
        // A handler that only sets a flag: the write that raised the signal fails with
        // EFBIG. If it cannot be installed, the signal keeps its default action.
        let raised = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let _ = signal_hook::flag::register(signal_hook::consts::SIGXFSZ, raised);
    }
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
        assert!(Cli::try_parse_from(["logfmt", "chunks", "--erased", "fe", "f"]).is_err());
    }

    #[test]
    fn format_flags() {
        for ok in [
            &["write", "--format", "recyclable", "--log-number", "7", "f"][..],
            &["write", "--format", "legacy", "f"],
            &["write", "--format", "rocksdb", "--log-number", "7", "f"],
            &["write", "--format", "leveldb", "f"],
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
            &["chunks", "--format", "auto", "f"],
            &["cat", "--format", "rocksdb", "f"],
            &["verify", "--format", "pebble", "--log-number", "7", "f"],
            &["map", "--format", "leveldb", "f"],
            &["stats", "--log-number", "3", "f"],
            &["salvage", "--format", "recyclable", "a", "b"],
            &["split", "--ignorable-types", "report", "f"],
        ] {
            let args = std::iter::once("logfmt").chain(ok.iter().copied());
            assert!(Cli::try_parse_from(args).is_ok(), "{ok:?}");
        }
        for bad in [
            &["write", "--format", "auto", "f"][..],
            &["cat", "--format", "hbase", "f"],
            &["write", "--format", "pebble", "f"],
            &["cat", "--log-number", "-1", "f"],
            &["verify", "--ignorable-types", "ignore", "f"],
        ] {
            let args = std::iter::once("logfmt").chain(bad.iter().copied());
            assert!(Cli::try_parse_from(args).is_err(), "{bad:?}");
        }
    }
}
