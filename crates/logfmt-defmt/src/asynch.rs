//! The async drain (feature `embedded-storage-async`): the same steps as the blocking drain,
//! over [`AsyncWordWriter`], for a task of an Embassy-style executor.

use embedded_storage_async::nor_flash::NorFlash;
use logfmt_core::flash::{AsyncWordWriter, FlashError};

use crate::recorder::{DrainReport, Recorder, report_dropped};

impl<F: NorFlash, const P: usize> Recorder<AsyncWordWriter<F>, P> {
    /// [`drain`](Recorder::drain) over an async flash: the staged frames into the log, flushed
    /// as the policy says.
    ///
    /// # Errors
    /// The log's.
    pub async fn drain_async(&mut self) -> Result<DrainReport, FlashError<F::Error>> {
        let mut report = DrainReport::default();
        loop {
            report_dropped();
            let Some(len) = self.take_frame() else {
                break;
            };
            report.frames += 1;
            let (packed, end_first) = self.place(len);
            if end_first {
                self.end_pack_async().await?;
            }
            if !packed || !self.push_frame(len) {
                let (log, frame) = self.log_and_frame(len);
                log.add_record(frame).await?;
                self.count_plain();
            }
            if self.count_frame(len) {
                self.end_pack_async().await?;
                self.log().flush().await?;
                self.flushed();
                report.flushes += 1;
            }
        }
        Ok(report)
    }

    /// [`flush`](Recorder::flush) over an async flash: every frame staged before the call is
    /// durable when it returns.
    ///
    /// # Errors
    /// The log's.
    pub async fn flush_async(&mut self) -> Result<DrainReport, FlashError<F::Error>> {
        let mut report = self.drain_async().await?;
        self.end_pack_async().await?;
        self.log().flush().await?;
        self.flushed();
        report.flushes += 1;
        Ok(report)
    }

    async fn end_pack_async(&mut self) -> Result<(), FlashError<F::Error>> {
        match self.pack_to_write() {
            None => return Ok(()),
            Some((log, bytes, true)) => {
                log.add_pack(bytes).await?;
            }
            Some((log, bytes, false)) => {
                log.add_record(bytes).await?;
            }
        }
        self.pack_written();
        Ok(())
    }
}
