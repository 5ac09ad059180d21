//! Target `decompress`: compressed records of both kinds, read through `logfmt-std`.
//!
//! Input: a first byte choosing the kind — even: a logfmt pack whose payload is the zstd codec
//! byte then the rest of the input (its count, its declared decoded length, its frame); odd:
//! RocksDB's WAL compression record (zstd), then the rest of the input as one compressed
//! record — then, in both, a plain record `after` (a pack's log) or a second record of the
//! input's bytes (a compressed log).
//!
//! Properties: no panic; reading ends (within the records the bytes can hold once decoded);
//! no record returned is longer than the reader's limit
//! (a declared size past the limit is never decoded, so memory stays bounded — libFuzzer's
//! malloc limit catches an allocation past it); with a pack, the plain record after it is
//! always read, last, whatever the pack held (damage inside a pack loses at most that pack).

#![allow(dead_code, unreachable_pub)]

use logfmt_core::pack::ZSTD;
use logfmt_core::{BLOCK_SIZE, SliceWriter, Writer};
use logfmt_std::{
    LogReaderOptions, RecoveryMode,
    advanced::{Bounded, LogReader, StdSink},
};

/// The reader's limit for one record.
const LIMIT: usize = 1 << 20;
/// RocksDB's codec number for zstd.
const ROCKSDB_ZSTD: u32 = 7;

/// Checks one input.
pub fn check(data: &[u8]) {
    let Some((records, pack)) = records(data) else {
        return;
    };
    if pack {
        assert_eq!(
            records.last().map(Vec::as_slice),
            Some(&b"after"[..]),
            "the record after the pack"
        );
    }
}

/// The records a reader returns from the log an input makes, and whether that log held a pack;
/// `None` for an empty input. Asserts the properties of one read.
pub fn records(data: &[u8]) -> Option<(Vec<Vec<u8>>, bool)> {
    let (&kind, body) = data.split_first()?;
    let body = &body[..body.len().min(2 * BLOCK_SIZE)];
    let pack = kind & 1 == 0;
    let log = if pack {
        let mut log = vec![0u8; body.len() + 4 * BLOCK_SIZE];
        let mut writer = SliceWriter::new(&mut log);
        let mut payload = vec![ZSTD];
        payload.extend_from_slice(body);
        writer.add_pack(&payload).expect("room for the pack");
        writer.add_record(b"after").expect("room for a record");
        let len = writer.as_bytes().len();
        log.truncate(len);
        log
    } else {
        let mut writer = Writer::new(StdSink::new(Vec::new()), Box::new([0u8; BLOCK_SIZE]));
        writer
            .add_compression_record(ROCKSDB_ZSTD)
            .expect("memory takes the compression record");
        writer.add_record(body).expect("memory takes a record");
        writer.add_record(body).expect("memory takes a record");
        writer.flush().expect("memory takes the log");
        writer.into_parts().0.into_inner()
    };
    let len = log.len();
    let log = &log[..];

    let options = LogReaderOptions::new().recovery(RecoveryMode::SkipAnyCorruptedRecords);
    let mut reader = LogReader::from_slice(log, &options);
    let mut records: Vec<Vec<u8>> = Vec::new();
    // Each step reads on. A stored pack holds no more records than it has bytes; a compressed
    // one no more than its decoded body has (each record takes at least its length's byte), and
    // the body is decoded only within the limit: a pack of 760 decoded bytes of empty records
    // is 715 records from a 130-byte input.
    let steps = 4 * len + 16 + if pack { LIMIT } else { 0 };
    for _ in 0..=steps {
        match reader.next_bounded(LIMIT) {
            Ok(Some(Bounded::Record(record))) => {
                assert!(record.data.len() <= LIMIT, "a record past the limit");
                records.push(record.data.to_vec());
            }
            Ok(Some(Bounded::Oversized(oversized))) => {
                assert!(
                    oversized.len as usize > LIMIT || !pack,
                    "oversized within the limit"
                );
            }
            Ok(Some(Bounded::Damage(_))) => {}
            Ok(None) | Err(_) => break,
            Ok(Some(_)) => {}
        }
    }
    assert!(
        reader.next_bounded(LIMIT).map_or(true, |e| e.is_none()),
        "reading ends"
    );
    Some((records, pack))
}
