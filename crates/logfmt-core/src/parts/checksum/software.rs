//! The portable, `no_std` CRC-32C.

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
