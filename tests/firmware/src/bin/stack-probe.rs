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
use logfmt_core::flash::{
    AsyncWordReader, AsyncWordWriter, FlashConfig, MockFlash, WordReader, WordWriter,
};
use logfmt_core::{BLOCK_SIZE, Writer};
use logfmt_firmware::harness::{core_name, exit};
use logfmt_firmware::probe;
use logfmt_firmware::stack::high_water;
use logfmt_firmware::stub_flash::{CAPACITY, StubFlash};
use panic_semihosting as _;

type Block<'a> = &'a mut [u8; BLOCK_SIZE];

#[entry]
fn main() -> ! {
    // The async writer's simulated flash (cortex-m-rt hands out `static mut` items of the
    // entry function as `&'static mut`).
    static mut MEMORY: [u8; 2 * BLOCK_SIZE] = [0; 2 * BLOCK_SIZE];
    static mut PROGRAMMED: [bool; 2 * BLOCK_SIZE / 8] = [false; 2 * BLOCK_SIZE / 8];
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
    async_writer(&mut scratch, MEMORY, PROGRAMMED);
    exit(true)
}

/// The async writer (`AsyncWordWriter`, driven by `embassy-futures`' `block_on`) over a
/// simulated flash kept as a ring: its state, its futures' sizes and its stack high-water mark
/// for open + appends + flushes, the ring wrapping.
fn async_writer(scratch: &mut [u8], memory: &'static mut [u8], programmed: &'static mut [bool]) {
    type Flash = MockFlash<'static, 8, 4096>;
    let Ok(mut flash) = Flash::new(memory, programmed, 0xFF) else {
        return;
    };
    let config = FlashConfig::new(0, 2 * BLOCK_SIZE as u32).ring();
    hprintln!(
        "probe: size_of AsyncWordWriter {}",
        size_of::<AsyncWordWriter<&mut Flash>>()
    );
    let stack = high_water(&mut || {
        let run = async {
            let mut writer = AsyncWordWriter::open(&mut flash, config).await?;
            for n in 0..1_000u32 {
                let record = scratch
                    .get_mut(..probe::sample_len(n, false))
                    .unwrap_or_default();
                probe::sample(n, record);
                writer.add_record(record).await?;
                if n % 4 == 3 {
                    writer.flush().await?;
                }
            }
            writer.flush().await
        };
        let _ = black_box(embassy_futures::block_on(run));
    });
    hprintln!("probe: stack async_append {stack}");
    let mut sizes = (0, 0);
    let _ = embassy_futures::block_on(async {
        let mut writer = AsyncWordWriter::open(&mut flash, config).await?;
        let add = writer.add_record(b"x");
        sizes.0 = core::mem::size_of_val(&add);
        add.await?;
        let flush = writer.flush();
        sizes.1 = core::mem::size_of_val(&flush);
        flush.await
    });
    hprintln!("probe: size_of add_record_future {}", sizes.0);
    hprintln!("probe: size_of flush_future {}", sizes.1);
    async_reader(scratch, &mut flash, config);
}

/// The async reader (`AsyncWordReader`, driven by `block_on`) over the ring the async writer
/// left: its state, its `next` future's size and its stack high-water mark for reading the
/// whole ring.
fn async_reader(scratch: &mut [u8], flash: &mut MockFlash<'static, 8, 4096>, config: FlashConfig) {
    hprintln!(
        "probe: size_of AsyncWordReader {}",
        size_of::<AsyncWordReader<&mut MockFlash<'static, 8, 4096>>>()
    );
    let mut records = 0u32;
    let stack = high_water(&mut || {
        let run = async {
            let mut reader = AsyncWordReader::open(&mut *flash, config).await?;
            while let Some(item) = reader.next(scratch).await? {
                records += u32::from(matches!(item, logfmt_core::flash::FlashItem::Record { .. }));
            }
            Ok::<_, logfmt_core::flash::MockError>(())
        };
        let _ = black_box(embassy_futures::block_on(run));
    });
    hprintln!("probe: stack async_read {stack}");
    hprintln!("probe: async_read records={records}");
    let _ = embassy_futures::block_on(async {
        let mut reader = AsyncWordReader::open(&mut *flash, config).await?;
        let next = reader.next(scratch);
        hprintln!(
            "probe: size_of next_future {}",
            core::mem::size_of_val(&next)
        );
        next.await.map(|_| ())
    });
}
