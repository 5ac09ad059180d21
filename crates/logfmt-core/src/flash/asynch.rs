//! The small-RAM flash writer over an async `NorFlash` (`embedded-storage-async`): the same
//! engine and resume walk as [`WordWriter`](super::WordWriter), their async steps.

use embedded_storage_async::nor_flash::NorFlash;

use super::config::FlashConfig;
use super::engine::Engine;
use super::error::FlashError;
use super::reader::Walk;
use super::resume::{Geometry, Resumed};
use super::writer::FlashStats;
use crate::writer::Written;

/// The resume walk: where the engine appends.
async fn open<F: NorFlash>(
    flash: &mut F,
    config: FlashConfig,
) -> Result<Resumed, FlashError<F::Error>> {
    config.check(flash.capacity(), F::WRITE_SIZE, F::ERASE_SIZE, F::READ_SIZE)?;
    let geometry = Geometry {
        write_size: F::WRITE_SIZE as u32,
        erase_size: F::ERASE_SIZE as u32,
    };
    Walk::resume_async(flash, config, geometry)
        .await
        .map_err(FlashError::Flash)
}

/// [`WordWriter`](super::WordWriter) over an async flash driver (feature
/// `embedded-storage-async`): the same log, the same bytes on the flash, the same engine.
///
/// A future of this writer dropped before it completes is a power cut as far as the log is
/// concerned: the flash holds what a power cut at that point leaves (every flash operation
/// of the engine keeps the log safe to reopen), and the writer refuses further work
/// ([`FlashError::Poisoned`]); reopen to go on.
///
/// ```
/// # #[cfg(not(feature = "mock-flash"))] fn main() {}
/// # #[cfg(feature = "mock-flash")]
/// # fn main() -> Result<(), logfmt_core::flash::FlashError<logfmt_core::flash::MockError>> {
/// use logfmt_core::flash::{AsyncWordWriter, FlashConfig, MockFlash};
/// use logfmt_core::BLOCK_SIZE;
///
/// # embassy_futures::block_on(async {
/// let (mut memory, mut programmed) = ([0u8; BLOCK_SIZE], [false; BLOCK_SIZE / 8]);
/// let flash = MockFlash::<8, 4096>::new(&mut memory, &mut programmed, 0xFF).unwrap();
/// let mut writer = AsyncWordWriter::open(flash, FlashConfig::new(0, BLOCK_SIZE as u32)).await?;
/// writer.add_record(b"temperature=21.5").await?;
/// writer.flush().await?;
/// assert_eq!(writer.position(), 24);
/// # Ok(())
/// # })
/// # }
/// ```
#[derive(Debug)]
pub struct AsyncWordWriter<F> {
    flash: F,
    engine: Engine,
}

impl<F: NorFlash> AsyncWordWriter<F> {
    /// Opens the log in region `config` of `flash`, as [`WordWriter::open`](super::WordWriter::open).
    ///
    /// # Errors
    /// As [`WordWriter::open`](super::WordWriter::open).
    pub async fn open(mut flash: F, config: FlashConfig) -> Result<Self, FlashError<F::Error>> {
        let resumed = open(&mut flash, config).await?;
        Ok(Self {
            flash,
            engine: Engine::new(config, F::WRITE_SIZE, F::ERASE_SIZE, resumed, true),
        })
    }

    /// Appends one record, as [`WordWriter::add_record`](super::WordWriter::add_record).
    ///
    /// # Errors
    /// As [`WordWriter::add_record`](super::WordWriter::add_record); [`FlashError::Poisoned`]
    /// after a future of this writer was dropped before completing.
    pub async fn add_record(&mut self, data: &[u8]) -> Result<Written, FlashError<F::Error>> {
        self.add(data, false).await
    }

    /// Appends a [pack](crate::pack) of records, as [`WordWriter::add_pack`](super::WordWriter::add_pack).
    ///
    /// # Errors
    /// As [`add_record`](Self::add_record).
    pub async fn add_pack(&mut self, pack: &[u8]) -> Result<Written, FlashError<F::Error>> {
        self.add(pack, true).await
    }

    async fn add(&mut self, data: &[u8], pack: bool) -> Result<Written, FlashError<F::Error>> {
        let mut tries = 0;
        loop {
            match self.engine.add_async(&mut self.flash, data, pack).await {
                Ok(written) => {
                    self.engine.ended_word(written.end);
                    return Ok(written);
                }
                Err(e) => self.engine.recover(e, &mut tries)?,
            }
        }
    }

    /// Makes every record added so far durable, as [`WordWriter::flush`](super::WordWriter::flush).
    ///
    /// # Errors
    /// As [`add_record`](Self::add_record).
    pub async fn flush(&mut self) -> Result<(), FlashError<F::Error>> {
        let mut tries = 0;
        while let Err(e) = self.engine.flush_async(&mut self.flash).await {
            self.engine.recover(e, &mut tries)?;
        }
        self.engine.flushed()
    }

    /// Commits read cursor `cursor`, as [`WordWriter::commit`](super::WordWriter::commit).
    ///
    /// # Errors
    /// As [`WordWriter::commit`](super::WordWriter::commit).
    pub async fn commit(
        &mut self,
        cursor: crate::cursor::Cursor,
    ) -> Result<(), FlashError<F::Error>> {
        let mut tries = 0;
        while let Err(e) = self.engine.commit_async(&mut self.flash, cursor).await {
            self.engine.recover(e, &mut tries)?;
        }
        self.engine.flushed()
    }

    /// The flash, to read the log while the writer is open, as
    /// [`WordWriter::flash_mut`](super::WordWriter::flash_mut).
    pub fn flash_mut(&mut self) -> &mut F {
        &mut self.flash
    }

    /// Region offset where the next record will start: the log's length (after the resume
    /// marker, if a reopened log still has to write one).
    pub fn position(&self) -> u64 {
        self.engine.position()
    }

    /// Operations on the flash since [`open`](Self::open).
    pub fn stats(&self) -> FlashStats {
        self.engine.stats()
    }

    /// The region, with the word size it is written in filled in
    /// ([`FlashConfig::write_size`]): a reader opened with it skips a flush's padding unread.
    pub fn config(&self) -> FlashConfig {
        self.engine.config()
    }

    /// Gives back the flash; records not flushed may be partly programmed.
    pub fn into_inner(self) -> F {
        self.flash
    }
}
