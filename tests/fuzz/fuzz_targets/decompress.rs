//! cargo-fuzz target `decompress`: see [`logfmt_fuzz::decompress`] for the properties checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| logfmt_fuzz::decompress::check(data));
