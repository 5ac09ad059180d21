//! cargo-fuzz target `reader`: see [`logfmt_fuzz::reader`] for the properties checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| logfmt_fuzz::reader::check(data));
