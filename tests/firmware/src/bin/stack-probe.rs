//! Part of `cargo xtask size`, run under QEMU: the log's state sizes (`size_of`) and the stack
//! high-water marks of opening, appending and reading, measured by stack painting, for the same
//! code as `size-probe` (same profile, same flash driver). Prints `probe: KEY VALUE` lines.
#![no_std]
#![no_main]

use core::hint::black_box;
use core::mem::size_of;

use cortex_m_rt::entry;
use cortex_m_semihosting::hprintln;
use embedded_storage::nor_flash::NorFlash;
use logfmt_core::flash::{FlashConfig, WordReader, WordWriter};
use logfmt_core::{BLOCK_SIZE, Writer};
use logfmt_firmware::harness::{core_name, exit};
use logfmt_firmware::probe;
use logfmt_firmware::stack::high_water;
use logfmt_firmware::stub_flash::{CAPACITY, StubFlash};
use panic_semihosting as _;

type Block<'a> = &'a mut [u8; BLOCK_SIZE];

#[entry]
fn main() -> ! {
    let mut scratch = [0u8; 48 * 1024];
    hprintln!("stack probe on {} (QEMU)", core_name());

    // The state the log keeps besides the caller's buffers (a reference to each is included).
    let writer = size_of::<WordWriter<StubFlash>>();
    let reader = size_of::<WordReader<StubFlash>>();
    let plain_writer =
        size_of::<Writer<logfmt_core::FnSink<fn(&[u8]) -> Result<(), ()>>, Block<'static>>>();
    hprintln!("probe: size_of WordWriter {writer}");
    hprintln!("probe: size_of Reader {reader}");
    hprintln!("probe: size_of Writer {plain_writer}");
    hprintln!("probe: size_of FlashConfig {}", size_of::<FlashConfig>());
    hprintln!("probe: size_of buffer_ref {}", size_of::<Block<'static>>());
    hprintln!("probe: size_of scratch_ref {}", size_of::<&mut [u8]>());
    hprintln!("probe: size_of StubFlash {}", size_of::<StubFlash>());

    // Stack high-water marks, bytes below the caller's frame.
    probe::factory_erase();
    let open_empty = high_water(&mut || {
        let _ = black_box(WordWriter::open(StubFlash, probe::config()).map(|w| w.position()));
    });
    let append = high_water(&mut || {
        black_box(probe::append(&mut scratch, 120, true));
    });
    let read = high_water(&mut || {
        black_box(probe::read(&mut scratch));
    });
    let reopen = high_water(&mut || {
        let config = FlashConfig::new(0, CAPACITY as u32).ring();
        let _ = black_box(WordWriter::open(StubFlash, config).map(|w| w.position()));
    });
    // Damage: clear bits in headers and payloads here and there (NOR programming can), then
    // read again: checksum mismatches, bad lengths, records cut off.
    for at in (0..CAPACITY as u32 / 2).step_by(4_099 * 8) {
        let _ = StubFlash.write(at, &[0x5a; 8]);
    }
    let read_damaged = high_water(&mut || {
        black_box(probe::read(&mut scratch));
    });
    hprintln!("probe: stack open {open_empty}");
    hprintln!("probe: stack append {append}");
    hprintln!("probe: stack reopen {reopen}");
    hprintln!("probe: stack read {read}");
    hprintln!("probe: stack read_damaged {read_damaged}");
    let (records, bytes, dropped) = probe::read(&mut scratch);
    hprintln!("probe: damaged_read records={records} bytes={bytes} dropped={dropped}");
    exit(true)
}
