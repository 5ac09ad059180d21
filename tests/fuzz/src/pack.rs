//! Target `pack`: pack payloads, parsed and read through a log.
//!
//! Input: arbitrary bytes, taken as a pack's payload.
//!
//! Properties: no panic; [`Pack::parse`] and its records never read past the payload, and
//! the records it yields before an error, or all of them, lie in the body, back to back, with
//! their indices from 0; when every record parses, there are exactly `count` of them. Written
//! as a pack record (`SliceWriter::add_pack`) and read back by the core `Reader`: the same
//! records, each with the pack's offset and its index, then — if the body does not hold
//! together — one `BadPack` report counting the records lost; a coded pack comes back whole
//! (`Item::Coded`). A pack built from the input cut into records (`PackBuffer`) parses back to
//! exactly those records.

#![allow(dead_code, unreachable_pub)]

use logfmt_core::pack::{Pack, PackBuffer, PackError, STORED};
use logfmt_core::{
    BLOCK_SIZE, Reader, SliceWriter,
    parts::{CorruptionKind, Item},
};

/// Checks one input.
pub fn check(data: &[u8]) {
    let data = &data[..data.len().min(3 * BLOCK_SIZE)];
    let parsed = Pack::parse(data);
    // What the parser makes of it.
    let mut records: Vec<(u32, &[u8])> = Vec::new();
    let mut error = None;
    if let Ok(pack) = &parsed {
        let body = pack.body();
        let mut at = 0usize;
        for (i, record) in pack.records().enumerate() {
            match record {
                Ok((index, bytes)) => {
                    assert_eq!(index as usize, i, "indices from 0");
                    // Back to back in the body, after a length prefix of 1–5 bytes.
                    let start = bytes.as_ptr() as usize - body.as_ptr() as usize;
                    assert!(start > at && start - at <= 5 && start + bytes.len() <= body.len());
                    at = start + bytes.len();
                    records.push((index, bytes));
                }
                Err(e) => {
                    error = Some(e);
                    break;
                }
            }
            assert!(i < data.len() + 1, "no more records than bytes");
        }
        if error.is_none() && pack.codec() == STORED {
            assert_eq!(
                records.len(),
                pack.count() as usize,
                "every record of the count"
            );
            assert_eq!(at, body.len(), "the body read to its end");
        }
    }

    // Through a log and the core reader.
    let mut log = vec![0u8; data.len() + 4 * BLOCK_SIZE];
    let mut writer = SliceWriter::new(&mut log);
    writer.add_pack(data).expect("room for the pack");
    writer.add_record(b"after").expect("room for a record");
    let len = writer.len();
    let mut scratch = vec![0u8; data.len() + 16];
    let mut reader = Reader::from_slice(&log[..len], &mut scratch);
    let mut seen = Vec::new();
    while let Some(item) = reader.next().unwrap_or_else(|e| match e {}) {
        match item {
            Item::Record(r) if r.index.is_some() => {
                assert_eq!(r.offset, 0);
                seen.push((r.index.unwrap_or(0), r.data.to_vec()));
            }
            Item::Record(r) => {
                assert_eq!(r.data, b"after", "the record after the pack");
                break;
            }
            Item::Corruption(c) => {
                let CorruptionKind::BadPack { error: e, lost } = c.kind else {
                    panic!("{c:?}");
                };
                assert!(
                    parsed.is_err() || error.is_some(),
                    "a report for a good pack: {c:?}"
                );
                if let Ok(pack) = &parsed {
                    assert_eq!(Some(e), error, "the parser's error");
                    assert_eq!(lost as usize, pack.count() as usize - records.len());
                } else {
                    assert_eq!(Err(e), parsed.map(|_| ()));
                }
            }
            Item::Coded(pack) => {
                assert!(matches!(&parsed, Ok(p) if p.codec() != STORED));
                assert_eq!(pack.data, data);
            }
            Item::Oversized(o) => panic!("{o:?}"),
            other => panic!("not expected here: {other:?}"),
        }
    }
    if parsed.as_ref().is_ok_and(|p| p.codec() == STORED) {
        let expected: Vec<(u32, Vec<u8>)> = records.iter().map(|(i, r)| (*i, r.to_vec())).collect();
        assert_eq!(seen, expected, "the reader's records are the parser's");
    }
    if let Err(PackError::Truncated | PackError::Empty) = parsed {
        assert!(seen.is_empty());
    }

    // A pack built from the input cut into records: the same records back.
    let mut pack = PackBuffer::<4096>::new();
    let mut pushed: Vec<&[u8]> = Vec::new();
    let mut rest = data;
    while let Some((&len, tail)) = rest.split_first() {
        let (record, tail) = tail.split_at(usize::from(len).min(tail.len()));
        if pack.push(record).is_ok() {
            pushed.push(record);
        }
        rest = tail;
    }
    if !pushed.is_empty() {
        let back: Vec<&[u8]> = Pack::parse(pack.as_bytes())
            .expect("a built pack parses")
            .records()
            .map(|r| r.expect("a built pack's record").1)
            .collect();
        assert_eq!(back, pushed);
    }
}
