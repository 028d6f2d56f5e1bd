//! Batch addition on the GPU (cuda/batch_add.cu): Σ of the bases whose bit
//! is set, for the L, A and B queries' density-selected parts.

use cudarc::driver::PushKernelArg;
use group::Group;

use super::device::cuda_err;
use super::exec::{grid, Exec};
use super::msm::{chunk_buffers_bytes, chunk_points, chunked, reduce, DeviceGroup};
use crate::error::Result;

/// Points per batch-addition thread.
const BATCH_CHUNK: usize = 256;

/// Σ bases[i] over set bits of `bitmap` (u64 words, bit i of word i/64;
/// at least bases.len() bits), a chunk of bases at a time.
pub fn batch_add<G: DeviceGroup>(gpu: &Exec, bases: &[G::Affine], bitmap: &[u64]) -> Result<G::Projective> {
    let n = bases.len();
    if n == 0 {
        return Ok(G::Projective::identity());
    }
    let d_bits = gpu.upload(&bitmap[..n.div_ceil(64)], "upload bitmap")?;
    // One partial per launched thread; threads past the end sum nothing.
    let max_threads = n.min(chunk_points::<G>(gpu.settings.gpu_chunk)).div_ceil(BATCH_CHUNK).div_ceil(256) * 256;
    let mut partials = gpu.zeros::<u64>(G::XYZZ_WORDS * max_threads, "alloc batch-add partials")?;
    chunked::<G>(gpu, bases, "upload batch-add bases", |d_bases, first, len| {
        let threads = len.div_ceil(BATCH_CHUNK).div_ceil(256) * 256;
        let bits = d_bits.slice(first / 64..(first + len).div_ceil(64));
        let mut b = gpu.stream.launch_builder(gpu.kernel(G::BATCH_ADD));
        b.arg(d_bases).arg(&bits).arg(&len).arg(&BATCH_CHUNK).arg(&mut partials);
        // SAFETY: (const affine_t*, const uint64_t*, size_t, size_t, xyzz_t*); the grid
        // has exactly `threads` ≤ max_threads threads and partials one slot each; the
        // bitmap view starts at the chunk's first point (a multiple of 64) and covers it.
        unsafe { b.launch(grid(threads)) }.map_err(cuda_err(G::BATCH_ADD.name()))?;
        Ok(reduce::<G>(gpu, &partials, threads, 1)?[0])
    })
}

/// Device bytes [`batch_add`] holds at once for `n` bases: the bitmap, the
/// chunk buffers, the partial sums and the reduced point.
pub fn batch_add_bytes<G: DeviceGroup>(n: usize, chunk_bytes: usize) -> usize {
    let m = n.min(chunk_points::<G>(chunk_bytes));
    let threads = m.div_ceil(BATCH_CHUNK).div_ceil(256) * 256;
    8 * n.div_ceil(64) + chunk_buffers_bytes::<G>(n, chunk_bytes) + 8 * G::XYZZ_WORDS * threads + 8 * G::JAC_WORDS
}

