//! What the web crate's tests share: logs written by the core writer, and the LevelDB vectors.

#![allow(dead_code, clippy::unwrap_used)]

use std::path::PathBuf;

use logfmt_core::{BLOCK_SIZE, FnSink, Writer};

/// A log of `records`, written by the core writer.
pub(crate) fn log_of(records: impl IntoIterator<Item = Vec<u8>>) -> Vec<u8> {
    let mut log = Vec::new();
    let mut writer = Writer::new(
        FnSink(|bytes: &[u8]| {
            log.extend_from_slice(bytes);
            Ok::<(), std::convert::Infallible>(())
        }),
        [0u8; BLOCK_SIZE],
    );
    for record in records {
        writer.add_record(&record).unwrap();
    }
    writer.flush().unwrap();
    let _ = writer.into_parts();
    log
}

/// The folder of the LevelDB vectors, and the names of its logs, sorted.
pub(crate) fn vector_names() -> (PathBuf, Vec<String>) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/leveldb");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".log"))
        .collect();
    names.sort();
    (dir, names)
}

/// Pebble's own WAL (`tests/data/pebble/find-val-sep-db/000007.log`: 30 batches in WAL-sync
/// chunks of log 7, each synced offset the chunk's own offset, then the EOF trailer).
pub(crate) fn pebbles_wal() -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/pebble/find-val-sep-db/000007.log");
    std::fs::read(path).unwrap()
}

/// A Pebble WAL-sync chunk: `t` (9-12), log number, synced offset, payload.
fn wal_sync_chunk(t: u8, log: u32, synced: u64, payload: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; 7];
    out[4..6].copy_from_slice(&u16::try_from(payload.len()).unwrap().to_le_bytes());
    out[6] = t;
    out.extend_from_slice(&log.to_le_bytes());
    out.extend_from_slice(&synced.to_le_bytes());
    out.extend_from_slice(payload);
    let crc = logfmt_core::parts::checksum::mask(logfmt_core::parts::checksum::crc32c(&out[6..]));
    out[..4].copy_from_slice(&crc.to_le_bytes());
    out
}

/// Pebble's own WAL ([`pebbles_wal`]) written on as Pebble's writer writes: one more record
/// after its 30 (FIRST to the end of block 0, LAST in block 1), written when the writer knew
/// the log synced to that record's start (1450), then the EOF trailer. Damage in the first 30
/// records is then corruption to Pebble: block 1's chunk says the log was synced past it.
pub(crate) fn pebbles_wal_written_on() -> Vec<u8> {
    let wal = pebbles_wal();
    let end = wal.len() - 11;
    let mut log = wal[..end].to_vec();
    let first = BLOCK_SIZE - end - 19;
    log.extend(wal_sync_chunk(10, 7, end as u64, &vec![b'p'; first]));
    log.extend(wal_sync_chunk(12, 7, end as u64, &[b'q'; 100]));
    log.extend_from_slice(&[0, 0, 0, 0, 0, 0, 5, 8, 0, 0, 0]);
    log
}
