//! The synchronous part of a scan: one file, or one byte range of it, read with
//! [`LogReader`] (the range rule of [`logfmt_std::advanced::split`]) into Arrow record batches.

use std::io::{self, Read, Seek};
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use datafusion::arrow::array::{
    ArrayRef, BinaryBuilder, StringBuilder, UInt32Builder, UInt64Builder,
};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::{RecordBatch, RecordBatchOptions};
use logfmt_std::content::{Op, WriteBatch};
use logfmt_std::{
    Damage, DamageKind, LogFile, LogReaderOptions,
    advanced::{
        Bounded, LogReader, ReadError, ReadFormat, ReadOptions, Record, StdSource,
        log_number_in_name, recyclable_log_number,
    },
};

use crate::error::ScanError;
use crate::options::{ChunkFormatChoice, LogOptions};
use crate::table::{TableKind, damage, ops, records};

/// Payload bytes of one batch above which it is sent before it has `batch_size` rows (Arrow's
/// binary arrays hold at most 2 GiB, and a batch should stay small).
const BATCH_BYTES: usize = 64 << 20;

/// What one scan reads and how it builds its batches.
#[derive(Debug, Clone)]
pub(crate) struct ScanSpec {
    /// The table read.
    pub(crate) kind: TableKind,
    /// How logs are read.
    pub(crate) options: LogOptions,
    /// The file's name in the `file` column.
    pub(crate) file: String,
    /// The byte range read (`None`: the whole file).
    pub(crate) range: Option<Range<u64>>,
    /// The columns built, as indices into the table's schema, in output order.
    pub(crate) projection: Vec<usize>,
    /// The schema of the batches (the table's schema projected).
    pub(crate) schema: SchemaRef,
    /// Rows per batch, at most.
    pub(crate) batch_size: usize,
    /// Rows wanted, at most (`None`: all).
    pub(crate) limit: Option<usize>,
}

/// The `kind` of a torn tail that is zeros to the end of the file ([`logfmt_std::advanced::zero_fill`]).
pub(crate) const ZERO_FILL: &str = "zero_fill";

/// The `reason` of a [`ZERO_FILL`] row.
pub(crate) const ZERO_FILL_REASON: &str =
    "zero-filled tail: preallocated or mapped and never written, not damage";

/// Reads the log that `open` opens (each call a new reader of the same file, from its start)
/// as `spec` says, calling `emit` with each batch; stops early when `emit` returns `false`.
/// `local` is the file's path when it is a local file: a torn tail of zeros to its end is
/// then told apart from damage ([`logfmt_std::advanced::zero_fill`]), as `logfmt verify` tells it.
pub(crate) fn scan<R, O, E>(
    open: O,
    local: Option<&Path>,
    spec: &ScanSpec,
    mut emit: E,
) -> Result<(), ScanError>
where
    R: Read + Seek,
    O: Fn() -> io::Result<R>,
    E: FnMut(RecordBatch) -> bool,
{
    let io_error = |source| ScanError::Io {
        file: spec.file.clone(),
        source,
    };
    let base = ReadOptions::new().erased(spec.options.erased);
    let format = match spec.options.format {
        ChunkFormatChoice::Legacy => ReadFormat::Legacy,
        ChunkFormatChoice::Auto => resolve_auto(&open, &base, &spec.file).map_err(io_error)?,
    };
    let mut options = LogReaderOptions::new()
        .read(base.format(format))
        .recovery(spec.options.recovery);
    if let Some(range) = &spec.range {
        options = options.range(range.clone());
    }
    let source = StdSource::seekable(open().map_err(io_error)?);
    let mut reader = LogReader::new(source, &options);
    let mut batch = BatchBuilder::new(spec);
    let mut rows_left = spec.limit.unwrap_or(usize::MAX);
    while rows_left > 0 {
        // Always assembled, whatever the projection: a pack or a compressed record that is
        // not assembled cannot be split into its records, and every projection must see the
        // same rows.
        let entry = match reader.next_bounded(usize::MAX) {
            Ok(Some(entry)) => entry,
            Ok(None) => break,
            Err(error) => return Err(read_error(spec, error)),
        };
        let added = match entry {
            Bounded::Record(record) => batch.record(spec, &record, rows_left)?,
            Bounded::Damage(damage) => {
                let zeros = is_zero_fill(spec, local, &damage);
                batch.damage(spec, &damage, zeros)
            }
            // Not with an unbounded limit.
            Bounded::Oversized(oversized) => {
                return Err(ScanError::RecordTooLarge {
                    file: spec.file.clone(),
                    offset: oversized.offset,
                    len: oversized.len,
                });
            }
            _ => 0,
        };
        rows_left -= added.min(rows_left);
        if batch.is_full(spec) {
            if !emit(batch.finish(spec)?) {
                return Ok(());
            }
            batch = BatchBuilder::new(spec);
        }
    }
    if batch.rows > 0 {
        emit(batch.finish(spec)?);
    }
    Ok(())
}

/// The error of a failed read.
fn read_error(spec: &ScanSpec, error: ReadError<io::Error>) -> ScanError {
    let file = spec.file.clone();
    match error {
        ReadError::Io(source) => ScanError::Io { file, source },
        ReadError::Damaged(damage) => ScanError::Damaged { file, damage },
        ReadError::NotAssembled(oversized) => ScanError::RecordTooLarge {
            file,
            offset: oversized.offset,
            len: oversized.len,
        },
        other => ScanError::Io {
            file,
            source: io::Error::other(other.to_string()),
        },
    }
}

/// The chunk format of a log read as `auto`, decided from its start as `logfmt --format auto`
/// decides it, so that every range of a file is read in the same format: a log number from
/// the file's name (`000042.log`) gives way to the log's own (its first chunk's).
fn resolve_auto<R, O>(open: &O, base: &ReadOptions, file: &str) -> io::Result<ReadFormat>
where
    R: Read + Seek,
    O: Fn() -> io::Result<R>,
{
    let named = log_number_in_name(Path::new(file));
    let named = match detect(open()?, base, None)? {
        Some(ReadFormat::Recyclable { log_number }) => Some(u64::from(log_number)),
        _ => named,
    };
    let log_number = named.map(recyclable_log_number);
    Ok(detect(open()?, base, log_number)?.unwrap_or(ReadFormat::Auto { log_number }))
}

/// The format the first chunk of a known type decides, read from the start; `None` if none
/// does (an empty log, or only damage). See [`logfmt_std::advanced::detect_format`].
fn detect<R: Read + Seek>(
    log: R,
    base: &ReadOptions,
    log_number: Option<u32>,
) -> io::Result<Option<ReadFormat>> {
    logfmt_std::advanced::detect_format(StdSource::seekable(log), base, log_number)
}

/// Whether `damage` is a zero-filled tail ([`logfmt_std::advanced::zero_fill`]): zeros from its offset
/// to the end of the file, space preallocated or memory-mapped and never written. Only a
/// local file read as a log is read again to tell (not a flash image, whose erased bytes are
/// read as such; nor an object that is not a local file), and only for the `damage` table.
fn is_zero_fill(spec: &ScanSpec, local: Option<&Path>, damage: &Damage) -> bool {
    if spec.kind != TableKind::Damage
        || damage.kind != DamageKind::TornTail
        || spec.options.erased.is_some()
    {
        return false;
    }
    local
        .and_then(|path| LogFile::open(path).ok())
        .is_some_and(|log| logfmt_std::advanced::zero_fill(&log, damage).is_some())
}

/// The short name of a damage's kind, for the `kind` column.
pub(crate) fn damage_kind_name(kind: DamageKind) -> &'static str {
    match kind {
        DamageKind::Corruption(_) => "corruption",
        DamageKind::TornTail => "torn_tail",
        DamageKind::Skipped => "skipped",
        DamageKind::LostTail { .. } => "lost_tail",
        _ => "damage",
    }
}

/// The builders of one batch: only the projected columns'.
struct BatchBuilder {
    rows: usize,
    bytes: usize,
    file: Option<StringBuilder>,
    offset: Option<UInt64Builder>,
    length: Option<UInt64Builder>,
    index: Option<UInt32Builder>,
    payload: Option<BinaryBuilder>,
    // Damage.
    bytes_col: Option<UInt64Builder>,
    kind: Option<StringBuilder>,
    reason: Option<StringBuilder>,
    // Operations.
    op_index: Option<UInt32Builder>,
    sequence: Option<UInt64Builder>,
    op: Option<StringBuilder>,
    cf: Option<UInt32Builder>,
    key: Option<BinaryBuilder>,
    value: Option<BinaryBuilder>,
    error: Option<StringBuilder>,
}

impl BatchBuilder {
    fn new(spec: &ScanSpec) -> Self {
        let has = |column: usize| spec.projection.contains(&column);
        let n = spec.batch_size.min(8192);
        let string = |column| has(column).then(|| StringBuilder::with_capacity(n, n * 16));
        let u64s = |column| has(column).then(|| UInt64Builder::with_capacity(n));
        let u32s = |column| has(column).then(|| UInt32Builder::with_capacity(n));
        let binary = |column| has(column).then(|| BinaryBuilder::with_capacity(n, 0));
        match spec.kind {
            TableKind::Records => Self {
                file: string(records::FILE),
                offset: u64s(records::OFFSET),
                length: u64s(records::LENGTH),
                index: u32s(records::INDEX),
                payload: binary(records::PAYLOAD),
                ..Self::empty()
            },
            TableKind::Damage => Self {
                file: string(damage::FILE),
                offset: u64s(damage::OFFSET),
                bytes_col: u64s(damage::BYTES),
                kind: string(damage::KIND),
                reason: string(damage::REASON),
                ..Self::empty()
            },
            TableKind::Operations => Self {
                file: string(ops::FILE),
                offset: u64s(ops::OFFSET),
                index: u32s(ops::INDEX),
                op_index: u32s(ops::OP_INDEX),
                sequence: u64s(ops::SEQUENCE),
                op: string(ops::OP),
                cf: u32s(ops::CF),
                key: binary(ops::KEY),
                value: binary(ops::VALUE),
                error: string(ops::ERROR),
                ..Self::empty()
            },
        }
    }

    fn empty() -> Self {
        Self {
            rows: 0,
            bytes: 0,
            file: None,
            offset: None,
            length: None,
            index: None,
            payload: None,
            bytes_col: None,
            kind: None,
            reason: None,
            op_index: None,
            sequence: None,
            op: None,
            cf: None,
            key: None,
            value: None,
            error: None,
        }
    }

    fn is_full(&self, spec: &ScanSpec) -> bool {
        self.rows >= spec.batch_size.max(1) || self.bytes >= BATCH_BYTES
    }

    /// Adds the rows of `record` (at most `room`); returns how many.
    fn record(
        &mut self,
        spec: &ScanSpec,
        record: &Record<'_>,
        room: usize,
    ) -> Result<usize, ScanError> {
        match spec.kind {
            TableKind::Records => {
                self.common(spec, record.offset);
                push(&mut self.length, Some(record.data.len() as u64));
                push(&mut self.index, record.index);
                if let Some(payload) = &mut self.payload {
                    check_size(spec, record.offset, record.data.len())?;
                    payload.append_value(record.data);
                    self.bytes += record.data.len();
                }
                self.rows += 1;
                Ok(1)
            }
            TableKind::Damage => Ok(0),
            TableKind::Operations => self.operations(spec, record, room),
        }
    }

    /// Adds one row per operation of the `WriteBatch` in `record`, and one for an error that
    /// ends them (at most `room` rows).
    fn operations(
        &mut self,
        spec: &ScanSpec,
        record: &Record<'_>,
        room: usize,
    ) -> Result<usize, ScanError> {
        let mut added = 0;
        let batch = match WriteBatch::new(record.data) {
            Ok(batch) => batch,
            Err(error) => {
                self.operation(spec, record, None, None, None, Some(&error.to_string()))?;
                return Ok(1);
            }
        };
        for (i, op) in batch.ops().enumerate() {
            if added == room {
                break;
            }
            let i = u32::try_from(i).unwrap_or(u32::MAX);
            match op {
                Ok(op) => self.operation(
                    spec,
                    record,
                    Some(batch.sequence()),
                    Some(i),
                    Some(&op),
                    None,
                )?,
                Err(error) => self.operation(
                    spec,
                    record,
                    Some(batch.sequence()),
                    Some(i),
                    None,
                    Some(&error.to_string()),
                )?,
            }
            added += 1;
        }
        Ok(added)
    }

    fn operation(
        &mut self,
        spec: &ScanSpec,
        record: &Record<'_>,
        sequence: Option<u64>,
        op_index: Option<u32>,
        op: Option<&Op<'_>>,
        error: Option<&str>,
    ) -> Result<(), ScanError> {
        self.common(spec, record.offset);
        push(&mut self.index, record.index);
        push(&mut self.op_index, op_index);
        push(&mut self.sequence, sequence);
        if let Some(builder) = &mut self.op {
            builder.append_option(op.map(Op::name));
        }
        push(&mut self.cf, op.and_then(Op::cf));
        for (builder, bytes) in [
            (&mut self.key, op.and_then(Op::key)),
            (&mut self.value, op.and_then(Op::value)),
        ] {
            if let Some(builder) = builder {
                if let Some(bytes) = bytes {
                    check_size(spec, record.offset, bytes.len())?;
                    self.bytes += bytes.len();
                }
                builder.append_option(bytes);
            }
        }
        if let Some(builder) = &mut self.error {
            builder.append_option(error);
        }
        self.rows += 1;
        Ok(())
    }

    /// Adds a row for `damage` (damage table only), a zero-filled tail if `zero_fill`;
    /// returns the rows added.
    fn damage(&mut self, spec: &ScanSpec, damage: &Damage, zero_fill: bool) -> usize {
        if spec.kind != TableKind::Damage {
            return 0;
        }
        self.common(spec, damage.offset);
        push(&mut self.bytes_col, Some(damage.bytes));
        if let Some(builder) = &mut self.kind {
            builder.append_value(if zero_fill {
                ZERO_FILL
            } else {
                damage_kind_name(damage.kind)
            });
        }
        if let Some(builder) = &mut self.reason {
            if zero_fill {
                builder.append_value(ZERO_FILL_REASON);
            } else {
                builder.append_value(damage.kind.to_string());
            }
        }
        self.rows += 1;
        1
    }

    fn common(&mut self, spec: &ScanSpec, offset: u64) {
        if let Some(builder) = &mut self.file {
            builder.append_value(&spec.file);
        }
        push(&mut self.offset, Some(offset));
    }

    /// The batch, its columns in the projection's order.
    fn finish(mut self, spec: &ScanSpec) -> Result<RecordBatch, ScanError> {
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(spec.projection.len());
        for &column in &spec.projection {
            let array: Option<ArrayRef> = match (spec.kind, column) {
                (_, 0) => self.file.as_mut().map(|b| Arc::new(b.finish()) as ArrayRef),
                (_, 1) => self
                    .offset
                    .as_mut()
                    .map(|b| Arc::new(b.finish()) as ArrayRef),
                (TableKind::Records, records::LENGTH) => finish(&mut self.length),
                (TableKind::Records, records::INDEX) => finish(&mut self.index),
                (TableKind::Records, records::PAYLOAD) => finish_binary(&mut self.payload),
                (TableKind::Damage, damage::BYTES) => finish(&mut self.bytes_col),
                (TableKind::Damage, damage::KIND) => finish_string(&mut self.kind),
                (TableKind::Damage, damage::REASON) => finish_string(&mut self.reason),
                (TableKind::Operations, ops::INDEX) => finish(&mut self.index),
                (TableKind::Operations, ops::OP_INDEX) => finish(&mut self.op_index),
                (TableKind::Operations, ops::SEQUENCE) => finish(&mut self.sequence),
                (TableKind::Operations, ops::OP) => finish_string(&mut self.op),
                (TableKind::Operations, ops::CF) => finish(&mut self.cf),
                (TableKind::Operations, ops::KEY) => finish_binary(&mut self.key),
                (TableKind::Operations, ops::VALUE) => finish_binary(&mut self.value),
                (TableKind::Operations, ops::ERROR) => finish_string(&mut self.error),
                _ => None,
            };
            // Every projected column has its builder (made in `new` from the same indices).
            columns.push(array.ok_or_else(|| {
                ScanError::Arrow(format!("column {column} of {} was not built", spec.kind))
            })?);
        }
        let options = RecordBatchOptions::new().with_row_count(Some(self.rows));
        RecordBatch::try_new_with_options(Arc::clone(&spec.schema), columns, &options)
            .map_err(|e| ScanError::Arrow(e.to_string()))
    }
}

fn push<T: datafusion::arrow::datatypes::ArrowPrimitiveType>(
    builder: &mut Option<datafusion::arrow::array::PrimitiveBuilder<T>>,
    value: Option<T::Native>,
) {
    if let Some(builder) = builder {
        builder.append_option(value);
    }
}

fn finish<T: datafusion::arrow::datatypes::ArrowPrimitiveType>(
    builder: &mut Option<datafusion::arrow::array::PrimitiveBuilder<T>>,
) -> Option<ArrayRef> {
    builder.as_mut().map(|b| Arc::new(b.finish()) as ArrayRef)
}

fn finish_string(builder: &mut Option<StringBuilder>) -> Option<ArrayRef> {
    builder.as_mut().map(|b| Arc::new(b.finish()) as ArrayRef)
}

fn finish_binary(builder: &mut Option<BinaryBuilder>) -> Option<ArrayRef> {
    builder.as_mut().map(|b| Arc::new(b.finish()) as ArrayRef)
}

/// Refuses a value Arrow's binary arrays cannot hold (with `i32` offsets); a batch is sent
/// once it holds [`BATCH_BYTES`], so only a value this large can overflow one.
fn check_size(spec: &ScanSpec, offset: u64, len: usize) -> Result<(), ScanError> {
    if len > i32::MAX as usize - BATCH_BYTES {
        return Err(ScanError::RecordTooLarge {
            file: spec.file.clone(),
            offset,
            len: len as u64,
        });
    }
    Ok(())
}
