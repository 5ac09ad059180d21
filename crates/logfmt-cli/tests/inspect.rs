//! The inspector: `cat` decoding write-ahead logs (WriteBatch) and MANIFESTs (VersionEdit),
//! whole database directories, several files, standard input, and `verify` saying which file
//! of a database holds which damage.

use std::fs;
use std::path::Path;

use logfmt_std::{LogWriter, LogWriterOptions};

mod common;

use common::*;

/// A varint32-prefixed slice.
fn slice(out: &mut Vec<u8>, data: &[u8]) {
    out.push(u8::try_from(data.len()).expect("short"));
    out.extend_from_slice(data);
}

/// A write batch: sequence, count, then the encoded operations.
fn batch(sequence: u64, count: u32, ops: &[u8]) -> Vec<u8> {
    let mut out = sequence.to_le_bytes().to_vec();
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(ops);
    out
}

fn put(key: &[u8], value: &[u8]) -> Vec<u8> {
    let mut out = vec![1];
    slice(&mut out, key);
    slice(&mut out, value);
    out
}

fn delete(key: &[u8]) -> Vec<u8> {
    let mut out = vec![0];
    slice(&mut out, key);
    out
}

/// An internal key: the user key, then sequence << 8 | type.
fn ikey(user: &[u8], sequence: u64, kind: u8) -> Vec<u8> {
    let mut out = user.to_vec();
    out.extend_from_slice(&(sequence << 8 | u64::from(kind)).to_le_bytes());
    out
}

fn write_log(path: &Path, records: &[Vec<u8>]) -> TestResult {
    let mut writer = LogWriter::create(path, &LogWriterOptions::new())?;
    for record in records {
        writer.add_record(record)?;
    }
    writer.close()?;
    Ok(())
}

/// A LevelDB database as LevelDB 1.23 lays it out: CURRENT, MANIFEST-000002 (comparator; then
/// log 5, next file 7, last sequence 3, a table file at level 0), an obsolete log 000003.log
/// and the live log 000005.log.
fn leveldb_database(dir: &Path) -> TestResult {
    fs::write(dir.join("CURRENT"), "MANIFEST-000002\n")?;
    let mut first = vec![1];
    slice(&mut first, b"leveldb.BytewiseComparator");
    let mut second = vec![2, 5, 3, 7, 4, 3, 7, 0, 4, 200, 1];
    slice(&mut second, &ikey(b"a", 1, 1));
    slice(&mut second, &ikey(b"b", 2, 0));
    write_log(&dir.join("MANIFEST-000002"), &[first, second])?;
    write_log(
        &dir.join("000003.log"),
        &[batch(1, 1, &put(b"old", b"gone"))],
    )?;
    let ops = [put(b"k\x1b[2J", b"v\n'1'"), delete(b"a")].concat();
    write_log(
        &dir.join("000005.log"),
        &[batch(4, 2, &ops), batch(6, 1, &put(b"x", b""))],
    )?;
    Ok(())
}

#[test]
fn a_database_directory_in_text() -> TestResult {
    let dir = tempfile::tempdir()?;
    leveldb_database(dir.path())?;
    let out = logfmt(&["cat", p(dir.path())], b"");
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let root = p(dir.path());
    assert_eq!(
        stdout(&out),
        format!(
            "==> {root}/MANIFEST-000002 <==\n\
             --- offset 0\n  comparator 'leveldb.BytewiseComparator'\n\
             --- offset 35\n  log_number 5\n  next_file_number 7\n  last_sequence 3\n  \
             new_file level 0 file 4 size 200 'a' @ 1 : 1 .. 'b' @ 2 : 0\n\
             ==> {root}/000005.log <==\n\
             --- offset 0; sequence 4; count 2\n  put 'k\\x1b[2J' 'v\\x0a\\x271\\x27'\n  \
             delete 'a'\n\
             --- offset 35; sequence 6; count 1\n  put 'x' ''\n"
        )
    );
    // The obsolete log is named, not read.
    assert_eq!(
        stderr(&out),
        format!(
            "logfmt: {root}: 1 write-ahead log older than log 5 (log 3) not read: the \
             MANIFEST says they are no longer needed\n"
        )
    );
    // In hex.
    let log = dir.path().join("000005.log");
    let out = logfmt(&["cat", "--hex", p(&log)], b"");
    assert!(
        stdout(&out).contains("  put 6b1b5b324a 760a273127\n  delete 61\n"),
        "{}",
        stdout(&out)
    );
    Ok(())
}

#[test]
fn write_batches_in_json_one_object_per_record() -> TestResult {
    let dir = tempfile::tempdir()?;
    leveldb_database(dir.path())?;
    let log = dir.path().join("000005.log");
    let out = logfmt(&["cat", "--output", "json", p(&log)], b"");
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "{\"offset\": 0, \"sequence\": 4, \"count\": 2, \"ops\": [\
         {\"op\": \"put\", \"cf\": 0, \"key\": \"6b1b5b324a\", \"value\": \"760a273127\"}, \
         {\"op\": \"delete\", \"cf\": 0, \"key\": \"61\"}]}\n\
         {\"offset\": 35, \"sequence\": 6, \"count\": 1, \"ops\": [\
         {\"op\": \"put\", \"cf\": 0, \"key\": \"78\", \"value\": \"\"}]}\n"
    );
    assert_eq!(stderr(&out), "");
    // The MANIFEST in JSON.
    let manifest = dir.path().join("MANIFEST-000002");
    let out = logfmt(&["cat", "--output", "json", p(&manifest)], b"");
    let lines: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["fields"][0]["name"], "leveldb.BytewiseComparator");
    let file = &lines[1]["fields"][3];
    assert_eq!(file["field"], "new_file");
    assert_eq!(file["number"], 4);
    assert_eq!(file["size"], 200);
    assert_eq!(file["largest"]["key"], "62");
    assert_eq!(file["largest"]["type"], 0);
    // With several files, each object names its file.
    let out = logfmt(&["cat", "--output", "json", p(dir.path())], b"");
    let files: Vec<String> = stdout(&out)
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).map(|v| v["file"].to_string()))
        .collect::<Result<_, _>>()?;
    assert_eq!(files.len(), 4);
    assert!(files[0].ends_with("MANIFEST-000002\""), "{files:?}");
    assert!(files[3].ends_with("000005.log\""), "{files:?}");
    Ok(())
}

#[test]
fn undecodable_batches_are_reported_with_their_offsets() -> TestResult {
    let dir = tempfile::tempdir()?;
    let log = dir.path().join("wal");
    // A good batch; one with a tag no one defines after a delete; one whose count is wrong.
    let records = [
        batch(1, 1, &put(b"k", b"v")),
        batch(2, 2, &[delete(b"d"), vec![0x7e, 0]].concat()),
        batch(4, 3, &put(b"k", b"v")),
    ];
    write_log(&log, &records)?;
    // Not named as a write-ahead log: raw unless asked.
    let raw = logfmt(&["cat", "--output", "hex", p(&log)], b"");
    assert!(stdout(&raw).starts_with("0100000000000000010000000101"));
    let out = logfmt(&["cat", "--decode", "write-batch", p(&log)], b"");
    assert_eq!(status(&out), 0);
    assert_eq!(
        stdout(&out),
        "--- offset 0; sequence 1; count 1\n  put 'k' 'v'\n\
         --- offset 24; sequence 2; count 2\n  delete 'd'\n  \
         error: unknown WriteBatch tag 0x7e at byte 15\n\
         --- offset 48; sequence 4; count 3\n  put 'k' 'v'\n  \
         error: WriteBatch has wrong count: the header says 3, the batch holds 1\n"
    );
    let root = p(&log);
    assert_eq!(
        stderr(&out),
        format!(
            "logfmt: {root}: the record at offset 24: unknown WriteBatch tag 0x7e at byte 15\n\
             logfmt: {root}: the record at offset 48: WriteBatch has wrong count: the header \
             says 3, the batch holds 1\n"
        )
    );
    let out = logfmt(
        &[
            "cat",
            "--decode",
            "write-batch",
            "--output",
            "json",
            p(&log),
        ],
        b"",
    );
    let second: serde_json::Value =
        serde_json::from_str(stdout(&out).lines().nth(1).ok_or("a second line")?)?;
    assert_eq!(second["error"], "unknown WriteBatch tag 0x7e at byte 15");
    assert_eq!(second["ops"][0]["op"], "delete");
    Ok(())
}

#[test]
fn a_file_named_like_a_log_that_holds_something_else_is_printed_raw() -> TestResult {
    let dir = tempfile::tempdir()?;
    let log = dir.path().join("000007.log");
    write_log(&log, &[b"hello".to_vec(), b"world".to_vec()])?;
    let out = logfmt(&["cat", p(&log)], b"");
    assert_eq!(stdout(&out), "hello\nworld\n");
    assert_eq!(
        stderr(&out),
        format!(
            "logfmt: {}: the record at offset 0 is not a WriteBatch: the log is printed raw \
             (--decode write-batch decodes it anyway)\n",
            p(&log)
        )
    );
    Ok(())
}

#[test]
fn several_files_and_standard_input() -> TestResult {
    let dir = tempfile::tempdir()?;
    let a = dir.path().join("a");
    let b = dir.path().join("b");
    write_log(&a, &[b"1".to_vec()])?;
    write_log(&b, &[b"2".to_vec(), b"3".to_vec()])?;
    let out = logfmt(&["cat", p(&a), "-", p(&b)], &fs::read(&b)?);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "1\n2\n3\n2\n3\n");
    let out = logfmt(&["stats", "--json", p(&a), p(&b)], b"");
    let records: Vec<u64> = stdout(&out)
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).map(|v| v["records"].as_u64().unwrap_or(0))
        })
        .collect::<Result<_, _>>()?;
    assert_eq!(records, [1, 2]);
    Ok(())
}

#[test]
fn verify_a_database_names_the_damaged_file() -> TestResult {
    let dir = tempfile::tempdir()?;
    leveldb_database(dir.path())?;
    // Damage the live log's second record: its payload's last byte.
    let log = dir.path().join("000005.log");
    let mut bytes = fs::read(&log)?;
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    fs::write(&log, bytes)?;
    let out = logfmt(&["verify", p(dir.path())], b"");
    assert_eq!(status(&out), 1, "{}", stderr(&out));
    let root = p(dir.path());
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        format!("{root}/MANIFEST-000002: 2 records, 59 bytes of payload, no corruption")
    );
    assert!(
        lines[1].starts_with(&format!(
            "{root}/000005.log: 1 record, 28 bytes of payload, "
        )),
        "{text}"
    );
    assert!(lines[2].contains("offset 35"), "{text}");
    assert_eq!(lines.last(), Some(&"2 files read: 1 file with damage"));
    // Summary only: no damage lines.
    let out = logfmt(&["verify", "--summary", p(dir.path())], b"");
    assert_eq!(stdout(&out).lines().count(), 3, "{}", stdout(&out));
    // JSON: one object per file.
    let out = logfmt(&["verify", "--json", p(dir.path())], b"");
    let docs: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    assert_eq!(docs.len(), 2);
    assert_eq!(docs[0]["corruptions"].as_array().map(Vec::len), Some(0));
    assert_eq!(docs[1]["corruptions"][0]["offset"], 35);
    Ok(())
}

#[test]
fn verify_max_errors_counts_what_it_does_not_show() -> TestResult {
    let dir = tempfile::tempdir()?;
    let log = dir.path().join("log");
    // Five records, one per block; the payload of each of the last four damaged (LevelDB
    // drops the rest of a block after a checksum mismatch).
    write_log(&log, &vec![vec![7u8; 32_761]; 5])?;
    let mut bytes = fs::read(&log)?;
    for i in 1..5 {
        bytes[i * 32_768 + 100] ^= 1;
    }
    fs::write(&log, bytes)?;
    let out = logfmt(
        &["verify", "--recovery", "skip", "--max-errors", "1", p(&log)],
        b"",
    );
    assert_eq!(status(&out), 1);
    let text = stdout(&out);
    let damage_lines = text.lines().filter(|l| l.starts_with("  offset")).count();
    assert_eq!(damage_lines, 1, "{text}");
    assert!(
        text.contains("  ... and 3 more not shown (--max-errors)\n"),
        "{text}"
    );
    Ok(())
}

#[test]
fn offsets_in_hex() -> TestResult {
    let dir = tempfile::tempdir()?;
    let log = dir.path().join("log");
    write_log(&log, &[vec![1u8; 40_000], b"after".to_vec()])?;
    // The second record starts in the second block, after the first's last chunk.
    let out = logfmt(&["cat", "--offset", "0x8000", p(&log)], b"");
    assert_eq!(stdout(&out), "after\n");
    Ok(())
}

#[test]
fn write_to_standard_output() -> TestResult {
    let out = logfmt(&["write", "-"], b"one\ntwo\n");
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    // The same bytes as a log written to a file.
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("log");
    let written = logfmt(&["write", p(&file)], b"one\ntwo\n");
    assert_eq!(status(&written), 0);
    assert_eq!(out.stdout, fs::read(&file)?);
    let back = logfmt(&["cat", "-"], &out.stdout);
    assert_eq!(stdout(&back), "one\ntwo\n");
    let refused = logfmt(&["write", "--append", "-"], b"x\n");
    assert_eq!(status(&refused), 2);
    Ok(())
}

#[test]
fn cat_follow_prints_records_as_they_are_appended() -> TestResult {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    use std::sync::mpsc;
    use std::time::Duration;

    let dir = tempfile::tempdir()?;
    let log = dir.path().join("000009.log");
    write_log(&log, &[batch(1, 1, &put(b"first", b"1"))])?;
    let mut child = Command::new(env!("CARGO_BIN_EXE_logfmt"))
        .args(["cat", "--follow", p(&log)])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let stdout = child.stdout.take().ok_or("stdout")?;
    let (lines, received) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let next = || received.recv_timeout(Duration::from_secs(20));
    assert_eq!(next()?, "--- offset 0; sequence 1; count 1");
    assert_eq!(next()?, "  put 'first' '1'");
    // Appended while it waits; a record spanning blocks arrives whole.
    let options = logfmt_std::LogWriterOptions::new();
    let (mut writer, _) = LogWriter::append(&log, &options)?;
    writer.add_record(&batch(2, 1, &put(b"second", b"2")))?;
    writer.flush()?;
    let big = vec![b'v'; 70_000];
    let mut record = batch(3, 1, &[1, 3, b'b', b'i', b'g', 0xf0, 0xa2, 0x04]);
    record.extend_from_slice(&big);
    writer.add_record(&record)?;
    writer.close()?;
    assert_eq!(next()?, "--- offset 28; sequence 2; count 1");
    assert_eq!(next()?, "  put 'second' '2'");
    assert_eq!(next()?, "--- offset 57; sequence 3; count 1");
    let line = next()?;
    assert!(
        line.starts_with("  put 'big' 'vvv") && line.len() == 70_000 + 14,
        "{}",
        line.len()
    );
    child.kill()?;
    child.wait()?;
    Ok(())
}

#[test]
fn man_pages_and_completions_come_from_the_definitions() -> TestResult {
    let dir = tempfile::tempdir()?;
    let out = logfmt(&["generate", "man", p(dir.path())], b"");
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let page = fs::read_to_string(dir.path().join("logfmt-cat.1"))?;
    assert!(page.contains("\\-\\-decode"), "{page:.300}");
    assert!(
        page.contains("logfmt cat \\-\\-follow 000042.log"),
        "the examples are in it"
    );
    assert!(dir.path().join("logfmt-verify.1").exists());
    // Hidden from the man pages and from --help.
    assert!(!dir.path().join("logfmt-generate.1").exists());
    let help = logfmt(&["--help"], b"");
    assert!(!stdout(&help).contains("generate"));
    let bash = logfmt(&["generate", "completions", "bash"], b"");
    assert!(stdout(&bash).contains("--max-errors"));
    assert!(stdout(&bash).contains("write-batch"));
    Ok(())
}

/// A log whose tail is zeros to the end of the file (a writer that used mmap and exited
/// without truncating) gets one story from verify, dump and stats: zero fill, not a torn
/// record, not damage.
#[test]
fn a_zero_filled_tail_is_one_story() -> TestResult {
    let dir = tempfile::tempdir()?;
    let log = dir.path().join("mapped.log");
    write_log(&log, &[b"a".to_vec(), b"b".to_vec()])?;
    let mut bytes = fs::read(&log)?;
    bytes.resize(65_536 + 1000, 0);
    fs::write(&log, &bytes)?;
    let story = "zero-filled tail: 66520 bytes of zeros from offset 16";
    let verify = logfmt(&["verify", "--recovery", "skip", p(&log)], b"");
    assert_eq!(status(&verify), 0, "{}", stdout(&verify));
    assert!(stdout(&verify).contains(story), "{}", stdout(&verify));
    assert!(
        !stdout(&verify).contains("torn tail"),
        "{}",
        stdout(&verify)
    );
    let dump = logfmt(&["chunks", p(&log)], b"");
    assert!(stdout(&dump).contains(story), "{}", stdout(&dump));
    let stats = logfmt(&["stats", p(&log)], b"");
    let text = stdout(&stats);
    assert!(text.contains("  damage        none\n"), "{text}");
    assert!(
        text.contains("zero-filled tail: 66520 bytes of zeros from offset 16"),
        "{text}"
    );
    let json = logfmt(&["stats", "--json", p(&log)], b"");
    let doc: serde_json::Value = serde_json::from_str(&stdout(&json))?;
    assert_eq!(doc["zero_fill"]["bytes"], 66_520);
    assert_eq!(doc["tail"], serde_json::Value::Null);
    // A tail that is not all zeros is still torn.
    bytes[30_000] = 1;
    fs::write(&log, &bytes)?;
    let verify = logfmt(&["verify", p(&log)], b"");
    assert!(stdout(&verify).contains("torn tail"), "{}", stdout(&verify));
    Ok(())
}

/// Pebble's EOF trailer: an empty recyclable chunk of the next log number, checksum 0.
#[test]
fn pebbles_eof_trailer_is_recognised() -> TestResult {
    let dir = tempfile::tempdir()?;
    let log = dir.path().join("000001.log");
    let written = logfmt(&["write", "--format", "recyclable", p(&log)], b"x\n");
    assert_eq!(status(&written), 0, "{}", stderr(&written));
    let mut bytes = fs::read(&log)?;
    bytes.extend_from_slice(&[0, 0, 0, 0, 0, 0, 5, 2, 0, 0, 0]);
    fs::write(&log, &bytes)?;
    let out = logfmt(&["verify", "--format", "auto", p(&log)], b"");
    assert_eq!(status(&out), 0);
    assert!(
        stdout(&out).contains("with Pebble's EOF trailer: an empty chunk of log 2"),
        "{}",
        stdout(&out)
    );
    let json = logfmt(&["verify", "--json", "--format", "auto", p(&log)], b"");
    let doc: serde_json::Value = serde_json::from_str(&stdout(&json))?;
    assert_eq!(doc["tail"]["kind"], "pebble_eof_trailer");
    Ok(())
}

/// A text file named like a log: said to be text, not three checksum mismatches alone.
#[test]
fn a_text_file_is_said_not_to_be_a_log() -> TestResult {
    let dir = tempfile::tempdir()?;
    let log = dir.path().join("000001.log");
    let text: String = (0..3000)
        .map(|i| format!("line {i} of a text file\n"))
        .collect();
    fs::write(&log, text)?;
    let out = logfmt(&["verify", p(&log)], b"");
    assert_eq!(status(&out), 3);
    assert!(
        stdout(&out).contains("not a log: the file holds text, not a log in LevelDB's format"),
        "{}",
        stdout(&out)
    );
    // A real log whose only record is damaged gets no such hint.
    let real = dir.path().join("real.log");
    write_log(&real, &[b"some text payload".to_vec()])?;
    let mut bytes = fs::read(&real)?;
    bytes[10] ^= 1;
    fs::write(&real, bytes)?;
    let out = logfmt(&["verify", p(&real)], b"");
    assert_eq!(status(&out), 1, "{}", stdout(&out));
    assert!(!stdout(&out).contains("not a log"), "{}", stdout(&out));
    Ok(())
}

/// A database's write-ahead logs are read in whichever chunk format they were written: RocksDB
/// may write its recyclable chunks.
#[test]
fn a_databases_recyclable_log_is_read_as_such() -> TestResult {
    let dir = tempfile::tempdir()?;
    fs::write(dir.path().join("CURRENT"), "MANIFEST-000002\n")?;
    write_log(&dir.path().join("MANIFEST-000002"), &[vec![2, 7]])?;
    let wal = dir.path().join("000007.log");
    let written = logfmt(
        &[
            "write",
            "--format",
            "recyclable",
            "--input",
            "framed",
            p(&wal),
        ],
        &framed(&[batch(3, 1, &put(b"k", b"v"))]),
    );
    assert_eq!(status(&written), 0, "{}", stderr(&written));
    let out = logfmt(&["cat", p(dir.path())], b"");
    assert_eq!(stderr(&out), "");
    assert!(
        stdout(&out).ends_with("--- offset 0; sequence 3; count 1\n  put 'k' 'v'\n"),
        "{}",
        stdout(&out)
    );
    let out = logfmt(&["verify", p(dir.path())], b"");
    assert_eq!(status(&out), 0, "{}", stdout(&out));
    Ok(())
}

/// `verify` checks what the records hold too: a batch that does not decode is reported with
/// its offset and makes the status 1.
#[test]
fn verify_reports_batches_that_do_not_decode() -> TestResult {
    let dir = tempfile::tempdir()?;
    let log = dir.path().join("000004.log");
    write_log(
        &log,
        &[
            batch(1, 1, &put(b"k", b"v")),
            batch(2, 2, &put(b"k", b"v")),
            batch(4, 1, &[0x7e]),
        ],
    )?;
    let out = logfmt(&["verify", p(&log)], b"");
    assert_eq!(status(&out), 1, "{}", stdout(&out));
    let text = stdout(&out);
    assert!(
        text.contains(
            "  offset 24: the record does not decode: WriteBatch has wrong count: the header \
             says 2, the batch holds 1\n"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "  offset 48: the record does not decode: unknown WriteBatch tag 0x7e at byte 12\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("  2 records whose content does not decode\n"),
        "{text}"
    );
    let json = logfmt(&["verify", "--json", p(&log)], b"");
    let doc: serde_json::Value = serde_json::from_str(&stdout(&json))?;
    assert_eq!(doc["undecoded"][1]["offset"], 48);
    // Not checked when asked not to.
    let raw = logfmt(&["verify", "--decode", "raw", p(&log)], b"");
    assert_eq!(status(&raw), 0, "{}", stdout(&raw));
    Ok(())
}

/// On a terminal (a pseudo-terminal from `script`, util-linux), no byte of a record reaches
/// it unescaped: raw records are escaped, decoded keys and values are, and binary output is
/// refused.
#[test]
fn a_terminal_never_gets_raw_bytes() -> TestResult {
    let dir = tempfile::tempdir()?;
    let log = dir.path().join("000003.log");
    write_log(&log, &[batch(1, 1, &put(b"\x1b]0;title\x07", b"\x1b[2J"))])?;
    let other = dir.path().join("plain");
    write_log(&other, &[b"\x1b[2Jcleared\x9b".to_vec()])?;
    let on_terminal = |args: &str| -> Result<Vec<u8>, Box<dyn std::error::Error>> {
        let command = format!("{} {args}", env!("CARGO_BIN_EXE_logfmt"));
        let out = std::process::Command::new("script")
            .args(["-qec", &command, "/dev/null"])
            .stdin(std::process::Stdio::null())
            .output()?;
        Ok(out.stdout)
    };
    let decoded = on_terminal(&format!("cat {}", p(&log)))?;
    assert!(!decoded.contains(&0x1b), "{decoded:?}");
    let text = String::from_utf8(decoded)?;
    assert!(text.contains(r"put '\x1b]0;title\x07' '\x1b[2J'"), "{text}");
    let raw = on_terminal(&format!("cat {}", p(&other)))?;
    assert!(!raw.contains(&0x1b) && !raw.contains(&0x9b), "{raw:?}");
    assert!(String::from_utf8(raw)?.contains(r"\x1b[2Jcleared\x9b"));
    let framed = on_terminal(&format!("cat --output framed {}", p(&other)))?;
    assert!(
        String::from_utf8(framed)?.contains("--output framed is binary"),
        "framed output is refused on a terminal"
    );
    // Piped, the bytes are the record's.
    let piped = logfmt(&["cat", p(&other)], b"");
    assert_eq!(piped.stdout, b"\x1b[2Jcleared\x9b\n");
    Ok(())
}

/// `stats` counts what a write-ahead log and a MANIFEST hold.
#[test]
fn stats_counts_the_content() -> TestResult {
    let dir = tempfile::tempdir()?;
    leveldb_database(dir.path())?;
    let out = logfmt(&["stats", p(dir.path())], b"");
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains(
            "  content       2 version edits; comparator 1, last_sequence 1, log_number 1, \
             new_file 1, next_file_number 1\n"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "  content       2 write batches, sequences 4..6; delete 1, put 2; column families 0\n"
        ),
        "{text}"
    );
    let json = logfmt(&["stats", "--json", p(&dir.path().join("000005.log"))], b"");
    let doc: serde_json::Value = serde_json::from_str(&stdout(&json))?;
    assert_eq!(doc["content"]["kind"], "write_batch");
    assert_eq!(doc["content"]["sequences"], serde_json::json!([4, 6]));
    assert_eq!(doc["content"]["counts"]["put"], 2);
    let raw = logfmt(
        &[
            "stats",
            "--json",
            "--decode",
            "raw",
            p(&dir.path().join("000005.log")),
        ],
        b"",
    );
    let doc: serde_json::Value = serde_json::from_str(&stdout(&raw))?;
    assert!(doc.get("content").is_none());
    Ok(())
}

/// `split` takes several files (and database directories) too.
#[test]
fn split_several_files() -> TestResult {
    let dir = tempfile::tempdir()?;
    let a = dir.path().join("a");
    let b = dir.path().join("b");
    write_log(&a, &vec![b"x".to_vec(); 10])?;
    write_log(&b, &vec![b"y".to_vec(); 3])?;
    let out = logfmt(&["split", "--json", "--parts", "2", p(&a), p(&b)], b"");
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let docs: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    let records: Vec<u64> = docs
        .iter()
        .map(|d| d["records"].as_u64().unwrap_or(0))
        .collect();
    assert_eq!(records, [10, 3]);
    assert_eq!(docs[1]["file"], p(&b));
    Ok(())
}
