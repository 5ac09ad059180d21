//! Reader options.

/// How a reader interprets its input. The defaults are LevelDB's: checksums verified, reading
/// from the start.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct ReadOptions {
    /// Verify each chunk's checksum (LevelDB's `checksum` argument). Default `true`.
    pub verify_checksums: bool,
    /// Start at the first record whose first chunk begins at or after this offset (LevelDB's
    /// `initial_offset`): reading starts at the block holding it, skips chunks that begin before
    /// it, then skips `MIDDLE` and `LAST` chunks until a record starts. Drops before this offset
    /// are not reported. Default 0.
    pub initial_offset: u64,
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self { verify_checksums: true, initial_offset: 0 }
    }
}

impl ReadOptions {
    /// The defaults: checksums on, initial offset 0.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets [`verify_checksums`](Self::verify_checksums).
    #[must_use]
    pub fn verify_checksums(mut self, verify: bool) -> Self {
        self.verify_checksums = verify;
        self
    }

    /// Sets [`initial_offset`](Self::initial_offset).
    #[must_use]
    pub fn initial_offset(mut self, offset: u64) -> Self {
        self.initial_offset = offset;
        self
    }
}
