//! `cargo xtask bench-defmt [--quick]`: decoding defmt frames with the firmware's ELF —
//! `logfmt defmt` on a log of the flight recorder's frames against `defmt-print` (installed
//! with `cargo install` if missing) on the same frames in defmt's own stream, in the same run.
//! The frames are those of `tests/data/defmt/defmt-flash.img` (every kind of argument),
//! repeated to a million (100 000 with `--quick`).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::cmd::{Cmd, Error, Result, banner, build_release_bin, project_root};

/// The `defmt-print` this bench measures (the decoder's version `logfmt` is built with).
const DEFMT_PRINT: &str = "1.2.0";
const FRAMES: usize = 1_000_000;

/// `cargo xtask bench-defmt [--quick]`.
pub(crate) fn run(args: &[String]) -> Result {
    let quick = args.iter().any(|a| a == "--quick");
    if let Some(bad) = args.iter().find(|a| *a != "--quick") {
        return Err(Error::Usage(format!(
            "unexpected argument `{bad}` for `bench-defmt`"
        )));
    }
    let frames_wanted = if quick { FRAMES / 10 } else { FRAMES };
    let reps = if quick { 1 } else { 3 };
    ensure_defmt_print()?;
    banner("bench-defmt: build logfmt (release)");
    let logfmt = build_release_bin("logfmt-cli", "logfmt")?;
    let data = project_root().join("tests/data/defmt");
    let (elf, image) = (
        data.join("defmt-recorder.elf"),
        data.join("defmt-flash.img"),
    );
    let dir = crate::cmd::fresh_bench_dir("logfmt-bench-defmt")?;

    // The frames, repeated; as a plain log and as defmt's stream.
    let framed = output(
        Command::new(&logfmt)
            .args(["cat", "--output", "framed"])
            .arg(&image),
    )?;
    let per_copy = count_framed(&framed);
    if per_copy == 0 {
        return Err(Error::Failed("the fixture image holds no frame".to_owned()));
    }
    let copies = frames_wanted.div_ceil(per_copy);
    let all = framed.repeat(copies);
    let frames = per_copy * copies;
    let log = dir.join("frames.log");
    feed(
        Command::new(&logfmt)
            .args(["write", "--input", "framed"])
            .arg(&log),
        &all,
    )?;
    Cmd::cargo()
        .args([
            "build",
            "--release",
            "-q",
            "-p",
            "logfmt-defmt",
            "--example",
            "defmt_stream",
        ])
        .run()?;
    let encoder = project_root().join("target/release/examples/defmt_stream");
    let stream = output_with_input(&mut Command::new(&encoder), &all)?;
    let stream_path = dir.join("frames.defmt");
    std::fs::write(&stream_path, &stream)
        .map_err(|e| Error::Failed(format!("{}: {e}", stream_path.display())))?;
    println!(
        "{frames} frames: a log of {} bytes, defmt's stream {} bytes",
        std::fs::metadata(&log).map(|m| m.len()).unwrap_or(0),
        stream.len()
    );

    let ours = best_of(reps, || {
        time_lines(
            Command::new(&logfmt)
                .arg("defmt")
                .arg("--elf")
                .arg(&elf)
                .arg(&log),
            None,
        )
    })?;
    let theirs = best_of(reps, || {
        time_lines(
            // `-v`: with each frame's location line, as `logfmt defmt` prints it.
            Command::new("defmt-print").arg("-v").arg("-e").arg(&elf),
            Some(&stream_path),
        )
    })?;
    if ours.1 != theirs.1 {
        return Err(Error::Failed(format!(
            "`logfmt defmt` printed {} lines, `defmt-print` {}",
            ours.1, theirs.1
        )));
    }
    let rate = |d: Duration| frames as f64 / d.as_secs_f64();
    banner("bench-defmt: frames decoded a second (best of the runs, output to a pipe)");
    println!(
        "  logfmt defmt --elf (a plain log)      {:>12.0} frames/s  ({:.2} s)",
        rate(ours.0),
        ours.0.as_secs_f64()
    );
    println!(
        "  defmt-print {DEFMT_PRINT} -v -e (defmt's stream) {:>11.0} frames/s  ({:.2} s)",
        rate(theirs.0),
        theirs.0.as_secs_f64()
    );
    println!(
        "  ratio {:.2}",
        theirs.0.as_secs_f64() / ours.0.as_secs_f64()
    );
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// Installs `defmt-print` at [`DEFMT_PRINT`] unless that version answers.
fn ensure_defmt_print() -> Result {
    let version = Command::new("defmt-print").arg("--version").output();
    if version.is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains(DEFMT_PRINT)) {
        return Ok(());
    }
    Cmd::cargo()
        .args([
            "install",
            "defmt-print",
            "--version",
            DEFMT_PRINT,
            "--locked",
        ])
        .run()
}

/// Framed records (`u32` LE length, bytes) in `bytes`.
fn count_framed(mut bytes: &[u8]) -> usize {
    let mut n = 0;
    while let Some((len, rest)) = bytes.split_first_chunk::<4>() {
        let len = u32::from_le_bytes(*len) as usize;
        bytes = rest.get(len..).unwrap_or_default();
        n += 1;
    }
    n
}

fn output(cmd: &mut Command) -> Result<Vec<u8>> {
    let out = cmd
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| Error::Failed(format!("{cmd:?}: {e}")))?;
    if !out.status.success() {
        return Err(Error::Failed(format!("{cmd:?} failed")));
    }
    Ok(out.stdout)
}

fn output_with_input(cmd: &mut Command, input: &[u8]) -> Result<Vec<u8>> {
    use std::io::Write;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| Error::Failed(format!("{cmd:?}: {e}")))?;
    let mut stdin = child
        .stdin
        .take()
        .ok_or_else(|| Error::Failed("stdin".to_owned()))?;
    let input = input.to_vec();
    let feeder = std::thread::spawn(move || stdin.write_all(&input));
    let out = child
        .wait_with_output()
        .map_err(|e| Error::Failed(format!("{cmd:?}: {e}")))?;
    let _ = feeder.join();
    if !out.status.success() {
        return Err(Error::Failed(format!("{cmd:?} failed")));
    }
    Ok(out.stdout)
}

fn feed(cmd: &mut Command, input: &[u8]) -> Result {
    output_with_input(cmd, input).map(drop)
}

/// Runs `cmd` (its standard input from `input`, if any), counting the lines it prints: its
/// wall time and the lines.
fn time_lines(cmd: &mut Command, input: Option<&Path>) -> Result<(Duration, usize)> {
    use std::io::Read;
    let stdin = match input {
        Some(path) => Stdio::from(
            std::fs::File::open(path)
                .map_err(|e| Error::Failed(format!("{}: {e}", path.display())))?,
        ),
        None => Stdio::null(),
    };
    let start = Instant::now();
    let mut child = cmd
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| Error::Failed(format!("{cmd:?}: {e}")))?;
    let mut stdout = child
        .stdout
        .take()
        .ok_or_else(|| Error::Failed("stdout".to_owned()))?;
    let mut buf = vec![0u8; 1 << 16];
    let mut lines = 0;
    loop {
        let n = stdout
            .read(&mut buf)
            .map_err(|e| Error::Failed(e.to_string()))?;
        if n == 0 {
            break;
        }
        lines += buf[..n].iter().filter(|&&b| b == b'\n').count();
    }
    let status = child.wait().map_err(|e| Error::Failed(e.to_string()))?;
    let took = start.elapsed();
    if !status.success() {
        return Err(Error::Failed(format!("{cmd:?} failed")));
    }
    Ok((took, lines))
}

fn best_of(
    reps: usize,
    mut f: impl FnMut() -> Result<(Duration, usize)>,
) -> Result<(Duration, usize)> {
    let mut best: Option<(Duration, usize)> = None;
    for _ in 0..reps {
        let run = f()?;
        best = Some(match best {
            Some(b) if b.0 <= run.0 => b,
            _ => run,
        });
    }
    best.ok_or_else(|| Error::Failed("no run".to_owned()))
}
