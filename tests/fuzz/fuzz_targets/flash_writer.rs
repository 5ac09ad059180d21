//! cargo-fuzz target `flash_writer`: see [`logfmt_fuzz::flash_writer`] for the properties checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| logfmt_fuzz::flash_writer::check(data));
