//! What the web crate's tests share: logs written by the core writer, and the LevelDB vectors.

#![allow(dead_code, clippy::unwrap_used)]

use std::path::PathBuf;

use logfmt_core::{BLOCK_SIZE, FnSink, Writer};

/// A log of `records`, written by the core writer.
pub(crate) fn log_of(records: impl IntoIterator<Item = Vec<u8>>) -> Vec<u8> {
    let mut log = Vec::new();
    let mut writer = Writer::new(
        FnSink(|bytes: &[u8]| {
            log.extend_from_slice(bytes);
            Ok::<(), std::convert::Infallible>(())
        }),
        [0u8; BLOCK_SIZE],
    );
    for record in records {
        writer.add_record(&record).unwrap();
    }
    writer.flush().unwrap();
    let _ = writer.into_parts();
    log
}

/// The folder of the LevelDB vectors, and the names of its logs, sorted.
pub(crate) fn vector_names() -> (PathBuf, Vec<String>) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/leveldb");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".log"))
        .collect();
    names.sort();
    (dir, names)
}
