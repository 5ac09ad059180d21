//! `logfmt-cluster`: a Ballista scheduler or executor that reads log tables.
//!
//! ```text
//! logfmt-cluster scheduler --bind 0.0.0.0:50050
//! logfmt-cluster executor --scheduler sched.example:50050 --bind 0.0.0.0 --work-dir /var/tmp/ballista
//! logfmt-sql --cluster df://sched.example:50050 'SELECT count(*) FROM logs' /mnt/logs
//! ```
//!
//! The scheduler and every executor read the logs from the paths in the query's plan: they
//! must see them at the same path (a shared mount).

use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};
use logfmt_datafusion::cluster::{
    ClusterError, ExecutorOptions, SchedulerOptions, TaskDistribution, run_executor, run_scheduler,
};

/// A Ballista scheduler or executor whose plans may read log tables (`logs`, `damage`, `ops`:
/// see `logfmt-sql`). Query the cluster with `logfmt-sql --cluster df://HOST:PORT`.
///
/// The logs are read by the scheduler (which lists the files) and the executors (which read
/// them) at the path given to `logfmt-sql`: every machine must see them at that path.
#[derive(Debug, Parser)]
#[command(name = "logfmt-cluster", version)]
struct Args {
    #[command(subcommand)]
    role: Role,
    /// What is logged to standard error.
    #[arg(long, global = true, value_enum, default_value_t = Level::Info)]
    log_level: Level,
    /// Stop when standard input reaches its end: for a supervisor (or a test) that holds the
    /// other end of a pipe, so that the process does not outlive it.
    #[arg(long, global = true)]
    exit_with_stdin: bool,
}

#[derive(Debug, Subcommand)]
enum Role {
    /// Run a scheduler: it plans the queries of clients and gives their tasks to executors.
    Scheduler {
        /// The address to listen on (executors and clients connect there).
        #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:50050")]
        bind: SocketAddr,
        /// The host name others reach this scheduler by.
        #[arg(long, value_name = "HOST")]
        external_host: Option<String>,
        /// How tasks are given to executors: bias (fill one executor's slots first) or
        /// round-robin (one task to each executor in turn).
        #[arg(long, value_enum, default_value_t = Distribution::Bias)]
        task_distribution: Distribution,
    },
    /// Run an executor: it registers with the scheduler, reads the files of the tasks it is
    /// given, and serves their results.
    Executor {
        /// The scheduler.
        #[arg(long, value_name = "HOST:PORT", default_value = "localhost:50050", value_parser = host_port)]
        scheduler: (String, u16),
        /// The address to listen on (0.0.0.0: every interface).
        #[arg(long, value_name = "ADDR", default_value = "127.0.0.1")]
        bind: String,
        /// The host name the scheduler and clients reach this executor by (default: the
        /// address the scheduler sees it connect from).
        #[arg(long, value_name = "HOST")]
        external_host: Option<String>,
        /// The port of the executor's results (Arrow Flight).
        #[arg(long, default_value_t = 50051)]
        port: u16,
        /// The port the executor takes its tasks on (gRPC).
        #[arg(long, default_value_t = 50052)]
        grpc_port: u16,
        /// Where intermediate results are kept (default: a new temporary directory).
        #[arg(long, value_name = "DIR")]
        work_dir: Option<PathBuf>,
        /// Tasks run at once (default: the number of CPUs).
        #[arg(long, value_name = "N", default_value_t = 0)]
        concurrent_tasks: usize,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Distribution {
    /// Fill an executor's task slots before the next's.
    Bias,
    /// One task to each executor in turn.
    RoundRobin,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Level {
    Off,
    Error,
    Warn,
    Info,
    Debug,
    Trace,
}

/// `HOST:PORT` (`[::1]:PORT` for an IPv6 address).
fn host_port(text: &str) -> Result<(String, u16), String> {
    let (host, port) = text
        .rsplit_once(':')
        .ok_or_else(|| format!("{text:?}: expected HOST:PORT"))?;
    let port = port
        .parse::<u16>()
        .map_err(|_| format!("{text:?}: {port:?} is not a port"))?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() {
        return Err(format!("{text:?}: no host"));
    }
    Ok((host.to_owned(), port))
}

/// Ballista's log lines, to standard error.
struct StderrLog;

impl log::Log for StderrLog {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.level() <= log::max_level()
    }

    fn log(&self, record: &log::Record<'_>) {
        if self.enabled(record.metadata()) {
            // A closed standard error is not a reason to stop.
            let _ = writeln!(
                io::stderr().lock(),
                "[{} {}] {}",
                record.level(),
                record.target(),
                record.args()
            );
        }
    }

    fn flush(&self) {}
}

static LOGGER: StderrLog = StderrLog;

fn main() -> ExitCode {
    let args = Args::parse();
    // Only fails if a logger is already set: none is.
    let _ = log::set_logger(&LOGGER);
    log::set_max_level(match args.log_level {
        Level::Off => log::LevelFilter::Off,
        Level::Error => log::LevelFilter::Error,
        Level::Warn => log::LevelFilter::Warn,
        Level::Info => log::LevelFilter::Info,
        Level::Debug => log::LevelFilter::Debug,
        Level::Trace => log::LevelFilter::Trace,
    });
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        // Planning deep expressions recurses (Ballista's own binaries do the same).
        .thread_stack_size(32 << 20)
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("logfmt-cluster: error: cannot start the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(run(&args));
    // Do not wait for tasks still running (a server's).
    runtime.shutdown_timeout(Duration::from_secs(1));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("logfmt-cluster: error: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: &Args) -> Result<(), ClusterError> {
    let serve = async {
        match &args.role {
            Role::Scheduler {
                bind,
                external_host,
                task_distribution,
            } => {
                let options = SchedulerOptions::new(*bind)
                    .external_host(external_host.clone())
                    .task_distribution(match task_distribution {
                        Distribution::Bias => TaskDistribution::Bias,
                        Distribution::RoundRobin => TaskDistribution::RoundRobin,
                    });
                run_scheduler(&options).await
            }
            Role::Executor {
                scheduler,
                bind,
                external_host,
                port,
                grpc_port,
                work_dir,
                concurrent_tasks,
            } => {
                let options = ExecutorOptions::new(&scheduler.0, scheduler.1, *port, *grpc_port)
                    .bind_host(bind)
                    .external_host(external_host.clone())
                    .work_dir(work_dir.clone())
                    .concurrent_tasks(*concurrent_tasks);
                run_executor(&options).await
            }
        }
    };
    if !args.exit_with_stdin {
        return serve.await;
    }
    let (closed, on_close) = tokio::sync::oneshot::channel();
    // A thread of its own: a blocking read the runtime need not wait for.
    std::thread::spawn(move || {
        let mut sink = [0; 64];
        let mut stdin = io::stdin().lock();
        loop {
            match stdin.read(&mut sink) {
                Ok(0) => break,
                Ok(_) => {}
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        let _ = closed.send(());
    });
    tokio::select! {
        result = serve => result,
        _ = on_close => {
            log::info!("standard input closed: stopping");
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::host_port;

    #[test]
    fn scheduler_addresses() {
        assert_eq!(host_port("sched:50050"), Ok(("sched".to_owned(), 50050)));
        assert_eq!(host_port("[::1]:7"), Ok(("::1".to_owned(), 7)));
        assert!(host_port("sched").is_err());
        assert!(host_port("sched:port").is_err());
        assert!(host_port(":50050").is_err());
        assert!(host_port("sched:70000").is_err());
    }
}
