//! `cargo xtask qemu`'s flight recorder: a firmware that logs with `defmt` through
//! `logfmt-defmt` into a ring log on the simulated NOR flash, through power cuts at random
//! points and a brown-out loop, ending in a panic whose handler writes the staged frames and
//! the panic message. Then it saves, through semihosting, in QEMU's working directory:
//!
//! - `defmt-flash.img`: the flash region (a ring image);
//! - `defmt-expected.txt`: what the host must find in it, decoded with this ELF (see
//!   [`save_expected`]).
//!
//! Every message kind the decoder knows: integers, floats, strings and interned strings,
//! chars, slices and arrays, `#[derive(Format)]` structs and enums, bitfields, display hints,
//! `Debug2Format`; from the main loop and from an interrupt handler (PendSV, pended at random
//! in the middle of flash programs, so that interrupts log while a drain is writing).
#![no_std]
#![no_main]

use core::fmt::Write as _;
use core::sync::atomic::{AtomicPtr, AtomicU32, Ordering};

use cortex_m::peripheral::SCB;
use cortex_m_rt::{entry, exception};
use cortex_m_semihosting::hprintln;
use defmt::{Debug2Format, Format};
use embedded_storage::nor_flash::{ErrorType, NorFlash, ReadNorFlash};
use logfmt_core::BLOCK_SIZE;
use logfmt_core::flash::{FlashConfig, MockError, MockFlash, PowerCut, WordWriter};
use logfmt_defmt::{FlushPolicy, Level, Recorder};
use logfmt_firmware::harness::{core_name, exit};
use logfmt_firmware::rng::XorShift;
use logfmt_firmware::semihosting_file::{HostFile, write_file};

/// The ring: eight 32 KiB blocks, 4 KiB erase units, 8-byte words (the boots write less than
/// the six blocks it keeps: no acknowledged frame ages out).
const REGION: usize = 8 * BLOCK_SIZE;
const WRITE: usize = 8;
const ERASE: usize = 4096;
/// Boots cut at a random byte of their flash work.
const RANDOM_CUTS: u32 = 12;
/// Boots of the brown-out loop: cut within the first word or two programmed after the reopen.
const BROWN_OUTS: u32 = 6;
/// Frames logged without a drain at the end, to overflow the staging buffer.
const BURST: u32 = 200;
/// The most frame numbers noted as dropped.
const MAX_DROPPED: usize = 256;

/// The flash: the simulated NOR flash, with a PendSV pended now and then in a program.
struct IrqFlash<'m> {
    flash: MockFlash<'m, WRITE, ERASE>,
    rng: XorShift,
}

impl ErrorType for IrqFlash<'_> {
    type Error = MockError;
}

impl ReadNorFlash for IrqFlash<'_> {
    const READ_SIZE: usize = 1;
    fn read(&mut self, offset: u32, bytes: &mut [u8]) -> Result<(), Self::Error> {
        self.flash.read(offset, bytes)
    }
    fn capacity(&self) -> usize {
        self.flash.capacity()
    }
}

impl NorFlash for IrqFlash<'_> {
    const WRITE_SIZE: usize = WRITE;
    const ERASE_SIZE: usize = ERASE;
    fn erase(&mut self, from: u32, to: u32) -> Result<(), Self::Error> {
        self.flash.erase(from, to)
    }
    fn write(&mut self, offset: u32, bytes: &[u8]) -> Result<(), Self::Error> {
        if self.rng.below(4) == 0 {
            // An interrupt logs in the middle of a drain's program.
            SCB::set_pendsv();
        }
        self.flash.write(offset, bytes)
    }
}

type Log = WordWriter<IrqFlash<'static>>;
type Rec = Recorder<Log, 256>;

/// The recorder of the boot in progress, for the panic handler.
static RECORDER: AtomicPtr<Rec> = AtomicPtr::new(core::ptr::null_mut());
/// Frames logged by the interrupt handler.
static IRQ_FRAMES: AtomicU32 = AtomicU32::new(0);
/// The clock of the timestamps: 250 µs a frame.
static NOW: AtomicU32 = AtomicU32::new(0);

defmt::timestamp!("{=u32:us}", NOW.fetch_add(250, Ordering::Relaxed));

/// The most boots.
const MAX_BOOTS: usize = 32;

/// What the host must find: kept through the boots (RAM survives the simulated power cuts).
struct Account {
    /// The main loop's frames logged.
    logged: u32,
    /// For each boot, the main loop's frames it logged (from the first) that a flush
    /// acknowledged (to the last): `from..to`.
    acked: [(u32, u32); MAX_BOOTS],
    /// The same for the interrupt's frames.
    irq_acked: [(u32, u32); MAX_BOOTS],
    /// Where the final boot begins: its frames are all written by the panic path, but for
    /// those dropped.
    final_from: u32,
    dropped: [u32; MAX_DROPPED],
    dropped_len: usize,
    boots: u32,
}

static mut ACCOUNT: Account = Account {
    logged: 0,
    acked: [(0, 0); MAX_BOOTS],
    irq_acked: [(0, 0); MAX_BOOTS],
    final_from: 0,
    dropped: [0; MAX_DROPPED],
    dropped_len: 0,
    boots: 0,
};

fn account() -> &'static mut Account {
    // SAFETY: one thread (the main loop and the panic handler after it); the interrupt
    // handler never touches it.
    #[allow(clippy::deref_addrof)] // a raw pointer first: no shared reference to a `static mut`
    unsafe {
        &mut *(&raw mut ACCOUNT)
    }
}

#[derive(Format)]
struct Reading {
    sensor: u8,
    celsius: i16,
    ok: bool,
}

#[derive(Format)]
enum State {
    Idle,
    Running { rpm: u16 },
    Fault(u8),
}

#[derive(Debug)]
#[allow(dead_code)] // read through `Debug` only
struct Calibration {
    gain: u32,
    offset: i8,
    label: &'static str,
}

const NAMES: [&str; 3] = ["alpha", "beta", "gamma"];

/// Logs main-loop frame `n`: its kind is `n % 8` (the host's check builds the same text).
fn log_frame(n: u32) {
    match n % 8 {
        0 => defmt::info!(
            "#{=u32} integers: u8={=u8} i16={=i16} u64={=u64} i64={=i64} usize={=usize}",
            n,
            (n % 256) as u8,
            -(n as i16),
            u64::from(n) << 33,
            -i64::from(n) * 1_000_000_007,
            n as usize
        ),
        1 => defmt::debug!(
            "#{=u32} floats: f32={=f32} f64={=f64}",
            n,
            n as f32 * 0.5,
            -f64::from(n) * 0.25
        ),
        2 => defmt::warn!(
            "#{=u32} strings: str={=str} istr={=istr} char={=char}",
            n,
            NAMES[(n % 3) as usize],
            defmt::intern!("interned"),
            'λ'
        ),
        3 => {
            let bytes = [n as u8, (n + 1) as u8, (n + 2) as u8];
            let words: [u16; 2] = [n as u16, 7];
            defmt::info!(
                "#{=u32} slices: bytes={=[u8]} words={=[?]} array={=[u8; 4]}",
                n,
                &bytes[..],
                &words[..],
                [1u8, 2, 3, (n % 256) as u8]
            )
        }
        4 => {
            let reading = Reading {
                sensor: (n % 4) as u8,
                celsius: (n % 50) as i16 - 10,
                ok: n.is_multiple_of(2),
            };
            let state = match n % 3 {
                0 => State::Idle,
                1 => State::Running {
                    rpm: (n % 5000) as u16,
                },
                _ => State::Fault((n % 7) as u8),
            };
            defmt::info!("#{=u32} derived: {} {}", n, reading, state)
        }
        5 => defmt::info!(
            "#{0=u32} bitfields: low={1=0..4} high={1=4..8} top={1=15..16}",
            n,
            (n as u16).wrapping_mul(40_503)
        ),
        6 => defmt::error!(
            "#{=u32} debug2format: {}",
            n,
            Debug2Format(&Calibration {
                gain: n * 3,
                offset: -2,
                label: "cal",
            })
        ),
        _ => defmt::trace!(
            "#{=u32} hints: bool={=bool} hex={=u32:#x} tuple={}",
            n,
            n.is_multiple_of(3),
            n.wrapping_mul(2_654_435_761),
            (n as u8, true)
        ),
    }
}

#[exception]
fn PendSV() {
    let k = IRQ_FRAMES.fetch_add(1, Ordering::Relaxed);
    defmt::info!("irq #{=u32} from PendSV", k);
}

/// Logs the next `count` main-loop frames, noting those the staging buffer had no room for.
fn log_frames(count: u32) {
    let account = account();
    for _ in 0..count {
        let before = logfmt_defmt::staging_stats().dropped;
        log_frame(account.logged);
        if logfmt_defmt::staging_stats().dropped != before && account.dropped_len < MAX_DROPPED {
            account.dropped[account.dropped_len] = account.logged;
            account.dropped_len += 1;
        }
        account.logged += 1;
    }
}

/// One boot: opens the log, logs and drains until the power cut the plan set (or `frames`
/// frames without one). Whether the power was cut.
fn boot(rng: &mut XorShift, flash: IrqFlash<'static>, frames: u32) -> (bool, IrqFlash<'static>) {
    let config = FlashConfig::new(0, REGION as u32).ring();
    let log = match WordWriter::open(flash, config) {
        Ok(log) => log,
        Err(e) => {
            hprintln!("open failed: {:?}", e);
            exit(false)
        }
    };
    let mut recorder: Rec = Recorder::new(
        log,
        FlushPolicy::new().every_frames(24).at_level(Level::Error),
    );
    RECORDER.store(&raw mut recorder, Ordering::Release);
    let account = account();
    let this = account.boots as usize % MAX_BOOTS;
    account.boots += 1;
    let irq_from = IRQ_FRAMES.load(Ordering::Relaxed);
    account.acked[this] = (account.logged, account.logged);
    account.irq_acked[this] = (irq_from, irq_from);
    let end = account.logged + frames;
    let mut cut = false;
    while account.logged < end {
        log_frames(1 + rng.below(4) as u32);
        if rng.below(5) == 0 {
            SCB::set_pendsv();
        }
        let result = if rng.below(6) == 0 {
            // On demand: everything staged before is acknowledged once it returns.
            let (main, irq) = (account.logged, IRQ_FRAMES.load(Ordering::Relaxed));
            recorder.flush().map(|_| {
                account.acked[this].1 = main;
                account.irq_acked[this].1 = irq;
            })
        } else {
            recorder.drain().map(drop)
        };
        if result.is_err() {
            cut = true;
            break;
        }
    }
    RECORDER.store(core::ptr::null_mut(), Ordering::Release);
    let mut flash = recorder.into_inner().into_inner();
    flash.flash.power_on();
    (cut, flash)
}

#[entry]
fn main() -> ! {
    let memory = cortex_m::singleton!(: [u8; REGION] = [0; REGION]).unwrap_or_else(|| exit(false));
    let words = cortex_m::singleton!(: [bool; REGION / WRITE] = [false; REGION / WRITE])
        .unwrap_or_else(|| exit(false));
    let Ok(flash) = MockFlash::<WRITE, ERASE>::new(memory, words, 0xFF) else {
        exit(false)
    };
    hprintln!("defmt flight recorder on {} (QEMU)", core_name());
    let mut rng = XorShift::new(0x5eed_defb);
    let flash = IrqFlash {
        flash,
        rng: XorShift::new(7),
    };
    // A first boot without a cut (it erases the ring's first erase groups), then power cuts
    // at random points of the flash work (programs and erases), each followed by a reboot.
    let (_, mut flash) = boot(&mut rng, flash, 60);
    for i in 0..RANDOM_CUTS + BROWN_OUTS {
        let budget = if i < RANDOM_CUTS {
            rng.range(1..12_000)
        } else {
            // The brown-out loop: the power fails again right after each reopen.
            rng.range(0..2 * WRITE)
        };
        let how = match rng.below(3) {
            0 => PowerCut::Partial,
            1 => PowerCut::Untouched,
            _ => PowerCut::Arbitrary {
                seed: rng.next_u64(),
            },
        };
        flash.flash.cut_power_after(budget, how);
        let (cut, back) = boot(&mut rng, flash, 200);
        flash = back;
        if !cut {
            hprintln!("boot {}: the planned power cut did not happen", i);
        }
    }
    // The final boot: no cut; a burst the staging buffer cannot hold; then a panic.
    account().final_from = account().logged;
    let config = FlashConfig::new(0, REGION as u32).ring();
    let Ok(log) = WordWriter::open(flash, config) else {
        exit(false)
    };
    // A static: the panic handler writes through it after `main` is gone.
    let recorder = cortex_m::singleton!(: Option<Rec> = None).unwrap_or_else(|| exit(false));
    let recorder = recorder.insert(Recorder::new(log, FlushPolicy::new().every_frames(24)));
    RECORDER.store(recorder, Ordering::Release);
    let this = account().boots as usize % MAX_BOOTS;
    let irq_from = IRQ_FRAMES.load(Ordering::Relaxed);
    account().irq_acked[this] = (irq_from, irq_from);
    account().boots += 1;
    for _ in 0..25 {
        log_frames(4);
        if recorder.drain().is_err() {
            exit(false);
        }
    }
    log_frames(BURST);
    panic!("flight over after {} frames", account().logged);
}

/// `defmt-expected.txt`: `key value` lines — `logged N` (main-loop frames #0..N), `acked A-B
/// C-D...` (the frames #A..B, #C..D... acknowledged by a flush, one range a boot before the
/// final one), `irq_acked A-B...` (the same for the interrupt's frames, the final boot's
/// included), `final_from N` (the final boot's first frame: from it on every frame is
/// written, but the `dropped` ones), `dropped A B C...`, `dropped_count N` (the staging
/// buffer's count), `boots N`, `panic MESSAGE`.
fn save_expected(panic: &str, irq_end: u32) -> bool {
    let account = account();
    let last = (account.boots as usize).saturating_sub(1) % MAX_BOOTS;
    account.irq_acked[last].1 = irq_end;
    let boots = (account.boots as usize).min(MAX_BOOTS);
    let Ok(mut file) = HostFile::create("defmt-expected.txt\0") else {
        return false;
    };
    let stats = logfmt_defmt::staging_stats();
    let _ = writeln!(file, "logged {}", account.logged);
    for (key, ranges) in [("acked", &account.acked), ("irq_acked", &account.irq_acked)] {
        let _ = write!(file, "{key}");
        for (from, to) in ranges.iter().take(boots) {
            let _ = write!(file, " {from}-{to}");
        }
        let _ = writeln!(file);
    }
    let _ = writeln!(file, "irq_logged {}", IRQ_FRAMES.load(Ordering::Relaxed));
    let _ = writeln!(file, "final_from {}", account.final_from);
    let _ = write!(file, "dropped");
    for n in account.dropped.iter().take(account.dropped_len) {
        let _ = write!(file, " {n}");
    }
    let _ = writeln!(file);
    let _ = writeln!(file, "dropped_count {}", stats.dropped);
    let _ = writeln!(file, "boots {}", account.boots);
    let _ = writeln!(file, "panic {panic}");
    file.close().is_ok()
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    // The interrupt's frames logged before the panic: all are written.
    let irq_end = IRQ_FRAMES.load(Ordering::Relaxed);
    let recorder = RECORDER.load(Ordering::Acquire);
    // SAFETY: the pointer is the final boot's recorder, in a static; `main` no longer runs.
    let Some(recorder) = (unsafe { recorder.as_mut() }) else {
        hprintln!("panic outside the final boot: {}", info);
        exit(false)
    };
    let written = recorder.panic(info);
    let message =
        logfmt_firmware::fmtbuf::FmtBuf::<256>::format(format_args!("{}", info.message()));
    let image = recorder.log().flash_mut().flash.memory();
    let saved =
        write_file("defmt-flash.img\0", image).is_ok() && save_expected(message.as_str(), irq_end);
    hprintln!(
        "panic path: {:?}; {} boots; image saved: {}",
        written,
        account().boots,
        saved
    );
    exit(written.is_ok() && saved)
}
