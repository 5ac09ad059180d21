//! The README's flash figures: bytes of NOR flash per frame for typical defmt messages, kept
//! by this logger with packs and without, against one record per frame, and against defmt's
//! own framing (rzcobs and a delimiter, what `defmt-rtt` sends). Run on the host with
//! `cargo run -p logfmt-defmt --example figures` (the frames' bytes are the target's: a
//! 2-byte string index, the `{=u32:us}` timestamp, the arguments).

use std::sync::atomic::{AtomicU32, Ordering};

use logfmt_core::flash::{FlashConfig, MockFlash, WordWriter};
use logfmt_defmt::{FlushPolicy, Recorder};

static NOW: AtomicU32 = AtomicU32::new(0);
defmt::timestamp!("{=u32:us}", NOW.fetch_add(1000, Ordering::Relaxed));

const REGION: usize = 8 * logfmt_core::BLOCK_SIZE;
const FRAMES: u32 = 4096;

#[derive(defmt::Format)]
enum State {
    Idle,
    Heating { target: i16 },
}

/// One of six typical messages, in turn.
fn log(i: u32) {
    match i % 6 {
        0 => defmt::println!("tick"),
        1 => defmt::println!("temperature {=f32} C", 20.0 + (i % 10) as f32 * 0.1),
        2 => defmt::println!("sensor {=u8} reads {=i16}", (i % 4) as u8, (i % 300) as i16),
        3 => defmt::println!("retry {=u32} of {=u32}", i % 5, 5),
        4 => defmt::println!(
            "state {}",
            if i.is_multiple_of(2) {
                State::Idle
            } else {
                State::Heating { target: 60 }
            }
        ),
        _ => defmt::println!("link {=str} up after {=u32} ms", "uplink", i),
    }
}

/// Flash bytes the log takes for `FRAMES` frames drained by a recorder with packs of `P`
/// bytes, flushed every `flush_every` frames; and the frames' own bytes.
fn with_recorder<const P: usize>(flush_every: u32) -> u64 {
    let mut memory = vec![0u8; REGION];
    let mut words = vec![false; REGION / 8];
    let flash = MockFlash::<8, 4096>::new(&mut memory, &mut words, 0xFF).expect("flash");
    let log_ = WordWriter::open(flash, FlashConfig::new(0, REGION as u32)).expect("log");
    let mut recorder: Recorder<_, P> =
        Recorder::new(log_, FlushPolicy::new().every_frames(flush_every));
    for i in 0..FRAMES {
        log(i);
        recorder.drain().expect("drain");
    }
    recorder.flush().expect("flush");
    recorder.log().position()
}

/// The frames themselves (popped through a recorder with no log behind: one record each into
/// a bounded log, the same as `WordWriter::add_record` a frame), flushed every `flush_every`.
fn one_record_each(flush_every: u32) -> (u64, u64, u64) {
    let mut memory = vec![0u8; REGION];
    let mut words = vec![false; REGION / 8];
    let flash = MockFlash::<8, 4096>::new(&mut memory, &mut words, 0xFF).expect("flash");
    let mut writer = WordWriter::open(flash, FlashConfig::new(0, REGION as u32)).expect("log");
    let (mut raw, mut rzcobs) = (0u64, 0u64);
    for i in 0..FRAMES {
        log(i);
        let frame = staged_frame();
        raw += frame.len() as u64;
        rzcobs += defmt_framing(&frame) as u64;
        writer.add_record(&frame).expect("add");
        if (i + 1) % flush_every == 0 {
            writer.flush().expect("flush");
        }
    }
    writer.flush().expect("flush");
    (writer.position(), raw, rzcobs)
}

/// Takes the frame just staged, through a recorder over a log that keeps it.
fn staged_frame() -> Vec<u8> {
    let mut log = Keep(Vec::new());
    let mut recorder: Recorder<_, 16> = Recorder::new(&mut log, FlushPolicy::new());
    recorder.drain().expect("drain");
    recorder.flush().expect("flush");
    log.0.pop().expect("a frame")
}

/// A log that keeps the records given to it.
struct Keep(Vec<Vec<u8>>);

impl logfmt_defmt::FrameLog for Keep {
    type Error = core::convert::Infallible;
    fn add_record(&mut self, frame: &[u8]) -> Result<(), Self::Error> {
        self.0.push(frame.to_vec());
        Ok(())
    }
    fn add_pack(&mut self, _: &[u8]) -> Result<(), Self::Error> {
        unreachable!("packs of 16 bytes hold one frame")
    }
    fn flush(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// Bytes of `frame` in defmt's own framing: rzcobs-encoded, then a 0 delimiter (`defmt-rtt`'s
/// stream, what `defmt-print` reads).
fn defmt_framing(frame: &[u8]) -> usize {
    let mut out = Vec::new();
    let mut encoder = defmt::Encoder::new();
    encoder.start_frame(|b| out.extend_from_slice(b));
    encoder.write(frame, |b| out.extend_from_slice(b));
    encoder.end_frame(|b| out.extend_from_slice(b));
    out.len()
}

fn main() {
    let per = |bytes: u64| bytes as f64 / f64::from(FRAMES);
    let (each_16, raw, rzcobs) = one_record_each(16);
    let (each_1, _, _) = one_record_each(1);
    println!("{FRAMES} frames of six typical messages, flash words of 8 bytes");
    println!(
        "frame bytes (index, timestamp, arguments): {:.1} a frame",
        per(raw)
    );
    println!(
        "defmt's own framing (rzcobs + delimiter):  {:.1}",
        per(rzcobs)
    );
    println!(
        "one record each, flushed every frame:       {:.1}",
        per(each_1)
    );
    println!(
        "one record each, flushed every 16 frames:   {:.1}",
        per(each_16)
    );
    for flush in [1u32, 16, 64] {
        println!(
            "logfmt-defmt, packs of 512 bytes, flushed every {flush} frames: {:.1}",
            per(with_recorder::<512>(flush))
        );
    }
}
