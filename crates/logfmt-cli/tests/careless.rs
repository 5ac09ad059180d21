//! The `logfmt` binary against a careless or hostile user: a picture of a hostile log stays
//! small, man pages are never written through a link, the damage notes of `export` follow
//! `--max-errors` and `-q`, a full standard output is an error and not a panic, `-` is
//! standard output wherever an output is named, errors name the file they concern, a map read
//! from a pipe draws its blocks, every command tells the same story of a log's end, `write
//! --json` says what it wrote even when its input then fails, and a line limit larger than
//! memory fails cleanly.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

use common::*;

/// A chunk of `record_type` with an empty payload and a checksum that holds, 7 bytes.
fn empty_chunk(record_type: u8) -> [u8; 7] {
    let crc = logfmt_core::parts::checksum::crc32c(&[record_type]);
    let masked = logfmt_core::parts::checksum::mask(crc);
    let mut chunk = [0u8; 7];
    chunk[..4].copy_from_slice(&masked.to_le_bytes());
    chunk[6] = record_type;
    chunk
}

/// `blocks` blocks of empty MIDDLE chunks back to back: every chunk is damage LevelDB
/// reports ("missing start of fragmented record"), 4 681 of them a block.
fn hostile_log(path: &Path, blocks: usize) {
    let chunk = empty_chunk(3);
    let mut block = Vec::with_capacity(32_768);
    while block.len() + 7 <= 32_768 {
        block.extend_from_slice(&chunk);
    }
    block.resize(32_768, 0);
    std::fs::write(path, block.repeat(blocks)).expect("writes the log");
}

/// A log of `records` lines written by `logfmt write`.
fn written(path: &Path, records: usize) {
    let lines: String = (0..records).map(|i| format!("record {i:05}\n")).collect();
    let output = logfmt(&["write", "--force", p(path)], lines.as_bytes());
    assert_eq!(status(&output), 0, "{}", stderr(&output));
}

/// Runs `logfmt args...` with standard output sent to `/dev/full`.
fn to_dev_full(args: &[&str]) -> std::process::Output {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    Command::new(env!("CARGO_BIN_EXE_logfmt"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(full)
        .stderr(Stdio::piped())
        .output()
        .expect("runs logfmt")
}

#[test]
fn the_picture_of_a_hostile_log_is_bounded() -> TestResult {
    let dir = tempfile::tempdir()?;
    let log = dir.path().join("hostile.log");
    // 1 MiB: 150 000 damaged chunks. Drawn span by span, 27 MB of HTML.
    hostile_log(&log, 32);
    let out = dir.path().join("map.html");
    let output = logfmt(&["map", "--html", p(&out), p(&log)], b"");
    assert_eq!(status(&output), 0, "{}", stderr(&output));
    let html = std::fs::read_to_string(&out)?;
    assert!(
        html.len() < 2 << 20,
        "a picture of 32 blocks: {} bytes",
        html.len()
    );
    assert!(
        html.contains("not drawn one by one"),
        "the page says it summarises"
    );
    // Every block still has its row.
    for block in 0..32 {
        assert!(
            html.contains(&format!("id=\"f0-b{block}\"")),
            "block {block}"
        );
    }
    // However many corruptions are listed, the page stays under 10 MB.
    let output = logfmt(
        &[
            "map",
            "--force",
            "--max-errors",
            "1000000",
            "--html",
            p(&out),
            p(&log),
        ],
        b"",
    );
    assert_eq!(status(&output), 0, "{}", stderr(&output));
    let html = std::fs::read_to_string(&out)?;
    assert!(html.len() < 10_000_000, "{} bytes", html.len());
    assert!(html.ends_with("</html>\n"), "a whole page");
    assert!(
        html.contains("the picture is cut short"),
        "the page says it is cut"
    );
    Ok(())
}

#[test]
fn man_pages_are_never_written_through_a_link() -> TestResult {
    let dir = tempfile::tempdir()?;
    let precious = dir.path().join("precious.txt");
    std::fs::write(&precious, b"keep me\n")?;
    let pages = dir.path().join("man1");
    std::fs::create_dir(&pages)?;
    std::os::unix::fs::symlink(&precious, pages.join("logfmt-cat.1"))?;
    let output = logfmt(&["man", p(&pages)], b"");
    assert_eq!(status(&output), 2, "{}", stderr(&output));
    assert!(
        stderr(&output).contains("logfmt-cat.1"),
        "{}",
        stderr(&output)
    );
    assert_eq!(std::fs::read(&precious)?, b"keep me\n");
    // Nothing written: the link is all there is.
    assert_eq!(std::fs::read_dir(&pages)?.count(), 1);
    Ok(())
}

#[test]
fn man_pages_refuse_a_directory_in_the_way_before_writing() -> TestResult {
    let dir = tempfile::tempdir()?;
    let pages = dir.path().join("man1");
    std::fs::create_dir_all(pages.join("logfmt-verify.1"))?;
    let output = logfmt(&["man", p(&pages)], b"");
    assert_eq!(status(&output), 2, "{}", stderr(&output));
    assert!(
        stderr(&output).contains("logfmt-verify.1"),
        "names the entry: {}",
        stderr(&output)
    );
    assert_eq!(std::fs::read_dir(&pages)?.count(), 1, "no page written");
    // Without it, every page is written, and written again over the old ones.
    std::fs::remove_dir(pages.join("logfmt-verify.1"))?;
    for _ in 0..2 {
        let output = logfmt(&["man", p(&pages)], b"");
        assert_eq!(status(&output), 0, "{}", stderr(&output));
    }
    assert!(pages.join("logfmt.1").is_file() && pages.join("logfmt-verify.1").is_file());
    let names: Vec<String> = std::fs::read_dir(&pages)?
        .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect::<Result<_, _>>()?;
    assert!(names.iter().all(|n| n.ends_with(".1")), "{names:?}");
    Ok(())
}

#[test]
fn export_notes_damage_as_max_errors_and_quiet_say() -> TestResult {
    let dir = tempfile::tempdir()?;
    let log = dir.path().join("hostile.log");
    hostile_log(&log, 2);
    let out = dir.path().join("plain.log");
    let output = logfmt(&["export", "--max-errors", "5", p(&log), p(&out)], b"");
    assert_eq!(status(&output), 0, "{}", stderr(&output));
    let lines = stderr(&output).lines().count();
    assert!(lines <= 6, "{lines} lines: {}", stderr(&output));
    assert!(stderr(&output).contains("not noted"), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("9362 damaged regions"),
        "{}",
        stdout(&output)
    );
    let output = logfmt(&["export", "-q", "--force", p(&log), p(&out)], b"");
    assert_eq!(status(&output), 0, "{}", stderr(&output));
    assert!(
        stderr(&output).lines().count() <= 1,
        "one warning at most: {}",
        stderr(&output)
    );
    Ok(())
}

#[test]
fn a_full_standard_output_is_an_error_not_a_panic() -> TestResult {
    let dir = tempfile::tempdir()?;
    let log = dir.path().join("a.log");
    written(&log, 3);
    for args in [
        &["completions", "bash"][..],
        &["completions", "zsh"],
        &["--help"],
        &["cat", "--help"],
        &["--version"],
        &["cat", p(&log)],
        &["cat", "--json", p(&log)],
        &["verify", p(&log)],
        &["stats", "--json", p(&log)],
        &["chunks", p(&log)],
        &["map", p(&log)],
        &["map", "--html", "-", p(&log)],
        &["split", p(&log)],
    ] {
        let output = to_dev_full(args);
        let error = stderr(&output);
        assert_eq!(status(&output), 2, "{args:?}: {error}");
        assert!(!error.contains("panicked"), "{args:?}: {error}");
        assert!(error.starts_with("logfmt: error: "), "{args:?}: {error}");
        assert_eq!(error.lines().count(), 1, "{args:?}: {error}");
    }
    Ok(())
}

#[test]
fn a_dash_is_standard_output_or_refused() -> TestResult {
    let dir = tempfile::tempdir()?;
    let log = dir.path().join("a.log");
    written(&log, 3);
    // The picture on standard output, instead of the map.
    let output = Command::new(env!("CARGO_BIN_EXE_logfmt"))
        .current_dir(dir.path())
        .args(["map", "--html", "-", "a.log"])
        .output()?;
    assert_eq!(status(&output), 0, "{}", stderr(&output));
    assert!(
        stdout(&output).starts_with("<!doctype html>"),
        "{}",
        stdout(&output)
    );
    assert!(stdout(&output).ends_with("</html>\n"));
    // Salvage and export write a file put in place whole: `-` is refused, and no file named
    // `-` is made.
    for command in ["salvage", "export"] {
        let output = Command::new(env!("CARGO_BIN_EXE_logfmt"))
            .current_dir(dir.path())
            .args([command, "a.log", "-"])
            .output()?;
        assert_eq!(status(&output), 2, "{command}: {}", stderr(&output));
        assert!(
            stderr(&output).contains("standard output"),
            "{command}: {}",
            stderr(&output)
        );
        assert!(output.stdout.is_empty(), "{command}");
    }
    assert!(!dir.path().join("-").exists(), "no file named -");
    Ok(())
}

#[test]
fn a_picture_into_a_missing_directory_names_it() -> TestResult {
    let dir = tempfile::tempdir()?;
    let log = dir.path().join("a.log");
    written(&log, 3);
    let out = dir.path().join("nodir").join("x.html");
    let output = logfmt(&["map", "--html", p(&out), p(&log)], b"");
    assert_eq!(status(&output), 2, "{}", stderr(&output));
    let error = stderr(&output);
    assert!(error.contains("nodir/x.html"), "{error}");
    assert!(!error.contains("standard output"), "{error}");
    Ok(())
}

#[test]
fn a_map_read_from_a_pipe_draws_its_blocks() -> TestResult {
    let dir = tempfile::tempdir()?;
    let log = dir.path().join("a.log");
    written(&log, 5000);
    let bytes = std::fs::read(&log)?;
    let output = logfmt(&["map", "--json", "-"], &bytes);
    assert_eq!(status(&output), 0, "{}", stderr(&output));
    let mut map = json(&output);
    assert_eq!(map["records"], 5000);
    assert_eq!(map["blocks"], "...", "{map}");
    assert_eq!(map["bytes"], bytes.len() as u64);
    // As the file's own map says.
    let mut of_file = json(&logfmt(&["map", "--json", p(&log)], b""));
    map["file"] = serde_json::Value::Null;
    of_file["file"] = serde_json::Value::Null;
    assert_eq!(map, of_file);
    let output = logfmt(&["map", "-"], &bytes);
    assert!(stdout(&output).starts_with("...\n"), "{}", stdout(&output));
    assert!(stdout(&output).contains("3 blocks"), "{}", stdout(&output));
    // An empty pipe: no block.
    let output = logfmt(&["map", "--json", "-"], b"");
    assert_eq!(json(&output)["blocks"], "", "{}", stdout(&output));
    Ok(())
}

/// Three records, the second's length field made to run past the end of the file: LevelDB's
/// reader ends the log there, but the third record's chunk is well-formed after it.
fn lost_tail_log(path: &Path) {
    written(path, 3);
    let mut bytes = std::fs::read(path).expect("reads");
    // Each record is "record 0000N" (12 bytes): chunks of 19 bytes.
    bytes[19 + 4] = 0xff;
    bytes[19 + 5] = 0x7f;
    std::fs::write(path, bytes).expect("writes");
}

#[test]
fn every_command_tells_the_same_end_of_a_log() -> TestResult {
    let dir = tempfile::tempdir()?;
    let log = dir.path().join("lost.log");
    lost_tail_log(&log);
    let verify = logfmt(&["verify", "--json", p(&log)], b"");
    assert_eq!(json(&verify)["tail"]["kind"], "damage");
    let stats = logfmt(&["stats", p(&log)], b"");
    assert!(
        !stdout(&stats).contains("torn tail"),
        "stats: {}",
        stdout(&stats)
    );
    assert!(
        stdout(&stats).contains("not a torn write"),
        "{}",
        stdout(&stats)
    );
    let stats = json(&logfmt(&["stats", "--json", p(&log)], b""));
    assert_eq!(stats["tail"]["kind"], "damage", "{stats}");
    let map = logfmt(&["map", p(&log)], b"");
    assert!(!stdout(&map).contains("torn tail"), "map: {}", stdout(&map));
    assert!(
        stdout(&map).contains("not a torn write"),
        "{}",
        stdout(&map)
    );
    let map = json(&logfmt(&["map", "--json", p(&log)], b""));
    assert_eq!(map["tail"]["kind"], "damage", "{map}");
    let chunks = logfmt(&["chunks", p(&log)], b"");
    assert!(
        !stdout(&chunks).contains("a torn write, the end of the log"),
        "chunks: {}",
        stdout(&chunks)
    );
    assert!(
        stdout(&chunks).contains("0 bytes torn"),
        "{}",
        stdout(&chunks)
    );

    // A record that leaves 5 bytes of its block, and the file ends inside the trailer:
    // clean, in every command.
    let log = dir.path().join("trailer.log");
    let record = "a".repeat(32_768 - 7 - 5);
    let output = logfmt(&["write", p(&log)], format!("{record}\n").as_bytes());
    assert_eq!(status(&output), 0, "{}", stderr(&output));
    let mut bytes = std::fs::read(&log)?;
    bytes.extend_from_slice(&[0, 0, 0]);
    std::fs::write(&log, &bytes)?;
    let verify = json(&logfmt(&["verify", "--json", p(&log)], b""));
    assert_eq!(verify["tail"], serde_json::Value::Null, "{verify}");
    let stats = json(&logfmt(&["stats", "--json", p(&log)], b""));
    assert_eq!(stats["tail"], serde_json::Value::Null, "{stats}");
    let map = json(&logfmt(&["map", "--json", p(&log)], b""));
    assert_eq!(map["tail"], serde_json::Value::Null, "{map}");
    let chunks = logfmt(&["chunks", "--json", p(&log)], b"");
    let summary: serde_json::Value =
        serde_json::from_str(stdout(&chunks).lines().last().expect("a summary line"))?;
    assert_eq!(summary["torn_bytes"], 0, "{}", stdout(&chunks));
    assert_eq!(summary["trailer_bytes"], 3, "{}", stdout(&chunks));
    Ok(())
}

#[test]
fn write_json_says_what_was_written_when_framed_input_fails() -> TestResult {
    let dir = tempfile::tempdir()?;
    let log = dir.path().join("a.log");
    let mut input = framed(&[b"one".to_vec(), b"two".to_vec()]);
    // A third frame cut short.
    input.extend_from_slice(&10u32.to_le_bytes());
    input.extend_from_slice(b"thr");
    let output = logfmt(&["write", "--json", "--input", "framed", p(&log)], &input);
    assert_eq!(status(&output), 1, "{}", stderr(&output));
    let report = json(&output);
    assert_eq!(report["records"], 2, "{report}");
    assert_eq!(report["payload_bytes"], 6, "{report}");
    assert!(
        report["error"]
            .as_str()
            .is_some_and(|e| e.contains("frame")),
        "{report}"
    );
    assert!(
        stderr(&output).contains("logfmt: error: "),
        "{}",
        stderr(&output)
    );
    // Nothing written: no JSON claims a log.
    let output = logfmt(
        &[
            "write",
            "--json",
            "--input",
            "framed",
            p(&dir.path().join("b.log")),
        ],
        &10u32.to_le_bytes(),
    );
    assert_eq!(status(&output), 1, "{}", stderr(&output));
    assert!(output.stdout.is_empty(), "{}", stdout(&output));
    Ok(())
}

#[test]
fn a_line_limit_larger_than_memory_fails_cleanly() -> TestResult {
    let dir = tempfile::tempdir()?;
    let log = dir.path().join("x.log");
    // 300 MB of address space; a line of 400 MB, and a limit of 100 GB.
    let mut child = Command::new("/bin/sh")
        .arg("-c")
        .arg("ulimit -v 300000; exec \"$@\"")
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_logfmt"))
        .args(["write", "--line-limit", "100000000000", p(&log)])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut stdin = child.stdin.take().expect("stdin");
    let feeder = std::thread::spawn(move || {
        use std::io::Write;
        let chunk = vec![b'a'; 1 << 20];
        for _ in 0..400 {
            if stdin.write_all(&chunk).is_err() {
                break;
            }
        }
    });
    let output = child.wait_with_output()?;
    feeder.join().expect("feeder");
    let error = stderr(&output);
    assert_eq!(status(&output), 2, "{error}");
    assert!(error.starts_with("logfmt: error: "), "{error}");
    assert_eq!(error.lines().count(), 1, "{error}");
    assert!(error.contains("memory"), "{error}");
    let left: Vec<_> = std::fs::read_dir(dir.path())?.collect();
    assert!(left.is_empty(), "no file left: {left:?}");
    Ok(())
}
