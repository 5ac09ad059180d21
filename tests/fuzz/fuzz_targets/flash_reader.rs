//! cargo-fuzz target `flash_reader`: see [`logfmt_fuzz::flash_reader`] for the properties checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| logfmt_fuzz::flash_reader::check(data));
