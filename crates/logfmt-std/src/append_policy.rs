//! How [`LogWriter::append`](crate::LogWriter::append) continues a log: what it does with a
//! torn tail ([`TornTailPolicy`]) and in which chunk format ([`AppendFormat`]). Options of
//! [`LogWriterOptions`](crate::LogWriterOptions), kept apart from the append itself (which
//! writes with a `LogWriter`), so that the writer's options need nothing of it.

/// What [`LogWriter::append`](crate::LogWriter::append) does with a log that ends in a torn or unwritten tail (or, in a
/// recyclable log, in the stale bytes of an earlier use of the file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum TornTailPolicy {
    /// Refuse with [`Error::TornTail`](crate::Error::TornTail) (or [`Error::StaleTail`](crate::Error::StaleTail)), leaving the file unchanged.
    /// The default.
    #[default]
    Refuse,
    /// Cut the torn bytes off (no complete record is among them) and continue there; in a
    /// recyclable log, cut the stale bytes of an earlier use off likewise.
    Truncate,
}

/// Which chunk format [`LogWriter::append`](crate::LogWriter::append) continues a log in. The log's own format is its
/// first chunk's (with its log number, in a recyclable log); a log with no chunk yet (empty,
/// or new) has none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum AppendFormat {
    /// The writer's [`format`](logfmt_core::WriteOptions::format), exactly: a log whose own format differs
    /// (another chunk format, another log number) is refused ([`Error::FormatMismatch`](crate::Error::FormatMismatch)). The
    /// default.
    #[default]
    Writer,
    /// The log's own format and log number, whatever they are; a log with none is written in
    /// the writer's format.
    Log,
    /// A recyclable log, continued with its own log number; a legacy log is refused
    /// ([`Error::FormatMismatch`](crate::Error::FormatMismatch)). A log with none takes the number in the file's name
    /// (`000042.log` is log 42), or else the writer's format if that is recyclable, or else
    /// is refused ([`Error::NoLogNumber`](crate::Error::NoLogNumber)).
    RecyclableLog,
}
