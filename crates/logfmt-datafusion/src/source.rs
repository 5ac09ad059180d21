//! [`LogSource`] (DataFusion's [`FileSource`]) and [`LogOpener`] (its [`FileOpener`]): a
//! scan of logs, file by file and range by range, with block-aligned ranges.

use std::fmt;
use std::io::{self, Read, Seek, SeekFrom};
use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::Result;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::{
    FileGroup, FileOpenFuture, FileOpener, FileScanConfig, FileSource,
};
use datafusion::datasource::projection::{ProjectionOpener, SplitProjection};
use datafusion::datasource::table_schema::TableSchema;
use datafusion::error::DataFusionError;
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::physical_expr::projection::ProjectionExprs;
use datafusion::physical_expr::{LexOrdering, PhysicalExpr};
use datafusion::physical_plan::DisplayFormatType;
use datafusion::physical_plan::metrics::ExecutionPlanMetricsSet;
use futures::StreamExt;
use logfmt_std::advanced::BLOCK_SIZE;
use object_store::path::Path;
use object_store::{GetOptions, GetResultPayload, ObjectStore};

use crate::error::ScanError;
use crate::options::LogOptions;
use crate::scan::{ScanSpec, scan};
use crate::table::TableKind;

/// Batches in flight between a scan's thread and the query, per scan.
const CHANNEL: usize = 2;

/// The bytes an object store is read in, when the file is not local.
const WINDOW: u64 = 4 << 20;

/// A scan of logs as one of the [tables](TableKind): DataFusion's [`FileSource`] for
/// [`LogFormat`](crate::LogFormat). Each file, or each byte range of a file
/// ([`PartitionedFile::range`]), is read by a [`LogReader`](logfmt_std::advanced::LogReader) limited to
/// that range ([`LogReaderOptions::range`](logfmt_std::LogReaderOptions::range)): the records that
/// start in it, the damage that starts in it. Ranges that cover a file without overlapping
/// read every record and every damaged region exactly once, as a sequential read does.
///
/// Projection is pushed down (a column not selected is not built; the payload is not copied
/// unless selected), and so is a limit (each scan stops once it has the rows asked for).
#[derive(Debug, Clone)]
pub struct LogSource {
    kind: TableKind,
    options: LogOptions,
    table_schema: TableSchema,
    projection: SplitProjection,
    batch_size: Option<usize>,
    metrics: ExecutionPlanMetricsSet,
}

impl LogSource {
    /// A scan of `kind` with `options`, over files of `table_schema` (its file schema is
    /// `kind`'s [schema](TableKind::schema); partition columns may follow).
    pub fn new(table_schema: TableSchema, kind: TableKind, options: LogOptions) -> Self {
        Self {
            projection: SplitProjection::unprojected(&table_schema),
            kind,
            options,
            table_schema,
            batch_size: None,
            metrics: ExecutionPlanMetricsSet::new(),
        }
    }

    /// The table scanned.
    pub fn kind(&self) -> TableKind {
        self.kind
    }

    /// How the logs are read.
    pub fn options(&self) -> &LogOptions {
        &self.options
    }

    /// Whether a file is cut into byte ranges: not for point-in-time recovery (which stops at
    /// a file's first damage, seen only by a sequential read), and not for the damage table.
    ///
    /// `logfmt_std`'s range readers return every record and report every drop exactly once,
    /// but across a range boundary a record's drop and the damage that cut it may come in the
    /// other order. So the damage table reads each file whole (in one partition; files are
    /// still read in parallel), and equals a sequential read, row for row.
    pub fn splittable(&self) -> bool {
        self.options.splittable() && self.kind != TableKind::Damage
    }

    /// The columns of the table's schema that are built, in output order.
    pub fn file_columns(&self) -> &[usize] {
        &self.projection.file_indices
    }
}

impl FileSource for LogSource {
    fn create_file_opener(
        &self,
        object_store: Arc<dyn ObjectStore>,
        base_config: &FileScanConfig,
        _partition: usize,
    ) -> Result<Arc<dyn FileOpener>> {
        let file_schema = self.table_schema.file_schema();
        let indices = self.projection.file_indices.clone();
        let opener = Arc::new(LogOpener {
            kind: self.kind,
            options: self.options,
            schema: Arc::new(file_schema.project(&indices)?),
            projection: indices,
            batch_size: self.batch_size.unwrap_or(8192),
            limit: base_config.limit,
            store: object_store,
            url: base_config.object_store_url.clone(),
        });
        ProjectionOpener::try_new(self.projection.clone(), opener, file_schema)
    }

    fn table_schema(&self) -> &TableSchema {
        &self.table_schema
    }

    fn with_batch_size(&self, batch_size: usize) -> Arc<dyn FileSource> {
        let mut source = self.clone();
        source.batch_size = Some(batch_size);
        Arc::new(source)
    }

    fn try_pushdown_projection(
        &self,
        projection: &ProjectionExprs,
    ) -> Result<Option<Arc<dyn FileSource>>> {
        let mut source = self.clone();
        let merged = self.projection.source.try_merge(projection)?;
        source.projection = SplitProjection::new(self.table_schema.file_schema(), &merged);
        Ok(Some(Arc::new(source)))
    }

    fn projection(&self) -> Option<&ProjectionExprs> {
        Some(&self.projection.source)
    }

    fn metrics(&self) -> &ExecutionPlanMetricsSet {
        &self.metrics
    }

    fn file_type(&self) -> &str {
        "logfmt"
    }

    fn fmt_extra(&self, t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match t {
            DisplayFormatType::Default | DisplayFormatType::Verbose => write!(
                f,
                ", table={}, recovery={}, format={}",
                self.kind, self.options.recovery, self.options.format
            ),
            DisplayFormatType::TreeRender => Ok(()),
        }
    }

    fn supports_repartitioning(&self) -> bool {
        self.splittable()
    }

    /// Cuts the files into byte ranges at block boundaries (32 KiB), about the same number
    /// of bytes in each of `target_partitions` groups; `None` if the files hold fewer than
    /// `repartition_file_min_size` bytes, or the files are not cut
    /// ([`splittable`](LogSource::splittable)).
    fn repartitioned(
        &self,
        target_partitions: usize,
        repartition_file_min_size: usize,
        _output_ordering: Option<LexOrdering>,
        config: &FileScanConfig,
    ) -> Result<Option<FileScanConfig>> {
        if !self.splittable() || target_partitions <= 1 {
            return Ok(None);
        }
        let files: Vec<&PartitionedFile> = config
            .file_groups
            .iter()
            .flat_map(FileGroup::iter)
            .collect();
        let Some(groups) =
            block_aligned_groups(&files, target_partitions, repartition_file_min_size)
        else {
            return Ok(None);
        };
        let mut config = config.clone();
        config.file_groups = groups;
        Ok(Some(config))
    }

    fn apply_expressions(
        &self,
        f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        datafusion::physical_plan::apply_expression_roots(self.projection.source.iter(), f)
    }
}

/// The byte range of `file` that is read: its [`PartitionedFile::range`], or all of it.
fn file_range(file: &PartitionedFile) -> Range<u64> {
    match &file.range {
        Some(range) => {
            let start = u64::try_from(range.start).unwrap_or(0);
            start..u64::try_from(range.end).unwrap_or(0).max(start)
        }
        None => 0..file.object_meta.size,
    }
}

/// `files` (each with the range it covers) regrouped into about `target` groups of ranges cut
/// at block boundaries; `None` if they hold fewer than `min_size` bytes or would not be cut.
pub(crate) fn block_aligned_groups(
    files: &[&PartitionedFile],
    target: usize,
    min_size: usize,
) -> Option<Vec<FileGroup>> {
    let block = BLOCK_SIZE as u64;
    let total: u64 = files
        .iter()
        .map(|f| file_range(f))
        .map(|r| r.end - r.start)
        .sum();
    if total == 0 || total < min_size as u64 || target <= 1 {
        return None;
    }
    // Bytes per group: a whole number of blocks, at least one.
    let per = total
        .div_ceil(target as u64)
        .div_ceil(block)
        .max(1)
        .saturating_mul(block);
    let mut groups = Vec::new();
    let mut group = Vec::new();
    let mut filled = 0u64;
    for file in files {
        let Range { start, end } = file_range(file);
        let mut pos = start;
        while pos < end {
            let mut cut = end.min(pos.saturating_add(per - filled));
            if cut < end {
                // At a block boundary of the file: back to the last one, or on to the next
                // one if that is not after `pos`.
                cut -= cut % block;
                if cut <= pos {
                    cut = end.min((pos - pos % block).saturating_add(block));
                }
            }
            let start = i64::try_from(pos).ok()?;
            let stop = i64::try_from(cut).ok()?;
            group.push((*file).clone().with_range(start, stop));
            filled += cut - pos;
            pos = cut;
            if filled >= per {
                groups.push(FileGroup::new(std::mem::take(&mut group)));
                filled = 0;
            }
        }
    }
    if !group.is_empty() {
        groups.push(FileGroup::new(group));
    }
    (groups.len() > 1).then_some(groups)
}

/// Opens each file (or range) of a [`LogSource`] scan: DataFusion's [`FileOpener`]. The log
/// is read on a blocking thread, and its batches sent to the query as they are built.
#[derive(Debug)]
pub struct LogOpener {
    kind: TableKind,
    options: LogOptions,
    schema: SchemaRef,
    projection: Vec<usize>,
    batch_size: usize,
    limit: Option<usize>,
    store: Arc<dyn ObjectStore>,
    url: ObjectStoreUrl,
}

impl FileOpener for LogOpener {
    fn open(&self, file: PartitionedFile) -> Result<FileOpenFuture> {
        let location = file.object_meta.location.clone();
        let size = file.object_meta.size;
        let spec = ScanSpec {
            kind: self.kind,
            options: self.options,
            file: display_name(&self.url, &location),
            range: file.range.is_some().then(|| file_range(&file)),
            projection: self.projection.clone(),
            schema: Arc::clone(&self.schema),
            batch_size: self.batch_size,
            limit: self.limit,
        };
        let store = Arc::clone(&self.store);
        Ok(Box::pin(async move {
            // A local file is read with `pread`s of its own; any other object in windows.
            let local = match store.get_opts(&location, GetOptions::default()).await {
                Ok(result) => match result.payload {
                    GetResultPayload::File(_, path) => Some(path),
                    GetResultPayload::Stream(_) => None,
                },
                Err(error) => return Err(DataFusionError::from(error)),
            };
            let (tx, mut rx) = tokio::sync::mpsc::channel(CHANNEL);
            let handle = tokio::runtime::Handle::current();
            let task = tokio::task::spawn_blocking(move || {
                let emit = |batch| tx.blocking_send(Ok(batch)).is_ok();
                let result = match local {
                    Some(path) => scan(
                        || std::fs::File::open(&path),
                        Some(path.as_path()),
                        &spec,
                        emit,
                    ),
                    None => {
                        let open = || {
                            Ok(ObjectReader {
                                store: Arc::clone(&store),
                                location: location.clone(),
                                size,
                                pos: 0,
                                window: Bytes::new(),
                                window_start: 0,
                                handle: handle.clone(),
                            })
                        };
                        scan(open, None, &spec, emit)
                    }
                };
                if let Err(error) = result {
                    // The receiver may be gone (the query stopped): nothing to tell then.
                    let _ = tx.blocking_send(Err(DataFusionError::from(error)));
                }
            });
            let batches = futures::stream::poll_fn(move |cx| rx.poll_recv(cx));
            // A scan whose thread panicked ends the stream with an error, never short.
            let end = futures::stream::once(async move {
                match task.await {
                    Ok(()) => None,
                    Err(_) => Some(Err(DataFusionError::from(ScanError::Stopped))),
                }
            })
            .filter_map(futures::future::ready);
            Ok(batches.chain(end).boxed())
        }))
    }
}

/// The `file` column's value for `location` in the store at `url`: a local file's path, or
/// the object's URL.
fn display_name(url: &ObjectStoreUrl, location: &Path) -> String {
    if url.as_str() == "file:///" {
        format!("/{location}")
    } else {
        format!("{}{location}", url.as_str())
    }
}

/// A reader of an object in an object store, in windows of [`WINDOW`] bytes, for the blocking
/// thread of a scan (it waits for each window on the runtime `handle`).
struct ObjectReader {
    store: Arc<dyn ObjectStore>,
    location: Path,
    size: u64,
    pos: u64,
    window: Bytes,
    window_start: u64,
    handle: tokio::runtime::Handle,
}

impl Read for ObjectReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.pos >= self.size || buf.is_empty() {
            return Ok(0);
        }
        let window_end = self.window_start + self.window.len() as u64;
        if self.pos < self.window_start || self.pos >= window_end {
            let range = self.pos..self.size.min(self.pos.saturating_add(WINDOW));
            let options = GetOptions::new().with_range(Some(range.clone()));
            let store = Arc::clone(&self.store);
            let location = self.location.clone();
            self.window = self
                .handle
                .block_on(async move { store.get_opts(&location, options).await?.bytes().await })
                .map_err(io::Error::other)?;
            self.window_start = range.start;
            if self.window.is_empty() {
                return Ok(0);
            }
        }
        let at = usize::try_from(self.pos - self.window_start).map_err(io::Error::other)?;
        let available = self.window.get(at..).unwrap_or_default();
        let n = available.len().min(buf.len());
        buf[..n].copy_from_slice(&available[..n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for ObjectReader {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let target = match to {
            SeekFrom::Start(at) => Some(at),
            SeekFrom::Current(delta) => self.pos.checked_add_signed(delta),
            SeekFrom::End(delta) => self.size.checked_add_signed(delta),
        };
        self.pos = target.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "seek before the start of the object",
            )
        })?;
        Ok(self.pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(sizes: &[u64]) -> Vec<PartitionedFile> {
        sizes
            .iter()
            .enumerate()
            .map(|(i, &size)| PartitionedFile::new(format!("f{i}"), size))
            .collect()
    }

    /// The ranges of each file, in order, and the groups' byte counts.
    type Cut = (Vec<Vec<(u64, u64)>>, Vec<u64>);

    fn cut(sizes: &[u64], target: usize) -> Option<Cut> {
        let files = files(sizes);
        let refs: Vec<&PartitionedFile> = files.iter().collect();
        let groups = block_aligned_groups(&refs, target, 0)?;
        let mut per_file = vec![Vec::new(); sizes.len()];
        let mut bytes = Vec::new();
        for group in &groups {
            let mut n = 0;
            for file in group.iter() {
                let i: usize = file.object_meta.location.as_ref()[1..].parse().unwrap();
                let range = file_range(file);
                n += range.end - range.start;
                per_file[i].push((range.start, range.end));
            }
            bytes.push(n);
        }
        Some((per_file, bytes))
    }

    #[test]
    fn ranges_cover_each_file_at_block_boundaries() {
        let b = BLOCK_SIZE as u64;
        for sizes in [
            vec![10 * b],
            vec![10 * b + 5],
            vec![3 * b + 1, 0, 7 * b - 3, b, 1],
            vec![100 * b + 17, 50 * b],
        ] {
            for target in 2..=9 {
                let Some((per_file, bytes)) = cut(&sizes, target) else {
                    continue;
                };
                assert!(bytes.len() <= target, "{sizes:?} {target}: {bytes:?}");
                for (ranges, &size) in per_file.iter().zip(&sizes) {
                    let mut at = 0;
                    for &(start, end) in ranges {
                        assert_eq!(start, at, "{sizes:?} {target}: {ranges:?}");
                        assert!(end > start);
                        assert!(end == size || end % b == 0, "{ranges:?}");
                        at = end;
                    }
                    assert_eq!(at, size, "{sizes:?} {target}: {ranges:?}");
                }
            }
        }
    }

    #[test]
    fn small_or_single_partitions_are_not_cut() {
        assert!(cut(&[5 * BLOCK_SIZE as u64], 1).is_none());
        assert!(cut(&[0, 0], 4).is_none());
        let files = files(&[1000]);
        let refs: Vec<&PartitionedFile> = files.iter().collect();
        assert!(block_aligned_groups(&refs, 4, 2000).is_none());
        // Less than a block: one range, so nothing to regroup.
        assert!(block_aligned_groups(&refs, 4, 0).is_none());
    }
}
