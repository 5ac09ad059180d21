//! CRC-32C (Castagnoli) and LevelDB's checksum masking.
//!
//! The checksum of a chunk is `mask(crc32c(type ‖ payload))` (legacy) or
//! `mask(crc32c(type ‖ log number ‖ payload))` (recyclable).
//!
//! Implementations of the same function ([`Path`] names each, to force one in tests and
//! benchmarks):
//! - [`software`]: the table-driven CRC, `no_std`, table size chosen by the `crc-no-table` (no
//!   table, smallest) and `crc-table-16k` (fastest) features; the default is a 1 KiB table.
//!   Every target without the instructions below runs it (bare-metal ARM among them).
//! - on x86-64, an engine of its own: the SSE 4.2 `crc32` instruction for short inputs (one
//!   chain, or three interleaved), and carry-less folding for long ones — 128-bit PCLMULQDQ, or
//!   256/512-bit VPCLMULQDQ where the CPU has AVX2 / AVX-512. With `std` the CPU's features are
//!   detected once at run time; without it the build's target features decide.
//! - elsewhere with `std` (ARMv8), the `crc32c` crate's hardware path, chosen at run time.
//!
//! [`crc32c()`] and [`extend`] take the fastest of them for the input's length.

use crate::format::HOT_PATHS;

/// `kMaskDelta` of LevelDB's `util/crc32c.h`.
pub const MASK_DELTA: u32 = 0xa282_ead8;

/// Masks a CRC for storage, as LevelDB does: a CRC stored next to the data it covers makes
/// computing the CRC of a string that contains embedded CRCs problematic.
///
/// ```
/// assert_eq!(logfmt_core::parts::checksum::mask(0), 0xa282_ead8);
/// assert_eq!(logfmt_core::parts::checksum::mask(0xe306_9283), 0xc78a_b0e5);
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
/// assert_eq!(logfmt_core::parts::checksum::crc32c(b"123456789"), 0xe306_9283);
/// ```
#[must_use]
#[inline]
pub fn crc32c(data: &[u8]) -> u32 {
    extend(0, data)
}

/// CRC-32C of `a ‖ data`, given `crc = crc32c(a)` (LevelDB's `crc32c::Extend`).
///
/// Always inlined: on x86-64 what inlines is a length check, the cached CPU level's check, and
/// under 128 bytes the one `crc32` chain (the record loops' short records); the rest is out of
/// line.
#[must_use]
#[inline(always)]
pub fn extend(crc: u32, data: &[u8]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        if data.len() < x86::short_end() {
            return x86::short(crc, data);
        }
        if data.len() >= x86::FOLD_MIN
            && let Some(crc) = x86::long::<false>(crc, data, &mut [])
        {
            return crc;
        }
        extend_otherwise(crc, data)
    }
    #[cfg(all(feature = "std", not(target_arch = "x86_64")))]
    {
        ::crc32c::crc32c_append(crc, data)
    }
    #[cfg(not(any(feature = "std", target_arch = "x86_64")))]
    {
        software::extend(crc, data)
    }
}

/// [`extend`] on x86-64 when neither [`x86::short`] (as far as is known yet) nor a folding path
/// took the input: the first call, which detects the CPU, then the `crc32` path; or a CPU
/// without SSE 4.2, the software CRC.
#[cfg(target_arch = "x86_64")]
#[inline(never)]
fn extend_otherwise(crc: u32, data: &[u8]) -> u32 {
    if data.len() < x86::FOLD_MIN && x86::crc32_ready() {
        return x86::short(crc, data);
    }
    software::extend(crc, data)
}

/// Copies `src` into `dst` (the caller makes their lengths equal) and returns the CRC-32C of
/// `a ‖ src`, given `crc = crc32c(a)`.
///
/// On x86-64 hosts, inputs from [`FOLD_COPY_MIN`] bytes on are folded as they are copied: each
/// vector loaded is stored and folded, so the source is read once. Shorter ones run piece by
/// piece, so that the checksum reads each piece from L1 right after the copy brought it there,
/// while the copy's stores drain. On bare metal, a copy then a checksum (smallest code).
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
    #[cfg(target_arch = "x86_64")]
    {
        if src.len() >= FOLD_COPY_MIN
            && let Some(crc) = x86::long::<true>(crc, src, dst)
        {
            return crc;
        }
        if x86::crc32_ready() {
            return x86::copy_pieces(crc, src, dst, PIECE);
        }
    }
    let mut crc = crc;
    for (src, dst) in src.chunks(PIECE).zip(dst.chunks_mut(PIECE)) {
        dst.copy_from_slice(src);
        crc = extend(crc, src);
    }
    crc
}

/// Inputs of [`extend_copy`] from this length on are copied and folded in one pass (x86-64
/// hosts with VPCLMULQDQ; with 128-bit PCLMULQDQ alone, from 16 KiB on).
///
/// Measured with `logfmt-bench paths` (AMD EPYC Zen 3, ns a call, medians), a copy then the
/// three `crc32` chains against the fused 256-bit fold: in cache, 50 / 53 at 512 bytes,
/// 80 / 82 at 1 KiB, 109 / 96 at 2 KiB, 224 / 176 at 4 KiB; from DRAM to DRAM, 230 / 206 at
/// 1 KiB and 200 / 131 µs at 1 MiB (a bare `memcpy` of it: 146 µs). A writer's payloads
/// come from the caller's memory and go to a block on its way out, so the fused path takes
/// over where it is no slower in cache.
#[cfg(target_arch = "x86_64")]
const FOLD_COPY_MIN: usize = 1024;

/// One implementation of CRC-32C in this crate, to force in tests and benchmarks (the
/// functions of this module pick one by length on their own).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Path {
    /// [`software`]: a lookup table, on every target.
    Software,
    /// The SSE 4.2 `crc32` instruction, three chains interleaved (x86-64).
    Crc32,
    /// Carry-less folding with 128-bit PCLMULQDQ (x86-64).
    Fold128,
    /// Carry-less folding with 256-bit VPCLMULQDQ and AVX2 (x86-64).
    Fold256,
    /// Carry-less folding with 512-bit VPCLMULQDQ and AVX-512F (x86-64).
    Fold512,
}

impl Path {
    /// Every path, in this order.
    pub const ALL: [Self; 5] = [
        Self::Software,
        Self::Crc32,
        Self::Fold128,
        Self::Fold256,
        Self::Fold512,
    ];

    /// A short name: `software`, `crc32`, `fold128`, `fold256`, `fold512`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Software => "software",
            Self::Crc32 => "crc32",
            Self::Fold128 => "fold128",
            Self::Fold256 => "fold256",
            Self::Fold512 => "fold512",
        }
    }

    /// Whether this CPU (and build) can run the path.
    #[must_use]
    pub fn is_available(self) -> bool {
        match self {
            Self::Software => true,
            #[cfg(target_arch = "x86_64")]
            _ => x86::has(self),
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// CRC-32C of `a ‖ data`, given `crc = crc32c(a)`, by this path whatever the length; `None`
    /// if it [is not available](Self::is_available).
    #[must_use]
    pub fn extend(self, crc: u32, data: &[u8]) -> Option<u32> {
        self.run(crc, data, &mut [], false)
    }

    /// Copies `src` into the start of `dst` and returns the CRC-32C of `a ‖ src`, given
    /// `crc = crc32c(a)`, by this path (the folding paths in one pass); `None`, with nothing
    /// copied, if it [is not available](Self::is_available) or `dst` is shorter than `src`.
    #[must_use]
    pub fn extend_copy(self, crc: u32, src: &[u8], dst: &mut [u8]) -> Option<u32> {
        let dst = dst.get_mut(..src.len())?;
        self.run(crc, src, dst, true)
    }

    /// The path with `copy` or not; `dst` is as long as `src` with `copy`.
    fn run(self, crc: u32, src: &[u8], dst: &mut [u8], copy: bool) -> Option<u32> {
        match self {
            Self::Software => {
                if copy {
                    dst.copy_from_slice(src);
                }
                Some(software::extend(crc, src))
            }
            #[cfg(target_arch = "x86_64")]
            _ => x86::run(self, crc, src, dst, copy),
            #[cfg(not(target_arch = "x86_64"))]
            _ => None,
        }
    }

    /// The path [`extend`] takes for inputs of `len` bytes on this machine. On targets other
    /// than x86-64 with `std`, the `crc32c` crate's, which is none of these: `None`.
    #[must_use]
    pub fn for_len(len: usize) -> Option<Self> {
        #[cfg(target_arch = "x86_64")]
        {
            let fold = [Self::Fold512, Self::Fold256, Self::Fold128]
                .into_iter()
                .find(|p| p.is_available());
            Some(match fold {
                Some(fold) if len >= x86::FOLD_MIN => fold,
                _ if x86::crc32_ready() => Self::Crc32,
                _ => Self::Software,
            })
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = len;
            (!cfg!(feature = "std")).then_some(Self::Software)
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod x86;

/// The portable, `no_std` CRC-32C.
pub mod software;

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

    /// Prints `note: {message}` straight to the standard error stream, which the test harness
    /// does not capture: a skipped path shows in every test run's output, passing or not.
    fn note(message: &str) {
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "note: {message}");
    }

    /// The paths this machine can run; a printed note for each it cannot (never a silent skip),
    /// once a test (a property test calls this for every case).
    fn paths(test: &'static str) -> std::vec::Vec<Path> {
        use std::sync::Mutex;
        /// The tests that printed their notes.
        static NOTED: Mutex<std::vec::Vec<&'static str>> = Mutex::new(std::vec::Vec::new());
        let missing: std::vec::Vec<Path> = Path::ALL
            .into_iter()
            .filter(|p| !p.is_available())
            .collect();
        let mut noted = NOTED
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if !missing.is_empty() && !noted.contains(&test) {
            noted.push(test);
            for path in &missing {
                note(&std::format!(
                    "{test}: CRC-32C path `{}` not available on this CPU or build (or under \
                     Miri): skipped, not tested",
                    path.name()
                ));
            }
        }
        Path::ALL.into_iter().filter(|p| p.is_available()).collect()
    }

    /// Deterministic bytes.
    fn bytes(len: usize, seed: u64) -> std::vec::Vec<u8> {
        let mut state = seed | 1;
        (0..len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            })
            .collect()
    }

    /// `x^e mod P` by long division on the polynomial as written (not reflected), bit-reversed
    /// into a CRC register: an independent check of the engine's constants.
    #[cfg(target_arch = "x86_64")]
    fn x_pow_mod_p(e: usize) -> u32 {
        const P: u64 = 0x1_1edc_6f41;
        let mut r: u64 = 1;
        for _ in 0..e {
            r <<= 1;
            if r & (1 << 32) != 0 {
                r ^= P;
            }
        }
        (r as u32).reverse_bits()
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn folding_constants_are_powers_of_x() {
        for e in [31, 32, 63, 64, 95, 159, 287, 415, 543, 1055, 2079, 4000] {
            assert_eq!(x86::times_x(1, e - 31), x_pow_mod_p(e), "x^{e}");
        }
    }

    /// A CPU with the features of a wide folding path runs it: its one-time check at detection
    /// (which would fall back to a narrower path) passes.
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    #[test]
    fn wide_paths_pass_their_self_check() {
        use std::is_x86_feature_detected as has;
        let avx2 = has!("avx2") && has!("vpclmulqdq") && has!("sse4.2") && has!("pclmulqdq");
        for (level, path, present) in [
            (x86::Level::Avx2, Path::Fold256, avx2),
            (x86::Level::Avx512, Path::Fold512, avx2 && has!("avx512f")),
        ] {
            if present {
                assert!(x86::self_check(level), "{path:?} fails its self-check");
                assert!(path.is_available());
            } else {
                note(&std::format!(
                    "no {path:?} on this CPU: its self-check not run"
                ));
            }
        }
    }

    #[test]
    fn every_path_at_every_length_and_alignment() {
        let paths = paths("every_path_at_every_length_and_alignment");
        // Every length to 1100 bytes (past each path's block and reduction boundaries), at an
        // alignment that cycles through 0..64; then every alignment at a few lengths.
        // Under Miri (slow): every length to 80, every alignment at the few of them listed.
        let max = if cfg!(miri) { 80 } else { 1100 };
        let data = bytes(max + 64, 7);
        let cases = (0..=max).map(|len| (len, len % 64)).chain(
            [0usize, 15, 16, 17, 64, 255, 256, 257, 513, 1024]
                .into_iter()
                .filter(|&len| len <= max)
                .flat_map(|len| (0..64).map(move |align| (len, align))),
        );
        for (len, align) in cases {
            let input = &data[align..align + len];
            let want = ::crc32c::crc32c_append(0x1234_5678, input);
            for &path in &paths {
                assert_eq!(
                    path.extend(0x1234_5678, input),
                    Some(want),
                    "{path:?} len {len} at {align}"
                );
                let mut out = std::vec![0xa5u8; len + 3];
                let got = path.extend_copy(0x1234_5678, input, &mut out[align % 2..]);
                assert_eq!(got, Some(want), "{path:?} copy, len {len} at {align}");
                assert_eq!(&out[align % 2..align % 2 + len], input);
                assert!(
                    out[align % 2 + len..].iter().all(|&b| b == 0xa5),
                    "{path:?}: wrote past src"
                );
            }
            let mut copy = std::vec![0u8; len];
            assert_eq!(
                extend_copy(0x1234_5678, input, &mut copy),
                want,
                "extend_copy len {len}"
            );
            assert_eq!(extend(0x1234_5678, input), want, "extend len {len}");
        }
    }

    #[test]
    fn unavailable_paths_and_short_destinations_give_none() {
        for path in Path::ALL {
            let mut out = [0u8; 3];
            assert_eq!(path.extend_copy(0, b"four", &mut out), None);
            assert_eq!(out, [0; 3]);
            if !path.is_available() {
                assert_eq!(path.extend(0, b"1"), None);
            }
        }
        assert!(Path::Software.is_available());
        assert_eq!(
            Path::for_len(0).map(Path::is_available),
            Path::for_len(0).map(|_| true)
        );
    }

    use proptest::strategy::Strategy;

    /// The longest input of the proptests below: under Miri, which interprets every byte's
    /// table lookup, inputs that still cross the hardware path's short-input threshold and
    /// the software path's 8-byte loop (minutes at 5000 bytes, seconds here).
    const PROPTEST_LEN: usize = if cfg!(miri) { 600 } else { 5000 };

    proptest::proptest! {
        #[test]
        fn mask_roundtrip(c: u32) {
            proptest::prop_assert_eq!(unmask(mask(c)), c);
        }

        #[test]
        fn software_matches_reference(
            data in proptest::collection::vec(proptest::num::u8::ANY, 0..PROPTEST_LEN),
            split in 0usize..PROPTEST_LEN,
        ) {
            let reference = ::crc32c::crc32c(&data);
            proptest::prop_assert_eq!(software::crc32c(&data), reference);
            proptest::prop_assert_eq!(crc32c(&data), reference);
            let split = split.min(data.len());
            let (a, b) = data.split_at(split);
            proptest::prop_assert_eq!(software::extend(software::crc32c(a), b), reference);
            proptest::prop_assert_eq!(extend(crc32c(a), b), reference);
        }

        /// Every path, forced, against the `crc32c` crate and the software CRC: lengths to
        /// 1 MiB, every alignment, the input cut at random places into `extend` calls.
        #[test]
        fn every_path_matches_the_references(
            len in if cfg!(miri) {
                (0usize..300).boxed()
            } else {
                proptest::prop_oneof![0usize..2048, 0usize..(1 << 20)].boxed()
            },
            align in 0usize..64,
            seed: u64,
            cuts in proptest::collection::vec(proptest::num::usize::ANY, 0..4),
        ) {
            let data = bytes(len + align, seed);
            let input = &data[align..];
            let want = ::crc32c::crc32c(input);
            if len <= 1 << 16 {
                proptest::prop_assert_eq!(software::crc32c(input), want);
            }
            let mut cuts: std::vec::Vec<usize> = cuts.iter().map(|c| c % (len + 1)).collect();
            cuts.sort_unstable();
            for path in paths("every_path_matches_the_references") {
                let (mut crc, mut copied_crc, mut at) = (0, 0, 0);
                let mut copy = std::vec![0u8; len];
                for &cut in cuts.iter().chain([&len]) {
                    let piece = &input[at..cut];
                    crc = path.extend(crc, piece).unwrap_or_default();
                    copied_crc = path.extend_copy(copied_crc, piece, &mut copy[at..]).unwrap_or_default();
                    at = cut;
                }
                proptest::prop_assert_eq!(crc, want, "{:?}", path);
                proptest::prop_assert_eq!(copied_crc, want, "{:?} with copy", path);
                proptest::prop_assert_eq!(&copy[..], input);
            }
            proptest::prop_assert_eq!(crc32c(input), want);
        }

        #[test]
        fn extend_copy_copies_and_checksums(
            data in proptest::collection::vec(proptest::num::u8::ANY, 0..PROPTEST_LEN),
            split in 0usize..PROPTEST_LEN,
        ) {
            let split = split.min(data.len());
            let (a, b) = data.split_at(split);
            let mut copy = std::vec![0u8; b.len()];
            proptest::prop_assert_eq!(extend_copy(crc32c(a), b, &mut copy), ::crc32c::crc32c(&data));
            proptest::prop_assert_eq!(&copy[..], b);
        }
    }
}
