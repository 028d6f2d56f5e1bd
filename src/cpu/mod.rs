//! The CPU backend: our radix-2 NTT and blst's Pippenger, parallel with rayon.

pub mod msm;
pub mod ntt;

use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;

use crate::backend::{Abc, Backend, BackendKind, Clock, Compute, Group};
use crate::error::Result;
use crate::threads::in_cpu_pool;

/// The CPU's arithmetic, in the library's CPU pool
/// ([`crate::threads::in_cpu_pool`]): phase 2 runs with the compute lock
/// held, and its parallel work must not be queued on the caller's pool
/// (rayon's global pool for a plain thread), whose workers may be callers
/// waiting for that lock. (A caller inside a rayon pool proves on a plain
/// thread of its own: `pipeline::select`.)
#[derive(Clone, Copy, Debug, Default)]
pub struct CpuCompute;

/// One proving call on the CPU: nothing to pin or stage (phases 0, 1 and 3
/// are empty), the arithmetic of [`CpuCompute`], every part of B′ in G2 on
/// the CPU thread.
#[derive(Debug, Default)]
pub struct CpuCall {
    clock: Clock,
}

fn padded(v: &[Scalar], n: usize) -> Vec<Scalar> {
    let mut out = Vec::with_capacity(n);
    out.extend_from_slice(v);
    out.resize(n, Scalar::ZERO);
    out
}

impl Compute for CpuCompute {
    /// The CPU reads every tail's scalars where they are.
    type Ahead = std::convert::Infallible;

    fn quotient(&self, abc: Abc<'_>, n: usize) -> Result<Vec<Scalar>> {
        Ok(in_cpu_pool(|| quotient(abc, n)))
    }

    fn msm<G: Group>(&self, bases: &[G::Affine], scalars: &[Scalar]) -> Result<G::Projective> {
        Ok(in_cpu_pool(|| msm::msm::<G>(bases, scalars)))
    }

    fn batch_add<G: Group>(&self, bases: &[G::Affine], bitmap: &[u64]) -> Result<G::Projective> {
        Ok(in_cpu_pool(|| msm::batch_add::<G>(bases, bitmap)))
    }
}

impl Backend for CpuCall {
    /// The CPU stages nothing (phase 1 is empty).
    type Staged = std::convert::Infallible;
    type Compute = CpuCompute;

    fn compute(&self) -> &CpuCompute {
        &CpuCompute
    }

    fn clock(&self) -> &Clock {
        &self.clock
    }

    fn kind(&self) -> BackendKind {
        BackendKind::Cpu
    }

    /// The same arithmetic on another thread where `mode` is `On` (the CPU
    /// gains nothing by it: its pool is shared; for comparisons and tests).
    fn beside_h_msm(&self, _lock: &crate::locks::ComputeGuard<'_>, _n: usize, _circuits: usize, mode: crate::config::Beside) -> Option<CpuCompute> {
        (mode == crate::config::Beside::On).then_some(CpuCompute)
    }
}

/// See [`Compute::quotient`].
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
