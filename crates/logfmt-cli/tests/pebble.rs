//! Pebble's MANIFESTs (CockroachDB's): `verify` and `cat` read the VersionEdit tags Pebble
//! writes (103 with its custom fields, 104–108) as they read LevelDB's and RocksDB's; a tag
//! unknown to this version in an intact MANIFEST is reported, and fails `verify` only when
//! the content was asked for by name.

mod common;

use common::*;

fn varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn bytes(out: &mut Vec<u8>, data: &[u8]) {
    varint(out, data.len() as u64);
    out.extend_from_slice(data);
}

/// Pebble's `writeKey`: length, user key, trailer (sequence << 8 | kind).
fn key(out: &mut Vec<u8>, user: &[u8], sequence: u64, kind: u8) {
    varint(out, user.len() as u64 + 8);
    out.extend_from_slice(user);
    out.extend_from_slice(&(sequence << 8 | u64::from(kind)).to_le_bytes());
}

/// The edits of a Pebble MANIFEST, as Pebble's encoder writes them: the first with the
/// comparator, then one with a virtual table over a new backing table, a table with range
/// keys, a blob file added and one deleted.
fn pebble_edits() -> Vec<Vec<u8>> {
    let mut first = Vec::new();
    varint(&mut first, 1);
    bytes(&mut first, b"cockroach_comparator");
    for value in [2, 5, 3, 9, 4, 0] {
        varint(&mut first, value);
    }
    let mut second = Vec::new();
    // Log number 5, next file 30, backing 17 removed, backing 21 (4096 bytes) created.
    for value in [2, 5, 3, 30, 106, 17, 105, 21, 4096, 4, 900] {
        varint(&mut second, value);
    }
    // 103: level 5, table 22, 2048 bytes, keys, seqnos, then Pebble's custom fields.
    for value in [103, 5, 22, 2048] {
        varint(&mut second, value);
    }
    key(&mut second, b"/a", 10, 1);
    key(&mut second, b"/m", 20, 1);
    for value in [10, 20] {
        varint(&mut second, value);
    }
    varint(&mut second, 6);
    let mut time = Vec::new();
    varint(&mut time, 1_700_000_000);
    bytes(&mut second, &time);
    varint(&mut second, 2);
    bytes(&mut second, &[1]);
    for value in [66, 21] {
        varint(&mut second, value);
    }
    varint(&mut second, 67);
    bytes(&mut second, b"/t1");
    varint(&mut second, 68);
    bytes(&mut second, &[9, 1]);
    for value in [69, 1, 2, 3, 512, 4, 7, 1] {
        varint(&mut second, value);
    }
    // 104: level 6, table 23, 100 bytes, marker 0 (range keys only), range keys, seqnos,
    // creation time, terminate.
    for value in [104, 6, 23, 100] {
        varint(&mut second, value);
    }
    second.push(0);
    key(&mut second, b"r", 30, 0x15);
    key(&mut second, b"s", 31, 0x15);
    for value in [30, 31, 6] {
        varint(&mut second, value);
    }
    bytes(&mut second, &time);
    varint(&mut second, 1);
    // 107: blob file id 3, file 24, 10000 bytes, 9000 of values, created; 108: id 2, file 19.
    for value in [107, 3, 24, 10_000, 9_000, 1_700_000_001, 108, 2, 19] {
        varint(&mut second, value);
    }
    vec![first, second]
}

fn write_manifest(path: &std::path::Path, records: &[Vec<u8>]) {
    let out = logfmt(&["write", "--input", "framed", p(path)], &framed(records));
    assert_eq!(status(&out), 0, "{}", stderr(&out));
}

#[test]
fn verify_and_cat_read_pebbles_tags() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("MANIFEST-000001");
    write_manifest(&path, &pebble_edits());
    let out = logfmt(&["verify", p(&path)], b"");
    let text = stdout(&out);
    assert_eq!(status(&out), 0, "{text}{}", stderr(&out));
    assert!(!text.contains("decode"), "{text}");
    assert!(!text.contains("unknown"), "{text}");
    // Asked for by name: the same.
    let out = logfmt(&["verify", "--decode", "version-edit", p(&path)], b"");
    assert_eq!(status(&out), 0, "{}", stdout(&out));
    let out = logfmt(&["cat", p(&path)], b"");
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    for expected in [
        "removed_backing_table file 17",
        "created_backing_table file 21 size 4096",
        "new_file level 5 file 22 size 2048 '/a' @ 10 : 1 .. '/m' @ 20 : 1 seqnos 10..20 \
         file_creation_time 1700000000 need_compaction true virtual_backing 21 \
         synthetic_prefix '/t1' synthetic_suffix '\\x09\\x01' blob_references depth 1 \
         blob 3 bytes 512 blob 4 bytes 7",
        "new_file level 6 file 23 size 100 'r' @ 30 : 21 .. 's' @ 31 : 21 range_keys \
         'r' @ 30 : 21 .. 's' @ 31 : 21 seqnos 30..31",
        "new_blob_file id 3 file 24 size 10000 value_size 9000 creation_time 1700000001",
        "deleted_blob_file id 2 file 19",
    ] {
        assert!(text.contains(expected), "{expected}\n{text}");
    }
    assert!(!text.contains("error"), "{text}");
    // In JSON, every field named.
    let out = logfmt(&["cat", "--output", "json", p(&path)], b"");
    let lines: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    let fields = &lines[1]["fields"];
    let names: Vec<&str> = fields
        .as_array()
        .expect("fields")
        .iter()
        .map(|f| f["field"].as_str().expect("a name"))
        .collect();
    assert_eq!(
        names,
        [
            "log_number",
            "next_file_number",
            "removed_backing_table",
            "created_backing_table",
            "last_sequence",
            "new_file",
            "new_file",
            "new_blob_file",
            "deleted_blob_file"
        ]
    );
    assert_eq!(fields[5]["tag"], 103);
    assert_eq!(fields[6]["tag"], 104);
    assert_eq!(fields[6]["range_keys"]["marker"], 0);
    assert_eq!(fields[6]["range_keys"]["smallest"]["key"], "72");
    let custom = &fields[5]["custom"];
    assert_eq!(custom[2]["name"], "virtual_backing");
    assert_eq!(custom[2]["value"], 21);
    assert_eq!(custom[5]["name"], "blob_references");
    assert_eq!(custom[5]["value"]["depth"], 1);
    assert_eq!(custom[5]["value"]["files"][1]["id"], 4);
    assert_eq!(custom[5]["value"]["files"][1]["value_size"], 7);
    Ok(())
}

#[test]
fn a_tag_unknown_to_this_version_is_reported_not_damage() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("MANIFEST-000002");
    let mut records = pebble_edits();
    // A later edit with a tag no version here knows (120), after known fields.
    let mut future = Vec::new();
    for value in [2, 6, 120, 1, 2, 3] {
        varint(&mut future, value);
    }
    records.push(future);
    write_manifest(&path, &records);
    let out = logfmt(&["verify", p(&path)], b"");
    let text = stdout(&out);
    assert_eq!(status(&out), 0, "{text}");
    assert!(text.contains("no corruption"), "{text}");
    let line = text
        .lines()
        .find(|l| l.contains("unknown to this version"))
        .expect("the unknown tag reported");
    assert!(
        line.contains("unknown VersionEdit tag 120 at byte 2"),
        "{line}"
    );
    assert!(!text.contains("does not decode"), "{text}");
    let out = logfmt(&["verify", "--json", p(&path)], b"");
    assert_eq!(status(&out), 0);
    let doc = json(&out);
    assert_eq!(doc["unknown_tags"].as_array().map(Vec::len), Some(1));
    assert_eq!(doc.get("undecoded"), None);
    // Asked for by name: the record does not decode, and that fails.
    let out = logfmt(&["verify", "--decode", "version-edit", p(&path)], b"");
    let text = stdout(&out);
    assert_eq!(status(&out), 1, "{text}");
    assert!(
        text.contains("the record does not decode: unknown VersionEdit tag 120"),
        "{text}"
    );
    // Damage is still damage: a record cut inside a field fails by default.
    let path = dir.path().join("MANIFEST-000003");
    let mut records = pebble_edits();
    records.push(vec![2, 6, 105, 3]);
    write_manifest(&path, &records);
    let out = logfmt(&["verify", p(&path)], b"");
    assert_eq!(status(&out), 1, "{}", stdout(&out));
    assert!(
        stdout(&out).contains("created backing table"),
        "{}",
        stdout(&out)
    );
    Ok(())
}
