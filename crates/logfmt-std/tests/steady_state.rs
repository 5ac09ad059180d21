//! The performance contract, tested (not timed): no heap allocation per record in steady
//! state, in either direction, and one write call per 32 KiB block for a file-backed writer
//! of many small records.

#![allow(missing_docs)]
// A counting global allocator is the one way to count allocations; it forwards to `System`.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{self, Write};

use logfmt_core::{FnSink, SliceWriter, Writer};
use logfmt_std::{
    LogWriter, LogWriterOptions,
    advanced::{BLOCK_SIZE, Item, Reader, StdSource, SyncWrite},
};

/// Counts every allocation, per thread.
struct Counting;

std::thread_local! {
    /// Allocations made by this thread (the test harness's own threads allocate too).
    static ALLOCATIONS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

fn count_one() {
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_one();
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations made by `f`. Every test of this file holds [`LOCK`] from start to end, so no
/// other test's allocations are counted.
fn allocations_in(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.with(std::cell::Cell::get);
    f();
    ALLOCATIONS.with(std::cell::Cell::get) - before
}

static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    LOCK.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn payload(i: usize) -> Vec<u8> {
    let len = [0, 16, 100, 1024, 40_000][i % 5];
    vec![i as u8; len]
}

#[test]
fn writing_allocates_nothing_per_record() {
    let _one_at_a_time = one_at_a_time();
    let records: Vec<Vec<u8>> = (0..500).map(payload).collect();
    let total: usize = records
        .iter()
        .map(|r| r.len() + 7 * (r.len() / 32_000 + 2))
        .sum();
    let mut log = Vec::with_capacity(total + 2 * BLOCK_SIZE);
    let mut block = Box::new([0u8; BLOCK_SIZE]);
    let counted = allocations_in(|| {
        let sink = FnSink(|bytes: &[u8]| {
            log.extend_from_slice(bytes);
            Ok::<(), std::convert::Infallible>(())
        });
        let mut writer = Writer::new(sink, &mut *block);
        for r in &records {
            assert!(writer.add_record(r).is_ok());
        }
        assert!(writer.flush().is_ok());
    });
    assert_eq!(counted, 0, "the core writer allocated");

    let mut buffer = vec![0u8; total + 2 * BLOCK_SIZE];
    let counted = allocations_in(|| {
        let mut writer = SliceWriter::new(&mut buffer);
        for r in &records {
            assert!(writer.add_record(r).is_ok());
        }
    });
    assert_eq!(counted, 0, "the slice writer allocated");

    // The std writer: its block buffer is allocated once, when it is made; none per record.
    let mut writer = LogWriter::new(
        Vec::with_capacity(total + 2 * BLOCK_SIZE),
        &LogWriterOptions::new(),
    );
    let counted = allocations_in(|| {
        for r in &records {
            assert!(writer.add_record(r).is_ok());
        }
    });
    assert_eq!(counted, 0, "LogWriter allocated");
}

#[test]
fn reading_allocates_nothing_per_record() {
    let _one_at_a_time = one_at_a_time();
    let mut log = Vec::new();
    let mut block = Box::new([0u8; BLOCK_SIZE]);
    let sink = FnSink(|bytes: &[u8]| {
        log.extend_from_slice(bytes);
        Ok::<(), std::convert::Infallible>(())
    });
    let mut writer = Writer::new(sink, &mut *block);
    for i in 0..500 {
        assert!(writer.add_record(&payload(i)).is_ok());
    }
    assert!(writer.flush().is_ok());
    let mut scratch = vec![0u8; 1 << 16];
    let counted = allocations_in(|| {
        let mut reader = Reader::from_slice(&log, &mut scratch);
        let mut n = 0;
        while let Ok(Some(item)) = reader.next() {
            assert!(matches!(item, Item::Record(_)));
            n += 1;
        }
        assert_eq!(n, 500);
    });
    assert_eq!(counted, 0, "reading from memory allocated");

    // Through `std::io::Read`: the source's block buffer is allocated when it is made.
    let mut reader = Reader::new(StdSource::new(io::Cursor::new(&log)), &mut scratch);
    let counted = allocations_in(|| {
        let mut n = 0;
        while let Ok(Some(_)) = reader.next() {
            n += 1;
        }
        assert_eq!(n, 500);
    });
    assert_eq!(counted, 0, "reading through std::io allocated");
}

/// A destination that counts write calls.
#[derive(Default)]
struct CountingFile {
    bytes: Vec<u8>,
    writes: usize,
}

impl Write for CountingFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writes += 1;
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl SyncWrite for CountingFile {
    fn sync(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn one_write_per_block_for_small_records() {
    let _one_at_a_time = one_at_a_time();
    let options = LogWriterOptions::new().sync_on_close(false);
    let mut writer = LogWriter::new(CountingFile::default(), &options);
    for i in 0..100_000u32 {
        assert!(writer.add_record(&i.to_le_bytes().repeat(4)).is_ok());
    }
    let file = writer.close().unwrap_or_default();
    let blocks = file.bytes.len().div_ceil(BLOCK_SIZE);
    assert!(blocks > 60, "{blocks}");
    // Every complete block is one write; the partial last block is one more, at close.
    assert!(
        file.writes <= blocks + 1,
        "{} writes for {blocks} blocks",
        file.writes
    );
}
