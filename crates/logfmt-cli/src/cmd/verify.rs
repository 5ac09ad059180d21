//! `logfmt verify`: read a whole log and report what was dropped.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use logfmt_core::{Corruption, FragmentReader, ReadOptions};
use logfmt_std::LogFile;

use crate::error::{CliError, EXIT_BAD_DATA, EXIT_OK};
use crate::scan::{Found, scan};

/// Read a whole log and report its records and every drop.
///
/// The records and drops are exactly those LevelDB's log reader returns and reports. Exit
/// status: 0 if nothing was dropped, 1 if corruption was found, 2 on a usage or I/O error (a
/// read error is also reported as LevelDB reports it: a drop of 32768 bytes).
#[derive(Debug, clap::Args)]
pub(crate) struct VerifyArgs {
    /// Print one JSON document: {"records": n, "payload_bytes": n, "dropped_bytes": n,
    /// "corruptions": [{"offset": n, "bytes": n, "reason": "..."}]}.
    #[arg(long)]
    json: bool,
    /// Start at the first record that begins at or after this file offset (LevelDB's
    /// initial_offset); drops before it are not reported.
    #[arg(long, value_name = "N", default_value_t = 0)]
    offset: u64,
    /// The log file to check.
    #[arg(value_name = "FILE")]
    file: PathBuf,
}

/// What `verify` found.
#[derive(Debug, Default)]
struct Summary {
    records: u64,
    payload_bytes: u64,
    corruptions: Vec<Corruption>,
}

impl Summary {
    fn dropped_bytes(&self) -> u64 {
        self.corruptions.iter().map(|c| c.bytes).sum()
    }

    fn write_json(&self, out: &mut impl Write) -> io::Result<()> {
        write!(
            out,
            "{{\"records\": {}, \"payload_bytes\": {}, \"dropped_bytes\": {}, \"corruptions\": [",
            self.records,
            self.payload_bytes,
            self.dropped_bytes()
        )?;
        for (i, c) in self.corruptions.iter().enumerate() {
            let separator = if i == 0 { "" } else { ", " };
            let reason = serde_json::Value::String(c.kind.to_string());
            write!(
                out,
                "{separator}{{\"offset\": {}, \"bytes\": {}, \"reason\": {reason}}}",
                c.offset, c.bytes
            )?;
        }
        writeln!(out, "]}}")
    }

    fn write_text(&self, out: &mut impl Write, file: &std::path::Path) -> io::Result<()> {
        let plural = |n: u64, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
        write!(
            out,
            "{}: {}, {} of payload, ",
            file.display(),
            plural(self.records, "record"),
            plural(self.payload_bytes, "byte"),
        )?;
        if self.corruptions.is_empty() {
            return writeln!(out, "no corruption");
        }
        writeln!(
            out,
            "{} dropped in {}",
            plural(self.dropped_bytes(), "byte"),
            plural(self.corruptions.len() as u64, "corruption")
        )?;
        for c in &self.corruptions {
            writeln!(
                out,
                "  offset {}: {} dropped: {}",
                c.offset,
                plural(c.bytes, "byte"),
                c.kind
            )?;
        }
        Ok(())
    }
}

/// Runs `verify`. Its status depends on what was found, so it is returned even on success.
pub(crate) fn run(args: &VerifyArgs) -> Result<ExitCode, CliError> {
    let log = LogFile::open(&args.file)?;
    let options = ReadOptions::new().initial_offset(args.offset);
    let mut reader = FragmentReader::with_options(log.source(), &options);
    let mut summary = Summary::default();
    let mut read_error = None;
    scan(&mut reader, false, |found| -> Result<(), CliError> {
        match found {
            Found::Record { len, .. } => {
                summary.records += 1;
                summary.payload_bytes += len;
            }
            Found::Corruption(corruption) => summary.corruptions.push(corruption),
            Found::ReadError { error, corruption } => {
                summary.corruptions.push(corruption);
                read_error = Some(error);
            }
        }
        Ok(())
    })?;
    let mut out = io::stdout().lock();
    let printed = if args.json {
        summary.write_json(&mut out)
    } else {
        summary.write_text(&mut out, log.path())
    };
    let printed = printed.and_then(|()| out.flush());
    if let Some(error) = read_error {
        return Err(log.read_error(error).into());
    }
    match printed {
        // Nobody is reading the report; the status still tells.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {}
        Err(e) => return Err(e.into()),
        Ok(()) => {}
    }
    let status = if summary.corruptions.is_empty() {
        EXIT_OK
    } else {
        EXIT_BAD_DATA
    };
    Ok(ExitCode::from(status))
}
