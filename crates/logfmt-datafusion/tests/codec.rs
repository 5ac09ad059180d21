//! `LogCodec`: plans over log tables serialized and deserialized (as Ballista ships them) read
//! what the original plans read, with the same ranges.

mod common;

use std::sync::Arc;

use ballista_core::execution_plans::ShuffleWriterExec;
use ballista_core::serde::BallistaPhysicalExtensionCodec;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::source::DataSourceExec;
use datafusion::physical_plan::{ExecutionPlan, collect};
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_proto::bytes::{
    logical_plan_from_bytes_with_extension_codec, logical_plan_to_bytes_with_extension_codec,
    physical_plan_from_bytes_with_extension_codec, physical_plan_to_bytes_with_extension_codec,
};
use logfmt_datafusion::{ClusterCodec, LogCodec, LogOptions, LogSource, register_logs};
use logfmt_std::RecoveryMode;

const QUERIES: [&str; 5] = [
    "SELECT * FROM logs",
    "SELECT file, count(*), sum(length) FROM logs GROUP BY file",
    "SELECT file, offset, length FROM logs WHERE length > 1000 LIMIT 20",
    "SELECT * FROM damage",
    "SELECT file, offset, op, error FROM ops",
];

async fn context(dir: &std::path::Path, recovery: RecoveryMode) -> SessionContext {
    let config = SessionConfig::new()
        .with_target_partitions(3)
        .set_usize("datafusion.optimizer.repartition_file_min_size", 0)
        .set_str("datafusion.sql_parser.dialect", "PostgreSQL");
    let ctx = SessionContext::new_with_config(config);
    let options = LogOptions::new().recovery(recovery);
    register_logs(&ctx, &[dir.to_str().unwrap()], "", options)
        .await
        .unwrap();
    ctx
}

/// The batches as sorted lines of text: the same rows in any order.
fn lines(batches: &[RecordBatch]) -> Vec<String> {
    let text = pretty_format_batches(batches).unwrap().to_string();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    lines.sort();
    lines
}

/// A scan's file groups: each file's location and range.
type Groups = Vec<Vec<(String, Option<(i64, i64)>)>>;

/// Each log scan's files and ranges, in order.
fn scans(plan: &Arc<dyn ExecutionPlan>, out: &mut Vec<Groups>) {
    if let Some(exec) = plan.downcast_ref::<DataSourceExec>()
        && let Some((config, _)) = exec.downcast_to_file_source::<LogSource>()
    {
        let range = |f: &PartitionedFile| {
            (
                f.object_meta.location.to_string(),
                f.range.as_ref().map(|r| (r.start, r.end)),
            )
        };
        out.push(
            config
                .file_groups
                .iter()
                .map(|g| g.iter().map(range).collect())
                .collect(),
        );
    }
    for child in plan.children() {
        scans(child, out);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn physical_plans_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    common::corpus(dir.path());
    let ctx = context(dir.path(), RecoveryMode::SkipAnyCorruptedRecords).await;
    for query in QUERIES {
        let plan = ctx
            .sql(query)
            .await
            .unwrap()
            .create_physical_plan()
            .await
            .unwrap();
        let bytes =
            physical_plan_to_bytes_with_extension_codec(Arc::clone(&plan), &LogCodec).unwrap();
        let back =
            physical_plan_from_bytes_with_extension_codec(&bytes, &ctx.task_ctx(), &LogCodec)
                .unwrap();
        let (mut before, mut after) = (Vec::new(), Vec::new());
        scans(&plan, &mut before);
        scans(&back, &mut after);
        assert!(!before.is_empty(), "{query}: no log scan");
        assert_eq!(before, after, "{query}");
        let want = collect(plan, ctx.task_ctx()).await.unwrap();
        let got = collect(back, ctx.task_ctx()).await.unwrap();
        if query.contains("LIMIT") {
            let rows = |b: &[RecordBatch]| b.iter().map(RecordBatch::num_rows).sum::<usize>();
            assert_eq!(rows(&got), rows(&want), "{query}");
        } else {
            assert_eq!(lines(&got), lines(&want), "{query}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logical_plans_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    common::corpus(dir.path());
    let ctx = context(dir.path(), RecoveryMode::TolerateCorruptedTailRecords).await;
    for query in QUERIES {
        if query.contains("LIMIT") {
            continue;
        }
        let frame = ctx.sql(query).await.unwrap();
        let plan = frame.logical_plan().clone();
        let bytes = logical_plan_to_bytes_with_extension_codec(&plan, &LogCodec).unwrap();
        // Decoded in a session where no table is registered: the codec makes them.
        let fresh = SessionContext::new();
        let back =
            logical_plan_from_bytes_with_extension_codec(&bytes, &fresh.task_ctx(), &LogCodec)
                .unwrap();
        let want = frame.collect().await.unwrap();
        let got = ctx
            .execute_logical_plan(back)
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        assert_eq!(lines(&got), lines(&want), "{query}");
    }
}

/// `ClusterCodec` ships a plan of Ballista's nodes and log scans (as the scheduler ships a stage
/// to an executor: a `ShuffleWriterExec` over the stage's plan) and log tables; Ballista's own
/// codec cannot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cluster_codec_ships_ballista_nodes_and_log_scans() {
    let dir = tempfile::tempdir().unwrap();
    common::corpus(dir.path());
    let ctx = context(dir.path(), RecoveryMode::SkipAnyCorruptedRecords).await;
    let codec = ClusterCodec::new();
    for query in QUERIES {
        let frame = ctx.sql(query).await.unwrap();
        let plan = frame.clone().create_physical_plan().await.unwrap();
        let ballista = BallistaPhysicalExtensionCodec::default();
        assert!(
            physical_plan_to_bytes_with_extension_codec(Arc::clone(&plan), &ballista).is_err(),
            "{query}: Ballista's codec wrote a log scan"
        );
        let stage: Arc<dyn ExecutionPlan> = Arc::new(
            ShuffleWriterExec::try_new(
                "job".to_owned().into(),
                1,
                Arc::clone(&plan),
                String::new(),
            )
            .unwrap(),
        );
        let bytes = physical_plan_to_bytes_with_extension_codec(stage, &codec).unwrap();
        let back =
            physical_plan_from_bytes_with_extension_codec(&bytes, &ctx.task_ctx(), &codec).unwrap();
        assert!(
            back.downcast_ref::<ShuffleWriterExec>().is_some(),
            "{query}"
        );
        let inner = Arc::clone(back.children()[0]);
        let (mut before, mut after) = (Vec::new(), Vec::new());
        scans(&plan, &mut before);
        scans(&inner, &mut after);
        assert!(!before.is_empty(), "{query}: no log scan");
        assert_eq!(before, after, "{query}");
        let want = collect(plan, ctx.task_ctx()).await.unwrap();
        let got = collect(inner, ctx.task_ctx()).await.unwrap();
        if query.contains("LIMIT") {
            let rows = |b: &[RecordBatch]| b.iter().map(RecordBatch::num_rows).sum::<usize>();
            assert_eq!(rows(&got), rows(&want), "{query}");
        } else {
            assert_eq!(lines(&got), lines(&want), "{query}");
        }
        // The logical plan too, decoded where no table is registered (not the largest
        // result twice more: `logical_plans_round_trip` reads it).
        if !query.contains("LIMIT") && query != "SELECT * FROM logs" {
            let bytes =
                logical_plan_to_bytes_with_extension_codec(frame.logical_plan(), &codec).unwrap();
            let fresh = SessionContext::new();
            let back =
                logical_plan_from_bytes_with_extension_codec(&bytes, &fresh.task_ctx(), &codec)
                    .unwrap();
            let got = ctx
                .execute_logical_plan(back)
                .await
                .unwrap()
                .collect()
                .await
                .unwrap();
            assert_eq!(lines(&got), lines(&want), "{query}");
        }
    }
}

#[test]
fn garbage_is_an_error_not_a_panic() {
    use datafusion_proto::logical_plan::LogicalExtensionCodec;
    use datafusion_proto::physical_plan::{DefaultPhysicalProtoConverter, PhysicalExtensionCodec};

    let ctx = SessionContext::new();
    let mut rng = common::Rng(3);
    for len in 0..64 {
        let buf: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        let schema = logfmt_datafusion::TableKind::Records.schema();
        let _ = LogicalExtensionCodec::try_decode_table_provider(
            &LogCodec,
            &buf,
            &"logs".into(),
            schema,
            &ctx.task_ctx(),
        );
        let _ = PhysicalExtensionCodec::try_decode(
            &LogCodec,
            &buf,
            &[],
            &ctx.task_ctx(),
            &DefaultPhysicalProtoConverter {},
        );
        let cluster = ClusterCodec::new();
        let _ = LogicalExtensionCodec::try_decode_table_provider(
            &cluster,
            &buf,
            &"logs".into(),
            logfmt_datafusion::TableKind::Records.schema(),
            &ctx.task_ctx(),
        );
        let _ = PhysicalExtensionCodec::try_decode(
            &cluster,
            &buf,
            &[],
            &ctx.task_ctx(),
            &DefaultPhysicalProtoConverter {},
        );
    }
}
