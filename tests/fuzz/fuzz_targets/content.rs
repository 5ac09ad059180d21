//! cargo-fuzz target `content`: see [`logfmt_fuzz::content`] for the properties checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| logfmt_fuzz::content::check(data));
