//! The quotient polynomial on the GPU: the same transforms as the CPU
//! backend (`cpu::ntt`), so results are identical field elements.
//! Radix-2 DIT: one bit-reversal pass and lg n butterfly stages per transform.

use blstrs::Scalar;
use cudarc::driver::{CudaSlice, PushKernelArg};
use ff::{Field, PrimeField};

use super::device::{cuda_err, grid, Exec};
use super::{from_limbs, limbs};
use crate::cpu::ntt::root_of_unity;
use crate::error::Result;

/// Uploads a few scalars (kernel constants).
fn consts(gpu: &Exec, v: &[Scalar]) -> Result<CudaSlice<u64>> {
    gpu.upload(limbs(v), "upload constants")
}

/// `out[i] = base^i` for i < len, on the device.
pub fn powers(gpu: &Exec, base: Scalar, len: usize) -> Result<CudaSlice<u64>> {
    let mut out = gpu.zeros::<u64>(4 * len, "alloc twiddles")?;
    let c = consts(gpu, &[base, Scalar::ONE])?;
    let mut b = gpu.stream.launch_builder(gpu.kernel("fr_powers"));
    b.arg(&mut out).arg(&c).arg(&len);
    // SAFETY: kernel signature (fr_t*, const fr_t*, size_t); buffers hold len and 2 scalars.
    unsafe { b.launch(grid(len)) }.map_err(cuda_err("fr_powers"))?;
    Ok(out)
}

/// `data[i] *= scale·base^i`.
pub fn mul_powers(gpu: &Exec, data: &mut CudaSlice<u64>, base: Scalar, scale: Scalar, n: usize) -> Result<()> {
    let c = consts(gpu, &[base, scale])?;
    let mut b = gpu.stream.launch_builder(gpu.kernel("fr_mul_powers"));
    b.arg(data).arg(&c).arg(&n);
    // SAFETY: (fr_t*, const fr_t*, size_t); data holds n scalars.
    unsafe { b.launch(grid(n)) }.map_err(cuda_err("fr_mul_powers"))?;
    Ok(())
}

/// In-place NTT of n = 2^lg_n scalars with twiddle table `tw` (w^i, i < n/2):
/// natural order in and out, no scaling.
pub fn ntt(gpu: &Exec, data: &mut CudaSlice<u64>, tw: &CudaSlice<u64>, lg_n: u32) -> Result<()> {
    let n = 1usize << lg_n;
    if n == 1 {
        return Ok(());
    }
    let mut b = gpu.stream.launch_builder(gpu.kernel("fr_bit_reverse"));
    b.arg(&mut *data).arg(&lg_n);
    // SAFETY: (fr_t*, unsigned); data holds n scalars.
    unsafe { b.launch(grid(n)) }.map_err(cuda_err("fr_bit_reverse"))?;
    for stage in 0..lg_n {
        let mut b = gpu.stream.launch_builder(gpu.kernel("fr_ntt_stage"));
        b.arg(&mut *data).arg(tw).arg(&lg_n).arg(&stage);
        // SAFETY: (fr_t*, const fr_t*, unsigned, unsigned); n/2 threads, tw holds n/2.
        unsafe { b.launch(grid(n / 2)) }.map_err(cuda_err("fr_ntt_stage"))?;
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

/// See [`crate::backend::Backend::quotient`]; `da`, `db`, `dc` hold the
/// evaluations zero-padded to `n` scalars (4·n u64 words each, Montgomery
/// form) and are consumed: b and c are freed right after the pointwise step.
pub fn quotient(gpu: &Exec, mut da: CudaSlice<u64>, db: CudaSlice<u64>, dc: CudaSlice<u64>, n: usize) -> Result<Vec<Scalar>> {
    let lg_n = n.trailing_zeros();
    let omega = root_of_unity(lg_n);
    let tw_fwd = powers(gpu, omega, (n / 2).max(1))?;
    let tw_inv = powers(gpu, omega.invert().unwrap(), (n / 2).max(1))?;
    let g = Scalar::MULTIPLICATIVE_GENERATOR;
    let n_inv = Scalar::from(n as u64).invert().unwrap();

    // Evaluations on the roots -> coefficients (·1/n folded into the coset
    // shift) -> evaluations on the coset g·<w>.
    let to_coset = |d: &mut CudaSlice<u64>| -> Result<()> {
        ntt(gpu, d, &tw_inv, lg_n)?;
        mul_powers(gpu, d, g, n_inv, n)?;
        ntt(gpu, d, &tw_fwd, lg_n)
    };
    to_coset(&mut da)?;
    {
        let (mut db, mut dc) = (db, dc);
        to_coset(&mut db)?;
        to_coset(&mut dc)?;
        let z_inv = (g.pow_vartime([n as u64]) - Scalar::ONE).invert().unwrap();
        let k = consts(gpu, &[z_inv])?;
        let mut l = gpu.stream.launch_builder(gpu.kernel("fr_quotient_pointwise"));
        l.arg(&mut da).arg(&db).arg(&dc).arg(&k).arg(&n);
        // SAFETY: (fr_t*, const fr_t*, const fr_t*, const fr_t*, size_t); all hold n scalars.
        unsafe { l.launch(grid(n)) }.map_err(cuda_err("fr_quotient_pointwise"))?;
        // b and c are freed here, right after the pointwise step.
    }
    ntt(gpu, &mut da, &tw_inv, lg_n)?;
    mul_powers(gpu, &mut da, g.invert().unwrap(), n_inv, n)?;
    Ok(from_limbs(&gpu.download(&da, "download H coefficients")?))
}
