//! The formats of `cat`'s records, held and streamed, against the bytes they must print.

use super::*;
use crate::output::write_json_line;

fn printed(format: OutputFormat, offset: u64, data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    RecordPrinter::new(format, Content::Raw, Style::Json, None)
        .record(&mut out, offset, None, data)
        .expect("writing to memory");
    out
}

#[test]
fn a_record_of_a_pack_has_its_index() {
    let mut out = Vec::new();
    RecordPrinter::new(OutputFormat::Json, Content::Raw, Style::Json, None)
        .record(&mut out, 7, Some(2), b"foo")
        .expect("writing to memory");
    assert_eq!(
        out,
        b"{\"offset\": 7, \"index\": 2, \"length\": 3, \"hex\": \"666f6f\"}\n"
    );
}

#[test]
fn formats() {
    assert_eq!(printed(OutputFormat::Lines, 0, b"a b"), b"a b\n");
    assert_eq!(printed(OutputFormat::Lines, 0, b""), b"\n");
    assert_eq!(printed(OutputFormat::Raw, 0, b"\x1b[2J"), b"\x1b[2J\n");
    assert_eq!(printed(OutputFormat::Escaped, 0, b"\x1b[2J"), b"\\x1b[2J\n");
    assert_eq!(printed(OutputFormat::Hex, 0, b"\x00\xffAz"), b"00ff417a\n");
    assert_eq!(printed(OutputFormat::Hex, 0, b""), b"\n");
    assert_eq!(
        printed(OutputFormat::Json, 27, b"\x01\xab"),
        b"{\"offset\": 27, \"length\": 2, \"hex\": \"01ab\"}\n"
    );
    assert_eq!(
        printed(OutputFormat::Json, 0, b""),
        b"{\"offset\": 0, \"length\": 0, \"hex\": \"\"}\n"
    );
    assert_eq!(
        printed(OutputFormat::Framed, 0, b"xyz"),
        b"\x03\x00\x00\x00xyz"
    );
    assert_eq!(printed(OutputFormat::Framed, 0, b""), b"\x00\x00\x00\x00");
}

#[test]
fn long_hex_is_complete() {
    let data: Vec<u8> = (0..5000u32).map(|i| (i * 7) as u8).collect();
    let expected: String = data.iter().map(|b| format!("{b:02x}")).collect();
    let hex = printed(OutputFormat::Hex, 0, &data);
    assert_eq!(String::from_utf8(hex).ok(), Some(format!("{expected}\n")));
    let json = printed(OutputFormat::Json, 9, &data);
    let value: serde_json::Value = serde_json::from_slice(&json).expect("valid JSON");
    assert_eq!(value["hex"], expected.as_str());
    assert_eq!(value["length"], 5000);
}

#[test]
fn json_is_valid_json() {
    let line = printed(OutputFormat::Json, 1 << 40, b"hi");
    let value: serde_json::Value = serde_json::from_slice(&line).expect("valid JSON");
    assert_eq!(value["offset"], 1u64 << 40);
    assert_eq!(value["length"], 2);
    assert_eq!(value["hex"], "6869");
}

/// A source that pushes `pieces`, then fails if `fails`.
fn streamed(format: OutputFormat, pieces: &[&[u8]], fails: bool) -> (Vec<u8>, Option<String>) {
    let len = pieces.iter().map(|p| p.len() as u64).sum();
    let mut out = Vec::new();
    let mut printer = RecordPrinter::new(format, Content::Raw, Style::Json, None);
    let result = printer.streamed(&mut out, 5, len, |sink| {
        for piece in pieces {
            sink(piece)?;
        }
        if fails {
            Err(CliError::Usage("changed".to_owned()))
        } else {
            Ok(())
        }
    });
    (out, result.err().map(|e| e.to_string()))
}

#[test]
fn a_record_streamed_in_pieces_prints_as_one() {
    let pieces: &[&[u8]] = &[b"ab", b"", b"\xff"];
    for format in [
        OutputFormat::Lines,
        OutputFormat::Hex,
        OutputFormat::Json,
        OutputFormat::Framed,
    ] {
        let (out, error) = streamed(format, pieces, false);
        assert_eq!(error, None);
        assert_eq!(out, printed(format, 5, b"ab\xff"), "{format:?}");
    }
}

#[test]
fn a_failing_source_leaves_the_json_record_unfinished() {
    let (out, error) = streamed(OutputFormat::Json, &[b"ab", b"c"], true);
    assert_eq!(error.as_deref(), Some("changed"));
    assert_eq!(out, b"{\"offset\": 5, \"length\": 3, \"hex\": \"616263");
    let (out, error) = streamed(OutputFormat::Json, &[], true);
    assert_eq!(error.as_deref(), Some("changed"));
    assert_eq!(out, b"{\"offset\": 5, \"length\": 0, \"hex\": \"");
}

/// A writer that takes `room` bytes, then fails.
struct Full {
    room: usize,
    taken: Vec<u8>,
}

impl Write for Full {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.len() > self.room {
            return Err(io::ErrorKind::BrokenPipe.into());
        }
        self.room -= buf.len();
        self.taken.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_write_error_is_the_writers() {
    // The line is `{"offset": 5, "length": 4, "hex": "` (36 bytes), 8 digits, `"}`.
    for (room, pieces) in [(0, 0), (10, 0), (40, 1), (44, 2)] {
        let mut out = Full {
            room,
            taken: Vec::new(),
        };
        let mut pushed = 0;
        let mut printer = RecordPrinter::new(OutputFormat::Json, Content::Raw, Style::Json, None);
        let result = printer.streamed(&mut out, 5, 4, |sink| {
            for piece in [b"ab", b"cd"] {
                sink(piece)?;
                pushed += 1;
            }
            Ok(())
        });
        match result {
            Err(CliError::Output(OutputError::Write(e))) => {
                assert_eq!(e.kind(), io::ErrorKind::BrokenPipe, "room {room}")
            }
            other => panic!("room {room}: {other:?}"),
        }
        assert!(out.taken.len() <= room);
        assert_eq!(
            pushed, pieces,
            "room {room}: the source goes on after a failure"
        );
    }
}

#[test]
fn a_frame_too_long_is_refused_and_nothing_printed() {
    let mut out = Vec::new();
    let mut printer = RecordPrinter::new(OutputFormat::Framed, Content::Raw, Style::Json, None);
    match printer.streamed(&mut out, 7, 1 << 32, |_| Ok(())) {
        Err(CliError::Output(OutputError::TooLongForFrame { offset: 7, len })) => {
            assert_eq!(len, 1 << 32);
        }
        other => panic!("{other:?}"),
    }
    assert!(out.is_empty());
}

/// The record `data` at `offset` holding `content`, printed in `style`.
fn decoded(content: Content, style: Style, data: &[u8], file: Option<&str>) -> String {
    let mut printer = RecordPrinter::new(OutputFormat::Json, content, style, file);
    let mut out = Vec::new();
    printer.record(&mut out, 40, None, data).expect("memory");
    String::from_utf8(out).expect("UTF-8")
}

/// The document of the record `data` at `offset` holding `content`, serialized by serde.
fn serialized(content: Content, data: &[u8], file: Option<&str>) -> String {
    let mut out = Vec::new();
    match content {
        Content::VersionEdit => {
            write_json_line(&mut out, &crate::decode::edit_document(40, data, file))
        }
        _ => write_json_line(&mut out, &crate::decode::batch_document(40, data, file)),
    }
    .expect("memory");
    String::from_utf8(out).expect("UTF-8")
}

/// A write batch at sequence 5 of a put, a delete in column family 2 and an unknown tag.
fn batch() -> Vec<u8> {
    let mut record = 5u64.to_le_bytes().to_vec();
    record.extend_from_slice(&3u32.to_le_bytes());
    record.extend_from_slice(b"\x01\x02k\x1b\x01v\x04\x02\x01d\x42");
    record
}

#[test]
fn a_decoded_batch_prints_its_document() {
    let data = batch();
    for file in [None, Some("a/\"b\".log")] {
        let json = decoded(Content::WriteBatch, Style::Json, &data, file);
        assert_eq!(json, serialized(Content::WriteBatch, &data, file));
        let value: serde_json::Value = serde_json::from_str(&json).expect("JSON");
        assert_eq!(value["sequence"], 5);
        assert_eq!(value["ops"][1]["cf"], 2);
        assert_eq!(value["file"].as_str(), file);
    }
    // Too short for a header: no sequence, the error.
    let json = decoded(Content::WriteBatch, Style::Json, b"abc", None);
    assert_eq!(json, serialized(Content::WriteBatch, b"abc", None));
    assert!(json.starts_with("{\"offset\": 40, \"sequence\": null, \"count\": null"));
    let text = decoded(Content::WriteBatch, Style::Text { hex: true }, &data, None);
    assert!(
        text.starts_with("--- offset 40; sequence 5; count 3\n  put 6b1b 76\n  delete cf 2 64\n"),
        "{text}"
    );
}

#[test]
fn a_decoded_edit_prints_its_document() {
    let data = [1, 3, b'c', b'm', b'p', 2, 12];
    let json = decoded(
        Content::VersionEdit,
        Style::Json,
        &data,
        Some("MANIFEST-000001"),
    );
    assert_eq!(
        json,
        serialized(Content::VersionEdit, &data, Some("MANIFEST-000001"))
    );
    assert_eq!(
        json,
        "{\"offset\": 40, \"fields\": [{\"field\": \"comparator\", \"name\": \"cmp\"}, \
         {\"field\": \"log_number\", \"value\": 12}], \"file\": \"MANIFEST-000001\"}\n"
    );
    let text = decoded(
        Content::VersionEdit,
        Style::Text { hex: false },
        &data,
        None,
    );
    assert_eq!(text, "--- offset 40\n  comparator 'cmp'\n  log_number 12\n");
}
