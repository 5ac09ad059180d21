//! [`LogTable`], the table provider of a log table, and [`LogCodec`], the extension codec that
//! serializes it and its scan (DataFusion's `datafusion-proto`): what a distributed engine
//! (Ballista) ships from its client to its scheduler (the logical plan) and from its scheduler
//! to its executors (the physical plan, with each partition's file ranges).

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::{Result, TableReference, internal_datafusion_err, not_impl_err};
use datafusion::datasource::TableType;
use datafusion::datasource::listing::ListingTable;
use datafusion::datasource::source::DataSourceExec;
use datafusion::datasource::table_schema::TableSchema;
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{Expr, Extension, LogicalPlan, TableProviderFilterPushDown};
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::logical_plan::LogicalExtensionCodec;
use datafusion_proto::physical_plan::from_proto::parse_protobuf_file_scan_config;
use datafusion_proto::physical_plan::to_proto::serialize_file_scan_config;
use datafusion_proto::physical_plan::{
    PhysicalExtensionCodec, PhysicalPlanDecodeContext, PhysicalProtoConverterExtension,
};
use datafusion_proto::protobuf::FileScanExecConf;
use logfmt_std::RecoveryMode;
use prost::Message;

use crate::log_table;
use crate::options::{ChunkFormatChoice, LogOptions};
use crate::source::LogSource;
use crate::table::TableKind;

/// A log table: the [`ListingTable`] of [`log_table`], with what made it (paths, file name
/// suffix, table, options), so that [`LogCodec`] can serialize it. Registered by
/// [`register_logs`](crate::register_logs).
#[derive(Debug)]
pub struct LogTable {
    paths: Vec<String>,
    extension: String,
    kind: TableKind,
    options: LogOptions,
    inner: ListingTable,
}

impl LogTable {
    /// The table `kind` over the files at `paths` whose names end with `extension`, read with
    /// `options` (see [`log_table`]).
    ///
    /// # Errors
    /// A path that is not a valid URL or path.
    pub fn try_new(
        paths: &[&str],
        extension: &str,
        kind: TableKind,
        options: LogOptions,
    ) -> Result<Self> {
        Ok(Self {
            paths: paths.iter().map(|p| (*p).to_owned()).collect(),
            extension: extension.to_owned(),
            kind,
            options,
            inner: log_table(paths, extension, kind, options)?,
        })
    }

    /// The table read.
    pub fn kind(&self) -> TableKind {
        self.kind
    }

    /// How the logs are read.
    pub fn options(&self) -> &LogOptions {
        &self.options
    }

    /// The paths (or URLs) of the table's directories and files.
    pub fn paths(&self) -> &[String] {
        &self.paths
    }
}

#[async_trait]
impl TableProvider for LogTable {
    fn schema(&self) -> SchemaRef {
        self.inner.schema()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.inner.scan(state, projection, filters, limit).await
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        self.inner.supports_filters_pushdown(filters)
    }
}

/// The serialized [`LogTable`].
#[derive(Clone, PartialEq, Message)]
struct TableNode {
    #[prost(string, repeated, tag = "1")]
    paths: Vec<String>,
    #[prost(string, tag = "2")]
    extension: String,
    #[prost(message, optional, tag = "3")]
    options: Option<OptionsNode>,
}

/// The serialized [`LogSource`] scan: its file scan (files, ranges, projection, limit) and
/// its table and options.
#[derive(Clone, PartialEq, Message)]
struct ScanNode {
    #[prost(message, optional, tag = "1")]
    conf: Option<FileScanExecConf>,
    #[prost(message, optional, tag = "2")]
    options: Option<OptionsNode>,
}

/// A table and its [`LogOptions`].
#[derive(Clone, PartialEq, Message)]
struct OptionsNode {
    /// [`TableKind::name`].
    #[prost(string, tag = "1")]
    kind: String,
    /// [`RecoveryMode::name`].
    #[prost(string, tag = "2")]
    recovery: String,
    /// [`ChunkFormatChoice`], as text.
    #[prost(string, tag = "3")]
    format: String,
    #[prost(uint32, optional, tag = "4")]
    erased: Option<u32>,
}

impl OptionsNode {
    fn new(kind: TableKind, options: &LogOptions) -> Self {
        Self {
            kind: kind.name().to_owned(),
            recovery: options.recovery.name().to_owned(),
            format: options.format.to_string(),
            erased: options.erased.map(u32::from),
        }
    }

    fn decode(&self) -> Result<(TableKind, LogOptions)> {
        let bad =
            |what: &str, value: &str| internal_datafusion_err!("logfmt: bad {what} {value:?}");
        let kind = self
            .kind
            .parse::<TableKind>()
            .map_err(|_| bad("table", &self.kind))?;
        let recovery = self
            .recovery
            .parse::<RecoveryMode>()
            .map_err(|_| bad("recovery mode", &self.recovery))?;
        let format = self
            .format
            .parse::<ChunkFormatChoice>()
            .map_err(|_| bad("chunk format", &self.format))?;
        let erased = self
            .erased
            .map(|byte| u8::try_from(byte).map_err(|_| bad("erased byte", &byte.to_string())))
            .transpose()?;
        let options = LogOptions::new()
            .recovery(recovery)
            .format(format)
            .erased(erased);
        Ok((kind, options))
    }
}

/// Serializes [`LogTable`]s (a [`LogicalExtensionCodec`]) and their scans (a
/// [`PhysicalExtensionCodec`]: a `DataSourceExec` of a [`LogSource`], with its files, ranges,
/// projection and limit), for `datafusion-proto` and the engines built on it (Ballista's
/// scheduler and executors take codecs of both kinds). Anything else is refused
/// (`NotImplemented`), for another codec to take.
///
/// ```
/// use std::sync::Arc;
/// use datafusion::prelude::SessionContext;
/// use datafusion_proto::bytes::{physical_plan_from_bytes_with_extension_codec, physical_plan_to_bytes_with_extension_codec};
/// use logfmt_datafusion::{LogCodec, LogOptions, register_logs};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> datafusion::error::Result<()> {
/// let dir = tempfile::tempdir()?;
/// let ctx = SessionContext::new();
/// register_logs(&ctx, &[dir.path().to_str().unwrap()], "", LogOptions::new()).await?;
/// let plan = ctx.sql("SELECT count(*) FROM logs").await?.create_physical_plan().await?;
/// let bytes = physical_plan_to_bytes_with_extension_codec(plan, &LogCodec)?;
/// let back = physical_plan_from_bytes_with_extension_codec(&bytes, &ctx.task_ctx(), &LogCodec)?;
/// assert_eq!(datafusion::physical_plan::collect(back, ctx.task_ctx()).await?.len(), 1);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct LogCodec;

impl fmt::Display for LogCodec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("logfmt")
    }
}

impl LogicalExtensionCodec for LogCodec {
    fn try_decode(
        &self,
        _buf: &[u8],
        _inputs: &[LogicalPlan],
        _ctx: &TaskContext,
    ) -> Result<Extension> {
        not_impl_err!("logfmt has no logical plan nodes")
    }

    fn try_encode(&self, _node: &Extension, _buf: &mut Vec<u8>) -> Result<()> {
        not_impl_err!("logfmt has no logical plan nodes")
    }

    fn try_decode_table_provider(
        &self,
        buf: &[u8],
        _table_ref: &TableReference,
        _schema: SchemaRef,
        _ctx: &TaskContext,
    ) -> Result<Arc<dyn TableProvider>> {
        let node = TableNode::decode(buf)
            .map_err(|e| internal_datafusion_err!("logfmt: bad table node: {e}"))?;
        let (kind, options) = node
            .options
            .as_ref()
            .ok_or_else(|| internal_datafusion_err!("logfmt: a table node without options"))?
            .decode()?;
        let paths: Vec<&str> = node.paths.iter().map(String::as_str).collect();
        Ok(Arc::new(LogTable::try_new(
            &paths,
            &node.extension,
            kind,
            options,
        )?))
    }

    fn try_encode_table_provider(
        &self,
        _table_ref: &TableReference,
        node: Arc<dyn TableProvider>,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        let Some(table) = (node.as_ref() as &dyn std::any::Any).downcast_ref::<LogTable>() else {
            return not_impl_err!("not a logfmt table");
        };
        TableNode {
            paths: table.paths.clone(),
            extension: table.extension.clone(),
            options: Some(OptionsNode::new(table.kind, &table.options)),
        }
        .encode(buf)
        .map_err(|e| internal_datafusion_err!("logfmt: encoding a table: {e}"))
    }
}

impl PhysicalExtensionCodec for LogCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        _inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let node = ScanNode::decode(buf)
            .map_err(|e| internal_datafusion_err!("logfmt: bad scan node: {e}"))?;
        let (kind, options) = node
            .options
            .as_ref()
            .ok_or_else(|| internal_datafusion_err!("logfmt: a scan node without options"))?
            .decode()?;
        let conf = node
            .conf
            .as_ref()
            .ok_or_else(|| internal_datafusion_err!("logfmt: a scan node without files"))?;
        let source = Arc::new(LogSource::new(
            TableSchema::from(kind.schema()),
            kind,
            options,
        ));
        let decode = PhysicalPlanDecodeContext::new(ctx, self);
        let config = parse_protobuf_file_scan_config(conf, &decode, proto_converter, source)?;
        Ok(DataSourceExec::from_data_source(config))
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<()> {
        let Some((config, source)) = node
            .downcast_ref::<DataSourceExec>()
            .and_then(DataSourceExec::downcast_to_file_source::<LogSource>)
        else {
            return not_impl_err!("not a logfmt scan");
        };
        let conf = serialize_file_scan_config(config, self, proto_converter)?;
        ScanNode {
            conf: Some(conf),
            options: Some(OptionsNode::new(source.kind(), source.options())),
        }
        .encode(buf)
        .map_err(|e| internal_datafusion_err!("logfmt: encoding a scan: {e}"))
    }
}
