//! The zstd encoder of the `zstd-c` feature: zstd's C library (through `zstd-sys`), at the
//! level asked for.

/// zstd's compressor, made on first use and used again for every record and pack: making one
/// allocates its tables, which costs far more than coding a record of 100 bytes
/// (`logfmt-bench wal-size`, a million write batches written and read back four ways, two of
/// them compressed: 44 s with a context a record, 8.3 s with one kept).
#[derive(Default)]
pub(crate) struct Encoder {
    /// The compressor, with the level and the content-checksum flag it was made with.
    compressor: Option<(i32, bool, zstd::bulk::Compressor<'static>)>,
}

impl std::fmt::Debug for Encoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Encoder")
            .field(
                "compressor",
                &self.compressor.as_ref().map(|(l, c, _)| (l, c)),
            )
            .finish()
    }
}

impl Encoder {
    /// `data` as one zstd frame at `level` (1 to 22), with a content checksum if `checksum`.
    pub(crate) fn frame(
        &mut self,
        data: &[u8],
        level: i32,
        checksum: bool,
    ) -> std::io::Result<Vec<u8>> {
        let reusable = matches!(&self.compressor, Some((l, c, _)) if *l == level && *c == checksum);
        if !reusable {
            let mut compressor = zstd::bulk::Compressor::new(level)?;
            compressor.include_checksum(checksum)?;
            self.compressor = Some((level, checksum, compressor));
        }
        match &mut self.compressor {
            Some((_, _, compressor)) => compressor.compress(data),
            None => Err(std::io::Error::other("no zstd compressor")),
        }
    }
}
