//! The RAM staging buffer: whole defmt frames, oldest first, in a ring of `N` bytes.
//!
//! Each frame is kept as its length (`u16`, little-endian) and its bytes. A frame is begun,
//! written in pieces and ended (the logger's `acquire`, `write`, `release`); it is staged only
//! if it fits whole, otherwise it is dropped and counted. Nothing here blocks or allocates.

/// Bytes of a staged frame's length prefix.
pub(crate) const PREFIX: usize = 2;

/// Counts of what the staging buffer took and refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StagingStats {
    /// Frames staged since start.
    pub staged: u32,
    /// Frames dropped since start because the buffer had no room for them (or they were longer
    /// than the largest frame), whether or not their count was logged yet.
    pub dropped: u32,
    /// Frames dropped whose count is not logged yet.
    pub unreported: u32,
    /// Bytes in use now (frames and their length prefixes).
    pub used: usize,
    /// The most bytes ever in use.
    pub high_water: usize,
}

/// A ring of `N` bytes holding whole frames of at most `M` bytes (and at most `N - 2`). All
/// zeros when empty, so that a `static` of it goes in `.bss` (RAM only, no flash image).
#[derive(Debug)]
pub(crate) struct Staging<const N: usize, const M: usize> {
    buf: [u8; N],
    /// Index of the oldest staged byte.
    read: usize,
    /// Bytes of staged frames (prefixes included).
    used: usize,
    /// Staged frames.
    frames: u32,
    /// The frame in progress: begun, its bytes so far, and whether it no longer fits.
    open: bool,
    frame_len: usize,
    overflow: bool,
    stats: StagingStats,
}

impl<const N: usize, const M: usize> Staging<N, M> {
    /// The largest frame taken: `M`, at most `N - 2` and `u16::MAX`.
    const MAX_FRAME: usize = {
        let room = N.saturating_sub(PREFIX);
        let max = if M < room { M } else { room };
        if max > u16::MAX as usize {
            u16::MAX as usize
        } else {
            max
        }
    };

    /// An empty buffer.
    pub(crate) const fn new() -> Self {
        Self {
            buf: [0; N],
            read: 0,
            used: 0,
            frames: 0,
            open: false,
            frame_len: 0,
            overflow: false,
            stats: StagingStats {
                staged: 0,
                dropped: 0,
                unreported: 0,
                used: 0,
                high_water: 0,
            },
        }
    }

    /// Begins a frame. A frame still open (a logger interrupted by a panic in the middle of
    /// one) is dropped and counted first.
    pub(crate) fn begin(&mut self) {
        if self.open {
            self.drop_open();
        }
        self.open = true;
        self.frame_len = 0;
        self.overflow = self.used + PREFIX > N;
    }

    /// Appends `bytes` to the open frame (nothing if none is open or it no longer fits).
    pub(crate) fn write(&mut self, bytes: &[u8]) {
        if !self.open || self.overflow {
            return;
        }
        let len = self.frame_len + bytes.len();
        if len > Self::MAX_FRAME || self.used + PREFIX + len > N {
            self.overflow = true;
            return;
        }
        let at = self.read + self.used + PREFIX + self.frame_len;
        self.put(at, bytes);
        self.frame_len = len;
    }

    /// Ends the open frame: staged whole, or dropped and counted. Whether it was staged.
    pub(crate) fn end(&mut self) -> bool {
        if !self.open {
            return false;
        }
        self.open = false;
        if self.overflow {
            self.count_dropped();
            return false;
        }
        let at = self.read + self.used;
        self.put(at, &(self.frame_len as u16).to_le_bytes());
        self.used += PREFIX + self.frame_len;
        self.frames += 1;
        self.stats.staged = self.stats.staged.wrapping_add(1);
        self.stats.high_water = self.stats.high_water.max(self.used);
        true
    }

    /// Drops the open frame (counted), if any.
    pub(crate) fn drop_open(&mut self) {
        if self.open {
            self.open = false;
            self.count_dropped();
        }
    }

    fn count_dropped(&mut self) {
        self.stats.dropped = self.stats.dropped.saturating_add(1);
        self.stats.unreported = self.stats.unreported.saturating_add(1);
    }

    /// Copies the oldest frame into `out` and unstages it: its length; `None` if no frame is
    /// staged. A frame longer than `out` is unstaged and counted as dropped (`Some(0)` is never
    /// returned for it: the next frame is tried).
    pub(crate) fn pop(&mut self, out: &mut [u8]) -> Option<usize> {
        loop {
            if self.frames == 0 {
                return None;
            }
            let mut prefix = [0u8; PREFIX];
            self.get(self.read, &mut prefix);
            let len = usize::from(u16::from_le_bytes(prefix));
            let fits = out.get_mut(..len).map(|dst| {
                let at = self.read + PREFIX;
                self.get(at, dst);
            });
            self.read = (self.read + PREFIX + len) % N.max(1);
            self.used -= PREFIX + len;
            self.frames -= 1;
            if self.frames == 0 {
                self.read = 0;
            }
            if fits.is_some() {
                return Some(len);
            }
            self.count_dropped();
        }
    }

    /// Bytes free for frames (a frame of `n` bytes takes `n + 2`).
    pub(crate) const fn free(&self) -> usize {
        N - self.used
    }

    /// Takes back the count of one dropped frame (the recorder's own report of dropped frames,
    /// which found no room after all).
    pub(crate) fn uncount_dropped(&mut self) {
        self.stats.dropped = self.stats.dropped.saturating_sub(1);
        self.stats.unreported = self.stats.unreported.saturating_sub(1);
    }

    /// Takes the count of dropped frames not logged yet (it is 0 after).
    pub(crate) fn take_unreported(&mut self) -> u32 {
        core::mem::take(&mut self.stats.unreported)
    }

    /// Gives back a count taken by [`take_unreported`](Self::take_unreported) that could not be
    /// logged.
    pub(crate) fn restore_unreported(&mut self, count: u32) {
        self.stats.unreported = self.stats.unreported.saturating_add(count);
    }

    /// The counts.
    pub(crate) fn stats(&self) -> StagingStats {
        StagingStats {
            used: self.used,
            ..self.stats
        }
    }

    /// Writes `bytes` at ring index `at` (wrapping). A byte loop: the pieces defmt writes
    /// are a few bytes each, shorter than a call to `memcpy` is worth (and with `N` a power of
    /// two, the wrap is a mask).
    fn put(&mut self, at: usize, bytes: &[u8]) {
        for (i, &byte) in bytes.iter().enumerate() {
            if let Some(slot) = self.buf.get_mut((at + i) % N) {
                *slot = byte;
            }
        }
    }

    /// Reads `out.len()` bytes at ring index `at` (wrapping).
    fn get(&self, at: usize, out: &mut [u8]) {
        for (i, slot) in out.iter_mut().enumerate() {
            *slot = self.buf.get((at + i) % N).copied().unwrap_or(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    fn frame(s: &mut Staging<64, 64>, pieces: &[&[u8]]) -> bool {
        s.begin();
        for p in pieces {
            s.write(p);
        }
        s.end()
    }

    fn pop_all(s: &mut Staging<64, 64>) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let mut buf = [0u8; 64];
        while let Some(n) = s.pop(&mut buf) {
            out.push(buf[..n].to_vec());
        }
        out
    }

    #[test]
    fn frames_come_back_whole_and_in_order() {
        let mut s = Staging::<64, 64>::new();
        assert!(frame(&mut s, &[b"ab", b"cd"]));
        assert!(frame(&mut s, &[b"e"]));
        assert!(frame(&mut s, &[]));
        assert_eq!(s.free(), 64 - (6 + 3 + 2));
        assert_eq!(
            pop_all(&mut s),
            [b"abcd".to_vec(), b"e".to_vec(), Vec::new()]
        );
        assert_eq!(s.free(), 64);
    }

    #[test]
    fn a_full_buffer_drops_whole_frames_and_counts_them() {
        let mut s = Staging::<64, 64>::new();
        for i in 0..20u8 {
            frame(&mut s, &[&[i; 5], &[i; 5]]); // 12 bytes a frame: 5 fit in 64
        }
        let stats = s.stats();
        assert_eq!((stats.staged, stats.dropped, stats.unreported), (5, 15, 15));
        let back = pop_all(&mut s);
        assert_eq!(back.len(), 5);
        for (i, f) in back.iter().enumerate() {
            assert_eq!(f, &[i as u8; 10].to_vec());
        }
        assert_eq!(s.take_unreported(), 15);
        assert_eq!(s.take_unreported(), 0);
        assert_eq!(s.stats().dropped, 15);
    }

    #[test]
    fn frames_wrap_around_the_ring() {
        let mut s = Staging::<64, 64>::new();
        let mut expected = Vec::new();
        let mut got = Vec::new();
        let mut buf = [0u8; 64];
        for i in 0..200u32 {
            let len = (i * 7 % 23) as usize;
            let data: Vec<u8> = (0..len).map(|j| (i as usize * 31 + j) as u8).collect();
            assert!(frame(&mut s, &[&data[..len / 2], &data[len / 2..]]));
            expected.push(data);
            if i % 2 == 1 {
                while let Some(n) = s.pop(&mut buf) {
                    got.push(buf[..n].to_vec());
                }
            }
        }
        assert_eq!(got, expected);
        assert_eq!(s.stats().dropped, 0);
    }

    #[test]
    fn a_frame_longer_than_the_largest_is_dropped() {
        let mut s = Staging::<64, 8>::new();
        for (len, staged) in [(9, false), (8, true)] {
            s.begin();
            s.write(&[len as u8; 5]);
            s.write(&std::vec![len as u8; len - 5]);
            assert_eq!(s.end(), staged);
        }
        assert_eq!(s.stats().dropped, 1);
        let mut out = [0u8; 64];
        assert_eq!(s.pop(&mut out), Some(8));
        assert_eq!(out[..8], [8; 8]);
    }

    #[test]
    fn a_frame_left_open_by_a_panic_is_dropped_not_mixed() {
        let mut s = Staging::<64, 64>::new();
        s.begin();
        s.write(b"half");
        // The panic path begins its own frame.
        assert!(frame(&mut s, &[b"panic"]));
        assert_eq!(s.stats().dropped, 1);
        assert_eq!(pop_all(&mut s), [b"panic".to_vec()]);
    }

    #[test]
    fn a_frame_too_large_for_the_readers_buffer_is_skipped() {
        let mut s = Staging::<64, 64>::new();
        frame(&mut s, &[&[1; 20]]);
        frame(&mut s, &[&[2; 4]]);
        let mut small = [0u8; 8];
        assert_eq!(s.pop(&mut small), Some(4));
        assert_eq!(s.stats().dropped, 1);
    }
}
