//! `verify` on a file that is not a log (text, random data, a file of another format) exits
//! with status 3 and says so in one line; an empty file, a file of zeros and a log whose only
//! record is torn stay clean (status 0), and a log with damage stays damaged (status 1).

use std::fs;
use std::path::{Path, PathBuf};

mod common;

use common::*;

/// Exit status of `verify` for a file that is not a log.
const NOT_A_LOG: i32 = 3;

/// Random bytes from a fixed seed (xorshift64).
fn random_bytes(len: usize, mut seed: u64) -> Vec<u8> {
    (0..len)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed.to_le_bytes()[3]
        })
        .collect()
}

fn file(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    fs::write(&path, bytes).expect("a file");
    path
}

/// `logfmt write` of `lines` (one record each) into `dir/name`.
fn log(dir: &Path, name: &str, lines: &str) -> PathBuf {
    let path = dir.join(name);
    let out = logfmt(&["write", p(&path)], lines.as_bytes());
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    path
}

/// What `verify FILE` and `verify --json FILE` say: status, text, JSON.
fn verify(path: &Path) -> (i32, String, serde_json::Value) {
    let text = logfmt(&["verify", p(path)], b"");
    let doc = logfmt(&["verify", "--json", p(path)], b"");
    assert_eq!(status(&text), status(&doc), "{}", stderr(&doc));
    (status(&text), stdout(&text), json(&doc))
}

const PASSWD: &str = "root:x:0:0:root:/root:/bin/bash\n\
    daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n\
    bin:x:2:2:bin:/bin:/usr/sbin/nologin\n\
    sys:x:3:3:sys:/dev:/usr/sbin/nologin\n\
    nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n";

#[test]
fn a_passwd_like_text_file_is_not_a_log() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = file(dir.path(), "passwd", PASSWD.as_bytes());
    let (code, text, doc) = verify(&path);
    assert_eq!(code, NOT_A_LOG, "{text}");
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(
        text.contains("not a log: the file holds text"),
        "one line says so: {text}"
    );
    assert_eq!(doc["not_a_log"], "text");
    assert_eq!(doc["records"], 0);
}

#[test]
fn the_systems_own_passwd_is_not_a_log() {
    let passwd = Path::new("/etc/passwd");
    if !passwd.is_file() {
        return;
    }
    let out = logfmt(&["verify", "/etc/passwd"], b"");
    assert_eq!(status(&out), NOT_A_LOG, "{}", stdout(&out));
}

#[test]
fn random_data_is_not_a_log() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    // Byte 6 of each is no chunk type a writer uses, or the length is more than a block
    // holds.
    for (seed, len) in [(1u64, 5000usize), (7, 100), (99, 70_000)] {
        let mut bytes = random_bytes(len, seed);
        bytes[6] = 0xC3;
        let path = file(dir.path(), "random.bin", &bytes);
        let (code, text, doc) = verify(&path);
        assert_eq!(code, NOT_A_LOG, "seed {seed}: {text}");
        assert!(text.contains("not a log: its first bytes are no chunk header"));
        assert_eq!(doc["not_a_log"], "other_bytes");
    }
}

#[test]
fn files_of_other_formats_are_not_logs() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    png.extend(random_bytes(2000, 3));
    let mut sqlite = b"SQLite format 3\0".to_vec();
    sqlite.extend(random_bytes(4080, 5));
    let mut gzip = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3];
    gzip.extend(random_bytes(3000, 11));
    for (name, bytes) in [("a.png", png), ("a.db", sqlite), ("a.gz", gzip)] {
        let path = file(dir.path(), name, &bytes);
        let (code, text, _) = verify(&path);
        assert_eq!(code, NOT_A_LOG, "{name}: {text}");
    }
}

#[test]
fn an_empty_file_a_file_of_zeros_and_a_torn_only_record_stay_clean() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let empty = file(dir.path(), "empty.log", b"");
    let zeros = file(dir.path(), "zeros.log", &vec![0; 70_000]);
    let torn = log(dir.path(), "torn.log", &"x".repeat(3000));
    let whole = fs::read(&torn).expect("the log");
    fs::write(&torn, &whole[..1500]).expect("the log cut short");
    let short = file(dir.path(), "short.log", b"abc");
    for path in [&empty, &zeros, &torn, &short] {
        let (code, text, doc) = verify(path);
        assert_eq!(code, 0, "{}: {text}", path.display());
        assert!(!text.contains("not a log"), "{text}");
        assert!(doc.get("not_a_log").is_none(), "{doc}");
        assert!(text.contains("0 records"), "{text}");
    }
}

#[test]
fn a_log_with_damage_stays_damaged() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = log(dir.path(), "one.log", "a single record\n");
    let mut bytes = fs::read(&path).expect("the log");
    bytes[10] ^= 1;
    fs::write(&path, bytes).expect("the log");
    let (code, text, doc) = verify(&path);
    assert_eq!(code, 1, "{text}");
    assert!(doc.get("not_a_log").is_none(), "{doc}");
    // A type no writer uses, its checksum fixed to hold (LevelDB's BadRecordType): a log
    // with damage, not text.
    let path = log(dir.path(), "typed.log", "foo\n");
    let mut bytes = fs::read(&path).expect("the log");
    bytes[6] = 101;
    let crc = logfmt_core::parts::checksum::crc32c(&bytes[6..10]);
    bytes[..4].copy_from_slice(&logfmt_core::parts::checksum::mask(crc).to_le_bytes());
    fs::write(&path, bytes).expect("the log");
    let (code, text, doc) = verify(&path);
    assert_eq!(code, 1, "{text}");
    assert!(doc.get("not_a_log").is_none(), "{doc}");
}

#[test]
fn several_files_count_those_not_a_log() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let good = log(dir.path(), "good.log", "one\ntwo\n");
    let text = file(dir.path(), "notes.txt", PASSWD.as_bytes());
    let out = logfmt(&["verify", p(&good), p(&text)], b"");
    assert_eq!(status(&out), NOT_A_LOG, "{}", stdout(&out));
    assert!(
        stdout(&out).ends_with("2 files read: 1 file not a log\n"),
        "{}",
        stdout(&out)
    );
    // Damage counts first.
    let damaged = log(dir.path(), "bad.log", "one\n");
    let mut bytes = fs::read(&damaged).expect("the log");
    bytes[8] ^= 1;
    fs::write(&damaged, bytes).expect("the log");
    let out = logfmt(&["verify", p(&damaged), p(&text)], b"");
    assert_eq!(status(&out), 1, "{}", stdout(&out));
    assert!(
        stdout(&out).ends_with("2 files read: 1 file with damage, 1 file not a log\n"),
        "{}",
        stdout(&out)
    );
}
