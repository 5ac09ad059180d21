//! The pack a [`LogWriter`](crate::LogWriter) gathers records in: a growing buffer under a
//! [`PackLimit`], laid out with the core's pack functions (the layout lives there).

use logfmt_core::pack::{PackLimit, Take, take};
use logfmt_core::pack::{STORED_HEADER, length_prefix, stored_header};

/// A stored pack being filled.
#[derive(Debug, Clone)]
pub(crate) struct Pending {
    bytes: Vec<u8>,
    count: u32,
    /// Where the only record of a pack of one starts.
    first: usize,
    limit: PackLimit,
}

impl Pending {
    pub(crate) fn new(limit: PackLimit) -> Self {
        Self {
            bytes: stored_header(0).to_vec(),
            count: 0,
            first: STORED_HEADER,
            limit,
        }
    }

    /// What to do with a record of `len` bytes (see [`take`]).
    pub(crate) fn take(&self, len: usize) -> Take {
        take(self.bytes.len(), self.count, len, self.limit)
    }

    /// Adds a record ([`take`](Self::take) said it fits).
    pub(crate) fn push(&mut self, record: &[u8]) {
        let len = u32::try_from(record.len()).unwrap_or(u32::MAX);
        let (prefix, used) = length_prefix(len);
        self.bytes
            .extend_from_slice(prefix.get(..used).unwrap_or_default());
        if self.count == 0 {
            self.first = self.bytes.len();
        }
        self.bytes.extend_from_slice(record);
        self.count += 1;
        self.bytes[..STORED_HEADER].copy_from_slice(&stored_header(self.count));
    }

    /// Records gathered.
    pub(crate) fn count(&self) -> u32 {
        self.count
    }

    /// What to write: the pack, or its only record, plain (`true`).
    pub(crate) fn record(&self) -> (&[u8], bool) {
        if self.count == 1 {
            (self.bytes.get(self.first..).unwrap_or_default(), true)
        } else {
            (&self.bytes, false)
        }
    }

    /// Empties it (keeping its allocation).
    pub(crate) fn clear(&mut self) {
        self.bytes.truncate(STORED_HEADER);
        self.bytes.copy_from_slice(&stored_header(0));
        self.count = 0;
        self.first = STORED_HEADER;
    }
}
