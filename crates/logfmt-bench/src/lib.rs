//! The benchmark workload shared by the `logfmt-bench` protocol binary and the criterion
//! benches: deterministic payloads, an in-memory log, timed write and read passes, and the two
//! bounds (memcpy and CRC-32C over the same payloads).

pub mod durable;
pub mod flash;
pub mod pack;
pub mod paths;
pub mod queue;
pub mod reboot;
pub mod wal;
pub mod wal_size;
pub mod zstd_speed;

use std::hint::black_box;

use std::fs::File;
use std::path::Path;

use logfmt_core::{BLOCK_SIZE, Reader, SliceWriter, parts::Item};
use logfmt_std::{LogReaderOptions, LogWriter, LogWriterOptions, advanced::StdSource};

/// Size of the payload source: 2 MiB.
pub const SOURCE_LEN: usize = 2 << 20;
/// Record `i` starts at `(i * 997) % WINDOW` in the source.
pub const WINDOW: usize = 1 << 20;

/// One benchmark case: `count` records of `size` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Case {
    /// Record size in bytes.
    pub size: usize,
    /// Number of records.
    pub count: usize,
}

impl Case {
    /// Parses `SIZE:COUNT`.
    ///
    /// # Errors
    /// A message naming the bad argument.
    pub fn parse(text: &str) -> Result<Self, String> {
        let bad = || format!("bad case {text:?}: expected SIZE:COUNT");
        let (size, count) = text.split_once(':').ok_or_else(bad)?;
        let size: usize = size.parse().map_err(|_| bad())?;
        let count = count.parse().map_err(|_| bad())?;
        if size > WINDOW {
            return Err(format!("bad case {text:?}: SIZE is at most {WINDOW}"));
        }
        Ok(Self { size, count })
    }

    /// Total payload bytes.
    #[must_use]
    pub fn payload_bytes(&self) -> usize {
        self.size * self.count
    }
}

/// The payload source.
#[derive(Debug)]
pub struct Payloads {
    src: Vec<u8>,
}

impl Default for Payloads {
    fn default() -> Self {
        Self::new()
    }
}

impl Payloads {
    /// Generates the 2 MiB source with xorshift64.
    #[must_use]
    pub fn new() -> Self {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut src = Vec::with_capacity(SOURCE_LEN);
        for _ in 0..SOURCE_LEN / 8 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            src.extend_from_slice(&x.to_le_bytes());
        }
        Self { src }
    }

    /// Record `i` of `size` bytes.
    #[must_use]
    pub fn record(&self, i: usize, size: usize) -> &[u8] {
        let start = (i * 997) % WINDOW;
        &self.src[start..start + size]
    }
}

/// What the untimed round trip checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Digest {
    /// Length of the log.
    pub log_bytes: usize,
    /// CRC-32C of the whole log.
    pub log_crc32c: u32,
    /// CRC-32C chained over every payload, in order.
    pub payload_crc32c: u32,
}

/// A case with its buffers: the log (pre-sized, pre-faulted), the writer's block buffer and the
/// reader's assembly buffer.
#[derive(Debug)]
pub struct Bench<'p> {
    payloads: &'p Payloads,
    case: Case,
    log: Vec<u8>,
    log_len: usize,
    scratch: Vec<u8>,
    copy: Vec<u8>,
}

impl<'p> Bench<'p> {
    /// Prepares the buffers for `case`.
    #[must_use]
    pub fn new(payloads: &'p Payloads, case: Case) -> Self {
        // A log is at most the payload plus a header per chunk and the trailers.
        let chunks = case.count * (case.size / (BLOCK_SIZE - 7) + 2);
        let capacity = case.payload_bytes() + chunks * 7 + (chunks / 1000 + 2) * BLOCK_SIZE;
        let log = vec![0xa5u8; capacity];
        let mut scratch = vec![0u8; case.size.max(1)];
        scratch.fill(1);
        // Not `vec![0; n]`: its pages would be mapped on first touch, inside the first timed
        // copy.
        let copy = vec![1u8; case.payload_bytes().max(1)];
        Self {
            payloads,
            case,
            log,
            log_len: 0,
            scratch,
            copy,
        }
    }

    /// Writes every record into the (pre-sized, pre-faulted) log buffer, laid out in place;
    /// returns the log's length.
    pub fn write(&mut self) -> usize {
        let mut writer = SliceWriter::new(&mut self.log);
        for i in 0..self.case.count {
            if writer
                .add_record(self.payloads.record(i, self.case.size))
                .is_err()
            {
                break;
            }
        }
        self.log_len = writer.len();
        self.log_len
    }

    /// Reads every record of the log with checksums on; returns the log's length.
    pub fn read(&mut self) -> usize {
        let mut reader = Reader::from_slice(&self.log[..self.log_len], &mut self.scratch);
        let mut bytes = 0usize;
        while let Ok(Some(item)) = reader.next() {
            if let Item::Record(record) = item {
                bytes += black_box(record.data).len();
            }
        }
        black_box(bytes);
        self.log_len
    }

    /// Writes every record to a file at `path` through `logfmt_std::LogWriter` (one write per
    /// block, no sync until the close); returns the log's length.
    ///
    /// # Errors
    /// A message naming what failed.
    pub fn write_file(&mut self, path: &Path) -> Result<usize, String> {
        let options = LogWriterOptions::new().sync_on_close(false);
        let mut writer = LogWriter::overwrite(path, &options).map_err(|e| e.to_string())?;
        for i in 0..self.case.count {
            writer
                .add_record(self.payloads.record(i, self.case.size))
                .map_err(|e| e.to_string())?;
        }
        let file = writer.close().map_err(|e| e.to_string())?;
        let len = file.metadata().map_err(|e| e.to_string())?.len();
        usize::try_from(len).map_err(|e| e.to_string())
    }

    /// Reads every record of the file at `path` (blocks read into a 32 KiB buffer, checksums
    /// on); returns the bytes read.
    ///
    /// # Errors
    /// A message naming what failed.
    pub fn read_file(&mut self, path: &Path) -> Result<usize, String> {
        let file = File::open(path).map_err(|e| e.to_string())?;
        let mut reader = Reader::new(StdSource::new(file), &mut self.scratch);
        let mut bytes = 0usize;
        while let Some(item) = reader.next().map_err(|e| e.to_string())? {
            if let Item::Record(record) = item {
                bytes += black_box(record.data).len();
            }
        }
        if bytes != self.case.payload_bytes() {
            return Err(format!(
                "read {bytes} payload bytes, wrote {}",
                self.case.payload_bytes()
            ));
        }
        Ok(usize::try_from(reader.position()).unwrap_or(usize::MAX))
    }

    /// Counts the records of the in-memory log with a parallel split scan on `threads` threads
    /// (8 ranges per thread); returns the record count.
    ///
    /// # Errors
    /// A message if the thread pool cannot be built or records are missing.
    pub fn split_scan(&self, threads: usize) -> Result<usize, String> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| e.to_string())?;
        let log = &self.log[..self.log_len];
        let ranges = logfmt_std::advanced::split(log.len() as u64, threads * 8);
        let counts = pool.install(|| {
            logfmt_std::advanced::par_scan(
                log,
                &LogReaderOptions::new(),
                &ranges,
                |_, mut reader| {
                    let mut n = 0usize;
                    while let Ok(Some(entry)) = reader.next() {
                        if matches!(entry, logfmt_std::advanced::Entry::Record(_)) {
                            n += 1;
                        }
                    }
                    n
                },
            )
        });
        let total: usize = counts.iter().sum();
        if total != self.case.count {
            return Err(format!(
                "split scan found {total} records, wrote {}",
                self.case.count
            ));
        }
        Ok(total)
    }

    /// The length of the in-memory log last written.
    #[must_use]
    pub fn log_len(&self) -> usize {
        self.log_len
    }

    /// The copy bound: every payload copied once into a pre-faulted buffer.
    pub fn memcpy(&mut self) -> usize {
        let size = self.case.size;
        for i in 0..self.case.count {
            let dst = &mut self.copy[i * size..(i + 1) * size];
            dst.copy_from_slice(self.payloads.record(i, size));
        }
        black_box(&self.copy);
        self.case.payload_bytes()
    }

    /// The checksum bound: the `crc32c` crate over every payload.
    pub fn crc(&mut self) -> usize {
        let mut crc = 0;
        for i in 0..self.case.count {
            crc ^= crc32c::crc32c(self.payloads.record(i, self.case.size));
        }
        black_box(crc);
        self.case.payload_bytes()
    }

    /// logfmt's own checksum (`logfmt_core::parts::checksum`, inlined SSE 4.2 on x86-64) over every
    /// payload: the part of a write or a read that checksums, alone.
    pub fn own_crc(&mut self) -> usize {
        let mut crc = 0;
        for i in 0..self.case.count {
            crc ^= logfmt_core::parts::checksum::crc32c(self.payloads.record(i, self.case.size));
        }
        black_box(crc);
        self.case.payload_bytes()
    }

    /// The untimed round trip: writes, reads back and checks every record.
    ///
    /// # Errors
    /// What did not match.
    pub fn verify(&mut self) -> Result<Digest, String> {
        let log_bytes = self.write();
        let mut reader = Reader::from_slice(&self.log[..self.log_len], &mut self.scratch);
        let mut i = 0;
        let mut payload_crc32c = 0;
        while let Ok(Some(item)) = reader.next() {
            let Item::Record(record) = item else {
                return Err(format!("unexpected {item:?}"));
            };
            let expected = self.payloads.record(i, self.case.size);
            if record.data != expected {
                return Err(format!("record {i} differs"));
            }
            payload_crc32c = crc32c::crc32c_append(payload_crc32c, record.data);
            i += 1;
        }
        if i != self.case.count {
            return Err(format!("read {i} records, wrote {}", self.case.count));
        }
        Ok(Digest {
            log_bytes,
            log_crc32c: crc32c::crc32c(&self.log[..self.log_len]),
            payload_crc32c,
        })
    }
}
