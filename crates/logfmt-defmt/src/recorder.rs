//! The drain: staged frames into the flash log, packed, flushed on the user's policy; the
//! panic and fault paths.

use logfmt_core::flash::{FlashError, FlashWriter, WordWriter};
use logfmt_core::pack::{PackBuffer, PackLimit, Take};

use crate::level::{Level, Levels};
use crate::logger::{MAX_FRAME, with_staging};

/// A flash log the recorder writes frames to: logfmt's [`WordWriter`] and [`FlashWriter`].
pub trait FrameLog {
    /// The log's error.
    type Error;
    /// Appends one frame as a record.
    ///
    /// # Errors
    /// The log's.
    fn add_record(&mut self, frame: &[u8]) -> Result<(), Self::Error>;
    /// Appends a pack of frames (a [`PackBuffer`]'s bytes).
    ///
    /// # Errors
    /// The log's.
    fn add_pack(&mut self, pack: &[u8]) -> Result<(), Self::Error>;
    /// Makes everything appended durable.
    ///
    /// # Errors
    /// The log's.
    fn flush(&mut self) -> Result<(), Self::Error>;
}

impl<F: embedded_storage::nor_flash::NorFlash> FrameLog for WordWriter<F> {
    type Error = FlashError<F::Error>;
    fn add_record(&mut self, frame: &[u8]) -> Result<(), Self::Error> {
        WordWriter::add_record(self, frame).map(|_| ())
    }
    fn add_pack(&mut self, pack: &[u8]) -> Result<(), Self::Error> {
        WordWriter::add_pack(self, pack).map(|_| ())
    }
    fn flush(&mut self) -> Result<(), Self::Error> {
        WordWriter::flush(self)
    }
}

impl<F, B> FrameLog for FlashWriter<F, B>
where
    F: embedded_storage::nor_flash::NorFlash,
    B: core::borrow::BorrowMut<[u8; logfmt_core::BLOCK_SIZE]>,
{
    type Error = FlashError<F::Error>;
    fn add_record(&mut self, frame: &[u8]) -> Result<(), Self::Error> {
        FlashWriter::add_record(self, frame).map(|_| ())
    }
    fn add_pack(&mut self, pack: &[u8]) -> Result<(), Self::Error> {
        FlashWriter::add_pack(self, pack).map(|_| ())
    }
    fn flush(&mut self) -> Result<(), Self::Error> {
        FlashWriter::flush(self)
    }
}

impl<T: FrameLog + ?Sized> FrameLog for &mut T {
    type Error = T::Error;
    fn add_record(&mut self, frame: &[u8]) -> Result<(), Self::Error> {
        (**self).add_record(frame)
    }
    fn add_pack(&mut self, pack: &[u8]) -> Result<(), Self::Error> {
        (**self).add_pack(pack)
    }
    fn flush(&mut self) -> Result<(), Self::Error> {
        (**self).flush()
    }
}

/// When the drain flushes the flash log (every flush makes the frames before it durable,
/// and costs up to one flash word of padding). Each condition set is enough;
/// [`Recorder::flush`] flushes on demand.
///
/// ```
/// use logfmt_defmt::{FlushPolicy, Level};
///
/// let policy = FlushPolicy::new().every_frames(32).every_bytes(1024).at_level(Level::Warn);
/// assert_eq!(policy.frames, Some(32));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlushPolicy {
    /// Flush once this many frames were written since the last flush.
    pub frames: Option<u32>,
    /// Flush once this many bytes of frames were written since the last flush.
    pub bytes: Option<u32>,
    /// Flush after a frame of this level or above (`warn!` and `error!` with
    /// `Level::Warn`).
    pub level: Option<Level>,
}

impl FlushPolicy {
    /// No automatic flush: only [`Recorder::flush`] (and a panic or fault) flushes.
    pub const fn new() -> Self {
        Self {
            frames: None,
            bytes: None,
            level: None,
        }
    }
    /// Sets [`frames`](Self::frames).
    #[must_use]
    pub const fn every_frames(mut self, frames: u32) -> Self {
        self.frames = Some(frames);
        self
    }
    /// Sets [`bytes`](Self::bytes).
    #[must_use]
    pub const fn every_bytes(mut self, bytes: u32) -> Self {
        self.bytes = Some(bytes);
        self
    }
    /// Sets [`level`](Self::level).
    #[must_use]
    pub const fn at_level(mut self, level: Level) -> Self {
        self.level = Some(level);
        self
    }
}

impl Default for FlushPolicy {
    /// Every 64 frames, every 2 KiB, and after every `warn!` or `error!`.
    fn default() -> Self {
        Self::new()
            .every_frames(64)
            .every_bytes(2048)
            .at_level(Level::Warn)
    }
}

/// What a drain did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DrainReport {
    /// Frames taken from the staging buffer (and given to the log, packed or plain).
    pub frames: u32,
    /// Flushes made: after the last one every frame before it is durable.
    pub flushes: u32,
}

/// Counts since the recorder was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RecorderStats {
    /// Frames given to the log.
    pub frames: u32,
    /// Of them, durable (a flush followed them).
    pub durable: u32,
    /// Packs written.
    pub packs: u32,
    /// Frames written as a record of their own.
    pub plain: u32,
    /// Flushes.
    pub flushes: u32,
}

/// Moves the staged frames into a flash log `L`, in packs of up to `P` bytes.
///
/// RAM: the pack (`P` bytes), one frame ([`MAX_FRAME`]) and a few counters, besides `L`.
#[derive(Debug)]
pub struct Recorder<L, const P: usize = 512> {
    log: L,
    pack: PackBuffer<P>,
    limit: PackLimit,
    policy: FlushPolicy,
    levels: Levels,
    frame: [u8; MAX_FRAME],
    since_flush: (u32, u32),
    /// Frames given to the log since the last flush (they become durable with it).
    pending: u32,
    stats: RecorderStats,
}

impl<L, const P: usize> Recorder<L, P> {
    /// A recorder writing to `log`, flushing on `policy`.
    pub fn new(log: L, policy: FlushPolicy) -> Self {
        Self {
            log,
            pack: PackBuffer::new(),
            limit: PackLimit::bytes(P),
            policy,
            levels: Levels::of_firmware(),
            frame: [0; MAX_FRAME],
            since_flush: (0, 0),
            pending: 0,
            stats: RecorderStats::default(),
        }
    }

    /// Tells the recorder where each level's string indices are (on a bare-metal target it
    /// reads them from defmt's linker markers itself).
    #[must_use]
    pub fn with_levels(mut self, levels: Levels) -> Self {
        self.levels = levels;
        self
    }

    /// The log.
    pub fn log(&mut self) -> &mut L {
        &mut self.log
    }

    /// Counts since the recorder was made.
    pub fn stats(&self) -> RecorderStats {
        self.stats
    }

    /// Gives back the log (frames in the pack in progress are not written: flush first).
    pub fn into_inner(self) -> L {
        self.log
    }

    /// Takes the oldest staged frame into `frame`: its length.
    pub(crate) fn take_frame(&mut self) -> Option<usize> {
        let frame = &mut self.frame;
        with_staging(|s| s.pop(frame))
    }

    /// Adds frame `frame[..len]` to the pack; whether it fit.
    pub(crate) fn push_frame(&mut self, len: usize) -> bool {
        let frame = self.frame.get(..len).unwrap_or_default();
        self.pack.push(frame).is_ok()
    }

    /// The log and frame `frame[..len]`, to write it plain.
    pub(crate) fn log_and_frame(&mut self, len: usize) -> (&mut L, &[u8]) {
        (&mut self.log, self.frame.get(..len).unwrap_or_default())
    }

    pub(crate) fn count_plain(&mut self) {
        self.stats.plain += 1;
    }

    /// The pack in progress to write, if any: the log, its bytes, and whether it is a pack
    /// (a pack of one frame is written as a plain record).
    pub(crate) fn pack_to_write(&mut self) -> Option<(&mut L, &[u8], bool)> {
        match (self.pack.count(), self.pack.single()) {
            (0, _) => None,
            (1, Some(frame)) => Some((&mut self.log, frame, false)),
            _ => Some((&mut self.log, self.pack.as_bytes(), true)),
        }
    }

    /// The pack returned by [`pack_to_write`](Self::pack_to_write) was written.
    pub(crate) fn pack_written(&mut self) {
        match self.pack.count() {
            0 => return,
            1 => self.stats.plain += 1,
            _ => self.stats.packs += 1,
        }
        self.pack.clear();
    }

    /// Counts frame `frame[..len]` given to the log; whether the policy wants a flush now.
    pub(crate) fn count_frame(&mut self, len: usize) -> bool {
        self.stats.frames += 1;
        self.pending += 1;
        self.since_flush.0 += 1;
        self.since_flush.1 = self.since_flush.1.saturating_add(len as u32);
        let level = self
            .levels
            .of_frame(self.frame.get(..len).unwrap_or_default());
        let (frames, bytes) = self.since_flush;
        self.policy.frames.is_some_and(|n| frames >= n)
            || self.policy.bytes.is_some_and(|n| bytes >= n)
            || self
                .policy
                .level
                .is_some_and(|at| level.is_some_and(|l| l >= at))
    }

    pub(crate) fn flushed(&mut self) {
        self.stats.flushes += 1;
        self.stats.durable += self.pending;
        self.pending = 0;
        self.since_flush = (0, 0);
    }

    /// Where frame `frame[..len]` goes: into the pack (`true`), or plain after the pack
    /// in progress is written (`false`); and whether the pack must be written first.
    pub(crate) fn place(&self, len: usize) -> (bool, bool) {
        match self.pack.take(len, self.limit) {
            Take::Add => (true, false),
            Take::EndFirst => (true, true),
            // `Take::Plain`, and any decision a later logfmt-core adds: plain, after the pack.
            _ => (false, true),
        }
    }
}

impl<L: FrameLog, const P: usize> Recorder<L, P> {
    /// Moves every staged frame into the log (blocking: from the main loop), flushing as the
    /// policy says. Frames logged meanwhile (by interrupts) are taken too. The count of frames
    /// dropped for want of room is logged (a `warn!` frame) as soon as there is room.
    ///
    /// # Errors
    /// The log's; the frame being written then is lost (the others stay staged).
    pub fn drain(&mut self) -> Result<DrainReport, L::Error> {
        let mut report = DrainReport::default();
        loop {
            report_dropped();
            let Some(len) = self.take_frame() else {
                break;
            };
            report.frames += 1;
            if self.write_frame(len)? {
                report.flushes += 1;
            }
        }
        Ok(report)
    }

    /// Drains, then flushes: every frame staged before the call is durable when it returns.
    ///
    /// # Errors
    /// The log's.
    pub fn flush(&mut self) -> Result<DrainReport, L::Error> {
        let mut report = self.drain()?;
        self.end_pack()?;
        self.log.flush()?;
        self.flushed();
        report.flushes += 1;
        Ok(report)
    }

    /// The panic path, for a `#[panic_handler]`: logs the panic's location and message (an
    /// `error!` frame, the message cut to fit a frame), then writes every staged frame and
    /// flushes, synchronously, in a critical section (interrupts masked: the message is the
    /// last frame). A frame the panic interrupted is dropped (and counted).
    ///
    /// # Errors
    /// The log's.
    pub fn panic(&mut self, info: &core::panic::PanicInfo<'_>) -> Result<(), L::Error> {
        self.panic_with(info.location(), format_args!("{}", info.message()))
    }

    /// [`panic`](Self::panic) with the location and message given apart (a panic handler
    /// that has its own, or a test).
    ///
    /// # Errors
    /// The log's.
    pub fn panic_with(
        &mut self,
        location: Option<&core::panic::Location<'_>>,
        message: core::fmt::Arguments<'_>,
    ) -> Result<(), L::Error> {
        // Interrupts stay masked to the end: nothing is logged after the panic's message.
        critical_section::with(|_| {
            with_staging(|s| s.drop_open());
            // Make room for the message first.
            self.drain()?;
            let mut text = crate::text::Text::<{ MAX_FRAME / 2 }>::new();
            let _ = core::fmt::write(&mut text, message);
            match location {
                Some(at) => defmt::error!(
                    "panicked at {=str}:{=u32}: {=str}",
                    at.file(),
                    at.line(),
                    text.as_str()
                ),
                None => defmt::error!("panicked: {=str}", text.as_str()),
            }
            self.flush().map(|_| ())
        })
    }

    /// The fault path, for a `HardFault` handler the user installs: logs `HardFault at pc=…`
    /// (an `error!` frame; `pc` from the exception frame), then writes every staged frame and
    /// flushes, synchronously, in a critical section.
    ///
    /// # Errors
    /// The log's.
    pub fn fault(&mut self, pc: u32) -> Result<(), L::Error> {
        critical_section::with(|_| {
            with_staging(|s| s.drop_open());
            self.drain()?;
            defmt::error!("HardFault at pc={=u32:#010x}", pc);
            self.flush().map(|_| ())
        })
    }

    /// Gives frame `frame[..len]` to the log (packed) and flushes if the policy says so;
    /// whether it flushed.
    fn write_frame(&mut self, len: usize) -> Result<bool, L::Error> {
        let (packed, end_first) = self.place(len);
        if end_first {
            self.end_pack()?;
        }
        if !packed || !self.push_frame(len) {
            let (log, frame) = self.log_and_frame(len);
            log.add_record(frame)?;
            self.count_plain();
        }
        if self.count_frame(len) {
            self.end_pack()?;
            self.log.flush()?;
            self.flushed();
            return Ok(true);
        }
        Ok(false)
    }

    fn end_pack(&mut self) -> Result<(), L::Error> {
        match self.pack_to_write() {
            None => return Ok(()),
            Some((log, bytes, true)) => log.add_pack(bytes)?,
            Some((log, bytes, false)) => log.add_record(bytes)?,
        }
        self.pack_written();
        Ok(())
    }
}

/// Logs the count of dropped frames not logged yet, if there is room for the report now; the
/// count is kept for later otherwise.
pub(crate) fn report_dropped() {
    // Room for the report's frame: index, timestamp (up to 8 bytes), a u32, with a margin.
    const REPORT: usize = 32;
    // One critical section: no interrupt can take the room between the check and the frame.
    critical_section::with(|_| {
        let count = with_staging(|s| {
            if s.free() >= REPORT {
                s.take_unreported()
            } else {
                0
            }
        });
        if count == 0 {
            return;
        }
        let before = with_staging(|s| s.stats().dropped);
        defmt::error!(
            "logfmt-defmt: {=u32} frames dropped (staging buffer full)",
            count
        );
        with_staging(|s| {
            if s.stats().dropped != before {
                // Not staged after all (a timestamp larger than planned): the report is not a
                // frame of the user's; keep the count for the next try.
                s.uncount_dropped();
                s.restore_unreported(count);
            }
        });
    });
}
