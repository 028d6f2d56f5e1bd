//! A drop-in replacement for supraseal's C2 prover: Groth16 proofs over
//! BLS12-381 for Filecoin PoRep commit phase 2, behind supraseal-c2's C ABI.
//!
//! # What is public
//! The C ABI ([`abi::exports`], [`abi::types`]), the Rust API of the
//! published supraseal-c2 0.1.2 crate ([`generate_groth16_proofs`], [`SRS`],
//! [`Assignment`], the split form), and the few types a host program needs
//! around them, all at the crate root: the loaded key ([`Srs`],
//! [`open_params`], [`LoadOptions`], [`LoadReport`]), the run-time switches
//! ([`Settings`]), lock handles ([`LockHandle`]), per-call reports
//! ([`CallReport`], [`record_reports`]) and errors ([`Error`], [`ErrorKind`]).
//! Everything else is internal; the `tools` feature (on for this
//! workspace's CLI, tests, benchmarks and fuzzers, off in the shipped
//! library) makes the internal modules public and compiles the GPU test
//! harness and allocation fault injection.
//!
//! # Features
//! - `curio-fork`: Curio's fork of supraseal-c2 (what Curio's cuzk engine and
//!   its bellperson build against) as a compile-time choice. The Rust API's
//!   [`generate_groth16_proof`] and [`start_groth16_proof`] take the fork's
//!   signatures (`…, srs, gpu_mtx, gpu_index`: 21 and 20 arguments); where the
//!   program defines a C function `void set_membw_throttle(int)`, it is called
//!   with 1 before the CPU-side G2 MSMs of a call and with 0 after them, as the
//!   fork calls it (a weak reference: a program without one links and nothing
//!   is called); `CUZK_GPU_THREADS` sets the size of the CPU pool that runs the
//!   split-MSM preparation and those MSMs, as it sizes the fork's. The C ABI is
//!   unchanged. Without the feature the two functions keep their 19-argument
//!   forms, no `set_membw_throttle` is looked for and `CUZK_GPU_THREADS` is
//!   not read.
//! - `tools`, `fuzzing`: this workspace's own (below).
//!
//! # The life of a proof
//! docs/ARCHITECTURE.md §7 follows one GPU proof file by file: the export
//! ([`abi::exports`]) turns pointers into safe values ([`abi`]'s intake),
//! the pipeline picks the backend and runs the phases of §5 (`pipeline`:
//! pin, pre-stage under the memory lock, kernels under the compute lock,
//! unpin), and the epilogue blinds with r and s.
//!
//! Layout assumptions (docs/ARCHITECTURE.md §2): a 64-bit little-endian target, where
//! `usize` is 8 bytes and blst's field types are little-endian u64 limbs.

#![deny(clippy::all, clippy::perf, clippy::correctness)]
#![allow(clippy::missing_safety_doc)] // every unsafe fn documents its contract in prose
// A build without kernels (nvcc absent) keeps the GPU backend's host-side
// code (admission, residency, launch choices) but never calls it.
#![cfg_attr(not(supraseal_gpu), allow(dead_code, unused_imports))]

#[cfg(not(all(target_endian = "little", target_pointer_width = "64")))]
compile_error!("supraseal-c2 supports only 64-bit little-endian targets (the C ABI layout assumes it)");

/// Internal modules: crate-private in the shipped library, public with the
/// `tools` feature (the CLI, tests and benchmarks reach into them).
macro_rules! internal {
    ($($(#[$attr:meta])* $name:ident;)*) => {$(
        $(#[$attr])* #[cfg(feature = "tools")] #[doc(hidden)] pub mod $name;
        $(#[$attr])* #[cfg(not(feature = "tools"))] pub(crate) mod $name;
    )*};
}

pub mod abi;
mod api;
mod error;
internal! {
    assignment;
    backend;
    config;
    cpu;
    curio;
    curve;
    gpu;
    groth16;
    locks;
    log;
    params;
    pipeline;
    srs;
    threads;
}
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing; // fuzz harnesses (fuzz/, tests/fuzz_corpus.rs); not a supported API

pub use abi::types::{fr_t, groth16_proof, CAssignment, RustError};
pub use api::{
    alloc_gpu_mutex, cuda, drop_pending_proof, finish_groth16_proof, free_gpu_mutex, generate_groth16_proof,
    generate_groth16_proof_on_gpu, generate_groth16_proofs, generate_groth16_proofs_on_gpu, start_groth16_proof,
    start_groth16_proof_on_gpu, start_groth16_proofs, Assignment, SRS,
};
pub use config::{load_check, load_threads, CheckOn, Settings};
pub use error::{errno_name, Error, ErrorKind, Result};

/// This library's version (the package's `CARGO_PKG_VERSION`).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
pub use gpu::{device_count as gpu_device_count, BUILT_WITH_KERNELS};
pub use locks::{LockHandle, LockMode, Span};
pub use pipeline::{record_reports, take_reports, CallReport};
pub use srs::subgroup::ROUNDS as SUBGROUP_ROUNDS;
pub use params::open as open_params;
pub use srs::{LoadOptions, LoadReport, Srs};
