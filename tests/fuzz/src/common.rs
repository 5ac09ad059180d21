//! What the targets share: owned views of what the readers return, the reading loops (with
//! their own protocol checks), sources that read short or grow, and invariants of any output.
#![allow(dead_code, unreachable_pub)]

use std::convert::Infallible;

use logfmt_core::{
    BLOCK_SIZE, BlockSource, LogEnd, ReadOptions, Reader,
    parts::{Corruption, Event, FragmentKind, FragmentReader, Item, Oversized},
};

/// The smallest chunk header (legacy).
pub const MIN_HEADER: u64 = 7;

/// What a reader returned, owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// A record: offset of its first chunk, end of its last chunk, payload.
    Record {
        offset: u64,
        end: u64,
        data: Vec<u8>,
    },
    /// A drop report.
    Drop(Corruption),
    /// A valid record too large for the reader's buffer.
    Oversized(Oversized),
}

/// Everything one reading of a log returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub items: Vec<Seen>,
    /// [`Reader::end`] / [`FragmentReader::end`] once `next` returned `None`.
    pub end: Option<LogEnd>,
    /// Read errors passed on by the source.
    pub errors: usize,
}

/// Reads everything from `source` with a [`Reader`] whose buffer has `scratch` bytes; checks
/// on the way that `last_record_offset`/`last_record_end` follow each record and that the end
/// is sticky.
pub fn read_records<S: BlockSource>(source: S, options: &ReadOptions, scratch: usize) -> Outcome {
    let mut buffer = vec![0u8; scratch];
    // As LevelDB reads: packs and the compression record are chunks of an unknown type (the
    // model has neither).
    let options = options.clone().read_packs(false).wal_compression(false);
    let mut reader = Reader::with_options(source, &mut buffer, &options);
    let mut items = Vec::new();
    let mut errors = 0;
    loop {
        let seen = match reader.next() {
            Ok(None) => break,
            Ok(Some(Item::Record(r))) => Seen::Record {
                offset: r.offset,
                end: r.end,
                data: r.data.to_vec(),
            },
            Ok(Some(Item::Corruption(c))) => Seen::Drop(c),
            Ok(Some(Item::Oversized(o))) => Seen::Oversized(o),
            Ok(Some(Item::Coded(pack))) => panic!("a pack read at {}", pack.offset),
            Err(_) => {
                errors += 1;
                assert!(errors <= 4, "the reader keeps failing");
                continue;
            }
            Ok(Some(other)) => panic!("not expected here: {other:?}"),
        };
        match &seen {
            Seen::Record { offset, end, .. } => {
                assert_eq!(reader.last_record_offset(), *offset, "LastRecordOffset");
                assert_eq!(reader.last_record_end(), *end, "LastRecordEnd");
            }
            Seen::Oversized(o) => {
                assert_eq!(reader.last_record_offset(), o.offset, "LastRecordOffset");
                assert_eq!(reader.last_record_end(), o.end, "LastRecordEnd");
            }
            Seen::Drop(_) => {}
        }
        items.push(seen);
    }
    let end = reader.end();
    assert!(
        matches!(reader.next(), Ok(None)),
        "the end of the log is sticky"
    );
    Outcome { items, end, errors }
}

/// Reads everything from `source` with a [`FragmentReader`], assembling fragments into the
/// items a [`Reader`] with a `scratch`-byte buffer returns (a record of several fragments
/// longer than `scratch` is [`Seen::Oversized`]). Checks the streaming protocol: a record
/// starts with `Full`/`First`, `Middle`/`Last` only continue one, fragments of a record share
/// its offset and follow each other in the file, `Aborted` ends exactly a record in progress
/// and counts the bytes delivered for it, and no record is left open at the end.
pub fn read_fragments<S: BlockSource>(source: S, options: &ReadOptions, scratch: usize) -> Outcome {
    // As LevelDB reads: packs and the compression record are of an unknown type (as in
    // `read_records`).
    let options = options.clone().read_packs(false).wal_compression(false);
    let mut reader = FragmentReader::with_options(source, &options);
    let mut items = Vec::new();
    let mut errors = 0;
    // The record in progress: offset, end of its last chunk, data, fragment count.
    let mut current: Option<(u64, u64, Vec<u8>, usize)> = None;
    // File offset past the last fragment or skip: they come in file order, never overlapping.
    let mut frontier = 0u64;
    loop {
        let before = items.len();
        match reader.next() {
            Ok(None) => break,
            Ok(Some(Event::Fragment(f))) => {
                assert!(f.chunk_offset < f.end, "{f:?}");
                assert!(f.chunk_offset >= frontier, "a fragment behind: {f:?}");
                frontier = f.end;
                assert!(
                    f.end - f.chunk_offset >= MIN_HEADER + f.data.len() as u64,
                    "{f:?}"
                );
                assert_eq!(
                    f.chunk_offset / BLOCK_SIZE as u64,
                    (f.end - 1) / BLOCK_SIZE as u64,
                    "a chunk never crosses a block: {f:?}"
                );
                match f.kind {
                    FragmentKind::Full => {
                        assert!(current.is_none(), "FULL inside a record: {f:?}");
                        assert_eq!(f.chunk_offset, f.record_offset);
                        items.push(Seen::Record {
                            offset: f.record_offset,
                            end: f.end,
                            data: f.data.to_vec(),
                        });
                    }
                    FragmentKind::First => {
                        assert!(current.is_none(), "FIRST inside a record: {f:?}");
                        assert_eq!(f.chunk_offset, f.record_offset);
                        current = Some((f.record_offset, f.end, f.data.to_vec(), 1));
                    }
                    FragmentKind::Middle | FragmentKind::Last => {
                        let (offset, end, data, count) =
                            current.as_mut().expect("MIDDLE/LAST without a record");
                        assert_eq!(*offset, f.record_offset);
                        assert!(f.chunk_offset >= *end, "fragments in file order: {f:?}");
                        *end = f.end;
                        data.extend_from_slice(f.data);
                        *count += 1;
                        if f.kind == FragmentKind::Last {
                            let (offset, end, data, _) =
                                current.take().expect("a record in progress");
                            let len = data.len() as u64;
                            items.push(if len > scratch as u64 {
                                Seen::Oversized(Oversized::new(offset, end, len, false))
                            } else {
                                Seen::Record { offset, end, data }
                            });
                        }
                    }
                }
            }
            Ok(Some(Event::Aborted(a))) => {
                let (offset, _, data, _) = current.take().expect("Aborted without a record");
                assert_eq!(a.record_offset, offset);
                assert_eq!(a.delivered, data.len() as u64);
                if let Some(report) = a.report {
                    items.push(Seen::Drop(report));
                }
            }
            Ok(Some(Event::Corruption(c))) => items.push(Seen::Drop(c)),
            Ok(Some(Event::Skipped(skip))) => {
                assert!(skip.len > 0, "an empty skip: {skip:?}");
                assert!(skip.offset >= frontier, "a skip behind: {skip:?}");
                assert!(skip.end() <= reader.position(), "a skip ahead: {skip:?}");
                frontier = skip.end();
            }
            Err(_) => {
                errors += 1;
                assert!(errors <= 4, "the reader keeps failing");
            }
            Ok(Some(other)) => panic!("not expected here: {other:?}"),
        }
        if let Some(Seen::Record { offset, .. } | Seen::Oversized(Oversized { offset, .. })) =
            items.get(before)
        {
            assert_eq!(reader.last_record_offset(), *offset, "LastRecordOffset");
        }
    }
    assert!(current.is_none(), "a record left open at the end");
    let end = reader.end();
    assert!(
        matches!(reader.next(), Ok(None)),
        "the end of the log is sticky"
    );
    Outcome { items, end, errors }
}

/// Invariants of whatever a reader returns from any `len`-byte input read from
/// `initial_offset`: records and oversized records at increasing offsets at or after the
/// initial offset, inside the input, framed by at least one header per chunk; drops inside the
/// input; no byte both returned and dropped, nor dropped twice.
pub fn assert_sane(items: &[Seen], len: u64, initial_offset: u64) {
    let mut last: Option<u64> = None;
    let mut accounted = 0u64;
    for item in items {
        match item {
            Seen::Record { offset, end, data } => {
                check_span(*offset, *end, data.len() as u64, len, initial_offset, last);
                last = Some(*offset);
                accounted += data.len() as u64;
            }
            Seen::Oversized(o) => {
                check_span(o.offset, o.end, o.len, len, initial_offset, last);
                last = Some(o.offset);
                accounted += o.len;
            }
            Seen::Drop(c) => {
                assert!(c.offset < len, "a drop outside the input: {c:?}");
                assert!(c.bytes <= len, "{c:?}");
                accounted += c.bytes;
            }
        }
    }
    assert!(
        accounted <= len,
        "bytes returned and dropped ({accounted}) exceed the input ({len})"
    );
}

fn check_span(offset: u64, end: u64, data: u64, len: u64, initial: u64, last: Option<u64>) {
    assert!(
        offset >= initial,
        "record at {offset} before the initial offset {initial}"
    );
    assert!(
        last.is_none_or(|l| offset > l),
        "record offsets strictly increase ({last:?}, then {offset})"
    );
    assert!(end <= len, "record end {end} past the input ({len})");
    assert!(
        end >= offset + MIN_HEADER + data,
        "record at {offset}..{end} too short for {data} bytes"
    );
}

/// An [`embedded_io::Read`] over a slice that hands out 1..=`max` bytes per call (sizes from
/// a xorshift generator): short reads everywhere.
#[derive(Debug)]
pub struct Dribble<'a> {
    data: &'a [u8],
    max: usize,
    state: u64,
}

impl<'a> Dribble<'a> {
    pub fn new(data: &'a [u8], max: usize, seed: u64) -> Self {
        Self {
            data,
            max: max.max(1),
            state: seed | 1,
        }
    }
}

impl embedded_io::ErrorType for Dribble<'_> {
    type Error = Infallible;
}

impl embedded_io::Read for Dribble<'_> {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Infallible> {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        let n = (1 + (self.state % self.max as u64) as usize)
            .min(buf.len())
            .min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

/// A file that grows: reads see only the first `visible` bytes (`Ok(0)` at that point, like a
/// file being appended to), and `visible` can be raised between reads.
#[derive(Debug)]
pub struct Growing<'a> {
    data: &'a [u8],
    pos: usize,
    pub visible: usize,
}

impl<'a> Growing<'a> {
    pub fn new(data: &'a [u8], visible: usize) -> Self {
        Self {
            data,
            pos: 0,
            visible: visible.min(data.len()),
        }
    }
}

impl embedded_io::ErrorType for Growing<'_> {
    type Error = Infallible;
}

impl embedded_io::Read for Growing<'_> {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Infallible> {
        let end = self.visible.min(self.data.len());
        let n = buf.len().min(end.saturating_sub(self.pos));
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// A small deterministic generator (splitmix64), for sizes and steps derived from a seed byte.
#[derive(Debug, Clone)]
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform-ish in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

/// Reads a little-endian integer of `N` bytes at `at`, zero-padded past the end of `data`.
pub fn le<const N: usize>(data: &[u8], at: usize) -> [u8; N] {
    let mut out = [0u8; N];
    for (i, b) in out.iter_mut().enumerate() {
        *b = data.get(at + i).copied().unwrap_or(0);
    }
    out
}

/// Deterministic record content: an 8-byte unique id (so that a join or a duplicate is
/// visible), then a pattern.
pub fn record_content(id: u64, len: usize) -> Vec<u8> {
    let mut out: Vec<u8> = id.to_le_bytes().into_iter().take(len).collect();
    let mut x = id.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    while out.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.push(x as u8);
    }
    out
}
