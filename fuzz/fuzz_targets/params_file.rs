//! The params (SRS) file parser behind `create_SRS` on arbitrary bytes
//! (harness: `supraseal_c2::fuzzing::params_file`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| supraseal_c2::fuzzing::params_file(data));
