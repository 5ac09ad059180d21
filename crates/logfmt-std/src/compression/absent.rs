//! No codec: this build of `logfmt-std` was made without its `zstd` feature. The reader and the
//! writer check [`BUILT`] before they code anything and report the missing feature; these
//! methods, which they never reach, code nothing.

use logfmt_core::pack::{Pack, PackError};

/// Whether this build decodes and writes compressed records: no.
pub(crate) const BUILT: bool = false;

/// No contexts: there is no codec to hold them for.
#[derive(Debug, Default)]
pub(crate) struct Contexts {}

impl Contexts {
    /// Nothing is coded: the pack stays stored.
    pub(crate) fn encode_pack(&mut self, _: &[u8], _: u32, _: i32) -> Option<Vec<u8>> {
        None
    }

    /// Nothing is coded: the record stays plain.
    pub(crate) fn encode_record(&mut self, _: &[u8], _: i32) -> Option<Vec<u8>> {
        None
    }

    /// A coded pack does not decode here.
    pub(crate) fn decode(
        &mut self,
        _: &Pack<'_>,
        out: &mut Vec<u8>,
        _: usize,
    ) -> Result<(), PackError> {
        out.clear();
        Err(PackError::Decode)
    }

    /// A RocksDB record cannot be compressed here.
    pub(crate) fn encode_stream(&mut self, _: &[u8], _: i32) -> std::io::Result<Vec<u8>> {
        Err(std::io::Error::other(
            "logfmt-std was built without its `zstd` feature",
        ))
    }

    /// A RocksDB record does not decode here.
    pub(crate) fn decode_stream(
        &mut self,
        _: &[u8],
        _: u32,
        out: &mut Vec<u8>,
        _: usize,
    ) -> Result<bool, ()> {
        out.clear();
        Err(())
    }
}
