//! Copying records from a log into a new one (`salvage`, `export`) in bounded memory: a record
//! up to [`HELD`] bytes is held and added whole; a longer one is read a second time from its
//! file and streamed into the new log, a block at a time.

use logfmt_std::{
    AtomicLog, LogFile,
    advanced::{Oversized, ReadOptions, RecordStream},
};

use crate::error::CliError;
use crate::image::Input;
use crate::scan::Found;

/// The most bytes of a record `salvage` and `export` hold: a longer record is streamed from
/// its file (a pack or compressed record, which cannot be, is reported and not copied).
pub(crate) const HELD: usize = 16 << 20;

/// The record limit of a copy of `input`: [`HELD`] where a record can be read a second time
/// (a regular file read in file order); otherwise (a pipe, a ring image) none, and records are
/// held whole.
pub(crate) fn limit(input: &Input) -> usize {
    if input.log.is_regular() && input.ring.is_none() {
        HELD
    } else {
        crate::scan::UNLIMITED
    }
}

/// Copies the record `found` (a record, or one too long to hold) from `input` into `writer`:
/// whole, or streamed from the file; returns its payload bytes. A pack or compressed record too
/// long to decode is said on standard error (`command` names the command) and not copied:
/// `None`, as for anything that is not a record.
///
/// # Errors
/// As [`streamed`], or writing failed.
pub(crate) fn record(
    writer: &mut AtomicLog,
    input: &Input,
    read: &ReadOptions,
    found: &Found<'_>,
    command: &str,
) -> Result<Option<u64>, CliError> {
    match found {
        Found::Record { data, .. } => {
            writer.add_record(data).map_err(CliError::unchanged)?;
            Ok(Some(data.len() as u64))
        }
        Found::Oversized(record) if record.coded => {
            crate::notes::say(
                input.log.path(),
                &format!(
                    "offset {}: a pack or compressed record of {} bytes or more once decoded, \
                     more than the {} MiB {command} decodes: not copied",
                    input.offset(record.offset),
                    record.len,
                    HELD >> 20
                ),
            );
            Ok(None)
        }
        Found::Oversized(record) => {
            streamed(writer, &input.log, read, record)?;
            Ok(Some(record.len))
        }
        _ => Ok(None),
    }
}

/// Appends `record` (found too long to hold: not coded) to `writer`, read again from `log`
/// with the options it was read with, a fragment at a time.
///
/// # Errors
/// The log changed since the record was read, or reading or writing failed: the new log is
/// then not to be committed (its writer is poisoned).
pub(crate) fn streamed(
    writer: &mut AtomicLog,
    log: &LogFile,
    read: &ReadOptions,
    record: &Oversized,
) -> Result<(), CliError> {
    let mut stream = RecordStream::new(log, read, record)?;
    // The fragment being copied, and how much of it is copied.
    let mut piece = Vec::new();
    let mut copied = 0;
    // Why the stream failed, if it did: the writer only sees that it did.
    let mut failed: Option<logfmt_std::Error> = None;
    let written = writer.add_record_with(record.len, |payload| {
        let mut filled = 0;
        while filled < payload.len() {
            if copied == piece.len() {
                match stream.next() {
                    Ok(Some(next)) => {
                        piece.clear();
                        piece.extend_from_slice(next);
                        copied = 0;
                    }
                    Ok(None) => {
                        return Err(std::io::Error::other("the record ended early"));
                    }
                    Err(error) => {
                        let message = error.to_string();
                        failed = Some(error);
                        return Err(std::io::Error::other(message));
                    }
                }
            }
            let n = (piece.len() - copied).min(payload.len() - filled);
            payload[filled..filled + n].copy_from_slice(&piece[copied..copied + n]);
            copied += n;
            filled += n;
        }
        Ok(())
    });
    if let Some(error) = failed {
        return Err(error.into());
    }
    written.map_err(CliError::unchanged)?;
    // The whole record was handed out: the stream has checked it ended where it did.
    if copied < piece.len() || stream.next()?.is_some() {
        return Err(logfmt_std::Error::Changed {
            path: log.path().into(),
            offset: record.offset,
        }
        .into());
    }
    Ok(())
}
