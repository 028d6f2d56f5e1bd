//! MSM and batch addition in G1 and G2 on the GPU (kernels in cuda/msm.cu
//! and cuda/batch_add.cu, one instantiation per group). Results come back as
//! Jacobian points (blst's `blst_p1` / `blst_p2` layouts) and are combined on
//! the host. The MSM is Pippenger's bucket method over signed c-bit digits
//! (cuda/msm.cu describes the recoding): [`MsmTuning::windows`] windows of
//! [`MsmTuning::buckets`] bucket slots, a negative digit subtracting its base
//! from bucket |d|.

use blstrs::Scalar;
use cudarc::driver::{CudaSlice, CudaView, CudaViewMut, LaunchConfig};
use group::Group;

use super::device::cuda_err;
use super::exec::{grid, Exec};
use super::kernels::launch;
use super::tuning::{MsmProfile, MsmTuning};
use super::words::{limbs, Limbs};
use super::workspace::{bytes_of, Arena, Dev, Mem, OnDevice};
use crate::error::Result;

/// Threads per block of the reduce_groups kernels (REDUCE_THREADS in cuda/batch_add.cu).
const REDUCE_THREADS: u32 = 128;
/// Partials one merge-level thread sums (depth per level; the entries shrink
/// by MERGE_K/2 per level), and the count left for the fix-up.
const MERGE_K: u32 = 8;
const MERGE_FINAL_ENTRIES: usize = 64;
/// The merge levels run for a window whose largest bucket spans more than
/// this many accumulation threads (K points each); below it the fix-up's
/// per-bucket walk over level-0 partials is shallower than the levels.
const MERGE_ABOVE_PARTIALS: u32 = 64;
/// Buckets per segment of the Σ d·B_d step.
const SEGMENT: u32 = 32;

pub use super::group::{DeviceGroup, G1, G2};


/// Per-thread partial sums of one accumulation or merge level: the first
/// run's sum and bucket (heads) and the last run's, if different (tails);
/// keys INVALID where a slot holds nothing.
struct Partials<M: Mem = Dev> {
    heads: M::Buf<u64>,
    head_keys: M::Buf<u32>,
    tails: M::Buf<u64>,
    tail_keys: M::Buf<u32>,
}

impl<M: Mem> Partials<M> {
    /// `slots` slots: two xyzz points and two keys each.
    fn new<G: DeviceGroup, A: Arena<M = M>>(a: &mut A, slots: usize) -> Result<Self> {
        Ok(Partials {
            heads: a.zeros::<u64>(G::XYZZ_WORDS * slots, "alloc partial heads")?,
            head_keys: a.zeros::<u32>(slots, "alloc partial head keys")?,
            tails: a.zeros::<u64>(G::XYZZ_WORDS * slots, "alloc partial tails")?,
            tail_keys: a.zeros::<u32>(slots, "alloc partial tail keys")?,
        })
    }
}

/// `levels[from]` to read and `levels[to]` to write (from ≠ to).
fn pick(levels: &mut [Partials; 3], from: usize, to: usize) -> (&Partials, &mut Partials) {
    assert_ne!(from, to);
    let [a, b, c] = levels;
    match (from, to) {
        (0, 1) => (a, b),
        (2, 1) => (c, b),
        (1, 2) => (b, c),
        _ => unreachable!("merge levels go 0 → 1 → 2 → 1 …"),
    }
}

/// The partial sums of the accumulation (level 0, one slot per launched
/// thread) and two ping-pong buffers for the merge levels (the first merge
/// level is the largest), for accumulations of at most `threads` threads in
/// blocks of `block`.
pub(crate) struct Levels<M: Mem = Dev> {
    parts: [Partials<M>; 3],
    block: u32,
}

impl<M: Mem> Levels<M> {
    pub(crate) fn new<G: DeviceGroup, A: Arena<M = M>>(a: &mut A, threads: usize, block: u32) -> Result<Self> {
        let padded_threads = threads.div_ceil(block as usize) * block as usize;
        let merge_threads = (2 * threads).div_ceil(MERGE_K as usize);
        let last = merge_threads.div_ceil(MERGE_K as usize / 2).max(1);
        let parts = [Partials::new::<G, A>(a, padded_threads)?, Partials::new::<G, A>(a, merge_threads)?, Partials::new::<G, A>(a, last)?];
        Ok(Levels { parts, block })
    }
}

/// Counts one block of the bucket scan takes (SCAN_TILE in cuda/msm.cu),
/// and its threads (SCAN_THREADS).
const SCAN_TILE: u32 = 2048;
const SCAN_THREADS: u32 = 256;

/// The constants above that mirror a `#define` of cuda/ (checked by the
/// kernel table's tests).
#[cfg(test)]
pub(crate) const MIRRORED_DEFINES: &[(&str, u32)] = &[("REDUCE_THREADS", REDUCE_THREADS), ("SCAN_TILE", SCAN_TILE), ("SCAN_THREADS", SCAN_THREADS)];

/// The counting sort of up to `n` points into `buckets` buckets: histograms
/// into `counts` (`rows` of `buckets` counters, one per sort, filled by the
/// caller's kernel), [`SortBuffers::scan`] of one row, then a scatter
/// through `cursors` into `idx`/`thread_keys` (the caller's kernel), for
/// accumulation threads of `k` sorted points.
pub(crate) struct SortBuffers<M: Mem = Dev> {
    pub counts: M::Buf<u32>,
    pub starts: M::Buf<u32>,
    pub cursors: M::Buf<u32>,
    /// Set by the scan: some bucket holds more than MERGE_ABOVE_PARTIALS · K
    /// points, so the merge levels run (else they return at once).
    pub big: M::Buf<u32>,
    pub idx: M::Buf<u32>,
    /// The bucket at sorted position t·k, for each accumulation thread t.
    pub thread_keys: M::Buf<u32>,
    /// Per scan tile ([`SCAN_TILE`] counts): its total, then its offset;
    /// and its largest count.
    tile_sums: M::Buf<u32>,
    tile_max: M::Buf<u32>,
    pub buckets: u32,
}

/// Scan tiles for `buckets` counts.
fn scan_tiles(buckets: u32) -> u32 {
    buckets.div_ceil(SCAN_TILE)
}

impl<M: Mem> SortBuffers<M> {
    pub(crate) fn new<A: Arena<M = M>>(a: &mut A, n: usize, buckets: u32, k: u32, rows: u32) -> Result<Self> {
        let tiles = scan_tiles(buckets) as usize;
        Ok(SortBuffers {
            counts: a.zeros::<u32>(rows as usize * buckets as usize, "alloc counts")?,
            starts: a.zeros::<u32>(buckets as usize + 1, "alloc starts")?,
            cursors: a.zeros::<u32>(buckets as usize, "alloc cursors")?,
            big: a.zeros::<u32>(1, "alloc merge flag")?,
            idx: a.zeros::<u32>(n, "alloc indices")?,
            thread_keys: a.zeros::<u32>(n.div_ceil(k as usize), "alloc thread keys")?,
            tile_sums: a.zeros::<u32>(tiles, "alloc scan tiles")?,
            tile_max: a.zeros::<u32>(tiles, "alloc scan tiles")?,
            buckets,
        })
    }
}

impl SortBuffers {
    /// Bucket starts and scatter cursors from row `row` of the counts, and
    /// the merge flag for accumulation threads of `k` points: the tiles'
    /// scans, their totals' scan, the tiles' offsets (cuda/msm.cu, the
    /// bucket scan).
    pub(crate) fn scan(&mut self, gpu: &Exec, k: u32, row: u32) -> Result<()> {
        self.scan_counts(gpu, None, k, row)
    }

    /// [`SortBuffers::scan`] of row `row` of `counts` where given (another
    /// set's histograms, of the same bucket count), else of its own.
    fn scan_counts(&mut self, gpu: &Exec, counts: Option<&CudaSlice<u32>>, k: u32, row: u32) -> Result<()> {
        let big_points = MERGE_ABOVE_PARTIALS.saturating_mul(k);
        let tiles = scan_tiles(self.buckets);
        let nb = self.buckets as usize;
        let counts = counts.unwrap_or(&self.counts).slice(row as usize * nb..(row as usize + 1) * nb);
        let blocks = |grid: u32| LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (SCAN_THREADS, 1, 1), shared_mem_bytes: 0 };
        let nb = self.buckets;
        // SAFETY: one block per tile of SCAN_TILE counts (reads below `buckets` only),
        // `tiles` sums and maxima.
        unsafe { launch::msm_scan_tiles(gpu, blocks(tiles), &counts, &mut self.starts, nb, &mut self.tile_sums, &mut self.tile_max) }?;
        // SAFETY: one block; `tiles` entries, starts holds buckets + 1, one flag.
        unsafe { launch::msm_scan_totals(gpu, blocks(1), &mut self.tile_sums, &self.tile_max, tiles, &mut self.starts, nb, big_points, &mut self.big) }?;
        // SAFETY: one thread per bucket; starts and cursors hold buckets entries, tile_sums `tiles`.
        unsafe { launch::msm_scan_offsets(gpu, grid(nb as usize), &mut self.starts, &mut self.cursors, nb, &self.tile_sums) }?;
        Ok(())
    }

    /// Window `w`'s sort of the `n` recoded scalars (c-bit digits, threads
    /// of `k` points) on `gpu`'s stream: the scan of row w of `counts`
    /// (where given, else of its own), then the scatter.
    #[allow(clippy::too_many_arguments)]
    fn sort_window(&mut self, gpu: &Exec, counts: Option<&CudaSlice<u32>>, scalars: &CudaView<'_, u64>, n: usize, c: u32, k: u32, w: u32) -> Result<()> {
        self.scan_counts(gpu, counts, k, w)?;
        // SAFETY: n scalars; at most n positions and ceil(n / k) thread keys are written.
        unsafe { launch::msm_scatter(gpu, grid(n), scalars, n, c, w, &mut self.cursors, k, &mut self.idx, &mut self.thread_keys) }
    }

    pub(crate) fn sorted(&self) -> Sorted<'_> {
        Sorted { idx: &self.idx, thread_keys: &self.thread_keys, starts: &self.starts, big: &self.big, buckets: self.buckets }
    }
}

/// Bases sorted by bucket (a counting sort on the device): the low 31 bits
/// of `idx[p]` are the base at sorted position p, bit 31 set where it is
/// subtracted (the MSM's negative digits; the subgroup check never sets
/// it), `thread_keys[t]` the bucket at position t·k for accumulation
/// threads of k points (1 ≤ key < `buckets`; bucket 0 is never listed),
/// `starts[d]` the first position of bucket d
/// (`starts[buckets]` the total), `big` the scan's flag (some bucket holds
/// more than MERGE_ABOVE_PARTIALS · K points).
pub(crate) struct Sorted<'a> {
    pub idx: &'a CudaSlice<u32>,
    pub thread_keys: &'a CudaSlice<u32>,
    pub starts: &'a CudaSlice<u32>,
    pub big: &'a CudaSlice<u32>,
    pub buckets: u32,
}

/// Writes each bucket's sum of its sorted bases (a base whose index has bit
/// 31 set is subtracted) into `bucket_row` (one xyzz
/// point per bucket, `sorted.buckets` of them; a bucket with no base is left
/// as it was): threads of `k` sorted points each, the merge levels where a
/// bucket spans many threads, then one fix-up thread per bucket. `mark`
/// times the accumulation and the merge/fix-up into a profile.
#[allow(clippy::too_many_arguments)]
pub(crate) fn accumulate_sorted<G: DeviceGroup>(
    gpu: &Exec,
    d_bases: &CudaView<'_, u64>,
    sorted: &Sorted<'_>,
    k: u32,
    threads: usize,
    levels: &mut Levels,
    bucket_row: &mut CudaViewMut<'_, u64>,
    mark: &mut impl FnMut(fn(&mut MsmProfile) -> &mut f64) -> Result<()>,
) -> Result<()> {
    let Sorted { idx, thread_keys, starts, big, buckets: nb } = *sorted;
    let block = levels.block;
    let levels = &mut levels.parts;
    let padded_threads = threads.div_ceil(block as usize) * block as usize;
    assert!(levels[0].head_keys.len() >= padded_threads, "accumulate: more threads than level-0 slots");
    let acc_cfg = LaunchConfig { grid_dim: (padded_threads.div_ceil(block as usize) as u32, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 };
    let l0 = &mut levels[0];
    // SAFETY: threads ≤ padded_threads level-0 slots (asserted); the sorted positions
    // index the bases; bucket_row holds the nb buckets.
    unsafe {
        launch::msm_accumulate::<G>(
            gpu, acc_cfg, d_bases, idx, thread_keys, starts, nb, k, threads, bucket_row, &mut l0.heads, &mut l0.head_keys, &mut l0.tails, &mut l0.tail_keys,
        )
    }?;
    mark(|p| &mut p.accumulate_ms)?;

    // Merge levels until at most MERGE_FINAL_ENTRIES partials are left
    // (every bucket's share is then summed by log levels, however skewed
    // the scalars), then one fix-up thread per bucket.
    let (mut from, mut entries) = (0usize, 2 * threads);
    while entries > MERGE_FINAL_ENTRIES {
        let to = if from == 1 { 2 } else { 1 };
        let out_threads = entries.div_ceil(MERGE_K as usize);
        let (input, output) = pick(levels, from, to);
        let cfg = LaunchConfig { grid_dim: (out_threads.div_ceil(128) as u32, 1, 1), block_dim: (128, 1, 1), shared_mem_bytes: 0 };
        // SAFETY: reads `entries` ≤ 2·(input slots) entries, writes out_threads ≤ output
        // slots (sized for the first merge level, the largest).
        unsafe {
            launch::msm_merge_partials::<G>(
                gpu,
                cfg,
                &input.heads,
                &input.head_keys,
                &input.tails,
                &input.tail_keys,
                entries,
                MERGE_K,
                out_threads,
                bucket_row,
                &mut output.heads,
                &mut output.head_keys,
                &mut output.tails,
                &mut output.tail_keys,
                big,
            )
        }?;
        (from, entries) = (to, 2 * out_threads);
    }
    let (first, last) = (&levels[0], &levels[from]);
    // SAFETY: one thread per bucket of bucket_row, reading level 0's partials of its
    // positions or the last level's `entries`.
    unsafe {
        launch::msm_fixup::<G>(
            gpu,
            grid(nb as usize),
            bucket_row,
            nb,
            starts,
            k,
            &first.heads,
            &first.head_keys,
            &first.tails,
            &first.tail_keys,
            &last.heads,
            &last.head_keys,
            &last.tails,
            &last.tail_keys,
            entries,
            big,
        )
    }?;
    mark(|p| &mut p.fixup_ms)
}

/// Sums `groups` groups of `per_group` xyzz points into Jacobian points,
/// through `out` (at least `groups` Jacobian points), and downloads them.
pub(crate) fn reduce<G: DeviceGroup>(gpu: &Exec, points: &CudaSlice<u64>, per_group: usize, groups: usize, out: &mut CudaSlice<u64>) -> Result<Vec<G::Projective>> {
    reduce_on_device::<G>(gpu, points, per_group, groups, out)?;
    let sums = gpu.download(out, "download reduced points")?;
    Ok(sums[..G::JAC_WORDS * groups].chunks_exact(G::JAC_WORDS).map(G::from_jacobian).collect())
}

/// [`reduce`]'s launch: the `groups` Jacobian points stay on the device, in `out`.
fn reduce_on_device<G: DeviceGroup>(gpu: &Exec, points: &CudaSlice<u64>, per_group: usize, groups: usize, out: &mut CudaSlice<u64>) -> Result<()> {
    assert!(out.len() >= G::JAC_WORDS * groups && points.len() >= G::XYZZ_WORDS * per_group * groups, "reduce: buffers vs {groups} groups of {per_group}");
    let cfg = LaunchConfig { grid_dim: (groups as u32, 1, 1), block_dim: (REDUCE_THREADS, 1, 1), shared_mem_bytes: 0 };
    // SAFETY: groups·per_group points in, groups out (both checked above).
    unsafe { launch::reduce_groups::<G>(gpu, cfg, points, per_group, out) }
}

/// One MSM's window sums, still on the device (Jacobian, one per window of
/// `c` bits): [`WindowSums::finish`] downloads and combines them.
pub(crate) struct WindowSums {
    sums: CudaSlice<u64>,
    c: u32,
}

impl WindowSums {
    /// Σ_w 2^(c·w)·W_w, by Horner from the top window, on the host (waits
    /// for the call's stream).
    pub(crate) fn finish<G: DeviceGroup>(self, gpu: &Exec) -> Result<G::Projective> {
        let sums = gpu.download(&self.sums, "download window sums")?;
        let mut acc = G::Projective::identity();
        for w in sums.chunks_exact(G::JAC_WORDS).map(G::from_jacobian).rev() {
            for _ in 0..self.c {
                acc = acc.double();
            }
            acc += w;
        }
        Ok(acc)
    }

    /// [`WindowSums::finish`], its time added to `profile`'s reduction.
    fn finish_timed<G: DeviceGroup>(self, gpu: &Exec, profile: Option<&mut MsmProfile>) -> Result<G::Projective> {
        let t = std::time::Instant::now();
        let acc = self.finish::<G>(gpu)?;
        if let Some(p) = profile {
            p.reduce_ms += t.elapsed().as_secs_f64() * 1e3;
        }
        Ok(acc)
    }
}

/// Points per chunk of bases for `chunk_bytes` (`SUPRASEAL_C2_GPU_CHUNK_MB`):
/// the largest power of two that fits, at least 64 (so that every chunk
/// starts on a bitmap word); 2^23 G1 (96 B) or 2^22 G2 points (192 B) at the
/// default 768 MiB. A step's memory is then bounded by the chunk, not by the
/// vector's length (a porep-32g partition's h, l and a are 12–13 GB each).
pub fn chunk_points<G: DeviceGroup>(chunk_bytes: usize) -> usize {
    let fit = (chunk_bytes / (8 * G::Affine::WORDS)).max(64);
    1 << (usize::BITS - 1 - fit.leading_zeros())
}

/// Calls `f(bases on the device, first index, points)` on each chunk of
/// `bases` ([`chunk_points`]), summing the results. Where the bases are part
/// of the call's key and that key is resident on the device
/// ([`super::resident`]), the chunks are views into the resident copy and
/// nothing is uploaded. Otherwise each chunk is uploaded: with two chunks or
/// more, the uploads run on a stream of their own into two buffers in turn,
/// so chunk i+1 goes up while chunk i computes (cudarc's events order each
/// buffer's upload after the kernels that last read it, and those kernels
/// after its upload).
pub(super) fn chunked<G: DeviceGroup>(
    gpu: &Exec,
    bases: &[G::Affine],
    what: &str,
    budget: usize,
    f: impl FnMut(&CudaView<'_, u64>, usize, usize) -> Result<G::Projective>,
) -> Result<G::Projective> {
    let resident = resident_msm_points::<G>(bases.len(), gpu.settings.gpu_chunk, budget);
    chunked_fold::<G, _>(gpu, bases, what, resident, G::Projective::identity(), f, |acc, part| *acc += part)
}

/// Points per MSM over `n` bases read in place from the resident key: no
/// chunk buffers are needed there, so the MSM takes up to `budget` device
/// bytes, in the largest power of two of points that fits, at least
/// [`chunk_points`]. Fewer, larger MSMs take wider windows
/// ([`MsmTuning::for_points`]) and reduce their buckets fewer times: at
/// porep-32g's H (2^27 − 1 points, [`h_msm_budget`]) one MSM of 2^27 with
/// c = 20, where a 2^23-point chunk runs 16 windows of c = 17.
pub fn resident_msm_points<G: DeviceGroup>(n: usize, chunk_bytes: usize, budget: usize) -> usize {
    let mut points = chunk_points::<G>(chunk_bytes);
    while points < n && msm_resident_bytes::<G>(2 * points, MsmTuning::for_points(2 * points)) <= budget {
        points *= 2;
    }
    points
}

/// The device bytes the H-MSM over `n` bases may take: what
/// [`msm_chunked_bytes`] counts for them (two chunk buffers and one
/// chunk's MSM), or the room of the quotient's b and c where that is more
/// (64 bytes per element of the domain, the power of two at or above n;
/// the H-MSM starts after both are freed). Either way the H step stays
/// within the quotient step's bytes, which admission's peak counts
/// ([`super::stage::compute_peak_bytes`]). Other MSMs over resident bases
/// take [`msm_chunked_bytes`].
pub fn h_msm_budget(n: usize, chunk_bytes: usize) -> usize {
    msm_chunked_bytes::<G1>(n, chunk_bytes).max(64 * n.next_power_of_two())
}

/// Device bytes the H-MSM over `n` resident bases holds at once (its MSMs
/// run one after another): one MSM of [`resident_msm_points`] within
/// [`h_msm_budget`].
pub fn h_msm_resident_bytes(n: usize, chunk_bytes: usize) -> usize {
    let points = resident_msm_points::<G1>(n, chunk_bytes, h_msm_budget(n, chunk_bytes)).min(n);
    msm_resident_bytes::<G1>(points, MsmTuning::for_points(points))
}

/// [`chunked`] with any per-chunk result `T`, folded into `init` by `fold`
/// (the batch addition of several circuits returns one point per circuit).
/// Where the bases are read in place from the resident key, each call of
/// `f` covers `resident_points` of them (a multiple of [`chunk_points`]).
pub(super) fn chunked_fold<G: DeviceGroup, T>(
    gpu: &Exec,
    bases: &[G::Affine],
    what: &str,
    resident_points: usize,
    init: T,
    mut f: impl FnMut(&CudaView<'_, u64>, usize, usize) -> Result<T>,
    fold: impl Fn(&mut T, T),
) -> Result<T> {
    let chunk = chunk_points::<G>(gpu.settings.gpu_chunk);
    let words = G::Affine::WORDS;
    if let Some(key) = gpu.settings.key_resident.then(|| gpu.gpu.memory.resident_key()).flatten() {
        if let Some(view) = key.find(bases) {
            let run = (|| {
                let mut acc = init;
                for first in (0..bases.len()).step_by(resident_points) {
                    let len = resident_points.min(bases.len() - first);
                    fold(&mut acc, f(&view.slice(words * first..words * (first + len)), first, len)?);
                }
                Ok(acc)
            })();
            // `key` is held until the chunks' kernels are done: every caller's
            // `f` ends its last chunk with a download (the batch addition's
            // only there, the MSMs' at every chunk), which waits for this
            // call's stream, or leaves the key's frees to wait for its
            // kernels through cudarc's events (a shared table's,
            // `msm_device_scalars`, reduced after this returns); after an
            // error, kernels may still be queued, so wait for them here.
            if run.is_err() {
                let _ = gpu.stream.synchronize();
            }
            return run;
        }
    }
    let spans: Vec<(usize, usize)> = (0..bases.len()).step_by(chunk).map(|first| (first, chunk.min(bases.len() - first))).collect();
    uploaded_fold::<G, T>(gpu, bases, what, &spans, chunk, init, f, fold)
}

/// [`chunked_fold`]'s uploads: `f(chunk on the device, first, len)` for each
/// `(first, len)` of `spans` (consecutive, covering `bases`), through chunk
/// buffers of `most` points each ([`ChunkBuffers`]; every span fits one),
/// each chunk uploaded on a stream of its own while the one before computes.
#[allow(clippy::too_many_arguments)]
fn uploaded_fold<G: DeviceGroup, T>(
    gpu: &Exec,
    bases: &[G::Affine],
    what: &str,
    spans: &[(usize, usize)],
    most: usize,
    init: T,
    mut f: impl FnMut(&CudaView<'_, u64>, usize, usize) -> Result<T>,
    fold: impl Fn(&mut T, T),
) -> Result<T> {
    let words = G::Affine::WORDS;
    assert!(spans.iter().all(|&(_, len)| len <= most), "uploaded_fold: a span exceeds the chunk buffers");
    assert!(spans.len() == 1 || bases.len() > most, "uploaded_fold: several spans need the second chunk buffer");
    let upload = if spans.len() > 1 { Some(gpu.gpu.new_stream()?) } else { None };
    let stream = upload.as_ref().unwrap_or(&gpu.stream);
    let mut bufs = ChunkBuffers::new::<G, _>(&mut OnDevice(gpu), bases.len(), most, what)?.bufs;
    let put = |i: usize, bufs: &mut [CudaSlice<u64>]| -> Result<()> {
        let (first, len) = spans[i];
        stream.memcpy_htod(limbs(&bases[first..first + len]), &mut bufs[i % 2].slice_mut(..words * len)).map_err(cuda_err(what))
    };
    let run = (|| {
        let mut acc = init;
        put(0, &mut bufs)?;
        for (i, &(first, len)) in spans.iter().enumerate() {
            if i + 1 < spans.len() {
                put(i + 1, &mut bufs)?;
            }
            fold(&mut acc, f(&bufs[i % 2].slice(..), first, len)?);
        }
        Ok(acc)
    })();
    // The host bases must outlive every copy from them, also after an error.
    if let Some(up) = &upload {
        up.synchronize().map_err(cuda_err("synchronize the chunk uploads"))?;
    }
    run
}

/// Σ scalars[i]·bases[i] (equal lengths, scalars in Montgomery form).
pub fn msm<G: DeviceGroup>(gpu: &Exec, bases: &[G::Affine], scalars: &[Scalar]) -> Result<G::Projective> {
    assert_eq!(bases.len(), scalars.len(), "msm: bases vs scalars");
    if bases.is_empty() {
        return Ok(G::Projective::identity());
    }
    let mut d_scalars = gpu.upload(limbs(scalars), "upload MSM scalars")?;
    msm_device_scalars::<G>(gpu, bases, &mut d_scalars, msm_chunked_bytes::<G>(bases.len(), gpu.settings.gpu_chunk))
}

/// [`msm`] for each of `scalars` (one vector per circuit, each
/// `bases.len()` long) over the same bases: each chunk of bases goes up once
/// ([`chunked_fold`]) and every circuit's MSM over it runs before the next
/// chunk, with only that chunk's scalars on the device.
pub fn msm_many<G: DeviceGroup>(gpu: &Exec, bases: &[G::Affine], scalars: &[&[Scalar]]) -> Result<Vec<G::Projective>> {
    assert!(scalars.iter().all(|s| s.len() == bases.len()), "msm_many: bases vs scalars");
    let zero = vec![G::Projective::identity(); scalars.len()];
    if bases.is_empty() || scalars.is_empty() {
        return Ok(zero);
    }
    let chunk = chunk_points::<G>(gpu.settings.gpu_chunk);
    let mut many = ManyScalars::new(gpu, scalars, bases.len().min(chunk))?;
    chunked_fold::<G, Vec<G::Projective>>(gpu, bases, "upload MSM bases", chunk, zero, |d_bases, first, len| many.run::<G>(gpu, d_bases, first, len), |acc, part| add_each::<G>(acc, part))
}

/// [`msm_many`] over the bases at `positions` of `bases` (the tail MSMs of
/// split plans): `gathered` is `bases[positions[t]]` for every t, or empty
/// ([`crate::backend::Compute::msm_many_at`]), and each of `scalars` is
/// `positions.len()` long. Where `bases` is part of the resident key, the
/// tail's bases are gathered from it on the device (only the positions go
/// up, 4 bytes per point instead of 96 or 192); otherwise the gathered
/// bases (gathered on the host now where `gathered` is empty) are uploaded
/// as [`msm_many`] does.
pub fn msm_many_at<G: DeviceGroup>(
    gpu: &Exec,
    bases: &[G::Affine],
    positions: &[u32],
    gathered: &[G::Affine],
    scalars: &[&[Scalar]],
) -> Result<Vec<G::Projective>> {
    msm_many_at_ahead::<G>(gpu, bases, positions, gathered, scalars, None).map(|(sums, _)| sums)
}

/// [`msm_many_at`], reading the tail from `ahead` ([`put_ahead`] of the
/// same positions, gathered bases and scalars) instead of uploading it:
/// over a resident key its positions and scalars, else its gathered bases
/// and scalars. `None`, an `ahead` of another shape, or positions put ahead
/// for bases no longer in the resident key upload them as [`msm_many_at`]
/// does. Returns the sums and whether they read the copies put ahead.
pub fn msm_many_at_ahead<G: DeviceGroup>(
    gpu: &Exec,
    bases: &[G::Affine],
    positions: &[u32],
    gathered: &[G::Affine],
    scalars: &[&[Scalar]],
    ahead: Option<AheadScalars>,
) -> Result<(Vec<G::Projective>, bool)> {
    assert!(positions.iter().all(|&q| (q as usize) < bases.len()), "msm_many_at: a position past the bases");
    let n = positions.len();
    let words = G::Affine::WORDS;
    let fits = |a: &AheadScalars| a.scalars.len() == scalars.len() && a.scalars.iter().all(|d| d.len() == 4 * n);
    let ahead = match ahead.filter(fits) {
        Some(AheadScalars { tail: AheadTail::Gathered(d_bases), scalars: mut d_scalars }) if n > 0 && d_bases.len() == words * n => {
            let run = msms_ahead::<G>(gpu, &d_bases.slice(..), n, &mut d_scalars);
            if run.is_ok() {
                TAILS_READ_AHEAD.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            return run.map(|sums| (sums, true));
        }
        Some(AheadScalars { tail: AheadTail::Positions(d_pos), scalars: d_scalars }) if d_pos.len() == n => Some((d_pos, d_scalars)),
        _ => None,
    };
    let key = gpu.settings.key_resident.then(|| gpu.gpu.memory.resident_key()).flatten();
    let Some(view) = key.as_ref().and_then(|k| k.find(bases)) else {
        return msm_many::<G>(gpu, &crate::backend::gathered_or_now(bases, positions, gathered), scalars).map(|sums| (sums, false));
    };
    assert!(scalars.iter().all(|s| s.len() == positions.len()), "msm_many_at: positions vs scalars");
    let zero = vec![G::Projective::identity(); scalars.len()];
    if n == 0 || scalars.is_empty() {
        return Ok((zero, false));
    }
    let point_words = words as u32;
    let read = ahead.is_some();
    let run = (|| match ahead {
        Some((d_pos, mut d_scalars)) => {
            let mut d_bases = gpu.zeros::<u64>(words * n, "alloc tail bases")?;
            // SAFETY: the n positions on the device are `positions` (put_ahead copied them;
            // `fits` checked the length), each < bases.len() (asserted), so every read is
            // inside the key's view of `bases` and the n·words writes inside d_bases.
            unsafe { launch::gather_points(gpu, grid(n * words), &view, &d_pos, n, point_words, &mut d_bases) }?;
            msms_ahead::<G>(gpu, &d_bases.slice(..), n, &mut d_scalars)
        }
        None => {
            let chunk = chunk_points::<G>(gpu.settings.gpu_chunk);
            let most = n.min(chunk);
            let mut many = ManyScalars::new(gpu, scalars, most)?;
            let mut d_pos = gpu.zeros::<u32>(most, "alloc tail positions")?;
            let mut d_bases = gpu.zeros::<u64>(words * most, "alloc tail bases")?;
            let mut acc = zero;
            for first in (0..n).step_by(chunk) {
                let len = chunk.min(n - first);
                gpu.stream.memcpy_htod(&positions[first..first + len], &mut d_pos.slice_mut(..len)).map_err(cuda_err("upload tail positions"))?;
                // SAFETY: len ≤ most positions, each < bases.len() (asserted), so every read is
                // inside the key's view of `bases` and the len·words writes inside d_bases.
                unsafe { launch::gather_points(gpu, grid(len * words), &view, &d_pos, len, point_words, &mut d_bases) }?;
                add_each::<G>(&mut acc, many.run::<G>(gpu, &d_bases.slice(..words * len), first, len)?);
            }
            Ok(acc)
        }
    })();
    // The key is held until the gathers are done: the MSMs end with
    // downloads, which wait for this call's stream; after an error, kernels
    // may still be queued, so wait for them here.
    if run.is_err() {
        let _ = gpu.stream.synchronize();
    }
    if read && run.is_ok() {
        TAILS_READ_AHEAD.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    run.map(|sums| (sums, read))
}

/// One MSM over the n bases of `d_bases` per set of scalars put ahead
/// (recoded in place), all enqueued before the first window sums come back.
/// After an error, waits for the kernels already queued.
fn msms_ahead<G: DeviceGroup>(gpu: &Exec, d_bases: &CudaView<'_, u64>, n: usize, d_scalars: &mut [CudaSlice<u64>]) -> Result<Vec<G::Projective>> {
    let tuning = gpu.msm_tuning::<G>(n);
    let run = (|| -> Result<Vec<G::Projective>> {
        let pending = d_scalars.iter_mut().map(|d| msm_enqueue::<G>(gpu, d_bases, n, &mut d.slice_mut(..), tuning, None)).collect::<Result<Vec<_>>>()?;
        pending.into_iter().map(|w| w.map_or(Ok(G::Projective::identity()), |w| w.finish::<G>(gpu))).collect()
    })();
    if run.is_err() {
        let _ = gpu.stream.synchronize();
    }
    run
}

/// Tail MSMs (all circuits of one plan) that read their scalars from copies
/// put ahead, since the process started: what the tests read to see that
/// phase 2 takes that path.
pub static TAILS_READ_AHEAD: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A tail and each circuit's scalars, put on the device ahead of their MSM
/// ([`put_ahead`]) by another thread while the device runs the work before
/// it; cudarc orders the MSM's kernels after the copies.
pub struct AheadScalars {
    tail: AheadTail,
    /// Per circuit, 4·n words (Montgomery form; recoded in place by the MSM).
    scalars: Vec<CudaSlice<u64>>,
}

/// How an [`AheadScalars`] finds its tail's n bases.
enum AheadTail {
    /// The positions in the resident key, gathered on the device by the MSM.
    Positions(CudaSlice<u32>),
    /// The bases themselves, gathered on the host (a streamed key):
    /// words·n u64 words.
    Gathered(CudaSlice<u64>),
}

/// Starts copying a tail and each of `scalars` (n = `positions.len()`
/// each) to the device, on a stream of its own (through the staging ring,
/// page-locked, where the call uses it and a call has made it), for a later
/// [`msm_many_at_ahead`] over `bases`:
/// - where `bases` is in the resident key, `positions` (4 B per point), as
///   long as a set takes at most one chunk buffer of `bases`
///   (`8·words·min(bases.len(), chunk points)`: phase 2 holds at most two
///   sets ahead, within the two chunk buffers the peak formula counts for
///   an MSM over `bases`, which a resident key leaves unused; at porep-32g
///   a 10-circuit call's sets fit);
/// - else `gathered` (`bases[positions[t]]`, 8·words B per point, as phase
///   2 gathers them on the host for a streamed key), as long as two sets
///   fit in [`Exec::tails_ahead_room`] (the call's peak less its sums'
///   largest step: at porep-32g as a 16 GiB card, several GB).
///
/// `None` otherwise: a tail larger than one chunk of bases, `gathered`
/// empty, and with `SUPRASEAL_C2_FAULT_ALLOC` set in a build that injects
/// faults (these allocations run on the calling thread, beside the call's,
/// so which one is phase 2's N-th would depend on timing). Returns once the
/// copies are enqueued (the host vectors may go). Errors: allocation or
/// copy (the caller then lets the MSM upload them itself).
pub fn put_ahead<G: DeviceGroup>(gpu: &Exec, bases: &[G::Affine], positions: &[u32], gathered: &[G::Affine], scalars: &[Vec<Scalar>]) -> Result<Option<AheadScalars>> {
    let n = positions.len();
    let chunk = chunk_points::<G>(gpu.settings.gpu_chunk);
    if n == 0 || scalars.is_empty() || n > chunk || scalars.iter().any(|s| s.len() != n) || gpu.settings.fault.is_some() {
        return Ok(None);
    }
    let words = G::Affine::WORDS;
    let on_device = gpu.settings.key_resident && gpu.gpu.memory.resident_key().is_some_and(|k| k.find(bases).is_some());
    let set = ahead_set_bytes(words, n, scalars.len(), on_device);
    let fits = if on_device { set <= 8 * words * bases.len().min(chunk) } else { gathered.len() == n && 2 * set <= gpu.tails_ahead_room() };
    if !fits {
        return Ok(None);
    }
    let t = std::time::Instant::now();
    // Called from the tail-gather thread, not the call's.
    gpu.gpu.ctx.bind_to_thread().map_err(cuda_err("put tail scalars ahead"))?;
    let stream = gpu.gpu.new_stream()?;
    // Not made here, inside phase 2, if no call has made it.
    let ring = (!gpu.settings.register_inputs).then(|| gpu.gpu.staging_made()).flatten();
    let mut times = UploadTimes { setup: t.elapsed(), ..Default::default() };
    let tail = if on_device {
        AheadTail::Positions(upload_ahead(gpu, &stream, ring, positions, "tail positions ahead", &mut times)?)
    } else {
        AheadTail::Gathered(upload_ahead(gpu, &stream, ring, limbs(gathered), "tail bases ahead", &mut times)?)
    };
    let scalars = scalars.iter().map(|s| upload_ahead(gpu, &stream, ring, limbs(s), "tail scalars ahead", &mut times)).collect::<Result<_>>()?;
    // Where the time of a set goes: a slow copy through the ring, or an
    // allocation that waits on the pool (memory another stream freed).
    tracing::debug!(
        target: "supraseal_c2::gpu::stage",
        group = ?G::NAME,
        points = n,
        bytes = set,
        setup_ms = crate::log::round1(times.setup.as_secs_f64() * 1e3),
        alloc_ms = crate::log::round1(times.alloc.as_secs_f64() * 1e3),
        copy_ms = crate::log::round1(times.copy.as_secs_f64() * 1e3),
        ring = ring.is_some(),
        "a tail's set put ahead: stream and context, allocations, copies enqueued"
    );
    Ok(Some(AheadScalars { tail, scalars }))
}

/// Device bytes of one set [`put_ahead`] makes for a tail of `n` points of
/// `words` u64 words and `circuits` circuits' scalars: the positions (4 B
/// each) where the key is `resident`, else the gathered bases.
pub fn ahead_set_bytes(words: usize, n: usize, circuits: usize, resident: bool) -> usize {
    (32 * circuits + if resident { 4 } else { 8 * words }) * n
}

/// Host time of one [`put_ahead`], by part.
#[derive(Default)]
struct UploadTimes {
    setup: std::time::Duration,
    alloc: std::time::Duration,
    copy: std::time::Duration,
}

/// A new device buffer holding `host`, copied on `stream` (through `ring`
/// where given) for [`put_ahead`]; its host time added to `times`.
fn upload_ahead<T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits>(
    gpu: &Exec,
    stream: &std::sync::Arc<cudarc::driver::CudaStream>,
    ring: Option<&super::staging::StagingRing>,
    host: &[T],
    what: &str,
    times: &mut UploadTimes,
) -> Result<CudaSlice<T>> {
    let t = std::time::Instant::now();
    // SAFETY: the copy below writes every element before the MSM reads any.
    let mut d = unsafe { gpu.alloc_padded_on::<T>(stream, host.len(), host.len(), what) }?;
    times.alloc += t.elapsed();
    let t = std::time::Instant::now();
    super::staging::copy_to_device(&gpu.gpu, ring, stream, host, &mut d.slice_mut(..), gpu.settings.staging_threads, what)?;
    times.copy += t.elapsed();
    Ok(d)
}

fn add_each<G: DeviceGroup>(acc: &mut [G::Projective], part: Vec<G::Projective>) {
    acc.iter_mut().zip(part).for_each(|(a, p)| *a += p)
}

/// The circuits' scalars of [`msm_many`], put on the device a chunk of
/// bases at a time. With several circuits, each one's scalars go up on a
/// stream of their own into two buffers in turn (made once for all chunks of
/// bases), so circuit j+1's copy runs while circuit j's MSM computes
/// (cudarc's events order each copy after the kernels that last used its
/// buffer, and the MSM after its copy), and the window sums come back once
/// every MSM of the chunk is enqueued: the device does not wait for the host
/// between them.
struct ManyScalars<'s> {
    scalars: &'s [&'s [Scalar]],
    ring: Option<(std::sync::Arc<cudarc::driver::CudaStream>, Vec<CudaSlice<u64>>)>,
}

impl<'s> ManyScalars<'s> {
    /// For chunks of up to `most` bases.
    fn new(gpu: &Exec, scalars: &'s [&'s [Scalar]], most: usize) -> Result<Self> {
        let ring = if scalars.len() > 1 {
            let upload = gpu.gpu.new_stream()?;
            let words = 4 * most;
            let mut bufs = Vec::with_capacity(2);
            for _ in 0..2 {
                // SAFETY: each circuit's copy in `run` writes the words its MSM reads.
                bufs.push(unsafe { gpu.alloc_padded_on::<u64>(&upload, words, words, "alloc MSM scalars") }?);
            }
            Some((upload, bufs))
        } else {
            None
        };
        Ok(ManyScalars { scalars, ring })
    }

    /// Every circuit's MSM over the chunk of `len` bases at `d_bases`
    /// (positions `first..first + len` of the scalars).
    fn run<G: DeviceGroup>(&mut self, gpu: &Exec, d_bases: &CudaView<'_, u64>, first: usize, len: usize) -> Result<Vec<G::Projective>> {
        let tuning = gpu.msm_tuning::<G>(len);
        let Some((upload, bufs)) = self.ring.as_mut() else {
            let mut d = gpu.upload(limbs(&self.scalars[0][first..first + len]), "upload MSM scalars")?;
            return Ok(vec![msm_resident::<G>(gpu, d_bases, len, &mut d.slice_mut(..), tuning, None)?]);
        };
        let mut pending = Vec::with_capacity(self.scalars.len());
        for (j, s) in self.scalars.iter().enumerate() {
            let mut d = bufs[j % 2].slice_mut(..4 * len);
            upload.memcpy_htod(limbs(&s[first..first + len]), &mut d).map_err(cuda_err("upload MSM scalars"))?;
            pending.push(msm_enqueue::<G>(gpu, d_bases, len, &mut d, tuning, None)?);
        }
        pending.into_iter().map(|w| w.map_or(Ok(G::Projective::identity()), |w| w.finish::<G>(gpu))).collect()
    }
}

/// Σ scalars[i]·bases[i] for i < bases.len(), the scalars already on the
/// device (`d_scalars`: at least 4·bases.len() u64 words, Montgomery form;
/// overwritten: recoded in place, see [`msm_resident`]).
/// The bases go up a chunk at a time ([`chunk_points`]), each chunk its own
/// Pippenger MSM, summed here, or with `SUPRASEAL_C2_STREAMED_MSM=table`
/// every chunk added into one [`SharedTable`] where it fits `budget`
/// ([`shared_table_tuning`]; with `table-ramp`, the default, in chunks that
/// grow within it, [`ramp_most`]); read in place from the resident key, they
/// run in MSMs of up to `budget` device bytes ([`resident_msm_points`]).
pub fn msm_device_scalars<G: DeviceGroup>(gpu: &Exec, bases: &[G::Affine], d_scalars: &mut CudaSlice<u64>, budget: usize) -> Result<G::Projective> {
    let n = bases.len();
    if n == 0 {
        return Ok(G::Projective::identity());
    }
    let d_scalars = &mut d_scalars.slice_mut(..);
    let streamed = !(gpu.settings.key_resident && gpu.gpu.memory.resident_key().is_some_and(|k| k.find(bases).is_some()));
    if let Some(tuning) = (gpu.settings.streamed_msm_table && streamed).then(|| shared_table_tuning::<G>(n, gpu.settings.gpu_chunk, budget)).flatten() {
        let chunk = chunk_points::<G>(gpu.settings.gpu_chunk);
        let most = if gpu.settings.streamed_msm_ramp { ramp_most::<G>(n, gpu.settings.gpu_chunk, tuning, budget) } else { chunk };
        let mut started = false;
        let sum = match table_sum::<G>(gpu, bases, d_scalars, tuning, chunk, most, &mut started) {
            // A ramp is opportunistic: where the device has no room for its
            // larger buffers (the pool cannot place them in what the
            // quotient freed), its chunks stay one size. Only before any
            // chunk is added (the scalars are recoded in place as they
            // go), and never under fault injection, whose count of
            // allocations must not depend on a retry.
            Err(e) if most > chunk && !started && e.kind() == crate::error::ErrorKind::DeviceOutOfMemory && gpu.settings.fault.is_none() => {
                tracing::debug!(most, chunk, error = %e.message, "no room for the H-MSM's ramp: chunks of one size");
                table_sum::<G>(gpu, bases, d_scalars, tuning, chunk, chunk, &mut started)
            }
            sum => {
                if sum.is_ok() && most > chunk {
                    RAMPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
                sum
            }
        };
        if sum.is_ok() {
            SHARED_TABLES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        return sum;
    }
    chunked::<G>(gpu, bases, "upload MSM bases", budget, |d_bases, first, len| {
        let mut part = d_scalars.slice_mut(4 * first..4 * (first + len));
        msm_resident::<G>(gpu, d_bases, len, &mut part, gpu.msm_tuning::<G>(len), None)
    })
}

/// [`msm_device_scalars`] through one [`SharedTable`] of `tuning`, its
/// chunks of `chunk` points or, where `most` is larger, a ramp up to `most`
/// ([`ramp_spans`]). `started` is set once the first chunk is added.
#[allow(clippy::too_many_arguments)]
fn table_sum<G: DeviceGroup>(
    gpu: &Exec,
    bases: &[G::Affine],
    d_scalars: &mut CudaViewMut<'_, u64>,
    tuning: MsmTuning,
    chunk: usize,
    most: usize,
    started: &mut bool,
) -> Result<G::Projective> {
    let n = bases.len();
    let mut table = SharedTable::new::<G>(gpu, most, tuning)?;
    // Each chunk's launches are enqueued without waiting for the last
    // chunk's: the table is reduced once, after the last chunk, whose
    // download waits for them. The bases are not in the resident key
    // (`msm_device_scalars`), so they are uploaded; should another call make
    // them resident in between, `chunked_fold` (not the ramp, which always
    // uploads) passes views of the key, whose memory cudarc frees only
    // after the kernels that read it.
    let add = |d_bases: &CudaView<'_, u64>, first: usize, len: usize| {
        *started = true;
        table.add::<G>(gpu, d_bases, len, &mut d_scalars.slice_mut(4 * first..4 * (first + len)), None)
    };
    if most > chunk {
        uploaded_fold::<G, ()>(gpu, bases, "upload MSM bases", &ramp_spans(n, chunk, most), most, (), add, |_, ()| ())?;
    } else {
        chunked_fold::<G, ()>(gpu, bases, "upload MSM bases", chunk, (), add, |_, ()| ())?;
    }
    table.finish::<G>(gpu, None)
}

/// MSMs that ran through a [`SharedTable`] since the process started: what
/// the tests read to see that an MSM took that path.
#[doc(hidden)]
pub static SHARED_TABLES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Of [`SHARED_TABLES`], those whose chunks ramped (no fallback to chunks
/// of one size).
#[doc(hidden)]
pub static RAMPS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// One bucket table that every chunk of an MSM over streamed bases adds
/// into, reduced once after the last chunk
/// (`SUPRASEAL_C2_STREAMED_MSM=table`): the windows are those of the whole
/// MSM's points ([`shared_table_tuning`]; c = 20 at porep-32g's H, 13
/// windows), where one MSM per chunk takes the chunk's (c = 17 for 2^23
/// points, 16 windows) and reduces its own buckets. Each chunk still sorts
/// its points once per window, accumulates that window's buckets into a
/// row of its own and adds the row into the table's (`add_tables`, as the
/// subgroup check adds a chunk's table into its vector's).
pub struct SharedTable {
    scratch: MsmScratch,
    tuning: MsmTuning,
}

impl SharedTable {
    /// A table for chunks of up to `chunk` points, windows and launches of
    /// `tuning`, every bucket the identity.
    pub fn new<G: DeviceGroup>(gpu: &Exec, chunk: usize, tuning: MsmTuning) -> Result<Self> {
        tuning.check();
        Ok(SharedTable { scratch: MsmScratch::new::<G, _>(&mut OnDevice(gpu), chunk, tuning, true)?, tuning })
    }

    /// Adds Σ scalars[i]·bases[i] for i < n (at most the table's chunk;
    /// device buffers as for [`msm_resident`], the scalars recoded in place)
    /// into the table. Enqueued only: waits for the device only to time
    /// `profile`'s steps.
    pub fn add<G: DeviceGroup>(&mut self, gpu: &Exec, d_bases: &CudaView<'_, u64>, n: usize, d_scalars: &mut CudaViewMut<'_, u64>, profile: Option<&mut MsmProfile>) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        // The digit counts of the last chunk's sort.
        gpu.stream.memset_zeros(&mut self.scratch.sort.counts).map_err(cuda_err("zero the MSM's digit counts"))?;
        add_windows::<G>(gpu, &mut self.scratch, d_bases, n, d_scalars, self.tuning, &mut Clock::new(gpu, profile))
    }

    /// Σ over every chunk added: the windows' sums, downloaded and combined.
    pub fn finish<G: DeviceGroup>(self, gpu: &Exec, mut profile: Option<&mut MsmProfile>) -> Result<G::Projective> {
        let sums = window_sums::<G>(gpu, self.scratch, self.tuning, &mut Clock::new(gpu, profile.as_deref_mut()))?;
        sums.finish_timed::<G>(gpu, profile)
    }
}

/// Points a chunk adds per bucket of a window, at least, for a
/// [`SharedTable`]: each chunk pays a pass over every bucket of every window
/// (its row zeroed, then added into the table), which the windows it saves
/// repay only with enough points per bucket. Measured at 16 (porep-32g's H:
/// 2^23-point chunks, c = 20) on an H100, kernels only: 1,058 against
/// 1,194 ms for one MSM per chunk (8ac53f6); fewer per bucket (smaller
/// chunks) was not measured.
const TABLE_POINTS_PER_BUCKET: usize = 16;

/// The launch choice of a [`SharedTable`] for `n` bases streamed in chunks
/// of `chunk_bytes`, where the chunk buffers and the table's MSM buffers fit
/// `budget` device bytes: [`MsmTuning::for_table`]. `None`
/// where that is no wider than one chunk's window (one chunk, or small
/// vectors), where a chunk holds fewer than [`TABLE_POINTS_PER_BUCKET`]
/// points per bucket, or where it does not fit; one MSM per chunk then runs.
pub fn shared_table_tuning<G: DeviceGroup>(n: usize, chunk_bytes: usize, budget: usize) -> Option<MsmTuning> {
    let chunk = chunk_points::<G>(chunk_bytes);
    let (table, per_chunk) = (MsmTuning::for_table(n, chunk), MsmTuning::for_points(chunk));
    let dense = chunk >= TABLE_POINTS_PER_BUCKET * (table.buckets() as usize - 1);
    let fits = || table_bytes::<G>(n, chunk, table) <= budget;
    (n > chunk && table.window_bits > per_chunk.window_bits && dense && fits()).then_some(table)
}

/// The chunks of a ramp over `n` points: `chunk` points first, each next
/// chunk twice the last, up to `most` (`SUPRASEAL_C2_STREAMED_MSM=table-ramp`):
/// the first upload, which no computation hides, stays one chunk's, and
/// each later one takes about as long as the computation on the chunk
/// before it. `(first, len)` spans, consecutive, covering 0..n.
pub fn ramp_spans(n: usize, chunk: usize, most: usize) -> Vec<(usize, usize)> {
    assert!(chunk > 0 && most >= chunk, "ramp_spans: chunks of {chunk} up to {most}");
    let (mut spans, mut first, mut len) = (Vec::new(), 0, chunk);
    while first < n {
        let l = len.min(n - first);
        spans.push((first, l));
        first += l;
        len = (2 * len).min(most);
    }
    spans
}

/// Device bytes of a [`SharedTable`] over `n` points in chunks of up to
/// `most` points: its chunk buffers and its scratch.
fn table_bytes<G: DeviceGroup>(n: usize, most: usize, tuning: MsmTuning) -> usize {
    chunk_buffers_points_bytes::<G>(n, most) + shared_table_bytes::<G>(most.min(n), tuning)
}

/// The largest chunk of a ramp for `n` points in chunks of `chunk_bytes`
/// with a table of `tuning`: at most 4 times the chunk (the ramp's longest
/// span, where n stops it short of that cap; the buffers hold exactly it),
/// less as many [`RAMP_STEPS`]ths of a chunk as its buffers and the table
/// need to fit `budget`; the chunk (no ramp) where no larger one fits. At
/// porep-32g's H, 4 chunks less one step (2^25 − 2^17 points): 2^25 exceeds
/// the H budget by 12 MB.
fn ramp_most<G: DeviceGroup>(n: usize, chunk_bytes: usize, tuning: MsmTuning, budget: usize) -> usize {
    let chunk = chunk_points::<G>(chunk_bytes);
    let top = ramp_spans(n, chunk, 4 * chunk).iter().map(|&(_, len)| len).max().unwrap_or(0);
    let step = (chunk / RAMP_STEPS).max(1);
    (1..=top.saturating_sub(chunk).div_ceil(step))
        .map(|i| top.saturating_sub((i - 1) * step))
        .find(|&m| m > chunk && m < n && table_bytes::<G>(n, m, tuning) <= budget)
        .unwrap_or(chunk)
}

/// The steps a ramp's largest chunk shrinks by to fit its budget, per chunk
/// ([`ramp_most`]).
const RAMP_STEPS: usize = 64;

/// Device bytes the H-MSM over `n` streamed bases holds at once beside its
/// scalars, within `budget` ([`h_msm_budget`], or a chunk's MSM bytes beside
/// the batch additions): the chunk buffers and a [`SharedTable`] where
/// `table` (`SUPRASEAL_C2_STREAMED_MSM=table`) and [`shared_table_tuning`]
/// take one (with `ramp`, `=table-ramp`, chunk buffers of the ramp's
/// largest chunk and a table sorting that many), else the chunk buffers and
/// one chunk's MSM ([`msm_chunked_bytes`]).
pub fn h_msm_streamed_bytes(n: usize, chunk_bytes: usize, table: bool, ramp: bool, budget: usize) -> usize {
    match shared_table_tuning::<G1>(n, chunk_bytes, budget).filter(|_| table) {
        Some(t) if ramp => table_bytes::<G1>(n, ramp_most::<G1>(n, chunk_bytes, t, budget), t),
        Some(t) => table_bytes::<G1>(n, chunk_points::<G1>(chunk_bytes), t),
        None => msm_chunked_bytes::<G1>(n, chunk_bytes),
    }
}

/// Device bytes of a [`SharedTable`] for chunks of `chunk` points.
pub fn shared_table_bytes<G: DeviceGroup>(chunk: usize, tuning: MsmTuning) -> usize {
    bytes_of(|a| MsmScratch::new::<G, _>(a, chunk, tuning, true))
}

/// Device bytes [`msm_resident`] allocates for `n` points with `tuning`
/// ([`MsmScratch`]), beside the bases and scalars it is given.
pub fn msm_resident_bytes<G: DeviceGroup>(n: usize, tuning: MsmTuning) -> usize {
    bytes_of(|a| MsmScratch::new::<G, _>(a, n, tuning, false))
}

/// The device buffers of one MSM of `n` points with `tuning`
/// ([`msm_enqueue`], [`SharedTable`]): the sort's; the all-windows bucket
/// table (row w holds window w's buckets, zeroed once: every bucket is
/// written by its window's accumulation or stays the identity; a
/// [`SharedTable`]'s rows take each sort's buckets through `part`); the
/// accumulation levels;
/// every window's segment sums (reduced once at the end, no per-window
/// wait); the reduced window sums.
struct MsmScratch<M: Mem = Dev> {
    sort: SortBuffers<M>,
    /// A second set of the sort's buffers where the tuning sorts beside the
    /// accumulation ([`MsmTuning::sort`]; not in a [`SharedTable`],
    /// whose chunks sort one after another): windows use the two in turn.
    sort_beside: Option<SortBuffers<M>>,
    buckets: M::Buf<u64>,
    /// A [`SharedTable`]'s: one window's buckets of one sort, added into
    /// the table's row once accumulated.
    part: Option<M::Buf<u64>>,
    levels: Levels<M>,
    seg_out: M::Buf<u64>,
    sums: M::Buf<u64>,
}

impl<M: Mem> MsmScratch<M> {
    /// For sorts of up to `n` points; `shared`: with a [`SharedTable`]'s row.
    fn new<G: DeviceGroup, A: Arena<M = M>>(a: &mut A, n: usize, tuning: MsmTuning, shared: bool) -> Result<Self> {
        let MsmTuning { points_per_thread: k, block, .. } = tuning;
        let (nb, windows) = (tuning.buckets(), tuning.windows());
        let segments = (nb - 1).div_ceil(SEGMENT) as usize;
        Ok(MsmScratch {
            sort: SortBuffers::new(a, n, nb, k, windows)?,
            // No rows of counts of its own (one unused element): it scans
            // the histograms in `sort`'s.
            sort_beside: if tuning.sorts_beside() && !shared { Some(SortBuffers::new(a, n, nb, k, 0)?) } else { None },
            buckets: a.zeros::<u64>(G::XYZZ_WORDS * nb as usize * windows as usize, "alloc buckets")?,
            part: if shared { Some(a.zeros::<u64>(G::XYZZ_WORDS * nb as usize, "alloc a sort's bucket row")?) } else { None },
            levels: Levels::new::<G, A>(a, n.div_ceil(k as usize), block)?,
            seg_out: a.zeros::<u64>(G::XYZZ_WORDS * windows as usize * segments, "alloc segment sums")?,
            sums: a.zeros::<u64>(G::JAC_WORDS * windows as usize, "alloc reduce output")?,
        })
    }
}

/// The device buffers [`chunked_fold`] uploads `n` bases through, chunks of
/// `chunk` points (exactly: [`chunk_points`] of the chunk bytes, or a ramp's
/// largest chunk, [`ramp_most`], which need not be a power of two): one
/// chunk, or two when there are several (the next chunk's upload overlaps
/// the computation on the last).
struct ChunkBuffers<M: Mem = Dev> {
    bufs: Vec<M::Buf<u64>>,
}

impl<M: Mem> ChunkBuffers<M> {
    fn new<G: DeviceGroup, A: Arena<M = M>>(a: &mut A, n: usize, chunk: usize, what: &str) -> Result<Self> {
        let words = G::Affine::WORDS;
        let mut bufs = vec![a.zeros::<u64>(words * n.min(chunk), what)?];
        if n > chunk {
            bufs.push(a.zeros::<u64>(words * chunk, what)?);
        }
        Ok(ChunkBuffers { bufs })
    }
}

/// Device bytes of the chunk buffers for `n` bases in chunks of
/// `chunk_bytes` ([`ChunkBuffers`]).
pub(super) fn chunk_buffers_bytes<G: DeviceGroup>(n: usize, chunk_bytes: usize) -> usize {
    chunk_buffers_points_bytes::<G>(n, chunk_points::<G>(chunk_bytes))
}

/// Device bytes of the chunk buffers for `n` bases in chunks of `most`
/// points ([`ChunkBuffers`]).
fn chunk_buffers_points_bytes<G: DeviceGroup>(n: usize, most: usize) -> usize {
    bytes_of(|a| ChunkBuffers::new::<G, _>(a, n, most, "chunk buffers"))
}

/// Device bytes [`msm_device_scalars`] holds at once for `n` bases beside
/// the scalars: the chunk buffers and one chunk's MSM buffers.
pub fn msm_chunked_bytes<G: DeviceGroup>(n: usize, chunk_bytes: usize) -> usize {
    let m = n.min(chunk_points::<G>(chunk_bytes));
    chunk_buffers_bytes::<G>(n, chunk_bytes) + msm_resident_bytes::<G>(m, MsmTuning::for_points(m))
}

/// Σ scalars[i]·bases[i] for i < n with both on the device: `d_bases` holds
/// at least n affine points (`G::Affine::WORDS` u64 words each, blst's
/// layout, Montgomery form, infinity all zero), `d_scalars` at least 4·n
/// words (Montgomery form; overwritten: recoded in place by msm_recode), n <
/// 2^31 (the sort keeps a digit's sign in bit 31 of the index). With `profile`,
/// every launch is followed by a stream synchronisation and timed into it.
/// Errors: a CUDA error (allocation, launch or copy) naming the call.
pub fn msm_resident<G: DeviceGroup>(
    gpu: &Exec,
    d_bases: &CudaView<'_, u64>,
    n: usize,
    d_scalars: &mut CudaViewMut<'_, u64>,
    tuning: MsmTuning,
    mut profile: Option<&mut MsmProfile>,
) -> Result<G::Projective> {
    let Some(sums) = msm_enqueue::<G>(gpu, d_bases, n, d_scalars, tuning, profile.as_deref_mut())? else {
        return Ok(G::Projective::identity());
    };
    sums.finish_timed::<G>(gpu, profile)
}

/// [`msm_resident`]'s launches, its window sums left on the device (`None`
/// for n = 0): nothing waits for the device, so the caller may enqueue the
/// next MSM's inputs first ([`msm_many`]). The buffers it allocates are
/// freed in stream order.
fn msm_enqueue<G: DeviceGroup>(
    gpu: &Exec,
    d_bases: &CudaView<'_, u64>,
    n: usize,
    d_scalars: &mut CudaViewMut<'_, u64>,
    tuning: MsmTuning,
    profile: Option<&mut MsmProfile>,
) -> Result<Option<WindowSums>> {
    tuning.check();
    if n == 0 {
        return Ok(None);
    }
    let mut clock = Clock::new(gpu, profile);
    let mut scratch = MsmScratch::new::<G, _>(&mut OnDevice(gpu), n, tuning, false)?;
    add_windows::<G>(gpu, &mut scratch, d_bases, n, d_scalars, tuning, &mut clock)?;
    window_sums::<G>(gpu, scratch, tuning, &mut clock).map(Some)
}

/// Times the launches since its last mark into one field of an MSM's
/// profile, where there is one (a stream synchronisation per mark).
struct Clock<'p> {
    gpu: &'p Exec,
    profile: Option<&'p mut MsmProfile>,
    since: std::time::Instant,
}

impl<'p> Clock<'p> {
    fn new(gpu: &'p Exec, profile: Option<&'p mut MsmProfile>) -> Self {
        Clock { gpu, profile, since: std::time::Instant::now() }
    }

    /// Whether the launches are timed one by one.
    fn profiling(&self) -> bool {
        self.profile.is_some()
    }

    fn mark(&mut self, field: fn(&mut MsmProfile) -> &mut f64) -> Result<()> {
        if let Some(p) = self.profile.as_deref_mut() {
            self.gpu.stream.synchronize().map_err(cuda_err("synchronize (MSM profile)"))?;
            *field(p) += self.since.elapsed().as_secs_f64() * 1e3;
            self.since = std::time::Instant::now();
        }
        Ok(())
    }
}

/// Adds Σ scalars[i]·bases[i] for i < n into `scratch`'s bucket table, by
/// window: recodes the n scalars in place, sorts them by digit once per
/// window and accumulates each window's buckets into its row of the table
/// (cuda/msm.cu). `scratch` holds the sort of at least n points, its
/// counts zero (a [`SharedTable`] zeroes them between its sorts).
fn add_windows<G: DeviceGroup>(
    gpu: &Exec,
    scratch: &mut MsmScratch,
    d_bases: &CudaView<'_, u64>,
    n: usize,
    d_scalars: &mut CudaViewMut<'_, u64>,
    tuning: MsmTuning,
    clock: &mut Clock<'_>,
) -> Result<()> {
    assert!(d_scalars.len() >= 4 * n && d_bases.len() >= G::Affine::WORDS * n, "msm: n vs device buffers");
    assert!(n < 1 << 31, "msm: {n} points, the sort's indices hold fewer than 2^31");
    assert!(scratch.sort.idx.len() >= n, "msm: {n} points, a sort of {}", scratch.sort.idx.len());
    let MsmTuning { window_bits: c, points_per_thread: k, .. } = tuning;
    let (nb, windows) = (tuning.buckets(), tuning.windows());
    let threads = n.div_ceil(k as usize);
    let MsmScratch { sort, sort_beside, buckets, part, levels, .. } = scratch;

    // SAFETY: d_scalars holds n scalars (asserted).
    unsafe { launch::msm_recode(gpu, grid(n), d_scalars, n, c) }?;
    clock.mark(|p| &mut p.convert_ms)?;

    let row = G::XYZZ_WORDS * nb as usize;
    let scalars = d_scalars.as_view();
    // SAFETY: n scalars; counts holds windows rows of nb counters.
    unsafe { launch::msm_histogram(gpu, grid(n), &scalars, n, c, nb, &mut sort.counts) }?;
    clock.mark(|p| &mut p.histogram_ms)?;

    if let (Some(second), None, false) = (sort_beside.as_mut(), part.as_ref(), clock.profiling()) {
        // Without a second stream the windows sort in turn, as where the
        // tuning says so (the second set then goes unused).
        match gpu.beside(tuning.sort == super::tuning::WindowSort::BesideFirst) {
            Ok(side) => return sort_beside_accumulation::<G>(gpu, &side, d_bases, &d_scalars.as_view(), n, tuning, [sort, second], levels, buckets, row),
            Err(e) => tracing::debug!(error = %e, "MSM: no second stream for the sort; the windows sort in turn"),
        }
    }
    let mut mark = |field: fn(&mut MsmProfile) -> &mut f64| clock.mark(field);
    for w in 0..windows {
        sort.sort_window(gpu, None, &d_scalars.as_view(), n, c, k, w)?;
        mark(|p| &mut p.sort_ms)?;

        let mut bucket_row = buckets.slice_mut(w as usize * row..(w as usize + 1) * row);
        match part.as_mut() {
            None => accumulate_sorted::<G>(gpu, d_bases, &sort.sorted(), k, threads, levels, &mut bucket_row, &mut mark)?,
            Some(part) => {
                // A shared table's row holds earlier sorts' buckets: this
                // sort's go to a row of identities first, then are added in.
                gpu.stream.memset_zeros(part).map_err(cuda_err("zero a sort's bucket row"))?;
                accumulate_sorted::<G>(gpu, d_bases, &sort.sorted(), k, threads, levels, &mut part.slice_mut(..), &mut mark)?;
                // SAFETY: both rows hold nb points.
                unsafe { launch::add_tables::<G>(gpu, grid(nb as usize), &mut bucket_row, &*part, nb as usize) }?;
                mark(|p| &mut p.fixup_ms)?;
            }
        }
    }
    Ok(())
}

/// [`add_windows`]'s windows with each window's sort on `side`, a second
/// stream ([`Exec::beside`]), while the window before it accumulates on the
/// call's stream: window w sorts into set w % 2 and accumulates into row w of
/// `buckets` (`row` words each). The order of the launches
/// is the order of the buffers' uses: window w + 1's sort is enqueued after
/// window w − 1's accumulation (the last reader of the same buffers) and
/// before window w's, so cudarc's events make the sort wait for that
/// reader, and window w's accumulation for its own sort; the scalars'
/// recoding and histograms are on the call's stream before any sort.
#[allow(clippy::too_many_arguments)]
fn sort_beside_accumulation<G: DeviceGroup>(
    gpu: &Exec,
    side: &Exec,
    d_bases: &CudaView<'_, u64>,
    scalars: &CudaView<'_, u64>,
    n: usize,
    tuning: MsmTuning,
    [first, second]: [&mut SortBuffers; 2],
    levels: &mut Levels,
    buckets: &mut CudaSlice<u64>,
    row: usize,
) -> Result<()> {
    let MsmTuning { window_bits: c, points_per_thread: k, .. } = tuning;
    let windows = tuning.windows();
    let threads = n.div_ceil(k as usize);
    // Window w's sort on the side stream into set w % 2; both sets scan
    // the histograms in the first set's counts (row w).
    let sort = |w: u32, first: &mut SortBuffers, second: &mut SortBuffers| -> Result<()> {
        if w % 2 == 0 {
            first.sort_window(side, None, scalars, n, c, k, w)
        } else {
            second.sort_window(side, Some(&first.counts), scalars, n, c, k, w)
        }
    };
    let mut no_marks = |_: fn(&mut MsmProfile) -> &mut f64| Ok(());
    let mut windows_enqueued = || -> Result<()> {
        sort(0, first, second)?;
        for w in 0..windows {
            if w + 1 < windows {
                sort(w + 1, first, second)?;
            }
            let set = if w % 2 == 0 { &*first } else { &*second };
            let mut bucket_row = buckets.slice_mut(w as usize * row..(w as usize + 1) * row);
            accumulate_sorted::<G>(gpu, d_bases, &set.sorted(), k, threads, levels, &mut bucket_row, &mut no_marks)?;
        }
        Ok(())
    };
    let enqueued = windows_enqueued();
    // The call's stream waits for everything the side stream was given,
    // whether or not every window was enqueued: its later work and its
    // frees then need no event of a buffer to stand for the side stream.
    let joined = gpu.stream.join(&side.stream).map_err(cuda_err("join the MSM's sort stream"));
    enqueued.and(joined)
}

/// Σ_d d·B_d of every window of `scratch`'s bucket table, by segments, and
/// their reduction to one Jacobian point per window, left on the device.
fn window_sums<G: DeviceGroup>(gpu: &Exec, scratch: MsmScratch, tuning: MsmTuning, clock: &mut Clock<'_>) -> Result<WindowSums> {
    let (nb, windows) = (tuning.buckets(), tuning.windows());
    let segments = (nb - 1).div_ceil(SEGMENT);
    let MsmScratch { buckets, mut seg_out, mut sums, .. } = scratch;
    // SAFETY: reads windows rows of nb buckets, writes windows·segments points, seg_out's size.
    unsafe { launch::msm_bucket_segments::<G>(gpu, grid((windows * segments) as usize), &buckets, nb, SEGMENT, segments, windows, &mut seg_out) }?;
    clock.mark(|p| &mut p.segments_ms)?;
    reduce_on_device::<G>(gpu, &seg_out, segments as usize, windows as usize, &mut sums)?;
    Ok(WindowSums { sums, c: tuning.window_bits })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// At porep-32g's H with 768 MiB chunks, a streamed key's chunks share
    /// one table of c = 20 (13 windows) within the H budget; vectors of one
    /// chunk, a budget of one chunk's MSM and chunks too small for the
    /// table's buckets keep one MSM per chunk.
    #[test]
    fn a_shared_table_takes_the_whole_msms_windows_where_it_fits() {
        let chunk_bytes = crate::config::GPU_CHUNK_DEFAULT;
        let h = (1usize << 27) - 1;
        let t = shared_table_tuning::<G1>(h, chunk_bytes, h_msm_budget(h, chunk_bytes)).expect("fits the H budget");
        assert_eq!((t.window_bits, t.windows()), (20, 13));
        assert_eq!(shared_table_tuning::<G1>(h, chunk_bytes, msm_chunked_bytes::<G1>(h, chunk_bytes)), None, "beside the batch additions");
        let chunk = chunk_points::<G1>(chunk_bytes);
        assert_eq!(shared_table_tuning::<G1>(chunk, chunk_bytes, usize::MAX), None, "one chunk");
        assert_eq!(shared_table_tuning::<G1>(chunk + 1, chunk_bytes, usize::MAX), None, "c = 17 for 2^23 + 1 points, as one chunk's");
        assert_eq!(shared_table_tuning::<G1>(4 * chunk, chunk_bytes, usize::MAX).map(|t| t.window_bits), Some(18));
        // 256 MiB chunks (2^21 points) would put 4 points in a bucket of c = 20.
        assert_eq!(shared_table_tuning::<G1>(h, 256 << 20, usize::MAX), None, "too few points per bucket");
        // The staging-ahead estimate counts the table where it is taken.
        let budget = h_msm_budget(h, chunk_bytes);
        let table = h_msm_streamed_bytes(h, chunk_bytes, true, false, budget);
        assert_eq!(table, chunk_buffers_bytes::<G1>(h, chunk_bytes) + shared_table_bytes::<G1>(chunk, t));
        assert!(table > msm_chunked_bytes::<G1>(h, chunk_bytes) && table <= budget);
        assert_eq!(h_msm_streamed_bytes(h, chunk_bytes, false, false, budget), msm_chunked_bytes::<G1>(h, chunk_bytes));
        // The ramp at porep-32g: chunks up to 2^25 − 2^17 points within the H
        // budget (and so within the peak: the budget is the quotient's b and
        // c); 2^25 would exceed it by 12 MB. Its buffers hold exactly that.
        let most = ramp_most::<G1>(h, chunk_bytes, t, budget);
        assert_eq!(most, 4 * chunk - chunk / RAMP_STEPS, "ramp bytes {} against {budget}", table_bytes::<G1>(h, 4 * chunk, t));
        assert!(table_bytes::<G1>(h, 4 * chunk, t) > budget);
        assert_eq!(chunk_buffers_points_bytes::<G1>(h, most), 2 * 96 * most, "two buffers of 2^25 − 2^17 points");
        assert!(ramp_spans(h, chunk, most).iter().all(|&(_, len)| len <= most));
        assert_eq!(ramp_most::<G1>(h, chunk_bytes, t, table_bytes::<G1>(h, 2 * chunk, t)), 2 * chunk, "a budget of 2^24-point chunks");
        assert_eq!(ramp_most::<G1>(h, chunk_bytes, t, table_bytes::<G1>(h, 2 * chunk, t) - 1), 2 * chunk - chunk / RAMP_STEPS);
        // Beside a budget of one table over chunks, no ramp.
        assert_eq!(ramp_most::<G1>(h, chunk_bytes, t, table), chunk);
        // Where n stops the ramp short of its cap, the buffers are its longest span's.
        assert_eq!(ramp_most::<G1>(4 * chunk + 77, chunk_bytes, t, usize::MAX), 2 * chunk, "spans k, 2k, k + 77");
        assert_eq!(ramp_most::<G1>(8 * chunk + 77, chunk_bytes, t, usize::MAX), 4 * chunk, "spans k, 2k, 4k, k + 77");
        assert_eq!(ramp_most::<G1>(2 * chunk, chunk_bytes, t, usize::MAX), chunk, "spans k, k: no ramp");
    }

    /// The premise of the GPU test `gpu_msm_chunks_sharing_one_bucket_table_match_cpu`
    /// (96 MiB chunks, 2^22 + 77 points): unbounded, the ramp's largest chunk
    /// is 2^21 points; a byte short of that, 2^21 − 2^14, in the spans the
    /// test names; below 768 MiB chunks porep-32g's H takes no table.
    #[test]
    fn the_gpu_tests_budget_shrinks_its_ramp_to_a_non_power_of_two() {
        let (n, chunk_bytes) = ((1usize << 22) + 77, 96usize << 20);
        let t = shared_table_tuning::<G1>(n, chunk_bytes, usize::MAX).expect("the table");
        assert_eq!(ramp_most::<G1>(n, chunk_bytes, t, usize::MAX), 1 << 21);
        let short = h_msm_streamed_bytes(n, chunk_bytes, true, true, usize::MAX) - 1;
        assert_eq!(shared_table_tuning::<G1>(n, chunk_bytes, short), Some(t), "the table within the short budget");
        let most = ramp_most::<G1>(n, chunk_bytes, t, short);
        assert_eq!(most, (1 << 21) - (1 << 14));
        let lens: Vec<usize> = ramp_spans(n, 1 << 20, most).iter().map(|&(_, l)| l).collect();
        assert_eq!(lens, [1 << 20, (1 << 21) - (1 << 14), (1 << 20) + (1 << 14) + 77]);
        let h = (1usize << 27) - 1;
        for mib in [384usize, 512, 767] {
            assert_eq!(shared_table_tuning::<G1>(h, mib << 20, h_msm_budget(h, mib << 20)), None, "{mib} MiB chunks: 2^22 points, under 16 per bucket");
        }
        assert!(shared_table_tuning::<G1>(h, 768 << 20, h_msm_budget(h, 768 << 20)).is_some());
    }

    #[test]
    fn a_ramp_doubles_its_chunks_and_covers_the_points() {
        let k = 1usize << 23;
        let h = (1usize << 27) - 1;
        let lens: Vec<usize> = ramp_spans(h, k, 4 * k).iter().map(|&(_, l)| l).collect();
        assert_eq!(&lens[..4], &[k, 2 * k, 4 * k, 4 * k]);
        assert_eq!(lens.iter().sum::<usize>(), h);
        for (n, most) in [(1, k), (k, 4 * k), (k + 1, 2 * k), (7 * k, 4 * k), (7 * k + 5, 4 * k), (h, k)] {
            let spans = ramp_spans(n, k, most);
            let mut next = 0;
            for (i, &(first, len)) in spans.iter().enumerate() {
                assert_eq!(first, next, "n {n}: consecutive");
                assert!(len > 0 && len <= most && (i == 0 || len <= 2 * spans[i - 1].1), "n {n}: span {i} of {len}");
                next += len;
            }
            assert_eq!(next, n, "n {n}: covered");
        }
    }

    /// The H-MSM over the resident key stays within its budget, and its step
    /// (the domain's coefficients beside it) within admission's peak
    /// ([`compute_peak_bytes`](super::super::stage::compute_peak_bytes)): at
    /// porep-32g's H (2^27 − 1 points, 768 MiB chunks) one MSM of 2^27 points
    /// (c = 20) instead of sixteen of 2^23 (c = 17). Other MSMs over
    /// resident bases stay within the chunked MSM's bytes.
    #[test]
    fn resident_msms_stay_within_their_budget() {
        use super::super::stage::{compute_peak_bytes, KeyShape};
        let chunk_bytes = crate::config::GPU_CHUNK_DEFAULT;
        let h = (1usize << 27) - 1;
        assert_eq!(resident_msm_points::<G1>(h, chunk_bytes, h_msm_budget(h, chunk_bytes)), 1 << 27);
        assert_eq!(MsmTuning::for_points(1 << 27).window_bits, 20);
        assert!(MsmTuning::for_points(1 << 27).sorts_beside() && !MsmTuning::for_points(chunk_points::<G1>(chunk_bytes)).sorts_beside());
        // Pieces are sized as their largest, a power of two, and a shorter
        // remainder runs at its own tuning: where K, c or the sort change
        // (2^22, 2^24, 2^26 points), the remainder's bytes stay within.
        for lg in [22, 24, 26, 27] {
            for m in [(1usize << lg) - 1, (1 << lg) - (1 << (lg - 3))] {
                assert!(msm_resident_bytes::<G1>(m, MsmTuning::for_points(m)) <= msm_resident_bytes::<G1>(1 << lg, MsmTuning::for_points(1 << lg)), "G1, {m} points");
                assert!(msm_resident_bytes::<G2>(m, MsmTuning::for_points(m)) <= msm_resident_bytes::<G2>(1 << lg, MsmTuning::for_points(1 << lg)), "G2, {m} points");
            }
        }
        for n in [1usize, 1000, 1 << 20, (1 << 23) + 1, 1 << 25, 130_169_893, h] {
            for chunk_bytes in [1 << 20, 16 << 20, chunk_bytes] {
                let chunk = chunk_points::<G1>(chunk_bytes);
                for budget in [msm_chunked_bytes::<G1>(n, chunk_bytes), h_msm_budget(n, chunk_bytes)] {
                    let points = resident_msm_points::<G1>(n, chunk_bytes, budget);
                    assert!(points >= chunk && points.is_power_of_two(), "n {n}: {points}");
                    let m = points.min(n);
                    assert!(points == chunk || msm_resident_bytes::<G1>(m, MsmTuning::for_points(m)) <= budget, "n {n}, chunk {chunk_bytes}: {points} points exceed {budget} B");
                }
                // The H step within the peak of a key whose h has n points.
                let domain = (n + 1).next_power_of_two();
                let key = KeyShape { h: n, ..KeyShape::default() };
                let settings = crate::config::Settings { gpu_chunk: chunk_bytes, ..crate::config::Settings::default() };
                let peak = compute_peak_bytes(domain, &key, &settings);
                assert!(32 * domain + h_msm_resident_bytes(n, chunk_bytes) <= peak, "n {n}, chunk {chunk_bytes}: the H step exceeds the peak {peak}");
                // Over a streamed key, a shared table (chunk buffers and its MSM) within the H budget, so within the peak.
                let budget = h_msm_budget(n, chunk_bytes);
                if let Some(t) = shared_table_tuning::<G1>(n, chunk_bytes, budget) {
                    let table = table_bytes::<G1>(n, chunk, t);
                    assert!(table <= budget && 32 * domain + table <= peak, "n {n}, chunk {chunk_bytes}: a shared table of {table} B");
                }
            }
        }
    }

    /// A ramp's chunk buffers hold exactly its largest chunk, which need not
    /// be a power of two (porep-32g's H: 2^25 − 2^17 points), and are
    /// counted as allocated: every span fits them (else `uploaded_fold`
    /// panics), the H step stays within admission's peak, over shapes,
    /// chunk sizes and budgets.
    #[test]
    fn a_ramps_buffers_hold_its_spans_and_are_counted_exactly() {
        use super::super::stage::{compute_peak_bytes, KeyShape};
        let point = 8 * <blstrs::G1Affine as Limbs>::WORDS;
        for chunk_bytes in [1usize, 6144, 96 << 10, 96 << 20, 256 << 20, crate::config::GPU_CHUNK_DEFAULT, 2048 << 20] {
            let chunk = chunk_points::<G1>(chunk_bytes);
            let mut ns = vec![chunk + 1, 2 * chunk + 1, 3 * chunk, 4 * chunk + 77, 7 * chunk + 5, 8 * chunk + 77, 16 * chunk - 1];
            ns.extend([(1usize << 22) + 77, (1 << 24) - 1, (1 << 26) - 1, (1 << 27) - 1].into_iter().filter(|&n| n > chunk));
            for n in ns {
                let t = MsmTuning::for_table(n, chunk);
                let (lo, hi) = (table_bytes::<G1>(n, chunk, t), table_bytes::<G1>(n, 4 * chunk, t));
                let mut budgets: Vec<usize> = (0..=20).map(|i| lo + hi.saturating_sub(lo) * i / 20).collect();
                budgets.extend([lo.saturating_sub(1), h_msm_budget(n, chunk_bytes), usize::MAX]);
                for budget in budgets {
                    let m = ramp_most::<G1>(n, chunk_bytes, t, budget);
                    assert!(m == chunk || (m > chunk && m < n && m <= 4 * chunk && table_bytes::<G1>(n, m, t) <= budget), "n {n}, chunk {chunk}, budget {budget}: {m}");
                    assert_eq!(chunk_buffers_points_bytes::<G1>(n, m), point * if n > m { 2 * m } else { n }, "n {n}: buffers of exactly {m} points");
                    let spans = ramp_spans(n, chunk, m);
                    assert!(spans.iter().all(|&(_, len)| len <= m) && spans.iter().map(|s| s.1).sum::<usize>() == n, "n {n}: spans of {m}");
                }
                let domain = (n + 1).next_power_of_two();
                let settings = crate::config::Settings { gpu_chunk: chunk_bytes, ..crate::config::Settings::default() };
                let peak = compute_peak_bytes(domain, &KeyShape { h: n, ..KeyShape::default() }, &settings);
                let budget = h_msm_budget(n, chunk_bytes);
                assert!(32 * domain + h_msm_streamed_bytes(n, chunk_bytes, true, true, budget) <= peak, "n {n}, chunk {chunk_bytes}: the ramp's H step exceeds the peak");
            }
        }
    }
}
