//! `logfmt-bench flash`, the store-and-forward cycle: samples logged, delivered (read back,
//! oldest first) and released, on logfmt's ring and on `sequential-storage`'s queue, on the
//! same simulated NOR flash as the rest of the flash mode (a 256 KiB region of 4 KiB erase
//! units, flash words of `WRITE_SIZE` 4, 8, 16 and 32 bytes), [`SAMPLE`]-byte samples, each
//! made durable when logged.
//!
//! A cycle logs [`BATCH`] samples, then delivers and releases them. One line per word size and
//! implementation:
//!
//! ```text
//! QUEUE impl=I deliver=D release=R write_size=W sample=30 batch=16 samples=N programmed_per_sample=F erased_per_sample=F read_per_sample=F ns_per_sample=F ns_per_cycle=F
//! ```
//!
//! - `impl=logfmt-ring`: the small-RAM `WordWriter` keeping the region as a ring (open for the
//!   whole run), and a `WordReader` for each delivery. `deliver=read-from-oldest`: a delivery
//!   opens a reader, which reads the ring from its oldest record, and delivers the records from
//!   the position kept after the last delivery on (`deliver`); `release=ram-position`: the
//!   release (`release`) keeps that position in RAM (it does not survive a reboot).
//! - `impl=logfmt-ring deliver=cursor release=commit`: the same writer; a delivery opens a
//!   `CursorReader` at read cursor 1, which starts at the cursor's newest commit, and the
//!   release commits the cursor after the records delivered (`WordWriter::commit`, one chunk
//!   in the log): what a device does so that a reboot neither repeats nor skips a sample.
//! - `impl=sequential-storage`: its `QueueStorage` (uncached, on its own mock flash):
//!   `push` logs a sample, `deliver=peek` delivers the oldest, `release=pop` releases it.
//! - `programmed_per_sample`, `erased_per_sample`, `read_per_sample`: flash bytes programmed,
//!   erased and read over the measured cycles, per sample; `ns_per_sample` and `ns_per_cycle`:
//!   host time (mock flash included). Measured over the cycles that log one region's worth of
//!   programs, after a warm-up that logs another (logfmt: one lap of the ring, then one
//!   delivery of it all; sequential-storage: cycles until its pages turned over once), so that
//!   both are in their steady state: erasing as they log.
//!
//! Every delivery is checked: each sample logged is delivered once, in order.

use std::cell::RefCell;
use std::fmt;
use std::time::Instant;

use embassy_futures::block_on;
use embedded_storage::nor_flash::{ErrorType, NorFlash, ReadNorFlash};
use logfmt_core::flash::{FlashConfig, FlashItem, MockFlash, WordReader, WordWriter};
use sequential_storage::cache::{Cache, Uncached};
use sequential_storage::mock_flash::{MockFlashBase, WriteCountCheck};
use sequential_storage::queue::{QueueConfig, QueueStorage};

use crate::flash::{ERASE, REGION};

/// Sample size of the cycle.
pub const SAMPLE: usize = 30;
/// Samples logged between two deliveries.
pub const BATCH: usize = 16;

/// One implementation's cycle at one word size: a `QUEUE` line.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueCycle {
    /// `logfmt-ring` or `sequential-storage`.
    pub implementation: &'static str,
    /// How samples are delivered: `read-from-oldest` or `peek`.
    pub deliver: &'static str,
    /// How delivered samples are released: `ram-position` or `pop`.
    pub release: &'static str,
    /// Flash word size.
    pub write_size: usize,
    /// Samples logged, delivered and released over the measured cycles.
    pub samples: u64,
    /// Flash bytes programmed over them.
    pub programmed: u64,
    /// Flash bytes erased over them.
    pub erased: u64,
    /// Flash bytes read over them.
    pub read: u64,
    /// Host time over them.
    pub nanos: u128,
}

impl fmt::Display for QueueCycle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let per = |v: f64| v / self.samples.max(1) as f64;
        write!(
            f,
            "QUEUE impl={} deliver={} release={} write_size={} sample={SAMPLE} batch={BATCH} samples={} \
             programmed_per_sample={:.1} erased_per_sample={:.1} read_per_sample={:.1} \
             ns_per_sample={:.0} ns_per_cycle={:.0}",
            self.implementation,
            self.deliver,
            self.release,
            self.write_size,
            self.samples,
            per(self.programmed as f64),
            per(self.erased as f64),
            per(self.read as f64),
            per(self.nanos as f64),
            per(self.nanos as f64) * BATCH as f64,
        )
    }
}

/// The cycle at every word size, logfmt's ring then sequential-storage's queue.
///
/// # Errors
/// A message if an implementation fails, or delivers a sample twice, out of order or not at
/// all.
pub fn run(emit: &mut dyn FnMut(&QueueCycle)) -> Result<(), String> {
    run_at::<4, { ERASE / 4 }>(emit)?;
    run_at::<8, { ERASE / 8 }>(emit)?;
    run_at::<16, { ERASE / 16 }>(emit)?;
    run_at::<32, { ERASE / 32 }>(emit)
}

fn run_at<const W: usize, const PAGE_WORDS: usize>(
    emit: &mut dyn FnMut(&QueueCycle),
) -> Result<(), String> {
    emit(&logfmt_cycles::<W>(REGION as u64)?);
    emit(&logfmt_cursor_cycles::<W>(REGION as u64)?);
    emit(&seq_cycles::<W, PAGE_WORDS>(REGION as u64)?);
    Ok(())
}

/// Sample `n`: its number in its first 8 bytes, the rest a pattern of it.
fn sample(n: u64) -> [u8; SAMPLE] {
    let mut bytes = [0u8; SAMPLE];
    bytes[..8].copy_from_slice(&n.to_le_bytes());
    for (i, b) in bytes.iter_mut().enumerate().skip(8) {
        *b = (n as u8).wrapping_mul(31).wrapping_add(i as u8);
    }
    bytes
}

/// Checks that `record` is sample `expected`.
fn check(record: &[u8], expected: u64) -> Result<(), String> {
    if record == sample(expected) {
        return Ok(());
    }
    let got = record
        .get(..8)
        .and_then(|b| b.try_into().ok())
        .map(u64::from_le_bytes);
    Err(format!(
        "delivered {got:?} ({} bytes) where sample {expected} was due",
        record.len()
    ))
}

fn unexpected(what: &str, e: impl fmt::Debug) -> String {
    format!("queue cycle: {what}: {e:?}")
}

// ------------------------------------------------------------------------------- logfmt

type Mock<'m, const W: usize> = MockFlash<'m, W, ERASE>;

/// Flash bytes programmed, erased and read through a [`Shared`] flash.
#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    programmed: u64,
    erased: u64,
    read: u64,
}

impl Counts {
    fn since(self, before: Self) -> Self {
        Self {
            programmed: self.programmed - before.programmed,
            erased: self.erased - before.erased,
            read: self.read - before.read,
        }
    }
}

/// One flash, counted, for a writer that stays open and the readers opened beside it.
struct Shared<'c, F> {
    cell: &'c RefCell<(F, Counts)>,
}

impl<F> Clone for Shared<'_, F> {
    fn clone(&self) -> Self {
        Self { cell: self.cell }
    }
}

impl<F: ErrorType> ErrorType for Shared<'_, F> {
    type Error = F::Error;
}

impl<F: ReadNorFlash> ReadNorFlash for Shared<'_, F> {
    const READ_SIZE: usize = F::READ_SIZE;

    fn read(&mut self, offset: u32, bytes: &mut [u8]) -> Result<(), F::Error> {
        let (flash, counts) = &mut *self.cell.borrow_mut();
        counts.read += bytes.len() as u64;
        flash.read(offset, bytes)
    }

    fn capacity(&self) -> usize {
        self.cell.borrow().0.capacity()
    }
}

impl<F: NorFlash> NorFlash for Shared<'_, F> {
    const WRITE_SIZE: usize = F::WRITE_SIZE;
    const ERASE_SIZE: usize = F::ERASE_SIZE;

    fn erase(&mut self, from: u32, to: u32) -> Result<(), F::Error> {
        let (flash, counts) = &mut *self.cell.borrow_mut();
        counts.erased += u64::from(to.saturating_sub(from));
        flash.erase(from, to)
    }

    fn write(&mut self, offset: u32, bytes: &[u8]) -> Result<(), F::Error> {
        let (flash, counts) = &mut *self.cell.borrow_mut();
        counts.programmed += bytes.len() as u64;
        flash.write(offset, bytes)
    }
}

/// Where delivery goes on: the number of the next record to deliver, in the reader's
/// numbering (a ring's first record is number `aged_out_records()`, each after it one more);
/// `None`: from the oldest record the ring holds. Kept in RAM.
#[derive(Debug, Clone, Copy, Default)]
struct Position {
    next: Option<u32>,
}

/// Reads the log and hands `deliver_one` the records from `position` on, oldest first: the
/// position after the last one. A reader is opened for the delivery and reads the ring from
/// its oldest record.
fn deliver<F: ReadNorFlash>(
    flash: F,
    config: FlashConfig,
    position: Position,
    buffer: &mut [u8],
    mut deliver_one: impl FnMut(&[u8]) -> Result<(), String>,
) -> Result<Position, String>
where
    F::Error: fmt::Debug,
{
    let mut reader = WordReader::open(flash, config).map_err(|e| unexpected("open reader", e))?;
    let mut number = reader.aged_out_records().unwrap_or(0);
    let from = position.next.unwrap_or(number);
    if number.wrapping_sub(from) as i32 > 0 {
        return Err(format!(
            "{} records aged out before they were delivered",
            number.wrapping_sub(from)
        ));
    }
    while let Some(item) = reader.next(buffer).map_err(|e| unexpected("read", e))? {
        match item {
            FlashItem::Record { len, .. } => {
                if number.wrapping_sub(from) as i32 >= 0 {
                    deliver_one(&buffer[..len])?;
                }
                number = number.wrapping_add(1);
            }
            other => return Err(unexpected("delivery", other)),
        }
    }
    Ok(Position { next: Some(number) })
}

/// Releases what was delivered up to `position`: here the position stays in RAM.
fn release(kept: &mut Position, position: Position) {
    *kept = position;
}

/// logfmt's ring: a lap logged as warm-up, then cycles until `measured` bytes are programmed.
fn logfmt_cycles<const W: usize>(measured: u64) -> Result<QueueCycle, String> {
    let (mut bytes, mut flags) = (vec![0xFF; REGION], vec![false; REGION / W]);
    let mock: Mock<'_, W> =
        MockFlash::new(&mut bytes, &mut flags, 0xFF).map_err(|e| unexpected("mock", e))?;
    let cell = RefCell::new((mock, Counts::default()));
    let flash = Shared { cell: &cell };
    let config = FlashConfig::new(0, REGION as u32).ring();
    let mut writer =
        WordWriter::open(flash.clone(), config).map_err(|e| unexpected("open writer", e))?;
    let mut buffer = [0u8; 256];
    let mut logged = 0u64;
    while writer.stats().laps == 0 {
        writer
            .add_record(&sample(logged))
            .map_err(|e| unexpected("add", e))?;
        writer.flush().map_err(|e| unexpected("flush", e))?;
        logged += 1;
    }
    // Everything logged so far counts as delivered.
    let mut position = deliver(
        flash.clone(),
        config,
        Position::default(),
        &mut buffer,
        |_| Ok(()),
    )?;
    let mut delivered = logged;
    let before = cell.borrow().1;
    let start = Instant::now();
    let mut samples = 0u64;
    while cell.borrow().1.since(before).programmed < measured {
        for _ in 0..BATCH {
            writer
                .add_record(&sample(logged))
                .map_err(|e| unexpected("add", e))?;
            writer.flush().map_err(|e| unexpected("flush", e))?;
            logged += 1;
        }
        let next = deliver(flash.clone(), config, position, &mut buffer, |record| {
            check(record, delivered)?;
            delivered += 1;
            Ok(())
        })?;
        release(&mut position, next);
        samples += BATCH as u64;
    }
    let nanos = start.elapsed().as_nanos();
    if delivered != logged {
        return Err(format!("{logged} samples logged, {delivered} delivered"));
    }
    let counts = cell.borrow().1.since(before);
    Ok(QueueCycle {
        implementation: "logfmt-ring",
        deliver: "read-from-oldest",
        release: "ram-position",
        write_size: W,
        samples,
        programmed: counts.programmed,
        erased: counts.erased,
        read: counts.read,
        nanos,
    })
}

/// logfmt's ring with a durable read cursor: a lap logged as warm-up and delivered, then
/// cycles until `measured` bytes are programmed, each delivering from the cursor and
/// committing it.
fn logfmt_cursor_cycles<const W: usize>(measured: u64) -> Result<QueueCycle, String> {
    const ID: u8 = 1;
    let (mut bytes, mut flags) = (vec![0xFF; REGION], vec![false; REGION / W]);
    let mock: Mock<'_, W> =
        MockFlash::new(&mut bytes, &mut flags, 0xFF).map_err(|e| unexpected("mock", e))?;
    let cell = RefCell::new((mock, Counts::default()));
    let flash = Shared { cell: &cell };
    let config = FlashConfig::new(0, REGION as u32).ring();
    let mut writer =
        WordWriter::open(flash.clone(), config).map_err(|e| unexpected("open writer", e))?;
    let mut buffer = [0u8; 256];
    let mut logged = 0u64;
    let mut delivered: Option<u64> = None;
    let mut samples = 0u64;
    let mut measuring: Option<(Counts, Instant)> = None;
    loop {
        if let Some((before, _)) = measuring
            && cell.borrow().1.since(before).programmed >= measured
        {
            break;
        }
        let batch = if writer.stats().laps == 0 && delivered.is_none() {
            1
        } else {
            BATCH
        };
        for _ in 0..batch {
            writer
                .add_record(&sample(logged))
                .map_err(|e| unexpected("add", e))?;
            writer.flush().map_err(|e| unexpected("flush", e))?;
            logged += 1;
        }
        if writer.stats().laps == 0 && delivered.is_none() {
            continue;
        }
        // Delivery: from the cursor's newest commit on.
        let mut reader = logfmt_core::flash::CursorReader::open(flash.clone(), config, ID)
            .map_err(|e| unexpected("open cursor reader", e))?;
        let start = reader.start();
        if start.aged_out > 0 && delivered.is_some() {
            return Err(format!(
                "{} records aged out before they were delivered",
                start.aged_out
            ));
        }
        let mut next = delivered.unwrap_or(0);
        let mut first = delivered.is_none();
        while let Some(item) = reader
            .next(&mut buffer)
            .map_err(|e| unexpected("read", e))?
        {
            match item {
                FlashItem::Record { len, .. } => {
                    if first {
                        // The warm-up delivery: whatever the ring still holds.
                        next = u64::from_le_bytes(
                            buffer[..8]
                                .try_into()
                                .map_err(|_| "a short sample".to_owned())?,
                        );
                        first = false;
                    }
                    check(&buffer[..len], next)?;
                    next += 1;
                }
                other => return Err(unexpected("delivery", other)),
            }
        }
        if next != logged {
            return Err(format!("{logged} samples logged, {next} delivered"));
        }
        // Release: the cursor committed after what was delivered.
        writer
            .commit(reader.cursor())
            .map_err(|e| unexpected("commit", e))?;
        if delivered.is_some() && measuring.is_some() {
            samples += BATCH as u64;
        }
        delivered = Some(next);
        if measuring.is_none() {
            measuring = Some((cell.borrow().1, Instant::now()));
        }
    }
    let (before, start) = measuring.ok_or("never measured")?;
    let nanos = start.elapsed().as_nanos();
    let counts = cell.borrow().1.since(before);
    Ok(QueueCycle {
        implementation: "logfmt-ring",
        deliver: "cursor",
        release: "commit",
        write_size: W,
        samples,
        programmed: counts.programmed,
        erased: counts.erased,
        read: counts.read,
        nanos,
    })
}

// --------------------------------------------------------------- sequential-storage

type SeqFlash<const W: usize, const PAGE_WORDS: usize> =
    MockFlashBase<{ REGION / ERASE }, W, PAGE_WORDS>;

/// sequential-storage's queue, uncached, over its flash. (Uncached, a queue keeps no state of
/// its own between operations: a new one over the same flash goes on where the last stopped.)
fn seq_queue<const W: usize, const PAGE_WORDS: usize>(
    flash: &mut SeqFlash<W, PAGE_WORDS>,
) -> Result<QueueStorage<&mut SeqFlash<W, PAGE_WORDS>, Cache<Uncached, Uncached, Uncached>>, String>
{
    let config =
        QueueConfig::try_new(0..REGION as u32).map_err(|e| unexpected("queue config", e))?;
    Ok(QueueStorage::new(flash, config, Cache::new_uncached()))
}

/// One cycle on sequential-storage's queue: [`BATCH`] samples pushed, then each peeked
/// (delivered) and popped (released).
fn seq_cycle<const W: usize, const PAGE_WORDS: usize>(
    flash: &mut SeqFlash<W, PAGE_WORDS>,
    logged: &mut u64,
    delivered: &mut u64,
) -> Result<(), String> {
    let mut queue = seq_queue(flash)?;
    let mut buffer = [0u8; 256];
    for _ in 0..BATCH {
        block_on(queue.push(&sample(*logged), false)).map_err(|e| unexpected("push", e))?;
        *logged += 1;
    }
    for _ in 0..BATCH {
        let record = block_on(queue.peek(&mut buffer))
            .map_err(|e| unexpected("peek", e))?
            .ok_or("peek: the queue is empty")?;
        check(record, *delivered)?;
        block_on(queue.pop(&mut buffer)).map_err(|e| unexpected("pop", e))?;
        *delivered += 1;
    }
    Ok(())
}

/// sequential-storage's queue: a region's worth of programs in cycles as warm-up (its pages
/// turned over once), then cycles until `measured` bytes are programmed.
fn seq_cycles<const W: usize, const PAGE_WORDS: usize>(
    measured: u64,
) -> Result<QueueCycle, String> {
    let mut flash: SeqFlash<W, PAGE_WORDS> =
        MockFlashBase::new(WriteCountCheck::Twice, None, false);
    let (mut logged, mut delivered) = (0u64, 0u64);
    let origin = flash.stats_snapshot();
    while origin.compare_to(flash.stats_snapshot()).bytes_written < REGION as u64 {
        seq_cycle(&mut flash, &mut logged, &mut delivered)?;
    }
    let before = flash.stats_snapshot();
    let start = Instant::now();
    let mut samples = 0u64;
    while before.compare_to(flash.stats_snapshot()).bytes_written < measured {
        seq_cycle(&mut flash, &mut logged, &mut delivered)?;
        samples += BATCH as u64;
    }
    let nanos = start.elapsed().as_nanos();
    let stats = before.compare_to(flash.stats_snapshot());
    Ok(QueueCycle {
        implementation: "sequential-storage",
        deliver: "peek",
        release: "pop",
        write_size: W,
        samples,
        programmed: stats.bytes_written,
        erased: stats.erases * ERASE as u64,
        read: stats.bytes_read,
        nanos,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use logfmt_core::BLOCK_SIZE;

    /// A ring of two 32 KiB blocks (erase units of 32 KiB: two erase groups) on a mock flash.
    fn small_ring<'m>(bytes: &'m mut [u8], flags: &'m mut [bool]) -> MockFlash<'m, 8, BLOCK_SIZE> {
        MockFlash::new(bytes, flags, 0xFF).expect("mock")
    }

    #[test]
    fn a_delivery_goes_on_after_the_kept_position() {
        let (mut bytes, mut flags) = (vec![0xFF; 2 * BLOCK_SIZE], vec![false; BLOCK_SIZE / 4]);
        let cell = RefCell::new((small_ring(&mut bytes, &mut flags), Counts::default()));
        let flash = Shared { cell: &cell };
        let config = FlashConfig::new(0, 2 * BLOCK_SIZE as u32).ring();
        let mut writer = WordWriter::open(flash.clone(), config).expect("open");
        let mut log = |from: u64, to: u64| {
            for n in from..to {
                writer.add_record(&sample(n)).expect("add");
                writer.flush().expect("flush");
            }
        };
        let mut buffer = [0u8; 64];
        let mut got = Vec::new();
        let collect = |got: &mut Vec<u64>, record: &[u8]| {
            got.push(u64::from_le_bytes(record[..8].try_into().expect("8 bytes")));
            Ok(())
        };
        log(0, 10);
        let start = Position::default();
        let position = deliver(flash.clone(), config, start, &mut buffer, |r| {
            collect(&mut got, r)
        })
        .expect("deliver");
        assert_eq!(got, (0..10).collect::<Vec<_>>());
        assert_eq!(position.next, Some(10));
        got.clear();
        log(10, 15);
        let position = deliver(flash.clone(), config, position, &mut buffer, |r| {
            collect(&mut got, r)
        })
        .expect("deliver");
        assert_eq!(got, (10..15).collect::<Vec<_>>());
        assert_eq!(position.next, Some(15));
        // Nothing new: nothing delivered.
        got.clear();
        let again = deliver(flash.clone(), config, position, &mut buffer, |r| {
            collect(&mut got, r)
        })
        .expect("deliver");
        assert!(got.is_empty());
        assert_eq!(again.next, Some(15));
        // The ring wraps past the kept position: the records lost are reported, not skipped.
        log(15, 2000);
        let lost = deliver(flash, config, position, &mut buffer, |_| Ok(()));
        assert!(
            lost.as_ref().is_err_and(|e| e.contains("aged out before")),
            "{lost:?}"
        );
    }

    #[test]
    fn a_wrong_or_repeated_sample_fails_the_check() {
        assert!(check(&sample(7), 7).is_ok());
        assert!(check(&sample(7), 8).is_err());
        assert!(check(&sample(7)[..20], 7).is_err());
    }

    #[test]
    fn both_cycles_deliver_every_sample_and_count_their_flash_work() {
        // An eighth of the region measured (the bench measures all of it).
        let measured = REGION as u64 / 8;
        let logfmt = logfmt_cycles::<16>(measured).expect("logfmt");
        let seq = seq_cycles::<16, { ERASE / 16 }>(measured).expect("sequential-storage");
        for cycle in [&logfmt, &seq] {
            eprintln!("{cycle}");
            // Hundreds of 30-byte samples.
            assert!(cycle.samples > 500, "{cycle}");
            assert!(cycle.programmed >= measured, "{cycle}");
            // In steady state both erase about what they program (logfmt a 32 KiB block
            // ahead at a time).
            assert!(
                cycle.erased >= measured / 2 && cycle.erased <= 2 * measured + BLOCK_SIZE as u64,
                "{cycle}"
            );
        }
        // logfmt: a 37-byte chunk to the 16-byte word, 48 bytes a sample (and the ring headers).
        let per = logfmt.programmed as f64 / logfmt.samples as f64;
        assert!((48.0..49.0).contains(&per), "{logfmt}");
        // A delivery reads the ring from its oldest record: more than a sample's bytes a sample.
        assert!(logfmt.read > logfmt.samples * SAMPLE as u64, "{logfmt}");
        let line = logfmt.to_string();
        assert!(
            line.starts_with(
                "QUEUE impl=logfmt-ring deliver=read-from-oldest release=ram-position \
                 write_size=16 sample=30 batch=16 "
            ),
            "{line}"
        );
    }

    #[test]
    fn a_cursor_cycle_delivers_every_sample_once_and_commits_cheaply() {
        let measured = REGION as u64 / 8;
        let cursor = logfmt_cursor_cycles::<16>(measured).expect("logfmt with a cursor");
        let from_oldest = logfmt_cycles::<16>(measured).expect("logfmt");
        eprintln!("{cursor}");
        assert!(cursor.samples > 500, "{cursor}");
        // 48 bytes a sample, and a 12-byte commit (16 at W = 16) every 16 samples: 49 a sample.
        let per = cursor.programmed as f64 / cursor.samples as f64;
        assert!((48.9..50.2).contains(&per), "{cursor}");
        // Reading from the cursor reads far less than reading from the oldest record.
        assert!(
            cursor.read * 3 < from_oldest.read,
            "{cursor} / {from_oldest}"
        );
        assert!(
            cursor
                .to_string()
                .starts_with("QUEUE impl=logfmt-ring deliver=cursor release=commit write_size=16 "),
            "{cursor}"
        );
    }
}
