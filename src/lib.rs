//! A drop-in replacement for supraseal's C2 prover: Groth16 proofs over
//! BLS12-381 for Filecoin PoRep commit phase 2, behind supraseal-c2's C ABI.
//!
//! # The life of a proof
//! 1. A caller (C, Go via cgo, or Rust through [`generate_groth16_proofs`])
//!    calls `generate_groth16_proofs_c` ([`abi::exports`]) with one
//!    `Assignment` per circuit and a params handle from `create_SRS`
//!    ([`srs`]: parsed, every point checked, cached).
//! 2. Phase 0, no lock: every pointer and size is validated into a borrowed
//!    [`assignment::Batch`]; r and s are copied.
//! 3. [`pipeline::prove`] runs docs/ARCHITECTURE.md §5's phases on a [`backend::Backend`]
//!    ([`cpu`] or [`gpu`]) with the lock handle ([`locks`]): phase 0 pins
//!    a/b/c and starts a CPU thread for the split-MSM plans
//!    ([`groth16::split`]) and the parts of B′ in G2 the backend keeps on the
//!    CPU (the G2 MSMs by default); phase 1 pre-stages a/b/c on the device
//!    under the memory lock (or decides the fallback); phase 2 runs the NTTs,
//!    H-MSM, batch additions (G1, and G2 on the GPU) and tails under the
//!    compute lock;
//!    phase 3 unpins and joins. Switches: [`config`].
//! 4. [`groth16::epilogue`] blinds with r and s and writes the proofs
//!    ([`pipeline::Pending::finish`]); the split form runs this in `finalize`.
//!
//! Layout assumptions (docs/ARCHITECTURE.md §2): a 64-bit little-endian target, where
//! `usize` is 8 bytes and blst's field types are little-endian u64 limbs.

#![deny(clippy::all, clippy::perf, clippy::correctness)]
#![allow(clippy::missing_safety_doc)] // every unsafe fn documents its contract in prose

#[cfg(not(all(target_endian = "little", target_pointer_width = "64")))]
compile_error!("supraseal-c2 supports only 64-bit little-endian targets (the C ABI layout assumes it)");

pub mod abi;
pub mod api;
pub mod assignment;
pub mod backend;
pub mod config;
pub mod cpu;
pub mod error;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing; // fuzz harnesses (fuzz/, tests/fuzz_corpus.rs); not a supported API
pub mod gpu;
pub mod groth16;
pub mod locks;
pub mod log;
pub mod pipeline;
pub mod srs;

pub use abi::types::{fr_t, groth16_proof, CAssignment, RustError};
pub use api::{
    alloc_gpu_mutex, cuda, drop_pending_proof, finish_groth16_proof, free_gpu_mutex, generate_groth16_proof,
    generate_groth16_proof_on_gpu, generate_groth16_proofs, generate_groth16_proofs_on_gpu, start_groth16_proof,
    start_groth16_proof_on_gpu, start_groth16_proofs, Assignment, SRS,
};
pub use error::{Error, Result};
