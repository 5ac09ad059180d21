//! `cargo xtask bench-zstd`: zstd decoding and encoding, the Rust coder (`ruzstd`, with which
//! every build of `logfmt-std` reads compressed records) against zstd's C library, on the same
//! frames: `logfmt-bench zstd-speed` (see `logfmt_bench::zstd_speed`), built with release code.
//! The load average is printed before and after: the figures are wall times.

use crate::cmd::{Cmd, Error, Result, banner, build_release_bin};

/// `cargo xtask bench-zstd [--quick]`.
pub(crate) fn run(args: &[String]) -> Result {
    let quick = args.iter().any(|a| a == "--quick");
    if let Some(bad) = args.iter().find(|a| *a != "--quick") {
        return Err(Error::Usage(format!(
            "unexpected argument `{bad}` for `bench-zstd`"
        )));
    }
    let (batches, reps) = if quick {
        ("20000", "1")
    } else {
        ("200000", "5")
    };
    banner("bench-zstd: build logfmt-bench (release)");
    let bench = build_release_bin("logfmt-bench", "logfmt-bench")?;
    let load = || std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average before: {}", load().trim());
    Cmd::new(&bench.to_string_lossy())
        .args(["zstd-speed", "--batches", batches, "--reps", reps])
        .run()?;
    println!("load average after: {}", load().trim());
    Ok(())
}
