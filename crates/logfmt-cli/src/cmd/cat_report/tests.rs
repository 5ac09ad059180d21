//! The formats of `cat`'s records, held and streamed, against the bytes they must print.

use super::*;

fn printed(format: OutputFormat, offset: u64, data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    CatRecord::held(format, offset, None, data)
        .print(&mut out)
        .expect("writing to memory");
    out
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
    let record = CatRecord::streamed(format, 5, len, |sink| {
        for piece in pieces {
            sink(piece)?;
        }
        if fails {
            Err(CliError::Usage("changed".to_owned()))
        } else {
            Ok(())
        }
    });
    let result = record.print(&mut out);
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
        let pushed = std::cell::Cell::new(0);
        let record = CatRecord::streamed(OutputFormat::Json, 5, 4, |sink| {
            for piece in [b"ab", b"cd"] {
                sink(piece)?;
                pushed.set(pushed.get() + 1);
            }
            Ok(())
        });
        match record.print(&mut out) {
            Err(CliError::Output(OutputError::Write(e))) => {
                assert_eq!(e.kind(), io::ErrorKind::BrokenPipe, "room {room}")
            }
            other => panic!("room {room}: {other:?}"),
        }
        assert!(out.taken.len() <= room);
        assert_eq!(
            pushed.get(),
            pieces,
            "room {room}: the source goes on after a failure"
        );
    }
}
