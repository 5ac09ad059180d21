//! `--threads`: a large log read on several threads gives the output of one reader (`verify`,
//! `stats`, `cat --output json`), on clean logs and on every kind of end and damage (where the
//! split scan gives way to one reader).

mod common;

use common::{TestResult, logfmt, p, status, stderr};
use logfmt_std::{LogWriter, LogWriterOptions};

/// A log of 34 MiB: records of 0 to 70 000 bytes, some across blocks and across the edges of
/// the ranges the threads read.
fn big_log() -> Vec<u8> {
    let mut writer = LogWriter::new(Vec::new(), &LogWriterOptions::new());
    let mut i = 0usize;
    let mut len = 0;
    while len < 34 << 20 {
        let size = (i * 7_919) % 70_000;
        writer
            .add_record(&vec![i as u8; size])
            .expect("writing to memory");
        len += size + 7;
        i += 1;
    }
    writer.close().expect("writing to memory")
}

/// `logfmt args...` with its standard output to a file (read back into the output): `cat`
/// prints a large log on several threads only into a file (to a pipe, its first record
/// comes at once, from one reader).
fn logfmt_into_file(args: &[&str], file: &std::path::Path) -> std::process::Output {
    let out = std::fs::File::create(file).expect("the output file");
    let mut output = std::process::Command::new(env!("CARGO_BIN_EXE_logfmt"))
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(out)
        .output()
        .expect("run logfmt");
    output.stdout = std::fs::read(file).expect("the output file");
    output
}

/// `logfmt verify --json`, `stats --json` and `cat --output json` of `log` with 1, 2 and 3
/// threads: the same output, the same notes, the same status. `cat` with several threads
/// prints into a file (where it reads in parallel), and to a pipe (where it does not).
fn same_with_threads(dir: &std::path::Path, name: &str, log: &[u8]) -> TestResult {
    let path = dir.join(name);
    std::fs::write(&path, log)?;
    // `cat` prints the whole log: in hex on the clean log and on a damaged one only, and in
    // text (decoded) on a write-ahead log of WriteBatches.
    let commands = if name.starts_with("clean") || name.starts_with("damaged0") {
        ["verify", "stats", "cat"].as_slice()
    } else if name.starts_with("0000") {
        ["verify", "stats", "cat-text"].as_slice()
    } else {
        ["verify", "stats"].as_slice()
    };
    for &command in commands {
        let (command, json) = match command {
            "cat" => ("cat", ["--output", "json"].as_slice()),
            "cat-text" => ("cat", [].as_slice()),
            other => (other, ["--json"].as_slice()),
        };
        let run = |threads| {
            let mut args = vec![command];
            args.extend_from_slice(json);
            args.extend(["--threads", threads, p(&path)]);
            if command == "cat" && threads != "1" {
                logfmt_into_file(&args, &dir.join("cat.out"))
            } else {
                logfmt(&args, b"")
            }
        };
        let one = run("1");
        assert!(status(&one) < 2, "{}", stderr(&one));
        let threads = if command == "cat" {
            ["2"].as_slice()
        } else {
            ["2", "3"].as_slice()
        };
        if command == "cat" {
            // To a pipe: one reader, the same output.
            let mut args = vec![command];
            args.extend_from_slice(json);
            args.extend(["--threads", "2", p(&path)]);
            let piped = logfmt(&args, b"");
            assert!(piped.stdout == one.stdout, "cat {name} to a pipe");
            assert_eq!(stderr(&piped), stderr(&one), "cat {name} to a pipe");
        }
        for &threads in threads {
            let many = run(threads);
            assert!(
                many.stdout == one.stdout,
                "{command} {name}, {threads} threads: {}",
                String::from_utf8_lossy(&many.stdout[..many.stdout.len().min(2_000)])
            );
            assert_eq!(stderr(&many), stderr(&one), "{command} {name}");
            assert_eq!(status(&many), status(&one), "{command} {name}");
        }
    }
    Ok(())
}

#[test]
fn verify_on_several_threads_says_what_one_reader_says() -> TestResult {
    let dir = tempfile::tempdir()?;
    let log = big_log();
    same_with_threads(dir.path(), "clean.log", &log)?;
    // A torn tail.
    same_with_threads(dir.path(), "torn.log", &log[..log.len() - 1_000])?;
    // Zeros to the end of the file (space preallocated, never written).
    let mut zeros = log.clone();
    zeros.resize(log.len() + (3 << 20), 0);
    same_with_threads(dir.path(), "zeros.log", &zeros)?;
    // Damage near the middle, where the ranges of 2 threads meet, and near a third.
    for (i, at) in [log.len() / 2 + 20, log.len() / 3].into_iter().enumerate() {
        let mut damaged = log.clone();
        damaged[at] ^= 0x10;
        same_with_threads(dir.path(), &format!("damaged{i}.log"), &damaged)?;
    }
    // Content checked by name: a write-ahead log whose records are not WriteBatches is read
    // as raw records, as one reader decides on its first record.
    same_with_threads(dir.path(), "000007.log", &log)?;
    Ok(())
}

/// A write-ahead log of WriteBatches of one put each, packed; with `cut`, one batch in 1000 is
/// cut short (it does not decode).
fn write_batches(cut: bool) -> Result<Vec<u8>, Box<dyn std::error::Error>> {
    use logfmt_std::content::Op;
    let options = LogWriterOptions::new().pack(Some(logfmt_std::advanced::PackLimit::default()));
    let mut writer = LogWriter::new(Vec::new(), &options);
    let mut len = 0;
    let mut sequence = 1u64;
    while len < 34 << 20 {
        let mut batch = sequence.to_le_bytes().to_vec();
        batch.extend_from_slice(&1u32.to_le_bytes());
        let key = format!("key{sequence:08}");
        let value = vec![b'v'; (sequence % 90) as usize];
        Op::Put {
            cf: (sequence % 3) as u32,
            key: key.as_bytes(),
            value: &value,
        }
        .encode(&mut batch);
        if cut && sequence.is_multiple_of(1000) {
            batch.truncate(batch.len() - 2);
        }
        len += batch.len() + 1;
        writer.add_record(&batch)?;
        sequence += 1;
    }
    Ok(writer.close()?)
}

#[test]
fn write_batches_and_packs_on_several_threads() -> TestResult {
    let dir = tempfile::tempdir()?;
    same_with_threads(dir.path(), "000009.log", &write_batches(false)?)?;
    same_with_threads(dir.path(), "000010.log", &write_batches(true)?)
}
