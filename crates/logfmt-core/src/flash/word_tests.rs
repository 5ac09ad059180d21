//! Tests of the small-RAM writer: the same flash bytes as the buffered writer, and (with
//! `embedded-storage-async`) the async writer's futures dropped at every await point.

use std::vec::Vec;

use proptest::prelude::*;

use super::tests::{Kind, LogWriter, open};
use super::{FlashConfig, MockFlash, WordWriter};
use crate::format::BLOCK_SIZE;

const ERASE: usize = 4096;
const BLOCKS: usize = 4;

/// One step of a scripted run.
#[derive(Debug, Clone)]
enum Step {
    /// A record of this length, made of this pattern.
    Record(usize, u8),
    Flush,
    /// Flush, then reopen (a reboot after a durable point).
    Reopen,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => (prop_oneof![0usize..40, 0usize..300, 32_700usize..32_800, 0usize..70_000], 0u8..4)
            .prop_map(|(n, p)| Step::Record(n, p)),
        3 => Just(Step::Flush),
        1 => Just(Step::Reopen),
    ]
}

/// Record bytes of pattern `p`: counting bytes, or runs of erased-looking bytes (whole words
/// of `0xFF` or `0x00`, which the small-RAM writer leaves unprogrammed).
fn record(i: usize, len: usize, p: u8) -> Vec<u8> {
    (0..len)
        .map(|j| match p {
            0 => (i * 31 + j * 7) as u8,
            1 => 0xFF,
            2 => 0x00,
            _ => {
                if (j / 16) % 2 == 0 {
                    0xFF
                } else {
                    (j as u8) | 1
                }
            }
        })
        .collect()
}

/// Runs `steps` through the writer `kind` on a fresh flash: the results of every call and the
/// flash's bytes at the end (after a last flush).
fn run<const W: usize>(
    kind: Kind,
    steps: &[Step],
    erased: u8,
    ring: bool,
) -> (Vec<std::string::String>, Vec<u8>, u64) {
    let mut memory = std::vec![0u8; BLOCKS * BLOCK_SIZE];
    let mut flags = std::vec![false; BLOCKS * BLOCK_SIZE / W];
    let mut flash: MockFlash<'_, W, ERASE> =
        MockFlash::new(&mut memory, &mut flags, erased).expect("geometry");
    let mut config = FlashConfig::new(0, (BLOCKS * BLOCK_SIZE) as u32).erased(erased);
    config.ring = ring;
    let mut block = [0u8; BLOCK_SIZE];
    let mut results = Vec::new();
    let mut erases = 0;
    {
        let mut writer = open_any(kind, &mut flash, config, &mut block);
        for (i, step) in steps.iter().enumerate() {
            let result = match step {
                Step::Record(len, p) => {
                    std::format!("{:?}", writer.add_record(&record(i, *len, *p)))
                }
                Step::Flush => std::format!("{:?}", writer.flush()),
                Step::Reopen => {
                    let flushed = writer.flush();
                    erases += writer.stats().erased_bytes;
                    drop(writer);
                    writer = open_any(kind, &mut flash, config, &mut block);
                    std::format!("{flushed:?}")
                }
            };
            results.push(std::format!("{result} at {}", writer.position()));
        }
        results.push(std::format!("{:?}", writer.flush()));
        erases += writer.stats().erased_bytes;
    }
    (results, memory, erases)
}

fn open_any<'f, 'm, const W: usize>(
    kind: Kind,
    flash: &'f mut MockFlash<'m, W, ERASE>,
    config: FlashConfig,
    block: &'f mut [u8; BLOCK_SIZE],
) -> std::boxed::Box<dyn LogWriter + 'f> {
    open(kind, flash, config, block).expect("open")
}

fn same_bytes<const W: usize>(steps: &[Step], erased: u8, ring: bool) -> Result<(), TestCaseError> {
    let buffered = run::<W>(Kind::Buffered, steps, erased, ring);
    let word = run::<W>(Kind::Word, steps, erased, ring);
    prop_assert_eq!(&buffered.0, &word.0, "results, W = {}", W);
    prop_assert_eq!(buffered.2, word.2, "bytes erased, W = {}", W);
    if let Some(at) = buffered.1.iter().zip(&word.1).position(|(a, b)| a != b) {
        prop_assert!(false, "W = {W}: flash bytes differ first at {at}");
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// The small-RAM writer puts on the flash exactly the bytes of the buffered writer, for
    /// the same records, flushes and reopenings, at every flash word size and on both kinds
    /// of erased value (on flash with per-word ECC: neither programs a word twice), bounded
    /// or as a ring (which the long runs wrap); every call returns the same.
    #[test]
    fn word_writer_writes_what_the_buffered_writer_writes(
        steps in proptest::collection::vec(step(), 1..40),
        inverted in any::<bool>(),
        ring in any::<bool>(),
    ) {
        let erased = if inverted { 0x00 } else { 0xFF };
        same_bytes::<4>(&steps, erased, ring)?;
        same_bytes::<8>(&steps, erased, ring)?;
        same_bytes::<16>(&steps, erased, ring)?;
        same_bytes::<32>(&steps, erased, ring)?;
    }
}

#[test]
fn writer_state_is_small() {
    // The small-RAM writer's whole state, with a reference to its flash driver.
    let size = core::mem::size_of::<WordWriter<&mut MockFlash<'_, 8, ERASE>>>();
    std::println!("size_of WordWriter<&mut MockFlash> = {size}");
    assert!(size <= 224, "WordWriter is {size} bytes");
}

#[cfg(feature = "embedded-storage-async")]
mod asynch {
    //! The async writer: the same bytes, and every await point a safe place to stop.

    use core::cell::Cell;
    use core::future::Future;
    use core::pin::pin;
    use core::task::{Context, Poll, Waker};
    use std::vec::Vec;

    use embedded_storage_async::nor_flash::{ErrorType, NorFlash, ReadNorFlash};

    use super::super::tests::{Memory, config, read_all, script};
    use super::super::{AsyncWordWriter, FlashConfig, FlashError, MockError, WordWriter};

    type Flash<'a> = super::super::MockFlash<'a, 8, 4096>;

    /// Suspends once: a real await point before each flash operation.
    #[derive(Default)]
    struct YieldOnce(bool);

    impl Future for YieldOnce {
        type Output = ();
        fn poll(mut self: core::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            if self.0 {
                Poll::Ready(())
            } else {
                self.0 = true;
                cx.waker().wake_by_ref();
                Poll::Pending
            }
        }
    }

    /// The mock flash, suspending before each operation.
    struct Yielding<'f, 'm>(&'f mut Flash<'m>);

    impl ErrorType for Yielding<'_, '_> {
        type Error = MockError;
    }

    impl ReadNorFlash for Yielding<'_, '_> {
        const READ_SIZE: usize = 1;
        async fn read(&mut self, offset: u32, bytes: &mut [u8]) -> Result<(), MockError> {
            YieldOnce::default().await;
            ReadNorFlash::read(self.0, offset, bytes).await
        }
        fn capacity(&self) -> usize {
            ReadNorFlash::capacity(self.0)
        }
    }

    impl NorFlash for Yielding<'_, '_> {
        const WRITE_SIZE: usize = 8;
        const ERASE_SIZE: usize = 4096;
        async fn erase(&mut self, from: u32, to: u32) -> Result<(), MockError> {
            YieldOnce::default().await;
            NorFlash::erase(self.0, from, to).await
        }
        async fn write(&mut self, offset: u32, bytes: &[u8]) -> Result<(), MockError> {
            YieldOnce::default().await;
            NorFlash::write(self.0, offset, bytes).await
        }
    }

    /// A session: open, log `records` with a flush after every `batch`, reopen halfway.
    /// `acked` counts the acknowledged records as they are.
    async fn session(
        flash: &mut Flash<'_>,
        config: FlashConfig,
        records: &[Vec<u8>],
        batch: usize,
        acked: &Cell<usize>,
    ) -> Result<(), FlashError<MockError>> {
        let half = records.len() / 2;
        for part in [&records[..half], &records[half..]] {
            let mut writer = AsyncWordWriter::open(Yielding(flash), config).await?;
            let mut pending = 0;
            for (i, record) in part.iter().enumerate() {
                writer.add_record(record).await?;
                pending += 1;
                if (i + 1) % batch == 0 || i + 1 == part.len() {
                    writer.flush().await?;
                    acked.set(acked.get() + pending);
                    pending = 0;
                }
            }
        }
        Ok(())
    }

    #[test]
    fn async_writer_writes_what_the_blocking_one_writes() {
        // Bounded, and as a ring that wraps (about 1.5 regions of records).
        for (config, count) in [(config(4), 50), (config(4).ring(), 700)] {
            let records: Vec<Vec<u8>> = script(count, 3)
                .into_iter()
                .map(|mut r| {
                    r.truncate(2500);
                    r
                })
                .collect();
            let mut a = Memory::new(4);
            let mut b = Memory::new(4);
            let acked = Cell::new(0);
            let mut laps = 0;
            {
                let mut flash = a.flash();
                embassy_futures::block_on(session(&mut flash, config, &records, 3, &acked))
                    .expect("async session");
            }
            {
                let mut flash: Flash<'_> = b.flash();
                let half = records.len() / 2;
                for part in [&records[..half], &records[half..]] {
                    let mut writer = WordWriter::open(&mut flash, config).expect("open");
                    for (i, record) in part.iter().enumerate() {
                        writer.add_record(record).expect("add");
                        if (i + 1) % 3 == 0 || i + 1 == part.len() {
                            writer.flush().expect("flush");
                        }
                    }
                    laps += writer.stats().laps;
                }
            }
            assert_eq!(laps > 0, config.ring, "the ring wraps");
            assert_eq!(acked.get(), records.len());
            assert!(
                a.bytes == b.bytes,
                "flash bytes differ, ring: {}",
                config.ring
            );
        }
    }

    #[test]
    fn dropping_a_future_at_any_await_point_is_a_safe_power_cut() {
        let records: Vec<Vec<u8>> = script(24, 11)
            .into_iter()
            .map(|mut r| {
                r.truncate(700);
                r
            })
            .collect();
        let more: Vec<Vec<u8>> = (0..3u8).map(|i| std::vec![0xb0 + i; 40]).collect();
        let config = config(4);
        let mut polls = 0;
        loop {
            polls += 1;
            let mut memory = Memory::new(4);
            let mut flash: Flash<'_> = memory.flash();
            let acked = Cell::new(0);
            let finished = {
                let mut future = pin!(session(&mut flash, config, &records, 4, &acked));
                let mut cx = Context::from_waker(Waker::noop());
                (0..polls).any(|_| future.as_mut().poll(&mut cx).is_ready())
                // Dropped here, mid-operation unless finished.
            };
            let read = read_all(&flash, config).records;
            assert!(
                read.len() >= acked.get() && read.len() <= records.len(),
                "dropped after {polls} polls: read {}, acked {}",
                read.len(),
                acked.get()
            );
            assert_eq!(read[..], records[..read.len()], "{polls} polls");
            // Reopened, the log goes on after what survived.
            let mut writer = WordWriter::open(&mut flash, config).expect("reopen");
            for r in &more {
                writer.add_record(r).expect("add after reopen");
            }
            writer.flush().expect("flush after reopen");
            let after = read_all(&flash, config);
            assert_eq!(after.records[..read.len()], read[..], "{polls} polls");
            assert_eq!(after.records[read.len()..], more[..], "{polls} polls");
            assert!(after.damage.is_empty() && !after.torn_tail, "{polls} polls");
            if finished {
                assert_eq!(acked.get(), records.len());
                break;
            }
        }
        // Every record and flush has at least one operation, each an await point.
        assert!(polls > records.len() * 3, "await points: {polls}");
    }

    #[test]
    fn a_writer_whose_future_was_dropped_refuses_work() {
        let mut memory = Memory::new(2);
        let mut flash = memory.flash();
        let config = config(2);
        let mut writer =
            embassy_futures::block_on(AsyncWordWriter::open(Yielding(&mut flash), config))
                .expect("open");
        {
            let mut future = pin!(writer.add_record(&[7u8; 100]));
            let mut cx = Context::from_waker(Waker::noop());
            assert!(future.as_mut().poll(&mut cx).is_pending());
        }
        assert_eq!(
            embassy_futures::block_on(writer.flush()),
            Err(FlashError::Poisoned)
        );
        assert_eq!(
            embassy_futures::block_on(writer.add_record(b"x")),
            Err(FlashError::Poisoned)
        );
    }
}

#[test]
fn a_writers_config_tells_its_readers_the_word_size() {
    let mut memory = std::vec![0xFFu8; BLOCKS * BLOCK_SIZE];
    let mut flags = std::vec![false; BLOCKS * BLOCK_SIZE / 16];
    let mut flash: MockFlash<'_, 16, ERASE> =
        MockFlash::new(&mut memory, &mut flags, 0xFF).expect("geometry");
    let config = FlashConfig::new(0, (BLOCKS * BLOCK_SIZE) as u32);
    assert_eq!(config.write_size, None);
    let writer = WordWriter::open(&mut flash, config).expect("open");
    assert_eq!(writer.config().write_size, Some(16));
    assert_eq!(writer.config().len, config.len);
}
