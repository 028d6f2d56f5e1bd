//! The device half of [`super`]: the copies, their upload and release.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use cudarc::driver::CudaStream;

pub use super::copy::ResidentKey;
use super::copy::limbs_len;
use super::{decide, Decision, Room};
use crate::gpu::device::{cuda_err, Gpu};
use crate::error::Result;

/// The host vectors of one key, as phase 0 found them: what phase 1 uploads.
#[derive(Clone, Debug, Default)]
pub struct KeyPlan {
    /// The key's [`Srs::id`](crate::srs::Srs).
    pub srs_id: u64,
    /// (host address, u64 words) of h, l, a, b_g1 and b_g2, the empty ones left out.
    vectors: Vec<(usize, usize)>,
}

impl KeyPlan {
    pub fn of(srs: &crate::srs::Srs) -> Self {
        let g1 = [&srs.h, &srs.l, &srs.a, &srs.b_g1].map(|v| (v.as_ptr() as usize, limbs_len(v)));
        let g2 = (srs.b_g2.as_ptr() as usize, limbs_len(&srs.b_g2));
        KeyPlan { srs_id: srs.id, vectors: g1.into_iter().chain([g2]).filter(|&(_, w)| w > 0).collect() }
    }

    /// Device bytes of the key's copy.
    pub fn bytes(&self) -> usize {
        8 * self.vectors.iter().map(|&(_, w)| w).sum::<usize>()
    }
}

/// What phase 1 did with the device's resident key.
#[derive(Debug, PartialEq, Eq)]
pub enum Residency {
    /// Nothing resident, or another key's copy left in place.
    Streamed,
    /// This key's copy was already there.
    Kept,
    /// This call uploaded its key's `bytes`.
    Uploaded { bytes: usize },
    /// A copy of `bytes` was released to make room.
    Released { bytes: usize },
}

/// Phase 1, under the memory lock: keeps the key of `plan` resident on `gpu`
/// when there is room ([`Room`]), with `enabled` the call's
/// `SUPRASEAL_C2_KEY_RESIDENT`:
/// - this key's copy is there: kept, unless even `reserve` does not fit the
///   compute room (then released: the call falls back with the room it frees);
/// - another key's copy is there: released when `reserve` does not fit, or
///   when it has gone [`super::IDLE_CALLS`] calls unused and this key would fit in
///   its place (a later call uploads this one); else kept;
/// - none (and `enabled`): uploaded on `stream` when the compute room holds
///   the key, `reserve` and one one-circuit pre-stage (where a circuit can
///   pre-stage at all; a call of many circuits, such as a sector's ten
///   partitions, is not counted whole),
///   so that the next call or circuit still stages beside it. The upload synchronises
///   `stream` (once per key); a failed allocation or copy leaves the call
///   streaming, with a warning, and the key is not tried again on this
///   device. Not counted by `SUPRASEAL_C2_FAULT_ALLOC` (the room is checked
///   here, as for the pre-stage pool's growth).
///
/// # Safety
/// `plan`'s host vectors must be alive for the whole call (the call holds
/// its key).
pub unsafe fn admit(gpu: &Gpu, stream: &Arc<CudaStream>, plan: &KeyPlan, room: Room, enabled: bool) -> Residency {
    let _one_at_a_time = gpu.memory.resident_admission.lock().unwrap_or_else(|p| p.into_inner());
    let key_bytes = plan.bytes();
    let failed_before = gpu.memory.resident_failed.load(Ordering::Relaxed) == plan.srs_id;
    let current = gpu.memory.resident_key();
    let seen = current.as_ref().map(|k| {
        let mine = k.srs_id == plan.srs_id;
        let idle = if mine { 0 } else { k.idle_calls.fetch_add(1, Ordering::Relaxed) + 1 };
        (mine, k.bytes, idle)
    });
    match decide(seen, room, key_bytes, enabled, failed_before) {
        Decision::Keep => {
            if let Some(k) = &current {
                k.idle_calls.store(0, Ordering::Relaxed);
            }
            return Residency::Kept;
        }
        Decision::Stream => return Residency::Streamed,
        Decision::Release => {
            let bytes = current.map_or(0, |k| k.bytes);
            release(gpu);
            tracing::info!(gpu = gpu.ordinal, bytes, "resident key released for room");
            return Residency::Released { bytes };
        }
        Decision::Upload => {}
    }
    let t = std::time::Instant::now();
    // SAFETY: passed on from the caller.
    match unsafe { upload(gpu, stream, plan) } {
        Ok(k) => {
            tracing::info!(gpu = gpu.ordinal, bytes = k.bytes, ms = t.elapsed().as_secs_f64() * 1e3, "key resident on the device");
            *gpu.memory.resident.lock().unwrap_or_else(|p| p.into_inner()) = Some(Arc::new(k));
            Residency::Uploaded { bytes: key_bytes }
        }
        Err(e) => {
            gpu.memory.resident_failed.store(plan.srs_id, Ordering::Relaxed);
            tracing::warn!(gpu = gpu.ordinal, bytes = key_bytes, error = %e.message, "key not made resident: its bases stream per call");
            Residency::Streamed
        }
    }
}

/// Takes the device's copy out of its slot and drops this reference,
/// returning the stream its free was issued on when no call held it any
/// more (else the last reader's drop frees it). A deferred error of the
/// context is logged first: cudarc skips a buffer's event waits (its
/// readers) while one is pending, so the free would not be ordered after them.
fn release(gpu: &Gpu) -> Option<Arc<CudaStream>> {
    let taken = gpu.memory.resident.lock().unwrap_or_else(|p| p.into_inner()).take()?;
    if let Err(e) = gpu.ctx.check_err() {
        tracing::warn!(gpu = gpu.ordinal, error = ?e, "a deferred CUDA error was recorded on this device");
    }
    let _ = gpu.ctx.bind_to_thread();
    let key = Arc::try_unwrap(taken).ok()?;
    let stream = key.stream.clone();
    drop(key);
    Some(stream)
}

/// # Safety
/// As [`admit`].
unsafe fn upload(gpu: &Gpu, stream: &Arc<CudaStream>, plan: &KeyPlan) -> Result<ResidentKey> {
    let mut vectors = Vec::with_capacity(plan.vectors.len());
    for &(host, words) in &plan.vectors {
        // SAFETY: every word is written by the copy below before any read.
        let mut dev = unsafe { gpu.memory.resident_alloc(stream, words, "alloc resident key") }?;
        // SAFETY: `host` is a live vector of `words` u64 words (caller contract).
        let src = unsafe { std::slice::from_raw_parts(host as *const u64, words) };
        stream.memcpy_htod(src, &mut dev).map_err(cuda_err("upload resident key"))?;
        vectors.push((host, dev));
    }
    // The host vectors must outlive the copies; and a failure shows here.
    stream.synchronize().map_err(cuda_err("synchronize the resident key's upload"))?;
    Ok(ResidentKey { srs_id: plan.srs_id, vectors, stream: stream.clone(), bytes: plan.bytes(), idle_calls: AtomicUsize::new(0) })
}

/// Releases its key's device copies when dropped: kept in the key's
/// `device_copies` ([`watch`]), so it goes with the key.
struct ForgetOnDrop(u64);

impl Drop for ForgetOnDrop {
    fn drop(&mut self) {
        forget_key(self.0);
    }
}

/// Phase 0 of every GPU call: ties the release of `srs`'s device copies to
/// the key's drop (once per key).
pub fn watch(srs: &crate::srs::Srs) {
    srs.device_copies.get_or_init(|| Box::new(ForgetOnDrop(srs.id)));
}

/// Releases key `srs_id`'s copies on every opened device (when the key is
/// dropped, through [`watch`]'s guard). Where no call reads the copy, its memory goes back to the
/// device here (its stream synchronised, the pools trimmed when no call is
/// in flight); otherwise at the end of the reading call's phase 2.
pub fn forget_key(srs_id: u64) {
    for gpu in crate::gpu::device::opened() {
        let _one_at_a_time = gpu.memory.resident_admission.lock().unwrap_or_else(|p| p.into_inner());
        if gpu.memory.resident_key().is_none_or(|k| k.srs_id != srs_id) {
            continue;
        }
        if let Some(stream) = release(&gpu) {
            let _ = stream.synchronize();
            if gpu.active.load(Ordering::SeqCst) == 0 {
                let _ = gpu.memory.trim_pool();
            }
        }
        tracing::info!(gpu = gpu.ordinal, "resident key released with its key");
    }
}
