//! The ten exported functions. Each one catches panics ([`super::guard`]),
//! validates every pointer it is given, and reports errors as a
//! [`RustError`] whose message names the function and the argument.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::path::Path;
use std::sync::Arc;

use super::types::{fr_t, groth16_proof, CAssignment, RustError, SRS};
use super::{guard, guard_err, handles};
use crate::error::{Error, Result};
use super::intake::{self, srs_ref};
use crate::pipeline::Pending;
use crate::srs::Srs;

/// Loads (or fetches from the cache) a params file.
///
/// C: `RustError create_SRS(SRS* ret, const char* params_path, bool cache);`
///
/// `params_path` is a NUL-terminated path (UTF-8 not required). On success
/// `*ret` holds one reference, released with `drop_SRS`. `cache = true` shares
/// one loaded key per path through an LRU cache of 4 entries; `cache = false`
/// always loads. Errors: `EINVAL` (NULL argument, malformed file: the message
/// names the file, section, point and byte offset; a bad
/// `SUPRASEAL_C2_LOAD_THREADS` or `SUPRASEAL_C2_LOAD_CHECK`), `ENODEV`
/// (`SUPRASEAL_C2_LOAD_CHECK=gpu` without a usable GPU), `ENOENT` (missing file), `EIO` (the file
/// shrank or changed while it was being loaded), `ENOMEM` (the points do not
/// fit in host memory), other errno values for unreadable files. `*ret` is
/// left untouched on error.
///
/// # Safety
/// `ret` must be writable; `params_path` a valid C string.
#[no_mangle]
pub unsafe extern "C" fn create_SRS(ret: *mut SRS, params_path: *const c_char, cache: bool) -> RustError {
    guard_err("create_SRS", || {
        // Hosts load the key before their first proof: the load's events are
        // logged under the same switches as the calls'.
        crate::log::init_from_env();
        intake::check_ptr(ret.cast_const(), "ret")?;
        if params_path.is_null() {
            return Err(Error::invalid("params_path is NULL"));
        }
        // SAFETY: non-NULL C string by contract.
        let bytes = unsafe { CStr::from_ptr(params_path) }.to_bytes();
        let path = Path::new(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(bytes));
        let srs = crate::params::open(path, cache)?;
        // SAFETY: `ret` is non-NULL and writable by contract.
        unsafe { ret.write(SRS { ptr: Arc::into_raw(srs) as *const c_void }) };
        Ok(())
    })
}

/// Removes the cache entry for this handle's path (no-op when not cached or
/// NULL). Existing handles stay valid.
///
/// C: `void evict_SRS(const SRS* srs);`
///
/// # Safety
/// `srs` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn evict_SRS(srs: *const SRS) {
    guard("evict_SRS", |_| (), || {
        // SAFETY: forwarded contract.
        if let Ok(s) = unsafe { srs_ref(srs) } {
            crate::params::evict(s);
        }
    })
}

/// Releases one reference and empties the handle (`ptr = NULL`), so a second
/// `drop_SRS` on the same handle is a no-op. NULL is ignored.
///
/// C: `void drop_SRS(SRS* srs);`
///
/// # Safety
/// `srs` is NULL or a handle from `create_SRS`/`clone_SRS`.
#[no_mangle]
pub unsafe extern "C" fn drop_SRS(srs: *mut SRS) {
    guard("drop_SRS", |_| (), || {
        if srs.is_null() {
            return;
        }
        if let Err(e) = intake::check_ptr(srs.cast_const(), "srs") {
            tracing::warn!("drop_SRS: {} (ignored)", e.message);
            return;
        }
        // SAFETY: non-NULL by check, valid by contract.
        let h = unsafe { &mut *srs };
        if !h.ptr.is_null() {
            // SAFETY: `ptr` came from `Arc::into_raw` and this handle owns one count.
            drop(unsafe { Arc::from_raw(h.ptr as *const Srs) });
            h.ptr = std::ptr::null();
        }
    })
}

/// Returns a new handle holding one more reference (an empty handle for NULL
/// or an empty input).
///
/// C: `SRS clone_SRS(const SRS* srs);`
///
/// # Safety
/// `srs` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn clone_SRS(srs: *const SRS) -> SRS {
    guard("clone_SRS", |_| SRS::default(), || {
        if srs.is_null() {
            return SRS::default();
        }
        if let Err(e) = intake::check_ptr(srs, "srs") {
            tracing::warn!("clone_SRS: {} (an empty handle returned)", e.message);
            return SRS::default();
        }
        // SAFETY: non-NULL, valid by contract.
        let ptr = unsafe { (*srs).ptr };
        if !ptr.is_null() {
            // SAFETY: `ptr` came from `Arc::into_raw` and is alive.
            unsafe { Arc::increment_strong_count(ptr as *const Srs) };
        }
        SRS { ptr }
    })
}

/// Creates a lock handle (a memory lock and a compute lock for one GPU,
/// docs/ARCHITECTURE.md §5). Free it with `destroy_gpu_mutex` once no call uses it.
///
/// C: `void* create_gpu_mutex(void);`
#[no_mangle]
pub extern "C" fn create_gpu_mutex() -> *mut c_void {
    guard("create_gpu_mutex", |_| std::ptr::null_mut(), || match handles::new_lock() {
        Ok(h) => h,
        Err(e) => {
            crate::log::init_from_env();
            tracing::error!("create_gpu_mutex: {}", e.message);
            std::ptr::null_mut()
        }
    })
}

/// Ends a lock handle. NULL is ignored. A value that is not a live lock
/// handle (destroyed already, never returned by `create_gpu_mutex`, a pending
/// proof) is ignored with a warning naming it: handles are ids, never
/// dereferenced ([`handles`]); the warning goes to the `tracing` subscriber
/// (for C callers: stderr with `SUPRASEAL_C2_LOG` set). Calls running with the handle keep its locks
/// until they return; later calls with it get `EINVAL`.
///
/// C: `void destroy_gpu_mutex(void* handle);`
///
/// # Safety
/// None: any value is accepted (the function stays `unsafe` for source
/// compatibility with the reference's declaration).
#[no_mangle]
pub unsafe extern "C" fn destroy_gpu_mutex(handle: *mut c_void) {
    destroy_ignoring_misuse("destroy_gpu_mutex", handle, handles::destroy_lock)
}

/// The two destroy functions: NULL is a no-op; a value that is not a live
/// handle of the kind is ignored with a warning (`SUPRASEAL_C2_LOG`, or the
/// caller's own `tracing` subscriber).
fn destroy_ignoring_misuse<T>(func: &str, handle: *mut c_void, destroy: fn(*mut c_void) -> Result<T>) {
    guard(func, |_| (), || {
        if handle.is_null() {
            return;
        }
        if let Err(e) = destroy(handle) {
            crate::log::init_from_env();
            tracing::warn!("{func}: ignored: {}", e.message);
        }
    })
}

/// Proves `num_circuits` circuits and writes one proof per circuit.
///
/// C: `RustError generate_groth16_proofs_c(const Assignment provers[], size_t
/// num_circuits, const fr_t r_s[], const fr_t s_s[], groth16_proof proofs[],
/// const SRS* srs, void* gpu_mtx, int gpu_index);`
///
/// The caller's buffers are only read, and only during the call. `r_s`,
/// `s_s` and `proofs` must hold `num_circuits` elements: their length cannot
/// be checked. `gpu_mtx` NULL selects the default lock of the device;
/// `gpu_index` ≥ 0 pins the device; −1 with a NULL `gpu_mtx` spreads the
/// circuits in contiguous groups over the first min(GPUs, `num_circuits`)
/// devices, each with its default lock (with a handle, device 0). On success
/// every `proofs[i]` is written; on error none is. Errors: `EINVAL` (any
/// validation failure: the message names the argument, expected vs got; or a
/// malformed `SUPRASEAL_C2_*` switch), `ENODEV` (GPU backend demanded, none
/// usable), a CUDA error number such as 2 = out of memory (the message names
/// the CUDA call; the call's device memory is freed and both locks are
/// released, so the next call is served), `EBADMSG` (`SUPRASEAL_C2_VERIFY`
/// is on and the proof of the circuit the message names does not verify),
/// `EFAULT` (internal panic).
///
/// # Safety
/// All pointers valid for the sizes the `Assignment`s declare (docs/ARCHITECTURE.md §2).
#[no_mangle]
pub unsafe extern "C" fn generate_groth16_proofs_c(
    provers: *const CAssignment,
    num_circuits: usize,
    r_s: *const fr_t,
    s_s: *const fr_t,
    proofs: *mut groth16_proof,
    srs: *const SRS,
    gpu_mtx: *mut c_void,
    gpu_index: c_int,
) -> RustError {
    guard_err("generate_groth16_proofs_c", || {
        intake::check_proofs(proofs)?;
        // SAFETY: forwarded contract.
        let pending = unsafe { intake::start(provers, num_circuits, r_s, s_s, srs, gpu_mtx, gpu_index) }?;
        // SAFETY: `proofs` holds num_circuits elements by contract.
        let out = unsafe { intake::proofs_out(proofs, pending.len()) }?;
        pending.finish(out)
    })
}

/// Split form, part 1: validates, runs the device (or CPU) work and returns a
/// pending handle in `*pending_out`. The handle owns every value it needs
/// later; the caller's buffers are not read after this returns.
///
/// C: `RustError generate_groth16_proofs_start_c(const Assignment provers[],
/// size_t num_circuits, const fr_t r_s[], const fr_t s_s[], const SRS* srs,
/// void* gpu_mtx, int gpu_index, void** pending_out);`
///
/// Errors as `generate_groth16_proofs_c`, plus `EINVAL` for a NULL
/// `pending_out`; on error `*pending_out` is set to NULL (when writable).
///
/// # Safety
/// As `generate_groth16_proofs_c`; `pending_out` writable.
#[no_mangle]
pub unsafe extern "C" fn generate_groth16_proofs_start_c(
    provers: *const CAssignment,
    num_circuits: usize,
    r_s: *const fr_t,
    s_s: *const fr_t,
    srs: *const SRS,
    gpu_mtx: *mut c_void,
    gpu_index: c_int,
    pending_out: *mut *mut c_void,
) -> RustError {
    guard_err("generate_groth16_proofs_start_c", || {
        intake::check_ptr(pending_out.cast_const(), "pending_out")?;
        // SAFETY: non-NULL and writable by contract.
        unsafe { pending_out.write(std::ptr::null_mut()) };
        // SAFETY: forwarded contract.
        let pending = unsafe { intake::start(provers, num_circuits, r_s, s_s, srs, gpu_mtx, gpu_index) }?;
        let handle = handles::register_pending(pending)?;
        // SAFETY: as above.
        unsafe { pending_out.write(handle) };
        Ok(())
    })
}

/// Split form, part 2: joins the CPU work, runs the epilogue, writes
/// `num_circuits` proofs and frees the pending handle (as the reference's
/// finalize does). A handle that is not live (NULL, already finalized or
/// destroyed, never returned by a start call) gives `EINVAL` and touches
/// nothing: handle values are never reused ([`handles`]), so a stale handle
/// never reaches another call's proof. With `SUPRASEAL_C2_VERIFY` on when
/// the call started, a proof that does not verify gives `EBADMSG` naming
/// its circuit: no proof is written, and the handle is freed.
///
/// C: `RustError finalize_groth16_proof_c(void* pending, groth16_proof proofs[]);`
///
/// # Safety
/// `proofs` holds as many elements as the start call had circuits.
#[no_mangle]
pub unsafe extern "C" fn finalize_groth16_proof_c(pending: *mut c_void, proofs: *mut groth16_proof) -> RustError {
    guard_err("finalize_groth16_proof_c", || {
        // Before the handle is taken: a bad array leaves it pending.
        intake::check_proofs(proofs)?;
        let p: Pending = handles::take_pending(pending)?;
        // SAFETY: `proofs` holds as many elements as the start call had circuits, by contract.
        let out = unsafe { intake::proofs_out(proofs, p.len()) }?;
        p.finish(out)
    })
}

/// Frees a pending handle without finalizing. NULL is ignored; a value that
/// is not a live pending proof (finalized or destroyed already, never
/// returned by a start call) is ignored with a warning naming it.
///
/// C: `void destroy_pending_proof(void* pending);`
#[no_mangle]
pub extern "C" fn destroy_pending_proof(pending: *mut c_void) {
    destroy_ignoring_misuse("destroy_pending_proof", pending, handles::take_pending)
}
