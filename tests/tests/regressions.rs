//! Minimal reproductions of the core issues the reliability work found (fuzzing, damage
//! sweeps), kept as regression tests once fixed. One still open is `#[ignore]`d with the
//! reason; run it with `cargo test -p logfmt-tests --test regressions -- --ignored`.

#![allow(missing_docs)]

use logfmt_core::{BLOCK_SIZE, IoSource, ReadOptions, Reader, parts::Item};
use logfmt_tests::{Seen, model, read_with, write_log};

/// Found by the `reader` fuzz target (fixed in 26a48ce): an initial offset in the last 5
/// values of the `u64` range overflowed `block_start += BLOCK_SIZE` in `Decoder::step`: a
/// panic in debug builds, and in release a wrap to block 0 (the whole log read and skipped).
/// `logfmt cat --offset 18446744073709551615 FILE` reached it from the command line.
#[test]
fn initial_offset_near_u64_max() {
    let log = write_log(&[b"foo".to_vec()]);
    for offset in [u64::MAX - 4, u64::MAX] {
        let items = read_with(&log, &ReadOptions::new().initial_offset(offset));
        assert!(items.is_empty());
    }
}

/// A file that grows: reads see only the first `visible` bytes.
struct Growing<'a> {
    data: &'a [u8],
    pos: usize,
    visible: usize,
}

impl embedded_io::ErrorType for Growing<'_> {
    type Error = std::convert::Infallible;
}

impl embedded_io::Read for Growing<'_> {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Self::Error> {
        let n = buf.len().min(self.visible - self.pos);
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// Found by the `reader` fuzz target: in tailing mode, a chunk dropped "to the end of its
/// block" (checksum mismatch; likewise a zero header, an erased header) while the block was
/// only partly read dropped only the bytes read so far; when the block grew, the decoder parsed
/// on in the middle of the region a plain reader drops, returning records ("later") and reports
/// that LevelDB's reader never returns for the same final bytes. The fix (26a48ce) drops the
/// bytes that arrive later in that block too (reported as a drop of their own: a tailing reader
/// cannot take back the report it made), but panics doing so: `Decoder::block_loaded` calls
/// `report()` (which calls `position()`, `end_of_buffer - (len - pos)`) after setting `pos` to
/// the new length and before updating `len`: "attempt to subtract with overflow" at
/// `decoder.rs:192` in debug builds; in release the report's offset is wrong ("drop 12 at 30"
/// instead of at 18: `old_end` is taken after `end_of_buffer` was advanced).
#[test]
fn tailing_resumes_inside_a_dropped_block() {
    let mut log = model::chunk(model::FULL, b"a");
    let mut bad = model::chunk(model::FULL, b"bad");
    bad[0] ^= 1;
    log.extend_from_slice(&bad);
    let visible = log.len();
    log.extend(model::chunk(model::FULL, b"later"));

    // Plain reading of the final bytes: "a", then the rest of the block is dropped.
    let plain = read_with(&log, &ReadOptions::new());
    assert_eq!(plain.len(), 2);
    assert!(matches!(&plain[1], Seen::Drop(c) if c.offset == 8 && c.bytes == 22));

    // Tailing: the same bytes, arriving in two steps.
    let source = IoSource::new(
        Growing {
            data: &log,
            pos: 0,
            visible,
        },
        Box::new([0u8; BLOCK_SIZE]),
    );
    let mut scratch = [0u8; 64];
    let mut reader = Reader::with_options(source, &mut scratch, &ReadOptions::new().tailing(true));
    let mut seen = Vec::new();
    for round in 0..2 {
        while let Some(item) = reader.next().unwrap_or_else(|e| match e {}) {
            seen.push(match item {
                Item::Record(r) => format!("record {:?}", String::from_utf8_lossy(r.data)),
                Item::Corruption(c) => format!("drop {} at {}", c.bytes, c.offset),
                Item::Oversized(o) => format!("{o:?}"),
                Item::Coded(pack) => format!("{pack:?}"),
                other => format!("{other:?}"),
            });
        }
        if round == 0 {
            reader.get_mut().get_mut().visible = log.len();
        }
    }
    // The same records as the plain reader; the same bytes dropped, in one report or in two
    // (the second for the bytes that arrived later in the dropped block).
    assert!(
        seen == ["record \"a\"", "drop 22 at 8"]
            || seen == ["record \"a\"", "drop 10 at 8", "drop 12 at 18"],
        "tailing differs from plain reading: {seen:?}"
    );
}

/// Found by the `reader` fuzz target (fixed in 26a48ce): `IoSource::skip` (the initial
/// offset, for a source that cannot seek) stopped at the end of the data available so far and
/// forgot the rest of the skip, so a tailing reader started past the current end of a growing
/// log read its blocks from the wrong file position: the record "b" at 32768 was never
/// returned, and misaligned reports came instead.
#[test]
fn tailing_initial_offset_past_the_current_end() {
    let log = write_log(&[logfmt_tests::content(32_761, 1), b"b".to_vec()]);
    assert_eq!(log.len(), 32_768 + 8);
    let source = IoSource::new(
        Growing {
            data: &log,
            pos: 0,
            visible: 100,
        },
        Box::new([0u8; BLOCK_SIZE]),
    );
    let mut scratch = [0u8; 64];
    let options = ReadOptions::new().tailing(true).initial_offset(32_768);
    let mut reader = Reader::with_options(source, &mut scratch, &options);
    let mut seen = Vec::new();
    for round in 0..2 {
        while let Some(item) = reader.next().unwrap_or_else(|e| match e {}) {
            seen.push(match item {
                Item::Record(r) => format!(
                    "record {:?} at {}",
                    String::from_utf8_lossy(r.data),
                    r.offset
                ),
                Item::Corruption(c) => format!("drop {} at {}", c.bytes, c.offset),
                Item::Oversized(o) => format!("{o:?}"),
                Item::Coded(pack) => format!("{pack:?}"),
                other => format!("{other:?}"),
            });
        }
        if round == 0 {
            reader.get_mut().get_mut().visible = log.len();
        }
    }
    assert_eq!(seen, ["record \"b\" at 32768"]);
}

/// Found by the damage sweeps against the LevelDB reference model (fixed in 26a48ce):
/// LevelDB's `ReadRecord` reports `kBadRecord` inside a fragmented record as "error in middle
/// of record" with the scratch size *even when it is 0* (its `kBadRecord` case has no
/// `!scratch->empty()` test, unlike the `kFullType`/`kFirstType` cases): an empty `FIRST`
/// chunk (written when exactly 7 bytes are left in a block) followed by damage yields a
/// 0-byte report, which LevelDB's `DBImpl` recovery logs ("dropping 0 bytes") and, with
/// `paranoid_checks`, fails on. The core reported nothing there.
#[test]
fn empty_first_then_damage_is_a_zero_byte_report() {
    // "x" leaves exactly 7 bytes in block 0, so "bar" is an empty FIRST @32761 + LAST @32768.
    let mut log = write_log(&[vec![b'x'; 32_768 - 14], b"bar".to_vec()]);
    assert_eq!(log.len(), 32_768 + 10);
    log[32_768 + 7] ^= 1; // damage the LAST chunk's payload
    let items = read_with(&log, &ReadOptions::new());
    let drops: Vec<(u64, u64, String)> = items
        .iter()
        .filter_map(|s| match s {
            Seen::Drop(c) => Some((c.offset, c.bytes, c.kind.to_string())),
            _ => None,
        })
        .collect();
    assert_eq!(
        drops,
        [
            (32_768, 10, "checksum mismatch".to_owned()),
            (32_761, 0, "error in middle of record".to_owned()),
        ]
    );
}

/// Found by the `writer` fuzz target once the core reported LevelDB's 0-byte "error in middle of
/// record": `Writer::pad_to` documents its padding as read by LevelDB's reader "as nothing at
/// all", and a single call is (empty `FIRST` chunks, or zeros to the end of the block, never
/// both). But two calls in a row — the first leaving empty `FIRST` chunks, the second filling
/// the rest of the block with zeros (its `FIRST` chunks do not fit) — give an empty `FIRST`
/// followed by a zero header, which LevelDB reports as a 0-byte "error in middle of record"
/// (and fails on with `paranoid_checks`). `FlashWriter` pads to one alignment only, so it never
/// does this; a caller mixing alignments does.
#[test]
fn pad_to_after_pad_to_is_not_silent() {
    use logfmt_core::{FnSink, Writer};
    let mut log = Vec::new();
    let mut block = Box::new([0u8; BLOCK_SIZE]);
    {
        let sink = FnSink(|b: &[u8]| {
            log.extend_from_slice(b);
            Ok::<(), std::convert::Infallible>(())
        });
        let mut writer = Writer::new(sink, &mut *block);
        // "x" ends at 32669 (odd): pad_to(2) adds one empty FIRST; pad_to(4096) cannot fit
        // its FIRST chunks in the 92 bytes left and zero-fills them.
        writer.add_record(&[b'x'; 32_662]).expect("memory");
        assert_eq!(writer.pad_to(2).expect("memory"), 7);
        assert_eq!(writer.pad_to(4096).expect("memory"), 92);
        writer.add_record(b"y").expect("memory");
        writer.flush().expect("memory");
    }
    let items = read_with(&log, &ReadOptions::new());
    assert!(
        items.iter().all(|s| matches!(s, Seen::Record { .. })),
        "padding is not silent: {items:?}"
    );
}

/// Found by the `reader` fuzz target (tailing pass on damaged logs): with `resync_after_zeros`,
/// a tailing reader decides at a zero header whether a whole chunk follows the zeros from the
/// bytes it has so far. If that chunk (or the first non-zero byte) has not fully arrived yet,
/// it drops the rest of the block for good, and the record a plain reader of the same final
/// bytes recovers ("abc" here) is never returned. It should wait (`Pending`) until the chunk
/// after the zeros is complete, or the block is.
#[test]
fn tailing_resync_after_zeros_waits_for_the_chunk() {
    let mut log = vec![0u8; 20];
    log.extend(model::chunk(model::FULL, b"abc"));
    let options = ReadOptions::new().resync_after_zeros(true);
    let plain = read_with(&log, &options);
    assert!(
        matches!(&plain[..], [Seen::Record { offset: 20, .. }]),
        "{plain:?}"
    );
    let source = IoSource::new(
        Growing {
            data: &log,
            pos: 0,
            visible: 22,
        },
        Box::new([0u8; BLOCK_SIZE]),
    );
    let mut scratch = [0u8; 64];
    let mut reader = Reader::with_options(source, &mut scratch, &options.clone().tailing(true));
    let mut records = Vec::new();
    for round in 0..2 {
        while let Some(item) = reader.next().unwrap_or_else(|e| match e {}) {
            if let Item::Record(r) = item {
                records.push(r.offset);
            }
        }
        if round == 0 {
            reader.get_mut().get_mut().visible = log.len();
        }
    }
    assert_eq!(
        records,
        [20],
        "the tailing reader lost the record after the zeros"
    );
}

/// Found by the `reader` fuzz target (tailing pass on damaged logs): with `resync_after_zeros`,
/// zeros that cut a record in progress, then a chunk cut by the end of the input. A plain
/// reader dropped the rest of the block, reported the cut record and ended `Clean`; a tailing
/// reader waited for the chunk and never reported the cut record. Both now treat the zeros as
/// final once a non-zero byte follows them: the cut record is reported at once, and the chunk
/// after them is torn (plain) or still arriving (tailing).
#[test]
fn zeros_then_a_torn_chunk_cut_the_record_in_progress() {
    let mut log = model::chunk(model::FIRST, &[7u8; 37]);
    log.extend([0u8; 10]);
    let torn_at = log.len() as u64;
    let next = model::chunk(model::FULL, b"not all here");
    assert_ne!(
        next[0], 0,
        "the resync finds the chunk by its first non-zero byte"
    );
    log.extend(&next[..10]);
    let options = ReadOptions::new().resync_after_zeros(true);
    let cut = Seen::Drop(logfmt_core::parts::Corruption::new(
        0,
        37,
        logfmt_core::parts::CorruptionKind::ErrorInMiddleOfRecord,
    ));
    assert_eq!(read_with(&log, &options), std::slice::from_ref(&cut));
    let mut scratch = [0u8; 64];
    let mut plain =
        Reader::with_options(logfmt_core::SliceSource::new(&log), &mut scratch, &options);
    while plain.next().unwrap_or_else(|e| match e {}).is_some() {}
    assert_eq!(
        plain.end(),
        Some(logfmt_core::LogEnd::Torn {
            offset: torn_at,
            len: 10
        })
    );

    let source = IoSource::new(
        Growing {
            data: &log,
            pos: 0,
            visible: log.len(),
        },
        Box::new([0u8; BLOCK_SIZE]),
    );
    let mut reader = Reader::with_options(source, &mut scratch, &options.clone().tailing(true));
    let mut items = Vec::new();
    while let Some(item) = reader.next().unwrap_or_else(|e| match e {}) {
        if let Item::Corruption(c) = item {
            items.push(Seen::Drop(c));
        }
    }
    assert_eq!(items, [cut], "the tailing reader withholds the cut record");
    assert_eq!(
        reader.end(),
        None,
        "tailing: the torn chunk may still arrive"
    );
}

/// Found by the `reader` fuzz target (tailing pass on damaged logs): with `resync_after_zeros`,
/// zeros running to the end of the input after a `FIRST` chunk. A plain reader reported the
/// record as cut ("error in middle of record") and ended `Clean`; a tailing reader waited (the
/// zeros may be preallocated space yet to be written). Both now read such zeros as the end of
/// the log: the record in progress is torn, not reported.
#[test]
fn zeros_to_the_end_of_the_input_end_the_log() {
    let mut log = model::chunk(model::FIRST, &[7u8; 67]);
    log.extend([0u8; 8]);
    let options = ReadOptions::new().resync_after_zeros(true);
    assert_eq!(read_with(&log, &options), []);
    let mut scratch = [0u8; 128];
    let mut plain =
        Reader::with_options(logfmt_core::SliceSource::new(&log), &mut scratch, &options);
    while plain.next().unwrap_or_else(|e| match e {}).is_some() {}
    assert_eq!(
        plain.end(),
        Some(logfmt_core::LogEnd::Torn {
            offset: 0,
            len: log.len() as u64
        })
    );
    // LevelDB's rules: the zero header cuts the record, which is reported.
    assert!(matches!(
        &read_with(&log, &ReadOptions::new())[..],
        [Seen::Drop(c)] if c.bytes == 67
    ));
}
