//! A frame's level, from its string index: defmt's linker script (`defmt.x`) places the
//! interned strings of each level together, between markers.

/// A defmt log level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// `trace!`
    Trace,
    /// `debug!`
    Debug,
    /// `info!`
    Info,
    /// `warn!`
    Warn,
    /// `error!`
    Error,
}

/// Where each level's string indices are: `[start, end)` per level, trace to error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Levels {
    ranges: [(u16, u16); 5],
}

impl Levels {
    /// No index has a level (frames are never flushed for their level): the host's, where no
    /// `defmt.x` placed the strings.
    pub const NONE: Self = Self {
        ranges: [(0, 0); 5],
    };

    /// The ranges given by hand, trace to error (tests, or a table read elsewhere).
    ///
    /// ```
    /// use logfmt_defmt::{Level, Levels};
    ///
    /// let levels = Levels::from_ranges([(1, 3), (3, 5), (5, 9), (9, 10), (10, 12)]);
    /// assert_eq!(levels.of_frame(&[9, 0, 0xAA]), Some(Level::Warn));
    /// assert_eq!(levels.of_frame(&[12, 0]), None);
    /// ```
    pub const fn from_ranges(ranges: [(u16, u16); 5]) -> Self {
        Self { ranges }
    }

    /// The ranges of this firmware, from the markers of `defmt.x` (on bare-metal targets; on
    /// others, [`NONE`](Self::NONE)).
    pub fn of_firmware() -> Self {
        markers::levels()
    }

    /// The level of a frame (its first two bytes are its string index, little-endian).
    pub fn of_frame(&self, frame: &[u8]) -> Option<Level> {
        let index = u16::from_le_bytes([*frame.first()?, *frame.get(1)?]);
        const LEVELS: [Level; 5] = [
            Level::Trace,
            Level::Debug,
            Level::Info,
            Level::Warn,
            Level::Error,
        ];
        self.ranges
            .iter()
            .zip(LEVELS)
            .find(|((start, end), _)| (*start..*end).contains(&index))
            .map(|(_, level)| level)
    }
}

#[cfg(target_os = "none")]
mod markers {
    use super::Levels;

    // The markers are linker symbols, never read: only their addresses are taken (no unsafe
    // operation happens; the declaration itself needs the `unsafe` keyword).
    #[allow(unsafe_code)]
    unsafe extern "C" {
        static __DEFMT_MARKER_TRACE_START: u8;
        static __DEFMT_MARKER_TRACE_END: u8;
        static __DEFMT_MARKER_DEBUG_START: u8;
        static __DEFMT_MARKER_DEBUG_END: u8;
        static __DEFMT_MARKER_INFO_START: u8;
        static __DEFMT_MARKER_INFO_END: u8;
        static __DEFMT_MARKER_WARN_START: u8;
        static __DEFMT_MARKER_WARN_END: u8;
        static __DEFMT_MARKER_ERROR_START: u8;
        static __DEFMT_MARKER_ERROR_END: u8;
    }

    /// The markers' values: linker symbols whose "address" is a string index.
    pub(super) fn levels() -> Levels {
        let at = |p: *const u8| p as usize as u16;
        Levels::from_ranges([
            (
                at(&raw const __DEFMT_MARKER_TRACE_START),
                at(&raw const __DEFMT_MARKER_TRACE_END),
            ),
            (
                at(&raw const __DEFMT_MARKER_DEBUG_START),
                at(&raw const __DEFMT_MARKER_DEBUG_END),
            ),
            (
                at(&raw const __DEFMT_MARKER_INFO_START),
                at(&raw const __DEFMT_MARKER_INFO_END),
            ),
            (
                at(&raw const __DEFMT_MARKER_WARN_START),
                at(&raw const __DEFMT_MARKER_WARN_END),
            ),
            (
                at(&raw const __DEFMT_MARKER_ERROR_START),
                at(&raw const __DEFMT_MARKER_ERROR_END),
            ),
        ])
    }
}

#[cfg(not(target_os = "none"))]
mod markers {
    use super::Levels;

    pub(super) fn levels() -> Levels {
        Levels::NONE
    }
}
