//! `generate_groth16_proofs_c` and the split form on the CPU backend with
//! Assignments built from arbitrary bytes (harness:
//! `supraseal_c2::fuzzing::prove_call`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| supraseal_c2::fuzzing::prove_call(data));
