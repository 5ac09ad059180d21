//! What real LevelDB and RocksDB make of a log with packs (logfmt's record types 0x51–0x54).
//!
//! A log of write batches, some written plain and some gathered into packs (one chunk, and
//! across blocks), is read by:
//!
//! - `logfmt cat`: every batch, in order;
//! - LevelDB's own log reader (`leveldb::DumpFile`, checksums verified): every plain batch at
//!   its offset, and for each pack chunk one report of an unknown record type with the
//!   chunk's bytes — never a pack taken for a batch, the log framed exactly;
//! - RocksDB's (`ldb dump_wal`): the plain batches at their offsets, each pack chunk reported
//!   as an unknown record type, nothing else.
//!
//! That is the deliberate choice: a pack type has bit 7 clear, so an old reader says it
//! could not read it instead of dropping it silently (RocksDB's rule for types with bit 7
//! set). Ignored by a plain `cargo test`; `cargo xtask interop` installs LevelDB and RocksDB
//! and runs it.

mod interop_tools;

use std::fs;
use std::path::Path;

use interop_tools::*;
use logfmt_core::pack::PackBuffer;
use logfmt_core::{BLOCK_SIZE, SliceWriter, parts::HEADER_SIZE};
use logfmt_tests::write_batch::{Batch, Op, decode, encode};

/// Batch `i`: one put, sequence `i + 1`.
fn batch(i: usize, len: usize) -> Batch {
    Batch {
        sequence: i as u64 + 1,
        ops: vec![Op::Put(
            format!("pack-{i:05}").into_bytes(),
            vec![b'a' + (i % 26) as u8; len],
        )],
    }
}

/// A chunk as LevelDB counts it in a report: its offset, type, payload bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct PackChunk {
    offset: u64,
    record_type: u8,
    bytes: u64,
}

/// A log made by [`log_of`].
struct Made {
    log: Vec<u8>,
    /// The plain batches, with their offsets.
    plain: Vec<(u64, Batch)>,
    /// Every batch, in order.
    all: Vec<Batch>,
    pack_chunks: Vec<PackChunk>,
}

/// The log of groups of batches, plain (`false`) or packed (`true`).
fn log_of(groups: &[(bool, Vec<Batch>)]) -> Made {
    let mut buffer = vec![0u8; 16 * BLOCK_SIZE];
    let mut writer = SliceWriter::new(&mut buffer);
    let (mut plain, mut all) = (Vec::new(), Vec::new());
    for (packed, batches) in groups {
        if *packed {
            let mut pack = Box::new(PackBuffer::<{ 4 * BLOCK_SIZE }>::new());
            for b in batches {
                pack.push(&encode(b)).expect("fits");
            }
            writer.add_pack(pack.as_bytes()).expect("room");
        } else {
            for b in batches {
                let at = writer.add_record(&encode(b)).expect("room").offset;
                plain.push((at, b.clone()));
            }
        }
        all.extend(batches.iter().cloned());
    }
    let len = writer.len();
    buffer.truncate(len);
    // The pack chunks, as the log's layout has them.
    let mut chunks = Vec::new();
    let mut at = 0usize;
    while at + HEADER_SIZE <= buffer.len() {
        let block_left = BLOCK_SIZE - at % BLOCK_SIZE;
        if block_left < HEADER_SIZE {
            at += block_left;
            continue;
        }
        let len = u16::from_le_bytes([buffer[at + 4], buffer[at + 5]]) as usize;
        let record_type = buffer[at + 6];
        if (0x51..=0x54).contains(&record_type) {
            chunks.push(PackChunk {
                offset: at as u64,
                record_type,
                bytes: len as u64,
            });
        }
        at += HEADER_SIZE + len;
    }
    Made {
        log: buffer,
        plain,
        all,
        pack_chunks: chunks,
    }
}

#[test]
#[ignore = "needs LevelDB and RocksDB: run with cargo xtask interop"]
fn old_readers_report_packs_and_read_the_plain_records_around_them() {
    let mut n = 0;
    let mut group = |count: usize, len: usize| {
        let batches: Vec<Batch> = (n..n + count).map(|i| batch(i, len)).collect();
        n += count;
        batches
    };
    let groups = vec![
        (false, group(3, 20)),
        (true, group(40, 16)),
        (false, group(2, 100)),
        // A pack across blocks (FIRST, LAST).
        (true, group(6, 9_000)),
        (false, group(5, 10)),
        (true, group(200, 30)),
        (false, group(1, 5)),
    ];
    let Made {
        log,
        plain,
        all,
        pack_chunks,
    } = log_of(&groups);
    assert!(
        pack_chunks.iter().any(|c| c.record_type == 0x52),
        "a pack across blocks"
    );
    let dir = scratch("pack_interop", "log");
    let path = dir.join("000009.log");
    fs::write(&path, &log).unwrap_or_else(|e| panic!("{e}"));

    // logfmt reads every batch.
    let cat = logfmt(&["cat", "--output", "framed", path_str(&path)]);
    let mut framed = &cat.stdout[..];
    let mut read = Vec::new();
    while let Some((len, rest)) = framed.split_first_chunk::<4>() {
        let (record, rest) = rest.split_at(u32::from_le_bytes(*len) as usize);
        read.push(decode(record).expect("a WriteBatch"));
        framed = rest;
    }
    assert!(read == all, "logfmt reads every batch, packed or not");

    // LevelDB: the plain batches at their offsets, one report per pack chunk.
    let out = path.with_extension("dump");
    leveldb(&[Path::new("dump"), &path, &out]);
    let dump = fs::read_to_string(&out).unwrap_or_else(|e| panic!("{e}"));
    let listed: Vec<u64> = dump
        .lines()
        .filter_map(|l| l.strip_prefix("--- offset "))
        .map(|l| l.split(';').next().unwrap().parse().expect("an offset"))
        .collect();
    let plain_offsets: Vec<u64> = plain.iter().map(|(at, _)| *at).collect();
    assert_eq!(
        listed, plain_offsets,
        "LevelDB lists exactly the plain batches"
    );
    let reports: Vec<&str> = dump
        .lines()
        .filter(|l| l.starts_with("corruption:"))
        .collect();
    assert_eq!(
        reports.len(),
        pack_chunks.len(),
        "one report per pack chunk: {reports:?}"
    );
    for (line, chunk) in reports.iter().zip(&pack_chunks) {
        let expected = format!(
            "corruption: {} bytes; Corruption: unknown record type {}",
            chunk.bytes, chunk.record_type
        );
        assert!(line.starts_with(&expected), "{line} (expected {expected})");
    }

    // RocksDB: the plain batches at their offsets; each pack chunk reported.
    let out = ldb_dump_wal(&path);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let rows: Vec<(u64, u64)> = stdout
        .lines()
        .skip(1)
        .map(|l| {
            let fields: Vec<&str> = l.split(',').collect();
            (
                fields[0].parse().expect("a sequence"),
                fields[3].parse().expect("an offset"),
            )
        })
        .collect();
    let expected: Vec<(u64, u64)> = plain.iter().map(|(at, b)| (b.sequence, *at)).collect();
    assert_eq!(rows, expected, "ldb lists exactly the plain batches");
    let unknown = stderr.matches("unknown record type").count();
    assert_eq!(
        unknown,
        pack_chunks.len(),
        "ldb reports each pack chunk: {stderr}"
    );

    println!(
        "a {}-byte log of {} batches, {} in {} packs ({} pack chunks): logfmt reads all of \
         them; LevelDB and RocksDB read the {} plain batches at their offsets and report each \
         pack chunk as an unknown record type",
        log.len(),
        all.len(),
        all.len() - plain.len(),
        groups.iter().filter(|g| g.0).count(),
        pack_chunks.len(),
        plain.len()
    );
}
