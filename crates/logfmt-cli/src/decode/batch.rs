//! A write-ahead log record (a `WriteBatch`) in text and in JSON, each built whole in a line
//! buffer.

use logfmt_std::content::{BatchError, Op, WriteBatch};

use crate::escape::{Scratch, hex_into, text_bytes};

/// Appends the decimal digits of `n`.
fn number(line: &mut Vec<u8>, n: impl itoa::Integer) {
    line.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

/// A write batch in text: `--- offset N; sequence S; count C`, then a line per operation,
/// then the error that ended them, if any.
pub(super) fn batch_text(
    line: &mut Vec<u8>,
    offset: u64,
    data: &[u8],
    hex: bool,
    timestamps: Option<&Sizes>,
    scratch: &mut Scratch,
) -> Option<BatchError> {
    line.extend_from_slice(b"--- offset ");
    number(line, offset);
    let mut error = None;
    match WriteBatch::new(data) {
        Ok(batch) => {
            line.extend_from_slice(b"; sequence ");
            number(line, batch.sequence());
            line.extend_from_slice(b"; count ");
            number(line, batch.count());
            line.push(b'\n');
            for op in batch.ops() {
                match op {
                    Ok(op) => op_text(line, &op, hex, size_of(timestamps, &op), scratch),
                    Err(e) => error = Some(e),
                }
            }
        }
        Err(e) => {
            line.push(b'\n');
            error = Some(e);
        }
    }
    error_line(line, error.as_ref());
    error
}

/// One operation in text: `  put 'key' 'value'`, with `cf N` after the name for a column
/// family other than 0.
fn op_text(line: &mut Vec<u8>, op: &Op<'_>, hex: bool, ts: usize, scratch: &mut Scratch) {
    line.extend_from_slice(b"  ");
    line.extend_from_slice(op.name().as_bytes());
    if let Some(cf) = op.cf()
        && cf != 0
    {
        line.extend_from_slice(b" cf ");
        number(line, cf);
    }
    let mut bytes = |line: &mut Vec<u8>, label: &[u8], data: &[u8]| {
        line.push(b' ');
        if !label.is_empty() {
            line.extend_from_slice(label);
            line.push(b' ');
        }
        text_bytes(line, data, hex, scratch);
    };
    match *op {
        Op::Put { key, value, .. }
        | Op::Merge { key, value, .. }
        | Op::BlobIndex {
            key, index: value, ..
        }
        | Op::PutEntity {
            key,
            columns: value,
            ..
        } => {
            key_text(line, key, ts, &mut bytes);
            bytes(line, b"", value);
        }
        Op::TimedPut {
            key,
            value,
            write_time,
            ..
        } => {
            bytes(line, b"", key);
            bytes(line, b"", value);
            line.extend_from_slice(b" write_time ");
            number(line, write_time);
        }
        Op::Delete { key, .. } | Op::SingleDelete { key, .. } => {
            key_text(line, key, ts, &mut bytes);
        }
        Op::DeleteRange { begin, end, .. } => {
            key_text(line, begin, ts, &mut bytes);
            key_text(line, end, ts, &mut bytes);
        }
        Op::LogData { blob } => bytes(line, b"", blob),
        Op::EndPrepare { xid } | Op::Rollback { xid } => bytes(line, b"xid", xid),
        Op::Commit { xid, timestamp } => {
            bytes(line, b"xid", xid);
            if let Some(ts) = timestamp {
                bytes(line, b"timestamp", ts);
            }
        }
        // Begin prepare, noop, and kinds added later: the name says it all.
        _ => {}
    }
    line.push(b'\n');
}

/// Timestamp sizes by column family (RocksDB's timestamp-size records).
pub(crate) type Sizes = std::collections::BTreeMap<u32, u16>;

/// The timestamp size of `op`'s user keys: that of its column family, if the log gave one.
fn size_of(timestamps: Option<&Sizes>, op: &Op<'_>) -> usize {
    timestamps
        .zip(op.cf())
        .and_then(|(sizes, cf)| sizes.get(&cf))
        .map_or(0, |&size| usize::from(size))
}

/// `key` split into the user key and its trailing timestamp of `ts` bytes (none if the key is
/// shorter).
fn split_timestamp(key: &[u8], ts: usize) -> (&[u8], Option<&[u8]>) {
    match key.len().checked_sub(ts) {
        Some(at) if ts > 0 => (&key[..at], Some(&key[at..])),
        _ => (key, None),
    }
}

/// A key in text: the user key, then `ts 'timestamp'` where the key carries one.
#[inline(always)]
fn key_text(
    line: &mut Vec<u8>,
    key: &[u8],
    ts: usize,
    bytes: &mut impl FnMut(&mut Vec<u8>, &[u8], &[u8]),
) {
    let (user, timestamp) = split_timestamp(key, ts);
    bytes(line, b"", user);
    if let Some(timestamp) = timestamp {
        bytes(line, b"ts", timestamp);
    }
}

/// Appends `text` as a JSON string, escaped as serde_json escapes it.
fn json_string(line: &mut Vec<u8>, text: &str) {
    // Writing to memory cannot fail; a str always serializes.
    let _ = serde_json::to_writer(&mut *line, text);
}

/// Appends `"name": "HEX"` after a comma.
#[inline]
fn json_hex(line: &mut Vec<u8>, name: &[u8], data: &[u8]) {
    line.extend_from_slice(b", \"");
    line.extend_from_slice(name);
    line.extend_from_slice(b"\": \"");
    hex_into(line, data);
    line.push(b'"');
}

/// A write batch in JSON, one line, in the layout of every `--output json` line
/// (`write_json_line`): `offset`, `sequence`, `count`, `ops`, then `error` if it could not be
/// decoded in full and `file` for several files. Written by hand for speed; the tests check it
/// against the same document serialized by serde.
pub(super) fn batch_json(
    line: &mut Vec<u8>,
    offset: u64,
    data: &[u8],
    timestamps: Option<&Sizes>,
    file: Option<&str>,
) -> Option<BatchError> {
    batch_line(line, offset, data, file, |line, batch| {
        ops_json(line, batch.ops(), |line, op| {
            op_json(line, &op, size_of(timestamps, &op));
        })
    })
}

/// A batch's JSON line around its operations, which `ops` writes (returning the error that
/// stopped them, if any): `offset`, `sequence`, `count`, `ops`, then `error` and `file`.
fn batch_line(
    line: &mut Vec<u8>,
    offset: u64,
    data: &[u8],
    file: Option<&str>,
    ops: impl FnOnce(&mut Vec<u8>, &WriteBatch<'_>) -> Option<BatchError>,
) -> Option<BatchError> {
    line.extend_from_slice(b"{\"offset\": ");
    number(line, offset);
    let error = match WriteBatch::new(data) {
        Ok(batch) => {
            line.extend_from_slice(b", \"sequence\": ");
            number(line, batch.sequence());
            line.extend_from_slice(b", \"count\": ");
            number(line, batch.count());
            line.extend_from_slice(b", \"ops\": [");
            let error = ops(line, &batch);
            line.push(b']');
            error
        }
        Err(e) => {
            line.extend_from_slice(b", \"sequence\": null, \"count\": null, \"ops\": []");
            Some(e)
        }
    };
    if let Some(e) = &error {
        line.extend_from_slice(b", \"error\": ");
        json_string(line, &e.to_string());
    }
    if let Some(file) = file {
        line.extend_from_slice(b", \"file\": ");
        json_string(line, file);
    }
    line.extend_from_slice(b"}\n");
    error
}

/// The operations `ops` gives, each written by `write`, comma-separated; the last error met
/// (the operations after an error are still written where the batch gives them).
fn ops_json<O>(
    line: &mut Vec<u8>,
    ops: impl Iterator<Item = Result<O, BatchError>>,
    mut write: impl FnMut(&mut Vec<u8>, O),
) -> Option<BatchError> {
    let mut error = None;
    let mut first = true;
    for op in ops {
        match op {
            Ok(op) => {
                if !first {
                    line.extend_from_slice(b", ");
                }
                first = false;
                write(line, op);
            }
            Err(e) => error = Some(e),
        }
    }
    error
}

/// One operation in JSON: `op`, then `cf`, `key` and `value` (or `end_key`) where the
/// operation has them; the markers' `xid`, a commit's `timestamp`, log data's `blob` and a
/// timed put's `write_time` after them (the order logfmt-std's `serde` feature gives an `Op`).
fn op_json(line: &mut Vec<u8>, op: &Op<'_>, ts: usize) {
    line.extend_from_slice(b"{\"op\": \"");
    line.extend_from_slice(op.name().as_bytes());
    line.push(b'"');
    if let Some(cf) = op.cf() {
        line.extend_from_slice(b", \"cf\": ");
        number(line, cf);
    }
    if let Some(key) = op.key() {
        let (user, timestamp) = split_timestamp(key, ts);
        json_hex(line, b"key", user);
        if let Some(timestamp) = timestamp {
            json_hex(line, b"timestamp", timestamp);
        }
    }
    match *op {
        Op::DeleteRange { end, .. } => json_hex(line, b"end_key", end),
        Op::TimedPut {
            value, write_time, ..
        } => {
            json_hex(line, b"value", value);
            line.extend_from_slice(b", \"write_time\": ");
            number(line, write_time);
        }
        Op::LogData { blob } => json_hex(line, b"blob", blob),
        Op::EndPrepare { xid } | Op::Rollback { xid } => json_hex(line, b"xid", xid),
        Op::Commit { xid, timestamp } => {
            json_hex(line, b"xid", xid);
            if let Some(ts) = timestamp {
                json_hex(line, b"timestamp", ts);
            }
        }
        _ => {
            if let Some(value) = op.value() {
                json_hex(line, b"value", value);
            }
        }
    }
    line.push(b'}');
}

#[cfg(test)]
/// A write batch in JSON, as serde serializes it (its operations as logfmt-std's `serde`
/// feature serializes an [`Op`]): the document [`batch_json`] writes by hand (the tests check
/// the two agree byte for byte).
#[derive(serde::Serialize)]
pub(crate) struct BatchJson<'a> {
    /// The offset of the record's first chunk.
    pub(super) offset: u64,
    /// The batch's sequence number (null if the record is too short for a header).
    pub(super) sequence: Option<u64>,
    /// The operations the header counts.
    pub(super) count: Option<u32>,
    /// The operations decoded, in order.
    pub(super) ops: Vec<Op<'a>>,
    /// What kept the rest of the record from decoding, if anything.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) error: Option<String>,
    /// The file, when several are printed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) file: Option<&'a str>,
}

#[cfg(test)]
/// The JSON document of the write batch `data` at `offset` (`file` names it when several
/// files are printed).
pub(crate) fn batch_document<'a>(
    offset: u64,
    data: &'a [u8],
    file: Option<&'a str>,
) -> BatchJson<'a> {
    let mut doc = BatchJson {
        offset,
        sequence: None,
        count: None,
        ops: Vec::new(),
        error: None,
        file,
    };
    match WriteBatch::new(data) {
        Ok(batch) => {
            doc.sequence = Some(batch.sequence());
            doc.count = Some(batch.count());
            for op in batch.ops() {
                match op {
                    Ok(op) => doc.ops.push(op),
                    Err(e) => doc.error = Some(e.to_string()),
                }
            }
        }
        Err(e) => doc.error = Some(e.to_string()),
    }
    doc
}

/// A Pebble batch in text, as [`batch_text`] prints a RocksDB one: `--- offset N; sequence S;
/// count C`, a line per operation (`  range_key_set 'start' 'value'`), then the error that
/// ended them, if any.
pub(super) fn pebble_text(
    line: &mut Vec<u8>,
    offset: u64,
    data: &[u8],
    hex: bool,
    scratch: &mut Scratch,
) -> Option<BatchError> {
    line.extend_from_slice(b"--- offset ");
    number(line, offset);
    let mut error = None;
    match WriteBatch::new(data) {
        Ok(batch) => {
            line.extend_from_slice(b"; sequence ");
            number(line, batch.sequence());
            line.extend_from_slice(b"; count ");
            number(line, batch.count());
            line.push(b'\n');
            for op in batch.pebble_ops() {
                match op {
                    Ok(op) => {
                        line.extend_from_slice(b"  ");
                        line.extend_from_slice(op.name().as_bytes());
                        for data in std::iter::once(op.key).chain(op.value) {
                            line.push(b' ');
                            text_bytes(line, data, hex, scratch);
                        }
                        line.push(b'\n');
                    }
                    Err(e) => error = Some(e),
                }
            }
        }
        Err(e) => {
            line.push(b'\n');
            error = Some(e);
        }
    }
    error_line(line, error.as_ref());
    error
}

/// A Pebble batch in JSON, one line, in [`batch_json`]'s layout: each operation `op`, `kind`
/// (Pebble's key kind), `key` and `value` where it has one.
pub(super) fn pebble_json(
    line: &mut Vec<u8>,
    offset: u64,
    data: &[u8],
    file: Option<&str>,
) -> Option<BatchError> {
    batch_line(line, offset, data, file, |line, batch| {
        ops_json(line, batch.pebble_ops(), |line, op| {
            line.extend_from_slice(b"{\"op\": \"");
            line.extend_from_slice(op.name().as_bytes());
            line.extend_from_slice(b"\", \"kind\": ");
            number(line, op.kind);
            json_hex(line, b"key", op.key);
            if let Some(value) = op.value {
                json_hex(line, b"value", value);
            }
            line.push(b'}');
        })
    })
}

/// The line that ends a batch's text with the error that stopped its decoding, if one did.
fn error_line(line: &mut Vec<u8>, error: Option<&impl std::fmt::Display>) {
    if let Some(e) = error {
        line.extend_from_slice(b"  error: ");
        line.extend_from_slice(e.to_string().as_bytes());
        line.push(b'\n');
    }
}
