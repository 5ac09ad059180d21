//! `logfmt write`: records from standard input written to a log.

use std::io::{self, IsTerminal};
use std::path::{Path, PathBuf};

use logfmt_std::{
    AtomicLog, Compression, LogWriter, LogWriterOptions, SyncPolicy, TornTailPolicy,
    advanced::{
        AppendFormat, Format, PackLimit, WriteOptions, log_number_in_name, recyclable_log_number,
    },
};

use crate::error::CliError;
use crate::format::WriteFormatName;
use crate::input::{InputFormat, LINE_LIMIT, Records};
use crate::options::WaitArgs;

/// Write records read from standard input to a log file.
///
/// Without --append, a new log is written: to a temporary file beside FILE, which is synced
/// and then renamed over FILE (and the directory synced), so FILE is replaced whole or not
/// at all; a failed command leaves FILE as it was and no temporary file. An existing
/// non-empty FILE is refused (exit status 1, FILE unchanged) unless --force is given.
/// Records are laid out exactly as LevelDB's log writer lays them out. If the framed input
/// is malformed, the complete records before the bad frame are written and the status is 1.
///
/// With --append, FILE is read first and continued in place, only where its last complete
/// record ends: if it ends in a torn tail (a record cut short by a crash), it is refused
/// (exit status 1, FILE unchanged) unless --truncate-torn-tail is given; a damaged log is
/// always refused (use `logfmt salvage`). Records are flushed a block at a time and synced
/// at the end: a write that is killed leaves the records it had flushed, then at most a
/// torn tail. If writing fails (a full disk, or the file-size limit of `ulimit -f`: EFBIG,
/// not a SIGXFSZ that kills the process), the message says how many of the new records the
/// log holds and where they end. Standard input that is FILE itself is refused.
///
/// One writer at a time: every write takes an exclusive lock on FILE (flock) while it
/// writes; a second writer fails at once (exit status 2) unless --wait is given. Readers
/// take no lock. Locks are advisory: a program that does not take them (LevelDB itself,
/// `cat >>`) is not stopped, and network file systems (NFS) may not share them.
///
/// --format recyclable writes RocksDB's recyclable chunks, which carry the log number (the
/// number in FILE's name, as in 000042.log, unless --log-number is given). --append continues
/// a log in its own format and log number (its first chunk's, whatever FILE's name says); a
/// --format or --log-number that differs from the log's own is refused (exit status 1). In
/// a recyclable log, the stale bytes an earlier use of the file left after the log's end are
/// refused like a torn tail.
///
/// --pack gathers small records into packs (logfmt's pack records: a 16-byte record costs 17
/// bytes instead of 23), of at most LIMIT bytes each (default 4096): logfmt reads them back
/// record by record; LevelDB's and RocksDB's readers report each pack as a chunk of an unknown
/// type and read the plain records around it. Legacy logs only. A record too large for a
/// pack, and a pack of one record, are written plain. A file that looks like a LevelDB or
/// RocksDB log (named NNNNNN.log or MANIFEST-NNNNNN, or whose records are WriteBatches or
/// VersionEdits) is refused, nothing written (exit status 2), unless --allow-logfmt-chunks
/// is given: LevelDB and RocksDB would drop the packed records.
///
/// --compress zstd compresses each pack, and each record too large for a pack, when that makes
/// it smaller (logfmt's compressed packs: every logfmt command reads them; LevelDB and RocksDB
/// report them as chunks of an unknown type). --compress rocksdb writes RocksDB's WAL
/// compression (its compression record first, then each record one zstd frame), which RocksDB
/// 7.4 and later read; with --append, a log keeps its own compression (RocksDB's record must be
/// the first).
///
/// Nothing is printed on success, unless --json: then one JSON object, {"file", "records",
/// "payload_bytes", "appended_at", "bytes"}: the log written, the records written and their
/// bytes, where the new records begin (null for a new log; the offset --append continued at)
/// and the log's length after the write. When the input fails after records were written
/// (malformed framed input: the records before it are kept), the object is printed too, with
/// "error" last, and the exit status is the failure's.
#[derive(Debug, clap::Args)]
pub(crate) struct WriteArgs {
    /// Continue the log in FILE (created if missing) exactly as LevelDB's writer continues a
    /// log of that length: if fewer than 7 bytes are left in its last block, they are padded.
    #[arg(long)]
    append: bool,
    /// With --append: if FILE ends in a torn tail, cut exactly those bytes off (no complete
    /// record is among them) and append after the last complete record.
    #[arg(long, requires = "append")]
    truncate_torn_tail: bool,
    /// With --append: make the records durable (fdatasync) after every N of them, as a
    /// write-ahead log does (1: after each record, like LevelDB's `sync = true`); a write
    /// killed or a power cut then loses at most the last N-1 records read. Default: one sync
    /// at the end.
    #[arg(long, value_name = "N", requires = "append",
          value_parser = clap::value_parser!(u64).range(1..))]
    sync_every: Option<u64>,
    /// Replace FILE even if it is not empty (once the new log is complete). A FILE that is a
    /// symbolic link is written through, as --append writes through it: the file it points to
    /// is replaced, and the link kept.
    #[arg(long, conflicts_with = "append")]
    force: bool,
    /// How records are read from standard input.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t)]
    input: InputFormat,
    /// The longest line read as a record (--input lines), in bytes, without its newline: a
    /// line is held whole in memory until it ends. A longer line is an error (exit status 2):
    /// FILE is left as it was (with --append, it holds the records before that line).
    #[arg(long, value_name = "BYTES", default_value_t = LINE_LIMIT)]
    line_limit: usize,
    /// The chunk format: legacy (LevelDB) or recyclable (RocksDB's recyclable WAL); or the
    /// reader the log is for: leveldb (legacy chunks), rocksdb (legacy, or recyclable with
    /// --log-number; --compress rocksdb for its WAL compression), which refuse logfmt's packs.
    /// Default: legacy, or recyclable with --log-number; with --append, the existing log's.
    #[arg(long, value_enum, value_name = "FORMAT")]
    format: Option<WriteFormatName>,
    /// The log number recyclable chunks carry (the low 32 bits are written). Default: the
    /// number in FILE's name (000042.log is log 42); with --append, the existing log's.
    #[arg(long, value_name = "N")]
    log_number: Option<u64>,
    /// Gather records into packs of at most LIMIT bytes (default 4096, at most 16 MiB).
    #[arg(
        long,
        value_name = "LIMIT",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "4096",
        value_parser = clap::value_parser!(u32).range(16..=(16 << 20))
    )]
    pack: Option<u32>,
    /// Compression: none (the default); zstd (packs, and records too large for a pack, when
    /// that makes them smaller); rocksdb (RocksDB's WAL compression).
    #[arg(long, value_enum, value_name = "CODEC", default_value_t)]
    compress: CodecName,
    /// Write logfmt's own chunks (--pack, --compress zstd) even into a file that looks like a
    /// LevelDB or RocksDB log (named NNNNNN.log or MANIFEST-NNNNNN, or whose records are
    /// WriteBatches or VersionEdits): LevelDB and RocksDB report those chunks as unknown
    /// record types and drop their records. Without it, such a file is refused.
    #[arg(long)]
    allow_logfmt_chunks: bool,
    #[command(flatten)]
    wait: WaitArgs,
    /// Print what was written as one JSON object (keys above); not with FILE `-`, whose log
    /// is standard output.
    #[arg(long)]
    json: bool,
    /// The log file to write (`-`: standard output, which must not be a terminal).
    #[arg(value_name = "FILE")]
    file: PathBuf,
}

/// The codecs of `--compress`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub(crate) enum CodecName {
    /// Nothing compressed.
    #[default]
    None,
    /// zstd (level 3 when built with the `zstd-c` feature; the Rust encoder's one level, close
    /// to zstd's level 1, otherwise), kept only where it makes a pack or record smaller.
    Zstd,
    /// RocksDB's WAL compression: the log starts with RocksDB's compression record and each
    /// record is one zstd frame (what RocksDB's `wal_compression = kZSTD` writes).
    Rocksdb,
}

impl WriteArgs {
    /// The chunks `--format` asks for: legacy, recyclable, or `None` where the log number (or,
    /// with --append, the log) decides.
    fn chunks(&self) -> Option<WriteFormatName> {
        self.format.and_then(WriteFormatName::chunks)
    }
}

/// Runs `write`.
pub(crate) fn run(args: &WriteArgs) -> Result<(), CliError> {
    let to_stdout = args.file.as_os_str() == "-";
    if !to_stdout {
        refuse_stdin_as_output(&args.file)?;
    }
    let packs = args.pack.is_some() || args.compress == CodecName::Zstd;
    if let Some(name) = args.format.filter(|name| packs && name.foreign()) {
        let reader = if name == WriteFormatName::Leveldb {
            "LevelDB"
        } else {
            "RocksDB"
        };
        return Err(CliError::Usage(format!(
            "--pack and --compress zstd write logfmt's packs, which {reader} does not read"
        )));
    }
    let format = match (args.chunks(), args.log_number) {
        (Some(WriteFormatName::Legacy), Some(_)) => {
            return Err(CliError::Usage(
                "--log-number needs --format recyclable".into(),
            ));
        }
        (_, Some(number)) => Some(Format::Recyclable {
            log_number: recyclable_log_number(number),
        }),
        (Some(WriteFormatName::Legacy), None) => Some(Format::Legacy),
        (_, None) => None,
    };
    if packs && matches!(format, Some(Format::Recyclable { .. })) {
        return Err(CliError::Usage(
            "--pack and --compress write legacy logs only (packs carry no log number)".into(),
        ));
    }
    if packs && !to_stdout && !args.allow_logfmt_chunks {
        refuse_logfmt_chunks(&args.file)?;
    }
    let options = LogWriterOptions::new()
        .lock_wait(args.wait.lock_wait())
        .pack(args.pack.map(|bytes| PackLimit::bytes(bytes as usize)))
        .compress(match args.compress {
            CodecName::None => Compression::None,
            CodecName::Zstd => Compression::zstd(),
            CodecName::Rocksdb => Compression::rocksdb(),
        });
    let stdin = io::stdin();
    if stdin.is_terminal() {
        // Someone is typing: say what is expected, and how to end.
        let how = match args.input {
            InputFormat::Lines => "one record per line",
            InputFormat::Framed => "length-framed records",
        };
        eprintln!("logfmt: reading records from standard input ({how}); end with Ctrl-D");
    }
    let records = Records::new(stdin.lock(), args.input).line_limit(args.line_limit);
    let mut written = Written::default();
    let result = if to_stdout {
        to_standard_output(args, options, format, records)
    } else if args.append {
        append(args, options, format, records, &mut written)
    } else {
        create(args, options, format, records, &mut written)
    };
    // A failure after records were put in the log (malformed framed input, kept as the
    // records before it) still says what was written, and the error.
    if args.json && (result.is_ok() || written.kept) {
        let report = WriteReport {
            file: args.file.to_string_lossy().into_owned(),
            records: written.records,
            payload_bytes: written.payload_bytes,
            appended_at: written.appended_at,
            bytes: std::fs::metadata(&args.file).map_or(0, |meta| meta.len()),
            error: result.as_ref().err().map(ToString::to_string),
        };
        crate::render::print(&report, true)?;
    }
    result
}

/// What was written: counted as the records are added.
#[derive(Debug, Default)]
struct Written {
    records: u64,
    payload_bytes: u64,
    /// Where --append continued the log.
    appended_at: Option<u64>,
    /// The records are in the log (committed, or appended and closed).
    kept: bool,
}

impl Written {
    /// Counts `record`, added to the log.
    fn add(&mut self, record: &[u8]) {
        self.records += 1;
        self.payload_bytes += record.len() as u64;
    }
}

/// What `write --json` prints: one object, its keys in this order.
#[derive(Debug, serde::Serialize)]
struct WriteReport {
    /// The log written, as named on the command line.
    file: String,
    /// The records written.
    records: u64,
    /// Their bytes.
    payload_bytes: u64,
    /// Where the new records begin: the offset --append continued at (null for a new log).
    appended_at: Option<u64>,
    /// The log's length after the write.
    bytes: u64,
    /// Only when the input failed after records were written (they are kept): why.
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

impl crate::render::Report for WriteReport {
    /// A write says nothing on success: the text is empty.
    fn write_text(&self, _out: &mut dyn std::io::Write) -> io::Result<()> {
        Ok(())
    }
}

/// `write` without `--append`: a new log, put in place whole.
fn create(
    args: &WriteArgs,
    options: LogWriterOptions,
    format: Option<Format>,
    mut records: Records<io::StdinLock<'_>>,
    written: &mut Written,
) -> Result<(), CliError> {
    let format = match (format, args.chunks()) {
        (Some(format), _) => format,
        (None, Some(WriteFormatName::Recyclable)) => match log_number_in_name(&args.file) {
            Some(number) => Format::Recyclable {
                log_number: recyclable_log_number(number),
            },
            None => {
                return Err(logfmt_std::Error::NoLogNumber {
                    path: args.file.clone(),
                }
                .into());
            }
        },
        (None, _) => Format::Legacy,
    };
    let atomic = options
        .write(WriteOptions::new().format(format))
        .replace(args.force);
    let mut log = AtomicLog::create(&args.file, &atomic)?;
    let mut record = Vec::new();
    let mut added = 0u64;
    // A record is added only once it has been read completely.
    let read = loop {
        match records.next_into(&mut record) {
            Ok(true) => {
                log.add_record(&record).map_err(CliError::unchanged)?;
                added += 1;
                written.add(&record);
            }
            Ok(false) => break Ok(()),
            Err(e) => break Err(e),
        }
    };
    if read
        .as_ref()
        .is_err_and(|e| !e.is_malformed() || added == 0)
    {
        // Standard input failed, or held no complete record before a bad frame: FILE is
        // left as it was.
        drop(log);
        return Ok(read?);
    }
    log.commit().map_err(CliError::unchanged)?;
    written.kept = true;
    Ok(read?)
}

/// `write -`: a new log written to standard output, as it is read.
fn to_standard_output(
    args: &WriteArgs,
    options: LogWriterOptions,
    format: Option<Format>,
    mut records: Records<io::StdinLock<'_>>,
) -> Result<(), CliError> {
    if args.append || args.force {
        return Err(CliError::Usage(
            "--append and --force write files: standard output (-) is written from its start"
                .into(),
        ));
    }
    if args.json {
        return Err(CliError::Usage(
            "--json prints on standard output, which holds the log with FILE `-`".into(),
        ));
    }
    let stdout = io::stdout();
    if stdout.is_terminal() {
        return Err(CliError::Usage(
            "a log is binary: redirect standard output (-) to a file or a pipe".into(),
        ));
    }
    let format = match (format, args.chunks()) {
        (Some(format), _) => format,
        (None, Some(WriteFormatName::Recyclable)) => {
            return Err(CliError::Usage(
                "--format recyclable to standard output needs --log-number".into(),
            ));
        }
        (None, _) => Format::Legacy,
    };
    let options = options
        .write(WriteOptions::new().format(format))
        .sync_on_close(false);
    let mut writer = LogWriter::new(Stdout(stdout.lock()), &options);
    let failed = |source| logfmt_std::Error::Write {
        path: PathBuf::from("-"),
        source,
    };
    let mut record = Vec::new();
    while records.next_into(&mut record)? {
        writer.add_record(&record).map_err(failed)?;
    }
    writer.close().map_err(failed)?;
    Ok(())
}

/// Standard output as a log's destination: syncing is flushing (a pipe has nothing more).
struct Stdout<'a>(io::StdoutLock<'a>);

impl io::Write for Stdout<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

impl logfmt_std::advanced::SyncWrite for Stdout<'_> {
    fn sync(&mut self) -> io::Result<()> {
        io::Write::flush(&mut self.0)
    }
}

/// `write --append`: the log continued in place.
fn append(
    args: &WriteArgs,
    options: LogWriterOptions,
    format: Option<Format>,
    mut records: Records<io::StdinLock<'_>>,
    written: &mut Written,
) -> Result<(), CliError> {
    let (writer_options, append_format) = match (format, args.chunks()) {
        (Some(format), _) => (
            options.write(WriteOptions::new().format(format)),
            AppendFormat::Writer,
        ),
        (None, Some(WriteFormatName::Recyclable)) => (options, AppendFormat::RecyclableLog),
        (None, _) => (options, AppendFormat::Log),
    };
    let policy = if args.truncate_torn_tail {
        TornTailPolicy::Truncate
    } else {
        TornTailPolicy::Refuse
    };
    let writer_options = match args.sync_every {
        Some(n) => writer_options.sync(SyncPolicy::EveryRecords(n)),
        None => writer_options,
    };
    let append = writer_options
        .torn_tail(policy)
        .append_format(append_format);
    let (mut writer, report) = LogWriter::append(&args.file, &append)?;
    written.appended_at = Some(report.start);
    if let Some(torn) = report.truncated {
        super::say(
            &args.file,
            &format!(
                "truncated {} torn bytes at offset {} (no complete record was among them)",
                torn.bytes, torn.offset
            ),
        );
    }
    if let Some(stale) = report.stale {
        super::say(
            &args.file,
            &format!(
                "truncated {} stale bytes at offset {} (left by an earlier use of the file; \
                 the log ended at a record of log {})",
                stale.bytes, stale.offset, stale.log_number
            ),
        );
    }
    let failed = |writer: &LogWriter<std::fs::File>, source| CliError::AppendFailed {
        error: logfmt_std::Error::Write {
            path: args.file.clone(),
            source,
        },
        start: report.start,
        kept: writer.kept(report.start).ok(),
    };
    let mut record = Vec::new();
    // A record is added only once it has been read completely.
    let read = loop {
        match records.next_into(&mut record) {
            Ok(true) => {
                if let Err(source) = writer.add_record(&record) {
                    return Err(failed(&writer, source));
                }
                written.add(&record);
            }
            Ok(false) => break Ok(()),
            Err(e) => break Err(e),
        }
    };
    if let Err(source) = writer.sync() {
        return Err(failed(&writer, source));
    }
    writer.close().map_err(|source| logfmt_std::Error::Write {
        path: args.file.clone(),
        source,
    })?;
    written.kept = true;
    Ok(read?)
}

/// Refuses to put logfmt's own chunks into a log LevelDB or RocksDB reads (they would drop
/// those records): one line, nothing written.
fn refuse_logfmt_chunks(path: &Path) -> Result<(), CliError> {
    let found = logfmt_std::advanced::database_log(path)
        .map_err(|e| logfmt_std::Error::io(logfmt_std::advanced::Operation::Read, path, e))?;
    match found {
        None => Ok(()),
        Some(why) => Err(CliError::Usage(format!(
            "{}: {why}: --pack and --compress zstd write logfmt's packs, which LevelDB and \
             RocksDB report as unknown record types and drop; --allow-logfmt-chunks writes \
             them anyway",
            logfmt_std::advanced::EscapedPath::new(path)
        ))),
    }
}

/// Refuses to write the file standard input reads: appending to it would read its own
/// records back without end.
fn refuse_stdin_as_output(path: &Path) -> Result<(), CliError> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        let Ok(stdin) = io::stdin().as_fd().try_clone_to_owned() else {
            return Ok(());
        };
        let stdin = std::fs::File::from(stdin);
        if stdin.metadata().is_ok_and(|m| m.is_file())
            && logfmt_std::advanced::is_same_file(&stdin, path).unwrap_or(false)
        {
            return Err(CliError::SameFile {
                path: path.to_path_buf(),
            });
        }
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}
