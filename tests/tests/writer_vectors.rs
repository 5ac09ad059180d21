//! Writer byte-exactness against the real LevelDB vectors: every undamaged vector is read back
//! and written again with `logfmt_core::Writer` (and with the independent model); both must
//! reproduce the file byte for byte.
//!
//! A vector counts as undamaged when LevelDB's reader dropped nothing from it (`EXPECTED.txt`)
//! and the model, fed the records, predicts exactly its size. The set so found is itself
//! asserted, so a vector cannot drop out of the comparison unnoticed.

use logfmt_tests::{data_dir, model, read_log, vector, write_from, write_log};

/// (name, size, whether LevelDB reported a drop) for every line of `EXPECTED.txt`.
fn expected_lines() -> Vec<(String, usize, bool)> {
    let text = std::fs::read_to_string(data_dir().join("leveldb/EXPECTED.txt")).expect("read");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|line| {
            let mut words = line.split_whitespace();
            let name = words.next().expect("name").to_string();
            let size = words
                .next()
                .and_then(|w| w.strip_prefix("size="))
                .and_then(|s| s.parse().ok())
                .expect("size=N");
            (name, size, line.contains("drop("))
        })
        .collect()
}

const UNDAMAGED: [&str; 12] = [
    "readwrite",
    "empty_file",
    "fragmentation",
    "example_1000_97270_8000",
    "marginal_trailer",
    "marginal_trailer2",
    "short_trailer",
    "aligned_eof",
    "exact_block_fill",
    "multi_block_record_then_correct",
    "open_for_append",
    "initial_offset_log",
];

#[test]
fn undamaged_vectors_are_rewritten_byte_for_byte() {
    let lines = expected_lines();
    assert_eq!(lines.len(), 27);
    let mut undamaged = Vec::new();
    for (name, size, dropped) in lines {
        let log = vector(&name);
        assert_eq!(log.len(), size, "{name}");
        let o = read_log(&log);
        assert_eq!(
            !o.drops().is_empty(),
            dropped,
            "{name}: drops as LevelDB reported them"
        );
        if dropped {
            continue;
        }
        let records = o.records();
        let predicted = model::write(&records, 0);
        if predicted.len() != size {
            continue; // zero-filled or torn: not a log a writer produces
        }
        assert!(
            predicted == log,
            "{name}: model output differs from LevelDB's file"
        );
        let (rewritten, written) = write_from(0, &records);
        assert!(
            rewritten == log,
            "{name}: Writer output differs from LevelDB's file"
        );
        assert_eq!(
            written.iter().map(|w| w.offset).collect::<Vec<_>>(),
            o.offsets(),
            "{name}: Written offsets"
        );
        undamaged.push(name);
    }
    undamaged.sort();
    let mut want = UNDAMAGED.map(String::from).to_vec();
    want.sort();
    assert_eq!(undamaged, want);
}

#[test]
fn open_for_append_is_written_as_hello_then_resumed_at_12() {
    let log = vector("open_for_append");
    let (hello, first) = write_from(0, &["hello"]);
    assert_eq!(hello.len(), 12);
    let (world, second) = write_from(hello.len() as u64, &["world"]);
    assert_eq!(
        (first[0].offset, second[0].offset, second[0].end),
        (0, 12, 24)
    );
    assert_eq!([hello, world].concat(), log);
}

#[test]
fn every_split_point_of_a_vector_resumes_to_the_same_bytes() {
    // Writing records 0..k, then resuming at the log's length with k..n, gives the same file.
    for name in UNDAMAGED {
        let log = vector(name);
        let o = read_log(&log);
        let records = o.records();
        for k in 0..=records.len() {
            let (head, _) = write_from(0, &records[..k]);
            let (tail, _) = write_from(head.len() as u64, &records[k..]);
            assert!(
                [head, tail].concat() == log,
                "{name}: resumed after {k} records"
            );
        }
    }
    assert!(write_log(&[] as &[&[u8]]).is_empty());
}
