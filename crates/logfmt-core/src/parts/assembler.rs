//! Putting fragmented records together: one assembler for every reader, over a [`Room`] the
//! caller provides — a fixed slice here, a growing buffer with a limit on hosts.

use crate::format::FragmentKind;

/// Where an [`Assembler`] keeps the record in progress.
pub trait Room {
    /// Empties the room.
    fn clear(&mut self);

    /// Appends `data`, or returns `false` (keeping what it holds) if there is no room for it.
    fn push(&mut self, data: &[u8]) -> bool;

    /// What the room holds.
    fn filled(&self) -> &[u8];
}

/// A [`Room`] in a caller's buffer: a record fits if the buffer can hold it.
#[derive(Debug)]
pub struct SliceRoom<'b> {
    buffer: &'b mut [u8],
    filled: usize,
}

impl<'b> SliceRoom<'b> {
    /// An empty room over `buffer`.
    pub fn new(buffer: &'b mut [u8]) -> Self {
        Self { buffer, filled: 0 }
    }
}

impl Room for SliceRoom<'_> {
    fn clear(&mut self) {
        self.filled = 0;
    }

    fn push(&mut self, data: &[u8]) -> bool {
        let Some(dst) = self
            .buffer
            .get_mut(self.filled..)
            .and_then(|rest| rest.get_mut(..data.len()))
        else {
            return false;
        };
        dst.copy_from_slice(data);
        self.filled += data.len();
        true
    }

    fn filled(&self) -> &[u8] {
        self.buffer.get(..self.filled).unwrap_or_default()
    }
}

impl SliceRoom<'_> {
    /// The `len` bytes from `at` on, past what the room holds (or from its start), for a
    /// fragment to be placed before it is pushed ([`Assembler::push_placed`]); `None` if the
    /// buffer is too short.
    pub(crate) fn spare(&mut self, at: usize, len: usize) -> Option<&mut [u8]> {
        if at != 0 && at != self.filled {
            return None;
        }
        self.buffer.get_mut(at..)?.get_mut(..len)
    }

    /// Appends `data`, which is already in place from `at` on if `at` is where it goes;
    /// else copies it, as [`Room::push`] does.
    fn push_placed(&mut self, at: usize, data: &[u8]) -> bool {
        if at == self.filled && self.buffer.len() - self.filled >= data.len() {
            self.filled += data.len();
            true
        } else {
            self.push(data)
        }
    }
}

/// What one fragment made of the record in progress ([`Assembler::push`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Assembly {
    /// A `FULL` fragment: it is the whole record, nothing was copied.
    Whole,
    /// More fragments follow.
    Pending,
    /// The record is complete: [`Assembler::record`] holds it.
    Complete,
    /// The record is complete but did not fit the room: only its length was counted.
    Overflowed {
        /// The record's length.
        len: u64,
    },
}

/// Assembles fragmented records in a [`Room`]: push each fragment a reader delivers, and
/// [`abort`](Self::abort) when the reader abandons the record in progress.
///
/// ```
/// use logfmt_core::parts::FragmentKind;
/// use logfmt_core::parts::assembler::{Assembler, Assembly, SliceRoom};
///
/// let mut buffer = [0u8; 8];
/// let mut assembler = Assembler::new(SliceRoom::new(&mut buffer));
/// assert_eq!(assembler.push(FragmentKind::First, b"hel"), Assembly::Pending);
/// assert_eq!(assembler.push(FragmentKind::Last, b"lo"), Assembly::Complete);
/// assert_eq!(assembler.record(), b"hello");
/// assert_eq!(assembler.push(FragmentKind::First, b"too long "), Assembly::Pending);
/// assert_eq!(assembler.push(FragmentKind::Last, b"for 8"), Assembly::Overflowed { len: 14 });
/// ```
#[derive(Debug)]
pub struct Assembler<R> {
    room: R,
    /// Payload bytes of the record in progress, kept or not.
    len: u64,
    /// The record in progress did not fit: counted, not kept.
    overflowed: bool,
}

impl<R: Room> Assembler<R> {
    /// An assembler over `room`.
    pub fn new(room: R) -> Self {
        Self {
            room,
            len: 0,
            overflowed: false,
        }
    }

    /// Takes the next fragment of the log. A `FIRST` fragment starts a record (whatever was in
    /// progress is dropped: the reader has said so with an abort); `MIDDLE` and `LAST` add to
    /// it.
    pub fn push(&mut self, kind: FragmentKind, data: &[u8]) -> Assembly {
        self.push_with(kind, data.len(), |room| room.push(data))
    }

    /// [`push`](Self::push), with `keep` putting the fragment's `len` bytes in the room.
    #[inline(always)]
    fn push_with(
        &mut self,
        kind: FragmentKind,
        len: usize,
        keep: impl FnOnce(&mut R) -> bool,
    ) -> Assembly {
        match kind {
            FragmentKind::Full => return Assembly::Whole,
            FragmentKind::First => self.abort(),
            FragmentKind::Middle | FragmentKind::Last => {}
        }
        self.len = self.len.saturating_add(len as u64);
        if !self.overflowed && !keep(&mut self.room) {
            self.overflowed = true;
            self.room.clear();
        }
        match (kind, self.overflowed) {
            (FragmentKind::Last, false) => Assembly::Complete,
            (FragmentKind::Last, true) => {
                let len = self.len;
                self.len = 0;
                self.overflowed = false;
                Assembly::Overflowed { len }
            }
            _ => Assembly::Pending,
        }
    }

    /// Drops the record in progress.
    pub fn abort(&mut self) {
        self.room.clear();
        self.len = 0;
        self.overflowed = false;
    }

    /// The record completed by the last [`push`](Self::push) that returned
    /// [`Assembly::Complete`] (until the next push).
    pub fn record(&self) -> &[u8] {
        self.room.filled()
    }

    /// Payload bytes pushed for the record in progress.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether no byte has been pushed for a record in progress.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The room.
    pub fn room(&self) -> &R {
        &self.room
    }

    /// The room, mutably (e.g. to change a growing room's limit between records).
    pub fn room_mut(&mut self) -> &mut R {
        &mut self.room
    }
}

impl Assembler<SliceRoom<'_>> {
    /// [`push`](Self::push) of a fragment whose bytes were copied into the room from `at` on
    /// beforehand ([`SliceRoom::spare`]): kept without copying them again if `at` is where
    /// they go, copied from `data` otherwise.
    pub(crate) fn push_placed(&mut self, kind: FragmentKind, data: &[u8], at: usize) -> Assembly {
        self.push_with(kind, data.len(), |room| room.push_placed(at, data))
    }
}
