//! Criterion benches: write and read in memory, through files, and the bounds.
#![allow(missing_docs)] // criterion_group! generates undocumented items

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use logfmt_bench::{Bench, Case, Payloads};

fn in_memory(c: &mut Criterion) {
    let payloads = Payloads::new();
    let mut group = c.benchmark_group("in-memory");
    group.sample_size(10);
    for case in [
        Case {
            size: 16,
            count: 200_000,
        },
        Case {
            size: 100,
            count: 100_000,
        },
        Case {
            size: 1024,
            count: 16_384,
        },
        Case {
            size: 32_768,
            count: 512,
        },
        Case {
            size: 1 << 20,
            count: 16,
        },
    ] {
        let mut bench = Bench::new(&payloads, case);
        let _ = bench.verify();
        group.throughput(Throughput::Bytes(case.payload_bytes() as u64));
        group.bench_with_input(BenchmarkId::new("write", case.size), &case, |b, _| {
            b.iter(|| bench.write())
        });
        group.bench_with_input(BenchmarkId::new("read", case.size), &case, |b, _| {
            b.iter(|| bench.read())
        });
        group.bench_with_input(BenchmarkId::new("memcpy", case.size), &case, |b, _| {
            b.iter(|| bench.memcpy())
        });
        group.bench_with_input(BenchmarkId::new("crc32c", case.size), &case, |b, _| {
            b.iter(|| bench.crc())
        });
    }
    group.finish();
}

criterion_group!(benches, in_memory);
criterion_main!(benches);
