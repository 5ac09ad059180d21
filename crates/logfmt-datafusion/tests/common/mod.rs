//! Logs written for the tests, and what a sequential read of them returns.

#![allow(dead_code, unreachable_pub)]

use std::fs::File;
use std::path::{Path, PathBuf};

use datafusion::arrow::array::{Array, BinaryArray, StringArray, UInt32Array, UInt64Array};
use datafusion::arrow::record_batch::RecordBatch;
use logfmt_std::{
    LogReaderOptions, LogWriter, LogWriterOptions, RecoveryMode,
    advanced::{
        Entry, Format, LogReader, PackLimit, ReadFormat, ReadOptions, StdSource, WriteOptions,
        log_number_in_name, recyclable_log_number,
    },
};

/// A row of `logs`.
pub type Row = (String, u64, u64, Option<u32>, Vec<u8>);
/// A row of `damage`: file, offset, bytes, kind.
pub type DamageRow = (String, u64, u64, String);

/// A small deterministic generator (xorshift).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// `count` records of sizes from 0 to `max` (some larger than a block), seeded.
pub fn records(seed: u64, count: usize, max: u64) -> Vec<Vec<u8>> {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    (0..count)
        .map(|i| {
            let len = if i % 17 == 3 {
                40_000 + rng.below(max)
            } else {
                rng.below(max)
            };
            let byte = rng.next() as u8;
            (0..len).map(|j| byte.wrapping_add(j as u8)).collect()
        })
        .collect()
}

/// Writes `records` to a log at `path` with `options`.
pub fn write(path: &Path, options: &LogWriterOptions, records: &[Vec<u8>]) {
    let mut writer = LogWriter::create(path, options).unwrap();
    for record in records {
        writer.add_record(record).unwrap();
    }
    writer.close().unwrap();
}

/// Writes the same records to a `Vec`.
pub fn write_vec(options: &LogWriterOptions, records: &[Vec<u8>]) -> Vec<u8> {
    let mut writer = LogWriter::new(Vec::new(), options);
    for record in records {
        writer.add_record(record).unwrap();
    }
    writer.close().unwrap()
}

/// A directory of logs of every kind the table reads: plain, packed, recyclable, a recycled
/// file with stale bytes after its new records, damaged by flipped bytes, a torn tail, an
/// empty file, zeros after the last record.
pub fn corpus(dir: &Path) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    let mut add = |name: &str, bytes: Vec<u8>| {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        paths.push(path);
    };
    let plain = LogWriterOptions::new();
    add("plain.log", write_vec(&plain, &records(1, 300, 3000)));
    let packed = LogWriterOptions::new().pack(Some(PackLimit::bytes(4096)));
    let small: Vec<Vec<u8>> = records(2, 2000, 40)
        .into_iter()
        .map(|r| r[..r.len().min(60)].to_vec())
        .collect();
    add("packed.log", write_vec(&packed, &small));
    let recyclable = |n: u32| {
        LogWriterOptions::new()
            .write(WriteOptions::new().format(Format::Recyclable { log_number: n }))
    };
    add(
        "000007.log",
        write_vec(&recyclable(7), &records(3, 200, 2000)),
    );
    // A recycled file: log 9's records over log 8's, whose bytes follow them.
    let mut old = write_vec(&recyclable(8), &records(4, 400, 2000));
    let new = write_vec(&recyclable(9), &records(5, 100, 2000));
    old[..new.len()].copy_from_slice(&new);
    add("000009.log", old);
    // Damage: bytes flipped in several blocks.
    let mut damaged = write_vec(&plain, &records(6, 400, 2500));
    let mut rng = Rng(77);
    for _ in 0..12 {
        let at = rng.below(damaged.len() as u64) as usize;
        damaged[at] ^= 0x5a;
    }
    add("damaged.log", damaged);
    // A torn tail: cut in the middle of the last record.
    let mut torn = write_vec(&plain, &records(7, 150, 3000));
    torn.truncate(torn.len() - 700);
    add("torn.log", torn);
    add("empty.log", Vec::new());
    let mut zeros = write_vec(&plain, &records(8, 50, 500));
    zeros.extend(std::iter::repeat_n(0, 50_000));
    add("zeros.log", zeros);
    paths
}

/// The `file` column's value for `path`.
pub fn name(path: &Path) -> String {
    std::path::absolute(path)
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned()
}

/// The records and damage of a sequential read of `path` (no range), with `recovery`, in the
/// format `auto` decides (with the log number of the file's name). A torn tail of zeros to
/// the end of the file is of kind `zero_fill`.
pub fn sequential(path: &Path, recovery: RecoveryMode) -> (Vec<Row>, Vec<DamageRow>) {
    let log_number = log_number_in_name(path).map(recyclable_log_number);
    let options = LogReaderOptions::new()
        .recovery(recovery)
        .read(ReadOptions::new().format(ReadFormat::Auto { log_number }));
    let mut reader = LogReader::new(StdSource::seekable(File::open(path).unwrap()), &options);
    let file = name(path);
    let mut rows = Vec::new();
    let mut damage = Vec::new();
    while let Some(entry) = reader.next().unwrap() {
        match entry {
            Entry::Record(r) => rows.push((
                file.clone(),
                r.offset,
                r.data.len() as u64,
                r.index,
                r.data.to_vec(),
            )),
            Entry::Damage(d) => {
                let torn = d.kind == logfmt_std::DamageKind::TornTail;
                let kind = if torn && zeros_to_the_end(path, d.offset, d.bytes) {
                    "zero_fill".to_owned()
                } else {
                    kind(d.kind)
                };
                damage.push((file.clone(), d.offset, d.bytes, kind));
            }
            other => panic!("not expected here: {other:?}"),
        }
    }
    (rows, damage)
}

/// Whether the `bytes` bytes of `path` from `offset` are zeros that run to the end of the file
/// (not empty): the `damage` table's `zero_fill`, as `logfmt verify` tells it, checked here
/// without logfmt-std.
fn zeros_to_the_end(path: &Path, offset: u64, bytes: u64) -> bool {
    let file = std::fs::read(path).unwrap();
    bytes > 0
        && offset + bytes == file.len() as u64
        && file[offset as usize..].iter().all(|&b| b == 0)
}

fn kind(kind: logfmt_std::DamageKind) -> String {
    match kind {
        logfmt_std::DamageKind::Corruption(_) => "corruption",
        logfmt_std::DamageKind::TornTail => "torn_tail",
        logfmt_std::DamageKind::Skipped => "skipped",
        logfmt_std::DamageKind::LostTail { .. } => "lost_tail",
        _ => "damage",
    }
    .to_owned()
}

fn column<'a, T: 'static>(batch: &'a RecordBatch, name: &str) -> &'a T {
    batch
        .column_by_name(name)
        .unwrap_or_else(|| panic!("no column {name}"))
        .as_any()
        .downcast_ref::<T>()
        .unwrap()
}

/// The rows of `logs` batches (all five columns).
pub fn rows(batches: &[RecordBatch]) -> Vec<Row> {
    let mut rows = Vec::new();
    for batch in batches {
        let file = column::<StringArray>(batch, "file");
        let offset = column::<UInt64Array>(batch, "offset");
        let length = column::<UInt64Array>(batch, "length");
        let index = column::<UInt32Array>(batch, "index");
        let payload = column::<BinaryArray>(batch, "payload");
        for i in 0..batch.num_rows() {
            rows.push((
                file.value(i).to_owned(),
                offset.value(i),
                length.value(i),
                index.is_valid(i).then(|| index.value(i)),
                payload.value(i).to_vec(),
            ));
        }
    }
    rows
}

/// The rows of `damage` batches.
pub fn damage_rows(batches: &[RecordBatch]) -> Vec<DamageRow> {
    let mut rows = Vec::new();
    for batch in batches {
        let file = column::<StringArray>(batch, "file");
        let offset = column::<UInt64Array>(batch, "offset");
        let bytes = column::<UInt64Array>(batch, "bytes");
        let kind = column::<StringArray>(batch, "kind");
        for i in 0..batch.num_rows() {
            rows.push((
                file.value(i).to_owned(),
                offset.value(i),
                bytes.value(i),
                kind.value(i).to_owned(),
            ));
        }
    }
    rows
}
