//! The Rust API: the published `supraseal-c2` 0.1.2 crate's API, unchanged,
//! so that Rust callers (bellperson 0.27's `cuda-supraseal` prover, and
//! through it filecoin-proofs) switch to this package with a
//! `[patch.crates-io] supraseal-c2 = { path = ... }` and no code change; plus
//! the lock-handle and split-form functions of the later forks (Curio's cuzk
//! engine).
//!
//! | 0.1.2 | added here |
//! |---|---|
//! | [`SRS::try_new`], [`SRS::evict`], `Clone`, `Drop`, `Send + Sync` | |
//! | [`generate_groth16_proofs`] | [`generate_groth16_proofs_on_gpu`] (`gpu_mtx`, `gpu_index`) |
//! | [`generate_groth16_proof`] (19 arguments) | [`generate_groth16_proof_on_gpu`] (+ `gpu_mtx`, `gpu_index`) |
//! | [`Assignment<S>`] | [`alloc_gpu_mutex`], [`free_gpu_mutex`] |
//! | | [`start_groth16_proof`], [`start_groth16_proof_on_gpu`], [`start_groth16_proofs`], [`finish_groth16_proof`], [`drop_pending_proof`] |
//!
//! **Curio's fork (`curio-fork` feature).** Curio's cuzk engine builds
//! against its fork of supraseal-c2 (`extern/supraseal-c2` in the curio
//! repository), whose two split-argument functions take the lock handle and
//! the device: `generate_groth16_proof(…, proofs, srs, gpu_mtx, gpu_index)`
//! (21 arguments) and `start_groth16_proof(…, srs, gpu_mtx, gpu_index)` (20).
//! With the feature these two names take exactly those signatures (Curio's
//! bellperson compiles against this crate unchanged); without it they take
//! 19 arguments (0.1.2's `generate_groth16_proof`; the start with a lock
//! handle and no device). Everything else is the same either way: the fork's
//! other functions have the signatures above, and the `_on_gpu` functions
//! stay. The feature also calls the host's `set_membw_throttle` and reads
//! `CUZK_GPU_THREADS` as the fork does (`src/curio.rs`). One timing differs:
//! the fork's start returns before its CPU-side G2 MSM ends and its finish
//! waits for it; here start returns after the G2 MSMs (see
//! [`start_groth16_proof_on_gpu`]).
//!
//! Every function here is a thin wrapper over the exported C functions
//! ([`crate::abi::exports`]), so Rust and C callers get the same validation
//! and the same results.
//!
//! **Types.** The generic scalar `S` must be a 32-byte BLS12-381 Fr in
//! Montgomery form with little-endian u64 limbs (blstrs' `Scalar`,
//! [`crate::fr_t`]); the generic proof `PR` must be a 384-byte
//! `{ G1 a; G2 b; G1 c }` of affine points in the same representation
//! (bellperson's `Proof<Bls12>`, [`crate::groth16_proof`]); density words `D`
//! must be 64-bit. Other sizes are refused with a panic before any pointer is
//! read.
//!
//! **Errors.** As in the reference, the proving functions panic when the
//! library returns an error; the panic message is the library's message
//! followed by `(code N)` (an errno value: `EINVAL` for bad arguments or
//! mismatched sizes, `ENODEV` when a GPU was demanded and none is usable,
//! `EBADMSG` when `SUPRASEAL_C2_VERIFY=1` and a proof does not verify,
//! `EFAULT` for an internal error). Callers that want the code as a value use
//! [`SRS::try_new`] (a `Result`) or the C functions in [`crate::abi::exports`].
//!
//! **Safety.** Like the reference, these functions are safe to call but take
//! raw pointers (inside [`Assignment`] and in the split-argument functions):
//! the caller guarantees that each points to as many readable elements as the
//! accompanying sizes say, for the duration of the call (for the split form,
//! until `start` returns). The library validates everything it can (NULL,
//! alignment, counts against the params file, densities) and never writes
//! through these pointers.

// The reference API passes raw lock and pending handles to safe functions;
// the signatures are the compatibility contract, so the lint is allowed here.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

use std::ffi::{c_int, c_void};
use std::path::PathBuf;

use crate::abi::exports;
use crate::abi::types::{fr_t, groth16_proof, CAssignment, RustError};

pub use crate::abi::types::SRS;
pub use parts::{generate_groth16_proof, generate_groth16_proof_on_gpu, start_groth16_proof, start_groth16_proof_on_gpu};

mod parts;

/// The reference's `cuda` module. `cuda::Error` is the C ABI's error struct
/// ([`RustError`], the layout of sppark's `Error`): `code` is 0 on success or
/// an errno value; the message is freed on `Drop`; `String::from(err)` and
/// `err.to_string()` give `"<message> (code N)"`.
pub mod cuda {
    pub use crate::abi::types::RustError as Error;
}

impl SRS {
    /// Loads a Groth16 params file (bellperson/Filecoin `.params` format) and
    /// returns a handle to it, as the C function `create_SRS` does.
    ///
    /// `cache = true` shares one loaded copy per path through a small LRU
    /// cache (4 paths), so a second `try_new` of the same path is free;
    /// `cache = false` always loads (bellperson's `SuprasealParameters` uses
    /// `false`). Loading checks every point (on the curve, in the subgroup)
    /// and every section length.
    ///
    /// Errors: `ENOENT` (no such file), `EINVAL` (malformed file: the message
    /// names the file, section and byte offset; or a path with a NUL byte),
    /// another errno value when the file cannot be read.
    pub fn try_new(srs_path: PathBuf, cache: bool) -> Result<Self, cuda::Error> {
        let bytes = std::os::unix::ffi::OsStrExt::as_bytes(srs_path.as_os_str()).to_vec();
        let c_path = std::ffi::CString::new(bytes).map_err(|_| {
            crate::error::Error::invalid(format!("SRS::try_new: path {} contains a NUL byte", srs_path.display()))
        })?;
        let mut ret = SRS::default();
        // SAFETY: `ret` is writable and `c_path` is a valid C string.
        let err = unsafe { exports::create_SRS(&mut ret, c_path.as_ptr(), cache) };
        if err.code != 0 {
            Err(err)
        } else {
            Ok(ret)
        }
    }

    /// A handle owning one reference to a key built in memory
    /// ([`crate::srs::Srs::from_parts`]; not cached), as `create_SRS` would return it.
    pub fn from_key(key: std::sync::Arc<crate::srs::Srs>) -> SRS {
        SRS { ptr: std::sync::Arc::into_raw(key) as *const std::ffi::c_void }
    }

    /// Gives up ownership: the C `SRS` value (one pointer), to be released with `drop_SRS`.
    pub fn into_raw(self) -> *const std::ffi::c_void {
        let ptr = self.ptr;
        std::mem::forget(self);
        ptr
    }

    /// Removes this handle's path from the cache, so that the next
    /// `try_new(path, true)` reloads the file (for instance after it was
    /// replaced). This handle and its clones stay valid; the memory is freed
    /// when the last of them is dropped. No-op for uncached or empty handles.
    pub fn evict(&self) {
        // SAFETY: `self` is a live (or empty) handle.
        unsafe { exports::evict_SRS(self) }
    }
}

/// Releases this handle's reference (`drop_SRS`); the params are freed with
/// the last handle (and the cache's own reference, if cached).
impl Drop for SRS {
    fn drop(&mut self) {
        // SAFETY: `self` is a handle we own; drop_SRS empties it.
        unsafe { exports::drop_SRS(self) }
    }
}

/// A new handle to the same loaded params (`clone_SRS`): a reference count
/// increment, no copy.
impl Clone for SRS {
    fn clone(&self) -> Self {
        // SAFETY: `self` is a live (or empty) handle.
        unsafe { exports::clone_SRS(self) }
    }
}

/// One circuit's witness, as bellperson's prover lays it out: 17 machine
/// words (136 bytes), the layout of the C `Assignment` ([`CAssignment`]).
/// Generic over the scalar type as in the reference; `Scalar` must be a
/// 32-byte Montgomery-form Fr (blstrs' `Scalar`).
///
/// Bit vectors are arrays of 64-bit words: bit i is bit (i % 64) of word
/// i / 64. All circuits of one call must have the same sizes and the same
/// density bit vectors.
#[repr(C)]
#[derive(Debug)]
pub struct Assignment<Scalar> {
    /// A-query density over the aux variables: which aux variables appear in
    /// some A polynomial (`a_aux_bit_len` bits).
    pub a_aux_density: *const usize,
    /// Number of bits in `a_aux_density` (= `aux_assignment_size`).
    pub a_aux_bit_len: usize,
    /// Number of set bits in `a_aux_density`.
    pub a_aux_popcount: usize,

    /// B-query density over the input variables (`b_inp_bit_len` bits).
    pub b_inp_density: *const usize,
    /// Number of bits in `b_inp_density` (= `inp_assignment_size`).
    pub b_inp_bit_len: usize,
    /// Number of set bits in `b_inp_density`.
    pub b_inp_popcount: usize,

    /// B-query density over the aux variables (`b_aux_bit_len` bits).
    pub b_aux_density: *const usize,
    /// Number of bits in `b_aux_density` (= `aux_assignment_size`).
    pub b_aux_bit_len: usize,
    /// Number of set bits in `b_aux_density`.
    pub b_aux_popcount: usize,

    /// Evaluations of the A polynomial at the constraints (`abc_size` scalars).
    pub a: *const Scalar,
    /// Evaluations of the B polynomial (`abc_size` scalars).
    pub b: *const Scalar,
    /// Evaluations of the C polynomial (`abc_size` scalars).
    pub c: *const Scalar,
    /// Number of constraints plus inputs: the length of `a`, `b` and `c`
    /// (at most the domain size of the params file).
    pub abc_size: usize,

    /// Values of the input (public) variables, the constant one first.
    pub inp_assignment_data: *const Scalar,
    /// Number of input variables (must equal the params file's input count).
    pub inp_assignment_size: usize,

    /// Values of the aux (private) variables.
    pub aux_assignment_data: *const Scalar,
    /// Number of aux variables (must equal the params file's `l` count).
    pub aux_assignment_size: usize,
}

const _: () = {
    assert!(std::mem::size_of::<Assignment<fr_t>>() == std::mem::size_of::<CAssignment>());
    assert!(std::mem::align_of::<Assignment<fr_t>>() == std::mem::align_of::<CAssignment>());
};

/// Panics unless `S` and `PR` have the sizes of Fr and of a Groth16 proof.
pub(crate) fn check_types<S, PR>() {
    assert_eq!(std::mem::size_of::<S>(), std::mem::size_of::<fr_t>(), "scalar type must be a 32-byte Fr (blstrs::Scalar)");
    assert_eq!(
        std::mem::size_of::<PR>(),
        std::mem::size_of::<groth16_proof>(),
        "proof type must be a 384-byte Groth16 proof (bellperson's Proof<Bls12>)"
    );
}

/// Panics on a library error, as the reference does.
fn ok_or_panic(err: RustError) {
    if err.code != 0 {
        panic!("{}", String::from(err));
    }
}

/// Proves every circuit of `provers` with its `r_s[i]`, `s_s[i]` and writes
/// `proofs[i]`, using the process-wide default lock and whichever device the
/// library chooses. The 0.1.2 signature (what bellperson 0.27 calls).
///
/// `r_s`, `s_s` and `proofs` must have `provers.len()` elements (panics
/// otherwise). `proofs` may be uninitialised memory (bellperson passes
/// `Vec::with_capacity` + `set_len`): every slot is written on success and
/// none is read. Panics with the library's message on any error (see the
/// module docs).
pub fn generate_groth16_proofs<S, PR>(provers: &[Assignment<S>], r_s: &[S], s_s: &[S], proofs: &mut [PR], srs: &SRS) {
    generate_groth16_proofs_on_gpu(provers, r_s, s_s, proofs, srs, std::ptr::null_mut(), -1)
}

/// [`generate_groth16_proofs`] with an explicit lock handle and device.
///
/// `gpu_mtx`: NULL for the process-wide default lock of the device, or a
/// handle from [`alloc_gpu_mutex`] shared by the workers that use one GPU.
/// `gpu_index`: −1 lets the library choose (and spread circuits over the
/// GPUs), ≥ 0 pins the call to that device (the CPU backend is one device:
/// every index uses device 0's default lock). Panics as [`generate_groth16_proofs`],
/// and with `EINVAL` for `gpu_index` < −1.
pub fn generate_groth16_proofs_on_gpu<S, PR>(
    provers: &[Assignment<S>],
    r_s: &[S],
    s_s: &[S],
    proofs: &mut [PR],
    srs: &SRS,
    gpu_mtx: *mut c_void,
    gpu_index: c_int,
) {
    check_types::<S, PR>();
    let n = provers.len();
    assert_eq!(r_s.len(), n, "r_s length");
    assert_eq!(s_s.len(), n, "s_s length");
    assert_eq!(proofs.len(), n, "proofs length");
    // SAFETY: the lengths match `n` (checked above); `Assignment<S>` has the
    // layout of `CAssignment` and S/PR the sizes of fr_t/groth16_proof
    // (checked); the pointers inside `provers` are the caller's contract.
    let err = unsafe {
        exports::generate_groth16_proofs_c(
            provers.as_ptr() as *const CAssignment,
            n,
            r_s.as_ptr() as *const fr_t,
            s_s.as_ptr() as *const fr_t,
            proofs.as_mut_ptr() as *mut groth16_proof,
            srs,
            gpu_mtx,
            gpu_index,
        )
    };
    ok_or_panic(err)
}

/// Creates a lock handle for one GPU (a memory lock and a compute lock,
/// `create_gpu_mutex`), to pass as `gpu_mtx` to every worker that shares
/// that GPU. Free it with [`free_gpu_mutex`] once no call uses it. Never NULL
/// in practice (NULL would mean an internal error; passing NULL as `gpu_mtx`
/// selects the default lock, so even that stays safe).
pub fn alloc_gpu_mutex() -> *mut c_void {
    exports::create_gpu_mutex()
}

/// Frees a lock handle from [`alloc_gpu_mutex`] (`destroy_gpu_mutex`). NULL
/// is ignored.
///
/// # Safety
/// `ptr` came from [`alloc_gpu_mutex`], is freed at most once, and no
/// proving call that uses it is running or starts afterwards.
pub unsafe fn free_gpu_mutex(ptr: *mut c_void) {
    // SAFETY: forwarded contract.
    unsafe { exports::destroy_gpu_mutex(ptr) }
}

/// Split form over [`Assignment`]s, part 1 (`generate_groth16_proofs_start_c`):
/// validates, takes the locks, runs the device (or CPU) work, releases the
/// locks and returns an opaque pending handle. The caller's buffers are not
/// read after this returns. Complete it with [`finish_groth16_proof`] or
/// abandon it with [`drop_pending_proof`] (exactly one of the two).
///
/// Panics as [`generate_groth16_proofs_on_gpu`] (`r_s`, `s_s`: one per prover).
pub fn start_groth16_proofs<S>(
    provers: &[Assignment<S>],
    r_s: &[S],
    s_s: &[S],
    srs: &SRS,
    gpu_mtx: *mut c_void,
    gpu_index: c_int,
) -> *mut c_void {
    check_types::<S, groth16_proof>();
    let n = provers.len();
    assert_eq!(r_s.len(), n, "r_s length");
    assert_eq!(s_s.len(), n, "s_s length");
    let mut pending: *mut c_void = std::ptr::null_mut();
    // SAFETY: as in generate_groth16_proofs_on_gpu; `pending` is writable.
    let err = unsafe {
        exports::generate_groth16_proofs_start_c(
            provers.as_ptr() as *const CAssignment,
            n,
            r_s.as_ptr() as *const fr_t,
            s_s.as_ptr() as *const fr_t,
            srs,
            gpu_mtx,
            gpu_index,
            &mut pending,
        )
    };
    ok_or_panic(err);
    pending
}

/// Split form, part 2 (`finalize_groth16_proof_c`): runs the epilogue,
/// writes one proof per circuit of the start call into `proofs` (which may
/// be uninitialised) and consumes the handle.
///
/// Panics when `proofs.len()` differs from the start call's circuit count
/// (the handle is then left pending, so [`drop_pending_proof`] can still
/// free it), and with `EINVAL` when `handle` is not a live pending handle
/// (NULL, finished, dropped or never returned by a start function).
pub fn finish_groth16_proof<PR>(handle: *mut c_void, proofs: &mut [PR]) {
    check_types::<fr_t, PR>();
    // A handle that is not live reaches finalize, whose EINVAL names it.
    if let Ok(n) = crate::abi::handles::pending_circuits(handle) {
        assert_eq!(proofs.len(), n, "proofs length (the start call had {n} circuits)");
    }
    // SAFETY: `proofs` holds as many proofs as the start call had circuits
    // (checked above for a live handle; finalize refuses any other) and PR
    // has the size of groth16_proof.
    let err = unsafe { exports::finalize_groth16_proof_c(handle, proofs.as_mut_ptr() as *mut groth16_proof) };
    ok_or_panic(err)
}

/// Frees a pending handle without finishing it (`destroy_pending_proof`).
/// NULL and handles already finished or dropped are ignored.
///
/// # Safety
/// None beyond the reference's contract: `handle` came from a start
/// function. (The library recognises stale handles, so a double drop is
/// harmless; the function stays `unsafe` for source compatibility.)
pub unsafe fn drop_pending_proof(handle: *mut c_void) {
    exports::destroy_pending_proof(handle)
}
