//! The Rust API of the published `supraseal-c2` 0.1.2 crate, so that Rust
//! callers (bellperson 0.27's `cuda-supraseal` prover) can switch to this
//! package through `[patch.crates-io]` unchanged.
//!
//! As in the reference, these functions call the exported C functions and
//! panic when they return an error (bellperson expects that); use the C ABI
//! directly for error codes.

use std::path::PathBuf;

pub use crate::abi::types::SRS;

/// The reference's `cuda` module: its `Error` is the C ABI's error struct.
pub mod cuda {
    pub use crate::abi::types::RustError as Error;
}

impl SRS {
    /// Loads a params file (see `create_SRS`). Errors: the code and message
    /// of `create_SRS` (ENOENT, EINVAL with file/section/offset, ...).
    pub fn try_new(srs_path: PathBuf, cache: bool) -> Result<Self, cuda::Error> {
        let bytes = std::os::unix::ffi::OsStrExt::as_bytes(srs_path.as_os_str()).to_vec();
        let c_path = std::ffi::CString::new(bytes).map_err(|_| {
            crate::error::Error::invalid(format!("{}: path contains a NUL byte", srs_path.display()))
        })?;
        let mut ret = SRS::default();
        // SAFETY: `ret` is writable and `c_path` is a valid C string.
        let err = unsafe { crate::abi::exports::create_SRS(&mut ret, c_path.as_ptr(), cache) };
        if err.code != 0 {
            Err(err)
        } else {
            Ok(ret)
        }
    }

    /// Removes this key's path from the cache (handles stay valid).
    pub fn evict(&self) {
        // SAFETY: `self` is a live handle.
        unsafe { crate::abi::exports::evict_SRS(self) }
    }
}

impl Drop for SRS {
    fn drop(&mut self) {
        // SAFETY: `self` is a handle we own; drop_SRS empties it.
        unsafe { crate::abi::exports::drop_SRS(self) }
    }
}

impl Clone for SRS {
    fn clone(&self) -> Self {
        // SAFETY: `self` is a live handle.
        unsafe { crate::abi::exports::clone_SRS(self) }
    }
}

/// One circuit's witness, generic over the scalar type as in the reference
/// (`Scalar` must be a 32-byte Montgomery-form Fr such as blstrs' `Scalar`).
/// Same layout as the C `Assignment` (136 bytes); field meanings there.
#[repr(C)]
#[derive(Debug)]
pub struct Assignment<Scalar> {
    pub a_aux_density: *const usize,
    pub a_aux_bit_len: usize,
    pub a_aux_popcount: usize,

    pub b_inp_density: *const usize,
    pub b_inp_bit_len: usize,
    pub b_inp_popcount: usize,

    pub b_aux_density: *const usize,
    pub b_aux_bit_len: usize,
    pub b_aux_popcount: usize,

    pub a: *const Scalar,
    pub b: *const Scalar,
    pub c: *const Scalar,
    pub abc_size: usize,

    pub inp_assignment_data: *const Scalar,
    pub inp_assignment_size: usize,

    pub aux_assignment_data: *const Scalar,
    pub aux_assignment_size: usize,
}

fn check_types<S, PR>() {
    assert_eq!(std::mem::size_of::<S>(), 32, "scalar type must be a 32-byte Fr (blstrs::Scalar)");
    assert_eq!(std::mem::size_of::<PR>(), 384, "proof type must be a 384-byte Groth16 proof");
}

/// Proves every circuit of `provers` with its r and s into `proofs` (which
/// may be uninitialised: every slot is written on success), using the default
/// lock and any GPU. Panics with the library's message on error, as the
/// reference does. `r_s`, `s_s` and `proofs` must have `provers.len()` elements.
pub fn generate_groth16_proofs<S, PR>(provers: &[Assignment<S>], r_s: &[S], s_s: &[S], proofs: &mut [PR], srs: &SRS) {
    check_types::<S, PR>();
    let n = provers.len();
    assert_eq!(r_s.len(), n, "r_s length");
    assert_eq!(s_s.len(), n, "s_s length");
    assert_eq!(proofs.len(), n, "proofs length");
    // SAFETY: lengths checked above; the layouts match (check_types and the
    // layout tests); pointers inside `provers` are the caller's contract.
    let err = unsafe {
        crate::abi::exports::generate_groth16_proofs_c(
            provers.as_ptr() as *const _,
            n,
            r_s.as_ptr() as *const _,
            s_s.as_ptr() as *const _,
            proofs.as_mut_ptr() as *mut _,
            srs,
            std::ptr::null_mut(),
            -1,
        )
    };
    if err.code != 0 {
        panic!("{}", String::from(err));
    }
}
