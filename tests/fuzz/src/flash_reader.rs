//! Target `flash_reader`: flash images of arbitrary content, read through `flash::FlashSource`
//! over a `MockFlash` loaded with the bytes, then appended to by `FlashWriter`.
//!
//! Input: a [`HEADER`]-byte header, then the image (up to [`MAX_BLOCKS`] blocks; the rest of the
//! region reads as erased).
//!
//! | byte | meaning |
//! |---|---|
//! | 0 | flags: bit 0 erased value 0x00 (else 0xFF), 1 unused, 2 no per-word ECC, 3 checksums off, 4 resync after zeros, 5 skip ignorable types |
//! | 1 | region size: 1 + (n mod 4) blocks (at least the image's) |
//! | 2 | records to append: n mod 8 |
//! | 3 | seed of their lengths |
//!
//! Properties: no panic; reading the region through `FlashSource` returns exactly what reading
//! the same bytes from memory returns, with the same options, and the output is sane; with
//! LevelDB's options, the small-RAM reader (`WordReader`) reads the same records
//! ([`check_small_reader`]); opening a
//! `FlashWriter` on whatever the region holds never fails but for a full region, and after
//! appending records and a successful flush, reading the region with the flash read rules (the
//! library's flash reader) returns those records, in order, one after the other
//! (an arbitrary image may hold records beyond where the writer resumes, in blocks whose first
//! header is erased) — unless a checksum collision swallowed them, a case recognised exactly
//! ([`swallowed_by_collision`]): a header-shaped run of bytes in the torn bytes before the
//! writer's resume point whose checksum matches only once the writer has programmed the bytes
//! after it.
#![allow(dead_code, unreachable_pub)]

use embedded_storage::nor_flash::NorFlash;
use logfmt_core::flash::{
    FlashConfig, FlashError, FlashItem, FlashSource, FlashWriter, MockFlash, WordReader,
};
use logfmt_core::{BLOCK_SIZE, BlockSource, ReadOptions, SliceSource, parts::HEADER_SIZE};

use crate::common::{Rng, Seen, assert_sane, read_records, record_content};

/// Bytes of the input header.
pub const HEADER: usize = 4;
/// The largest region, in blocks.
pub const MAX_BLOCKS: usize = 4;

const WRITE: usize = 8;
const ERASE: usize = 4096;

/// Checks one input.
pub fn check(data: &[u8]) {
    check_input(data);
}

/// What became of the records appended to an image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Appended {
    /// Read back, in order, one after the other.
    ReadBack,
    /// Not all of them fitted: the flush failed with `Full`.
    RegionFull,
    /// Swallowed by the colliding chunks at these region offsets
    /// ([`swallowed_by_collision`]).
    Swallowed(Vec<usize>),
}

/// Checks one input; returns what became of the appended records.
pub fn check_input(data: &[u8]) -> Appended {
    let (header, image) = data.split_at(data.len().min(HEADER));
    let byte = |i: usize| header.get(i).copied().unwrap_or(0);
    let flags = byte(0);
    let erased = if flags & 1 != 0 { 0x00 } else { 0xFF };
    let image = &image[..image.len().min(MAX_BLOCKS * BLOCK_SIZE)];
    let blocks = (1 + usize::from(byte(1)) % MAX_BLOCKS).max(image.len().div_ceil(BLOCK_SIZE));
    let mut memory = vec![erased; blocks * BLOCK_SIZE];
    memory[..image.len()].copy_from_slice(image);
    let options = ReadOptions::new()
        .erased(Some(erased))
        .verify_checksums(flags & 8 == 0)
        .resync_after_zeros(flags & 16 != 0)
        .skip_ignorable_types(flags & 32 != 0);
    let appends = usize::from(byte(2) % 8);
    if flags & (8 | 16 | 32) == 0 {
        check_small_reader(&memory, erased, &options);
    }
    check_image(&memory, erased, flags & 4 == 0, &options, appends, byte(3))
}

/// The small-RAM reader ([`WordReader`]) reads the records the block reader reads from
/// `image`, byte for byte, at the same offsets, in order: the two implement one set of rules
/// (`options`: LevelDB's, on erased flash). An image that holds a pack is left out: the block
/// reader here reads a pack as LevelDB does, as a chunk of a type it does not know.
fn check_small_reader(image: &[u8], erased: u8, options: &ReadOptions) {
    let from_memory = read_records(SliceSource::new(image), options, image.len());
    let expected: Vec<(u64, &[u8])> = from_memory
        .items
        .iter()
        .filter_map(|seen| match seen {
            Seen::Record { offset, data, .. } => Some((*offset, &data[..])),
            _ => None,
        })
        .collect();
    let mut memory = vec![0u8; image.len()];
    let mut programmed = vec![false; image.len() / WRITE];
    let mut flash = load(image, &mut memory, &mut programmed, erased, false);
    let config = FlashConfig::new(0, image.len() as u32).erased(erased);
    let mut reader = WordReader::open(&mut flash, config).expect("reads");
    let mut buffer = vec![0u8; image.len()];
    let mut read = Vec::new();
    while let Some(item) = reader.next(&mut buffer).expect("reads") {
        match item {
            FlashItem::Record { offset, len } => {
                read.push((u64::from(offset), buffer[..len].to_vec()))
            }
            FlashItem::Pack { .. } => return,
            _ => {}
        }
    }
    let read: Vec<(u64, &[u8])> = read.iter().map(|(o, d)| (*o, &d[..])).collect();
    assert!(
        read == expected,
        "the small-RAM reader read {} records at {:?}, the block reader {} at {:?}",
        read.len(),
        read.iter().map(|r| (r.0, r.1.len())).collect::<Vec<_>>(),
        expected.len(),
        expected
            .iter()
            .map(|r| (r.0, r.1.len()))
            .collect::<Vec<_>>()
    );
}

/// Programs `image` into a fresh mock flash: only the words that are not all erased, so that
/// the flash's bookkeeping matches what it holds.
fn load<'a>(
    image: &[u8],
    memory: &'a mut [u8],
    programmed: &'a mut [bool],
    erased: u8,
    ecc: bool,
) -> MockFlash<'a, WRITE, ERASE> {
    let mut flash = MockFlash::new(memory, programmed, erased).expect("geometry");
    flash.set_ecc(ecc);
    for (i, word) in image.chunks(WRITE).enumerate() {
        if word.iter().any(|&b| b != erased) {
            flash
                .write((i * WRITE) as u32, word)
                .expect("programming a fresh word");
        }
    }
    assert_eq!(flash.memory(), image);
    flash
}

/// Checks one region image.
pub fn check_image(
    image: &[u8],
    erased: u8,
    ecc: bool,
    options: &ReadOptions,
    appends: usize,
    seed: u8,
) -> Appended {
    let mut memory = vec![0u8; image.len()];
    let mut programmed = vec![false; image.len() / WRITE];
    let mut flash = load(image, &mut memory, &mut programmed, erased, ecc);
    let config = FlashConfig::new(0, image.len() as u32).erased(erased);

    // Through the flash, as from memory.
    let scratch = image.len();
    let mut block = Box::new([0u8; BLOCK_SIZE]);
    let from_flash = read_records(
        FlashSource::new(&mut flash, config, &mut *block),
        options,
        scratch,
    );
    let from_memory = read_records(SliceSource::new(image), options, scratch);
    assert_eq!(from_flash.errors, 0);
    assert_eq!(
        from_flash.items, from_memory.items,
        "FlashSource and SliceSource differ"
    );
    assert_eq!(from_flash.end, from_memory.end);
    assert_sane(&from_memory.items, image.len() as u64, 0);

    // Appending to whatever is there.
    let records = records_to_append(appends, seed);
    let mut block = Box::new([0u8; BLOCK_SIZE]);
    let mut writer = match FlashWriter::open(&mut flash, config, &mut *block) {
        Ok(writer) => writer,
        Err(e) => panic!("open failed on an arbitrary image: {e:?}"),
    };
    let mut appended = Vec::new();
    for record in &records {
        match writer.add_record(record) {
            Ok(_) => appended.push(record.clone()),
            Err(FlashError::Full) => break,
            Err(e) => panic!("add_record: {e:?}"),
        }
    }
    match writer.flush() {
        Ok(()) => {}
        Err(FlashError::Full) => return Appended::RegionFull,
        Err(e) => panic!("flush: {e:?}"),
    }
    // Read back by the library's flash reader. (The reference reader resynchronises after
    // bad bytes at the next word boundary where a well-formed chunk starts: in an arbitrary
    // image a chunk nested in the garbage before the writer's resume marker can lead it past
    // the marker, which the library's rule, the first well-formed chunk after the bad bytes,
    // does not. Images the writer made alone are held to the reference by the other targets.)
    let flash_options = ReadOptions::new().erased(Some(erased));
    let mut block = Box::new([0u8; BLOCK_SIZE]);
    let read = records_read(
        FlashSource::new(&mut flash, config, &mut *block),
        &flash_options,
        scratch,
    );
    if holds_in_order(&read, &appended) {
        return Appended::ReadBack;
    }
    assert!(
        swallowed_by_collision(image, flash.memory(), erased, &appended),
        "the appended records are not read back, in order, one after the other"
    );
    Appended::Swallowed(colliding_chunks(image, flash.memory()))
}

/// The `appends` records appended to an image, their lengths drawn from `seed`.
pub fn records_to_append(appends: usize, seed: u8) -> Vec<Vec<u8>> {
    let mut rng = Rng(u64::from(seed) | 0x100);
    (0..appends)
        .map(|i| {
            let len = match rng.below(8) {
                0 => 0,
                1 => rng.below(40_000) as usize,
                _ => rng.below(300) as usize,
            };
            record_content(0xF1A5_0000 + i as u64, len)
        })
        .collect()
}

/// The records `source` holds, read with `options` (reports and oversized records left out).
pub fn records_read<S: BlockSource>(
    source: S,
    options: &ReadOptions,
    scratch: usize,
) -> Vec<Vec<u8>> {
    read_records(source, options, scratch)
        .items
        .into_iter()
        .filter_map(|item| match item {
            Seen::Record { data, .. } => Some(data),
            _ => None,
        })
        .collect()
}

/// Whether `read` holds `appended`, in order, one after the other.
pub fn holds_in_order(read: &[Vec<u8>], appended: &[Vec<u8>]) -> bool {
    appended.is_empty() || read.windows(appended.len()).any(|run| run == appended)
}

/// The one way appended records may go unread: a checksum collision with the bytes the writer
/// programmed. `before` is the region before the writer opened, `after` once it flushed.
///
/// A *colliding chunk* is a well-formed chunk of `after` whose header lies in the bytes that
/// were there before the writer opened (it ends before the first byte the writer changed) and
/// whose payload reaches into the bytes the writer changed, with a checksum that does not match
/// over `before`'s bytes: a header-shaped run of bytes inside a torn write, whose CRC-32C
/// happens to match once the resume marker and the next records are programmed after it. The
/// library's reader then takes it for a chunk and its payload swallows them. Nothing about the
/// reopening can see it (the checksum is wrong until the records are written), so the power-cut
/// guarantee holds up to such collisions (a 2⁻³² chance per header-shaped run that reaches
/// past the resume point); a fuzzer finds them by steering the stored checksum to the one it
/// sees computed.
///
/// True only if there are colliding chunks and they are the whole reason: with each one's
/// checksum spoiled (its first byte changed), the library's reader reads `appended` back, in
/// order, one after the other. A writer that resumes past every header-shaped extent in the
/// torn bytes never leaves a colliding chunk, and this is then never true.
pub fn swallowed_by_collision(
    before: &[u8],
    after: &[u8],
    erased: u8,
    appended: &[Vec<u8>],
) -> bool {
    let colliding = colliding_chunks(before, after);
    if colliding.is_empty() {
        return false;
    }
    let mut spoiled = after.to_vec();
    for &at in &colliding {
        spoiled[at] ^= if spoiled[at] ^ 1 == erased { 2 } else { 1 };
    }
    let options = ReadOptions::new().erased(Some(erased));
    let read = records_read(SliceSource::new(&spoiled), &options, spoiled.len());
    holds_in_order(&read, appended)
}

/// The offsets of the colliding chunks of `after` (see [`swallowed_by_collision`]).
pub fn colliding_chunks(before: &[u8], after: &[u8]) -> Vec<usize> {
    let Some(changed) = before.iter().zip(after).position(|(b, a)| b != a) else {
        return Vec::new();
    };
    (0..changed.saturating_sub(HEADER_SIZE - 1))
        .filter(|&at| {
            let reach = chunk_end(after, at);
            reach.is_some_and(|end| end > changed) && chunk_end(before, at).is_none()
        })
        .collect()
}

/// Where the well-formed chunk at `at` of `image` ends (legacy header: checksum, length,
/// type; the length within the block, the type not 0, the masked CRC-32C of the type and the
/// payload right), or `None`.
fn chunk_end(image: &[u8], at: usize) -> Option<usize> {
    use logfmt_core::parts::checksum::{crc32c, extend, mask};
    let header = image.get(at..at + HEADER_SIZE)?;
    let stored = u32::from_le_bytes([header[0], header[1], header[2], header[3]]);
    let len = usize::from(u16::from_le_bytes([header[4], header[5]]));
    let kind = header[6];
    let end = at + HEADER_SIZE + len;
    let block_end = (at / BLOCK_SIZE + 1) * BLOCK_SIZE;
    let payload = image.get(at + HEADER_SIZE..end)?;
    (kind != 0 && end <= block_end && mask(extend(crc32c(&[kind]), payload)) == stored)
        .then_some(end)
}
