//! The CPU backend: our radix-2 NTT and blst's Pippenger, parallel with rayon.

pub mod msm;
pub mod ntt;

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use rayon::prelude::*;

use crate::backend::{Abc, Backend};
use crate::error::Result;
use crate::threads::in_cpu_pool;

/// Proves on the host's cores, in the library's CPU pool
/// ([`crate::threads::in_cpu_pool`]): phase 2 runs with the compute lock
/// held, and its parallel work must not be queued on the caller's pool
/// (rayon's global pool for a plain thread), whose workers may be callers
/// waiting for that lock. (A caller inside a rayon pool proves on a plain
/// thread of its own: `pipeline::select`.)
#[derive(Clone, Copy, Debug, Default)]
pub struct CpuBackend;

fn padded(v: &[Scalar], n: usize) -> Vec<Scalar> {
    let mut out = Vec::with_capacity(n);
    out.extend_from_slice(v);
    out.resize(n, Scalar::ZERO);
    out
}

impl Backend for CpuBackend {
    /// The CPU stages nothing (phase 1 is empty).
    type Staged = std::convert::Infallible;

    fn kind(&self) -> crate::backend::BackendKind {
        crate::backend::BackendKind::Cpu
    }

    fn quotient(&self, abc: Abc<'_>, n: usize, _staged: Option<Self::Staged>) -> Result<Vec<Scalar>> {
        Ok(in_cpu_pool(|| quotient(abc, n)))
    }

    fn msm_g1(&self, bases: &[G1Affine], scalars: &[Scalar]) -> Result<G1Projective> {
        Ok(in_cpu_pool(|| msm::msm::<msm::G1>(bases, scalars)))
    }

    fn msm_g2(&self, bases: &[G2Affine], scalars: &[Scalar]) -> Result<G2Projective> {
        Ok(in_cpu_pool(|| msm::msm::<msm::G2>(bases, scalars)))
    }

    fn batch_add_g1(&self, bases: &[G1Affine], bitmap: &[u64]) -> Result<G1Projective> {
        Ok(in_cpu_pool(|| msm::batch_add::<msm::G1>(bases, bitmap)))
    }

    fn batch_add_g2(&self, bases: &[G2Affine], bitmap: &[u64]) -> Result<G2Projective> {
        Ok(in_cpu_pool(|| msm::batch_add::<msm::G2>(bases, bitmap)))
    }
}

/// See [`Backend::quotient`].
fn quotient([a, b, c]: Abc<'_>, n: usize) -> Vec<Scalar> {
    let to_coset = |v: &[Scalar]| {
        let mut e = padded(v, n);
        ntt::ntt(&mut e, ntt::Direction::Inverse);
        ntt::coset_ntt(&mut e);
        e
    };
    let (mut ea, (eb, ec)) = rayon::join(|| to_coset(a), || rayon::join(|| to_coset(b), || to_coset(c)));
    // z(x) = xⁿ − 1 is the constant gⁿ − 1 on the coset g·⟨ω⟩.
    let z_inv = (crate::curve::COSET_GENERATOR.pow_vartime([n as u64]) - Scalar::ONE).invert().unwrap();
    ea.par_iter_mut().zip(eb.par_iter().zip(ec.par_iter())).with_min_len(1 << 12).for_each(|(x, (y, z))| {
        *x = (*x * y - z) * z_inv;
    });
    drop((eb, ec));
    ntt::coset_intt(&mut ea);
    ea
}
