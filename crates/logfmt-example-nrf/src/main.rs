//! A sensor logger on an nRF52840 that keeps its samples in a logfmt ring log in the chip's
//! internal flash, through embassy-nrf's NVMC driver, and delivers them oldest first.
//!
//! Every [`SAMPLE_PERIOD`] it reads the die temperature (the `TEMP` peripheral, async) and
//! appends a [`Sample`] to the log with [`AsyncWordWriter`], flushed at once (durable when
//! `flush` returns). Every [`SAMPLES_PER_DELIVERY`] samples it reads the log back with
//! [`AsyncCursorReader`](logfmt_core::flash::AsyncCursorReader) from its read cursor on and
//! delivers the records not yet delivered, oldest first ([`deliver`]), as defmt lines (the
//! place an uplink would go), then releases them ([`release`]): the cursor committed in the
//! log, so a reboot neither repeats nor skips a sample.
//!
//! The firmware's own defmt log — those lines, its start and its errors — is kept in flash
//! too, by logfmt-defmt's flight recorder ([`flight`]): drained after every sample, written
//! out on a panic, read back on the host with `logfmt defmt --elf`.
//!
//! The log's region is the last 128 KiB of the flash ([`LOG_START`], [`LOG_LEN`]), the
//! flight recorder's the 128 KiB below it (`memory.x` keeps the program out of both): each a
//! ring of four 32 KiB blocks over 4 KiB pages, so the device logs for its whole life, the
//! oldest records ageing out. The NVMC driver is blocking; the samples' log runs over it
//! through embassy-embedded-hal's `BlockingAsync` adapter, each log on a `BlockingPartition`
//! of the flash, which they share through a mutex.

#![no_std]
#![no_main]

mod delivery;
mod flight;
mod sample;

use core::cell::RefCell;

use embassy_embedded_hal::adapter::BlockingAsync;
use embassy_executor::Spawner;
use embassy_nrf::bind_interrupts;
use embassy_nrf::nvmc::Nvmc;
use embassy_nrf::temp::{self, Temp};
use embassy_sync::blocking_mutex::Mutex;
use embassy_time::{Duration, Instant, Timer};
use logfmt_core::flash::{AsyncWordWriter, FlashConfig, FlashError};
use static_cell::StaticCell;

use crate::delivery::{deliver, release};
use crate::flight::{Region, RegionError, SharedFlash};
use crate::sample::Sample;

defmt::timestamp!("{=u64:us}", Instant::now().as_micros());

/// Where the log's region starts in the flash: the last 128 KiB of the nRF52840's 1 MiB.
pub(crate) const LOG_START: u32 = 0x000E_0000;
/// The region's length: four 32 KiB blocks, 32 pages of 4 KiB.
pub(crate) const LOG_LEN: u32 = 128 * 1024;
/// The log, as offsets in its [`Partition`] (offset 0 is [`LOG_START`]): a ring.
pub(crate) const CONFIG: FlashConfig = FlashConfig::new(0, LOG_LEN).ring();

/// How often a sample is taken.
pub(crate) const SAMPLE_PERIOD: Duration = Duration::from_secs(1);
/// Samples logged between two deliveries.
pub(crate) const SAMPLES_PER_DELIVERY: u32 = 60;

/// The chip's flash, shared by the samples' log and the flight recorder.
static FLASH: StaticCell<SharedFlash> = StaticCell::new();
/// The samples' log's flash: its region, async through `BlockingAsync`.
type LogFlash = BlockingAsync<Region>;

bind_interrupts!(struct Irqs {
    TEMP => temp::InterruptHandler;
});

#[embassy_executor::main]
async fn main(_spawner: Spawner) {
    let p = embassy_nrf::init(Default::default());
    let flash: &'static SharedFlash = FLASH.init(Mutex::new(RefCell::new(Nvmc::new(p.NVMC))));
    let region = Region::new(flash, LOG_START, LOG_LEN);
    let mut sensor = Temp::new(p.TEMP, Irqs);
    let mut number = 0u32;
    loop {
        if !flight::is_open()
            && let Err(e) = flight::start(flash)
        {
            defmt::error!("flight recorder: {}; retrying", e);
        }
        match run(&region, &mut sensor, &mut number).await {
            Ok(never) => match never {},
            // The writer gave up after failed programs or erases: reopen it.
            Err(e) => defmt::error!("flash log: {}; reopening", e),
        }
        flight::drain();
        Timer::after(SAMPLE_PERIOD).await;
    }
}

/// Opens the log and logs and delivers samples until a flash operation fails; the flight
/// recorder drained after every sample.
async fn run(
    region: &Region,
    sensor: &mut Temp<'_>,
    number: &mut u32,
) -> Result<core::convert::Infallible, FlashError<RegionError>> {
    let mut writer = AsyncWordWriter::open(LogFlash::new(region.clone()), CONFIG).await?;
    defmt::info!(
        "flash log open: next record at region offset {}",
        writer.position()
    );
    loop {
        for _ in 0..SAMPLES_PER_DELIVERY {
            let sample = Sample {
                uptime_ms: Instant::now().as_millis() as u32,
                number: *number,
                quarter_celsius: sensor.read().await.to_bits(),
            };
            writer.add_record(&sample.encode()).await?;
            writer.flush().await?;
            *number = number.wrapping_add(1);
            flight::drain();
            Timer::after(SAMPLE_PERIOD).await;
        }
        let mut buffer = [0u8; 64];
        let (report, cursor) = deliver(LogFlash::new(region.clone()), CONFIG, &mut buffer)
            .await
            .map_err(FlashError::Flash)?;
        release(&mut writer, cursor).await?;
        defmt::info!("{}", report);
    }
}
