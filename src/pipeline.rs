//! One proving call from the ABI's point of view: validate (phase 0), take
//! the locks and compute (phases 1–2), then the epilogue (phase 3).
//!
//! [`start`] does everything up to the epilogue and returns a [`Pending`] that
//! owns what the epilogue needs (the key, r, s and the intermediate sums), so
//! the split form never reads the caller's buffers after start returns.

use std::collections::HashSet;
use std::ffi::{c_int, c_void};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use blstrs::Scalar;

use crate::abi::exports::srs_ref;
use crate::abi::types::{fr_t, groth16_proof, CAssignment, SRS};
use crate::backend;
use crate::error::{Error, Result};
use crate::groth16::{self, epilogue, Intermediates};
use crate::locks::{self, LockHandle};
use crate::srs::Srs;

/// A proof whose device/CPU work is done and whose epilogue is pending.
pub struct Pending {
    srs: Arc<Srs>,
    r_s: Vec<Scalar>,
    s_s: Vec<Scalar>,
    sums: Vec<Intermediates>,
}

impl Pending {
    /// Number of circuits (and proofs to write).
    pub fn len(&self) -> usize {
        self.sums.len()
    }

    /// Whether the pending proof holds no circuit (never true for a started call).
    pub fn is_empty(&self) -> bool {
        self.sums.is_empty()
    }

    /// Runs the epilogue and writes `self.len()` proofs.
    ///
    /// # Safety
    /// `proofs` must be valid for `self.len()` writes.
    pub unsafe fn finish(self, proofs: *mut groth16_proof) -> Result<()> {
        let t = Instant::now();
        for (i, m) in self.sums.iter().enumerate() {
            let p = epilogue::proof(&self.srs, m, self.r_s[i], self.s_s[i]);
            // SAFETY: i < len, within the caller's array by contract.
            unsafe { proofs.add(i).write(p) };
        }
        tracing::info!(circuits = self.len(), epilogue_ms = t.elapsed().as_secs_f64() * 1e3, "epilogue done");
        Ok(())
    }
}

/// Copies `n` scalars of r or s.
unsafe fn copy_scalars(ptr: *const fr_t, n: usize, name: &str) -> Result<Vec<Scalar>> {
    if ptr.is_null() {
        return Err(Error::invalid(format!("{name} is NULL but num_circuits is {n}")));
    }
    if (ptr as usize) % std::mem::align_of::<fr_t>() != 0 {
        return Err(Error::invalid(format!("{name} = {ptr:p} is not aligned to 8 bytes")));
    }
    // SAFETY: caller contract: `n` readable elements; Scalar shares fr_t's layout.
    Ok(unsafe { std::slice::from_raw_parts(ptr as *const Scalar, n) }.to_vec())
}

/// Validates the call, takes the locks and computes every circuit's sums.
///
/// # Safety
/// The ABI contract of `generate_groth16_proofs_c` (DESIGN §2).
pub unsafe fn start(
    provers: *const CAssignment,
    num_circuits: usize,
    r_s: *const fr_t,
    s_s: *const fr_t,
    srs: *const SRS,
    gpu_mtx: *mut c_void,
    gpu_index: c_int,
) -> Result<Pending> {
    let t0 = Instant::now();
    // SAFETY: forwarded contract.
    let key = unsafe { srs_ref(srs) }?;
    // Hold our own reference for the pending handle's lifetime.
    // SAFETY: `srs` is a live handle (checked above); its ptr came from Arc::into_raw.
    let key_arc = unsafe {
        let ptr = (*srs).ptr as *const Srs;
        Arc::increment_strong_count(ptr);
        Arc::from_raw(ptr)
    };
    // SAFETY: forwarded contract.
    let batch = unsafe { crate::assignment::validate(provers, num_circuits, key) }?;
    let r = unsafe { copy_scalars(r_s, num_circuits, "r_s") }?;
    let s = unsafe { copy_scalars(s_s, num_circuits, "s_s") }?;
    crate::assignment::check_canonical(&r, || "r_s".into())?;
    crate::assignment::check_canonical(&s, || "s_s".into())?;
    if gpu_index < -1 {
        return Err(Error::invalid(format!("gpu_index is {gpu_index} but must be -1 (any) or a device index ≥ 0")));
    }
    let handle: &LockHandle = if gpu_mtx.is_null() {
        locks::default_handle(gpu_index.max(0) as usize)
    } else {
        // SAFETY: a handle from create_gpu_mutex, alive for the call, by contract.
        let h = unsafe { &*(gpu_mtx as *const LockHandle) };
        if !h.is_valid() {
            return Err(Error::invalid(format!("gpu_mtx = {gpu_mtx:p} is not a live handle from create_gpu_mutex")));
        }
        h
    };
    let backend = backend::select(gpu_index.max(0) as usize)?;
    let validated = t0.elapsed();

    let t_wait = Instant::now();
    let guard = handle.locks.compute();
    let wait = t_wait.elapsed();
    let t_hold = Instant::now();
    let result = groth16::compute(backend.as_ref(), key, &batch);
    drop(guard);
    let hold = t_hold.elapsed();
    let (sums, times) = result?;
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    tracing::info!(
        backend = backend.name(),
        circuits = num_circuits,
        validate_ms = ms(validated),
        compute_lock_wait_ms = ms(wait),
        compute_lock_hold_ms = ms(hold),
        prep_ms = ms(times.prep),
        ntt_ms = ms(times.ntt),
        h_msm_ms = ms(times.h_msm),
        g1_msms_ms = ms(times.g1_msms),
        g2_msm_ms = ms(times.g2_msm),
        "proving call"
    );
    Ok(Pending { srs: key_arc, r_s: r, s_s: s, sums })
}

/// Addresses of live pending handles, so that a finalize or destroy of a
/// stale pointer is refused instead of freeing memory twice.
static LIVE: Mutex<Option<HashSet<usize>>> = Mutex::new(None);

/// Boxes `p` and records it as live; returns the opaque handle.
pub fn register(p: Pending) -> *mut c_void {
    let ptr = Box::into_raw(Box::new(p));
    LIVE.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert_with(HashSet::new).insert(ptr as usize);
    ptr as *mut c_void
}

/// Takes back ownership of a live handle; `None` for NULL or unknown handles.
pub fn unregister(handle: *mut c_void) -> Option<Box<Pending>> {
    if handle.is_null() {
        return None;
    }
    let removed = LIVE.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert_with(HashSet::new).remove(&(handle as usize));
    // SAFETY: the address was registered by `register` (a Box<Pending>) and is
    // removed from the set exactly once, so ownership is taken exactly once.
    removed.then(|| unsafe { Box::from_raw(handle as *mut Pending) })
}
