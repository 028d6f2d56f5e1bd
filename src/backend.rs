//! The operations a proving backend provides; the pipeline
//! ([`crate::groth16`]) is written once on top of them.

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};

use crate::error::Result;

/// NTT-based quotient, MSM and batch addition, on one device or the CPU.
pub trait Backend: Sync {
    /// Short name for logs and the CLI ("cpu", "gpu").
    fn name(&self) -> &'static str;

    /// The coefficients of `t = (a·b − c) / z` over a domain of `n` elements
    /// (`n` a power of two ≥ `a.len()`; `a`, `b`, `c` are evaluations on the
    /// n-th roots of unity, zero-padded to `n`): inverse NTT, forward NTT on
    /// the coset g·⟨ω⟩ (g = 7), pointwise `(a·b − c)·(gⁿ − 1)⁻¹`, inverse
    /// coset NTT. Returns `n` coefficients (the last one is zero).
    fn quotient(&self, a: &[Scalar], b: &[Scalar], c: &[Scalar], n: usize) -> Result<Vec<Scalar>>;

    /// Σ scalars[i]·bases[i] in G1 (equal lengths; scalars in Montgomery form).
    fn msm_g1(&self, bases: &[G1Affine], scalars: &[Scalar]) -> Result<G1Projective>;

    /// Σ scalars[i]·bases[i] in G2.
    fn msm_g2(&self, bases: &[G2Affine], scalars: &[Scalar]) -> Result<G2Projective>;

    /// Σ of the G1 bases whose bit is set (u64-word bitmap, ≥ bases.len() bits).
    fn batch_add_g1(&self, bases: &[G1Affine], bitmap: &[u64]) -> Result<G1Projective>;

    /// Σ of the G2 bases whose bit is set.
    fn batch_add_g2(&self, bases: &[G2Affine], bitmap: &[u64]) -> Result<G2Projective>;
}

/// Which backend a call uses, from `SUPRASEAL_C2_BACKEND` (`cpu`, `gpu`,
/// `auto`; default `auto`: the GPU when this build has kernels, libcuda loads
/// and a device exists, otherwise the CPU). `device` is the GPU ordinal.
///
/// Errors: `ENODEV` for `gpu` when no GPU is usable (the message says why),
/// a CUDA error number when the device cannot be opened, `EINVAL` for an
/// unknown value.
pub fn select(device: usize) -> Result<Box<dyn Backend>> {
    let choice = std::env::var("SUPRASEAL_C2_BACKEND").unwrap_or_default();
    match choice.trim().to_ascii_lowercase().as_str() {
        "cpu" => Ok(Box::new(crate::cpu::CpuBackend)),
        "gpu" => crate::gpu::backend(device).map_err(|e| {
            crate::error::Error::new(e.code, format!("SUPRASEAL_C2_BACKEND=gpu but no GPU is usable: {}", e.message))
        }),
        "" | "auto" => {
            if crate::gpu::device_count() > device {
                crate::gpu::backend(device)
            } else {
                Ok(Box::new(crate::cpu::CpuBackend))
            }
        }
        other => Err(crate::error::Error::invalid(format!(
            "SUPRASEAL_C2_BACKEND is {other:?} but must be cpu, gpu or auto"
        ))),
    }
}
