//! FORMAT.md §5's reader rules, checked: a reader written from the document's numbered rules
//! alone (F1–F12; nothing of the library's readers or parsers, CRC-32C from the `crc32c`
//! crate) reads the flash golden images of `tests/data/format-freeze/` and images the
//! library's writers leave after power cuts and refused programs, and must return exactly the
//! records (region offset, bytes, order) and damage reports (offset, byte count) of the
//! library's small-RAM `WordReader`, and the records of its block reader (`FlashSource`).

use logfmt_core::flash::{
    FlashConfig, FlashItem, FlashSource, FlashWriter, MockFlash, PowerCut, SecondProgram,
    WordReader, WordWriter,
};
use logfmt_core::parts::Item;
use logfmt_core::{ReadOptions, Reader};

const BLOCK: usize = 32 * 1024;
const HEADER: usize = 7;
const MARKER: u8 = 0xB1;
const RING: u8 = 0xB0;
const CURSOR: u8 = 0xB2;

// ------------------------------------------------------- the reader FORMAT.md describes

/// What a reader returns: a record (or pack) at a region offset, or damage (offset, bytes).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Out {
    Record(u32, Vec<u8>),
    Damage(u32, u32),
}

fn mask(crc: u32) -> u32 {
    (crc.rotate_right(15)).wrapping_add(0xa282_ead8)
}

fn le32(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

/// F2: the chunk at `p` of block `b`.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Chunk {
    Good(u8, usize),
    Erased,
    /// Not well-formed; `short`: it looks cut short.
    Bad(bool),
}

fn chunk(b: &[u8], p: usize, e: u8) -> Chunk {
    let h = &b[p..p + HEADER];
    if h.iter().all(|&x| x == e) {
        return Chunk::Erased;
    }
    let (len, kind) = (usize::from(u16::from_le_bytes([h[4], h[5]])), h[6]);
    if p + HEADER + len > BLOCK {
        return Chunk::Bad(true);
    }
    let payload = &b[p + HEADER..p + HEADER + len];
    if mask(crc32c::crc32c_append(crc32c::crc32c(&[kind]), payload)) == le32(h) {
        return Chunk::Good(kind, len);
    }
    Chunk::Bad(*payload.last().unwrap_or(&kind) == e)
}

/// F4: a ring header, if intact: (lap, records, blocks, group, W).
type RingHeader = (u32, u32, u32, u32, usize);

fn ring_header(b: &[u8], e: u8) -> Option<RingHeader> {
    if chunk(b, 0, e) != Chunk::Good(RING, 12) {
        return None;
    }
    let (blocks, group, flags) = (u16::from_le_bytes([b[15], b[16]]), b[17], b[18]);
    let ok = blocks > 0 && group > 0 && flags & 0x0F <= 5 && flags & 0xE0 == 0;
    let (lap, records, w) = (le32(&b[7..]), le32(&b[11..]), 1 << (flags & 0x0F));
    ok.then_some((lap, records, blocks.into(), group.into(), w))
}

/// F5: the blocks to read, in order, and whether each holds part of the log; and the
/// records begun before the first (a ring's).
fn ring_order(img: &[u8], e: u8) -> (Vec<(usize, bool)>, u32) {
    let headers: Vec<_> = img.chunks(BLOCK).map(|b| ring_header(b, e)).collect();
    let newer = |a: u32, b: u32| (a.wrapping_sub(b) as i32) > 0;
    let mut head: Option<(usize, RingHeader)> = None;
    for (i, h) in headers.iter().enumerate() {
        if let Some(h) = *h
            && head.is_none_or(|(_, best)| h.0 == best.0 || newer(h.0, best.0))
        {
            head = Some((i, h));
        }
    }
    let Some((head, (lap, _, n, g, _))) = head else {
        return (Vec::new(), 0);
    };
    let n = n.max(head as u32 + 1) as usize;
    let g = (g as usize).clamp(1, n);
    let groups = n.div_ceil(g);
    let first = if groups > 2 {
        (head / g + 2) % groups
    } else {
        head / g
    } * g;
    let order: Vec<usize> = (0..=(head + n - first) % n)
        .map(|k| (first + k) % n)
        .collect();
    let expected = |b: usize| if b <= head { lap } else { lap.wrapping_sub(1) };
    let holds = |b: usize| matches!(headers.get(b), Some(Some(h)) if h.0 == expected(b));
    let Some(oldest) = order.iter().position(|&b| holds(b)) else {
        return (Vec::new(), 0);
    };
    let aged = headers[order[oldest]].map_or(0, |h| h.1);
    (
        order[oldest..].iter().map(|&b| (b, holds(b))).collect(),
        aged,
    )
}

/// The state of a read (F6–F11).
struct Read<'a> {
    img: &'a [u8],
    e: u8,
    out: Vec<Out>,
    /// The record in progress: offset, bytes, a pack's.
    rec: Option<(u32, Vec<u8>, bool)>,
    resync: bool,
    /// F12: the number of the next record to begin, and (counted, header) at each block.
    count: u32,
    numbering: Vec<(u32, u32)>,
}

impl Read<'_> {
    /// F10: a record in progress dropped, reported.
    fn drop_reported(&mut self) {
        if let Some((at, bytes, _)) = self.rec.take() {
            self.out.push(Out::Damage(at, bytes.len() as u32));
        }
    }

    /// F10–F12: a well-formed chunk of type `kind` at region offset `at`.
    fn chunk(&mut self, kind: u8, at: u32, payload: &[u8]) {
        if kind == RING {
            return;
        }
        if kind == CURSOR {
            return self.drop_reported();
        }
        let pack = (0x51..=0x54).contains(&kind);
        let f = kind - if pack { 0x50 } else { 0 };
        if f == 1 || f == 2 {
            self.count = self.count.wrapping_add(1);
        }
        if self.resync {
            if f == 3 {
                return;
            }
            self.resync = false;
            if f == 4 {
                return;
            }
        }
        match (&mut self.rec, f) {
            (Some((_, bytes, p)), 3 | 4) if *p == pack => {
                bytes.extend_from_slice(payload);
                if f == 4 {
                    let (at, bytes, _) = self.rec.take().unwrap();
                    self.out.push(Out::Record(at, bytes));
                }
            }
            (_, 1) => {
                self.drop_reported();
                self.out.push(Out::Record(at, payload.to_vec()));
            }
            (_, 2) => {
                self.drop_reported();
                self.rec = Some((at, payload.to_vec(), pack));
            }
            _ if kind == MARKER && payload.is_empty() => self.rec = None,
            _ => {
                self.drop_reported();
                self.out
                    .push(Out::Damage(at, (payload.len() + HEADER) as u32));
            }
        }
    }

    /// F6–F9 over block `index` from `p`; `word`: W if known. Bad bytes left at the block's
    /// end (F9: the next block judges them): their offset, count and whether they look cut
    /// short.
    fn block(
        &mut self,
        index: usize,
        mut p: usize,
        word: Option<usize>,
    ) -> Option<(u32, u32, bool)> {
        let b = &self.img[index * BLOCK..][..BLOCK];
        let (e, base) = (self.e, (index * BLOCK) as u32);
        while p + HEADER <= BLOCK {
            let erased_header = b[p..p + HEADER].iter().all(|&x| x == e);
            // F7: padding, then the chunk after it.
            let mut found = None;
            let mut short = false;
            if erased_header && let Some(w) = word {
                let q = p.next_multiple_of(w);
                if q > p
                    && q + HEADER <= BLOCK
                    && let Chunk::Good(k, l) = chunk(b, q, e)
                {
                    found = Some((q, k, l));
                }
            }
            if found.is_none() {
                let Some(w) = b[p..].iter().position(|&x| x != e).map(|i| p + i) else {
                    self.rec = None; // F7: nothing more in this block
                    return None;
                };
                for s in (w.saturating_sub(HEADER - 1).max(p)..=w).rev() {
                    // A header that runs past the block declares a chunk past it: cut short.
                    let c = if s + HEADER > BLOCK {
                        Chunk::Bad(true)
                    } else {
                        chunk(b, s, e)
                    };
                    match c {
                        Chunk::Good(k, l) => {
                            found = Some((s, k, l));
                            break;
                        }
                        Chunk::Bad(s) => short |= s,
                        Chunk::Erased => {}
                    }
                }
            }
            if let Some((s, kind, len)) = found {
                if s > p {
                    self.rec = None; // F7: padding ends a record in progress, silently
                }
                p = s + HEADER + len;
                self.chunk(kind, base + s as u32, &b[s + HEADER..p]);
                continue;
            }
            // F8: bad bytes (after erased ones, if the header read erased).
            if !erased_header {
                self.resync = false;
            }
            let next = (p + 1..=BLOCK - HEADER).find(|&q| {
                let (kind, len) = (b[q + 6], u16::from_le_bytes([b[q + 4], b[q + 5]]));
                let wanted = matches!(kind, 1..=4 | 0x51..=0x54) || (kind == MARKER && len == 0);
                wanted && matches!(chunk(b, q, e), Chunk::Good(..))
            });
            if let Some(q) = next {
                self.rec = None;
                if b[q + 6] != MARKER {
                    self.out.push(Out::Damage(base + p as u32, (q - p) as u32));
                }
                p = q;
                continue;
            }
            if erased_header {
                self.rec = None;
                return None;
            }
            return Some((base + p as u32, (BLOCK - p) as u32, short));
        }
        None
    }
}

/// The whole read (F5–F12) of image `img` (unreadable bytes already replaced, F3): a ring
/// if `ring`, else the region in order; `told`: W, for a bounded log.
fn read_by_the_rules(
    img: &[u8],
    e: u8,
    ring: bool,
    told: Option<usize>,
) -> (Vec<Out>, Vec<(u32, u32)>) {
    let (order, aged) = if ring {
        ring_order(img, e)
    } else {
        ((0..img.len() / BLOCK).map(|i| (i, true)).collect(), 0)
    };
    let mut r = Read {
        img,
        e,
        out: Vec::new(),
        rec: None,
        resync: ring,
        count: aged,
        numbering: Vec::new(),
    };
    let mut pending: Option<(u32, u32, bool)> = None;
    for (n, &(index, holds)) in order.iter().enumerate() {
        let b = &img[index * BLOCK..][..BLOCK];
        let header = ring_header(b, e);
        if let Some((offset, bytes, short)) = pending.take() {
            // F9: the next block's first chunk (after its ring header) tells.
            let at = match chunk(b, 0, e) {
                Chunk::Good(RING, len) => HEADER + len,
                _ => 0,
            };
            let torn = match chunk(b, at, e) {
                Chunk::Good(kind, len) if holds => kind == MARKER && len == 0,
                _ => short,
            };
            if !torn {
                r.out.push(Out::Damage(offset, bytes));
            }
            r.rec = None;
        }
        if !holds {
            r.rec = None;
            continue;
        }
        if ring && let Some(h) = header {
            if n > 0 {
                r.numbering.push((r.count, h.1));
            }
            r.count = h.1;
        }
        let word = header.map(|h| h.4).or(told);
        pending = r.block(index, if header.is_some() { 19 } else { 0 }, word);
    }
    if let Some((offset, bytes, false)) = pending {
        r.out.push(Out::Damage(offset, bytes));
    }
    (r.out, r.numbering)
}

// ---------------------------------------------------------------- the library's readers

/// The image a flash reads as (F3: a byte whose read fails reads `0x80 | !e`).
fn readable<const W: usize, const E: usize>(flash: &mut MockFlash<'_, W, E>, e: u8) -> Vec<u8> {
    use embedded_storage::nor_flash::ReadNorFlash;
    let mut img = vec![0u8; flash.capacity()];
    for (i, piece) in img.chunks_mut(1024).enumerate() {
        if flash.read((i * 1024) as u32, piece).is_err() {
            for (j, byte) in piece.iter_mut().enumerate() {
                let mut one = [0u8];
                let read = flash.read((i * 1024 + j) as u32, &mut one);
                *byte = if read.is_ok() { one[0] } else { 0x80 | !e };
            }
        }
    }
    img
}

fn word_reader<const W: usize, const E: usize>(
    flash: &mut MockFlash<'_, W, E>,
    config: FlashConfig,
) -> Vec<Out> {
    let mut reader = WordReader::open(&mut *flash, config).expect("opens");
    let mut buffer = vec![0u8; 1 << 17];
    let mut out = Vec::new();
    while let Some(item) = reader.next(&mut buffer).expect("reads") {
        out.push(match item {
            FlashItem::Record { offset, len } | FlashItem::Pack { offset, len } => {
                Out::Record(offset, buffer[..len].to_vec())
            }
            FlashItem::Damage { offset, bytes } => Out::Damage(offset, bytes),
            other => panic!("{other:?}"),
        });
    }
    out
}

/// The block reader's records (region offsets, bytes) and damage (region offsets, bytes).
fn block_reader<const W: usize, const E: usize>(
    flash: &mut MockFlash<'_, W, E>,
    config: FlashConfig,
) -> Vec<Out> {
    let mut block = Box::new([0u8; BLOCK]);
    let source = if config.ring {
        FlashSource::ring(&mut *flash, config, &mut *block).expect("reads")
    } else {
        FlashSource::new(&mut *flash, config, &mut *block)
    };
    let options = ReadOptions::new()
        .erased(Some(config.erased))
        .starts_mid_log(config.ring);
    let mut buffer = vec![0u8; 1 << 17];
    let mut reader = Reader::with_options(source, &mut buffer, &options);
    let mut out = Vec::new();
    loop {
        let item = match reader.next().expect("reads") {
            None => break,
            Some(Item::Record(r)) => (r.offset, Some(r.data.to_vec()), 0),
            Some(Item::Corruption(c)) => (c.offset, None, c.bytes as u32),
            Some(other) => panic!("{other:?}"),
        };
        let at = reader.get_ref().region_offset(item.0) as u32;
        out.push(match item.1 {
            Some(data) => Out::Record(at, data),
            None => Out::Damage(at, item.2),
        });
    }
    out
}

/// Reads region `config` of `flash` by the rules and by the library's readers; they must
/// agree, and each ring header count the records begun before it (F12: up to `lost` more,
/// the records the writers lost to refused programs). Returns what was read.
fn agree<const W: usize, const E: usize>(
    flash: &mut MockFlash<'_, W, E>,
    config: FlashConfig,
    lost: u32,
    what: &str,
) -> Vec<Out> {
    let img = readable(flash, config.erased);
    let told = config.write_size.map(usize::from);
    let (ours, numbering) = read_by_the_rules(&img, config.erased, config.ring, told);
    let words = word_reader(flash, config);
    assert_eq!(ours, words, "{what}: the rules and WordReader");
    // The block reader: the same records; its damage reports include every one of the rules'
    // (at the same offsets; it counts a stray fragment's payload alone, as LevelDB does, and
    // reports a record in progress that damage ends on its own too).
    let blocks = block_reader(flash, config);
    let records = |o: &[Out]| -> Vec<Out> {
        o.iter()
            .filter(|x| matches!(x, Out::Record(..)))
            .cloned()
            .collect()
    };
    assert_eq!(records(&ours), records(&blocks), "{what}: the block reader");
    let damage = |o: &[Out]| -> Vec<u32> {
        let at = |x: &Out| {
            if let Out::Damage(at, _) = x {
                Some(*at)
            } else {
                None
            }
        };
        o.iter().filter_map(at).collect()
    };
    let reported = damage(&blocks);
    for at in damage(&ours) {
        assert!(
            reported.contains(&at),
            "{what}: damage at {at}, the block reader reports {reported:?}"
        );
    }
    for (counted, header) in numbering {
        let skipped = header.wrapping_sub(counted);
        assert!(
            skipped <= lost,
            "{what}: {counted} records begun, the next ring header says {header}"
        );
    }
    ours
}

// ------------------------------------------------------------------------- the images

/// Reads an image of W = 8, 4 KiB units (the goldens') by the rules and the library.
fn read_image(image: &[u8], ring: bool, lost: u32, what: &str) -> Vec<Out> {
    let (mut memory, mut programmed) = (image.to_vec(), vec![false; image.len() / 8]);
    let mut flash = MockFlash::<8, 4096>::new(&mut memory, &mut programmed, 0xFF).expect("a flash");
    flash.memory_mut().copy_from_slice(image);
    let config = FlashConfig::new(0, image.len() as u32);
    agree(
        &mut flash,
        if ring { config.ring() } else { config },
        lost,
        what,
    )
}

fn golden(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data/format-freeze")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn sample(i: usize) -> Vec<u8> {
    if i % 13 == 12 {
        (0..20_000 + i)
            .map(|j| b'a' + ((i + j) % 26) as u8)
            .collect()
    } else {
        format!("sample {i:04}: t={}.{}", 18 + i % 7, i % 10).into_bytes()
    }
}

/// The goldens are format_freeze.rs's (W = 8, 4 KiB units): what their writers wrote.
#[test]
fn the_goldens_read_by_the_rules() {
    for (name, ring, first, last) in [
        ("flash-resume.img", false, 0, 10),
        ("ring.img", true, 0, 600),
        ("ring-cursors.img", true, 0, 600),
    ] {
        let read = read_image(&golden(name), ring, 0, name);
        let records: Vec<Vec<u8>> = read
            .iter()
            .map(|o| match o {
                Out::Record(_, data) => data.clone(),
                other => panic!("{name}: {other:?}"),
            })
            .collect();
        // format_freeze.rs: every record kept (the newest of a ring), in order.
        let written: Vec<_> = (first..last).map(sample).collect();
        assert!(records.len() >= 10, "{name}");
        assert_eq!(
            records[..],
            written[written.len() - records.len()..],
            "{name}"
        );
        if !ring {
            assert_eq!(records.len(), written.len(), "{name}");
        }
    }
}

/// Damage as time and wear leave it, at pseudo-random places of the goldens: bits flipped, a
/// run of bytes reading erased, zeroed or random; what the rules report must be what the
/// library reports, offsets and byte counts.
#[test]
fn damaged_goldens_read_by_the_rules() {
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    let mut random = move |below: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % below as u64) as usize
    };
    let mut damage = 0;
    for (name, ring) in [
        ("flash-resume.img", false),
        ("ring.img", true),
        ("ring-cursors.img", true),
    ] {
        let image = golden(name);
        let written = image.iter().rposition(|&b| b != 0xFF).unwrap_or(0) + 1;
        for n in 0..24 {
            let mut damaged = image.clone();
            let at = random(written);
            let end = (at + 1 + random(40)).min(image.len());
            for byte in &mut damaged[at..end] {
                *byte = [*byte ^ (1 << random(8)), 0xFF, 0, random(256) as u8][n % 4];
            }
            let what = ["a bit flipped", "erased", "zeroed", "random bytes"][n % 4];
            let read = read_image(&damaged, ring, u32::MAX, &format!("{name}: {what} at {at}"));
            damage += read.iter().filter(|o| matches!(o, Out::Damage(..))).count();
        }
    }
    assert!(damage > 10, "damage reported: {damage}");
}

/// Record `id`: assorted bytes with runs of erased-looking ones; every 17th crosses blocks.
fn record(id: usize) -> Vec<u8> {
    let len = [1 + (id * 37) % 300, 40_000][usize::from(id % 17 == 16)];
    let byte = |j: usize| [(id * 11 + j * 29) as u8, 0xFF][usize::from((j / 9) % 4 == 3)];
    (0..len).map(byte).collect()
}

/// Boots a writer (buffered or small-RAM) that adds records `ids`, flushing after every 3rd;
/// returns the units it abandoned and the records it lost to refused programs.
fn session<const W: usize, const E: usize>(
    flash: &mut MockFlash<'_, W, E>,
    config: FlashConfig,
    buffered: bool,
    ids: std::ops::Range<usize>,
    cut: Option<(usize, PowerCut)>,
) -> (u32, u32) {
    if let Some((bytes, cut)) = cut {
        flash.cut_power_after(bytes, cut);
    }
    // Records added, every 3rd flushed, until the writer fails; then a flush.
    macro_rules! write {
        ($log:expr) => {{
            let mut log = $log;
            for id in ids {
                if log.add_record(&record(id)).is_err() || (id % 3 == 2 && log.flush().is_err()) {
                    break;
                }
            }
            let _ = log.flush();
            log.stats()
        }};
    }
    let mut block = Box::new([0u8; BLOCK]);
    let stats = match buffered {
        true => FlashWriter::open(&mut *flash, config, &mut *block).map(|log| write!(log)),
        false => WordWriter::open(&mut *flash, config).map(|log| write!(log)),
    };
    let stats = stats.unwrap_or_default();
    flash.power_on();
    // (With the power off, every program fails: the units a cut session abandons are not
    // counted.)
    let refused = if cut.is_none() {
        stats.abandoned_units
    } else {
        0
    };
    (refused, stats.lost_records)
}

/// A life of brown-outs: torn writes (partial, arbitrary bits, ECC errors; `Some((bytes, cut))`: the power fails after
/// `bytes` of flash work) and a first
/// program cut so that its word reads erased, which the next boot's program meets again
/// (refused, or accepted and spoiled): an abandoned unit.
fn brownouts<const W: usize, const E: usize>(
    blocks: usize,
    ring: bool,
    second: SecondProgram,
    buffered: bool,
) -> u32 {
    let what =
        format!("W = {W}, E = {E}, {blocks} blocks, ring {ring}, {second:?}, buffered {buffered}");
    let (mut memory, mut programmed) =
        (vec![0xFF; blocks * BLOCK], vec![false; blocks * BLOCK / W]);
    let mut flash = MockFlash::<W, E>::new(&mut memory, &mut programmed, 0xFF).expect("a flash");
    flash.set_second_program(second);
    let mut config = FlashConfig::new(0, (blocks * BLOCK) as u32);
    if ring {
        config = config.ring();
    }
    let boots = [
        None,
        Some((100, PowerCut::Partial)),
        None,
        Some((0, PowerCut::Partial)),
        None,
        Some((W / 2 + 20, PowerCut::EccError)),
        Some((0, PowerCut::Partial)),
        None,
        Some((333, PowerCut::Arbitrary { seed: 7 })),
        None,
    ];
    let (mut id, mut abandoned, mut lost) = (0, 0, 0);
    let per_boot = if ring { 40 } else { 6 };
    for (n, &cut) in boots
        .iter()
        .cycle()
        .take(if ring { 20 } else { 10 })
        .enumerate()
    {
        let (a, l) = session(&mut flash, config, buffered, id..id + per_boot, cut);
        (id, abandoned, lost) = (id + per_boot, abandoned + a, lost + l);
        // Numbers skipped: one per record lost, and one per unit abandoned (the record being
        // written then is written again, numbered again).
        agree(
            &mut flash,
            config,
            lost + abandoned,
            &format!("{what}: boot {n}"),
        );
    }
    if !ring {
        agree(
            &mut flash,
            config.write_size(W),
            lost + abandoned,
            &format!("{what}: W told"),
        );
    }
    abandoned
}

#[test]
fn brownout_images_read_by_the_rules() {
    let mut abandoned = 0;
    for second in [SecondProgram::Refused, SecondProgram::Spoiled] {
        for buffered in [false, true] {
            abandoned += brownouts::<8, 4096>(4, false, second, buffered);
            abandoned += brownouts::<32, 2048>(3, false, second, buffered);
            abandoned += brownouts::<8, 4096>(4, true, second, buffered);
            // 64 KiB units: erase groups of two blocks.
            abandoned += brownouts::<16, 65536>(6, true, second, buffered);
        }
    }
    assert!(abandoned > 0, "no image with an abandoned unit");
}
