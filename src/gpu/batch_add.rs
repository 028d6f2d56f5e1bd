//! Batch addition on the GPU (cuda/batch_add.cu): Σ of the bases whose bit
//! is set, for the L, A and B queries' density-selected parts, for all
//! circuits of a call in one pass over the bases.

use cudarc::driver::CudaView;
use group::Group;

use super::device::cuda_err;
use super::exec::{grid, Exec};
use super::kernels::launch;
use super::msm::{chunk_buffers_bytes, chunk_points, chunked_fold, reduce, DeviceGroup};
use super::workspace::{bytes_of, Arena, Dev, Mem, OnDevice};
use crate::error::Result;

/// Partial sums a pass aims for over all its circuits: about five waves of
/// the H200's 132 SMs at the kernels' occupancy (two to four blocks of 128
/// per SM), so that a one-circuit pass fills the device as a 16-circuit
/// pass does.
const TARGET_SLOTS: usize = 1 << 18;

/// Reduction blocks of a pass over all its circuits: each circuit's partial
/// sums are reduced in `REDUCE_BLOCKS / circuits` groups (on one block
/// each), not all by one block, and the host adds the groups' sums.
const REDUCE_BLOCKS: usize = 256;

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

/// How one chunk of `len` bases is cut for `circuits` circuits: bases per
/// thread (a multiple of 64, 64 to 256, so that each circuit has about
/// [`TARGET_SLOTS`] / `circuits` threads), threads per circuit, reduction
/// groups per circuit, and partial-sum slots per circuit (the threads
/// rounded up to whole groups; the first chunk writes the identity past
/// its threads). A vector's later chunks are cut like its first (they are
/// no longer), so their threads fit its slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Layout {
    chunk: usize,
    threads: usize,
    groups: usize,
    slots: usize,
}

impl Layout {
    fn new(len: usize, circuits: usize) -> Layout {
        let chunk = (len * circuits / TARGET_SLOTS / 64 * 64).clamp(64, 256);
        let threads = len.div_ceil(chunk);
        let groups = (REDUCE_BLOCKS / circuits).clamp(1, threads.max(1));
        Layout { chunk, threads, groups, slots: threads.div_ceil(groups) * groups }
    }
}

/// The device buffers of one pass of `circuits` circuits over `n` bases
/// cut as `layout`: the bitmaps (`words` each, side by side), the partial
/// sums (`slots` per circuit) and the reduced points (`groups` per
/// circuit). The chunk buffers are [`chunked_fold`]'s.
struct PassScratch<M: Mem = Dev> {
    bits: M::Buf<u64>,
    partials: M::Buf<u64>,
    out: M::Buf<u64>,
}

impl<M: Mem> PassScratch<M> {
    fn new<G: DeviceGroup, A: Arena<M = M>>(a: &mut A, n: usize, circuits: usize, layout: Layout) -> Result<Self> {
        Ok(PassScratch {
            bits: a.zeros::<u64>(circuits * n.div_ceil(64), "alloc batch-add bitmaps")?,
            partials: a.zeros::<u64>(G::XYZZ_WORDS * layout.slots * circuits, "alloc batch-add partials")?,
            out: a.zeros::<u64>(G::JAC_WORDS * layout.groups * circuits, "alloc reduce output")?,
        })
    }
}

/// One layout for every chunk of `n` bases, from the first (the longest): a
/// shorter last chunk has fewer threads of the same length, within the slots.
fn pass_layout<G: DeviceGroup>(n: usize, circuits: usize, chunk_bytes: usize) -> Layout {
    Layout::new(n.min(chunk_points::<G>(chunk_bytes)), circuits)
}

fn one_pass<G: DeviceGroup>(gpu: &Exec, bases: &[G::Affine], bitmaps: &[&[u64]]) -> Result<Vec<G::Projective>> {
    let n = bases.len();
    let mut pass = Pass::<G>::new(gpu, n, bitmaps, pass_layout::<G>(n, bitmaps.len(), gpu.settings.gpu_chunk))?;
    let sums = chunked_fold::<G, Option<Vec<G::Projective>>>(
        gpu,
        bases,
        "upload batch-add bases",
        chunk_points::<G>(gpu.settings.gpu_chunk),
        None,
        |d_bases, first, len| pass.chunk(gpu, d_bases, first, len),
        |acc, part| *acc = part.or(acc.take()),
    )?;
    Ok(sums.expect("batch add: the last chunk reduces"))
}

/// [`batch_add_many`] of up to [`PASS_CIRCUITS`] bitmaps over `n` bases
/// already on the device (`d_bases`, blst's affine layout), in one chunk:
/// the kernels alone, for benchmarks.
#[cfg(any(test, feature = "tools"))]
pub fn batch_add_on_device<G: DeviceGroup>(gpu: &Exec, d_bases: &CudaView<'_, u64>, n: usize, bitmaps: &[&[u64]]) -> Result<Vec<G::Projective>> {
    use super::words::Limbs;
    assert!(n > 0 && d_bases.len() >= G::Affine::WORDS * n, "batch_add_on_device: {n} bases");
    assert!((1..=PASS_CIRCUITS).contains(&bitmaps.len()), "batch_add_on_device: {} circuits in one pass", bitmaps.len());
    let mut pass = Pass::<G>::new(gpu, n, bitmaps, Layout::new(n, bitmaps.len()))?;
    Ok(pass.chunk(gpu, d_bases, 0, n)?.expect("one chunk: it reduces"))
}

/// One pass's state: its bitmaps on the device, its layout and scratch.
struct Pass<G: DeviceGroup> {
    n: usize,
    circuits: usize,
    layout: Layout,
    scratch: PassScratch,
    _group: std::marker::PhantomData<G>,
}

impl<G: DeviceGroup> Pass<G> {
    /// For `n` bases cut in chunks no longer than the one `layout` was made for.
    fn new(gpu: &Exec, n: usize, bitmaps: &[&[u64]], layout: Layout) -> Result<Self> {
        let circuits = bitmaps.len();
        let words = n.div_ceil(64);
        let mut scratch = PassScratch::new::<G, _>(&mut OnDevice(gpu), n, circuits, layout)?;
        // The circuits' bitmaps side by side, `words` words each, each copied
        // from where it is (no host copy of them all first: 16 MB per
        // circuit at porep-32g, while the device waits).
        for (k, b) in bitmaps.iter().enumerate() {
            gpu.stream.memcpy_htod(&b[..words], &mut scratch.bits.slice_mut(k * words..(k + 1) * words)).map_err(cuda_err("upload batch-add bitmaps"))?;
        }
        Ok(Pass { n, circuits, layout, scratch, _group: std::marker::PhantomData })
    }

    /// The chunk of `len` bases at `d_bases` (bases first..first + len, in
    /// order: the first chunk overwrites the partial sums, later ones add
    /// to them); the last chunk reduces them and returns each circuit's sum.
    fn chunk(&mut self, gpu: &Exec, d_bases: &CudaView<'_, u64>, first: usize, len: usize) -> Result<Option<Vec<G::Projective>>> {
        let Layout { chunk, groups, slots, .. } = self.layout;
        let (n, circuits, words) = (self.n, self.circuits, self.n.div_ceil(64));
        assert!(len.div_ceil(chunk) <= slots, "batch add: a chunk of {len} bases past the layout's {slots} slots");
        let first_word = first / 64;
        let add = u32::from(first > 0);
        let PassScratch { bits, partials, out } = &mut self.scratch;
        // SAFETY: the kernel returns early past circuits × slots partials, the buffer's
        // size, and its threads of `chunk` bases cover the len bases (asserted above);
        // circuit k reads words [k·words + first_word, k·words + (first + len)/64],
        // inside `bits` (first is a multiple of 64, first + len ≤ n).
        unsafe {
            launch::batch_add::<G>(gpu, grid(slots * circuits), d_bases, &*bits, words, first_word, len, chunk, circuits, slots, add, partials)
        }?;
        // The last chunk reduces every chunk's partial sums (its download
        // waits for the stream while the bases, resident or uploaded, are
        // still held).
        if first + len < n {
            return Ok(None);
        }
        let sums = reduce::<G>(gpu, partials, slots / groups, circuits * groups, out)?;
        Ok(Some(sums.chunks_exact(groups).map(|g| g.iter().sum()).collect()))
    }
}

/// Device bytes [`batch_add_many`] holds at once for `n` bases and up to
/// `circuits` circuits per pass: the chunk buffers and a pass's
/// [`PassScratch`] (the most over passes of 1 to `circuits` circuits:
/// threads per circuit shrink as circuits grow).
pub fn batch_add_bytes<G: DeviceGroup>(n: usize, circuits: usize, chunk_bytes: usize) -> usize {
    let scratch = (1..=circuits.clamp(1, PASS_CIRCUITS))
        .map(|c| bytes_of(|a| PassScratch::new::<G, _>(a, n, c, pass_layout::<G>(n, c, chunk_bytes))))
        .max()
        .unwrap_or(0);
    chunk_buffers_bytes::<G>(n, chunk_bytes) + scratch
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each chunk's layout: bases per thread a multiple of 64 in 64..=256,
    /// every base in a thread, whole reduction groups, about TARGET_SLOTS
    /// partial sums per pass where the chunk is long enough.
    #[test]
    fn layouts_cover_the_chunk_in_whole_groups() {
        for circuits in 1..=PASS_CIRCUITS {
            for len in [1usize, 63, 64, 65, 1000, 1 << 16, (1 << 20) + 64, 127 << 18, 1 << 22, 1 << 23] {
                let l = Layout::new(len, circuits);
                assert!(l.chunk % 64 == 0 && (64..=256).contains(&l.chunk), "{l:?}");
                assert!(l.threads * l.chunk >= len && (l.threads - 1) * l.chunk < len, "{len}: {l:?}");
                assert!(l.slots % l.groups == 0 && l.slots >= l.threads && l.slots - l.threads < l.groups, "{l:?}");
                assert!(l.groups * circuits <= REDUCE_BLOCKS.max(circuits), "{l:?}");
                if len * circuits >= 256 * TARGET_SLOTS {
                    assert_eq!(l.chunk, 256, "{len} × {circuits}");
                } else if len * circuits >= 64 * TARGET_SLOTS {
                    assert!(l.threads * circuits >= TARGET_SLOTS / 2, "{len} × {circuits}: {l:?}");
                }
            }
        }
        // A porep-32g L chunk (2^23 bases): 64 bases per thread alone, 256 with 10 circuits.
        assert_eq!(Layout::new(1 << 23, 1).chunk, 64);
        assert_eq!(Layout::new(1 << 23, 10).chunk, 256);
    }
}
