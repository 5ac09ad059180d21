//! The tables against a sequential read of the same logs, in 1, 2, 3 and 7 partitions.

mod common;

use std::path::Path;
use std::sync::Arc;

use common::{DamageRow, Rng, Row};
use datafusion::arrow::array::{Array, StringArray, UInt32Array, UInt64Array};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::catalog::TableProvider;
use datafusion::datasource::physical_plan::FileScanConfig;
use datafusion::datasource::source::DataSourceExec;
use datafusion::physical_plan::{ExecutionPlan, ExecutionPlanProperties};
use datafusion::prelude::{SessionConfig, SessionContext};
use futures::TryStreamExt;
use logfmt_datafusion::{LogOptions, LogSource, TableKind, log_table, register_logs};
use logfmt_std::{RecoveryMode, advanced::BLOCK_SIZE};

fn context(partitions: usize) -> SessionContext {
    let config = SessionConfig::new()
        .with_target_partitions(partitions)
        .set_usize("datafusion.optimizer.repartition_file_min_size", 0)
        .set_str("datafusion.sql_parser.dialect", "PostgreSQL");
    SessionContext::new_with_config(config)
}

/// The scan of `kind` over `dir` cut into `partitions` (if the files allow), each partition
/// executed on its own; returns the batches of each partition and the scan's config.
async fn scan_partitions(
    dir: &Path,
    kind: TableKind,
    options: LogOptions,
    partitions: usize,
    projection: Option<Vec<usize>>,
    limit: Option<usize>,
) -> (Vec<Vec<RecordBatch>>, FileScanConfig) {
    let ctx = context(partitions);
    let state = ctx.state();
    let table = log_table(&[dir.to_str().unwrap()], "", kind, options).unwrap();
    let plan = table
        .scan(&state, projection.as_ref(), &[], limit)
        .await
        .unwrap();
    let plan = plan
        .repartitioned(partitions, state.config_options())
        .unwrap()
        .unwrap_or(plan);
    let exec = plan
        .downcast_ref::<DataSourceExec>()
        .expect("a DataSourceExec");
    let (config, _) = exec
        .downcast_to_file_source::<LogSource>()
        .expect("a LogSource");
    let config = config.clone();
    let mut out = Vec::new();
    for partition in 0..plan.output_partitioning().partition_count() {
        let stream = plan.execute(partition, ctx.task_ctx()).unwrap();
        out.push(stream.try_collect::<Vec<_>>().await.unwrap());
    }
    (out, config)
}

/// Checks that the ranges of `config` are cut at block boundaries and cover each file once.
fn check_ranges(config: &FileScanConfig) {
    let mut by_file: std::collections::BTreeMap<String, Vec<(u64, u64, u64)>> = Default::default();
    for group in &config.file_groups {
        for file in group.iter() {
            let size = file.object_meta.size;
            let (start, end) = match &file.range {
                Some(r) => (r.start as u64, r.end as u64),
                None => (0, size),
            };
            by_file
                .entry(file.object_meta.location.to_string())
                .or_default()
                .push((start, end, size));
        }
    }
    for (file, mut ranges) in by_file {
        ranges.sort();
        let mut at = 0;
        for &(start, end, size) in &ranges {
            assert_eq!(start, at, "{file}: ranges {ranges:?}");
            assert!(
                end > start || size == 0,
                "{file}: an empty range in {ranges:?}"
            );
            assert!(
                end == size || end % BLOCK_SIZE as u64 == 0,
                "{file}: {ranges:?}"
            );
            at = end;
        }
        assert_eq!(
            at, ranges[0].2,
            "{file}: ranges {ranges:?} do not reach the end"
        );
    }
}

fn expected(dir: &Path, recovery: RecoveryMode) -> (Vec<Row>, Vec<DamageRow>) {
    let mut rows = Vec::new();
    let mut damage = Vec::new();
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    for path in paths {
        let (r, d) = common::sequential(&path, recovery);
        rows.extend(r);
        damage.extend(d);
    }
    (rows, damage)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_partitioning_reads_what_a_sequential_read_does() {
    let dir = tempfile::tempdir().unwrap();
    common::corpus(dir.path());
    let recovery = RecoveryMode::SkipAnyCorruptedRecords;
    let (mut want_rows, mut want_damage) = expected(dir.path(), recovery);
    want_rows.sort();
    want_damage.sort();
    assert!(want_rows.len() > 3000, "{}", want_rows.len());
    assert!(want_rows.iter().any(|r| r.3.is_some()), "no packed records");
    assert!(want_damage.iter().any(|d| d.3 == "corruption"));
    assert!(want_damage.iter().any(|d| d.3 == "torn_tail"));
    // zeros.log: 50,000 zeros after its last record.
    assert_eq!(
        want_damage
            .iter()
            .filter(|d| d.3 == "zero_fill")
            .map(|d| (d.0.rsplit('/').next().unwrap(), d.2))
            .collect::<Vec<_>>(),
        [("zeros.log", 50_000)]
    );
    for partitions in [1, 2, 3, 7] {
        let options = LogOptions::new().recovery(recovery);
        let (batches, config) = scan_partitions(
            dir.path(),
            TableKind::Records,
            options,
            partitions,
            None,
            None,
        )
        .await;
        // About `partitions` groups of whole blocks: never more, and more than one if asked.
        assert!(batches.len() <= partitions, "{} partitions", batches.len());
        assert!(
            batches.len() >= partitions.min(2),
            "{} partitions",
            batches.len()
        );
        check_ranges(&config);
        let mut got: Vec<Row> = batches.iter().flat_map(|b| common::rows(b)).collect();
        got.sort();
        assert_eq!(got.len(), want_rows.len(), "{partitions} partitions");
        assert!(got == want_rows, "{partitions} partitions: rows differ");

        let (batches, config) = scan_partitions(
            dir.path(),
            TableKind::Damage,
            options,
            partitions,
            None,
            None,
        )
        .await;
        check_ranges(&config);
        let mut got: Vec<DamageRow> = batches
            .iter()
            .flat_map(|b| common::damage_rows(b))
            .collect();
        got.sort();
        assert_eq!(got, want_damage, "{partitions} partitions");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tolerate_mode_reports_what_leveldb_reports() {
    let dir = tempfile::tempdir().unwrap();
    common::corpus(dir.path());
    let recovery = RecoveryMode::TolerateCorruptedTailRecords;
    let (mut want_rows, mut want_damage) = expected(dir.path(), recovery);
    want_rows.sort();
    want_damage.sort();
    assert!(
        !want_damage
            .iter()
            .any(|d| d.3 == "torn_tail" || d.3 == "zero_fill")
    );
    let options = LogOptions::new().recovery(recovery);
    let (batches, _) =
        scan_partitions(dir.path(), TableKind::Records, options, 3, None, None).await;
    let mut got: Vec<Row> = batches.iter().flat_map(|b| common::rows(b)).collect();
    got.sort();
    assert!(got == want_rows);
    let (batches, _) = scan_partitions(dir.path(), TableKind::Damage, options, 3, None, None).await;
    let mut got: Vec<DamageRow> = batches
        .iter()
        .flat_map(|b| common::damage_rows(b))
        .collect();
    got.sort();
    assert_eq!(got, want_damage);
}

/// Bytes flipped at random in a log of every kind of record, many times over: the table in 3
/// partitions is always the sequential read, and nothing panics.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_damage_never_changes_the_rule() {
    let dir = tempfile::tempdir().unwrap();
    let clean = common::write_vec(
        &logfmt_std::LogWriterOptions::new()
            .pack(Some(logfmt_std::advanced::PackLimit::bytes(2000))),
        &common::records(11, 600, 900),
    );
    let mut rng = Rng(5);
    for round in 0..24 {
        let mut log = clean.clone();
        for _ in 0..(1 + round % 6) {
            let at = rng.below(log.len() as u64) as usize;
            log[at] = rng.next() as u8;
        }
        if round % 4 == 1 {
            log.truncate(rng.below(log.len() as u64) as usize);
        }
        std::fs::write(dir.path().join("x.log"), &log).unwrap();
        let recovery = RecoveryMode::SkipAnyCorruptedRecords;
        let (mut want_rows, mut want_damage) = expected(dir.path(), recovery);
        want_rows.sort();
        want_damage.sort();
        let options = LogOptions::new().recovery(recovery);
        let (batches, _) =
            scan_partitions(dir.path(), TableKind::Records, options, 3, None, None).await;
        let mut got: Vec<Row> = batches.iter().flat_map(|b| common::rows(b)).collect();
        got.sort();
        assert!(got == want_rows, "round {round}: rows differ");
        let (batches, _) =
            scan_partitions(dir.path(), TableKind::Damage, options, 3, None, None).await;
        let mut got: Vec<DamageRow> = batches
            .iter()
            .flat_map(|b| common::damage_rows(b))
            .collect();
        got.sort();
        assert_eq!(got, want_damage, "round {round}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_payload_is_not_built_unless_selected() {
    let dir = tempfile::tempdir().unwrap();
    common::corpus(dir.path());
    let (want, _) = expected(dir.path(), RecoveryMode::SkipAnyCorruptedRecords);
    let ctx = context(2);
    register_logs(&ctx, &[dir.path().to_str().unwrap()], "", LogOptions::new())
        .await
        .unwrap();
    let frame = ctx.sql("SELECT offset, length FROM logs").await.unwrap();
    let plan = frame.clone().create_physical_plan().await.unwrap();
    let mut columns = None;
    find_scan(&plan, &mut |source, _| {
        columns = Some(source.file_columns().to_vec())
    });
    let columns = columns.expect("a log scan");
    assert!(!columns.contains(&4), "payload built: {columns:?}");
    let batches = frame.collect().await.unwrap();
    let mut got: Vec<(u64, u64)> = Vec::new();
    for batch in &batches {
        assert_eq!(batch.num_columns(), 2);
        let offset = batch
            .column(0)
            .as_any()
            .downcast_ref::<UInt64Array>()
            .unwrap();
        let length = batch
            .column(1)
            .as_any()
            .downcast_ref::<UInt64Array>()
            .unwrap();
        got.extend((0..batch.num_rows()).map(|i| (offset.value(i), length.value(i))));
    }
    let mut want: Vec<(u64, u64)> = want.iter().map(|r| (r.1, r.2)).collect();
    got.sort();
    want.sort();
    assert_eq!(got, want);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_limit_is_pushed_to_the_scan() {
    let dir = tempfile::tempdir().unwrap();
    common::corpus(dir.path());
    let ctx = context(2);
    register_logs(&ctx, &[dir.path().to_str().unwrap()], "", LogOptions::new())
        .await
        .unwrap();
    let frame = ctx
        .sql("SELECT file, offset FROM logs LIMIT 7")
        .await
        .unwrap();
    let plan = frame.clone().create_physical_plan().await.unwrap();
    let mut limit = None;
    find_scan(&plan, &mut |_, config| limit = config.limit);
    assert_eq!(limit, Some(7));
    let batches = frame.collect().await.unwrap();
    assert_eq!(batches.iter().map(RecordBatch::num_rows).sum::<usize>(), 7);

    // At the scan: each partition stops at the limit.
    let (batches, _) = scan_partitions(
        dir.path(),
        TableKind::Records,
        LogOptions::new(),
        3,
        Some(vec![1]),
        Some(5),
    )
    .await;
    for partition in batches {
        assert!(partition.iter().map(RecordBatch::num_rows).sum::<usize>() <= 5);
    }
}

fn find_scan(plan: &Arc<dyn ExecutionPlan>, f: &mut dyn FnMut(&LogSource, &FileScanConfig)) {
    if let Some(exec) = plan.downcast_ref::<DataSourceExec>()
        && let Some((config, source)) = exec.downcast_to_file_source::<LogSource>()
    {
        f(source, config);
    }
    for child in plan.children() {
        find_scan(child, f);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sql_aggregates_match_the_sequential_read() {
    let dir = tempfile::tempdir().unwrap();
    common::corpus(dir.path());
    let (want, want_damage) = expected(dir.path(), RecoveryMode::SkipAnyCorruptedRecords);
    for partitions in [1, 2, 3, 7] {
        let ctx = context(partitions);
        register_logs(&ctx, &[dir.path().to_str().unwrap()], "", LogOptions::new())
            .await
            .unwrap();
        let batches = ctx
            .sql("SELECT file, count(*) AS n, sum(length) AS bytes FROM logs GROUP BY file ORDER BY file")
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        let mut got = Vec::new();
        for batch in &batches {
            let file = batch
                .column(0)
                .as_any()
                .downcast_ref::<StringArray>()
                .unwrap();
            let n = batch
                .column(1)
                .as_any()
                .downcast_ref::<datafusion::arrow::array::Int64Array>()
                .unwrap();
            let bytes = batch
                .column(2)
                .as_any()
                .downcast_ref::<UInt64Array>()
                .unwrap();
            for i in 0..batch.num_rows() {
                got.push((file.value(i).to_owned(), n.value(i) as u64, bytes.value(i)));
            }
        }
        let mut by_file: std::collections::BTreeMap<String, (u64, u64)> = Default::default();
        for row in &want {
            let entry = by_file.entry(row.0.clone()).or_default();
            entry.0 += 1;
            entry.1 += row.2;
        }
        let want_agg: Vec<_> = by_file.into_iter().map(|(f, (n, b))| (f, n, b)).collect();
        assert_eq!(got, want_agg, "{partitions} partitions");

        let batches = ctx
            .sql("SELECT count(*) FROM damage")
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        let n = batches[0]
            .column(0)
            .as_any()
            .downcast_ref::<datafusion::arrow::array::Int64Array>()
            .unwrap()
            .value(0);
        assert_eq!(n as usize, want_damage.len());
    }
}

/// An operation of a `WriteBatch`: tag, column family, key, value.
type TestOp<'a> = (u8, Option<u32>, &'a [u8], Option<&'a [u8]>);

/// A RocksDB `WriteBatch`: sequence, count, operations.
fn batch(sequence: u64, ops: &[TestOp<'_>]) -> Vec<u8> {
    let mut out = sequence.to_le_bytes().to_vec();
    out.extend_from_slice(&(ops.len() as u32).to_le_bytes());
    for &(tag, cf, key, value) in ops {
        out.push(tag);
        if let Some(cf) = cf {
            out.push(cf as u8);
        }
        out.push(key.len() as u8);
        out.extend_from_slice(key);
        if let Some(value) = value {
            out.push(value.len() as u8);
            out.extend_from_slice(value);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ops_are_the_write_batches_operations() {
    let dir = tempfile::tempdir().unwrap();
    let records = vec![
        batch(
            10,
            &[(0x01, None, b"a", Some(b"1")), (0x00, None, b"b", None)],
        ),
        batch(12, &[(0x05, Some(2), b"c", Some(b"33"))]),
        b"short".to_vec(),
        batch(13, &[(0x01, None, b"d", Some(b"4"))]),
    ];
    common::write(
        &dir.path().join("000003.log"),
        &logfmt_std::LogWriterOptions::new(),
        &records,
    );
    let ctx = context(2);
    register_logs(&ctx, &[dir.path().to_str().unwrap()], "", LogOptions::new())
        .await
        .unwrap();
    let batches = ctx
        .sql("SELECT offset, op_index, sequence, op, cf, key, value, error FROM ops ORDER BY offset, op_index")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let mut got = Vec::new();
    for batch in &batches {
        let seq = batch
            .column(2)
            .as_any()
            .downcast_ref::<UInt64Array>()
            .unwrap();
        let op = batch
            .column(3)
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap();
        let cf = batch
            .column(4)
            .as_any()
            .downcast_ref::<UInt32Array>()
            .unwrap();
        let key = batch
            .column(5)
            .as_any()
            .downcast_ref::<datafusion::arrow::array::BinaryArray>()
            .unwrap();
        let error = batch
            .column(7)
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap();
        for i in 0..batch.num_rows() {
            got.push((
                seq.is_valid(i).then(|| seq.value(i)),
                op.is_valid(i).then(|| op.value(i).to_owned()),
                cf.is_valid(i).then(|| cf.value(i)),
                key.is_valid(i).then(|| key.value(i).to_vec()),
                error.is_valid(i),
            ));
        }
    }
    assert_eq!(
        got,
        [
            (
                Some(10),
                Some("put".to_owned()),
                Some(0),
                Some(b"a".to_vec()),
                false
            ),
            (
                Some(10),
                Some("delete".to_owned()),
                Some(0),
                Some(b"b".to_vec()),
                false
            ),
            (
                Some(12),
                Some("put".to_owned()),
                Some(2),
                Some(b"c".to_vec()),
                false
            ),
            (None, None, None, None, true),
            (
                Some(13),
                Some("put".to_owned()),
                Some(0),
                Some(b"d".to_vec()),
                false
            ),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn absolute_consistency_fails_the_query_on_damage() {
    let dir = tempfile::tempdir().unwrap();
    common::corpus(dir.path());
    let ctx = context(3);
    let options = LogOptions::new().recovery(RecoveryMode::AbsoluteConsistency);
    register_logs(&ctx, &[dir.path().to_str().unwrap()], "", options)
        .await
        .unwrap();
    let error = ctx
        .sql("SELECT count(*) FROM logs")
        .await
        .unwrap()
        .collect()
        .await
        .expect_err("damaged logs");
    assert!(error.to_string().contains("is damaged"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn point_in_time_reads_each_file_whole() {
    let dir = tempfile::tempdir().unwrap();
    common::corpus(dir.path());
    let recovery = RecoveryMode::PointInTimeRecovery;
    let (mut want, _) = expected(dir.path(), recovery);
    want.sort();
    let options = LogOptions::new().recovery(recovery);
    let (batches, config) =
        scan_partitions(dir.path(), TableKind::Records, options, 7, None, None).await;
    assert!(
        config
            .file_groups
            .iter()
            .flat_map(|g| g.iter())
            .all(|f| f.range.is_none())
    );
    let mut got: Vec<Row> = batches.iter().flat_map(|b| common::rows(b)).collect();
    got.sort();
    assert!(got == want);
}

/// A store that is not a local file system: its objects are read in windows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_in_an_object_store() {
    use datafusion::execution::object_store::ObjectStoreUrl;
    use object_store::ObjectStore;
    use object_store::memory::InMemory;
    use object_store::path::Path as StorePath;

    let dir = tempfile::tempdir().unwrap();
    let paths = common::corpus(dir.path());
    let store = Arc::new(InMemory::new());
    let mut want = Vec::new();
    for path in &paths {
        let name = path.file_name().unwrap().to_str().unwrap();
        let bytes = std::fs::read(path).unwrap();
        store
            .put_opts(
                &StorePath::from(format!("wal/{name}")),
                bytes.into(),
                Default::default(),
            )
            .await
            .unwrap();
        let (rows, _) = common::sequential(path, RecoveryMode::SkipAnyCorruptedRecords);
        let file = format!("memory:///wal/{name}");
        want.extend(rows.into_iter().map(|r| (file.clone(), r.1, r.2, r.3, r.4)));
    }
    want.sort();
    for partitions in [1, 3] {
        let ctx = context(partitions);
        let url = ObjectStoreUrl::parse("memory://").unwrap();
        ctx.register_object_store(url.as_ref(), Arc::clone(&store) as Arc<dyn ObjectStore>);
        register_logs(&ctx, &["memory:///wal/"], "", LogOptions::new())
            .await
            .unwrap();
        let batches = ctx
            .sql("SELECT * FROM logs")
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        let mut got = common::rows(&batches);
        got.sort();
        assert_eq!(got.len(), want.len());
        assert!(got == want, "{partitions} partitions");
    }
}

/// A flash image: records at the start of blocks of erased (0xFF) bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_erased_flash_image() {
    let dir = tempfile::tempdir().unwrap();
    let block = BLOCK_SIZE;
    let mut image = vec![0xffu8; 8 * block];
    let a = common::write_vec(
        &logfmt_std::LogWriterOptions::new(),
        &[vec![1; 10], vec![2; 20]],
    );
    let b = common::write_vec(&logfmt_std::LogWriterOptions::new(), &[vec![3; 30_000]]);
    image[..a.len()].copy_from_slice(&a);
    image[block..block + b.len()].copy_from_slice(&b);
    image[5 * block..5 * block + a.len()].copy_from_slice(&a);
    std::fs::write(dir.path().join("flash.img"), &image).unwrap();
    let path = dir.path().to_str().unwrap();
    for partitions in [1, 2, 3, 7] {
        let ctx = context(partitions);
        let options = LogOptions::new().erased(Some(0xff));
        register_logs(&ctx, &[path], ".img", options).await.unwrap();
        let batches = ctx
            .sql("SELECT \"offset\", length FROM logs ORDER BY \"offset\"")
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        let mut got = Vec::new();
        for batch in &batches {
            let offset = batch
                .column(0)
                .as_any()
                .downcast_ref::<UInt64Array>()
                .unwrap();
            let length = batch
                .column(1)
                .as_any()
                .downcast_ref::<UInt64Array>()
                .unwrap();
            got.extend((0..batch.num_rows()).map(|i| (offset.value(i), length.value(i))));
        }
        let b0 = block as u64;
        assert_eq!(
            got,
            [
                (0, 10),
                (17, 20),
                (b0, 30_000),
                (5 * b0, 10),
                (5 * b0 + 17, 20)
            ]
        );
        let damage = ctx
            .sql("SELECT * FROM damage")
            .await
            .unwrap()
            .count()
            .await
            .unwrap();
        assert_eq!(damage, 0, "{partitions} partitions");
    }
    // Read as a log, the erased bytes are damage.
    let ctx = context(2);
    register_logs(&ctx, &[path], "", LogOptions::new())
        .await
        .unwrap();
    let damage = ctx
        .sql("SELECT * FROM damage")
        .await
        .unwrap()
        .count()
        .await
        .unwrap();
    assert!(damage > 0);
}

/// A log whose end is zeros to the end of the file (space preallocated or mapped and never
/// written): a `zero_fill` row, as `logfmt verify` calls it, in every partitioning; a flash
/// image read with `--erased ff` is not read again to tell, and the same bytes with a byte not
/// zero are a torn tail.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zero_filled_tail_is_not_a_torn_tail() {
    let records = common::write_vec(
        &logfmt_std::LogWriterOptions::new(),
        &common::records(3, 20, 1000),
    );
    let zeros = 3 * BLOCK_SIZE + 100;
    let mut log = records.clone();
    log.resize(records.len() + zeros, 0);
    let query = "SELECT \"offset\", bytes, kind, reason FROM damage";
    let damage = |dir: &Path, partitions: usize, options: LogOptions| {
        let path = dir.to_str().unwrap().to_owned();
        async move {
            let ctx = context(partitions);
            register_logs(&ctx, &[&path], "", options).await.unwrap();
            let batches = ctx.sql(query).await.unwrap().collect().await.unwrap();
            datafusion::arrow::util::pretty::pretty_format_batches(&batches)
                .unwrap()
                .to_string()
        }
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("000001.log"), &log).unwrap();
    let skip = LogOptions::new().recovery(RecoveryMode::SkipAnyCorruptedRecords);
    let row = format!(
        "| {} | {zeros} | zero_fill | zero-filled tail: preallocated or mapped and never \
         written, not damage |",
        records.len()
    );
    for partitions in [1, 3] {
        let text = damage(dir.path(), partitions, skip).await;
        let rows: Vec<&str> = text.lines().filter(|l| l.starts_with("| ")).collect();
        let rows: Vec<String> = rows[1..]
            .iter()
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect();
        assert_eq!(
            rows,
            std::slice::from_ref(&row),
            "{partitions} partitions:\n{text}"
        );
    }
    // Read as a flash image: not told apart.
    let text = damage(dir.path(), 1, skip.erased(Some(0xff))).await;
    assert!(!text.contains("zero_fill"), "{text}");
    // A byte not zero: a torn tail.
    *log.last_mut().unwrap() = 1;
    std::fs::write(dir.path().join("000001.log"), &log).unwrap();
    let text = damage(dir.path(), 1, skip).await;
    assert!(
        text.contains("torn_tail") && !text.contains("zero_fill"),
        "{text}"
    );
}
