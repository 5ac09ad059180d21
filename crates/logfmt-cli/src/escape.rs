//! Bytes in text as `leveldbutil` shows them: printable ASCII as it is, any other byte as
//! `\xNN` (table-driven, 64 bytes at a time), or in lowercase hex.

use std::fmt;
use std::io::{self, Write};

use serde::{Serialize, Serializer};

/// Bytes in text: quoted and escaped, or in hex.
#[inline]
pub(crate) fn text_bytes(line: &mut Vec<u8>, data: &[u8], hex: bool, scratch: &mut Scratch) {
    if hex {
        hex_into(line, data);
    } else {
        line.push(b'\'');
        escape_into(line, data, scratch);
        line.push(b'\'');
    }
}

/// Lowercase hex digits.
static DIGITS: &[u8; 16] = b"0123456789abcdef";

/// Whether `byte` is shown as it is in text: printable ASCII but the quote and the backslash.
const fn plain(byte: u8) -> bool {
    byte >= b' ' && byte <= b'~' && byte != b'\\' && byte != b'\''
}

/// Each byte as text shows it, in 4 bytes (a plain byte is followed by 3 unused ones).
static ESCAPES: [[u8; 4]; 256] = {
    let mut table = [[0u8; 4]; 256];
    let mut byte = 0;
    while byte < 256 {
        let b = byte as u8;
        table[byte] = if plain(b) {
            [b, 0, 0, 0]
        } else {
            [b'\\', b'x', DIGITS[byte >> 4], DIGITS[byte & 0xf]]
        };
        byte += 1;
    }
    table
};

/// How many bytes each byte takes in text: 1 as it is, 4 escaped.
static WIDTHS: [u8; 256] = {
    let mut table = [4u8; 256];
    let mut byte = 0;
    while byte < 256 {
        if plain(byte as u8) {
            table[byte] = 1;
        }
        byte += 1;
    }
    table
};

/// Where [`escape_into`] escapes 64 bytes at a time (kept from call to call: never zeroed
/// again).
pub(crate) type Scratch = [u8; 256 + 4];

/// Appends `data` as `leveldbutil` escapes it: printable ASCII as it is, any other byte as
/// `\xNN`; and, so that the text reads back unambiguously, the quote `'` and the backslash
/// too.
pub(crate) fn escape_into(line: &mut Vec<u8>, data: &[u8], buffer: &mut Scratch) {
    // Without branches: every byte's 4-byte form is stored, and the position moves on by its
    // length (1 or 4), in a buffer that 64 bytes cannot overflow (at most 63 * 4 + 4 = 256
    // bytes; the mask below tells the compiler so).
    for chunk in data.chunks(64) {
        // A fold with no early exit, so that it runs as vector compares (an `all` over the
        // table took about 4 instructions a byte).
        if chunk.iter().fold(true, |all, &byte| all & plain(byte)) {
            // Plain text (most keys): as it is.
            line.extend_from_slice(chunk);
            continue;
        }
        let mut at = 0;
        for &byte in chunk {
            let i = at & 0xff;
            buffer[i..i + 4].copy_from_slice(&ESCAPES[usize::from(byte)]);
            at = i + usize::from(WIDTHS[usize::from(byte)]);
        }
        line.extend_from_slice(&buffer[..at]);
    }
}

/// Each byte in lowercase hex.
static HEX: [[u8; 2]; 256] = {
    let mut table = [[0u8; 2]; 256];
    let mut byte = 0;
    while byte < 256 {
        table[byte] = [DIGITS[byte >> 4], DIGITS[byte & 0xf]];
        byte += 1;
    }
    table
};

/// Appends `data` in lowercase hex.
pub(crate) fn hex_into(line: &mut Vec<u8>, data: &[u8]) {
    let mut buffer = [0u8; 2 * 64];
    for chunk in data.chunks(64) {
        for (pair, &byte) in buffer.chunks_exact_mut(2).zip(chunk) {
            pair.copy_from_slice(&HEX[usize::from(byte)]);
        }
        line.extend_from_slice(&buffer[..2 * chunk.len()]);
    }
}

/// `data` escaped as [`escape_into`] escapes it, written to `out`.
pub(crate) fn write_escaped(out: &mut dyn Write, data: &[u8]) -> io::Result<()> {
    let mut line = Vec::with_capacity(data.len() + data.len() / 2);
    escape_into(&mut line, data, &mut [0; 260]);
    out.write_all(&line)
}

/// Bytes shown (and serialized) as lowercase hex.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Hex<'a>(pub(crate) &'a [u8]);

impl fmt::Display for Hex<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = Vec::with_capacity(512);
        for chunk in self.0.chunks(256) {
            text.clear();
            hex_into(&mut text, chunk);
            // Only ASCII digits were written.
            f.write_str(std::str::from_utf8(&text).map_err(|_| fmt::Error)?)?;
        }
        Ok(())
    }
}

impl Serialize for Hex<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn escaped(data: &[u8]) -> String {
        let mut out = Vec::new();
        write_escaped(&mut out, data).expect("writing to memory");
        String::from_utf8(out).expect("ASCII")
    }

    #[test]
    fn escaping_keeps_printable_ascii_only() {
        assert_eq!(escaped(b"key 1~"), "key 1~");
        assert_eq!(escaped(b"\x1b[2J"), r"\x1b[2J");
        assert_eq!(escaped(b"a\nb\x00\x7f\xff"), r"a\x0ab\x00\x7f\xff");
        assert_eq!(escaped(b"it's \\"), r"it\x27s \x5c");
        assert_eq!(escaped("é".as_bytes()), r"\xc3\xa9");
    }

    /// The table-driven escaping and hex, across chunk boundaries, against the plain rule.
    #[test]
    fn escaping_and_hex_match_the_rule_for_every_byte() {
        let naive_escape = |data: &[u8]| -> String {
            data.iter()
                .map(|&b| {
                    if (b' '..=b'~').contains(&b) && b != b'\\' && b != b'\'' {
                        char::from(b).to_string()
                    } else {
                        format!("\\x{b:02x}")
                    }
                })
                .collect()
        };
        let every: Vec<u8> = (0..=255).collect();
        let long: Vec<u8> = (0..1000u32).map(|i| (i * 7 % 131) as u8).collect();
        let plain_long: Vec<u8> = (0..200u32).map(|i| b'a' + (i % 26) as u8).collect();
        for data in [&every[..], &long, &plain_long, b"", b"k"] {
            let mut line = b"prefix".to_vec();
            escape_into(&mut line, data, &mut [0; 260]);
            assert_eq!(String::from_utf8_lossy(&line[6..]), naive_escape(data));
            let mut line = Vec::new();
            hex_into(&mut line, data);
            let naive: String = data.iter().map(|b| format!("{b:02x}")).collect();
            assert_eq!(String::from_utf8_lossy(&line), naive);
        }
    }
}
