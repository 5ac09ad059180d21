//! CRC-32C by carry-less folding (Intel's "Fast CRC Computation for Generic Polynomials Using
//! PCLMULQDQ", in the reflected form): the input is read in 16-byte lanes, each kept as a
//! 128-bit remainder that is multiplied forward over the lanes that follow (two carry-less
//! multiplications by constants `x^n mod P`) and added into the lane it lands on; at the end
//! the lanes are folded into one and the SSE 4.2 `crc32` instruction reduces it to 32 bits.
//!
//! Three widths: four 128-bit accumulators (PCLMULQDQ, 64 bytes a step), four 256-bit ones
//! (VPCLMULQDQ with AVX2, 128 bytes) and four 512-bit ones (VPCLMULQDQ with AVX-512,
//! 256 bytes). With `COPY`, each function also stores what it loads into `dst`: the copy and
//! the checksum read the source once.
//!
//! # The constants
//! A lane's 128 bits stand for a polynomial of degree < 128 whose first byte holds the highest
//! terms (reflected). Its low 64 bits `H` weigh `x^64`, its high 64 bits `L` weigh 1. Moving the
//! lane `d` bits forward multiplies it by `x^d`: `H·x^(64+d) + L·x^d`. A carry-less product of a
//! 64-bit reflected value by a 32-bit CRC register value (bit `i` is `x^(31−i)`) lands in the
//! 128-bit lane multiplied by `x^33` more, so the factors are the registers of
//! `x^(d+31) mod P` (for `H`) and `x^(d−33) mod P` (for `L`): [`keys`]`(d)`. Every one is
//! computed at compile time by [`times_x`](super::times_x), and the tests check each path
//! against the table CRC.

use core::arch::x86_64::{
    __m128i, _mm_clmulepi64_si128, _mm_crc32_u64, _mm_cvtsi32_si128, _mm_cvtsi128_si64,
    _mm_extract_epi64, _mm_loadu_si128, _mm_set_epi64x, _mm_storeu_si128, _mm_xor_si128,
};
#[cfg(not(miri))]
use core::arch::x86_64::{
    __m256i, __m512i, _mm256_castsi256_si128, _mm256_clmulepi64_epi128, _mm256_extracti128_si256,
    _mm256_loadu_si256, _mm256_set_epi64x, _mm256_storeu_si256, _mm256_xor_si256,
    _mm256_zextsi128_si256, _mm512_castsi512_si128, _mm512_clmulepi64_epi128,
    _mm512_extracti32x4_epi32, _mm512_loadu_si512, _mm512_set_epi64, _mm512_storeu_si512,
    _mm512_ternarylogic_epi64, _mm512_xor_si512, _mm512_zextsi128_si512,
};

use super::{three_way, times_x};

/// The two factors that move a 128-bit lane `bits` forward: `(x^(bits+31), x^(bits−33))`
/// mod P as CRC registers, for the lane's low and high 64 bits.
const fn keys(bits: usize) -> (i64, i64) {
    (times_x(1, bits) as i64, times_x(1, bits - 64) as i64)
}

/// One lane to the next (16 bytes).
const K128: (i64, i64) = keys(128);
/// Two, three lanes on.
const K256: (i64, i64) = keys(256);
const K384: (i64, i64) = keys(384);
/// Four lanes (64 bytes): the step of the 128-bit loop, and between the 512-bit registers.
const K512: (i64, i64) = keys(512);
/// 128 bytes: the 256-bit loop's step; 768 bits, three 256-bit registers.
#[cfg(not(miri))]
const K1024: (i64, i64) = keys(1024);
#[cfg(not(miri))]
const K768: (i64, i64) = keys(768);
/// 256 bytes: the 512-bit loop's step; 1536 bits, three 512-bit registers.
#[cfg(not(miri))]
const K2048: (i64, i64) = keys(2048);
#[cfg(not(miri))]
const K1536: (i64, i64) = keys(1536);

/// The factors in a 128-bit register, low lane half first.
#[target_feature(enable = "sse4.2,pclmulqdq")]
#[inline]
fn k128(keys: (i64, i64)) -> __m128i {
    _mm_set_epi64x(keys.1, keys.0)
}

/// `x` moved forward by its factors `k`, plus `y`.
#[target_feature(enable = "sse4.2,pclmulqdq")]
#[inline]
fn fold(x: __m128i, k: __m128i, y: __m128i) -> __m128i {
    let low = _mm_clmulepi64_si128(x, k, 0x00);
    let high = _mm_clmulepi64_si128(x, k, 0x11);
    _mm_xor_si128(_mm_xor_si128(low, high), y)
}

/// Loads 16 bytes.
#[target_feature(enable = "sse4.2,pclmulqdq")]
#[inline]
fn load(bytes: &[u8; 16]) -> __m128i {
    // SAFETY: `bytes` is valid for reading 16 bytes; the load has no alignment requirement.
    unsafe { _mm_loadu_si128(bytes.as_ptr().cast()) }
}

/// Stores 16 bytes.
#[target_feature(enable = "sse4.2,pclmulqdq")]
#[inline]
fn store(bytes: &mut [u8; 16], value: __m128i) {
    // SAFETY: `bytes` is valid for writing 16 bytes; the store has no alignment requirement.
    unsafe { _mm_storeu_si128(bytes.as_mut_ptr().cast(), value) }
}

/// The CRC register `!crc` as the first 32 bits of a lane: added to the input's first bytes,
/// it makes the register start from zero.
#[target_feature(enable = "sse4.2,pclmulqdq")]
#[inline]
fn initial(crc: u32) -> __m128i {
    _mm_cvtsi32_si128(!crc as i32)
}

/// The 16-byte pieces of `src` one after the other onto `x`, copied into `dst` with `COPY`
/// (the caller made `dst` as long as `src`, or empty without `COPY`); then the register of `x`
/// and the bytes left over (under 16), copied too, reduced with the `crc32` instruction.
#[target_feature(enable = "sse4.2,pclmulqdq")]
#[inline]
fn finish<const COPY: bool>(x: __m128i, src: &[u8], dst: &mut [u8]) -> u32 {
    let k = k128(K128);
    let (pieces, tail) = src.as_chunks::<16>();
    let (out, out_tail) = dst.as_chunks_mut::<16>();
    let mut x = x;
    for (i, piece) in pieces.iter().enumerate() {
        let y = load(piece);
        if COPY && let Some(out) = out.get_mut(i) {
            store(out, y);
        }
        x = fold(x, k, y);
    }
    if COPY && let Some(out_tail) = out_tail.get_mut(..tail.len()) {
        out_tail.copy_from_slice(tail);
    }
    let state = _mm_crc32_u64(0, _mm_cvtsi128_si64(x) as u64);
    let state = _mm_crc32_u64(state, _mm_extract_epi64::<1>(x) as u64);
    !three_way::finish(state, tail)
}

/// CRC-32C of `a ‖ src` given `crc = crc32c(a)`, four 128-bit lanes at a time; with `COPY`,
/// `src` copied into `dst` too (the caller made their lengths equal; `dst` is empty without
/// `COPY`).
#[target_feature(enable = "sse4.2,pclmulqdq")]
pub(super) fn fold128<const COPY: bool>(crc: u32, src: &[u8], dst: &mut [u8]) -> u32 {
    let (blocks, tail) = src.as_chunks::<64>();
    let (dst_blocks, dst_tail) = dst.as_chunks_mut::<64>();
    let Some((first, rest)) = blocks.split_first().filter(|_| blocks.len() >= 2) else {
        return short::<COPY>(crc, src, dst);
    };
    let lanes = |block: &[u8; 64]| -> [__m128i; 4] {
        let (l, _) = block.as_chunks::<16>();
        [load(&l[0]), load(&l[1]), load(&l[2]), load(&l[3])]
    };
    let put = |out: Option<&mut [u8; 64]>, v: [__m128i; 4]| {
        if let Some(out) = out {
            prefetch(out, STORE_AHEAD);
            for (lane, v) in out.as_chunks_mut::<16>().0.iter_mut().zip(v) {
                store(lane, v);
            }
        }
    };
    let mut acc = lanes(first);
    if COPY {
        put(dst_blocks.get_mut(0), acc);
    }
    acc[0] = _mm_xor_si128(acc[0], initial(crc));
    let k = k128(K512);
    for (i, block) in rest.iter().enumerate() {
        prefetch(block, AHEAD);
        let v = lanes(block);
        if COPY {
            put(dst_blocks.get_mut(i + 1), v);
        }
        acc = [
            fold(acc[0], k, v[0]),
            fold(acc[1], k, v[1]),
            fold(acc[2], k, v[2]),
            fold(acc[3], k, v[3]),
        ];
    }
    let x = fold(
        acc[0],
        k128(K384),
        fold(acc[1], k128(K256), fold(acc[2], k128(K128), acc[3])),
    );
    finish::<COPY>(x, tail, dst_tail)
}

/// [`fold128`] for inputs under 128 bytes: 16 bytes a step, or the `crc32` instruction alone
/// under 16 bytes.
#[target_feature(enable = "sse4.2,pclmulqdq")]
fn short<const COPY: bool>(crc: u32, src: &[u8], dst: &mut [u8]) -> u32 {
    let Some((first, rest)) = src.split_first_chunk::<16>() else {
        if COPY && let Some(dst) = dst.get_mut(..src.len()) {
            dst.copy_from_slice(src);
        }
        return !three_way::finish(u64::from(!crc), src);
    };
    let x = load(first);
    let dst_rest = match dst.split_first_chunk_mut::<16>() {
        Some((dst_first, dst_rest)) => {
            if COPY {
                store(dst_first, x);
            }
            dst_rest
        }
        None => dst,
    };
    finish::<COPY>(_mm_xor_si128(x, initial(crc)), rest, dst_rest)
}

/// How far ahead of the block being folded each folding path asks for the source's next
/// lines: far enough that a record's folding runs over data already on its way from DRAM,
/// past the 4 KiB pages where the hardware prefetcher stops. Measured (`cargo xtask bench`'s
/// cases, AMD EPYC Zen 3, logs in DRAM, ns a record, medians of 7 rounds side by side), the
/// 256-bit path: reading 1 KiB records 94 with no prefetch, 85 / 81 / 75 / 85 asking 512 /
/// 1024 / 2048 / 4096 bytes ahead; 32 KiB records 3528, then 3323 / 2938 / 2786 / 2882. The
/// 512-bit path, Intel Xeon (family 6 model 207), reads of `logfmt-bench`'s 128 MiB logs, ns
/// a record, medians of 9 runs of 5 passes: 1 KiB 99.7 without, 79.0 with; 32 KiB 3 522 and
/// 2 796; 1 MiB 125 980 and 107 188.
const AHEAD: usize = 2048;

/// How far ahead of the block being stored the folding paths with `COPY` ask for the
/// destination's lines. A store to a line not in cache first fetches it (a read for
/// ownership), and stores leave the core in order: without a prefetch, a copy into memory not
/// in cache waits on one line after another, where a `memcpy` (`rep movsb`, which needs no
/// read) streams. Measured on an Intel Xeon (family 6 model 207, 2 vCPUs), the 512-bit path
/// writing `logfmt-bench`'s 128 MiB logs, ns a record, medians of 9 runs of 5 passes, beside
/// a `memcpy` of the same payloads in the same runs (the copy bound):
///
/// | record | no prefetch | 2 KiB ahead | 4 KiB | 8 KiB | `memcpy` |
/// |---:|---:|---:|---:|---:|---:|
/// | 1 KiB | 163.5 | 90.6 | 95.2 | 92.9 | 179.4 |
/// | 32 KiB | 5 656 | 2 795 | 2 746 | 2 736 | 3 277 |
/// | 1 MiB | 190 485 | 90 761 | 91 227 | 92 500 | 118 040 |
///
/// The fused loop went from 1.6-1.7 times the copy bound to under it. In cache, the prefetches
/// cost a few instructions a block (a 1 KiB copy and checksum in L1: 20.1 ns without, 22.2
/// with). `prefetchw` (asking for the line to write) was slower than a plain prefetch at
/// every distance, in a loop of the same shape.
const STORE_AHEAD: usize = 4096;

/// Asks for the cache lines of the `N` bytes `ahead` bytes past the start of `block` (which
/// may lie past the input: a prefetch is a hint, which never faults nor reads into the
/// program).
#[target_feature(enable = "sse4.2,pclmulqdq")]
#[inline]
fn prefetch<const N: usize>(block: &[u8; N], ahead: usize) {
    #[cfg(not(miri))]
    {
        use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let at = block.as_ptr().wrapping_add(ahead).cast::<i8>();
        let mut line = 0;
        while line < N {
            // SAFETY: a prefetch is a hint: it never faults and reads nothing into the program,
            // at any address. (A safe function from Rust 1.90 on; an unsafe one at this crate's
            // MSRV.)
            #[allow(unused_unsafe)]
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(at.wrapping_add(line));
            }
            line += 64;
        }
    }
    #[cfg(miri)]
    let _ = (block, ahead);
}

/// Loads 32 bytes.
#[cfg(not(miri))]
#[target_feature(enable = "avx2,vpclmulqdq,sse4.2,pclmulqdq")]
#[inline]
fn load256(bytes: &[u8; 32]) -> __m256i {
    // SAFETY: `bytes` is valid for reading 32 bytes; the load has no alignment requirement.
    unsafe { _mm256_loadu_si256(bytes.as_ptr().cast()) }
}

/// Stores 32 bytes.
#[cfg(not(miri))]
#[target_feature(enable = "avx2,vpclmulqdq,sse4.2,pclmulqdq")]
#[inline]
fn store256(bytes: &mut [u8; 32], value: __m256i) {
    // SAFETY: `bytes` is valid for writing 32 bytes; the store has no alignment requirement.
    unsafe { _mm256_storeu_si256(bytes.as_mut_ptr().cast(), value) }
}

/// The factors of each 128-bit lane of a 256-bit register.
#[cfg(not(miri))]
#[target_feature(enable = "avx2,vpclmulqdq,sse4.2,pclmulqdq")]
#[inline]
fn k256(keys: (i64, i64)) -> __m256i {
    _mm256_set_epi64x(keys.1, keys.0, keys.1, keys.0)
}

/// [`fold`] on both lanes of a 256-bit register.
#[cfg(not(miri))]
#[target_feature(enable = "avx2,vpclmulqdq,sse4.2,pclmulqdq")]
#[inline]
fn fold256x(x: __m256i, k: __m256i, y: __m256i) -> __m256i {
    let low = _mm256_clmulepi64_epi128(x, k, 0x00);
    let high = _mm256_clmulepi64_epi128(x, k, 0x11);
    _mm256_xor_si256(_mm256_xor_si256(low, high), y)
}

/// [`fold128`] with four 256-bit accumulators (128 bytes a step): VPCLMULQDQ and AVX2.
#[cfg(not(miri))]
#[target_feature(enable = "avx2,vpclmulqdq,sse4.2,pclmulqdq")]
pub(super) fn fold256<const COPY: bool>(crc: u32, src: &[u8], dst: &mut [u8]) -> u32 {
    let (blocks, tail) = src.as_chunks::<128>();
    let (dst_blocks, dst_tail) = dst.as_chunks_mut::<128>();
    let Some((first, rest)) = blocks.split_first().filter(|_| blocks.len() >= 2) else {
        return fold128::<COPY>(crc, src, dst);
    };
    let lanes = |block: &[u8; 128]| -> [__m256i; 4] {
        let (l, _) = block.as_chunks::<32>();
        [
            load256(&l[0]),
            load256(&l[1]),
            load256(&l[2]),
            load256(&l[3]),
        ]
    };
    let put = |out: Option<&mut [u8; 128]>, v: [__m256i; 4]| {
        if let Some(out) = out {
            prefetch(out, STORE_AHEAD);
            for (lane, v) in out.as_chunks_mut::<32>().0.iter_mut().zip(v) {
                store256(lane, v);
            }
        }
    };
    let mut acc = lanes(first);
    if COPY {
        put(dst_blocks.get_mut(0), acc);
    }
    acc[0] = _mm256_xor_si256(acc[0], _mm256_zextsi128_si256(initial(crc)));
    let k = k256(K1024);
    for (i, block) in rest.iter().enumerate() {
        prefetch(block, AHEAD);
        let v = lanes(block);
        if COPY {
            put(dst_blocks.get_mut(i + 1), v);
        }
        acc = [
            fold256x(acc[0], k, v[0]),
            fold256x(acc[1], k, v[1]),
            fold256x(acc[2], k, v[2]),
            fold256x(acc[3], k, v[3]),
        ];
    }
    let x = fold256x(
        acc[0],
        k256(K768),
        fold256x(acc[1], k256(K512), fold256x(acc[2], k256(K256), acc[3])),
    );
    let x = fold(
        _mm256_castsi256_si128(x),
        k128(K128),
        _mm256_extracti128_si256::<1>(x),
    );
    finish::<COPY>(x, tail, dst_tail)
}

/// Loads 64 bytes.
#[cfg(not(miri))]
#[target_feature(enable = "avx512f,avx2,vpclmulqdq,sse4.2,pclmulqdq")]
#[inline]
fn load512(bytes: &[u8; 64]) -> __m512i {
    // SAFETY: `bytes` is valid for reading 64 bytes; the load has no alignment requirement.
    unsafe { _mm512_loadu_si512(bytes.as_ptr().cast()) }
}

/// Stores 64 bytes.
#[cfg(not(miri))]
#[target_feature(enable = "avx512f,avx2,vpclmulqdq,sse4.2,pclmulqdq")]
#[inline]
fn store512(bytes: &mut [u8; 64], value: __m512i) {
    // SAFETY: `bytes` is valid for writing 64 bytes; the store has no alignment requirement.
    unsafe { _mm512_storeu_si512(bytes.as_mut_ptr().cast(), value) }
}

/// The factors of each 128-bit lane of a 512-bit register.
#[cfg(not(miri))]
#[target_feature(enable = "avx512f,avx2,vpclmulqdq,sse4.2,pclmulqdq")]
#[inline]
fn k512(keys: (i64, i64)) -> __m512i {
    let (h, l) = keys;
    _mm512_set_epi64(l, h, l, h, l, h, l, h)
}

/// [`fold`] on the four lanes of a 512-bit register (one three-way XOR).
#[cfg(not(miri))]
#[target_feature(enable = "avx512f,avx2,vpclmulqdq,sse4.2,pclmulqdq")]
#[inline]
fn fold512x(x: __m512i, k: __m512i, y: __m512i) -> __m512i {
    let low = _mm512_clmulepi64_epi128(x, k, 0x00);
    let high = _mm512_clmulepi64_epi128(x, k, 0x11);
    _mm512_ternarylogic_epi64::<0x96>(low, high, y)
}

/// [`fold128`] with four 512-bit accumulators (256 bytes a step): VPCLMULQDQ and AVX-512.
#[cfg(not(miri))]
#[target_feature(enable = "avx512f,avx2,vpclmulqdq,sse4.2,pclmulqdq")]
pub(super) fn fold512<const COPY: bool>(crc: u32, src: &[u8], dst: &mut [u8]) -> u32 {
    let (blocks, tail) = src.as_chunks::<256>();
    let (dst_blocks, dst_tail) = dst.as_chunks_mut::<256>();
    let Some((first, rest)) = blocks.split_first().filter(|_| blocks.len() >= 2) else {
        return fold256::<COPY>(crc, src, dst);
    };
    let lanes = |block: &[u8; 256]| -> [__m512i; 4] {
        let (l, _) = block.as_chunks::<64>();
        [
            load512(&l[0]),
            load512(&l[1]),
            load512(&l[2]),
            load512(&l[3]),
        ]
    };
    let put = |out: Option<&mut [u8; 256]>, v: [__m512i; 4]| {
        if let Some(out) = out {
            prefetch(out, STORE_AHEAD);
            for (lane, v) in out.as_chunks_mut::<64>().0.iter_mut().zip(v) {
                store512(lane, v);
            }
        }
    };
    let mut acc = lanes(first);
    if COPY {
        put(dst_blocks.get_mut(0), acc);
    }
    acc[0] = _mm512_xor_si512(acc[0], _mm512_zextsi128_si512(initial(crc)));
    let k = k512(K2048);
    for (i, block) in rest.iter().enumerate() {
        prefetch(block, AHEAD);
        let v = lanes(block);
        if COPY {
            put(dst_blocks.get_mut(i + 1), v);
        }
        acc = [
            fold512x(acc[0], k, v[0]),
            fold512x(acc[1], k, v[1]),
            fold512x(acc[2], k, v[2]),
            fold512x(acc[3], k, v[3]),
        ];
    }
    let z = fold512x(
        acc[0],
        k512(K1536),
        fold512x(acc[1], k512(K1024), fold512x(acc[2], k512(K512), acc[3])),
    );
    let lane = |i| match i {
        0 => _mm512_castsi512_si128(z),
        1 => _mm512_extracti32x4_epi32::<1>(z),
        2 => _mm512_extracti32x4_epi32::<2>(z),
        _ => _mm512_extracti32x4_epi32::<3>(z),
    };
    let x = fold(
        lane(0),
        k128(K384),
        fold(lane(1), k128(K256), fold(lane(2), k128(K128), lane(3))),
    );
    finish::<COPY>(x, tail, dst_tail)
}
