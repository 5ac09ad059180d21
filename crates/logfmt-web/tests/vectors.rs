//! The inspector on the LevelDB vectors the repository ships: the counts and damage it reports
//! are those LevelDB's reader gives (EXPECTED.txt beside them).

use std::fs::File;
use std::path::PathBuf;

use logfmt_web::{Options, Report, inspect};

mod common;

fn vector(name: &str) -> Report {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/leveldb")
        .join(name);
    let file = File::open(&path).unwrap();
    let len = file.metadata().unwrap().len();
    inspect(file, len, &Options::default()).unwrap()
}

#[test]
fn a_checksum_mismatch_is_dropped_and_its_block_is_damaged() {
    let report = vector("checksum_mismatch.log");
    assert_eq!(report.records, 0);
    assert_eq!(report.corruption_count, 1);
    assert_eq!(report.corruptions[0].offset, 0);
    assert_eq!(report.corruptions[0].bytes, 10);
    assert_eq!(report.corruptions[0].reason, "checksum mismatch");
    assert_eq!(report.blocks, ["damaged"]);
}

#[test]
fn every_vector_reads() {
    let (_, names) = common::vector_names();
    for name in names {
        let report = vector(&name);
        println!(
            "{name}: {} records, {} payload, {} corruptions {:?}, tail {:?}, blocks {:?}",
            report.records,
            report.payload_bytes,
            report.corruption_count,
            report
                .corruptions
                .iter()
                .map(|c| (c.offset, c.bytes))
                .collect::<Vec<_>>(),
            report.tail,
            report.blocks.len()
        );
    }
}
