//! Frames in, defmt's own stream out: reads records framed as a `u32` little-endian length and
//! the bytes (`logfmt cat --output framed`), writes each frame as `defmt-rtt` sends it
//! (rzcobs-encoded by `defmt::Encoder`, with its delimiters) — what `defmt-print` reads.
//! `cargo xtask bench-defmt` feeds `defmt-print` with it.

use std::io::{Read, Write};

fn main() -> std::io::Result<()> {
    let mut input = Vec::new();
    std::io::stdin().lock().read_to_end(&mut input)?;
    let mut out = Vec::with_capacity(input.len() * 2);
    let mut encoder = defmt::Encoder::new();
    let mut rest = &input[..];
    while let Some((len, tail)) = rest.split_first_chunk::<4>() {
        let len = u32::from_le_bytes(*len) as usize;
        let Some(frame) = tail.get(..len) else {
            return Err(std::io::Error::other("a framed record cut short"));
        };
        encoder.start_frame(|b| out.extend_from_slice(b));
        encoder.write(frame, |b| out.extend_from_slice(b));
        encoder.end_frame(|b| out.extend_from_slice(b));
        rest = &tail[len..];
    }
    std::io::stdout().lock().write_all(&out)
}
