//! The decoders' text and JSON, against LevelDB's escaping and serde.

use logfmt_std::content::BatchError;

use super::batch::BatchJson;
use super::*;
use crate::output::write_json_line;

#[test]
fn content_by_name() {
    for (name, content) in [
        ("000003.log", Content::WriteBatch),
        ("/db/123456789.log", Content::WriteBatch),
        ("MANIFEST-000001", Content::VersionEdit),
        ("x.log", Content::Raw),
        ("000003.log.bak", Content::Raw),
        ("MANIFEST-", Content::Raw),
        ("MANIFEST-00001a", Content::Raw),
        ("log", Content::Raw),
    ] {
        assert_eq!(by_name(Path::new(name)), content, "{name}");
    }
    let manifest = Decode::Auto.content(Path::new("x"), Some(DbFileKind::Manifest));
    assert_eq!(manifest, Content::VersionEdit);
    let forced = Decode::Raw.content(Path::new("000001.log"), None);
    assert_eq!(forced, Content::Raw);
}

#[test]
fn a_batch_in_text_and_json() {
    let mut printer = Printer::default();
    let mut record = 5u64.to_le_bytes().to_vec();
    record.extend_from_slice(&3u32.to_le_bytes());
    record.extend_from_slice(b"\x01\x02k\x1b\x01v\x04\x02\x01d\x0e\x01\x01a\x01z\x0d\x42");
    let mut text = Vec::new();
    let error = printer
        .write_record(
            &mut text,
            Content::WriteBatch,
            Style::Text { hex: false },
            9,
            &record,
            None,
        )
        .expect("memory");
    assert!(matches!(
        error,
        Some(Undecoded::Batch(BatchError::UnknownTag { tag: 0x42, .. }))
    ));
    assert_eq!(
        String::from_utf8(text).expect("ASCII"),
        "--- offset 9; sequence 5; count 3\n  put 'k\\x1b' 'v'\n  delete cf 2 'd'\n  \
         delete_range cf 1 'a' 'z'\n  noop\n  error: unknown WriteBatch tag 0x42 at byte 29\n"
    );
    let mut json = Vec::new();
    printer
        .write_record(
            &mut json,
            Content::WriteBatch,
            Style::Json,
            9,
            &record,
            Some("f"),
        )
        .expect("memory");
    assert_eq!(
        String::from_utf8(json).expect("UTF-8"),
        "{\"offset\": 9, \"sequence\": 5, \"count\": 3, \"ops\": [\
         {\"op\": \"put\", \"cf\": 0, \"key\": \"6b1b\", \"value\": \"76\"}, \
         {\"op\": \"delete\", \"cf\": 2, \"key\": \"64\"}, \
         {\"op\": \"delete_range\", \"cf\": 1, \"key\": \"61\", \"end_key\": \"7a\"}, \
         {\"op\": \"noop\"}], \
         \"error\": \"unknown WriteBatch tag 0x42 at byte 29\", \"file\": \"f\"}\n"
    );
}

#[test]
fn an_edit_in_text_and_json() {
    let mut printer = Printer::default();
    let mut key = b"k".to_vec();
    key.extend_from_slice(&(3u64 << 8 | 1).to_le_bytes());
    let mut record = vec![1, 3, b'c', b'm', b'p', 2, 12, 7, 0, 10, 200, 7, 9];
    record.extend_from_slice(&key);
    record.push(9);
    record.extend_from_slice(&key);
    let mut text = Vec::new();
    let error = printer
        .write_record(
            &mut text,
            Content::VersionEdit,
            Style::Text { hex: false },
            0,
            &record,
            None,
        )
        .expect("memory");
    assert!(error.is_none());
    assert_eq!(
        String::from_utf8(text).expect("ASCII"),
        "--- offset 0\n  comparator 'cmp'\n  log_number 12\n  new_file level 0 file 10 size 968 \
         'k' @ 3 : 1 .. 'k' @ 3 : 1\n"
    );
    let mut json = Vec::new();
    printer
        .write_record(
            &mut json,
            Content::VersionEdit,
            Style::Json,
            0,
            &record,
            None,
        )
        .expect("memory");
    let parsed: serde_json::Value = serde_json::from_slice(&json).expect("JSON");
    assert_eq!(parsed["fields"][0]["field"], "comparator");
    assert_eq!(parsed["fields"][0]["name"], "cmp");
    assert_eq!(parsed["fields"][1]["value"], 12);
    assert_eq!(parsed["fields"][2]["field"], "new_file");
    assert_eq!(parsed["fields"][2]["smallest"]["key"], "6b");
    assert_eq!(parsed["fields"][2]["smallest"]["sequence"], 3);
}

/// Checks the printer's JSON of the batch `record` at `offset` against serde's.
fn batch_json_is_serdes(printer: &mut Printer, offset: u64, record: &[u8], file: Option<&str>) {
    let batch = WriteBatch::new(record).expect("a header");
    let mut doc = BatchJson {
        offset,
        sequence: Some(batch.sequence()),
        count: Some(batch.count()),
        ops: Vec::new(),
        error: None,
        file,
    };
    for op in batch.ops() {
        match op {
            Ok(op) => doc.ops.push(op),
            Err(e) => doc.error = Some(e.to_string()),
        }
    }
    let mut document = Vec::new();
    write_json_line(&mut document, &batch_document(offset, record, file)).expect("memory");
    let mut expected = Vec::new();
    write_json_line(&mut expected, &doc).expect("memory");
    let mut ours = Vec::new();
    printer
        .write_record(
            &mut ours,
            Content::WriteBatch,
            Style::Json,
            offset,
            record,
            file,
        )
        .expect("memory");
    assert_eq!(
        String::from_utf8_lossy(&ours),
        String::from_utf8_lossy(&expected),
        "offset {offset}, {} bytes",
        record.len()
    );
    assert_eq!(
        String::from_utf8_lossy(&document),
        String::from_utf8_lossy(&expected),
        "the serialized document: offset {offset}, {} bytes",
        record.len()
    );
}

/// The hand-written JSON of a batch is byte for byte what serde writes for the same
/// document (`write_json_line`), for every kind of operation, errors and file names.
#[test]
fn hand_written_json_is_serdes() {
    let header = |count: u32| {
        let mut out = u64::MAX.to_le_bytes().to_vec();
        out.extend_from_slice(&count.to_le_bytes());
        out
    };
    let bodies: [&[u8]; 6] = [
        b"\x01\x01k\x01v\x05\x81\x01\x01k\x00\x00\x01a\x04\x02\x01b\x07\x01c\x08\x03\x01d",
        b"\x02\x01m\x02+1\x06\x01\x01m\x00\x0f\x01a\x01z\x0e\x02\x01a\x01z\x11\x01k\x02\x00\xff",
        b"\x16\x01e\x01\x00\x18\x01t\x09v\x01\x00\x00\x00\x00\x00\x00\x00\x03\x03log\x09\x12\x13",
        b"\x0a\x02tx\x0b\x02tx\x15\x02ts\x02tx\x0c\x02tx\x0d",
        b"\x01\x01k\x01v\x7f",
        b"",
    ];
    let mut printer = Printer::default();
    for (i, body) in bodies.iter().enumerate() {
        for count in [0, 2, 11] {
            for file in [None, Some("dir/\u{1b}\"x\".log")] {
                let mut record = header(count);
                record.extend_from_slice(body);
                batch_json_is_serdes(&mut printer, i as u64 * 1000, &record, file);
            }
        }
    }
    // A record too short for a header.
    let mut ours = Vec::new();
    printer
        .write_record(&mut ours, Content::WriteBatch, Style::Json, 5, b"abc", None)
        .expect("memory");
    let expected = BatchJson {
        offset: 5,
        sequence: None,
        count: None,
        ops: Vec::new(),
        error: Some(BatchError::TooSmall { len: 3 }.to_string()),
        file: None,
    };
    let mut serde = Vec::new();
    write_json_line(&mut serde, &expected).expect("memory");
    assert_eq!(
        String::from_utf8_lossy(&ours),
        String::from_utf8_lossy(&serde)
    );
}
