//! The quotient polynomial on the GPU: the same transforms as the CPU
//! backend (`cpu::ntt`, with [`crate::curve`]'s roots), so results are identical field elements.
//! Radix-2 DIT: one bit-reversal pass, then the lg n butterfly stages in
//! passes of up to 10 stages held in shared memory (3 passes at 2^24).

use blstrs::Scalar;
use cudarc::driver::{CudaSlice, LaunchConfig};
use ff::Field;

use super::device::cuda_err;
use super::exec::{grid, Exec};
use super::kernels::{launch, NTT_TILE_LG};
use super::words::limbs;
use super::scalar_buf::ScalarBuf;
use crate::curve::root_of_unity;
use crate::error::Result;

/// Uploads a few scalars (kernel constants).
fn consts(gpu: &Exec, v: &[Scalar]) -> Result<CudaSlice<u64>> {
    gpu.upload(limbs(v), "upload constants")
}

/// log2 of the low table's length in [`PowerTables`].
const LG_LO: u32 = 10;
/// log2 of the adjacent columns a pass after the first takes per block: runs
/// of 4 scalars (128 bytes, one L2 line) per global access, or of 2 where
/// that saves a whole pass (2^19, 2^27: 9 stages per later pass instead of 8).
const NTT_LG_COLS: u32 = 2;
/// Threads per `fr_ntt_pass` block (a 2^10 tile has 512 butterflies per stage).
const NTT_THREADS: u32 = 256;

/// Device tables giving scale·base^i for i < len with one multiplication:
/// `lo[j] = scale·base^j` (j < 2^lg_lo) and `hi[k] = base^(k·2^lg_lo)`
/// (k < len / 2^lg_lo), 4 u64 words per scalar, Montgomery form.
struct PowerTables {
    lo: CudaSlice<u64>,
    hi: CudaSlice<u64>,
    lg_lo: u32,
}

/// `out[i] = scale·base^i` for i < len by one exponentiation per element
/// (only for the small tables).
fn powers_by_exponentiation(gpu: &Exec, base: Scalar, scale: Scalar, len: usize) -> Result<CudaSlice<u64>> {
    let mut out = gpu.zeros::<u64>(4 * len, "alloc power table")?;
    let c = consts(gpu, &[base, scale])?;
    // SAFETY: the buffers hold len and 2 scalars.
    unsafe { launch::fr_powers(gpu, grid(len), &mut out, &c, len) }?;
    Ok(out)
}

fn power_tables(gpu: &Exec, base: Scalar, scale: Scalar, len: usize) -> Result<PowerTables> {
    let lg_lo = LG_LO.min(len.max(1).next_power_of_two().trailing_zeros());
    let lo = powers_by_exponentiation(gpu, base, scale, 1 << lg_lo)?;
    let hi = powers_by_exponentiation(gpu, base.pow_vartime([1u64 << lg_lo]), Scalar::ONE, len.div_ceil(1 << lg_lo))?;
    Ok(PowerTables { lo, hi, lg_lo })
}

/// What `fr_ntt_pass` needs for the twiddles of one transform size and
/// direction (cuda/ntt.cu): `roots[i] = w_(2^NTT_TILE_LG)^i` for i <
/// 2^(NTT_TILE_LG−1) and power tables of the domain's root w (or w⁻¹) over
/// n/2 exponents. A few MiB at 2^27, where a full table of w^i would take 2 GiB.
pub struct Twiddles {
    roots: CudaSlice<u64>,
    tables: PowerTables,
}

impl Twiddles {
    pub fn new(gpu: &Exec, lg_n: u32, inverse: bool) -> Result<Self> {
        let inv = |w: Scalar| if inverse { w.invert().unwrap() } else { w };
        let roots = powers_by_exponentiation(gpu, inv(root_of_unity(NTT_TILE_LG)), Scalar::ONE, 1 << (NTT_TILE_LG - 1))?;
        let tables = power_tables(gpu, inv(root_of_unity(lg_n)), Scalar::ONE, ((1usize << lg_n) / 2).max(1))?;
        Ok(Twiddles { roots, tables })
    }

    /// Device bytes of the tables for a 2^lg_n transform.
    pub fn bytes(lg_n: u32) -> usize {
        let half = ((1usize << lg_n) / 2).max(1);
        let lg_lo = LG_LO.min(half.next_power_of_two().trailing_zeros());
        32 * ((1 << (NTT_TILE_LG - 1)) + (1 << lg_lo) + half.div_ceil(1 << lg_lo))
    }
}

/// Dynamic shared memory of one `fr_ntt_pass` block: the tile, and after the
/// first pass its twiddles and column factors (32 B per scalar).
fn ntt_shared_bytes(s0: u32, k: u32, lg_t: u32) -> u32 {
    let (tile, cols) = (1u32 << (k + lg_t), 1u32 << lg_t);
    32 * if s0 == 0 { tile } else { tile + (tile - cols) + k * cols }
}


/// `data[i] *= scale·base^i` for i < n.
pub fn mul_powers(gpu: &Exec, data: &mut CudaSlice<u64>, base: Scalar, scale: Scalar, n: usize) -> Result<()> {
    let t = power_tables(gpu, base, scale, n)?;
    // SAFETY: data holds n scalars and the tables cover every i < n.
    unsafe { launch::fr_mul_powers_tab(gpu, grid(n), data, &t.lo, &t.hi, t.lg_lo, n) }?;
    Ok(())
}

/// The passes of an NTT of 2^lg_n scalars, as (first stage s0, stages k,
/// log2 columns per block): the first pass takes whole tiles of contiguous
/// scalars, later passes 2^lg_t adjacent columns, with lg_t = NTT_LG_COLS
/// unless one column fewer needs fewer passes (each pass reads and writes
/// all the data once).
fn ntt_passes(lg_n: u32) -> Vec<(u32, u32, u32)> {
    let later = |lg_t: u32| lg_n.saturating_sub(NTT_TILE_LG).div_ceil(NTT_TILE_LG - lg_t);
    let lg_t_later = if later(NTT_LG_COLS - 1) < later(NTT_LG_COLS) { NTT_LG_COLS - 1 } else { NTT_LG_COLS };
    let mut passes = Vec::new();
    let mut s0 = 0;
    while s0 < lg_n {
        let lg_t = s0.min(lg_t_later);
        let k = (NTT_TILE_LG - lg_t).min(lg_n - s0);
        passes.push((s0, k, lg_t));
        s0 += k;
    }
    passes
}

/// In-place NTT of n = 2^lg_n scalars with the twiddles `tw` of w (or w⁻¹
/// for the inverse transform, unscaled): natural order in and out. A bit
/// reversal, then the lg_n radix-2 stages in passes of up to 10 stages each
/// in shared memory.
pub fn ntt(gpu: &Exec, data: &mut CudaSlice<u64>, tw: &Twiddles, lg_n: u32) -> Result<()> {
    let n = 1usize << lg_n;
    if n == 1 {
        return Ok(());
    }
    // SAFETY: data holds n scalars.
    unsafe { launch::fr_bit_reverse(gpu, grid(n), data, lg_n) }?;
    for (s0, k, lg_t) in ntt_passes(lg_n) {
        let tile = 1u32 << (k + lg_t);
        let cfg = LaunchConfig {
            grid_dim: ((n >> (k + lg_t)) as u32, 1, 1),
            block_dim: ((tile / 2).min(NTT_THREADS), 1, 1),
            shared_mem_bytes: ntt_shared_bytes(s0, k, lg_t),
        };
        let t = &tw.tables;
        // SAFETY: the blocks cover the n scalars exactly once (n / tile blocks of `tile`
        // scalars); roots holds 2^(NTT_TILE_LG-1) scalars and the power tables cover every
        // exponent below n/2; shared memory as the kernel lays it out, within
        // NTT_MAX_SHARED_BYTES.
        unsafe { launch::fr_ntt_pass(gpu, cfg, data, &tw.roots, &t.lo, &t.hi, t.lg_lo, lg_n, s0, k, lg_t) }?;
    }
    Ok(())
}

/// Uploads `v` into a new zero-padded device buffer of `n` scalars (4·n
/// words): the fallback path's phase-2 upload.
pub fn upload_padded(gpu: &Exec, v: &[Scalar], n: usize, what: &str) -> Result<CudaSlice<u64>> {
    let mut d = gpu.zeros::<u64>(4 * n, what)?;
    gpu.stream.memcpy_htod(limbs(v), &mut d.slice_mut(..4 * v.len())).map_err(cuda_err(what))?;
    Ok(d)
}

/// Device bytes [`quotient`] holds at its peak for a domain of n, with its
/// a, b, c uploaded (3 · 32 · n, on the fallback path; pre-staged, they are
/// counted in phase 1): the inputs, both directions' twiddles and one set of
/// coset power tables.
pub fn quotient_bytes(n: usize) -> usize {
    let lg_n = n.trailing_zeros();
    3 * 32 * n + 2 * Twiddles::bytes(lg_n) + 32 * ((1 << LG_LO) + n.div_ceil(1 << LG_LO)) + 32
}

/// See [`crate::backend::Compute::quotient`]. `input(k)` gives vector k
/// (a, b, c for k = 0, 1, 2) on the device: the evaluations zero-padded to
/// `n` scalars (4·n u64 words each, Montgomery form). It is asked for each
/// vector only once the transforms of the vectors before it are enqueued,
/// so an upload it starts on another stream overlaps them (the kernels
/// that read the vector wait for its write). The vectors are consumed right
/// after the pointwise step: b is handed to `spare` (which may keep its
/// buffer for the next circuit's a: the kernels that write it then wait
/// for the pointwise step's read), c is dropped (freed, or handed back to
/// the idle pre-stage list). Returns the n coefficients on the device, in
/// a's buffer.
pub fn quotient(gpu: &Exec, n: usize, mut input: impl FnMut(usize) -> Result<ScalarBuf>, spare: impl FnOnce(ScalarBuf)) -> Result<ScalarBuf> {
    let lg_n = n.trailing_zeros();
    let tw_fwd = Twiddles::new(gpu, lg_n, false)?;
    let tw_inv = Twiddles::new(gpu, lg_n, true)?;
    let g = crate::curve::COSET_GENERATOR;
    let n_inv = Scalar::from(n as u64).invert().unwrap();

    // Evaluations on the roots -> coefficients (·1/n folded into the coset
    // shift) -> evaluations on the coset g·<w>.
    let to_coset = |k: usize, input: &mut dyn FnMut(usize) -> Result<ScalarBuf>| -> Result<ScalarBuf> {
        let mut d = input(k)?;
        ntt(gpu, &mut d, &tw_inv, lg_n)?;
        mul_powers(gpu, &mut d, g, n_inv, n)?;
        ntt(gpu, &mut d, &tw_fwd, lg_n)?;
        Ok(d)
    };
    let mut da = to_coset(0, &mut input)?;
    {
        let db = to_coset(1, &mut input)?;
        let dc = to_coset(2, &mut input)?;
        let z_inv = (g.pow_vartime([n as u64]) - Scalar::ONE).invert().unwrap();
        let k = consts(gpu, &[z_inv])?;
        // SAFETY: a, b and c hold n scalars, k one.
        unsafe { launch::fr_quotient_pointwise(gpu, grid(n), &mut *da, &*db, &*dc, &k, n) }?;
        spare(db);
        // c is dropped here, right after the pointwise step.
    }
    ntt(gpu, &mut da, &tw_inv, lg_n)?;
    mul_powers(gpu, &mut da, g.invert().unwrap(), n_inv, n)?;
    Ok(da)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every stage is covered exactly once, in order, and no block exceeds the tile.
    #[test]
    fn ntt_passes_cover_every_stage_once() {
        for lg_n in 1..=27u32 {
            let passes = ntt_passes(lg_n);
            let mut next = 0;
            for &(s0, k, lg_t) in &passes {
                assert_eq!(s0, next, "lg_n {lg_n}: passes {passes:?}");
                assert!(k >= 1 && k + lg_t <= NTT_TILE_LG, "lg_n {lg_n}: {passes:?}");
                assert!(lg_t <= s0, "lg_n {lg_n}: columns beyond 2^s0 in {passes:?}");
                next = s0 + k;
            }
            assert_eq!(next, lg_n);
        }
        assert_eq!(ntt_passes(24), vec![(0, 10, 0), (10, 8, 2), (18, 6, 2)]);
        assert_eq!(ntt_passes(27), vec![(0, 10, 0), (10, 9, 1), (19, 8, 1)]);
        assert_eq!(ntt_passes(19), vec![(0, 10, 0), (10, 9, 1)]);
        assert_eq!(ntt_passes(8), vec![(0, 8, 0)]);
    }
}
