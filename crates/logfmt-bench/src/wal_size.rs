//! The write-ahead log size comparison: the same puts, each its own `WriteBatch` (sequence
//! numbers from 1, as a new RocksDB database numbers them), written by logfmt plain, with
//! RocksDB's WAL compression and in compressed packs; RocksDB's own logs of the same puts are
//! written by `cpp/rocksdb_wal_size.cc` from the spec file this mode writes. One line each:
//!
//! ```text
//! WALSIZE impl=<logfmt-plain|logfmt-rocksdb-zstd|logfmt-packs|logfmt-packs-zstd> puts=N bytes=B
//! ```
//!
//! Each log is read back before its line is printed: it must give back every batch, in order.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::Path;

use logfmt_std::content::{Op, WriteBatch};
use logfmt_std::{
    Compression, LogReaderOptions, LogWriter, LogWriterOptions,
    advanced::{Entry, LogReader, PackLimit, StdSource},
};

/// Words the values are made of: text-like values, as JSON documents and log lines are.
const WORDS: [&str; 32] = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
    "mike",
    "november",
    "oscar",
    "papa",
    "quebec",
    "romeo",
    "sierra",
    "tango",
    "uniform",
    "victor",
    "whiskey",
    "xray",
    "yankee",
    "zulu",
    "\"id\":",
    "\"name\":",
    "{",
    "}",
    ", ",
    "0123",
];

/// The puts: keys and values of 16 to 100 bytes each (a deterministic spread), keys of a
/// table-like shape (`user:` and a scattered id, then a field name), values text-like.
#[must_use]
pub fn puts(count: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..count)
        .map(|i| {
            let key_len = 16 + (next() % 85) as usize;
            let value_len = 16 + (next() % 85) as usize;
            let id = (i as u64).wrapping_mul(2_654_435_761) % 10_000_000_000;
            let mut key = format!("user:{id:010}/field-{}", next() % 64).into_bytes();
            while key.len() < key_len {
                key.push(b'a' + (next() % 26) as u8);
            }
            key.truncate(key_len);
            let mut value = Vec::with_capacity(value_len + 16);
            while value.len() < value_len {
                value.extend_from_slice(WORDS[(next() % 32) as usize].as_bytes());
                value.push(b' ');
            }
            value.truncate(value_len);
            (key, value)
        })
        .collect()
}

/// Put `i`'s `WriteBatch`: sequence `i + 1`, one put.
fn batch(i: usize, key: &[u8], value: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(&(i as u64 + 1).to_le_bytes());
    out.extend_from_slice(&1u32.to_le_bytes());
    Op::Put { cf: 0, key, value }.encode(out);
}

/// Writes the spec file RocksDB's side reads: per put a u32 key length, the key, a u32 value
/// length, the value.
///
/// # Errors
/// The file's.
pub fn write_spec(puts: &[(Vec<u8>, Vec<u8>)], path: &Path) -> std::io::Result<()> {
    let mut out = BufWriter::new(File::create(path)?);
    for (key, value) in puts {
        for field in [key, value] {
            out.write_all(&(field.len() as u32).to_le_bytes())?;
            out.write_all(field)?;
        }
    }
    out.flush()
}

/// Writes the puts to `path` as a log with `options`; its size.
fn write_log(
    puts: &[(Vec<u8>, Vec<u8>)],
    path: &Path,
    options: &LogWriterOptions,
) -> Result<u64, String> {
    let file = File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut writer = LogWriter::new(file, &options.clone().sync_on_close(false));
    let mut record = Vec::new();
    for (i, (key, value)) in puts.iter().enumerate() {
        batch(i, key, value, &mut record);
        writer
            .add_record(&record)
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    writer
        .close()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(fs::metadata(path)
        .map_err(|e| format!("{}: {e}", path.display()))?
        .len())
}

/// Reads `path` back: every batch, in order, and nothing else.
fn check_log(puts: &[(Vec<u8>, Vec<u8>)], path: &Path) -> Result<(), String> {
    let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut reader = LogReader::new(StdSource::new(file), &LogReaderOptions::default());
    let mut expected = Vec::new();
    let mut i = 0;
    while let Some(entry) = reader
        .next()
        .map_err(|e| format!("{}: {e}", path.display()))?
    {
        let Entry::Record(record) = entry else {
            return Err(format!("{}: {entry:?}", path.display()));
        };
        let (key, value) = puts
            .get(i)
            .ok_or_else(|| format!("{}: more records than puts", path.display()))?;
        batch(i, key, value, &mut expected);
        if *record.data != expected[..] {
            return Err(format!("{}: batch {i} differs", path.display()));
        }
        WriteBatch::new(record.data).map_err(|e| format!("{}: batch {i}: {e}", path.display()))?;
        i += 1;
    }
    if i != puts.len() {
        return Err(format!("{}: {i} batches of {}", path.display(), puts.len()));
    }
    Ok(())
}

/// Writes `count` puts' spec to `dir/spec` and logfmt's logs of them to `dir`, checks each
/// log, and calls `out` with a `WALSIZE` line for each.
///
/// # Errors
/// A file that cannot be written, or a log that does not read back as written.
pub fn run(count: usize, dir: &Path, out: &mut dyn FnMut(String)) -> Result<(), String> {
    fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let puts = puts(count);
    write_spec(&puts, &dir.join("spec")).map_err(|e| format!("spec: {e}"))?;
    let cases = [
        ("logfmt-plain", LogWriterOptions::new()),
        (
            "logfmt-rocksdb-zstd",
            LogWriterOptions::new().compress(Compression::rocksdb()),
        ),
        (
            "logfmt-packs",
            LogWriterOptions::new().pack(Some(PackLimit::default())),
        ),
        (
            "logfmt-packs-zstd",
            LogWriterOptions::new()
                .pack(Some(PackLimit::default()))
                .compress(Compression::zstd()),
        ),
    ];
    for (name, options) in cases {
        let path = dir.join(format!("{name}.log"));
        let bytes = write_log(&puts, &path, &options)?;
        check_log(&puts, &path)?;
        out(format!("WALSIZE impl={name} puts={count} bytes={bytes}"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The puts are within 16..=100 bytes, differ, and every log reads back; packs compressed
    /// are the smallest, and the plain log is exactly the batches' chunks.
    #[test]
    fn the_logs_read_back_and_compressed_packs_are_smallest() {
        let dir = std::env::temp_dir().join(format!("logfmt-wal-size-{}", std::process::id()));
        let puts = puts(5000);
        assert!(
            puts.iter()
                .all(|(k, v)| (16..=100).contains(&k.len()) && (16..=100).contains(&v.len()))
        );
        assert_ne!(puts[0], puts[1]);
        let mut lines = Vec::new();
        run(5000, &dir, &mut |l| lines.push(l)).unwrap();
        let bytes = |name: &str| -> u64 {
            let line = lines
                .iter()
                .find(|l| l.contains(&format!("impl={name} ")))
                .unwrap();
            line.rsplit("bytes=").next().unwrap().parse().unwrap()
        };
        let records: u64 = puts
            .iter()
            .map(|(k, v)| 12 + 1 + 1 + k.len() as u64 + 1 + v.len() as u64)
            .sum();
        // Each batch in one chunk, but where a block's end cuts it: 7 bytes a chunk at least.
        assert!(bytes("logfmt-plain") >= records + 7 * 5000);
        assert!(
            bytes("logfmt-packs-zstd") * 2 < bytes("logfmt-rocksdb-zstd"),
            "{lines:?}"
        );
        assert!(bytes("logfmt-packs") < bytes("logfmt-plain"), "{lines:?}");
        fs::remove_dir_all(&dir).unwrap();
    }
}
