//! cargo-fuzz target `flash_ring`: see [`logfmt_fuzz::flash_ring`] for the properties checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| logfmt_fuzz::flash_ring::check(data));
