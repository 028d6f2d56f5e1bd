//! The library as a foreign caller sees it: the C declarations of
//! `include/supraseal_c2.h`, written out as `extern "C"`, and thin safe
//! wrappers. Nothing here calls the library's Rust internals.

// The wrappers pass lock handles through untouched; the library validates them.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::Path;

use bellperson::groth16::Proof;
use blstrs::{Bls12, Fp, Fp2, G1Affine, G2Affine, Scalar};

use supraseal_c2::{fr_t, groth16_proof, CAssignment};

use crate::collector::Witness;

/// `RustError` of the header.
#[repr(C)]
pub struct RawError {
    pub code: i32,
    pub message: *mut c_char,
}

/// `SRS` of the header.
#[repr(C)]
pub struct RawSrs {
    pub ptr: *const c_void,
}

extern "C" {
    pub fn create_SRS(ret: *mut RawSrs, params_path: *const c_char, cache: bool) -> RawError;
    pub fn evict_SRS(srs: *const RawSrs);
    pub fn drop_SRS(srs: *mut RawSrs);
    pub fn clone_SRS(srs: *const RawSrs) -> RawSrs;
    pub fn create_gpu_mutex() -> *mut c_void;
    pub fn destroy_gpu_mutex(handle: *mut c_void);
    pub fn generate_groth16_proofs_c(
        provers: *const CAssignment,
        num_circuits: usize,
        r_s: *const fr_t,
        s_s: *const fr_t,
        proofs: *mut groth16_proof,
        srs: *const RawSrs,
        gpu_mtx: *mut c_void,
        gpu_index: c_int,
    ) -> RawError;
    pub fn generate_groth16_proofs_start_c(
        provers: *const CAssignment,
        num_circuits: usize,
        r_s: *const fr_t,
        s_s: *const fr_t,
        srs: *const RawSrs,
        gpu_mtx: *mut c_void,
        gpu_index: c_int,
        pending_out: *mut *mut c_void,
    ) -> RawError;
    pub fn finalize_groth16_proof_c(pending: *mut c_void, proofs: *mut groth16_proof) -> RawError;
    pub fn destroy_pending_proof(pending: *mut c_void);
}

/// An error returned through the ABI: its code and message (the C string is
/// copied and released with `free`, as a C caller does). Shown as the
/// message and the code's name (`… (ENOENT)`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", with_code_name(message, &self.code_name()))]
pub struct AbiError {
    pub code: i32,
    pub message: String,
}

impl AbiError {
    /// The code by name: `EINVAL`, or `CUDA error 2` where the message says
    /// it is one (the ABI's two numberings overlap; the library's messages
    /// for CUDA failures start "CUDA error").
    pub fn code_name(&self) -> String {
        if self.message.contains("CUDA error") {
            return format!("CUDA error {}", self.code);
        }
        supraseal_c2::errno_name(self.code).map_or_else(|| format!("code {}", self.code), str::to_string)
    }
}

/// `message (NAME)`, or `message` alone where it already ends with the name
/// (the library's I/O messages do: `No such file or directory (ENOENT)`).
pub fn with_code_name(message: &str, name: &str) -> String {
    if message.ends_with(&format!("({name})")) {
        message.to_string()
    } else {
        format!("{message} ({name})")
    }
}

/// Converts a returned `RawError`, freeing its message.
pub fn check(e: RawError) -> Result<(), AbiError> {
    let message = if e.message.is_null() {
        String::new()
    } else {
        // SAFETY: non-NULL messages are NUL-terminated and malloc'ed by the library.
        let s = unsafe { CStr::from_ptr(e.message) }.to_string_lossy().into_owned();
        // SAFETY: the caller owns the message and frees it exactly once.
        unsafe { libc::free(e.message as *mut c_void) };
        s
    };
    if e.code == 0 {
        Ok(())
    } else {
        Err(AbiError { code: e.code, message })
    }
}

/// A params handle owned by this caller (`drop_SRS` on drop).
pub struct Params {
    raw: RawSrs,
}

// SAFETY: the library documents SRS handles as shareable across threads.
unsafe impl Send for Params {}
// SAFETY: as above.
unsafe impl Sync for Params {}

impl Params {
    /// Takes ownership of a C `SRS` value (one reference, released on drop),
    /// e.g. from `supraseal_c2::SRS::into_raw` for an in-memory key.
    ///
    /// # Safety
    /// `ptr` is a live handle that nothing else will drop.
    pub unsafe fn from_raw(ptr: *const c_void) -> Params {
        Params { raw: RawSrs { ptr } }
    }

    /// `create_SRS(path, cache)`.
    pub fn open(path: &Path, cache: bool) -> Result<Params, AbiError> {
        let c = CString::new(path.as_os_str().as_encoded_bytes()).expect("path without NUL");
        let mut raw = RawSrs { ptr: std::ptr::null() };
        // SAFETY: valid out pointer and C string.
        check(unsafe { create_SRS(&mut raw, c.as_ptr(), cache) })?;
        Ok(Params { raw })
    }

    /// `evict_SRS`.
    pub fn evict(&self) {
        // SAFETY: live handle.
        unsafe { evict_SRS(&self.raw) }
    }

    /// The raw handle for direct calls.
    pub fn raw(&self) -> *const RawSrs {
        &self.raw
    }
}

impl Clone for Params {
    fn clone(&self) -> Self {
        // SAFETY: live handle.
        Params { raw: unsafe { clone_SRS(&self.raw) } }
    }
}

impl Drop for Params {
    fn drop(&mut self) {
        // SAFETY: we own one reference.
        unsafe { drop_SRS(&mut self.raw) }
    }
}

fn scalars(v: &[Scalar]) -> *const fr_t {
    v.as_ptr() as *const fr_t
}

/// One-shot proving of `witnesses` with their r and s.
pub fn prove(
    params: &Params,
    witnesses: &[Witness],
    r: &[Scalar],
    s: &[Scalar],
    gpu_mtx: *mut c_void,
    gpu_index: i32,
) -> Result<Vec<groth16_proof>, AbiError> {
    prove_refs(params, &witnesses.iter().collect::<Vec<_>>(), r, s, gpu_mtx, gpu_index)
}

/// [`prove`] over witnesses that live in different places.
pub fn prove_refs(
    params: &Params,
    witnesses: &[&Witness],
    r: &[Scalar],
    s: &[Scalar],
    gpu_mtx: *mut c_void,
    gpu_index: i32,
) -> Result<Vec<groth16_proof>, AbiError> {
    assert!(r.len() == witnesses.len() && s.len() == witnesses.len());
    let provers: Vec<CAssignment> = witnesses.iter().map(|w| w.assignment()).collect();
    let mut proofs = vec![groth16_proof::default(); witnesses.len()];
    // SAFETY: every array holds witnesses.len() elements and outlives the call.
    check(unsafe {
        generate_groth16_proofs_c(
            provers.as_ptr(),
            provers.len(),
            scalars(r),
            scalars(s),
            proofs.as_mut_ptr(),
            params.raw(),
            gpu_mtx,
            gpu_index,
        )
    })?;
    Ok(proofs)
}

/// A pending split-form proof (`destroy_pending_proof` on drop unless finalized).
pub struct PendingProof {
    handle: *mut c_void,
    circuits: usize,
}

impl PendingProof {
    /// `generate_groth16_proofs_start_c`.
    pub fn start(
        params: &Params,
        witnesses: &[Witness],
        r: &[Scalar],
        s: &[Scalar],
        gpu_mtx: *mut c_void,
        gpu_index: i32,
    ) -> Result<PendingProof, AbiError> {
        assert!(r.len() == witnesses.len() && s.len() == witnesses.len());
        let provers: Vec<CAssignment> = witnesses.iter().map(Witness::assignment).collect();
        let mut handle = std::ptr::null_mut();
        // SAFETY: arrays hold witnesses.len() elements; out pointer valid.
        check(unsafe {
            generate_groth16_proofs_start_c(
                provers.as_ptr(),
                provers.len(),
                scalars(r),
                scalars(s),
                params.raw(),
                gpu_mtx,
                gpu_index,
                &mut handle,
            )
        })?;
        Ok(PendingProof { handle, circuits: witnesses.len() })
    }

    /// The raw handle (for tests of misuse).
    pub fn raw(&self) -> *mut c_void {
        self.handle
    }

    /// `finalize_groth16_proof_c`, which consumes the handle.
    pub fn finalize(mut self) -> Result<Vec<groth16_proof>, AbiError> {
        let mut proofs = vec![groth16_proof::default(); self.circuits];
        let h = std::mem::replace(&mut self.handle, std::ptr::null_mut());
        // SAFETY: live handle; proofs holds the start call's circuit count.
        check(unsafe { finalize_groth16_proof_c(h, proofs.as_mut_ptr()) })?;
        Ok(proofs)
    }
}

impl Drop for PendingProof {
    fn drop(&mut self) {
        // SAFETY: NULL (finalized) or a live handle.
        unsafe { destroy_pending_proof(self.handle) }
    }
}

/// Converts a proof from the ABI layout into bellperson's type (the affine
/// coordinates are taken as they are: Montgomery-form limbs).
pub fn to_bellperson(p: &groth16_proof) -> Proof<Bls12> {
    let fp = |l: &[u64; 6]| Fp::from_raw_unchecked(*l);
    let g1 = |x: &supraseal_c2::abi::types::g1_affine_t| G1Affine::from_raw_unchecked(fp(&x.x.limbs), fp(&x.y.limbs), false);
    let fp2 = |x: &supraseal_c2::abi::types::fp2_t| Fp2::new(fp(&x.c0.limbs), fp(&x.c1.limbs));
    let b = G2Affine::from_raw_unchecked(fp2(&p.b.x), fp2(&p.b.y), false);
    Proof { a: g1(&p.a), b, c: g1(&p.c) }
}

/// Verifies `proof` against `vk` and the public inputs with bellperson.
pub fn verify(vk: &bellperson::groth16::VerifyingKey<Bls12>, proof: &groth16_proof, public_inputs: &[Scalar]) -> bool {
    let pvk = bellperson::groth16::prepare_verifying_key(vk);
    let p = to_bellperson(proof);
    // Reject encodings that are not valid group elements before pairing.
    let ok_points = bool::from(p.a.is_on_curve() & p.a.is_torsion_free() & p.c.is_on_curve() & p.c.is_torsion_free())
        && bool::from(p.b.is_on_curve() & p.b.is_torsion_free());
    ok_points && bellperson::groth16::verify_proof(&pvk, &p, public_inputs).unwrap_or(false)
}
