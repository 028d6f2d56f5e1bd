//! The bucket sums of the params loader's batched subgroup check
//! ([`crate::srs::subgroup`]) on the device: per group of rounds, every
//! point's bucket comes from the same ChaCha8 words as on the host
//! (`subgroup_bucket_keys` in cuda/subgroup.cu), the points are sorted by
//! bucket and summed by the MSM's accumulation kernels ([`msm::accumulate_sorted`]).
//! The vector goes through the device in chunks of bounded size, each
//! chunk's bucket table added into the vector's; the host gets one Jacobian
//! point per (group, bucket) and forms the rounds' combinations itself.

use cudarc::driver::CudaSlice;

use super::device::cuda_err;
use super::exec::{grid, Exec};
use super::kernels::launch;
use super::msm::{self, DeviceGroup, Levels, SortBuffers};
use super::words::{limbs, Limbs};
use super::workspace::OnDevice;
use crate::error::{Error, Result};

/// Sorted points per accumulation thread, and threads per block (the MSM's defaults).
const POINTS_PER_THREAD: u32 = 32;
const BLOCK: u32 = 128;
/// The most points per chunk by default.
pub const MAX_CHUNK: usize = 1 << 24;
/// The fewest points per chunk worth a device pass.
const MIN_CHUNK: usize = 1 << 16;

/// Device bytes per point of a chunk: the base, its bucket, the sort's
/// index, and its share of the per-thread entries (the bucket a thread
/// starts at, a head and a tail per accumulation thread of K points, and
/// the merge levels' ping-pong buffers, about a third as many again:
/// counted as half).
fn bytes_per_point<G: DeviceGroup>() -> usize {
    let partials = 2 * (8 * G::XYZZ_WORDS + 4);
    8 * G::Affine::WORDS + 2 * 4 + (partials + partials / 2 + 4).div_ceil(POINTS_PER_THREAD as usize)
}

/// The bucket sums Σ{points[i] : bucket(i, g) = b} for every group g <
/// `groups` and bucket b < `buckets` (b = 0 left at infinity: it enters no
/// round), as `groups · buckets` Jacobian points, group-major. Point i's
/// bucket in group g is word i of ChaCha8(`key`, stream `first_stream + g`)
/// mapped to [0, buckets) by multiply-shift, as on the host. `buckets` is at
/// most 2^16.
///
/// Chunks are sized to a quarter of the device memory that is available (as
/// admission sees it, `SUPRASEAL_C2_VRAM_LIMIT_MB` included, less
/// `SUPRASEAL_C2_VRAM_MARGIN_MB`), at most
/// `max_chunk` points. Errors: `CUDA_ERROR_OUT_OF_MEMORY` when not even 2^16 points fit,
/// CUDA errors naming the call; the caller then checks on the CPU.
pub fn bucket_sums<G: DeviceGroup>(
    gpu: &Exec,
    points: &[G::Affine],
    key: &[u32; 8],
    first_stream: u64,
    groups: usize,
    buckets: u32,
    max_chunk: usize,
) -> Result<Vec<G::Projective>> {
    assert!((2..=1 << 16).contains(&buckets), "subgroup: {buckets} buckets");
    let n = points.len();
    let (free, total) = gpu.mem_info()?;
    let free = gpu.settings.effective_free(free + gpu.gpu.memory.pool_cached(), total).saturating_sub(gpu.settings.vram_margin);
    let table = groups * buckets as usize;
    let table_bytes = 2 * table * 8 * G::XYZZ_WORDS;
    let fits = (free / 4).saturating_sub(table_bytes) / bytes_per_point::<G>();
    if fits < MIN_CHUNK.min(n.max(1)) {
        return Err(Error::cuda(
            super::device::CUDA_ERROR_OUT_OF_MEMORY,
            format!("subgroup check on the device: {free} B available, too little for a chunk of {MIN_CHUNK} points"),
        ));
    }
    let chunk = fits.min(max_chunk.max(1)).min(n.max(1));
    // The shared accumulation reads bit 31 of a sorted index as a digit's sign.
    assert!(chunk < 1 << 31, "subgroup check: a chunk of {chunk} points");
    let words = G::Affine::WORDS;
    let mut d_bases = gpu.zeros::<u64>(words * chunk, "alloc subgroup-check bases")?;
    let d_key = gpu.upload(key.as_slice(), "upload subgroup-check key")?;
    let mut bucket_of = gpu.zeros::<u32>(chunk, "alloc subgroup-check buckets")?;
    let mut sort = SortBuffers::new(&mut OnDevice(gpu), chunk, buckets, POINTS_PER_THREAD, 1)?;
    let threads = chunk.div_ceil(POINTS_PER_THREAD as usize);
    let mut levels = Levels::new::<G, _>(&mut OnDevice(gpu), threads, BLOCK)?;
    let row = G::XYZZ_WORDS * buckets as usize;
    let mut part: CudaSlice<u64> = gpu.zeros::<u64>(row * groups, "alloc chunk bucket table")?;
    let mut sums: CudaSlice<u64> = gpu.zeros::<u64>(row * groups, "alloc bucket table")?;
    let mut unprofiled = |_: fn(&mut super::MsmProfile) -> &mut f64| Ok(());

    for first in (0..n).step_by(chunk) {
        let m = chunk.min(n - first);
        gpu.stream
            .memcpy_htod(limbs(&points[first..first + m]), &mut d_bases.slice_mut(..words * m))
            .map_err(cuda_err("upload subgroup-check points"))?;
        // Buckets no point of this chunk falls in keep what the table holds.
        gpu.stream.memset_zeros(&mut part).map_err(cuda_err("memset chunk bucket table"))?;
        for g in 0..groups {
            let stream = first_stream + g as u64;
            let blocks = (first + m).div_ceil(16) - first / 16;
            // SAFETY: 8 key words; writes m ≤ chunk buckets.
            unsafe { launch::subgroup_bucket_keys(gpu, grid(blocks), &d_key, stream, first, m, buckets, &mut bucket_of) }?;

            gpu.stream.memset_zeros(&mut sort.counts).map_err(cuda_err("memset counts"))?;
            // SAFETY: m keys, each below the buckets counters.
            unsafe { launch::bucket_histogram(gpu, grid(m), &bucket_of, m, &mut sort.counts) }?;
            sort.scan(gpu, POINTS_PER_THREAD, 0)?;
            // SAFETY: at most m positions and ceil(m / K) thread keys are written.
            unsafe {
                launch::bucket_scatter(gpu, grid(m), &bucket_of, m, &mut sort.cursors, POINTS_PER_THREAD, &mut sort.idx, &mut sort.thread_keys)
            }?;

            let mut part_row = part.slice_mut(g * row..(g + 1) * row);
            let threads = m.div_ceil(POINTS_PER_THREAD as usize);
            msm::accumulate_sorted::<G>(gpu, &d_bases.slice(..), &sort.sorted(), POINTS_PER_THREAD, threads, &mut levels, &mut part_row, &mut unprofiled)?;
        }
        // SAFETY: both tables hold `table` points.
        unsafe { launch::add_tables::<G>(gpu, grid(table), &mut sums, &part, table) }?;
    }
    let mut out = gpu.zeros::<u64>(G::JAC_WORDS * table, "alloc reduce output")?;
    msm::reduce::<G>(gpu, &sums, 1, table, &mut out)
}
