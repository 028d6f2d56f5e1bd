//! One key's bases on one device ([`ResidentKey`]): the copies and how a
//! call finds its bases in them. The device holds the current one
//! (`DeviceMemory::resident`); [`super::device_side`] uploads and releases them.

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, CudaView};

use crate::gpu::words::Limbs;

/// One key's bases on one device.
pub struct ResidentKey {
    /// The key's [`Srs::id`](crate::srs::Srs).
    pub srs_id: u64,
    /// (host address, device copy) of each vector of the key's [`KeyPlan`].
    pub(super) vectors: Vec<(usize, CudaSlice<u64>)>,
    /// The stream the copies were made (and are freed) on.
    pub(super) stream: Arc<CudaStream>,
    /// Device bytes held.
    pub bytes: usize,
    /// Calls of other keys since this key's last call ([`super::IDLE_CALLS`]).
    pub(super) idle_calls: AtomicUsize,
}

impl ResidentKey {
    /// A key of the given device copies (host address, copy), for tests and
    /// tools that make bases resident without a params file.
    #[cfg(any(test, feature = "tools"))]
    pub fn of_copies(srs_id: u64, stream: Arc<CudaStream>, vectors: Vec<(usize, CudaSlice<u64>)>) -> ResidentKey {
        let bytes = vectors.iter().map(|(_, d)| 8 * d.len()).sum();
        ResidentKey { srs_id, vectors, stream, bytes, idle_calls: AtomicUsize::new(0) }
    }

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


pub(super) fn limbs_len<T: Limbs>(v: &[T]) -> usize {
    T::WORDS * v.len()
}
