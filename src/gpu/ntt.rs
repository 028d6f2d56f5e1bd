//! The quotient polynomial on the GPU: the same transforms as the CPU
//! backend (`cpu::ntt`, with [`crate::curve`]'s roots), so results are identical field elements.
//! Radix-2 stages in passes of up to 10 held in shared memory (3 passes at
//! 2^24, cuda/ntt_pass.cuh): decimation in time from bit-reversed order
//! ([`ntt_bit_reversed_in`], or [`ntt`] after a bit reversal) and in
//! frequency from natural order ([`ntt_dif`]). The quotient pairs them so
//! that one bit reversal per circuit is left.

use blstrs::Scalar;
use cudarc::driver::{CudaSlice, CudaView, LaunchConfig};
use ff::Field;

use super::device::cuda_err;
use super::exec::{grid, Exec};
use super::kernels::{launch, NTT_TILE_LG};
use super::words::limbs;
use super::workspace::{bytes_of, Arena, Dev, Mem, OnDevice};
use super::scalar_buf::ScalarBuf;
use super::tuning::NttTuning;
use crate::curve::root_of_unity;
use crate::error::Result;

/// log2 of the low table's length in [`PowerTables`].
const LG_LO: u32 = 10;
/// log2 of the adjacent columns a pass after the first takes per block: runs
/// of 4 scalars (128 bytes, one L2 line) per global access, or of 2 where
/// that saves a whole pass (2^19, 2^27: 9 stages per later pass instead of 8).
const NTT_LG_COLS: u32 = 2;
/// The most threads of an NTT pass block, of any radix (a 2^10 tile has
/// 512 butterflies per stage: two per thread at radix 2).
const NTT_THREADS: u32 = 256;

/// Kernel constants, uploaded once before the kernels that read them: a
/// copy into the device from pageable memory between a call's kernels may
/// wait for the stream.
#[cfg(any(test, feature = "tools"))]
fn upload_consts(gpu: &Exec, v: &[Scalar]) -> Result<CudaSlice<u64>> {
    gpu.upload(limbs(v), "upload kernel constants")
}

/// Scalar i of a constants buffer, and the ones after it.
fn consts_from(consts: &CudaSlice<u64>, i: usize) -> CudaView<'_, u64> {
    consts.slice(4 * i..)
}

/// `out[i] = scale·base^i` for every scalar of `out`, by one exponentiation
/// per element (only for the small tables); `consts` starts with base, scale.
fn fill_powers(gpu: &Exec, out: &mut CudaSlice<u64>, consts: &CudaView<'_, u64>) -> Result<()> {
    let len = out.len() / 4;
    assert!(consts.len() >= 8, "fill_powers: two constants");
    // SAFETY: out holds len scalars, consts two (asserted).
    unsafe { launch::fr_powers(gpu, grid(len), out, consts, len) }
}

/// log2 of the low table's length for exponents below `len`.
fn lg_lo(len: usize) -> u32 {
    LG_LO.min(len.max(1).next_power_of_two().trailing_zeros())
}

/// Device tables giving scale·base^i for i < len with one multiplication:
/// `lo[j] = scale·base^j` (j < 2^lg_lo) and `hi[k] = base^(k·2^lg_lo)`
/// (k < len / 2^lg_lo), 4 u64 words per scalar, Montgomery form.
pub struct PowerTables<M: Mem = Dev> {
    lo: M::Buf<u64>,
    hi: M::Buf<u64>,
    lg_lo: u32,
}

/// Scalars of constants [`PowerTables::fill`] reads.
const POWER_TABLE_CONSTS: usize = 4;

impl<M: Mem> PowerTables<M> {
    /// The tables' buffers for exponents below `len`.
    fn new<A: Arena<M = M>>(arena: &mut A, len: usize) -> Result<Self> {
        let lg_lo = lg_lo(len);
        let lo = arena.zeros::<u64>(4 << lg_lo, "alloc power table")?;
        let hi = arena.zeros::<u64>(4 * len.max(1).div_ceil(1 << lg_lo), "alloc power table")?;
        Ok(PowerTables { lo, hi, lg_lo })
    }

    /// The constants that fill tables for exponents below `len` with
    /// scale·base^i.
    fn consts(len: usize, base: Scalar, scale: Scalar) -> [Scalar; POWER_TABLE_CONSTS] {
        [base, scale, base.pow_vartime([1u64 << lg_lo(len)]), Scalar::ONE]
    }
}

impl PowerTables {
    /// Fills the tables from their [`PowerTables::consts`] at `consts`.
    fn fill(&mut self, gpu: &Exec, consts: &CudaView<'_, u64>) -> Result<()> {
        fill_powers(gpu, &mut self.lo, &consts.slice(..8))?;
        fill_powers(gpu, &mut self.hi, &consts.slice(8..16))
    }

    /// `data[i] *= lo[i mod 2^lg_lo]·hi[i / 2^lg_lo]` for i < n (n within the tables).
    fn apply(&self, gpu: &Exec, data: &mut CudaSlice<u64>, n: usize) -> Result<()> {
        assert!(data.len() >= 4 * n && (self.hi.len() / 4) << self.lg_lo >= n, "power tables: {n} scalars");
        // SAFETY: data holds n scalars and the tables cover every i < n (asserted).
        unsafe { launch::fr_mul_powers_tab(gpu, grid(n), data, &self.lo, &self.hi, self.lg_lo, n) }
    }
}

/// `data[i] *= scale·base^i` for i < n.
#[cfg(any(test, feature = "tools"))]
pub fn mul_powers(gpu: &Exec, data: &mut CudaSlice<u64>, base: Scalar, scale: Scalar, n: usize) -> Result<()> {
    let consts = upload_consts(gpu, &PowerTables::<Dev>::consts(n, base, scale))?;
    let mut t = PowerTables::new(&mut OnDevice(gpu), n)?;
    t.fill(gpu, &consts.as_view())?;
    t.apply(gpu, data, n)
}

/// What the NTT pass kernels need for the twiddles of one transform size
/// and direction (cuda/ntt_pass.cuh): `roots[i] = w_(2^NTT_TILE_LG)^i` for i <
/// 2^(NTT_TILE_LG−1) and power tables of the domain's root w (or w⁻¹) over
/// n/2 exponents. A few MiB at 2^27, where a full table of w^i would take 2 GiB.
pub struct Twiddles<M: Mem = Dev> {
    roots: M::Buf<u64>,
    tables: PowerTables<M>,
}

/// Scalars of constants [`Twiddles::fill`] reads.
const TWIDDLE_CONSTS: usize = 2 + POWER_TABLE_CONSTS;

impl<M: Mem> Twiddles<M> {
    /// The buffers for a 2^lg_n transform.
    fn alloc<A: Arena<M = M>>(arena: &mut A, lg_n: u32) -> Result<Self> {
        let roots = arena.zeros::<u64>(4 << (NTT_TILE_LG - 1), "alloc NTT roots")?;
        let tables = PowerTables::new(arena, half(lg_n))?;
        Ok(Twiddles { roots, tables })
    }

    /// The constants that fill the twiddles of a 2^lg_n transform, forward
    /// or `inverse`.
    fn consts(lg_n: u32, inverse: bool) -> [Scalar; TWIDDLE_CONSTS] {
        let inv = |w: Scalar| if inverse { w.invert().unwrap() } else { w };
        let t = PowerTables::<M>::consts(half(lg_n), inv(root_of_unity(lg_n)), Scalar::ONE);
        [inv(root_of_unity(NTT_TILE_LG)), Scalar::ONE, t[0], t[1], t[2], t[3]]
    }
}

/// The exponents a 2^lg_n transform's power tables cover.
fn half(lg_n: u32) -> usize {
    ((1usize << lg_n) / 2).max(1)
}

impl Twiddles {
    /// The twiddles of a 2^lg_n transform, forward or `inverse`.
    #[cfg(any(test, feature = "tools"))]
    pub fn new(gpu: &Exec, lg_n: u32, inverse: bool) -> Result<Self> {
        let consts = upload_consts(gpu, &Twiddles::<Dev>::consts(lg_n, inverse))?;
        let mut tw = Twiddles::alloc(&mut OnDevice(gpu), lg_n)?;
        tw.fill(gpu, &consts.as_view())?;
        Ok(tw)
    }

    /// Fills the twiddles from their [`Twiddles::consts`] at `consts`.
    fn fill(&mut self, gpu: &Exec, consts: &CudaView<'_, u64>) -> Result<()> {
        fill_powers(gpu, &mut self.roots, &consts.slice(..8))?;
        self.tables.fill(gpu, &consts.slice(8..))
    }
}

/// Dynamic shared memory of one NTT pass block, of any radix or direction:
/// the tile, and after the first pass its twiddles and column factors (32 B
/// per scalar).
fn ntt_shared_bytes(s0: u32, k: u32, lg_t: u32) -> u32 {
    let (tile, cols) = (1u32 << (k + lg_t), 1u32 << lg_t);
    32 * if s0 == 0 { tile } else { tile + (tile - cols) + k * cols }
}


/// Launches the kernel of `tuning`'s radix among a pass's three (one
/// kernel per radix: cuda/ntt.cu's NTT_PASS_KERNELS), with the same arguments.
macro_rules! by_radix {
    ($tuning:expr, $r2:ident, $r4:ident, $r8:ident; $($arg:expr),* $(,)?) => {
        match $tuning.radix_lg {
            1 => launch::$r2($($arg),*),
            2 => launch::$r4($($arg),*),
            3 => launch::$r8($($arg),*),
            r => unreachable!("ntt: no kernel of radix 2^{r}"),
        }
    };
}

/// One NTT pass: (first stage s0, stages k, log2 columns per block lg_t).
type Pass = (u32, u32, u32);

/// The passes of an NTT of 2^lg_n scalars, as (first stage s0, stages k,
/// log2 columns per block): the first pass takes whole tiles of contiguous
/// scalars, later passes 2^lg_t adjacent columns, with lg_t = NTT_LG_COLS
/// unless one column fewer needs fewer passes (each pass reads and writes
/// all the data once).
fn ntt_passes(lg_n: u32) -> Vec<Pass> {
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

/// The stages of a pass's largest group: its k stages split into
/// ⌈k / radix_lg⌉ groups as even as they divide (cuda/ntt_pass.cuh's
/// `ntt_pass`; k = 10 at radix 8: 3, 3, 2, 2; k = 4: 2, 2).
fn largest_group(k: u32, radix_lg: u32) -> u32 {
    k.div_ceil(k.div_ceil(radix_lg))
}

/// The launch shape of one NTT pass over 2^lg_n scalars ([`ntt_passes`]) in
/// any of its kernels (`fr_ntt_pass`, `fr_ntt_pass_dif` and their radix-4 and
/// radix-8 kernels): one thread per scalar group of the pass's largest stage
/// groups ([`largest_group`]), at most [`NTT_THREADS`].
fn pass_config(lg_n: u32, (s0, k, lg_t): Pass, tuning: NttTuning) -> LaunchConfig {
    tuning.check();
    let tile = 1u32 << (k + lg_t);
    LaunchConfig {
        grid_dim: ((1usize << lg_n >> (k + lg_t)) as u32, 1, 1),
        block_dim: ((tile >> largest_group(k, tuning.radix_lg)).min(NTT_THREADS), 1, 1),
        shared_mem_bytes: ntt_shared_bytes(s0, k, lg_t),
    }
}

/// `data` (2^lg_n scalars) into bit-reversed order, in place.
pub fn bit_reverse(gpu: &Exec, data: &mut CudaSlice<u64>, lg_n: u32) -> Result<()> {
    if lg_n == 0 {
        return Ok(());
    }
    let n = 1usize << lg_n;
    assert!(data.len() >= 4 * n, "bit_reverse: 2^{lg_n} scalars");
    // SAFETY: data holds n scalars (asserted).
    unsafe { launch::fr_bit_reverse(gpu, grid(n), data, lg_n) }
}

/// In-place NTT of n = 2^lg_n scalars with the twiddles `tw` of w (or w⁻¹
/// for the inverse transform, unscaled): natural order in and out. A bit
/// reversal, then [`ntt_bit_reversed_in`].
#[cfg(any(test, feature = "tools"))]
pub fn ntt(gpu: &Exec, data: &mut CudaSlice<u64>, tw: &Twiddles, lg_n: u32, tuning: NttTuning) -> Result<()> {
    if lg_n == 0 {
        return Ok(());
    }
    bit_reverse(gpu, data, lg_n)?;
    ntt_bit_reversed_in(gpu, data, tw, lg_n, tuning)
}

/// In-place NTT of n = 2^lg_n scalars in bit-reversed order (as
/// [`ntt_dif`] leaves them), natural order out: the lg_n radix-2 DIT
/// stages in passes of up to 10 stages each in shared memory, in groups of
/// up to `tuning.radix_lg` stages per barrier.
pub fn ntt_bit_reversed_in(gpu: &Exec, data: &mut CudaSlice<u64>, tw: &Twiddles, lg_n: u32, tuning: NttTuning) -> Result<()> {
    assert!(data.len() >= 4 << lg_n, "ntt: 2^{lg_n} scalars");
    for pass in ntt_passes(lg_n) {
        let t = &tw.tables;
        let (s0, k, lg_t) = pass;
        // SAFETY: the blocks cover the n scalars exactly once (n / tile blocks of `tile`
        // scalars, data holds n: asserted); roots holds 2^(NTT_TILE_LG-1) scalars and the
        // power tables cover every exponent below n/2; shared memory as the kernel lays it
        // out, within NTT_MAX_SHARED_BYTES.
        unsafe { by_radix!(tuning, fr_ntt_pass, fr_ntt_pass_r4, fr_ntt_pass_r8; gpu, pass_config(lg_n, pass, tuning), data, &tw.roots, &t.lo, &t.hi, t.lg_lo, lg_n, s0, k, lg_t) }?;
    }
    Ok(())
}

/// In-place NTT of n = 2^lg_n scalars in natural order, bit-reversed order
/// out, with no bit-reversal pass: the lg_n radix-2 DIF stages, highest
/// first, in the passes of [`ntt_passes`] taken in reverse. With `scale`,
/// the scalar left at position p is multiplied by `scale`'s power at
/// bit-reverse(p), the index of the transform's output it holds, in the
/// last pass's write (`scale` covers exponents below n): the coset shift of
/// an inverse transform, with its 1/n, costs no pass of its own (at n = 1,
/// with no pass, a pass of its own). `tuning` as in [`ntt_bit_reversed_in`].
pub fn ntt_dif(gpu: &Exec, data: &mut CudaSlice<u64>, tw: &Twiddles, lg_n: u32, scale: Option<&PowerTables>, tuning: NttTuning) -> Result<()> {
    if lg_n == 0 {
        return scale.map_or(Ok(()), |p| p.apply(gpu, data, 1));
    }
    assert!(data.len() >= 4 << lg_n, "ntt_dif: 2^{lg_n} scalars");
    if let Some(p) = scale {
        assert!((p.hi.len() / 4) << p.lg_lo >= 1 << lg_n, "ntt_dif: scale tables below 2^{lg_n}");
    }
    let t = &tw.tables;
    // Without a scale the kernel never reads these (any valid buffers do).
    let s = scale.unwrap_or(t);
    for pass in ntt_passes(lg_n).into_iter().rev() {
        let (s0, k, lg_t) = pass;
        // SAFETY: as in `ntt_bit_reversed_in`; with a scale, its tables cover every
        // exponent below n (asserted), and every bit-reversed index is below n.
        unsafe {
            by_radix!(tuning, fr_ntt_pass_dif, fr_ntt_pass_dif_r4, fr_ntt_pass_dif_r8;
                gpu,
                pass_config(lg_n, pass, tuning),
                data,
                &tw.roots,
                &t.lo,
                &t.hi,
                t.lg_lo,
                lg_n,
                s0,
                k,
                lg_t,
                &s.lo,
                &s.hi,
                s.lg_lo,
                (scale.is_some() && s0 == 0) as u32,
            )
        }?;
    }
    Ok(())
}

/// [`ntt_dif`] with the output scaled by scale·base^i at bit-reverse(p) for
/// the scalar at position p (tables built here).
#[cfg(any(test, feature = "tools"))]
pub fn ntt_dif_scaled(gpu: &Exec, data: &mut CudaSlice<u64>, tw: &Twiddles, lg_n: u32, base: Scalar, scale: Scalar, tuning: NttTuning) -> Result<()> {
    let n = 1usize << lg_n;
    let consts = upload_consts(gpu, &PowerTables::<Dev>::consts(n, base, scale))?;
    let mut t = PowerTables::new(&mut OnDevice(gpu), n)?;
    t.fill(gpu, &consts.as_view())?;
    ntt_dif(gpu, data, tw, lg_n, Some(&t), tuning)
}

/// Uploads `v` into a new zero-padded device buffer of `n` scalars (4·n
/// words): the fallback path's phase-2 upload.
pub fn upload_padded(gpu: &Exec, v: &[Scalar], n: usize, what: &str) -> Result<CudaSlice<u64>> {
    let mut d = gpu.zeros::<u64>(4 * n, what)?;
    gpu.stream.memcpy_htod(limbs(v), &mut d.slice_mut(..4 * v.len())).map_err(cuda_err(what))?;
    Ok(d)
}

/// The quotient's own device buffers for a domain of n (its inputs a, b, c
/// come from the caller): both directions' twiddles, one set of coset power
/// tables (filled for the coset g·<w>, then again for the way back), and
/// every constant its kernels read, uploaded before the first of them.
struct QuotientScratch<M: Mem = Dev> {
    fwd: Twiddles<M>,
    inv: Twiddles<M>,
    coset: PowerTables<M>,
    consts: M::Buf<u64>,
}

/// Where each group of constants starts in [`QuotientScratch::consts`], in
/// scalars: the twiddles', the coset's and its inverse's tables', z⁻¹.
const Q_FWD: usize = 0;
const Q_INV: usize = Q_FWD + TWIDDLE_CONSTS;
const Q_COSET: usize = Q_INV + TWIDDLE_CONSTS;
const Q_UNCOSET: usize = Q_COSET + POWER_TABLE_CONSTS;
const Q_Z_INV: usize = Q_UNCOSET + POWER_TABLE_CONSTS;
const Q_CONSTS: usize = Q_Z_INV + 1;

impl<M: Mem> QuotientScratch<M> {
    fn new<A: Arena<M = M>>(arena: &mut A, n: usize) -> Result<Self> {
        let lg_n = n.trailing_zeros();
        Ok(QuotientScratch {
            fwd: Twiddles::alloc(arena, lg_n)?,
            inv: Twiddles::alloc(arena, lg_n)?,
            coset: PowerTables::new(arena, n)?,
            consts: arena.zeros::<u64>(4 * Q_CONSTS, "alloc quotient constants")?,
        })
    }
}

/// The constants of a quotient over a domain of n, laid out as the `Q_`
/// offsets say: evaluations on the roots → coefficients (·1/n folded into
/// the coset shift) → evaluations on the coset g·<w>, the division by
/// Z(g·x) = gⁿ − 1, and back with g⁻¹.
fn quotient_consts(n: usize) -> Vec<Scalar> {
    let lg_n = n.trailing_zeros();
    let g = crate::curve::COSET_GENERATOR;
    let n_inv = Scalar::from(n as u64).invert().unwrap();
    let z_inv = (g.pow_vartime([n as u64]) - Scalar::ONE).invert().unwrap();
    let mut v = Vec::with_capacity(Q_CONSTS);
    v.extend(Twiddles::<Dev>::consts(lg_n, false));
    v.extend(Twiddles::<Dev>::consts(lg_n, true));
    v.extend(PowerTables::<Dev>::consts(n, g, n_inv));
    v.extend(PowerTables::<Dev>::consts(n, g.invert().unwrap(), n_inv));
    v.push(z_inv);
    debug_assert_eq!(v.len(), Q_CONSTS);
    v
}

/// Device bytes [`quotient`] holds at its peak for a domain of n, with its
/// a, b, c uploaded (3 · 32 · n, on the fallback path; pre-staged, they are
/// counted in phase 1): the inputs and its [`QuotientScratch`].
pub fn quotient_bytes(n: usize) -> usize {
    3 * 32 * n + bytes_of(|a| QuotientScratch::new(a, n))
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
    let tuning = NttTuning::for_domain(lg_n, gpu.settings.ntt_radix_lg);
    let mut q = QuotientScratch::new(&mut OnDevice(gpu), n)?;
    gpu.stream.memcpy_htod(limbs(&quotient_consts(n)), &mut q.consts).map_err(cuda_err("upload quotient constants"))?;
    let QuotientScratch { fwd, inv, coset, consts } = &mut q;
    fwd.fill(gpu, &consts_from(consts, Q_FWD))?;
    inv.fill(gpu, &consts_from(consts, Q_INV))?;
    coset.fill(gpu, &consts_from(consts, Q_COSET))?;

    // Evaluations on <w> → coefficients·(1/n)·g^i in bit-reversed order
    // (the coset shift in the inverse transform's last write) → evaluations
    // on g·<w> in natural order: no bit reversal, no pass of its own for the
    // shift.
    let to_coset = |k: usize, input: &mut dyn FnMut(usize) -> Result<ScalarBuf>| -> Result<ScalarBuf> {
        let mut d = input(k)?;
        ntt_dif(gpu, &mut d, inv, lg_n, Some(coset), tuning)?;
        ntt_bit_reversed_in(gpu, &mut d, fwd, lg_n, tuning)?;
        Ok(d)
    };
    let mut da = to_coset(0, &mut input)?;
    {
        let db = to_coset(1, &mut input)?;
        let dc = to_coset(2, &mut input)?;
        let z_inv = consts_from(consts, Q_Z_INV);
        // SAFETY: a, b and c hold n scalars, z_inv one.
        unsafe { launch::fr_quotient_pointwise(gpu, grid(n), &mut *da, &*db, &*dc, &z_inv, n) }?;
        spare(db);
        // c is dropped here, right after the pointwise step.
    }
    // The coset tables again, for g⁻¹ (after the kernels that read them),
    // then back to coefficients, shifted in the last write, and into natural
    // order for the H-MSM.
    coset.fill(gpu, &consts_from(consts, Q_UNCOSET))?;
    ntt_dif(gpu, &mut da, inv, lg_n, Some(coset), tuning)?;
    bit_reverse(gpu, &mut da, lg_n)?;
    Ok(da)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The quotient's bytes are its inputs, the two directions' twiddles
    /// (2^9 roots, 2^10 low powers and n/2 / 2^10 high ones each), one set
    /// of coset tables (2^10 + n / 2^10) and its constants, 32 B per scalar.
    #[test]
    fn quotient_bytes_count_each_table_once() {
        for lg_n in [11u32, 17, 24, 27] {
            let n = 1usize << lg_n;
            let twiddles = (1 << 9) + (1 << 10) + (n / 2).div_ceil(1 << 10);
            let scalars = 3 * n + 2 * twiddles + (1 << 10) + n / (1 << 10) + Q_CONSTS;
            assert_eq!(quotient_bytes(n), 32 * scalars, "2^{lg_n}");
        }
        // A domain smaller than the low table takes tables of its own size.
        let twiddles = (1 << 9) + 2 + 1;
        assert_eq!(quotient_bytes(4), 32 * (3 * 4 + 2 * twiddles + 4 + 1 + Q_CONSTS));
    }

    #[test]
    fn the_quotients_constants_are_where_their_offsets_say() {
        let n = 1 << 12;
        let v = quotient_consts(n);
        assert_eq!(v.len(), Q_CONSTS);
        let g = crate::curve::COSET_GENERATOR;
        let n_inv = Scalar::from(n as u64).invert().unwrap();
        assert_eq!(v[Q_FWD], root_of_unity(NTT_TILE_LG));
        assert_eq!(v[Q_INV], root_of_unity(NTT_TILE_LG).invert().unwrap());
        assert_eq!(v[Q_INV + 2], root_of_unity(12).invert().unwrap());
        assert_eq!(&v[Q_COSET..Q_COSET + 3], &[g, n_inv, g.pow_vartime([1u64 << LG_LO])]);
        assert_eq!(&v[Q_UNCOSET..Q_UNCOSET + 2], &[g.invert().unwrap(), n_inv]);
        assert_eq!(v[Q_Z_INV] * (g.pow_vartime([n as u64]) - Scalar::ONE), Scalar::ONE);
    }

    /// `fr_ntt_pass` / `fr_ntt_pass_dif` of cuda/ntt.cu on the host, block by
    /// block and stage by stage as the kernels index them, each twiddle
    /// w^(j·2^(lg_n−1−s)) read from `w_pow` (w^i for i < n/2; the kernels'
    /// factoring of it is the DIT pass's, which the GPU tests check against
    /// the CPU), and with `scale` (`scale[i]` for i < n) the write of
    /// position p multiplied by `scale[bit-reverse(p)]`.
    fn model_pass(data: &mut [Scalar], w_pow: &[Scalar], lg_n: u32, (s0, k, lg_t): (u32, u32, u32), dif: bool, scale: Option<&[Scalar]>) {
        let (tile, cols) = (1usize << (k + lg_t), 1usize << lg_t);
        let col_blocks = (1usize << s0) >> lg_t;
        let mut sh = vec![Scalar::ZERO; tile];
        for block in 0..data.len() >> (k + lg_t) {
            let col0 = (block % col_blocks) << lg_t;
            let base = ((block / col_blocks) << (s0 + k)) + col0;
            let at = |e: usize| base + ((e >> lg_t) << s0) + (e & (cols - 1));
            for (e, v) in sh.iter_mut().enumerate() {
                *v = data[at(e)];
            }
            for i in 0..k {
                let r = if dif { k - 1 - i } else { i };
                for q in 0..tile / 2 {
                    let (t, row) = (q & (cols - 1), q >> lg_t);
                    let low = row & ((1 << r) - 1);
                    let row0 = ((row >> r) << (r + 1)) | low;
                    let e0 = (row0 << lg_t) | t;
                    let e1 = e0 + (1 << (r + lg_t));
                    let j = (low << s0) + col0 + t;
                    let tw = w_pow[j << (lg_n - 1 - (s0 + r))];
                    let (u, v) = (sh[e0], sh[e1]);
                    if dif {
                        (sh[e0], sh[e1]) = (u + v, (u - v) * tw);
                    } else {
                        (sh[e0], sh[e1]) = (u + v * tw, u - v * tw);
                    }
                }
            }
            for (e, v) in sh.iter().enumerate() {
                let p = at(e);
                data[p] = match scale {
                    Some(sc) => *v * sc[((p as u64).reverse_bits() >> (64 - lg_n)) as usize],
                    None => *v,
                };
            }
        }
    }

    fn model_bit_reverse(data: &mut [Scalar], lg_n: u32) {
        for i in 0..data.len() {
            let j = ((i as u64).reverse_bits() >> (64 - lg_n)) as usize;
            if i < j {
                data.swap(i, j);
            }
        }
    }

    /// [`quotient`]'s chain of passes, on the model: each of a, b, c through
    /// the DIF inverse transform with the coset shift in its last write and
    /// the DIT forward transform from bit-reversed order, the pointwise step,
    /// the DIF inverse with the shift back and a bit reversal — equal to the
    /// CPU backend's quotient, at sizes whose later passes take 4 columns
    /// (2^13) and 2 (2^19, as 2^27 does).
    #[test]
    fn the_quotients_pass_chain_equals_the_cpu_quotient() {
        use crate::backend::Compute;
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(31);
        for lg_n in [11u32, 13, 19] {
            let n = 1usize << lg_n;
            let m = n - 3;
            let abc: Vec<Vec<Scalar>> = (0..3).map(|_| (0..m).map(|_| Scalar::random(&mut rng)).collect()).collect();
            let want = crate::cpu::CpuCompute.quotient([&abc[0], &abc[1], &abc[2]], n).unwrap();
            let (w, g) = (root_of_unity(lg_n), crate::curve::COSET_GENERATOR);
            let (w_inv, g_inv, n_inv) = (w.invert().unwrap(), g.invert().unwrap(), Scalar::from(n as u64).invert().unwrap());
            let passes = ntt_passes(lg_n);
            let powers = |base: Scalar, scale: Scalar, len: usize| -> Vec<Scalar> {
                std::iter::successors(Some(scale), |p| Some(*p * base)).take(len).collect()
            };
            let (w_pow, w_inv_pow) = (powers(w, Scalar::ONE, n / 2), powers(w_inv, Scalar::ONE, n / 2));
            let dif = |d: &mut [Scalar], shift: &[Scalar]| {
                for (i, &p) in passes.iter().enumerate().rev() {
                    model_pass(d, &w_inv_pow, lg_n, p, true, (i == 0).then_some(shift));
                }
            };
            let (to_coset, from_coset) = (powers(g, n_inv, n), powers(g_inv, n_inv, n));
            let coset: Vec<Vec<Scalar>> = abc
                .iter()
                .map(|v| {
                    let mut d = v.clone();
                    d.resize(n, Scalar::ZERO);
                    dif(&mut d, &to_coset);
                    for &p in &passes {
                        model_pass(&mut d, &w_pow, lg_n, p, false, None);
                    }
                    d
                })
                .collect();
            let z_inv = (g.pow_vartime([n as u64]) - Scalar::ONE).invert().unwrap();
            let mut h: Vec<Scalar> = (0..n).map(|i| (coset[0][i] * coset[1][i] - coset[2][i]) * z_inv).collect();
            dif(&mut h, &from_coset);
            model_bit_reverse(&mut h, lg_n);
            assert_eq!(h, want, "2^{lg_n}");
        }
    }

    /// The kernels' own source (cuda/ntt_pass.cuh) compiled for the host
    /// by cuda/host/ntt_pass_host.cpp, over a small prime field, each
    /// block's threads as fibers switched at every barrier, in the block
    /// size and shared memory [`pass_config`] launches with: the DIT and DIF
    /// transforms, the DIF inverse with the coset shift in its last write,
    /// and the DIT from bit-reversed order, each against a textbook
    /// transform, for every [`NttTuning`] (radix 2, 4 and 8: stage groups of
    /// 1, 2 and 3, and passes of fewer stages than the radix). The passes
    /// are [`ntt_passes`]' at 2^11, 2^13 and 2^19 (later passes of 2
    /// columns, as at 2^27), at 2^15 a list with 2-column passes after the
    /// first and a short last one (2^27's shape, smaller), and at 2^16 one
    /// with two 4-column passes after the first (2^20 … 2^26's)
    /// ([`crate::gpu::host_checks`]).
    #[test]
    fn ntt_pass_source_on_the_host() {
        let check = crate::gpu::host_checks::HostCheck::build("ntt_pass_host.cpp", &[format!("-DNTT_TILE_LG={NTT_TILE_LG}"), format!("-DNTT_THREADS={NTT_THREADS}")]);
        let mut runs: Vec<(u32, Vec<Pass>)> = [11u32, 13, 19].iter().map(|&lg| (lg, ntt_passes(lg))).collect();
        runs.push((15, vec![(0, 10, 0), (10, 4, 1), (14, 1, 1)]));
        runs.push((16, vec![(0, 10, 0), (10, 4, 2), (14, 2, 2)]));
        for tuning in NttTuning::CHOICES {
            for (lg_n, passes) in &runs {
                let arg = |pass: &Pass| {
                    let (s0, k, lg_t) = *pass;
                    format!("{s0},{k},{lg_t},{},{}", tuning.radix_lg, pass_config(*lg_n, *pass, tuning).block_dim.0)
                };
                let args: Vec<String> = std::iter::once(lg_n.to_string()).chain(passes.iter().map(arg)).collect();
                let text = check.run(&args);
                assert_eq!(text.lines().filter(|l| l.ends_with(": equal")).count(), 4, "2^{lg_n}, {tuning:?}: {text}");
            }
        }
    }

    /// A pass's block has one thread per scalar group of its largest stage
    /// groups: at radix 2 one per butterfly of a stage (a 2^10 tile: 512
    /// butterflies, at most 256 threads, two butterflies each), at radix 8
    /// one per 8 scalars where the groups have 3 stages, per 4 where the
    /// largest has 2 (k = 4: 2 + 2), and per 2^k where k is below the radix.
    #[test]
    fn pass_blocks_follow_the_radix() {
        let threads = |pass, radix_lg| pass_config(27, pass, NttTuning { radix_lg }).block_dim.0;
        assert_eq!(threads((0, 10, 0), 1), 256);
        assert_eq!(threads((0, 10, 0), 2), 256);
        assert_eq!(threads((0, 10, 0), 3), 128);
        assert_eq!(threads((19, 8, 1), 3), 64);
        assert_eq!(threads((14, 1, 1), 3), 2);
        assert_eq!(threads((14, 2, 2), 3), 4);
        assert_eq!(threads((10, 4, 2), 3), 16);
        assert_eq!(threads((10, 4, 2), 2), 16);
        assert_eq!(largest_group(10, 3), 3);
        assert_eq!(largest_group(8, 3), 3);
        assert_eq!(largest_group(4, 3), 2);
        assert_eq!(largest_group(9, 2), 2);
        assert_eq!(largest_group(1, 3), 1);
    }

    /// Every stage is covered exactly once, in order, no block exceeds the
    /// tile, and no launch asks for more shared memory than the module load
    /// allows the kernels.
    #[test]
    fn ntt_passes_cover_every_stage_once() {
        for lg_n in 1..=27u32 {
            let passes = ntt_passes(lg_n);
            let mut next = 0;
            for &(s0, k, lg_t) in &passes {
                assert_eq!(s0, next, "lg_n {lg_n}: passes {passes:?}");
                assert!(k >= 1 && k + lg_t <= NTT_TILE_LG, "lg_n {lg_n}: {passes:?}");
                assert!(lg_t <= s0, "lg_n {lg_n}: columns beyond 2^s0 in {passes:?}");
                for tuning in NttTuning::CHOICES {
                    let shared = pass_config(lg_n, (s0, k, lg_t), tuning).shared_mem_bytes;
                    assert!(shared <= crate::gpu::kernels::NTT_MAX_SHARED_BYTES, "2^{lg_n} {:?}: {shared} B of shared memory", (s0, k, lg_t));
                }
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
