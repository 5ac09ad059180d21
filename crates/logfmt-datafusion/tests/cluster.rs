//! A Ballista cluster on this machine — a scheduler and two executors, each a `logfmt-cluster`
//! process listening on 127.0.0.1 — runs queries over a directory of logs (plain, packed,
//! recyclable, recycled, damaged, torn, empty, zero-filled): the results are those of DataFusion
//! in this process, of a sequential read, and of the `logfmt` command (`logfmt verify --json`);
//! `logfmt-sql --cluster` prints the same; both executors ran tasks.
//!
//! The `logfmt` command is the workspace's: `LOGFMT_BIN` names it, or the test builds it (`cargo
//! build -p logfmt-cli` in the workspace); the test fails if it can have neither.

mod common;

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use ballista::extension::SessionConfigExt;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::prelude::{SessionConfig, SessionContext};
use logfmt_datafusion::cluster::remote_context;
use logfmt_datafusion::{LogOptions, register_logs};
use logfmt_std::RecoveryMode;

/// How long a process may take to listen.
const START: Duration = Duration::from_secs(60);
/// How long a query (or `logfmt verify`, or `logfmt-sql`) may take.
const QUERY: Duration = Duration::from_secs(120);
/// How long building the `logfmt` command may take (a first build of the workspace's CLI).
const BUILD: Duration = Duration::from_secs(20 * 60);

/// A process of the cluster: killed when dropped. Its standard input is a pipe held here
/// (`--exit-with-stdin`), so that it also stops if this test process dies without unwinding.
struct Process {
    name: String,
    child: Child,
    _stdin: ChildStdin,
    log: PathBuf,
}

impl Process {
    fn start(name: &str, args: &[&str], dir: &Path) -> Self {
        let log = dir.join(format!("{name}.log"));
        let out = File::create(&log).unwrap();
        let err = out.try_clone().unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_logfmt-cluster"))
            .arg("--exit-with-stdin")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(out)
            .stderr(err)
            .spawn()
            .unwrap_or_else(|e| panic!("{name}: logfmt-cluster does not start: {e}"));
        let stdin = child.stdin.take().unwrap();
        Self {
            name: name.to_owned(),
            child,
            _stdin: stdin,
            log,
        }
    }

    /// What it printed.
    fn output(&self) -> String {
        let mut text = String::new();
        if let Ok(mut file) = File::open(&self.log) {
            let _ = file.read_to_string(&mut text);
        }
        text
    }

    /// Waits until it accepts connections on `port`; fails if it exits or `START` passes.
    fn wait_listening(&mut self, port: u16) {
        let address = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        let deadline = Instant::now() + START;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!(
                    "{} exited ({status}) before listening on {port}:\n{}",
                    self.name,
                    self.output()
                );
            }
            if TcpStream::connect_timeout(&address, Duration::from_millis(200)).is_ok() {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{} does not listen on {port} after {START:?}:\n{}",
                self.name,
                self.output()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A scheduler and two executors; stopped when dropped.
struct Cluster {
    scheduler_port: u16,
    work_dirs: Vec<PathBuf>,
    // Executors first: they are stopped before their scheduler.
    _processes: Vec<Process>,
}

impl Cluster {
    fn start(dir: &Path) -> Self {
        let [scheduler_port, ports @ ..] = free_ports::<5>();
        let mut scheduler = Process::start(
            "scheduler",
            &[
                "scheduler",
                "--bind",
                &format!("127.0.0.1:{scheduler_port}"),
                // Every stage of two tasks or more runs on both executors.
                "--task-distribution",
                "round-robin",
            ],
            dir,
        );
        scheduler.wait_listening(scheduler_port);
        let mut processes = Vec::new();
        let mut work_dirs = Vec::new();
        for (i, pair) in ports.chunks(2).enumerate() {
            let work_dir = dir.join(format!("executor-{i}"));
            std::fs::create_dir(&work_dir).unwrap();
            let mut executor = Process::start(
                &format!("executor-{i}"),
                &[
                    "executor",
                    "--scheduler",
                    &format!("127.0.0.1:{scheduler_port}"),
                    "--port",
                    &pair[0].to_string(),
                    "--grpc-port",
                    &pair[1].to_string(),
                    "--work-dir",
                    work_dir.to_str().unwrap(),
                    "--concurrent-tasks",
                    "2",
                ],
                dir,
            );
            // An executor serves its results (this port) once it has registered.
            executor.wait_listening(pair[0]);
            processes.push(executor);
            work_dirs.push(work_dir);
        }
        processes.push(scheduler);
        Self {
            scheduler_port,
            work_dirs,
            _processes: processes,
        }
    }

    fn url(&self) -> String {
        format!("df://127.0.0.1:{}", self.scheduler_port)
    }
}

/// `N` distinct ports free on 127.0.0.1 (bound at once, then released for the processes).
fn free_ports<const N: usize>() -> [u16; N] {
    let listeners: Vec<TcpListener> = (0..N)
        .map(|_| TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap())
        .collect();
    std::array::from_fn(|i| listeners[i].local_addr().unwrap().port())
}

/// Runs `command`, killing it if it takes longer than `limit`.
fn output_within(command: &mut Command, limit: Duration) -> (ExitStatus, String, String) {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{command:?} does not start: {e}"));
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{command:?} took more than {limit:?}; stderr:\n{}",
                stderr.join().unwrap()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    (status, stdout.join().unwrap(), stderr.join().unwrap())
}

/// The workspace's `logfmt` command: `LOGFMT_BIN`, or built here.
fn logfmt_command() -> PathBuf {
    if let Some(path) = std::env::var_os("LOGFMT_BIN") {
        let path = PathBuf::from(path);
        assert!(
            path.is_file(),
            "LOGFMT_BIN={} is not a file (unset it to have the test build the logfmt command)",
            path.display()
        );
        return path;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let (status, stdout, stderr) = output_within(
        Command::new(env!("CARGO")).current_dir(&root).args([
            "build",
            "--locked",
            "-p",
            "logfmt-cli",
            "--bin",
            "logfmt",
            "--message-format=json-render-diagnostics",
        ]),
        BUILD,
    );
    assert!(
        status.success(),
        "building the logfmt command (cargo build -p logfmt-cli in {}) failed ({status}); set \
         LOGFMT_BIN to a built one:\n{stderr}",
        root.display()
    );
    // Cargo names the executable it built.
    stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|message| {
            message["reason"] == "compiler-artifact" && message["target"]["name"] == "logfmt"
        })
        .find_map(|message| message["executable"].as_str().map(PathBuf::from))
        .unwrap_or_else(|| panic!("cargo built no logfmt executable:\n{stdout}\n{stderr}"))
}

/// What `logfmt verify --json` says of a file: records, payload bytes, each reported damaged
/// region (offset, bytes, reason), and its zero-filled tail (offset, bytes), which is not
/// damage: the `damage` table's row of kind `zero_fill`.
#[derive(Debug, Default, PartialEq, Eq)]
struct Verified {
    records: u64,
    bytes: u64,
    damage: Vec<(u64, u64, String)>,
    zero_fill: Option<(u64, u64)>,
}

/// `logfmt verify --json --recovery skip --format auto` of every file of `dir`, by the `file`
/// column's name.
fn verify(logfmt: &Path, dir: &Path) -> BTreeMap<String, Verified> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort();
    let (status, stdout, stderr) = output_within(
        Command::new(logfmt)
            .args([
                "verify",
                "--json",
                "--recovery",
                "skip",
                "--format",
                "auto",
                "--decode",
                "raw",
            ])
            .args(&files),
        QUERY,
    );
    // 1: damage was found (the corpus has some).
    assert_eq!(status.code(), Some(1), "logfmt verify: {stderr}\n{stdout}");
    let mut out = BTreeMap::new();
    for line in stdout.lines() {
        let report: serde_json::Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("logfmt verify printed {line:?}: {e}"));
        let mut damage: Vec<(u64, u64, String)> = report["corruptions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["offset"].as_u64().unwrap(),
                    c["bytes"].as_u64().unwrap(),
                    c["reason"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        // Zeros to the end of the file (space preallocated and never written): `verify` says
        // so in its "tail" and does not call it damage; the `damage` table's kind `zero_fill`.
        let tail = &report["tail"];
        let zero_fill = (tail["kind"] == "zero_fill").then(|| {
            (
                tail["offset"].as_u64().unwrap(),
                tail["bytes"].as_u64().unwrap(),
            )
        });
        // In offset order (the table's query's order).
        damage.sort();
        let file = common::name(Path::new(report["file"].as_str().unwrap()));
        let verified = Verified {
            records: report["records"].as_u64().unwrap(),
            bytes: report["payload_bytes"].as_u64().unwrap(),
            damage,
            zero_fill,
        };
        out.insert(file, verified);
    }
    assert_eq!(out.len(), files.len(), "{stdout}");
    out
}

/// The tasks' outputs under an executor's work directory: its `data.arrow` files.
fn shuffle_files(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            if entry.file_type().unwrap().is_dir() {
                shuffle_files(&entry.path())
            } else {
                usize::from(entry.file_name() == "data.arrow")
            }
        })
        .sum()
}

/// The settings of both sessions: files cut into ranges whatever their size, in 4 partitions.
fn config(base: SessionConfig) -> SessionConfig {
    base.with_target_partitions(4)
        .set_usize("datafusion.optimizer.repartition_file_min_size", 0)
        .set_str("datafusion.sql_parser.dialect", "PostgreSQL")
}

async fn run(ctx: &SessionContext, query: &str) -> Vec<RecordBatch> {
    tokio::time::timeout(QUERY, async { ctx.sql(query).await?.collect().await })
        .await
        .unwrap_or_else(|_| panic!("{query}: no result after {QUERY:?}"))
        .unwrap_or_else(|e| panic!("{query}: {e}"))
}

/// The batches as lines of text, sorted unless `ordered`.
fn lines(batches: &[RecordBatch], ordered: bool) -> Vec<String> {
    let text = pretty_format_batches(batches).unwrap().to_string();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    if !ordered {
        lines.sort();
    }
    lines
}

#[test]
fn a_scheduler_and_two_executors_read_what_one_process_reads() {
    let logfmt = logfmt_command();
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    let paths = common::corpus(&logs);
    let cluster_dir = dir.path().join("cluster");
    std::fs::create_dir(&cluster_dir).unwrap();
    let cluster = Cluster::start(&cluster_dir);
    let path = logs.to_str().unwrap();

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let local = SessionContext::new_with_config(config(SessionConfig::new()));
        let remote = remote_context(&cluster.url(), config(SessionConfig::new_with_ballista()))
            .await
            .unwrap();
        for ctx in [&local, &remote] {
            register_logs(ctx, &[path], "", LogOptions::new())
                .await
                .unwrap();
        }

        // Every record, payloads included: as DataFusion in one process, and as a sequential
        // read.
        let query = "SELECT * FROM logs";
        let mut got = common::rows(&run(&remote, query).await);
        got.sort();
        let mut want = common::rows(&run(&local, query).await);
        want.sort();
        let mut sequential: Vec<common::Row> = paths
            .iter()
            .flat_map(|p| common::sequential(p, RecoveryMode::SkipAnyCorruptedRecords).0)
            .collect();
        sequential.sort();
        assert!(got.len() > 3000, "{} records", got.len());
        assert_eq!(got, want, "{query}");
        assert_eq!(got, sequential, "{query}");

        // Records and bytes per file, and the damage: as `logfmt verify` reports them.
        let verified = verify(&logfmt, &logs);
        let query =
            "SELECT file, count(*) AS n, sum(length) AS bytes FROM logs GROUP BY file ORDER BY file";
        let batches = run(&remote, query).await;
        assert_eq!(
            lines(&batches, true),
            lines(&run(&local, query).await, true),
            "{query}"
        );
        // The table's cells: | file | n | bytes |.
        let cells = |line: &str| -> Vec<String> {
            line.split('|').map(|cell| cell.trim().to_owned()).collect()
        };
        let mut per_file: BTreeMap<String, Verified> = BTreeMap::new();
        let text = pretty_format_batches(&batches).unwrap().to_string();
        for line in text.lines().filter(|l| l.starts_with("| /")) {
            let cells = cells(line);
            let entry = per_file.entry(cells[1].clone()).or_default();
            entry.records = cells[2].parse().unwrap();
            entry.bytes = cells[3].parse().unwrap();
        }
        assert!(per_file.len() >= 6, "{text}");
        let query = "SELECT file, offset, bytes, kind, reason FROM damage ORDER BY file, offset";
        let damage = run(&remote, query).await;
        assert_eq!(
            lines(&damage, true),
            lines(&run(&local, query).await, true),
            "{query}"
        );
        let text = pretty_format_batches(&damage).unwrap().to_string();
        let mut regions = 0;
        for line in text.lines().filter(|l| l.starts_with("| /")) {
            // | file | offset | bytes | kind | reason |
            let cells = cells(line);
            let entry = per_file.entry(cells[1].clone()).or_default();
            let (offset, bytes) = (cells[2].parse().unwrap(), cells[3].parse().unwrap());
            if cells[4] == "zero_fill" {
                assert_eq!(entry.zero_fill, None, "{text}");
                entry.zero_fill = Some((offset, bytes));
            } else {
                entry.damage.push((offset, bytes, cells[5].clone()));
            }
            regions += 1;
        }
        assert!(regions >= 3, "{text}");
        assert!(
            per_file.values().any(|f| f.zero_fill.is_some()),
            "no zero-filled tail: {text}"
        );
        // Files of no records and no damage (empty.log) are in no table.
        let verified: BTreeMap<String, Verified> = verified
            .into_iter()
            .filter(|(_, v)| *v != Verified::default())
            .collect();
        assert_eq!(per_file, verified);

        // Write batches (none here: an error row per record), a limit, an order.
        for (query, ordered) in [
            ("SELECT op, error, count(*) AS n FROM ops GROUP BY op, error", false),
            (
                "SELECT file, offset, length FROM logs WHERE length > 1000 \
                 ORDER BY file, offset LIMIT 25",
                true,
            ),
            (
                "SELECT l.file, count(*) AS n FROM logs l JOIN damage d ON l.file = d.file \
                 GROUP BY l.file",
                false,
            ),
        ] {
            let got = lines(&run(&remote, query).await, ordered);
            assert!(got.len() > 4, "{query}: {got:?}");
            assert_eq!(got, lines(&run(&local, query).await, ordered), "{query}");
        }

        // Damage with `absolute` recovery fails the query on the cluster too, with the
        // executor's error, which names the file (whichever damaged file a task read first).
        let strict = remote_context(&cluster.url(), config(SessionConfig::new_with_ballista()))
            .await
            .unwrap();
        let options = LogOptions::new().recovery(RecoveryMode::AbsoluteConsistency);
        register_logs(&strict, &[path], "", options).await.unwrap();
        let error = tokio::time::timeout(QUERY, async {
            strict.sql("SELECT count(*) FROM logs").await?.collect().await
        })
        .await
        .expect("the failing query returns")
        .expect_err("absolute recovery fails on damage");
        // Ballista passes the executor's error on as text (its `Debug` form).
        let text = error.to_string();
        assert!(
            text.contains("Damaged {") && text.contains(&format!("{path}/")),
            "{text}"
        );
    });
    drop(runtime);

    // `logfmt-sql --cluster`: the same counts, printed.
    let query =
        "SELECT file, count(*) AS n, sum(length) AS bytes FROM logs GROUP BY file ORDER BY file";
    let (status, stdout, stderr) = output_within(
        Command::new(env!("CARGO_BIN_EXE_logfmt-sql")).args([
            "--cluster",
            &cluster.url(),
            query,
            path,
            "-o",
            "csv",
            "--partitions",
            "4",
        ]),
        QUERY,
    );
    assert!(status.success(), "logfmt-sql --cluster: {stderr}");
    let want: Vec<String> = std::iter::once("file,n,bytes".to_owned())
        .chain(
            verify(&logfmt, &logs)
                .iter()
                .filter(|(_, v)| v.records > 0)
                .map(|(file, v)| format!("{file},{},{}", v.records, v.bytes)),
        )
        .collect();
    assert_eq!(stdout.lines().collect::<Vec<_>>(), want);

    // Both executors ran tasks: each wrote the output of some (`JOB/STAGE/PARTITION/data.arrow`).
    for work_dir in &cluster.work_dirs {
        let outputs = shuffle_files(work_dir);
        assert!(outputs > 0, "{}: no task ran there", work_dir.display());
    }
    // A scheduler that is not there: an error, not a hang.
    let [port] = free_ports::<1>();
    let (status, _, stderr) = output_within(
        Command::new(env!("CARGO_BIN_EXE_logfmt-sql")).args([
            "--cluster",
            &format!("df://127.0.0.1:{port}"),
            "SELECT count(*) FROM logs",
            path,
        ]),
        QUERY,
    );
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(stderr.starts_with("logfmt-sql: error: "), "{stderr}");
    drop(cluster);
}
