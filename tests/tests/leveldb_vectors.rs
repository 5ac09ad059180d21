//! The 27 log files written and read by real LevelDB (`data/leveldb/`), with what LevelDB's
//! reader returned for each (`EXPECTED.txt`): the same records, offsets and drops here.

use logfmt_core::{Reader, parts::Item};
use logfmt_tests::data_dir;

#[derive(Debug, PartialEq, Eq)]
enum Seen {
    Record { len: usize, offset: u64, crc: u32 },
    Drop { bytes: u64, reason: String },
}

struct Case {
    name: String,
    size: u64,
    expected: Vec<Seen>,
}

fn parse_expected() -> Vec<Case> {
    let text =
        std::fs::read_to_string(data_dir().join("leveldb/EXPECTED.txt")).expect("EXPECTED.txt");
    let mut cases = Vec::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let (name, rest) = line.split_once(' ').expect("name");
        let (size, rest) = rest.split_once(" records: ").expect("records");
        let size = size
            .strip_prefix("size=")
            .expect("size")
            .parse()
            .expect("size number");
        let mut expected = Vec::new();
        let mut rest = rest;
        while let Some(start) = rest.find(['[', 'd']) {
            rest = &rest[start..];
            if let Some(body) = rest.strip_prefix('[') {
                let end = body.find(']').expect("]");
                let mut len = 0;
                let mut offset = 0;
                let mut crc = 0;
                for field in body[..end].split(' ') {
                    let (k, v) = field.split_once('=').expect("field");
                    match k {
                        "len" => len = v.parse().expect("len"),
                        "off" => offset = v.parse().expect("off"),
                        "crc32c" => crc = u32::from_str_radix(v, 16).expect("crc"),
                        other => panic!("unknown field {other}"),
                    }
                }
                expected.push(Seen::Record { len, offset, crc });
                rest = &body[end + 1..];
            } else if let Some(body) = rest.strip_prefix("drop(") {
                let end = body.find(')').map(|i| {
                    // reasons contain "(1)"-style suffixes: find the closing paren of drop(...)
                    let b = body.as_bytes();
                    let mut depth = 0;
                    for (j, &c) in b.iter().enumerate() {
                        match c {
                            b'(' => depth += 1,
                            b')' if depth == 0 => return j,
                            b')' => depth -= 1,
                            _ => {}
                        }
                    }
                    i
                });
                let end = end.expect(")");
                let (bytes, reason) = body[..end].split_once(',').expect("drop fields");
                let reason = reason
                    .strip_prefix("Corruption: ")
                    .unwrap_or(reason)
                    .to_string();
                expected.push(Seen::Drop {
                    bytes: bytes.parse().expect("bytes"),
                    reason,
                });
                rest = &body[end + 1..];
            } else {
                rest = &rest[1..];
            }
        }
        cases.push(Case {
            name: name.to_string(),
            size,
            expected,
        });
    }
    cases
}

fn read_all(log: &[u8]) -> Vec<Seen> {
    let mut scratch = vec![0u8; 1 << 20];
    let mut reader = Reader::from_slice(log, &mut scratch);
    let mut seen = Vec::new();
    while let Some(item) = reader.next().expect("in-memory reads cannot fail") {
        match item {
            Item::Record(r) => seen.push(Seen::Record {
                len: r.data.len(),
                offset: r.offset,
                crc: crc32c::crc32c(r.data),
            }),
            Item::Corruption(c) => seen.push(Seen::Drop {
                bytes: c.bytes,
                reason: c.kind.to_string(),
            }),
            Item::Oversized(o) => panic!("unexpected oversized record {o:?}"),
            Item::Coded(pack) => panic!("unexpected coded pack {pack:?}"),
            other => panic!("not expected here: {other:?}"),
        }
    }
    seen
}

#[test]
fn all_vectors_read_as_leveldb_reads_them() {
    let cases = parse_expected();
    assert_eq!(cases.len(), 27, "EXPECTED.txt lists 27 files");
    for case in cases {
        let log =
            std::fs::read(data_dir().join(format!("leveldb/{}.log", case.name))).expect("log file");
        assert_eq!(log.len() as u64, case.size, "{}: size", case.name);
        // LevelDB reports drops as they happen and records as they are returned; compare the
        // two streams separately and in order.
        let (records, drops): (Vec<_>, Vec<_>) = read_all(&log)
            .into_iter()
            .partition(|s| matches!(s, Seen::Record { .. }));
        let (want_records, want_drops): (Vec<_>, Vec<_>) = case
            .expected
            .into_iter()
            .partition(|s| matches!(s, Seen::Record { .. }));
        assert_eq!(records, want_records, "{}: records", case.name);
        assert_eq!(drops, want_drops, "{}: drops", case.name);
    }
}
