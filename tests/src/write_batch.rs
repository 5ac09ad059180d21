//! LevelDB's and RocksDB's `WriteBatch` (the payload of their write-ahead log records), for
//! the interop tests: sequence u64, count u32, then each operation: tag 1 (put) with a
//! varint32-prefixed key and value, or tag 0 (delete) with a key.

use std::collections::BTreeMap;

/// One operation of a write batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// A put of a key and a value.
    Put(Vec<u8>, Vec<u8>),
    /// A delete of a key.
    Delete(Vec<u8>),
}

/// A decoded `WriteBatch`: its first sequence number and its operations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    /// The first operation's sequence number.
    pub sequence: u64,
    /// The operations.
    pub ops: Vec<Op>,
}

/// Appends `v` as a varint32.
pub fn put_varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Takes a varint32 off the front of `data`.
pub fn get_varint(data: &mut &[u8]) -> Option<u32> {
    let mut v = 0u32;
    for shift in (0..35).step_by(7) {
        let (&byte, rest) = data.split_first()?;
        *data = rest;
        v |= u32::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// Takes a varint32-prefixed slice off the front of `data`.
pub fn get_slice<'a>(data: &mut &'a [u8]) -> Option<&'a [u8]> {
    let len = get_varint(data)? as usize;
    if data.len() < len {
        return None;
    }
    let (slice, rest) = data.split_at(len);
    *data = rest;
    Some(slice)
}

/// Encodes `batch`.
pub fn encode(batch: &Batch) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&batch.sequence.to_le_bytes());
    out.extend_from_slice(&(batch.ops.len() as u32).to_le_bytes());
    for op in &batch.ops {
        match op {
            Op::Put(k, v) => {
                out.push(1);
                put_varint(&mut out, k.len() as u32);
                out.extend_from_slice(k);
                put_varint(&mut out, v.len() as u32);
                out.extend_from_slice(v);
            }
            Op::Delete(k) => {
                out.push(0);
                put_varint(&mut out, k.len() as u32);
                out.extend_from_slice(k);
            }
        }
    }
    out
}

/// Decodes a record; `None` if it is not a whole `WriteBatch`.
pub fn decode(record: &[u8]) -> Option<Batch> {
    let (sequence, rest) = record.split_first_chunk::<8>()?;
    let (count, mut data) = rest.split_first_chunk::<4>()?;
    let count = u32::from_le_bytes(*count);
    let mut ops = Vec::new();
    for _ in 0..count {
        let (&tag, rest) = data.split_first()?;
        data = rest;
        let key = get_slice(&mut data)?.to_vec();
        ops.push(match tag {
            1 => Op::Put(key, get_slice(&mut data)?.to_vec()),
            0 => Op::Delete(key),
            _ => return None,
        });
    }
    data.is_empty().then_some(Batch {
        sequence: u64::from_le_bytes(*sequence),
        ops,
    })
}

/// `batches` numbered from sequence `first`, as LevelDB numbers them.
pub fn numbered(batches: &[Vec<Op>], first: u64) -> Vec<Batch> {
    let mut sequence = first;
    batches
        .iter()
        .map(|ops| {
            let batch = Batch {
                sequence,
                ops: ops.clone(),
            };
            sequence += ops.len() as u64;
            batch
        })
        .collect()
}

/// The database after `batches`, in key order.
pub fn apply(state: &mut BTreeMap<Vec<u8>, Vec<u8>>, batches: &[Batch]) {
    for batch in batches {
        for op in &batch.ops {
            match op {
                Op::Put(k, v) => state.insert(k.clone(), v.clone()),
                Op::Delete(k) => state.remove(k),
            };
        }
    }
}
