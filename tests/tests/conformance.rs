//! Conformance with LevelDB's log format, rule by rule: each numbered rule below is checked by
//! the test named `item_NN_…` after it, or, where the list says so, by another test file. The
//! list stands on its own; expected values are LevelDB's measured behaviour (its vector files in
//! `data/leveldb/` with `EXPECTED.txt`, its `db/log_test.cc`) or, where a comment says
//! "derived", worked out by hand from the rules of LevelDB's `db/log_reader.cc`.
//!
//! Writer:
//! 1. A chunk header is `LE32(mask(crc32c(type ‖ payload))) ‖ LE16(length) ‖ type`: "foo" is
//!    `dd5fb37a 0300 01 666f6f`.
//! 2. An empty record is written as one FULL chunk of length 0.
//! 3. A record that fits in the rest of the block is one FULL chunk; otherwise a FIRST fills the
//!    block, a MIDDLE fills each further block and a LAST carries the rest.
//! 4. A record that ends exactly at a block's end is followed by no trailer.
//! 5. With fewer than 7 bytes left in a block, they are zero-filled (a trailer) and the next
//!    chunk starts the next block.
//! 6. With exactly 7 bytes left, an empty record is a FULL of length 0 that ends the block.
//! 7. With exactly 7 bytes left, a non-empty record starts with an empty FIRST there.
//! 8. The 1000, 97 270 and 8000-byte records of LevelDB's format document give its layout, byte
//!    for byte (106 311 bytes).
//! 9. A record has no size limit (a 1 MB record round-trips).
//! 10. A writer resumed after `n` bytes goes on with the block layout at `n % 32768`.
//! 11. Resuming is safe only at the end of the last complete record: appended after a torn
//!     tail, a record is lost without a report.
//! 12. The writer emits only valid chunks: types 1 to 4, payloads that fit, no chunk across a
//!     block boundary, zero trailers.
//! 13. A sink error is sticky: every later call fails and nothing more reaches the sink.
//! 14. Whole blocks go to the sink as they fill; `flush` sends the rest.
//! 15. A record's offset is that of its first chunk.
//! 16. The recyclable format: 11-byte headers carrying the log number, which the checksum
//!     covers.
//!
//! (Rules 17 and 18 concern other writers' extensions: none here.)
//!
//! Reader, framing:
//! 19. An empty file is the end of the log, with no report.
//! 20. A trailer is skipped whatever its bytes are.
//! 21. A header torn by the end of the file is the end of the log, with no report.
//! 22. A length past the end of a full block reports the rest of the block as a bad length;
//!     reading goes on at the next block.
//! 23. A length past the end of the file is the end of the log, with no report.
//! 24. A zero header (type 0, length 0) drops the rest of its block without a report.
//! 25. Type 0 with a non-zero length and a good checksum is an unknown record type.
//! 26. A checksum mismatch reports the rest of the block as dropped.
//! 27. The checks run in LevelDB's order: header present, length, zero type, checksum, initial
//!     offset, type.
//! 28. With checksums off, a mismatch goes unnoticed; the framing checks stay.
//! 29. Short reads are retried until the block is full or the file ends.
//! 30. No input makes the reader panic (`properties.rs`).
//! 31. Every prefix of a valid log reads as a prefix of its records, with no report
//!     (`properties.rs`).
//!
//! Reader, record assembly:
//! 32, 33. A record's offset is that of its FULL or FIRST chunk.
//! 34–36. A MIDDLE or LAST without a FIRST, a FULL or FIRST inside a record
//!     (`leveldb_log_test.rs`).
//! 37. An empty FIRST followed by the start of another record is dropped without a report.
//! 38. A bad chunk inside a record drops the record in progress, reported; fragments are never
//!     joined across a drop.
//! 39. An unknown type inside a record is reported with the record in progress.
//! 40. The end of the file inside a record is the end of the log, with no report.
//! 41. A read error is reported (`leveldb_log_test.rs`).
//! 42. A record spanning four blocks reads back whole.
//!
//! Reader, offsets and seeking:
//! 43. An initial offset starts the search at its block, or at the next block if it lies in
//!     the last 5 bytes of one.
//! 44–46. Chunks that start before the initial offset are skipped without a report, as are
//!     MIDDLE and LAST chunks until a record starts; a drop that starts before the offset is not
//!     reported.
//! 47. LevelDB's initial-offset cases (`leveldb_log_test.rs`).
//! 48. A record after a trailer starts at the next block, and the record before ends before
//!     the trailer.
//! 49. Reading from any record's offset returns that record first, and the rest in order;
//!     from the end of the log or past it, nothing.

use std::convert::Infallible;

use logfmt_core::{
    BLOCK_SIZE, FnSink, Format, IoSource, ReadOptions, SliceSource, WriteError, WriteOptions,
    Writer,
    parts::{Corruption, CorruptionKind, Event, FragmentReader},
};
use logfmt_tests::damage::{fix_checksum, increment_byte, set_byte};
use logfmt_tests::model::{self, FIRST, FULL, LAST, MIDDLE, Piece};
use logfmt_tests::{
    Dribble, Seen, big_string, read_log, read_source, read_with, vector, write_from, write_log,
};

const BLOCK: u64 = BLOCK_SIZE as u64;

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

fn corruption(offset: u64, bytes: u64, kind: CorruptionKind) -> Corruption {
    Corruption::new(offset, bytes, kind)
}

fn chunk(offset: u64, kind: u8, len: u64) -> Piece {
    Piece::Chunk { offset, kind, len }
}

fn trailer(offset: u64, len: u64) -> Piece {
    Piece::Trailer { offset, len }
}

fn record(offset: u64, end: u64, data: &[u8]) -> Seen {
    Seen::Record {
        offset,
        end,
        data: data.to_vec(),
    }
}

fn drop(c: Corruption) -> Seen {
    Seen::Drop(c)
}

fn from(offset: u64) -> ReadOptions {
    ReadOptions::new().initial_offset(offset)
}

// ---------------------------------------------------------------------------------------------
// Writer

#[test]
fn item_01_header_layout_and_golden_foo() {
    let log = write_log(&["foo"]);
    assert_eq!(log, hex("dd5fb37a 0300 01 666f6f"));
    assert_eq!(log, model::chunk(FULL, b"foo"));
}

#[test]
fn item_02_empty_record_is_one_full_chunk() {
    assert_eq!(write_log(&[""]), hex("052b2843 0000 01"));
    assert_eq!(
        write_log(&["foo", "bar", "", "xxxx"]),
        hex("dd5fb37a030001666f6f baeaec44030001626172 052b2843000001 153d26e904000178787878")
    );
}

#[test]
fn item_03_full_if_it_fits_else_first_middle_last() {
    // After "foo" (10 bytes) a record of 32768-10-7 = 32751 bytes fits exactly: FULL.
    let fits = write_log(&[b"foo".to_vec(), vec![1; 32_751]]);
    assert_eq!(
        model::layout(&fits),
        [chunk(0, FULL, 3), chunk(10, FULL, 32_751)]
    );
    // One byte more: FIRST fills the block, LAST carries the byte.
    let spills = write_log(&[b"foo".to_vec(), vec![1; 32_752]]);
    assert_eq!(
        model::layout(&spills),
        [
            chunk(0, FULL, 3),
            chunk(10, FIRST, 32_751),
            chunk(32_768, LAST, 1)
        ]
    );
    // Two blocks more: MIDDLEs in between.
    let long = write_log(&[b"foo".to_vec(), vec![1; 32_751 + 2 * 32_761 + 5]]);
    assert_eq!(
        model::layout(&long),
        [
            chunk(0, FULL, 3),
            chunk(10, FIRST, 32_751),
            chunk(32_768, MIDDLE, 32_761),
            chunk(65_536, MIDDLE, 32_761),
            chunk(98_304, LAST, 5),
        ]
    );
}

#[test]
fn item_04_block_filling_record_has_no_trailer() {
    let log = write_log(&[big_string("foo", 32_761), b"bar".to_vec()]);
    assert_eq!(
        model::layout(&log),
        [chunk(0, FULL, 32_761), chunk(32_768, FULL, 3)]
    );
    assert_eq!(log.len(), 32_778);
    assert_eq!(log, vector("exact_block_fill"));
}

#[test]
fn item_05_fewer_than_seven_left_is_a_zero_trailer() {
    let log = write_log(&[big_string("foo", 32_758), vec![], b"bar".to_vec()]);
    assert_eq!(
        model::layout(&log),
        [
            chunk(0, FULL, 32_758),
            trailer(32_765, 3),
            chunk(32_768, FULL, 0),
            chunk(32_775, FULL, 3)
        ]
    );
    assert_eq!(log[32_765..32_768], [0, 0, 0]);
    assert_eq!(log.len(), 32_785);
}

#[test]
fn item_06_seven_left_and_an_empty_record() {
    let log = write_log(&[vec![7; 32_754], vec![]]);
    assert_eq!(
        model::layout(&log),
        [chunk(0, FULL, 32_754), chunk(32_761, FULL, 0)]
    );
    assert_eq!(log.len(), 32_768);
}

#[test]
fn item_07_seven_left_and_a_non_empty_record() {
    let log = write_log(&[vec![7; 32_754], b"bar".to_vec()]);
    assert_eq!(
        model::layout(&log),
        [
            chunk(0, FULL, 32_754),
            chunk(32_761, FIRST, 0),
            chunk(32_768, LAST, 3)
        ]
    );
    assert_eq!(log.len(), 32_778);
}

#[test]
fn item_08_documentation_example() {
    let records = [vec![b'a'; 1000], vec![b'b'; 97_270], vec![b'c'; 8000]];
    let (log, written) = write_from(0, &records);
    assert_eq!(log.len(), 106_311);
    assert_eq!(
        model::layout(&log),
        [
            chunk(0, FULL, 1000),
            chunk(1007, FIRST, 31_754),
            chunk(32_768, MIDDLE, 32_761),
            chunk(65_536, LAST, 32_755),
            trailer(98_298, 6),
            chunk(98_304, FULL, 8000),
        ]
    );
    let spans: Vec<(u64, u64)> = written.iter().map(|w| (w.offset, w.end)).collect();
    assert_eq!(spans, [(0, 1007), (1007, 98_298), (98_304, 106_311)]);
    assert_eq!(log, vector("example_1000_97270_8000"));
    assert_eq!(read_log(&log).offsets(), [0, 1007, 98_304]);
}

#[test]
fn item_09_no_record_size_limit() {
    let big = logfmt_tests::content(1_000_003, 9);
    let log = write_log(&[b"x".to_vec(), big.clone(), b"y".to_vec()]);
    let o = read_log(&log);
    assert!(
        o.records() == [b"x".to_vec(), big, b"y".to_vec()],
        "1 MB record round trip"
    );
    assert!(o.drops().is_empty());
}

#[test]
fn item_10_resume_at_a_length() {
    // 12 ⇒ "world" @12, 24 bytes in all.
    let (hello, _) = write_from(0, &["hello"]);
    let (world, written) = write_from(12, &["world"]);
    assert_eq!((written[0].offset, written[0].end), (12, 24));
    assert_eq!([hello, world].concat(), vector("open_for_append"));
    // 32762 ⇒ 6 zero bytes, then the record @32768.
    let (tail, written) = write_from(32_762, &["x"]);
    assert_eq!(tail[..6], [0; 6]);
    assert_eq!(tail[6..], model::chunk(FULL, b"x"));
    assert_eq!((written[0].offset, written[0].end), (32_768, 32_776));
    // 32761 (exactly a header left) ⇒ an empty FIRST there; a block boundary ⇒ no trailer.
    let (tail, written) = write_from(32_761, &["x"]);
    assert_eq!(
        tail,
        [model::chunk(FIRST, b""), model::chunk(LAST, b"x")].concat()
    );
    assert_eq!(written[0].offset, 32_761);
    let (tail, _) = write_from(5 * BLOCK, &["x"]);
    assert_eq!(tail, model::chunk(FULL, b"x"));
    // Nothing written: nothing sent, not even the trailer.
    assert!(write_from(32_765, &[] as &[&[u8]]).0.is_empty());
}

#[test]
fn item_11_resume_only_at_the_last_record_end() {
    let records = [vec![b'a'; 100], vec![b'b'; 40_000]];
    let log = write_log(&records);
    let cut = 40_000; // inside b's LAST chunk: a torn write
    let torn = &log[..cut];
    let o = read_log(torn);
    assert_eq!(o.records(), [vec![b'a'; 100]]);
    assert!(
        o.drops().is_empty(),
        "a torn tail reads as the end of the log"
    );
    let last_end = match o.items.last() {
        Some(Seen::Record { end, .. }) => *end,
        other => panic!("{other:?}"),
    };
    assert_eq!(last_end, 107);

    // Truncating to the last record's end, then appending: everything reads back.
    let (tail, _) = write_from(last_end, &["c"]);
    let o = read_log(&[&log[..107], &tail].concat());
    assert_eq!(o.records(), [vec![b'a'; 100], b"c".to_vec()]);
    assert!(o.drops().is_empty());

    // Appending after the torn tail loses the new record, silently: b's LAST header promises
    // more bytes than the short last block holds.
    let (tail, _) = write_from(cut as u64, &["c"]);
    let o = read_log(&[torn, &tail].concat());
    assert_eq!(o.records(), [vec![b'a'; 100]]);
    assert!(o.drops().is_empty());
}

#[test]
fn item_12_writer_emits_only_valid_chunks() {
    // model::layout panics on a type outside 1..=4, a chunk crossing a block, a bad CRC or a
    // non-zero trailer; the lengths are checked here.
    let mut rnd = logfmt_tests::LevelDbRandom::new(12);
    let records: Vec<Vec<u8>> = (0..300)
        .map(|i| big_string(&format!("{i}."), rnd.skewed(17) as usize))
        .collect();
    let log = write_log(&records);
    let pieces = model::layout(&log);
    let mut chunks = 0;
    for piece in &pieces {
        match *piece {
            Piece::Chunk { len, .. } => {
                assert!(len <= model::MAX_PAYLOAD);
                chunks += 1;
            }
            Piece::Trailer { len, .. } => assert!((1..7).contains(&len)),
        }
    }
    assert!(chunks >= records.len());
    assert!(model::read(&log) == records);
}

#[test]
fn item_13_sink_errors_are_sticky() {
    let mut calls = 0;
    {
        let sink = FnSink(|_: &[u8]| {
            calls += 1;
            Err::<(), &str>("disk full")
        });
        let mut block = [0u8; BLOCK_SIZE];
        let mut writer = Writer::new(sink, &mut block);
        // Buffered: no I/O yet.
        assert!(writer.add_record(b"foo").is_ok());
        assert_eq!(writer.flush(), Err(WriteError::Sink("disk full")));
        assert!(writer.is_poisoned());
        assert_eq!(writer.add_record(b"bar"), Err(WriteError::Poisoned));
        assert_eq!(writer.flush(), Err(WriteError::Poisoned));
    }
    assert_eq!(calls, 1, "nothing is written after the failure");

    // A record that completes a block fails in add_record itself.
    let sink = FnSink(|_: &[u8]| Err::<(), &str>("disk full"));
    let mut block = [0u8; BLOCK_SIZE];
    let mut writer = Writer::new(sink, &mut block);
    assert_eq!(
        writer.add_record(&[0; 40_000]),
        Err(WriteError::Sink("disk full"))
    );
    assert_eq!(writer.add_record(b"x"), Err(WriteError::Poisoned));
}

#[test]
fn item_14_block_buffering_and_flush() {
    // Pebble / golang TestFlush: 17 → 10024 → 32768 written before the flush → 50038.
    let mut sizes = Vec::new();
    let mut out = Vec::new();
    {
        let sink = FnSink(|b: &[u8]| {
            out.extend_from_slice(b);
            sizes.push(out.len());
            Ok::<(), Infallible>(())
        });
        let mut block = [0u8; BLOCK_SIZE];
        let mut w = Writer::new(sink, &mut block);
        w.add_record(b"0").expect("ok");
        w.add_record(b"11").expect("ok");
        assert_eq!((w.position(), w.unsent()), (17, 17));
        w.flush().expect("ok");
        assert_eq!(w.unsent(), 0);
        w.add_record(&[b'x'; 10_000]).expect("ok");
        assert_eq!((w.position(), w.unsent()), (10_024, 10_007));
        w.add_record(&[b'y'; 40_000]).expect("ok");
        assert_eq!((w.position(), w.unsent()), (50_038, 50_038 - 32_768));
        w.flush().expect("ok");
    }
    assert_eq!(sizes, [17, 32_768, 50_038]);
    assert_eq!(out.len(), 50_038);
}

#[test]
fn item_15_writer_record_offsets() {
    let lens = [98_304, 32_733, 32_761, 32_761, 16_384];
    let records: Vec<Vec<u8>> = lens.iter().map(|&n| vec![1u8; n]).collect();
    let (_, written) = write_from(0, &records);
    let offsets: Vec<u64> = written.iter().map(|w| w.offset).collect();
    assert_eq!(offsets, [0, 98_332, 131_072, 163_840, 196_608]);
}

fn write_recyclable(log_number: u32, start: u64, records: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let sink = FnSink(|b: &[u8]| {
            out.extend_from_slice(b);
            Ok::<(), Infallible>(())
        });
        let mut block = [0u8; BLOCK_SIZE];
        let options = WriteOptions::new()
            .format(Format::Recyclable { log_number })
            .start(start);
        let mut w = Writer::with_options(sink, &mut block, &options);
        for r in records {
            w.add_record(r).expect("ok");
        }
        w.flush().expect("ok");
    }
    out
}

#[test]
fn item_16_recyclable_writer() {
    assert_eq!(
        write_recyclable(123, 0, &[b"foo"]),
        hex("45b71d10 0300 05 7b000000 666f6f")
    );
    assert_eq!(
        write_recyclable(1, 0, &[b""]),
        hex("9e6ba5bd 0000 05 01000000")
    );
    // Exactly 11 bytes left: an empty recyclable FIRST (6), then LAST (8) in the next block.
    let tail = write_recyclable(7, 32_757, &[b"bar"]);
    assert_eq!(tail.len(), 11 + 14);
    assert_eq!(tail[4..11], [0, 0, 6, 7, 0, 0, 0]);
    assert_eq!(tail[11 + 4..11 + 11], [3, 0, 8, 7, 0, 0, 0]);
    assert_eq!(tail[22..], *b"bar");
    // 10 bytes left: a 10-byte zero trailer, then a recyclable FULL (5).
    let tail = write_recyclable(7, 32_758, &[b"bar"]);
    assert_eq!(tail[..10], [0; 10]);
    assert_eq!(tail[10 + 4..10 + 11], [3, 0, 5, 7, 0, 0, 0]);
    assert_eq!(tail.len(), 10 + 14);
}

// ---------------------------------------------------------------------------------------------
// Reader: framing

#[test]
fn item_19_empty_file() {
    // read_log asserts EOF, then EOF again.
    assert!(read_log(&[]).items.is_empty());
    assert!(read_log(&vector("empty_file")).items.is_empty());
}

#[test]
fn item_20_trailer_content_is_ignored() {
    let clean = vector("short_trailer");
    let expected = read_log(&clean).items;
    for junk in [[0xff, 0xff, 0xff], [1, 2, 3], [0, 0, 1]] {
        let mut log = clean.clone();
        log[32_765..32_768].copy_from_slice(&junk);
        assert_eq!(read_log(&log).items, expected, "trailer {junk:?}");
    }
}

#[test]
fn item_21_torn_header_at_end_is_silent() {
    let log = write_log(&["foo"]);
    for cut in 0..log.len() {
        let o = read_log(&log[..cut]);
        assert!(o.items.is_empty(), "cut {cut}: {:?}", o.items);
    }
}

#[test]
fn item_22_bad_length_in_a_full_block() {
    // LevelDB BadLength (leveldb_log_test.rs): 32768 dropped, "foo" read from the next block.
    let o = read_log(&vector("bad_length"));
    assert_eq!(
        o.drops(),
        [corruption(0, 32_768, CorruptionKind::BadRecordLength)]
    );
    assert_eq!(o.records(), [b"foo".to_vec()]);
    // A length one past the end of a block that is otherwise valid: the same.
    let mut log = write_log(&[b"foo".to_vec(), vec![2; 32_751], b"next".to_vec()]);
    assert_eq!(
        model::layout(&log)[1..],
        [chunk(10, FULL, 32_751), chunk(32_768, FULL, 4)]
    );
    increment_byte(&mut log, 10 + 4, 1); // 32751 → 32752
    let o = read_log(&log);
    assert_eq!(
        o.drops(),
        [corruption(10, 32_758, CorruptionKind::BadRecordLength)]
    );
    assert_eq!(o.records(), [b"foo".to_vec(), b"next".to_vec()]);
}

#[test]
fn item_23_length_past_end_of_file_is_silent() {
    assert!(read_log(&vector("bad_length_at_end")).items.is_empty());
    assert!(read_log(&vector("partial_last")).items.is_empty());
    // In a complete last block the same damage is a bad length (LevelDB's `eof_` is only set
    // by a short read): MissingLastIsIgnored's 32768-byte file with its FIRST's length + 1.
    let mut log = vector("missing_last");
    increment_byte(&mut log, 4, 1);
    assert_eq!(
        read_log(&log).drops(),
        [corruption(0, 32_768, CorruptionKind::BadRecordLength)]
    );
    // Any length that runs past the end of the data, in the last block.
    let mut log = write_log(&["foo", "bar"]);
    set_byte(&mut log, 10 + 4, 200);
    assert_eq!(read_log(&log).items, [record(0, 10, b"foo")]);
}

#[test]
fn item_24_zero_header_drops_rest_of_block_silently() {
    // "aaaa", a zero header, then a valid "lost" chunk in the same block.
    let log = [
        write_log(&["aaaa"]),
        vec![0; 7],
        model::chunk(FULL, b"lost"),
    ]
    .concat();
    assert_eq!(log, vector("zero_header_hides_later_record_in_block"));
    assert_eq!(read_log(&log).items, [record(0, 11, b"aaaa")]);

    // Preallocated zeros to the end of the block, a record in the next one.
    let mut log = write_log(&["aaaa"]);
    log.resize(BLOCK_SIZE, 0);
    log.extend(model::chunk(FULL, b"next"));
    assert_eq!(log, vector("preallocated_zero_tail_then_next_block"));
    assert_eq!(
        read_log(&log).items,
        [record(0, 11, b"aaaa"), record(32_768, 32_779, b"next")]
    );

    // 0 to 3 all-zero blocks: the end of the log.
    for blocks in 0..=3 {
        assert!(read_log(&vec![0; blocks * BLOCK_SIZE]).items.is_empty());
    }
    assert_eq!(vector("all_zero_3_blocks"), vec![0; 3 * BLOCK_SIZE]);

    // Zeros where a record's LAST should be (preallocated space, crash before the LAST was
    // written): unlike a plain end of file (item 40), LevelDB reports the FIRST's bytes.
    let mut log = vector("missing_last"); // FIRST(32761) filling block 0
    log.resize(BLOCK_SIZE + 100, 0);
    assert_eq!(
        read_log(&log).items,
        [drop(corruption(
            0,
            32_761,
            CorruptionKind::ErrorInMiddleOfRecord
        ))]
    );

    // A zero header in the middle of a record aborts it ("error in middle of record").
    let mut log = abc_log();
    log[32_768..32_775].fill(0); // A's LAST header
    let o = read_log(&log);
    assert_eq!(
        o.drops(),
        [
            corruption(0, 32_761, CorruptionKind::ErrorInMiddleOfRecord),
            corruption(65_536, 14_485, CorruptionKind::LastWithoutStart),
        ]
    );
    assert_eq!(o.records(), [b"c".to_vec()]);
}

/// A = 40000×'a' (FIRST 32761 @0, LAST 7239 @32768), B = 40000×'b' (FIRST 25515 @40014,
/// LAST 14485 @65536), C = "c" @80028.
fn abc_log() -> Vec<u8> {
    let records = [vec![b'a'; 40_000], vec![b'b'; 40_000], b"c".to_vec()];
    let log = write_log(&records);
    assert_eq!(
        model::layout(&log),
        [
            chunk(0, FIRST, 32_761),
            chunk(32_768, LAST, 7239),
            chunk(40_014, FIRST, 25_515),
            chunk(65_536, LAST, 14_485),
            chunk(80_028, FULL, 1),
        ]
    );
    log
}

#[test]
fn item_25_zero_type_with_a_length_is_an_unknown_type() {
    let mut log = write_log(&["foo", "bar"]);
    set_byte(&mut log, 6, 0);
    fix_checksum(&mut log, 0, 3);
    let o = read_log(&log);
    assert_eq!(
        o.items,
        [
            drop(corruption(0, 3, CorruptionKind::UnknownRecordType(0))),
            record(10, 20, b"bar")
        ]
    );
    assert_eq!(o.message(), "unknown record type 0");
}

#[test]
fn item_26_checksum_mismatch_drops_rest_of_block() {
    // foo, bar, a filler ending block 0 exactly, then "next" in block 1.
    let mut log = write_log(&[
        b"foo".to_vec(),
        b"bar".to_vec(),
        vec![9; 32_741],
        b"next".to_vec(),
    ]);
    assert_eq!(model::layout(&log).len(), 4);
    increment_byte(&mut log, 10, 1); // bar's checksum
    let o = read_log(&log);
    assert_eq!(
        o.items,
        [
            record(0, 10, b"foo"),
            drop(corruption(10, 32_758, CorruptionKind::ChecksumMismatch)),
            record(32_768, 32_779, b"next"),
        ]
    );
}

#[test]
fn item_27_order_of_checks() {
    // (2) length before (5) CRC: BadLength has a wrong CRC for the new length too, and is
    // reported as a bad length (item 22).
    // (4) zero type before (5) CRC: a zero header with garbage in its CRC field is skipped
    // silently, not reported as a checksum mismatch.
    let log = [
        write_log(&["aaaa"]),
        hex("deadbeef 0000 00"),
        model::chunk(FULL, b"lost"),
    ]
    .concat();
    assert_eq!(read_log(&log).items, [record(0, 11, b"aaaa")]);

    // (5) CRC before (6) the initial-offset filter. Derived from log_reader.cc: a damaged
    // chunk that starts before the initial offset still ends its block (silently: the drop
    // starts before the offset), so "b" @107 — after the offset — is lost too, and the
    // resync ends there, so c's LAST in the next block is reported.
    let mut log = write_log(&[
        vec![b'a'; 100],
        vec![b'b'; 100],
        vec![b'c'; 40_000],
        b"d".to_vec(),
    ]);
    assert_eq!(
        model::layout(&log)[..4],
        [
            chunk(0, FULL, 100),
            chunk(107, FULL, 100),
            chunk(214, FIRST, 32_547),
            chunk(32_768, LAST, 7453)
        ]
    );
    increment_byte(&mut log, 0, 1);
    assert_eq!(
        read_with(&log, &from(107)),
        [
            drop(corruption(32_768, 7453, CorruptionKind::LastWithoutStart)),
            record(40_228, 40_236, b"d")
        ]
    );

    // (6) the initial-offset filter before (7) the type dispatch: an unknown type whose
    // header lies before the offset is skipped without a report, even though its payload
    // lies after it.
    let mut log = write_log(&["foo", "bar"]);
    set_byte(&mut log, 6, 101);
    fix_checksum(&mut log, 0, 3);
    assert_eq!(read_with(&log, &from(1)), [record(10, 20, b"bar")]);
    assert_eq!(
        read_with(&log, &from(0))[0],
        drop(corruption(0, 3, CorruptionKind::UnknownRecordType(101)))
    );
}

#[test]
fn item_28_checksums_off() {
    let damaged = vector("checksum_mismatch");
    assert_eq!(
        read_with(&damaged, &ReadOptions::new().verify_checksums(false)),
        [record(0, 10, b"foo")]
    );
    let mut log = write_log(&["foo"]);
    set_byte(&mut log, 7, b'g');
    assert_eq!(
        read_with(&log, &ReadOptions::new().verify_checksums(false)),
        [record(0, 10, b"goo")]
    );
    assert_eq!(
        read_log(&log).drops(),
        [corruption(0, 10, CorruptionKind::ChecksumMismatch)]
    );
    // The framing checks stay on.
    assert_eq!(
        read_with(
            &vector("bad_length"),
            &ReadOptions::new().verify_checksums(false)
        ),
        read_log(&vector("bad_length")).items
    );
}

#[test]
fn item_29_short_reads_are_retried() {
    for name in [
        "fragmentation",
        "example_1000_97270_8000",
        "error_joins_records",
    ] {
        let log = vector(name);
        let expected = read_log(&log).items;
        for max in [1, 7, 100, 40_000] {
            let reader = Dribble::new(&log, max, 29);
            let source = IoSource::new(reader, Box::new([0u8; BLOCK_SIZE]));
            let o = read_source(source, &ReadOptions::default(), 1 << 20);
            assert!(o.errors.is_empty());
            assert_eq!(o.items, expected, "{name}, at most {max} bytes per read");
        }
    }
    // Skipping to an initial offset through short reads too.
    let log = vector("initial_offset_log");
    for offset in [1, 32_769, 65_537, 98_301, 131_072, 200_000] {
        let source = IoSource::new(Dribble::new(&log, 13, 5), Box::new([0u8; BLOCK_SIZE]));
        let o = read_source(source, &from(offset), 1 << 20);
        assert_eq!(
            o.items,
            read_with(&log, &from(offset)),
            "initial offset {offset}"
        );
    }
}

// Item 30 (never panic on any input) and item 31 (every prefix reads cleanly): properties.rs.

// ---------------------------------------------------------------------------------------------
// Reader: logical record assembly

#[test]
fn item_32_33_record_offsets() {
    // FULL: its header; FIRST..LAST: the FIRST's header.
    assert_eq!(read_log(&vector("readwrite")).offsets(), [0, 10, 20, 27]);
    assert_eq!(
        read_log(&vector("example_1000_97270_8000")).offsets(),
        [0, 1007, 98_304]
    );
    assert_eq!(
        read_log(&vector("marginal_trailer2")).offsets(),
        [0, 32_761]
    );
}

// Items 34–36: leveldb_log_test.rs (UnexpectedMiddleType, UnexpectedLastType,
// UnexpectedFullType, UnexpectedFirstType).

#[test]
fn item_37_empty_first_then_a_new_record_is_not_reported() {
    // FIRST(0) @32761, then a FULL: marginal_trailer2 with its LAST turned into a FULL.
    let mut log = vector("marginal_trailer2");
    set_byte(&mut log, 32_768 + 6, FULL);
    fix_checksum(&mut log, 32_768, 3);
    let o = read_log(&log);
    assert!(o.drops().is_empty(), "{:?}", o.drops());
    assert_eq!(o.records()[1], b"bar");
    assert_eq!(o.offsets(), [0, 32_768]);
    // The streaming reader abandons the empty FIRST explicitly, without a report.
    let mut reader = FragmentReader::new(SliceSource::new(&log));
    assert!(matches!(reader.next(), Ok(Some(Event::Fragment(_)))));
    assert!(matches!(reader.next(), Ok(Some(Event::Fragment(f))) if f.data.is_empty()));
    let Ok(Some(Event::Aborted(a))) = reader.next() else {
        panic!("expected Aborted")
    };
    assert_eq!((a.record_offset, a.delivered, a.report), (32_761, 0, None));

    // FIRST(0) @32761, then a FIRST: the record restarts there.
    let big = vec![b'x'; 40_000];
    let mut log = write_log(&[vec![7; 32_754], big.clone()]);
    assert_eq!(
        model::layout(&log)[1..3],
        [chunk(32_761, FIRST, 0), chunk(32_768, MIDDLE, 32_761)]
    );
    set_byte(&mut log, 32_768 + 6, FIRST);
    fix_checksum(&mut log, 32_768, 32_761);
    let o = read_log(&log);
    assert!(o.drops().is_empty(), "{:?}", o.drops());
    assert!(o.records()[1] == big);
    assert_eq!(o.offsets(), [0, 32_768]);
}

#[test]
fn item_38_bad_chunk_inside_a_record_is_never_joined() {
    // ErrorJoinsRecords: leveldb_log_test.rs. A bad length in A's LAST: the block is dropped,
    // A's FIRST is reported, B's orphaned LAST too; only C survives.
    let mut log = abc_log();
    set_byte(&mut log, 32_768 + 4, 0xff);
    set_byte(&mut log, 32_768 + 5, 0xff);
    let o = read_log(&log);
    assert_eq!(
        o.items,
        [
            drop(corruption(32_768, 32_768, CorruptionKind::BadRecordLength)),
            drop(corruption(0, 32_761, CorruptionKind::ErrorInMiddleOfRecord)),
            drop(corruption(65_536, 14_485, CorruptionKind::LastWithoutStart)),
            record(80_028, 80_036, b"c"),
        ]
    );
    // A checksum mismatch in A's LAST: the same, with that reason.
    let mut log = abc_log();
    increment_byte(&mut log, 32_768 + 8, 1);
    let o = read_log(&log);
    assert_eq!(
        o.drops()[..2],
        [
            corruption(32_768, 32_768, CorruptionKind::ChecksumMismatch),
            corruption(0, 32_761, CorruptionKind::ErrorInMiddleOfRecord),
        ]
    );
    assert_eq!(o.records(), [b"c".to_vec()]);
}

#[test]
fn item_39_unknown_type_inside_a_record() {
    let records = [vec![b'u'; 40_000], b"after".to_vec()];
    let mut log = write_log(&records);
    set_byte(&mut log, 32_768 + 6, 101);
    fix_checksum(&mut log, 32_768, 7239);
    let o = read_log(&log);
    // fragment + accumulated: 7239 + 32761, one report, reading goes on in the block.
    assert_eq!(
        o.items,
        [
            drop(corruption(
                0,
                40_000,
                CorruptionKind::UnknownRecordType(101)
            )),
            record(40_014, 40_026, b"after")
        ]
    );
}

#[test]
fn item_40_end_of_file_inside_a_record_is_silent() {
    let log = vector("multi_block_record_then_correct");
    for cut in [
        32_768, 32_775, 40_000, 65_536, 70_000, 98_304, 98_310, 98_331,
    ] {
        let o = read_log(&log[..cut]);
        assert!(o.items.is_empty(), "cut {cut}: {:?}", o.items);
    }
    assert!(read_log(&vector("missing_last")).items.is_empty());
}

// Item 41 (read error): leveldb_log_test.rs `read_error`.

#[test]
fn item_42_four_block_record() {
    let log = vector("multi_block_record_then_correct");
    assert_eq!(
        model::layout(&log),
        [
            chunk(0, FIRST, 32_761),
            chunk(32_768, MIDDLE, 32_761),
            chunk(65_536, MIDDLE, 32_761),
            chunk(98_304, LAST, 21),
            chunk(98_332, FULL, 7),
        ]
    );
    assert_eq!(read_log(&log).offsets(), [0, 98_332]);
}

// ---------------------------------------------------------------------------------------------
// Reader: offsets and seeking

#[test]
fn item_43_initial_block_choice() {
    let log = vector("initial_offset_log");
    let offsets = |items: &[Seen]| -> Vec<u64> {
        items
            .iter()
            .filter_map(|s| {
                if let Seen::Record { offset, .. } = s {
                    Some(*offset)
                } else {
                    None
                }
            })
            .collect()
    };
    // 32762 is searched in block 0 (LevelDB: `offset_in_block > kBlockSize - 6`): every chunk
    // there lies before it and is skipped, which ends the resync, so record 2's MIDDLE and LAST
    // are reported (derived from log_reader.cc).
    let items = read_with(&log, &from(32_762));
    assert_eq!(offsets(&items), [84_571, 84_579, 98_304]);
    assert_eq!(
        items[..2],
        [
            drop(corruption(
                32_768,
                32_761,
                CorruptionKind::MiddleWithoutStart
            )),
            drop(corruption(65_536, 19_028, CorruptionKind::LastWithoutStart)),
        ]
    );
    // 32763..=32767 start at block 1, resyncing silently.
    for offset in 32_763..=32_768 {
        let items = read_with(&log, &from(offset));
        assert_eq!(offsets(&items), [84_571, 84_579, 98_304], "{offset}");
        assert!(
            items.iter().all(|s| matches!(s, Seen::Record { .. })),
            "{offset}: {items:?}"
        );
    }
}

#[test]
fn item_44_45_46_skipped_chunks_and_drops_before_the_offset() {
    // A damaged chunk wholly before the initial offset, in a block that is not searched.
    let mut log = vector("initial_offset_log");
    increment_byte(&mut log, 10_007 + 100, 1); // record 1's payload
    assert_eq!(
        read_log(&log).drops()[0],
        corruption(10_007, 32_768 - 10_007, CorruptionKind::ChecksumMismatch)
    );
    let items = read_with(&log, &from(84_571));
    assert!(
        items.iter().all(|s| matches!(s, Seen::Record { .. })),
        "{items:?}"
    );
    assert_eq!(items.len(), 3);
    // In the searched block: the drop starts at 10007 < 20014 and is not reported, but it
    // swallows record 2's FIRST, whose MIDDLE and LAST are then reported (derived from
    // log_reader.cc: ReportDrop filters on where the drop starts).
    let items = read_with(&log, &from(20_014));
    assert_eq!(
        items[..2],
        [
            drop(corruption(
                32_768,
                32_761,
                CorruptionKind::MiddleWithoutStart
            )),
            drop(corruption(65_536, 19_028, CorruptionKind::LastWithoutStart)),
        ]
    );
    assert_eq!(items.len(), 5);
    // SkipIntoMultiRecord (leveldb_log_test.rs) covers the silent resync past MIDDLE and LAST.
}

#[test]
fn item_48_offset_and_end_after_a_trailer() {
    assert_eq!(
        read_log(&vector("short_trailer")).items,
        [
            record(0, 32_765, &big_string("foo", 32_758)),
            record(32_768, 32_775, b""),
            record(32_775, 32_785, b"bar"),
        ]
    );
}

#[test]
fn item_49_seek_to_each_record() {
    for name in [
        "initial_offset_log",
        "example_1000_97270_8000",
        "multi_block_record_then_correct",
        "short_trailer",
        "marginal_trailer2",
    ] {
        let log = vector(name);
        let all = read_log(&log).items;
        for (i, item) in all.iter().enumerate() {
            let Seen::Record { offset, .. } = item else {
                panic!("{name}: clean vector")
            };
            assert_eq!(
                read_with(&log, &from(*offset)),
                all[i..],
                "{name} from {offset}"
            );
        }
        assert!(read_with(&log, &from(log.len() as u64)).is_empty());
        assert!(read_with(&log, &from(log.len() as u64 + 1)).is_empty());
    }
}
