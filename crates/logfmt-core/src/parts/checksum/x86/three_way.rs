//! The SSE 4.2 `crc32` instruction, for inputs shorter than the folding paths take: one chain
//! under 128 bytes, inlined into the caller; from 128 bytes on, three interleaved chains (the
//! instruction's latency is three times its throughput) joined with carry-less
//! multiplications by `x^n mod P`.

use core::arch::asm;
use core::arch::x86_64::{
    _mm_clmulepi64_si128, _mm_crc32_u8, _mm_crc32_u16, _mm_crc32_u32, _mm_crc32_u64,
    _mm_cvtsi64_si128, _mm_cvtsi128_si64,
};

use super::times_x;

/// Longest stream of the three-way path, in 8-byte words: longer inputs take the three-way
/// path over their first `3 × 8 × MAX_WORDS` bytes at a time.
const MAX_WORDS: usize = 4096 / 24;

/// The shortest input of the three-way path; shorter ones run one chain, inlined.
///
/// In the record loops, the records' checksums are independent (a reader compares, a writer
/// stores), so the out-of-order core runs one record's chain while the next record is parsed
/// or laid out: what counts there is instructions, not one chain's latency, and the three-way
/// path adds a division, two carry-less multiplications, their moves and a call. Measured with
/// `cargo xtask bench`'s cases (AMD EPYC Zen 3; logs in cache, 7 rounds side by side, ns a
/// record, medians), one inline chain against three chains from 72 bytes on: 100-byte reads
/// 14.6 / 17.1, writes 17.6 / 18.6; 200-byte records keep three chains (one chain to 256
/// bytes: 26.9 / 24.2 ns reads, 36.0 / 32.3 writes, fastest passes). Alone, a dependent chain
/// of checksums (each `crc` the one before) favours three chains from 72 bytes (100 bytes: 10.1
/// against 12.9 ns); such callers are rare, and they still get three chains from 128 bytes.
pub(super) const THREE_WAY_MIN: usize = 128;

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

/// [`three_way`], out of line.
#[target_feature(enable = "sse4.2,pclmulqdq")]
#[inline(never)]
pub(super) fn three_way_outlined(crc: u32, data: &[u8]) -> u32 {
    three_way(crc, data)
}

/// Copies `src` into `dst` (as long) in pieces of `piece` bytes, each checksummed by
/// [`three_way`] (inlined) right after its copy; returns the CRC-32C of `a ‖ src` given
/// `crc = crc32c(a)`.
#[target_feature(enable = "sse4.2,pclmulqdq")]
pub(super) fn pieces(crc: u32, src: &[u8], dst: &mut [u8], piece: usize) -> u32 {
    let mut crc = crc;
    for (src, dst) in src.chunks(piece).zip(dst.chunks_mut(piece)) {
        dst.copy_from_slice(src);
        crc = three_way(crc, src);
    }
    crc
}

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

/// CRC-32C of `a ‖ data` given `crc = crc32c(a)`: three interleaved chains over the first
/// `3 × 8w` bytes (from 72 bytes to 4 KiB), joined, then one chain; longer inputs 4 KiB at a
/// time.
#[target_feature(enable = "sse4.2,pclmulqdq")]
#[inline]
pub(super) fn three_way(crc: u32, data: &[u8]) -> u32 {
    let mut crc = crc;
    let mut data = data;
    while data.len() > 3 * 8 * MAX_WORDS {
        let (piece, rest) = data.split_at(3 * 8 * MAX_WORDS);
        crc = three_way_short(crc, piece);
        data = rest;
    }
    three_way_short(crc, data)
}

/// [`three_way`] for inputs up to `3 × 8 × MAX_WORDS` bytes.
#[target_feature(enable = "sse4.2,pclmulqdq")]
#[inline]
fn three_way_short(crc: u32, data: &[u8]) -> u32 {
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

/// [`finish`] written in inline assembly, for callers compiled without SSE 4.2: a
/// `#[target_feature]` function cannot inline into them, and the call it would cost was as long
/// as a 16-byte checksum. The same instructions as [`finish`]'s, so the same register.
///
/// # Safety
/// The CPU has SSE 4.2 (the caller checked, at run time or compile time).
#[inline(always)]
pub(super) unsafe fn finish_inline(state: u64, data: &[u8]) -> u32 {
    let mut state = state;
    // Four words a step, from one pointer: the compiler does not unroll a loop of inline
    // assembly, and a step a word cost three instructions of loop for each `crc32`.
    let (quads, rest) = data.as_chunks::<32>();
    for q in quads {
        // SAFETY: the caller's promise (SSE 4.2); the instructions read the 32 bytes of `q`, a
        // reference to exactly 32 bytes, and write only `state`'s register (not the flags).
        unsafe {
            asm!(
                "crc32 {state}, qword ptr [{q}]",
                "crc32 {state}, qword ptr [{q} + 8]",
                "crc32 {state}, qword ptr [{q} + 16]",
                "crc32 {state}, qword ptr [{q} + 24]",
                state = inout(reg) state,
                q = in(reg) q.as_ptr(),
                options(pure, readonly, nostack, preserves_flags),
            );
        }
    }
    // At most three words are left: two, then one, straight-line (a loop of one `crc32` a
    // step cost three instructions of loop for each, and a 16-byte record's two words went
    // through it).
    let mut rest = rest;
    if let Some((pair, tail)) = rest.split_first_chunk::<16>() {
        // SAFETY: the caller's promise (SSE 4.2); the instructions read the 16 bytes of
        // `pair`, a reference to exactly 16 bytes, and write only `state`'s register (not the
        // flags).
        unsafe {
            asm!(
                "crc32 {state}, qword ptr [{w}]",
                "crc32 {state}, qword ptr [{w} + 8]",
                state = inout(reg) state,
                w = in(reg) pair.as_ptr(),
                options(pure, readonly, nostack, preserves_flags),
            );
        }
        rest = tail;
    }
    if let Some((word, tail)) = rest.split_first_chunk::<8>() {
        // SAFETY: as above, over the 8 bytes of `word`.
        unsafe {
            asm!(
                "crc32 {state}, qword ptr [{w}]",
                state = inout(reg) state,
                w = in(reg) word.as_ptr(),
                options(pure, readonly, nostack, preserves_flags),
            );
        }
        rest = tail;
    }
    let mut state = state as u32;
    if let Some((word, tail)) = rest.split_first_chunk::<4>() {
        // SAFETY: as above, over the 4 bytes of `word`.
        unsafe {
            asm!(
                "crc32 {state:e}, dword ptr [{w}]",
                state = inout(reg) state,
                w = in(reg) word.as_ptr(),
                options(pure, readonly, nostack, preserves_flags),
            );
        }
        rest = tail;
    }
    if let Some((half, tail)) = rest.split_first_chunk::<2>() {
        // SAFETY: as above, over the 2 bytes of `half`.
        unsafe {
            asm!(
                "crc32 {state:e}, word ptr [{w}]",
                state = inout(reg) state,
                w = in(reg) half.as_ptr(),
                options(pure, readonly, nostack, preserves_flags),
            );
        }
        rest = tail;
    }
    if let Some(byte) = rest.first() {
        // SAFETY: as above, over the byte `byte` refers to.
        unsafe {
            asm!(
                "crc32 {state:e}, byte ptr [{w}]",
                state = inout(reg) state,
                w = in(reg) core::ptr::from_ref(byte),
                options(pure, readonly, nostack, preserves_flags),
            );
        }
    }
    state
}

/// Runs the register over `data` in one chain; returns the register (not inverted).
#[target_feature(enable = "sse4.2,pclmulqdq")]
#[inline]
pub(super) fn finish(state: u64, data: &[u8]) -> u32 {
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
