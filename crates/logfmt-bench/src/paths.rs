//! `logfmt-bench paths`: each CRC-32C path of `logfmt_core::parts::checksum` forced, alone and fused
//! with a copy, next to a bare copy, by input length; for the crossover lengths of the engine
//! (`PATH ...` lines, ns a call, median of the passes).
//!
//! Two access patterns: `cache` runs the same input again and again (it stays in L1/L2);
//! `dram` walks a 64 MiB buffer once a pass, in inputs of the length, as a log read does.

use std::hint::black_box;
use std::time::Instant;

use logfmt_core::parts::checksum::Path;

/// Input lengths measured in cache.
const LENGTHS: [usize; 14] = [
    16,
    64,
    100,
    128,
    192,
    256,
    384,
    512,
    768,
    1024,
    2048,
    4096,
    32_768,
    1 << 20,
];

/// Runs the comparison, printing a line a measure through `out`; with `lengths`, those only
/// (in cache), at `align` bytes past a 64-byte boundary.
pub fn run(reps: usize, lengths: &[usize], align: usize, out: &mut dyn FnMut(String)) {
    let src: Vec<u8> = (0..(64usize << 20))
        .map(|i| ((i * 31) ^ (i >> 9)) as u8)
        .collect();
    let mut dst = vec![0u8; 64 << 20];
    let paths: Vec<Path> = Path::ALL
        .into_iter()
        .filter(|p| {
            let ok = p.is_available();
            if !ok {
                out(format!("# path {} not available on this CPU", p.name()));
            }
            ok
        })
        .collect();
    let dram = lengths.is_empty();
    let lengths = if dram { &LENGTHS[..] } else { lengths };
    for &len in lengths {
        // About 64 MB of input a pass, at least 64 calls.
        let calls = ((64usize << 20) / len).clamp(64, 1 << 20);
        let input = &src[64 + align % 64..64 + align % 64 + len];
        let median = |f: &mut dyn FnMut()| {
            let mut ns: Vec<f64> = (0..reps)
                .map(|_| {
                    let start = Instant::now();
                    f();
                    start.elapsed().as_nanos() as f64 / calls as f64
                })
                .collect();
            ns.sort_by(f64::total_cmp);
            ns[ns.len() / 2]
        };
        let copy = median(&mut || {
            for _ in 0..calls {
                dst[..len].copy_from_slice(black_box(input));
                black_box(&dst);
            }
        });
        out(line("memcpy", "copy", "cache", len, copy));
        for &path in &paths {
            let crc = median(&mut || {
                for _ in 0..calls {
                    black_box(path.extend(0, black_box(input)));
                }
            });
            out(line(path.name(), "crc", "cache", len, crc));
            let fused = median(&mut || {
                for _ in 0..calls {
                    black_box(path.extend_copy(0, black_box(input), &mut dst));
                }
            });
            out(line(path.name(), "crc+copy", "cache", len, fused));
        }
    }
    for len in [1024usize, 32_768, 1 << 20].into_iter().filter(|_| dram) {
        let pieces = src.len() / len;
        let mut median = |f: &mut dyn FnMut(&[u8], &mut [u8])| {
            let mut ns: Vec<f64> = (0..reps)
                .map(|_| {
                    let start = Instant::now();
                    for (s, d) in src.chunks_exact(len).zip(dst.chunks_exact_mut(len)) {
                        f(s, d);
                    }
                    start.elapsed().as_nanos() as f64 / pieces as f64
                })
                .collect();
            ns.sort_by(f64::total_cmp);
            ns[ns.len() / 2]
        };
        let copy = median(&mut |s, d| d.copy_from_slice(s));
        out(line("memcpy", "copy", "dram", len, copy));
        for &path in &paths {
            let crc = median(&mut |s, _| {
                black_box(path.extend(0, s));
            });
            out(line(path.name(), "crc", "dram", len, crc));
            let fused = median(&mut |s, d| {
                black_box(path.extend_copy(0, s, d));
            });
            out(line(path.name(), "crc+copy", "dram", len, fused));
        }
    }
}

fn line(path: &str, op: &str, pattern: &str, len: usize, ns: f64) -> String {
    format!(
        "PATH path={path} op={op} data={pattern} len={len} ns={ns:.2} gb_s={:.1}",
        len as f64 / ns
    )
}
