//! CRC-32C (Castagnoli) and LevelDB's checksum masking.
//!
//! The checksum of a chunk is `mask(crc32c(type ‖ payload))` (legacy) or
//! `mask(crc32c(type ‖ log number ‖ payload))` (recyclable).
//!
//! Two implementations compute the same function:
//! - [`software`]: the `crc` crate's table-driven CRC, `no_std`, table size chosen by the
//!   `crc-no-table` (no table, smallest) and `crc-table-16k` (fastest) features; the default is a
//!   1 KiB table.
//! - with the `std` feature, the `crc32c` crate's hardware path (SSE 4.2 / ARMv8 CRC), chosen at
//!   run time.
//!
//! [`crc32c()`] and [`extend`] use the hardware path when it is compiled in.

use crate::format::HOT_PATHS;

/// `kMaskDelta` of LevelDB's `util/crc32c.h`.
pub const MASK_DELTA: u32 = 0xa282_ead8;

/// Masks a CRC for storage, as LevelDB does: a CRC stored next to the data it covers makes
/// computing the CRC of a string that contains embedded CRCs problematic.
///
/// ```
/// assert_eq!(logfmt_core::checksum::mask(0), 0xa282_ead8);
/// assert_eq!(logfmt_core::checksum::mask(0xe306_9283), 0xc78a_b0e5);
/// ```
#[must_use]
#[inline]
pub const fn mask(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(MASK_DELTA)
}

/// Inverts [`mask`].
#[must_use]
#[inline]
pub const fn unmask(masked: u32) -> u32 {
    masked.wrapping_sub(MASK_DELTA).rotate_left(15)
}

/// CRC-32C of `data`.
///
/// ```
/// assert_eq!(logfmt_core::checksum::crc32c(b"123456789"), 0xe306_9283);
/// ```
#[must_use]
#[inline]
pub fn crc32c(data: &[u8]) -> u32 {
    extend(0, data)
}

/// CRC-32C of `a ‖ data`, given `crc = crc32c(a)` (LevelDB's `crc32c::Extend`).
#[must_use]
#[inline]
pub fn extend(crc: u32, data: &[u8]) -> u32 {
    extend_with(crc, data, false)
}

/// [`extend`]; with `inline_three_way`, the hardware path's three-way code is inlined into the
/// caller too (about 20% faster at 100 B to 1 KiB, measured), for loops over large inputs.
/// [`extend`] keeps it out of line: inlined into the hot paths of short records, it slowed
/// 16-byte records by 15%.
#[inline(always)]
fn extend_with(crc: u32, data: &[u8], inline_three_way: bool) -> u32 {
    #[cfg(all(feature = "std", target_arch = "x86_64"))]
    {
        if data.len() <= hardware::SHORT && hardware::available() {
            return hardware::extend_short(crc, data, inline_three_way);
        }
    }
    let _ = inline_three_way;
    #[cfg(feature = "std")]
    {
        ::crc32c::crc32c_append(crc, data)
    }
    #[cfg(not(feature = "std"))]
    {
        software::extend(crc, data)
    }
}

/// Copies `src` into `dst` (the caller makes their lengths equal) and returns the CRC-32C of
/// `a ‖ src`, given `crc = crc32c(a)`.
///
/// On hosts the two run piece by piece, so that the checksum reads each piece from L1 right
/// after the copy brought it there, while the copy's stores drain: `cargo xtask bench` measured
/// writes of 32 KiB and 1 MiB records going from about 65% to about 90% of a bare `memcpy`
/// of the same payloads (the separate passes read the payload twice from L3/DRAM). On bare
/// metal, a copy then a checksum (smallest code).
#[inline(always)]
pub(crate) fn extend_copy(crc: u32, src: &[u8], dst: &mut [u8]) -> u32 {
    /// Copy-then-checksum pieces: 256 bytes measured best (128 to 4096 tried).
    const PIECE: usize = 256;
    let Some(dst) = dst.get_mut(..src.len()) else {
        return extend(crc, src);
    };
    if !HOT_PATHS || src.len() <= PIECE {
        dst.copy_from_slice(src);
        return extend(crc, src);
    }
    let mut crc = crc;
    for (src, dst) in src.chunks(PIECE).zip(dst.chunks_mut(PIECE)) {
        dst.copy_from_slice(src);
        crc = extend_with(crc, src, true);
    }
    crc
}

/// The SSE 4.2 `crc32` instruction, inlined, for inputs up to 4 KiB, where the `crc32c` crate's
/// general entry point costs more in dispatch than the checksum itself (measured with
/// `cargo xtask bench`: about 14 ns per 16-byte call through the crate, 3 ns here). Inputs of
/// 64 bytes and more run as three interleaved streams (the instruction's latency is three
/// times its throughput), joined with carry-less multiplications by `x^n mod P`. Longer inputs
/// go to the crate.
#[cfg(all(feature = "std", target_arch = "x86_64"))]
mod hardware {
    use core::arch::x86_64::{
        _mm_clmulepi64_si128, _mm_crc32_u8, _mm_crc32_u16, _mm_crc32_u32, _mm_crc32_u64,
        _mm_cvtsi64_si128, _mm_cvtsi128_si64,
    };

    /// Inputs up to this length take the inlined paths.
    pub(super) const SHORT: usize = 4096;

    /// Longest stream of the three-way path, in 8-byte words.
    const MAX_WORDS: usize = SHORT / 24;

    /// `x^n mod P` for the reflected CRC-32C polynomial, as the register represents it.
    const fn times_x(mut r: u32, n: usize) -> u32 {
        let mut i = 0;
        while i < n {
            r = (r >> 1) ^ if r & 1 == 1 { 0x82f6_3b78 } else { 0 };
            i += 1;
        }
        r
    }

    /// `SHIFT[w] = (x^(64w − 33) mod P, x^(128w − 33) mod P)`: multiplying a register by one
    /// of them (carry-less) and reducing with `crc32(0, ·)` advances it over `w` or `2w` words
    /// of zeros.
    const SHIFT: [(u32, u32); MAX_WORDS + 1] = {
        let mut table = [(0u32, 0u32); MAX_WORDS + 1];
        // x^31 is the register value 1.
        let mut one = 1u32;
        let mut two = times_x(1, 64);
        let mut w = 1;
        while w <= MAX_WORDS {
            table[w] = (one, two);
            one = times_x(one, 64);
            two = times_x(two, 128);
            w += 1;
        }
        table
    };

    /// Whether the CPU has SSE 4.2 and carry-less multiplication (a cached check).
    #[inline]
    pub(super) fn available() -> bool {
        (cfg!(target_feature = "sse4.2") && cfg!(target_feature = "pclmulqdq"))
            || (std::is_x86_feature_detected!("sse4.2")
                && std::is_x86_feature_detected!("pclmulqdq"))
    }

    /// CRC-32C of `a ‖ data` given `crc = crc32c(a)`; the caller has checked [`available`].
    /// Short inputs run one chain inlined into the caller; longer ones the three-way path,
    /// inlined too if `inline_three_way`.
    #[inline(always)]
    pub(super) fn extend_short(crc: u32, data: &[u8], inline_three_way: bool) -> u32 {
        #[allow(unsafe_code)]
        // SAFETY: these functions only need SSE 4.2 and PCLMULQDQ, which `available()`
        // confirmed at run time (or the build enables them for every function).
        unsafe {
            if data.len() < THREE_WAY_MIN {
                !finish(u64::from(!crc), data)
            } else if inline_three_way {
                three_way(crc, data)
            } else {
                three_way_outlined(crc, data)
            }
        }
    }

    /// [`three_way`], out of line.
    #[target_feature(enable = "sse4.2,pclmulqdq")]
    #[inline(never)]
    fn three_way_outlined(crc: u32, data: &[u8]) -> u32 {
        three_way(crc, data)
    }

    /// The shortest input of the three-way path: three streams of three words.
    const THREE_WAY_MIN: usize = 72;

    /// Advances `register` over `words` words of zeros, carry-lessly.
    #[target_feature(enable = "sse4.2,pclmulqdq")]
    #[inline]
    fn times(register: u64, factor: u32) -> u64 {
        let product = _mm_clmulepi64_si128(
            _mm_cvtsi64_si128(register as i64),
            _mm_cvtsi64_si128(i64::from(factor)),
            0,
        );
        _mm_cvtsi128_si64(product) as u64
    }

    /// Three interleaved chains over the first `3 × 8w` bytes (from 72 bytes on), joined, then
    /// one chain.
    #[target_feature(enable = "sse4.2,pclmulqdq")]
    #[inline]
    fn three_way(crc: u32, data: &[u8]) -> u32 {
        let mut state = u64::from(!crc);
        let mut data = data;
        let words = data.len() / 24;
        if (3..=MAX_WORDS).contains(&words) {
            let stream = words * 8;
            let (a, rest) = data.split_at(stream);
            let (b, rest) = rest.split_at(stream);
            let (c, rest) = rest.split_at(stream);
            let (mut x, mut y, mut z) = (state, 0u64, 0u64);
            let (a, b, c) = (
                a.as_chunks::<8>().0,
                b.as_chunks::<8>().0,
                c.as_chunks::<8>().0,
            );
            // Each stream has exactly `words` words: indexing needs no checks.
            let (a, b, c) = (&a[..words], &b[..words], &c[..words]);
            for i in 0..words {
                x = _mm_crc32_u64(x, u64::from_le_bytes(a[i]));
                y = _mm_crc32_u64(y, u64::from_le_bytes(b[i]));
                z = _mm_crc32_u64(z, u64::from_le_bytes(c[i]));
            }
            let (one, two) = SHIFT[words];
            state = _mm_crc32_u64(0, times(x, two) ^ times(y, one)) ^ z;
            data = rest;
        }
        !finish(state, data)
    }

    /// Runs the register over `data` in one chain; returns the register (not inverted).
    #[target_feature(enable = "sse4.2,pclmulqdq")]
    #[inline]
    fn finish(state: u64, data: &[u8]) -> u32 {
        let mut state = state;
        let (words, mut rest) = data.as_chunks::<8>();
        for w in words {
            state = _mm_crc32_u64(state, u64::from_le_bytes(*w));
        }
        let mut state = state as u32;
        if let Some((word, tail)) = rest.split_first_chunk::<4>() {
            state = _mm_crc32_u32(state, u32::from_le_bytes(*word));
            rest = tail;
        }
        if let Some((half, tail)) = rest.split_first_chunk::<2>() {
            state = _mm_crc32_u16(state, u16::from_le_bytes(*half));
            rest = tail;
        }
        if let Some(&byte) = rest.first() {
            state = _mm_crc32_u8(state, byte);
        }
        state
    }
}

/// The portable, `no_std` CRC-32C.
pub mod software {
    // The table: 16 KiB with `crc-table-16k` (with or without `crc-no-table`), none with
    // `crc-no-table` alone, else the default 1 KiB table below. Each case is one `cfg`.
    #[cfg(feature = "crc-table-16k")]
    type Table = crc::Table<16>;
    #[cfg(all(feature = "crc-no-table", not(feature = "crc-table-16k")))]
    type Table = crc::NoTable;

    #[cfg(any(feature = "crc-no-table", feature = "crc-table-16k"))]
    const CASTAGNOLI: crc::Crc<u32, Table> = crc::Crc::<u32, Table>::new(&crc::CRC_32_ISCSI);

    /// The default: the byte-at-a-time table (1 KiB), built at compile time. Its loop is a few
    /// instructions, smaller in flash than the `crc` crate's general one.
    #[cfg(not(any(feature = "crc-no-table", feature = "crc-table-16k")))]
    const TABLE: [u32; 256] = {
        let mut table = [0u32; 256];
        let mut i = 0;
        while i < 256 {
            let mut r = i as u32;
            let mut bit = 0;
            while bit < 8 {
                r = (r >> 1) ^ if r & 1 == 1 { 0x82f6_3b78 } else { 0 };
                bit += 1;
            }
            table[i] = r;
            i += 1;
        }
        table
    };

    /// CRC-32C of `data`.
    #[must_use]
    pub fn crc32c(data: &[u8]) -> u32 {
        extend(0, data)
    }

    /// CRC-32C of `a ‖ data`, given `crc = crc32c(a)`.
    ///
    /// Never inlined: in firmware, one copy of the loop serves every caller (measured by
    /// `cargo xtask size`; the host's hardware path is elsewhere).
    #[must_use]
    #[inline(never)]
    pub fn extend(crc: u32, data: &[u8]) -> u32 {
        #[cfg(not(any(feature = "crc-no-table", feature = "crc-table-16k")))]
        {
            let mut register = !crc;
            for &byte in data {
                register = TABLE[usize::from((register as u8) ^ byte)] ^ (register >> 8);
            }
            !register
        }
        #[cfg(any(feature = "crc-no-table", feature = "crc-table-16k"))]
        {
            // The `crc` crate takes the initial register value in the algorithm's unreflected
            // convention; a finished CRC-32C is the inverted, reflected register.
            let mut digest = CASTAGNOLI.digest_with_initial((!crc).reverse_bits());
            digest.update(data);
            digest.finalize()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_value() {
        assert_eq!(crc32c(b"123456789"), 0xe306_9283);
        assert_eq!(software::crc32c(b"123456789"), 0xe306_9283);
    }

    #[test]
    fn rfc3720_vectors() {
        let zeros = [0u8; 32];
        let ones = [0xffu8; 32];
        let mut ascending = [0u8; 32];
        let mut descending = [0u8; 32];
        for i in 0..32u8 {
            ascending[usize::from(i)] = i;
            descending[usize::from(i)] = 31 - i;
        }
        let pdu: [u8; 48] = [
            0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x14,
            0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00,
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        ];
        for f in [crc32c, software::crc32c] {
            assert_eq!(f(&zeros), 0x8a91_36aa);
            assert_eq!(f(&ones), 0x62a8_ab43);
            assert_eq!(f(&ascending), 0x46dd_794e);
            assert_eq!(f(&descending), 0x113f_db5c);
            assert_eq!(f(&pdu), 0xd996_3a56);
        }
    }

    #[test]
    fn mask_examples() {
        assert_eq!(mask(0), 0xa282_ead8);
        assert_eq!(mask(0xe306_9283), 0xc78a_b0e5);
        assert_eq!(unmask(mask(0xe306_9283)), 0xe306_9283);
    }

    #[test]
    fn type_byte_crcs() {
        // LevelDB's writer precomputes these (log_writer.cc InitTypeCrc).
        let expected = [
            0x527d_5351,
            0xa016_d052,
            0xb346_23a6,
            0x412d_a0a5,
            0x95e7_c44e,
        ];
        for (t, want) in (0u8..).zip(expected) {
            assert_eq!(crc32c(&[t]), want);
            assert_eq!(software::crc32c(&[t]), want);
        }
    }

    proptest::proptest! {
        #[test]
        fn mask_roundtrip(c: u32) {
            proptest::prop_assert_eq!(unmask(mask(c)), c);
        }

        #[test]
        fn software_matches_reference(
            data in proptest::collection::vec(proptest::num::u8::ANY, 0..5000),
            split in 0usize..5000,
        ) {
            let reference = ::crc32c::crc32c(&data);
            proptest::prop_assert_eq!(software::crc32c(&data), reference);
            proptest::prop_assert_eq!(crc32c(&data), reference);
            let split = split.min(data.len());
            let (a, b) = data.split_at(split);
            proptest::prop_assert_eq!(software::extend(software::crc32c(a), b), reference);
            proptest::prop_assert_eq!(extend(crc32c(a), b), reference);
        }

        #[test]
        fn extend_copy_copies_and_checksums(
            data in proptest::collection::vec(proptest::num::u8::ANY, 0..5000),
            split in 0usize..5000,
        ) {
            let split = split.min(data.len());
            let (a, b) = data.split_at(split);
            let mut copy = std::vec![0u8; b.len()];
            proptest::prop_assert_eq!(extend_copy(crc32c(a), b, &mut copy), ::crc32c::crc32c(&data));
            proptest::prop_assert_eq!(&copy[..], b);
        }
    }
}
