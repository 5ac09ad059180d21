//! The x86-64 CRC-32C engine, and the one place in this crate with `unsafe`: the vector
//! intrinsics need it, since each function is compiled for CPU features the caller must have
//! checked. Every `unsafe` block here is a call into a `#[target_feature]` function after
//! [`level`] confirmed the features, or a 16/32/64-byte unaligned load or store through a
//! reference to exactly that many bytes.
//!
//! Measured need (`logfmt-bench paths`, AMD EPYC Zen 3; figures at [`FOLD_MIN`]): a checksum
//! of data coming from DRAM, as a log read's is, runs at 6.4 GB/s with the `crc32`
//! instruction (its chains stall on each miss) and 12 GB/s folded with VPCLMULQDQ; a copy
//! and a checksum in one folded pass beat a bare `memcpy` of the same bytes there (8.0 against
//! 7.2 GB/s). Safe Rust has neither the `crc32` instruction nor carry-less multiplication.
//!
//! Paths, by input length (the caller of [`short`] and [`long`] picks):
//! - under [`three_way::THREE_WAY_MIN`] (128 bytes): one chain of `crc32` instructions, inlined
//!   into the caller;
//! - up to [`FOLD_MIN`]: three interleaved chains of `crc32` ([`three_way`]);
//! - from [`FOLD_MIN`] on: folding ([`fold`]), as wide as the CPU has (from 16 KiB on with
//!   128-bit PCLMULQDQ alone).
//!
//! The CPU's features are detected once with `std` and cached ([`level`]: after the first
//! call, a load and a compare), and taken from the build's target features without it (bare
//! metal: a compile-time choice). No build flag is needed: a crate that depends on this one
//! gets the same paths. The short chain, which inlines into the record loops of callers built
//! without SSE 4.2, is inline assembly ([`three_way::finish_inline`]): a `#[target_feature]`
//! function cannot inline there, and its call cost as much as a 16-byte checksum. Everything
//! longer runs in `#[target_feature]` functions, out of line (one call a record). `cargo xtask
//! bench --compare-flags` measures this build against one with SSE 4.2 and PCLMULQDQ compiled
//! in.

mod fold;
mod three_way;

#[cfg(all(any(test, feature = "std"), not(miri)))]
use core::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

use super::Path;

/// `r · x^n mod P` for the reflected CRC-32C polynomial, on registers (bit `i` stands for
/// `x^(31−i)`, so the register value 1 is `x^31`).
pub(super) const fn times_x(mut r: u32, n: usize) -> u32 {
    let mut i = 0;
    while i < n {
        r = (r >> 1) ^ if r & 1 == 1 { 0x82f6_3b78 } else { 0 };
        i += 1;
    }
    r
}

/// Inputs from this length on take the folding path, on CPUs with VPCLMULQDQ (256 or 512
/// bits); on CPUs with 128-bit PCLMULQDQ only, from [`SSE_FOLD_MIN`] on.
///
/// Measured with `logfmt-bench paths` (AMD EPYC family 25 model 1, Zen 3: AVX2 and
/// VPCLMULQDQ, no AVX-512; ns a call, medians of 5 passes, a shared and busy machine).
/// In cache, the same input again and again:
///
/// | bytes | crc32 three-way | fold128 | fold256 |
/// |---:|---:|---:|---:|
/// | 128 | 25.7 | 28.1 | 30.1 |
/// | 256 | 20.8 | 27.9 | 17.6 |
/// | 512 | 38.6 | 66.6 | 42.5 |
/// | 1024 | 62.9 | 131 | 65.2 |
/// | 4096 | 179 | 352 | 166 |
/// | 32768 | 1346 | 2727 | 1302 |
///
/// From DRAM (a 64 MiB buffer walked once, in inputs of the length), ns a call:
///
/// | bytes | crc32 three-way | fold128 | fold256 |
/// |---:|---:|---:|---:|
/// | 1024 | 109 | 120 | 96 |
/// | 32768 | 5213 | 3621 | 3039 |
/// | 1 MiB | 164 818 | 107 483 | 87 645 |
///
/// Zen 3 runs one carry-less multiplication every other cycle: in cache, 256-bit folding
/// only matches the three `crc32` chains (about 24 GB/s), and 128-bit folding reaches half
/// that. From DRAM the `crc32` chains stall on every miss (6.4 GB/s) where folding keeps
/// more loads in flight (12 GB/s with 256 bits, 9.8 with 128). So folding takes over at 256
/// bytes with VPCLMULQDQ (as fast in cache, faster from DRAM), and only from 16 KiB with
/// PCLMULQDQ alone (twice as slow in cache, 1.4× as fast from DRAM).
///
/// CPUs with AVX-512 take the 512-bit path from the same length, which is not measured: no
/// machine this was tuned on had AVX-512 (the 512-bit path falls back to the 256-bit one for
/// inputs under 512 bytes, so up to there they run the same code). `logfmt-bench paths` gives
/// the figures on a machine that has it.
pub(super) const FOLD_MIN: usize = 256;

/// [`FOLD_MIN`] on CPUs with 128-bit PCLMULQDQ only.
const SSE_FOLD_MIN: usize = 16 * 1024;

/// What the CPU offers, each level including the ones before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Level {
    /// None of the below: the software CRC.
    Software = 0,
    /// SSE 4.2 (`crc32`) and PCLMULQDQ: the `crc32` paths and 128-bit folding.
    Sse = 1,
    /// And AVX2 with VPCLMULQDQ: 256-bit folding.
    Avx2 = 2,
    /// And AVX-512F: 512-bit folding.
    Avx512 = 3,
}

impl Level {
    /// The level the build's target features promise. Under Miri, none: it runs the software
    /// CRC only (it cannot run the inline assembly of the short path).
    const COMPILED: Self = if cfg!(miri)
        || cfg!(not(all(
            target_feature = "sse4.2",
            target_feature = "pclmulqdq"
        ))) {
        Self::Software
    } else if cfg!(not(all(
        target_feature = "avx2",
        target_feature = "vpclmulqdq"
    ))) {
        Self::Sse
    } else if cfg!(not(target_feature = "avx512f")) {
        Self::Avx2
    } else {
        Self::Avx512
    };
}

/// The detected level plus one; 0 until detected.
#[cfg(all(any(test, feature = "std"), not(miri)))]
static LEVEL: AtomicU8 = AtomicU8::new(0);

/// The CPU's level: detected once (with `std`; Miri has no CPU to ask), else what the build
/// promises. Once detected, a load and a compare.
#[inline(always)]
pub(super) fn level() -> Level {
    #[cfg(all(any(test, feature = "std"), not(miri)))]
    {
        let level = match LEVEL.load(Ordering::Relaxed) {
            1 => Level::Software,
            2 => Level::Sse,
            3 => Level::Avx2,
            4 => Level::Avx512,
            _ => detect_once(),
        };
        level.max(Level::COMPILED)
    }
    #[cfg(not(all(any(test, feature = "std"), not(miri))))]
    {
        Level::COMPILED
    }
}

/// [`detect`], cached (threads that race here store the same values).
#[cfg(all(any(test, feature = "std"), not(miri)))]
#[cold]
#[inline(never)]
fn detect_once() -> Level {
    let level = detect();
    LEVEL.store(level as u8 + 1, Ordering::Relaxed);
    if level >= Level::Sse {
        SHORT_END.store(FOLD_MIN, Ordering::Relaxed);
    }
    level
}

/// [`short_end`] once detected; 0 until then, and on CPUs without SSE 4.2.
#[cfg(all(any(test, feature = "std"), not(miri)))]
static SHORT_END: AtomicUsize = AtomicUsize::new(0);

/// Inputs shorter than this take [`short`]: [`FOLD_MIN`] where the `crc32` paths can run, else 0
/// (and 0 before the first detection, so that the caller's other path detects). One compare of
/// the length, as the build with SSE 4.2 compiled in makes to choose between [`short`] and
/// [`long`], against a cached value instead of a constant: the whole cost of detecting at run
/// time, on the short records' path.
#[inline(always)]
pub(super) fn short_end() -> usize {
    if Level::COMPILED >= Level::Sse {
        return FOLD_MIN;
    }
    #[cfg(all(any(test, feature = "std"), not(miri)))]
    {
        SHORT_END.load(Ordering::Relaxed)
    }
    #[cfg(not(all(any(test, feature = "std"), not(miri))))]
    {
        0
    }
}

/// Asks the CPU.
#[cfg(all(any(test, feature = "std"), not(miri)))]
#[cold]
fn detect() -> Level {
    use std::is_x86_feature_detected as has;
    let mut level = if !(has!("sse4.2") && has!("pclmulqdq")) {
        Level::Software
    } else if !(has!("avx2") && has!("vpclmulqdq")) {
        Level::Sse
    } else if !has!("avx512f") {
        Level::Avx2
    } else {
        Level::Avx512
    };
    // The wide folding paths are checked once against the `crc32` paths before they are
    // trusted: a CPU (or emulator) that gets them wrong falls back to a narrower one rather
    // than write wrong checksums. (The 512-bit path could not be tested on the machine it was
    // written on: see the crate's tests, which report which paths they ran.)
    while level > Level::Sse && !self_check(level) {
        level = if level == Level::Avx512 {
            Level::Avx2
        } else {
            Level::Sse
        };
    }
    level
}

/// Whether the folding path of `level` (256 or 512 bits) computes what the `crc32` paths do,
/// over 1100 bytes and an unaligned part of them, with and without a copy.
#[cfg(all(any(test, feature = "std"), not(miri)))]
#[cold]
pub(super) fn self_check(level: Level) -> bool {
    let mut data = [0u8; 1100];
    let mut x = 0x9e37_79b9u32;
    for byte in &mut data {
        x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        *byte = (x >> 24) as u8;
    }
    let mut copy = [0u8; 1100];
    [&data[..], &data[3..1037]].into_iter().all(|input| {
        let dst = &mut copy[..input.len()];
        #[allow(unsafe_code)]
        // SAFETY: `detect` found the features of each function called for `level` (AVX2 and
        // VPCLMULQDQ, plus AVX-512F for the 512-bit path), and SSE 4.2 and PCLMULQDQ below
        // them.
        let (want, got, copied) = unsafe {
            let want = three_way::three_way(0x1234_5678, input);
            match level {
                Level::Avx512 => (
                    want,
                    fold::fold512::<false>(0x1234_5678, input, &mut []),
                    fold::fold512::<true>(0x1234_5678, input, dst),
                ),
                _ => (
                    want,
                    fold::fold256::<false>(0x1234_5678, input, &mut []),
                    fold::fold256::<true>(0x1234_5678, input, dst),
                ),
            }
        };
        want == got && want == copied && *dst == *input
    })
}

/// Whether the `crc32` paths can run: known at compile time in builds for SSE 4.2, else one
/// load of the cached level and a branch.
#[inline(always)]
pub(super) fn crc32_ready() -> bool {
    Level::COMPILED >= Level::Sse || level() >= Level::Sse
}

/// CRC-32C of `a ‖ data` given `crc = crc32c(a)`, for inputs under [`FOLD_MIN`]; the caller
/// checked [`crc32_ready`]. Under [`three_way::THREE_WAY_MIN`] bytes, one chain inlined into
/// the caller (in inline assembly, which needs no compile-time feature); longer, the three-way
/// path, out of line.
#[inline(always)]
pub(super) fn short(crc: u32, data: &[u8]) -> u32 {
    #[allow(unsafe_code)]
    // SAFETY: these functions need SSE 4.2 and PCLMULQDQ, which `crc32_ready` confirmed (at
    // compile time or run time).
    unsafe {
        if data.len() < three_way::THREE_WAY_MIN {
            !three_way::finish_inline(u64::from(!crc), data)
        } else {
            three_way::three_way_outlined(crc, data)
        }
    }
}

/// Copies `src` into `dst` (as long) piece by piece and returns the CRC-32C of `a ‖ src`
/// given `crc = crc32c(a)`, each piece checksummed by the `crc32` paths right after its copy,
/// from L1; the caller checked [`crc32_ready`].
#[inline(never)]
pub(super) fn copy_pieces(crc: u32, src: &[u8], dst: &mut [u8], piece: usize) -> u32 {
    #[allow(unsafe_code)]
    // SAFETY: `crc32_ready` confirmed SSE 4.2 and PCLMULQDQ, the features of `pieces`.
    unsafe {
        three_way::pieces(crc, src, dst, piece)
    }
}

/// CRC-32C of `a ‖ src` given `crc = crc32c(a)` by the widest folding path the CPU has; with
/// `COPY`, `src` copied into `dst` too (the caller made their lengths equal; `dst` is empty
/// without `COPY`). `None` if the CPU cannot fold.
#[inline(never)]
pub(super) fn long<const COPY: bool>(crc: u32, src: &[u8], dst: &mut [u8]) -> Option<u32> {
    let level = level();
    #[allow(unsafe_code)]
    // SAFETY: `level` is what the CPU has (detected, or promised by the build): each function
    // called is compiled for no more than that.
    unsafe {
        match level {
            Level::Software => None,
            // The caller's own copy-then-checksum loop is faster here.
            Level::Sse if src.len() < SSE_FOLD_MIN => {
                (!COPY).then(|| three_way::three_way(crc, src))
            }
            Level::Sse => Some(fold::fold128::<COPY>(crc, src, dst)),
            #[cfg(not(miri))]
            Level::Avx2 => Some(fold::fold256::<COPY>(crc, src, dst)),
            #[cfg(not(miri))]
            Level::Avx512 => Some(fold::fold512::<COPY>(crc, src, dst)),
            #[cfg(miri)]
            Level::Avx2 | Level::Avx512 => None,
        }
    }
}

/// Whether the CPU can run `path`.
pub(super) fn has(path: Path) -> bool {
    level()
        >= match path {
            Path::Software => Level::Software,
            Path::Crc32 | Path::Fold128 => Level::Sse,
            Path::Fold256 => Level::Avx2,
            Path::Fold512 => Level::Avx512,
        }
}

/// `path` forced, whatever the length: CRC-32C of `a ‖ src` given `crc = crc32c(a)`, and with
/// `copy`, `src` copied into `dst` (the caller made their lengths equal). `None` if the CPU
/// lacks the path's features (or Miri runs this, for the 256- and 512-bit paths).
#[inline]
pub(super) fn run(path: Path, crc: u32, src: &[u8], dst: &mut [u8], copy: bool) -> Option<u32> {
    if !has(path) {
        return None;
    }
    #[allow(unsafe_code)]
    // SAFETY: `has(path)` confirmed the CPU has the features each function is compiled for:
    // SSE 4.2 and PCLMULQDQ for `three_way` and `fold128`, and AVX2 and VPCLMULQDQ (plus
    // AVX-512F for `fold512`) for the wider ones.
    unsafe {
        Some(match (path, copy) {
            (Path::Software, _) => return None,
            (Path::Crc32, _) => {
                if copy && let Some(dst) = dst.get_mut(..src.len()) {
                    dst.copy_from_slice(src);
                }
                three_way::three_way(crc, src)
            }
            (Path::Fold128, false) => fold::fold128::<false>(crc, src, &mut []),
            (Path::Fold128, true) => fold::fold128::<true>(crc, src, dst),
            #[cfg(not(miri))]
            (Path::Fold256, false) => fold::fold256::<false>(crc, src, &mut []),
            #[cfg(not(miri))]
            (Path::Fold256, true) => fold::fold256::<true>(crc, src, dst),
            #[cfg(not(miri))]
            (Path::Fold512, false) => fold::fold512::<false>(crc, src, &mut []),
            #[cfg(not(miri))]
            (Path::Fold512, true) => fold::fold512::<true>(crc, src, dst),
            #[cfg(miri)]
            (Path::Fold256 | Path::Fold512, _) => return None,
        })
    }
}
