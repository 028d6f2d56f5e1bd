//! Fuzz harnesses, shared by the cargo-fuzz targets in `fuzz/` (libFuzzer,
//! nightly flags) and the corpus replay test `tests/fuzz_corpus.rs` (stable,
//! part of `cargo test`). Not part of the supported API; built only with the
//! `fuzzing` cargo feature (off by default, so the shipped library lacks it).
//!
//! Each harness takes arbitrary bytes and panics on a finding: a panic caught
//! at the ABI (`EFAULT`), an error without a message or with the wrong code,
//! a result that disagrees with an independent model of the validation rules,
//! or a proof written on error. Memory errors (a read past a buffer the
//! harness owns) are what the sanitizer build of the fuzz targets catches.
//! Notes and numbers: `notes/FUZZING.md`.
//!
//! - [`params`]: harness 1, the params-file parser, and the small keys the
//!   other harnesses prove with.
//! - [`prove`]: harness 2, one prover call on Assignments built from the input.
//! - `model`: the circuits harness 2 builds, and an independent model of
//!   the rules that says whether a call on them must succeed.
//! - [`lifecycle`]: harness 2b, interleavings of the split form's calls.

use std::ffi::c_void;
use std::sync::OnceLock;

pub mod lifecycle;
mod model;
pub mod params;
pub mod prove;

pub use lifecycle::split_lifecycle;
pub use crate::srs::tiny_params;
pub use params::{params_file, PARAMS_NAME};
pub use prove::prove_call;

/// Reads fuzz bytes; zeros once they run out.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn u8(&mut self) -> u8 {
        match self.0.split_first() {
            Some((b, rest)) => {
                self.0 = rest;
                *b
            }
            None => 0,
        }
    }
    fn u64(&mut self) -> u64 {
        (0..8).fold(0u64, |v, i| v | (self.u8() as u64) << (8 * i))
    }
}

/// Array kinds: three density vectors (these indices), then the scalar
/// arrays a, b, c, inp_assignment_data, aux_assignment_data (3..=7).
const A_AUX: usize = 0;
const B_INP: usize = 1;
const B_AUX: usize = 2;

/// The number of ones among the first `len` bits of `words`.
fn count_bits(words: &[u64], len: usize) -> usize {
    (0..len).filter(|&i| words[i / 64] >> (i % 64) & 1 == 1).count()
}

/// A live lock handle shared by all inputs (never destroyed).
fn lock_handle() -> *mut c_void {
    static H: OnceLock<usize> = OnceLock::new();
    *H.get_or_init(|| crate::abi::exports::create_gpu_mutex() as usize) as *mut c_void
}
