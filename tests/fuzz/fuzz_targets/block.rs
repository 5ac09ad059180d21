//! cargo-fuzz target `block`: see [`logfmt_fuzz::block`] for the properties checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| logfmt_fuzz::block::check(data));
