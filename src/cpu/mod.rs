//! The CPU backend: our radix-2 NTT and blst's Pippenger, parallel with rayon.

pub mod msm;
pub mod ntt;

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use rayon::prelude::*;

use crate::backend::{Abc, Backend};
use crate::error::Result;

/// Proves on the host's cores (rayon's global pool).
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

    fn name(&self) -> &'static str {
        "cpu"
    }

    fn quotient(&self, [a, b, c]: Abc<'_>, n: usize, _staged: Option<Self::Staged>) -> Result<Vec<Scalar>> {
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
        Ok(ea)
    }

    fn msm_g1(&self, bases: &[G1Affine], scalars: &[Scalar]) -> Result<G1Projective> {
        Ok(msm::msm::<msm::G1>(bases, scalars))
    }

    fn msm_g2(&self, bases: &[G2Affine], scalars: &[Scalar]) -> Result<G2Projective> {
        Ok(msm::msm::<msm::G2>(bases, scalars))
    }

    fn batch_add_g1(&self, bases: &[G1Affine], bitmap: &[u64]) -> Result<G1Projective> {
        Ok(msm::batch_add::<msm::G1>(bases, bitmap))
    }

    fn batch_add_g2(&self, bases: &[G2Affine], bitmap: &[u64]) -> Result<G2Projective> {
        Ok(msm::batch_add::<msm::G2>(bases, bitmap))
    }
}
