//! `#[repr(C)]` types of the C ABI (docs/ARCHITECTURE.md §2). Sizes and offsets are asserted
//! at compile time below and by the layout tests.
#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_void, CStr};

use blstrs::{G1Affine, G2Affine};

use crate::error::Error;

/// An element of Fr: 4 × u64, Montgomery form, little-endian limbs (32 bytes),
/// the layout of blst's `blst_fr` and blstrs' `Scalar`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct fr_t {
    pub limbs: [u64; 4],
}

/// An element of Fp: 6 × u64, Montgomery form, little-endian limbs (48 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct fp_t {
    pub limbs: [u64; 6],
}

/// An element of Fp2 = `c0 + c1·u` (96 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct fp2_t {
    pub c0: fp_t,
    pub c1: fp_t,
}

/// A G1 point in affine coordinates (96 bytes); infinity is x = y = 0.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct g1_affine_t {
    pub x: fp_t,
    pub y: fp_t,
}

/// A G2 point in affine coordinates (192 bytes); infinity is all zero.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct g2_affine_t {
    pub x: fp2_t,
    pub y: fp2_t,
}

/// A Groth16 proof `{ A ∈ G1, B ∈ G2, C ∈ G1 }` (384 bytes), the in-memory
/// layout of bellperson's `Proof<Bls12>`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct groth16_proof {
    pub a: g1_affine_t,
    pub b: g2_affine_t,
    pub c: g1_affine_t,
}

impl From<&G1Affine> for g1_affine_t {
    fn from(p: &G1Affine) -> Self {
        let raw: &blst::blst_p1_affine = p.as_ref();
        Self { x: fp_t { limbs: raw.x.l }, y: fp_t { limbs: raw.y.l } }
    }
}

impl From<&G2Affine> for g2_affine_t {
    fn from(p: &G2Affine) -> Self {
        let raw: &blst::blst_p2_affine = p.as_ref();
        let fp2 = |v: blst::blst_fp2| fp2_t { c0: fp_t { limbs: v.fp[0].l }, c1: fp_t { limbs: v.fp[1].l } };
        Self { x: fp2(raw.x), y: fp2(raw.y) }
    }
}

/// One circuit's witness as bellperson's prover builds it (17 machine words,
/// 136 bytes). Field order is the compatibility contract (supraseal's
/// `Assignment<fr_t>`). Density pointers are bit vectors of u64 words: bit i
/// is bit (i % 64) of word i / 64. `a`, `b`, `c` hold `abc_size` evaluations
/// each; scalars are [`fr_t`] (Montgomery form).
///
/// The C name is `Assignment` (renamed by cbindgen).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CAssignment {
    /// A-density of aux variables: `a_aux_bit_len` bits, `a_aux_popcount` ones.
    pub a_aux_density: *const u64,
    pub a_aux_bit_len: usize,
    pub a_aux_popcount: usize,
    /// B-density of input variables.
    pub b_inp_density: *const u64,
    pub b_inp_bit_len: usize,
    pub b_inp_popcount: usize,
    /// B-density of aux variables.
    pub b_aux_density: *const u64,
    pub b_aux_bit_len: usize,
    pub b_aux_popcount: usize,
    /// Evaluations of the A, B, C polynomials at the constraints.
    pub a: *const fr_t,
    pub b: *const fr_t,
    pub c: *const fr_t,
    pub abc_size: usize,
    /// Input (public) variable values; index 0 is the constant one.
    pub inp_assignment_data: *const fr_t,
    pub inp_assignment_size: usize,
    /// Aux (private) variable values.
    pub aux_assignment_data: *const fr_t,
    pub aux_assignment_size: usize,
}

/// The error returned by every fallible export (16 bytes): `code` 0 means
/// success; otherwise `message` is NULL or a NUL-terminated string allocated
/// with `malloc`, which the caller releases with `free`. Rust callers get
/// `Drop`, which frees it. Same layout as sppark's `cuda::Error`.
///
/// `code` is an errno value for the library's own errors (`EINVAL`, `ENOENT`,
/// `EIO`, `ENOMEM`, `ENODEV`, `EBUSY`, `EFAULT`) and a CUDA driver error
/// number for device failures, as in the reference. The two numberings
/// overlap: 2 is both `ENOENT` (only from `create_SRS`: no such params file)
/// and `CUDA_ERROR_OUT_OF_MEMORY` (only from the proving calls); 3 is both
/// `ESRCH` and `CUDA_ERROR_NOT_INITIALIZED`. Tell them apart by the function
/// that returned the code, or by the message: a device failure's message
/// starts with the export's name and contains "CUDA error in".
#[repr(C)]
#[derive(Debug)]
pub struct RustError {
    pub code: i32,
    pub message: *mut c_char,
}

impl RustError {
    /// Success: code 0, no message.
    pub const OK: RustError = RustError { code: 0, message: std::ptr::null_mut() };

    /// The message as Rust text ("" when NULL).
    pub fn message_str(&self) -> String {
        if self.message.is_null() {
            return String::new();
        }
        // SAFETY: non-NULL messages are NUL-terminated strings we allocated.
        unsafe { CStr::from_ptr(self.message) }.to_string_lossy().into_owned()
    }
}

impl From<Error> for RustError {
    fn from(e: Error) -> Self {
        RustError { code: e.code, message: malloc_cstring(&e.message) }
    }
}

impl From<crate::error::Result<()>> for RustError {
    fn from(r: crate::error::Result<()>) -> Self {
        match r {
            Ok(()) => RustError::OK,
            Err(e) => e.into(),
        }
    }
}

impl Drop for RustError {
    fn drop(&mut self) {
        if !self.message.is_null() {
            // SAFETY: messages are allocated by `malloc_cstring` and owned here.
            unsafe { libc::free(self.message as *mut c_void) };
            self.message = std::ptr::null_mut();
        }
    }
}

impl std::fmt::Display for RustError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (code {})", self.message_str(), self.code)
    }
}

impl std::error::Error for RustError {}

impl From<RustError> for String {
    fn from(e: RustError) -> String {
        e.to_string()
    }
}

/// Copies `s` into a `malloc`ed NUL-terminated buffer (NUL bytes inside `s`
/// become '?'). Returns NULL only if `malloc` fails.
fn malloc_cstring(s: &str) -> *mut c_char {
    let bytes = s.as_bytes();
    // SAFETY: we request len + 1 bytes and write exactly that many below.
    let p = unsafe { libc::malloc(bytes.len() + 1) } as *mut u8;
    if p.is_null() {
        return std::ptr::null_mut();
    }
    for (i, &b) in bytes.iter().enumerate() {
        // SAFETY: i < len, inside the allocation.
        unsafe { *p.add(i) = if b == 0 { b'?' } else { b } };
    }
    // SAFETY: index len is the last byte of the allocation.
    unsafe { *p.add(bytes.len()) = 0 };
    p as *mut c_char
}

/// The opaque, reference-counted params handle (8 bytes). `ptr` is NULL for an
/// empty handle or the result of `Arc::into_raw` on the loaded [`crate::srs::Srs`].
/// The Rust API ([`SRS::try_new`], `Clone`, `Drop`) manages the count for you;
/// C callers pair every `create_SRS`/`clone_SRS` with one `drop_SRS`.
#[repr(C)]
#[derive(Debug)]
pub struct SRS {
    pub(crate) ptr: *const c_void,
}

// SAFETY: the pointee is an immutable `Srs` behind an `Arc`, safe to share and send.
unsafe impl Send for SRS {}
// SAFETY: as above; no interior mutability is reachable through the handle.
unsafe impl Sync for SRS {}

impl Default for SRS {
    fn default() -> Self {
        SRS { ptr: std::ptr::null() }
    }
}

const _: () = {
    use std::mem::{align_of, size_of};
    assert!(size_of::<fr_t>() == 32);
    assert!(size_of::<fp_t>() == 48);
    assert!(size_of::<g1_affine_t>() == 96);
    assert!(size_of::<g2_affine_t>() == 192);
    assert!(size_of::<groth16_proof>() == 384);
    assert!(size_of::<CAssignment>() == 136);
    assert!(size_of::<RustError>() == 16);
    assert!(size_of::<SRS>() == 8);
    assert!(size_of::<blstrs::Scalar>() == size_of::<fr_t>());
    assert!(align_of::<blstrs::Scalar>() == align_of::<fr_t>());
    assert!(size_of::<G1Affine>() == size_of::<g1_affine_t>());
    assert!(size_of::<G2Affine>() == size_of::<g2_affine_t>());
};
