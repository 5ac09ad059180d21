//! Reading flash images the plain way, for the flash targets' models: the reference reader of
//! the flash read rules ([`crate::reference`]) over an image in memory.
#![allow(dead_code, unreachable_pub)]

use crate::reference;

/// Reads a flash image with [`reference`]: the records, and how many damage reports.
pub fn read_flash(image: &[u8], erased: u8, word: usize) -> (Vec<Vec<u8>>, usize) {
    let crc = |kind: u8, payload: &[u8]| {
        use logfmt_core::parts::checksum::{crc32c, extend, mask};
        mask(extend(crc32c(&[kind]), payload))
    };
    let mut scratch = vec![0u8; image.len()];
    let (mut records, mut damage) = (Vec::new(), 0);
    reference::walk(
        image,
        erased,
        word,
        crc,
        &mut scratch,
        |event| match event {
            reference::Event::Record { data, .. } => records.push(data.to_vec()),
            reference::Event::Damage { .. } => damage += 1,
            reference::Event::Oversized { offset } => panic!("oversized record at {offset}"),
            reference::Event::Torn { .. } | reference::Event::TornTail { .. } => {}
        },
    );
    (records, damage)
}
