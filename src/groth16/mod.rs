//! The Groth16 prover pipeline of DESIGN §4, written once over a [`Backend`].
//!
//! Per call: the split-MSM plans for L, A-aux and B-aux are prepared once for
//! all circuits ([`split`]); then per circuit the quotient H, the MSMs for H,
//! L, A′, B′ (G1 and G2) produce the [`Intermediates`], and the [`epilogue`]
//! turns them into a proof with that circuit's r and s.

pub mod epilogue;
pub mod split;

use std::time::{Duration, Instant};

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use rayon::prelude::*;

use crate::assignment::Batch;
use crate::backend::Backend;
use crate::error::Result;
use crate::srs::Srs;
use split::{MsmPlan, Query};

/// The five sums a proof is assembled from (DESIGN §4 steps 1–4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Intermediates {
    /// H = Σ t_i·h_i.
    pub h: G1Projective,
    /// L = Σ aux_j·l_j.
    pub l: G1Projective,
    /// A′ = Σ inputs + Σ A-dense aux, over the `a` bases.
    pub a: G1Projective,
    /// B′ in G1.
    pub b_g1: G1Projective,
    /// B′ in G2.
    pub b_g2: G2Projective,
}

/// Wall time of each phase of one call, summed over its circuits.
#[derive(Clone, Copy, Debug, Default)]
pub struct PhaseTimes {
    /// Split-MSM preparation (bitmaps and tails).
    pub prep: Duration,
    /// NTTs and the pointwise step (H polynomial).
    pub ntt: Duration,
    /// The MSM over the h bases.
    pub h_msm: Duration,
    /// L, A′, B′ (batch additions, tail or plain MSMs, input MSMs), G1.
    pub g1_msms: Duration,
    /// B′ in G2.
    pub g2_msm: Duration,
}

/// The plan for one aux MSM with its tail bases gathered once for all circuits.
struct AuxMsm<'a, A> {
    bases: &'a [A],
    plan: MsmPlan,
    tail_bases: Vec<A>,
}

impl<'a, A: Copy + Send + Sync> AuxMsm<'a, A> {
    fn new(bases: &'a [A], plan: MsmPlan) -> Self {
        let tail_bases = match &plan {
            MsmPlan::Split { tail, .. } => tail.par_iter().map(|&q| bases[q as usize]).collect(),
            MsmPlan::Plain { .. } => Vec::new(),
        };
        AuxMsm { bases, plan, tail_bases }
    }

    /// Σ for circuit `c`, with `batch_add` and `msm` from the backend.
    fn sum<P: std::ops::Add<Output = P>>(
        &self,
        c: usize,
        batch_add: impl Fn(&[A], &[u64]) -> Result<P>,
        msm: impl Fn(&[A], &[Scalar]) -> Result<P>,
    ) -> Result<P> {
        match &self.plan {
            MsmPlan::Split { ones, tail_scalars, .. } => {
                Ok(batch_add(self.bases, &ones[c])? + msm(&self.tail_bases, &tail_scalars[c])?)
            }
            MsmPlan::Plain { scalars } => msm(self.bases, &scalars[c]),
        }
    }

    /// Whether the split (batch addition + tail) path was taken.
    fn is_split(&self) -> bool {
        matches!(self.plan, MsmPlan::Split { .. })
    }
}

/// Computes the [`Intermediates`] of every circuit in `batch` (validated against `srs`).
pub fn compute<B: Backend + ?Sized>(
    backend: &B,
    srs: &Srs,
    batch: &Batch<'_>,
) -> Result<(Vec<Intermediates>, PhaseTimes)> {
    let mut times = PhaseTimes::default();
    let n = srs.domain_size();
    let num_inputs = batch.num_inputs();
    let aux: Vec<&[Scalar]> = batch.circuits.iter().map(|c| c.aux).collect();

    let t = Instant::now();
    let (l_plan, (a_plan, b_plan)) = rayon::join(
        || split::prepare(Query::Full { vars: batch.num_aux() }, &aux),
        || {
            rayon::join(
                || split::prepare(Query::Dense(batch.a_aux), &aux),
                || split::prepare(Query::Dense(batch.b_aux), &aux),
            )
        },
    );
    let b_inp_points = batch.b_inp.popcount;
    let l = AuxMsm::new(&srs.l[..], l_plan);
    let a = AuxMsm::new(&srs.a[num_inputs..], a_plan);
    let b1 = AuxMsm::new(&srs.b_g1[b_inp_points..], b_plan.clone());
    let b2 = AuxMsm::new(&srs.b_g2[b_inp_points..], b_plan);
    times.prep += t.elapsed();
    tracing::debug!(l_split = l.is_split(), a_split = a.is_split(), b_split = b1.is_split(), "split-MSM plans");

    // B-input scalars of each circuit (inputs whose B-density bit is set).
    let b_inp: Vec<Vec<Scalar>> = batch
        .circuits
        .iter()
        .map(|c| (0..num_inputs).filter(|&i| batch.b_inp.get(i)).map(|i| c.inp[i]).collect())
        .collect();

    // B′ in G2 runs on a CPU thread while the device works on G1 (DESIGN §4).
    let g2_sums = |times_g2: &mut std::time::Duration| -> Result<Vec<G2Projective>> {
        let t = Instant::now();
        let g2_add = |x: &[G2Affine], m: &[u64]| backend.batch_add_g2(x, m);
        let g2_msm = |x: &[G2Affine], s: &[Scalar]| backend.msm_g2(x, s);
        let sums = (0..batch.circuits.len())
            .map(|ci| Ok(backend.msm_g2(&srs.b_g2[..b_inp_points], &b_inp[ci])? + b2.sum(ci, g2_add, g2_msm)?))
            .collect::<Result<Vec<_>>>();
        *times_g2 += t.elapsed();
        sums
    };
    let g1_sums = |times: &mut PhaseTimes| -> Result<Vec<(G1Projective, G1Projective, G1Projective, G1Projective)>> {
        let mut out = Vec::with_capacity(batch.circuits.len());
        for (ci, c) in batch.circuits.iter().enumerate() {
            let t = Instant::now();
            let coeffs = backend.quotient(c.a, c.b, c.c, n)?;
            times.ntt += t.elapsed();

            let t = Instant::now();
            let h = backend.msm_g1(&srs.h, &coeffs[..srs.h.len()])?;
            drop(coeffs);
            times.h_msm += t.elapsed();

            let t = Instant::now();
            let g1_add = |x: &[G1Affine], m: &[u64]| backend.batch_add_g1(x, m);
            let g1_msm = |x: &[G1Affine], s: &[Scalar]| backend.msm_g1(x, s);
            let l_sum = l.sum(ci, g1_add, g1_msm)?;
            let a_sum = backend.msm_g1(&srs.a[..num_inputs], c.inp)? + a.sum(ci, g1_add, g1_msm)?;
            let b1_sum = backend.msm_g1(&srs.b_g1[..b_inp_points], &b_inp[ci])? + b1.sum(ci, g1_add, g1_msm)?;
            times.g1_msms += t.elapsed();
            out.push((h, l_sum, a_sum, b1_sum));
        }
        Ok(out)
    };
    let mut g2_time = std::time::Duration::ZERO;
    let (g1, g2) = std::thread::scope(|scope| {
        let g2 = scope.spawn(|| g2_sums(&mut g2_time));
        let g1 = g1_sums(&mut times);
        (g1, g2.join())
    });
    let g2 = match g2 {
        Ok(r) => r?,
        Err(panic) => std::panic::resume_unwind(panic),
    };
    times.g2_msm += g2_time;
    let out = g1?
        .into_iter()
        .zip(g2)
        .map(|((h, l, a, b_g1), b_g2)| Intermediates { h, l, a, b_g1, b_g2 })
        .collect();
    Ok((out, times))
}
