//! cargo-fuzz target `writer`: see [`logfmt_fuzz::writer`] for the properties checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| logfmt_fuzz::writer::check(data));
