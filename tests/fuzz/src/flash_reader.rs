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
//! the same bytes from memory returns, with the same options, and the output is sane; opening a
//! `FlashWriter` on whatever the region holds never fails but for a full region, and after
//! appending records and a successful flush, reading the region with the flash read rules (the
//! library's flash reader) returns those records, in order, one after the other
//! (an arbitrary image may hold records beyond where the writer resumes, in blocks whose first
//! header is erased).
#![allow(dead_code, unreachable_pub)]

use embedded_storage::nor_flash::NorFlash;
use logfmt_core::flash::{FlashConfig, FlashError, FlashSource, FlashWriter, MockFlash};
use logfmt_core::{BLOCK_SIZE, ReadOptions, SliceSource};

use crate::common::{Rng, Seen, assert_sane, read_records, record_content};

/// Bytes of the input header.
pub const HEADER: usize = 4;
/// The largest region, in blocks.
pub const MAX_BLOCKS: usize = 4;

const WRITE: usize = 8;
const ERASE: usize = 4096;

/// Checks one input.
pub fn check(data: &[u8]) {
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
    check_image(&memory, erased, flags & 4 == 0, &options, appends, byte(3));
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
) {
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
    let mut rng = Rng(u64::from(seed) | 0x100);
    let records: Vec<Vec<u8>> = (0..appends)
        .map(|i| {
            let len = match rng.below(8) {
                0 => 0,
                1 => rng.below(40_000) as usize,
                _ => rng.below(300) as usize,
            };
            record_content(0xF1A5_0000 + i as u64, len)
        })
        .collect();
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
        Err(FlashError::Full) => return,
        Err(e) => panic!("flush: {e:?}"),
    }
    // Read back by the library's flash reader. (The reference reader resynchronises after
    // bad bytes at the next word boundary where a well-formed chunk starts: in an arbitrary
    // image a chunk nested in the garbage before the writer's resume marker can lead it past
    // the marker, which the library's rule, the first well-formed chunk after the bad bytes,
    // does not. Images the writer made alone are held to the reference by the other targets.)
    let flash_options = ReadOptions::new().erased(Some(erased));
    let mut block = Box::new([0u8; BLOCK_SIZE]);
    let read: Vec<Vec<u8>> = read_records(
        FlashSource::new(&mut flash, config, &mut *block),
        &flash_options,
        scratch,
    )
    .items
    .into_iter()
    .filter_map(|item| match item {
        Seen::Record { data, .. } => Some(data),
        _ => None,
    })
    .collect();
    assert!(
        appended.is_empty() || read.windows(appended.len()).any(|run| run == &appended[..]),
        "the appended records are not read back, in order, one after the other"
    );
}
