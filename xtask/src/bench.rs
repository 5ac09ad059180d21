//! `cargo xtask bench`: the benchmark table. Builds `logfmt-bench` (release), runs every case
//! with the bounds (memcpy and CRC-32C over the same payloads), file-backed passes and the
//! parallel split scan in one run, and prints medians: records/s, MB/s, the ratio to LevelDB's
//! reference figures and to the bounds.

use std::collections::BTreeMap;

use crate::cmd::{Cmd, Error, Result, banner};

/// LevelDB 1.23's C++ `log::Writer`/`log::Reader` (hardware CRC-32C, in-memory files), medians
/// measured on a machine of this project's kind (2 vCPU AMD EPYC Zen 4): size → (write ns,
/// read ns) per record. From the performance issue; LevelDB is not built here.
const LEVELDB_NS: [(u64, f64, f64); 5] = [
    (16, 25.0, 20.0),
    (100, 33.0, 30.0),
    (1024, 130.0, 135.0),
    (32_768, 5001.0, 4757.0),
    (1_048_576, 156_184.0, 165_171.0),
];

const REPS: &str = "7";

pub(crate) fn run(args: &[String]) -> Result {
    let quick = args.iter().any(|a| a == "--quick");
    if let Some(bad) = args
        .iter()
        .find(|a| !matches!(a.as_str(), "--quick" | "flash" | "pack" | "durable"))
    {
        return Err(Error::Usage(format!(
            "unexpected argument `{bad}` for `bench`"
        )));
    }
    if args.iter().any(|a| a == "flash") {
        // logfmt and sequential-storage on the same simulated flash: `FLASH ...` lines.
        let exe = crate::cmd::build_release_bin("logfmt-bench", "logfmt-bench")?;
        let reps = if quick { "1" } else { "5" };
        let cmd = Cmd::new(&exe.to_string_lossy()).args(["flash", "--reps", reps]);
        print!("{}", cmd.read()?);
        return Ok(());
    }
    if args.iter().any(|a| a == "pack") {
        return pack(quick);
    }
    if args.iter().any(|a| a == "durable") {
        return crate::bench_durable::run(quick);
    }
    banner("bench: build logfmt-bench (release)");
    let exe = crate::cmd::build_release_bin("logfmt-bench", "logfmt-bench")?;
    let dir = if std::path::Path::new("/dev/shm").is_dir() {
        std::path::PathBuf::from("/dev/shm")
    } else {
        std::env::temp_dir()
    };
    let mut cmd = Cmd::new(&exe.to_string_lossy())
        .args([
            "--name",
            "logfmt",
            "--reps",
            if quick { "3" } else { REPS },
            "--limits",
            "--scan",
        ])
        .args(["--files", &dir.to_string_lossy()]);
    if quick {
        cmd = cmd.args([
            "16:200000",
            "100:100000",
            "1024:16384",
            "32768:512",
            "1048576:16",
        ]);
    }
    banner("bench: run (all figures from this one run)");
    let output = cmd.read()?;
    print!("{}", table(&output)?);
    Ok(())
}

/// Per (size, impl, op): every pass's ns per record.
type Samples = BTreeMap<(u64, String, String), Vec<f64>>;

fn parse(output: &str) -> Result<(Samples, BTreeMap<u64, u64>)> {
    let mut samples = Samples::new();
    let mut sizes = BTreeMap::new();
    for line in output.lines().filter(|l| l.starts_with("RESULT ")) {
        let field = |key: &str| {
            line.split(' ')
                .find_map(|f| f.strip_prefix(key).and_then(|v| v.strip_prefix('=')))
                .ok_or_else(|| Error::Failed(format!("bench: no {key} in {line:?}")))
        };
        let number = |key: &str| -> Result<u64> {
            field(key)?
                .parse()
                .map_err(|_| Error::Failed(format!("bench: bad {key} in {line:?}")))
        };
        let (size, records, ns) = (number("size")?, number("records")?, number("ns")?);
        sizes.insert(size, records);
        samples
            .entry((size, field("impl")?.to_string(), field("op")?.to_string()))
            .or_default()
            .push(ns as f64 / records.max(1) as f64);
    }
    Ok((samples, sizes))
}

fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

fn table(output: &str) -> Result<String> {
    use std::fmt::Write;
    let (samples, sizes) = parse(output)?;
    let get = |size: u64, imp: &str, op: &str| {
        samples
            .get(&(size, imp.to_string(), op.to_string()))
            .map_or(f64::NAN, |v| median(v))
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nmedians of the passes; ns/record; MB/s of payload; ratio = LevelDB's ns / ours \
         (LevelDB 1.23 C++, reference figures for this machine kind)\n"
    );
    let _ = writeln!(
        out,
        "{:>8} | {:>10} {:>8} {:>6} | {:>10} {:>8} {:>6} | {:>9} {:>9} {:>9} | {:>7} {:>7}",
        "size",
        "write ns",
        "MB/s",
        "vs LDB",
        "read ns",
        "MB/s",
        "vs LDB",
        "memcpy ns",
        "crc ns",
        "own crc",
        "w/bound",
        "r/bound"
    );
    for &size in sizes.keys() {
        let (write, read) = (get(size, "logfmt", "write"), get(size, "logfmt", "read"));
        let (copy, crc) = (get(size, "memcpy", "copy"), get(size, "crc32c", "crc"));
        let own_crc = get(size, "logfmt-crc", "crc");
        let (ldb_w, ldb_r) = LEVELDB_NS
            .iter()
            .find(|r| r.0 == size)
            .map_or((f64::NAN, f64::NAN), |r| (r.1, r.2));
        let mbs = |ns: f64| size as f64 / ns * 1e3;
        // The bound: one pass over the payload (memcpy) — the most a format that copies or
        // checks every byte can do.
        let _ = writeln!(
            out,
            "{:>8} | {:>10.1} {:>8.0} {:>5.2}x | {:>10.1} {:>8.0} {:>5.2}x | {:>9.1} {:>9.1} {:>9.1} | {:>6.0}% {:>6.0}%",
            size,
            write,
            mbs(write),
            ldb_w / write,
            read,
            mbs(read),
            ldb_r / read,
            copy,
            crc,
            own_crc,
            copy / write * 100.0,
            copy / read * 100.0,
        );
    }
    let _ = writeln!(
        out,
        "\nmemcpy, crc (the crc32c crate), own crc (logfmt's checksum): each alone over every \
         payload, ns/record\nw/bound, r/bound: memcpy's time as a share of ours (100% = at the \
         copy bound)"
    );
    let _ = writeln!(
        out,
        "\nthrough files (logfmt-std, tmpfs), and the parallel split scan (records/s):\n"
    );
    let _ = writeln!(
        out,
        "{:>8} | {:>12} {:>12} | {:>14} {:>14} {:>8}",
        "size", "file write", "file read", "scan 1 thread", "scan 2 threads", "speedup"
    );
    for &size in sizes.keys() {
        let per_s = |ns: f64| 1e9 / ns;
        let (fw, fr) = (
            get(size, "logfmt-file", "write"),
            get(size, "logfmt-file", "read"),
        );
        let (s1, s2) = (get(size, "logfmt", "scan1"), get(size, "logfmt", "scan2"));
        let _ = writeln!(
            out,
            "{:>8} | {:>9.0} MB/s {:>7.0} MB/s | {:>14.0} {:>14.0} {:>7.2}x",
            size,
            size as f64 / fw * 1e3,
            size as f64 / fr * 1e3,
            per_s(s1),
            per_s(s2),
            s1 / s2,
        );
    }
    Ok(out)
}

/// `cargo xtask bench pack`: the same records plain and packed (`PACK ...` lines), then a table
/// of medians: bytes a record, ns a record, and records/s against LevelDB's reference figures.
fn pack(quick: bool) -> Result {
    banner("bench pack: build logfmt-bench (release)");
    let exe = crate::cmd::build_release_bin("logfmt-bench", "logfmt-bench")?;
    let cases: &[&str] = if quick {
        &["16:200000", "100:100000"]
    } else {
        &["16:2000000", "100:1000000"]
    };
    let reps = if quick { "3" } else { REPS };
    let output = Cmd::new(&exe.to_string_lossy())
        .args(["pack", "--reps", reps])
        .args(cases.iter().copied())
        .read()?;
    print!("{output}");
    /// A case's passes: records, log bytes, ns a record of each pass.
    type Passes = (u64, u64, Vec<f64>);
    // impl, size, op -> its passes.
    let mut passes: BTreeMap<(String, u64, String), Passes> = BTreeMap::new();
    for line in output.lines().filter(|l| l.starts_with("PACK ")) {
        let field = |key: &str| {
            line.split_whitespace()
                .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
                .map(str::to_owned)
        };
        let number = |key: &str| field(key).and_then(|v| v.parse::<u64>().ok());
        let (Some(imp), Some(op), Some(size), Some(records), Some(bytes), Some(ns)) = (
            field("impl"),
            field("op"),
            number("size"),
            number("records"),
            number("log_bytes"),
            number("ns"),
        ) else {
            return Err(Error::Failed(format!("unreadable line: {line}")));
        };
        let entry = passes
            .entry((imp, size, op))
            .or_insert((records, bytes, Vec::new()));
        entry.2.push(ns as f64 / records.max(1) as f64);
    }
    println!(
        "\n{:<14} {:>5} {:>6} {:>10} {:>12} {:>16}",
        "impl", "size", "op", "bytes/rec", "ns/rec", "vs LevelDB rec/s"
    );
    for ((imp, size, op), (records, bytes, mut ns)) in passes {
        ns.sort_by(f64::total_cmp);
        let median = ns.get(ns.len() / 2).copied().unwrap_or(f64::NAN);
        let leveldb = LEVELDB_NS
            .iter()
            .find(|(s, ..)| *s == size)
            .map(|&(_, write, read)| if op == "write" { write } else { read });
        let ratio = leveldb.map_or_else(|| "-".to_owned(), |l| format!("{:.2}x", l / median));
        println!(
            "{imp:<14} {size:>5} {op:>6} {:>10.2} {median:>12.2} {ratio:>16}",
            bytes as f64 / records.max(1) as f64
        );
    }
    println!(
        "(LevelDB's ns a record are the reference figures of this file's LEVELDB_NS, measured on \
         a 2 vCPU AMD EPYC Zen 4; the issue's targets: packed 16 B records <= 18 bytes each, \
         >= 10x LevelDB's records/s)"
    );
    Ok(())
}
