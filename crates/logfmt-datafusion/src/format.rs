//! [`LogFormat`]: DataFusion's [`FileFormat`] for logs.

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::Session;
use datafusion::common::stats::Precision;
use datafusion::common::{Result, Statistics};
use datafusion::datasource::file_format::FileFormat;
use datafusion::datasource::file_format::file_compression_type::FileCompressionType;
use datafusion::datasource::physical_plan::{FileScanConfig, FileSource};
use datafusion::datasource::source::DataSourceExec;
use datafusion::datasource::table_schema::TableSchema;
use datafusion::physical_plan::ExecutionPlan;
use object_store::{ObjectMeta, ObjectStore};

use crate::options::LogOptions;
use crate::source::LogSource;
use crate::table::TableKind;

/// Logs (LevelDB's log format, RocksDB's recyclable and compressed records, logfmt's packs)
/// as one of the [tables](TableKind): DataFusion's [`FileFormat`], for a
/// [`ListingTable`](datafusion::datasource::listing::ListingTable) over a directory of logs or
/// flash images. [`register_logs`](crate::register_logs) registers the three tables at once.
///
/// The schema is fixed by the table ([`TableKind::schema`]), never inferred. The statistics
/// are the files' sizes: the number of records is not known without reading them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LogFormat {
    kind: TableKind,
    options: LogOptions,
}

impl LogFormat {
    /// The format of the table `kind`, read with `options`.
    pub fn new(kind: TableKind, options: LogOptions) -> Self {
        Self { kind, options }
    }

    /// The table.
    pub fn kind(&self) -> TableKind {
        self.kind
    }

    /// How the logs are read.
    pub fn options(&self) -> &LogOptions {
        &self.options
    }
}

#[async_trait]
impl FileFormat for LogFormat {
    fn get_ext(&self) -> String {
        "log".to_owned()
    }

    fn get_ext_with_compression(&self, _compression: &FileCompressionType) -> Result<String> {
        Ok(self.get_ext())
    }

    fn compression_type(&self) -> Option<FileCompressionType> {
        None
    }

    async fn infer_schema(
        &self,
        _state: &dyn Session,
        _store: &Arc<dyn ObjectStore>,
        _objects: &[ObjectMeta],
    ) -> Result<SchemaRef> {
        Ok(self.kind.schema())
    }

    async fn infer_stats(
        &self,
        _state: &dyn Session,
        _store: &Arc<dyn ObjectStore>,
        table_schema: SchemaRef,
        object: &ObjectMeta,
    ) -> Result<Statistics> {
        let mut statistics = Statistics::new_unknown(&table_schema);
        statistics.total_byte_size =
            usize::try_from(object.size).map_or(Precision::Absent, Precision::Inexact);
        Ok(statistics)
    }

    async fn create_physical_plan(
        &self,
        _state: &dyn Session,
        conf: FileScanConfig,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(DataSourceExec::from_data_source(conf))
    }

    fn file_source(&self, table_schema: TableSchema) -> Arc<dyn FileSource> {
        Arc::new(LogSource::new(table_schema, self.kind, self.options))
    }
}
