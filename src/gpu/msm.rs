//! G1 MSM and G1 batch addition on the GPU (kernels in cuda/msm.cu and
//! cuda/batch_add.cu). Results come back as Jacobian points (blst's
//! `blst_p1` layout) and are combined on the host.

use blstrs::{G1Affine, G1Projective, Scalar};
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use group::Group;

use super::device::{cuda_err, grid, Exec};
use super::limbs;
use crate::error::Result;

/// u64 words per device point: xyzz (4 × 48 bytes) and Jacobian (3 × 48).
const XYZZ_WORDS: usize = 24;
const JAC_WORDS: usize = 18;
/// Threads per block of g1_reduce_groups (REDUCE_THREADS in cuda/common.cuh).
const REDUCE_THREADS: u32 = 128;
/// Sorted points per accumulation thread, and buckets per segment.
const K: u32 = 32;
const SEGMENT: u32 = 32;
/// Points per batch-addition thread.
const BATCH_CHUNK: usize = 256;

/// Jacobian points from the device as blstrs projective points.
fn jacobians(words: &[u64]) -> Vec<G1Projective> {
    words
        .chunks_exact(JAC_WORDS)
        .map(|w| {
            let mut p = blst::blst_p1::default();
            p.x.l.copy_from_slice(&w[0..6]);
            p.y.l.copy_from_slice(&w[6..12]);
            p.z.l.copy_from_slice(&w[12..18]);
            // SAFETY: G1Projective is repr(transparent) over blst_p1 (Jacobian, Montgomery).
            unsafe { std::mem::transmute::<blst::blst_p1, G1Projective>(p) }
        })
        .collect()
}

/// Sums `groups` groups of `per_group` xyzz points into Jacobian points.
fn reduce(gpu: &Exec, points: &CudaSlice<u64>, per_group: usize, groups: usize) -> Result<Vec<G1Projective>> {
    let mut out = gpu.zeros::<u64>(JAC_WORDS * groups, "alloc reduce output")?;
    let mut b = gpu.stream.launch_builder(gpu.kernel("g1_reduce_groups"));
    b.arg(points).arg(&per_group).arg(&mut out);
    let cfg = LaunchConfig { grid_dim: (groups as u32, 1, 1), block_dim: (REDUCE_THREADS, 1, 1), shared_mem_bytes: 0 };
    // SAFETY: (const g1_xyzz_t*, size_t, g1_jacobian_t*); groups*per_group points in, groups out.
    unsafe { b.launch(cfg) }.map_err(cuda_err("g1_reduce_groups"))?;
    Ok(jacobians(&gpu.download(&out, "download reduced points")?))
}

/// Σ bases[i] over set bits of `bitmap`.
pub fn batch_add_g1(gpu: &Exec, bases: &[G1Affine], bitmap: &[u64]) -> Result<G1Projective> {
    let n = bases.len();
    if n == 0 {
        return Ok(G1Projective::identity());
    }
    let d_bases = gpu.upload(limbs(bases), "upload batch-add bases")?;
    let d_bits = gpu.upload(&bitmap[..n.div_ceil(64)], "upload bitmap")?;
    // One partial per launched thread; threads past the end sum nothing.
    let threads = n.div_ceil(BATCH_CHUNK).div_ceil(256) * 256;
    let mut partials = gpu.zeros::<u64>(XYZZ_WORDS * threads, "alloc batch-add partials")?;
    let mut b = gpu.stream.launch_builder(gpu.kernel("g1_batch_add"));
    b.arg(&d_bases).arg(&d_bits).arg(&n).arg(&BATCH_CHUNK).arg(&mut partials);
    // SAFETY: (const g1_affine_t*, const uint64_t*, size_t, size_t, g1_xyzz_t*); the grid
    // has exactly `threads` threads and partials one slot each.
    unsafe { b.launch(grid(threads)) }.map_err(cuda_err("g1_batch_add"))?;
    Ok(reduce(gpu, &partials, threads, 1)?[0])
}

/// Window width for n points: wider windows for bigger inputs, at most 16 bits.
fn window_bits(n: usize) -> u32 {
    let lg = usize::BITS - n.max(1).leading_zeros();
    lg.saturating_sub(3).clamp(4, 16)
}

/// Σ scalars[i]·bases[i] (scalars in Montgomery form).
pub fn msm_g1(gpu: &Exec, bases: &[G1Affine], scalars: &[Scalar]) -> Result<G1Projective> {
    assert_eq!(bases.len(), scalars.len(), "msm_g1: bases vs scalars");
    if bases.is_empty() {
        return Ok(G1Projective::identity());
    }
    let d_scalars = gpu.upload(limbs(scalars), "upload MSM scalars")?;
    msm_g1_device_scalars(gpu, bases, d_scalars)
}

/// Σ scalars[i]·bases[i] for i < bases.len(), the scalars already on the
/// device (`d_scalars`: at least 4·bases.len() u64 words, Montgomery form;
/// consumed, converted in place).
pub fn msm_g1_device_scalars(gpu: &Exec, bases: &[G1Affine], mut d_scalars: CudaSlice<u64>) -> Result<G1Projective> {
    let n = bases.len();
    assert!(d_scalars.len() >= 4 * n, "msm_g1: bases vs device scalars");
    if n == 0 {
        return Ok(G1Projective::identity());
    }
    let c = window_bits(n);
    let nb = 1u32 << c;
    let windows = 255u32.div_ceil(c);
    let threads = n.div_ceil(K as usize);
    let segments = (nb - 1).div_ceil(SEGMENT);

    let d_bases = gpu.upload(limbs(bases), "upload MSM bases")?;
    let mut b = gpu.stream.launch_builder(gpu.kernel("fr_from_montgomery"));
    b.arg(&mut d_scalars).arg(&n);
    // SAFETY: (fr_t*, size_t); n scalars.
    unsafe { b.launch(grid(n)) }.map_err(cuda_err("fr_from_montgomery"))?;

    let mut counts = gpu.zeros::<u32>(nb as usize, "alloc counts")?;
    let mut starts = gpu.zeros::<u32>(nb as usize + 1, "alloc starts")?;
    let mut cursors = gpu.zeros::<u32>(nb as usize, "alloc cursors")?;
    let mut idx = gpu.zeros::<u32>(n, "alloc indices")?;
    let mut keys = gpu.zeros::<u32>(n, "alloc keys")?;
    let mut buckets = gpu.zeros::<u64>(XYZZ_WORDS * nb as usize, "alloc buckets")?;
    let padded_threads = threads.div_ceil(256) * 256;
    let mut heads = gpu.zeros::<u64>(XYZZ_WORDS * padded_threads, "alloc heads")?;
    let mut tails = gpu.zeros::<u64>(XYZZ_WORDS * padded_threads, "alloc tails")?;
    let mut head_keys = gpu.zeros::<u32>(padded_threads, "alloc head keys")?;
    let mut tail_keys = gpu.zeros::<u32>(padded_threads, "alloc tail keys")?;
    let mut seg_out = gpu.zeros::<u64>(XYZZ_WORDS * segments as usize, "alloc segment sums")?;
    let mut window_sums = Vec::with_capacity(windows as usize);

    for w in 0..windows {
        gpu.stream.memset_zeros(&mut counts).map_err(cuda_err("memset counts"))?;
        gpu.stream.memset_zeros(&mut buckets).map_err(cuda_err("memset buckets"))?;
        let mut l = gpu.stream.launch_builder(gpu.kernel("msm_histogram"));
        l.arg(&d_scalars).arg(&n).arg(&c).arg(&w).arg(&mut counts);
        // SAFETY: (const uint32_t*, size_t, unsigned, unsigned, uint32_t*); n scalars, nb counters.
        unsafe { l.launch(grid(n)) }.map_err(cuda_err("msm_histogram"))?;

        let mut l = gpu.stream.launch_builder(gpu.kernel("msm_scan"));
        l.arg(&counts).arg(&mut starts).arg(&mut cursors).arg(&nb);
        let one_block = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1024, 1, 1), shared_mem_bytes: 0 };
        // SAFETY: (const uint32_t*, uint32_t*, uint32_t*, uint32_t); nb, nb+1, nb elements.
        unsafe { l.launch(one_block) }.map_err(cuda_err("msm_scan"))?;

        let mut l = gpu.stream.launch_builder(gpu.kernel("msm_scatter"));
        l.arg(&d_scalars).arg(&n).arg(&c).arg(&w).arg(&mut cursors).arg(&mut idx).arg(&mut keys);
        // SAFETY: (const uint32_t*, size_t, unsigned, unsigned, uint32_t*, uint32_t*, uint32_t*);
        // at most n positions are written.
        unsafe { l.launch(grid(n)) }.map_err(cuda_err("msm_scatter"))?;

        let mut l = gpu.stream.launch_builder(gpu.kernel("msm_accumulate"));
        l.arg(&d_bases)
            .arg(&idx)
            .arg(&keys)
            .arg(&starts)
            .arg(&nb)
            .arg(&K)
            .arg(&threads)
            .arg(&mut buckets)
            .arg(&mut heads)
            .arg(&mut head_keys)
            .arg(&mut tails)
            .arg(&mut tail_keys);
        // SAFETY: kernel signature in cuda/msm.cu; threads ≤ padded_threads slots.
        unsafe { l.launch(grid(threads)) }.map_err(cuda_err("msm_accumulate"))?;

        let mut l = gpu.stream.launch_builder(gpu.kernel("msm_fixup"));
        l.arg(&mut buckets).arg(&starts).arg(&nb).arg(&K).arg(&heads).arg(&head_keys).arg(&tails).arg(&tail_keys);
        // SAFETY: kernel signature in cuda/msm.cu; one thread per bucket.
        unsafe { l.launch(grid(nb as usize)) }.map_err(cuda_err("msm_fixup"))?;

        let mut l = gpu.stream.launch_builder(gpu.kernel("msm_bucket_segments"));
        l.arg(&buckets).arg(&nb).arg(&SEGMENT).arg(&segments).arg(&mut seg_out);
        // SAFETY: kernel signature in cuda/msm.cu; `segments` outputs.
        unsafe { l.launch(grid(segments as usize)) }.map_err(cuda_err("msm_bucket_segments"))?;

        window_sums.push(reduce(gpu, &seg_out, segments as usize, 1)?[0]);
    }
    // Σ_w 2^(c·w)·W_w by Horner from the top window.
    let mut acc = G1Projective::identity();
    for w in window_sums.iter().rev() {
        for _ in 0..c {
            acc = acc.double();
        }
        acc += w;
    }
    Ok(acc)
}
