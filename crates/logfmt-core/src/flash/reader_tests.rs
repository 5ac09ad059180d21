//! The small-RAM reader against the block reader: on images written by the flash writers —
//! bounded and rings, with power cuts, reboots, damage and packs — both return the same
//! records (a pack's, one by one), at the same offsets, and both report damage or neither.

use std::vec::Vec;

use proptest::prelude::*;

use super::tests::{Kind, Memory, open};
use super::{FlashConfig, FlashItem, FlashSource, MockFlash, PowerCut, WordReader};
use crate::format::BLOCK_SIZE;
use crate::{Item, ReadOptions, Reader};

const BLOCKS: usize = 4;

/// What a reader makes of an image: records (offset, bytes) and how many damage reports.
type Outcome = (Vec<(u64, Vec<u8>)>, usize);

/// The block reader's view ([`FlashSource`] + [`Reader`]).
fn block_reader<const W: usize>(
    flash: &mut MockFlash<'_, W, 4096>,
    config: FlashConfig,
) -> Outcome {
    let mut block = std::boxed::Box::new([0u8; BLOCK_SIZE]);
    let source = if config.ring {
        FlashSource::ring(&mut *flash, config, &mut *block).expect("reads")
    } else {
        FlashSource::new(&mut *flash, config, &mut *block)
    };
    let options = ReadOptions::new()
        .erased(Some(config.erased))
        .starts_mid_log(config.ring);
    let mut buffer = std::vec![0u8; 1 << 20];
    let mut records = Vec::new();
    let mut damage = 0;
    let mut reader = Reader::with_options(source, &mut buffer, &options);
    while let Some(item) = reader.next().expect("reads") {
        match item {
            Item::Record(r) => records.push((r.offset, r.data.to_vec())),
            other => {
                if std::env::var("DEBUG_READERS").is_ok() {
                    std::eprintln!("block: {other:?}");
                }
                damage += 1
            }
        }
    }
    (records, damage)
}

/// The small-RAM reader's view, offsets made logical again (counted from the first block
/// read) to compare with the block reader's.
fn word_reader<const W: usize>(flash: &mut MockFlash<'_, W, 4096>, config: FlashConfig) -> Outcome {
    let order = if config.ring {
        let source = FlashSource::ring(&mut *flash, config, [0u8; BLOCK_SIZE]).expect("reads");
        let oldest = source.region_offset(0) / BLOCK_SIZE as u64;
        source.ring_order().map(|ring| (ring, oldest))
    } else {
        None
    };
    let logical = |offset: u64| match order {
        Some((ring, oldest)) => {
            let block = BLOCK_SIZE as u64;
            let index = offset / block;
            let n = (index + u64::from(ring.blocks()) - oldest) % u64::from(ring.blocks());
            n * block + offset % block
        }
        None => offset,
    };
    let mut reader = WordReader::open(&mut *flash, config).expect("reads");
    let mut buffer = std::vec![0u8; 1 << 20];
    let mut records = Vec::new();
    let mut damage = 0;
    let mut items = Vec::new();
    while let Some(item) = reader.next(&mut buffer).expect("reads") {
        items.push(item);
        match item {
            FlashItem::Record { offset, len } => {
                records.push((logical(offset.into()), buffer[..len].to_vec()));
            }
            FlashItem::Pack { offset, len } => {
                let pack = crate::pack::Pack::parse(&buffer[..len]).expect("a pack");
                for record in pack.records() {
                    let (_, data) = record.expect("a pack's record");
                    records.push((logical(offset.into()), data.to_vec()));
                }
            }
            other => {
                if std::env::var("DEBUG_READERS").is_ok() {
                    std::eprintln!("small: {other:?}");
                }
                damage += 1
            }
        }
    }
    #[cfg(feature = "embedded-storage-async")]
    {
        // The async reader, the same source: the same items.
        let items_async = embassy_futures::block_on(async {
            let mut reader = super::AsyncWordReader::open(&mut *flash, config)
                .await
                .expect("reads");
            let mut items = Vec::new();
            while let Some(item) = reader.next(&mut buffer).await.expect("reads") {
                items.push(item);
            }
            items
        });
        assert_eq!(items, items_async, "the async reader's items");
    }
    (records, damage)
}

/// A scripted run with power cuts, then damage at `flips` (region offsets, xor masks); the
/// small-RAM reader told the word size if `told`.
fn image<const W: usize>(
    ring: bool,
    lengths: &[usize],
    cuts: &[(usize, u8)],
    flips: &[(usize, u8)],
    kind: Kind,
    told: bool,
) -> (Outcome, Outcome) {
    let mut memory = Memory::<W>::new(BLOCKS);
    let mut config = FlashConfig::new(0, (BLOCKS * BLOCK_SIZE) as u32);
    config.ring = ring;
    let mut block = [0u8; BLOCK_SIZE];
    let mut flash = memory.flash::<4096>();
    {
        let mut next = 0;
        for (round, &(budget, mode)) in cuts.iter().enumerate() {
            flash.power_on();
            let cut = match mode % 4 {
                0 => PowerCut::Untouched,
                1 => PowerCut::Partial,
                2 => PowerCut::Complete,
                _ => PowerCut::Arbitrary {
                    seed: round as u64 + 1,
                },
            };
            flash.cut_power_after(budget, cut);
            let Ok(mut writer) = open(kind, &mut flash, config, &mut block) else {
                continue;
            };
            for (i, &len) in lengths.iter().enumerate().skip(next) {
                let data: Vec<u8> = (0..len).map(|j| (i * 7 + j * 13) as u8).collect();
                next = i + 1;
                // Every fourth small record goes in a pack with its first half.
                let written = if i % 4 == 1 && len < 2_000 {
                    let mut pack = crate::pack::PackBuffer::<4096>::new();
                    let _ = pack.push(&data);
                    let _ = pack.push(&data[..len / 2]);
                    writer.add_pack(pack.as_bytes())
                } else {
                    writer.add_record(&data)
                };
                if written.is_err() {
                    break;
                }
                if i % 3 == 0 && writer.flush().is_err() {
                    break;
                }
            }
        }
    }
    flash.power_on();
    for &(at, mask) in flips {
        if let Some(byte) = flash.memory_mut().get_mut(at % (BLOCKS * BLOCK_SIZE)) {
            *byte ^= mask;
        }
    }
    let told_config = if told { config.write_size(W) } else { config };
    (
        block_reader(&mut flash, config),
        word_reader(&mut flash, told_config),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn both_readers_read_the_same_records(
        ring: bool,
        lengths in proptest::collection::vec(
            prop_oneof![0usize..60, 0usize..2_000, 30_000usize..45_000], 1..300),
        cuts in proptest::collection::vec((0usize..200_000, 0u8..4), 1..6),
        flips in proptest::collection::vec((0usize..BLOCKS * BLOCK_SIZE, 1u8..=255), 0..3),
        word in any::<bool>(),
        wide in any::<bool>(),
        told in any::<bool>(),
    ) {
        let kind = if word { Kind::Word } else { Kind::Buffered };
        // Told the word size, the small-RAM reader skips a flush's padding unread, as in a
        // ring: damage there is not reported (the block reader of a bounded log reports it).
        let told = told && flips.is_empty();
        let (block, small) = if wide {
            image::<32>(ring, &lengths, &cuts, &flips, kind, told)
        } else {
            image::<8>(ring, &lengths, &cuts, &flips, kind, told)
        };
        let offsets = |o: &Outcome| o.0.iter().map(|r| (r.0, r.1.len())).collect::<Vec<_>>();
        prop_assert_eq!(offsets(&block), offsets(&small), "records");
        prop_assert!(block.0 == small.0, "record bytes");
        prop_assert_eq!(block.1 > 0, small.1 > 0, "damage reported: {} vs {}", block.1, small.1);
    }
}

#[test]
fn the_small_reader_reads_a_wrapped_ring() {
    let lengths: Vec<usize> = (0..3_000).map(|i| [30, 100, 2_500, 16][i % 4]).collect();
    let (block, small) = image::<8>(true, &lengths, &[(usize::MAX, 0)], &[], Kind::Word, false);
    assert!(block.0.len() > 50, "{} records", block.0.len());
    let offsets = |o: &Outcome| o.0.iter().map(|r| (r.0, r.1.len())).collect::<Vec<_>>();
    assert_eq!(offsets(&block), offsets(&small));
    assert!(block == small);
}

#[test]
fn a_bounded_log_told_its_word_size_reads_the_same_records() {
    let lengths: Vec<usize> = (0..600).map(|i| [30, 100, 2_500, 16][i % 4]).collect();
    let (block, small) = image::<32>(false, &lengths, &[(usize::MAX, 0)], &[], Kind::Word, true);
    assert!(block.0.len() > 50, "{} records", block.0.len());
    assert!(block == small);
}

/// A record's last chunk whose checksum begins with a byte that reads erased, just after the
/// next block's ring header: the small-RAM reader takes that byte for padding and tries the
/// chunk one byte on first, whose header reads as a FULL chunk of 1 074 bytes with a bad
/// checksum. That trial must not overwrite the record's first part: the record comes back
/// as written, as the block reader returns it.
#[test]
fn a_last_chunk_whose_checksum_begins_erased_keeps_its_record_whole() {
    let (block, small) = image::<8>(
        true,
        &[0, 0, 31, 965, 44534, 30000],
        &[(0, 0), (32790, 1), (111127, 1)],
        &[],
        Kind::Buffered,
        false,
    );
    let written: Vec<u8> = (0..44534).map(|j| (4 * 7 + j * 13) as u8).collect();
    let record = small.0.iter().find(|r| r.1.len() == 44534);
    assert_eq!(record.map(|r| (r.0, &r.1)), Some((1056, &written)));
    assert!(block == small);
}

/// Written bytes in the last bytes of the region's last block, where no chunk starts (its
/// trailer): the small-RAM reader tries no chunk header there (one would run past the region:
/// a read out of the flash's bounds), and reads the same records as the block reader.
#[test]
fn written_bytes_in_the_last_blocks_trailer_are_read_within_the_region() {
    let lengths: Vec<usize> = (0..40).map(|i| [30, 100, 2_500, 16][i % 4]).collect();
    let end = BLOCKS * BLOCK_SIZE;
    for at in end - 6..end {
        let (block, small) = image::<8>(
            false,
            &lengths,
            &[(usize::MAX, 0)],
            &[(at, 0x5A)],
            Kind::Word,
            false,
        );
        assert_eq!(block.0, small.0, "a byte written at {at}");
    }
}
