//! The logger end to end on the host: `defmt` macros, the staging buffer, the recorder, the
//! simulated NOR flash of logfmt-core (`mock-flash`), read back with `WordReader`.
//!
//! The logger's state is global (one per program, as on a device): the tests take a lock and
//! start from an empty buffer.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::vec::Vec;

use logfmt_core::flash::{FlashConfig, FlashItem, MockFlash, PowerCut, WordReader, WordWriter};
use logfmt_core::pack::Pack;

use crate::logger::with_staging;
use crate::{FlushPolicy, Level, Levels, Recorder, staging_stats};

static SERIAL: Mutex<()> = Mutex::new(());
static NOW: AtomicU32 = AtomicU32::new(0);

defmt::timestamp!("{=u32:us}", NOW.fetch_add(1, Ordering::Relaxed));

const REGION: usize = 4 * logfmt_core::BLOCK_SIZE;
type Flash<'a> = MockFlash<'a, 8, 4096>;

/// A lock on the logger, its buffer emptied and its counts taken.
fn fresh() -> std::sync::MutexGuard<'static, ()> {
    let guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    with_staging(|s| {
        let mut scratch = [0u8; 2048];
        while s.pop(&mut scratch).is_some() {}
        s.take_unreported();
    });
    guard
}

/// The frames of a log in `memory`: each record, and each record of each pack, in order.
fn frames(memory: &mut [u8]) -> Vec<Vec<u8>> {
    let mut programmed = std::vec![false; REGION / 8];
    let mut copy = memory.to_vec();
    let flash = Flash::new(&mut copy, &mut programmed, 0xFF).unwrap();
    // `new` erases: put the image back.
    let mut flash = flash;
    flash.memory_mut().copy_from_slice(memory);
    let mut reader = WordReader::open(flash, FlashConfig::new(0, REGION as u32).ring()).unwrap();
    let mut buffer = [0u8; 4096];
    let mut out = Vec::new();
    while let Some(item) = reader.next(&mut buffer).unwrap() {
        match item {
            FlashItem::Record { len, .. } => out.push(buffer[..len].to_vec()),
            FlashItem::Pack { len, .. } => {
                let pack = Pack::parse(&buffer[..len]).unwrap();
                for record in pack.records() {
                    out.push(record.unwrap().1.to_vec());
                }
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    out
}

/// The `u32` argument of a frame `index, timestamp (u32), u32`.
fn arg(frame: &[u8]) -> u32 {
    assert_eq!(frame.len(), 10, "{frame:?}");
    u32::from_le_bytes(frame[6..10].try_into().unwrap())
}

fn index(frame: &[u8]) -> u16 {
    u16::from_le_bytes([frame[0], frame[1]])
}

#[test]
fn frames_reach_the_flash_packed_in_order_and_flushed_by_the_policy() {
    let _lock = fresh();
    let mut memory = std::vec![0u8; REGION];
    let mut programmed = std::vec![false; REGION / 8];
    let flash = Flash::new(&mut memory, &mut programmed, 0xFF).unwrap();
    let log = WordWriter::open(flash, FlashConfig::new(0, REGION as u32).ring()).unwrap();
    let mut recorder: Recorder<_> = Recorder::new(log, FlushPolicy::new().every_frames(16));
    let mut flushes = 0;
    for i in 0..100u32 {
        defmt::println!("sample {=u32}", i);
        if i % 10 == 9 {
            flushes += recorder.drain().unwrap().flushes;
        }
    }
    assert_eq!(flushes, 6); // after frames 16, 32, ..., 96
    let stats = recorder.stats();
    assert_eq!((stats.frames, stats.durable), (100, 96));
    assert!(stats.packs >= 6, "{stats:?}");
    recorder.flush().unwrap();
    assert_eq!(recorder.stats().durable, 100);
    let position = recorder.log().position();
    let back = frames(&mut memory);
    assert_eq!(
        back.iter().map(|f| arg(f)).collect::<Vec<_>>(),
        (0..100).collect::<Vec<_>>()
    );
    // The ring header, then 7 flushes of packs (12 bytes of pack header, 11 bytes a frame):
    // about half of what 100 records of their own would take (7 + 10 bytes each, padded to the
    // 8-byte word: 24 bytes a frame).
    assert!(position < 19 + 100 * 24 * 52 / 100, "{position}");
}

#[test]
fn a_full_buffer_drops_frames_counts_them_and_logs_the_count_when_there_is_room() {
    let _lock = fresh();
    let before = staging_stats().dropped;
    // 12 bytes a staged frame (10 and the prefix): the default 1 KiB buffer holds 85.
    let fits = crate::BUFFER_SIZE / 12;
    for i in 0..200u32 {
        defmt::println!("burst {=u32}", i);
    }
    assert_eq!(staging_stats().dropped - before, 200 - fits as u32);
    let mut memory = std::vec![0u8; REGION];
    let mut programmed = std::vec![false; REGION / 8];
    let flash = Flash::new(&mut memory, &mut programmed, 0xFF).unwrap();
    let log = WordWriter::open(flash, FlashConfig::new(0, REGION as u32).ring()).unwrap();
    let mut recorder: Recorder<_> = Recorder::new(log, FlushPolicy::new());
    recorder.flush().unwrap();
    assert_eq!(staging_stats().unreported, 0);
    let back = frames(&mut memory);
    assert_eq!(back.len(), fits + 1);
    for (i, frame) in back[..fits].iter().enumerate() {
        assert_eq!(arg(frame), i as u32);
    }
    // The report: another message (its own index), the count as its argument.
    let report = &back[fits];
    assert_ne!(index(report), index(&back[0]));
    assert_eq!(arg(report), 200 - fits as u32);
}

#[test]
fn the_panic_path_writes_the_staged_frames_and_the_message_last_and_durably() {
    let _lock = fresh();
    let mut memory = std::vec![0u8; REGION];
    let mut programmed = std::vec![false; REGION / 8];
    let flash = Flash::new(&mut memory, &mut programmed, 0xFF).unwrap();
    let log = WordWriter::open(flash, FlashConfig::new(0, REGION as u32).ring()).unwrap();
    let mut recorder: Recorder<_> = Recorder::new(log, FlushPolicy::new());
    for i in 0..5u32 {
        defmt::println!("before {=u32}", i);
    }
    let dropped = staging_stats().dropped;
    // A frame the panic interrupts: begun, never ended.
    with_staging(|s| {
        s.begin();
        s.write(&[1, 2, 3]);
    });
    let here = core::panic::Location::caller();
    recorder
        .panic_with(Some(here), format_args!("sensor {} out of range", 3))
        .unwrap();
    assert_eq!(staging_stats().dropped, dropped + 1);
    // Everything is durable: a power cut now loses nothing.
    let flash = recorder.into_inner().into_inner();
    assert!(!flash.is_cut());
    let back = frames(&mut memory);
    // Five frames, the dropped-frame report, the panic message.
    assert_eq!(back.len(), 7, "{back:?}");
    for (i, frame) in back[..5].iter().enumerate() {
        assert_eq!(arg(frame), i as u32);
    }
    assert_eq!(arg(&back[5]), 1);
    let panic = &back[6];
    // index, timestamp, file (length-prefixed str), line, message.
    let text = std::string::String::from_utf8_lossy(panic);
    assert!(text.contains("src/tests.rs"), "{text}");
    assert!(text.ends_with("sensor 3 out of range"), "{text}");
}

#[test]
fn every_flushed_frame_survives_a_power_cut_in_the_middle_of_a_drain() {
    for cut_after in [0usize, 5, 40, 77, 130, 300, 1000] {
        let _lock = fresh();
        let mut memory = std::vec![0u8; REGION];
        let mut programmed = std::vec![false; REGION / 8];
        let mut flash = Flash::new(&mut memory, &mut programmed, 0xFF).unwrap();
        let log = WordWriter::open(&mut flash, FlashConfig::new(0, REGION as u32).ring()).unwrap();
        let mut recorder: Recorder<_, 128> = Recorder::new(log, FlushPolicy::new().every_frames(5));
        for i in 0..30u32 {
            defmt::println!("tick {=u32}", i);
        }
        recorder.drain().unwrap();
        let durable = recorder.stats().durable;
        recorder.log().flash_mut().cut_power_after(
            cut_after,
            PowerCut::Arbitrary {
                seed: cut_after as u64,
            },
        );
        for i in 30..60u32 {
            defmt::println!("tick {=u32}", i);
        }
        let result = recorder.drain();
        let durable_after = if result.is_ok() {
            recorder.stats().durable
        } else {
            durable
        };
        assert!(
            result.is_err() || cut_after >= 300,
            "cut at {cut_after}: {result:?}"
        );
        let back: Vec<u32> = frames(&mut memory).iter().map(|f| arg(f)).collect();
        // Every durable frame, in order; then maybe some of those in flight.
        assert!(
            back.len() >= durable_after as usize,
            "cut at {cut_after}: {back:?}"
        );
        assert_eq!(
            back,
            (0..back.len() as u32).collect::<Vec<_>>(),
            "cut at {cut_after}"
        );
    }
}

#[test]
fn a_frame_at_the_policy_level_is_flushed_at_once() {
    let _lock = fresh();
    // One call site: one string index.
    fn overheat(degrees: u32) {
        defmt::error!("overheat {=u32}", degrees);
    }
    overheat(90);
    let mut frame = [0u8; 64];
    let len = with_staging(|s| s.pop(&mut frame)).unwrap();
    let warn = index(&frame[..len]);
    let levels = Levels::from_ranges([(0, 0), (0, 0), (0, 0), (0, 0), (warn, warn + 1)]);
    let mut memory = std::vec![0u8; REGION];
    let mut programmed = std::vec![false; REGION / 8];
    let flash = Flash::new(&mut memory, &mut programmed, 0xFF).unwrap();
    let log = WordWriter::open(flash, FlashConfig::new(0, REGION as u32).ring()).unwrap();
    let mut recorder: Recorder<_> =
        Recorder::new(log, FlushPolicy::new().at_level(Level::Error)).with_levels(levels);
    defmt::println!("fine {=u32}", 1u32);
    assert_eq!(recorder.drain().unwrap().flushes, 0);
    overheat(91);
    defmt::println!("fine {=u32}", 2u32);
    let report = recorder.drain().unwrap();
    assert_eq!((report.frames, report.flushes), (2, 1));
    assert_eq!(recorder.stats().durable, 2);
}

#[test]
fn the_async_drain_writes_the_same_frames() {
    use logfmt_core::flash::AsyncWordWriter;
    let _lock = fresh();
    let mut memory = std::vec![0u8; REGION];
    let mut programmed = std::vec![false; REGION / 8];
    embassy_futures::block_on(async {
        let flash = Flash::new(&mut memory, &mut programmed, 0xFF).unwrap();
        let log = AsyncWordWriter::open(flash, FlashConfig::new(0, REGION as u32).ring())
            .await
            .unwrap();
        let mut recorder: Recorder<_> = Recorder::new(log, FlushPolicy::new().every_frames(7));
        for i in 0..40u32 {
            defmt::println!("async {=u32}", i);
        }
        let report = recorder.drain_async().await.unwrap();
        assert_eq!((report.frames, report.flushes), (40, 5));
        recorder.flush_async().await.unwrap();
        assert_eq!(recorder.stats().durable, 40);
    });
    let back: Vec<u32> = frames(&mut memory).iter().map(|f| arg(f)).collect();
    assert_eq!(back, (0..40).collect::<Vec<_>>());
}
