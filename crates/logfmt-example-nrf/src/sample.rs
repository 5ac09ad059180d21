//! The record this logger writes: one temperature sample, 12 bytes.

/// A temperature sample, as a record: `uptime_ms`, `number` and `quarter_celsius`, each 4
/// bytes little-endian.
#[derive(Debug, Clone, Copy, PartialEq, Eq, defmt::Format)]
pub(crate) struct Sample {
    /// Milliseconds since boot when it was taken (wrapping after 49.7 days).
    pub(crate) uptime_ms: u32,
    /// Samples taken before it since boot.
    pub(crate) number: u32,
    /// The die temperature in units of 0.25 °C.
    pub(crate) quarter_celsius: i32,
}

/// Bytes of a [`Sample`] record.
pub(crate) const SAMPLE_BYTES: usize = 12;

impl Sample {
    /// The record's bytes.
    pub(crate) fn encode(&self) -> [u8; SAMPLE_BYTES] {
        let mut record = [0u8; SAMPLE_BYTES];
        record[..4].copy_from_slice(&self.uptime_ms.to_le_bytes());
        record[4..8].copy_from_slice(&self.number.to_le_bytes());
        record[8..].copy_from_slice(&self.quarter_celsius.to_le_bytes());
        record
    }

    /// The sample a record holds; `None` if it is not [`SAMPLE_BYTES`] long.
    pub(crate) fn decode(record: &[u8]) -> Option<Self> {
        let record: &[u8; SAMPLE_BYTES] = record.try_into().ok()?;
        let word = |at: usize| [record[at], record[at + 1], record[at + 2], record[at + 3]];
        Some(Self {
            uptime_ms: u32::from_le_bytes(word(0)),
            number: u32::from_le_bytes(word(4)),
            quarter_celsius: i32::from_le_bytes(word(8)),
        })
    }
}
