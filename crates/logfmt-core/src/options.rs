//! Reader options.

use crate::dialect::Dialect;
use crate::format::{ChunkFormat, Format};

/// Which chunk format a reader expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum ReadFormat {
    /// LevelDB's 7-byte headers, types 1–4 (and logfmt's packs, `0x51`–`0x54`, unless
    /// [`ReadOptions::read_packs`] is off); any other type is an unknown type, exactly as
    /// LevelDB reports it.
    #[default]
    Legacy,
    /// RocksDB's recyclable 11-byte headers, types 5–8. A chunk carrying another log number is
    /// left from an earlier use of the file and ends the log ([`LogEnd::OldRecord`]); a legacy
    /// chunk is reported as [`UnexpectedFormat`](crate::CorruptionKind::UnexpectedFormat).
    Recyclable {
        /// The log number this use of the file writes (the low 32 bits of its file number).
        log_number: u32,
    },
    /// Decided by the first chunk read: recyclable if it has a recyclable type, legacy
    /// otherwise. The log number is the one given, or else the first chunk's.
    Auto {
        /// The expected log number, if known (e.g. from a file name such as `000042.log`).
        log_number: Option<u32>,
    },
}

impl From<Format> for ReadFormat {
    /// Reading exactly the format a writer wrote.
    fn from(format: Format) -> Self {
        match format {
            Format::Legacy => Self::Legacy,
            Format::Recyclable { log_number } => Self::Recyclable { log_number },
        }
    }
}

impl From<ReadFormat> for ChunkFormat {
    /// The format a reader starts with: decided, or for [`ReadFormat::Auto`] undecided.
    fn from(format: ReadFormat) -> Self {
        match format {
            ReadFormat::Legacy => Self::Decided(Format::Legacy),
            ReadFormat::Recyclable { log_number } => {
                Self::Decided(Format::Recyclable { log_number })
            }
            ReadFormat::Auto { log_number } => Self::Undecided { log_number },
        }
    }
}

/// How a reader interprets its input. The defaults are LevelDB's: checksums verified, reading
/// from the start, legacy chunks, every unknown type reported, the end of the input is the end
/// of the log.
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
    /// The chunk format. Default [`ReadFormat::Legacy`].
    pub format: ReadFormat,
    /// Whose write-ahead log this is, which decides what chunk types above 4 mean
    /// ([`Dialect::meaning`]): type 9 is RocksDB's compression record but Pebble's WAL-sync
    /// `FULL` chunk. Default [`Dialect::Logfmt`]: LevelDB's types, RocksDB's recyclable chunks
    /// and compression record, logfmt's packs. [`Dialect::RocksDb`] also skips unknown types
    /// with bit 7 set, as if [`skip_ignorable_types`](Self::skip_ignorable_types) were on.
    pub dialect: Dialect,
    /// Skip chunks of unknown types with bit 7 set (`0x80..`) without a report, RocksDB's rule
    /// for forward-compatible extensions (a record in progress is dropped silently). Default
    /// `false`: every unknown type is reported, as LevelDB does.
    pub skip_ignorable_types: bool,
    /// Read [packs](crate::pack) (types `0x51`–`0x54`, logfmt's own) as the records they hold.
    /// Default `true`; `false` reads them as LevelDB does, as chunks of an unknown type.
    pub read_packs: bool,
    /// Take RocksDB's compression record (type 9, [`SET_COMPRESSION_TYPE`]) for what it is:
    /// the records after it are compressed (returned as [`Item::Coded`](crate::Item::Coded)
    /// by the core reader; `logfmt-std` decompresses them). Default `true`; `false` reads it as
    /// LevelDB does, as a chunk of an unknown type — and the compressed records after it as
    /// records.
    ///
    /// [`SET_COMPRESSION_TYPE`]: crate::format::SET_COMPRESSION_TYPE
    pub wal_compression: bool,
    /// The erased value of a flash image (`0xFF` for NOR flash, `0x00` for inverted parts): a
    /// header made only of it means nothing was written from there to the end of its block, and
    /// is skipped without a report (a record it interrupts was torn by a power cut and is
    /// dropped silently; so is an empty record in progress — write padding — cut by damage,
    /// which LevelDB reports as a 0-byte drop). Default `None`: LevelDB's rules.
    pub erased: Option<u8>,
    /// Recover records that follow a run of zero bytes in the same block. LevelDB skips the
    /// rest of a block silently at a zero header (type 0, length 0: preallocated space), losing
    /// any valid record written after the zeros without a word. With this option the reader
    /// skips only the zero bytes, and goes on at the first non-zero byte if a whole chunk with
    /// a valid checksum starts exactly there, or a chunk cut by the end of the input (torn, or
    /// still arriving when tailing); otherwise the rest of the block is skipped, as LevelDB
    /// does. A record in progress is still dropped and reported, except by zeros that run to
    /// the end of the input: preallocated space, where the log ends (torn, if a record was in
    /// progress). Default `false`.
    pub resync_after_zeros: bool,
    /// Read past damage in the last block of the input. Where LevelDB's reader takes a chunk
    /// cut short by the end of the input, or a zero header, for the end of the log, but
    /// well-formed chunks follow ([`FragmentReader::chunks_after_end`]: damage, not a torn
    /// write), go on at the first of them: the bytes before it are reported as a bad record
    /// length (a zero header's are skipped, [`SkipKind::ZeroHeader`]). For salvaging. Default
    /// `false`. With the `std` feature only (a host's salvage: firmware does not carry the
    /// search).
    ///
    /// [`FragmentReader::chunks_after_end`]: crate::FragmentReader::chunks_after_end
    /// [`SkipKind::ZeroHeader`]: crate::SkipKind::ZeroHeader
    #[cfg(feature = "std")]
    pub resync_in_last_block: bool,
    /// Tail a growing log: at the end of the input, [`next`](crate::Reader::next) returns
    /// `None` without giving up the record in progress, and the next call reads on from where it
    /// stopped once the source has more ([`BlockSource::refill`](crate::BlockSource::refill)).
    /// Default `false`.
    pub tailing: bool,
    /// The input begins in the middle of a log — a ring's oldest block, whose predecessors were
    /// erased ([`ring`](crate::ring)): `MIDDLE` and `LAST` chunks before the first `FULL` or
    /// `FIRST` continue a record whose start is gone, and are skipped without a report
    /// ([`SkipKind::Resync`](crate::SkipKind::Resync)), as after an initial offset. Default
    /// `false`.
    pub starts_mid_log: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self {
            verify_checksums: true,
            initial_offset: 0,
            format: ReadFormat::Legacy,
            dialect: Dialect::Logfmt,
            skip_ignorable_types: false,
            read_packs: true,
            wal_compression: true,
            erased: None,
            resync_after_zeros: false,
            #[cfg(feature = "std")]
            resync_in_last_block: false,
            tailing: false,
            starts_mid_log: false,
        }
    }
}

impl ReadOptions {
    /// The defaults: LevelDB's behaviour (with logfmt's [packs](crate::pack) read as the
    /// records they hold).
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

    /// Sets [`format`](Self::format).
    #[must_use]
    pub fn format(mut self, format: ReadFormat) -> Self {
        self.format = format;
        self
    }

    /// Sets [`dialect`](Self::dialect).
    ///
    /// ```
    /// use logfmt_core::{ReadOptions, parts::Dialect};
    ///
    /// let options = ReadOptions::new().dialect(Dialect::Pebble);
    /// assert_eq!(options.dialect, Dialect::Pebble);
    /// ```
    #[must_use]
    pub fn dialect(mut self, dialect: Dialect) -> Self {
        self.dialect = dialect;
        self
    }

    /// Sets [`skip_ignorable_types`](Self::skip_ignorable_types).
    #[must_use]
    pub fn skip_ignorable_types(mut self, skip: bool) -> Self {
        self.skip_ignorable_types = skip;
        self
    }

    /// Sets [`read_packs`](Self::read_packs).
    #[must_use]
    pub fn read_packs(mut self, read: bool) -> Self {
        self.read_packs = read;
        self
    }

    /// Sets [`wal_compression`](Self::wal_compression).
    #[must_use]
    pub fn wal_compression(mut self, read: bool) -> Self {
        self.wal_compression = read;
        self
    }

    /// Sets [`erased`](Self::erased).
    #[must_use]
    pub fn erased(mut self, erased: Option<u8>) -> Self {
        self.erased = erased;
        self
    }

    /// Sets [`resync_after_zeros`](Self::resync_after_zeros).
    #[must_use]
    pub fn resync_after_zeros(mut self, resync: bool) -> Self {
        self.resync_after_zeros = resync;
        self
    }

    /// Sets [`resync_in_last_block`](Self::resync_in_last_block).
    #[cfg(feature = "std")]
    #[must_use]
    pub fn resync_in_last_block(mut self, resync: bool) -> Self {
        self.resync_in_last_block = resync;
        self
    }

    /// Sets [`starts_mid_log`](Self::starts_mid_log).
    #[must_use]
    pub fn starts_mid_log(mut self, mid: bool) -> Self {
        self.starts_mid_log = mid;
        self
    }

    /// Sets [`tailing`](Self::tailing).
    #[must_use]
    pub fn tailing(mut self, tailing: bool) -> Self {
        self.tailing = tailing;
        self
    }
}

/// How a log ended, once a reader has returned `None` (see
/// [`Reader::end`](crate::Reader::end)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum LogEnd {
    /// The input ended at a chunk boundary, with no record in progress.
    Clean {
        /// The length of the input.
        offset: u64,
    },
    /// The input ended inside a record: a chunk cut short, or a record whose last fragment is
    /// missing — a torn write, which LevelDB ignores silently. Truncating the log to `offset`
    /// removes exactly the torn bytes and no complete record.
    Torn {
        /// Where the incomplete record (or chunk) begins.
        offset: u64,
        /// Bytes from `offset` to the end of the input.
        len: u64,
    },
    /// A recyclable chunk from an earlier use of the file: the end of this log (RocksDB's
    /// "old log record"). A record in progress there is dropped.
    OldRecord {
        /// Offset of the stale chunk (or of the record in progress it cut off).
        offset: u64,
        /// The log number the stale chunk carries.
        log_number: u32,
    },
    /// Reading failed; the log is treated as ending there (LevelDB counts a block as dropped).
    ReadError {
        /// Offset of the block that could not be read.
        offset: u64,
    },
}
