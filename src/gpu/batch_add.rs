//! Batch addition on the GPU (cuda/batch_add.cu): Σ of the bases whose bit
//! is set, for the L, A and B queries' density-selected parts, for all
//! circuits of a call in one pass over the bases.

use cudarc::driver::PushKernelArg;
use group::Group;

use super::device::cuda_err;
use super::exec::{grid, Exec};
use super::msm::{chunk_buffers_bytes, chunk_points, chunked_fold, reduce, DeviceGroup};
use crate::error::Result;

/// Points per batch-addition thread.
const BATCH_CHUNK: usize = 256;

/// The most circuits one pass sums: a call with more makes several passes,
/// so that a pass's bitmaps and partial sums stay bounded
/// ([`batch_add_bytes`]).
pub const PASS_CIRCUITS: usize = 16;

/// Σ bases[i] over set bits of `bitmap` (u64 words, bit i of word i/64;
/// at least bases.len() bits), a chunk of bases at a time.
pub fn batch_add<G: DeviceGroup>(gpu: &Exec, bases: &[G::Affine], bitmap: &[u64]) -> Result<G::Projective> {
    Ok(batch_add_many::<G>(gpu, bases, &[bitmap])?[0])
}

/// Σ bases[i] over set bits of each of `bitmaps` (one per circuit, each at
/// least bases.len() bits), in one pass over the bases per
/// [`PASS_CIRCUITS`] circuits: each chunk of bases is uploaded (or read
/// from the resident key) once for all of them. Returns one sum per bitmap.
pub fn batch_add_many<G: DeviceGroup>(gpu: &Exec, bases: &[G::Affine], bitmaps: &[&[u64]]) -> Result<Vec<G::Projective>> {
    let n = bases.len();
    if n == 0 {
        return Ok(vec![G::Projective::identity(); bitmaps.len()]);
    }
    let mut out = Vec::with_capacity(bitmaps.len());
    for pass in bitmaps.chunks(PASS_CIRCUITS) {
        out.extend(one_pass::<G>(gpu, bases, pass)?);
    }
    Ok(out)
}

/// Per-circuit partial-sum slots of one chunk of `len` bases.
fn threads_for(len: usize) -> usize {
    len.div_ceil(BATCH_CHUNK)
}

fn one_pass<G: DeviceGroup>(gpu: &Exec, bases: &[G::Affine], bitmaps: &[&[u64]]) -> Result<Vec<G::Projective>> {
    let n = bases.len();
    let circuits = bitmaps.len();
    let words = n.div_ceil(64);
    // The circuits' bitmaps side by side, `words` words each.
    let host: Vec<u64> = bitmaps.iter().flat_map(|b| b[..words].iter().copied()).collect();
    let d_bits = gpu.upload(&host, "upload batch-add bitmaps")?;
    drop(host);
    let max_threads = threads_for(n.min(chunk_points::<G>(gpu.settings.gpu_chunk)));
    let mut partials = gpu.zeros::<u64>(G::XYZZ_WORDS * max_threads * circuits, "alloc batch-add partials")?;
    let init = vec![G::Projective::identity(); circuits];
    chunked_fold::<G, _>(
        gpu,
        bases,
        "upload batch-add bases",
        chunk_points::<G>(gpu.settings.gpu_chunk),
        init,
        |d_bases, first, len| {
            let threads = threads_for(len);
            let first_word = first / 64;
            let mut b = gpu.stream.launch_builder(gpu.kernel(G::BATCH_ADD));
            b.arg(d_bases).arg(&d_bits).arg(&words).arg(&first_word).arg(&len).arg(&BATCH_CHUNK);
            b.arg(&circuits).arg(&threads).arg(&mut partials);
            // SAFETY: (const affine_t*, const uint64_t*, size_t words, size_t first_word,
            // size_t n, size_t chunk, size_t circuits, size_t threads, xyzz_t*): the kernel
            // returns early past circuits × threads ≤ circuits × max_threads slots; circuit
            // k reads words [k·words + first_word, k·words + (first + len)/64], inside
            // d_bits (first is a multiple of 64, first + len ≤ n).
            unsafe { b.launch(grid(threads * circuits)) }.map_err(cuda_err(G::BATCH_ADD.name()))?;
            reduce::<G>(gpu, &partials, threads, circuits)
        },
        |acc, part| acc.iter_mut().zip(part).for_each(|(a, p)| *a += p),
    )
}

/// Device bytes [`batch_add_many`] holds at once for `n` bases and up to
/// `circuits` circuits per pass: the bitmaps, the chunk buffers, the partial
/// sums and the reduced points.
pub fn batch_add_bytes<G: DeviceGroup>(n: usize, circuits: usize, chunk_bytes: usize) -> usize {
    let k = circuits.clamp(1, PASS_CIRCUITS);
    let threads = threads_for(n.min(chunk_points::<G>(chunk_bytes)));
    k * 8 * n.div_ceil(64) + chunk_buffers_bytes::<G>(n, chunk_bytes) + k * 8 * G::XYZZ_WORDS * threads + k * 8 * G::JAC_WORDS
}
