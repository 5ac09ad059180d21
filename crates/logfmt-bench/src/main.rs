//! `logfmt-bench`: the side-by-side benchmark protocol, so logfmt can be compared with other
//! implementations of the format run by the same driver.
//!
//! ```text
//! logfmt-bench --name NAME --reps K [--limits] SIZE:COUNT [SIZE:COUNT ...]
//! ```
//!
//! Payload: `src` is 2 MiB from xorshift64 (`x = 0x9E3779B97F4A7C15`; per 8 bytes
//! `x ^= x << 13; x ^= x >> 7; x ^= x << 17;` then `x` little-endian); record `i` is
//! `src[(i * 997) % 1048576 ..][..SIZE]`. Per case: one untimed round trip that verifies the
//! count, the bytes and the CRC-32C chained over all payloads and prints a `DIGEST` line; then
//! `K` timed write passes and `K` timed read passes, each printing a `RESULT` line. With
//! `--limits`, also `K` passes of the two bounds on the same data: `impl=memcpy` (copying every
//! payload into a pre-faulted buffer), `impl=crc32c` (the `crc32c` crate over every payload)
//! and `impl=logfmt-crc` (logfmt's own checksum over every payload); and first an `ENGINE` line
//! naming the checksum path logfmt takes for 16-byte and 1 MiB inputs on this machine.
//! With `--files DIR`, also `K` passes writing and reading a log file in `DIR` through
//! `logfmt-std` (`impl=NAME-file`); with `--scan`, `K` passes of a parallel split scan of the
//! in-memory log on 1 and 2 threads (`op=scan1`, `op=scan2`).
//!
//! ```text
//! logfmt-bench flash [--reps K] [--reboots N] [--reads-only]
//! ```
//!
//! The flash comparison: logfmt's flash writers and `sequential-storage`'s queue on the same
//! simulated NOR flash, one `FLASH ...` line per case, then the read costs, one `FLASH-READ ...`
//! line per word size and implementation, and the seek costs, one `FLASH-SEEK ...` line per
//! word size (see `logfmt_bench::flash`), then the store-and-forward cycle (log, deliver,
//! release), one `QUEUE ...` line per word size and implementation (see `logfmt_bench::queue`);
//! with `--reads-only`, only the read and seek costs.
//!
//! ```text
//! logfmt-bench durable --dir DIR [--seconds S] [--record BYTES] THREADS [THREADS ...]
//! ```
//!
//! Durable appends through logfmt's group commit, one `DURABLE ...` line per thread count
//! (see `logfmt_bench::durable`).
//!
//! ```text
//! logfmt-bench wal --dir DIR [--seconds S] [--record BYTES] [--recycled] THREADS [THREADS ...]
//! ```
//!
//! Durable appends to a WAL directory (logs of 64 MiB, a fresh file or a reused one with
//! `--recycled`), one `WAL ...` line per thread count (see `logfmt_bench::wal`).
//!
//! ```text
//! logfmt-bench pack [--reps K] [--limit BYTES] [SIZE:COUNT ...]
//! ```
//!
//! The packing comparison: the same records plain and packed, one `PACK ...` line per pass
//! (see `logfmt_bench::pack`).
//!
//! ```text
//! logfmt-bench wal-size --puts N --dir DIR
//! ```
//!
//! The write-ahead log size comparison: `N` single-put write batches written by logfmt plain,
//! RocksDB-compressed and in packs, one `WALSIZE ...` line each, and their spec for RocksDB's
//! side in `DIR/spec` (see `logfmt_bench::wal_size`).
//!
//! ```text
//! logfmt-bench zstd-speed [--batches N] [--reps K]
//! ```
//!
//! zstd decoding and encoding speed, the Rust coder (`ruzstd`) against zstd's C library on the
//! same frames, one `ZSTDSPEED ...` line each (see `logfmt_bench::zstd_speed`).
//!
//! ```text
//! logfmt-bench paths [--reps K] [--align A] [LEN ...]
//! ```
//!
//! Each CRC-32C path of the engine forced, alone and fused with a copy, by length, in cache and
//! from DRAM (`PATH ...` lines; see `logfmt_bench::paths`).

use std::process::ExitCode;
use std::time::Instant;

use logfmt_bench::{Case, Payloads};

const DEFAULT_CASES: &str = "16:2000000 100:1000000 1024:131072 32768:4096 1048576:128";

struct Args {
    name: String,
    reps: usize,
    limits: bool,
    files: Option<std::path::PathBuf>,
    scan: bool,
    cases: Vec<Case>,
}

fn parse_args() -> Result<Args, String> {
    let mut name = String::from("logfmt");
    let mut reps = 5;
    let mut limits = false;
    let mut files = None;
    let mut scan = false;
    let mut cases = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--name" => name = args.next().ok_or("--name needs a value")?,
            "--reps" => {
                let value = args.next().ok_or("--reps needs a value")?;
                reps = value
                    .parse()
                    .map_err(|_| format!("bad --reps value {value:?}"))?;
            }
            "--limits" => limits = true,
            "--scan" => scan = true,
            "--files" => files = Some(args.next().ok_or("--files needs a directory")?.into()),
            "-h" | "--help" => {
                return Err(
                    "usage: logfmt-bench --name NAME --reps K [--limits] [--files DIR] [--scan] SIZE:COUNT [SIZE:COUNT ...]"
                        .into(),
                );
            }
            case => cases.push(Case::parse(case)?),
        }
    }
    if cases.is_empty() {
        cases = DEFAULT_CASES
            .split(' ')
            .map(Case::parse)
            .collect::<Result<_, _>>()?;
    }
    Ok(Args {
        name,
        reps,
        limits,
        files,
        scan,
        cases,
    })
}

/// `logfmt-bench pack [--reps K] [--limit BYTES] [SIZE:COUNT ...]`.
fn pack_mode(args: &[String]) -> ExitCode {
    let usage = "usage: logfmt-bench pack [--reps K] [--limit BYTES] [SIZE:COUNT ...]";
    let (mut reps, mut limit, mut cases) = (5usize, 4096usize, Vec::new());
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let number = |v: Option<&String>| v.and_then(|v| v.parse().ok());
        match arg.as_str() {
            "--reps" => match number(args.next()) {
                Some(n) => reps = n,
                None => {
                    eprintln!("{usage}");
                    return ExitCode::from(2);
                }
            },
            "--limit" => match number(args.next()) {
                Some(n) => limit = n,
                None => {
                    eprintln!("{usage}");
                    return ExitCode::from(2);
                }
            },
            case => match Case::parse(case) {
                Ok(case) => cases.push(case),
                Err(message) => {
                    eprintln!("logfmt-bench: {message}\n{usage}");
                    return ExitCode::from(2);
                }
            },
        }
    }
    if cases.is_empty() {
        cases = ["16:2000000", "100:1000000"]
            .iter()
            .filter_map(|c| Case::parse(c).ok())
            .collect();
    }
    let payloads = Payloads::new();
    match logfmt_bench::pack::run(&payloads, &cases, reps, limit, &mut |l| println!("{l}")) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("logfmt-bench: pack: {message}");
            ExitCode::FAILURE
        }
    }
}

/// `logfmt-bench wal-size --puts N --dir DIR`.
fn wal_size_mode(args: &[String]) -> ExitCode {
    let (mut puts, mut dir) = (None, None);
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next()) {
            ("--puts", Some(n)) => puts = n.parse::<usize>().ok(),
            ("--dir", Some(d)) => dir = Some(std::path::PathBuf::from(d)),
            _ => puts = None,
        }
    }
    let (Some(puts), Some(dir)) = (puts, dir) else {
        eprintln!("usage: logfmt-bench wal-size --puts N --dir DIR");
        return ExitCode::from(2);
    };
    match logfmt_bench::wal_size::run(puts, &dir, &mut |line| println!("{line}")) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("logfmt-bench: wal-size: {message}");
            ExitCode::FAILURE
        }
    }
}

/// `logfmt-bench zstd-speed [--batches N] [--reps K]`.
fn zstd_speed_mode(args: &[String]) -> ExitCode {
    let (mut batches, mut reps) = (Some(200_000), Some(5));
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let value = args.next().and_then(|n| n.parse::<usize>().ok());
        match arg.as_str() {
            "--batches" => batches = value,
            "--reps" => reps = value,
            _ => batches = None,
        }
    }
    let (Some(batches), Some(reps)) = (batches, reps) else {
        eprintln!("usage: logfmt-bench zstd-speed [--batches N] [--reps K]");
        return ExitCode::from(2);
    };
    match logfmt_bench::zstd_speed::run(batches, reps, &mut |line| println!("{line}")) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("logfmt-bench: zstd-speed: {message}");
            ExitCode::FAILURE
        }
    }
}

/// `logfmt-bench flash [--reps K] [--reboots N]`.
fn flash_mode(args: &[String]) -> ExitCode {
    let mut options = logfmt_bench::flash::FlashOptions {
        reps: 5,
        reboots: 100,
    };
    let mut args = args.iter();
    let mut reads_only = false;
    while let Some(arg) = args.next() {
        if arg == "--reads-only" {
            reads_only = true;
            continue;
        }
        let value = args.next().and_then(|v| v.parse().ok());
        match (arg.as_str(), value) {
            ("--reps", Some(n)) => options.reps = n,
            ("--reboots", Some(n)) => options.reboots = n,
            _ => {
                eprintln!("usage: logfmt-bench flash [--reps K] [--reboots N] [--reads-only]");
                return ExitCode::from(2);
            }
        }
    }
    let run = if reads_only {
        Ok(())
    } else {
        logfmt_bench::flash::run(options, &mut |line| println!("{line}"))
    };
    let run = run
        .and_then(|()| logfmt_bench::flash::read_costs(&mut |line| println!("{line}")))
        .and_then(|()| logfmt_bench::flash::seek_costs(&mut |line| println!("{line}")))
        .and_then(|()| logfmt_bench::reboot::reboot_costs(&mut |line| println!("{line}")))
        .and_then(|()| {
            if reads_only {
                Ok(())
            } else {
                logfmt_bench::queue::run(&mut |line| println!("{line}"))
            }
        });
    match run {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("logfmt-bench: flash: {message}");
            ExitCode::FAILURE
        }
    }
}

/// `logfmt-bench durable --dir DIR [--seconds S] [--record BYTES] THREADS [THREADS ...]`.
fn durable_mode(args: &[String]) -> ExitCode {
    let usage = "usage: logfmt-bench durable --dir DIR [--seconds S] [--record BYTES] THREADS [THREADS ...]";
    let mut options = logfmt_bench::durable::DurableOptions {
        threads: Vec::new(),
        record: 100,
        time: std::time::Duration::from_secs(2),
    };
    let mut dir = None;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let ok = match arg.as_str() {
            "--dir" => args.next().map(|d| dir = Some(std::path::PathBuf::from(d))),
            "--seconds" => args
                .next()
                .and_then(|v| v.parse::<f64>().ok())
                .filter(|s| s.is_finite() && *s > 0.0)
                .map(|s| options.time = std::time::Duration::from_secs_f64(s)),
            "--record" => args
                .next()
                .and_then(|v| v.parse().ok())
                .map(|n| options.record = n),
            threads => threads
                .parse()
                .ok()
                .filter(|&n| n > 0)
                .map(|n| options.threads.push(n)),
        };
        if ok.is_none() {
            eprintln!("{usage}");
            return ExitCode::from(2);
        }
    }
    let Some(dir) = dir.filter(|_| !options.threads.is_empty()) else {
        eprintln!("{usage}");
        return ExitCode::from(2);
    };
    match logfmt_bench::durable::run(&dir, &options, &mut |line| println!("{line}")) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("logfmt-bench: durable: {message}");
            ExitCode::FAILURE
        }
    }
}

/// `logfmt-bench wal --dir DIR [--seconds S] [--record BYTES] [--recycled] THREADS [THREADS ...]`.
fn wal_mode(args: &[String]) -> ExitCode {
    let usage = "usage: logfmt-bench wal --dir DIR [--seconds S] [--record BYTES] [--recycled] THREADS [THREADS ...]";
    let mut options = logfmt_bench::wal::WalBenchOptions {
        threads: Vec::new(),
        record: 100,
        time: std::time::Duration::from_secs(2),
        recycled: false,
    };
    let mut dir = None;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let ok = match arg.as_str() {
            "--dir" => args.next().map(|d| dir = Some(std::path::PathBuf::from(d))),
            "--recycled" => {
                options.recycled = true;
                Some(())
            }
            "--seconds" => args
                .next()
                .and_then(|v| v.parse::<f64>().ok())
                .filter(|s| s.is_finite() && *s > 0.0)
                .map(|s| options.time = std::time::Duration::from_secs_f64(s)),
            "--record" => args
                .next()
                .and_then(|v| v.parse().ok())
                .map(|n| options.record = n),
            threads => threads
                .parse()
                .ok()
                .filter(|&n| n > 0)
                .map(|n| options.threads.push(n)),
        };
        if ok.is_none() {
            eprintln!("{usage}");
            return ExitCode::from(2);
        }
    }
    let Some(dir) = dir.filter(|_| !options.threads.is_empty()) else {
        eprintln!("{usage}");
        return ExitCode::from(2);
    };
    match logfmt_bench::wal::run(&dir, &options, &mut |line| println!("{line}")) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("logfmt-bench: wal: {message}");
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    let all: Vec<String> = std::env::args().skip(1).collect();
    if all.first().is_some_and(|a| a == "wal") {
        return wal_mode(&all[1..]);
    }
    if all.first().is_some_and(|a| a == "durable") {
        return durable_mode(&all[1..]);
    }
    if all.first().is_some_and(|a| a == "flash") {
        return flash_mode(&all[1..]);
    }
    if all.first().is_some_and(|a| a == "paths") {
        let (mut reps, mut align, mut lengths) = (5, 0, Vec::new());
        let mut args = all[1..].iter();
        while let Some(arg) = args.next() {
            let value = |v: Option<&String>| v.and_then(|v| v.parse::<usize>().ok());
            match arg.as_str() {
                "--reps" => reps = value(args.next()).unwrap_or(5),
                "--align" => align = value(args.next()).unwrap_or(0),
                len => lengths.extend(len.parse::<usize>().ok()),
            }
        }
        logfmt_bench::paths::run(reps.max(1), &lengths, align, &mut |line| println!("{line}"));
        return ExitCode::SUCCESS;
    }
    if all.first().is_some_and(|a| a == "pack") {
        return pack_mode(&all[1..]);
    }
    if all.first().is_some_and(|a| a == "wal-size") {
        return wal_size_mode(&all[1..]);
    }
    if all.first().is_some_and(|a| a == "zstd-speed") {
        return zstd_speed_mode(&all[1..]);
    }
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            eprintln!("logfmt-bench: {message}");
            return ExitCode::from(2);
        }
    };
    let payloads = Payloads::new();
    if args.limits {
        // Which CRC-32C path the engine takes on this machine, short and long inputs.
        let name = |len| {
            logfmt_core::parts::checksum::Path::for_len(len).map_or("crc32c-crate", |p| p.name())
        };
        println!("ENGINE crc_16={} crc_1m={}", name(16), name(1 << 20));
    }
    for case in &args.cases {
        let mut bench = logfmt_bench::Bench::new(&payloads, *case);
        match bench.verify() {
            Ok(digest) => println!(
                "DIGEST impl={} size={} records={} log_bytes={} log_crc32c={:08x} payload_crc32c={:08x}",
                args.name,
                case.size,
                case.count,
                digest.log_bytes,
                digest.log_crc32c,
                digest.payload_crc32c
            ),
            Err(message) => {
                eprintln!(
                    "logfmt-bench: size {}: round trip failed: {message}",
                    case.size
                );
                return ExitCode::FAILURE;
            }
        }
        let payload_bytes = case.payload_bytes();
        let result = |imp: &str, op: &str, log_bytes: usize, ns: u128| {
            println!(
                "RESULT impl={imp} op={op} size={} records={} payload_bytes={payload_bytes} log_bytes={log_bytes} ns={ns}",
                case.size, case.count
            );
        };
        for _ in 0..args.reps {
            let start = Instant::now();
            let log_bytes = bench.write();
            result(&args.name, "write", log_bytes, start.elapsed().as_nanos());
        }
        for _ in 0..args.reps {
            let start = Instant::now();
            let log_bytes = bench.read();
            result(&args.name, "read", log_bytes, start.elapsed().as_nanos());
        }
        if let Some(dir) = &args.files {
            let path = dir.join(format!("logfmt-bench-{}.log", case.size));
            let file_name = format!("{}-file", args.name);
            for op in ["write", "read"] {
                for _ in 0..args.reps {
                    let start = Instant::now();
                    let done = if op == "write" {
                        bench.write_file(&path)
                    } else {
                        bench.read_file(&path)
                    };
                    match done {
                        Ok(log_bytes) => {
                            result(&file_name, op, log_bytes, start.elapsed().as_nanos())
                        }
                        Err(message) => {
                            eprintln!("logfmt-bench: size {}: file {op}: {message}", case.size);
                            return ExitCode::FAILURE;
                        }
                    }
                }
            }
            let _ = std::fs::remove_file(&path);
        }
        if args.scan {
            for threads in [1, 2] {
                for _ in 0..args.reps {
                    let start = Instant::now();
                    if let Err(message) = bench.split_scan(threads) {
                        eprintln!("logfmt-bench: size {}: split scan: {message}", case.size);
                        return ExitCode::FAILURE;
                    }
                    result(
                        &args.name,
                        &format!("scan{threads}"),
                        bench.log_len(),
                        start.elapsed().as_nanos(),
                    );
                }
            }
        }
        if args.limits {
            for _ in 0..args.reps {
                let start = Instant::now();
                let bytes = bench.memcpy();
                result("memcpy", "copy", bytes, start.elapsed().as_nanos());
            }
            for _ in 0..args.reps {
                let start = Instant::now();
                let bytes = bench.crc();
                result("crc32c", "crc", bytes, start.elapsed().as_nanos());
            }
            for _ in 0..args.reps {
                let start = Instant::now();
                let bytes = bench.own_crc();
                result("logfmt-crc", "crc", bytes, start.elapsed().as_nanos());
            }
        }
    }
    ExitCode::SUCCESS
}
