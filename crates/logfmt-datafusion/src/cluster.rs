//! Log tables on a [Ballista](https://datafusion.apache.org/ballista/) cluster: a scheduler,
//! executors, and a client, each with [`ClusterCodec`], the extension codec that ships the
//! tables (client to scheduler) and their scans (scheduler to executors).
//!
//! The client registers the tables as on one machine ([`register_logs`](crate::register_logs))
//! in the context of [`remote_context`]; its logical plan goes to the scheduler, which lists the
//! files, cuts them into block-aligned ranges and sends each executor the scans of its
//! partitions. Files are read from the paths in the plan: the scheduler and every executor must
//! see the logs at the same path (a shared mount), and the client's paths are sent as they are
//! (absolute paths: the client's working directory means nothing elsewhere).

use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use ballista::extension::{SessionConfigExt, SessionContextExt};
use ballista_core::error::BallistaError;
use ballista_core::serde::{BallistaLogicalExtensionCodec, BallistaPhysicalExtensionCodec};
use ballista_executor::executor_process::{ExecutorProcessConfig, start_executor_process};
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::{SchedulerConfig, TaskDistributionPolicy};
use ballista_scheduler::scheduler_process::start_server;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::TableProvider;
use datafusion::common::{DataFusionError, Result, TableReference, internal_datafusion_err};
use datafusion::datasource::file_format::FileFormatFactory;
use datafusion::execution::TaskContext;
use datafusion::execution::session_state::SessionStateBuilder;
use datafusion::logical_expr::{AggregateUDF, Extension, LogicalPlan, ScalarUDF, WindowUDF};
use datafusion::physical_expr_common::physical_expr::proto_decode::PhysicalExprDecodeCtx;
use datafusion::physical_expr_common::physical_expr::proto_encode::PhysicalExprEncodeCtx;
use datafusion::physical_plan::{ExecutionPlan, PhysicalExpr};
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_proto::logical_plan::LogicalExtensionCodec;
use datafusion_proto::physical_plan::{PhysicalExtensionCodec, PhysicalProtoConverterExtension};

use crate::codec::LogCodec;

/// The first byte of what [`ClusterCodec`] writes: the bytes after it are Ballista's.
const BALLISTA: u8 = 0;
/// The first byte of what [`ClusterCodec`] writes: the bytes after it are [`LogCodec`]'s.
const LOGFMT: u8 = 1;

/// The extension codec of a Ballista cluster reading logs: [`LogCodec`] for the log tables and
/// scans, Ballista's own codecs (`BallistaLogicalExtensionCodec`,
/// `BallistaPhysicalExtensionCodec`: its shuffle nodes, cache node and file formats) for the
/// rest. Plan nodes and tables are written with one leading byte saying whose they are; file
/// formats and functions are Ballista's alone. The client, the scheduler and every executor
/// must use it ([`remote_context`], [`run_scheduler`], [`run_executor`]).
///
/// ```
/// use std::sync::Arc;
/// use datafusion::prelude::SessionContext;
/// use datafusion_proto::bytes::{physical_plan_from_bytes_with_extension_codec, physical_plan_to_bytes_with_extension_codec};
/// use logfmt_datafusion::{ClusterCodec, LogOptions, register_logs};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> datafusion::error::Result<()> {
/// let dir = tempfile::tempdir()?;
/// let ctx = SessionContext::new();
/// register_logs(&ctx, &[dir.path().to_str().unwrap()], "", LogOptions::new()).await?;
/// let plan = ctx.sql("SELECT count(*) FROM logs").await?.create_physical_plan().await?;
/// let codec = ClusterCodec::default();
/// let bytes = physical_plan_to_bytes_with_extension_codec(plan, &codec)?;
/// let back = physical_plan_from_bytes_with_extension_codec(&bytes, &ctx.task_ctx(), &codec)?;
/// assert_eq!(datafusion::physical_plan::collect(back, ctx.task_ctx()).await?.len(), 1);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Default)]
pub struct ClusterCodec {
    logical: BallistaLogicalExtensionCodec,
    physical: BallistaPhysicalExtensionCodec,
}

impl ClusterCodec {
    /// The codec (the same as `ClusterCodec::default()`).
    pub fn new() -> Self {
        Self::default()
    }
}

/// Writes `logfmt`'s encoding after [`LOGFMT`], or, where it is not `logfmt`'s node
/// (`NotImplemented`), `ballista`'s after [`BALLISTA`]. Any other error of `logfmt`'s is the
/// result (a log scan that cannot be written is not given to Ballista).
fn encode_tagged(
    buf: &mut Vec<u8>,
    logfmt: impl FnOnce(&mut Vec<u8>) -> Result<()>,
    ballista: impl FnOnce(&mut Vec<u8>) -> Result<()>,
) -> Result<()> {
    let start = buf.len();
    buf.push(LOGFMT);
    match logfmt(buf) {
        Ok(()) => Ok(()),
        Err(DataFusionError::NotImplemented(_)) => {
            buf.truncate(start);
            buf.push(BALLISTA);
            ballista(buf)
        }
        Err(error) => {
            buf.truncate(start);
            Err(error)
        }
    }
}

/// Whose bytes `buf` holds, and the bytes.
enum Tagged<'a> {
    Logfmt(&'a [u8]),
    Ballista(&'a [u8]),
}

fn tagged(buf: &[u8]) -> Result<Tagged<'_>> {
    match buf.split_first() {
        Some((&LOGFMT, rest)) => Ok(Tagged::Logfmt(rest)),
        Some((&BALLISTA, rest)) => Ok(Tagged::Ballista(rest)),
        Some((tag, _)) => Err(internal_datafusion_err!(
            "logfmt cluster codec: unknown tag {tag}"
        )),
        None => Err(internal_datafusion_err!(
            "logfmt cluster codec: an empty node"
        )),
    }
}

impl LogicalExtensionCodec for ClusterCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[LogicalPlan],
        ctx: &TaskContext,
    ) -> Result<Extension> {
        match tagged(buf)? {
            Tagged::Logfmt(buf) => LogicalExtensionCodec::try_decode(&LogCodec, buf, inputs, ctx),
            Tagged::Ballista(buf) => self.logical.try_decode(buf, inputs, ctx),
        }
    }

    fn try_encode(&self, node: &Extension, buf: &mut Vec<u8>) -> Result<()> {
        encode_tagged(
            buf,
            |buf| LogicalExtensionCodec::try_encode(&LogCodec, node, buf),
            |buf| self.logical.try_encode(node, buf),
        )
    }

    fn try_decode_table_provider(
        &self,
        buf: &[u8],
        table_ref: &TableReference,
        schema: SchemaRef,
        ctx: &TaskContext,
    ) -> Result<Arc<dyn TableProvider>> {
        match tagged(buf)? {
            Tagged::Logfmt(buf) => LogCodec.try_decode_table_provider(buf, table_ref, schema, ctx),
            Tagged::Ballista(buf) => self
                .logical
                .try_decode_table_provider(buf, table_ref, schema, ctx),
        }
    }

    fn try_encode_table_provider(
        &self,
        table_ref: &TableReference,
        node: Arc<dyn TableProvider>,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        let other = Arc::clone(&node);
        encode_tagged(
            buf,
            |buf| LogCodec.try_encode_table_provider(table_ref, node, buf),
            |buf| {
                self.logical
                    .try_encode_table_provider(table_ref, other, buf)
            },
        )
    }

    fn try_decode_file_format(
        &self,
        buf: &[u8],
        ctx: &TaskContext,
    ) -> Result<Arc<dyn FileFormatFactory>> {
        self.logical.try_decode_file_format(buf, ctx)
    }

    fn try_encode_file_format(
        &self,
        buf: &mut Vec<u8>,
        node: Arc<dyn FileFormatFactory>,
    ) -> Result<()> {
        self.logical.try_encode_file_format(buf, node)
    }

    fn try_decode_udf(&self, name: &str, buf: &[u8]) -> Result<Arc<ScalarUDF>> {
        LogicalExtensionCodec::try_decode_udf(&self.logical, name, buf)
    }

    fn try_encode_udf(&self, node: &ScalarUDF, buf: &mut Vec<u8>) -> Result<()> {
        LogicalExtensionCodec::try_encode_udf(&self.logical, node, buf)
    }

    fn try_decode_udaf(&self, name: &str, buf: &[u8]) -> Result<Arc<AggregateUDF>> {
        LogicalExtensionCodec::try_decode_udaf(&self.logical, name, buf)
    }

    fn try_encode_udaf(&self, node: &AggregateUDF, buf: &mut Vec<u8>) -> Result<()> {
        LogicalExtensionCodec::try_encode_udaf(&self.logical, node, buf)
    }

    fn try_decode_udwf(&self, name: &str, buf: &[u8]) -> Result<Arc<WindowUDF>> {
        LogicalExtensionCodec::try_decode_udwf(&self.logical, name, buf)
    }

    fn try_encode_udwf(&self, node: &WindowUDF, buf: &mut Vec<u8>) -> Result<()> {
        LogicalExtensionCodec::try_encode_udwf(&self.logical, node, buf)
    }
}

impl PhysicalExtensionCodec for ClusterCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        match tagged(buf)? {
            Tagged::Logfmt(buf) => {
                PhysicalExtensionCodec::try_decode(&LogCodec, buf, inputs, ctx, proto_converter)
            }
            Tagged::Ballista(buf) => self.physical.try_decode(buf, inputs, ctx, proto_converter),
        }
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<()> {
        let other = Arc::clone(&node);
        encode_tagged(
            buf,
            |buf| PhysicalExtensionCodec::try_encode(&LogCodec, node, buf, proto_converter),
            |buf| self.physical.try_encode(other, buf, proto_converter),
        )
    }

    fn try_decode_udf(&self, name: &str, buf: &[u8]) -> Result<Arc<ScalarUDF>> {
        PhysicalExtensionCodec::try_decode_udf(&self.physical, name, buf)
    }

    fn try_encode_udf(&self, node: &ScalarUDF, buf: &mut Vec<u8>) -> Result<()> {
        PhysicalExtensionCodec::try_encode_udf(&self.physical, node, buf)
    }

    fn try_decode_expr(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn PhysicalExpr>],
        ctx: &PhysicalExprDecodeCtx<'_>,
    ) -> Result<Arc<dyn PhysicalExpr>> {
        self.physical.try_decode_expr(buf, inputs, ctx)
    }

    fn try_encode_expr(
        &self,
        node: &Arc<dyn PhysicalExpr>,
        buf: &mut Vec<u8>,
        ctx: &PhysicalExprEncodeCtx<'_>,
    ) -> Result<()> {
        self.physical.try_encode_expr(node, buf, ctx)
    }

    fn try_decode_udaf(&self, name: &str, buf: &[u8]) -> Result<Arc<AggregateUDF>> {
        PhysicalExtensionCodec::try_decode_udaf(&self.physical, name, buf)
    }

    fn try_encode_udaf(&self, node: &AggregateUDF, buf: &mut Vec<u8>) -> Result<()> {
        PhysicalExtensionCodec::try_encode_udaf(&self.physical, node, buf)
    }

    fn try_decode_udwf(&self, name: &str, buf: &[u8]) -> Result<Arc<WindowUDF>> {
        PhysicalExtensionCodec::try_decode_udwf(&self.physical, name, buf)
    }

    fn try_encode_udwf(&self, node: &WindowUDF, buf: &mut Vec<u8>) -> Result<()> {
        PhysicalExtensionCodec::try_encode_udwf(&self.physical, node, buf)
    }
}

/// A session of a Ballista cluster whose scheduler listens at `url` (`df://host:port`), with
/// `config` (its settings go to the scheduler with each query) and [`ClusterCodec`]. Register
/// the tables in it ([`register_logs`](crate::register_logs)) with absolute paths that the
/// scheduler and the executors see.
///
/// No connection is made here: the first query connects.
///
/// # Errors
/// A URL without a host.
pub async fn remote_context(url: &str, config: SessionConfig) -> Result<SessionContext> {
    let codec = Arc::new(ClusterCodec::new());
    let config = config
        .with_ballista_logical_extension_codec(Arc::clone(&codec) as _)
        .with_ballista_physical_extension_codec(codec);
    let state = SessionStateBuilder::new()
        .with_config(config)
        .with_default_features()
        .build();
    SessionContext::remote_with_state(url, state).await
}

/// How tasks are given to executors ([`SchedulerOptions::task_distribution`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum TaskDistribution {
    /// Fill an executor's task slots before the next's (Ballista's default).
    #[default]
    Bias,
    /// One task to each executor in turn.
    RoundRobin,
}

/// What [`run_scheduler`] runs.
#[derive(Debug, Clone)]
pub struct SchedulerOptions {
    bind: SocketAddr,
    external_host: Option<String>,
    task_distribution: TaskDistribution,
}

impl SchedulerOptions {
    /// A scheduler listening at `bind` (executors and clients connect there).
    pub fn new(bind: SocketAddr) -> Self {
        Self {
            bind,
            external_host: None,
            task_distribution: TaskDistribution::default(),
        }
    }

    /// The host name others reach this scheduler by (default `localhost`).
    pub fn external_host(mut self, host: Option<String>) -> Self {
        self.external_host = host;
        self
    }

    /// How tasks are given to executors.
    pub fn task_distribution(mut self, distribution: TaskDistribution) -> Self {
        self.task_distribution = distribution;
        self
    }
}

/// What [`run_executor`] runs.
#[derive(Debug, Clone)]
pub struct ExecutorOptions {
    scheduler: (String, u16),
    bind_host: String,
    external_host: Option<String>,
    port: u16,
    grpc_port: u16,
    work_dir: Option<PathBuf>,
    concurrent_tasks: usize,
}

impl ExecutorOptions {
    /// An executor of the scheduler at `scheduler_host`:`scheduler_port`, serving its results
    /// (Arrow Flight) on `port` and taking tasks (gRPC) on `grpc_port`, of the address
    /// `127.0.0.1` unless [`bind_host`](Self::bind_host) says otherwise.
    pub fn new(scheduler_host: &str, scheduler_port: u16, port: u16, grpc_port: u16) -> Self {
        Self {
            scheduler: (scheduler_host.to_owned(), scheduler_port),
            bind_host: "127.0.0.1".to_owned(),
            external_host: None,
            port,
            grpc_port,
            work_dir: None,
            concurrent_tasks: 0,
        }
    }

    /// The address the executor listens on (`0.0.0.0`: every interface).
    pub fn bind_host(mut self, host: &str) -> Self {
        host.clone_into(&mut self.bind_host);
        self
    }

    /// The host name the scheduler and clients reach this executor by (default: the address
    /// the scheduler sees it connect from).
    pub fn external_host(mut self, host: Option<String>) -> Self {
        self.external_host = host;
        self
    }

    /// Where the executor keeps its shuffle files (default: a new temporary directory).
    pub fn work_dir(mut self, dir: Option<PathBuf>) -> Self {
        self.work_dir = dir;
        self
    }

    /// Tasks run at once (default 0: the number of CPUs).
    pub fn concurrent_tasks(mut self, tasks: usize) -> Self {
        self.concurrent_tasks = tasks;
        self
    }
}

/// Why [`run_scheduler`] or [`run_executor`] stopped.
#[derive(Debug)]
#[non_exhaustive]
pub enum ClusterError {
    /// The scheduler failed (its address could not be bound, ...).
    Scheduler(BallistaError),
    /// The executor failed (the scheduler could not be reached, a port could not be bound,
    /// ...).
    Executor(BallistaError),
    /// The work directory is not a UTF-8 path.
    WorkDirNotUtf8(PathBuf),
}

impl fmt::Display for ClusterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Scheduler(error) => write!(f, "the scheduler failed: {error}"),
            Self::Executor(error) => write!(f, "the executor failed: {error}"),
            Self::WorkDirNotUtf8(dir) => {
                write!(f, "{}: the work directory is not UTF-8", dir.display())
            }
        }
    }
}

impl std::error::Error for ClusterError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Scheduler(error) | Self::Executor(error) => Some(error),
            Self::WorkDirNotUtf8(_) => None,
        }
    }
}

/// Runs a Ballista scheduler with [`ClusterCodec`] until it fails (it does not stop
/// otherwise).
///
/// # Errors
/// Its address cannot be bound; the scheduler stops with an error.
pub async fn run_scheduler(options: &SchedulerOptions) -> Result<(), ClusterError> {
    let codec = Arc::new(ClusterCodec::new());
    let mut config = SchedulerConfig {
        bind_host: options.bind.ip().to_string(),
        bind_port: options.bind.port(),
        override_logical_codec: Some(Arc::clone(&codec) as _),
        override_physical_codec: Some(codec),
        task_distribution: match options.task_distribution {
            TaskDistribution::Bias => TaskDistributionPolicy::Bias,
            TaskDistribution::RoundRobin => TaskDistributionPolicy::RoundRobin,
        },
        ..SchedulerConfig::default()
    };
    if let Some(host) = &options.external_host {
        config.external_host.clone_from(host);
    }
    let cluster = BallistaCluster::new_from_config(&config)
        .await
        .map_err(ClusterError::Scheduler)?;
    start_server(cluster, options.bind, Arc::new(config))
        .await
        .map_err(ClusterError::Scheduler)
}

/// Runs a Ballista executor with [`ClusterCodec`]: it registers with its scheduler, then runs
/// the tasks it is given until it is stopped (Ctrl-C, `SIGTERM`, or by the scheduler).
///
/// # Errors
/// The scheduler cannot be reached; a port cannot be bound; the executor stops with an error.
pub async fn run_executor(options: &ExecutorOptions) -> Result<(), ClusterError> {
    let work_dir = options
        .work_dir
        .as_ref()
        .map(|dir| {
            dir.to_str()
                .map(str::to_owned)
                .ok_or_else(|| ClusterError::WorkDirNotUtf8(dir.clone()))
        })
        .transpose()?;
    let codec = Arc::new(ClusterCodec::new());
    let config = ExecutorProcessConfig {
        bind_host: options.bind_host.clone(),
        external_host: options.external_host.clone(),
        port: options.port,
        grpc_port: options.grpc_port,
        scheduler_host: options.scheduler.0.clone(),
        scheduler_port: options.scheduler.1,
        work_dir,
        vcores: options.concurrent_tasks,
        override_logical_codec: Some(Arc::clone(&codec) as _),
        override_physical_codec: Some(codec),
        ..ExecutorProcessConfig::default()
    };
    start_executor_process(Arc::new(config))
        .await
        .map_err(ClusterError::Executor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_say_whose_bytes_they_are() {
        let mut buf = vec![9];
        encode_tagged(
            &mut buf,
            |b| {
                b.push(7);
                Ok(())
            },
            |_| unreachable!("logfmt's node"),
        )
        .unwrap();
        assert_eq!(buf, [9, LOGFMT, 7]);
        let mut buf = Vec::new();
        encode_tagged(
            &mut buf,
            |b| {
                b.push(1);
                datafusion::common::not_impl_err!("not ours")
            },
            |b| {
                b.push(5);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(buf, [BALLISTA, 5]);
        // Any other error is the result, and nothing is left written.
        let mut buf = Vec::new();
        let error = encode_tagged(
            &mut buf,
            |b| {
                b.push(1);
                Err(internal_datafusion_err!("broken"))
            },
            |b| {
                b.push(5);
                Ok(())
            },
        )
        .unwrap_err();
        assert!(error.to_string().contains("broken"), "{error}");
        assert!(buf.is_empty());
        assert!(matches!(tagged(&[LOGFMT, 3]), Ok(Tagged::Logfmt([3]))));
        assert!(matches!(tagged(&[BALLISTA]), Ok(Tagged::Ballista([]))));
        assert!(tagged(&[]).is_err());
        assert!(tagged(&[2, 0]).is_err());
    }
}
