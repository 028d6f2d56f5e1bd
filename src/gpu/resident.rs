//! The key's bases kept on the device between calls, where the card has room.
//!
//! Phase 2 reads every base of the key's h, l, a, b_g1 and b_g2 once per
//! partition: 47 GB at porep-32g, streamed up a chunk at a time (~1 s of
//! copies per partition on the H200). On a card with room for the whole key
//! beside two calls' pre-staged inputs and a computing call's peak (the
//! H200's 141 GiB against a 47 GB key), the first call of a key uploads the
//! bases once, in phase 1 under the memory lock, and every later call's MSMs
//! and batch additions read them in place (`msm::chunked`). One key per
//! device at a time (`SUPRASEAL_C2_KEY_RESIDENT=auto`, the default; `off`
//! streams them in every call).
//!
//! The copy is released when its key is dropped ([`forget_key`], run by the
//! key's `Drop` before its host vectors are freed), when a call of another
//! key would fit in its place, and when a call's admission finds too little
//! room for even a computing call's peak. A call that is reading the copy
//! holds it (an `Arc`) until its kernels are done, so its memory is freed
//! only after its last reader.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, CudaView};

use super::device::{cuda_err, Gpu};
use super::Limbs;
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

fn limbs_len<T: Limbs>(v: &[T]) -> usize {
    T::WORDS * v.len()
}

/// One key's bases on one device.
pub struct ResidentKey {
    /// The key's [`Srs::id`](crate::srs::Srs).
    pub srs_id: u64,
    /// (host address, device copy) of each vector of the key's [`KeyPlan`].
    vectors: Vec<(usize, CudaSlice<u64>)>,
    /// The stream the copies were made (and are freed) on.
    stream: Arc<CudaStream>,
    /// Device bytes held.
    pub bytes: usize,
}

impl ResidentKey {
    /// The device copy of `bases` (`T::WORDS` u64 words per point) when they
    /// lie within one of this key's host vectors, else `None`. Host vectors
    /// of live keys never overlap, and a dropped key's copy is gone before
    /// its vectors are freed, so a match is this key's bases.
    pub fn find<T: Limbs>(&self, bases: &[T]) -> Option<CudaView<'_, u64>> {
        if bases.is_empty() {
            return None;
        }
        let (start, words) = (bases.as_ptr() as usize, limbs_len(bases));
        self.vectors.iter().find_map(|(host, dev)| {
            let off = start.checked_sub(*host)?;
            (off % (8 * T::WORDS) == 0 && off / 8 + words <= dev.len()).then(|| dev.slice(off / 8..off / 8 + words))
        })
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
/// when there is room, given the call's admission figures (`avail` bytes
/// free, `need` bytes of pre-stage for this call, `reserve` for a computing
/// call's peak and the margin):
/// - this key's copy is there: kept, unless even `reserve` does not fit
///   (then released, and the call falls back with the room it frees);
/// - another key's copy is there: released when `reserve` does not fit or
///   this key would fit in its place (a later call uploads this one), else kept;
/// - none: uploaded on `stream` (synchronously: once per key) when
///   `avail` ≥ key + 2·`need` + `reserve`, so that two calls still pre-stage
///   beside it; a failed allocation or copy leaves the call streaming, with a
///   warning. Not counted by `SUPRASEAL_C2_FAULT_ALLOC` (the room is checked
///   here, as for the pre-stage pool's growth).
///
/// # Safety
/// `plan`'s host vectors must be alive for the whole call (the call holds
/// its key).
pub unsafe fn admit(gpu: &Gpu, stream: &Arc<CudaStream>, plan: &KeyPlan, avail: usize, need: usize, reserve: usize) -> Residency {
    let mut slot = gpu.resident.lock().unwrap_or_else(|p| p.into_inner());
    let key_bytes = plan.bytes();
    match slot.as_ref() {
        Some(k) if k.srs_id == plan.srs_id && reserve <= avail => return Residency::Kept,
        Some(k) if k.srs_id == plan.srs_id || reserve > avail || avail + k.bytes >= key_bytes + 2 * need + reserve => {
            let bytes = k.bytes;
            *slot = None;
            tracing::info!(gpu = gpu.ordinal, bytes, "resident key released for room");
            return Residency::Released { bytes };
        }
        Some(_) => return Residency::Streamed,
        None if key_bytes == 0 || avail < key_bytes + 2 * need + reserve => return Residency::Streamed,
        None => {}
    }
    let t = std::time::Instant::now();
    // SAFETY: passed on from the caller.
    match unsafe { upload(gpu, stream, plan) } {
        Ok(k) => {
            let ms = t.elapsed().as_secs_f64() * 1e3;
            tracing::info!(gpu = gpu.ordinal, bytes = k.bytes, ms, "key resident on the device");
            *slot = Some(Arc::new(k));
            Residency::Uploaded { bytes: key_bytes }
        }
        Err(e) => {
            tracing::warn!(gpu = gpu.ordinal, bytes = key_bytes, error = %e.message, "key not made resident: its bases stream per call");
            Residency::Streamed
        }
    }
}

/// # Safety
/// As [`admit`].
unsafe fn upload(gpu: &Gpu, stream: &Arc<CudaStream>, plan: &KeyPlan) -> Result<ResidentKey> {
    let mut vectors = Vec::with_capacity(plan.vectors.len());
    for &(host, words) in &plan.vectors {
        // SAFETY: every word is written by the copy below before any read.
        let mut dev = unsafe { gpu.resident_alloc(stream, words, "alloc resident key") }?;
        // SAFETY: `host` is a live vector of `words` u64 words (caller contract).
        let src = unsafe { std::slice::from_raw_parts(host as *const u64, words) };
        stream.memcpy_htod(src, &mut dev).map_err(cuda_err("upload resident key"))?;
        vectors.push((host, dev));
    }
    // The host vectors must outlive the copies; and a failure shows here.
    stream.synchronize().map_err(cuda_err("synchronize the resident key's upload"))?;
    Ok(ResidentKey { srs_id: plan.srs_id, vectors, stream: stream.clone(), bytes: plan.bytes() })
}

/// Releases key `srs_id`'s copies on every opened device (called by the
/// key's `Drop`). A call reading a copy keeps it until its kernels are done
/// (and its phase 2 ends with a pool trim); otherwise the memory goes back
/// to the device here when no call is in flight on it.
pub fn forget_key(srs_id: u64) {
    for gpu in super::device::opened() {
        let taken = {
            let mut slot = gpu.resident.lock().unwrap_or_else(|p| p.into_inner());
            if slot.as_ref().is_none_or(|k| k.srs_id != srs_id) {
                continue;
            }
            slot.take()
        };
        let Some(key) = taken.and_then(|k| Arc::try_unwrap(k).ok()) else {
            continue;
        };
        let stream = key.stream.clone();
        drop(key);
        let _ = stream.synchronize();
        if gpu.active.load(std::sync::atomic::Ordering::SeqCst) == 0 {
            let _ = gpu.trim_pool();
        }
        tracing::info!(gpu = gpu.ordinal, "resident key released with its key");
    }
}
