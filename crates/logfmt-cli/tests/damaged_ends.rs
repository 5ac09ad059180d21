//! Damage where LevelDB's reader sees the end of the log, and zero headers that hide bytes:
//! told apart from torn writes, reported exactly by the modes that show every loss, never
//! truncated away, and read past by `salvage`.

use std::fs;
use std::path::Path;

mod common;

use common::*;

/// `seq 1 10000 | logfmt write` into `dir/name`.
fn seq_log(dir: &Path, name: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    let lines: Vec<u8> = (1..=10_000u32)
        .flat_map(|i| format!("{i}\n").into_bytes())
        .collect();
    let out = logfmt(&["write", p(&path)], &lines);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    path
}

fn patch(path: &Path, at: usize, bytes: &[u8]) {
    let mut data = fs::read(path).expect("the log");
    data[at..at + bytes.len()].copy_from_slice(bytes);
    fs::write(path, data).expect("the log");
}

fn lines(output: &std::process::Output) -> Vec<String> {
    stdout(output).lines().map(str::to_owned).collect()
}

#[test]
fn a_bad_length_in_the_last_block_is_damage_not_a_torn_tail() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let log = seq_log(dir.path(), "mb.log");
    // The length of the chunk at 100009 (record 9192), in the last block.
    patch(&log, 100_009 + 4, &[0xff, 0xff]);

    // LevelDB's reading is unchanged: 9191 records, no drop reported; the story is not, and
    // records are known lost: exit 1.
    let verify = logfmt(&["verify", p(&log)], b"");
    assert_eq!(status(&verify), 1, "{}", stderr(&verify));
    let text = stdout(&verify);
    assert!(text.contains("9191 records"), "{text}");
    assert!(text.contains("not a torn write"), "{text}");
    assert!(text.contains("808 well-formed chunks"), "{text}");
    assert!(!text.contains("torn tail"), "{text}");

    // The modes that show every loss report it, at its offset.
    let skip = logfmt(&["verify", "--recovery", "skip", "--json", p(&log)], b"");
    assert_eq!(status(&skip), 1);
    let doc = json(&skip);
    assert_eq!(doc["corruptions"][0]["offset"], 100_009);
    assert_eq!(doc["corruptions"][0]["bytes"], 8900);
    let absolute = logfmt(
        &["verify", "--recovery", "absolute", "--json", p(&log)],
        b"",
    );
    assert_eq!(json(&absolute)["stopped_at"]["offset"], 100_009);

    // Truncating "the torn tail" would delete 808 complete records: refused, file unchanged.
    let before = fs::read(&log).expect("the log");
    let append = logfmt(
        &["write", "--append", "--truncate-torn-tail", p(&log)],
        b"more\n",
    );
    assert_eq!(status(&append), 1, "{}", stderr(&append));
    assert_eq!(fs::read(&log).expect("the log"), before);

    // Salvage reads past it: every record but the damaged one.
    let out = dir.path().join("salvaged.log");
    let salvage = logfmt(&["salvage", p(&log), p(&out)], b"");
    assert_eq!(status(&salvage), 0, "{}", stderr(&salvage));
    let cat = lines(&logfmt(&["cat", p(&out)], b""));
    let expected: Vec<String> = (1..=10_000u32)
        .filter(|&i| i != 9192)
        .map(|i| i.to_string())
        .collect();
    assert_eq!(cat, expected);
}

#[test]
fn a_zero_window_in_the_last_block_is_damage_too() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let log = seq_log(dir.path(), "zw.log");
    patch(&log, 100_009, &[0u8; 8000]);
    let verify = logfmt(&["verify", "--json", p(&log)], b"");
    assert_eq!(status(&verify), 1);
    let doc = json(&verify);
    assert_eq!(doc["corruptions"][0]["offset"], 100_009);
    assert_eq!(doc["tail"]["kind"], "damage");
    assert_eq!(doc["tail"]["offset"], 100_009);
    assert!(doc["tail"]["chunks_after"].as_u64().is_some_and(|n| n > 0));
    let out = dir.path().join("salvaged.log");
    let salvage = logfmt(&["salvage", "--json", p(&log), p(&out)], b"");
    assert_eq!(status(&salvage), 0, "{}", stderr(&salvage));
    let cat = lines(&logfmt(&["cat", p(&out)], b""));
    assert!(
        cat.len() > 9191,
        "records after the zeros recovered: {}",
        cat.len()
    );
    assert_eq!(cat.last().map(String::as_str), Some("10000"));
}

#[test]
fn a_zero_header_before_a_continuation_is_reported_where_it_is() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let log = seq_log(dir.path(), "zh.log");
    // The header at 40006: the rest of its block (25 530 bytes) is skipped, and the next
    // block starts with the continuation of a record begun in the skipped bytes.
    patch(&log, 40_006, &[0u8; 7]);
    let skip = json(&logfmt(
        &["verify", "--recovery", "skip", "--json", p(&log)],
        b"",
    ));
    assert_eq!(skip["corruptions"][0]["offset"], 40_006);
    assert_eq!(skip["corruptions"][0]["bytes"], 25_530);
    assert_eq!(skip["corruptions"][1]["offset"], 65_536);
    for mode in ["absolute", "point-in-time"] {
        let doc = json(&logfmt(
            &["verify", "--recovery", mode, "--json", p(&log)],
            b"",
        ));
        assert_eq!(doc["stopped_at"]["offset"], 40_006, "{mode}");
    }
    // LevelDB's own reading (tolerate) still reports only what LevelDB reports.
    let tolerate = json(&logfmt(&["verify", "--json", p(&log)], b""));
    assert_eq!(tolerate["corruptions"][0]["offset"], 65_536);
    assert_eq!(tolerate["corruptions"].as_array().map(Vec::len), Some(1));
}
