//! Raw pointers in, safe values out: the proving exports' arguments become a
//! [`pipeline::Call`] (a borrowed, validated batch, an `Arc<Srs>`, the lock
//! handle, r and s) before anything else happens, and the caller's proof
//! array becomes a slice of slots.

use std::ffi::{c_int, c_void};
use std::mem::MaybeUninit;
use std::time::Instant;

use blstrs::Scalar;

use super::handles;
use super::types::{fr_t, groth16_proof, CAssignment, SRS};
use crate::error::{Error, Result};
use crate::pipeline::{self, Locks, Pending};
use crate::srs::Srs;

/// Borrows the `Srs` behind a handle.
///
/// # Safety
/// `srs` is NULL or points to an `SRS` produced by `create_SRS`/`clone_SRS`
/// and not yet dropped.
pub(crate) unsafe fn srs_ref<'a>(srs: *const SRS) -> Result<&'a Srs> {
    check_ptr(srs, "srs")?;
    // SAFETY: non-NULL, aligned, and valid by the caller's contract.
    let ptr = unsafe { (*srs).ptr };
    if ptr.is_null() {
        return Err(Error::invalid("srs is an empty handle (ptr is NULL; dropped or never created)"));
    }
    // SAFETY: `ptr` came from `Arc::into_raw` and the caller holds a reference.
    Ok(unsafe { &*(ptr as *const Srs) })
}

/// A new strong reference to the `Srs` behind a handle (for work that
/// outlives the call, such as a pending split-form proof).
///
/// # Safety
/// As [`srs_ref`].
pub(crate) unsafe fn srs_arc(srs: *const SRS) -> Result<std::sync::Arc<Srs>> {
    // SAFETY: forwarded contract; checks NULL and empty handles.
    let key: *const Srs = unsafe { srs_ref(srs) }?;
    // SAFETY: `key` came from `Arc::into_raw` and the caller's handle keeps a
    // count alive, so adding one and taking it back as an Arc is balanced.
    unsafe {
        std::sync::Arc::increment_strong_count(key);
        Ok(std::sync::Arc::from_raw(key))
    }
}

/// Copies `n` scalars of r or s.
///
/// # Safety
/// `ptr` is NULL or valid for `n` reads.
unsafe fn copy_scalars(ptr: *const fr_t, n: usize, name: &str) -> Result<Vec<Scalar>> {
    if ptr.is_null() {
        return Err(Error::invalid(format!("{name} is NULL but num_circuits is {n}")));
    }
    crate::assignment::check_aligned(ptr, || name)?;
    let mut v = crate::error::try_vec(n, format_args!("{name} (num_circuits = {n})"))?;
    // SAFETY: caller contract: `n` readable elements; Scalar shares fr_t's layout.
    v.extend_from_slice(unsafe { std::slice::from_raw_parts(ptr as *const Scalar, n) });
    Ok(v)
}

/// Validates a proving call's arguments and runs it up to the epilogue
/// ([`pipeline::start`]).
///
/// # Safety
/// The ABI contract of `generate_groth16_proofs_c` (docs/ARCHITECTURE.md §2).
pub(crate) unsafe fn start(
    provers: *const CAssignment,
    num_circuits: usize,
    r_s: *const fr_t,
    s_s: *const fr_t,
    srs: *const SRS,
    gpu_mtx: *mut c_void,
    gpu_index: c_int,
) -> Result<Pending> {
    crate::log::init_from_env();
    let t0 = Instant::now();
    // Our own reference, held for the pending handle's lifetime.
    // SAFETY: forwarded contract.
    let key = unsafe { srs_arc(srs) }?;
    // Circuits 1..'s scalars are checked by the pipeline, beside circuit 0's device work,
    // on the library's pool; without that pool (threads could not start) their parallel
    // scan would go to the global pool, which a caller proving from inside it may be
    // the only worker of: then all are checked here.
    let batch = if crate::threads::has_cpu_pool() {
        // SAFETY: forwarded contract.
        unsafe { crate::assignment::validate_deferring(provers, num_circuits, &key) }?
    } else {
        // SAFETY: forwarded contract.
        unsafe { crate::assignment::validate(provers, num_circuits, &key) }?
    };
    // SAFETY: forwarded contract (`num_circuits` elements each).
    let r = unsafe { copy_scalars(r_s, num_circuits, "r_s") }?;
    let s = unsafe { copy_scalars(s_s, num_circuits, "s_s") }?;
    crate::assignment::check_canonical(&r, || "r_s".into())?;
    crate::assignment::check_canonical(&s, || "s_s".into())?;
    if gpu_index < -1 {
        return Err(Error::invalid(format!("gpu_index is {gpu_index} but must be -1 (any) or a device index ≥ 0")));
    }
    let locks = if gpu_mtx.is_null() { Locks::Default } else { Locks::Caller(handles::lock(gpu_mtx)?) };
    let gpu_index = usize::try_from(gpu_index).ok();
    pipeline::start(pipeline::Call { key, batch, r, s, locks, gpu_index, validated: t0.elapsed() })
}

/// Checks that the argument `name` is a non-NULL pointer aligned for `T`.
pub(crate) fn check_ptr<T>(ptr: *const T, name: &str) -> Result<()> {
    if ptr.is_null() {
        return Err(Error::invalid(format!("{name} is NULL")));
    }
    crate::assignment::check_aligned(ptr, || name)
}

/// Checks the caller's proof array pointer (non-NULL, aligned).
pub(crate) fn check_proofs(proofs: *mut groth16_proof) -> Result<()> {
    check_ptr(proofs.cast_const(), "proofs")
}

/// The caller's proof array as `n` writable slots.
///
/// # Safety
/// `proofs` is valid for `n` writes (it may be uninitialised).
pub(crate) unsafe fn proofs_out<'a>(proofs: *mut groth16_proof, n: usize) -> Result<&'a mut [MaybeUninit<groth16_proof>]> {
    check_proofs(proofs)?;
    // SAFETY: non-NULL, aligned, and valid for `n` writes by the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts_mut(proofs as *mut MaybeUninit<groth16_proof>, n) })
}
