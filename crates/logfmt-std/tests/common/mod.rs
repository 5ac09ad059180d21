//! Helpers shared by the integration tests.

#![allow(dead_code, unreachable_pub)]

use logfmt_std::{
    Damage, LogReaderOptions, LogWriter, LogWriterOptions,
    advanced::{Entry, LogReader, ReadError, Written},
};

/// A record of `len` bytes whose content depends on `seed`.
pub fn record(len: usize, seed: u32) -> Vec<u8> {
    (0..len)
        .map(|i| {
            (i as u32)
                .wrapping_mul(2_654_435_761)
                .wrapping_add(seed)
                .to_le_bytes()[1]
        })
        .collect()
}

/// A log of records of the given lengths, and where each was written.
pub fn log_of(lens: &[usize]) -> (Vec<u8>, Vec<(Written, Vec<u8>)>) {
    let mut writer = LogWriter::new(Vec::new(), &LogWriterOptions::new());
    let mut written = Vec::new();
    for (i, &len) in lens.iter().enumerate() {
        let data = record(len, i as u32);
        let at = writer.add_record(&data).expect("writing to memory");
        written.push((at, data));
    }
    (writer.close().expect("writing to memory"), written)
}

/// What a reader returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    Record(u64, Vec<u8>),
    Damage(Damage),
    Error(Damage),
}

/// Everything `reader` returns, until `None` or an error.
pub fn drain<S: logfmt_std::advanced::BlockSource>(reader: &mut LogReader<S>) -> Vec<Seen>
where
    S::Error: std::fmt::Debug,
{
    let mut seen = Vec::new();
    loop {
        match reader.next() {
            Ok(None) => return seen,
            Ok(Some(Entry::Record(r))) => seen.push(Seen::Record(r.offset, r.data.to_vec())),
            Ok(Some(Entry::Damage(d))) => seen.push(Seen::Damage(d)),
            Err(ReadError::Damaged(d)) => {
                seen.push(Seen::Error(d));
                return seen;
            }
            Err(ReadError::Io(e)) => panic!("read error {e:?}"),
            Err(_) => panic!("unexpected error"),
            other => panic!("not expected here: {other:?}"),
        }
    }
}

/// Everything a reader over `log` with `options` returns.
pub fn read(log: &[u8], options: &LogReaderOptions) -> Vec<Seen> {
    drain(&mut LogReader::from_slice(log, options))
}

/// Only the records.
pub fn records(seen: &[Seen]) -> Vec<(u64, Vec<u8>)> {
    seen.iter()
        .filter_map(|s| match s {
            Seen::Record(offset, data) => Some((*offset, data.clone())),
            _ => None,
        })
        .collect()
}

/// Only the damage.
pub fn damages(seen: &[Seen]) -> Vec<Damage> {
    seen.iter()
        .filter_map(|s| match s {
            Seen::Damage(d) | Seen::Error(d) => Some(*d),
            Seen::Record(..) => None,
        })
        .collect()
}

/// A temporary directory, in memory where there is one (`/dev/shm`): sweeps rewrite a file
/// tens of thousands of times, and ext4 flushes a file truncated to rewrite it.
pub fn scratch_dir() -> std::io::Result<tempfile::TempDir> {
    let shm = std::path::Path::new("/dev/shm");
    if shm.is_dir()
        && let Ok(dir) = tempfile::Builder::new().prefix("logfmt-").tempdir_in(shm)
    {
        return Ok(dir);
    }
    tempfile::tempdir()
}
