//! Compressed records read back decoded by every build (with or without `zstd-c`, the feature
//! of the C encoder: decoding is always in Rust), between the plain records around them.

use logfmt_core::pack::{ZSTD, coded_header};
use logfmt_core::{FnSink, Writer};
use logfmt_std::{
    LogReaderOptions,
    advanced::{BLOCK_SIZE, Entry, LogReader},
};

/// A zstd frame of a pack body: `hello` and `world`, each after its length.
const PACK_FRAME: &[u8] = &[
    0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x0c, 0x61, 0x00, 0x00, 0x05, 0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x05,
    0x77, 0x6f, 0x72, 0x6c, 0x64,
];

/// A zstd frame (with its content checksum) of the record `put k v`, as RocksDB's WAL
/// compression writes one.
const RECORD_FRAME: &[u8] = &[
    0x28, 0xb5, 0x2f, 0xfd, 0x24, 0x07, 0x39, 0x00, 0x00, 0x70, 0x75, 0x74, 0x20, 0x6b, 0x20, 0x76,
    0x1b, 0x80, 0x96, 0x99,
];

/// A log laid out by the core writer: `before`, a compressed pack, `after`.
fn log_with_compressed_pack() -> Vec<u8> {
    let mut pack = coded_header(ZSTD, 2, 12).to_vec();
    pack.extend_from_slice(PACK_FRAME);
    write(|writer| {
        writer.add_record(b"before")?;
        writer.add_pack(&pack)?;
        writer.add_record(b"after")?;
        Ok(())
    })
}

/// A log as RocksDB writes with `wal_compression = kZSTD`: its compression record, then one
/// compressed record.
fn log_with_rocksdb_compression() -> Vec<u8> {
    write(|writer| {
        writer.add_compression_record(logfmt_core::parts::format::ZSTD_CODEC)?;
        writer.add_record(RECORD_FRAME)?;
        Ok(())
    })
}

type Sink = FnSink<Box<dyn FnMut(&[u8]) -> Result<(), std::convert::Infallible>>>;

fn write(
    lay_out: impl FnOnce(
        &mut Writer<Sink, &mut [u8; BLOCK_SIZE]>,
    ) -> Result<(), logfmt_core::WriteError<std::convert::Infallible>>,
) -> Vec<u8> {
    let log = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let out = log.clone();
    let sink: Sink = FnSink(Box::new(move |bytes: &[u8]| {
        out.borrow_mut().extend_from_slice(bytes);
        Ok(())
    }));
    let mut block = [0u8; BLOCK_SIZE];
    let mut writer = Writer::new(sink, &mut block);
    lay_out(&mut writer).expect("lays out");
    writer.flush().expect("flushes");
    drop(writer);
    log.take()
}

/// What a reader returns: records (with their offsets) and damage; reading goes on after each.
fn read(log: &[u8]) -> Vec<String> {
    let mut reader = LogReader::from_slice(log, &LogReaderOptions::new());
    let mut seen = Vec::new();
    loop {
        match reader.next() {
            Ok(None) => return seen,
            Ok(Some(Entry::Record(r))) => seen.push(format!(
                "{} {:?} {}",
                r.offset,
                r.index,
                String::from_utf8_lossy(r.data)
            )),
            Ok(Some(Entry::Damage(d))) => seen.push(format!("damage {d}")),
            Err(e) => panic!("{e}"),
            other => panic!("not expected here: {other:?}"),
        }
    }
}

#[test]
fn compressed_records_read_decoded() {
    assert_eq!(
        read(&log_with_compressed_pack()),
        [
            "0 None before",
            "13 Some(0) hello",
            "13 Some(1) world",
            "50 None after"
        ]
    );
    assert_eq!(read(&log_with_rocksdb_compression()), ["11 None put k v"]);
}
