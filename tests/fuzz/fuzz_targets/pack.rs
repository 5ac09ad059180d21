//! cargo-fuzz target `pack`: see [`logfmt_fuzz::pack`] for the properties checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| logfmt_fuzz::pack::check(data));
